//! A CoAP-over-UDP client endpoint (docs/design.md §3): CON requests, at most `NSTART` outstanding
//! exchanges, retransmissions of the identical message, the algorithm library driving every
//! timer. Sans-IO: it is told events with `now` and pushes [`Action`]s for the testbed.

use std::collections::VecDeque;

use coaplab_cc::rng::Xoshiro256pp;
use coaplab_cc::{
    Algorithm, Answered, Duration, Exchange, Instant, Sample, SampleKind, TimeoutDecision,
};

use crate::coap::messages::MessageFactory;
pub use crate::coap::non_traffic::NonTraffic;
pub use crate::coap::probing::Probing;
use crate::packet::Packet;
use crate::workload::Plan;

/// What the client asks the testbed to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// Put this packet on the uplink now.
    Send(Packet),
    /// Fire `on_timer(exchange, generation)` at `at`.
    ArmTimer {
        at: Instant,
        exchange: u32,
        generation: u32,
    },
    /// An LwM2M uplink ended: its tag, block, and whether answered (`coap::lwm2m::device`).
    Ended(u8, Option<u32>, bool),
}

/// One exchange as the client (and the ground-truth metrics) see it. Two cache lines exactly
/// (128 B, aligned to 64): at 136 B, unaligned, a record straddled three lines, and with
/// thousands of clients each record read is a cache miss (docs/performance.md, "At scale").
#[derive(Clone, Debug)]
#[repr(align(64))]
pub struct ExchangeRecord {
    pub ex: Exchange,
    pub mid: u16,
    pub block: Option<u32>,
    /// Bumped whenever the exchange's timer is re-armed or cancelled (lazy timer deletion).
    pub generation: u32,
    pub done: bool,
    pub failed: bool,
    pub ended_at: Option<Instant>,
    /// Ground truth, bit `i` = copy `i` reached the server.
    pub reached_server: u64,
    /// Ground truth, bit `i` = the response to copy `i` reached the client.
    pub answer_delivered: u64,
    /// Bit `i` = the response to copy `i` was serialized on the downlink.
    pub answer_serialized: u64,
    /// IP size of this exchange's response, bytes (at most the MTU, ≤ 65 535 B).
    pub response_bytes: u16,
    /// Copies of this exchange's request (or responses to them) still in the network: at most
    /// the original and 63 retransmissions (`coap.max_retransmit` ≤ 63), as a response takes
    /// its request's place.
    pub in_flight: u16,
    /// A NON request (no timer, no retransmission; ends when sent).
    pub non: bool,
    /// The request's payload, bytes, when it is not the group's (reports, `crate::reporting`,
    /// at least 20 B); 0: the group's.
    pub payload: u16,
    /// An LwM2M device's uplink (`crate::coap::lwm2m::Uplink` as `u8`), 0 for the others.
    pub tag: u8,
}

impl ExchangeRecord {
    /// Retransmissions that were unnecessary (docs/design.md §6): copy `j > m` where `m` is the first
    /// copy that reached the server and whose response reached the client.
    pub fn unnecessary_retransmissions(&self) -> u32 {
        let both = self.reached_server & self.answer_delivered;
        if both == 0 {
            return 0;
        }
        let first = both.trailing_zeros();
        self.ex.retransmissions.saturating_sub(first)
    }

    /// Downlink bytes spent on responses to unnecessary copies.
    pub fn unnecessary_response_bytes(&self) -> u64 {
        let both = self.reached_server & self.answer_delivered;
        if both == 0 {
            return 0;
        }
        let first = both.trailing_zeros();
        let later = self.answer_serialized & u64::MAX.checked_shl(first + 1).unwrap_or(0);
        u64::from(later.count_ones()) * u64::from(self.response_bytes)
    }
}

/// Per-client counters (docs/design.md §6).
#[derive(Clone, Debug, Default)]
pub struct ClientStats {
    pub first_request: Option<Instant>,
    pub last_end: Option<Instant>,
    pub completed: u32,
    pub failed: u32,
    pub retransmissions: u32,
    pub timeouts: u32,
    pub duplicate_responses: u32,
    /// Periodic workloads: requests created (started or dropped).
    pub generated: u32,
    /// Reporting workloads: the IPv4 bytes of the requests created (each of its own size).
    pub generated_ip_bytes: u64,
    /// Sum over completed exchanges of start → response.
    pub exchange_time: coaplab_cc::Duration,
    /// Periodic workloads: requests dropped at the application because NSTART exchanges
    /// were outstanding when they were created.
    pub app_drops: u32,
    /// NON traffic: NON requests sent, and those whose NON response reached the client.
    pub non_sent: u32,
    pub non_delivered: u32,
    /// NON traffic: when the first and the last NON request was sent.
    pub non_first: Option<Instant>,
    pub non_last: Option<Instant>,
    /// NON traffic with CoCoA's NON rule: messages sent as CON exchanges.
    pub non_rule_con: u32,
    /// The CoCoA study's exchange metrics (docs/model.md "Metrics"): CON exchanges started,
    /// RTT samples and initial timers.
    pub samples: ExchangeSamples,
}

