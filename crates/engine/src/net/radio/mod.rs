//! Multi-hop IEEE 802.15.4 networks (docs/networks.md): a shared radio medium, a MAC per node
//! (IEEE 802.15.4 CSMA/CA or Contiki 2.6's CSMA, optionally duty-cycled), 6LoWPAN compression and fragmentation, and RPL-like storing-mode routing.
//!
//! The whole mesh is one network element ([`Mesh`]): a route that crosses the mesh names it
//! once, and the mesh forwards the packet hop by hop along its DODAG, from the node where it
//! entered (its source, or the border router for packets from outside) to the node where it
//! leaves (its destination, or the border router). Inside, each hop is one or more frames
//! (6LoWPAN fragments) through the sender's MAC; the next node reassembles
//! the packet before forwarding it (route-over), and a fragment that fails loses the packet.
//!
//! The mesh is driven by network-owned events ([`RadioEvent`], in `NetEvent::Radio`): the
//! start and end of a frame on the air, the start and end of an acknowledgement (handled
//! here, one `handle_*` each), and the MACs' own timers (a CCA's end, an acknowledgement
//! timeout, Contiki's transmit timers), which go to the node's MAC.
//!
//! Layout: this file is the medium (the air, acknowledgements, reception, forwarding);
//! `mac/` the MACs behind one trait (`mac/traits.rs`; IEEE 802.15.4 CSMA/CA in
//! `mac/ieee802154.rs`, Contiki 2.6's CSMA in `mac/contiki.rs`, the registry `MACS` in
//! `mac/mod.rs`), each node running the one `network.mac` names; `rdc/contikimac.rs`
//! ContikiMAC's duty cycling beneath any MAC (NullRDC is no layer); `medium.rs` the mesh as a
//! MAC sees it; `disk.rs` who hears, disturbs and senses whom; `types.rs` and `params.rs` the
//! shared events, frames and parameters.
//!
//! The medium is a unit disk: a frame reaches its receiver if the receiver is within
//! `range_m` of the sender and no other transmission from a node within the interference
//! range of the receiver (the receiver's own included) overlaps it in time; an optional
//! per-frame loss probability applies on top. Clear channel assessment finds the channel busy
//! if a node within the carrier-sense range is on the air or was during the CCA window.

pub mod config;
pub mod disk;
pub mod mac;
mod medium;
pub mod on_time;
pub mod params;
pub mod phy;
pub mod prr;
pub mod rdc;
pub mod rpl;
pub mod rpl_etx;
pub mod sixlowpan;
pub mod types;

use std::collections::HashSet;

use coaplab_cc::rng::{Rng, Xoshiro256pp};
use coaplab_cc::{Duration, Instant};

use crate::metrics::MeshCounters;
use crate::net::common::{DropReason, ElementId, NodeId};
use crate::net::event::Scheduler;
use crate::packet::{AppPacket, NetPacket, PacketKind};
use crate::sim::slab::{PacketId, Slab};
use mac::{Mac, MacEntry, Medium};
use on_time::OnTime;
use rdc::contikimac::{ContikiMacRdc, Strobe};
use rpl::Dodag;
use sixlowpan::{Fragments, Hop};
use types::{Frame, UDP_PORTS};

pub use disk::within;
/// `radio::contiki` is `radio::mac::contiki` (Contiki's MAC and its constants).
pub use mac::contiki;
pub use params::RadioParams;
pub use rdc::contikimac::{GUARD_TIME, MAX_PHASE_STROBE_TIME};
pub use types::{MeshOutcome, RadioEvent, RadioKind};

/// The receiver of a transmission nobody is meant to receive (the strobes before the copy a
/// duty-cycled receiver wakes up for).
const NO_RECEIVER: u16 = u16::MAX;

/// The frame whose expected transmissions are a link's ETX for routing: the largest data
/// frame on the air (PHY header 6 + aMaxPHYPacketSize 127 bytes).
pub const ETX_REFERENCE_FRAME: u32 = phy::PHY_HEADER + phy::MAX_MAC_FRAME;

