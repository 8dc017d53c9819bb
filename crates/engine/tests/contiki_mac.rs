//! The Contiki 2.6 MAC profile (`network.mac = "contiki"`, `net/radio/mac/contiki.rs`): CSMA
//! retry times, the buffer pool, the neighbour queues, the spacing of a queue, 6LoWPAN's
//! one-at-a-time reassembly, and one frame through the mesh. Every expected value is computed
//! by hand in the comment next to it from Contiki 2.6's `core/net/mac/csma.c`,
//! `core/net/mac/nullrdc.c` and `core/net/sicslowpan.c`.

mod common;

use common::mesh::{drive, request, Queue};

use coaplab_cc::rng::{Rng, Xoshiro256pp};
use coaplab_cc::{Duration, Instant};
use coaplab_engine::config::MacAddressing;
use coaplab_engine::net::radio::contiki::{
    ContikiCsma, ContikiParams, Refusal, SentOutcome, TxStatus,
};
use coaplab_engine::net::radio::mac::MacParams;
use coaplab_engine::net::radio::{Mesh, MeshOutcome, RadioParams};
use coaplab_engine::sim::slab::Slab;
use serde_json::json;

const MS: fn(f64) -> Instant = |ms| Instant::from_nanos((ms * 1e6).round() as u64);

/// Draws the given words in turn.
struct Draws(Vec<u64>);
impl Rng for Draws {
    fn next_u64(&mut self) -> u64 {
        self.0.remove(0)
    }
}

/// Contiki's defaults on a Z1/Sky: CLOCK_SECOND 128, NullRDC at 8 Hz → T = 128 / 8 = 16
/// ticks of 7.8125 ms = 125 ms; 2 neighbour queues; 4 MAC transmissions; no autoack.
fn params() -> ContikiParams {
    ContikiParams {
        tick: Duration::from_nanos(7_812_500),
        timebase_ticks: 16,
        max_neighbor_queues: 2,
        max_transmissions: 4,
        wait_ack: false,
        ack_wait: Duration::from_nanos(396_729),
        after_ack_wait: Duration::from_nanos(640_869),
        reassembly_timeout: Duration::from_secs(8),
        // The CSMA logic's vectors below are computed with no CPU time; the processing time's
        // own test sets it.
        processing: Duration::ZERO,
        // The mechanisms of `coaplab-model-7` are off here (each has its own test below):
        // the CPU time one constant, timers at the exact time, no pending-frame refusal, the
        // DODAG fixed.
        cpu_fixed: None,
        tick_timers: false,
        pending_refusal: false,
        rpl_etx: false,
    }
}

#[test]
fn retry_times_after_collisions_and_missing_acks() {
    let p = params();
    let mut c: ContikiCsma<u32> = ContikiCsma::new(4);
    let t0 = c.enqueue(MS(0.0), 7, 100, false, &p).unwrap().unwrap();
    // The head of a new queue is sent at once: ctimer_set(…, 0, …).
    assert_eq!((t0.at, t0.neighbor), (MS(0.0), 7));
    assert_eq!(c.on_timer(7, t0.gen), Some(100));
    // A collision does not count as a transmission (packet_sent: `n->collisions++`), so
    // k = min(0 + 1, 3) = 1 after each of them: T + draw % (1·16) ticks.
    // Collision 1 at 0 ms, draw 5: 16 + 5 = 21 ticks = 164.0625 ms.
    // Collision 2 at 164.0625 ms, draw 37: 37 % 16 = 5 → 21 ticks → 328.125 ms.
    // Collision 3 at 328.125 ms, draw 0x1_0000 + 15: random_rand() is 16 bits → 15 → 31
    // ticks = 242.1875 ms → 570.3125 ms.
    let mut rng = Draws(vec![5, 37, 0x1_0000 + 15]);
    let mut now = MS(0.0);
    for expect in [164.0625, 328.125, 570.3125] {
        let out = c.packet_sent(now, TxStatus::Collision, &p, &mut rng);
        let t = out.timer.unwrap();
        assert_eq!((out.freed, t.at), (None, MS(expect)));
        now = t.at;
        assert_eq!(c.on_timer(7, t.gen), Some(100));
    }
    assert_eq!(c.neighbors[0].collisions, 3);
    // Missing acknowledgements count: after the n-th, k = min(n + 1, 3).
    // NOACK 1 (k 2), draw 31: 16 + 31 % 32 = 47 ticks = 367.1875 ms.
    // NOACK 2 (k 3), draw 47: 16 + 47 % 48 = 63 ticks = 492.1875 ms.
    // NOACK 3 (k 3), draw 48: 16 + 0 = 16 ticks = 125 ms.
    let mut rng = Draws(vec![31, 47, 48]);
    for gap in [367.1875, 492.1875, 125.0] {
        let out = c.packet_sent(now, TxStatus::NoAck, &p, &mut rng);
        let t = out.timer.unwrap();
        assert_eq!(t.at, now + (MS(gap) - MS(0.0)));
        now = t.at;
        assert_eq!(c.on_timer(7, t.gen), Some(100));
    }
    // NOACK 4: transmissions = 4 = SICSLOWPAN_MAX_MAC_TRANSMISSIONS: given up, the queue (its
    // only frame gone) freed, no draw.
    let out = c.packet_sent(now, TxStatus::NoAck, &p, &mut Draws(vec![]));
    assert_eq!(
        out,
        SentOutcome {
            freed: Some((100, true)),
            timer: None,
            num_tx: 4,
        }
    );
    assert!(c.neighbors.is_empty());
    assert_eq!(c.used, 0);
}

