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

mod without_sack {
    //! BBR's sender segment by segment (smoltcp style, as tests/tcp_model.rs does for New
    //! Reno): Linux counts what is in flight as `tcp_packets_in_flight` = sent − reported by
    //! duplicate ACKs (`sacked_out`) − marked lost (`lost_out`) + retransmitted, and sends new
    //! data (`tcp_cwnd_test`) and retransmissions (`tcp_xmit_retransmit_queue`) only below
    //! cwnd. Every value below is worked out by hand.

    use coaplab_cc::Instant;
    use coaplab_engine::tcp::congestion::bbr::Bbr;
    use coaplab_engine::tcp::congestion::bbr::Mode;
    use coaplab_engine::tcp::congestion::controller;
    use coaplab_engine::tcp::{Connection, Segment, Seq, TcpConfig, Transmit};

    const MSS: u32 = 256;
    const ISS: Seq = Seq(1000);
    const PEER_ISS: Seq = Seq(5000);

    fn ms(v: u64) -> Instant {
        Instant::from_millis(v)
    }

    fn ack(off: u32) -> Segment {
        Segment {
            seq: PEER_ISS + 1,
            ack: Some(ISS + 1 + off),
            syn: false,
            fin: false,
            rst: false,
            len: 0,
            mss: None,
        }
    }

    /// Data segments sent: (segment number, retransmission).
    type Sent = Vec<(u32, bool)>;

    /// A connection that sent its SYN at 0 and got the SYN-ACK (MSS 256) at 600 ms.
    fn connected_at_600_ms(cfg: TcpConfig) -> Connection {
        let mut c = Connection::connect(cfg, ISS);
        sent(&mut c, 0);
        c.handle_segment(
            ms(600),
            &Segment {
                seq: PEER_ISS,
                ack: Some(ISS + 1),
                syn: true,
                fin: false,
                rst: false,
                len: 0,
                mss: Some(256),
            },
        );
        sent(&mut c, 600);
        c
    }

    /// Data segments sent at `t`.
    fn sent(c: &mut Connection, t: u64) -> Sent {
        std::iter::from_fn(|| c.poll_transmit(ms(t)))
            .filter(|x: &Transmit| x.segment.len > 0)
            .map(|x| ((x.segment.seq - (ISS + 1)) / MSS, x.retransmission))
            .collect()
    }

