//! The TCP model, segment by segment at explicit times (smoltcp style). Every expected value is
//! worked out by hand from the RFCs / docs/design.md §4.2 in the comments.

use coaplab_cc::{Duration, Instant};
use coaplab_engine::tcp::{
    ConnEvent, Connection, DataArrival, Failure, Nagle, Segment, Seq, State, TcpConfig, Transmit,
};

const MSS: u32 = 256;
const ISS: Seq = Seq(1000);
const PEER_ISS: Seq = Seq(5000);

/// The default parameters with exact timers (`hz = 0`): the hand-computed instants below
/// are the RFC 6298 ones; `host_timers_*` tests the timer wheel.
fn exact() -> TcpConfig {
    TcpConfig {
        hz: 0,
        ..TcpConfig::default()
    }
}

fn ms(v: u64) -> Instant {
    Instant::from_millis(v)
}

fn dur_ms(v: u64) -> Duration {
    Duration::from_millis(v)
}

/// A pure ACK from the peer.
fn ack(a: u32) -> Segment {
    Segment {
        seq: PEER_ISS + 1,
        ack: Some(Seq(a)),
        syn: false,
        fin: false,
        rst: false,
        len: 0,
        mss: None,
    }
}

/// A data segment from the peer at stream offset `off` (0 = first byte after its SYN).
fn data(off: u32, len: u32) -> Segment {
    Segment {
        seq: PEER_ISS + 1 + off,
        ack: Some(ISS + 1),
        syn: false,
        fin: false,
        rst: false,
        len,
        mss: None,
    }
}

fn syn_ack(iss_acked: Seq) -> Segment {
    Segment {
        seq: PEER_ISS,
        ack: Some(iss_acked + 1),
        syn: true,
        fin: false,
        rst: false,
        len: 0,
        mss: Some(256),
    }
}

fn drain(c: &mut Connection, now: Instant) -> Vec<Transmit> {
    std::iter::from_fn(|| c.poll_transmit(now)).collect()
}

/// Data offsets (relative to the first data byte) and lengths of data segments.
fn offsets(ts: &[Transmit]) -> Vec<(u32, u32)> {
    ts.iter()
        .filter(|t| t.segment.len > 0)
        .map(|t| (t.segment.seq - (ISS + 1), t.segment.len))
        .collect()
}

/// First data byte's sequence number + `off`.
fn at(off: u32) -> u32 {
    (ISS + 1 + off).0
}

/// A client connection whose handshake completed at 600 ms: SYN at 0, SYN-ACK at 600 ms →
/// first RTT sample 600 ms: SRTT = 600, rttvar = max(600/2, 50) = 300 → RTO = 600 + 4·300
/// = 1800 ms. The pure ACK of the SYN-ACK has been sent.
fn established() -> Connection {
    established_with_cfg(exact())
}

fn established_with_cfg(cfg: TcpConfig) -> Connection {
    let mut c = Connection::connect(cfg, ISS);
    let syn = drain(&mut c, ms(0));
    assert_eq!(syn.len(), 1);
    assert!(syn[0].segment.syn && syn[0].segment.mss == Some(256));
    c.handle_segment(ms(600), &syn_ack(ISS));
    assert_eq!(c.state(), State::Established);
    let out = drain(&mut c, ms(600));
    assert_eq!(out.len(), 1, "the handshake's final ACK");
    assert!(out[0].segment.is_pure_ack() && out[0].segment.ack == Some(PEER_ISS + 1));
    assert_eq!(c.rto(), dur_ms(1800));
    c
}

#[test]
fn handshake_with_a_lost_syn() {
    let mut c = Connection::connect(exact(), ISS);
    assert_eq!(drain(&mut c, ms(0)).len(), 1);
    // Initial RTO 2 s for the SYN too (docs/design.md §4.2).
    assert_eq!(c.poll_timeout(), Some(ms(2000)));
    c.handle_timeout(ms(2000));
    let again = drain(&mut c, ms(2000));
    assert_eq!(again.len(), 1);
    assert!(again[0].segment.syn && again[0].retransmission);
    assert_eq!(c.stats.syn_retransmissions, 1);
    // Backoff: 2 s · 2 = 4 s → next expiry at 6 s.
    assert_eq!(c.poll_timeout(), Some(ms(6000)));
    c.handle_segment(ms(2700), &syn_ack(ISS));
    assert_eq!(c.state(), State::Established);
    // Karn: the SYN was sent twice, so no sample; the backed-off 4 s is kept.
    assert_eq!(c.stats.rtt_samples, 0);
    assert_eq!(c.rto(), dur_ms(4000));
    // RFC 5681 §3.1: after a lost SYN the initial window is one segment.
    assert_eq!(c.cwnd(), MSS);
}

