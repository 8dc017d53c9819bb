//! Injected randomness. The algorithms never own a global RNG: the caller hands them a
//! [`Rng`], so a simulator can give each client its own seeded stream and a replay can
//! switch dithering off with [`LowerBound`].

use crate::time::Duration;

/// A source of uniformly distributed 64-bit words.
pub trait Rng {
    fn next_u64(&mut self) -> u64;

    /// Uniform in `[lo, hi]` (both inclusive) at nanosecond resolution.
    /// Uses the high half of a 64×64-bit product (Lemire's method without the rejection
    /// step: the bias is below 2⁻³² for spans under 4 s·10⁹ ns, irrelevant here).
    fn uniform(&mut self, lo: Duration, hi: Duration) -> Duration {
        if hi <= lo {
            return lo;
        }
        let span = (hi - lo).nanos() as u128 + 1;
        let offset = (self.next_u64() as u128 * span) >> 64;
        lo + Duration::from_nanos(offset as u64)
    }

    /// Uniform float in `[0, 1)` with 53 bits of precision.
    fn unit_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

impl<R: Rng + ?Sized> Rng for &mut R {
    fn next_u64(&mut self) -> u64 {
        (**self).next_u64()
    }
}

/// "Dithering off" (docs/design.md §3.2): always returns 0, so [`Rng::uniform`] yields the lower bound
/// of every range and replays are exact.
#[derive(Clone, Copy, Debug, Default)]
pub struct LowerBound;

impl Rng for LowerBound {
    fn next_u64(&mut self) -> u64 {
        0
    }
}

/// SplitMix64 (Steele, Lea, Flood 2014): used to derive independent seeds from
/// `(seed, replication, component, index)` and to seed [`Xoshiro256pp`].
pub fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Mixes a list of words into one well-distributed seed (order-sensitive).
pub fn derive_seed(parts: &[u64]) -> u64 {
    let mut state = 0x6A09_E667_F3BC_C908; // sqrt(2) fractional bits: an arbitrary fixed start
    let mut out = 0;
    for &p in parts {
        state ^= p;
        out = splitmix64(&mut state);
        state = out;
    }
    out
}

/// xoshiro256++ (Blackman & Vigna 2019): small, fast, good statistical quality.
#[derive(Clone, Debug)]
pub struct Xoshiro256pp {
    s: [u64; 4],
}

impl Xoshiro256pp {
    pub fn seed_from_u64(seed: u64) -> Self {
        let mut sm = seed;
        let s = [
            splitmix64(&mut sm),
            splitmix64(&mut sm),
            splitmix64(&mut sm),
            splitmix64(&mut sm),
        ];
        Xoshiro256pp { s }
    }
}

impl Rng for Xoshiro256pp {
    fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let result = s[0].wrapping_add(s[3]).rotate_left(23).wrapping_add(s[0]);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lower_bound_gives_lower_bound() {
        let lo = Duration::from_secs(2);
        assert_eq!(LowerBound.uniform(lo, Duration::from_secs(3)), lo);
    }

    #[test]
    fn uniform_stays_in_range_and_reaches_both_halves() {
        let mut rng = Xoshiro256pp::seed_from_u64(7);
        let (lo, hi) = (Duration::from_secs(2), Duration::from_secs(3));
        let mid = Duration::from_millis(2500);
        let (mut below, mut above) = (0, 0);
        for _ in 0..10_000 {
            let d = rng.uniform(lo, hi);
            assert!(lo <= d && d <= hi);
            if d < mid {
                below += 1
            } else {
                above += 1
            }
        }
        // Binomial(10000, 0.5): ±5σ = ±250.
        assert!((4750..=5250).contains(&below), "{below} {above}");
    }

    #[test]
    fn derived_seeds_differ_per_component() {
        assert_ne!(derive_seed(&[1, 0, 1]), derive_seed(&[1, 0, 2]));
        assert_ne!(derive_seed(&[1, 0]), derive_seed(&[0, 1]));
        assert_eq!(derive_seed(&[5, 6]), derive_seed(&[5, 6]));
    }
}
