//! `coap.security` on the UDP application (docs/model.md "Security"): the thin wiring of the
//! sans-IO core `crate::coap::security`. A DTLS client's new request waits for its session —
//! the first handshake, or a new one after its NAT binding expired — and the handshake's
//! datagrams travel the network as packets (`PacketKind::Handshake`); OSCORE and the record
//! layers only add bytes to each message (`MessageFactory::protection`).

use coaplab_cc::{Duration, Instant};

use super::shared::{Event, Shared, UdpEvent};
use super::udp_app::UdpApp;
use crate::coap::security::{Handshakes, Out, Protection, Responder, Session, Suite, Version};
use crate::config::{defaults, DtlsSuite, GroupConfig, RunConfig, Security, Transport};
use crate::error::Error;
use crate::packet::{NetPacket, Packet, PacketKind};

/// What a client was about to do when its request had to wait for a handshake.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Deferred {
    /// Start its workload.
    Start,
    /// A periodic report.
    Tick,
    /// An exception report of this many bytes.
    Exception(u32),
}

/// A UDP group's security.
#[derive(Clone, Debug)]
pub(crate) struct GroupSecurity {
    pub mode: Security,
    pub suite: Option<DtlsSuite>,
    pub protection: Protection,
    /// DTLS: the handshakes at the path MTU.
    pub handshakes: Option<Handshakes>,
    pub cid: bool,
    /// The network's NAT binding timeout (`network.nat_timeout_s` on cells).
    pub nat: Option<Duration>,
}

impl GroupSecurity {
    /// The group's `coap.security` keys, checked: `dtls_suite` and `dtls_connection_id` need
    /// DTLS.
    pub fn new(
        cfg: &RunConfig,
        g: &GroupConfig,
        label: &dyn Fn(&str) -> String,
    ) -> Result<Self, Error> {
        let c = &g.coap;
        check(g, label)?;
        let suite = c.dtls_suite.unwrap_or(defaults::COAP_DTLS_SUITE);
        let version = match c.security {
            Security::Dtls12 => Some(Version::V12),
            Security::Dtls13 => Some(Version::V13),
            Security::None | Security::Oscore => None,
        };
        let handshakes = match version {
            None => None,
            Some(v) => {
                let s = match suite {
                    DtlsSuite::Psk => Suite::Psk,
                    DtlsSuite::Cert => Suite::Cert,
                };
                Some(Handshakes::new(v, s, cfg.link.mtu).ok_or_else(|| {
                    Error::key(
                        "link.mtu",
                        format!(
                            "{} B cannot carry a DTLS handshake record; raise link.mtu",
                            cfg.link.mtu
                        ),
                    )
                })?)
            }
        };
        let cid = c.dtls_connection_id;
        let protection = match c.security {
            Security::None => Protection::None,
            Security::Dtls12 => Protection::Dtls12 { cid },
            Security::Dtls13 => Protection::Dtls13 { cid },
            Security::Oscore => Protection::Oscore,
        };
        Ok(GroupSecurity {
            mode: c.security,
            suite: version.map(|_| suite),
            protection,
            handshakes,
            cid,
            nat: cfg.network.as_ref().and_then(|n| n.nat_timeout()),
        })
    }
}

/// The `coap.security` keys of a group: refused where they do not apply (one line, exit 2).
/// Over TCP, security is refused (TLS is not modelled).
pub(crate) fn check(g: &GroupConfig, label: &dyn Fn(&str) -> String) -> Result<(), Error> {
    let c = &g.coap;
    if c.transport == Transport::Tcp && c.security != Security::None {
        return Err(Error::key(
            label("coap.security"),
            format!(
                "\"{}\" secures CoAP over UDP only (transport is \"tcp\"; TLS is not modelled); allowed with transport \"tcp\": \"none\"",
                c.security.as_str()
            ),
        ));
    }
    if !c.security.is_dtls() {
        let given = if c.dtls_suite.is_some() {
            Some("coap.dtls_suite")
        } else if c.dtls_connection_id {
            Some("coap.dtls_connection_id")
        } else {
            None
        };
        if let Some(key) = given {
            return Err(Error::key(
                label(key),
                format!(
                    "applies to DTLS only (coap.security is \"{}\"; allowed with \"dtls1.2\" or \"dtls1.3\")",
                    c.security.as_str()
                ),
            ));
        }
    }
    Ok(())
}

/// Every UDP client's security: its group's, its session, what waits for the session.
#[derive(Default)]
pub(crate) struct Secured {
    /// Per UDP group.
    groups: Vec<GroupSecurity>,
    /// Per local client: its group's index in `groups`.
    group: Vec<u16>,
    sessions: Vec<Session>,
    deferred: Vec<Vec<Deferred>>,
    /// Per client: its first request's wish and when it went (after the handshake).
    first_wanted: Vec<Option<Instant>>,
    first_released: Vec<Option<Instant>>,
    pub responder: Responder,
    /// IP bytes of the server's handshake datagrams.
    pub server_bytes: u64,
    /// Bytes the record layer or OSCORE added to the CoAP messages sent.
    pub record_bytes: u64,
    /// Requests dropped because their client's handshake failed.
    pub requests_lost: u64,
}

impl Secured {
    pub fn add_group(&mut self, g: GroupSecurity, clients: usize) {
        let index = self.groups.len() as u16;
        self.groups.push(g);
        self.group.extend(std::iter::repeat_n(index, clients));
        self.sessions
            .extend(std::iter::repeat_with(Session::new).take(clients));
        self.deferred
            .extend(std::iter::repeat_with(Vec::new).take(clients));
        self.first_wanted.extend(std::iter::repeat_n(None, clients));
        self.first_released
            .extend(std::iter::repeat_n(None, clients));
    }

    fn of(&self, c: u32) -> &GroupSecurity {
        &self.groups[self.group[c as usize] as usize]
    }

    /// Whether client `c`'s requests go through a DTLS session.
    pub fn defers(&self, c: u32) -> bool {
        self.of(c).handshakes.is_some()
    }

    /// Client `c` sends a CoAP message with `overhead` security bytes: the NAT binding is
    /// refreshed.
    pub fn on_send(&mut self, now: Instant, c: u32, overhead: u32) {
        self.record_bytes += u64::from(overhead);
        if self.defers(c) {
            self.sessions[c as usize].on_uplink(now);
        }
    }

    /// The groups' security, the sessions, the first requests' waits: for the results.
    pub fn parts(&self) -> (&[GroupSecurity], &[Session], Vec<f64>) {
        let waits = self
            .first_wanted
            .iter()
            .zip(&self.first_released)
            .filter_map(|(w, r)| Some((r.as_ref()?.saturating_since(*w.as_ref()?)).secs_f64()))
            .collect();
        (&self.groups, &self.sessions, waits)
    }
}

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
        self.sec.deferred[ci].push(d);
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
                    for d in std::mem::take(&mut self.sec.deferred[ci]) {
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
