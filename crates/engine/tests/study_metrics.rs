//! The CoCoA study's exchange metrics (docs/model.md "Metrics": retransmission ratio, mean
//! strong / weak RTT, mean initial RTO) on scripted runs computed by hand, and their
//! properties on random runs.

mod common;

use coaplab_engine::metrics::RunResult;
use coaplab_engine::testbed::run;
use proptest::prelude::*;
use serde_json::json;

/// One RTT on the idle, error-free testbed with a fixed 15 ms path delay each way
/// (`testbed_udp.rs`): request 40 B at 60 kbit/s = 5.333334 ms (rounded up to the ns), then
/// 200 ms and 15 ms; response 93 B at 30 kbit/s = 24.8 ms and 400 ms, after 15 ms on the path:
/// 5.333334 + 200 + 15 + 15 + 24.8 + 400 = 660.133334 ms.
const RTT: f64 = 0.660_133_334;

/// One client, NSTART = 2, two exchanges, no uplink buffer (`uplink_buffer_bytes = 0`: only
/// the packet on the wire is held), ACK_RANDOM_FACTOR 1 (no dithering, `T_0` exact):
/// both requests leave at t = 0; request 0 goes on the wire and request 1, arriving while it
/// serialises, is tail-dropped — the forced loss. Exchange 0 is answered after one RTT;
/// exchange 1 only after its timer fires and its retransmission makes the trip.
fn two_exchanges(cc: &str) -> RunResult {
    let cfg = common::config(json!({
        "link": {"path_delay_ms": [15.0, 15.0], "uplink_buffer_bytes": 0},
        "workload": {"exchanges": 2},
        "coap": {"cc": cc, "nstart": 2, "ack_random_factor": 1.0},
        "trace": true,
    }));
    run(&cfg, 0, None).unwrap()
}

fn close(a: Option<f64>, b: f64) -> bool {
    a.is_some_and(|a| (a - b).abs() < 1e-9)
}

#[test]
fn default_two_exchanges_by_hand() {
    let r = two_exchanges("default");
    assert_eq!(
        r.packets.dropped_buffer, 1,
        "request 1 dropped at the uplink"
    );
    let m = r.exchange.expect("a UDP run has exchange metrics");
    // default: T_0 = ACK_TIMEOUT · 1 = 2 s for both exchanges → mean initial RTO 2 s.
    // Exchange 1: timer at 2 s, retransmission (T_1 = 4 s) answered at 2 + RTT.
    // Transmissions: 2 originals + 1 retransmission = 3 → ratio 1/3.
    assert_eq!((m.con_transmissions, m.con_retransmissions), (3, 1));
    assert_eq!(m.retransmission_ratio, Some(1.0 / 3.0));
    assert_eq!(m.initial_rto_count, 2);
    assert!(
        close(m.mean_initial_rto_s, 2.0),
        "{:?}",
        m.mean_initial_rto_s
    );
    // default takes no sample: the strong RTT is that of the exchange answered without a
    // retransmission (exchange 0: RTT); exchange 1 (k = 1) gives none, weak or strong.
    assert_eq!((m.rtt_strong_samples, m.rtt_weak_samples), (1, 0));
    assert!(close(m.mean_rtt_s, RTT), "{:?}", m.mean_rtt_s);
    assert_eq!(m.mean_rtt_weak_s, None);
    // The trace agrees: exchange 1's response at 2 s + RTT, exchange 0's at RTT.
    let pts = &r.traces.as_ref().unwrap()[0].points;
    let resp: Vec<(u32, f64)> = pts
        .iter()
        .filter(|p| p.1 == "response")
        .map(|p| (p.2, p.0))
        .collect();
    assert_eq!(resp.len(), 2);
    assert!(resp[0].0 == 0 && (resp[0].1 - RTT).abs() < 1e-9, "{resp:?}");
    assert!(
        resp[1].0 == 1 && (resp[1].1 - (2.0 + RTT)).abs() < 1e-9,
        "{resp:?}"
    );
}

#[test]
fn cocoa_two_exchanges_by_hand() {
    let r = two_exchanges("cocoa");
    let m = r.exchange.expect("a UDP run has exchange metrics");
    // CoCoA's blind RTO (draft-ietf-core-cocoa-03 §4.2.1): before any sample, an exchange
    // started with `n` others outstanding uses ACK_TIMEOUT·(n + 1): exchange 0 → 2 s,
    // exchange 1 (one outstanding) → 4 s. Mean initial RTO (2 + 4) / 2 = 3 s.
    assert!(
        close(m.mean_initial_rto_s, 3.0),
        "{:?}",
        m.mean_initial_rto_s
    );
    // Exchange 1's timer fires at 4 s, its retransmission is answered at 4 s + RTT: k = 1, a
    // weak sample measured from the original transmission, 4 + RTT = 4.660133334 s.
    // Exchange 0: a strong sample, RTT.
    assert_eq!((m.con_transmissions, m.con_retransmissions), (3, 1));
    assert_eq!(m.retransmission_ratio, Some(1.0 / 3.0));
    assert_eq!((m.rtt_strong_samples, m.rtt_weak_samples), (1, 1));
    assert!(close(m.mean_rtt_s, RTT), "{:?}", m.mean_rtt_s);
    assert!(
        close(m.mean_rtt_weak_s, 4.0 + RTT),
        "{:?}",
        m.mean_rtt_weak_s
    );
    // The trace shows the same samples with CoCoA's own classification.
    let pts = &r.traces.as_ref().unwrap()[0].points;
    let samples: Vec<(&str, f64)> = pts.iter().filter_map(|p| p.5.map(|s| (p.6, s))).collect();
    assert_eq!(samples.len(), 2, "{samples:?}");
    assert!(samples[0].0 == "strong" && (samples[0].1 - RTT).abs() < 1e-9);
    assert!(samples[1].0 == "weak" && (samples[1].1 - (4.0 + RTT)).abs() < 1e-9);
}

