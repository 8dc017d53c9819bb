//! CoAP over TCP as applications on nodes (docs/model.md "CoAP over TCP"): every client opens
//! TCP connections to the server; the TCP model (`crate::tcp`) runs at both ends of every
//! connection, and the CoAP-over-TCP application (`crate::coap::over_tcp`) writes and reads
//! messages on the byte streams.
//!
//! Client behaviour:
//! - `continuous`, `firmware` and the burst's background clients connect first (each at its
//!   start offset) and exchange CSMs; once every one of them (of every TCP group) holds the
//!   server's CSM and has its own CSM acknowledged, each sends its first request at that
//!   instant plus its start offset. FCT runs from the first request.
//! - `random` clients open a new connection per batch and close it after the batch's last
//!   response; FCT runs from the first SYN.
//! - burst clients connect at `burst_at_s` plus their offset and send once they hold the
//!   server's CSM.
//!
//! Connection start (docs/model.md "Connection start"): the client's stack acknowledges the
//! SYN-ACK with a pure ACK; the client writes its CSM at once, and a `random` client's
//! request is a second write (Nagle holds it until the CSM is acknowledged: the initiator
//! does not wait for the acceptor's CSM, RFC 8323 §4.1). The server writes its CSM when its
//! end becomes established.
//!
//! BBR's pacing is an event of its own: a connection held back by pacing reports the instant
//! its next segment may leave (`Connection::poll_pacing`), and `TcpEvent::Pace` fires then.
//!
//! `params.rs` turns the `[tcp]` section into the TCP model's parameters.

use coaplab_cc::rng::{derive_seed, Rng, Xoshiro256pp};
use coaplab_cc::{Duration, Instant};
use coaplab_wire::ip::IPV4_HEADER;

mod flow;
mod observe;
mod params;

pub(crate) use flow::Flow;

use super::shared::{Event, Placement, Shared, TcpEvent};
use crate::basics::CLIENT_PORT;
use crate::coap::client::ClientStats;
use crate::coap::over_tcp::TcpMsg;
use crate::config::{GroupConfig, RunConfig, WorkloadKind};
use crate::error::Error;
use crate::metrics::SeqTraceRow;
use crate::net::network::RouteId;
use crate::packet::{AppPacket, NetPacket, TcpPacket};
use crate::sim::event_queue::EventQueue;
use crate::sim::slab::PacketId;
use crate::sim::streams::{stream, Stream};
use crate::tcp::{ConnEvent, Connection, DataArrival, Seq, State, TcpConfig};
use crate::workload::{client_setups, Plan};
use params::tcp_config;

/// Which end of a connection.
pub(crate) const CLIENT: usize = 0;
pub(crate) const SERVER: usize = 1;

/// A TCP client. `repr(C, align(64))`: what a client-end event reads (its current flow, the
/// flags, its plan) is the first cache line; the counters, the random stream and the flows'
/// list follow (docs/performance.md, "TCP at scale: the connection's hot and cold fields").
#[repr(C, align(64))]
pub(crate) struct TcpClient {
    flow: Option<u32>,
    /// Global id.
    pub id: u32,
    routes: [RouteId; 2],
    group: u16,
    random: bool,
    pub in_burst: bool,
    /// The server's CSM arrived on the current connection.
    up: bool,
    finished: bool,
    plan: Plan,
    pub stats: ClientStats,
    rng: Xoshiro256pp,
    offset: Duration,
    pub flows: Vec<u32>,
}

/// A TCP group's model parameters and response size.
struct TcpGroup {
    tcp: TcpConfig,
    response_payload: u32,
}

pub(crate) struct TcpApp {
    groups: Vec<TcpGroup>,
    pub(crate) flows: Vec<Flow>,
    pub(crate) clients: Vec<TcpClient>,
    /// Background clients still to get connected before the measured period.
    waiting: u32,
    /// Completion times of burst exchanges, per group (index = the app's group).
    pub(crate) burst_done: Vec<Vec<f64>>,
    pub(crate) requests: u64,
    /// IP bytes of unnecessary server → client retransmissions that crossed the downlink.
    pub(crate) unnecessary_down_bytes: u64,
    trace: bool,
    /// Run seed and replication (for the congestion controllers' streams).
    seed: u64,
    replication: u64,
    /// `workload.kind = "observe"`: per local client, its observation (`observe.rs`).
    observe: Vec<Option<Box<crate::coap::observe_tcp::TcpObservation>>>,
}

