//! CoAP over UDP as applications on nodes (docs/model.md "CoAP over UDP"): clients driven by
//! the algorithm library, and the server that answers every CON with a piggybacked ACK.

use coaplab_cc::rng::Rng;
use coaplab_cc::{Config, Instant};

use super::secured::Deferred;
use super::shared::{Event, Placement, Shared, UdpEvent};
use crate::basics::secs;
use crate::coap::client::{Action, Client, NonTraffic, Probing, Reports};
use crate::coap::messages::MessageFactory;
use crate::coap::server::Server;
use crate::config::{GroupConfig, RunConfig, WorkloadKind};
use crate::error::Error;
use crate::foreign::UdpAlgorithm;
use crate::net::network::RouteId;
use crate::packet::{NetPacket, Packet, PacketKind};
use crate::sim::slab::PacketId;
use crate::sim::streams::{stream, Stream};
use crate::workload::{client_setups, Plan};
use coaplab_wire::coap::option;

/// A UDP group's message sizes.
pub(super) struct UdpGroup {
    pub(super) msgs: MessageFactory,
}

/// Not a UDP client.
const NONE: u32 = u32::MAX;

pub(crate) struct UdpApp {
    pub(super) groups: Vec<UdpGroup>,
    pub(crate) clients: Vec<Client>,
    /// Per local client: its group, whether it belongs to a burst, its routes up and down.
    pub(crate) group_of: Vec<u16>,
    pub(crate) in_burst: Vec<bool>,
    pub(super) routes: Vec<[RouteId; 2]>,
    /// Global client id → local index (`NONE` for other transports' clients).
    pub(super) local: Vec<u32>,
    pub(crate) server: Server,
    pub(super) actions: Vec<Action>,
    /// `coap.security`: the groups' protection, the clients' DTLS sessions (`secured`, played by `udp_security`).
    pub(crate) sec: super::secured::Secured,
    /// `workload.kind = "observe"`: per local client, its observation (`observe_app`).
    pub(crate) observe: Vec<Option<Box<crate::coap::observe::Observation>>>,
    /// `workload.kind = "lwm2m"`: the devices and the server's requester (`lwm2m_app`).
    pub(crate) lwm2m: super::lwm2m_state::Lwm2mState,
}

impl UdpApp {
    pub fn new(total_clients: u32) -> Self {
        UdpApp {
            groups: Vec::new(),
            clients: Vec::new(),
            group_of: Vec::new(),
            in_burst: Vec::new(),
            routes: Vec::new(),
            local: vec![NONE; total_clients as usize],
            server: Server::default(),
            actions: Vec::with_capacity(8),
            sec: Default::default(),
            observe: Vec::new(),
            lwm2m: Default::default(),
        }
    }

    /// The local index of (global) client `id`, if it is a UDP client.
    pub(crate) fn local_index(&self, id: u32) -> Option<u32> {
        self.local.get(id as usize).copied().filter(|&l| l != NONE)
    }

    /// The message factory of the group of (global) client `id`.
    pub(crate) fn msgs_of(&self, id: u32) -> &MessageFactory {
        let local = self.local[id as usize];
        &self.groups[self.group_of[local as usize] as usize].msgs
    }

