//! The multi-hop IEEE 802.15.4 model (docs/networks.md): PHY timing, CSMA/CA, collisions,
//! retries, MAC queues, 6LoWPAN sizes, the DODAGs of the built-in topologies, and one CoAP
//! exchange over three hops. Every expected value is computed by hand in the comment next to
//! it, from IEEE 802.15.4-2006, RFC 6282 and RFC 4944.

mod common;

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use coaplab_cc::rng::{Rng, Xoshiro256pp};
use coaplab_cc::{Duration, Instant};
use coaplab_engine::config::MacAddressing;
use coaplab_engine::net::network::{DropReason, NetEvent, Scheduler};
use coaplab_engine::net::radio::mac::{CcaDecision, Csma, MacParams};
use coaplab_engine::net::radio::rpl::{Dodag, NO_PARENT};
use coaplab_engine::net::radio::sixlowpan::{self, Fragments, Hop};
use coaplab_engine::net::radio::{phy, Mesh, MeshOutcome, RadioParams};
use coaplab_engine::net::topology::{chain, dumbbell, grid, mesh::Layout};
use coaplab_engine::packet::{NetPacket, Packet, PacketKind};
use coaplab_engine::sim::slab::{PacketId, Slab};
use proptest::prelude::*;
use serde_json::json;

const US: fn(u64) -> Instant = |us| Instant::from_nanos(us * 1000);

/// An RNG that always returns the same word.
struct Fixed(u64);
impl Rng for Fixed {
    fn next_u64(&mut self) -> u64 {
        self.0
    }
}

#[test]
fn airtime_of_frames() {
    // 250 kbit/s: 32 µs a byte. A full frame: (6 PHY + 127 MAC) × 32 = 4256 µs.
    assert_eq!(phy::airtime(127), Duration::from_micros(4256));
    // An acknowledgement: (6 + 5) × 32 = 352 µs.
    assert_eq!(phy::airtime(phy::ACK_FRAME), Duration::from_micros(352));
    // MAC headers: long 2 + 1 + 2 + 8 + 8 = 21, short 2 + 1 + 2 + 2 + 2 = 9; content room
    // 127 − 21 − 2 = 104 and 127 − 9 − 2 = 116.
    assert_eq!(phy::frame_space(MacAddressing::Long), 104);
    assert_eq!(phy::frame_space(MacAddressing::Short), 116);
}

#[test]
fn csma_timing_with_fixed_draws() {
    let p = MacParams::default();
    let mut mac = Csma::default();
    // The largest draw: ⌊(2^64 − 1)·2^BE / 2^64⌋ = 2^BE − 1 slots. BE = 3: 7 × 320 = 2240 µs of
    // backoff, then the 128 µs CCA: it ends at 2368 µs.
    let mut max = Fixed(u64::MAX);
    assert_eq!(mac.begin(US(0), &p, &mut max), US(2368));
    // Busy: NB 1, BE 4 → 15 slots = 4800 µs + 128 → 2368 + 4928 = 7296 µs.
    assert_eq!(
        mac.on_cca(US(2368), true, &p, &mut max),
        CcaDecision::Backoff { cca_end: US(7296) }
    );
    // Clear: transmit after the 192 µs turnaround, at 7488 µs.
    assert_eq!(
        mac.on_cca(US(7296), false, &p, &mut max),
        CcaDecision::Transmit { at: US(7488) }
    );
    // The smallest draw: 0 slots; BE grows 3 → 4 → 5 and stays at macMaxBE = 5.
    let mut zero = Fixed(0);
    let mut mac = Csma::default();
    assert_eq!(mac.begin(US(0), &p, &mut zero), US(128));
    let mut t = 128;
    for (busy, be) in [(1, 4), (2, 5), (3, 5), (4, 5)] {
        t += 128;
        assert_eq!(
            mac.on_cca(US(t - 128), true, &p, &mut zero),
            CcaDecision::Backoff { cca_end: US(t) }
        );
        assert_eq!((mac.nb, mac.be), (busy, be));
    }
    // The fifth busy CCA: NB = 5 > macMaxCSMABackoffs = 4: channel-access failure.
    assert_eq!(mac.on_cca(US(t), true, &p, &mut zero), CcaDecision::Fail);
}

