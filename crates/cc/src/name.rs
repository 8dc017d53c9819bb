//! Selection of a built-in algorithm by name: [`AlgorithmName`] (the twelve with their own
//! [`AnyAlgorithm`] variant) and [`AnyAlgorithm::new`] / [`AnyAlgorithm::from_name`], all read
//! from the registry's [`BUILTIN`], the one source of names and properties.
//!
//! Kept apart from `algorithm.rs` (the enum and its dispatch) so that the registry, which
//! builds `AnyAlgorithm`s, and the enum do not import each other (issue #33, item 4).

use core::fmt;
use core::str::FromStr;

use crate::algorithm::AnyAlgorithm;
use crate::config::Config;
use crate::registry::{Entry, Params, BUILTIN};

/// The built-in algorithms by their user-facing names; entry `name as usize` of
/// [`BUILTIN`] describes each (the registry is the one source of names and properties).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AlgorithmName {
    Default,
    DefaultFb1,
    DefaultFb2,
    Cocoa,
    CocoaS,
    CocoaFb1,
    CocoaFb2,
    BasicRto,
    LinuxRto,
    PeakhopperRto,
    Fasor,
    FasorRc,
}

impl AlgorithmName {
    /// Every built-in algorithm, in the order of [`BUILTIN`].
    pub const ALL: [AlgorithmName; 12] = [
        AlgorithmName::Default,
        AlgorithmName::DefaultFb1,
        AlgorithmName::DefaultFb2,
        AlgorithmName::Cocoa,
        AlgorithmName::CocoaS,
        AlgorithmName::CocoaFb1,
        AlgorithmName::CocoaFb2,
        AlgorithmName::BasicRto,
        AlgorithmName::LinuxRto,
        AlgorithmName::PeakhopperRto,
        AlgorithmName::Fasor,
        AlgorithmName::FasorRc,
    ];

    /// The registry entry of this algorithm.
    pub const fn entry(self) -> &'static Entry {
        &BUILTIN[self as usize]
    }

    pub const fn as_str(self) -> &'static str {
        self.entry().name
    }

    /// Whether responses must echo the answered transmission (FASOR's Rexmit-Cnt option).
    pub const fn needs_rexmit_count(self) -> bool {
        self.entry().needs_rexmit_count
    }
}

impl fmt::Display for AlgorithmName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An algorithm name that is not in [`BUILTIN`] (for [`AlgorithmName`]'s `FromStr`: not one
/// of [`AlgorithmName::ALL`]); its `Display` lists the registry's names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UnknownAlgorithm;

impl fmt::Display for UnknownAlgorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("unknown algorithm; valid names: ")?;
        for (i, entry) in BUILTIN.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            f.write_str(entry.name)?;
        }
        Ok(())
    }
}

#[cfg(feature = "std")]
impl std::error::Error for UnknownAlgorithm {}

impl FromStr for AlgorithmName {
    type Err = UnknownAlgorithm;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        AlgorithmName::ALL
            .into_iter()
            .find(|a| a.as_str() == s)
            .ok_or(UnknownAlgorithm)
    }
}

impl AnyAlgorithm {
    /// Builds a built-in algorithm through its registry entry, parameters at their defaults.
    pub fn new(name: AlgorithmName, config: Config) -> Self {
        let entry = name.entry();
        (entry.build)(&config, &Params::defaults(entry.params))
    }

    /// Builds the [`BUILTIN`] entry called `name` (the `@californium` variants included),
    /// parameters at their defaults; an unknown name lists the valid ones.
    pub fn from_name(name: &str, config: Config) -> Result<Self, UnknownAlgorithm> {
        let entry = BUILTIN
            .iter()
            .find(|e| e.name == name)
            .ok_or(UnknownAlgorithm)?;
        Ok(entry.algorithm(&config))
    }
}
