//! Enum dispatch, smoltcp-style: the built-in algorithms are variants of [`AnyAlgorithm`] (a
//! `match`, no trait object, no allocation); algorithms registered from outside the crate ride
//! in [`AnyAlgorithm::Custom`] behind a `Box<dyn DynController>`.
//!
//! This module knows no names: selection by name is [`crate::name`] (over the registry's
//! [`BUILTIN`](crate::registry::BUILTIN)), and the registry builds `AnyAlgorithm`s, so the
//! dependencies run one way: `name` → `registry` → `algorithm`.

use core::fmt;

use alloc::boxed::Box;

use crate::basic_rto::BasicRto;
use crate::cocoa::Cocoa;
use crate::config::Config;
use crate::controller::{Controller, DynController};
use crate::default::DefaultRto;
use crate::exchange::{Answered, Exchange, Sample, StateVisitor, TimeoutDecision};
use crate::fasor::Fasor;
use crate::linux_rto::LinuxRto;
use crate::peakhopper_rto::PeakHopperRto;
use crate::rng::Rng;
use crate::time::{Duration, Instant};

/// One client's retransmission / congestion-control state towards one server: a built-in
/// algorithm (enum dispatch) or a registered one ([`AnyAlgorithm::Custom`]).
///
/// Every caller (the simulator, the replay, the Python and C bindings) goes through this
/// type, which also enforces the clock-granularity floor: no timer it hands out is below
/// [`CLOCK_GRANULARITY`](crate::config::CLOCK_GRANULARITY).
pub enum AnyAlgorithm {
    Default(DefaultRto),
    Cocoa(Cocoa),
    BasicRto(BasicRto),
    LinuxRto(LinuxRto),
    PeakHopper(PeakHopperRto),
    Fasor(Fasor),
    /// An algorithm registered from outside the crate (a test, a Python class).
    Custom(Box<dyn DynController>),
}

/// The name the simulator and older code use.
pub type Algorithm = AnyAlgorithm;

impl Clone for AnyAlgorithm {
    fn clone(&self) -> Self {
        match self {
            AnyAlgorithm::Default(a) => AnyAlgorithm::Default(a.clone()),
            AnyAlgorithm::Cocoa(a) => AnyAlgorithm::Cocoa(a.clone()),
            AnyAlgorithm::BasicRto(a) => AnyAlgorithm::BasicRto(a.clone()),
            AnyAlgorithm::LinuxRto(a) => AnyAlgorithm::LinuxRto(a.clone()),
            AnyAlgorithm::PeakHopper(a) => AnyAlgorithm::PeakHopper(a.clone()),
            AnyAlgorithm::Fasor(a) => AnyAlgorithm::Fasor(a.clone()),
            AnyAlgorithm::Custom(a) => AnyAlgorithm::Custom(a.clone_box()),
        }
    }
}

impl fmt::Debug for AnyAlgorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AnyAlgorithm::Default(a) => f.debug_tuple("Default").field(a).finish(),
            AnyAlgorithm::Cocoa(a) => f.debug_tuple("Cocoa").field(a).finish(),
            AnyAlgorithm::BasicRto(a) => f.debug_tuple("BasicRto").field(a).finish(),
            AnyAlgorithm::LinuxRto(a) => f.debug_tuple("LinuxRto").field(a).finish(),
            AnyAlgorithm::PeakHopper(a) => f.debug_tuple("PeakHopper").field(a).finish(),
            AnyAlgorithm::Fasor(a) => f.debug_tuple("Fasor").field(a).finish(),
            AnyAlgorithm::Custom(_) => f.write_str("Custom(..)"),
        }
    }
}

macro_rules! dispatch {
    ($self:expr, $alg:ident => $body:expr) => {
        match $self {
            AnyAlgorithm::Default($alg) => $body,
            AnyAlgorithm::Cocoa($alg) => $body,
            AnyAlgorithm::BasicRto($alg) => $body,
            AnyAlgorithm::LinuxRto($alg) => $body,
            AnyAlgorithm::PeakHopper($alg) => $body,
            AnyAlgorithm::Fasor($alg) => $body,
            AnyAlgorithm::Custom($alg) => $body,
        }
    };
}

