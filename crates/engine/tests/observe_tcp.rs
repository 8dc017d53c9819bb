//! End-to-end checks of `workload.kind = "observe"` over CoAP over TCP (RFC 7641 over RFC 8323
//! §7, docs/model.md "Observe", "Over TCP") on the star testbed, against hand-computed
//! timings and counts.

mod common;

use coaplab_engine::testbed::run;
use serde_json::json;

fn observe_tcp(workload: serde_json::Value) -> coaplab_engine::config::RunConfig {
    let mut w = json!({"kind": "observe", "clients": 1, "duration_s": 60.0,
                       "notify_period_s": 5.0});
    for (k, v) in workload.as_object().unwrap() {
        w[k] = v.clone();
    }
    common::config(json!({
        "coap": {"transport": "tcp", "cc": "newreno"},
        "link": {"path_delay_ms": [15.0, 15.0]},
        "workload": w,
    }))
}

/// One observer, no loss, a fixed 15 ms path delay each way, a value every 5 s until 60 s.
///
/// The client registers once connected (docs/model.md "Connection start": SYN, SYN-ACK, CSMs;
/// with these links well under 5 s, `testbed_tcp.rs` has the arithmetic: 1.48 s with 10 ms
/// paths). So the registration reaches the server at some T_r < 5 s: value 0 then, and values
/// at T_r + 5 k s for k = 1 … 11 (T_r + 55 < 60 ≤ T_r + 60): 12 values, all delivered.
///
/// Sizes (RFC 8323 §3.2 framing; the model's segments carry IPv4 20 + TCP 20 header bytes,
/// `tcp_app::transmit`, `Segment::header_bytes` without options once established):
/// - value 0 rides on the registration's response: Len/TKL 1 + extended length 1 (Len = 1
///   Observe option, empty for sequence number 0 + 1 marker + 60 = 62 ≥ 13) + code 1 + 62 =
///   65 B → 105 B IP, 105·8 / 30 000 s = 28 ms on the downlink: age 15 + 28 + 400 = 443 ms;
/// - values 1 … 11: the Observe option takes 2 bytes (a 1-byte sequence number): 66 B →
///   106 B IP, 106·8 / 30 000 s = 28.266667 ms (rounded up to the ns): age 15 + 28.266667 +
///   400 = 443.266667 ms. Nothing waits: the previous notification's delayed ACK (200 ms)
///   is back seconds before the next value, so Nagle holds nothing and no bytes are unsent.
///
/// Mean (443 + 11 × 443.266667) / 12 = 5318.933337 / 12 = 443.244445 ms; median and maximum
/// 443.266667 ms. No CON/NON, no retransmission at the CoAP layer (RFC 8323 §7.1).
#[test]
fn without_loss_every_value_arrives_one_way_delay_old() {
    let r = run(&observe_tcp(json!({})), 0, None).unwrap();
    let o = r.observe.expect("observe results");
    assert_eq!(o.notifications_generated, 12);
    assert_eq!(o.notifications_delivered, 12);
    assert_eq!(o.notification_delivered_fraction, Some(1.0));
    // The registration's response is not among the notifications sent.
    assert_eq!(o.notifications_sent, 11);
    assert_eq!((o.notifications_con, o.notifications_non), (0, 0));
    assert_eq!(o.notification_retransmissions, 0);
    assert_eq!((o.notifications_superseded, o.reregistrations), (0, 0));
    assert_eq!(o.observers_removed, 0);
    assert_eq!(o.notification_age_count, 12);
    let close = |a: Option<f64>, b: f64| (a.unwrap() - b).abs() < 1e-9;
    assert!(close(o.notification_age_max_s, 0.443_266_667), "{o:?}");
    assert!(close(o.notification_age_p50_s, 0.443_266_667), "{o:?}");
    assert!(close(o.notification_age_mean_s, 0.443_244_444_75), "{o:?}");
    // The server counted the registration as its one request.
    assert_eq!(r.server.requests, 1);
}

/// 20 observers on the 30 kbit/s downlink, a value every 0.5 s of 200 B each: 20 × 2/s ×
/// (200 + 4 to 6 B of framing + 40 B of headers) × 8 ≈ 78 kbit/s, more than twice the link,
/// so values wait behind unsent bytes and newer ones replace them.
///
/// Accounting: every value is value 0 (the registration's response, one per observer), a
/// notification written to TCP (`notifications_sent`) or a replaced one
/// (`notifications_superseded`); a waiting value is written once the connection drains, which
/// it does after the deadline (no more values), so none is left: generated = 20 + sent +
/// superseded. TCP delivers every byte written, in order, so every written value arrives
/// fresh: delivered = 20 + sent, hence delivered + superseded = generated.
#[test]
fn congested_values_are_superseded_and_every_written_one_arrives() {
    let cfg = observe_tcp(json!({"clients": 20, "notify_period_s": 0.5,
                                 "notification_bytes": 200}));
    let r = run(&cfg, 0, None).unwrap();
    let o = r.observe.expect("observe results");
    assert!(o.notifications_superseded > 0, "{o:?}");
    assert!(o.notification_delivered_fraction.unwrap() < 1.0, "{o:?}");
    assert_eq!(
        o.notifications_generated,
        20 + o.notifications_sent + o.notifications_superseded,
        "{o:?}"
    );
    assert_eq!(
        o.notifications_delivered,
        20 + o.notifications_sent,
        "{o:?}"
    );
    assert_eq!(
        o.notifications_delivered + o.notifications_superseded,
        o.notifications_generated
    );
    assert_eq!((o.notifications_con, o.notifications_non), (0, 0));
    // Each observer's values: 0.5 s apart from T_r < 5 s until 60 s, so at least
    // (60 − 5) / 0.5 = 110 and at most 120 each.
    assert!(
        (20 * 110..=20 * 120).contains(&o.notifications_generated),
        "{o:?}"
    );
}

/// Bad input stays a one-line typed error: observe over TCP still refuses a request size and
/// a TCP-only algorithm name is still required.
#[test]
fn observe_over_tcp_refusals() {
    let mut cfg = observe_tcp(json!({}));
    cfg.workload.request_bytes = Some(100);
    let e = run(&cfg, 0, None).unwrap_err().to_string();
    assert!(e.contains("workload.request_bytes"), "{e}");
    let mut cfg = observe_tcp(json!({}));
    cfg.coap.cc = "default".into();
    let e = run(&cfg, 0, None).unwrap_err().to_string();
    assert!(e.contains("coap.cc") && e.contains("newreno"), "{e}");
}
