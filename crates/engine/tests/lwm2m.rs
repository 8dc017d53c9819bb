//! `workload.kind = "lwm2m"` (docs/model.md "LwM2M devices") on the idle star with a fixed
//! 15 ms path delay each way (tests/testbed_udp.rs: 60 kbit/s up + 200 ms, 30 kbit/s down +
//! 400 ms).

mod common;

use coaplab_engine::testbed::run;
use serde_json::{json, Value};

fn lwm2m(workload: Value, link: Value) -> coaplab_engine::metrics::RunResult {
    let mut w = json!({"kind": "lwm2m", "duration_s": 1000.0});
    for (k, v) in workload.as_object().unwrap() {
        w[k] = v.clone();
    }
    let mut l = json!({"path_delay_ms": [15.0, 15.0]});
    for (k, v) in link.as_object().unwrap() {
        l[k] = v.clone();
    }
    let cfg = common::config(json!({"workload": w, "link": l}));
    run(&cfg, 0, None).unwrap()
}

/// Registration takes one round trip: the Register is 20 (IPv4) + 8 (UDP) + 4 (CoAP header) +
/// 8 (Uri-Path) + 1 (payload marker) + 76 (`lwm2m_register_bytes`' default) = 117 B, at
/// 60 kbit/s 936 bit / 60000 = 15.6 ms, + 200 + 15 ms; the server's ACK carries no payload,
/// 20 + 8 + 4 = 32 B, 256 bit / 30000 = 8.533334 ms (rounded up to the ns), after 15 + 400
/// ms. Total 15.6 + 200 + 15 + 15 + 400 + 8.533334 = 654.133334 ms.
///
/// Updates (lifetime 300 s): Wakaama's `registration_step` sends one `lifetime − 93` = 207 s
/// after the last reply. An Update is 40 B (5.333334 ms) and its ACK 32 B, so it takes
/// 5.333334 + 230 + 400 + 8.533334 = 643.866668 ms: registered at 0.654 s, updates sent at
/// 207.654, 415.298, 622.942, 830.586 s; the next would be at 1038.2 s, past `duration_s`
/// (1000 s): 4 updates, none failed.
#[test]
fn lossless_star_registers_in_one_round_trip_and_every_update_succeeds() {
    let r = lwm2m(json!({"lwm2m_lifetime_s": 300.0}), json!({}));
    let l = r.lwm2m.expect("LwM2M counters");
    assert_eq!(l.register_s.len(), 1);
    assert!(
        (l.register_s[0] - 0.654_133_334).abs() < 1e-9,
        "{:?}",
        l.register_s
    );
    assert_eq!((l.updates_sent, l.updates_failed), (4, 0));
    assert_eq!(l.registrations_failed, 0);
    // Every exchange completed at the first try: the Register and the 4 Updates.
    assert_eq!(r.retransmission_histogram, vec![5]);
}

/// A firmware pull of 1000 B in 256 B blocks (`block_szx` 4): 4 blocks, one after the other.
/// A block request is 40 B + the Block2 option (header 1 B, delta 23 − 11 = 12, + 1 value
/// byte) = 42 B, 5.6 ms at 60 kbit/s; blocks 0-2 come back in 292 B (tests of
/// `coap::messages`: 77.866667 ms at 30 kbit/s), block 3 carries 232 B: 4 + 3 (Block2) + 1 +
/// 232 + 28 = 268 B, 71.466667 ms. Each block: 5.6 + 230 + 400 ms + its response:
/// 3 · 713.466667 + 707.066667 = 2847.466668 ms.
#[test]
fn firmware_pull_takes_its_blocks_round_trips() {
    let r = lwm2m(
        json!({"lwm2m_firmware_bytes": 1000, "duration_s": 100.0}),
        json!({}),
    );
    let l = r.lwm2m.unwrap();
    assert_eq!(l.firmware_failed, 0);
    assert_eq!(l.firmware_s.len(), 1);
    assert!(
        (l.firmware_s[0] - 2.847_466_668).abs() < 1e-6,
        "{:?}",
        l.firmware_s
    );
}

