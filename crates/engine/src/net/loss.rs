//! Wireless loss processes (docs/design.md §2 error profiles), one per link direction, each with its own
//! RNG stream. The two-state Gilbert–Elliott chain is advanced lazily to the time a packet
//! finishes serialization.

use coaplab_cc::rng::Rng;
use coaplab_cc::{Duration, Instant};

/// Parameters of a two-state chain: state durations exponential with the given mean,
/// truncated to `[min, max]` (by redrawing, see [`Chain`]); per-state loss probability.
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
    /// docs/design.md §2 `medium`: good 400 ms / 60–1200 ms / 0 %, bad 100 ms / 30–300 ms / 50 %.
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
    /// docs/design.md §2 `high`: as `medium` with 2 % loss in the good state and 80 % in the bad.
    pub const HIGH: ChainParams = ChainParams {
        good_loss: 0.02,
        bad_loss: 0.8,
        ..ChainParams::MEDIUM
    };
}

/// The shortest state duration a chain accepts (each state's mean and max). Durations are
/// integer nanoseconds and the chain is advanced one sojourn at a time, so a state must last
/// at least this long: a zero duration would never advance the chain, and sub-microsecond
/// states cannot be resolved by packets that take microseconds or more to serialize while
/// costing one iteration each.
pub const MIN_STATE_DURATION: Duration = Duration::from_micros(1);

/// Below this probability of a draw landing in `[min, max]`, a sojourn is drawn by inverting
/// the truncated distribution's CDF (one draw) instead of by redrawing (expected `1/p`
/// draws). The docs/design.md §2 profiles accept ≈ 0.81 (good) and ≈ 0.69 (bad), far above it, so
/// they keep the redrawing (and their results).
pub const MIN_ACCEPTANCE: f64 = 0.01;

impl ChainParams {
    /// Checks the parameters; the message names the field and what is allowed.
    pub fn validate(&self) -> Result<(), String> {
        for (state, mean, min, max, loss) in [
            (
                "good",
                self.good_mean,
                self.good_min,
                self.good_max,
                self.good_loss,
            ),
            (
                "bad",
                self.bad_mean,
                self.bad_min,
                self.bad_max,
                self.bad_loss,
            ),
        ] {
            if !(min <= mean && mean <= max) {
                return Err(format!(
                    "{state}_min_ms <= {state}_mean_ms <= {state}_max_ms does not hold ({} ns, {} ns, {} ns)",
                    min.nanos(),
                    mean.nanos(),
                    max.nanos()
                ));
            }
            if mean < MIN_STATE_DURATION {
                return Err(format!(
                    "{state}_mean_ms: {} ns is too short; allowed: >= 0.001 ms (a state must last at least 1 µs)",
                    mean.nanos()
                ));
            }
            if !(0.0..=1.0).contains(&loss) {
                return Err(format!(
                    "{state}_loss: {loss} is not a probability; allowed: 0 to 1"
                ));
            }
        }
        Ok(())
    }
}

/// docs/design.md §2 `low`: constant 2 %, no states.
pub const LOW_LOSS: f64 = 0.02;

#[derive(Clone, Debug)]
pub enum LossProcess {
    None,
    Bernoulli(f64),
    Chain(Chain),
}

impl LossProcess {
    /// A custom chain, checked ([`ChainParams::validate`]).
    pub fn chain(params: ChainParams) -> Result<LossProcess, String> {
        Chain::try_new(params).map(LossProcess::Chain)
    }

    /// A docs/design.md §2 profile by name, or `None` if unknown.
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
///
/// A sojourn is drawn from the exponential distribution of the state's mean truncated to
/// `[min, max]`: by redrawing until a draw lands in the range (docs/design.md §2) when that is likely
/// (probability ≥ [`MIN_ACCEPTANCE`]), else by inverting the truncated CDF with one draw (the
/// same distribution); a range with `min == max` is that constant, with no draw. Every
/// sojourn lasts at least 1 ns, so the chain always advances.
#[derive(Clone, Debug)]
pub struct Chain {
    params: ChainParams,
    bad: bool,
    /// End of the current state's sojourn; `None` before the first draw.
    state_end: Option<Instant>,
    /// Per state (good, bad): draw by redrawing (`true`) or by inversion.
    redraw: [bool; 2],
}

impl Chain {
    /// A chain with checked parameters ([`ChainParams::validate`]).
    pub fn try_new(params: ChainParams) -> Result<Self, String> {
        params.validate()?;
        Ok(Chain::new(params))
    }

