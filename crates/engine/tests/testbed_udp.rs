//! End-to-end checks of the UDP testbed against hand-computed timings.

mod common;

use coaplab_engine::testbed::run;
use serde_json::json;

/// One exchange on an idle, error-free testbed with a fixed 15 ms path delay each way:
/// request 40 B at 60 kbit/s = 5.333334 ms (rounded up to the ns) + 200 ms + 15 ms;
/// response 93 B at 30 kbit/s = 24.8 ms + 400 ms, after 15 ms on the path.
/// Total = 5.333334 + 200 + 15 + 15 + 24.8 + 400 = 660.133334 ms.
#[test]
fn one_exchange_takes_the_hand_computed_time() {
    let cfg = common::config(
        json!({"link": {"path_delay_ms": [15.0, 15.0]}, "workload": {"exchanges": 1}}),
    );
    let r = run(&cfg, 0, None).unwrap();
    let fct = r.clients[0].fct_s.unwrap();
    assert!((fct - 0.660_133_334).abs() < 1e-9, "{fct}");
    // 50 back-to-back exchanges: 50 × 660.133334 ms = 33.0066667 s.
    let cfg = common::config(json!({"link": {"path_delay_ms": [15.0, 15.0]}}));
    let r = run(&cfg, 0, None).unwrap();
    assert!((r.clients[0].fct_s.unwrap() - 33.006_666_7).abs() < 1e-6);
    assert_eq!(r.retransmission_histogram, vec![50]);
    assert_eq!(r.packets.sent, 100);
}

#[test]
fn same_seed_same_result_other_replication_differs() {
    let cfg = common::config(
        json!({"workload": {"clients": 20, "start_spread_s": 1.0}, "link": {"errors": "high"}, "coap": {"cc": "cocoa"}}),
    );
    let a = serde_json::to_string(&run(&cfg, 3, None).unwrap()).unwrap();
    let b = serde_json::to_string(&run(&cfg, 3, None).unwrap()).unwrap();
    assert_eq!(a, b);
    let c = serde_json::to_string(&run(&cfg, 4, None).unwrap()).unwrap();
    assert_ne!(a, c);
}

#[test]
fn losses_cause_retransmissions_and_every_exchange_completes() {
    let cfg = common::config(
        json!({"workload": {"clients": 10}, "link": {"errors": "high"}, "coap": {"cc": "cocoa"}}),
    );
    let r = run(&cfg, 0, None).unwrap();
    let completed: u32 = r.clients.iter().map(|c| c.exchanges_completed).sum();
    assert_eq!(completed, 500);
    assert!(r.packets.lost_link > 0);
    assert!(r.retransmission_histogram.len() > 1);
    let retx: u32 = r.clients.iter().map(|c| c.retransmissions).sum();
    let from_hist: u64 = r
        .retransmission_histogram
        .iter()
        .enumerate()
        .map(|(k, n)| k as u64 * n)
        .sum();
    assert_eq!(
        u64::from(retx),
        from_hist,
        "retransmissions of completed exchanges = histogram mass"
    );
}

/// Downlink delay 3 s makes every RTT ≈ 3.26 s > any `default` T_0 ∈ [2, 3] s, while
/// T_1 = 2·T_0 ≥ 4 s outlasts the response: every exchange retransmits exactly once,
/// needlessly — copy 0 reached the server and its response reached the client.
#[test]
fn spurious_retransmissions_are_classified_unnecessary_and_deduplicated() {
    let cfg = common::config(
        json!({"link": {"downlink_delay_ms": 3000.0}, "workload": {"exchanges": 10}}),
    );
    let r = run(&cfg, 0, None).unwrap();
    let c = &r.clients[0];
    assert_eq!(c.exchanges_completed, 10);
    assert_eq!(r.retransmission_histogram, vec![0, 10]);
    assert_eq!(c.unnecessary_retransmissions, 10);
    // The server answers every duplicate from its cache; the client ignores the late copies.
    assert_eq!((r.server.requests, r.server.duplicates), (20, 10));
    assert_eq!(c.duplicate_responses, 10);
    // Each needless response took 93 B of downlink capacity: 10·93·8 bit over the period.
    let share = 10.0 * 93.0 * 8.0 / (30_000.0 * r.measured_period_s);
    assert!((r.packets.unnecessary_downlink_share - share).abs() < 1e-12);
}

#[test]
fn necessary_retransmissions_are_not_unnecessary() {
    // Every packet in the bad state is lost: with `high` errors, retransmissions after real
    // losses must not be counted (a copy is unnecessary only if an earlier copy's response
    // got back), so unnecessary ≤ retransmissions and, on a short RTT, is rare.
    let cfg = common::config(
        json!({"workload": {"clients": 5}, "link": {"errors": "high"}, "coap": {"cc": "cocoa"}}),
    );
    let r = run(&cfg, 1, None).unwrap();
    let retx: u32 = r.clients.iter().map(|c| c.retransmissions).sum();
    let unnecessary: u32 = r
        .clients
        .iter()
        .map(|c| c.unnecessary_retransmissions)
        .sum();
    assert!(retx > 0 && unnecessary < retx, "{unnecessary} of {retx}");
}

