//! Security of CoAP over UDP (docs/model.md "Security"): the bytes DTLS 1.2, DTLS 1.3 and
//! OSCORE add to every message (`sizes`), and the DTLS session of each client with its
//! handshake's flights, retransmission timer and NAT-driven renewal (`session`). Sans-IO: the
//! session takes `now` and events and returns datagrams to send and timers to arm; the UDP
//! application (`world/udp_security.rs`) puts them on the network.
//!
//! OSCORE uses a pre-shared security context: no handshake (EDHOC, RFC 9528, which would
//! establish one, is not modelled).

pub mod handshake;
pub mod session;
pub mod sizes;

pub use handshake::{
    Done, Handshake, Handshakes, DTLS_INITIAL_TIMER, DTLS_MAX_RETRANSMISSIONS, DTLS_MAX_TIMER,
};
pub use session::{Out, Responder, Session, SessionStats};
pub use sizes::{Protection, Suite, Version};
