//! Contiki 2.6's MAC stack on a CC2420 (`network.mac = "contiki"`, docs/networks.md): the CSMA
//! driver (`core/net/mac/csma.c`) over NullRDC (`core/net/mac/nullrdc.c`) or ContikiMAC, with
//! 6LoWPAN's one-at-a-time reassembly (`core/net/sicslowpan.c`), all at tag 2.6.
//!
//! What it does, per node:
//!
//! - **Time base** T (`default_timebase()`): the RDC's channel-check interval, or with
//!   NullRDC (whose `channel_check_interval()` returns 0) `CLOCK_SECOND /
//!   NETSTACK_RDC_CHANNEL_CHECK_RATE` — 128 / 8 = 16 ticks = 125 ms. ContikiMAC's interval is
//!   the same 16 ticks at 8 Hz, so both use `clock_second / channel_check_rate_hz` whole ticks.
//! - **Queues** (`send_packet`): one queue per next hop (`struct neighbor_queue`), at most
//!   `CSMA_MAX_NEIGHBOR_QUEUES` (2) of them (`MEMB(neighbor_memb, …)`), all drawing on one pool
//!   of `QUEUEBUF_NUM` buffers (`MEMB(packet_memb, …)` and `queuebuf_new_from_packetbuf()`).
//!   6LoWPAN hands the MAC one frame at a time (`sicslowpan.c` `output()` → `send_packet()`
//!   → `NETSTACK_MAC.send` per fragment), so a buffer holds a frame: a fragment, or a whole
//!   unfragmented packet. For a fragment `output()` first copies the packetbuf into a
//!   temporary queuebuf of the same pool and frees it after the MAC took its own, so a
//!   fragment needs two free buffers at that moment. A frame for a neighbour without an entry
//!   when both entries are taken, or finding no buffer, is dropped (counted by cause); the
//!   fragments already queued stay (sent for nothing, as in Contiki).
//! - **Sending** (`transmit_packet_list` → `nullrdc.c` `send_packet` → `cc2420.c`
//!   `cc2420_transmit`): no random backoff before a first attempt (`ctimer_set(…, 0, …)`); the
//!   CC2420 assesses the channel (`WITH_SEND_CCA`: `STXONCCA`) and a busy channel is reported
//!   as `MAC_TX_COLLISION`. The radio answers acknowledgements in hardware
//!   (`CC2420_CONF_AUTOACK` 1), but with `NULLRDC_802154_AUTOACK` 0 (Sky, Z1) the sender does
//!   not wait for them: a frame on the air is `MAC_TX_OK`, whether or not it arrived. With
//!   autoack 1 the sender waits `ACK_WAIT_TIME` for an acknowledgement to start, then
//!   `AFTER_ACK_DETECTED_WAIT_TIME` for it to end: no activity — `MAC_TX_NOACK`; activity but
//!   no acknowledgement for it — `MAC_TX_COLLISION`. ContikiMAC always waits for it.
//! - **Retries** (`packet_sent`): `MAC_TX_OK` and `MAC_TX_NOACK` count a transmission,
//!   `MAC_TX_COLLISION` only a collision. After a collision or a missing acknowledgement the
//!   frame is sent again after `T + random_rand() % (k·T)` ticks, k = min(transmissions + 1, 3)
//!   — a collision does not count as a transmission, so collisions alone keep k = 1 and are
//!   retried without limit — unless `transmissions` reached the frame's maximum
//!   (`SICSLOWPAN_MAX_MAC_TRANSMISSIONS`, 4), when it is given up.
//! - **Spacing** (`free_first_packet`): once a frame leaves its queue (sent or given up), the
//!   next one in that queue waits one time base T; the last one frees the neighbour entry.
//! - **Reassembly** (`sicslowpan.c` `input()`): one packet at a time. While a reassembly is
//!   under way (started by any fragment, FRAG1 or not), every frame that is not the next
//!   fragment of that packet from that sender — fragments of another packet and unfragmented
//!   packets alike — is dropped, until the packet is complete or `SICSLOWPAN_REASS_MAXAGE`
//!   (8 s on Sky and Z1) expired.
//!
//! The node's CPU runs one send at a time (the NullRDC send busy-waits): a neighbour queue
//! whose timer expires during another queue's send is served when that send is done.
//!
//! - **Processing**: a packet handed to the stack (received for forwarding, or sent by the
//!   application) reaches CSMA's queue and its first CCA after the CPU's processing time:
//!   by default ([`cpu_time`]) a fixed part ([`CPU_FIXED_US`]) plus the SPI
//!   copies of the frame read and the frame loaded ([`SPI_BYTE_US`] a byte), so it varies with
//!   the frames' lengths; or one constant ([`PROCESSING_US`], `contiki_cpu_time = "constant"`).
//! - **Clock ticks** (`contiki_clock_ticks`): CSMA's retry and spacing ctimers expire on the
//!   128 Hz clock's ticks ([`ContikiParams::timer_at`]), so a delay of d ticks lasts between
//!   d − 1 and d ticks; the zero-time ctimer of a first send runs at once.
//! - **Pending frame** (`contiki_pending_packet`): with an acknowledgement wait, a send
//!   is refused as a collision (and retried after the backoff) when a frame addressed to the
//!   node arrived while the send loaded its frame into the TX FIFO ([`SPI_BYTE_US`] a byte
//!   before the CCA): the CPU was in `send_packet` and could not read it out.
//! - **Routing** (`contiki_rpl_etx`): every frame the MAC is done with reports its outcome to
//!   RPL's ETX estimate (`rpl_etx.rs`).
//!
//! Not modelled: interrupts' share of the CPU, broadcasts (no RPL traffic is
//! simulated), `MAC_TX_DEFERRED` (NullRDC never defers), the sequence-number check of received
//! frames without autoack (no retransmission then, so no duplicates), and `last_tx_status`'s
//! quirk in `output()` (it reads a previous frame's status, CSMA answering asynchronously).

