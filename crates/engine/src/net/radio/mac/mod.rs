//! The mesh's MACs and their registry. Each MAC implements [`traits::Mac`] (one instance per
//! node) in its own file and has one line in [`MACS`], under the name `network.mac` uses; the
//! mesh (`radio/mod.rs`) builds every node's MAC from its entry and never asks which one it
//! is. Duty cycling is a separate layer beneath any of them (`radio/rdc/`).
//!
//! Adding a MAC: CONTRIBUTING.md, "Adding a MAC".

pub mod contiki;
pub mod ieee802154;
pub mod traits;

pub use super::params::MacParams;
pub use ieee802154::{CcaDecision, Csma, MacState};
pub use traits::{Mac, Medium};

use super::params::RadioParams;

/// A MAC the mesh can run.
pub struct MacEntry {
    /// Its `network.mac` name.
    pub name: &'static str,
    /// Node `i`'s MAC, with a queue (or buffer pool) of `capacity` frames.
    pub build: fn(&RadioParams, usize) -> Box<dyn Mac>,
    /// Whether the mesh reports drops by node and cause (`Mesh::node_drops`,
    /// `contiki::DROP_*`) for it.
    pub node_drops: bool,
}

/// Every MAC, by `network.mac` name (the first is the default).
pub static MACS: &[MacEntry] = &[
    MacEntry {
        name: "ieee802154",
        build: ieee802154::Ieee802154::build,
        node_drops: false,
    },
    MacEntry {
        name: "contiki",
        build: contiki::ContikiMac::build,
        node_drops: true,
    },
];

/// The MAC named `name`.
pub fn by_name(name: &str) -> Option<&'static MacEntry> {
    MACS.iter().find(|e| e.name == name)
}

/// The MAC that parameters built without a name imply: Contiki's when they carry its
/// parameters, else the default.
pub fn implied_by(p: &RadioParams) -> &'static MacEntry {
    let name = if p.contiki.is_some() {
        "contiki"
    } else {
        MACS[0].name
    };
    by_name(name).expect("a registered MAC")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_the_default_is_the_standard() {
        assert_eq!(MACS[0].name, "ieee802154");
        for (i, e) in MACS.iter().enumerate() {
            assert!(
                MACS[..i].iter().all(|o| o.name != e.name),
                "{} twice",
                e.name
            );
            assert!(std::ptr::eq(by_name(e.name).unwrap(), e));
        }
        assert!(by_name("csma").is_none());
    }
}
