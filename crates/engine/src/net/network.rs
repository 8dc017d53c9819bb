//! The network as data (docs/design.md §3): nodes, elements (links and path delays) and routes,
//! built from a description by a topology (`net::topology`). The network owns every packet in
//! flight and moves it along its route; the transports never name a link. It reports what
//! happened as [`NetEvent::Deliver`] events (a packet reached the node at the end of its
//! route) and [`Handled`] outcomes (a packet finished serializing on a link; a packet was
//! dropped, and why).
//!
//! One packet's path: a node calls [`Network::send`] with a route; the first element takes it
//! at once (a link queues or starts serializing it; a path delay computes its exit time). A
//! link that finishes serializing ([`NetEvent::TxDone`]) decides the packet's fate (link error
//! or delivery after propagation); a path delay is pure (its FIFO exit time is known when the
//! packet enters), so it is folded into the hand-over; a packet reaching a link is an
//! [`NetEvent::Arrive`] event at that time; the end of the route is [`NetEvent::Deliver`].

use coaplab_cc::rng::Xoshiro256pp;
use coaplab_cc::Instant;

use crate::energy::StateTimes;
use crate::metrics::{LinkTimeSeries, PacketStats};
use crate::net::cellular::{Cell, CellOutcome};
pub use crate::net::common::{DropReason, ElementId, NodeId, RouteId};
pub use crate::net::event::{NetEvent, Scheduler};
use crate::net::link::{Arrival, Link};
use crate::net::path::PathDelay;
use crate::net::radio::{Mesh, MeshOutcome, RadioEvent, RadioKind};
use crate::net::series::THROUGHPUT_BIN;
use crate::packet::NetPacket;
use crate::sim::slab::{PacketId, Slab};

/// What a node is for (reports and placement of applications).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeRole {
    /// Hosts client applications.
    Clients,
    Router,
    /// Hosts the server application.
    Server,
}

#[derive(Clone, Debug)]
pub struct Node {
    pub name: String,
    pub role: NodeRole,
}

/// Which direction of the constrained link a link element is, for the packet statistics of
/// docs/model.md ("Packets"); `Other` for links that are not part of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkRole {
    Uplink,
    Downlink,
    Other,
}

/// A link: queue → serializer → loss → propagation, with its own error stream.
pub struct LinkElement {
    pub name: String,
    pub role: LinkRole,
    pub link: Link<PacketId>,
    pub rng: Xoshiro256pp,
    /// A GPRS downlink: the uplink element that acknowledges each packet it delivers
    /// (`net::gprs`, Packet Downlink Ack/Nack); `None` elsewhere.
    pub acked_on: Option<ElementId>,
}

/// A per-packet delay with FIFO order kept, with its own stream.
pub struct PathElement {
    pub name: String,
    pub path: PathDelay,
    pub rng: Xoshiro256pp,
}

// A network has a handful of elements, touched on every packet: kept inline, not boxed.
#[allow(clippy::large_enum_variant)]
pub enum Element {
    Link(LinkElement),
    Path(PathElement),
    /// A multi-hop IEEE 802.15.4 mesh (`net::radio`), crossed hop by hop inside.
    Mesh(Box<Mesh>),
    /// An NB-IoT or LTE-M cell (`net::cellular`): one device per client node.
    Cell(Box<Cell>),
}

/// A sequence of elements from one node to another.
#[derive(Clone, Debug)]
pub struct Route {
    pub from: NodeId,
    pub to: NodeId,
    pub hops: Vec<ElementId>,
}

/// The outcomes of handling one network event, for the applications' ground truth.
#[derive(Clone, Copy, Debug, Default)]
pub struct Handled {
    /// A packet finished serializing on a link (lost or not).
    pub serialized: Option<(PacketId, LinkRole)>,
    /// A packet was dropped (it is still in the network's store: the owner removes it).
    pub dropped: Option<(PacketId, DropReason)>,
}

/// The network: nodes, elements, routes, and the packets in flight.
pub struct Network {
    pub nodes: Vec<Node>,
    pub elements: Vec<Element>,
    pub routes: Vec<Route>,
    pub packets: Slab<NetPacket>,
    /// The first route from each node to each other, for [`Network::route`] (a cell has two
    /// routes per device: tens of thousands).
    route_index: std::collections::HashMap<(NodeId, NodeId), RouteId>,
}