#[test]
fn a_fifth_frame_is_refused_by_a_full_pool_of_four() {
    let p = params();
    let mut c: ContikiCsma<u32> = ContikiCsma::new(4);
    // QUEUEBUF_NUM 4: frames 1–4 (two neighbours) take the four buffers.
    assert!(c.enqueue(MS(0.0), 1, 1, false, &p).unwrap().is_some());
    assert!(c.enqueue(MS(0.0), 1, 2, false, &p).unwrap().is_none());
    assert!(c.enqueue(MS(0.0), 2, 3, false, &p).unwrap().is_some());
    assert!(c.enqueue(MS(0.0), 2, 4, false, &p).unwrap().is_none());
    assert_eq!(c.enqueue(MS(0.0), 1, 5, false, &p), Err(Refusal::NoBuffer));
    assert_eq!(c.used, 4);
    // A fragment needs two free buffers (output()'s temporary copy and the MAC's): with one
    // free it is refused.
    let mut c: ContikiCsma<u32> = ContikiCsma::new(4);
    for f in 0..3 {
        c.enqueue(MS(0.0), 1, f, false, &p).unwrap();
    }
    assert_eq!(c.enqueue(MS(0.0), 1, 9, true, &p), Err(Refusal::NoBuffer));
    assert!(c.enqueue(MS(0.0), 1, 9, false, &p).is_ok());
}

#[test]
fn a_third_neighbour_is_refused_while_two_queues_exist() {
    let p = params();
    let mut c: ContikiCsma<u32> = ContikiCsma::new(4);
    let t1 = c.enqueue(MS(0.0), 1, 1, false, &p).unwrap().unwrap();
    c.enqueue(MS(0.0), 2, 2, false, &p).unwrap();
    // CSMA_MAX_NEIGHBOR_QUEUES 2: a third next hop gets no entry, though buffers are free.
    assert_eq!(
        c.enqueue(MS(0.0), 3, 3, false, &p),
        Err(Refusal::NoNeighbor)
    );
    // Once neighbour 1's only frame is sent, its entry is freed and 3 gets one.
    assert_eq!(c.on_timer(1, t1.gen), Some(1));
    let out = c.packet_sent(MS(3.0), TxStatus::Ok, &p, &mut Draws(vec![]));
    assert_eq!(out.freed, Some((1, false)));
    assert!(c.enqueue(MS(3.0), 3, 3, false, &p).is_ok());
}

