//! Multi-hop IEEE 802.15.4 networks (docs/networks.md): a shared radio medium, a CSMA/CA MAC
//! per node, 6LoWPAN compression and fragmentation, and RPL-like storing-mode routing.
//!
//! The whole mesh is one network element ([`Mesh`]): a route that crosses the mesh names it
//! once, and the mesh forwards the packet hop by hop along its DODAG, from the node where it
//! entered (its source, or the border router for packets from outside) to the node where it
//! leaves (its destination, or the border router). Inside, each hop is one or more frames
//! (6LoWPAN fragments) through the sender's MAC queue and CSMA/CA; the next node reassembles
//! the packet before forwarding it (route-over), and a fragment that fails loses the packet.
//!
//! The mesh is driven by network-owned events ([`RadioEvent`], in `NetEvent::Radio`): the end
//! of a clear channel assessment, the start and end of a frame on the air, the start and end
//! of an acknowledgement, an acknowledgement timeout.
//!
//! The medium is a unit disk: a frame reaches its receiver if the receiver is within
//! `range_m` of the sender and no other transmission from a node within the interference
//! range of the receiver (the receiver's own included) overlaps it in time; an optional
//! per-frame loss probability applies on top. Clear channel assessment finds the channel busy
//! if a node within the carrier-sense range is on the air or was during the CCA window.

pub mod config;
pub mod contiki;
pub mod mac;
pub mod phy;
pub mod prr;
pub mod rpl;
pub mod sixlowpan;

use std::collections::VecDeque;

use coaplab_cc::rng::{Rng, Xoshiro256pp};
use coaplab_cc::{Duration, Instant};

use crate::metrics::MeshCounters;
use crate::net::network::{DropReason, ElementId, NetEvent, NodeId, Scheduler};
use crate::packet::{AppPacket, NetPacket, PacketKind};
use crate::sim::slab::{PacketId, Slab};
use config::MacAddressing;
use contiki::{ContikiCsma, ContikiParams};
use mac::{CcaDecision, Csma, MacParams, MacState};
use rpl::Dodag;
use sixlowpan::{Fragments, Hop};

/// The UDP ports of the CoAP endpoints (server 5683, RFC 7252 §6.1; clients the first
/// dynamic port, RFC 6335 §6): neither is NHC-compressible, so UDP takes 7 bytes.
const UDP_PORTS: (u16, u16) = (crate::basics::CLIENT_PORT, 5683);

/// The receiver of a transmission nobody is meant to receive (the strobes before the copy a
/// duty-cycled receiver wakes up for).
const NO_RECEIVER: u16 = u16::MAX;

/// The frame whose expected transmissions are a link's ETX for routing: the largest data
/// frame on the air (PHY header 6 + aMaxPHYPacketSize 127 bytes).
pub const ETX_REFERENCE_FRAME: u32 = phy::PHY_HEADER + phy::MAX_MAC_FRAME;

/// Contiki's real-time clock on the TelosB (Sky): `RTIMER_ARCH_SECOND` = 4096 × 8 = 32768
/// ticks a second (Contiki 2.6 `cpu/msp430/rtimer-arch.h`).
const RTIMER_ARCH_SECOND: u64 = 32_768;

/// `ticks` of Contiki's real-time clock (rounded down to the nanosecond).
const fn rtimer_ticks(ticks: u64) -> Duration {
    Duration::from_nanos(ticks * 1_000_000_000 / RTIMER_ARCH_SECOND)
}

/// ContikiMAC's `GUARD_TIME` (Contiki 2.6 `core/net/mac/contikimac.c`): how long before a
/// phase-locked neighbour's expected wake-up the sender starts strobing. `GUARD_TIME = 10 ×
/// CHECK_TIME + CHECK_TIME_TX`, `CHECK_TIME = CCA_COUNT_MAX (2) × (CCA_CHECK_TIME +
/// CCA_SLEEP_TIME)`, `CHECK_TIME_TX = CCA_COUNT_MAX_TX (6) × (CCA_CHECK_TIME +
/// CCA_SLEEP_TIME)`, `CCA_CHECK_TIME = RTIMER_ARCH_SECOND / 8192` = 4 ticks,
/// `CCA_SLEEP_TIME = RTIMER_ARCH_SECOND / 2000` = 16 ticks: 10 × 40 + 120 = 520 ticks
/// = 15.869 ms.
pub const GUARD_TIME: Duration = rtimer_ticks(520);

/// ContikiMAC's `MAX_PHASE_STROBE_TIME` = `RTIMER_ARCH_SECOND / 60` = 546 ticks (16.663 ms):
/// towards a phase-locked neighbour no copy starts later than this after the strobe's start;
/// a strobe that has not been taken by then is a miss (no acknowledgement).
pub const MAX_PHASE_STROBE_TIME: Duration = rtimer_ticks(RTIMER_ARCH_SECOND / 60);

/// Contiki 2.6 `core/net/mac/phase.c`: `MAX_NOACKS` (16) unacknowledged transmissions, or
/// `MAX_NOACKS_TIME` (30 s) since the first of them, and the neighbour's phase is forgotten.
const MAX_NOACKS: u32 = 16;
const MAX_NOACKS_TIME: Duration = Duration::from_secs(30);

/// Contiki 2.6 `core/net/mac/contikimac.c`: `MAX_PHASE_NEIGHBORS` (30) phases per node; a new
/// one beyond them replaces the oldest (`list_chop` in `phase_update`).
const MAX_PHASE_NEIGHBORS: usize = 30;

