//! The radio's configuration (the `network.*` keys of the IEEE 802.15.4 meshes, docs/networks.md):
//! the IEEE 802.15.4 MAC ([`RadioConfig`]), radio duty cycling ([`RdcConfig`]), how links lose
//! frames besides collisions ([`ShadowingConfig`]) and the Contiki profile ([`ContikiConfig`]),
//! each key with its named default. A leaf: it imports nothing from the engine, so the radio's
//! models, the mesh topologies and `config` (which composes these types into the scenario's
//! `network` section) all depend on it and never on each other. The topology registry
//! (`net/topology/mesh.rs`) turns these into the models' parameters (`RadioParams`,
//! `ContikiParams`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `network.mac_min_be`: macMinBE (IEEE 802.15.4-2006 §7.5.1.4).
/// Source: IEEE 802.15.4-2006 §7.4.2.
pub const MAC_MIN_BE: u8 = 3;
/// `network.mac_max_be`: macMaxBE.
/// Source: IEEE 802.15.4-2006 §7.4.2.
pub const MAC_MAX_BE: u8 = 5;
/// `network.mac_max_csma_backoffs`: macMaxCSMABackoffs: busy clear-channel assessments before a channel-access failure.
/// Source: IEEE 802.15.4-2006 §7.4.2.
pub const MAC_MAX_CSMA_BACKOFFS: u8 = 4;
/// `network.mac_max_frame_retries`: macMaxFrameRetries: retransmissions of an unacknowledged frame.
/// Source: IEEE 802.15.4-2006 §7.4.2.
pub const MAC_MAX_FRAME_RETRIES: u8 = 3;
/// `network.unit_backoff_us`: aUnitBackoffPeriod, µs (20 symbols of 16 µs).
/// Source: IEEE 802.15.4-2006 §7.4.1 (2.4 GHz O-QPSK symbols).
pub const UNIT_BACKOFF_US: f64 = 320.0;
/// `network.cca_us`: Clear channel assessment, µs (8 symbols).
/// Source: IEEE 802.15.4-2006 §6.9.9.
pub const CCA_US: f64 = 128.0;
/// `network.turnaround_us`: aTurnaroundTime, µs (12 symbols).
/// Source: IEEE 802.15.4-2006 §6.4.1.
pub const TURNAROUND_US: f64 = 192.0;
/// `network.ack_wait_us`: macAckWaitDuration, µs (54 symbols).
/// Source: IEEE 802.15.4-2006 §7.4.2.
pub const ACK_WAIT_US_802154: f64 = 864.0;
/// `network.mac_queue_frames`: Frames a node's MAC queue holds (the one being sent included).
pub const MAC_QUEUE_FRAMES: u32 = 4;
/// `network.border_router_queue_frames`: Frames the border router's MAC queue holds.
pub const BORDER_ROUTER_QUEUE_FRAMES: u32 = 6;
/// `network.channel_check_rate_hz`: ContikiMAC: channel checks per second (NETSTACK_RDC_CHANNEL_CHECK_RATE, Contiki's 8).
pub const CHANNEL_CHECK_RATE_HZ: u32 = 8;
/// `network.strobe_gap_us`: ContikiMAC: gap between strobed copies, µs (turnaround + acknowledgement by default).
pub const STROBE_GAP_US: f64 = 544.0;

/// Contiki 2.6 `core/net/mac/contikimac.c`: `#define WITH_PHASE_OPTIMIZATION 1` unless the
/// channel check rate is 64 Hz or more.
pub const CONTIKIMAC_PHASE_OPTIMIZATION: bool = true;

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

