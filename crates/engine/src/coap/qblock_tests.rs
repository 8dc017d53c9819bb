//! Flows through the state machines beyond RFC 9177's figures (those are replayed one by one in
//! `qblock_figures_tests.rs`): lost recovery requests, tail probes, PROBING_RATE, with the §7.2
//! defaults (Table 3): MAX_PAYLOADS 10, NON_TIMEOUT 2 s, NON_RECEIVE_TIMEOUT 4 s,
//! NON_MAX_RETRANSMIT 4, and libcoap's timer rules (`coap_block_check_lg_crcv_timeouts`,
//! `coap_block_check_lg_srcv_timeouts`). Every time below is computed by hand in the comments;
//! the one-way delay is 0.1 s and serialization is left out.

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

/// Runs `f` on a fresh action buffer and returns what it pushed.
fn acts<A>(f: impl FnOnce(&mut Vec<A>)) -> Vec<A> {
    let mut out = Vec::new();
    f(&mut out);
    out
}

#[test]
fn parameters_are_the_rfc_9177_defaults() {
    // RFC 9177 §7.2, Table 3 "Congestion Control Parameters": MAX_PAYLOADS 10, NON_MAX_RETRANSMIT 4, NON_TIMEOUT 2 s,
    // NON_RECEIVE_TIMEOUT 4 s, NON_PROBING_WAIT 247-248 s, NON_PARTIAL_TIMEOUT 247 s;
    // PROBING_RATE 1 byte/s (RFC 7252 §4.8).
    let p = Params::default();
    assert_eq!((p.max_payloads, p.non_max_retransmit), (10, 4));
    assert_eq!(p.non_timeout, Duration::from_secs(2));
    assert_eq!(p.non_receive_timeout, Duration::from_secs(4));
    assert_eq!(p.non_partial_timeout, Duration::from_secs(247));
    assert_eq!(p.non_probing_wait, Duration::from_secs(247));
    assert_eq!(PROBING_RATE_BPS, 1.0);
}

/// Q-Block2 body of 15 blocks, blocks 3 and 7 lost, the GET asking for them at the next set
/// lost too, recovered at NON_RECEIVE_TIMEOUT, timer by timer (RFC 9177 §10.2.3, Figure 10,
/// with its first recovery request lost).
#[test]
fn qblock2_two_blocks_lost_and_recovered_timer_by_timer() {
    let p = Params::default();
    // t = 0: the client's GET; its receiver waits NON_RECEIVE_TIMEOUT: timer at 0 + 4 = 4 s.
    let mut a = Vec::new();
    let mut client = Receiver::new(p, 15, t(0), &mut a);
    assert_eq!(a, vec![RecvAction::Arm(t(4000))]);
    // t = 0.1: the GET reaches the server: blocks 0-9 (MAX_PAYLOADS) at once, then the pause
    // NON_TIMEOUT: timer at 0.1 + 2 = 2.1 s.
    let mut server = Sender::new(p, 15, 300, false);
    let mut want = blocks(0..10);
    want.push(SendAction::Arm(t(2100)));
    assert_eq!(acts(|o| server.start(t(100), o)), want);
    // t = 0.2: all but 3 and 7 arrive; each new block re-arms at 0.2 + 4 = 4.2 s. Block 9
    // ends the set but the set is incomplete: no request for the next set.
    for n in [0, 1, 2, 4, 5, 6, 8, 9] {
        let got = acts(|o| assert!(client.on_block(t(200), n, o)));
        assert_eq!(got, vec![RecvAction::Arm(t(4200))], "block {n}");
    }
    // t = 2.1: the server's pause is over with no word from the client: the next (last) set,
    // blocks 10-14, and a timer at 2.1 + 2 = 4.1 s.
    let mut want = blocks(10..15);
    want.push(SendAction::Arm(t(4100)));
    assert_eq!(acts(|o| server.on_timer(t(2100), o)), want);
    // t = 2.2: they arrive. Block 10, the first of a later set, asks at once for 3 and 7
    // (RFC 9177 §7.2); that GET is lost. Each block re-arms at 2.2 + 4 = 6.2 s.
    let got = acts(|o| assert!(client.on_block(t(2200), 10, o)));
    assert_eq!(
        got,
        vec![RecvAction::Recover(vec![3, 7]), RecvAction::Arm(t(6200))]
    );
    for n in 11..15 {
        let got = acts(|o| assert!(client.on_block(t(2200), n, o)));
        assert_eq!(got, vec![RecvAction::Arm(t(6200))]);
    }
    // t = 4.0 and 4.2: the client's earlier timers are stale (progress since): nothing.
    assert!(acts(|o| client.on_timer(t(4000), o)).is_empty());
    assert!(acts(|o| client.on_timer(t(4200), o)).is_empty());
    // t = 4.1: the server has sent every block; Q-Block2 leaves recovery to the client.
    assert!(acts(|o| server.on_timer(t(4100), o)).is_empty());
    // t = 6.2: NON_RECEIVE_TIMEOUT after the last block: a GET listing 3 and 7; the next wait
    // is doubled, 6.2 + 2 × 4 = 14.2 s.
    let got = acts(|o| client.on_timer(t(6200), o));
    assert_eq!(
        got,
        vec![RecvAction::Recover(vec![3, 7]), RecvAction::Arm(t(14200))]
    );
    // t = 6.3: the server re-sends exactly those.
    assert_eq!(
        acts(|o| server.on_recovery(t(6300), &[3, 7], o)),
        vec![again(3), again(7)]
    );
    // t = 6.4: block 3 (re-armed at 6.4 + 4 = 10.4 s), then block 7 completes the body.
    let got = acts(|o| assert!(client.on_block(t(6400), 3, o)));
    assert_eq!(got, vec![RecvAction::Arm(t(10400))]);
    let got = acts(|o| assert!(client.on_block(t(6400), 7, o)));
    assert_eq!(got, vec![RecvAction::Complete]);
    // Later timers and copies change nothing.
    assert!(acts(|o| client.on_timer(t(14200), o)).is_empty());
    assert!(!acts(|o| assert!(!client.on_block(t(7000), 3, o))).contains(&RecvAction::Complete));
}