impl Network {
    pub fn new(nodes: Vec<Node>, elements: Vec<Element>, routes: Vec<Route>) -> Self {
        let mut route_index = std::collections::HashMap::new();
        for (i, r) in routes.iter().enumerate() {
            route_index.entry((r.from, r.to)).or_insert(i as RouteId);
        }
        Network {
            nodes,
            elements,
            routes,
            packets: Slab::default(),
            route_index,
        }
    }

    /// The route from `from` to `to`.
    pub fn route(&self, from: NodeId, to: NodeId) -> Option<RouteId> {
        self.route_index.get(&(from, to)).copied()
    }

    /// The first node with `role`.
    pub fn node(&self, role: NodeRole) -> Option<NodeId> {
        self.nodes
            .iter()
            .position(|n| n.role == role)
            .map(|i| i as NodeId)
    }

    /// A node sends `packet` at `now` on `route`. `Err` if the first element tail-dropped it
    /// at once (the packet is not stored).
    pub fn send(
        &mut self,
        now: Instant,
        mut packet: NetPacket,
        route: RouteId,
        q: &mut impl Scheduler,
    ) -> Result<PacketId, DropReason> {
        packet.route = route;
        packet.hop = 0;
        let id = self.packets.insert(packet);
        match self.enter(now, id, q) {
            Some(why) => {
                self.packets.remove(id);
                Err(why)
            }
            None => Ok(id),
        }
    }

    /// A stored packet (e.g. a request turned into its response) is sent again at `now` from
    /// the node it reached, on `route`.
    pub fn resend(&mut self, now: Instant, id: PacketId, route: RouteId, q: &mut impl Scheduler) {
        let p = self.packets.get_mut(id);
        p.route = route;
        p.hop = 0;
        // The star's return path starts with a path delay, which never drops; a mesh may
        // refuse the packet at once: the refusal is reported as an event, like any drop.
        if let Some(why) = self.enter(now, id, q) {
            debug_assert!(
                why == DropReason::MacQueue,
                "resend onto a link that dropped at once"
            );
            let element = self.routes[route as usize].hops[0];
            q.schedule_net(
                now,
                NetEvent::Radio(
                    element,
                    RadioEvent {
                        kind: RadioKind::Refused,
                        node: 0,
                        peer: 0,
                        gen: id,
                    },
                ),
            );
        }
    }

    /// The packet enters the element at its current hop at `now`.
    fn enter(&mut self, now: Instant, id: PacketId, q: &mut impl Scheduler) -> Option<DropReason> {
        let p = self.packets.get_ref(id);
        let (ip_bytes, element) = (
            p.ip_bytes,
            self.routes[p.route as usize].hops[p.hop as usize],
        );
        match &mut self.elements[element as usize] {
            Element::Link(l) => match l.link.on_packet_arrival(now, id, ip_bytes) {
                Arrival::Transmitting { done_at } => {
                    q.schedule_net(done_at, NetEvent::TxDone(element));
                    None
                }
                Arrival::Queued => None,
                Arrival::Dropped => Some(DropReason::Buffer),
            },
            Element::Path(pe) => {
                let at = pe.path.on_packet(now, &mut pe.rng);
                self.onward(at, id, q);
                None
            }
            Element::Mesh(m) => {
                let pkt = self.packets.get(id);
                let route = &self.routes[pkt.route as usize];
                match m.enter(now, id, &pkt, route.from, route.to, q) {
                    Ok(MeshOutcome::Exit(_)) => {
                        self.onward(now, id, q);
                        None
                    }
                    Ok(_) => None,
                    Err(why) => Some(why),
                }
            }
            Element::Cell(c) => {
                let route = &self.routes[p.route as usize];
                // Devices are the cell's first nodes (`net/topology/cell.rs`).
                let n = c.len() as NodeId;
                let up = (route.from < n).then_some(u32::from(route.from));
                let down = (up.is_none() && route.to < n).then_some(u32::from(route.to));
                match c.enter(now, id, ip_bytes, up, down, q) {
                    CellOutcome::Exit(_) => {
                        self.onward(now, id, q);
                        None
                    }
                    CellOutcome::Nothing => None,
                    CellOutcome::Dropped(_, why) => Some(why),
                }
            }
        }
    }

