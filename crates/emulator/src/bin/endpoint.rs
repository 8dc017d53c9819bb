//! `coaplab-endpoint`: coaplab's own CoAP endpoints over real sockets.
//!
//! ```text
//! coaplab-endpoint udp-server  --config run.json [--max-seconds S]
//! coaplab-endpoint udp-clients --config run.json --replication R --out clients.json [--max-seconds S]
//! coaplab-endpoint tcp-server  --config run.json [--max-seconds S]
//! coaplab-endpoint tcp-clients --config run.json --replication R --out clients.json [--max-seconds S]
//! ```
//!
//! The UDP client is the simulator's own sans-IO client (`coaplab_engine::coap::client`) with
//! the algorithm built exactly as in a simulated run (same registry name, transmission
//! parameters and per-client RNG stream, same start offsets): only the clock and the network
//! are real. Messages are the simulator's encodings (`coap::messages`), so packet sizes match.
//! The UDP server answers every CON GET with a piggybacked ACK 2.05 (cached for duplicates,
//! RFC 7252 §4.5), echoing the token; a firmware resource is served block-wise (RFC 7959),
//! echoing FASOR's Rexmit-Cnt option when present.
//!
//! The TCP endpoints speak RFC 8323 over the kernel's TCP: CSM first, then GET → 2.05.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::io::{Read, Write};
use std::net::{SocketAddrV4, TcpListener, TcpStream, UdpSocket};
use std::os::fd::{AsRawFd, FromRawFd};
use std::sync::{Arc, Barrier, Mutex};

use coaplab_cc::registry::{Entry, Registry};
use coaplab_cc::{Config, Instant};
use coaplab_emulator::{
    client_addr, install_stop_handlers, mono_ns, stop_requested, Args, Reactor, CLIENT_PORT,
    COAP_PORT, SERVER_ADDR,
};
use coaplab_engine::coap::client::{Action, Client, Probing};
use coaplab_engine::coap::messages::{rexmit_ordinal, MessageFactory};
use coaplab_engine::coap::over_tcp::TcpMsg;
use coaplab_engine::coap::server::Server;
use coaplab_engine::config::{RunConfig, WorkloadKind};
use coaplab_engine::sim::streams::{stream, Stream};
use coaplab_engine::workload::{client_setups, Plan};
use coaplab_wire::coap::{code, decode, option, Type};
use coaplab_wire::coap_tcp::{decode_frame, signal};

fn main() {
    let code = match run() {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("coaplab-endpoint: error: {e}");
            2
        }
    };
    std::process::exit(code);
}

fn run() -> Result<(), String> {
    let args = Args::parse(true)?;
    let text =
        std::fs::read_to_string(args.req("config")?).map_err(|e| format!("--config: {e}"))?;
    let cfg = RunConfig::from_json(&text).map_err(|e| format!("--config: {e}"))?;
    if !cfg.group.is_empty() {
        return Err("client groups are not supported in emulation yet; use one population".into());
    }
    install_stop_handlers();
    let max_ns = (args.num::<f64>("max-seconds", 3600.0)? * 1e9) as u64;
    // The clients' time 0 (CLOCK_MONOTONIC ns; the emulator's too, `--wait-start`): start
    // offsets are counted from it, as in a simulated run. Default: now.
    let epoch = match args.get("epoch-ns") {
        Some(_) => args.num::<u64>("epoch-ns", 0)?,
        None => mono_ns(),
    };
    match args.command.as_deref() {
        Some("udp-server") => udp_server(&cfg, max_ns),
        Some("udp-clients") => udp_clients(
            &cfg,
            args.num("replication", 0)?,
            args.req("out")?,
            max_ns,
            epoch,
        ),
        Some("tcp-server") => tcp_server(&cfg, max_ns, args.get("out"), args.get("tcp-congestion")),
        Some("tcp-clients") => tcp_clients(
            &cfg,
            args.num("replication", 0)?,
            args.req("out")?,
            max_ns,
            epoch,
            args.get("tcp-congestion"),
        ),
        Some("setups") => setups(&cfg, args.num("replication", 0)?),
        other => Err(format!(
            "command {other:?}; allowed: udp-server, udp-clients, tcp-server, tcp-clients, setups"
        )),
    }
}