/// Raw sums behind the CoCoA study's per-exchange means (Betzler et al. 2016, Table II;
/// docs/model.md "Metrics"), in integer nanoseconds so that pooling over clients, groups and
/// replications is exact: sum and count, never a mean of means.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ExchangeSamples {
    /// CON exchanges started (each one's original transmission).
    pub started: u64,
    /// Sum over those exchanges of `T_0`, the timer armed with the original transmission
    /// (dithered, after the algorithm's clock-granularity floor).
    pub initial_timer_sum: Duration,
    /// Strong RTT samples: the algorithm's `strong` samples; for an algorithm that takes no
    /// sample (it answers `none`, e.g. `default`), the RTT of every exchange answered without
    /// a retransmission (original transmission → response), which is what a strong sample is.
    pub strong_count: u64,
    pub strong_sum: Duration,
    /// Weak RTT samples: the algorithm's `weak` samples (CoCoA's weak estimator: a response
    /// after 1 or 2 retransmissions, measured from the original transmission; B-RTO).
    pub weak_count: u64,
    pub weak_sum: Duration,
}

impl ExchangeSamples {
    /// An exchange started with timer `t0`.
    pub fn on_start(&mut self, t0: Duration) {
        self.started += 1;
        self.initial_timer_sum += t0;
    }

    /// A response completed an exchange after `k` retransmissions, `rtt` after its original
    /// transmission; the algorithm classified its sample as `sample`.
    pub fn on_response(&mut self, sample: Sample, k: u32, rtt: Duration) {
        match (sample.kind, sample.rtt) {
            (SampleKind::Strong, Some(r)) => {
                self.strong_count += 1;
                self.strong_sum += r;
            }
            (SampleKind::Weak, Some(r)) => {
                self.weak_count += 1;
                self.weak_sum += r;
            }
            (SampleKind::None, _) if k == 0 => {
                self.strong_count += 1;
                self.strong_sum += rtt;
            }
            _ => {} // discarded (Karn's rule, CoCoA after k ≥ 3) or no sample after retransmissions
        }
    }

    pub fn add(&mut self, o: &ExchangeSamples) {
        self.started += o.started;
        self.initial_timer_sum += o.initial_timer_sum;
        self.strong_count += o.strong_count;
        self.strong_sum += o.strong_sum;
        self.weak_count += o.weak_count;
        self.weak_sum += o.weak_sum;
    }
}

/// One timer/RTO trace point (recorded only with `trace = true`).
#[derive(Clone, Copy, Debug)]
pub struct TracePoint {
    pub at: Instant,
    pub event: &'static str,
    pub exchange: u32,
    pub timer_s: f64,
    pub rto_s: f64,
    pub sample_s: Option<f64>,
    pub sample_kind: &'static str,
}

/// What the client's retired exchange records add up to (docs/design.md, "Memory"): a record
/// is folded in here and freed once its exchange ended and none of its packets is left in the
/// network, so a client's memory does not grow with the length of the run.
#[derive(Clone, Debug, Default)]
pub struct Retired {
    /// Index = retransmissions a completed exchange needed.
    pub histogram: Vec<u64>,
    pub unnecessary: u32,
    pub unnecessary_response_bytes: u64,
    /// Completion times of completed exchanges (kept only when asked: burst clients).
    pub completions: Vec<Instant>,
}

impl Retired {
    fn add(&mut self, rec: &ExchangeRecord, keep_completions: bool) {
        if rec.non {
            return; // NON requests are counted in `ClientStats::non_*`
        }
        self.unnecessary += rec.unnecessary_retransmissions();
        self.unnecessary_response_bytes += rec.unnecessary_response_bytes();
        if rec.done && !rec.failed {
            let k = rec.ex.retransmissions as usize;
            if self.histogram.len() <= k {
                self.histogram.resize(k + 1, 0);
            }
            self.histogram[k] += 1;
            if keep_completions {
                self.completions.extend(rec.ended_at);
            }
        }
    }
}

