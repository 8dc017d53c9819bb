//! Each mesh node's radio time per state (docs/energy.md, "Meshes"): transmitting, listening
//! or receiving, and off. Recorded where the radio switches — a node going on and off the air,
//! a strobe, a duty-cycled reception, an acknowledgement awaited — never per sub-frame or per
//! channel check: the periodic channel checks of duty cycling are counted from the node's
//! wake-up phase when the times are read. It only observes: nothing it records feeds back into
//! the mesh.
//!
//! - Transmitting: every frame and acknowledgement on the air (the medium's own air times,
//!   `phy::airtime`); a ContikiMAC strobe transmits its copies, and listens in the gaps
//!   between them for an acknowledgement.
//! - NullRDC: the radio is always on, so every moment not transmitting is listening.
//! - ContikiMAC (Contiki 2.6 `core/net/mac/contikimac.c`): the radio is on for the channel
//!   checks of each wake-up ([`CHECK_ON_TIME`]), from a receiver's wake-up through the copy it
//!   takes, for the gaps of its own strobes, and while awaiting an acknowledgement
//!   (turnaround + acknowledgement); off otherwise (state `Psm`).

use coaplab_cc::{Duration, Instant};

use crate::energy::{RadioState, StateTimes};

/// ContikiMAC's radio-on time per wake-up when the channel is clear: `CCA_COUNT_MAX` (2)
/// clear channel assessments of `CCA_CHECK_TIME` (`RTIMER_ARCH_SECOND / 8192` = 4 ticks of
/// the 32 768 Hz clock) each, the radio off in the `CCA_SLEEP_TIME` between them (Contiki 2.6
/// `core/net/mac/contikimac.c` `powercycle`): 8 ticks = 8 × 10⁹ / 32 768 ns = 244 140 ns.
pub const CHECK_ON_TIME: Duration = Duration::from_nanos(8 * 1_000_000_000 / 32_768);

/// Duty cycling as the recorder needs it when the times are read: the wake-up period and each
/// node's phase (the mesh's own, never a copy).
#[derive(Clone, Copy, Debug)]
pub struct DutyCycle<'a> {
    pub period: Duration,
    pub phases: &'a [Duration],
}

/// The mesh nodes' radio time per state.
#[derive(Clone, Debug)]
pub struct OnTime {
    /// Per node: ns on the air (strobes whole, their gaps included).
    air: Vec<u64>,
    /// Per node: ns of strobe gaps inside `air` (listening, not transmitting).
    gaps: Vec<u64>,
    /// Per node: ns listening besides the channel checks (duty cycling only).
    listen: Vec<u64>,
    /// Per node: since when it is on the air.
    since: Vec<Option<Instant>>,
    /// `false`: NullRDC, the radio always on.
    duty_cycled: bool,
}

impl OnTime {
    /// `nodes` nodes, duty cycled or always on.
    pub fn new(nodes: usize, duty_cycled: bool) -> Self {
        OnTime {
            air: vec![0; nodes],
            gaps: vec![0; nodes],
            listen: vec![0; nodes],
            since: vec![None; nodes],
            duty_cycled,
        }
    }

    /// Node `u` goes on the air at `now` (a strobe's later copies keep it there).
    pub fn air_on(&mut self, u: u16, now: Instant) {
        self.since[u as usize].get_or_insert(now);
    }

    /// Node `u` leaves the air at `now`.
    pub fn air_off(&mut self, u: u16, now: Instant) {
        if let Some(t) = self.since[u as usize].take() {
            self.air[u as usize] += (now - t).nanos();
        }
    }

    /// Node `u`'s strobe has `gaps` between its copies: listening, not transmitting.
    pub fn strobe_gaps(&mut self, u: u16, gaps: Duration) {
        self.gaps[u as usize] += gaps.nanos();
    }

    /// Duty cycling: node `u` listens for `d` besides its channel checks (a reception from its
    /// wake-up on, an acknowledgement awaited). Nothing to record with the radio always on.
    pub fn listen(&mut self, u: u16, d: Duration) {
        if self.duty_cycled {
            self.listen[u as usize] += d.nanos();
        }
    }