/// Prints every client's start time and offset (s), as a simulated run of that replication
/// draws them: third-party clients start at the same instants.
fn setups(cfg: &RunConfig, replication: u64) -> Result<(), String> {
    let mut start_rng = stream(cfg.seed, replication, Stream::ClientStart);
    let (setups, _) = client_setups(&cfg.workload, Plan::Count { remaining: 1 }, &mut start_rng);
    let rows: Vec<_> = setups
        .iter()
        .map(
            |s| serde_json::json!({"start_s": s.start.secs_f64(), "offset_s": s.offset.secs_f64()}),
        )
        .collect();
    println!("{}", serde_json::Value::Array(rows));
    Ok(())
}

/// The option number of FASOR's Rexmit-Cnt in this scenario (`coap.rexmit_cnt_option`).
fn rexmit_number(cfg: &RunConfig) -> u16 {
    cfg.coap.rexmit_cnt_option.unwrap_or(option::REXMIT_CNT)
}

/// The message sizes and the registry entry of `coap.cc` (every registered name, as in a
/// simulated run: `World::with_registry`).
fn factory(cfg: &RunConfig) -> Result<(MessageFactory, Entry), String> {
    let entry: Entry = *Registry::builtin()
        .get(&cfg.coap.cc)
        .map_err(|e| format!("coap.cc: {e}"))?;
    let w = &cfg.workload;
    if cfg.coap.security != coaplab_engine::config::Security::None {
        return Err(format!(
            "coap.security: \"{}\" is simulated only; the emulator's endpoints speak plain CoAP (\"none\")",
            cfg.coap.security.as_str()
        ));
    }
    Ok((
        MessageFactory {
            response_bytes: w.response_bytes,
            block_szx: w.block_szx,
            resource_bytes: w.resource_bytes,
            rexmit_cnt: entry
                .needs_rexmit_count
                .then_some(cfg.coap.rexmit_cnt_option.unwrap_or(option::REXMIT_CNT)),
            request_payload: 0,
            protection: Default::default(),
            observe: None,
        },
        entry,
    ))
}

fn secs(s: f64) -> coaplab_cc::Duration {
    coaplab_cc::Duration::from_secs_f64(s)
}

/// Client `i`'s UDP socket, bound to its own address in the client namespace.
fn udp_socket(i: u32) -> Result<UdpSocket, String> {
    let addr = SocketAddrV4::new(client_addr(i), CLIENT_PORT);
    let s = UdpSocket::bind(addr).map_err(|e| format!("bind {addr}: {e}"))?;
    s.connect(SocketAddrV4::new(SERVER_ADDR, COAP_PORT))
        .map_err(|e| format!("connect from {addr}: {e}"))?;
    s.set_nonblocking(true).map_err(|e| e.to_string())?;
    Ok(s)
}

/// Client timers: `(at ns, kind, client, exchange, generation)`, earliest first; kind
/// [`START`], [`TIMER`] (a retransmission timer) or [`TICK`] (a periodic client's next request).
type Timers = BinaryHeap<Reverse<(u64, u8, u32, u32, u32)>>;
const START: u8 = 0;
const TIMER: u8 = 1;
const TICK: u8 = 2;