/// The timer "exchange" index that wakes a NON sender (no exchange has it).
pub const NON_WAKE: u32 = u32::MAX;
/// The timer "exchange" index that wakes a client whose messages wait for PROBING_RATE.
pub const PROBE_WAKE: u32 = u32::MAX - 1;

/// A client's exchange records and the index of the first, in one cache line: every packet's
/// arrival (the server's ground truth, a response, a drop) and every timer reads both, and with
/// thousands of clients the client is not in the cache; apart (offsets 0x188 and 0x23c of a
/// 584-byte `Client`) they were two lines (docs/performance.md, "At scale").
#[repr(align(64))]
struct Records {
    base: u32,
    items: VecDeque<ExchangeRecord>,
}

/// Fields in declaration order (`repr(C)`), hot first: what a timer or a response reads on
/// every event (the records' line, the small scalars, the option tags checked on each event,
/// the algorithm, the counters), then what only starts, ends and reports touch
/// (docs/performance.md, "At scale").
#[repr(C)]
pub struct Client {
    /// Records of exchanges `base..base + len` (older ones are retired).
    records: Records,
    pub id: u32,
    outstanding: u32,
    nstart: u32,
    next_mid: u16,
    /// The payload of the request created last, when not the group's (a report's).
    next_payload: Option<u16>,
    /// Keep completion times of retired exchanges (burst clients, for the settling time).
    pub keep_completions: bool,
    pub trace: Option<Vec<TracePoint>>,
    /// PROBING_RATE (`coap.probing_rate_bps`); `None`: no limit. Boxed: a timer checks it on
    /// every event, and a pointer keeps that check on the scalars' line (96 B inline).
    pub probing: Option<Box<Probing>>,
    /// NON traffic instead of the CON workload plan (`coap.non_rate_per_s`); boxed likewise.
    pub non: Option<Box<NonTraffic>>,
    algorithm: Algorithm,
    pub stats: ClientStats,
    rng: Xoshiro256pp,
    pub(crate) plan: Plan,
    retired: Retired,
    /// `workload.kind = "reporting"`: the draws of the device's reports.
    pub reports: Option<Reports>,
}

/// A reporting device's random stream (`crate::reporting`) and its exception reports' rate.
#[derive(Clone, Debug)]
pub struct Reports {
    pub rng: Xoshiro256pp,
    /// Exception reports a day (0: none).
    pub exceptions_per_day: f64,
}

impl Client {
    pub fn new(
        id: u32,
        algorithm: Algorithm,
        rng: Xoshiro256pp,
        plan: Plan,
        nstart: u32,
        trace: bool,
    ) -> Self {
        Client {
            id,
            algorithm,
            rng,
            plan,
            nstart: nstart.max(1),
            // A fixed, client-specific first MID: deterministic and distinct across clients.
            next_mid: (id.wrapping_mul(7919) & 0xFFFF) as u16,
            outstanding: 0,
            records: Records {
                base: 0,
                items: VecDeque::new(),
            },
            keep_completions: false,
            stats: ClientStats::default(),
            trace: trace.then(Vec::new),
            retired: Retired::default(),
            non: None,
            probing: None,
            reports: None,
            next_payload: None,
        }
    }

    /// The record of exchange `index` (which must not be retired).
    pub fn record_mut(&mut self, index: u32) -> &mut ExchangeRecord {
        &mut self.records.items[(index - self.records.base) as usize]
    }

    /// A packet of exchange `index` left the network (dropped, or delivered to the client).
    pub fn on_packet_gone(&mut self, index: u32) {
        self.record_mut(index).in_flight -= 1;
        self.retire();
    }

    /// Retires the oldest records whose exchange ended and whose packets are all gone.
    fn retire(&mut self) {
        while let Some(front) = self.records.items.front() {
            if !(front.done && front.in_flight == 0) {
                break;
            }
            let rec = self.records.items.pop_front().expect("front exists");
            self.retired.add(&rec, self.keep_completions);
            self.records.base += 1;
        }
    }

    /// Exchanges started so far.
    pub fn started(&self) -> u32 {
        self.records.base + self.records.items.len() as u32
    }

    /// The totals of every exchange: retired ones plus those still recorded.
    pub fn totals(&self) -> Retired {
        let mut t = self.retired.clone();
        for rec in &self.records.items {
            t.add(rec, self.keep_completions);
        }
        t
    }

