//! `linux-rto` (SPEC §3.1): Linux's TCP RTO estimator on strong samples only (Karn's rule).

use crate::backoff;
use crate::config::Config;
use crate::estimator::LinuxRtt;
use crate::exchange::{Exchange, Sample, StateVisitor};
use crate::rng::Rng;
use crate::time::{Duration, Instant};

#[derive(Clone, Debug)]
pub struct LinuxRto {
    pub(crate) config: Config,
    estimator: LinuxRtt,
    /// Backed-off timer kept for new exchanges until the next strong sample.
    retained: Option<Duration>,
}

impl LinuxRto {
    pub fn new(config: Config) -> Self {
        LinuxRto {
            config,
            estimator: LinuxRtt::default(),
            retained: None,
        }
    }

    /// `T_0` = retained backed-off value, else `SRTT + 4·rttvar`, else 2 s; no dithering.
    pub fn on_exchange_start(&mut self, now: Instant, _rng: &mut dyn Rng) -> Exchange {
        Exchange::new(now, self.base_rto().min(self.config.max_timer))
    }

    pub fn next_timer(&self, ex: &Exchange) -> Duration {
        backoff::binary(ex.timer, self.config.max_timer)
    }

    /// `k = 0` → strong sample into the estimator (each exchange is one flight, so the
    /// once-per-flight `rttvar` step is taken every time); `k ≥ 1` → Karn: discarded, and the
    /// backed-off `T_k` is kept.
    pub fn on_response(&mut self, now: Instant, ex: &Exchange) -> Sample {
        let estimator = &mut self.estimator;
        backoff::karn_response(now, ex, &mut self.retained, |rtt| {
            estimator.on_sample(rtt, true)
        })
    }

    pub fn on_exchange_failed(&mut self, _now: Instant, ex: &Exchange) {
        self.retained = Some(ex.timer);
    }

    pub fn reset(&mut self) {
        *self = LinuxRto::new(self.config);
    }

    pub fn base_rto(&self) -> Duration {
        self.retained
            .or(self.estimator.rto())
            .unwrap_or(self.config.ack_timeout)
    }

    pub fn visit_state(&self, visit: &mut StateVisitor<'_>) {
        visit(
            "rto",
            self.estimator
                .rto()
                .unwrap_or(self.config.ack_timeout)
                .into(),
        );
        visit("srtt", self.estimator.srtt().into());
        visit("mdev", self.estimator.mdev().into());
        visit("rttvar", self.estimator.rttvar().into());
        visit("retained_timer", self.retained.into());
    }
}
