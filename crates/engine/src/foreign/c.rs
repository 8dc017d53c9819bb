//! Algorithms in C behind the C API (`coap.cc = "c:LIB:NAME"`, docs/c-api.md): the library is
//! loaded once per process with [`libloading`] and each client's decisions are direct calls of
//! its functions (`crates/cc-ffi/include/coaplab_cc.h`), no Python on the decision path.
//!
//! The adapter keeps exactly the semantics the Python adapter (`coaplab.capi`, ctypes, before this module) had, so
//! that results stay bit-identical (issue #33, item 4):
//!
//! | [`Controller`] event | C call |
//! |---|---|
//! | `on_exchange_start` | `coaplab_cc_exchange_start(now, outstanding, rng.next_u64())` |
//! | `on_timeout`, `k < MAX_RETRANSMIT` | `coaplab_cc_timeout(last_sent + T_k)` → `RETRANSMIT` |
//! | `on_timeout`, `k = MAX_RETRANSMIT` | `coaplab_cc_timeout(now)` → `FAILED` |
//! | `on_response` | `coaplab_cc_response(now, ordinal or -1, sent_at or 0)` |
//! | `base_rto` | `coaplab_cc_base_rto` |
//! | `reset` (and creation) | `coaplab_cc_init(name, config)` |
//!
//! Each client owns one `coaplab_cc_state` and one `coaplab_cc_exchange` per exchange in flight
//! (caller-owned plain data, docs/c-api.md "No allocation across the boundary"), found again by
//! the exchange's start, `T_0`, retransmissions, last send and timer. The state stays opaque:
//! the algorithm reports no state (`visit_state` is empty). Times cross as integer
//! nanoseconds. A negative return code (or an answer the C API does not allow) is the first
//! error of the run ([`Failure`]): from then on every call answers a safe fallback without
//! calling C, and the run ends with that error, worded as `coaplab.capi._check` worded it.

use std::collections::HashMap;
use std::ffi::{c_char, CString};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, LazyLock, Mutex};

use super::calls::Call;
use coaplab_cc::rng::Rng;
use coaplab_cc::{
    Answered, Config, Controller, Duration, Exchange, Instant, Sample, SampleKind, TimeoutDecision,
};

/// The prefix of a C algorithm's name: `c:LIB:NAME`.
pub const PREFIX: &str = "c:";

/// `COAPLAB_CC_STATE_WORDS` / `COAPLAB_CC_EXCHANGE_WORDS` (coaplab_cc.h).
const STATE_WORDS: usize = 64;
const EXCHANGE_WORDS: usize = 16;
/// `COAPLAB_CC_RETRANSMIT` / `COAPLAB_CC_FAILED` / `COAPLAB_CC_ANSWERED_UNKNOWN` (coaplab_cc.h).
const RETRANSMIT: i32 = 1;
const FAILED: i32 = 0;
/// `COAPLAB_CC_OK` (coaplab_cc.h).
const OK: i32 = 0;
const ANSWERED_UNKNOWN: i64 = -1;

/// `coaplab_cc_state`.
#[derive(Clone, Copy)]
#[repr(C)]
struct CState {
    words: [u64; STATE_WORDS],
}

/// `coaplab_cc_exchange`.
#[derive(Clone, Copy)]
#[repr(C)]
struct CExchange {
    words: [u64; EXCHANGE_WORDS],
}

/// `coaplab_cc_config`.
#[repr(C)]
struct CConfig {
    ack_timeout_ns: u64,
    ack_random_factor_permille: u64,
    max_retransmit: u32,
    nstart: u32,
    max_timer_ns: u64,
    clock_granularity_ns: u64,
}

/// `coaplab_cc_sample`.
#[repr(C)]
struct CSample {
    kind: u32,
    rtt_ns: u64,
}

type InitFn = unsafe extern "C" fn(*mut CState, *const c_char, *const CConfig) -> i32;
type ExchangeStartFn =
    unsafe extern "C" fn(*mut CState, u64, u32, u64, *mut CExchange, *mut u64) -> i32;
type TimeoutFn = unsafe extern "C" fn(*mut CState, u64, *mut CExchange, *mut u64) -> i32;
type ResponseFn =
    unsafe extern "C" fn(*mut CState, u64, *const CExchange, i64, u64, *mut CSample) -> i32;
