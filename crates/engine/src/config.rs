//! The configuration of one simulated testbed, and the schema of scenario files.
//!
//! These types are the single source of truth for every configuration key: its type, its
//! default (`#[serde(default = ...)]`), its range and its allowed values. The Python front
//! (`coaplab.scenario`) reads the JSON Schema exported by [`scenario_schema`] to validate
//! scenario files and fill defaults; the fully resolved configuration it builds (every key
//! present) is what [`RunConfig::from_json`] receives and what a configuration's identity
//! hashes. The same schema ships as `python/coaplab/data/scenario.schema.json` for editors.
//!
//! Ranges keep every derived integer in range: times become integer nanoseconds in `u64`
//! (so every delay and duration is bounded far below 1.8e13 ms), rates become integer bit/s
//! (so a rate is at least 0.001 kbit/s = 1 bit/s), and Gilbert–Elliott sojourns are at least
//! 0.1 ms (so the chain advances in steps of at least 100 000 ns).

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Serialize};

use crate::net::loss::ChainParams;

/// Largest delay or time span of any key, ms (≈ 2.8 h): keeps sums of times in `u64` ns.
pub const MAX_DELAY_MS: f64 = 1e7;
/// Congestion controllers of the TCP model (`coap.cc` with `coap.transport = "tcp"`), from
/// their registry ([`crate::tcp::congestion::CONTROLLERS`]).
pub fn tcp_controllers() -> Vec<&'static str> {
    crate::tcp::congestion::controller_names()
}

