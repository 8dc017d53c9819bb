//! The simulator's speed from 1 to 10 000 clients, against a bare binary-heap event loop of the
//! same queue length (the "limit"). Prints figures, asserts nothing.
//!
//! ```sh
//! cargo run --release -p coaplab-engine --example bench_suite               # the full suite
//! cargo run --release -p coaplab-engine --example bench_suite -- \
//!     --transports udp --clients 400,4000 --repetitions 7
//! ```
//! (`coaplab bench --suite` runs this.)
//!
//! Before/after comparisons: `--against OTHER` runs another build of this example (e.g. one
//! built from `main` into its own target directory) side by side: per configuration and
//! repetition, one repetition of each binary, alternating which goes first; both print their
//! rows and the ratio of their median ns per event.
//!
//! ```sh
//! git worktree add /tmp/base main && (cd /tmp/base && \
//!     CARGO_TARGET_DIR=/tmp/base-target cargo build --release -p coaplab-engine --example bench_suite)
//! cargo run --release -p coaplab-engine --example bench_suite -- --clients 400,4000 \
//!     --exchanges 50 --repetitions 9 --against /tmp/base-target/release/examples/bench_suite
//! ```
//!
//! Each (transport, clients) configuration runs in its own child process, so that its peak RSS
//! is its own. Scenario: continuous workload, infinite (1 410 000 B) buffer, no errors, `cocoa`
//! with MAX_RETRANSMIT 20 over UDP, New Reno over TCP, docs/design.md §2 defaults otherwise (the
//! resolved defaults of `coaplab.describe.scenario`); exchanges per client = max(50, 100 000 / clients)
//! unless `--exchanges` is given, so that small populations still run long enough to time.
//! The uplink's buffer is unlimited, as in the studies; `BENCH_UPLINK_BUFFER_BYTES=N` in the
//! environment gives it N bytes (to separate the engine's memory from the simulated backlog).
//!
//! Per repetition, interleaved (sim, bare, sim, bare, …): one replication of the simulator
//! (replication index 0 every time: the same events), timed in thread CPU time
//! (`CLOCK_THREAD_CPUTIME_ID`); then the bare loop for the same number of events with a
//! `BinaryHeap<Reverse<(u64 time, u32 seq)>>` held at the simulator's mean queue length
//! (the mean, over pops, of the entries waiting), each pop followed by one push at a uniformly
//! random delay in [0, 2 s) (xorshift). Reported: min and median over the repetitions.
//!
//! Memory per client: a counting global allocator (below) records the peak of the bytes the
//! simulator run holds allocated (its peak live heap, from the allocator's own requests, so not
//! moved by other processes or by pages the allocator keeps), divided by the clients.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::hint::black_box;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use coaplab_engine::config::RunConfig;
use coaplab_engine::sim::event_queue::last_dropped_stats;
use coaplab_engine::testbed::run;

/// The system allocator, counting the bytes held and their peak (a few relaxed atomics per
/// allocation; the simulator makes fewer than 0.01 allocations per event in steady state:
/// `tests/alloc_steady_state.rs`).
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(by: usize) {
    let live = LIVE.fetch_add(by, Relaxed) + by;
    PEAK.fetch_max(live, Relaxed);
}

// SAFETY: every call is forwarded to `System` unchanged; only counters are added.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc(layout);
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout);
        LIVE.fetch_sub(layout.size(), Relaxed);
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = System.realloc(ptr, layout, new_size);
        if !p.is_null() {
            LIVE.fetch_sub(layout.size(), Relaxed);
            grew(new_size);
        }
        p
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID)");
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

fn peak_rss_kib() -> i64 {
    // SAFETY: a zeroed rusage is a valid out-parameter.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `ru` is a valid, writable rusage.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    ru.ru_maxrss
}

