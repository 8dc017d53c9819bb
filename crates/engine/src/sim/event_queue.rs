//! A discrete-event queue ordered by `(time, sequence number)`: events at the same instant
//! run in the order they were scheduled, so a run is a pure function of its inputs.
//!
//! Timer cancellation is lazy: an event may carry a generation number that its owner bumps to
//! cancel or re-arm; stale events are skipped by the owner when popped (no search, no removal).
//!
//! # The structure: a hierarchical timing wheel with a sorted current slot
//!
//! Simulated time only moves forward — an event is never scheduled before the last popped
//! one — so the queue is a *monotone* priority queue. Times are `u64` nanoseconds; a time's
//! *unit* is `t >> SLOT_BITS` (a slot of 2^20 ns ≈ 1.05 ms), and the unit is read as
//! `DIGIT_BITS`-bit digits (256-way): digit `l` of unit `u` is `(u >> 8 l) mod 256`. This is a
//! hierarchical timing wheel (Varghese and Lauck, "Hashed and hierarchical timing wheels",
//! SOSP 1987 / IEEE/ACM ToN 5(6), 1997) indexed, like a radix heap (Ahuja, Mehlhorn, Orlin and
//! Tarjan, J. ACM 37(2), 1990), by the highest digit in which a time differs from the clock:
//!
//! - `cur` is the start of the *current slot* (a multiple of 2^20 ns, ≤ every queued time).
//!   Events in the current slot are in `run`, sorted by `(time, sequence)`, popped from the
//!   front; an event scheduled into the current slot is inserted after every entry with a
//!   time ≤ its own.
//! - Any other event, of unit `u ≠ cur`'s unit `c`, is in level `l` = ⌊h / 8⌋, where `h` is the
//!   highest bit of `u ⊕ c`, slot `digit_l(u)`: its digits above `l` equal `c`'s and digit `l`
//!   is larger. So every time in level `l` is smaller than every time in a level above, and
//!   within a level the slots are in time order. Each level's occupied slots are a 256-bit
//!   bitmap with a 4-bit summary; the levels with any entry are a bitmap too, so the next slot
//!   is three `trailing_zeros`.
//! - When `run` is empty, the lowest occupied slot of the lowest occupied level `l` is taken:
//!   `cur` moves to its start (digit `l` set, the digits below cleared), and each of its
//!   entries goes to its place under the new `cur` — into `run` if in the new current slot,
//!   else into a level below `l`. Then `run` is sorted (insertion sort up to 32 entries, the
//!   library's stable sort beyond) or, if still empty, the next slot is taken. A level-0 slot
//!   with a single entry (the common case) hands that entry out directly, without `run`.
//!
//! Entries live in one pooled arena with a free list; a slot is a singly linked list of arena
//! indices (head and tail), so a move between slots relinks an index and never copies the
//! payload, and nothing is allocated per event once the arena and `run` have grown.
//!
//! Why these widths: in the benchmark's testbeds (400 and 10 000 clients, UDP and TCP;
//! docs/performance.md, "At the limit") the link events are scheduled 4–33 ms ahead, the
//! replies 0.13–0.5 s, the timers 1–137 s, and the mean time between two pops is 1.2–4.1 ms.
//! With ≈ 1 ms slots, level 0 (256 slots, ≈ 268 ms) takes most link events directly and level
//! 1 (≈ 69 s) the timers, so an entry moves at most once or twice before it is served, against
//! ≈ 3.5 times in the one-bit radix heap this replaced, and a current slot holds about one
//! entry. Wider slots (2^22 ns) or a 4096-slot level 0 executed no fewer instructions there
//! (docs/performance.md). Workloads with many events per slot stay correct and cost
//! `O(log k)` comparisons per insertion into a current slot of `k` entries (a binary search)
//! and `O(k log k)` per slot to sort.
//!
//! # Why FIFO among equal times holds (bit-identity with the `(time, sequence)` heap)
//!
//! Where an entry is placed depends only on its time and `cur`, so entries with equal times
//! are always in the same slot (or all in `run`). Within a slot they are in the order they
//! arrived there: `schedule` appends (its entry is the newest of all), and taking a slot moves
//! its entries, in order, into `run` and slots that are all empty at that moment (`run` is
//! empty, and every level below `l` too, `l` being the lowest occupied one). So among equal
//! times the order in a slot is the scheduling order; the sort of `run` is stable, and an
//! insertion into `run` goes after every entry with the same time. `tests::matches_reference_heap`
//! checks this against a `BinaryHeap` of `(time, sequence)` on random operation sequences.