use std::collections::VecDeque;

use coaplab_cc::rng::Rng;
use coaplab_cc::Instant;

pub use super::super::params::ContikiParams;
use super::super::params::RadioParams;
use super::super::types::{Frame, MeshOutcome, RadioEvent, RadioKind, UDP_PORTS};
use super::traits::{Mac, Medium};
use crate::net::common::DropReason;
use crate::net::event::Scheduler;
use crate::sim::slab::PacketId;

// Contiki's defaults of the `contiki_*` keys live with the rest of the radio's configuration.
pub use super::super::config::{
    ACK_WAIT_US, AFTER_ACK_DETECTED_WAIT_US, CLOCK_SECOND, CPU_FIXED_US, CSMA_MAX_NEIGHBOR_QUEUES,
    PROCESSING_US, SICSLOWPAN_MAX_MAC_TRANSMISSIONS, SICSLOWPAN_REASS_MAXAGE_S, SPI_BYTE_US,
};
/// The causes of `Mesh::node_drops`, by index: a full queue or pool, the MAC transmission
/// limit, a collision (or a reassembly refusal) at the receiver.
pub const DROP_QUEUE: usize = 0;
pub const DROP_RETRY_LIMIT: usize = 1;
pub const DROP_COLLISION: usize = 2;
/// `packet_sent`'s clamp of the linear backoff factor.
const MAX_BACKOFF_FACTOR: u32 = 3;
/// `MAX_SEQNOS` (`nullrdc.c`): received (sender, sequence number) pairs remembered to drop
/// duplicates (with autoack only).
const MAX_SEQNOS: usize = 16;

/// What the radio driver reported for one send (`mac.h`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TxStatus {
    Ok,
    NoAck,
    Collision,
}

/// Why a frame was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// No neighbour entry free (`neighbor_memb` exhausted).
    NoNeighbor,
    /// No packet buffer free (`packet_memb` / queuebuf exhausted).
    NoBuffer,
}

/// A neighbour queue's transmit timer armed to expire at `at` (`gen` identifies it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timer {
    pub neighbor: u16,
    pub at: Instant,
    pub gen: u32,
}

/// What `packet_sent` did with the head frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SentOutcome<F> {
    /// The frame left the queue: `(frame, given_up)`.
    pub freed: Option<(F, bool)>,
    /// The timer armed for this neighbour (retry, or the next frame after T).
    pub timer: Option<Timer>,
    /// The frame's transmissions so far (`num_tx`, what `mac_call_sent_callback` reports).
    pub num_tx: u8,
}

/// One neighbour's queue (`struct neighbor_queue`).
#[derive(Clone, Debug)]
pub struct NeighborQueue<F> {
    pub addr: u16,
    pub frames: VecDeque<F>,
    pub transmissions: u8,
    pub collisions: u8,
    /// The armed timer's generation (0: none).
    timer: u32,
}

