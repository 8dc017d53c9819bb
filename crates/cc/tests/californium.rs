//! Vectors for the `@californium` variants (`crates/cc/src/californium.rs`), every value
//! computed by hand from Californium's source (eclipse-californium, `californium-core`,
//! `org.eclipse.californium.core.network.stack` and its `congestioncontrol` package, 3.x/4.0
//! code). Java rounding: `Math.round(x)` = `floor(x + 0.5)`; `(long)`/`(int)` truncate.
//! All in integer milliseconds, as Californium computes.

mod common;

use coaplab_cc::registry::Registry;
use coaplab_cc::replay::replay;
use coaplab_cc::rng::LowerBound;
use coaplab_cc::{Algorithm, Config, Duration, Instant, SampleKind, Value};
use common::*;

fn ms(x: u64) -> Duration {
    Duration::from_millis(x)
}

fn build(name: &str, config: Config) -> Algorithm {
    Registry::builtin().build(name, &config).unwrap()
}

fn with_ack_timeout(ack_ms: u64) -> Config {
    Config {
        ack_timeout: ms(ack_ms),
        max_retransmit: 4,
        ..Config::default()
    }
}

/// Strong samples 1 s, then 1.2 s.
#[test]
fn cocoa_strong_samples_swapped_gains_and_100ms_granularity() {
    let r = run("cocoa@californium", 4, &[(0.0, 0, 1.0), (10.0, 0, 1.2)]);
    // #0: RemoteEndpoint starts at ACK_TIMEOUT 2000; updateRetransmissionTimeout: T_0 =
    //     getRTO() = 2000, dithered (lower bound) 2000, max(500, ·) = 2000.
    //     Rto.apply(1000) first sample: RTT = 1000, RTTVAR = 1000/2 = 500,
    //     RTO_strong = 1000 + max(100, 4·500) = 3000.
    //     Cocoa.processRttMeasurement: round(0.5·3000 + 0.5·2000) = 2500.
    timers(&r[0], &[2.0], 0);
    assert_eq!(r[0].sample.kind, SampleKind::Strong);
    close(r[0].rto_after, 2.5, 0);
    // #1: T_0 = 2500 (no aging between 1 and 3 s). Rto.apply(1200):
    //     RTTVAR = round(0.875·500 + 0.125·|1000 − 1200|) = round(437.5 + 25) = 463,
    //     RTT = round(0.75·1000 + 0.25·1200) = 1050 (ALPHA on the RTT, BETA on RTTVAR:
    //     RFC 6298 has them the other way round and gives 1025 / 425),
    //     RTO_strong = 1050 + max(100, 4·463 = 1852) = 2902;
    //     overall = round(0.5·2902 + 0.5·2500) = 2701.
    timers(&r[1], &[2.5], 0);
    close(state(&r[1], "srtt_strong").unwrap(), 1.05, 0);
    close(state(&r[1], "rttvar_strong").unwrap(), 0.463, 0);
    close(r[1].rto_after, 2.701, 0);
    // The drafts' cocoa on the same script: E = 1.025 + 4·0.425 = 2.725, RTO = 0.5·2.725 +
    // 0.5·(0.5·3 + 0.5·2 = 2.5) = 2.6125 s.
    let d = run("cocoa", 4, &[(0.0, 0, 1.0), (10.0, 0, 1.2)]);
    close(d[1].rto_after, 2.6125, 0);
}

/// The 100 ms granularity `G` of `Rto.apply` for a small RTTVAR.
#[test]
fn cocoa_granularity_floor_of_k_rttvar() {
    // R = 40 ms: RTT = 40, RTTVAR = 20, RTO_strong = 40 + max(100, 80) = 140;
    // overall = round(0.5·140 + 0.5·2000) = 1070 (without G: 40 + 80 = 120 → 1060).
    let r = run("cocoa@californium", 4, &[(0.0, 0, 0.04)]);
    close(r[0].rto_after, 1.07, 0);
}