    /// The packet leaves its current element at `at` towards the next one.
    fn onward(&mut self, at: Instant, id: PacketId, q: &mut impl Scheduler) {
        let p = self.packets.get_mut(id);
        p.hop += 1;
        let route = &self.routes[p.route as usize];
        match route.hops.get(p.hop as usize) {
            None => q.schedule_net(at, NetEvent::Deliver(route.to, id)),
            Some(&next) => match &mut self.elements[next as usize] {
                Element::Link(_) | Element::Mesh(_) | Element::Cell(_) => {
                    q.schedule_net(at, NetEvent::Arrive(next, id))
                }
                // A path delay's exit time is known on entry: fold it in now.
                Element::Path(pe) => {
                    let exit = pe.path.on_packet(at, &mut pe.rng);
                    self.onward(exit, id, q);
                }
            },
        }
    }

    /// Handles one of the network's own events (`Deliver` is the nodes' business).
    pub fn handle(&mut self, now: Instant, event: NetEvent, q: &mut impl Scheduler) -> Handled {
        let mut out = Handled::default();
        match event {
            NetEvent::TxDone(element) => {
                let Element::Link(l) = &mut self.elements[element as usize] else {
                    unreachable!("TxDone from a path element");
                };
                let done = l.link.on_tx_done(now, &mut l.rng);
                let (role, acked_on) = (l.role, l.acked_on);
                if let Some(at) = done.next_done_at {
                    q.schedule_net(at, NetEvent::TxDone(element));
                }
                out.serialized = Some((done.packet, role));
                if let (Some(up), Some(_)) = (acked_on, done.delivered_at) {
                    if let Element::Link(u) = &mut self.elements[up as usize] {
                        u.link.on_downlink_packet(now);
                    }
                }
                match done.delivered_at {
                    Some(at) => self.onward(at, done.packet, q),
                    None => out.dropped = Some((done.packet, DropReason::LinkError)),
                }
            }
            NetEvent::Arrive(_, id) => {
                if let Some(why) = self.enter(now, id, q) {
                    out.dropped = Some((id, why));
                }
            }
            NetEvent::Radio(element, ev) => {
                let Element::Mesh(m) = &mut self.elements[element as usize] else {
                    unreachable!("a radio event for an element that is not a mesh");
                };
                match m.handle(now, ev, &self.packets, q) {
                    MeshOutcome::Nothing => {}
                    MeshOutcome::Exit(id) => self.onward(now, id, q),
                    MeshOutcome::Dropped(id, why) => out.dropped = Some((id, why)),
                }
            }
            NetEvent::Cell(element, ev) => {
                let Element::Cell(c) = &mut self.elements[element as usize] else {
                    unreachable!("a cell event for an element that is not a cell");
                };
                match c.handle(now, ev, q) {
                    CellOutcome::Nothing => {}
                    CellOutcome::Exit(id) => self.onward(now, id, q),
                    CellOutcome::Dropped(id, why) => out.dropped = Some((id, why)),
                }
            }
            NetEvent::Deliver(..) => {}
        }
        out
    }

    /// Records the time series of the constrained link's directions (`trace = true`).
    pub fn record_series(&mut self) {
        for e in &mut self.elements {
            match e {
                Element::Link(l) if l.role != LinkRole::Other => l.link.record_series(),
                // A cell records device 0's (client 0's) radio states (docs/networks.md
                // "State timeline").
                Element::Cell(c) => c.record_timeline(0),
                _ => {}
            }
        }
    }

    /// The recorded time series of the constrained link's directions (empty when not
    /// recorded, e.g. a mesh).
    pub fn time_series(&self) -> Vec<LinkTimeSeries> {
        self.elements
            .iter()
            .filter_map(|e| match e {
                Element::Link(l) => Some(l),
                _ => None,
            })
            .filter_map(|l| {
                let s = l.link.series()?;
                Some(LinkTimeSeries {
                    link: l.name.clone(),
                    direction: if l.role == LinkRole::Uplink {
                        "up"
                    } else {
                        "down"
                    },
                    queue: s.queue.iter().map(|&(t, b)| (t.secs_f64(), b)).collect(),
                    bin_s: THROUGHPUT_BIN.secs_f64(),
                    delivered_bytes: s.delivered.clone(),
                    truncated_at_s: s.truncated_at.map(Instant::secs_f64),
                })
            })
            .collect()
    }

    /// The network's mesh element, if it has one.
    pub fn mesh(&self) -> Option<&Mesh> {
        self.elements.iter().find_map(|e| match e {
            Element::Mesh(m) => Some(&**m),
            _ => None,
        })
    }

