//! Topologies: functions that turn a configuration into a [`Network`] description — nodes,
//! elements, routes — and say where clients and the server run. Adding a topology is one file
//! here plus one line in [`TOPOLOGIES`] (CONTRIBUTING.md).

pub mod built;
pub mod cell;
pub mod chain;
pub mod dumbbell;
pub mod file;
pub mod gprs;
pub mod grid;
pub mod mesh;
pub mod mesh_config;
pub mod star;

use crate::config::{MeshRole, NetworkConfig, RunConfig};
use crate::error::Error;
pub use built::{GuardTerms, Topology};
use mesh::Layout;

/// Builds replication `replication`'s network for `cfg`.
pub type Build = fn(&RunConfig, u64) -> Result<Topology, Error>;

/// A topology of the registry.
pub struct TopologyEntry {
    /// The name `network.kind` uses.
    pub name: &'static str,
    pub build: Build,
    /// A built-in mesh's layout at a radio range (its client nodes are the default
    /// `workload.clients`); `None` for other topologies.
    pub mesh_layout: Option<fn(f64) -> Layout>,
    /// What the network adds to the run guard's terms beyond `[link]` (packets of the given
    /// IP size); `None`: nothing.
    pub guard_terms: Option<fn(&RunConfig, u32) -> GuardTerms>,
}

const fn entry(
    name: &'static str,
    build: Build,
    mesh_layout: Option<fn(f64) -> Layout>,
) -> TopologyEntry {
    TopologyEntry {
        name,
        build,
        mesh_layout,
        guard_terms: None,
    }
}

/// Every topology, by the name `network.kind` uses.
pub const TOPOLOGIES: &[TopologyEntry] = &[
    entry("star", star::build, None),
    entry("chain", chain::build, Some(chain::layout)),
    entry("grid", grid::build, Some(grid::layout)),
    entry("dumbbell", dumbbell::build, Some(dumbbell::layout)),
    TopologyEntry {
        guard_terms: Some(gprs::guard_terms),
        ..entry("gprs", gprs::build, None)
    },
    entry("file", file::build, None),
    TopologyEntry {
        guard_terms: Some(cell::guard_terms_nbiot),
        ..entry("nbiot", cell::build_nbiot, None)
    },
    TopologyEntry {
        guard_terms: Some(cell::guard_terms_ltem),
        ..entry("ltem", cell::build_ltem, None)
    },
];

/// Client nodes of a built-in mesh's layout: the default `workload.clients` of such a network,
/// before its `outside_clients`; `None` for other kinds. The count does not depend on the radio
/// range, which only scales the positions.
pub fn mesh_client_nodes(kind: &str) -> Option<usize> {
    let layout = TOPOLOGIES.iter().find(|t| t.name == kind)?.mesh_layout?;
    Some(layout(1.0).clients.len())
}

/// A network's default `workload.clients`: one client per client node of a mesh (a built-in
/// layout's, or a `file` mesh's nodes with role `client`) plus its outside clients (with
/// `outside_clients_per_sink`, one per sink), at least 1; `None` for networks that are not
/// meshes (their default is `workload.clients`'s own).
pub fn default_clients(network: &NetworkConfig) -> Option<usize> {
    let mesh = network.mesh()?;
    let nodes = match network.file() {
        Some(f) => {
            let count = |role| f.nodes.iter().filter(|n| n.role == role).count();
            if mesh.outside_clients_per_sink {
                return Some((count(MeshRole::Client) + count(MeshRole::Sink)).max(1));
            }
            count(MeshRole::Client)
        }
        None => mesh_client_nodes(network.kind().as_str())?,
    };
    Some((nodes + mesh.outside_clients as usize).max(1))
}

/// The topology `cfg.network.kind` names (default `star`).
pub fn build(cfg: &RunConfig, replication: u64) -> Result<Topology, Error> {
    let kind = kind_of(cfg);
    match TOPOLOGIES.iter().find(|t| t.name == kind) {
        Some(t) => (t.build)(cfg, replication),
        None => Err(Error::key(
            "network.kind",
            format!(
                "'{kind}' is not a topology; allowed: {}",
                TOPOLOGIES
                    .iter()
                    .map(|t| t.name)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )),
    }
}

/// The rate of the network's downlink (the links with role `Downlink`), kbit/s, for the
/// downlink-share metrics: `link.downlink_kbps`, or the GPRS preset's downlink.
pub fn downlink_kbps(cfg: &RunConfig) -> f64 {
    guard_terms(cfg, 0)
        .downlink_kbps
        .unwrap_or(cfg.link.downlink_kbps)
}

/// The name of `cfg`'s network kind (default `star`).
fn kind_of(cfg: &RunConfig) -> &'static str {
    cfg.network.as_ref().map_or("star", |n| n.kind().as_str())
}

/// What `cfg`'s network adds to the run guard's terms, for packets of `ip_bytes`
/// ([`TopologyEntry::guard_terms`]).
pub fn guard_terms(cfg: &RunConfig, ip_bytes: u32) -> GuardTerms {
    let kind = kind_of(cfg);
    TOPOLOGIES
        .iter()
        .find(|t| t.name == kind)
        .and_then(|t| t.guard_terms)
        .map_or_else(GuardTerms::default, |f| f(cfg, ip_bytes))
}

#[cfg(test)]
mod registry_tests {
    use super::TOPOLOGIES;

    /// A file mesh's default client count, by hand: two `client` nodes and one `sink`; with
    /// `outside_clients = 2`, 2 + 2 = 4; one outside client per sink instead, 2 + 1 = 3. The
    /// star is not a mesh: no default of its own.
    #[test]
    fn a_file_mesh_has_one_default_client_per_client_node_and_outside_client() {
        use crate::config::NetworkConfig;
        let table = |extra: &str| -> NetworkConfig {
            let text = format!(
                r#"{{"kind": "file", "nodes": [{{"role": "border-router"}}, {{"role": "client"}},
                   {{"role": "client"}}, {{"role": "sink"}}]{extra}}}"#
            );
            NetworkConfig::from_table(serde_json::from_str(&text).unwrap()).unwrap()
        };
        assert_eq!(
            super::default_clients(&table(r#", "outside_clients": 2"#)),
            Some(4)
        );
        assert_eq!(
            super::default_clients(&table(r#", "outside_clients_per_sink": true"#)),
            Some(3)
        );
        assert_eq!(super::default_clients(&NetworkConfig::Star), None);
    }

    /// CONTRIBUTING.md "Adding a topology", step 2: a name in `TOPOLOGIES` and in
    /// `config::NetworkKind` (what scenario files may select); the two lists agree.
    #[test]
    fn every_network_kind_has_a_topology_and_every_topology_a_kind() {
        let schema: serde_json::Value =
            serde_json::from_str(&crate::config::scenario_schema()).unwrap();
        let kinds: Vec<&str> = schema["$defs"]["NetworkKind"]["enum"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        let topologies: Vec<&str> = TOPOLOGIES.iter().map(|t| t.name).collect();
        assert_eq!(kinds, topologies);
    }
}
