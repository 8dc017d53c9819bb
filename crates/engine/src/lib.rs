//! # coaplab-engine — the simulator
//!
//! A deterministic discrete-event simulator of the constrained-link CoAP testbed of docs/design.md §2:
//! `sim` (event queue, RNG streams), `net` (queue, link, loss, path delay), `coap` (client and
//! server endpoints), `workload`, `metrics`, and `testbed`, which wires them into a run.

pub mod basics;
pub mod coap;
pub mod config;
pub mod energy;
pub mod error;
pub mod foreign;
pub mod metrics;
pub mod net;
pub mod packet;
pub mod reporting;
pub mod sim;
pub mod tcp;
pub mod testbed;
pub mod workload;
pub mod world;
