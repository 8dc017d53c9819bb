//! Router ↔ server path delay (docs/design.md §2): uniform in `[min, max]` per packet, FIFO preserved —
//! a packet is never delivered before an earlier packet of the same direction, so its delivery
//! is `max(now + delay, previous delivery)`.

use coaplab_cc::rng::Rng;
use coaplab_cc::{Duration, Instant};

pub struct PathDelay {
    min: Duration,
    max: Duration,
    last_delivery: Instant,
}

impl PathDelay {
    pub fn new(min: Duration, max: Duration) -> Self {
        PathDelay {
            min,
            max,
            last_delivery: Instant::ZERO,
        }
    }

    /// When a packet entering the path at `now` comes out.
    pub fn on_packet(&mut self, now: Instant, rng: &mut dyn Rng) -> Instant {
        let at = (now + rng.uniform(self.min, self.max)).max(self.last_delivery);
        self.last_delivery = at;
        at
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use coaplab_cc::rng::Xoshiro256pp;

    #[test]
    fn delays_in_range_and_fifo_kept() {
        let mut p = PathDelay::new(Duration::from_millis(10), Duration::from_millis(20));
        let mut rng = Xoshiro256pp::seed_from_u64(5);
        let mut last = Instant::ZERO;
        let mut overtakes_avoided = 0;
        for i in 0..10_000u64 {
            // Packets 1 ms apart: a 20 ms draw followed by a 10 ms draw would overtake.
            let now = Instant::from_millis(i);
            let at = p.on_packet(now, &mut rng);
            assert!(at >= last, "FIFO violated");
            assert!(
                at >= now + Duration::from_millis(10) && at <= now + Duration::from_millis(20)
                    || at == last
            );
            if at == last {
                overtakes_avoided += 1;
            }
            last = at;
        }
        assert!(
            overtakes_avoided > 0,
            "the test should exercise the FIFO rule"
        );
    }
}
