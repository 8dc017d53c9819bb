//! The measurements of a run (docs/model.md "Metrics"), assembled once for every transport:
//! per client, per client population, and for the whole run.

use super::tcp_app::TcpClient;
use super::World;
use crate::coap::client::{Client, ClientStats, ExchangeSamples};
use crate::config::WorkloadKind;
use crate::metrics::{
    capped_settling, settling_time, ClientResult, ClientTrace, ExchangeMetrics, GroupResult,
    RunResult, SeqTrace, ServerStats, TcpCounters,
};
use crate::tcp::ConnStats;

/// The measured period: from the first request of any client to the end of the last
/// exchange of any client.
struct MeasuredPeriod {
    first: f64,
    last: f64,
}

impl MeasuredPeriod {
    fn new() -> Self {
        MeasuredPeriod {
            first: f64::INFINITY,
            last: 0.0,
        }
    }

    /// A client's FCT (first request → last end), extending the period with it.
    fn client_fct(&mut self, s: &ClientStats) -> Option<f64> {
        let (a, b) = (s.first_request?, s.last_end?);
        self.first = self.first.min(a.secs_f64());
        self.last = self.last.max(b.secs_f64());
        Some((b - a).secs_f64())
    }

    /// (first request, last end), s; None if no client completed anything.
    fn bounds(&self) -> Option<(f64, f64)> {
        (self.last > self.first).then_some((self.first, self.last))
    }

    /// Its length, s (0 if no client completed anything).
    fn length(&self) -> f64 {
        if self.last > self.first {
            self.last - self.first
        } else {
            0.0
        }
    }
}

/// What one group adds up to before the measured period is known.
#[derive(Default)]
struct GroupSums {
    histogram: Vec<u64>,
    completed: u64,
    burst_done: Vec<f64>,
    burst_total: usize,
    tcp: Option<TcpCounters>,
    /// UDP groups: the clients' exchange samples and CON retransmissions.
    samples: ExchangeSamples,
    retransmissions: u64,
}

fn add_histogram(into: &mut Vec<u64>, h: &[u64]) {
    if into.len() < h.len() {
        into.resize(h.len(), 0);
    }
    for (a, b) in into.iter_mut().zip(h) {
        *a += b;
    }
}