    /// The firmware's failure on the 2 500-byte buffer in miniature: a hole repaired one
    /// partial ACK per round trip while segments lost beyond it never produce duplicate
    /// ACKs, so Linux keeps counting them in flight; when ProbeRTT caps cwnd at 4 segments
    /// the next hole cannot be retransmitted, and only the timeout resends it.
    #[test]
    fn probe_rtt_withholds_the_retransmission_until_the_timeout() {
        let cfg = TcpConfig {
            congestion: controller("bbr").unwrap(),
            initial_window_segments: 6,
            hz: 0,
            ..TcpConfig::default()
        };
        // SYN-ACK at 600 ms: RTT 600 ms → RTO 600 + 4·300 = 1800 ms; BBR's RTprop 600 ms,
        // stamped at 600 ms (expires after 10.6 s). Pacing before any bandwidth sample:
        // 739/256 × 1536 B / 0.6 s = 2560 · 739 / 256 = 7390 B/s: a segment per 34.6 ms.
        let mut c = connected_at_600_ms(cfg);
        c.write(40 * MSS);
        // The initial window, 6 segments, one per pacing interval (polled every 50 ms).
        for (i, t) in (9000..9300).step_by(50).enumerate() {
            assert_eq!(sent(&mut c, t), vec![(i as u32, false)], "at {t} ms");
        }
        assert!(
            sent(&mut c, 9300).is_empty(),
            "cwnd 6 segments, 6 in flight"
        );
        // Segment 0 is lost; 1–5 arrive. (time, segments sent after the duplicate ACK, then
        // after one more pacing interval, cwnd in segments after the ACK):
        // dup 1: 1 reported, 1 delivered < 10 (Startup grows cwnd while `delivered` <
        //   TCP_INIT_CWND) → cwnd 7; in flight 6 − 1 = 5 → segments 6, then 7.
        // dup 2: cwnd 8; in flight 8 − 2 = 6 → 8, then 9.
        // dup 3: fast retransmit. The ACK reports 1 lost (cwnd 8 − 1 = 7); the first round of
        //   recovery conserves packets: cwnd = in flight + 1 = (10 − 3 reported − 1 lost) + 1
        //   = 7; 6 in flight < 7 → segment 0 again; then 7 in flight = cwnd: nothing new.
        // dup 4, 5 (segments 4, 5 arrived): in flight 10 − 4 = 6, 11 − 5 = 6 < cwnd
        //   max(7, 6 + 1) = 7 → one new segment each (10, 11).
        let table: [(u64, Sent, Sent, u32); 5] = [
            (9700, vec![(6, false)], vec![(7, false)], 7),
            (9800, vec![(8, false)], vec![(9, false)], 8),
            (9900, vec![(0, true)], vec![], 7),
            (10_000, vec![(10, false)], vec![], 7),
            (10_100, vec![(11, false)], vec![], 7),
        ];
        for (t, now, later, cwnd) in table {
            c.handle_segment(ms(t), &ack(0));
            assert_eq!(
                c.cwnd(),
                cwnd * MSS,
                "cwnd after the duplicate ACK at {t} ms"
            );
            assert_eq!(sent(&mut c, t), now, "at {t} ms");
            assert_eq!(sent(&mut c, t + 50), later, "at {} ms", t + 50);
        }
        assert!(c.in_recovery());
        // Segments 6–11 are lost. The retransmitted 0 arrives at 10.7 s: the receiver
        // acknowledges up to the next hole, 6 (a partial ACK), the first ACK of new data since
        // the application wrote (its `idle_restart` ends with it, so no ProbeRTT yet, though
        // RTprop expired at 10.6 s). Delivery-rate sample: 3 segments since the retransmission
        // (768 B) over max(9.9 − 9.0, 10.7 − 9.9) = 0.9 s = 853 B/s, a new round. cwnd 7 − 1
        // lost = 6, below the target 2.885 × 853 B/s × 0.6 s = 1478 B → 6 + 3 = 9 → 10
        // segments, + 1 acknowledged → 7. Marked lost: 6; in flight 7..11 = 5 < 7 → 6 is
        // resent; then 6 in flight < 7 → one new segment (12).
        c.handle_segment(ms(10_700), &ack(6 * MSS));
        assert_eq!(c.cwnd(), 7 * MSS);
        assert_eq!(sent(&mut c, 10_700), vec![(6, true)]);
        assert_eq!(sent(&mut c, 10_750), vec![(12, false)]);
        assert!(sent(&mut c, 10_800).is_empty());
        // Segment 7 onwards is lost. The resent 6 arrives: partial ACK at 11.4 s → ProbeRTT
        // (RTprop expired, no idle restart any more): cwnd 4 segments. Marked lost: 7; in
        // flight 8..12 = 5 segments ≥ 4, so the retransmission of 7 waits (New Reno would
        // send it at once, RFC 6582 §3.2 step 5).
        c.handle_segment(ms(11_400), &ack(7 * MSS));
        let b = c.controller().as_any().downcast_ref::<Bbr>().unwrap();
        assert_eq!((b.mode, b.cwnd), (Mode::ProbeRtt, 4 * MSS));
        assert_eq!(c.stats.partial_ack_retransmissions, 2);
        assert!(sent(&mut c, 11_400).is_empty());
        assert!(sent(&mut c, 13_000).is_empty());
        // Nothing arrives any more: the timer (armed at 11.4 s, RTO 1.8 s) fires at 13.2 s;
        // every unacknowledged segment is lost (cwnd 1 segment): 7 is resent.
        assert_eq!(c.poll_timeout(), Some(ms(13_200)));
        c.handle_timeout(ms(13_200));
        assert_eq!(sent(&mut c, 13_200), vec![(7, true)]);
        assert_eq!(c.stats.rto_expirations, 1);
        // 7 arrives: ACK of 8 at 13.9 s, still in the loss state (13 segments were sent
        // before the timeout). cwnd 1 + 1 acknowledged = 2 segments → the minimum 4 (ProbeRTT
        // keeps it at 4). Go-back-N resends 8, 9, 10, 11, one per pacing interval.
        c.handle_segment(ms(13_900), &ack(8 * MSS));
        assert_eq!(c.cwnd(), 4 * MSS);
        for (i, t) in (13_900..14_100).step_by(50).enumerate() {
            assert_eq!(sent(&mut c, t), vec![(8 + i as u32, true)], "at {t} ms");
        }
        assert!(sent(&mut c, 14_100).is_empty());
        // A duplicate ACK now answers a resent segment, not new data (nothing was sent
        // beyond the 13 segments of before the timeout): Linux does not count it as a
        // segment out of flight (`tcp_process_loss`), so 4 stay in flight and 12 waits.
        c.handle_segment(ms(14_200), &ack(8 * MSS));
        assert!(sent(&mut c, 14_200).is_empty());
    }

    /// Linux's Reno reordering detection (`tcp_check_reno_reordering`): a duplicate ACK more
    /// than the segments outstanding (less the hole) can explain means reordering, and
    /// `tp->reordering` — the duplicate ACKs fast retransmit waits for — becomes the number
    /// outstanding. (After a go-back-N the receiver answers every segment it already had
    /// with a duplicate ACK; the kernel's `reordering` reached 36–155 on the 2 500-byte
    /// buffer, docs/emulation.md.)
    #[test]
    fn surplus_duplicate_acks_set_the_reordering_threshold() {
        let cfg = TcpConfig {
            congestion: controller("bbr").unwrap(),
            hz: 0,
            ..TcpConfig::default()
        };
        let mut c = connected_at_600_ms(cfg);
        // Two segments (pacing 739/256 × 1024 B / 0.6 s = 4924 B/s: 52 ms apart).
        c.write(2 * MSS);
        assert_eq!(sent(&mut c, 1000), vec![(0, false)]);
        assert_eq!(sent(&mut c, 1100), vec![(1, false)]);
        // Duplicate ACKs of 0 (2 outstanding, 1 hole): the first reports 1 segment received;
        // the second would make 2 + 1 hole > 2 → capped at 1, reordering = 2; the third
        // likewise. Received-count 1 < 2: no fast retransmit (a fixed threshold of 3 would
        // resend 0 at the third).
        for t in [1700, 1750, 1800] {
            c.handle_segment(ms(t), &ack(0));
            assert!(sent(&mut c, t).is_empty(), "at {t} ms");
        }
        assert_eq!(c.stats.fast_retransmits, 0);
        // One more segment (in flight 2 − 1 reported = 1 < cwnd): segment 2. Its duplicate
        // ACK makes 2 reported of 3 outstanding (2 + 1 hole ≤ 3): 2 ≥ reordering 2 → fast
        // retransmit of 0 (the duplicate-ACK count since the last new ACK is 4).
        c.write(MSS);
        assert_eq!(sent(&mut c, 1900), vec![(2, false)]);
        c.handle_segment(ms(2000), &ack(0));
        assert_eq!(sent(&mut c, 2000), vec![(0, true)]);
        assert_eq!(c.stats.fast_retransmits, 1);
    }
}
