//! The measurements of a TCP run (SPEC §6).

use super::TcpTestbed;
use crate::config::WorkloadKind;
use crate::metrics::{settling_time, ClientResult, RunResult, SeqTrace, ServerStats, TcpCounters};
use crate::tcp::ConnStats;
use crate::testbed::MeasuredPeriod;

impl TcpTestbed {
    /// Collects the run's measurements (SPEC §6).
    pub fn result(&self) -> RunResult {
        let mut measured = MeasuredPeriod::new();
        let mut completed_total = 0u64;
        let mut totals = TcpCounters::default();
        let mut clients = Vec::with_capacity(self.clients.len());
        for c in &self.clients {
            let mut t = TcpCounters {
                connections: c.flows.len() as u64,
                ..TcpCounters::default()
            };
            for &fl in &c.flows {
                let f = &self.flows[fl as usize];
                t.unnecessary_retransmissions += f.unnecessary;
                t.csm_retransmissions += f.csm_retransmissions;
                for conn in f.ends.iter().flatten() {
                    t.add(&counters(&conn.stats));
                }
            }
            totals.add(&t);
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
                retransmissions: t.segments_retransmitted as u32,
                unnecessary_retransmissions: t.unnecessary_retransmissions as u32,
                timeouts: t.rto_expirations as u32,
                duplicate_responses: 0,
                tcp: Some(t),
            });
        }
        let period = measured.length();
        let per = |x: f64| if period > 0.0 { x / period } else { 0.0 };
        let settling = (self.cfg.workload.kind == WorkloadKind::Burst).then(|| {
            let mut done = self.burst_done.clone();
            done.sort_by(f64::total_cmp);
            settling_time(
                self.cfg.workload.burst_at_s.unwrap_or(0.0),
                &done,
                self.burst_total,
            )
        });
        let seq_traces = self.cfg.trace.then(|| {
            self.flows
                .iter()
                .enumerate()
                .map(|(i, f)| SeqTrace {
                    client: f.client,
                    connection: i as u32,
                    points: f.trace.clone().unwrap_or_default(),
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
            retransmission_histogram: Vec::new(),
            packets: self.net.packet_stats(
                period,
                self.cfg.link.downlink_kbps,
                self.unnecessary_down_bytes,
            ),
            server: ServerStats {
                requests: self.requests,
                duplicates: 0,
            },
            clients,
            traces: None,
            tcp: Some(totals),
            seq_traces,
        }
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
