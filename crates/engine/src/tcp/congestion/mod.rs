//! Congestion controllers: how `cwnd` and `ssthresh` move, behind one trait
//! ([`controller::Controller`], in the shape of quinn-proto's `congestion` module), and a
//! registry that names them. The connection knows no controller by name: it asks the trait.
//! Loss *detection* and the fast-recovery window arithmetic live in [`super::recovery`];
//! delivery-rate estimation, which rate-based controllers consume, in
//! [`super::delivery_rate`].
//!
//! | piece | file |
//! |---|---|
//! | the trait and what a controller is told (ACK context, rate sample, snapshot, entry) | `controller.rs` |
//! | the controllers by name | `registry.rs` |
//! | New Reno (RFC 5681, RFC 6582) | `new_reno.rs` |
//! | CUBIC with HyStart | `cubic.rs` |
//! | BBR v1 | `bbr.rs` |
//!
//! Adding a controller is one file here implementing [`Controller`], its `mod` line below and
//! one entry in [`CONTROLLERS`] (CONTRIBUTING.md, "Adding a TCP congestion controller").

pub mod bbr;
pub mod controller;
pub mod cubic;
pub mod new_reno;
pub mod registry;

pub use controller::{
    Ack, AckContext, CaState, Controller, ControllerEntry, ControllerParams, RateSample, Snapshot,
};
pub use new_reno::NewReno;
pub use registry::{
    controller, controller_names, controllers_with_state, default_controller, CONTROLLERS,
};
