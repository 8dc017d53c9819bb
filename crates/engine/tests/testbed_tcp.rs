//! End-to-end checks of the CoAP-over-TCP testbed against hand-computed timings and the
//! wire format.

mod common;

use coaplab_engine::coap::over_tcp::MAX_MESSAGE_SIZE;
use coaplab_engine::coap::signaling::{Session, SessionEvent};
use coaplab_engine::testbed::{check, run};
use coaplab_wire::coap_tcp::{decode_frame, signal};
use serde_json::{json, Value};

fn tcp(patch: Value) -> coaplab_engine::config::RunConfig {
    let mut p = json!({"coap": {"transport": "tcp", "cc": "newreno"},
                       "link": {"path_delay_ms": [10.0, 10.0]}});
    for (section, fields) in patch.as_object().unwrap() {
        for (k, v) in fields.as_object().unwrap() {
            p[section][k] = v.clone();
        }
    }
    common::config(p)
}

/// A `[tcp]` section: the defaults, with `patch` applied.
fn section(patch: Value) -> coaplab_engine::config::TcpSection {
    let mut v = json!({"initial_window": 4, "slow_start_limit": null, "nagle": "minshall",
                       "limited_transmit": true, "delayed_ack_ms": 200.0, "initial_rto_s": 2.0,
                       "max_rto_s": 120.0, "syn_retries": 40, "synack_retries": 41});
    for (k, x) in patch.as_object().unwrap() {
        v[k] = x.clone();
    }
    serde_json::from_value(v).unwrap()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-6
}

/// A continuous client on an idle, error-free testbed, path delay fixed at 10 ms each way.
/// Before the measured period (docs/model.md "Connection start"): SYN (44 B) up, SYN-ACK
/// (44 B) down, the client's pure ACK (40 B) then its CSM (7 B → 47 B) up, the server's CSM
/// (47 B) down when the pure ACK establishes its end, the server's delayed ACK of the
/// client's CSM (40 B) down. Then each exchange:
/// request 10 B → 50 B at 60 kbit/s = 6.666667 ms, + 200 ms + 10 ms path;
/// response 64 B → 104 B, 10 ms path, at 30 kbit/s = 27.733333 ms, + 400 ms.
/// One exchange = 6.666667 + 200 + 10 + 10 + 27.733333 + 400 = 654.4 ms. The first request
/// (at 1479.866667 ms, below) waits behind the client's delayed ACK of the server's CSM
/// (sent at 1275.466667 + 200 = 1475.466667 ms, 40 B = 5.333333 ms: the uplink is busy until
/// 1480.8 ms), 0.933333 ms: 655.333333 ms. The next request carries the ACK of the previous
/// response, so nothing waits (no delayed ACK, no Nagle): two exchanges take 1309.733333 ms.
#[test]
fn continuous_exchanges_take_the_hand_computed_time() {
    for (exchanges, fct) in [(1, 0.655_333_333), (2, 1.309_733_333)] {
        let r = run(&tcp(json!({"workload": {"exchanges": exchanges}})), 0, None).unwrap();
        let c = &r.clients[0];
        assert!(close(c.fct_s.unwrap(), fct), "{exchanges}: {:?}", c.fct_s);
        // The measured period starts once the client holds the server's CSM and its own is
        // acknowledged: SYN 5.866667 + 200 + 10 → 215.866667 ms; SYN-ACK 10 + 11.733333 +
        // 400 → 637.6 ms. Pure ACK 5.333333 ms (uplink free at 642.933333) + 210 → server at
        // 852.933333 ms; the CSM follows it on the uplink: 642.933333 + 6.266667 + 210 →
        // 859.2 ms. The server's CSM leaves at 852.933333: 10 + 12.533333 + 400 → client at
        // 1275.466667 ms. The server acknowledges the client's CSM 200 ms after it arrived:
        // 1059.2 + 10 + 10.666667 + 400 → 1479.866667 ms, the start of the measured period.
        assert!(
            close(c.first_request_s.unwrap(), 1.479_866_667),
            "{:?}",
            c.first_request_s
        );
        let t = c.tcp.unwrap();
        assert_eq!(
            (t.connections, t.segments_retransmitted, t.rto_expirations),
            (1, 0, 0)
        );
    }
}

