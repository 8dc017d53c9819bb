//! The one event loop (docs/design.md §4): a network (`net::network`, built by a topology)
//! and the applications on its nodes — CoAP-over-UDP clients and server (`udp_app`), CoAP over
//! TCP clients and server on the TCP model (`tcp_app`) — for any mix of client populations.
//!
//! Events are of three families: the network's own (a link finished serializing, a packet
//! reaches a link, a packet reaches the end of its route), and each transport's (starts,
//! timers). The network tells the applications what happened to their packets; the
//! applications never name a link.

pub(crate) mod capture;
mod energy;
mod lwm2m_app;
mod lwm2m_state;
pub(crate) mod mesh;
mod observe_app;
pub(crate) mod qblock_app;
pub(crate) mod results;
pub(crate) mod secured;
mod shared;
pub(crate) mod tcp_app;
pub(crate) mod udp_app;
pub(crate) mod udp_security;

use coaplab_cc::registry::Registry;
use coaplab_cc::Instant;

use crate::config::{GroupConfig, RunConfig};
use crate::error::Error;
use crate::foreign::Algorithms;
use crate::net::network::{Handled, LinkRole, NetEvent};
use crate::net::topology::{self, Topology};
use crate::packet::AppPacket;
use crate::sim::event_queue::EventQueue;
use crate::sim::slab::PacketId;
use crate::sim::streams::{stream, Stream};
use qblock_app::QBlockApp;
use shared::{Event, Placement, Shared};
use tcp_app::TcpApp;
use udp_app::UdpApp;

/// One client population of the run, as the results report it.
pub(crate) struct Group {
    pub cfg: GroupConfig,
    /// Global ids `first..first + count`.
    pub first: u32,
    pub count: u32,
    pub tcp: bool,
    /// RFC 9177 Q-Block transfers (`coap.block_mode = "q-block"`, `qblock_app`).
    pub qblock: bool,
}

/// A run: the network, the applications, the groups.
pub struct World {
    cfg: RunConfig,
    replication: u64,
    sh: Shared,
    udp: UdpApp,
    tcp: TcpApp,
    qblock: QBlockApp,
    groups: Vec<Group>,
}

/// The run's populations: its `[[group]]`s, or one from `workload` / `coap` / `tcp`.
fn populations(cfg: &RunConfig) -> Vec<GroupConfig> {
    if cfg.group.is_empty() {
        vec![GroupConfig {
            name: String::new(),
            workload: cfg.workload.clone(),
            coap: cfg.coap.clone(),
            tcp: cfg.tcp.clone(),
        }]
    } else {
        cfg.group.clone()
    }
}

impl World {
    /// Builds replication `replication` of `cfg` with the built-in algorithms.
    pub fn new(cfg: &RunConfig, replication: u64, capture: bool) -> Result<Self, Error> {
        Self::with_registry(cfg, replication, capture, &Registry::builtin())
    }

    /// Builds replication `replication` of `cfg`, resolving its UDP algorithms from `registry`
    /// (the built-ins plus any registered at run time) and `c:LIB:NAME` libraries.
    pub fn with_registry(
        cfg: &RunConfig,
        replication: u64,
        capture: bool,
        registry: &Registry,
    ) -> Result<Self, Error> {
        let algorithms = Algorithms::resolve(cfg, registry, None)?;
        Self::with_algorithms(cfg, replication, capture, &algorithms)
    }