/// Every default of the scenario keys, one constant per key, named after it (`link.uplink_kbps`
/// → `LINK_UPLINK_KBPS`), with the first sentence of the key's documentation (the field's doc
/// comment, which the schema shows) and its source where the documentation names one. Never share a
/// constant between keys: editing one default must not move another key.
pub mod defaults {
    /// `link.path_delay_ms`: Router ↔ server delay, uniform in `[min, max]` ms per packet (FIFO kept).
    /// Source: docs/design.md §2 (the reference testbed).
    pub const LINK_PATH_DELAY_MS: [f64; 2] = [10.0, 20.0];
    /// `name`: The scenario's name: 1 to 200 characters, no control characters.
    pub const NAME: &str = "scenario";
    /// `seed`: Base seed; replication `r` derives its random streams from `(seed, r)`.
    pub const SEED: u64 = 1;
    /// `replications`: Independent replications of the configuration.
    pub const REPLICATIONS: u64 = 1;
    /// `workload.clients`: Number of clients (burst: ignored, see `background` and `burst_clients`).
    pub const WORKLOAD_CLIENTS: u32 = 1;
    /// `workload.batch`: Random clients: batch size uniform in `[batch[0], batch[1]]`.
    pub const WORKLOAD_BATCH: [u32; 2] = [1, 10];
    /// `workload.start_spread_s`: Each client starts at an offset uniform in `[0, start_spread_s]`, s.
    /// Source: docs/design.md (fixed by the 50-client reference, docs/validation.md).
    pub const WORKLOAD_START_SPREAD_S: f64 = 0.05;
    /// `coap.cc`: The congestion-control algorithm (docs/algorithms.md) with transport `udp`, the TCP congestion controller (`newreno`) with transport `tcp`.
    pub const COAP_CC: &str = "cocoa";
    /// `coap.nstart`: NSTART: outstanding exchanges per client.
    /// Source: RFC 7252 §4.7 (NSTART 1).
    pub const COAP_NSTART: u32 = 1;
    /// `tcp.limited_transmit`: RFC 3042 Limited Transmit.
    /// Source: RFC 3042, on in Linux.
    pub const TCP_LIMITED_TRANSMIT: bool = true;
    /// `network.range_m`: Radio range, m: a frame reaches every node within this distance (unit disk).
    pub const NETWORK_RANGE_M: f64 = 10.0;
    /// `network.interference_factor`: Interference range as a multiple of `range_m`: a transmission from a node within it corrupts a frame being received.
    pub const NETWORK_INTERFERENCE_FACTOR: f64 = 2.0;
    /// `network.carrier_sense_factor`: Carrier-sense range as a multiple of `range_m`: clear channel assessment finds the channel busy while a node within it transmits.
    pub const NETWORK_CARRIER_SENSE_FACTOR: f64 = 1.0;
    /// `network.mac_min_be`: macMinBE (IEEE 802.15.4-2006 §7.5.1.4).
    /// Source: IEEE 802.15.4-2006 §7.4.2.
    pub const NETWORK_MAC_MIN_BE: u8 = 3;
    /// `network.mac_max_be`: macMaxBE.
    /// Source: IEEE 802.15.4-2006 §7.4.2.
    pub const NETWORK_MAC_MAX_BE: u8 = 5;
    /// `network.mac_max_csma_backoffs`: macMaxCSMABackoffs: busy clear-channel assessments before a channel-access failure.
    /// Source: IEEE 802.15.4-2006 §7.4.2.
    pub const NETWORK_MAC_MAX_CSMA_BACKOFFS: u8 = 4;
    /// `network.mac_max_frame_retries`: macMaxFrameRetries: retransmissions of an unacknowledged frame.
    /// Source: IEEE 802.15.4-2006 §7.4.2.
    pub const NETWORK_MAC_MAX_FRAME_RETRIES: u8 = 3;
    /// `network.unit_backoff_us`: aUnitBackoffPeriod, µs (20 symbols of 16 µs).
    /// Source: IEEE 802.15.4-2006 §7.4.1 (2.4 GHz O-QPSK symbols).
    pub const NETWORK_UNIT_BACKOFF_US: f64 = 320.0;
    /// `network.cca_us`: Clear channel assessment, µs (8 symbols).
    /// Source: IEEE 802.15.4-2006 §6.9.9.
    pub const NETWORK_CCA_US: f64 = 128.0;
    /// `network.turnaround_us`: aTurnaroundTime, µs (12 symbols).
    /// Source: IEEE 802.15.4-2006 §6.4.1.
    pub const NETWORK_TURNAROUND_US: f64 = 192.0;
    /// `network.ack_wait_us`: macAckWaitDuration, µs (54 symbols).
    /// Source: IEEE 802.15.4-2006 §7.4.2.
    pub const NETWORK_ACK_WAIT_US: f64 = 864.0;
    /// `network.mac_queue_frames`: Frames a node's MAC queue holds (the one being sent included).
    pub const NETWORK_MAC_QUEUE_FRAMES: u32 = 4;
    /// `network.border_router_queue_frames`: Frames the border router's MAC queue holds.
    pub const NETWORK_BORDER_ROUTER_QUEUE_FRAMES: u32 = 6;
    /// `network.channel_check_rate_hz`: ContikiMAC: channel checks per second (NETSTACK_RDC_CHANNEL_CHECK_RATE, Contiki's 8).
    pub const NETWORK_CHANNEL_CHECK_RATE_HZ: u32 = 8;
    /// `network.strobe_gap_us`: ContikiMAC: gap between strobed copies, µs (turnaround + acknowledgement by default).
    pub const NETWORK_STROBE_GAP_US: f64 = 544.0;
    /// `network.gprs_downlink_kbps`: GPRS: downlink rate, kbit/s.
    pub const NETWORK_GPRS_DOWNLINK_KBPS: f64 = 40.0;
    /// `network.gprs_modem_buffer_bytes`: GPRS: the modem's send buffer, bytes (tail drop).
    pub const NETWORK_GPRS_MODEM_BUFFER_BYTES: u64 = 8000;
    /// `network.gprs_network_buffer_bytes`: GPRS: the network's buffer in front of the downlink, bytes (tail drop).
    pub const NETWORK_GPRS_NETWORK_BUFFER_BYTES: u64 = 20000;
    /// `network.gprs_loss`: GPRS: probability that a packet is lost (each direction, independently).
    pub const NETWORK_GPRS_LOSS: f64 = 0.002;
    /// `link.downlink_kbps`: Server → devices rate, kbit/s (1 kbit = 1000 bit); at least 1 bit/s.
    /// Source: docs/design.md §2 (the reference testbed).
    pub const LINK_DOWNLINK_KBPS: f64 = 30.0;
    /// `link.uplink_kbps`: Devices → server rate, kbit/s; at least 1 bit/s.
    /// Source: docs/design.md §2.
    pub const LINK_UPLINK_KBPS: f64 = 60.0;
    /// `link.downlink_delay_ms`: One-way propagation delay of the downlink, ms.
    /// Source: docs/design.md §2.
    pub const LINK_DOWNLINK_DELAY_MS: f64 = 400.0;
    /// `link.uplink_delay_ms`: One-way propagation delay of the uplink, ms.
    /// Source: docs/design.md §2.
    pub const LINK_UPLINK_DELAY_MS: f64 = 200.0;
    /// `link.mtu`: Largest IP packet, bytes (296: TCP MSS 256).
    /// Source: docs/design.md §2.
    pub const LINK_MTU: u32 = 296;
    /// `link.buffer_bytes`: Bottleneck buffer in front of the downlink, bytes (tail drop).
    /// Source: docs/design.md §2 (the literature's smallest buffer).
    pub const LINK_BUFFER_BYTES: u64 = 2500;
    /// `workload.exchanges`: Exchanges per client (continuous, random, burst background).
    pub const WORKLOAD_EXCHANGES: u32 = 50;
    /// `workload.response_bytes`: Payload of each piggybacked 2.05 response, bytes.
    /// Source: docs/design.md §2 (the piggybacked 2.05's 60-byte payload).
    pub const WORKLOAD_RESPONSE_BYTES: u32 = 60;
    /// `workload.resource_bytes`: Firmware: resource size, bytes.
    /// Source: the firmware of Pesola 2020 (docs/reproduce.md, `tcp-firmware`).
    pub const WORKLOAD_RESOURCE_BYTES: u64 = 102400;
    /// `workload.block_szx`: Firmware: Block2 size exponent (RFC 7959 §2.2, block = 2^(SZX+4) bytes; 4 = 256 B).
    pub const WORKLOAD_BLOCK_SZX: u8 = 4;
    /// `coap.max_retransmit`: MAX_RETRANSMIT (RFC 7252 default 4; the literature uses 20).
    /// Source: RFC 7252 §4.8.
    pub const COAP_MAX_RETRANSMIT: u32 = 4;
    /// `coap.ack_timeout_s`: ACK_TIMEOUT, s.
    /// Source: RFC 7252 §4.8 (2 s).
    pub const COAP_ACK_TIMEOUT_S: f64 = 2.0;
    /// `coap.ack_random_factor`: ACK_RANDOM_FACTOR.
    /// Source: RFC 7252 §4.8 (1.5).
    pub const COAP_ACK_RANDOM_FACTOR: f64 = 1.5;
    /// `coap.max_timer_s`: Timer cap of the non-CoCoA families, s.
    /// Source: the 60 s cap of `coaplab_cc::Config::max_timer` (CONTRIBUTING.md, "Adding an algorithm").
    pub const COAP_MAX_TIMER_S: f64 = 60.0;
    /// `tcp.initial_window`: Initial window, segments.
    /// Source: RFC 3390 for a 256 B MSS (`tcp::TcpConfig::initial_window_segments`).
    pub const TCP_INITIAL_WINDOW: u32 = 4;
    /// `tcp.delayed_ack_ms`: Delayed-ACK timer, ms.
    /// Source: RFC 1122 §4.2.3.2 (`tcp::TcpConfig::delayed_ack`).
    pub const TCP_DELAYED_ACK_MS: f64 = 200.0;
    /// `tcp.initial_rto_s`: Initial RTO (also of SYN and SYN-ACK), s.
    /// Source: docs/design.md §4.2 (`tcp::TcpConfig::initial_rto`).
    pub const TCP_INITIAL_RTO_S: f64 = 2.0;
    /// `tcp.max_rto_s`: RTO cap, s (at least `initial_rto_s`).
    /// Source: Linux `TCP_RTO_MAX` (`tcp::TcpConfig::max_rto`).
    pub const TCP_MAX_RTO_S: f64 = 120.0;
    /// `tcp.syn_retries`: SYN retransmissions before a connection attempt fails.
    /// Source: the literature's tuned Linux hosts, `tcp_syn_retries` (`tcp::TcpConfig::syn_retries`).
    pub const TCP_SYN_RETRIES: u32 = 40;
    /// `tcp.synack_retries`: SYN-ACK retransmissions before the server gives up.
    /// Source: the literature's tuned Linux hosts, `tcp_synack_retries` (`tcp::TcpConfig::synack_retries`).
    pub const TCP_SYNACK_RETRIES: u32 = 41;
    /// `tcp.hz`: Timer tick rate of every host (Linux `HZ`): the data, SYN and SYN-ACK retransmission timers fire on the timer wheel's granularity (docs/model.md "Host timers"); 0 = exact timers.
    /// Source: the common distribution kernel configuration (`tcp::TcpConfig::hz`).
    pub const TCP_HZ: u32 = 250;
    pub(super) fn network_range_m() -> f64 {
        NETWORK_RANGE_M
    }
    pub(super) fn network_interference_factor() -> f64 {
        NETWORK_INTERFERENCE_FACTOR
    }
    pub(super) fn network_carrier_sense_factor() -> f64 {
        NETWORK_CARRIER_SENSE_FACTOR
    }
    pub(super) fn network_mac_min_be() -> u8 {
        NETWORK_MAC_MIN_BE
    }
    pub(super) fn network_mac_max_be() -> u8 {
        NETWORK_MAC_MAX_BE
    }
    pub(super) fn network_mac_max_csma_backoffs() -> u8 {
        NETWORK_MAC_MAX_CSMA_BACKOFFS
    }
    pub(super) fn network_mac_max_frame_retries() -> u8 {
        NETWORK_MAC_MAX_FRAME_RETRIES
    }
    pub(super) fn network_unit_backoff_us() -> f64 {
        NETWORK_UNIT_BACKOFF_US
    }
    pub(super) fn network_cca_us() -> f64 {
        NETWORK_CCA_US
    }
    pub(super) fn network_turnaround_us() -> f64 {
        NETWORK_TURNAROUND_US
    }
    pub(super) fn network_ack_wait_us() -> f64 {
        NETWORK_ACK_WAIT_US
    }
    pub(super) fn network_mac_queue_frames() -> u32 {
        NETWORK_MAC_QUEUE_FRAMES
    }
    pub(super) fn network_border_router_queue_frames() -> u32 {
        NETWORK_BORDER_ROUTER_QUEUE_FRAMES
    }
    pub(super) fn network_channel_check_rate_hz() -> u32 {
        NETWORK_CHANNEL_CHECK_RATE_HZ
    }
    pub(super) fn network_strobe_gap_us() -> f64 {
        NETWORK_STROBE_GAP_US
    }
    pub(super) fn network_gprs_downlink_kbps() -> f64 {
        NETWORK_GPRS_DOWNLINK_KBPS
    }
    pub(super) fn network_gprs_modem_buffer_bytes() -> u64 {
        NETWORK_GPRS_MODEM_BUFFER_BYTES
    }
    pub(super) fn network_gprs_network_buffer_bytes() -> u64 {
        NETWORK_GPRS_NETWORK_BUFFER_BYTES
    }
    pub(super) fn network_gprs_loss() -> f64 {
        NETWORK_GPRS_LOSS
    }
    pub(super) fn link_downlink_kbps() -> f64 {
        LINK_DOWNLINK_KBPS
    }
    pub(super) fn link_uplink_kbps() -> f64 {
        LINK_UPLINK_KBPS
    }
    pub(super) fn link_downlink_delay_ms() -> f64 {
        LINK_DOWNLINK_DELAY_MS
    }
    pub(super) fn link_uplink_delay_ms() -> f64 {
        LINK_UPLINK_DELAY_MS
    }
    pub(super) fn link_mtu() -> u32 {
        LINK_MTU
    }
    pub(super) fn link_buffer_bytes() -> u64 {
        LINK_BUFFER_BYTES
    }
    pub(super) fn workload_exchanges() -> u32 {
        WORKLOAD_EXCHANGES
    }
    pub(super) fn workload_response_bytes() -> u32 {
        WORKLOAD_RESPONSE_BYTES
    }
    pub(super) fn workload_resource_bytes() -> u64 {
        WORKLOAD_RESOURCE_BYTES
    }
    pub(super) fn workload_block_szx() -> u8 {
        WORKLOAD_BLOCK_SZX
    }
    pub(super) fn coap_max_retransmit() -> u32 {
        COAP_MAX_RETRANSMIT
    }
    pub(super) fn coap_ack_timeout_s() -> f64 {
        COAP_ACK_TIMEOUT_S
    }
    pub(super) fn coap_ack_random_factor() -> f64 {
        COAP_ACK_RANDOM_FACTOR
    }
    pub(super) fn coap_max_timer_s() -> f64 {
        COAP_MAX_TIMER_S
    }
    pub(super) fn tcp_initial_window() -> u32 {
        TCP_INITIAL_WINDOW
    }
    pub(super) fn tcp_delayed_ack_ms() -> f64 {
        TCP_DELAYED_ACK_MS
    }
    pub(super) fn tcp_initial_rto_s() -> f64 {
        TCP_INITIAL_RTO_S
    }
    pub(super) fn tcp_max_rto_s() -> f64 {
        TCP_MAX_RTO_S
    }
    pub(super) fn tcp_syn_retries() -> u32 {
        TCP_SYN_RETRIES
    }
    pub(super) fn tcp_synack_retries() -> u32 {
        TCP_SYNACK_RETRIES
    }
    pub(super) fn tcp_hz() -> u32 {
        TCP_HZ
    }
    pub(super) fn name() -> String {
        NAME.into()
    }
    pub(super) fn seed() -> u64 {
        SEED
    }
    pub(super) fn replications() -> u64 {
        REPLICATIONS
    }
    pub(super) fn workload_clients() -> u32 {
        WORKLOAD_CLIENTS
    }
    pub(super) fn workload_batch() -> [u32; 2] {
        WORKLOAD_BATCH
    }
    pub(super) fn workload_start_spread_s() -> f64 {
        WORKLOAD_START_SPREAD_S
    }
    pub(super) fn coap_cc() -> String {
        COAP_CC.into()
    }
    pub(super) fn coap_nstart() -> u32 {
        COAP_NSTART
    }
    pub(super) fn tcp_limited_transmit() -> bool {
        TCP_LIMITED_TRANSMIT
    }
    pub(super) fn link_path_delay_ms() -> [f64; 2] {
        LINK_PATH_DELAY_MS
    }
}

