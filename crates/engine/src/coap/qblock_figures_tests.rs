//! RFC 9177's message flows with NON messages (§10.1 Q-Block1, Figures 3-7; §10.2 Q-Block2,
//! Figures 8-11), each replayed through the sans-IO [`Sender`] and [`Receiver`]: which blocks
//! go out, which recovery request lists which missing blocks, which timer lies between them.
//! The figures assume MAX_PAYLOADS 10 and NON_MAX_RETRANSMIT 4 (§10); the other parameters are
//! §7.2's defaults (Table 3): NON_TIMEOUT 2 s, NON_RECEIVE_TIMEOUT 4 s. The figures give no
//! times; here the one-way delay is 0.1 s and serialization is left out, and every time is
//! computed by hand in the comments. A figure's "Payload N" is block N-1 (Figure 2), its
//! "QB1:n/m/size" block n; Tokens, Message IDs, Request-Tag, ETag and Observe are not
//! modelled (docs/model.md "Q-Block"). Where the model departs from a figure, the test says so.

use super::*;

fn t(ms: u64) -> Instant {
    Instant::from_nanos(ms * 1_000_000)
}

fn blocks(r: std::ops::Range<u32>) -> Vec<SendAction> {
    r.map(|n| SendAction::Block { n, again: false }).collect()
}

fn again(n: u32) -> SendAction {
    SendAction::Block { n, again: true }
}

fn acts<A>(f: impl FnOnce(&mut Vec<A>)) -> Vec<A> {
    let mut out = Vec::new();
    f(&mut out);
    out
}

/// Block `n` reaches `r` at `at`: returns what `r` asks for (asserting the block was new).
fn recv(r: &mut Receiver, at: u64, n: u32) -> Vec<RecvAction> {
    acts(|o| assert!(r.on_block(t(at), n, o), "block {n} not new"))
}

fn arm(ms: u64) -> RecvAction {
    RecvAction::Arm(t(ms))
}

/// RFC 9177 §10.1.1, Figure 3: NON PUTs QB1:0/1 … QB1:3/0, all received, NON 2.04.
#[test]
fn figure_3_q_block1_without_loss() {
    let p = Params::default();
    let mut client = Sender::new(p, 4, 1024, true);
    // t = 0: blocks 0-3 back to back (4 < MAX_PAYLOADS), then the pause: 0 + 2 = 2 s.
    let mut want = blocks(0..4);
    want.push(SendAction::Arm(t(2000)));
    assert_eq!(acts(|o| client.start(t(0), o)), want);
    // t = 0.1: the server's receiver starts at the first block: 0.1 + 4 = 4.1 s.
    let mut server = Receiver::new(p, 4, t(100), &mut Vec::new());
    for n in 0..3 {
        assert_eq!(recv(&mut server, 100, n), vec![arm(4100)]);
    }
    // Block 3 (QB1:3/0) completes the body: the server's 2.04.
    assert_eq!(recv(&mut server, 100, 3), vec![RecvAction::Complete]);
    // t = 0.2: the 2.04 reaches the client: its pause timer does nothing.
    client.on_final();
    assert!(acts(|o| client.on_timer(t(2000), o)).is_empty());
}

/// RFC 9177 §10.1.2, Figure 4: 11 blocks; blocks 0-9 (the MAX_PAYLOADS_SET), the server's
/// NON 2.31 for block 9, block 10 at once (QB1:10/0), the 2.04.
#[test]
fn figure_4_q_block1_max_payloads_without_loss() {
    let p = Params::default();
    let mut client = Sender::new(p, 11, 1024, true);
    let mut want = blocks(0..10);
    want.push(SendAction::Arm(t(2000)));
    assert_eq!(acts(|o| client.start(t(0), o)), want);
    let mut server = Receiver::new(p, 11, t(100), &mut Vec::new());
    for n in 0..9 {
        assert_eq!(recv(&mut server, 100, n), vec![arm(4100)]);
    }
    // t = 0.1: block 9 completes the set: 2.31 (Continue) asking for block 10.
    assert_eq!(
        recv(&mut server, 100, 9),
        vec![RecvAction::Continue(10), arm(4100)]
    );
    // t = 0.2: the 2.31 arrives 1.8 s before the pause would end: block 10 now, and a new
    // pause 0.2 + 2 = 2.2 s.
    let mut want = blocks(10..11);
    want.push(SendAction::Arm(t(2200)));
    assert_eq!(acts(|o| client.on_continue(t(200), 10, o)), want);
    // t = 0.3: block 10 completes the body: the 2.04.
    assert_eq!(recv(&mut server, 300, 10), vec![RecvAction::Complete]);
}

