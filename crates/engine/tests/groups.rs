//! Client populations on one network (docs/design.md "Client populations"): groups share the
//! network and the event loop; splitting one population into groups changes nothing; UDP and
//! TCP clients compete on one bottleneck.

mod common;

use coaplab_engine::testbed::run;
use serde_json::{json, Value};

fn group(name: &str, clients: u32, coap: Value) -> Value {
    let mut coap_full = json!({"transport": "udp", "cc": "cocoa", "max_retransmit": 20, "nstart": 1,
        "ack_timeout_s": 2.0, "ack_random_factor": 1.5, "max_timer_s": 60.0});
    for (k, v) in coap.as_object().unwrap() {
        coap_full[k] = v.clone();
    }
    json!({"name": name,
           "workload": {"kind": "continuous", "clients": clients, "exchanges": 20, "duration_s": null,
                        "batch": [1, 10], "start_spread_s": 0.5, "response_bytes": 60,
                        "resource_bytes": 102400, "block_szx": 4},
           "coap": coap_full})
}

fn with_groups(groups: Vec<Value>, link: Value) -> coaplab_engine::config::RunConfig {
    common::config(json!({"link": link, "group": groups,
        "workload": {"clients": 1}, "coap": {"cc": "cocoa"}}))
}

/// Ten cocoa clients as one population, and as two groups of five, are the same run: clients
/// keep their global ids, RNG streams and start offsets, whatever the grouping.
#[test]
fn splitting_a_population_into_groups_changes_nothing() {
    let link = json!({"errors": "medium"});
    let one = with_groups(vec![group("all", 10, json!({}))], link.clone());
    let two = with_groups(
        vec![group("a", 5, json!({})), group("b", 5, json!({}))],
        link,
    );
    let (r1, r2) = (run(&one, 2, None).unwrap(), run(&two, 2, None).unwrap());
    // Everything but the group label is the same.
    let clients = |r: &coaplab_engine::metrics::RunResult| {
        let mut rows = r.clients.clone();
        rows.iter_mut().for_each(|c| c.group = None);
        serde_json::to_string(&rows).unwrap()
    };
    assert_eq!(r2.clients[4].group.as_deref(), Some("a"));
    assert_eq!(r2.clients[5].group.as_deref(), Some("b"));
    assert_eq!(clients(&r1), clients(&r2));
    assert_eq!(r1.retransmission_histogram, r2.retransmission_histogram);
    assert_eq!(r1.events, r2.events);
    // The per-group histograms add up to the run's.
    let (a, b) = (&r2.groups[0], &r2.groups[1]);
    assert_eq!(
        (a.first_client, a.clients, b.first_client, b.clients),
        (0, 5, 5, 5)
    );
    let n = a
        .retransmission_histogram
        .len()
        .max(b.retransmission_histogram.len());
    let sum: Vec<u64> = (0..n)
        .map(|k| {
            a.retransmission_histogram.get(k).unwrap_or(&0)
                + b.retransmission_histogram.get(k).unwrap_or(&0)
        })
        .collect();
    assert_eq!(sum, r2.retransmission_histogram);
}

/// 25 UDP cocoa and 25 TCP newreno clients share the 2,500 B bottleneck: every exchange of
/// both completes, each group reports its own transport's counters, and the server answered
/// exactly the UDP requests that reached it plus one request per completed TCP exchange.
#[test]
fn udp_and_tcp_clients_share_one_bottleneck() {
    let cfg = with_groups(
        vec![
            group("udp", 25, json!({"cc": "cocoa"})),
            group("tcp", 25, json!({"transport": "tcp", "cc": "newreno"})),
        ],
        json!({"buffer_bytes": 2500}),
    );
    let r = run(&cfg, 0, None).unwrap();
    assert_eq!(r.clients.len(), 50);
    assert!(r
        .clients
        .iter()
        .all(|c| c.exchanges_completed == 20 && c.exchanges_failed == 0));
    let (u, t) = (&r.groups[0], &r.groups[1]);
    assert_eq!((u.transport, t.transport), ("udp", "tcp"));
    assert_eq!(u.retransmission_histogram.iter().sum::<u64>(), 25 * 20);
    assert!(u.tcp.is_none());
    assert_eq!(t.tcp.unwrap().connections, 25);
    assert!(r.clients[..25].iter().all(|c| c.tcp.is_none()));
    assert!(r.clients[25..].iter().all(|c| c.tcp.is_some()));
    assert_eq!(
        r.server.requests - r.server.duplicates,
        25 * 20 + 25 * 20,
        "one first copy per UDP exchange, one request per TCP exchange"
    );
    // Both kinds of traffic went through the one downlink.
    assert!(r.packets.sent_downlink > 25 * 20 * 2);
    // Deterministic.
    let again = run(&cfg, 0, None).unwrap();
    assert_eq!(
        serde_json::to_string(&r).unwrap(),
        serde_json::to_string(&again).unwrap()
    );
}
