//! NON traffic (`coap.non_rate_per_s`) and CoCoA's NON rule (`coap.non_rule`,
//! draft-ietf-core-cocoa-03 §5), on the idle star with a fixed 15 ms path delay.
//!
//! One CON exchange there takes R = 660.133334 ms (tests/testbed_udp.rs:
//! 5.333334 + 200 + 15 + 15 + 24.8 + 400 ms); a NON request/response pair takes the same.

mod common;

use coaplab_engine::testbed::run;
use serde_json::json;

fn non(cc: &str, rule: bool, messages: u32) -> coaplab_engine::metrics::RunResult {
    let cfg = common::config(json!({
        "link": {"path_delay_ms": [15.0, 15.0]},
        "workload": {"exchanges": messages},
        "coap": {"cc": cc, "non_rate_per_s": 1.0, "non_rule": rule},
    }));
    run(&cfg, 0, None).unwrap()
}

/// Without the rule: 8 NONs at the offered 1/s, all answered on the idle link, no CON.
#[test]
fn non_without_rule_sends_at_the_offered_rate() {
    let r = non("cocoa", false, 8);
    let n = r.non.expect("NON counters");
    assert_eq!((n.sent, n.delivered, n.rule_con), (8, 8, 0));
    // 8 sends at 0, 1, …, 7 s: (8 − 1) / 7 s.
    assert!((n.rate_per_s - 1.0).abs() < 1e-12, "{}", n.rate_per_s);
    assert!((n.delivery_ratio - 1.0).abs() < 1e-12);
    assert!(r.retransmission_histogram.is_empty());
    assert_eq!(r.clients[0].exchanges_completed, 0);
}

/// With the rule: message 0 is a CON (k = 0, R = 0.660133334 s). CoCoA's first strong sample:
/// RTTVAR = R/2 = 330066667 ns, E = R + 4·RTTVAR = 1980400002 ns,
/// RTO = E/2 + 2 s/2 = 990200001 + 1000000000 = 1990200001 ns. Messages 1–7 are NONs: the
/// first goes when produced (1 s), each later one one RTO after the previous NON (they are
/// produced every second, faster than 1/RTO), so 7 NONs span 6·RTO: rate = 6 / (6·RTO) = 1/RTO.
#[test]
fn non_rule_limits_the_rate_to_one_per_rto_and_sends_cons() {
    let r = non("cocoa", true, 8);
    let n = r.non.expect("NON counters");
    assert_eq!((n.sent, n.delivered, n.rule_con), (7, 7, 1));
    let rto = 1.990_200_001;
    assert!((n.rate_per_s - 1.0 / rto).abs() < 1e-9, "{}", n.rate_per_s);
    assert_eq!(r.retransmission_histogram, vec![1]);
    assert_eq!(r.clients[0].exchanges_completed, 1);
}

/// 2 of every 16 messages are CON: messages 0, 8, 16, 24 of 32.
#[test]
fn non_rule_sends_two_of_every_sixteen_as_con() {
    let n = non("cocoa", true, 32).non.unwrap();
    assert_eq!((n.sent, n.rule_con), (28, 4));
}

/// CON-only runs carry no NON counters (their results are unchanged).
#[test]
fn con_runs_have_no_non_counters() {
    let cfg = common::config(json!({"workload": {"exchanges": 3}}));
    let r = run(&cfg, 0, None).unwrap();
    assert!(r.non.is_none());
    assert!(!serde_json::to_string(&r).unwrap().contains("\"non\""));
}

#[test]
fn non_rule_needs_non_traffic_and_non_needs_continuous() {
    let cfg = common::config(json!({"coap": {"non_rule": true}}));
    let err = run(&cfg, 0, None).unwrap_err().to_string();
    assert!(
        err.starts_with("coap.non_rule: true needs NON traffic"),
        "{err}"
    );
    let cfg =
        common::config(json!({"workload": {"kind": "random"}, "coap": {"non_rate_per_s": 1.0}}));
    let err = run(&cfg, 0, None).unwrap_err().to_string();
    assert!(
        err.contains("NON traffic needs workload.kind = \"continuous\""),
        "{err}"
    );
}

/// NON requests and their responses are NON messages (RFC 7252 §4.3, §5.2.3) of the same size
/// as CON / ACK (the type is two bits of the fixed header).
#[test]
fn non_messages_are_typed_non() {
    use coaplab_cc::Instant;
    use coaplab_engine::coap::messages::MessageFactory;
    use coaplab_wire::coap::Type;
    let f = MessageFactory {
        response_bytes: 60,
        block_szx: 4,
        resource_bytes: 0,
        rexmit_cnt: None,
        request_payload: 0,
        protection: Default::default(),
        observe: None,
    };
    let non = f.non_request(0, 0, 7, Instant::ZERO);
    let con = f.request(0, 0, 0, 7, None, Instant::ZERO);
    f.with_message(&non, |m| assert_eq!(m.mtype, Type::Non));
    f.with_message(&f.response(&non), |m| assert_eq!(m.mtype, Type::Non));
    f.with_message(&f.response(&con), |m| assert_eq!(m.mtype, Type::Ack));
    assert_eq!(non.ip_bytes, con.ip_bytes);
    assert_eq!(f.response(&non).ip_bytes, f.response(&con).ip_bytes);
}
