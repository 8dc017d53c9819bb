//! The front door: a testbed is a network (`net::topology`) with client populations and a
//! server on it, run by the one event loop (`world`). `run` simulates one replication of a
//! fully resolved configuration; `check` validates one without running it.

use std::io::Write;

use coaplab_cc::registry::Registry;
use coaplab_cc::Duration;

use crate::config::RunConfig;
use crate::metrics::RunResult;
use crate::world::World;

/// An invalid configuration, found before anything runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError(pub String);

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for ConfigError {}

pub(crate) fn secs(s: f64) -> Duration {
    Duration::from_secs_f64(s)
}
pub(crate) fn millis(ms: f64) -> Duration {
    Duration::from_secs_f64(ms / 1000.0)
}

/// The address of client `i` in captures: 10.a.b.c with a.b.c = i + 1.
pub(crate) fn client_addr(i: u32) -> [u8; 4] {
    let n = i + 1;
    [10, (n >> 16) as u8, (n >> 8) as u8, n as u8]
}
pub(crate) const SERVER_ADDR: [u8; 4] = [192, 0, 2, 1];
/// First ephemeral port of a client (IANA dynamic range, RFC 6335 §6).
pub(crate) const CLIENT_PORT: u16 = 49152;

/// Checks `cfg` the way a run would, without running it.
pub fn check(cfg: &RunConfig) -> Result<(), ConfigError> {
    World::new(cfg, 0, false).map(|_| ())
}

/// Runs replication `replication` of `cfg`; with `pcap`, also writes the capture there.
pub fn run(
    cfg: &RunConfig,
    replication: u64,
    pcap: Option<&mut dyn Write>,
) -> Result<RunResult, ConfigError> {
    run_with_registry(cfg, replication, pcap, &Registry::builtin())
}

/// As [`run`], with UDP algorithms taken from `registry` (e.g. one an experimenter
/// registered at run time).
pub fn run_with_registry(
    cfg: &RunConfig,
    replication: u64,
    pcap: Option<&mut dyn Write>,
    registry: &Registry,
) -> Result<RunResult, ConfigError> {
    let mut world = World::with_registry(cfg, replication, pcap.is_some(), registry)?;
    let mut guard = crate::sim::guard::Guard::for_config(cfg);
    world
        .run(&mut guard)
        .map_err(|stop| ConfigError(stop.to_string()))?;
    if let Some(out) = pcap {
        world
            .write_pcap(out)
            .map_err(|e| ConfigError(format!("writing pcap: {e}")))?;
    }
    Ok(world.result())
}