#[test]
fn syn_retries_are_bounded() {
    let cfg = TcpConfig {
        syn_retries: 2,
        ..exact()
    };
    let mut c = Connection::connect(cfg, ISS);
    drain(&mut c, ms(0));
    // Expiries at 2 s, 2 + 4 = 6 s, then 6 + 8 = 14 s gives up after 2 retries.
    for (t, sends) in [(2000, 1), (6000, 1), (14000, 0)] {
        assert_eq!(c.poll_timeout(), Some(ms(t)));
        c.handle_timeout(ms(t));
        assert_eq!(drain(&mut c, ms(t)).len(), sends);
    }
    assert_eq!(c.state(), State::Failed);
    assert_eq!(c.poll_timeout(), None);
}

#[test]
fn handshake_with_a_lost_syn_ack() {
    let syn = Segment {
        seq: PEER_ISS,
        ack: None,
        syn: true,
        fin: false,
        rst: false,
        len: 0,
        mss: Some(256),
    };
    let mut s = Connection::accept(exact(), ISS, &syn);
    let out = drain(&mut s, ms(0));
    assert_eq!(out.len(), 1);
    assert!(out[0].segment.syn && out[0].segment.ack == Some(PEER_ISS + 1));
    // The SYN-ACK is lost; the server's own timer resends it at 2 s …
    c_expect_timeout(&s, 2000);
    s.handle_timeout(ms(2000));
    let again = drain(&mut s, ms(2000));
    assert!(again[0].segment.syn && again[0].retransmission);
    // … and the client's retransmitted SYN (at 2 s, arriving 2.3 s) triggers another.
    s.handle_segment(ms(2300), &syn);
    assert_eq!(drain(&mut s, ms(2300)).len(), 1);
    assert_eq!(s.stats.synack_retransmissions, 2);
    // The client's ACK completes the handshake; Karn: no sample, 4 s kept, IW 1 segment.
    s.handle_segment(
        ms(2900),
        &Segment {
            seq: PEER_ISS + 1,
            ack: Some(ISS + 1),
            syn: false,
            fin: false,
            rst: false,
            len: 0,
            mss: None,
        },
    );
    assert_eq!(s.state(), State::Established);
    assert_eq!(s.rto(), dur_ms(4000));
    assert_eq!(s.cwnd(), MSS);
}

fn c_expect_timeout(c: &Connection, t: u64) {
    assert_eq!(c.poll_timeout(), Some(ms(t)));
}

fn slow_start_table(limit: Option<u32>, table: [(u64, u32, u32, usize); 3]) {
    let mut c = Connection::connect(
        TcpConfig {
            slow_start_limit_segments: limit,
            ..exact()
        },
        ISS,
    );
    drain(&mut c, ms(0));
    c.handle_segment(ms(600), &syn_ack(ISS));
    c.write(20 * MSS);
    // IW 4: segments at offsets 0, 256, 512, 768 (the handshake's ACK rides on the first).
    let out = drain(&mut c, ms(600));
    assert_eq!(
        offsets(&out),
        vec![(0, 256), (256, 256), (512, 256), (768, 256)]
    );
    for (t, a, cwnd, sent) in table {
        c.handle_segment(ms(t), &ack(at(a)));
        assert_eq!(c.cwnd(), cwnd, "cwnd after the ACK at {t} ms");
        let out = drain(&mut c, ms(t));
        assert_eq!(offsets(&out).len(), sent, "segments sent at {t} ms");
    }
}

#[test]
fn slow_start_grows_per_ack() {
    // Linux (default): cwnd += acknowledged bytes. (time, ACK offset, cwnd after, sent):
    // ACK of 2 segments: 1024 + 512 = 1536; flight 512 → 4 new (512 + 4·256 = 1536).
    // ACK of 2 more: 2048; flight 8·256 − 1024 = 1024 → 4 new.
    // ACK of 1: 2304; flight 12·256 − 1280 = 1792 → 2 new.
    slow_start_table(
        None,
        [
            (1300, 512, 1536, 4),
            (1400, 1024, 2048, 4),
            (1500, 1280, 2304, 2),
        ],
    );
    // RFC 5681 `cwnd += min(N, SMSS)`: ACK of 2 → 1280; flight 512 → 3 new. ACK of 2 →
    // 1536; flight 7·256 − 1024 = 768 → 3 new. ACK of 1 → 1792; flight 10·256 − 1280 =
    // 1280 → 2 new.
    slow_start_table(
        Some(1),
        [
            (1300, 512, 1280, 3),
            (1400, 1024, 1536, 3),
            (1500, 1280, 1792, 2),
        ],
    );
}