    pub fn finished(&self, now: Instant) -> bool {
        self.outstanding == 0 && self.plan.exhausted(now)
    }

    /// The workload plan (an observer's re-registration sets its `Plan::Observe` flag).
    pub fn plan_mut(&mut self) -> &mut Plan {
        &mut self.plan
    }

    /// A periodic workload's period and deadline (`None` for other workloads).
    pub fn period(&self) -> Option<(coaplab_cc::Duration, Instant)> {
        match self.plan {
            Plan::Periodic {
                period, deadline, ..
            } => Some((period, deadline)),
            _ => None,
        }
    }

    /// Periodic workloads: a request is created at `now`. It starts at once if fewer than
    /// NSTART exchanges are outstanding; otherwise it is dropped and counted. Returns whether
    /// it started. A reporting device's request carries a payload drawn from TR 45.820's
    /// distribution, or `exception`'s size for an exception report.
    pub fn tick(
        &mut self,
        now: Instant,
        exception: Option<u32>,
        msgs: &MessageFactory,
        out: &mut Vec<Action>,
    ) -> bool {
        let Plan::Periodic { pending, .. } = &mut self.plan else {
            return false;
        };
        if let Some(r) = self.reports.as_mut() {
            let bytes = exception.unwrap_or_else(|| crate::reporting::draw_payload(&mut r.rng));
            // A report is at most 200 B (`reporting::PAYLOAD_CUTOFF_BYTES`): it fits a u16.
            let payload = Some(bytes as u16);
            let p = msgs.request_carrying(self.id, 0, 0, 0, None, now, payload);
            self.stats.generated_ip_bytes += u64::from(p.ip_bytes);
            self.next_payload = payload;
        }
        self.stats.generated += 1;
        if self.outstanding >= self.nstart {
            self.stats.app_drops += 1;
            self.next_payload = None;
            return false;
        }
        *pending = true;
        self.poll_start(now, msgs, out);
        true
    }

    /// Starts as many exchanges as NSTART and the workload allow.
    pub fn poll_start(&mut self, now: Instant, msgs: &MessageFactory, out: &mut Vec<Action>) {
        if self.non.is_some() {
            return self.poll_non(now, msgs, out);
        }
        while self.outstanding < self.nstart {
            let idle = self.outstanding == 0;
            let held = self.probing.as_mut().and_then(|p| p.held.take());
            let Some(req) = held.or_else(|| self.plan.next_request(now, idle, &mut self.rng))
            else {
                break;
            };
            let bytes = msgs
                .request_carrying(self.id, 0, 0, 0, req.block, now, self.next_payload)
                .ip_bytes;
            if let Some(at) = self.probe_wait(now, bytes) {
                if let Some(p) = self.probing.as_mut() {
                    p.held = Some(req);
                }
                self.arm_probe_wake(at, out);
                break;
            }
            if req.new_batch {
                self.algorithm.reset();
            }
            self.next_payload = req.payload.or(self.next_payload);
            self.start_con(now, req.block, msgs, out);
            self.records.items.back_mut().expect("started").tag = req.tag;
        }
    }

    /// The timer of `exchange` fired; stale generations are ignored.
    pub fn on_timer(
        &mut self,
        now: Instant,
        exchange: u32,
        generation: u32,
        msgs: &MessageFactory,
        out: &mut Vec<Action>,
    ) {
        if exchange == PROBE_WAKE {
            if !self.probing.as_mut().is_some_and(|p| p.woken(generation)) {
                return; // stale
            }
            self.send_deferred(now, msgs, out);
            return self.poll_start(now, msgs, out);
        }
        if exchange == NON_WAKE {
            if self
                .non
                .as_ref()
                .is_some_and(|n| n.wake_generation == generation)
            {
                if let Some(n) = self.non.as_mut() {
                    n.wake_at = None;
                }
                self.poll_non(now, msgs, out);
            }
            return;
        }
        let Some(rec) = exchange
            .checked_sub(self.records.base)
            .and_then(|i| self.records.items.get_mut(i as usize))
        else {
            return; // retired: it ended long ago
        };
        if rec.done || rec.generation != generation {
            return;
        }
        self.stats.timeouts += 1;
        match self.algorithm.on_timeout(now, &mut rec.ex) {
            TimeoutDecision::Retransmit { timer } => {
                // Its timer has fired: a retransmission held back has none until it is sent.
                let (mid, block) = (rec.mid, rec.block);
                let payload = (rec.payload > 0).then_some(rec.payload);
                if let Some(p) = self.probing.as_mut() {
                    if !p.deferred.is_empty() {
                        p.deferred.push_back((exchange, timer));
                        return; // behind the retransmissions already waiting
                    }
                }
                let bytes = msgs
                    .request_carrying(self.id, exchange, 0, mid, block, now, payload)
                    .ip_bytes;
                match self.probe_wait(now, bytes) {
                    Some(at) => {
                        if let Some(p) = self.probing.as_mut() {
                            p.deferred.push_back((exchange, timer));
                        }
                        self.arm_probe_wake(at, out);
                    }
                    None => self.retransmit(now, exchange, timer, msgs, out),
                }
            }
            TimeoutDecision::Fail => {
                rec.done = true;
                rec.failed = true;
                rec.ended_at = Some(now);
                self.outstanding -= 1;
                self.stats.failed += 1;
                self.stats.last_end = Some(now);
                if rec.tag != 0 {
                    out.push(Action::Ended(rec.tag, rec.block, false));
                }
                self.record(now, "fail", exchange, None, SampleKind::None);
                self.retire();
                self.poll_start(now, msgs, out);
            }
        }
    }