#[test]
fn the_next_frame_of_a_queue_waits_one_time_base() {
    let p = params();
    let mut c: ContikiCsma<u32> = ContikiCsma::new(4);
    let t = c.enqueue(MS(0.0), 1, 1, false, &p).unwrap().unwrap();
    assert!(c.enqueue(MS(0.0), 1, 2, false, &p).unwrap().is_none());
    assert_eq!(c.on_timer(1, t.gen), Some(1));
    // Frame 1 sent (MAC_TX_OK) at 2.912 ms: free_first_packet arms the timer one T = 125 ms
    // later, at 127.912 ms, for frame 2.
    let out = c.packet_sent(MS(2.912), TxStatus::Ok, &p, &mut Draws(vec![]));
    let next = out.timer.unwrap();
    assert_eq!((out.freed, next.at), (Some((1, false)), MS(127.912)));
    // A timer of another queue expiring while this one sends waits for the send to end.
    assert_eq!(c.on_timer(1, next.gen), Some(2));
    let t3 = c.enqueue(MS(128.0), 5, 3, false, &p).unwrap().unwrap();
    assert_eq!(c.on_timer(5, t3.gen), None);
    c.packet_sent(MS(130.0), TxStatus::Ok, &p, &mut Draws(vec![]));
    assert_eq!(c.next_deferred(), Some((5, 3)));
}

#[test]
fn a_second_packets_fragment_is_dropped_during_reassembly() {
    let p = params();
    let mut c: ContikiCsma<u32> = ContikiCsma::new(4);
    // Packet A (transfer 10) from node 1: its first fragment starts the reassembly at 1 s.
    assert!(c.reassembly_accepts(MS(1000.0), 1, 10, true, &p));
    // A fragment of packet B (transfer 11, node 2) meanwhile: dropped; so is an
    // unfragmented packet (input(): "not a fragment of the packet currently being
    // reassembled"), and B's fragment from A's sender.
    assert!(!c.reassembly_accepts(MS(1010.0), 2, 11, true, &p));
    assert!(!c.reassembly_accepts(MS(1010.0), 2, 12, false, &p));
    assert!(!c.reassembly_accepts(MS(1010.0), 1, 11, true, &p));
    // A's next fragment is taken; A complete, the next packet is taken.
    assert!(c.reassembly_accepts(MS(1020.0), 1, 10, true, &p));
    c.reassembled(10);
    assert!(c.reassembly_accepts(MS(1030.0), 2, 12, false, &p));
    // A reassembly never completed blocks until SICSLOWPAN_REASS_MAXAGE (8 s) expires.
    assert!(c.reassembly_accepts(MS(2000.0), 3, 20, true, &p));
    assert!(!c.reassembly_accepts(MS(9999.0), 2, 21, false, &p));
    assert!(c.reassembly_accepts(MS(10000.0), 2, 21, false, &p));
}

fn mesh() -> Mesh {
    mesh_with(None, params())
}

fn mesh_with(wake_period: Option<Duration>, ck: ContikiParams) -> Mesh {
    line(2, wake_period, ck)
}

/// `n` nodes 10 m apart on a line: each hears only its neighbours.
fn line(n: u16, wake_period: Option<Duration>, ck: ContikiParams) -> Mesh {
    let p = RadioParams {
        range_m: 10.0,
        interference_m: 20.0,
        carrier_sense_m: 10.0,
        link_loss: 0.0,
        addressing: MacAddressing::Long,
        mac: MacParams::default(),
        queue_frames: 4,
        border_router_queue_frames: 6,
        wake_period,
        strobe_gap: Duration::from_micros(544),
        // The ContikiMAC hop below is the first to its receiver: no phase is known yet, so
        // the phase optimisation would not change it; off, the test does not depend on it.
        phase_lock: false,
        contiki: Some(ck),
    };
    Mesh::new(
        p,
        (0..n).map(|i| (f64::from(i) * 10.0, 0.0)).collect(),
        1,
        0,
        (0..).map(Xoshiro256pp::seed_from_u64),
        Xoshiro256pp::seed_from_u64(99),
    )
    .unwrap()
}

