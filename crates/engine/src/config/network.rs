//! `[network]`: which network a run simulates, with the keys of that kind. Each network model
//! owns its keys and their named defaults — the meshes' in `net/topology/mesh_config.rs` and
//! `net/radio/config.rs`, the GPRS preset's in `net/gprs.rs` — and this file composes them:
//! one configuration type per kind ([`NetworkConfig`]). Scenario files keep the keys flat
//! (`network.gprs_loss`, `network.mac_queue_frames`): a `network` table is read in two steps,
//! its `kind` (default `star`) and then the kind's own keys, every other key refused with
//! [`Error::NotApplicable`]. The schema of `network` is the union of the kinds' keys, each
//! with `x-kinds`, the kinds it applies to (the Python front refuses the others early).

use std::borrow::Cow;
use std::sync::OnceLock;

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use crate::error::Error;
pub use crate::net::cellular::config::{CellConfig, CouplingLoss};
pub use crate::net::gprs::GprsConfig;
pub use crate::net::radio::config::{
    ContikiConfig, LinkLossModel, MacAddressing, RadioConfig, RdcConfig, RdcKind, ShadowingConfig,
};
pub use crate::net::topology::mesh_config::{
    FileMeshConfig, LossyLink, MeshConfig, MeshNodeSpec, MeshRole,
};

/// A network kind: `star`, the reference testbed (clients behind one constrained link);
/// `chain`, `grid`, `dumbbell`, multi-hop IEEE 802.15.4 meshes; `gprs`, a GPRS modem link;
/// `file`, a mesh whose nodes the scenario lists (`network.nodes`); `nbiot`, `ltem`, an NB-IoT
/// or LTE-M cell.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum NetworkKind {
    #[default]
    Star,
    Chain,
    Grid,
    Dumbbell,
    Gprs,
    File,
    // An NB-IoT cell and an LTE-M cell (`net::cellular`).
    Nbiot,
    Ltem,
}

impl NetworkKind {
    /// Every kind, in the order of the schema's enum.
    pub const ALL: [NetworkKind; 8] = [
        NetworkKind::Star,
        NetworkKind::Chain,
        NetworkKind::Grid,
        NetworkKind::Dumbbell,
        NetworkKind::Gprs,
        NetworkKind::File,
        NetworkKind::Nbiot,
        NetworkKind::Ltem,
    ];

    pub const fn as_str(self) -> &'static str {
        match self {
            NetworkKind::Star => "star",
            NetworkKind::Chain => "chain",
            NetworkKind::Grid => "grid",
            NetworkKind::Dumbbell => "dumbbell",
            NetworkKind::Gprs => "gprs",
            NetworkKind::File => "file",
            NetworkKind::Nbiot => "nbiot",
            NetworkKind::Ltem => "ltem",
        }
    }

    /// The keys of this kind's `network` table besides `kind`, in schema order.
    pub fn keys(self) -> &'static [String] {
        static KEYS: OnceLock<Vec<Vec<String>>> = OnceLock::new();
        let all = KEYS.get_or_init(|| {
            let mut generator = SchemaGenerator::default();
            NetworkKind::ALL
                .iter()
                .map(|&k| match kind_schema(k, &mut generator) {
                    Some(s) => s
                        .get("properties")
                        .and_then(Value::as_object)
                        .map(|p| p.keys().cloned().collect())
                        .unwrap_or_default(),
                    None => Vec::new(),
                })
                .collect()
        });
        &all[self as usize]
    }
}

/// The schema of `kind`'s configuration type, `None` for the star (no keys).
fn kind_schema(kind: NetworkKind, generator: &mut SchemaGenerator) -> Option<Schema> {
    match kind {
        NetworkKind::Star => None,
        NetworkKind::Chain | NetworkKind::Grid | NetworkKind::Dumbbell => {
            Some(MeshConfig::json_schema(generator))
        }
        NetworkKind::Gprs => Some(GprsConfig::json_schema(generator)),
        NetworkKind::File => Some(FileMeshConfig::json_schema(generator)),
        NetworkKind::Nbiot | NetworkKind::Ltem => Some(CellConfig::json_schema(generator)),
    }
}

