//! `dumbbell`: 21 IEEE 802.15.4 nodes (docs/networks.md). A short axis: the left sink (node 9)
//! one range left of the border router (node 10), the right sink (node 11) one range right.
//! Around each sink, on the far side, a half circle of 9 nodes exactly one range from it
//! (nodes 0–8 left, 12–20 right, every 22.5°). Every node of a half circle sends to the
//! sink of the other side, and each sink sends to the other sink: all traffic crosses the
//! border router.
//!
//! ```text
//!   ·                           ·
//!  ·  (0–8)  9 — [10] — 11  (12–20)  ·
//!   ·                           ·
//! ```

use super::built::Topology;
use super::mesh::{self, Layout};
use crate::config::RunConfig;
use crate::error::Error;

pub const LEFT_SINK: u16 = 9;
pub const BORDER_ROUTER: u16 = 10;
pub const RIGHT_SINK: u16 = 11;

pub fn layout(range: f64) -> Layout {
    let mut positions = Vec::with_capacity(21);
    let arc = |centre: f64, from_deg: f64, k: u16| {
        let a = (from_deg + 22.5 * f64::from(k)).to_radians();
        (centre + range * a.cos(), range * a.sin())
    };
    // Left half circle: angles 90°..270° around (−range, 0).
    positions.extend((0..9).map(|k| arc(-range, 90.0, k)));
    positions.push((-range, 0.0));
    positions.push((0.0, 0.0));
    positions.push((range, 0.0));
    // Right half circle: angles −90°..90° around (range, 0).
    positions.extend((0..9).map(|k| arc(range, -90.0, k)));
    let mut clients: Vec<(u16, u16)> = (0..9).map(|i| (i, RIGHT_SINK)).collect();
    clients.extend((12..21).map(|i| (i, LEFT_SINK)));
    clients.push((LEFT_SINK, RIGHT_SINK));
    clients.push((RIGHT_SINK, LEFT_SINK));
    Layout {
        positions,
        border_router: BORDER_ROUTER,
        links: None,
        clients,
        idle_sinks: Vec::new(),
    }
}

pub fn build(cfg: &RunConfig, replication: u64) -> Result<Topology, Error> {
    mesh::build(cfg, replication, layout(mesh::range_m(cfg)))
}
