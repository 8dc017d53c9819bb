//! CoAP over TCP message framing, RFC 8323 §3.2, and its signalling codes (§5).
//!
//! ```text
//! Len(4) | TKL(4) | extended length (0, 1, 2 or 4 bytes) | Code | Token | options | 0xFF payload
//! ```
//! `Len` counts options, payload marker and payload only. Len 0–12 is literal; 13 adds one
//! byte holding `Len − 13`; 14 two bytes holding `Len − 269`; 15 four bytes holding
//! `Len − 65805`. There is no version, type or Message ID: TCP provides reliability.

use std::fmt;

use crate::coap::{body_len, decode_body, write_body, DecodeError, OptionValue, Payload};

/// Signalling codes (RFC 8323 §5, class 7) and CSM options (§5.3).
pub mod signal {
    /// 7.01 Capabilities and Settings Message.
    pub const CSM: u8 = 0xE1;
    /// 7.02 Ping.
    pub const PING: u8 = 0xE2;
    /// 7.03 Pong.
    pub const PONG: u8 = 0xE3;
    /// 7.04 Release.
    pub const RELEASE: u8 = 0xE4;
    /// 7.05 Abort.
    pub const ABORT: u8 = 0xE5;
    /// CSM option Max-Message-Size (§5.3.1), uint.
    pub const MAX_MESSAGE_SIZE: u16 = 2;
    /// CSM option Block-Wise-Transfer (§5.3.2), empty.
    pub const BLOCK_WISE_TRANSFER: u16 = 4;
    /// Max-Message-Size assumed before a peer's CSM arrives (§5.3.1), bytes.
    pub const DEFAULT_MAX_MESSAGE_SIZE: u32 = 1152;
}

/// Extended-length thresholds of §3.2.
const LEN_8: usize = 13;
const LEN_16: usize = 269;
const LEN_32: usize = 65805;

/// A CoAP-over-TCP message, borrowed (encodes without allocating).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TcpMessage<'a> {
    pub code: u8,
    /// 0–8 bytes.
    pub token: &'a [u8],
    /// Sorted by number.
    pub options: &'a [(u16, OptionValue<'a>)],
    pub payload: Payload<'a>,
}

/// Bytes of the extended length field for body length `len`.
fn ext_len(len: usize) -> usize {
    match len {
        0..LEN_8 => 0,
        LEN_8..LEN_16 => 1,
        LEN_16..LEN_32 => 2,
        _ => 4,
    }
}

impl TcpMessage<'_> {
    /// The `Len` value: options + marker + payload, bytes.
    pub fn body_len(&self) -> usize {
        body_len(self.options, &self.payload)
    }

    /// Framed size, bytes.
    pub fn encoded_len(&self) -> usize {
        let body = self.body_len();
        2 + ext_len(body) + self.token.len() + body
    }

    /// Appends the frame to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        debug_assert!(self.token.len() <= 8);
        let body = self.body_len();
        let tkl = self.token.len() as u8;
        match body {
            0..LEN_8 => out.push(((body as u8) << 4) | tkl),
            LEN_8..LEN_16 => out.extend_from_slice(&[(13 << 4) | tkl, (body - LEN_8) as u8]),
            LEN_16..LEN_32 => {
                out.push((14 << 4) | tkl);
                out.extend_from_slice(&((body - LEN_16) as u16).to_be_bytes());
            }
            _ => {
                // The 4-byte form tops out at 65805 + u32::MAX; nothing the simulator sends
                // comes near it, but truncating silently would corrupt the stream.
                debug_assert!(body - LEN_32 <= u32::MAX as usize);
                out.push((15 << 4) | tkl);
                out.extend_from_slice(&((body - LEN_32) as u32).to_be_bytes());
            }
        }
        out.push(self.code);
        out.extend_from_slice(self.token);
        write_body(self.options, &self.payload, out);
    }

    pub fn to_vec(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(self.encoded_len());
        self.encode(&mut v);
        v
    }
}

/// A parsed frame (owned).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodedTcp {
    pub code: u8,
    pub token: Vec<u8>,
    pub options: Vec<(u16, Vec<u8>)>,
    pub payload: Vec<u8>,
}

