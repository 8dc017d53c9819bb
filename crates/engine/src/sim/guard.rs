//! The run guard: bounds on a run's simulated time and event count, and cancellation.
//!
//! A valid scenario always ends: every exchange completes or fails within its retry limits.
//! The guard is the last line of defence against a model bug (a livelock that keeps
//! scheduling events, at a standstill or with time running on) and against a user who wants
//! the run to stop (Ctrl-C). The event loop calls [`Guard::check`] once per event; it costs
//! two comparisons, plus an atomic load every [`CANCEL_CHECK_EVERY`] events.
//!
//! # The limits ([`GuardLimits::for_config`])
//!
//! For each client population, with `n` clients and `u` units of work per client — exchanges
//! (`workload.exchanges`; random: the same; burst: `exchanges` for the background clients
//! and `burst_exchanges` (default 1) for the burst clients; firmware: blocks,
//! `⌈resource_bytes / 2^(block_szx+4)⌉`; continuous with `duration_s`: `10·duration_s`) —
//! and `r` retries per unit (UDP: `max_retransmit`; TCP: `syn_retries + tcp.max_retries`, the
//! latter [`crate::tcp::TcpConfig`]'s default 15), and `T` the longest wait between two
//! tries (UDP: `max(max_timer_s, 60 s) · 1.5`, the larger of the timer caps of every family
//! times the largest random factor; TCP: `max_rto_s`):
//!
//! ```text
//! max_events   = 10 000 000 + Σ n · u · 32 · (r + 2)
//! max_sim_time = 3600 s + max over populations of
//!                (start_spread_s + burst_at_s + duration_s + u · ((r + 2) · T + R))
//!                + Σ over populations of n · u · (r + 2) · 4 · P
//! ```
//!
//! where the network's terms follow from the link ([`NetTerms`]): `R` the longest round trip
//! of propagation (`uplink_delay_ms + downlink_delay_ms + 2 · path_delay_ms[1]`, plus
//! `2 · gprs_delay_ms[1]` on a GPRS network) and `P` the longest serialization of one packet
//! (`mtu + link_overhead_bytes` bytes at the slowest rate, GPRS rates included); every try
//! puts at most 4 packets on the links (request, response, and for TCP their ACKs), and the
//! links are shared by every client. Workloads bounded by `duration_s` (continuous, burst's
//! background clients) count `u = max(10 · duration_s, duration_s / R_min + 1)` exchanges
//! per client, `R_min` the shortest round trip on a star (`uplink_delay_ms + downlink_delay_ms
//! + 2 · path_delay_ms[0]`: an exchange cannot end sooner); other networks keep
//! `10 · duration_s`.
//!
//! Measured runs use far less: the 400-client random benchmark processes ≈ 35 events per
//! exchange against the 32 · (4 + 2) = 192 allowed. Both limits can be overridden
//! ([`GuardLimits::with_overrides`]).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use coaplab_cc::{Duration, Instant};

use crate::config::{NetworkKind, RunConfig, WorkloadConfig, WorkloadKind};

/// The cancellation flag is read once per this many events.
pub const CANCEL_CHECK_EVERY: u64 = 4096;

/// Process-wide cancellation: [`cancel_all`] sets it, every guard stops at its next check,
/// [`reset_cancel_all`] clears it (before starting new runs).
static CANCEL_ALL: AtomicBool = AtomicBool::new(false);

/// Asks every running (and every later) run of this process to stop.
pub fn cancel_all() {
    CANCEL_ALL.store(true, Ordering::Relaxed);
}

/// Clears [`cancel_all`]'s request.
pub fn reset_cancel_all() {
    CANCEL_ALL.store(false, Ordering::Relaxed);
}

/// Whether [`cancel_all`] was called since the last [`reset_cancel_all`].
pub fn cancel_all_requested() -> bool {
    CANCEL_ALL.load(Ordering::Relaxed)
}