#[test]
fn two_packets_to_one_neighbour_are_one_time_base_apart() {
    let mut mesh = mesh();
    let mut packets = Slab::default();
    let mut q = Queue::default();
    let (a, b) = (request(95), request(95));
    let (ia, ib) = (packets.insert(a), packets.insert(b));
    mesh.enter(Instant::ZERO, ia, &a, 0, 1, &mut q).unwrap();
    mesh.enter(Instant::ZERO, ib, &b, 0, 1, &mut q).unwrap();
    let out = drive(&mut mesh, &packets, &mut q);
    // 95-byte POST, one hop: a 79-byte MAC frame, (6 + 79) × 32 = 2720 µs on the air. No
    // backoff: the CCA at 0, the frame on the air after the 192 µs turnaround, 192–2912 µs.
    // Packet b waits one T = 125 ms after a's send ended: CCA at 127 912 µs, on the air
    // 128 104–130 824 µs.
    assert_eq!(
        out,
        vec![
            (2912, MeshOutcome::Exit(ia)),
            (130_824, MeshOutcome::Exit(ib))
        ]
    );
    assert_eq!(mesh.queued_frames(), 0);
}

#[test]
fn a_forward_waits_for_the_cpu_and_finds_the_channel_clear() {
    // Nodes 0 — 1 — 2, a lone 95-byte POST from 0 to 2 through 1, with the CPU's 3 ms
    // (PROCESSING_US). Frame sizes (RFC 6282, 64-bit addresses; MAC header 21 + FCS 2; UDP
    // NHC 7; payload 95 − 48 = 47): hop 1 leaves the origin, IPHC 2 + the destination's 8 =
    // 10, frame 23 + 10 + 7 + 47 = 87 bytes, (6 + 87) × 32 = 2976 µs; hop 2 reaches the
    // destination, IPHC 2 + hop limit 1 + the source's 8 = 11, 88 bytes, 3008 µs.
    // Hop 1: CCA at 3000 µs, on the air 3192–6168 µs. Node 1 acknowledges it 6360–6712 µs
    // (192 µs turnaround, 352 µs ACK) and hands the packet on at 6168 + 3000 = 9168 µs: its
    // CCA window (from 9040 µs) is clear, the frame is on the air 9360–12 368 µs.
    let ck = ContikiParams {
        processing: Duration::from_micros(3000),
        ..params()
    };
    let mut mesh = line(3, None, ck);
    let mut packets = Slab::default();
    let mut q = Queue::default();
    let a = request(95);
    let id = packets.insert(a);
    mesh.enter(Instant::ZERO, id, &a, 0, 2, &mut q).unwrap();
    let out = drive(&mut mesh, &packets, &mut q);
    assert_eq!(mesh.counters.tx_collisions, 0);
    assert_eq!(out.len(), 1);
    let (at, outcome) = out[0];
    assert_eq!(outcome, MeshOutcome::Exit(id));
    assert_eq!(at, 12_368);

    // Without the CPU's time the forward's CCA falls on the frame it just received (on the
    // air until the very instant of the hand-off): a collision report, and the retry one
    // time base later at the earliest.
    let mut mesh = line(3, None, params());
    let mut q = Queue::default();
    mesh.enter(Instant::ZERO, id, &a, 0, 2, &mut q).unwrap();
    let out = drive(&mut mesh, &packets, &mut q);
    assert_eq!(mesh.counters.tx_collisions, 1);
    assert!(out[0].0 >= 6168 + 125_000, "{out:?}");
}

