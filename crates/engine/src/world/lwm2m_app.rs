//! `workload.kind = "lwm2m"` on the UDP application (docs/model.md "LwM2M devices"): the thin
//! wiring of the sans-IO cores `crate::coap::lwm2m`. A device's uplinks (Register, Update,
//! Notify, firmware blocks) are exchanges of its CoAP client, with its congestion control; the
//! server's reads travel down as `PacketKind::ServerRequest` and are answered by the device,
//! when it listens, with a piggybacked `PacketKind::ServerAck`.

use coaplab_cc::rng::Xoshiro256pp;
use coaplab_cc::Instant;

use super::lwm2m_state::Lwm2mDevice;
use super::shared::{Event, Shared, UdpEvent};
use super::udp_app::UdpApp;
use crate::coap::lwm2m::device::{Device, Out};
use crate::coap::lwm2m::requester::ReqOut;
use crate::coap::lwm2m::{Counters, Event as Lw, Params, Uplink};
use crate::packet::{NetPacket, Packet};
use crate::workload::NextRequest;

impl UdpApp {
    /// Makes local client `local` an LwM2M device of parameters `params`.
    pub(super) fn lwm2m_add(&mut self, local: u32, params: Params, rng: Xoshiro256pp) {
        let s = &mut self.lwm2m;
        if s.devices.len() <= local as usize {
            s.devices.resize_with(local as usize + 1, || None);
        }
        let peer = s.requester.add(params.queue_window);
        s.client_of_peer.push(local);
        s.devices[local as usize] = Some(Lwm2mDevice {
            dev: Device::new(params),
            peer,
            rng,
            params,
        });
    }

    pub(super) fn is_lwm2m(&self, c: u32) -> bool {
        self.lwm2m
            .devices
            .get(c as usize)
            .is_some_and(|d| d.is_some())
    }

    fn device(&mut self, c: u32) -> &mut Lwm2mDevice {
        self.lwm2m.devices[c as usize]
            .as_mut()
            .expect("an LwM2M device")
    }

    /// Device `c` starts: its first Register, and the server's first read is drawn.
    pub(super) fn lwm2m_start(&mut self, now: Instant, c: u32, sh: &mut Shared) {
        let mut out = Vec::new();
        self.device(c).dev.start(now, &mut out);
        self.next_read(now, c, sh);
        self.apply_device(now, c, out, sh);
    }

    /// Schedules the server's next read of device `c` (Poisson, `lwm2m_reads_per_day`).
    fn next_read(&mut self, now: Instant, c: u32, sh: &mut Shared) {
        let d = self.device(c);
        if d.params.reads_per_day <= 0.0 {
            return;
        }
        let at = now + crate::reporting::exception_gap(&mut d.rng, d.params.reads_per_day);
        if at < d.params.deadline {
            let what = Lw::Read;
            sh.queue
                .schedule(at, Event::Udp(UdpEvent::Lwm2m { client: c, what }));
        }
    }

    pub(super) fn lwm2m_event(&mut self, now: Instant, c: u32, what: Lw, sh: &mut Shared) {
        match what {
            Lw::Device(timer) => {
                let mut out = Vec::new();
                self.device(c).dev.on_timer(now, timer, &mut out);
                self.apply_device(now, c, out, sh);
            }
            Lw::Read => {
                let mut out = Vec::new();
                let d = self.lwm2m.devices[c as usize].as_mut().expect("a device");
                self.lwm2m
                    .requester
                    .enqueue(now, d.peer, &mut d.rng, &mut out);
                self.apply_requester(now, out, sh);
                self.next_read(now, c, sh);
            }
            Lw::ServerTimer(generation) => {
                let mut out = Vec::new();
                let d = self.lwm2m.devices[c as usize].as_mut().expect("a device");
                let peer = d.peer;
                self.lwm2m
                    .requester
                    .on_timer(now, peer, generation, &mut d.rng, &mut out);
                self.apply_requester(now, out, sh);
            }
        }
    }

    /// What device `c` asked for: uplinks to its client, timers to the queue.
    fn apply_device(&mut self, now: Instant, c: u32, out: Vec<Out>, sh: &mut Shared) {
        let mut sent = false;
        for o in out {
            match o {
                Out::Send {
                    what,
                    block,
                    payload,
                } => {
                    self.clients[c as usize].push_uplink(NextRequest {
                        block,
                        new_batch: false,
                        tag: what as u8,
                        payload: Some(payload),
                    });
                    sent = true;
                }
                Out::Arm { at, timer } => {
                    let what = Lw::Device(timer);
                    sh.queue
                        .schedule(at, Event::Udp(UdpEvent::Lwm2m { client: c, what }));
                }
            }
        }
        if sent {
            let msgs = &self.groups[self.group_of[c as usize] as usize].msgs;
            self.clients[c as usize].poll_start(now, msgs, &mut self.actions);
            self.apply_actions(now, c, sh);
        }
    }

    /// Device `c`'s client sent a packet.
    pub(super) fn lwm2m_sent(&mut self, now: Instant, c: u32) {
        if let Some(Some(d)) = self.lwm2m.devices.get_mut(c as usize) {
            d.dev.on_uplink_sent(now);
        }
    }

