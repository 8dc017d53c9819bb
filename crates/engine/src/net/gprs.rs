//! The GPRS uplink's radio (docs/networks.md "The GPRS preset"): what one IP packet costs on
//! the uplink of a GPRS mobile station (the modem), in radio blocks. A sans-IO model told
//! `now`; the link ([`crate::net::link::Link`]) keeps the modem's buffer (FIFO, tail drop) and
//! asks it how long each packet occupies the uplink.
//!
//! One IP packet on the uplink (3GPP, GPRS without EDGE):
//!
//! - SNDCP (TS 44.065 §7.2, SN-UNITDATA PDU, unacknowledged mode — the default for IP):
//!   4 octets before the packet (octet 1: X, F, T, M, NSAPI; octet 2: DCOMP, PCOMP; octets 3–4:
//!   segment number and N-PDU number).
//! - LLC (TS 44.064 §6): a UI frame: address field 1 octet, UI control field 2 octets
//!   (§6.3.5.2), frame check sequence 3 octets (§5.5): 6 octets.
//! - RLC/MAC (TS 44.060 §10.2): the LLC frame is cut into RLC data blocks; each radio block
//!   carries a 1-octet MAC header and an RLC data block of 22, 32, 38 or 52 octets with coding
//!   scheme CS-1, CS-2, CS-3 or CS-4 (TS 44.060 Table 10.2.1; the channel coding of TS 45.003
//!   §5.1.1–5.1.4), of which the uplink RLC header takes 2 octets (§10.2.2): 20, 30, 36 or 50
//!   octets of RLC data per block. The block in which an LLC frame ends carries a 1-octet length indicator
//!   (§10.4.14) unless the frame fills it exactly — counted always (1 octet at most).
//! - Radio blocks (TS 45.002 §6.3.2.2, Table 6): a PDCH's 52-multiframe (240 ms) carries
//!   12 radio blocks of 4 TDMA frames plus 4 idle/PTCCH frames: one block per timeslot every
//!   20 ms on average. With `timeslots` uplink timeslots, `timeslots` blocks per 20 ms.
//! - Every downlink data transfer is acknowledged by the mobile station on the uplink: the
//!   network polls it (RRBP field, TS 44.060 §10.4.5; always in the final block of a downlink
//!   TBF, §9.3.2.4) and it answers with a Packet Downlink Ack/Nack (§11.2.6), one RLC/MAC
//!   control block in one uplink block. Each response is taken to cost one uplink block that
//!   the modem's data cannot use (a network that keeps the downlink TBF open, delayed release
//!   §9.3.1a, polls less often: OsmoPCU every 20 downlink blocks, `POLL_ACK_AFTER_FRAMES` in
//!   src/tbf_dl.cpp; not modelled, docs/networks.md).
//! - Radio blocks are received in error now and then; RLC acknowledged mode (TS 44.060 §9.1,
//!   the default RLC mode for a PDP context's data) resends every block the network reports
//!   missing in its Packet Uplink Ack/Nack bitmap, so a radio error costs a block period, not
//!   a packet — but the packet (and every packet behind it: the network reassembles in BSN
//!   order) is whole only once the block is resent after the next Ack/Nack, every 20 blocks or
//!   at the countdown's end ([`GprsUplink::release_at`]). Each uplink block (data or control)
//!   is received in error with probability `block_error_rate`, independently, and sent again
//!   until it gets through. 3GPP specifies a GPRS receiver's reference sensitivity and
//!   interference performance at a block error rate of 10 % (TS 45.005 §6.2, §6.3), and link
//!   adaptation keeps a coding scheme in use while its block error rate stays about there:
//!   the errors come in fades, 7.4 % of the blocks on average with the defaults
//!   (`GPRS_BLOCK_ERROR_RATE`). This is why packet losses are rare on GPRS while its delays
//!   are not.
//! - The uplink TBF (temporary block flow, TS 44.060 §7.1 and §9.3.1): data can only flow once
//!   the network has assigned one (packet access on the CCCH, TS 44.018 §3.5.2: a random
//!   access burst on the RACH answered by an Immediate Assignment on the AGCH, within a
//!   51-multiframe of the CCCH: 51 × 4.615 ms = 235 ms, TS 45.002 §4.3.3). While the modem
//!   keeps sending, the TBF stays; once it has nothing to send, the network keeps the TBF
//!   a while (extended uplink TBF mode, TS 44.060 §9.3.1b, a network-chosen inactivity period)
//!   and then releases it: the next packet pays the set-up again.
//!
//! So one packet of `ip` bytes, on an open TBF and without block errors, occupies the uplink
//! for `ceil((ip + overhead) / rlc_data(cs)) × 20 ms / timeslots`; plus the TBF set-up if the
//! TBF had been released; plus the control blocks of Packet Downlink Ack/Nacks owed
//! meanwhile; plus one block period per block received in error.

use coaplab_cc::rng::Xoshiro256pp;
use coaplab_cc::{Duration, Instant};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::net::loss::{ChainParams, LossProcess};

/// Octets of RLC data in one radio block per coding scheme CS-1…CS-4: the RLC data block of
/// TS 44.060 Table 10.2.1 (22, 32, 38, 52 octets) minus the 2-octet RLC header of an uplink
/// RLC data block (TS 44.060 §10.2.2).
pub const RLC_DATA_OCTETS: [u32; 4] = [20, 30, 36, 50];