/// A periodic client's tick at `at`, as the simulator's (`world::udp_app`, `UdpApp::tick`): a
/// request is created (started, or dropped at the application when NSTART exchanges are
/// outstanding) and the next tick is armed one period later while before the deadline.
fn tick(
    cl: &mut Client,
    i: u32,
    at: Instant,
    msgs: &MessageFactory,
    actions: &mut Vec<Action>,
    timers: &mut Timers,
) {
    let Some((period, deadline)) = cl.period() else {
        return;
    };
    if at >= deadline {
        return;
    }
    cl.tick(at, None, msgs, actions);
    let next = at + period;
    if next < deadline {
        timers.push(Reverse((next.nanos(), TICK, i, 0, 0)));
    }
}

/// What one exchange's copies were: their send times by ordinal, responses seen.
struct Sent {
    exchange: u32,
    at: Vec<Instant>,
    responses: u32,
}

fn udp_clients(
    cfg: &RunConfig,
    replication: u64,
    out: &str,
    max_ns: u64,
    epoch: u64,
) -> Result<(), String> {
    let (msgs, entry) = factory(cfg)?;
    let c = &cfg.coap;
    let alg_config = Config {
        ack_timeout: secs(c.ack_timeout_s),
        ack_random_factor_permille: (c.ack_random_factor * 1000.0).round() as u64,
        max_retransmit: c.max_retransmit,
        nstart: c.nstart,
        max_timer: secs(c.max_timer_s),
        ..Config::default()
    };
    let firmware = Plan::Blocks {
        next: 0,
        total: msgs.blocks(),
    };
    let mut start_rng = stream(cfg.seed, replication, Stream::ClientStart);
    let (setups, _) = client_setups(&cfg.workload, firmware, &mut start_rng);
    let mut clients = Vec::new();
    let mut sockets = Vec::new();
    let mut reactor = Reactor::new(200_000).map_err(|e| e.to_string())?;
    let mut timers: Timers = BinaryHeap::new();
    for (id, setup) in (0u32..).zip(setups) {
        let mut client = Client::new(
            id,
            entry.algorithm(&alg_config),
            stream(cfg.seed, replication, Stream::Client(id)),
            setup.plan,
            c.nstart,
            false,
        );
        client.probing = c.probing_rate_bps.map(|r| Box::new(Probing::new(r)));
        clients.push(client);
        let s = udp_socket(id)?;
        reactor
            .add(s.as_raw_fd(), u64::from(id))
            .map_err(|e| e.to_string())?;
        sockets.push(s);
        timers.push(Reverse((setup.start.nanos(), START, id, 0, 0)));
    }
    let mut sent: Vec<HashMap<u16, Sent>> = (0..clients.len()).map(|_| HashMap::new()).collect();
    let t0 = epoch;
    let now = || Instant::from_nanos(mono_ns().saturating_sub(t0));
    let mut actions = Vec::new();
    let mut ready = Vec::new();
    let mut buf = [0u8; 2048];
    let mut send_errors = 0u64;
    let apply = |i: usize,
                 actions: &mut Vec<Action>,
                 sockets: &[UdpSocket],
                 sent: &mut [HashMap<u16, Sent>],
                 timers: &mut Timers,
                 send_errors: &mut u64| {
        for a in actions.drain(..) {
            match a {
                Action::Send(p) => {
                    let bytes = msgs.with_message(&p, |m| m.to_vec());
                    if sockets[i].send(&bytes).is_err() {
                        *send_errors += 1;
                    }
                    let e = sent[i].entry(p.mid).or_insert(Sent {
                        exchange: p.exchange,
                        at: Vec::new(),
                        responses: 0,
                    });
                    e.exchange = p.exchange;
                    if e.at.len() <= p.ordinal as usize {
                        e.at.resize(p.ordinal as usize + 1, p.request_sent);
                    }
                    e.at[p.ordinal as usize] = p.request_sent;
                }
                Action::ArmTimer {
                    at,
                    exchange,
                    generation,
                } => timers.push(Reverse((at.nanos(), TIMER, i as u32, exchange, generation))),
                // Only LwM2M devices' exchanges report their end (never this endpoint's).
                Action::Ended(..) => {}
            }
        }
    };
    loop {
        let t = now();
        if stop_requested() || t.nanos() >= max_ns {
            break;
        }
        if clients.iter().all(|cl| cl.finished(t))
            && !timers.iter().any(|r| matches!(r.0 .1, START | TICK))
        {
            break;
        }
        while let Some(&Reverse((at, kind, i, ex, gen))) = timers.peek() {
            if at > now().nanos() {
                break;
            }
            timers.pop();
            let at = Instant::from_nanos(at);
            let cl = &mut clients[i as usize];
            match kind {
                // A periodic client starts with its first tick (`UdpApp::handle`).
                START | TICK if cl.period().is_some() => {
                    tick(cl, i, at, &msgs, &mut actions, &mut timers)
                }
                START => cl.poll_start(at, &msgs, &mut actions),
                _ => cl.on_timer(at, ex, gen, &msgs, &mut actions),
            }
            apply(
                i as usize,
                &mut actions,
                &sockets,
                &mut sent,
                &mut timers,
                &mut send_errors,
            );
        }
        let next = timers.peek().map(|r| r.0 .0 + t0);
        reactor.wait(next, 100_000_000, &mut ready);
        for &tok in &ready {
            let i = tok as usize;
            while let Ok(n) = sockets[i].recv(&mut buf) {
                let at = now();
                let Ok(m) = decode(&buf[..n]) else { continue };
                if m.mtype != Type::Ack || m.code != code::CONTENT {
                    continue;
                }
                let Some(s) = sent[i].get_mut(&m.message_id) else {
                    continue;
                };
                // Never more responses than copies (the client's records assume it).
                if s.responses as usize >= s.at.len() {
                    continue;
                }
                s.responses += 1;
                let latest = s.at.len() as u32 - 1;
                let ordinal = m
                    .uint_option(rexmit_number(cfg))
                    .map(|v| rexmit_ordinal(rexmit_number(cfg), v))
                    .unwrap_or(latest)
                    .min(latest);
                let block = m.uint_option(option::BLOCK2);
                let p = coaplab_engine::packet::Packet {
                    kind: coaplab_engine::packet::PacketKind::Response,
                    client: i as u32,
                    exchange: s.exchange,
                    ordinal,
                    mid: m.message_id,
                    block: block.map(|v| v >> 4),
                    payload: m.payload.len() as u32,
                    rexmit_cnt: msgs.rexmit_cnt.is_some(),
                    more: block.is_some_and(|v| v & 8 != 0),
                    non: false,
                    ip_bytes: (n + 28) as u32,
                    request_sent: s.at[ordinal as usize],
                };
                clients[i].on_response(at, &p, &msgs, &mut actions);
                apply(
                    i,
                    &mut actions,
                    &sockets,
                    &mut sent,
                    &mut timers,
                    &mut send_errors,
                );
            }
        }
    }
    let end = now();
    let rows: Vec<_> = clients
        .iter()
        .map(|cl| {
            let s = &cl.stats;
            let tot = cl.totals();
            let fct = match (s.first_request, s.last_end) {
                (Some(a), Some(b)) => Some((b - a).secs_f64()),
                _ => None,
            };
            serde_json::json!({
                "client": cl.id,
                "address": client_addr(cl.id).to_string(),
                "fct_s": fct,
                "first_request_s": s.first_request.map(|t| t.secs_f64()),
                "last_end_s": s.last_end.map(|t| t.secs_f64()),
                "completed": s.completed,
                "failed": s.failed,
                "retransmissions": s.retransmissions,
                "timeouts": s.timeouts,
                "duplicate_responses": s.duplicate_responses,
                "started": cl.started(),
                "finished": cl.finished(end),
                "histogram": tot.histogram,
            })
        })
        .collect();
    write_json(
        out,
        &serde_json::json!({"transport": "udp", "clients": rows, "send_errors": send_errors,
                            "stopped": stop_requested() || end.nanos() >= max_ns, "duration_s": end.secs_f64()}),
    )
}

