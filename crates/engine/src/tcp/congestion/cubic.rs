//! CUBIC (RFC 9438) with HyStart, as Linux implements it (net/ipv4/tcp_cubic.c, v2.3;
//! the function names in the comments are Linux's). Its window after a congestion event
//! follows `W_cubic(t) = C·(t − K)³ + W_max`, `K = ∛(W_max·(1 − β)/C)`, β = 0.7 (Linux
//! `beta` 717/1024), C = 0.4 (RFC 9438 §4.1; Linux's fixed point `bic_scale` 41 gives
//! 0.4004), in segments and seconds.
//!
//! Differences from Linux, all documented in docs/model.md ("CUBIC"): windows in bytes
//! (CUBIC's own arithmetic in whole segments, `cwnd / MSS`); exact time instead of jiffies,
//! so `bictcp_update` recomputes `cnt` on every ACK (Linux at most once per jiffy and not
//! within `HZ/32` of the last update at the same window); fast recovery is the model's
//! RFC 6582 (inflation, deflation) where Linux uses PRR; no `tcp_is_cwnd_limited` check
//! (the model's New Reno grows without it too); no `CA_EVENT_TX_START` epoch shift after
//! idle; HyStart sees RTT samples only on ACKs outside fast recovery.

use std::any::Any;

use coaplab_cc::{Duration, Instant};

use super::super::seq::Seq;
use super::controller::{Ack, AckContext, Controller, ControllerParams, Snapshot};
use super::new_reno::slow_start;

/// β, the multiplicative decrease factor: Linux `beta` = 717 / `BICTCP_BETA_SCALE` 1024
/// (RFC 9438 §4.6 β_cubic = 0.7).
pub const BETA: u32 = 717;
pub const BETA_SCALE: u32 = 1024;
/// C, the cubic function's scaling constant, segments / s³ (RFC 9438 §4.1).
pub const C: f64 = 0.4;
/// Linux `beta_scale` = 8·(1024 + 717) / 3 / (1024 − 717) = 15 (integer arithmetic): the
/// TCP-friendly estimate grows by one segment per `cwnd·15/8` segments acknowledged, Linux's
/// form of RFC 9438 §4.3's α = 3(1 − β)/(1 + β) ≈ 0.529 ≈ 8/15.
const FRIENDLY_SCALE: u32 = 8 * (BETA_SCALE + BETA) / 3 / (BETA_SCALE - BETA);
/// `hystart_low_window`: HyStart runs from a window of 16 segments.
pub const HYSTART_LOW_WINDOW: u32 = 16;
/// `hystart_ack_delta_us`: ACKs closer than 2 ms form a train.
pub const HYSTART_ACK_DELTA: Duration = Duration::from_micros(2000);
/// `hystart_ack_delay`: min(1 ms, `sk_gso_max_size`·4 / pacing rate). With the 64 KiB GSO
/// size the 1 ms cap binds below 262 MB/s, far above any rate of the model.
pub const HYSTART_ACK_DELAY: Duration = Duration::from_millis(1);
/// `HYSTART_MIN_SAMPLES`: RTT samples per round before the delay test.
pub const HYSTART_MIN_SAMPLES: u32 = 8;
/// `HYSTART_DELAY_MIN` / `HYSTART_DELAY_MAX`: the delay increase that ends slow start is
/// `delay_min / 8` clamped to [4 ms, 16 ms].
pub const HYSTART_DELAY_MIN: Duration = Duration::from_millis(4);
pub const HYSTART_DELAY_MAX: Duration = Duration::from_millis(16);
/// `cubictcp_acked`: delay samples within 1 s (`HZ`) of an epoch's start are discarded.
const SAMPLE_HOLDOFF: Duration = Duration::from_secs(1);

#[derive(Clone, Debug)]
pub struct Cubic {
    mss: u32,
    cwnd: u32,
    ssthresh: u32,
    /// Slow-start growth limit per ACK, bytes (as New Reno's).
    ss_limit: u32,
    /// `tp->snd_cwnd_cnt` in bytes: acknowledged since `cwnd` last grew.
    ca_acked: u32,
    /// `ca->cnt`: segments acknowledged per one-segment increase.
    pub cnt: u32,
    /// `last_max_cwnd`: W_max, segments.
    pub w_max: u32,
    /// `epoch_start`: the start of the current growth epoch (None after a congestion event).
    epoch_start: Option<Instant>,
    /// `bic_origin_point`, segments.
    origin: u32,
    /// `bic_K`, seconds.
    pub k: f64,
    /// `ack_cnt` in bytes, for the TCP-friendly estimate.
    ack_cnt: u32,
    /// `tcp_cwnd`: the TCP-friendly (Reno-equivalent) window estimate, segments.
    pub tcp_cwnd: u32,
    /// `delay_min`.
    pub delay_min: Option<Duration>,
    /// HyStart (`found`, `round_start`, `end_seq`, `last_ack`, `curr_rtt`, `sample_cnt`).
    /// `end_seq` None: the round ends at the next ACK (set at init and after a timeout,
    /// where Linux takes `snd_nxt`, which the next ACK of data passes).
    pub found: bool,
    round_start: Instant,
    end_seq: Option<Seq>,
    last_ack: Instant,
    curr_rtt: Option<Duration>,
    sample_cnt: u32,
}

