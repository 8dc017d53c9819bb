//! The configuration of one simulated testbed, and the schema of scenario files.
//!
//! These types are the single source of truth for every configuration key: its type, its
//! default (`#[serde(default = ...)]`), its range and its allowed values. The Python front
//! (`coaplab.describe.scenario`) reads the JSON Schema exported by [`scenario_schema`] to validate
//! scenario files and fill defaults; the fully resolved configuration it builds (every key
//! present) is what [`RunConfig::from_json`] receives and what a configuration's identity
//! hashes. The same schema ships as `python/coaplab/data/scenario.schema.json` for editors.
//!
//! Ranges keep every derived integer in range: times become integer nanoseconds in `u64`
//! (so every delay and duration is bounded far below 1.8e13 ms), rates become integer bit/s
//! (so a rate is at least 0.001 kbit/s = 1 bit/s), and Gilbert–Elliott sojourns are at least
//! 0.1 ms (so the chain advances in steps of at least 100 000 ns).
//!
//! The sections live in their own files: `link.rs`, `workload.rs`, `coap.rs` (`[coap]`, `[tcp]`),
//! `network.rs` (`[network]`, whose keys the network models own), `defaults.rs` (every default
//! of the other sections, named).

mod coap;
pub mod defaults;
mod link;
mod network;
pub mod observe;
pub mod security;
pub mod workload;

use schemars::{JsonSchema, Schema};
use serde::{Deserialize, Serialize};

pub use crate::energy::EnergyConfig;
pub use coap::*;
pub use link::*;
pub use network::*;
pub use security::*;
pub use workload::*;

/// Largest delay or time span of any key, ms (≈ 2.8 h): keeps sums of times in `u64` ns.
pub const MAX_DELAY_MS: f64 = 1e7;

/// One configuration: the testbed (`link`), the clients (`workload`, or `group` for several
/// client populations) and the CoAP settings (`coap`, `tcp`).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "coaplab configuration")]
pub struct RunConfig {
    /// The scenario's name: 1 to 200 characters, no control characters. It labels results;
    /// output file names (pcaps, traces) use it with every character outside A–Z, a–z, 0–9,
    /// `-`, `_` replaced by `_`, so a name is never a path.
    #[serde(default = "defaults::name")]
    #[schemars(length(min = 1, max = 200), regex(pattern = r"^[^\x00-\x1f\x7f]*$"))]
    pub name: String,
    /// Base seed; replication `r` derives its random streams from `(seed, r)`.
    #[serde(default = "defaults::seed")]
    #[schemars(range(max = 9223372036854775807u64))]
    pub seed: u64,
    /// Independent replications of the configuration.
    #[serde(default = "defaults::replications")]
    #[schemars(range(min = 1, max = 100000))]
    pub replications: u64,
    /// Record per-client timer / RTO traces (TCP: time-sequence traces).
    #[serde(default)]
    pub trace: bool,
    /// The constrained link between the router and the devices (docs/model.md).
    #[serde(default)]
    #[schemars(transform = strip_default)]
    pub link: LinkConfig,
    /// The clients and what they request.
    #[serde(default)]
    #[schemars(transform = strip_default)]
    pub workload: WorkloadConfig,
    /// The CoAP endpoints: transport, congestion control, transmission parameters.
    #[serde(default)]
    #[schemars(transform = strip_default)]
    pub coap: CoapConfig,
    /// The TCP model's parameters (transport `tcp` only; absent = the defaults of
    /// docs/model.md).
    #[serde(default)]
    #[schemars(transform = strip_default)]
    pub tcp: Option<TcpSection>,
    /// The network the clients and the server run on; absent = the reference star.
    #[serde(default)]
    #[schemars(transform = strip_default)]
    pub network: Option<NetworkConfig>,
    /// The power model (docs/energy.md); absent = the defaults of the network kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(transform = strip_default)]
    pub energy: Option<EnergyConfig>,
    /// Client populations. Empty = one population described by `workload`, `coap` and
    /// `tcp`. Each group is fully resolved (the Python front applied the inheritance from
    /// `workload` / `coap` / `tcp`).
    #[serde(default)]
    #[schemars(transform = strip_default)]
    pub group: Vec<GroupConfig>,
}

