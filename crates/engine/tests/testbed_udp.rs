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
