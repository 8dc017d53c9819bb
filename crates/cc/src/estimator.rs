//! RTT estimators shared by several algorithms (and, for [`LinuxRtt`], by the TCP model).

use crate::time::Duration;

/// RFC 6298 §2 smoothed RTT / RTT variance, **without** the 1 s minimum and without the
/// clock-granularity term (CoCoA and FASOR both drop them: draft-ietf-core-cocoa-03 §4.2,
/// draft-ietf-core-fasor-02 §3.1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Rfc6298 {
    /// `(SRTT, RTTVAR)` once the first sample arrived.
    state: Option<(Duration, Duration)>,
}

impl Rfc6298 {
    /// Feeds one sample `R`.
    ///
    /// First sample (RFC 6298 §2.2): `SRTT = R`, `RTTVAR = R / first_divisor` (2 in RFC 6298 and
    /// CoCoA; FASOR uses `2K` = 8, see [`crate::fasor`]).
    /// Later samples (§2.3, α = 1/8, β = 1/4, `RTTVAR` first, using the old `SRTT`):
    /// `RTTVAR = 3/4·RTTVAR + 1/4·|SRTT − R|`, `SRTT = 7/8·SRTT + 1/8·R`.
    pub fn on_sample(&mut self, rtt: Duration, first_divisor: u64) {
        self.state = Some(match self.state {
            None => (rtt, rtt.mul_ratio(1, first_divisor)),
            Some((srtt, rttvar)) => {
                let rttvar = rttvar.mul_ratio(3, 4) + srtt.abs_diff(rtt).mul_ratio(1, 4);
                let srtt = srtt.mul_ratio(7, 8) + rtt.mul_ratio(1, 8);
                (srtt, rttvar)
            }
        });
    }
    pub fn srtt(&self) -> Option<Duration> {
        self.state.map(|s| s.0)
    }
    pub fn rttvar(&self) -> Option<Duration> {
        self.state.map(|s| s.1)
    }
    /// `SRTT + K·RTTVAR`, if a sample was taken.
    pub fn estimate(&self, k: u64) -> Option<Duration> {
        self.state.map(|(srtt, rttvar)| srtt + rttvar.mul(k))
    }
}

/// Linux's RTO estimator (`tcp_rtt_estimator` + `tcp_set_rto`, net/ipv4/tcp_input.c), in
/// unscaled form as docs/design.md §3.1 `linux-rto` writes it. Used by `linux-rto` and by the TCP model.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinuxRtt {
    state: Option<LinuxState>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct LinuxState {
    srtt: Duration,
    mdev: Duration,
    mdev_max: Duration,
    rttvar: Duration,
}

/// Floor of `rttvar` / reset value of `mdev_max`: Linux's `TCP_RTO_MIN` (200 ms) applies to
/// the ×4-scaled variance, i.e. 50 ms unscaled (docs/design.md §3.1).
pub const LINUX_RTTVAR_MIN: Duration = Duration::from_millis(50);

impl LinuxRtt {
    /// Feeds one sample `R`. `end_of_flight` takes Linux's once-per-window step (in `linux-rto`
    /// every exchange is one flight, so it is always true after the first sample).
    pub fn on_sample(&mut self, rtt: Duration, end_of_flight: bool) {
        let Some(s) = self.state.as_mut() else {
            // First sample: SRTT = R, mdev = R/2, mdev_max = rttvar = max(R/2, 50 ms).
            let half = rtt.mul_ratio(1, 2);
            let var = half.max(LINUX_RTTVAR_MIN);
            self.state = Some(LinuxState {
                srtt: rtt,
                mdev: half,
                mdev_max: var,
                rttvar: var,
            });
            return;
        };
        // err = R − SRTT (old SRTT); SRTT += err/8.
        let below = rtt < s.srtt;
        let abs_err = rtt.abs_diff(s.srtt);
        s.srtt = s.srtt.mul_ratio(7, 8) + rtt.mul_ratio(1, 8);
        // A falling RTT that lies outside mdev moves mdev only by 1/32 (Linux's guard against
        // RTO collapse on a sudden drop); otherwise mdev = 3/4·mdev + 1/4·|err|.
        s.mdev = if below && abs_err > s.mdev {
            s.mdev.mul_ratio(31, 32) + abs_err.mul_ratio(1, 32)
        } else {
            s.mdev.mul_ratio(3, 4) + abs_err.mul_ratio(1, 4)
        };
        if s.mdev > s.mdev_max {
            s.mdev_max = s.mdev;
            s.rttvar = s.rttvar.max(s.mdev_max);
        }
        if end_of_flight {
            if s.mdev_max < s.rttvar {
                s.rttvar = s.rttvar - (s.rttvar - s.mdev_max).mul_ratio(1, 4);
            }
            s.mdev_max = LINUX_RTTVAR_MIN;
        }
    }
    /// `RTO = SRTT + 4·rttvar`, if a sample was taken.
    pub fn rto(&self) -> Option<Duration> {
        self.state.map(|s| s.srtt + s.rttvar.mul(4))
    }
    pub fn srtt(&self) -> Option<Duration> {
        self.state.map(|s| s.srtt)
    }
    pub fn rttvar(&self) -> Option<Duration> {
        self.state.map(|s| s.rttvar)
    }
    pub fn mdev(&self) -> Option<Duration> {
        self.state.map(|s| s.mdev)
    }
}

