//! `basic-rto`, `linux-rto`, `peakhopper-rto` (docs/design.md §3.1), hand-computed.

mod common;

use coaplab_cc::SampleKind;
use common::*;

#[test]
fn basic_rto_samples_and_retention() {
    let steps = [
        (0.0, 0, 0.6),  // R = 0.6 (strong)
        (5.0, 1, 0.5),  // T_0 = 0.6 expires 5.6; T_1 = 1.2; copy 1 answered 6.1 → R = 1.1 (weak)
        (10.0, 3, 0.5), // T = 1.1, 2.2, 4.4, 8.8; k = 3 → no sample, retained 8.8
        (30.0, 0, 0.5), // T_0 = 8.8 (retained); R = 0.5
        (40.0, 0, 0.5), // T_0 = 0.5
    ];
    let r = run("basic-rto", 20, &steps);
    timers(&r[0], &[2.0], 0);
    close(r[0].rto_after, 0.6, 0);
    timers(&r[1], &[0.6, 1.2], 0);
    assert_eq!(r[1].sample.kind, SampleKind::Weak);
    close(r[1].rto_after, 1.1, 0);
    timers(&r[2], &[1.1, 2.2, 4.4, 8.8], 0);
    assert_eq!(r[2].sample.kind, SampleKind::Ambiguous);
    close(r[2].rto_after, 8.8, 0);
    timers(&r[3], &[8.8], 0);
    timers(&r[4], &[0.5], 0);
    // Dithered in [R, 1.5·R]: the highest draw after R = 0.6 is 0.9.
    let r = run_with(
        "basic-rto",
        20,
        &[(0.0, 0, 0.6), (5.0, 0, 0.6)],
        &mut Highest,
    );
    timers(&r[1], &[0.9], 0);
}

#[test]
fn linux_rto_rising_and_falling_samples() {
    let steps = [(0.0, 0, 0.5), (5.0, 0, 1.0), (10.0, 0, 0.2), (15.0, 0, 0.5)];
    let r = run("linux-rto", 4, &steps);
    // #0 R = 0.5: SRTT 0.5, mdev 0.25, mdev_max = rttvar = max(0.25, 0.05) = 0.25;
    //    RTO = 0.5 + 4·0.25 = 1.5.
    timers(&r[0], &[2.0], 0);
    close(r[0].rto_after, 1.5, 0);
    // #1 R = 1.0 (rising): err = +0.5; SRTT = 0.5625; mdev = 0.75·0.25 + 0.25·0.5 = 0.3125 >
    //    mdev_max → mdev_max = rttvar = 0.3125; flight step: mdev_max = rttvar → no decay;
    //    mdev_max := 0.05. RTO = 0.5625 + 1.25 = 1.8125.
    timers(&r[1], &[1.5], 0);
    close(r[1].rto_after, 1.8125, 0);
    // #2 R = 0.2 (falling, |err| = 0.3625 > mdev 0.3125): mdev = 31/32·0.3125 + 1/32·0.3625
    //    = 0.302734375 + 0.011328125 = 0.3140625; SRTT = 0.5625 − 0.3625/8 = 0.5171875;
    //    mdev > mdev_max (0.05) → mdev_max = 0.3140625, rttvar = max(0.3125, 0.3140625);
    //    RTO = 0.5171875 + 4·0.3140625 = 1.7734375.
    close(r[2].rto_after, 1.7734375, 2);
    // #3 R = 0.5 (|err| = 0.0171875 < mdev): mdev = 0.75·0.3140625 + 0.25·0.0171875 = 0.23984375;
    //    SRTT = 0.5171875 − 0.0171875/8 = 0.5150390625; mdev_max = 0.23984375 < rttvar
    //    0.3140625 → rttvar −= (0.3140625 − 0.23984375)/4 = 0.0185546875 → 0.2955078125;
    //    RTO = 0.5150390625 + 1.18203125 = 1.6970703125.
    close(r[3].rto_after, 1.6970703125, 4);
    close(state(&r[3], "rttvar").unwrap(), 0.2955078125, 2);
}

#[test]
fn linux_rto_50ms_floor() {
    // R = 40 ms: mdev = 20 ms, rttvar = max(20 ms, 50 ms) = 50 ms; RTO = 0.04 + 0.2 = 0.24 s.
    let r = run("linux-rto", 4, &[(0.0, 0, 0.04)]);
    close(r[0].rto_after, 0.24, 0);
}

#[test]
fn linux_rto_karn_retention() {
    let r = run(
        "linux-rto",
        4,
        &[(0.0, 0, 0.5), (5.0, 1, 0.5), (10.0, 0, 0.5)],
    );
    // RTO 1.5 after #0. #1: T = 1.5, 3 (binary); ambiguous → the backed-off 3 s is kept.
    timers(&r[1], &[1.5, 3.0], 0);
    assert_eq!(r[1].sample.kind, SampleKind::Ambiguous);
    close(r[1].rto_after, 3.0, 0);
    // #2 starts with the retained 3 s; its strong R = 0.5: err 0, mdev = 0.1875 (< mdev_max
    // 0.25 kept from the first sample); flight step: 0.25 < rttvar 0.25? no; RTO = 0.5 + 1.0.
    timers(&r[2], &[3.0], 0);
    close(r[2].rto_after, 1.5, 0);
}

#[test]
fn peakhopper_first_sample_jump_and_decay() {
    let r = run(
        "peakhopper-rto",
        4,
        &[(0.0, 0, 0.4), (5.0, 0, 0.6), (10.0, 0, 0.6), (15.0, 0, 0.6)],
    );
    // #0: RTO = 1.75·0.4 = 0.7.
    close(r[0].rto_after, 0.7, 0);
    // #1 jump up R = 0.6, R_prev = 0.4: δ = 0.2/0.6 = 1/3; B = min(max(2/3, 0), 1) = 2/3;
    //    RTT_max = 0.6; RTO = max(0.7·23/24 = 0.6708, (1 + 2/3)·0.6 = 1.0, 0.7, 0.6 + 0.1) = 1.0.
    timers(&r[1], &[0.7], 0);
    close(r[1].rto_after, 1.0, 2);
    // #2 R = 0.6: δ = 0; B = 23/24·2/3 = 0.638…; RTO = max(1.0·23/24 = 0.9583,
    //    1.6389·0.6 = 0.98333, 0.7, 0.7) = 0.983333…
    close(r[2].rto_after, 0.983_333_333, 2);
    // #3: B = 0.6389·23/24 = 0.61227; RTO = max(0.98333·23/24 = 0.94236, 1.61227·0.6 = 0.967361…)
    close(r[3].rto_after, 0.967_361_111, 2);
}

#[test]
fn peakhopper_retains_after_retransmission() {
    let r = run(
        "peakhopper-rto",
        4,
        &[(0.0, 0, 0.4), (5.0, 1, 0.4), (10.0, 0, 0.4)],
    );
    // RTO 0.7; #1: T = 0.7, 1.4; ambiguous → 1.4 kept; #2 starts at 1.4.
    timers(&r[1], &[0.7, 1.4], 0);
    timers(&r[2], &[1.4], 0);
}