fn write_json(path: &str, v: &serde_json::Value) -> Result<(), String> {
    std::fs::write(path, serde_json::to_string_pretty(v).unwrap_or_default())
        .map_err(|e| format!("{path}: {e}"))
}

fn udp_server(cfg: &RunConfig, max_ns: u64) -> Result<(), String> {
    let (msgs, _) = factory(cfg)?;
    let firmware = cfg.workload.kind == WorkloadKind::Firmware;
    let addr = SocketAddrV4::new(SERVER_ADDR, COAP_PORT);
    let sock = UdpSocket::bind(addr).map_err(|e| format!("bind {addr}: {e}"))?;
    sock.set_read_timeout(Some(std::time::Duration::from_millis(100)))
        .map_err(|e| e.to_string())?;
    let mut server = Server::default();
    let mut ids: HashMap<std::net::SocketAddr, u32> = HashMap::new();
    let t0 = mono_ns();
    let mut buf = [0u8; 2048];
    while !stop_requested() && mono_ns() - t0 < max_ns {
        let Ok((n, from)) = sock.recv_from(&mut buf) else {
            continue;
        };
        let now = Instant::from_nanos(mono_ns() - t0);
        let Ok(m) = decode(&buf[..n]) else { continue };
        if m.mtype != Type::Con || m.code != code::GET {
            continue;
        }
        let next = ids.len() as u32;
        let client = *ids.entry(from).or_insert(next);
        // Duplicates get the same response again (it is a function of the request).
        server.on_request(now, client, m.message_id);
        let block = m
            .uint_option(option::BLOCK2)
            .map(|v| v >> 4)
            .or(firmware.then_some(0));
        let rexmit = m
            .uint_option(rexmit_number(cfg))
            .map(|v| rexmit_ordinal(rexmit_number(cfg), v));
        let req = coaplab_engine::packet::Packet {
            kind: coaplab_engine::packet::PacketKind::Request,
            client,
            exchange: 0,
            ordinal: rexmit.unwrap_or(0),
            mid: m.message_id,
            block,
            payload: 0,
            rexmit_cnt: rexmit.is_some(),
            more: false,
            non: false,
            ip_bytes: n as u32 + 28,
            request_sent: now,
        };
        let resp = msgs.response(&req);
        let bytes = msgs.with_message(&resp, |msg| {
            let mut msg = *msg;
            msg.token = &m.token;
            msg.to_vec()
        });
        sock.send_to(&bytes, from).ok();
    }
    eprintln!(
        "coaplab-endpoint: udp-server: {} requests, {} duplicates",
        server.requests, server.duplicates
    );
    Ok(())
}