/// `CLOCK_CONF_SECOND` (platform/sky and platform/z1 `platform-conf.h`): clock ticks per second.
pub const CLOCK_SECOND: u32 = 128;
/// `CSMA_MAX_NEIGHBOR_QUEUES` (`csma.c`).
pub const CSMA_MAX_NEIGHBOR_QUEUES: u32 = 2;
/// `SICSLOWPAN_MAX_MAC_TRANSMISSIONS` (`sicslowpan.c`; platform/z1 keeps it, platform/sky's
/// `contiki-conf.h` sets `SICSLOWPAN_CONF_MAX_MAC_TRANSMISSIONS` 5).
pub const SICSLOWPAN_MAX_MAC_TRANSMISSIONS: u8 = 4;
/// `RTIMER_ARCH_SECOND` on the MSP430 (`cpu/msp430/rtimer-arch.h`): 4096 · 8.
const RTIMER_SECOND: f64 = 32768.0;
/// `ACK_WAIT_TIME` = `RTIMER_SECOND / 2500` = 13 rtimer ticks (`nullrdc.c`), µs.
pub const ACK_WAIT_US: f64 = (32768 / 2500) as f64 * 1e6 / RTIMER_SECOND;
/// `AFTER_ACK_DETECTED_WAIT_TIME` = `RTIMER_SECOND / 1500` = 21 rtimer ticks, µs.
pub const AFTER_ACK_DETECTED_WAIT_US: f64 = (32768 / 1500) as f64 * 1e6 / RTIMER_SECOND;
/// `SICSLOWPAN_CONF_MAXAGE` (platform/sky and platform/z1 `contiki-conf.h`; the core default
/// `SICSLOWPAN_REASS_MAXAGE` is 20), s.
pub const SICSLOWPAN_REASS_MAXAGE_S: f64 = 8.0;
/// The CPU's time from a packet's hand-off to its first frame's CCA, µs. Not a constant of the
/// source: Cooja's MSPSim runs the code instruction by instruction. Estimated from the Sky's
/// clocks (`F_CPU` 3.9 MHz, platform/sky `platform-conf.h`; SPI at SMCLK / 2,
/// `U0BR0 = 0x02` in cpu/msp430/f1xxx `spi.c`, ≈ 4 µs a byte with the driver's per-byte
/// polling): reading a ~110-byte frame out of the RX FIFO (`cc2420_read`) ≈ 0.5–1 ms, 6LoWPAN
/// decompression and compression with uIP's forwarding (`sicslowpan.c` `input()` /
/// `output()`, `tcpip.c` `tcpip_ipv6_output`) ≈ 1 ms, CSMA's zero-time ctimer through the
/// etimer process, and loading the TX FIFO (`cc2420_prepare`) ≈ 0.5–1 ms: 3 ms. What matters
/// is that it outlasts the acknowledgement the node sends for the frame it received
/// (turnaround 192 µs + 352 µs on the air) and the CCA window after it: with no processing
/// time every forward would find its own received frame in its CCA window and back off one
/// time base (docs/validation.md shows the sensitivity).
pub const PROCESSING_US: f64 = 3000.0;

/// One byte over the CC2420's SPI bus, µs: 8 bit clocks at SMCLK / 2 (`U0BR0 = 0x02`,
/// cpu/msp430/f1xxx `spi.c`) with SMCLK = `F_CPU` = 3.9 MHz (platform/sky `platform-conf.h`):
/// 8 · 2 / 3.9 = 4.1026 µs. `cc2420_read` and `cc2420_prepare` (`core/dev/cc2420.c`) move a
/// frame byte by byte at this pace (`CC2420_READ_FIFO_BUF`: `SPI_READ` per byte, and
/// `CC2420_WRITE_FIFO_BUF`, `core/dev/cc2420.h`); the loop's own cycles are not counted.
pub const SPI_BYTE_US: f64 = 8.0 * 2.0 / 3.9;
/// `contiki_cpu_fixed_us`: with `contiki_cpu_time = "frame_length"`, the part of the CPU's
/// time per packet that does not grow with the frame, µs: 6LoWPAN's decompression and
/// compression with uIP's forwarding (`sicslowpan.c` `input()` / `output()`, `tcpip.c`
/// `tcpip_ipv6_output`) and CSMA's zero-time ctimer through the etimer process — the ≈ 1 ms
/// of [`PROCESSING_US`]'s estimate that is not a FIFO copy.
pub const CPU_FIXED_US: f64 = 1000.0;
/// `contiki_clock_ticks`: Contiki's timers expire on clock ticks (`core/sys/etimer.c`).
pub const CLOCK_TICKS: bool = true;
/// `contiki_pending_packet`: `send_packet` refuses to send while a received frame waits
/// (`nullrdc.c` with `NULLRDC_802154_AUTOACK`, `contikimac.c` always).
pub const PENDING_PACKET: bool = true;
/// `contiki_rpl_etx`: Contiki 2.6 runs RPL with the ETX objective over `neighbor-info.c`
/// (`UIP_CONF_IPV6_RPL` 1 on Sky, `SICSLOWPAN_CONF_NEIGHBOR_INFO` follows it; `rpl-conf.h`
/// `RPL_OF rpl_of_etx`).
pub const RPL_ETX: bool = true;

