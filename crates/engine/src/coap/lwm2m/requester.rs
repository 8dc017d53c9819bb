//! The LwM2M Server's requests to its devices (docs/model.md "LwM2M devices"): reads (CON GET,
//! downlink) held at the server while a queue-mode device sleeps and sent when it is known to
//! listen (OMA-TS-LightweightM2M_Transport-V1_1 §6.5), one at a time per device (RFC 7252 §4.7,
//! NSTART 1), retransmitted per RFC 7252 §4.2 with the default transmission parameters.
//! Sans-IO: told `now` and events, it answers with [`ReqOut`]s; the random factor is drawn from
//! the `Rng` it is given.

use std::collections::VecDeque;

use coaplab_cc::rng::Rng;
use coaplab_cc::{Duration, Instant};

/// RFC 7252 §4.8: ACK_TIMEOUT 2 s.
pub const ACK_TIMEOUT: Duration = Duration::from_secs(2);
/// RFC 7252 §4.8: ACK_TIMEOUT · ACK_RANDOM_FACTOR = 2 · 1.5 = 3 s, the initial timeout's top.
pub const ACK_TIMEOUT_MAX: Duration = Duration::from_secs(3);
/// RFC 7252 §4.8: MAX_RETRANSMIT 4.
pub const MAX_RETRANSMIT: u32 = 4;

/// What the requester asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReqOut {
    /// Put copy `ordinal` (0 = original) of the read with message id `mid` to `device` on the
    /// downlink.
    Send { device: u32, mid: u16, ordinal: u32 },
    /// Call [`Requester::on_timer`] for `device` with `generation` at `at`.
    Arm {
        device: u32,
        at: Instant,
        generation: u32,
    },
}

#[derive(Clone, Copy, Debug)]
struct Outstanding {
    enqueued: Instant,
    mid: u16,
    retransmissions: u32,
    timeout: Duration,
}

/// One device as the server sees it.
#[derive(Clone, Debug, Default)]
pub struct Peer {
    /// Queue mode: how long the device listens after an uplink (`None`: always).
    window: Option<Duration>,
    /// The server has heard from the device (it knows where to send).
    known: bool,
    /// Queue mode: the device listens until then.
    awake_until: Option<Instant>,
    /// When each waiting read was enqueued.
    pending: VecDeque<Instant>,
    outstanding: Option<Outstanding>,
    generation: u32,
    /// Enqueue → response, s, of every answered read.
    pub read_wait_s: Vec<f64>,
    pub reads_failed: u64,
}

/// The server's requester, one [`Peer`] per device.
#[derive(Default)]
pub struct Requester {
    pub peers: Vec<Peer>,
    next_mid: u16,
}

impl Requester {
    /// Adds a device (its index is the returned one); `window` as [`Peer`]'s.
    pub fn add(&mut self, window: Option<Duration>) -> u32 {
        self.peers.push(Peer {
            window,
            ..Peer::default()
        });
        (self.peers.len() - 1) as u32
    }

    /// Whether the server believes `device` listens at `now`.
    pub fn listening(&self, device: u32, now: Instant) -> bool {
        let p = &self.peers[device as usize];
        p.known
            && p.window
                .is_none_or(|_| p.awake_until.is_some_and(|t| now < t))
    }

    /// The application asks for a read of `device` at `now`.
    pub fn enqueue(&mut self, now: Instant, device: u32, rng: &mut dyn Rng, out: &mut Vec<ReqOut>) {
        self.peers[device as usize].pending.push_back(now);
        self.poll(now, device, rng, out);
    }

    /// A message from `device` reached the server at `now`: it listens for its window.
    pub fn on_uplink(
        &mut self,
        now: Instant,
        device: u32,
        rng: &mut dyn Rng,
        out: &mut Vec<ReqOut>,
    ) {
        let p = &mut self.peers[device as usize];
        p.known = true;
        p.awake_until = p.window.map(|w| now + w);
        self.poll(now, device, rng, out);
    }

    /// The next waiting read goes if none is outstanding and the device listens.
    fn poll(&mut self, now: Instant, device: u32, rng: &mut dyn Rng, out: &mut Vec<ReqOut>) {
        if !self.listening(device, now) {
            return;
        }
        let p = &mut self.peers[device as usize];
        if p.outstanding.is_some() {
            return;
        }
        let Some(enqueued) = p.pending.pop_front() else {
            return;
        };
        // RFC 7252 §4.2: the initial timeout is random in [ACK_TIMEOUT, ACK_TIMEOUT · 1.5].
        let timeout = rng.uniform(ACK_TIMEOUT, ACK_TIMEOUT_MAX);
        let mid = self.next_mid;
        self.next_mid = self.next_mid.wrapping_add(1);
        p.outstanding = Some(Outstanding {
            enqueued,
            mid,
            retransmissions: 0,
            timeout,
        });
        p.generation += 1;
        out.push(ReqOut::Send {
            device,
            mid,
            ordinal: 0,
        });
        out.push(ReqOut::Arm {
            device,
            at: now + timeout,
            generation: p.generation,
        });
    }

