//! Per-run measurements (docs/design.md §6), serialised as the JSON the Python front pools across
//! replications. Pooled statistics (percentiles over all clients of all replications) are the
//! front's job; everything here is one replication.

use serde::Serialize;

use crate::coap::client::ExchangeSamples;

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
    /// Burst workloads: from `burst_at_s` until 80 % of the burst's exchanges completed
    /// (`workload.settling_cap_s` when it did not by then).
    pub settling_time_s: Option<f64>,
    /// Burst workloads: whether 80 % of the burst's exchanges completed (within the cap).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub settled: Option<bool>,
    /// Index = retransmissions an exchange needed; completed exchanges only.
    pub retransmission_histogram: Vec<u64>,
    /// Runs with CoAP-over-UDP clients: the CoCoA study's exchange metrics.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub exchange: Option<ExchangeMetrics>,
    pub packets: PacketStats,
    pub server: ServerStats,
    pub clients: Vec<ClientResult>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub traces: Option<Vec<ClientTrace>>,
    /// TCP runs: counters summed over all connections.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tcp: Option<TcpCounters>,
    /// TCP runs with tracing on: one time-sequence trace per connection.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seq_traces: Option<Vec<SeqTrace>>,
    /// Runs with client populations (`[[group]]`): what each population measured. Client rows
    /// of group `g` are those with `client` in `first_client..first_client + clients`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<GroupResult>,
    /// Multi-hop radio networks: the mesh's counters and loads (docs/networks.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mesh: Option<MeshResult>,
    /// NB-IoT and LTE-M cells: the cell's counters (docs/networks.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cell: Option<CellResult>,
    /// Cells with tracing on: device 0's radio states over time (docs/networks.md "State
    /// timeline").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cell_timeline: Option<CellTimeline>,
    /// Networks that record each device's time per radio state (the meshes): the energy
    /// figures (docs/energy.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub energy: Option<crate::energy::EnergyResult>,
    /// Runs with NON traffic (`coap.non_rate_per_s`) only: its counters.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub non: Option<NonResult>,
    /// Runs with `workload.kind = "lwm2m"` devices: their phases' measurements (docs/model.md
    /// "LwM2M devices").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lwm2m: Option<crate::coap::lwm2m::Counters>,
    /// Runs with `coap.security` other than `none`: DTLS's handshakes and the bytes security
    /// added (docs/model.md "Security").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub security: Option<SecurityResult>,
    /// Runs with RFC 9177 Q-Block transfers (`coap.block_mode = "q-block"`): their counters
    /// (docs/model.md "Q-Block").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub qblock: Option<QBlockResult>,
    /// Runs with tracing on and a constrained link (not meshes): each direction's queue
    /// occupancy and delivered bytes over time (docs/model.md "Time series").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeseries: Option<Vec<LinkTimeSeries>>,
    /// Runs with `workload.kind = "observe"` only: the notifications' measurements
    /// (docs/model.md "Observe").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub observe: Option<ObserveResult>,
}

/// RFC 7641 Observe's measurements (docs/model.md "Observe"), over the observing clients of a
/// run or of a group.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct ObserveResult {
    /// Values the observed resources took (each observer's resource its own).
    pub notifications_generated: u64,
    /// Notification transmissions by the server (CON originals and retransmissions, NON);
    /// the registrations' responses are not among them.
    pub notifications_sent: u64,
    pub notifications_con: u64,
    pub notifications_non: u64,
    pub notification_retransmissions: u64,
    /// Distinct values the observers received (fresh notifications, the registrations'
    /// responses included).
    pub notifications_delivered: u64,
    /// Values replaced by a newer one before they were sent (RFC 7641 §4.5.2).
    pub notifications_superseded: u64,
    /// `notifications_delivered / notifications_generated` (`None` without a value).
    pub notification_delivered_fraction: Option<f64>,
    /// CON notifications that timed out, each removing its observer (RFC 7641 §4.5).
    pub observers_removed: u64,
    /// Registrations after the first (RFC 7641 §3.3.1).
    pub reregistrations: u64,
    /// At each fresh notification, arrival − the value's generation, s: count, sum, mean and
    /// percentiles (linear interpolation between closest ranks), max.
    pub notification_age_count: u64,
    pub notification_age_sum_s: f64,
    pub notification_age_mean_s: Option<f64>,
    pub notification_age_p50_s: Option<f64>,
    pub notification_age_p95_s: Option<f64>,
    pub notification_age_p99_s: Option<f64>,
    pub notification_age_max_s: Option<f64>,
}