#[test]
fn delayed_ack_timer_and_every_second_full_segment() {
    let mut c = established();
    // One full segment: no ACK now, the 200 ms timer runs.
    assert_eq!(
        c.handle_segment(ms(1000), &data(0, 256)),
        Some(DataArrival::InOrder)
    );
    assert!(drain(&mut c, ms(1000)).is_empty());
    c_expect_timeout(&c, 1200);
    // The second full segment is acknowledged at once.
    c.handle_segment(ms(1100), &data(256, 256));
    let out = drain(&mut c, ms(1100));
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].segment.ack, Some(PEER_ISS + 1 + 512));
    assert_eq!(c.poll_timeout(), None);
    // A lone small segment waits for the timer: 1300 + 200 = 1500 ms.
    c.handle_segment(ms(1300), &data(512, 10));
    assert!(drain(&mut c, ms(1300)).is_empty());
    c_expect_timeout(&c, 1500);
    c.handle_timeout(ms(1500));
    let out = drain(&mut c, ms(1500));
    assert_eq!(out[0].segment.ack, Some(PEER_ISS + 1 + 522));
    // Out-of-order data is acknowledged at once with the old ACK number (a duplicate ACK) …
    assert_eq!(
        c.handle_segment(ms(1600), &data(778, 256)),
        Some(DataArrival::OutOfOrder)
    );
    assert_eq!(
        drain(&mut c, ms(1600))[0].segment.ack,
        Some(PEER_ISS + 1 + 522)
    );
    // … and so is the segment filling the gap, acknowledging both.
    assert_eq!(
        c.handle_segment(ms(1700), &data(522, 256)),
        Some(DataArrival::InOrder)
    );
    assert_eq!(
        drain(&mut c, ms(1700))[0].segment.ack,
        Some(PEER_ISS + 1 + 1034)
    );
    // A duplicate is acknowledged at once too.
    assert_eq!(
        c.handle_segment(ms(1800), &data(0, 256)),
        Some(DataArrival::Duplicate)
    );
    assert_eq!(drain(&mut c, ms(1800)).len(), 1);
}

#[test]
fn ack_rides_on_data() {
    let mut c = established();
    c.handle_segment(ms(1000), &data(0, 10));
    c.write(64);
    let out = drain(&mut c, ms(1000));
    assert_eq!(out.len(), 1, "one data segment, no separate ACK");
    assert_eq!(out[0].segment.len, 64);
    assert_eq!(out[0].segment.ack, Some(PEER_ISS + 11));
    assert_eq!(
        c.poll_timeout(),
        Some(ms(1000) + dur_ms(1800)),
        "only the RTO"
    );
}

fn established_with(nagle: Nagle) -> Connection {
    let mut c = Connection::connect(TcpConfig { nagle, ..exact() }, ISS);
    drain(&mut c, ms(0));
    c.handle_segment(ms(600), &syn_ack(ISS));
    drain(&mut c, ms(600));
    c
}

#[test]
fn nagle_holds_a_small_segment_while_a_small_one_is_unacknowledged() {
    // Linux (Minshall): the small tail of a write goes at once after full segments …
    let mut c = established();
    c.write(300);
    assert_eq!(offsets(&drain(&mut c, ms(600))), vec![(0, 256), (256, 44)]);
    // … but a further small write waits while that small segment is unacknowledged,
    c.write(10);
    assert!(drain(&mut c, ms(700)).is_empty());
    // and goes when it is acknowledged (full segments still in flight do not matter).
    c.handle_segment(ms(1300), &ack(at(300)));
    assert_eq!(offsets(&drain(&mut c, ms(1300))), vec![(300, 10)]);
    // RFC 896 as written: the tail waits for everything to be acknowledged.
    let mut n = established_with(Nagle::Classic);
    n.write(300);
    assert_eq!(offsets(&drain(&mut n, ms(600))), vec![(0, 256)]);
    n.handle_segment(ms(1300), &ack(at(256)));
    assert_eq!(offsets(&drain(&mut n, ms(1300))), vec![(256, 44)]);
    // Off: small segments go back to back.
    let mut o = established_with(Nagle::Off);
    o.write(10);
    o.write(10);
    assert_eq!(offsets(&drain(&mut o, ms(600))), vec![(0, 20)]);
    o.write(10);
    assert_eq!(offsets(&drain(&mut o, ms(610))), vec![(20, 10)]);
}

