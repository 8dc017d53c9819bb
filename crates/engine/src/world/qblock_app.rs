//! RFC 9177 Q-Block transfers as applications on nodes (docs/model.md "Q-Block"): groups with
//! `coap.block_mode = "q-block"`. A `firmware` client sends one NON GET and the server sends
//! the body as Q-Block2 NON responses; an `upload` client sends its body as Q-Block1 NON
//! requests and the server answers 2.04 once it has every block. The sending and receiving
//! ends are the sans-IO machines of `coap::qblock`; this module moves their messages through
//! the network and schedules their timers.

use coaplab_cc::rng::Rng;
use coaplab_cc::{Duration, Instant};

use super::shared::{Event, Placement, QEvent, Shared};
use crate::basics::secs;
use crate::coap::qblock::{Params, Receiver, RecvAction, SendAction, Sender};
use crate::coap::qblock_wire::Body;
use crate::config::{GroupConfig, Security, Transport, WorkloadKind};
use crate::error::Error;
use crate::net::network::RouteId;
use crate::packet::{AppPacket, NetPacket, QMsg, QPacket};
use crate::sim::slab::PacketId;
use crate::workload::client_setups;

const NONE: u32 = u32::MAX;

/// One client's transfer, both ends.
pub(crate) struct QClient {
    pub id: u32,
    body: Body,
    params: Params,
    pub start: Instant,
    /// The sending end (the server's for Q-Block2, the client's for Q-Block1).
    sender: Option<Sender>,
    receiver: Option<Receiver>,
    pub stats: QStats,
}

/// One transfer's counters (docs/model.md "Q-Block").
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct QStats {
    pub first_sent: Option<Instant>,
    /// When the transfer completed (the client has the body, or the 2.04) or failed.
    pub end: Option<Instant>,
    pub completed: bool,
    pub failed: bool,
    /// Blocks put on the wire (first copies and re-sends).
    pub blocks_sent: u64,
    /// Blocks re-sent after a recovery request.
    pub blocks_recovered: u64,
    pub recovery_requests: u64,
    /// 2.31 Continue (Q-Block1) or next-set GETs (Q-Block2).
    pub continues: u64,
    /// Distinct blocks the receiver got.
    pub blocks_delivered: u32,
    pub bytes_up: u64,
    pub bytes_down: u64,
    pub packets_lost: u64,
}

pub(crate) struct QBlockApp {
    pub(crate) clients: Vec<QClient>,
    local: Vec<u32>,
    routes: Vec<[RouteId; 2]>,
    /// The lists carried by recovery requests in flight (`QMsg::Recover::list`).
    lists: Vec<Vec<u32>>,
    send_out: Vec<SendAction>,
    recv_out: Vec<RecvAction>,
}

impl QBlockApp {
    pub fn new(total_clients: u32) -> Self {
        QBlockApp {
            clients: Vec::new(),
            local: vec![NONE; total_clients as usize],
            routes: Vec::new(),
            lists: Vec::new(),
            send_out: Vec::new(),
            recv_out: Vec::new(),
        }
    }

    /// (Global) client `id`'s transfer.
    pub(crate) fn client(&self, id: u32) -> &QClient {
        &self.clients[self.local[id as usize] as usize]
    }

    /// Whether group `g` runs Q-Block transfers; a Q-Block group without a body, or with what
    /// Q-Block is not built for, is refused.
    pub fn wants(g: &GroupConfig, label: &dyn Fn(&str) -> String) -> Result<bool, Error> {
        let kind = g.workload.kind;
        let q = g.coap.block_mode == crate::config::BlockMode::QBlock;
        let name = format!("{kind:?}").to_lowercase();
        if kind == WorkloadKind::Upload && !q {
            return Err(Error::key(
                label("workload.kind"),
                "\"upload\" needs coap.block_mode = \"q-block\" (RFC 9177 Q-Block1); RFC 7959 Block1 uploads are not modelled",
            ));
        }
        if !q {
            return Ok(false);
        }
        if !matches!(kind, WorkloadKind::Firmware | WorkloadKind::Upload) {
            return Err(Error::key(
                label("coap.block_mode"),
                format!("\"q-block\" needs a body: workload.kind \"firmware\" or \"upload\"; kind is \"{name}\""),
            ));
        }
        if g.coap.transport != Transport::Udp {
            return Err(Error::key(
                label("coap.block_mode"),
                "\"q-block\" is modelled for CoAP over UDP only; set coap.transport = \"udp\"",
            ));
        }
        if g.coap.security != Security::None {
            return Err(Error::key(
                label("coap.block_mode"),
                "\"q-block\" is not modelled with coap.security; allowed: security \"none\"",
            ));
        }
        if g.coap.non_rate_per_s > 0.0 {
            return Err(Error::key(
                label("coap.non_rate_per_s"),
                "not allowed with coap.block_mode = \"q-block\" (the transfer is the NON traffic)",
            ));
        }
        Ok(true)
    }

