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
/// `duration_s`), `observe` (RFC 7641: each client registers once and the server notifies it of
/// every new value of the resource until `duration_s`, docs/model.md "Observe"), `lwm2m` (OMA
/// LwM2M devices: register, update every lifetime, queue mode, server reads, notifications and
/// a firmware pull; docs/model.md "LwM2M devices"), `upload` (an RFC 9177 Q-Block1 transfer of
/// `resource_bytes` from the client).
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
    // RFC 7641 Observe (`crate::coap::observe`, docs/model.md "Observe"): each client registers
    // (a CON GET with Observe = 0) and the server sends it a notification (CON, NON, or NON
    // with a CON at least every `con_every_s`) of every new value of the observed resource,
    // generated every `notify_period_s` or at `notify_rate_per_s`, until `duration_s`.
    Observe,
    // OMA LwM2M 1.1 devices (`crate::coap::lwm2m`, docs/model.md "LwM2M devices"): each
    // client registers (CON POST /rd), updates its registration every lifetime, answers the
    // server's reads, sends notifications and pulls firmware by Block2, until `duration_s`.
    Lwm2m,
    // Each client uploads a body of `resource_bytes` in blocks of `block_szx` (RFC 9177
    // Q-Block1; needs `coap.block_mode = "q-block"`, docs/model.md "Q-Block").
    Upload,
}

pub use crate::coap::notify::NotifyMode;

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
    // ---- observe (RFC 7641, docs/model.md "Observe"); each key is refused with another kind.
    /// Observe only: the notifications' message type: `con`, `non`, or `non-con` (NON with a
    /// CON at least every `con_every_s`, RFC 7641 §4.5); absent = `con`.
    #[schemars(extend("x-omit-if-absent" = true))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notify: Option<NotifyMode>,
    /// Observe with `notify = "non-con"` only: a notification goes as CON when the last CON
    /// was sent this long ago, s; absent = 86400 (RFC 7641 §4.5: at least every 24 hours).
    #[schemars(extend("x-omit-if-absent" = true))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.001, max = 1e8))]
    pub con_every_s: Option<f64>,
    /// Observe (this or `notify_rate_per_s`, exactly one): the resource takes a new value every
    /// this many seconds (a period process, random phase per client).
    #[schemars(extend("x-omit-if-absent" = true))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.001, max = 1e7))]
    pub notify_period_s: Option<f64>,
    /// Observe (this or `notify_period_s`, exactly one): the resource takes new values at this
    /// mean rate, per second (a Poisson process per client).
    #[schemars(extend("x-omit-if-absent" = true))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1e-7, max = 1000.0))]
    pub notify_rate_per_s: Option<f64>,
    /// Observe only: the payload of each notification (and of the registration's response),
    /// bytes; absent = 60 (the piggybacked 2.05's payload of docs/design.md §2).
    #[schemars(extend("x-omit-if-absent" = true))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(max = 65000))]
    pub notification_bytes: Option<u32>,
    /// Observe only: the notifications' Max-Age, s: a client that heard no notification for
    /// this plus a margin re-registers (RFC 7641 §3.3.1); absent = 60 (RFC 7252 §5.10.5).
    #[schemars(extend("x-omit-if-absent" = true))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1.0, max = 4294967295.0))]
    pub max_age_s: Option<f64>,
    // ---- `lwm2m` only (docs/model.md "LwM2M devices"); every key is refused by other kinds.
    /// LwM2M: bytes the Register request carries beyond the plain request (its Uri-Query
    /// options and RFC 6690 link-format payload), bytes; absent = 76
    /// (`defaults::WORKLOAD_LWM2M_REGISTER_BYTES`, the arithmetic is there).
    #[schemars(extend("x-omit-if-absent" = true))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 1200))]
    pub lwm2m_register_bytes: Option<u32>,
    /// LwM2M: the registration's lifetime, s (Server object resource 1/x/1); the device
    /// updates it `lifetime − 93 s` after the last reply (Wakaama `registration_step`);
    /// absent = 86400 (OMA-TS-LightweightM2M_Core-V1_1 §5.3.1, Register's `lt` default).
    #[schemars(extend("x-omit-if-absent" = true))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1.0, max = 1e7))]
    pub lwm2m_lifetime_s: Option<f64>,
    /// LwM2M: queue mode (binding `UQ`): the device is reachable only for
    /// `lwm2m_queue_window_s` after each of its uplinks; absent = false.
    #[schemars(extend("x-omit-if-absent" = true))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lwm2m_queue_mode: Option<bool>,
    /// LwM2M with queue mode: how long the device stays reachable after an uplink, s; absent
    /// = MAX_TRANSMIT_WAIT, 93 s (OMA-TS-LightweightM2M_Transport-V1_1 §6.5, RFC 7252 §4.8.2).
    #[schemars(extend("x-omit-if-absent" = true))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.001, max = 1e6))]
    pub lwm2m_queue_window_s: Option<f64>,
    /// LwM2M: the server's reads (CON GET to the device) per device per day, a Poisson
    /// process; absent = none.
    #[schemars(extend("x-omit-if-absent" = true))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.0, max = 1e6))]
    pub lwm2m_reads_per_day: Option<f64>,
    /// LwM2M: the server observes one resource; the device notifies (CON) every this many
    /// seconds; absent = no observation.
    #[schemars(extend("x-omit-if-absent" = true))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.001, max = 1e7))]
    pub lwm2m_notify_period_s: Option<f64>,
    /// LwM2M: payload of a notification and of a read's answer, bytes; absent = 12
    /// (`defaults::WORKLOAD_LWM2M_NOTIFY_BYTES`: one Float resource in LwM2M TLV).
    #[schemars(extend("x-omit-if-absent" = true))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 1200))]
    pub lwm2m_notify_bytes: Option<u32>,
    /// LwM2M: the firmware image the device pulls by Block2 (`block_szx`), bytes; absent =
    /// no firmware pull.
    #[schemars(extend("x-omit-if-absent" = true))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 10000000000u64))]
    pub lwm2m_firmware_bytes: Option<u64>,
    /// LwM2M with `lwm2m_firmware_bytes`: when the pull starts, s (not before the device is
    /// registered); absent = 0 (right after registration).
    #[schemars(extend("x-omit-if-absent" = true))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.0, max = 1e7))]
    pub lwm2m_firmware_at_s: Option<f64>,
}
