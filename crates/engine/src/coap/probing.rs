//! PROBING_RATE (RFC 7252 §4.7, §4.8): "an endpoint MUST NOT exceed an average data rate of
//! PROBING_RATE in sending to another endpoint that does not respond" — 1 byte/s by default
//! (§4.8). The client applies it when `coap.probing_rate_bps` is given (docs/algorithms.md
//! "PROBING_RATE"); absent, nothing limits it, as in every scenario before the key existed.
//!
//! What "does not respond" and "average" mean here, as the RFC leaves both open:
//!
//! - The server *responds* while every message the client sent has been answered since: a
//!   response (piggybacked ACK, or a NON response) to any of the client's messages makes it
//!   responsive again. The first message sent to a responsive server opens an *unanswered
//!   period* and is sent at once: it is the probe.
//! - Within an unanswered period that began at `t0`, a further message of `b` bytes may leave
//!   at `t` only if the bytes sent after the probe, this one included, stay within the rate
//!   over the period: `after_probe + b <= rate × (t − t0)`. Otherwise it waits until then.
//!
//! So with NSTART 1 and the RFC's 1 byte/s, a 60-byte request unanswered at `t0` may be sent
//! again at `t0 + 60 s` at the earliest, whatever the retransmission timer says; with
//! NSTART > 1 the second parallel request waits likewise; NON messages without responses are
//! paced at the rate. Bytes are IP bytes (what the link carries). Sans-IO: told `now`.

use std::collections::VecDeque;

use coaplab_cc::{Duration, Instant};

use crate::workload::NextRequest;

/// A client's PROBING_RATE and what waits for it: the limit, the retransmissions and the
/// workload's request it holds back, and the wake-up that lets them go.
#[derive(Clone, Debug)]
pub struct Probing {
    pub(super) limit: ProbingLimit,
    /// Retransmissions due but held back: (exchange, the timer to arm once sent), in order.
    pub(super) deferred: VecDeque<(u32, Duration)>,
    /// The workload's next request, drawn but held back.
    pub(super) held: Option<NextRequest>,
    /// The pending wake-up and its generation (older wake-ups are stale).
    wake_at: Option<Instant>,
    wake_generation: u32,
}

impl Probing {
    pub fn new(rate_bytes_per_s: f64) -> Self {
        Probing {
            limit: ProbingLimit::new(rate_bytes_per_s),
            deferred: VecDeque::new(),
            held: None,
            wake_at: None,
            wake_generation: 0,
        }
    }

    /// A wake-up wanted at `at`: the generation of the timer to arm, or `None` when an earlier
    /// (or the same) wake-up is pending.
    pub fn wake(&mut self, at: Instant) -> Option<u32> {
        if self.wake_at.is_some_and(|w| w <= at) {
            return None;
        }
        self.wake_generation += 1;
        self.wake_at = Some(at);
        Some(self.wake_generation)
    }

    /// The wake-up of `generation` fired: whether it is the pending one (not stale).
    pub fn woken(&mut self, generation: u32) -> bool {
        if generation != self.wake_generation {
            return false;
        }
        self.wake_at = None;
        true
    }
}

/// A client's PROBING_RATE state.
#[derive(Clone, Debug)]
pub struct ProbingLimit {
    /// PROBING_RATE, bytes per second.
    rate: f64,
    /// When the current unanswered period began (its probe was sent); `None` while the
    /// server is responsive.
    since: Option<Instant>,
    /// Bytes sent in the period after its probe.
    after_probe: u64,
}

impl ProbingLimit {
    /// A limit of `rate_bytes_per_s` (> 0).
    pub fn new(rate_bytes_per_s: f64) -> Self {
        ProbingLimit {
            rate: rate_bytes_per_s,
            since: None,
            after_probe: 0,
        }
    }

    /// When a message of `bytes` may leave, if not at `now`: `None` = now.
    pub fn wait(&self, now: Instant, bytes: u32) -> Option<Instant> {
        let t0 = self.since?;
        let needed = (self.after_probe + u64::from(bytes)) as f64 / self.rate;
        let at = t0 + Duration::from_secs_f64(needed);
        (at > now).then_some(at)
    }

    /// A message of `bytes` left at `now` (after [`ProbingLimit::wait`] allowed it).
    pub fn sent(&mut self, now: Instant, bytes: u32) {
        match self.since {
            None => self.since = Some(now),
            Some(_) => self.after_probe += u64::from(bytes),
        }
    }

    /// A response arrived: the server responds; the next message is a probe again.
    pub fn answered(&mut self) {
        self.since = None;
        self.after_probe = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ms: u64) -> Instant {
        Instant::ZERO + Duration::from_millis(ms)
    }

    /// RFC 7252 §4.8's 1 byte/s and 60-byte messages: the probe at 0 goes at once; the next
    /// 60 bytes may leave at 60 / 1 = 60 s, the one after at (60 + 60) / 1 = 120 s. A response
    /// ends the period: the next message is a probe again and goes at once.
    #[test]
    fn one_byte_per_second_after_the_probe() {
        let mut p = ProbingLimit::new(1.0);
        assert_eq!(p.wait(at(0), 60), None);
        p.sent(at(0), 60);
        assert_eq!(p.wait(at(2_000), 60), Some(at(60_000)));
        assert_eq!(p.wait(at(60_000), 60), None);
        p.sent(at(60_000), 60);
        assert_eq!(p.wait(at(61_000), 60), Some(at(120_000)));
        p.answered();
        assert_eq!(p.wait(at(61_000), 60), None);
        p.sent(at(61_000), 60);
        // 50 bytes at 100 B/s: (0 + 50) / 100 = 0.5 s after the new probe.
        let mut q = ProbingLimit::new(100.0);
        q.sent(at(61_000), 60);
        assert_eq!(q.wait(at(61_000), 50), Some(at(61_500)));
    }
}