    /// A response arrived. Responses for completed exchanges are duplicates and ignored.
    pub fn on_response(
        &mut self,
        now: Instant,
        pkt: &Packet,
        msgs: &MessageFactory,
        out: &mut Vec<Action>,
    ) {
        if let Some(p) = self.probing.as_mut() {
            p.limit.answered(); // the server responds: held-back messages may go
        }
        self.send_deferred(now, msgs, out);
        let rec = &mut self.records.items[(pkt.exchange - self.records.base) as usize];
        rec.in_flight -= 1;
        if pkt.ordinal < 64 {
            rec.answer_delivered |= 1 << pkt.ordinal;
        }
        if rec.non {
            self.stats.non_delivered += 1;
            self.retire();
            return;
        }
        if rec.done || pkt.mid != rec.mid {
            self.stats.duplicate_responses += 1;
            self.retire();
            return;
        }
        let answered = Answered {
            ordinal: pkt.ordinal,
            sent_at: pkt.request_sent,
        };
        let sample = self.algorithm.on_response(now, &rec.ex, Some(answered));
        rec.done = true;
        rec.generation += 1; // cancels the pending timer
        rec.ended_at = Some(now);
        self.outstanding -= 1;
        if rec.tag != 0 {
            out.push(Action::Ended(rec.tag, rec.block, true));
        }
        self.stats.completed += 1;
        self.stats.exchange_time += now - rec.ex.started;
        self.stats
            .samples
            .on_response(sample, rec.ex.retransmissions, now - rec.ex.started);
        self.stats.last_end = Some(now);
        self.record(
            now,
            "response",
            pkt.exchange,
            sample.rtt.map(|d| d.secs_f64()),
            sample.kind,
        );
        self.retire();
        self.poll_start(now, msgs, out);
    }

    /// NON traffic: produces the messages due by `now`, sends what the rule allows, and arms
    /// the next wake-up.
    fn poll_non(&mut self, now: Instant, msgs: &MessageFactory, out: &mut Vec<Action>) {
        let Some(mut n) = self.non.take() else {
            return;
        };
        let mut next_at = n.next_at.unwrap_or(now);
        while n.produced < n.total && next_at <= now {
            n.produced += 1;
            n.backlog += 1;
            next_at += n.period;
        }
        n.next_at = Some(next_at);
        let mut rule_wake = None;
        while n.backlog > 0 {
            let bytes = msgs.request(self.id, 0, 0, 0, None, now).ip_bytes;
            if let Some(at) = self.probe_wait(now, bytes) {
                rule_wake = Some(rule_wake.map_or(at, |w: Instant| w.min(at)));
                break;
            }
            if n.next_is_con() {
                if self.outstanding >= self.nstart {
                    break; // woken again when the exchange ends (poll_start)
                }
                self.start_con(now, None, msgs, out);
                n.sent += 1;
                n.backlog -= 1;
                self.stats.non_rule_con += 1;
                continue;
            }
            if n.rule {
                if let Some(last) = n.last_non {
                    // At most one NON per RTO (draft-ietf-core-cocoa-03 §5).
                    let allowed = last + self.algorithm.base_rto();
                    if now < allowed {
                        rule_wake = Some(allowed);
                        break;
                    }
                }
            }
            self.send_non(now, msgs, out);
            n.last_non = Some(now);
            n.sent += 1;
            n.backlog -= 1;
        }
        let production = (n.produced < n.total).then_some(next_at);
        let wake = match (production, rule_wake) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        if let Some(at) = wake {
            if n.wake_at.is_none_or(|w| at < w) {
                n.wake_generation += 1;
                n.wake_at = Some(at);
                out.push(Action::ArmTimer {
                    at,
                    exchange: NON_WAKE,
                    generation: n.wake_generation,
                });
            }
        }
        self.non = Some(n);
    }

