//! RFC 7641 Observe (docs/model.md "Observe"): the server's notifier, one per observer, and
//! the observer's side (freshness, re-registration). Sans-IO: both are told `now` and events
//! and return what to do; the testbed (`world/observe_app.rs`) carries the packets and timers.
//!
//! The notifier sends each new value of the observed resource to its observer, as the
//! client's exchanges do, through the group's congestion-control algorithm (`coap.cc`, the
//! `coaplab_cc` API: `on_exchange_start`, `on_timeout`, `on_response`), so a CON
//! notification's timer, back-off and giving up are the algorithm's. Its rules:
//!
//! - RFC 7641 §4.5.1: at most one CON notification in flight per observer (NSTART 1, RFC 7252
//!   §4.7).
//! - RFC 7641 §4.5.2: a value generated while a CON notification awaits its ACK replaces it:
//!   the notification is not sent at once, the next retransmission (at the timer the algorithm
//!   armed, with the retransmission counter going on) carries the newest value, as a new
//!   message (a new Message ID, so that the client does not take it for a duplicate, RFC 7252
//!   §4.5). The replaced value is counted as superseded. An ACK to any message of the exchange
//!   ends it.
//! - RFC 7641 §4.5: a notification is CON, NON, or (`non-con`) NON with a CON when the last
//!   CON (or the registration) is `con_every` old — "at least every 24 hours".
//! - RFC 7641 §4.5: a CON notification that times out (the algorithm gives up) removes the
//!   observer: no notification goes to it until it registers again.
//! - NON notifications are not limited by the one-CON rule; with `coap.probing_rate_bps`
//!   they wait for PROBING_RATE (RFC 7252 §4.7, `coap::probing`): a NON notification that may
//!   not leave yet is held, and a newer value replaces the held one (superseded).
//!
//! The observer (`Observer`) keeps the newest value it received (RFC 7641 §3.4: a notification
//! older than the newest one received is not fresh and is ignored; here values are numbered in
//! order so the sequence numbers compare directly) and re-registers when it heard nothing fresh
//! for `max_age + REREGISTRATION_MARGIN` since its last fresh notification or registration
//! (RFC 7641 §3.3.1: once Max-Age has passed without a notification the client cannot tell
//! whether it still observes the resource, and may register again).

use coaplab_cc::rng::Xoshiro256pp;
use coaplab_cc::{Algorithm, Duration, Exchange, Instant, TimeoutDecision};

use crate::coap::probing::ProbingLimit;

pub use crate::coap::notify::NotifyMode;

/// How long past Max-Age an observer waits for a notification before it registers again:
/// MAX_LATENCY, RFC 7252 §4.8.2 (100 s, the longest a datagram is assumed to take from sender
/// to receiver): a notification the server sends just before the previous one's Max-Age ends
/// may take that long to arrive.
pub const REREGISTRATION_MARGIN: Duration = Duration::from_secs(100);

/// One value of the observed resource: its number (0, 1, 2, … per observer) and when the
/// resource took it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Value {
    pub seq: u32,
    pub generated: Instant,
}

/// A notification message the notifier sends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Notification {
    pub value: Value,
    pub con: bool,
    pub mid: u16,
    /// Transmission ordinal within its CON exchange (0 = the first; NON: 0).
    pub ordinal: u32,
}

/// What the notifier asks the testbed to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NotifierAction {
    /// Put this notification on the downlink now.
    Send(Notification),
    /// Call `on_timer(generation)` at `at` (the CON timer).
    ArmTimer { at: Instant, generation: u32 },
    /// Call `on_wake(generation)` at `at` (a NON held by PROBING_RATE may leave).
    ArmWake { at: Instant, generation: u32 },
    /// The CON notification timed out: the observer was removed (RFC 7641 §4.5).
    Removed,
}

/// A notifier's counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NotifierStats {
    /// Notification transmissions (CON originals, CON retransmissions, NON).
    pub sent: u64,
    pub con_sent: u64,
    pub non_sent: u64,
    pub retransmissions: u64,
    /// Values replaced before they were sent (a newer value took their place).
    pub superseded: u64,
    /// CON notifications acknowledged.
    pub acked: u64,
    /// CON notifications that timed out (each removed the observer).
    pub removals: u64,
}

