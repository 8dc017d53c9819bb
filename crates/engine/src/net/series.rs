//! Time series of one link direction, recorded only with `trace = true` (docs/model.md "Time
//! series"): the bytes waiting in its buffer at every change, and the bytes it delivered per
//! bin of [`THROUGHPUT_BIN`]. Both are bounded so that a long traced run stays small: after
//! [`QUEUE_POINTS_CAP`] occupancy changes or [`THROUGHPUT_BINS_CAP`] bins the recording stops
//! and says from when (`truncated_at`). Sans-IO: the link calls it with `now`.

use coaplab_cc::{Duration, Instant};

/// Width of a throughput bin: 100 ms, fine enough to show a 2–4 s RTT's dynamics on the
/// CoCoA study's links, coarse enough that an hour is 36 000 numbers.
pub const THROUGHPUT_BIN: Duration = Duration::from_millis(100);
/// At most this many throughput bins per link direction (one hour of 100 ms bins).
pub const THROUGHPUT_BINS_CAP: usize = 36_000;
/// At most this many occupancy change-points per link direction (a few hundred kB of JSON).
pub const QUEUE_POINTS_CAP: usize = 20_000;

#[derive(Clone, Debug, Default)]
pub struct LinkSeries {
    /// `(when, bytes waiting in the buffer)` after each change (the packet being serialized is
    /// not in the buffer). Several changes at one instant keep the last value.
    pub queue: Vec<(Instant, u64)>,
    /// IP bytes that finished serializing and were not lost, in bin `i` = `[i, i+1)` ×
    /// [`THROUGHPUT_BIN`], counted when their serialization ended.
    pub delivered: Vec<u64>,
    /// The first time a cap was reached: nothing recorded after it is complete.
    pub truncated_at: Option<Instant>,
}

impl LinkSeries {
    /// The buffer holds `bytes` from `now` on.
    pub fn on_queue(&mut self, now: Instant, bytes: u64) {
        if let Some(last) = self.queue.last_mut() {
            if last.0 == now {
                last.1 = bytes;
                return;
            }
            if last.1 == bytes {
                return;
            }
        }
        if self.queue.len() >= QUEUE_POINTS_CAP {
            self.truncated_at.get_or_insert(now);
            return;
        }
        self.queue.push((now, bytes));
    }

    /// `bytes` were delivered by the link at `now`.
    pub fn on_delivered(&mut self, now: Instant, bytes: u32) {
        let bin = (now.nanos() / THROUGHPUT_BIN.nanos()) as usize;
        if bin >= THROUGHPUT_BINS_CAP {
            self.truncated_at.get_or_insert(now);
            return;
        }
        if self.delivered.len() <= bin {
            self.delivered.resize(bin + 1, 0);
        }
        self.delivered[bin] += u64::from(bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_bound_the_series_and_say_from_when() {
        let mut s = LinkSeries::default();
        // Alternating 0 / 100 B at 1 ns steps: every point is a change.
        for i in 0..(QUEUE_POINTS_CAP as u64 + 10) {
            s.on_queue(Instant::from_nanos(i + 1), (i % 2) * 100);
        }
        assert_eq!(s.queue.len(), QUEUE_POINTS_CAP);
        assert_eq!(
            s.truncated_at,
            Some(Instant::from_nanos(QUEUE_POINTS_CAP as u64 + 1))
        );
        let mut s = LinkSeries::default();
        // The last bin is [3599.9, 3600) s; 3600 s is past the cap.
        s.on_delivered(Instant::from_millis(3_599_950), 10);
        s.on_delivered(Instant::from_secs(3_600), 10);
        assert_eq!(s.delivered.len(), THROUGHPUT_BINS_CAP);
        assert_eq!(s.truncated_at, Some(Instant::from_secs(3_600)));
    }

    #[test]
    fn changes_at_one_instant_keep_the_last_and_repeats_are_dropped() {
        let mut s = LinkSeries::default();
        let t = Instant::from_millis(5);
        s.on_queue(t, 100);
        s.on_queue(t, 40);
        s.on_queue(Instant::from_millis(6), 40);
        assert_eq!(s.queue, vec![(t, 40)]);
    }
}
