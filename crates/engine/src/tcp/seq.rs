//! TCP sequence numbers: 32-bit values compared modulo 2³² (RFC 9293 §3.4).

use core::cmp::Ordering;
use core::ops::{Add, Sub};

/// A sequence number. Ordering is the RFC 9293 §3.4 modular comparison, valid while the two
/// numbers are less than 2³¹ apart (always true here: windows are far smaller).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Seq(pub u32);

impl Add<u32> for Seq {
    type Output = Seq;
    fn add(self, n: u32) -> Seq {
        Seq(self.0.wrapping_add(n))
    }
}

impl Sub for Seq {
    type Output = u32;
    /// Bytes from `earlier` to `self`; `self` must not be before `earlier`.
    fn sub(self, earlier: Seq) -> u32 {
        let d = self.0.wrapping_sub(earlier.0);
        debug_assert!(d < 1 << 31, "sequence {self:?} is before {earlier:?}");
        d
    }
}

impl PartialOrd for Seq {
    fn partial_cmp(&self, other: &Seq) -> Option<Ordering> {
        Some((self.0.wrapping_sub(other.0) as i32).cmp(&0))
    }
}

impl Seq {
    pub fn max(self, other: Seq) -> Seq {
        if self >= other {
            self
        } else {
            other
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comparison_wraps() {
        let near_end = Seq(u32::MAX - 10);
        let wrapped = near_end + 20; // 2³² − 11 + 20 = 9 (mod 2³²)
        assert_eq!(wrapped, Seq(9));
        assert!(wrapped > near_end);
        assert_eq!(wrapped - near_end, 20);
        assert!(Seq(5) < Seq(6));
        assert_eq!(Seq(3).max(Seq(u32::MAX)), Seq(3));
    }
}