/// The CON notification awaiting its ACK.
#[derive(Clone, Copy, Debug)]
struct Pending {
    ex: Exchange,
    value: Value,
    /// The exchange's first Message ID and its latest (a replaced value takes a new one).
    first_mid: u16,
    mid: u16,
    /// The value its latest transmission carried.
    sent_seq: u32,
}

/// The server's notifier for one observer (see the module's documentation).
pub struct Notifier {
    algorithm: Algorithm,
    rng: Xoshiro256pp,
    mode: NotifyMode,
    con_every: Duration,
    registered: bool,
    pending: Option<Pending>,
    timer_generation: u32,
    last_con: Option<Instant>,
    next_mid: u16,
    /// PROBING_RATE, and the IP size of a NON notification.
    probing: Option<(ProbingLimit, u32)>,
    held: Option<Value>,
    wake_at: Option<Instant>,
    wake_generation: u32,
    pub stats: NotifierStats,
}

impl Notifier {
    /// A notifier with the group's algorithm; `first_mid` numbers its messages;
    /// `probing` is PROBING_RATE (bytes/s) and the size of a NON notification (IP bytes).
    pub fn new(
        algorithm: Algorithm,
        rng: Xoshiro256pp,
        mode: NotifyMode,
        con_every: Duration,
        first_mid: u16,
        probing: Option<(f64, u32)>,
    ) -> Self {
        Notifier {
            algorithm,
            rng,
            mode,
            con_every,
            registered: false,
            pending: None,
            timer_generation: 0,
            last_con: None,
            next_mid: first_mid,
            probing: probing.map(|(rate, bytes)| (ProbingLimit::new(rate), bytes)),
            held: None,
            wake_at: None,
            wake_generation: 0,
            stats: NotifierStats::default(),
        }
    }

    /// Whether the observer is registered (not removed).
    pub fn registered(&self) -> bool {
        self.registered
    }

    /// The observer (re-)registered at `now`: its registration's response is the first
    /// notification (sent by the server as a piggybacked ACK, not here). A CON still pending
    /// from before is dropped; the `non-con` clock starts again (a registration shows the
    /// client is there, which is what the periodic CON checks).
    pub fn register(&mut self, now: Instant) {
        self.registered = true;
        if self.pending.take().is_some() {
            self.timer_generation += 1;
        }
        self.held = None;
        self.last_con = Some(now);
        if let Some((limit, _)) = self.probing.as_mut() {
            limit.answered(); // the client spoke: it responds
        }
    }

    fn take_mid(&mut self) -> u16 {
        let mid = self.next_mid;
        self.next_mid = self.next_mid.wrapping_add(1);
        mid
    }

    /// The resource took `value` at `now`: notify the observer, or replace what waits.
    pub fn on_value(&mut self, now: Instant, value: Value, out: &mut Vec<NotifierAction>) {
        if !self.registered {
            return;
        }
        if let Some(p) = self.pending.as_mut() {
            // RFC 7641 §4.5.2: the newer value goes with the next retransmission.
            p.value = value;
            self.stats.superseded += 1;
            return;
        }
        if self.held.is_some() {
            self.held = Some(value);
            self.stats.superseded += 1;
            return;
        }
        let con = match self.mode {
            NotifyMode::Con => true,
            NotifyMode::Non => false,
            NotifyMode::NonCon => self
                .last_con
                .is_none_or(|t| now.saturating_since(t) >= self.con_every),
        };
        if con {
            self.start_con(now, value, out);
        } else {
            self.send_non(now, value, out);
        }
    }

    fn start_con(&mut self, now: Instant, value: Value, out: &mut Vec<NotifierAction>) {
        let ex = self.algorithm.on_exchange_start(now, 0, &mut self.rng);
        let mid = self.take_mid();
        self.pending = Some(Pending {
            ex,
            value,
            first_mid: mid,
            mid,
            sent_seq: value.seq,
        });
        self.last_con = Some(now);
        self.timer_generation += 1;
        self.stats.sent += 1;
        self.stats.con_sent += 1;
        if let Some((limit, bytes)) = self.probing.as_mut() {
            limit.sent(now, *bytes);
        }
        out.push(NotifierAction::Send(Notification {
            value,
            con: true,
            mid,
            ordinal: 0,
        }));
        out.push(NotifierAction::ArmTimer {
            at: now + ex.timer,
            generation: self.timer_generation,
        });
    }

