//! No allocation per event in steady state: a counting global allocator runs the same scenario
//! at two lengths and compares allocation counts per extra event.
//!
//! Why a difference and not a total: building a testbed allocates (clients, RNG streams, the
//! queue's and the slab's first growth, the result), and a vector that grows by doubling
//! reallocates O(log n) times over a run. Neither is *per event*. Running the same
//! configuration with 200 and with 400 exchanges per client and dividing the difference in
//! allocation calls by the difference in events gives the allocations per event in steady
//! state: 0 if nothing is allocated per event, ≥ 1 if something is allocated on every event,
//! ≈ 1/(events per exchange) ≈ 0.1–0.2 if something is allocated once per exchange. The bound
//! 0.01 lies well below the per-exchange figure and leaves room for the logarithmic number of
//! doublings (a handful of calls against ~10⁵ extra events).
//!
//! Counters are per thread (the test harness runs tests on several threads).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use coaplab_engine::testbed::run;
use serde_json::json;

mod common;

struct Counting;

thread_local! {
    /// (allocation calls incl. reallocations, bytes currently live, peak of live bytes)
    static COUNTS: Cell<(u64, i64, i64)> = const { Cell::new((0, 0, 0)) };
}

fn note(calls: u64, delta: i64) {
    let _ = COUNTS.try_with(|c| {
        let (n, live, peak) = c.get();
        let live = live + delta;
        c.set((n + calls, live, peak.max(live)));
    });
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(1, layout.size() as i64);
        System.alloc(layout)
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note(1, layout.size() as i64);
        System.alloc_zeroed(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        note(0, -(layout.size() as i64));
        System.dealloc(ptr, layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note(1, new_size as i64 - layout.size() as i64);
        System.realloc(ptr, layout, new_size)
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// One run: (events, allocation calls, peak live bytes above the start).
fn measure(transport: &str, cc: &str, exchanges: u32) -> (u64, u64, i64) {
    let cfg = common::config(json!({
        "link": {"buffer_bytes": 1_410_000},
        "workload": {"kind": "continuous", "clients": 20, "exchanges": exchanges},
        "coap": {"transport": transport, "cc": cc},
    }));
    measure_cfg(&cfg)
}

fn measure_cfg(cfg: &coaplab_engine::config::RunConfig) -> (u64, u64, i64) {
    let (calls0, live0, _) = COUNTS.with(|c| c.get());
    COUNTS.with(|c| c.set((calls0, live0, live0)));
    let result = run(cfg, 0, None).expect("runs");
    let (calls1, _, peak) = COUNTS.with(|c| c.get());
    (result.events, calls1 - calls0, peak - live0)
}

fn per_extra_event(transport: &str, cc: &str) -> (f64, f64) {
    let (e1, a1, p1) = measure(transport, cc, 200);
    let (e2, a2, p2) = measure(transport, cc, 400);
    assert!(
        e2 > e1 + 10_000,
        "{transport}: twice the exchanges, more events ({e1} → {e2})"
    );
    let extra = (e2 - e1) as f64;
    let allocs = (a2 as f64 - a1 as f64) / extra;
    let bytes = (p2 - p1) as f64 / extra;
    eprintln!(
        "{transport}: events {e1} → {e2}, allocation calls {a1} → {a2} ({allocs:.5} per extra event), \
         peak live bytes {p1} → {p2} ({bytes:.2} per extra event)"
    );
    (allocs, bytes)
}

#[test]
fn udp_allocates_nothing_per_event() {
    let (allocs, _) = per_extra_event("udp", "cocoa");
    assert!(allocs < 0.01, "{allocs} allocation calls per extra event");
}

#[test]
fn tcp_allocates_nothing_per_event() {
    let (allocs, _) = per_extra_event("tcp", "newreno");
    assert!(allocs < 0.01, "{allocs} allocation calls per extra event");
}

/// Memory must not grow with run length either (docs/design.md §9.5): a UDP client folds an
/// exchange's record into running totals once the exchange ended and none of its packets is in
/// the network; the server forgets MIDs after EXCHANGE_LIFETIME (247 s); TCP streams forget
/// acknowledged messages. Both runs are longer than EXCHANGE_LIFETIME (5 clients, 600 s vs
/// 1,200 s of continuous traffic), so every bounded table has reached its working size in both.
/// Bound: under 1 B of peak live memory per extra event (an exchange is ≈ 6 events; a record
/// kept per exchange would cost ≈ 30 B per event).
#[test]
fn memory_does_not_grow_with_run_length() {
    for (transport, cc) in [("udp", "cocoa"), ("tcp", "newreno")] {
        let long = |duration_s: f64| {
            common::config(json!({
                "link": {"buffer_bytes": 1_410_000},
                "workload": {"kind": "continuous", "clients": 5, "duration_s": duration_s},
                "coap": {"transport": transport, "cc": cc},
            }))
        };
        let (e1, _, p1) = measure_cfg(&long(600.0));
        let (e2, _, p2) = measure_cfg(&long(1200.0));
        assert!(e2 > e1 + 10_000, "{transport}: {e1} → {e2} events");
        let bytes = (p2 - p1) as f64 / (e2 - e1) as f64;
        eprintln!("{transport}: peak live bytes {p1} → {p2} ({bytes:.3} per extra event)");
        assert!(
            bytes < 1.0,
            "{transport}: {bytes} B of peak live memory per extra event"
        );
    }
}
