//! Properties over random scripts, for every algorithm.

mod common;

use coaplab_cc::registry::BUILTIN;
use coaplab_cc::replay::replay;
use coaplab_cc::rng::Xoshiro256pp;
use coaplab_cc::{Algorithm, Config, Duration};
use proptest::prelude::*;

fn steps() -> impl Strategy<Value = Vec<(f64, u32, f64)>> {
    // (gap after the previous exchange's start in s, lost, rtt in s)
    prop::collection::vec((0.0f64..200.0, 0u32..25, 0.001f64..40.0), 1..30)
}

/// Makes exchanges sequential: each starts after the previous one ended.
fn sequential(
    alg: &mut Algorithm,
    raw: &[(f64, u32, f64)],
    seed: u64,
) -> Vec<coaplab_cc::replay::ReplayRecord> {
    let mut rng = Xoshiro256pp::seed_from_u64(seed);
    let mut out = Vec::new();
    let mut t = 0.0;
    for &(gap, lost, rtt) in raw {
        let s = common::script(&[(t + gap, lost, rtt)]);
        let r = replay(alg, &s, &mut rng).unwrap().remove(0);
        t = r.end.secs_f64();
        out.push(r);
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn timers_within_bounds(raw in steps(), seed in any::<u64>()) {
        // Every registry entry (the `@californium` variants cap at the shared 60 s, as
        // Californium's MAX_ACK_TIMEOUT; the drafts' CoCoA family at its own 32 s).
        for entry in BUILTIN.iter() {
            let name = entry.name;
            let config = Config { max_retransmit: 20, ..Config::default() };
            let mut alg = entry.algorithm(&config);
            let cap = if name.starts_with("cocoa") && !name.contains('@') { coaplab_cc::cocoa::COCOA_MAX_TIMER } else { config.max_timer };
            for r in sequential(&mut alg, &raw, seed) {
                prop_assert_eq!(r.timers.len() as u32, r.retransmissions + 1);
                for t in &r.timers {
                    prop_assert!(*t <= cap, "{} timer {} above cap", name, t);
                    prop_assert!(*t > Duration::ZERO, "{} timer zero", name);
                }
                if name == "default" {
                    prop_assert!((2.0..=3.0).contains(&r.timers[0].secs_f64()));
                }
            }
        }
    }

    #[test]
    fn same_seed_same_output(raw in steps(), seed in any::<u64>()) {
        for entry in BUILTIN.iter() {
            let a = sequential(&mut entry.algorithm(&Config::default()), &raw, seed);
            let b = sequential(&mut entry.algorithm(&Config::default()), &raw, seed);
            prop_assert_eq!(a, b);
        }
    }

    #[test]
    fn never_panics_on_any_script(raw in prop::collection::vec((0.0f64..1e6, 0u32..70, 0.0f64..1e5), 0..20), max in 0u32..64) {
        for entry in BUILTIN.iter() {
            let mut alg = entry.algorithm(&Config { max_retransmit: max, ..Config::default() });
            let _ = sequential(&mut alg, &raw, 1);
        }
    }
}

#[test]
fn overlap_is_an_error_naming_the_exchange() {
    let mut alg = Algorithm::from_name("default", Config::default()).unwrap();
    // #0 ends at 0.5 s; #1 starts at 0.4 s.
    let err = replay(
        &mut alg,
        &common::script(&[(0.0, 0, 0.5), (0.4, 0, 0.5)]),
        &mut coaplab_cc::rng::LowerBound,
    )
    .unwrap_err();
    let msg = err.to_string();
    assert!(msg.starts_with("exchange 1: field 'start'"), "{msg}");
}

#[test]
fn unknown_algorithm_lists_valid_names() {
    let err = Algorithm::from_name("cocoaa", Config::default())
        .unwrap_err()
        .to_string();
    assert!(err.contains("valid names: default, default-fb1"), "{err}");
    // Every registered name, in registry order (the test walks the registry: an appended
    // algorithm is listed without changing it).
    let names: Vec<&str> = coaplab_cc::registry::BUILTIN
        .iter()
        .map(|e| e.name)
        .collect();
    assert!(
        err.ends_with(&format!("valid names: {}", names.join(", "))),
        "{err}"
    );
    // A variant name builds through the registry.
    assert!(Algorithm::from_name("cocoa@californium", Config::default()).is_ok());
}
