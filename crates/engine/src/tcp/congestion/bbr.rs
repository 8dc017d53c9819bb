//! BBR v1 as Linux 4.x–5.x implements it (net/ipv4/tcp_bbr.c; docs/model.md "BBR"). The
//! function names in the comments are Linux's. Differences, all documented in
//! docs/model.md: windows and rates in bytes (Linux counts packets; every data segment here
//! but a message's tail is a full MSS), exact time instead of jiffies for the RTprop window
//! and ProbeRTT's 200 ms, no ACK-aggregation allowance (5.1+ `bbr_extra_acked`), no 1 %
//! pacing margin, TSO goal 1 segment (Linux's own value below `bbr_min_tso_rate`,
//! 1.2 Mbit/s). Long-term (policer) bandwidth sampling (`bbr_lt_bw_sampling`) is Linux's.

use std::any::Any;

use coaplab_cc::rng::{Rng, Xoshiro256pp};
use coaplab_cc::{Duration, Instant};

use super::controller::{Ack, AckContext, CaState, Controller, RateSample, Snapshot};

/// `BBR_UNIT`: gains are fixed point with 8 fractional bits.
pub const UNIT: u32 = 256;
/// `bbr_high_gain` = 2/ln 2 ≈ 2.885 (Startup's pacing and cwnd gain).
pub const HIGH_GAIN: u32 = UNIT * 2885 / 1000 + 1;
/// `bbr_drain_gain` = ln 2 / 2 (its inverse).
pub const DRAIN_GAIN: u32 = UNIT * 1000 / 2885;
/// `bbr_cwnd_gain`: ProbeBW's cwnd is 2 × BDP.
pub const CWND_GAIN: u32 = UNIT * 2;
/// `bbr_pacing_gain`: ProbeBW's eight-phase cycle.
pub const PACING_GAIN: [u32; 8] = [
    UNIT * 5 / 4,
    UNIT * 3 / 4,
    UNIT,
    UNIT,
    UNIT,
    UNIT,
    UNIT,
    UNIT,
];
/// `bbr_bw_rtts`: the BtlBw max filter spans 10 round trips.
pub const BW_RTTS: u32 = 10;
/// `bbr_min_rtt_win_sec`: the RTprop min filter spans 10 s.
pub const MIN_RTT_WIN: Duration = Duration::from_secs(10);
/// `bbr_probe_rtt_mode_ms`.
pub const PROBE_RTT_TIME: Duration = Duration::from_millis(200);
/// `bbr_cwnd_min_target`, segments.
pub const CWND_MIN_SEGMENTS: u32 = 4;
/// `bbr_full_bw_thresh` (+25 %) and `bbr_full_bw_cnt` (3 rounds).
pub const FULL_BW_THRESH: u32 = UNIT * 5 / 4;
pub const FULL_BW_CNT: u32 = 3;
/// `bbr_lt_intvl_min_rtts`: a long-term sampling interval lasts at least 4 rounds (and at
/// most 4 × 4, else it starts again).
pub const LT_INTVL_MIN_RTTS: u32 = 4;
/// `bbr_lt_loss_thresh`: an interval is lossy when lost / delivered ≥ 50/256 (≈ 20 %).
pub const LT_LOSS_THRESH: u64 = 50;
/// `bbr_lt_bw_ratio`: two intervals' rates are consistent within 1/8 …
pub const LT_BW_RATIO: u64 = UNIT as u64 / 8;
/// … or `bbr_lt_bw_diff`: within 4 kbit/s (bytes per second here).
pub const LT_BW_DIFF: u64 = 4000 / 8;
/// `bbr_lt_bw_max_rtts`: a policed rate is used for 48 rounds.
pub const LT_BW_MAX_RTTS: u32 = 48;
/// `TCP_INIT_CWND`: the BDP before any RTT sample, segments.
const INIT_CWND_SEGMENTS: u32 = 10;
/// `3 * bbr_tso_segs_goal` with a goal of 1 segment.
const QUANTIZATION_SEGMENTS: u32 = 3;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Startup,
    Drain,
    ProbeBw,
    ProbeRtt,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Startup => "startup",
            Mode::Drain => "drain",
            Mode::ProbeBw => "probe_bw",
            Mode::ProbeRtt => "probe_rtt",
        }
    }
}

/// Kathleen Nichols' windowed max filter (Linux lib/win_minmax.c), over round counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MaxFilter {
    /// (time, value): best, 2nd best, 3rd best.
    s: [(u32, u64); 3],
}

impl MaxFilter {
    pub fn get(&self) -> u64 {
        self.s[0].1
    }

    fn reset(&mut self, t: u32, v: u64) -> u64 {
        self.s = [(t, v); 3];
        v
    }

    /// `minmax_running_max`.
    pub fn update(&mut self, win: u32, t: u32, v: u64) -> u64 {
        if v >= self.s[0].1 || t.wrapping_sub(self.s[2].0) > win {
            return self.reset(t, v);
        }
        if v >= self.s[1].1 {
            self.s[2] = (t, v);
            self.s[1] = (t, v);
        } else if v >= self.s[2].1 {
            self.s[2] = (t, v);
        }
        // `minmax_subwin_update`.
        let dt = t.wrapping_sub(self.s[0].0);
        if dt > win {
            self.s[0] = self.s[1];
            self.s[1] = self.s[2];
            self.s[2] = (t, v);
            if t.wrapping_sub(self.s[0].0) > win {
                self.s[0] = self.s[1];
                self.s[1] = self.s[2];
                self.s[2] = (t, v);
            }
        } else if self.s[1].0 == self.s[0].0 && dt > win / 4 {
            self.s[2] = (t, v);
            self.s[1] = (t, v);
        } else if self.s[2].0 == self.s[1].0 && dt > win / 2 {
            self.s[2] = (t, v);
        }
        self.s[0].1
    }
}

