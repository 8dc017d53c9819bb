//! Host timer granularity (docs/model.md "Host timers"): when a Linux ≥ 4.8 host really
//! fires a retransmission timer armed at `t` for `T`.
//!
//! Linux keeps TCP's retransmission timers (data, SYN, SYN-ACK) on the hierarchical timer
//! wheel of kernel/time/timer.c. `mod_timer` turns the timeout into an absolute jiffy
//! `e = jiffies + timeout`; `calc_wheel_index` puts it on level `L`, the smallest with
//! `e − clk < LVL_START(L + 1) = 63·8^L`, and `calc_index` rounds it *up* to the level's
//! granularity `8^L`: the bucket expires at jiffy `((e >> 3L) + 1) << 3L`. So an RTO of
//! 200 ms at HZ 250 (50 jiffies, level 0) fires 1 jiffy late, and one of 1 s (250 jiffies,
//! level 1) up to 8 jiffies (32 ms) late. The timer *values* (RTO, backoff) are unchanged;
//! only the instant they fire moves.

use coaplab_cc::{Duration, Instant};

const NANOS_PER_SEC: u64 = 1_000_000_000;
/// `LVL_CLK_SHIFT`: each level is 8 times coarser than the one below.
const LVL_CLK_SHIFT: u32 = 3;
/// `LVL_SIZE − 1`: buckets per level less one.
const LVL_SPAN: u64 = 63;
/// Levels of the wheel with HZ > 100 (`LVL_DEPTH`); the last one caps the delay.
const LVL_DEPTH: u32 = 9;

/// The instant a timer armed at `now` for `timeout` fires on a host with tick rate `hz`
/// (0 = exact timers: `now + timeout`).
pub fn wheel_expiry(hz: u32, now: Instant, timeout: Duration) -> Instant {
    if hz == 0 {
        return now + timeout;
    }
    let hz = u64::from(hz);
    // The current jiffy: floor(t·HZ).
    let clk = mul_div(now.nanos(), hz, NANOS_PER_SEC, false);
    // The timeout in jiffies, rounded up (Linux converts with `msecs_to_jiffies`, which
    // rounds up): ceil(T·HZ).
    let delta = mul_div(timeout.nanos(), hz, NANOS_PER_SEC, true);
    let expires = clk + delta;
    let mut level = 0;
    while level + 1 < LVL_DEPTH && delta >= LVL_SPAN << (LVL_CLK_SHIFT * level) {
        level += 1;
    }
    let shift = LVL_CLK_SHIFT * level;
    let jiffy = ((expires >> shift) + 1) << shift;
    // The first nanosecond of that jiffy.
    Instant::from_nanos(mul_div(jiffy, NANOS_PER_SEC, hz, true))
}

/// `a·b / d` rounded down (or up with `ceil`), truncated to 64 bits; in 64-bit arithmetic when
/// `a·b` fits (a 128-bit division is a library call), else in 128-bit: the same value.
#[inline]
pub(crate) fn mul_div(a: u64, b: u64, d: u64, ceil: bool) -> u64 {
    match a.checked_mul(b) {
        Some(p) if ceil => p.div_ceil(d),
        Some(p) => p / d,
        None if ceil => (u128::from(a) * u128::from(b)).div_ceil(u128::from(d)) as u64,
        None => (u128::from(a) * u128::from(b) / u128::from(d)) as u64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// The 64-bit fast path gives the 128-bit value, whether or not `a·b` fits.
        #[test]
        fn mul_div_is_the_128_bit_quotient(a: u64, b in 0u64..1 << 40, d in 1u64..u64::MAX, ceil: bool) {
            let p = u128::from(a) * u128::from(b);
            let q = if ceil { p.div_ceil(u128::from(d)) } else { p / u128::from(d) };
            proptest::prop_assert_eq!(mul_div(a, b, d, ceil), q as u64);
            let small = a >> 30; // products that fit in 64 bits
            let p = u128::from(small) * u128::from(b);
            let q = if ceil { p.div_ceil(u128::from(d)) } else { p / u128::from(d) };
            proptest::prop_assert_eq!(mul_div(small, b, d, ceil), q as u64);
        }
    }

    fn at(ms: u64) -> Instant {
        Instant::from_nanos(ms * 1_000_000)
    }

    #[test]
    fn expiries_at_hz_250_computed_by_hand() {
        // (armed at ms, timeout ms, fires at ms); a jiffy is 4 ms.
        let table = [
            // e = 0 + 50 = 50; 50 < 63 → level 0; (50 + 1) = 51 → 204 ms.
            (0, 200, 204),
            // t = 1 ms: floor(0.25) = 0, same as above.
            (1, 200, 204),
            // t = 3.999 ms is still jiffy 0; t = 4 ms is jiffy 1: e = 51 → 52 → 208 ms.
            (4, 200, 208),
            // T = 201 ms: ceil(50.25) = 51; e = 51 → 52 → 208 ms.
            (0, 201, 208),
            // T = 248 ms = 62 jiffies < 63: level 0; e = 62 → 63 → 252 ms.
            (0, 248, 252),
            // T = 252 ms = 63 jiffies: level 1; (63 >> 3) + 1 = 8, << 3 = 64 → 256 ms.
            (0, 252, 256),
            // T = 1 s = 250 jiffies (63 ≤ 250 < 504): level 1; (250 >> 3) + 1 = 32 → 256
            // jiffies = 1024 ms.
            (0, 1000, 1024),
            // t = 0.5 s (jiffy 125), T = 2 s (500 < 504, level 1): e = 625; (625 >> 3) + 1
            // = 79 → 632 jiffies = 2528 ms.
            (500, 2000, 2528),
            // T = 3 s = 750 jiffies (504 ≤ 750 < 4032): level 2; (750 >> 6) + 1 = 12 → 768
            // jiffies = 3072 ms.
            (0, 3000, 3072),
            // T = 120 s = 30000 jiffies (4032 ≤ 30000 < 32256): level 3; (30000 >> 9) + 1
            // = 59 → 30208 jiffies = 120832 ms.
            (0, 120_000, 120_832),
            // t = 10.002 s (jiffy 2500), T = 4 s (1000 jiffies, level 2): e = 3500;
            // (3500 >> 6) + 1 = 55 → 3520 jiffies = 14080 ms.
            (10_002, 4000, 14_080),
        ];
        for (t, timeout, fires) in table {
            assert_eq!(
                wheel_expiry(250, at(t), Duration::from_millis(timeout)),
                at(fires),
                "armed at {t} ms for {timeout} ms"
            );
        }
    }

    #[test]
    fn other_rates_and_exact_timers() {
        // HZ 1000 (1 ms jiffies): T = 200 ms at t = 0.5 ms: clk 0, e = 200 (63 ≤ 200 < 504,
        // level 1): (200 >> 3) + 1 = 26 → 208 ms.
        assert_eq!(
            wheel_expiry(
                1000,
                Instant::from_nanos(500_000),
                Duration::from_millis(200)
            ),
            at(208)
        );
        // HZ 300: a jiffy is 3.333… ms. T = 200 ms = 60 jiffies at t = 0: level 0, jiffy 61
        // starts at 61/300 s = 203.333… ms, rounded up to the nanosecond.
        assert_eq!(
            wheel_expiry(300, Instant::ZERO, Duration::from_millis(200)),
            Instant::from_nanos(203_333_334)
        );
        // HZ 0: exact.
        assert_eq!(
            wheel_expiry(0, at(7), Duration::from_nanos(123)),
            Instant::from_nanos(7_000_123)
        );
    }
}