#[test]
fn nstart_allows_parallel_exchanges() {
    // One client, idle error-free link: with NSTART = 1 the 50 exchanges take ≈ 33 s; with
    // NSTART = 2 two run at once, so ≈ half (each still ≈ 660 ms).
    let one = run(&common::config(json!({"coap": {"nstart": 1}})), 0, None)
        .unwrap()
        .clients[0]
        .fct_s
        .unwrap();
    let two = run(&common::config(json!({"coap": {"nstart": 2}})), 0, None)
        .unwrap()
        .clients[0]
        .fct_s
        .unwrap();
    assert!(two < 0.55 * one && two > 0.45 * one, "{one} vs {two}");
}

#[test]
fn exchanges_fail_after_max_retransmit() {
    // Every packet lost (custom chain with loss 1 in both states): each exchange sends
    // 1 + MAX_RETRANSMIT = 3 copies, then fails; the client moves on to the next.
    let all_lost = json!({"good_mean_ms": 400.0, "good_min_ms": 60.0, "good_max_ms": 1200.0, "good_loss": 1.0,
                          "bad_mean_ms": 100.0, "bad_min_ms": 30.0, "bad_max_ms": 300.0, "bad_loss": 1.0});
    let cfg = common::config(
        json!({"link": {"errors": all_lost}, "workload": {"exchanges": 4}, "coap": {"max_retransmit": 2}}),
    );
    let r = run(&cfg, 0, None).unwrap();
    let c = &r.clients[0];
    assert_eq!((c.exchanges_completed, c.exchanges_failed), (0, 4));
    assert_eq!(c.retransmissions, 8);
    assert_eq!(
        c.timeouts, 12,
        "3 timer expirations per exchange, the last one failing it"
    );
    assert!(r.retransmission_histogram.is_empty());
    assert_eq!(r.packets.sent_uplink, 12);
    assert_eq!(r.packets.lost_link, 12);
}

#[test]
fn block_wise_transfer_of_an_odd_sized_resource() {
    // 1000 B in 256 B blocks: 4 exchanges. Responses: blocks 0–2 carry 256 B
    // (CoAP 4 + Block2 3 + 0xFF + 256 = 264 → 292 B IP), block 3 the remaining 232 B
    // (4 + 3 + 1 + 232 = 240 → 268 B): downlink 3·292 + 268 = 1144 B.
    // Requests: 4 + Uri-Path 8 + Block2 2 (delta 12, 1-byte value) = 14 → 42 B; uplink 4·42 = 168 B.
    let cfg = common::config(json!({"workload": {"kind": "firmware", "resource_bytes": 1000}}));
    let r = run(&cfg, 0, None).unwrap();
    assert_eq!(r.clients[0].exchanges_completed, 4);
    assert_eq!(r.packets.bytes_downlink, 1144);
    assert_eq!(r.packets.bytes_uplink, 168);
}

#[test]
fn tail_drop_at_the_bottleneck_causes_retransmissions() {
    // 100 clients overflow a 500 B buffer (5 responses): drops and retransmissions, yet every
    // exchange completes with MAX_RETRANSMIT 20.
    let cfg = common::config(
        json!({"link": {"buffer_bytes": 500}, "workload": {"clients": 100, "exchanges": 5}, "coap": {"cc": "cocoa"}}),
    );
    let r = run(&cfg, 0, None).unwrap();
    assert!(r.packets.dropped_buffer > 0);
    assert_eq!(
        r.clients.iter().map(|c| c.exchanges_completed).sum::<u32>(),
        500
    );
    assert!(r.packets.max_queue_bytes <= 500);
}

#[test]
fn random_clients_reset_state_and_burst_settles() {
    let cfg = common::config(
        json!({"workload": {"kind": "random", "clients": 10}, "coap": {"cc": "cocoa"}}),
    );
    let r = run(&cfg, 0, None).unwrap();
    assert_eq!(
        r.clients.iter().map(|c| c.exchanges_completed).sum::<u32>(),
        500
    );
    let cfg = common::config(
        json!({"workload": {"kind": "burst", "background": 5, "burst_at_s": 10.0,
        "burst_clients": 20, "burst_exchanges": 5}, "coap": {"cc": "cocoa"}}),
    );
    let r = run(&cfg, 0, None).unwrap();
    assert_eq!(r.clients.len(), 25);
    // 100 burst exchanges share a 30 kbit/s downlink (24.8 ms each, ≥ 2 s for 80 of them).
    let settle = r.settling_time_s.unwrap();
    assert!(settle > 80.0 * 0.0248 && settle < 60.0, "{settle}");
}

#[test]
fn duration_workload_stops_starting_exchanges_at_the_deadline() {
    // 1 client for 10 s: ≈ 10 / 0.66 ≈ 15 exchanges started before the deadline.
    let cfg = common::config(json!({"workload": {"duration_s": 10.0}}));
    let r = run(&cfg, 0, None).unwrap();
    let n = r.clients[0].exchanges_completed;
    assert!((15..=16).contains(&n), "{n}");
}
