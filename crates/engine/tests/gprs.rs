//! The GPRS preset (docs/networks.md): one exchange on an idle modem link, computed by hand.

mod common;

use serde_json::json;

#[test]
fn one_exchange_on_an_idle_gprs_link() {
    let cfg = common::config(json!({
        "workload": {"kind": "continuous", "clients": 1, "exchanges": 1},
        "network": {"kind": "gprs", "gprs_delay_ms": [500.0, 500.0], "gprs_loss": 0.0},
    }));
    let r = coaplab_engine::testbed::run(&cfg, 0, None).unwrap();
    // Request 40 B on the 15 kbit/s uplink: 320 bit / 15 000 bit/s = 21.333… ms, rounded up to
    // 21 333 334 ns; 500 ms each way; the 93-byte response on the 40 kbit/s downlink:
    // 744 / 40 000 = 18.6 ms. 21.333334 + 500 + 500 + 18.6 = 1039.933334 ms.
    assert_eq!(r.clients[0].fct_s, Some(1.039933334));
    assert_eq!((r.packets.sent_uplink, r.packets.sent_downlink), (1, 1));
    assert!(r.mesh.is_none());
}
