//! NB-IoT and LTE-M cells (docs/networks.md, "NB-IoT and LTE-M cells"): one cell, one device per
//! client node, the eNB's scheduler on one carrier, at 1 ms subframe granularity, from
//! 3GPP TS 36.211 / 36.213 / 36.321 / 36.331 and TS 24.301.
//!
//! - `numerology.rs`: a category's channels, repetitions per coverage level, scheduling gaps
//!   and transport block sizes (NB1, NB2, Cat-M1 — the one place the categories differ);
//! - `carrier.rs`: the eNB's first-come-first-served booking of downlink and uplink subframes,
//!   each lane's bookings an `occupancy.rs` bitmap under a tree of free-run lengths;
//! - `procedures.rs`: random access, set-up / resume, connected uplink access, data with HARQ;
//! - `power.rs`: a device's RRC / PSM mode and its time per radio state;
//! - `coverage.rs`: coupling loss → RSRP → coverage level;
//! - `timeline.rs`: one traced device's radio states over time (the state-timeline figure);
//! - `cell.rs`: the element: devices, jobs, timers; `types.rs`: its events;
//! - `config.rs`: the `[network]` keys and their sourced defaults.

pub mod carrier;
pub mod cell;
pub mod config;
pub mod coverage;
pub mod numerology;
pub mod occupancy;
pub mod power;
pub mod procedures;
pub mod timeline;
pub mod types;

pub use cell::{Cell, CellParams};
pub use config::CellConfig;
pub use types::{CellEvent, CellKind, CellOutcome};

#[cfg(test)]
mod tests;