#[test]
fn a_tcp_run_has_no_exchange_metrics() {
    let cfg = common::config(json!({
        "workload": {"exchanges": 2},
        "coap": {"transport": "tcp", "cc": "newreno"},
    }));
    let r = run(&cfg, 0, None).unwrap();
    assert!(r.exchange.is_none());
    let text = serde_json::to_string(&r).unwrap();
    assert!(!text.contains("retransmission_ratio"));
}

#[test]
fn burst_settling_time_with_and_without_a_cap() {
    // One burst client at 1 s with 5 back-to-back exchanges on the idle testbed (15 ms paths):
    // each takes RTT, so exchange i completes at 1 + (i+1)·RTT. 80 % of 5 = 4 exchanges →
    // settling time 4·RTT = 2.640533336 s.
    let burst = |cap: Option<f64>| {
        let mut w = json!({"kind": "burst", "background": 0, "burst_at_s": 1.0, "burst_clients": 1,
                           "burst_exchanges": 5});
        if let Some(c) = cap {
            w["settling_cap_s"] = json!(c);
        }
        let cfg = common::config(json!({
            "link": {"path_delay_ms": [15.0, 15.0]},
            "workload": w,
        }));
        run(&cfg, 0, None).unwrap()
    };
    let r = burst(None);
    assert!(
        close(r.settling_time_s, 4.0 * RTT),
        "{:?}",
        r.settling_time_s
    );
    assert_eq!(r.settled, Some(true));
    // A cap above it changes nothing; a cap of 2 s reports 2 s, unsettled.
    let r = burst(Some(180.0));
    assert!(close(r.settling_time_s, 4.0 * RTT));
    assert_eq!(r.settled, Some(true));
    let r = burst(Some(2.0));
    assert_eq!((r.settling_time_s, r.settled), (Some(2.0), Some(false)));
    // Not a burst: neither.
    let r = run(
        &common::config(json!({"workload": {"exchanges": 2}})),
        0,
        None,
    )
    .unwrap();
    assert_eq!((r.settling_time_s, r.settled), (None, None));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// On random lossy runs: the ratio is in [0, 1) (every exchange sends its original);
    /// transmissions = exchanges started + retransmissions, equal to the client rows' sums;
    /// throughput × measured period = completed exchanges; initial timers within the
    /// algorithm's bounds (default: [ACK_TIMEOUT, 1.5·ACK_TIMEOUT] = [2, 3] s).
    #[test]
    fn exchange_metrics_properties(
        clients in 1u32..8,
        exchanges in 1u32..12,
        errors in prop::sample::select(vec!["none", "low", "medium", "high"]),
        cc in prop::sample::select(vec!["default", "cocoa", "fasor", "linux-rto"]),
        buffer in prop::sample::select(vec![600u64, 2500, 1_410_000]),
        replication in 0u64..4,
    ) {
        let cfg = common::config(json!({
            "link": {"errors": errors, "buffer_bytes": buffer},
            "workload": {"clients": clients, "exchanges": exchanges, "start_spread_s": 1.0},
            "coap": {"cc": cc},
        }));
        let r = run(&cfg, replication, None).unwrap();
        let m = r.exchange.unwrap();
        let ratio = m.retransmission_ratio.unwrap();
        prop_assert!((0.0..1.0).contains(&ratio), "{ratio}");
        let retx: u64 = r.clients.iter().map(|c| u64::from(c.retransmissions)).sum();
        let ended: u64 = r.clients.iter().map(|c| u64::from(c.exchanges_completed + c.exchanges_failed)).sum();
        prop_assert_eq!(m.con_retransmissions, retx);
        prop_assert_eq!(m.initial_rto_count, ended, "every exchange of the run ended");
        prop_assert_eq!(m.con_transmissions, ended + retx);
        prop_assert_eq!(m.initial_rto_count, u64::from(clients * exchanges));
        let completed: u64 = r.clients.iter().map(|c| u64::from(c.exchanges_completed)).sum();
        prop_assert!((r.throughput_exchanges_per_s * r.measured_period_s - completed as f64).abs() < 1e-6 * completed.max(1) as f64);
        prop_assert!(m.rtt_strong_samples + m.rtt_weak_samples <= completed);
        if cc == "default" {
            let t0 = m.mean_initial_rto_s.unwrap();
            prop_assert!((2.0..=3.0).contains(&t0), "{t0}");
            prop_assert_eq!(m.rtt_weak_samples, 0);
            // default: one strong sample per exchange answered without retransmission.
            let k0 = r.retransmission_histogram.first().copied().unwrap_or(0);
            prop_assert_eq!(m.rtt_strong_samples, k0);
        }
    }
}
