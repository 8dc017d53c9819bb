//! The network's events and where it schedules them: the vocabulary the network and its
//! elements (a mesh's MACs) share with the run's event loop, apart from the network itself so
//! that an element can schedule without importing the network that holds it.

use coaplab_cc::Instant;

use super::cellular::types::CellEvent;
use super::common::{ElementId, NodeId};
use super::radio::types::RadioEvent;
use crate::sim::slab::PacketId;

/// Events the network schedules for itself and for the nodes.
#[derive(Clone, Copy, Debug)]
pub enum NetEvent {
    /// A link finished serializing its packet.
    TxDone(ElementId),
    /// A packet reaches a link (its buffer) on its route.
    Arrive(ElementId, PacketId),
    /// A packet reached the node at the end of its route.
    Deliver(NodeId, PacketId),
    /// An event inside a mesh element (MAC timers, frames on the air).
    Radio(ElementId, RadioEvent),
    /// An event inside a cell element (`net::cellular`: a packet leaving it, a device's job
    /// ending, its timers).
    Cell(ElementId, CellEvent),
}

/// Where the network schedules its events (the run's event queue).
pub trait Scheduler {
    fn schedule_net(&mut self, at: Instant, event: NetEvent);
}
