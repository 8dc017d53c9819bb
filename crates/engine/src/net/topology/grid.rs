//! `grid`: 7 × 7 IEEE 802.15.4 nodes, one radio range apart (node `7·row + column`), the
//! border router and the sink at the centre (node 24); the 48 other nodes are clients
//! (docs/networks.md).

use super::built::Topology;
use super::mesh::{self, Layout};
use crate::config::RunConfig;
use crate::error::Error;

pub const SIDE: u16 = 7;
pub const BORDER_ROUTER: u16 = 24;

pub fn layout(range: f64) -> Layout {
    Layout::all_to_border_router(
        (0..SIDE * SIDE)
            .map(|i| (f64::from(i % SIDE) * range, f64::from(i / SIDE) * range))
            .collect(),
        BORDER_ROUTER,
    )
}

pub fn build(cfg: &RunConfig, replication: u64) -> Result<Topology, Error> {
    mesh::build(cfg, replication, layout(mesh::range_m(cfg)))
}
