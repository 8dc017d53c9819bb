//! `peakhopper-rto` (SPEC §3.1): the Peak-Hopper RTO (Ruuska, Kuusela et al.) on strong
//! samples only.
//!
//! Californium's implementation differs in two places that SPEC.md settles: it never records
//! the first sample as `R_prev` (so the second update sees `R_prev = 0`), and it computes
//! `δ` with integer division. Here `R_prev` is always the previous sample and `δ` is real.

use crate::backoff;
use crate::config::Config;
use crate::exchange::{Exchange, Sample, SampleKind, StateVisitor, Value};
use crate::rng::Rng;
use crate::time::{Duration, Instant};

/// Decay `D = 1 − 1/24`, as the ratio 23/24.
const DECAY_NUM: u64 = 23;
const DECAY_DEN: u64 = 24;
/// `B_max = 1`.
const B_MAX: f64 = 1.0;
/// First sample: `RTO = 1.75·R`.
const FIRST_NUM: u64 = 7;
const FIRST_DEN: u64 = 4;
/// The `+100 ms` margin of the lower bounds.
const MARGIN: Duration = Duration::from_millis(100);
/// Samples kept in the history.
const HISTORY: usize = 2;

#[derive(Clone, Debug)]
pub struct PeakHopperRto {
    pub(crate) config: Config,
    rto: Option<Duration>,
    /// Sensitivity `B`, starting at 0.
    b: f64,
    /// The last `HISTORY` samples, newest included (as in Californium).
    history: [Option<Duration>; HISTORY],
    next_slot: usize,
    prev: Option<Duration>,
    retained: Option<Duration>,
}

impl PeakHopperRto {
    pub fn new(config: Config) -> Self {
        PeakHopperRto {
            config,
            rto: None,
            b: 0.0,
            history: [None; HISTORY],
            next_slot: 0,
            prev: None,
            retained: None,
        }
    }

    /// `T_0` = retained backed-off value, else the RTO, else 2 s; no dithering; cap 60 s.
    pub fn on_exchange_start(&mut self, now: Instant, _rng: &mut dyn Rng) -> Exchange {
        Exchange::new(now, self.base_rto().min(self.config.max_timer))
    }

    pub fn next_timer(&self, ex: &Exchange) -> Duration {
        backoff::binary(ex.timer, self.config.max_timer)
    }

    /// Feeds one strong sample `R`:
    /// first: `RTO = 1.75·R`; later, with `R_prev` the previous sample:
    /// `δ = |R − R_prev| / R`, `B = min(max(2δ, D·B), B_max)`, `RTT_max = max(R, R_prev)`,
    /// `RTO = max(D·RTO, (1+B)·RTT_max, RTT_max + 100 ms, max(history) + 100 ms)`.
    fn on_sample(&mut self, rtt: Duration) {
        self.history[self.next_slot] = Some(rtt);
        self.next_slot = (self.next_slot + 1) % HISTORY;
        self.rto = Some(match (self.rto, self.prev) {
            (Some(rto), Some(prev)) => {
                let delta = if rtt == Duration::ZERO {
                    if prev == Duration::ZERO {
                        0.0
                    } else {
                        B_MAX
                    }
                } else {
                    rtt.abs_diff(prev).nanos() as f64 / rtt.nanos() as f64
                };
                let decayed_b = self.b * DECAY_NUM as f64 / DECAY_DEN as f64;
                self.b = (2.0 * delta).max(decayed_b).min(B_MAX);
                let rtt_max = rtt.max(prev);
                let hist_max = self.history.iter().flatten().copied().max().unwrap_or(rtt);
                let scaled = Duration::from_nanos(((1.0 + self.b) * rtt_max.nanos() as f64) as u64);
                rto.mul_ratio(DECAY_NUM, DECAY_DEN)
                    .max(scaled)
                    .max(rtt_max + MARGIN)
                    .max(hist_max + MARGIN)
            }
            _ => rtt.mul_ratio(FIRST_NUM, FIRST_DEN),
        });
        self.prev = Some(rtt);
    }

    /// Strong samples only (`k = 0`); after `k ≥ 1` the backed-off `T_k` is kept.
    pub fn on_response(&mut self, now: Instant, ex: &Exchange) -> Sample {
        let rtt = now - ex.started;
        if ex.retransmissions == 0 {
            self.on_sample(rtt);
            self.retained = None;
            Sample::new(SampleKind::Strong, rtt)
        } else {
            self.retained = Some(ex.timer);
            Sample::new(SampleKind::Ambiguous, rtt)
        }
    }

    pub fn on_exchange_failed(&mut self, _now: Instant, ex: &Exchange) {
        self.retained = Some(ex.timer);
    }

    pub fn reset(&mut self) {
        *self = PeakHopperRto::new(self.config);
    }

    pub fn base_rto(&self) -> Duration {
        self.retained
            .or(self.rto)
            .unwrap_or(self.config.ack_timeout)
    }

    pub fn visit_state(&self, visit: &mut StateVisitor<'_>) {
        visit("rto", self.rto.unwrap_or(self.config.ack_timeout).into());
        visit("b", Value::Float(self.b));
        visit("previous_sample", self.prev.into());
        visit("retained_timer", self.retained.into());
    }
}
