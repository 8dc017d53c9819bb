//! CoCoA (draft-ietf-core-cocoa-03 as settled by docs/design.md §3.1) and its variants, hand-computed.

mod common;

use coaplab_cc::rng::LowerBound;
use coaplab_cc::{Algorithm, Config, Duration, Instant, SampleKind};
use common::*;

#[test]
fn first_strong_sample() {
    // R = 0.5: SRTT = 0.5, RTTVAR = 0.25, E_strong = 0.5 + 4·0.25 = 1.5 = 3R;
    // RTO = 0.5·1.5 + 0.5·2 = 1.75 s.
    let r = run("cocoa", 4, &[(0.0, 0, 0.5)]);
    timers(&r[0], &[2.0], 0);
    assert_eq!(r[0].sample.kind, SampleKind::Strong);
    close(r[0].rto_after, 1.75, 0);
    close(state(&r[0], "srtt_strong").unwrap(), 0.5, 0);
    close(state(&r[0], "rttvar_strong").unwrap(), 0.25, 0);
}

#[test]
fn weak_sample_after_one_retransmission() {
    // T_0 = 2 expires at 2 s; VBF(2 s) = ×2 → T_1 = 4. Copy 1 answered at 2.5 s; the weak
    // sample is measured from the original: R = 2.5. SRTT_w = 2.5, RTTVAR_w = 1.25,
    // E_weak = 2.5 + 1·1.25 = 3.75; RTO = 0.25·3.75 + 0.75·2 = 2.4375 s.
    let r = run("cocoa", 4, &[(0.0, 1, 0.5)]);
    timers(&r[0], &[2.0, 4.0], 0);
    assert_eq!(r[0].sample.kind, SampleKind::Weak);
    close(r[0].sample.rtt.unwrap(), 2.5, 0);
    close(r[0].rto_after, 2.4375, 0);
}

#[test]
fn weak_sample_after_two_retransmissions() {
    // Timers 2, 4 (×2), 6 (4 > 3 → ×1.5). Copy 2 sent at 6 s, answered 6.5 s: R = 6.5.
    // E_weak = 6.5 + 3.25 = 9.75; RTO = 0.25·9.75 + 0.75·2 = 3.9375 s.
    let r = run("cocoa", 4, &[(0.0, 2, 0.5)]);
    timers(&r[0], &[2.0, 4.0, 6.0], 0);
    close(r[0].rto_after, 3.9375, 0);
}

#[test]
fn no_update_after_three_retransmissions() {
    // Timers 2, 4, 6, 9; k = 3 → the measurement is discarded, RTO stays 2 s.
    let r = run("cocoa", 4, &[(0.0, 3, 0.5)]);
    timers(&r[0], &[2.0, 4.0, 6.0, 9.0], 0);
    assert_eq!(r[0].sample.kind, SampleKind::Ambiguous);
    close(r[0].rto_after, 2.0, 0);
    assert_eq!(state(&r[0], "srtt_weak"), None);
}

/// Three strong samples of 0.1 s, one second apart, drive the RTO below 1 s:
/// #0: SRTT 0.1, VAR 0.05, E 0.3, RTO = 0.15 + 1 = 1.15
/// #1: VAR = 0.75·0.05 + 0.25·0 = 0.0375, E = 0.1 + 0.15 = 0.25, RTO = 0.125 + 0.575 = 0.7
/// #2: VAR = 0.028125, E = 0.1 + 0.1125 = 0.2125, RTO = 0.10625 + 0.35 = 0.45625 (updated at 2.1 s)
/// (No aging in between: 0.9 s idle < 16·RTO.)
const SMALL_RTO: [(f64, u32, f64); 3] = [(0.0, 0, 0.1), (1.0, 0, 0.1), (2.0, 0, 0.1)];

#[test]
fn vbf_below_one_second_crossing_both_thresholds() {
    let mut steps = SMALL_RTO.to_vec();
    steps.push((3.0, 4, 0.1));
    let r = run("cocoa", 20, &steps);
    close(r[0].rto_after, 1.15, 0);
    close(r[1].rto_after, 0.7, 0);
    close(r[2].rto_after, 0.45625, 0);
    // 0.45625 < 1 → ×3 = 1.36875 ∈ [1, 3] → ×2 = 2.7375 ∈ [1, 3] → ×2 = 5.475 > 3 → ×1.5 = 8.2125.
    timers(&r[3], &[0.45625, 1.36875, 2.7375, 5.475, 8.2125], 0);
}