#[derive(Clone, Debug)]
pub struct Bbr {
    mss: u32,
    pub mode: Mode,
    pub cwnd: u32,
    /// Bytes per second.
    pub pacing_rate: u64,
    pub pacing_gain: u32,
    pub cwnd_gain: u32,
    /// BtlBw samples, bytes per second, over round counts.
    bw: MaxFilter,
    pub rtt_cnt: u32,
    next_rtt_delivered: u64,
    pub round_start: bool,
    full_bw: u64,
    full_bw_cnt: u32,
    pub full_bw_reached: bool,
    pub cycle_idx: usize,
    cycle_stamp: Instant,
    /// RTprop; `None` before the first sample.
    pub min_rtt: Option<Duration>,
    min_rtt_stamp: Instant,
    probe_rtt_done: Option<Instant>,
    probe_rtt_round_done: bool,
    pub prior_cwnd: u32,
    prev_ca_state: CaState,
    pub packet_conservation: bool,
    idle_restart: bool,
    has_seen_rtt: bool,
    /// Long-term sampling (`bbr_lt_bw_sampling`): started by a loss.
    pub lt_is_sampling: bool,
    /// Rounds in this interval, or (while `lt_use_bw`) rounds the policed rate was used.
    pub lt_rtt_cnt: u32,
    /// The policed rate is the bandwidth estimate (`bbr_bw`), ProbeBW paces at gain 1.
    pub lt_use_bw: bool,
    /// The last interval's rate, bytes per second (0: none).
    pub lt_bw: u64,
    /// Interval start: `tp->delivered`, `tp->delivered_mstamp` in whole ms, `tp->lost`.
    lt_last_delivered: u64,
    lt_last_stamp_ms: u64,
    lt_last_lost: u64,
    rng: Xoshiro256pp,
}

impl Bbr {
    /// `bbr_init` when the connection is established at `now` with `cwnd` bytes, the
    /// handshake's RTT sample (`tcp_min_rtt`, also the SRTT then) if any.
    pub fn new(mss: u32, cwnd: u32, now: Instant, rtt: Option<Duration>, seed: u64) -> Self {
        let mut b = Bbr {
            mss,
            mode: Mode::Startup,
            cwnd,
            pacing_rate: 0,
            pacing_gain: HIGH_GAIN,
            cwnd_gain: HIGH_GAIN,
            bw: MaxFilter::default(),
            rtt_cnt: 0,
            next_rtt_delivered: 0,
            round_start: false,
            full_bw: 0,
            full_bw_cnt: 0,
            full_bw_reached: false,
            cycle_idx: 0,
            cycle_stamp: Instant::ZERO,
            min_rtt: rtt,
            min_rtt_stamp: now,
            probe_rtt_done: None,
            probe_rtt_round_done: false,
            prior_cwnd: 0,
            prev_ca_state: CaState::Open,
            packet_conservation: false,
            idle_restart: false,
            has_seen_rtt: false,
            lt_is_sampling: false,
            lt_rtt_cnt: 0,
            lt_use_bw: false,
            lt_bw: 0,
            lt_last_delivered: 0,
            lt_last_stamp_ms: 0,
            lt_last_lost: 0,
            rng: Xoshiro256pp::seed_from_u64(seed),
        };
        b.init_pacing_rate_from_rtt(rtt);
        b
    }

    /// The BtlBw estimate, bytes per second (`bbr_max_bw`).
    pub fn btl_bw(&self) -> u64 {
        self.bw.get()
    }

    /// The bandwidth BBR paces and sizes cwnd with (`bbr_bw`): the policed rate while it is
    /// in use, else BtlBw.
    pub fn bw(&self) -> u64 {
        if self.lt_use_bw {
            self.lt_bw
        } else {
            self.btl_bw()
        }
    }

    /// `bbr_init_pacing_rate_from_rtt`: `high_gain × cwnd / SRTT` (1 ms without an SRTT).
    fn init_pacing_rate_from_rtt(&mut self, srtt: Option<Duration>) {
        let rtt_ns = match srtt {
            Some(r) => {
                self.has_seen_rtt = true;
                r.nanos().max(1000)
            }
            None => 1_000_000,
        };
        let bw = u64::from(self.cwnd) * 1_000_000_000 / rtt_ns;
        self.pacing_rate = rate(bw, HIGH_GAIN);
    }

    /// `bbr_bdp` + `bbr_quantization_budget` (`bbr_inflight`), bytes.
    pub fn inflight(&self, bw: u64, gain: u32) -> u32 {
        let segments = match self.min_rtt {
            None => INIT_CWND_SEGMENTS,
            Some(rtt) => {
                // bytes = ceil(bw · RTprop · gain), then whole segments rounded up.
                let w = u128::from(bw) * u128::from(rtt.nanos()) * u128::from(gain);
                let bytes = w.div_ceil(u128::from(UNIT) * 1_000_000_000);
                bytes.div_ceil(u128::from(self.mss)) as u32
            }
        };
        let mut cwnd = segments + QUANTIZATION_SEGMENTS;
        cwnd = (cwnd + 1) & !1;
        if self.mode == Mode::ProbeBw && self.cycle_idx == 0 {
            cwnd += 2;
        }
        cwnd * self.mss
    }

    /// `bbr_save_cwnd`.
    fn save_cwnd(&mut self) {
        if self.prev_ca_state < CaState::Recovery && self.mode != Mode::ProbeRtt {
            self.prior_cwnd = self.cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(self.cwnd);
        }
    }

    /// `bbr_ssthresh`: entering fast recovery.
    pub fn on_enter_recovery(&mut self) {
        self.save_cwnd();
    }

    /// A retransmission timeout: `tcp_enter_loss` (`bbr_ssthresh` saves cwnd; every
    /// unacknowledged segment is marked lost — `cx.lost` counts them already — so cwnd = in
    /// flight + 1 = 1 segment) and `bbr_set_state(TCP_CA_Loss)`, which treats the timeout as
    /// the end of a round with a loss for the long-term sampler.
    pub fn on_rto(&mut self, cx: &AckContext) {
        self.save_cwnd();
        self.cwnd = self.mss;
        self.prev_ca_state = CaState::Loss;
        self.full_bw = 0;
        self.round_start = true;
        let rs = RateSample {
            losses: 1,
            ..RateSample::default()
        };
        self.lt_bw_sampling(&rs, cx);
    }

    /// `bbr_cwnd_event(CA_EVENT_TX_START)`: sending again after idle while app-limited.
    pub fn on_restart_from_idle(&mut self) {
        self.idle_restart = true;
        if self.mode == Mode::ProbeBw {
            self.set_pacing_rate(self.bw(), UNIT);
        }
    }

