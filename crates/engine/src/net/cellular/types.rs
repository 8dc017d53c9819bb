//! The cell's shared vocabulary: its events and what handling them produces. A leaf: the
//! network's event type (`net/event.rs`) names [`CellEvent`] without importing the cell.

use crate::net::common::DropReason;
use crate::sim::slab::PacketId;

/// What a cell event is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CellKind {
    /// The packet leaves the cell (decoded at the eNB, or at the device).
    Exit,
    /// The device's job ended.
    Done,
    /// The device's paging occasion: its downlink job starts.
    Page,
    /// The eNB's inactivity timer expires.
    Inactivity,
    /// T3412 expires: a periodic tracking area update.
    Tau,
}

/// An event of the cell: `gen` invalidates the timers of a device that moved on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CellEvent {
    pub kind: CellKind,
    pub device: u32,
    pub gen: u32,
    pub packet: PacketId,
}

/// What handling a cell event or a packet produced for the network.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CellOutcome {
    Nothing,
    Exit(PacketId),
    Dropped(PacketId, DropReason),
}