/// One link direction's time series (`net::series`).
#[derive(Clone, Debug, Serialize)]
pub struct LinkTimeSeries {
    /// The link element's name.
    pub link: String,
    /// `up` (client → server) or `down`.
    pub direction: &'static str,
    /// `[time s, bytes waiting in the buffer]` from that time on, at every change.
    pub queue: Vec<(f64, u64)>,
    /// Width of a throughput bin, s.
    pub bin_s: f64,
    /// IP bytes delivered (serialized, not lost) in each bin, from time 0.
    pub delivered_bytes: Vec<u64>,
    /// A cap was reached at this time: the series is incomplete after it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub truncated_at_s: Option<f64>,
}

/// Security's measurements (docs/model.md "Security"), over every secured UDP client.
#[derive(Clone, Debug, Default, Serialize)]
pub struct SecurityResult {
    /// `coap.security` (of the first secured group).
    pub mode: &'static str,
    /// DTLS: `coap.dtls_suite`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub suite: Option<&'static str>,
    /// DTLS: `coap.dtls_connection_id`.
    pub connection_id: bool,
    /// DTLS handshakes completed (full and abbreviated).
    pub handshakes: u64,
    /// Of those, after a NAT binding expired (DTLS 1.2's abbreviated handshake, DTLS 1.3's
    /// PSK handshake).
    pub resumptions: u64,
    /// IP bytes of every handshake datagram sent, both ends, retransmissions included.
    pub handshake_bytes: u64,
    /// Handshake flights the clients resent on DTLS's timer.
    pub flights_retransmitted: u64,
    /// Handshakes given up after the last retransmission.
    pub failed_handshakes: u64,
    /// Requests that waited for a handshake that failed (never sent).
    pub requests_lost: u64,
    /// Bytes the record layer or OSCORE added to the CoAP messages sent (both directions).
    pub record_bytes: u64,
    /// `(handshake_bytes + record_bytes) / exchanges completed`, bytes.
    pub bytes_per_exchange: f64,
    /// Mean over clients of the wait from a client's first request to its sending (the first
    /// handshake), s; 0 without DTLS.
    pub time_to_first_request_s: f64,
    /// Requests that waited for a handshake (the first, or one after a NAT expiry).
    pub requests_waited: u64,
    /// Mean wait of those requests, s (0 when none waited).
    pub mean_handshake_wait_s: f64,
}

/// RFC 9177 Q-Block transfers' measurements (docs/model.md "Q-Block"), summed over clients.
#[derive(Clone, Debug, Default, Serialize)]
pub struct QBlockResult {
    /// `firmware` (Q-Block2) or `upload` (Q-Block1); `mixed` with both among the groups.
    pub direction: &'static str,
    pub transfers_completed: u64,
    pub transfers_failed: u64,
    /// Each completed transfer's time, from its client's start to the body complete (Q-Block2)
    /// or the 2.04 received (Q-Block1), s, in client order.
    pub transfer_time_s: Vec<f64>,
    /// Blocks put on the wire, re-sends included.
    pub blocks_sent: u64,
    /// Blocks re-sent after a recovery request (Q-Block2 GET or Q-Block1 4.08).
    pub blocks_recovered: u64,
    pub recovery_requests: u64,
    /// Next-set requests (Q-Block1 2.31 Continue, Q-Block2 GET with M = 1).
    pub continues: u64,
    /// IP bytes of every Q-Block message, client → server and server → client.
    pub bytes_up: u64,
    pub bytes_down: u64,
}

