//! What the multi-hop IEEE 802.15.4 topologies share (docs/networks.md): from node positions,
//! a border router and the clients' (node, sink) pairs, a network whose nodes are the mesh's
//! nodes, whose one element is the mesh, and whose routes are the clients' ways to their
//! sinks and back.

use super::built::Topology;
use crate::basics::millis;
use crate::config::{LinkLossModel, MeshConfig, RdcKind, RunConfig};
use crate::error::Error;
use crate::net::network::{Element, Network, Node, NodeId, NodeRole, PathElement, Route};
use crate::net::path::PathDelay;
use crate::net::radio::config::ContikiCpuTime;
use crate::net::radio::contiki::ContikiParams;
use crate::net::radio::mac::{self, MacParams};
use crate::net::radio::prr;
use crate::net::radio::{Mesh, RadioParams};
use crate::sim::streams::{stream, Stream};
use crate::workload::client_count;
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
    /// Sinks no mesh client talks to (`file` topologies), in node order: outside clients
    /// serve them after the mesh clients' sinks.
    pub idle_sinks: Vec<u16>,
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
            idle_sinks: Vec::new(),
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
        .and_then(|n| n.mesh())
        .map_or(crate::net::topology::mesh_config::RANGE_M, |m| m.range_m)
}

/// Contiki 2.6 `core/net/mac/contikimac.c`: `#if NETSTACK_RDC_CHANNEL_CHECK_RATE >= 64`,
/// `WITH_PHASE_OPTIMIZATION` is 0.
const PHASE_OPTIMIZATION_MAX_RATE_HZ: u32 = 64;

/// The sinks outside clients serve, in turn: the mesh clients' sinks in client order (each
/// once), then the idle sinks.
pub fn outside_sinks(layout: &Layout) -> Vec<u16> {
    let mut out: Vec<u16> = Vec::new();
    for &(_, s) in &layout.clients {
        if !out.contains(&s) {
            out.push(s);
        }
    }
    out.extend(layout.idle_sinks.iter().copied());
    out
}

fn micros(us: f64) -> Duration {
    Duration::from_nanos((us * 1000.0).round() as u64)
}

/// The radio and MAC parameters of `[network]`.
pub fn radio_params(n: &MeshConfig) -> Result<RadioParams, Error> {
    if n.radio.mac_min_be > n.radio.mac_max_be {
        return Err(Error::key(
            "network.mac_min_be",
            format!(
                "{} is above network.mac_max_be ({}); allowed: <= mac_max_be",
                n.radio.mac_min_be, n.radio.mac_max_be
            ),
        ));
    }
    if mac::by_name(&n.mac).is_none() {
        let names: Vec<&str> = mac::MACS.iter().map(|e| e.name).collect();
        return Err(Error::key(
            "network.mac",
            format!("unknown MAC \"{}\"; allowed: {}", n.mac, names.join(", ")),
        ));
    }
    Ok(RadioParams {
        range_m: n.range_m,
        interference_m: n.range_m * n.interference_factor,
        carrier_sense_m: n.range_m * n.carrier_sense_factor,
        link_loss: n.link_loss,
        addressing: n.radio.mac_addressing,
        mac: MacParams {
            min_be: n.radio.mac_min_be,
            max_be: n.radio.mac_max_be,
            max_csma_backoffs: n.radio.mac_max_csma_backoffs,
            max_frame_retries: n.radio.mac_max_frame_retries,
            unit_backoff: micros(n.radio.unit_backoff_us),
            cca: micros(n.radio.cca_us),
            turnaround: micros(n.radio.turnaround_us),
            ack_wait: micros(n.radio.ack_wait_us),
        },
        queue_frames: n.radio.mac_queue_frames,
        border_router_queue_frames: n.radio.border_router_queue_frames,
        wake_period: (n.rdc.rdc == RdcKind::Contikimac)
            .then(|| Duration::from_nanos(1_000_000_000 / u64::from(n.rdc.channel_check_rate_hz))),
        strobe_gap: micros(n.rdc.strobe_gap_us),
        // contikimac.c: phase optimisation is compiled out from 64 channel checks a second.
        phase_lock: n.rdc.contikimac_phase_optimization
            && n.rdc.channel_check_rate_hz < PHASE_OPTIMIZATION_MAX_RATE_HZ,
        contiki: contiki_params(n)?,
    })
}

