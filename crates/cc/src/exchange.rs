//! The vocabulary shared by every algorithm (docs/design.md §3.1): an exchange, its transmissions
//! 0, 1, 2, … with timers `T_i`, and the RTT sample a response yields.

use crate::time::{Duration, Instant};

/// One CON exchange as the algorithm sees it. Created by `on_exchange_start`; the caller
/// keeps it and hands it back on every later event of that exchange.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Exchange {
    /// When transmission 0 (the original) was sent.
    pub started: Instant,
    /// When the latest transmission was sent.
    pub last_sent: Instant,
    /// Retransmissions sent so far (`k` once the response arrives).
    pub retransmissions: u32,
    /// The timer armed for the original transmission (`T_0`).
    pub initial_timer: Duration,
    /// The timer armed for the latest transmission (`T_k`).
    pub timer: Duration,
    /// FASOR fixes its whole timer series when the exchange starts (draft-ietf-core-fasor-02 §3.3).
    pub(crate) fasor: FasorPlan,
}

/// The parts of a FASOR timer series fixed at exchange start; unused by other algorithms.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct FasorPlan {
    pub(crate) state: u8,
    pub(crate) fast: Duration,
    pub(crate) slow: Duration,
}

impl Exchange {
    /// An exchange whose original transmission is sent at `now` with `T_0 = timer`.
    pub fn new(now: Instant, timer: Duration) -> Self {
        Exchange {
            started: now,
            last_sent: now,
            retransmissions: 0,
            initial_timer: timer,
            timer,
            fasor: FasorPlan::default(),
        }
    }
}

/// Which transmission a response answers, when the endpoint knows it (FASOR's Rexmit-Cnt
/// echo, draft-ietf-core-fasor-02 §4.4). Algorithms without that option ignore it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Answered {
    /// Ordinal of the answered transmission (0 = original).
    pub ordinal: u32,
    /// When that transmission was sent.
    pub sent_at: Instant,
}

/// How an algorithm classified the RTT measurement a response offered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SampleKind {
    /// Unambiguous (`k = 0`, or matched to its transmission) and used.
    Strong,
    /// Measured from the original transmission after retransmissions and used (CoCoA's weak
    /// estimator, B-RTO).
    Weak,
    /// Offered but discarded (Karn's rule, CoCoA after `k ≥ 3`, `cocoa-s`).
    Ambiguous,
    /// The algorithm keeps no RTT state, or there was no response.
    None,
}

impl SampleKind {
    pub const fn as_str(self) -> &'static str {
        match self {
            SampleKind::Strong => "strong",
            SampleKind::Weak => "weak",
            SampleKind::Ambiguous => "ambiguous",
            SampleKind::None => "none",
        }
    }
}

/// The sample a response yielded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sample {
    pub kind: SampleKind,
    /// The measured RTT (absent for [`SampleKind::None`]).
    pub rtt: Option<Duration>,
}

impl Sample {
    pub const NONE: Sample = Sample {
        kind: SampleKind::None,
        rtt: None,
    };
    pub const fn new(kind: SampleKind, rtt: Duration) -> Self {
        Sample {
            kind,
            rtt: Some(rtt),
        }
    }
}

/// What to do when the timer of the latest transmission expires.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeoutDecision {
    /// Send the next transmission now and arm this timer.
    Retransmit { timer: Duration },
    /// `MAX_RETRANSMIT` retransmissions were already sent: the exchange has failed.
    Fail,
}

/// A value in an algorithm's state report (replay output, traces).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    Duration(Duration),
    Float(f64),
    Str(&'static str),
    Absent,
}

impl From<Option<Duration>> for Value {
    fn from(d: Option<Duration>) -> Self {
        d.map_or(Value::Absent, Value::Duration)
    }
}
impl From<Duration> for Value {
    fn from(d: Duration) -> Self {
        Value::Duration(d)
    }
}

/// Receives an algorithm's state as `(name, value)` pairs, without allocation.
pub type StateVisitor<'a> = dyn FnMut(&'static str, Value) + 'a;
