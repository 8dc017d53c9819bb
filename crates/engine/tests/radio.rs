//! The multi-hop IEEE 802.15.4 model (docs/networks.md): PHY timing, CSMA/CA, collisions,
//! retries, MAC queues, 6LoWPAN sizes, the DODAGs of the built-in topologies, and one CoAP
//! exchange over three hops. Every expected value is computed by hand in the comment next to
//! it, from IEEE 802.15.4-2006, RFC 6282 and RFC 4944.

mod common;

use common::mesh::{drive, request, Queue};

use coaplab_cc::rng::{Rng, Xoshiro256pp};
use coaplab_cc::{Duration, Instant};
use coaplab_engine::config::MacAddressing;
use coaplab_engine::net::network::DropReason;
use coaplab_engine::net::radio::mac::{CcaDecision, Csma, MacParams};
use coaplab_engine::net::radio::rpl::{Dodag, NO_PARENT};
use coaplab_engine::net::radio::sixlowpan::{self, Fragments, Hop};
use coaplab_engine::net::radio::{phy, Mesh, MeshOutcome, RadioParams};
use coaplab_engine::net::topology::{chain, dumbbell, grid, mesh::Layout};
use coaplab_engine::packet::NetPacket;
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
        phase_lock: false,
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

/// Node 0 sends a 95-byte request to node 1 (wake-up phase 10 ms, 8 Hz) at 0, then a second
/// at 200 ms; what happened to the second, and the strobes of both.
fn second_hop(phase_lock: bool, moved_phase: Option<u64>) -> (Vec<(u64, MeshOutcome)>, u64) {
    let mut p = params(0, 0, 3);
    p.wake_period = Some(Duration::from_millis(125));
    p.phase_lock = phase_lock;
    let mut mesh = line(2, 1, p);
    mesh.wake_phases = vec![Duration::ZERO, Duration::from_millis(10)];
    let (mut packets, mut q, first) = enter_one(&mut mesh, 95);
    // As in contikimac_strobes_until_the_receiver_wakes_up: the copy taken is on the air
    // 10 112–12 832 µs (its acknowledgement 13 024–13 376 µs).
    assert_eq!(
        drive(&mut mesh, &packets, &mut q),
        vec![(12832, MeshOutcome::Exit(first))]
    );
    if let Some(ms) = moved_phase {
        mesh.wake_phases[1] = Duration::from_millis(ms);
    }
    let r = request(95);
    let id = packets.insert(r);
    mesh.enter(US(200_000), id, &r, 0, 1, &mut q).unwrap();
    (drive(&mut mesh, &packets, &mut q), mesh.counters.strobes)
}

#[test]
fn a_phase_locked_hop_strobes_from_just_before_the_wake_up() {
    // Contiki 2.6 phase.c: the first frame's acknowledged copy went on the air at
    // e = 10 112 µs (phase_update's encounter time). The second frame is handed over at
    // t = 200 000 µs: phase_wait's wait = (e − t) mod 125 000 = 125 000 − (189 888 mod
    // 125 000) = 125 000 − 64 888 = 60 112 µs ≥ GUARD_TIME (520 ticks of 32 768 Hz =
    // 15 869 140 ns), so the node waits 60 112 000 − 15 869 140 = 44 242 860 ns: the channel
    // access starts at 244 242 860 ns, the CCA ends 128 µs later and the strobe starts after
    // the turnaround at 244 562 860 ns. Node 1 wakes at 10 000 + 2 × 125 000 = 260 000 µs:
    // k = ⌈(260 000 000 − 244 562 860) / 3 264 000⌉ = ⌈4.73⌉ = 5 copies before the one
    // taken (5 × 3264 = 16 320 µs, below MAX_PHASE_STROBE_TIME's 16 662.6 µs), which is on
    // the air from 244 562 860 + 16 320 000 = 260 882 860 ns to 263 602 860 ns.
    let (out, strobes) = second_hop(true, None);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].0, 263_602);
    assert_eq!(strobes, 3 + 5);
}

#[test]
fn an_unlocked_hop_strobes_from_the_start() {
    // Without phase optimisation the second frame's strobe starts at 200 000 + 128 + 192 =
    // 200 320 µs; the same wake-up at 260 000 µs: k = ⌈59 680 / 3264⌉ = ⌈18.28⌉ = 19 copies
    // before the one taken, on the air from 200 320 + 19 × 3264 = 262 336 µs to 265 056 µs.
    // The same wake-up serves both: the lock saves 14 copies of channel time, and 1.45 ms
    // here only because its strobe's grid lands closer to the wake-up.
    let (out, strobes) = second_hop(false, None);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].0, 265_056);
    assert_eq!(strobes, 3 + 19);
}

