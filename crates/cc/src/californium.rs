//! Californium's congestion-control implementations, as Californium computes them:
//! `cocoa@californium`, `cocoa-s@californium`, `basic-rto@californium`,
//! `linux-rto@californium`, `peakhopper-rto@californium`.
//!
//! Source: eclipse-californium, `californium-core`, package
//! `org.eclipse.californium.core.network.stack` (`CongestionControlLayer`, `RemoteEndpoint`,
//! `ReliabilityLayer`) and its `congestioncontrol` subpackage (`Cocoa`, `Rto`, `BasicRto`,
//! `LinuxRto`, `PeakhopperRto`), HEAD d595d12 (2026): the form these classes took in the April
//! 2021 rework (3.0.0-M1) with later small changes; the 2016 code of 1.0.x differed (see
//! docs/algorithms.md, "Californium's implementations").
//! Everything is integer milliseconds (Java `long`/`int`), rounded where Californium rounds:
//! `Math.round` (half up, [`round`]) and `(int)`/`(long)` casts (truncation).
//!
//! What every variant shares (`CongestionControlLayer`, `RemoteEndpoint`):
//! - one state per peer, created at the peer's first exchange and forgotten once the peer was
//!   not touched for [`PEER_INACTIVITY`] (`LeastRecentlyUpdatedCache` with stale values hidden);
//! - `T_0` (`updateRetransmissionTimeout`, first transmission) = `getRTO()` — the current RTO,
//!   times the number of exchanges in flight under the blind rule, capped at [`RTO_CAP_MS`] —
//!   dithered only for CoCoA, then floored at [`MIN_RTO_MS`] and capped at
//!   `min(MAX_ACK_TIMEOUT, MAX_RTO)` ([`Config::max_timer`], at most [`MAX_RTO_MS`]);
//! - the backoff factor is fixed per exchange from that `T_0` (`calculateVBF`), every
//!   retransmission's timer is `(int)(factor · previous)`, capped as above;
//! - RTT samples are measured from the original transmission in whole milliseconds (at least
//!   1 ms, `processRttMeasurement`): `k = 0` strong, `k = 1, 2` weak, `k ≥ 3` none
//!   (`getExchangeEstimatorState`);
//! - nothing is learned from a failed exchange and no backed-off timer is carried over.

use crate::config::Config;
use crate::controller::Controller;
use crate::exchange::{Exchange, Sample, SampleKind, StateVisitor, TimeoutDecision, Value};
use crate::rng::Rng;
use crate::time::{Duration, Instant};

/// `CongestionControlLayer.MIN_RTO`: floor of every `T_0`, 500 ms.
pub const MIN_RTO_MS: i64 = 500;
/// `CongestionControlLayer.MAX_RTO`: cap of every timer, 60 s (also bounded by
/// `MAX_ACK_TIMEOUT`, here [`Config::max_timer`]).
pub const MAX_RTO_MS: i64 = 60_000;
/// `RemoteEndpoint.getRTO`: the RTO handed to a new exchange is capped at 32 s.
pub const RTO_CAP_MS: i64 = 32_000;
/// `CoapConfig.DEFAULT_MAX_PEER_INACTIVITY_PERIOD_IN_SECONDS` (10 min): a peer's state not
/// touched for this long is stale and replaced by a fresh one
/// (`LeastRecentlyUpdatedCache.update` with `hideStaleValues`, `CacheEntry.isStale`: `≥`).
pub const PEER_INACTIVITY: Duration = Duration::from_secs(600);
/// `Rto.G`: timer granularity 100 ms, `RTO = RTT + max(G, K·RTTVAR)`.
const G_MS: i64 = 100;
/// `Rto.ALPHA`, applied to the RTT (RFC 6298 applies 1/8 there).
const ALPHA: f64 = 0.25;
/// `Rto.BETA`, applied to RTTVAR (RFC 6298 applies 1/4 there).
const BETA: f64 = 0.125;
/// `Cocoa.KSTRONG`, `Cocoa.KWEAK`, `Cocoa.STRONGWEIGHTING`, `Cocoa.WEAKWEIGHTING`.
const K_STRONG: i64 = 4;
const K_WEAK: i64 = 1;
const STRONG_WEIGHTING: f64 = 0.5;
const WEAK_WEIGHTING: f64 = 0.25;
/// `Cocoa.LOWERVBFLIMIT`, `Cocoa.UPPERVBFLIMIT` (ms): VBF and aging thresholds.
const LOWER_VBF_LIMIT_MS: i64 = 1000;
const UPPER_VBF_LIMIT_MS: i64 = 3000;
/// `LinuxRto`: the 50 ms floor of `mdev_max` / `RTTVAR`.
const LINUX_MDEV_MIN_MS: i64 = 50;
/// `PeakhopperRto`: `F_value` 24 (`D = 1 − 1/F`), `B_max_value` 1, margin `2·50` ms.
const PH_F: f32 = 24.0;
const PH_B_MAX: f32 = 1.0;
const PH_MARGIN_MS: i64 = 2 * 50;

