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
        ("handshake_retries", offset_of!(C, handshake_retries)),
        ("rto_at", offset_of!(C, rto_at)),
        ("cc", offset_of!(C, cc)),
        ("recovery", offset_of!(C, recovery)),
        ("rate", offset_of!(C, rate)),
        ("rtt", offset_of!(C, rtt)),
        ("rcv", offset_of!(C, rcv)),
        ("pacing", offset_of!(C, pacing)),
        ("lost", offset_of!(C, lost)),
        ("reordering", offset_of!(C, reordering)),
        ("rtx", offset_of!(C, rtx)),
        ("stats", offset_of!(C, stats)),
        ("rst_due", offset_of!(C, rst_due)),
        ("cc_seed", offset_of!(C, cc_seed)),
        ("cfg", offset_of!(C, cfg)),
    ] {
        println!("  {name:<18} {off:>4} (line {})", off / LINE);
    }
}

/// The line plan of `Connection`'s declaration: line 0 is 8 flags, `nagle` (1 B, 3 B
/// padding) and 13 four-byte fields (12 + 52 = 64 B); line 1 the timer and sequence options
/// and the controller's pointer (16 + 8 + 8 + 16 + 16 = 64 B); line 2 the recovery (28 B, 4 B
/// padding) and the delivery rate (32 B); line 3 the RTT estimator (64 B); lines 4–5 the
/// receiver (80 B), pacing (24 B), `lost` (8 B), `reordering` and `failure` (8 B with padding)
/// and the queue's `head` (256 + 80 + 24 + 8 + 8 = 376 = 6 × 64 − 8); the queue's two ranges
/// lines 6 and 7, its length word and the statistics line 8 (the queue is 144 B: 376 + 144 =
/// 520); the cold fields after the three counters every segment writes.
#[test]
fn hot_fields_come_first() {
    type C = Connection;
    assert_eq!(offset_of!(C, handshake_retries) + 4, LINE);
    assert_eq!(offset_of!(C, rto_at), LINE);
    assert_eq!(offset_of!(C, recovery), 2 * LINE);
    assert_eq!(offset_of!(C, rtt), 3 * LINE);
    assert_eq!(offset_of!(C, rcv), 4 * LINE);
    assert_eq!(offset_of!(C, rtx), 6 * LINE - 8);
    assert_eq!(offset_of!(C, stats), 8 * LINE + 8);
    let hot_end = offset_of!(C, stats) + offset_of!(ConnStats, retransmissions);
    for (name, cold) in [
        ("rst_due", offset_of!(C, rst_due)),
        ("cc_seed", offset_of!(C, cc_seed)),
        ("cfg", offset_of!(C, cfg)),
    ] {
        assert!(
            cold >= hot_end,
            "{name} at {cold}, inside the hot block (ends {hot_end})"
        );
    }
    // The counters every segment writes lead the statistics.
    assert_eq!(offset_of!(ConnStats, segments_sent), 0);
    assert_eq!(offset_of!(ConnStats, data_segments_sent), 8);
    assert_eq!(offset_of!(ConnStats, rtt_samples), 16);
    // A connection is whole lines, and an absent end costs no tag.
    assert_eq!(size_of::<C>() % LINE, 0);
    assert_eq!(size_of::<Option<C>>(), size_of::<C>());
}

/// The queue's first range starts line 6: after the SYN is sent, the inline item's address is
/// the connection's plus 6 × 64 = 384, 8 B after the queue's start (its `head`): `smallvec`
/// keeps the inline items before its length word; this checks that it does.
#[test]
fn first_range_starts_a_line() {
    let mut c = Connection::connect(crate::tcp::TcpConfig::default(), crate::tcp::Seq(1000));
    let syn = c
        .poll_transmit(coaplab_cc::Instant::ZERO)
        .expect("the SYN is due");
    assert!(syn.segment.syn);
    assert_eq!(c.rtx.len(), 1);
    let base = std::ptr::from_ref(&c) as usize;
    assert_eq!(c.rtx.as_ptr() as usize - base, 6 * LINE);
    assert_eq!(base % LINE, 0);
}

/// The retransmission queue is its `head` (8 B, first: `inline_fifo.rs`), the vector's length
/// word (8 B) and two 64-B ranges inline: 8 + 8 + 2 × 64 = 144 B.
#[test]
fn queue_holds_two_ranges_inline() {
    assert_eq!(size_of::<Sent>(), 64);
    assert_eq!(size_of::<InlineFifo<[Sent; 2]>>(), 8 + 8 + 2 * 64);
}
