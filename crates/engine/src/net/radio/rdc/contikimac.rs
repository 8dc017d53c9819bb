//! ContikiMAC's duty cycling (`network.rdc = "contikimac"`, Contiki 2.6
//! `core/net/mac/contikimac.c` and `core/net/mac/phase.c`; docs/networks.md): every node
//! wakes up once per period, at its own phase, to check the channel; a sender strobes copies
//! of its frame until the receiver's wake-up, and with the phase optimisation it learns the
//! receivers' phases from their acknowledgements and starts strobing just before their next
//! wake-up.
//!
//! Sans-IO: the mesh asks it where a strobe's copies fall ([`ContikiMacRdc::strobe`]), how
//! long a channel access waits for a known phase ([`ContikiMacRdc::defer`]), and tells it of
//! acknowledgements ([`ContikiMacRdc::update`]).

use coaplab_cc::{Duration, Instant};

/// Contiki's real-time clock on the TelosB (Sky): `RTIMER_ARCH_SECOND` = 4096 × 8 = 32768
/// ticks a second (Contiki 2.6 `cpu/msp430/rtimer-arch.h`).
const RTIMER_ARCH_SECOND: u64 = 32_768;

/// `ticks` of Contiki's real-time clock (rounded down to the nanosecond).
const fn rtimer_ticks(ticks: u64) -> Duration {
    Duration::from_nanos(ticks * 1_000_000_000 / RTIMER_ARCH_SECOND)
}

/// ContikiMAC's `GUARD_TIME` (Contiki 2.6 `core/net/mac/contikimac.c`): how long before a
/// phase-locked neighbour's expected wake-up the sender starts strobing. `GUARD_TIME = 10 ×
/// CHECK_TIME + CHECK_TIME_TX`, `CHECK_TIME = CCA_COUNT_MAX (2) × (CCA_CHECK_TIME +
/// CCA_SLEEP_TIME)`, `CHECK_TIME_TX = CCA_COUNT_MAX_TX (6) × (CCA_CHECK_TIME +
/// CCA_SLEEP_TIME)`, `CCA_CHECK_TIME = RTIMER_ARCH_SECOND / 8192` = 4 ticks,
/// `CCA_SLEEP_TIME = RTIMER_ARCH_SECOND / 2000` = 16 ticks: 10 × 40 + 120 = 520 ticks
/// = 15.869 ms.
pub const GUARD_TIME: Duration = rtimer_ticks(520);

/// ContikiMAC's `MAX_PHASE_STROBE_TIME` = `RTIMER_ARCH_SECOND / 60` = 546 ticks (16.663 ms):
/// towards a phase-locked neighbour no copy starts later than this after the strobe's start;
/// a strobe that has not been taken by then is a miss (no acknowledgement).
pub const MAX_PHASE_STROBE_TIME: Duration = rtimer_ticks(RTIMER_ARCH_SECOND / 60);

/// Contiki 2.6 `core/net/mac/phase.c`: `MAX_NOACKS` (16) unacknowledged transmissions, or
/// `MAX_NOACKS_TIME` (30 s) since the first of them, and the neighbour's phase is forgotten.
const MAX_NOACKS: u32 = 16;
const MAX_NOACKS_TIME: Duration = Duration::from_secs(30);

/// Contiki 2.6 `core/net/mac/contikimac.c`: `MAX_PHASE_NEIGHBORS` (30) phases per node; a new
/// one beyond them replaces the oldest (`list_chop` in `phase_update`).
const MAX_PHASE_NEIGHBORS: usize = 30;

/// What a node knows of one neighbour's wake-up phase (Contiki's `struct phase`).
#[derive(Clone, Copy, Debug)]
struct Phase {
    neighbor: u16,
    /// When a copy the neighbour acknowledged went on the air (`encounter_time`).
    time: Instant,
    noacks: u32,
    /// When the first of the current run of unacknowledged transmissions happened.
    first_noack: Instant,
}

/// How a frame reaches its duty-cycled receiver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strobe {
    /// The receiver is awake: the frame goes on the air once, now.
    Direct,
    /// `copies` copies for nobody, then at `at` the copy the receiver takes.
    Copies { copies: u64, at: Instant },
    /// Towards a phase-locked receiver whose wake-up falls beyond
    /// [`MAX_PHASE_STROBE_TIME`]: `copies` copies for nobody, the last ending at `end`, and no
    /// acknowledgement.
    Miss { copies: u64, end: Instant },
}

/// The ContikiMAC layer of a mesh: the period, and each node's knowledge of its neighbours'
/// phases.
#[derive(Clone, Debug)]
pub struct ContikiMacRdc {
    period: Duration,
    strobe_gap: Duration,
    phase_lock: bool,
    /// Phase optimisation: each node's neighbours' phases it learnt, newest first.
    phases: Vec<Vec<Phase>>,
}

