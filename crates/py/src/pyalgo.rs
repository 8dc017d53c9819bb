//! Algorithms written in Python (`coaplab.Algorithm`, `python/coaplab/describe/algorithm.py`): a
//! [`Controller`] whose every method calls into a Python object, acquiring the GIL per call.
//!
//! Times cross the boundary as `f64` seconds. Rust → Python: `ns as f64 / 1e9` (exact for
//! every time below 2^53 ns ≈ 104 days). Python → Rust: [`Duration::from_secs_f64`], i.e.
//! rounded to the nearest nanosecond; a Python algorithm that computes in integer nanoseconds
//! and returns `ns / 1e9` therefore hands over exactly `ns` (see `docs/algorithms.md`).
//!
//! A Python exception cannot unwind through the engine, so the first one is stored in a
//! thread-local slot; from then on every call answers a safe fallback without calling Python,
//! and the caller (`run_one`, `replay`, `check`) raises the stored error when the engine returns.
//!
//! A run resolves its Python algorithms (`coap.cc = "python:FILE:CLASS"`) once, before the
//! engine builds the world ([`resolve`]): each becomes a
//! [`UdpAlgorithm::Loaded`](coaplab_engine::foreign::UdpAlgorithm) whose closure holds the
//! class's maker, so a run takes any number of them. (`c:LIB:NAME` is the engine's own:
//! `coaplab_engine::foreign::c`.)

use std::cell::{Cell, RefCell};
use std::collections::HashSet;
use std::sync::{Arc, LazyLock, Mutex};

use coaplab_cc::exchange::StateVisitor;
use coaplab_cc::registry::Registry;
use coaplab_cc::rng::Rng;
use coaplab_cc::{
    Answered, AnyAlgorithm, Config, Controller, Duration, Exchange, Instant, Sample, SampleKind,
    Value,
};
use coaplab_engine::config::RunConfig;
use coaplab_engine::foreign::calls::Call;
use coaplab_engine::foreign::{Algorithms, UdpAlgorithm};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString, PyTuple};

thread_local! {
    /// The first Python exception raised by an algorithm on this thread (see module doc).
    static ERROR: RefCell<Option<PyErr>> = const { RefCell::new(None) };
    /// Whether `ERROR` is set (checked without borrowing on every call).
    static FAILED: Cell<bool> = const { Cell::new(false) };
}

static INTERNED: LazyLock<Mutex<HashSet<&'static str>>> =
    LazyLock::new(|| Mutex::new(HashSet::new()));

/// A `'static` copy of `s`, allocated once per distinct string (state names, algorithm names).
pub fn intern(s: &str) -> &'static str {
    let mut set = INTERNED.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(&k) = set.get(s) {
        return k;
    }
    let leaked: &'static str = Box::leak(s.to_owned().into_boxed_str());
    set.insert(leaked);
    leaked
}

fn record(err: PyErr) {
    if !FAILED.with(Cell::get) {
        ERROR.with(|e| *e.borrow_mut() = Some(err));
        FAILED.with(|f| f.set(true));
    }
}

/// Clears the error slot (before a run).
pub fn clear_error() {
    ERROR.with(|e| e.borrow_mut().take());
    FAILED.with(|f| f.set(false));
}

/// The stored error, if an algorithm raised one since [`clear_error`].
pub fn take_error() -> Option<PyErr> {
    FAILED.with(|f| f.set(false));
    ERROR.with(|e| e.borrow_mut().take())
}

/// The exchange as Python sees it (read-only; times in seconds).
#[pyclass(name = "Exchange", frozen, module = "coaplab._core")]
pub struct PyExchange {
    /// When transmission 0 was sent (s).
    #[pyo3(get)]
    started: f64,
    /// When the latest transmission was sent (s).
    #[pyo3(get)]
    last_sent: f64,
    /// Retransmissions sent so far (`k` once the response arrives).
    #[pyo3(get)]
    retransmissions: u32,
    /// `T_0` (s).
    #[pyo3(get)]
    initial_timer: f64,
    /// `T_k`, the timer of the latest transmission (s).
    #[pyo3(get)]
    timer: f64,
}

