//! UDP algorithms resolved once per run (issue #33, item 4): each UDP group's `coap.cc` is
//! looked up when the run starts, before the world is built, and carried as a value
//! ([`UdpAlgorithm`]) from which the CoAP clients' algorithms are built; nothing looks the name
//! up again.
//!
//! A name is a registry entry (`coaplab_cc::registry`, the built-ins plus any registered at
//! run time), `c:LIB:NAME` (an algorithm in C behind the C API, loaded here: [`c`]), or
//! `python:FILE:CLASS`, which only the Python front can load: it hands a loader to
//! [`Algorithms::resolve`] (`crates/py`); without one such a name is unknown, as before.

pub mod c;
pub mod calls;

use std::sync::Arc;

use coaplab_cc::registry::{Entry, Registry};
use coaplab_cc::{AnyAlgorithm, Config};

use crate::config::{RunConfig, Transport};
use crate::error::Error;

/// Builds one client's algorithm from the run's configuration of it.
pub type BuildFn = dyn Fn(&Config) -> AnyAlgorithm + Send + Sync;

/// A UDP algorithm resolved from its name: what builds each client's instance.
#[derive(Clone)]
pub enum UdpAlgorithm {
    /// A registry entry (a built-in, or one registered at run time), default parameters.
    Entry(Entry),
    /// An algorithm loaded at run time (a C library, a Python class), built by a closure.
    Loaded {
        needs_rexmit_count: bool,
        build: Arc<BuildFn>,
    },
}

impl UdpAlgorithm {
    /// Whether responses must echo the answered transmission (FASOR's Rexmit-Cnt option,
    /// draft-ietf-core-fasor-02 §4.4).
    pub fn needs_rexmit_count(&self) -> bool {
        match self {
            UdpAlgorithm::Entry(e) => e.needs_rexmit_count,
            UdpAlgorithm::Loaded {
                needs_rexmit_count, ..
            } => *needs_rexmit_count,
        }
    }

    /// One client's algorithm with `config`.
    pub fn algorithm(&self, config: &Config) -> AnyAlgorithm {
        match self {
            UdpAlgorithm::Entry(e) => e.algorithm(config),
            UdpAlgorithm::Loaded { build, .. } => build(config),
        }
    }

    /// `c:LIB:NAME`, loaded (the library once per process) and checked, with its own
    /// [`c::Failure`] (returned too: the caller reports it after the run).
    pub fn c(spec: &str) -> Result<(Self, Arc<c::Failure>), String> {
        let spec = Arc::new(c::CAlgorithmSpec::load(spec)?);
        let failure = spec.failure().clone();
        let needs_rexmit_count = spec.needs_rexmit_count;
        let build = move |config: &Config| AnyAlgorithm::custom(spec.algorithm(config));
        Ok((
            UdpAlgorithm::Loaded {
                needs_rexmit_count,
                build: Arc::new(build),
            },
            failure,
        ))
    }
}

/// Loads a `python:FILE:CLASS` name (supplied by the Python front); the error is one line.
pub type PythonLoader<'a> = &'a dyn Fn(&str) -> Result<UdpAlgorithm, String>;

/// The UDP algorithms of one run: one per population (the `[[group]]`s in order, or the
/// top-level `coap`), `None` for a TCP population.
#[derive(Clone, Default)]
pub struct Algorithms {
    per_population: Vec<Option<UdpAlgorithm>>,
    /// The first error of each C algorithm of the run (see [`c`]).
    failures: Vec<Arc<c::Failure>>,
}

impl Algorithms {
    /// Resolves the `coap.cc` of every UDP population of `cfg` (the `[[group]]`s, or the
    /// top-level `coap`), each distinct name once. An unknown name is one line naming the key
    /// and what is allowed (the registry's wording).
    pub fn resolve(
        cfg: &RunConfig,
        registry: &Registry,
        python: Option<PythonLoader<'_>>,
    ) -> Result<Self, Error> {
        let mut out = Algorithms::default();
        // Each distinct name is loaded once (a library, a Python class) and shared.
        let mut loaded: Vec<(&str, UdpAlgorithm)> = Vec::new();
        let populations: Vec<(&str, &str, Transport)> = if cfg.group.is_empty() {
            vec![("", cfg.coap.cc.as_str(), cfg.coap.transport)]
        } else {
            cfg.group
                .iter()
                .map(|g| (g.name.as_str(), g.coap.cc.as_str(), g.coap.transport))
                .collect()
        };
        for (group, cc, transport) in populations {
            if transport != Transport::Udp {
                out.per_population.push(None);
                continue;
            }
            let algorithm = match loaded.iter().find(|(n, _)| *n == cc) {
                Some((_, a)) => a.clone(),
                None => {
                    let a = out.load(cc, registry, python).map_err(|e| {
                        let key = if group.is_empty() {
                            "coap.cc".to_string()
                        } else {
                            format!("group.{group}.coap.cc")
                        };
                        Error::key(key, e.to_string())
                    })?;
                    loaded.push((cc, a.clone()));
                    a
                }
            };
            out.per_population.push(Some(algorithm));
        }
        Ok(out)
    }

    /// Resolves `cc`: a registry entry, a C library, or a Python class.
    fn load(
        &mut self,
        cc: &str,
        registry: &Registry,
        python: Option<PythonLoader<'_>>,
    ) -> Result<UdpAlgorithm, String> {
        if cc.starts_with(c::PREFIX) {
            let (algorithm, failure) = UdpAlgorithm::c(cc)?;
            self.failures.push(failure);
            return Ok(algorithm);
        }
        match (registry.get(cc), python) {
            (Ok(entry), _) => Ok(UdpAlgorithm::Entry(*entry)),
            (Err(_), Some(load)) if cc.starts_with("python:") => load(cc),
            (Err(e), _) => Err(e.to_string()),
        }
    }

    /// The algorithm of population `index` (in the order of the `[[group]]`s), if it is a UDP
    /// population.
    pub fn population(&self, index: usize) -> Option<&UdpAlgorithm> {
        self.per_population.get(index).and_then(Option::as_ref)
    }

    /// The first error a C algorithm of the run met, if any: the run's error.
    pub fn failure(&self) -> Option<String> {
        self.failures.iter().find_map(|f| f.message())
    }
}