impl ContikiMacRdc {
    /// `nodes` nodes waking up every `period`, `strobe_gap` between copies; `phase_lock`:
    /// Contiki's `WITH_PHASE_OPTIMIZATION`.
    pub fn new(period: Duration, strobe_gap: Duration, phase_lock: bool, nodes: usize) -> Self {
        ContikiMacRdc {
            period,
            strobe_gap,
            phase_lock,
            phases: vec![Vec::new(); nodes],
        }
    }

    /// The wake-up period.
    pub fn period(&self) -> Duration {
        self.period
    }

    /// What node `u` knows of `neighbor`'s phase.
    fn phase_of(&self, u: u16, neighbor: u16) -> Option<&Phase> {
        self.phases[u as usize]
            .iter()
            .find(|p| p.neighbor == neighbor)
    }

    /// Node `u` starts sending a frame of `airtime` to `to`, whose wake-up phase is
    /// `to_phase`, at `now`. Strobe: copies every airtime + gap until the receiver wakes up;
    /// it detects the strobe at its wake-up and receives the next whole copy.
    pub fn strobe(
        &self,
        now: Instant,
        u: u16,
        to: u16,
        to_phase: Duration,
        airtime: Duration,
    ) -> Strobe {
        let t = now.nanos();
        let wake = self.next_wake(now, to_phase).nanos();
        let step = (airtime + self.strobe_gap).nanos();
        let k = (wake - t).div_ceil(step);
        // Towards a phase-locked receiver no copy starts after MAX_PHASE_STROBE_TIME
        // (contikimac.c `send_packet`, `is_known_receiver`): a wake-up beyond it is a miss —
        // the copies that started before it, then no acknowledgement.
        let known = self.phase_lock && self.phase_of(u, to).is_some();
        if known && k * step >= MAX_PHASE_STROBE_TIME.nanos() {
            let sent = MAX_PHASE_STROBE_TIME.nanos().div_ceil(step);
            let end = Instant::from_nanos(t + (sent - 1) * step) + airtime;
            return Strobe::Miss { copies: sent, end };
        }
        if k > 0 {
            let at = Instant::from_nanos(t + k * step);
            return Strobe::Copies { copies: k, at };
        }
        Strobe::Direct
    }

    /// The first wake-up at or after `now` of a node whose phase is `phase`.
    pub fn next_wake(&self, now: Instant, phase: Duration) -> Instant {
        let (phase, p, t) = (phase.nanos(), self.period.nanos(), now.nanos());
        Instant::from_nanos(if t <= phase {
            phase
        } else {
            phase + (t - phase).div_ceil(p) * p
        })
    }

    /// Contiki 2.6 `phase.c` `phase_wait`: how long node `u` waits at `now` before its channel
    /// access towards `neighbor` so that its strobe starts [`GUARD_TIME`] before the
    /// neighbour's next expected wake-up. With the recorded encounter `e` and the cycle `P`,
    /// `wait = (e − now) mod P`, plus `P` if below the guard time; the node waits
    /// `wait − GUARD_TIME`. Zero without phase optimisation or a known phase.
    pub fn defer(&self, now: Instant, u: u16, neighbor: u16) -> Duration {
        if !self.phase_lock {
            return Duration::ZERO;
        }
        let Some(e) = self.phase_of(u, neighbor) else {
            return Duration::ZERO;
        };
        let p = self.period.nanos();
        let (sync, t) = (e.time.nanos(), now.nanos());
        // (sync − now) mod P, in [0, P) (sync is in the past)
        let mut wait = (p - (t - sync) % p) % p;
        if wait < GUARD_TIME.nanos() {
            wait += p;
        }
        Duration::from_nanos(wait - GUARD_TIME.nanos())
    }

    /// Contiki 2.6 `phase.c` `phase_update`: node `u`'s transmission to `neighbor` was
    /// acknowledged (`Some(encounter)`: when the acknowledged copy went on the air) or not
    /// (`None`). An acknowledgement records (or renews) the phase and clears the
    /// unacknowledged count; [`MAX_NOACKS`] unacknowledged transmissions in a row, or
    /// [`MAX_NOACKS_TIME`] since the first of them, forget it.
    pub fn update(&mut self, now: Instant, u: u16, neighbor: u16, encounter: Option<Instant>) {
        if !self.phase_lock {
            return;
        }
        let phases = &mut self.phases[u as usize];
        let i = phases.iter().position(|p| p.neighbor == neighbor);
        match (i, encounter) {
            (Some(i), Some(time)) => {
                phases[i].time = time;
                phases[i].noacks = 0;
            }
            (Some(i), None) => {
                let e = &mut phases[i];
                e.noacks += 1;
                if e.noacks == 1 {
                    e.first_noack = now;
                }
                if e.noacks >= MAX_NOACKS || now >= e.first_noack + MAX_NOACKS_TIME {
                    phases.remove(i);
                }
            }
            (None, Some(time)) => {
                if phases.len() >= MAX_PHASE_NEIGHBORS {
                    phases.pop();
                }
                phases.insert(
                    0,
                    Phase {
                        neighbor,
                        time,
                        noacks: 0,
                        first_noack: Instant::ZERO,
                    },
                );
            }
            (None, None) => {}
        }
    }
}
