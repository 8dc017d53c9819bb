//! IPv4 (RFC 791) and UDP (RFC 768) headers with their checksums (RFC 1071).

/// IPv4 header without options, bytes.
pub const IPV4_HEADER: usize = 20;
/// UDP header, bytes.
pub const UDP_HEADER: usize = 8;
/// TCP header without options, bytes (RFC 9293 §3.1).
pub const TCP_HEADER: usize = 20;
/// IP protocol numbers.
pub const PROTO_UDP: u8 = 17;
pub const PROTO_TCP: u8 = 6;
/// CoAP's UDP port, RFC 7252 §6.1.
pub const COAP_PORT: u16 = 5683;

/// The RFC 1071 one's-complement sum of `data`, folded, starting from `initial`.
pub(crate) fn sum16(data: &[u8], initial: u32) -> u32 {
    let mut sum = initial;
    let mut chunks = data.chunks_exact(2);
    for c in &mut chunks {
        sum += u32::from(u16::from_be_bytes([c[0], c[1]]));
    }
    if let [last] = chunks.remainder() {
        sum += u32::from(*last) << 8;
    }
    sum
}

pub(crate) fn fold(mut sum: u32) -> u16 {
    while sum > 0xFFFF {
        sum = (sum & 0xFFFF) + (sum >> 16);
    }
    !(sum as u16)
}

/// The Internet checksum of `data` (RFC 1071).
pub fn checksum(data: &[u8]) -> u16 {
    fold(sum16(data, 0))
}

/// Appends an IPv4 header for a payload of `payload_len` bytes (TTL 64, DF set).
pub fn write_ipv4(
    out: &mut Vec<u8>,
    src: [u8; 4],
    dst: [u8; 4],
    protocol: u8,
    id: u16,
    payload_len: usize,
) {
    let start = out.len();
    let total = (IPV4_HEADER + payload_len) as u16;
    out.extend_from_slice(&[0x45, 0]);
    out.extend_from_slice(&total.to_be_bytes());
    out.extend_from_slice(&id.to_be_bytes());
    out.extend_from_slice(&[0x40, 0, 64, protocol, 0, 0]);
    out.extend_from_slice(&src);
    out.extend_from_slice(&dst);
    let c = checksum(&out[start..start + IPV4_HEADER]);
    out[start + 10..start + 12].copy_from_slice(&c.to_be_bytes());
}

/// Pseudo-header sum for UDP/TCP checksums (RFC 768, RFC 9293 §3.1).
pub(crate) fn pseudo(src: [u8; 4], dst: [u8; 4], protocol: u8, len: usize) -> u32 {
    let mut p = [0u8; 12];
    p[..4].copy_from_slice(&src);
    p[4..8].copy_from_slice(&dst);
    p[9] = protocol;
    p[10..12].copy_from_slice(&(len as u16).to_be_bytes());
    sum16(&p, 0)
}

/// Appends a complete IPv4/UDP datagram carrying `payload`.
pub fn write_udp_datagram(
    out: &mut Vec<u8>,
    src: ([u8; 4], u16),
    dst: ([u8; 4], u16),
    ip_id: u16,
    payload: &[u8],
) {
    let udp_len = UDP_HEADER + payload.len();
    write_ipv4(out, src.0, dst.0, PROTO_UDP, ip_id, udp_len);
    let start = out.len();
    out.extend_from_slice(&src.1.to_be_bytes());
    out.extend_from_slice(&dst.1.to_be_bytes());
    out.extend_from_slice(&(udp_len as u16).to_be_bytes());
    out.extend_from_slice(&[0, 0]);
    out.extend_from_slice(payload);
    let mut c = fold(sum16(
        &out[start..],
        pseudo(src.0, dst.0, PROTO_UDP, udp_len),
    ));
    if c == 0 {
        c = 0xFFFF; // RFC 768: a computed zero is sent as all ones
    }
    out[start + 6..start + 8].copy_from_slice(&c.to_be_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc1071_example() {
        // RFC 1071 §3: bytes 00 01 f2 03 f4 f5 f6 f7 sum to 0xddf2 → checksum !0xddf2 = 0x220d.
        assert_eq!(
            checksum(&[0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7]),
            0x220d
        );
    }

    #[test]
    fn datagram_checksums_verify() {
        let mut out = Vec::new();
        write_udp_datagram(
            &mut out,
            ([10, 0, 0, 1], 40000),
            ([10, 255, 0, 1], COAP_PORT),
            9,
            &[0x40, 1, 0, 1, 0xAB],
        );
        assert_eq!(out.len(), 20 + 8 + 5);
        // A correct header sums to 0 (checksum of the header including its checksum field).
        assert_eq!(checksum(&out[..20]), 0);
        let udp = &out[20..];
        assert_eq!(
            fold(sum16(
                udp,
                pseudo([10, 0, 0, 1], [10, 255, 0, 1], PROTO_UDP, udp.len())
            )),
            0
        );
    }
}