/// NON traffic's measurements (docs/algorithms.md "NON traffic").
#[derive(Clone, Debug, Default, Serialize)]
pub struct NonResult {
    /// NON requests sent, by all clients.
    pub sent: u64,
    /// NON requests whose NON response reached the client.
    pub delivered: u64,
    /// `delivered / sent`.
    pub delivery_ratio: f64,
    /// Mean over clients of each client's NON rate, `(sent − 1) / (last − first send)`, 1/s.
    pub rate_per_s: f64,
    /// Messages sent as CON exchanges by CoCoA's NON rule (2 of every 16).
    pub rule_con: u64,
}

/// Serde: counters that appear only when non-zero.
fn is_zero(x: &u64) -> bool {
    *x == 0
}

/// Counters of a multi-hop IEEE 802.15.4 mesh over a run (docs/networks.md "Metrics").
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct MeshCounters {
    /// Data frames put on the air, retransmissions included.
    pub frames_sent: u64,
    /// Link-layer retransmissions (a frame sent again after no acknowledgement).
    pub retransmissions: u64,
    /// Duty cycling: strobed copies sent before the one the receiver took.
    pub strobes: u64,
    pub acks_sent: u64,
    /// Frames (data or acknowledgement) lost because another transmission overlapped them.
    pub collisions: u64,
    /// Frames lost to the per-link loss probability.
    pub link_losses: u64,
    /// Frames given up after macMaxCSMABackoffs busy channel assessments.
    pub channel_access_failures: u64,
    /// Frames given up after macMaxFrameRetries retransmissions.
    pub retry_failures: u64,
    /// Packets refused by a full MAC queue.
    pub mac_queue_drops: u64,
    /// Packets lost because the MAC gave up one of their frames.
    pub radio_drops: u64,
    /// Packets too large to fragment into the frames (never with the shipped sizes).
    pub oversized_drops: u64,
    /// Packets sent as more than one frame on some hop.
    pub fragmented_packets: u64,
    /// Frames received again (their acknowledgement was lost) and ignored.
    pub duplicates: u64,
    /// Contiki profile (`network.mac = "contiki"`; absent from results when zero, so results
    /// of the IEEE profile are unchanged): packets refused because both neighbour entries
    /// (CSMA_MAX_NEIGHBOR_QUEUES) were taken by other next hops (also in `mac_queue_drops`).
    #[serde(skip_serializing_if = "is_zero")]
    pub neighbor_queue_drops: u64,
    /// Contiki profile: packets refused for want of a free packet buffer (QUEUEBUF_NUM; also
    /// in `mac_queue_drops`).
    #[serde(skip_serializing_if = "is_zero")]
    pub buffer_drops: u64,
    /// Contiki profile: sends reported MAC_TX_COLLISION (busy channel at the CC2420's CCA,
    /// or activity without an acknowledgement), each retried after a backoff.
    #[serde(skip_serializing_if = "is_zero")]
    pub tx_collisions: u64,
    /// Contiki profile (`contiki_pending_packet`): sends refused because a received frame
    /// still waited in the radio's RX FIFO (also in `tx_collisions`).
    #[serde(skip_serializing_if = "is_zero")]
    pub pending_refusals: u64,
    /// Contiki profile (`contiki_rpl_etx`): preferred-parent changes under the links' ETX.
    #[serde(skip_serializing_if = "is_zero")]
    pub parent_changes: u64,
    /// Contiki profile without autoack: packets lost because a frame was corrupted at its
    /// receiver (collision or link loss) and, counted as sent, never retried.
    #[serde(skip_serializing_if = "is_zero")]
    pub collision_drops: u64,
    /// Contiki profile: frames dropped by a receiver busy reassembling another packet.
    #[serde(skip_serializing_if = "is_zero")]
    pub reassembly_drops: u64,
    /// Distinct requests that reached the node where they leave the mesh (a sink, or the
    /// border router towards a server outside): the first copy of each exchange's request;
    /// at most the requests the clients created.
    pub requests_delivered: u64,
    /// Their IPv6 bytes (the carried load's).
    pub request_bytes_delivered: u64,
    /// Request packets that left the mesh, retransmitted copies included.
    pub request_packets_delivered: u64,
}