type BaseRtoFn = unsafe extern "C" fn(*const CState, *mut u64) -> i32;
type NeedsRexmitCountFn = unsafe extern "C" fn(*const c_char) -> i32;

/// A loaded library's C API functions (kept loaded for the life of the process, as Python kept
/// its ctypes libraries: a client may hold the functions until the process ends).
struct Library {
    init: InitFn,
    exchange_start: ExchangeStartFn,
    timeout: TimeoutFn,
    response: ResponseFn,
    base_rto: BaseRtoFn,
    /// Optional in the C API (docs/c-api.md).
    needs_rexmit_count: Option<NeedsRexmitCountFn>,
    /// Owns the mapping the function pointers point into.
    _lib: libloading::Library,
}

/// The `COAPLAB_CC_ERR_*` name of a negative return code (coaplab_cc.h).
fn error_name(rc: i32) -> &'static str {
    match rc {
        -1 => "COAPLAB_CC_ERR_NULL",
        -2 => "COAPLAB_CC_ERR_UNKNOWN_ALGORITHM",
        -3 => "COAPLAB_CC_ERR_NOT_INITIALIZED",
        -4 => "COAPLAB_CC_ERR_BAD_CONFIG",
        -5 => "COAPLAB_CC_ERR_OVERLAP",
        -6 => "COAPLAB_CC_ERR_BUFFER_TOO_SMALL",
        -7 => "COAPLAB_CC_ERR_INVALID",
        _ => "an unknown error",
    }
}

/// `"{spec}: {call} returned {rc} ({name})"`: the wording of `coaplab.capi._check`, which
/// `tests/test_capi.py` and users' scripts know.
fn returned(spec: &str, call: &str, rc: i32) -> String {
    format!("{spec}: {call} returned {rc} ({})", error_name(rc))
}

