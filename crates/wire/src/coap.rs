//! CoAP messages, RFC 7252 §3, with the Block2 option of RFC 7959 §2.
//!
//! [`Message`] borrows everything and encodes without allocating; [`Message::encoded_len`] is
//! what the simulator uses for packet sizes on its hot path. [`decode`] parses bytes into an
//! owned [`Decoded`] with a typed [`DecodeError`] for malformed input.

use std::fmt;

/// CoAP version 1 (RFC 7252 §3).
pub const VERSION: u8 = 1;
/// Payload marker (RFC 7252 §3).
pub const PAYLOAD_MARKER: u8 = 0xFF;

/// Option numbers, RFC 7252 §5.10 and RFC 7959 §2.1.
pub mod option {
    pub const URI_PATH: u16 = 11;
    pub const CONTENT_FORMAT: u16 = 12;
    pub const BLOCK2: u16 = 23;
    pub const BLOCK1: u16 = 27;
    pub const SIZE2: u16 = 28;
    /// FASOR's Rexmit-Cnt echo (draft-ietf-core-fasor-02 §4.4). The draft assigns no number:
    /// 65000 is from RFC 7252 §12.2's experimental-use range, even (elective: a server that
    /// does not know it ignores it) with the Unsafe bit clear (safe to forward).
    pub const REXMIT_CNT: u16 = 65000;
}

/// Codes, RFC 7252 §12.1 (class << 5 | detail).
pub mod code {
    pub const EMPTY: u8 = 0x00;
    pub const GET: u8 = 0x01;
    /// 0.02 POST (RFC 7252 §12.1.1).
    pub const POST: u8 = 0x02;
    pub const CONTENT: u8 = 0x45; // 2.05
}

/// Message types, RFC 7252 §3.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Type {
    Con = 0,
    Non = 1,
    Ack = 2,
    Rst = 3,
}

/// An option value: opaque/string bytes, or a uint encoded in the fewest bytes (RFC 7252 §3.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OptionValue<'a> {
    Bytes(&'a [u8]),
    Uint(u32),
}

impl OptionValue<'_> {
    fn len(&self) -> usize {
        match self {
            OptionValue::Bytes(b) => b.len(),
            OptionValue::Uint(v) => uint_len(*v),
        }
    }
    fn write(&self, out: &mut Vec<u8>) {
        match self {
            OptionValue::Bytes(b) => out.extend_from_slice(b),
            OptionValue::Uint(v) => out.extend_from_slice(&v.to_be_bytes()[4 - uint_len(*v)..]),
        }
    }
}

/// Bytes of a minimal uint encoding: 0 → empty (RFC 7252 §3.2).
pub fn uint_len(v: u32) -> usize {
    (4 - v.leading_zeros() as usize / 8).min(4)
}

/// RFC 7959 §2.2 block option value: `NUM << 4 | M << 3 | SZX`.
pub fn block_value(num: u32, more: bool, szx: u8) -> u32 {
    (num << 4) | (u32::from(more) << 3) | u32::from(szx & 0x7)
}

/// The payload: borrowed bytes, or `Pattern(n)`: `n` bytes of a deterministic filler (the
/// simulator does not carry payload bytes; a capture shows the pattern).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Payload<'a> {
    Bytes(&'a [u8]),
    Pattern(usize),
}

impl Payload<'_> {
    fn len(&self) -> usize {
        match self {
            Payload::Bytes(b) => b.len(),
            Payload::Pattern(n) => *n,
        }
    }
}

/// A CoAP message. `options` must be sorted by number (RFC 7252 §3.1 delta encoding).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Message<'a> {
    pub mtype: Type,
    pub code: u8,
    pub message_id: u16,
    /// 0–8 bytes (RFC 7252 §3).
    pub token: &'a [u8],
    pub options: &'a [(u16, OptionValue<'a>)],
    pub payload: Payload<'a>,
}

/// Size of a delta or length nibble's extension (RFC 7252 §3.1): < 13 → 0, < 269 → 1, else 2.
fn ext_len(v: usize) -> usize {
    match v {
        0..=12 => 0,
        13..=268 => 1,
        _ => 2,
    }
}

fn nibble(v: usize) -> u8 {
    match v {
        0..=12 => v as u8,
        13..=268 => 13,
        _ => 14,
    }
}