/// One radio block on one timeslot, on average: a 52-multiframe of 240 ms carries 12 radio
/// blocks (TS 45.002 §6.3.2.2), 240 / 12 = 20 ms.
pub const BLOCK_PERIOD: Duration = Duration::from_millis(20);

/// SNDCP SN-UNITDATA header, octets (TS 44.065 §7.2, first segment, unacknowledged mode).
pub const SNDCP_OCTETS: u32 = 4;
/// LLC UI frame: address 1 + control 2 + FCS 3 octets (TS 44.064 §5.5, §6.3.5.2).
pub const LLC_OCTETS: u32 = 6;
/// The RLC length indicator closing an LLC frame in its last block (TS 44.060 §10.4.14).
pub const RLC_LI_OCTETS: u32 = 1;
/// Octets GPRS adds to each IP packet before it is cut into RLC data blocks: 4 + 6 + 1 = 11.
pub const OVERHEAD_OCTETS: u32 = SNDCP_OCTETS + LLC_OCTETS + RLC_LI_OCTETS;

/// GPRS coding scheme CS-3: with one timeslot 36 octets per 20 ms = 14.4 kbit/s of RLC data,
/// the coding scheme closest to the CoCoA study's observed uplink rate of about 15 kbit/s
/// (Betzler et al. 2016, §V.A); docs/networks.md.
pub const GPRS_CODING_SCHEME: u8 = 3;
/// One uplink timeslot: a second one would double the rate beyond the observed 15 kbit/s.
pub const GPRS_UPLINK_TIMESLOTS: u8 = 1;
/// Uplink TBF set-up, ms: a random access on the RACH answered by an Immediate Assignment on
/// the AGCH (TS 44.018 §3.5.2) within one 51-multiframe of the CCCH (51 TDMA frames of
/// 4.615 ms = 235 ms, TS 45.002 §4.3.3); docs/networks.md.
pub const GPRS_TBF_SETUP_MS: f64 = 235.0;
/// Extended uplink TBF (TS 44.060 §9.3.1b): the network keeps an idle uplink TBF for an
/// inactivity period of its choice; 1 s, in the range networks used; docs/networks.md.
pub const GPRS_TBF_HOLD_MS: f64 = 1000.0;
/// One Packet Downlink Ack/Nack (TS 44.060 §11.2.6) per downlink packet: one RLC/MAC control
/// block, sent in the uplink block the final downlink block polls for (§9.3.2.4, §10.4.5).
pub const GPRS_ACK_BLOCKS: u32 = 1;
/// Uplink block error rate outside fades: 0 — link adaptation keeps a coding scheme whose
/// errors are negligible in normal conditions; the errors come in fades (below). With the
/// fades' defaults the mean block error rate is 1/(1 + 4) × 37 % = 7.4 %, close to the 10 % at
/// which 3GPP specifies GPRS receivers' performance (TS 45.005 §6.2, §6.3); RLC acknowledged
/// mode resends the blocks in error (TS 44.060 §9.1); docs/networks.md.
pub const GPRS_BLOCK_ERROR_RATE: f64 = 0.0;
/// Fades (periods of poor radio conditions: fading, interference, coding-scheme changes):
/// 1 s on average every 4 s, 37 % of the blocks in error meanwhile. Not from a standard:
/// calibrated (docs/networks.md, docs/validation.md) so that the RTT varies from one exchange
/// to the next as much as the CoCoA study's RTO figures show (Betzler et al. 2016, Table II:
/// CoCoA's mean initial RTO is 1.9–2.4 times its mean RTT). The fade's block error rate was
/// refitted (65 % → 37 %) when the blocks in error started to wait for the Packet Uplink
/// Ack/Nack (`GPRS_UL_ACK_INTERVAL_BLOCKS`), which makes each error cost more delay.
pub const GPRS_FADE_MEAN_MS: f64 = 1000.0;
/// Mean time between fades (docs/networks.md).
pub const GPRS_FADE_INTERVAL_MS: f64 = 4000.0;
/// Block error rate during a fade (docs/networks.md).
pub const GPRS_FADE_BLOCK_ERROR_RATE: f64 = 0.37;
/// Uplink ACK/NACK interval: the network sends a Packet Uplink Ack/Nack (TS 44.060 §11.2.28)
/// every 20 uplink data blocks of a TBF, and when the countdown ends (CV = 0, §9.3.1): OsmoPCU's
/// `SEND_ACK_AFTER_FRAMES` (src/tbf_ul.cpp, `gprs_rlcmac_ul_tbf::maybe_schedule_uplink_acknack`).
/// A block received in error is resent only once an Ack/Nack reports it missing (RLC
/// acknowledged mode, TS 44.060 §9.1.8, §9.3.2), and the network reassembles LLC frames in
/// BSN order (OsmoPCU `gprs_rlcmac_ul_tbf::rcv_data_block_acknowledged`: V(Q) is raised, then
/// the in-sequence blocks are reassembled), so the packets behind a missing block wait too.
pub const GPRS_UL_ACK_INTERVAL_BLOCKS: u32 = 20;
/// BS_CV_MAX (TS 44.060 §9.3.1, broadcast in the GPRS Cell Options, §12.24, 4 bits): the
/// mobile station counts down its last BS_CV_MAX blocks, and the countdown's last block
/// (CV = 0) makes the network send its Ack/Nack. 15, the largest value the field carries:
/// when the modem's buffer holds at most 15 blocks after a packet, that packet's missing blocks
/// are reported at the end of the buffer rather than at the next 20-block Ack/Nack.
pub const GPRS_BS_CV_MAX: u32 = 15;
/// GPRS one-way delay beyond the radio (BSS, SGSN, GGSN, the Internet to the server), uniform
/// per packet, ms: calibrated on the CoCoA study's 10-client RTT (Betzler et al. 2016,
/// Table II: 661 ms), the one point where the uplink queue does not hide it; docs/networks.md.
pub const GPRS_DELAY_MS: [f64; 2] = [100.0, 200.0];
/// `network.gprs_downlink_kbps`: GPRS: downlink rate, kbit/s.
pub const GPRS_DOWNLINK_KBPS: f64 = 40.0;
/// `network.gprs_modem_buffer_bytes`: GPRS: the modem's send buffer, bytes (tail drop).
pub const GPRS_MODEM_BUFFER_BYTES: u64 = 8000;
/// `network.gprs_network_buffer_bytes`: GPRS: the network's buffer in front of the downlink, bytes (tail drop).
pub const GPRS_NETWORK_BUFFER_BYTES: u64 = 20000;
/// `network.gprs_loss`: GPRS: probability that a packet is lost (each direction, independently).
pub const GPRS_LOSS: f64 = 0.002;