    /// The network's cell element, if it has one.
    pub fn cell(&self) -> Option<&Cell> {
        self.elements.iter().find_map(|e| match e {
            Element::Cell(c) => Some(&**c),
            _ => None,
        })
    }

    /// Each device's time per radio state from 0 to `until` (docs/energy.md): a cell's devices
    /// (`net::cellular`), a mesh's nodes from their radios' on-time; `None` when no element
    /// records state (the star, GPRS).
    pub fn state_times(&self, until: Instant) -> Option<Vec<StateTimes>> {
        if let Some(c) = self.cell() {
            return Some(c.state_times(until));
        }
        self.mesh().map(|m| m.state_times(until))
    }

    /// The links with `role`.
    fn links(&self, role: LinkRole) -> impl Iterator<Item = &Link<PacketId>> {
        self.elements.iter().filter_map(move |e| match e {
            Element::Link(l) if l.role == role => Some(&l.link),
            _ => None,
        })
    }

    /// Packet counters of the run (docs/model.md "Packets"); `measured` is the measured period
    /// (first request, last end; s), `unnecessary_downlink_bytes` were spent on unnecessary
    /// retransmissions (or responses to them) out of `downlink_kbps` of capacity.
    ///
    /// Utilisation and the unnecessary share are taken over the *link window*: from the
    /// earlier of the measured period's start and the first transmission on either link, to
    /// the later of its end and the end of the last transmission on either link. A link
    /// serializes one packet at a time, so its busy time fits in that window and the figures
    /// stay in [0, 1] — also when the links are still busy after the last exchange ended
    /// (spurious retransmissions), and for NON-only runs, which have no measured period.
    pub fn packet_stats(
        &self,
        measured: Option<(f64, f64)>,
        downlink_kbps: f64,
        unnecessary_downlink_bytes: u64,
    ) -> PacketStats {
        let sum = |role: LinkRole| {
            let mut s = crate::net::link::LinkStats::default();
            for l in self.links(role) {
                s.sent += l.stats.sent;
                s.bytes += l.stats.bytes;
                s.dropped_buffer += l.stats.dropped_buffer;
                s.lost_link += l.stats.lost_link;
                s.busy += l.stats.busy;
                s.queue_wait += l.stats.queue_wait;
                s.first_start = match (s.first_start, l.stats.first_start) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    (a, b) => a.or(b),
                };
                s.last_end = s.last_end.max(l.stats.last_end);
            }
            s
        };
        let (up, down) = (sum(LinkRole::Uplink), sum(LinkRole::Downlink));
        let starts = [up.first_start, down.first_start]
            .into_iter()
            .flatten()
            .map(|t| t.secs_f64());
        let ends = [up.last_end, down.last_end]
            .into_iter()
            .flatten()
            .map(|t| t.secs_f64());
        let (first, last) = measured.unwrap_or((f64::INFINITY, f64::NEG_INFINITY));
        let window = ends.fold(last, f64::max) - starts.fold(first, f64::min);
        let window = if window.is_finite() && window > 0.0 {
            window
        } else {
            0.0
        };
        let per = |x: f64| if window > 0.0 { x / window } else { 0.0 };
        let down_capacity_bytes = window * downlink_kbps * 1000.0 / 8.0;
        PacketStats {
            sent: up.sent + down.sent,
            sent_uplink: up.sent,
            sent_downlink: down.sent,
            dropped_buffer: up.dropped_buffer + down.dropped_buffer,
            dropped_buffer_downlink: down.dropped_buffer,
            lost_link: up.lost_link + down.lost_link,
            lost_link_uplink: up.lost_link,
            lost_link_downlink: down.lost_link,
            bytes_uplink: up.bytes,
            bytes_downlink: down.bytes,
            utilisation_uplink: per(up.busy.secs_f64()),
            utilisation_downlink: per(down.busy.secs_f64()),
            unnecessary_downlink_share: if down_capacity_bytes > 0.0 {
                unnecessary_downlink_bytes as f64 / down_capacity_bytes
            } else {
                0.0
            },
            max_queue_bytes: self
                .links(LinkRole::Downlink)
                .map(|l| l.max_queue_bytes())
                .max()
                .unwrap_or(0),
            mean_queue_delay_s: if down.sent > 0 {
                down.queue_wait.secs_f64() / down.sent as f64
            } else {
                0.0
            },
        }
    }
}