/// Sends 8 segments: IW 4, then two single-segment ACKs grow cwnd to 1536 (6 segments)
/// with offsets up to 8·256 sent.
fn eight_in_flight() -> Connection {
    let mut c = established();
    c.write(40 * MSS);
    drain(&mut c, ms(600));
    // ACK 1 segment: cwnd 1280, flight 768 → 2 more (offsets 1024, 1280).
    c.handle_segment(ms(1300), &ack(at(256)));
    assert_eq!(
        offsets(&drain(&mut c, ms(1300))),
        vec![(1024, 256), (1280, 256)]
    );
    // ACK 1 more: cwnd 1536, flight 1280 → 2 more (1536, 1792); snd_una = 512.
    c.handle_segment(ms(1400), &ack(at(512)));
    assert_eq!(
        offsets(&drain(&mut c, ms(1400))),
        vec![(1536, 256), (1792, 256)]
    );
    c
}

#[test]
fn limited_transmit_then_fast_retransmit_then_full_ack() {
    let mut c = eight_in_flight();
    // Segment at 512 is lost. Flight = 2048 − 512 = 1536 = cwnd.
    // Dup ACK 1 and 2: RFC 3042 lets one new segment each go beyond cwnd.
    c.handle_segment(ms(2000), &ack(at(512)));
    assert_eq!(offsets(&drain(&mut c, ms(2000))), vec![(2048, 256)]);
    c.handle_segment(ms(2100), &ack(at(512)));
    assert_eq!(offsets(&drain(&mut c, ms(2100))), vec![(2304, 256)]);
    assert_eq!(c.cwnd(), 1536, "limited transmit does not change cwnd");
    // Dup ACK 3: fast retransmit of offset 512. FlightSize = 2560 − 512 = 2048, less the
    // 512 bytes Limited Transmit sent (RFC 5681 §3.2 step 2) = 1536 → ssthresh 768,
    // cwnd = 768 + 3·256 = 1536.
    c.handle_segment(ms(2200), &ack(at(512)));
    let out = drain(&mut c, ms(2200));
    assert_eq!(offsets(&out), vec![(512, 256)]);
    assert!(out[0].retransmission && out[0].fast_retransmission);
    assert_eq!((c.ssthresh(), c.cwnd()), (768, 1536));
    assert!(c.in_recovery());
    assert_eq!(c.stats.fast_retransmits, 1);
    // Dup ACKs 4 and 5: cwnd inflated to 1792, 2048; flight 2048 → nothing new yet. Dup ACK
    // 6: 2304 → one new segment (offset 2560).
    for t in [2300, 2350] {
        c.handle_segment(ms(t), &ack(at(512)));
        assert!(offsets(&drain(&mut c, ms(t))).is_empty());
    }
    c.handle_segment(ms(2400), &ack(at(512)));
    assert_eq!(offsets(&drain(&mut c, ms(2400))), vec![(2560, 256)]);
    // Full ACK (everything up to recover = 2560): cwnd = min(ssthresh, max(flight, MSS)
    // + MSS) = min(768, 256 + 256) = 512 with flight 2816 − 2560 = 256.
    c.handle_segment(ms(2900), &ack(at(2560)));
    assert!(!c.in_recovery());
    assert_eq!(c.cwnd(), 512);
}

#[test]
fn partial_ack_retransmits_the_next_hole() {
    let mut c = eight_in_flight();
    // Segments at 512 and 1024 are lost.
    for t in [2000, 2100, 2200] {
        c.handle_segment(ms(t), &ack(at(512)));
        drain(&mut c, ms(t));
    }
    assert!(c.in_recovery());
    // recover = 2560 (two limited-transmit segments went out); cwnd = 768 + 768 = 1536 as
    // above. The retransmission of 512 arrives; the receiver acknowledges up to the next
    // hole at 1024: a partial ACK. cwnd 1536 − 512 acknowledged + 256 (≥ one MSS) = 1280.
    c.handle_segment(ms(2900), &ack(at(1024)));
    let out = drain(&mut c, ms(2900));
    assert_eq!(offsets(&out)[0], (1024, 256));
    assert!(out[0].retransmission);
    assert_eq!(c.cwnd(), 1280);
    assert!(c.in_recovery());
    assert_eq!(c.stats.partial_ack_retransmissions, 1);
}