/// The cell's counters over a run (docs/networks.md, "Metrics of a cell").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CellCounters {
    /// Random-access preamble attempts (every device, every level).
    pub ra_attempts: u64,
    /// Attempts that lost contention (another device took the same preamble in the occasion).
    pub ra_collisions: u64,
    /// Moves to the next coverage level after `ra_attempts_per_level` failed attempts.
    pub ra_level_ups: u64,
    /// Connections set up (RRC connection establishment) and resumed (`access = "up"`).
    pub rrc_setups: u64,
    pub rrc_resumes: u64,
    /// Transport blocks sent again after a block error (HARQ), both directions, Msg3 included.
    pub harq_retransmissions: u64,
    /// Idle devices paged for a downlink packet.
    pub pagings: u64,
    /// Downlink packets held in the core while their device was in PSM.
    pub psm_buffered: u64,
    /// Downlink packets dropped because the device's NAT binding had expired.
    pub nat_dropped: u64,
    /// Periodic tracking area updates simulated (those a held packet waited for).
    pub tracking_area_updates: u64,
    /// Connections released by release assistance and by the inactivity timer.
    pub releases_rai: u64,
    pub releases_inactivity: u64,
    /// Uplink packets a connected device sent on a grant that followed its buffer status
    /// report, without a scheduling request or random access of their own (TS 36.321 §5.4.5).
    pub bsr_grants: u64,
    /// Packets that entered the cell from a device and towards one.
    pub uplink_packets: u64,
    pub downlink_packets: u64,
    /// Packets the eNB refused because its scheduler was booked further ahead than
    /// `admission_backlog_s` (not counted in `uplink_packets` / `downlink_packets`).
    pub admission_rejects: u64,
}

/// A cell run's counters and coverage (docs/networks.md, "Metrics of a cell").
#[derive(Clone, Debug, Serialize)]
pub struct CellResult {
    #[serde(flatten)]
    pub counters: CellCounters,
    pub devices: u32,
    /// Devices at coverage levels 0, 1, 2.
    pub devices_per_level: [u32; 3],
    /// The devices' mean coverage level.
    pub mean_coverage_level: f64,
}

impl CellResult {
    /// A cell's result from its counters and its devices' coverage levels (a simulated run's,
    /// and the emulator's report of the same cell).
    pub fn of(counters: CellCounters, levels: impl Iterator<Item = u8>) -> Self {
        let mut per = [0u32; 3];
        for l in levels {
            per[usize::from(l).min(2)] += 1;
        }
        let n = per.iter().sum::<u32>();
        CellResult {
            counters,
            devices: n,
            devices_per_level: per,
            mean_coverage_level: if n > 0 {
                f64::from(per[1] + 2 * per[2]) / f64::from(n)
            } else {
                0.0
            },
        }
    }
}