#[pymethods]
impl PyExchange {
    /// Alias of `retransmissions`.
    #[getter]
    fn k(&self) -> u32 {
        self.retransmissions
    }
    fn __repr__(&self) -> String {
        format!(
            "Exchange(started={}, last_sent={}, retransmissions={}, initial_timer={}, timer={})",
            self.started, self.last_sent, self.retransmissions, self.initial_timer, self.timer
        )
    }
}

fn py_exchange(ex: &Exchange) -> PyExchange {
    PyExchange {
        started: ex.started.secs_f64(),
        last_sent: ex.last_sent.secs_f64(),
        retransmissions: ex.retransmissions,
        initial_timer: ex.initial_timer.secs_f64(),
        timer: ex.timer.secs_f64(),
    }
}

/// The caller's random stream, lent to Python for the duration of one call (dithering).
/// Using it after that call returns raises `RuntimeError`.
#[pyclass(name = "Rng", unsendable, module = "coaplab._core")]
pub struct PyRng {
    ptr: Cell<Option<*mut (dyn Rng + 'static)>>,
}

impl PyRng {
    fn with<T>(&self, f: impl FnOnce(&mut dyn Rng) -> T) -> PyResult<T> {
        match self.ptr.get() {
            // SAFETY: the pointer is set only while the `&mut dyn Rng` it was made from is
            // borrowed by `lend_rng`, on this thread (the class is unsendable), and cleared
            // before that borrow ends.
            Some(p) => Ok(f(unsafe { &mut *p })),
            None => Err(pyo3::exceptions::PyRuntimeError::new_err(
                "this Rng was lent for one call only; draw inside on_exchange_start / initial_timer",
            )),
        }
    }
}

#[pymethods]
impl PyRng {
    /// Uniform in `[lo, hi]` seconds (both inclusive) at nanosecond resolution: the same draw
    /// as the Rust algorithms' `Rng::uniform` (bounds rounded to the nearest ns).
    fn uniform(&self, lo: f64, hi: f64) -> PyResult<f64> {
        if !(lo.is_finite()
            && hi.is_finite()
            && (0.0..=1e9).contains(&lo)
            && (0.0..=1e9).contains(&hi))
        {
            return Err(PyValueError::new_err(format!(
                "Rng.uniform({lo:?}, {hi:?}): expected bounds in seconds in 0..1e9"
            )));
        }
        let (lo, hi) = (Duration::from_secs_f64(lo), Duration::from_secs_f64(hi));
        self.with(|r| r.uniform(lo, hi).secs_f64())
    }
    /// Uniform float in `[0, 1)`.
    fn unit(&self) -> PyResult<f64> {
        self.with(|r| r.unit_f64())
    }
    /// The next raw 64-bit word.
    fn next_u64(&self) -> PyResult<u64> {
        self.with(|r| r.next_u64())
    }
}

/// Runs `f` with a Python `Rng` object lending `rng`; the object is invalidated afterwards.
fn lend_rng<T>(py: Python<'_>, rng: &mut dyn Rng, f: impl FnOnce(&Bound<'_, PyRng>) -> T) -> T {
    let raw: *mut (dyn Rng + '_) = rng;
    // SAFETY: only the lifetime is erased; the pointer is cleared before `rng`'s borrow ends.
    let raw: *mut (dyn Rng + 'static) = unsafe { std::mem::transmute(raw) };
    let obj = match Bound::new(
        py,
        PyRng {
            ptr: Cell::new(Some(raw)),
        },
    ) {
        Ok(o) => o,
        Err(e) => {
            // Cannot allocate the object: report and hand over a dead one.
            record(e);
            Bound::new(
                py,
                PyRng {
                    ptr: Cell::new(None),
                },
            )
            .expect("allocating a Python object")
        }
    };
    let out = f(&obj);
    obj.borrow().ptr.set(None);
    out
}

/// A [`Controller`] implemented by a Python object (a `coaplab.Algorithm`).
pub struct PyAlgo {
    config: Config,
    obj: Py<PyAny>,
    /// `python:FILE:CLASS` (or the class name for an instance handed to `replay`).
    label: &'static str,
}

impl Clone for PyAlgo {
    /// A deep copy of the Python object (`copy.deepcopy`).
    fn clone(&self) -> Self {
        Python::attach(|py| {
            let _call = Call::enter();
            let copied = py
                .import("copy")
                .and_then(|m| m.getattr("deepcopy"))
                .and_then(|f| f.call1((self.obj.bind(py),)))
                .map(Bound::unbind)
                .unwrap_or_else(|e| {
                    record(e);
                    self.obj.clone_ref(py)
                });
            PyAlgo {
                config: self.config,
                obj: copied,
                label: self.label,
            }
        })
    }
}

fn err_in(label: &str, method: &str, msg: String) -> PyErr {
    PyValueError::new_err(format!("{label}.{method}: {msg}"))
}

fn to_secs(label: &str, method: &str, v: &Bound<'_, PyAny>) -> PyResult<Duration> {
    let secs: f64 = v.extract().map_err(|_| {
        err_in(
            label,
            method,
            format!(
                "returned {}; expected a number of seconds",
                v.repr().map_or_else(|_| "?".into(), |r| r.to_string())
            ),
        )
    })?;
    if !(secs.is_finite() && (0.0..=1e9).contains(&secs)) {
        return Err(err_in(
            label,
            method,
            format!("returned {secs:?}; expected seconds in 0..1e9"),
        ));
    }
    Ok(Duration::from_secs_f64(secs))
}

impl PyAlgo {
    /// Wraps an already configured Python object.
    pub fn new(config: Config, obj: Py<PyAny>, label: &'static str) -> Self {
        PyAlgo { config, obj, label }
    }

    /// Calls `method(args)` and converts the answer; on any error records it and returns
    /// `fallback`.
    fn call<T>(
        &self,
        method: &'static str,
        fallback: T,
        args: impl for<'py> FnOnce(Python<'py>) -> PyResult<Bound<'py, PyTuple>>,
        convert: impl for<'py> FnOnce(&Bound<'py, PyAny>) -> PyResult<T>,
    ) -> T {
        if FAILED.with(Cell::get) {
            return fallback;
        }
        Python::attach(|py| {
            let _call = Call::enter();
            let result = args(py)
                .and_then(|a| self.obj.bind(py).call_method1(method, a))
                .and_then(|v| convert(&v));
            result.unwrap_or_else(|e| {
                record(wrap(py, self.label, method, e));
                fallback
            })
        })
    }
}