#[test]
fn rto_backoff_karn_retention_and_collapse_on_a_new_sample() {
    let mut c = established(); // RTO 1800 ms
    c.write(2 * MSS);
    drain(&mut c, ms(1000));
    c_expect_timeout(&c, 2800);
    // Expiry: RTO doubles to 3600; go back to snd_una with cwnd 1 segment.
    c.handle_timeout(ms(2800));
    assert_eq!(c.rto(), dur_ms(3600));
    assert_eq!(c.cwnd(), MSS);
    // FlightSize 512 → ssthresh max(256, 512) = 512.
    assert_eq!(c.ssthresh(), 512);
    let out = drain(&mut c, ms(2800));
    assert_eq!(offsets(&out), vec![(0, 256)]);
    assert!(out[0].retransmission);
    c_expect_timeout(&c, 6400); // 2800 + 3600
                                // Second expiry: 7200; ssthresh is not reduced again for the same data.
    c.handle_timeout(ms(6400));
    assert_eq!((c.rto(), c.ssthresh()), (dur_ms(7200), 512));
    drain(&mut c, ms(6400));
    assert_eq!(c.stats.rto_expirations, 2);
    // The ACK of the retransmitted segment: Karn, no sample, the backed-off 7200 stays.
    c.handle_segment(ms(7000), &ack(at(256)));
    assert_eq!(c.rto(), dur_ms(7200));
    c_expect_timeout(&c, 14200);
    // Offset 256 was sent once, before the timeouts; going back to snd_una makes it due again:
    // cwnd after the ACK is 512 (slow start +256 acknowledged), so it goes out now, as a
    // (go-back-N) retransmission.
    let out = drain(&mut c, ms(7000));
    assert_eq!(offsets(&out), vec![(256, 256)]);
    assert!(out[0].retransmission);
    // New data, then its ACK: a valid sample of 700 ms collapses the RTO.
    // Linux estimator, second sample R = 700 with SRTT 600, mdev 300, rttvar 300:
    // SRTT = 600 + (700 − 600)/8 = 612.5; mdev = 3/4·300 + 1/4·100 = 250; mdev ≤ mdev_max
    // (300); snd_una passed rtt_seq → flight step: mdev_max (300) < rttvar (300)? no → rttvar
    // stays 300. RTO = 612.5 + 1200 = 1812.5 ms.
    c.handle_segment(ms(7600), &ack(at(512)));
    c.write(MSS);
    drain(&mut c, ms(7600));
    c.handle_segment(ms(8300), &ack(at(768)));
    assert_eq!(c.rto(), Duration::from_micros(1_812_500));
}

#[test]
fn rtt_samples_follow_the_linux_estimator() {
    let mut c = established();
    c.write(40 * MSS);
    drain(&mut c, ms(600)); // offsets 0..1024 sent at 600 ms
                            // (ACK time, ACK offset, expected SRTT µs, expected rttvar µs, expected RTO µs).
                            // State after the handshake: SRTT 600, mdev 300, mdev_max = rttvar = 300, rtt_seq = 1
                            // byte past the SYN (snd_nxt then).
                            // 1) ACK 512 at 1400: R = 800 (oldest newly acked sent at 600). err = +200:
                            //    SRTT = 600 + 25 = 625; mdev = 3/4·300 + 1/4·200 = 275 ≤ mdev_max 300.
                            //    snd_una (512) is after rtt_seq → step: mdev_max 300 < rttvar 300? no; rtt_seq =
                            //    snd_nxt = 1024, mdev_max = 50. RTO = 625 + 4·300 = 1825.
                            //    cwnd 1280, flight 512 → offsets 1024, 1280, 1536 sent at 1400.
                            // 2) ACK 1024 at 1500: R = 900: err = +275: SRTT = 625 + 34.375 = 659.375;
                            //    mdev = 206.25 + 68.75 = 275 > mdev_max 50 → mdev_max = 275, rttvar = max(300,
                            //    275) = 300. snd_una 1024 is not after rtt_seq 1024 → no step. RTO = 1859.375.
                            //    cwnd 1536, flight 768 → 3 more (1792, 2048, 2304) at 1500.
                            // 3) ACK 1536 at 2300: oldest newly acked (offset 1024) sent at 1400 → R = 900:
                            //    err = 240.625: SRTT = 659.375 + 30.078125 = 689.453125; mdev = 206.25 + 60.15625
                            //    = 266.40625 ≤ 275. snd_una 1536 after 1024 → step: mdev_max 275 < rttvar 300 →
                            //    rttvar = 300 − 25/4 = 293.75; rtt_seq = snd_nxt = 2560; mdev_max = 50.
                            //    RTO = 689.453125 + 1175 = 1864.453125.
    let table: [(u64, u32, u64, u64, u64); 3] = [
        (1400, 512, 625_000, 300_000, 1_825_000),
        (1500, 1024, 659_375, 300_000, 1_859_375),
        (2300, 1536, 689_453, 293_750, 1_864_453),
    ];
    for (t, a, srtt, rttvar, rto) in table {
        c.handle_segment(ms(t), &ack(at(a)));
        drain(&mut c, ms(t));
        let r = c.rtt();
        // Nanosecond arithmetic: compare at microsecond resolution.
        assert_eq!(r.srtt().unwrap().nanos() / 1000, srtt, "SRTT at {t}");
        assert_eq!(r.rttvar().unwrap().nanos() / 1000, rttvar, "rttvar at {t}");
        assert_eq!(c.rto().nanos() / 1000, rto, "RTO at {t}");
    }
}

