//! Helpers for the engine's integration tests: a resolved configuration with docs/design.md §2 defaults.
#![allow(dead_code)]

pub mod mesh;

use coaplab_engine::config::RunConfig;
use serde_json::{json, Value};

/// docs/design.md §2 defaults, overridden by `patch` (a JSON object merged one level deep per section).
pub fn config(patch: Value) -> RunConfig {
    let mut base = json!({
        "name": "test", "seed": 1, "replications": 1,
        "link": {"downlink_kbps": 30.0, "uplink_kbps": 60.0, "downlink_delay_ms": 400.0,
                 "uplink_delay_ms": 200.0, "mtu": 296, "buffer_bytes": 2500,
                 "uplink_buffer_bytes": null, "path_delay_ms": [10.0, 20.0],
                 "link_overhead_bytes": 0, "errors": "none"},
        "workload": {"kind": "continuous", "clients": 1, "exchanges": 50, "duration_s": null,
                     "batch": [1, 10], "start_spread_s": 0.0, "response_bytes": 60,
                     "resource_bytes": 102400, "block_szx": 4},
        "coap": {"transport": "udp", "cc": "default", "max_retransmit": 20, "nstart": 1,
                 "ack_timeout_s": 2.0, "ack_random_factor": 1.5, "max_timer_s": 60.0},
        "trace": false
    });
    for (section, fields) in patch.as_object().unwrap() {
        match fields.as_object() {
            Some(obj) => {
                for (k, v) in obj {
                    base[section][k] = v.clone();
                }
            }
            None => base[section] = fields.clone(),
        }
    }
    RunConfig::from_json(&base.to_string()).unwrap()
}
