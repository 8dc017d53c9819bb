//! BBR (docs/model.md "BBR") end to end on the testbed: the 102 400-byte firmware transfer
//! against its hand-computed ideal, and pacing as real transmission times.

mod common;

use coaplab_engine::testbed::run;
use serde_json::json;

fn firmware(cc: &str, buffer: u64) -> coaplab_engine::config::RunConfig {
    let mut cfg = common::config(json!({"coap": {"transport": "tcp", "cc": cc},
        "workload": {"kind": "firmware"},
        "link": {"buffer_bytes": buffer, "path_delay_ms": [10.0, 10.0]}}));
    cfg.trace = true;
    cfg
}

/// The ideal completion time on the unlimited buffer (1 410 000 B), from the first request:
/// the GET (10 B + 40 B headers = 50 B) takes 50·8/60 000 = 6.666667 ms on the uplink, 200 ms
/// of delay and 10 ms of path → the server at 216.666667 ms; the response (102 407 B = 400
/// segments of 256 B + a 7-byte tail; 400·296 + 47 = 118 447 B of IP packets) needs 10 ms of
/// path, then 118 447·8/30 000 = 31.585867 s of back-to-back serialization on the downlink,
/// then 400 ms: ideal = 0.216667 + 0.010 + 31.585867 + 0.400 = 32.212533 s. No sender can
/// beat it. BBR loses link time (a) in Startup, while in flight is below the BDP (≈ 0.71 s ·
/// 3243 B/s ≈ 9 segments) — the first rounds from the 4-segment initial window, ≈ 1 s — and
/// (b) in each ProbeRTT (every 10 s without a new RTprop minimum: cwnd 4 segments for
/// 200 ms and a round, ≈ 0.7 s of a mostly idle link each, two or three times in ≈ 33 s).
/// Tolerance: ideal ≤ FCT ≤ ideal + 3.5 s (≈ 11 %), (a) + 3 × (b) with 0.4 s to spare.
#[test]
fn firmware_on_the_unlimited_buffer_is_near_the_ideal() {
    let r = run(&firmware("bbr", 1_410_000), 0, None).unwrap();
    let fct = r.clients[0].fct_s.unwrap();
    let ideal = 32.212_533;
    assert!(fct >= ideal && fct <= ideal + 3.5, "{fct}");
    assert_eq!(r.packets.dropped_buffer, 0);
    let t = r.clients[0].tcp.unwrap();
    assert_eq!(t.segments_retransmitted, 0);
    // Every BBR state was visited: Startup, Drain (or straight to ProbeBW), ProbeBW, ProbeRTT.
    let cc = &r.seq_traces.as_ref().unwrap()[0].cc;
    for mode in ["startup", "probe_bw", "probe_rtt"] {
        assert!(
            cc.iter().any(|row| row.1 == "down" && row.2 == mode),
            "{mode}"
        );
    }
}

/// Pacing is in the event loop: BBR never sends two full segments at the same instant once
/// the handshake is over, New Reno sends its window as a burst (an ACK for two segments
/// releases three or four at once in slow start).
#[test]
fn bbr_paces_new_reno_bursts() {
    let bursts = |cc: &str| {
        let r = run(&firmware(cc, 1_410_000), 0, None).unwrap();
        let sends: Vec<f64> = r.seq_traces.as_ref().unwrap()[0]
            .points
            .iter()
            .filter(|p| p.1 == "down" && p.2 == "send" && p.4 == 256)
            .map(|p| p.0)
            .collect();
        sends.windows(2).filter(|w| w[0] == w[1]).count()
    };
    assert_eq!(bursts("bbr"), 0);
    assert!(bursts("newreno") > 10);
}

/// The small buffers lose packets in Startup (BBR does not back off on loss as New Reno
/// does); the transfer still completes, with retransmissions.
#[test]
fn firmware_through_the_2500_byte_buffer_completes() {
    let r = run(&firmware("bbr", 2500), 0, None).unwrap();
    let c = &r.clients[0];
    assert_eq!((c.exchanges_completed, c.exchanges_failed), (1, 0));
    assert!(r.packets.dropped_buffer > 0);
    assert!(c.tcp.unwrap().segments_retransmitted >= r.packets.dropped_buffer);
}
