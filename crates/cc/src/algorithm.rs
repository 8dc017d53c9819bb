//! Selection by name and enum dispatch (smoltcp-style: no trait objects, no allocation).

use core::fmt;
use core::str::FromStr;

use crate::basic_rto::BasicRto;
use crate::cocoa::{Cocoa, CocoaVariant};
use crate::config::Config;
use crate::default::{DefaultRto, FullBackoff};
use crate::exchange::{Answered, Exchange, Sample, StateVisitor, TimeoutDecision};
use crate::fasor::Fasor;
use crate::linux_rto::LinuxRto;
use crate::peakhopper_rto::PeakHopperRto;
use crate::rng::Rng;
use crate::time::{Duration, Instant};

/// The algorithms of SPEC §3.1, by their user-facing names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AlgorithmName {
    Default,
    DefaultFb1,
    DefaultFb2,
    Cocoa,
    CocoaS,
    CocoaFb1,
    CocoaFb2,
    BasicRto,
    LinuxRto,
    PeakhopperRto,
    Fasor,
    FasorRc,
}

impl AlgorithmName {
    /// Every algorithm, in the order SPEC §3.1 lists them.
    pub const ALL: [AlgorithmName; 12] = [
        AlgorithmName::Default,
        AlgorithmName::DefaultFb1,
        AlgorithmName::DefaultFb2,
        AlgorithmName::Cocoa,
        AlgorithmName::CocoaS,
        AlgorithmName::CocoaFb1,
        AlgorithmName::CocoaFb2,
        AlgorithmName::BasicRto,
        AlgorithmName::LinuxRto,
        AlgorithmName::PeakhopperRto,
        AlgorithmName::Fasor,
        AlgorithmName::FasorRc,
    ];

    pub const fn as_str(self) -> &'static str {
        match self {
            AlgorithmName::Default => "default",
            AlgorithmName::DefaultFb1 => "default-fb1",
            AlgorithmName::DefaultFb2 => "default-fb2",
            AlgorithmName::Cocoa => "cocoa",
            AlgorithmName::CocoaS => "cocoa-s",
            AlgorithmName::CocoaFb1 => "cocoa-fb1",
            AlgorithmName::CocoaFb2 => "cocoa-fb2",
            AlgorithmName::BasicRto => "basic-rto",
            AlgorithmName::LinuxRto => "linux-rto",
            AlgorithmName::PeakhopperRto => "peakhopper-rto",
            AlgorithmName::Fasor => "fasor",
            AlgorithmName::FasorRc => "fasor-rc",
        }
    }

    /// Whether responses must echo the answered transmission (FASOR's Rexmit-Cnt option).
    pub const fn needs_rexmit_count(self) -> bool {
        matches!(self, AlgorithmName::FasorRc)
    }
}

impl fmt::Display for AlgorithmName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An algorithm name that is not one of [`AlgorithmName::ALL`]; its `Display` lists the valid
/// names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UnknownAlgorithm;

impl fmt::Display for UnknownAlgorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("unknown algorithm; valid names: ")?;
        for (i, name) in AlgorithmName::ALL.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            f.write_str(name.as_str())?;
        }
        Ok(())
    }
}

#[cfg(feature = "std")]
impl std::error::Error for UnknownAlgorithm {}

impl FromStr for AlgorithmName {
    type Err = UnknownAlgorithm;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        AlgorithmName::ALL
            .into_iter()
            .find(|a| a.as_str() == s)
            .ok_or(UnknownAlgorithm)
    }
}

/// One client's retransmission / congestion-control state towards one server.
#[derive(Clone, Debug)]
pub enum Algorithm {
    Default(DefaultRto),
    Cocoa(Cocoa),
    BasicRto(BasicRto),
    LinuxRto(LinuxRto),
    PeakHopper(PeakHopperRto),
    Fasor(Fasor),
}

macro_rules! dispatch {
    ($self:expr, $alg:ident => $body:expr) => {
        match $self {
            Algorithm::Default($alg) => $body,
            Algorithm::Cocoa($alg) => $body,
            Algorithm::BasicRto($alg) => $body,
            Algorithm::LinuxRto($alg) => $body,
            Algorithm::PeakHopper($alg) => $body,
            Algorithm::Fasor($alg) => $body,
        }
    };
}