fn gprs_cs() -> u8 {
    GPRS_CODING_SCHEME
}
fn gprs_timeslots() -> u8 {
    GPRS_UPLINK_TIMESLOTS
}
fn gprs_overhead() -> u32 {
    OVERHEAD_OCTETS
}
fn gprs_tbf_setup() -> f64 {
    GPRS_TBF_SETUP_MS
}
fn gprs_tbf_hold() -> f64 {
    GPRS_TBF_HOLD_MS
}
fn gprs_ack_blocks() -> u32 {
    GPRS_ACK_BLOCKS
}
fn gprs_bler() -> f64 {
    GPRS_BLOCK_ERROR_RATE
}
fn gprs_fade_mean() -> f64 {
    GPRS_FADE_MEAN_MS
}
fn gprs_fade_interval() -> f64 {
    GPRS_FADE_INTERVAL_MS
}
fn gprs_fade_bler() -> f64 {
    GPRS_FADE_BLOCK_ERROR_RATE
}
fn gprs_ul_ack_interval() -> u32 {
    GPRS_UL_ACK_INTERVAL_BLOCKS
}
fn gprs_bs_cv_max() -> u32 {
    GPRS_BS_CV_MAX
}
fn gprs_dl_tbf_setup() -> f64 {
    crate::net::gprs_downlink::GPRS_DL_TBF_SETUP_MS
}
fn gprs_dl_tbf_idle() -> f64 {
    crate::net::gprs_downlink::GPRS_DL_TBF_IDLE_MS
}
fn gprs_delay() -> [f64; 2] {
    GPRS_DELAY_MS
}
fn gprs_downlink_kbps() -> f64 {
    GPRS_DOWNLINK_KBPS
}
fn gprs_modem_buffer_bytes() -> u64 {
    GPRS_MODEM_BUFFER_BYTES
}
fn gprs_network_buffer_bytes() -> u64 {
    GPRS_NETWORK_BUFFER_BYTES
}
fn gprs_loss() -> f64 {
    GPRS_LOSS
}

/// The `[link]` keys a GPRS network reads: the link-layer overhead of its serializers, and the
/// MTU (it sizes CoAP blocks and the TCP MSS). Its rates, buffers, delays and losses are
/// `network.gprs_*` keys, so the other `[link]` keys are refused with `kind = "gprs"`.
pub const GPRS_LINK_KEYS: &[&str] = &["link_overhead_bytes", "mtu"];

/// The GPRS preset's keys (`network.gprs_*` with `network.kind = "gprs"`; docs/networks.md,
/// "The GPRS preset"), each with its default above. The gprs topology
/// (`net/topology/gprs.rs`) turns them into the links and the radio's [`GprsUplinkParams`].
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
pub struct GprsConfig {
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
    /// GPRS: uplink data blocks between two Packet Uplink Ack/Nacks (a block in error is resent
    /// after the next one, and the packets behind it wait); 0 = resent at once, never waited for.
    #[serde(default = "gprs_ul_ack_interval")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(max = 1000))]
    pub gprs_ul_ack_interval_blocks: u32,
    /// GPRS: BS_CV_MAX, the blocks the modem counts down at the end of its buffer (the last one
    /// makes the network send its Ack/Nack), 0–15.
    #[serde(default = "gprs_bs_cv_max")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(max = 15))]
    pub gprs_bs_cv_max: u32,
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
    #[serde(default = "gprs_downlink_kbps")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(min = 0.001, max = 1e6))]
    pub gprs_downlink_kbps: f64,
    /// GPRS: downlink TBF establishment when the downlink TBF had been released, ms.
    #[serde(default = "gprs_dl_tbf_setup")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(min = 0.0, max = 1e7))]
    pub gprs_dl_tbf_setup_ms: f64,
    /// GPRS: how long the network keeps an idle downlink TBF before releasing it (delayed
    /// release), ms.
    #[serde(default = "gprs_dl_tbf_idle")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(min = 0.0, max = 1e7))]
    pub gprs_dl_tbf_idle_ms: f64,
    /// GPRS: the modem's send buffer, bytes (tail drop).
    #[serde(default = "gprs_modem_buffer_bytes")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(min = 1, max = 1000000000000u64))]
    pub gprs_modem_buffer_bytes: u64,
    /// GPRS: the network's buffer in front of the downlink, bytes (tail drop).
    #[serde(default = "gprs_network_buffer_bytes")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(min = 1, max = 1000000000000u64))]
    pub gprs_network_buffer_bytes: u64,
    /// GPRS: one-way delay of each direction, uniform in `[min, max]` ms per packet, FIFO kept.
    #[serde(default = "gprs_delay")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(inner(range(min = 0.0, max = 1e7)))]
    pub gprs_delay_ms: [f64; 2],
    /// GPRS: probability that a packet is lost (each direction, independently).
    #[serde(default = "gprs_loss")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub gprs_loss: f64,
}