fn write_ext(v: usize, out: &mut Vec<u8>) {
    match v {
        0..=12 => {}
        13..=268 => out.push((v - 13) as u8),
        _ => out.extend_from_slice(&((v - 269) as u16).to_be_bytes()),
    }
}

/// Bytes of options (delta-encoded, RFC 7252 §3.1) plus payload marker and payload: the
/// part of a message RFC 7252 and RFC 8323 frame identically.
pub(crate) fn body_len(options: &[(u16, OptionValue<'_>)], payload: &Payload<'_>) -> usize {
    let mut len = 0;
    let mut prev = 0u16;
    for (number, value) in options {
        let delta = usize::from(number - prev);
        let vlen = value.len();
        len += 1 + ext_len(delta) + ext_len(vlen) + vlen;
        prev = *number;
    }
    let plen = payload.len();
    if plen > 0 {
        len += 1 + plen;
    }
    len
}

/// Appends options, payload marker and payload (see [`body_len`]).
pub(crate) fn write_body(
    options: &[(u16, OptionValue<'_>)],
    payload: &Payload<'_>,
    out: &mut Vec<u8>,
) {
    debug_assert!(
        options.windows(2).all(|w| w[0].0 <= w[1].0),
        "options must be sorted"
    );
    let mut prev = 0u16;
    for (number, value) in options {
        let delta = usize::from(number - prev);
        let vlen = value.len();
        out.push((nibble(delta) << 4) | nibble(vlen));
        write_ext(delta, out);
        write_ext(vlen, out);
        value.write(out);
        prev = *number;
    }
    match *payload {
        Payload::Bytes(b) if !b.is_empty() => {
            out.push(PAYLOAD_MARKER);
            out.extend_from_slice(b);
        }
        Payload::Pattern(n) if n > 0 => {
            out.push(PAYLOAD_MARKER);
            out.extend((0..n).map(|i| b'a' + (i % 26) as u8));
        }
        _ => {}
    }
}

impl Message<'_> {
    /// Encoded size in bytes, without allocating.
    pub fn encoded_len(&self) -> usize {
        4 + self.token.len() + body_len(self.options, &self.payload)
    }

    /// Appends the encoding to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        debug_assert!(self.token.len() <= 8);
        out.push((VERSION << 6) | ((self.mtype as u8) << 4) | self.token.len() as u8);
        out.push(self.code);
        out.extend_from_slice(&self.message_id.to_be_bytes());
        out.extend_from_slice(self.token);
        write_body(self.options, &self.payload, out);
    }

    pub fn to_vec(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(self.encoded_len());
        self.encode(&mut v);
        v
    }
}

/// A parsed message (owned).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decoded {
    pub mtype: Type,
    pub code: u8,
    pub message_id: u16,
    pub token: Vec<u8>,
    pub options: Vec<(u16, Vec<u8>)>,
    pub payload: Vec<u8>,
}

impl Decoded {
    /// The first option `number` as a uint.
    pub fn uint_option(&self, number: u16) -> Option<u32> {
        let (_, v) = self.options.iter().find(|(n, _)| *n == number)?;
        Some(v.iter().fold(0u32, |acc, b| (acc << 8) | u32::from(*b)))
    }
}

/// Why bytes are not a well-formed CoAP message (RFC 7252 §3, §4.2 "message format error").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DecodeError {
    /// Fewer than 4 bytes.
    TruncatedHeader,
    /// Version field is not 1.
    BadVersion(u8),
    /// Token length 9–15 (reserved).
    BadTokenLength(u8),
    /// The message ends inside the token.
    TruncatedToken,
    /// Option delta or length nibble 15 without being the payload marker.
    ReservedNibble,
    /// The message ends inside an option.
    TruncatedOption,
    /// A payload marker followed by an empty payload.
    EmptyPayload,
    /// Option number above 65535.
    OptionNumberOverflow,
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::TruncatedHeader => {
                write!(f, "truncated header: a CoAP message has at least 4 bytes")
            }
            DecodeError::BadVersion(v) => write!(f, "version {v}: only version 1 is defined"),
            DecodeError::BadTokenLength(n) => write!(f, "token length {n}: allowed 0-8"),
            DecodeError::TruncatedToken => write!(f, "message ends inside the token"),
            DecodeError::ReservedNibble => write!(f, "option delta/length 15 is reserved"),
            DecodeError::TruncatedOption => write!(f, "message ends inside an option"),
            DecodeError::EmptyPayload => write!(f, "payload marker followed by an empty payload"),
            DecodeError::OptionNumberOverflow => write!(f, "option number above 65535"),
        }
    }
}

