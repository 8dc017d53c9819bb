//! `file`: a mesh whose nodes the scenario file lists (docs/networks.md): `network.nodes`, each
//! with a position and a role (`border-router`, exactly one; `sink`, running the CoAP server;
//! `client`, running one CoAP client, optionally naming its `sink`; `router`), and optionally
//! `network.links`, explicit links that replace the unit disk. Client `i` of the workload runs
//! on the `i`-th client node (in node order); clients outside the mesh
//! (`network.outside_clients`, or one per sink with `network.outside_clients_per_sink`) follow.
//! A network may have no mesh client at all when clients outside serve its sinks (FlockLab as
//! the CoCoA study wired it: every mote a server, one cloud client per mote).

use super::built::Topology;
use super::mesh::{self, Layout};
use crate::config::{MeshRole, RunConfig};
use crate::error::Error;

pub fn build(cfg: &RunConfig, replication: u64) -> Result<Topology, Error> {
    let err = |key: &str, m: String| Err(Error::key(key, m));
    let Some(f) = cfg.network.as_ref().and_then(|n| n.file()) else {
        return err("network.nodes", "a `file` network needs its nodes".into());
    };
    let (n, nodes) = (&f.mesh, &f.nodes);
    if nodes.len() < 2 || nodes.len() > 4096 {
        return err(
            "network.nodes",
            format!("{} nodes; allowed: 2 to 4096", nodes.len()),
        );
    }
    let with = |r: MeshRole| (0..nodes.len() as u16).filter(move |&i| nodes[i as usize].role == r);
    let brs: Vec<u16> = with(MeshRole::BorderRouter).collect();
    let sinks: Vec<u16> = with(MeshRole::Sink).collect();
    let clients: Vec<u16> = with(MeshRole::Client).collect();
    if brs.len() != 1 {
        return err(
            "network.nodes",
            format!(
                "{} nodes have role \"border-router\"; allowed: exactly one",
                brs.len()
            ),
        );
    }
    let outside_asked = n.outside_clients > 0 || n.outside_clients_per_sink;
    if sinks.is_empty() || (clients.is_empty() && !outside_asked) {
        return err(
            "network.nodes",
            "needs at least one node with role \"sink\" and a client: a node with \
             role \"client\" or clients outside the mesh (network.outside_clients)"
                .into(),
        );
    }
    let mut pairs = Vec::with_capacity(clients.len());
    for c in clients {
        let sink = match nodes[c as usize].sink {
            None => sinks[0],
            Some(s) if sinks.contains(&s) => s,
            Some(s) => {
                return err(
                    &format!("network.nodes[{c}].sink"),
                    format!("{s} is not a node with role \"sink\"; sinks: {sinks:?}"),
                )
            }
        };
        pairs.push((c, sink));
    }
    let links = if f.links.is_empty() {
        None
    } else {
        if let Some(bad) = f
            .links
            .iter()
            .find(|l| l.iter().any(|&i| i as usize >= nodes.len()))
        {
            return err(
                "network.links",
                format!("{bad:?} names a node beyond the {} listed", nodes.len()),
            );
        }
        Some(f.links.clone())
    };
    let idle_sinks: Vec<u16> = sinks
        .iter()
        .copied()
        .filter(|s| !pairs.iter().any(|&(_, t)| t == *s))
        .collect();
    let layout = Layout {
        positions: nodes.iter().map(|s| (s.x, s.y)).collect(),
        border_router: brs[0],
        clients: pairs,
        links,
        idle_sinks,
    };
    check_clients(cfg, &layout)?;
    mesh::build(cfg, replication, layout)
}

/// Every sink has a client.
fn check_clients(cfg: &RunConfig, layout: &Layout) -> Result<(), Error> {
    let n = cfg
        .network
        .as_ref()
        .and_then(|n| n.mesh())
        .expect("a file network has its section");
    let outside = mesh::outside_sinks(layout);
    if n.outside_clients_per_sink {
        // Every sink has its client; the counts are checked by `mesh::build`.
        return Ok(());
    }
    let served = mesh::outside_client_count(n, &outside).min(outside.len());
    if let Some(&idle) = outside[served..]
        .iter()
        .find(|s| layout.idle_sinks.contains(s))
    {
        return Err(Error::key(
            format!("network.nodes[{idle}]"),
            format!(
            "sink {idle} has no client (no node with role \"client\" names \
             it and network.outside_clients = {} serves the first {served} of the sinks {outside:?}); \
             allowed: a client for every sink (a client's `sink`, more network.outside_clients, \
             or network.outside_clients_per_sink = true)",
            n.outside_clients
        ),
        ));
    }
    Ok(())
}