/// A random client's FCT runs from its first SYN; its first request is a second write after
/// its CSM, held by Nagle (Minshall) until the CSM is acknowledged. As above, the server's
/// delayed ACK of the CSM reaches the client at 1479.866667 ms (the client's own delayed ACK
/// of the server's CSM left at 1275.466667 + 200 = 1475.466667 ms, occupies the uplink until
/// 1480.8 ms and reaches the server at 1690.8 ms). The GET (50 B): 1480.8 + 6.666667 + 210 →
/// server at 1697.466667 ms, the server's CSM already acknowledged, so the response (104 B)
/// leaves at once: 10 + 27.733333 + 400 → 2135.2 ms.
#[test]
fn random_client_counts_from_its_first_syn() {
    let cfg = tcp(json!({"workload": {"kind": "random", "exchanges": 1, "batch": [1, 1]}}));
    let r = run(&cfg, 0, None).unwrap();
    let c = &r.clients[0];
    assert!(close(c.fct_s.unwrap(), 2.1352), "{:?}", c.fct_s);
    assert_eq!(c.first_request_s, Some(0.0));
    // Three batches of one: three connections.
    let cfg = tcp(json!({"workload": {"kind": "random", "exchanges": 3, "batch": [1, 1]}}));
    let r = run(&cfg, 0, None).unwrap();
    assert_eq!(r.clients[0].tcp.unwrap().connections, 3);
    assert_eq!(r.clients[0].exchanges_completed, 3);
}

/// The firmware response is one 102407-byte message (RFC 8323 framing of a 102400-byte
/// payload): 400 full 256-byte segments and a 7-byte tail = 401 segments, after the server's
/// CSM; with an unlimited buffer nothing is lost.
#[test]
fn firmware_response_is_401_segments() {
    let cfg =
        tcp(json!({"workload": {"kind": "firmware"}, "link": {"buffer_bytes": 1_410_000u64}}));
    let mut cfg = cfg;
    cfg.trace = true;
    let r = run(&cfg, 0, None).unwrap();
    let traces = r.seq_traces.as_ref().unwrap();
    let down: Vec<_> = traces[0]
        .points
        .iter()
        .filter(|p| p.1 == "down" && p.2 == "send")
        .collect();
    // CSM (7 B) + 401 response segments (+ the closing FIN carries no payload).
    let data: Vec<_> = down.iter().filter(|p| p.4 > 0).collect();
    assert_eq!(data.len(), 402);
    assert_eq!(data.iter().filter(|p| p.4 == 256).count(), 400);
    assert_eq!(
        data.iter().map(|p| u64::from(p.4)).sum::<u64>(),
        7 + 102_407
    );
    assert_eq!(r.packets.dropped_buffer, 0);
    // Ideal ≈ 401 · 296 B · 8 / 30 kbit/s = 31.65 s of serialization + ≈ 0.63 s of latency;
    // slow start adds idle time in the first round trips.
    let fct = r.clients[0].fct_s.unwrap();
    assert!(fct > 32.28 && fct < 33.5, "{fct}");
}

#[test]
fn same_seed_same_result_other_replication_differs() {
    let cfg = tcp(
        json!({"workload": {"kind": "random", "clients": 10, "exchanges": 10,
                                      "start_spread_s": 1.0},
                         "link": {"errors": "high", "path_delay_ms": [10.0, 20.0]}}),
    );
    let a = serde_json::to_string(&run(&cfg, 2, None).unwrap()).unwrap();
    let b = serde_json::to_string(&run(&cfg, 2, None).unwrap()).unwrap();
    assert_eq!(a, b);
    let c = serde_json::to_string(&run(&cfg, 3, None).unwrap()).unwrap();
    assert_ne!(a, c);
}

/// On a lossy, congested run every exchange still completes (TCP retransmits), and the
/// counters are consistent with each other.
#[test]
fn lossy_run_completes_and_counters_agree() {
    let cfg = tcp(
        json!({"workload": {"kind": "random", "clients": 20, "exchanges": 20},
                         "link": {"errors": "high", "buffer_bytes": 1000}}),
    );
    let r = run(&cfg, 0, None).unwrap();
    let t = r.tcp.unwrap();
    assert_eq!(
        r.clients.iter().map(|c| c.exchanges_completed).sum::<u32>(),
        400
    );
    assert!(t.segments_retransmitted > 0 && t.rto_expirations > 0);
    assert!(t.unnecessary_retransmissions <= t.segments_retransmitted);
    let share = r.packets.unnecessary_downlink_share;
    assert!((0.0..1.0).contains(&share), "{share}");
    assert!(t.csm_retransmissions <= t.segments_retransmitted);
    assert!(t.syn_retransmissions + t.synack_retransmissions > 0);
    let per_client: u64 = r
        .clients
        .iter()
        .map(|c| c.tcp.unwrap().segments_retransmitted)
        .sum();
    assert_eq!(per_client, t.segments_retransmitted);
    assert_eq!(
        t.connections,
        r.clients
            .iter()
            .map(|c| c.tcp.unwrap().connections)
            .sum::<u64>()
    );
}

