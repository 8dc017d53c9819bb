//! The fully resolved configuration of one simulated testbed (SPEC §2, §5, §7.1), as the
//! Python front hands it over (JSON). Every field is present: defaults were filled in by
//! `coaplab.scenario`, and the same values form the configuration's identity.

use serde::Deserialize;

use crate::net::loss::ChainParams;

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunConfig {
    #[serde(default)]
    pub name: String,
    /// Base seed; replication `r` derives its streams from `(seed, r)`.
    pub seed: u64,
    #[serde(default = "one")]
    pub replications: u64,
    pub link: LinkConfig,
    pub workload: WorkloadConfig,
    pub coap: CoapConfig,
    /// TCP model parameters (transport `tcp` only; absent = SPEC §4.2 defaults).
    #[serde(default)]
    pub tcp: Option<TcpSection>,
    /// Record per-client timer / RTO traces.
    #[serde(default)]
    pub trace: bool,
    /// The network the clients and the server run on; absent = the reference star
    /// (docs/design.md §2).
    #[serde(default)]
    pub network: Option<NetworkConfig>,
    /// Client populations (docs/design.md, "Client populations"). Empty = one population
    /// described by `workload`, `coap` and `tcp`. Each group is fully resolved (the Python
    /// front applied the inheritance from `workload` / `coap` / `tcp`).
    #[serde(default)]
    pub group: Vec<GroupConfig>,
}

/// Which network a run simulates.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NetworkConfig {
    /// `star`: the reference testbed (the only kind so far).
    pub kind: String,
}

/// One client population: its own workload, CoAP settings and (transport `tcp`) TCP model.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GroupConfig {
    /// Unique within the run; per-group metrics and client rows carry it.
    pub name: String,
    pub workload: WorkloadConfig,
    pub coap: CoapConfig,
    #[serde(default)]
    pub tcp: Option<TcpSection>,
}

fn one() -> u64 {
    1
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkConfig {
    /// Server → devices rate, kbit/s (1 kbit = 1000 bit). SPEC §2 default 30.
    pub downlink_kbps: f64,
    /// Devices → server rate, kbit/s. Default 60.
    pub uplink_kbps: f64,
    /// One-way propagation delay of the downlink, ms. Default 400.
    pub downlink_delay_ms: f64,
    /// One-way propagation delay of the uplink, ms. Default 200.
    pub uplink_delay_ms: f64,
    /// Largest IP packet, bytes. Default 296 (TCP MSS 256).
    pub mtu: u32,
    /// Bottleneck buffer in front of the downlink, bytes (tail drop). Default 2500.
    pub buffer_bytes: u64,
    /// Buffer in front of the uplink, bytes; `None` = unlimited (default).
    pub uplink_buffer_bytes: Option<u64>,
    /// Router ↔ server delay, uniform in `[min, max]` ms per packet, FIFO kept. Default [10, 20].
    pub path_delay_ms: [f64; 2],
    /// Link-layer bytes added to every IP packet when serializing. Default 0.
    pub link_overhead_bytes: u32,
    /// Error profile of each direction of the constrained link.
    pub errors: ErrorsConfig,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
pub enum ErrorsConfig {
    /// `none | low | medium | high` (SPEC §2 table).
    Profile(String),
    /// A custom two-state chain.
    Chain(ChainTable),
}

/// A custom Gilbert–Elliott chain, times in ms (SPEC §7.1 "a table with the chain parameters").
#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChainTable {
    pub good_mean_ms: f64,
    pub good_min_ms: f64,
    pub good_max_ms: f64,
    pub good_loss: f64,
    pub bad_mean_ms: f64,
    pub bad_min_ms: f64,
    pub bad_max_ms: f64,
    pub bad_loss: f64,
}

impl ChainTable {
    pub fn params(&self) -> ChainParams {
        use coaplab_cc::Duration;
        let ms = |v: f64| Duration::from_secs_f64(v / 1000.0);
        ChainParams {
            good_mean: ms(self.good_mean_ms),
            good_min: ms(self.good_min_ms),
            good_max: ms(self.good_max_ms),
            good_loss: self.good_loss,
            bad_mean: ms(self.bad_mean_ms),
            bad_min: ms(self.bad_min_ms),
            bad_max: ms(self.bad_max_ms),
            bad_loss: self.bad_loss,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WorkloadKind {
    Continuous,
    Random,
    Burst,
    Firmware,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadConfig {
    pub kind: WorkloadKind,
    pub clients: u32,
    /// Exchanges per client (continuous, random, burst background).
    pub exchanges: u32,
    /// Continuous clients keep going until this deadline (s) instead of counting.
    pub duration_s: Option<f64>,
    /// Random clients: batch size uniform in `[batch[0], batch[1]]`.
    pub batch: [u32; 2],
    /// Each client starts at an offset uniform in `[0, start_spread_s]`.
    pub start_spread_s: f64,
    /// Payload of each piggybacked 2.05 response, bytes. Default 60.
    pub response_bytes: u32,
    /// Firmware: resource size, bytes. Default 102400.
    pub resource_bytes: u64,
    /// Firmware: Block2 size exponent (RFC 7959 §2.2, block = 2^(SZX+4)); default 4 = 256 B.
    pub block_szx: u8,
    /// Burst: continuous background clients (then `clients` is ignored).
    #[serde(default)]
    pub background: u32,
    #[serde(default)]
    pub burst_at_s: Option<f64>,
    #[serde(default)]
    pub burst_clients: Option<u32>,
    #[serde(default)]
    pub burst_exchanges: Option<u32>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CoapConfig {
    /// `udp` (the algorithm library) or `tcp` (RFC 8323 on the TCP model).
    pub transport: String,
    /// Algorithm name (SPEC §3.1), or the TCP congestion controller (`newreno`).
    pub cc: String,
    pub max_retransmit: u32,
    pub nstart: u32,
    pub ack_timeout_s: f64,
    pub ack_random_factor: f64,
    /// Timer cap of the non-CoCoA families, s. Default 60.
    pub max_timer_s: f64,
}

/// The scenario's `[tcp]` section (see `crate::tcp::TcpConfig` for what each does).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TcpSection {
    /// Initial window, segments. Default 4.
    pub initial_window: u32,
    /// Slow-start growth limit per ACK, segments; `None` = every acknowledged byte (Linux).
    pub slow_start_limit: Option<u32>,
    /// `minshall` (Linux, default), `classic` (RFC 896 as written) or `off`.
    pub nagle: String,
    /// RFC 3042 Limited Transmit. Default on.
    pub limited_transmit: bool,
    /// Delayed-ACK timer, ms. Default 200.
    pub delayed_ack_ms: f64,
    /// Initial RTO (also SYN, SYN-ACK), s. Default 2.
    pub initial_rto_s: f64,
    /// RTO cap, s. Default 120.
    pub max_rto_s: f64,
    /// Default 40.
    pub syn_retries: u32,
    /// Default 41.
    pub synack_retries: u32,
}

impl RunConfig {
    pub fn from_json(text: &str) -> Result<Self, String> {
        serde_json::from_str(text).map_err(|e| format!("invalid configuration: {e}"))
    }
}