/// Reads frames from a TCP stream until one with a code in `codes` arrives.
fn read_frame(
    s: &mut TcpStream,
    pending: &mut Vec<u8>,
    deadline_ns: u64,
) -> Result<coaplab_wire::coap_tcp::DecodedTcp, String> {
    let mut buf = [0u8; 4096];
    loop {
        if let Some((f, used)) = decode_frame(pending).map_err(|e| format!("bad frame: {e}"))? {
            pending.drain(..used);
            return Ok(f);
        }
        if stop_requested() || mono_ns() >= deadline_ns {
            return Err("stopped".into());
        }
        match s.read(&mut buf) {
            Ok(0) => return Err("connection closed".into()),
            Ok(n) => pending.extend_from_slice(&buf[..n]),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock
                        | std::io::ErrorKind::TimedOut
                        | std::io::ErrorKind::Interrupted
                ) => {}
            Err(e) => return Err(e.to_string()),
        }
    }
}

fn frame(msg: TcpMsg, token: &[u8]) -> Vec<u8> {
    msg.with_message(|m| {
        let mut m = *m;
        m.token = token;
        m.to_vec()
    })
}

fn tcp_nodelay(cfg: &RunConfig) -> bool {
    cfg.tcp
        .as_ref()
        .is_some_and(|t| t.nagle == coaplab_engine::config::NagleMode::Off)
}

