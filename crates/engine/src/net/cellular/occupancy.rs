//! Which subframes of one lane (or one aligned group of uplink lanes) are booked, and the
//! earliest free run of a given length at or after a subframe, in O(log horizon) whatever the
//! backlog (docs/performance.md, "The massive cell").
//!
//! The choice: one bit per subframe in 64-subframe words, and over the words a segment tree
//! whose nodes hold the free run at their start (`pre`), at their end (`suf`) and the longest
//! inside (`best`). A first-fit search descends only into nodes whose runs can hold the
//! request, so it skips a fully booked backlog in O(log) steps; the ordered map of booked spans
//! it replaces walked the backlog span by span (a level-2-heavy cell's search grew with the
//! backlog: docs/performance.md). Interval trees or an ordered map of free gaps keyed by start
//! answer "the first gap at or after `t`" but not "the first gap at or after `t` at least `n`
//! long" without the same per-node maximum, which std's `BTreeMap` cannot carry; a bitmap is
//! also what the DL search needs, since a downlink span's length depends on where it starts
//! (unusable subframes inside it). Memory: 1 bit per subframe plus two 24-byte tree nodes per
//! 64 subframes (6 bits per subframe) of the horizon held, which starts at the last prune and grows
//! (doubling) only while bookings reach further ahead; the cell's admission limit bounds it
//! (`cell.rs`).

/// Subframes per word.
const W: u64 = 64;

/// The free runs of a node's subframes (lengths in subframes).
#[derive(Clone, Copy, Debug, Default)]
struct Runs {
    pre: u64,
    suf: u64,
    best: u64,
}

impl Runs {
    fn free(len: u64) -> Runs {
        Runs {
            pre: len,
            suf: len,
            best: len,
        }
    }

    /// The runs of one word (bit `i` set: subframe `i` of the word is booked).
    fn of_word(w: u64) -> Runs {
        if w == 0 {
            return Runs::free(W);
        }
        let (mut best, mut i) = (0u64, 0u32);
        while i < 64 {
            let rest = w >> i;
            if rest == 0 {
                best = best.max(u64::from(64 - i));
                break;
            }
            let free = rest.trailing_zeros();
            best = best.max(u64::from(free));
            i += free;
            i += (!(w >> i)).trailing_zeros();
        }
        Runs {
            pre: u64::from(w.trailing_zeros()),
            suf: u64::from(w.leading_zeros()),
            best,
        }
    }

    /// Two adjacent nodes of `len` subframes each.
    fn join(a: Runs, b: Runs, len: u64) -> Runs {
        Runs {
            pre: if a.pre == len { len + b.pre } else { a.pre },
            suf: if b.suf == len { len + a.suf } else { b.suf },
            best: a.best.max(b.best).max(a.suf + b.pre),
        }
    }
}

/// The first run of `n` free subframes in word `w` (whose first subframe is `at`), a free run
/// of `carry` subframes ending where the word starts: `Ok(start)`, or `Err(the free run
/// reaching the word's end)`.
fn scan_word(w: u64, at: u64, carry: u64, n: u64) -> Result<u64, u64> {
    let (mut i, mut run_start) = (0u32, at - carry);
    while i < 64 {
        let rest = w >> i;
        let free = if rest == 0 {
            64 - i
        } else {
            rest.trailing_zeros()
        };
        i += free;
        if at + u64::from(i) - run_start >= n {
            return Ok(run_start);
        }
        if i == 64 {
            break;
        }
        i += (!(w >> i)).trailing_zeros();
        run_start = at + u64::from(i);
    }
    Err(at + W - run_start)
}

/// A lane's booked subframes from `base · 64` to `(base + words) · 64`; everything after is
/// free, and what lies before the last prune is never asked.
#[derive(Clone, Debug, Default)]
pub struct Occupancy {
    /// The absolute index of `bits[0]`'s word.
    base: u64,
    /// Booked-subframe bits, one word per 64 subframes; a power of two long (or empty).
    bits: Vec<u64>,
    /// The segment tree over `bits`: node 1 the root, node `k`'s children `2k`, `2k + 1`, the
    /// leaves at `bits.len() + i`.
    tree: Vec<Runs>,
    /// Subframes before this are forgotten (the last prune).
    floor: u64,
}

impl Occupancy {
    /// Whether subframe `sf` is booked.
    pub fn busy(&self, sf: u64) -> bool {
        let w = sf / W;
        w >= self.base
            && w - self.base < self.bits.len() as u64
            && self.bits[(w - self.base) as usize] >> (sf % W) & 1 == 1
    }

    /// Forgets the subframes before `t` (searches ask only at or after it).
    pub fn prune(&mut self, t: u64) {
        self.floor = self.floor.max(t);
    }