#[test]
fn retries_restart_the_backoff_and_end_after_max_frame_retries() {
    let p = MacParams::default();
    let mut zero = Fixed(0);
    let mut mac = Csma::default();
    assert_eq!(mac.begin(US(0), &p, &mut zero), US(128));
    // The frame leaves the air at 1000 µs: the acknowledgement is awaited until 1864 µs.
    assert_eq!(mac.on_tx_end(US(1000), &p), US(1864));
    for retry in 1..=3 {
        // Each retransmission starts a new CSMA attempt: CCA ends 128 µs later.
        assert_eq!(mac.on_ack_timeout(US(1864), &p, &mut zero), Some(US(1992)));
        assert_eq!((mac.retries, mac.nb, mac.be), (retry, 0, 3));
        mac.on_tx_end(US(1000), &p);
    }
    // macMaxFrameRetries = 3 retransmissions made: the frame fails.
    assert_eq!(mac.on_ack_timeout(US(1864), &p, &mut zero), None);
}

#[test]
fn iphc_and_udp_compression_sizes() {
    let hop = |from_origin, to_destination| Hop {
        from_origin,
        to_destination,
        source_outside: false,
        destination_outside: false,
        addressing: MacAddressing::Long,
    };
    // One hop from the source to the destination: both addresses from the MAC addresses,
    // hop limit 64 elided: the 2-byte IPHC base only.
    assert_eq!(sixlowpan::iphc_bytes(hop(true, true)), 2);
    // First hop, not to the destination: + the destination's 8-byte IID = 10.
    assert_eq!(sixlowpan::iphc_bytes(hop(true, false)), 10);
    // A middle hop: + hop limit 1 + two IIDs: 2 + 1 + 8 + 8 = 19.
    assert_eq!(sixlowpan::iphc_bytes(hop(false, false)), 19);
    // The last hop: 2 + 1 + 8 = 11.
    assert_eq!(sixlowpan::iphc_bytes(hop(false, true)), 11);
    // Short addresses: IIDs of 2 bytes: 2 + 1 + 2 + 2 = 7.
    let short = Hop {
        addressing: MacAddressing::Short,
        ..hop(false, false)
    };
    assert_eq!(sixlowpan::iphc_bytes(short), 7);
    // A source outside the mesh is carried in full: 2 + 1 + 16 + 0 (last hop) = 19.
    let outside = Hop {
        source_outside: true,
        ..hop(false, true)
    };
    assert_eq!(sixlowpan::iphc_bytes(outside), 19);
    // UDP NHC: 1 + ports + 2 (checksum). 5683 and 49152: 4 bytes of ports → 7.
    assert_eq!(sixlowpan::udp_nhc_bytes(49152, 5683), 7);
    // Both in 0xF0B0–0xF0BF: 1 byte of ports → 4.
    assert_eq!(sixlowpan::udp_nhc_bytes(0xF0B1, 0xF0B2), 4);
    // One in 0xF000–0xF0FF: 3 bytes → 6.
    assert_eq!(sixlowpan::udp_nhc_bytes(0xF012, 5683), 6);
}

