//! Classic libpcap files with nanosecond timestamps (magic 0xa1b23c4d), link type RAW (101:
//! packets start at the IPv4 header), so simulated times are written exactly.

use std::io::{self, Write};

/// LINKTYPE_RAW: raw IPv4/IPv6 packets.
pub const LINKTYPE_RAW: u32 = 101;
const MAGIC_NANOS: u32 = 0xa1b2_3c4d;

pub struct PcapWriter<W: Write> {
    out: W,
}

impl<W: Write> PcapWriter<W> {
    /// Writes the global header (version 2.4, snaplen 65535).
    pub fn new(mut out: W) -> io::Result<Self> {
        out.write_all(&MAGIC_NANOS.to_le_bytes())?;
        out.write_all(&2u16.to_le_bytes())?;
        out.write_all(&4u16.to_le_bytes())?;
        out.write_all(&0i32.to_le_bytes())?;
        out.write_all(&0u32.to_le_bytes())?;
        out.write_all(&65535u32.to_le_bytes())?;
        out.write_all(&LINKTYPE_RAW.to_le_bytes())?;
        Ok(PcapWriter { out })
    }

    /// Appends one packet captured at `ts_nanos`.
    pub fn write_packet(&mut self, ts_nanos: u64, packet: &[u8]) -> io::Result<()> {
        let secs = (ts_nanos / 1_000_000_000) as u32;
        let nanos = (ts_nanos % 1_000_000_000) as u32;
        let len = packet.len() as u32;
        for word in [secs, nanos, len, len] {
            self.out.write_all(&word.to_le_bytes())?;
        }
        self.out.write_all(packet)
    }

    pub fn into_inner(self) -> W {
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_and_record_layout() {
        let mut w = PcapWriter::new(Vec::new()).unwrap();
        w.write_packet(1_500_000_001, &[0x45, 0]).unwrap();
        let b = w.into_inner();
        assert_eq!(&b[..4], &[0x4d, 0x3c, 0xb2, 0xa1]);
        assert_eq!(b.len(), 24 + 16 + 2);
        // ts: 1 s + 500 000 001 ns.
        assert_eq!(&b[24..28], &1u32.to_le_bytes());
        assert_eq!(&b[28..32], &500_000_001u32.to_le_bytes());
    }
}
