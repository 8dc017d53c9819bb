//! The reference testbed (SPEC §2) wired together, and the event loop that runs it.
//!
//! ```text
//! clients ─▶ uplink (queue → serializer → 200 ms, loss) ─▶ router ─▶ path 10–20 ms ─▶ server
//! clients ◀─ downlink (bottleneck queue → serializer → 400 ms, loss) ◀─ router ◀─ path ◀─ server
//! ```

use std::io::Write;

use coaplab_cc::{Algorithm, AlgorithmName, Config, Instant};
use coaplab_wire::ip::{write_udp_datagram, COAP_PORT};
use coaplab_wire::pcap::PcapWriter;

use super::{client_addr, secs, ConfigError, MeasuredPeriod, Network, CLIENT_PORT, SERVER_ADDR};
use crate::coap::client::{Action, Client};
use crate::coap::messages::MessageFactory;
use crate::coap::server::Server;
use crate::config::{RunConfig, WorkloadKind};
use crate::metrics::{settling_time, ClientResult, ClientTrace, RunResult, ServerStats};
use crate::net::link::Arrival;
use crate::packet::{Packet, PacketKind};
use crate::sim::event_queue::EventQueue;
use crate::sim::slab::{PacketId, Slab};
use crate::sim::streams::{stream, Stream};
use crate::workload::{client_setups, Plan};

#[derive(Clone, Copy, Debug)]
enum Event {
    ClientStart(u32),
    ClientTimer {
        client: u32,
        exchange: u32,
        generation: u32,
    },
    UplinkTxDone,
    DownlinkTxDone,
    /// A request leaves the router ↔ server path.
    AtServer(PacketId),
    /// A response leaves the path and reaches the bottleneck buffer.
    AtRouterDown(PacketId),
    /// A response reaches its client after the downlink's propagation delay.
    AtClient(PacketId),
}

/// The CoAP-over-UDP testbed (SPEC §3).
pub struct Testbed {
    cfg: RunConfig,
    replication: u64,
    msgs: MessageFactory,
    queue: EventQueue<Event>,
    net: Network,
    slab: Slab<Packet>,
    server: Server,
    clients: Vec<Client>,
    /// Clients `burst_first..` belong to the burst.
    burst_first: u32,
    actions: Vec<Action>,
    capture: Option<Vec<(Instant, Packet)>>,
}

impl Testbed {
    /// Builds the testbed for replication `replication` of `cfg`.
    pub fn new(cfg: &RunConfig, replication: u64, capture: bool) -> Result<Self, ConfigError> {
        let err = |m: String| Err(ConfigError(m));
        let name: AlgorithmName = match cfg.coap.cc.parse() {
            Ok(n) => n,
            Err(e) => return err(format!("coap.cc: '{}': {e}", cfg.coap.cc)),
        };
        let net = Network::new(cfg, replication)?;
        let l = &cfg.link;
        let w = &cfg.workload;
        if w.block_szx > 6 {
            return err(format!(
                "workload.block_szx: {} is out of range; allowed 0..6 (RFC 7959 §2.2)",
                w.block_szx
            ));
        }
        let msgs = MessageFactory {
            response_bytes: w.response_bytes,
            block_szx: w.block_szx,
            resource_bytes: w.resource_bytes,
            rexmit_cnt: name.needs_rexmit_count(),
        };
        let largest = msgs.response(&msgs.request(
            0,
            0,
            1,
            0,
            (w.kind == WorkloadKind::Firmware).then_some(0),
            Instant::ZERO,
        ));
        if largest.ip_bytes > l.mtu {
            return err(format!(
                "link.mtu: {} B is smaller than the workload's largest packet ({} B); raise link.mtu or lower workload.response_bytes / block_szx",
                l.mtu, largest.ip_bytes
            ));
        }
        let alg_config = Config {
            ack_timeout: secs(cfg.coap.ack_timeout_s),
            ack_random_factor_permille: (cfg.coap.ack_random_factor * 1000.0).round() as u64,
            max_retransmit: cfg.coap.max_retransmit,
            nstart: cfg.coap.nstart,
            max_timer: secs(cfg.coap.max_timer_s),
            ..Config::default()
        };
        if cfg.coap.max_retransmit > 63 {
            return err(format!(
                "coap.max_retransmit: {} is out of range; allowed 0..63",
                cfg.coap.max_retransmit
            ));
        }

        let seed = cfg.seed;
        let mut start_rng = stream(seed, replication, Stream::ClientStart);
        let firmware = Plan::Blocks {
            next: 0,
            total: msgs.blocks(),
        };
        let (setups, background) = client_setups(w, firmware, &mut start_rng);
        let mut queue = EventQueue::with_capacity(4 * setups.len() + 64);
        let mut clients = Vec::with_capacity(setups.len());
        for (id, setup) in (0u32..).zip(setups) {
            queue.schedule(setup.start, Event::ClientStart(id));
            let alg = Algorithm::new(name, alg_config);
            clients.push(Client::new(
                id,
                alg,
                stream(seed, replication, Stream::Client(id)),
                setup.plan,
                cfg.coap.nstart,
                cfg.trace,
            ));
        }
        Ok(Testbed {
            cfg: cfg.clone(),
            replication,
            msgs,
            queue,
            net,
            slab: Slab::default(),
            server: Server::default(),
            clients,
            burst_first: background,
            actions: Vec::with_capacity(8),
            capture: capture.then(Vec::new),
        })
    }