#[test]
fn a_packet_one_byte_over_a_frame_takes_two_fragments() {
    // Compressed headers 9 (IPHC 2 + UDP 7), uncompressed 48 (IPv6 40 + UDP 8), room 104.
    // 9 + 95 = 104 bytes fits one frame.
    assert_eq!(
        sixlowpan::fragment(9, 48, 95, 104),
        Some(Fragments {
            count: 1,
            first: 104,
            middle: 0,
            last: 0
        })
    );
    // 9 + 96 = 105: FRAG1 room for payload 104 − 4 − 9 = 91; uncompressed 48 + p1 must be
    // a multiple of 8: ⌊(91 + 48)/8⌋·8 = 136 → p1 = 88, first = 4 + 9 + 88 = 101;
    // the rest 96 − 88 = 8 in a FRAGN: 5 + 8 = 13.
    let f = sixlowpan::fragment(9, 48, 96, 104).unwrap();
    assert_eq!(
        f,
        Fragments {
            count: 2,
            first: 101,
            // A full FRAGN would be 5 + ⌊99/8⌋·8 = 5 + 96 (unused with two fragments).
            middle: 101,
            last: 13
        }
    );
    assert_eq!((f.bytes(0), f.bytes(1)), (101, 13));
    // On the air: MAC frames of 23 + 101 = 124 and 23 + 13 = 36 bytes: (6 + 124) × 32 =
    // 4160 µs and (6 + 36) × 32 = 1344 µs.
    assert_eq!(phy::airtime(23 + f.bytes(0)), Duration::from_micros(4160));
    assert_eq!(phy::airtime(23 + f.bytes(1)), Duration::from_micros(1344));
}

#[test]
fn dodag_of_the_chain() {
    let l = chain::layout(10.0);
    let d = dodag(&l);
    // Rank = distance in hops to node 10; parent = the neighbour towards it.
    for i in 0..21u16 {
        assert_eq!(d.depth[i as usize], i.abs_diff(10));
        let parent = match i {
            10 => NO_PARENT,
            i if i < 10 => i + 1,
            i => i - 1,
        };
        assert_eq!(d.parent[i as usize], parent);
    }
    // Node 0 to the sink: 10 hops; node 9 to node 11 through the root: 9 → 10 → 11.
    assert_eq!(d.hops(0, 10), 10);
    assert_eq!(d.route(9, 11), vec![9, 10, 11]);
    assert!(l.clients.iter().all(|&(_, s)| s == 10) && l.clients.len() == 20);
}

#[test]
fn dodag_of_the_grid() {
    let l = grid::layout(10.0);
    let d = dodag(&l);
    // Rank = Manhattan distance to (3, 3) (diagonals are √2 ranges away: not neighbours).
    for i in 0..49u16 {
        let (r, c) = (i / 7, i % 7);
        assert_eq!(d.depth[i as usize], r.abs_diff(3) + c.abs_diff(3));
    }
    // Lowest-numbered parent one hop closer: node 0 (0,0) has 1 (0,1) and 7 (1,0) → 1;
    // node 6 (0,6) has 5 and 13 → 5; node 48 (6,6) has 41 and 47 → 41.
    assert_eq!((d.parent[0], d.parent[6], d.parent[48]), (1, 5, 41));
    // Corner to corner: up 0 → 1 → 2 → 3 → 10 → 17 → 24, down along the parents of 48:
    // 48 ← 41 ← 34 ← 27 ← 26 ← 25 ← 24 (27 = (3,6) has parent 26 = (3,5); 34 = (4,6) has
    // 27 and 33 → 27).
    assert_eq!(
        d.route(0, 48),
        vec![0, 1, 2, 3, 10, 17, 24, 25, 26, 27, 34, 41, 48]
    );
    // Down into its own subtree: 30 (4,2) has 23 (3,2) and 31 (4,3) one hop closer → parent
    // 23, so 23 → 30 is direct. Across branches: 31 (4,3)'s only closer neighbour is 24, so
    // 23 → 31 climbs to the root: 23 → 24 → 31.
    assert_eq!(d.parent[30], 23);
    assert_eq!(d.route(23, 30), vec![23, 30]);
    assert_eq!(d.route(23, 31), vec![23, 24, 31]);
}

#[test]
fn dodag_of_the_dumbbell() {
    let l = dumbbell::layout(10.0);
    let d = dodag(&l);
    // Border router 10 at rank 0; the sinks 9 and 11 at rank 1; every half-circle node at
    // rank 2 under its side's sink (one range from it, √2 ranges or more from node 10).
    assert_eq!(d.depth[10], 0);
    assert_eq!((d.parent[9], d.parent[11]), (10, 10));
    for i in (0..9).chain(12..21) {
        assert_eq!(d.depth[i], 2);
        assert_eq!(d.parent[i], if i < 9 { 9 } else { 11 });
    }
    // Each half circle sends to the other side's sink: 3 hops through the border router.
    assert_eq!(d.route(0, 11), vec![0, 9, 10, 11]);
    assert_eq!(d.route(20, 9), vec![20, 11, 10, 9]);
    assert_eq!(l.clients.len(), 20);
    assert!(l.clients.contains(&(9, 11)) && l.clients.contains(&(11, 9)));
}