/// Python's `repr` of a string (the messages keep the wording the Python loader had).
fn repr(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for ch in s.chars() {
        match ch {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

/// A one-line load error naming the spec and what is expected.
fn bad(spec: &str, what: &str) -> String {
    format!(
        "{}: {what}; expected c:LIB:NAME with LIB a shared library exporting the C API of \
         docs/c-api.md and NAME an algorithm its coaplab_cc_init accepts",
        repr(spec)
    )
}

/// Libraries by canonical path, loaded once per process.
static LIBRARIES: LazyLock<Mutex<HashMap<std::path::PathBuf, Arc<Library>>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

fn library(spec: &str, path: &str) -> Result<Arc<Library>, String> {
    let file = Path::new(path);
    if !file.exists() {
        return Err(bad(spec, &format!("library {} not found", repr(path))));
    }
    if !file.is_file() {
        return Err(bad(spec, &format!("{} is not a regular file", repr(path))));
    }
    let key = file
        .canonicalize()
        .map_err(|e| bad(spec, &format!("{} cannot be resolved ({e})", repr(path))))?;
    let mut libraries = LIBRARIES.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(lib) = libraries.get(&key) {
        return Ok(lib.clone());
    }
    // SAFETY: loading runs the library's initializers: the user's code, chosen by the user
    // (docs/c-api.md: "load only code you trust"), as a Python algorithm's file is.
    let lib = {
        let _call = Call::enter(); // the library's initializers run here
        unsafe { libloading::Library::new(&key) }
    }
    .map_err(|e| {
        let text = e.to_string();
        bad(
            spec,
            &format!(
                "{} cannot be loaded as a shared library ({})",
                repr(path),
                text.lines().next().unwrap_or("")
            ),
        )
    })?;
    let missing = |name: &str| bad(spec, &format!("{} does not export {name}", repr(path)));
    // SAFETY: each symbol is the C API function of that name, whose signature is the one of
    // coaplab_cc.h that the type spells (the library claims the C API by being named here).
    let library = unsafe {
        Library {
            init: *lib
                .get::<InitFn>(b"coaplab_cc_init\0")
                .map_err(|_| missing("coaplab_cc_init"))?,
            exchange_start: *lib
                .get::<ExchangeStartFn>(b"coaplab_cc_exchange_start\0")
                .map_err(|_| missing("coaplab_cc_exchange_start"))?,
            timeout: *lib
                .get::<TimeoutFn>(b"coaplab_cc_timeout\0")
                .map_err(|_| missing("coaplab_cc_timeout"))?,
            response: *lib
                .get::<ResponseFn>(b"coaplab_cc_response\0")
                .map_err(|_| missing("coaplab_cc_response"))?,
            base_rto: *lib
                .get::<BaseRtoFn>(b"coaplab_cc_base_rto\0")
                .map_err(|_| missing("coaplab_cc_base_rto"))?,
            needs_rexmit_count: lib
                .get::<NeedsRexmitCountFn>(b"coaplab_cc_needs_rexmit_count\0")
                .ok()
                .map(|f| *f),
            _lib: lib,
        }
    };
    let library = Arc::new(library);
    libraries.insert(key, library.clone());
    Ok(library)
}

/// The first error of a run's C algorithms (see the module doc); shared by every instance
/// built from one [`CAlgorithmSpec`].
#[derive(Default)]
pub struct Failure {
    set: AtomicBool,
    message: Mutex<Option<String>>,
}

impl Failure {
    fn is_set(&self) -> bool {
        self.set.load(Ordering::Relaxed)
    }

    fn record(&self, message: String) {
        let mut slot = self.message.lock().unwrap_or_else(|e| e.into_inner());
        if slot.is_none() {
            *slot = Some(message);
            self.set.store(true, Ordering::Relaxed);
        }
    }

    /// The recorded error, if any (it stays recorded).
    pub fn message(&self) -> Option<String> {
        self.message
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

/// `c:LIB:NAME`, loaded and checked: what builds each client's [`CAlgorithm`].
pub struct CAlgorithmSpec {
    spec: String,
    name: CString,
    lib: Arc<Library>,
    /// The library's `coaplab_cc_needs_rexmit_count(NAME) == 1` (FASOR's Rexmit-Cnt echo).
    pub needs_rexmit_count: bool,
    failure: Arc<Failure>,
}

impl CAlgorithmSpec {
    /// Loads `spec` (`c:LIB:NAME`; the library once per process) and checks that
    /// `coaplab_cc_init` accepts `NAME` with the default configuration. Errors are one line
    /// naming what is wrong (the wording of the former Python loader, `tests/test_capi.py`).
    pub fn load(spec: &str) -> Result<Self, String> {
        let body = spec.strip_prefix(PREFIX);
        let (path, name) = match body.and_then(|b| b.rsplit_once(':')) {
            Some((path, name)) if !path.is_empty() && !name.is_empty() => (path, name),
            _ => return Err(bad(spec, "not of the form c:LIB:NAME")),
        };
        let lib = library(spec, path)?;
        let c_name = CString::new(name)
            .map_err(|_| bad(spec, &format!("{} holds a NUL character", repr(name))))?;
        let needs_rexmit_count = match lib.needs_rexmit_count {
            // SAFETY: a NUL-terminated string, as coaplab_cc.h asks.
            Some(f) => {
                let _call = Call::enter();
                (unsafe { f(c_name.as_ptr()) }) == 1
            }
            None => false,
        };
        let loaded = CAlgorithmSpec {
            spec: spec.to_owned(),
            name: c_name,
            lib,
            needs_rexmit_count,
            failure: Arc::new(Failure::default()),
        };
        let mut state = CState {
            words: [0; STATE_WORDS],
        };
        let rc = loaded.init(&mut state, &Config::default());
        if rc < 0 {
            return Err(bad(
                spec,
                &format!(
                    "{} was refused by coaplab_cc_init ({rc} ({}))",
                    repr(name),
                    error_name(rc)
                ),
            ));
        }
        Ok(loaded)
    }

    /// The first error any instance built from this spec met.
    pub fn failure(&self) -> &Arc<Failure> {
        &self.failure
    }

    fn init(&self, state: &mut CState, c: &Config) -> i32 {
        let config = CConfig {
            ack_timeout_ns: c.ack_timeout.nanos(),
            ack_random_factor_permille: c.ack_random_factor_permille,
            max_retransmit: c.max_retransmit,
            nstart: c.nstart,
            max_timer_ns: c.max_timer.nanos(),
            clock_granularity_ns: c.clock_granularity.nanos(),
        };
        // SAFETY: `state` and `config` are valid for the call; `name` is NUL-terminated.
        let _call = Call::enter();
        // SAFETY: as above.
        unsafe { (self.lib.init)(state, self.name.as_ptr(), &config) }
    }

    /// One client's instance, initialized with `config` (an error is the run's [`Failure`]).
    pub fn algorithm(self: &Arc<Self>, config: &Config) -> CAlgorithm {
        let mut alg = CAlgorithm {
            spec: self.clone(),
            config: *config,
            state: CState {
                words: [0; STATE_WORDS],
            },
            in_flight: Vec::new(),
        };
        alg.reset();
        alg
    }
}

/// One exchange in flight: its C exchange and what identifies it (module doc).
#[derive(Clone, Copy)]
struct InFlight {
    started: u64,
    initial_timer: u64,
    retransmissions: u32,
    last_sent: u64,
    timer: u64,
    exchange: CExchange,
}

/// One client's algorithm in C (see the module doc).
#[derive(Clone)]
pub struct CAlgorithm {
    spec: Arc<CAlgorithmSpec>,
    config: Config,
    state: CState,
    in_flight: Vec<InFlight>,
}

impl CAlgorithm {
    fn failed(&self) -> bool {
        self.spec.failure.is_set()
    }

    fn fail(&self, message: String) {
        self.spec.failure.record(message);
    }

    /// `rc` if the C API allows it for `call` (`COAPLAB_CC_OK`, or for `coaplab_cc_timeout`
    /// also `COAPLAB_CC_RETRANSMIT`), else records the error: a negative code by its
    /// `COAPLAB_CC_ERR_*` name (`_check`'s wording), any other code with what is allowed.
    fn check(&self, call: &str, rc: i32) -> Option<i32> {
        let allowed = if call == "coaplab_cc_timeout" {
            RETRANSMIT
        } else {
            OK
        };
        if rc < 0 {
            self.fail(returned(&self.spec.spec, call, rc));
            None
        } else if rc > allowed {
            self.fail(format!(
                "{}: {call} returned {rc}; the C API allows {} or a negative COAPLAB_CC_ERR_*",
                self.spec.spec,
                if allowed == RETRANSMIT {
                    "COAPLAB_CC_RETRANSMIT (1), COAPLAB_CC_FAILED (0)"
                } else {
                    "COAPLAB_CC_OK (0)"
                }
            ));
            None
        } else {
            Some(rc)
        }
    }

    /// A timer the C side returned, as the Python adapter handed it over: seconds in 0..1e9,
    /// raised to `Config::clock_granularity` (1 ms) if below it, as every algorithm's timers are
    /// (`AnyAlgorithm`; a Python algorithm's the same), so that the exchange is found again.
    fn timer(&self, method: &str, ns: u64) -> Option<Duration> {
        if ns > 1_000_000_000 * 1_000_000_000 {
            self.fail(format!(
                "{}.{method}: returned {:?}; expected seconds in 0..1e9",
                self.spec.spec,
                ns as f64 / 1e9
            ));
            return None;
        }
        Some(Duration::from_nanos(ns).max(self.config.clock_granularity))
    }

    /// The index of `ex` among the exchanges in flight.
    fn find(&self, ex: &Exchange) -> Option<usize> {
        let found = self.in_flight.iter().position(|e| {
            (e.started, e.initial_timer) == (ex.started.nanos(), ex.initial_timer.nanos())
                && (e.retransmissions, e.last_sent, e.timer)
                    == (ex.retransmissions, ex.last_sent.nanos(), ex.timer.nanos())
        });
        if found.is_none() {
            self.fail(format!(
                "{}: no exchange in flight matches Exchange(started={}, last_sent={}, retransmissions={}, initial_timer={}, timer={})",
                self.spec.spec,
                ex.started.secs_f64(),
                ex.last_sent.secs_f64(),
                ex.retransmissions,
                ex.initial_timer.secs_f64(),
                ex.timer.secs_f64()
            ));
        }
        found
    }

    /// `T_{k+1}` from `coaplab_cc_timeout` at the expiry `last_sent + T_k` (fallback: the cap).
    fn next(&mut self, ex: &Exchange) -> Duration {
        let fallback = self.config.max_timer;
        if self.failed() {
            return fallback;
        }
        let Some(i) = self.find(ex) else {
            return fallback;
        };
        let now = ex.last_sent.nanos() + ex.timer.nanos();
        let mut timer = 0u64;
        let lib = &self.spec.lib;
        let e = &mut self.in_flight[i];
        // SAFETY: the state was initialized by `coaplab_cc_init` (or the call refuses it), the
        // exchange was written by `coaplab_cc_exchange_start`; both are ours for the call.
        let rc = {
            let _call = Call::enter();
            unsafe { (lib.timeout)(&mut self.state, now, &mut e.exchange, &mut timer) }
        };
        let Some(rc) = self.check("coaplab_cc_timeout", rc) else {
            return fallback;
        };
        if rc != RETRANSMIT {
            self.fail(format!(
                "{}: coaplab_cc_timeout answered FAILED after {} retransmissions, below MAX_RETRANSMIT {}",
                self.spec.spec, ex.retransmissions, self.config.max_retransmit
            ));
            return fallback;
        }
        let timer = self.timer("next_timer", timer).unwrap_or(fallback);
        let e = &mut self.in_flight[i];
        e.retransmissions = ex.retransmissions + 1;
        e.last_sent = now;
        e.timer = timer.nanos();
        timer
    }
}

impl Controller for CAlgorithm {
    fn config(&self) -> &Config {
        &self.config
    }

    fn on_exchange_start(&mut self, now: Instant, outstanding: u32, rng: &mut dyn Rng) -> Exchange {
        let fallback = Exchange::new(now, self.config.ack_timeout);
        if self.failed() {
            return fallback;
        }
        // The client's next 64-bit word: the one word a built-in algorithm's single draw per
        // exchange start uses, so `c:libcoaplab_cc_ffi.so:cocoa` dithers as `cocoa` does.
        let random = rng.next_u64();
        let mut exchange = CExchange {
            words: [0; EXCHANGE_WORDS],
        };
        let mut timer = 0u64;
        // SAFETY: as in `next`; `exchange` and `timer` are ours for the call.
        let call = Call::enter();
        let rc = unsafe {
            (self.spec.lib.exchange_start)(
                &mut self.state,
                now.nanos(),
                outstanding,
                random,
                &mut exchange,
                &mut timer,
            )
        };
        drop(call);
        if self.check("coaplab_cc_exchange_start", rc).is_none() {
            return fallback;
        }
        let Some(timer) = self.timer("on_exchange_start", timer) else {
            return fallback;
        };
        self.in_flight.push(InFlight {
            started: now.nanos(),
            initial_timer: timer.nanos(),
            retransmissions: 0,
            last_sent: now.nanos(),
            timer: timer.nanos(),
            exchange,
        });
        Exchange::new(now, timer)
    }

    /// RFC 7252 §4.2 as the trait's default does it, with `T_{k+1}` and the failure from C.
    fn on_timeout(&mut self, now: Instant, ex: &mut Exchange) -> TimeoutDecision {
        if ex.retransmissions >= self.config.max_retransmit {
            self.on_exchange_failed(now, ex);
            return TimeoutDecision::Fail;
        }
        let timer = self.next(ex);
        ex.retransmissions += 1;
        ex.timer = timer;
        ex.last_sent = now;
        TimeoutDecision::Retransmit { timer }
    }

    fn on_exchange_failed(&mut self, now: Instant, ex: &Exchange) {
        if self.failed() {
            return;
        }
        let Some(i) = self.find(ex) else { return };
        let mut e = self.in_flight.remove(i);
        let mut timer = 0u64;
        // SAFETY: as in `next`.
        let call = Call::enter();
        let rc = unsafe {
            (self.spec.lib.timeout)(&mut self.state, now.nanos(), &mut e.exchange, &mut timer)
        };
        drop(call);
        if let Some(rc) = self.check("coaplab_cc_timeout", rc) {
            if rc != FAILED {
                self.fail(format!(
                    "{}: coaplab_cc_timeout answered RETRANSMIT after MAX_RETRANSMIT {} retransmissions",
                    self.spec.spec, self.config.max_retransmit
                ));
            }
        }
    }

    fn on_response(&mut self, now: Instant, ex: &Exchange, answered: Option<Answered>) -> Sample {
        if self.failed() {
            return Sample::NONE;
        }
        let Some(i) = self.find(ex) else {
            return Sample::NONE;
        };
        let e = self.in_flight.remove(i);
        let (ordinal, sent_at) = match answered {
            Some(a) => (i64::from(a.ordinal), a.sent_at.nanos()),
            None => (ANSWERED_UNKNOWN, 0),
        };
        let mut sample = CSample { kind: 0, rtt_ns: 0 };
        // SAFETY: as in `next`; `sample` is ours for the call.
        let call = Call::enter();
        let rc = unsafe {
            (self.spec.lib.response)(
                &mut self.state,
                now.nanos(),
                &e.exchange,
                ordinal,
                sent_at,
                &mut sample,
            )
        };
        drop(call);
        if self.check("coaplab_cc_response", rc).is_none() {
            return Sample::NONE;
        }
        let kind = match sample.kind {
            0 => SampleKind::Strong,
            1 => SampleKind::Weak,
            2 => SampleKind::Ambiguous,
            3 => return Sample::NONE,
            other => {
                self.fail(format!(
                    "{}: coaplab_cc_response wrote sample kind {other}; allowed 0-3",
                    self.spec.spec
                ));
                return Sample::NONE;
            }
        };
        if sample.rtt_ns > 1_000_000_000 * 1_000_000_000 {
            self.fail(format!(
                "{}: coaplab_cc_response wrote an RTT of {:?} s; expected seconds in 0..1e9",
                self.spec.spec,
                sample.rtt_ns as f64 / 1e9
            ));
            return Sample::NONE;
        }
        Sample {
            kind,
            rtt: Some(Duration::from_nanos(sample.rtt_ns)),
        }
    }

    /// A fresh `coaplab_cc_init` (the Python adapter's `reset`), forgetting the exchanges.
    fn reset(&mut self) {
        if self.failed() {
            return;
        }
        self.state = CState {
            words: [0; STATE_WORDS],
        };
        self.in_flight.clear();
        let spec = self.spec.clone();
        let rc = spec.init(&mut self.state, &self.config);
        self.check("coaplab_cc_init", rc);
    }

    fn base_rto(&self) -> Duration {
        let fallback = self.config.ack_timeout;
        if self.failed() {
            return fallback;
        }
        let mut rto = 0u64;
        // SAFETY: as in `next` (read-only state).
        let rc = {
            let _call = Call::enter();
            unsafe { (self.spec.lib.base_rto)(&self.state, &mut rto) }
        };
        if self.check("coaplab_cc_base_rto", rc).is_none() {
            return fallback;
        }
        self.timer("base_rto", rto).unwrap_or(fallback)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_quoted_as_python_quotes_them() {
        assert_eq!(repr("c:x.so:cocoa"), "'c:x.so:cocoa'");
        assert_eq!(repr("it's"), "\"it's\"");
        assert_eq!(repr("a\\b"), "'a\\\\b'");
    }

    #[test]
    fn bad_names_are_one_line_before_any_loading() {
        // The wording of the former Python loader (tests/test_capi.py checks it end to end).
        let err = |spec: &str| CAlgorithmSpec::load(spec).err().expect("refused");
        assert!(err("c:cocoa")
            .starts_with("'c:cocoa': not of the form c:LIB:NAME; expected c:LIB:NAME"));
        assert!(err("c::cocoa").contains("not of the form c:LIB:NAME"));
        assert!(err("c:x.so:").contains("not of the form c:LIB:NAME"));
        assert!(
            err("c:nope.so:cocoa").starts_with("'c:nope.so:cocoa': library 'nope.so' not found")
        );
        assert!(err("c:.:cocoa").starts_with("'c:.:cocoa': '.' is not a regular file"));
        assert_eq!(err("c:nope.so:cocoa").lines().count(), 1);
    }

    #[test]
    fn return_codes_are_worded_as_the_c_api_names_them() {
        assert_eq!(
            returned("c:l.so:x", "coaplab_cc_timeout", -3),
            "c:l.so:x: coaplab_cc_timeout returned -3 (COAPLAB_CC_ERR_NOT_INITIALIZED)"
        );
        assert_eq!(error_name(-99), "an unknown error");
    }
}
