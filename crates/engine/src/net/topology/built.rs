//! What a topology builds ([`Topology`]) and what a network adds to the run guard's terms
//! ([`GuardTerms`]): the types the registry (`mod.rs`) and every topology share, in their own
//! file so that the topologies never import the registry that lists them.

use crate::net::network::{Network, NodeId};

/// A built network and the placement of the applications on it.
pub struct Topology {
    pub network: Network,
    /// Nodes that host clients; client `i` runs on `client_nodes[i % len]`.
    pub client_nodes: Vec<NodeId>,
    /// The node that hosts the server.
    pub server: NodeId,
    /// Topologies with several servers: client `i` talks to the server on
    /// `client_servers[i % len]`; empty = every client to `server`.
    pub client_servers: Vec<NodeId>,
}

impl Topology {
    pub fn client_node(&self, client: u32) -> NodeId {
        self.client_nodes[client as usize % self.client_nodes.len()]
    }
}

/// What a network's own keys add to the run guard's bounds (`sim::guard::NetTerms`) and to the
/// downlink-share metrics.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct GuardTerms {
    /// The slowest rate of the network's own links, kbit/s.
    pub slowest_kbps: Option<f64>,
    /// An upper bound of the mean time one packet holds the slowest link, s (0: the rate says).
    pub packet_s: f64,
    /// Propagation delay the network adds to the longest round trip, ms.
    pub extra_round_trip_ms: f64,
    /// The rate of the network's downlink, kbit/s, when not `link.downlink_kbps`.
    pub downlink_kbps: Option<f64>,
}