/// One node's CSMA driver state.
#[derive(Clone, Debug)]
pub struct ContikiCsma<F> {
    pub neighbors: Vec<NeighborQueue<F>>,
    /// `QUEUEBUF_NUM`.
    pub buffers: usize,
    /// Buffers holding queued frames.
    pub used: usize,
    /// The neighbour whose head frame is being sent (CCA to `packet_sent`).
    pub sending: Option<u16>,
    /// Timers that expired during a send, in order.
    deferred: VecDeque<u16>,
    next_timer: u32,
    /// Autoack: an acknowledgement for the current send arrived.
    pub acked: bool,
    /// The reassembly under way: (transfer, sender, expiry).
    pub reassembly: Option<(u32, u16, Instant)>,
    /// Autoack: recently received (sender, transfer, fragment).
    seqnos: VecDeque<(u16, u32, u16)>,
}

impl<F: Copy> ContikiCsma<F> {
    pub fn new(buffers: usize) -> Self {
        ContikiCsma {
            neighbors: Vec::new(),
            buffers,
            used: 0,
            sending: None,
            deferred: VecDeque::new(),
            next_timer: 0,
            acked: false,
            reassembly: None,
            seqnos: VecDeque::new(),
        }
    }

    fn find(&self, addr: u16) -> Option<usize> {
        self.neighbors.iter().position(|n| n.addr == addr)
    }

    fn arm(&mut self, i: usize, at: Instant) -> Timer {
        self.next_timer = self.next_timer.wrapping_add(1).max(1);
        self.neighbors[i].timer = self.next_timer;
        Timer {
            neighbor: self.neighbors[i].addr,
            at,
            gen: self.next_timer,
        }
    }

    /// `send_packet`: queue `frame` for neighbour `to` at `now`. `fragment`: the frame is a
    /// 6LoWPAN fragment (needs a second, temporary buffer). `Ok(Some(timer))` when it is its
    /// queue's head (sent at once, `ctimer_set(…, 0, …)`: the timer expires after the CPU's
    /// `processing`).
    pub fn enqueue(
        &mut self,
        now: Instant,
        to: u16,
        frame: F,
        fragment: bool,
        p: &ContikiParams,
    ) -> Result<Option<Timer>, Refusal> {
        self.enqueue_after(now, to, frame, fragment, p.processing, p)
    }

    /// [`ContikiCsma::enqueue`] with the CPU's time `processing` before a head frame's send.
    pub fn enqueue_after(
        &mut self,
        now: Instant,
        to: u16,
        frame: F,
        fragment: bool,
        processing: coaplab_cc::Duration,
        p: &ContikiParams,
    ) -> Result<Option<Timer>, Refusal> {
        let free = self.buffers.saturating_sub(self.used);
        // A fragment's temporary copy (`output()`) is taken before the MAC runs.
        let temp = usize::from(fragment);
        if free < temp {
            return Err(Refusal::NoBuffer);
        }
        // `send_packet`: the neighbour entry first, then the buffer (an entry allocated for
        // nothing is freed again).
        if self.find(to).is_none() && self.neighbors.len() >= p.max_neighbor_queues {
            return Err(Refusal::NoNeighbor);
        }
        if free < temp + 1 {
            return Err(Refusal::NoBuffer);
        }
        let i = match self.find(to) {
            Some(i) => i,
            None if self.neighbors.len() < p.max_neighbor_queues => {
                self.neighbors.push(NeighborQueue {
                    addr: to,
                    frames: VecDeque::new(),
                    transmissions: 0,
                    collisions: 0,
                    timer: 0,
                });
                self.neighbors.len() - 1
            }
            None => return Err(Refusal::NoNeighbor),
        };
        self.used += 1;
        self.neighbors[i].frames.push_back(frame);
        if self.neighbors[i].frames.len() == 1 {
            return Ok(Some(self.arm(i, now + processing)));
        }
        Ok(None)
    }

    /// Timer `gen` of neighbour `addr` expired: `Some(frame)` to send now, or `None` (a stale
    /// timer, or the radio is busy with another send: served after it).
    pub fn on_timer(&mut self, addr: u16, gen: u32) -> Option<F> {
        let i = self.find(addr)?;
        if self.neighbors[i].timer != gen || gen == 0 {
            return None;
        }
        self.neighbors[i].timer = 0;
        if self.sending.is_some() {
            self.deferred.push_back(addr);
            return None;
        }
        self.sending = Some(addr);
        self.acked = false;
        self.neighbors[i].frames.front().copied()
    }

