//! `file`: a mesh whose nodes the scenario file lists (docs/networks.md): `network.nodes`, each
//! with a position and a role (`border-router`, exactly one; `sink`, running the CoAP server;
//! `client`, running one CoAP client, optionally naming its `sink`; `router`), and optionally
//! `network.links`, explicit links that replace the unit disk. Client `i` of the workload runs
//! on the `i`-th client node (in node order).

use super::mesh::{self, Layout};
use super::Topology;
use crate::config::{MeshRole, RunConfig};
use crate::testbed::ConfigError;

pub fn build(cfg: &RunConfig, replication: u64) -> Result<Topology, ConfigError> {
    let err = |m: String| Err(ConfigError(m));
    let Some(n) = cfg.network.as_ref() else {
        return err("network.nodes: a `file` network needs its nodes".into());
    };
    let nodes = &n.nodes;
    if nodes.len() < 2 || nodes.len() > 4096 {
        return err(format!(
            "network.nodes: {} nodes; allowed: 2 to 4096",
            nodes.len()
        ));
    }
    let with = |r: MeshRole| (0..nodes.len() as u16).filter(move |&i| nodes[i as usize].role == r);
    let brs: Vec<u16> = with(MeshRole::BorderRouter).collect();
    let sinks: Vec<u16> = with(MeshRole::Sink).collect();
    let clients: Vec<u16> = with(MeshRole::Client).collect();
    if brs.len() != 1 {
        return err(format!(
            "network.nodes: {} nodes have role \"border-router\"; allowed: exactly one",
            brs.len()
        ));
    }
    if sinks.is_empty() || clients.is_empty() {
        return err(
            "network.nodes: needs at least one node with role \"sink\" and one with role \"client\""
                .into(),
        );
    }
    let mut pairs = Vec::with_capacity(clients.len());
    for c in clients {
        let sink = match nodes[c as usize].sink {
            None => sinks[0],
            Some(s) if sinks.contains(&s) => s,
            Some(s) => {
                return err(format!(
                "network.nodes[{c}].sink: {s} is not a node with role \"sink\"; sinks: {sinks:?}"
            ))
            }
        };
        pairs.push((c, sink));
    }
    let links = if n.links.is_empty() {
        None
    } else {
        if let Some(bad) = n
            .links
            .iter()
            .find(|l| l.iter().any(|&i| i as usize >= nodes.len()))
        {
            return err(format!(
                "network.links: {bad:?} names a node beyond the {} listed",
                nodes.len()
            ));
        }
        Some(n.links.clone())
    };
    mesh::build(
        cfg,
        replication,
        Layout {
            positions: nodes.iter().map(|s| (s.x, s.y)).collect(),
            border_router: brs[0],
            clients: pairs,
            links,
        },
    )
}
