//! The mesh as its nodes' MACs see it: [`Medium`] for [`Mesh`] (the MAC's window on the air,
//! its node's generation and random source, the packets' transfers, the duty-cycling layer).

use coaplab_cc::rng::Rng;
use coaplab_cc::{Duration, Instant};

use super::mac::Medium;
use super::on_time::DutyCycle;
use super::types::{RadioEvent, RadioKind};
use super::Mesh;
use crate::metrics::MeshCounters;
use crate::net::event::{NetEvent, Scheduler};
use crate::sim::slab::PacketId;

/// The mesh as its nodes' MACs see it.
impl Medium for Mesh {
    fn schedule(
        &self,
        q: &mut dyn Scheduler,
        at: Instant,
        kind: RadioKind,
        node: u16,
        peer: u16,
        gen: u32,
    ) {
        q.schedule_net(
            at,
            NetEvent::Radio(
                self.element,
                RadioEvent {
                    kind,
                    node,
                    peer,
                    gen,
                },
            ),
        );
    }

    fn channel_busy(&self, now: Instant, u: u16) -> bool {
        let node = &self.nodes[u as usize];
        if node.on_air {
            return true;
        }
        let window_start =
            Instant::from_nanos(now.nanos().saturating_sub(self.params.mac.cca.nanos()));
        let n = self.nodes.len();
        (0..n).any(|j| {
            self.senses[u as usize * n + j]
                && (self.nodes[j].on_air || self.nodes[j].last_air_end > window_start)
        })
    }

    fn addressed(&self, u: u16) -> bool {
        self.air.iter().any(|a| a.rx == u)
    }

    fn ack_busy_until(&self, u: u16) -> Instant {
        self.nodes[u as usize].ack_busy_until
    }

    fn copy_start(&self, u: u16) -> Instant {
        self.nodes[u as usize].copy_start
    }

    fn gen(&self, u: u16) -> u32 {
        self.nodes[u as usize].gen
    }

    fn next_gen(&mut self, u: u16) -> u32 {
        let node = &mut self.nodes[u as usize];
        node.gen = node.gen.wrapping_add(1);
        node.gen
    }

    fn rng(&mut self, u: u16) -> &mut dyn Rng {
        &mut self.nodes[u as usize].rng
    }

    fn counters(&mut self) -> &mut MeshCounters {
        &mut self.counters
    }

    fn node_drops(&mut self, u: u16) -> &mut [u64; 3] {
        &mut self.node_drops[u as usize]
    }

    fn transfer(&self, id: PacketId) -> (u32, u16) {
        let t = &self.transit[id as usize];
        (t.xfer, t.to)
    }

    fn abandon(&mut self, id: PacketId) {
        self.transit[id as usize].xfer = 0;
    }

    fn phase_defer(&self, now: Instant, u: u16, neighbor: u16) -> Duration {
        self.rdc
            .as_ref()
            .map_or(Duration::ZERO, |rdc| rdc.defer(now, u, neighbor))
    }

    fn phase_update(&mut self, now: Instant, u: u16, neighbor: u16, encounter: Option<Instant>) {
        if let Some(rdc) = &mut self.rdc {
            rdc.update(now, u, neighbor, encounter);
        }
    }

    fn rx_bytes(&self, id: PacketId) -> u32 {
        u32::from(self.transit[id as usize].rx_bytes)
    }

    fn rx_arrived_within(&self, now: Instant, u: u16, window: Duration) -> bool {
        let end = self.nodes[u as usize].rx_end;
        end > Instant::ZERO && end <= now && now.nanos() - end.nanos() < window.nanos()
    }

    /// RPL's link estimate takes the outcome; if it changed, node `u` chooses its parent
    /// again (`rpl.c` `rpl_link_neighbor_callback` marks the parent updated,
    /// `rpl_recalculate_ranks` → `rpl_select_parent`; `rpl_etx.rs`).
    fn link_sent(&mut self, u: u16, to: u16, acked: bool, num_tx: u8) {
        let Some(r) = self.routing.as_mut() else {
            return;
        };
        if !r.packet_sent(u, to, acked, num_tx) {
            return;
        }
        let n = self.nodes.len();
        let neighbors: Vec<u16> = (0..n as u16)
            .filter(|&j| self.in_range[u as usize * n + j as usize])
            .collect();
        let best = r.best_parent(&self.dodag, &neighbors, u);
        if best != self.dodag.parent[u as usize] {
            self.dodag.set_parent(u, best);
            r.changes += 1;
            self.counters.parent_changes += 1;
        }
    }
}

/// The mesh's observations for the run's end (energy, the end-of-run check).
impl Mesh {
    /// Each node's radio time per state from 0 to `until` (docs/energy.md).
    pub fn state_times(&self, until: Instant) -> Vec<crate::energy::StateTimes> {
        let duty = self.params.wake_period.map(|period| DutyCycle {
            period,
            phases: &self.wake_phases,
        });
        self.on_time.state_times(until, duty)
    }

    /// Frames waiting in every MAC queue (for the end-of-run check).
    pub fn queued_frames(&self) -> usize {
        self.macs.iter().flatten().map(|m| m.queued()).sum()
    }
}