    /// A chain without checking the parameters: whatever they are, each sojourn lasts at
    /// least 1 ns and costs a bounded number of draws. Prefer [`Chain::try_new`].
    pub fn new(params: ChainParams) -> Self {
        let accept = |mean: Duration, min: Duration, max: Duration| {
            let m = mean.secs_f64();
            (-min.secs_f64() / m).exp() - (-max.secs_f64() / m).exp()
        };
        Chain {
            params,
            bad: false,
            state_end: None,
            redraw: [
                accept(params.good_mean, params.good_min, params.good_max) >= MIN_ACCEPTANCE,
                accept(params.bad_mean, params.bad_min, params.bad_max) >= MIN_ACCEPTANCE,
            ],
        }
    }

    fn sojourn(&self, bad: bool, rng: &mut dyn Rng) -> Duration {
        let p = &self.params;
        let (mean, min, max) = if bad {
            (p.bad_mean, p.bad_min, p.bad_max)
        } else {
            (p.good_mean, p.good_min, p.good_max)
        };
        let one = Duration::from_nanos(1);
        if min >= max {
            return min.max(one); // a constant (min > max is refused by `validate`)
        }
        if self.redraw[usize::from(bad)] {
            // Truncation by redrawing (docs/design.md §2). With an acceptance of at least 1 %, 10 000
            // draws all missing has probability below 0.99^10000 ≈ 2e-44.
            for _ in 0..10_000 {
                let d = Duration::from_secs_f64(-mean.secs_f64() * (1.0 - rng.unit_f64()).ln());
                if min <= d && d <= max {
                    return d.max(one);
                }
            }
        }
        // Inversion: an exponential truncated to [min, max] is min plus one truncated to
        // [0, max − min] (memorylessness), whose CDF F(x) = (1 − e^(−x/m)) / (1 − e^(−w/m))
        // inverts to x = −m·ln(1 − u·(1 − e^(−w/m))).
        let m = mean.secs_f64();
        let w = (max - min).secs_f64();
        let x = -m * (1.0 - rng.unit_f64() * (1.0 - (-w / m).exp())).ln();
        let d = min.saturating_add(Duration::from_secs_f64(x));
        d.clamp(min, max).max(one)
    }

