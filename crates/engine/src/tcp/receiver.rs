//! The receiving half of a connection: in-order delivery with out-of-order ranges kept, and
//! when to acknowledge (RFC 1122 §4.2.3.2, RFC 5681 §4.2, docs/design.md §4.2): every second full-sized
//! segment at once, otherwise after the constant delayed-ACK timer; at once for out-of-order
//! and duplicate segments and for a segment that fills a gap.

use coaplab_cc::{Duration, Instant};

use super::segment::Segment;
use super::seq::Seq;

/// How a segment's data related to what was already received.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DataArrival {
    /// Extended the in-order stream.
    InOrder,
    /// Beyond a gap: kept, and a duplicate ACK is due.
    OutOfOrder,
    /// Everything in it had been received already.
    Duplicate,
}

#[derive(Clone, Debug)]
pub struct Receiver {
    /// Initial receive sequence number (the peer's SYN).
    irs: Seq,
    rcv_nxt: Seq,
    /// Out-of-order ranges `[start, end)`, sorted, disjoint, all beyond `rcv_nxt`.
    ooo: Vec<(Seq, Seq)>,
    /// Sequence number of the peer's FIN, once seen.
    fin_at: Option<Seq>,
    /// In-order bytes received since the last ACK went out.
    unacked: u32,
    mss: u32,
    delay: Duration,
    ack_now: bool,
    delack_at: Option<Instant>,
    /// Acknowledge every in-order segment at once (`tcp.ack_every_segment`).
    every_segment: bool,
}

impl Receiver {
    /// Starts receiving after the peer's SYN at `irs`; the SYN itself is to be acknowledged.
    pub fn new(irs: Seq, mss: u32, delay: Duration) -> Self {
        Receiver {
            irs,
            rcv_nxt: irs + 1,
            ooo: Vec::new(),
            fin_at: None,
            unacked: 0,
            mss,
            delay,
            ack_now: true,
            delack_at: None,
            every_segment: false,
        }
    }

    /// Acknowledges every in-order segment at once instead of every second full one.
    pub fn ack_every_segment(mut self, on: bool) -> Self {
        self.every_segment = on;
        self
    }

    pub fn rcv_nxt(&self) -> Seq {
        self.rcv_nxt
    }

    /// In-order payload bytes received so far.
    pub fn delivered(&self) -> u64 {
        let fin = u32::from(self.fin_received());
        u64::from(self.rcv_nxt - self.irs - 1 - fin)
    }

    /// The peer's FIN arrived in order.
    pub fn fin_received(&self) -> bool {
        self.fin_at.is_some_and(|f| self.rcv_nxt > f)
    }

    pub fn ack_due(&self) -> bool {
        self.ack_now
    }

    pub fn delack_deadline(&self) -> Option<Instant> {
        self.delack_at
    }

    /// Whether every sequence number `seg` occupies was received before (ground truth for the
    /// unnecessary-retransmission metric, docs/design.md §6).
    pub fn already_has(&self, seg: &Segment) -> bool {
        let (start, end) = (seg.seq, seg.end());
        end <= self.rcv_nxt || self.ooo.iter().any(|&(a, b)| a <= start && end <= b)
    }

    /// Takes the data (and FIN) of `seg`.
    pub fn on_segment(&mut self, now: Instant, seg: &Segment) -> DataArrival {
        let start = seg.seq + u32::from(seg.syn);
        let end = seg.end();
        if seg.fin {
            self.fin_at = Some(end + u32::MAX); // end − 1: the FIN's own number
        }
        if end <= self.rcv_nxt || self.already_has(seg) {
            self.ack_now = true;
            return DataArrival::Duplicate;
        }
        if start > self.rcv_nxt {
            self.insert_ooo(start, end);
            self.ack_now = true;
            return DataArrival::OutOfOrder;
        }
        let filled_gap = !self.ooo.is_empty();
        let before = self.rcv_nxt;
        self.rcv_nxt = end;
        while let Some(&(a, b)) = self.ooo.first() {
            if a > self.rcv_nxt {
                break;
            }
            self.rcv_nxt = self.rcv_nxt.max(b);
            self.ooo.remove(0);
        }
        self.unacked += self.rcv_nxt - before;
        if filled_gap || seg.fin || self.every_segment || self.unacked >= 2 * self.mss {
            self.ack_now = true;
        } else if self.delack_at.is_none() {
            self.delack_at = Some(now + self.delay);
        }
        DataArrival::InOrder
    }

    /// The SYN-ACK was retransmitted to us (our ACK of it was lost): acknowledge again.
    pub fn on_duplicate_syn(&mut self) {
        self.ack_now = true;
    }

    /// The delayed-ACK timer fired.
    pub fn on_timeout(&mut self, now: Instant) {
        if self.delack_at.is_some_and(|t| t <= now) {
            self.delack_at = None;
            self.ack_now = true;
        }
    }

    /// A segment carrying `ack = rcv_nxt` went out (pure or riding on data).
    pub fn on_ack_sent(&mut self) {
        self.ack_now = false;
        self.delack_at = None;
        self.unacked = 0;
    }

    fn insert_ooo(&mut self, start: Seq, end: Seq) {
        let i = self.ooo.partition_point(|&(a, _)| a < start);
        self.ooo.insert(i, (start, end));
        // Merge overlapping or adjacent neighbours.
        let mut merged: Vec<(Seq, Seq)> = Vec::with_capacity(self.ooo.len());
        for &(a, b) in &self.ooo {
            match merged.last_mut() {
                Some(last) if a <= last.1 => last.1 = last.1.max(b),
                _ => merged.push((a, b)),
            }
        }
        self.ooo = merged;
    }
}