/// Peak-Hopper decay `D = 1 − 1/24`, as the ratio 23/24.
const PH_DECAY_NUM: u64 = 23;
const PH_DECAY_DEN: u64 = 24;
/// `B_max = 1`.
const PH_B_MAX: f64 = 1.0;
/// First sample: `RTO = 1.75·R`.
const PH_FIRST_NUM: u64 = 7;
const PH_FIRST_DEN: u64 = 4;
/// The `+100 ms` margin of the lower bounds.
const PH_MARGIN: Duration = Duration::from_millis(100);
/// Samples kept in the history.
const PH_HISTORY: usize = 2;

/// The Peak-Hopper RTO estimator (docs/design.md §3.1 `peakhopper-rto`; see `peakhopper_rto.rs` for
/// how docs/design.md differs from Californium).
#[derive(Clone, Debug, Default)]
pub struct PeakHopper {
    rto: Option<Duration>,
    /// Sensitivity `B`, starting at 0.
    b: f64,
    /// The last `PH_HISTORY` samples, newest included (as in Californium).
    history: [Option<Duration>; PH_HISTORY],
    next_slot: usize,
    prev: Option<Duration>,
}

impl PeakHopper {
    /// Feeds one strong sample `R`:
    /// first: `RTO = 1.75·R`; later, with `R_prev` the previous sample:
    /// `δ = |R − R_prev| / R`, `B = min(max(2δ, D·B), B_max)`, `RTT_max = max(R, R_prev)`,
    /// `RTO = max(D·RTO, (1+B)·RTT_max, RTT_max + 100 ms, max(history) + 100 ms)`.
    pub fn on_sample(&mut self, rtt: Duration) {
        self.history[self.next_slot] = Some(rtt);
        self.next_slot = (self.next_slot + 1) % PH_HISTORY;
        self.rto = Some(match (self.rto, self.prev) {
            (Some(rto), Some(prev)) => {
                let delta = if rtt == Duration::ZERO {
                    if prev == Duration::ZERO {
                        0.0
                    } else {
                        PH_B_MAX
                    }
                } else {
                    rtt.abs_diff(prev).nanos() as f64 / rtt.nanos() as f64
                };
                let decayed_b = self.b * PH_DECAY_NUM as f64 / PH_DECAY_DEN as f64;
                self.b = (2.0 * delta).max(decayed_b).min(PH_B_MAX);
                let rtt_max = rtt.max(prev);
                let hist_max = self.history.iter().flatten().copied().max().unwrap_or(rtt);
                let scaled = Duration::from_nanos(((1.0 + self.b) * rtt_max.nanos() as f64) as u64);
                rto.mul_ratio(PH_DECAY_NUM, PH_DECAY_DEN)
                    .max(scaled)
                    .max(rtt_max + PH_MARGIN)
                    .max(hist_max + PH_MARGIN)
            }
            _ => rtt.mul_ratio(PH_FIRST_NUM, PH_FIRST_DEN),
        });
        self.prev = Some(rtt);
    }

    pub fn rto(&self) -> Option<Duration> {
        self.rto
    }
    pub fn b(&self) -> f64 {
        self.b
    }
    pub fn previous_sample(&self) -> Option<Duration> {
        self.prev
    }
}
