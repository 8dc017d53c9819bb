//! CoAP endpoints: over UDP (docs/design.md §3: `client`, `server`, `messages`) and the application
//! layer of CoAP over TCP (docs/design.md §4.1: `over_tcp` for the simulated messages, `signaling` for the
//! RFC 8323 rules on a byte stream; the TCP model itself is `crate::tcp`).

pub mod client;
pub mod lwm2m;
pub mod messages;
pub mod non_traffic;
pub mod notify;
pub mod observe;
pub mod observe_tcp;
pub mod over_tcp;
pub mod probing;
pub mod qblock;
pub mod qblock_wire;
pub mod security;
pub mod server;
pub mod signaling;
