//! CoCoA, draft-ietf-core-cocoa-03, and its variants `cocoa-s`, `cocoa-fb1`, `cocoa-fb2`
//! (docs/design.md §3.1).

use crate::backoff;
use crate::config::Config;
use crate::controller::Controller;
use crate::default::{retain_full_backoff, FullBackoff};
use crate::estimator::Rfc6298;
use crate::exchange::{Exchange, Sample, SampleKind, StateVisitor};
use crate::rng::Rng;
use crate::time::{Duration, Instant};

/// Strong estimator's `K` (RFC 6298's 4): `E_strong = SRTT_s + 4·RTTVAR_s` (draft §4.2).
const K_STRONG: u64 = 4;
/// Weak estimator's `K`: `E_weak = SRTT_w + 1·RTTVAR_w` (draft §4.2).
const K_WEAK: u64 = 1;
/// First-sample `RTTVAR = R/2` for both estimators (RFC 6298 §2.2).
const FIRST_RTTVAR_DIVISOR: u64 = 2;
/// Aging thresholds (draft §4.2.2): below 1 s the RTO doubles after 16·RTO without update;
/// above 3 s it moves to `1 s + RTO/2` after 4·RTO.
const AGING_LOW: Duration = Duration::from_secs(1);
const AGING_HIGH: Duration = Duration::from_secs(3);

/// CoCoA truncates every backed-off timer at 32 s (draft-ietf-core-cocoa-03 §4.2): the default
/// of the `max_timer` parameter.
pub const COCOA_MAX_TIMER: Duration = Duration::from_secs(32);

/// CoCoA's own parameters (the registry's `params` of the CoCoA family).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CocoaParams {
    /// Truncation of every timer, `T_0` included (default [`COCOA_MAX_TIMER`] = 32 s). CoCoA
    /// ignores [`Config::max_timer`], the cap of the other families.
    pub max_timer: Duration,
}

impl Default for CocoaParams {
    fn default() -> Self {
        CocoaParams {
            max_timer: COCOA_MAX_TIMER,
        }
    }
}

/// Variant switches of the CoCoA family.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CocoaVariant {
    /// draft-ietf-core-cocoa-03 as is.
    Cocoa,
    /// `cocoa-s`: weak samples are ignored (strong estimator only).
    Strong,
    /// `cocoa-fb1`: retains `T_k` after `k ≥ 1` (see [`FullBackoff::Fb1`]).
    Fb1,
    /// `cocoa-fb2`: retains CoCoA's backoff applied `k` times to `max(T_0, RTO')`.
    Fb2,
}

/// CoCoA state per server.
#[derive(Clone, Debug)]
pub struct Cocoa {
    pub(crate) config: Config,
    params: CocoaParams,
    variant: CocoaVariant,
    strong: Rfc6298,
    weak: Rfc6298,
    /// The overall RTO (draft §4.2), initially `ACK_TIMEOUT` = 2 s.
    rto: Duration,
    /// When `rto` was last updated by a sample, advanced by aging steps (draft §4.2.2).
    last_update: Instant,
    /// Whether any sample updated `rto` yet (for the blind RTO, draft §4.2.1).
    sampled: bool,
    /// Backed-off timer carried into the next exchange (fb variants).
    retained: Option<Duration>,
}

impl Cocoa {
    /// CoCoA with the default parameters ([`CocoaParams::default`]).
    pub fn new(config: Config, variant: CocoaVariant) -> Self {
        Cocoa::with_params(config, variant, CocoaParams::default())
    }

    pub fn with_params(config: Config, variant: CocoaVariant, params: CocoaParams) -> Self {
        Cocoa {
            config,
            params,
            variant,
            strong: Rfc6298::default(),
            weak: Rfc6298::default(),
            rto: config.ack_timeout,
            last_update: Instant::ZERO,
            sampled: false,
            retained: None,
        }
    }

    /// Aging (draft §4.2.2), applied lazily when an exchange starts. docs/design.md §3.1 resolves how:
    /// cumulatively — every full aging interval that elapsed since the last update counts,
    /// each step advancing the reference time by the interval it used.
    fn age(&mut self, now: Instant) {
        while self.rto < AGING_LOW && now.saturating_since(self.last_update) >= self.rto.mul(16) {
            self.last_update += self.rto.mul(16);
            self.rto = self.rto.mul(2);
        }
        while self.rto > AGING_HIGH && now.saturating_since(self.last_update) >= self.rto.mul(4) {
            self.last_update += self.rto.mul(4);
            self.rto = Duration::from_secs(1) + self.rto.mul_ratio(1, 2);
        }
    }

