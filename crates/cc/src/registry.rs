//! The one list of algorithms: names, one-line summaries, sources, parameters and how each is
//! built.
//!
//! [`BUILTIN`] holds the built-in algorithms in their documented order
//! (`docs/algorithms.md`): the twelve of [`AlgorithmName`](crate::AlgorithmName) (which
//! [`Algorithm::new`](crate::AnyAlgorithm::new) reads by index), then the `@californium`
//! variants. Everything that enumerates algorithms (the simulator, the scenario schema, Python,
//! the replay) reads this list, not `AlgorithmName`. A [`Registry`] is a value, not global
//! state: [`Registry::builtin`] starts from [`BUILTIN`] and [`Registry::register`] adds entries
//! at run time (an algorithm written in a test, later one written in Python).
//!
//! Adding an algorithm is one new file (a type implementing
//! [`Controller`](crate::Controller)) and one [`Entry`] in [`BUILTIN`]; see `CONTRIBUTING.md`.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use crate::algorithm::AnyAlgorithm;
use crate::basic_rto::BasicRto;
use crate::californium::{Californium, CfAlgorithm};
use crate::cocoa::{Cocoa, CocoaParams, CocoaVariant};
use crate::config::Config;
use crate::default::{DefaultRto, FullBackoff};
use crate::fasor::Fasor;
use crate::linux_rto::LinuxRto;
use crate::peakhopper_rto::PeakHopperRto;
use crate::time::Duration;

/// One algorithm-specific parameter. Values are `f64` in [`unit`](ParamSpec::unit); a value is
/// valid when it is finite and `min ≤ value ≤ max`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ParamSpec {
    pub name: &'static str,
    /// `"s"` for durations (converted with [`Params::duration`]), `""` for pure numbers.
    pub unit: &'static str,
    pub default: f64,
    pub min: f64,
    pub max: f64,
    /// One line: what it is and where its default comes from.
    pub doc: &'static str,
}

/// The parameter values an [`Entry::build`] function reads: the caller's overrides, else the
/// declared defaults. Overrides were validated against the specs before `build` runs.
#[derive(Clone, Copy, Debug)]
pub struct Params<'a> {
    specs: &'a [ParamSpec],
    values: &'a [(&'a str, f64)],
}

impl<'a> Params<'a> {
    /// Every parameter at its declared default.
    pub const fn defaults(specs: &'a [ParamSpec]) -> Self {
        Params { specs, values: &[] }
    }

    /// The value of `name` (an override, else its default).
    ///
    /// # Panics
    /// If `name` is not declared in the entry's `params`: a bug in that registry entry, caught
    /// by building every entry in the crate's tests.
    pub fn get(&self, name: &str) -> f64 {
        if let Some(&(_, v)) = self.values.iter().find(|(n, _)| *n == name) {
            return v;
        }
        match self.specs.iter().find(|s| s.name == name) {
            Some(spec) => spec.default,
            None => panic!("parameter '{name}' is not declared in the registry entry"),
        }
    }

    /// A parameter in seconds as a [`Duration`] (rounded to the nearest nanosecond).
    pub fn duration(&self, name: &str) -> Duration {
        Duration::from_secs_f64(self.get(name))
    }
}

/// How an entry builds its algorithm from the shared configuration and its parameters.
pub type BuildFn = fn(&Config, &Params<'_>) -> AnyAlgorithm;

/// One algorithm in a [`Registry`].
#[derive(Clone, Copy)]
pub struct Entry {
    /// The user-facing name (scenario files' `coap.cc`, the replay CLI).
    pub name: &'static str,
    /// One line.
    pub summary: &'static str,
    /// RFC, draft or paper (with section) the algorithm follows.
    pub source: &'static str,
    /// Whether responses must echo the answered transmission (FASOR's Rexmit-Cnt option,
    /// draft-ietf-core-fasor-02 §4.4); the endpoint then adds the option to every message.
    pub needs_rexmit_count: bool,
    /// The algorithm's own parameters (beyond [`Config`]).
    pub params: &'static [ParamSpec],
    pub build: BuildFn,
}

impl fmt::Debug for Entry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Entry")
            .field("name", &self.name)
            .field("needs_rexmit_count", &self.needs_rexmit_count)
            .field("params", &self.params)
            .finish_non_exhaustive()
    }
}

