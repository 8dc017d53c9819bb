//! Congestion controllers: how `cwnd` and `ssthresh` move (ns-3's `TcpCongestionOps` role).
//! Loss *detection* and the fast-recovery window arithmetic live in [`super::recovery`];
//! BBR ([`super::bbr`]) sets its own window on every ACK, so the New Reno window arithmetic
//! of fast recovery (inflation, deflation) does not apply to it.

use coaplab_cc::{Duration, Instant};

use super::bbr::{AckContext, Bbr};
use super::config::{CongestionKind, TcpConfig};

/// The congestion controller of one connection (enum dispatch).
#[derive(Clone, Debug)]
pub enum Congestion {
    NewReno(NewReno),
    Bbr(Box<Bbr>),
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

impl Congestion {
    pub fn new(cfg: &TcpConfig) -> Self {
        match cfg.congestion {
            CongestionKind::NewReno => Congestion::NewReno(NewReno {
                mss: cfg.mss,
                cwnd: cfg.initial_window_segments * cfg.mss,
                // RFC 5681 §3.1: initial ssthresh arbitrarily high.
                ssthresh: u32::MAX,
                ss_limit: cfg
                    .slow_start_limit_segments
                    .map_or(u32::MAX, |l| l * cfg.mss),
                ca_acked: 0,
            }),
            CongestionKind::Bbr => Congestion::Bbr(Box::new(Bbr::new(
                cfg.mss,
                cfg.initial_window_segments * cfg.mss,
                Instant::ZERO,
                None,
                0,
            ))),
        }
    }

    /// BBR: the connection is established at `now` (`bbr_init`, with the handshake's RTT
    /// sample); `seed` drives the random ProbeBW start phase. Nothing for New Reno.
    pub fn on_established(&mut self, mss: u32, now: Instant, rtt: Option<Duration>, seed: u64) {
        if let Congestion::Bbr(b) = self {
            **b = Bbr::new(mss, b.cwnd, now, rtt, seed);
        }
    }

    pub fn bbr(&self) -> Option<&Bbr> {
        match self {
            Congestion::Bbr(b) => Some(b),
            Congestion::NewReno(_) => None,
        }
    }

    pub fn bbr_mut(&mut self) -> Option<&mut Bbr> {
        match self {
            Congestion::Bbr(b) => Some(b),
            Congestion::NewReno(_) => None,
        }
    }

    /// The initial window after a retransmitted SYN / SYN-ACK (RFC 5681 §3.1).
    pub fn set_initial_window(&mut self, bytes: u32) {
        match self {
            Congestion::Bbr(b) => b.cwnd = bytes,
            Congestion::NewReno(_) => self.set_window(bytes),
        }
    }

    /// Congestion window, bytes.
    pub fn window(&self) -> u32 {
        match self {
            Congestion::NewReno(r) => r.cwnd,
            Congestion::Bbr(b) => b.cwnd,
        }
    }

    pub fn ssthresh(&self) -> u32 {
        match self {
            Congestion::NewReno(r) => r.ssthresh,
            // `TCP_INFINITE_SSTHRESH`: BBR does not use it.
            Congestion::Bbr(_) => u32::MAX,
        }
    }

    /// Sets `cwnd` directly: fast recovery's inflation and deflation (RFC 6582 §3.2), and the
    /// one-segment initial window after a retransmitted SYN (RFC 5681 §3.1). BBR ignores it.
    pub fn set_window(&mut self, bytes: u32) {
        match self {
            Congestion::NewReno(r) => {
                r.cwnd = bytes.max(r.mss);
                r.ca_acked = 0;
            }
            Congestion::Bbr(_) => {}
        }
    }

    /// `acked` bytes of new data were acknowledged outside fast recovery (RFC 5681 §3.1).
    pub fn on_ack(&mut self, acked: u32) {
        match self {
            Congestion::NewReno(r) => {
                if r.cwnd < r.ssthresh {
                    // Slow start: cwnd += min(N, L), not beyond ssthresh (Linux
                    // `tcp_slow_start`; the rest of N counts towards congestion avoidance).
                    let grown = r.cwnd.saturating_add(acked.min(r.ss_limit)).min(r.ssthresh);
                    let used = grown - r.cwnd;
                    r.cwnd = grown;
                    if used < acked && r.cwnd >= r.ssthresh {
                        r.ca_acked += acked - used;
                    }
                } else {
                    r.ca_acked += acked;
                    if r.ca_acked >= r.cwnd {
                        r.ca_acked -= r.cwnd;
                        r.cwnd = r.cwnd.saturating_add(r.mss);
                    }
                }
            }
            // BBR grows its window in `Bbr::on_ack`, which the connection calls.
            Congestion::Bbr(_) => {}
        }
    }