/// What a node knows of one neighbour's wake-up phase (Contiki's `struct phase`).
#[derive(Clone, Copy, Debug)]
struct Phase {
    neighbor: u16,
    /// When a copy the neighbour acknowledged went on the air (`encounter_time`).
    time: Instant,
    noacks: u32,
    /// When the first of the current run of unacknowledged transmissions happened.
    first_noack: Instant,
}

/// What a radio event is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RadioKind {
    /// `node`'s clear channel assessment ends.
    CcaEnd,
    /// `node`'s head frame goes on the air.
    TxStart,
    /// `node`'s frame leaves the air.
    TxEnd,
    /// Duty cycling: `node`'s strobe reaches the copy its receiver woke up for.
    StrobeCopy,
    /// `node` starts acknowledging `peer`'s frame (`gen`: `peer`'s MAC generation).
    AckStart,
    /// `node`'s acknowledgement to `peer` leaves the air.
    AckEnd,
    /// `node`'s wait for an acknowledgement ends (`gen`: its MAC generation then).
    AckTimeout,
    /// Contiki profile: `node`'s transmit timer for its queue to `peer` expires.
    CkTimer,
    /// Contiki profile, autoack: `node`'s ACK_WAIT_TIME after its frame ends.
    CkAckCheck,
    /// Contiki profile, autoack: `node`'s AFTER_ACK_DETECTED_WAIT_TIME ends.
    CkAckDone,
    /// A packet (`gen` = its id) refused when it was handed to the mesh from a resend
    /// (`peer` = 0: MAC queue full).
    Refused,
}

/// An event of the mesh.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RadioEvent {
    pub kind: RadioKind,
    pub node: u16,
    pub peer: u16,
    pub gen: u32,
}

/// What handling a mesh event produced for the network.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MeshOutcome {
    Nothing,
    /// The packet reached the node where it leaves the mesh, at the event's time.
    Exit(PacketId),
    /// The packet was lost in the mesh.
    Dropped(PacketId, DropReason),
}

/// The mesh's parameters.
#[derive(Clone, Debug)]
pub struct RadioParams {
    pub range_m: f64,
    pub interference_m: f64,
    pub carrier_sense_m: f64,
    pub link_loss: f64,
    pub addressing: MacAddressing,
    pub mac: MacParams,
    pub queue_frames: u32,
    pub border_router_queue_frames: u32,
    /// ContikiMAC-style duty cycling: every node wakes up once per this period (at its own
    /// phase) to check the channel; `None`: the radio is always on (NullRDC).
    pub wake_period: Option<Duration>,
    /// Gap between two strobed copies of a frame (room for the acknowledgement).
    pub strobe_gap: Duration,
    /// ContikiMAC's phase optimisation (Contiki's `WITH_PHASE_OPTIMIZATION`): a sender that
    /// had a frame acknowledged records when, and later waits until [`GUARD_TIME`] before
    /// the receiver's next expected wake-up to strobe (docs/networks.md).
    pub phase_lock: bool,
    /// `network.mac = "contiki"`: Contiki 2.6's CSMA driver (`contiki.rs`) instead of the
    /// IEEE 802.15.4 CSMA/CA of `mac`; `queue_frames` is then its buffer pool.
    pub contiki: Option<ContikiParams>,
}

/// One frame in a MAC queue: fragment `frag` of the packet's hop transfer `xfer`.
#[derive(Clone, Copy, Debug)]
struct Frame {
    packet: PacketId,
    xfer: u32,
    frag: u16,
    /// The packet's fragments on this hop (1: not fragmented).
    count: u16,
    /// MAC frame bytes (header, 6LoWPAN content, FCS).
    bytes: u16,
    to: u16,
}

impl Frame {
    /// Fragment `i` of packet `id`'s transfer `xfer` to `to`, with MAC `header` + FCS bytes.
    fn of(id: PacketId, xfer: u32, to: u16, header: u32, frags: &Fragments, i: u32) -> Frame {
        Frame {
            packet: id,
            xfer,
            frag: i as u16,
            count: frags.count as u16,
            bytes: (header + frags.bytes(i)) as u16,
            to,
        }
    }
}

/// A transmission on the air.
#[derive(Clone, Copy, Debug)]
struct Air {
    node: u16,
    rx: u16,
    corrupted: bool,
    /// Bytes on the air (PHY header included), for the link's bit error rate.
    bytes: u32,
}

struct Node {
    mac: Csma,
    queue: VecDeque<Frame>,
    capacity: usize,
    rng: Xoshiro256pp,
    /// Bumped whenever the head frame is resolved or acknowledged (stale timeouts die).
    gen: u32,
    on_air: bool,
    last_air_end: Instant,
    /// Until then the node owes an acknowledgement (turnaround + ACK): its CCA is busy.
    ack_busy_until: Instant,
    /// Duty cycling: when the copy on the air towards its receiver started.
    copy_start: Instant,
    /// Phase optimisation: the neighbours' phases it learnt, newest first.
    phases: Vec<Phase>,
}

/// Where a packet in the mesh is.
#[derive(Clone, Copy, Debug, Default)]
struct Transit {
    /// The current hop transfer (0: none — dropped, or left the mesh).
    xfer: u32,
    /// The node it entered the mesh at and the node it leaves at.
    entry: u16,
    exit: u16,
    source_outside: bool,
    destination_outside: bool,
    /// The hop's receiver and the fragments it has.
    to: u16,
    got: u64,
    count: u16,
}

