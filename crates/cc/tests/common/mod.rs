//! Shared helpers: replay with dithering off (exact), and approximate comparisons where the
//! integer-nanosecond arithmetic truncates.
#![allow(dead_code)]

use coaplab_cc::replay::{replay, ReplayRecord, ScriptedExchange};
use coaplab_cc::rng::{LowerBound, Rng};
use coaplab_cc::{Config, Duration, Instant, Value};

/// An RNG that always returns the largest word: `uniform(lo, hi)` yields `hi`.
pub struct Highest;
impl Rng for Highest {
    fn next_u64(&mut self) -> u64 {
        u64::MAX
    }
}

/// `(start s, lost, rtt s)` triples.
pub fn script(steps: &[(f64, u32, f64)]) -> Vec<ScriptedExchange> {
    steps
        .iter()
        .map(|&(start, lost, rtt)| ScriptedExchange {
            start: Instant::from_secs_f64(start),
            lost,
            rtt: Duration::from_secs_f64(rtt),
        })
        .collect()
}

pub fn run_with(
    name: &str,
    max_retransmit: u32,
    steps: &[(f64, u32, f64)],
    rng: &mut dyn Rng,
) -> Vec<ReplayRecord> {
    // Through the registry, so that every entry (the boxed variants too) can be replayed.
    let mut alg = coaplab_cc::Registry::builtin()
        .build(
            name,
            &Config {
                max_retransmit,
                ..Config::default()
            },
        )
        .unwrap();
    replay(&mut alg, &script(steps), rng).unwrap()
}

/// Replay with dithering off.
pub fn run(name: &str, max_retransmit: u32, steps: &[(f64, u32, f64)]) -> Vec<ReplayRecord> {
    run_with(name, max_retransmit, steps, &mut LowerBound)
}

pub fn secs(d: Duration) -> f64 {
    d.secs_f64()
}

/// Asserts `got ≈ want` within `tol_ns` nanoseconds.
#[track_caller]
pub fn close(got: Duration, want_s: f64, tol_ns: u64) {
    let want = Duration::from_secs_f64(want_s);
    assert!(
        got.abs_diff(want).nanos() <= tol_ns,
        "got {got}, want {want_s} s (±{tol_ns} ns)"
    );
}

#[track_caller]
pub fn timers(r: &ReplayRecord, want_s: &[f64], tol_ns: u64) {
    assert_eq!(
        r.timers.len(),
        want_s.len(),
        "timers {:?} vs {want_s:?}",
        r.timers.iter().map(|t| t.secs_f64()).collect::<Vec<_>>()
    );
    for (got, want) in r.timers.iter().zip(want_s) {
        close(*got, *want, tol_ns);
    }
}

/// A named duration in the algorithm's state report.
#[track_caller]
pub fn state(r: &ReplayRecord, name: &str) -> Option<Duration> {
    match r
        .state
        .iter()
        .find(|(n, _)| *n == name)
        .unwrap_or_else(|| panic!("no state {name}"))
        .1
    {
        Value::Duration(d) => Some(d),
        Value::Absent => None,
        other => panic!("{name} is {other:?}"),
    }
}

#[track_caller]
pub fn state_str(r: &ReplayRecord, name: &str) -> &'static str {
    match r.state.iter().find(|(n, _)| *n == name).unwrap().1 {
        Value::Str(s) => s,
        other => panic!("{name} is {other:?}"),
    }
}
