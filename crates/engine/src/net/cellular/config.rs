//! `[network]` keys of the cells (`kind = "nbiot"` and `kind = "ltem"`; docs/networks.md,
//! "NB-IoT and LTE-M cells"), each with its named default and the default's source. The
//! topology (`net/topology/cell.rs`) turns them into the cell's parameters ([`super::CellParams`]).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `category`: NB-IoT Rel-13 Cat NB1 (`nbiot`); LTE-M Cat-M1 (`ltem`, its only category).
pub const NBIOT_CATEGORY: &str = "nb1";
pub const LTEM_CATEGORY: &str = "m1";
/// Categories per kind.
pub const NBIOT_CATEGORIES: &[&str] = &["nb1", "nb2"];
pub const LTEM_CATEGORIES: &[&str] = &["m1"];
/// `coupling_loss_db`: 130 dB, a device in good coverage (level 0 with the default
/// thresholds: RSRP 32.2 − 130 = −97.8 dBm, above −107); assumed, docs/networks.md.
pub const COUPLING_LOSS_DB: f64 = 130.0;
/// `rsrp_thresholds_dbm`: SIB2's `rsrp-ThresholdsPrachInfoList` (TS 36.331), level 1 below
/// −107 dBm, level 2 below −117 dBm: a commercial SIB2-NB.
pub const RSRP_THRESHOLDS_DBM: [f64; 2] = [-107.0, -117.0];
/// `inactivity_timer_s`: the eNB releases a connection idle this long: 20 s on NB-IoT (an
/// operator's field configuration), 10 s on LTE-M (docs/networks.md).
pub const NBIOT_INACTIVITY_TIMER_S: f64 = 20.0;
pub const LTEM_INACTIVITY_TIMER_S: f64 = 10.0;
/// `connected_drx_s`: connected-mode DRX cycle, 2.048 s (`longDRX-Cycle` sf2048, TS 36.331
/// DRX-Config-NB; the NB-IoT commercial setting).
pub const CONNECTED_DRX_S: f64 = 2.048;
/// `drx_inactivity_ms`: after this long without traffic a connected device sleeps between the
/// DRX cycle's wake-ups (`drx-InactivityTimer`, TS 36.321 §5.7). Fitted: longer than a
/// round trip to the server (a response to a request finds the device awake, as the published
/// BG96 ping times show).
pub const DRX_INACTIVITY_MS: f64 = 400.0;
/// `paging_cycle_s`: idle-mode DRX, `defaultPagingCycle` rf256 = 2.56 s (TS 36.331, the
/// commercial SIB2 setting).
pub const PAGING_CYCLE_S: f64 = 2.56;
/// `edrx_s`: extended DRX cycle in idle mode (TS 24.301 §5.3.12, TS 36.304 §7.3); 0 = off,
/// the default (eDRX is negotiated per device).
pub const EDRX_S: f64 = 0.0;
/// `psm`: power saving mode (TS 24.301 §5.3.11); off unless the device asks for it.
pub const PSM: bool = false;
/// `t3324_s`: PSM's active timer: reachable this long in idle mode before PSM. No 3GPP
/// default (TS 24.008 §10.5.7.4a encodes it); 60 s, assumed.
pub const T3324_S: f64 = 60.0;
/// `t3412_s`: periodic tracking area update timer, 54 min (TS 24.301 §10.2, T3412 default).
pub const T3412_S: f64 = 3240.0;
/// `rai`: release assistance indication (TS 24.301 §9.9.4.25, NAS RAI; TS 36.321 AS RAI):
/// off by default (not every device sends it).
pub const RAI: bool = false;
/// `access`: `cp`: data over NAS (control plane CIoT EPS optimisation, TS 24.301 §5.3.15),
/// every connection an RRC set-up; `up`: user plane with RRC suspend / resume (TS 36.331
/// §5.3.3), connections after the first resumed.
pub const ACCESS: &str = "cp";
/// `core_delay_ms`: eNB ↔ P-GW one-way delay (S1, S-GW/MME, P-GW, processing). Fitted
/// together with `path_delay_ms` to the published BG96 ping times (docs/networks.md).
pub const CORE_DELAY_MS: f64 = 40.0;
/// `path_delay_ms`: P-GW ↔ server one-way delay (the Internet to a cloud server). Fitted.
pub const PATH_DELAY_MS: f64 = 50.0;
/// `nat_timeout_s`: the operator's NAT drops a UDP binding idle this long; RFC 4787 §4.3
/// REQ-5: at least 2 min.
pub const NAT_TIMEOUT_S: f64 = 120.0;
/// `bler`: block error rate of a transmission per level: 10 %, the target link adaptation
/// keeps (the CQI is defined at 10 % BLER, TS 36.213 §7.2.3).
pub const BLER: [f64; 3] = [0.1, 0.1, 0.1];
/// `ra_attempts_per_level`: preamble attempts before the next level
/// (`maxNumPreambleAttemptCE`, TS 36.331; 4 in a commercial SIB2-NB).
pub const RA_ATTEMPTS_PER_LEVEL: u32 = 4;
/// `ra_backoff_ms`: largest back-off after a failed attempt, uniform in [0, this] (the RAR's
/// backoff indicator, TS 36.321 §5.1.4 and Table 7.2-2: 256 ms).
pub const RA_BACKOFF_MS: f64 = 256.0;
/// `admission_backlog_s`: the eNB refuses new packets while its scheduler has booked the
/// carrier further ahead than this (cell.rs `refuses`): 60 s, the longest connection
/// set-up a device waits for before it gives up — T300-NB's largest value, `ms60000`
/// (TS 36.331 UE-TimersAndConstants-NB, `t300-r13`); a set-up booked later than that would
/// fail anyway.
pub const ADMISSION_BACKLOG_S: f64 = 60.0;

