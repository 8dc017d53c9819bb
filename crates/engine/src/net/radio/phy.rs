//! The IEEE 802.15.4 2.4 GHz O-QPSK PHY (IEEE 802.15.4-2006 §6.5): 250 kbit/s, so one byte
//! takes 32 µs on the air; every frame is preceded by a 6-byte PHY header (4-byte preamble,
//! 1-byte start-of-frame delimiter, 1-byte frame length) and carries at most 127 bytes of MAC
//! frame (aMaxPHYPacketSize).

use coaplab_cc::Duration;

use super::config::MacAddressing;

/// One byte at 250 kbit/s: 8 bit / 250 000 bit/s = 32 µs.
pub const BYTE_TIME: Duration = Duration::from_micros(32);
/// Preamble (4) + SFD (1) + PHR (1).
pub const PHY_HEADER: u32 = 6;
/// aMaxPHYPacketSize: the largest MAC frame.
pub const MAX_MAC_FRAME: u32 = 127;
/// The MAC footer: the 16-bit frame check sequence.
pub const FCS: u32 = 2;
/// An acknowledgement frame: frame control 2 + sequence number 1 + FCS 2 (§7.2.2.3).
pub const ACK_FRAME: u32 = 5;

/// Time on the air of a MAC frame of `mac_bytes` (its PHY header included).
pub fn airtime(mac_bytes: u32) -> Duration {
    BYTE_TIME.mul(u64::from(PHY_HEADER + mac_bytes))
}

/// The MAC header of a data frame (IEEE 802.15.4-2006 §7.2.2.2): frame control 2 + sequence
/// number 1 + destination PAN 2 + destination and source addresses, the source PAN elided
/// (PAN ID compression, one PAN): 2 + 1 + 2 + 8 + 8 = 21 bytes with 64-bit addresses,
/// 2 + 1 + 2 + 2 + 2 = 9 bytes with 16-bit ones.
pub fn mac_header(addressing: MacAddressing) -> u32 {
    match addressing {
        MacAddressing::Long => 21,
        MacAddressing::Short => 9,
    }
}

/// Bytes of 6LoWPAN content one data frame carries: 127 − header − FCS.
pub fn frame_space(addressing: MacAddressing) -> u32 {
    MAX_MAC_FRAME - mac_header(addressing) - FCS
}
