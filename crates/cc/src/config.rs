//! Typed configuration shared by every algorithm, with documented, sourced defaults.

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
/// 60 s, the bound used by the literature's testbed (SPEC §3.1). RFC 7252 itself has none.
pub const MAX_TIMER: Duration = Duration::from_secs(60);
/// CoCoA truncates every backed-off timer at 32 s (draft-ietf-core-cocoa-03 §4.2).
pub const COCOA_MAX_TIMER: Duration = Duration::from_secs(32);

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
    /// Timer cap for the non-CoCoA families (default [`MAX_TIMER`] = 60 s).
    pub max_timer: Duration,
    /// Timer cap for the CoCoA family (default [`COCOA_MAX_TIMER`] = 32 s).
    pub cocoa_max_timer: Duration,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            ack_timeout: ACK_TIMEOUT,
            ack_random_factor_permille: ACK_RANDOM_FACTOR_PERMILLE,
            max_retransmit: MAX_RETRANSMIT,
            nstart: NSTART,
            max_timer: MAX_TIMER,
            cocoa_max_timer: COCOA_MAX_TIMER,
        }
    }
}

impl Config {
    /// `value · ACK_RANDOM_FACTOR`: the upper end of a dither range starting at `value`.
    pub fn randomized(&self, value: Duration) -> Duration {
        value.mul_ratio(self.ack_random_factor_permille, 1000)
    }
}