/// A weak sample (k = 1) and `Math.round`'s half-up; `cocoa-s` ignores it.
#[test]
fn weak_sample_and_cocoa_strong_only() {
    // T_0 = 2000 lost; the VBF is fixed from T_0 = 2000 ∈ [1000, 3000] → ACK_TIMEOUT_SCALE 2:
    // T_1 = (int)(2·2000) = 4000. Answered 0.5 s after the retransmission (sent at 2 s):
    // RTT from the original (Exchange.startTransmissionRtt only when failed count = 0) =
    // 2500 ms, k = 1 → WEAK (getExchangeEstimatorState).
    // Rto(KWEAK = 1).apply(2500): RTT 2500, RTTVAR 1250, RTO_weak = 2500 + max(100, 1250) =
    // 3750; overall = round(0.25·3750 + 0.75·2000) = round(2437.5) = 2438.
    let r = run("cocoa@californium", 4, &[(0.0, 1, 0.5)]);
    timers(&r[0], &[2.0, 4.0], 0);
    assert_eq!(r[0].sample.kind, SampleKind::Weak);
    close(r[0].sample.rtt.unwrap(), 2.5, 0);
    close(r[0].rto_after, 2.438, 0);
    // COCOA_STRONG (Cocoa(.., strong = true)): processRttMeasurement returns on a weak type.
    let s = run("cocoa-s@californium", 4, &[(0.0, 1, 0.5)]);
    timers(&s[0], &[2.0, 4.0], 0);
    assert_eq!(s[0].sample.kind, SampleKind::Ambiguous);
    close(s[0].rto_after, 2.0, 0);
}

/// `CongestionControlLayer.updateRetransmissionTimeout`: the factor is fixed from `T_0`
/// (`Cocoa.calculateVBF`) and every timer is capped at min(MAX_ACK_TIMEOUT 60 s, MAX_RTO 60 s).
#[test]
fn cocoa_vbf_fixed_per_exchange_and_60s_cap() {
    // T_0 = 2000 → scale 2 throughout: 2, 4, 8, 16, 32, (64 →) 60, (120 →) 60 s.
    let r = run("cocoa@californium", 6, &[(0.0, 9, 0.1)]);
    timers(&r[0], &[2.0, 4.0, 8.0, 16.0, 32.0, 60.0, 60.0], 0);
    assert!(r[0].failed);
    // The drafts' cocoa (factor on the current timer, 32 s truncation): 2, 4, 6, 9, 13.5,
    // 20.25, 30.375 s.
    let d = run("cocoa", 6, &[(0.0, 9, 0.1)]);
    timers(&d[0], &[2.0, 4.0, 6.0, 9.0, 13.5, 20.25, 30.375], 0);
}

/// `MIN_RTO` = 500 ms floors `T_0`; VBF ×3 below 1 s, kept for the whole exchange.
#[test]
fn min_rto_floor_and_vbf_low() {
    // ACK_TIMEOUT 300 ms: getRTO() = 300, dithered (lower bound) 300, max(500, 300) = 500.
    // calculateVBF(500) = VBFLOW 3 (500 < 1000): 500, 1500, 4500, 13500 ms.
    let mut alg = build("cocoa@californium", with_ack_timeout(300));
    let r = replay(&mut alg, &script(&[(0.0, 9, 0.1)]), &mut LowerBound).unwrap();
    timers(&r[0], &[0.5, 1.5, 4.5, 13.5, 40.5], 0);
    // The drafts' cocoa from 0.3 s: 0.3, ×3 = 0.9, ×3 = 2.7, ×2 = 5.4, ×1.5 = 8.1 s.
    let mut alg = Algorithm::from_name("cocoa", with_ack_timeout(300)).unwrap();
    let d = replay(&mut alg, &script(&[(0.0, 9, 0.1)]), &mut LowerBound).unwrap();
    timers(&d[0], &[0.3, 0.9, 2.7, 5.4, 8.1], 0);
}

