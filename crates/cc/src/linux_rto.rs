//! `linux-rto` (docs/design.md §3.1): Linux's TCP RTO estimator ([`LinuxRtt`]) on strong samples only,
//! inside the shared Karn-rule shell ([`KarnRto`]).

use crate::estimator::LinuxRtt;
use crate::exchange::StateVisitor;
use crate::karn_rto::{KarnRto, StrongEstimator};
use crate::time::Duration;

pub type LinuxRto = KarnRto<LinuxRtt>;

impl StrongEstimator for LinuxRtt {
    /// Each exchange is one flight, so the once-per-flight `rttvar` step is taken every time.
    fn on_strong_sample(&mut self, rtt: Duration) {
        self.on_sample(rtt, true);
    }
    fn rto(&self) -> Option<Duration> {
        LinuxRtt::rto(self)
    }
    fn visit_state(&self, visit: &mut StateVisitor<'_>) {
        visit("srtt", self.srtt().into());
        visit("mdev", self.mdev().into());
        visit("rttvar", self.rttvar().into());
    }
}