/// Notifications every 100 s until 1000 s, after registration at 0.654 s: at 100.654, …,
/// 900.654 s (the next, 1000.654 s, is past the deadline): 9 notifications, all delivered.
#[test]
fn notifications_every_period_are_delivered_on_a_lossless_star() {
    let r = lwm2m(json!({"lwm2m_notify_period_s": 100.0}), json!({}));
    assert_eq!(r.lwm2m.unwrap().notifications_delivered, 9);
}

/// With losses, and no CoAP retransmission (`max_retransmit` 0), updates fail.
#[test]
fn updates_fail_on_a_lossy_link() {
    let cfg = common::config(json!({
        "workload": {"kind": "lwm2m", "duration_s": 20000.0, "clients": 20,
                     "lwm2m_lifetime_s": 300.0},
        "link": {"errors": "high"},
        "coap": {"max_retransmit": 0},
    }));
    let l = run(&cfg, 0, None).unwrap().lwm2m.unwrap();
    assert!(l.updates_failed > 0, "{l:?}");
    assert!(l.updates_sent > l.updates_failed, "{l:?}");
}

/// Reads of a queue-mode device wait at the server for its next uplink: with a notification
/// every 600 s and a 93 s window, a read arriving at a random time waits on average far longer
/// than a round trip; without queue mode every read takes about one round trip (≈ 0.66 s).
#[test]
fn queue_mode_reads_wait_for_the_next_uplink() {
    let w = json!({"lwm2m_reads_per_day": 200.0, "lwm2m_notify_period_s": 600.0,
                   "duration_s": 86400.0});
    let always = lwm2m(w.clone(), json!({})).lwm2m.unwrap();
    let mut qw = w.clone();
    qw["lwm2m_queue_mode"] = json!(true);
    let queued = lwm2m(qw, json!({})).lwm2m.unwrap();
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    assert!(always.read_wait_s.len() > 100 && queued.read_wait_s.len() > 100);
    // A read: 20 + 8 + 4 + 8 (Uri-Path) = 40 B down at 30 kbit/s (10.666667 ms) + 415 ms, its
    // answer 20 + 8 + 4 + 1 + 12 = 45 B up (6 ms) + 215 ms: 646.666667 ms on an idle link.
    assert!(always
        .read_wait_s
        .iter()
        .all(|&w| w >= 0.646_666_667 - 1e-9));
    assert!(mean(&always.read_wait_s) < 1.0);
    assert!(mean(&queued.read_wait_s) > 60.0);
    assert_eq!((always.reads_failed, queued.reads_failed), (0, 0));
}

/// Bad input: a `lwm2m` key with another kind, `lwm2m` without `duration_s`, over TCP.
#[test]
fn bad_lwm2m_input_is_refused_in_one_line() {
    let err = |patch: Value| {
        let cfg = common::config(patch);
        run(&cfg, 0, None).unwrap_err().to_string()
    };
    let e = err(json!({"workload": {"lwm2m_lifetime_s": 60.0}}));
    assert!(
        e.contains("workload.lwm2m_lifetime_s") && e.contains("\"lwm2m\""),
        "{e}"
    );
    let e = err(json!({"workload": {"kind": "lwm2m"}}));
    assert!(
        e.contains("workload.duration_s") && e.contains("required"),
        "{e}"
    );
    let e = err(json!({"workload": {"kind": "lwm2m", "duration_s": 10.0},
                       "coap": {"transport": "tcp", "cc": "newreno"}}));
    assert!(e.contains("lwm2m") && e.contains("UDP"), "{e}");
    let e = err(json!({"workload": {"kind": "lwm2m", "duration_s": 10.0,
                                    "lwm2m_queue_window_s": 30.0}}));
    assert!(e.contains("lwm2m_queue_mode"), "{e}");
    assert!(!e.contains('\n'), "{e}");
}