/// The mesh network element.
pub struct Mesh {
    pub params: RadioParams,
    pub positions: Vec<(f64, f64)>,
    pub dodag: Dodag,
    /// The border router (the DODAG root).
    pub border_router: u16,
    /// This element's id in its network (for the events it schedules).
    pub element: ElementId,
    /// Network nodes `0..nodes.len()` are the mesh's nodes; others are outside it.
    nodes: Vec<Node>,
    in_range: Vec<bool>,
    interferes: Vec<bool>,
    senses: Vec<bool>,
    air: Vec<Air>,
    transit: Vec<Transit>,
    next_xfer: u32,
    loss_rng: Xoshiro256pp,
    pub counters: MeshCounters,
    /// Duty cycling: each node's wake-up phase in `[0, wake_period)`.
    pub wake_phases: Vec<Duration>,
    /// Per-link loss probabilities (`n × n`, both directions; NaN: not set) that override
    /// the model; empty when none is set.
    link_loss: Vec<f64>,
    /// Per-link bit error rates (`n × n`) of the `shadowing` loss model; empty without it.
    link_ber: Vec<f64>,
    /// The Contiki profile's per-node CSMA state (empty without it).
    ck: Vec<ContikiCsma<Frame>>,
    /// The Contiki profile: each node's drops [queue overflow, retry limit, collision]
    /// (`contiki::DROP_QUEUE`, `DROP_RETRY_LIMIT`, `DROP_COLLISION`).
    pub node_drops: Vec<[u64; 3]>,
}

/// `(x1, y1)` and `(x2, y2)` are at most `r` apart (with a relative tolerance of 1e-9, so
/// nodes placed exactly one range apart are neighbours).
pub fn within(a: (f64, f64), b: (f64, f64), r: f64) -> bool {
    let (dx, dy) = (a.0 - b.0, a.1 - b.1);
    dx * dx + dy * dy <= r * r * (1.0 + 1e-9)
}

impl Mesh {
    /// A mesh of nodes at `positions` whose root is `border_router`; node `i` draws its
    /// backoffs from `node_rngs[i]`, link losses from `loss_rng`. `Err` names a node the
    /// border router cannot reach.
    pub fn new(
        params: RadioParams,
        positions: Vec<(f64, f64)>,
        border_router: u16,
        element: ElementId,
        node_rngs: impl Iterator<Item = Xoshiro256pp>,
        loss_rng: Xoshiro256pp,
    ) -> Result<Mesh, String> {
        Self::build(
            params,
            positions,
            None,
            border_router,
            element,
            node_rngs,
            loss_rng,
        )
    }

    /// A mesh whose radio links are `links` (both directions) instead of the unit disk: a
    /// node hears, senses and is disturbed by its linked nodes only.
    pub fn with_links(
        params: RadioParams,
        positions: Vec<(f64, f64)>,
        links: &[[u16; 2]],
        border_router: u16,
        element: ElementId,
        node_rngs: impl Iterator<Item = Xoshiro256pp>,
        loss_rng: Xoshiro256pp,
    ) -> Result<Mesh, String> {
        Self::build(
            params,
            positions,
            Some(links),
            border_router,
            element,
            node_rngs,
            loss_rng,
        )
    }

    fn build(
        params: RadioParams,
        positions: Vec<(f64, f64)>,
        links: Option<&[[u16; 2]]>,
        border_router: u16,
        element: ElementId,
        node_rngs: impl Iterator<Item = Xoshiro256pp>,
        loss_rng: Xoshiro256pp,
    ) -> Result<Mesh, String> {
        let n = positions.len();
        let rel = |r: f64| -> Vec<bool> {
            match links {
                None => (0..n * n)
                    .map(|k| {
                        let (i, j) = (k / n, k % n);
                        i != j && within(positions[i], positions[j], r)
                    })
                    .collect(),
                Some(links) => {
                    let mut m = vec![false; n * n];
                    for &[a, b] in links {
                        let (a, b) = (a as usize, b as usize);
                        if a != b {
                            m[a * n + b] = true;
                            m[b * n + a] = true;
                        }
                    }
                    m
                }
            }
        };
        let in_range = rel(params.range_m);
        let interferes = rel(params.interference_m.max(params.range_m));
        let senses = rel(params.carrier_sense_m);
        let neighbors: Vec<Vec<u16>> = (0..n)
            .map(|i| {
                (0..n)
                    .filter(|&j| in_range[i * n + j])
                    .map(|j| j as u16)
                    .collect()
            })
            .collect();
        let dodag = Dodag::build(border_router, &neighbors)
            .map_err(|lost| format!("node {lost} cannot reach the border router"))?;
        let mut wake_phases = Vec::new();
        let nodes = node_rngs
            .take(n)
            .enumerate()
            .map(|(i, mut rng)| {
                if let Some(period) = params.wake_period {
                    wake_phases.push(rng.uniform(Duration::ZERO, period - Duration::from_nanos(1)));
                }
                Node {
                    mac: Csma::default(),
                    queue: VecDeque::new(),
                    capacity: if i == border_router as usize {
                        params.border_router_queue_frames
                    } else {
                        params.queue_frames
                    } as usize,
                    rng,
                    gen: 0,
                    on_air: false,
                    last_air_end: Instant::ZERO,
                    ack_busy_until: Instant::ZERO,
                    copy_start: Instant::ZERO,
                    phases: Vec::new(),
                }
            })
            .collect::<Vec<Node>>();
        let ck = if params.contiki.is_some() {
            nodes
                .iter()
                .map(|nd| ContikiCsma::new(nd.capacity))
                .collect()
        } else {
            Vec::new()
        };
        Ok(Mesh {
            params,
            positions,
            dodag,
            border_router,
            element,
            nodes,
            in_range,
            interferes,
            senses,
            air: Vec::new(),
            transit: Vec::new(),
            next_xfer: 1,
            loss_rng,
            counters: MeshCounters::default(),
            wake_phases,
            link_loss: Vec::new(),
            link_ber: Vec::new(),
            node_drops: vec![[0; 3]; ck.len()],
            ck,
        })
    }

