//! The phases of one LwM2M Client (docs/model.md "LwM2M devices"), sans-IO: it is told when it
//! starts, when its uplink exchanges end (through the CoAP client that carries them, with its
//! congestion control) and when its timers fire, and answers with uplinks to start and timers to
//! arm.

use coaplab_cc::{Duration, Instant};

pub use super::Timer;
use super::{Counters, Params, Uplink, COMMUNICATION_RETRY_COUNT, COMMUNICATION_RETRY_TIMER_S};

/// What the device asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Out {
    /// Start an uplink exchange: its kind, its Block2 number (firmware) and payload, bytes.
    Send {
        what: Uplink,
        block: Option<u32>,
        payload: u16,
    },
    /// Call [`Device::on_timer`] with this timer at `at`.
    Arm { at: Instant, timer: Timer },
}

/// One LwM2M Client.
#[derive(Clone, Debug)]
pub struct Device {
    p: Params,
    registered: bool,
    ever_registered: bool,
    /// When the first Register of the device was sent.
    first_attempt: Option<Instant>,
    /// Register attempts in the current sequence.
    attempt: u32,
    fw_started: Option<Instant>,
    /// When the device last sent anything (queue mode: it stays reachable after it).
    pub last_uplink: Option<Instant>,
    pub counters: Counters,
}

impl Device {
    pub fn new(p: Params) -> Self {
        Device {
            p,
            registered: false,
            ever_registered: false,
            first_attempt: None,
            attempt: 0,
            fw_started: None,
            last_uplink: None,
            counters: Counters::default(),
        }
    }

    pub fn registered(&self) -> bool {
        self.registered
    }

    /// The device starts: its first Register.
    pub fn start(&mut self, now: Instant, out: &mut Vec<Out>) {
        self.first_attempt = Some(now);
        self.register(out);
    }

    fn register(&mut self, out: &mut Vec<Out>) {
        self.attempt += 1;
        out.push(Out::Send {
            what: Uplink::Register,
            block: None,
            payload: self.p.register_bytes,
        });
    }

    /// The device sent a packet at `now`.
    pub fn on_uplink_sent(&mut self, now: Instant) {
        self.last_uplink = Some(now);
    }

    /// Whether the device listens at `now`: always without queue mode; in queue mode, for the
    /// window after its last uplink (OMA-TS-LightweightM2M_Transport-V1_1 §6.5).
    pub fn reachable(&self, now: Instant) -> bool {
        match self.p.queue_window {
            None => true,
            Some(w) => self.last_uplink.is_some_and(|t| now < t + w),
        }
    }

    /// An uplink exchange of kind `what` ended at `now` (`ok`: its response arrived; else it
    /// failed after its retransmissions). `started` is when it started.
    pub fn on_ended(
        &mut self,
        now: Instant,
        what: Uplink,
        block: Option<u32>,
        ok: bool,
        out: &mut Vec<Out>,
    ) {
        match (what, ok) {
            (Uplink::Register, true) => {
                self.registered = true;
                self.attempt = 0;
                if !self.ever_registered {
                    self.ever_registered = true;
                    let first = self.first_attempt.unwrap_or(now);
                    self.counters.register_s.push((now - first).secs_f64());
                    self.after_first_registration(now, out);
                }
                self.arm_update(now, out);
            }
            (Uplink::Register, false) => {
                // Core 1.1 §6.2.1.1: up to Communication Retry Count attempts, the n-th failure
                // followed by Communication Retry Timer · 2^(n−1) (Wakaama
                // `prv_handleRegistrationAttemptFailure`). The Sequence Retry Count's default, 1,
                // allows no second sequence: the registration has failed.
                if self.attempt >= COMMUNICATION_RETRY_COUNT {
                    self.counters.registrations_failed += 1;
                    self.attempt = 0;
                } else {
                    let wait = COMMUNICATION_RETRY_TIMER_S << (self.attempt - 1);
                    out.push(Out::Arm {
                        at: now + Duration::from_secs(wait),
                        timer: Timer::RegisterRetry,
                    });
                }
            }
            (Uplink::Update, true) => self.arm_update(now, out),
            (Uplink::Update, false) => {
                // Wakaama `prv_handleRegistrationUpdateReply`: STATE_REG_FAILED; the device
                // registers again (a new sequence; simplification, docs/model.md).
                self.counters.updates_failed += 1;
                self.registered = false;
                self.register(out);
            }
            (Uplink::Notify, true) => self.counters.notifications_delivered += 1,
            (Uplink::Notify, false) => {}
            (Uplink::Firmware, true) => {
                let next = block.map_or(0, |b| b + 1);
                if next < self.p.firmware_blocks {
                    out.push(self.block(next));
                } else if let Some(t) = self.fw_started {
                    self.counters.firmware_s.push((now - t).secs_f64());
                }
            }
            // A lost block halts the transfer (Wakaama issue #555): the pull has failed.
            (Uplink::Firmware, false) => self.counters.firmware_failed += 1,
        }
    }