    /// Each node's time per state from 0 to `until`: transmitting, listening (`Receive`) and
    /// off (`Psm`), summing to `until`; `duty` gives the wake-ups of duty-cycled radios (`None`:
    /// always on).
    pub fn state_times(&self, until: Instant, duty: Option<DutyCycle<'_>>) -> Vec<StateTimes> {
        let total = until.nanos();
        (0..self.air.len())
            .map(|u| {
                let open = self.since[u].map_or(0, |t| until.nanos().saturating_sub(t.nanos()));
                let air = (self.air[u] + open).min(total);
                let gaps = self.gaps[u].min(air);
                let tx = air - gaps;
                let on = match &duty {
                    None => total,
                    Some(d) => {
                        let checks = wake_ups(d.phases[u], d.period, until);
                        (air + self.listen[u] + checks * CHECK_ON_TIME.nanos()).min(total)
                    }
                };
                let mut t = StateTimes::default();
                t.add(RadioState::Transmit, Duration::from_nanos(tx));
                t.add(RadioState::Receive, Duration::from_nanos(on - tx));
                t.add(RadioState::Psm, Duration::from_nanos(total - on));
                t
            })
            .collect()
    }
}

/// Wake-ups at `phase + k·period` (k ≥ 0) before `until`.
fn wake_ups(phase: Duration, period: Duration, until: Instant) -> u64 {
    let (p, t) = (phase.nanos(), until.nanos());
    if t <= p || period.nanos() == 0 {
        return 0;
    }
    (t - p - 1) / period.nanos() + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn the_check_is_eight_ticks_of_the_32768_hz_clock() {
        // 8 / 32768 s = 244.140625 µs, rounded down to the nanosecond.
        assert_eq!(CHECK_ON_TIME.nanos(), 244_140);
    }

    /// Always on: 10 s, on the air 2 ms + 3 ms: tx 5 ms, rx 9.995 s, off 0.
    #[test]
    fn always_on_listens_whenever_it_does_not_transmit() {
        let mut o = OnTime::new(2, false);
        o.air_on(1, Instant::from_nanos(MS));
        o.air_off(1, Instant::from_nanos(3 * MS));
        o.air_on(1, Instant::from_nanos(100 * MS));
        o.air_off(1, Instant::from_nanos(103 * MS));
        o.listen(1, Duration::from_secs(1)); // nothing: the radio is on anyway
        let t = o.state_times(Instant::from_nanos(10_000 * MS), None);
        assert_eq!(t[1].get(RadioState::Transmit).nanos(), 5 * MS);
        assert_eq!(t[1].get(RadioState::Receive).nanos(), 9_995 * MS);
        assert_eq!(t[1].get(RadioState::Psm), Duration::ZERO);
        assert_eq!(t[0].get(RadioState::Receive).nanos(), 10_000 * MS);
    }

    /// Duty cycled, period 125 ms, phase 25 ms, 1 s: wake-ups at 25, 150, ..., 900 ms = 8;
    /// checks 8 × 244 140 ns = 1 953 120 ns. A strobe on the air from 200 ms to 260 ms with
    /// 5 ms of gaps: tx 55 ms, listening 5 ms. An acknowledgement awaited: 0.544 ms
    /// (192 µs turnaround + 352 µs ACK). rx = 1 953 120 + 5 000 000 + 544 000 = 7 497 120 ns;
    /// off = 1 000 000 000 − 55 000 000 − 7 497 120 = 937 502 880 ns.
    #[test]
    fn duty_cycled_counts_checks_strobes_and_listening() {
        let phases = [Duration::from_millis(25)];
        let duty = DutyCycle {
            period: Duration::from_millis(125),
            phases: &phases,
        };
        let mut o = OnTime::new(1, true);
        o.air_on(0, Instant::from_nanos(200 * MS));
        o.air_on(0, Instant::from_nanos(250 * MS)); // the copy the receiver takes
        o.air_off(0, Instant::from_nanos(260 * MS));
        o.strobe_gaps(0, Duration::from_millis(5));
        o.listen(0, Duration::from_micros(544));
        let t = o.state_times(Instant::from_nanos(1000 * MS), Some(duty));
        assert_eq!(t[0].get(RadioState::Transmit).nanos(), 55 * MS);
        assert_eq!(t[0].get(RadioState::Receive).nanos(), 7_497_120);
        assert_eq!(t[0].get(RadioState::Psm).nanos(), 937_502_880);
        assert_eq!(t[0].total().nanos(), 1000 * MS);
    }

    #[test]
    fn wake_ups_before_the_end() {
        let p = Duration::from_millis(125);
        // Phase 0: 0, 125, 250 ms before 300 ms = 3; none before the phase itself.
        assert_eq!(
            wake_ups(Duration::ZERO, p, Instant::from_nanos(300 * MS)),
            3
        );
        assert_eq!(
            wake_ups(Duration::from_millis(10), p, Instant::from_nanos(10 * MS)),
            0
        );
        // Exactly at 250 ms: 0 and 125 only (the one at 250 is not before it).
        assert_eq!(
            wake_ups(Duration::ZERO, p, Instant::from_nanos(250 * MS)),
            2
        );
    }
}
