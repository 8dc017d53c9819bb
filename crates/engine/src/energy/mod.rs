//! Energy: the time a device's radio spends in each state ([`state`]), which the networks that
//! know it record (the cellular cells per device, the meshes from their radios' on-time), and
//! what it costs under a power model (docs/energy.md). The accounting is shared so
//! that every network reports the same summary fields.

pub mod power;
pub mod state;

pub use power::{energy_result, Device, EnergyConfig, EnergyResult, PerState, PowerModel};
pub use state::{RadioState, StateTimes};
