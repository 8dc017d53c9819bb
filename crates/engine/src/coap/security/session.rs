//! A client's DTLS session (sans-IO): it handshakes when asked to send without a session —
//! or after its NAT binding expired, without a Connection ID — sending each flight, resending
//! it when the retransmission timer fires (RFC 6347 §4.2.4: 1 s, doubling, up to 60 s), and
//! failing after [`super::DTLS_MAX_RETRANSMISSIONS`]. And the server's side, [`Responder`],
//! which answers a client's complete flight with its next one (RFC 6347 §4.2.4: a server
//! resends its last flight when the client's flight arrives again).

use coaplab_cc::{Duration, Instant};

use super::handshake::{
    Done, Handshakes, DTLS_INITIAL_TIMER, DTLS_MAX_RETRANSMISSIONS, DTLS_MAX_TIMER,
};

/// What the session asks of its application.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Out {
    /// Send datagram `index` of `count` of flight `flight` (of the resumption handshake when
    /// `resume`), `ip_bytes` long, to the server.
    Send {
        resume: bool,
        flight: u8,
        index: u8,
        count: u8,
        ip_bytes: u32,
    },
    /// Wake the session at `at` with this generation ([`Session::on_timer`]).
    Arm { at: Instant, generation: u32 },
    /// The session is ready: requests may go.
    Established,
    /// The handshake failed: no session.
    Failed,
}

/// A client's handshake counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SessionStats {
    /// Handshakes completed, full and abbreviated.
    pub handshakes: u32,
    /// Of those, after a NAT binding expired (abbreviated / PSK resumption).
    pub resumptions: u32,
    /// Flights the client resent on its timer.
    pub flights_retransmitted: u32,
    /// Handshakes given up after the last retransmission.
    pub failed: u32,
    /// IP bytes of the client's handshake datagrams, retransmissions included.
    pub bytes_sent: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// No session (never had one, or the last handshake failed).
    None,
    Handshaking {
        resume: bool,
        /// The client flight last sent.
        flight: u8,
        retransmissions: u32,
        timer: Duration,
        /// Datagrams received of the server flight awaited.
        received: u64,
    },
    Established,
}

/// A client's DTLS session.
#[derive(Clone, Debug)]
pub struct Session {
    phase: Phase,
    generation: u32,
    /// The last datagram the client sent (the NAT binding's refresh, RFC 4787 REQ-6).
    last_uplink: Option<Instant>,
    /// A session was established once: the next handshake resumes it.
    resumable: bool,
    pub stats: SessionStats,
}

impl Default for Session {
    fn default() -> Self {
        Self::new()
    }
}

impl Session {
    pub fn new() -> Self {
        Session {
            phase: Phase::None,
            generation: 0,
            last_uplink: None,
            resumable: false,
            stats: SessionStats::default(),
        }
    }

    pub fn established(&self) -> bool {
        self.phase == Phase::Established
    }

    pub fn handshaking(&self) -> bool {
        matches!(self.phase, Phase::Handshaking { .. })
    }

    /// Whether sending at `now` needs a handshake first: no session, or — without a
    /// Connection ID (`cid`) — the NAT binding expired (`nat`: the binding's idle timeout),
    /// so the server would see the client at a new address and drop its records. The client
    /// then handshakes again before sending, as Californium's
    /// `DtlsConfig.DTLS_AUTO_HANDSHAKE_TIMEOUT` does ("30 s is a common value to compensate
    /// assumed NAT timeouts"; here the NAT's own timeout), resuming the session when it can.
    pub fn needs_handshake(&self, now: Instant, nat: Option<Duration>, cid: bool) -> bool {
        match self.phase {
            Phase::None => true,
            Phase::Handshaking { .. } => false,
            Phase::Established => {
                !cid && matches!((nat, self.last_uplink), (Some(n), Some(t)) if now.saturating_since(t) > n)
            }
        }
    }

    /// The client sent a datagram (a request): the NAT binding is refreshed.
    pub fn on_uplink(&mut self, now: Instant) {
        self.last_uplink = Some(now);
    }

