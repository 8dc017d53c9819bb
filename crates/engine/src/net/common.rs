//! The network's shared vocabulary: the indices of its parts and why a packet was dropped. A
//! leaf: the network (`network.rs`), its elements (the radio's MACs among them) and the
//! applications name these without importing each other.

/// Index of an element (a link or a path delay) in the network.
pub type ElementId = u16;
/// Index of a route.
pub type RouteId = u16;
/// Index of a node.
pub type NodeId = u16;

/// Why a packet was dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropReason {
    /// Tail-dropped at a full buffer.
    Buffer,
    /// Lost to a link error after serialization.
    LinkError,
    /// Refused by a full MAC queue in a mesh.
    MacQueue,
    /// A frame of it was given up by a mesh MAC (channel-access failure or retries exhausted).
    Radio,
    /// A cell's downlink to a device whose NAT binding expired (`network.nat_timeout_s`).
    Unreachable,
    /// Refused by a cell's eNB whose scheduler was booked further ahead than
    /// `network.admission_backlog_s`.
    Rejected,
}
