//! Loss recovery from duplicate ACKs (ns-3's `TcpRecoveryOps` role): RFC 5681 §3.2 fast
//! retransmit, RFC 6582 NewReno fast recovery with partial ACKs, and RFC 3042 Limited
//! Transmit. The connection reports ACKs; this decides what to retransmit and how `cwnd`
//! is inflated and deflated.

use coaplab_cc::Instant;

use super::congestion::controller::{Ack, Controller};
use super::seq::Seq;

/// RFC 5681 §3.2: the third duplicate ACK triggers fast retransmit.
pub const DUPACK_THRESHOLD: u32 = 3;

#[derive(Clone, Debug)]
pub struct Recovery {
    mss: u32,
    limited_transmit: bool,
    dupacks: u32,
    /// Duplicate ACKs that trigger fast retransmit: RFC 5681's 3; Linux's `tp->reordering`
    /// for rate-based controllers' connections (set by Linux's Reno reordering detection).
    dupthresh: u32,
    /// Rate-based controllers' connections: this duplicate ACK's count is Linux's
    /// `sacked_out` (capped), and fast retransmit is due whenever it reaches the threshold.
    linux_count: Option<u32>,
    in_recovery: bool,
    /// RFC 6582 `recover`, stored as one past the highest sequence number sent when
    /// recovery (or a timeout) began: an ACK at or beyond it covers all that data.
    recover: Seq,
}

/// What a duplicate ACK asks of the sender.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DupAck {
    /// Nothing to do.
    None,
    /// RFC 3042: new data may be sent beyond `cwnd` (see [`Recovery::allowance`]).
    LimitedTransmit,
    /// Third duplicate ACK: retransmit the first unacknowledged segment (RFC 6582 §3.2 step 2).
    FastRetransmit,
    /// In fast recovery: `cwnd` was inflated by one SMSS (step 3); send what it allows.
    Inflated,
}

/// What an ACK of new data means for recovery.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NewAck {
    /// Not in fast recovery: the congestion controller grows the window.
    Normal,
    /// RFC 6582 step 5: a partial ACK; retransmit the first unacknowledged segment.
    Partial,
    /// RFC 6582 step 4: a full ACK; fast recovery is over.
    Full,
}

impl Recovery {
    pub fn new(mss: u32, limited_transmit: bool, isn: Seq) -> Self {
        Recovery {
            mss,
            limited_transmit,
            dupacks: 0,
            dupthresh: DUPACK_THRESHOLD,
            linux_count: None,
            in_recovery: false,
            recover: isn,
        }
    }

    pub fn in_recovery(&self) -> bool {
        self.in_recovery
    }

    pub fn dupacks(&self) -> u32 {
        self.dupacks
    }

    /// Linux's duplicate-ACK count for rate-based controllers' connections, for the next
    /// duplicate ACK: the segments its Reno SACK emulation reports received (`sacked_out`,
    /// capped) with this ACK counted, and its threshold `tp->reordering`
    /// (`tcp_newreno_mark_lost` marks the head lost, `tcp_time_to_recover` starts recovery,
    /// once `sacked_out` ≥ `reordering`).
    pub fn set_linux_count(&mut self, sacked_segments: u32, dupthresh: u32) {
        self.linux_count = Some(sacked_segments);
        self.dupthresh = dupthresh;
    }

    /// Bytes the sender may have outstanding beyond `cwnd`: RFC 3042 allows `cwnd + 2·SMSS`
    /// on the first two duplicate ACKs.
    pub fn allowance(&self) -> u32 {
        if self.limited_transmit && !self.in_recovery && self.dupacks < self.dupthresh {
            self.dupacks * self.mss
        } else {
            0
        }
    }

    /// A duplicate ACK (RFC 5681 §2 definition) for `ack` with `flight` bytes outstanding
    /// and `snd_max` the next new sequence number.
    pub fn on_dup_ack(
        &mut self,
        now: Instant,
        ack: Seq,
        flight: u32,
        snd_max: Seq,
        cc: &mut dyn Controller,
    ) -> DupAck {
        let linux = self.linux_count.take();
        if self.in_recovery {
            cc.set_window(cc.window() + self.mss);
            return DupAck::Inflated;
        }
        self.dupacks = linux.unwrap_or(self.dupacks + 1);
        if self.dupacks < self.dupthresh {
            return if self.limited_transmit {
                DupAck::LimitedTransmit
            } else {
                DupAck::None
            };
        }
        if self.dupacks > self.dupthresh && linux.is_none() {
            return DupAck::None;
        }
        // Step 2: only if the ACK covers all data sent before the last recovery or timeout
        // (`recover`), so one loss event is not answered twice.
        if ack < self.recover {
            return DupAck::None;
        }
        self.in_recovery = true;
        self.recover = snd_max;
        let ssthresh = cc.on_congestion_event(now, flight);
        cc.set_window(ssthresh.saturating_add(DUPACK_THRESHOLD * self.mss));
        DupAck::FastRetransmit
    }

    /// An ACK of `a.bytes` new bytes arrived, up to `a.snd_una`; `flight` is what remains
    /// outstanding.
    pub fn on_new_ack(&mut self, a: &Ack, flight: u32, cc: &mut dyn Controller) -> NewAck {
        let (ack, acked) = (a.snd_una, a.bytes);
        self.dupacks = 0;
        if !self.in_recovery {
            cc.on_ack(a);
            return NewAck::Normal;
        }
        if ack >= self.recover {
            // Step 4, option 1: cwnd = min(ssthresh, max(FlightSize, SMSS) + SMSS).
            self.in_recovery = false;
            cc.set_window(cc.ssthresh().min(flight.max(self.mss) + self.mss));
            NewAck::Full
        } else {
            // Step 5: deflate by the amount acknowledged, add back one SMSS if at least one
            // SMSS was acknowledged.
            let mut w = cc.window().saturating_sub(acked);
            if acked >= self.mss {
                w += self.mss;
            }
            cc.set_window(w);
            NewAck::Partial
        }
    }

    /// A retransmission timeout: leave fast recovery and remember `snd_max` as `recover`
    /// (RFC 6582 §3.2 step 1 / §4.2), so duplicate ACKs for data sent before the timeout
    /// do not start a second fast retransmit.
    pub fn on_rto(&mut self, snd_max: Seq) {
        self.in_recovery = false;
        self.dupacks = 0;
        self.recover = snd_max;
    }
}