    /// Adds a Q-Block group's clients, scheduling their starts; returns how many.
    pub fn add_group(
        &mut self,
        cfg: &crate::config::RunConfig,
        g: &GroupConfig,
        label: &dyn Fn(&str) -> String,
        at: Placement<'_>,
        start_rng: &mut dyn Rng,
        queue: &mut crate::sim::event_queue::EventQueue<Event>,
    ) -> Result<u32, Error> {
        let w = &g.workload;
        let c = &g.coap;
        if w.block_szx > 6 {
            return Err(Error::key(
                label("workload.block_szx"),
                format!(
                    "{} is out of range; allowed 0..6 (RFC 7959 §2.2)",
                    w.block_szx
                ),
            ));
        }
        if !(1..=1000).contains(&c.q_block_max_payloads) {
            return Err(Error::key(
                label("coap.q_block_max_payloads"),
                format!(
                    "{} is out of range; allowed 1..1000",
                    c.q_block_max_payloads
                ),
            ));
        }
        for (key, v) in [
            ("coap.q_block_non_timeout_s", c.q_block_non_timeout_s),
            (
                "coap.q_block_non_receive_timeout_s",
                c.q_block_non_receive_timeout_s,
            ),
        ] {
            if !(0.001..=3600.0).contains(&v) {
                return Err(Error::key(
                    label(key),
                    format!("{v} is out of range; allowed 0.001..3600 s"),
                ));
            }
        }
        let body = Body {
            bytes: w.resource_bytes,
            szx: w.block_szx,
            upload: w.kind == WorkloadKind::Upload,
        };
        let largest = body.ip_bytes(QMsg::Block { n: 0, again: false }, &[]);
        if largest > cfg.link.mtu {
            return Err(Error::key(
                "link.mtu",
                format!(
                    "{} B is smaller than a Q-Block payload's packet ({largest} B); raise link.mtu or lower {}",
                    cfg.link.mtu,
                    label("workload.block_szx")
                ),
            ));
        }
        let params = Params {
            max_payloads: c.q_block_max_payloads,
            non_timeout: secs(c.q_block_non_timeout_s),
            non_receive_timeout: secs(c.q_block_non_receive_timeout_s),
            non_max_retransmit: c.max_retransmit.min(31),
            probing_rate_bps: c.probing_rate_bps,
            ..Params::default()
        };
        let plan = crate::workload::Plan::Blocks {
            next: 0,
            total: body.blocks(),
        };
        let (setups, _) = client_setups(w, plan, start_rng);
        let count = setups.len() as u32;
        for (i, setup) in (0u32..).zip(setups) {
            let id = at.first + i;
            let local = self.clients.len() as u32;
            queue.schedule(setup.start, Event::QBlock(QEvent::Start(local)));
            self.local[id as usize] = local;
            self.routes.push(at.routes(id)?);
            self.clients.push(QClient {
                id,
                body,
                params,
                start: setup.start,
                sender: None,
                receiver: None,
                stats: QStats::default(),
            });
        }
        Ok(count)
    }

