//! `default`, `default-fb1`, `default-fb2`: RFC 7252 §4.2 retransmission, optionally with the
//! literature's "full backoff" retention of backed-off timers between exchanges (docs/design.md §3.1).

use crate::backoff;
use crate::config::Config;
use crate::controller::Controller;
use crate::exchange::{Exchange, Sample, StateVisitor};
use crate::rng::Rng;
use crate::time::{Duration, Instant};

/// Which retention rule applies between exchanges.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FullBackoff {
    /// Plain RFC 7252: no state between exchanges.
    Off,
    /// After `k ≥ 1` the next exchange starts with `T_0 = T_k` (not re-dithered); after
    /// `k = 0` it starts fresh.
    Fb1,
    /// As `Fb1`, but `k = 0` halves the retained value; once halving would bring it below
    /// `ACK_TIMEOUT·ACK_RANDOM_FACTOR` (3 s) it is discarded. docs/design.md §3.1 interprets the
    /// literature's prose this way.
    Fb2,
}

/// RFC 7252 §4.2: `T_0` dithered in `[ACK_TIMEOUT, ACK_TIMEOUT·ACK_RANDOM_FACTOR]` = [2, 3] s,
/// `T_{i+1} = 2·T_i`, capped at `Config::max_timer` (60 s).
#[derive(Clone, Debug)]
pub struct DefaultRto {
    pub(crate) config: Config,
    full_backoff: FullBackoff,
    /// The backed-off timer carried into the next exchange (full-backoff variants only).
    retained: Option<Duration>,
}

impl DefaultRto {
    pub fn new(config: Config, full_backoff: FullBackoff) -> Self {
        DefaultRto {
            config,
            full_backoff,
            retained: None,
        }
    }

    fn on_exchange_end(&mut self, ex: &Exchange) {
        self.retained = retain_full_backoff(self.full_backoff, self.retained, ex, &self.config);
    }
}

impl Controller for DefaultRto {
    fn config(&self) -> &Config {
        &self.config
    }

    /// The retained timer if any, else dithered in `[ACK_TIMEOUT, 1.5·ACK_TIMEOUT]`; cap 60 s.
    fn initial_timer(&mut self, _now: Instant, rng: &mut dyn Rng) -> Duration {
        let timer = match self.retained {
            Some(t) => t,
            None => rng.uniform(
                self.config.ack_timeout,
                self.config.randomized(self.config.ack_timeout),
            ),
        };
        timer.min(self.config.max_timer)
    }

    fn next_timer(&self, ex: &Exchange) -> Duration {
        backoff::binary(ex.timer, self.config.max_timer)
    }

    fn on_plain_response(&mut self, _now: Instant, ex: &Exchange) -> Sample {
        self.on_exchange_end(ex);
        Sample::NONE
    }

    /// A failed exchange ends after `k = MAX_RETRANSMIT` retransmissions: retained as `T_k`.
    fn on_exchange_failed(&mut self, _now: Instant, ex: &Exchange) {
        self.on_exchange_end(ex);
    }

    fn reset(&mut self) {
        self.retained = None;
    }

    /// Base of the next exchange before dithering: the retained timer, else `ACK_TIMEOUT`.
    fn base_rto(&self) -> Duration {
        self.retained.unwrap_or(self.config.ack_timeout)
    }

    fn visit_state(&self, visit: &mut StateVisitor<'_>) {
        visit("retained_timer", self.retained.into());
    }
}

/// The full-backoff retention rule shared by the `default` and `cocoa` families (docs/design.md §3.1):
/// `k ≥ 1` → retain `T_k`; `k = 0` → discard (fb1) or halve until below
/// `ACK_TIMEOUT·ACK_RANDOM_FACTOR` (fb2). `cocoa-fb2` replaces the retained value itself.
pub(crate) fn retain_full_backoff(
    mode: FullBackoff,
    retained: Option<Duration>,
    ex: &Exchange,
    config: &Config,
) -> Option<Duration> {
    match mode {
        FullBackoff::Off => None,
        _ if ex.retransmissions >= 1 => Some(ex.timer),
        FullBackoff::Fb1 => None,
        FullBackoff::Fb2 => retained
            .map(|t| t.mul_ratio(1, 2))
            .filter(|&half| half >= config.randomized(config.ack_timeout)),
    }
}
