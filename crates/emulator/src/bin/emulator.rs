//! `coaplab-emulator`: the scenario's network between two TUN devices, on the wall clock.
//!
//! ```text
//! coaplab-emulator --config run.json --replication 0 --client-ns /run/netns/A \
//!     --server-ns /run/netns/B [--tun NAME] [--out DIR] [--max-seconds S] [--late-us 1000]
//! ```
//!
//! It opens a TUN device in each namespace, prints `READY` on stdout, and forwards packets:
//! read from the client device → the network's route devices → server (uplink buffer,
//! serializer, propagation, loss, path delay) → written to the server device, and back. The
//! network is the engine's own (`net::topology::build`, the same RNG streams as a simulated
//! run of that replication); its events run at their scheduled times (the model never sees
//! the emulator's lateness), and the real time each packet was written is recorded against
//! its schedule. SIGINT / SIGTERM (or `--max-seconds`) end the run; `DIR/emulator.json` gets
//! the report, `DIR/ingress.pcap` every packet as it entered (true timestamps),
//! `DIR/egress.pcap` every delivered packet as it left, `DIR/dropped.pcap` every dropped packet
//! at the model's instant of its drop, `DIR/packets.csv` each packet's fate.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::os::fd::AsRawFd;

use coaplab_cc::Instant;
use coaplab_emulator::{
    client_of, go_realtime, install_stop_handlers, mono_ns, open_tun_in, quantile, read_packet,
    realtime_ns, stop_requested, write_packet, Args, NetQueue, Reactor,
};
use coaplab_engine::config::RunConfig;
use coaplab_engine::metrics::CellResult;
use coaplab_engine::net::network::{DropReason, NetEvent, Network, NodeId};
use coaplab_engine::net::topology;
use coaplab_engine::packet::{NetPacket, Packet, PacketKind};
use coaplab_engine::workload::client_count;
use coaplab_wire::pcap::PcapWriter;

/// Where the run's packets and their fates go.
struct Sinks {
    /// Packet bytes, indexed by the record number carried in the descriptor's `client` field.
    bytes: Vec<Option<Vec<u8>>>,
    records: Vec<Record>,
    /// Actual − scheduled departure of each delivered packet, ns.
    lateness: Vec<u64>,
    egress: PcapWriter<BufWriter<File>>,
    dropped: PcapWriter<BufWriter<File>>,
    events: u64,
    io_errors: u64,
    /// Packets whose address is no client's (sent on client 0's route).
    unmapped: u64,
}

/// What became of one packet.
struct Record {
    upstream: bool,
    bytes: u32,
    t_in: u64,
    fate: &'static str,
    scheduled_out: Option<u64>,
    actual_out: Option<u64>,
}

fn main() {
    let code = match run() {
        Ok(valid) => {
            if valid {
                0
            } else {
                3
            }
        }
        Err(e) => {
            eprintln!("coaplab-emulator: error: {e}");
            2
        }
    };
    std::process::exit(code);
}