    /// Builds replication `replication` of `cfg` with its UDP algorithms already resolved
    /// ([`Algorithms::resolve`]).
    pub fn with_algorithms(
        cfg: &RunConfig,
        replication: u64,
        capture: bool,
        algorithms: &Algorithms,
    ) -> Result<Self, Error> {
        let Topology {
            mut network,
            client_nodes,
            server,
            client_servers,
        } = topology::build(cfg, replication)?;
        let topo_client = |i: u32| client_nodes[i as usize % client_nodes.len()];
        let topo_server = |i: u32| {
            if client_servers.is_empty() {
                server
            } else {
                client_servers[i as usize % client_servers.len()]
            }
        };
        if cfg.trace {
            network.record_series();
        }
        let pops = populations(cfg);
        let total: u32 = pops
            .iter()
            .map(|g| crate::workload::client_count(&g.workload))
            .sum();
        let mut sh = Shared {
            queue: EventQueue::with_capacity(8 * total as usize + 64),
            net: network,
            capture: capture.then(Vec::new),
            trace: cfg.trace,
        };
        let mut udp = UdpApp::new(total);
        let mut tcp = TcpApp::new();
        let mut qblock = QBlockApp::new(total);
        let mut start_rng = stream(cfg.seed, replication, Stream::ClientStart);
        let mut groups = Vec::with_capacity(pops.len());
        let mut first = 0u32;
        for (index, g) in pops.into_iter().enumerate() {
            let label = |key: &str| {
                if g.name.is_empty() {
                    key.to_string()
                } else {
                    format!("group.{}.{key}", g.name)
                }
            };
            let w = &g.workload;
            if w.batch[0] == 0 || w.batch[0] > w.batch[1] {
                return Err(Error::key(
                    label("workload.batch"),
                    format!("{:?} must be [min, max] with 1 <= min <= max", w.batch),
                ));
            }
            crate::config::observe::check(w, &g.coap, &label)?;
            let ctx = Placement {
                first,
                client_node: &topo_client,
                client_server: &topo_server,
                net: &sh.net,
                seed: cfg.seed,
                replication,
            };
            let q = QBlockApp::wants(&g, &label)?;
            let count = match g.coap.transport.as_str() {
                "udp" if q => {
                    qblock.add_group(cfg, &g, &label, ctx, &mut start_rng, &mut sh.queue)?
                }
                "udp" => {
                    // Resolved once for the run, before the world (`Algorithms::resolve`).
                    let Some(algorithm) = algorithms.population(index) else {
                        return Err(Error::key(
                            label("coap.cc"),
                            "no UDP algorithm was resolved for this population",
                        ));
                    };
                    let at = (ctx, algorithm);
                    udp.add_group(cfg, &g, &label, at, &mut start_rng, &mut sh.queue)?
                }
                "tcp" => tcp.add_group(cfg, &g, &label, ctx, &mut start_rng, &mut sh.queue)?,
                other => {
                    return Err(Error::key(
                        label("coap.transport"),
                        format!("'{other}' is not a transport; allowed: udp, tcp"),
                    ))
                }
            };
            groups.push(Group {
                tcp: g.coap.transport == crate::config::Transport::Tcp,
                qblock: q,
                cfg: g,
                first,
                count,
            });
            first += count;
        }
        Ok(World {
            cfg: cfg.clone(),
            replication,
            sh,
            udp,
            tcp,
            qblock,
            groups,
        })
    }

    /// Runs until every client has finished its workload and the network is quiet, or until
    /// `guard` stops it (cancelled, or past its bounds on events and simulated time:
    /// `sim/guard.rs`).
    pub fn run(
        &mut self,
        guard: &mut crate::sim::guard::Guard,
    ) -> Result<(), crate::sim::guard::GuardStop> {
        while let Some((now, event)) = self.sh.queue.pop() {
            guard.check(now, self.sh.queue.events_processed())?;
            match event {
                Event::Net(NetEvent::Deliver(_, id)) => self.deliver(now, id),
                Event::Net(e) => {
                    let handled = self.sh.net.handle(now, e, &mut self.sh.queue);
                    self.outcomes(now, handled);
                }
                Event::Udp(e) => self.udp.handle(now, e, &mut self.sh),
                Event::Tcp(e) => self.tcp.handle(now, e, &mut self.sh),
                Event::QBlock(e) => self.qblock.handle(now, e, &mut self.sh),
            }
        }
        Ok(())
    }

    /// A packet reached the end of its route: the application on that node takes it.
    fn deliver(&mut self, now: Instant, id: PacketId) {
        match &self.sh.net.packets.get_ref(id).app {
            AppPacket::Udp(p) => {
                let p = *p;
                self.udp.deliver(now, id, p, &mut self.sh)
            }
            AppPacket::Tcp(p) => {
                let p = *p;
                self.tcp.deliver(now, id, p, &mut self.sh)
            }
            AppPacket::QBlock(p) => {
                let p = *p;
                self.qblock.deliver(now, id, p, &mut self.sh)
            }
        }
    }

    /// The network serialized or dropped a packet: its owner learns it.
    fn outcomes(&mut self, now: Instant, h: Handled) {
        if let Some((id, LinkRole::Downlink)) = h.serialized {
            if let AppPacket::Udp(p) = &self.sh.net.packets.get_ref(id).app {
                self.udp.on_downlink_serialized(p);
            }
        }
        if let Some((id, _)) = h.dropped {
            match self.sh.net.packets.remove(id).app {
                AppPacket::Udp(p) => self.udp.on_dropped(&p),
                AppPacket::Tcp(p) => self.tcp.on_dropped(now, p),
                AppPacket::QBlock(p) => self.qblock.on_dropped(&p),
            }
        }
    }
}