/// One configuration: the testbed (`link`), the clients (`workload`, or `group` for several
/// client populations) and the CoAP settings (`coap`, `tcp`).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "coaplab configuration")]
pub struct RunConfig {
    /// The scenario's name: 1 to 200 characters, no control characters. It labels results;
    /// output file names (pcaps, traces) use it with every character outside A–Z, a–z, 0–9,
    /// `-`, `_` replaced by `_`, so a name is never a path.
    #[serde(default = "defaults::name")]
    #[schemars(length(min = 1, max = 200), regex(pattern = r"^[^\x00-\x1f\x7f]*$"))]
    pub name: String,
    /// Base seed; replication `r` derives its random streams from `(seed, r)`.
    #[serde(default = "defaults::seed")]
    #[schemars(range(max = 9223372036854775807u64))]
    pub seed: u64,
    /// Independent replications of the configuration.
    #[serde(default = "defaults::replications")]
    #[schemars(range(min = 1, max = 100000))]
    pub replications: u64,
    /// Record per-client timer / RTO traces (TCP: time-sequence traces).
    #[serde(default)]
    pub trace: bool,
    /// The constrained link between the router and the devices (docs/model.md).
    #[serde(default)]
    #[schemars(transform = strip_default)]
    pub link: LinkConfig,
    /// The clients and what they request.
    #[serde(default)]
    #[schemars(transform = strip_default)]
    pub workload: WorkloadConfig,
    /// The CoAP endpoints: transport, congestion control, transmission parameters.
    #[serde(default)]
    #[schemars(transform = strip_default)]
    pub coap: CoapConfig,
    /// The TCP model's parameters (transport `tcp` only; absent = the defaults of
    /// docs/model.md).
    #[serde(default)]
    #[schemars(transform = strip_default)]
    pub tcp: Option<TcpSection>,
    /// The network the clients and the server run on; absent = the reference star.
    #[serde(default)]
    #[schemars(transform = strip_default)]
    pub network: Option<NetworkConfig>,
    /// Client populations. Empty = one population described by `workload`, `coap` and
    /// `tcp`. Each group is fully resolved (the Python front applied the inheritance from
    /// `workload` / `coap` / `tcp`).
    #[serde(default)]
    #[schemars(transform = strip_default)]
    pub group: Vec<GroupConfig>,
}

