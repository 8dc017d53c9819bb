//! FASOR, draft-ietf-core-fasor-02 (docs/design.md §3.1), and `fasor-rc` with the Rexmit-Cnt echo (§4.4).

use crate::config::Config;
use crate::controller::Controller;
use crate::estimator::Rfc6298;
use crate::exchange::{Answered, Exchange, FasorPlan, Sample, SampleKind, StateVisitor, Value};
use crate::rng::Rng;
use crate::time::{Duration, Instant};

/// FastRTO's `K` (RFC 6298's 4): `FastRTO = SRTT + K·RTTVAR` (draft §3.1).
const K: u64 = 4;
/// First-sample `RTTVAR = R/(2K)` = R/8. The draft's §4.1 text says `R/(2K)`, its
/// pseudocode `R/2`; docs/design.md §3.1 follows the text.
const FIRST_RTTVAR_DIVISOR: u64 = 2 * K;
/// SRTT assumed before any sample, so the first timer is dithered in [2 1/6, 2 2/3] s.
const INITIAL_SRTT: Duration = Duration::from_nanos(666_666_667);
/// `SlowRTO = 1.5 × (arrival − original transmission)` (draft §3.2), as 3/2.
const SLOW_NUM: u64 = 3;
const SLOW_DEN: u64 = 2;

/// FASOR's retransmission-timer states (draft §3.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum FasorState {
    /// Timers `F, 2F, 4F, …`.
    Fast = 0,
    /// Timers `F, max(SlowRTO, 2F), 2F, 4F, …`.
    FastSlowFast = 1,
    /// Timers `SlowRTO, F, 2F, 4F, …`.
    SlowFast = 2,
}

