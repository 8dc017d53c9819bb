//! The algorithm contract: what a retransmission / congestion-control algorithm is told and
//! what it answers, as a trait.
//!
//! Every method is sans-IO: the caller passes `now` (and an [`Rng`] where dithering is
//! drawn) and the algorithm returns its decision. Times are integer nanoseconds
//! ([`Instant`], [`Duration`]). Vocabulary (RFC 7252 §4.2): an *exchange* is one CON request
//! and its response; its transmissions are numbered `0` (the original), `1`, `2`, … and
//! `T_i` is the timer armed when transmission `i` is sent; `k` is the number of
//! retransmissions the exchange needed.
//!
//! Only [`Controller::config`] is required. Every other method has a default, and the
//! defaults *are* RFC 7252 §4.2 without state between exchanges: `T_0` dithered in
//! `[ACK_TIMEOUT, ACK_TIMEOUT·ACK_RANDOM_FACTOR]`, doubling on every timeout, capped at
//! [`Config::max_timer`], no RTT sample. An algorithm overrides what it changes. Inputs most
//! algorithms ignore have a narrower hook the default forwards to:
//!
//! | full method (what callers use) | narrower hook (what most algorithms override) | input dropped |
//! |---|---|---|
//! | [`on_exchange_start`](Controller::on_exchange_start) | [`initial_timer`](Controller::initial_timer) | `outstanding` |
//! | [`on_response`](Controller::on_response) | [`on_plain_response`](Controller::on_plain_response) | `answered` |
//!
//! Callers normally hold an [`AnyAlgorithm`](crate::AnyAlgorithm), which implements this
//! trait by enum dispatch and additionally enforces the clock-granularity floor
//! ([`crate::config::CLOCK_GRANULARITY`]).

use crate::backoff;
use crate::config::Config;
use crate::exchange::{Answered, Exchange, Sample, StateVisitor, TimeoutDecision};
use crate::rng::Rng;
use crate::time::{Duration, Instant};

/// A retransmission / congestion-control algorithm: one instance per (client, server) pair.
///
/// Object safe: registered algorithms are stored as `Box<dyn Controller + Send>` inside
/// [`AnyAlgorithm::Custom`](crate::AnyAlgorithm::Custom).
pub trait Controller {
    /// The RFC 7252 §4.8 parameters this instance was built with.
    fn config(&self) -> &Config;

    /// A new exchange's original transmission (transmission 0) is sent at `now`, while
    /// `outstanding` other exchanges to the same server are in flight (at most `NSTART − 1`,
    /// RFC 7252 §4.7). Returns the exchange with `T_0` armed; the caller keeps it and hands it
    /// back on every later event of that exchange.
    ///
    /// Default: ignores `outstanding` and arms [`initial_timer`](Controller::initial_timer).
    /// Override it when the count matters (CoCoA's blind RTO, draft-ietf-core-cocoa-03 §4.2.1)
    /// or when the exchange must carry per-exchange state (FASOR's frozen timer series).
    fn on_exchange_start(&mut self, now: Instant, outstanding: u32, rng: &mut dyn Rng) -> Exchange {
        let _ = outstanding;
        let timer = self.initial_timer(now, rng);
        Exchange::new(now, timer)
    }

    /// `T_0` for an exchange starting at `now`, in nanoseconds of [`Duration`].
    ///
    /// Default (RFC 7252 §4.2): uniform in `[ACK_TIMEOUT, ACK_TIMEOUT·ACK_RANDOM_FACTOR]`
    /// (2–3 s with the defaults), capped at [`Config::max_timer`].
    fn initial_timer(&mut self, now: Instant, rng: &mut dyn Rng) -> Duration {
        let _ = now;
        let c = self.config();
        let (lo, hi) = (c.ack_timeout, c.randomized(c.ack_timeout));
        let cap = c.max_timer;
        rng.uniform(lo, hi).min(cap)
    }