    /// Frames between nodes `a` and `b` are lost with the probability of the `shadowing`
    /// model: each link's bit error rate ([`prr::link_bers`], `n × n`) applied to the frame's
    /// bits. Links [`Mesh::set_link_loss`] sets keep their fixed probability.
    ///
    /// Routing follows the link qualities: the DODAG is rebuilt with Contiki's ETX objective
    /// function ([`Dodag::build_etx`]), each link's ETX being 1 / (PRR of a full data frame
    /// × PRR of its acknowledgement) — the expected transmissions of a frame of
    /// [`ETX_REFERENCE_FRAME`] bytes on the air. `Err` names a node left without a usable path.
    pub fn set_link_bers(&mut self, bers: Vec<f64>) -> Result<(), String> {
        let n = self.nodes.len();
        assert_eq!(bers.len(), n * n);
        let neighbors: Vec<Vec<u16>> = (0..n)
            .map(|i| {
                (0..n)
                    .filter(|&j| self.in_range[i * n + j])
                    .map(|j| j as u16)
                    .collect()
            })
            .collect();
        let etx = |a: u16, b: u16| {
            let ber = bers[a as usize * n + b as usize];
            1.0 / (prr::prr(ber, ETX_REFERENCE_FRAME)
                * prr::prr(ber, phy::PHY_HEADER + phy::ACK_FRAME))
        };
        self.dodag = Dodag::build_etx(self.border_router, &neighbors, etx).map_err(|lost| {
            format!(
                "node {lost} has no path to the border router over links of ETX <= 10 (path ETX \
                 <= 100); allowed: a layout where every node has one, or \"fixed\""
            )
        })?;
        self.link_ber = bers;
        Ok(())
    }

    /// The probability that a frame of `bytes` on the air from `a` to `b` is lost (besides
    /// collisions).
    pub fn frame_loss(&self, a: u16, b: u16, bytes: u32) -> f64 {
        let i = self.idx(a, b);
        match (self.link_loss.get(i), self.link_ber.get(i)) {
            (Some(&p), _) if !p.is_nan() => p,
            (_, Some(&ber)) => 1.0 - prr::prr(ber, bytes),
            _ => self.params.link_loss,
        }
    }

    /// Frames between nodes `a` and `b` (both directions) are lost with probability `p`
    /// instead of `params.link_loss`.
    pub fn set_link_loss(&mut self, a: u16, b: u16, p: f64) {
        let n = self.nodes.len();
        if self.link_loss.is_empty() {
            self.link_loss = vec![f64::NAN; n * n];
        }
        self.link_loss[a as usize * n + b as usize] = p;
        self.link_loss[b as usize * n + a as usize] = p;
    }

    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// The mesh node where a packet from / to network node `n` enters / leaves the mesh.
    pub fn attachment(&self, n: NodeId) -> u16 {
        if (n as usize) < self.nodes.len() {
            n
        } else {
            self.border_router
        }
    }

    /// Radio hops between network nodes `a` and `b` (through the border router for nodes
    /// outside the mesh).
    pub fn hops(&self, a: NodeId, b: NodeId) -> u32 {
        self.dodag.hops(self.attachment(a), self.attachment(b))
    }

    fn idx(&self, i: u16, j: u16) -> usize {
        i as usize * self.nodes.len() + j as usize
    }

    pub fn in_range(&self, i: u16, j: u16) -> bool {
        self.in_range[self.idx(i, j)]
    }

    fn schedule(
        &self,
        q: &mut impl Scheduler,
        at: Instant,
        kind: RadioKind,
        node: u16,
        peer: u16,
        gen: u32,
    ) {
        q.schedule_net(
            at,
            NetEvent::Radio(
                self.element,
                RadioEvent {
                    kind,
                    node,
                    peer,
                    gen,
                },
            ),
        );
    }

    /// Packet `id` enters the mesh at `now`, sent from network node `from` to `to`.
    /// `Some(reason)` if it is refused at once (the caller still holds it).
    pub fn enter(
        &mut self,
        now: Instant,
        id: PacketId,
        p: &NetPacket,
        from: NodeId,
        to: NodeId,
        q: &mut impl Scheduler,
    ) -> Result<MeshOutcome, DropReason> {
        let n = self.nodes.len();
        if self.transit.len() <= id as usize {
            self.transit.resize(id as usize + 1, Transit::default());
        }
        let (entry, exit) = (self.attachment(from), self.attachment(to));
        self.transit[id as usize] = Transit {
            xfer: 0,
            entry,
            exit,
            source_outside: from as usize >= n,
            destination_outside: to as usize >= n,
            to: entry,
            got: 0,
            count: 0,
        };
        if entry == exit {
            self.arrived(id, p);
            return Ok(MeshOutcome::Exit(id));
        }
        match self.forward(now, id, p, entry, q) {
            None => Ok(MeshOutcome::Nothing),
            Some(why) => Err(why),
        }
    }

    /// The IPv6 size of a packet: its IPv4 size with a 40-byte instead of a 20-byte header.
    fn ipv6_bytes(p: &NetPacket) -> u32 {
        p.ip_bytes + 20
    }

