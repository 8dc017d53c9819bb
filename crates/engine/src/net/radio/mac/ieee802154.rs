//! Unslotted CSMA/CA with acknowledgements and retransmissions (IEEE 802.15.4-2006
//! §7.5.1.4, §7.5.6.4), as a sans-IO state machine: it is told what happened with `now` and
//! a random source, and answers with when its next step is due.
//!
//! For each frame: NB = 0, BE = macMinBE; wait a random number of unit backoff periods in
//! [0, 2^BE − 1]; assess the channel (CCA); if busy, NB += 1, BE = min(BE + 1, macMaxBE) and,
//! while NB <= macMaxCSMABackoffs, back off again, else report a channel-access failure; if
//! clear, turn the radio round (RX → TX) and transmit; then wait up to macAckWaitDuration for
//! the acknowledgement. Without it the frame is retransmitted (the whole procedure again) up
//! to macMaxFrameRetries times, then reported as failed.
//!
//! [`Ieee802154`] is the mesh's MAC of that name (`network.mac = "ieee802154"`, the default):
//! one FIFO queue per node, its head frame through [`Csma`], a lost fragment losing its
//! packet's other frames.

use std::collections::VecDeque;

use coaplab_cc::rng::Rng;
use coaplab_cc::Instant;

use super::super::params::{MacParams, RadioParams};
use super::super::types::{Frame, MeshOutcome, RadioEvent, RadioKind};
use super::traits::{Mac, Medium};
use crate::net::common::DropReason;
use crate::net::event::Scheduler;
use crate::sim::slab::PacketId;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MacState {
    Idle,
    /// Backing off; the CCA ends at the scheduled time.
    Backoff,
    /// Turning round and transmitting.
    Transmitting,
    WaitAck,
}

/// What a finished CCA leads to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CcaDecision {
    /// The channel was clear: the frame goes on the air at `at` (after the turnaround).
    Transmit { at: Instant },
    /// The channel was busy: the next CCA ends at `cca_end`.
    Backoff { cca_end: Instant },
    /// macMaxCSMABackoffs exceeded: channel-access failure.
    Fail,
}

/// One node's CSMA/CA state for the frame at the head of its queue.
#[derive(Clone, Copy, Debug)]
pub struct Csma {
    pub state: MacState,
    /// NB: busy CCAs of this attempt.
    pub nb: u8,
    /// BE: the backoff exponent.
    pub be: u8,
    /// Retransmissions of this frame so far.
    pub retries: u8,
}

impl Default for Csma {
    fn default() -> Self {
        Csma {
            state: MacState::Idle,
            nb: 0,
            be: 0,
            retries: 0,
        }
    }
}

impl Csma {
    /// A new frame's channel access starts at `now`; returns when its first CCA ends.
    pub fn begin(&mut self, now: Instant, p: &MacParams, rng: &mut dyn Rng) -> Instant {
        self.retries = 0;
        self.attempt(now, p, rng)
    }

    /// NB = 0, BE = macMinBE, first backoff.
    fn attempt(&mut self, now: Instant, p: &MacParams, rng: &mut dyn Rng) -> Instant {
        self.nb = 0;
        self.be = p.min_be;
        self.backoff(now, p, rng)
    }

    /// A random backoff of [0, 2^BE − 1] unit periods, then the CCA: returns its end.
    fn backoff(&mut self, now: Instant, p: &MacParams, rng: &mut dyn Rng) -> Instant {
        self.state = MacState::Backoff;
        let slots = (u128::from(rng.next_u64()) << self.be >> 64) as u64;
        now + p.unit_backoff.mul(slots) + p.cca
    }

    /// The CCA ended at `now` and found the channel `busy`.
    pub fn on_cca(
        &mut self,
        now: Instant,
        busy: bool,
        p: &MacParams,
        rng: &mut dyn Rng,
    ) -> CcaDecision {
        if !busy {
            self.state = MacState::Transmitting;
            return CcaDecision::Transmit {
                at: now + p.turnaround,
            };
        }
        self.nb += 1;
        self.be = (self.be + 1).min(p.max_be);
        if self.nb > p.max_csma_backoffs {
            self.state = MacState::Idle;
            return CcaDecision::Fail;
        }
        CcaDecision::Backoff {
            cca_end: self.backoff(now, p, rng),
        }
    }

