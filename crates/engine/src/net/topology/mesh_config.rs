//! The mesh-level keys of the IEEE 802.15.4 networks (`network.kind` = `chain`, `grid`,
//! `dumbbell`, `file`; docs/networks.md): the radio range, the interference and carrier-sense
//! factors, link losses, outside clients, and the nodes and links of a `file` mesh, with the
//! radio's own keys (`net/radio/config.rs`) flattened in. The same keys stay flat in scenario
//! files (`network.range_m`, `network.mac_queue_frames`, ...). A leaf but for the radio's
//! configuration: the mesh topologies (`mesh.rs`, `file.rs`) read it, `config` composes it.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::net::radio::config::{ContikiConfig, RadioConfig, RdcConfig, ShadowingConfig};
use crate::net::radio::mac::MACS;

/// `network.range_m`: Radio range, m: a frame reaches every node within this distance (unit disk).
pub const RANGE_M: f64 = 10.0;
/// `network.interference_factor`: Interference range as a multiple of `range_m`: a transmission from a node within it corrupts a frame being received.
pub const INTERFERENCE_FACTOR: f64 = 2.0;
/// `network.carrier_sense_factor`: Carrier-sense range as a multiple of `range_m`: clear channel assessment finds the channel busy while a node within it transmits.
pub const CARRIER_SENSE_FACTOR: f64 = 1.0;

fn range_m() -> f64 {
    RANGE_M
}
fn interference_factor() -> f64 {
    INTERFERENCE_FACTOR
}
fn carrier_sense_factor() -> f64 {
    CARRIER_SENSE_FACTOR
}

/// A built-in mesh's keys (`chain`, `grid`, `dumbbell`).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
pub struct MeshConfig {
    /// Radio range, m: a frame reaches every node within this distance (unit disk).
    #[serde(default = "range_m")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(min = 0.001, max = 1e6))]
    pub range_m: f64,
    /// Interference range as a multiple of `range_m`: a transmission from a node within it
    /// corrupts a frame being received.
    #[serde(default = "interference_factor")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(min = 1.0, max = 100.0))]
    pub interference_factor: f64,
    /// Carrier-sense range as a multiple of `range_m`: clear channel assessment finds the
    /// channel busy while a node within it transmits.
    #[serde(default = "carrier_sense_factor")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(min = 0.0, max = 100.0))]
    pub carrier_sense_factor: f64,
    /// Probability that a frame (data or acknowledgement) is lost on a link even without a
    /// collision.
    #[serde(default)]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub link_loss: f64,
    #[serde(flatten)]
    pub radio: RadioConfig,
    /// Meshes: clients outside the mesh, behind the border router over a path of
    /// `link.path_delay_ms` each way, sending to the mesh's sinks in turn. They follow the
    /// topology's own clients: client `i` for `i` ≥ the topology's clients.
    #[serde(default)]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(max = 100000))]
    pub outside_clients: u32,
    /// Meshes: one outside client per sink (client `k` of the outside clients talks to the
    /// `k`-th sink: the sinks the mesh clients use, then the others in node order). The
    /// workload must then have exactly (mesh clients + sinks) clients; `outside_clients` must
    /// be 0 or the number of sinks.
    #[serde(default)]
    #[schemars(extend("x-omit-if-absent" = true))]
    pub outside_clients_per_sink: bool,
    #[serde(flatten)]
    pub rdc: RdcConfig,
    #[serde(flatten)]
    pub shadowing: ShadowingConfig,
    /// The mesh MAC: `ieee802154` (unslotted CSMA/CA of IEEE 802.15.4-2006, the default) or
    /// `contiki` (Contiki 2.6's CSMA driver over NullRDC or ContikiMAC on a CC2420:
    /// per-neighbour queues, retries in units of the channel-check interval;
    /// `net/radio/mac/contiki.rs`, docs/networks.md); the names of the registry `MACS`.
    #[serde(default = "mac_default")]
    #[schemars(schema_with = "mac_schema")]
    #[schemars(extend("x-omit-if-absent" = true))]
    pub mac: String,
    #[serde(flatten)]
    pub contiki: ContikiConfig,
    /// Meshes: per-link loss probabilities that replace `link_loss` on those links (both
    /// directions; nodes by index).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-omit-if-absent" = true))]
    pub lossy_links: Vec<LossyLink>,
}

/// `network.mac`: a name of the MAC registry (`crate::net::radio::mac::MACS`, the first the
/// default), so a MAC added there is selectable without touching this file.
fn mac_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    let names: Vec<&str> = MACS.iter().map(|e| e.name).collect();
    schemars::json_schema!({ "type": "string", "enum": names })
}
fn mac_default() -> String {
    MACS[0].name.into()
}

impl Default for MeshConfig {
    /// Every key at its default.
    fn default() -> Self {
        serde_json::from_str("{}").expect("every key has a default")
    }
}

/// A `file` mesh's keys: a mesh's, and its nodes and links.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
pub struct FileMeshConfig {
    #[serde(flatten)]
    pub mesh: MeshConfig,
    /// `file`: the mesh's nodes, node `i` being entry `i` (positions in m, role).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-omit-if-absent" = true))]
    pub nodes: Vec<MeshNodeSpec>,
    /// `file`: explicit links (pairs of node indices, both directions) instead of the unit
    /// disk; a node then hears, senses and is disturbed by its linked nodes only.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-omit-if-absent" = true))]
    pub links: Vec<[u16; 2]>,
}

/// A mesh link with its own loss probability.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LossyLink {
    pub a: u16,
    pub b: u16,
    /// Probability that a frame on the link (data or acknowledgement) is lost.
    #[schemars(range(min = 0.0, max = 1.0))]
    pub loss: f64,
}

/// One node of a `file` mesh.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MeshNodeSpec {
    /// Position, m (ignored with explicit `links`).
    #[serde(default)]
    #[schemars(range(min = -1e6, max = 1e6))]
    pub x: f64,
    #[serde(default)]
    #[schemars(range(min = -1e6, max = 1e6))]
    pub y: f64,
    pub role: MeshRole,
    /// A client's sink (node index); absent = the first sink.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(max = 65534))]
    pub sink: Option<u16>,
}

/// What a node of a `file` mesh does: the border router (exactly one), a sink (runs the CoAP
/// server), a client (runs one CoAP client), or a plain router.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum MeshRole {
    BorderRouter,
    Sink,
    Client,
    Router,
}