    pub fn handle(&mut self, now: Instant, e: QEvent, sh: &mut Shared) {
        match e {
            QEvent::Start(c) => {
                let q = &mut self.clients[c as usize];
                let blocks = q.body.blocks();
                if q.body.upload {
                    let size = q.body.ip_bytes(QMsg::Block { n: 0, again: false }, &[]);
                    let mut s = Sender::new(q.params, blocks, size, true);
                    s.start(now, &mut self.send_out);
                    q.sender = Some(s);
                    self.apply_sender(now, c, sh);
                } else {
                    q.receiver = Some(Receiver::new(q.params, blocks, now, &mut self.recv_out));
                    self.send(now, c, QMsg::Request, true, sh);
                    self.apply_receiver(now, c, sh);
                }
            }
            QEvent::SenderTimer(c) => {
                if let Some(s) = self.clients[c as usize].sender.as_mut() {
                    s.on_timer(now, &mut self.send_out);
                }
                self.apply_sender(now, c, sh);
            }
            QEvent::ReceiverTimer(c) => {
                if let Some(r) = self.clients[c as usize].receiver.as_mut() {
                    r.on_timer(now, &mut self.recv_out);
                }
                self.apply_receiver(now, c, sh);
            }
        }
    }

    /// Puts `msg` of client `c` on the network (`up`: towards the server).
    fn send(&mut self, now: Instant, c: u32, msg: QMsg, up: bool, sh: &mut Shared) {
        let q = &mut self.clients[c as usize];
        let missing = match msg {
            QMsg::Recover { list } => self.lists[list as usize].as_slice(),
            _ => &[],
        };
        let ip_bytes = q.body.ip_bytes(msg, missing);
        let s = &mut q.stats;
        s.first_sent.get_or_insert(now);
        if up {
            s.bytes_up += u64::from(ip_bytes);
        } else {
            s.bytes_down += u64::from(ip_bytes);
        }
        if let QMsg::Block { again, .. } = msg {
            s.blocks_sent += 1;
            s.blocks_recovered += u64::from(again);
        }
        let p = QPacket {
            client: q.id,
            up,
            msg,
            ip_bytes,
        };
        if let Some(cap) = sh.capture.as_mut() {
            cap.push((now, AppPacket::QBlock(p)));
        }
        let net = NetPacket {
            app: AppPacket::QBlock(p),
            ip_bytes,
            route: 0,
            hop: 0,
        };
        let route = self.routes[c as usize][usize::from(!up)];
        if sh.net.send(now, net, route, &mut sh.queue).is_err() {
            self.clients[c as usize].stats.packets_lost += 1;
        }
    }

    /// Carries out the sending end's actions: its blocks go from the client (Q-Block1) or the
    /// server (Q-Block2).
    fn apply_sender(&mut self, now: Instant, c: u32, sh: &mut Shared) {
        let up = self.clients[c as usize].body.upload;
        let actions = std::mem::take(&mut self.send_out);
        for a in &actions {
            match *a {
                SendAction::Block { n, again } => {
                    self.send(now, c, QMsg::Block { n, again }, up, sh)
                }
                SendAction::Arm(at) => sh.queue.schedule(at, Event::QBlock(QEvent::SenderTimer(c))),
                SendAction::Failed => self.end(now, c, false),
            }
        }
        self.send_out = actions;
        self.send_out.clear();
    }

    /// Carries out the receiving end's actions (the client's for Q-Block2, the server's for
    /// Q-Block1).
    fn apply_receiver(&mut self, now: Instant, c: u32, sh: &mut Shared) {
        let upload = self.clients[c as usize].body.upload;
        let actions = std::mem::take(&mut self.recv_out);
        for a in &actions {
            match a {
                RecvAction::Continue(n) => {
                    self.clients[c as usize].stats.continues += 1;
                    self.send(now, c, QMsg::Continue(*n), !upload, sh);
                }
                RecvAction::Recover(list) => {
                    self.clients[c as usize].stats.recovery_requests += 1;
                    let id = self.store(list.clone());
                    self.send(now, c, QMsg::Recover { list: id }, !upload, sh);
                }
                RecvAction::Complete if upload => self.send(now, c, QMsg::Final, false, sh),
                RecvAction::Complete => self.end(now, c, true),
                RecvAction::Failed => self.end(now, c, false),
                RecvAction::Arm(at) => sh
                    .queue
                    .schedule(*at, Event::QBlock(QEvent::ReceiverTimer(c))),
            }
        }
        self.recv_out = actions;
        self.recv_out.clear();
    }

    /// Keeps a recovery list for the packet that carries it (a free slot reused).
    fn store(&mut self, list: Vec<u32>) -> u32 {
        match self.lists.iter().position(|l| l.is_empty()) {
            Some(i) if !list.is_empty() => {
                self.lists[i] = list;
                i as u32
            }
            _ => {
                self.lists.push(list);
                (self.lists.len() - 1) as u32
            }
        }
    }

