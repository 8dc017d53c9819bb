//! 6LoWPAN sizes: IPv6/UDP header compression (IPHC and NHC, RFC 6282) and fragmentation
//! (RFC 4944 §5.3). Only sizes are modelled: the simulator needs how many bytes each frame
//! carries, not the bytes.

use super::config::MacAddressing;

/// The uncompressed IPv6 header.
pub const IPV6_HEADER: u32 = 40;
/// The uncompressed UDP header.
pub const UDP_HEADER: u32 = 8;
/// FRAG1 header (RFC 4944 §5.3): dispatch and datagram size 2 + datagram tag 2.
pub const FRAG1_HEADER: u32 = 4;
/// FRAGN header: FRAG1's plus the datagram offset byte.
pub const FRAGN_HEADER: u32 = 5;

/// What the compressor can derive on one hop of a packet's route.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hop {
    /// The frame's link-layer source is the packet's IPv6 source (the originator's first hop).
    pub from_origin: bool,
    /// The frame's link-layer destination is the packet's IPv6 destination (the last hop).
    pub to_destination: bool,
    /// The IPv6 source is outside the mesh (no shared context: carried in full).
    pub source_outside: bool,
    /// The IPv6 destination is outside the mesh.
    pub destination_outside: bool,
    pub addressing: MacAddressing,
}

/// Bytes of one compressed address (RFC 6282 §3.1.1, SAM/DAM with SAC/DAC): 0 if it is
/// derived from the frame's link-layer address (the mesh prefix is context 0), else its
/// interface identifier: 8 bytes for an EUI-64-based one (64-bit MAC addresses), 2 for one
/// built from a 16-bit short address (0000:00ff:fe00:XXXX); 16 bytes for an address outside
/// the mesh's prefix.
fn address(derived: bool, outside: bool, addressing: MacAddressing) -> u32 {
    if outside {
        16
    } else if derived {
        0
    } else {
        match addressing {
            MacAddressing::Long => 8,
            MacAddressing::Short => 2,
        }
    }
}

/// The IPHC header (RFC 6282 §3.1): the 2-byte base (traffic class and flow label elided,
/// next header compressed, context 0 implied so no CID byte), then the hop limit inline
/// unless it is one of 1, 64, 255 — the originator sends 64, every forwarder decrements it, so
/// it is elided on the first hop only — then the inline address bytes.
pub fn iphc_bytes(hop: Hop) -> u32 {
    let hop_limit = if hop.from_origin { 0 } else { 1 };
    2 + hop_limit
        + address(
            hop.from_origin && !hop.source_outside,
            hop.source_outside,
            hop.addressing,
        )
        + address(
            hop.to_destination && !hop.destination_outside,
            hop.destination_outside,
            hop.addressing,
        )
}

/// The UDP NHC header (RFC 6282 §4.3): 1 NHC byte, the ports — 1 byte when both are in
/// 0xF0B0–0xF0BF, 3 when one is in 0xF000–0xF0FF (8 bits of it inline), else 4 — and the
/// 2-byte checksum (its elision needs upper-layer authorisation; CoAP gives none). The length
/// is always elided.
pub fn udp_nhc_bytes(src_port: u16, dst_port: u16) -> u32 {
    let short = |p: u16| p & 0xFFF0 == 0xF0B0;
    let byte = |p: u16| p & 0xFF00 == 0xF000;
    let ports = if short(src_port) && short(dst_port) {
        1
    } else if byte(src_port) || byte(dst_port) {
        3
    } else {
        4
    };
    1 + ports + 2
}

/// How a compressed packet is cut into frames (RFC 4944 §5.3): one frame if it fits; else a
/// FRAG1 with the compressed headers and as much payload as keeps the uncompressed datagram
/// offset of the next fragment a multiple of 8, then FRAGNs of the largest multiple of 8 that
/// fits, the last one the remainder.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fragments {
    /// Frames needed.
    pub count: u32,
    /// 6LoWPAN bytes of the first frame (the whole packet when `count == 1`).
    pub first: u32,
    /// 6LoWPAN bytes of every frame between the first and the last.
    pub middle: u32,
    /// 6LoWPAN bytes of the last frame (when `count > 1`).
    pub last: u32,
}

impl Fragments {
    /// 6LoWPAN bytes of frame `i`.
    pub fn bytes(&self, i: u32) -> u32 {
        if i == 0 {
            self.first
        } else if i + 1 == self.count {
            self.last
        } else {
            self.middle
        }
    }
}

/// Cuts a packet of `compressed` header bytes (`uncompressed` before compression) and
/// `payload` bytes into frames of at most `space` bytes of 6LoWPAN content. `None` if a frame
/// cannot carry even one 8-byte unit next to its headers.
pub fn fragment(compressed: u32, uncompressed: u32, payload: u32, space: u32) -> Option<Fragments> {
    if compressed + payload <= space {
        return Some(Fragments {
            count: 1,
            first: compressed + payload,
            middle: 0,
            last: 0,
        });
    }
    // First fragment: uncompressed headers + p1 is the largest multiple of 8 such that
    // FRAG1 + compressed headers + p1 fits.
    let room = space.checked_sub(FRAG1_HEADER + compressed)?;
    let covered = (room + uncompressed) / 8 * 8;
    let p1 = covered.checked_sub(uncompressed).filter(|&p| p > 0)?;
    let chunk = space.checked_sub(FRAGN_HEADER)? / 8 * 8;
    if chunk == 0 {
        return None;
    }
    let rest = payload - p1.min(payload);
    let more = rest.div_ceil(chunk);
    let last = rest - (more - 1) * chunk;
    Some(Fragments {
        count: 1 + more,
        first: FRAG1_HEADER + compressed + p1,
        middle: FRAGN_HEADER + chunk,
        last: FRAGN_HEADER + last,
    })
}

/// Compressed header bytes of a packet on `hop`: IPHC + UDP NHC (`udp` with its ports), or
/// IPHC + the inline next-header byte for other transports (whose header stays inline and
/// counts as payload).
pub fn compressed_headers(hop: Hop, udp: Option<(u16, u16)>) -> u32 {
    match udp {
        Some((s, d)) => iphc_bytes(hop) + udp_nhc_bytes(s, d),
        None => iphc_bytes(hop) + 1,
    }
}