/// Which of Californium's `CongestionControlMode`s (`CongestionControlLayer.newImplementation`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CfAlgorithm {
    /// `COCOA`: `new Cocoa(tag, config, false)`.
    Cocoa,
    /// `COCOA_STRONG`: `new Cocoa(tag, config, true)` — weak samples ignored.
    CocoaStrong,
    /// `BASIC_RTO`.
    BasicRto,
    /// `LINUX_RTO`.
    LinuxRto,
    /// `PEAKHOPPER_RTO`.
    PeakhopperRto,
}

impl CfAlgorithm {
    fn is_cocoa(self) -> bool {
        matches!(self, CfAlgorithm::Cocoa | CfAlgorithm::CocoaStrong)
    }
    /// `RemoteEndpoint(.., usesBlindEstimator)`: true for CoCoA, Linux and Peak-Hopper.
    fn uses_blind_estimator(self) -> bool {
        self != CfAlgorithm::BasicRto
    }
}

/// Java's `Math.round(double)`: `floor(x + 0.5)`.
pub fn round(x: f64) -> i64 {
    libm_floor(x + 0.5) as i64
}

/// `floor` without `std` (the values are far below 2⁵²).
fn libm_floor(x: f64) -> f64 {
    let t = x as i64 as f64;
    if t > x {
        t - 1.0
    } else {
        t
    }
}

/// `congestioncontrol/Rto.java`: one RFC 6298-style estimator in milliseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CfRto {
    /// `(RTT, RTTVAR)` once `init`.
    state: Option<(i64, i64)>,
}

impl CfRto {
    /// `Rto.apply`: first sample `RTTVAR = R/2` (integer division), `RTT = R`; later
    /// `RTTVAR = round(0.875·RTTVAR + 0.125·|RTT − R|)`, `RTT = round(0.75·RTT + 0.25·R)`
    /// (old `RTT` in both). Returns `RTO = RTT + max(100, K·RTTVAR)`.
    pub fn apply(&mut self, k: i64, r: i64) -> i64 {
        let (rtt, rttvar) = match self.state {
            None => (r, r / 2),
            Some((rtt, rttvar)) => (
                round((1.0 - ALPHA) * rtt as f64 + ALPHA * r as f64),
                round((1.0 - BETA) * rttvar as f64 + BETA * (rtt - r).abs() as f64),
            ),
        };
        self.state = Some((rtt, rttvar));
        rtt + G_MS.max(k * rttvar)
    }
    pub fn rtt_ms(&self) -> Option<i64> {
        self.state.map(|s| s.0)
    }
    pub fn rttvar_ms(&self) -> Option<i64> {
        self.state.map(|s| s.1)
    }
}

/// `LinuxRto.LinuxRemoteEndpoint`'s variables.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Linux {
    srtt: i64,
    rttvar: i64,
    mdev: i64,
    mdev_max: i64,
}

/// `PeakhopperRto.PeakhopperRemoteEndoint`'s variables.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct PeakHopper {
    b: f32,
    rtt_previous: i64,
    history: [i64; 2],
    next_slot: usize,
}