/// `ReliabilityLayer.getRandomTimeout`: `timeout + rand.nextInt((int)(timeout·1.5) −
/// timeout + 1)`; the VBF is chosen from the dithered `T_0`, not from the RTO.
#[test]
fn dithering_in_whole_ms_and_vbf_from_the_dithered_timer() {
    // ACK_TIMEOUT 2200: delta = 3300 − 2200 + 1 = 1101. The largest draw (Highest:
    // ⌊(2⁶⁴ − 1)·1101 / 2⁶⁴⌋ = 1100) gives T_0 = 3300 > 3000 → VBFHIGH 1.5:
    // 3300, (int)(1.5·3300) = 4950, (int)(1.5·4950) = 7425 ms.
    let mut alg = build("cocoa@californium", with_ack_timeout(2200));
    let r = replay(&mut alg, &script(&[(0.0, 2, 0.1)]), &mut Highest).unwrap();
    timers(&r[0], &[3.3, 4.95, 7.425], 0);
    // The lowest draw: T_0 = 2200 ∈ [1000, 3000] → 2: 2200, 4400, 8800 ms.
    let mut alg = build("cocoa@californium", with_ack_timeout(2200));
    let r = replay(&mut alg, &script(&[(0.0, 2, 0.1)]), &mut LowerBound).unwrap();
    timers(&r[0], &[2.2, 4.4, 8.8], 0);
    // The other algorithms are not dithered (CongestionControlLayer: setDithering(false);
    // only Cocoa sets true): basic-rto@californium's T_0 is 2 s whatever the draw.
    let mut alg = build("basic-rto@californium", Config::default());
    let r = replay(&mut alg, &script(&[(0.0, 0, 0.1)]), &mut Highest).unwrap();
    timers(&r[0], &[2.0], 0);
}

/// `CongestionControlLayer.sendRequest`: `prepareRequest` arms `T_0` before `checkAging`
/// runs, and aging needs strictly more than 16·RTO (`Cocoa.checkAging`).
#[test]
fn cocoa_aging_after_t0_strictly_longer_than_16_rto() {
    // ACK_TIMEOUT 800. #0 at 0: T_0 = 800. R = 300: RTT 300, RTTVAR 150, RTO_strong =
    // 300 + max(100, 600) = 900; overall = round(0.5·900 + 0.5·800) = 850, updated at 0.3 s.
    // #1 at 13.901 s: 13 601 ms since the update > 16·850 = 13 600. T_0 is armed first from
    // the un-aged 850; then checkAging: 850 < 1000 → rto = 1700 (then 13 601 − 13 600 = 1 ms
    // left, no second step). R = 300: RTTVAR = round(0.875·150 + 0) = round(131.25) = 131,
    // RTT = round(0.75·300 + 0.25·300) = 300, RTO_strong = 300 + 4·131 = 824;
    // overall = round(0.5·824 + 0.5·1700) = 1262.
    // #2 at 20 s: T_0 = 1262.
    let steps = [(0.0, 0, 0.3), (13.901, 0, 0.3), (20.0, 0, 0.3)];
    let mut alg = build("cocoa@californium", with_ack_timeout(800));
    let r = replay(&mut alg, &script(&steps), &mut LowerBound).unwrap();
    timers(&r[0], &[0.8], 0);
    close(r[0].rto_after, 0.85, 0);
    timers(&r[1], &[0.85], 0);
    close(r[1].rto_after, 1.262, 0);
    timers(&r[2], &[1.262], 0);
    // At 13.9 s exactly 13 600 ms have passed: not more than 16·850, no aging; #1's update:
    // round(0.5·824 + 0.5·850) = 837 → #2's T_0 = 837.
    let steps = [(0.0, 0, 0.3), (13.9, 0, 0.3), (20.0, 0, 0.3)];
    let mut alg = build("cocoa@californium", with_ack_timeout(800));
    let r = replay(&mut alg, &script(&steps), &mut LowerBound).unwrap();
    close(r[1].rto_after, 0.837, 0);
    timers(&r[2], &[0.837], 0);
}

/// `BasicRto.processRttMeasurement`: `RTO = R + R/2` on strong and weak samples, not dithered,
/// floored at 500 ms; `k ≥ 3` changes nothing and no backed-off timer is retained.
#[test]
fn basic_rto_vectors() {
    let steps = [
        (0.0, 0, 0.2),
        (10.0, 1, 0.4),
        (30.0, 0, 0.1),
        (40.0, 3, 0.1),
        (60.0, 0, 0.1),
    ];
    let r = run("basic-rto@californium", 4, &steps);
    // #0: T_0 = 2000; R = 200 → 200 + 100 = 300.
    timers(&r[0], &[2.0], 0);
    close(r[0].rto_after, 0.3, 0);
    // #1: T_0 = max(500, 300) = 500; lost → ×2 = 1000; answered 0.4 s after the
    //     retransmission at 10.5 s: R = 900 from the original, weak → 900 + 450 = 1350.
    timers(&r[1], &[0.5, 1.0], 0);
    assert_eq!(r[1].sample.kind, SampleKind::Weak);
    close(r[1].rto_after, 1.35, 0);
    // #2: T_0 = 1350 (no dithering); R = 100 → 150.
    timers(&r[2], &[1.35], 0);
    close(r[2].rto_after, 0.15, 0);
    // #3: T_0 = max(500, 150) = 500, 1000, 2000, 4000; k = 3 → NONE: RTO stays 150.
    timers(&r[3], &[0.5, 1.0, 2.0, 4.0], 0);
    assert_eq!(r[3].sample.kind, SampleKind::Ambiguous);
    close(r[3].rto_after, 0.15, 0);
    // #4: no retention of the backed-off 4 s: T_0 = max(500, 150) = 500.
    timers(&r[4], &[0.5], 0);
    // coaplab's basic-rto retains T_3 after k = 3 and starts #4 from it.
    let d = run("basic-rto", 4, &steps);
    assert_eq!(d[3].retransmissions, 3);
    assert_eq!(d[4].timers[0], *d[3].timers.last().unwrap());
}

