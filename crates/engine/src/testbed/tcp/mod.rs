//! The testbed with CoAP over TCP (SPEC §4): every client opens TCP connections to the server
//! through the same network as the UDP testbed; the TCP model (`crate::tcp`) runs at both
//! ends of every connection, and the CoAP-over-TCP application (`crate::coap::over_tcp`)
//! writes and reads messages on the byte streams.
//!
//! Client behaviour (SPEC §4.3, §5):
//! - `continuous`, `firmware` and the burst's background clients connect first (each at its
//!   start offset) and exchange CSMs; once every one of them holds the server's CSM, each
//!   sends its first request at that instant plus its start offset. FCT runs from the first
//!   request.
//! - `random` clients open a new connection per batch and close it after the batch's last
//!   response; FCT runs from the first SYN.
//! - burst clients connect at `burst_at_s` plus their offset and send once connected.
//!
//! The initiator does not wait for the acceptor's CSM (RFC 8323 §4.1): a client writes its CSM
//! (and, for `random`, its request) the moment the handshake completes, so that segment also
//! carries the handshake's final ACK.
//!
//! Here: the event loop and the client / server applications; `params.rs` the TCP model's
//! parameters, `results.rs` the metrics, `capture.rs` the pcap.

use coaplab_cc::rng::Xoshiro256pp;
use coaplab_cc::{Duration, Instant};
use coaplab_wire::ip::IPV4_HEADER;

mod capture;
mod params;
mod results;

use super::{ConfigError, Network, CLIENT_PORT};
use crate::coap::client::ClientStats;
use crate::coap::over_tcp::{MessageStream, TcpMsg};
use crate::config::{RunConfig, WorkloadKind};
use crate::metrics::SeqTraceRow;
use crate::net::link::Arrival;
use crate::sim::event_queue::EventQueue;
use crate::sim::slab::{PacketId, Slab};
use crate::sim::streams::{stream, Stream};
use crate::tcp::{ConnEvent, Connection, DataArrival, Seq, State, TcpConfig, Transmit};
use crate::workload::{client_setups, Plan};
use params::tcp_config;

/// Which end of a connection.
const CLIENT: usize = 0;
const SERVER: usize = 1;

#[derive(Clone, Copy, Debug)]
enum Event {
    /// A client opens a connection (its start, or a burst client's arrival).
    Open(u32),
    /// A connected client sends its first request.
    FirstRequest(u32),
    Timer {
        flow: u32,
        end: u8,
    },
    UplinkTxDone,
    DownlinkTxDone,
    AtServer(PacketId),
    AtRouterDown(PacketId),
    AtClient(PacketId),
}

/// A segment in the network.
#[derive(Clone, Copy, Debug)]
struct TcpPacket {
    flow: u32,
    /// Sent by the client end.
    upstream: bool,
    t: Transmit,
    ip_bytes: u32,
}

/// One TCP connection: both ends, the application's message streams, and its trace.
struct Flow {
    client: u32,
    port: u16,
    ends: [Option<Connection>; 2],
    /// Client → server and server → client messages.
    streams: [MessageStream; 2],
    /// The earliest pending timer event of each end: an event at another time is stale; one
    /// that fires before the connection's deadline re-schedules itself.
    timer: [Option<Instant>; 2],
    server_closed: bool,
    /// The client has a request to send once connected (`random`).
    pending_request: bool,
    /// Counters that need ground truth from the other end.
    unnecessary: u64,
    csm_retransmissions: u64,
    trace: Option<Vec<SeqTraceRow>>,
}

struct TcpClient {
    id: u32,
    plan: Plan,
    rng: Xoshiro256pp,
    offset: Duration,
    random: bool,
    in_burst: bool,
    flow: Option<u32>,
    /// The server's CSM arrived on the current connection.
    up: bool,
    finished: bool,
    stats: ClientStats,
    flows: Vec<u32>,
}

pub struct TcpTestbed {
    cfg: RunConfig,
    replication: u64,
    tcp: TcpConfig,
    response_payload: u32,
    queue: EventQueue<Event>,
    net: Network,
    slab: Slab<TcpPacket>,
    flows: Vec<Flow>,
    clients: Vec<TcpClient>,
    /// Background clients still to get connected before the measured period.
    waiting: u32,
    burst_first: u32,
    burst_done: Vec<f64>,
    burst_total: usize,
    requests: u64,
    /// IP bytes of unnecessary server → client retransmissions that crossed the downlink.
    unnecessary_down_bytes: u64,
    capture: Option<Vec<(Instant, TcpPacket)>>,
}

