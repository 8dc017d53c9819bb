//! CoAP-over-UDP endpoints (SPEC §3).

pub mod client;
pub mod messages;
pub mod server;