/// One client population (resolved): its own workload, CoAP settings and, with transport
/// `tcp`, TCP model.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GroupConfig {
    /// Unique within the run; per-group metrics and client rows carry it.
    #[schemars(regex(pattern = r"^[A-Za-z0-9_-]{1,64}$"))]
    pub name: String,
    pub workload: WorkloadConfig,
    pub coap: CoapConfig,
    #[serde(default)]
    pub tcp: Option<TcpSection>,
}

/// One client population as a scenario file writes it (`[[group]]`): every key of the file's
/// `[workload]`, `[coap]` and `[tcp]` is inherited unless the group sets it.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GroupFile {
    /// Unique within the scenario: letters, digits, `-`, `_` (at most 64).
    #[schemars(regex(pattern = r"^[A-Za-z0-9_-]{1,64}$"))]
    pub name: String,
    /// Shortcut for `workload.clients`.
    #[schemars(range(min = 1, max = 100000))]
    pub clients: Option<u32>,
    /// Overrides of the file's `[workload]` keys.
    #[schemars(transform = strip_default)]
    pub workload: Option<WorkloadConfig>,
    /// Overrides of the file's `[coap]` keys.
    #[schemars(transform = strip_default)]
    pub coap: Option<CoapConfig>,
    /// Overrides of the file's `[tcp]` keys (transport `tcp` only).
    #[schemars(transform = strip_default)]
    pub tcp: Option<TcpSection>,
}

/// Removes the `default` of a whole section (its keys carry their own).
pub(crate) fn strip_default(schema: &mut Schema) {
    schema.remove("default");
}

macro_rules! default_from_serde {
    ($($t:ty),*) => {$(
        impl Default for $t {
            /// Every key at its default.
            fn default() -> Self {
                serde_json::from_str("{}").expect("every key has a default")
            }
        }
    )*};
}
default_from_serde!(LinkConfig, WorkloadConfig, CoapConfig, TcpSection);

impl RunConfig {
    pub fn from_json(text: &str) -> Result<Self, String> {
        serde_json::from_str(text).map_err(|e| format!("invalid configuration: {e}"))
    }
}

/// The JSON Schema of scenario files (pretty-printed JSON text): the configuration keys of
/// [`RunConfig`] with `[[group]]` in the file form ([`GroupFile`]) and the `[sweep]` table.
pub fn scenario_schema() -> String {
    let mut generator = schemars::generate::SchemaSettings::draft2020_12().into_generator();
    let group = generator.subschema_for::<GroupFile>();
    let mut root = generator.into_root_schema_for::<RunConfig>();
    root.insert(
        "$schema".into(),
        "https://json-schema.org/draft/2020-12/schema".into(),
    );
    root.insert("title".into(), "coaplab scenario file".into());
    root.insert(
        "description".into(),
        "A coaplab scenario file (TOML): the testbed, the clients, the CoAP settings and \
         optionally a sweep (docs/experiments.md). Every key is optional."
            .into(),
    );
    let props = root
        .get_mut("properties")
        .and_then(|p| p.as_object_mut())
        .expect("RunConfig has properties");
    props.insert(
        "group".into(),
        serde_json::json!({
            "description": "Client populations: each inherits the file's [workload], [coap] \
                            and [tcp] and overrides keys; names are unique.",
            "type": "array",
            "items": group.to_value(),
        }),
    );
    props.insert(
        "sweep".into(),
        serde_json::json!({
            "description": "Dotted key (\"coap.cc\", \"link.buffer_bytes\", \
                            \"group.<name>.coap.cc\", \"group.<name>.clients\", ...) -> \
                            non-empty list of values; the cartesian product is run, first \
                            key slowest.",
            "type": "object",
            "additionalProperties": {"type": "array", "minItems": 1},
        }),
    );
    props.insert("advise".into(), advise_schema());
    if let Some(defs) = root.get_mut("$defs").and_then(|d| d.as_object_mut()) {
        defs.remove("GroupConfig");
        if let Some(serde_json::Value::Object(link)) = defs.get_mut("LinkConfig") {
            network::annotate_link_keys(link);
        }
    }
    let mut text = serde_json::to_string_pretty(&root).expect("schema serializes");
    text.push('\n');
    text
}