impl TcpApp {
    pub fn new() -> Self {
        TcpApp {
            groups: Vec::new(),
            flows: Vec::new(),
            clients: Vec::new(),
            waiting: 0,
            burst_done: Vec::new(),
            requests: 0,
            unnecessary_down_bytes: 0,
            trace: false,
            seed: 0,
            replication: 0,
            observe: Vec::new(),
        }
    }

    /// The client with global id `id`, if it is a TCP client.
    pub(crate) fn client_by_id(&self, id: u32) -> Option<&TcpClient> {
        // Clients are added in global-id order (groups in order, ids consecutive).
        self.clients
            .binary_search_by_key(&id, |c| c.id)
            .ok()
            .map(|i| &self.clients[i])
    }

    /// Adds a group's clients (global ids from `at.first`), scheduling their starts; returns
    /// how many.
    pub fn add_group(
        &mut self,
        cfg: &RunConfig,
        g: &GroupConfig,
        label: &dyn Fn(&str) -> String,
        at: Placement<'_>,
        start_rng: &mut dyn Rng,
        queue: &mut EventQueue<Event>,
    ) -> Result<u32, Error> {
        super::secured::check(g, label)?;
        let Some(congestion) = crate::tcp::congestion::controller(&g.coap.cc) else {
            return Err(Error::key(
                label("coap.cc"),
                format!(
                    "'{}' is not a TCP congestion controller; allowed with transport tcp: {}",
                    g.coap.cc,
                    crate::tcp::congestion::controller_names().join(", ")
                ),
            ));
        };
        let w = &g.workload;
        let mut tcp = tcp_config(cfg.link.mtu, g.tcp.as_ref(), label)?;
        tcp.congestion = congestion;
        // The server is one host with one timer wheel (docs/model.md "Host timers").
        if let Some(first) = self.groups.first() {
            if first.tcp.hz != tcp.hz {
                return Err(Error::key(
                    label("tcp.hz"),
                    format!(
                    "{} differs from another TCP group's {}; allowed: one value for every TCP group (the server is one host)",
                    tcp.hz,
                    first.tcp.hz
                )));
            }
        }
        let response_payload = if w.kind == WorkloadKind::Firmware {
            u32::try_from(w.resource_bytes)
                .ok()
                .filter(|&b| b < 1 << 20)
                .ok_or_else(|| {
                    Error::key(
                        label("workload.resource_bytes"),
                        format!(
                            "{} is too large for one CoAP-over-TCP message; allowed: < 1048576",
                            w.resource_bytes
                        ),
                    )
                })?
        } else {
            w.response_bytes
        };
        if matches!(
            w.kind,
            WorkloadKind::Periodic | WorkloadKind::Reporting | WorkloadKind::Lwm2m
        ) {
            let kind = format!("{:?}", w.kind).to_lowercase();
            return Err(Error::key(
                label("workload.kind"),
                format!("'{kind}' is a CoAP-over-UDP workload; allowed with transport tcp: continuous, random, burst, firmware, observe"),
            ));
        }
        let observe = crate::config::observe::check(w, &g.coap, label)?;
        self.trace = cfg.trace;
        // Streams of the congestion controllers: (seed, replication, flow, end) with a tag
        // of their own, apart from `sim::streams`' ones.
        self.seed = at.seed ^ 0x6262_725f_7068_6173; // "bbr_phas"
        self.replication = at.replication;
        let random = w.kind == WorkloadKind::Random;
        let (setups, background) = client_setups(w, Plan::Count { remaining: 1 }, start_rng);
        let group = self.groups.len() as u16;
        self.groups.push(TcpGroup {
            tcp,
            response_payload,
        });
        self.burst_done.push(Vec::new());
        if !random {
            self.waiting += background;
        }
        let count = setups.len() as u32;
        // Every client opens a connection: one growth of the flows instead of a doubling
        // series of copies (the flows are 64-byte aligned, which `realloc` copies).
        self.flows.reserve(setups.len());
        for (i, setup) in (0u32..).zip(setups) {
            let id = at.first + i;
            let local = self.clients.len() as u32;
            queue.schedule(setup.start, Event::Tcp(TcpEvent::Open(local)));
            self.observe.push(Self::new_observation(
                observe.as_ref(),
                id,
                at.seed,
                at.replication,
            ));
            self.clients.push(TcpClient {
                id,
                group,
                plan: setup.plan,
                rng: stream(at.seed, at.replication, Stream::Client(id)),
                offset: setup.offset,
                random,
                in_burst: setup.in_burst,
                flow: None,
                routes: at.routes(id)?,
                up: false,
                finished: false,
                stats: ClientStats::default(),
                flows: Vec::new(),
            });
        }
        Ok(count)
    }