/// The bounds of one run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GuardLimits {
    /// The run stops once an event is due later than this.
    pub max_sim_time: Instant,
    /// The run stops once it has processed more events than this.
    pub max_events: u64,
}

/// Events allowed whatever the scenario.
pub const BASE_EVENTS: u64 = 10_000_000;
/// Events allowed per try of a unit of work.
pub const EVENTS_PER_TRY: u64 = 32;
/// Simulated time allowed whatever the scenario.
pub const BASE_SIM_TIME: Duration = Duration::from_secs(3600);

/// Packets one try of a unit of work puts on the links, at most: the request, the response,
/// and (TCP) an ACK of each.
pub const PACKETS_PER_TRY: u64 = 4;

/// What the network adds to the time a run may take (module documentation).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NetTerms {
    /// The longest round trip of propagation delay, s (`R`).
    pub round_trip_s: f64,
    /// The shortest round trip of propagation delay, s (`R_min`; 0 when not known).
    pub min_round_trip_s: f64,
    /// The longest serialization of one packet, s (`P`).
    pub packet_s: f64,
}

impl NetTerms {
    pub fn for_config(cfg: &RunConfig) -> Self {
        let l = &cfg.link;
        let bits = f64::from(l.mtu.saturating_add(l.link_overhead_bytes)) * 8.0;
        let mut kbps = l.downlink_kbps.min(l.uplink_kbps);
        let mut round_trip_ms = l.downlink_delay_ms + l.uplink_delay_ms + 2.0 * l.path_delay_ms[1];
        let kind = cfg.network.as_ref().map_or(NetworkKind::Star, |n| n.kind());
        // The network's own links (GPRS: the slower of its downlink and uplink, and the
        // radio-block uplink's worst mean time per packet), from the topology registry.
        let net =
            crate::net::topology::guard_terms(cfg, l.mtu.saturating_add(l.link_overhead_bytes));
        if let Some(slowest) = net.slowest_kbps {
            kbps = kbps.min(slowest);
        }
        let gprs_packet_s = net.packet_s;
        round_trip_ms += net.extra_round_trip_ms;
        let min_round_trip_ms = if kind == NetworkKind::Star {
            l.downlink_delay_ms + l.uplink_delay_ms + 2.0 * l.path_delay_ms[0]
        } else {
            0.0
        };
        let finite = |x: f64| if x.is_finite() && x > 0.0 { x } else { 0.0 };
        NetTerms {
            round_trip_s: finite(round_trip_ms / 1e3),
            min_round_trip_s: finite(min_round_trip_ms / 1e3),
            packet_s: finite(bits / (kbps * 1e3)).max(finite(gprs_packet_s)),
        }
    }

    /// Exchanges a client can complete in `duration_s`, at most (module documentation).
    fn exchanges_within(&self, duration_s: f64) -> u64 {
        let d = duration_s.max(0.0);
        let by_round_trip = if self.min_round_trip_s > 0.0 {
            (d / self.min_round_trip_s).ceil() + 1.0
        } else {
            0.0
        };
        // `as` saturates: a bound beyond u64 stays u64::MAX.
        (10.0 * d).ceil().max(by_round_trip) as u64
    }
}