    /// Loss detected with `flight` bytes outstanding: `ssthresh = max(FlightSize/2, 2·SMSS)`
    /// (RFC 5681 eq. 4). Returns the new `ssthresh`.
    pub fn on_loss(&mut self, flight: u32) -> u32 {
        match self {
            Congestion::NewReno(r) => {
                r.ssthresh = (flight / 2).max(2 * r.mss);
                r.ssthresh
            }
            Congestion::Bbr(b) => {
                b.on_enter_recovery();
                u32::MAX
            }
        }
    }

    /// Retransmission timeout (RFC 5681 §3.1): `ssthresh` per eq. 4 unless the timed-out
    /// segment was already resent by the timer (`repeated`), and `cwnd` = loss window 1 SMSS.
    /// BBR also takes the connection's state after the timeout marked everything lost.
    pub fn on_rto(&mut self, flight: u32, repeated: bool, cx: &AckContext) {
        match self {
            Congestion::NewReno(r) => {
                if !repeated {
                    r.ssthresh = (flight / 2).max(2 * r.mss);
                }
                r.cwnd = r.mss;
                r.ca_acked = 0;
            }
            Congestion::Bbr(b) => b.on_rto(cx),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reno() -> Congestion {
        Congestion::new(&TcpConfig::default())
    }

    #[test]
    fn slow_start_growth_per_ack() {
        // Linux (default): every acknowledged byte. (acked, cwnd after) from IW 1024:
        let mut c = reno();
        assert_eq!(c.window(), 1024); // IW 4 × 256
        for (acked, cwnd) in [(512, 1536), (256, 1792), (7, 1799), (2560, 4359)] {
            c.on_ack(acked);
            assert_eq!(c.window(), cwnd, "after acking {acked}");
        }
        // RFC 5681 min(N, SMSS): a delayed ACK for 2 segments adds 256, a CSM's 7 bytes 7.
        let mut r = Congestion::new(&TcpConfig {
            slow_start_limit_segments: Some(1),
            ..TcpConfig::default()
        });
        for (acked, cwnd) in [(512, 1280), (256, 1536), (7, 1543), (512, 1799)] {
            r.on_ack(acked);
            assert_eq!(r.window(), cwnd, "after acking {acked}");
        }
    }

    #[test]
    fn slow_start_stops_at_ssthresh_and_the_rest_counts_for_avoidance() {
        let mut c = reno();
        c.on_loss(3072); // ssthresh 1536
        c.set_window(1024);
        // 1024 + 1024 would be 2048: capped at 1536; the 512 left over count towards
        // congestion avoidance (1536 needed for +256).
        c.on_ack(1024);
        assert_eq!(c.window(), 1536);
        c.on_ack(1024); // 512 + 1024 = 1536 ≥ cwnd → +256
        assert_eq!(c.window(), 1792);
    }

    #[test]
    fn congestion_avoidance_adds_one_mss_per_window_of_acked_bytes() {
        let mut c = reno();
        c.on_loss(4096); // ssthresh = 2048
        c.set_window(2048); // cwnd = ssthresh → congestion avoidance
                            // 2048 bytes must be acknowledged for +256: 3 ACKs of 512 (1536) do nothing, the
                            // 4th (2048) grows cwnd to 2304 and leaves 0 carried over.
        for _ in 0..3 {
            c.on_ack(512);
            assert_eq!(c.window(), 2048);
        }
        c.on_ack(512);
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
            ca_state: super::super::bbr::CaState::Loss,
            lost: 0,
        };
        // FlightSize 3000 → ssthresh = max(1500, 512) = 1500.
        assert_eq!(c.on_loss(3000), 1500);
        // FlightSize 600 → max(300, 512) = 512.
        assert_eq!(c.on_loss(600), 512);
        c.on_rto(8000, false, &cx); // 4000
        assert_eq!((c.ssthresh(), c.window()), (4000, 256));
        c.on_rto(256, true, &cx); // the same segment timed out again: ssthresh kept
        assert_eq!((c.ssthresh(), c.window()), (4000, 256));
    }
}