impl Entry {
    /// Builds the algorithm with every parameter at its default.
    pub fn algorithm(&self, config: &Config) -> AnyAlgorithm {
        (self.build)(config, &Params::defaults(self.params))
    }

    /// Builds the algorithm with `overrides` (`(parameter name, value in its unit)`), each
    /// checked against [`params`](Entry::params).
    pub fn algorithm_with(
        &self,
        config: &Config,
        overrides: &[(&str, f64)],
    ) -> Result<AnyAlgorithm, ParamError> {
        for &(name, value) in overrides {
            let Some(spec) = self.params.iter().find(|s| s.name == name) else {
                return Err(ParamError::Unknown {
                    algorithm: self.name,
                    param: String::from(name),
                    valid: self.params.iter().map(|s| s.name).collect(),
                });
            };
            if !(value.is_finite() && spec.min <= value && value <= spec.max) {
                return Err(ParamError::OutOfRange {
                    algorithm: self.name,
                    spec: *spec,
                    value,
                });
            }
        }
        Ok((self.build)(
            config,
            &Params {
                specs: self.params,
                values: overrides,
            },
        ))
    }
}

/// CoCoA's parameters: only its 32 s truncation (draft-ietf-core-cocoa-03 §4.2).
const COCOA_PARAMS: &[ParamSpec] = &[ParamSpec {
    name: "max_timer",
    unit: "s",
    default: 32.0,
    min: 0.001,
    max: 86_400.0,
    doc: "truncation of every timer (draft-ietf-core-cocoa-03 §4.2: 32 s); replaces the shared 60 s cap",
}];

fn cocoa(config: &Config, p: &Params<'_>, variant: CocoaVariant) -> AnyAlgorithm {
    let params = CocoaParams {
        max_timer: p.duration("max_timer"),
    };
    AnyAlgorithm::Cocoa(Cocoa::with_params(*config, variant, params))
}