    /// Device `c`'s client ended an exchange (`Action::Ended`), told after its actions ran.
    pub(super) fn lwm2m_ended(&mut self, tag: u8, block: Option<u32>, ok: bool) {
        self.lwm2m.ended.push((tag, block, ok));
    }

    /// The ended exchanges of device `c` reach the device.
    pub(super) fn lwm2m_flush_ended(&mut self, now: Instant, c: u32, sh: &mut Shared) {
        while !self.lwm2m.ended.is_empty() {
            let ended = std::mem::take(&mut self.lwm2m.ended);
            let mut out = Vec::new();
            for (tag, block, ok) in ended {
                if let Some(what) = Uplink::from_tag(tag) {
                    self.device(c).dev.on_ended(now, what, block, ok, &mut out);
                }
            }
            self.apply_device(now, c, out, sh);
        }
    }

    /// A message of device `c` reached the server: it listens now (queue mode).
    pub(super) fn lwm2m_uplink_at_server(&mut self, now: Instant, c: u32, sh: &mut Shared) {
        let Some(Some(d)) = self.lwm2m.devices.get_mut(c as usize) else {
            return;
        };
        let mut out = Vec::new();
        self.lwm2m
            .requester
            .on_uplink(now, d.peer, &mut d.rng, &mut out);
        self.apply_requester(now, out, sh);
    }

    /// The server's read `p` reached its device: answered if the device listens, else lost.
    pub(super) fn lwm2m_read_at_device(
        &mut self,
        now: Instant,
        id: crate::sim::slab::PacketId,
        p: Packet,
        sh: &mut Shared,
    ) {
        let c = self.local[p.client as usize];
        let d = self.device(c);
        if !d.dev.reachable(now) {
            sh.net.packets.remove(id);
            return;
        }
        d.dev.on_uplink_sent(now);
        let bytes = u32::from(d.params.notify_bytes);
        let msgs = &self.groups[self.group_of[c as usize] as usize].msgs;
        let ack = msgs.read_answer(&p, bytes);
        if let Some(cap) = sh.capture.as_mut() {
            cap.push((now, crate::packet::AppPacket::Udp(ack)));
        }
        *sh.net.packets.get_mut(id) = NetPacket::udp(ack);
        sh.net
            .resend(now, id, self.routes[c as usize][0], &mut sh.queue);
    }

    /// A device's answer to a read reached the server.
    pub(super) fn lwm2m_answer_at_server(&mut self, now: Instant, p: Packet, sh: &mut Shared) {
        let c = self.local[p.client as usize];
        let d = self.lwm2m.devices[c as usize].as_mut().expect("a device");
        let mut out = Vec::new();
        let peer = d.peer;
        self.lwm2m
            .requester
            .on_response(now, peer, p.mid, &mut d.rng, &mut out);
        self.apply_requester(now, out, sh);
        self.lwm2m_uplink_at_server(now, c, sh);
    }

    fn apply_requester(&mut self, now: Instant, out: Vec<ReqOut>, sh: &mut Shared) {
        for o in out {
            match o {
                ReqOut::Send {
                    device,
                    mid,
                    ordinal,
                } => {
                    let c = self.lwm2m.client_of_peer[device as usize];
                    let id = self.clients[c as usize].id;
                    let msgs = &self.groups[self.group_of[c as usize] as usize].msgs;
                    let p = msgs.server_read(id, mid, ordinal, now);
                    if let Some(cap) = sh.capture.as_mut() {
                        cap.push((now, crate::packet::AppPacket::Udp(p)));
                    }
                    let route = self.routes[c as usize][1];
                    // A read refused at the entry of the network is lost like any other.
                    let _ = sh.net.send(now, NetPacket::udp(p), route, &mut sh.queue);
                }
                ReqOut::Arm {
                    device,
                    at,
                    generation,
                } => {
                    let client = self.lwm2m.client_of_peer[device as usize];
                    let what = Lw::ServerTimer(generation);
                    sh.queue
                        .schedule(at, Event::Udp(UdpEvent::Lwm2m { client, what }));
                }
            }
        }
    }

    /// The LwM2M measurements of local clients `locals` (`None` when none is a device).
    pub(crate) fn lwm2m_counters(&self, locals: impl Iterator<Item = usize>) -> Option<Counters> {
        let mut sum: Option<Counters> = None;
        for l in locals {
            let Some(Some(d)) = self.lwm2m.devices.get(l) else {
                continue;
            };
            let s = sum.get_or_insert_with(Counters::default);
            let c = &d.dev.counters;
            let peer = &self.lwm2m.requester.peers[d.peer as usize];
            s.register_s.extend(&c.register_s);
            s.registrations_failed += c.registrations_failed;
            s.updates_sent += c.updates_sent;
            s.updates_failed += c.updates_failed;
            s.read_wait_s.extend(&peer.read_wait_s);
            s.reads_failed += peer.reads_failed;
            s.notifications_delivered += c.notifications_delivered;
            s.firmware_s.extend(&c.firmware_s);
            s.firmware_failed += c.firmware_failed;
        }
        sum
    }

    /// No LwM2M exchange end waits for its device.
    pub(super) fn lwm2m_idle(&self) -> bool {
        self.lwm2m.ended.is_empty()
    }
}