#[test]
fn rto_is_capped_at_120_s() {
    let mut c = established();
    c.write(MSS);
    drain(&mut c, ms(600));
    // 1.8 → 3.6 → 7.2 → 14.4 → 28.8 → 57.6 → 115.2 → 120 (cap) → 120.
    let mut now = ms(600);
    let mut seen = Vec::new();
    for _ in 0..8 {
        now = c.poll_timeout().unwrap();
        c.handle_timeout(now);
        drain(&mut c, now);
        seen.push(c.rto().nanos() / 1_000_000);
    }
    assert_eq!(
        seen,
        vec![3600, 7200, 14400, 28800, 57600, 115200, 120000, 120000]
    );
    assert_eq!(c.poll_timeout(), Some(now + Duration::from_secs(120)));
}

#[test]
fn close_sends_fin_after_data_and_it_is_acknowledged() {
    let mut c = established();
    c.write(10);
    c.close();
    let out = drain(&mut c, ms(600));
    assert_eq!(out.len(), 1, "FIN rides on the last data segment");
    assert!(out[0].segment.fin && out[0].segment.len == 10);
    c.handle_segment(ms(1300), &ack(at(11)));
    assert!(c.all_acknowledged());
    assert_eq!(c.poll_timeout(), None);
}

/// A RST from the peer (no ACK) with sequence number `seq`.
fn rst(seq: Seq, ack: Option<Seq>) -> Segment {
    Segment {
        seq,
        ack,
        syn: false,
        fin: false,
        rst: true,
        len: 0,
        mss: None,
    }
}

#[test]
fn reset_for_follows_rfc_9293_closed_state() {
    // §3.10.7.1: an ACK-bearing segment gets <SEQ=SEG.ACK><CTL=RST> …
    let r = Segment::reset_for(&data(0, 10)).unwrap();
    assert_eq!((r.seq, r.ack, r.rst, r.len), (ISS + 1, None, true, 0));
    assert!(!r.is_pure_ack());
    // … one without an ACK <SEQ=0><ACK=SEG.SEQ+SEG.LEN><CTL=RST,ACK>: a SYN at 5000 occupies
    // one sequence number → ACK 5001.
    let syn = Segment {
        ack: None,
        mss: Some(256),
        ..syn_ack(ISS)
    };
    let r = Segment::reset_for(&syn).unwrap();
    assert_eq!((r.seq, r.ack, r.rst), (Seq(0), Some(Seq(5001)), true));
    // A RST is never answered.
    assert_eq!(Segment::reset_for(&rst(Seq(7), None)), None);
}

#[test]
fn data_retries_are_bounded() {
    let mut c = established_with_cfg(TcpConfig {
        max_retries: 2,
        ..exact()
    }); // RTO 1800 ms
    assert_eq!(c.poll_event(), Some(ConnEvent::Connected));
    c.write(MSS);
    assert_eq!(offsets(&drain(&mut c, ms(1000))), vec![(0, 256)]);
    // Expiries at 1000 + 1800 = 2800 and 2800 + 3600 = 6400 retransmit; the third, at
    // 6400 + 7200 = 13600 ms, finds 2 retransmissions done and gives up.
    for (t, sends) in [(2800, 1), (6400, 1), (13600, 0)] {
        assert_eq!(c.poll_timeout(), Some(ms(t)));
        c.handle_timeout(ms(t));
        assert_eq!(drain(&mut c, ms(t)).len(), sends);
    }
    assert_eq!(c.state(), State::Failed);
    assert_eq!(c.failure(), Some(Failure::Retries));
    assert_eq!(c.poll_event(), Some(ConnEvent::Failed));
    assert_eq!(c.poll_timeout(), None);
    assert_eq!(c.stats.retransmissions, 2);
}