impl Default for GprsConfig {
    /// Every key at its default.
    fn default() -> Self {
        serde_json::from_str("{}").expect("every key has a default")
    }
}

/// The parameters of one modem's uplink (each a `[network]` key, docs/networks.md).
#[derive(Clone, Debug, PartialEq)]
pub struct GprsUplinkParams {
    /// Coding scheme 1–4 (CS-1…CS-4).
    pub coding_scheme: u8,
    /// Uplink timeslots (PDCHs) the modem is given, 1–8.
    pub timeslots: u8,
    /// Octets added to each IP packet (SNDCP, LLC, RLC length indicator).
    pub overhead_octets: u32,
    /// Uplink TBF set-up when the TBF had been released.
    pub tbf_setup: Duration,
    /// How long the network keeps an idle uplink TBF (extended uplink TBF) before releasing it.
    pub tbf_hold: Duration,
    /// Uplink blocks each downlink packet costs (its Packet Downlink Ack/Nack).
    pub ack_blocks_per_downlink_packet: u32,
    /// Probability that an uplink radio block is received in error (and sent again).
    pub block_error_rate: f64,
    /// Data blocks between two Packet Uplink Ack/Nacks; 0: blocks in error are resent at once
    /// and never hold a packet back.
    pub ack_interval_blocks: u32,
    /// BS_CV_MAX: with at most this many blocks left in the buffer the countdown's end brings
    /// the Ack/Nack.
    pub cv_max_blocks: u32,
    /// Fades: the radio alternates between normal periods (`block_error_rate`) and fades
    /// with their own block error rate; `None`: no fades.
    pub fades: Option<Fades>,
}

/// Periods of poor radio conditions (a Gilbert–Elliott chain over the block errors,
/// `net::loss::Chain`): normal periods and fades alternate, each lasting an exponential time
/// of its mean (truncated to [mean / 10, 10 × mean]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fades {
    /// Mean time between fades.
    pub interval_mean: Duration,
    /// Mean duration of a fade.
    pub mean: Duration,
    /// Block error rate during a fade.
    pub block_error_rate: f64,
}

/// The uplink's radio state: whether a TBF is open, and the control blocks it owes.
#[derive(Clone, Debug)]
pub struct GprsUplink {
    params: GprsUplinkParams,
    /// Decides each block transmission's fate.
    errors: LossProcess,
    /// Draws the block errors.
    rng: Xoshiro256pp,
    /// The TBF is open (or kept) until then; `None`: never opened.
    tbf_until: Option<Instant>,
    /// Control blocks owed while a packet was on the uplink: sent before the next packet.
    owed_blocks: u32,
    /// The uplink is busy with control blocks (while no packet is on it) until then.
    control_until: Instant,
    /// The Ack/Nack grid's origin: the first data block of the current busy period.
    ack_origin: Instant,
    /// The uplink fell idle (the countdown ended): the next packet starts a new grid.
    idle: bool,
    /// The packet on the uplink's blocks received in error: when each first failed, and how
    /// many times it failed.
    errored: Vec<(Instant, u32)>,
    /// When the last packet was handed on (the network reassembles in order).
    last_release: Instant,
    /// Packets held back by a missing block (theirs or an earlier packet's).
    pub held_packets: u64,
    /// TBF set-ups paid.
    pub tbf_setups: u64,
    /// Control blocks sent (first transmissions).
    pub control_blocks: u64,
    /// Blocks sent again after an error.
    pub block_retransmissions: u64,
}

impl GprsUplinkParams {
    /// An upper bound of the mean time one IP packet of `ip_bytes` holds the uplink, s, for the
    /// run guard (`sim::guard`): a TBF set-up, the packet's blocks, the acknowledgement
    /// blocks of one downlink packet and one Ack/Nack interval, each try at the worse of the
    /// two block error rates (mean 1 / (1 − BLER) tries).
    pub fn worst_packet_s(&self, ip_bytes: u32) -> f64 {
        let bler = self
            .fades
            .map_or(self.block_error_rate, |f| {
                f.block_error_rate.max(self.block_error_rate)
            })
            .min(0.99);
        let blocks = self.blocks(ip_bytes) + self.ack_blocks_per_downlink_packet;
        // A block in error also waits for the next Ack/Nack: at most one interval per failure.
        let per_try = blocks + self.ack_interval_blocks.min(1_000);
        (self.tbf_setup + self.blocks_time(per_try)).secs_f64() / (1.0 - bler)
    }
    /// How long `n` radio blocks occupy the uplink: one block per timeslot every 20 ms,
    /// `n × 20 ms / timeslots`, truncated to the nanosecond.
    pub fn blocks_time(&self, n: u32) -> Duration {
        BLOCK_PERIOD.mul_ratio(u64::from(n), u64::from(self.timeslots.max(1)))
    }