/// Why bytes are not a well-formed frame: a framing error, or a malformed body. RFC 8323 §5.6
/// answers both with an Abort.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameError {
    /// TKL 9–15 (reserved, §3.2).
    BadTokenLength(u8),
    /// Options or payload are malformed (RFC 7252 §3.1 rules).
    Body(DecodeError),
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FrameError::BadTokenLength(n) => write!(f, "token length {n}: allowed 0-8"),
            FrameError::Body(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for FrameError {}

/// The total size of the frame at the start of `bytes`, once its header is complete
/// (`Ok(None)`: more bytes are needed to tell).
pub fn frame_len(bytes: &[u8]) -> Result<Option<usize>, FrameError> {
    let Some(&first) = bytes.first() else {
        return Ok(None);
    };
    let tkl = first & 0x0F;
    if tkl > 8 {
        return Err(FrameError::BadTokenLength(tkl));
    }
    let nib = usize::from(first >> 4);
    let ext = match nib {
        13 => 1,
        14 => 2,
        15 => 4,
        _ => 0,
    };
    let Some(e) = bytes.get(1..1 + ext) else {
        return Ok(None);
    };
    let body = match nib {
        13 => usize::from(e[0]) + LEN_8,
        14 => usize::from(u16::from_be_bytes([e[0], e[1]])) + LEN_16,
        15 => u32::from_be_bytes([e[0], e[1], e[2], e[3]]) as usize + LEN_32,
        n => n,
    };
    Ok(Some(1 + ext + 1 + usize::from(tkl) + body))
}

/// Parses the first frame of a byte stream: the frame and the bytes it took, or `Ok(None)`
/// if the stream does not hold a complete frame yet.
pub fn decode_frame(bytes: &[u8]) -> Result<Option<(DecodedTcp, usize)>, FrameError> {
    let Some(total) = frame_len(bytes)? else {
        return Ok(None);
    };
    if bytes.len() < total {
        return Ok(None);
    }
    let tkl = usize::from(bytes[0] & 0x0F);
    let ext = match bytes[0] >> 4 {
        13 => 1,
        14 => 2,
        15 => 4,
        _ => 0,
    };
    let code_at = 1 + ext;
    let token = bytes[code_at + 1..code_at + 1 + tkl].to_vec();
    let (options, payload) =
        decode_body(&bytes[code_at + 1 + tkl..total]).map_err(FrameError::Body)?;
    Ok(Some((
        DecodedTcp {
            code: bytes[code_at],
            token,
            options,
            payload,
        },
        total,
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coap::{code, option};

    fn with_body(payload: usize) -> TcpMessage<'static> {
        TcpMessage {
            code: code::CONTENT,
            token: &[],
            options: &[],
            payload: Payload::Pattern(payload),
        }
    }

    /// Every length form at its boundaries. A payload of `n` bytes makes Len = n + 1 (marker).
    /// (Len, expected header bytes before Code):
    /// 0 → [0x00]; 12 → [0xC0]; 13 → [0xD0, 0]; 268 → [0xD0, 255]; 269 → [0xE0, 0, 0];
    /// 65804 → [0xE0, 0xFF, 0xFF] (65804 − 269 = 65535); 65805 → [0xF0, 0, 0, 0, 0];
    /// 102401 → [0xF0, 0, 0, 0x8E, 0xF4] (102401 − 65805 = 36596 = 0x8EF4).
    #[test]
    fn every_length_form_round_trips() {
        let cases: [(usize, &[u8]); 8] = [
            (0, &[0x00]),
            (12, &[0xC0]),
            (13, &[0xD0, 0]),
            (268, &[0xD0, 255]),
            (269, &[0xE0, 0, 0]),
            (65804, &[0xE0, 0xFF, 0xFF]),
            (65805, &[0xF0, 0, 0, 0, 0]),
            (102401, &[0xF0, 0, 0, 0x8E, 0xF4]),
        ];
        for (len, header) in cases {
            let m = with_body(len.saturating_sub(1));
            assert_eq!(m.body_len(), len);
            let bytes = m.to_vec();
            assert_eq!(bytes.len(), m.encoded_len(), "Len {len}");
            assert_eq!(&bytes[..header.len()], header, "Len {len}");
            assert_eq!(bytes[header.len()], code::CONTENT);
            assert_eq!(frame_len(&bytes), Ok(Some(bytes.len())));
            let (d, used) = decode_frame(&bytes).unwrap().unwrap();
            assert_eq!(used, bytes.len());
            assert_eq!(d.code, code::CONTENT);
            assert_eq!(d.payload.len(), len.saturating_sub(1));
            // Same filler as coap.rs (shared `write_body`): 'a'..'z' repeating.
            assert!(d
                .payload
                .iter()
                .enumerate()
                .all(|(i, b)| *b == b'a' + (i % 26) as u8));
        }
    }

    #[test]
    fn csm_by_hand() {
        // Max-Message-Size (2) = 1152 = 0x0480: header delta 2, len 2 → 0x22, value 04 80.
        // Block-Wise-Transfer (4): delta 2, len 0 → 0x20. Len = 4 → first byte 0x40, Code 0xE1.
        let opts = [
            (signal::MAX_MESSAGE_SIZE, OptionValue::Uint(1152)),
            (signal::BLOCK_WISE_TRANSFER, OptionValue::Bytes(&[])),
        ];
        let m = TcpMessage {
            code: signal::CSM,
            token: &[],
            options: &opts,
            payload: Payload::Pattern(0),
        };
        assert_eq!(m.to_vec(), [0x40, 0xE1, 0x22, 0x04, 0x80, 0x20]);
        let (d, _) = decode_frame(&m.to_vec()).unwrap().unwrap();
        assert_eq!(d.options, vec![(2, vec![0x04, 0x80]), (4, vec![])],);
    }

    #[test]
    fn ping_pong_release_abort_are_two_bytes() {
        for c in [signal::PING, signal::PONG, signal::RELEASE, signal::ABORT] {
            let m = TcpMessage {
                code: c,
                token: &[],
                options: &[],
                payload: Payload::Pattern(0),
            };
            assert_eq!(m.to_vec(), [0x00, c]);
        }
    }

    #[test]
    fn incomplete_prefixes_need_more_and_frames_follow_each_other() {
        let opts = [(option::URI_PATH, OptionValue::Bytes(b"sensors"))];
        let get = TcpMessage {
            code: code::GET,
            token: &[0xAB, 0xCD],
            options: &opts,
            payload: Payload::Pattern(0),
        };
        // Len 8, TKL 2 → 0x82; Code 0x01; token; Uri-Path delta 11 len 7 → 0xB7.
        let a = get.to_vec();
        assert_eq!(&a[..5], &[0x82, 0x01, 0xAB, 0xCD, 0xB7]);
        let b = with_body(300).to_vec();
        let mut stream = a.clone();
        stream.extend_from_slice(&b);
        for cut in 0..a.len() {
            assert_eq!(decode_frame(&stream[..cut]), Ok(None), "prefix {cut}");
        }
        let (first, used) = decode_frame(&stream).unwrap().unwrap();
        assert_eq!(
            (first.code, first.token.as_slice(), used),
            (code::GET, &[0xAB, 0xCD][..], a.len())
        );
        for cut in used..stream.len() {
            assert_eq!(decode_frame(&stream[used..cut]), Ok(None));
        }
        let (second, used2) = decode_frame(&stream[used..]).unwrap().unwrap();
        assert_eq!((second.payload.len(), used2), (300, b.len()));
    }

    #[test]
    fn malformed_frames_are_typed_errors() {
        // TKL 9 is reserved.
        assert_eq!(frame_len(&[0x09, 0x01]), Err(FrameError::BadTokenLength(9)));
        // Known from the first byte alone, before the rest of the frame arrives.
        assert_eq!(decode_frame(&[0xFF]), Err(FrameError::BadTokenLength(15)));
        // Len 1 holding only a payload marker: empty payload after the marker.
        assert_eq!(
            decode_frame(&[0x10, 0x45, 0xFF]),
            Err(FrameError::Body(DecodeError::EmptyPayload))
        );
        // Len 1 with option nibble 15 (not the marker): reserved.
        assert_eq!(
            decode_frame(&[0x10, 0x45, 0xF1]),
            Err(FrameError::Body(DecodeError::ReservedNibble))
        );
        // Len 2: an option announcing 5 value bytes with 1 present.
        assert_eq!(
            decode_frame(&[0x20, 0x45, 0x15, 0x00]),
            Err(FrameError::Body(DecodeError::TruncatedOption))
        );
        assert!(FrameError::BadTokenLength(9)
            .to_string()
            .contains("allowed 0-8"));
    }
}