#[test]
fn a_moved_phase_is_missed_after_max_phase_strobe_time() {
    // Node 1's phase moves to 50 ms after the first exchange (a reboot). The locked strobe
    // starts at 244 562 860 ns as above; node 1 next wakes at 50 000 + 125 000 × 2 =
    // 300 000 µs, 55 437 µs later: more than MAX_PHASE_STROBE_TIME (546 ticks = 16 662 597
    // ns), so the strobe sends the ⌈16 662 597 / 3 264 000⌉ = 6 copies that start before it
    // and ends at 244 562 860 + 5 × 3 264 000 + 2 720 000 = 263 602 860 ns; no
    // acknowledgement by 263 602 860 + 864 000 = 264 466 860 ns. The phase is kept (1 of
    // MAX_NOACKS); the retry waits for the old phase again: (e − t) mod P = 125 000 000 −
    // (254 354 860 mod 125 000 000) = 120 645 140 ns, minus the guard time: the access
    // starts at 264 466 860 + 104 776 000 = 369 242 860 ns, the strobe at 369 562 860 ns —
    // 125 ms after the first, so each of the 4 attempts (macMaxFrameRetries 3) misses the
    // same way; the last times out at 244 562 860 + 3 × 125 000 000 + 19 904 000 =
    // 639 466 860 ns and the frame is given up.
    let (out, strobes) = second_hop(true, Some(50));
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].0, 639_466);
    assert!(matches!(
        out[0].1,
        MeshOutcome::Dropped(_, DropReason::Radio)
    ));
    assert_eq!(strobes, 3 + 4 * 6);
}

#[test]
fn the_etx_dodag_takes_the_path_of_least_etx() {
    // Root 0; node 1 linked to 0 (ETX 1.2) and 2 (1.1); node 2 linked to 0 directly (3.0);
    // node 3 only to 2 (ETX 1.0). Node 2: via 1, 1.2 + 1.1 = 2.3 < 3.0 → parent 1, two hops;
    // node 3: 2.3 + 1.0 = 3.3 through 2: three hops.
    let neighbors = vec![vec![1, 2], vec![0, 2], vec![0, 1, 3], vec![2]];
    let etx = |a: u16, b: u16| match (a.min(b), a.max(b)) {
        (0, 1) => 1.2,
        (1, 2) => 1.1,
        (0, 2) => 3.0,
        (2, 3) => 1.0,
        _ => unreachable!(),
    };
    let d = Dodag::build_etx(0, &neighbors, etx).unwrap();
    assert_eq!(d.parent, vec![NO_PARENT, 0, 1, 2]);
    assert_eq!(d.depth, vec![0, 1, 2, 3]);
    // Direct link cheaper (2.2 < 2.3): node 2 hangs off the root.
    let d = Dodag::build_etx(0, &neighbors, |a, b| {
        if a.min(b) == 0 && a.max(b) == 2 {
            2.2
        } else {
            etx(a, b)
        }
    })
    .unwrap();
    assert_eq!(d.parent[2], 0);
    // Node 3's only link above MAX_LINK_METRIC (10): no acceptable path.
    let bad = |a: u16, b: u16| if a.max(b) == 3 { 10.5 } else { etx(a, b) };
    assert_eq!(Dodag::build_etx(0, &neighbors, bad), Err(3));
}

