//! `coaplab._core`: the single boundary between the Python front and the Rust crates.
//! Each call crosses once: Python hands over a whole script or configuration, Rust returns
//! the whole result.

use coaplab_cc::registry::Registry;
use coaplab_cc::replay::{replay as run_replay, ScriptedExchange};
use coaplab_cc::rng::{LowerBound, Rng, Xoshiro256pp};
use coaplab_cc::{Config, Duration, Instant, Value};
use coaplab_engine::config::RunConfig;
use coaplab_engine::foreign::{c, UdpAlgorithm};
use coaplab_engine::testbed::run_with_algorithms;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

mod pyalgo;

/// The UDP algorithm names, in the registry's order (`coaplab_cc::registry::BUILTIN`).
#[pyfunction]
fn algorithms() -> Vec<&'static str> {
    Registry::builtin().names().collect()
}

/// One dict per registered algorithm: `{name, summary, source, needs_rexmit_count,
/// params: [{name, unit, default, min, max, doc}]}`, in the registry's order.
#[pyfunction]
fn algorithm_info(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    let out = PyList::empty(py);
    for e in Registry::builtin().entries() {
        let d = PyDict::new(py);
        d.set_item("name", e.name)?;
        d.set_item("summary", e.summary)?;
        d.set_item("source", e.source)?;
        d.set_item("needs_rexmit_count", e.needs_rexmit_count)?;
        let params = PyList::empty(py);
        for p in e.params {
            let pd = PyDict::new(py);
            pd.set_item("name", p.name)?;
            pd.set_item("unit", p.unit)?;
            pd.set_item("default", p.default)?;
            pd.set_item("min", p.min)?;
            pd.set_item("max", p.max)?;
            pd.set_item("doc", p.doc)?;
            params.append(pd)?;
        }
        d.set_item("params", params)?;
        out.append(d)?;
    }
    Ok(out)
}

fn value_to_py<'py>(py: Python<'py>, value: Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Value::Duration(d) => d.secs_f64().into_pyobject(py)?.into_any(),
        Value::Float(f) => f.into_pyobject(py)?.into_any(),
        Value::Str(s) => s.into_pyobject(py)?.into_any(),
        Value::Absent => py.None().into_bound(py),
    })
}

/// Replays `script` (a list of `(start_s, lost, rtt_s)` tuples, already validated by the
/// Python side) through `algorithm` (a registered name or `c:LIB:NAME`) and returns one dict
/// per exchange (docs/design.md §3.2).
#[pyfunction]
#[pyo3(signature = (algorithm, script, dither, seed, max_retransmit))]
fn replay<'py>(
    py: Python<'py>,
    algorithm: &str,
    script: Vec<(f64, u32, f64)>,
    dither: bool,
    seed: u64,
    max_retransmit: u32,
) -> PyResult<Bound<'py, PyList>> {
    let config = Config {
        max_retransmit,
        ..Config::default()
    };
    if algorithm.starts_with(c::PREFIX) {
        // An algorithm in C behind the C API: loaded and driven by the engine, as in a run.
        let (resolved, failure) = UdpAlgorithm::c(algorithm).map_err(PyValueError::new_err)?;
        let mut alg = resolved.algorithm(&config);
        let out = replay_records(py, &mut alg, &script, dither, seed);
        return match failure.message() {
            Some(e) => Err(PyValueError::new_err(e)),
            None => out,
        };
    }
    let mut alg = Registry::builtin()
        .build(algorithm, &config)
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    replay_records(py, &mut alg, &script, dither, seed)
}

/// Loads `c:LIB:NAME` (the library once per process) and checks that its `coaplab_cc_init`
/// accepts `NAME`; a `ValueError` with one line naming what is wrong otherwise (the Python
/// front's scenario, scorecard and check-algorithm checks, before anything runs).
#[pyfunction]
fn load_c_algorithm(spec: &str) -> PyResult<()> {
    c::CAlgorithmSpec::load(spec)
        .map(|_| ())
        .map_err(PyValueError::new_err)
}