fn dodag(l: &Layout) -> Dodag {
    let n = l.positions.len();
    let neighbors: Vec<Vec<u16>> = (0..n)
        .map(|i| {
            (0..n)
                .filter(|&j| {
                    j != i
                        && coaplab_engine::net::radio::within(l.positions[i], l.positions[j], 10.0)
                })
                .map(|j| j as u16)
                .collect()
        })
        .collect();
    Dodag::build(l.border_router, &neighbors).unwrap()
}

// ---- The mesh driven directly ----------------------------------------------------------

/// A minimal event queue: (time, sequence) order.
#[derive(Default)]
struct Queue {
    heap: BinaryHeap<Reverse<(u64, u64, usize)>>,
    events: Vec<NetEvent>,
}
impl Scheduler for Queue {
    fn schedule_net(&mut self, at: Instant, event: NetEvent) {
        let seq = self.events.len();
        self.events.push(event);
        self.heap.push(Reverse((at.nanos(), seq as u64, seq)));
    }
}

/// What happened to each packet: (time µs, outcome).
fn drive(mesh: &mut Mesh, packets: &Slab<NetPacket>, q: &mut Queue) -> Vec<(u64, MeshOutcome)> {
    let mut out = Vec::new();
    while let Some(Reverse((t, _, i))) = q.heap.pop() {
        let NetEvent::Radio(_, ev) = q.events[i] else {
            unreachable!()
        };
        let now = Instant::from_nanos(t);
        match mesh.handle(now, ev, packets, q) {
            MeshOutcome::Nothing => {}
            o => out.push((t / 1000, o)),
        }
    }
    out
}

fn params(min_be: u8, max_be: u8, retries: u8) -> RadioParams {
    RadioParams {
        range_m: 10.0,
        interference_m: 20.0,
        carrier_sense_m: 10.0,
        link_loss: 0.0,
        addressing: MacAddressing::Long,
        mac: MacParams {
            min_be,
            max_be,
            max_frame_retries: retries,
            ..MacParams::default()
        },
        queue_frames: 4,
        border_router_queue_frames: 6,
        wake_period: None,
        strobe_gap: Duration::from_micros(544),
        contiki: None,
    }
}

fn line(n: u16, root: u16, p: RadioParams) -> Mesh {
    Mesh::new(
        p,
        (0..n).map(|i| (f64::from(i) * 10.0, 0.0)).collect(),
        root,
        0,
        (0..).map(Xoshiro256pp::seed_from_u64),
        Xoshiro256pp::seed_from_u64(99),
    )
    .unwrap()
}

/// A request of `ipv6` bytes as a whole IPv6 packet (its IPv4 size is 20 bytes less).
/// One request of `ipv6` bytes handed to `mesh` at time 0, from node 0 to node 1.
fn enter_one(mesh: &mut Mesh, ipv6: u32) -> (Slab<NetPacket>, Queue, PacketId) {
    let mut packets = Slab::default();
    let r = request(ipv6);
    let id = packets.insert(r);
    let mut q = Queue::default();
    mesh.enter(Instant::ZERO, id, &r, 0, 1, &mut q).unwrap();
    (packets, q, id)
}

fn request(ipv6: u32) -> NetPacket {
    NetPacket::udp(Packet {
        kind: PacketKind::Request,
        client: 0,
        exchange: 0,
        ordinal: 0,
        mid: 0,
        block: None,
        payload: 0,
        rexmit_cnt: false,
        more: false,
        non: false,
        ip_bytes: ipv6 - 20,
        request_sent: Instant::ZERO,
    })
}