#[test]
fn default_data_retries_are_linux_tcp_retries2() {
    // Linux `net.ipv4.tcp_retries2` defaults to 15 (Documentation/networking/ip-sysctl.rst).
    assert_eq!(exact().max_retries, 15);
    let mut c = established(); // RTO 1800 ms, capped at 120 s
    c.write(MSS);
    drain(&mut c, ms(1000));
    // Intervals min(1800·2^(k−1), 120 000) ms for k = 1..16: 1800 + 3600 + 7200 + 14 400 +
    // 28 800 + 57 600 + 115 200 = 228 600, then 9 · 120 000 = 1 080 000; the 16th expiry,
    // at 1000 + 1 308 600 = 1 309 600 ms, gives up after 15 retransmissions.
    let mut t = None;
    while let Some(at) = c.poll_timeout() {
        c.handle_timeout(at);
        drain(&mut c, at);
        t = Some(at);
    }
    assert_eq!(t, Some(ms(1_309_600)));
    assert_eq!(c.stats.retransmissions, 15);
    assert_eq!(c.failure(), Some(Failure::Retries));
}

#[test]
fn a_half_open_connection_is_reset_not_retransmitted_forever() {
    // The reproducer: the server end gives up its SYN-ACK (synack_retries = 0) while the
    // client, which got the SYN-ACK, is established and its data keeps being lost.
    let mut c = Connection::connect(exact(), ISS);
    let syn = drain(&mut c, ms(0))[0].segment;
    let server_cfg = TcpConfig {
        synack_retries: 0,
        ..exact()
    };
    let mut s = Connection::accept(server_cfg, PEER_ISS, &syn);
    let synack = drain(&mut s, ms(300))[0].segment;
    c.handle_segment(ms(900), &synack);
    assert_eq!(c.state(), State::Established);
    assert_eq!(c.poll_event(), Some(ConnEvent::Connected));
    c.write(10);
    let lost = drain(&mut c, ms(900));
    assert_eq!(offsets(&lost), vec![(0, 10)]);
    // The server's SYN-ACK timer (initial RTO 2 s) expires at 2300 ms: no retry allowed.
    assert_eq!(s.poll_timeout(), Some(ms(2300)));
    s.handle_timeout(ms(2300));
    assert_eq!(
        (s.state(), s.failure()),
        (State::Failed, Some(Failure::Handshake))
    );
    assert!(drain(&mut s, ms(2300)).is_empty());
    // Client RTO after the 900 ms SYN sample: 900 + 4·450 = 2700 ms → expiry at 3600 ms.
    assert_eq!(c.poll_timeout(), Some(ms(3600)));
    c.handle_timeout(ms(3600));
    let again = drain(&mut c, ms(3600));
    assert_eq!(offsets(&again), vec![(0, 10)]);
    // It reaches the failed server end, which answers with <SEQ=SEG.ACK><CTL=RST>: the
    // client's ACK field is the server's ISS + 1.
    assert_eq!(s.handle_segment(ms(3900), &again[0].segment), None);
    let reset = drain(&mut s, ms(3900));
    assert_eq!(reset.len(), 1);
    let r = reset[0].segment;
    assert_eq!((r.seq, r.ack, r.rst), (PEER_ISS + 1, None, true));
    assert_eq!(s.stats.resets_sent, 1);
    // The client's next expected sequence number is exactly PEER_ISS + 1 (RFC 5961 §3.2):
    // the connection is reset, its timer stops, it tells the application.
    c.handle_segment(ms(4200), &r);
    assert_eq!(
        (c.state(), c.failure()),
        (State::Failed, Some(Failure::Reset))
    );
    assert_eq!(c.poll_event(), Some(ConnEvent::Failed));
    assert_eq!(c.poll_timeout(), None);
    assert!(drain(&mut c, ms(4200)).is_empty());
    assert_eq!(c.stats.resets_received, 1);
    // RSTs are never answered: neither end has anything more to send.
    s.handle_segment(ms(4300), &r);
    assert!(drain(&mut s, ms(4300)).is_empty());
}

