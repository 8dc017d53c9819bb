//! The power model (`[energy]`, docs/energy.md): the power a device draws in each radio state,
//! the battery it runs from, and what a device's time per state costs — energy, mean power,
//! battery life. Two sets of defaults, chosen by the network kind: cellular devices (an NB-IoT
//! module, Lauridsen et al. 2018) and mesh nodes (the CC2420 radio of the TelosB / Tmote Sky).
//! Every key of `[energy]` is optional; an absent key takes the default of the run's network
//! kind, so `[energy]` is left out of a configuration that does not set it (its identity stays).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::state::{RadioState, StateTimes};

// Cellular devices. Source: Lauridsen, Krigslund, Rohr, Madueño, "An Empirical NB-IoT Power
// Consumption Model for Battery Lifetime Estimation", IEEE VTC-Spring 2018: two commercial
// NB-IoT modules measured, transmit at 23 dBm 710–840 mW, receive 210–240 mW, idle-mode DRX
// sleep 21–23 mW, PSM 14–35 µW. The defaults take the higher of the two modules' figures in
// every state, so that a battery life computed with them is the shorter of the two modules'
// (a deployment planned on it does not overestimate its battery).

/// `energy.tx_mw` (cellular): transmitting at 23 dBm, mW.
/// Source: Lauridsen et al., VTC-Spring 2018 (710–840 mW; the higher module).
pub const CELLULAR_TX_MW: f64 = 840.0;
/// `energy.rx_mw` (cellular): receiving, mW.
/// Source: Lauridsen et al., VTC-Spring 2018 (210–240 mW; the higher module).
pub const CELLULAR_RX_MW: f64 = 240.0;
/// `energy.connected_idle_mw` (cellular): connected but neither sending nor receiving (between
/// grants, asleep between the wake-ups of connected-mode DRX), mW.
/// Derived, no module measurement of it in the source: between C-DRX wake-ups the module
/// sleeps as between idle-mode paging occasions (receiver off, clocks running), so it draws
/// the idle DRX sleep figure of the same module, Lauridsen et al. VTC-Spring 2018 (21–23 mW;
/// the higher module). A separate constant: editing one key's default never moves another.
pub const CELLULAR_CONNECTED_IDLE_MW: f64 = 23.0;
/// `energy.idle_drx_mw` (cellular): idle mode, asleep between paging occasions, mW.
/// Source: Lauridsen et al., VTC-Spring 2018 (21–23 mW; the higher module).
pub const CELLULAR_IDLE_DRX_MW: f64 = 23.0;
/// `energy.psm_uw` (cellular): power saving mode, µW.
/// Source: Lauridsen et al., VTC-Spring 2018 (14–35 µW; the higher module).
pub const CELLULAR_PSM_UW: f64 = 35.0;

// Mesh nodes: the Chipcon (TI) CC2420 datasheet (SWRS041), "Electrical Specifications":
// current in RX 18.8 mA, in TX at 0 dBm 17.4 mA, idle mode (oscillator on) 426 µA, power down
// 20 µA; at the supply of the TelosB / Tmote Sky, two AA cells, 3 V (Polastre, Szewczyk,
// Culler, "Telos: Enabling Ultra-Low Power Wireless Research", IPSN 2005) — the platform whose
// ContikiMAC timing the meshes model (`net/radio/rdc/contikimac.rs`).

/// The mesh radio's supply voltage, V (TelosB: two AA cells, Polastre et al. IPSN 2005).
pub const MESH_SUPPLY_V: f64 = 3.0;
/// `energy.tx_mw` (meshes): CC2420 transmitting at 0 dBm, 17.4 mA × 3 V = 52.2 mW.
pub const MESH_TX_MW: f64 = 17.4 * MESH_SUPPLY_V;
/// `energy.rx_mw` (meshes): CC2420 receiving or listening, 18.8 mA × 3 V = 56.4 mW.
pub const MESH_RX_MW: f64 = 18.8 * MESH_SUPPLY_V;
/// `energy.connected_idle_mw` (meshes; no mesh state uses it): CC2420 idle, 0.426 mA × 3 V
/// = 1.278 mW.
pub const MESH_CONNECTED_IDLE_MW: f64 = 0.426 * MESH_SUPPLY_V;
/// `energy.idle_drx_mw` (meshes; no mesh state uses it): CC2420 idle, 0.426 mA × 3 V
/// = 1.278 mW.
pub const MESH_IDLE_DRX_MW: f64 = 0.426 * MESH_SUPPLY_V;
/// `energy.psm_uw` (meshes: the radio off): the CC2420 in its idle mode, 426 µA × 3 V
/// = 1278 µW. Contiki 2.6 turns the radio off with `SRFOFF` (`core/dev/cc2420.c` `off()`),
/// which leaves the CC2420 idle with its oscillator running, not powered down (20 µA, 60 µW:
/// set `energy.psm_uw = 60` for a node that powers the radio down).
pub const MESH_PSM_UW: f64 = 426.0 * MESH_SUPPLY_V;