/// A transmission on the air.
#[derive(Clone, Copy, Debug)]
struct Air {
    node: u16,
    rx: u16,
    corrupted: bool,
    /// Bytes on the air (PHY header included), for the link's bit error rate.
    bytes: u32,
}

/// A node's share of the medium (its MAC is in `Mesh::macs`).
struct Node {
    rng: Xoshiro256pp,
    /// Bumped whenever the head frame is resolved or acknowledged (stale timeouts die).
    gen: u32,
    on_air: bool,
    last_air_end: Instant,
    /// Until then the node owes an acknowledgement (turnaround + ACK): its CCA is busy.
    ack_busy_until: Instant,
    /// Duty cycling: when the copy on the air towards its receiver started.
    copy_start: Instant,
    /// When the last frame addressed to it arrived cleanly (into its radio's RX FIFO).
    rx_end: Instant,
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
    /// The length of the last frame received of it (0: none yet at this node).
    rx_bytes: u16,
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
    /// The requests (client, exchange) that have left the mesh, so that a retransmitted copy
    /// of one already delivered is not counted as delivered again.
    delivered: HashSet<(u32, u32)>,
    /// Duty cycling: each node's wake-up phase in `[0, wake_period)`.
    pub wake_phases: Vec<Duration>,
    /// Per-link loss probabilities (`n × n`, both directions; NaN: not set) that override
    /// the model; empty when none is set.
    link_loss: Vec<f64>,
    /// Per-link bit error rates (`n × n`) of the `shadowing` loss model; empty without it.
    link_ber: Vec<f64>,
    /// Each node's MAC (built from its [`MacEntry`]); `None` only while it runs (it gets
    /// the mesh as its [`Medium`]).
    macs: Vec<Option<Box<dyn Mac>>>,
    /// The duty-cycling layer beneath the MACs (`None`: NullRDC, the radio always on).
    rdc: Option<ContikiMacRdc>,
    /// For the MACs that report them ([`MacEntry::node_drops`], the Contiki profile): each
    /// node's drops [queue overflow, retry limit, collision] (`contiki::DROP_QUEUE`,
    /// `DROP_RETRY_LIMIT`, `DROP_COLLISION`); empty otherwise.
    pub node_drops: Vec<[u64; 3]>,
    /// Each node's radio time per state (observes only, docs/energy.md).
    pub on_time: OnTime,
    /// `contiki_rpl_etx`: the link ETX estimates that move the DODAG's parents.
    routing: Option<rpl_etx::EtxRouting>,
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
        let rel = |r: f64| disk::relation(&positions, links, r);
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
            .map(|mut rng| {
                if let Some(period) = params.wake_period {
                    wake_phases.push(rng.uniform(Duration::ZERO, period - Duration::from_nanos(1)));
                }
                Node {
                    rng,
                    gen: 0,
                    on_air: false,
                    last_air_end: Instant::ZERO,
                    ack_busy_until: Instant::ZERO,
                    copy_start: Instant::ZERO,
                    rx_end: Instant::ZERO,
                }
            })
            .collect::<Vec<Node>>();
        let rdc = params
            .wake_period
            .map(|period| ContikiMacRdc::new(period, params.strobe_gap, params.phase_lock, n));
        let duty_cycled = rdc.is_some();
        let routing = params
            .contiki
            .filter(|c| c.rpl_etx)
            .map(|_| rpl_etx::EtxRouting::new(n));
        let mut mesh = Mesh {
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
            delivered: HashSet::new(),
            wake_phases,
            link_loss: Vec::new(),
            link_ber: Vec::new(),
            macs: Vec::new(),
            rdc,
            node_drops: Vec::new(),
            on_time: OnTime::new(n, duty_cycled),
            routing,
        };
        mesh.set_mac(mac::implied_by(&mesh.params));
        Ok(mesh)
    }

    /// Every node runs the MAC of `entry` (from [`mac::MACS`]); before any traffic.
    pub fn set_mac(&mut self, entry: &MacEntry) {
        let n = self.nodes.len();
        self.macs = (0..n)
            .map(|i| {
                let capacity = if i == self.border_router as usize {
                    self.params.border_router_queue_frames
                } else {
                    self.params.queue_frames
                };
                Some((entry.build)(&self.params, capacity as usize))
            })
            .collect();
        self.node_drops = if entry.node_drops {
            vec![[0; 3]; n]
        } else {
            Vec::new()
        };
    }

    /// Runs node `u`'s MAC with the mesh as its medium.
    fn with_mac<R>(&mut self, u: u16, f: impl FnOnce(&mut dyn Mac, &mut Mesh) -> R) -> R {
        let mut mac = self.macs[u as usize]
            .take()
            .expect("the node's MAC is not running");
        let r = f(mac.as_mut(), self);
        self.macs[u as usize] = Some(mac);
        r
    }

    /// The MAC of node `u` (not running).
    fn mac(&self, u: u16) -> &dyn Mac {
        self.macs[u as usize]
            .as_deref()
            .expect("the node's MAC is not running")
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
            rx_bytes: 0,
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
        let udp = !matches!(p.app, AppPacket::Tcp(_));
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
        // A transfer's fragments are one bit each of `Transit::got`.
        if frags.count > 64 || !self.mac(at).admits(frags.count as usize) {
            self.counters.mac_queue_drops += 1;
            self.transit[id as usize].xfer = 0;
            return Some(DropReason::MacQueue);
        }
        let xfer = self.open_transfer(id, to, &frags);
        let header = phy::mac_header(self.params.addressing) + phy::FCS;
        let frames: Vec<Frame> = (0..frags.count)
            .map(|i| Frame::of(id, xfer, to, header, &frags, i))
            .collect();
        self.with_mac(at, |mac, mesh| mac.enqueue(now, at, id, &frames, mesh, q))
    }

    /// A packet's transfer to the next hop `to` starts (whatever the MAC): a new transfer id,
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

    /// `node` starts transmitting to `rx` (or [`NO_RECEIVER`]); the frames it disturbs are
    /// marked corrupted, and so is its own if a transmission already disturbs `rx`.
    fn start_air(&mut self, now: Instant, node: u16, rx: u16, mac_bytes: u32) {
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
        self.on_time.air_on(node, now);
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
        self.on_time.air_off(node, now);
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

    /// Handles one of the mesh's events: the medium's here, the MACs' timers by the node's
    /// MAC.
    pub fn handle(
        &mut self,
        now: Instant,
        ev: RadioEvent,
        packets: &Slab<NetPacket>,
        q: &mut impl Scheduler,
    ) -> MeshOutcome {
        match ev.kind {
            RadioKind::TxStart => self.handle_tx_start(now, ev, q),
            RadioKind::StrobeCopy => self.handle_strobe_copy(now, ev, q),
            RadioKind::TxEnd => self.handle_tx_end(now, ev, packets, q),
            RadioKind::AckStart => self.handle_ack_start(now, ev, q),
            RadioKind::AckEnd => self.handle_ack_end(now, ev, q),
            RadioKind::Refused => MeshOutcome::Dropped(ev.gen, DropReason::MacQueue),
            RadioKind::CcaEnd
            | RadioKind::AckTimeout
            | RadioKind::CkTimer
            | RadioKind::CkAckCheck
            | RadioKind::CkAckDone
            | RadioKind::MacTimer => {
                debug_assert!(ev.kind.is_mac_timer());
                self.with_mac(ev.node, |mac, mesh| mac.on_event(now, ev, mesh, q))
            }
        }
    }

    /// Node `u`'s frame (its MAC's [`Mac::sending_frame`]) goes on the air: at once, or,
    /// duty cycled, as a strobe of copies until its receiver wakes up.
    fn handle_tx_start(
        &mut self,
        now: Instant,
        ev: RadioEvent,
        q: &mut impl Scheduler,
    ) -> MeshOutcome {
        let u = ev.node;
        if self.nodes[u as usize].on_air {
            // Still sending an acknowledgement (possible only with a carrier-sense range
            // below the radio range): the frame follows it.
            let at = self.nodes[u as usize].ack_busy_until.max(now);
            self.schedule(q, at, RadioKind::TxStart, u, 0, ev.gen);
            return MeshOutcome::Nothing;
        }
        let f = self.mac(u).sending_frame();
        self.counters.frames_sent += 1;
        if self.mac(u).is_retransmission() {
            self.counters.retransmissions += 1;
        }
        let bytes = u32::from(f.bytes);
        let airtime = phy::airtime(bytes);
        if let Some(rdc) = &self.rdc {
            let (kind, at, copies) =
                match rdc.strobe(now, u, f.to, self.wake_phases[f.to as usize], airtime) {
                    Strobe::Direct => (RadioKind::TxEnd, now + airtime, 0),
                    Strobe::Miss { copies, end } => (RadioKind::TxEnd, end, copies),
                    Strobe::Copies { copies, at } => (RadioKind::StrobeCopy, at, copies),
                };
            // Energy: the strobe listens in the gaps between its copies; the receiver from
            // its wake-up through the copy it takes (a miss: it never wakes for it).
            let to_wake = rdc.next_wake(now, self.wake_phases[f.to as usize]);
            let gaps = match kind {
                RadioKind::StrobeCopy => copies,
                _ => copies.saturating_sub(1),
            };
            self.on_time.strobe_gaps(
                u,
                Duration::from_nanos(gaps * self.params.strobe_gap.nanos()),
            );
            let heard_until = match kind {
                RadioKind::StrobeCopy => at + airtime,
                _ if copies == 0 => at,
                _ => to_wake,
            };
            let heard = heard_until.nanos().saturating_sub(to_wake.nanos());
            self.on_time.listen(f.to, Duration::from_nanos(heard));
            if copies > 0 {
                // The copies so far occupy the channel for nobody.
                self.counters.strobes += copies;
                self.start_air(now, u, NO_RECEIVER, bytes);
                self.schedule(q, at, kind, u, f.to, ev.gen);
                return MeshOutcome::Nothing;
            }
        }
        self.nodes[u as usize].copy_start = now;
        self.start_air(now, u, f.to, bytes);
        self.schedule(q, now + airtime, RadioKind::TxEnd, u, f.to, ev.gen);
        MeshOutcome::Nothing
    }

    /// Duty cycling: node `u`'s strobe reaches the copy its receiver takes.
    fn handle_strobe_copy(
        &mut self,
        now: Instant,
        ev: RadioEvent,
        q: &mut impl Scheduler,
    ) -> MeshOutcome {
        let u = ev.node;
        // The strobe so far occupied the channel for nobody; the copy now on the air is the
        // one the receiver takes.
        let i = self
            .air
            .iter()
            .position(|a| a.node == u)
            .expect("the node is strobing");
        self.air.swap_remove(i);
        let f = self.mac(u).sending_frame();
        self.nodes[u as usize].copy_start = now;
        self.start_air(now, u, f.to, u32::from(f.bytes));
        let end = now + phy::airtime(u32::from(f.bytes));
        self.schedule(q, end, RadioKind::TxEnd, u, f.to, ev.gen);
        MeshOutcome::Nothing
    }

    /// Node `u`'s frame leaves the air: its MAC hears of it before and after the receiver
    /// (if the frame reached it) acknowledges and takes it.
    fn handle_tx_end(
        &mut self,
        now: Instant,
        ev: RadioEvent,
        packets: &Slab<NetPacket>,
        q: &mut impl Scheduler,
    ) -> MeshOutcome {
        let u = ev.node;
        let ok = self.end_air(now, u);
        let f = self.mac(u).sending_frame();
        self.with_mac(u, |mac, mesh| mac.tx_ended(now, u, mesh, q));
        let received = if ok {
            self.nodes[f.to as usize].rx_end = now;
            self.acknowledge(now, u, f, q);
            self.receive(now, f.to, u, f, packets, q)
        } else {
            MeshOutcome::Nothing
        };
        self.with_mac(u, |mac, mesh| {
            mac.tx_delivered(now, u, ok, received, mesh, q)
        })
    }

    /// Node `u` starts acknowledging `peer`'s frame.
    fn handle_ack_start(
        &mut self,
        now: Instant,
        ev: RadioEvent,
        q: &mut impl Scheduler,
    ) -> MeshOutcome {
        let u = ev.node;
        if self.nodes[u as usize].on_air {
            // Transmitting a frame of its own: no acknowledgement.
            return MeshOutcome::Nothing;
        }
        self.counters.acks_sent += 1;
        self.start_air(now, u, ev.peer, phy::ACK_FRAME);
        let end = now + phy::airtime(phy::ACK_FRAME);
        self.schedule(q, end, RadioKind::AckEnd, u, ev.peer, ev.gen);
        MeshOutcome::Nothing
    }

    /// Node `u`'s acknowledgement to `peer` leaves the air: `peer`'s MAC hears whether it
    /// arrived.
    fn handle_ack_end(
        &mut self,
        now: Instant,
        ev: RadioEvent,
        q: &mut impl Scheduler,
    ) -> MeshOutcome {
        let (u, t) = (ev.node, ev.peer);
        let ok = self.end_air(now, u);
        self.with_mac(t, |mac, mesh| mac.on_ack(now, t, u, ok, ev.gen, mesh, q))
    }

    /// Frame `f` from node `u` arrived cleanly at `now`: its receiver acknowledges it after
    /// its turnaround, whatever the frame held (the acknowledgement carries `u`'s generation).
    fn acknowledge(&mut self, now: Instant, u: u16, f: Frame, q: &mut impl Scheduler) {
        let r = f.to;
        let gen = self.nodes[u as usize].gen;
        let ack_end = now + self.params.mac.turnaround + phy::airtime(phy::ACK_FRAME);
        // Energy: the sender listens for the acknowledgement.
        self.on_time.listen(u, ack_end - now);
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
        if let Err(out) = self.with_mac(r, |mac, mesh| mac.accept(now, r, sender, f, mesh)) {
            return out;
        }
        let t = &mut self.transit[f.packet as usize];
        if t.xfer != f.xfer || t.to != r || t.got & (1 << f.frag) != 0 {
            self.counters.duplicates += 1;
            return MeshOutcome::Nothing;
        }
        t.got |= 1 << f.frag;
        t.rx_bytes = f.bytes;
        if t.got.count_ones() < u32::from(t.count) {
            return MeshOutcome::Nothing;
        }
        if let Some(mac) = self.macs[r as usize].as_mut() {
            mac.reassembled(f.xfer);
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

    /// Packet `id` leaves the mesh: a request's every copy counts as a request packet, its
    /// first copy (of each exchange; a Block2 block is an exchange) as a delivered request
    /// and towards the carried load — so neither exceeds what the clients created.
    fn arrived(&mut self, id: PacketId, p: &NetPacket) {
        let _ = id;
        if let AppPacket::Udp(u) = p.app {
            if u.kind == PacketKind::Request {
                self.counters.request_packets_delivered += 1;
                if self.delivered.insert((u.client, u.exchange)) {
                    self.counters.requests_delivered += 1;
                    self.counters.request_bytes_delivered += u64::from(Self::ipv6_bytes(p));
                }
            }
        }
    }

    /// Time a node spends on one frame of `mac_bytes` on an idle channel with no backoff:
    /// CCA + turnaround + airtime.
    pub fn min_hop_time(&self, mac_bytes: u32) -> Duration {
        self.params.mac.cca + self.params.mac.turnaround + phy::airtime(mac_bytes)
    }
}
