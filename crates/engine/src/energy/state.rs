//! The radio states a device's time is spent in, and the time per state one device accumulates.
//! A network model adds time as its devices change state; the energy summary turns the times
//! into joules with a per-state power model.

use coaplab_cc::Duration;

/// A radio state with its own power draw. The cellular models use all five; a mesh radio
/// (always on, or duty-cycled) uses `Transmit`, `Receive` (listening included) and `Psm`
/// (radio off).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RadioState {
    /// Transmitting (at the device's transmit power).
    Transmit,
    /// Receiving or listening for a transmission.
    Receive,
    /// Connected but neither sending nor receiving: between grants, or asleep between the
    /// wake-ups of connected-mode DRX.
    ConnectedIdle,
    /// Idle mode, asleep between paging occasions (DRX or eDRX).
    IdleDrx,
    /// Power saving mode (cellular) or radio off (mesh): unreachable.
    Psm,
}

impl RadioState {
    /// Every state, in the order of [`StateTimes`]'s fields and of the summary's
    /// `energy.state_time_s`.
    pub const ALL: [RadioState; 5] = [
        RadioState::Transmit,
        RadioState::Receive,
        RadioState::ConnectedIdle,
        RadioState::IdleDrx,
        RadioState::Psm,
    ];

    /// The state's name in summaries (`energy.state_time_s.<name>`).
    pub const fn name(self) -> &'static str {
        match self {
            RadioState::Transmit => "tx",
            RadioState::Receive => "rx",
            RadioState::ConnectedIdle => "connected_idle",
            RadioState::IdleDrx => "idle_drx",
            RadioState::Psm => "psm",
        }
    }

    const fn index(self) -> usize {
        self as usize
    }
}

/// One device's time per radio state.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StateTimes([u64; 5]);

impl StateTimes {
    /// Adds `d` to the time in `state`.
    pub fn add(&mut self, state: RadioState, d: Duration) {
        self.0[state.index()] += d.nanos();
    }

    /// The time in `state`.
    pub fn get(&self, state: RadioState) -> Duration {
        Duration::from_nanos(self.0[state.index()])
    }

    /// The time in all states together.
    pub fn total(&self) -> Duration {
        Duration::from_nanos(self.0.iter().sum())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 1.5 s transmitting + 0.5 s more, 20 s in PSM: 2 s + 20 s = 22 s in all.
    #[test]
    fn times_add_per_state() {
        let mut t = StateTimes::default();
        t.add(RadioState::Transmit, Duration::from_millis(1500));
        t.add(RadioState::Transmit, Duration::from_millis(500));
        t.add(RadioState::Psm, Duration::from_secs(20));
        assert_eq!(t.get(RadioState::Transmit), Duration::from_secs(2));
        assert_eq!(t.get(RadioState::Receive), Duration::ZERO);
        assert_eq!(t.total(), Duration::from_secs(22));
    }
}