/// One device's radio over time (`net::cellular::timeline`): its mode from each time on and
/// its transmit / receive spans.
#[derive(Clone, Debug, Serialize)]
pub struct CellTimeline {
    /// The device (= its client's index).
    pub device: u32,
    /// The run's end, s.
    pub end_s: f64,
    /// `[time s, mode]` at every change: `connected`, `idle` or `psm`.
    pub modes: Vec<(f64, &'static str)>,
    /// `[start s, end s, tx | rx]`, by start.
    pub spans: Vec<(f64, f64, &'static str)>,
    /// The cap was reached at this time: entries after it are missing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub truncated_at_s: Option<f64>,
}

/// A mesh run's counters, loads and route lengths.
#[derive(Clone, Debug, Serialize)]
pub struct MeshResult {
    #[serde(flatten)]
    pub counters: MeshCounters,
    pub nodes: u32,
    /// Requests the clients created: periodic workloads, every tick (started or dropped);
    /// others, every exchange started.
    pub requests_generated: u64,
    /// Requests dropped at the application (NSTART exchanges outstanding).
    pub app_drops: u64,
    /// kbit/s of requests created (IPv6 bytes) over the workload's duration.
    pub offered_kbps: f64,
    /// kbit/s of distinct requests delivered to their sinks over the same duration
    /// (retransmitted copies of a request that already arrived do not count).
    pub carried_kbps: f64,
    /// Radio hops of each client's route to its server, by client.
    pub client_hops: Vec<u32>,
    /// Each client's mean exchange time (first request → response, completed exchanges), s;
    /// `None` for a client that completed none.
    pub client_mean_exchange_s: Vec<Option<f64>>,
    /// Contiki profile: each node's packet drops as [queue overflow, retry limit, collision]
    /// (a collision drop counts at the sender of the lost frame, a reassembly drop at its
    /// receiver); absent for the IEEE profile.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub node_drops: Vec<[u64; 3]>,
}

/// One client population's measurements (docs/design.md "Client populations"); per-client
/// metrics (FCT, retransmissions) are in the run's client rows.
#[derive(Clone, Debug, Serialize)]
pub struct GroupResult {
    pub name: String,
    pub transport: &'static str,
    pub first_client: u32,
    pub clients: u32,
    /// Completed exchanges by retransmissions needed (UDP groups; empty for TCP).
    pub retransmission_histogram: Vec<u64>,
    /// Completed exchanges per second over the run's measured period.
    pub throughput_exchanges_per_s: f64,
    pub settling_time_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub settled: Option<bool>,
    /// UDP groups: the CoCoA study's exchange metrics.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub exchange: Option<ExchangeMetrics>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tcp: Option<TcpCounters>,
    /// Observe groups: the notifications' measurements (docs/model.md "Observe").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub observe: Option<ObserveResult>,
    /// LwM2M groups: their devices' measurements.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lwm2m: Option<crate::coap::lwm2m::Counters>,
}

/// TCP counters (docs/design.md §6) of one client's connections, both ends — or, summed, of a run.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct TcpCounters {
    pub connections: u64,
    /// Every segment, pure ACKs and handshake included.
    pub segments_sent: u64,
    /// Segments carrying payload or FIN.
    pub data_segments_sent: u64,
    /// Payload/FIN segments sent again (any cause; SYN and SYN-ACK are counted apart).
    pub segments_retransmitted: u64,
    /// Retransmitted segments whose data the receiver already had when they arrived.
    pub unnecessary_retransmissions: u64,
    pub syn_retransmissions: u64,
    pub synack_retransmissions: u64,
    /// Retransmitted segments carrying bytes of a CSM.
    pub csm_retransmissions: u64,
    pub rto_expirations: u64,
    /// Fast retransmits entering fast recovery (third duplicate ACK).
    pub fast_retransmits: u64,
    /// Retransmissions on partial ACKs during fast recovery (RFC 6582).
    pub partial_ack_retransmissions: u64,
    /// Duplicate ACKs sent (for out-of-order or duplicate data).
    pub duplicate_acks: u64,
}

impl TcpCounters {
    /// Adds `other`'s counts to these.
    pub fn add(&mut self, other: &TcpCounters) {
        self.connections += other.connections;
        self.segments_sent += other.segments_sent;
        self.data_segments_sent += other.data_segments_sent;
        self.segments_retransmitted += other.segments_retransmitted;
        self.unnecessary_retransmissions += other.unnecessary_retransmissions;
        self.syn_retransmissions += other.syn_retransmissions;
        self.synack_retransmissions += other.synack_retransmissions;
        self.csm_retransmissions += other.csm_retransmissions;
        self.rto_expirations += other.rto_expirations;
        self.fast_retransmits += other.fast_retransmits;
        self.partial_ack_retransmissions += other.partial_ack_retransmissions;
        self.duplicate_acks += other.duplicate_acks;
    }
}

/// A tcptrace-style time-sequence trace of one connection.
#[derive(Clone, Debug, Serialize)]
pub struct SeqTrace {
    pub client: u32,
    pub connection: u32,
    pub points: Vec<SeqTraceRow>,
    /// The congestion controller's state after each ACK that changed it (BBR only; absent
    /// for New Reno).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub cc: Vec<CcTraceRow>,
}

/// One congestion-controller state point: time s, the sending direction (`up` = client →
/// server, `down`), BBR mode (`startup`, `drain`, `probe_bw`, `probe_rtt`), BtlBw B/s,
/// RTprop s (0 before a sample), pacing rate B/s, cwnd bytes.
pub type CcTraceRow = (f64, &'static str, &'static str, u64, f64, u64, u32);

/// One time-sequence point: time s, direction (`up` = client → server, `down`), event
/// (`send`, `retransmit`, `drop` — a data segment; `ack` — an acknowledgement reaching the
/// data's sender), sequence offset relative to the first data byte, payload length.
pub type SeqTraceRow = (f64, &'static str, &'static str, u32, u32);

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
    /// CoAP over UDP: the mean over its completed exchanges of request → response (the
    /// exchange latency a deployment sees; `coaplab advise`'s latency objective, docs/advise.md),
    /// s; absent for TCP runs and for a client that completed none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mean_exchange_s: Option<f64>,
    /// TCP runs: the counters of the client's connections.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tcp: Option<TcpCounters>,
    /// Runs with client populations: the client's group.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
}

