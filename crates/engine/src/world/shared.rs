//! What the run's event loop (`world/mod.rs`) and its applications (`udp_app`, `tcp_app`)
//! share: the run's one event type with each transport's events, the clock and queue with the
//! network, and where a group's clients run. A leaf of `world/`, so the loop and the
//! applications import it and not each other.

use coaplab_cc::Instant;

use crate::error::Error;
use crate::net::network::{NetEvent, Network, Scheduler};
use crate::packet::AppPacket;
use crate::sim::event_queue::EventQueue;

#[derive(Clone, Copy, Debug)]
pub(crate) enum UdpEvent {
    /// Client (local index) starts its workload.
    ClientStart(u32),
    ClientTimer {
        client: u32,
        exchange: u32,
        generation: u32,
    },
    /// A periodic client (local index) creates its next request.
    Tick(u32),
    /// A reporting client (local index) sends an exception report.
    Exception(u32),
    /// A DTLS client's (local index) handshake retransmission timer (`coap::security`).
    SecurityTimer { client: u32, generation: u32 },
    /// An LwM2M device's (local index) or its server's event (`world::lwm2m_app`).
    Lwm2m {
        client: u32,
        what: crate::coap::lwm2m::Event,
    },
    /// `workload.kind = "observe"`'s events (`observe_app`).
    Observe(ObserveEvent),
}

/// Observe's events (one family of `UdpEvent`), each for a local client index.
#[derive(Clone, Copy, Debug)]
pub(crate) enum ObserveEvent {
    /// The client's resource takes its next value.
    Value(u32),
    NotifierTimer {
        client: u32,
        generation: u32,
    },
    NotifierWake {
        client: u32,
        generation: u32,
    },
    /// The observer's Max-Age + margin watch.
    Watch {
        client: u32,
        generation: u32,
    },
}

#[derive(Clone, Copy, Debug)]
pub(crate) enum TcpEvent {
    /// A client (local index) opens a connection (its start, or a burst client's arrival).
    Open(u32),
    /// A connected client sends its first request.
    FirstRequest(u32),
    Timer {
        flow: u32,
        end: u8,
    },
    /// BBR's pacing lets the next segment of an end leave.
    Pace {
        flow: u32,
        end: u8,
    },
    /// The resource observed by a client (local index) takes a new value (`tcp_app/observe.rs`).
    ObserveValue(u32),
}

/// Events of the Q-Block transfers (`world/qblock_app.rs`), by local client index.
#[derive(Clone, Copy, Debug)]
pub(crate) enum QEvent {
    Start(u32),
    /// The sending end's timer (the server for Q-Block2, the client for Q-Block1).
    SenderTimer(u32),
    /// The receiving end's timer.
    ReceiverTimer(u32),
}

/// Every event of a run.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Event {
    Net(NetEvent),
    Udp(UdpEvent),
    Tcp(TcpEvent),
    QBlock(QEvent),
}

impl Scheduler for EventQueue<Event> {
    #[inline]
    fn schedule_net(&mut self, at: Instant, event: NetEvent) {
        self.schedule(at, Event::Net(event));
    }
}

/// What every application uses: the clock and queue, the network, the capture.
pub(crate) struct Shared {
    pub queue: EventQueue<Event>,
    pub net: Network,
    /// Every packet as its sender sent it (pcap requested).
    pub capture: Option<Vec<(Instant, AppPacket)>>,
    pub trace: bool,
}

/// Where a group's clients run and where their server is.
#[derive(Clone, Copy)]
pub(crate) struct Placement<'a> {
    /// Global id of the group's first client.
    pub first: u32,
    pub client_node: &'a dyn Fn(u32) -> crate::net::network::NodeId,
    /// The server node of client `i` (topologies with several servers).
    pub client_server: &'a dyn Fn(u32) -> crate::net::network::NodeId,
    pub net: &'a Network,
    pub seed: u64,
    pub replication: u64,
}

impl Placement<'_> {
    /// The routes client `id` uses: to the server and back.
    pub fn routes(&self, id: u32) -> Result<[crate::net::network::RouteId; 2], Error> {
        let node = (self.client_node)(id);
        let server = (self.client_server)(id);
        match (self.net.route(node, server), self.net.route(server, node)) {
            (Some(up), Some(down)) => Ok([up, down]),
            _ => Err(Error::key(
                "network",
                format!(
                    "no route between client node '{}' and the server",
                    self.net.nodes[node as usize].name
                ),
            )),
        }
    }
}