    /// The first `s >= t` with `[s, s + n)` free (`n >= 1`).
    pub fn first_fit(&self, t: u64, n: u64) -> u64 {
        debug_assert!(t >= self.floor, "a search before the last prune");
        let len = self.bits.len() as u64;
        let w0 = t / W;
        if w0 >= self.base + len {
            return t;
        }
        // The first word, with the subframes before `t` counted as booked.
        let i0 = (w0 - self.base) as usize;
        let mask = (1u64 << (t % W)) - 1;
        let mut carry = match scan_word(self.bits[i0] | mask, w0 * W, 0, n) {
            Ok(s) => return s,
            Err(c) => c,
        };
        if let Some(s) = self.descend(1, 0, len, i0 as u64 + 1, &mut carry, n) {
            return s;
        }
        // The free run at the end of what is held goes on for ever.
        (self.base + len) * W - carry
    }

    /// The first run of `n` free subframes in words `[from, hi)` of node `k` (its words
    /// `[lo, hi)`), `carry` free subframes before it.
    fn descend(
        &self,
        k: usize,
        lo: u64,
        hi: u64,
        from: u64,
        carry: &mut u64,
        n: u64,
    ) -> Option<u64> {
        if hi <= from {
            return None;
        }
        let at = (self.base + lo) * W;
        let r = self.tree[k];
        let size = (hi - lo) * W;
        if lo >= from {
            if *carry + r.pre >= n {
                return Some(at - *carry);
            }
            if r.best < n {
                *carry = if r.pre == size { *carry + size } else { r.suf };
                return None;
            }
        }
        if hi - lo == 1 {
            return match scan_word(self.bits[lo as usize], at, *carry, n) {
                Ok(s) => Some(s),
                Err(c) => {
                    *carry = c;
                    None
                }
            };
        }
        let mid = (lo + hi) / 2;
        self.descend(2 * k, lo, mid, from, carry, n)
            .or_else(|| self.descend(2 * k + 1, mid, hi, from, carry, n))
    }

    /// The last booked subframe in `[a, b)`, if any.
    pub fn last_busy(&self, a: u64, b: u64) -> Option<u64> {
        let mut sf = b;
        while sf > a {
            let w = (sf - 1) / W;
            if w < self.base {
                return None;
            }
            let i = w - self.base;
            if i >= self.bits.len() as u64 {
                sf = (self.base + self.bits.len() as u64) * W;
                continue;
            }
            let lo = w * W;
            // Bits of the word from `max(a, lo)` to `sf` (exclusive).
            let from = a.max(lo) - lo;
            let to = sf - lo;
            let mut m = if to == 64 { !0 } else { (1u64 << to) - 1 };
            m &= !((1u64 << from) - 1);
            let x = self.bits[i as usize] & m;
            if x != 0 {
                return Some(lo + 63 - u64::from(x.leading_zeros()));
            }
            sf = lo;
        }
        None
    }

    /// The end of the booked run containing `sf` (booked).
    pub fn run_end(&self, sf: u64) -> u64 {
        let mut sf = sf;
        loop {
            let w = sf / W;
            let i = (w - self.base) as usize;
            if i >= self.bits.len() {
                return sf;
            }
            let off = sf % W;
            let rest = !(self.bits[i] >> off);
            let ones = u64::from(rest.trailing_zeros()).min(W - off);
            sf += ones;
            if ones < W - off {
                return sf;
            }
        }
    }

    /// Books the set bits of `word` in word `w` (absolute index).
    pub fn or_word(&mut self, w: u64, word: u64) {
        if word == 0 || w < self.base {
            return;
        }
        self.reach(w);
        let i = (w - self.base) as usize;
        self.bits[i] |= word;
        self.update(i, i);
    }

    /// The booked subframes from the last prune on, as non-empty words: (absolute index,
    /// bits).
    pub fn words(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        let first = self.floor / W;
        let below = (1u64 << (self.floor % W)) - 1;
        self.bits
            .iter()
            .enumerate()
            .map(move |(i, &b)| (self.base + i as u64, b))
            .filter(move |&(w, _)| w >= first)
            .map(move |(w, b)| (w, if w == first { b & !below } else { b }))
            .filter(|&(_, b)| b != 0)
    }

    /// The last prune.
    pub fn floor(&self) -> u64 {
        self.floor
    }

    /// Books `[s, e)` (free).
    pub fn book(&mut self, s: u64, e: u64) {
        if e <= s {
            return;
        }
        self.reach((e - 1) / W);
        let mut sf = s;
        while sf < e {
            let w = sf / W;
            let lo = w * W;
            let to = (e - lo).min(W);
            let from = sf - lo;
            let m = if to == 64 { !0 } else { (1u64 << to) - 1 } & !((1u64 << from) - 1);
            self.bits[(w - self.base) as usize] |= m;
            sf = lo + to;
        }
        let first = (s / W - self.base) as usize;
        let last = ((e - 1) / W - self.base) as usize;
        self.update(first, last);
    }