    /// Adds a group's clients (global ids from `at.first`), scheduling their starts; returns
    /// how many. Each client's algorithm is built from `algorithm`, the group's `coap.cc`
    /// resolved once for the run (`crate::foreign::Algorithms::resolve`).
    pub fn add_group(
        &mut self,
        cfg: &RunConfig,
        g: &GroupConfig,
        label: &dyn Fn(&str) -> String,
        (at, algorithm): (Placement<'_>, &UdpAlgorithm),
        start_rng: &mut dyn Rng,
        queue: &mut crate::sim::event_queue::EventQueue<Event>,
    ) -> Result<u32, Error> {
        let err = |key: String, m: String| Err(Error::key(key, m));
        let l = &cfg.link;
        let w = &g.workload;
        if w.block_szx > 6 {
            return err(
                label("workload.block_szx"),
                format!(
                    "{} is out of range; allowed 0..6 (RFC 7959 §2.2)",
                    w.block_szx
                ),
            );
        }
        let security = super::secured::GroupSecurity::new(cfg, g, label)?;
        let observe = crate::config::observe::check(w, &g.coap, label)?;
        let lwm2m = w.kind == WorkloadKind::Lwm2m;
        super::lwm2m_state::check(g, label)?;
        let mut msgs = MessageFactory {
            // A whole IPv6 packet of `request_bytes`: 40 (IPv6) + 8 (UDP) + 12 (CoAP header
            // and Uri-Path) + 1 (payload marker) + payload.
            request_payload: w.request_bytes.map_or(0, |b| b.saturating_sub(61)),
            response_bytes: observe.map_or(w.response_bytes, |o| o.notification_bytes),
            block_szx: w.block_szx,
            resource_bytes: w.resource_bytes,
            rexmit_cnt: algorithm
                .needs_rexmit_count()
                .then_some(g.coap.rexmit_cnt_option.unwrap_or(option::REXMIT_CNT)),
            protection: security.protection,
            // Max-Age travels only when it is not the default (RFC 7252 §5.10.5).
            observe: observe.map(|o| {
                (o.max_age_s != crate::config::defaults::WORKLOAD_MAX_AGE_S)
                    .then_some(o.max_age_s as u32)
            }),
        };
        if lwm2m {
            // The device's uplinks carry their own payloads; the server's ACKs none (2.01 /
            // 2.04, docs/model.md "LwM2M devices"); firmware blocks come from the image.
            (msgs.response_bytes, msgs.request_payload) = (0, 0);
            msgs.resource_bytes = w.lwm2m_firmware_bytes.unwrap_or(1);
        }
        let blockwise = w.kind == WorkloadKind::Firmware || w.lwm2m_firmware_bytes.is_some();
        let largest =
            msgs.response(&msgs.request(0, 0, 1, 0, blockwise.then_some(0), Instant::ZERO));
        if lwm2m {
            super::lwm2m_state::check_mtu(w, &msgs, l.mtu)?;
        }
        let reporting = w.kind == WorkloadKind::Reporting;
        if reporting {
            if w.request_bytes.is_some() {
                return err(
                    label("workload.request_bytes"),
                    "not allowed with workload.kind = \"reporting\" (each report's payload is drawn: 20-200 B, TR 45.820)".into(),
                );
            }
            let cutoff = crate::reporting::PAYLOAD_CUTOFF_BYTES as u16;
            let report = msgs.request_carrying(0, 0, 1, 0, None, Instant::ZERO, Some(cutoff));
            if report.ip_bytes > l.mtu {
                return err(
                    "link.mtu".into(),
                    format!(
                        "{} B is smaller than the largest report ({} B, a 200 B payload); raise link.mtu",
                        l.mtu, report.ip_bytes
                    ),
                );
            }
        }
        // An observe group's largest notification: a 3-byte sequence number (RFC 7641 §4.4).
        let largest = match observe {
            Some(o) => msgs.notification(
                0,
                0xFF_FFFF,
                Instant::ZERO,
                true,
                0,
                0,
                o.notification_bytes,
            ),
            None => largest,
        };
        if largest.ip_bytes > l.mtu {
            return err(
                "link.mtu".into(),
                format!(
                "{} B is smaller than the workload's largest packet ({} B); raise link.mtu or lower {} / block_szx",
                l.mtu, largest.ip_bytes, label(if observe.is_some() { "workload.notification_bytes" } else { "workload.response_bytes" })
            ),
            );
        }
        let alg_config = Config {
            ack_timeout: secs(g.coap.ack_timeout_s),
            ack_random_factor_permille: (g.coap.ack_random_factor * 1000.0).round() as u64,
            max_retransmit: g.coap.max_retransmit,
            nstart: g.coap.nstart,
            max_timer: secs(g.coap.max_timer_s),
            ..Config::default()
        };
        if g.coap.max_retransmit > 63 {
            return err(
                label("coap.max_retransmit"),
                format!("{} is out of range; allowed 0..63", g.coap.max_retransmit),
            );
        }
        if let Some(n) = g
            .coap
            .rexmit_cnt_option
            .filter(|n| n % 2 == 1 || *n < 65000)
        {
            // An odd number is critical (RFC 7252 §5.4.6): a server that does not know the
            // option would have to reject the request.
            return err(
                label("coap.rexmit_cnt_option"),
                format!(
                    "{n} is not an elective experimental option number; allowed: an even number in 65000..65535 (RFC 7252 §5.4.6, §12.2)"
                ),
            );
        }
        let non_rate = g.coap.non_rate_per_s;
        if g.coap.non_rule && non_rate <= 0.0 {
            return err(
                label("coap.non_rule"),
                format!(
                    "true needs NON traffic; set {} > 0 (messages per second)",
                    label("coap.non_rate_per_s")
                ),
            );
        }
        if non_rate > 0.0 && w.kind != WorkloadKind::Continuous {
            return err(
                label("coap.non_rate_per_s"),
                format!(
                    "NON traffic needs workload.kind = \"continuous\" (each client sends workload.exchanges messages); kind is {}",
                    format!("{:?}", w.kind).to_lowercase()
                ),
            );
        }
        let firmware = Plan::Blocks {
            next: 0,
            total: msgs.blocks(),
        };
        let (setups, _background) = client_setups(w, firmware, start_rng);
        let msgs_blocks = msgs.blocks();
        let group = self.groups.len() as u16;
        self.groups.push(UdpGroup { msgs });
        self.sec.add_group(security, setups.len());
        let count = setups.len() as u32;
        for (i, setup) in (0u32..).zip(setups) {
            let id = at.first + i;
            let local = self.clients.len() as u32;
            // A report whose phase falls after the deadline is never made (a device with a
            // 1-day interval in a shorter run): no start event beyond the run.
            let deadline = Instant::from_secs_f64(w.duration_s.unwrap_or(0.0));
            if !reporting || setup.start < deadline {
                queue.schedule(setup.start, Event::Udp(UdpEvent::ClientStart(local)));
            }
            self.local[id as usize] = local;
            self.routes.push(at.routes(id)?);
            self.group_of.push(group);
            self.in_burst.push(setup.in_burst);
            let mut client = Client::new(
                id,
                algorithm.algorithm(&alg_config),
                stream(at.seed, at.replication, Stream::Client(id)),
                setup.plan,
                g.coap.nstart,
                cfg.trace,
            );
            client.keep_completions = setup.in_burst;
            if non_rate > 0.0 {
                client.non = Some(Box::new(NonTraffic::new(
                    non_rate,
                    w.exchanges,
                    g.coap.non_rule,
                )));
            }
            client.probing = g.coap.probing_rate_bps.map(|r| Box::new(Probing::new(r)));
            self.observe.resize_with(local as usize, || None);
            self.observe.push(observe.as_ref().map(|p| {
                let msgs = &self.groups[group as usize].msgs;
                let non = msgs.notification(
                    id,
                    0xFF_FFFF,
                    Instant::ZERO,
                    false,
                    0,
                    0,
                    p.notification_bytes,
                );
                let notifier = crate::coap::observe::Notifier::new(
                    algorithm.algorithm(&alg_config),
                    stream(at.seed, at.replication, Stream::Notifier(id)),
                    p.notify,
                    coaplab_cc::Duration::from_secs_f64(p.con_every_s),
                    (id.wrapping_mul(7919) & 0xFFFF) as u16,
                    g.coap.probing_rate_bps.map(|r| (r, non.ip_bytes)),
                );
                let values = stream(at.seed, at.replication, Stream::Values(id));
                let secs = coaplab_cc::Duration::from_secs_f64;
                let process = (
                    p.period_s.map(secs),
                    p.rate_per_s,
                    Instant::from_secs_f64(p.duration_s),
                );
                let observer = crate::coap::observe::Observer::new(secs(p.max_age_s));
                Box::new(crate::coap::observe::Observation::new(
                    notifier,
                    observer,
                    values,
                    process,
                    p.notification_bytes,
                ))
            }));
            if reporting {
                let mut rng = stream(at.seed, at.replication, Stream::Report(id));
                let per_day = w
                    .exception_reports_per_day
                    .unwrap_or(crate::reporting::EXCEPTION_REPORTS_PER_DAY);
                let deadline = Instant::from_secs_f64(w.duration_s.unwrap_or(0.0));
                if per_day > 0.0 {
                    let first = Instant::ZERO + crate::reporting::exception_gap(&mut rng, per_day);
                    if first < deadline {
                        queue.schedule(first, Event::Udp(UdpEvent::Exception(local)));
                    }
                }
                client.reports = Some(Reports {
                    rng,
                    exceptions_per_day: per_day,
                });
            }
            if lwm2m {
                let params = crate::coap::lwm2m::Params::of(w, msgs_blocks);
                let rng = stream(at.seed, at.replication, Stream::Lwm2m(id));
                self.lwm2m_add(local, params, rng);
            }
            self.clients.push(client);
        }
        Ok(count)
    }

    pub fn handle(&mut self, now: Instant, event: UdpEvent, sh: &mut Shared) {
        match event {
            UdpEvent::ClientStart(c) if self.clients[c as usize].period().is_some() => {
                self.tick(now, c, sh)
            }
            UdpEvent::Tick(c) => self.tick(now, c, sh),
            UdpEvent::Exception(c) => self.exception(now, c, sh),
            UdpEvent::ClientStart(c) if self.is_lwm2m(c) => self.lwm2m_start(now, c, sh),
            UdpEvent::ClientStart(c) => {
                self.gate(now, c, Deferred::Start, sh);
                self.observe_started(now, c, sh);
            }
            UdpEvent::Observe(e) => self.observe_event(now, e, sh),
            UdpEvent::Lwm2m { client, what } => self.lwm2m_event(now, client, what, sh),
            UdpEvent::SecurityTimer { client, generation } => {
                self.security_timer(now, client, generation, sh)
            }
            UdpEvent::ClientTimer {
                client,
                exchange,
                generation,
            } => {
                let msgs = &self.groups[self.group_of[client as usize] as usize].msgs;
                self.clients[client as usize].on_timer(
                    now,
                    exchange,
                    generation,
                    msgs,
                    &mut self.actions,
                );
                self.apply_actions(now, client, sh);
            }
        }
    }

    /// A periodic client's tick: it creates a request (started or dropped at the
    /// application) and schedules its next tick while before its deadline.
    fn tick(&mut self, now: Instant, c: u32, sh: &mut Shared) {
        let client = &mut self.clients[c as usize];
        let Some((period, deadline)) = client.period() else {
            return;
        };
        if now >= deadline {
            return;
        }
        self.gate(now, c, Deferred::Tick, sh);
        let next = now + period;
        if next < deadline {
            sh.queue.schedule(next, Event::Udp(UdpEvent::Tick(c)));
        }
    }

    /// A reporting client's exception report (TR 45.820's 20 bytes, `crate::reporting`): created
    /// like a periodic report, then the next one scheduled an exponential gap later while
    /// before the deadline.
    fn exception(&mut self, now: Instant, c: u32, sh: &mut Shared) {
        let client = &mut self.clients[c as usize];
        let Some((_, deadline)) = client.period() else {
            return;
        };
        let bytes = crate::reporting::EXCEPTION_REPORT_BYTES;
        // The next report's time, drawn before this one is made: the report's own size is
        // given, so making it draws nothing from this stream.
        let next = client
            .reports
            .as_mut()
            .map(|r| now + crate::reporting::exception_gap(&mut r.rng, r.exceptions_per_day));
        self.gate(now, c, Deferred::Exception(bytes), sh);
        if let Some(next) = next.filter(|&t| t < deadline) {
            sh.queue.schedule(next, Event::Udp(UdpEvent::Exception(c)));
        }
    }

    /// The routes (to the server, back) of every local client.
    pub(crate) fn client_routes(&self) -> &[[RouteId; 2]] {
        &self.routes
    }

    /// A request reached the server, or a response its client.
    pub fn deliver(&mut self, now: Instant, id: PacketId, p: Packet, sh: &mut Shared) {
        match p.kind {
            PacketKind::Request => self.on_request_at_server(now, id, p, sh),
            PacketKind::ServerRequest => self.lwm2m_read_at_device(now, id, p, sh),
            PacketKind::ServerAck => {
                sh.net.packets.remove(id);
                self.lwm2m_answer_at_server(now, p, sh);
            }
            PacketKind::Handshake {
                resume,
                flight,
                index,
                count,
            } => {
                sh.net.packets.remove(id);
                let c = self.local[p.client as usize];
                self.on_handshake(now, c, (resume, flight, index, count), sh);
            }
            PacketKind::Response => {
                sh.net.packets.remove(id);
                let c = self.local[p.client as usize];
                let msgs = &self.groups[self.group_of[c as usize] as usize].msgs;
                self.clients[c as usize].on_response(now, &p, msgs, &mut self.actions);
                self.apply_actions(now, c, sh);
                self.observe_response(now, c, sh);
            }
            PacketKind::Notification => {
                sh.net.packets.remove(id);
                self.on_notification(now, p, sh);
            }
            PacketKind::NotificationAck => {
                sh.net.packets.remove(id);
                self.on_notification_ack(now, p, sh);
            }
        }
    }

    /// Ground truth for the unnecessary-downlink share: the response to copy `ordinal` was
    /// serialized on the downlink.
    pub fn on_downlink_serialized(&mut self, p: &Packet) {
        if !matches!(p.kind, PacketKind::Request | PacketKind::Response) {
            return;
        }
        let c = self.local[p.client as usize];
        let rec = self.clients[c as usize].record_mut(p.exchange);
        rec.answer_serialized |= 1u64.checked_shl(p.ordinal).unwrap_or(0);
        // `add_group` refused responses larger than the MTU, which the schema bounds by 65 535.
        rec.response_bytes =
            u16::try_from(p.ip_bytes).expect("a response fits the MTU (≤ 65 535 B)");
    }

    /// A packet of this transport was dropped in the network.
    pub fn on_dropped(&mut self, p: &Packet) {
        // A lost handshake datagram is the DTLS timer's business; a lost notification or ACK
        // the notifier's (`coap::observe`); a lost LwM2M read or answer the server's
        // requester's (`lwm2m_app`).
        if !matches!(p.kind, PacketKind::Request | PacketKind::Response) {
            return;
        }
        let c = self.local[p.client as usize];
        self.clients[c as usize].on_packet_gone(p.exchange);
    }

    fn on_request_at_server(&mut self, now: Instant, id: PacketId, req: Packet, sh: &mut Shared) {
        let c = self.local[req.client as usize];
        // Ground truth for the unnecessary-retransmission metric (docs/model.md "Metrics").
        let rec = self.clients[c as usize].record_mut(req.exchange);
        rec.reached_server |= 1u64.checked_shl(req.ordinal).unwrap_or(0);
        // A duplicate gets the cached response again: the same message, echoing (with
        // Rexmit-Cnt) the copy it answers.
        let duplicate = self.server.on_request(now, req.client, req.mid);
        self.observe_registration(now, c, duplicate, sh);
        let msgs = &self.groups[self.group_of[c as usize] as usize].msgs;
        let resp = msgs.response(&req);
        self.sec.record_bytes += u64::from(msgs.protection.overhead(false, resp.exchange));
        if let Some(cap) = sh.capture.as_mut() {
            cap.push((now, crate::packet::AppPacket::Udp(resp)));
        }
        // The response takes the request's place in the network.
        *sh.net.packets.get_mut(id) = NetPacket::udp(resp);
        sh.net
            .resend(now, id, self.routes[c as usize][1], &mut sh.queue);
        self.lwm2m_uplink_at_server(now, c, sh);
    }

    pub(super) fn apply_actions(&mut self, now: Instant, client: u32, sh: &mut Shared) {
        for i in 0..self.actions.len() {
            match self.actions[i] {
                Action::Send(p) => {
                    let group = self.group_of[client as usize] as usize;
                    let overhead = self.groups[group]
                        .msgs
                        .protection
                        .overhead(true, p.exchange);
                    self.sec.on_send(now, client, overhead);
                    self.lwm2m_sent(now, client);
                    if let Some(cap) = sh.capture.as_mut() {
                        cap.push((now, crate::packet::AppPacket::Udp(p)));
                    }
                    let route = self.routes[client as usize][0];
                    if sh
                        .net
                        .send(now, NetPacket::udp(p), route, &mut sh.queue)
                        .is_err()
                    {
                        self.clients[client as usize].on_packet_gone(p.exchange);
                    }
                }
                Action::Ended(tag, block, ok) => self.lwm2m_ended(tag, block, ok),
                Action::ArmTimer {
                    at,
                    exchange,
                    generation,
                } => {
                    sh.queue.schedule(
                        at,
                        Event::Udp(UdpEvent::ClientTimer {
                            client,
                            exchange,
                            generation,
                        }),
                    );
                }
            }
        }
        self.actions.clear();
        if !self.lwm2m_idle() {
            self.lwm2m_flush_ended(now, client, sh);
        }
    }
}
