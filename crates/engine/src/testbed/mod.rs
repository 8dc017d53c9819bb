//! The reference testbed (SPEC §2) wired together: the network shared by both transports,
//! and one event loop per transport.
//!
//! ```text
//! clients ─▶ uplink (queue → serializer → 200 ms, loss) ─▶ router ─▶ path 10–20 ms ─▶ server
//! clients ◀─ downlink (bottleneck queue → serializer → 400 ms, loss) ◀─ router ◀─ path ◀─ server
//! ```
//!
//! | file | transport |
//! |---|---|
//! | `udp.rs` | CoAP over UDP with the algorithm library (SPEC §3) |
//! | `tcp/` | CoAP over TCP (RFC 8323) with the TCP model (SPEC §4) |

pub mod tcp;
pub mod udp;

use std::io::Write;

use coaplab_cc::rng::Xoshiro256pp;
use coaplab_cc::{Duration, Instant};

use crate::coap::client::ClientStats;
use crate::config::{ErrorsConfig, RunConfig};
use crate::metrics::{PacketStats, RunResult};
use crate::net::link::{Link, LinkParams};
use crate::net::loss::LossProcess;
use crate::net::path::PathDelay;
use crate::sim::slab::PacketId;
use crate::sim::streams::{stream, Stream};

pub use udp::Testbed;

/// An invalid configuration, found before anything runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError(pub String);

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for ConfigError {}

pub(crate) fn secs(s: f64) -> Duration {
    Duration::from_secs_f64(s)
}
pub(crate) fn millis(ms: f64) -> Duration {
    Duration::from_secs_f64(ms / 1000.0)
}

/// The address of client `i` in captures: 10.a.b.c with a.b.c = i + 1.
pub(crate) fn client_addr(i: u32) -> [u8; 4] {
    let n = i + 1;
    [10, (n >> 16) as u8, (n >> 8) as u8, n as u8]
}
pub(crate) const SERVER_ADDR: [u8; 4] = [192, 0, 2, 1];
/// First ephemeral port of a client (IANA dynamic range, RFC 6335 §6).
pub(crate) const CLIENT_PORT: u16 = 49152;

/// The links and the router ↔ server path, with their random streams.
pub struct Network {
    pub uplink: Link<PacketId>,
    pub downlink: Link<PacketId>,
    pub path_up: PathDelay,
    pub path_down: PathDelay,
    pub rng_up_errors: Xoshiro256pp,
    pub rng_down_errors: Xoshiro256pp,
    pub rng_path_up: Xoshiro256pp,
    pub rng_path_down: Xoshiro256pp,
}

impl Network {
    /// Validates the link and workload parameters both transports share and builds the network.
    pub fn new(cfg: &RunConfig, replication: u64) -> Result<Self, ConfigError> {
        let err = |m: String| Err(ConfigError(m));
        let l = &cfg.link;
        let w = &cfg.workload;
        if !(l.downlink_kbps > 0.0 && l.uplink_kbps > 0.0) {
            return err("link.downlink_kbps / link.uplink_kbps: rates must be > 0".into());
        }
        if !(l.path_delay_ms[0] >= 0.0 && l.path_delay_ms[0] <= l.path_delay_ms[1]) {
            return err(format!(
                "link.path_delay_ms: {:?} must be [min, max] with 0 <= min <= max",
                l.path_delay_ms
            ));
        }
        if w.batch[0] == 0 || w.batch[0] > w.batch[1] {
            return err(format!(
                "workload.batch: {:?} must be [min, max] with 1 <= min <= max",
                w.batch
            ));
        }
        let loss = |direction: &str| -> Result<LossProcess, ConfigError> {
            match &l.errors {
                ErrorsConfig::Profile(p) => LossProcess::profile(p.as_str()).ok_or_else(|| {
                    ConfigError(format!("link.errors: '{p}' ({direction}) is not a profile; allowed: none, low, medium, high, or a table"))
                }),
                ErrorsConfig::Chain(t) => Ok(LossProcess::Chain(crate::net::loss::Chain::new(t.params()))),
            }
        };
        let uplink = Link::new(
            LinkParams {
                rate_bps: (l.uplink_kbps * 1000.0).round() as u64,
                delay: millis(l.uplink_delay_ms),
                buffer_bytes: l.uplink_buffer_bytes,
                overhead_bytes: l.link_overhead_bytes,
            },
            loss("uplink")?,
        );
        let downlink = Link::new(
            LinkParams {
                rate_bps: (l.downlink_kbps * 1000.0).round() as u64,
                delay: millis(l.downlink_delay_ms),
                buffer_bytes: Some(l.buffer_bytes),
                overhead_bytes: l.link_overhead_bytes,
            },
            loss("downlink")?,
        );
        let path = [millis(l.path_delay_ms[0]), millis(l.path_delay_ms[1])];
        let seed = cfg.seed;
        Ok(Network {
            uplink,
            downlink,
            path_up: PathDelay::new(path[0], path[1]),
            path_down: PathDelay::new(path[0], path[1]),
            rng_up_errors: stream(seed, replication, Stream::UplinkErrors),
            rng_down_errors: stream(seed, replication, Stream::DownlinkErrors),
            rng_path_up: stream(seed, replication, Stream::PathDelayUp),
            rng_path_down: stream(seed, replication, Stream::PathDelayDown),
        })
    }
}

/// A packet that finished serializing on a link.
pub struct Delivery {
    pub packet: PacketId,
    /// When it reaches its destination end (the server, after the path, for the uplink; the
    /// client for the downlink); `None` if a link error lost it.
    pub at: Option<Instant>,
    /// When the next packet in the link's queue finishes serializing.
    pub next_done_at: Option<Instant>,
}