/// The built-in algorithms, in their documented order: the twelve of
/// [`AlgorithmName::ALL`](crate::AlgorithmName::ALL) first (same order), then the variants that
/// model another implementation (`NAME@californium`), which are boxed
/// ([`AnyAlgorithm::custom`]) and have no `AlgorithmName`.
pub const BUILTIN: [Entry; 17] = [
    Entry {
        name: "default",
        summary: "T_0 dithered in [2, 3] s, doubling, cap 60 s, no state between exchanges",
        source: "RFC 7252 §4.2, §4.8",
        needs_rexmit_count: false,
        params: &[],
        build: |c, _| AnyAlgorithm::Default(DefaultRto::new(*c, FullBackoff::Off)),
    },
    Entry {
        name: "default-fb1",
        summary: "default, but after k >= 1 the next T_0 is the last backed-off T_k (not dithered)",
        source: "RFC 7252 §4.2 + the literature's full backoff (docs/algorithms.md)",
        needs_rexmit_count: false,
        params: &[],
        build: |c, _| AnyAlgorithm::Default(DefaultRto::new(*c, FullBackoff::Fb1)),
    },
    Entry {
        name: "default-fb2",
        summary: "default-fb1, but k = 0 halves the retained timer, dropped once below 3 s",
        source: "RFC 7252 §4.2 + the literature's full backoff (docs/algorithms.md)",
        needs_rexmit_count: false,
        params: &[],
        build: |c, _| AnyAlgorithm::Default(DefaultRto::new(*c, FullBackoff::Fb2)),
    },
    Entry {
        name: "cocoa",
        summary: "strong + weak RFC 6298 estimators, variable backoff x3/x2/x1.5, aging, cap 32 s",
        source: "draft-ietf-core-cocoa-03 §4",
        needs_rexmit_count: false,
        params: COCOA_PARAMS,
        build: |c, p| cocoa(c, p, CocoaVariant::Cocoa),
    },
    Entry {
        name: "cocoa-s",
        summary: "cocoa with weak samples ignored (strong estimator only)",
        source: "draft-ietf-core-cocoa-03 §4 (weak estimator removed)",
        needs_rexmit_count: false,
        params: COCOA_PARAMS,
        build: |c, p| cocoa(c, p, CocoaVariant::Strong),
    },
    Entry {
        name: "cocoa-fb1",
        summary: "cocoa + retention of the backed-off T_k after k >= 1",
        source: "draft-ietf-core-cocoa-03 §4 + full backoff (docs/algorithms.md)",
        needs_rexmit_count: false,
        params: COCOA_PARAMS,
        build: |c, p| cocoa(c, p, CocoaVariant::Fb1),
    },
    Entry {
        name: "cocoa-fb2",
        summary: "cocoa + retention of CoCoA's backoff applied k times to max(T_0, RTO')",
        source: "draft-ietf-core-cocoa-03 §4 + full backoff (docs/algorithms.md)",
        needs_rexmit_count: false,
        params: COCOA_PARAMS,
        build: |c, p| cocoa(c, p, CocoaVariant::Fb2),
    },
    Entry {
        name: "basic-rto",
        summary: "last sample R with k <= 2 gives the next T_0 in [R, 1.5 R]; k >= 3 retains T_k",
        source: "B-RTO of the CoAP congestion-control literature (docs/algorithms.md)",
        needs_rexmit_count: false,
        params: &[],
        build: |c, _| AnyAlgorithm::BasicRto(BasicRto::new(*c)),
    },
    Entry {
        name: "linux-rto",
        summary: "Linux's TCP RTO estimator on strong samples (Karn), rttvar >= 50 ms, no dither",
        source: "Linux net/ipv4/tcp_input.c tcp_rtt_estimator; RFC 6298 §3 (Karn)",
        needs_rexmit_count: false,
        params: &[],
        build: |c, _| AnyAlgorithm::LinuxRto(LinuxRto::new(*c)),
    },
    Entry {
        name: "peakhopper-rto",
        summary: "Peak-Hopper RTO on strong samples (Karn): decaying max of scaled recent RTTs",
        source: "Peak-Hopper (Ruuska, Kuusela et al.); RFC 6298 §3 (Karn)",
        needs_rexmit_count: false,
        params: &[],
        build: |c, _| AnyAlgorithm::PeakHopper(PeakHopperRto::new(*c)),
    },
    Entry {
        name: "fasor",
        summary: "FastRTO + SlowRTO with the FAST / FAST_SLOW_FAST / SLOW_FAST timer series",
        source: "draft-ietf-core-fasor-02 §3",
        needs_rexmit_count: false,
        params: &[],
        build: |c, _| AnyAlgorithm::Fasor(Fasor::new(*c, false)),
    },
    Entry {
        name: "fasor-rc",
        summary: "fasor with the Rexmit-Cnt echo: every matched response feeds FastRTO",
        source: "draft-ietf-core-fasor-02 §3, §4.4",
        needs_rexmit_count: true,
        params: &[],
        build: |c, _| AnyAlgorithm::Fasor(Fasor::new(*c, true)),
    },
    Entry {
        name: "cocoa@californium",
        summary: "Californium's CoCoA: ALPHA/BETA swapped, RTO = RTT + max(100 ms, K RTTVAR), VBF fixed from T_0, 500 ms floor",
        source: "eclipse-californium Cocoa.java (processRttMeasurement, calculateVBF, checkAging), Rto.apply, CongestionControlLayer.updateRetransmissionTimeout",
        needs_rexmit_count: false,
        params: &[],
        build: |c, _| AnyAlgorithm::custom(Californium::new(*c, CfAlgorithm::Cocoa)),
    },
    Entry {
        name: "cocoa-s@californium",
        summary: "cocoa@californium with weak samples ignored (Californium's COCOA_STRONG)",
        source: "eclipse-californium Cocoa.java (strong = true: processRttMeasurement), CongestionControlLayer.newImplementation",
        needs_rexmit_count: false,
        params: &[],
        build: |c, _| AnyAlgorithm::custom(Californium::new(*c, CfAlgorithm::CocoaStrong)),
    },
    Entry {
        name: "basic-rto@californium",
        summary: "Californium's BasicRto: T_0 = 1.5 R of the last strong or weak sample, not dithered, 500 ms floor, no retention",
        source: "eclipse-californium BasicRto.java (processRttMeasurement), CongestionControlLayer.updateRetransmissionTimeout",
        needs_rexmit_count: false,
        params: &[],
        build: |c, _| AnyAlgorithm::custom(Californium::new(*c, CfAlgorithm::BasicRto)),
    },
    Entry {
        name: "linux-rto@californium",
        summary: "Californium's LinuxRto: its ms-rounded Linux estimator on strong samples, 500 ms floor, no retention",
        source: "eclipse-californium LinuxRto.java (initializeRTOEstimators, updateEstimator), CongestionControlLayer.updateRetransmissionTimeout",
        needs_rexmit_count: false,
        params: &[],
        build: |c, _| AnyAlgorithm::custom(Californium::new(*c, CfAlgorithm::LinuxRto)),
    },
    Entry {
        name: "peakhopper-rto@californium",
        summary: "Californium's PeakhopperRto: integer delta, first sample never R_prev, 500 ms floor, no retention",
        source: "eclipse-californium PeakhopperRto.java (initializeRTOEstimators, updateEstimator), CongestionControlLayer.updateRetransmissionTimeout",
        needs_rexmit_count: false,
        params: &[],
        build: |c, _| AnyAlgorithm::custom(Californium::new(*c, CfAlgorithm::PeakhopperRto)),
    },
];

