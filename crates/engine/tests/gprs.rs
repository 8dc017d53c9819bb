//! The GPRS preset (docs/networks.md "The GPRS preset"): exchanges on the modem link whose
//! completion times are computed by hand from the radio-block model (`net::gprs`).
//!
//! Shared arithmetic: the 40-byte GET (IPv4 20 + UDP 8 + CoAP 12) plus 11 octets of SNDCP (4),
//! LLC (6) and RLC length indicator (1) = 51 octets; CS-3 carries 36 octets of RLC data per
//! radio block: ceil(51 / 36) = 2 blocks × 20 ms on one timeslot = 40 ms. The 93-byte response
//! on the 40 kbit/s downlink: 744 bit / 40 000 bit/s = 18.6 ms. Uplink TBF set-up 235 ms; a
//! downlink TBF (`net::gprs_downlink`) 235 ms when the downlink's last one was released (2 s
//! after its last packet, the delayed release).

mod common;

use serde_json::json;

fn gprs(
    clients: u32,
    exchanges: u32,
    network: serde_json::Value,
) -> coaplab_engine::metrics::RunResult {
    // Fixed delays, no losses, no radio block errors and no fades: every time below is exact.
    let mut net = json!({"kind": "gprs", "gprs_delay_ms": [500.0, 500.0], "gprs_loss": 0.0,
                         "gprs_block_error_rate": 0.0, "gprs_fade_mean_ms": 0.0});
    for (k, v) in network.as_object().unwrap() {
        net[k] = v.clone();
    }
    let cfg = common::config(json!({
        "workload": {"kind": "continuous", "clients": clients, "exchanges": exchanges},
        "network": net,
    }));
    coaplab_engine::testbed::run(&cfg, 0, None).unwrap()
}

fn fcts(r: &coaplab_engine::metrics::RunResult) -> Vec<f64> {
    let mut v: Vec<f64> = r.clients.iter().map(|c| c.fct_s.unwrap()).collect();
    v.sort_by(f64::total_cmp);
    v
}

#[test]
fn one_exchange_on_an_idle_gprs_link() {
    let r = gprs(1, 1, json!({}));
    // No TBF yet: 235 ms set-up + 40 ms of blocks = 275 ms; 500 ms each way; no downlink TBF
    // yet either: 235 ms, then 18.6 ms down. 275 + 500 + 500 + 235 + 18.6 = 1528.6 ms.
    assert!((r.clients[0].fct_s.unwrap() - 1.5286).abs() < 1e-9);
    assert_eq!((r.packets.sent_uplink, r.packets.sent_downlink), (1, 1));
    assert!(r.mesh.is_none());
    // Without the downlink TBF's establishment: 1528.6 − 235 = 1293.6 ms.
    let r = gprs(1, 1, json!({"gprs_dl_tbf_setup_ms": 0.0}));
    assert!((r.clients[0].fct_s.unwrap() - 1.2936).abs() < 1e-9);
}

#[test]
fn the_same_exchange_with_cs1_and_two_timeslots() {
    let r = gprs(
        1,
        1,
        json!({"gprs_coding_scheme": 1, "gprs_uplink_timeslots": 2}),
    );
    // CS-1: 20 octets per block, ceil(51 / 20) = 3 blocks; two timeslots: 3 × 20 / 2 = 30 ms.
    // 235 + 30 + 500 + 500 + 235 + 18.6 = 1518.6 ms.
    assert!((r.clients[0].fct_s.unwrap() - 1.5186).abs() < 1e-9);
}

#[test]
fn requests_wait_behind_each_other_in_the_modem_buffer() {
    // Three clients start together (start spread 0): one TBF set-up, then the requests leave
    // one after another, 40 ms each: the k-th (k = 1, 2, 3) is done at 235 + 40·k ms and its
    // response reaches the downlink 1000 ms later: 1275, 1315, 1355 ms. The first pays the
    // downlink TBF: 1275 + 235 + 18.6 = 1528.6 ms; the other two wait behind it on the open
    // TBF: 1528.6 + 18.6 = 1547.2, 1547.2 + 18.6 = 1565.8 ms.
    let r = gprs(3, 1, json!({}));
    let f = fcts(&r);
    for (got, want) in f.iter().zip([1.5286, 1.5472, 1.5658]) {
        assert!((got - want).abs() < 1e-9, "{f:?}");
    }
}

#[test]
fn an_acknowledgement_block_and_a_released_tbf_delay_the_next_request() {
    // One client, two exchanges. The first response reaches the modem at 1528.6 ms (above);
    // its Packet Downlink Ack/Nack takes the uplink for one block, until 1548.6 ms. The uplink
    // TBF, idle since 275 ms, was released at 275 + 1000 = 1275 ms: the second request pays
    // the set-up again: 1548.6 + 235 + 40 = 1823.6 ms. Its response reaches the downlink
    // 1000 ms later, 2823.6 ms, while the downlink TBF is kept (until 1528.6 + 2000 =
    // 3528.6 ms): no establishment, 2823.6 + 18.6 = 2842.2 ms.
    let r = gprs(1, 2, json!({}));
    assert!((r.clients[0].fct_s.unwrap() - 2.8422).abs() < 1e-9);
    // An uplink TBF kept 2 s (until 2275 ms): no second set-up: 1548.6 + 40 + 1018.6 =
    // 2607.2 ms.
    let r = gprs(1, 2, json!({"gprs_tbf_hold_ms": 2000.0}));
    assert!((r.clients[0].fct_s.unwrap() - 2.6072).abs() < 1e-9);
    // Without acknowledgement blocks: 1528.6 + 40 + 1018.6 = 2587.2 ms.
    let r = gprs(
        1,
        2,
        json!({"gprs_tbf_hold_ms": 2000.0, "gprs_ack_blocks": 0}),
    );
    assert!((r.clients[0].fct_s.unwrap() - 2.5872).abs() < 1e-9);
    // A downlink TBF kept only 100 ms (until 1628.6 ms) is gone when the second response
    // comes at 1528.6 + 40 + 1000 = 2568.6 ms: it pays the establishment again,
    // 2568.6 + 235 + 18.6 = 2822.2 ms.
    let r = gprs(
        1,
        2,
        json!({"gprs_tbf_hold_ms": 2000.0, "gprs_ack_blocks": 0, "gprs_dl_tbf_idle_ms": 100.0}),
    );
    assert!((r.clients[0].fct_s.unwrap() - 2.8222).abs() < 1e-9);
}

#[test]
fn a_plain_rate_uplink_when_its_rate_is_given() {
    // The preset before the radio model: 320 bit / 15 000 bit/s = 21.333… ms, rounded up to
    // 21 333 334 ns; 21.333334 + 500 + 500 + 18.6 = 1039.933334 ms.
    let r = gprs(1, 1, json!({"gprs_uplink_kbps": 15.0}));
    assert_eq!(r.clients[0].fct_s, Some(1.039933334));
}
