//! The CoAP messages of the simulated workload, built with the real encoder
//! (`coaplab-wire`): packet sizes come from the encoding, and a capture re-encodes the same
//! fields into bytes.

use coaplab_cc::Instant;
use coaplab_wire::coap::{block_value, code, option, Message, OptionValue, Payload, Type};
use coaplab_wire::ip::{IPV4_HEADER, UDP_HEADER};

use crate::coap::security::Protection;
use crate::packet::{Packet, PacketKind};

/// The Observe option's number (RFC 7641 §2, Table 1).
pub const OBSERVE: u16 = 6;
/// The Max-Age option's number (RFC 7252 §5.10, Table 4).
pub const MAX_AGE: u16 = 14;

/// The resource path: a 7-byte Uri-Path value, so the option takes 8 bytes and the request's
/// CoAP message 12 bytes (docs/design.md §2, calibrated against the 1-client reference).
pub const URI_PATH: &[u8] = b"sensors";

/// The option numbers of Californium's `TransmissionCountOption`, FASOR's Rexmit-Cnt on the
/// feature branches of Californium's maintainer (github.com/boaks/californium: 0xfdfc = 65020
/// on `add_transmission_counter`, commit 6d5d715; 0xfe04 = 65028 on
/// `feature/transmission_counter`, commit 377100c; in no Californium release). Its value is the
/// *transmission* number, 1 for the first, in exactly one byte: `IntegerOptionDefinition(number,
/// "Retransmission Counter", true, 1, 1)`, whose check (`BaseOptionDefinition.assertValue`)
/// counts an integer's bytes without leading zeros, so 0 is refused (377100c's
/// `TransmissionCountOptionTest`: `create(0)` and `create(500)` throw; measured: Californium
/// 3.14.0 answers a zero byte with 4.02 Bad Option). Under these numbers coaplab sends the
/// draft's retransmission count plus one ([`rexmit_value`]) and reads it back minus one
/// ([`rexmit_ordinal`]) (docs/emulation.md, "FASOR's Rexmit-Cnt and Californium"); every other
/// number, the default 65000 among them, carries the count itself as RFC 7252 §3.2's shortest
/// uint (0: empty).
pub const CALIFORNIUM_REXMIT_CNT: [u16; 2] = [0xfdfc, 0xfe04];

/// The Rexmit-Cnt value sent for retransmission count `ordinal` under option `number`.
pub fn rexmit_value(number: u16, ordinal: u32) -> u32 {
    if CALIFORNIUM_REXMIT_CNT.contains(&number) {
        ordinal + 1
    } else {
        ordinal
    }
}

/// The retransmission count a Rexmit-Cnt `value` received under option `number` stands for.
pub fn rexmit_ordinal(number: u16, value: u32) -> u32 {
    if CALIFORNIUM_REXMIT_CNT.contains(&number) {
        value.saturating_sub(1)
    } else {
        value
    }
}

/// Builds requests and responses for one run.
#[derive(Clone, Debug)]
pub struct MessageFactory {
    /// Payload of a plain (non-block) response, bytes.
    pub response_bytes: u32,
    /// Block2 size exponent; block size = 2^(szx + 4) (RFC 7959 §2.2).
    pub block_szx: u8,
    /// Firmware resource size, bytes.
    pub resource_bytes: u64,
    /// Requests carry, and responses echo, FASOR's Rexmit-Cnt option (`fasor-rc`), with this
    /// option number (`coap.rexmit_cnt_option`, default [`option::REXMIT_CNT`]); `None`: no
    /// such option.
    pub rexmit_cnt: Option<u16>,
    /// Payload of each request, bytes (0: a plain GET; more: a POST carrying it, as the
    /// periodic sensor reports of docs/networks.md).
    pub request_payload: u32,
    /// The record layer or OSCORE around every message (`coap.security`): its bytes join
    /// each packet's `ip_bytes`.
    pub protection: Protection,
    /// `workload.kind = "observe"`: the requests (registrations) carry Observe = 0 and the
    /// responses and notifications an Observe sequence number (RFC 7641 §2), with Max-Age
    /// when it is not the default 60 s (`Some(seconds)`, RFC 7252 §5.10.5).
    pub observe: Option<Option<u32>>,
}

impl MessageFactory {
    pub fn block_size(&self) -> u32 {
        1 << (u32::from(self.block_szx) + 4)
    }