    /// Starts a handshake: full the first time (or after a failure), else a resumption.
    pub fn start(&mut self, now: Instant, hs: &Handshakes, out: &mut Vec<Out>) {
        let resume = self.resumable;
        self.phase = Phase::Handshaking {
            resume,
            flight: 0,
            retransmissions: 0,
            timer: DTLS_INITIAL_TIMER,
            received: 0,
        };
        self.send_flight(now, hs, out);
    }

    /// Sends the current client flight and arms its timer, or — its final flight — holds
    /// the session.
    fn send_flight(&mut self, now: Instant, hs: &Handshakes, out: &mut Vec<Out>) {
        let Phase::Handshaking {
            resume,
            flight,
            timer,
            ..
        } = self.phase
        else {
            return;
        };
        let h = hs.get(resume);
        let datagrams = &h.flights[flight as usize];
        for (i, &ip_bytes) in datagrams.iter().enumerate() {
            out.push(Out::Send {
                resume,
                flight,
                index: i as u8,
                count: datagrams.len() as u8,
                ip_bytes,
            });
            self.stats.bytes_sent += u64::from(ip_bytes);
        }
        self.last_uplink = Some(now);
        self.generation = self.generation.wrapping_add(1);
        if h.done == Done::Sending(flight) {
            self.complete(resume, out);
        } else {
            out.push(Out::Arm {
                at: now + timer,
                generation: self.generation,
            });
        }
    }

    fn complete(&mut self, resume: bool, out: &mut Vec<Out>) {
        self.phase = Phase::Established;
        self.resumable = true;
        self.stats.handshakes += 1;
        self.stats.resumptions += u32::from(resume);
        out.push(Out::Established);
    }

    /// The retransmission timer of `generation` fired: the flight goes again with the timer
    /// doubled (capped), or, after the last retransmission, the handshake fails.
    pub fn on_timer(&mut self, now: Instant, generation: u32, hs: &Handshakes, out: &mut Vec<Out>) {
        if generation != self.generation {
            return;
        }
        let Phase::Handshaking {
            retransmissions,
            timer,
            ..
        } = &mut self.phase
        else {
            return;
        };
        if *retransmissions >= DTLS_MAX_RETRANSMISSIONS {
            self.phase = Phase::None;
            self.resumable = false;
            self.stats.failed += 1;
            out.push(Out::Failed);
            return;
        }
        *retransmissions += 1;
        *timer = (*timer + *timer).min(DTLS_MAX_TIMER);
        self.stats.flights_retransmitted += 1;
        self.send_flight(now, hs, out);
    }

    /// Datagram `index` of `count` of server flight `flight` arrived: once the flight the
    /// client awaits is complete, the client sends its next flight (timer back at 1 s) or
    /// holds the session. Other flights (duplicates, a resent earlier flight) are ignored.
    pub fn on_datagram(
        &mut self,
        now: Instant,
        (resume, flight, index, count): (bool, u8, u8, u8),
        hs: &Handshakes,
        out: &mut Vec<Out>,
    ) {
        let Phase::Handshaking {
            resume: r,
            flight: sent,
            received,
            ..
        } = &mut self.phase
        else {
            return;
        };
        if *r != resume || flight != *sent + 1 {
            return;
        }
        *received |= 1u64 << index.min(63);
        let all = if count >= 64 {
            u64::MAX
        } else {
            (1u64 << count) - 1
        };
        if *received & all != all {
            return;
        }
        if hs.get(resume).done == Done::Receiving(flight) {
            self.generation = self.generation.wrapping_add(1);
            self.complete(resume, out);
            return;
        }
        self.phase = Phase::Handshaking {
            resume,
            flight: flight + 1,
            retransmissions: 0,
            timer: DTLS_INITIAL_TIMER,
            received: 0,
        };
        self.send_flight(now, hs, out);
    }
}

/// The server's side of every client's handshake: the datagrams of each client's current
/// flight received so far. Stateless between flights, as a DTLS server before its cookie is
/// verified (RFC 6347 §4.2.1).
#[derive(Clone, Debug, Default)]
pub struct Responder {
    /// Per client: (resume, flight, datagrams received).
    partial: Vec<(bool, u8, u64)>,
}