    /// The frames of packet `p` (in transit `t`) on the hop `from` → `to`.
    fn frames_for(&self, p: &NetPacket, t: &Transit, from: u16, to: u16) -> Option<Fragments> {
        let hop = Hop {
            from_origin: from == t.entry && !t.source_outside,
            to_destination: to == t.exit && !t.destination_outside,
            source_outside: t.source_outside,
            destination_outside: t.destination_outside,
            addressing: self.params.addressing,
        };
        let udp = matches!(p.app, AppPacket::Udp(_));
        let (compressed, uncompressed, payload) = if udp {
            (
                sixlowpan::compressed_headers(hop, Some(UDP_PORTS)),
                sixlowpan::IPV6_HEADER + sixlowpan::UDP_HEADER,
                p.ip_bytes.saturating_sub(28),
            )
        } else {
            (
                sixlowpan::compressed_headers(hop, None),
                sixlowpan::IPV6_HEADER,
                p.ip_bytes.saturating_sub(20),
            )
        };
        sixlowpan::fragment(
            compressed,
            uncompressed,
            payload,
            phy::frame_space(self.params.addressing),
        )
    }

    /// The packet, now whole at mesh node `at`, is queued towards its exit; `Some(reason)`
    /// if the queue cannot take all its frames.
    fn forward(
        &mut self,
        now: Instant,
        id: PacketId,
        p: &NetPacket,
        at: u16,
        q: &mut impl Scheduler,
    ) -> Option<DropReason> {
        let t = self.transit[id as usize];
        let to = self.dodag.next_hop(at, t.exit);
        let Some(frags) = self.frames_for(p, &t, at, to) else {
            self.counters.oversized_drops += 1;
            self.transit[id as usize].xfer = 0;
            return Some(DropReason::MacQueue);
        };
        if self.params.contiki.is_some() && frags.count <= 64 {
            return self.ck_forward(now, id, at, to, frags, q);
        }
        let node = &self.nodes[at as usize];
        if node.queue.len() + frags.count as usize > node.capacity || frags.count > 64 {
            self.counters.mac_queue_drops += 1;
            self.transit[id as usize].xfer = 0;
            return Some(DropReason::MacQueue);
        }
        let xfer = self.open_transfer(id, to, &frags);
        let header = phy::mac_header(self.params.addressing) + phy::FCS;
        let node = &mut self.nodes[at as usize];
        let idle = node.queue.is_empty();
        for i in 0..frags.count {
            node.queue
                .push_back(Frame::of(id, xfer, to, header, &frags, i));
        }
        if idle {
            self.start_head(now, at, q);
        }
        None
    }

    /// `forward` under the Contiki profile.
    fn ck_forward(
        &mut self,
        now: Instant,
        id: PacketId,
        at: u16,
        to: u16,
        frags: Fragments,
        q: &mut impl Scheduler,
    ) -> Option<DropReason> {
        let xfer = self.open_transfer(id, to, &frags);
        let header = phy::mac_header(self.params.addressing) + phy::FCS;
        let frames: Vec<Frame> = (0..frags.count)
            .map(|i| Frame::of(id, xfer, to, header, &frags, i))
            .collect();
        self.ck_enqueue(now, id, at, to, &frames, q)
    }

    /// A packet's transfer to the next hop `to` starts (both MAC profiles): a new transfer id,
    /// the packet's transit reset for `to`'s reassembly, fragmented packets counted.
    fn open_transfer(&mut self, id: PacketId, to: u16, frags: &Fragments) -> u32 {
        if frags.count > 1 {
            self.counters.fragmented_packets += 1;
        }
        let xfer = self.next_xfer;
        self.next_xfer = self.next_xfer.wrapping_add(1).max(1);
        let tr = &mut self.transit[id as usize];
        tr.xfer = xfer;
        tr.to = to;
        tr.got = 0;
        tr.count = frags.count as u16;
        xfer
    }

    /// The frame node `u` is sending (its queue's head; under the Contiki profile, the head
    /// of the neighbour queue being served).
    fn sending_frame(&self, u: u16) -> Frame {
        if self.params.contiki.is_some() {
            self.ck_sending_frame(u)
        } else {
            *self.nodes[u as usize].queue.front().expect("a head frame")
        }
    }

    /// Node `u` starts the channel access for its head frame (after the phase optimisation's
    /// wait, if it knows its receiver's phase).
    fn start_head(&mut self, now: Instant, u: u16, q: &mut impl Scheduler) {
        let Some(to) = self.nodes[u as usize].queue.front().map(|f| f.to) else {
            return;
        };
        let start = now + self.phase_defer(now, u, to);
        let node = &mut self.nodes[u as usize];
        let cca_end = node.mac.begin(start, &self.params.mac, &mut node.rng);
        let gen = node.gen;
        self.schedule(q, cca_end, RadioKind::CcaEnd, u, 0, gen);
    }

    /// Whether node `u` finds the channel busy in the CCA window ending at `now`.
    fn channel_busy(&self, now: Instant, u: u16) -> bool {
        let node = &self.nodes[u as usize];
        if node.on_air {
            return true;
        }
        let window_start =
            Instant::from_nanos(now.nanos().saturating_sub(self.params.mac.cca.nanos()));
        let n = self.nodes.len();
        (0..n).any(|j| {
            self.senses[u as usize * n + j]
                && (self.nodes[j].on_air || self.nodes[j].last_air_end > window_start)
        })
    }

