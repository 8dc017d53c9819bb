//! Integer time, smoltcp-style: the algorithms never see a clock, only these values.
//!
//! Both types count **nanoseconds** in a `u64` (≈ 584 years of range), so every timer value
//! and every RTT sample is exact and arithmetic is deterministic across platforms.

use core::fmt;
use core::ops::{Add, AddAssign, Sub};

/// A point in time, in nanoseconds since an arbitrary epoch chosen by the caller
/// (the simulator's start, or a real endpoint's monotonic clock origin).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Instant(u64);

/// A span of time in nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Duration(u64);

const NANOS_PER_SEC: u64 = 1_000_000_000;
const NANOS_PER_MILLI: u64 = 1_000_000;

impl Instant {
    pub const ZERO: Instant = Instant(0);

    pub const fn from_nanos(nanos: u64) -> Self {
        Instant(nanos)
    }
    pub const fn from_millis(millis: u64) -> Self {
        Instant(millis * NANOS_PER_MILLI)
    }
    pub const fn from_secs(secs: u64) -> Self {
        Instant(secs * NANOS_PER_SEC)
    }
    /// Seconds as a float, rounded to the nearest nanosecond.
    pub fn from_secs_f64(secs: f64) -> Self {
        Instant(Duration::from_secs_f64(secs).0)
    }
    pub const fn nanos(self) -> u64 {
        self.0
    }
    pub fn secs_f64(self) -> f64 {
        self.0 as f64 / NANOS_PER_SEC as f64
    }
    /// Time elapsed since `earlier`, zero if `earlier` is in the future.
    pub const fn saturating_since(self, earlier: Instant) -> Duration {
        Duration(self.0.saturating_sub(earlier.0))
    }
}

impl Duration {
    pub const ZERO: Duration = Duration(0);
    pub const MAX: Duration = Duration(u64::MAX);

    pub const fn from_nanos(nanos: u64) -> Self {
        Duration(nanos)
    }
    pub const fn from_micros(micros: u64) -> Self {
        Duration(micros * 1_000)
    }
    pub const fn from_millis(millis: u64) -> Self {
        Duration(millis * NANOS_PER_MILLI)
    }
    pub const fn from_secs(secs: u64) -> Self {
        Duration(secs * NANOS_PER_SEC)
    }
    /// Seconds as a float, rounded to the nearest nanosecond; negative and NaN become zero.
    pub fn from_secs_f64(secs: f64) -> Self {
        let ns = secs * NANOS_PER_SEC as f64 + 0.5;
        if ns >= 1.0 {
            Duration(ns as u64)
        } else {
            Duration(0)
        }
    }
    pub const fn nanos(self) -> u64 {
        self.0
    }
    pub fn secs_f64(self) -> f64 {
        self.0 as f64 / NANOS_PER_SEC as f64
    }
    /// `self · num / den` in 128-bit arithmetic, truncated to the nanosecond.
    /// Every rational constant of the algorithms (α = 1/8, ×1.5, ×3, …) goes through here.
    pub const fn mul_ratio(self, num: u64, den: u64) -> Self {
        Duration(((self.0 as u128 * num as u128) / den as u128) as u64)
    }
    pub const fn saturating_add(self, other: Duration) -> Self {
        Duration(self.0.saturating_add(other.0))
    }
    pub const fn saturating_sub(self, other: Duration) -> Self {
        Duration(self.0.saturating_sub(other.0))
    }
    /// `|self − other|`.
    pub const fn abs_diff(self, other: Duration) -> Self {
        Duration(self.0.abs_diff(other.0))
    }
    pub const fn mul(self, factor: u64) -> Self {
        Duration(self.0.saturating_mul(factor))
    }
}

impl Add<Duration> for Instant {
    type Output = Instant;
    fn add(self, rhs: Duration) -> Instant {
        Instant(self.0 + rhs.0)
    }
}
impl AddAssign<Duration> for Instant {
    fn add_assign(&mut self, rhs: Duration) {
        self.0 += rhs.0;
    }
}
impl Sub<Instant> for Instant {
    type Output = Duration;
    /// Panics in debug builds if `rhs` is later than `self`; use `saturating_since` when unsure.
    fn sub(self, rhs: Instant) -> Duration {
        Duration(self.0 - rhs.0)
    }
}
impl Add for Duration {
    type Output = Duration;
    fn add(self, rhs: Duration) -> Duration {
        Duration(self.0 + rhs.0)
    }
}
impl AddAssign for Duration {
    fn add_assign(&mut self, rhs: Duration) {
        self.0 += rhs.0;
    }
}
impl Sub for Duration {
    type Output = Duration;
    fn sub(self, rhs: Duration) -> Duration {
        Duration(self.0 - rhs.0)
    }
}

impl fmt::Display for Duration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}.{:09}s",
            self.0 / NANOS_PER_SEC,
            self.0 % NANOS_PER_SEC
        )
    }
}
impl fmt::Display for Instant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "@{}", Duration(self.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratio_and_float_conversions() {
        // 2 s · 3/2 = 3 s exactly.
        assert_eq!(
            Duration::from_secs(2).mul_ratio(3, 2),
            Duration::from_secs(3)
        );
        // 1 ns · 1/8 truncates to 0.
        assert_eq!(Duration::from_nanos(1).mul_ratio(1, 8), Duration::ZERO);
        assert_eq!(Duration::from_secs_f64(0.660), Duration::from_millis(660));
        assert_eq!(Duration::from_secs_f64(-1.0), Duration::ZERO);
        assert_eq!(
            Instant::from_secs(3) - Instant::from_millis(500),
            Duration::from_millis(2500)
        );
        assert_eq!(
            Instant::from_secs(1).saturating_since(Instant::from_secs(2)),
            Duration::ZERO
        );
        assert_eq!(format!("{}", Duration::from_millis(2500)), "2.500000000s");
    }
}