    /// `bbr_main`: one ACK. Returns whether the connection must mark itself app-limited
    /// (ProbeRTT ignores its own low-rate samples).
    pub fn on_ack(&mut self, rs: &RateSample, cx: &AckContext) -> bool {
        self.update_bw(rs, cx);
        self.update_cycle_phase(rs, cx);
        self.check_full_bw_reached(rs);
        self.check_drain(cx);
        let app_limited = self.update_min_rtt(rs, cx);
        self.update_gains();
        let bw = self.bw();
        self.set_pacing_rate(bw, self.pacing_gain);
        self.set_cwnd(rs, cx, bw);
        app_limited
    }

    /// `bbr_update_bw`: round counting and the BtlBw filter.
    fn update_bw(&mut self, rs: &RateSample, cx: &AckContext) {
        self.round_start = false;
        let Some(interval) = rs.interval.filter(|i| i.nanos() > 0) else {
            return;
        };
        if rs.prior_delivered >= self.next_rtt_delivered {
            self.next_rtt_delivered = cx.delivered;
            self.rtt_cnt += 1;
            self.round_start = true;
            self.packet_conservation = false;
        }
        self.lt_bw_sampling(rs, cx);
        let bw = (u128::from(rs.delivered) * 1_000_000_000 / u128::from(interval.nanos())) as u64;
        // Application-limited samples only count when they raise the estimate.
        if !rs.is_app_limited || bw >= self.btl_bw() {
            self.bw.update(BW_RTTS, self.rtt_cnt, bw);
        }
    }

    /// `bbr_reset_lt_bw_sampling_interval`.
    fn reset_lt_interval(&mut self, cx: &AckContext) {
        self.lt_last_stamp_ms = cx.delivered_at.nanos() / 1_000_000;
        self.lt_last_delivered = cx.delivered;
        self.lt_last_lost = cx.lost;
        self.lt_rtt_cnt = 0;
    }

    /// `bbr_reset_lt_bw_sampling`.
    fn reset_lt(&mut self, cx: &AckContext) {
        self.lt_bw = 0;
        self.lt_use_bw = false;
        self.lt_is_sampling = false;
        self.reset_lt_interval(cx);
    }

    /// `bbr_lt_bw_interval_done`: a lossy interval delivered at `bw` B/s. Two in a row
    /// within 1/8 or 4 kbit/s of each other mean a policer: use their mean.
    fn lt_interval_done(&mut self, bw: u64, cx: &AckContext) {
        if self.lt_bw > 0 {
            let diff = bw.abs_diff(self.lt_bw);
            if diff * u64::from(UNIT) <= LT_BW_RATIO * self.lt_bw || rate(diff, UNIT) <= LT_BW_DIFF
            {
                self.lt_bw = (bw + self.lt_bw) / 2;
                self.lt_use_bw = true;
                self.pacing_gain = UNIT;
                self.lt_rtt_cnt = 0;
                return;
            }
        }
        self.lt_bw = bw;
        self.reset_lt_interval(cx);
    }

    /// `bbr_lt_bw_sampling`: token-bucket policer detection. From the first loss on, an
    /// interval of 4–16 rounds ends at a loss once lost / delivered ≥ 20 %; its delivery
    /// rate (over whole ms, as Linux's `lt_last_stamp`) is compared with the previous one.
    /// While the policed rate is in use, ProbeBW drops it after 48 rounds.
    fn lt_bw_sampling(&mut self, rs: &RateSample, cx: &AckContext) {
        if self.lt_use_bw {
            if self.mode == Mode::ProbeBw && self.round_start {
                self.lt_rtt_cnt += 1;
                if self.lt_rtt_cnt >= LT_BW_MAX_RTTS {
                    self.reset_lt(cx);
                    self.reset_probe_bw_mode(cx.delivered_at);
                }
            }
            return;
        }
        if !self.lt_is_sampling {
            if rs.losses == 0 {
                return;
            }
            self.reset_lt_interval(cx);
            self.lt_is_sampling = true;
        }
        if rs.is_app_limited {
            self.reset_lt(cx);
            return;
        }
        if self.round_start {
            self.lt_rtt_cnt += 1;
        }
        if self.lt_rtt_cnt < LT_INTVL_MIN_RTTS {
            return;
        }
        if self.lt_rtt_cnt > 4 * LT_INTVL_MIN_RTTS {
            self.reset_lt(cx);
            return;
        }
        if rs.losses == 0 {
            return;
        }
        let lost = cx.lost - self.lt_last_lost;
        let delivered = cx.delivered - self.lt_last_delivered;
        if delivered == 0 || lost * u64::from(UNIT) < LT_LOSS_THRESH * delivered {
            return;
        }
        let t_ms = (cx.delivered_at.nanos() / 1_000_000).saturating_sub(self.lt_last_stamp_ms);
        if t_ms < 1 {
            return;
        }
        self.lt_interval_done(delivered * 1000 / t_ms, cx);
    }

    /// `bbr_update_cycle_phase` / `bbr_is_next_cycle_phase`.
    fn update_cycle_phase(&mut self, rs: &RateSample, cx: &AckContext) {
        if self.mode != Mode::ProbeBw {
            return;
        }
        let full_length = self
            .min_rtt
            .is_some_and(|m| cx.delivered_at.saturating_since(self.cycle_stamp) > m);
        let bw = self.btl_bw();
        let next = if self.pacing_gain == UNIT {
            full_length
        } else if self.pacing_gain > UNIT {
            full_length
                && (rs.losses > 0 || rs.prior_in_flight >= self.inflight(bw, self.pacing_gain))
        } else {
            full_length || rs.prior_in_flight <= self.inflight(bw, UNIT)
        };
        if next {
            self.advance_cycle_phase(cx.delivered_at);
        }
    }

    fn advance_cycle_phase(&mut self, at: Instant) {
        self.cycle_idx = (self.cycle_idx + 1) % PACING_GAIN.len();
        self.cycle_stamp = at;
    }

    /// `bbr_reset_probe_bw_mode`: a random phase, never the 3/4 one.
    fn reset_probe_bw_mode(&mut self, at: Instant) {
        self.mode = Mode::ProbeBw;
        // CYCLE_LEN − 1 − prandom_u32_max(7): 1..=7, then advanced: 2..=7 or 0.
        let r = (self.rng.next_u64() % 7) as usize;
        self.cycle_idx = PACING_GAIN.len() - 1 - r;
        self.advance_cycle_phase(at);
    }

