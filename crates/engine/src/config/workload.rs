//! The clients and their requests (`[workload]`, docs/model.md).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::defaults;

/// What the clients do: `continuous` (back-to-back requests), `random` (batches at random
/// times), `burst` (continuous background clients plus a burst of clients at `burst_at_s`),
/// `firmware` (a Block2 transfer of `resource_bytes`), `periodic` (a request every
/// `period_s`, dropped at the application while NSTART exchanges are outstanding),
/// `reporting` (3GPP TR 45.820's mobile autonomous reporting: an interval per device drawn
/// from 1 day / 2 h / 1 h / 30 min, a Pareto payload of 20-200 B per report, until
/// `duration_s`), `upload` (an RFC 9177 Q-Block1 transfer of `resource_bytes` from the
/// client).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum WorkloadKind {
    #[default]
    Continuous,
    Random,
    Burst,
    Firmware,
    // Each client creates a request every `period_s` (random phase) until `duration_s`; a
    // request created while NSTART exchanges are outstanding is dropped and counted.
    Periodic,
    // 3GPP TR 45.820's mobile autonomous reporting (`crate::reporting`): each device reports
    // at an interval drawn once (1 day / 2 h / 1 h / 30 min, 40 / 40 / 15 / 5 %), first at a
    // random phase, with a Pareto payload (20-200 B), until `duration_s`; plus exception
    // reports of 20 B at `exception_reports_per_day`.
    Reporting,
    // Each client uploads a body of `resource_bytes` in blocks of `block_szx` (RFC 9177
    // Q-Block1; needs `coap.block_mode = "q-block"`, docs/model.md "Q-Block").
    Upload,
}

/// How clients start (docs/model.md): all within one spread, or launched one after another.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum StartModel {
    // Offsets uniform in `[0, start_spread_s]` (the default model).
    #[default]
    Uniform,
    // Client `i` at `i · start_interval_s` plus a jitter uniform in `[0, start_spread_s]`.
    Sequential,
}

/// The clients and their requests (docs/model.md).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkloadConfig {
    #[serde(default)]
    pub kind: WorkloadKind,
    /// Number of clients (burst: ignored, see `background` and `burst_clients`).
    #[serde(default = "defaults::workload_clients")]
    #[schemars(range(min = 1, max = 100000))]
    pub clients: u32,
    /// Exchanges per client (continuous, random, burst background).
    #[serde(default = "defaults::workload_exchanges")]
    #[schemars(range(min = 1, max = 10000000))]
    pub exchanges: u32,
    /// Continuous or burst only: clients keep going until this deadline (s) instead of
    /// counting exchanges.
    #[serde(default)]
    #[schemars(range(min = 0.001, max = 1e7))]
    pub duration_s: Option<f64>,
    /// Random clients: batch size uniform in `[batch[0], batch[1]]`.
    #[serde(default = "defaults::workload_batch")]
    #[schemars(inner(range(min = 1, max = 1000000)))]
    pub batch: [u32; 2],
    /// Each client starts at an offset uniform in `[0, start_spread_s]`, s. The default is
    /// fixed by the 50-client reference (docs/validation.md).
    #[serde(default = "defaults::workload_start_spread_s")]
    #[schemars(range(min = 0.0, max = 1e6))]
    pub start_spread_s: f64,
    /// How the clients' start offsets are laid out: `uniform` (each client at an offset
    /// uniform in `[0, start_spread_s]`) or `sequential` (processes launched one after
    /// another: client `i` of the population at `i · start_interval_s`, plus a jitter uniform
    /// in `[0, start_spread_s]`). docs/model.md, docs/validation.md.
    #[serde(default)]
    #[schemars(extend("x-omit-if-absent" = true))]
    pub start: StartModel,
    /// `sequential` only: the launch interval between consecutive clients, s.
    #[serde(default)]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(min = 0.0, max = 1e4))]
    pub start_interval_s: f64,
    /// Payload of each piggybacked 2.05 response, bytes.
    #[serde(default = "defaults::workload_response_bytes")]
    #[schemars(range(max = 65000))]
    pub response_bytes: u32,
    /// Firmware: resource size, bytes.
    #[serde(default = "defaults::workload_resource_bytes")]
    #[schemars(range(min = 1, max = 10000000000u64))]
    pub resource_bytes: u64,
    /// Firmware: Block2 size exponent (RFC 7959 §2.2, block = 2^(SZX+4) bytes; 4 = 256 B).
    #[serde(default = "defaults::workload_block_szx")]
    #[schemars(range(max = 6))]
    pub block_szx: u8,
    /// Burst: continuous background clients (then `clients` is ignored).
    #[serde(default)]
    #[schemars(range(max = 100000))]
    pub background: u32,
    /// Burst (required there, not allowed otherwise): when the burst starts, s.
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 1e7))]
    pub burst_at_s: Option<f64>,
    /// Burst (required there, not allowed otherwise): clients in the burst.
    #[serde(default)]
    #[schemars(range(min = 1, max = 100000))]
    pub burst_clients: Option<u32>,
    /// Burst (required there, not allowed otherwise): exchanges per burst client.
    #[serde(default)]
    #[schemars(range(min = 1, max = 10000000))]
    pub burst_exchanges: Option<u32>,
    /// Burst only: the settling time is capped here, s — a burst whose 80 % of exchanges has
    /// not completed by `burst_at_s` + this reports it, with `settled = false` (the CoCoA
    /// study's GPRS burst figure caps at 180 s, Betzler et al. 2016). Absent = no cap
    /// (a burst that never settles reports no settling time).
    #[schemars(extend("x-omit-if-absent" = true))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.001, max = 1e7))]
    pub settling_cap_s: Option<f64>,
    /// Periodic (required there, not allowed otherwise): seconds between a client's requests.
    #[schemars(extend("x-omit-if-absent" = true))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.001, max = 1e6))]
    pub period_s: Option<f64>,
    /// Reporting only: exception reports (20 B each, TR 45.820 Annex E.2) per device per day,
    /// a Poisson process; absent = none (the TR gives no rate for them).
    #[schemars(extend("x-omit-if-absent" = true))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.0, max = 1e5))]
    pub exception_reports_per_day: Option<f64>,
    /// Size of each request as a whole IPv6 packet, bytes (60 = the plain GET; larger: a
    /// request with a payload of `request_bytes` − 61 bytes); absent = the plain GET.
    #[schemars(extend("x-omit-if-absent" = true))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 60, max = 1280))]
    pub request_bytes: Option<u32>,
}
