mod common;

use coaplab_engine::testbed::run;
use serde_json::json;

#[test]
fn zz_print() {
    for buf in [2500u64, 14100, 28200, 1410000] {
        let mut cfg = common::config(json!({"coap": {"transport": "tcp", "cc": "bbr"},
            "workload": {"kind": "firmware"}, "link": {"buffer_bytes": buf}}));
        cfg.trace = true;
        let r = run(&cfg, 0, None).unwrap();
        let t = r.clients[0].tcp.unwrap();
        if buf == 1410000 { for row in r.seq_traces.as_ref().unwrap()[0].cc.iter().filter(|r| r.1 == "down").take(60) { println!("{row:?}"); } }
        println!("{buf}: fct {:?} retx {} rto {} drops {}", r.clients[0].fct_s, t.segments_retransmitted, t.rto_expirations, r.packets.dropped_buffer);
    }
}
