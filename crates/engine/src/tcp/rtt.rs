//! RTT estimation and the retransmission timeout (ns-3's `RttEstimator` role), as Linux
//! computes them (docs/design.md §4.2): the `linux-rto` estimator of the algorithm library, its
//! once-per-flight step taken when an ACK covers data sent after the previous step, Karn's
//! rule (applied by the caller: it only offers samples from never-retransmitted segments),
//! exponential backoff kept until the next valid sample, and a 120 s cap.

use coaplab_cc::estimator::LinuxRtt;
use coaplab_cc::Duration;

use super::seq::Seq;

#[derive(Clone, Debug)]
pub struct RttEstimator {
    linux: LinuxRtt,
    /// Current RTO, backed off after expirations.
    rto: Duration,
    max_rto: Duration,
    /// Linux `rtt_seq`: the next flight step is due once `snd_una` passes it.
    rtt_seq: Seq,
    /// Expirations since the last valid sample (Linux `icsk_backoff`).
    backoffs: u32,
}

impl RttEstimator {
    pub fn new(initial_rto: Duration, max_rto: Duration) -> Self {
        RttEstimator {
            linux: LinuxRtt::default(),
            rto: initial_rto.min(max_rto),
            max_rto,
            rtt_seq: Seq(0),
            backoffs: 0,
        }
    }

    /// The RTO to arm now.
    pub fn rto(&self) -> Duration {
        self.rto
    }

    pub fn backoffs(&self) -> u32 {
        self.backoffs
    }

    pub fn srtt(&self) -> Option<Duration> {
        self.linux.srtt()
    }

    pub fn rttvar(&self) -> Option<Duration> {
        self.linux.rttvar()
    }

    /// A valid sample `rtt` from an ACK that moved `snd_una` (Linux `tcp_rtt_estimator`,
    /// `tcp_set_rto`, and "RFC 6298: only reset backoff on valid RTT measurement").
    pub fn on_sample(&mut self, rtt: Duration, snd_una: Seq, snd_nxt: Seq) {
        let first = self.linux.srtt().is_none();
        // Linux: `after(snd_una, rtt_seq)` ends the flight; the first sample starts one.
        let end_of_flight = !first && snd_una > self.rtt_seq;
        self.linux.on_sample(rtt, end_of_flight);
        if first || end_of_flight {
            self.rtt_seq = snd_nxt;
        }
        self.rto = self.linux.rto().unwrap_or(self.rto).min(self.max_rto);
        self.backoffs = 0;
    }

    /// The retransmission timer expired: double the RTO, at most the cap (RFC 6298 §5.5).
    pub fn on_expiry(&mut self) {
        self.rto = self.rto.mul(2).min(self.max_rto);
        self.backoffs += 1;
    }
}
