//! Congestion controllers: how `cwnd` and `ssthresh` move, behind one trait in the shape of
//! quinn-proto's `congestion::Controller` (`on_ack`, `on_congestion_event`, `on_rto`,
//! `window`, a pacing rate and a state snapshot for traces), and a registry that names them.
//! The connection knows no controller by name: it asks the trait. Loss *detection* and the
//! fast-recovery window arithmetic live in [`super::recovery`].
//!
//! Adding a controller is one file in `tcp/` implementing [`Controller`] plus one line in
//! [`CONTROLLERS`] (`cubic.rs` is the example; CONTRIBUTING.md, "Adding a TCP controller").

use std::any::Any;
use std::fmt::Debug;

use coaplab_cc::{Duration, Instant};

use super::bbr::{AckContext, Bbr, RateSample};
use super::config::TcpConfig;
use super::seq::Seq;

/// An ACK of new data outside fast recovery, as a controller sees it.
#[derive(Clone, Copy, Debug)]
pub struct Ack {
    pub now: Instant,
    /// Bytes of new data acknowledged.
    pub bytes: u32,
    /// This ACK's RTT sample (none under Karn's rule): Linux's `ack_sample.rtt_us`.
    pub rtt: Option<Duration>,
    /// The send sequence after the ACK (`snd_una`, `snd_nxt`), for round tracking.
    pub snd_una: Seq,
    pub snd_nxt: Seq,
}

/// The controller's state at one instant, for the `cc_state` trace rows. Fields a
/// controller does not have are 0.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Snapshot {
    /// Its phase (BBR's mode; CUBIC's `slow_start` / `avoidance`).
    pub mode: &'static str,
    /// Its bandwidth estimate, bytes per second (BBR's BtlBw).
    pub bandwidth: u64,
    /// Its minimum-RTT estimate (BBR's RTprop, CUBIC's `delay_min`).
    pub min_rtt: Option<Duration>,
    /// Its pacing rate, bytes per second.
    pub pacing_rate: u64,
    pub cwnd: u32,
}

/// A TCP congestion controller (ns-3's `TcpCongestionOps`, Linux's `tcp_congestion_ops`).
/// Windows are in bytes.
pub trait Controller: Debug + Send + Any {
    /// The connection is established at `now` with effective MSS `mss` and the handshake's
    /// RTT sample, if any; `seed` drives the controller's random choices (Linux `init`).
    fn on_established(&mut self, mss: u32, now: Instant, rtt: Option<Duration>, seed: u64) {
        let _ = (mss, now, rtt, seed);
    }
    /// The initial window after a retransmitted SYN / SYN-ACK (RFC 5681 §3.1); by default
    /// [`Controller::set_window`] (BBR, whose `set_window` does nothing, keeps its own).
    fn set_initial_window(&mut self, bytes: u32) {
        self.set_window(bytes);
    }
    /// Congestion window, bytes.
    fn window(&self) -> u32;
    /// Slow-start threshold, bytes (`u32::MAX`, Linux's `TCP_INFINITE_SSTHRESH`, if unused).
    fn ssthresh(&self) -> u32 {
        u32::MAX
    }
    /// Sets `cwnd` directly: RFC 6582 fast recovery's inflation and deflation. Controllers
    /// that set their own window on every ACK ([`Controller::uses_rate_samples`]) ignore it.
    fn set_window(&mut self, bytes: u32);
    /// New data was acknowledged outside fast recovery.
    fn on_ack(&mut self, ack: &Ack);
    /// Loss detected by duplicate ACKs with `flight` bytes outstanding: returns the new
    /// `ssthresh` (Linux `ssthresh()`), from which fast recovery sets the window.
    fn on_congestion_event(&mut self, now: Instant, flight: u32) -> u32;
    /// Retransmission timeout with `flight` bytes outstanding; `repeated` when the timed-out
    /// segment was already resent by the timer. `cx` is the sender's state after the timeout
    /// marked everything lost.
    fn on_rto(&mut self, flight: u32, repeated: bool, cx: &AckContext);
    /// Pacing rate, bytes per second, if the controller paces. A controller that paces
    /// returns `Some` from the start: the connection asks once, when it is built, whether it
    /// paces and whether it [`Controller::uses_rate_samples`].
    fn pacing_rate(&self) -> Option<u64> {
        None
    }
    /// Whether the controller sets its window from Linux's delivery-rate samples
    /// ([`Controller::on_rate_sample`]) and sees Linux's sender accounting (in flight
    /// without the lost head, Reno SACK emulation, lost segments resent only under cwnd)
    /// instead of RFC 6582's window arithmetic.
    fn uses_rate_samples(&self) -> bool {
        false
    }
    /// One delivery-rate sample (`cong_control`); returns whether the connection must mark
    /// itself application-limited.
    fn on_rate_sample(&mut self, rs: &RateSample, cx: &AckContext) -> bool {
        let _ = (rs, cx);
        false
    }
    /// Sending again after an application-limited idle period (`CA_EVENT_TX_START`).
    fn on_restart_from_idle(&mut self) {}
    /// The state for traces, if the controller has any beyond its window.
    fn snapshot(&self) -> Option<Snapshot> {
        None
    }
    fn clone_box(&self) -> Box<dyn Controller>;
    /// For tests that inspect one controller's internals.
    fn as_any(&self) -> &dyn Any;
}