/// One peer's state (`RemoteEndpoint` and its subclass), created at the first exchange.
#[derive(Clone, Debug)]
struct Peer {
    /// `currentRTO` (ms), initially `ACK_TIMEOUT`.
    current_rto: i64,
    /// `initializedRto`: set by the first strong sample of Linux and Peak-Hopper only
    /// (`initialRto()`); CoCoA never sets it, so its blind rule never switches off.
    initialized_rto: bool,
    /// Exchanges registered in flight (`inFlight.size()`).
    in_flight: u32,
    /// Last time the peer's state was looked up (`LeastRecentlyUpdatedCache` access).
    last_access: Instant,
    /// `CocoaRemoteEndpoint.nanoTimestamp`: creation, then every update and aging step.
    aging_reference: Instant,
    strong: CfRto,
    weak: CfRto,
    linux: Option<Linux>,
    peakhopper: PeakHopper,
}

/// One of Californium's algorithms towards one server.
#[derive(Clone, Debug)]
pub struct Californium {
    config: Config,
    algorithm: CfAlgorithm,
    peer: Option<Peer>,
}

fn to_ms(d: Duration) -> i64 {
    (d.nanos() / 1_000_000) as i64
}

fn ms(x: i64) -> Duration {
    Duration::from_millis(x.max(0) as u64)
}

impl Californium {
    pub fn new(config: Config, algorithm: CfAlgorithm) -> Self {
        Californium {
            config,
            algorithm,
            peer: None,
        }
    }

    fn ack_timeout_ms(&self) -> i64 {
        to_ms(self.config.ack_timeout)
    }

    /// `min(MAX_ACK_TIMEOUT, MAX_RTO)` of `updateRetransmissionTimeout`.
    fn max_timeout_ms(&self) -> i64 {
        to_ms(self.config.max_timer).min(MAX_RTO_MS)
    }

    /// The peer's state as `getRemoteEndpoint` finds it at `now`: a fresh one if absent or
    /// stale, the access recorded.
    fn peer_at(&mut self, now: Instant) -> &mut Peer {
        let stale = self
            .peer
            .as_ref()
            .is_some_and(|p| now.saturating_since(p.last_access) >= PEER_INACTIVITY);
        if stale || self.peer.is_none() {
            self.peer = Some(Peer {
                current_rto: self.ack_timeout_ms(),
                initialized_rto: false,
                in_flight: 0,
                last_access: now,
                aging_reference: now,
                strong: CfRto::default(),
                weak: CfRto::default(),
                linux: None,
                peakhopper: PeakHopper::default(),
            });
        }
        let peer = self.peer.as_mut().expect("just created");
        peer.last_access = now;
        peer
    }

    /// `RemoteEndpoint.updateRTO` (the RTO history it also keeps is read by nothing).
    fn update_rto(peer: &mut Peer, rto: i64) {
        peer.current_rto = rto;
    }

    /// `RemoteEndpoint.getRTO` with `size = getNumberOfOngoingExchanges()`: the blind rule
    /// multiplies by `size` when more than one exchange is registered and no strong sample
    /// initialised the estimator; the result is capped at 32 s.
    fn get_rto(algorithm: CfAlgorithm, peer: &Peer, size: u32) -> i64 {
        let mut rto = peer.current_rto;
        if algorithm.uses_blind_estimator() && size > 1 && !peer.initialized_rto {
            rto *= i64::from(size);
        }
        rto.min(RTO_CAP_MS)
    }