    /// The frame left the air at `now`: returns when waiting for its acknowledgement ends.
    pub fn on_tx_end(&mut self, now: Instant, p: &MacParams) -> Instant {
        self.state = MacState::WaitAck;
        now + p.ack_wait
    }

    /// The acknowledgement arrived: the frame is done.
    pub fn on_ack(&mut self) {
        self.state = MacState::Idle;
    }

    /// No acknowledgement by the deadline: `Some(cca_end)` of the retransmission's first CCA,
    /// or `None` when macMaxFrameRetries retransmissions were already made (the frame failed).
    pub fn on_ack_timeout(
        &mut self,
        now: Instant,
        p: &MacParams,
        rng: &mut dyn Rng,
    ) -> Option<Instant> {
        if self.retries >= p.max_frame_retries {
            self.state = MacState::Idle;
            return None;
        }
        self.retries += 1;
        Some(self.attempt(now, p, rng))
    }
}

/// The IEEE 802.15.4 MAC of one node: its FIFO queue and the CSMA/CA of its head frame.
pub struct Ieee802154 {
    csma: Csma,
    queue: VecDeque<Frame>,
    capacity: usize,
    params: MacParams,
}

impl Ieee802154 {
    /// The registry's constructor: a queue of `capacity` frames.
    pub fn build(p: &RadioParams, capacity: usize) -> Box<dyn Mac> {
        Box::new(Ieee802154 {
            csma: Csma::default(),
            queue: VecDeque::new(),
            capacity,
            params: p.mac,
        })
    }

    /// Node `u` starts the channel access for its head frame (after the phase optimisation's
    /// wait, if it knows its receiver's phase).
    fn start_head(&mut self, now: Instant, u: u16, cx: &mut dyn Medium, q: &mut dyn Scheduler) {
        let Some(to) = self.queue.front().map(|f| f.to) else {
            return;
        };
        let start = now + cx.phase_defer(now, u, to);
        let cca_end = self.csma.begin(start, &self.params, cx.rng(u));
        let gen = cx.gen(u);
        cx.schedule(q, cca_end, RadioKind::CcaEnd, u, 0, gen);
    }

    /// Node `u`'s head frame is done (`acked`) or failed; the next frame starts.
    fn resolve_head(
        &mut self,
        now: Instant,
        u: u16,
        acked: bool,
        cx: &mut dyn Medium,
        q: &mut dyn Scheduler,
    ) -> MeshOutcome {
        cx.next_gen(u);
        let f = self.queue.pop_front().expect("a head frame");
        let mut out = MeshOutcome::Nothing;
        if !acked && cx.transfer(f.packet).0 == f.xfer {
            // A lost fragment loses the packet: its other frames leave the queue.
            cx.abandon(f.packet);
            self.queue.retain(|g| g.xfer != f.xfer);
            cx.counters().radio_drops += 1;
            out = MeshOutcome::Dropped(f.packet, DropReason::Radio);
        }
        self.csma.state = MacState::Idle;
        self.start_head(now, u, cx, q);
        out
    }

    /// `u`'s CCA ended at `now`.
    fn on_cca_end(
        &mut self,
        now: Instant,
        ev: RadioEvent,
        cx: &mut dyn Medium,
        q: &mut dyn Scheduler,
    ) -> MeshOutcome {
        let u = ev.node;
        if ev.gen != cx.gen(u) {
            return MeshOutcome::Nothing;
        }
        // A node that owes an acknowledgement sends it first (the radio answers in
        // hardware, RX → TX and back): an assessment overlapping it is repeated once it is
        // over, without counting as a busy one.
        let owed = cx.ack_busy_until(u);
        let cca = self.params.cca;
        if owed.nanos() > now.nanos().saturating_sub(cca.nanos()) {
            cx.schedule(q, owed + cca, RadioKind::CcaEnd, u, 0, ev.gen);
            return MeshOutcome::Nothing;
        }
        let busy = cx.channel_busy(now, u);
        match self.csma.on_cca(now, busy, &self.params, cx.rng(u)) {
            CcaDecision::Transmit { at } => {
                let gen = cx.gen(u);
                cx.schedule(q, at, RadioKind::TxStart, u, 0, gen);
                MeshOutcome::Nothing
            }
            CcaDecision::Backoff { cca_end } => {
                let gen = cx.gen(u);
                cx.schedule(q, cca_end, RadioKind::CcaEnd, u, 0, gen);
                MeshOutcome::Nothing
            }
            CcaDecision::Fail => {
                cx.counters().channel_access_failures += 1;
                self.resolve_head(now, u, false, cx, q)
            }
        }
    }

