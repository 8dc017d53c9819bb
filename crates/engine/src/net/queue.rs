//! A byte-limited tail-drop FIFO (docs/design.md §2): it holds packets *waiting* for serialization —
//! not the one on the wire — and drops an arriving packet that would make the queued bytes
//! exceed the limit.

use std::collections::VecDeque;

use coaplab_cc::Instant;

pub struct DropTailQueue<T> {
    items: VecDeque<(T, u32, Instant)>,
    bytes: u64,
    /// `None` = unlimited.
    limit: Option<u64>,
    pub max_bytes: u64,
}

impl<T: Copy> DropTailQueue<T> {
    pub fn new(limit: Option<u64>) -> Self {
        DropTailQueue {
            items: VecDeque::with_capacity(64),
            bytes: 0,
            limit,
            max_bytes: 0,
        }
    }

    /// Enqueues `item` of `size` bytes at `now`; `false` if tail-dropped.
    pub fn push(&mut self, now: Instant, item: T, size: u32) -> bool {
        if self
            .limit
            .is_some_and(|limit| self.bytes + u64::from(size) > limit)
        {
            return false;
        }
        self.bytes += u64::from(size);
        self.max_bytes = self.max_bytes.max(self.bytes);
        self.items.push_back((item, size, now));
        true
    }

    /// Dequeues the head: `(item, size, enqueued_at)`.
    pub fn pop(&mut self) -> Option<(T, u32, Instant)> {
        let head = self.items.pop_front()?;
        self.bytes -= u64::from(head.1);
        Some(head)
    }

    pub fn bytes(&self) -> u64 {
        self.bytes
    }
    pub fn len(&self) -> usize {
        self.items.len()
    }
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tail_drop_at_the_exact_byte_boundary() {
        let t = Instant::ZERO;
        let mut q = DropTailQueue::new(Some(2500));
        // 24 × 100 B = 2400 B queued; +100 B → exactly 2500 B: accepted.
        for i in 0..24 {
            assert!(q.push(t, i, 100));
        }
        assert!(q.push(t, 24, 100));
        assert_eq!(q.bytes(), 2500);
        // One more byte would exceed the limit: dropped.
        assert!(!q.push(t, 25, 1));
        // Freed space is usable again; FIFO order kept.
        assert_eq!(q.pop().map(|p| p.0), Some(0));
        assert!(!q.push(t, 26, 101));
        assert!(q.push(t, 27, 100));
        assert_eq!(q.max_bytes, 2500);
    }

    #[test]
    fn unlimited_never_drops() {
        let mut q = DropTailQueue::new(None);
        for i in 0..10_000 {
            assert!(q.push(Instant::ZERO, i, 1500));
        }
        assert_eq!(q.len(), 10_000);
    }
}