/// The `[advise]` table (`coaplab advise`, docs/advise.md): read by the Python front only
/// (`coaplab.suites.advise`), which removes it before a configuration reaches the engine, as it
/// does `[sweep]`. Described here so that editors and the shipped schema know the whole file.
fn advise_schema() -> serde_json::Value {
    let range = serde_json::json!({
        "type": "object",
        "description": "A numeric range: min, max and an optional step (the grid the search draws from).",
        "properties": {
            "min": {"type": "number"},
            "max": {"type": "number"},
            "step": {"type": "number", "exclusiveMinimum": 0}
        },
        "required": ["min", "max"],
        "additionalProperties": false
    });
    serde_json::json!({
        "description": "`coaplab advise`: the knobs to tune, the objectives and the budget \
                        (docs/advise.md). Ignored by `coaplab run`.",
        "type": "object",
        "properties": {
            "knobs": {
                "description": "Dotted key (\"coap.cc\", \"coap.ack_timeout_s\", ...) -> a fixed \
                                value, a non-empty list of values, or a range {min, max, step}; \
                                the knobs not named keep their default ranges.",
                "type": "object",
                "additionalProperties": {"anyOf": [
                    {"type": ["number", "string", "boolean"]},
                    {"type": "array", "minItems": 1},
                    range
                ]}
            },
            "objectives": {
                "description": "What the search trades: latency_p95_s, delivered, or an \
                                energy.<key> of the summary.",
                "type": "array", "items": {"type": "string"}, "minItems": 1
            },
            "evaluations": {"description": "Budget: candidates evaluated.", "type": "integer", "minimum": 1},
            "minutes": {"description": "Budget: wall-clock minutes (no new candidate after it).", "type": "number", "exclusiveMinimum": 0},
            "replications": {"description": "Replications per candidate and case.", "type": "integer", "minimum": 2},
            "seed": {"description": "The search's seed (default: the scenario's seed).", "type": "integer", "minimum": 0}
        },
        "additionalProperties": false
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_configuration_is_the_reference_testbed() {
        // The defaults of docs/model.md: 30 / 60 kbit/s, 400 / 200 ms, MTU 296, 2500 B.
        let c = RunConfig::from_json("{}").unwrap();
        assert_eq!(c.name, "scenario");
        assert_eq!((c.seed, c.replications, c.trace), (1, 1, false));
        let l = &c.link;
        assert_eq!((l.downlink_kbps, l.uplink_kbps), (30.0, 60.0));
        assert_eq!((l.downlink_delay_ms, l.uplink_delay_ms), (400.0, 200.0));
        assert_eq!(
            (l.mtu, l.buffer_bytes, l.uplink_buffer_bytes),
            (296, 2500, None)
        );
        assert_eq!(l.path_delay_ms, [10.0, 20.0]);
        assert!(matches!(
            l.errors,
            ErrorsConfig::Profile(ErrorProfile::None)
        ));
        assert_eq!(c.workload.kind, WorkloadKind::Continuous);
        assert_eq!((c.workload.clients, c.workload.exchanges), (1, 50));
        assert_eq!(c.workload.batch, [1, 10]);
        assert_eq!(
            (c.coap.transport, c.coap.cc.as_str()),
            (Transport::Udp, "cocoa")
        );
        assert_eq!((c.coap.max_retransmit, c.coap.nstart), (4, 1));
        assert!(c.tcp.is_none() && c.network.is_none() && c.group.is_empty());
        let t = TcpSection::default();
        assert_eq!(
            (t.initial_window, t.nagle, t.syn_retries),
            (4, NagleMode::Minshall, 40)
        );
    }

    #[test]
    fn unknown_keys_and_values_are_refused() {
        for bad in [
            r#"{"link": {"bufer_bytes": 1}}"#,
            r#"{"coap": {"transport": "quic"}}"#,
            r#"{"workload": {"kind": "steady"}}"#,
            r#"{"link": {"errors": "heavy"}}"#,
            r#"{"network": {"kind": "mesh"}}"#,
        ] {
            assert!(RunConfig::from_json(bad).is_err(), "{bad}");
        }
    }

    fn prop<'a>(schema: &'a serde_json::Value, def: &str, key: &str) -> &'a serde_json::Value {
        &schema["$defs"][def]["properties"][key]
    }

    #[test]
    fn the_bounds_keep_derived_integers_in_range() {
        let schema: serde_json::Value = serde_json::from_str(&scenario_schema()).unwrap();
        // Rates: the smallest allowed rate is 0.001 kbit/s, 0.001 × 1000 = 1 bit/s (not 0).
        for key in ["downlink_kbps", "uplink_kbps"] {
            let min = prop(&schema, "LinkConfig", key)["minimum"]
                .as_f64()
                .unwrap();
            assert_eq!((min * 1000.0).round() as u64, 1);
        }
        // Delays: 1e7 ms = 1e13 ns, far below u64::MAX ≈ 1.8e19 ns.
        for key in ["downlink_delay_ms", "uplink_delay_ms"] {
            let max = prop(&schema, "LinkConfig", key)["maximum"]
                .as_f64()
                .unwrap();
            assert_eq!(max, MAX_DELAY_MS);
        }
        assert_eq!(
            prop(&schema, "LinkConfig", "path_delay_ms")["items"]["maximum"].as_f64(),
            Some(MAX_DELAY_MS)
        );
        assert!(MAX_DELAY_MS * 1e6 < u64::MAX as f64 / 1e5);
        // Gilbert–Elliott sojourns: at least 0.1 ms = 100 000 ns, never 0.
        for key in ["good_min_ms", "good_mean_ms", "bad_min_ms", "bad_max_ms"] {
            let min = prop(&schema, "ChainTable", key)["minimum"]
                .as_f64()
                .unwrap();
            assert_eq!(min, 0.1);
            assert_eq!(
                coaplab_cc::Duration::from_secs_f64(min / 1000.0).nanos(),
                100_000
            );
        }
    }

    #[test]
    fn the_scenario_schema_describes_files() {
        let schema: serde_json::Value = serde_json::from_str(&scenario_schema()).unwrap();
        let top: Vec<&str> = schema["properties"]
            .as_object()
            .unwrap()
            .keys()
            .map(|k| k.as_str())
            .collect();
        assert_eq!(
            top,
            [
                "name",
                "seed",
                "replications",
                "trace",
                "link",
                "workload",
                "coap",
                "tcp",
                "network",
                "energy",
                "group",
                "sweep",
                "advise"
            ]
        );
        assert_eq!(
            schema["$defs"]["GroupFile"]["required"],
            serde_json::json!(["name"])
        );
        // coap.cc: every registered name (both registries, walked), or `python:FILE:CLASS`.
        let cc = &prop(&schema, "CoapConfig", "cc")["anyOf"];
        let names = cc[0]["enum"].as_array().unwrap();
        let registered: Vec<&str> = coaplab_cc::registry::BUILTIN
            .iter()
            .map(|e| e.name)
            .chain(tcp_controllers())
            .collect();
        assert_eq!(names, &registered);
        assert!(registered.contains(&"cocoa-fb2") && registered.contains(&"cubic"));
        assert_eq!(cc[1]["pattern"], PYTHON_CC_PATTERN);
        assert_eq!(cc[2]["pattern"], C_CC_PATTERN);
        assert_eq!(prop(&schema, "LinkConfig", "mtu")["default"], 296);
        assert!(prop(&schema, "LinkConfig", "downlink_delay_ms")["default"].is_f64());
    }
}
