//! The shell shared by `linux-rto` and `peakhopper-rto` (docs/design.md §3.1): an RTO estimator fed with
//! strong samples only (Karn's rule), no dithering, binary backoff capped at 60 s, and the
//! backed-off timer retained for new exchanges until the next strong sample. The two
//! algorithms differ only in their [`StrongEstimator`].

use crate::backoff;
use crate::config::Config;
use crate::controller::Controller;
use crate::exchange::{Exchange, Sample, SampleKind, StateVisitor};
use crate::rng::Rng;
use crate::time::{Duration, Instant};

/// An RTO estimator that only ever sees unambiguous (`k = 0`) samples.
pub trait StrongEstimator: Clone + Default {
    /// Feeds one strong sample.
    fn on_strong_sample(&mut self, rtt: Duration);
    /// The RTO, once a sample was taken.
    fn rto(&self) -> Option<Duration>;
    /// Reports the estimator's own state (after `rto`, before `retained_timer`).
    fn visit_state(&self, visit: &mut StateVisitor<'_>);
}

#[derive(Clone, Debug)]
pub struct KarnRto<E> {
    pub(crate) config: Config,
    estimator: E,
    /// Backed-off timer kept for new exchanges until the next strong sample.
    retained: Option<Duration>,
}

impl<E: StrongEstimator> KarnRto<E> {
    pub fn new(config: Config) -> Self {
        KarnRto {
            config,
            estimator: E::default(),
            retained: None,
        }
    }
}

impl<E: StrongEstimator> Controller for KarnRto<E> {
    fn config(&self) -> &Config {
        &self.config
    }

    /// `T_0` = the retained backed-off value, else the estimator's RTO, else 2 s; no dithering.
    fn initial_timer(&mut self, _now: Instant, _rng: &mut dyn Rng) -> Duration {
        self.base_rto().min(self.config.max_timer)
    }

    /// Binary backoff, cap 60 s.
    fn next_timer(&self, ex: &Exchange) -> Duration {
        backoff::binary(ex.timer, self.config.max_timer)
    }

    /// `k = 0` → a strong sample: fed to the estimator, the retained timer forgotten.
    /// `k ≥ 1` → Karn: the measurement is ambiguous and discarded; the exchange's backed-off
    /// `T_k` is kept for new exchanges.
    fn on_plain_response(&mut self, now: Instant, ex: &Exchange) -> Sample {
        let rtt = now - ex.started;
        if ex.retransmissions == 0 {
            self.estimator.on_strong_sample(rtt);
            self.retained = None;
            Sample::new(SampleKind::Strong, rtt)
        } else {
            self.retained = Some(ex.timer);
            Sample::new(SampleKind::Ambiguous, rtt)
        }
    }

    /// A failed exchange keeps its last (backed-off) timer.
    fn on_exchange_failed(&mut self, _now: Instant, ex: &Exchange) {
        self.retained = Some(ex.timer);
    }

    fn reset(&mut self) {
        *self = KarnRto::new(self.config);
    }

    fn base_rto(&self) -> Duration {
        self.retained
            .or(self.estimator.rto())
            .unwrap_or(self.config.ack_timeout)
    }

    fn visit_state(&self, visit: &mut StateVisitor<'_>) {
        visit(
            "rto",
            self.estimator
                .rto()
                .unwrap_or(self.config.ack_timeout)
                .into(),
        );
        self.estimator.visit_state(visit);
        visit("retained_timer", self.retained.into());
    }
}