    fn block(&self, n: u32) -> Out {
        Out::Send {
            what: Uplink::Firmware,
            block: Some(n),
            payload: 0,
        }
    }

    fn arm_update(&mut self, now: Instant, out: &mut Vec<Out>) {
        let at = now + self.p.update_interval();
        if at < self.p.deadline {
            out.push(Out::Arm {
                at,
                timer: Timer::Update,
            });
        }
    }

    fn after_first_registration(&mut self, now: Instant, out: &mut Vec<Out>) {
        if let Some(period) = self.p.notify_period {
            if now + period < self.p.deadline {
                out.push(Out::Arm {
                    at: now + period,
                    timer: Timer::Notify,
                });
            }
        }
        if self.p.firmware_blocks > 0 {
            let at = (Instant::ZERO + self.p.firmware_at).max(now);
            out.push(Out::Arm {
                at,
                timer: Timer::Firmware,
            });
        }
    }

    pub fn on_timer(&mut self, now: Instant, timer: Timer, out: &mut Vec<Out>) {
        match timer {
            Timer::RegisterRetry => self.register(out),
            Timer::Update if self.registered && now < self.p.deadline => {
                self.counters.updates_sent += 1;
                out.push(Out::Send {
                    what: Uplink::Update,
                    block: None,
                    payload: 0,
                });
            }
            Timer::Update => {}
            Timer::Notify => {
                if self.registered {
                    out.push(Out::Send {
                        what: Uplink::Notify,
                        block: None,
                        payload: self.p.notify_bytes,
                    });
                }
                if let Some(period) = self.p.notify_period {
                    if now + period < self.p.deadline {
                        out.push(Out::Arm {
                            at: now + period,
                            timer: Timer::Notify,
                        });
                    }
                }
            }
            Timer::Firmware => {
                self.fw_started = Some(now);
                out.push(self.block(0));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(lifetime_s: u64, deadline_s: u64) -> Params {
        Params {
            register_bytes: 76,
            lifetime: Duration::from_secs(lifetime_s),
            queue_window: Some(Duration::from_secs(93)),
            reads_per_day: 0.0,
            notify_period: None,
            notify_bytes: 12,
            firmware_blocks: 0,
            firmware_at: Duration::ZERO,
            deadline: Instant::from_secs(deadline_s),
        }
    }

    fn arms(out: &[Out]) -> Vec<(u64, Timer)> {
        out.iter()
            .filter_map(|o| match o {
                Out::Arm { at, timer } => Some((at.nanos(), *timer)),
                _ => None,
            })
            .collect()
    }

    const S: u64 = 1_000_000_000;

    #[test]
    fn updates_follow_each_reply_by_lifetime_minus_max_transmit_wait() {
        // Lifetime 86400 s: Wakaama `registration_step` updates 86400 − 93 = 86307 s after the
        // reply; registered at 1 s → the first Update at 86308 s.
        let mut d = Device::new(params(86_400, 200_000));
        let mut out = Vec::new();
        d.start(Instant::ZERO, &mut out);
        assert_eq!(
            out,
            vec![Out::Send {
                what: Uplink::Register,
                block: None,
                payload: 76
            }]
        );
        out.clear();
        d.on_ended(
            Instant::from_secs(1),
            Uplink::Register,
            None,
            true,
            &mut out,
        );
        assert_eq!(arms(&out), vec![(86_308 * S, Timer::Update)]);
        assert_eq!(d.counters.register_s, vec![1.0]);
        // The Update is sent when its timer fires, answered 2 s later: next at 86310 + 86307.
        out.clear();
        d.on_timer(Instant::from_secs(86_308), Timer::Update, &mut out);
        assert_eq!(d.counters.updates_sent, 1);
        out.clear();
        d.on_ended(
            Instant::from_secs(86_310),
            Uplink::Update,
            None,
            true,
            &mut out,
        );
        assert_eq!(arms(&out), vec![(172_617 * S, Timer::Update)]);
        // Lifetime 60 s ≤ 93 s: half the lifetime (`nextUpdate >> 1`), 30 s.
        assert_eq!(params(60, 1).update_interval(), Duration::from_secs(30));
        // No Update past the deadline (200000 s): 172617 + 86307 is beyond it.
        out.clear();
        d.on_ended(
            Instant::from_secs(172_620),
            Uplink::Update,
            None,
            true,
            &mut out,
        );
        assert!(arms(&out).is_empty());
    }

    #[test]
    fn registration_retries_back_off_then_fail() {
        // Core 1.1 §6.2.1.1 defaults (Wakaama): 5 attempts, waits 60, 120, 240, 480 s.
        let mut d = Device::new(params(86_400, 100_000));
        let mut out = Vec::new();
        d.start(Instant::ZERO, &mut out);
        let mut now = 0;
        for wait in [60, 120, 240, 480] {
            out.clear();
            d.on_ended(
                Instant::from_secs(now),
                Uplink::Register,
                None,
                false,
                &mut out,
            );
            assert_eq!(arms(&out), vec![((now + wait) * S, Timer::RegisterRetry)]);
            now += wait;
            out.clear();
            d.on_timer(Instant::from_secs(now), Timer::RegisterRetry, &mut out);
            assert!(matches!(
                out[0],
                Out::Send {
                    what: Uplink::Register,
                    ..
                }
            ));
        }
        out.clear();
        d.on_ended(
            Instant::from_secs(now),
            Uplink::Register,
            None,
            false,
            &mut out,
        );
        assert!(out.is_empty());
        assert_eq!(d.counters.registrations_failed, 1);
        assert!(d.counters.register_s.is_empty());
    }

    #[test]
    fn a_failed_update_registers_again() {
        let mut d = Device::new(params(300, 10_000));
        let mut out = Vec::new();
        d.start(Instant::ZERO, &mut out);
        d.on_ended(
            Instant::from_secs(1),
            Uplink::Register,
            None,
            true,
            &mut out,
        );
        out.clear();
        d.on_ended(
            Instant::from_secs(210),
            Uplink::Update,
            None,
            false,
            &mut out,
        );
        assert_eq!(d.counters.updates_failed, 1);
        assert!(!d.registered());
        assert!(matches!(
            out[0],
            Out::Send {
                what: Uplink::Register,
                ..
            }
        ));
    }

    #[test]
    fn queue_window_expires_93_s_after_the_last_uplink() {
        let mut d = Device::new(params(86_400, 1000));
        assert!(!d.reachable(Instant::ZERO)); // never sent: asleep
        d.on_uplink_sent(Instant::from_secs(10));
        assert!(d.reachable(Instant::from_secs(10)));
        // 10 + 93 = 103 s: reachable until just before.
        assert!(d.reachable(Instant::from_nanos(103 * S - 1)));
        assert!(!d.reachable(Instant::from_secs(103)));
        // Without queue mode the device always listens.
        let always = Device::new(Params {
            queue_window: None,
            ..params(86_400, 1000)
        });
        assert!(always.reachable(Instant::ZERO));
    }

    #[test]
    fn a_lost_block_halts_the_firmware_pull() {
        let mut d = Device::new(Params {
            firmware_blocks: 3,
            firmware_at: Duration::from_secs(50),
            ..params(86_400, 1000)
        });
        let mut out = Vec::new();
        d.start(Instant::ZERO, &mut out);
        out.clear();
        d.on_ended(
            Instant::from_secs(1),
            Uplink::Register,
            None,
            true,
            &mut out,
        );
        // The pull starts at firmware_at (50 s), after the registration.
        assert!(arms(&out).contains(&(50 * S, Timer::Firmware)));
        out.clear();
        d.on_timer(Instant::from_secs(50), Timer::Firmware, &mut out);
        let block = |n| Out::Send {
            what: Uplink::Firmware,
            block: Some(n),
            payload: 0,
        };
        assert_eq!(out, vec![block(0)]);
        out.clear();
        d.on_ended(
            Instant::from_secs(51),
            Uplink::Firmware,
            Some(0),
            true,
            &mut out,
        );
        assert_eq!(out, vec![block(1)]);
        out.clear();
        d.on_ended(
            Instant::from_secs(60),
            Uplink::Firmware,
            Some(1),
            false,
            &mut out,
        );
        assert!(out.is_empty());
        assert_eq!(d.counters.firmware_failed, 1);
        assert!(d.counters.firmware_s.is_empty());
    }
}
