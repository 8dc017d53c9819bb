//! What a MAC is to the mesh, and what the mesh is to a MAC: the [`Mac`] trait each MAC
//! implements (one instance per node) and the [`Medium`] trait through which it reaches the
//! shared radio medium. A leaf: it names the shared types (`types.rs`, `params.rs`) and
//! neither the mesh nor any MAC.
//!
//! Sans-IO like the rest of the engine: a MAC is told what happened (`now`, an event, the
//! medium's state) and answers by scheduling its next steps on the scheduler it is handed and
//! by returning what became of packets. The mesh owns the air (who transmits, collisions,
//! acknowledgements, duty-cycled strobes); a MAC owns its node's queues and decides when
//! each frame goes on the air ([`RadioKind::TxStart`]) and what its (lack of an)
//! acknowledgement means. The order of the schedule calls and random draws is the results'
//! (the event queue breaks ties by insertion order), so each hook's place in the mesh's
//! sequence is part of its contract.

use coaplab_cc::rng::Rng;
use coaplab_cc::{Duration, Instant};

use crate::metrics::MeshCounters;
use crate::net::common::DropReason;
use crate::net::event::Scheduler;
use crate::sim::slab::PacketId;

use super::super::types::{Frame, MeshOutcome, RadioEvent, RadioKind};

/// The mesh as one node's MAC sees it (implemented by `Mesh`).
pub trait Medium {
    /// Schedules a radio event of `kind` for `node` at `at`.
    fn schedule(
        &self,
        q: &mut dyn Scheduler,
        at: Instant,
        kind: RadioKind,
        node: u16,
        peer: u16,
        gen: u32,
    );
    /// Whether node `u` finds the channel busy in the CCA window ending at `now`.
    fn channel_busy(&self, now: Instant, u: u16) -> bool;
    /// Whether a transmission addressed to node `u` is on the air.
    fn addressed(&self, u: u16) -> bool;
    /// Until then node `u` owes an acknowledgement (turnaround + ACK).
    fn ack_busy_until(&self, u: u16) -> Instant;
    /// When node `u`'s copy on the air towards its receiver started (its last one).
    fn copy_start(&self, u: u16) -> Instant;
    /// Node `u`'s MAC generation: acknowledgements and timers carry it, and die when it moved.
    fn gen(&self, u: u16) -> u32;
    /// Moves node `u`'s generation on (its head frame was resolved); returns the new one.
    fn next_gen(&mut self, u: u16) -> u32;
    /// Node `u`'s random source.
    fn rng(&mut self, u: u16) -> &mut dyn Rng;
    fn counters(&mut self) -> &mut MeshCounters;
    /// Node `u`'s drops by cause (`mac::contiki::DROP_*`), for the MACs that report them
    /// (`MacEntry::node_drops` in `mac/mod.rs`).
    fn node_drops(&mut self, u: u16) -> &mut [u64; 3];
    /// Packet `id`'s current hop transfer (0: none) and the hop's receiver.
    fn transfer(&self, id: PacketId) -> (u32, u16);
    /// Packet `id` is lost: it has no transfer any more.
    fn abandon(&mut self, id: PacketId);
    /// Duty cycling: how long node `u` waits at `now` before its channel access towards
    /// `neighbor` (ContikiMAC's phase optimisation; zero without it).
    fn phase_defer(&self, now: Instant, u: u16, neighbor: u16) -> Duration;
    /// Duty cycling: node `u`'s transmission to `neighbor` was acknowledged (`Some(encounter)`)
    /// or not (`None`).
    fn phase_update(&mut self, now: Instant, u: u16, neighbor: u16, encounter: Option<Instant>);
    /// The length of the last frame of packet `id` received at the node it is at (0 if it
    /// entered the mesh there): what the CPU read out of the radio for it.
    fn rx_bytes(&self, id: PacketId) -> u32;
    /// Whether a frame addressed to node `u` arrived in its radio's RX FIFO less than
    /// `window` before `now` (and not after it).
    fn rx_arrived_within(&self, now: Instant, u: u16, window: Duration) -> bool;
    /// The MAC of node `u` is done with a frame to `to`: acknowledged after `num_tx`
    /// transmissions, or given up (RPL's link estimate, `rpl_etx.rs`).
    fn link_sent(&mut self, u: u16, to: u16, acked: bool, num_tx: u8);
}