#[test]
fn shadowing_prr_at_chosen_distances() {
    use coaplab_engine::net::radio::prr::{mean_snr_db, oqpsk_ber, prr, Shadowing};
    // The defaults (TOSSIM's LinkLayerModel configuration): Pt 0 dBm, PL(1 m) 55.4 dB, η 4.7,
    // noise floor −105 dBm. At 10 m: SNR = 0 − 55.4 − 47 + 105 = 2.6 dB, γ = 10^0.26 = 1.8197;
    // the sum's terms: k = 2: 120·e^(−20γ/2) = 120·e^(−18.197) = 1.5008e−6; k = 3:
    // −560·e^(−24.263) = −1.625e−8; k = 4: +1820·e^(−27.296) = +2.5e−9; k = 5: −4368·
    // e^(−29.116) = −9.9e−10; the rest below 5e−10: sum ≈ 1.4864e−6, BER = sum / 30 =
    // 4.955e−8; a 100-byte frame survives with (1 − 4.955e−8)^800 = 0.99996.
    let d = Shadowing {
        tx_power_dbm: 0.0,
        noise_floor_dbm: -105.0,
        path_loss_exponent: 4.7,
        path_loss_d0_db: 55.4,
        sigma_db: 0.0,
    };
    assert!((mean_snr_db(&d, 10.0) - 2.6).abs() < 1e-9);
    let ber = oqpsk_ber(2.6);
    assert!((ber / 4.955e-8 - 1.0).abs() < 1e-3, "{ber}");
    assert!((prr(ber, 100) - 0.99996).abs() < 5e-6);
    // η 4, PL(1 m) 65 dB: SNR = 40 − 40·log10(d). At 10 m, 0 dB, γ = 1: the terms
    // (−1)^k·C(16, k)·e^(20(1/k − 1)) are, k = 2…16: 5.44799e−3, −9.06974e−4, 5.56742e−4,
    // −4.91554e−4, 4.62682e−4, −4.10561e−4, 3.23166e−4, −2.17588e−4, 1.21962e−4,
    // −5.54650e−5, 1.98612e−5, −5.37581e−6, 1.03208e−6, −1.25109e−7, 7.19413e−9: sum
    // 4.84580e−3, BER = 1.61527e−4. A 106-byte frame on the air (the 100-byte MAC frame of a
    // request plus the PHY header) survives with (1 − 1.61527e−4)^848 = 0.87198, an
    // acknowledgement (11 bytes) with (1 − 1.61527e−4)^88 = 0.98589.
    let e = Shadowing {
        path_loss_exponent: 4.0,
        path_loss_d0_db: 65.0,
        ..d
    };
    assert!(mean_snr_db(&e, 10.0).abs() < 1e-9);
    let ber = oqpsk_ber(0.0);
    assert!((ber / 1.61527e-4 - 1.0).abs() < 1e-5, "{ber}");
    assert!((prr(ber, 106) - 0.87198).abs() < 1e-5);
    assert!((prr(ber, 11) - 0.98589).abs() < 1e-5);
    // At 5 m: SNR = 40 − 40 × 0.69897 = 12.04 dB: the k = 2 term 120·e^(−10 × 16.0) is
    // below 1e−60: the frame always arrives. Very close, d0 = 1 m bounds the SNR (40 dB).
    assert_eq!(prr(oqpsk_ber(mean_snr_db(&e, 5.0)), 106), 1.0);
    assert_eq!(mean_snr_db(&e, 0.2), 40.0);
    // No signal at all: BER 1/2 (the sum's terms at γ = 0 add up to 1 − 16 + 30 = 15: 15/30).
    assert!((oqpsk_ber(-300.0) - 0.5).abs() < 1e-12);
}

