//! The front door: a testbed is a network (`net::topology`) with client populations and a
//! server on it, run by the one event loop (`world`). `run` simulates one replication of a
//! fully resolved configuration; `check` validates one without running it.

use std::io::Write;

use coaplab_cc::registry::Registry;

use crate::config::RunConfig;
use crate::foreign::Algorithms;
use crate::metrics::RunResult;
use crate::world::World;

pub use crate::error::Error;

/// Checks `cfg` the way a run would, without running it.
pub fn check(cfg: &RunConfig) -> Result<(), Error> {
    World::new(cfg, 0, false).map(|_| ())
}

/// Runs replication `replication` of `cfg`; with `pcap`, also writes the capture there.
pub fn run(
    cfg: &RunConfig,
    replication: u64,
    pcap: Option<&mut dyn Write>,
) -> Result<RunResult, Error> {
    run_with_registry(cfg, replication, pcap, &Registry::builtin())
}

/// As [`run`], with UDP algorithms taken from `registry` (e.g. one an experimenter
/// registered at run time).
pub fn run_with_registry(
    cfg: &RunConfig,
    replication: u64,
    pcap: Option<&mut dyn Write>,
    registry: &Registry,
) -> Result<RunResult, Error> {
    let algorithms = Algorithms::resolve(cfg, registry, None)?;
    run_with_algorithms(cfg, replication, pcap, &algorithms)
}

/// As [`run`], with the run's UDP algorithms already resolved ([`Algorithms::resolve`]; the
/// Python front resolves `python:` names this way). The first error a C algorithm met
/// (`crate::foreign::c`) is the run's error.
pub fn run_with_algorithms(
    cfg: &RunConfig,
    replication: u64,
    pcap: Option<&mut dyn Write>,
    algorithms: &Algorithms,
) -> Result<RunResult, Error> {
    let mut world = World::with_algorithms(cfg, replication, pcap.is_some(), algorithms)?;
    let mut guard = crate::sim::guard::Guard::for_config(cfg);
    let ran = world.run(&mut guard);
    if let Some(e) = algorithms.failure() {
        return Err(Error::Algorithm(e));
    }
    ran.map_err(Error::Guard)?;
    if let Some(out) = pcap {
        world.write_pcap(out).map_err(|source| Error::Io {
            what: "pcap",
            path: None,
            source,
        })?;
    }
    Ok(world.result())
}