    /// Makes word `w` held: moves the base up to the last prune's word and, unless that
    /// leaves at least half the words free ahead of `w`, doubles — so that each rebuild
    /// (O(words)) is paid for by as many words of advance.
    fn reach(&mut self, w: u64) {
        let len = self.bits.len() as u64;
        if w < self.base + len {
            return;
        }
        let base = (self.floor / W).max(self.base);
        let mut new_len = len.max(16);
        while (w - base + 1) * 2 > new_len {
            new_len *= 2;
        }
        let mut bits = vec![0u64; new_len as usize];
        for (i, b) in bits.iter_mut().enumerate() {
            let old = base + i as u64;
            if old < self.base + len {
                *b = self.bits[(old - self.base) as usize];
            }
        }
        self.base = base;
        self.bits = bits;
        self.tree = vec![Runs::default(); 2 * new_len as usize];
        let n = new_len as usize;
        for i in 0..n {
            self.tree[n + i] = Runs::of_word(self.bits[i]);
        }
        let mut size = W;
        let mut k = n;
        while k > 1 {
            for j in (k / 2)..k {
                self.tree[j] = Runs::join(self.tree[2 * j], self.tree[2 * j + 1], size);
            }
            k /= 2;
            size *= 2;
        }
    }

    /// Recomputes the leaves of words `first..=last` and their ancestors, level by level.
    fn update(&mut self, first: usize, last: usize) {
        let n = self.bits.len();
        for i in first..=last {
            self.tree[n + i] = Runs::of_word(self.bits[i]);
        }
        let (mut lo, mut hi, mut size) = (n + first, n + last, W);
        while lo > 1 {
            lo /= 2;
            hi /= 2;
            for k in lo..=hi {
                self.tree[k] = Runs::join(self.tree[2 * k], self.tree[2 * k + 1], size);
            }
            size *= 2;
        }
    }

    /// Subframes held (the horizon's length): the memory it takes is 7 bits each.
    pub fn held(&self) -> u64 {
        self.bits.len() as u64 * W
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Word runs by hand: bits 0–1 and 10 booked (0b100_0000_0011): the free run at the
    /// start is 0, at the end 64 − 11 = 53, the longest 53 (2–9 is 8); bits 0 and 63: 62
    /// between; two words joined: the end run of the first (53) meets the start run (64) of
    /// an empty second: 117.
    #[test]
    fn runs_of_words_and_their_join() {
        let r = Runs::of_word(0b100_0000_0011);
        assert_eq!((r.pre, r.suf, r.best), (0, 53, 53));
        let r = Runs::of_word(1 << 63 | 0b1);
        assert_eq!((r.pre, r.suf, r.best), (0, 0, 62));
        let j = Runs::join(Runs::of_word(0b100_0000_0011), Runs::free(W), W);
        assert_eq!((j.pre, j.suf, j.best), (0, 117, 117));
    }

    /// Bookings 10–20 and 25–200 (crossing words 0–3): a run of 5 from 0 is at 0, from 12 at
    /// 20 (20–25 is 5 free), a run of 6 from 12 only after 200; 200 is in the free tail.
    #[test]
    fn first_fit_skips_what_is_booked() {
        let mut o = Occupancy::default();
        o.book(10, 20);
        o.book(25, 200);
        assert_eq!(o.first_fit(0, 5), 0);
        assert_eq!(o.first_fit(0, 11), 200);
        assert_eq!(o.first_fit(12, 5), 20);
        assert_eq!(o.first_fit(12, 6), 200);
        assert_eq!(o.first_fit(5000, 1), 5000);
        assert_eq!(o.last_busy(0, 30), Some(29));
        assert_eq!(o.last_busy(20, 25), None);
        assert_eq!(o.run_end(30), 200);
        assert_eq!(o.run_end(10), 20);
        assert!(o.busy(199) && !o.busy(200) && !o.busy(9));
    }

    /// A backlog of 100,000 one-subframe bookings every other subframe, then one of 2
    /// subframes: the search finds the free tail at 200,000 (the tree skips the backlog;
    /// the first free run of 2 is where the bookings end).
    #[test]
    fn a_fragmented_backlog_is_skipped() {
        let mut o = Occupancy::default();
        for i in 0..100_000u64 {
            o.book(2 * i, 2 * i + 1);
        }
        assert_eq!(o.first_fit(0, 1), 1);
        assert_eq!(o.first_fit(0, 2), 199_999);
        // Pruned to 150,000: the horizon moves up (the words before it are dropped on the
        // next growth) and the answers are unchanged.
        o.prune(150_000);
        o.book(1_000_000, 1_000_001);
        assert_eq!(o.first_fit(150_000, 2), 199_999);
        assert_eq!(o.first_fit(999_999, 2), 1_000_001);
        // Held: at most 4 × the span from the prune to the last booking (twice for the
        // headroom `reach` leaves, twice for rounding up to a power of two).
        assert!(o.held() <= 4 * (1_000_001 - 150_000 + 64));
    }
}
