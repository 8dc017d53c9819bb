//! The eNB's scheduler: the carrier's subframes, booked first come, first served. Each
//! transmission (a DCI, a data block with its repetitions, a HARQ-ACK, a preamble's Msg2…)
//! takes the earliest free span at or after the time it may start; a device that asks later
//! gets a later span, so devices on one carrier delay each other. The downlink is one lane
//! (NB-IoT: one 180 kHz carrier; LTE-M: one 6-PRB narrowband); the uplink is `lanes`
//! subcarrier lanes (NB-IoT: 12 subcarriers of 15 kHz; a single-tone transmission takes one,
//! a multi-tone one takes an aligned group). Each lane's booked subframes are an
//! [`Occupancy`] (a bitmap under a tree of free-run lengths, `occupancy.rs`), whose earliest-fit
//! search costs O(log horizon) however many bookings lie ahead; what ended is forgotten at
//! each prune, so an idle carrier holds nothing.

use super::occupancy::Occupancy;

/// A downlink carrier (one lane, some subframes not usable) and an uplink of `lanes` lanes.
#[derive(Clone, Debug)]
pub struct Carrier {
    dl: Occupancy,
    ul: Vec<Occupancy>,
    /// Per multi-tone group size `k` in use, the union of each aligned group of `k` lanes
    /// (group `g`: lanes `g·k .. (g + 1)·k`), kept beside the lanes so that a group's search
    /// is one search; made on first use.
    groups: Vec<(usize, Vec<Occupancy>)>,
    /// The end of the furthest booking so far (the scheduler's horizon).
    horizon: u64,
}

impl Carrier {
    pub fn new(ul_lanes: u32) -> Carrier {
        Carrier {
            dl: Occupancy::default(),
            ul: vec![Occupancy::default(); ul_lanes.max(1) as usize],
            groups: Vec::new(),
            horizon: 0,
        }
    }

    /// The end of the furthest booking so far, subframes.
    pub fn horizon(&self) -> u64 {
        self.horizon
    }

    /// Books `n` usable downlink subframes at or after `t` (`valid(sf)`: whether subframe `sf`
    /// can carry them; unusable ones in between are skipped, TS 36.211 §10.2.3.4 /
    /// TS 36.213 §16.4.1: NPDSCH is postponed past them): `[start, end)`.
    pub fn book_dl(&mut self, t: u64, n: u64, valid: impl Fn(u64) -> bool) -> (u64, u64) {
        debug_assert!(n >= 1);
        let first_valid = |mut s: u64| {
            while !valid(s) {
                s += 1;
            }
            s
        };
        let end = |s: u64| {
            let (mut sf, mut left) = (s, n);
            while left > 0 {
                if valid(sf) {
                    left -= 1;
                }
                sf += 1;
            }
            sf
        };
        // The earliest usable `s >= t` with `[s, end(s))` free. A span from `s` is at least
        // `n` long, so it starts no earlier than the first free run of `n`; if the span from
        // there (moved to a usable subframe) meets a booking, no start before that booking's
        // end can be free either (every span from an earlier start reaches it), and the
        // search goes on from there.
        let mut s = first_valid(t);
        let (start, stop) = loop {
            let s2 = first_valid(self.dl.first_fit(s, n));
            let e = end(s2);
            match self.dl.last_busy(s2, e) {
                None => break (s2, e),
                Some(b) => s = first_valid(self.dl.run_end(b)),
            }
        };
        self.dl.book(start, stop);
        self.horizon = self.horizon.max(stop);
        (start, stop)
    }

    /// Books `n` uplink subframes on `tones` aligned lanes at or after `t`: `[start, end)`,
    /// on the group whose earliest free start is earliest (the lowest group at a tie).
    pub fn book_ul(&mut self, t: u64, n: u64, tones: u32) -> (u64, u64) {
        debug_assert!(n >= 1);
        let tones = (tones as usize).clamp(1, self.ul.len());
        let groups = self.ul.len() / tones;
        let union = if tones == 1 {
            None
        } else {
            Some(self.group_index(tones))
        };
        let lanes = match union {
            None => &self.ul,
            Some(u) => &self.groups[u].1,
        };
        let mut best: Option<(u64, usize)> = None;
        for (g, lane) in lanes.iter().enumerate().take(groups) {
            let s = lane.first_fit(t, n);
            if best.is_none_or(|(b, _)| s < b) {
                best = Some((s, g));
            }
            if s == t {
                // Nothing starts earlier, and a tie goes to the lowest group.
                break;
            }
        }
        let (start, g) = best.expect("at least one lane");
        let stop = start + n;
        for l in g * tones..(g + 1) * tones {
            self.ul[l].book(start, stop);
        }
        for (k, unions) in &mut self.groups {
            // The groups of size `k` that hold one of the lanes booked.
            for h in (g * tones) / *k..((g + 1) * tones).div_ceil(*k).min(unions.len()) {
                unions[h].book(start, stop);
            }
        }
        self.horizon = self.horizon.max(stop);
        (start, stop)
    }

