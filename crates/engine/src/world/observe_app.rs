//! `workload.kind = "observe"` on the UDP application (docs/model.md "Observe"): the thin
//! wiring of the sans-IO core `crate::coap::observe`. The client's registration is one of its
//! ordinary CON exchanges (`Plan::Observe`); the server keeps a [`Notifier`] per observer and
//! sends its notifications down the client's route; the client ACKs CON notifications (an
//! empty ACK up its route) and re-registers after Max-Age and a margin without news.
//!
//! Each observer observes a resource of its own whose values start when its first
//! registration reaches the server (value 0, the representation the registration's response
//! carries) and then come every `notify_period_s` or at `notify_rate_per_s` (Poisson) until
//! `duration_s`; values generated while the observer is removed count as generated and are
//! lost unless a re-registration's response carries them.

use coaplab_cc::Instant;

use super::shared::{Event, ObserveEvent, Shared, UdpEvent};
use super::udp_app::UdpApp;
use super::World;
use crate::coap::observe::{NotifierAction, Observation, Value};
use crate::metrics::ObserveResult;
use crate::packet::{NetPacket, Packet};

impl UdpApp {
    /// Whether local client `c` observes.
    fn observation(&mut self, c: u32) -> Option<&mut Observation> {
        self.observe.get_mut(c as usize)?.as_deref_mut()
    }

    /// An observe client started at `now` (its registration was just sent): arm its watch.
    pub(super) fn observe_started(&mut self, now: Instant, c: u32, sh: &mut Shared) {
        if let Some(o) = self.observation(c) {
            let (at, generation) = o.observer.on_registration_sent(now);
            sh.queue.schedule(
                at,
                Event::Udp(UdpEvent::Observe(ObserveEvent::Watch {
                    client: c,
                    generation,
                })),
            );
        }
    }

    /// A registration of client `c` reached the server (`duplicate`: a copy of one already
    /// answered, whose cached response carries the same value).
    pub(super) fn observe_registration(
        &mut self,
        now: Instant,
        c: u32,
        duplicate: bool,
        sh: &mut Shared,
    ) {
        let Some(o) = self.observation(c) else {
            return;
        };
        if duplicate {
            return;
        }
        o.notifier.register(now);
        let first = o.resource.latest.is_none();
        if first {
            o.resource.take_value(now);
        }
        o.registered_value = o.resource.latest;
        if first {
            if let Some(at) = o.resource.next_value_at(now) {
                sh.queue
                    .schedule(at, Event::Udp(UdpEvent::Observe(ObserveEvent::Value(c))));
            }
        }
    }

    /// The registration's response reached client `c`: its first notification.
    pub(super) fn observe_response(&mut self, now: Instant, c: u32, sh: &mut Shared) {
        let Some(o) = self.observation(c) else {
            return;
        };
        if let Some(v) = o.registered_value {
            let watch = o.observer.on_notification(now, v);
            self.arm_watch(c, watch, sh);
        }
    }

    fn arm_watch(&mut self, c: u32, watch: Option<(Instant, u32)>, sh: &mut Shared) {
        if let Some((at, generation)) = watch {
            sh.queue.schedule(
                at,
                Event::Udp(UdpEvent::Observe(ObserveEvent::Watch {
                    client: c,
                    generation,
                })),
            );
        }
    }

    pub(super) fn observe_event(&mut self, now: Instant, e: ObserveEvent, sh: &mut Shared) {
        let mut out = Vec::new();
        let c = match e {
            ObserveEvent::Value(c) => {
                let Some(o) = self.observation(c) else { return };
                let v = o.resource.take_value(now);
                o.notifier.on_value(now, v, &mut out);
                if let Some(at) = o.resource.next_value_at(now) {
                    sh.queue
                        .schedule(at, Event::Udp(UdpEvent::Observe(ObserveEvent::Value(c))));
                }
                c
            }
            ObserveEvent::NotifierTimer { client, generation } => {
                let Some(o) = self.observation(client) else {
                    return;
                };
                o.notifier.on_timer(now, generation, &mut out);
                client
            }
            ObserveEvent::NotifierWake { client, generation } => {
                let Some(o) = self.observation(client) else {
                    return;
                };
                o.notifier.on_wake(now, generation, &mut out);
                client
            }
            ObserveEvent::Watch { client, generation } => {
                let Some(o) = self.observation(client) else {
                    return;
                };
                let deadline = o.resource.deadline;
                if o.observer.on_watch(now, generation, deadline) {
                    self.reregister(now, client, sh);
                }
                return;
            }
        };
        self.apply_notifier(now, c, &out, sh);
    }

    /// Client `c` registers again (RFC 7641 §3.3.1): a new GET with Observe = 0 through its
    /// ordinary exchange machinery.
    fn reregister(&mut self, now: Instant, c: u32, sh: &mut Shared) {
        if let crate::workload::Plan::Observe { register, .. } = self.clients[c as usize].plan_mut()
        {
            *register = true;
        }
        let msgs = &self.groups[self.group_of[c as usize] as usize].msgs;
        self.clients[c as usize].poll_start(now, msgs, &mut self.actions);
        self.apply_actions(now, c, sh);
        self.observe_started(now, c, sh);
    }

