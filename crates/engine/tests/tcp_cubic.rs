//! CUBIC's vectors, computed by hand from RFC 9438 and Linux net/ipv4/tcp_cubic.c (v2.3):
//! W_cubic(t) = C·(t − K)³ + W_max, K = ∛(W_max·(1 − β)/C), β = 717/1024, C = 0.4, windows
//! in segments of 256 bytes (the default MSS).

use coaplab_cc::{Duration, Instant};
use coaplab_engine::tcp::congestion::cubic::Cubic;
use coaplab_engine::tcp::congestion::{controller, Ack, AckContext, CaState, Controller};
use coaplab_engine::tcp::{Seq, TcpConfig};

const MSS: u32 = 256;

fn ms(v: u64) -> Instant {
    Instant::from_millis(v)
}

fn cubic() -> Box<dyn Controller> {
    let mut c = TcpConfig {
        congestion: controller("cubic").unwrap(),
        ..TcpConfig::default()
    }
    .build_controller();
    c.on_established(MSS, Instant::ZERO, None, 0);
    c
}

fn state(c: &dyn Controller) -> &Cubic {
    c.as_any().downcast_ref::<Cubic>().unwrap()
}

fn ack(now: Instant, segments: u32, rtt: Option<u64>, una: u32, nxt: u32) -> Ack {
    Ack {
        now,
        bytes: segments * MSS,
        rtt: rtt.map(Duration::from_millis),
        snd_una: Seq(una),
        snd_nxt: Seq(nxt),
    }
}

/// A loss at `cwnd` segments, then fast recovery's full ACK sets cwnd = ssthresh.
fn loss_at(c: &mut Box<dyn Controller>, now: Instant, cwnd: u32) -> u32 {
    c.set_window(cwnd * MSS);
    let ssthresh = c.on_congestion_event(now, cwnd * MSS);
    c.set_window(ssthresh);
    ssthresh / MSS
}

#[test]
fn the_window_follows_the_cubic_function_after_a_loss() {
    let mut c = cubic();
    // Loss at 100 segments: W_max = 100 (no earlier W_max), ssthresh = 100·717/1024 =
    // 70.02 → 70 segments (β·W_max).
    assert_eq!(loss_at(&mut c, ms(0), 100), 70);
    assert_eq!(state(&*c).w_max, 100);
    // The first ACK in congestion avoidance starts the epoch: K = ∛((100 − 70)/0.4) = ∛75
    // = 4.2172 s.
    c.on_ack(&ack(ms(10), 1, None, 0, 0));
    let s = state(&*c);
    assert!((s.k - 4.2172).abs() < 1e-4, "K = {}", s.k);
    // W_cubic(t) = 100 ± ⌊0.4·|t − K|³⌋ (Linux truncates the offset to whole segments):
    for (t_ms, w) in [
        (500, 80),    // 0.4·3.7172³ = 20.54 → 100 − 20
        (2000, 96),   // 0.4·2.2172³ = 4.36 → 100 − 4
        (4000, 100),  // 0.4·0.2172³ = 0.004 → plateau at W_max
        (5000, 100),  // 0.4·0.7828³ = 0.19
        (6000, 102),  // 0.4·1.7828³ = 2.27
        (8000, 121),  // 0.4·3.7828³ = 21.65
        (10000, 177), // 0.4·5.7828³ = 77.35
    ] {
        assert_eq!(s.w_cubic(Duration::from_millis(t_ms)), w, "t = {t_ms} ms");
    }
}

#[test]
fn growth_per_ack_follows_cnt_from_the_curve() {
    let mut c = cubic();
    loss_at(&mut c, ms(0), 100); // cwnd 70, K = 4.2172 s
                                 // Epoch starts at 1 s (1 byte acknowledged). At 3 s, t = 2 s: target 96 (above), so cnt
                                 // = 70/(96 − 70) = 2: one segment per two acknowledged; 4 segments → +2.
    c.on_ack(&Ack {
        bytes: 1,
        ..ack(ms(1000), 0, None, 0, 0)
    });
    c.on_ack(&ack(ms(3000), 4, None, 0, 0));
    assert_eq!(state(&*c).cnt, 2);
    assert_eq!(c.window(), 72 * MSS);
    // At 5.5 s (t = 4.5 s, 0.4·0.2828³ = 0.009): target 100, cnt = 72/(100 − 72) = 2 again.
    c.on_ack(&ack(ms(5500), 2, None, 0, 0));
    assert_eq!(state(&*c).cnt, 2);
    assert_eq!(c.window(), 73 * MSS);
}

#[test]
fn fast_convergence_lowers_w_max_when_the_window_did_not_regain_it() {
    let mut c = cubic();
    loss_at(&mut c, ms(0), 100);
    // A second loss at 90 < W_max 100: W_max = 90·(1024 + 717)/2048 = 76.5 → 76;
    // ssthresh = 90·717/1024 = 63.02 → 63; K = ∛((76 − 63)/0.4) = ∛32.5 = 3.1913 s.
    assert_eq!(loss_at(&mut c, ms(20_000), 90), 63);
    assert_eq!(state(&*c).w_max, 76);
    c.on_ack(&ack(ms(20_010), 1, None, 0, 0));
    assert!((state(&*c).k - 3.1913).abs() < 1e-4);
    // A third loss at 120 ≥ W_max 76: W_max = 120, ssthresh = 120·717/1024 = 84.02 → 84.
    assert_eq!(loss_at(&mut c, ms(40_000), 120), 84);
    assert_eq!(state(&*c).w_max, 120);
}