#[test]
fn vbf_above_three_seconds_and_32s_truncation() {
    // From 2 s: 2 → 4 → 6 → 9 → 13.5 → 20.25 → 30.375 → 45.5625→32 → 48→32 → 32.
    let r = run("cocoa", 9, &[(0.0, 10, 0.5)]);
    timers(
        &r[0],
        &[2.0, 4.0, 6.0, 9.0, 13.5, 20.25, 30.375, 32.0, 32.0, 32.0],
        0,
    );
    assert!(r[0].failed);
}

#[test]
fn aging_up_single_and_cumulative() {
    // RTO 0.45625 last updated at 2.1 s; 16·RTO = 7.3 s.
    // Start at 9.39 s: 7.29 s idle < 7.3 → no aging, T_0 = 0.45625.
    let mut steps = SMALL_RTO.to_vec();
    steps.push((9.39, 0, 0.1));
    timers(&run("cocoa", 4, &steps)[3], &[0.45625], 0);
    // Start at 9.4 s: one step: RTO = 0.9125 (reference now 9.4); 0 idle → stop.
    let mut steps = SMALL_RTO.to_vec();
    steps.push((9.4, 0, 0.1));
    timers(&run("cocoa", 4, &steps)[3], &[0.9125], 0);
    // Start at 24.0 s: step 1 at 9.4 → 0.9125; 14.6 s further idle ≥ 16·0.9125 = 14.6 → step 2:
    // RTO = 1.825 ≥ 1 → stop. Cumulative: T_0 = 1.825.
    let mut steps = SMALL_RTO.to_vec();
    steps.push((24.0, 0, 0.1));
    timers(&run("cocoa", 4, &steps)[3], &[1.825], 0);
}

#[test]
fn aging_down_single_and_cumulative() {
    // #0: lost 2 → RTO 3.9375 (see weak_sample_after_two_retransmissions), updated at 6.5 s.
    // #1 at 6.5 s (no idle): timers 3.9375, 5.90625, 8.859375; copy 2 sent at 16.34375,
    //     answered 16.84375 → weak R = 10.34375:
    //     VAR_w = 0.75·3.25 + 0.25·|6.5 − 10.34375| = 2.4375 + 0.9609375 = 3.3984375
    //     SRTT_w = 0.875·6.5 + 0.125·10.34375 = 6.98046875; E_weak = 10.37890625
    //     RTO = 0.25·10.37890625 + 0.75·3.9375 = 5.5478515625 (updated at 16.84375)
    // Aging (> 3 s, every 4·RTO): step 1 after 22.19140625 s idle (at 39.03515625):
    //     RTO = 1 + 5.5478515625/2 = 3.77392578125; step 2 after 4·3.77392578125 = 15.095703125
    //     more (at 54.130859375): RTO = 1 + 1.886962890625 = 2.886962890625 ≤ 3 → stop.
    let base = [(0.0, 2, 0.5), (6.5, 2, 0.5)];
    let r = run("cocoa", 4, &base);
    timers(&r[1], &[3.9375, 5.90625, 8.859375], 0);
    close(r[1].rto_after, 5.5478515625, 2); // ns truncation in the weighted sums
    let mut one = base.to_vec();
    one.push((50.0, 0, 0.5));
    timers(&run("cocoa", 4, &one)[2], &[3.77392578125], 2);
    let mut two = base.to_vec();
    two.push((60.0, 0, 0.5));
    timers(&run("cocoa", 4, &two)[2], &[2.886962890625], 2);
    // Just before step 1 (39.0 s < 39.035…): no aging.
    let mut none = base.to_vec();
    none.push((39.0, 0, 0.5));
    timers(&run("cocoa", 4, &none)[2], &[5.5478515625], 2);
}