    /// A timer armed for `device` fires.
    pub fn on_timer(
        &mut self,
        now: Instant,
        device: u32,
        generation: u32,
        rng: &mut dyn Rng,
        out: &mut Vec<ReqOut>,
    ) {
        let p = &mut self.peers[device as usize];
        if p.generation != generation {
            return; // answered since
        }
        let Some(o) = p.outstanding.as_mut() else {
            return;
        };
        if o.retransmissions < MAX_RETRANSMIT {
            // RFC 7252 §4.2: retransmit, the timeout doubled.
            o.retransmissions += 1;
            o.timeout = o.timeout + o.timeout;
            p.generation += 1;
            out.push(ReqOut::Send {
                device,
                mid: o.mid,
                ordinal: o.retransmissions,
            });
            out.push(ReqOut::Arm {
                device,
                at: now + o.timeout,
                generation: p.generation,
            });
            return;
        }
        p.outstanding = None;
        p.reads_failed += 1;
        self.poll(now, device, rng, out);
    }

    /// The piggybacked response to read `mid` from `device` reached the server at `now`.
    pub fn on_response(
        &mut self,
        now: Instant,
        device: u32,
        mid: u16,
        rng: &mut dyn Rng,
        out: &mut Vec<ReqOut>,
    ) {
        let p = &mut self.peers[device as usize];
        let Some(o) = p.outstanding.filter(|o| o.mid == mid) else {
            return; // a duplicate answer
        };
        p.read_wait_s.push((now - o.enqueued).secs_f64());
        p.outstanding = None;
        p.generation += 1; // cancels the timer
        self.poll(now, device, rng, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use coaplab_cc::rng::LowerBound;

    const S: u64 = 1_000_000_000;

    /// The top of every range: `(u64::MAX · (n + 1)) >> 64 = n` for a span of `n` ns.
    struct Top;
    impl Rng for Top {
        fn next_u64(&mut self) -> u64 {
            u64::MAX
        }
    }

    #[test]
    fn a_read_for_a_sleeping_device_waits_for_its_next_uplink() {
        let mut r = Requester::default();
        let dev = r.add(Some(Duration::from_secs(93)));
        let mut out = Vec::new();
        // Enqueued at 5 s: the server has never heard from the device: held.
        r.enqueue(Instant::from_secs(5), dev, &mut LowerBound, &mut out);
        assert!(out.is_empty());
        // The device's uplink reaches the server at 100 s: the read goes at once, its timer
        // ACK_TIMEOUT (2 s, the random factor's bottom) later.
        r.on_uplink(Instant::from_secs(100), dev, &mut LowerBound, &mut out);
        assert_eq!(
            out,
            vec![
                ReqOut::Send {
                    device: dev,
                    mid: 0,
                    ordinal: 0
                },
                ReqOut::Arm {
                    device: dev,
                    at: Instant::from_secs(102),
                    generation: 1
                },
            ]
        );
        // Answered at 101 s: waited 101 − 5 = 96 s.
        out.clear();
        r.on_response(Instant::from_secs(101), dev, 0, &mut LowerBound, &mut out);
        assert_eq!(r.peers[0].read_wait_s, vec![96.0]);
        // The stale timer does nothing.
        r.on_timer(Instant::from_secs(102), dev, 1, &mut LowerBound, &mut out);
        assert!(out.is_empty());
        // 93 s after the uplink (193 s) the window has closed: a new read is held.
        r.enqueue(Instant::from_secs(193), dev, &mut LowerBound, &mut out);
        assert!(out.is_empty());
    }

    #[test]
    fn retransmissions_double_from_the_random_initial_timeout_then_fail() {
        for (rng, t0) in [(&mut LowerBound as &mut dyn Rng, 2 * S), (&mut Top, 3 * S)] {
            // Without queue mode the device listens once the server has heard from it.
            let mut r = Requester::default();
            let dev = r.add(None);
            let mut out = Vec::new();
            r.on_uplink(Instant::ZERO, dev, rng, &mut out);
            r.enqueue(Instant::ZERO, dev, rng, &mut out);
            // RFC 7252 §4.2: T0 ∈ [2, 3] s, then 2·T0, 4·T0, 8·T0, 16·T0: copies at 0, T0,
            // 3·T0, 7·T0, 15·T0; the read fails at 31·T0 (4 retransmissions, MAX_RETRANSMIT).
            let mut sends = Vec::new();
            let mut now = Instant::ZERO;
            loop {
                let mut next = None;
                for o in out.drain(..) {
                    match o {
                        ReqOut::Send { ordinal, .. } => sends.push((now.nanos(), ordinal)),
                        ReqOut::Arm { at, generation, .. } => next = Some((at, generation)),
                    }
                }
                let Some((at, generation)) = next else { break };
                now = at;
                r.on_timer(now, dev, generation, rng, &mut out);
            }
            let want: Vec<(u64, u32)> = [0, 1, 3, 7, 15]
                .iter()
                .zip(0..)
                .map(|(k, o)| (k * t0, o))
                .collect();
            assert_eq!(sends, want);
            assert_eq!(now.nanos(), 31 * t0);
            assert_eq!(r.peers[0].reads_failed, 1);
        }
    }
}
