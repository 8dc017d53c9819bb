//! TCP segments on the wire (RFC 9293 §3.1) for captures: header, MSS option (§3.2), checksum
//! over the IPv4 pseudo-header.

use crate::ip::{fold, pseudo, sum16, write_ipv4, PROTO_TCP, TCP_HEADER};

/// The MSS option's size, bytes (kind 2, length 4, RFC 9293 §3.2).
pub const TCP_MSS_OPTION: usize = 4;

/// Control bits (RFC 9293 §3.1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TcpFlags(pub u8);

impl TcpFlags {
    pub const FIN: TcpFlags = TcpFlags(0x01);
    pub const SYN: TcpFlags = TcpFlags(0x02);
    pub const RST: TcpFlags = TcpFlags(0x04);
    pub const PSH: TcpFlags = TcpFlags(0x08);
    pub const ACK: TcpFlags = TcpFlags(0x10);

    pub fn contains(self, other: TcpFlags) -> bool {
        self.0 & other.0 == other.0
    }
}

impl core::ops::BitOr for TcpFlags {
    type Output = TcpFlags;
    fn bitor(self, rhs: TcpFlags) -> TcpFlags {
        TcpFlags(self.0 | rhs.0)
    }
}

/// Appends an IPv4 packet carrying one TCP segment.
#[allow(clippy::too_many_arguments)]
pub fn write_tcp_segment(
    out: &mut Vec<u8>,
    src: ([u8; 4], u16),
    dst: ([u8; 4], u16),
    ip_id: u16,
    seq: u32,
    ack: u32,
    flags: TcpFlags,
    window: u16,
    mss: Option<u16>,
    payload: &[u8],
) {
    let header = TCP_HEADER + if mss.is_some() { TCP_MSS_OPTION } else { 0 };
    let tcp_len = header + payload.len();
    write_ipv4(out, src.0, dst.0, PROTO_TCP, ip_id, tcp_len);
    let start = out.len();
    out.extend_from_slice(&src.1.to_be_bytes());
    out.extend_from_slice(&dst.1.to_be_bytes());
    out.extend_from_slice(&seq.to_be_bytes());
    out.extend_from_slice(&ack.to_be_bytes());
    out.push(((header / 4) as u8) << 4);
    out.push(flags.0);
    out.extend_from_slice(&window.to_be_bytes());
    out.extend_from_slice(&[0, 0, 0, 0]); // checksum, urgent pointer
    if let Some(m) = mss {
        out.extend_from_slice(&[2, 4]);
        out.extend_from_slice(&m.to_be_bytes());
    }
    out.extend_from_slice(payload);
    let c = fold(sum16(
        &out[start..],
        pseudo(src.0, dst.0, PROTO_TCP, tcp_len),
    ));
    out[start + 16..start + 18].copy_from_slice(&c.to_be_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ip::checksum;

    const A: ([u8; 4], u16) = ([10, 0, 0, 1], 49152);
    const B: ([u8; 4], u16) = ([192, 0, 2, 1], 5683);

    #[test]
    fn syn_with_mss_is_44_bytes_with_data_offset_6() {
        let mut out = Vec::new();
        write_tcp_segment(
            &mut out,
            A,
            B,
            1,
            1000,
            0,
            TcpFlags::SYN,
            65535,
            Some(256),
            &[],
        );
        assert_eq!(out.len(), 20 + 20 + 4);
        let tcp = &out[20..];
        assert_eq!(tcp[12] >> 4, 6, "data offset in 32-bit words");
        assert_eq!(tcp[13], 0x02);
        assert_eq!(&tcp[20..24], &[2, 4, 0x01, 0x00], "MSS 256");
        assert_eq!(checksum(&out[..20]), 0);
        assert_eq!(fold(sum16(tcp, pseudo(A.0, B.0, PROTO_TCP, tcp.len()))), 0);
    }

    #[test]
    fn data_segment_fields_and_checksum() {
        let mut out = Vec::new();
        let payload = [0x50, 0xE1, 0x22, 0x04, 0x80, 0x20, 0x7F];
        write_tcp_segment(
            &mut out,
            B,
            A,
            7,
            0xDEAD_BEEF,
            0x0102_0304,
            TcpFlags::ACK | TcpFlags::PSH,
            65535,
            None,
            &payload,
        );
        assert_eq!(out.len(), 20 + 20 + payload.len());
        let tcp = &out[20..];
        assert_eq!(&tcp[0..4], &[0x16, 0x33, 0xC0, 0x00], "ports 5683 → 49152");
        assert_eq!(&tcp[4..8], &[0xDE, 0xAD, 0xBE, 0xEF]);
        assert_eq!(&tcp[8..12], &[1, 2, 3, 4]);
        assert_eq!((tcp[12] >> 4, tcp[13]), (5, 0x18));
        assert_eq!(&tcp[20..], &payload);
        // An odd-length segment still verifies (RFC 1071 pads the last byte).
        assert_eq!(fold(sum16(tcp, pseudo(B.0, A.0, PROTO_TCP, tcp.len()))), 0);
        assert!(TcpFlags(0x18).contains(TcpFlags::ACK));
    }
}