impl Clone for Box<dyn Controller> {
    fn clone(&self) -> Self {
        self.clone_box()
    }
}

/// One registered controller.
pub struct ControllerEntry {
    /// The `coap.cc` value that selects it with `coap.transport = "tcp"`.
    pub name: &'static str,
    pub summary: &'static str,
    pub source: &'static str,
    pub build: fn(&TcpConfig) -> Box<dyn Controller>,
}

/// Every TCP congestion controller: what the engine, the scenario schema and the Python side
/// enumerate. The first is the default.
pub const CONTROLLERS: &[ControllerEntry] = &[
    ControllerEntry {
        name: "newreno",
        summary: "RFC 5681 slow start and congestion avoidance with RFC 6582 fast recovery",
        source: "RFC 5681, RFC 6582",
        build: |cfg| Box::new(NewReno::new(cfg)),
    },
    ControllerEntry {
        name: "bbr",
        summary: "BBR v1 with pacing, as Linux 4.x-5.x implements it",
        source: "Linux net/ipv4/tcp_bbr.c",
        build: |cfg| {
            Box::new(Bbr::new(
                cfg.mss,
                cfg.initial_window_segments * cfg.mss,
                Instant::ZERO,
                None,
                0,
            ))
        },
    },
    ControllerEntry {
        name: "cubic",
        summary: "CUBIC with HyStart, as Linux implements it (its default controller)",
        source: "RFC 9438; Linux net/ipv4/tcp_cubic.c",
        build: |cfg| Box::new(super::cubic::Cubic::new(cfg)),
    },
];

/// The registered controller named `name`.
pub fn controller(name: &str) -> Option<&'static ControllerEntry> {
    CONTROLLERS.iter().find(|c| c.name == name)
}

/// The controllers' names, in registry order.
pub fn controller_names() -> Vec<&'static str> {
    CONTROLLERS.iter().map(|c| c.name).collect()
}

/// The controllers that report state for the `cc_state` trace ([`Controller::snapshot`]):
/// each is built with the default configuration and asked.
pub fn controllers_with_state() -> Vec<&'static str> {
    CONTROLLERS
        .iter()
        .filter(|c| (c.build)(&TcpConfig::default()).snapshot().is_some())
        .map(|c| c.name)
        .collect()
}

/// Builds the controller `cfg.congestion` names.
///
/// # Panics
/// If the name is not registered: configurations are checked against [`CONTROLLERS`]
/// before any connection is built.
pub fn build(cfg: &TcpConfig) -> Box<dyn Controller> {
    let entry = controller(cfg.congestion)
        .unwrap_or_else(|| panic!("unregistered TCP controller {:?}", cfg.congestion));
    (entry.build)(cfg)
}

/// Linux `tcp_slow_start` in bytes: `cwnd += min(acked, limit)`, not beyond `ssthresh`;
/// returns the acknowledged bytes slow start did not use (they count towards congestion
/// avoidance).
pub(crate) fn slow_start(cwnd: &mut u32, ssthresh: u32, acked: u32, limit: u32) -> u32 {
    let grown = cwnd.saturating_add(acked.min(limit)).min(ssthresh);
    let used = grown - *cwnd;
    *cwnd = grown;
    if used < acked && *cwnd >= ssthresh {
        acked - used
    } else {
        0
    }
}

/// RFC 5681 §3.1 slow start and congestion avoidance, windows in bytes.
#[derive(Clone, Debug)]
pub struct NewReno {
    mss: u32,
    cwnd: u32,
    ssthresh: u32,
    /// Slow-start growth limit per ACK, bytes (`min(N, L)`).
    ss_limit: u32,
    /// Congestion avoidance: bytes acknowledged since `cwnd` last grew (RFC 5681 §3.1, the
    /// RECOMMENDED byte counting: +1 SMSS per `cwnd` bytes acknowledged).
    ca_acked: u32,
}

