//! 3GPP TR 45.820's mobile autonomous reporting traffic model (`workload.kind = "reporting"`,
//! docs/experiments.md; TR 45.820 V13.1.0 Annex E, "Traffic models for Cellular IoT", E.2
//! "Mobile Autonomous Reporting"): each device sends periodic reports at an interval drawn
//! once per device, with a Pareto-distributed payload, and optionally exception reports.
//! Pure draws from a random stream given by the caller (`sim::streams`).

use coaplab_cc::rng::Rng;
use coaplab_cc::Duration;

/// The periodic reports' intervals and the share of devices with each (TR 45.820 Annex E.2,
/// MAR periodic: 1 day 40 %, 2 hours 40 %, 1 hour 15 %, 30 minutes 5 %), s.
pub const REPORT_INTERVALS: [(u64, f64); 4] =
    [(86_400, 0.40), (7_200, 0.40), (3_600, 0.15), (1_800, 0.05)];

/// The shortest interval of [`REPORT_INTERVALS`] (30 minutes), s.
pub const SHORTEST_INTERVAL_S: u64 = 1_800;

/// The application payload's Pareto shape α (TR 45.820 Annex E.2, MAR periodic: "Pareto
/// distribution with shape parameter α = 2.5").
pub const PAYLOAD_PARETO_ALPHA: f64 = 2.5;
/// The payload's minimum, bytes (TR 45.820 Annex E.2: 20 bytes, the Pareto's scale).
pub const PAYLOAD_MIN_BYTES: f64 = 20.0;
/// The payload's cut-off, bytes (TR 45.820 Annex E.2: 200 bytes). A draw above it is cut to
/// it (3GPP's "cut-off": the tail above becomes a point mass at the cut-off).
pub const PAYLOAD_CUTOFF_BYTES: f64 = 200.0;
/// An exception report's payload, bytes (TR 45.820 Annex E.2, MAR exception reports: 20 bytes).
pub const EXCEPTION_REPORT_BYTES: u32 = 20;
/// `workload.exception_reports_per_day` when absent: none. TR 45.820 Annex E.2 describes
/// exception reports (their size, their latency target) but gives them no rate.
pub const EXCEPTION_REPORTS_PER_DAY: f64 = 0.0;

/// One device's report interval, drawn from [`REPORT_INTERVALS`]' shares with one uniform
/// draw (cumulative shares 0.40, 0.80, 0.95, 1.00).
pub fn draw_interval(rng: &mut dyn Rng) -> Duration {
    let u = rng.unit_f64();
    let mut acc = 0.0;
    for (secs, share) in REPORT_INTERVALS {
        acc += share;
        if u < acc {
            return Duration::from_secs(secs);
        }
    }
    Duration::from_secs(REPORT_INTERVALS[REPORT_INTERVALS.len() - 1].0)
}

/// A payload size as a real number: Pareto(α = 2.5, scale 20) by inversion, `20 / V^(1/α)`
/// with `V = 1 − U` in (0, 1], cut at 200.
pub fn draw_payload_f64(rng: &mut dyn Rng) -> f64 {
    let v = 1.0 - rng.unit_f64();
    (PAYLOAD_MIN_BYTES / v.powf(1.0 / PAYLOAD_PARETO_ALPHA)).min(PAYLOAD_CUTOFF_BYTES)
}

/// A report's payload, whole bytes in [20, 200] (the real draw rounded down).
pub fn draw_payload(rng: &mut dyn Rng) -> u32 {
    draw_payload_f64(rng) as u32
}