/// `LinuxRto.LinuxRemoteEndpoint`: ms rounding, the falling-RTT test against the *new* SRTT,
/// no retention.
#[test]
fn linux_rto_vectors() {
    let steps = [
        (0.0, 0, 1.0),
        (10.0, 0, 0.2),
        (20.0, 0, 0.2),
        (30.0, 1, 0.2),
        (60.0, 0, 0.2),
    ];
    let r = run("linux-rto@californium", 4, &steps);
    // #0: T_0 = 2000. initializeRTOEstimators(1000): SRTT 1000, mdev 500,
    //     mdev_max = max(500, 50) = 500, RTTVAR 500, RTO = 1000 + 4·500 = 3000.
    timers(&r[0], &[2.0], 0);
    close(r[0].rto_after, 3.0, 0);
    // #1: T_0 = 3000. updateEstimator(200): SRTT = 1000 + round(0.125·(200 − 1000)) = 900;
    //     200 < 900 − 500 → mdev = round(0.96875·500 + 0.03125·|200 − 900|)
    //     = round(484.375 + 21.875) = 506; 506 > mdev_max 500 → mdev_max = RTTVAR = 506;
    //     mdev_max = 50; RTO = 900 + 4·506 = 2924.
    timers(&r[1], &[3.0], 0);
    close(state(&r[1], "srtt").unwrap(), 0.9, 0);
    close(state(&r[1], "mdev").unwrap(), 0.506, 0);
    close(r[1].rto_after, 2.924, 0);
    // #2: T_0 = 2924. SRTT = 900 + round(0.125·(−700) = −87.5) = 900 − 87 = 813 (half up);
    //     200 < 813 − 506 → mdev = round(0.96875·506 + 0.03125·613) = round(490.1875 +
    //     19.15625) = 509 > 50 → mdev_max = 509 > RTTVAR 506 → RTTVAR = 509;
    //     RTO = 813 + 4·509 = 2849.
    timers(&r[2], &[2.924], 0);
    close(r[2].rto_after, 2.849, 0);
    // #3: T_0 = 2849, ×2 = 5698; k = 1 → not STRONG, ignored.
    timers(&r[3], &[2.849, 5.698], 0);
    assert_eq!(r[3].sample.kind, SampleKind::Ambiguous);
    // #4: no retention of 5.698 s: T_0 = 2849 (coaplab's linux-rto keeps the backed-off timer).
    timers(&r[4], &[2.849], 0);
    // coaplab's linux-rto (Linux's tcp_rtt_estimator: |err| against the old SRTT, 800 ms):
    // mdev = 31/32·0.5 + 0.8/32 = 0.509375, RTO = 0.9 + 4·0.509375 = 2.9375 s after #1.
    let d = run("linux-rto", 4, &steps);
    close(d[1].rto_after, 2.9375, 0);
}