    /// After a send finished: the next deferred queue to serve, with its head frame.
    pub fn next_deferred(&mut self) -> Option<(u16, F)> {
        while let Some(addr) = self.deferred.pop_front() {
            if let Some(i) = self.find(addr) {
                if let Some(&f) = self.neighbors[i].frames.front() {
                    self.sending = Some(addr);
                    self.acked = false;
                    return Some((addr, f));
                }
            }
        }
        None
    }

    /// Whether the frame being sent was on the air before (a retransmission).
    pub fn is_retransmission(&self) -> bool {
        self.sending
            .and_then(|a| self.find(a))
            .is_some_and(|i| self.neighbors[i].transmissions > 0)
    }

    /// `packet_sent`: the send of the head frame of the queue being served ended at `now`
    /// with `status`.
    pub fn packet_sent(
        &mut self,
        now: Instant,
        status: TxStatus,
        p: &ContikiParams,
        rng: &mut dyn Rng,
    ) -> SentOutcome<F> {
        let addr = self.sending.take().expect("a send under way");
        let i = self.find(addr).expect("the queue being served");
        let n = &mut self.neighbors[i];
        match status {
            TxStatus::Ok | TxStatus::NoAck => n.transmissions = n.transmissions.saturating_add(1),
            TxStatus::Collision => n.collisions = n.collisions.saturating_add(1),
        }
        let num_tx = n.transmissions;
        if status != TxStatus::Ok {
            if n.transmissions < p.max_transmissions {
                let k = (u32::from(n.transmissions) + 1).min(MAX_BACKOFF_FACTOR);
                let t = u64::from(p.timebase_ticks);
                // random_rand() is 16 bits (`lib/random.c`: `(unsigned short)rand()`).
                let draw = u64::from(rng.next_u64() as u16);
                let ticks = t + draw % (u64::from(k) * t);
                let timer = self.arm(i, p.timer_at(now, ticks));
                return SentOutcome {
                    freed: None,
                    timer: Some(timer),
                    num_tx,
                };
            }
            let (f, timer) = self.free_first(i, now, p);
            return SentOutcome {
                freed: Some((f, true)),
                timer,
                num_tx,
            };
        }
        let (f, timer) = self.free_first(i, now, p);
        SentOutcome {
            freed: Some((f, false)),
            timer,
            num_tx,
        }
    }

    /// `free_first_packet`: the head frame leaves; the next waits T, or the entry is freed.
    fn free_first(&mut self, i: usize, now: Instant, p: &ContikiParams) -> (F, Option<Timer>) {
        let n = &mut self.neighbors[i];
        let f = n.frames.pop_front().expect("a head frame");
        self.used -= 1;
        if n.frames.is_empty() {
            self.neighbors.remove(i);
            return (f, None);
        }
        n.transmissions = 0;
        n.collisions = 0;
        let timer = self.arm(i, p.timer_at(now, u64::from(p.timebase_ticks)));
        (f, Some(timer))
    }

    /// A frame of transfer `xfer` arrived from `from` at `now` (`fragment`: it is one of
    /// several). `false`: `input()` drops it, a reassembly of another packet being under way.
    pub fn reassembly_accepts(
        &mut self,
        now: Instant,
        from: u16,
        xfer: u32,
        fragment: bool,
        p: &ContikiParams,
    ) -> bool {
        if let Some((x, s, until)) = self.reassembly {
            if now >= until {
                self.reassembly = None;
            } else {
                return fragment && x == xfer && s == from;
            }
        }
        if fragment {
            self.reassembly = Some((xfer, from, now + p.reassembly_timeout));
        }
        true
    }

    /// The reassembly of transfer `xfer` completed.
    pub fn reassembled(&mut self, xfer: u32) {
        if self.reassembly.is_some_and(|(x, _, _)| x == xfer) {
            self.reassembly = None;
        }
    }

    /// Autoack: whether (from, xfer, frag) was received lately (`packet_input`'s
    /// `received_seqnos`); remembers it otherwise.
    pub fn duplicate(&mut self, from: u16, xfer: u32, frag: u16) -> bool {
        let key = (from, xfer, frag);
        if self.seqnos.contains(&key) {
            return true;
        }
        if self.seqnos.len() == MAX_SEQNOS {
            self.seqnos.pop_back();
        }
        self.seqnos.push_front(key);
        false
    }
}

