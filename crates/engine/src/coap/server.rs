//! The CoAP server (SPEC §3): answers every CON request at once with a piggybacked ACK 2.05.
//! A duplicate CON (same MID from the same client within EXCHANGE_LIFETIME) gets the cached
//! response again (RFC 7252 §4.5), not a new one.

use std::collections::HashMap;

use coaplab_cc::{Duration, Instant};

/// `EXCHANGE_LIFETIME`, RFC 7252 §4.8.2: 247 s with the default transmission parameters.
pub const EXCHANGE_LIFETIME: Duration = Duration::from_secs(247);

#[derive(Default)]
pub struct Server {
    /// `(client, MID)` → when the first copy arrived.
    seen: HashMap<(u32, u16), Instant>,
    pub requests: u64,
    pub duplicates: u64,
}

impl Server {
    /// A request from `client` with `mid` arrived at `now`. Returns `true` if it is a
    /// duplicate (answered from the cache: the same response is sent again).
    pub fn on_request(&mut self, now: Instant, client: u32, mid: u16) -> bool {
        self.requests += 1;
        match self.seen.get(&(client, mid)) {
            Some(&first) if now.saturating_since(first) < EXCHANGE_LIFETIME => {
                self.duplicates += 1;
                true
            }
            _ => {
                self.seen.insert((client, mid), now);
                false
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicates_within_lifetime_only() {
        let mut s = Server::default();
        assert!(!s.on_request(Instant::from_secs(0), 1, 7));
        assert!(s.on_request(Instant::from_secs(3), 1, 7));
        assert!(
            !s.on_request(Instant::from_secs(3), 2, 7),
            "other client, same MID: new"
        );
        // 247 s after the first copy the MID may be reused: a new request.
        assert!(!s.on_request(Instant::from_secs(247), 1, 7));
        assert_eq!((s.requests, s.duplicates), (4, 1));
    }
}
