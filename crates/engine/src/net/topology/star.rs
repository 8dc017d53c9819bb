//! The reference star (docs/design.md §2, docs/model.md): every client shares one
//! constrained link to a router, which reaches the server over a path of variable delay.
//!
//! ```text
//! devices ─▶ uplink (queue → serializer → 200 ms, loss) ─▶ router ─▶ path 10–20 ms ─▶ server
//! devices ◀─ downlink (bottleneck queue → serializer → 400 ms, loss) ◀─ router ◀─ path ◀─ server
//! ```
//!
//! Its elements draw from the RNG streams the testbed has always used (uplink errors,
//! downlink errors, path up, path down), so its results do not depend on this description.

use super::built::Topology;
use crate::basics::millis;
use crate::config::{ErrorsConfig, RunConfig};
use crate::error::Error;
use crate::net::link::{Link, LinkParams};
use crate::net::loss::LossProcess;
use crate::net::network::{
    Element, LinkElement, LinkRole, Network, Node, NodeRole, PathElement, Route,
};
use crate::net::path::PathDelay;
use crate::sim::streams::{stream, Stream};

const DEVICES: u16 = 0;
const ROUTER: u16 = 1;
const SERVER: u16 = 2;
const UPLINK: u16 = 0;
const PATH_UP: u16 = 1;
const PATH_DOWN: u16 = 2;
const DOWNLINK: u16 = 3;

pub fn build(cfg: &RunConfig, replication: u64) -> Result<Topology, Error> {
    let l = &cfg.link;
    if !(l.downlink_kbps > 0.0 && l.uplink_kbps > 0.0) {
        return Err(Error::key(
            "link.downlink_kbps / link.uplink_kbps",
            "rates must be > 0",
        ));
    }
    if !(l.path_delay_ms[0] >= 0.0 && l.path_delay_ms[0] <= l.path_delay_ms[1]) {
        return Err(Error::key(
            "link.path_delay_ms",
            format!(
                "{:?} must be [min, max] with 0 <= min <= max",
                l.path_delay_ms
            ),
        ));
    }
    let loss = |direction: &str| -> Result<LossProcess, Error> {
        match &l.errors {
            ErrorsConfig::Profile(p) => LossProcess::profile(p.as_str()).ok_or_else(|| {
                Error::key(
                    "link.errors",
                    format!(
                    "'{p}' ({direction}) is not a profile; allowed: none, low, medium, high, or a table"
                ))
            }),
            ErrorsConfig::Chain(t) => LossProcess::chain(t.params())
                .map_err(|m| Error::key("link.errors", m)),
        }
    };
    let (seed, rep) = (cfg.seed, replication);
    let link = |name: &str, role, kbps: f64, delay_ms: f64, buffer, s| -> Result<_, Error> {
        Ok(Element::Link(LinkElement {
            name: name.into(),
            role,
            link: Link::try_new(
                LinkParams {
                    rate_bps: (kbps * 1000.0).round() as u64,
                    delay: millis(delay_ms),
                    buffer_bytes: buffer,
                    overhead_bytes: l.link_overhead_bytes,
                },
                loss(name)?,
            )
            .map_err(|m| Error::key(format!("link.{name}_kbps"), format!("{kbps} gives a {m}")))?,
            rng: stream(seed, rep, s),
            acked_on: None,
        }))
    };
    let path = |name: &str, s| {
        Element::Path(PathElement {
            name: name.into(),
            path: PathDelay::new(millis(l.path_delay_ms[0]), millis(l.path_delay_ms[1])),
            rng: stream(seed, rep, s),
        })
    };
    let elements = vec![
        link(
            "uplink",
            LinkRole::Uplink,
            l.uplink_kbps,
            l.uplink_delay_ms,
            l.uplink_buffer_bytes,
            Stream::UplinkErrors,
        )?,
        path("path-up", Stream::PathDelayUp),
        path("path-down", Stream::PathDelayDown),
        link(
            "downlink",
            LinkRole::Downlink,
            l.downlink_kbps,
            l.downlink_delay_ms,
            Some(l.buffer_bytes),
            Stream::DownlinkErrors,
        )?,
    ];
    let node = |name: &str, role| Node {
        name: name.into(),
        role,
    };
    let nodes = vec![
        node("devices", NodeRole::Clients),
        node("router", NodeRole::Router),
        node("server", NodeRole::Server),
    ];
    let routes = vec![
        Route {
            from: DEVICES,
            to: SERVER,
            hops: vec![UPLINK, PATH_UP],
        },
        Route {
            from: SERVER,
            to: DEVICES,
            hops: vec![PATH_DOWN, DOWNLINK],
        },
    ];
    debug_assert!(nodes[ROUTER as usize].role == NodeRole::Router);
    Ok(Topology {
        network: Network::new(nodes, elements, routes),
        client_nodes: vec![DEVICES],
        server: SERVER,
        client_servers: Vec::new(),
    })
}