/// RFC 9177 §10.1.3, Figures 5 and 6: 13 blocks (the last is QB1:12/0); blocks 1 and 9 of the
/// first set and block 10 of the second are lost. On block 11, the first of the next set to
/// arrive, the server sends 4.08 [Missing 1,9]; the client re-sends 1 and 9; NON_RECEIVE_TIMEOUT
/// later the server sends 4.08 [Missing 10]; the client re-sends 10; the 2.04.
///
/// Departure: the figure's client re-sends 1 and 9 between blocks 11 and 12 of its second set;
/// the model puts a whole set on the wire at once (10, 11, 12), so the re-sends follow it.
#[test]
fn figures_5_and_6_q_block1_recovery() {
    let p = Params::default();
    let mut client = Sender::new(p, 13, 1024, true);
    // Figure 5. t = 0: blocks 0-9, pause until 0 + 2 = 2 s.
    let mut want = blocks(0..10);
    want.push(SendAction::Arm(t(2000)));
    assert_eq!(acts(|o| client.start(t(0), o)), want);
    // t = 0.1: all but 1 and 9 arrive: no 2.31 (the set is incomplete); timer 0.1 + 4 = 4.1 s.
    let mut server = Receiver::new(p, 13, t(100), &mut Vec::new());
    for n in [0, 2, 3, 4, 5, 6, 7, 8] {
        assert_eq!(recv(&mut server, 100, n), vec![arm(4100)]);
    }
    // t = 2: "NON_TIMEOUT_RANDOM (client) delay expires" (the model: NON_TIMEOUT, 2 s): the
    // next set, blocks 10-12; the next timer 2 + 2 = 4 s.
    let mut want = blocks(10..13);
    want.push(SendAction::Arm(t(4000)));
    assert_eq!(acts(|o| client.on_timer(t(2000), o)), want);
    // Figure 6. t = 2.1: block 10 is lost; block 11, a payload of the next set, brings the 4.08
    // [Missing 1,9] at once; timer 2.1 + 4 = 6.1 s. Block 12 (same set) asks nothing more.
    assert_eq!(
        recv(&mut server, 2100, 11),
        vec![RecvAction::Recover(vec![1, 9]), arm(6100)]
    );
    assert_eq!(recv(&mut server, 2100, 12), vec![arm(6100)]);
    // t = 2.2: the client re-sends 1 and 9.
    assert_eq!(
        acts(|o| client.on_recovery(t(2200), &[1, 9], o)),
        vec![again(1), again(9)]
    );
    // t = 2.3: they arrive: timer 2.3 + 4 = 6.3 s. Block 9 completes the first set, but the
    // next set is already under way: no 2.31 (none in the figure either).
    assert_eq!(recv(&mut server, 2300, 1), vec![arm(6300)]);
    assert_eq!(recv(&mut server, 2300, 9), vec![arm(6300)]);
    // t = 4: the client's pause is over with every block sent and no 2.04: the model's tail
    // probe (block 12 again; not in the figure), next 4 + 2 × 2 = 8 s; a duplicate at the server.
    assert_eq!(
        acts(|o| client.on_timer(t(4000), o)),
        vec![again(12), SendAction::Arm(t(8000))]
    );
    assert!(acts(|o| assert!(!server.on_block(t(4100), 12, o))).is_empty());
    // t = 6.3: "NON_RECEIVE_TIMEOUT (server) delay expires": 4.08 [Missing 10]; the next wait
    // doubled: 6.3 + 2 × 4 = 14.3 s.
    assert_eq!(
        acts(|o| server.on_timer(t(6300), o)),
        vec![RecvAction::Recover(vec![10]), arm(14_300)]
    );
    // t = 6.4: the client re-sends 10; t = 6.5: the body is complete: the 2.04.
    assert_eq!(
        acts(|o| client.on_recovery(t(6400), &[10], o)),
        vec![again(10)]
    );
    assert_eq!(recv(&mut server, 6500, 10), vec![RecvAction::Complete]);
    client.on_final();
    assert!(acts(|o| client.on_timer(t(8000), o)).is_empty());
}