    /// Blocks needed for the firmware resource.
    pub fn blocks(&self) -> u32 {
        self.resource_bytes
            .div_ceil(u64::from(self.block_size()))
            .max(1) as u32
    }

    /// Encodes the CoAP message of `p` (options are built on the stack) and hands it to `f`.
    pub fn with_message<R>(&self, p: &Packet, f: impl FnOnce(&Message<'_>) -> R) -> R {
        let mut opts: [(u16, OptionValue<'_>); 5] = [(0, OptionValue::Uint(0)); 5];
        let mut n = 0;
        // Options in number order (RFC 7252 §3.1): Observe (6), Uri-Path (11), Max-Age (14).
        let observe = self.observe.filter(|_| {
            !matches!(
                p.kind,
                PacketKind::NotificationAck | PacketKind::Handshake { .. }
            )
        });
        if observe.is_some() {
            // A registration carries Observe = 0; a response or notification the value's
            // number as its sequence number (24 bits, RFC 7641 §4.4).
            let seq = if p.kind == PacketKind::Request {
                0
            } else {
                p.exchange & 0xFF_FFFF
            };
            opts[n] = (OBSERVE, OptionValue::Uint(seq));
            n += 1;
        }
        if matches!(p.kind, PacketKind::Request | PacketKind::ServerRequest) {
            opts[n] = (option::URI_PATH, OptionValue::Bytes(URI_PATH));
            n += 1;
        }
        if let Some(num) = p.block {
            opts[n] = (
                option::BLOCK2,
                OptionValue::Uint(block_value(num, p.more, self.block_szx)),
            );
            n += 1;
        }
        if let (Some(Some(secs)), false) = (observe, p.kind == PacketKind::Request) {
            opts[n] = (MAX_AGE, OptionValue::Uint(secs));
            n += 1;
        }
        if let (true, Some(number)) = (p.rexmit_cnt, self.rexmit_cnt) {
            opts[n] = (number, OptionValue::Uint(rexmit_value(number, p.ordinal)));
            n += 1;
        }
        let (mtype, code) = match p.kind {
            PacketKind::Request if p.non => (Type::Non, code::GET),
            PacketKind::Response if p.non => (Type::Non, code::CONTENT),
            PacketKind::Request if p.payload > 0 => (Type::Con, code::POST),
            PacketKind::Request => (Type::Con, code::GET),
            PacketKind::Response => (Type::Ack, code::CONTENT),
            PacketKind::Notification if p.non => (Type::Non, code::CONTENT),
            PacketKind::Notification => (Type::Con, code::CONTENT),
            PacketKind::NotificationAck => (Type::Ack, code::EMPTY),
            PacketKind::ServerRequest => (Type::Con, code::GET),
            PacketKind::ServerAck => (Type::Ack, code::CONTENT),
            // A handshake datagram carries no CoAP message (never sized or captured here).
            PacketKind::Handshake { .. } => (Type::Con, code::EMPTY),
        };
        let m = Message {
            mtype,
            code,
            message_id: p.mid,
            token: &[],
            options: &opts[..n],
            payload: Payload::Pattern(p.payload as usize),
        };
        f(&m)
    }

    fn sized(&self, mut p: Packet) -> Packet {
        p.ip_bytes = (IPV4_HEADER + UDP_HEADER + self.with_message(&p, |m| m.encoded_len())) as u32;
        // OSCORE's sequence number: the client's exchange index (a retransmission is the
        // same message).
        p.ip_bytes += self
            .protection
            .overhead(p.kind == PacketKind::Request, p.exchange);
        p
    }

    /// Copy `ordinal` of a client's CON GET (for block `block` in block-wise transfers).
    pub fn request(
        &self,
        client: u32,
        exchange: u32,
        ordinal: u32,
        mid: u16,
        block: Option<u32>,
        now: Instant,
    ) -> Packet {
        self.request_carrying(client, exchange, ordinal, mid, block, now, None)
    }

    /// [`MessageFactory::request`] whose payload is `payload` bytes instead of the group's
    /// `request_payload` when given (the reports of `workload.kind = "reporting"`, each of its
    /// own size).
    #[allow(clippy::too_many_arguments)]
    pub fn request_carrying(
        &self,
        client: u32,
        exchange: u32,
        ordinal: u32,
        mid: u16,
        block: Option<u32>,
        now: Instant,
        payload: Option<u16>,
    ) -> Packet {
        self.sized(Packet {
            kind: PacketKind::Request,
            client,
            exchange,
            ordinal,
            mid,
            block,
            payload: payload.map_or(self.request_payload, u32::from),
            rexmit_cnt: self.rexmit_cnt.is_some(),
            more: false,
            ip_bytes: 0,
            request_sent: now,
            non: false,
        })
    }

    /// Copy `ordinal` of an LwM2M Server's read (CON GET) to `client`, message id `mid`
    /// (`coap::lwm2m::requester`).
    pub fn server_read(&self, client: u32, mid: u16, ordinal: u32, now: Instant) -> Packet {
        self.sized(Packet {
            kind: PacketKind::ServerRequest,
            client,
            exchange: 0,
            ordinal,
            mid,
            block: None,
            payload: 0,
            rexmit_cnt: false,
            more: false,
            ip_bytes: 0,
            request_sent: now,
            non: false,
        })
    }

    /// The device's piggybacked ACK 2.05 to `read`, carrying `payload` bytes.
    pub fn read_answer(&self, read: &Packet, payload: u32) -> Packet {
        self.sized(Packet {
            kind: PacketKind::ServerAck,
            payload,
            ..*read
        })
    }

    /// A NON GET (RFC 7252 §4.3), answered by a NON 2.05 of the same size as the ACK.
    pub fn non_request(&self, client: u32, exchange: u32, mid: u16, now: Instant) -> Packet {
        Packet {
            non: true,
            ..self.request(client, exchange, 0, mid, None, now)
        }
    }

    /// An RFC 7641 notification (`coap::observe`) to `client`: value `seq` generated at
    /// `generated`, CON or NON, transmission `ordinal`, carrying `payload` bytes.
    #[allow(clippy::too_many_arguments)]
    pub fn notification(
        &self,
        client: u32,
        seq: u32,
        generated: Instant,
        con: bool,
        mid: u16,
        ordinal: u32,
        payload: u32,
    ) -> Packet {
        self.sized(Packet {
            kind: PacketKind::Notification,
            client,
            exchange: seq,
            ordinal,
            mid,
            block: None,
            payload,
            rexmit_cnt: false,
            more: false,
            ip_bytes: 0,
            request_sent: generated,
            non: !con,
        })
    }

    /// The client's empty ACK to CON notification `n` (RFC 7252 §4.2): 4 bytes of CoAP.
    pub fn notification_ack(&self, n: &Packet) -> Packet {
        self.sized(Packet {
            kind: PacketKind::NotificationAck,
            payload: 0,
            non: false,
            ..*n
        })
    }

    /// The piggybacked ACK 2.05 answering `req` (for block requests: that block, with the
    /// "more" flag; the last block carries the remainder).
    pub fn response(&self, req: &Packet) -> Packet {
        let (payload, more) = match req.block {
            None => (self.response_bytes, false),
            Some(num) => {
                let size = u64::from(self.block_size());
                let offset = u64::from(num) * size;
                let remaining = self.resource_bytes.saturating_sub(offset);
                (remaining.min(size) as u32, remaining > size)
            }
        };
        self.sized(Packet {
            kind: PacketKind::Response,
            payload,
            more,
            ..*req
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn factory(rexmit_cnt: Option<u16>) -> MessageFactory {
        MessageFactory {
            response_bytes: 60,
            block_szx: 4,
            resource_bytes: 1000,
            rexmit_cnt,
            request_payload: 0,
            protection: Protection::None,
            observe: None,
        }
    }

    #[test]
    fn spec_sizes_on_the_wire() {
        let f = factory(None);
        let req = f.request(0, 0, 0, 1, None, Instant::ZERO);
        // 20 (IPv4) + 8 (UDP) + 12 (CoAP: 4 header + 8 Uri-Path) = 40 B (docs/design.md §2).
        assert_eq!(req.ip_bytes, 40);
        // 20 + 8 + 65 (4 header + 0xFF + 60 payload) = 93 B (docs/design.md §2).
        assert_eq!(f.response(&req).ip_bytes, 93);
    }

    #[test]
    fn security_bytes_join_the_packet() {
        // OSCORE (RFC 8613, `security::sizes::oscore_overhead`): the 40 B GET + 14 = 54 B;
        // the 93 B response + 11 = 104 B.
        let f = MessageFactory {
            protection: Protection::Oscore,
            ..factory(None)
        };
        let req = f.request(0, 0, 0, 1, None, Instant::ZERO);
        assert_eq!((req.ip_bytes, f.response(&req).ip_bytes), (54, 104));
        // DTLS 1.2: 29 B per record (RFC 6347 §4.1's 13 + CCM-8's 8 + 8): 69 and 122 B.
        let f = MessageFactory {
            protection: Protection::Dtls12 { cid: false },
            ..factory(None)
        };
        let req = f.request(0, 0, 0, 1, None, Instant::ZERO);
        assert_eq!((req.ip_bytes, f.response(&req).ip_bytes), (69, 122));
    }

    #[test]
    fn odd_sized_block_transfer() {
        let f = factory(None);
        // 1000 B in 256 B blocks: 4 blocks, the last one 1000 − 768 = 232 B.
        assert_eq!(f.blocks(), 4);
        let last = f.response(&f.request(0, 3, 0, 1, Some(3), Instant::ZERO));
        assert_eq!((last.payload, last.more), (232, false));
        let first = f.response(&f.request(0, 0, 0, 1, Some(0), Instant::ZERO));
        assert_eq!((first.payload, first.more), (256, true));
        // Block 0, M=1, SZX 4: value 0x0C (1 byte); option header 0xD1 + ext 10 → 3 B.
        // CoAP = 4 + 3 + 1 + 256 = 264; IP = 292.
        assert_eq!(first.ip_bytes, 292);
    }

    #[test]
    fn rexmit_cnt_adds_its_option() {
        let f = factory(Some(option::REXMIT_CNT));
        // Ordinal 0: empty uint → option = header (delta 65000 − 11 = 64989 → 0xE0 + 2 ext) = 3 B.
        assert_eq!(f.request(0, 0, 0, 1, None, Instant::ZERO).ip_bytes, 43);
        // Ordinal 1: one value byte more.
        assert_eq!(f.request(0, 0, 1, 1, None, Instant::ZERO).ip_bytes, 44);
        // Californium's number 0xfe04 = 65028: delta 65017, still 0xE0 + 2 ext bytes; the
        // encoded option header carries 65017 − 269 = 64748 = 0xFCEC. Its value is the
        // transmission number (count + 1) in one byte (CALIFORNIUM_REXMIT_CNT): length nibble 1
        // → 0xE1 0xFC 0xEC 0x01 for the first transmission, one byte more than under 65000.
        let cf = factory(Some(0xfe04));
        let encode = |p: &Packet| {
            cf.with_message(p, |m| {
                let mut buf = Vec::new();
                m.encode(&mut buf);
                buf
            })
        };
        let req = cf.request(0, 0, 0, 1, None, Instant::ZERO);
        assert_eq!(req.ip_bytes, 44);
        // 4 header + 8 Uri-Path = 12; then the option.
        assert_eq!(&encode(&req)[12..], &[0xE1, 0xFC, 0xEC, 0x01]);
        // The echo in the response (a piggybacked ACK, no Uri-Path): 4 header, then the option,
        // its delta from 0: 65028 − 269 = 64759 = 0xFCF7.
        assert_eq!(&encode(&cf.response(&req))[4..8], &[0xE1, 0xFC, 0xF7, 0x01]);
        // The first retransmission (count 1) is transmission 2; under 65000 it is 0x01.
        let again = cf.request(0, 0, 1, 1, None, Instant::ZERO);
        assert_eq!(
            (again.ip_bytes, &encode(&again)[12..]),
            (44, &[0xE1, 0xFC, 0xEC, 0x02][..])
        );
        assert_eq!(
            (rexmit_ordinal(0xfe04, 2), rexmit_ordinal(0xfdfc, 1)),
            (1, 0)
        );
        assert_eq!(rexmit_ordinal(option::REXMIT_CNT, 2), 2);
        // 65020 (0xfdfc) likewise; 65002, any other number, keeps the empty uint (43 B).
        assert_eq!(
            factory(Some(0xfdfc))
                .request(0, 0, 0, 1, None, Instant::ZERO)
                .ip_bytes,
            44
        );
        assert_eq!(
            factory(Some(65002))
                .request(0, 0, 0, 1, None, Instant::ZERO)
                .ip_bytes,
            43
        );
    }
}