    /// `bbr_check_full_bw_reached`.
    fn check_full_bw_reached(&mut self, rs: &RateSample) {
        if self.full_bw_reached || !self.round_start || rs.is_app_limited {
            return;
        }
        let thresh = self.full_bw * u64::from(FULL_BW_THRESH) / u64::from(UNIT);
        if self.btl_bw() >= thresh {
            self.full_bw = self.btl_bw();
            self.full_bw_cnt = 0;
            return;
        }
        self.full_bw_cnt += 1;
        self.full_bw_reached = self.full_bw_cnt >= FULL_BW_CNT;
    }

    /// `bbr_check_drain`.
    fn check_drain(&mut self, cx: &AckContext) {
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
        }
        if self.mode == Mode::Drain && cx.inflight <= self.inflight(self.btl_bw(), UNIT) {
            self.reset_probe_bw_mode(cx.delivered_at);
        }
    }

    /// `bbr_update_min_rtt`: the RTprop filter and ProbeRTT.
    fn update_min_rtt(&mut self, rs: &RateSample, cx: &AckContext) -> bool {
        let expired = cx.now > self.min_rtt_stamp + MIN_RTT_WIN;
        if let Some(rtt) = rs.rtt {
            if self.min_rtt.is_none_or(|m| rtt <= m) || expired {
                self.min_rtt = Some(rtt);
                self.min_rtt_stamp = cx.now;
            }
        }
        if expired && !self.idle_restart && self.mode != Mode::ProbeRtt {
            self.mode = Mode::ProbeRtt;
            self.save_cwnd();
            self.probe_rtt_done = None;
        }
        let mut app_limited = false;
        if self.mode == Mode::ProbeRtt {
            app_limited = true;
            let min_inflight = CWND_MIN_SEGMENTS * self.mss;
            if self.probe_rtt_done.is_none() && cx.inflight <= min_inflight {
                self.probe_rtt_done = Some(cx.now + PROBE_RTT_TIME);
                self.probe_rtt_round_done = false;
                self.next_rtt_delivered = cx.delivered;
            } else if let Some(done) = self.probe_rtt_done {
                if self.round_start {
                    self.probe_rtt_round_done = true;
                }
                // `bbr_check_probe_rtt_done`.
                if self.probe_rtt_round_done && cx.now > done {
                    self.min_rtt_stamp = cx.now;
                    self.cwnd = self.cwnd.max(self.prior_cwnd);
                    if self.full_bw_reached {
                        self.reset_probe_bw_mode(cx.delivered_at);
                    } else {
                        self.mode = Mode::Startup;
                    }
                }
            }
        }
        if rs.delivered > 0 {
            self.idle_restart = false;
        }
        app_limited
    }

    /// `bbr_update_gains`.
    fn update_gains(&mut self) {
        (self.pacing_gain, self.cwnd_gain) = match self.mode {
            Mode::Startup => (HIGH_GAIN, HIGH_GAIN),
            Mode::Drain => (DRAIN_GAIN, HIGH_GAIN),
            Mode::ProbeBw if self.lt_use_bw => (UNIT, CWND_GAIN),
            Mode::ProbeBw => (PACING_GAIN[self.cycle_idx], CWND_GAIN),
            Mode::ProbeRtt => (UNIT, UNIT),
        };
    }

    /// `bbr_set_pacing_rate`: gain × BtlBw; in Startup it only rises.
    fn set_pacing_rate(&mut self, bw: u64, gain: u32) {
        if !self.has_seen_rtt {
            if let Some(rtt) = self.min_rtt {
                self.init_pacing_rate_from_rtt(Some(rtt));
            }
        }
        let r = rate(bw, gain);
        if self.full_bw_reached || r > self.pacing_rate {
            self.pacing_rate = r;
        }
    }

    /// `bbr_set_cwnd` with `bbr_set_cwnd_to_recover_or_restore`.
    fn set_cwnd(&mut self, rs: &RateSample, cx: &AckContext, bw: u64) {
        let acked = rs.acked_sacked;
        if acked > 0 {
            let mut cwnd = self.cwnd;
            if rs.losses > 0 {
                cwnd = cwnd.saturating_sub(rs.losses * self.mss).max(self.mss);
            }
            let state = cx.ca_state;
            if state == CaState::Recovery && self.prev_ca_state != CaState::Recovery {
                // First round of recovery: packet conservation.
                self.packet_conservation = true;
                self.next_rtt_delivered = cx.delivered;
                cwnd = cx.inflight + acked;
            } else if self.prev_ca_state >= CaState::Recovery && state < CaState::Recovery {
                // Recovery is over: restore the cwnd saved when it began.
                cwnd = cwnd.max(self.prior_cwnd);
                self.packet_conservation = false;
            }
            self.prev_ca_state = state;
            if self.packet_conservation {
                cwnd = cwnd.max(cx.inflight + acked);
            } else {
                let target = self.inflight(bw, self.cwnd_gain);
                if self.full_bw_reached {
                    cwnd = (cwnd + acked).min(target);
                } else if cwnd < target || cx.delivered < u64::from(INIT_CWND_SEGMENTS * self.mss) {
                    cwnd += acked;
                }
                cwnd = cwnd.max(CWND_MIN_SEGMENTS * self.mss);
            }
            self.cwnd = cwnd;
        }
        if self.mode == Mode::ProbeRtt {
            self.cwnd = self.cwnd.min(CWND_MIN_SEGMENTS * self.mss);
        }
    }
}

/// `bbr_bw_to_pacing_rate`: bytes per second at `gain`.
fn rate(bw: u64, gain: u32) -> u64 {
    bw * u64::from(gain) / u64::from(UNIT)
}

