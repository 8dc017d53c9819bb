//! Replay (docs/design.md §3.2): drive an algorithm one scripted exchange at a time, with no network.
//!
//! Each scripted exchange gives its start time, how many transmissions are lost (`lost = n`:
//! transmissions `0..n` get no response) and the RTT of the answered transmission `n`. The
//! replay is a faithful small simulation: if a timer expires before the scripted response
//! arrives, the retransmission happens and counts, exactly as on a network.

use alloc::vec::Vec;
use core::fmt;

use crate::algorithm::Algorithm;
use crate::exchange::{Answered, Sample, TimeoutDecision, Value};
use crate::rng::Rng;
use crate::time::{Duration, Instant};

/// One scripted exchange.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScriptedExchange {
    pub start: Instant,
    /// Transmissions that get no response.
    pub lost: u32,
    /// RTT of transmission `lost`, from its send time to its response's arrival.
    pub rtt: Duration,
}

/// What happened to one scripted exchange.
#[derive(Clone, Debug, PartialEq)]
pub struct ReplayRecord {
    pub start: Instant,
    /// Response arrival, or the expiry of the last timer if the exchange failed.
    pub end: Instant,
    /// Timer armed for each transmission sent (`timers.len() = retransmissions + 1`).
    pub timers: Vec<Duration>,
    pub retransmissions: u32,
    pub sample: Sample,
    pub failed: bool,
    /// Base value for the next exchange, before aging and dithering.
    pub rto_after: Duration,
    /// Algorithm-specific state after the exchange.
    pub state: Vec<(&'static str, Value)>,
}

/// A script that cannot be replayed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReplayError {
    /// Exchange `index` starts before the previous exchange ended at `previous_end`.
    Overlap {
        index: usize,
        start: Instant,
        previous_end: Instant,
    },
}

impl fmt::Display for ReplayError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReplayError::Overlap { index, start, previous_end } => write!(
                f,
                "exchange {index}: field 'start' = {} s is earlier than the end of exchange {} at {} s; exchanges run one after another",
                start.secs_f64(),
                index - 1,
                previous_end.secs_f64()
            ),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for ReplayError {}

/// Replays `script` through `algorithm`, drawing dithering from `rng` (use
/// [`LowerBound`](crate::rng::LowerBound) for "dithering off").
pub fn replay(
    algorithm: &mut Algorithm,
    script: &[ScriptedExchange],
    rng: &mut dyn Rng,
) -> Result<Vec<ReplayRecord>, ReplayError> {
    let mut records = Vec::with_capacity(script.len());
    let mut previous_end: Option<Instant> = None;
    for (index, step) in script.iter().enumerate() {
        if let Some(previous_end) = previous_end.filter(|&end| step.start < end) {
            return Err(ReplayError::Overlap {
                index,
                start: step.start,
                previous_end,
            });
        }
        let record = replay_one(algorithm, step, rng);
        previous_end = Some(record.end);
        records.push(record);
    }
    Ok(records)
}

fn replay_one(
    algorithm: &mut Algorithm,
    step: &ScriptedExchange,
    rng: &mut dyn Rng,
) -> ReplayRecord {
    let mut ex = algorithm.on_exchange_start(step.start, 0, rng);
    let mut timers = alloc::vec![ex.timer];
    // Send time of the answered transmission, once it has been sent.
    let mut answered_sent: Option<Instant> = (step.lost == 0).then_some(step.start);
    let (end, sample, failed) = loop {
        let expiry = ex.last_sent + ex.timer;
        // A response arriving exactly at the expiry instant wins (it is processed first).
        if let Some(sent_at) = answered_sent {
            let arrival = sent_at + step.rtt;
            if arrival <= expiry {
                let answered = Answered {
                    ordinal: step.lost,
                    sent_at,
                };
                break (
                    arrival,
                    algorithm.on_response(arrival, &ex, Some(answered)),
                    false,
                );
            }
        }
        match algorithm.on_timeout(expiry, &mut ex) {
            TimeoutDecision::Retransmit { timer } => {
                timers.push(timer);
                if ex.retransmissions == step.lost {
                    answered_sent = Some(expiry);
                }
            }
            TimeoutDecision::Fail => break (expiry, Sample::NONE, true),
        }
    };
    let mut state = Vec::new();
    algorithm.visit_state(&mut |name, value| state.push((name, value)));
    ReplayRecord {
        start: step.start,
        end,
        timers,
        retransmissions: ex.retransmissions,
        sample,
        failed,
        rto_after: algorithm.base_rto(),
        state,
    }
}