fn mac_min_be() -> u8 {
    MAC_MIN_BE
}
fn mac_max_be() -> u8 {
    MAC_MAX_BE
}
fn mac_max_csma_backoffs() -> u8 {
    MAC_MAX_CSMA_BACKOFFS
}
fn mac_max_frame_retries() -> u8 {
    MAC_MAX_FRAME_RETRIES
}
fn unit_backoff_us() -> f64 {
    UNIT_BACKOFF_US
}
fn cca_us() -> f64 {
    CCA_US
}
fn turnaround_us() -> f64 {
    TURNAROUND_US
}
fn ack_wait_us() -> f64 {
    ACK_WAIT_US_802154
}
fn mac_queue_frames() -> u32 {
    MAC_QUEUE_FRAMES
}
fn border_router_queue_frames() -> u32 {
    BORDER_ROUTER_QUEUE_FRAMES
}
fn channel_check_rate_hz() -> u32 {
    CHANNEL_CHECK_RATE_HZ
}
fn strobe_gap_us() -> f64 {
    STROBE_GAP_US
}
fn phase_optimization_default() -> bool {
    CONTIKIMAC_PHASE_OPTIMIZATION
}
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
fn contiki_clock_second() -> u32 {
    CLOCK_SECOND
}
fn contiki_neighbor_queues() -> u32 {
    CSMA_MAX_NEIGHBOR_QUEUES
}
fn contiki_max_transmissions() -> u8 {
    SICSLOWPAN_MAX_MAC_TRANSMISSIONS
}
fn contiki_ack_wait_us() -> f64 {
    ACK_WAIT_US
}
fn contiki_after_ack_wait_us() -> f64 {
    AFTER_ACK_DETECTED_WAIT_US
}
fn contiki_processing_us() -> f64 {
    PROCESSING_US
}
fn contiki_reassembly_s() -> f64 {
    SICSLOWPAN_REASS_MAXAGE_S
}
fn contiki_cpu_fixed_us() -> f64 {
    CPU_FIXED_US
}
fn contiki_clock_ticks() -> bool {
    CLOCK_TICKS
}
fn contiki_pending_packet() -> bool {
    PENDING_PACKET
}
fn contiki_rpl_etx() -> bool {
    RPL_ETX
}

/// How the Contiki profile's CPU time per packet is modelled.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ContikiCpuTime {
    // `contiki_cpu_fixed_us` plus the SPI copies of the bytes read out of the RX FIFO and
    // loaded into the TX FIFO (`SPI_BYTE_US` a byte): it varies with the frames' lengths.
    #[default]
    FrameLength,
    // `contiki_processing_us`, one constant (the profile of `coaplab-model-6`).
    Constant,
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

/// Radio duty cycling of the mesh nodes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RdcKind {
    #[default]
    Nullrdc,
    Contikimac,
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

/// The IEEE 802.15.4 MAC of every mesh node (IEEE 802.15.4-2006 unslotted CSMA/CA,
/// `net/radio/mac.rs`) and its queues. Keys of `network`, flattened into the mesh's section.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
pub struct RadioConfig {
    /// MAC addressing: `long` (64-bit addresses, 21-byte MAC header) or `short` (16-bit, 9 B).
    #[serde(default)]
    #[schemars(extend("x-omit-if-absent" = true))]
    pub mac_addressing: MacAddressing,
    /// macMinBE (IEEE 802.15.4-2006 §7.5.1.4).
    #[serde(default = "mac_min_be")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(max = 8))]
    pub mac_min_be: u8,
    /// macMaxBE.
    #[serde(default = "mac_max_be")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(min = 3, max = 8))]
    pub mac_max_be: u8,
    /// macMaxCSMABackoffs: busy clear-channel assessments before a channel-access failure.
    #[serde(default = "mac_max_csma_backoffs")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(max = 5))]
    pub mac_max_csma_backoffs: u8,
    /// macMaxFrameRetries: retransmissions of an unacknowledged frame.
    #[serde(default = "mac_max_frame_retries")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(max = 7))]
    pub mac_max_frame_retries: u8,
    /// aUnitBackoffPeriod, µs (20 symbols of 16 µs).
    #[serde(default = "unit_backoff_us")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(min = 1.0, max = 1e6))]
    pub unit_backoff_us: f64,
    /// Clear channel assessment, µs (8 symbols).
    #[serde(default = "cca_us")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(min = 1.0, max = 1e6))]
    pub cca_us: f64,
    /// aTurnaroundTime, µs (12 symbols).
    #[serde(default = "turnaround_us")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(min = 0.0, max = 1e6))]
    pub turnaround_us: f64,
    /// macAckWaitDuration, µs (54 symbols).
    #[serde(default = "ack_wait_us")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(min = 1.0, max = 1e6))]
    pub ack_wait_us: f64,
    /// Frames a node's MAC queue holds (the one being sent included).
    #[serde(default = "mac_queue_frames")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(min = 1, max = 10000))]
    pub mac_queue_frames: u32,
    /// Frames the border router's MAC queue holds.
    #[serde(default = "border_router_queue_frames")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(min = 1, max = 10000))]
    pub border_router_queue_frames: u32,
}

