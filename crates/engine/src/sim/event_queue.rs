//! A discrete-event queue ordered by `(time, sequence number)`: events at the same instant
//! run in the order they were scheduled, so a run is a pure function of its inputs.
//!
//! Timer cancellation is lazy: an event may carry a generation number that its owner bumps to
//! cancel or re-arm; stale events are skipped by the owner when popped (no search, no removal).
//!
//! # The structure: a radix heap
//!
//! Simulated time only moves forward — an event is never scheduled before the last popped
//! one — so the queue is a *monotone* priority queue, and a radix heap (Ahuja, Mehlhorn, Orlin
//! and Tarjan, "Faster algorithms for the shortest path problem", J. ACM 37(2), 1990; the
//! one-bit-per-bucket variant) serves it in O(1) per schedule and amortised O(log C) per pop,
//! where C is the longest delay, with no comparisons between entries on the common path.
//!
//! Times are `u64` nanoseconds. `last` is the time of the last popped event (the clock).
//! An event at time `t` lives in bucket `b(t) = 0` if `t == last`, else
//! `b(t) = 64 − leading_zeros(t ⊕ last)` (1 + the index of the highest bit in which `t` and
//! `last` differ), so bucket `b ≥ 1` holds times in `[last, …)` sharing `last`'s bits above
//! bit `b − 1` and differing at bit `b − 1`: every time in bucket `b` is smaller than every
//! time in bucket `b' > b`. Popping takes bucket 0 front first; when it is empty, the lowest
//! non-empty bucket `j` is emptied: its smallest time becomes `last`, and each of its entries
//! goes to `b(t) < j` under the new `last`. Entries in buckets above `j` keep their bucket,
//! because the new `last` shares the old one's bits from bit `j − 1` up.
//!
//! Where the cost is: with its functions kept out of line (a build for counting only), the
//! queue executes ≈ 270 instructions per event at 400 UDP or TCP clients (`refill` ≈ 190,
//! `schedule` 42, `pop` 35–39): each entry moves ≈ 3.5 times between buckets, because the
//! testbeds' events are scheduled over five decades (link events 4–33 ms ahead, replies
//! 0.13–0.5 s, timers 1–137 s). A hierarchical timing wheel with 1 ms slots, 256-way levels,
//! pooled linked lists and a sorted current slot (same order; commit `3fa0168`) cut the
//! instructions per event by 5–10 % and was faster at 400 clients, but slower in time at
//! 10 000 TCP clients, so this heap stayed (docs/performance.md, "Tried, not kept").
//!
//! # Why FIFO among equal times holds (bit-identity with the `(time, sequence)` heap)
//!
//! Entries with equal times are always in the same bucket. Within a bucket, entries are kept
//! in the order they arrived there: `schedule` appends (its entry is the newest of all), and
//! emptying bucket `j` moves its entries, in order, into buckets that are all empty at that
//! moment (`j` was the lowest non-empty one). So among equal times the order in a bucket is the
//! scheduling order, and bucket 0 — whose entries all have time `last` — is served front first.
//! `tests::matches_reference_heap` checks this against a `BinaryHeap` of `(time, sequence)` on
//! random operation sequences.

use std::collections::VecDeque;

use coaplab_cc::Instant;

/// Buckets 1..=64 (index `b − 1`); bucket 0 is [`EventQueue::current`].
const BUCKETS: usize = 64;

/// The event queue. `E` is a small payload; no allocation per event once the buckets have
/// grown to their working size (a bucket keeps its capacity when it is emptied).
pub struct EventQueue<E> {
    /// Events at time `last`, in scheduling order (bucket 0).
    current: VecDeque<E>,
    /// `buckets[b - 1]` is bucket `b`: `(time ns, event)` in arrival order.
    buckets: [Vec<(u64, E)>; BUCKETS],
    /// Bit `b − 1` set ⇔ bucket `b` is non-empty.
    occupied: u64,
    /// The time of the last popped event, ns (the radix heap's reference point).
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

/// The bucket of time `t` relative to `last` (`t ≥ last`): 0 if equal, else 1..=64.
#[inline(always)]
fn bucket(t: u64, last: u64) -> usize {
    (u64::BITS - (t ^ last).leading_zeros()) as usize
}

impl<E> EventQueue<E> {
    pub fn with_capacity(capacity: usize) -> Self {
        EventQueue {
            current: VecDeque::with_capacity(capacity.min(1024)),
            buckets: std::array::from_fn(|_| Vec::new()),
            occupied: 0,
            last: 0,
            len: 0,
            popped: 0,
            len_sum: 0,
        }
    }

    /// Schedules `event` at `at` (never earlier than the current time; an earlier time is
    /// treated as the current time in release builds).
    #[inline]
    pub fn schedule(&mut self, at: Instant, event: E) {
        debug_assert!(at.nanos() >= self.last, "event scheduled in the past");
        let t = at.nanos().max(self.last);
        self.len += 1;
        let b = bucket(t, self.last);
        if b == 0 {
            self.current.push_back(event);
        } else {
            self.buckets[b - 1].push((t, event));
            self.occupied |= 1 << (b - 1);
        }
    }