/// RFC 9177 §10.1.4, Figure 7: 3 blocks, block 1 lost and never delivered. The server's 4.08
/// [Missing 1] goes out after NON_RECEIVE_TIMEOUT, then 2×, 4×, 8× it (retries #1-#4); 16× it
/// after the fourth, NON_MAX_RETRANSMIT is exceeded and the partial body is released.
///
/// Departure: the model's client, with no 2.04, re-sends its last block (tail probes, the
/// client side is not in the figure); duplicates leave the server's timers unchanged.
#[test]
fn figure_7_q_block1_recovery_fails() {
    let p = Params::default();
    let mut client = Sender::new(p, 3, 1024, true);
    let mut want = blocks(0..3);
    want.push(SendAction::Arm(t(2000)));
    assert_eq!(acts(|o| client.start(t(0), o)), want);
    let mut server = Receiver::new(p, 3, t(100), &mut Vec::new());
    assert_eq!(recv(&mut server, 100, 0), vec![arm(4100)]);
    assert_eq!(recv(&mut server, 100, 2), vec![arm(4100)]);
    // Retry #1 at 0.1 + 4 = 4.1 s; #2 at 4.1 + 2 × 4 = 12.1 s; #3 at 12.1 + 4 × 4 = 28.1 s;
    // #4 at 28.1 + 8 × 4 = 60.1 s; each arms the next wait.
    let mut at = 4100;
    for wait in [8000, 16_000, 32_000, 64_000] {
        assert_eq!(
            acts(|o| server.on_timer(t(at), o)),
            vec![RecvAction::Recover(vec![1]), arm(at + wait)],
            "retry at {at} ms"
        );
        // The client's tail probe in between: a duplicate of block 2, nothing changes.
        assert!(acts(|o| assert!(!server.on_block(t(at + 1), 2, o))).is_empty());
        at += wait;
    }
    // 60.1 + 16 × 4 = 124.1 s: NON_MAX_RETRANSMIT (4) exceeded: the partial body is dropped.
    assert_eq!(at, 124_100);
    assert!(acts(|o| server.on_timer(t(124_099), o)).is_empty());
    assert_eq!(
        acts(|o| server.on_timer(t(124_100), o)),
        vec![RecvAction::Failed]
    );
    assert!(server.finished);
}

/// RFC 9177 §10.2.1, Figure 8: NON GET with Q-Block2 0; four NON 2.05 (QB2:0/1 … 3/0), all
/// received. (The figure's Observe notification that follows repeats the same flow; Observe
/// is not modelled with Q-Block.)
#[test]
fn figure_8_q_block2_without_loss() {
    let p = Params::default();
    // t = 0: the GET; the client waits NON_RECEIVE_TIMEOUT: 0 + 4 = 4 s.
    let mut a = Vec::new();
    let mut client = Receiver::new(p, 4, t(0), &mut a);
    assert_eq!(a, vec![arm(4000)]);
    // t = 0.1: the server sends blocks 0-3, then pauses until 0.1 + 2 = 2.1 s.
    let mut server = Sender::new(p, 4, 1024, false);
    let mut want = blocks(0..4);
    want.push(SendAction::Arm(t(2100)));
    assert_eq!(acts(|o| server.start(t(100), o)), want);
    // t = 0.2: they arrive (timer 0.2 + 4 = 4.2 s); block 3 completes the body.
    for n in 0..3 {
        assert_eq!(recv(&mut client, 200, n), vec![arm(4200)]);
    }
    assert_eq!(recv(&mut client, 200, 3), vec![RecvAction::Complete]);
    // t = 2.1: the server's pause ends with nothing left; the client acknowledges nothing.
    assert!(acts(|o| server.on_timer(t(2100), o)).is_empty());
}

