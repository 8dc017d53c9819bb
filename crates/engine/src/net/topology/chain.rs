//! `chain`: 21 IEEE 802.15.4 nodes on a line, one radio range apart, the border router in the
//! middle (node 10) and the sink on it; the 20 other nodes are clients (docs/networks.md).
//!
//! ```text
//! 0 — 1 — … — 9 — [10: border router, sink] — 11 — … — 20
//! ```

use super::built::Topology;
use super::mesh::{self, Layout};
use crate::config::RunConfig;
use crate::error::Error;

pub const NODES: u16 = 21;
pub const BORDER_ROUTER: u16 = 10;

pub fn layout(range: f64) -> Layout {
    Layout::all_to_border_router(
        (0..NODES).map(|i| (f64::from(i) * range, 0.0)).collect(),
        BORDER_ROUTER,
    )
}

pub fn build(cfg: &RunConfig, replication: u64) -> Result<Topology, Error> {
    mesh::build(cfg, replication, layout(mesh::range_m(cfg)))
}