fn run() -> Result<bool, String> {
    let args = Args::parse(false)?;
    let cfg_text =
        std::fs::read_to_string(args.req("config")?).map_err(|e| format!("--config: {e}"))?;
    let cfg = RunConfig::from_json(&cfg_text).map_err(|e| format!("--config: {e}"))?;
    let replication: u64 = args.num("replication", 0)?;
    let tun_name = args.get("tun").unwrap_or("coaplab0").to_string();
    let out_dir = std::path::PathBuf::from(args.get("out").unwrap_or("."));
    let max_ns = (args.num::<f64>("max-seconds", 3600.0)? * 1e9) as u64;
    let late_ns = (args.num::<f64>("late-us", 1000.0)? * 1e3) as u64;
    let busy_ns = (args.num::<f64>("busy-us", 400.0)? * 1e3) as u64;
    std::fs::create_dir_all(&out_dir).map_err(|e| format!("--out: {e}"))?;

    let topo = topology::build(&cfg, replication).map_err(|e| e.to_string())?;
    let server_node: NodeId = topo.server;
    // Each client's routes, from the node that hosts it (`Topology::client_node`): on a star
    // every client shares one node, on a cell each client is a device of its own (node i,
    // `net/topology/cell.rs`), whose RRC state, DRX and jobs are its own.
    let clients = client_count(&cfg.workload).max(1);
    let mut routes = Vec::with_capacity(clients as usize);
    for i in 0..clients {
        let node = topo.client_node(i);
        let up = topo
            .network
            .route(node, server_node)
            .ok_or("the topology has no route from the clients to the server")?;
        let down = topo
            .network
            .route(server_node, node)
            .ok_or("the topology has no route from the server to the clients")?;
        routes.push((up, down));
    }
    let mut net: Network = topo.network;
    let downlink_kbps = cfg.link.downlink_kbps;

    install_stop_handlers();
    let tun_c = open_tun_in(args.req("client-ns")?, &tun_name)
        .map_err(|e| format!("TUN in the client namespace: {e}"))?;
    let tun_s = open_tun_in(args.req("server-ns")?, &tun_name)
        .map_err(|e| format!("TUN in the server namespace: {e}"))?;
    let rt = if args.get("no-realtime").is_some() {
        coaplab_emulator::RealTime::default()
    } else {
        go_realtime(args.num("priority", 50)?)
    };
    for w in &rt.warnings {
        eprintln!("coaplab-emulator: warning: {w}");
    }
    let mut reactor = Reactor::new(busy_ns).map_err(|e| format!("epoll/timerfd: {e}"))?;
    const TOK_C: u64 = 0;
    const TOK_S: u64 = 1;
    reactor
        .add(tun_c.as_raw_fd(), TOK_C)
        .and_then(|_| reactor.add(tun_s.as_raw_fd(), TOK_S))
        .map_err(|e| format!("epoll: {e}"))?;

    let pcap = |name: &str| -> Result<PcapWriter<BufWriter<File>>, String> {
        let f = File::create(out_dir.join(name)).map_err(|e| format!("{name}: {e}"))?;
        PcapWriter::new(BufWriter::new(f)).map_err(|e| format!("{name}: {e}"))
    };
    let mut ingress = pcap("ingress.pcap")?;
    let egress = pcap("egress.pcap")?;
    let dropped = pcap("dropped.pcap")?;

    println!("READY");
    std::io::stdout().flush().ok();

    // Time 0 of the model: with --wait-start, the CLOCK_MONOTONIC instant given on stdin as
    // `START <ns>` (the instant the endpoints take as their time 0, so that client start
    // offsets and the loss chains' state changes fall where they fall in a simulated run);
    // else now.
    let t0 = if args.get("wait-start").is_some() {
        let mut line = String::new();
        std::io::stdin().read_line(&mut line).ok();
        line.trim()
            .strip_prefix("START ")
            .and_then(|v| v.parse::<u64>().ok())
            .ok_or_else(|| format!("--wait-start: expected 'START <ns>' on stdin, got {line:?}"))?
    } else {
        mono_ns()
    };
    let (mono, real) = (mono_ns(), realtime_ns());
    let wall0 = real + t0 - mono; // the wall clock at t0
    let rel = || mono_ns().saturating_sub(t0);
    let mut q = NetQueue::default();
    let mut st = Sinks {
        bytes: Vec::new(),
        records: Vec::new(),
        lateness: Vec::new(),
        egress,
        dropped,
        events: 0,
        io_errors: 0,
        unmapped: 0,
    };
    let mut buf = vec![0u8; 65536];
    let mut ready = Vec::new();
    let fd_c = tun_c.as_raw_fd();
    let fd_s = tun_s.as_raw_fd();

    // Runs every event due at or before `until` (relative ns) at its scheduled time.
    let run_due = |until: u64, net: &mut Network, q: &mut NetQueue, st: &mut Sinks| {
        while q.next_at().is_some_and(|at| at <= until) {
            let (at, ev) = q.pop().expect("peeked");
            st.events += 1;
            let now = Instant::from_nanos(at);
            match ev {
                NetEvent::Deliver(node, id) => {
                    let p = net.packets.remove(id);
                    let rec = packet_record(&p);
                    let fd = if node == server_node { fd_s } else { fd_c };
                    if let Some(b) = st.bytes[rec].take() {
                        if write_packet(fd, &b).is_err() {
                            st.io_errors += 1;
                        }
                        let actual = rel();
                        st.lateness.push(actual.saturating_sub(at));
                        st.egress.write_packet(wall0 + actual, &b).ok();
                        let r = &mut st.records[rec];
                        r.fate = "delivered";
                        r.scheduled_out = Some(at);
                        r.actual_out = Some(actual);
                    }
                }
                other => {
                    let h = net.handle(now, other, q);
                    if let Some((id, why)) = h.dropped {
                        let p = net.packets.remove(id);
                        let rec = packet_record(&p);
                        if let Some(b) = st.bytes[rec].take() {
                            st.dropped.write_packet(wall0 + at, &b).ok();
                        }
                        st.records[rec].fate = fate(why);
                    }
                }
            }
        }
    };

    loop {
        let now = rel();
        if stop_requested() || now >= max_ns {
            break;
        }
        run_due(now, &mut net, &mut q, &mut st);
        reactor.wait(q.next_at().map(|at| at + t0), 100_000_000, &mut ready);
        // Read everything waiting on both devices; each packet enters at its read time.
        for (fd, upstream) in [(fd_c, true), (fd_s, false)] {
            loop {
                let n = match read_packet(fd, &mut buf) {
                    Ok(Some(n)) => n,
                    Ok(None) => break,
                    Err(_) => {
                        st.io_errors += 1;
                        break;
                    }
                };
                // Only IPv4 travels (the namespaces have no other addresses; IPv6 link-local
                // chatter such as router solicitations is not part of the experiment).
                if n < 20 || buf[0] >> 4 != 4 {
                    continue;
                }
                let t_in = rel();
                run_due(t_in, &mut net, &mut q, &mut st);
                ingress.write_packet(wall0 + t_in, &buf[..n]).ok();
                let rec = st.records.len();
                st.records.push(Record {
                    upstream,
                    bytes: n as u32,
                    t_in,
                    fate: "in_flight",
                    scheduled_out: None,
                    actual_out: None,
                });
                st.bytes.push(Some(buf[..n].to_vec()));
                let packet = NetPacket::udp(Packet {
                    kind: if upstream {
                        PacketKind::Request
                    } else {
                        PacketKind::Response
                    },
                    client: rec as u32,
                    exchange: 0,
                    ordinal: 0,
                    mid: 0,
                    block: None,
                    payload: 0,
                    rexmit_cnt: false,
                    more: false,
                    non: false,
                    ip_bytes: n as u32,
                    request_sent: Instant::from_nanos(t_in),
                });
                // The client is the packet's source address (uplink) or destination
                // (downlink): 10.0.0.(i+1) is client i (`client_addr`).
                let client = client_of(&buf[..n], upstream, routes.len());
                if client.is_none() {
                    st.unmapped += 1;
                }
                let (up, down) = routes[client.unwrap_or(0)];
                let route = if upstream { up } else { down };
                if net
                    .send(Instant::from_nanos(t_in), packet, route, &mut q)
                    .is_err()
                {
                    st.dropped.write_packet(wall0 + t_in, &buf[..n]).ok();
                    st.bytes[rec] = None;
                    st.records[rec].fate = "buffer";
                }
            }
        }
    }
    let period = rel() as f64 / 1e9;
    let drained = drain(&mut net, &mut q, &mut st);

    ingress.into_inner().flush().ok();
    st.egress.into_inner().flush().ok();
    st.dropped.into_inner().flush().ok();
    let mut csv = BufWriter::new(
        File::create(out_dir.join("packets.csv")).map_err(|e| format!("packets.csv: {e}"))?,
    );
    writeln!(
        csv,
        "packet,direction,ip_bytes,in_s,fate,scheduled_out_s,actual_out_s,lateness_us"
    )
    .ok();
    let s = |t: Option<u64>| t.map_or(String::new(), |t| format!("{:.9}", t as f64 / 1e9));
    for (i, r) in st.records.iter().enumerate() {
        let late = match (r.scheduled_out, r.actual_out) {
            (Some(a), Some(b)) => format!("{:.3}", b.saturating_sub(a) as f64 / 1e3),
            _ => String::new(),
        };
        writeln!(
            csv,
            "{i},{},{},{:.9},{},{},{},{late}",
            if r.upstream { "up" } else { "down" },
            r.bytes,
            r.t_in as f64 / 1e9,
            r.fate,
            s(r.scheduled_out),
            s(r.actual_out)
        )
        .ok();
    }
    csv.flush().ok();

    st.lateness.sort_unstable();
    let us = |ns: u64| ns as f64 / 1e3;
    let p99 = quantile(&st.lateness, 0.99);
    let valid = p99 <= late_ns;
    let mean = if st.lateness.is_empty() {
        0.0
    } else {
        st.lateness.iter().map(|&x| x as f64).sum::<f64>() / st.lateness.len() as f64 / 1e3
    };
    let ps = net.packet_stats(Some((0.0, period)), downlink_kbps, 0);
    let report = serde_json::json!({
        "valid": valid,
        "late_threshold_us": us(late_ns),
        "lateness_us": {
            "n": st.lateness.len(),
            "mean": mean,
            "p50": us(quantile(&st.lateness, 0.5)),
            "p99": us(p99),
            "max": us(st.lateness.last().copied().unwrap_or(0)),
        },
        "realtime": {"sched_fifo": rt.sched_fifo, "mlockall": rt.mlockall, "warnings": rt.warnings},
        "period_s": period,
        "wall_start_ns": wall0,
        "events": st.events,
        "io_errors": st.io_errors,
        "unmapped_packets": st.unmapped,
        "events_after_end": drained,
        // A cell's counters (RRC set-ups, releases, HARQ, paging; docs/networks.md "Metrics of
        // a cell"), as a simulated run reports them.
        "cell": net.cell().map(|c| CellResult::of(c.counters(), c.levels())),
        "packets_in": st.records.len(),
        "in_flight_at_end": st.records.iter().filter(|r| r.fate == "in_flight").count(),
        "packets": {
            "sent": ps.sent,
            "sent_uplink": ps.sent_uplink,
            "sent_downlink": ps.sent_downlink,
            "dropped_buffer": ps.dropped_buffer,
            "dropped_buffer_downlink": ps.dropped_buffer_downlink,
            "lost_link": ps.lost_link,
            "lost_link_uplink": ps.lost_link_uplink,
            "lost_link_downlink": ps.lost_link_downlink,
            "bytes_uplink": ps.bytes_uplink,
            "bytes_downlink": ps.bytes_downlink,
            "max_queue_bytes": ps.max_queue_bytes,
            "mean_queue_delay_s": ps.mean_queue_delay_s,
        },
    });
    std::fs::write(
        out_dir.join("emulator.json"),
        serde_json::to_string_pretty(&report).unwrap_or_default(),
    )
    .map_err(|e| format!("emulator.json: {e}"))?;
    if !valid {
        eprintln!(
            "coaplab-emulator: warning: delivery lateness p99 {:.0} µs exceeds {:.0} µs: run invalid",
            us(p99),
            us(late_ns)
        );
    }
    Ok(valid)
}

