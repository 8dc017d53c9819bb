//! `gprs`: the clients behind one GPRS modem (docs/networks.md). The modem's uplink is slow
//! (15 kbit/s by default) behind the modem's send buffer; the downlink faster (40 kbit/s)
//! behind the network's buffer; each direction then has a jittery per-packet delay (uniform
//! in `gprs_delay_ms`, FIFO kept) and rare independent losses. These defaults are documented
//! choices in the range GPRS (EDGE-less, CS-2) offers, not measurements.
//!
//! ```text
//! devices ─▶ modem buffer → uplink 15 kbit/s (loss) ─▶ delay 300–700 ms ─▶ server
//! devices ◀─ downlink 40 kbit/s (loss) ← network buffer ◀─ delay 300–700 ms ◀─ server
//! ```

use super::Topology;
use crate::config::RunConfig;
use crate::net::link::{Link, LinkParams};
use crate::net::loss::LossProcess;
use crate::net::network::{
    Element, LinkElement, LinkRole, Network, Node, NodeRole, PathElement, Route,
};
use crate::net::path::PathDelay;
use crate::sim::streams::{stream, Stream};
use crate::testbed::{millis, ConfigError};
use coaplab_cc::Duration;

const DEVICES: u16 = 0;
const SERVER: u16 = 2;

pub fn build(cfg: &RunConfig, replication: u64) -> Result<Topology, ConfigError> {
    let n = cfg.network.clone().unwrap_or_default();
    if n.gprs_delay_ms[0] > n.gprs_delay_ms[1] {
        return Err(ConfigError(format!(
            "network.gprs_delay_ms: {:?} must be [min, max] with min <= max",
            n.gprs_delay_ms
        )));
    }
    let (seed, rep) = (cfg.seed, replication);
    let loss = || {
        if n.gprs_loss > 0.0 {
            LossProcess::Bernoulli(n.gprs_loss)
        } else {
            LossProcess::None
        }
    };
    let link = |name: &str, role, kbps: f64, buffer: u64, s| {
        Element::Link(LinkElement {
            name: name.into(),
            role,
            link: Link::new(
                LinkParams {
                    rate_bps: (kbps * 1000.0).round() as u64,
                    delay: Duration::ZERO,
                    buffer_bytes: Some(buffer),
                    overhead_bytes: cfg.link.link_overhead_bytes,
                },
                loss(),
            ),
            rng: stream(seed, rep, s),
        })
    };
    let path = |name: &str, s| {
        Element::Path(PathElement {
            name: name.into(),
            path: PathDelay::new(millis(n.gprs_delay_ms[0]), millis(n.gprs_delay_ms[1])),
            rng: stream(seed, rep, s),
        })
    };
    let elements = vec![
        link(
            "gprs-uplink",
            LinkRole::Uplink,
            n.gprs_uplink_kbps,
            n.gprs_modem_buffer_bytes,
            Stream::UplinkErrors,
        ),
        path("gprs-delay-up", Stream::PathDelayUp),
        path("gprs-delay-down", Stream::PathDelayDown),
        link(
            "gprs-downlink",
            LinkRole::Downlink,
            n.gprs_downlink_kbps,
            n.gprs_network_buffer_bytes,
            Stream::DownlinkErrors,
        ),
    ];
    let node = |name: &str, role| Node {
        name: name.into(),
        role,
    };
    let nodes = vec![
        node("devices", NodeRole::Clients),
        node("gprs-network", NodeRole::Router),
        node("server", NodeRole::Server),
    ];
    let routes = vec![
        Route {
            from: DEVICES,
            to: SERVER,
            hops: vec![0, 1],
        },
        Route {
            from: SERVER,
            to: DEVICES,
            hops: vec![2, 3],
        },
    ];
    Ok(Topology {
        network: Network::new(nodes, elements, routes),
        client_nodes: vec![DEVICES],
        server: SERVER,
        client_servers: Vec::new(),
    })
}
