//! Every default of the scenario keys, one constant per key, named after it (`link.uplink_kbps`
//! → `LINK_UPLINK_KBPS`), with the first sentence of the key's documentation (the field's doc
//! comment, which the schema shows) and its source where the documentation names one. Never share a
//! constant between keys: editing one default must not move another key.
//!
//! The `network.*` keys are not here: each network model owns its keys and their named
//! defaults (`net/gprs.rs`, `net/radio/config.rs`, `net/topology/mesh_config.rs`).

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
/// `workload.notify`: Observe only: the notifications' message type; absent = `con`.
/// Source: RFC 7641 §4.5 (a notification "can be confirmable or non-confirmable"; CON is the
/// one that lets the server learn the client is still there).
pub const WORKLOAD_NOTIFY: crate::coap::notify::NotifyMode = crate::coap::notify::NotifyMode::Con;
/// `workload.con_every_s`: Observe with `notify = "non-con"`: a CON at least this often, s.
/// Source: RFC 7641 §4.5 ("at least every 24 hours").
pub const WORKLOAD_CON_EVERY_S: f64 = 86_400.0;
/// `workload.notification_bytes`: Observe only: the payload of each notification, bytes.
/// Source: docs/design.md §2 (the piggybacked 2.05's 60-byte payload, as `response_bytes`).
pub const WORKLOAD_NOTIFICATION_BYTES: u32 = 60;
/// `workload.max_age_s`: Observe only: the notifications' Max-Age, s.
/// Source: RFC 7252 §5.10.5 (Max-Age's default, 60 s).
pub const WORKLOAD_MAX_AGE_S: f64 = 60.0;
/// `workload.lwm2m_register_bytes`: bytes the LwM2M Register request carries beyond the plain
/// request. Source: a Register of a device with a Server, a Device and a Firmware Update
/// object, OMA-TS-LightweightM2M_Core-V1_1 §5.3.1 (Register's parameters as Uri-Query), RFC 6690
/// §2 (link format), RFC 7252 §3.1 (option headers), carried as payload:
/// link format `</1/0>,</3/0>,</5/0>` = 7 + 1 + 7 + 1 + 7 = 23 B;
/// `ep=urn:imei:123456789012345` = 12 + 15 = 27 B + 2 B header (length 27 > 12: one extension
/// byte) = 29 B; `lt=86400` 8 + 1 = 9 B; `lwm2m=1.1` 9 + 1 = 10 B; `b=UQ` 4 + 1 = 5 B;
/// 23 + 29 + 9 + 10 + 5 = 76 B.
pub const WORKLOAD_LWM2M_REGISTER_BYTES: u32 = 76;
/// `workload.lwm2m_lifetime_s`: the registration's lifetime, s.
/// Source: OMA-TS-LightweightM2M_Core-V1_1 §5.3.1, Register's `lt` parameter: absent, the server
/// assumes 86400 s (Leshan `Registration.DEFAULT_LIFETIME_IN_SEC` = 86400L).
pub const WORKLOAD_LWM2M_LIFETIME_S: f64 = 86_400.0;
/// `workload.lwm2m_queue_window_s`: how long a queue-mode device stays reachable after an
/// uplink, s. Source: OMA-TS-LightweightM2M_Transport-V1_1 §6.5 (Queue Mode: MAX_TRANSMIT_WAIT),
/// RFC 7252 §4.8.2: ACK_TIMEOUT · (2^(MAX_RETRANSMIT + 1) − 1) · ACK_RANDOM_FACTOR
/// = 2 · 31 · 1.5 = 93 s (Zephyr `CONFIG_LWM2M_QUEUE_MODE_UPTIME` default 93).
pub const WORKLOAD_LWM2M_QUEUE_WINDOW_S: f64 = 93.0;
/// `workload.lwm2m_notify_bytes`: payload of a notification and of a read's answer, bytes.
/// Source: one Float resource (e.g. 3303/0/5700) in LwM2M TLV, OMA-TS-LightweightM2M_Core-V1_1
/// §7.4.3: type byte 1 + 16-bit identifier 2 + 8-bit length field 1 (8 > 7 does not fit the
/// type byte's 3 bits) + 8-byte float = 12 B.
pub const WORKLOAD_LWM2M_NOTIFY_BYTES: u32 = 12;
/// `workload.block_szx`: Firmware: Block2 size exponent (RFC 7959 §2.2, block = 2^(SZX+4) bytes; 4 = 256 B).
pub const WORKLOAD_BLOCK_SZX: u8 = 4;
/// `coap.q_block_max_payloads`: Q-Block MAX_PAYLOADS.
/// Source: RFC 9177 §7.2 (10; `coap::qblock::MAX_PAYLOADS`).
pub const COAP_Q_BLOCK_MAX_PAYLOADS: u32 = crate::coap::qblock::MAX_PAYLOADS;
/// `coap.q_block_non_timeout_s`: Q-Block NON_TIMEOUT, s.
/// Source: RFC 9177 §7.2 (2 s; `coap::qblock::NON_TIMEOUT`).
pub const COAP_Q_BLOCK_NON_TIMEOUT_S: u64 = crate::coap::qblock::NON_TIMEOUT.nanos();
/// `coap.q_block_non_receive_timeout_s`: Q-Block NON_RECEIVE_TIMEOUT, s.
/// Source: RFC 9177 §7.2 (4 s; `coap::qblock::NON_RECEIVE_TIMEOUT`).
pub const COAP_Q_BLOCK_NON_RECEIVE_TIMEOUT_S: u64 =
    crate::coap::qblock::NON_RECEIVE_TIMEOUT.nanos();
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
/// `coap.security`: Security of CoAP over UDP (docs/model.md "Security").
/// Source: RFC 7252's NoSec mode, every scenario before the key.
pub const COAP_SECURITY: super::security::Security = super::security::Security::None;
/// `coap.dtls_suite`: With DTLS: the handshake's authentication, `psk` or `cert`.
/// Source: RFC 7252 §9.1.3.1 (PreSharedKey, TLS_PSK_WITH_AES_128_CCM_8 mandatory to implement).
pub const COAP_DTLS_SUITE: super::security::DtlsSuite = super::security::DtlsSuite::Psk;
/// `coap.dtls_connection_id`: With DTLS: a Connection ID in every record (RFC 9146).
/// Source: off unless negotiated (RFC 9146 §3, an extension a client offers).
pub const COAP_DTLS_CONNECTION_ID: bool = false;
pub(super) fn coap_security() -> super::security::Security {
    COAP_SECURITY
}
pub(super) fn coap_dtls_connection_id() -> bool {
    COAP_DTLS_CONNECTION_ID
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
pub(super) fn coap_q_block_max_payloads() -> u32 {
    COAP_Q_BLOCK_MAX_PAYLOADS
}
pub(super) fn coap_q_block_non_timeout_s() -> f64 {
    COAP_Q_BLOCK_NON_TIMEOUT_S as f64 / 1e9
}
pub(super) fn coap_q_block_non_receive_timeout_s() -> f64 {
    COAP_Q_BLOCK_NON_RECEIVE_TIMEOUT_S as f64 / 1e9
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
