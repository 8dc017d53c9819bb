//! The [`Connection`]'s memory layout: the fields a segment or a timeout reads come first, the
//! cold ones after them (docs/performance.md, "TCP at scale: the connection's hot and cold
//! fields"). These tests fail if a field added or moved breaks that split.

use std::mem::{offset_of, size_of};

use super::{ConnStats, Connection, Sent};
use crate::sim::inline_fifo::InlineFifo;

/// Bytes of a cache line (x86-64).
const LINE: usize = 64;

/// Prints the sizes and offsets (`cargo test -p coaplab-engine layout -- --nocapture`).
#[test]
fn print_layout() {
    type C = Connection;
    println!(
        "Connection {} B, ConnStats {} B, Sent {} B",
        size_of::<C>(),
        size_of::<ConnStats>(),
        size_of::<Sent>()
    );
    for (name, off) in [
        ("state", offset_of!(C, state)),
        ("hz", offset_of!(C, hz)),
        ("snd_una", offset_of!(C, snd_una)),
        ("rto_at", offset_of!(C, rto_at)),
        ("cc", offset_of!(C, cc)),
        ("recovery", offset_of!(C, recovery)),
        ("rtt", offset_of!(C, rtt)),
        ("rcv", offset_of!(C, rcv)),
        ("rate", offset_of!(C, rate)),
        ("pacing", offset_of!(C, pacing)),
        ("rtx", offset_of!(C, rtx)),
        ("lost", offset_of!(C, lost)),
        ("stats", offset_of!(C, stats)),
        ("reordering", offset_of!(C, reordering)),
        ("rst_due", offset_of!(C, rst_due)),
        ("cfg", offset_of!(C, cfg)),
    ] {
        println!("  {name:<12} {off:>4} (line {})", off / LINE);
    }
}

/// The hot block (`state` … the counters every segment writes) ends before the cold fields
/// and spans at most nine lines: 8 B of flags, 12 × 4 B of sequence numbers and counters,
/// 56 B of timer and sequence options, the controller's 16-B pointer, the recovery (28 B),
/// the RTT estimator (64 B), the receiver (80 B), the delivery rate (32 B), pacing (24 B), the
/// retransmission queue (8 B head + 136 B vector of two 64-B ranges), `lost` (8 B) and three
/// 8-B counters: 8 + 48 + 56 + 16 + 32 (28, padded) + 64 + 80 + 32 + 24 + 144 + 8 + 24 = 536 B
/// ≤ 9 × 64 = 576.
#[test]
fn hot_fields_come_first() {
    type C = Connection;
    let hot_end = offset_of!(C, stats) + offset_of!(ConnStats, retransmissions);
    assert!(hot_end <= 9 * LINE, "hot block ends at {hot_end}");
    for (name, cold) in [
        ("reordering", offset_of!(C, reordering)),
        ("handshake_retries", offset_of!(C, handshake_retries)),
        ("failure", offset_of!(C, failure)),
        ("rst_due", offset_of!(C, rst_due)),
        ("cc_seed", offset_of!(C, cc_seed)),
        ("cfg", offset_of!(C, cfg)),
    ] {
        assert!(
            cold >= hot_end,
            "{name} at {cold}, inside the hot block (ends {hot_end})"
        );
    }
    // The copies of the configuration sit in the first line, with the sequence numbers.
    for off in [
        offset_of!(C, hz),
        offset_of!(C, max_retries),
        offset_of!(C, nagle),
        offset_of!(C, snd_max),
    ] {
        assert!(off < LINE, "{off}");
    }
    // The counters every segment writes lead the statistics.
    assert_eq!(offset_of!(ConnStats, segments_sent), 0);
    assert_eq!(offset_of!(ConnStats, data_segments_sent), 8);
    assert_eq!(offset_of!(ConnStats, rtt_samples), 16);
}

/// The retransmission queue is its `head` (8 B, first: `inline_fifo.rs`), the vector's length
/// word (8 B) and two 64-B ranges inline: 8 + 8 + 2 × 64 = 144 B.
#[test]
fn queue_holds_two_ranges_inline() {
    assert_eq!(size_of::<Sent>(), 64);
    assert_eq!(size_of::<InlineFifo<[Sent; 2]>>(), 8 + 8 + 2 * 64);
}