/// Selects the kernel's congestion control `name` for one socket (`setsockopt(TCP_CONGESTION)`;
/// as root any algorithm the kernel has, not only those `tcp_allowed_congestion_control` lists).
fn set_congestion(fd: libc::c_int, name: &str) -> Result<(), String> {
    // SAFETY: setsockopt reads `name.len()` bytes from the string's buffer.
    let rc = unsafe {
        libc::setsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_CONGESTION,
            name.as_ptr().cast(),
            name.len() as libc::socklen_t,
        )
    };
    if rc != 0 {
        return Err(format!(
            "setsockopt(TCP_CONGESTION, {name:?}): {}",
            std::io::Error::last_os_error()
        ));
    }
    Ok(())
}

/// The congestion control a socket runs (`getsockopt(TCP_CONGESTION)`).
fn congestion_of(fd: libc::c_int) -> Option<String> {
    let mut buf = [0u8; 16];
    let mut len = buf.len() as libc::socklen_t;
    // SAFETY: getsockopt writes at most `len` bytes into `buf`.
    let rc = unsafe {
        libc::getsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_CONGESTION,
            buf.as_mut_ptr().cast(),
            &mut len,
        )
    };
    if rc != 0 {
        return None;
    }
    let name = &buf[..(len as usize).min(buf.len())];
    let end = name.iter().position(|&b| b == 0).unwrap_or(name.len());
    Some(String::from_utf8_lossy(&name[..end]).into_owned())
}

/// Serves CoAP over TCP; with `out`, writes each connection's kernel counters (`TCP_INFO` of
/// the server's socket: the data sender's retransmissions) by client address when it ends.
/// With `congestion`, every connection runs that kernel congestion control (set on the
/// listening socket, which accepted connections inherit, and again on each).
fn tcp_server(
    cfg: &RunConfig,
    max_ns: u64,
    out: Option<&str>,
    congestion: Option<&str>,
) -> Result<(), String> {
    let payload = if cfg.workload.kind == WorkloadKind::Firmware {
        u32::try_from(cfg.workload.resource_bytes)
            .map_err(|_| "workload.resource_bytes too large")?
    } else {
        cfg.workload.response_bytes
    };
    let addr = SocketAddrV4::new(SERVER_ADDR, COAP_PORT);
    let l = TcpListener::bind(addr).map_err(|e| format!("bind {addr}: {e}"))?;
    if let Some(name) = congestion {
        set_congestion(l.as_raw_fd(), name)?;
    }
    l.set_nonblocking(true).map_err(|e| e.to_string())?;
    let nodelay = tcp_nodelay(cfg);
    let t0 = mono_ns();
    let deadline = t0 + max_ns;
    let mut handles = Vec::new();
    while !stop_requested() && mono_ns() < deadline {
        match l.accept() {
            Ok((mut s, peer)) => {
                s.set_nonblocking(false).ok();
                s.set_nodelay(nodelay).ok();
                if let Some(name) = congestion {
                    if let Err(e) = set_congestion(s.as_raw_fd(), name) {
                        eprintln!("coaplab-endpoint: {e}");
                    }
                }
                s.set_read_timeout(Some(std::time::Duration::from_millis(100)))
                    .ok();
                handles.push(std::thread::spawn(move || {
                    let csm = frame(TcpMsg::Csm, &[]);
                    if s.write_all(&csm).is_ok() {
                        let mut pending = Vec::new();
                        while let Ok(f) = read_frame(&mut s, &mut pending, deadline) {
                            if f.code == code::GET {
                                let r = frame(TcpMsg::Response { payload }, &f.token);
                                if s.write_all(&r).is_err() {
                                    break;
                                }
                            }
                        }
                    }
                    serde_json::json!({"address": peer.ip().to_string(), "tcp_info": tcp_info(&s)})
                }));
            }
            Err(_) => std::thread::sleep(std::time::Duration::from_millis(5)),
        }
    }
    let rows: Vec<_> = handles.into_iter().filter_map(|h| h.join().ok()).collect();
    match out {
        Some(path) => write_json(path, &serde_json::json!({"connections": rows})),
        None => Ok(()),
    }
}