/// One client population's part of the limits: (events, simulated seconds of its own,
/// simulated seconds of serialization on the shared links).
fn population(w: &WorkloadConfig, retries: u64, wait_s: f64, net: &NetTerms) -> (u64, f64, f64) {
    let exchanges = u64::from(w.exchanges);
    let units: Vec<(u64, u64)> = match w.kind {
        WorkloadKind::Firmware | WorkloadKind::Upload => {
            let block = 1u64 << (u32::from(w.block_szx.min(7)) + 4);
            vec![(u64::from(w.clients), w.resource_bytes.div_ceil(block))]
        }
        WorkloadKind::Burst => vec![
            (
                u64::from(w.background),
                // With duration_s the background clients go on until then.
                w.duration_s.map_or(exchanges, |d| net.exchanges_within(d)),
            ),
            (
                u64::from(w.burst_clients.unwrap_or(0)),
                u64::from(w.burst_exchanges.unwrap_or(1)),
            ),
        ],
        WorkloadKind::Continuous if w.duration_s.is_some() => {
            let d = w.duration_s.unwrap_or(0.0);
            vec![(u64::from(w.clients), net.exchanges_within(d))]
        }
        WorkloadKind::Continuous | WorkloadKind::Random => {
            vec![(u64::from(w.clients), exchanges)]
        }
        // Requests created over the run, ×16 for the events of multi-hop radio forwarding
        // (a frame takes about 6 events per hop, a route up to ~10 hops each way).
        // Reporting: at most one report per shortest interval (30 min) plus the exception
        // reports expected, ×16 as for `periodic`, with the exceptions' count doubled (Poisson).
        WorkloadKind::Reporting => {
            let d = w.duration_s.unwrap_or(0.0).max(0.0);
            let shortest = crate::reporting::SHORTEST_INTERVAL_S as f64;
            let per_day = w
                .exception_reports_per_day
                .unwrap_or(crate::reporting::EXCEPTION_REPORTS_PER_DAY);
            let exceptions = 2.0 * d / 86_400.0 * per_day;
            vec![(
                u64::from(w.clients),
                ((d / shortest).ceil() as u64 + exceptions.ceil() as u64 + 2).saturating_mul(16),
            )]
        }
        // Observe: the values over the run (a Poisson process's count bounded by 4× its mean
        // plus 16), each a notification with up to MAX_RETRANSMIT + 1 transmissions and an
        // ACK, ×16 as for `periodic`.
        WorkloadKind::Observe => {
            let d = w.duration_s.unwrap_or(0.0).max(0.0);
            let values = match (w.notify_period_s, w.notify_rate_per_s) {
                (Some(p), _) => d / p.max(1e-3),
                (_, Some(r)) => 4.0 * d * r + 16.0,
                _ => 1.0,
            };
            vec![(
                u64::from(w.clients),
                (values.ceil() as u64 + 2).saturating_mul(16),
            )]
        }
        // LwM2M: its updates, notifications, reads (twice the Poisson mean), firmware blocks
        // and a registration sequence's 5 attempts, ×16 as for `periodic`.
        WorkloadKind::Lwm2m => {
            let d = w.duration_s.unwrap_or(0.0).max(0.0);
            let p = crate::coap::lwm2m::Params::of(w, 0);
            let updates = d / p.update_interval().secs_f64().max(1e-3);
            let notes = w.lwm2m_notify_period_s.map_or(0.0, |t| d / t.max(1e-3));
            let reads = 2.0 * d / 86_400.0 * p.reads_per_day;
            let block = f64::from(1u32 << (u32::from(w.block_szx.min(6)) + 4));
            let blocks = w
                .lwm2m_firmware_bytes
                .map_or(0.0, |b| (b as f64 / block).ceil());
            let units = updates + notes + reads + blocks + 7.0;
            vec![(
                u64::from(w.clients),
                (units.ceil() as u64).saturating_mul(16),
            )]
        }
        WorkloadKind::Periodic => {
            let d = w.duration_s.unwrap_or(0.0).max(0.0);
            let period = w.period_s.unwrap_or(1.0).max(1e-3);
            vec![(
                u64::from(w.clients),
                ((d / period).ceil() as u64 + 1).saturating_mul(16),
            )]
        }
    };
    let tries = retries.saturating_add(2);
    let events = units.iter().fold(0u64, |acc, &(n, u)| {
        acc.saturating_add(
            n.saturating_mul(u)
                .saturating_mul(EVENTS_PER_TRY)
                .saturating_mul(tries),
        )
    });
    let per_client = units.iter().map(|&(_, u)| u).max().unwrap_or(0);
    let secs = w.start_spread_s.max(0.0)
        + w.burst_at_s.unwrap_or(0.0).max(0.0)
        + w.duration_s.unwrap_or(0.0).max(0.0)
        + per_client as f64 * (tries as f64 * wait_s + net.round_trip_s);
    let packets = units.iter().fold(0f64, |acc, &(n, u)| {
        acc + n as f64 * u as f64 * tries as f64 * PACKETS_PER_TRY as f64
    });
    (events, secs, packets * net.packet_s)
}