impl TcpTestbed {
    /// Builds the testbed for replication `replication` of `cfg`.
    pub fn new(cfg: &RunConfig, replication: u64, capture: bool) -> Result<Self, ConfigError> {
        if cfg.coap.cc != "newreno" {
            return Err(ConfigError(format!(
                "coap.cc: '{}' is not a TCP congestion controller; allowed with transport tcp: newreno",
                cfg.coap.cc
            )));
        }
        let net = Network::new(cfg, replication)?;
        let w = &cfg.workload;
        let tcp = tcp_config(cfg)?;
        let response_payload = if w.kind == WorkloadKind::Firmware {
            u32::try_from(w.resource_bytes)
                .ok()
                .filter(|&b| b < 1 << 20)
                .ok_or_else(|| {
                    ConfigError(format!(
                        "workload.resource_bytes: {} is too large for one CoAP-over-TCP message; allowed: < 1048576",
                        w.resource_bytes
                    ))
                })?
        } else {
            w.response_bytes
        };
        let seed = cfg.seed;
        let mut start_rng = stream(seed, replication, Stream::ClientStart);
        let random = w.kind == WorkloadKind::Random;
        let (setups, background) = client_setups(w, Plan::Count { remaining: 1 }, &mut start_rng);
        let burst_total =
            (setups.len() - background as usize) * w.burst_exchanges.unwrap_or(1) as usize;
        let mut queue = EventQueue::with_capacity(8 * setups.len() + 64);
        let mut clients = Vec::with_capacity(setups.len());
        for (id, setup) in (0u32..).zip(setups) {
            queue.schedule(setup.start, Event::Open(id));
            clients.push(TcpClient {
                id,
                plan: setup.plan,
                rng: stream(seed, replication, Stream::Client(id)),
                offset: setup.offset,
                random,
                in_burst: setup.in_burst,
                flow: None,
                up: false,
                finished: false,
                stats: ClientStats::default(),
                flows: Vec::new(),
            });
        }
        Ok(TcpTestbed {
            cfg: cfg.clone(),
            replication,
            tcp,
            response_payload,
            queue,
            net,
            slab: Slab::default(),
            flows: Vec::new(),
            clients,
            waiting: if random { 0 } else { background },
            burst_first: background,
            burst_done: Vec::new(),
            burst_total,
            requests: 0,
            unnecessary_down_bytes: 0,
            capture: capture.then(Vec::new),
        })
    }

    /// Runs until every client has finished its workload and the network is quiet.
    pub fn run(&mut self) {
        while let Some((now, event)) = self.queue.pop() {
            self.handle(now, event);
        }
    }

    fn handle(&mut self, now: Instant, event: Event) {
        match event {
            // A random client's batch opens its connection (`next_request`); the others connect
            // first and send when the measured period begins.
            Event::Open(c) if self.clients[c as usize].random => self.next_request(now, c),
            Event::Open(c) => self.open(now, c),
            Event::FirstRequest(c) => {
                self.next_request(now, c);
                if let Some(flow) = self.clients[c as usize].flow {
                    self.on_end_changed(now, flow, CLIENT);
                }
            }
            Event::Timer { flow, end } => {
                let e = usize::from(end);
                let f = &mut self.flows[flow as usize];
                if f.timer[e] != Some(now) {
                    return; // superseded by an earlier deadline
                }
                f.timer[e] = None;
                let Some(conn) = f.ends[e].as_mut() else {
                    return;
                };
                match conn.poll_timeout() {
                    Some(at) if at <= now => {
                        conn.handle_timeout(now);
                        self.on_end_changed(now, flow, e);
                    }
                    // The deadline moved later since this event was scheduled: follow it.
                    Some(at) => self.schedule_timer(flow, e, at),
                    None => {}
                }
            }
            Event::UplinkTxDone => {
                let done = self.net.on_uplink_tx_done(now);
                if let Some(at) = done.next_done_at {
                    self.queue.schedule(at, Event::UplinkTxDone);
                }
                match done.at {
                    Some(at) => self.queue.schedule(at, Event::AtServer(done.packet)),
                    None => self.dropped(now, done.packet),
                }
            }
            Event::AtRouterDown(id) => {
                let size = self.slab.get(id).ip_bytes;
                match self.net.downlink.on_packet_arrival(now, id, size) {
                    Arrival::Transmitting { done_at } => {
                        self.queue.schedule(done_at, Event::DownlinkTxDone)
                    }
                    Arrival::Queued => {}
                    Arrival::Dropped => self.dropped(now, id),
                }
            }
            Event::DownlinkTxDone => {
                let done = self.net.on_downlink_tx_done(now);
                if let Some(at) = done.next_done_at {
                    self.queue.schedule(at, Event::DownlinkTxDone);
                }
                match done.at {
                    Some(at) => self.queue.schedule(at, Event::AtClient(done.packet)),
                    None => self.dropped(now, done.packet),
                }
            }
            Event::AtServer(id) => self.arrive(now, id, SERVER),
            Event::AtClient(id) => self.arrive(now, id, CLIENT),
        }
    }