impl std::error::Error for DecodeError {}

fn read_ext(nib: u8, bytes: &[u8], pos: &mut usize) -> Result<usize, DecodeError> {
    match nib {
        0..=12 => Ok(usize::from(nib)),
        13 => {
            let b = *bytes.get(*pos).ok_or(DecodeError::TruncatedOption)?;
            *pos += 1;
            Ok(usize::from(b) + 13)
        }
        14 => {
            let s = bytes
                .get(*pos..*pos + 2)
                .ok_or(DecodeError::TruncatedOption)?;
            *pos += 2;
            Ok(usize::from(u16::from_be_bytes([s[0], s[1]])) + 269)
        }
        _ => Err(DecodeError::ReservedNibble),
    }
}

/// Parsed options: `(number, value)` in order.
pub(crate) type OwnedOptions = Vec<(u16, Vec<u8>)>;

/// Parses options and payload (RFC 7252 §3.1) up to the end of `bytes`.
pub(crate) fn decode_body(bytes: &[u8]) -> Result<(OwnedOptions, Vec<u8>), DecodeError> {
    let mut pos = 0;
    let mut options = Vec::new();
    let mut number = 0usize;
    let mut payload = Vec::new();
    while pos < bytes.len() {
        let head = bytes[pos];
        pos += 1;
        if head == PAYLOAD_MARKER {
            if pos == bytes.len() {
                return Err(DecodeError::EmptyPayload);
            }
            payload = bytes[pos..].to_vec();
            break;
        }
        let delta = read_ext(head >> 4, bytes, &mut pos)?;
        let len = read_ext(head & 0x0F, bytes, &mut pos)?;
        number += delta;
        if number > usize::from(u16::MAX) {
            return Err(DecodeError::OptionNumberOverflow);
        }
        let value = bytes
            .get(pos..pos + len)
            .ok_or(DecodeError::TruncatedOption)?;
        pos += len;
        options.push((number as u16, value.to_vec()));
    }
    Ok((options, payload))
}

