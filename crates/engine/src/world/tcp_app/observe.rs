//! `workload.kind = "observe"` over CoAP over TCP (RFC 8323 §7, docs/model.md "Observe"): the
//! thin wiring of the sans-IO core `crate::coap::observe_tcp`. Once connected (the background
//! clients' connection start), a client writes one registration (GET with Observe = 0) on its
//! connection; the server answers with the first notification and from then on writes each new
//! value as a notification on the same connection, with no CON/NON and no ACK at the CoAP layer
//! (RFC 8323 §7.1): TCP's own congestion control (`tcp.congestion`) paces them. A value waits
//! while the server's end has unsent bytes, a newer one replacing it (`TcpNotifier`).
//!
//! The observation ends with the connection (RFC 8323 §7); the model's connections fail only
//! in their handshake (the client then counts a failed exchange and never observes) or when
//! retries run out, so there is no re-registration over TCP (`reregistrations` stays 0).

use coaplab_cc::Instant;

use super::{data_start, TcpApp, SERVER};
use crate::coap::observe::{Observer, Value};
use crate::coap::observe_tcp::TcpObservation;
use crate::coap::over_tcp::TcpMsg;
use crate::config::observe::ObserveParams;
use crate::metrics::ObserveResult;
use crate::sim::streams::{stream, Stream};
use crate::world::shared::{Event, Shared, TcpEvent};

impl TcpApp {
    /// The observation of a new client with global id `id` (an observe group's), or `None`.
    pub(super) fn new_observation(
        p: Option<&ObserveParams>,
        id: u32,
        seed: u64,
        replication: u64,
    ) -> Option<Box<TcpObservation>> {
        let p = p?;
        let secs = coaplab_cc::Duration::from_secs_f64;
        let process = (
            p.period_s.map(secs),
            p.rate_per_s,
            Instant::from_secs_f64(p.duration_s),
        );
        // Max-Age travels only when it is not the default (RFC 7252 §5.10.5).
        let max_age = (p.max_age_s != crate::config::defaults::WORKLOAD_MAX_AGE_S)
            .then_some(p.max_age_s as u32);
        Some(Box::new(TcpObservation::new(
            Observer::new(secs(p.max_age_s)),
            stream(seed, replication, Stream::Values(id)),
            process,
            p.notification_bytes,
            max_age,
        )))
    }

    /// Whether local client `c` observes.
    pub(super) fn observes(&self, c: u32) -> bool {
        self.observe.get(c as usize).is_some_and(Option::is_some)
    }

    /// Bytes written to the server's end of `flow` and not yet sent.
    fn unsent(&self, flow: u32) -> u64 {
        let f = &self.flows[flow as usize];
        f.ends[SERVER].as_ref().map_or(0, |conn| {
            let sent = u64::from(conn.snd_nxt() - data_start(conn));
            f.streams[1].written().saturating_sub(sent)
        })
    }

    /// The registration of client `c` reached the server on `flow`: the resource's values
    /// start (value 0, which the response carries), and the response is the message written.
    pub(super) fn observe_registration(
        &mut self,
        now: Instant,
        c: u32,
        sh: &mut Shared,
    ) -> Option<TcpMsg> {
        let o = self.observe.get_mut(c as usize)?.as_deref_mut()?;
        o.notifier.register();
        if o.resource.latest.is_none() {
            o.resource.take_value(now);
            if let Some(at) = o.resource.next_value_at(now) {
                sh.queue.schedule(at, Event::Tcp(TcpEvent::ObserveValue(c)));
            }
        }
        o.resource.latest.map(|v| notification(o, v))
    }

    /// The resource of client `c` takes a new value.
    pub(super) fn observe_value(&mut self, now: Instant, c: u32, sh: &mut Shared) {
        let Some(flow) = self.clients[c as usize].flow else {
            return;
        };
        let unsent = self.unsent(flow);
        let Some(o) = self
            .observe
            .get_mut(c as usize)
            .and_then(|o| o.as_deref_mut())
        else {
            return;
        };
        let v = o.resource.take_value(now);
        if let Some(at) = o.resource.next_value_at(now) {
            sh.queue.schedule(at, Event::Tcp(TcpEvent::ObserveValue(c)));
        }
        if let Some(v) = o.notifier.on_value(v, unsent) {
            self.write_notification(c, flow, v);
            self.on_end_changed(now, flow, SERVER, sh);
        }
    }

    /// After the server's end of `flow` transmitted: a waiting notification goes once the
    /// connection has no unsent bytes. Whether one was written.
    pub(super) fn observe_drained(&mut self, flow: u32) -> bool {
        let c = self.flows[flow as usize].client;
        if !self.observes(c) || self.clients[c as usize].flow != Some(flow) {
            return false;
        }
        let unsent = self.unsent(flow);
        let Some(v) = self.observe[c as usize]
            .as_deref_mut()
            .and_then(|o| o.notifier.on_drained(unsent))
        else {
            return false;
        };
        self.write_notification(c, flow, v);
        true
    }

    fn write_notification(&mut self, c: u32, flow: u32, v: Value) {
        let Some(o) = self.observe[c as usize].as_deref() else {
            return;
        };
        let msg = notification(o, v);
        let f = &mut self.flows[flow as usize];
        if let Some(conn) = f.ends[SERVER].as_mut() {
            conn.write(f.streams[1].push(msg));
        }
    }

    /// Observe's measurements over the TCP clients with global ids in `ids`, added to `r`;
    /// whether any observes.
    pub(crate) fn add_observe_result(
        &self,
        ids: std::ops::Range<u32>,
        r: &mut ObserveResult,
        ages: &mut Vec<f64>,
    ) -> bool {
        let mut any = false;
        for (cl, o) in self.clients.iter().zip(&self.observe) {
            let Some(o) = o.as_deref().filter(|_| ids.contains(&cl.id)) else {
                continue;
            };
            any = true;
            let (n, s) = (&o.notifier.stats, &o.observer.stats);
            r.notifications_generated += o.resource.generated;
            r.notifications_sent += n.sent;
            r.notifications_superseded += n.superseded;
            r.notifications_delivered += s.delivered;
            ages.extend(s.ages.iter().map(|d| d.secs_f64()));
        }
        any
    }
}

/// The notification message carrying value `v` of observation `o`.
fn notification(o: &TcpObservation, v: Value) -> TcpMsg {
    TcpMsg::Notification {
        seq: v.seq,
        generated: v.generated,
        max_age: o.max_age,
        payload: o.payload,
    }
}