    /// Sends one NON request (RFC 7252 §4.3): no timer; the record ends at once and retires
    /// when its packets have left the network.
    fn send_non(&mut self, now: Instant, msgs: &MessageFactory, out: &mut Vec<Action>) {
        let index = self.records.base + self.records.items.len() as u32;
        let mid = self.next_mid;
        self.next_mid = self.next_mid.wrapping_add(1);
        self.records.items.push_back(ExchangeRecord {
            ex: Exchange::new(now, Duration::ZERO),
            mid,
            block: None,
            generation: 0,
            done: true,
            failed: false,
            ended_at: Some(now),
            reached_server: 0,
            answer_delivered: 0,
            answer_serialized: 0,
            response_bytes: 0,
            in_flight: 1,
            non: true,
            payload: 0,
            tag: 0,
        });
        self.stats.non_sent += 1;
        self.stats.non_first.get_or_insert(now);
        self.stats.non_last = Some(now);
        let pkt = msgs.request(self.id, index, 0, mid, None, now);
        self.probe_sent(now, pkt.ip_bytes);
        out.push(Action::Send(pkt));
    }

    /// Starts one CON exchange (for Block2 block `block`): the workload plan's (`poll_start`)
    /// and the NON rule's CONs.
    fn start_con(
        &mut self,
        now: Instant,
        block: Option<u32>,
        msgs: &MessageFactory,
        out: &mut Vec<Action>,
    ) {
        let ex = self
            .algorithm
            .on_exchange_start(now, self.outstanding, &mut self.rng);
        let index = self.records.base + self.records.items.len() as u32;
        let mid = self.next_mid;
        self.next_mid = self.next_mid.wrapping_add(1);
        self.records.items.push_back(ExchangeRecord {
            ex,
            mid,
            block,
            generation: 0,
            done: false,
            failed: false,
            ended_at: None,
            reached_server: 0,
            answer_delivered: 0,
            answer_serialized: 0,
            response_bytes: 0,
            in_flight: 1,
            non: false,
            payload: self.next_payload.unwrap_or(0),
            tag: 0,
        });
        self.outstanding += 1;
        self.stats.samples.on_start(ex.initial_timer);
        self.stats.first_request.get_or_insert(now);
        self.record(now, "start", index, None, SampleKind::None);
        let payload = self.next_payload.take();
        let pkt = msgs.request_carrying(self.id, index, 0, mid, block, now, payload);
        self.probe_sent(now, pkt.ip_bytes);
        out.push(Action::Send(pkt));
        out.push(Action::ArmTimer {
            at: now + ex.timer,
            exchange: index,
            generation: 0,
        });
    }

    /// Sends retransmission `ordinal` of `exchange` and arms its `timer`.
    fn retransmit(
        &mut self,
        now: Instant,
        exchange: u32,
        timer: Duration,
        msgs: &MessageFactory,
        out: &mut Vec<Action>,
    ) {
        let rec = self.record_mut(exchange);
        rec.generation += 1;
        rec.in_flight += 1;
        let (ordinal, mid, block, generation) =
            (rec.ex.retransmissions, rec.mid, rec.block, rec.generation);
        let payload = (rec.payload > 0).then_some(rec.payload);
        self.stats.retransmissions += 1;
        let pkt = msgs.request_carrying(self.id, exchange, ordinal, mid, block, now, payload);
        self.probe_sent(now, pkt.ip_bytes);
        out.push(Action::Send(pkt));
        out.push(Action::ArmTimer {
            at: now + timer,
            exchange,
            generation,
        });
        self.record(now, "retransmit", exchange, None, SampleKind::None);
    }

