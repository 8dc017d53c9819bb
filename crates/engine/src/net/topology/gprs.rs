//! `gprs`: the clients behind one GPRS modem (docs/networks.md, "The GPRS preset"). The
//! modem's uplink is a link whose time per packet comes from the GPRS radio model
//! (`net::gprs`: SNDCP/LLC/RLC overheads, CS-3 radio blocks on one timeslot, TBF set-up and
//! hold, Packet Downlink Ack/Nack blocks, block errors in fades) behind the modem's buffer;
//! the downlink a 40 kbit/s serializer behind the network's buffer that needs a downlink TBF
//! (`net::gprs_downlink`: establishment, delayed release); each direction has
//! a jittery per-packet delay beyond the radio (uniform in `gprs_delay_ms`, FIFO kept) and
//! rare independent losses. The defaults are derived from the 3GPP standards and calibrated
//! on the CoCoA study's GPRS figures (Betzler et al. 2016, Table II); each is a key.
//! `gprs_uplink_kbps` replaces the radio model with a plain serializer (the preset before).
//!
//! ```text
//! devices ─▶ modem buffer → uplink radio blocks (loss) ─▶ delay 100–200 ms ─▶ server
//! devices ◀─ downlink 40 kbit/s (loss) ← network buffer ◀─ delay 100–200 ms ◀─ server
//! ```
//!
//! The downlink acknowledges nothing itself: each packet it delivers costs the uplink its
//! Packet Downlink Ack/Nack (`LinkElement::acked_on`).

use super::built::Topology;
use crate::basics::millis;
use crate::config::RunConfig;
use crate::error::Error;
use crate::net::gprs::{Fades, GprsConfig, GprsUplink, GprsUplinkParams};
use crate::net::gprs_downlink::{GprsDownlink, GprsDownlinkParams};
use crate::net::link::{Link, LinkParams};
use crate::net::loss::LossProcess;
use crate::net::network::{
    Element, LinkElement, LinkRole, Network, Node, NodeRole, PathElement, Route,
};
use crate::net::path::PathDelay;
use crate::sim::streams::{stream, Stream};
use coaplab_cc::Duration;

const DEVICES: u16 = 0;
/// The uplink's element index (it acknowledges what the downlink delivers).
const UPLINK: u16 = 0;
const SERVER: u16 = 2;

/// The GPRS keys of `cfg` (their defaults without them).
fn config(cfg: &RunConfig) -> GprsConfig {
    cfg.network
        .as_ref()
        .and_then(|n| n.gprs())
        .cloned()
        .unwrap_or_default()
}

/// The radio of the `gprs_*` keys (docs/networks.md, "The GPRS preset").
pub fn uplink_params(n: &GprsConfig) -> GprsUplinkParams {
    let ms = |v: f64| Duration::from_secs_f64(v / 1e3);
    GprsUplinkParams {
        coding_scheme: n.gprs_coding_scheme,
        timeslots: n.gprs_uplink_timeslots,
        overhead_octets: n.gprs_overhead_bytes,
        tbf_setup: ms(n.gprs_tbf_setup_ms),
        tbf_hold: ms(n.gprs_tbf_hold_ms),
        ack_blocks_per_downlink_packet: n.gprs_ack_blocks,
        ack_interval_blocks: n.gprs_ul_ack_interval_blocks,
        cv_max_blocks: n.gprs_bs_cv_max,
        block_error_rate: n.gprs_block_error_rate,
        fades: (n.gprs_fade_mean_ms > 0.0).then(|| Fades {
            interval_mean: ms(n.gprs_fade_interval_ms),
            mean: ms(n.gprs_fade_mean_ms),
            block_error_rate: n.gprs_fade_block_error_rate,
        }),
    }
}

/// What the run guard needs of a GPRS network (`sim::guard`, through
/// `topology::guard_terms`), for packets of `ip_bytes`.
pub fn guard_terms(cfg: &RunConfig, ip_bytes: u32) -> super::built::GuardTerms {
    let n = config(cfg);
    // The slower of the downlink and the uplink — a plain rate, or the radio-block uplink's
    // worst mean time per packet (`GprsUplinkParams::worst_packet_s`).
    let (slowest_kbps, packet_s) = match n.gprs_uplink_kbps {
        Some(up) => (n.gprs_downlink_kbps.min(up), 0.0),
        None => (
            n.gprs_downlink_kbps,
            uplink_params(&n).worst_packet_s(ip_bytes),
        ),
    };
    super::built::GuardTerms {
        slowest_kbps: Some(slowest_kbps),
        packet_s,
        extra_round_trip_ms: 2.0 * n.gprs_delay_ms[1],
        downlink_kbps: Some(n.gprs_downlink_kbps),
    }
}

