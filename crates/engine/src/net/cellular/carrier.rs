//! The eNB's scheduler: the carrier's subframes, booked first come, first served. Each
//! transmission (a DCI, a data block with its repetitions, a HARQ-ACK, a preamble's Msg2…)
//! takes the earliest free span at or after the time it may start; a device that asks later
//! gets a later span, so devices on one carrier delay each other. The downlink is one lane
//! (NB-IoT: one 180 kHz carrier; LTE-M: one 6-PRB narrowband); the uplink is `lanes`
//! subcarrier lanes (NB-IoT: 12 subcarriers of 15 kHz; a single-tone transmission takes one,
//! a multi-tone one takes an aligned group). Only booked spans are stored, and spans that ended
//! are pruned, so an idle carrier costs nothing.

use std::collections::BTreeMap;

/// Disjoint booked spans `[start, end)` of subframes, by start.
#[derive(Clone, Debug, Default)]
pub struct Lane {
    spans: BTreeMap<u64, u64>,
}

impl Lane {
    /// The first `s >= t` with `[s, end(s))` free, where `end(s)` is where a transmission
    /// starting at `s` ends (`end(s) > s`), and `next(s)` the next possible start after a
    /// conflict ending at `s`.
    fn first_free(&self, mut t: u64, end: impl Fn(u64) -> u64, next: impl Fn(u64) -> u64) -> u64 {
        loop {
            let e = end(t);
            // Spans are disjoint: if the last one starting before `e` does not reach past `t`,
            // none does.
            match self.spans.range(..e).next_back() {
                Some((_, &busy_end)) if busy_end > t => t = next(busy_end),
                _ => return t,
            }
        }
    }

    fn book(&mut self, start: u64, end: u64) {
        self.spans.insert(start, end);
    }

    /// Forgets spans that ended at or before `t`.
    fn prune(&mut self, t: u64) {
        while let Some((&s, &e)) = self.spans.first_key_value() {
            if e > t {
                break;
            }
            self.spans.remove(&s);
        }
    }
}

/// A downlink carrier (one lane, some subframes not usable) and an uplink of `lanes` lanes.
#[derive(Clone, Debug)]
pub struct Carrier {
    pub dl: Lane,
    pub ul: Vec<Lane>,
}

impl Carrier {
    pub fn new(ul_lanes: u32) -> Carrier {
        Carrier {
            dl: Lane::default(),
            ul: vec![Lane::default(); ul_lanes as usize],
        }
    }

    /// Books `n` usable downlink subframes at or after `t` (`valid(sf)`: whether subframe `sf`
    /// can carry them; unusable ones in between are skipped, TS 36.211 §10.2.3.4 /
    /// TS 36.213 §16.4.1: NPDSCH is postponed past them): `[start, end)`.
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
        self.dl.book(start, stop);
        (start, stop)
    }

    /// Books `n` uplink subframes on `tones` aligned lanes at or after `t`: `[start, end)`.
    pub fn book_ul(&mut self, t: u64, n: u64, tones: u32) -> (u64, u64) {
        let tones = (tones as usize).clamp(1, self.ul.len());
        let groups = self.ul.len() / tones;
        let mut best: Option<(u64, usize)> = None;
        for g in 0..groups {
            let lanes = &self.ul[g * tones..(g + 1) * tones];
            // The earliest start free on every lane of the group.
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
            l.book(start, start + n);
        }
        (start, start + n)
    }

    /// Forgets what ended by subframe `t`.
    pub fn prune(&mut self, t: u64) {
        self.dl.prune(t);
        for l in &mut self.ul {
            l.prune(t);
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
        assert_eq!(c.ul[0].spans.len(), 1);
    }
}
