//! The discrete-event core: one queue ordered by `(time, sequence)`, and seeded RNG streams.

pub mod event_queue;
pub mod guard;
pub mod inline_fifo;
pub mod slab;
pub mod streams;
