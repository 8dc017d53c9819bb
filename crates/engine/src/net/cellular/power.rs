//! A device's time per radio state (`crate::energy`): the cell switches a device between
//! connected, idle and PSM and adds the subframes it transmits and receives; the receive time
//! of idle-mode paging occasions and connected-mode DRX wake-ups is counted from the length
//! of the interval, never by an event per occasion.

use coaplab_cc::{Duration, Instant};

use super::procedures::Radio;
use crate::energy::{RadioState, StateTimes};

/// The device's RRC / NAS state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Connected,
    Idle,
    Psm,
}

impl Mode {
    /// The mode's name in a timeline (`timeline.rs`): `connected`, `idle`, `psm`.
    pub const fn name(self) -> &'static str {
        match self {
            Mode::Connected => "connected",
            Mode::Idle => "idle",
            Mode::Psm => "psm",
        }
    }
}

/// What idle time costs and when idle becomes PSM.
#[derive(Clone, Copy, Debug)]
pub struct IdleRx {
    /// A paging occasion every this many ms.
    pub cycle_ms: u64,
    /// PSM after this long in idle mode (T3324), if the device uses PSM.
    pub t3324: Option<Duration>,
}

/// One device's state and accumulated times.
#[derive(Clone, Copy, Debug)]
pub struct Account {
    pub mode: Mode,
    since: Instant,
    /// Time in connected, idle and PSM modes, ns.
    base: [u64; 3],
    tx_ms: u64,
    rx_connected_ms: u64,
    rx_idle_ms: u64,
    /// Subframes a paging occasion or a DRX wake-up monitors (the level's Rmax).
    po_sf: u64,
}

/// Paging occasions `k·cycle + offset` in `[a, b)` ms, with `offset = 9`.
fn occasions(a: u64, b: u64, cycle: u64) -> u64 {
    let below = |x: u64| if x <= 9 { 0 } else { (x - 9 - 1) / cycle + 1 };
    if cycle == 0 || b <= a {
        0
    } else {
        below(b) - below(a)
    }
}

impl Account {
    /// A device idle from `start`, monitoring `po_sf` subframes per occasion.
    pub fn new(start: Instant, po_sf: u64) -> Account {
        Account {
            mode: Mode::Idle,
            since: start,
            base: [0; 3],
            tx_ms: 0,
            rx_connected_ms: 0,
            rx_idle_ms: 0,
            po_sf,
        }
    }

    /// When the current mode began.
    pub fn since(&self) -> Instant {
        self.since
    }

    /// Moves to `to` at `t` (not before the current mode began).
    pub fn switch(&mut self, t: Instant, to: Mode, idle: &IdleRx) {
        let t = t.max(self.since);
        self.base[self.mode as usize] += t.saturating_since(self.since).nanos();
        if self.mode == Mode::Idle {
            let ms = |i: Instant| i.nanos() / 1_000_000;
            self.rx_idle_ms += occasions(ms(self.since), ms(t), idle.cycle_ms) * self.po_sf;
        }
        self.mode = to;
        self.since = t;
    }

    /// Idle becomes PSM once T3324 ran out (by `now`).
    pub fn settle(&mut self, now: Instant, idle: &IdleRx) {
        if let (Mode::Idle, Some(t3324)) = (self.mode, idle.t3324) {
            let psm_at = self.since + t3324;
            if now >= psm_at {
                self.switch(psm_at, Mode::Psm, idle);
            }
        }
    }

    /// Connected-mode DRX sleep from subframe `from` to `to`: a wake-up every `cycle` ms
    /// monitoring `on_sf` subframes.
    pub fn cdrx_sleep(&mut self, from: u64, to: u64, cycle: u64, on_sf: u64) {
        if cycle > 0 && to > from {
            self.rx_connected_ms += (to - from) / cycle * on_sf;
        }
    }

    /// Transmit and receive subframes of a connected device.
    pub fn add(&mut self, r: Radio) {
        self.tx_ms += r.tx;
        self.rx_connected_ms += r.rx;
    }

    /// The times per state from the start to `until`.
    pub fn times(&self, until: Instant, idle: &IdleRx) -> StateTimes {
        let mut a = *self;
        a.settle(until, idle);
        a.switch(until, a.mode, idle);
        let ms = |x: u64| Duration::from_millis(x);
        let ns = Duration::from_nanos;
        let mut out = StateTimes::default();
        out.add(RadioState::Transmit, ms(a.tx_ms));
        out.add(RadioState::Receive, ms(a.rx_connected_ms + a.rx_idle_ms));
        let busy = ms(a.tx_ms + a.rx_connected_ms);
        out.add(
            RadioState::ConnectedIdle,
            ns(a.base[0]).saturating_sub(busy),
        );
        out.add(
            RadioState::IdleDrx,
            ns(a.base[1]).saturating_sub(ms(a.rx_idle_ms)),
        );
        out.add(RadioState::Psm, ns(a.base[2]));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Idle 0–10 s with a 2.56 s cycle: occasions at 9, 2569, 5129, 7689 ms = 4, each 8
    /// subframes: 32 ms receiving, 9.968 s idle. Then connected 10–12 s with 5 ms tx and
    /// 20 ms rx: 2 s − 25 ms = 1.975 s connected idle. Then idle from 12 s with PSM after
    /// T3324 = 3 s: idle 12–15 s (one occasion, at 12809 ms; 15369 is past 15 s), PSM 15–20 s.
    /// Receive 20 + 32 + 8 = 60 ms; idle 13 s − 40 ms; the states add up to the 20 s.
    #[test]
    fn times_split_by_mode() {
        let idle = IdleRx {
            cycle_ms: 2560,
            t3324: Some(Duration::from_secs(3)),
        };
        let mut a = Account::new(Instant::ZERO, 8);
        a.switch(Instant::from_secs(10), Mode::Connected, &idle);
        a.add(Radio { tx: 5, rx: 20 });
        a.switch(Instant::from_secs(12), Mode::Idle, &idle);
        let t = a.times(Instant::from_secs(20), &idle);
        assert_eq!(t.get(RadioState::Transmit), Duration::from_millis(5));
        assert_eq!(
            t.get(RadioState::Receive),
            Duration::from_millis(32 + 20 + 8)
        );
        assert_eq!(
            t.get(RadioState::ConnectedIdle),
            Duration::from_millis(1975)
        );
        assert_eq!(
            t.get(RadioState::IdleDrx),
            Duration::from_millis(9968 + 2992)
        );
        assert_eq!(t.get(RadioState::Psm), Duration::from_secs(5));
        assert_eq!(t.total(), Duration::from_secs(20));
    }
}