/// Which network a run simulates. Keys other than `kind` describe the multi-hop IEEE
/// 802.15.4 networks (`chain`, `grid`, `dumbbell`; docs/networks.md) and the GPRS preset
/// (`gprs`); the star ignores them.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NetworkConfig {
    /// The network's kind: `star` (the reference testbed), `chain`, `grid`, `dumbbell`
    /// (multi-hop IEEE 802.15.4 meshes) or `gprs` (a GPRS modem link).
    #[serde(default)]
    pub kind: NetworkKind,
    /// Radio range, m: a frame reaches every node within this distance (unit disk).
    #[serde(default = "defaults::network_range_m")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(min = 0.001, max = 1e6))]
    pub range_m: f64,
    /// Interference range as a multiple of `range_m`: a transmission from a node within it
    /// corrupts a frame being received.
    #[serde(default = "defaults::network_interference_factor")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(min = 1.0, max = 100.0))]
    pub interference_factor: f64,
    /// Carrier-sense range as a multiple of `range_m`: clear channel assessment finds the
    /// channel busy while a node within it transmits.
    #[serde(default = "defaults::network_carrier_sense_factor")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(min = 0.0, max = 100.0))]
    pub carrier_sense_factor: f64,
    /// Probability that a frame (data or acknowledgement) is lost on a link even without a
    /// collision.
    #[serde(default)]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub link_loss: f64,
    /// MAC addressing: `long` (64-bit addresses, 21-byte MAC header) or `short` (16-bit, 9 B).
    #[serde(default)]
    #[schemars(extend("x-omit-if-absent" = true))]
    pub mac_addressing: MacAddressing,
    /// macMinBE (IEEE 802.15.4-2006 §7.5.1.4).
    #[serde(default = "defaults::network_mac_min_be")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(max = 8))]
    pub mac_min_be: u8,
    /// macMaxBE.
    #[serde(default = "defaults::network_mac_max_be")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(min = 3, max = 8))]
    pub mac_max_be: u8,
    /// macMaxCSMABackoffs: busy clear-channel assessments before a channel-access failure.
    #[serde(default = "defaults::network_mac_max_csma_backoffs")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(max = 5))]
    pub mac_max_csma_backoffs: u8,
    /// macMaxFrameRetries: retransmissions of an unacknowledged frame.
    #[serde(default = "defaults::network_mac_max_frame_retries")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(max = 7))]
    pub mac_max_frame_retries: u8,
    /// aUnitBackoffPeriod, µs (20 symbols of 16 µs).
    #[serde(default = "defaults::network_unit_backoff_us")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(min = 1.0, max = 1e6))]
    pub unit_backoff_us: f64,
    /// Clear channel assessment, µs (8 symbols).
    #[serde(default = "defaults::network_cca_us")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(min = 1.0, max = 1e6))]
    pub cca_us: f64,
    /// aTurnaroundTime, µs (12 symbols).
    #[serde(default = "defaults::network_turnaround_us")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(min = 0.0, max = 1e6))]
    pub turnaround_us: f64,
    /// macAckWaitDuration, µs (54 symbols).
    #[serde(default = "defaults::network_ack_wait_us")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(min = 1.0, max = 1e6))]
    pub ack_wait_us: f64,
    /// Frames a node's MAC queue holds (the one being sent included).
    #[serde(default = "defaults::network_mac_queue_frames")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(min = 1, max = 10000))]
    pub mac_queue_frames: u32,
    /// Frames the border router's MAC queue holds.
    #[serde(default = "defaults::network_border_router_queue_frames")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(min = 1, max = 10000))]
    pub border_router_queue_frames: u32,
    /// Meshes: clients outside the mesh, behind the border router over a path of
    /// `link.path_delay_ms` each way, sending to the mesh's sinks in turn. They follow the
    /// topology's own clients: client `i` for `i` ≥ the topology's clients.
    #[serde(default)]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(max = 100000))]
    pub outside_clients: u32,
    /// Meshes: one outside client per sink (client `k` of the outside clients talks to the
    /// `k`-th sink: the sinks the mesh clients use, then the others in node order). The
    /// workload must then have exactly (mesh clients + sinks) clients; `outside_clients` must
    /// be 0 or the number of sinks.
    #[serde(default)]
    #[schemars(extend("x-omit-if-absent" = true))]
    pub outside_clients_per_sink: bool,
    /// Radio duty cycling: `nullrdc` (always on) or `contikimac` (ContikiMAC-style: nodes wake
    /// up `channel_check_rate_hz` times a second; senders strobe a frame until it is taken).
    #[serde(default)]
    #[schemars(extend("x-omit-if-absent" = true))]
    pub rdc: RdcKind,
    /// ContikiMAC: channel checks per second (NETSTACK_RDC_CHANNEL_CHECK_RATE, Contiki's 8).
    #[serde(default = "defaults::network_channel_check_rate_hz")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(min = 1, max = 1000))]
    pub channel_check_rate_hz: u32,
    /// ContikiMAC: gap between strobed copies, µs (turnaround + acknowledgement by default).
    #[serde(default = "defaults::network_strobe_gap_us")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(min = 0.0, max = 1e6))]
    pub strobe_gap_us: f64,
    /// ContikiMAC: Contiki's phase optimisation (`WITH_PHASE_OPTIMIZATION`, on by default in
    /// Contiki 2.6's `core/net/mac/contikimac.c`): after an acknowledged frame the sender
    /// records when the receiver took it and later starts strobing `GUARD_TIME` before the
    /// receiver's next wake-up instead of at once.
    #[serde(default = "phase_optimization_default")]
    #[schemars(extend("x-omit-if-absent" = true))]
    pub contikimac_phase_optimization: bool,
    /// Meshes: how frames are lost on a link besides collisions: `fixed` (`link_loss`, and
    /// `lossy_links` per link) or `shadowing` (a packet reception ratio from the link's
    /// distance under log-normal shadowing, drawn per link from the seed; docs/networks.md).
    /// `lossy_links` still override the links they list.
    #[serde(default)]
    #[schemars(extend("x-omit-if-absent" = true))]
    pub link_loss_model: LinkLossModel,
    /// `shadowing`: transmit power, dBm.
    #[serde(default = "tx_power_default")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(min = -100.0, max = 100.0))]
    pub tx_power_dbm: f64,
    /// `shadowing`: noise floor, dBm.
    #[serde(default = "noise_floor_default")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(min = -200.0, max = 0.0))]
    pub noise_floor_dbm: f64,
    /// `shadowing`: path-loss exponent.
    #[serde(default = "path_loss_exponent_default")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(min = 1.0, max = 10.0))]
    pub path_loss_exponent: f64,
    /// `shadowing`: path loss at the reference distance of 1 m, dB.
    #[serde(default = "path_loss_d0_default")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(min = 0.0, max = 200.0))]
    pub path_loss_d0_db: f64,
    /// `shadowing`: standard deviation of the per-link shadowing, dB.
    #[serde(default = "shadowing_sigma_default")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(min = 0.0, max = 30.0))]
    pub shadowing_sigma_db: f64,
    /// The mesh MAC: `ieee802154` (unslotted CSMA/CA of IEEE 802.15.4-2006, the default) or
    /// `contiki` (Contiki 2.6's CSMA driver over NullRDC or ContikiMAC on a CC2420:
    /// per-neighbour queues, retries in units of the channel-check interval;
    /// `net/radio/mac/contiki.rs`, docs/networks.md); the names of the registry `MACS`.
    #[serde(default = "mac_default")]
    #[schemars(schema_with = "mac_schema")]
    #[schemars(extend("x-omit-if-absent" = true))]
    pub mac: String,
    /// `mac = "contiki"`: clock ticks per second (CLOCK_CONF_SECOND, 128 on Sky and Z1); the
    /// time base is `contiki_clock_second / channel_check_rate_hz` whole ticks.
    #[serde(default = "contiki_clock_second")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(min = 1, max = 1000000))]
    pub contiki_clock_second: u32,
    /// `mac = "contiki"`: neighbours with a queue at once (CSMA_MAX_NEIGHBOR_QUEUES, 2).
    #[serde(default = "contiki_neighbor_queues")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(min = 1, max = 1000))]
    pub contiki_max_neighbor_queues: u32,
    /// `mac = "contiki"`: transmissions of a frame before it is given up
    /// (SICSLOWPAN_MAX_MAC_TRANSMISSIONS, 4; Sky's contiki-conf.h sets 5).
    #[serde(default = "contiki_max_transmissions")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(min = 1, max = 255))]
    pub contiki_max_mac_transmissions: u8,
    /// `mac = "contiki"`: NULLRDC_802154_AUTOACK (0 on Sky and Z1: a frame counts as sent once
    /// on the air); `true`: wait for the acknowledgement and retry a missing one.
    #[serde(default)]
    #[schemars(extend("x-omit-if-absent" = true))]
    pub contiki_autoack: bool,
    /// `mac = "contiki"`, autoack: ACK_WAIT_TIME, µs (RTIMER_SECOND / 2500 = 13 ticks of
    /// 1/32768 s).
    #[serde(default = "contiki_ack_wait_us")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(min = 0.0, max = 1e6))]
    pub contiki_ack_wait_us: f64,
    /// `mac = "contiki"`, autoack: AFTER_ACK_DETECTED_WAIT_TIME, µs (RTIMER_SECOND / 1500 =
    /// 21 ticks of 1/32768 s).
    #[serde(default = "contiki_after_ack_wait_us")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(min = 0.0, max = 1e6))]
    pub contiki_after_ack_wait_us: f64,
    /// `mac = "contiki"`: 6LoWPAN reassembly timeout, s (SICSLOWPAN_CONF_MAXAGE, 8 on Sky and
    /// Z1).
    #[serde(default = "contiki_reassembly_s")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(min = 0.0, max = 1e6))]
    pub contiki_reassembly_timeout_s: f64,
    /// `mac = "contiki"`: the CPU's time from a packet's hand-off to its first frame's CCA, µs
    /// (reading the frame, 6LoWPAN, uIP, loading the radio; an estimate for the Sky's 3.9 MHz
    /// MSP430, `net/radio/contiki.rs` `PROCESSING_US`).
    #[serde(default = "contiki_processing_us")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(min = 0.0, max = 1e6))]
    pub contiki_processing_us: f64,
    /// Meshes: per-link loss probabilities that replace `link_loss` on those links (both
    /// directions; nodes by index).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-omit-if-absent" = true))]
    pub lossy_links: Vec<LossyLink>,
    /// GPRS: a plain serializer of this rate, kbit/s, as the uplink instead of the radio-block
    /// model (the preset before the radio model; docs/networks.md); absent = radio blocks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(min = 0.001, max = 1e6))]
    pub gprs_uplink_kbps: Option<f64>,
    /// GPRS: the uplink's coding scheme, 1–4 (CS-1…CS-4: 20, 30, 36, 50 octets of RLC data
    /// per radio block, TS 44.060 Table 10.2.1 less the RLC header).
    #[serde(default = "gprs_cs")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(min = 1, max = 4))]
    pub gprs_coding_scheme: u8,
    /// GPRS: uplink timeslots (PDCHs) the modem sends on, 1–8 (one radio block per timeslot
    /// every 20 ms, TS 45.002 §6.3.2.2).
    #[serde(default = "gprs_timeslots")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(min = 1, max = 8))]
    pub gprs_uplink_timeslots: u8,
    /// GPRS: octets added to each IP packet on the uplink before it is cut into radio blocks
    /// (SNDCP 4 + LLC 6 + RLC length indicator 1, `net::gprs::OVERHEAD_OCTETS`).
    #[serde(default = "gprs_overhead")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(max = 10000))]
    pub gprs_overhead_bytes: u32,
    /// GPRS: uplink TBF set-up (packet access on the CCCH) when the TBF had been released, ms.
    #[serde(default = "gprs_tbf_setup")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(min = 0.0, max = 1e7))]
    pub gprs_tbf_setup_ms: f64,
    /// GPRS: how long the network keeps an idle uplink TBF before releasing it (extended
    /// uplink TBF inactivity period), ms.
    #[serde(default = "gprs_tbf_hold")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(min = 0.0, max = 1e7))]
    pub gprs_tbf_hold_ms: f64,
    /// GPRS: uplink radio blocks each downlink packet costs (its Packet Downlink Ack/Nack).
    #[serde(default = "gprs_ack_blocks")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(max = 100))]
    pub gprs_ack_blocks: u32,
    /// GPRS: probability that an uplink radio block is received in error and sent again (RLC
    /// acknowledged mode), below 1.
    #[serde(default = "gprs_bler")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(min = 0.0, max = 0.99))]
    pub gprs_block_error_rate: f64,
    /// GPRS: mean duration of a fade (a period of poor radio conditions), ms; 0 = no fades.
    #[serde(default = "gprs_fade_mean")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(min = 0.0, max = 1e7))]
    pub gprs_fade_mean_ms: f64,
    /// GPRS: mean time between fades, ms.
    #[serde(default = "gprs_fade_interval")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(min = 0.001, max = 1e7))]
    pub gprs_fade_interval_ms: f64,
    /// GPRS: uplink block error rate during a fade, below 1.
    #[serde(default = "gprs_fade_bler")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(min = 0.0, max = 0.99))]
    pub gprs_fade_block_error_rate: f64,
    /// GPRS: downlink rate, kbit/s.
    #[serde(default = "defaults::network_gprs_downlink_kbps")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(min = 0.001, max = 1e6))]
    pub gprs_downlink_kbps: f64,
    /// GPRS: the modem's send buffer, bytes (tail drop).
    #[serde(default = "defaults::network_gprs_modem_buffer_bytes")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(min = 1, max = 1000000000000u64))]
    pub gprs_modem_buffer_bytes: u64,
    /// GPRS: the network's buffer in front of the downlink, bytes (tail drop).
    #[serde(default = "defaults::network_gprs_network_buffer_bytes")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(min = 1, max = 1000000000000u64))]
    pub gprs_network_buffer_bytes: u64,
    /// GPRS: one-way delay of each direction, uniform in `[min, max]` ms per packet, FIFO kept.
    #[serde(default = "gprs_delay")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(inner(range(min = 0.0, max = 1e7)))]
    pub gprs_delay_ms: [f64; 2],
    /// `file`: the mesh's nodes, node `i` being entry `i` (positions in m, role).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-omit-if-absent" = true))]
    pub nodes: Vec<MeshNodeSpec>,
    /// `file`: explicit links (pairs of node indices, both directions) instead of the unit
    /// disk; a node then hears, senses and is disturbed by its linked nodes only.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-omit-if-absent" = true))]
    pub links: Vec<[u16; 2]>,
    /// GPRS: probability that a packet is lost (each direction, independently).
    #[serde(default = "defaults::network_gprs_loss")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub gprs_loss: f64,
}

impl Default for NetworkConfig {
    /// Every key at its default.
    fn default() -> Self {
        serde_json::from_str("{}").expect("every key has a default")
    }
}