    /// Radio blocks one IP packet of `ip_bytes` needs.
    pub fn blocks(&self, ip_bytes: u32) -> u32 {
        let cs = usize::from(self.coding_scheme.clamp(1, 4)) - 1;
        (ip_bytes + self.overhead_octets).div_ceil(RLC_DATA_OCTETS[cs])
    }

    /// Time on an open TBF for an IP packet of `ip_bytes`.
    pub fn data_time(&self, ip_bytes: u32) -> Duration {
        self.blocks_time(self.blocks(ip_bytes))
    }
}

impl GprsUplink {
    pub fn new(params: GprsUplinkParams, rng: Xoshiro256pp) -> Self {
        let p = params.block_error_rate;
        let errors = match params.fades {
            Some(f) => LossProcess::Chain(crate::net::loss::Chain::new(ChainParams {
                good_mean: f.interval_mean,
                good_min: f.interval_mean.mul_ratio(1, 10),
                good_max: f.interval_mean.mul(10),
                good_loss: p,
                bad_mean: f.mean,
                bad_min: f.mean.mul_ratio(1, 10),
                bad_max: f.mean.mul(10),
                bad_loss: f.block_error_rate,
            })),
            None if p > 0.0 => LossProcess::Bernoulli(p),
            None => LossProcess::None,
        };
        GprsUplink {
            params,
            errors,
            rng,
            tbf_until: None,
            owed_blocks: 0,
            control_until: Instant::ZERO,
            ack_origin: Instant::ZERO,
            idle: true,
            errored: Vec::new(),
            last_release: Instant::ZERO,
            held_packets: 0,
            tbf_setups: 0,
            control_blocks: 0,
            block_retransmissions: 0,
        }
    }

    /// Block periods `n` blocks sent from `start` take with errors: each block is sent until
    /// it gets through (the error rates are below 1, so this ends with probability 1).
    /// `data`: the blocks are the packet's RLC data blocks, whose errors are recorded for
    /// [`GprsUplink::release_at`] (control blocks are not reassembled: theirs are not).
    fn sent_blocks(&mut self, start: Instant, n: u32, data: bool) -> u32 {
        let mut sent = 0;
        if matches!(self.errors, LossProcess::None) {
            return n;
        }
        for _ in 0..n {
            let mut failures = 0;
            let mut first_failed = None;
            loop {
                let at = start + self.params.blocks_time(sent + 1);
                sent += 1;
                if !self.errors.on_packet(at, &mut self.rng) {
                    break;
                }
                first_failed.get_or_insert(at);
                failures += 1;
            }
            if let (true, Some(at)) = (data, first_failed) {
                self.errored.push((at, failures));
            }
        }
        self.block_retransmissions += u64::from(sent - n);
        sent
    }

    /// The first Packet Uplink Ack/Nack at or after `t` while the uplink keeps sending: one
    /// every `ack_interval_blocks` block periods from the busy period's first data block.
    fn next_ack(&self, t: Instant) -> Instant {
        let every = self.params.blocks_time(self.params.ack_interval_blocks);
        if every == Duration::ZERO {
            return t;
        }
        let since = (t - self.ack_origin).nanos();
        let k = since.div_ceil(every.nanos());
        self.ack_origin + Duration::from_nanos(k * every.nanos())
    }

    /// The packet on the uplink finished its blocks at `done`, with `queued_blocks` blocks of
    /// packets behind it in the modem's buffer: when the network hands it on (sans IO).
    ///
    /// Without a block in error (its own or an earlier packet's still missing) at `done`. A
    /// block that failed at `t` is reported missing by the next Ack/Nack — the next one of
    /// the 20-block grid, or the countdown's end (the buffer's last block, `done +
    /// queued_blocks` periods) if the buffer holds at most BS_CV_MAX blocks — and resent in
    /// the block period after it; each further failure waits for the next Ack/Nack again.
    /// The blocks the resends take are counted in the packet's time on the uplink
    /// ([`GprsUplink::service_time`]); here only when the packet is complete. Packets are
    /// handed on in order (no earlier than the one before).
    pub fn release_at(&mut self, done: Instant, queued_blocks: u32) -> Instant {
        let mut ready = done;
        if self.params.ack_interval_blocks > 0 {
            let period = self.params.blocks_time(1);
            let countdown_end = (queued_blocks <= self.params.cv_max_blocks)
                .then(|| done + self.params.blocks_time(queued_blocks));
            for &(failed, failures) in &self.errored {
                let mut t = failed;
                for _ in 0..failures {
                    t = self.next_ack(t) + period;
                }
                let t = countdown_end.map_or(t, |end| t.min(end));
                ready = ready.max(t);
            }
        }
        self.errored.clear();
        let release = ready.max(self.last_release);
        if release > done {
            self.held_packets += 1;
        }
        self.last_release = release;
        release
    }