impl GuardLimits {
    /// The limits of a run of `cfg` (the formula in the module documentation).
    pub fn for_config(cfg: &RunConfig) -> Self {
        let tcp_max_retries = u64::from(crate::tcp::TcpConfig::default().max_retries);
        let mut pops: Vec<(&WorkloadConfig, u64, f64)> = Vec::new();
        let mut add =
            |w, coap: &crate::config::CoapConfig, tcp: &Option<crate::config::TcpSection>| {
                let (retries, wait_s) = if coap.transport == crate::config::Transport::Tcp {
                    let (syn, max_rto) = tcp
                        .as_ref()
                        .map_or((40, 120.0), |t| (u64::from(t.syn_retries), t.max_rto_s));
                    (syn + tcp_max_retries, max_rto)
                } else {
                    (
                        u64::from(coap.max_retransmit),
                        coap.max_timer_s.max(60.0) * 1.5,
                    )
                };
                pops.push((w, retries, wait_s));
            };
        if cfg.group.is_empty() {
            add(&cfg.workload, &cfg.coap, &cfg.tcp);
        } else {
            for g in &cfg.group {
                add(&g.workload, &g.coap, &g.tcp);
            }
        }
        let net = NetTerms::for_config(cfg);
        let mut events = BASE_EVENTS;
        let mut secs: f64 = 0.0;
        let mut serialization: f64 = 0.0;
        for (w, retries, wait_s) in pops {
            let (e, s, ser) = population(w, retries, wait_s, &net);
            events = events.saturating_add(e);
            secs = secs.max(s);
            serialization += ser;
        }
        let secs = secs + serialization;
        GuardLimits {
            max_events: events,
            max_sim_time: Instant::ZERO
                + BASE_SIM_TIME.saturating_add(Duration::from_secs_f64(secs)),
        }
    }

    /// These limits with either replaced.
    pub fn with_overrides(self, max_sim_time_s: Option<f64>, max_events: Option<u64>) -> Self {
        GuardLimits {
            max_sim_time: max_sim_time_s.map_or(self.max_sim_time, Instant::from_secs_f64),
            max_events: max_events.unwrap_or(self.max_events),
        }
    }
}

pub use crate::error::GuardStop;

/// The guard of one run; the event loop calls [`Guard::check`] before each event.
#[derive(Clone, Debug)]
pub struct Guard {
    limits: GuardLimits,
    cancel: Option<Arc<AtomicBool>>,
    next_cancel_check: u64,
}

impl Guard {
    /// A guard with these limits; `cancel`, if given, is the run's own flag (read along with
    /// the process-wide [`cancel_all`]).
    pub fn new(limits: GuardLimits, cancel: Option<Arc<AtomicBool>>) -> Self {
        Guard {
            limits,
            cancel,
            next_cancel_check: 0,
        }
    }

    /// The guard of a run of `cfg` ([`GuardLimits::for_config`]), cancelled by [`cancel_all`].
    pub fn for_config(cfg: &RunConfig) -> Self {
        Guard::new(GuardLimits::for_config(cfg), None)
    }

    pub fn limits(&self) -> GuardLimits {
        self.limits
    }