/// RFC 9177 §10.2.2, Figure 9: 11 payloads; blocks 0-9, the client's 'Continue' GET
/// QB2:10/1, block 10 (QB2:10/0), the body received.
#[test]
fn figure_9_q_block2_max_payloads_without_loss() {
    let p = Params::default();
    let mut client = Receiver::new(p, 11, t(0), &mut Vec::new());
    let mut server = Sender::new(p, 11, 1024, false);
    let mut want = blocks(0..10);
    want.push(SendAction::Arm(t(2100)));
    assert_eq!(acts(|o| server.start(t(100), o)), want);
    for n in 0..9 {
        assert_eq!(recv(&mut client, 200, n), vec![arm(4200)]);
    }
    // t = 0.2: block 9 completes the set: 'Continue' for block 10.
    assert_eq!(
        recv(&mut client, 200, 9),
        vec![RecvAction::Continue(10), arm(4200)]
    );
    // t = 0.3: it cuts the server's pause short: block 10, pause to 0.3 + 2 = 2.3 s.
    let mut want = blocks(10..11);
    want.push(SendAction::Arm(t(2300)));
    assert_eq!(acts(|o| server.on_continue(t(300), 10, o)), want);
    assert_eq!(recv(&mut client, 400, 10), vec![RecvAction::Complete]);
}

/// RFC 9177 §10.2.3, Figure 10: 11 payloads, blocks 1 and 9 lost. After NON_TIMEOUT_RANDOM
/// the server sends block 10; on it the client asks for 1 and 9 in one GET (QB2:1/0, QB2:9/0);
/// the re-sent 1 is lost again, 9 arrives; NON_RECEIVE_TIMEOUT later the client asks for 1;
/// the body is received.
#[test]
fn figure_10_q_block2_recovery() {
    let p = Params::default();
    let mut client = Receiver::new(p, 11, t(0), &mut Vec::new());
    let mut server = Sender::new(p, 11, 1024, false);
    let mut want = blocks(0..10);
    want.push(SendAction::Arm(t(2100)));
    assert_eq!(acts(|o| server.start(t(100), o)), want);
    // t = 0.2: all but 1 and 9: no 'Continue'; timer 0.2 + 4 = 4.2 s.
    for n in [0, 2, 3, 4, 5, 6, 7, 8] {
        assert_eq!(recv(&mut client, 200, n), vec![arm(4200)]);
    }
    // t = 2.1: the server's pause (the model: NON_TIMEOUT, 2 s) ends: block 10; its next
    // timer 2.1 + 2 = 4.1 s.
    let mut want = blocks(10..11);
    want.push(SendAction::Arm(t(4100)));
    assert_eq!(acts(|o| server.on_timer(t(2100), o)), want);
    // t = 2.2: block 10, from the next set: the GET for 1 and 9 at once; timer 2.2 + 4 = 6.2 s.
    assert_eq!(
        recv(&mut client, 2200, 10),
        vec![RecvAction::Recover(vec![1, 9]), arm(6200)]
    );
    // t = 2.3: the server re-sends 1 (lost) and 9.
    assert_eq!(
        acts(|o| server.on_recovery(t(2300), &[1, 9], o)),
        vec![again(1), again(9)]
    );
    // t = 2.4: block 9 (it completes the first set, but block 10 is in: no 'Continue');
    // timer 2.4 + 4 = 6.4 s. The stale 4.1 s timer of the server does nothing.
    assert_eq!(recv(&mut client, 2400, 9), vec![arm(6400)]);
    assert!(acts(|o| server.on_timer(t(4100), o)).is_empty());
    assert!(acts(|o| client.on_timer(t(6200), o)).is_empty());
    // t = 6.4: "NON_RECEIVE_TIMEOUT (client) delay expires": GET for 1; next 6.4 + 8 = 14.4 s.
    assert_eq!(
        acts(|o| client.on_timer(t(6400), o)),
        vec![RecvAction::Recover(vec![1]), arm(14_400)]
    );
    assert_eq!(
        acts(|o| server.on_recovery(t(6500), &[1], o)),
        vec![again(1)]
    );
    assert_eq!(recv(&mut client, 6600, 1), vec![RecvAction::Complete]);
}