    fn send_non(&mut self, now: Instant, value: Value, out: &mut Vec<NotifierAction>) {
        if let Some((limit, bytes)) = self.probing.as_mut() {
            if let Some(at) = limit.wait(now, *bytes) {
                self.held = Some(value);
                if self.wake_at.is_none_or(|w| at < w) {
                    self.wake_generation += 1;
                    self.wake_at = Some(at);
                    out.push(NotifierAction::ArmWake {
                        at,
                        generation: self.wake_generation,
                    });
                }
                return;
            }
            limit.sent(now, *bytes);
        }
        let mid = self.take_mid();
        self.stats.sent += 1;
        self.stats.non_sent += 1;
        out.push(NotifierAction::Send(Notification {
            value,
            con: false,
            mid,
            ordinal: 0,
        }));
    }

    /// The CON timer of `generation` fired (stale generations are ignored): retransmit —
    /// the newest value — or, when the algorithm gives up, remove the observer.
    pub fn on_timer(&mut self, now: Instant, generation: u32, out: &mut Vec<NotifierAction>) {
        if generation != self.timer_generation {
            return;
        }
        let Some(mut p) = self.pending.take() else {
            return;
        };
        match self.algorithm.on_timeout(now, &mut p.ex) {
            TimeoutDecision::Retransmit { timer } => {
                if p.value.seq != p.sent_seq {
                    p.mid = self.take_mid(); // a new message: the newer value
                    p.sent_seq = p.value.seq;
                }
                self.timer_generation += 1;
                self.stats.sent += 1;
                self.stats.con_sent += 1;
                self.stats.retransmissions += 1;
                if let Some((limit, bytes)) = self.probing.as_mut() {
                    limit.sent(now, *bytes);
                }
                out.push(NotifierAction::Send(Notification {
                    value: p.value,
                    con: true,
                    mid: p.mid,
                    ordinal: p.ex.retransmissions,
                }));
                out.push(NotifierAction::ArmTimer {
                    at: now + timer,
                    generation: self.timer_generation,
                });
                self.pending = Some(p);
            }
            TimeoutDecision::Fail => {
                // RFC 7641 §4.5: the client is removed from the list of observers.
                self.registered = false;
                self.held = None;
                self.stats.removals += 1;
                out.push(NotifierAction::Removed);
            }
        }
    }

    /// An empty ACK with `mid` reached the server at `now`.
    pub fn on_ack(&mut self, now: Instant, mid: u16, out: &mut Vec<NotifierAction>) {
        if let Some((limit, _)) = self.probing.as_mut() {
            limit.answered();
        }
        let Some(p) = self.pending else {
            return self.release_held(now, out);
        };
        // Any message of the exchange: its first MID up to its latest (wrapping).
        if mid.wrapping_sub(p.first_mid) > p.mid.wrapping_sub(p.first_mid) {
            return;
        }
        self.algorithm.on_response(now, &p.ex, None);
        self.pending = None;
        self.timer_generation += 1;
        self.stats.acked += 1;
        self.release_held(now, out);
    }

    /// The PROBING_RATE wake-up of `generation` fired.
    pub fn on_wake(&mut self, now: Instant, generation: u32, out: &mut Vec<NotifierAction>) {
        if generation != self.wake_generation {
            return;
        }
        self.wake_at = None;
        self.release_held(now, out);
    }

    fn release_held(&mut self, now: Instant, out: &mut Vec<NotifierAction>) {
        if let Some(v) = self.held.take() {
            if self.registered {
                self.send_non(now, v, out);
            }
        }
    }
}

/// The observer's counters and freshness samples.
#[derive(Clone, Debug, Default)]
pub struct ObserverStats {
    /// Fresh notifications received (each a value newer than any before): distinct values
    /// delivered.
    pub delivered: u64,
    /// Notifications received that were not fresh (a duplicate, or older than the newest).
    pub stale: u64,
    /// At each fresh notification, `now − value.generated` (the value's age on arrival).
    pub ages: Vec<Duration>,
    pub reregistrations: u64,
}

/// The observer's side of one observation (see the module's documentation).
#[derive(Clone, Debug)]
pub struct Observer {
    patience: Duration,
    newest: Option<u32>,
    watch_generation: u32,
    pub stats: ObserverStats,
}

