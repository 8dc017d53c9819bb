//! FASOR (draft-ietf-core-fasor-02 as settled by docs/design.md §3.1) and `fasor-rc`, hand-computed.

mod common;

use coaplab_cc::SampleKind;
use common::*;

/// Before any sample: F dithered in [2 + (2/3)/4, 2 + 2/3] = [2.1667, 2.6667] s (SRTT taken
/// as 2/3 s = 666 666 667 ns; /4 truncates to 166 666 666 ns).
#[test]
fn initial_dither_bounds() {
    timers(&run("fasor", 4, &[(0.0, 0, 1.0)])[0], &[2.166_666_666], 0);
    timers(
        &run_with("fasor", 4, &[(0.0, 0, 1.0)], &mut Highest)[0],
        &[2.666_666_667],
        0,
    );
}

#[test]
fn all_states_series_and_transitions() {
    let steps = [
        (0.0, 0, 1.0),  // #0 FAST, k = 0
        (5.0, 1, 1.0),  // #1 FAST, k = 1 → FAST_SLOW_FAST
        (10.0, 2, 1.0), // #2 FAST_SLOW_FAST, k = 2 → SLOW_FAST
        (20.0, 1, 1.0), // #3 SLOW_FAST, k = 1 → SLOW_FAST
        (40.0, 0, 1.0), // #4 SLOW_FAST, k = 0 → FAST
        (50.0, 0, 1.0), // #5 FAST
    ];
    let r = run("fasor", 20, &steps);
    // #0: F = 2.1667; strong R = 1: SRTT 1, RTTVAR = R/8 = 0.125, FastRTO = 1 + 0.5 = 1.5 = 1.5R.
    timers(&r[0], &[2.166_666_666], 0);
    assert_eq!(r[0].sample.kind, SampleKind::Strong);
    close(r[0].rto_after, 1.5, 0);
    close(state(&r[0], "rttvar").unwrap(), 0.125, 0);
    assert_eq!(state_str(&r[0], "state"), "FAST");
    // #1: F = FastRTO + SRTT/4 = 1.75 (dithering off). FAST: F, 2F. Copy 1 sent at 6.75,
    //     answered 7.75 → SlowRTO = 1.5·(7.75 − 5) = 4.125; FastRTO untouched.
    timers(&r[1], &[1.75, 3.5], 0);
    assert_eq!(r[1].sample.kind, SampleKind::Ambiguous);
    close(state(&r[1], "slow_rto").unwrap(), 4.125, 0);
    close(r[1].rto_after, 1.5, 0);
    assert_eq!(state_str(&r[1], "state"), "FAST_SLOW_FAST");
    // #2 FAST_SLOW_FAST: F, max(SlowRTO, 2F) = max(4.125, 3.5), 2F = 3.5. Copy 2 sent at
    //     10 + 1.75 + 4.125 = 15.875, answered 16.875 → SlowRTO = 1.5·6.875 = 10.3125.
    timers(&r[2], &[1.75, 4.125, 3.5], 0);
    close(state(&r[2], "slow_rto").unwrap(), 10.3125, 0);
    assert_eq!(state_str(&r[2], "state"), "SLOW_FAST");
    // #3 SLOW_FAST: SlowRTO, F. Copy 1 at 30.3125, answered 31.3125 → SlowRTO = 1.5·11.3125.
    timers(&r[3], &[10.3125, 1.75], 0);
    close(state(&r[3], "slow_rto").unwrap(), 16.96875, 0);
    assert_eq!(state_str(&r[3], "state"), "SLOW_FAST");
    // #4 SLOW_FAST: T_0 = 16.96875; k = 0 → strong R = 1: RTTVAR = 0.75·0.125 = 0.09375,
    //     FastRTO = 1 + 0.375 = 1.375; → FAST.
    timers(&r[4], &[16.96875], 0);
    close(r[4].rto_after, 1.375, 0);
    assert_eq!(state_str(&r[4], "state"), "FAST");
    // #5 FAST: F = 1.375 + 0.25 = 1.625.
    timers(&r[5], &[1.625], 0);
}

#[test]
fn fast_slow_fast_returns_to_fast_on_k0_and_fast_series_doubles() {
    let r = run(
        "fasor",
        20,
        &[(0.0, 0, 1.0), (5.0, 1, 1.0), (10.0, 0, 1.0), (20.0, 3, 1.0)],
    );
    assert_eq!(state_str(&r[1], "state"), "FAST_SLOW_FAST");
    // #2 in FAST_SLOW_FAST answered at once: T_0 = F = 1.75 → FAST.
    timers(&r[2], &[1.75], 0);
    assert_eq!(state_str(&r[2], "state"), "FAST");
    // #2's strong R = 1: RTTVAR = 0.09375, FastRTO = 1.375, F = 1.625; FAST: F, 2F, 4F, 8F.
    timers(&r[3], &[1.625, 3.25, 6.5, 13.0], 0);
}

#[test]
fn fasor_rc_samples_the_answered_transmission() {
    let r = run(
        "fasor-rc",
        20,
        &[(0.0, 0, 1.0), (5.0, 1, 0.5), (10.0, 0, 0.5)],
    );
    close(r[0].rto_after, 1.5, 0);
    // #1: base = max(FastRTO 1.5, previous sample 1.0) = 1.5, F = 1.75; copy 1 sent 6.75,
    // answered 7.25: a strong sample of 0.5 s from copy 1 (not 2.25 from the original):
    // RTTVAR = 0.75·0.125 + 0.25·|1 − 0.5| = 0.21875; SRTT = 0.875 + 0.0625 = 0.9375;
    // FastRTO = 0.9375 + 0.875 = 1.8125. SlowRTO from the original = 1.5·2.25 = 3.375.
    timers(&r[1], &[1.75, 3.5], 0);
    assert_eq!(r[1].sample.kind, SampleKind::Strong);
    close(r[1].sample.rtt.unwrap(), 0.5, 0);
    close(r[1].rto_after, 1.8125, 0);
    close(state(&r[1], "slow_rto").unwrap(), 3.375, 0);
    // Transitions still follow k: FAST → FAST_SLOW_FAST.
    assert_eq!(state_str(&r[1], "state"), "FAST_SLOW_FAST");
    // #2: F = 1.8125 + 0.9375/4 = 2.046875 (the max(FastRTO, 0.5) base is FastRTO).
    timers(&r[2], &[2.046_875], 0);
    // Plain fasor on the same script takes no sample from #1.
    let plain = run("fasor", 20, &[(0.0, 0, 1.0), (5.0, 1, 0.5)]);
    assert_eq!(plain[1].sample.kind, SampleKind::Ambiguous);
    close(plain[1].rto_after, 1.5, 0);
}