impl FasorState {
    pub const fn as_str(self) -> &'static str {
        match self {
            FasorState::Fast => "FAST",
            FasorState::FastSlowFast => "FAST_SLOW_FAST",
            FasorState::SlowFast => "SLOW_FAST",
        }
    }
    fn from_u8(v: u8) -> Self {
        match v {
            1 => FasorState::FastSlowFast,
            2 => FasorState::SlowFast,
            _ => FasorState::Fast,
        }
    }
    /// Transition after an exchange that needed `k ≥ 1` retransmissions (or failed):
    /// `FAST → FAST_SLOW_FAST → SLOW_FAST → SLOW_FAST`. After `k = 0` the state is `FAST`.
    fn after_retransmission(self) -> Self {
        match self {
            FasorState::Fast => FasorState::FastSlowFast,
            FasorState::FastSlowFast | FasorState::SlowFast => FasorState::SlowFast,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Fasor {
    pub(crate) config: Config,
    /// `fasor-rc`: responses are matched to their transmission (draft §4.4).
    rexmit_count: bool,
    fast: Rfc6298,
    slow_rto: Option<Duration>,
    state: FasorState,
    /// `fasor-rc` only: the previous RTT sample, a floor for the FastRTO base.
    last_sample: Option<Duration>,
}

impl Fasor {
    pub fn new(config: Config, rexmit_count: bool) -> Self {
        Fasor {
            config,
            rexmit_count,
            fast: Rfc6298::default(),
            slow_rto: None,
            state: FasorState::Fast,
            last_sample: None,
        }
    }

    /// FastRTO: `SRTT + 4·RTTVAR`, initially `ACK_TIMEOUT` = 2 s.
    pub fn fast_rto(&self) -> Duration {
        self.fast.estimate(K).unwrap_or(self.config.ack_timeout)
    }

    /// `T_i` of the frozen series, each value capped at 60 s.
    fn timer(&self, plan: &FasorPlan, i: u32) -> Duration {
        let doubled = |n: u32| plan.fast.mul(1u64 << n.min(40));
        let t = match (FasorState::from_u8(plan.state), i) {
            (FasorState::Fast, i) => doubled(i),
            (FasorState::FastSlowFast, 0) => plan.fast,
            (FasorState::FastSlowFast, 1) => plan.slow.max(doubled(1)),
            (FasorState::FastSlowFast, i) => doubled(i - 1),
            (FasorState::SlowFast, 0) => plan.slow,
            (FasorState::SlowFast, i) => doubled(i - 1),
        };
        t.min(self.config.max_timer)
    }
}

impl Controller for Fasor {
    fn config(&self) -> &Config {
        &self.config
    }

    /// Fixes the exchange's timer series: `F` dithered in `[base + SRTT/4, base + SRTT]`,
    /// `base = FastRTO` (`fasor-rc`: `max(FastRTO, previous sample)`), SRTT = 2/3 s before any
    /// sample; the state and SlowRTO are frozen with it.
    fn on_exchange_start(
        &mut self,
        now: Instant,
        _outstanding: u32,
        rng: &mut dyn Rng,
    ) -> Exchange {
        let srtt = self.fast.srtt().unwrap_or(INITIAL_SRTT);
        let base = self.base_rto();
        // Floored at the clock granularity so that the series F, 2F, 4F, … still backs off
        // after zero RTT samples (F = 0 otherwise); see `config::CLOCK_GRANULARITY`.
        let f = rng
            .uniform(base + srtt.mul_ratio(1, 4), base + srtt)
            .min(self.config.max_timer)
            .max(self.config.clock_granularity);
        // Without a SlowRTO (only after failures before any response) the slow states have
        // nothing to wait for: they use the FAST series.
        let (state, slow) = match self.slow_rto {
            Some(slow) => (self.state, slow),
            None => (FasorState::Fast, Duration::ZERO),
        };
        let plan = FasorPlan {
            state: state as u8,
            fast: f,
            slow: slow.min(self.config.max_timer),
        };
        let mut ex = Exchange::new(now, self.timer(&plan, 0));
        ex.fasor = plan;
        ex
    }

    fn next_timer(&self, ex: &Exchange) -> Duration {
        self.timer(&ex.fasor, ex.retransmissions + 1)
    }

    /// `k = 0`: unambiguous sample into FastRTO. `k ≥ 1`: `SlowRTO = 1.5 × (now − original
    /// transmission)`. `fasor-rc`: every response is matched by the echoed Rexmit-Cnt, so its
    /// RTT from the answered transmission feeds FastRTO too. State transition by `k`.
    fn on_response(&mut self, now: Instant, ex: &Exchange, answered: Option<Answered>) -> Sample {
        let k = ex.retransmissions;
        let from_original = now - ex.started;
        if k >= 1 {
            self.slow_rto = Some(from_original.mul_ratio(SLOW_NUM, SLOW_DEN));
        }
        let sample = match answered.filter(|_| self.rexmit_count) {
            Some(a) => {
                let rtt = now.saturating_since(a.sent_at);
                self.fast.on_sample(rtt, FIRST_RTTVAR_DIVISOR);
                self.last_sample = Some(rtt);
                Sample::new(SampleKind::Strong, rtt)
            }
            None if k == 0 => {
                self.fast.on_sample(from_original, FIRST_RTTVAR_DIVISOR);
                Sample::new(SampleKind::Strong, from_original)
            }
            None => Sample::new(SampleKind::Ambiguous, from_original),
        };
        self.state = if k == 0 {
            FasorState::Fast
        } else {
            self.state.after_retransmission()
        };
        sample
    }

    fn on_exchange_failed(&mut self, _now: Instant, _ex: &Exchange) {
        self.state = self.state.after_retransmission();
    }

    fn reset(&mut self) {
        *self = Fasor::new(self.config, self.rexmit_count);
    }

    /// FastRTO (for `fasor-rc`, `max(FastRTO, previous sample)`) before dithering.
    fn base_rto(&self) -> Duration {
        let fast = self.fast_rto();
        match self.last_sample {
            Some(prev) if self.rexmit_count => fast.max(prev),
            _ => fast,
        }
    }

    fn visit_state(&self, visit: &mut StateVisitor<'_>) {
        visit("state", Value::Str(self.state.as_str()));
        visit("fast_rto", self.fast_rto().into());
        visit("srtt", self.fast.srtt().into());
        visit("rttvar", self.fast.rttvar().into());
        visit("slow_rto", self.slow_rto.into());
    }
}