// ---------------------------------------------------------------------------------------------
// The mesh's side: Contiki's CSMA driving the shared medium of `mod.rs`.

/// The Contiki MAC of one node (`network.mac = "contiki"`): its CSMA driver state.
pub struct ContikiMac {
    ck: ContikiCsma<Frame>,
    p: ContikiParams,
    /// The radio's RX → TX turnaround (after the CC2420's CCA).
    turnaround: coaplab_cc::Duration,
}

impl ContikiMac {
    /// The registry's constructor: a pool of `capacity` buffers.
    pub fn build(p: &RadioParams, capacity: usize) -> Box<dyn Mac> {
        Box::new(ContikiMac {
            ck: ContikiCsma::new(capacity),
            p: p.contiki.expect("the Contiki profile's parameters"),
            turnaround: p.mac.turnaround,
        })
    }

    /// Node `u` starts sending its queue's head frame at `now` (`transmit_packet_list`): the
    /// CC2420's CCA, then the frame after the turnaround, or a collision report at once.
    fn send(
        &mut self,
        now: Instant,
        u: u16,
        cx: &mut dyn Medium,
        q: &mut dyn Scheduler,
    ) -> MeshOutcome {
        let gen = cx.next_gen(u);
        if cx.channel_busy(now, u) {
            cx.counters().tx_collisions += 1;
            return self.sent(now, u, TxStatus::Collision, cx, q);
        }
        // `nullrdc.c` (with NULLRDC_802154_AUTOACK) and `contikimac.c` `send_packet`: the
        // frame is loaded into the TX FIFO first (`NETSTACK_RADIO.prepare`, `cc2420_prepare`),
        // then a frame waiting in the RX FIFO (`NETSTACK_RADIO.pending_packet()`, the CC2420's
        // FIFOP) refuses the send with MAC_TX_COLLISION. The CPU, busy in `send_packet`, cannot
        // read (cc2420_process runs on a poll between processes), so a frame pends if it
        // arrived during the load. Any earlier one was read first: the poll runs before the
        // timer event that starts this send (`process.c` `process_run`: polls, then one
        // event). The load is taken to end at this CCA.
        let load = spi_time(u32::from(self.sending_frame().bytes) + 1);
        if self.p.pending_refusal && self.p.wait_ack && cx.rx_arrived_within(now, u, load) {
            let c = cx.counters();
            c.tx_collisions += 1;
            c.pending_refusals += 1;
            return self.sent(now, u, TxStatus::Collision, cx, q);
        }
        cx.schedule(q, now + self.turnaround, RadioKind::TxStart, u, 0, gen);
        MeshOutcome::Nothing
    }

    /// `packet_sent` at node `u`; then the next queue waiting for the radio.
    fn sent(
        &mut self,
        now: Instant,
        u: u16,
        status: TxStatus,
        cx: &mut dyn Medium,
        q: &mut dyn Scheduler,
    ) -> MeshOutcome {
        let out = self.ck.packet_sent(now, status, &self.p, cx.rng(u));
        if let Some(t) = out.timer {
            cx.schedule(q, t.at, RadioKind::CkTimer, u, t.neighbor, t.gen);
        }
        if let (Some((f, given_up)), true) = (out.freed, self.p.rpl_etx) {
            // `mac_call_sent_callback` → `sicslowpan.c` `packet_sent` →
            // `neighbor_info_packet_sent(status, num_tx)`: a given-up frame's last status is
            // MAC_TX_NOACK (collisions do not count towards the limit).
            cx.link_sent(u, f.to, !given_up, out.num_tx);
        }
        let mut result = MeshOutcome::Nothing;
        if let Some((f, true)) = out.freed {
            cx.counters().retry_failures += 1;
            result = lose(f, u, DROP_RETRY_LIMIT, cx);
        }
        if let Some((_, _)) = self.ck.next_deferred() {
            // The deferred send starts now, right after this one (same CPU).
            let r = self.send(now, u, cx, q);
            // A send ends at once only on a busy channel, and a collision is retried, never
            // a drop: `r` is `Nothing`.
            debug_assert!(r == MeshOutcome::Nothing, "two outcomes from one event");
            if result == MeshOutcome::Nothing {
                result = r;
            }
        }
        result
    }
}