    /// Runs until every client has finished its workload.
    pub fn run(&mut self) {
        while let Some((now, event)) = self.queue.pop() {
            self.handle(now, event);
        }
    }

    fn handle(&mut self, now: Instant, event: Event) {
        match event {
            Event::ClientStart(c) => {
                self.clients[c as usize].poll_start(now, &self.msgs, &mut self.actions);
                self.apply_actions(now, c);
            }
            Event::ClientTimer {
                client,
                exchange,
                generation,
            } => {
                self.clients[client as usize].on_timer(
                    now,
                    exchange,
                    generation,
                    &self.msgs,
                    &mut self.actions,
                );
                self.apply_actions(now, client);
            }
            Event::UplinkTxDone => {
                let done = self.net.on_uplink_tx_done(now);
                if let Some(at) = done.next_done_at {
                    self.queue.schedule(at, Event::UplinkTxDone);
                }
                match done.at {
                    Some(at) => self.queue.schedule(at, Event::AtServer(done.packet)),
                    None => {
                        self.slab.remove(done.packet);
                    }
                }
            }
            Event::AtServer(req) => self.on_request_at_server(now, req),
            Event::AtRouterDown(id) => {
                let size = self.slab.get(id).ip_bytes;
                match self.net.downlink.on_packet_arrival(now, id, size) {
                    Arrival::Transmitting { done_at } => {
                        self.queue.schedule(done_at, Event::DownlinkTxDone)
                    }
                    Arrival::Queued => {}
                    Arrival::Dropped => {
                        self.slab.remove(id);
                    }
                }
            }
            Event::DownlinkTxDone => {
                let done = self.net.on_downlink_tx_done(now);
                if let Some(at) = done.next_done_at {
                    self.queue.schedule(at, Event::DownlinkTxDone);
                }
                let p = self.slab.get(done.packet);
                let rec = &mut self.clients[p.client as usize].exchanges[p.exchange as usize];
                rec.answer_serialized |= 1u64.checked_shl(p.ordinal).unwrap_or(0);
                rec.response_bytes = p.ip_bytes;
                match done.at {
                    Some(at) => self.queue.schedule(at, Event::AtClient(done.packet)),
                    None => {
                        self.slab.remove(done.packet);
                    }
                }
            }
            Event::AtClient(id) => {
                let resp = self.slab.remove(id);
                let client = &mut self.clients[resp.client as usize];
                client.on_response(now, &resp, &self.msgs, &mut self.actions);
                self.apply_actions(now, resp.client);
            }
        }
    }

    fn on_request_at_server(&mut self, now: Instant, id: PacketId) {
        let req = self.slab.get(id);
        // Ground truth for the unnecessary-retransmission metric (SPEC §6).
        let rec = &mut self.clients[req.client as usize].exchanges[req.exchange as usize];
        rec.reached_server |= 1u64.checked_shl(req.ordinal).unwrap_or(0);
        // A duplicate gets the cached response again: the same message, echoing (with
        // Rexmit-Cnt) the copy it answers.
        self.server.on_request(now, req.client, req.mid);
        let resp = self.msgs.response(&req);
        if let Some(cap) = self.capture.as_mut() {
            cap.push((now, resp));
        }
        self.slab.set(id, resp); // the response takes the request's slot
        let at = self.net.server_to_router(now);
        self.queue.schedule(at, Event::AtRouterDown(id));
    }

    fn apply_actions(&mut self, now: Instant, client: u32) {
        for i in 0..self.actions.len() {
            match self.actions[i] {
                Action::Send(p) => {
                    if let Some(cap) = self.capture.as_mut() {
                        cap.push((now, p));
                    }
                    let id = self.slab.insert(p);
                    match self.net.uplink.on_packet_arrival(now, id, p.ip_bytes) {
                        Arrival::Transmitting { done_at } => {
                            self.queue.schedule(done_at, Event::UplinkTxDone)
                        }
                        Arrival::Queued => {}
                        Arrival::Dropped => {
                            self.slab.remove(id);
                        }
                    }
                }
                Action::ArmTimer {
                    at,
                    exchange,
                    generation,
                } => {
                    self.queue.schedule(
                        at,
                        Event::ClientTimer {
                            client,
                            exchange,
                            generation,
                        },
                    );
                }
            }
        }
        self.actions.clear();
    }