/// Q-Block2 whose recovery requests are all lost (the Q-Block2 mirror of RFC 9177 §10.1.4,
/// Figure 7): the waits double, 4, 8, 16, 32 s, and after NON_MAX_RETRANSMIT = 4 requests the
/// next expiry, 64 s later, drops the body.
#[test]
fn qblock2_unanswered_recovery_doubles_then_fails() {
    let p = Params::default();
    let mut client = Receiver::new(p, 3, t(0), &mut Vec::new());
    // Block 0 at 0.2 s; blocks 1 and 2 lost. First expiry 0.2 + 4 = 4.2 s.
    client.on_block(t(200), 0, &mut Vec::new());
    // Requests at 4.2, 4.2 + 8 = 12.2, 12.2 + 16 = 28.2, 28.2 + 32 = 60.2 s.
    let mut at = 4200;
    for wait in [8000, 16000, 32000, 64000] {
        let got = acts(|o| client.on_timer(t(at), o));
        assert_eq!(
            got,
            vec![
                RecvAction::Recover(vec![1, 2]),
                RecvAction::Arm(t(at + wait))
            ]
        );
        at += wait;
    }
    // 60.2 + 64 = 124.2 s: the fourth request went unanswered: failed.
    assert!(acts(|o| client.on_timer(t(124_100), o)).is_empty());
    assert_eq!(
        acts(|o| client.on_timer(t(124_200), o)),
        vec![RecvAction::Failed]
    );
    assert!(client.finished);
}