/// The CPU's time from the hand-off of a packet (whose last frame in was `rx_bytes` long, 0
/// if it starts at this node) to its first frame's (`first_frame` bytes) CCA: `processing`, or
/// with `contiki_cpu_time = "frame_length"` the fixed part plus the SPI copies of the frame
/// read out of the RX FIFO (`cc2420_read`) and of the first frame loaded into the TX FIFO
/// (`cc2420_prepare`), each with its length byte. The later fragments are loaded while the
/// first ones wait out CSMA's spacing, off this path.
pub fn cpu_time(
    p: &ContikiParams,
    rx_bytes: u32,
    first_frame: Option<u16>,
) -> coaplab_cc::Duration {
    let Some(fixed) = p.cpu_fixed else {
        return p.processing;
    };
    let read = if rx_bytes > 0 { rx_bytes + 1 } else { 0 };
    let load = first_frame.map_or(0, |b| u32::from(b) + 1);
    fixed + spi_time(read + load)
}

/// `bytes` over the CC2420's SPI bus at [`SPI_BYTE_US`] a byte.
pub fn spi_time(bytes: u32) -> coaplab_cc::Duration {
    coaplab_cc::Duration::from_nanos((f64::from(bytes) * SPI_BYTE_US * 1e3).round() as u64)
}

/// Frame `f` failed at node `n`: if it still belongs to its packet's current hop transfer,
/// the packet is lost (a radio drop, counted at `n` under `cause`); else it was a leftover
/// of a transfer already resolved, and nothing is lost.
fn lose(f: Frame, n: u16, cause: usize, cx: &mut dyn Medium) -> MeshOutcome {
    if cx.transfer(f.packet) != (f.xfer, f.to) {
        return MeshOutcome::Nothing;
    }
    cx.abandon(f.packet);
    cx.counters().radio_drops += 1;
    cx.node_drops(n)[cause] += 1;
    MeshOutcome::Dropped(f.packet, DropReason::Radio)
}

impl Mac for ContikiMac {
    fn admits(&self, _count: usize) -> bool {
        // The pool and the neighbour entries are checked frame by frame (`enqueue`).
        true
    }

