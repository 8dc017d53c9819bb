//! CoAP over TCP (RFC 8323, docs/design.md §4.1) at the application layer: the messages of the
//! workload, framed with the real encoder (`coaplab-wire::coap_tcp`), and each direction's
//! byte stream as the sequence of messages written into it. TCP moves byte counts; a receiver
//! takes a message once the stream has delivered all of its bytes, and a capture re-encodes
//! the same messages to slice segment payloads out of the stream.

use coaplab_wire::coap::{code, option, OptionValue, Payload};
use coaplab_wire::coap_tcp::{signal, TcpMessage};

use super::messages::{MAX_AGE, OBSERVE, URI_PATH};

/// Max-Message-Size each side announces in its CSM (RFC 8323 §5.3.1), bytes: large enough
/// for the firmware resource as one message (docs/design.md §4.3 "no block-wise").
pub const MAX_MESSAGE_SIZE: u32 = 1 << 20;

/// A message of the workload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TcpMsg {
    /// 7.01 CSM with Max-Message-Size and Block-Wise-Transfer (RFC 8323 §5.3).
    Csm,
    /// GET with the workload's Uri-Path, empty token (one request outstanding per connection).
    Request,
    /// 2.05 Content with `payload` bytes.
    Response { payload: u32 },
    /// An Observe registration (RFC 7641 §2 over RFC 8323 §7): the GET with Observe = 0 (an
    /// empty option, RFC 7252 §3.2's uint) before its Uri-Path.
    Register,
    /// A notification (the registration's response first): 2.05 with the value's number as
    /// its Observe sequence number (24 bits, RFC 7641 §4.4), Max-Age when not the default
    /// (RFC 7252 §5.10.5), `payload` bytes. `generated` is the value's generation time (the
    /// simulation's bookkeeping, not on the wire).
    Notification {
        seq: u32,
        generated: coaplab_cc::Instant,
        max_age: Option<u32>,
        payload: u32,
    },
}

impl TcpMsg {
    /// Frames the message (options on the stack) and hands it to `f`.
    pub fn with_message<R>(&self, f: impl FnOnce(&TcpMessage<'_>) -> R) -> R {
        match *self {
            TcpMsg::Csm => {
                let opts = [
                    (
                        signal::MAX_MESSAGE_SIZE,
                        OptionValue::Uint(MAX_MESSAGE_SIZE),
                    ),
                    (signal::BLOCK_WISE_TRANSFER, OptionValue::Bytes(&[])),
                ];
                f(&TcpMessage {
                    code: signal::CSM,
                    token: &[],
                    options: &opts,
                    payload: Payload::Pattern(0),
                })
            }
            TcpMsg::Request => f(&TcpMessage {
                code: code::GET,
                token: &[],
                options: &[(option::URI_PATH, OptionValue::Bytes(URI_PATH))],
                payload: Payload::Pattern(0),
            }),
            TcpMsg::Response { payload } => f(&TcpMessage {
                code: code::CONTENT,
                token: &[],
                options: &[],
                payload: Payload::Pattern(payload as usize),
            }),
            TcpMsg::Register => f(&TcpMessage {
                code: code::GET,
                token: &[],
                options: &[
                    (OBSERVE, OptionValue::Uint(0)),
                    (option::URI_PATH, OptionValue::Bytes(URI_PATH)),
                ],
                payload: Payload::Pattern(0),
            }),
            TcpMsg::Notification {
                seq,
                max_age,
                payload,
                ..
            } => {
                let observe = (OBSERVE, OptionValue::Uint(seq & 0xFF_FFFF));
                let with_age = [observe, (MAX_AGE, OptionValue::Uint(max_age.unwrap_or(0)))];
                f(&TcpMessage {
                    code: code::CONTENT,
                    token: &[],
                    options: &with_age[..if max_age.is_some() { 2 } else { 1 }],
                    payload: Payload::Pattern(payload as usize),
                })
            }
        }
    }

    /// Framed size, bytes.
    pub fn framed_len(&self) -> u32 {
        self.with_message(|m| m.encoded_len() as u32)
    }
}

/// One direction of a connection as the application sees it.
///
/// Messages the receiver has taken are forgotten (the stream's memory stays bounded however long
/// the connection lives), unless the stream keeps everything for a capture (`keeping_all`).
///
/// `repr(C)`: the queue first — its `head`, then `smallvec`'s inline messages, then its length
/// word — and the counters and the flag right after the length word, so that the front of a
/// stream (`head`, the first message; the length word and the counters) is two cache lines, not
/// three; the CSM's range (read on retransmissions only) last (docs/performance.md, "TCP at
/// scale: the connection's hot and cold fields").
#[derive(Clone, Debug, Default)]
#[repr(C)]
pub struct MessageStream {
    /// `(stream offset of the first byte, message)`, in writing order, from message `base` on.
    /// Four inline (a stream rarely holds more than a CSM and one exchange's message).
    messages: crate::sim::inline_fifo::InlineFifo<[(u64, TcpMsg); 4]>,
    /// Messages `..read` were taken by the receiver.
    read: usize,
    base: usize,
    written: u64,
    keep_all: bool,
    /// Stream bytes `[start, end)` of the CSM, once written.
    csm: Option<(u64, u64)>,
}

impl MessageStream {
    /// A stream that keeps every message (its bytes can be rebuilt for a capture).
    pub fn keeping_all() -> Self {
        MessageStream {
            keep_all: true,
            ..Self::default()
        }
    }