    /// `u`'s wait for an acknowledgement ended at `now`.
    fn on_ack_timeout(
        &mut self,
        now: Instant,
        ev: RadioEvent,
        cx: &mut dyn Medium,
        q: &mut dyn Scheduler,
    ) -> MeshOutcome {
        let u = ev.node;
        if ev.gen != cx.gen(u) || self.csma.state != MacState::WaitAck {
            return MeshOutcome::Nothing;
        }
        let to = self.queue.front().expect("a head frame").to;
        cx.phase_update(now, u, to, None);
        // The retransmission goes through phase_wait again (csma.c resends through the RDC's
        // `send`).
        let start = now + cx.phase_defer(now, u, to);
        match self.csma.on_ack_timeout(start, &self.params, cx.rng(u)) {
            Some(cca_end) => {
                let gen = cx.gen(u);
                cx.schedule(q, cca_end, RadioKind::CcaEnd, u, 0, gen);
                MeshOutcome::Nothing
            }
            None => {
                cx.counters().retry_failures += 1;
                self.resolve_head(now, u, false, cx, q)
            }
        }
    }
}

impl Mac for Ieee802154 {
    fn admits(&self, count: usize) -> bool {
        self.queue.len() + count <= self.capacity
    }

    fn enqueue(
        &mut self,
        now: Instant,
        u: u16,
        _id: PacketId,
        frames: &[Frame],
        cx: &mut dyn Medium,
        q: &mut dyn Scheduler,
    ) -> Option<DropReason> {
        let idle = self.queue.is_empty();
        self.queue.extend(frames.iter().copied());
        if idle {
            self.start_head(now, u, cx, q);
        }
        None
    }

    fn on_event(
        &mut self,
        now: Instant,
        ev: RadioEvent,
        cx: &mut dyn Medium,
        q: &mut dyn Scheduler,
    ) -> MeshOutcome {
        match ev.kind {
            RadioKind::CcaEnd => self.on_cca_end(now, ev, cx, q),
            RadioKind::AckTimeout => self.on_ack_timeout(now, ev, cx, q),
            _ => unreachable!("not an IEEE 802.15.4 MAC event"),
        }
    }

    fn sending_frame(&self) -> Frame {
        *self.queue.front().expect("a head frame")
    }

    fn is_retransmission(&self) -> bool {
        self.csma.retries > 0
    }

    fn tx_ended(&mut self, now: Instant, u: u16, cx: &mut dyn Medium, q: &mut dyn Scheduler) {
        let deadline = self.csma.on_tx_end(now, &self.params);
        let gen = cx.gen(u);
        cx.schedule(q, deadline, RadioKind::AckTimeout, u, 0, gen);
    }

    fn tx_delivered(
        &mut self,
        _now: Instant,
        _u: u16,
        _ok: bool,
        received: MeshOutcome,
        _cx: &mut dyn Medium,
        _q: &mut dyn Scheduler,
    ) -> MeshOutcome {
        received
    }

    fn on_ack(
        &mut self,
        now: Instant,
        u: u16,
        acker: u16,
        ok: bool,
        gen: u32,
        cx: &mut dyn Medium,
        q: &mut dyn Scheduler,
    ) -> MeshOutcome {
        if ok && cx.gen(u) == gen && self.csma.state == MacState::WaitAck {
            let encounter = cx.copy_start(u);
            cx.phase_update(now, u, acker, Some(encounter));
            self.csma.on_ack();
            return self.resolve_head(now, u, true, cx, q);
        }
        MeshOutcome::Nothing
    }

    fn queued(&self) -> usize {
        self.queue.len()
    }
}