    /// Sends the held-back retransmissions PROBING_RATE allows by `now`, in order; arms a
    /// wake-up for the next one.
    fn send_deferred(&mut self, now: Instant, msgs: &MessageFactory, out: &mut Vec<Action>) {
        loop {
            let Some(&(exchange, timer)) = self.probing.as_ref().and_then(|p| p.deferred.front())
            else {
                return;
            };
            let live = exchange
                .checked_sub(self.records.base)
                .and_then(|i| self.records.items.get(i as usize))
                .filter(|r| !r.done);
            let Some(rec) = live else {
                // Ended meanwhile (a response to an earlier copy): nothing to send.
                self.probing.as_mut().map(|p| p.deferred.pop_front());
                continue;
            };
            let payload = (rec.payload > 0).then_some(rec.payload);
            let bytes = msgs
                .request_carrying(self.id, exchange, 0, rec.mid, rec.block, now, payload)
                .ip_bytes;
            if let Some(at) = self.probe_wait(now, bytes) {
                return self.arm_probe_wake(at, out);
            }
            self.probing.as_mut().map(|p| p.deferred.pop_front());
            self.retransmit(now, exchange, timer, msgs, out);
        }
    }

    /// When a message of `bytes` may leave under PROBING_RATE, if not now.
    fn probe_wait(&self, now: Instant, bytes: u32) -> Option<Instant> {
        self.probing.as_ref()?.limit.wait(now, bytes)
    }

    fn probe_sent(&mut self, now: Instant, bytes: u32) {
        if let Some(p) = self.probing.as_mut() {
            p.limit.sent(now, bytes);
        }
    }

    /// Wakes the client at `at` for what PROBING_RATE holds back (unless an earlier wake-up
    /// is pending).
    fn arm_probe_wake(&mut self, at: Instant, out: &mut Vec<Action>) {
        if let Some(generation) = self.probing.as_mut().and_then(|p| p.wake(at)) {
            out.push(Action::ArmTimer {
                at,
                exchange: PROBE_WAKE,
                generation,
            });
        }
    }

    fn record(
        &mut self,
        now: Instant,
        event: &'static str,
        exchange: u32,
        sample_s: Option<f64>,
        kind: SampleKind,
    ) {
        if let Some(trace) = self.trace.as_mut() {
            let rec = &self.records.items[(exchange - self.records.base) as usize];
            trace.push(TracePoint {
                at: now,
                event,
                exchange,
                timer_s: rec.ex.timer.secs_f64(),
                rto_s: self.algorithm.base_rto().secs_f64(),
                sample_s,
                sample_kind: kind.as_str(),
            });
        }
    }
}

#[cfg(test)]
mod layout {
    /// The record is two cache lines (its documentation says why): 64 B of `Exchange`, 63 B of
    /// fields (2 + 8 + 4 + 1 + 1 + 16 + 3 × 8 + 2 + 2 + 1 + 2), padded to the 64-byte alignment.
    #[test]
    fn exchange_record_is_two_cache_lines() {
        assert_eq!(std::mem::size_of::<super::ExchangeRecord>(), 128);
        assert_eq!(std::mem::align_of::<super::ExchangeRecord>(), 64);
    }

    /// The `Client`'s hot fields come first, in one run of lines before the algorithm, the
    /// counters and the cold parts (its documentation says why; `repr(C)` keeps the order): the
    /// records' line at offset 0, then the scalars and the option tags a timer checks.
    #[test]
    fn client_hot_fields_first() {
        use std::mem::offset_of;
        type C = super::Client;
        assert_eq!(offset_of!(C, records), 0);
        // The records' line is one 64-byte line: the index (4 B) and the `VecDeque` (32 B).
        assert_eq!(offset_of!(C, id), 64);
        let hot = [
            offset_of!(C, outstanding),
            offset_of!(C, nstart),
            offset_of!(C, next_mid),
            offset_of!(C, probing),
            offset_of!(C, non),
        ];
        for h in hot {
            assert!(h < offset_of!(C, algorithm), "{h} before the algorithm");
        }
        // The scalars, the trace's `Vec` and the two boxed options fill the second line: 64 +
        // id 4 + outstanding 4 + nstart 4 + next_mid 2 + next_payload 4 + keep_completions 1
        // (= 83, padded to 88) + trace 24 + probing 8 + non 8 = 128, where the algorithm starts.
        assert_eq!(offset_of!(C, algorithm), 128);
        assert!(offset_of!(C, algorithm) < offset_of!(C, stats));
        assert!(offset_of!(C, stats) < offset_of!(C, retired));
        assert!(offset_of!(C, retired) < offset_of!(C, reports));
    }
}

#[cfg(test)]
mod probing_tests {
    use super::*;
    use coaplab_cc::registry::BUILTIN;
    use coaplab_cc::Config;