    /// `now`: the time of the event about to be handled; `events`: events processed so far.
    pub fn check(&mut self, now: Instant, events: u64) -> Result<(), GuardStop> {
        if events > self.limits.max_events {
            return Err(GuardStop::Events {
                limit: self.limits.max_events,
                now,
            });
        }
        if now > self.limits.max_sim_time {
            return Err(GuardStop::SimTime {
                limit: self.limits.max_sim_time,
                events,
            });
        }
        if events >= self.next_cancel_check {
            self.next_cancel_check = events.saturating_add(CANCEL_CHECK_EVERY);
            let own = self
                .cancel
                .as_ref()
                .is_some_and(|c| c.load(Ordering::Relaxed));
            if own || cancel_all_requested() {
                return Err(GuardStop::Cancelled);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Mutex, MutexGuard};

    /// Serializes the tests: one of them sets the process-wide flag the others read.
    fn serial() -> MutexGuard<'static, ()> {
        static LOCK: Mutex<()> = Mutex::new(());
        LOCK.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn secs(l: GuardLimits) -> f64 {
        l.max_sim_time.secs_f64()
    }

    #[test]
    fn a_1_bit_per_s_uplink_is_within_the_time_bound() {
        // 1 client, 1 exchange, uplink 0.001 kbit/s = 1 bit/s, other keys at their defaults
        // (max_retransmit 4, max_timer_s 60, mtu 296, delays 400 / 200 ms, path 10–20 ms,
        // start_spread_s 0.05). By hand: tries r + 2 = 6; T = max(60, 60)·1.5 = 90 s;
        // R = 0.4 + 0.2 + 2·0.02 = 0.64 s; P = 296·8 bit / 1 bit/s = 2368 s.
        // Population: 0.05 + 1·(6·90 + 0.64) = 540.69 s; serialization 1·1·6·4·2368 = 56 832 s.
        // Limit: 3600 + 540.69 + 56 832 = 60 972.69 s. One 296-byte packet alone takes 2368 s
        // on this uplink, and the request with its 4 retransmissions 5·2368 = 11 840 s.
        let c = config(
            r#"{"link": {"uplink_kbps": 0.001}, "workload": {"clients": 1, "exchanges": 1}}"#,
        );
        let l = GuardLimits::for_config(&c);
        assert!((secs(l) - 60_972.69).abs() < 1e-6, "{}", secs(l));
    }

    #[test]
    fn a_long_downlink_delay_is_within_the_time_bound() {
        // downlink_delay_ms = 1e7 (the largest allowed): R = 1e4 + 0.2 + 0.04 = 10 000.24 s;
        // P = 296·8 / 30 000 bit/s = 0.078 933… s (downlink 30 kbit/s is the slower rate).
        // 1 client, 1 exchange: 3600 + 0.05 + 6·90 + 10 000.24 + 24·0.078 933… s
        //                     = 14 140.29 + 1.8944 = 14 142.1844 s.
        // The exchange itself needs one round trip, 10 000.62 s with the shortest path delay.
        let c = config(
            r#"{"link": {"downlink_delay_ms": 1e7}, "workload": {"clients": 1, "exchanges": 1}}"#,
        );
        let l = GuardLimits::for_config(&c);
        assert!((secs(l) - 14_142.184_4).abs() < 1e-6, "{}", secs(l));
    }

    #[test]
    fn burst_background_clients_with_a_duration_count_by_the_duration() {
        // A burst whose 2 background clients run for duration_s = 3e6 s, 1 burst client with
        // 1 exchange. u = max(10·3e6, ⌈3e6 / 0.62⌉ + 1) = max(3e7, 4 838 711) = 3e7 for the
        // background (R_min = 0.4 + 0.2 + 2·0.01 = 0.62 s). Events: 10⁷ + 2·3e7·32·6 +
        // 1·1·32·6 = 10 000 000 + 11 520 000 000 + 192 = 11 530 000 192. (Before, the
        // background counted `exchanges` = 50 each: 10 019 392 events, which two background
        // clients exceed long before 3·10⁶ s: an exchange takes about one round trip, so each
        // goes on for millions of exchanges.)
        let c = config(
            r#"{"workload": {"kind": "burst", "background": 2, "burst_clients": 1, "burst_at_s": 10,
                "duration_s": 3e6}}"#,
        );
        assert_eq!(GuardLimits::for_config(&c).max_events, 11_530_000_192);
    }