    /// `node` starts transmitting to `rx` (or [`NO_RECEIVER`]); the frames it disturbs are
    /// marked corrupted, and so is its own if a transmission already disturbs `rx`.
    fn start_air(&mut self, node: u16, rx: u16, mac_bytes: u32) {
        let n = self.nodes.len();
        // Every frame being received within interference range of `node` (or by `node`
        // itself) is corrupted.
        for a in &mut self.air {
            if !a.corrupted
                && a.rx != NO_RECEIVER
                && (a.rx == node || self.interferes[node as usize * n + a.rx as usize])
            {
                a.corrupted = true;
            }
        }
        let corrupted = rx != NO_RECEIVER
            && self
                .air
                .iter()
                .any(|a| a.node == rx || self.interferes[a.node as usize * n + rx as usize]);
        self.air.push(Air {
            node,
            rx,
            corrupted,
            bytes: phy::PHY_HEADER + mac_bytes,
        });
        self.nodes[node as usize].on_air = true;
    }

    /// `node` leaves the air at `now`; returns whether its frame reached its receiver.
    fn end_air(&mut self, now: Instant, node: u16) -> bool {
        let i = self
            .air
            .iter()
            .position(|a| a.node == node)
            .expect("the node is on the air");
        let a = self.air.swap_remove(i);
        let nd = &mut self.nodes[node as usize];
        nd.on_air = false;
        nd.last_air_end = now;
        if a.corrupted {
            self.counters.collisions += 1;
            return false;
        }
        if a.rx == NO_RECEIVER || !self.in_range(node, a.rx) {
            return false;
        }
        let p = self.frame_loss(node, a.rx, a.bytes);
        if p > 0.0 && self.loss_rng.unit_f64() < p {
            self.counters.link_losses += 1;
            return false;
        }
        true
    }

    /// Handles one of the mesh's events.
    pub fn handle(
        &mut self,
        now: Instant,
        ev: RadioEvent,
        packets: &Slab<NetPacket>,
        q: &mut impl Scheduler,
    ) -> MeshOutcome {
        let u = ev.node;
        match ev.kind {
            RadioKind::CkTimer | RadioKind::CkAckCheck | RadioKind::CkAckDone => {
                self.ck_handle(now, ev, packets, q)
            }
            RadioKind::CcaEnd => {
                if ev.gen != self.nodes[u as usize].gen {
                    return MeshOutcome::Nothing;
                }
                // A node that owes an acknowledgement sends it first (the radio answers in
                // hardware, RX → TX and back): an assessment overlapping it is repeated
                // once it is over, without counting as a busy one.
                let owed = self.nodes[u as usize].ack_busy_until;
                if owed.nanos() > now.nanos().saturating_sub(self.params.mac.cca.nanos()) {
                    self.schedule(
                        q,
                        owed + self.params.mac.cca,
                        RadioKind::CcaEnd,
                        u,
                        0,
                        ev.gen,
                    );
                    return MeshOutcome::Nothing;
                }
                let busy = self.channel_busy(now, u);
                let node = &mut self.nodes[u as usize];
                match node.mac.on_cca(now, busy, &self.params.mac, &mut node.rng) {
                    CcaDecision::Transmit { at } => {
                        let gen = node.gen;
                        self.schedule(q, at, RadioKind::TxStart, u, 0, gen);
                        MeshOutcome::Nothing
                    }
                    CcaDecision::Backoff { cca_end } => {
                        let gen = node.gen;
                        self.schedule(q, cca_end, RadioKind::CcaEnd, u, 0, gen);
                        MeshOutcome::Nothing
                    }
                    CcaDecision::Fail => {
                        self.counters.channel_access_failures += 1;
                        self.resolve_head(now, u, false, q)
                    }
                }
            }
            RadioKind::TxStart => {
                if self.nodes[u as usize].on_air {
                    // Still sending an acknowledgement (possible only with a carrier-sense
                    // range below the radio range): the frame follows it.
                    let at = self.nodes[u as usize].ack_busy_until.max(now);
                    self.schedule(q, at, RadioKind::TxStart, u, 0, ev.gen);
                    return MeshOutcome::Nothing;
                }
                let f = self.sending_frame(u);
                self.counters.frames_sent += 1;
                let again = if self.params.contiki.is_some() {
                    self.ck[u as usize].is_retransmission()
                } else {
                    self.nodes[u as usize].mac.retries > 0
                };
                if again {
                    self.counters.retransmissions += 1;
                }
                let bytes = u32::from(f.bytes);
                let airtime = phy::airtime(bytes);
                if let Some(period) = self.params.wake_period {
                    // Strobe: copies every airtime + gap until the receiver wakes up; it
                    // detects the strobe at its wake-up and receives the next whole copy.
                    let phase = self.wake_phases[f.to as usize].nanos();
                    let p = period.nanos();
                    let t = now.nanos();
                    let wake = if t <= phase {
                        phase
                    } else {
                        phase + (t - phase).div_ceil(p) * p
                    };
                    let step = (airtime + self.params.strobe_gap).nanos();
                    let k = (wake - t).div_ceil(step);
                    // Towards a phase-locked receiver no copy starts after
                    // MAX_PHASE_STROBE_TIME (contikimac.c `send_packet`, `is_known_receiver`):
                    // a wake-up beyond it is a miss — the copies that started before it, then
                    // no acknowledgement.
                    let known = self.params.phase_lock && self.phase_of(u, f.to).is_some();
                    if known && k * step >= MAX_PHASE_STROBE_TIME.nanos() {
                        let sent = MAX_PHASE_STROBE_TIME.nanos().div_ceil(step);
                        self.counters.strobes += sent;
                        self.start_air(u, NO_RECEIVER, bytes);
                        let end = Instant::from_nanos(t + (sent - 1) * step) + airtime;
                        self.schedule(q, end, RadioKind::TxEnd, u, f.to, ev.gen);
                        return MeshOutcome::Nothing;
                    }
                    if k > 0 {
                        self.counters.strobes += k;
                        self.start_air(u, NO_RECEIVER, bytes);
                        let copy = Instant::from_nanos(t + k * step);
                        self.schedule(q, copy, RadioKind::StrobeCopy, u, f.to, ev.gen);
                        return MeshOutcome::Nothing;
                    }
                }
                self.nodes[u as usize].copy_start = now;
                self.start_air(u, f.to, bytes);
                self.schedule(q, now + airtime, RadioKind::TxEnd, u, f.to, ev.gen);
                MeshOutcome::Nothing
            }
            RadioKind::StrobeCopy => {
                // The strobe so far occupied the channel for nobody; the copy now on the air
                // is the one the receiver takes.
                let i = self
                    .air
                    .iter()
                    .position(|a| a.node == u)
                    .expect("the node is strobing");
                self.air.swap_remove(i);
                let f = self.sending_frame(u);
                self.nodes[u as usize].copy_start = now;
                self.start_air(u, f.to, u32::from(f.bytes));
                let end = now + phy::airtime(u32::from(f.bytes));
                self.schedule(q, end, RadioKind::TxEnd, u, f.to, ev.gen);
                MeshOutcome::Nothing
            }
            RadioKind::TxEnd if self.params.contiki.is_some() => {
                let ok = self.end_air(now, u);
                let f = self.sending_frame(u);
                let received = if ok {
                    self.acknowledge(now, u, f, q);
                    self.receive(now, f.to, u, f, packets, q)
                } else {
                    MeshOutcome::Nothing
                };
                self.ck_tx_end(now, u, ok, received, packets, q)
            }
            RadioKind::TxEnd => {
                let ok = self.end_air(now, u);
                let node = &mut self.nodes[u as usize];
                let deadline = node.mac.on_tx_end(now, &self.params.mac);
                let gen = node.gen;
                let f = *node.queue.front().expect("a head frame");
                self.schedule(q, deadline, RadioKind::AckTimeout, u, 0, gen);
                if !ok {
                    return MeshOutcome::Nothing;
                }
                self.acknowledge(now, u, f, q);
                self.receive(now, f.to, u, f, packets, q)
            }
            RadioKind::AckStart => {
                if self.nodes[u as usize].on_air {
                    // Transmitting a frame of its own: no acknowledgement.
                    return MeshOutcome::Nothing;
                }
                self.counters.acks_sent += 1;
                self.start_air(u, ev.peer, phy::ACK_FRAME);
                let end = now + phy::airtime(phy::ACK_FRAME);
                self.schedule(q, end, RadioKind::AckEnd, u, ev.peer, ev.gen);
                MeshOutcome::Nothing
            }
            RadioKind::AckEnd => {
                let ok = self.end_air(now, u);
                let t = ev.peer;
                let tn = &self.nodes[t as usize];
                if self.params.contiki.is_some() {
                    if ok && tn.gen == ev.gen {
                        self.ck[t as usize].acked = true;
                    }
                    return MeshOutcome::Nothing;
                }
                if ok && tn.gen == ev.gen && tn.mac.state == MacState::WaitAck {
                    let encounter = tn.copy_start;
                    self.phase_update(now, t, u, Some(encounter));
                    self.nodes[t as usize].mac.on_ack();
                    return self.resolve_head(now, t, true, q);
                }
                MeshOutcome::Nothing
            }
            RadioKind::AckTimeout => {
                let node = &self.nodes[u as usize];
                if ev.gen != node.gen || node.mac.state != MacState::WaitAck {
                    return MeshOutcome::Nothing;
                }
                let to = node.queue.front().expect("a head frame").to;
                self.phase_update(now, u, to, None);
                // The retransmission goes through phase_wait again (csma.c resends through
                // the RDC's `send`).
                let start = now + self.phase_defer(now, u, to);
                let node = &mut self.nodes[u as usize];
                match node
                    .mac
                    .on_ack_timeout(start, &self.params.mac, &mut node.rng)
                {
                    Some(cca_end) => {
                        let gen = node.gen;
                        self.schedule(q, cca_end, RadioKind::CcaEnd, u, 0, gen);
                        MeshOutcome::Nothing
                    }
                    None => {
                        self.counters.retry_failures += 1;
                        self.resolve_head(now, u, false, q)
                    }
                }
            }
            RadioKind::Refused => MeshOutcome::Dropped(ev.gen, DropReason::MacQueue),
        }
    }