/// A list of algorithms that can be looked up by name and extended at run time.
#[derive(Clone, Debug)]
pub struct Registry {
    entries: Vec<Entry>,
}

impl Default for Registry {
    fn default() -> Self {
        Registry::builtin()
    }
}

impl Registry {
    /// The built-in algorithms ([`BUILTIN`]), in order.
    pub fn builtin() -> Self {
        Registry {
            entries: BUILTIN.to_vec(),
        }
    }

    /// An empty registry (for stacks that ship one algorithm).
    pub const fn empty() -> Self {
        Registry {
            entries: Vec::new(),
        }
    }

    /// Adds `entry` after the existing ones; a name already present is refused.
    pub fn register(&mut self, entry: Entry) -> Result<(), DuplicateName> {
        if self.entries.iter().any(|e| e.name == entry.name) {
            return Err(DuplicateName(entry.name));
        }
        self.entries.push(entry);
        Ok(())
    }

    /// Every entry, in registration order.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// Every name, in registration order.
    pub fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.entries.iter().map(|e| e.name)
    }

    /// The entry called `name`; otherwise an error listing the valid names (and the closest
    /// one, if it is within two edits).
    pub fn get(&self, name: &str) -> Result<&Entry, UnknownName> {
        self.entries
            .iter()
            .find(|e| e.name == name)
            .ok_or_else(|| UnknownName {
                name: String::from(name),
                did_you_mean: closest(name, self.names()),
                valid: self.names().collect(),
            })
    }

    /// Builds `name` with `config` and default parameters.
    pub fn build(&self, name: &str, config: &Config) -> Result<AnyAlgorithm, UnknownName> {
        Ok(self.get(name)?.algorithm(config))
    }

    /// Builds `name` with `config` and parameter `overrides`.
    pub fn build_with(
        &self,
        name: &str,
        config: &Config,
        overrides: &[(&str, f64)],
    ) -> Result<AnyAlgorithm, BuildError> {
        Ok(self.get(name)?.algorithm_with(config, overrides)?)
    }
}

