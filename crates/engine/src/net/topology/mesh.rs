//! What the multi-hop IEEE 802.15.4 topologies share (docs/networks.md): from node positions,
//! a border router and the clients' (node, sink) pairs, a network whose nodes are the mesh's
//! nodes, whose one element is the mesh, and whose routes are the clients' ways to their
//! sinks and back.

use super::Topology;
use crate::config::{NetworkConfig, RunConfig};
use crate::net::network::{Element, Network, Node, NodeId, NodeRole, PathElement, Route};
use crate::net::path::PathDelay;
use crate::net::radio::mac::MacParams;
use crate::net::radio::{Mesh, RadioParams};
use crate::sim::streams::{stream, Stream};
use crate::testbed::{millis, ConfigError};
use coaplab_cc::Duration;

/// A mesh's layout.
pub struct Layout {
    pub positions: Vec<(f64, f64)>,
    pub border_router: u16,
    /// Each client's node and the node of the sink (server) it sends to, in client order
    /// (client `i` uses entry `i % len`).
    pub clients: Vec<(u16, u16)>,
    /// Explicit links instead of the unit disk (`file` topologies).
    pub links: Option<Vec<[u16; 2]>>,
}

impl Layout {
    /// Nodes at `positions` on the unit disk, every node but the border router a client
    /// sending to the sink on it (chain, grid).
    pub fn all_to_border_router(positions: Vec<(f64, f64)>, border_router: u16) -> Layout {
        let n = positions.len() as u16;
        Layout {
            positions,
            border_router,
            links: None,
            clients: (0..n)
                .filter(|&i| i != border_router)
                .map(|i| (i, border_router))
                .collect(),
        }
    }
}

/// The radio range of `[network]` (its default without the section), which spaces the nodes of
/// the built-in topologies.
pub fn range_m(cfg: &RunConfig) -> f64 {
    cfg.network
        .as_ref()
        .map_or_else(|| NetworkConfig::default().range_m, |n| n.range_m)
}

fn micros(us: f64) -> Duration {
    Duration::from_nanos((us * 1000.0).round() as u64)
}

/// The radio and MAC parameters of `[network]`.
pub fn radio_params(n: &NetworkConfig) -> Result<RadioParams, ConfigError> {
    if n.mac_min_be > n.mac_max_be {
        return Err(ConfigError(format!(
            "network.mac_min_be: {} is above network.mac_max_be ({}); allowed: <= mac_max_be",
            n.mac_min_be, n.mac_max_be
        )));
    }
    Ok(RadioParams {
        range_m: n.range_m,
        interference_m: n.range_m * n.interference_factor,
        carrier_sense_m: n.range_m * n.carrier_sense_factor,
        link_loss: n.link_loss,
        addressing: n.mac_addressing,
        mac: MacParams {
            min_be: n.mac_min_be,
            max_be: n.mac_max_be,
            max_csma_backoffs: n.mac_max_csma_backoffs,
            max_frame_retries: n.mac_max_frame_retries,
            unit_backoff: micros(n.unit_backoff_us),
            cca: micros(n.cca_us),
            turnaround: micros(n.turnaround_us),
            ack_wait: micros(n.ack_wait_us),
        },
        queue_frames: n.mac_queue_frames,
        border_router_queue_frames: n.border_router_queue_frames,
        wake_period: (n.rdc == crate::config::RdcKind::Contikimac)
            .then(|| Duration::from_nanos(1_000_000_000 / u64::from(n.channel_check_rate_hz))),
        strobe_gap: micros(n.strobe_gap_us),
    })
}