    #[test]
    fn short_round_trips_allow_more_exchanges_within_a_duration() {
        // Delays 0 and path 1–1 ms: R_min = 0.002 s, so a continuous client can complete up to
        // ⌈10 / 0.002⌉ + 1 = 5001 exchanges in duration_s = 10 (10·10 = 100 would be too few).
        // Events: 10⁷ + 1·5001·32·6 = 10 960 192.
        let c = config(
            r#"{"link": {"downlink_delay_ms": 0, "uplink_delay_ms": 0, "path_delay_ms": [1, 1]},
                "workload": {"clients": 1, "duration_s": 10}}"#,
        );
        assert_eq!(GuardLimits::for_config(&c).max_events, 10_960_192);
    }

    fn limits(secs: u64, events: u64) -> GuardLimits {
        GuardLimits {
            max_sim_time: Instant::from_secs(secs),
            max_events: events,
        }
    }

    #[test]
    fn stops_past_the_event_limit() {
        let _serial = serial();
        let mut g = Guard::new(limits(100, 10), None);
        for e in 0..=10 {
            assert_eq!(g.check(Instant::from_secs(1), e), Ok(()));
        }
        let stop = g.check(Instant::from_millis(1500), 11).unwrap_err();
        assert_eq!(
            stop,
            GuardStop::Events {
                limit: 10,
                now: Instant::from_millis(1500)
            }
        );
        assert_eq!(
            stop.to_string(),
            "did not finish: more than 10 events (the limit for this scenario) by simulated time 1.500 s; the run does not converge"
        );
    }

    #[test]
    fn stops_past_the_time_limit() {
        let _serial = serial();
        let mut g = Guard::new(limits(100, 1_000), None);
        assert_eq!(g.check(Instant::from_secs(100), 5), Ok(()));
        let stop = g
            .check(Instant::from_nanos(100_000_000_001), 6)
            .unwrap_err();
        assert_eq!(
            stop.to_string(),
            "did not finish: simulated time passed 100 s (the limit for this scenario) after 6 events; the run does not converge"
        );
    }

    #[test]
    fn the_run_flag_is_read_every_n_events() {
        let _serial = serial();
        let flag = Arc::new(AtomicBool::new(false));
        let mut g = Guard::new(limits(100, u64::MAX), Some(flag.clone()));
        assert_eq!(g.check(Instant::ZERO, 0), Ok(())); // read at 0; next read at 4096
        flag.store(true, Ordering::Relaxed);
        for e in 1..CANCEL_CHECK_EVERY {
            assert_eq!(g.check(Instant::ZERO, e), Ok(()));
        }
        let stop = g.check(Instant::ZERO, CANCEL_CHECK_EVERY).unwrap_err();
        assert_eq!(stop, GuardStop::Cancelled);
        assert_eq!(stop.to_string(), "did not finish: cancelled");
    }

    #[test]
    fn cancel_all_stops_every_guard_until_reset() {
        let _serial = serial();
        let mut a = Guard::new(limits(100, u64::MAX), None);
        let mut b = Guard::new(limits(100, u64::MAX), None);
        assert_eq!(a.check(Instant::ZERO, 0), Ok(()));
        cancel_all();
        assert!(cancel_all_requested());
        assert_eq!(b.check(Instant::ZERO, 0), Err(GuardStop::Cancelled));
        assert_eq!(a.check(Instant::ZERO, 4096), Err(GuardStop::Cancelled));
        reset_cancel_all();
        assert_eq!(a.check(Instant::ZERO, 8192), Ok(()));
    }

    fn config(json: &str) -> RunConfig {
        RunConfig::from_json(json).unwrap()
    }

    const LINK: &str = r#""link": {"downlink_kbps": 30, "uplink_kbps": 60, "downlink_delay_ms": 400,
        "uplink_delay_ms": 200, "mtu": 296, "buffer_bytes": 2500, "uplink_buffer_bytes": null,
        "path_delay_ms": [10, 20], "link_overhead_bytes": 0, "errors": "none"}"#;

    fn workload(kind: &str, extra: &str) -> String {
        format!(
            r#""workload": {{"kind": "{kind}", "clients": 10, "exchanges": 50, "duration_s": null,
            "batch": [1, 5], "start_spread_s": 5, "response_bytes": 60, "resource_bytes": 102400,
            "block_szx": 4 {extra}}}"#
        )
    }

    fn coap(transport: &str, cc: &str) -> String {
        format!(
            r#""coap": {{"transport": "{transport}", "cc": "{cc}", "max_retransmit": 4, "nstart": 1,
            "ack_timeout_s": 2, "ack_random_factor": 1.5, "max_timer_s": 60}}"#
        )
    }

    #[test]
    fn limits_follow_the_documented_formula() {
        let _serial = serial();
        // 10 random UDP clients × 50 exchanges, max_retransmit 4 → tries 6:
        // events 10^7 + 10·50·32·6 = 10 096 000. Network terms of LINK: R = 0.4 + 0.2 +
        // 2·0.02 = 0.64 s; P = 296·8 bit / 30 000 bit/s = 0.078 933… s. Time 3600 + 5 +
        // 50·(6·(60·1.5 = 90) + 0.64) + 10·50·6·4·P = 3605 + 27 032 + 947.2 = 31 584.2 s.
        let cfg = config(&format!(
            "{{\"seed\": 1, {LINK}, {}, {}}}",
            workload("random", ""),
            coap("udp", "cocoa")
        ));
        let l = GuardLimits::for_config(&cfg);
        assert_eq!(l.max_events, 10_096_000);
        assert!((secs(l) - 31_584.2).abs() < 1e-6, "{}", secs(l));
        // Firmware over TCP (defaults: syn_retries 40, max_retries 15 → tries 57, max_rto
        // 120 s): 102400 / 256 = 400 blocks; events 10^7 + 10·400·32·57 = 17 296 000;
        // time 3600 + 5 + 400·(57·120 + 0.64) + 10·400·57·4·P = 3605 + 2 736 256 + 71 987.2
        // = 2 811 848.2 s.
        let cfg = config(&format!(
            "{{\"seed\": 1, {LINK}, {}, {}}}",
            workload("firmware", ""),
            coap("tcp", "newreno")
        ));
        let l = GuardLimits::for_config(&cfg);
        assert_eq!(l.max_events, 17_296_000);
        assert!((secs(l) - 2_811_848.2).abs() < 1e-6, "{}", secs(l));
        // Burst: 3 background × 50 exchanges and 20 burst clients × 1, burst at 30 s:
        // events 10^7 + (3·50 + 20·1)·32·6 = 10 032 640; time 3600 + 5 + 30 + 50·(6·90 + 0.64)
        // + (3·50 + 20·1)·6·4·P = 3635 + 27 032 + 322.048 = 30 989.048 s.
        let cfg = config(&format!(
            "{{\"seed\": 1, {LINK}, {}, {}}}",
            workload(
                "burst",
                r#", "background": 3, "burst_at_s": 30, "burst_clients": 20"#
            ),
            coap("udp", "default")
        ));
        let l = GuardLimits::for_config(&cfg);
        assert_eq!(l.max_events, 10_032_640);
        assert!((secs(l) - 30_989.048).abs() < 1e-6, "{}", secs(l));
        let o = l.with_overrides(Some(10.0), None);
        assert_eq!(
            (o.max_sim_time, o.max_events),
            (Instant::from_secs(10), 10_032_640)
        );
        assert_eq!(l.with_overrides(None, Some(7)).max_events, 7);
    }
}