/// A TCP connection from client `i`'s own address, running the kernel congestion control
/// `congestion` when given.
fn tcp_connect(i: u32, nodelay: bool, congestion: Option<&str>) -> Result<TcpStream, String> {
    let local = SocketAddrV4::new(client_addr(i), CLIENT_PORT);
    // SAFETY: socket/bind/connect with properly initialised sockaddr_in; the descriptor is
    // owned by the returned stream (or closed on error).
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
        if fd < 0 {
            return Err(std::io::Error::last_os_error().to_string());
        }
        let s = TcpStream::from_raw_fd(fd);
        let one: libc::c_int = 1;
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_REUSEADDR,
            (&one as *const libc::c_int).cast(),
            4,
        );
        let sin = |a: SocketAddrV4| libc::sockaddr_in {
            sin_family: libc::AF_INET as libc::sa_family_t,
            sin_port: a.port().to_be(),
            sin_addr: libc::in_addr {
                s_addr: u32::from(*a.ip()).to_be(),
            },
            sin_zero: [0; 8],
        };
        if let Some(name) = congestion {
            set_congestion(fd, name)?;
        }
        let l = sin(local);
        if libc::bind(fd, (&l as *const libc::sockaddr_in).cast(), 16) != 0 {
            return Err(format!("bind {local}: {}", std::io::Error::last_os_error()));
        }
        let r = sin(SocketAddrV4::new(SERVER_ADDR, COAP_PORT));
        if libc::connect(fd, (&r as *const libc::sockaddr_in).cast(), 16) != 0 {
            return Err(format!(
                "connect from {local}: {}",
                std::io::Error::last_os_error()
            ));
        }
        s.set_nodelay(nodelay).ok();
        s.set_read_timeout(Some(std::time::Duration::from_millis(100)))
            .ok();
        Ok(s)
    }
}

/// The kernel's counters of a connection (`TCP_INFO`).
fn tcp_info(s: &TcpStream) -> serde_json::Value {
    // SAFETY: getsockopt into a zeroed tcp_info of the size we pass.
    unsafe {
        let mut info: libc::tcp_info = std::mem::zeroed();
        let mut len = std::mem::size_of::<libc::tcp_info>() as libc::socklen_t;
        if libc::getsockopt(
            s.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            (&mut info as *mut libc::tcp_info).cast(),
            &mut len,
        ) != 0
        {
            return serde_json::Value::Null;
        }
        serde_json::json!({
            "total_retrans": info.tcpi_total_retrans,
            "snd_mss": info.tcpi_snd_mss,
            "rtt_us": info.tcpi_rtt,
            "rto_us": info.tcpi_rto,
            "snd_cwnd": info.tcpi_snd_cwnd,
            "reordering": info.tcpi_reordering,
            "congestion": congestion_of(s.as_raw_fd()),
        })
    }
}