impl Responder {
    /// Datagram `index` of `count` of client flight `flight` from `client` arrived: returns
    /// the server flight to send when the client's flight is complete (and has an answer).
    pub fn on_datagram(
        &mut self,
        client: usize,
        (resume, flight, index, count): (bool, u8, u8, u8),
        hs: &Handshakes,
    ) -> Option<u8> {
        if self.partial.len() <= client {
            self.partial.resize(client + 1, (false, u8::MAX, 0));
        }
        let entry = &mut self.partial[client];
        if entry.0 != resume || entry.1 != flight {
            *entry = (resume, flight, 0);
        }
        entry.2 |= 1u64 << index.min(63);
        let all = if count >= 64 {
            u64::MAX
        } else {
            (1u64 << count) - 1
        };
        if entry.2 & all != all {
            return None;
        }
        entry.2 = 0;
        let next = flight + 1;
        ((next as usize) < hs.get(resume).flights.len()).then_some(next)
    }
}

#[cfg(test)]
mod tests {
    use super::super::sizes::{Suite, Version};
    use super::*;

    fn hs12() -> Handshakes {
        Handshakes::new(Version::V12, Suite::Psk, 1500).unwrap()
    }

    fn sends(out: &[Out]) -> Vec<(u8, u32)> {
        out.iter()
            .filter_map(|o| match o {
                Out::Send {
                    flight, ip_bytes, ..
                } => Some((*flight, *ip_bytes)),
                _ => None,
            })
            .collect()
    }

    /// Plays the server's flight `flight` of the full handshake into the client.
    fn deliver(s: &mut Session, now: Instant, hs: &Handshakes, flight: u8, out: &mut Vec<Out>) {
        let n = hs.full.flights[flight as usize].len() as u8;
        for i in 0..n {
            s.on_datagram(now, (false, flight, i, n), hs, out);
        }
    }

    #[test]
    fn dtls12_psk_handshake_flight_by_flight() {
        // Client flights (IP bytes, sizes.rs's arithmetic): ClientHello 95, ClientHello with
        // cookie 127, ClientKeyExchange + CCS + Finished 138; the server's: 88, 148, 95.
        let hs = hs12();
        let mut s = Session::new();
        let mut out = Vec::new();
        let t0 = Instant::ZERO;
        assert!(s.needs_handshake(t0, None, false));
        s.start(t0, &hs, &mut out);
        assert_eq!(sends(&out), vec![(0, 95)]);
        out.clear();
        deliver(&mut s, t0, &hs, 1, &mut out);
        assert_eq!(sends(&out), vec![(2, 127)]);
        out.clear();
        deliver(&mut s, t0, &hs, 3, &mut out);
        assert_eq!(sends(&out), vec![(4, 138)]);
        assert!(!s.established());
        out.clear();
        deliver(&mut s, t0, &hs, 5, &mut out);
        assert_eq!(out, vec![Out::Established]);
        assert!(s.established());
        // The client sent 95 + 127 + 138 = 360 bytes.
        assert_eq!(s.stats.bytes_sent, 360);
        assert_eq!(s.stats.handshakes, 1);
    }