fn config(transport: &str, clients: u32, exchanges: u32) -> RunConfig {
    let coap = if transport == "udp" {
        r#""transport": "udp", "cc": "cocoa", "max_retransmit": 20"#
    } else {
        r#""transport": "tcp", "cc": "newreno", "max_retransmit": 4"#
    };
    let tcp = if transport == "udp" {
        String::new()
    } else {
        r#", "tcp": {"initial_window": 4, "slow_start_limit": null, "nagle": "minshall",
            "limited_transmit": true, "delayed_ack_ms": 200.0, "initial_rto_s": 2.0,
            "max_rto_s": 120.0, "syn_retries": 40, "synack_retries": 41}"#
            .to_string()
    };
    // The uplink's buffer: unlimited (the studies' setting) unless BENCH_UPLINK_BUFFER_BYTES
    // gives one (docs/performance.md, "UDP memory at 10 000 clients").
    let uplink_buffer = std::env::var("BENCH_UPLINK_BUFFER_BYTES")
        .ok()
        .map(|v| {
            v.parse::<u64>()
                .unwrap_or_else(|_| panic!("BENCH_UPLINK_BUFFER_BYTES: {v:?} is not a byte count"))
                .to_string()
        })
        .unwrap_or_else(|| "null".to_string());
    let json = format!(
        r#"{{"name": "bench-suite", "seed": 1, "replications": 1, "trace": false,
        "link": {{"downlink_kbps": 30.0, "uplink_kbps": 60.0, "downlink_delay_ms": 400.0,
                 "uplink_delay_ms": 200.0, "mtu": 296, "buffer_bytes": 1410000,
                 "uplink_buffer_bytes": {uplink_buffer}, "path_delay_ms": [10.0, 20.0],
                 "link_overhead_bytes": 0, "errors": "none"}},
        "workload": {{"kind": "continuous", "clients": {clients}, "exchanges": {exchanges},
                     "duration_s": null, "batch": [1, 10], "start_spread_s": 0.05,
                     "response_bytes": 60, "resource_bytes": 102400, "block_szx": 4,
                     "background": 0, "burst_at_s": null, "burst_clients": null,
                     "burst_exchanges": null}},
        "coap": {{{coap}, "nstart": 1, "ack_timeout_s": 2.0, "ack_random_factor": 1.5,
                 "max_timer_s": 60.0}}{tcp}}}"#
    );
    RunConfig::from_json(&json).expect("valid bench configuration")
}

/// The reference loop: `events` pops (and as many pushes) on a heap of `size` entries.
/// Returns thread CPU ns.
fn bare_loop(size: usize, events: u64) -> u64 {
    let mut rng = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    const SPAN: u64 = 2_000_000_000; // delays uniform in [0, 2 s)
    let mut heap = BinaryHeap::with_capacity(size + 1);
    let mut seq = 0u32;
    for _ in 0..size.max(1) {
        heap.push(Reverse((next() % SPAN, seq)));
        seq = seq.wrapping_add(1);
    }
    let t0 = thread_cpu_ns();
    for _ in 0..events {
        let Reverse((t, s)) = heap.pop().expect("never empty");
        black_box(s);
        heap.push(Reverse((t + next() % SPAN, seq)));
        seq = seq.wrapping_add(1);
    }
    let cpu = thread_cpu_ns() - t0;
    black_box(&heap);
    cpu
}

fn min_median(mut v: Vec<f64>) -> (f64, f64) {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let median = if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    };
    (v[0], median)
}

/// Child: one configuration; prints one tab-separated line.
fn child(transport: &str, clients: u32, exchanges: u32, reps: usize) {
    let cfg = config(transport, clients, exchanges);
    let (mut sim_ns, mut bare_ns) = (Vec::new(), Vec::new());
    let (mut events, mut mean_len, mut heap_peak) = (0u64, 0f64, 0usize);
    for _ in 0..reps {
        let before = LIVE.load(Relaxed);
        PEAK.store(before, Relaxed);
        let t0 = thread_cpu_ns();
        let result = run(&cfg, 0, None).expect("runs");
        let cpu = thread_cpu_ns() - t0;
        heap_peak = heap_peak.max(PEAK.load(Relaxed) - before);
        black_box(&result);
        let stats = last_dropped_stats();
        assert_eq!(stats.pops, result.events, "the run's queue statistics");
        events = result.events;
        mean_len = stats.mean_len;
        sim_ns.push(cpu as f64 / events as f64);
        let bare = bare_loop(mean_len.round() as usize, events);
        bare_ns.push(bare as f64 / events as f64);
    }
    let ratios: Vec<f64> = bare_ns.iter().zip(&sim_ns).map(|(b, s)| b / s).collect();
    let (sim_min, sim_med) = min_median(sim_ns);
    let (bare_min, bare_med) = min_median(bare_ns);
    let (_, ratio_med) = min_median(ratios);
    println!(
        "{transport}\t{clients}\t{exchanges}\t{events}\t{mean_len:.1}\t{sim_min:.2}\t{sim_med:.2}\t{bare_min:.2}\t{bare_med:.2}\t{ratio_med:.3}\t{}\t{:.0}",
        peak_rss_kib(),
        heap_peak as f64 / f64::from(clients)
    );
}

