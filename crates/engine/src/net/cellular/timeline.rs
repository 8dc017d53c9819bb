//! One device's radio states over time (docs/networks.md "State timeline"): what the
//! state-timeline figure draws. With tracing on (`trace = true`, `coaplab run --trace DIR`) the
//! cell records device 0's (client 0's) transmit and receive spans — each booked preamble,
//! DCI, NPDSCH / PDSCH, NPUSCH / PUSCH, HARQ-ACK, scheduling request and the random-access
//! response window — and its RRC / PSM mode at every change. Everything else is connected idle
//! (connected), idle DRX (idle) or PSM. Idle-mode paging occasions and connected-mode DRX
//! wake-ups are counted in the state times (`power.rs`) from the interval's length and are
//! not drawn. Memory is bounded: at most [`TIMELINE_CAP`] entries; later ones are dropped and
//! `truncated_at_s` says from when.

use coaplab_cc::Instant;

use crate::metrics::CellTimeline;

/// Most spans and mode changes one timeline keeps: 100 000 × 24 bytes = 2.4 MB (a day of
/// one report an hour at level 0 needs about 24 × 30 = 720).
pub const TIMELINE_CAP: usize = 100_000;

/// What a device's radio does in a span.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Activity {
    Tx,
    Rx,
}

/// The recorded timeline of one device.
#[derive(Clone, Debug)]
pub struct Timeline {
    pub device: u32,
    /// `[start, end)` subframes (ms) and what the radio does.
    spans: Vec<(u64, u64, Activity)>,
    /// The RRC / PSM mode (`power::Mode::name`) from each time on.
    modes: Vec<(Instant, &'static str)>,
    /// The first entry dropped for the cap, at this time.
    truncated_at: Option<Instant>,
}

impl Timeline {
    /// A device idle from time zero.
    pub fn new(device: u32) -> Timeline {
        Timeline {
            device,
            spans: Vec::new(),
            modes: vec![(Instant::ZERO, "idle")],
            truncated_at: None,
        }
    }

    fn room(&mut self, t: Instant) -> bool {
        if self.spans.len() + self.modes.len() < TIMELINE_CAP {
            return true;
        }
        self.truncated_at = Some(self.truncated_at.map_or(t, |x| x.min(t)));
        false
    }

    /// The device transmits or receives in subframes `[start, end)`.
    pub fn span(&mut self, start: u64, end: u64, what: Activity) {
        if end > start && self.room(Instant::from_millis(start)) {
            self.spans.push((start, end, what));
        }
    }

    /// The device is in `mode` from `t` on (nothing when it already was).
    pub fn mode(&mut self, t: Instant, mode: &'static str) {
        if self.modes.last().is_some_and(|&(_, m)| m == mode) {
            return;
        }
        if self.room(t) {
            self.modes.push((t, mode));
        }
    }

