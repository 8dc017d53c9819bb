//! Runs one replication of a resolved configuration (JSON file) `n` times, for profilers:
//! `cargo run --release -p coaplab-engine --example profile_run -- config.json 5`.

use std::time::Instant;

use coaplab_engine::config::RunConfig;
use coaplab_engine::testbed::run;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = args
        .get(1)
        .expect("usage: profile_run CONFIG.json [REPLICATIONS]");
    let reps: u64 = args
        .get(2)
        .map_or(1, |n| n.parse().expect("REPLICATIONS: a number"));
    let text = std::fs::read_to_string(path).expect("readable configuration");
    let cfg = RunConfig::from_json(&text).expect("valid configuration");
    let t0 = Instant::now();
    let mut events = 0;
    for rep in 0..reps {
        events += run(&cfg, rep, None).expect("runs").events;
    }
    let wall = t0.elapsed().as_secs_f64();
    println!(
        "{events} events in {wall:.3} s: {:.2} M events/s",
        events as f64 / wall / 1e6
    );
}