#[test]
fn one_frame_one_hop_on_an_idle_channel() {
    let mut mesh = line(2, 1, params(0, 0, 3));
    let mut packets = Slab::default();
    let p = request(95);
    let id = packets.insert(p);
    let mut q = Queue::default();
    assert_eq!(
        mesh.enter(Instant::ZERO, id, &p, 0, 1, &mut q),
        Ok(MeshOutcome::Nothing)
    );
    // 95-byte IPv6 packet: CoAP 95 − 48 = 47 B; compressed headers 2 (IPHC: source and
    // destination from the MAC addresses, first hop) + 7 (UDP) → 56 B; MAC frame 21 + 56 + 2
    // = 79 B; airtime (6 + 79) × 32 = 2720 µs. BE 0: no backoff; CCA ends at 128 µs, the
    // frame is on the air from 128 + 192 = 320 µs to 3040 µs, when node 1 has it.
    assert_eq!(
        drive(&mut mesh, &packets, &mut q),
        vec![(3040, MeshOutcome::Exit(id))]
    );
    let c = mesh.counters;
    assert_eq!((c.frames_sent, c.acks_sent, c.collisions), (1, 1, 0));
    assert_eq!(mesh.queued_frames(), 0);
}

#[test]
fn a_fragmented_packet_crosses_one_hop_in_two_frames() {
    let mut mesh = line(2, 1, params(0, 0, 3));
    // A 144-byte IPv6 packet: CoAP 144 − 48 = 96 B; on its only hop 9 B of compressed
    // headers + 96 = 105 B, one over the frame's 104: FRAG1 101 B, FRAGN 13 B (the sizes of
    // a_packet_one_byte_over_a_frame_takes_two_fragments); MAC frames 124 and 36 B.
    let (packets, mut q, id) = enter_one(&mut mesh, 144);
    // FRAG1: CCA ends 128, on the air 320–4480 µs ((6 + 124) × 32 = 4160); the ACK follows
    // its turnaround: 4672–5024 µs. FRAGN: CCA 5024–5152 (clear: the ACK ended at 5024), on
    // the air from 5344 for (6 + 36) × 32 = 1344 µs: node 1 has the whole packet at 6688 µs.
    assert_eq!(
        drive(&mut mesh, &packets, &mut q),
        vec![(6688, MeshOutcome::Exit(id))]
    );
    let c = mesh.counters;
    assert_eq!(
        (c.frames_sent, c.acks_sent, c.fragmented_packets),
        (2, 2, 1)
    );
}

#[test]
fn contikimac_strobes_until_the_receiver_wakes_up() {
    let mut p = params(0, 0, 3);
    // 8 Hz channel checks: every 125 ms; node 1 wakes up at 10 ms (+ k × 125 ms).
    p.wake_period = Some(Duration::from_millis(125));
    let mut mesh = line(2, 1, p);
    mesh.wake_phases = vec![Duration::ZERO, Duration::from_millis(10)];
    let (packets, mut q, id) = enter_one(&mut mesh, 95);
    // The strobe starts at 320 µs (CCA 128 + turnaround 192); a copy every 2720 (airtime) +
    // 544 (gap) = 3264 µs. Node 1 wakes at 10 000 µs and takes the next whole copy: copy
    // k = ⌈(10 000 − 320) / 3264⌉ = ⌈2.97⌉ = 3, from 320 + 3 × 3264 = 10 112 µs to
    // 10 112 + 2720 = 12 832 µs.
    assert_eq!(
        drive(&mut mesh, &packets, &mut q),
        vec![(12832, MeshOutcome::Exit(id))]
    );
    assert_eq!((mesh.counters.strobes, mesh.counters.frames_sent), (3, 1));
}