impl NewReno {
    pub fn new(cfg: &TcpConfig) -> Self {
        NewReno {
            mss: cfg.mss,
            cwnd: cfg.initial_window_segments * cfg.mss,
            // RFC 5681 §3.1: initial ssthresh arbitrarily high.
            ssthresh: u32::MAX,
            ss_limit: cfg
                .slow_start_limit_segments
                .map_or(u32::MAX, |l| l * cfg.mss),
            ca_acked: 0,
        }
    }
}

impl Controller for NewReno {
    fn window(&self) -> u32 {
        self.cwnd
    }
    fn ssthresh(&self) -> u32 {
        self.ssthresh
    }
    fn set_window(&mut self, bytes: u32) {
        self.cwnd = bytes.max(self.mss);
        self.ca_acked = 0;
    }
    /// RFC 5681 §3.1.
    fn on_ack(&mut self, ack: &Ack) {
        let acked = ack.bytes;
        if self.cwnd < self.ssthresh {
            // Slow start: cwnd += min(N, L), not beyond ssthresh (Linux `tcp_slow_start`;
            // the rest of N counts towards congestion avoidance).
            self.ca_acked += slow_start(&mut self.cwnd, self.ssthresh, acked, self.ss_limit);
        } else {
            self.ca_acked += acked;
            if self.ca_acked >= self.cwnd {
                self.ca_acked -= self.cwnd;
                self.cwnd = self.cwnd.saturating_add(self.mss);
            }
        }
    }
    /// `ssthresh = max(FlightSize/2, 2·SMSS)` (RFC 5681 eq. 4).
    fn on_congestion_event(&mut self, _now: Instant, flight: u32) -> u32 {
        self.ssthresh = (flight / 2).max(2 * self.mss);
        self.ssthresh
    }
    /// RFC 5681 §3.1: `ssthresh` per eq. 4 unless the timed-out segment was already resent
    /// by the timer (`repeated`), and `cwnd` = loss window 1 SMSS.
    fn on_rto(&mut self, flight: u32, repeated: bool, _cx: &AckContext) {
        if !repeated {
            self.ssthresh = (flight / 2).max(2 * self.mss);
        }
        self.cwnd = self.mss;
        self.ca_acked = 0;
    }
    fn clone_box(&self) -> Box<dyn Controller> {
        Box::new(self.clone())
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// BBR behind the trait: it grows its window in [`Bbr::on_ack`] from rate samples, so the
/// per-ACK hook and RFC 6582's window arithmetic do not apply to it.
impl Controller for Bbr {
    /// `bbr_init`, with the handshake's RTT sample.
    fn on_established(&mut self, mss: u32, now: Instant, rtt: Option<Duration>, seed: u64) {
        *self = Bbr::new(mss, self.cwnd, now, rtt, seed);
    }
    fn set_initial_window(&mut self, bytes: u32) {
        self.cwnd = bytes;
    }
    fn window(&self) -> u32 {
        self.cwnd
    }
    fn set_window(&mut self, _bytes: u32) {}
    fn on_ack(&mut self, _ack: &Ack) {}
    /// `bbr_ssthresh`: saves cwnd; BBR does not use ssthresh.
    fn on_congestion_event(&mut self, _now: Instant, _flight: u32) -> u32 {
        self.on_enter_recovery();
        u32::MAX
    }
    fn on_rto(&mut self, _flight: u32, _repeated: bool, cx: &AckContext) {
        Bbr::on_rto(self, cx);
    }
    fn pacing_rate(&self) -> Option<u64> {
        Some(self.pacing_rate)
    }
    fn uses_rate_samples(&self) -> bool {
        true
    }
    fn on_rate_sample(&mut self, rs: &RateSample, cx: &AckContext) -> bool {
        Bbr::on_ack(self, rs, cx)
    }
    fn on_restart_from_idle(&mut self) {
        Bbr::on_restart_from_idle(self);
    }
    fn snapshot(&self) -> Option<Snapshot> {
        Some(Snapshot {
            mode: self.mode.as_str(),
            bandwidth: self.btl_bw(),
            min_rtt: self.min_rtt,
            pacing_rate: self.pacing_rate,
            cwnd: self.cwnd,
        })
    }
    fn clone_box(&self) -> Box<dyn Controller> {
        Box::new(self.clone())
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reno() -> Box<dyn Controller> {
        build(&TcpConfig::default())
    }

    fn ack(bytes: u32) -> Ack {
        Ack {
            now: Instant::ZERO,
            bytes,
            rtt: None,
            snd_una: Seq(0),
            snd_nxt: Seq(0),
        }
    }

    #[test]
    fn slow_start_growth_per_ack() {
        // Linux (default): every acknowledged byte. (acked, cwnd after) from IW 1024:
        let mut c = reno();
        assert_eq!(c.window(), 1024); // IW 4 × 256
        for (acked, cwnd) in [(512, 1536), (256, 1792), (7, 1799), (2560, 4359)] {
            c.on_ack(&ack(acked));
            assert_eq!(c.window(), cwnd, "after acking {acked}");
        }
        // RFC 5681 min(N, SMSS): a delayed ACK for 2 segments adds 256, a CSM's 7 bytes 7.
        let mut r = build(&TcpConfig {
            slow_start_limit_segments: Some(1),
            ..TcpConfig::default()
        });
        for (acked, cwnd) in [(512, 1280), (256, 1536), (7, 1543), (512, 1799)] {
            r.on_ack(&ack(acked));
            assert_eq!(r.window(), cwnd, "after acking {acked}");
        }
    }

    #[test]
    fn slow_start_stops_at_ssthresh_and_the_rest_counts_for_avoidance() {
        let mut c = reno();
        c.on_congestion_event(Instant::ZERO, 3072); // ssthresh 1536
        c.set_window(1024);
        // 1024 + 1024 would be 2048: capped at 1536; the 512 left over count towards
        // congestion avoidance (1536 needed for +256).
        c.on_ack(&ack(1024));
        assert_eq!(c.window(), 1536);
        c.on_ack(&ack(1024)); // 512 + 1024 = 1536 ≥ cwnd → +256
        assert_eq!(c.window(), 1792);
    }

    #[test]
    fn congestion_avoidance_adds_one_mss_per_window_of_acked_bytes() {
        let mut c = reno();
        c.on_congestion_event(Instant::ZERO, 4096); // ssthresh = 2048
        c.set_window(2048); // cwnd = ssthresh → congestion avoidance
                            // 2048 bytes must be acknowledged for +256: 3 ACKs of 512 (1536) do nothing, the
                            // 4th (2048) grows cwnd to 2304 and leaves 0 carried over.
        for _ in 0..3 {
            c.on_ack(&ack(512));
            assert_eq!(c.window(), 2048);
        }
        c.on_ack(&ack(512));
        assert_eq!(c.window(), 2304);
    }

    #[test]
    fn loss_and_rto_follow_rfc5681_eq4() {
        let mut c = reno();
        let cx = AckContext {
            now: Instant::ZERO,
            delivered: 0,
            delivered_at: Instant::ZERO,
            inflight: 0,
            ca_state: super::super::bbr::CaState::Loss,
            lost: 0,
        };
        // FlightSize 3000 → ssthresh = max(1500, 512) = 1500.
        assert_eq!(c.on_congestion_event(Instant::ZERO, 3000), 1500);
        // FlightSize 600 → max(300, 512) = 512.
        assert_eq!(c.on_congestion_event(Instant::ZERO, 600), 512);
        c.on_rto(8000, false, &cx); // 4000
        assert_eq!((c.ssthresh(), c.window()), (4000, 256));
        c.on_rto(256, true, &cx); // the same segment timed out again: ssthresh kept
        assert_eq!((c.ssthresh(), c.window()), (4000, 256));
    }
}

#[cfg(test)]
mod registry_tests {
    use super::*;

    #[test]
    fn every_registered_controller_builds_with_its_initial_window() {
        let cfg = TcpConfig::default();
        let mut names = controller_names();
        assert_eq!(
            names[0],
            TcpConfig::default().congestion,
            "the first is the default"
        );
        for name in &names {
            let c = build(&TcpConfig {
                congestion: name,
                ..cfg
            });
            // IW 4 × MSS 256 = 1024 bytes for every controller.
            assert_eq!(c.window(), 1024, "{name}");
        }
        // New Reno has no state beyond its window; BBR and CUBIC trace theirs.
        let traced = controllers_with_state();
        assert!(
            !traced.contains(&"newreno") && traced.contains(&"bbr") && traced.contains(&"cubic")
        );
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), CONTROLLERS.len(), "names are unique");
    }
}
