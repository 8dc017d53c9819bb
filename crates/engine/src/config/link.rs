//! The constrained link of the star (`[link]`, docs/model.md) and its error profiles.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::defaults;
use crate::net::loss::ChainParams;

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