/// GPRS coding scheme CS-3: with one timeslot 36 octets per 20 ms = 14.4 kbit/s of RLC data,
/// the coding scheme closest to the CoCoA study's observed uplink rate of about 15 kbit/s
/// (Betzler et al. 2016, §V.A); docs/networks.md.
pub const GPRS_CODING_SCHEME: u8 = 3;
fn gprs_cs() -> u8 {
    GPRS_CODING_SCHEME
}
/// One uplink timeslot: a second one would double the rate beyond the observed 15 kbit/s.
pub const GPRS_UPLINK_TIMESLOTS: u8 = 1;
fn gprs_timeslots() -> u8 {
    GPRS_UPLINK_TIMESLOTS
}
fn gprs_overhead() -> u32 {
    crate::net::gprs::OVERHEAD_OCTETS
}
/// Uplink TBF set-up, ms: a random access on the RACH answered by an Immediate Assignment on
/// the AGCH (TS 44.018 §3.5.2) within one 51-multiframe of the CCCH (51 TDMA frames of
/// 4.615 ms = 235 ms, TS 45.002 §4.3.3); docs/networks.md.
pub const GPRS_TBF_SETUP_MS: f64 = 235.0;
fn gprs_tbf_setup() -> f64 {
    GPRS_TBF_SETUP_MS
}
/// Extended uplink TBF (TS 44.060 §9.3.1b): the network keeps an idle uplink TBF for an
/// inactivity period of its choice; 1 s, in the range networks used; docs/networks.md.
pub const GPRS_TBF_HOLD_MS: f64 = 1000.0;
fn gprs_tbf_hold() -> f64 {
    GPRS_TBF_HOLD_MS
}
/// One Packet Downlink Ack/Nack (TS 44.060 §11.2.6) per downlink packet: one RLC/MAC control
/// block, sent in the uplink block the final downlink block polls for (§9.3.2.4, §10.4.5).
pub const GPRS_ACK_BLOCKS: u32 = 1;
fn gprs_ack_blocks() -> u32 {
    GPRS_ACK_BLOCKS
}
/// Uplink block error rate outside fades: 0 — link adaptation keeps a coding scheme whose
/// errors are negligible in normal conditions; the errors come in fades (below). With the
/// fades' defaults the mean block error rate is 1/(1 + 4) × 65 % = 13 %, close to the 10 % at
/// which 3GPP specifies GPRS receivers' performance (TS 45.005 §6.2, §6.3); RLC acknowledged
/// mode resends the blocks in error (TS 44.060 §9.1); docs/networks.md.
pub const GPRS_BLOCK_ERROR_RATE: f64 = 0.0;
fn gprs_bler() -> f64 {
    GPRS_BLOCK_ERROR_RATE
}
/// Fades (periods of poor radio conditions: fading, interference, coding-scheme changes):
/// 1 s on average every 4 s, 65 % of the blocks in error meanwhile. Not from a standard:
/// calibrated (docs/networks.md, docs/validation.md) so that the RTT varies from one exchange
/// to the next as much as the CoCoA study's RTO figures show (Betzler et al. 2016, Table II:
/// CoCoA's mean initial RTO is 1.9–2.4 times its mean RTT).
pub const GPRS_FADE_MEAN_MS: f64 = 1000.0;
fn gprs_fade_mean() -> f64 {
    GPRS_FADE_MEAN_MS
}
/// Mean time between fades (docs/networks.md).
pub const GPRS_FADE_INTERVAL_MS: f64 = 4000.0;
fn gprs_fade_interval() -> f64 {
    GPRS_FADE_INTERVAL_MS
}
/// Block error rate during a fade (docs/networks.md).
pub const GPRS_FADE_BLOCK_ERROR_RATE: f64 = 0.65;
fn gprs_fade_bler() -> f64 {
    GPRS_FADE_BLOCK_ERROR_RATE
}
/// GPRS one-way delay beyond the radio (BSS, SGSN, GGSN, the Internet to the server), uniform
/// per packet, ms: calibrated on the CoCoA study's 10-client RTT (Betzler et al. 2016,
/// Table II: 661 ms), the one point where the uplink queue does not hide it; docs/networks.md.
pub const GPRS_DELAY_MS: [f64; 2] = [100.0, 200.0];
fn gprs_delay() -> [f64; 2] {
    GPRS_DELAY_MS
}

/// Contiki 2.6 `core/net/mac/contikimac.c`: `#define WITH_PHASE_OPTIMIZATION 1` unless the
/// channel check rate is 64 Hz or more.
pub const CONTIKIMAC_PHASE_OPTIMIZATION: bool = true;
fn phase_optimization_default() -> bool {
    CONTIKIMAC_PHASE_OPTIMIZATION
}

/// The log-normal shadowing defaults of the link-layer model of Zuniga & Krishnamachari
/// ("Analyzing the transitional region in low power wireless links", IEEE SECON 2004) as
/// TinyOS 2.x's TOSSIM ships them (the `usc-topologies` tutorial's configuration:
/// PATH_LOSS_EXPONENT 4.7, SHADOWING_STANDARD_DEVIATION 3.2, D0 1.0, PL_D0 55.4,
/// NOISE_FLOOR −105.0), with the CC2420's highest output power, 0 dBm (TelosB).
pub const SHADOWING_PATH_LOSS_EXPONENT: f64 = 4.7;
pub const SHADOWING_SIGMA_DB: f64 = 3.2;
pub const SHADOWING_PL_D0_DB: f64 = 55.4;
pub const SHADOWING_NOISE_FLOOR_DBM: f64 = -105.0;
pub const SHADOWING_TX_POWER_DBM: f64 = 0.0;
fn tx_power_default() -> f64 {
    SHADOWING_TX_POWER_DBM
}
fn noise_floor_default() -> f64 {
    SHADOWING_NOISE_FLOOR_DBM
}
fn path_loss_exponent_default() -> f64 {
    SHADOWING_PATH_LOSS_EXPONENT
}
fn path_loss_d0_default() -> f64 {
    SHADOWING_PL_D0_DB
}
fn shadowing_sigma_default() -> f64 {
    SHADOWING_SIGMA_DB
}

/// How a mesh link loses frames besides collisions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum LinkLossModel {
    // `link_loss` on every link, `lossy_links` on the links they list.
    #[default]
    Fixed,
    // A per-link packet reception ratio from distance and log-normal shadowing.
    Shadowing,
}

/// A mesh link with its own loss probability.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LossyLink {
    pub a: u16,
    pub b: u16,
    /// Probability that a frame on the link (data or acknowledgement) is lost.
    #[schemars(range(min = 0.0, max = 1.0))]
    pub loss: f64,
}

/// One node of a `file` mesh.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MeshNodeSpec {
    /// Position, m (ignored with explicit `links`).
    #[serde(default)]
    #[schemars(range(min = -1e6, max = 1e6))]
    pub x: f64,
    #[serde(default)]
    #[schemars(range(min = -1e6, max = 1e6))]
    pub y: f64,
    pub role: MeshRole,
    /// A client's sink (node index); absent = the first sink.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(max = 65534))]
    pub sink: Option<u16>,
}

/// What a node of a `file` mesh does: the border router (exactly one), a sink (runs the CoAP
/// server), a client (runs one CoAP client), or a plain router.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum MeshRole {
    BorderRouter,
    Sink,
    Client,
    Router,
}

/// Radio duty cycling of the mesh nodes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RdcKind {
    #[default]
    Nullrdc,
    Contikimac,
}

/// `network.mac`: a name of the MAC registry (`crate::net::radio::mac::MACS`, the first the
/// default), so a MAC added there is selectable without touching this file.
fn mac_schema(_: &mut SchemaGenerator) -> Schema {
    let names: Vec<&str> = crate::net::radio::mac::MACS
        .iter()
        .map(|e| e.name)
        .collect();
    schemars::json_schema!({ "type": "string", "enum": names })
}
fn mac_default() -> String {
    crate::net::radio::mac::MACS[0].name.into()
}

fn contiki_clock_second() -> u32 {
    crate::net::radio::contiki::CLOCK_SECOND
}
fn contiki_neighbor_queues() -> u32 {
    crate::net::radio::contiki::CSMA_MAX_NEIGHBOR_QUEUES
}
fn contiki_max_transmissions() -> u8 {
    crate::net::radio::contiki::SICSLOWPAN_MAX_MAC_TRANSMISSIONS
}
fn contiki_ack_wait_us() -> f64 {
    crate::net::radio::contiki::ACK_WAIT_US
}
fn contiki_after_ack_wait_us() -> f64 {
    crate::net::radio::contiki::AFTER_ACK_DETECTED_WAIT_US
}
fn contiki_processing_us() -> f64 {
    crate::net::radio::contiki::PROCESSING_US
}
fn contiki_reassembly_s() -> f64 {
    crate::net::radio::contiki::SICSLOWPAN_REASS_MAXAGE_S
}

/// IEEE 802.15.4 MAC addressing of the mesh nodes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum MacAddressing {
    // 64-bit extended addresses (Contiki's default).
    #[default]
    Long,
    // 16-bit short addresses.
    Short,
}

