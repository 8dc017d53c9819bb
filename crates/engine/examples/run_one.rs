//! Runs replication 0 of a resolved configuration (JSON file) and prints its result without
//! the per-client rows: `cargo run --release -p coaplab-engine --example run_one -- c.json`.

use coaplab_engine::config::RunConfig;
use coaplab_engine::testbed::run;

fn main() {
    let path = std::env::args().nth(1).expect("usage: run_one CONFIG.json");
    let text = std::fs::read_to_string(path).expect("readable configuration");
    let cfg = RunConfig::from_json(&text).expect("valid configuration");
    let mut r = run(&cfg, 0, None).expect("runs");
    let completed: u32 = r.clients.iter().map(|c| c.exchanges_completed).sum();
    let failed: u32 = r.clients.iter().map(|c| c.exchanges_failed).sum();
    r.clients.clear();
    println!("completed {completed} failed {failed}");
    println!("{}", serde_json::to_string_pretty(&r).expect("serializes"));
}
