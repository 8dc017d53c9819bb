//! The mesh's shared vocabulary: its events, what handling them produces, and the frames the
//! MACs queue. A leaf: the mesh (`mod.rs`), the MACs (`mac/`) and the duty-cycling layer
//! (`rdc/`) all use it, and it uses none of them.

use crate::net::common::DropReason;
use crate::sim::slab::PacketId;

use super::sixlowpan::Fragments;

/// The UDP ports of the CoAP endpoints (server 5683, RFC 7252 §6.1; clients the first
/// dynamic port, RFC 6335 §6): neither is NHC-compressible, so UDP takes 7 bytes.
pub const UDP_PORTS: (u16, u16) = (crate::basics::CLIENT_PORT, 5683);

/// What a radio event is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RadioKind {
    /// `node`'s clear channel assessment ends.
    CcaEnd,
    /// `node`'s head frame goes on the air.
    TxStart,
    /// `node`'s frame leaves the air.
    TxEnd,
    /// Duty cycling: `node`'s strobe reaches the copy its receiver woke up for.
    StrobeCopy,
    /// `node` starts acknowledging `peer`'s frame (`gen`: `peer`'s MAC generation).
    AckStart,
    /// `node`'s acknowledgement to `peer` leaves the air.
    AckEnd,
    /// `node`'s wait for an acknowledgement ends (`gen`: its MAC generation then).
    AckTimeout,
    /// Contiki profile: `node`'s transmit timer for its queue to `peer` expires.
    CkTimer,
    /// Contiki profile, autoack: `node`'s ACK_WAIT_TIME after its frame ends.
    CkAckCheck,
    /// Contiki profile, autoack: `node`'s AFTER_ACK_DETECTED_WAIT_TIME ends.
    CkAckDone,
    /// A timer of `node`'s MAC, `peer` and `gen` as that MAC sets them (for a MAC whose
    /// timers are none of the above).
    MacTimer,
    /// A packet (`gen` = its id) refused when it was handed to the mesh from a resend
    /// (`peer` = 0: MAC queue full).
    Refused,
}

impl RadioKind {
    /// Whether the event belongs to the node's MAC (its timers) rather than to the medium
    /// (the air, acknowledgements, strobes): the mesh hands those to
    /// the node's MAC (`mac::Mac::on_event`).
    pub fn is_mac_timer(self) -> bool {
        matches!(
            self,
            RadioKind::CcaEnd
                | RadioKind::AckTimeout
                | RadioKind::CkTimer
                | RadioKind::CkAckCheck
                | RadioKind::CkAckDone
                | RadioKind::MacTimer
        )
    }
}

/// An event of the mesh.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RadioEvent {
    pub kind: RadioKind,
    pub node: u16,
    pub peer: u16,
    pub gen: u32,
}

/// What handling a mesh event produced for the network.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MeshOutcome {
    Nothing,
    /// The packet reached the node where it leaves the mesh, at the event's time.
    Exit(PacketId),
    /// The packet was lost in the mesh.
    Dropped(PacketId, DropReason),
}

/// One frame in a MAC queue: fragment `frag` of the packet's hop transfer `xfer`.
#[derive(Clone, Copy, Debug)]
pub struct Frame {
    pub packet: PacketId,
    pub xfer: u32,
    pub frag: u16,
    /// The packet's fragments on this hop (1: not fragmented).
    pub count: u16,
    /// MAC frame bytes (header, 6LoWPAN content, FCS).
    pub bytes: u16,
    pub to: u16,
}

impl Frame {
    /// Fragment `i` of packet `id`'s transfer `xfer` to `to`, with MAC `header` + FCS bytes.
    pub fn of(id: PacketId, xfer: u32, to: u16, header: u32, frags: &Fragments, i: u32) -> Frame {
        Frame {
            packet: id,
            xfer,
            frag: i as u16,
            count: frags.count as u16,
            bytes: (header + frags.bytes(i)) as u16,
            to,
        }
    }
}