/// A network kind: `star`, the reference testbed (clients behind one constrained link);
/// `chain`, `grid`, `dumbbell`, multi-hop IEEE 802.15.4 meshes; `gprs`, a GPRS modem link;
/// `file`, a mesh whose nodes the scenario lists (`network.nodes`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum NetworkKind {
    #[default]
    Star,
    Chain,
    Grid,
    Dumbbell,
    Gprs,
    File,
}

impl NetworkKind {
    pub const fn as_str(self) -> &'static str {
        match self {
            NetworkKind::Star => "star",
            NetworkKind::Chain => "chain",
            NetworkKind::Grid => "grid",
            NetworkKind::Dumbbell => "dumbbell",
            NetworkKind::Gprs => "gprs",
            NetworkKind::File => "file",
        }
    }
}

/// One client population (resolved): its own workload, CoAP settings and, with transport
/// `tcp`, TCP model.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GroupConfig {
    /// Unique within the run; per-group metrics and client rows carry it.
    #[schemars(regex(pattern = r"^[A-Za-z0-9_-]{1,64}$"))]
    pub name: String,
    pub workload: WorkloadConfig,
    pub coap: CoapConfig,
    #[serde(default)]
    pub tcp: Option<TcpSection>,
}

/// One client population as a scenario file writes it (`[[group]]`): every key of the file's
/// `[workload]`, `[coap]` and `[tcp]` is inherited unless the group sets it.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GroupFile {
    /// Unique within the scenario: letters, digits, `-`, `_` (at most 64).
    #[schemars(regex(pattern = r"^[A-Za-z0-9_-]{1,64}$"))]
    pub name: String,
    /// Shortcut for `workload.clients`.
    #[schemars(range(min = 1, max = 100000))]
    pub clients: Option<u32>,
    /// Overrides of the file's `[workload]` keys.
    #[schemars(transform = strip_default)]
    pub workload: Option<WorkloadConfig>,
    /// Overrides of the file's `[coap]` keys.
    #[schemars(transform = strip_default)]
    pub coap: Option<CoapConfig>,
    /// Overrides of the file's `[tcp]` keys (transport `tcp` only).
    #[schemars(transform = strip_default)]
    pub tcp: Option<TcpSection>,
}

/// Removes the `default` of a whole section (its keys carry their own).
fn strip_default(schema: &mut Schema) {
    schema.remove("default");
}

/// The constrained link (docs/model.md): a bottleneck buffer in front of the downlink, the
/// uplink, and the router ↔ server path.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LinkConfig {
    /// Server → devices rate, kbit/s (1 kbit = 1000 bit); at least 1 bit/s.
    #[serde(default = "defaults::link_downlink_kbps")]
    #[schemars(range(min = 0.001, max = 1e6))]
    pub downlink_kbps: f64,
    /// Devices → server rate, kbit/s; at least 1 bit/s.
    #[serde(default = "defaults::link_uplink_kbps")]
    #[schemars(range(min = 0.001, max = 1e6))]
    pub uplink_kbps: f64,
    /// One-way propagation delay of the downlink, ms.
    #[serde(default = "defaults::link_downlink_delay_ms")]
    #[schemars(range(min = 0.0, max = 1e7))]
    pub downlink_delay_ms: f64,
    /// One-way propagation delay of the uplink, ms.
    #[serde(default = "defaults::link_uplink_delay_ms")]
    #[schemars(range(min = 0.0, max = 1e7))]
    pub uplink_delay_ms: f64,
    /// Largest IP packet, bytes (296: TCP MSS 256).
    #[serde(default = "defaults::link_mtu")]
    #[schemars(range(min = 68, max = 65535))]
    pub mtu: u32,
    /// Bottleneck buffer in front of the downlink, bytes (tail drop).
    #[serde(default = "defaults::link_buffer_bytes")]
    #[schemars(range(max = 1000000000000u64))]
    pub buffer_bytes: u64,
    /// Buffer in front of the uplink, bytes; absent = unlimited.
    #[serde(default)]
    #[schemars(range(max = 1000000000000u64))]
    pub uplink_buffer_bytes: Option<u64>,
    /// Router ↔ server delay, uniform in `[min, max]` ms per packet (FIFO kept).
    #[serde(default = "defaults::link_path_delay_ms")]
    #[schemars(inner(range(min = 0.0, max = 1e7)))]
    pub path_delay_ms: [f64; 2],
    /// Link-layer bytes added to every IP packet when serializing.
    #[serde(default)]
    #[schemars(range(max = 1000))]
    pub link_overhead_bytes: u32,
    /// Error profile of each direction of the constrained link: a profile name or a table
    /// with a custom two-state chain.
    #[serde(default)]
    pub errors: ErrorsConfig,
}

/// `none`, `low`, `medium` or `high` (docs/model.md), or a table with a custom chain.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum ErrorsConfig {
    Profile(ErrorProfile),
    Chain(ChainTable),
}

impl Default for ErrorsConfig {
    fn default() -> Self {
        ErrorsConfig::Profile(ErrorProfile::None)
    }
}

/// A named error profile: `none`, `low` (Bernoulli), `medium` or `high` (Gilbert–Elliott).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ErrorProfile {
    None,
    Low,
    Medium,
    High,
}

impl ErrorProfile {
    pub const fn as_str(self) -> &'static str {
        match self {
            ErrorProfile::None => "none",
            ErrorProfile::Low => "low",
            ErrorProfile::Medium => "medium",
            ErrorProfile::High => "high",
        }
    }
}

impl std::fmt::Display for ErrorProfile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A custom Gilbert–Elliott chain: each state's sojourn is exponential with the given mean,
/// redrawn until within `[min, max]` (min <= mean <= max), times in ms (at least 0.1 ms);
/// `*_loss` is the loss probability in that state.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ChainTable {
    #[schemars(range(min = 0.1, max = 1e7))]
    pub good_mean_ms: f64,
    #[schemars(range(min = 0.1, max = 1e7))]
    pub good_min_ms: f64,
    #[schemars(range(min = 0.1, max = 1e7))]
    pub good_max_ms: f64,
    #[schemars(range(min = 0.0, max = 1.0))]
    pub good_loss: f64,
    #[schemars(range(min = 0.1, max = 1e7))]
    pub bad_mean_ms: f64,
    #[schemars(range(min = 0.1, max = 1e7))]
    pub bad_min_ms: f64,
    #[schemars(range(min = 0.1, max = 1e7))]
    pub bad_max_ms: f64,
    #[schemars(range(min = 0.0, max = 1.0))]
    pub bad_loss: f64,
}

impl ChainTable {
    pub fn params(&self) -> ChainParams {
        use coaplab_cc::Duration;
        let ms = |v: f64| Duration::from_secs_f64(v / 1000.0);
        ChainParams {
            good_mean: ms(self.good_mean_ms),
            good_min: ms(self.good_min_ms),
            good_max: ms(self.good_max_ms),
            good_loss: self.good_loss,
            bad_mean: ms(self.bad_mean_ms),
            bad_min: ms(self.bad_min_ms),
            bad_max: ms(self.bad_max_ms),
            bad_loss: self.bad_loss,
        }
    }
}

/// What the clients do: `continuous` (back-to-back requests), `random` (batches at random
/// times), `burst` (continuous background clients plus a burst of clients at `burst_at_s`),
/// `firmware` (a Block2 transfer of `resource_bytes`), `periodic` (a request every
/// `period_s`, dropped at the application while NSTART exchanges are outstanding).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum WorkloadKind {
    #[default]
    Continuous,
    Random,
    Burst,
    Firmware,
    // Each client creates a request every `period_s` (random phase) until `duration_s`; a
    // request created while NSTART exchanges are outstanding is dropped and counted.
    Periodic,
}

/// How clients start (docs/model.md): all within one spread, or launched one after another.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum StartModel {
    // Offsets uniform in `[0, start_spread_s]` (the default model).
    #[default]
    Uniform,
    // Client `i` at `i · start_interval_s` plus a jitter uniform in `[0, start_spread_s]`.
    Sequential,
}