    #[test]
    fn a_lost_flight_is_resent_at_1_then_2_s_and_fails_after_4_retransmissions() {
        let hs = hs12();
        let mut s = Session::new();
        let mut out = Vec::new();
        s.start(Instant::ZERO, &hs, &mut out);
        // Armed 1 s after the ClientHello (RFC 6347 §4.2.4.1).
        let arm = |out: &[Out]| {
            out.iter()
                .find_map(|o| match o {
                    Out::Arm { at, generation } => Some((*at, *generation)),
                    _ => None,
                })
                .unwrap()
        };
        let (at, g) = arm(&out);
        assert_eq!(at, Instant::from_secs(1));
        out.clear();
        s.on_timer(at, g, &hs, &mut out);
        // Resent at 1 s, the timer doubled: next at 1 + 2 = 3 s.
        assert_eq!(sends(&out), vec![(0, 95)]);
        let (at, g) = arm(&out);
        assert_eq!(at, Instant::from_secs(3));
        // A stale generation does nothing.
        out.clear();
        s.on_timer(at, g - 1, &hs, &mut out);
        assert!(out.is_empty());
        // Then 4 s (at 7 s), 8 s (15 s), 16 s (31 s): 4 retransmissions, then failure.
        let mut at = at;
        let mut g = g;
        for next in [7, 15, 31] {
            out.clear();
            s.on_timer(at, g, &hs, &mut out);
            (at, g) = arm(&out);
            assert_eq!(at, Instant::from_secs(next));
        }
        out.clear();
        s.on_timer(at, g, &hs, &mut out);
        assert_eq!(out, vec![Out::Failed]);
        assert_eq!(s.stats.flights_retransmitted, 4);
        assert_eq!(s.stats.failed, 1);
        assert!(s.needs_handshake(at, None, false));
    }

    #[test]
    fn idle_past_the_nat_timeout_handshakes_again_unless_cid() {
        let hs = hs12();
        let mut s = Session::new();
        let mut out = Vec::new();
        s.start(Instant::ZERO, &hs, &mut out);
        for f in [1, 3, 5] {
            deliver(&mut s, Instant::ZERO, &hs, f, &mut out);
        }
        assert!(s.established());
        s.on_uplink(Instant::from_secs(10));
        let nat = Some(Duration::from_secs(30));
        // 30 s idle: the binding holds; longer: it expired (as the cell drops a downlink
        // packet to a device idle longer than the timeout, net/cellular/cell.rs).
        assert!(!s.needs_handshake(Instant::from_secs(40), nat, false));
        assert!(s.needs_handshake(Instant::from_secs(41), nat, false));
        // With a Connection ID the session survives the rebinding.
        assert!(!s.needs_handshake(Instant::from_secs(400), nat, true));
        // No NAT: never.
        assert!(!s.needs_handshake(Instant::from_secs(400), None, false));
        // The second handshake is the abbreviated one: ClientHello with the session ID
        // (IP 127), the server's ServerHello + CCS + Finished (190), then the client's CCS +
        // Finished (95), after which the session holds (RFC 5246 §7.3).
        out.clear();
        s.start(Instant::from_secs(40), &hs, &mut out);
        assert_eq!(sends(&out), vec![(0, 127)]);
        out.clear();
        s.on_datagram(Instant::from_secs(41), (true, 1, 0, 1), &hs, &mut out);
        assert_eq!(sends(&out), vec![(2, 95)]);
        assert!(out.contains(&Out::Established));
        assert_eq!((s.stats.handshakes, s.stats.resumptions), (2, 1));
    }

    #[test]
    fn the_responder_answers_a_complete_flight() {
        // DTLS 1.2 certificates at MTU 296 (room 268 bytes): the client's flight 5 is
        // Certificate 406 + 25, ClientKeyExchange 66 + 25, CertificateVerify 76 + 25, CCS 14,
        // Finished 53. The certificate is split 243 + 163 (268, then 188 with its headers);
        // ClientKeyExchange's 91 does not fit 268 − 188, so it opens the third datagram with
        // the rest: 91 + 101 + 14 + 53 = 259. Three datagrams.
        let hs = Handshakes::new(Version::V12, Suite::Cert, 296).unwrap();
        assert_eq!(hs.full.flights[4].len(), 3);
        let mut r = Responder::default();
        assert_eq!(r.on_datagram(0, (false, 4, 0, 3), &hs), None);
        assert_eq!(r.on_datagram(0, (false, 4, 2, 3), &hs), None);
        assert_eq!(r.on_datagram(0, (false, 4, 1, 3), &hs), Some(5));
        // Resent whole: answered again.
        for i in 0..2 {
            assert_eq!(r.on_datagram(0, (false, 4, i, 3), &hs), None);
        }
        assert_eq!(r.on_datagram(0, (false, 4, 2, 3), &hs), Some(5));
        // The last flight has no answer.
        assert_eq!(r.on_datagram(1, (true, 2, 0, 1), &hs), None);
    }
}
