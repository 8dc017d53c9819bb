//! Per-run measurements (SPEC §6), serialised as the JSON the Python front pools across
//! replications. Pooled statistics (percentiles over all clients of all replications) are the
//! front's job; everything here is one replication.

use serde::Serialize;

#[derive(Clone, Debug, Serialize)]
pub struct RunResult {
    pub replication: u64,
    pub seed: u64,
    /// Simulator events processed.
    pub events: u64,
    /// Simulated time at the end of the run, s.
    pub sim_time_s: f64,
    /// From the first request of any client to the last response (or deadline), s.
    pub measured_period_s: f64,
    pub throughput_exchanges_per_s: f64,
    /// Burst workloads: from `burst_at_s` until 80 % of the burst's exchanges completed.
    pub settling_time_s: Option<f64>,
    /// Index = retransmissions an exchange needed; completed exchanges only.
    pub retransmission_histogram: Vec<u64>,
    pub packets: PacketStats,
    pub server: ServerStats,
    pub clients: Vec<ClientResult>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub traces: Option<Vec<ClientTrace>>,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct PacketStats {
    /// Packets put on the constrained link, both directions.
    pub sent: u64,
    pub sent_uplink: u64,
    pub sent_downlink: u64,
    /// Tail-dropped at a buffer (the downlink bottleneck, or a limited uplink buffer).
    pub dropped_buffer: u64,
    pub dropped_buffer_downlink: u64,
    /// Lost to wireless errors after serialization.
    pub lost_link: u64,
    pub lost_link_uplink: u64,
    pub lost_link_downlink: u64,
    /// IP bytes serialised on each direction.
    pub bytes_uplink: u64,
    pub bytes_downlink: u64,
    /// Busy time / measured period.
    pub utilisation_uplink: f64,
    pub utilisation_downlink: f64,
    /// Share of the downlink's capacity over the measured period spent on responses to
    /// unnecessary retransmissions.
    pub unnecessary_downlink_share: f64,
    pub max_queue_bytes: u64,
    /// Mean time a downlink packet waited in the bottleneck buffer, s.
    pub mean_queue_delay_s: f64,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct ServerStats {
    pub requests: u64,
    pub duplicates: u64,
}

#[derive(Clone, Debug, Serialize)]
pub struct ClientResult {
    pub client: u32,
    /// First request → last response of its workload, s (`None` if it never completed one).
    pub fct_s: Option<f64>,
    /// When its first request was sent, s.
    pub first_request_s: Option<f64>,
    /// When its last exchange ended (response or failure), s.
    pub last_end_s: Option<f64>,
    pub exchanges_completed: u32,
    pub exchanges_failed: u32,
    pub retransmissions: u32,
    pub unnecessary_retransmissions: u32,
    /// Timer expirations.
    pub timeouts: u32,
    pub duplicate_responses: u32,
}

#[derive(Clone, Debug, Serialize)]
pub struct ClientTrace {
    pub client: u32,
    pub points: Vec<TraceRow>,
}

/// One trace row: time s, event, exchange, armed timer s, RTO base s, sample s, sample kind.
pub type TraceRow = (f64, &'static str, u32, f64, f64, Option<f64>, &'static str);

/// Time from `burst_at` until 80 % of `total` burst exchanges completed (SPEC §6), given the
/// sorted completion times; `None` if 80 % never completed.
pub fn settling_time(burst_at: f64, sorted_completions: &[f64], total: usize) -> Option<f64> {
    if total == 0 {
        return None;
    }
    // The smallest count ≥ 80 % of total: ceil(0.8·total) = ceil(4·total / 5).
    let needed = (4 * total).div_ceil(5);
    sorted_completions.get(needed - 1).map(|t| t - burst_at)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settling_time_is_the_80th_percent_completion() {
        // 10 burst exchanges completing at 11..20 s after a burst at 10 s: 80 % = 8 exchanges,
        // the 8th completes at 18 s → settling time 8 s.
        let done: Vec<f64> = (11..=20).map(f64::from).collect();
        assert_eq!(settling_time(10.0, &done, 10), Some(8.0));
        // 5 exchanges: ceil(0.8·5) = 4 → the 4th (14 s) → 4 s.
        assert_eq!(settling_time(10.0, &done[..5], 5), Some(4.0));
        // Only 7 of 10 completed: never settled.
        assert_eq!(settling_time(10.0, &done[..7], 10), None);
    }
}