    /// Pops the earliest event (the first scheduled among equal times) and advances the clock
    /// to it.
    #[inline]
    pub fn pop(&mut self) -> Option<(Instant, E)> {
        let event = match self.current.pop_front() {
            Some(event) => event,
            None => {
                if self.occupied == 0 {
                    return None;
                }
                self.refill()
            }
        };
        self.len_sum += self.len as u64;
        self.len -= 1;
        self.popped += 1;
        Some((Instant::from_nanos(self.last), event))
    }

    /// `current` is empty: empties the lowest non-empty bucket. Its earliest time becomes
    /// `last`; its first entry at that time is returned, the others go to lower buckets (those
    /// at the new `last` to `current`, in order).
    #[inline]
    fn refill(&mut self) -> E {
        let j = self.occupied.trailing_zeros() as usize;
        let slot = &mut self.buckets[j];
        if slot.len() == 1 {
            // The common case (about one refill per pop in the testbeds): the next event is
            // alone in its bucket; nothing moves.
            self.occupied &= !(1 << j);
            let (t, event) = slot.pop().expect("occupied");
            self.last = t;
            return event;
        }
        self.occupied &= !(1 << j);
        let mut entries = std::mem::take(slot);
        let min = entries.iter().map(|&(t, _)| t).min().expect("occupied");
        self.last = min;
        for (t, event) in entries.drain(..) {
            let b = bucket(t, min);
            if b == 0 {
                self.current.push_back(event);
            } else {
                debug_assert!(b - 1 < j);
                self.buckets[b - 1].push((t, event));
                self.occupied |= 1 << (b - 1);
            }
        }
        // Give the (now empty) vector back so that its capacity is reused.
        self.buckets[j] = entries;
        self.current
            .pop_front()
            .expect("the minimum moved to current")
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
    use proptest::test_runner::TestCaseError;

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
    fn table_of_bucket_paths() {
        // Cases aimed at the radix heap's paths (bucket b(t) = 1 + the highest bit in which t
        // and the last popped time differ; 2^20 and 2^28 stand for any power of two, and were
        // the slot and level widths of the timing wheel tried in its place: docs/performance.md,
        // "Tried, not kept"). Expected orders are by (time, scheduling order), worked out by hand.
        const SLOT: u64 = 1 << 20;
        const L1: u64 = 1 << 28;
        const TOP: u64 = 1 << 63;
        let cases: Vec<Case> = vec![
            (
                "one bucket (b = 22 for all four, under last = 0), times out of order: \
                 ordered when it is emptied, FIFO among the two at 3·2^20 + 7",
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
                "after a pop, 150 goes between 100 (popped) and 200, the second 150 after \
                 the first, the second 200 last",
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
                "refill: 2^28 + 2^20 + 9 and 2^28 wait in bucket 29; popping 2^28 moves the \
                 other to bucket 21, where two later schedules join it: 2^28 + 2^20 + 1 \
                 before it, 2^28 + 2^20 + 9 after it",
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
                "powers of two and their neighbours, scheduled descending: popped ascending",
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
                 a second 2^63 queues behind the first, and 2^63 + 2^20 comes last",
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
    fn many_events_close_together() {
        // 200 events within 100 ns, scheduled at 99, 98, …, 0 ns, each time twice (labels 2i
        // and 2i + 1 at time 99 − i): every refill moves many entries; expected: times 0 … 99
        // ascending, at time 99 − i first 2i then 2i + 1.
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

    /// A schedule relative to the clock that lands on, or next to, a power-of-two boundary.
    #[derive(Clone, Copy, Debug)]
    enum Step {
        /// At `now + delay` (saturating).
        Delay(u64),
        /// At the next multiple of 2^k after `now`, plus `offset` ∈ {−1, 0, 1} (saturating).
        Boundary(u32, i8),
        Pop,
    }

    /// Operations over every bucket: delays of every magnitude (2^0 … 2^63 ns), times exactly
    /// on and next to multiples of 2^k for every k (where the highest differing bit, and so the
    /// bucket, changes), equal times, and far timers; with a starting clock of 0, just below 2^63, or 2^42 ns below `u64::MAX`
    /// (where many times saturate to `u64::MAX` and so are equal).
    fn boundary_ops() -> impl Strategy<Value = (u64, Vec<Step>)> {
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
            replay(None, ops, |delay, now| delay.map(|d| now + d))?;
        }

        #[test]
        fn matches_reference_heap_on_every_bucket((base, steps) in boundary_ops()) {
            replay(Some(base), steps, step_time)?;
        }
    }

    /// Runs `steps` on the queue and on the reference heap side by side: `time_of(step, now)`
    /// is the time to schedule at (the step's label is its index) or `None` for a pop; every
    /// pop and length must agree, and so must the drain at the end. `base`: both clocks are
    /// first moved there by one event scheduled and popped.
    fn replay<S>(
        base: Option<u64>,
        steps: Vec<S>,
        time_of: impl Fn(S, u64) -> Option<u64>,
    ) -> Result<(), TestCaseError> {
        let mut q = EventQueue::with_capacity(0);
        let mut r = Reference {
            heap: BinaryHeap::new(),
            seq: 0,
            now: 0,
        };
        if let Some(base) = base {
            q.schedule(Instant::from_nanos(base), u32::MAX);
            r.schedule(base, u32::MAX);
            prop_assert_eq!(q.pop().map(|(t, e)| (t.nanos(), e)), r.pop());
        }
        for (label, step) in (0u32..).zip(steps) {
            match time_of(step, q.now().nanos()) {
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
        Ok(())
    }
}