    /// `Cocoa.CocoaRemoteEndpoint.checkAging`: with `rto = getRTO()`, while `rto < 1 s` and
    /// more than `16·rto` ms passed, `rto *= 2`; while `rto > 3 s` and more than `4·rto`
    /// passed, `rto = 1000 + rto/2`; each step subtracts its interval from the elapsed time
    /// and resets the reference to now (the remainder is dropped afterwards).
    fn check_aging(algorithm: CfAlgorithm, peer: &mut Peer, now: Instant, size: u32) {
        let mut elapsed = to_ms(now.saturating_since(peer.aging_reference));
        let mut rto = Self::get_rto(algorithm, peer, size);
        loop {
            if rto < LOWER_VBF_LIMIT_MS && elapsed > 16 * rto {
                elapsed -= 16 * rto;
                rto *= 2;
            } else if rto > UPPER_VBF_LIMIT_MS && elapsed > 4 * rto {
                elapsed -= 4 * rto;
                rto = 1000 + rto / 2;
            } else {
                break;
            }
            Self::update_rto(peer, rto);
            peer.aging_reference = now;
        }
    }

    /// `ReliabilityLayer.getRandomTimeout(timeout, ACK_RANDOM_FACTOR)`: an integer uniform in
    /// `[timeout, (int)(timeout·factor)]` ms (`timeout + rand.nextInt(delta)`).
    fn dither(&self, timeout: i64, rng: &mut dyn Rng) -> i64 {
        let permille = self.config.ack_random_factor_permille as i64;
        if permille <= 1000 {
            return timeout;
        }
        let delta = (timeout * permille / 1000 - timeout + 1) as u128;
        timeout + ((u128::from(rng.next_u64()) * delta) >> 64) as i64
    }

    /// The backoff factor fixed from `T_0` (`calculateVBF`), as a ratio: CoCoA ×3 below 1 s,
    /// ×1.5 above 3 s, otherwise (and for the other algorithms) `ACK_TIMEOUT_SCALE` = 2.
    fn backoff_ratio(&self, initial_timer_ms: i64) -> (i64, i64) {
        if self.algorithm.is_cocoa() {
            if initial_timer_ms > UPPER_VBF_LIMIT_MS {
                return (3, 2);
            }
            if initial_timer_ms < LOWER_VBF_LIMIT_MS {
                return (3, 1);
            }
        }
        (2, 1)
    }

    fn end_exchange(&mut self) {
        if let Some(p) = self.peer.as_mut() {
            p.in_flight = p.in_flight.saturating_sub(1);
        }
    }

    /// `Cocoa.CocoaRemoteEndpoint.processRttMeasurement`.
    fn cocoa_sample(&mut self, peer_strong: bool, r: i64, now: Instant) {
        let algorithm = self.algorithm;
        let peer = self.peer.as_mut().expect("peer exists during an exchange");
        let (estimate, weighting) = if peer_strong {
            (peer.strong.apply(K_STRONG, r), STRONG_WEIGHTING)
        } else {
            (peer.weak.apply(K_WEAK, r), WEAK_WEIGHTING)
        };
        let size = peer.in_flight;
        let old = Self::get_rto(algorithm, peer, size);
        let rto = round(weighting * estimate as f64 + (1.0 - weighting) * old as f64);
        Self::update_rto(peer, rto);
        peer.aging_reference = now;
    }

    /// `LinuxRto.LinuxRemoteEndpoint.initializeRTOEstimators` / `updateEstimator`.
    fn linux_sample(peer: &mut Peer, r: i64) {
        let l = match peer.linux {
            None => {
                let mdev = r / 2;
                let mdev_max = mdev.max(LINUX_MDEV_MIN_MS);
                Linux {
                    srtt: r,
                    rttvar: mdev_max,
                    mdev,
                    mdev_max,
                }
            }
            Some(mut l) => {
                l.srtt += round(0.125 * (r - l.srtt) as f64);
                // The new SRTT, not the old one, in both the test and the error.
                let err = (r - l.srtt).abs() as f64;
                l.mdev = if r < l.srtt - l.mdev {
                    round(0.96875 * l.mdev as f64 + 0.03125 * err)
                } else {
                    round(0.75 * l.mdev as f64) + round(0.25 * err)
                };
                if l.mdev > l.mdev_max {
                    l.mdev_max = l.mdev;
                    if l.mdev_max > l.rttvar {
                        l.rttvar = l.mdev_max;
                    }
                }
                if l.mdev_max < l.rttvar {
                    l.rttvar = round(0.75 * l.rttvar as f64 + 0.25 * l.mdev_max as f64);
                }
                l.mdev_max = LINUX_MDEV_MIN_MS;
                l
            }
        };
        peer.linux = Some(l);
        peer.initialized_rto = true;
        Self::update_rto(peer, l.srtt + 4 * l.rttvar);
    }

