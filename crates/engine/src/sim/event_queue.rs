//! A discrete-event queue ordered by `(time, sequence number)`: events at the same instant
//! run in the order they were scheduled, so a run is a pure function of its inputs.
//!
//! Timer cancellation is lazy: an event may carry a generation number that its owner bumps to
//! cancel or re-arm; stale events are skipped by the owner when popped (no search, no removal).

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use coaplab_cc::Instant;

struct Entry<E> {
    /// `(time ns, sequence)` packed so that one integer comparison orders entries.
    key: u128,
    event: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<E> Ord for Entry<E> {
    /// Reversed, so that std's max-heap pops the earliest `(at, seq)` first.
    fn cmp(&self, other: &Self) -> Ordering {
        other.key.cmp(&self.key)
    }
}

/// The event queue. `E` is a small `Copy` payload; no allocation per event once the heap has
/// grown to its working size.
pub struct EventQueue<E> {
    heap: BinaryHeap<Entry<E>>,
    next_seq: u64,
    now: Instant,
    popped: u64,
}

impl<E> EventQueue<E> {
    pub fn with_capacity(capacity: usize) -> Self {
        EventQueue {
            heap: BinaryHeap::with_capacity(capacity),
            next_seq: 0,
            now: Instant::ZERO,
            popped: 0,
        }
    }

    /// Schedules `event` at `at` (never earlier than the current time).
    pub fn schedule(&mut self, at: Instant, event: E) {
        debug_assert!(at >= self.now, "event scheduled in the past");
        let seq = self.next_seq;
        self.next_seq += 1;
        self.heap.push(Entry {
            key: (u128::from(at.max(self.now).nanos()) << 64) | u128::from(seq),
            event,
        });
    }

    /// Pops the earliest event and advances the clock to it.
    pub fn pop(&mut self) -> Option<(Instant, E)> {
        let entry = self.heap.pop()?;
        self.now = Instant::from_nanos((entry.key >> 64) as u64);
        self.popped += 1;
        Some((self.now, entry.event))
    }

    /// The time of the last popped event.
    pub fn now(&self) -> Instant {
        self.now
    }

    /// Events popped so far (the simulator's "events processed").
    pub fn events_processed(&self) -> u64 {
        self.popped
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