    /// Writes the capture (requests as sent by clients, responses as sent by the server) as
    /// a pcap file of real IPv4/UDP/CoAP bytes.
    pub fn write_pcap(&self, out: impl Write) -> std::io::Result<()> {
        let mut w = PcapWriter::new(out)?;
        let mut buf = Vec::with_capacity(512);
        let mut coap = Vec::with_capacity(512);
        for (i, (at, p)) in self.capture.iter().flatten().enumerate() {
            coap.clear();
            self.msgs.with_message(p, |m| m.encode(&mut coap));
            buf.clear();
            let client = (client_addr(p.client), CLIENT_PORT);
            let server = (SERVER_ADDR, COAP_PORT);
            let (src, dst) = if p.kind == PacketKind::Request {
                (client, server)
            } else {
                (server, client)
            };
            write_udp_datagram(&mut buf, src, dst, i as u16, &coap);
            w.write_packet(at.nanos(), &buf)?;
        }
        Ok(())
    }

    /// Collects the run's measurements (SPEC §6).
    pub fn result(&self) -> RunResult {
        let mut hist: Vec<u64> = Vec::new();
        let mut measured = MeasuredPeriod::new();
        let mut completed_total = 0u64;
        let mut unnecessary_bytes = 0u64;
        let mut burst_done = Vec::new();
        let mut burst_total = 0usize;
        let mut clients = Vec::with_capacity(self.clients.len());
        for c in &self.clients {
            let mut unnecessary = 0;
            for rec in &c.exchanges {
                unnecessary += rec.unnecessary_retransmissions();
                unnecessary_bytes += rec.unnecessary_response_bytes();
                if rec.done && !rec.failed {
                    let k = rec.ex.retransmissions as usize;
                    if hist.len() <= k {
                        hist.resize(k + 1, 0);
                    }
                    hist[k] += 1;
                }
            }
            if c.id >= self.burst_first {
                burst_total += c.exchanges.len();
                burst_done.extend(
                    c.exchanges
                        .iter()
                        .filter(|r| r.done && !r.failed)
                        .filter_map(|r| r.ended_at)
                        .map(|t| t.secs_f64()),
                );
            }
            let s = &c.stats;
            let fct = measured.client_fct(s);
            completed_total += u64::from(s.completed);
            clients.push(ClientResult {
                client: c.id,
                fct_s: fct,
                first_request_s: s.first_request.map(|t| t.secs_f64()),
                last_end_s: s.last_end.map(|t| t.secs_f64()),
                exchanges_completed: s.completed,
                exchanges_failed: s.failed,
                retransmissions: s.retransmissions,
                unnecessary_retransmissions: unnecessary,
                timeouts: s.timeouts,
                duplicate_responses: s.duplicate_responses,
                tcp: None,
            });
        }
        let period = measured.length();
        let per = |x: f64| if period > 0.0 { x / period } else { 0.0 };
        let settling = (self.cfg.workload.kind == WorkloadKind::Burst).then(|| {
            burst_done.sort_by(f64::total_cmp);
            settling_time(
                self.cfg.workload.burst_at_s.unwrap_or(0.0),
                &burst_done,
                burst_total,
            )
        });
        let traces = self.cfg.trace.then(|| {
            self.clients
                .iter()
                .map(|c| ClientTrace {
                    client: c.id,
                    points: c
                        .trace
                        .iter()
                        .flatten()
                        .map(|t| {
                            (
                                t.at.secs_f64(),
                                t.event,
                                t.exchange,
                                t.timer_s,
                                t.rto_s,
                                t.sample_s,
                                t.sample_kind,
                            )
                        })
                        .collect(),
                })
                .collect()
        });
        RunResult {
            replication: self.replication,
            seed: self.cfg.seed,
            events: self.queue.events_processed(),
            sim_time_s: self.queue.now().secs_f64(),
            measured_period_s: period,
            throughput_exchanges_per_s: per(completed_total as f64),
            settling_time_s: settling.flatten(),
            retransmission_histogram: hist,
            packets: self
                .net
                .packet_stats(period, self.cfg.link.downlink_kbps, unnecessary_bytes),
            server: ServerStats {
                requests: self.server.requests,
                duplicates: self.server.duplicates,
            },
            clients,
            traces,
            tcp: None,
            seq_traces: None,
        }
    }
}