use std::collections::VecDeque;

use coaplab_cc::Instant;

/// log2 of a slot's width in ns: 2^20 ns ≈ 1.05 ms (why: the module documentation).
const SLOT_BITS: u32 = 20;
/// log2 of the slots per level: 256-way digits.
const DIGIT_BITS: u32 = 8;
const SLOTS: usize = 1 << DIGIT_BITS;
/// Bitmap words per level.
const WORDS: usize = SLOTS / 64;
/// Levels: enough digits for every unit of a `u64` time (44 bits: 6 digits of 8).
const LEVELS: usize = (u64::BITS - SLOT_BITS).div_ceil(DIGIT_BITS) as usize;
/// The end of a slot's list (and of the free list).
const NIL: u32 = u32::MAX;
/// Beyond this many entries `run` is sorted by the library's stable sort instead of insertion.
const INSERTION_SORT_MAX: usize = 32;

/// An arena entry: its time, the next entry in its slot's list (or in the free list), the
/// event (`None` while free).
struct Node<E> {
    time: u64,
    next: u32,
    event: Option<E>,
}

/// One level of the wheel: per slot its list's head and tail (`NIL` when empty), and the
/// bitmap of non-empty slots with its summary (bit `w` ⇔ `words[w] ≠ 0`).
struct Level {
    slots: [(u32, u32); SLOTS],
    words: [u64; WORDS],
    summary: u64,
}

impl Level {
    const EMPTY: Level = Level {
        slots: [(NIL, NIL); SLOTS],
        words: [0; WORDS],
        summary: 0,
    };
}

/// The event queue. `E` is a small payload; no allocation per event once the arena and the
/// current slot have grown to their working size.
pub struct EventQueue<E> {
    /// The current slot's events, sorted by `(time, sequence)`.
    run: VecDeque<(u64, E)>,
    /// Every entry not in `run`.
    nodes: Vec<Node<E>>,
    /// Head of the free list in `nodes`.
    free: u32,
    levels: Box<[Level; LEVELS]>,
    /// Bit `l` set ⇔ level `l` has an entry.
    occupied: u64,
    /// The start of the current slot, ns (a multiple of 2^SLOT_BITS).
    cur: u64,
    /// The time of the last popped event, ns (the clock).
    last: u64,
    len: usize,
    popped: u64,
    /// Σ over pops of the queue length just before the pop (for [`QueueStats`]).
    len_sum: u64,
}

/// How full a queue was over its life: its pops and their mean queue length (entries waiting,
/// including the popped one). Used by the benchmark to size its reference heap.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct QueueStats {
    pub pops: u64,
    pub mean_len: f64,
}

thread_local! {
    static LAST_STATS: std::cell::Cell<QueueStats> = const {
        std::cell::Cell::new(QueueStats { pops: 0, mean_len: 0.0 })
    };
}

/// The statistics of the last [`EventQueue`] dropped on this thread (a run's queue is dropped
/// when the run returns, so after `testbed::run` this describes that run's queue).
pub fn last_dropped_stats() -> QueueStats {
    LAST_STATS.with(|s| s.get())
}

impl<E> Drop for EventQueue<E> {
    fn drop(&mut self) {
        let stats = QueueStats {
            pops: self.popped,
            mean_len: if self.popped == 0 {
                0.0
            } else {
                self.len_sum as f64 / self.popped as f64
            },
        };
        // `try_with`: a queue dropped during thread teardown records nothing.
        let _ = LAST_STATS.try_with(|s| s.set(stats));
    }
}

