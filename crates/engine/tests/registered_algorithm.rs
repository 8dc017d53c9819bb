//! An algorithm registered at run time (defined only in this test) runs in the simulator like a
//! built-in one: the engine takes algorithms from a registry (docs/design.md §3.1,
//! CONTRIBUTING.md "Adding an algorithm").

mod common;

use coaplab_cc::registry::{ParamSpec, Params, Registry};
use coaplab_cc::rng::Rng;
use coaplab_cc::{AnyAlgorithm, Config, Controller, Duration, Entry, Exchange, Instant};
use coaplab_engine::testbed::{run, run_with_registry};
use serde_json::json;

/// The same timer for every transmission.
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
    fn next_timer(&self, _ex: &Exchange) -> Duration {
        self.timer
    }
}

const PARAMS: &[ParamSpec] = &[ParamSpec {
    name: "timer",
    unit: "s",
    default: 0.5,
    min: 0.001,
    max: 60.0,
    doc: "every timer",
}];

fn registry() -> Registry {
    let mut r = Registry::builtin();
    r.register(Entry {
        name: "fixed-half-second",
        summary: "0.5 s for every transmission",
        source: "this test",
        needs_rexmit_count: false,
        params: PARAMS,
        build: |c: &Config, p: &Params<'_>| {
            AnyAlgorithm::custom(FixedTimer {
                config: *c,
                timer: p.duration("timer"),
            })
        },
    })
    .unwrap();
    r
}

/// One exchange on the idle star with a fixed 15 ms path delay takes 660.133334 ms
/// (tests/testbed_udp.rs: 5.333334 + 200 + 15 + 15 + 24.8 + 400 ms). A 0.5 s timer fires
/// before the response: one retransmission at 0.5 s, which is unnecessary (the original's
/// response arrives at 0.660133334 s and completes the exchange); the retransmission's own
/// response arrives 0.5 s later, at 1.160133334 s, as a duplicate.
#[test]
fn a_registered_algorithm_runs_in_the_simulator() {
    let cfg = common::config(json!({
        "link": {"path_delay_ms": [15.0, 15.0]},
        "workload": {"exchanges": 1},
        "coap": {"cc": "fixed-half-second"},
    }));
    let r = run_with_registry(&cfg, 0, None, &registry()).unwrap();
    let c = &r.clients[0];
    assert!(
        (c.fct_s.unwrap() - 0.660_133_334).abs() < 1e-9,
        "{:?}",
        c.fct_s
    );
    assert_eq!(r.retransmission_histogram, vec![0, 1]);
    assert_eq!((c.retransmissions, c.unnecessary_retransmissions), (1, 1));
    assert_eq!(c.duplicate_responses, 1);
    assert!(
        (r.sim_time_s - 1.160_133_334).abs() < 1e-9,
        "{}",
        r.sim_time_s
    );
    // Without the registration the name is unknown, and the error says which names exist.
    let err = run(&cfg, 0, None).unwrap_err().to_string();
    assert!(
        err.starts_with("coap.cc: unknown algorithm 'fixed-half-second'"),
        "{err}"
    );
    assert!(err.contains("cocoa-fb2"), "{err}");
}