/// One node's MAC. The mesh calls it, for node `u`:
///
/// - to queue a packet's frames for the next hop ([`Mac::admits`], then [`Mac::enqueue`]);
/// - on the MAC's own events ([`RadioKind::is_mac_timer`]: [`Mac::on_event`]);
/// - when its frame goes on the air ([`Mac::sending_frame`], [`Mac::is_retransmission`]);
/// - when its frame leaves the air: [`Mac::tx_ended`] before the receiver acknowledges and
///   takes it, [`Mac::tx_delivered`] after;
/// - when an acknowledgement for it leaves the air ([`Mac::on_ack`]);
/// - as a receiver: [`Mac::accept`] for each clean frame, [`Mac::reassembled`] for a whole
///   packet.
pub trait Mac {
    /// Whether a packet of `count` frames fits in the node's queue (checked before its
    /// transfer opens; a refusal is a MAC-queue drop).
    fn admits(&self, count: usize) -> bool;

    /// Queues `frames` (one hop transfer of packet `id`) at `now`; `Some(reason)` if the
    /// packet is lost instead (the MAC counts why and abandons the transfer).
    fn enqueue(
        &mut self,
        now: Instant,
        u: u16,
        id: PacketId,
        frames: &[Frame],
        cx: &mut dyn Medium,
        q: &mut dyn Scheduler,
    ) -> Option<DropReason>;

    /// One of the MAC's own events.
    fn on_event(
        &mut self,
        now: Instant,
        ev: RadioEvent,
        cx: &mut dyn Medium,
        q: &mut dyn Scheduler,
    ) -> MeshOutcome;

    /// The frame the node is sending.
    fn sending_frame(&self) -> Frame;

    /// Whether the frame going on the air was on the air before.
    fn is_retransmission(&self) -> bool;

    /// The node's frame left the air at `now`, before its receiver reacts.
    fn tx_ended(&mut self, _now: Instant, _u: u16, _cx: &mut dyn Medium, _q: &mut dyn Scheduler) {}

    /// The node's frame left the air at `now`, `ok` if it reached its receiver, which then
    /// acknowledged it and got `received`'s outcome; returns the event's outcome.
    fn tx_delivered(
        &mut self,
        now: Instant,
        u: u16,
        ok: bool,
        received: MeshOutcome,
        cx: &mut dyn Medium,
        q: &mut dyn Scheduler,
    ) -> MeshOutcome;

    /// An acknowledgement from `acker` for the node's frame of generation `gen` left the air at
    /// `now` (`ok`: it arrived).
    #[allow(clippy::too_many_arguments)]
    fn on_ack(
        &mut self,
        now: Instant,
        u: u16,
        acker: u16,
        ok: bool,
        gen: u32,
        cx: &mut dyn Medium,
        q: &mut dyn Scheduler,
    ) -> MeshOutcome;

    /// As receiver `u`: frame `f` from `from` arrived cleanly at `now`. `Err(outcome)`: the
    /// frame goes no further.
    fn accept(
        &mut self,
        _now: Instant,
        _u: u16,
        _from: u16,
        _f: Frame,
        _cx: &mut dyn Medium,
    ) -> Result<(), MeshOutcome> {
        Ok(())
    }

    /// As receiver: the packet of transfer `xfer` is whole.
    fn reassembled(&mut self, _xfer: u32) {}

    /// Frames the node holds.
    fn queued(&self) -> usize;
}