/// `PeakhopperRto.PeakhopperRemoteEndoint`: the samples of outside_vectors.rs
/// (0.6, 1.0, 0.8 s) through the variant itself.
#[test]
fn peakhopper_rto_vectors() {
    let steps = [(0.0, 0, 0.6), (10.0, 0, 1.0), (20.0, 0, 0.8)];
    let r = run("peakhopper-rto@californium", 4, &steps);
    // #0: T_0 = 2000; initializeRTOEstimators(600): RTO = (long)(1.75·600) = 1050;
    //     RTT_previous stays 0.
    timers(&r[0], &[2.0], 0);
    close(r[0].rto_after, 1.05, 0);
    // #1: T_0 = 1050. updateEstimator(1000): delta = |(1000 − 0)/1000| = 1, B = min(max(2,
    //     D·0), 1) = 1, RTT_max = 1000, RTO_min = max(600, 1000) + 100 = 1100;
    //     RTO = max((long)max(D·1050 ≈ 1006, 2·1000), 1000 + 100, 1100) = 2000.
    timers(&r[1], &[1.05], 0);
    close(r[1].rto_after, 2.0, 0);
    // #2: T_0 = 2000. updateEstimator(800): delta = |(800 − 1000)/800| = |−200/800| = 0 (long
    //     division), B = max(0, D·1) = 23/24, RTT_max = 1000, RTO_min = max(800, 1000) + 100;
    //     RTO = (long)max(D·2000 ≈ 1916.7, (1 + 23/24)·1000 ≈ 1958.3) = 1958.
    timers(&r[2], &[2.0], 0);
    close(r[2].rto_after, 1.958, 0);
    match r[2].state.iter().find(|(n, _)| *n == "b").unwrap().1 {
        Value::Float(b) => assert!((b - 23.0 / 24.0).abs() < 1e-6, "{b}"),
        other => panic!("{other:?}"),
    }
}

/// `LeastRecentlyUpdatedCache` (MAX_PEER_INACTIVITY_PERIOD 600 s, stale when `≥`): a peer
/// not touched for 10 min starts over from ACK_TIMEOUT.
#[test]
fn peer_forgotten_after_ten_minutes() {
    // #0: R = 200 → RTO 300, last touched at the response, 0.2 s.
    // #1 at 600.199 s (599.999 s later): T_0 = max(500, 300) = 500.
    let r = run(
        "basic-rto@californium",
        4,
        &[(0.0, 0, 0.2), (600.199, 0, 0.2)],
    );
    timers(&r[1], &[0.5], 0);
    // #1 at 600.2 s (600 s later): a fresh endpoint, T_0 = ACK_TIMEOUT = 2000.
    let r = run(
        "basic-rto@californium",
        4,
        &[(0.0, 0, 0.2), (600.2, 0, 0.2)],
    );
    timers(&r[1], &[2.0], 0);
}

/// `RemoteEndpoint.getRTO`'s blind rule: with more than one exchange registered and no
/// strong sample through `initialRto()`, the RTO is multiplied by their number. CoCoA never
/// calls `initialRto()`, so for it the rule never switches off (and the multiplied value
/// enters its next overall RTO); Linux and Peak-Hopper switch it off at their first sample.
#[test]
fn blind_rule_with_exchanges_in_flight() {
    let t = |s: f64| Instant::from_secs_f64(s);
    let c = Config::default();
    // cocoa@californium, two others in flight: T_0 is armed before this exchange is
    // registered, so getRTO() counts 2: 2000·2 = 4000.
    let mut alg = build("cocoa@californium", c);
    let ex = alg.on_exchange_start(t(0.0), 2, &mut LowerBound);
    assert_eq!(ex.timer, ms(4000));
    // Its response at 1 s (it is registered now: 3 in flight): RTO_strong = 1000 +
    // max(100, 2000) = 3000; overall = round(0.5·3000 + 0.5·getRTO() = 0.5·(2000·3)) = 4500.
    alg.on_response(t(1.0), &ex, None);
    assert_eq!(alg.base_rto(), ms(4500));
    // Still blind after a sample: two others in flight → 4500·2 = 9000.
    let ex = alg.on_exchange_start(t(10.0), 2, &mut LowerBound);
    assert_eq!(ex.timer, ms(9000));

    // linux-rto@californium: 4000 before the first sample; after it (RTO 1000 + 4·500 =
    // 3000), not multiplied.
    let mut alg = build("linux-rto@californium", c);
    let ex = alg.on_exchange_start(t(0.0), 2, &mut LowerBound);
    assert_eq!(ex.timer, ms(4000));
    alg.on_response(t(1.0), &ex, None);
    let ex = alg.on_exchange_start(t(10.0), 2, &mut LowerBound);
    assert_eq!(ex.timer, ms(3000));
    // basic-rto@californium has no blind rule (usesBlindEstimator = false).
    let mut alg = build("basic-rto@californium", c);
    assert_eq!(
        alg.on_exchange_start(t(0.0), 2, &mut LowerBound).timer,
        ms(2000)
    );
}