/// How many clients run outside the mesh: one per sink of `outside` with
/// `outside_clients_per_sink`, else `outside_clients`.
pub fn outside_client_count(n: &MeshConfig, outside: &[u16]) -> usize {
    if n.outside_clients_per_sink {
        outside.len()
    } else {
        n.outside_clients as usize
    }
}

/// With one outside client per sink: `outside_clients` is 0 or the number of sinks, and the
/// workload has exactly one client per topology client and per sink.
fn check_per_sink(
    cfg: &RunConfig,
    n: &MeshConfig,
    mesh_clients: usize,
    sinks: usize,
) -> Result<(), Error> {
    if n.outside_clients != 0 && n.outside_clients as usize != sinks {
        return Err(Error::key(
            "network.outside_clients",
            format!(
                "{} with network.outside_clients_per_sink = true; \
             allowed: 0 or {sinks} (one per sink)",
                n.outside_clients
            ),
        ));
    }
    let total: u32 = if cfg.group.is_empty() {
        client_count(&cfg.workload)
    } else {
        cfg.group.iter().map(|g| client_count(&g.workload)).sum()
    };
    let want = mesh_clients + sinks;
    if total as usize != want {
        let key = if cfg.group.is_empty() {
            "workload.clients"
        } else {
            "group.clients"
        };
        return Err(Error::key(
            key,
            format!(
            "{total} clients, but network.outside_clients_per_sink = true wires \
             {mesh_clients} mesh clients and one outside client per sink ({sinks}); allowed: {want}"
        ),
        ));
    }
    Ok(())
}

/// The Contiki profile's parameters (`network.mac = "contiki"`), or `None`.
fn contiki_params(n: &MeshConfig) -> Result<Option<ContikiParams>, Error> {
    if n.mac != "contiki" {
        return Ok(None);
    }
    // default_timebase(): CLOCK_SECOND / NETSTACK_RDC_CHANNEL_CHECK_RATE in whole ticks, as C's
    // integer division computes it (ContikiMAC's channel-check interval is the same).
    let ticks = n.contiki.contiki_clock_second / n.rdc.channel_check_rate_hz;
    if ticks == 0 {
        return Err(Error::key(
            "network.channel_check_rate_hz",
            format!(
                "{} gives a Contiki time base of 0 ticks \
             (contiki_clock_second {} / rate); allowed: 1 ..= contiki_clock_second",
                n.rdc.channel_check_rate_hz, n.contiki.contiki_clock_second
            ),
        ));
    }
    Ok(Some(ContikiParams {
        tick: Duration::from_nanos(1_000_000_000 / u64::from(n.contiki.contiki_clock_second)),
        timebase_ticks: ticks,
        max_neighbor_queues: n.contiki.contiki_max_neighbor_queues as usize,
        max_transmissions: n.contiki.contiki_max_mac_transmissions,
        wait_ack: n.contiki.contiki_autoack || n.rdc.rdc == RdcKind::Contikimac,
        ack_wait: micros(n.contiki.contiki_ack_wait_us),
        after_ack_wait: micros(n.contiki.contiki_after_ack_wait_us),
        reassembly_timeout: micros(n.contiki.contiki_reassembly_timeout_s * 1e6),
        processing: micros(n.contiki.contiki_processing_us),
        cpu_fixed: match n.contiki.contiki_cpu_time {
            ContikiCpuTime::FrameLength => Some(micros(n.contiki.contiki_cpu_fixed_us)),
            ContikiCpuTime::Constant => None,
        },
        tick_timers: n.contiki.contiki_clock_ticks,
        pending_refusal: n.contiki.contiki_pending_packet,
        rpl_etx: n.contiki.contiki_rpl_etx,
    }))
}