/// Stable sort by time (entries with equal times keep their order).
fn sort_by_time<E>(entries: &mut [(u64, E)]) {
    if entries.len() > INSERTION_SORT_MAX {
        entries.sort_by_key(|&(t, _)| t);
        return;
    }
    for i in 1..entries.len() {
        let mut j = i;
        while j > 0 && entries[j - 1].0 > entries[j].0 {
            entries.swap(j - 1, j);
            j -= 1;
        }
    }
}

impl<E> EventQueue<E> {
    pub fn with_capacity(capacity: usize) -> Self {
        EventQueue {
            run: VecDeque::with_capacity(capacity.min(64)),
            nodes: Vec::with_capacity(capacity),
            free: NIL,
            levels: Box::new([Level::EMPTY; LEVELS]),
            occupied: 0,
            cur: 0,
            last: 0,
            len: 0,
            popped: 0,
            len_sum: 0,
        }
    }

    /// Schedules `event` at `at` (never earlier than the current time; an earlier time is
    /// treated as the current time in release builds).
    #[inline(always)]
    pub fn schedule(&mut self, at: Instant, event: E) {
        debug_assert!(at.nanos() >= self.last, "event scheduled in the past");
        let t = at.nanos().max(self.last);
        self.len += 1;
        let x = (t >> SLOT_BITS) ^ (self.cur >> SLOT_BITS);
        if x == 0 {
            self.insert_into_run(t, event);
            return;
        }
        let node = Node {
            time: t,
            next: NIL,
            event: Some(event),
        };
        let i = if self.free != NIL {
            let i = self.free;
            let slot = &mut self.nodes[i as usize];
            self.free = slot.next;
            *slot = node;
            i
        } else {
            let i = u32::try_from(self.nodes.len())
                .ok()
                .filter(|&i| i != NIL)
                .expect("fewer than 2^32 − 1 queued events");
            self.nodes.push(node);
            i
        };
        self.link(i, t, x);
    }

    /// Inserts into the current slot after every entry with a time ≤ `t`.
    #[inline]
    fn insert_into_run(&mut self, t: u64, event: E) {
        match self.run.back() {
            Some(&(last, _)) if last > t => {
                let at = self.run.partition_point(|&(u, _)| u <= t);
                self.run.insert(at, (t, event));
            }
            _ => self.run.push_back((t, event)),
        }
    }

    /// Appends arena entry `i` (time `t`, `x` = its unit ⊕ the current unit, ≠ 0) to its slot.
    #[inline]
    fn link(&mut self, i: u32, t: u64, x: u64) {
        let l = ((u64::BITS - 1 - x.leading_zeros()) / DIGIT_BITS) as usize;
        let d = (((t >> SLOT_BITS) >> (DIGIT_BITS * l as u32)) as usize) & (SLOTS - 1);
        let level = &mut self.levels[l];
        let (head, tail) = level.slots[d];
        if head == NIL {
            level.slots[d] = (i, i);
            level.words[d / 64] |= 1 << (d % 64);
            level.summary |= 1 << (d / 64);
            self.occupied |= 1 << l;
        } else {
            level.slots[d].1 = i;
            self.nodes[tail as usize].next = i;
        }
    }

    /// Pops the earliest event (the first scheduled among equal times) and advances the clock
    /// to it.
    #[inline]
    pub fn pop(&mut self) -> Option<(Instant, E)> {
        let (t, event) = match self.run.pop_front() {
            Some(entry) => entry,
            None => self.advance()?,
        };
        self.last = t;
        self.len_sum += self.len as u64;
        self.len -= 1;
        self.popped += 1;
        Some((Instant::from_nanos(t), event))
    }

    /// Frees arena entry `i` and returns its event.
    #[inline]
    fn release(&mut self, i: u32) -> E {
        let node = &mut self.nodes[i as usize];
        node.next = self.free;
        self.free = i;
        node.event.take().expect("a queued entry")
    }