#[test]
fn blind_rto_with_outstanding_exchanges() {
    // Before any sample, an exchange started while n others are outstanding uses 2 s·(n+1)
    // as its base (dithered [base, 1.5·base]; lower bound with dithering off).
    let mut alg = Algorithm::from_name(
        "cocoa",
        Config {
            nstart: 4,
            ..Config::default()
        },
    )
    .unwrap();
    let t = Instant::ZERO;
    assert_eq!(
        alg.on_exchange_start(t, 0, &mut LowerBound).timer,
        Duration::from_secs(2)
    );
    assert_eq!(
        alg.on_exchange_start(t, 1, &mut LowerBound).timer,
        Duration::from_secs(4)
    );
    assert_eq!(
        alg.on_exchange_start(t, 3, &mut LowerBound).timer,
        Duration::from_secs(8)
    );
    assert_eq!(
        alg.on_exchange_start(t, 3, &mut Highest).timer,
        Duration::from_secs(12)
    );
    // After a strong sample (R = 0.5 → RTO 1.75) the estimate is used whatever n is.
    let ex = alg.on_exchange_start(t, 0, &mut LowerBound);
    alg.on_response(Instant::from_millis(500), &ex, None);
    assert_eq!(
        alg.on_exchange_start(Instant::from_secs(1), 3, &mut LowerBound)
            .timer,
        Duration::from_millis(1750)
    );
}

#[test]
fn cocoa_s_ignores_weak_samples() {
    // Same script as weak_sample_after_one_retransmission: cocoa-s discards it, RTO stays 2 s.
    let r = run("cocoa-s", 4, &[(0.0, 1, 0.5), (10.0, 0, 0.5)]);
    assert_eq!(r[0].sample.kind, SampleKind::Ambiguous);
    close(r[0].rto_after, 2.0, 0);
    // Strong samples still count: RTO = 1.75 as in first_strong_sample.
    close(r[1].rto_after, 1.75, 0);
}

#[test]
fn cocoa_fb1_retains_backed_off_timer() {
    let r = run(
        "cocoa-fb1",
        20,
        &[
            // Timers 2, 4, 6; weak update RTO = 3.9375; retained T_2 = 6.
            (0.0, 2, 0.5),
            // T_0 = 6 (retained, not dithered); VBF(6) = 9. Copy 1 sent 16 s, answered 16.5 s.
            (10.0, 1, 0.5),
            // Retained T_1 = 9; k = 0 → back to plain CoCoA.
            (20.0, 0, 0.5),
        ],
    );
    close(r[0].rto_after, 6.0, 0);
    close(state(&r[0], "rto").unwrap(), 3.9375, 0);
    timers(&r[1], &[6.0, 9.0], 0);
    timers(&r[2], &[9.0], 0);
    assert_eq!(state(&r[2], "retained_timer"), None);
    // #1 weak R = 6.5: VAR_w = 0.75·3.25 + 0.25·0 = 2.4375, SRTT_w = 6.5, E = 8.9375,
    // RTO = 0.25·8.9375 + 0.75·3.9375 = 2.234375 + 2.953125 = 5.1875.
    // #2 first strong R = 0.5: E = 1.5; RTO = 0.75 + 2.59375 = 3.34375.
    close(r[2].rto_after, 3.34375, 0);
}

#[test]
fn cocoa_fb2_backs_off_max_of_t0_and_new_rto() {
    // T_0 = 2, T_1 = 4; weak R = 2.5 → RTO' = 2.4375. Retained = VBF(max(2, 2.4375)) =
    // 2·2.4375 = 4.875 (cocoa-fb1 would retain T_1 = 4).
    let r = run(
        "cocoa-fb2",
        20,
        &[(0.0, 1, 0.5), (10.0, 1, 0.5), (30.0, 0, 0.5)],
    );
    close(r[0].rto_after, 4.875, 0);
    // Starts with 4.875 and backs off: 4.875 > 3 → ×1.5 = 7.3125.
    timers(&r[1], &[4.875, 7.3125], 0);
    // #1: weak R = 4.875 + 0.5 = 5.375: VAR_w = 0.75·1.25 + 0.25·2.875 = 1.65625,
    // SRTT_w = 0.875·2.5 + 0.125·5.375 = 2.859375, E = 4.515625,
    // RTO' = 0.25·4.515625 + 0.75·2.4375 = 1.12890625 + 1.828125 = 2.95703125;
    // retained = VBF(max(4.875, 2.95703125)) = 7.3125.
    close(r[1].rto_after, 7.3125, 0);
    timers(&r[2], &[7.3125], 0);
}