#[test]
fn under_contikimac_the_driver_strobes_and_waits_for_the_ack() {
    // ContikiMAC at 8 Hz: node 1 wakes up at 10 ms (+ k × 125 ms); the sender waits for the
    // acknowledgement of the copy taken.
    let ck = ContikiParams {
        wait_ack: true,
        ..params()
    };
    let mut mesh = mesh_with(Some(Duration::from_millis(125)), ck);
    mesh.wake_phases = vec![Duration::ZERO, Duration::from_millis(10)];
    let mut packets = Slab::default();
    let mut q = Queue::default();
    let a = request(95);
    let id = packets.insert(a);
    mesh.enter(Instant::ZERO, id, &a, 0, 1, &mut q).unwrap();
    // No backoff: CCA at 0, the strobe from 192 µs, a 79-byte copy (2720 µs) every 2720 + 544
    // = 3264 µs. Node 1 wakes at 10 000 µs and takes the next whole copy: k = ⌈(10 000 − 192)
    // / 3264⌉ = ⌈3.005⌉ = 4, from 192 + 4 × 3264 = 13 248 to 15 968 µs.
    assert_eq!(
        drive(&mut mesh, &packets, &mut q),
        vec![(15968, MeshOutcome::Exit(id))]
    );
    // The ACK (192 µs turnaround, 352 µs on the air) is under way at ACK_WAIT_TIME (15 968 +
    // 396.7 µs) and read after AFTER_ACK_DETECTED_WAIT_TIME: MAC_TX_OK, the queue is empty.
    let c = mesh.counters;
    assert_eq!(
        (c.strobes, c.frames_sent, c.acks_sent, c.tx_collisions),
        (4, 1, 1, 0)
    );
    assert_eq!((c.retransmissions, c.retry_failures), (0, 0));
    assert_eq!(mesh.queued_frames(), 0);
}

#[test]
fn the_cooja_dumbbell_runs_with_the_contiki_profile() {
    let cfg = common::config(json!({
        "workload": {"kind": "periodic", "clients": 20, "period_s": 1.0, "duration_s": 20.0,
                     "request_bytes": 95, "response_bytes": 0},
        "coap": {"max_retransmit": 4},
        "network": {"kind": "dumbbell", "mac": "contiki"},
    }));
    let r = coaplab_engine::testbed::run(&cfg, 0, None).unwrap();
    let m = r.mesh.as_ref().unwrap();
    let c = m.counters;
    // Every request copy sent is answered or dropped with a counted cause.
    let sent: u64 = r
        .clients
        .iter()
        .map(|c| u64::from(c.exchanges_completed + c.exchanges_failed + c.retransmissions))
        .sum();
    let answered: u64 = r
        .clients
        .iter()
        .map(|c| u64::from(c.exchanges_completed + c.duplicate_responses))
        .sum();
    assert_eq!(
        sent,
        answered + c.mac_queue_drops + c.radio_drops + c.oversized_drops
    );
    assert_eq!(c.mac_queue_drops, c.neighbor_queue_drops + c.buffer_drops);
    // No IEEE machinery ran: no channel-access failures.
    assert_eq!(c.channel_access_failures, 0);
}

#[test]
fn timers_expire_on_the_clock_ticks() {
    // etimer: `timer_set` records clock_time() (whole ticks of 7.8125 ms) and the clock
    // interrupt fires the timer at the tick where clock_time() − start ≥ interval.
    let p = ContikiParams {
        tick_timers: true,
        ..params()
    };
    let mut c: ContikiCsma<u32> = ContikiCsma::new(4);
    let t = c.enqueue(MS(0.0), 1, 1, false, &p).unwrap().unwrap();
    // The zero-time ctimer of a first send is not on the grid: at once.
    assert_eq!(t.at, MS(0.0));
    assert!(c.enqueue(MS(0.0), 1, 2, false, &p).unwrap().is_none());
    assert_eq!(c.on_timer(1, t.gen), Some(1));
    // Frame 1 sent at 2.912 ms, in tick 0: the next frame at tick 0 + 16 = 125 ms (not
    // 127.912 ms as with exact timers).
    let out = c.packet_sent(MS(2.912), TxStatus::Ok, &p, &mut Draws(vec![]));
    let next = out.timer.unwrap();
    assert_eq!(next.at, MS(125.0));
    assert_eq!(c.on_timer(1, next.gen), Some(2));
    // A collision at 130 ms (tick ⌊130 / 7.8125⌋ = 16, at 125 ms), draw 5: 16 + 5 = 21 ticks
    // later, tick 37 = 289.0625 ms.
    let out = c.packet_sent(MS(130.0), TxStatus::Collision, &p, &mut Draws(vec![5]));
    assert_eq!(out.timer.unwrap().at, MS(289.0625));
    // Exactly on a tick (125 ms = tick 16) the delay is whole: the same draw, tick 37.
    assert_eq!(p.timer_at(MS(125.0), 21), MS(289.0625));
    // And without the grid: 130 + 164.0625 = 294.0625 ms.
    assert_eq!(params().timer_at(MS(130.0), 21), MS(294.0625));
}