    /// `run` is empty: takes the next occupied slot until one holds the new current slot's
    /// entries, and returns the first of them (the rest, sorted, stay in `run`). `None` if the
    /// queue is empty.
    fn advance(&mut self) -> Option<(u64, E)> {
        while self.occupied != 0 {
            let l = self.occupied.trailing_zeros();
            let level = &mut self.levels[l as usize];
            let w = level.summary.trailing_zeros() as usize;
            let d = w * 64 + level.words[w].trailing_zeros() as usize;
            level.words[w] &= level.words[w] - 1;
            if level.words[w] == 0 {
                level.summary &= !(1 << w);
                if level.summary == 0 {
                    self.occupied &= !(1 << l);
                }
            }
            let (mut i, tail) = std::mem::replace(&mut level.slots[d], (NIL, NIL));
            // The slot's start: the current unit's digits above `l`, digit `l` = `d`, zeros below.
            let above = DIGIT_BITS * (l + 1);
            let high = (self.cur >> SLOT_BITS)
                .checked_shr(above)
                .map_or(0, |u| u << above);
            let unit = high | (d as u64) << (DIGIT_BITS * l);
            self.cur = unit << SLOT_BITS;
            if l == 0 {
                // Every entry is in the new current slot.
                if i == tail {
                    // The common case: alone in its slot; it is the next event.
                    let t = self.nodes[i as usize].time;
                    return Some((t, self.release(i)));
                }
                while i != NIL {
                    let (t, next) = (self.nodes[i as usize].time, self.nodes[i as usize].next);
                    let event = self.release(i);
                    self.run.push_back((t, event));
                    i = next;
                }
            } else {
                while i != NIL {
                    let (t, next) = (self.nodes[i as usize].time, self.nodes[i as usize].next);
                    let x = (t >> SLOT_BITS) ^ unit;
                    if x == 0 {
                        let event = self.release(i);
                        self.run.push_back((t, event));
                    } else {
                        self.nodes[i as usize].next = NIL;
                        self.link(i, t, x);
                    }
                    i = next;
                }
            }
            if !self.run.is_empty() {
                sort_by_time(self.run.make_contiguous());
                return self.run.pop_front();
            }
        }
        None
    }

    /// The time of the last popped event.
    pub fn now(&self) -> Instant {
        Instant::from_nanos(self.last)
    }

    /// Events popped so far (the simulator's "events processed").
    pub fn events_processed(&self) -> u64 {
        self.popped
    }

    /// Events waiting.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

    use proptest::prelude::*;

    const MS: u64 = 1_000_000;
    const S: u64 = 1_000_000_000;

    fn drain<E>(q: &mut EventQueue<E>) -> Vec<(u64, E)> {
        std::iter::from_fn(|| q.pop().map(|(t, e)| (t.nanos(), e))).collect()
    }