#[test]
fn hidden_terminals_collide_at_the_middle_node() {
    // Nodes 0 and 2 are two ranges apart: they cannot sense each other, but both are within
    // the interference range (2 ranges) of node 1, to which both send at time 0.
    let mut mesh = line(3, 1, params(0, 0, 0));
    let mut packets = Slab::default();
    let (a, b) = (request(95), request(95));
    let (ia, ib) = (packets.insert(a), packets.insert(b));
    let mut q = Queue::default();
    mesh.enter(Instant::ZERO, ia, &a, 0, 1, &mut q).unwrap();
    mesh.enter(Instant::ZERO, ib, &b, 2, 1, &mut q).unwrap();
    // Both CCAs find the channel clear at 128 µs; both frames are on the air 320–3040 µs and
    // corrupt each other at node 1. No acknowledgement: with no retries both frames — and
    // their packets — are given up when the wait ends, 3040 + 864 = 3904 µs.
    assert_eq!(
        drive(&mut mesh, &packets, &mut q),
        vec![
            (3904, MeshOutcome::Dropped(ia, DropReason::Radio)),
            (3904, MeshOutcome::Dropped(ib, DropReason::Radio)),
        ]
    );
    let c = mesh.counters;
    assert_eq!((c.collisions, c.retry_failures, c.radio_drops), (2, 2, 2));
    assert_eq!(c.acks_sent, 0);
}

#[test]
fn retries_until_exhaustion_on_a_lossy_link() {
    let mut p = params(0, 0, 3);
    p.link_loss = 1.0;
    let mut mesh = line(2, 1, p);
    let (packets, mut q, id) = enter_one(&mut mesh, 95);
    // Every attempt: CCA 128 + turnaround 192 + airtime 2720 + ACK wait 864 = 3904 µs.
    // The original and macMaxFrameRetries = 3 retransmissions: 4 × 3904 = 15616 µs.
    assert_eq!(
        drive(&mut mesh, &packets, &mut q),
        vec![(15616, MeshOutcome::Dropped(id, DropReason::Radio))]
    );
    let c = mesh.counters;
    assert_eq!(
        (
            c.frames_sent,
            c.retransmissions,
            c.link_losses,
            c.retry_failures
        ),
        (4, 3, 4, 1)
    );
}

#[test]
fn a_lossy_link_loses_only_its_own_frames() {
    // Node 0 sends to node 1 (the root) and node 2 to node 1; only link 0–1 loses everything.
    let mut mesh = line(3, 1, params(0, 0, 0));
    mesh.set_link_loss(0, 1, 1.0);
    let mut packets = Slab::default();
    let r = request(95);
    let (ia, ib) = (packets.insert(r), packets.insert(r));
    let mut q = Queue::default();
    mesh.enter(Instant::ZERO, ia, &r, 0, 1, &mut q).unwrap();
    // Node 2 starts after node 0's exchange is over (no collision): 0's frame 320–3040 µs,
    // no acknowledgement, given up at 3904 µs.
    assert_eq!(
        drive(&mut mesh, &packets, &mut q),
        vec![(3904, MeshOutcome::Dropped(ia, DropReason::Radio))]
    );
    let t0 = Instant::from_nanos(10_000_000);
    mesh.enter(t0, ib, &r, 2, 1, &mut q).unwrap();
    // Link 2–1 keeps the default (no loss): 10 ms + 3040 µs.
    assert_eq!(
        drive(&mut mesh, &packets, &mut q),
        vec![(13040, MeshOutcome::Exit(ib))]
    );
    assert_eq!(mesh.counters.link_losses, 1);
}

#[test]
fn the_mac_queue_overflows_at_the_fifth_frame() {
    let mut mesh = line(2, 1, params(3, 5, 3));
    let mut packets = Slab::default();
    let mut q = Queue::default();
    // Four one-frame packets fill node 0's queue of 4 frames (the one being sent included);
    // the fifth is refused.
    let ids: Vec<PacketId> = (0..5).map(|_| packets.insert(request(95))).collect();
    for (k, &id) in ids.iter().enumerate() {
        let got = mesh.enter(Instant::ZERO, id, &packets.get(id), 0, 1, &mut q);
        if k < 4 {
            assert_eq!(got, Ok(MeshOutcome::Nothing), "packet {k}");
        } else {
            assert_eq!(got, Err(DropReason::MacQueue));
        }
    }
    assert_eq!(
        (mesh.counters.mac_queue_drops, mesh.queued_frames()),
        (1, 4)
    );
    // The border router holds 6 frames: 6 accepted, the seventh refused.
    let mut mesh = line(2, 0, params(3, 5, 3));
    let verdicts: Vec<bool> = (0..7)
        .map(|_| {
            let id = packets.insert(request(95));
            mesh.enter(Instant::ZERO, id, &packets.get(id), 0, 1, &mut q)
                .is_ok()
        })
        .collect();
    assert_eq!(verdicts, [true, true, true, true, true, true, false]);
}

