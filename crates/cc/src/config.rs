//! Typed configuration shared by every algorithm, with documented, sourced defaults: what
//! RFC 7252 §4.8 defines for all (`ACK_TIMEOUT`, `ACK_RANDOM_FACTOR`, `MAX_RETRANSMIT`,
//! `NSTART`) plus the shared 60 s timer cap. Parameters of one algorithm live with it and are
//! declared in [`crate::registry`].

use crate::time::Duration;

/// `ACK_TIMEOUT`, RFC 7252 §4.8: 2 s.
pub const ACK_TIMEOUT: Duration = Duration::from_secs(2);
/// `ACK_RANDOM_FACTOR`, RFC 7252 §4.8: 1.5, kept as per-mille for integer arithmetic.
pub const ACK_RANDOM_FACTOR_PERMILLE: u64 = 1500;
/// `MAX_RETRANSMIT`, RFC 7252 §4.8: 4. (The literature's experiments use 20 so that no
/// exchange fails; scenario files set that explicitly.)
pub const MAX_RETRANSMIT: u32 = 4;
/// `NSTART`, RFC 7252 §4.7: 1 outstanding exchange per server.
pub const NSTART: u32 = 1;
/// Upper bound on timers of the `default`, B-RTO, Linux, Peak-Hopper and FASOR families:
/// 60 s, the bound used by the literature's testbed (docs/design.md §3.1). RFC 7252 itself has none.
pub const MAX_TIMER: Duration = Duration::from_secs(60);

/// Clock granularity `G` (RFC 6298 §2.4, §4): the smallest timer an endpoint can arm. RFC 6298
/// adds `max(G, K·RTTVAR)` so that an RTO never collapses onto the measured RTT; here `G` is a
/// floor on every timer [`AnyAlgorithm`](crate::AnyAlgorithm) hands out, so that a zero (or
/// sub-granularity) RTT sample can never arm a zero timer — which would retransmit back to
/// back and, with binary backoff, stay at zero forever. 1 ms: coaplab's clock counts
/// nanoseconds and has no natural tick, and 1 ms is the finest resolution the timer services
/// of common CoAP platforms offer (millisecond timers of RIOT `ztimer_msec`, Zephyr and Linux
/// `CLOCK_MONOTONIC` users alike); a stack with a coarser tick sets its own. It is far below
/// any RTT the scenarios use (≥ 0.6 s), so it changes no simulated result.
pub const CLOCK_GRANULARITY: Duration = Duration::from_millis(1);

/// Parameters of an algorithm instance. `Config::default()` gives the RFC values above.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    /// Initial timeout before any RTT information (default [`ACK_TIMEOUT`] = 2 s).
    pub ack_timeout: Duration,
    /// Dithering factor in per-mille (default [`ACK_RANDOM_FACTOR_PERMILLE`] = 1500 ≙ 1.5).
    pub ack_random_factor_permille: u64,
    /// Retransmissions allowed before the exchange fails (default [`MAX_RETRANSMIT`] = 4).
    pub max_retransmit: u32,
    /// Outstanding exchanges allowed per server (default [`NSTART`] = 1). Enforced by the
    /// endpoint; CoCoA's blind RTO reads the actual count from `on_exchange_start`.
    pub nstart: u32,
    /// Timer cap for the non-CoCoA families (default [`MAX_TIMER`] = 60 s). Kept here, shared,
    /// because the `default`, B-RTO, Linux, Peak-Hopper and FASOR families all use the same
    /// literature bound and a scenario sets it once; CoCoA ignores it and has its own
    /// `max_timer` parameter (32 s, [`crate::cocoa::CocoaParams`]).
    pub max_timer: Duration,
    /// Floor of every timer (default [`CLOCK_GRANULARITY`] = 1 ms); zero disables it.
    pub clock_granularity: Duration,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            ack_timeout: ACK_TIMEOUT,
            ack_random_factor_permille: ACK_RANDOM_FACTOR_PERMILLE,
            max_retransmit: MAX_RETRANSMIT,
            nstart: NSTART,
            max_timer: MAX_TIMER,
            clock_granularity: CLOCK_GRANULARITY,
        }
    }
}

impl Config {
    /// `value · ACK_RANDOM_FACTOR`: the upper end of a dither range starting at `value`.
    pub fn randomized(&self, value: Duration) -> Duration {
        value.mul_ratio(self.ack_random_factor_permille, 1000)
    }
}
