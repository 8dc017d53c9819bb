//! # The TCP model (docs/design.md §4.2)
//!
//! A sans-IO TCP endpoint matching the tuned Linux hosts of the literature: three-way
//! handshake with the MSS option, a congestion controller from a registry (New Reno, RFC
//! 5681 and RFC 6582, by default; BBR v1; CUBIC) with Limited Transmit (RFC 3042), initial
//! window 4, delayed ACKs, Nagle, the Linux RTO estimator; no SACK,
//! timestamps, F-RTO or TLP/RACK; a receive window that never limits.
//!
//! | piece | file |
//! |---|---|
//! | sequence numbers | `seq.rs` |
//! | segments | `segment.rs` |
//! | parameters and defaults | `config.rs` |
//! | the congestion-controller trait, the registry, New Reno, CUBIC, BBR v1 | `congestion/` |
//! | delivery-rate estimation (for rate-based controllers) | `delivery_rate.rs` |
//! | loss recovery (dup ACKs, fast retransmit/recovery, Limited Transmit) | `recovery.rs` |
//! | RTT estimation, RTO, backoff | `rtt.rs` |
//! | reassembly and delayed ACKs | `receiver.rs` |
//! | host timer granularity (Linux timer wheel) | `timer.rs` |
//! | the state machine tying them together (`mod.rs`; sending `send.rs`, pacing `pacing.rs`) | `connection/` |

pub mod config;
pub mod congestion;
pub mod connection;
pub mod delivery_rate;
pub mod receiver;
pub mod recovery;
pub mod rtt;
pub mod segment;
pub mod seq;
pub mod timer;

pub use config::{Nagle, TcpConfig};
pub use congestion::{Controller, Snapshot, CONTROLLERS};
pub use connection::{ConnEvent, ConnStats, Connection, Failure, State};
pub use receiver::DataArrival;
pub use segment::{Segment, Transmit};
pub use seq::Seq;
