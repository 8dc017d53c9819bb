//! `coap.security`'s state on the UDP application (docs/model.md "Security"): each group's
//! protection and handshakes, each client's DTLS session and the requests waiting for it, the
//! counters. A leaf of `world/`: the application (`udp_app`) holds it, `udp_security` plays
//! the sessions.

use coaplab_cc::{Duration, Instant};

use crate::coap::security::{Handshakes, Protection, Responder, Session, Suite, Version};
use crate::config::{defaults, DtlsSuite, GroupConfig, RunConfig, Security, Transport};
use crate::error::Error;

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
    pub(super) groups: Vec<GroupSecurity>,
    /// Per local client: its group's index in `groups`.
    pub(super) group: Vec<u16>,
    pub(super) sessions: Vec<Session>,
    /// Per client: the requests waiting for its handshake, each with when it was wished.
    pub(super) deferred: Vec<Vec<(Deferred, Instant)>>,
    /// Per client: its first request's wish and when it went (after the handshake).
    pub(super) first_wanted: Vec<Option<Instant>>,
    pub(super) first_released: Vec<Option<Instant>>,
    pub responder: Responder,
    /// IP bytes of the server's handshake datagrams.
    pub server_bytes: u64,
    /// Bytes the record layer or OSCORE added to the CoAP messages sent.
    pub record_bytes: u64,
    /// Requests dropped because their client's handshake failed.
    pub requests_lost: u64,
    /// Requests that waited for a handshake, and their waits summed, s.
    pub requests_waited: u64,
    pub wait_sum_s: f64,
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

    pub(super) fn of(&self, c: u32) -> &GroupSecurity {
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
