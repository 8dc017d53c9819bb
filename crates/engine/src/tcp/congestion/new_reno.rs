//! New Reno's window growth: RFC 5681 §3.1 slow start and congestion avoidance in bytes, with
//! Linux's `tcp_slow_start` (shared with CUBIC). Its fast recovery (RFC 6582 inflation and
//! deflation) is `tcp/recovery.rs`'s, through [`Controller::set_window`].

use std::any::Any;

use coaplab_cc::Instant;

use super::controller::{Ack, AckContext, Controller, ControllerParams};

/// Linux `tcp_slow_start` in bytes: `cwnd += min(acked, limit)`, not beyond `ssthresh`;
/// returns the acknowledged bytes slow start did not use (they count towards congestion
/// avoidance).
pub(crate) fn slow_start(cwnd: &mut u32, ssthresh: u32, acked: u32, limit: u32) -> u32 {
    let grown = cwnd.saturating_add(acked.min(limit)).min(ssthresh);
    let used = grown - *cwnd;
    *cwnd = grown;
    if used < acked && *cwnd >= ssthresh {
        acked - used
    } else {
        0
    }
}

/// RFC 5681 §3.1 slow start and congestion avoidance, windows in bytes.
#[derive(Clone, Debug)]
pub struct NewReno {
    mss: u32,
    cwnd: u32,
    ssthresh: u32,
    /// Slow-start growth limit per ACK, bytes (`min(N, L)`).
    ss_limit: u32,
    /// Congestion avoidance: bytes acknowledged since `cwnd` last grew (RFC 5681 §3.1, the
    /// RECOMMENDED byte counting: +1 SMSS per `cwnd` bytes acknowledged).
    ca_acked: u32,
}

impl NewReno {
    pub fn new(cfg: &ControllerParams) -> Self {
        NewReno {
            mss: cfg.mss,
            cwnd: cfg.initial_window_segments * cfg.mss,
            // RFC 5681 §3.1: initial ssthresh arbitrarily high.
            ssthresh: u32::MAX,
            ss_limit: cfg
                .slow_start_limit_segments
                .map_or(u32::MAX, |l| l * cfg.mss),
            ca_acked: 0,
        }
    }
}