impl Network {
    /// The uplink finished serializing a packet (errors decided now, SPEC §2).
    pub fn on_uplink_tx_done(&mut self, now: Instant) -> Delivery {
        let done = self.uplink.on_tx_done(now, &mut self.rng_up_errors);
        Delivery {
            packet: done.packet,
            // Uplink deliveries leave in transmission order, so the path sees them in arrival
            // order even though the path delay is drawn now.
            at: done
                .delivered_at
                .map(|at_router| self.path_up.on_packet(at_router, &mut self.rng_path_up)),
            next_done_at: done.next_done_at,
        }
    }

    /// The downlink finished serializing a packet.
    pub fn on_downlink_tx_done(&mut self, now: Instant) -> Delivery {
        let done = self.downlink.on_tx_done(now, &mut self.rng_down_errors);
        Delivery {
            packet: done.packet,
            at: done.delivered_at,
            next_done_at: done.next_done_at,
        }
    }

    /// When a packet the server sends `now` reaches the bottleneck buffer.
    pub fn server_to_router(&mut self, now: Instant) -> Instant {
        self.path_down.on_packet(now, &mut self.rng_path_down)
    }

    /// Packet counters of the run (SPEC §6) over a measured period of `period` s;
    /// `unnecessary_downlink_bytes` were spent on unnecessary retransmissions (or responses to
    /// them) out of `downlink_kbps` of capacity.
    pub fn packet_stats(
        &self,
        period: f64,
        downlink_kbps: f64,
        unnecessary_downlink_bytes: u64,
    ) -> PacketStats {
        let per = |x: f64| if period > 0.0 { x / period } else { 0.0 };
        let (up, down) = (&self.uplink.stats, &self.downlink.stats);
        let down_capacity_bytes = period * downlink_kbps * 1000.0 / 8.0;
        PacketStats {
            sent: up.sent + down.sent,
            sent_uplink: up.sent,
            sent_downlink: down.sent,
            dropped_buffer: up.dropped_buffer + down.dropped_buffer,
            dropped_buffer_downlink: down.dropped_buffer,
            lost_link: up.lost_link + down.lost_link,
            lost_link_uplink: up.lost_link,
            lost_link_downlink: down.lost_link,
            bytes_uplink: up.bytes,
            bytes_downlink: down.bytes,
            utilisation_uplink: per(up.busy.secs_f64()),
            utilisation_downlink: per(down.busy.secs_f64()),
            unnecessary_downlink_share: if down_capacity_bytes > 0.0 {
                unnecessary_downlink_bytes as f64 / down_capacity_bytes
            } else {
                0.0
            },
            max_queue_bytes: self.downlink.max_queue_bytes(),
            mean_queue_delay_s: if down.sent > 0 {
                down.queue_wait.secs_f64() / down.sent as f64
            } else {
                0.0
            },
        }
    }
}

/// The measured period (SPEC §6): from the first request of any client to the end of the
/// last exchange of any client.
pub(crate) struct MeasuredPeriod {
    first: f64,
    last: f64,
}

impl MeasuredPeriod {
    pub(crate) fn new() -> Self {
        MeasuredPeriod {
            first: f64::INFINITY,
            last: 0.0,
        }
    }

    /// A client's FCT (first request → last end), extending the period with it.
    pub(crate) fn client_fct(&mut self, s: &ClientStats) -> Option<f64> {
        let (a, b) = (s.first_request?, s.last_end?);
        self.first = self.first.min(a.secs_f64());
        self.last = self.last.max(b.secs_f64());
        Some((b - a).secs_f64())
    }

    /// Its length, s (0 if no client completed anything).
    pub(crate) fn length(&self) -> f64 {
        if self.last > self.first {
            self.last - self.first
        } else {
            0.0
        }
    }
}

/// Checks `cfg` the way a run would, without running it.
pub fn check(cfg: &RunConfig) -> Result<(), ConfigError> {
    match cfg.coap.transport.as_str() {
        "udp" => udp::Testbed::new(cfg, 0, false).map(|_| ()),
        "tcp" => tcp::TcpTestbed::new(cfg, 0, false).map(|_| ()),
        other => Err(ConfigError(format!(
            "coap.transport: '{other}' is not a transport; allowed: udp, tcp"
        ))),
    }
}

/// Runs replication `replication` of `cfg`; with `pcap`, also writes the capture there.
pub fn run(
    cfg: &RunConfig,
    replication: u64,
    pcap: Option<&mut dyn Write>,
) -> Result<RunResult, ConfigError> {
    let result = match cfg.coap.transport.as_str() {
        "tcp" => {
            let mut tb = tcp::TcpTestbed::new(cfg, replication, pcap.is_some())?;
            tb.run();
            if let Some(out) = pcap {
                tb.write_pcap(out)
                    .map_err(|e| ConfigError(format!("writing pcap: {e}")))?;
            }
            tb.result()
        }
        _ => {
            check_transport(cfg)?;
            let mut tb = udp::Testbed::new(cfg, replication, pcap.is_some())?;
            tb.run();
            if let Some(out) = pcap {
                tb.write_pcap(out)
                    .map_err(|e| ConfigError(format!("writing pcap: {e}")))?;
            }
            tb.result()
        }
    };
    Ok(result)
}

fn check_transport(cfg: &RunConfig) -> Result<(), ConfigError> {
    match cfg.coap.transport.as_str() {
        "udp" | "tcp" => Ok(()),
        other => Err(ConfigError(format!(
            "coap.transport: '{other}' is not a transport; allowed: udp, tcp"
        ))),
    }
}