impl Controller for PyAlgo {
    fn config(&self) -> &Config {
        &self.config
    }

    fn on_exchange_start(&mut self, now: Instant, outstanding: u32, rng: &mut dyn Rng) -> Exchange {
        let fallback = self.config.ack_timeout;
        if FAILED.with(Cell::get) {
            return Exchange::new(now, fallback);
        }
        let label = self.label;
        let timer = Python::attach(|py| {
            let _call = Call::enter();
            lend_rng(py, rng, |r| {
                self.obj
                    .bind(py)
                    .call_method1("on_exchange_start", (now.secs_f64(), outstanding, r))
                    .and_then(|v| to_secs(label, "on_exchange_start", &v))
            })
            .unwrap_or_else(|e| {
                record(wrap(py, label, "on_exchange_start", e));
                fallback
            })
        });
        Exchange::new(now, timer)
    }

    fn next_timer(&self, ex: &Exchange) -> Duration {
        let label = self.label;
        self.call(
            "next_timer",
            self.config.max_timer,
            |py| PyTuple::new(py, [Bound::new(py, py_exchange(ex))?]),
            |v| to_secs(label, "next_timer", v),
        )
    }

    fn on_exchange_failed(&mut self, now: Instant, ex: &Exchange) {
        self.call(
            "on_failure",
            (),
            |py| {
                PyTuple::new(
                    py,
                    [
                        now.secs_f64().into_pyobject(py)?.into_any(),
                        Bound::new(py, py_exchange(ex))?.into_any(),
                    ],
                )
            },
            |_| Ok(()),
        )
    }