    #[test]
    fn earliest_first_and_fifo_among_equal_times() {
        let mut q = EventQueue::with_capacity(8);
        q.schedule(Instant::from_millis(5), 'c');
        q.schedule(Instant::from_millis(1), 'a');
        q.schedule(Instant::from_millis(5), 'd');
        q.schedule(Instant::from_millis(1), 'b');
        let order: Vec<char> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, vec!['a', 'b', 'c', 'd']);
        assert_eq!(q.now(), Instant::from_millis(5));
        assert_eq!(q.events_processed(), 4);
        assert!(q.is_empty());
        assert_eq!(q.pop(), None);
    }

    /// One operation of a table-driven case: schedule `(time ns, label)` or pop.
    #[derive(Clone, Copy, Debug)]
    enum Op {
        At(u64, u32),
        Pop,
    }
    use Op::{At, Pop};

    /// A table row: name, operations, expected pops.
    type Case = (&'static str, Vec<Op>, Vec<(u64, u32)>);

    /// Runs `ops` then pops the rest; returns every pop as `(time ns, label)`.
    fn play(ops: &[Op]) -> Vec<(u64, u32)> {
        let mut q = EventQueue::with_capacity(4);
        let mut out = Vec::new();
        for &op in ops {
            match op {
                At(t, l) => q.schedule(Instant::from_nanos(t), l),
                Pop => out.extend(q.pop().map(|(t, e)| (t.nanos(), e))),
            }
        }
        out.extend(drain(&mut q));
        out
    }

    #[test]
    fn table_of_explicit_times() {
        // (name, operations, expected pops) — expected orders are by (time, scheduling order),
        // worked out by hand from the operations.
        let far = u64::MAX - 1; // the largest representable instants
        let cases: Vec<Case> =
            vec![
            ("empty", vec![Pop, Pop], vec![]),
            (
                "equal times are FIFO (three at 7 ms, scheduled 1, 2, 3)",
                vec![At(7 * MS, 1), At(7 * MS, 2), At(7 * MS, 3)],
                vec![(7 * MS, 1), (7 * MS, 2), (7 * MS, 3)],
            ),
            (
                "equal times FIFO across different earlier buckets: 100 scheduled at t=0, then \
                 pop to 60, then 100 again (now in a lower bucket), then 61",
                vec![
                    At(100, 1),
                    At(60, 2),
                    Pop, // (60, 2); 100 is now in bucket b(100 ⊕ 60) = b(0b101_1000) = 7
                    At(100, 3),
                    At(61, 4),
                ],
                vec![(60, 2), (61, 4), (100, 1), (100, 3)],
            ),
            (
                "scheduling at now, after a pop, runs after what is already at now",
                vec![At(5 * S, 1), At(5 * S, 2), Pop, At(5 * S, 3), At(5 * S + 1, 4)],
                vec![(5 * S, 1), (5 * S, 2), (5 * S, 3), (5 * S + 1, 4)],
            ),
            (
                "scheduling at now when the queue is empty",
                vec![At(3, 1), Pop, At(3, 2), Pop, At(3, 3)],
                vec![(3, 1), (3, 2), (3, 3)],
            ),
            (
                "time zero",
                vec![At(0, 1), At(1, 2), At(0, 3)],
                vec![(0, 1), (0, 3), (1, 2)],
            ),
            (
                "far future: u64::MAX − 1 ns, 1 h and 1 ns, interleaved",
                vec![At(far, 1), At(3600 * S, 2), At(1, 3), Pop, At(far, 4), At(2, 5)],
                vec![(1, 3), (2, 5), (3600 * S, 2), (far, 1), (far, 4)],
            ),
            (
                "interleaved: timers at 2 s while 1 ms deliveries run",
                vec![
                    At(2 * S, 1),
                    At(MS, 2),
                    Pop, // (1 ms, 2)
                    At(2 * MS, 3),
                    At(2 * S, 4),
                    Pop, // (2 ms, 3)
                    At(2 * S + 2 * MS, 5),
                    At(3 * MS, 6),
                ],
                vec![
                    (MS, 2),
                    (2 * MS, 3),
                    (3 * MS, 6),
                    (2 * S, 1),
                    (2 * S, 4),
                    (2 * S + 2 * MS, 5),
                ],
            ),
            (
                "descending schedule pops ascending",
                vec![At(40, 1), At(30, 2), At(20, 3), At(10, 4)],
                vec![(10, 4), (20, 3), (30, 2), (40, 1)],
            ),
        ];
        for (name, ops, expected) in cases {
            assert_eq!(play(&ops), expected, "{name}");
        }
    }

    #[test]
    fn table_of_wheel_paths() {
        // Cases aimed at the wheel's paths (slots of 2^20 ns; level 0 holds times whose unit
        // t >> 20 differs from the current slot's in bits 0–7, level 1 in bits 8–15, …).
        // Expected orders are by (time, scheduling order), worked out by hand.
        const SLOT: u64 = 1 << 20;
        const L1: u64 = 1 << 28; // the first time whose unit differs from 0 in digit 1
        const TOP: u64 = 1 << 63;
        let cases: Vec<Case> = vec![
            (
                "one slot, times out of order: sorted when the slot becomes current, \
                 FIFO among the two at 3·2^20 + 7",
                vec![
                    At(3 * SLOT + 7, 1),
                    At(3 * SLOT + 2, 2),
                    At(3 * SLOT + 7, 3),
                    At(3 * SLOT, 4),
                ],
                vec![
                    (3 * SLOT, 4),
                    (3 * SLOT + 2, 2),
                    (3 * SLOT + 7, 1),
                    (3 * SLOT + 7, 3),
                ],
            ),
            (
                "into the current slot before entries already there: 150 goes between 100 \
                 (popped) and 200, the second 150 after the first, the second 200 last",
                vec![
                    At(100, 1),
                    At(200, 2),
                    Pop,
                    At(150, 3),
                    At(200, 4),
                    At(150, 5),
                ],
                vec![(100, 1), (150, 3), (150, 5), (200, 2), (200, 4)],
            ),
            (
                "cascade from level 1: 2^28 + 2^20 + 9 (unit 257) and 2^28 (unit 256) wait in \
                 level 1; popping 2^28 moves the other to level 0, where two later schedules \
                 join it: 2^28 + 2^20 + 1 before it, 2^28 + 2^20 + 9 after it",
                vec![
                    At(L1 + SLOT + 9, 1),
                    At(L1, 2),
                    Pop, // (2^28, 2)
                    At(L1 + SLOT + 9, 3),
                    At(L1 + SLOT + 1, 4),
                ],
                vec![
                    (L1, 2),
                    (L1 + SLOT + 1, 4),
                    (L1 + SLOT + 9, 1),
                    (L1 + SLOT + 9, 3),
                ],
            ),
            (
                "every boundary, scheduled descending: each on its own slot or level, \
                 popped ascending",
                vec![
                    At(u64::MAX, 1),
                    At(TOP, 2),
                    At(1 << 60, 3),
                    At(1 << 44, 4),
                    At(1 << 36, 5),
                    At(L1, 6),
                    At(L1 - 1, 7),
                    At(SLOT, 8),
                    At(SLOT - 1, 9),
                ],
                vec![
                    (SLOT - 1, 9),
                    (SLOT, 8),
                    (L1 - 1, 7),
                    (L1, 6),
                    (1 << 36, 5),
                    (1 << 44, 4),
                    (1 << 60, 3),
                    (TOP, 2),
                    (u64::MAX, 1),
                ],
            ),
            (
                "around 2^63: 2^63 − 1 and 2^63 differ in every digit; after popping 2^63 − 1 \
                 a second 2^63 queues behind the first, and 2^63 + 2^20 (next slot) comes last",
                vec![
                    At(TOP + SLOT, 1),
                    At(TOP - 1, 2),
                    At(TOP, 3),
                    Pop, // (2^63 − 1, 2)
                    At(TOP, 4),
                ],
                vec![(TOP - 1, 2), (TOP, 3), (TOP, 4), (TOP + SLOT, 1)],
            ),
            (
                "u64::MAX three times, with a pop between: FIFO at the last instant",
                vec![At(u64::MAX, 1), At(u64::MAX, 2), Pop, At(u64::MAX, 3)],
                vec![(u64::MAX, 1), (u64::MAX, 2), (u64::MAX, 3)],
            ),
        ];
        for (name, ops, expected) in cases {
            assert_eq!(play(&ops), expected, "{name}");
        }
    }

    #[test]
    fn many_events_in_one_slot() {
        // 100 events in one 2^20-ns slot, scheduled at 99, 98, …, 0 ns, each time twice
        // (labels 2i and 2i + 1 at time 99 − i): beyond the insertion sort's 32 entries, so
        // the library's stable sort orders them; expected: times 0 … 99 ascending, at time
        // 99 − i first 2i then 2i + 1.
        let mut ops = Vec::new();
        for i in 0..100u32 {
            ops.push(At(99 - u64::from(i), 2 * i));
            ops.push(At(99 - u64::from(i), 2 * i + 1));
        }
        let expected: Vec<(u64, u32)> = (0..100u32)
            .rev()
            .flat_map(|i| [(99 - u64::from(i), 2 * i), (99 - u64::from(i), 2 * i + 1)])
            .collect();
        assert_eq!(play(&ops), expected);
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "event scheduled in the past")]
    fn scheduling_in_the_past_is_refused_in_debug_builds() {
        let mut q = EventQueue::with_capacity(1);
        q.schedule(Instant::from_nanos(10), ());
        q.pop();
        q.schedule(Instant::from_nanos(9), ());
    }

    #[test]
    #[cfg(not(debug_assertions))]
    fn scheduling_in_the_past_is_at_now_in_release_builds() {
        // Clock at 10 ns; an event "at 9" runs at 10, after the one already at 10.
        let mut q = EventQueue::with_capacity(2);
        q.schedule(Instant::from_nanos(10), 1);
        q.schedule(Instant::from_nanos(10), 2);
        q.pop();
        q.schedule(Instant::from_nanos(9), 3);
        assert_eq!(drain(&mut q), vec![(10, 2), (10, 3)]);
    }

    #[test]
    fn clock_and_counters() {
        let mut q = EventQueue::with_capacity(0);
        assert_eq!(
            (q.now(), q.len(), q.events_processed()),
            (Instant::ZERO, 0, 0)
        );
        q.schedule(Instant::from_secs(2), ());
        q.schedule(Instant::from_secs(1), ());
        assert_eq!(q.len(), 2);
        assert_eq!(q.pop(), Some((Instant::from_secs(1), ())));
        assert_eq!(
            (q.now(), q.len(), q.events_processed()),
            (Instant::from_secs(1), 1, 1)
        );
        assert_eq!(q.pop(), Some((Instant::from_secs(2), ())));
        assert_eq!(q.pop(), None);
        assert_eq!(
            q.now(),
            Instant::from_secs(2),
            "an empty pop leaves the clock alone"
        );
    }

    #[test]
    fn stats_of_a_dropped_queue() {
        // Lengths just before each pop: 3, 2, 1 → mean (3 + 2 + 1) / 3 = 2.
        let mut q = EventQueue::with_capacity(4);
        for t in 1..=3 {
            q.schedule(Instant::from_nanos(t), ());
        }
        drain(&mut q);
        drop(q);
        assert_eq!(
            last_dropped_stats(),
            QueueStats {
                pops: 3,
                mean_len: 2.0
            }
        );
    }

    #[test]
    fn stale_generations_are_recognisable() {
        // The owner's pattern: re-arming bumps the generation; the old event pops but is stale.
        let mut q = EventQueue::with_capacity(4);
        let mut generation = 0u32;
        q.schedule(Instant::from_secs(2), generation);
        generation += 1; // re-armed
        q.schedule(Instant::from_secs(3), generation);
        let live: Vec<u32> = std::iter::from_fn(|| q.pop())
            .map(|(_, g)| g)
            .filter(|&g| g == generation)
            .collect();
        assert_eq!(live, vec![1]);
    }

    /// The reference: the `(time, sequence)` binary heap this queue replaced.
    struct Reference {
        heap: BinaryHeap<Reverse<(u64, u64, u32)>>,
        seq: u64,
        now: u64,
    }

    impl Reference {
        fn schedule(&mut self, t: u64, e: u32) {
            self.heap.push(Reverse((t.max(self.now), self.seq, e)));
            self.seq += 1;
        }
        fn pop(&mut self) -> Option<(u64, u32)> {
            let Reverse((t, _, e)) = self.heap.pop()?;
            self.now = t;
            Some((t, e))
        }
    }

    /// Operations: `Some(delay)` schedules at `now + delay` (saturating at `u64::MAX`), `None`
    /// pops.
    fn ops() -> impl Strategy<Value = Vec<Option<u64>>> {
        let delay = prop_oneof![
            3 => Just(0u64),                  // at now: equal times
            3 => 0u64..4,                     // a few distinct, often equal, times
            3 => 0u64..(20 * MS),             // deliveries
            2 => prop::sample::select(vec![MS, 2 * S, 3 * S, 60 * S]), // quantised timers
            1 => 0u64..(1 << 50),             // far future
        ];
        prop::collection::vec(prop::option::weighted(0.6, delay), 0..400)
    }

    /// A schedule relative to the clock that lands on, or next to, the wheel's boundaries.
    #[derive(Clone, Copy, Debug)]
    enum Step {
        /// At `now + delay` (saturating).
        Delay(u64),
        /// At the next multiple of 2^k after `now`, plus `offset` ∈ {−1, 0, 1} (saturating).
        Boundary(u32, i8),
        Pop,
    }

    /// Operations for the wheel: delays of every magnitude (2^0 … 2^63 ns), times exactly on
    /// and next to slot and level boundaries (multiples of 2^k for every k: the slots are 2^20
    /// ns and each level 8 bits wider, 2^20, 2^28, 2^36, 2^44, 2^52, 2^60), equal times, and
    /// far timers; with a starting clock of 0, just below 2^63, or 2^42 ns below `u64::MAX`
    /// (where many times saturate to `u64::MAX` and so are equal).
    fn wheel_ops() -> impl Strategy<Value = (u64, Vec<Step>)> {
        let step = prop_oneof![
            4 => Just(Step::Pop),
            2 => Just(Step::Delay(0)),
            2 => (0u64..64, 0u64..4).prop_map(|(k, r)| Step::Delay((1u64 << k).saturating_sub(r))),
            2 => (0u64..64).prop_flat_map(|k| (0..=(1u64 << k)).prop_map(Step::Delay)),
            3 => (0u32..64, -1i8..=1).prop_map(|(k, o)| Step::Boundary(k, o)),
            1 => prop::sample::select(vec![MS, 2 * S, 60 * S, 3600 * S]).prop_map(Step::Delay),
        ];
        let base =
            prop::sample::select(vec![0, (1u64 << 63) - (1 << 36) - 3, u64::MAX - (1 << 42)]);
        (base, prop::collection::vec(step, 0..300))
    }

    /// The time `step` schedules at, with the clock at `now` (None for a pop).
    fn step_time(step: Step, now: u64) -> Option<u64> {
        match step {
            Step::Delay(d) => Some(now.saturating_add(d)),
            Step::Boundary(k, offset) => {
                let next = ((u128::from(now >> k) + 1) << k).min(u128::from(u64::MAX)) as u64;
                Some(next.saturating_add_signed(offset.into()).max(now))
            }
            Step::Pop => None,
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]
        #[test]
        fn matches_reference_heap(ops in ops()) {
            let mut q = EventQueue::with_capacity(0);
            let mut r = Reference { heap: BinaryHeap::new(), seq: 0, now: 0 };
            for (label, op) in (0u32..).zip(ops) {
                match op {
                    Some(delay) => {
                        let t = q.now().nanos() + delay;
                        q.schedule(Instant::from_nanos(t), label);
                        r.schedule(t, label);
                    }
                    None => {
                        prop_assert_eq!(q.pop().map(|(t, e)| (t.nanos(), e)), r.pop());
                    }
                }
                prop_assert_eq!(q.len(), r.heap.len());
            }
            while let Some(expected) = r.pop() {
                prop_assert_eq!(q.pop().map(|(t, e)| (t.nanos(), e)), Some(expected));
            }
            prop_assert!(q.is_empty());
            prop_assert_eq!(q.pop(), None);
        }

        #[test]
        fn matches_reference_heap_on_every_level((base, steps) in wheel_ops()) {
            let mut q = EventQueue::with_capacity(0);
            let mut r = Reference { heap: BinaryHeap::new(), seq: 0, now: 0 };
            // Move both clocks to `base` first.
            q.schedule(Instant::from_nanos(base), u32::MAX);
            r.schedule(base, u32::MAX);
            prop_assert_eq!(q.pop().map(|(t, e)| (t.nanos(), e)), r.pop());
            for (label, step) in (0u32..).zip(steps) {
                match step_time(step, q.now().nanos()) {
                    Some(t) => {
                        q.schedule(Instant::from_nanos(t), label);
                        r.schedule(t, label);
                    }
                    None => {
                        prop_assert_eq!(q.pop().map(|(t, e)| (t.nanos(), e)), r.pop());
                    }
                }
                prop_assert_eq!(q.len(), r.heap.len());
            }
            while let Some(expected) = r.pop() {
                prop_assert_eq!(q.pop().map(|(t, e)| (t.nanos(), e)), Some(expected));
            }
            prop_assert!(q.is_empty());
            prop_assert_eq!(q.pop(), None);
        }
    }
}