    fn apply_notifier(&mut self, now: Instant, c: u32, out: &[NotifierAction], sh: &mut Shared) {
        for a in out {
            match *a {
                NotifierAction::Send(n) => {
                    let id = self.clients[c as usize].id;
                    let payload = self.observation(c).map_or(0, |o| o.payload);
                    let p = self.msgs_of(id).notification(
                        id,
                        n.value.seq,
                        n.value.generated,
                        n.con,
                        n.mid,
                        n.ordinal,
                        payload,
                    );
                    self.send_observe(now, p, self.routes[c as usize][1], sh);
                }
                NotifierAction::ArmTimer { at, generation } => sh.queue.schedule(
                    at,
                    Event::Udp(UdpEvent::Observe(ObserveEvent::NotifierTimer {
                        client: c,
                        generation,
                    })),
                ),
                NotifierAction::ArmWake { at, generation } => sh.queue.schedule(
                    at,
                    Event::Udp(UdpEvent::Observe(ObserveEvent::NotifierWake {
                        client: c,
                        generation,
                    })),
                ),
                NotifierAction::Removed => {}
            }
        }
    }

    fn send_observe(
        &mut self,
        now: Instant,
        p: Packet,
        route: crate::net::network::RouteId,
        sh: &mut Shared,
    ) {
        if let Some(cap) = sh.capture.as_mut() {
            cap.push((now, crate::packet::AppPacket::Udp(p)));
        }
        // A packet the network refuses at once is simply lost (nothing tracks it).
        let _ = sh.net.send(now, NetPacket::udp(p), route, &mut sh.queue);
    }

    /// A notification reached its client: a CON one is acknowledged (an empty ACK, RFC 7252
    /// §4.2), and the observer takes the value if it is fresh.
    pub(super) fn on_notification(&mut self, now: Instant, p: Packet, sh: &mut Shared) {
        let c = self.local[p.client as usize];
        if !p.non {
            let ack = self.msgs_of(p.client).notification_ack(&p);
            self.send_observe(now, ack, self.routes[c as usize][0], sh);
        }
        let Some(o) = self.observation(c) else {
            return;
        };
        let v = Value {
            seq: p.exchange,
            generated: p.request_sent,
        };
        let watch = o.observer.on_notification(now, v);
        self.arm_watch(c, watch, sh);
    }

    /// A client's empty ACK reached the server.
    pub(super) fn on_notification_ack(&mut self, now: Instant, p: Packet, sh: &mut Shared) {
        let c = self.local[p.client as usize];
        let mut out = Vec::new();
        let Some(o) = self.observation(c) else {
            return;
        };
        o.notifier.on_ack(now, p.mid, &mut out);
        self.apply_notifier(now, c, &out, sh);
    }
}

/// Linear interpolation between closest ranks (the front's `analyse.quantile.percentile`,
/// numpy's default): position h = (n − 1)·q.
fn percentile(sorted: &[f64], q: f64) -> f64 {
    let h = (sorted.len() - 1) as f64 * q;
    let lo = h.floor() as usize;
    let hi = (lo + 1).min(sorted.len() - 1);
    sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo])
}

impl World {
    /// Observe's measurements over the UDP and TCP clients with global ids in `ids` (`None`
    /// when none of them observes, so other results are unchanged).
    pub(crate) fn observe_result(&self, ids: std::ops::Range<u32>) -> Option<ObserveResult> {
        let mut r = ObserveResult::default();
        let mut ages = Vec::new();
        let mut any = false;
        // CoAP over TCP's observers (`tcp_app/observe.rs`): no CON/NON, no retransmissions
        // at the CoAP layer, no removals.
        any |= self.tcp.add_observe_result(ids.clone(), &mut r, &mut ages);
        for id in ids {
            let Some(local) = self.udp.local_index(id) else {
                continue;
            };
            let Some(o) = self
                .udp
                .observe
                .get(local as usize)
                .and_then(|o| o.as_deref())
            else {
                continue;
            };
            any = true;
            let (n, s) = (&o.notifier.stats, &o.observer.stats);
            r.notifications_generated += o.resource.generated;
            r.notifications_sent += n.sent;
            r.notifications_con += n.con_sent;
            r.notifications_non += n.non_sent;
            r.notification_retransmissions += n.retransmissions;
            r.notifications_superseded += n.superseded;
            r.observers_removed += n.removals;
            r.notifications_delivered += s.delivered;
            r.reregistrations += s.reregistrations;
            ages.extend(s.ages.iter().map(|d| d.secs_f64()));
        }
        if !any {
            return None;
        }
        r.notification_delivered_fraction = (r.notifications_generated > 0)
            .then(|| r.notifications_delivered as f64 / r.notifications_generated as f64);
        ages.sort_by(f64::total_cmp);
        r.notification_age_count = ages.len() as u64;
        r.notification_age_sum_s = ages.iter().sum();
        if !ages.is_empty() {
            r.notification_age_mean_s = Some(r.notification_age_sum_s / ages.len() as f64);
            r.notification_age_p50_s = Some(percentile(&ages, 0.50));
            r.notification_age_p95_s = Some(percentile(&ages, 0.95));
            r.notification_age_p99_s = Some(percentile(&ages, 0.99));
            r.notification_age_max_s = ages.last().copied();
        }
        Some(r)
    }
}