    fn on_response(&mut self, now: Instant, ex: &Exchange, answered: Option<Answered>) -> Sample {
        let label = self.label;
        self.call(
            "on_response",
            Sample::NONE,
            |py| {
                let answered = match answered {
                    Some(a) => (a.ordinal, a.sent_at.secs_f64())
                        .into_pyobject(py)?
                        .into_any(),
                    None => py.None().into_bound(py),
                };
                PyTuple::new(
                    py,
                    [
                        now.secs_f64().into_pyobject(py)?.into_any(),
                        Bound::new(py, py_exchange(ex))?.into_any(),
                        answered,
                    ],
                )
            },
            |v| sample_of(label, v),
        )
    }

    fn reset(&mut self) {
        self.call("reset", (), |py| Ok(PyTuple::empty(py)), |_| Ok(()))
    }

    fn base_rto(&self) -> Duration {
        let label = self.label;
        self.call(
            "base_rto",
            self.config.ack_timeout,
            |py| Ok(PyTuple::empty(py)),
            |v| to_secs(label, "base_rto", v),
        )
    }

    fn visit_state(&self, visit: &mut StateVisitor<'_>) {
        let label = self.label;
        let pairs = self.call(
            "state",
            Vec::new(),
            |py| Ok(PyTuple::empty(py)),
            |v| state_of(label, v),
        );
        for (name, value) in pairs {
            visit(name, value);
        }
    }
}

fn sample_of(label: &str, v: &Bound<'_, PyAny>) -> PyResult<Sample> {
    if v.is_none() {
        return Ok(Sample::NONE);
    }
    let bad = || {
        err_in(
            label,
            "on_response",
            format!(
                "returned {}; expected None or (kind, rtt_s) with kind one of strong, weak, ambiguous, none",
                v.repr().map_or_else(|_| "?".into(), |r| r.to_string())
            ),
        )
    };
    let (kind, rtt): (String, Option<f64>) = v.extract().map_err(|_| bad())?;
    let kind = match kind.as_str() {
        "strong" => SampleKind::Strong,
        "weak" => SampleKind::Weak,
        "ambiguous" => SampleKind::Ambiguous,
        "none" => SampleKind::None,
        _ => return Err(bad()),
    };
    let rtt = match rtt {
        // The range of every time crossing the boundary (docs/algorithms.md): seconds in 0..1e9.
        Some(s) if s.is_finite() && (0.0..=1e9).contains(&s) => Some(Duration::from_secs_f64(s)),
        Some(_) => return Err(bad()),
        None => None,
    };
    Ok(Sample { kind, rtt })
}

fn state_of(label: &str, v: &Bound<'_, PyAny>) -> PyResult<Vec<(&'static str, Value)>> {
    let bad = |what: String| err_in(label, "state", what);
    let dict = v.cast::<PyDict>().map_err(|_| {
        bad("returned a non-dict; expected a dict of name → float, str or None".into())
    })?;
    let mut out = Vec::with_capacity(dict.len());
    for (k, val) in dict.iter() {
        let name: String = k
            .extract()
            .map_err(|_| bad("has a non-string key; state names are strings".into()))?;
        let value = if val.is_none() {
            Value::Absent
        } else if let Ok(s) = val.cast::<PyString>() {
            Value::Str(intern(&s.to_cow()?))
        } else if val.is_instance_of::<pyo3::types::PyBool>() {
            return Err(bad(format!(
                "value of {name:?} is a bool; expected a float, str or None"
            )));
        } else {
            Value::Float(
                val.extract::<f64>()
                    .map_err(|_| bad(format!("value of {name:?} is not a float, str or None")))?,
            )
        };
        out.push((intern(&name), value));
    }
    Ok(out)
}

