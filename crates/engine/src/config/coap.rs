//! The CoAP endpoints (`[coap]`) and the TCP model's parameters (`[tcp]`).

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Serialize};

use super::defaults;
use super::security::{DtlsSuite, Security};

/// Congestion controllers of the TCP model (`coap.cc` with `coap.transport = "tcp"`), from
/// their registry ([`crate::tcp::congestion::CONTROLLERS`]).
pub fn tcp_controllers() -> Vec<&'static str> {
    crate::tcp::congestion::controller_names()
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
    /// PROBING_RATE, bytes per second (RFC 7252 §4.7; its default, §4.8, is 1 byte/s): a
    /// client sends at most this average rate to a server that does not respond — after an
    /// unanswered probe, retransmissions, further NSTART requests and NON messages wait
    /// (docs/algorithms.md "PROBING_RATE"). CoAP over UDP only. Absent = no limit, as every
    /// scenario before the key.
    #[schemars(extend("x-omit-if-absent" = true))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.001, max = 1e9))]
    pub probing_rate_bps: Option<f64>,
    /// The CoAP option number of FASOR's Rexmit-Cnt (`fasor-rc`; draft-ietf-core-fasor-02
    /// §4.4 assigns none): an elective (even) number of RFC 7252 §12.2's experimental range
    /// 65000–65535. Absent = 65000, coaplab's; Californium's `TransmissionCountOption` uses
    /// 0xfdfc = 65020 (3.13–3.x) and 0xfe04 = 65028 (4.x): set it to interoperate with one
    /// (docs/emulation.md). Every such number encodes in the same size.
    #[schemars(extend("x-omit-if-absent" = true))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 65000, max = 65535))]
    pub rexmit_cnt_option: Option<u16>,
    /// Security of CoAP over UDP (docs/model.md "Security"): `none`, `dtls1.2`, `dtls1.3`
    /// (a DTLS session per client, its handshake before the first request and again after a
    /// NAT binding expired) or `oscore` (RFC 8613, a pre-shared context: bytes per message, no
    /// handshake). Absent = `none`, plain CoAP (RFC 7252).
    #[serde(default = "defaults::coap_security")]
    #[schemars(extend("x-omit-if-absent" = true))]
    pub security: Security,
    /// With DTLS: the handshake's authentication, `psk` or `cert` (P-256 certificates).
    /// Absent = `psk`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-omit-if-absent" = true))]
    pub dtls_suite: Option<DtlsSuite>,
    /// With DTLS: a Connection ID in every record (RFC 9146; RFC 9147 §9): the session
    /// survives a NAT rebinding (no new handshake after `network.nat_timeout_s` idle) and each
    /// record carries the CID's bytes. Absent = false.
    #[serde(default = "defaults::coap_dtls_connection_id")]
    #[schemars(extend("x-omit-if-absent" = true))]
    pub dtls_connection_id: bool,
    /// How `firmware` and `upload` bodies travel (docs/model.md "Q-Block"): `block` (RFC 7959
    /// Block2, one CON exchange per block) or `q-block` (RFC 9177 Q-Block2 / Q-Block1: NON
    /// blocks in sets of `q_block_max_payloads`, missing ones recovered). Absent = `block`.
    #[serde(default)]
    #[schemars(extend("x-omit-if-absent" = true))]
    pub block_mode: BlockMode,
    /// Q-Block: MAX_PAYLOADS, blocks sent back to back before a pause (RFC 9177 §7.2).
    #[serde(default = "defaults::coap_q_block_max_payloads")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(min = 1, max = 1000))]
    pub q_block_max_payloads: u32,
    /// Q-Block: NON_TIMEOUT, the pause after each set, s (RFC 9177 §7.2).
    #[serde(default = "defaults::coap_q_block_non_timeout_s")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(min = 0.001, max = 3600.0))]
    pub q_block_non_timeout_s: f64,
    /// Q-Block: NON_RECEIVE_TIMEOUT, the wait without a new block before the receiver asks
    /// for the missing ones, s (RFC 9177 §7.2).
    #[serde(default = "defaults::coap_q_block_non_receive_timeout_s")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(min = 0.001, max = 3600.0))]
    pub q_block_non_receive_timeout_s: f64,
}

/// `coap.block_mode`: RFC 7959 block-wise transfers or RFC 9177's Q-Block.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
pub enum BlockMode {
    #[default]
    #[serde(rename = "block")]
    Block,
    #[serde(rename = "q-block")]
    QBlock,
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
/// class name (the identifier `coaplab.describe.algorithm.load_class` imports).
pub const PYTHON_CC_PATTERN: &str = "^python:.+:[A-Za-z_][A-Za-z0-9_]*$";

/// `c:LIB:NAME`: a shared library's path (any characters, a colon included), a colon, the
/// algorithm name its `coaplab_cc_init` accepts (`crate::foreign::c` loads it).
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