    /// `PeakhopperRto.PeakhopperRemoteEndoint.initializeRTOEstimators` / `updateEstimator`,
    /// in Java's `float` where Californium uses it.
    fn peakhopper_sample(algorithm: CfAlgorithm, peer: &mut Peer, r: i64) {
        let first = !peer.initialized_rto;
        let ph = &mut peer.peakhopper;
        ph.history[ph.next_slot] = r;
        ph.next_slot = (ph.next_slot + 1) % ph.history.len();
        if first {
            peer.initialized_rto = true;
            // (long)((1 + 0.75)·R); RTT_previous stays 0.
            Self::update_rto(peer, (1.75 * r as f64) as i64);
            return;
        }
        let d: f32 = 1.0 - 1.0 / PH_F;
        // `Math.abs((R − RTT_previous) / R)` on longs: integer division.
        let delta = ((r - ph.rtt_previous) / r).abs() as f32;
        ph.b = (delta * 2.0).max(d * ph.b).min(PH_B_MAX);
        let rtt_max = r.max(ph.rtt_previous);
        let rto_min = ph.history.iter().copied().max().unwrap_or(r) + PH_MARGIN_MS;
        let b = ph.b;
        ph.rtt_previous = r;
        let size = peer.in_flight;
        let old = Self::get_rto(algorithm, peer, size);
        let scaled = (d * old as f32).max((1.0 + b) * rtt_max as f32) as i64;
        let rto = scaled
            .max(rtt_max + ((1.0 + PH_B_MAX) * 50.0) as i64)
            .max(rto_min);
        Self::update_rto(peer, rto);
    }
}

impl Controller for Californium {
    fn config(&self) -> &Config {
        &self.config
    }

    /// `CongestionControlLayer.sendRequest`: `prepareRequest` arms `T_0` first
    /// (`updateRetransmissionTimeout` with the exchange not yet registered, so the blind
    /// rule sees the `outstanding` others), then `checkNSTART` registers the exchange, then
    /// `checkAging` runs — so aging changes the RTO of the *next* exchange, not this one.
    fn on_exchange_start(&mut self, now: Instant, outstanding: u32, rng: &mut dyn Rng) -> Exchange {
        let algorithm = self.algorithm;
        let max_timeout = self.max_timeout_ms();
        let base = Self::get_rto(algorithm, self.peer_at(now), outstanding);
        let mut timeout = base;
        // `Cocoa` calls `setDithering(true)`; the other layers keep `false`.
        if algorithm.is_cocoa() {
            timeout = self.dither(timeout, rng);
        }
        let timeout = timeout.max(MIN_RTO_MS).min(max_timeout);
        let peer = self.peer.as_mut().expect("peer_at created it");
        peer.in_flight = outstanding + 1;
        if algorithm.is_cocoa() {
            Self::check_aging(algorithm, peer, now, peer.in_flight);
        }
        Exchange::new(now, ms(timeout))
    }

    /// `(int)(timeoutScale · currentTimeout)`, capped at `min(MAX_ACK_TIMEOUT, 60 s)`; the
    /// scale was fixed from `T_0`.
    fn next_timer(&self, ex: &Exchange) -> Duration {
        let (num, den) = self.backoff_ratio(to_ms(ex.initial_timer));
        ms((to_ms(ex.timer) * num / den).min(self.max_timeout_ms()))
    }

    /// As the provided method, and a retransmission looks the peer up
    /// (`updateRetransmissionTimeout` → `getRemoteEndpoint`), which keeps it from going stale.
    fn on_timeout(&mut self, now: Instant, ex: &mut Exchange) -> TimeoutDecision {
        if ex.retransmissions >= self.config.max_retransmit {
            self.on_exchange_failed(now, ex);
            return TimeoutDecision::Fail;
        }
        self.peer_at(now);
        let timer = self.next_timer(ex);
        ex.retransmissions += 1;
        ex.timer = timer;
        ex.last_sent = now;
        TimeoutDecision::Retransmit { timer }
    }