#[derive(Clone, Debug, Serialize)]
pub struct ClientTrace {
    pub client: u32,
    pub points: Vec<TraceRow>,
}

/// One trace row: time s, event, exchange, armed timer s, RTO base s, sample s, sample kind.
pub type TraceRow = (f64, &'static str, u32, f64, f64, Option<f64>, &'static str);

/// The CoCoA study's per-exchange metrics of CoAP-over-UDP clients (Betzler et al. 2016,
/// Table II; docs/model.md "Metrics"): raw sums and counts, so that the front pools them over
/// replications exactly (Σ sums / Σ counts), and the run's own means.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct ExchangeMetrics {
    /// CON request transmissions: originals (one per exchange started) plus retransmissions.
    pub con_transmissions: u64,
    pub con_retransmissions: u64,
    /// `con_retransmissions / con_transmissions`, in [0, 1); `None` without a transmission.
    pub retransmission_ratio: Option<f64>,
    /// Strong RTT samples (docs/model.md: the algorithm's strong samples, or for algorithms
    /// that take none the RTT of the exchanges answered without retransmission): count, sum s,
    /// mean s.
    pub rtt_strong_samples: u64,
    pub rtt_strong_sum_s: f64,
    pub mean_rtt_s: Option<f64>,
    /// Weak RTT samples (CoCoA's weak estimator, B-RTO): count, sum s, mean s.
    pub rtt_weak_samples: u64,
    pub rtt_weak_sum_s: f64,
    pub mean_rtt_weak_s: Option<f64>,
    /// The timer armed with each exchange's original transmission (`T_0`, dithered): count
    /// (= CON exchanges started), sum s, mean s.
    pub initial_rto_count: u64,
    pub initial_rto_sum_s: f64,
    pub mean_initial_rto_s: Option<f64>,
}

impl ExchangeMetrics {
    /// From the clients' summed samples and retransmissions.
    pub fn new(s: &ExchangeSamples, retransmissions: u64) -> Self {
        let mean = |sum: f64, n: u64| (n > 0).then(|| sum / n as f64);
        let transmissions = s.started + retransmissions;
        let strong = s.strong_sum.secs_f64();
        let weak = s.weak_sum.secs_f64();
        let t0 = s.initial_timer_sum.secs_f64();
        ExchangeMetrics {
            con_transmissions: transmissions,
            con_retransmissions: retransmissions,
            retransmission_ratio: mean(retransmissions as f64, transmissions),
            rtt_strong_samples: s.strong_count,
            rtt_strong_sum_s: strong,
            mean_rtt_s: mean(strong, s.strong_count),
            rtt_weak_samples: s.weak_count,
            rtt_weak_sum_s: weak,
            mean_rtt_weak_s: mean(weak, s.weak_count),
            initial_rto_count: s.started,
            initial_rto_sum_s: t0,
            mean_initial_rto_s: mean(t0, s.started),
        }
    }
}