    /// A segment was tail-dropped or lost to a link error.
    fn dropped(&mut self, now: Instant, id: PacketId) {
        let p = self.slab.remove(id);
        let f = &mut self.flows[p.flow as usize];
        if let Some(tr) = f.trace.as_mut() {
            let end = if p.upstream { CLIENT } else { SERVER };
            if let Some(conn) = f.ends[end].as_ref() {
                let seg = p.t.segment;
                if seg.len > 0 {
                    tr.push(trace_row(
                        now,
                        p.upstream,
                        "drop",
                        seg.seq - data_start(conn),
                        seg.len,
                    ));
                }
            }
        }
    }

    /// Opens a new connection for client `c`.
    fn open(&mut self, now: Instant, c: u32) {
        let client = &mut self.clients[c as usize];
        let index = client.flows.len() as u32;
        let flow = self.flows.len() as u32;
        // Deterministic initial sequence numbers, spread over the space (RFC 9293 §3.4.1
        // wants them unpredictable; a simulation wants them reproducible).
        let iss = Seq(flow.wrapping_mul(0x9E37_79B9).wrapping_add(c));
        client.flows.push(flow);
        client.flow = Some(flow);
        client.up = false;
        if client.random && client.stats.first_request.is_none() {
            // SPEC §6: a random client's FCT runs from its first SYN.
            client.stats.first_request = Some(now);
        }
        self.flows.push(Flow {
            client: c,
            port: CLIENT_PORT.wrapping_add((index % 16384) as u16),
            ends: [Some(Connection::connect(self.tcp, iss)), None],
            streams: [MessageStream::default(), MessageStream::default()],
            timer: [None, None],
            server_closed: false,
            pending_request: client.random,
            unnecessary: 0,
            csm_retransmissions: 0,
            trace: self.cfg.trace.then(Vec::new),
        });
        self.on_end_changed(now, flow, CLIENT);
    }

    /// A segment reaches `end` of its connection.
    fn arrive(&mut self, now: Instant, id: PacketId, end: usize) {
        let p = self.slab.remove(id);
        let seg = p.t.segment;
        let f = &mut self.flows[p.flow as usize];
        // A SYN opens the server's end — again if a previous attempt ran out of SYN-ACK
        // retries (Linux drops the request and answers the next SYN afresh).
        let server_gone = f.ends[SERVER]
            .as_ref()
            .is_none_or(|c| c.state() == State::Failed);
        if end == SERVER && server_gone {
            if !(seg.syn && seg.ack.is_none()) {
                return; // nothing listens for it
            }
            let iss = Seq(p.flow.wrapping_mul(0x85EB_CA6B).wrapping_add(f.client));
            f.ends[SERVER] = Some(Connection::accept(self.tcp, iss, &seg));
            self.on_end_changed(now, p.flow, SERVER);
            return;
        }
        let Some(conn) = f.ends[end].as_mut() else {
            return;
        };
        // The sender's view, for the time-sequence trace: an ACK for the other direction.
        if let (Some(tr), Some(ack)) = (f.trace.as_mut(), seg.ack) {
            if conn.state() == State::Established && !seg.syn {
                tr.push(trace_row(
                    now,
                    end == CLIENT,
                    "ack",
                    ack - data_start(conn),
                    0,
                ));
            }
        }
        let had = p.t.retransmission
            && seg.len > 0
            && conn.receiver().is_some_and(|r| r.already_has(&seg));
        let arrival = conn.handle_segment(now, &seg);
        if had {
            f.unnecessary += 1;
            if end == CLIENT {
                self.unnecessary_down_bytes += u64::from(p.ip_bytes);
            }
        }
        debug_assert!(!had || arrival == Some(DataArrival::Duplicate));
        self.on_end_changed(now, p.flow, end);
    }

