//! Wireless loss processes (SPEC §2 error profiles), one per link direction, each with its own
//! RNG stream. The two-state Gilbert–Elliott chain is advanced lazily to the time a packet
//! finishes serialization.

use coaplab_cc::rng::Rng;
use coaplab_cc::{Duration, Instant};

/// Parameters of a two-state chain: state durations exponential with the given mean,
/// truncated to `[min, max]` by redrawing; per-state loss probability.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ChainParams {
    pub good_mean: Duration,
    pub good_min: Duration,
    pub good_max: Duration,
    pub good_loss: f64,
    pub bad_mean: Duration,
    pub bad_min: Duration,
    pub bad_max: Duration,
    pub bad_loss: f64,
}

impl ChainParams {
    /// SPEC §2 `medium`: good 400 ms / 60–1200 ms / 0 %, bad 100 ms / 30–300 ms / 50 %.
    pub const MEDIUM: ChainParams = ChainParams {
        good_mean: Duration::from_millis(400),
        good_min: Duration::from_millis(60),
        good_max: Duration::from_millis(1200),
        good_loss: 0.0,
        bad_mean: Duration::from_millis(100),
        bad_min: Duration::from_millis(30),
        bad_max: Duration::from_millis(300),
        bad_loss: 0.5,
    };
    /// SPEC §2 `high`: as `medium` with 2 % loss in the good state and 80 % in the bad.
    pub const HIGH: ChainParams = ChainParams {
        good_loss: 0.02,
        bad_loss: 0.8,
        ..ChainParams::MEDIUM
    };
}

/// SPEC §2 `low`: constant 2 %, no states.
pub const LOW_LOSS: f64 = 0.02;

#[derive(Clone, Debug)]
pub enum LossProcess {
    None,
    Bernoulli(f64),
    Chain(Chain),
}

impl LossProcess {
    /// A SPEC §2 profile by name, or `None` if unknown.
    pub fn profile(name: &str) -> Option<LossProcess> {
        Some(match name {
            "none" => LossProcess::None,
            "low" => LossProcess::Bernoulli(LOW_LOSS),
            "medium" => LossProcess::Chain(Chain::new(ChainParams::MEDIUM)),
            "high" => LossProcess::Chain(Chain::new(ChainParams::HIGH)),
            _ => return None,
        })
    }

    pub const PROFILES: [&'static str; 4] = ["none", "low", "medium", "high"];

    /// Whether a packet that finished serialization at `now` is lost.
    pub fn on_packet(&mut self, now: Instant, rng: &mut dyn Rng) -> bool {
        match self {
            LossProcess::None => false,
            LossProcess::Bernoulli(p) => rng.unit_f64() < *p,
            LossProcess::Chain(chain) => chain.on_packet(now, rng),
        }
    }
}

/// The Gilbert–Elliott chain; starts in the good state at time 0.
#[derive(Clone, Debug)]
pub struct Chain {
    params: ChainParams,
    bad: bool,
    /// End of the current state's sojourn; `None` before the first draw.
    state_end: Option<Instant>,
}

impl Chain {
    pub fn new(params: ChainParams) -> Self {
        Chain {
            params,
            bad: false,
            state_end: None,
        }
    }

    fn sojourn(&self, bad: bool, rng: &mut dyn Rng) -> Duration {
        let p = &self.params;
        let (mean, min, max) = if bad {
            (p.bad_mean, p.bad_min, p.bad_max)
        } else {
            (p.good_mean, p.good_min, p.good_max)
        };
        // Truncation by redrawing (SPEC §2); bounded so a degenerate range cannot spin forever.
        for _ in 0..10_000 {
            let d = Duration::from_secs_f64(-mean.secs_f64() * (1.0 - rng.unit_f64()).ln());
            if min <= d && d <= max {
                return d;
            }
        }
        mean.clamp(min, max)
    }