/// BBR behind the trait: it grows its window in [`Bbr::on_ack`] from rate samples, so the
/// per-ACK hook and RFC 6582's window arithmetic do not apply to it.
impl Controller for Bbr {
    /// `bbr_init`, with the handshake's RTT sample.
    fn on_established(&mut self, mss: u32, now: Instant, rtt: Option<Duration>, seed: u64) {
        *self = Bbr::new(mss, self.cwnd, now, rtt, seed);
    }
    fn set_initial_window(&mut self, bytes: u32) {
        self.cwnd = bytes;
    }
    fn window(&self) -> u32 {
        self.cwnd
    }
    fn set_window(&mut self, _bytes: u32) {}
    fn on_ack(&mut self, _ack: &Ack) {}
    /// `bbr_ssthresh`: saves cwnd; BBR does not use ssthresh.
    fn on_congestion_event(&mut self, _now: Instant, _flight: u32) -> u32 {
        self.on_enter_recovery();
        u32::MAX
    }
    fn on_rto(&mut self, _flight: u32, _repeated: bool, cx: &AckContext) {
        Bbr::on_rto(self, cx);
    }
    fn pacing_rate(&self) -> Option<u64> {
        Some(self.pacing_rate)
    }
    fn uses_rate_samples(&self) -> bool {
        true
    }
    fn on_rate_sample(&mut self, rs: &RateSample, cx: &AckContext) -> bool {
        Bbr::on_ack(self, rs, cx)
    }
    fn on_restart_from_idle(&mut self) {
        Bbr::on_restart_from_idle(self);
    }
    fn snapshot(&self) -> Option<Snapshot> {
        Some(Snapshot {
            mode: self.mode.as_str(),
            bandwidth: self.btl_bw(),
            min_rtt: self.min_rtt,
            pacing_rate: self.pacing_rate,
            cwnd: self.cwnd,
        })
    }
    fn clone_box(&self) -> Box<dyn Controller> {
        Box::new(self.clone())
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u32 = 256;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    fn at(v: u64) -> Instant {
        Instant::from_millis(v)
    }

    /// A connection-side driver: every call is one ACK one second after the previous one,
    /// acknowledging `bw` bytes sent over exactly 1 s (so the sample is `bw` B/s) and
    /// starting a new round (its segment was sent after the previous ACK).
    struct Drive {
        b: Bbr,
        now: u64,
        delivered: u64,
    }

    impl Drive {
        fn new() -> Self {
            Drive {
                b: Bbr::new(MSS, 4 * MSS, at(0), Some(ms(640)), 7),
                now: 0,
                delivered: 0,
            }
        }

        fn ack(&mut self, bw: u64, inflight: u32, state: CaState, app_limited: bool) {
            let prior = self.delivered;
            self.now += 1000;
            self.delivered += bw;
            let rs = RateSample {
                delivered: bw,
                interval: Some(Duration::from_secs(1)),
                prior_delivered: prior,
                prior_in_flight: inflight,
                acked_sacked: bw as u32,
                losses: 0,
                rtt: Some(ms(640)),
                is_app_limited: app_limited,
            };
            let cx = AckContext {
                now: at(self.now),
                delivered: self.delivered,
                delivered_at: at(self.now),
                inflight,
                ca_state: state,
                lost: 0,
            };
            self.b.on_ack(&rs, &cx);
        }
    }

    #[test]
    fn constants_are_linuxs() {
        // 256 · 2885 / 1000 = 738.56 → 738, + 1; 256 · 1000 / 2885 = 88.7 → 88.
        assert_eq!((HIGH_GAIN, DRAIN_GAIN, CWND_GAIN), (739, 88, 512));
        assert_eq!(PACING_GAIN, [320, 192, 256, 256, 256, 256, 256, 256]);
    }

    #[test]
    fn max_filter_follows_win_minmax() {
        let mut f = MaxFilter::default();
        // (round, sample, filter output), window 10 rounds.
        let table = [
            (1, 100, 100),
            (2, 80, 100),
            (3, 120, 120), // a new max resets all three
            // dt = 2 is not > 10/4: the 2nd best is not refreshed; 90 is forgotten.
            (5, 90, 120),
            // dt = 6 > 2.5: 2nd and 3rd best become (9, 90).
            (9, 90, 120),
            // dt = 11 > 10: the best expires; (9, 90) moves up.
            (14, 70, 90),
            // nothing within 10 rounds of the 3rd best (14): reset.
            (25, 10, 10),
        ];
        for (t, v, out) in table {
            assert_eq!(f.update(10, t, v), out, "round {t} sample {v}");
        }
    }

    #[test]
    fn inflight_is_bdp_plus_quantization() {
        let mut b = Bbr::new(MSS, 4 * MSS, at(0), Some(ms(640)), 1);
        // (bw B/s, gain, bytes). BDP = 3750 · 0.64 = 2400 B.
        let table = [
            // 2400 B → ceil(9.375) = 10 segments, + 3 = 13, even → 14 → 3584 B.
            (3750, UNIT, 3584),
            // 4800 B → 19 segments, + 3 = 22 → 5632 B.
            (3750, CWND_GAIN, 5632),
            // 2400 · 739 / 256 = 6928.1 → 6929 B → 28 segments, + 3 = 31, even → 32.
            (3750, HIGH_GAIN, 8192),
            // bw 0: 0 segments + 3 → 4 (the minimum is applied by set_cwnd).
            (0, UNIT, 1024),
        ];
        for (bw, gain, bytes) in table {
            assert_eq!(b.inflight(bw, gain), bytes, "bw {bw} gain {gain}");
        }
        // ProbeBW's 5/4 phase adds 2 segments.
        b.mode = Mode::ProbeBw;
        b.cycle_idx = 0;
        assert_eq!(b.inflight(3750, UNIT), 3584 + 512);
        // Without an RTT sample: TCP_INIT_CWND (10) + 3 → 14 segments.
        b.min_rtt = None;
        b.cycle_idx = 2;
        assert_eq!(b.inflight(3750, UNIT), 14 * MSS);
    }

    #[test]
    fn startup_until_three_rounds_without_25_percent_then_drain_then_probe_bw() {
        let mut d = Drive::new();
        // Initial pacing: 739/256 · 1024 B / 0.64 s = 1600 B/s · 739 / 256 = 4618.75 → 4618.
        assert_eq!(d.b.pacing_rate, 4618);
        // (sample B/s, mode after, full_bw_reached).
        let table = [
            (1000, Mode::Startup, false), // full_bw 0 → 1000
            (2000, Mode::Startup, false), // ≥ 1250 → full_bw 2000
            (3000, Mode::Startup, false), // ≥ 2500 → full_bw 3000
            (3200, Mode::Startup, false), // < 3750: 1st round without growth
            (3300, Mode::Startup, false), // < 3750: 2nd
            (3300, Mode::Drain, true),    // 3rd → the pipe is full → Drain
        ];
        for (i, (bw, mode, full)) in table.into_iter().enumerate() {
            // In flight far above any target: Drain does not end at once.
            d.ack(bw, 100_000, CaState::Open, false);
            assert_eq!((d.b.mode, d.b.full_bw_reached), (mode, full), "ACK {i}");
            assert_eq!(d.b.rtt_cnt, i as u32 + 1);
        }
        // BtlBw 3300. Drain paces at 3300 · 88 / 256 = 1134.375 → 1134 B/s (the pipe is
        // full, so the rate may fall); cwnd gain stays high.
        assert_eq!(d.b.btl_bw(), 3300);
        assert_eq!((d.b.pacing_rate, d.b.cwnd_gain), (1134, HIGH_GAIN));
        // An app-limited lower sample does not enter the filter.
        d.ack(100, 100_000, CaState::Open, true);
        assert_eq!((d.b.btl_bw(), d.b.mode), (3300, Mode::Drain));
        // In flight ≤ inflight(3300, 1) = ceil(2112/256) = 9 + 3 = 12 segments = 3072 B:
        // ProbeBW, at a phase other than 3/4.
        d.ack(3300, 3072, CaState::Open, false);
        assert_eq!(d.b.mode, Mode::ProbeBw);
        assert_ne!(d.b.cycle_idx, 1);
        assert_eq!(d.b.cwnd_gain, CWND_GAIN);
    }

    #[test]
    fn probe_bw_start_phase_is_never_three_quarters() {
        let mut seen = [0u32; 8];
        for seed in 0..400 {
            let mut b = Bbr::new(MSS, 4 * MSS, at(0), Some(ms(640)), seed);
            b.reset_probe_bw_mode(at(0));
            seen[b.cycle_idx] += 1;
        }
        // CYCLE_LEN − 1 − rand(7) ∈ 1..=7, advanced once: 2..=7 or 0, each ≈ 400/7 ≈ 57.
        assert_eq!(seen[1], 0);
        for (i, n) in seen.iter().enumerate().filter(|(i, _)| *i != 1) {
            assert!((30..90).contains(n), "phase {i}: {n}");
        }
    }

    #[test]
    fn gain_cycle_advances_after_one_rtprop() {
        let mut b = Bbr::new(MSS, 4 * MSS, at(0), Some(ms(640)), 1);
        b.mode = Mode::ProbeBw;
        b.full_bw_reached = true;
        b.bw.update(BW_RTTS, 0, 3750);
        let rs = RateSample {
            rtt: Some(ms(700)),
            ..RateSample::default()
        };
        let cx = |t: u64, inflight: u32| AckContext {
            now: at(t),
            delivered: 0,
            delivered_at: at(t),
            inflight,
            ca_state: CaState::Open,
            lost: 0,
        };
        // (phase, its start ms, ACK at ms, prior in flight B, phase after):
        // phase 2 (gain 1) advances once more than RTprop = 640 ms passed: 640 is not > 640,
        // 641 is; phase 1 (3/4) ends early once in flight ≤ inflight(bw, 1) = 14 segments = 3584 B;
        // phase 0 (5/4) needs a full RTprop *and* in flight ≥ inflight(bw, 5/4) (phase 0 adds
        // 2 segments): 3000 B → 12 segs + 3 → 16 + 2 = 18 segments = 4608 B.
        for (phase, stamp, t, prior, after) in [
            (2, 0, 640, 0, 2),
            (2, 0, 641, 0, 3),
            (1, 1000, 1100, 3585, 1),
            (1, 1000, 1200, 3584, 2),
            (0, 2000, 2700, 4607, 0),
            (0, 2000, 2800, 4608, 1),
        ] {
            b.cycle_idx = phase;
            b.pacing_gain = PACING_GAIN[phase];
            b.cycle_stamp = at(stamp);
            b.on_ack(
                &RateSample {
                    prior_in_flight: prior,
                    ..rs
                },
                &cx(t, prior),
            );
            assert_eq!(b.cycle_idx, after, "phase {phase}, ACK at {t} ms");
        }
    }

    #[test]
    fn probe_rtt_after_ten_seconds_without_a_new_minimum() {
        let mut b = Bbr::new(MSS, 4 * MSS, at(0), Some(ms(640)), 1);
        b.mode = Mode::ProbeBw;
        b.full_bw_reached = true;
        b.cycle_idx = 3;
        b.bw.update(BW_RTTS, 0, 3750);
        b.cwnd = 5632;
        let delivered = std::cell::Cell::new(100_000u64);
        let ack = |b: &mut Bbr, t: u64, inflight: u32, prior: u64| {
            delivered.set(delivered.get() + 256);
            let rs = RateSample {
                delivered: 256,
                interval: Some(ms(700)),
                prior_delivered: prior,
                acked_sacked: 256,
                rtt: Some(ms(700)),
                ..RateSample::default()
            };
            let cx = AckContext {
                now: at(t),
                delivered: delivered.get(),
                delivered_at: at(t),
                inflight,
                ca_state: CaState::Open,
                lost: 0,
            };
            b.on_ack(&rs, &cx)
        };
        // 10 s after the minimum's stamp (0): not yet expired (not after).
        ack(&mut b, 10_000, 5000, 0);
        assert_eq!(b.mode, Mode::ProbeBw);
        // 10.001 s: expired → ProbeRTT, cwnd capped at 4 segments, the 700 ms sample is the
        // new RTprop; 5632 B saved.
        assert!(
            ack(&mut b, 10_001, 5000, 0),
            "ProbeRTT marks the connection app-limited"
        );
        assert_eq!((b.mode, b.cwnd, b.prior_cwnd), (Mode::ProbeRtt, 1024, 5632));
        assert_eq!(b.min_rtt, Some(ms(700)));
        // In flight falls to 4 segments at 11 s: ProbeRTT lasts until after 11.2 s and one
        // round (the round begins at the delivered count of that ACK).
        ack(&mut b, 11_000, 1024, 0);
        let round_mark = delivered.get();
        assert_eq!(b.probe_rtt_done, Some(at(11_200)));
        // 11.1 s: a round ended (prior ≥ mark) but 200 ms have not passed.
        ack(&mut b, 11_100, 1024, round_mark);
        assert_eq!(b.mode, Mode::ProbeRtt);
        // 11.201 s: both done → ProbeBW (the pipe was full), cwnd restored to 5632, then this
        // ACK's 256 B: min(5632 + 256, target) with target = 2 × 3750 B/s × 0.7 s = 5250 B →
        // 21 segments + 3 = 24 (26 in the 5/4 phase) ≥ 5888 → 5888.
        ack(&mut b, 11_201, 1024, round_mark);
        assert_eq!(b.mode, Mode::ProbeBw);
        assert_eq!(b.cwnd, 5888);
    }

    #[test]
    fn probe_rtt_returns_to_startup_when_the_pipe_was_never_full() {
        let mut b = Bbr::new(MSS, 4 * MSS, at(0), Some(ms(640)), 1);
        b.cwnd = 3000;
        // (time ms, in flight, prior_delivered, mode after): the RTprop stamp (0) expires
        // after 10 s; in flight ≤ 4 segments at 10.1 s starts the 200 ms; a round ends at
        // 10.2 s (prior ≥ the mark 0 set then); after 10.3 s both hold → Startup again.
        let table = [
            (10_001, 3000, 0, Mode::ProbeRtt),
            (10_100, 1024, 0, Mode::ProbeRtt),
            (10_200, 1024, 0, Mode::ProbeRtt),
            (10_301, 1024, 0, Mode::Startup),
        ];
        for (t, inflight, prior, mode) in table {
            // A valid (if empty) delivery sample: rounds are only counted on valid ones.
            let rs = RateSample {
                rtt: Some(ms(700)),
                interval: Some(ms(700)),
                prior_delivered: prior,
                ..RateSample::default()
            };
            let cx = AckContext {
                now: at(t),
                delivered: 0,
                delivered_at: at(t),
                inflight,
                ca_state: CaState::Open,
                lost: 0,
            };
            b.on_ack(&rs, &cx);
            assert_eq!(b.mode, mode, "at {t} ms");
        }
        // No ACKed bytes, so set_cwnd only applied ProbeRTT's cap (1024) and the exit
        // restored the saved 3000.
        assert_eq!(b.cwnd, 3000);
    }

    #[test]
    fn recovery_conserves_packets_then_restores_cwnd() {
        let mut b = Bbr::new(MSS, 4 * MSS, at(0), Some(ms(640)), 1);
        b.mode = Mode::ProbeBw;
        b.full_bw_reached = true;
        b.cycle_idx = 3;
        b.bw.update(BW_RTTS, 0, 3750);
        b.cwnd = 5632;
        let step = |b: &mut Bbr, t: u64, acked: u32, inflight: u32, state: CaState| {
            let rs = RateSample {
                acked_sacked: acked,
                prior_in_flight: inflight + acked,
                ..RateSample::default()
            };
            let cx = AckContext {
                now: at(t),
                delivered: 0,
                delivered_at: at(t),
                inflight,
                ca_state: state,
                lost: 0,
            };
            b.on_ack(&rs, &cx);
            b.cwnd
        };
        // Fast retransmit: `bbr_ssthresh` saves 5632.
        b.on_enter_recovery();
        // (time, acked, in flight, state, cwnd after):
        let table = [
            // 1st ACK in recovery: cwnd = in flight + acked = 3000 + 256.
            (100, 256, 3000, CaState::Recovery, 3256),
            // Conservation: max(3256, 2800 + 256) = 3256.
            (200, 256, 2800, CaState::Recovery, 3256),
            // max(3256, 3200 + 256) = 3456.
            (300, 256, 3200, CaState::Recovery, 3456),
            // Recovery over: max(3456, prior 5632) = 5632; then min(5632 + 512, target 5632
            // (2 × BDP: 4800 B → 19 + 3 = 22 segments)).
            (400, 512, 1000, CaState::Open, 5632),
        ];
        for (t, acked, inflight, state, cwnd) in table {
            assert_eq!(step(&mut b, t, acked, inflight, state), cwnd, "at {t} ms");
        }
        // A timeout: cwnd 1 segment, then + acked (below the target), restored on leaving
        // the Loss state.
        b.on_rto(&AckContext {
            now: at(450),
            delivered: 0,
            delivered_at: at(400),
            inflight: 0,
            ca_state: CaState::Loss,
            lost: 0,
        });
        assert_eq!((b.cwnd, b.prior_cwnd), (256, 5632));
        assert_eq!(step(&mut b, 500, 256, 0, CaState::Loss), 1024); // min 4 segments
        assert_eq!(step(&mut b, 600, 512, 512, CaState::Loss), 1536);
        assert_eq!(step(&mut b, 700, 256, 512, CaState::Open), 5632);
    }

    /// One ACK per second, each a new round (its segment was sent after the previous
    /// ACK), a valid 1-s delivery-rate sample of `delivered` bytes; `lost` is the
    /// connection's running count (`tp->lost`).
    struct LtDrive {
        b: Bbr,
        now: u64,
        delivered: u64,
    }

    impl LtDrive {
        /// ProbeBW at gain 1 with BtlBw 3750 B/s (the link), RTprop 640 ms.
        fn new() -> Self {
            let mut b = Bbr::new(MSS, 14 * MSS, at(0), Some(ms(640)), 1);
            b.mode = Mode::ProbeBw;
            b.full_bw_reached = true;
            b.cycle_idx = 2;
            b.bw.update(BW_RTTS, 0, 3750);
            LtDrive {
                b,
                now: 0,
                delivered: 0,
            }
        }

        fn cx(&self, lost: u64) -> AckContext {
            AckContext {
                now: at(self.now),
                delivered: self.delivered,
                delivered_at: at(self.now),
                inflight: 0,
                ca_state: CaState::Open,
                lost,
            }
        }

        fn ack(&mut self, delivered: u64, lost: u64, losses: u32, app_limited: bool) {
            let prior = self.delivered;
            self.now += 1000;
            self.delivered += delivered;
            let rs = RateSample {
                delivered,
                interval: Some(Duration::from_secs(1)),
                prior_delivered: prior,
                acked_sacked: delivered as u32,
                losses,
                // RTprop renewed on every ACK: no ProbeRTT.
                rtt: Some(ms(640)),
                is_app_limited: app_limited,
                ..RateSample::default()
            };
            self.b.on_ack(&rs, &self.cx(lost));
        }
    }

    #[test]
    fn long_term_sampling_detects_a_policer_and_drops_it_after_48_rounds() {
        let mut d = LtDrive::new();
        // (bytes delivered, lost so far, segments lost on this ACK → sampling, rounds in
        // the interval, lt_bw, policed). Rounds count from the ACK that starts sampling.
        let table = [
            // 1 s: the first loss starts an interval at (1000 ms, 2000 B, 512 B lost).
            (2000, 512, 1, true, 1, 0, false),
            (2000, 1024, 1, true, 2, 0, false),
            (2000, 1536, 1, true, 3, 0, false),
            // 4 s, 4th round, a loss: lost 2048 − 512 = 1536, delivered 8000 − 2000 = 6000;
            // 1536 · 256 = 393 216 ≥ 50 · 6000 = 300 000 (lossy) → 6000 B / 3000 ms =
            // 2000 B/s; no earlier interval: keep it, start the next at (4000, 8000, 2048).
            (2000, 2048, 1, true, 0, 2000, false),
            (2100, 2560, 1, true, 1, 2000, false),
            (2100, 3072, 0, true, 2, 2000, false),
            (2100, 3584, 0, true, 3, 2000, false),
            // 8 s: lost 4096 − 2048 = 2048, delivered 16 400 − 8000 = 8400; 524 288 ≥
            // 420 000 → 8400 / 4000 ms = 2100 B/s; |2100 − 2000| · 256 = 25 600 ≤ 2000 ·
            // 32 = 64 000 (within 1/8) → policed at (2100 + 2000) / 2 = 2050 B/s.
            (2100, 4096, 1, true, 0, 2050, true),
        ];
        for (i, (delivered, lost, losses, sampling, rtts, lt_bw, policed)) in
            table.into_iter().enumerate()
        {
            d.ack(delivered, lost, losses, false);
            let b = &d.b;
            assert_eq!(
                (b.lt_is_sampling, b.lt_rtt_cnt, b.lt_bw, b.lt_use_bw),
                (sampling, rtts, lt_bw, policed),
                "ACK {}",
                i + 1
            );
        }
        // Policed: BBR paces at 1 × 2050 B/s though BtlBw still says 3750, and sizes cwnd
        // from 2050: 2 × 2050 · 0.64 = 2624 B → 11 segments + 3 = 14 → 3584 B.
        assert_eq!((d.b.btl_bw(), d.b.bw()), (3750, 2050));
        assert_eq!((d.b.pacing_gain, d.b.pacing_rate), (UNIT, 2050));
        assert_eq!(d.b.cwnd, 3584);
        // 48 rounds in ProbeBW later the policed rate is dropped and gain cycling restarts.
        for round in 1..48 {
            d.ack(2050, 4096, 0, false);
            assert_eq!((d.b.lt_use_bw, d.b.lt_rtt_cnt), (true, round));
        }
        d.ack(2050, 4096, 0, false);
        assert_eq!(
            (d.b.lt_use_bw, d.b.lt_bw, d.b.lt_is_sampling),
            (false, 0, false)
        );
        assert_eq!(d.b.bw(), d.b.btl_bw());
    }

    #[test]
    fn long_term_sampling_restarts_on_app_limited_long_or_inconsistent_intervals() {
        // Inconsistent rates: 2000 then 1000 B/s (diff 1000: 256 000 > 64 000 and > 500 B/s)
        // → the second becomes the candidate, not policed.
        let mut d = LtDrive::new();
        for (delivered, lost, losses) in [(2000, 512, 1), (2000, 1024, 1), (2000, 1536, 1)] {
            d.ack(delivered, lost, losses, false);
        }
        d.ack(2000, 2048, 1, false); // lt_bw 2000, as above
        for lost in [2304, 2560, 2816] {
            d.ack(1000, lost, 1, false);
        }
        // lost 3072 − 2048 = 1024, delivered 4000: 262 144 ≥ 200 000 → 4000 / 4000 ms.
        d.ack(1000, 3072, 1, false);
        assert_eq!((d.b.lt_bw, d.b.lt_use_bw, d.b.lt_rtt_cnt), (1000, false, 0));
        // Within 4 kbit/s (500 B/s) though not within 1/8: 1000 then 1400 B/s (diff 400:
        // 102 400 > 32 000, but 400 ≤ 500) → policed at 1200.
        for lost in [3584, 4096, 4608] {
            d.ack(1400, lost, 1, false);
        }
        // lost 5120 − 3072 = 2048, delivered 5600: 524 288 ≥ 280 000 → 5600 / 4000 ms.
        d.ack(1400, 5120, 1, false);
        assert_eq!((d.b.lt_bw, d.b.lt_use_bw), (1200, true));

        // An application-limited sample ends sampling (it would under-estimate the rate).
        let mut d = LtDrive::new();
        d.ack(2000, 512, 1, false);
        assert!(d.b.lt_is_sampling);
        d.ack(2000, 512, 0, true);
        assert_eq!(
            (d.b.lt_is_sampling, d.b.lt_bw, d.b.lt_rtt_cnt),
            (false, 0, 0)
        );

        // Not lossy enough: 17 rounds without reaching 20 % → the interval is too long.
        let mut d = LtDrive::new();
        d.ack(2000, 512, 1, false);
        for round in 2..=16 {
            // Lost since the interval began: 64·round B of 2000·(round − 1) B delivered,
            // at most 128 / 2000 = 6.4 % < 50/256 ≈ 19.5 %.
            d.ack(2000, 512 + 512 * round / 8, 1, false);
            assert_eq!((d.b.lt_is_sampling, d.b.lt_rtt_cnt), (true, round as u32));
        }
        d.ack(2000, 2048, 0, false);
        assert_eq!((d.b.lt_is_sampling, d.b.lt_rtt_cnt), (false, 0));

        // A timeout counts as a loss at the end of a round: it starts sampling.
        let mut d = LtDrive::new();
        let cx = d.cx(10 * 256);
        d.b.on_rto(&cx);
        assert_eq!((d.b.lt_is_sampling, d.b.lt_rtt_cnt), (true, 1));
    }
}