    /// After anything happened at `end` of `flow`: the application reacts, then the
    /// connection transmits what it may, then its timer is rescheduled.
    fn on_end_changed(&mut self, now: Instant, flow: u32, end: usize) {
        if end == CLIENT {
            self.client_app(now, flow);
        } else {
            self.server_app(flow);
        }
        self.transmit(now, flow, end);
        let f = &self.flows[flow as usize];
        if let Some(want) = f.ends[end].as_ref().and_then(Connection::poll_timeout) {
            // Only an earlier deadline needs a new event: a pending event that fires early
            // re-schedules itself (the RTO restarts on every ACK; scheduling each restart
            // would fill the queue with stale events).
            if f.timer[end].is_none_or(|t| want < t) {
                self.schedule_timer(flow, end, want);
            }
        }
    }

    fn schedule_timer(&mut self, flow: u32, end: usize, at: Instant) {
        self.flows[flow as usize].timer[end] = Some(at);
        self.queue.schedule(
            at,
            Event::Timer {
                flow,
                end: end as u8,
            },
        );
    }

    fn server_app(&mut self, flow: u32) {
        let payload = self.response_payload;
        let f = &mut self.flows[flow as usize];
        let Some(conn) = f.ends[SERVER].as_mut() else {
            return;
        };
        while let Some(ev) = conn.poll_event() {
            if ev == ConnEvent::Connected {
                conn.write(f.streams[1].push(TcpMsg::Csm));
            }
        }
        let delivered = conn.delivered();
        while let Some(msg) = f.streams[0].poll_complete(delivered) {
            if msg == TcpMsg::Request {
                self.requests += 1;
                conn.write(f.streams[1].push(TcpMsg::Response { payload }));
            }
        }
        if conn.peer_closed() && !f.server_closed {
            f.server_closed = true;
            conn.close();
        }
    }

    fn client_app(&mut self, now: Instant, flow: u32) {
        let f = &mut self.flows[flow as usize];
        let c = f.client;
        let Some(conn) = f.ends[CLIENT].as_mut() else {
            return;
        };
        let mut connected = false;
        let mut failed = false;
        while let Some(ev) = conn.poll_event() {
            match ev {
                ConnEvent::Connected => connected = true,
                ConnEvent::Failed => failed = true,
            }
        }
        if connected {
            conn.write(f.streams[0].push(TcpMsg::Csm));
            if std::mem::take(&mut f.pending_request) {
                conn.write(f.streams[0].push(TcpMsg::Request));
            }
        }
        let delivered = conn.delivered();
        let mut got_csm = false;
        let mut responses = 0;
        while let Some(msg) = f.streams[1].poll_complete(delivered) {
            match msg {
                TcpMsg::Csm => got_csm = true,
                TcpMsg::Response { .. } => responses += 1,
                TcpMsg::Request => {}
            }
        }
        let client = &mut self.clients[c as usize];
        if client.flow != Some(flow) {
            return; // an old connection of a random client, closing
        }
        if failed {
            self.connection_failed(now, c);
            return;
        }
        if got_csm && !client.up {
            client.up = true;
            if client.in_burst {
                self.next_request(now, c);
            } else if !client.random {
                self.one_less_waiting(now);
            }
        }
        for _ in 0..responses {
            let client = &mut self.clients[c as usize];
            client.stats.completed += 1;
            client.stats.last_end = Some(now);
            if client.in_burst {
                self.burst_done.push(now.secs_f64());
            }
            self.next_request(now, c);
        }
    }

    /// SYN retries exhausted: the exchanges the connection was for fail.
    fn connection_failed(&mut self, now: Instant, c: u32) {
        let client = &mut self.clients[c as usize];
        client.stats.last_end = Some(now);
        match &mut client.plan {
            // A random client's batch fails as a whole (its first exchange was already taken
            // from the plan when the connection opened); the next batch tries again.
            Plan::Batches { batch_left, .. } => {
                client.stats.failed += 1 + *batch_left;
                *batch_left = 0;
                self.next_request(now, c);
                return;
            }
            // The others cannot go on: everything they had left fails.
            Plan::Count { remaining } => {
                client.stats.failed += std::mem::take(remaining).max(1);
            }
            Plan::Until { .. } | Plan::Blocks { .. } => client.stats.failed += 1,
        }
        {
            client.finished = true;
            if !client.random && !client.in_burst && !client.up {
                self.one_less_waiting(now);
            }
        }
    }

