//! Run the canonical p2p-bulk scenario from Rust (for profiling):
//! `cargo run --release -p tcplab-sim --example p2p -- [duration_s] [loss]`
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let dur: f64 = args.get(1).map_or(600.0, |s| s.parse().unwrap());
    let loss: f64 = args.get(2).map_or(0.0, |s| s.parse().unwrap());
    let cfg = tcplab_sim::config::example_p2p((dur * 1e9) as u64, loss);
    let t = Instant::now();
    let out = tcplab_sim::Sim::new(cfg).unwrap().run(None).unwrap();
    let wall = t.elapsed().as_secs_f64();
    let s = out.summary.unwrap();
    println!("{}", s.to_json());
    eprintln!(
        "wall {wall:.3} s, {} events, {:.2} M events/s",
        s.events,
        s.events as f64 / wall / 1e6
    );
}
