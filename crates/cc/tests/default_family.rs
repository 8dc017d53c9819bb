//! `default`, `default-fb1`, `default-fb2` (RFC 7252 §4.2 and docs/design.md §3.1), hand-computed.

mod common;

use coaplab_cc::rng::Xoshiro256pp;
use coaplab_cc::SampleKind;
use common::*;

#[test]
fn t0_dither_bounds() {
    // Dithering off: the lower bound ACK_TIMEOUT = 2 s.
    let r = run("default", 4, &[(0.0, 0, 0.5)]);
    timers(&r[0], &[2.0], 0);
    // The highest draw: ACK_TIMEOUT·ACK_RANDOM_FACTOR = 2·1.5 = 3 s.
    let r = run_with("default", 4, &[(0.0, 0, 0.5)], &mut Highest);
    timers(&r[0], &[3.0], 0);
    // Seeded: always within [2, 3] s, and not always the same value.
    let mut rng = Xoshiro256pp::seed_from_u64(42);
    let steps: Vec<_> = (0..200).map(|i| (f64::from(i) * 10.0, 0, 0.5)).collect();
    let r = run_with("default", 4, &steps, &mut rng);
    assert!(r.iter().all(|x| (2.0..=3.0).contains(&secs(x.timers[0]))));
    assert!(r.iter().any(|x| x.timers[0] != r[0].timers[0]));
}

#[test]
fn doubling_cap_and_failure() {
    // lost 10 > MAX_RETRANSMIT 7: timers 2, 4, 8, 16, 32, 64→60 (cap), 60, 60; 8 transmissions,
    // then the exchange fails when the last timer expires at 2+4+8+16+32+60+60+60 = 242 s.
    let r = run("default", 7, &[(0.0, 10, 0.5)]);
    timers(&r[0], &[2.0, 4.0, 8.0, 16.0, 32.0, 60.0, 60.0, 60.0], 0);
    assert!(r[0].failed);
    assert_eq!(r[0].retransmissions, 7);
    assert_eq!(r[0].sample.kind, SampleKind::None);
    close(r[0].end - r[0].start, 242.0, 0);
    // RFC default MAX_RETRANSMIT 4: 5 transmissions (2+4+8+16+32 = 62 s), then failure.
    let r = run("default", 4, &[(0.0, 5, 0.5)]);
    timers(&r[0], &[2.0, 4.0, 8.0, 16.0, 32.0], 0);
    assert!(r[0].failed);
    close(r[0].end - r[0].start, 62.0, 0);
    // lost = MAX_RETRANSMIT: the last copy is answered: 2+4+8+16 = 30 s, + 0.5 s.
    let r = run("default", 4, &[(0.0, 4, 0.5)]);
    assert!(!r[0].failed);
    close(r[0].end - r[0].start, 30.5, 0);
}

#[test]
fn a_late_response_causes_a_real_retransmission() {
    // rtt 2.5 s > T_0 = 2 s: the timer expires at 2 s and copy 1 is sent (T_1 = 4 s); the
    // response to copy 0 arrives at 2.5 s, so k = 1 although nothing was lost.
    let r = run("default", 4, &[(0.0, 0, 2.5)]);
    timers(&r[0], &[2.0, 4.0], 0);
    assert_eq!(r[0].retransmissions, 1);
    close(r[0].end - r[0].start, 2.5, 0);
}

#[test]
fn fb1_retains_then_releases() {
    let r = run(
        "default-fb1",
        20,
        &[
            // k = 2: timers 2, 4, 8 → retained T_2 = 8 s. Copy 2 sent at 6 s, answered 6.5 s.
            (0.0, 2, 0.5),
            // Starts with the retained 8 s (not dithered); it expires and doubles: 16 s.
            (10.0, 1, 0.5),
            // k = 1 retained T_1 = 16 s; now k = 0 → release.
            (30.0, 0, 0.5),
            // Fresh: dithered [2, 3] s → 2 s with dithering off.
            (40.0, 0, 0.5),
        ],
    );
    timers(&r[0], &[2.0, 4.0, 8.0], 0);
    close(r[0].rto_after, 8.0, 0);
    timers(&r[1], &[8.0, 16.0], 0);
    close(r[1].rto_after, 16.0, 0);
    timers(&r[2], &[16.0], 0);
    close(r[2].rto_after, 2.0, 0);
    timers(&r[3], &[2.0], 0);
}

#[test]
fn fb2_halves_until_below_three_seconds() {
    let r = run(
        "default-fb2",
        20,
        &[
            (0.0, 3, 0.5),   // 2, 4, 8, 16 → retained 16
            (40.0, 0, 0.5),  // T_0 = 16; k = 0 → 16/2 = 8 ≥ 3 → retained 8
            (60.0, 0, 0.5),  // T_0 = 8; → 4 ≥ 3 → retained 4
            (80.0, 0, 0.5),  // T_0 = 4; → 2 < 3 → discarded
            (100.0, 1, 0.5), // fresh T_0 = 2, then 4 → retained 4
            (110.0, 1, 0.5), // retained 4 expires → 8: continued backoff
        ],
    );
    close(r[0].rto_after, 16.0, 0);
    timers(&r[1], &[16.0], 0);
    close(r[1].rto_after, 8.0, 0);
    timers(&r[2], &[8.0], 0);
    close(r[2].rto_after, 4.0, 0);
    timers(&r[3], &[4.0], 0);
    close(r[3].rto_after, 2.0, 0);
    timers(&r[4], &[2.0, 4.0], 0);
    timers(&r[5], &[4.0, 8.0], 0);
    close(r[5].rto_after, 8.0, 0);
}

#[test]
fn plain_default_keeps_no_state() {
    let r = run("default", 20, &[(0.0, 3, 0.5), (40.0, 0, 0.5)]);
    timers(&r[1], &[2.0], 0);
    close(r[0].rto_after, 2.0, 0);
}

#[test]
fn a_failed_exchange_retains_its_last_timer_in_fb1() {
    // MAX_RETRANSMIT 2, lost 3: timers 2, 4, 8, failure at 14 s; fb1 retains T_2 = 8 s.
    let r = run("default-fb1", 2, &[(0.0, 3, 0.5), (20.0, 0, 0.5)]);
    assert!(r[0].failed);
    timers(&r[1], &[8.0], 0);
}