    pub fn params(&self) -> &GprsUplinkParams {
        &self.params
    }

    /// A packet of `ip_bytes` starts on the idle-or-just-freed uplink at `now`: how long it
    /// occupies the uplink, from `now` to the end of its last block. In order: control blocks
    /// still on the air or owed, the TBF set-up if the TBF was released (or never opened),
    /// its data blocks. The TBF is then kept `tbf_hold` after its last block.
    pub fn service_time(&mut self, now: Instant, ip_bytes: u32) -> Duration {
        let mut t = now.max(self.control_until);
        self.control_blocks += u64::from(self.owed_blocks);
        let owed = self.sent_blocks(t, self.owed_blocks, false);
        self.owed_blocks = 0;
        t += self.params.blocks_time(owed);
        if self.tbf_until.is_none_or(|until| t > until) {
            self.tbf_setups += 1;
            t += self.params.tbf_setup;
            self.idle = true;
        }
        if self.idle {
            self.ack_origin = t;
            self.idle = false;
        }
        self.errored.clear();
        let blocks = self.sent_blocks(t, self.params.blocks(ip_bytes), true);
        let done = t + self.params.blocks_time(blocks);
        self.tbf_until = Some(done + self.params.tbf_hold);
        done - now
    }

    /// A downlink packet reached the modem at `now`: it owes its Packet Downlink Ack/Nack
    /// blocks. `busy`: a packet is on the uplink (the blocks are taken before the next one);
    /// else they occupy the uplink from now (or after earlier control blocks).
    pub fn on_downlink_packet(&mut self, now: Instant, busy: bool) {
        let n = self.params.ack_blocks_per_downlink_packet;
        if busy {
            self.owed_blocks += n;
        } else {
            self.control_blocks += u64::from(n);
            let blocks = self.params.blocks_time(n);
            self.control_until = now.max(self.control_until) + blocks;
        }
    }

    /// The uplink fell idle at `now` (no packet waiting): blocks owed go out now.
    pub fn on_idle(&mut self, now: Instant) {
        self.idle = true;
        if self.owed_blocks > 0 {
            self.control_blocks += u64::from(self.owed_blocks);
            let start = now.max(self.control_until);
            let sent = self.sent_blocks(start, self.owed_blocks, false);
            self.owed_blocks = 0;
            self.control_until = start + self.params.blocks_time(sent);
        }
    }
}

