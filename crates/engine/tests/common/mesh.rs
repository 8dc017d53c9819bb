//! Helpers for the tests that drive a [`Mesh`] directly: a minimal event queue, a loop that runs
//! it dry, and a CoAP request of a given IPv6 size.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use coaplab_cc::Instant;
use coaplab_engine::net::network::{NetEvent, Scheduler};
use coaplab_engine::net::radio::{Mesh, MeshOutcome};
use coaplab_engine::packet::{NetPacket, Packet, PacketKind};
use coaplab_engine::sim::slab::Slab;

/// A minimal event queue: (time, sequence) order.
#[derive(Default)]
pub struct Queue {
    pub heap: BinaryHeap<Reverse<(u64, u64, usize)>>,
    pub events: Vec<NetEvent>,
}

impl Scheduler for Queue {
    fn schedule_net(&mut self, at: Instant, event: NetEvent) {
        let seq = self.events.len();
        self.events.push(event);
        self.heap.push(Reverse((at.nanos(), seq as u64, seq)));
    }
}

/// Runs the mesh's events until none is left; what happened to each packet: (time µs, outcome).
pub fn drive(mesh: &mut Mesh, packets: &Slab<NetPacket>, q: &mut Queue) -> Vec<(u64, MeshOutcome)> {
    let mut out = Vec::new();
    while let Some(Reverse((t, _, i))) = q.heap.pop() {
        let NetEvent::Radio(_, ev) = q.events[i] else {
            unreachable!()
        };
        match mesh.handle(Instant::from_nanos(t), ev, packets, q) {
            MeshOutcome::Nothing => {}
            o => out.push((t / 1000, o)),
        }
    }
    out
}

/// A CoAP request whose IPv6 packet is `ipv6` bytes.
pub fn request(ipv6: u32) -> NetPacket {
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