/// Q-Block1 body of 12 blocks, block 5 lost, the 4.08 sent at the next set lost too, recovered
/// by the 4.08 at NON_RECEIVE_TIMEOUT (RFC 9177 §10.1.3, Figures 5 and 6, with the first 4.08
/// lost).
#[test]
fn qblock1_lost_block_recovered_by_a_408() {
    let p = Params::default();
    // t = 0: the client sends blocks 0-9 and pauses until 0 + 2 = 2 s.
    let mut client = Sender::new(p, 12, 300, true);
    let mut want = blocks(0..10);
    want.push(SendAction::Arm(t(2000)));
    assert_eq!(acts(|o| client.start(t(0), o)), want);
    // t = 0.1: the server's receiver starts at the first block: 0.1 + 4 = 4.1 s.
    let mut a = Vec::new();
    let mut server = Receiver::new(p, 12, t(100), &mut a);
    assert_eq!(a, vec![RecvAction::Arm(t(4100))]);
    for n in (0..10).filter(|&n| n != 5) {
        let got = acts(|o| assert!(server.on_block(t(100), n, o)));
        assert_eq!(got, vec![RecvAction::Arm(t(4100))]);
    }
    // t = 2: no 2.31 came (the set is incomplete): blocks 10, 11; next timer 2 + 2 = 4 s.
    let mut want = blocks(10..12);
    want.push(SendAction::Arm(t(4000)));
    assert_eq!(acts(|o| client.on_timer(t(2000), o)), want);
    // t = 2.1: they arrive: 2.1 + 4 = 6.1 s. Block 10, the first of the next set, brings a
    // 4.08 listing 5 at once (RFC 9177 §7.2); it is lost.
    let got = acts(|o| assert!(server.on_block(t(2100), 10, o)));
    assert_eq!(
        got,
        vec![RecvAction::Recover(vec![5]), RecvAction::Arm(t(6100))]
    );
    let got = acts(|o| assert!(server.on_block(t(2100), 11, o)));
    assert_eq!(got, vec![RecvAction::Arm(t(6100))]);
    // t = 4: all sent, no 2.04: the last block again (tail probe 1), next at 4 + 2 × 2 = 8 s.
    assert_eq!(
        acts(|o| client.on_timer(t(4000), o)),
        vec![again(11), SendAction::Arm(t(8000))]
    );
    // t = 4.1: a duplicate changes nothing at the server.
    assert!(acts(|o| assert!(!server.on_block(t(4100), 11, o))).is_empty());
    // t = 6.1: NON_RECEIVE_TIMEOUT after block 11: 4.08 listing 5; next 6.1 + 8 = 14.1 s.
    assert_eq!(
        acts(|o| server.on_timer(t(6100), o)),
        vec![RecvAction::Recover(vec![5]), RecvAction::Arm(t(14100))]
    );
    // t = 6.2: the client re-sends 5; t = 6.3: the body is complete (the server's 2.04).
    assert_eq!(
        acts(|o| client.on_recovery(t(6200), &[5], o)),
        vec![again(5)]
    );
    assert_eq!(
        acts(|o| assert!(server.on_block(t(6300), 5, o))),
        vec![RecvAction::Complete]
    );
    client.on_final();
    assert!(acts(|o| client.on_timer(t(8000), o)).is_empty());
}

/// Q-Block1 without loss over two full sets (RFC 9177 §10.1.2, Figure 4, with 20 blocks): the
/// server's 2.31 for the tenth block cuts the client's NON_TIMEOUT pause short.
#[test]
fn qblock1_continue_cuts_the_pause_short() {
    let p = Params::default();
    let mut client = Sender::new(p, 20, 300, true);
    client.start(t(0), &mut Vec::new());
    let mut server = Receiver::new(p, 20, t(100), &mut Vec::new());
    for n in 0..9 {
        server.on_block(t(100), n, &mut Vec::new());
    }
    // Block 9 ends a complete set: 2.31 asking for block 10, then the receive timer.
    assert_eq!(
        acts(|o| assert!(server.on_block(t(100), 9, o))),
        vec![RecvAction::Continue(10), RecvAction::Arm(t(4100))]
    );
    // t = 0.2: the 2.31 arrives, 1.8 s before the pause would end: blocks 10-19 now.
    let mut want = blocks(10..20);
    want.push(SendAction::Arm(t(2200)));
    assert_eq!(acts(|o| client.on_continue(t(200), 10, o)), want);
    // A second copy of the 2.31 sends nothing more.
    assert!(acts(|o| client.on_continue(t(210), 10, o)).is_empty());
    for n in 10..19 {
        server.on_block(t(300), n, &mut Vec::new());
    }
    assert_eq!(
        acts(|o| assert!(server.on_block(t(300), 19, o))),
        vec![RecvAction::Complete]
    );
}

