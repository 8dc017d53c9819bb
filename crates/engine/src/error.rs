//! The engine's errors: an invalid configuration (found before anything runs), a key that
//! does not apply to the network chosen, a run the guard stopped, and a failed write of an
//! output. Each displays as one line naming what is wrong (the Python front shows it as is).
//! A leaf: it imports nothing from the engine, so every layer may return it.

use std::fmt;

use coaplab_cc::Instant;

/// An error of the engine.
#[derive(Debug)]
pub enum Error {
    /// An invalid value or combination of values of `key` (a dotted key, or keys joined by
    /// ` / `), found before anything runs; `message` says what is wrong and what is allowed.
    /// Displays as `key: message` (`network.mac_min_be: 6 is above network.mac_max_be (5);
    /// allowed: <= mac_max_be`).
    Key { key: String, message: String },
    /// `network.<key>` given with a network kind it does not apply to; `allowed` are the keys
    /// of that kind (besides `kind`).
    NotApplicable {
        key: String,
        kind: &'static str,
        allowed: Vec<String>,
    },
    /// A run the guard stopped before it finished (`sim::guard`).
    Guard(GuardStop),
    /// A foreign algorithm (`c:LIB:NAME`, `crate::foreign::c`) failed during the run: its
    /// first error, already one line naming the algorithm and the call.
    Algorithm(String),
    /// Writing an output (`what`: "pcap") failed.
    Io {
        what: &'static str,
        path: Option<String>,
        source: std::io::Error,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Key { key, message } => write!(f, "{key}: {message}"),
            Error::NotApplicable { key, kind, allowed } => {
                let keys = if allowed.is_empty() {
                    "none".to_string()
                } else {
                    allowed.join(", ")
                };
                write!(
                    f,
                    "network.{key}: does not apply to network.kind = \"{kind}\"; keys of {kind}: {keys}"
                )
            }
            Error::Guard(stop) => stop.fmt(f),
            Error::Algorithm(message) => f.write_str(message),
            Error::Io { what, path, source } => match path {
                Some(p) => write!(f, "writing {what}: {p}: {source}"),
                None => write!(f, "writing {what}: {source}"),
            },
        }
    }
}

impl Error {
    /// An [`Error::Key`].
    pub fn key(key: impl Into<String>, message: impl Into<String>) -> Self {
        Error::Key {
            key: key.into(),
            message: message.into(),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } => Some(source),
            Error::Guard(stop) => Some(stop),
            _ => None,
        }
    }
}

impl From<GuardStop> for Error {
    fn from(stop: GuardStop) -> Self {
        Error::Guard(stop)
    }
}

/// Why a run stopped before finishing.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum GuardStop {
    /// `sim::guard::cancel_all` or the run's own flag.
    Cancelled,
    /// More events than `GuardLimits::max_events`.
    Events { limit: u64, now: Instant },
    /// An event later than `GuardLimits::max_sim_time`.
    SimTime { limit: Instant, events: u64 },
}

impl fmt::Display for GuardStop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            GuardStop::Cancelled => write!(f, "did not finish: cancelled"),
            GuardStop::Events { limit, now } => write!(
                f,
                "did not finish: more than {limit} events (the limit for this scenario) by simulated time {:.3} s; the run does not converge",
                now.secs_f64()
            ),
            GuardStop::SimTime { limit, events } => write!(
                f,
                "did not finish: simulated time passed {:.0} s (the limit for this scenario) after {events} events; the run does not converge",
                limit.secs_f64()
            ),
        }
    }
}

impl std::error::Error for GuardStop {}
