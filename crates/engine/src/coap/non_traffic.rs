//! A client's NON traffic (docs/algorithms.md "NON traffic"), the state `coap::client::Client`
//! drives: kept apart so that the client module stays one concern.

use coaplab_cc::{Duration, Instant};

/// A client's NON traffic (docs/algorithms.md "NON traffic"): `total` messages produced one
/// every `period`, sent as NONs — with CoCoA's NON rule (draft-ietf-core-cocoa-03 §5), at most
/// one NON per RTO and messages 0 and 8 of every 16 as CON exchanges.
#[derive(Clone, Debug)]
pub struct NonTraffic {
    pub(crate) period: Duration,
    pub(crate) total: u32,
    pub(crate) rule: bool,
    /// Messages produced so far, and when the next one is.
    pub(crate) produced: u32,
    pub(crate) next_at: Option<Instant>,
    /// Produced but not yet sent (waiting for the rule or for a CON slot).
    pub(crate) backlog: u32,
    /// Messages sent (NON or CON), numbering the 2-of-16 pattern.
    pub(crate) sent: u32,
    pub(crate) last_non: Option<Instant>,
    /// The pending wake-up and its generation (older wake-ups are stale).
    pub(crate) wake_at: Option<Instant>,
    pub(crate) wake_generation: u32,
}

impl NonTraffic {
    pub fn new(rate_per_s: f64, total: u32, rule: bool) -> Self {
        NonTraffic {
            period: Duration::from_secs_f64(1.0 / rate_per_s),
            total,
            rule,
            produced: 0,
            next_at: None,
            backlog: 0,
            sent: 0,
            last_non: None,
            wake_at: None,
            wake_generation: 0,
        }
    }

    /// Messages 0 and 8 of every 16 go as CON under the rule.
    pub(crate) fn next_is_con(&self) -> bool {
        self.rule && self.sent.is_multiple_of(8)
    }
}
