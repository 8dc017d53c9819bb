//! DTLS's handshakes as the session plays them: each flight's datagrams (`sizes`), when the
//! client holds its session, and the retransmission timer's constants.

use coaplab_cc::Duration;

use super::sizes::{self, Suite, Version};

/// DTLS's initial retransmission timer: 1 s (RFC 6347 §4.2.4.1; RFC 9147 §5.8.2).
pub const DTLS_INITIAL_TIMER: Duration = Duration::from_secs(1);
/// The timer's cap: 60 s (RFC 6347 §4.2.4.1: "up to no less than the RFC 6298 maximum of 60
/// seconds"; RFC 9147 §5.8.2).
pub const DTLS_MAX_TIMER: Duration = Duration::from_secs(60);
/// Retransmissions of a flight before the handshake fails: 4, Californium's
/// `DtlsConfig.DEFAULT_MAX_RETRANSMISSIONS` (RFC 6347 §4.2.4 leaves the number to the
/// implementation).
pub const DTLS_MAX_RETRANSMISSIONS: u32 = 4;

/// One DTLS handshake: its flights (client's first, alternating), each the IP sizes of its
/// datagrams, and the step after which the client holds a session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Handshake {
    pub flights: Vec<Vec<u32>>,
    pub done: Done,
}

/// When the client's session is ready.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Done {
    /// On receiving this (server) flight: DTLS 1.2's full handshake, whose client waits for
    /// the server's Finished.
    Receiving(u8),
    /// On sending this (client) flight: its final flight — DTLS 1.2's abbreviated handshake
    /// and DTLS 1.3, whose client sends application data after its Finished (RFC 8446 §2).
    Sending(u8),
}

/// A group's handshakes: the first (full) and the one after a NAT binding expired
/// (`resume`: DTLS 1.2's abbreviated handshake, RFC 5246 §7.3; DTLS 1.3's PSK handshake).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Handshakes {
    pub version: Version,
    pub full: Handshake,
    pub resume: Handshake,
}

impl Handshakes {
    /// The handshakes of `version` with `suite` on a path of `mtu` bytes; `None` when the
    /// MTU cannot carry a record.
    pub fn new(version: Version, suite: Suite, mtu: u32) -> Option<Self> {
        let build = |resume: bool| -> Option<Handshake> {
            let msgs = match version {
                Version::V12 => sizes::dtls12_flights(suite, resume),
                Version::V13 => sizes::dtls13_flights(suite, resume),
            };
            let flights = msgs
                .iter()
                .map(|f| sizes::pack(f, version, mtu))
                .collect::<Option<Vec<_>>>()?;
            let last = flights.len() as u8 - 1;
            let done = match (version, resume) {
                // Full DTLS 1.2: the client's data waits for the server's Finished (flight 6).
                (Version::V12, false) => Done::Receiving(last),
                // Abbreviated DTLS 1.2: the client's CCS + Finished is the last flight.
                (Version::V12, true) => Done::Sending(last),
                // DTLS 1.3: the client's Finished, before the server's ACK.
                (Version::V13, _) => Done::Sending(last - 1),
            };
            Some(Handshake { flights, done })
        };
        Some(Handshakes {
            version,
            full: build(false)?,
            resume: build(true)?,
        })
    }

    pub fn get(&self, resume: bool) -> &Handshake {
        if resume {
            &self.resume
        } else {
            &self.full
        }
    }
}