/// RFC 9177 §10.2.4, Figure 11: 11 payloads; only blocks 0 and 1 arrive, the rest of the set
/// and block 10 are lost. NON_RECEIVE_TIMEOUT later the client asks for the rest of the set
/// in one go (GET QB2:2/1, the M bit set); the server sends 2-9; the client's 'Continue' for
/// block 10 (QB2:10/1); block 10; the body received.
///
/// Departure: the model's server has already sent block 10 (after its pause) and ignores a
/// 'Continue' for a block it has sent, so block 10 comes back only after the client's next
/// NON_RECEIVE_TIMEOUT, by a GET listing it. The model's GET names blocks 2-9 with one Q-Block2
/// option each, M unset (§4.4's "generally"; coap/qblock_wire.rs), not one QB2:2/1.
#[test]
fn figure_11_q_block2_recovery_with_m_bit() {
    let p = Params::default();
    let mut client = Receiver::new(p, 11, t(0), &mut Vec::new());
    let mut server = Sender::new(p, 11, 1024, false);
    let mut want = blocks(0..10);
    want.push(SendAction::Arm(t(2100)));
    assert_eq!(acts(|o| server.start(t(100), o)), want);
    assert_eq!(recv(&mut client, 200, 0), vec![arm(4200)]);
    assert_eq!(recv(&mut client, 200, 1), vec![arm(4200)]);
    // t = 2.1: block 10 goes out (lost).
    let mut want = blocks(10..11);
    want.push(SendAction::Arm(t(4100)));
    assert_eq!(acts(|o| server.on_timer(t(2100), o)), want);
    // t = 4.2 (0.2 + 4): the client asks for the rest of block 1's set, 2-9; next wait
    // 4.2 + 8 = 12.2 s.
    assert_eq!(
        acts(|o| client.on_timer(t(4200), o)),
        vec![RecvAction::Recover((2..10).collect()), arm(12_200)]
    );
    let want: Vec<_> = (2..10).map(again).collect();
    assert_eq!(
        acts(|o| server.on_recovery(t(4300), &(2..10).collect::<Vec<_>>(), o)),
        want
    );
    // t = 4.4: blocks 2-8 (timer 4.4 + 4 = 8.4 s), then 9 completes the set: 'Continue' 10.
    for n in 2..9 {
        assert_eq!(recv(&mut client, 4400, n), vec![arm(8400)]);
    }
    assert_eq!(
        recv(&mut client, 4400, 9),
        vec![RecvAction::Continue(10), arm(8400)]
    );
    // t = 4.5: the figure's server answers with block 10; the model's ignores it (departure).
    assert!(acts(|o| server.on_continue(t(4500), 10, o)).is_empty());
    // t = 8.4: the client asks for block 10; next 8.4 + 8 = 16.4 s; it comes at 8.6 s.
    assert_eq!(
        acts(|o| client.on_timer(t(8400), o)),
        vec![RecvAction::Recover(vec![10]), arm(16_400)]
    );
    assert_eq!(
        acts(|o| server.on_recovery(t(8500), &[10], o)),
        vec![again(10)]
    );
    assert_eq!(recv(&mut client, 8600, 10), vec![RecvAction::Complete]);
}

/// Bad input to the machines: blocks beyond the body and recovery lists naming them are
/// ignored, not panics.
#[test]
fn out_of_range_blocks_are_ignored() {
    let p = Params::default();
    let mut r = Receiver::new(p, 3, t(0), &mut Vec::new());
    assert!(acts(|o| assert!(!r.on_block(t(1), 3, o))).is_empty());
    assert!(acts(|o| assert!(!r.on_block(t(1), u32::MAX, o))).is_empty());
    let mut s = Sender::new(p, 3, 1024, true);
    s.start(t(0), &mut Vec::new());
    assert_eq!(
        acts(|o| s.on_recovery(t(1), &[7, 1, u32::MAX], o)),
        vec![again(1)]
    );
}
