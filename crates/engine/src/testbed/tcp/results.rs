//! The measurements of a TCP run (SPEC §6).

use super::TcpTestbed;
use crate::config::WorkloadKind;
use crate::metrics::{
    settling_time, ClientResult, ClientTcpStats, PacketStats, RunResult, SeqTrace, ServerStats,
    TcpTotals,
};

impl TcpTestbed {
    /// Collects the run's measurements (SPEC §6).
    pub fn result(&self) -> RunResult {
        let mut first = f64::INFINITY;
        let mut last: f64 = 0.0;
        let mut completed_total = 0u64;
        let mut totals = TcpTotals::default();
        let mut clients = Vec::with_capacity(self.clients.len());
        for c in &self.clients {
            let mut t = ClientTcpStats {
                connections: c.flows.len() as u32,
                ..ClientTcpStats::default()
            };
            for &fl in &c.flows {
                let f = &self.flows[fl as usize];
                t.unnecessary_retransmissions += f.unnecessary;
                t.csm_retransmissions += f.csm_retransmissions;
                for conn in f.ends.iter().flatten() {
                    let s = &conn.stats;
                    t.segments_sent += s.segments_sent;
                    t.data_segments_sent += s.data_segments_sent;
                    t.segments_retransmitted += s.retransmissions;
                    t.syn_retransmissions += s.syn_retransmissions;
                    t.synack_retransmissions += s.synack_retransmissions;
                    t.rto_expirations += s.rto_expirations;
                    t.fast_retransmits += s.fast_retransmits;
                    t.partial_ack_retransmissions += s.partial_ack_retransmissions;
                    t.duplicate_acks += s.duplicate_acks_sent;
                }
            }
            totals.add(&t);
            let s = &c.stats;
            let fct = match (s.first_request, s.last_end) {
                (Some(a), Some(b)) => {
                    first = first.min(a.secs_f64());
                    last = last.max(b.secs_f64());
                    Some((b - a).secs_f64())
                }
                _ => None,
            };
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
        let period = if last > first { last - first } else { 0.0 };
        let per = |x: f64| if period > 0.0 { x / period } else { 0.0 };
        let (up, down) = (&self.net.uplink.stats, &self.net.downlink.stats);
        let down_capacity_bytes = period * self.cfg.link.downlink_kbps * 1000.0 / 8.0;
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
            packets: PacketStats {
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
                    self.unnecessary_down_bytes as f64 / down_capacity_bytes
                } else {
                    0.0
                },
                max_queue_bytes: self.net.downlink.max_queue_bytes(),
                mean_queue_delay_s: if down.sent > 0 {
                    down.queue_wait.secs_f64() / down.sent as f64
                } else {
                    0.0
                },
            },
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