    fn end(&mut self, now: Instant, c: u32, completed: bool) {
        let s = &mut self.clients[c as usize].stats;
        if s.end.is_some() {
            return;
        }
        s.end = Some(now);
        s.completed = completed;
        s.failed = !completed;
    }

    /// A Q-Block message reached the end of its route.
    pub fn deliver(&mut self, now: Instant, id: PacketId, p: QPacket, sh: &mut Shared) {
        sh.net.packets.remove(id);
        let c = self.local[p.client as usize];
        let q = &mut self.clients[c as usize];
        let upload = q.body.upload;
        match p.msg {
            // Q-Block2: the server starts sending (a repeated GET: its first copy's blocks
            // were all lost, the first set again).
            QMsg::Request => {
                if !self.start_server_sender(now, c) {
                    let q = &mut self.clients[c as usize];
                    let first: Vec<u32> = (0..q.params.max_payloads.min(q.body.blocks())).collect();
                    if let Some(s) = q.sender.as_mut() {
                        s.on_recovery(now, &first, &mut self.send_out);
                    }
                }
                self.apply_sender(now, c, sh);
            }
            QMsg::Block { n, .. } => {
                if upload && q.receiver.as_ref().is_some_and(|r| r.complete()) {
                    // A block of a body the server already has: its 2.04 was lost; again.
                    self.send(now, c, QMsg::Final, false, sh);
                    return;
                }
                if q.receiver.is_none() {
                    // Q-Block1: the server's receiver starts with the first block it sees.
                    q.receiver = Some(Receiver::new(
                        q.params,
                        q.body.blocks(),
                        now,
                        &mut self.recv_out,
                    ));
                }
                let r = q.receiver.as_mut().expect("a receiver");
                if r.on_block(now, n, &mut self.recv_out) {
                    q.stats.blocks_delivered += 1;
                }
                self.apply_receiver(now, c, sh);
            }
            QMsg::Continue(n) => {
                // Q-Block2 with the GET lost: the first request the server sees starts it.
                let started = !upload && self.start_server_sender(now, c);
                if let (false, Some(s)) = (started, self.clients[c as usize].sender.as_mut()) {
                    s.on_continue(now, n, &mut self.send_out);
                }
                self.apply_sender(now, c, sh);
            }
            QMsg::Recover { list } => {
                let missing = std::mem::take(&mut self.lists[list as usize]);
                let started = !upload && self.start_server_sender(now, c);
                if let (false, Some(s)) = (started, self.clients[c as usize].sender.as_mut()) {
                    s.on_recovery(now, &missing, &mut self.send_out);
                }
                self.apply_sender(now, c, sh);
            }
            QMsg::Final => {
                if let Some(s) = q.sender.as_mut() {
                    s.on_final();
                }
                debug_assert!(upload);
                self.end(now, c, true);
            }
        }
    }

    /// Q-Block2: the server's sender starts with the first request it gets from client `c`,
    /// sending the first set; returns whether it started now.
    fn start_server_sender(&mut self, now: Instant, c: u32) -> bool {
        let q = &mut self.clients[c as usize];
        if q.sender.is_some() {
            return false;
        }
        let size = q.body.ip_bytes(QMsg::Block { n: 0, again: false }, &[]);
        let mut s = Sender::new(q.params, q.body.blocks(), size, false);
        s.start(now, &mut self.send_out);
        q.sender = Some(s);
        true
    }

    /// A Q-Block message was dropped in the network: its recovery list is freed.
    pub fn on_dropped(&mut self, p: &QPacket) {
        if let QMsg::Recover { list } = p.msg {
            self.lists[list as usize].clear();
        }
        let c = self.local[p.client as usize];
        self.clients[c as usize].stats.packets_lost += 1;
    }
}

impl QClient {
    pub fn blocks(&self) -> u32 {
        self.body.blocks()
    }
}

/// The transfer time of a completed transfer: its client's start to completion.
pub(crate) fn transfer_time(q: &QClient) -> Option<Duration> {
    match (q.stats.completed, q.stats.end) {
        (true, Some(end)) => Some(end.saturating_since(q.start)),
        _ => None,
    }
}