impl crate::net::link::Medium for GprsUplink {
    fn service_time(&mut self, now: Instant, ip_bytes: u32) -> Duration {
        GprsUplink::service_time(self, now, ip_bytes)
    }
    fn on_downlink_packet(&mut self, now: Instant, busy: bool) {
        GprsUplink::on_downlink_packet(self, now, busy)
    }
    fn on_idle(&mut self, now: Instant) {
        GprsUplink::on_idle(self, now)
    }
    fn release_at(&mut self, done: Instant, queued_packets: usize, queued_bytes: u64) -> Instant {
        // The buffer's blocks, packet by packet as if each were the mean size: a packet's
        // overhead and its last block's padding are what this rounds.
        let blocks = if queued_packets == 0 {
            0
        } else {
            let n = queued_packets as u64;
            let mean = u32::try_from(queued_bytes.div_ceil(n)).unwrap_or(u32::MAX);
            u32::try_from(n.saturating_mul(u64::from(self.params.blocks(mean)))).unwrap_or(u32::MAX)
        };
        GprsUplink::release_at(self, done, blocks)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(cs: u8, timeslots: u8) -> GprsUplinkParams {
        GprsUplinkParams {
            coding_scheme: cs,
            timeslots,
            overhead_octets: OVERHEAD_OCTETS,
            tbf_setup: Duration::from_millis(200),
            tbf_hold: Duration::from_millis(1000),
            ack_blocks_per_downlink_packet: 1,
            ack_interval_blocks: 20,
            cv_max_blocks: 15,
            block_error_rate: 0.0,
            fades: None,
        }
    }

    fn uplink(p: GprsUplinkParams) -> GprsUplink {
        GprsUplink::new(p, Xoshiro256pp::seed_from_u64(1))
    }

    #[test]
    fn the_guards_worst_packet_time() {
        // CS-3, 1 timeslot, TBF set-up 200 ms: a 296-byte packet needs ceil((296 + 11) / 36) = 9
        // blocks, plus 1 acknowledgement block and a 20-block Ack/Nack interval = 30 blocks =
        // 600 ms; (200 + 600) ms at BLER 0.
        assert!((params(3, 1).worst_packet_s(296) - 0.8).abs() < 1e-12);
        // Fades at BLER 0.6 (worse than the normal 0.1): 0.8 s / (1 − 0.6) = 2.0 s.
        let mut p = params(3, 1);
        p.block_error_rate = 0.1;
        p.fades = Some(Fades {
            interval_mean: Duration::from_secs(4),
            mean: Duration::from_secs(1),
            block_error_rate: 0.6,
        });
        assert!((p.worst_packet_s(296) - 2.0).abs() < 1e-12);
    }

    #[test]
    fn blocks_per_coding_scheme() {
        // A 40-byte CoAP GET (IPv4 20 + UDP 8 + CoAP 12) + 11 octets = 51 octets:
        // CS-1 ceil(51/20) = 3, CS-2 ceil(51/30) = 2, CS-3 ceil(51/36) = 2, CS-4 ceil(51/50) = 2.
        let b: Vec<u32> = (1..=4).map(|cs| params(cs, 1).blocks(40)).collect();
        assert_eq!(b, [3, 2, 2, 2]);
        // 39 + 11 = 50 octets fill one CS-4 block exactly; 1500 + 11 = 1511 → ceil(1511/36) = 42.
        assert_eq!(params(4, 1).blocks(39), 1);
        assert_eq!(params(3, 1).blocks(1500), 42);
        // Two timeslots: 3 CS-1 blocks take 3 × 20 / 2 = 30 ms; three timeslots: 2 blocks
        // take 40/3 ms = 13 333 333 ns (truncated).
        assert_eq!(params(1, 2).data_time(40), Duration::from_millis(30));
        assert_eq!(params(3, 3).data_time(40), Duration::from_nanos(13_333_333));
    }

    #[test]
    fn the_first_packet_pays_the_tbf_setup_a_kept_tbf_does_not() {
        let mut up = uplink(params(3, 1));
        // No TBF yet: 200 ms set-up + 2 blocks × 20 ms = 240 ms.
        let t0 = Instant::from_secs(1);
        assert_eq!(up.service_time(t0, 40), Duration::from_millis(240));
        // Done at 1.240 s; the TBF is kept until 2.240 s. A packet at 2.0 s: 40 ms only.
        assert_eq!(
            up.service_time(Instant::from_secs(2), 40),
            Duration::from_millis(40)
        );
        // That one ends at 2.040 s, kept until 3.040 s; at 3.041 s the TBF is gone: 240 ms.
        assert_eq!(
            up.service_time(Instant::from_millis(3041), 40),
            Duration::from_millis(240)
        );
        assert_eq!(up.tbf_setups, 2);
    }

    #[test]
    fn acknowledgements_take_uplink_blocks() {
        let mut up = uplink(params(3, 1));
        let t0 = Instant::from_secs(1);
        assert_eq!(up.service_time(t0, 40), Duration::from_millis(240));
        // Two responses reach the modem while the request is on the uplink: 2 blocks owed.
        up.on_downlink_packet(t0, true);
        up.on_downlink_packet(t0, true);
        // The next request, back to back at 1.240 s: 2 × 20 (owed) + 2 × 20 (data) = 80 ms.
        let t1 = t0 + Duration::from_millis(240);
        assert_eq!(up.service_time(t1, 40), Duration::from_millis(80));
        // Idle uplink at 1.320 s: a response's block occupies it until 1.340 s; a request
        // arriving at 1.330 s ends at 1.340 + 0.040 = 1.380 s: 50 ms after its arrival.
        let t2 = t1 + Duration::from_millis(80);
        up.on_downlink_packet(t2, false);
        let t3 = t2 + Duration::from_millis(10);
        assert_eq!(up.service_time(t3, 40), Duration::from_millis(50));
        assert_eq!(up.control_blocks, 3);
    }
}

#[cfg(test)]
mod error_tests {
    use super::*;

    #[test]
    fn blocks_in_error_are_sent_again() {
        let p = GprsUplinkParams {
            coding_scheme: 3,
            timeslots: 1,
            overhead_octets: OVERHEAD_OCTETS,
            tbf_setup: Duration::ZERO,
            tbf_hold: Duration::from_millis(1000),
            ack_blocks_per_downlink_packet: 1,
            ack_interval_blocks: 20,
            cv_max_blocks: 15,
            block_error_rate: 0.1,
            fades: None,
        };
        // A block is sent 1 / (1 − 0.1) = 1.111… times on average, so the GET's 2 blocks take
        // 2 × 1.111… × 20 = 44.44 ms. The number of resends of one block is geometric with
        // standard deviation √0.1 / 0.9 = 0.351 periods: per packet √2 × 0.351 × 20 = 9.9 ms,
        // over 10 000 packets 0.099 ms; the tolerance 0.444 ms (1 %) is 4.5 of those.
        let mut up = GprsUplink::new(p, Xoshiro256pp::seed_from_u64(7));
        let mut total = Duration::ZERO;
        for i in 0..10_000u64 {
            let t = up.service_time(Instant::from_secs(i), 40);
            // Whole block periods, at least the 2 blocks.
            assert!(t.nanos().is_multiple_of(20_000_000) && t >= Duration::from_millis(40));
            total += t;
        }
        let mean_ms = total.secs_f64() * 1000.0 / 10_000.0;
        assert!((mean_ms - 44.444).abs() < 0.444, "{mean_ms}");
        assert_eq!(
            up.block_retransmissions,
            (total.nanos() / 20_000_000 - 20_000)
        );
    }
}

#[cfg(test)]
mod arq_tests {
    use super::*;
    use crate::net::link::Medium;

    /// CS-3, 1 timeslot, TBF set-up 200 ms, Ack/Nack every 20 blocks (400 ms), BS_CV_MAX 15,
    /// no random errors: the tests place the block errors themselves.
    fn uplink() -> GprsUplink {
        let p = GprsUplinkParams {
            coding_scheme: 3,
            timeslots: 1,
            overhead_octets: OVERHEAD_OCTETS,
            tbf_setup: Duration::from_millis(200),
            tbf_hold: Duration::from_millis(1000),
            ack_blocks_per_downlink_packet: 1,
            ack_interval_blocks: 20,
            cv_max_blocks: 15,
            block_error_rate: 0.0,
            fades: None,
        };
        GprsUplink::new(p, Xoshiro256pp::seed_from_u64(1))
    }