#[test]
fn the_cpu_time_follows_the_frame_lengths() {
    use coaplab_engine::net::radio::contiki::{cpu_time, spi_time};
    // One SPI byte: 8 bit clocks at SMCLK / 2 = 3.9 MHz / 2: 16 / 3.9 = 4.1026 µs.
    assert_eq!(spi_time(39), Duration::from_micros(160));
    let p = ContikiParams {
        cpu_fixed: Some(Duration::from_micros(1000)),
        ..params()
    };
    // A packet the node originates, first frame 79 bytes: 1000 + 80 × 4.1026 = 1328.205 µs.
    assert_eq!(cpu_time(&p, 0, Some(79)), Duration::from_nanos(1_328_205));
    // A forward: 87 bytes read, 88 loaded: 1000 + (88 + 89) × 4.1026 = 1726.154 µs.
    assert_eq!(cpu_time(&p, 87, Some(88)), Duration::from_nanos(1_726_154));
    // `constant`: `processing` whatever the frames.
    assert_eq!(cpu_time(&params(), 87, Some(88)), Duration::ZERO);

    // Through the mesh: 0 → 1 → 2 (frames 87 and 88 bytes, as in the test above).
    // Hop 1 (nothing read, 88 bytes loaded): CCA at 1000 + 88 × 4.1026 = 1361.026 µs, on the air
    // 1553.026–4529.026 µs ((6 + 87) × 32 = 2976 µs). Node 1 acknowledges 4721.026–5073.026
    // and hands the packet on after 1726.154 µs: CCA at 6255.180 µs (window from 6127.180:
    // clear), on the air 6447.180–9455.180 µs ((6 + 88) × 32 = 3008 µs).
    let mut mesh = line(3, None, p);
    let mut packets = Slab::default();
    let mut q = Queue::default();
    let a = request(95);
    let id = packets.insert(a);
    mesh.enter(Instant::ZERO, id, &a, 0, 2, &mut q).unwrap();
    let out = drive(&mut mesh, &packets, &mut q);
    assert_eq!(out, vec![(9455, MeshOutcome::Exit(id))]);
    assert_eq!(mesh.counters.tx_collisions, 0);
}

#[test]
fn a_frame_arriving_during_the_tx_fifo_load_refuses_the_send() {
    // Line 0 – 1 – 2, the acknowledgement wait on, 3 ms of CPU. Packet a, 0 → 1: CCA at
    // 3000 µs, a 79-byte frame on the air 3192–5912 µs, in node 1's RX FIFO at 5912 µs; node
    // 1 acknowledges 6104–6456 µs. Packet b enters at node 1 at 3062 µs for node 2: its send
    // starts at 6062 µs, 150 µs after a's frame arrived — within the 80 × 4.1026 = 328.2 µs
    // its own 79-byte frame takes to load into the TX FIFO, and past the 128 µs CCA window
    // (node 0 off the air since 5912 µs) and before node 1's acknowledgement (6104 µs).
    let base = ContikiParams {
        wait_ack: true,
        processing: Duration::from_micros(3000),
        ..params()
    };
    let run = |ck: ContikiParams| {
        let mut mesh = line(3, None, ck);
        let mut packets = Slab::default();
        let mut q = Queue::default();
        let (a, b) = (request(95), request(95));
        let (ia, ib) = (packets.insert(a), packets.insert(b));
        mesh.enter(Instant::ZERO, ia, &a, 0, 1, &mut q).unwrap();
        mesh.enter(MS(3.062), ib, &b, 1, 2, &mut q).unwrap();
        let out = drive(&mut mesh, &packets, &mut q);
        (out, mesh.counters.pending_refusals, ia, ib)
    };
    // Without the refusal: the CCA at 6062 µs is clear, the frame waits for node 1's
    // acknowledgement to end (6456 µs) and is on the air until 6456 + 2720 = 9176 µs.
    let (out, refusals, ia, ib) = run(base);
    assert_eq!(
        out,
        vec![(5912, MeshOutcome::Exit(ia)), (9176, MeshOutcome::Exit(ib))]
    );
    assert_eq!(refusals, 0);
    // With it (`nullrdc.c` `send_packet`: `pending_packet()` → MAC_TX_COLLISION): refused,
    // retried after T + rand(T): 125–250 ms later, then on the air 192 + 2720 µs after.
    let (out, refusals, _, _) = run(ContikiParams {
        pending_refusal: true,
        ..base
    });
    assert_eq!(refusals, 1);
    assert_eq!(out[0], (5912, MeshOutcome::Exit(ia)));
    let (t, o) = out[1];
    assert_eq!(o, MeshOutcome::Exit(ib));
    assert!(
        (6062 + 125_000 + 2912..6062 + 250_000 + 2912).contains(&t),
        "{t}"
    );
    // Without the acknowledgement wait nullrdc.c does not check (NULLRDC_802154_AUTOACK 0).
    let (_, refusals, _, _) = run(ContikiParams {
        pending_refusal: true,
        wait_ack: false,
        ..base
    });
    assert_eq!(refusals, 0);
}