    /// `T_{k+1}`: the timer of the retransmission about to be sent, given the exchange whose
    /// latest timer `ex.timer = T_k` just expired.
    ///
    /// Default (RFC 7252 §4.2): binary exponential backoff `min(2·T_k, max_timer)`.
    fn next_timer(&self, ex: &Exchange) -> Duration {
        backoff::binary(ex.timer, self.config().max_timer)
    }

    /// The timer of the exchange's latest transmission expired at `now`. Either the next
    /// retransmission is sent now (`ex` is updated: `retransmissions += 1`, `T_{k+1}` armed,
    /// `last_sent = now`), or `MAX_RETRANSMIT` retransmissions were already sent and the
    /// exchange has failed (RFC 7252 §4.2), which [`on_exchange_failed`] has accounted for.
    ///
    /// Provided; algorithms override [`next_timer`](Controller::next_timer) and
    /// [`on_exchange_failed`] instead.
    ///
    /// [`on_exchange_failed`]: Controller::on_exchange_failed
    fn on_timeout(&mut self, now: Instant, ex: &mut Exchange) -> TimeoutDecision {
        if ex.retransmissions >= self.config().max_retransmit {
            self.on_exchange_failed(now, ex);
            return TimeoutDecision::Fail;
        }
        let timer = self.next_timer(ex);
        ex.retransmissions += 1;
        ex.timer = timer;
        ex.last_sent = now;
        TimeoutDecision::Retransmit { timer }
    }

    /// The exchange failed at `now` after `ex.retransmissions = MAX_RETRANSMIT`
    /// retransmissions (its last timer expired unanswered). Default: nothing to learn.
    fn on_exchange_failed(&mut self, now: Instant, ex: &Exchange) {
        let _ = (now, ex);
    }

    /// The response to `ex` arrived at `now` (a duplicate response for a completed exchange is
    /// not reported). `answered` identifies the answered transmission when the endpoint knows
    /// it (FASOR's Rexmit-Cnt echo, draft-ietf-core-fasor-02 §4.4); `None` otherwise.
    /// Returns the RTT sample the algorithm took from it.
    ///
    /// Default: ignores `answered` and calls [`on_plain_response`](Controller::on_plain_response).
    fn on_response(&mut self, now: Instant, ex: &Exchange, answered: Option<Answered>) -> Sample {
        let _ = answered;
        self.on_plain_response(now, ex)
    }

    /// The response to `ex` arrived at `now`; which transmission it answers is unknown (for
    /// `k ≥ 1` the RTT `now − ex.started` is ambiguous, RFC 6298 §3 / Karn's algorithm).
    /// Default: no RTT state, [`Sample::NONE`].
    fn on_plain_response(&mut self, now: Instant, ex: &Exchange) -> Sample {
        let _ = (now, ex);
        Sample::NONE
    }

    /// Forgets everything learned, keeping the configuration and parameters (a "random"
    /// client between batches, `docs/model.md`). Default: nothing to forget.
    fn reset(&mut self) {}

    /// The base value the next exchange would start from, before aging and dithering (the
    /// replay's `rto_after`, `docs/algorithms.md`). Default: `ACK_TIMEOUT`.
    fn base_rto(&self) -> Duration {
        self.config().ack_timeout
    }

    /// Reports the algorithm-specific state as `(name, value)` pairs, in a fixed order, without
    /// allocation (replay output, traces). Default: no state.
    fn visit_state(&self, visit: &mut StateVisitor<'_>) {
        let _ = visit;
    }
}

/// An object-safe [`Controller`] that can also be cloned behind a `Box` — what
/// [`AnyAlgorithm::Custom`](crate::AnyAlgorithm::Custom) stores. Implemented for every
/// `Controller + Clone + Send + 'static`; nobody implements it by hand.
pub trait DynController: Controller + Send {
    /// A boxed copy of `self`.
    fn clone_box(&self) -> alloc::boxed::Box<dyn DynController>;
}

impl<T: Controller + Clone + Send + 'static> DynController for T {
    fn clone_box(&self) -> alloc::boxed::Box<dyn DynController> {
        alloc::boxed::Box::new(self.clone())
    }
}