/// The clients and their requests (docs/model.md).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkloadConfig {
    #[serde(default)]
    pub kind: WorkloadKind,
    /// Number of clients (burst: ignored, see `background` and `burst_clients`).
    #[serde(default = "defaults::workload_clients")]
    #[schemars(range(min = 1, max = 100000))]
    pub clients: u32,
    /// Exchanges per client (continuous, random, burst background).
    #[serde(default = "defaults::workload_exchanges")]
    #[schemars(range(min = 1, max = 10000000))]
    pub exchanges: u32,
    /// Continuous or burst only: clients keep going until this deadline (s) instead of
    /// counting exchanges.
    #[serde(default)]
    #[schemars(range(min = 0.001, max = 1e7))]
    pub duration_s: Option<f64>,
    /// Random clients: batch size uniform in `[batch[0], batch[1]]`.
    #[serde(default = "defaults::workload_batch")]
    #[schemars(inner(range(min = 1, max = 1000000)))]
    pub batch: [u32; 2],
    /// Each client starts at an offset uniform in `[0, start_spread_s]`, s. The default is
    /// fixed by the 50-client reference (docs/validation.md).
    #[serde(default = "defaults::workload_start_spread_s")]
    #[schemars(range(min = 0.0, max = 1e6))]
    pub start_spread_s: f64,
    /// How the clients' start offsets are laid out: `uniform` (each client at an offset
    /// uniform in `[0, start_spread_s]`) or `sequential` (processes launched one after
    /// another: client `i` of the population at `i · start_interval_s`, plus a jitter uniform
    /// in `[0, start_spread_s]`). docs/model.md, docs/validation.md.
    #[serde(default)]
    #[schemars(extend("x-omit-if-absent" = true))]
    pub start: StartModel,
    /// `sequential` only: the launch interval between consecutive clients, s.
    #[serde(default)]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(min = 0.0, max = 1e4))]
    pub start_interval_s: f64,
    /// Payload of each piggybacked 2.05 response, bytes.
    #[serde(default = "defaults::workload_response_bytes")]
    #[schemars(range(max = 65000))]
    pub response_bytes: u32,
    /// Firmware: resource size, bytes.
    #[serde(default = "defaults::workload_resource_bytes")]
    #[schemars(range(min = 1, max = 10000000000u64))]
    pub resource_bytes: u64,
    /// Firmware: Block2 size exponent (RFC 7959 §2.2, block = 2^(SZX+4) bytes; 4 = 256 B).
    #[serde(default = "defaults::workload_block_szx")]
    #[schemars(range(max = 6))]
    pub block_szx: u8,
    /// Burst: continuous background clients (then `clients` is ignored).
    #[serde(default)]
    #[schemars(range(max = 100000))]
    pub background: u32,
    /// Burst (required there, not allowed otherwise): when the burst starts, s.
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 1e7))]
    pub burst_at_s: Option<f64>,
    /// Burst (required there, not allowed otherwise): clients in the burst.
    #[serde(default)]
    #[schemars(range(min = 1, max = 100000))]
    pub burst_clients: Option<u32>,
    /// Burst (required there, not allowed otherwise): exchanges per burst client.
    #[serde(default)]
    #[schemars(range(min = 1, max = 10000000))]
    pub burst_exchanges: Option<u32>,
    /// Burst only: the settling time is capped here, s — a burst whose 80 % of exchanges has
    /// not completed by `burst_at_s` + this reports it, with `settled = false` (the CoCoA
    /// study's GPRS burst figure caps at 180 s, Betzler et al. 2016). Absent = no cap
    /// (a burst that never settles reports no settling time).
    #[schemars(extend("x-omit-if-absent" = true))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.001, max = 1e7))]
    pub settling_cap_s: Option<f64>,
    /// Periodic (required there, not allowed otherwise): seconds between a client's requests.
    #[schemars(extend("x-omit-if-absent" = true))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.001, max = 1e6))]
    pub period_s: Option<f64>,
    /// Size of each request as a whole IPv6 packet, bytes (60 = the plain GET; larger: a
    /// request with a payload of `request_bytes` − 61 bytes); absent = the plain GET.
    #[schemars(extend("x-omit-if-absent" = true))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 60, max = 1280))]
    pub request_bytes: Option<u32>,
}

/// `udp` (CoAP over UDP with the algorithm library) or `tcp` (CoAP over TCP, RFC 8323, on
/// the TCP model).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Transport {
    #[default]
    Udp,
    Tcp,
}

impl Transport {
    pub const fn as_str(self) -> &'static str {
        match self {
            Transport::Udp => "udp",
            Transport::Tcp => "tcp",
        }
    }
}

/// The CoAP endpoints (RFC 7252 §4.8 transmission parameters).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CoapConfig {
    #[serde(default)]
    pub transport: Transport,
    /// The congestion-control algorithm (docs/algorithms.md) with transport `udp`, the TCP
    /// congestion controller (`newreno`) with transport `tcp`.
    #[serde(default = "defaults::coap_cc")]
    #[schemars(schema_with = "cc_schema")]
    pub cc: String,
    /// MAX_RETRANSMIT (RFC 7252 default 4; the literature uses 20).
    #[serde(default = "defaults::coap_max_retransmit")]
    #[schemars(range(max = 63))]
    pub max_retransmit: u32,
    /// NSTART: outstanding exchanges per client.
    #[serde(default = "defaults::coap_nstart")]
    #[schemars(range(min = 1, max = 64))]
    pub nstart: u32,
    /// ACK_TIMEOUT, s.
    #[serde(default = "defaults::coap_ack_timeout_s")]
    #[schemars(range(min = 0.001, max = 3600.0))]
    pub ack_timeout_s: f64,
    /// ACK_RANDOM_FACTOR.
    #[serde(default = "defaults::coap_ack_random_factor")]
    #[schemars(range(min = 1.0, max = 10.0))]
    pub ack_random_factor: f64,
    /// Timer cap of the non-CoCoA families, s.
    #[serde(default = "defaults::coap_max_timer_s")]
    #[schemars(range(min = 0.001, max = 86400.0))]
    pub max_timer_s: f64,
    /// NON traffic (docs/algorithms.md "NON traffic"): when given (> 0), each client's
    /// `workload.exchanges` messages are produced at this rate, messages per second, and sent
    /// as Non-confirmable requests (RFC 7252 §4.3) answered by NON responses, without
    /// retransmission. `continuous` workloads only. Absent = CON requests only.
    #[serde(default)]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(min = 0.0, max = 1000.0))]
    pub non_rate_per_s: f64,
    /// With NON traffic: apply CoCoA's NON rule (draft-ietf-core-cocoa-03 §5): NONs are sent
    /// at most once per RTO (the algorithm's current base RTO) and 2 of every 16 messages
    /// (message 0 and 8 of each 16) are sent as CON exchanges, which feed the RTO estimate.
    #[serde(default)]
    #[schemars(extend("x-omit-if-absent" = true))]
    pub non_rule: bool,
}

/// `coap.cc`: a string, one of the UDP algorithms (every entry of the registry,
/// `coaplab_cc::registry::BUILTIN` — the list the simulator builds from), the TCP controllers
/// (`crate::tcp::congestion::CONTROLLERS`), an algorithm written in Python,
/// `python:FILE:CLASS` ([`PYTHON_CC_PATTERN`]; docs/algorithms.md), or one in C behind the C
/// API, `c:LIB:NAME` ([`C_CC_PATTERN`]; docs/c-api.md).
fn cc_schema(_: &mut SchemaGenerator) -> Schema {
    let names: Vec<&str> = coaplab_cc::registry::BUILTIN
        .iter()
        .map(|e| e.name)
        .chain(tcp_controllers())
        .collect();
    schemars::json_schema!({
        "anyOf": [
            { "type": "string", "enum": names },
            { "type": "string", "pattern": PYTHON_CC_PATTERN },
            { "type": "string", "pattern": C_CC_PATTERN },
        ]
    })
}

/// `python:FILE:CLASS`: a file path (any characters, a colon included), a colon, a Python
/// class name (the identifier `coaplab.algorithm.load_class` imports).
pub const PYTHON_CC_PATTERN: &str = "^python:.+:[A-Za-z_][A-Za-z0-9_]*$";

/// `c:LIB:NAME`: a shared library's path (any characters, a colon included), a colon, the
/// algorithm name its `coaplab_cc_init` accepts (`coaplab.capi.load_c_class` loads it).
pub const C_CC_PATTERN: &str = "^c:.+:[A-Za-z0-9_.@+-]+$";

/// Nagle's algorithm in the TCP model: `minshall` (Linux's variant), `classic` (RFC 896 as
/// written) or `off`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum NagleMode {
    #[default]
    Minshall,
    Classic,
    Off,
}

impl NagleMode {
    pub const fn as_str(self) -> &'static str {
        match self {
            NagleMode::Minshall => "minshall",
            NagleMode::Classic => "classic",
            NagleMode::Off => "off",
        }
    }
}