/// `energy.battery_wh`: the battery, Wh.
/// Source: 3GPP TR 45.820 (Rel-13), the battery-life objective of ten years is stated for a
/// 5 Wh battery.
pub const ENERGY_BATTERY_WH: f64 = 5.0;

/// Seconds in a year for battery lives: 365.25 days.
pub const SECONDS_PER_YEAR: f64 = 365.25 * 86_400.0;

/// `[energy]`: the power model's keys (docs/energy.md). Each is optional: absent, it takes the
/// default of the run's network kind (cellular module figures, or the CC2420's on meshes).
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EnergyConfig {
    /// Power while transmitting, mW. Default: 840 (cellular, NB-IoT module at 23 dBm,
    /// Lauridsen et al. VTC-Spring 2018); 52.2 on meshes (CC2420 TX at 0 dBm, 17.4 mA × 3 V).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(min = 0.0, max = 1e6))]
    pub tx_mw: Option<f64>,
    /// Power while receiving or listening, mW. Default: 240 (cellular, Lauridsen et al.);
    /// 56.4 on meshes (CC2420 RX, 18.8 mA × 3 V).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(min = 0.0, max = 1e6))]
    pub rx_mw: Option<f64>,
    /// Power while connected and neither sending nor receiving (between grants, asleep
    /// between connected-mode DRX wake-ups), mW. Default: 23 (cellular: the idle DRX sleep
    /// figure of Lauridsen et al., derived, docs/energy.md); 1.278 on meshes (CC2420 idle).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(min = 0.0, max = 1e6))]
    pub connected_idle_mw: Option<f64>,
    /// Power in idle mode asleep between paging occasions (DRX / eDRX), mW. Default: 23
    /// (cellular, Lauridsen et al.); 1.278 on meshes (CC2420 idle).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(min = 0.0, max = 1e6))]
    pub idle_drx_mw: Option<f64>,
    /// Power in power saving mode (cellular) or with the radio off (meshes), µW. Default: 35
    /// (cellular, Lauridsen et al.); 1278 on meshes (CC2420 idle, 426 µA × 3 V: Contiki's
    /// radio off).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(min = 0.0, max = 1e9))]
    pub psm_uw: Option<f64>,
    /// The device's battery, Wh. Default: 5 (3GPP TR 45.820's battery-life objective is
    /// stated for a 5 Wh battery).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-omit-if-absent" = true))]
    #[schemars(range(min = 1e-6, max = 1e6))]
    pub battery_wh: Option<f64>,
}

/// The power a device draws in each state, mW, and its battery, Wh.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PowerModel {
    /// mW per state, in the order of [`RadioState::ALL`].
    pub mw: [f64; 5],
    pub battery_wh: f64,
}

/// Which set of defaults applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Device {
    /// A cellular module (NB-IoT, LTE-M; also the star's and GPRS's devices, which record no
    /// state times today).
    Cellular,
    /// A mesh node's CC2420 radio.
    Mesh,
}

impl PowerModel {
    /// The defaults of `device`.
    pub fn defaults(device: Device) -> PowerModel {
        let mw = match device {
            Device::Cellular => [
                CELLULAR_TX_MW,
                CELLULAR_RX_MW,
                CELLULAR_CONNECTED_IDLE_MW,
                CELLULAR_IDLE_DRX_MW,
                CELLULAR_PSM_UW / 1000.0,
            ],
            Device::Mesh => [
                MESH_TX_MW,
                MESH_RX_MW,
                MESH_CONNECTED_IDLE_MW,
                MESH_IDLE_DRX_MW,
                MESH_PSM_UW / 1000.0,
            ],
        };
        PowerModel {
            mw,
            battery_wh: ENERGY_BATTERY_WH,
        }
    }