/// TCP clients as the simulator runs them (docs/model.md "CoAP over TCP"): each connects at its
/// start offset and exchanges CSMs; once all hold the server's CSM, each sends its first request
/// at that instant plus its offset; requests follow one another on the connection. FCT runs
/// from the first request to the last response.
fn tcp_clients(
    cfg: &RunConfig,
    replication: u64,
    out: &str,
    max_ns: u64,
    epoch: u64,
    congestion: Option<&str>,
) -> Result<(), String> {
    let w = &cfg.workload;
    if !matches!(w.kind, WorkloadKind::Firmware | WorkloadKind::Continuous) {
        return Err(format!(
            "workload.kind: '{}' over TCP is not emulated yet; allowed: firmware, continuous",
            format!("{:?}", w.kind).to_lowercase()
        ));
    }
    let mut start_rng = stream(cfg.seed, replication, Stream::ClientStart);
    let (setups, _) = client_setups(w, Plan::Count { remaining: 1 }, &mut start_rng);
    let n = setups.len();
    let nodelay = tcp_nodelay(cfg);
    let t0 = epoch;
    let deadline = t0 + max_ns;
    let barrier = Arc::new(Barrier::new(n));
    let connected_at = Arc::new(Mutex::new(0u64));
    let mut handles = Vec::new();
    for (i, setup) in (0u32..).zip(setups) {
        let barrier = barrier.clone();
        let connected_at = connected_at.clone();
        let until = w.duration_s.map(|d| t0 + (d * 1e9) as u64);
        let plan = setup.plan.clone();
        let congestion = congestion.map(str::to_owned);
        handles.push(std::thread::spawn(move || -> serde_json::Value {
            let sleep_until = |at: u64| {
                while !stop_requested() {
                    let now = mono_ns();
                    if now >= at {
                        break;
                    }
                    std::thread::sleep(std::time::Duration::from_nanos((at - now).min(50_000_000)));
                }
            };
            sleep_until(t0 + setup.start.nanos());
            let mut result =
                serde_json::json!({"client": i, "address": client_addr(i).to_string()});
            let conn = tcp_connect(i, nodelay, congestion.as_deref()).and_then(|mut s| {
                s.write_all(&frame(TcpMsg::Csm, &[]))
                    .map_err(|e| e.to_string())?;
                let mut pending = Vec::new();
                loop {
                    let f = read_frame(&mut s, &mut pending, deadline)?;
                    if f.code == signal::CSM {
                        break;
                    }
                }
                Ok((s, pending))
            });
            // Every client waits for all (a failed one too, so that the others go on).
            {
                let mut c = connected_at.lock().expect("lock");
                *c = (*c).max(mono_ns());
            }
            barrier.wait();
            let Ok((mut s, mut pending)) = conn else {
                result["error"] = serde_json::Value::String(conn.err().unwrap_or_default());
                return result;
            };
            let all = *connected_at.lock().expect("lock");
            sleep_until(all + setup.offset.nanos());
            let first = mono_ns();
            let mut completed = 0u32;
            let mut remaining = match plan {
                Plan::Count { remaining } => remaining,
                _ => u32::MAX,
            };
            let mut last = first;
            while remaining > 0 && until.is_none_or(|u| mono_ns() < u) {
                remaining -= 1;
                if s.write_all(&frame(TcpMsg::Request, &[])).is_err() {
                    break;
                }
                let got = loop {
                    match read_frame(&mut s, &mut pending, deadline) {
                        Ok(f) if f.code == code::CONTENT => break true,
                        Ok(_) => continue,
                        Err(_) => break false,
                    }
                };
                if !got {
                    break;
                }
                completed += 1;
                last = mono_ns();
            }
            let sec = |t: u64| (t - t0) as f64 / 1e9;
            result["first_request_s"] = sec(first).into();
            result["last_end_s"] = sec(last).into();
            result["completed"] = completed.into();
            result["failed"] = (remaining > 0 && completed == 0).into();
            result["fct_s"] = if completed > 0 {
                ((last - first) as f64 / 1e9).into()
            } else {
                serde_json::Value::Null
            };
            result["tcp_info"] = tcp_info(&s);
            result
        }));
    }
    let rows: Vec<_> = handles
        .into_iter()
        .map(|h| h.join().unwrap_or(serde_json::Value::Null))
        .collect();
    write_json(
        out,
        &serde_json::json!({"transport": "tcp", "clients": rows, "stopped": stop_requested(),
                            "duration_s": (mono_ns() - t0) as f64 / 1e9}),
    )
}