    /// Appends `msg`; returns its framed size (what the application writes to TCP).
    pub fn push(&mut self, msg: TcpMsg) -> u32 {
        let len = msg.framed_len();
        if msg == TcpMsg::Csm && self.csm.is_none() {
            self.csm = Some((self.written, self.written + u64::from(len)));
        }
        self.messages.push_back((self.written, msg));
        self.written += u64::from(len);
        len
    }

    /// Bytes written so far.
    pub fn written(&self) -> u64 {
        self.written
    }

    /// The next message whose last byte is within the first `delivered` bytes of the stream.
    pub fn poll_complete(&mut self, delivered: u64) -> Option<TcpMsg> {
        let i = self.read - self.base;
        let &(start, msg) = self.messages.get(i)?;
        let end = self.messages.get(i + 1).map_or(self.written, |m| m.0);
        (end <= delivered || (end == start && start <= delivered)).then(|| {
            self.read += 1;
            if !self.keep_all {
                self.messages.pop_front();
                self.base += 1;
            }
            msg
        })
    }

    /// Whether stream bytes `[from, to)` include any byte of the CSM.
    pub fn overlaps_csm(&self, from: u64, to: u64) -> bool {
        self.csm
            .is_some_and(|(start, end)| start < to && from < end)
    }

    fn spans(&self, from: u64, to: u64) -> impl Iterator<Item = (u64, u64, TcpMsg)> + '_ {
        debug_assert!(self.keep_all, "message bytes are kept only for captures");
        let first = self
            .messages
            .partition_point(|m| m.0 <= from)
            .saturating_sub(1);
        self.messages[first..]
            .iter()
            .enumerate()
            .map(move |(k, &(start, msg))| {
                let end = self
                    .messages
                    .get(first + k + 1)
                    .map_or(self.written, |m| m.0);
                (start, end, msg)
            })
            .take_while(move |&(start, _, _)| start < to)
    }