/// Replays `script` through the Python algorithm object `algorithm` (a configured
/// `coaplab.Algorithm`, see `coaplab.describe.replay`), with `label` naming it in errors. Exceptions
/// the algorithm raises are re-raised as one-line `ValueError`s naming the method.
#[pyfunction]
#[pyo3(signature = (algorithm, label, script, dither, seed, max_retransmit))]
fn replay_python<'py>(
    py: Python<'py>,
    algorithm: Py<PyAny>,
    label: &str,
    script: Vec<(f64, u32, f64)>,
    dither: bool,
    seed: u64,
    max_retransmit: u32,
) -> PyResult<Bound<'py, PyList>> {
    let config = Config {
        max_retransmit,
        ..Config::default()
    };
    let mut alg = coaplab_cc::AnyAlgorithm::custom(pyalgo::PyAlgo::new(
        config,
        algorithm,
        pyalgo::intern(label),
    ));
    pyalgo::clear_error();
    let out = replay_records(py, &mut alg, &script, dither, seed);
    match pyalgo::take_error() {
        Some(e) => Err(e),
        None => out,
    }
}

fn replay_records<'py>(
    py: Python<'py>,
    alg: &mut coaplab_cc::AnyAlgorithm,
    script: &[(f64, u32, f64)],
    dither: bool,
    seed: u64,
) -> PyResult<Bound<'py, PyList>> {
    let steps: Vec<ScriptedExchange> = script
        .iter()
        .map(|&(start, lost, rtt)| ScriptedExchange {
            start: Instant::from_secs_f64(start),
            lost,
            rtt: Duration::from_secs_f64(rtt),
        })
        .collect();
    let mut seeded = Xoshiro256pp::seed_from_u64(seed);
    let rng: &mut dyn Rng = if dither { &mut seeded } else { &mut LowerBound };
    let records = run_replay(alg, &steps, rng).map_err(|e| PyValueError::new_err(e.to_string()))?;

    let out = PyList::empty(py);
    for (index, r) in records.iter().enumerate() {
        let d = PyDict::new(py);
        d.set_item("index", index)?;
        d.set_item("start", r.start.secs_f64())?;
        d.set_item("end", r.end.secs_f64())?;
        d.set_item(
            "timers",
            r.timers.iter().map(|t| t.secs_f64()).collect::<Vec<_>>(),
        )?;
        d.set_item("retransmissions", r.retransmissions)?;
        let sample = PyDict::new(py);
        sample.set_item("kind", r.sample.kind.as_str())?;
        sample.set_item("rtt", r.sample.rtt.map(|d| d.secs_f64()))?;
        d.set_item("sample", sample)?;
        d.set_item("failed", r.failed)?;
        d.set_item("rto_after", r.rto_after.secs_f64())?;
        let state = PyDict::new(py);
        for (name, value) in &r.state {
            state.set_item(*name, value_to_py(py, *value)?)?;
        }
        d.set_item("state", state)?;
        out.append(d)?;
    }
    Ok(out)
}

/// The docs/design.md §2 error profile names.
#[pyfunction]
fn error_profiles() -> Vec<&'static str> {
    coaplab_engine::net::loss::LossProcess::PROFILES.to_vec()
}

/// Every topology by its `network.kind` name, with a built-in mesh's client nodes (its default
/// `workload.clients`; `None` for other kinds), from the engine's topology registry.
#[pyfunction]
fn topologies() -> Vec<(&'static str, Option<usize>)> {
    use coaplab_engine::net::topology::{mesh_client_nodes, TOPOLOGIES};
    TOPOLOGIES
        .iter()
        .map(|t| (t.name, mesh_client_nodes(t.name)))
        .collect()
}

/// A `network` table's default `workload.clients` (`net::topology::default_clients`): a mesh's
/// client nodes plus its outside clients; `None` for networks that are not meshes. `network` is
/// the table as JSON; an invalid one raises `ValueError` with the engine's one line.
#[pyfunction]
fn default_clients(network: &str) -> PyResult<Option<usize>> {
    let table = serde_json::from_str(network).map_err(|e| PyValueError::new_err(e.to_string()))?;
    let network =
        coaplab_engine::config::NetworkConfig::from_table(table).map_err(PyValueError::new_err)?;
    Ok(coaplab_engine::net::topology::default_clients(&network))
}

