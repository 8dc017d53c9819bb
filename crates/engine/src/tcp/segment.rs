//! A TCP segment as the model exchanges it: header fields that matter, payload as a length.
//! The bytes (headers with checksums, payload from the application's stream) are produced by
//! `coaplab-wire` only when a capture is written.

use super::seq::Seq;

/// One segment (RFC 9293 §3.1). `len` counts payload bytes only; SYN and FIN each occupy one
/// more sequence number ([`Segment::seq_len`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    pub seq: Seq,
    /// The acknowledgement number, present iff the ACK flag is set.
    pub ack: Option<Seq>,
    pub syn: bool,
    pub fin: bool,
    /// RST: the sender has no connection for this segment's (RFC 9293 §3.10.7.1) or aborts.
    pub rst: bool,
    /// Payload bytes.
    pub len: u32,
    /// MSS option (RFC 9293 §3.7.1), carried on SYN and SYN-ACK only.
    pub mss: Option<u16>,
}

impl Segment {
    /// Sequence space the segment occupies: payload + SYN + FIN.
    pub fn seq_len(&self) -> u32 {
        self.len + u32::from(self.syn) + u32::from(self.fin)
    }
    /// One past the last sequence number the segment occupies.
    pub fn end(&self) -> Seq {
        self.seq + self.seq_len()
    }
    /// Header bytes on the wire: 20, plus 4 with the MSS option.
    pub fn header_bytes(&self) -> u32 {
        20 + if self.mss.is_some() { 4 } else { 0 }
    }
    /// A pure ACK: no payload, no SYN/FIN/RST.
    pub fn is_pure_ack(&self) -> bool {
        self.seq_len() == 0 && !self.rst
    }

    /// The reset that answers `seg` where no connection exists for it (RFC 9293 §3.10.7.1,
    /// CLOSED; also LISTEN for a non-SYN, §3.10.7.2): `<SEQ=SEG.ACK><CTL=RST>` if `seg`
    /// carries an ACK, else `<SEQ=0><ACK=SEG.SEQ+SEG.LEN><CTL=RST,ACK>`; nothing for a
    /// reset (a RST is never answered).
    pub fn reset_for(seg: &Segment) -> Option<Segment> {
        if seg.rst {
            return None;
        }
        let (seq, ack) = match seg.ack {
            Some(a) => (a, None),
            None => (Seq(0), Some(seg.end())),
        };
        Some(Segment {
            seq,
            ack,
            syn: false,
            fin: false,
            rst: true,
            len: 0,
            mss: None,
        })
    }
}

/// A segment leaving a connection, with what the sender knows about it (simulator metadata,
/// not on the wire).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transmit {
    pub segment: Segment,
    /// This sequence range was sent before.
    pub retransmission: bool,
    /// Sent by fast retransmit / a partial ACK in fast recovery (RFC 6582).
    pub fast_retransmission: bool,
}