impl Observer {
    /// An observer re-registering after `max_age` + [`REREGISTRATION_MARGIN`] of silence.
    pub fn new(max_age: Duration) -> Self {
        Observer {
            patience: max_age + REREGISTRATION_MARGIN,
            newest: None,
            watch_generation: 0,
            stats: ObserverStats::default(),
        }
    }

    fn watch(&mut self, now: Instant) -> (Instant, u32) {
        self.watch_generation += 1;
        (now + self.patience, self.watch_generation)
    }

    /// The observer sent a registration at `now`: the watch (when, generation) to arm.
    pub fn on_registration_sent(&mut self, now: Instant) -> (Instant, u32) {
        self.watch(now)
    }

    /// A notification (or the registration's response) carrying `value` arrived at `now`:
    /// the watch to arm if it was fresh.
    pub fn on_notification(&mut self, now: Instant, value: Value) -> Option<(Instant, u32)> {
        if self.newest.is_some_and(|n| value.seq <= n) {
            self.stats.stale += 1;
            return None;
        }
        self.newest = Some(value.seq);
        self.stats.delivered += 1;
        self.stats.ages.push(now.saturating_since(value.generated));
        Some(self.watch(now))
    }

    /// The watch of `generation` fired at `now`: whether to register again (the run's
    /// `deadline` not reached). Counts the re-registration.
    pub fn on_watch(&mut self, now: Instant, generation: u32, deadline: Instant) -> bool {
        if generation != self.watch_generation || now >= deadline {
            return false;
        }
        self.stats.reregistrations += 1;
        true
    }
}

/// One observation: the server's notifier, the resource's values, the client's observer.
pub struct Observation {
    pub notifier: Notifier,
    pub observer: Observer,
    pub resource: Resource,
    pub payload: u32,
    /// The value the latest registration's response carries.
    pub registered_value: Option<Value>,
}

/// The observed resource's values, over UDP and TCP alike: one every `period` or at
/// `rate_per_s` (exactly one is given) until `deadline`, the gaps drawn from `values`.
pub struct Resource {
    values: Xoshiro256pp,
    period: Option<Duration>,
    rate_per_s: Option<f64>,
    pub deadline: Instant,
    /// The newest value (`None` until the first registration arrives).
    pub latest: Option<Value>,
    /// Values the resource took.
    pub generated: u64,
}

impl Resource {
    pub fn new(
        values: Xoshiro256pp,
        (period, rate_per_s, deadline): (Option<Duration>, Option<f64>, Instant),
    ) -> Self {
        Resource {
            values,
            period,
            rate_per_s,
            deadline,
            latest: None,
            generated: 0,
        }
    }

    /// When the value after one at `now` comes, if before the deadline.
    pub fn next_value_at(&mut self, now: Instant) -> Option<Instant> {
        let gap = match (self.period, self.rate_per_s) {
            (Some(p), _) => p,
            // An exponential gap of mean 1 / rate (`reporting::exception_gap` takes a daily rate).
            (_, Some(r)) => crate::reporting::exception_gap(&mut self.values, r * 86_400.0),
            _ => return None,
        };
        Some(now + gap).filter(|&t| t < self.deadline)
    }

    /// The resource takes a new value at `now`.
    pub fn take_value(&mut self, now: Instant) -> Value {
        let v = Value {
            seq: self.generated as u32,
            generated: now,
        };
        self.generated += 1;
        self.latest = Some(v);
        v
    }
}