    /// Advances the chain to `now`, then draws the loss of the current state.
    pub fn on_packet(&mut self, now: Instant, rng: &mut dyn Rng) -> bool {
        let mut end = match self.state_end {
            Some(end) => end,
            None => Instant::ZERO + self.sojourn(false, rng),
        };
        while now >= end {
            self.bad = !self.bad;
            end += self.sojourn(self.bad, rng);
        }
        self.state_end = Some(end);
        let p = if self.bad {
            self.params.bad_loss
        } else {
            self.params.good_loss
        };
        p > 0.0 && rng.unit_f64() < p
    }

    pub fn is_bad(&self) -> bool {
        self.bad
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use coaplab_cc::rng::Xoshiro256pp;

    /// Mean of an exponential with mean `m` truncated to [a, b]:
    /// E = m + (a·e^(−a/m) − b·e^(−b/m)) / (e^(−a/m) − e^(−b/m)).
    fn truncated_mean(m: f64, a: f64, b: f64) -> f64 {
        let (ea, eb) = ((-a / m).exp(), (-b / m).exp());
        m + (a * ea - b * eb) / (ea - eb)
    }

    /// Long-run loss of a chain = (good share · good loss + bad share · bad loss), the shares
    /// being the truncated mean sojourns' proportions.
    fn expected(p: ChainParams) -> f64 {
        let g = truncated_mean(
            p.good_mean.secs_f64(),
            p.good_min.secs_f64(),
            p.good_max.secs_f64(),
        );
        let b = truncated_mean(
            p.bad_mean.secs_f64(),
            p.bad_min.secs_f64(),
            p.bad_max.secs_f64(),
        );
        (g * p.good_loss + b * p.bad_loss) / (g + b)
    }

    fn measured(mut process: LossProcess, seed: u64) -> f64 {
        let mut rng = Xoshiro256pp::seed_from_u64(seed);
        // One packet every 7 ms for 2 h of simulated time: ≈ 1 M packets, ≈ 18 000 bad periods.
        let n = 1_000_000u64;
        let lost = (0..n)
            .filter(|i| process.on_packet(Instant::from_millis(7 * i), &mut rng))
            .count();
        lost as f64 / n as f64
    }

    #[test]
    fn profile_average_loss() {
        // medium: good ≈ 0.392 s, bad ≈ 0.110 s (truncated means) → 0.5·0.110/0.502 ≈ 0.110.
        let medium = expected(ChainParams::MEDIUM);
        assert!((medium - 0.11).abs() < 0.005, "{medium}");
        // high: (0.02·0.392 + 0.8·0.110)/0.502 ≈ 0.191.
        let high = expected(ChainParams::HIGH);
        assert!((high - 0.19).abs() < 0.005, "{high}");
        // Tolerance: bad periods are ≈ 2 % of 2 h / 0.5 s ≈ 14 000 cycles; the relative standard
        // error of the time share over that many cycles is ≈ 1 %, so ±5 % relative is > 4σ.
        for (process, want) in [
            (LossProcess::profile("low").unwrap(), LOW_LOSS),
            (LossProcess::profile("medium").unwrap(), medium),
            (LossProcess::profile("high").unwrap(), high),
        ] {
            let got = measured(process, 11);
            assert!((got - want).abs() < 0.05 * want, "got {got}, want {want}");
        }
        assert_eq!(measured(LossProcess::profile("none").unwrap(), 1), 0.0);
    }

    #[test]
    fn sojourns_respect_their_range() {
        let chain = Chain::new(ChainParams::MEDIUM);
        let mut rng = Xoshiro256pp::seed_from_u64(3);
        for _ in 0..10_000 {
            let g = chain.sojourn(false, &mut rng);
            assert!(Duration::from_millis(60) <= g && g <= Duration::from_millis(1200));
            let b = chain.sojourn(true, &mut rng);
            assert!(Duration::from_millis(30) <= b && b <= Duration::from_millis(300));
        }
    }
}