    /// The index in `groups` of the unions of `k` lanes, made from the lanes on first use.
    fn group_index(&mut self, k: usize) -> usize {
        if let Some(i) = self.groups.iter().position(|(size, _)| *size == k) {
            return i;
        }
        let unions = (0..self.ul.len() / k)
            .map(|h| {
                let mut u = Occupancy::default();
                u.prune(self.ul[0].floor());
                for lane in &self.ul[h * k..(h + 1) * k] {
                    for (w, bits) in lane.words() {
                        u.or_word(w, bits);
                    }
                }
                u
            })
            .collect();
        self.groups.push((k, unions));
        self.groups.len() - 1
    }

    /// Forgets what ended by subframe `t`: later searches ask at `t` or after.
    pub fn prune(&mut self, t: u64) {
        self.dl.prune(t);
        for l in &mut self.ul {
            l.prune(t);
        }
        for (_, unions) in &mut self.groups {
            for u in unions {
                u.prune(t);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two 4-subframe downlink bookings asked for at subframe 1: the first gets 1–5, the
    /// second waits for it: 5–9. With subframes 0, 5, 9 unusable the first takes 1, 2, 3, 4
    /// (end 5), the second 6, 7, 8, 11 (5 and 9, 10 skipped; end 12).
    #[test]
    fn downlink_bookings_queue_and_skip_unusable_subframes() {
        let mut c = Carrier::new(12);
        assert_eq!(c.book_dl(1, 4, |_| true), (1, 5));
        assert_eq!(c.book_dl(1, 4, |_| true), (5, 9));
        let mut c = Carrier::new(12);
        let v = |s: u64| !matches!(s % 20, 0 | 5 | 9 | 10 | 15);
        assert_eq!(c.book_dl(1, 4, v), (1, 5));
        assert_eq!(c.book_dl(1, 4, v), (6, 12));
    }

    /// Single-tone bookings share the 12 lanes: 12 of them at subframe 0 all start at 0; the
    /// 13th waits until 8. A 12-tone booking then waits for every lane: 8 + 8 = 16.
    #[test]
    fn uplink_lanes_are_shared_by_tones() {
        let mut c = Carrier::new(12);
        for _ in 0..12 {
            assert_eq!(c.book_ul(0, 8, 1), (0, 8));
        }
        assert_eq!(c.book_ul(0, 8, 1), (8, 16));
        assert_eq!(c.book_ul(0, 1, 12), (16, 17));
        c.prune(16);
        // After the prune lane 0 holds only the 12-tone booking, 16–17.
        assert_eq!(c.ul[0].words().collect::<Vec<_>>(), vec![(0, 1 << 16)]);
    }

    /// The scheduler as it was before `Occupancy` (an ordered map of booked spans searched
    /// span by span), kept as the reference the new search must agree with.
    mod reference {
        use std::collections::BTreeMap;

        #[derive(Clone, Debug, Default)]
        pub struct Lane {
            spans: BTreeMap<u64, u64>,
        }

        impl Lane {
            fn first_free(
                &self,
                mut t: u64,
                end: impl Fn(u64) -> u64,
                next: impl Fn(u64) -> u64,
            ) -> u64 {
                loop {
                    let e = end(t);
                    match self.spans.range(..e).next_back() {
                        Some((_, &busy_end)) if busy_end > t => t = next(busy_end),
                        _ => return t,
                    }
                }
            }

            fn prune(&mut self, t: u64) {
                while let Some((&s, &e)) = self.spans.first_key_value() {
                    if e > t {
                        break;
                    }
                    self.spans.remove(&s);
                }
            }
        }

        pub struct Carrier {
            dl: Lane,
            ul: Vec<Lane>,
        }

        impl Carrier {
            pub fn new(ul_lanes: u32) -> Carrier {
                Carrier {
                    dl: Lane::default(),
                    ul: vec![Lane::default(); ul_lanes as usize],
                }
            }

            pub fn book_dl(&mut self, t: u64, n: u64, valid: impl Fn(u64) -> bool) -> (u64, u64) {
                let first_valid = |mut s: u64| {
                    while !valid(s) {
                        s += 1;
                    }
                    s
                };
                let end = |s: u64| {
                    let (mut sf, mut left) = (s, n);
                    while left > 0 {
                        if valid(sf) {
                            left -= 1;
                        }
                        sf += 1;
                    }
                    sf
                };
                let start = self.dl.first_free(first_valid(t), end, first_valid);
                let stop = end(start);
                self.dl.spans.insert(start, stop);
                (start, stop)
            }

            pub fn book_ul(&mut self, t: u64, n: u64, tones: u32) -> (u64, u64) {
                let tones = (tones as usize).clamp(1, self.ul.len());
                let groups = self.ul.len() / tones;
                let mut best: Option<(u64, usize)> = None;
                for g in 0..groups {
                    let lanes = &self.ul[g * tones..(g + 1) * tones];
                    let mut s = t;
                    loop {
                        let s2 = lanes
                            .iter()
                            .map(|l| l.first_free(s, |x| x + n, |x| x))
                            .max()
                            .unwrap_or(s);
                        if s2 == s {
                            break;
                        }
                        s = s2;
                    }
                    if best.is_none_or(|(b, _)| s < b) {
                        best = Some((s, g));
                    }
                }
                let (start, g) = best.expect("at least one lane");
                for l in &mut self.ul[g * tones..(g + 1) * tones] {
                    l.spans.insert(start, start + n);
                }
                (start, start + n)
            }

            pub fn prune(&mut self, t: u64) {
                self.dl.prune(t);
                for l in &mut self.ul {
                    l.prune(t);
                }
            }
        }
    }

    /// One step of a random booking sequence: time moves on by `advance` subframes (and the
    /// carrier is pruned at the new time − 1, as `cell.rs` does), then a downlink booking of
    /// `n` at the time + `delay`, or an uplink one on `tones`.
    #[derive(Clone, Debug)]
    enum Step {
        Dl {
            advance: u64,
            delay: u64,
            n: u64,
        },
        Ul {
            advance: u64,
            delay: u64,
            n: u64,
            tones: u32,
        },
    }

    fn step() -> impl proptest::strategy::Strategy<Value = Step> {
        use proptest::prelude::*;
        // Lengths as the procedures book them (1 to 64 DCI subframes, NPDSCH / NPUSCH up to
        // a few hundred, HARQ-ACKs of 2 × 64) and delays up to a level-2 exchange ahead, so
        // that bookings pile up into a backlog of many spans, fragmented and merged.
        prop_oneof![
            (0u64..40, 0u64..3000, 1u64..300).prop_map(|(advance, delay, n)| Step::Dl {
                advance,
                delay,
                n
            }),
            (
                0u64..40,
                0u64..3000,
                1u64..300,
                prop::sample::select(vec![1u32, 2, 3, 5, 6, 12])
            )
                .prop_map(|(advance, delay, n, tones)| Step::Ul {
                    advance,
                    delay,
                    n,
                    tones
                }),
        ]
    }

    fn agree(steps: &[Step], lanes: u32, anchor: bool) {
        // The NB-IoT anchor carrier's unusable subframes (numerology.rs `dl_valid`): 0, 5 and
        // 9 of even frames; or every subframe (LTE-M).
        let valid = move |s: u64| !anchor || !matches!(s % 20, 0 | 5 | 9 | 10 | 15);
        let (mut new, mut old) = (Carrier::new(lanes), reference::Carrier::new(lanes));
        let mut now = 0u64;
        for (i, st) in steps.iter().enumerate() {
            let (advance, got, want) = match *st {
                Step::Dl { advance, delay, n } => {
                    let t = now + advance + delay;
                    (advance, new.book_dl(t, n, valid), old.book_dl(t, n, valid))
                }
                Step::Ul {
                    advance,
                    delay,
                    n,
                    tones,
                } => {
                    let t = now + advance + delay;
                    (advance, new.book_ul(t, n, tones), old.book_ul(t, n, tones))
                }
            };
            assert_eq!(got, want, "step {i}: {st:?}");
            if advance > 0 {
                now += advance;
                new.prune(now - 1);
                old.prune(now - 1);
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

        /// The bitmap-and-tree search books exactly what the span-by-span search booked, on
        /// the NB-IoT carrier (12 uplink lanes, the anchor's unusable subframes) and on
        /// LTE-M's (one lane, every subframe usable).
        #[test]
        fn the_search_books_what_the_span_by_span_search_booked(
            steps in proptest::collection::vec(step(), 1..400),
        ) {
            agree(&steps, 12, true);
            agree(&steps, 1, false);
        }
    }

    /// A long run of the same: 2,000 bookings with the clock moving on, so the horizon is
    /// rebased and grown many times.
    #[test]
    fn a_long_backlog_books_what_the_span_by_span_search_booked() {
        use coaplab_cc::rng::{Rng, Xoshiro256pp};
        let mut rng = Xoshiro256pp::seed_from_u64(7);
        let steps: Vec<Step> = (0..2_000)
            .map(|_| {
                let advance = rng.next_u64() % 30;
                let delay = rng.next_u64() % 5000;
                let n = 1 + rng.next_u64() % 400;
                if rng.next_u64().is_multiple_of(2) {
                    Step::Dl { advance, delay, n }
                } else {
                    let tones = [1u32, 3, 12][(rng.next_u64() % 3) as usize];
                    Step::Ul {
                        advance,
                        delay,
                        n,
                        tones,
                    }
                }
            })
            .collect();
        agree(&steps, 12, true);
    }
}