    /// `default` with ACK_RANDOM_FACTOR 1 (no dithering): T_0 = ACK_TIMEOUT = 2 s, doubling.
    fn client(requests: u32, nstart: u32, rate: f64) -> (Client, MessageFactory) {
        let entry = BUILTIN.iter().find(|e| e.name == "default").unwrap();
        let config = Config {
            ack_random_factor_permille: 1000,
            nstart,
            ..Config::default()
        };
        let mut c = Client::new(
            0,
            entry.algorithm(&config),
            Xoshiro256pp::seed_from_u64(1),
            Plan::Count {
                remaining: requests,
            },
            nstart,
            false,
        );
        c.probing = Some(Box::new(Probing::new(rate)));
        let msgs = MessageFactory {
            response_bytes: 0,
            block_szx: 6,
            resource_bytes: 0,
            rexmit_cnt: None,
            request_payload: 0,
            protection: Default::default(),
            observe: None,
        };
        (c, msgs)
    }

    fn s(secs: u64) -> Instant {
        Instant::ZERO + Duration::from_secs(secs)
    }

    /// Fires every armed timer in time order until none is left or `until`; returns the send
    /// times (s) and the last actions' timers.
    fn drive(c: &mut Client, msgs: &MessageFactory, until: Instant) -> Vec<f64> {
        let mut out = Vec::new();
        c.poll_start(Instant::ZERO, msgs, &mut out);
        let mut sends = Vec::new();
        let mut timers: Vec<(Instant, u32, u32)> = Vec::new();
        loop {
            for a in out.drain(..) {
                match a {
                    Action::Send(p) => sends.push(p.request_sent.secs_f64()),
                    Action::ArmTimer {
                        at,
                        exchange,
                        generation,
                    } => timers.push((at, exchange, generation)),
                    Action::Ended(..) => {}
                }
            }
            timers.sort();
            if timers.is_empty() || timers[0].0 > until {
                return sends;
            }
            let (at, exchange, generation) = timers.remove(0);
            c.on_timer(at, exchange, generation, msgs, &mut out);
        }
    }

    /// A 40-byte request (IPv4 20 + UDP 8 + CoAP 12, docs/design.md §2) to a server that never
    /// answers, at 1 byte/s: the probe at 0 s; the first retransmission is due at 2 s but the
    /// 40 bytes after the probe may leave only at 40 / 1 = 40 s (its timer then 4 s, due at 44 s);
    /// the second at (40 + 40) / 1 = 80 s (timer 8 s, due 88 s); the third at 120 s (timer
    /// 16 s, due 136 s); the fourth at 160 s. Without the limit: 0, 2, 6, 14, 30 s.
    #[test]
    fn retransmissions_to_a_silent_server_wait_for_the_probing_rate() {
        let (mut c, msgs) = client(1, 1, 1.0);
        assert_eq!(msgs.request(0, 0, 0, 0, None, s(0)).ip_bytes, 40);
        let sends = drive(&mut c, &msgs, s(1000));
        assert_eq!(sends, vec![0.0, 40.0, 80.0, 120.0, 160.0]);
        let (mut free, msgs) = client(1, 1, 1.0);
        free.probing = None;
        assert_eq!(
            drive(&mut free, &msgs, s(1000)),
            vec![0.0, 2.0, 6.0, 14.0, 30.0]
        );
    }

    /// NSTART 2 at 10 bytes/s: the first request is the probe (0 s); the second waits for
    /// 40 / 10 = 4 s. A response to the first at 1 s makes the server responsive: the held
    /// request is a new probe and leaves at once, at 1 s.
    #[test]
    fn a_second_parallel_request_waits_until_the_server_answers() {
        let (mut c, msgs) = client(2, 2, 10.0);
        let mut out = Vec::new();
        c.poll_start(Instant::ZERO, &msgs, &mut out);
        let sent: Vec<Packet> = out
            .iter()
            .filter_map(|a| match a {
                Action::Send(p) => Some(*p),
                _ => None,
            })
            .collect();
        assert_eq!(sent.len(), 1);
        assert!(out.contains(&Action::ArmTimer {
            at: s(4),
            exchange: PROBE_WAKE,
            generation: 1
        }));
        let mut response = msgs.response(&sent[0]);
        response.exchange = sent[0].exchange;
        out.clear();
        c.on_response(s(1), &response, &msgs, &mut out);
        let second: Vec<f64> = out
            .iter()
            .filter_map(|a| match a {
                Action::Send(p) => Some(p.request_sent.secs_f64()),
                _ => None,
            })
            .collect();
        assert_eq!(second, vec![1.0]);
    }
}