/// A device's coupling loss: one number for every device, or a distribution each device draws
/// from.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum CouplingLoss {
    Fixed(f64),
    /// `{ distribution = "uniform", low, high }`: each device uniform in `[low, high]` dB.
    Distribution {
        distribution: String,
        low: f64,
        high: f64,
    },
}

fn coupling_loss() -> CouplingLoss {
    CouplingLoss::Fixed(COUPLING_LOSS_DB)
}
fn rsrp_thresholds() -> [f64; 2] {
    RSRP_THRESHOLDS_DBM
}
fn connected_drx() -> f64 {
    CONNECTED_DRX_S
}
fn drx_inactivity() -> f64 {
    DRX_INACTIVITY_MS
}
fn paging_cycle() -> f64 {
    PAGING_CYCLE_S
}
fn edrx() -> f64 {
    EDRX_S
}
fn psm() -> bool {
    PSM
}
fn t3324() -> f64 {
    T3324_S
}
fn t3412() -> f64 {
    T3412_S
}
fn rai() -> bool {
    RAI
}
fn access() -> String {
    ACCESS.into()
}
fn core_delay() -> f64 {
    CORE_DELAY_MS
}
fn path_delay() -> f64 {
    PATH_DELAY_MS
}
fn nat_timeout() -> f64 {
    NAT_TIMEOUT_S
}
fn bler() -> [f64; 3] {
    BLER
}
fn ra_attempts() -> u32 {
    RA_ATTEMPTS_PER_LEVEL
}
fn ra_backoff() -> f64 {
    RA_BACKOFF_MS
}
fn admission_backlog() -> f64 {
    ADMISSION_BACKLOG_S
}