/// The `[link]` keys `kind` reads, `None` for every key (a kind whose links come from its own
/// keys names the few it still takes from `[link]`).
fn link_keys(kind: NetworkKind) -> Option<&'static [&'static str]> {
    match kind {
        NetworkKind::Gprs => Some(crate::net::gprs::GPRS_LINK_KEYS),
        // A cell's radio, core and path come from its own keys.
        NetworkKind::Nbiot | NetworkKind::Ltem => Some(CELL_LINK_KEYS),
        NetworkKind::Star
        | NetworkKind::Chain
        | NetworkKind::Grid
        | NetworkKind::Dumbbell
        | NetworkKind::File => None,
    }
}

/// The `[link]` keys a cell reads: the MTU (it sizes CoAP blocks and the TCP MSS).
pub const CELL_LINK_KEYS: &[&str] = &["mtu"];

/// Annotates each `[link]` key of `link` (the `LinkConfig` schema) with `x-kinds`: the network
/// kinds that read it (the Python front refuses it early with the others).
pub fn annotate_link_keys(link: &mut Map<String, Value>) {
    let Some(Value::Object(props)) = link.get_mut("properties") else {
        return;
    };
    for (key, node) in props.iter_mut() {
        let kinds: Vec<&str> = NetworkKind::ALL
            .iter()
            .filter(|&&k| !matches!(link_keys(k), Some(keys) if !keys.contains(&key.as_str())))
            .map(|k| k.as_str())
            .collect();
        if let Value::Object(o) = node {
            o.insert("x-kinds".into(), kinds.into());
        }
    }
}

/// Which network a run simulates, with the keys of its kind.
#[derive(Clone, Debug, Default)]
pub enum NetworkConfig {
    /// The reference testbed: its keys are `[link]`'s.
    #[default]
    Star,
    Chain(MeshConfig),
    Grid(MeshConfig),
    Dumbbell(MeshConfig),
    Gprs(GprsConfig),
    File(FileMeshConfig),
    Nbiot(CellConfig),
    Ltem(CellConfig),
}

impl NetworkConfig {
    pub fn kind(&self) -> NetworkKind {
        match self {
            NetworkConfig::Star => NetworkKind::Star,
            NetworkConfig::Chain(_) => NetworkKind::Chain,
            NetworkConfig::Grid(_) => NetworkKind::Grid,
            NetworkConfig::Dumbbell(_) => NetworkKind::Dumbbell,
            NetworkConfig::Gprs(_) => NetworkKind::Gprs,
            NetworkConfig::File(_) => NetworkKind::File,
            NetworkConfig::Nbiot(_) => NetworkKind::Nbiot,
            NetworkConfig::Ltem(_) => NetworkKind::Ltem,
        }
    }

    /// The NAT binding's idle timeout between the devices and the server: the cells'
    /// `network.nat_timeout_s` (default [`crate::net::cellular::config::NAT_TIMEOUT_S`], RFC
    /// 4787 §4.3); `None` on the other kinds, which model no NAT (the star and GPRS testbeds
    /// reach the server directly, the meshes through a 6LoWPAN border router).
    pub fn nat_timeout(&self) -> Option<coaplab_cc::Duration> {
        self.cell().and_then(CellConfig::nat_timeout)
    }

    /// The mesh keys of a mesh kind (`chain`, `grid`, `dumbbell`, `file`).
    pub fn mesh(&self) -> Option<&MeshConfig> {
        match self {
            NetworkConfig::Chain(m) | NetworkConfig::Grid(m) | NetworkConfig::Dumbbell(m) => {
                Some(m)
            }
            NetworkConfig::File(f) => Some(&f.mesh),
            _ => None,
        }
    }

    /// As [`NetworkConfig::mesh`], to change keys.
    pub fn mesh_mut(&mut self) -> Option<&mut MeshConfig> {
        match self {
            NetworkConfig::Chain(m) | NetworkConfig::Grid(m) | NetworkConfig::Dumbbell(m) => {
                Some(m)
            }
            NetworkConfig::File(f) => Some(&mut f.mesh),
            _ => None,
        }
    }