#[test]
fn invalid_tcp_configurations_are_rejected() {
    let mut cfg = tcp(json!({}));
    cfg.coap.cc = "cocoa".into();
    let e = check(&cfg).unwrap_err().to_string();
    assert!(
        e.contains("coap.cc") && e.contains("allowed with transport tcp: newreno"),
        "{e}"
    );
    let cfg = tcp(json!({"link": {"mtu": 100}}));
    let e = check(&cfg).unwrap_err().to_string();
    assert!(e.contains("link.mtu") && e.contains(">= 104"), "{e}");
    // Nagle modes and transports are enums: an unknown one is refused when the
    // configuration is parsed, naming the allowed values.
    let e =
        serde_json::from_value::<coaplab_engine::config::TcpSection>(json!({"nagle": "sometimes"}))
            .unwrap_err()
            .to_string();
    assert!(
        e.contains("minshall") && e.contains("classic") && e.contains("off"),
        "{e}"
    );
    let e = coaplab_engine::config::RunConfig::from_json(r#"{"coap": {"transport": "sctp"}}"#)
        .unwrap_err();
    assert!(e.contains("udp") && e.contains("tcp"), "{e}");
}

/// The capture holds every segment sent, with real headers; the client's first data segment
/// carries its CSM alone and the next one (random client) the GET, framed per RFC 8323;
/// each direction's stream starts with a CSM.
#[test]
fn pcap_segments_carry_rfc8323_frames() {
    let cfg = tcp(json!({"workload": {"kind": "random", "exchanges": 2, "batch": [2, 2]}}));
    let mut pcap = Vec::new();
    let r = run(&cfg, 0, Some(&mut pcap)).unwrap();
    // Records: 24-byte global header, then 16-byte record headers.
    let mut at = 24;
    let mut packets = Vec::new();
    while at < pcap.len() {
        let len = u32::from_le_bytes(pcap[at + 8..at + 12].try_into().unwrap()) as usize;
        packets.push(&pcap[at + 16..at + 16 + len]);
        at += 16 + len;
    }
    assert_eq!(packets.len() as u64, r.tcp.unwrap().segments_sent);
    // IPv4 protocol 6, source not the server (192.0.2.1), payload beyond the TCP header
    // (data offset in the high nibble of byte 12 of the TCP header).
    let tcp_header = |p: &[u8]| usize::from(p[32] >> 4) * 4;
    let mut client_data = packets
        .iter()
        .filter(|p| p[9] == 6 && p[12..16] != [192, 0, 2, 1] && p.len() > 20 + tcp_header(p));
    let first_data = client_data.next().expect("a client data segment");
    let payload = &first_data[20 + tcp_header(first_data)..];
    let (csm, used) = decode_frame(payload).unwrap().unwrap();
    assert_eq!(csm.code, signal::CSM);
    assert_eq!(csm.options[0].0, signal::MAX_MESSAGE_SIZE);
    assert_eq!(used, payload.len(), "the CSM is a segment of its own");
    let second = client_data.next().expect("the GET");
    let (get, used) = decode_frame(&second[20 + tcp_header(second)..])
        .unwrap()
        .unwrap();
    assert_eq!(get.code, 0x01);
    assert_eq!(used, second.len() - 20 - tcp_header(second));

    // Reassemble each direction of the first connection (client port 49152) from the
    // capture — segments by sequence number, retransmissions once — and run the RFC 8323
    // session rules on the bytes: each side's first message is its CSM, then the messages.
    for (from_server, code) in [(false, 0x01u8), (true, 0x45u8)] {
        let mut segs: Vec<(u32, Vec<u8>)> = packets
            .iter()
            .filter(|p| (p[12..16] == [192, 0, 2, 1]) == from_server)
            .filter(|p| {
                let port = if from_server { &p[22..24] } else { &p[20..22] };
                u16::from_be_bytes([port[0], port[1]]) == 49152
            })
            .filter(|p| p.len() > 20 + tcp_header(p))
            .map(|p| {
                let seq = u32::from_be_bytes(p[24..28].try_into().unwrap());
                (seq, p[20 + tcp_header(p)..].to_vec())
            })
            .collect();
        segs.sort_by_key(|s| s.0);
        segs.dedup_by_key(|s| s.0);
        let stream: Vec<u8> = segs.into_iter().flat_map(|s| s.1).collect();
        let mut session = Session::new(MAX_MESSAGE_SIZE);
        let mut events = Vec::new();
        session.on_bytes(&stream, &mut events);
        assert!(
            matches!(
                events[0],
                SessionEvent::Csm {
                    block_wise: true,
                    ..
                }
            ),
            "{events:?}"
        );
        let codes: Vec<u8> = events[1..]
            .iter()
            .map(|e| match e {
                SessionEvent::Message(m) => m.code,
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(codes, vec![code, code], "two GETs, two 2.05s");
    }
}

/// Burst over TCP: background clients connect first; the burst's clients connect at
/// `burst_at_s` and each sends its exchanges once its connection is up.
#[test]
fn burst_clients_connect_at_the_burst_and_settle() {
    let cfg = tcp(
        json!({"workload": {"kind": "burst", "background": 3, "exchanges": 20,
                                      "burst_at_s": 5.0, "burst_clients": 5, "burst_exchanges": 3}}),
    );
    let r = run(&cfg, 0, None).unwrap();
    assert_eq!(r.clients.len(), 8);
    for c in &r.clients[3..] {
        assert_eq!(c.exchanges_completed, 3);
        // A burst client's first request follows its handshake and CSM exchange: at least
        // 5 s + ≈ 1.28 s (as computed above, with the start offset on top).
        assert!(
            c.first_request_s.unwrap() >= 5.0 + 1.27,
            "{:?}",
            c.first_request_s
        );
    }
    let settle = r.settling_time_s.unwrap();
    // 80 % of 15 exchanges = 12 → the 4th exchange round of the burst at the earliest: more
    // than the handshake + CSM (1.28 s) plus one exchange (0.65 s).
    assert!(settle > 1.9 && settle < 20.0, "{settle}");
}

/// A client whose every packet is lost gives up after `syn_retries`. Exact timers (`hz = 0`):
/// SYN at 0, retries at 2 s and 2 + 4 = 6 s, failure when the third timer (4 · 2 = 8 s)
/// expires at 14 s. At HZ 250 (docs/model.md "Host timers"; 4 ms jiffies): 2 s = 500
/// jiffies, level 1 → ((500 >> 3) + 1) << 3 = 504 → 2.016 s; then 4 s = 1000 jiffies from
/// jiffy 504, level 2: e = 1504 → ((1504 >> 6) + 1) << 6 = 1536 → 6.144 s; then 8 s = 2000
/// jiffies: e = 3536 → 56 << 6 = 3584 → 14.336 s. Its 5 exchanges fail.
#[test]
fn syn_retries_exhausted_fail_the_clients_exchanges() {
    for (hz, gives_up) in [(0, 14.0), (250, 14.336)] {
        let mut cfg = tcp(json!({"workload": {"clients": 1, "exchanges": 5},
                             "link": {"errors": {"good_mean_ms": 1000.0, "good_min_ms": 1000.0,
                                                 "good_max_ms": 1000.0, "good_loss": 1.0,
                                                 "bad_mean_ms": 1.0, "bad_min_ms": 1.0,
                                                 "bad_max_ms": 1.0, "bad_loss": 1.0}}}));
        cfg.tcp = Some(section(json!({"syn_retries": 2, "hz": hz})));
        let r = run(&cfg, 0, None).unwrap();
        let c = &r.clients[0];
        assert_eq!((c.exchanges_completed, c.exchanges_failed), (0, 5));
        assert_eq!(c.last_end_s, Some(gives_up), "hz {hz}");
        let t = c.tcp.unwrap();
        assert_eq!((t.syn_retransmissions, t.rto_expirations), (2, 3));
    }
}

/// The `[tcp]` section reaches the model: with a 10-segment initial window the firmware
/// transfer through the unlimited buffer wastes less time in slow start.
#[test]
fn tcp_section_parameters_take_effect() {
    let base =
        tcp(json!({"workload": {"kind": "firmware"}, "link": {"buffer_bytes": 1_410_000u64}}));
    let fct = |iw: u32| {
        let mut cfg = base.clone();
        cfg.tcp = Some(section(json!({"initial_window": iw})));
        run(&cfg, 0, None).unwrap().clients[0].fct_s.unwrap()
    };
    let (iw4, iw10) = (fct(4), fct(10));
    assert!(iw10 < iw4 - 0.2, "IW 10 {iw10} vs IW 4 {iw4}");
}