    /// The defaults of `device` with the keys `cfg` sets.
    pub fn resolve(device: Device, cfg: Option<&EnergyConfig>) -> PowerModel {
        let mut m = Self::defaults(device);
        let Some(c) = cfg else { return m };
        let keys = [
            c.tx_mw,
            c.rx_mw,
            c.connected_idle_mw,
            c.idle_drx_mw,
            c.psm_uw.map(|uw| uw / 1000.0),
        ];
        for (slot, key) in m.mw.iter_mut().zip(keys) {
            if let Some(v) = key {
                *slot = v;
            }
        }
        if let Some(wh) = c.battery_wh {
            m.battery_wh = wh;
        }
        m
    }

    /// The power in `state`, mW.
    pub fn mw(&self, state: RadioState) -> f64 {
        self.mw[state as usize]
    }

    /// The energy of one device's time per state, J: Σ_state P_state × t_state
    /// (mW × s = mJ, so / 1000).
    pub fn energy_j(&self, t: &StateTimes) -> f64 {
        RadioState::ALL
            .iter()
            .map(|&s| self.mw(s) * t.get(s).secs_f64())
            .sum::<f64>()
            / 1000.0
    }

    /// The years a battery of `battery_wh` lasts at a mean power of `mean_mw`:
    /// battery_wh × 3600 J / (mean_mw / 1000 W) s, over [`SECONDS_PER_YEAR`]; `None` for a
    /// zero power.
    pub fn battery_life_years(&self, mean_mw: f64) -> Option<f64> {
        (mean_mw > 0.0).then(|| self.battery_wh * 3600.0 / (mean_mw / 1000.0) / SECONDS_PER_YEAR)
    }
}

/// A value per radio state, serialised as a table keyed by the states' names in the order of
/// [`RadioState::ALL`].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PerState(pub [f64; 5]);

impl PerState {
    pub fn get(&self, state: RadioState) -> f64 {
        self.0[state as usize]
    }
}

impl Serialize for PerState {
    fn serialize<S: serde::Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = ser.serialize_map(Some(5))?;
        for s in RadioState::ALL {
            m.serialize_entry(s.name(), &self.get(s))?;
        }
        m.end()
    }
}

/// One run's energy figures (the summary's `energy.*`, docs/energy.md).
#[derive(Clone, Debug, Serialize)]
pub struct EnergyResult {
    /// Devices whose time per state was recorded.
    pub devices: u32,
    /// All devices' energy together, J.
    pub energy_j: f64,
    /// `energy_j` over the exchanges completed in the run, J (`None` with none completed).
    pub j_per_exchange: Option<f64>,
    /// The exchanges completed in the run (so that replications pool).
    pub exchanges_completed: u64,
    /// Mean over devices of each device's energy over the time its states cover, mW.
    pub mean_power_mw: f64,
    /// Mean time per device in each state, s, by state name (`tx`, `rx`, ...).
    pub state_time_s: PerState,
    /// `battery_wh` over `mean_power_mw`, years (`None` for a zero power).
    pub battery_life_years: Option<f64>,
    /// The battery of the power model, Wh (so that replications pool).
    pub battery_wh: f64,
}