/// Levenshtein distance (insert, delete, substitute), over bytes: names are ASCII.
fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, &ca) in a.iter().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let substitute = diagonal + usize::from(ca != cb);
            diagonal = row[j + 1];
            row[j + 1] = substitute.min(row[j] + 1).min(row[j + 1] + 1);
        }
    }
    row[b.len()]
}

/// The name closest to `name` if it is at most 2 edits away (the first of equally close ones).
fn closest<'n>(name: &str, names: impl Iterator<Item = &'n str>) -> Option<&'n str> {
    names
        .map(|n| (edit_distance(name, n), n))
        .filter(|&(d, _)| d <= 2)
        .min_by_key(|&(d, _)| d)
        .map(|(_, n)| n)
}

/// A name that is not in the registry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownName {
    pub name: String,
    pub did_you_mean: Option<&'static str>,
    pub valid: Vec<&'static str>,
}

impl fmt::Display for UnknownName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown algorithm '{}'", self.name)?;
        if let Some(close) = self.did_you_mean {
            write!(f, " (did you mean '{close}'?)")?;
        }
        f.write_str("; valid names: ")?;
        f.write_str(&self.valid.join(", "))
    }
}

/// [`Registry::register`] refused a name that is already registered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DuplicateName(pub &'static str);

impl fmt::Display for DuplicateName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "algorithm '{}' is already registered", self.0)
    }
}

/// A parameter override that does not fit the entry's [`ParamSpec`]s.
#[derive(Clone, Debug, PartialEq)]
pub enum ParamError {
    Unknown {
        algorithm: &'static str,
        param: String,
        valid: Vec<&'static str>,
    },
    OutOfRange {
        algorithm: &'static str,
        spec: ParamSpec,
        value: f64,
    },
}

impl fmt::Display for ParamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParamError::Unknown { algorithm, param, valid } if valid.is_empty() => write!(
                f,
                "algorithm '{algorithm}' has no parameter '{param}'; it takes no parameters"
            ),
            ParamError::Unknown { algorithm, param, valid } => write!(
                f,
                "algorithm '{algorithm}' has no parameter '{param}'; valid parameters: {}",
                valid.join(", ")
            ),
            ParamError::OutOfRange { algorithm, spec, value } => write!(
                f,
                "algorithm '{algorithm}': parameter '{}' = {value} {} is out of range; allowed {} to {} {}",
                spec.name, spec.unit, spec.min, spec.max, spec.unit
            ),
        }
    }
}

/// Why [`Registry::build_with`] failed.
#[derive(Clone, Debug, PartialEq)]
pub enum BuildError {
    UnknownName(UnknownName),
    Param(ParamError),
}

impl From<UnknownName> for BuildError {
    fn from(e: UnknownName) -> Self {
        BuildError::UnknownName(e)
    }
}
impl From<ParamError> for BuildError {
    fn from(e: ParamError) -> Self {
        BuildError::Param(e)
    }
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::UnknownName(e) => e.fmt(f),
            BuildError::Param(e) => e.fmt(f),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for UnknownName {}
#[cfg(feature = "std")]
impl std::error::Error for DuplicateName {}
#[cfg(feature = "std")]
impl std::error::Error for ParamError {}
#[cfg(feature = "std")]
impl std::error::Error for BuildError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edit_distances() {
        // kitten → sitting: k→s, e→i, +g = 3 (the textbook example).
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("cocoaa", "cocoa"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("fasor", "fasor"), 0);
    }
}
