//! `coap.security` on the UDP application (docs/model.md "Security"): the thin wiring of the
//! sans-IO core `crate::coap::security`. A DTLS client's new request waits for its session —
//! the first handshake, or a new one after its NAT binding expired — and the handshake's
//! datagrams travel the network as packets (`PacketKind::Handshake`); OSCORE and the record
//! layers only add bytes to each message (`MessageFactory::protection`).

use coaplab_cc::Instant;

use super::secured::Deferred;
use super::shared::{Event, Shared, UdpEvent};
use super::udp_app::UdpApp;
use crate::coap::security::Out;
use crate::packet::{NetPacket, Packet, PacketKind};

impl UdpApp {
    /// Client `c` is about to make a request (`d`): at once, or — a DTLS client without a
    /// usable session — after the handshake it starts (or one under way).
    pub(super) fn gate(&mut self, now: Instant, c: u32, d: Deferred, sh: &mut Shared) {
        let ci = c as usize;
        if !self.sec.defers(c) {
            self.release(now, c, d, sh);
            return;
        }
        self.sec.first_wanted[ci].get_or_insert(now);
        let g = self.sec.of(c);
        let (nat, cid) = (g.nat, g.cid);
        let session = &self.sec.sessions[ci];
        if session.established() && !session.needs_handshake(now, nat, cid) {
            self.release(now, c, d, sh);
            return;
        }
        self.sec.deferred[ci].push((d, now));
        if session.handshaking() {
            return;
        }
        let mut out = Vec::new();
        let hs = self.sec.groups[self.sec.group[ci] as usize]
            .handshakes
            .as_ref()
            .expect("a DTLS group");
        self.sec.sessions[ci].start(now, hs, &mut out);
        self.apply_security(now, c, &out, sh);
    }

    /// Makes the request `d` now.
    fn release(&mut self, now: Instant, c: u32, d: Deferred, sh: &mut Shared) {
        let ci = c as usize;
        if self.sec.defers(c) {
            self.sec.first_released[ci].get_or_insert(now);
        }
        let msgs = &self.groups[self.group_of[ci] as usize].msgs;
        let client = &mut self.clients[ci];
        match d {
            Deferred::Start => client.poll_start(now, msgs, &mut self.actions),
            Deferred::Tick => {
                client.tick(now, None, msgs, &mut self.actions);
            }
            Deferred::Exception(bytes) => {
                client.tick(now, Some(bytes), msgs, &mut self.actions);
            }
        }
        self.apply_actions(now, c, sh);
    }

    pub(super) fn security_timer(
        &mut self,
        now: Instant,
        c: u32,
        generation: u32,
        sh: &mut Shared,
    ) {
        let ci = c as usize;
        let mut out = Vec::new();
        let g = self.sec.group[ci] as usize;
        if let Some(hs) = self.sec.groups[g].handshakes.as_ref() {
            self.sec.sessions[ci].on_timer(now, generation, hs, &mut out);
        }
        self.apply_security(now, c, &out, sh);
    }

    /// A handshake datagram arrived: a client's at the server, which answers a complete
    /// flight with its next one; or the server's at client `c`.
    pub(super) fn on_handshake(
        &mut self,
        now: Instant,
        c: u32,
        dgram: (bool, u8, u8, u8),
        sh: &mut Shared,
    ) {
        let ci = c as usize;
        let g = self.sec.group[ci] as usize;
        let Some(hs) = self.sec.groups[g].handshakes.as_ref() else {
            return;
        };
        let (resume, flight, _, _) = dgram;
        if flight % 2 == 1 {
            let mut out = Vec::new();
            self.sec.sessions[ci].on_datagram(now, dgram, hs, &mut out);
            self.apply_security(now, c, &out, sh);
            return;
        }
        let Some(next) = self.sec.responder.on_datagram(ci, dgram, hs) else {
            return;
        };
        let datagrams = hs.get(resume).flights[next as usize].clone();
        let count = datagrams.len() as u8;
        for (i, ip_bytes) in datagrams.into_iter().enumerate() {
            self.sec.server_bytes += u64::from(ip_bytes);
            let p = handshake_packet(self.clients[ci].id, now, (resume, next, i as u8, count));
            let p = Packet { ip_bytes, ..p };
            let route = self.routes[ci][1];
            // A datagram refused at once is lost like any: the client's timer recovers.
            let _ = sh.net.send(now, NetPacket::udp(p), route, &mut sh.queue);
        }
    }

    /// Carries out what a session asked.
    fn apply_security(&mut self, now: Instant, c: u32, out: &[Out], sh: &mut Shared) {
        let ci = c as usize;
        for o in out {
            match *o {
                Out::Send {
                    resume,
                    flight,
                    index,
                    count,
                    ip_bytes,
                } => {
                    let p =
                        handshake_packet(self.clients[ci].id, now, (resume, flight, index, count));
                    let p = Packet { ip_bytes, ..p };
                    let route = self.routes[ci][0];
                    let _ = sh.net.send(now, NetPacket::udp(p), route, &mut sh.queue);
                }
                Out::Arm { at, generation } => sh.queue.schedule(
                    at,
                    Event::Udp(UdpEvent::SecurityTimer {
                        client: c,
                        generation,
                    }),
                ),
                Out::Established => {
                    for (d, wished) in std::mem::take(&mut self.sec.deferred[ci]) {
                        self.sec.requests_waited += 1;
                        self.sec.wait_sum_s += now.saturating_since(wished).secs_f64();
                        self.release(now, c, d, sh);
                    }
                }
                Out::Failed => {
                    let lost = std::mem::take(&mut self.sec.deferred[ci]);
                    self.sec.requests_lost += lost.len() as u64;
                }
            }
        }
    }
}

/// A handshake datagram of client `client` (global id); its size is set by the caller.
fn handshake_packet(
    client: u32,
    now: Instant,
    (resume, flight, index, count): (bool, u8, u8, u8),
) -> Packet {
    Packet {
        kind: PacketKind::Handshake {
            resume,
            flight,
            index,
            count,
        },
        client,
        exchange: 0,
        ordinal: 0,
        mid: 0,
        block: None,
        payload: 0,
        rexmit_cnt: false,
        more: false,
        ip_bytes: 0,
        request_sent: now,
        non: false,
    }
}