    /// What node `u` knows of `neighbor`'s phase.
    fn phase_of(&self, u: u16, neighbor: u16) -> Option<&Phase> {
        self.nodes[u as usize]
            .phases
            .iter()
            .find(|p| p.neighbor == neighbor)
    }

    /// Contiki 2.6 `phase.c` `phase_wait`: how long node `u` waits at `now` before its channel
    /// access towards `neighbor` so that its strobe starts [`GUARD_TIME`] before the
    /// neighbour's next expected wake-up. With the recorded encounter `e` and the cycle `P`,
    /// `wait = (e − now) mod P`, plus `P` if below the guard time; the node waits
    /// `wait − GUARD_TIME`. Zero without duty cycling, phase optimisation or a known phase.
    fn phase_defer(&self, now: Instant, u: u16, neighbor: u16) -> Duration {
        let Some(period) = self.params.wake_period.filter(|_| self.params.phase_lock) else {
            return Duration::ZERO;
        };
        let Some(e) = self.phase_of(u, neighbor) else {
            return Duration::ZERO;
        };
        let p = period.nanos();
        let (sync, t) = (e.time.nanos(), now.nanos());
        // (sync − now) mod P, in [0, P) (sync is in the past)
        let mut wait = (p - (t - sync) % p) % p;
        if wait < GUARD_TIME.nanos() {
            wait += p;
        }
        Duration::from_nanos(wait - GUARD_TIME.nanos())
    }