/// Builds replication `replication`'s mesh network of `layout` (plus, with
/// `network.outside_clients`, a host of clients outside the mesh behind the border router).
pub fn build(cfg: &RunConfig, replication: u64, layout: Layout) -> Result<Topology, ConfigError> {
    let net_cfg = cfg.network.clone().unwrap_or_default();
    let params = radio_params(&net_cfg)?;
    let n = layout.positions.len();
    let (seed, rep) = (cfg.seed, replication);
    let rngs = (0..n as u32).map(|i| stream(seed, rep, Stream::Radio(i)));
    let loss_rng = stream(seed, rep, Stream::Radio(u32::MAX));
    let layout_links = layout.links.is_some();
    let mesh = match &layout.links {
        None => Mesh::new(
            params,
            layout.positions,
            layout.border_router,
            0,
            rngs,
            loss_rng,
        ),
        Some(links) => Mesh::with_links(
            params,
            layout.positions,
            links,
            layout.border_router,
            0,
            rngs,
            loss_rng,
        ),
    }
    .map_err(|e| {
        // Name the key that decides who hears whom: the listed links, the listed positions
        // (with the radio range), or the generated layout's spacing.
        let key = match (net_cfg.kind.as_str(), layout_links) {
            ("file", true) => "network.links".to_string(),
            ("file", false) => "network.nodes (positions, with network.range_m)".to_string(),
            (kind, _) => format!("network.kind = \"{kind}\" (its spacing, with network.range_m)"),
        };
        ConfigError(format!("{key}: {e}"))
    })?;
    let mut mesh = mesh;
    for l in &net_cfg.lossy_links {
        if l.a as usize >= n || l.b as usize >= n || l.a == l.b {
            return Err(ConfigError(format!(
                "network.lossy_links: {{a = {}, b = {}}} is not a link between two of the {n} nodes",
                l.a, l.b
            )));
        }
        mesh.set_link_loss(l.a, l.b, l.loss);
    }
    let mut sinks: Vec<u16> = layout.clients.iter().map(|&(_, s)| s).collect();
    let mut client_nodes: Vec<u16> = layout.clients.iter().map(|&(c, _)| c).collect();
    let mut nodes: Vec<Node> = (0..n as u16)
        .map(|i| Node {
            name: format!("node-{i}"),
            role: if sinks.contains(&i) {
                NodeRole::Server
            } else if i == layout.border_router {
                NodeRole::Router
            } else if client_nodes.contains(&i) {
                NodeRole::Clients
            } else {
                NodeRole::Router
            },
        })
        .collect();
    let mut routes: Vec<Route> = Vec::new();
    for &(c, s) in &layout.clients {
        for (from, to) in [(c, s), (s, c)] {
            if !routes.iter().any(|r| r.from == from && r.to == to) {
                routes.push(Route {
                    from,
                    to,
                    hops: vec![0],
                });
            }
        }
    }
    let mut elements = vec![Element::Mesh(Box::new(mesh))];
    // Clients outside the mesh: one host ("cloud") behind the border router, over a path of
    // `link.path_delay_ms` each way; each sends to the mesh's sinks in turn.
    if net_cfg.outside_clients > 0 {
        let cloud = n as u16;
        nodes.push(Node {
            name: "cloud".into(),
            role: NodeRole::Clients,
        });
        let l = &cfg.link;
        let path = |name: &str, st| {
            Element::Path(PathElement {
                name: name.into(),
                path: PathDelay::new(millis(l.path_delay_ms[0]), millis(l.path_delay_ms[1])),
                rng: stream(seed, rep, st),
            })
        };
        elements.push(path("cloud-in", Stream::PathDelayUp));
        elements.push(path("cloud-out", Stream::PathDelayDown));
        let mut distinct: Vec<u16> = Vec::new();
        for &s in &sinks {
            if !distinct.contains(&s) {
                distinct.push(s);
            }
        }
        for k in 0..net_cfg.outside_clients as usize {
            let s = distinct[k % distinct.len()];
            client_nodes.push(cloud);
            sinks.push(s);
            if !routes.iter().any(|r| r.from == cloud && r.to == s) {
                routes.push(Route {
                    from: cloud,
                    to: s,
                    hops: vec![1, 0],
                });
                routes.push(Route {
                    from: s,
                    to: cloud,
                    hops: vec![0, 2],
                });
            }
        }
    }
    let server: NodeId = sinks[0];
    Ok(Topology {
        network: Network::new(nodes, elements, routes),
        client_nodes,
        server,
        client_servers: sinks,
    })
}