#[test]
fn a_silent_receiver_makes_probing_rate_stretch_the_pause() {
    // PROBING_RATE 100 B/s, 300 B per block: a set of 10 = 3000 B → 3000 / 100 = 30 s, more
    // than NON_TIMEOUT (2 s). The first set follows the request (the peer spoke): 2 s.
    let p = Params {
        probing_rate_bps: Some(100.0),
        ..Params::default()
    };
    let mut s = Sender::new(p, 30, 300, true);
    assert_eq!(
        acts(|o| s.start(t(0), o)).last(),
        Some(&SendAction::Arm(t(2000)))
    );
    // t = 2: silence: the second set waits 2 + 30 = 32 s.
    assert_eq!(
        acts(|o| s.on_timer(t(2000), o)).last(),
        Some(&SendAction::Arm(t(32000)))
    );
    // At 1 B/s (RFC 7252's default) 3000 s is capped at NON_PROBING_WAIT: 32 + 247 = 279 s.
    let mut s1 = Sender::new(
        Params {
            probing_rate_bps: Some(1.0),
            ..p
        },
        30,
        300,
        true,
    );
    s1.start(t(0), &mut Vec::new());
    s1.on_timer(t(2000), &mut Vec::new());
    let mut s2 = s1.clone();
    assert_eq!(
        acts(|o| s2.on_timer(t(2000 + 247_000), o)).last(),
        Some(&SendAction::Arm(t(2000 + 247_000 + 247_000)))
    );
    // A word from the receiver (a 4.08) resets it: after it, the next pause is 2 s.
    s.on_recovery(t(20_000), &[1], &mut Vec::new());
    assert_eq!(
        acts(|o| s.on_timer(t(32000), o)).last(),
        Some(&SendAction::Arm(t(34000)))
    );
}

#[test]
fn missing_lists_follow_libcoap() {
    let p = Params::default();
    let mut r = Receiver::new(p, 25, t(0), &mut Vec::new());
    // Nothing yet: the first set, 0-9.
    assert_eq!(r.missing(), (0..10).collect::<Vec<_>>());
    // 0-9 in, no gap, set complete: the next set, 10-19.
    for n in 0..10 {
        r.on_block(t(1), n, &mut Vec::new());
    }
    assert_eq!(r.missing(), (10..20).collect::<Vec<_>>());
    // 12 and 14 in: gaps 10, 11, 13, then the rest of 14's set, 15-19.
    r.on_block(t(2), 12, &mut Vec::new());
    r.on_block(t(2), 14, &mut Vec::new());
    assert_eq!(r.missing(), vec![10, 11, 13, 15, 16, 17, 18, 19]);
    // 22 in (set 20-24, the body ends at 24): gaps 10, 11, 13, 15-21 capped at 10 entries.
    r.on_block(t(3), 22, &mut Vec::new());
    assert_eq!(r.missing(), vec![10, 11, 13, 15, 16, 17, 18, 19, 20, 21]);
}

#[test]
fn q_block1_sender_gives_up_after_non_max_retransmit_tail_probes() {
    // One block; the receiver never answers. Probes at 2, 2 + 4 = 6, 6 + 8 = 14,
    // 14 + 16 = 30 s; the timer after the 4th probe, 30 + 32 = 62 s, waits quietly until
    // NON_PARTIAL_TIMEOUT after the start (the receiver's last word): 0 + 247 s, then fails.
    let mut s = Sender::new(Params::default(), 1, 300, true);
    s.start(t(0), &mut Vec::new());
    let mut at = 2000;
    for wait in [4000, 8000, 16000, 32000] {
        assert_eq!(
            acts(|o| s.on_timer(t(at), o)),
            vec![again(0), SendAction::Arm(t(at + wait))]
        );
        at += wait;
    }
    assert_eq!(at, 62_000);
    assert_eq!(
        acts(|o| s.on_timer(t(at), o)),
        vec![SendAction::Arm(t(247_000))]
    );
    assert!(acts(|o| s.on_timer(t(246_999), o)).is_empty());
    assert_eq!(
        acts(|o| s.on_timer(t(247_000), o)),
        vec![SendAction::Failed]
    );
}