/// The energy figures of devices with times `times` under `model`, `completed` exchanges done.
/// `None` without devices.
pub fn energy_result(
    model: &PowerModel,
    times: &[StateTimes],
    completed: u64,
) -> Option<EnergyResult> {
    if times.is_empty() {
        return None;
    }
    let n = times.len() as f64;
    let energy_j: f64 = times.iter().map(|t| model.energy_j(t)).sum();
    let mean_power_mw = times
        .iter()
        .map(|t| {
            let s = t.total().secs_f64();
            if s > 0.0 {
                model.energy_j(t) * 1000.0 / s
            } else {
                0.0
            }
        })
        .sum::<f64>()
        / n;
    let state_time_s = PerState(RadioState::ALL.map(|s| {
        let sum: f64 = times.iter().map(|t| t.get(s).secs_f64()).sum();
        sum / n
    }));
    Some(EnergyResult {
        devices: times.len() as u32,
        energy_j,
        j_per_exchange: (completed > 0).then(|| energy_j / completed as f64),
        exchanges_completed: completed,
        mean_power_mw,
        state_time_s,
        battery_life_years: model.battery_life_years(mean_power_mw),
        battery_wh: model.battery_wh,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use coaplab_cc::Duration;

    fn timeline(tx_ms: u64, rx_ms: u64, ci_ms: u64, drx_ms: u64, psm_ms: u64) -> StateTimes {
        let mut t = StateTimes::default();
        for (s, ms) in RadioState::ALL
            .iter()
            .zip([tx_ms, rx_ms, ci_ms, drx_ms, psm_ms])
        {
            t.add(*s, Duration::from_millis(ms));
        }
        t
    }

    /// A report on the cellular defaults: 0.2 s TX, 1 s RX, 20 s connected idle, 10 s idle
    /// DRX, 3568.8 s PSM (one hour in all).
    /// E = 840·0.2 + 240·1 + 23·20 + 23·10 + 0.035·3568.8 mJ
    ///   = 168 + 240 + 460 + 230 + 124.908 = 1222.908 mJ = 1.222908 J.
    #[test]
    fn energy_of_a_cellular_timeline_by_hand() {
        let m = PowerModel::defaults(Device::Cellular);
        let t = timeline(200, 1000, 20_000, 10_000, 3_568_800);
        assert_eq!(t.total(), Duration::from_secs(3600));
        assert!(
            (m.energy_j(&t) - 1.222908).abs() < 1e-9,
            "{}",
            m.energy_j(&t)
        );
    }

    /// A mesh node with NullRDC for 10 s: 0.1 s TX, 9.9 s listening.
    /// E = 52.2·0.1 + 56.4·9.9 mJ = 5.22 + 558.36 = 563.58 mJ; mean power 56.358 mW.
    #[test]
    fn energy_of_a_mesh_timeline_by_hand() {
        let m = PowerModel::defaults(Device::Mesh);
        let t = timeline(100, 9_900, 0, 0, 0);
        assert!((m.energy_j(&t) - 0.56358).abs() < 1e-12);
        let r = energy_result(&m, &[t], 4).unwrap();
        assert!((r.mean_power_mw - 56.358).abs() < 1e-9);
        // 0.56358 J over 4 exchanges = 0.140895 J each.
        assert!((r.j_per_exchange.unwrap() - 0.140895).abs() < 1e-12);
        assert_eq!(r.state_time_s.get(RadioState::Receive), 9.9);
        // The summary's table, in the states' order.
        let json = serde_json::to_string(&r.state_time_s).unwrap();
        assert_eq!(
            json,
            r#"{"tx":0.1,"rx":9.9,"connected_idle":0.0,"idle_drx":0.0,"psm":0.0}"#
        );
    }

    /// 5 Wh at a mean 1 mW: 5 × 3600 J / 0.001 W = 1.8e7 s; / (365.25 × 86400 = 31 557 600 s)
    /// = 0.570 385 6... years (31 557 600 × 0.57 = 17 987 832; the remaining 12 168 s are
    /// 0.000 385 6 years).
    #[test]
    fn battery_life_by_hand() {
        let m = PowerModel::defaults(Device::Cellular);
        let years = m.battery_life_years(1.0).unwrap();
        assert!((years - 1.8e7 / 31_557_600.0).abs() < 1e-12);
        assert!((years - 0.570_385_6).abs() < 1e-7);
        assert_eq!(m.battery_life_years(0.0), None);
    }

    /// Two devices: one always in PSM for 100 s (0.035 mW), one transmitting 1 s then PSM 99 s
    /// (840·1 + 0.035·99 = 843.465 mJ over 100 s = 8.43465 mW). Mean power
    /// (0.035 + 8.43465) / 2 = 4.234825 mW; mean TX time 0.5 s.
    #[test]
    fn the_mean_is_over_devices() {
        let m = PowerModel::defaults(Device::Cellular);
        let a = timeline(0, 0, 0, 0, 100_000);
        let b = timeline(1000, 0, 0, 0, 99_000);
        let r = energy_result(&m, &[a, b], 0).unwrap();
        assert!((r.mean_power_mw - 4.234825).abs() < 1e-12);
        assert_eq!(r.state_time_s.get(RadioState::Transmit), 0.5);
        assert_eq!(r.j_per_exchange, None);
        assert_eq!(r.devices, 2);
        assert!(energy_result(&m, &[], 1).is_none());
    }

    /// A key given overrides its default only; µW become mW.
    #[test]
    fn given_keys_override_the_kinds_defaults() {
        let cfg: EnergyConfig =
            serde_json::from_str(r#"{"psm_uw": 60, "battery_wh": 2.5}"#).unwrap();
        let m = PowerModel::resolve(Device::Mesh, Some(&cfg));
        assert_eq!(m.mw(RadioState::Psm), 0.06);
        assert_eq!(m.mw(RadioState::Transmit), 17.4 * 3.0);
        assert_eq!(m.battery_wh, 2.5);
        assert!(serde_json::from_str::<EnergyConfig>(r#"{"tx_w": 1}"#).is_err());
    }
}