#[test]
fn the_tcp_friendly_estimate_limits_cnt_where_reno_would_be_faster() {
    let mut c = cubic();
    // An RTT sample of 100 ms in slow start (cwnd 4 < 16: no HyStart) sets delay_min, so the
    // curve is read one minimum RTT ahead: t = elapsed + 0.1 s.
    c.on_ack(&ack(ms(100), 1, Some(100), 0, 0));
    assert_eq!(state(&*c).delay_min, Some(Duration::from_millis(100)));
    // Loss at 10: W_max 10, ssthresh 10·717/1024 = 7.002 → 7, K = ∛(3/0.4) = 1.9574 s.
    assert_eq!(loss_at(&mut c, ms(1000), 10), 7);
    // One ACK of 28 segments starts the epoch at 2 s (t = 0.1 s): 0.4·1.8574³ = 2.56 →
    // target 10 − 2 = 8, cubic cnt = 7/(8 − 7) = 7. The TCP-friendly estimate starts at 7
    // and grows one per ⌊7·15/8⌋ = 13 segments acknowledged: 28 > 13 → 8, 15 > 13 → 9,
    // 2 left; 9 > 7, so cnt = min(7, 7/(9 − 7) = 3) = 3, and cwnd grows ⌊28/3⌋ = 9
    // segments to 16 (the curve alone would give ⌊28/7⌋ = 4, 11).
    c.on_ack(&ack(ms(2000), 28, None, 0, 0));
    let s = state(&*c);
    assert_eq!((s.tcp_cwnd, s.cnt), (9, 3));
    assert_eq!(c.window(), 16 * MSS);
}

/// Slow start from 16 segments with an ACK of one segment every `gap_ms`, RTT samples from
/// `rtts`; the first ACK at 1 s. Returns the controller after the ACKs.
fn slow_start(gap_ms: u64, rtts: &[(u64, u32)]) -> Box<dyn Controller> {
    let mut c = cubic();
    c.set_window(16 * MSS);
    for (i, &(rtt, una)) in rtts.iter().enumerate() {
        c.on_ack(&ack(
            ms(1000 + i as u64 * gap_ms),
            1,
            Some(rtt),
            una,
            una + 40_000,
        ));
    }
    c
}

#[test]
fn hystart_ack_train_ends_slow_start() {
    // ACKs 1 ms apart (≤ hystart_ack_delta 2 ms), RTT 100 ms: the round starts at the first
    // ACK (1000 ms); the train is detected once now − round_start > (delay_min + 1 ms)/2 =
    // 50.5 ms, at the ACK at 1051 ms (the 52nd). Before it, cwnd was 16 + 51 = 67 segments
    // (slow start adds one per ACK): ssthresh = 67 segments, and that ACK's segment goes to
    // congestion avoidance (cnt 20 while W_max is 0: no growth yet).
    let rtts: Vec<(u64, u32)> = (0..52).map(|i| (100, 1000 + i * MSS)).collect();
    let c = slow_start(1, &rtts[..51]);
    assert!(!state(&*c).found);
    assert_eq!(c.window(), 67 * MSS);
    let c = slow_start(1, &rtts);
    assert!(state(&*c).found);
    assert_eq!((c.ssthresh(), c.window()), (67 * MSS, 67 * MSS));
}

#[test]
fn hystart_delay_increase_ends_slow_start() {
    // ACKs 10 ms apart (no train). Round 1: one ACK (snd_nxt 41000 ends it), RTT 100 ms =
    // delay_min. Round 2 begins when snd_una passes 41000: its minimum RTT after 8 samples,
    // 113 ms, exceeds delay_min + clamp(100/8 = 12.5, 4, 16) ms = 112.5 ms at its 9th ACK
    // (the 10th in all), when cwnd was 16 + 9 = 25 segments.
    let mut rtts = vec![(100, 1000)];
    rtts.extend((0..9).map(|i| (113, 42_000 + i * MSS)));
    let c = slow_start(10, &rtts);
    assert!(state(&*c).found);
    assert_eq!((c.ssthresh(), c.window()), (25 * MSS, 25 * MSS));
    // 112 ms is within the margin: slow start goes on (16 + 10 = 26 segments).
    let mut rtts = vec![(100, 1000)];
    rtts.extend((0..9).map(|i| (112, 42_000 + i * MSS)));
    let c = slow_start(10, &rtts);
    assert!(!state(&*c).found);
    assert_eq!((c.ssthresh(), c.window()), (u32::MAX, 26 * MSS));
}

#[test]
fn a_timeout_resets_cubic_and_leaves_one_segment() {
    let mut c = cubic();
    loss_at(&mut c, ms(0), 100);
    let cx = AckContext {
        now: ms(5000),
        delivered: 0,
        delivered_at: Instant::ZERO,
        inflight: 0,
        ca_state: CaState::Loss,
        lost: 0,
    };
    // `tcp_enter_loss`: ssthresh = 70·717/1024 = 49.01 → 49 segments, cwnd 1 segment, then
    // `cubictcp_state(TCP_CA_Loss)` forgets W_max.
    c.on_rto(70 * MSS, false, &cx);
    assert_eq!((c.ssthresh(), c.window()), (49 * MSS, MSS));
    assert_eq!(state(&*c).w_max, 0);
    // The same segment timing out again keeps ssthresh.
    c.on_rto(MSS, true, &cx);
    assert_eq!(c.ssthresh(), 49 * MSS);
}