// ---- Whole runs --------------------------------------------------------------------------

#[test]
fn one_coap_exchange_over_three_hops() {
    // The dumbbell's client 0 is node 0; its sink is node 11: 0 → 9 → 10 → 11 and back.
    // BE fixed at 0 (no backoff) makes the run deterministic.
    let cfg = common::config(json!({
        "workload": {"kind": "continuous", "clients": 1, "exchanges": 1, "response_bytes": 0},
        "network": {"kind": "dumbbell", "mac_min_be": 0, "mac_max_be": 0},
    }));
    let r = coaplab_engine::testbed::run(&cfg, 0, None).unwrap();
    // Request: CON GET, CoAP 12 B. MAC frame = 23 (header 21 + FCS 2) + IPHC + UDP 7 + 12:
    //   0 → 9  (from the source): IPHC 2 + 8 (destination IID) = 10 → 52 B → 58 × 32 = 1856 µs
    //   9 → 10 (middle):          IPHC 2 + 1 + 8 + 8 = 19        → 61 B → 67 × 32 = 2144 µs
    //   10 → 11 (to the sink):    IPHC 2 + 1 + 8 = 11            → 53 B → 59 × 32 = 1888 µs
    // Response: ACK 2.05 without payload, CoAP 4 B:
    //   11 → 10: IPHC 10 → 23 + 10 + 7 + 4 = 44 B → 50 × 32 = 1600 µs
    //   10 → 9:  IPHC 19 → 53 B → 59 × 32 = 1888 µs
    //   9 → 0:   IPHC 11 → 45 B → 51 × 32 = 1632 µs
    // The first hop starts with the CCA (128 µs) and the turnaround (192 µs): 320 µs. Every
    // later hop starts at a node that has just received the packet and owes its
    // acknowledgement until 192 + 352 = 544 µs later; its CCA is repeated after that:
    // 544 + 128 + 192 = 864 µs before its frame goes on the air.
    //   request at the sink:  320 + 1856 + 864 + 2144 + 864 + 1888 = 7936 µs
    //   response at client:   7936 + 864 + 1600 + 864 + 1888 + 864 + 1632 = 15648 µs
    let c = &r.clients[0];
    assert_eq!(c.exchanges_completed, 1);
    assert_eq!(c.fct_s, Some(0.015648));
    let m = r.mesh.unwrap();
    assert_eq!(m.client_hops, vec![3]);
    // 3 hops each way, one data frame and one acknowledgement per hop.
    assert_eq!((m.counters.frames_sent, m.counters.acks_sent), (6, 6));
}

#[test]
fn every_builtin_mesh_runs_the_periodic_workload() {
    for (kind, clients) in [("chain", 20), ("grid", 48), ("dumbbell", 20)] {
        let cfg = common::config(json!({
            "workload": {"kind": "periodic", "clients": clients, "period_s": 2.0,
                         "duration_s": 20.0, "request_bytes": 95, "response_bytes": 0},
            "network": {"kind": kind},
        }));
        let r = coaplab_engine::testbed::run(&cfg, 0, None).unwrap();
        let m = r.mesh.as_ref().unwrap();
        // Each client creates a request every 2 s over 20 s: 10 ticks each.
        assert_eq!(m.requests_generated, 10 * clients, "{kind}");
        conservation(&r);
    }
}