impl World {
    /// Collects the run's measurements.
    pub fn result(&self) -> RunResult {
        let mut measured = MeasuredPeriod::new();
        let mut clients = Vec::new();
        let mut unnecessary_bytes = 0u64;
        let mut sums: Vec<GroupSums> = Vec::with_capacity(self.groups.len());
        let mut tcp_group = 0usize;
        for g in &self.groups {
            let mut s = GroupSums::default();
            let ids = g.first..g.first + g.count;
            if g.qblock {
                for id in ids {
                    let row = self.qblock_client(id, &mut measured);
                    s.completed += u64::from(row.exchanges_completed);
                    clients.push(row);
                }
            } else if g.tcp {
                let mut totals = TcpCounters::default();
                for id in ids {
                    let c = self.tcp.client_by_id(id).expect("a TCP client");
                    let (row, t) = self.tcp_client(c, &mut measured);
                    s.completed += u64::from(row.exchanges_completed);
                    totals.add(&t);
                    clients.push(row);
                }
                let w = &g.cfg.workload;
                let burst = self.tcp.burst_done[tcp_group].clone();
                s.burst_total = if w.kind == WorkloadKind::Burst {
                    w.burst_clients.unwrap_or(0) as usize * w.burst_exchanges.unwrap_or(1) as usize
                } else {
                    0
                };
                s.burst_done = burst;
                s.tcp = Some(totals);
                tcp_group += 1;
            } else {
                for id in ids {
                    let local = self.udp_local(id);
                    let c = &self.udp.clients[local];
                    let totals = c.totals();
                    unnecessary_bytes += totals.unnecessary_response_bytes;
                    add_histogram(&mut s.histogram, &totals.histogram);
                    if self.udp.in_burst[local] {
                        s.burst_total += c.started() as usize;
                        s.burst_done
                            .extend(totals.completions.iter().map(|t| t.secs_f64()));
                    }
                    let row = udp_client(c, totals.unnecessary, &mut measured);
                    s.samples.add(&c.stats.samples);
                    s.retransmissions += u64::from(c.stats.retransmissions);
                    s.completed += u64::from(row.exchanges_completed);
                    clients.push(row);
                }
            }
            if !self.cfg.group.is_empty() {
                for row in &mut clients[g.first as usize..] {
                    row.group = Some(g.cfg.name.clone());
                }
            }
            sums.push(s);
        }
        unnecessary_bytes += self.tcp.unnecessary_down_bytes;
        let period = measured.length();
        let per = |x: f64| if period > 0.0 { x / period } else { 0.0 };
        // Burst groups: (settling time, settled), capped at `workload.settling_cap_s`.
        let settle = |g: &super::Group, s: &GroupSums| {
            (g.cfg.workload.kind == WorkloadKind::Burst).then(|| {
                let mut done = s.burst_done.clone();
                done.sort_by(f64::total_cmp);
                let raw = settling_time(
                    g.cfg.workload.burst_at_s.unwrap_or(0.0),
                    &done,
                    s.burst_total,
                );
                capped_settling(raw, g.cfg.workload.settling_cap_s)
            })
        };
        let exchange = |udp: bool, s: &GroupSums| {
            udp.then(|| ExchangeMetrics::new(&s.samples, s.retransmissions))
        };

        // The whole run.
        let mut hist = Vec::new();
        let mut completed_total = 0;
        let mut tcp_totals: Option<TcpCounters> = None;
        let mut all = GroupSums::default();
        let mut burst_at = f64::INFINITY;
        // The smallest cap of the burst groups caps the run's settling time.
        let mut cap: Option<f64> = None;
        for (g, s) in self.groups.iter().zip(&sums) {
            all.samples.add(&s.samples);
            all.retransmissions += s.retransmissions;
            add_histogram(&mut hist, &s.histogram);
            completed_total += s.completed;
            if let Some(t) = &s.tcp {
                tcp_totals.get_or_insert_with(TcpCounters::default).add(t);
            }
            if g.cfg.workload.kind == WorkloadKind::Burst {
                burst_at = burst_at.min(g.cfg.workload.burst_at_s.unwrap_or(0.0));
                if let Some(c) = g.cfg.workload.settling_cap_s {
                    cap = Some(cap.map_or(c, |m: f64| m.min(c)));
                }
                all.burst_done.extend_from_slice(&s.burst_done);
                all.burst_total += s.burst_total;
            }
        }
        // Every burst exchange of every group, from the earliest burst (one group: its own).
        let settling = burst_at.is_finite().then(|| {
            all.burst_done.sort_by(f64::total_cmp);
            capped_settling(
                settling_time(burst_at, &all.burst_done, all.burst_total),
                cap,
            )
        });
        let groups = if self.cfg.group.is_empty() {
            Vec::new()
        } else {
            self.groups
                .iter()
                .zip(&sums)
                .map(|(g, s)| GroupResult {
                    name: g.cfg.name.clone(),
                    transport: if g.tcp { "tcp" } else { "udp" },
                    first_client: g.first,
                    clients: g.count,
                    retransmission_histogram: s.histogram.clone(),
                    throughput_exchanges_per_s: per(s.completed as f64),
                    settling_time_s: settle(g, s).and_then(|x| x.0),
                    settled: settle(g, s).map(|x| x.1),
                    exchange: exchange(!g.tcp && !g.qblock, s),
                    tcp: s.tcp,
                    observe: self.observe_result(g.first..g.first + g.count),
                    lwm2m: (!g.tcp)
                        .then(|| {
                            let ids = g.first..g.first + g.count;
                            self.udp.lwm2m_counters(ids.map(|id| self.udp_local(id)))
                        })
                        .flatten(),
                })
                .collect()
        };
        let any_udp = self.groups.iter().any(|g| !g.tcp && !g.qblock);
        let any_tcp = self.groups.iter().any(|g| g.tcp);
        let trace = self.sh.trace;
        let traces = (trace && any_udp).then(|| {
            self.udp
                .clients
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
        let seq_traces = (trace && any_tcp).then(|| {
            self.tcp
                .flows
                .iter()
                .enumerate()
                .map(|(i, f)| SeqTrace {
                    client: self.tcp.clients[f.client as usize].id,
                    connection: i as u32,
                    points: f
                        .trace
                        .as_ref()
                        .map(|t| t.points.clone())
                        .unwrap_or_default(),
                    cc: f.trace.as_ref().map(|t| t.cc.clone()).unwrap_or_default(),
                })
                .collect()
        });
        RunResult {
            replication: self.replication,
            seed: self.cfg.seed,
            events: self.sh.queue.events_processed(),
            sim_time_s: self.sh.queue.now().secs_f64(),
            measured_period_s: period,
            throughput_exchanges_per_s: per(completed_total as f64),
            settling_time_s: settling.and_then(|x| x.0),
            settled: settling.map(|x| x.1),
            retransmission_histogram: hist,
            exchange: exchange(any_udp, &all),
            packets: self.sh.net.packet_stats(
                measured.bounds(),
                crate::net::topology::downlink_kbps(&self.cfg),
                unnecessary_bytes,
            ),
            server: ServerStats {
                requests: self.udp.server.requests + self.tcp.requests,
                duplicates: self.udp.server.duplicates,
            },
            clients,
            traces,
            tcp: tcp_totals,
            seq_traces,
            groups,
            mesh: self.mesh_result(period),
            cell: self
                .sh
                .net
                .cell()
                .map(|c| crate::metrics::CellResult::of(c.counters(), c.levels())),
            cell_timeline: trace
                .then(|| {
                    self.sh
                        .net
                        .cell()
                        .and_then(|c| c.timeline(self.sh.queue.now()))
                })
                .flatten(),
            energy: self.energy_result(completed_total),
            non: self.non_result(),
            qblock: self.qblock_result(),
            security: self.security_result(completed_total),
            lwm2m: self.udp.lwm2m_counters(0..self.udp.clients.len()),
            timeseries: trace
                .then(|| self.sh.net.time_series())
                .filter(|s| !s.is_empty()),
            observe: self.observe_result(
                0..self
                    .groups
                    .iter()
                    .map(|g| g.first + g.count)
                    .max()
                    .unwrap_or(0),
            ),
        }
    }

    /// NON traffic's counters over every UDP client (`None` when no client sent a NON).
    fn non_result(&self) -> Option<crate::metrics::NonResult> {
        let mut r = crate::metrics::NonResult::default();
        let mut rates = Vec::new();
        for c in &self.udp.clients {
            let s = &c.stats;
            if c.non.is_none() {
                continue;
            }
            r.sent += u64::from(s.non_sent);
            r.delivered += u64::from(s.non_delivered);
            r.rule_con += u64::from(s.non_rule_con);
            if let (Some(a), Some(b)) = (s.non_first, s.non_last) {
                let span = (b - a).secs_f64();
                if s.non_sent >= 2 && span > 0.0 {
                    rates.push(f64::from(s.non_sent - 1) / span);
                }
            }
        }
        if r.sent == 0 && r.rule_con == 0 {
            return None;
        }
        r.delivery_ratio = if r.sent > 0 {
            r.delivered as f64 / r.sent as f64
        } else {
            0.0
        };
        r.rate_per_s = if rates.is_empty() {
            0.0
        } else {
            rates.iter().sum::<f64>() / rates.len() as f64
        };
        Some(r)
    }

    /// `coap.security`'s counters over every secured UDP client (`None` when no group is
    /// secured, so those results are unchanged).
    fn security_result(&self, completed: u64) -> Option<crate::metrics::SecurityResult> {
        let (groups, sessions, waits) = self.udp.sec.parts();
        let first = groups
            .iter()
            .find(|g| g.mode != crate::config::Security::None)?;
        let sec = &self.udp.sec;
        let mut r = crate::metrics::SecurityResult {
            mode: first.mode.as_str(),
            suite: first.suite.map(|s| s.as_str()),
            connection_id: first.cid,
            handshake_bytes: sec.server_bytes,
            requests_lost: sec.requests_lost,
            record_bytes: sec.record_bytes,
            requests_waited: sec.requests_waited,
            mean_handshake_wait_s: if sec.requests_waited > 0 {
                sec.wait_sum_s / sec.requests_waited as f64
            } else {
                0.0
            },
            ..Default::default()
        };
        for s in sessions {
            r.handshakes += u64::from(s.stats.handshakes);
            r.resumptions += u64::from(s.stats.resumptions);
            r.flights_retransmitted += u64::from(s.stats.flights_retransmitted);
            r.failed_handshakes += u64::from(s.stats.failed);
            r.handshake_bytes += s.stats.bytes_sent;
        }
        if completed > 0 {
            r.bytes_per_exchange = (r.handshake_bytes + r.record_bytes) as f64 / completed as f64;
        }
        if !waits.is_empty() {
            r.time_to_first_request_s = waits.iter().sum::<f64>() / waits.len() as f64;
        }
        Some(r)
    }

    /// A Q-Block client's row: its transfer as its FCT (start → completion) and its blocks
    /// as exchanges (delivered; on failure the rest failed).
    fn qblock_client(&self, id: u32, measured: &mut MeasuredPeriod) -> ClientResult {
        let q = self.qblock.client(id);
        let st = &q.stats;
        let stats = ClientStats {
            first_request: st.first_sent,
            last_end: st.end,
            completed: st.blocks_delivered,
            failed: if st.failed {
                q.blocks() - st.blocks_delivered
            } else {
                0
            },
            ..ClientStats::default()
        };
        let mut row = client_row(id, &stats, measured);
        row.fct_s = super::qblock_app::transfer_time(q).map(|d| d.secs_f64());
        row
    }

    /// The Q-Block transfers' counters (`None` without Q-Block groups).
    fn qblock_result(&self) -> Option<crate::metrics::QBlockResult> {
        let groups: Vec<_> = self.groups.iter().filter(|g| g.qblock).collect();
        let first = groups.first()?;
        let kind = first.cfg.workload.kind;
        let mut r = crate::metrics::QBlockResult {
            direction: match kind {
                _ if groups.iter().any(|g| g.cfg.workload.kind != kind) => "mixed",
                WorkloadKind::Upload => "upload",
                _ => "firmware",
            },
            ..Default::default()
        };
        for g in groups {
            for id in g.first..g.first + g.count {
                let q = self.qblock.client(id);
                let s = &q.stats;
                r.transfers_completed += u64::from(s.completed);
                r.transfers_failed += u64::from(s.failed);
                r.transfer_time_s
                    .extend(super::qblock_app::transfer_time(q).map(|d| d.secs_f64()));
                r.blocks_sent += s.blocks_sent;
                r.blocks_recovered += s.blocks_recovered;
                r.recovery_requests += s.recovery_requests;
                r.continues += s.continues;
                r.bytes_up += s.bytes_up;
                r.bytes_down += s.bytes_down;
            }
        }
        Some(r)
    }

    fn udp_local(&self, id: u32) -> usize {
        self.udp.local_index(id).expect("a UDP client") as usize
    }

    /// A TCP client's row and its connections' counters.
    fn tcp_client(
        &self,
        c: &TcpClient,
        measured: &mut MeasuredPeriod,
    ) -> (ClientResult, TcpCounters) {
        let mut t = TcpCounters {
            connections: c.flows.len() as u64,
            ..TcpCounters::default()
        };
        for &fl in &c.flows {
            let f = &self.tcp.flows[fl as usize];
            t.unnecessary_retransmissions += f.unnecessary;
            t.csm_retransmissions += f.csm_retransmissions;
            for conn in f.ends.iter().flatten() {
                t.add(&counters(&conn.stats));
            }
        }
        let mut row = client_row(c.id, &c.stats, measured);
        row.retransmissions = t.segments_retransmitted as u32;
        row.unnecessary_retransmissions = t.unnecessary_retransmissions as u32;
        row.timeouts = t.rto_expirations as u32;
        row.tcp = Some(t);
        (row, t)
    }
}

fn udp_client(c: &Client, unnecessary: u32, measured: &mut MeasuredPeriod) -> ClientResult {
    let mut row = client_row(c.id, &c.stats, measured);
    row.retransmissions = c.stats.retransmissions;
    row.unnecessary_retransmissions = unnecessary;
    row.timeouts = c.stats.timeouts;
    row.duplicate_responses = c.stats.duplicate_responses;
    let s = &c.stats;
    row.mean_exchange_s =
        (s.completed > 0).then(|| s.exchange_time.secs_f64() / f64::from(s.completed));
    row
}

/// A client's row with what every transport measures alike (FCT, completions); the
/// transport fills in its retransmission counters.
fn client_row(id: u32, s: &ClientStats, measured: &mut MeasuredPeriod) -> ClientResult {
    ClientResult {
        client: id,
        fct_s: measured.client_fct(s),
        first_request_s: s.first_request.map(|t| t.secs_f64()),
        last_end_s: s.last_end.map(|t| t.secs_f64()),
        exchanges_completed: s.completed,
        exchanges_failed: s.failed,
        retransmissions: 0,
        unnecessary_retransmissions: 0,
        timeouts: 0,
        duplicate_responses: 0,
        mean_exchange_s: None,
        tcp: None,
        group: None,
    }
}

/// One connection end's counters as run counters (the per-end ones that need ground truth
/// from the other end — unnecessary and CSM retransmissions — are kept per flow).
fn counters(s: &ConnStats) -> TcpCounters {
    TcpCounters {
        segments_sent: s.segments_sent,
        data_segments_sent: s.data_segments_sent,
        segments_retransmitted: s.retransmissions,
        syn_retransmissions: s.syn_retransmissions,
        synack_retransmissions: s.synack_retransmissions,
        rto_expirations: s.rto_expirations,
        fast_retransmits: s.fast_retransmits,
        partial_ack_retransmissions: s.partial_ack_retransmissions,
        duplicate_acks: s.duplicate_acks_sent,
        ..TcpCounters::default()
    }
}