/// One configuration's figures as a child printed them (or several single-repetition children
/// merged).
struct Figures {
    transport: String,
    clients: String,
    exchanges: String,
    events: String,
    mean_len: String,
    sim: Vec<f64>,
    bare: Vec<f64>,
    ratio: Vec<f64>,
    sim_min: f64,
    sim_med: f64,
    bare_min: f64,
    bare_med: f64,
    ratio_med: f64,
    rss_kib: f64,
    /// Peak heap bytes of a simulator run per client (NaN from a build that does not print it).
    heap_per_client: f64,
}

/// Runs `binary --child …` and parses its line.
fn run_child(binary: &str, transport: &str, n: u32, exch: u32, reps: usize) -> Figures {
    let out = Command::new(binary)
        .args([
            "--child",
            transport,
            &n.to_string(),
            &exch.to_string(),
            &reps.to_string(),
        ])
        .output()
        .expect("child runs");
    if !out.status.success() {
        eprintln!(
            "bench_suite: {binary}: {transport} {n} clients failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        std::process::exit(1)
    }
    let line = String::from_utf8_lossy(&out.stdout);
    let f: Vec<&str> = line.trim().split('\t').collect();
    let num = |i: usize| f[i].parse::<f64>().expect("child output");
    Figures {
        transport: f[0].to_string(),
        clients: f[1].to_string(),
        exchanges: f[2].to_string(),
        events: f[3].to_string(),
        mean_len: f[4].to_string(),
        sim: vec![num(6)],
        bare: vec![num(8)],
        ratio: vec![num(9)],
        sim_min: num(5),
        sim_med: num(6),
        bare_min: num(7),
        bare_med: num(8),
        ratio_med: num(9),
        rss_kib: num(10),
        heap_per_client: f.get(11).and_then(|x| x.parse().ok()).unwrap_or(f64::NAN),
    }
}

/// Single-repetition runs of one binary merged: min and median over the runs.
fn merge(runs: &[Figures]) -> Figures {
    let cat = |g: fn(&Figures) -> &Vec<f64>| runs.iter().flat_map(g).copied().collect::<Vec<_>>();
    let (sim, bare, ratio) = (cat(|f| &f.sim), cat(|f| &f.bare), cat(|f| &f.ratio));
    let (sim_min, sim_med) = min_median(sim.clone());
    let (bare_min, bare_med) = min_median(bare.clone());
    let (_, ratio_med) = min_median(ratio.clone());
    let first = &runs[0];
    Figures {
        transport: first.transport.clone(),
        clients: first.clients.clone(),
        exchanges: first.exchanges.clone(),
        events: first.events.clone(),
        mean_len: first.mean_len.clone(),
        sim,
        bare,
        ratio,
        sim_min,
        sim_med,
        bare_min,
        bare_med,
        ratio_med,
        rss_kib: runs.iter().map(|f| f.rss_kib).fold(0.0, f64::max),
        heap_per_client: runs
            .iter()
            .map(|f| f.heap_per_client)
            .fold(f64::NAN, f64::max),
    }
}

fn print_row(label: Option<&str>, f: &Figures) {
    let lab = label.map(|l| format!("{l:<5} ")).unwrap_or_default();
    println!(
        "{lab}{:<4} {:>7} {:>6} {:>10} {:>8} | {:>8.1} {:>8.1} {:>8.2} | {:>8.1} {:>8.1} | {:>6.2} {:>7.0} {:>7.0}",
        f.transport,
        f.clients,
        f.exchanges,
        f.events,
        f.mean_len,
        f.sim_min,
        f.sim_med,
        1e3 / f.sim_med,
        f.bare_min,
        f.bare_med,
        f.ratio_med,
        f.rss_kib / 1024.0,
        f.heap_per_client
    );
}

fn list<T: std::str::FromStr>(s: &str, what: &str) -> Vec<T> {
    s.split(',')
        .map(|x| {
            x.trim().parse().unwrap_or_else(|_| {
                eprintln!("bench_suite: {what}: {x:?} is not allowed; give a comma-separated list");
                std::process::exit(2)
            })
        })
        .collect()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("--child") {
        let [_, _, transport, clients, exchanges, reps] = &args[..] else {
            panic!("--child TRANSPORT CLIENTS EXCHANGES REPETITIONS");
        };
        child(
            transport,
            clients.parse().unwrap(),
            exchanges.parse().unwrap(),
            reps.parse().unwrap(),
        );
        return;
    }
    let mut transports = vec!["udp".to_string(), "tcp".to_string()];
    let mut clients: Vec<u32> = vec![1, 10, 100, 400, 1000, 4000, 10000];
    let mut reps = 5usize;
    let mut exchanges: Option<u32> = None;
    let mut against: Option<String> = None;
    let mut it = args[1..].iter();
    while let Some(flag) = it.next() {
        let mut value = || {
            it.next().cloned().unwrap_or_else(|| {
                eprintln!("bench_suite: {flag} needs a value");
                std::process::exit(2)
            })
        };
        match flag.as_str() {
            "--transports" => {
                transports = list(&value(), "--transports");
                if let Some(t) = transports.iter().find(|t| *t != "udp" && *t != "tcp") {
                    eprintln!("bench_suite: --transports: {t:?} is not allowed; allowed: udp, tcp");
                    std::process::exit(2)
                }
            }
            "--clients" => clients = list(&value(), "--clients"),
            "--repetitions" => reps = list(&value(), "--repetitions")[0],
            "--exchanges" => exchanges = Some(list(&value(), "--exchanges")[0]),
            "--against" => {
                let path = value();
                if !std::path::Path::new(&path).is_file() {
                    eprintln!("bench_suite: --against: {path:?} is not a file; give the path of another bench_suite binary");
                    std::process::exit(2)
                }
                against = Some(path);
            }
            other => {
                eprintln!(
                    "bench_suite: unknown option {other:?}; allowed: --transports, --clients, --repetitions, --exchanges, --against"
                );
                std::process::exit(2)
            }
        }
    }
    if reps == 0 || clients.contains(&0) || exchanges == Some(0) {
        eprintln!("bench_suite: --repetitions, --clients and --exchanges must be ≥ 1");
        std::process::exit(2)
    }
    let me = std::env::current_exe()
        .expect("own path")
        .to_string_lossy()
        .into_owned();
    println!(
        "{reps} interleaved repetitions (sim, bare, …); CPU time of the running thread; continuous, infinite buffer; uplink buffer {}",
        std::env::var("BENCH_UPLINK_BUFFER_BYTES").map_or("unlimited".to_string(), |b| format!("{b} B"))
    );
    if let Some(other) = &against {
        println!("side by side: 'this' = {me}, 'other' = {other} (one repetition each in turn)");
    }
    // A label column ('this', 'other') only when comparing.
    let lab = if against.is_some() { "      " } else { "" };
    println!(
        "{lab}{:<4} {:>7} {:>6} {:>10} {:>8} | {:>8} {:>8} {:>8} | {:>8} {:>8} | {:>6} {:>7} {:>7}",
        "",
        "clients",
        "exch.",
        "events",
        "mean q",
        "ns/ev",
        "ns/ev",
        "M ev/",
        "bare",
        "bare",
        "sim/",
        "peak",
        "heap B"
    );
    println!(
        "{lab}{:<4} {:>7} {:>6} {:>10} {:>8} | {:>8} {:>8} {:>8} | {:>8} {:>8} | {:>6} {:>7} {:>7}",
        "",
        "",
        "/client",
        "",
        "length",
        "min",
        "median",
        "CPU-s",
        "min",
        "median",
        "limit",
        "RSS MB",
        "/client"
    );
    for transport in &transports {
        for &n in &clients {
            let exch = exchanges.unwrap_or((100_000 / n).max(50));
            let Some(other) = &against else {
                let f = run_child(&me, transport, n, exch, reps);
                print_row(None, &f);
                continue;
            };
            // One repetition of each binary in turn, alternating which goes first.
            let (mut mine, mut theirs) = (Vec::new(), Vec::new());
            for r in 0..reps {
                if r % 2 == 0 {
                    mine.push(run_child(&me, transport, n, exch, 1));
                    theirs.push(run_child(other, transport, n, exch, 1));
                } else {
                    theirs.push(run_child(other, transport, n, exch, 1));
                    mine.push(run_child(&me, transport, n, exch, 1));
                }
            }
            let (a, b) = (merge(&mine), merge(&theirs));
            print_row(Some("this"), &a);
            print_row(Some("other"), &b);
            println!(
                "      this ÷ other, median ns per event: {:.3}{}",
                a.sim_med / b.sim_med,
                if a.events == b.events {
                    ""
                } else {
                    "  (different event counts: not the same run)"
                }
            );
        }
    }
    println!(
        "ns/ev: thread CPU ns per event; M ev/CPU-s from the median; bare: BinaryHeap<(u64, u32)> \
         loop at the mean queue length, same event count; sim/limit: median of bare ns ÷ sim ns \
         per repetition (1 = as fast as the bare heap); \
         heap B/client: peak bytes the simulator run held allocated, ÷ clients"
    );
}