/// Builds replication `replication`'s mesh network of `layout` (plus, with
/// `network.outside_clients`, a host of clients outside the mesh behind the border router).
pub fn build(cfg: &RunConfig, replication: u64, layout: Layout) -> Result<Topology, Error> {
    let net_cfg = cfg
        .network
        .as_ref()
        .and_then(|n| n.mesh())
        .cloned()
        .unwrap_or_default();
    let kind = cfg.network.as_ref().map_or("star", |n| n.kind().as_str());
    let params = radio_params(&net_cfg)?;
    let outside = outside_sinks(&layout);
    if net_cfg.outside_clients_per_sink {
        check_per_sink(cfg, &net_cfg, layout.clients.len(), outside.len())?;
    }
    if let (Some(_), Some(bytes)) = (params.contiki, cfg.workload.request_bytes) {
        // Contiki's buffer pool must hold one request's fragments (`radio/mac/contiki.rs`).
        let need =
            crate::net::radio::contiki::buffers_for_packet(bytes, net_cfg.radio.mac_addressing);
        let have = net_cfg
            .radio
            .mac_queue_frames
            .min(net_cfg.radio.border_router_queue_frames);
        if let Some(need) = need.filter(|&n| have < n) {
            let key = if net_cfg.radio.mac_queue_frames < need {
                "mac_queue_frames"
            } else {
                "border_router_queue_frames"
            };
            return Err(Error::key(
                format!("network.{key}"),
                format!(
                    "{have} buffers cannot take one {bytes}-byte request (its fragments and \
                 6LoWPAN's temporary copy need {need}); allowed with mac = \"contiki\": >= {need}"
                ),
            ));
        }
    }
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
        let key = match (kind, layout_links) {
            ("file", true) => "network.links".to_string(),
            ("file", false) => "network.nodes (positions, with network.range_m)".to_string(),
            (kind, _) => format!("network.kind = \"{kind}\" (its spacing, with network.range_m)"),
        };
        Error::key(key, e.to_string())
    })?;
    let mut mesh = mesh;
    // Every node runs the MAC `network.mac` names (checked by `radio_params`).
    mesh.set_mac(mac::by_name(&net_cfg.mac).expect("a registered MAC"));
    if net_cfg.shadowing.link_loss_model == LinkLossModel::Shadowing {
        // One draw per link, from the seed alone: every replication runs on the same links,
        // as the runs of a testbed do.
        let model = prr::Shadowing {
            tx_power_dbm: net_cfg.shadowing.tx_power_dbm,
            noise_floor_dbm: net_cfg.shadowing.noise_floor_dbm,
            path_loss_exponent: net_cfg.shadowing.path_loss_exponent,
            path_loss_d0_db: net_cfg.shadowing.path_loss_d0_db,
            sigma_db: net_cfg.shadowing.shadowing_sigma_db,
        };
        let mut rng = stream(seed, 0, Stream::Radio(u32::MAX - 1));
        let bers = prr::link_bers(
            &model,
            &mesh.positions,
            |i, j| mesh.in_range(i as u16, j as u16),
            &mut rng,
        );
        mesh.set_link_bers(bers)
            .map_err(|e| Error::key("network.link_loss_model", format!("\"shadowing\": {e}")))?;
    }
    for l in &net_cfg.lossy_links {
        if l.a as usize >= n || l.b as usize >= n || l.a == l.b {
            return Err(Error::key(
                "network.lossy_links",
                format!(
                    "{{a = {}, b = {}}} is not a link between two of the {n} nodes",
                    l.a, l.b
                ),
            ));
        }
        if !(0.0..=1.0).contains(&l.loss) {
            return Err(Error::key(
                "network.lossy_links",
                format!(
                    "{{a = {}, b = {}, loss = {}}}: the loss probability is \
                 outside [0, 1]; allowed: 0 to 1",
                    l.a, l.b, l.loss
                ),
            ));
        }
        mesh.set_link_loss(l.a, l.b, l.loss);
    }
    let mut sinks: Vec<u16> = layout.clients.iter().map(|&(_, s)| s).collect();
    let mut client_nodes: Vec<u16> = layout.clients.iter().map(|&(c, _)| c).collect();
    let mut nodes: Vec<Node> = (0..n as u16)
        .map(|i| Node {
            name: format!("node-{i}"),
            role: if sinks.contains(&i) || layout.idle_sinks.contains(&i) {
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
    if outside_client_count(&net_cfg, &outside) > 0 {
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
        for k in 0..outside_client_count(&net_cfg, &outside) {
            let s = outside[k % outside.len()];
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