    /// The keys of a `file` mesh.
    pub fn file(&self) -> Option<&FileMeshConfig> {
        match self {
            NetworkConfig::File(f) => Some(f),
            _ => None,
        }
    }

    /// The GPRS preset's keys.
    pub fn gprs(&self) -> Option<&GprsConfig> {
        match self {
            NetworkConfig::Gprs(g) => Some(g),
            _ => None,
        }
    }

    /// A cell's keys (`nbiot`, `ltem`).
    pub fn cell(&self) -> Option<&CellConfig> {
        match self {
            NetworkConfig::Nbiot(c) | NetworkConfig::Ltem(c) => Some(c),
            _ => None,
        }
    }

    /// Reads a `network` table: `kind`, then the kind's keys; a key of another kind, or of
    /// none, is an error naming it.
    pub fn from_table(mut table: Map<String, Value>) -> Result<Self, String> {
        let kind = match table.remove("kind") {
            None => NetworkKind::Star,
            Some(v) => NetworkKind::deserialize(v).map_err(|e| format!("network.kind: {e}"))?,
        };
        let allowed = kind.keys();
        if let Some(key) = table.keys().find(|k| !allowed.contains(k)) {
            let known = NetworkKind::ALL.iter().any(|k| k.keys().contains(key));
            if !known {
                return Err(format!(
                    "network.{key}: unknown key; allowed: kind, {}",
                    all_keys().join(", ")
                ));
            }
            return Err(Error::NotApplicable {
                key: key.clone(),
                kind: kind.as_str(),
                allowed: allowed.to_vec(),
            }
            .to_string());
        }
        let rest = Value::Object(table);
        let typed = |e: serde_json::Error| format!("network: {e}");
        Ok(match kind {
            NetworkKind::Star => NetworkConfig::Star,
            NetworkKind::Chain => {
                NetworkConfig::Chain(serde_json::from_value(rest).map_err(typed)?)
            }
            NetworkKind::Grid => NetworkConfig::Grid(serde_json::from_value(rest).map_err(typed)?),
            NetworkKind::Dumbbell => {
                NetworkConfig::Dumbbell(serde_json::from_value(rest).map_err(typed)?)
            }
            NetworkKind::Gprs => NetworkConfig::Gprs(serde_json::from_value(rest).map_err(typed)?),
            NetworkKind::File => NetworkConfig::File(serde_json::from_value(rest).map_err(typed)?),
            NetworkKind::Nbiot => {
                NetworkConfig::Nbiot(serde_json::from_value(rest).map_err(typed)?)
            }
            NetworkKind::Ltem => NetworkConfig::Ltem(serde_json::from_value(rest).map_err(typed)?),
        })
    }
}

/// Every key of some kind, in schema order (the union of the kinds' keys).
fn all_keys() -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for k in NetworkKind::ALL {
        for key in k.keys() {
            if !out.contains(&key.as_str()) {
                out.push(key);
            }
        }
    }
    out
}

impl<'de> Deserialize<'de> for NetworkConfig {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let table = Map::<String, Value>::deserialize(d)?;
        NetworkConfig::from_table(table).map_err(D::Error::custom)
    }
}

impl Serialize for NetworkConfig {
    /// The flat table scenario files write: `kind` and the kind's keys.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::Error as _;
        let inner = match self {
            NetworkConfig::Star => Ok(Value::Object(Map::new())),
            NetworkConfig::Chain(m) | NetworkConfig::Grid(m) | NetworkConfig::Dumbbell(m) => {
                serde_json::to_value(m)
            }
            NetworkConfig::Gprs(g) => serde_json::to_value(g),
            NetworkConfig::File(f) => serde_json::to_value(f),
            NetworkConfig::Nbiot(c) | NetworkConfig::Ltem(c) => serde_json::to_value(c),
        }
        .map_err(S::Error::custom)?;
        let mut table = Map::new();
        table.insert("kind".into(), self.kind().as_str().into());
        if let Value::Object(keys) = inner {
            table.extend(keys);
        }
        table.serialize(s)
    }
}