    /// Advances the chain to `now`, then draws the loss of the current state.
    pub fn on_packet(&mut self, now: Instant, rng: &mut dyn Rng) -> bool {
        let mut end = match self.state_end {
            Some(end) => end,
            None => Instant::ZERO + self.sojourn(false, rng),
        };
        while now >= end {
            self.bad = !self.bad;
            // Saturating: a state lasting beyond u64 nanoseconds (≈ 584 years) never ends.
            end = Instant::from_nanos(
                end.nanos()
                    .saturating_add(self.sojourn(self.bad, rng).nanos()),
            );
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

    /// A chain of the given per-state (mean, min, max) in nanoseconds, losing everything in the
    /// bad state and nothing in the good one.
    fn chain_ns(good: (u64, u64, u64), bad: (u64, u64, u64)) -> ChainParams {
        let d = Duration::from_nanos;
        ChainParams {
            good_mean: d(good.0),
            good_min: d(good.1),
            good_max: d(good.2),
            good_loss: 0.0,
            bad_mean: d(bad.0),
            bad_min: d(bad.1),
            bad_max: d(bad.2),
            bad_loss: 1.0,
        }
    }

    /// Counts the generator's draws.
    struct Counting(Xoshiro256pp, u64);
    impl Rng for Counting {
        fn next_u64(&mut self) -> u64 {
            self.1 += 1;
            self.0.next_u64()
        }
    }

    #[test]
    fn zero_durations_are_refused_and_never_stall() {
        // `*_ms = 1e-7` is 0.1 ns: every duration rounds to 0 ns.
        let p = chain_ns((0, 0, 0), (0, 0, 0));
        let e = Chain::try_new(p).unwrap_err();
        assert!(
            e.contains("good_mean_ms") && e.contains(">= 0.001 ms"),
            "{e}"
        );
        assert!(LossProcess::chain(p).is_err());
        // Unchecked, the chain still advances: each sojourn lasts 1 ns, so reaching t = 1 µs
        // takes 1000 state changes (an even number: back in the good state, 0 % loss).
        let mut chain = Chain::new(p);
        let mut rng = Xoshiro256pp::seed_from_u64(1);
        assert!(!chain.on_packet(Instant::from_nanos(1_000), &mut rng));
        assert!(!chain.is_bad());
        assert!(chain.on_packet(Instant::from_nanos(1_001), &mut rng));
    }

    #[test]
    fn validation_names_the_field() {
        let ok = ChainParams::MEDIUM;
        assert_eq!(ok.validate(), Ok(()));
        assert_eq!(ChainParams::HIGH.validate(), Ok(()));
        let e = ChainParams {
            bad_min: Duration::from_millis(200),
            ..ok
        }
        .validate()
        .unwrap_err();
        assert!(
            e.starts_with("bad_min_ms <= bad_mean_ms <= bad_max_ms"),
            "{e}"
        );
        let e = ChainParams {
            good_loss: 1.5,
            ..ok
        }
        .validate()
        .unwrap_err();
        assert!(e.starts_with("good_loss: 1.5"), "{e}");
        let e = ChainParams {
            bad_loss: f64::NAN,
            ..ok
        }
        .validate()
        .unwrap_err();
        assert!(e.starts_with("bad_loss"), "{e}");
        // 1 µs is the shortest state accepted.
        assert_eq!(
            chain_ns((1_000, 1_000, 1_000), (1_000, 0, 5_000)).validate(),
            Ok(())
        );
        assert!(chain_ns((999, 0, 1_000), (1_000, 0, 5_000))
            .validate()
            .is_err());
    }

    #[test]
    fn a_degenerate_range_is_a_constant_without_draws() {
        // min = mean = max = 5 ms good, 2 ms bad: the chain alternates exactly every 5 / 2 ms.
        let ms = 1_000_000;
        let p = chain_ns((5 * ms, 5 * ms, 5 * ms), (2 * ms, 2 * ms, 2 * ms));
        let mut chain = Chain::try_new(p).unwrap();
        let mut rng = Counting(Xoshiro256pp::seed_from_u64(2), 0);
        // good [0, 5), bad [5, 7), good [7, 12), bad [12, 14), …: period 7 ms.
        for k in 0..1_000u64 {
            let base = 7 * ms * k;
            assert!(!chain.on_packet(Instant::from_nanos(base + 4 * ms), &mut rng));
            assert!(chain.on_packet(Instant::from_nanos(base + 6 * ms), &mut rng));
        }
        // The only draws are the bad state's loss draws (probability 1 > 0 draws once per
        // packet): 1000; none for the sojourns, none for the good state's 0 % loss.
        assert_eq!(rng.1, 1_000);
    }

    #[test]
    fn a_narrow_range_is_drawn_by_inversion_in_range() {
        // Mean 1000 ms truncated to [1000, 1000.001] ms: a redraw lands there with probability
        // e^−1 − e^−1.000001 ≈ 3.7e-7; inversion takes one draw per sojourn.
        let ms = 1_000_000;
        let p = chain_ns(
            (1_000 * ms, 1_000 * ms, 1_000 * ms + 1_000),
            (100 * ms, 50 * ms, 5_000 * ms),
        );
        let chain = Chain::try_new(p).unwrap();
        assert_eq!(chain.redraw, [false, true]);
        let mut rng = Counting(Xoshiro256pp::seed_from_u64(4), 0);
        for i in 0..10_000u64 {
            let g = chain.sojourn(false, &mut rng);
            assert!(
                Duration::from_millis(1_000) <= g && g <= Duration::from_nanos(1_000 * ms + 1_000)
            );
            assert_eq!(rng.1, i + 1);
        }
    }

    #[test]
    fn inversion_has_the_truncated_mean() {
        // Mean 1 s truncated to [0.1, 0.2] s: acceptance e^−0.1 − e^−0.2 ≈ 0.086 ≥ 1 % redraws;
        // force inversion to check it draws the same distribution: the truncated mean is
        // 1 + (0.1·e^−0.1 − 0.2·e^−0.2)/(e^−0.1 − e^−0.2) ≈ 0.14917 s.
        let ms = 1_000_000;
        let mut chain = Chain::new(chain_ns((1_000 * ms, 100 * ms, 200 * ms), (ms, ms, ms)));
        chain.redraw = [false, false];
        let want = truncated_mean(1.0, 0.1, 0.2);
        assert!((want - 0.14917).abs() < 1e-5, "{want}");
        let mut rng = Xoshiro256pp::seed_from_u64(5);
        let n = 100_000;
        let sum: f64 = (0..n)
            .map(|_| chain.sojourn(false, &mut rng).secs_f64())
            .sum();
        // Standard deviation of the truncated law < (0.2 − 0.1)/√12·… ≤ 0.03 s; the standard
        // error of 100 000 draws ≤ 1e-4 s; 5e-4 s is > 5σ.
        assert!((sum / n as f64 - want).abs() < 5e-4, "{}", sum / n as f64);
    }

    #[test]
    fn a_never_ending_state_does_not_overflow() {
        let p = chain_ns((u64::MAX, u64::MAX / 2, u64::MAX), (1_000, 1_000, 1_000));
        let mut chain = Chain::try_new(p).unwrap();
        let mut rng = Xoshiro256pp::seed_from_u64(6);
        assert!(!chain.on_packet(Instant::from_secs(1_000_000), &mut rng));
    }
}