impl Cubic {
    pub fn new(cfg: &ControllerParams) -> Self {
        Cubic {
            mss: cfg.mss,
            cwnd: cfg.initial_window_segments * cfg.mss,
            // `initial_ssthresh` 0 with HyStart on: `TCP_INFINITE_SSTHRESH`.
            ssthresh: u32::MAX,
            ss_limit: cfg
                .slow_start_limit_segments
                .map_or(u32::MAX, |l| l * cfg.mss),
            ca_acked: 0,
            cnt: 0,
            w_max: 0,
            epoch_start: None,
            origin: 0,
            k: 0.0,
            ack_cnt: 0,
            tcp_cwnd: 0,
            delay_min: None,
            found: false,
            round_start: Instant::ZERO,
            end_seq: None,
            last_ack: Instant::ZERO,
            curr_rtt: None,
            sample_cnt: 0,
        }
    }

    fn segments(&self) -> u32 {
        self.cwnd / self.mss.max(1)
    }

    /// `bictcp_reset` and `bictcp_hystart_reset`.
    fn reset(&mut self, now: Instant) {
        self.cnt = 0;
        self.w_max = 0;
        self.epoch_start = None;
        self.origin = 0;
        self.k = 0.0;
        self.ack_cnt = 0;
        self.tcp_cwnd = 0;
        self.delay_min = None;
        self.found = false;
        self.hystart_reset(now, None);
    }

    /// `bictcp_hystart_reset`: a new round of HyStart's measurements.
    fn hystart_reset(&mut self, now: Instant, snd_nxt: Option<Seq>) {
        self.round_start = now;
        self.last_ack = now;
        self.end_seq = snd_nxt;
        self.curr_rtt = None;
        self.sample_cnt = 0;
    }

    /// `cubictcp_acked`: the ACK's RTT sample feeds `delay_min` and HyStart.
    fn on_rtt_sample(&mut self, ack: &Ack, delay: Duration) {
        if self
            .epoch_start
            .is_some_and(|e| ack.now.saturating_since(e) < SAMPLE_HOLDOFF)
        {
            return;
        }
        let delay = delay.max(Duration::from_micros(1));
        if self.delay_min.is_none_or(|m| m > delay) {
            self.delay_min = Some(delay);
        }
        if !self.found && self.cwnd < self.ssthresh && self.segments() >= HYSTART_LOW_WINDOW {
            self.hystart_update(ack, delay);
        }
    }

    /// `hystart_update`: HyStart's ACK-train and delay-increase detection; either ends slow
    /// start by setting `ssthresh = cwnd`.
    fn hystart_update(&mut self, ack: &Ack, delay: Duration) {
        if self.end_seq.is_none_or(|e| ack.snd_una > e) {
            self.hystart_reset(ack.now, Some(ack.snd_nxt));
        }
        let delay_min = self.delay_min.unwrap_or(delay);
        // ACK train: ACKs no more than 2 ms apart since the round began, for longer than
        // (delay_min + ack delay) / 2 (no pacing: `SK_PACING_NONE` halves the threshold).
        if ack.now.saturating_since(self.last_ack) <= HYSTART_ACK_DELTA {
            self.last_ack = ack.now;
            let threshold = (delay_min + HYSTART_ACK_DELAY).mul_ratio(1, 2);
            if ack.now.saturating_since(self.round_start) > threshold {
                self.found = true;
                self.ssthresh = self.cwnd;
            }
        }
        // Delay increase: the round's smallest RTT, after 8 samples, exceeds delay_min by
        // delay_min/8 clamped to [4, 16] ms.
        self.curr_rtt = Some(self.curr_rtt.map_or(delay, |c| c.min(delay)));
        if self.sample_cnt < HYSTART_MIN_SAMPLES {
            self.sample_cnt += 1;
        } else {
            let margin = delay_min
                .mul_ratio(1, 8)
                .clamp(HYSTART_DELAY_MIN, HYSTART_DELAY_MAX);
            if self.curr_rtt.is_some_and(|c| c > delay_min + margin) {
                self.found = true;
                self.ssthresh = self.cwnd;
            }
        }
    }

    /// `W_cubic(t)` of the current epoch, segments (Linux `bic_target`: the origin ± the
    /// whole segments of C·|t − K|³).
    pub fn w_cubic(&self, t: Duration) -> u32 {
        let t = t.secs_f64();
        let offs = (t - self.k).abs();
        let delta = (C * offs * offs * offs) as u32;
        if t < self.k {
            self.origin.saturating_sub(delta)
        } else {
            self.origin.saturating_add(delta)
        }
    }

