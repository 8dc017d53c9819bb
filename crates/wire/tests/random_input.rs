//! Every decoder on bounded random input: no panic, and what decodes is consistent. A seeded
//! generator (SplitMix64) makes each run the same; 320 000 inputs and 20 000 packets take
//! about 3.5 s in a debug build on one core.
//!
//! The decoders are the CoAP message parser (RFC 7252 §3), the RFC 8323 frame parser and its
//! length peek; the IPv4 / UDP / TCP side of the crate only writes headers, so their writers are
//! driven with random fields instead and every checksum they produce is verified (RFC 1071:
//! the one's-complement sum over a correct header, or pseudo-header plus segment, is 0xFFFF,
//! so the checksum of it is 0).

use coaplab_wire::coap::{decode, Message, OptionValue, Payload, Type};
use coaplab_wire::coap_tcp::{decode_frame, frame_len, TcpMessage};
use coaplab_wire::ip::{checksum, write_ipv4, write_udp_datagram};
use coaplab_wire::tcp::{write_tcp_segment, TcpFlags};

/// SplitMix64 (Steele, Lea, Flood 2014).
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

/// A random token (0–8 bytes) and up to `max_options − 1` options with random values
/// (0–299 bytes) under sorted random numbers, drawn in this order.
fn token_and_options(r: &mut SplitMix, max_options: usize) -> (Vec<u8>, Vec<(u16, Vec<u8>)>) {
    let token = {
        let n = r.below(9);
        r.bytes(n)
    };
    let values: Vec<Vec<u8>> = (0..r.below(max_options))
        .map(|_| {
            let n = r.below(300);
            r.bytes(n)
        })
        .collect();
    let mut numbers: Vec<u16> = (0..values.len()).map(|_| r.next() as u16).collect();
    numbers.sort_unstable();
    (token, numbers.into_iter().zip(values).collect())
}

/// A valid CoAP message with random fields, as bytes (the seed corpus for mutations).
fn valid_coap(r: &mut SplitMix) -> Vec<u8> {
    let (token, raw_options) = token_and_options(r, 5);
    let options: Vec<(u16, OptionValue)> = raw_options
        .iter()
        .map(|(n, v)| (*n, OptionValue::Bytes(v)))
        .collect();
    let payload = {
        let n = r.below(40);
        r.bytes(n)
    };
    Message {
        mtype: [Type::Con, Type::Non, Type::Ack, Type::Rst][r.below(4)],
        code: r.next() as u8,
        message_id: r.next() as u16,
        token: &token,
        options: &options,
        payload: Payload::Bytes(&payload),
    }
    .to_vec()
}

fn valid_frame(r: &mut SplitMix) -> Vec<u8> {
    let (token, raw_options) = token_and_options(r, 4);
    let options: Vec<(u16, OptionValue)> = raw_options
        .iter()
        .map(|(n, v)| (*n, OptionValue::Bytes(v)))
        .collect();
    // Up to 70 000 payload bytes: every length form (4-bit, 8-, 16- and 32-bit extended).
    let len = match r.below(16) {
        0 => r.below(70_000),
        1..=5 => r.below(300),
        _ => r.below(20),
    };
    let payload = r.bytes(len);
    TcpMessage {
        code: r.next() as u8,
        token: &token,
        options: &options,
        payload: Payload::Bytes(&payload),
    }
    .to_vec()
}

/// Flips, overwrites, truncates or extends `bytes` at random.
fn mutate(r: &mut SplitMix, mut bytes: Vec<u8>) -> Vec<u8> {
    for _ in 0..1 + r.below(4) {
        match r.below(4) {
            0 if !bytes.is_empty() => {
                let i = r.below(bytes.len());
                bytes[i] ^= 1 << r.below(8);
            }
            1 if !bytes.is_empty() => {
                let i = r.below(bytes.len());
                bytes[i] = r.next() as u8;
            }
            2 => bytes.truncate(r.below(bytes.len() + 1)),
            _ => {
                let extra = {
                    let n = r.below(8);
                    r.bytes(n)
                };
                bytes.extend_from_slice(&extra);
            }
        }
    }
    bytes
}

fn check_coap(bytes: &[u8]) {
    if let Ok(d) = decode(bytes) {
        assert!(d.token.len() <= 8);
        let option_bytes: usize = d.options.iter().map(|(_, v)| v.len()).sum();
        // Header 4 + token + at least one byte per option + its value + payload.
        assert!(
            4 + d.token.len() + d.options.len() + option_bytes + d.payload.len() <= bytes.len()
        );
        assert!(d.options.windows(2).all(|w| w[0].0 <= w[1].0));
    }
}