    /// A background client got connected (or gave up): once none is left, the measured
    /// period begins and every background client sends its first request at its offset.
    fn one_less_waiting(&mut self, now: Instant) {
        self.waiting -= 1;
        if self.waiting == 0 {
            for cl in &self.clients[..self.burst_first as usize] {
                self.queue
                    .schedule(now + cl.offset, Event::FirstRequest(cl.id));
            }
        }
    }

    /// Client `c` is ready for its next request: writes it (or closes when the workload is
    /// done; a random client's new batch opens a new connection). Sending is the caller's
    /// `on_end_changed` on the client's connection.
    fn next_request(&mut self, now: Instant, c: u32) {
        let client = &mut self.clients[c as usize];
        if client.finished {
            return;
        }
        let Some(next) = client.plan.next_request(now, true, &mut client.rng) else {
            client.finished = true;
            if let Some(flow) = client.flow {
                if let Some(conn) = self.flows[flow as usize].ends[CLIENT].as_mut() {
                    conn.close();
                }
            }
            return;
        };
        if client.stats.first_request.is_none() {
            client.stats.first_request = Some(now);
        }
        if client.random && next.new_batch {
            // SPEC §5: a new connection per batch; the old one closes without blocking.
            if let Some(old) = client.flow {
                if let Some(conn) = self.flows[old as usize].ends[CLIENT].as_mut() {
                    if conn.state() == State::Established {
                        conn.close();
                    }
                }
                self.on_end_changed(now, old, CLIENT);
            }
            self.open(now, c);
            return;
        }
        let flow = client.flow.expect("a connected client has a connection");
        let f = &mut self.flows[flow as usize];
        if let Some(conn) = f.ends[CLIENT].as_mut() {
            conn.write(f.streams[0].push(TcpMsg::Request));
        }
    }

    /// Sends whatever `end` of `flow` may send now.
    fn transmit(&mut self, now: Instant, flow: u32, end: usize) {
        loop {
            let f = &mut self.flows[flow as usize];
            let Some(conn) = f.ends[end].as_mut() else {
                return;
            };
            let Some(t) = conn.poll_transmit(now) else {
                return;
            };
            let seg = t.segment;
            let upstream = end == CLIENT;
            let start = data_start(conn);
            if t.retransmission && seg.len > 0 {
                let from = u64::from(seg.seq - start);
                if f.streams[end].overlaps_csm(from, from + u64::from(seg.len)) {
                    f.csm_retransmissions += 1;
                }
            }
            if let Some(tr) = f.trace.as_mut() {
                if seg.len > 0 {
                    let kind = if t.retransmission {
                        "retransmit"
                    } else {
                        "send"
                    };
                    tr.push(trace_row(now, upstream, kind, seg.seq - start, seg.len));
                }
            }
            let p = TcpPacket {
                flow,
                upstream,
                t,
                ip_bytes: IPV4_HEADER as u32 + seg.header_bytes() + seg.len,
            };
            if let Some(cap) = self.capture.as_mut() {
                cap.push((now, p));
            }
            let id = self.slab.insert(p);
            if upstream {
                match self.net.uplink.on_packet_arrival(now, id, p.ip_bytes) {
                    Arrival::Transmitting { done_at } => {
                        self.queue.schedule(done_at, Event::UplinkTxDone)
                    }
                    Arrival::Queued => {}
                    Arrival::Dropped => self.dropped(now, id),
                }
            } else {
                let at = self.net.server_to_router(now);
                self.queue.schedule(at, Event::AtRouterDown(id));
            }
        }
    }
}

/// Sequence number of the first data byte a connection end sends (after its SYN).
fn data_start(conn: &Connection) -> Seq {
    conn.iss() + 1
}

fn trace_row(
    at: Instant,
    upstream: bool,
    kind: &'static str,
    rel_seq: u32,
    len: u32,
) -> SeqTraceRow {
    (
        at.secs_f64(),
        if upstream { "up" } else { "down" },
        kind,
        rel_seq,
        len,
    )
}