#[test]
fn clients_outside_the_mesh_reach_a_sink_through_the_border_router() {
    // A file mesh: border router 0, sink 1 (one range east), client 2 (two ranges east); one
    // more client outside the mesh, 10 ms behind the border router.
    let cfg = common::config(json!({
        "link": {"path_delay_ms": [10.0, 10.0]},
        "workload": {"kind": "continuous", "clients": 2, "exchanges": 5, "response_bytes": 0},
        "network": {"kind": "file", "outside_clients": 1, "nodes": [
            {"x": 0.0, "y": 0.0, "role": "border-router"},
            {"x": 10.0, "y": 0.0, "role": "sink"},
            {"x": 20.0, "y": 0.0, "role": "client"}]},
    }));
    let r = coaplab_engine::testbed::run(&cfg, 0, None).unwrap();
    let m = r.mesh.as_ref().unwrap();
    // Client 0 on node 2: 2 → 1 is one hop (both within range of each other, 10 m apart).
    // Client 1 outside: it enters at the border router, one hop from the sink.
    assert_eq!(m.client_hops, vec![1, 1]);
    assert!(r.clients.iter().all(|c| c.exchanges_completed == 5));
    // The outside client's exchange takes at least the 2 × 10 ms of its path.
    assert!(r.clients[1].fct_s.unwrap() >= 5.0 * 0.020);
    conservation(&r);
}

/// Every request copy sent is answered (its response delivered), or dropped with a counted
/// reason; the run ends when nothing is left in flight.
fn conservation(r: &coaplab_engine::metrics::RunResult) {
    let m = r.mesh.as_ref().unwrap();
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
    let dropped = m.counters.mac_queue_drops + m.counters.radio_drops + m.counters.oversized_drops;
    assert_eq!(sent, answered + dropped);
    // Every request delivered turned into one response: requests at the server = responses
    // delivered + responses dropped ≤ answered + dropped.
    assert!(r.server.requests <= answered + dropped);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, .. ProptestConfig::default() })]

    /// Every request is answered, dropped with a counted reason, or (never, at the end) in
    /// flight — whatever the load, NSTART, queue sizes, losses and duty cycling.
    #[test]
    fn requests_are_conserved(
        kind in prop::sample::select(vec!["chain", "grid", "dumbbell"]),
        period in 0.05f64..2.0,
        nstart in 1u32..4,
        queue in 1u32..6,
        seed in 0u64..1000,
        loss in prop::sample::select(vec![0.0, 0.1]),
        rdc in prop::sample::select(vec!["nullrdc", "contikimac"]),
        mac in prop::sample::select(vec!["ieee802154", "contiki"]),
        autoack in any::<bool>(),
    ) {
        let clients = if kind == "grid" { 48 } else { 20 };
        let mut cfg = common::config(json!({
            "workload": {"kind": "periodic", "clients": clients, "period_s": period,
                         "duration_s": 5.0, "request_bytes": 95, "response_bytes": 0},
            "coap": {"nstart": nstart, "max_retransmit": 2},
            "network": {"kind": kind, "mac_queue_frames": queue, "link_loss": loss, "rdc": rdc,
                        "mac": mac, "contiki_autoack": autoack},
        }));
        cfg.seed = seed;
        let r = coaplab_engine::testbed::run(&cfg, 0, None).unwrap();
        conservation(&r);
    }

    /// No frame is ever addressed to a node out of range: on random connected layouts, every
    /// hop of every route joins two nodes within range.
    #[test]
    fn routes_only_use_links_within_range(
        xs in prop::collection::vec((0.0f64..40.0, 0.0f64..40.0), 2..25),
    ) {
        let n = xs.len();
        let neighbors: Vec<Vec<u16>> = (0..n)
            .map(|i| (0..n)
                .filter(|&j| j != i && coaplab_engine::net::radio::within(xs[i], xs[j], 10.0))
                .map(|j| j as u16)
                .collect())
            .collect();
        if let Ok(d) = Dodag::build(0, &neighbors) {
            for a in 0..n as u16 {
                for b in 0..n as u16 {
                    for w in d.route(a, b).windows(2) {
                        prop_assert!(coaplab_engine::net::radio::within(
                            xs[w[0] as usize], xs[w[1] as usize], 10.0));
                    }
                }
            }
        }
    }
}