/// A cell category's downlink peak rate with one HARQ process at level 0, kbit/s
/// (`net::cellular::procedures::peak_downlink_kbps`: `blocks` of the largest transport block
/// back to back; `broadcast`: on the NB-IoT anchor carrier with its broadcast subframes;
/// `sib1 = false`: without SIB1-NB's subframes there, only NPBCH, NPSS and NSSS — what the
/// published peak derivations count, docs/networks.md "Calibration"). An unknown category
/// raises `ValueError` naming the categories.
#[pyfunction]
#[pyo3(signature = (category, broadcast, blocks=1000, sib1=true))]
fn cell_peak_downlink_kbps(
    category: &str,
    broadcast: bool,
    blocks: u32,
    sib1: bool,
) -> PyResult<f64> {
    use coaplab_engine::net::cellular::{numerology::Numerology, procedures::peak_downlink_kbps};
    let mut num = Numerology::of(category).ok_or_else(|| {
        PyValueError::new_err(format!(
            "cell category: unknown {category:?}; allowed: nb1, nb2, m1"
        ))
    })?;
    if !sib1 {
        // No SIB1-NB repetitions: `Numerology::sib1_frame` is then never true.
        num.sib1_reps = 0;
    }
    Ok(peak_downlink_kbps(&num, broadcast, blocks))
}

/// How long one report of `ip_bytes` takes from an idle device into the core on the cell the
/// `network` table (JSON) describes, ms (`net::topology::cell::report_latency_ms`; the report
/// arrives at a moment drawn from `seed`). A table that is not a cell's, or an invalid one,
/// raises `ValueError` with the engine's one line.
#[pyfunction]
fn cell_report_latency_ms(network: &str, ip_bytes: u32, seed: u64) -> PyResult<f64> {
    use coaplab_engine::config::NetworkConfig;
    use coaplab_engine::net::topology::cell::{report_latency_ms, CellKind};
    let table = serde_json::from_str(network).map_err(|e| PyValueError::new_err(e.to_string()))?;
    let (kind, cell) = match NetworkConfig::from_table(table).map_err(PyValueError::new_err)? {
        NetworkConfig::Nbiot(c) => (CellKind::NbIot, c),
        NetworkConfig::Ltem(c) => (CellKind::LteM, c),
        _ => {
            return Err(PyValueError::new_err(
                "network.kind: not a cell; allowed: nbiot, ltem",
            ))
        }
    };
    report_latency_ms(kind, &cell, ip_bytes, seed).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// The JSON Schema of scenario files (JSON text): every configuration key with its type,
/// default, range and allowed values, as the engine's configuration types define them.
#[pyfunction]
fn config_schema() -> String {
    coaplab_engine::config::scenario_schema()
}

/// The congestion controllers of the TCP model (`coap.cc` with transport `tcp`).
#[pyfunction]
fn tcp_controllers() -> Vec<&'static str> {
    coaplab_engine::config::tcp_controllers()
}

/// The TCP controllers whose runs trace their state (the `cc_state` table), from the registry.
#[pyfunction]
fn tcp_controllers_with_state() -> Vec<&'static str> {
    coaplab_engine::tcp::congestion::controllers_with_state()
}

/// Runs replication `replication` of one fully resolved configuration (JSON text) and returns
/// the run's result as JSON text. With `pcap_path`, writes the capture there. The GIL is
/// released while the engine runs, so threads can overlap runs.
///
/// The configuration's UDP algorithms are resolved once, here: `python:FILE:CLASS` classes
/// are loaded in this process (a Dask worker loads the file itself; the engine re-acquires
/// the GIL for every call into them, so such runs on several threads take turns on the GIL),
/// `c:LIB:NAME` libraries by the engine, which calls them without Python.
#[pyfunction]
#[pyo3(signature = (config_json, replication, pcap_path=None))]
fn run_one(
    py: Python<'_>,
    config_json: &str,
    replication: u64,
    pcap_path: Option<String>,
) -> PyResult<String> {
    let cfg = RunConfig::from_json(config_json).map_err(PyValueError::new_err)?;
    let algorithms = pyalgo::resolve(py, &cfg)?;
    let outcome = py.detach(|| -> Result<String, String> {
        let mut file = match &pcap_path {
            Some(path) => Some(std::io::BufWriter::new(
                std::fs::File::create(path)
                    .map_err(|e| format!("cannot create pcap file {path}: {e}"))?,
            )),
            None => None,
        };
        let pcap = file.as_mut().map(|f| f as &mut dyn std::io::Write);
        let result =
            run_with_algorithms(&cfg, replication, pcap, &algorithms).map_err(|e| e.to_string())?;
        if let (Some(f), Some(path)) = (file, &pcap_path) {
            // Dropping a BufWriter ignores the error of its last write (a full disk): flush
            // and sync here so that such a capture is an error, not a file cut short.
            f.into_inner()
                .map_err(|e| e.into_error())
                .and_then(|f| f.sync_all())
                .map_err(|e| format!("writing pcap: {path}: {e}"))?;
        }
        serde_json::to_string(&result).map_err(|e| e.to_string())
    });
    // The Python classes the run held are released here, with the GIL.
    drop(algorithms);
    if let Some(e) = pyalgo::take_error() {
        return Err(e);
    }
    outcome.map_err(PyValueError::new_err)
}

