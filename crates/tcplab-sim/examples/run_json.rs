//! Run a normalized configuration (the JSON `tcplab.Scenario.to_config()`
//! produces) from Rust, for profiling any scenario:
//! `cargo run --release -p tcplab-sim --example run_json -- config.json`
use std::time::Instant;

fn main() {
    let path = std::env::args()
        .nth(1)
        .expect("usage: run_json CONFIG.json");
    let json = std::fs::read_to_string(&path).expect("cannot read the config");
    let t = Instant::now();
    let out = tcplab_sim::run_json(&json, None).expect("run failed");
    let wall = t.elapsed().as_secs_f64();
    let s = out.summary.expect("summary");
    println!("{}", s.to_json());
    eprintln!("wall {wall:.3} s, {} events", s.events);
}