/// Parses one CoAP message.
pub fn decode(bytes: &[u8]) -> Result<Decoded, DecodeError> {
    if bytes.len() < 4 {
        return Err(DecodeError::TruncatedHeader);
    }
    let version = bytes[0] >> 6;
    if version != VERSION {
        return Err(DecodeError::BadVersion(version));
    }
    let mtype = match (bytes[0] >> 4) & 3 {
        0 => Type::Con,
        1 => Type::Non,
        2 => Type::Ack,
        _ => Type::Rst,
    };
    let tkl = bytes[0] & 0x0F;
    if tkl > 8 {
        return Err(DecodeError::BadTokenLength(tkl));
    }
    let pos = 4 + usize::from(tkl);
    let token = bytes
        .get(4..pos)
        .ok_or(DecodeError::TruncatedToken)?
        .to_vec();
    let (options, payload) = decode_body(&bytes[pos..])?;
    Ok(Decoded {
        mtype,
        code: bytes[1],
        message_id: u16::from_be_bytes([bytes[2], bytes[3]]),
        token,
        options,
        payload,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// docs/design.md §2's request: CON GET, no token, one Uri-Path option taking 8 bytes on the wire
    /// (1 header byte: delta 11, length 7 → 0xB7; then a 7-byte value) → 4 + 8 = 12 bytes.
    #[test]
    fn spec_request_is_12_bytes() {
        let opts = [(option::URI_PATH, OptionValue::Bytes(b"sensors"))];
        let m = Message {
            mtype: Type::Con,
            code: code::GET,
            message_id: 0x1234,
            token: &[],
            options: &opts,
            payload: Payload::Pattern(0),
        };
        let bytes = m.to_vec();
        assert_eq!(
            bytes,
            [0x40, 0x01, 0x12, 0x34, 0xB7, b's', b'e', b'n', b's', b'o', b'r', b's']
        );
        assert_eq!(m.encoded_len(), 12);
    }

    /// docs/design.md §2's response: ACK 2.05, no token, 0xFF + 60-byte payload → 4 + 1 + 60 = 65 bytes.
    #[test]
    fn spec_response_is_65_bytes() {
        let m = Message {
            mtype: Type::Ack,
            code: code::CONTENT,
            message_id: 7,
            token: &[],
            options: &[],
            payload: Payload::Pattern(60),
        };
        let bytes = m.to_vec();
        assert_eq!(m.encoded_len(), 65);
        assert_eq!(&bytes[..5], &[0x60, 0x45, 0x00, 0x07, 0xFF]);
    }

    #[test]
    fn extended_delta_and_length_forms() {
        // Block2 (23) after Uri-Path (11): delta 12 → nibble 12. Block2 alone: delta 23 → 13 + ext 10.
        // Rexmit-Cnt 65000 after 23: delta 64977 → 14 + 2 bytes (64977 − 269 = 64708 = 0xFCC4).
        let long = [b'x'; 300]; // length 300 → 14 + (300 − 269 = 31 = 0x001F)
        let opts = [
            (option::BLOCK2, OptionValue::Uint(block_value(20, true, 4))),
            (option::BLOCK2, OptionValue::Bytes(&long[..20])),
            (option::REXMIT_CNT, OptionValue::Uint(0)),
            (option::REXMIT_CNT, OptionValue::Bytes(&long)),
        ];
        let m = Message {
            mtype: Type::Con,
            code: code::GET,
            message_id: 1,
            token: &[1, 2],
            options: &opts,
            payload: Payload::Bytes(b"hi"),
        };
        let bytes = m.to_vec();
        assert_eq!(bytes.len(), m.encoded_len());
        // Block2 value 20<<4 | 1<<3 | 4 = 332 = 0x014C (2 bytes); header 0xD2, ext 10.
        assert_eq!(&bytes[6..10], &[0xD2, 10, 0x01, 0x4C]);
        // Second Block2: delta 0, length 20 → 0x0D, ext 7.
        assert_eq!(&bytes[10..12], &[0x0D, 7]);
        // Rexmit-Cnt 0: delta 64977 → 0xE0, 0xFC, 0xC4, empty value.
        assert_eq!(&bytes[32..35], &[0xE0, 0xFC, 0xC4]);
        let d = decode(&bytes).unwrap();
        assert_eq!(d.token, vec![1, 2]);
        assert_eq!(d.options.len(), 4);
        assert_eq!(d.uint_option(option::BLOCK2), Some(332));
        assert_eq!(d.options[3].1.len(), 300);
        assert_eq!(d.uint_option(option::REXMIT_CNT), Some(0));
        assert_eq!(d.payload, b"hi");
    }

    #[test]
    fn uint_encoding_is_minimal() {
        assert_eq!(
            [
                uint_len(0),
                uint_len(1),
                uint_len(255),
                uint_len(256),
                uint_len(65536),
                uint_len(u32::MAX)
            ],
            [0, 1, 1, 2, 3, 4]
        );
    }

    #[test]
    fn malformed_input_is_a_typed_error() {
        assert_eq!(decode(&[0x40, 1, 0]), Err(DecodeError::TruncatedHeader));
        assert_eq!(decode(&[0x80, 1, 0, 0]), Err(DecodeError::BadVersion(2)));
        assert_eq!(
            decode(&[0x49, 1, 0, 0]),
            Err(DecodeError::BadTokenLength(9))
        );
        assert_eq!(
            decode(&[0x42, 1, 0, 0, 1]),
            Err(DecodeError::TruncatedToken)
        );
        assert_eq!(
            decode(&[0x40, 1, 0, 0, 0xF1, 0]),
            Err(DecodeError::ReservedNibble)
        );
        assert_eq!(
            decode(&[0x40, 1, 0, 0, 0xB7, b'a']),
            Err(DecodeError::TruncatedOption)
        );
        assert_eq!(
            decode(&[0x40, 1, 0, 0, 0xD0]),
            Err(DecodeError::TruncatedOption)
        );
        assert_eq!(
            decode(&[0x40, 1, 0, 0, 0xFF]),
            Err(DecodeError::EmptyPayload)
        );
    }
}