/// Checks a resolved configuration the way a run would (building the testbed without running
/// it), so that errors surface before anything runs.
#[pyfunction]
fn check(py: Python<'_>, config_json: &str) -> PyResult<()> {
    let cfg = RunConfig::from_json(config_json).map_err(PyValueError::new_err)?;
    let algorithms = pyalgo::resolve(py, &cfg)?;
    let checked =
        coaplab_engine::world::World::with_algorithms(&cfg, 0, false, &algorithms).map(|_| ());
    drop(algorithms);
    if let Some(e) = pyalgo::take_error() {
        return Err(e);
    }
    checked.map_err(|e| PyValueError::new_err(e.to_string()))
}

/// Asks every run in progress in this process (and every later one, until
/// [`reset_cancel`]) to stop; each returns the error "did not finish: cancelled" at its
/// next guard check (`coaplab_engine::sim::guard`).
#[pyfunction]
fn cancel_all() {
    coaplab_engine::sim::guard::cancel_all();
}

/// Clears [`cancel_all`]'s request (called before a new set of runs starts).
#[pyfunction]
fn reset_cancel() {
    coaplab_engine::sim::guard::reset_cancel_all();
}

/// (calls started, calls ended) into foreign code (`c:` functions, `python:` methods) in this
/// process: what the plug-in watchdog reads (`coaplab.execute.supervise`).
#[pyfunction]
fn plugin_calls() -> (u64, u64) {
    coaplab_engine::foreign::calls::counts()
}

/// Counts a call into a plug-in made by the Python front (importing its file, constructing or
/// resetting its class) as started; [`plugin_leave`] ends it.
#[pyfunction]
fn plugin_enter() {
    coaplab_engine::foreign::calls::enter();
}

/// Ends a call begun with [`plugin_enter`].
#[pyfunction]
fn plugin_leave() {
    coaplab_engine::foreign::calls::leave();
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(algorithms, m)?)?;
    m.add_function(wrap_pyfunction!(algorithm_info, m)?)?;
    m.add_function(wrap_pyfunction!(replay, m)?)?;
    m.add_function(wrap_pyfunction!(replay_python, m)?)?;
    m.add_function(wrap_pyfunction!(load_c_algorithm, m)?)?;
    m.add_class::<pyalgo::PyExchange>()?;
    m.add_class::<pyalgo::PyRng>()?;
    m.add_function(wrap_pyfunction!(error_profiles, m)?)?;
    m.add_function(wrap_pyfunction!(run_one, m)?)?;
    m.add_function(wrap_pyfunction!(check, m)?)?;
    m.add_function(wrap_pyfunction!(cancel_all, m)?)?;
    m.add_function(wrap_pyfunction!(reset_cancel, m)?)?;
    m.add_function(wrap_pyfunction!(plugin_calls, m)?)?;
    m.add_function(wrap_pyfunction!(plugin_enter, m)?)?;
    m.add_function(wrap_pyfunction!(plugin_leave, m)?)?;
    m.add_function(wrap_pyfunction!(config_schema, m)?)?;
    m.add_function(wrap_pyfunction!(cell_peak_downlink_kbps, m)?)?;
    m.add_function(wrap_pyfunction!(cell_report_latency_ms, m)?)?;
    m.add_function(wrap_pyfunction!(topologies, m)?)?;
    m.add_function(wrap_pyfunction!(default_clients, m)?)?;
    m.add_function(wrap_pyfunction!(tcp_controllers, m)?)?;
    m.add_function(wrap_pyfunction!(tcp_controllers_with_state, m)?)?;
    Ok(())
}