#[test]
fn a_reset_must_match_to_be_accepted() {
    // SYN-SENT: only a RST acknowledging our SYN (ACK = ISS + 1) is acceptable (§3.10.7.3).
    let mut c = Connection::connect(exact(), ISS);
    drain(&mut c, ms(0));
    c.handle_segment(ms(100), &rst(Seq(0), Some(ISS + 2)));
    assert_eq!(c.state(), State::SynSent);
    c.handle_segment(ms(100), &rst(Seq(0), Some(ISS + 1)));
    assert_eq!(
        (c.state(), c.failure()),
        (State::Failed, Some(Failure::Reset))
    );
    // ESTABLISHED: the peer's next sequence number is PEER_ISS + 1; a RST one beyond it is
    // ignored (no challenge ACK in the model), the exact one resets.
    let mut c = established();
    c.handle_segment(ms(700), &rst(PEER_ISS + 2, None));
    assert_eq!(c.state(), State::Established);
    assert!(drain(&mut c, ms(700)).is_empty());
    c.handle_segment(ms(700), &rst(PEER_ISS + 1, None));
    assert_eq!(c.failure(), Some(Failure::Reset));
    // The reset connection answers a later data segment with a RST, like a closed port.
    c.handle_segment(ms(800), &data(0, 5));
    let out = drain(&mut c, ms(800));
    assert_eq!(out.len(), 1);
    assert_eq!((out[0].segment.seq, out[0].segment.rst), (ISS + 1, true));
}

/// Host timers (docs/model.md "Host timers"): at HZ 250 the SYN's 2 s timer armed at 0 fires
/// at ((500 >> 3) + 1) << 3 = 504 jiffies = 2.016 s. After the SYN-ACK at 600 ms (RTO
/// 1800 ms, as in `established`), data written at 600 ms (jiffy 150) arms 450 jiffies:
/// e = 600, level 1 (63 ≤ 450 < 504) → ((600 >> 3) + 1) << 3 = 608 jiffies = 2432 ms, not
/// 2400 ms. The RTO value itself is unchanged (1800 ms); backed off to 3600 ms (900 jiffies,
/// level 2) from 2432 ms (jiffy 608): e = 1508 → ((1508 >> 6) + 1) << 6 = 1536 → 6144 ms.
#[test]
fn host_timers_fire_on_the_timer_wheel() {
    let cfg = TcpConfig::default();
    assert_eq!(cfg.hz, 250);
    let mut c = Connection::connect(cfg, ISS);
    drain(&mut c, ms(0));
    assert_eq!(c.poll_timeout(), Some(ms(2016)));
    c.handle_segment(ms(600), &syn_ack(ISS));
    drain(&mut c, ms(600));
    assert_eq!(c.rto(), dur_ms(1800));
    c.write(100);
    assert_eq!(offsets(&drain(&mut c, ms(600))), vec![(0, 100)]);
    assert_eq!(c.poll_timeout(), Some(ms(2432)));
    c.handle_timeout(ms(2432));
    let again = drain(&mut c, ms(2432));
    assert!(again[0].retransmission);
    assert_eq!(c.rto(), dur_ms(3600));
    assert_eq!(c.poll_timeout(), Some(ms(6144)));
}

/// `ack_every_segment`: a single small in-order segment is acknowledged at once instead of
/// after the 200 ms delayed-ACK timer.
#[test]
fn ack_every_segment_acknowledges_at_once() {
    for (every, acks_now) in [(false, 0), (true, 1)] {
        let mut c = established_with_cfg(TcpConfig {
            ack_every_segment: every,
            ..exact()
        });
        c.handle_segment(ms(1000), &data(0, 10));
        let out = drain(&mut c, ms(1000));
        assert_eq!(out.len(), acks_now, "ack_every_segment {every}");
        if !every {
            assert_eq!(c.poll_timeout(), Some(ms(1200)));
        }
    }
}

/// Connection start (Linux `tcp_rcv_synsent_state_process`): the SYN-ACK is acknowledged by
/// a pure ACK even when the application writes at once; the write goes out after it.
#[test]
fn syn_ack_gets_a_pure_ack_before_any_data() {
    let mut c = Connection::connect(exact(), ISS);
    drain(&mut c, ms(0));
    c.handle_segment(ms(600), &syn_ack(ISS));
    assert_eq!(c.poll_event(), Some(ConnEvent::Connected));
    c.write(7);
    let out = drain(&mut c, ms(600));
    assert_eq!(out.len(), 2);
    assert!(out[0].segment.is_pure_ack() && out[0].segment.ack == Some(PEER_ISS + 1));
    assert_eq!(offsets(&out[1..]), vec![(0, 7)]);
    // A second small write waits for the first one's ACK (Minshall).
    c.write(10);
    assert!(drain(&mut c, ms(601)).is_empty());
    c.handle_segment(ms(1300), &ack(at(7)));
    assert_eq!(offsets(&drain(&mut c, ms(1300))), vec![(7, 10)]);
}