/// The settling time and whether the burst settled, given the uncapped time (`None`: 80 % of
/// the burst never completed) and `workload.settling_cap_s`: a burst that has not settled by
/// the cap reports the cap, unsettled (the CoCoA study's GPRS figure caps at 180 s).
pub fn capped_settling(raw: Option<f64>, cap: Option<f64>) -> (Option<f64>, bool) {
    match (raw, cap) {
        (Some(t), Some(c)) if t > c => (Some(c), false),
        (Some(t), _) => (Some(t), true),
        (None, Some(c)) => (Some(c), false),
        (None, None) => (None, false),
    }
}

/// Time from `burst_at` until 80 % of `total` burst exchanges completed (docs/design.md §6), given the
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
    fn a_cells_result_counts_devices_per_level() {
        // Levels 0, 1, 2, 2: one device at 0, one at 1, two at 2; mean (0 + 1 + 2 + 2) / 4 = 1.25.
        let r = CellResult::of(CellCounters::default(), [0u8, 1, 2, 2].into_iter());
        assert_eq!(r.devices, 4);
        assert_eq!(r.devices_per_level, [1, 1, 2]);
        assert_eq!(r.mean_coverage_level, 1.25);
        let none = CellResult::of(CellCounters::default(), std::iter::empty());
        assert_eq!((none.devices, none.mean_coverage_level), (0, 0.0));
    }

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

    #[test]
    fn a_capped_settling_time_reports_the_cap_unsettled() {
        // Settled at 8 s: below a 180 s cap it stands, settled; above a 5 s cap it is the cap.
        assert_eq!(capped_settling(Some(8.0), Some(180.0)), (Some(8.0), true));
        assert_eq!(capped_settling(Some(8.0), None), (Some(8.0), true));
        assert_eq!(capped_settling(Some(8.0), Some(5.0)), (Some(5.0), false));
        // Exactly at the cap: settled (80 % done by then).
        assert_eq!(capped_settling(Some(5.0), Some(5.0)), (Some(5.0), true));
        // Never settled: the cap, unsettled; without a cap, no time.
        assert_eq!(capped_settling(None, Some(180.0)), (Some(180.0), false));
        assert_eq!(capped_settling(None, None), (None, false));
    }

    #[test]
    fn exchange_metrics_are_ratios_of_the_raw_sums() {
        use coaplab_cc::Duration;
        // 4 exchanges, T_0 = 2.0 + 2.5 + 3.0 + 2.5 = 10 s → mean 2.5 s; 2 retransmissions →
        // 6 transmissions, ratio 2/6 = 1/3; strong 0.4 + 0.6 = 1.0 s over 2 → 0.5 s; one weak 3 s.
        let s = ExchangeSamples {
            started: 4,
            initial_timer_sum: Duration::from_millis(10_000),
            strong_count: 2,
            strong_sum: Duration::from_millis(1_000),
            weak_count: 1,
            weak_sum: Duration::from_millis(3_000),
        };
        let m = ExchangeMetrics::new(&s, 2);
        assert_eq!(m.con_transmissions, 6);
        assert_eq!(m.retransmission_ratio, Some(2.0 / 6.0));
        assert_eq!(m.mean_initial_rto_s, Some(2.5));
        assert_eq!(m.mean_rtt_s, Some(0.5));
        assert_eq!(m.mean_rtt_weak_s, Some(3.0));
        // Nothing started: no ratio, no means.
        let none = ExchangeMetrics::new(&ExchangeSamples::default(), 0);
        assert_eq!(
            (
                none.retransmission_ratio,
                none.mean_rtt_s,
                none.mean_initial_rto_s
            ),
            (None, None, None)
        );
    }
}