    /// Appends stream bytes `[from, from + len)` to `out` (for captures).
    pub fn bytes(&self, from: u64, len: u32, out: &mut Vec<u8>) {
        let to = from + u64::from(len);
        let mut frame = Vec::new();
        for (start, end, msg) in self.spans(from, to) {
            if end <= from {
                continue;
            }
            frame.clear();
            msg.with_message(|m| m.encode(&mut frame));
            let a = from.max(start) - start;
            let b = to.min(end) - start;
            out.extend_from_slice(&frame[a as usize..b as usize]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The stream's counters follow its queue (8-B `head` + 4 × 32-B messages + 8-B length
    /// word = 144 B), so that they share a line with the queue's length word.
    #[test]
    fn counters_follow_the_queue() {
        use std::mem::offset_of;
        assert_eq!(offset_of!(MessageStream, messages), 0);
        assert_eq!(offset_of!(MessageStream, read), 8 + 4 * 32 + 8);
        assert!(offset_of!(MessageStream, csm) > offset_of!(MessageStream, keep_all));
    }

    #[test]
    fn message_sizes_match_rfc8323_framing_by_hand() {
        // CSM: Max-Message-Size (option 2) = 2^20 → 3-byte uint; header 1 byte (delta 2,
        // len 3) → 4 bytes; Block-Wise-Transfer (option 4): delta 2, len 0 → 1 byte.
        // Len = 5 → Len/TKL 1 byte + Code 1 byte + 5 = 7 bytes.
        assert_eq!(TcpMsg::Csm.framed_len(), 7);
        // GET: Uri-Path "sensors" = 1 + 7 = 8 bytes of options; Len = 8 → 1 + 1 + 8 = 10.
        assert_eq!(TcpMsg::Request.framed_len(), 10);
        // 2.05 with 60 bytes: Len = 1 (marker) + 60 = 61 ≥ 13 → nibble 13 + 1 extension
        // byte; 1 + 1 + 1 + 61 = 64.
        assert_eq!(TcpMsg::Response { payload: 60 }.framed_len(), 64);
        // Firmware: Len = 102401 ≥ 65805 → nibble 15 + 4 extension bytes; 1 + 4 + 1 + 102401
        // = 102407 bytes = 400 full 256-byte segments + 7 bytes → 401 segments (docs/design.md §5).
        assert_eq!(TcpMsg::Response { payload: 102400 }.framed_len(), 102407);
        // Observe registration: Observe = 0 is an empty option (delta 6, len 0: 1 byte), then
        // Uri-Path (delta 5, len 7: 1 + 7); Len = 9 → 1 + 1 + 9 = 11.
        assert_eq!(TcpMsg::Register.framed_len(), 11);
        let n = |seq, max_age| TcpMsg::Notification {
            seq,
            generated: coaplab_cc::Instant::ZERO,
            max_age,
            payload: 60,
        };
        // Value 0 (the registration's response): Observe empty (1 byte) + marker + 60 = 62
        // ≥ 13 → nibble 13 + 1 extension byte; 1 + 1 + 1 + 62 = 65.
        assert_eq!(n(0, None).framed_len(), 65);
        // Value 1: a 1-byte sequence number (Observe 2 bytes); Len 63 → 66.
        assert_eq!(n(1, None).framed_len(), 66);
        // Value 256: 2 bytes (Observe 3 bytes) → 67; Max-Age 30 s (delta 8, len 1: 2 bytes)
        // → 69.
        assert_eq!(n(256, None).framed_len(), 67);
        assert_eq!(n(256, Some(30)).framed_len(), 69);
    }

    #[test]
    fn stream_yields_messages_once_complete_and_slices_bytes() {
        let mut s = MessageStream::keeping_all();
        assert_eq!(s.push(TcpMsg::Csm), 7);
        assert_eq!(s.push(TcpMsg::Request), 10);
        assert_eq!(s.poll_complete(6), None);
        assert_eq!(s.poll_complete(7), Some(TcpMsg::Csm));
        assert_eq!(s.poll_complete(16), None);
        assert_eq!(s.poll_complete(17), Some(TcpMsg::Request));
        assert_eq!(s.poll_complete(17), None);
        assert!(s.overlaps_csm(0, 1) && s.overlaps_csm(6, 10) && !s.overlaps_csm(7, 17));
        let mut whole = Vec::new();
        s.bytes(0, 17, &mut whole);
        let mut parts = Vec::new();
        s.bytes(0, 5, &mut parts);
        s.bytes(5, 12, &mut parts);
        assert_eq!(whole, parts);
        // Len/TKL of the CSM: Len 5, TKL 0 → 0x50; Code 7.01 = 0xE1.
        assert_eq!(&whole[..2], &[0x50, 0xE1]);
    }
}

#[cfg(test)]
mod bounded {
    use super::*;

    #[test]
    fn taken_messages_are_forgotten_unless_kept_for_a_capture() {
        let mut s = MessageStream::default();
        s.push(TcpMsg::Csm);
        for _ in 0..1000 {
            s.push(TcpMsg::Request);
        }
        // 7 + 1000 × 10 bytes delivered: every message is taken, none is kept.
        let mut n = 0;
        while s.poll_complete(7 + 10_000).is_some() {
            n += 1;
        }
        assert_eq!((n, s.messages.len()), (1001, 0));
        // The CSM's bytes are still known (retransmissions of them are counted).
        assert!(s.overlaps_csm(6, 8) && !s.overlaps_csm(7, 100));
    }
}