fn check_frame(bytes: &[u8]) {
    let peek = frame_len(bytes);
    match decode_frame(bytes) {
        Ok(Some((d, used))) => {
            assert!(used <= bytes.len() && d.token.len() <= 8);
            assert_eq!(peek, Ok(Some(used)));
        }
        Ok(None) => {
            assert!(matches!(peek, Ok(None)) || matches!(peek, Ok(Some(n)) if n > bytes.len()))
        }
        Err(_) => {}
    }
}

#[test]
fn coap_decoder_on_random_and_mutated_input() {
    let mut r = SplitMix(0xC0A9);
    for i in 0..200_000 {
        let bytes = if i % 2 == 0 {
            let n = r.below(64);
            r.bytes(n)
        } else {
            let v = valid_coap(&mut r);
            if i % 6 == 1 {
                // Unmutated: must decode.
                assert!(decode(&v).is_ok(), "{v:?}");
            }
            mutate(&mut r, v)
        };
        check_coap(&bytes);
    }
}

#[test]
fn rfc8323_framing_on_random_and_mutated_input() {
    let mut r = SplitMix(0x8323);
    for i in 0..100_000 {
        let bytes = if i % 2 == 0 {
            let n = r.below(64);
            r.bytes(n)
        } else {
            let v = valid_frame(&mut r);
            if i % 6 == 1 {
                let (_, used) = decode_frame(&v).unwrap().unwrap();
                assert_eq!(used, v.len());
                // Every proper prefix is incomplete, never an error or a different frame.
                let cut = r.below(v.len());
                assert_eq!(decode_frame(&v[..cut]), Ok(None));
            }
            mutate(&mut r, v)
        };
        check_frame(&bytes);
    }
    // Length fields at their extremes: a 32-bit extended length of u32::MAX asks for more
    // bytes, it does not allocate or overflow.
    for first in [0xF0u8, 0xF8, 0xE0, 0xD0] {
        let bytes = [first, 0xFF, 0xFF, 0xFF, 0xFF, 0x45, 0, 0, 0, 0, 0, 0, 0, 0];
        check_frame(&bytes);
    }
}

#[test]
fn ip_udp_tcp_writers_produce_verifiable_checksums() {
    let mut r = SplitMix(0x1471);
    for _ in 0..20_000 {
        let src = (r.bytes(4).try_into().unwrap(), r.next() as u16);
        let dst = (r.bytes(4).try_into().unwrap(), r.next() as u16);
        let payload = {
            let n = r.below(1500);
            r.bytes(n)
        };
        let id = r.next() as u16;

        let mut ip = Vec::new();
        write_ipv4(&mut ip, src.0, dst.0, 17, id, payload.len());
        assert_eq!(ip.len(), 20);
        assert_eq!(checksum(&ip), 0);

        let mut udp = Vec::new();
        write_udp_datagram(&mut udp, src, dst, id, &payload);
        assert_eq!(udp.len(), 28 + payload.len());
        assert_eq!(checksum(&udp[..20]), 0);
        assert_eq!(checksum(&transport_with_pseudo(&udp, 17)), 0);

        let mss = (r.below(2) == 0).then(|| r.next() as u16);
        let mut tcp = Vec::new();
        write_tcp_segment(
            &mut tcp,
            src,
            dst,
            id,
            r.next() as u32,
            r.next() as u32,
            TcpFlags(r.next() as u8 & 0x3F),
            r.next() as u16,
            mss,
            &payload,
        );
        let header = if mss.is_some() { 24 } else { 20 };
        assert_eq!(tcp.len(), 20 + header + payload.len());
        assert_eq!(usize::from(tcp[32] >> 4) * 4, header);
        assert_eq!(checksum(&ip_header_of(&tcp)), 0);
        assert_eq!(checksum(&transport_with_pseudo(&tcp, 6)), 0);
    }
    // The checksum itself on random data of every small length, odd ones included.
    for n in 0..2048 {
        let data = r.bytes(n);
        let c = checksum(&data);
        let mut with = data.clone();
        if n % 2 == 1 {
            with.push(0); // RFC 1071: an odd length is padded with a zero byte
        }
        with.extend_from_slice(&c.to_be_bytes());
        assert_eq!(checksum(&with), 0);
    }
}

fn ip_header_of(packet: &[u8]) -> Vec<u8> {
    packet[..20].to_vec()
}

/// Pseudo-header (RFC 768, RFC 9293 §3.1) followed by the transport header and payload.
fn transport_with_pseudo(packet: &[u8], protocol: u8) -> Vec<u8> {
    let seg = &packet[20..];
    let mut v = Vec::new();
    v.extend_from_slice(&packet[12..20]);
    v.extend_from_slice(&[0, protocol]);
    v.extend_from_slice(&(seg.len() as u16).to_be_bytes());
    v.extend_from_slice(seg);
    if v.len() % 2 == 1 {
        v.push(0);
    }
    v
}