    /// `CongestionControlLayer.processRttMeasurement` → the algorithm's
    /// `processRttMeasurement(rtoType, max(RTT in whole ms, 1))`.
    fn on_plain_response(&mut self, now: Instant, ex: &Exchange) -> Sample {
        let rtt = now - ex.started;
        let r = to_ms(rtt).max(1);
        let k = ex.retransmissions;
        let algorithm = self.algorithm;
        self.peer_at(now);
        let kind = match (algorithm, k) {
            (_, 3..) => SampleKind::Ambiguous,
            (CfAlgorithm::Cocoa | CfAlgorithm::CocoaStrong, 0) => {
                self.cocoa_sample(true, r, now);
                SampleKind::Strong
            }
            (CfAlgorithm::Cocoa, _) => {
                self.cocoa_sample(false, r, now);
                SampleKind::Weak
            }
            (CfAlgorithm::BasicRto, _) => {
                let peer = self.peer.as_mut().expect("peer_at created it");
                Self::update_rto(peer, r + r / 2);
                if k == 0 {
                    SampleKind::Strong
                } else {
                    SampleKind::Weak
                }
            }
            (CfAlgorithm::LinuxRto, 0) => {
                Self::linux_sample(self.peer.as_mut().expect("peer_at created it"), r);
                SampleKind::Strong
            }
            (CfAlgorithm::PeakhopperRto, 0) => {
                let peer = self.peer.as_mut().expect("peer_at created it");
                Self::peakhopper_sample(algorithm, peer, r);
                SampleKind::Strong
            }
            _ => SampleKind::Ambiguous,
        };
        self.end_exchange();
        Sample::new(kind, rtt)
    }

    /// Nothing is learned (the `TimeoutTask` only dequeues the next exchange).
    fn on_exchange_failed(&mut self, _now: Instant, _ex: &Exchange) {
        self.end_exchange();
    }

    fn reset(&mut self) {
        self.peer = None;
    }

    /// `getRTO()` with no exchange in flight: the current RTO capped at 32 s (before aging,
    /// dithering and the 500 ms floor).
    fn base_rto(&self) -> Duration {
        ms(self.peer.as_ref().map_or(self.ack_timeout_ms(), |p| {
            Self::get_rto(self.algorithm, p, 0)
        }))
    }

    fn visit_state(&self, visit: &mut StateVisitor<'_>) {
        let p = self.peer.as_ref();
        let opt = |v: Option<i64>| -> Value { v.map(ms).into() };
        visit("rto", opt(p.map(|p| p.current_rto)));
        match self.algorithm {
            CfAlgorithm::Cocoa | CfAlgorithm::CocoaStrong => {
                visit("srtt_strong", opt(p.and_then(|p| p.strong.rtt_ms())));
                visit("rttvar_strong", opt(p.and_then(|p| p.strong.rttvar_ms())));
                visit("srtt_weak", opt(p.and_then(|p| p.weak.rtt_ms())));
                visit("rttvar_weak", opt(p.and_then(|p| p.weak.rttvar_ms())));
            }
            CfAlgorithm::BasicRto => {}
            CfAlgorithm::LinuxRto => {
                let l = p.and_then(|p| p.linux);
                visit("srtt", opt(l.map(|l| l.srtt)));
                visit("mdev", opt(l.map(|l| l.mdev)));
                visit("rttvar", opt(l.map(|l| l.rttvar)));
            }
            CfAlgorithm::PeakhopperRto => {
                visit(
                    "b",
                    Value::Float(p.map_or(0.0, |p| f64::from(p.peakhopper.b))),
                );
                let prev = p.map(|p| p.peakhopper.rtt_previous).filter(|&x| x > 0);
                visit("previous_sample", opt(prev));
            }
        }
    }
}
