//! # coaplab-cc — CoAP retransmission and congestion-control algorithms
//!
//! Every algorithm of `docs/algorithms.md` implemented once, as a sans-IO state machine: it is
//! told what happened (with `now`) and answers with the timer to arm next or the sample it
//! took. It never reads a clock, never owns a socket, and draws dithering from an
//! [`Rng`] the caller injects. The crate is `no_std` + `alloc` (the replay driver,
//! the registry and registered algorithms allocate), so the same code runs in the simulator,
//! in real endpoints and on devices.
//!
//! - [`Controller`]: the algorithm contract (a trait; defaults = RFC 7252 §4.2).
//! - [`AnyAlgorithm`] (alias [`Algorithm`]): what callers hold — enum dispatch over the
//!   built-ins plus boxed registered algorithms, with the clock-granularity floor.
//! - [`Registry`]: the one list of algorithms (names, summaries, sources, parameters,
//!   constructors), extensible at run time.
#![cfg_attr(not(feature = "std"), no_std)]
#![forbid(unsafe_code)]

extern crate alloc;

pub mod rng;
pub mod time;

pub use rng::Rng;
pub use time::{Duration, Instant};

pub mod algorithm;
pub mod backoff;
pub mod basic_rto;
pub mod californium;
pub mod cocoa;
pub mod config;
pub mod controller;
pub mod default;
pub mod estimator;
pub mod exchange;
pub mod fasor;
pub mod karn_rto;
pub mod linux_rto;
pub mod name;
pub mod peakhopper_rto;
pub mod registry;
pub mod replay;

pub use algorithm::{Algorithm, AnyAlgorithm};
pub use config::Config;
pub use controller::Controller;
pub use exchange::{Answered, Exchange, Sample, SampleKind, TimeoutDecision, Value};
pub use name::{AlgorithmName, UnknownAlgorithm};
pub use registry::{Entry, ParamSpec, Params, Registry};