#[test]
fn shadowing_is_drawn_once_per_link_within_range() {
    use coaplab_engine::net::radio::prr::{link_bers, oqpsk_ber, Shadowing};
    // A fixed draw: every uniform is 2^63 / 2^64 = 0.5, so Box–Muller gives
    // z = √(−2·ln 0.5)·cos(2π·0.5) = −1.177410; SNR = mean − σ·z = 2.6 + 3.2 × 1.177410 =
    // 6.367712 dB for the 10 m link, the same BER both ways. Nodes 0 and 2 are 30 m apart, out
    // of range: no draw, BER 0.
    let p = Shadowing {
        tx_power_dbm: 0.0,
        noise_floor_dbm: -105.0,
        path_loss_exponent: 4.7,
        path_loss_d0_db: 55.4,
        sigma_db: 3.2,
    };
    let pos = [(0.0, 0.0), (10.0, 0.0), (30.0, 0.0)];
    let mut rng = Fixed(1 << 63);
    let ber = link_bers(&p, &pos, |i, j| i + j == 1, &mut rng);
    let want = oqpsk_ber(6.367712);
    assert!((ber[1] / want - 1.0).abs() < 1e-4, "{} vs {want}", ber[1]);
    assert_eq!(ber[1], ber[3]);
    assert_eq!((ber[2], ber[6], ber[5], ber[7]), (0.0, 0.0, 0.0, 0.0));
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

/// A file mesh of sinks only, on a line east of the border router (node 0): node 1 at 30 m,
/// node 2 at 10 m, node 3 at 20 m (3, 1 and 2 hops), plus `extra` nodes.
fn sinks_only(extra: serde_json::Value, clients: u32) -> coaplab_engine::config::RunConfig {
    let mut nodes = vec![
        json!({"x": 0.0, "y": 0.0, "role": "border-router"}),
        json!({"x": 30.0, "y": 0.0, "role": "sink"}),
        json!({"x": 10.0, "y": 0.0, "role": "sink"}),
        json!({"x": 20.0, "y": 0.0, "role": "sink"}),
    ];
    nodes.extend(extra.as_array().unwrap().iter().cloned());
    common::config(json!({
        "link": {"path_delay_ms": [10.0, 10.0]},
        "workload": {"kind": "continuous", "clients": clients, "exchanges": 3, "response_bytes": 0},
        "network": {"kind": "file", "outside_clients_per_sink": true, "nodes": nodes},
    }))
}

#[test]
fn one_outside_client_per_sink_in_node_order() {
    // No mesh client: outside client k talks to the k-th sink in node order — nodes 1, 2, 3,
    // 3, 1 and 2 hops from the border router where the outside clients enter.
    let r = coaplab_engine::testbed::run(&sinks_only(json!([]), 3), 0, None).unwrap();
    assert_eq!(r.mesh.as_ref().unwrap().client_hops, vec![3, 1, 2]);
    assert!(r.clients.iter().all(|c| c.exchanges_completed == 3));
    conservation(&r);
    // A mesh client (node 4, at 40 m) naming sink 2: it is client 0 (4 → 1 → 3 → 2 climbs
    // the DODAG 0 — 2 — 3 — 1 — 4 towards its root, and sink 2 is an ancestor: 3 hops); the
    // outside clients serve its sink first, then the idle sinks 1 and 3 in node order: 1, 3
    // and 2 hops.
    let cfg = sinks_only(
        json!([{"x": 40.0, "y": 0.0, "role": "client", "sink": 2}]),
        4,
    );
    let r = coaplab_engine::testbed::run(&cfg, 0, None).unwrap();
    assert_eq!(r.mesh.as_ref().unwrap().client_hops, vec![3, 1, 3, 2]);
    conservation(&r);
}

#[test]
fn file_networks_refuse_unserved_sinks_and_mismatched_counts() {
    let err = |cfg: &coaplab_engine::config::RunConfig| match coaplab_engine::testbed::run(
        cfg, 0, None,
    ) {
        Ok(_) => panic!("not refused"),
        Err(e) => e.to_string(),
    };
    // One per sink: 3 sinks, 0 mesh clients, so exactly 3 clients.
    let e = err(&sinks_only(json!([]), 5));
    assert!(e.starts_with("workload.clients: 5 clients"), "{e}");
    assert!(e.ends_with("allowed: 3"), "{e}");
    // An outside-client count that does not match the sinks.
    let mut cfg = sinks_only(json!([]), 3);
    cfg.network
        .as_mut()
        .unwrap()
        .mesh_mut()
        .unwrap()
        .outside_clients = 2;
    let e = err(&cfg);
    assert!(e.starts_with("network.outside_clients: 2"), "{e}");
    assert!(e.contains("allowed: 0 or 3"), "{e}");
    // Without one per sink, 2 outside clients serve sinks 1 and 2: sink 3 has no client.
    cfg.network
        .as_mut()
        .unwrap()
        .mesh_mut()
        .unwrap()
        .outside_clients_per_sink = false;
    let e = err(&cfg);
    assert!(
        e.starts_with("network.nodes[3]: sink 3 has no client"),
        "{e}"
    );
    // The built-in meshes too: the chain's 20 client nodes and its one sink (the border
    // router) want 21 clients.
    let chain = common::config(json!({
        "workload": {"kind": "continuous", "clients": 20, "exchanges": 1},
        "network": {"kind": "chain", "outside_clients_per_sink": true},
    }));
    let e = err(&chain);
    assert!(e.starts_with("workload.clients: 20 clients"), "{e}");
    assert!(e.ends_with("allowed: 21"), "{e}");
    // No outside client and no mesh client at all.
    cfg.network
        .as_mut()
        .unwrap()
        .mesh_mut()
        .unwrap()
        .outside_clients = 0;
    let e = err(&cfg);
    assert!(
        e.starts_with("network.nodes: needs at least one node"),
        "{e}"
    );
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