impl Algorithm {
    pub fn new(name: AlgorithmName, config: Config) -> Self {
        use AlgorithmName as N;
        match name {
            N::Default => Algorithm::Default(DefaultRto::new(config, FullBackoff::Off)),
            N::DefaultFb1 => Algorithm::Default(DefaultRto::new(config, FullBackoff::Fb1)),
            N::DefaultFb2 => Algorithm::Default(DefaultRto::new(config, FullBackoff::Fb2)),
            N::Cocoa => Algorithm::Cocoa(Cocoa::new(config, CocoaVariant::Cocoa)),
            N::CocoaS => Algorithm::Cocoa(Cocoa::new(config, CocoaVariant::Strong)),
            N::CocoaFb1 => Algorithm::Cocoa(Cocoa::new(config, CocoaVariant::Fb1)),
            N::CocoaFb2 => Algorithm::Cocoa(Cocoa::new(config, CocoaVariant::Fb2)),
            N::BasicRto => Algorithm::BasicRto(BasicRto::new(config)),
            N::LinuxRto => Algorithm::LinuxRto(LinuxRto::new(config)),
            N::PeakhopperRto => Algorithm::PeakHopper(PeakHopperRto::new(config)),
            N::Fasor => Algorithm::Fasor(Fasor::new(config, false)),
            N::FasorRc => Algorithm::Fasor(Fasor::new(config, true)),
        }
    }

    /// Parses `name` and builds the algorithm; an unknown name lists the valid ones.
    pub fn from_name(name: &str, config: Config) -> Result<Self, UnknownAlgorithm> {
        Ok(Algorithm::new(name.parse()?, config))
    }

    /// A new exchange's original transmission is sent at `now`, while `outstanding` other
    /// exchanges to the same server are in flight. Returns the exchange with `T_0` armed.
    pub fn on_exchange_start(
        &mut self,
        now: Instant,
        outstanding: u32,
        rng: &mut dyn Rng,
    ) -> Exchange {
        match self {
            Algorithm::Cocoa(a) => a.on_exchange_start(now, outstanding, rng),
            Algorithm::Default(a) => a.on_exchange_start(now, rng),
            Algorithm::BasicRto(a) => a.on_exchange_start(now, rng),
            Algorithm::LinuxRto(a) => a.on_exchange_start(now, rng),
            Algorithm::PeakHopper(a) => a.on_exchange_start(now, rng),
            Algorithm::Fasor(a) => a.on_exchange_start(now, rng),
        }
    }

    /// The timer of the exchange's latest transmission expired at `now`. Either the next
    /// retransmission is sent now (the exchange is updated: `k += 1`, `T_{k}` armed), or
    /// `MAX_RETRANSMIT` is exhausted and the exchange has failed (RFC 7252 §4.2), which the
    /// algorithm has already accounted for.
    pub fn on_timeout(&mut self, now: Instant, ex: &mut Exchange) -> TimeoutDecision {
        if ex.retransmissions >= self.config().max_retransmit {
            dispatch!(self, a => a.on_exchange_failed(now, ex));
            return TimeoutDecision::Fail;
        }
        let timer = dispatch!(self, a => a.next_timer(ex));
        ex.retransmissions += 1;
        ex.timer = timer;
        ex.last_sent = now;
        TimeoutDecision::Retransmit { timer }
    }

    /// The response to `ex` arrived at `now` (a duplicate response for a completed exchange
    /// must not be reported). `answered` identifies the answered transmission when the
    /// Rexmit-Cnt echo is in use; other algorithms ignore it.
    pub fn on_response(
        &mut self,
        now: Instant,
        ex: &Exchange,
        answered: Option<Answered>,
    ) -> Sample {
        match self {
            Algorithm::Fasor(a) => a.on_response(now, ex, answered),
            Algorithm::Default(a) => a.on_response(now, ex),
            Algorithm::Cocoa(a) => a.on_response(now, ex),
            Algorithm::BasicRto(a) => a.on_response(now, ex),
            Algorithm::LinuxRto(a) => a.on_response(now, ex),
            Algorithm::PeakHopper(a) => a.on_response(now, ex),
        }
    }

    /// Forgets everything learned (a "random" client between batches, SPEC §5).
    pub fn reset(&mut self) {
        dispatch!(self, a => a.reset())
    }

    /// The base value the next exchange would start from, before aging and dithering
    /// (SPEC §3.2 `rto_after`).
    pub fn base_rto(&self) -> Duration {
        dispatch!(self, a => a.base_rto())
    }

    /// Reports the algorithm-specific state as `(name, value)` pairs.
    pub fn visit_state(&self, visit: &mut StateVisitor<'_>) {
        dispatch!(self, a => a.visit_state(visit))
    }

    pub fn config(&self) -> &Config {
        dispatch!(self, a => &a.config)
    }
}
