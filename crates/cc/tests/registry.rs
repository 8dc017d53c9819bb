//! The registry: an algorithm defined only here is registered, built by name and replayed;
//! lookups, errors and parameters of the built-ins.

mod common;

use coaplab_cc::registry::{BuildError, ParamError, ParamSpec, Params, Registry, BUILTIN};
use coaplab_cc::replay::replay;
use coaplab_cc::rng::{LowerBound, Rng};
use coaplab_cc::{
    AlgorithmName, AnyAlgorithm, Config, Controller, Duration, Entry, Instant, SampleKind,
};
use common::*;

/// The smallest algorithm: the same timer for every transmission, no RTT state. It implements
/// only `config`, `initial_timer` and `next_timer`; everything else is the trait's default.
#[derive(Clone)]
struct FixedTimer {
    config: Config,
    timer: Duration,
}

impl Controller for FixedTimer {
    fn config(&self) -> &Config {
        &self.config
    }
    fn initial_timer(&mut self, _now: Instant, _rng: &mut dyn Rng) -> Duration {
        self.timer
    }
    fn next_timer(&self, _ex: &coaplab_cc::Exchange) -> Duration {
        self.timer
    }
}

const FIXED_PARAMS: &[ParamSpec] = &[ParamSpec {
    name: "timer",
    unit: "s",
    default: 1.0,
    min: 0.001,
    max: 60.0,
    doc: "every timer",
}];

fn fixed_entry() -> Entry {
    Entry {
        name: "fixed-timer",
        summary: "the same timer for every transmission",
        source: "this test",
        needs_rexmit_count: false,
        params: FIXED_PARAMS,
        build: |c: &Config, p: &Params<'_>| {
            AnyAlgorithm::custom(FixedTimer {
                config: *c,
                timer: p.duration("timer"),
            })
        },
    }
}

#[test]
fn registered_algorithm_replays_with_hand_computed_timers() {
    let mut registry = Registry::builtin();
    registry.register(fixed_entry()).unwrap();
    assert_eq!(registry.names().count(), BUILTIN.len() + 1);
    assert_eq!(registry.names().last(), Some("fixed-timer"));
    let config = Config {
        max_retransmit: 4,
        ..Config::default()
    };
    let mut alg = registry
        .build_with("fixed-timer", &config, &[("timer", 0.5)])
        .unwrap();
    assert!(matches!(alg, AnyAlgorithm::Custom(_)));
    // #0 at 0 s, transmissions 0 and 1 lost, transmission 2 answered after 0.2 s:
    //   T_0 = 0.5 expires at 0.5 → T_1 = 0.5 expires at 1.0 → T_2 = 0.5, sent at 1.0, answered
    //   at 1.2 (< 1.5). k = 2; no RTT state → sample none; base_rto = ACK_TIMEOUT = 2 s.
    // #1 at 2 s, every transmission lost: T_0..T_4 = 0.5 each (MAX_RETRANSMIT = 4), the last
    //   expiring at 2 + 5·0.5 = 4.5 s → failed.
    let script = script(&[(0.0, 2, 0.2), (2.0, 9, 0.2)]);
    let r = replay(&mut alg, &script, &mut LowerBound).unwrap();
    timers(&r[0], &[0.5, 0.5, 0.5], 0);
    assert_eq!(r[0].retransmissions, 2);
    close(r[0].end - Instant::ZERO, 1.2, 0);
    assert_eq!(r[0].sample.kind, SampleKind::None);
    close(r[0].rto_after, 2.0, 0);
    assert!(r[0].state.is_empty());
    timers(&r[1], &[0.5; 5], 0);
    assert!(r[1].failed);
    close(r[1].end - Instant::ZERO, 4.5, 0);

    // Cloning the boxed algorithm keeps working (the simulator may clone a template).
    let copy = alg.clone();
    assert_eq!(copy.base_rto(), Duration::from_secs(2));
}

#[test]
fn default_parameter_is_used_without_override() {
    let mut registry = Registry::builtin();
    registry.register(fixed_entry()).unwrap();
    let mut alg = registry.build("fixed-timer", &Config::default()).unwrap();
    // Default timer 1 s: one loss → timers 1, 1; answer to transmission 1 (sent at 1 s) at 1.3.
    let r = replay(&mut alg, &script(&[(0.0, 1, 0.3)]), &mut LowerBound).unwrap();
    timers(&r[0], &[1.0, 1.0], 0);
    close(r[0].end - Instant::ZERO, 1.3, 0);
}

#[test]
fn duplicate_name_is_refused() {
    let mut registry = Registry::builtin();
    let mut entry = fixed_entry();
    entry.name = "cocoa";
    let err = registry.register(entry).unwrap_err();
    assert_eq!(err.to_string(), "algorithm 'cocoa' is already registered");
}

#[test]
fn unknown_name_suggests_the_closest_and_lists_all() {
    let registry = Registry::builtin();
    let err = registry.get("cocoaa").unwrap_err();
    assert_eq!(err.did_you_mean, Some("cocoa"));
    let msg = err.to_string();
    assert!(
        msg.starts_with("unknown algorithm 'cocoaa' (did you mean 'cocoa'?); valid names: default, default-fb1,"),
        "{msg}"
    );
    let all: Vec<_> = registry.names().collect();
    assert!(msg.ends_with(&all.join(", ")), "{msg}");
    // A misspelt variant: "california" → "californium" is two edits (a→u, +m).
    let variant = registry.get("cocoa@california").unwrap_err();
    assert_eq!(variant.did_you_mean, Some("cocoa@californium"));
    // "fasorrc" is one insertion from "fasor-rc" and two deletions from "fasor".
    assert_eq!(
        registry.get("fasorrc").unwrap_err().did_you_mean,
        Some("fasor-rc")
    );
    // Nothing within two edits: no suggestion (a name far from any an algorithm would take:
    // a short one such as "tcp" is two edits from a three-letter newcomer).
    let far = registry.get("xylophone-quartet").unwrap_err();
    assert_eq!(far.did_you_mean, None);
    assert!(!far.to_string().contains("did you mean"));
}