/// The TCP model's parameters (docs/model.md; `crate::tcp::TcpConfig` says what each does).
/// The MSS is `link.mtu` − 40.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TcpSection {
    /// Initial window, segments.
    #[serde(default = "defaults::tcp_initial_window")]
    #[schemars(range(min = 1, max = 1000))]
    pub initial_window: u32,
    /// Slow-start growth limit per ACK, segments; absent = every acknowledged byte (Linux).
    #[serde(default)]
    #[schemars(range(min = 1, max = 1000))]
    pub slow_start_limit: Option<u32>,
    #[serde(default)]
    pub nagle: NagleMode,
    /// RFC 3042 Limited Transmit.
    #[serde(default = "defaults::tcp_limited_transmit")]
    pub limited_transmit: bool,
    /// Delayed-ACK timer, ms.
    #[serde(default = "defaults::tcp_delayed_ack_ms")]
    #[schemars(range(min = 0.0, max = 10000.0))]
    pub delayed_ack_ms: f64,
    /// Initial RTO (also of SYN and SYN-ACK), s.
    #[serde(default = "defaults::tcp_initial_rto_s")]
    #[schemars(range(min = 0.001, max = 3600.0))]
    pub initial_rto_s: f64,
    /// RTO cap, s (at least `initial_rto_s`).
    #[serde(default = "defaults::tcp_max_rto_s")]
    #[schemars(range(min = 0.001, max = 86400.0))]
    pub max_rto_s: f64,
    /// SYN retransmissions before a connection attempt fails.
    #[serde(default = "defaults::tcp_syn_retries")]
    #[schemars(range(max = 1000))]
    pub syn_retries: u32,
    /// SYN-ACK retransmissions before the server gives up.
    #[serde(default = "defaults::tcp_synack_retries")]
    #[schemars(range(max = 1000))]
    pub synack_retries: u32,
    /// Timer tick rate of every host (Linux `HZ`): the data, SYN and SYN-ACK retransmission
    /// timers fire on the timer wheel's granularity (docs/model.md "Host timers"); 0 = exact
    /// timers. All TCP groups of a run must agree (the server is one host).
    #[serde(default = "defaults::tcp_hz")]
    #[schemars(range(max = 10000))]
    pub hz: u32,
    /// Acknowledge every in-order data segment at once instead of every second full one.
    #[serde(default)]
    pub ack_every_segment: bool,
}

macro_rules! default_from_serde {
    ($($t:ty),*) => {$(
        impl Default for $t {
            /// Every key at its default.
            fn default() -> Self {
                serde_json::from_str("{}").expect("every key has a default")
            }
        }
    )*};
}
default_from_serde!(LinkConfig, WorkloadConfig, CoapConfig, TcpSection);

impl RunConfig {
    pub fn from_json(text: &str) -> Result<Self, String> {
        serde_json::from_str(text).map_err(|e| format!("invalid configuration: {e}"))
    }
}

/// The JSON Schema of scenario files (pretty-printed JSON text): the configuration keys of
/// [`RunConfig`] with `[[group]]` in the file form ([`GroupFile`]) and the `[sweep]` table.
pub fn scenario_schema() -> String {
    let mut generator = schemars::generate::SchemaSettings::draft2020_12().into_generator();
    let group = generator.subschema_for::<GroupFile>();
    let mut root = generator.into_root_schema_for::<RunConfig>();
    root.insert(
        "$schema".into(),
        "https://json-schema.org/draft/2020-12/schema".into(),
    );
    root.insert("title".into(), "coaplab scenario file".into());
    root.insert(
        "description".into(),
        "A coaplab scenario file (TOML): the testbed, the clients, the CoAP settings and \
         optionally a sweep (docs/experiments.md). Every key is optional."
            .into(),
    );
    let props = root
        .get_mut("properties")
        .and_then(|p| p.as_object_mut())
        .expect("RunConfig has properties");
    props.insert(
        "group".into(),
        serde_json::json!({
            "description": "Client populations: each inherits the file's [workload], [coap] \
                            and [tcp] and overrides keys; names are unique.",
            "type": "array",
            "items": group.to_value(),
        }),
    );
    props.insert(
        "sweep".into(),
        serde_json::json!({
            "description": "Dotted key (\"coap.cc\", \"link.buffer_bytes\", \
                            \"group.<name>.coap.cc\", \"group.<name>.clients\", ...) -> \
                            non-empty list of values; the cartesian product is run, first \
                            key slowest.",
            "type": "object",
            "additionalProperties": {"type": "array", "minItems": 1},
        }),
    );
    if let Some(defs) = root.get_mut("$defs").and_then(|d| d.as_object_mut()) {
        defs.remove("GroupConfig");
    }
    let mut text = serde_json::to_string_pretty(&root).expect("schema serializes");
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_configuration_is_the_reference_testbed() {
        // The defaults of docs/model.md: 30 / 60 kbit/s, 400 / 200 ms, MTU 296, 2500 B.
        let c = RunConfig::from_json("{}").unwrap();
        assert_eq!(c.name, "scenario");
        assert_eq!((c.seed, c.replications, c.trace), (1, 1, false));
        let l = &c.link;
        assert_eq!((l.downlink_kbps, l.uplink_kbps), (30.0, 60.0));
        assert_eq!((l.downlink_delay_ms, l.uplink_delay_ms), (400.0, 200.0));
        assert_eq!(
            (l.mtu, l.buffer_bytes, l.uplink_buffer_bytes),
            (296, 2500, None)
        );
        assert_eq!(l.path_delay_ms, [10.0, 20.0]);
        assert!(matches!(
            l.errors,
            ErrorsConfig::Profile(ErrorProfile::None)
        ));
        assert_eq!(c.workload.kind, WorkloadKind::Continuous);
        assert_eq!((c.workload.clients, c.workload.exchanges), (1, 50));
        assert_eq!(c.workload.batch, [1, 10]);
        assert_eq!(
            (c.coap.transport, c.coap.cc.as_str()),
            (Transport::Udp, "cocoa")
        );
        assert_eq!((c.coap.max_retransmit, c.coap.nstart), (4, 1));
        assert!(c.tcp.is_none() && c.network.is_none() && c.group.is_empty());
        let t = TcpSection::default();
        assert_eq!(
            (t.initial_window, t.nagle, t.syn_retries),
            (4, NagleMode::Minshall, 40)
        );
    }

    #[test]
    fn unknown_keys_and_values_are_refused() {
        for bad in [
            r#"{"link": {"bufer_bytes": 1}}"#,
            r#"{"coap": {"transport": "quic"}}"#,
            r#"{"workload": {"kind": "steady"}}"#,
            r#"{"link": {"errors": "heavy"}}"#,
            r#"{"network": {"kind": "mesh"}}"#,
        ] {
            assert!(RunConfig::from_json(bad).is_err(), "{bad}");
        }
    }

    fn prop<'a>(schema: &'a serde_json::Value, def: &str, key: &str) -> &'a serde_json::Value {
        &schema["$defs"][def]["properties"][key]
    }

    #[test]
    fn the_bounds_keep_derived_integers_in_range() {
        let schema: serde_json::Value = serde_json::from_str(&scenario_schema()).unwrap();
        // Rates: the smallest allowed rate is 0.001 kbit/s, 0.001 × 1000 = 1 bit/s (not 0).
        for key in ["downlink_kbps", "uplink_kbps"] {
            let min = prop(&schema, "LinkConfig", key)["minimum"]
                .as_f64()
                .unwrap();
            assert_eq!((min * 1000.0).round() as u64, 1);
        }
        // Delays: 1e7 ms = 1e13 ns, far below u64::MAX ≈ 1.8e19 ns.
        for key in ["downlink_delay_ms", "uplink_delay_ms"] {
            let max = prop(&schema, "LinkConfig", key)["maximum"]
                .as_f64()
                .unwrap();
            assert_eq!(max, MAX_DELAY_MS);
        }
        assert_eq!(
            prop(&schema, "LinkConfig", "path_delay_ms")["items"]["maximum"].as_f64(),
            Some(MAX_DELAY_MS)
        );
        assert!(MAX_DELAY_MS * 1e6 < u64::MAX as f64 / 1e5);
        // Gilbert–Elliott sojourns: at least 0.1 ms = 100 000 ns, never 0.
        for key in ["good_min_ms", "good_mean_ms", "bad_min_ms", "bad_max_ms"] {
            let min = prop(&schema, "ChainTable", key)["minimum"]
                .as_f64()
                .unwrap();
            assert_eq!(min, 0.1);
            assert_eq!(
                coaplab_cc::Duration::from_secs_f64(min / 1000.0).nanos(),
                100_000
            );
        }
    }

    #[test]
    fn the_scenario_schema_describes_files() {
        let schema: serde_json::Value = serde_json::from_str(&scenario_schema()).unwrap();
        let top: Vec<&str> = schema["properties"]
            .as_object()
            .unwrap()
            .keys()
            .map(|k| k.as_str())
            .collect();
        assert_eq!(
            top,
            [
                "name",
                "seed",
                "replications",
                "trace",
                "link",
                "workload",
                "coap",
                "tcp",
                "network",
                "group",
                "sweep"
            ]
        );
        assert_eq!(
            schema["$defs"]["GroupFile"]["required"],
            serde_json::json!(["name"])
        );
        // coap.cc: every registered name (both registries, walked), or `python:FILE:CLASS`.
        let cc = &prop(&schema, "CoapConfig", "cc")["anyOf"];
        let names = cc[0]["enum"].as_array().unwrap();
        let registered: Vec<&str> = coaplab_cc::registry::BUILTIN
            .iter()
            .map(|e| e.name)
            .chain(tcp_controllers())
            .collect();
        assert_eq!(names, &registered);
        assert!(registered.contains(&"cocoa-fb2") && registered.contains(&"cubic"));
        assert_eq!(cc[1]["pattern"], PYTHON_CC_PATTERN);
        assert_eq!(cc[2]["pattern"], C_CC_PATTERN);
        assert_eq!(prop(&schema, "LinkConfig", "mtu")["default"], 296);
        assert!(prop(&schema, "LinkConfig", "downlink_delay_ms")["default"].is_f64());
    }
}