impl JsonSchema for NetworkConfig {
    fn schema_name() -> Cow<'static, str> {
        "NetworkConfig".into()
    }

    /// One flat table: `kind` and the union of the kinds' keys, each key annotated with
    /// `x-kinds`, the kinds it applies to.
    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let kind_ref = generator.subschema_for::<NetworkKind>();
        let mut kind = serde_json::json!({
            "description": "The network's kind: `star` (the reference testbed), `chain`, `grid`, `dumbbell`\n(multi-hop IEEE 802.15.4 meshes), `gprs` (a GPRS modem link), `nbiot` or `ltem` (a cell).",
        });
        let obj = kind.as_object_mut().expect("an object");
        if let Some(r) = kind_ref.as_object() {
            obj.extend(r.clone());
        }
        obj.insert("default".into(), "star".into());
        let names: Vec<&str> = NetworkKind::ALL.iter().map(|k| k.as_str()).collect();
        obj.insert("x-kinds".into(), names.into());
        let mut props = Map::new();
        props.insert("kind".into(), kind);
        for k in NetworkKind::ALL {
            let Some(schema) = kind_schema(k, generator) else {
                continue;
            };
            let Some(keys) = schema.get("properties").and_then(Value::as_object) else {
                continue;
            };
            for (key, node) in keys {
                let entry = props.entry(key.clone()).or_insert_with(|| {
                    let mut node = node.clone();
                    if let Some(o) = node.as_object_mut() {
                        o.insert("x-kinds".into(), Value::Array(Vec::new()));
                    }
                    node
                });
                if let Some(Value::Array(kinds)) = entry.get_mut("x-kinds") {
                    kinds.push(k.as_str().into());
                }
            }
        }
        schemars::json_schema!({
            "description": "Which network a run simulates: `kind` and the keys of that kind, of the\nmulti-hop IEEE 802.15.4 networks (`chain`, `grid`, `dumbbell`, `file`; docs/networks.md),\nthe GPRS preset (`gprs`) or the cells (`nbiot`, `ltem`); `x-kinds` names the kinds a key applies to, and a key given\nwith another kind is refused.",
            "type": "object",
            "properties": props,
            "additionalProperties": false,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_of_another_kind_is_refused_naming_the_key_the_kind_and_the_allowed_keys() {
        let e = crate::config::RunConfig::from_json(
            r#"{"network": {"kind": "chain", "gprs_loss": 0.1}}"#,
        )
        .unwrap_err();
        assert!(
            e.contains(
                "network.gprs_loss: does not apply to network.kind = \"chain\"; keys of chain: \
                 range_m, interference_factor, "
            ),
            "{e}"
        );
        let e = crate::config::RunConfig::from_json(r#"{"network": {"range_m": 3}}"#).unwrap_err();
        assert!(
            e.contains(
                "network.range_m: does not apply to network.kind = \"star\"; keys of star: none"
            ),
            "{e}"
        );
        let e =
            crate::config::RunConfig::from_json(r#"{"network": {"kind": "gprs", "nodes": []}}"#)
                .unwrap_err();
        assert!(e.contains("network.nodes: does not apply"), "{e}");
        let e = crate::config::RunConfig::from_json(r#"{"network": {"rang_m": 3}}"#).unwrap_err();
        assert!(e.contains("network.rang_m: unknown key"), "{e}");
    }

    #[test]
    fn each_kind_reads_its_own_keys() {
        let c = crate::config::RunConfig::from_json(
            r#"{"network": {"kind": "grid", "range_m": 3, "mac_queue_frames": 9, "mac": "contiki"}}"#,
        )
        .unwrap();
        let n = c.network.unwrap();
        assert_eq!(n.kind(), NetworkKind::Grid);
        let m = n.mesh().unwrap();
        assert_eq!((m.range_m, m.radio.mac_queue_frames), (3.0, 9));
        assert_eq!(m.mac, "contiki");
        let c =
            crate::config::RunConfig::from_json(r#"{"network": {"kind": "gprs", "gprs_loss": 0}}"#)
                .unwrap();
        assert_eq!(c.network.unwrap().gprs().unwrap().gprs_loss, 0.0);
        assert!(NetworkKind::File.keys().iter().any(|k| k == "nodes"));
        assert!(NetworkKind::Chain.keys().iter().all(|k| k != "nodes"));
    }
}
