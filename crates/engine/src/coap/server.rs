//! The CoAP server (docs/design.md §3): answers every CON request at once with a piggybacked ACK 2.05.
//! A duplicate CON (same MID from the same client within EXCHANGE_LIFETIME) gets the cached
//! response again (RFC 7252 §4.5), not a new one.
//!
//! The duplicate table is keyed by `(client, MID)` with FxHash (`rustc-hash`; the keys are the
//! simulator's own, so no hash-flooding defence is needed) and is bounded: an entry is purged
//! once it is EXCHANGE_LIFETIME old. A lookup of such an entry would already answer "new" and
//! overwrite it, so purging changes no answer; the table holds at most the requests of the last
//! EXCHANGE_LIFETIME instead of one entry per `(client, MID)` ever seen.

use std::collections::hash_map::Entry;
use std::collections::VecDeque;

use coaplab_cc::{Duration, Instant};
use rustc_hash::FxHashMap;

/// `EXCHANGE_LIFETIME`, RFC 7252 §4.8.2: 247 s with the default transmission parameters.
pub const EXCHANGE_LIFETIME: Duration = Duration::from_secs(247);

#[derive(Default)]
pub struct Server {
    /// `(client << 16) | MID` → when the first copy arrived.
    seen: FxHashMap<u64, Instant>,
    /// The entries of `seen` in arrival order (arrival times never decrease), for purging.
    arrivals: VecDeque<(Instant, u64)>,
    pub requests: u64,
    pub duplicates: u64,
}

impl Server {
    /// A request from `client` with `mid` arrived at `now` (`now` never decreases from one
    /// call to the next). Returns `true` if it is a duplicate (answered from the cache: the
    /// same response is sent again).
    pub fn on_request(&mut self, now: Instant, client: u32, mid: u16) -> bool {
        self.requests += 1;
        self.purge(now);
        let key = (u64::from(client) << 16) | u64::from(mid);
        match self.seen.entry(key) {
            Entry::Occupied(first) if now.saturating_since(*first.get()) < EXCHANGE_LIFETIME => {
                self.duplicates += 1;
                true
            }
            Entry::Occupied(mut first) => {
                // Unreachable after `purge` with non-decreasing `now`; kept for the semantics.
                first.insert(now);
                self.arrivals.push_back((now, key));
                false
            }
            Entry::Vacant(slot) => {
                slot.insert(now);
                self.arrivals.push_back((now, key));
                false
            }
        }
    }

    /// Drops the entries that are EXCHANGE_LIFETIME old at `now`.
    fn purge(&mut self, now: Instant) {
        while let Some(&(first, key)) = self.arrivals.front() {
            if now.saturating_since(first) < EXCHANGE_LIFETIME {
                break;
            }
            self.arrivals.pop_front();
            if self.seen.get(&key) == Some(&first) {
                self.seen.remove(&key);
            }
        }
    }

    /// Entries in the duplicate table.
    pub fn table_len(&self) -> usize {
        self.seen.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashMap;

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

    #[test]
    fn one_nanosecond_before_the_lifetime_is_still_a_duplicate() {
        let mut s = Server::default();
        assert!(!s.on_request(Instant::from_secs(10), 0, 1));
        let just_before = Instant::from_nanos(10_000_000_000 + 247_000_000_000 - 1);
        assert!(s.on_request(just_before, 0, 1));
        assert!(
            !s.on_request(Instant::from_secs(257), 0, 1),
            "10 s + 247 s: new"
        );
        assert!(
            s.on_request(Instant::from_secs(258), 0, 1),
            "the copy of 257 s"
        );
    }

    #[test]
    fn table_is_bounded_by_the_lifetime() {
        // One new MID per second for 1000 s: at any time only the last 247 s are kept, i.e.
        // after the request at t (t ≥ 247) the entries of t − 246 … t, 247 of them.
        let mut s = Server::default();
        for t in 0..1000u64 {
            assert!(!s.on_request(Instant::from_secs(t), 3, t as u16));
            assert_eq!(s.table_len(), (t + 1).min(247) as usize, "at {t} s");
        }
        assert_eq!(s.arrivals.len(), 247);
    }

    /// The reference: the unbounded table this one replaced (never purged).
    fn reference(now: Instant, seen: &mut HashMap<(u32, u16), Instant>, c: u32, m: u16) -> bool {
        match seen.get(&(c, m)) {
            Some(&first) if now.saturating_since(first) < EXCHANGE_LIFETIME => true,
            _ => {
                seen.insert((c, m), now);
                false
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        /// Purging answers exactly as the unbounded table: random request streams with few
        /// clients and MIDs (so MIDs repeat within and beyond the lifetime) and steps of
        /// 0 ns to 300 s.
        #[test]
        fn purge_changes_no_answer(reqs in prop::collection::vec(
            (prop_oneof![Just(0u64), 0u64..5_000_000_000, 0u64..300_000_000_000, Just(247_000_000_000)],
             0u32..3, 0u16..4), 0..300)) {
            let mut s = Server::default();
            let mut seen = HashMap::new();
            let mut now = Instant::ZERO;
            for (step, client, mid) in reqs {
                now += Duration::from_nanos(step);
                prop_assert_eq!(s.on_request(now, client, mid), reference(now, &mut seen, client, mid));
                prop_assert!(s.table_len() <= seen.len());
            }
        }
    }
}