/// At most this many events run out after the run (a bound for the loop, far above what a
/// cell's timers leave: a few per device).
const DRAIN_MAX_EVENTS: u64 = 1_000_000;

/// The run is over (its clients finished, or it was stopped): a cell's pending timers —
/// inactivity releases, paging occasions, tracking area updates — run out in model time with
/// no packet written, as a simulated run's do after its last exchange (`World::run` runs until
/// its queue is empty), so that the cell's counters compare. Other networks keep their queue
/// as it is. Returns the events run.
fn drain(net: &mut Network, q: &mut NetQueue, st: &mut Sinks) -> u64 {
    if net.cell().is_none() {
        return 0;
    }
    let mut n = 0;
    while n < DRAIN_MAX_EVENTS {
        let Some((at, ev)) = q.pop() else { break };
        n += 1;
        if matches!(ev, NetEvent::Deliver(..)) {
            continue; // nobody listens any more: the packet stays `in_flight`
        }
        if let Some((id, why)) = net.handle(Instant::from_nanos(at), ev, q).dropped {
            let rec = packet_record(&net.packets.remove(id));
            st.bytes[rec] = None;
            st.records[rec].fate = fate(why);
        }
    }
    n
}

/// A dropped packet's fate in `packets.csv`.
fn fate(why: DropReason) -> &'static str {
    match why {
        DropReason::Buffer => "buffer",
        DropReason::LinkError => "link",
        DropReason::MacQueue => "mac-queue",
        DropReason::Radio => "radio",
        // A cell's NAT timeout (docs/networks.md).
        DropReason::Unreachable => "unreachable",
        // A cell's admission limit (docs/networks.md "Admission").
        DropReason::Rejected => "rejected",
    }
}

fn packet_record(p: &NetPacket) -> usize {
    match p.app {
        coaplab_engine::packet::AppPacket::Udp(u) => u.client as usize,
        coaplab_engine::packet::AppPacket::Tcp(_)
        | coaplab_engine::packet::AppPacket::QBlock(_) => {
            unreachable!("the emulator sends UDP descriptors only")
        }
    }
}
