//! The measurements of a run on a multi-hop radio network (docs/networks.md "Metrics"): the
//! mesh's counters, offered and carried load, and each client's route length.

use super::World;
use crate::metrics::MeshResult;

impl World {
    /// The mesh's result, for runs on a mesh (`None` otherwise, so other results are
    /// unchanged); `period` is the run's measured period, s.
    pub(crate) fn mesh_result(&self, period: f64) -> Option<MeshResult> {
        let mesh = self.sh.net.mesh()?;
        let (mut generated, mut app_drops, mut offered_bytes) = (0u64, 0u64, 0u64);
        let mut client_hops = Vec::new();
        let mut client_mean_exchange_s = Vec::new();
        let routes = self.udp.client_routes();
        for g in self.groups.iter().filter(|g| !g.tcp && !g.qblock) {
            for id in g.first..g.first + g.count {
                let local = self.udp.local_index(id).expect("a UDP client") as usize;
                let c = &self.udp.clients[local];
                // Periodic clients count the requests they created (started or dropped);
                // other workloads create a request per exchange they start.
                let made = if c.period().is_some() {
                    c.stats.generated
                } else {
                    c.started()
                };
                generated += u64::from(made);
                app_drops += u64::from(c.stats.app_drops);
                // Every request of the client has the same size: its IPv6 packet is the IPv4
                // one with a 40-byte instead of a 20-byte header. A reporting device's
                // reports each have their own: their IPv4 bytes were counted as created.
                if c.reports.is_some() {
                    offered_bytes += c.stats.generated_ip_bytes + 20 * u64::from(made);
                } else {
                    let req =
                        self.udp
                            .msgs_of(id)
                            .request(id, 0, 0, 0, None, coaplab_cc::Instant::ZERO);
                    offered_bytes += u64::from(made) * u64::from(req.ip_bytes + 20);
                }
                let r = &self.sh.net.routes[routes[local][0] as usize];
                client_hops.push(mesh.hops(r.from, r.to));
                let s = &c.stats;
                client_mean_exchange_s.push(
                    (s.completed > 0).then(|| s.exchange_time.secs_f64() / f64::from(s.completed)),
                );
            }
        }
        let duration = self
            .groups
            .iter()
            .filter_map(|g| g.cfg.workload.duration_s)
            .fold(0.0, f64::max);
        let duration = if duration > 0.0 { duration } else { period };
        let kbps = |bytes: u64| {
            if duration > 0.0 {
                bytes as f64 * 8.0 / 1000.0 / duration
            } else {
                0.0
            }
        };
        // Distinct requests that left the mesh towards their server (retransmitted copies of
        // a request that already arrived are not carried load), by their IPv6 bytes.
        let carried_bytes = mesh.counters.request_bytes_delivered;
        Some(MeshResult {
            counters: mesh.counters,
            nodes: mesh.len() as u32,
            requests_generated: generated,
            app_drops,
            offered_kbps: kbps(offered_bytes),
            carried_kbps: kbps(carried_bytes),
            client_hops,
            client_mean_exchange_s,
            node_drops: mesh.node_drops.clone(),
        })
    }
}