/// The configuration as the Python `make` callables and `coaplab.describe.algorithm.bind` take it:
/// `(ack_timeout_s, ack_random_factor_permille, max_retransmit, nstart, max_timer_s,
/// clock_granularity_s)`.
pub fn config_args(c: &Config) -> (f64, u64, u32, u32, f64, f64) {
    (
        c.ack_timeout.secs_f64(),
        c.ack_random_factor_permille,
        c.max_retransmit,
        c.nstart,
        c.max_timer.secs_f64(),
        c.clock_granularity.secs_f64(),
    )
}

/// Loads `python:FILE:CLASS` for one run (`coaplab.describe.algorithm._maker`, which raises a one-line
/// `ValueError` if the file or class cannot be loaded): a value whose closure makes each
/// client's instance from the class, so a run takes any number of Python algorithms.
pub fn load(py: Python<'_>, name: &str) -> PyResult<UdpAlgorithm> {
    let maker = {
        let _call = Call::enter(); // imports the file and constructs the class once
        py.import("coaplab.describe.algorithm")?
            .getattr("_maker")?
            .call1((name,))?
            .unbind()
    };
    let label = intern(name);
    let build = move |config: &Config| -> AnyAlgorithm {
        let made = Python::attach(|py| {
            // The constructor is a plug-in call (its time limit, crates/engine/src/foreign/calls.rs).
            let constructed = {
                let _call = Call::enter();
                maker.bind(py).call1(config_args(config))
            };
            match constructed {
                Ok(obj) => Some(PyAlgo::new(*config, obj.unbind(), label)),
                Err(e) => {
                    record(wrap(py, label, "__init__", e));
                    None
                }
            }
        });
        match made {
            Some(a) => AnyAlgorithm::custom(a),
            // Reported after the run; any algorithm lets the engine proceed until then.
            None => Registry::builtin()
                .build("default", config)
                .expect("built-in default"),
        }
    };
    Ok(UdpAlgorithm::Loaded {
        // Python algorithms never ask for the Rexmit-Cnt echo.
        needs_rexmit_count: false,
        build: Arc::new(build),
    })
}

/// Resolves the UDP algorithms of `cfg` once for a run, loading its `python:` names here
/// (the GIL is held); clears this thread's error slot.
pub fn resolve(py: Python<'_>, cfg: &RunConfig) -> PyResult<Algorithms> {
    // A Python exception while loading is kept whole (its type and message) and raised as it
    // is; the engine's configuration error around it only carries its text.
    let raised: RefCell<Option<PyErr>> = RefCell::new(None);
    let loader = |name: &str| {
        load(py, name).map_err(|e| {
            let text = e.value(py).to_string();
            *raised.borrow_mut() = Some(e);
            text
        })
    };
    let resolved = Algorithms::resolve(cfg, &Registry::builtin(), Some(&loader));
    if let Some(e) = raised.into_inner() {
        return Err(e);
    }
    clear_error();
    resolved.map_err(|e| PyValueError::new_err(e.to_string()))
}

/// The error an algorithm's `method` raised, as one line naming the algorithm and method,
/// with the original exception as its cause (errors made here already name them).
fn wrap(py: Python<'_>, label: &str, method: &str, err: PyErr) -> PyErr {
    let msg = err
        .value(py)
        .str()
        .map_or_else(|_| String::new(), |s| s.to_string());
    if err.is_instance_of::<PyValueError>(py) && msg.starts_with(label) {
        return err;
    }
    // Ctrl-C inside the algorithm is the user's interrupt, not the algorithm's error.
    if err.is_instance_of::<pyo3::exceptions::PyKeyboardInterrupt>(py) {
        return err;
    }
    let ty = err
        .get_type(py)
        .name()
        .map_or_else(|_| "Exception".into(), |n| n.to_string());
    let new = PyValueError::new_err(format!(
        "{label}.{method} raised {ty}: {}",
        msg.lines().next().unwrap_or("")
    ));
    new.set_cause(py, Some(err));
    new
}