    pub fn handle(&mut self, now: Instant, event: TcpEvent, sh: &mut Shared) {
        match event {
            // A random client's batch opens its connection (`next_request`); the others connect
            // first and send when the measured period begins.
            TcpEvent::Open(c) if self.clients[c as usize].random => self.next_request(now, c, sh),
            TcpEvent::Open(c) => self.open(now, c, sh),
            TcpEvent::FirstRequest(c) => {
                self.next_request(now, c, sh);
                if let Some(flow) = self.clients[c as usize].flow {
                    self.on_end_changed(now, flow, CLIENT, sh);
                }
            }
            TcpEvent::Pace { flow, end } => {
                let e = usize::from(end);
                let f = &mut self.flows[flow as usize];
                if f.pace[e] != Some(now) {
                    return; // superseded
                }
                f.pace[e] = None;
                self.on_end_changed(now, flow, e, sh);
            }
            TcpEvent::Timer { flow, end } => {
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
                        self.on_end_changed(now, flow, e, sh);
                    }
                    // The deadline moved later since this event was scheduled: follow it.
                    Some(at) => self.schedule_timer(flow, e, at, sh),
                    None => {}
                }
            }
            TcpEvent::ObserveValue(c) => self.observe_value(now, c, sh),
        }
    }

    /// A segment reached the end of its route: the connection end it is for.
    pub fn deliver(&mut self, now: Instant, id: PacketId, p: TcpPacket, sh: &mut Shared) {
        let ip_bytes = sh.net.packets.remove(id).ip_bytes;
        let end = if p.upstream { SERVER } else { CLIENT };
        self.arrive(now, p, ip_bytes, end, sh);
    }

    /// A segment was tail-dropped or lost to a link error.
    pub fn on_dropped(&mut self, now: Instant, p: TcpPacket) {
        let f = &mut self.flows[p.flow as usize];
        if let Some(tr) = f.trace.as_deref_mut().map(|t| &mut t.points) {
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

    /// Opens a new connection for client `c` (local index).
    fn open(&mut self, now: Instant, c: u32, sh: &mut Shared) {
        let client = &mut self.clients[c as usize];
        let index = client.flows.len() as u32;
        let flow = self.flows.len() as u32;
        // Deterministic initial sequence numbers, spread over the space (RFC 9293 §3.4.1
        // wants them unpredictable; a simulation wants them reproducible).
        let iss = Seq(flow.wrapping_mul(0x9E37_79B9).wrapping_add(client.id));
        client.flows.push(flow);
        client.flow = Some(flow);
        client.up = false;
        if client.random && client.stats.first_request.is_none() {
            // A random client's FCT runs from its first SYN (docs/model.md "Metrics").
            client.stats.first_request = Some(now);
        }
        let tcp = self.groups[client.group as usize].tcp;
        let mut conn = Connection::connect(tcp, iss);
        conn.seed_congestion(derive_seed(&[
            self.seed,
            self.replication,
            u64::from(flow),
            0,
        ]));
        let group = &self.groups[client.group as usize];
        self.flows.push(Flow::new(
            c,
            CLIENT_PORT.wrapping_add((index % 16384) as u16),
            client.routes,
            group.response_payload,
            conn,
            client.random,
            // A capture rebuilds segment bytes from the messages: keep them all then.
            sh.capture.is_some(),
            self.trace,
        ));
        self.on_end_changed(now, flow, CLIENT, sh);
    }

    /// A segment reaches `end` of its connection.
    fn arrive(&mut self, now: Instant, p: TcpPacket, ip_bytes: u32, end: usize, sh: &mut Shared) {
        let seg = p.t.segment;
        let f = &mut self.flows[p.flow as usize];
        // A SYN opens the server's end — again if a previous attempt ran out of SYN-ACK
        // retries (Linux drops the request and answers the next SYN afresh).
        let server_gone = f.ends[SERVER]
            .as_ref()
            .is_none_or(|c| c.state() == State::Failed);
        // Any other segment reaches the failed end, which answers it with a RST (RFC 9293
        // §3.10.7.1), so a peer that is still established stops instead of retrying forever.
        if end == SERVER && server_gone && seg.syn && seg.ack.is_none() {
            let client = &self.clients[f.client as usize];
            let iss = Seq(p.flow.wrapping_mul(0x85EB_CA6B).wrapping_add(client.id));
            let tcp = self.groups[client.group as usize].tcp;
            let mut conn = Connection::accept(tcp, iss, &seg);
            conn.seed_congestion(derive_seed(&[
                self.seed,
                self.replication,
                u64::from(p.flow),
                1,
            ]));
            f.ends[SERVER] = Some(conn);
            self.on_end_changed(now, p.flow, SERVER, sh);
            return;
        }
        let Some(conn) = f.ends[end].as_mut() else {
            return;
        };
        // The sender's view, for the time-sequence trace: an ACK for the other direction.
        if let (Some(tr), Some(ack)) = (f.trace.as_deref_mut().map(|t| &mut t.points), seg.ack) {
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
        if let (Some(tr), Some(c)) = (
            f.trace.as_deref_mut().map(|t| &mut t.cc),
            conn.controller().snapshot(),
        ) {
            let row = (
                now.secs_f64(),
                if end == CLIENT { "up" } else { "down" },
                c.mode,
                c.bandwidth,
                c.min_rtt.map_or(0.0, |d| d.secs_f64()),
                c.pacing_rate,
                c.cwnd,
            );
            let last = tr.iter().rev().find(|r| r.1 == row.1);
            if last.is_none_or(|l| (l.2, l.3, l.4, l.5, l.6) != (row.2, row.3, row.4, row.5, row.6))
            {
                tr.push(row);
            }
        }
        if had {
            f.unnecessary += 1;
            if end == CLIENT {
                self.unnecessary_down_bytes += u64::from(ip_bytes);
            }
        }
        debug_assert!(!had || arrival == Some(DataArrival::Duplicate));
        self.on_end_changed(now, p.flow, end, sh);
    }

    /// After anything happened at `end` of `flow`: the application reacts, then the
    /// connection transmits what it may, then its timer is rescheduled.
    fn on_end_changed(&mut self, now: Instant, flow: u32, end: usize, sh: &mut Shared) {
        if end == CLIENT {
            self.client_app(now, flow, sh);
        } else {
            self.server_app(now, flow, sh);
        }
        self.transmit(now, flow, end, sh);
        if end == SERVER && self.observe_drained(flow) {
            self.transmit(now, flow, end, sh);
        }
        let f = &mut self.flows[flow as usize];
        if end == CLIENT && std::mem::take(&mut f.deferred_request) {
            // A random client's first request is its own write after the CSM's: Nagle
            // (Minshall) holds it until the CSM is acknowledged.
            if let Some(conn) = f.ends[CLIENT].as_mut() {
                conn.write(f.streams[0].push(TcpMsg::Request));
            }
            self.transmit(now, flow, end, sh);
        }
        let f = &mut self.flows[flow as usize];
        if let Some(at) = f.ends[end].as_ref().and_then(Connection::poll_pacing) {
            if f.pace[end] != Some(at) {
                f.pace[end] = Some(at);
                sh.queue.schedule(
                    at,
                    Event::Tcp(TcpEvent::Pace {
                        flow,
                        end: end as u8,
                    }),
                );
            }
        }
        let f = &self.flows[flow as usize];
        if let Some(want) = f.ends[end].as_ref().and_then(Connection::poll_timeout) {
            // Only an earlier deadline needs a new event: a pending event that fires early
            // re-schedules itself (the RTO restarts on every ACK; scheduling each restart
            // would fill the queue with stale events).
            if f.timer[end].is_none_or(|t| want < t) {
                self.schedule_timer(flow, end, want, sh);
            }
        }
    }

    fn schedule_timer(&mut self, flow: u32, end: usize, at: Instant, sh: &mut Shared) {
        self.flows[flow as usize].timer[end] = Some(at);
        sh.queue.schedule(
            at,
            Event::Tcp(TcpEvent::Timer {
                flow,
                end: end as u8,
            }),
        );
    }

    fn server_app(&mut self, now: Instant, flow: u32, sh: &mut Shared) {
        let f = &mut self.flows[flow as usize];
        let payload = f.response_payload;
        let Some(conn) = f.ends[SERVER].as_mut() else {
            return;
        };
        while let Some(ev) = conn.poll_event() {
            if ev == ConnEvent::Connected {
                conn.write(f.streams[1].push(TcpMsg::Csm));
            }
        }
        let delivered = conn.delivered();
        let mut registered = false;
        while let Some(msg) = f.streams[0].poll_complete(delivered) {
            if msg == TcpMsg::Request {
                self.requests += 1;
                conn.write(f.streams[1].push(TcpMsg::Response { payload }));
            }
            registered |= msg == TcpMsg::Register;
        }
        let client = f.client;
        if registered {
            self.requests += 1;
            if let Some(msg) = self.observe_registration(now, client, sh) {
                let f = &mut self.flows[flow as usize];
                if let Some(conn) = f.ends[SERVER].as_mut() {
                    conn.write(f.streams[1].push(msg));
                }
            }
        }
        let f = &mut self.flows[flow as usize];
        let Some(conn) = f.ends[SERVER].as_mut() else {
            return;
        };
        if conn.peer_closed() && !f.server_closed {
            f.server_closed = true;
            conn.close();
        }
    }

    fn client_app(&mut self, now: Instant, flow: u32, sh: &mut Shared) {
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
            // The CSM is the application's first write, sent at once (after the stack's
            // pure ACK of the SYN-ACK); a random client's request is a second write.
            f.csm_bytes = f.streams[0].push(TcpMsg::Csm);
            conn.write(f.csm_bytes);
            f.deferred_request = std::mem::take(&mut f.pending_request);
        }
        let delivered = conn.delivered();
        let mut got_csm = false;
        let mut responses = 0;
        let mut notified = false;
        while let Some(msg) = f.streams[1].poll_complete(delivered) {
            match msg {
                TcpMsg::Csm => got_csm = true,
                TcpMsg::Response { .. } => responses += 1,
                TcpMsg::Notification { seq, generated, .. } => {
                    notified = true;
                    if let Some(o) = self.observe[c as usize].as_deref_mut() {
                        let v = crate::coap::observe::Value { seq, generated };
                        // In order on the stream: every notification is fresh (no watch
                        // over TCP, `observe.rs`).
                        let _ = o.observer.on_notification(now, v);
                    }
                }
                TcpMsg::Request | TcpMsg::Register => {}
            }
        }
        f.server_csm |= got_csm;
        let server_csm = f.server_csm;
        let csm_acked = f.csm_bytes > 0
            && conn.snd_una() > conn.iss()
            && conn.snd_una() - data_start(conn) >= f.csm_bytes;
        let client = &mut self.clients[c as usize];
        if client.flow != Some(flow) {
            return; // an old connection of a random client, closing
        }
        if notified && client.stats.completed == 0 {
            // The registration's response (the first notification) ends its exchange.
            client.stats.completed = 1;
            client.stats.last_end = Some(now);
        }
        if failed {
            self.connection_failed(now, c, sh);
            return;
        }
        // Background clients are up once they hold the server's CSM and theirs is
        // acknowledged (docs/model.md "Connection start"); burst clients send once they hold
        // the server's CSM.
        let ready = server_csm && (client.in_burst || client.random || csm_acked);
        if ready && !client.up {
            client.up = true;
            if client.in_burst {
                self.next_request(now, c, sh);
            } else if !client.random {
                self.one_less_waiting(now, sh);
            }
        }
        for _ in 0..responses {
            let client = &mut self.clients[c as usize];
            client.stats.completed += 1;
            client.stats.last_end = Some(now);
            if client.in_burst {
                self.burst_done[client.group as usize].push(now.secs_f64());
            }
            self.next_request(now, c, sh);
        }
    }

    /// SYN retries exhausted: the exchanges the connection was for fail.
    fn connection_failed(&mut self, now: Instant, c: u32, sh: &mut Shared) {
        let client = &mut self.clients[c as usize];
        client.stats.last_end = Some(now);
        match &mut client.plan {
            // A random client's batch fails as a whole (its first exchange was already taken
            // from the plan when the connection opened); the next batch tries again.
            Plan::Batches { batch_left, .. } => {
                client.stats.failed += 1 + *batch_left;
                *batch_left = 0;
                self.next_request(now, c, sh);
                return;
            }
            // The others cannot go on: everything they had left fails.
            Plan::Count { remaining } => {
                client.stats.failed += std::mem::take(remaining).max(1);
            }
            Plan::Until { .. }
            | Plan::Blocks { .. }
            | Plan::Periodic { .. }
            | Plan::Observe { .. }
            | Plan::Lwm2m { .. } => client.stats.failed += 1,
        }
        client.finished = true;
        if !client.random && !client.in_burst && !client.up {
            self.one_less_waiting(now, sh);
        }
    }

    /// A background client got connected (or gave up): once none is left (in any TCP group),
    /// the measured period begins and every background client sends its first request at
    /// its offset.
    fn one_less_waiting(&mut self, now: Instant, sh: &mut Shared) {
        self.waiting -= 1;
        if self.waiting == 0 {
            for (i, cl) in self.clients.iter().enumerate() {
                if !cl.random && !cl.in_burst {
                    sh.queue.schedule(
                        now + cl.offset,
                        Event::Tcp(TcpEvent::FirstRequest(i as u32)),
                    );
                }
            }
        }
    }

    /// Client `c` is ready for its next request: writes it (or closes when the workload is
    /// done; a random client's new batch opens a new connection). Sending is the caller's
    /// `on_end_changed` on the client's connection.
    fn next_request(&mut self, now: Instant, c: u32, sh: &mut Shared) {
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
            // A new connection per batch; the old one closes without blocking.
            if let Some(old) = client.flow {
                if let Some(conn) = self.flows[old as usize].ends[CLIENT].as_mut() {
                    if conn.state() == State::Established {
                        conn.close();
                    }
                }
                self.on_end_changed(now, old, CLIENT, sh);
            }
            self.open(now, c, sh);
            return;
        }
        let flow = client.flow.expect("a connected client has a connection");
        let msg = if self.observes(c) {
            TcpMsg::Register
        } else {
            TcpMsg::Request
        };
        let f = &mut self.flows[flow as usize];
        if let Some(conn) = f.ends[CLIENT].as_mut() {
            conn.write(f.streams[0].push(msg));
        }
    }

    /// Sends whatever `end` of `flow` may send now.
    fn transmit(&mut self, now: Instant, flow: u32, end: usize, sh: &mut Shared) {
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
            if let Some(tr) = f.points() {
                if seg.len > 0 {
                    let kind = if t.retransmission {
                        "retransmit"
                    } else {
                        "send"
                    };
                    tr.push(trace_row(now, upstream, kind, seg.seq - start, seg.len));
                }
            }
            let p = TcpPacket { flow, upstream, t };
            let ip_bytes = IPV4_HEADER as u32 + seg.header_bytes() + seg.len;
            if let Some(cap) = sh.capture.as_mut() {
                cap.push((now, AppPacket::Tcp(p)));
            }
            let route = f.routes[usize::from(!upstream)];
            if sh
                .net
                .send(now, NetPacket::tcp(p, ip_bytes), route, &mut sh.queue)
                .is_err()
            {
                self.on_dropped(now, p);
            }
        }
    }
}

/// Sequence number of the first data byte a connection end sends (after its SYN).
pub(crate) fn data_start(conn: &Connection) -> Seq {
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