/// The keys of `network.kind = "nbiot"` and `"ltem"` (docs/networks.md, "NB-IoT and LTE-M
/// cells"), each with its default above.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CellConfig {
    /// Cells: the device category: `nb1` (Rel-13) or `nb2` (Rel-14) on `nbiot`, `m1` on
    /// `ltem`; absent = `nb1` / `m1`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-omit-if-absent" = true))]
    pub category: Option<String>,
    /// Cells: each device's coupling loss to the eNB, dB: a number, or
    /// `{ distribution = "uniform", low, high }` drawn per device.
    #[serde(default = "coupling_loss")]
    #[schemars(extend("x-omit-if-absent" = true))]
    pub coupling_loss_db: CouplingLoss,
    /// Cells: SIB2's RSRP thresholds of coverage levels 1 and 2, dBm (RSRP = the eNB's power
    /// per subcarrier − coupling loss).
    #[serde(default = "rsrp_thresholds")]
    #[schemars(extend("x-omit-if-absent" = true))]
    pub rsrp_thresholds_dbm: [f64; 2],
    /// Cells: data over NAS (`cp`) or user plane with RRC resume (`up`).
    #[serde(default = "access")]
    #[schemars(extend("x-omit-if-absent" = true))]
    pub access: String,
    /// Cells: release assistance: the connection ends once the response to a request arrived.
    #[serde(default = "rai")]
    #[schemars(extend("x-omit-if-absent" = true))]
    pub rai: bool,
    /// Cells: power saving mode after `t3324_s` in idle mode (unreachable until the next uplink
    /// or tracking area update).
    #[serde(default = "psm")]
    #[schemars(extend("x-omit-if-absent" = true))]
    pub psm: bool,
    /// Cells: PSM's active timer T3324, s.
    #[serde(default = "t3324")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(min = 0.0, max = 1e7))]
    pub t3324_s: f64,
    /// Cells: periodic tracking area update timer T3412, s.
    #[serde(default = "t3412")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(min = 1.0, max = 1e8))]
    pub t3412_s: f64,
    /// Cells: extended DRX cycle in idle mode, s; 0 = off (the paging cycle).
    #[serde(default = "edrx")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(min = 0.0, max = 1e5))]
    pub edrx_s: f64,
    /// Cells: idle-mode paging cycle, s.
    #[serde(default = "paging_cycle")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(min = 0.01, max = 1e5))]
    pub paging_cycle_s: f64,
    /// Cells: the eNB releases a connection without traffic for this long, s; absent = 20
    /// (`nbiot`) or 10 (`ltem`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(min = 0.0, max = 1e6))]
    pub inactivity_timer_s: Option<f64>,
    /// Cells: connected-mode DRX cycle, s.
    #[serde(default = "connected_drx")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(min = 0.01, max = 1e4))]
    pub connected_drx_s: f64,
    /// Cells: time without traffic before a connected device sleeps between DRX wake-ups, ms.
    #[serde(default = "drx_inactivity")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(min = 0.0, max = 1e7))]
    pub drx_inactivity_ms: f64,
    /// Cells: eNB ↔ packet gateway one-way delay, ms.
    #[serde(default = "core_delay")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(min = 0.0, max = 1e7))]
    pub core_delay_ms: f64,
    /// Cells: packet gateway ↔ server one-way delay, ms.
    #[serde(default = "path_delay")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(min = 0.0, max = 1e7))]
    pub path_delay_ms: f64,
    /// Cells: a device's NAT binding expires after this long without uplink, s; downlink
    /// packets to it are then dropped (counted); 0 = no NAT.
    #[serde(default = "nat_timeout")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(min = 0.0, max = 1e8))]
    pub nat_timeout_s: f64,
    /// Cells: block error rate of one transmission at coverage levels 0, 1, 2 (each failed
    /// block is sent again, HARQ), below 1.
    #[serde(default = "bler")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(inner(range(min = 0.0, max = 0.99)))]
    pub bler: [f64; 3],
    /// Cells: random-access preamble attempts at a level before the next level.
    #[serde(default = "ra_attempts")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(min = 1, max = 100))]
    pub ra_attempts_per_level: u32,
    /// Cells: largest random back-off after a failed preamble attempt, ms.
    #[serde(default = "ra_backoff")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(min = 0.0, max = 1e6))]
    pub ra_backoff_ms: f64,
    /// Cells: the eNB refuses new packets (counted in `admission_rejects`) while its
    /// scheduler has booked the carrier more than this far ahead, s.
    #[serde(default = "admission_backlog")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(min = 0.001, max = 1e6))]
    pub admission_backlog_s: f64,
}

impl Default for CellConfig {
    fn default() -> Self {
        serde_json::from_str("{}").expect("every key has a default")
    }
}

impl CellConfig {
    /// The NAT binding's idle timeout (`nat_timeout_s`): `None` without a NAT (0). The one
    /// reading of the key: the cell drops downlink packets to a device idle longer
    /// (`super::cell`), and a DTLS client without a Connection ID handshakes again after it
    /// (`crate::coap::security`).
    pub fn nat_timeout(&self) -> Option<coaplab_cc::Duration> {
        (self.nat_timeout_s > 0.0).then(|| coaplab_cc::Duration::from_secs_f64(self.nat_timeout_s))
    }
}