#[test]
fn parameter_errors_name_the_parameter_and_the_range() {
    let registry = Registry::builtin();
    let c = Config::default();
    match registry.build_with("cocoa", &c, &[("max_timr", 10.0)]) {
        Err(BuildError::Param(e @ ParamError::Unknown { .. })) => assert_eq!(
            e.to_string(),
            "algorithm 'cocoa' has no parameter 'max_timr'; valid parameters: max_timer"
        ),
        other => panic!("{other:?}"),
    }
    match registry.build_with("cocoa", &c, &[("max_timer", 0.0)]) {
        Err(BuildError::Param(e)) => assert_eq!(
            e.to_string(),
            "algorithm 'cocoa': parameter 'max_timer' = 0 s is out of range; allowed 0.001 to 86400 s"
        ),
        other => panic!("{other:?}"),
    }
    assert!(registry
        .build_with("cocoa", &c, &[("max_timer", f64::NAN)])
        .is_err());
    match registry.build_with("default", &c, &[("x", 1.0)]) {
        Err(e) => assert_eq!(
            e.to_string(),
            "algorithm 'default' has no parameter 'x'; it takes no parameters"
        ),
        Ok(_) => panic!("accepted"),
    }
}

#[test]
fn cocoa_max_timer_parameter_truncates() {
    // Every transmission of one exchange lost with MAX_RETRANSMIT = 6; dithering off.
    // Default cap 32 s: 2 → ×2 = 4 → ×1.5 = 6 → 9 → 13.5 → 20.25 → 30.375 (all below 32).
    // Cap 10 s: 2, 4, 6, 9, then 13.5 → 10, and 10 → 15 → 10.
    let registry = Registry::builtin();
    let c = Config {
        max_retransmit: 6,
        ..Config::default()
    };
    let s = script(&[(0.0, 9, 1.0)]);
    let mut default_cap = registry.build("cocoa", &c).unwrap();
    let r = replay(&mut default_cap, &s, &mut LowerBound).unwrap();
    timers(&r[0], &[2.0, 4.0, 6.0, 9.0, 13.5, 20.25, 30.375], 0);
    let mut capped = registry
        .build_with("cocoa", &c, &[("max_timer", 10.0)])
        .unwrap();
    let r = replay(&mut capped, &s, &mut LowerBound).unwrap();
    timers(&r[0], &[2.0, 4.0, 6.0, 9.0, 10.0, 10.0, 10.0], 0);
}

#[test]
fn builtin_order_and_names_match_algorithm_name() {
    // `AlgorithmName` names the registry's first entries (the algorithms with their own
    // `AnyAlgorithm` variant), in order; entries after them are boxed variants.
    assert!(BUILTIN.len() >= AlgorithmName::ALL.len());
    let expected = [
        "default",
        "default-fb1",
        "default-fb2",
        "cocoa",
        "cocoa-s",
        "cocoa-fb1",
        "cocoa-fb2",
        "basic-rto",
        "linux-rto",
        "peakhopper-rto",
        "fasor",
        "fasor-rc",
    ];
    let names: Vec<_> = Registry::builtin().names().take(expected.len()).collect();
    assert_eq!(names, expected);
    for entry in &BUILTIN[AlgorithmName::ALL.len()..] {
        assert!(
            entry.name.parse::<AlgorithmName>().is_err(),
            "{} has no AlgorithmName",
            entry.name
        );
        assert!(matches!(
            entry.algorithm(&Config::default()),
            AnyAlgorithm::Custom(_)
        ));
    }
    for (name, entry) in AlgorithmName::ALL.iter().zip(BUILTIN.iter()) {
        assert_eq!(name.as_str(), entry.name);
        assert_eq!(name.as_str().parse::<AlgorithmName>(), Ok(*name));
    }
    let rc: Vec<_> = BUILTIN
        .iter()
        .filter(|e| e.needs_rexmit_count)
        .map(|e| e.name)
        .collect();
    assert_eq!(rc, ["fasor-rc"]);
}

#[test]
fn every_entry_builds_and_registry_equals_algorithm_new() {
    // The same script through `Algorithm::new` and through the registry gives equal records.
    let s = script(&[(0.0, 0, 0.7), (5.0, 2, 0.9), (30.0, 0, 0.8)]);
    for name in AlgorithmName::ALL {
        let c = Config {
            max_retransmit: 20,
            ..Config::default()
        };
        let mut a = AnyAlgorithm::new(name, c);
        let mut b = Registry::builtin().build(name.as_str(), &c).unwrap();
        let ra = replay(&mut a, &s, &mut LowerBound).unwrap();
        let rb = replay(&mut b, &s, &mut LowerBound).unwrap();
        assert_eq!(ra, rb, "{name}");
    }
    // Every entry, boxed ones included, builds and replays the script.
    for entry in BUILTIN.iter() {
        let c = Config {
            max_retransmit: 20,
            ..Config::default()
        };
        let mut alg = entry.algorithm(&c);
        let r = replay(&mut alg, &s, &mut LowerBound).unwrap();
        assert_eq!(r.len(), 3, "{}", entry.name);
        {
            assert!(!entry.summary.is_empty() && !entry.source.is_empty());
            for p in entry.params {
                assert!(p.min <= p.default && p.default <= p.max, "{}", p.name);
            }
        }
    }
}