    /// The run's result: spans sorted by start; `last` is the mode the device is in at the
    /// end (`until`) with the time it began, when it changed after the last recorded change
    /// (idle became PSM without an event).
    pub fn result(&self, last: (Instant, &'static str), until: Instant) -> CellTimeline {
        let mut t = self.clone();
        t.mode(last.0, last.1);
        let mut spans = t.spans;
        spans.sort_unstable_by_key(|&(s, e, _)| (s, e));
        let secs = |sf: u64| sf as f64 / 1000.0;
        CellTimeline {
            device: t.device,
            end_s: until.secs_f64(),
            modes: t.modes.iter().map(|&(at, m)| (at.secs_f64(), m)).collect(),
            spans: spans
                .iter()
                .map(|&(s, e, a)| {
                    let name = match a {
                        Activity::Tx => "tx",
                        Activity::Rx => "rx",
                    };
                    (secs(s), secs(e), name)
                })
                .collect(),
            truncated_at_s: t.truncated_at.map(|x| x.secs_f64()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::energy::RadioState;
    use crate::net::cellular::tests::{params, run, Q};
    use crate::net::cellular::Cell;
    use coaplab_cc::rng::Xoshiro256pp;

    /// The lone level-0 device of docs/networks.md "One exchange from idle, subframe by
    /// subframe" (100 bytes up at 0, 60 bytes down at 269 ms, data over NAS, no block errors),
    /// its timeline against that hand table: preamble 8–21; the RAR window 25–32 with the DCI
    /// (26) and the RAR (31) in it; Msg3 44; Msg4 DCI 48, NPDSCH 53–55, HARQ-ACK 67–71; Msg5
    /// DCI 74, NPUSCH 83–89; the response's DCI 271, NPDSCH 276–280, HARQ-ACK 292–296. The
    /// inactivity timer (20 s from 299) releases it at 20 299 ms: RRCConnectionRelease's DCI
    /// 20 299 (subframe 9 of odd frame 2029: usable), NPDSCH from 20 300 + 4 = 20 304, 2
    /// subframes with 20 304 (subframe 4 of even frame 2030: SIB1-NB) and 20 305 (NPSS)
    /// skipped: 20 306–20 307 (ends 20 308), HARQ-ACK from 20 308 + 12 = 20 320, 2 ms × 2:
    /// 20 320–20 324, + 3 = 20 327: idle from 20.327 s. Modes: idle at 0, connected from 0 (the
    /// job starts at once), idle from 20.327 s. The tx spans add up to
    /// the state times' transmit time, 13 + 1 + 4 + 6 + 4 + 4 = 32 ms.
    #[test]
    fn a_lone_device_s_timeline_is_the_hand_timeline() {
        let mut cell = Cell::new(params(vec![0]), 0, Xoshiro256pp::seed_from_u64(1));
        cell.record_timeline(0);
        let mut q = Q::default();
        let mut exits = Vec::new();
        cell.enter(Instant::ZERO, 7, 100, Some(0), None, &mut q);
        run(&mut cell, &mut q, Instant::from_millis(269), &mut exits);
        cell.enter(Instant::from_millis(269), 8, 60, None, Some(0), &mut q);
        run(&mut cell, &mut q, Instant::from_secs(100), &mut exits);
        let end = Instant::from_secs(30);
        let t = cell.timeline(end).expect("recorded");
        let s = |a: f64, b: f64, w: &'static str| (a / 1000.0, b / 1000.0, w);
        assert_eq!(
            t.spans,
            vec![
                s(8.0, 21.0, "tx"),
                s(25.0, 32.0, "rx"),
                s(26.0, 27.0, "rx"),
                s(31.0, 32.0, "rx"),
                s(44.0, 45.0, "tx"),
                s(48.0, 49.0, "rx"),
                s(53.0, 55.0, "rx"),
                s(67.0, 71.0, "tx"),
                s(74.0, 75.0, "rx"),
                s(83.0, 89.0, "tx"),
                s(271.0, 272.0, "rx"),
                s(276.0, 280.0, "rx"),
                s(292.0, 296.0, "tx"),
                s(20299.0, 20300.0, "rx"),
                s(20306.0, 20308.0, "rx"),
                s(20320.0, 20324.0, "tx"),
            ]
        );
        assert_eq!(
            t.modes,
            vec![(0.0, "idle"), (0.0, "connected"), (20.327, "idle")]
        );
        assert_eq!((t.device, t.end_s, t.truncated_at_s), (0, 30.0, None));
        let tx: f64 = t
            .spans
            .iter()
            .filter(|x| x.2 == "tx")
            .map(|x| x.1 - x.0)
            .sum();
        let times = cell.state_times(end);
        assert!((tx - times[0].get(RadioState::Transmit).secs_f64()).abs() < 1e-9);
        assert!((tx - 0.032).abs() < 1e-9);
    }

    /// A cell without the device records nothing.
    #[test]
    fn no_timeline_for_a_device_the_cell_lacks() {
        let mut cell = Cell::new(params(vec![0]), 0, Xoshiro256pp::seed_from_u64(1));
        cell.record_timeline(3);
        assert!(cell.timeline(Instant::from_secs(1)).is_none());
    }

    /// The cap: with TIMELINE_CAP − 1 spans and the initial mode the timeline is full; the
    /// next span (at 5 s) is dropped and marks the truncation at 5 s; a repeated mode is not
    /// an entry.
    #[test]
    fn the_cap_drops_later_entries_and_says_when() {
        let mut t = Timeline::new(0);
        t.mode(Instant::from_secs(1), "idle");
        for i in 0..(TIMELINE_CAP as u64 - 1) {
            t.span(i, i + 1, Activity::Tx);
        }
        t.span(5000, 5001, Activity::Rx);
        t.mode(Instant::from_secs(6), "connected");
        let r = t.result((Instant::from_secs(6), "connected"), Instant::from_secs(7));
        assert_eq!(r.spans.len(), TIMELINE_CAP - 1);
        assert_eq!(r.modes, vec![(0.0, "idle")]);
        assert_eq!(r.truncated_at_s, Some(5.0));
    }
}