    /// The packet's frames go to the node's queue for their next hop, one by one; the first
    /// refused one loses the packet (those before it stay queued).
    fn enqueue(
        &mut self,
        now: Instant,
        u: u16,
        id: PacketId,
        frames: &[Frame],
        cx: &mut dyn Medium,
        q: &mut dyn Scheduler,
    ) -> Option<DropReason> {
        let fragment = frames.len() > 1;
        let processing = cpu_time(&self.p, cx.rx_bytes(id), frames.first().map(|f| f.bytes));
        for &f in frames {
            match self
                .ck
                .enqueue_after(now, f.to, f, fragment, processing, &self.p)
            {
                Ok(None) => {}
                Ok(Some(t)) => cx.schedule(q, t.at, RadioKind::CkTimer, u, t.neighbor, t.gen),
                Err(why) => {
                    let c = cx.counters();
                    match why {
                        Refusal::NoNeighbor => c.neighbor_queue_drops += 1,
                        Refusal::NoBuffer => c.buffer_drops += 1,
                    }
                    c.mac_queue_drops += 1;
                    cx.node_drops(u)[DROP_QUEUE] += 1;
                    cx.abandon(id);
                    return Some(DropReason::MacQueue);
                }
            }
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
        let (u, peer, gen) = (ev.node, ev.peer, ev.gen);
        match ev.kind {
            RadioKind::CkTimer => {
                if self.ck.on_timer(peer, gen).is_none() {
                    return MeshOutcome::Nothing;
                }
                self.send(now, u, cx, q)
            }
            RadioKind::CkAckCheck => {
                if gen != cx.gen(u) {
                    return MeshOutcome::Nothing;
                }
                // ACK_WAIT_TIME is over: an acknowledgement under way (or any activity) is
                // read after AFTER_ACK_DETECTED_WAIT_TIME; silence is MAC_TX_NOACK.
                if cx.addressed(u) || self.ck.acked || cx.channel_busy(now, u) {
                    let at = now + self.p.after_ack_wait;
                    cx.schedule(q, at, RadioKind::CkAckDone, u, 0, gen);
                    return MeshOutcome::Nothing;
                }
                self.sent(now, u, TxStatus::NoAck, cx, q)
            }
            RadioKind::CkAckDone => {
                if gen != cx.gen(u) {
                    return MeshOutcome::Nothing;
                }
                let status = if self.ck.acked {
                    TxStatus::Ok
                } else {
                    cx.counters().tx_collisions += 1;
                    TxStatus::Collision
                };
                self.sent(now, u, status, cx, q)
            }
            _ => unreachable!("not a Contiki event"),
        }
    }

    /// The head of the neighbour queue being served.
    fn sending_frame(&self) -> Frame {
        let a = self.ck.sending.expect("a send under way");
        let n = self
            .ck
            .neighbors
            .iter()
            .find(|n| n.addr == a)
            .expect("its queue");
        *n.frames.front().expect("a head frame")
    }

    fn is_retransmission(&self) -> bool {
        self.ck.is_retransmission()
    }

    /// Node `u`'s frame left the air at `now`, `ok` if it reached its receiver (which then
    /// got `received`'s outcome).
    fn tx_delivered(
        &mut self,
        now: Instant,
        u: u16,
        ok: bool,
        received: MeshOutcome,
        cx: &mut dyn Medium,
        q: &mut dyn Scheduler,
    ) -> MeshOutcome {
        let f = self.sending_frame();
        if self.p.wait_ack {
            let gen = cx.gen(u);
            cx.schedule(q, now + self.p.ack_wait, RadioKind::CkAckCheck, u, 0, gen);
            return received;
        }
        // NullRDC without autoack: MAC_TX_OK whatever became of the frame; a frame lost at
        // its receiver loses its packet, unseen by the sender.
        let mut out = received;
        if !ok {
            let lost = lose(f, u, DROP_COLLISION, cx);
            if lost != MeshOutcome::Nothing {
                cx.counters().collision_drops += 1;
                out = lost;
            }
        }
        let r = self.sent(now, u, TxStatus::Ok, cx, q);
        debug_assert!(r == MeshOutcome::Nothing, "an OK send drops nothing");
        out
    }

    fn on_ack(
        &mut self,
        _now: Instant,
        u: u16,
        _acker: u16,
        ok: bool,
        gen: u32,
        cx: &mut dyn Medium,
        _q: &mut dyn Scheduler,
    ) -> MeshOutcome {
        if ok && cx.gen(u) == gen {
            self.ck.acked = true;
        }
        MeshOutcome::Nothing
    }

    /// Duplicate and reassembly checks (`nullrdc.c` `packet_input`, `sicslowpan.c`
    /// `input()`).
    fn accept(
        &mut self,
        now: Instant,
        r: u16,
        from: u16,
        f: Frame,
        cx: &mut dyn Medium,
    ) -> Result<(), MeshOutcome> {
        if self.p.wait_ack && self.ck.duplicate(from, f.xfer, f.frag) {
            cx.counters().duplicates += 1;
            return Err(MeshOutcome::Nothing);
        }
        if !self
            .ck
            .reassembly_accepts(now, from, f.xfer, f.count > 1, &self.p)
        {
            cx.counters().reassembly_drops += 1;
            return Err(lose(f, r, DROP_COLLISION, cx));
        }
        Ok(())
    }

    fn reassembled(&mut self, xfer: u32) {
        self.ck.reassembled(xfer);
    }

    /// Frames held in the node's buffers.
    fn queued(&self) -> usize {
        self.ck.used
    }
}

/// Buffers a node needs to take one UDP packet of `ipv6_bytes` on a middle hop (both
/// addresses inline, the hop limit too: the most 6LoWPAN bytes): 1 unfragmented; a fragmented
/// one queues all its fragments at once (`output()`'s loop) and its last one needs the
/// temporary copy besides, so fragments + 1.
pub fn buffers_for_packet(
    ipv6_bytes: u32,
    addressing: super::super::config::MacAddressing,
) -> Option<u32> {
    use super::super::sixlowpan::{self, Hop};
    let hop = Hop {
        from_origin: false,
        to_destination: false,
        source_outside: false,
        destination_outside: false,
        addressing,
    };
    let f = sixlowpan::fragment(
        sixlowpan::compressed_headers(hop, Some(UDP_PORTS)),
        sixlowpan::IPV6_HEADER + sixlowpan::UDP_HEADER,
        ipv6_bytes.saturating_sub(sixlowpan::IPV6_HEADER + sixlowpan::UDP_HEADER),
        super::super::phy::frame_space(addressing),
    )?;
    Some(if f.count > 1 { f.count + 1 } else { 1 })
}