/// The gap to a device's next exception report at `per_day` reports a day (a Poisson
/// process: exponential gaps of mean 86 400 / `per_day` s), at least 1 ns.
pub fn exception_gap(rng: &mut dyn Rng, per_day: f64) -> Duration {
    let v = 1.0 - rng.unit_f64();
    let secs = -v.ln() * 86_400.0 / per_day;
    Duration::from_secs_f64(secs).max(Duration::from_nanos(1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use coaplab_cc::rng::Xoshiro256pp;

    const N: usize = 200_000;

    #[test]
    fn the_interval_shares_are_the_trs() {
        let mut rng = Xoshiro256pp::seed_from_u64(11);
        let mut counts = [0usize; 4];
        for _ in 0..N {
            let d = draw_interval(&mut rng).nanos() / 1_000_000_000;
            let i = REPORT_INTERVALS.iter().position(|&(s, _)| s == d).unwrap();
            counts[i] += 1;
        }
        // Each share p over N = 200 000 draws: standard deviation sqrt(p(1−p)/N) ≤
        // sqrt(0.25 / 200 000) = 0.00112; 5 of them = 0.0056.
        for (i, &(_, p)) in REPORT_INTERVALS.iter().enumerate() {
            let got = counts[i] as f64 / N as f64;
            assert!((got - p).abs() < 0.0056, "interval {i}: {got} vs {p}");
        }
        assert_eq!(SHORTEST_INTERVAL_S, REPORT_INTERVALS[3].0);
    }

    /// The payload's mean, by hand: for Y = min(X, c), X Pareto with scale m = 20 and α = 2.5,
    /// c = 200, E[Y] = ∫₀^c P(X > x) dx = m + ∫_m^c (m/x)^α dx = m + m/(α − 1) · (1 − (m/c)^(α−1))
    /// = 20 + (20 / 1.5)(1 − 0.1^1.5) = 20 + 13.3333 × (1 − 0.0316228) = 20 + 12.9117
    /// = 32.9117 bytes. E[Y²] = m² + ∫_m^c 2x (m/x)^α dx = m² + 2 m^α (c^(2−α) − m^(2−α))/(2 − α)
    /// = 400 + 2 · 20^2.5 · (200^−0.5 − 20^−0.5)/(−0.5) = 400 + 4 · 1788.85 · (0.223607 −
    /// 0.0707107) = 400 + 1094.0 = 1494.0; variance 1494.0 − 32.9117² = 410.8, so the mean of
    /// 200 000 draws has a standard deviation of sqrt(410.8 / 200 000) = 0.0453: 5 of them = 0.23.
    /// P(Y = c) = (m/c)^α = 0.1^2.5 = 0.0031623 (sd sqrt(0.00316 / 200 000) = 0.000126).
    #[test]
    fn the_payload_is_pareto_cut_at_200_with_the_formulas_mean() {
        let mut rng = Xoshiro256pp::seed_from_u64(12);
        let (mut sum, mut at_cutoff) = (0.0, 0usize);
        for _ in 0..N {
            let y = draw_payload_f64(&mut rng);
            assert!((20.0..=200.0).contains(&y), "{y}");
            sum += y;
            at_cutoff += usize::from(y == 200.0);
        }
        let mean = sum / N as f64;
        assert!((mean - 32.9117).abs() < 0.23, "mean {mean}");
        let p = at_cutoff as f64 / N as f64;
        assert!((p - 0.0031623).abs() < 5.0 * 0.000126, "P(200) {p}");
        // Whole bytes stay within the bounds: the extremes of the draw, U = 0 → 20 B and
        // U → 1 → cut at 200 B.
        struct Const(u64);
        impl Rng for Const {
            fn next_u64(&mut self) -> u64 {
                self.0
            }
        }
        assert_eq!(draw_payload(&mut Const(0)), 20);
        assert_eq!(draw_payload(&mut Const(u64::MAX)), 200);
    }

    /// Exponential gaps of mean 86 400 / 4 = 21 600 s at 4 a day; the mean of 200 000 has a
    /// standard deviation of 21 600 / sqrt(200 000) = 48.3 s: 5 of them = 241 s.
    #[test]
    fn exception_gaps_have_the_rates_mean() {
        let mut rng = Xoshiro256pp::seed_from_u64(13);
        let mean = (0..N)
            .map(|_| exception_gap(&mut rng, 4.0).secs_f64())
            .sum::<f64>()
            / N as f64;
        assert!((mean - 21_600.0).abs() < 241.0, "{mean}");
    }

    #[test]
    fn draws_are_deterministic_per_seed() {
        let a: Vec<u32> = {
            let mut r = Xoshiro256pp::seed_from_u64(5);
            (0..50).map(|_| draw_payload(&mut r)).collect()
        };
        let mut r = Xoshiro256pp::seed_from_u64(5);
        let b: Vec<u32> = (0..50).map(|_| draw_payload(&mut r)).collect();
        assert_eq!(a, b);
    }
}
