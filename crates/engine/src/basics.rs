//! Shared basics every layer uses: the conversions from the
//! configuration's seconds and milliseconds, and the addresses and ports of captures. A leaf:
//! it imports nothing from the engine, so the network layer (`net`), the applications
//! (`world`) and the entry point (`testbed`) all depend on it and never on each other's
//! upper layers.

use coaplab_cc::Duration;

pub(crate) fn secs(s: f64) -> Duration {
    Duration::from_secs_f64(s)
}
pub(crate) fn millis(ms: f64) -> Duration {
    Duration::from_secs_f64(ms / 1000.0)
}

/// The address of client `i` in captures: 10.a.b.c with a.b.c = i + 1.
pub(crate) fn client_addr(i: u32) -> [u8; 4] {
    let n = i + 1;
    [10, (n >> 16) as u8, (n >> 8) as u8, n as u8]
}
/// The server's address in captures (RFC 5737 TEST-NET-1).
pub(crate) const SERVER_ADDR: [u8; 4] = [192, 0, 2, 1];
/// First ephemeral port of a client (IANA dynamic range, RFC 6335 §6).
pub(crate) const CLIENT_PORT: u16 = 49152;