pub fn build(cfg: &RunConfig, replication: u64) -> Result<Topology, Error> {
    let n = config(cfg);
    if n.gprs_delay_ms[0] > n.gprs_delay_ms[1] {
        return Err(Error::key(
            "network.gprs_delay_ms",
            format!("{:?} must be [min, max] with min <= max", n.gprs_delay_ms),
        ));
    }
    for (key, p) in [
        ("gprs_block_error_rate", n.gprs_block_error_rate),
        ("gprs_fade_block_error_rate", n.gprs_fade_block_error_rate),
    ] {
        if !(0.0..1.0).contains(&p) {
            // A block that always fails would never get through.
            return Err(Error::key(
                format!("network.{key}"),
                format!("{p} is out of range; allowed: 0 to 0.99"),
            ));
        }
    }
    if n.gprs_fade_mean_ms > 0.0 && n.gprs_fade_interval_ms < 0.001 {
        return Err(Error::key(
            "network.gprs_fade_interval_ms",
            format!(
                "{} is out of range with fades (gprs_fade_mean_ms > 0); allowed: >= 0.001",
                n.gprs_fade_interval_ms
            ),
        ));
    }
    let (seed, rep) = (cfg.seed, replication);
    let loss = || {
        if n.gprs_loss > 0.0 {
            LossProcess::Bernoulli(n.gprs_loss)
        } else {
            LossProcess::None
        }
    };
    let params = |kbps: f64, buffer: u64| LinkParams {
        rate_bps: (kbps * 1000.0).round() as u64,
        delay: Duration::ZERO,
        buffer_bytes: Some(buffer),
        overhead_bytes: cfg.link.link_overhead_bytes,
    };
    let radio = uplink_params(&n);
    // The radio-block uplink, or (with `gprs_uplink_kbps`) a plain serializer of that rate.
    let (uplink, acked_on) = match n.gprs_uplink_kbps {
        Some(kbps) => (
            Link::new(params(kbps, n.gprs_modem_buffer_bytes), loss()),
            None,
        ),
        None => (
            Link::with_medium(
                params(1.0, n.gprs_modem_buffer_bytes),
                loss(),
                Box::new(GprsUplink::new(
                    radio,
                    stream(seed, rep, Stream::GprsBlocks),
                )),
            ),
            Some(UPLINK),
        ),
    };
    // The downlink: a serializer of its rate needing a downlink TBF (`net::gprs_downlink`),
    // or a plain one with the plain-rate uplink (the preset before).
    let dl = params(n.gprs_downlink_kbps, n.gprs_network_buffer_bytes);
    let downlink = match n.gprs_uplink_kbps {
        Some(_) => Link::new(dl, loss()),
        None => {
            let medium = GprsDownlink::new(GprsDownlinkParams {
                rate_bps: dl.rate_bps,
                overhead_bytes: dl.overhead_bytes,
                tbf_setup: millis(n.gprs_dl_tbf_setup_ms),
                tbf_idle: millis(n.gprs_dl_tbf_idle_ms),
            });
            Link::with_medium(dl, loss(), Box::new(medium))
        }
    };
    let path = |name: &str, s| {
        Element::Path(PathElement {
            name: name.into(),
            path: PathDelay::new(millis(n.gprs_delay_ms[0]), millis(n.gprs_delay_ms[1])),
            rng: stream(seed, rep, s),
        })
    };
    let elements = vec![
        Element::Link(LinkElement {
            name: "gprs-uplink".into(),
            role: LinkRole::Uplink,
            link: uplink,
            rng: stream(seed, rep, Stream::UplinkErrors),
            acked_on: None,
        }),
        path("gprs-delay-up", Stream::PathDelayUp),
        path("gprs-delay-down", Stream::PathDelayDown),
        Element::Link(LinkElement {
            name: "gprs-downlink".into(),
            role: LinkRole::Downlink,
            link: downlink,
            rng: stream(seed, rep, Stream::DownlinkErrors),
            acked_on,
        }),
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