impl Controller for NewReno {
    fn window(&self) -> u32 {
        self.cwnd
    }
    fn ssthresh(&self) -> u32 {
        self.ssthresh
    }
    fn set_window(&mut self, bytes: u32) {
        self.cwnd = bytes.max(self.mss);
        self.ca_acked = 0;
    }
    /// RFC 5681 §3.1.
    fn on_ack(&mut self, ack: &Ack) {
        let acked = ack.bytes;
        if self.cwnd < self.ssthresh {
            // Slow start: cwnd += min(N, L), not beyond ssthresh (Linux `tcp_slow_start`;
            // the rest of N counts towards congestion avoidance).
            self.ca_acked += slow_start(&mut self.cwnd, self.ssthresh, acked, self.ss_limit);
        } else {
            self.ca_acked += acked;
            if self.ca_acked >= self.cwnd {
                self.ca_acked -= self.cwnd;
                self.cwnd = self.cwnd.saturating_add(self.mss);
            }
        }
    }
    /// `ssthresh = max(FlightSize/2, 2·SMSS)` (RFC 5681 eq. 4).
    fn on_congestion_event(&mut self, _now: Instant, flight: u32) -> u32 {
        self.ssthresh = (flight / 2).max(2 * self.mss);
        self.ssthresh
    }
    /// RFC 5681 §3.1: `ssthresh` per eq. 4 unless the timed-out segment was already resent
    /// by the timer (`repeated`), and `cwnd` = loss window 1 SMSS.
    fn on_rto(&mut self, flight: u32, repeated: bool, _cx: &AckContext) {
        if !repeated {
            self.ssthresh = (flight / 2).max(2 * self.mss);
        }
        self.cwnd = self.mss;
        self.ca_acked = 0;
    }
    fn clone_box(&self) -> Box<dyn Controller> {
        Box::new(self.clone())
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::super::super::seq::Seq;
    use super::*;

    /// The defaults: MSS 256, IW 4, Linux's slow start.
    const PARAMS: ControllerParams = ControllerParams {
        mss: 256,
        initial_window_segments: 4,
        slow_start_limit_segments: None,
    };

    fn reno() -> Box<dyn Controller> {
        Box::new(NewReno::new(&PARAMS))
    }

    fn ack(bytes: u32) -> Ack {
        Ack {
            now: Instant::ZERO,
            bytes,
            rtt: None,
            snd_una: Seq(0),
            snd_nxt: Seq(0),
        }
    }

    #[test]
    fn slow_start_growth_per_ack() {
        // Linux (default): every acknowledged byte. (acked, cwnd after) from IW 1024:
        let mut c = reno();
        assert_eq!(c.window(), 1024); // IW 4 × 256
        for (acked, cwnd) in [(512, 1536), (256, 1792), (7, 1799), (2560, 4359)] {
            c.on_ack(&ack(acked));
            assert_eq!(c.window(), cwnd, "after acking {acked}");
        }
        // RFC 5681 min(N, SMSS): a delayed ACK for 2 segments adds 256, a CSM's 7 bytes 7.
        let mut r = NewReno::new(&ControllerParams {
            slow_start_limit_segments: Some(1),
            ..PARAMS
        });
        for (acked, cwnd) in [(512, 1280), (256, 1536), (7, 1543), (512, 1799)] {
            r.on_ack(&ack(acked));
            assert_eq!(r.window(), cwnd, "after acking {acked}");
        }
    }

    #[test]
    fn slow_start_stops_at_ssthresh_and_the_rest_counts_for_avoidance() {
        let mut c = reno();
        c.on_congestion_event(Instant::ZERO, 3072); // ssthresh 1536
        c.set_window(1024);
        // 1024 + 1024 would be 2048: capped at 1536; the 512 left over count towards
        // congestion avoidance (1536 needed for +256).
        c.on_ack(&ack(1024));
        assert_eq!(c.window(), 1536);
        c.on_ack(&ack(1024)); // 512 + 1024 = 1536 ≥ cwnd → +256
        assert_eq!(c.window(), 1792);
    }

    #[test]
    fn congestion_avoidance_adds_one_mss_per_window_of_acked_bytes() {
        let mut c = reno();
        c.on_congestion_event(Instant::ZERO, 4096); // ssthresh = 2048
        c.set_window(2048); // cwnd = ssthresh → congestion avoidance
                            // 2048 bytes must be acknowledged for +256: 3 ACKs of 512 (1536) do nothing, the
                            // 4th (2048) grows cwnd to 2304 and leaves 0 carried over.
        for _ in 0..3 {
            c.on_ack(&ack(512));
            assert_eq!(c.window(), 2048);
        }
        c.on_ack(&ack(512));
        assert_eq!(c.window(), 2304);
    }

    #[test]
    fn loss_and_rto_follow_rfc5681_eq4() {
        let mut c = reno();
        let cx = AckContext {
            now: Instant::ZERO,
            delivered: 0,
            delivered_at: Instant::ZERO,
            inflight: 0,
            ca_state: super::super::controller::CaState::Loss,
            lost: 0,
        };
        // FlightSize 3000 → ssthresh = max(1500, 512) = 1500.
        assert_eq!(c.on_congestion_event(Instant::ZERO, 3000), 1500);
        // FlightSize 600 → max(300, 512) = 512.
        assert_eq!(c.on_congestion_event(Instant::ZERO, 600), 512);
        c.on_rto(8000, false, &cx); // 4000
        assert_eq!((c.ssthresh(), c.window()), (4000, 256));
        c.on_rto(256, true, &cx); // the same segment timed out again: ssthresh kept
        assert_eq!((c.ssthresh(), c.window()), (4000, 256));
    }
}