impl AnyAlgorithm {
    /// Wraps an algorithm defined outside the crate (used by registry entries' `build`).
    pub fn custom<C: Controller + Clone + Send + 'static>(algorithm: C) -> Self {
        AnyAlgorithm::Custom(Box::new(algorithm))
    }

    /// See [`Controller::on_exchange_start`].
    pub fn on_exchange_start(
        &mut self,
        now: Instant,
        outstanding: u32,
        rng: &mut dyn Rng,
    ) -> Exchange {
        Controller::on_exchange_start(self, now, outstanding, rng)
    }

    /// See [`Controller::on_timeout`].
    pub fn on_timeout(&mut self, now: Instant, ex: &mut Exchange) -> TimeoutDecision {
        Controller::on_timeout(self, now, ex)
    }

    /// See [`Controller::on_response`].
    pub fn on_response(
        &mut self,
        now: Instant,
        ex: &Exchange,
        answered: Option<Answered>,
    ) -> Sample {
        Controller::on_response(self, now, ex, answered)
    }

    /// See [`Controller::reset`].
    pub fn reset(&mut self) {
        Controller::reset(self)
    }

    /// See [`Controller::base_rto`].
    pub fn base_rto(&self) -> Duration {
        Controller::base_rto(self)
    }

    /// See [`Controller::visit_state`].
    pub fn visit_state(&self, visit: &mut StateVisitor<'_>) {
        Controller::visit_state(self, visit)
    }

    /// See [`Controller::config`].
    pub fn config(&self) -> &Config {
        Controller::config(self)
    }
}

impl Controller for AnyAlgorithm {
    #[inline]
    fn config(&self) -> &Config {
        dispatch!(self, a => a.config())
    }

    /// The algorithm's `T_0`, raised to [`Config::clock_granularity`] if below it.
    #[inline]
    fn on_exchange_start(&mut self, now: Instant, outstanding: u32, rng: &mut dyn Rng) -> Exchange {
        dispatch!(self, a => {
            let mut ex = a.on_exchange_start(now, outstanding, rng);
            let floor = a.config().clock_granularity;
            ex.initial_timer = ex.initial_timer.max(floor);
            ex.timer = ex.timer.max(floor);
            ex
        })
    }

    fn initial_timer(&mut self, now: Instant, rng: &mut dyn Rng) -> Duration {
        dispatch!(self, a => a.initial_timer(now, rng))
    }

    fn next_timer(&self, ex: &Exchange) -> Duration {
        dispatch!(self, a => a.next_timer(ex))
    }

    /// The algorithm's decision, its `T_{k+1}` raised to [`Config::clock_granularity`] if
    /// below it.
    #[inline]
    fn on_timeout(&mut self, now: Instant, ex: &mut Exchange) -> TimeoutDecision {
        dispatch!(self, a => match a.on_timeout(now, ex) {
            TimeoutDecision::Retransmit { timer } => {
                let timer = timer.max(a.config().clock_granularity);
                ex.timer = timer;
                TimeoutDecision::Retransmit { timer }
            }
            TimeoutDecision::Fail => TimeoutDecision::Fail,
        })
    }

    fn on_exchange_failed(&mut self, now: Instant, ex: &Exchange) {
        dispatch!(self, a => a.on_exchange_failed(now, ex))
    }

    #[inline]
    fn on_response(&mut self, now: Instant, ex: &Exchange, answered: Option<Answered>) -> Sample {
        dispatch!(self, a => a.on_response(now, ex, answered))
    }

    fn on_plain_response(&mut self, now: Instant, ex: &Exchange) -> Sample {
        dispatch!(self, a => a.on_plain_response(now, ex))
    }

    #[inline]
    fn reset(&mut self) {
        dispatch!(self, a => a.reset())
    }

    #[inline]
    fn base_rto(&self) -> Duration {
        dispatch!(self, a => a.base_rto())
    }

    fn visit_state(&self, visit: &mut StateVisitor<'_>) {
        dispatch!(self, a => a.visit_state(visit))
    }
}
