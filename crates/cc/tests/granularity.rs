//! The clock-granularity floor `G` (RFC 6298 §2.4; `config::CLOCK_GRANULARITY` = 1 ms): a zero
//! RTT sample never arms a zero timer, for any algorithm.

mod common;

use coaplab_cc::config::CLOCK_GRANULARITY;
use coaplab_cc::registry::BUILTIN;
use coaplab_cc::replay::replay;
use coaplab_cc::rng::LowerBound;
use coaplab_cc::{Algorithm, AlgorithmName, Config, Duration};
use common::*;

/// Zero-RTT samples, strong (k = 0) and after retransmissions (k = 1, 2, 3, 5), then more
/// exchanges that start from whatever the algorithm learnt. Starts are 400 s apart: no exchange
/// of ≤ 6 transmissions with timers ≤ 60 s lasts longer.
const ZERO_RTT: [(f64, u32, f64); 8] = [
    (0.0, 0, 0.0),
    (400.0, 0, 0.0),
    (800.0, 1, 0.0),
    (1200.0, 2, 0.0),
    (1600.0, 0, 0.0),
    (2000.0, 3, 0.0),
    (2400.0, 5, 0.0),
    (2800.0, 0, 0.0),
];

#[test]
fn no_timer_below_granularity_after_zero_samples() {
    assert_eq!(CLOCK_GRANULARITY, Duration::from_millis(1));
    for entry in BUILTIN.iter() {
        let name = entry.name;
        let config = Config {
            max_retransmit: 20,
            ..Config::default()
        };
        let mut alg = entry.algorithm(&config);
        let records = replay(&mut alg, &script(&ZERO_RTT), &mut LowerBound).unwrap();
        for (i, r) in records.iter().enumerate() {
            assert!(!r.failed, "{name} #{i} failed");
            for t in &r.timers {
                assert!(*t >= CLOCK_GRANULARITY, "{name} #{i}: timer {t} below G");
            }
        }
    }
}

#[test]
fn without_the_floor_basic_rto_arms_zero_timers() {
    // Why the floor exists: B-RTO's next T_0 is dithered in [R, 1.5·R] = [0, 0] after R = 0.
    let config = Config {
        clock_granularity: Duration::ZERO,
        ..Config::default()
    };
    let r = replay(
        &mut Algorithm::new(AlgorithmName::BasicRto, config),
        &script(&[(0.0, 0, 0.0), (1.0, 0, 0.0)]),
        &mut LowerBound,
    )
    .unwrap();
    assert_eq!(r[1].timers, [Duration::ZERO]);
}

#[test]
fn floored_timers_still_back_off() {
    // basic-rto: #0 R = 0 → base 0 → T_0 = max(0, G) = 1 ms. #1 (two losses, RTT 0):
    // T_0 = 1 ms, T_1 = 2·1 = 2 ms, T_2 = 4 ms; transmission 2 sent at 1 + 0.003 s and
    // answered at once → k = 2, weak sample R = 3 ms from the original.
    let r = run("basic-rto", 4, &[(0.0, 0, 0.0), (1.0, 2, 0.0)]);
    timers(&r[1], &[0.001, 0.002, 0.004], 0);
    close(r[1].sample.rtt.unwrap(), 0.003, 0);

    // fasor: #0 R = 0 → SRTT = RTTVAR = 0, FastRTO = 0; F dithered in [0 + 0, 0 + 0] = 0,
    // floored to 1 ms. #1 (one loss, RTT 0), state FAST: T_0 = F = 1 ms, T_1 = 2F = 2 ms.
    let r = run("fasor", 4, &[(0.0, 0, 0.0), (1.0, 1, 0.0)]);
    timers(&r[1], &[0.001, 0.002], 0);

    // peakhopper-rto: #0 R = 0 → RTO = 1.75·0 = 0 → T_0 = 1 ms; Karn's binary backoff from it.
    let r = run("peakhopper-rto", 4, &[(0.0, 0, 0.0), (1.0, 2, 0.0)]);
    timers(&r[1], &[0.001, 0.002, 0.004], 0);
}