/// `RemoteEndpoint.getRTO` caps the RTO handed to an exchange at 32 s.
#[test]
fn rto_capped_at_32s() {
    // basic-rto@californium with ACK_TIMEOUT 40 s: the first T_0 = min(40000, 32000) =
    // 32000. R = 30 s (k = 0, strong): RTO = 30000 + 15000 = 45000; the next T_0 =
    // min(45000, 32000) = 32000 again.
    let mut alg = build("basic-rto@californium", with_ack_timeout(40_000));
    let r = replay(
        &mut alg,
        &script(&[(0.0, 0, 30.0), (100.0, 0, 0.1)]),
        &mut LowerBound,
    )
    .unwrap();
    timers(&r[0], &[32.0], 0);
    close(state(&r[0], "rto").unwrap(), 45.0, 0);
    timers(&r[1], &[32.0], 0);
}

/// `Cocoa.checkAging` resets the reference to "now" after an aging step (the elapsed time
/// left over is dropped); the drafts' `cocoa` here advances it by the interval used.
#[test]
fn cocoa_aging_reference_reset_to_now() {
    // ACK_TIMEOUT 600. #0 at 0: T_0 = 600; R = 100: RTT 100, RTTVAR 50, E = 100 +
    //     max(100, 200) = 300; RTO = round(0.5·300 + 0.5·600) = 450, updated at 0.1 s.
    // #1 at 10.1 s: T_0 = max(500, 450) = 500 (armed before aging); VBF(500) = ×3: 500, 1500,
    //     4500, 13500; answered after the third retransmission: k = 3, no sample. Aging at its
    //     start: 10 000 ms > 16·450 = 7200 → RTO 900 (2800 ms left, not > 16·900), reference
    //     = 10.1 s.
    // #2 at 24.5 s: 14 400 ms since 10.1 s, not > 16·900 = 14 400: no aging; T_0 = 900,
    //     ×3: 900, 2700, 8100, 24300; k = 3 again: RTO stays 900.
    let steps = [(0.0, 0, 0.1), (10.1, 3, 0.1), (24.5, 3, 0.1)];
    let mut alg = build("cocoa@californium", with_ack_timeout(600));
    let r = replay(&mut alg, &script(&steps), &mut LowerBound).unwrap();
    close(r[0].rto_after, 0.45, 0);
    timers(&r[1], &[0.5, 1.5, 4.5, 13.5], 0);
    close(r[1].rto_after, 0.9, 0);
    timers(&r[2], &[0.9, 2.7, 8.1, 24.3], 0);
    close(r[2].rto_after, 0.9, 0);
    // #2 at 24.6 s: 14 500 ms > 14 400 → aging to 1800 after T_0 = 900 was armed.
    let steps = [(0.0, 0, 0.1), (10.1, 3, 0.1), (24.6, 3, 0.1)];
    let mut alg = build("cocoa@californium", with_ack_timeout(600));
    let r = replay(&mut alg, &script(&steps), &mut LowerBound).unwrap();
    timers(&r[2], &[0.9, 2.7, 8.1, 24.3], 0);
    close(r[2].rto_after, 1.8, 0);
    // The drafts' cocoa: same RTO 0.45 s after #0 (E = 0.1 + 4·0.05); #1 ages first (10 ≥
    // 7.2 s → 0.9 s, reference 0.1 + 7.2 = 7.3 s) and arms it: 0.9, 2.7, ×2 = 5.4, ×1.5 = 8.1;
    // #2 at 24.5 s: 17.2 s since 7.3 s ≥ 16·0.9 = 14.4 → 1.8 s, armed at once: 1.8, ×2 = 3.6,
    // ×1.5 = 5.4, ×1.5 = 8.1.
    let steps = [(0.0, 0, 0.1), (10.1, 3, 0.1), (24.5, 3, 0.1)];
    let mut alg = Algorithm::from_name("cocoa", with_ack_timeout(600)).unwrap();
    let d = replay(&mut alg, &script(&steps), &mut LowerBound).unwrap();
    timers(&d[1], &[0.9, 2.7, 5.4, 8.1], 0);
    timers(&d[2], &[1.8, 3.6, 5.4, 8.1], 0);
}