    /// A 40-byte GET at 1 s on a released TBF: set-up 200 ms, its 2 blocks end at 1.240 s, the
    /// Ack/Nack grid starts at its first block, 1.200 s (Ack/Nacks at 1.6, 2.0, 2.4 s…).
    fn first_get(up: &mut GprsUplink) -> Instant {
        let t0 = Instant::from_secs(1);
        assert_eq!(up.service_time(t0, 40), Duration::from_millis(240));
        t0 + Duration::from_millis(240)
    }

    #[test]
    fn a_packet_without_errors_is_handed_on_when_its_last_block_ends() {
        let mut up = uplink();
        let done = first_get(&mut up);
        assert_eq!(up.release_at(done, 40), done);
        assert_eq!(up.held_packets, 0);
    }

    #[test]
    fn a_block_in_error_is_resent_after_the_next_ack_nack() {
        let mut up = uplink();
        let done = first_get(&mut up);
        // Its first block (1.200–1.220 s) was received in error once. With 40 blocks queued
        // behind it (more than BS_CV_MAX = 15) the next Ack/Nack is the grid's, at 1.200 +
        // 20 × 20 ms = 1.600 s; the block is resent in the period after: whole at 1.620 s.
        up.errored.push((Instant::from_millis(1220), 1));
        assert_eq!(up.release_at(done, 40), Instant::from_millis(1620));
        // The next GET, back to back (1.240–1.280 s, no error), waits for it: reassembly in
        // order hands it on at 1.620 s too.
        let t1 = done;
        assert_eq!(up.service_time(t1, 40), Duration::from_millis(40));
        assert_eq!(
            up.release_at(t1 + Duration::from_millis(40), 38),
            Instant::from_millis(1620)
        );
        assert_eq!(up.held_packets, 2);
    }

    #[test]
    fn a_block_failing_twice_waits_for_two_ack_nacks() {
        let mut up = uplink();
        let done = first_get(&mut up);
        // Failed at 1.220 s, reported at 1.600, resent 1.600–1.620 and failed again; reported
        // at the next Ack/Nack, 2.000 s; resent 2.000–2.020 s.
        up.errored.push((Instant::from_millis(1220), 2));
        assert_eq!(up.release_at(done, 40), Instant::from_millis(2020));
    }

    #[test]
    fn the_countdown_brings_the_ack_nack_forward() {
        let mut up = uplink();
        let done = first_get(&mut up);
        // 10 blocks queued (at most BS_CV_MAX = 15): the countdown's last block ends at
        // 1.240 + 10 × 20 ms = 1.440 s, before the grid's 1.600 s Ack/Nack: whole at 1.440 s.
        up.errored.push((Instant::from_millis(1220), 1));
        assert_eq!(up.release_at(done, 10), Instant::from_millis(1440));
        // Nothing queued: the countdown ends with the packet itself (its resend counted in
        // its time on the uplink): handed on when its blocks end.
        let mut up = uplink();
        let done = first_get(&mut up);
        up.errored.push((Instant::from_millis(1220), 1));
        assert_eq!(up.release_at(done, 0), done);
    }

    #[test]
    fn the_links_queue_is_counted_in_blocks() {
        let mut up = uplink();
        let done = first_get(&mut up);
        // 5 queued GETs of 40 bytes: 200 bytes, 40 each, 2 CS-3 blocks each = 10 blocks ≤ 15:
        // the countdown's end, 1.240 + 0.200 = 1.440 s (as above, through the link's call).
        up.errored.push((Instant::from_millis(1220), 1));
        assert_eq!(
            Medium::release_at(&mut up, done, 5, 200),
            Instant::from_millis(1440)
        );
        // 8 queued GETs: 16 blocks > 15: the grid's Ack/Nack, 1.620 s.
        let mut up = uplink();
        let done = first_get(&mut up);
        up.errored.push((Instant::from_millis(1220), 1));
        assert_eq!(
            Medium::release_at(&mut up, done, 8, 320),
            Instant::from_millis(1620)
        );
    }

    #[test]
    fn without_an_ack_interval_blocks_in_error_hold_nothing_back() {
        let mut up = uplink();
        up.params.ack_interval_blocks = 0;
        let done = first_get(&mut up);
        up.errored.push((Instant::from_millis(1220), 3));
        assert_eq!(up.release_at(done, 40), done);
    }

    #[test]
    fn a_new_busy_period_restarts_the_grid() {
        let mut up = uplink();
        let done = first_get(&mut up);
        assert_eq!(up.release_at(done, 0), done);
        up.on_idle(done);
        // At 1.500 s (TBF kept): no set-up; the grid restarts at 1.500 s: a block failing at
        // 1.520 s is reported at 1.900 s (40 queued), whole at 1.920 s.
        let t = Instant::from_millis(1500);
        assert_eq!(up.service_time(t, 40), Duration::from_millis(40));
        up.errored.push((Instant::from_millis(1520), 1));
        assert_eq!(
            up.release_at(t + Duration::from_millis(40), 40),
            Instant::from_millis(1920)
        );
    }
}
