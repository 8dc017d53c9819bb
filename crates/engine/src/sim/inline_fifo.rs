//! A FIFO whose first items live inline, in the struct that owns it, and that spills to the
//! heap beyond that (`smallvec`). A connection's retransmission queue and its message streams
//! hold one to three entries almost always: inline, they sit next to the connection state that
//! the event already reads, instead of in a separate allocation that is one more cache miss per
//! segment with thousands of connections (docs/performance.md).
//!
//! Items `head..` of the vector are the queue. Popping advances `head`; the vector is cleared
//! when it empties and compacted once at least half of it (and at least [`COMPACT_AT`] items)
//! is popped, so a long-lived queue stays bounded and each item moves at most once per
//! compaction (amortised O(1)).

use std::ops::{Deref, DerefMut};

use smallvec::{Array, SmallVec};

/// Popped items tolerated at the front before the vector is compacted.
const COMPACT_AT: usize = 32;

/// A FIFO of `Copy` items, the first `A::size()` of them inline. Dereferences to the slice of
/// its items, front first.
///
/// `repr(C)`: `head` first, then the vector (`smallvec` puts its inline items first and its
/// length word after them), so that `head` and the first item are one contiguous run of bytes;
/// an owner places the FIFO so that they share a cache line (docs/performance.md, "TCP at
/// scale: the connection's hot and cold fields").
#[repr(C)]
pub struct InlineFifo<A: Array> {
    head: usize,
    items: SmallVec<A>,
}

impl<A: Array> Default for InlineFifo<A> {
    fn default() -> Self {
        InlineFifo {
            items: SmallVec::new(),
            head: 0,
        }
    }
}

impl<A: Array> Clone for InlineFifo<A>
where
    A::Item: Clone,
{
    fn clone(&self) -> Self {
        InlineFifo {
            items: self.items.clone(),
            head: self.head,
        }
    }
}

impl<A: Array> std::fmt::Debug for InlineFifo<A>
where
    A::Item: std::fmt::Debug,
{
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<A: Array> InlineFifo<A>
where
    A::Item: Copy,
{
    pub fn new() -> Self {
        Self::default()
    }

    pub fn push_back(&mut self, item: A::Item) {
        self.items.push(item);
    }

    pub fn pop_front(&mut self) -> Option<A::Item> {
        let item = *self.items.get(self.head)?;
        self.head += 1;
        if self.head == self.items.len() {
            self.items.clear();
            self.head = 0;
        } else if self.head >= COMPACT_AT && 2 * self.head >= self.items.len() {
            self.items.drain(..self.head);
            self.head = 0;
        }
        Some(item)
    }

    /// Whether the items have outgrown the inline space (for tests).
    pub fn spilled(&self) -> bool {
        self.items.spilled()
    }
}

impl<A: Array> Deref for InlineFifo<A> {
    type Target = [A::Item];
    fn deref(&self) -> &[A::Item] {
        &self.items[self.head..]
    }
}

impl<A: Array> DerefMut for InlineFifo<A> {
    fn deref_mut(&mut self) -> &mut [A::Item] {
        &mut self.items[self.head..]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    use proptest::prelude::*;

    /// `repr(C)`: `head` is the first word, the vector follows.
    #[test]
    fn head_first() {
        assert_eq!(std::mem::offset_of!(InlineFifo<[u64; 2]>, head), 0);
        assert_eq!(std::mem::offset_of!(InlineFifo<[u64; 2]>, items), 8);
    }

    proptest! {
        /// Any sequence of pushes and pops gives what a `VecDeque` gives, item for item.
        #[test]
        fn behaves_as_a_vecdeque(ops in proptest::collection::vec(0u8..3, 0..400)) {
            let mut fifo: InlineFifo<[u32; 2]> = InlineFifo::new();
            let mut reference = VecDeque::new();
            for (i, op) in ops.into_iter().enumerate() {
                if op < 2 {
                    fifo.push_back(i as u32);
                    reference.push_back(i as u32);
                } else {
                    prop_assert_eq!(fifo.pop_front(), reference.pop_front());
                }
                prop_assert_eq!(fifo.len(), reference.len());
                prop_assert!(fifo.iter().eq(reference.iter()));
                prop_assert_eq!(fifo.first(), reference.front());
            }
        }
    }

    #[test]
    fn stays_inline_up_to_its_size_and_bounded_when_long_lived() {
        let mut fifo: InlineFifo<[u64; 2]> = InlineFifo::new();
        for round in 0..1000u64 {
            fifo.push_back(round);
            fifo.push_back(round + 1);
            assert_eq!(fifo.pop_front(), Some(round));
            assert_eq!(fifo.pop_front(), Some(round + 1));
        }
        assert!(!fifo.spilled() && fifo.is_empty());
        // Never empty: 3 in, 2 out per round; compaction keeps the vector within 2 × the
        // queue plus COMPACT_AT (here the queue grows by one a round: 1000 at the end).
        for round in 0..1000u64 {
            fifo.push_back(3 * round);
            fifo.push_back(3 * round + 1);
            fifo.push_back(3 * round + 2);
            fifo.pop_front();
            fifo.pop_front();
        }
        assert_eq!(fifo.len(), 1000);
        assert!(fifo.items.len() <= 2 * 1000 + COMPACT_AT);
        // The second loop pushed 0, 1, …, 2999 in order and popped 2000 of them: the front is
        // the value 2000.
        assert_eq!(fifo.first(), Some(&2000));
    }
}