/// Radio duty cycling (docs/networks.md): NullRDC or ContikiMAC.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
pub struct RdcConfig {
    /// Radio duty cycling: `nullrdc` (always on) or `contikimac` (ContikiMAC-style: nodes wake
    /// up `channel_check_rate_hz` times a second; senders strobe a frame until it is taken).
    #[serde(default)]
    #[schemars(extend("x-omit-if-absent" = true))]
    pub rdc: RdcKind,
    /// ContikiMAC: channel checks per second (NETSTACK_RDC_CHANNEL_CHECK_RATE, Contiki's 8).
    #[serde(default = "channel_check_rate_hz")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(min = 1, max = 1000))]
    pub channel_check_rate_hz: u32,
    /// ContikiMAC: gap between strobed copies, µs (turnaround + acknowledgement by default).
    #[serde(default = "strobe_gap_us")]
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
}

/// How links lose frames besides collisions: fixed probabilities or log-normal shadowing
/// (`net/radio/prr.rs`).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
pub struct ShadowingConfig {
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
}

/// The Contiki profile's keys (`mac = "contiki"`, `net/radio/mac/contiki.rs`).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
pub struct ContikiConfig {
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
    /// `mac = "contiki"`: the CPU's time per packet: `frame_length` (`contiki_cpu_fixed_us`
    /// plus 4.1 µs per byte copied over the CC2420's SPI bus: the received frame read out of
    /// the RX FIFO, the frame to send loaded into the TX FIFO) or `constant`
    /// (`contiki_processing_us`).
    #[serde(default)]
    #[schemars(extend("x-omit-if-absent" = true))]
    pub contiki_cpu_time: ContikiCpuTime,
    /// `mac = "contiki"`, `contiki_cpu_time = "frame_length"`: the CPU time's fixed part, µs
    /// (6LoWPAN, uIP, CSMA's ctimer).
    #[serde(default = "contiki_cpu_fixed_us")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(min = 0.0, max = 1e6))]
    pub contiki_cpu_fixed_us: f64,
    /// `mac = "contiki"`: CSMA's retry and spacing timers expire on the clock's ticks
    /// (`etimer`, 1 / `contiki_clock_second`), as in Contiki; `false`: at the exact time.
    #[serde(default = "contiki_clock_ticks")]
    #[schemars(extend("x-omit-if-absent" = true))]
    pub contiki_clock_ticks: bool,
    /// `mac = "contiki"`, with an acknowledgement wait: a send while a received frame still
    /// waits in the CC2420's RX FIFO (read at 4.1 µs a byte) is refused with
    /// `MAC_TX_COLLISION` and retried after CSMA's backoff (`nullrdc.c` `send_packet`,
    /// `pending_packet()`).
    #[serde(default = "contiki_pending_packet")]
    #[schemars(extend("x-omit-if-absent" = true))]
    pub contiki_pending_packet: bool,
    /// `mac = "contiki"`: RPL changes parents as Contiki 2.6 does: each link's ETX is
    /// estimated from the MAC's outcomes (`neighbor-info.c`) and a node moves to the
    /// neighbour of least path ETX when it beats the current parent by more than half an ETX
    /// (`rpl-of-etx.c` `best_parent`); `false`: the DODAG built at the start stays.
    #[serde(default = "contiki_rpl_etx")]
    #[schemars(extend("x-omit-if-absent" = true))]
    pub contiki_rpl_etx: bool,
}
