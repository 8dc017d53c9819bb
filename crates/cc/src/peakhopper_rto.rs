//! `peakhopper-rto` (docs/design.md §3.1): the Peak-Hopper RTO (Ruuska, Kuusela et al.;
//! [`PeakHopper`]) on strong samples only, inside the shared Karn-rule shell ([`KarnRto`]).
//!
//! Californium's implementation differs in two places that docs/design.md settles: it never records
//! the first sample as `R_prev` (so the second update sees `R_prev = 0`), and it computes
//! `δ` with integer division. Here `R_prev` is always the previous sample and `δ` is real.

use crate::estimator::PeakHopper;
use crate::exchange::{StateVisitor, Value};
use crate::karn_rto::{KarnRto, StrongEstimator};
use crate::time::Duration;

pub type PeakHopperRto = KarnRto<PeakHopper>;

impl StrongEstimator for PeakHopper {
    fn on_strong_sample(&mut self, rtt: Duration) {
        self.on_sample(rtt);
    }
    fn rto(&self) -> Option<Duration> {
        PeakHopper::rto(self)
    }
    fn visit_state(&self, visit: &mut StateVisitor<'_>) {
        visit("b", Value::Float(self.b()));
        visit("previous_sample", self.previous_sample().into());
    }
}
