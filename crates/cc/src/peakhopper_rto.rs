//! `peakhopper-rto` (SPEC §3.1): the Peak-Hopper RTO (Ruuska, Kuusela et al.) on strong
//! samples only.
//!
//! Californium's implementation differs in two places that SPEC.md settles: it never records
//! the first sample as `R_prev` (so the second update sees `R_prev = 0`), and it computes
//! `δ` with integer division. Here `R_prev` is always the previous sample and `δ` is real.

use crate::backoff;
use crate::config::Config;
use crate::estimator::PeakHopper;
use crate::exchange::{Exchange, Sample, StateVisitor, Value};
use crate::rng::Rng;
use crate::time::{Duration, Instant};

#[derive(Clone, Debug)]
pub struct PeakHopperRto {
    pub(crate) config: Config,
    estimator: PeakHopper,
    /// Backed-off timer kept for new exchanges until the next strong sample.
    retained: Option<Duration>,
}

impl PeakHopperRto {
    pub fn new(config: Config) -> Self {
        PeakHopperRto {
            config,
            estimator: PeakHopper::default(),
            retained: None,
        }
    }

    /// `T_0` = retained backed-off value, else the RTO, else 2 s; no dithering; cap 60 s.
    pub fn on_exchange_start(&mut self, now: Instant, _rng: &mut dyn Rng) -> Exchange {
        Exchange::new(now, self.base_rto().min(self.config.max_timer))
    }

    pub fn next_timer(&self, ex: &Exchange) -> Duration {
        backoff::binary(ex.timer, self.config.max_timer)
    }

    /// Strong samples only (`k = 0`); after `k ≥ 1` the backed-off `T_k` is kept.
    pub fn on_response(&mut self, now: Instant, ex: &Exchange) -> Sample {
        let estimator = &mut self.estimator;
        backoff::karn_response(now, ex, &mut self.retained, |rtt| estimator.on_sample(rtt))
    }

    pub fn on_exchange_failed(&mut self, _now: Instant, ex: &Exchange) {
        self.retained = Some(ex.timer);
    }

    pub fn reset(&mut self) {
        *self = PeakHopperRto::new(self.config);
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
        visit("b", Value::Float(self.estimator.b()));
        visit("previous_sample", self.estimator.previous_sample().into());
        visit("retained_timer", self.retained.into());
    }
}