    /// `RTO = w·E + (1 − w)·RTO` with `w = num/den`.
    fn update_rto(&mut self, now: Instant, estimate: Duration, num: u64, den: u64) {
        self.rto = estimate.mul_ratio(num, den) + self.rto.mul_ratio(den - num, den);
        self.last_update = now;
        self.sampled = true;
    }

    fn on_exchange_end(&mut self, ex: &Exchange) {
        self.retained = match self.variant {
            CocoaVariant::Cocoa | CocoaVariant::Strong => None,
            CocoaVariant::Fb1 => {
                retain_full_backoff(FullBackoff::Fb1, self.retained, ex, &self.config)
            }
            // cocoa-fb2 (docs/design.md §3.1, an interpretation of prose): CoCoA's backoff applied k times
            // to max(T_0, RTO'), RTO' being the overall RTO after this exchange's update.
            // VBF is monotone, so this is never below cocoa-fb1's T_k.
            CocoaVariant::Fb2 if ex.retransmissions >= 1 => {
                let mut t = ex.initial_timer.max(self.rto);
                for _ in 0..ex.retransmissions {
                    t = backoff::cocoa_vbf(t, self.params.max_timer);
                }
                Some(t)
            }
            CocoaVariant::Fb2 => None,
        };
    }
}

impl Controller for Cocoa {
    fn config(&self) -> &Config {
        &self.config
    }

    /// Starts an exchange: aging first, then `T_0` dithered in `[RTO, 1.5·RTO]` (draft §4.2).
    ///
    /// Blind RTO with NSTART > 1 (draft §4.2.1): until the first sample, an exchange started
    /// while `outstanding` others are in flight uses `ACK_TIMEOUT·(outstanding + 1)` as its
    /// base, dithered the same way.
    fn on_exchange_start(&mut self, now: Instant, outstanding: u32, rng: &mut dyn Rng) -> Exchange {
        self.age(now);
        let timer = match self.retained {
            Some(t) => t,
            None => {
                let base = if self.sampled {
                    self.rto
                } else {
                    self.config.ack_timeout.mul(u64::from(outstanding) + 1)
                };
                rng.uniform(base, self.config.randomized(base))
            }
        };
        Exchange::new(now, timer.min(self.params.max_timer))
    }

    fn next_timer(&self, ex: &Exchange) -> Duration {
        backoff::cocoa_vbf(ex.timer, self.params.max_timer)
    }

    /// A response after `k` retransmissions (draft §4.2): `k = 0` → strong sample,
    /// `RTO = 0.5·E_strong + 0.5·RTO`; `k = 1, 2` → weak sample measured from the original
    /// transmission, `RTO = 0.25·E_weak + 0.75·RTO`; `k ≥ 3` → no update.
    fn on_plain_response(&mut self, now: Instant, ex: &Exchange) -> Sample {
        let rtt = now - ex.started;
        let k = ex.retransmissions;
        let kind = if k == 0 {
            self.strong.on_sample(rtt, FIRST_RTTVAR_DIVISOR);
            let e = self.strong.estimate(K_STRONG).unwrap_or(rtt);
            self.update_rto(now, e, 1, 2);
            SampleKind::Strong
        } else if k <= 2 && self.variant != CocoaVariant::Strong {
            self.weak.on_sample(rtt, FIRST_RTTVAR_DIVISOR);
            let e = self.weak.estimate(K_WEAK).unwrap_or(rtt);
            self.update_rto(now, e, 1, 4);
            SampleKind::Weak
        } else {
            SampleKind::Ambiguous
        };
        self.on_exchange_end(ex);
        Sample::new(kind, rtt)
    }

    fn on_exchange_failed(&mut self, _now: Instant, ex: &Exchange) {
        self.on_exchange_end(ex);
    }

    fn reset(&mut self) {
        *self = Cocoa::with_params(self.config, self.variant, self.params);
    }

    /// Base of the next exchange before aging and dithering.
    fn base_rto(&self) -> Duration {
        self.retained.unwrap_or(self.rto)
    }

    fn visit_state(&self, visit: &mut StateVisitor<'_>) {
        visit("rto", self.rto.into());
        visit("srtt_strong", self.strong.srtt().into());
        visit("rttvar_strong", self.strong.rttvar().into());
        visit("srtt_weak", self.weak.srtt().into());
        visit("rttvar_weak", self.weak.rttvar().into());
        visit("retained_timer", self.retained.into());
    }
}
