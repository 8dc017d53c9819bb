//! RFC 9177 Q-Block transfers (`coap.block_mode = "q-block"`, docs/model.md "Q-Block") on the
//! idle star with a fixed 15 ms path delay each way (tests/testbed_udp.rs: a request crosses
//! the uplink, 200 ms, then 15 ms of path; a response 15 ms of path, the downlink, 400 ms).
//! Serialization is rounded up to the nanosecond per packet.

mod common;

use coaplab_engine::testbed::run;
use serde_json::json;

fn qblock(kind: &str, bytes: u64, link: serde_json::Value) -> coaplab_engine::metrics::RunResult {
    let mut l = json!({"path_delay_ms": [15.0, 15.0], "buffer_bytes": 100000, "mtu": 1500});
    for (k, v) in link.as_object().unwrap() {
        l[k] = v.clone();
    }
    let cfg = common::config(json!({
        "link": l,
        "workload": {"kind": kind, "resource_bytes": bytes},
        "coap": {"block_mode": "q-block"},
    }));
    run(&cfg, 0, None).unwrap()
}

/// Q-Block2, 1000 B in 256 B blocks = 4 blocks (292, 292, 292, 268 B; coap/qblock_wire.rs),
/// one set. GET 43 B at 60 kbit/s = 5.733334 ms, + 200 + 15 ms: at the server at
/// 220.733334 ms; the four blocks reach the downlink at 235.733334 ms and serialize back to
/// back at 30 kbit/s: 3 × 77.866667 + 71.466667 = 305.066668 ms; + 400 ms: the last arrives at
/// 235.733334 + 305.066668 + 400 = 940.800002 ms.
#[test]
fn firmware_without_loss_completes_in_the_hand_computed_time() {
    let r = qblock("firmware", 1000, json!({}));
    let q = r.qblock.expect("Q-Block counters");
    assert_eq!((q.transfers_completed, q.transfers_failed), (1, 0));
    assert_eq!(q.transfer_time_s.len(), 1);
    assert!(
        (q.transfer_time_s[0] - 0.940_800_002).abs() < 1e-9,
        "{:?}",
        q.transfer_time_s
    );
    assert_eq!(
        (q.blocks_sent, q.blocks_recovered, q.recovery_requests),
        (4, 0, 0)
    );
    // Up: the 43 B GET; down: 3 × 292 + 268 = 1144 B.
    assert_eq!((q.bytes_up, q.bytes_down), (43, 1144));
    assert_eq!(r.clients[0].exchanges_completed, 4);
    assert_eq!(r.clients[0].fct_s, Some(q.transfer_time_s[0]));
}

/// Q-Block1, 1000 B: PUT blocks of 299, 299, 299, 275 B at 60 kbit/s:
/// 3 × 39.866667 + 36.666667 = 156.266668 ms, + 200 + 15 ms: the last at the server at
/// 371.266668 ms; its 2.04 (35 B): 15 ms + 9.333334 ms + 400 ms → 795.600002 ms.
#[test]
fn upload_without_loss_completes_in_the_hand_computed_time() {
    let r = qblock("upload", 1000, json!({}));
    let q = r.qblock.expect("Q-Block counters");
    assert_eq!(q.direction, "upload");
    assert_eq!((q.transfers_completed, q.transfers_failed), (1, 0));
    assert!(
        (q.transfer_time_s[0] - 0.795_600_002).abs() < 1e-9,
        "{:?}",
        q.transfer_time_s
    );
    assert_eq!((q.bytes_up, q.bytes_down), (3 * 299 + 275, 35));
}

/// 20 480 B (80 blocks) over the lossy link and the 2500 B buffer (a set of 10 × 292 B does not
/// fit): blocks are lost, recovery requests bring them back, the transfer completes.
#[test]
fn lossy_transfers_complete_with_recovery() {
    for kind in ["firmware", "upload"] {
        let r = qblock(kind, 20480, json!({"errors": "high", "buffer_bytes": 2500}));
        let q = r.qblock.expect("Q-Block counters");
        assert_eq!(
            (q.transfers_completed, q.transfers_failed),
            (1, 0),
            "{kind}"
        );
        assert!(q.recovery_requests > 0, "{kind}: {q:?}");
        assert!(
            q.blocks_recovered > 0 && q.blocks_sent > 80,
            "{kind}: {q:?}"
        );
    }
}

#[test]
fn bad_input_is_a_typed_error() {
    let run_err = |patch: serde_json::Value| {
        let cfg = common::config(patch);
        run(&cfg, 0, None).unwrap_err().to_string()
    };
    let e = run_err(json!({"coap": {"block_mode": "q-block"}}));
    assert!(
        e.contains("coap.block_mode") && e.contains("needs a body"),
        "{e}"
    );
    let e = run_err(json!({"workload": {"kind": "upload"}}));
    assert!(e.contains("workload.kind") && e.contains("q-block"), "{e}");
    let e = run_err(json!({"workload": {"kind": "firmware"},
        "coap": {"block_mode": "q-block", "q_block_max_payloads": 0}}));
    assert!(
        e.contains("coap.q_block_max_payloads") && e.contains("1..1000"),
        "{e}"
    );
}

/// Runs without Q-Block carry no Q-Block counters (their results are unchanged).
#[test]
fn block_runs_have_no_qblock_counters() {
    let cfg = common::config(json!({"workload": {"kind": "firmware", "resource_bytes": 1000}}));
    assert!(run(&cfg, 0, None).unwrap().qblock.is_none());
}
