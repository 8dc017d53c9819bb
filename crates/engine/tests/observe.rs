//! End-to-end checks of `workload.kind = "observe"` (RFC 7641, docs/model.md "Observe") on the
//! star testbed, against hand-computed timings, and its refusals.

mod common;

use coaplab_engine::testbed::run;
use serde_json::json;

fn observe(patch: serde_json::Value) -> serde_json::Value {
    let mut w = json!({"kind": "observe", "clients": 1, "duration_s": 100.0,
                       "notify_period_s": 10.0});
    for (k, v) in patch.as_object().unwrap() {
        w[k] = v.clone();
    }
    w
}

/// One observer, no loss, a fixed 15 ms path delay each way, CON notifications every 10 s
/// until 100 s.
///
/// The registration (IPv4 20 + UDP 8 + CoAP 4 header + 1 Observe = 0 + 8 Uri-Path = 41 B)
/// reaches the server at 41·8 / 60 000 s = 5.466667 ms + 200 ms + 15 ms = 220.466667 ms: value
/// 0, then values at 220.466667 ms + 10 k s for k = 1 … 9 (the next, 100.22 s, is past the
/// deadline): 10 values, all delivered (fraction 1).
///
/// Value 0 rides on the registration's response: 20 + 8 + 4 + 1 (Observe, empty: the sequence
/// number 0) + 1 (payload marker) + 60 = 94 B, 94·8 / 30 000 s = 25.066667 ms on the downlink,
/// so its age is 15 + 25.066667 + 400 = 440.066667 ms. Values 1 … 9 are CON notifications of
/// 95 B (the Observe option takes 2 bytes: a 1-byte sequence number): 95·8 / 30 000 s =
/// 25.333334 ms (rounded up to the ns), age 15 + 25.333334 + 400 = 440.333334 ms. The mean is
/// (440.066667 + 9 × 440.333334) / 10 = 440.3066673 ms; the median and the maximum are
/// 440.333334 ms.
#[test]
fn without_loss_every_value_arrives_one_way_delay_old() {
    let cfg = common::config(json!({
        "link": {"path_delay_ms": [15.0, 15.0]},
        "workload": observe(json!({})),
    }));
    let r = run(&cfg, 0, None).unwrap();
    let o = r.observe.expect("observe results");
    assert_eq!(o.notifications_generated, 10);
    assert_eq!(o.notifications_delivered, 10);
    assert_eq!(o.notification_delivered_fraction, Some(1.0));
    assert_eq!((o.notifications_sent, o.notifications_con), (9, 9));
    assert_eq!((o.notifications_superseded, o.reregistrations), (0, 0));
    assert_eq!(o.notification_age_count, 10);
    let close = |a: Option<f64>, b: f64| (a.unwrap() - b).abs() < 1e-9;
    assert!(close(o.notification_age_max_s, 0.440_333_334), "{o:?}");
    assert!(close(o.notification_age_p50_s, 0.440_333_334), "{o:?}");
    assert!(close(o.notification_age_mean_s, 0.440_306_667_3), "{o:?}");
    // The server counted the registration only; nine empty ACKs (32 B) went up.
    assert_eq!(r.server.requests, 1);
    assert_eq!(r.packets.sent_uplink, 1 + 9);
    assert_eq!(r.packets.bytes_uplink, 41 + 9 * 32);
}

/// With loss (the `high` error preset on both directions): lost NON notifications are never
/// recovered, so the delivered fraction falls below 1; CON notifications every second, with
/// timers of 2 s and more, are superseded while they wait for their ACK.
#[test]
fn with_loss_fewer_values_arrive_and_pending_ones_are_superseded() {
    let cfg = common::config(json!({
        "link": {"errors": "high"},
        "workload": observe(json!({"clients": 5, "notify": "non"})),
    }));
    let o = run(&cfg, 0, None).unwrap().observe.unwrap();
    let f = o.notification_delivered_fraction.unwrap();
    assert!(f < 1.0 && f > 0.0, "{o:?}");
    assert_eq!(o.notifications_con, 0);
    assert!(o.notifications_delivered < o.notifications_generated);

    let cfg = common::config(json!({
        "link": {"errors": "high"},
        "workload": observe(json!({"clients": 5, "notify_period_s": 1.0})),
    }));
    let o = run(&cfg, 0, None).unwrap().observe.unwrap();
    assert!(o.notifications_superseded > 0, "{o:?}");
    assert!(o.notification_delivered_fraction.unwrap() < 1.0, "{o:?}");
    // A superseded value may still have arrived (its earlier transmission did, its ACK was
    // lost), so the two counts overlap; each is at most the values generated.
    assert!(
        o.notifications_superseded < o.notifications_generated,
        "{o:?}"
    );
    assert!(
        o.notifications_delivered < o.notifications_generated,
        "{o:?}"
    );
}

/// Every wrong combination is one typed error naming the key.
#[test]
fn wrong_combinations_are_refused() {
    let cases = [
        (observe(json!({"duration_s": null})), "workload.duration_s"),
        (
            observe(json!({"notify_rate_per_s": 1.0})),
            "workload.notify_period_s",
        ),
        (
            observe(json!({"notify_period_s": null})),
            "workload.notify_period_s",
        ),
        (
            observe(json!({"con_every_s": 10.0})),
            "workload.con_every_s",
        ),
        (
            observe(json!({"notify_period_s": 61.0})),
            "workload.notify_period_s",
        ),
        (
            json!({"kind": "continuous", "max_age_s": 30.0}),
            "workload.max_age_s",
        ),
    ];
    for (w, key) in cases {
        let cfg = common::config(json!({"workload": w}));
        let e = run(&cfg, 0, None).unwrap_err().to_string();
        assert!(e.starts_with(key), "{e}");
        assert!(!e.contains('\n'), "{e}");
    }
    // Over TCP (crates/engine/tests/observe_tcp.rs) the message type is not a choice: RFC
    // 8323 §7.1 has no CON/NON on a reliable transport.
    for (w, key) in [
        (json!({"notify": "non"}), "workload.notify:"),
        (
            json!({"notify": "non-con", "con_every_s": 60.0}),
            "workload.notify:",
        ),
    ] {
        let cfg = common::config(json!({
            "workload": observe(w),
            "coap": {"transport": "tcp", "cc": "newreno"},
        }));
        let e = run(&cfg, 0, None).unwrap_err().to_string();
        assert!(e.starts_with(key) && e.contains("RFC 8323 §7.1"), "{e}");
        assert!(!e.contains('\n'), "{e}");
    }
}