    /// Contiki 2.6 `phase.c` `phase_update`: node `u`'s transmission to `neighbor` was
    /// acknowledged (`Some(encounter)`: when the acknowledged copy went on the air) or not
    /// (`None`). An acknowledgement records (or renews) the phase and clears the
    /// unacknowledged count; [`MAX_NOACKS`] unacknowledged transmissions in a row, or
    /// [`MAX_NOACKS_TIME`] since the first of them, forget it.
    fn phase_update(&mut self, now: Instant, u: u16, neighbor: u16, encounter: Option<Instant>) {
        if !self.params.phase_lock || self.params.wake_period.is_none() {
            return;
        }
        let phases = &mut self.nodes[u as usize].phases;
        let i = phases.iter().position(|p| p.neighbor == neighbor);
        match (i, encounter) {
            (Some(i), Some(time)) => {
                phases[i].time = time;
                phases[i].noacks = 0;
            }
            (Some(i), None) => {
                let e = &mut phases[i];
                e.noacks += 1;
                if e.noacks == 1 {
                    e.first_noack = now;
                }
                if e.noacks >= MAX_NOACKS || now >= e.first_noack + MAX_NOACKS_TIME {
                    phases.remove(i);
                }
            }
            (None, Some(time)) => {
                if phases.len() >= MAX_PHASE_NEIGHBORS {
                    phases.pop();
                }
                phases.insert(
                    0,
                    Phase {
                        neighbor,
                        time,
                        noacks: 0,
                        first_noack: Instant::ZERO,
                    },
                );
            }
            (None, None) => {}
        }
    }

    /// Node `u`'s head frame is done (`acked`) or failed; the next frame starts.
    fn resolve_head(
        &mut self,
        now: Instant,
        u: u16,
        acked: bool,
        q: &mut impl Scheduler,
    ) -> MeshOutcome {
        let node = &mut self.nodes[u as usize];
        node.gen = node.gen.wrapping_add(1);
        let f = node.queue.pop_front().expect("a head frame");
        let mut out = MeshOutcome::Nothing;
        if !acked {
            let t = &mut self.transit[f.packet as usize];
            if t.xfer == f.xfer {
                // A lost fragment loses the packet: its other frames leave the queue.
                t.xfer = 0;
                node.queue.retain(|g| g.xfer != f.xfer);
                self.counters.radio_drops += 1;
                out = MeshOutcome::Dropped(f.packet, DropReason::Radio);
            }
        }
        node.mac.state = MacState::Idle;
        self.start_head(now, u, q);
        out
    }

    /// Frame `f` from node `u` arrived cleanly at `now`: its receiver acknowledges it after
    /// its turnaround, whatever the frame held (the acknowledgement carries `u`'s generation).
    fn acknowledge(&mut self, now: Instant, u: u16, f: Frame, q: &mut impl Scheduler) {
        let r = f.to;
        let gen = self.nodes[u as usize].gen;
        let ack_end = now + self.params.mac.turnaround + phy::airtime(phy::ACK_FRAME);
        let rn = &mut self.nodes[r as usize];
        rn.ack_busy_until = rn.ack_busy_until.max(ack_end);
        self.schedule(
            q,
            now + self.params.mac.turnaround,
            RadioKind::AckStart,
            r,
            u,
            gen,
        );
    }

    /// Node `r` received frame `f` from node `sender` cleanly at `now`.
    fn receive(
        &mut self,
        now: Instant,
        r: u16,
        sender: u16,
        f: Frame,
        packets: &Slab<NetPacket>,
        q: &mut impl Scheduler,
    ) -> MeshOutcome {
        if self.params.contiki.is_some() {
            if let Err(out) = self.ck_receive(now, r, sender, f) {
                return out;
            }
        }
        let t = &mut self.transit[f.packet as usize];
        if t.xfer != f.xfer || t.to != r || t.got & (1 << f.frag) != 0 {
            self.counters.duplicates += 1;
            return MeshOutcome::Nothing;
        }
        t.got |= 1 << f.frag;
        if t.got.count_ones() < u32::from(t.count) {
            return MeshOutcome::Nothing;
        }
        if let Some(c) = self.ck.get_mut(r as usize) {
            c.reassembled(f.xfer);
        }
        let p = packets.get(f.packet);
        if r == t.exit {
            t.xfer = 0;
            self.arrived(f.packet, &p);
            return MeshOutcome::Exit(f.packet);
        }
        match self.forward(now, f.packet, &p, r, q) {
            None => MeshOutcome::Nothing,
            Some(why) => MeshOutcome::Dropped(f.packet, why),
        }
    }

    /// Packet `id` leaves the mesh: requests count towards the carried load.
    fn arrived(&mut self, id: PacketId, p: &NetPacket) {
        let _ = id;
        if let AppPacket::Udp(u) = p.app {
            if u.kind == PacketKind::Request {
                self.counters.requests_delivered += 1;
                self.counters.request_bytes_delivered += u64::from(Self::ipv6_bytes(p));
            }
        }
    }

    /// Frames waiting in every MAC queue (for the end-of-run check).
    pub fn queued_frames(&self) -> usize {
        self.nodes.iter().map(|n| n.queue.len()).sum::<usize>() + self.ck_queued()
    }

    /// Time a node spends on one frame of `mac_bytes` on an idle channel with no backoff:
    /// CCA + turnaround + airtime.
    pub fn min_hop_time(&self, mac_bytes: u32) -> Duration {
        self.params.mac.cca + self.params.mac.turnaround + phy::airtime(mac_bytes)
    }
}