#[test]
fn a_node_leaves_a_parent_whose_link_fails() {
    use coaplab_engine::net::radio::mac::Medium;
    // A diamond, range 10 m: root 0 at (0, 0); 1 at (7, 7) and 2 at (7, −7), 9.9 m from it
    // and 14 m apart; 3 at (14, 0), 9.9 m from 1 and 2, 14 m from the root. Built on hop
    // counts, 3's parent is 1 (the lowest-numbered neighbour one hop closer).
    let ck = ContikiParams {
        rpl_etx: true,
        ..params()
    };
    let p = RadioParams {
        range_m: 10.0,
        interference_m: 20.0,
        carrier_sense_m: 10.0,
        link_loss: 0.0,
        addressing: MacAddressing::Long,
        mac: MacParams::default(),
        queue_frames: 4,
        border_router_queue_frames: 6,
        wake_period: None,
        strobe_gap: Duration::from_micros(544),
        phase_lock: false,
        contiki: Some(ck),
    };
    let mut mesh = Mesh::new(
        p,
        vec![(0.0, 0.0), (7.0, 7.0), (7.0, -7.0), (14.0, 0.0)],
        0,
        0,
        (0..).map(Xoshiro256pp::seed_from_u64),
        Xoshiro256pp::seed_from_u64(99),
    )
    .unwrap();
    assert_eq!(mesh.dodag.route(3, 0), vec![3, 1, 0]);
    // neighbor-info.c, ×16 fixed point: a first frame acknowledged at once, 16; then frames
    // given up (ETX_NOACK_PENALTY 15 → 240): (16·90 + 240·10) / 100 = 38, then 58, 76, 92.
    // Path ETX ×128 (rpl-of-etx.c): via 1, 1's unmeasured link (80 → 640) + 3's link × 8;
    // via 2, 640 + 640 = 1280. After 76: 640 + 608 = 1248 < 1280, 1 stays; after 92:
    // 640 + 736 = 1376, 96 above 1280 (beyond the 64 of PARENT_SWITCH_THRESHOLD_DIV): 2.
    mesh.link_sent(3, 1, true, 1);
    for _ in 0..3 {
        mesh.link_sent(3, 1, false, 4);
        assert_eq!(mesh.dodag.parent[3], 1);
    }
    mesh.link_sent(3, 1, false, 4);
    assert_eq!(mesh.dodag.route(3, 0), vec![3, 2, 0]);
    // Downward routes follow (storing mode): the root reaches 3 through 2.
    assert_eq!(mesh.dodag.route(0, 3), vec![0, 2, 3]);
    assert_eq!(mesh.counters.parent_changes, 1);
    // Without `contiki_rpl_etx` the same reports change nothing.
    let mut fixed = line(3, None, params());
    for _ in 0..10 {
        fixed.link_sent(0, 1, false, 4);
    }
    assert_eq!(fixed.counters.parent_changes, 0);
}
