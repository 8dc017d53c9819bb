//! The sizes of RFC 9177 Q-Block messages, from the real encoder (`coaplab-wire`): what each
//! [`QMsg`] of docs/model.md "Q-Block" puts on the wire, over IPv4/UDP. Tokens are left out,
//! as for every message of the simulated workload (`coap::messages`).

use coaplab_wire::coap::{block_value, code, option, Message, OptionValue, Payload, Type};
use coaplab_wire::ip::{IPV4_HEADER, UDP_HEADER};

use crate::coap::messages::URI_PATH;
use crate::packet::QMsg;

/// Q-Block1's option number (RFC 9177 §4.1 Table 1 and §12.1 Table 4, the IANA "CoAP Option
/// Numbers" registration: 19).
pub const Q_BLOCK1: u16 = 19;
/// Q-Block2's option number (RFC 9177 §4.1 Table 1, §12.1 Table 4: 31).
pub const Q_BLOCK2: u16 = 31;
/// Content-Format of a 4.08's payload, "application/missing-blocks+cbor-seq" (RFC 9177 §5;
/// §12.3, the IANA "CoAP Content-Formats" registration: 272).
pub const MISSING_BLOCKS_CBOR_SEQ: u32 = 272;
/// 2.31 Continue (RFC 7959 §2.9.1), 2.04 Changed, 4.08 Request Entity Incomplete (RFC 7959
/// §2.9.2), PUT (RFC 7252 §12.1.1).
const CONTINUE: u8 = 0x5F;
const CHANGED: u8 = 0x44;
const INCOMPLETE: u8 = 0x88;
const PUT: u8 = 0x03;

/// One transfer's body and direction.
#[derive(Clone, Copy, Debug)]
pub struct Body {
    pub bytes: u64,
    pub szx: u8,
    /// Q-Block1 (the client uploads) rather than Q-Block2.
    pub upload: bool,
}

impl Body {
    pub fn block_size(&self) -> u64 {
        1 << (u32::from(self.szx) + 4)
    }

    pub fn blocks(&self) -> u32 {
        self.bytes.div_ceil(self.block_size()).max(1) as u32
    }

    fn payload(&self, n: u32) -> (usize, bool) {
        let size = self.block_size();
        let left = self.bytes.saturating_sub(u64::from(n) * size);
        (left.min(size) as usize, left > size)
    }

    /// The IPv4 bytes of `msg`; a recovery request carries `missing`.
    pub fn ip_bytes(&self, msg: QMsg, missing: &[u32]) -> u32 {
        let opt = if self.upload { Q_BLOCK1 } else { Q_BLOCK2 };
        let path = (option::URI_PATH, OptionValue::Bytes(URI_PATH));
        let mut opts = vec![];
        let mut payload = 0usize;
        let c = match (msg, self.upload) {
            // Q-Block2: GET /sensors with Q-Block2 0 (RFC 9177 §4.4).
            (QMsg::Request, _) => {
                opts.extend([
                    path,
                    (opt, OptionValue::Uint(block_value(0, false, self.szx))),
                ]);
                code::GET
            }
            (QMsg::Block { n, .. }, upload) => {
                let (len, more) = self.payload(n);
                payload = len;
                if upload {
                    opts.push(path);
                }
                opts.push((opt, OptionValue::Uint(block_value(n, more, self.szx))));
                if upload {
                    PUT
                } else {
                    code::CONTENT
                }
            }
            // Q-Block1: 2.31 with the Q-Block1 of the set's last block; Q-Block2: GET for the
            // next block with M = 1, "send the rest" (RFC 9177 §4.4).
            (QMsg::Continue(n), true) => {
                opts.push((opt, OptionValue::Uint(block_value(n - 1, true, self.szx))));
                CONTINUE
            }
            (QMsg::Continue(n), false) => {
                opts.extend([
                    path,
                    (opt, OptionValue::Uint(block_value(n, true, self.szx))),
                ]);
                code::GET
            }
            // Q-Block1: 4.08 with the missing numbers as a CBOR sequence (RFC 9177 §5);
            // Q-Block2: GET with one Q-Block2 option per missing block (§4.4).
            (QMsg::Recover { .. }, true) => {
                opts.push((
                    option::CONTENT_FORMAT,
                    OptionValue::Uint(MISSING_BLOCKS_CBOR_SEQ),
                ));
                payload = missing.iter().map(|&n| cbor_uint_len(n)).sum();
                INCOMPLETE
            }
            (QMsg::Recover { .. }, false) => {
                opts.push(path);
                for &n in missing {
                    opts.push((opt, OptionValue::Uint(block_value(n, false, self.szx))));
                }
                code::GET
            }
            (QMsg::Final, _) => {
                let last = self.blocks() - 1;
                opts.push((opt, OptionValue::Uint(block_value(last, false, self.szx))));
                CHANGED
            }
        };
        let m = Message {
            mtype: Type::Non,
            code: c,
            message_id: 0,
            token: &[],
            options: &opts,
            payload: Payload::Pattern(payload),
        };
        (IPV4_HEADER + UDP_HEADER + m.encoded_len()) as u32
    }
}

/// Bytes of an unsigned integer in CBOR (RFC 8949 §3.1: < 24 in the initial byte, then 1, 2
/// or 4 more bytes).
fn cbor_uint_len(n: u32) -> usize {
    match n {
        0..=23 => 1,
        24..=255 => 2,
        256..=65535 => 3,
        _ => 5,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_by_hand() {
        let dl = Body {
            bytes: 1000,
            szx: 4,
            upload: false,
        };
        // 1000 B in 256 B blocks: 4.
        assert_eq!(dl.blocks(), 4);
        // Q-Block2 block 0, M = 1: header 4 + option 31 (delta 31 → 0xD0 + ext 18, 1-byte
        // value 0x0C) 3 + marker 1 + 256 = 264; + 28 = 292 B.
        assert_eq!(dl.ip_bytes(QMsg::Block { n: 0, again: false }, &[]), 292);
        // The last block, 3: 1000 − 768 = 232 B, value 0x34: 4 + 3 + 1 + 232 + 28 = 268 B.
        assert_eq!(dl.ip_bytes(QMsg::Block { n: 3, again: true }, &[]), 268);
        // GET: 4 + Uri-Path 8 + Q-Block2 0 (delta 20 → 0xD0 + ext 7, value SZX 4 = 0x04) 3
        // + 28 = 43.
        assert_eq!(dl.ip_bytes(QMsg::Request, &[]), 43);
        // Recovery GET of 1 and 2: 4 + 8 + (delta 20: 2 + value 0x14: 1) + (delta 0: 1 + 1)
        // = 17; + 28 = 45 B.
        assert_eq!(dl.ip_bytes(QMsg::Recover { list: 0 }, &[1, 2]), 45);
        let ul = Body { upload: true, ..dl };
        // 4.08: 4 + Content-Format 272 (delta 12: 1 + 2 value bytes) 3 + marker 1 + CBOR
        // [5, 30] = 1 + 2; + 28 = 39 B.
        assert_eq!(ul.ip_bytes(QMsg::Recover { list: 0 }, &[5, 30]), 39);
        // PUT block 0: 4 + Uri-Path 8 + Q-Block1 (delta 8: 1 + value 1) 2 + 1 + 256 + 28 = 299.
        assert_eq!(ul.ip_bytes(QMsg::Block { n: 0, again: false }, &[]), 299);
        // 2.04 with Q-Block1 3 (value 0x34): 4 + (0xD0, 6, 0x34) 3 + 28 = 35 B.
        assert_eq!(ul.ip_bytes(QMsg::Final, &[]), 35);
    }
}