impl Observation {
    /// An observation whose values come every `period` or at `rate_per_s` (exactly one is
    /// given) until `deadline`, drawn from `values`; notifications carry `payload` bytes.
    pub fn new(
        notifier: Notifier,
        observer: Observer,
        values: Xoshiro256pp,
        process: (Option<Duration>, Option<f64>, Instant),
        payload: u32,
    ) -> Self {
        Observation {
            notifier,
            observer,
            resource: Resource::new(values, process),
            payload,
            registered_value: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use coaplab_cc::registry::BUILTIN;
    use coaplab_cc::Config;

    fn s(secs: u64) -> Instant {
        Instant::ZERO + Duration::from_secs(secs)
    }

    /// `default` (RFC 7252 §4.2's back-off) with ACK_RANDOM_FACTOR 1: no dithering, so
    /// T_0 = ACK_TIMEOUT = 2 s, then 4, 8, 16 s; MAX_RETRANSMIT 4.
    fn notifier(mode: NotifyMode) -> Notifier {
        let entry = BUILTIN.iter().find(|e| e.name == "default").unwrap();
        let config = Config {
            ack_random_factor_permille: 1000,
            ..Config::default()
        };
        Notifier::new(
            entry.algorithm(&config),
            Xoshiro256pp::seed_from_u64(1),
            mode,
            Duration::from_secs(86_400),
            100,
            None,
        )
    }

    fn value(seq: u32, at: Instant) -> Value {
        Value { seq, generated: at }
    }

    fn sends(out: &[NotifierAction]) -> Vec<Notification> {
        out.iter()
            .filter_map(|a| match a {
                NotifierAction::Send(n) => Some(*n),
                _ => None,
            })
            .collect()
    }

    fn timer(out: &[NotifierAction]) -> (Instant, u32) {
        out.iter()
            .find_map(|a| match a {
                NotifierAction::ArmTimer { at, generation } => Some((*at, *generation)),
                _ => None,
            })
            .expect("a timer")
    }

    /// Value 1 at t = 0 goes as CON (MID 100), its timer T_0 = ACK_TIMEOUT × 1 = 2 s
    /// (ACK_RANDOM_FACTOR 1, RFC 7252 §4.2). Value 2 at t = 1 s, while the CON awaits its ACK,
    /// replaces it: nothing is sent at 1 s. At 2 s the timer fires and the retransmission
    /// (ordinal 1, a new message: MID 101) carries value 2; its timer is 2 × 2 = 4 s, so due at
    /// 6 s. One value superseded. An ACK to MID 101 ends the exchange.
    #[test]
    fn a_newer_value_replaces_the_pending_con_and_goes_with_the_retransmission() {
        let mut n = notifier(NotifyMode::Con);
        n.register(s(0));
        let mut out = Vec::new();
        n.on_value(s(0), value(1, s(0)), &mut out);
        assert_eq!(
            sends(&out),
            vec![Notification {
                value: value(1, s(0)),
                con: true,
                mid: 100,
                ordinal: 0
            }]
        );
        let (at, generation) = timer(&out);
        assert_eq!(at, s(2));
        out.clear();
        n.on_value(s(1), value(2, s(1)), &mut out);
        assert!(out.is_empty(), "{out:?}");
        assert_eq!(n.stats.superseded, 1);
        n.on_timer(at, generation, &mut out);
        assert_eq!(
            sends(&out),
            vec![Notification {
                value: value(2, s(1)),
                con: true,
                mid: 101,
                ordinal: 1
            }]
        );
        assert_eq!(timer(&out).0, s(6));
        out.clear();
        n.on_ack(s(3), 101, &mut out);
        assert_eq!(
            (n.stats.acked, n.stats.sent, n.stats.retransmissions),
            (1, 2, 1)
        );
        // Acknowledged: the next value goes at once, as a new CON.
        n.on_value(s(4), value(3, s(4)), &mut out);
        assert_eq!(sends(&out)[0].mid, 102);
    }

    /// NON with a CON at least every 24 h, notifications every hour for 3 days (t = 1 h …
    /// 72 h), acknowledged at once. The clock starts at the registration (t = 0): a
    /// notification is CON when the last CON is ≥ 24 h old: at 24 h, 48 h, 72 h — 3 CON and
    /// 69 NON.
    #[test]
    fn non_con_sends_a_con_every_24_hours() {
        let mut n = notifier(NotifyMode::NonCon);
        n.register(s(0));
        let mut con_at = Vec::new();
        let mut out = Vec::new();
        for h in 1..=72u64 {
            out.clear();
            let t = s(h * 3600);
            n.on_value(t, value(h as u32, t), &mut out);
            let sent = sends(&out);
            assert_eq!(sent.len(), 1, "hour {h}");
            if sent[0].con {
                con_at.push(h);
                n.on_ack(t, sent[0].mid, &mut out);
            }
        }
        assert_eq!(con_at, vec![24, 48, 72]);
        assert_eq!((n.stats.con_sent, n.stats.non_sent), (3, 69));
    }

    /// A CON notification nobody acknowledges: sent at 0, retransmitted at 2, 6, 14, 30 s
    /// (timers 2, 4, 8, 16 s; MAX_RETRANSMIT 4), given up at 30 + 32 = 62 s: the observer is
    /// removed and later values are not sent. The observer, whose last fresh notification
    /// came at 0 s (Max-Age 60 s), re-registers at 60 + 100 (MAX_LATENCY) = 160 s.
    #[test]
    fn a_con_timing_out_removes_the_observer_who_re_registers_after_max_age_and_margin() {
        let mut n = notifier(NotifyMode::Con);
        n.register(s(0));
        let mut out = Vec::new();
        n.on_value(s(0), value(1, s(0)), &mut out);
        let mut times = vec![0.0];
        loop {
            let (at, generation) = timer(&out);
            out.clear();
            n.on_timer(at, generation, &mut out);
            if out.contains(&NotifierAction::Removed) {
                assert_eq!(at, s(62));
                break;
            }
            times.push(at.secs_f64());
        }
        assert_eq!(times, vec![0.0, 2.0, 6.0, 14.0, 30.0]);
        assert!(!n.registered());
        assert_eq!(n.stats.removals, 1);
        out.clear();
        n.on_value(s(70), value(2, s(70)), &mut out);
        assert!(out.is_empty());

        let mut o = Observer::new(Duration::from_secs(60));
        let (_, g0) = o.on_registration_sent(s(0));
        // The registration's response carried value 0 (generated at 0), at 0.6 s.
        let (watch, g1) = o
            .on_notification(Instant::from_nanos(600_000_000), value(0, s(0)))
            .unwrap();
        assert_eq!(watch, Instant::from_nanos(160_600_000_000));
        assert!(!o.on_watch(s(160), g0, s(1000)), "a stale watch");
        assert!(o.on_watch(watch, g1, s(1000)));
        assert_eq!(o.stats.reregistrations, 1);
        // Past the run's deadline it does not.
        assert!(!o.on_watch(watch, g1, s(100)));
    }

    /// Freshness: ages are arrival − generation; a notification older than the newest is
    /// stale (RFC 7641 §3.4).
    #[test]
    fn the_observer_keeps_the_newest_value_and_its_age() {
        let mut o = Observer::new(Duration::from_secs(60));
        assert!(o.on_notification(s(5), value(3, s(2))).is_some());
        assert!(o.on_notification(s(6), value(2, s(1))).is_none());
        assert!(o.on_notification(s(7), value(3, s(2))).is_none());
        assert!(o.on_notification(s(9), value(4, s(8))).is_some());
        assert_eq!(o.stats.delivered, 2);
        assert_eq!(o.stats.stale, 2);
        assert_eq!(
            o.stats.ages,
            vec![Duration::from_secs(3), Duration::from_secs(1)]
        );
    }

    /// NON under PROBING_RATE 1 B/s with 40-byte notifications: the first goes at once (the
    /// probe); the next at 1 s may leave only at 40 / 1 = 40 s; a third at 2 s replaces it
    /// (superseded 1) and leaves at the 40 s wake-up.
    #[test]
    fn non_notifications_wait_for_the_probing_rate() {
        let entry = BUILTIN.iter().find(|e| e.name == "default").unwrap();
        let mut n = Notifier::new(
            entry.algorithm(&Config::default()),
            Xoshiro256pp::seed_from_u64(1),
            NotifyMode::Non,
            Duration::from_secs(86_400),
            0,
            Some((1.0, 40)),
        );
        n.register(s(0));
        let mut out = Vec::new();
        n.on_value(s(0), value(0, s(0)), &mut out);
        assert_eq!(sends(&out).len(), 1);
        out.clear();
        n.on_value(s(1), value(1, s(1)), &mut out);
        assert_eq!(
            out,
            vec![NotifierAction::ArmWake {
                at: s(40),
                generation: 1
            }]
        );
        out.clear();
        n.on_value(s(2), value(2, s(2)), &mut out);
        assert!(out.is_empty());
        n.on_wake(s(40), 1, &mut out);
        assert_eq!(sends(&out)[0].value, value(2, s(2)));
        assert_eq!(n.stats.superseded, 1);
    }
}
