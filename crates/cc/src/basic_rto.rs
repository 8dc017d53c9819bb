//! `basic-rto` (B-RTO, docs/design.md §3.1): the last usable RTT sample, dithered, as the next `T_0`.

use crate::backoff;
use crate::config::Config;
use crate::controller::Controller;
use crate::exchange::{Exchange, Sample, SampleKind, StateVisitor};
use crate::rng::Rng;
use crate::time::{Duration, Instant};

/// Responses after at most this many retransmissions yield a sample (measured from the
/// original transmission, docs/design.md §3.1).
const MAX_SAMPLED_RETRANSMISSIONS: u32 = 2;

#[derive(Clone, Debug)]
pub struct BasicRto {
    pub(crate) config: Config,
    /// Last sample `R` from an exchange with `k ≤ 2`.
    sample: Option<Duration>,
    /// Backed-off `T_k` of an exchange that yielded no sample (`k ≥ 3` or failed).
    retained: Option<Duration>,
}

impl BasicRto {
    pub fn new(config: Config) -> Self {
        BasicRto {
            config,
            sample: None,
            retained: None,
        }
    }
}

impl Controller for BasicRto {
    fn config(&self) -> &Config {
        &self.config
    }

    /// `T_0`: the retained timer if any; else dithered in `[R, 1.5·R]`; before any sample
    /// `[ACK_TIMEOUT, 1.5·ACK_TIMEOUT]` = [2, 3] s. Capped at 60 s.
    fn initial_timer(&mut self, _now: Instant, rng: &mut dyn Rng) -> Duration {
        let timer = match self.retained {
            Some(t) => t,
            None => {
                let base = self.base_rto();
                rng.uniform(base, self.config.randomized(base))
            }
        };
        timer.min(self.config.max_timer)
    }

    /// Binary backoff, cap 60 s.
    fn next_timer(&self, ex: &Exchange) -> Duration {
        backoff::binary(ex.timer, self.config.max_timer)
    }

    fn on_plain_response(&mut self, now: Instant, ex: &Exchange) -> Sample {
        let rtt = now - ex.started;
        let k = ex.retransmissions;
        if k <= MAX_SAMPLED_RETRANSMISSIONS {
            self.sample = Some(rtt);
            self.retained = None;
            Sample::new(
                if k == 0 {
                    SampleKind::Strong
                } else {
                    SampleKind::Weak
                },
                rtt,
            )
        } else {
            self.retained = Some(ex.timer);
            Sample::new(SampleKind::Ambiguous, rtt)
        }
    }

    fn on_exchange_failed(&mut self, _now: Instant, ex: &Exchange) {
        self.retained = Some(ex.timer);
    }

    fn reset(&mut self) {
        *self = BasicRto::new(self.config);
    }

    fn base_rto(&self) -> Duration {
        self.retained
            .or(self.sample)
            .unwrap_or(self.config.ack_timeout)
    }

    fn visit_state(&self, visit: &mut StateVisitor<'_>) {
        visit("last_sample", self.sample.into());
        visit("retained_timer", self.retained.into());
    }
}