    /// `bictcp_update`: `cnt`, the segments to acknowledge per one-segment increase, from the
    /// cubic function and the TCP-friendly estimate.
    fn update(&mut self, now: Instant, acked: u32) {
        let cwnd = self.segments().max(1);
        self.ack_cnt = self.ack_cnt.saturating_add(acked);
        let epoch = match self.epoch_start {
            Some(e) => e,
            None => {
                // A new epoch: the curve's origin is W_max, reached K seconds from now.
                self.epoch_start = Some(now);
                self.ack_cnt = acked;
                self.tcp_cwnd = cwnd;
                if self.w_max <= cwnd {
                    self.k = 0.0;
                    self.origin = cwnd;
                } else {
                    self.k = (f64::from(self.w_max - cwnd) / C).cbrt();
                    self.origin = self.w_max;
                }
                now
            }
        };
        // t is one minimum RTT ahead: the window the curve asks for when this ACK's data
        // is acknowledged.
        let t = now.saturating_since(epoch) + self.delay_min.unwrap_or(Duration::ZERO);
        let target = self.w_cubic(t);
        self.cnt = if target > cwnd {
            cwnd / (target - cwnd)
        } else {
            100 * cwnd // very small increment
        };
        // No W_max yet (no loss so far): at least 5 % per RTT.
        if self.w_max == 0 && self.cnt > 20 {
            self.cnt = 20;
        }
        // TCP-friendly region (RFC 9438 §4.3): one segment per cwnd·15/8 acknowledged.
        let per_segment = ((cwnd * FRIENDLY_SCALE) >> 3).max(1) * self.mss;
        while self.ack_cnt > per_segment {
            self.ack_cnt -= per_segment;
            self.tcp_cwnd += 1;
        }
        if self.tcp_cwnd > cwnd {
            let max_cnt = cwnd / (self.tcp_cwnd - cwnd);
            self.cnt = self.cnt.min(max_cnt);
        }
        // At most one segment per two acknowledged (×1.5 per RTT).
        self.cnt = self.cnt.max(2);
    }
}

impl Controller for Cubic {
    /// `cubictcp_init`.
    fn on_established(&mut self, _mss: u32, now: Instant, _rtt: Option<Duration>, _seed: u64) {
        self.reset(now);
    }
    fn window(&self) -> u32 {
        self.cwnd
    }
    fn ssthresh(&self) -> u32 {
        self.ssthresh
    }
    fn set_window(&mut self, bytes: u32) {
        self.cwnd = bytes.max(self.mss);
        self.ca_acked = 0;
    }
    /// `cubictcp_acked` then `cubictcp_cong_avoid`: slow start (`tcp_slow_start`), then
    /// `bictcp_update` and `tcp_cong_avoid_ai` for what slow start left.
    fn on_ack(&mut self, ack: &Ack) {
        if let Some(rtt) = ack.rtt {
            self.on_rtt_sample(ack, rtt);
        }
        let mut acked = ack.bytes;
        if self.cwnd < self.ssthresh {
            acked = slow_start(&mut self.cwnd, self.ssthresh, acked, self.ss_limit);
            if acked == 0 {
                return;
            }
        }
        self.update(ack.now, acked);
        let w = self.cnt * self.mss;
        self.ca_acked += acked;
        if self.ca_acked >= w {
            let delta = self.ca_acked / w;
            self.ca_acked -= delta * w;
            self.cwnd = self.cwnd.saturating_add(delta * self.mss);
        }
    }
    /// `cubictcp_recalc_ssthresh`: the epoch ends; W_max is the window now, or with fast
    /// convergence (the window did not regain the last W_max) (1 + β)/2 of it; ssthresh is
    /// β·cwnd, at least 2 segments.
    fn on_congestion_event(&mut self, _now: Instant, _flight: u32) -> u32 {
        self.epoch_start = None;
        let cwnd = self.segments();
        self.w_max = if cwnd < self.w_max {
            cwnd * (BETA_SCALE + BETA) / (2 * BETA_SCALE)
        } else {
            cwnd
        };
        self.ssthresh = (cwnd * BETA / BETA_SCALE).max(2) * self.mss;
        self.ssthresh
    }
    /// `tcp_enter_loss`: ssthresh as for a congestion event unless the timer already resent
    /// this segment, cwnd 1 segment, then `cubictcp_state(TCP_CA_Loss)` resets CUBIC's and
    /// HyStart's state (W_max included).
    fn on_rto(&mut self, flight: u32, repeated: bool, cx: &AckContext) {
        if !repeated {
            self.on_congestion_event(cx.now, flight);
        }
        self.cwnd = self.mss;
        self.ca_acked = 0;
        self.reset(cx.now);
    }
    fn snapshot(&self) -> Option<Snapshot> {
        Some(Snapshot {
            mode: if self.cwnd < self.ssthresh {
                "slow_start"
            } else {
                "avoidance"
            },
            bandwidth: 0,
            min_rtt: self.delay_min,
            pacing_rate: 0,
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
