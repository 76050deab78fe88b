//! Costs of the trace hop (driven by `bench/trace_cost.py`):
//! `trace_bench load FILE [mahimahi|csv]`: time and peak memory of loading a
//! trace, one JSON line;
//! `trace_bench cost FILE SECONDS REPEAT`: CPU time per packet of the same
//! workloads over a fixed link at the trace's mean rate and over the trace,
//! best of REPEAT runs (the run only, not reading the trace), one JSON line
//! per workload.
use std::time::Instant;

use tcplab_sim::config::{
    example_p2p, CbrConfig, HopConfig, LinkConfig, LossConfig, QueueConfig, SimConfig, TraceConfig,
    TraceDirConfig, TraceFormat,
};
use tcplab_sim::hops::trace::CapacityTrace;

/// CPU time this process has used, s: on a shared machine the run's own
/// cost, which wall time is not (other processes take turns on the cores).
fn cpu_s() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec into `ts`.
    unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// Peak resident memory of this process, MB (Linux `VmHWM`).
fn peak_rss_mb() -> f64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

fn format(s: Option<&String>) -> TraceFormat {
    match s.map(String::as_str) {
        Some("csv") => TraceFormat::Csv,
        _ => TraceFormat::Mahimahi,
    }
}

fn load(file: &str, fmt: TraceFormat) {
    let before = peak_rss_mb();
    let (t, c) = (Instant::now(), cpu_s());
    let tr = CapacityTrace::load(file, fmt).unwrap_or_else(|e| panic!("{e}"));
    let (wall, cpu) = (t.elapsed().as_secs_f64(), cpu_s() - c);
    println!(
        "{}",
        serde_json::json!({
            "file": file, "load_s": wall, "load_cpu_s": cpu, "peak_rss_mb": peak_rss_mb(),
            "rss_before_mb": before, "trace_s": tr.duration_ns() as f64 / 1e9,
            "timestamps": tr.opps.len(), "bytes": tr.total_bytes(),
        })
    );
}

/// A run over one hop: the trace (`trace = true`) or a link at `rate`.
fn config(file: &str, trace: bool, rate: u64, secs: u64, udp: bool) -> SimConfig {
    let mut c = example_p2p(secs * 1_000_000_000, 0.0);
    let delay = 20_000_000;
    let queue = QueueConfig::Packets { limit: 100 };
    if trace {
        let dir = |file: Option<&str>, rate: Option<u64>| TraceDirConfig {
            file: file.map(str::to_string),
            format: TraceFormat::Mahimahi,
            rate_bps: rate,
            delay_ns: delay,
            delay_trace: None,
            queue,
            loss: LossConfig::None,
            aqm: None,
        };
        c.hops = vec![HopConfig::Trace(TraceConfig {
            name: "hop".into(),
            fwd: dir(Some(file), None),
            rev: dir(None, Some(rate)),
            repeat: true,
        })];
    } else {
        let HopConfig::Link(l) = &c.hops[0] else {
            unreachable!()
        };
        let mut d = l.fwd.clone();
        d.rate_bps = rate;
        d.delay_ns = delay;
        d.queue = queue;
        c.hops = vec![HopConfig::Link(LinkConfig {
            name: "hop".into(),
            fwd: d.clone(),
            rev: d,
        })];
    }
    c.sample_interval_ns = 0;
    c.record.timeseries = false;
    c.record.events = false;
    c.flows[0].tcp.cc = "cubic".into();
    if udp {
        c.flows.clear();
        c.cross = vec![CbrConfig {
            name: "udp".into(),
            path: vec![0],
            rate_bps: 2 * rate,
            packet_bytes: 1500,
            start_ns: 0,
            stop_ns: secs * 1_000_000_000,
        }];
    }
    c
}

fn cost(file: &str, secs: u64, repeat: usize) {
    let tr = CapacityTrace::load(file, TraceFormat::Mahimahi).unwrap_or_else(|e| panic!("{e}"));
    let rate = (tr.total_bytes() as f64 / 1504.0 * 1500.0 * 8e9 / tr.duration_ns() as f64) as u64;
    for udp in [true, false] {
        let mut row = serde_json::json!({
            "workload": if udp { "udp at twice the mean rate" } else { "cubic bulk" },
            "seconds": secs, "rate_bps": rate,
        });
        for trace in [false, true] {
            let mut best = f64::INFINITY;
            let mut packets = 0;
            for _ in 0..repeat {
                let c = config(file, trace, rate, secs, udp);
                // The run only: building the hop (reading the trace) is
                // the load benchmark's.
                let sim = tcplab_sim::Sim::new(c).unwrap();
                let c = cpu_s();
                let s = sim.run(None).unwrap().summary.unwrap();
                best = best.min(cpu_s() - c);
                packets = s.packets;
            }
            let k = if trace { "trace" } else { "link" };
            row[format!("{k}_packets")] = packets.into();
            row[format!("{k}_ns_per_packet")] = (best * 1e9 / packets as f64).into();
        }
        println!("{row}");
    }
}

fn main() {
    let a: Vec<String> = std::env::args().collect();
    match a.get(1).map(String::as_str) {
        Some("load") => load(&a[2], format(a.get(3))),
        Some("cost") => cost(&a[2], a[3].parse().unwrap(), a[4].parse().unwrap()),
        _ => eprintln!("usage: trace_bench load FILE [mahimahi|csv] | cost FILE SECONDS REPEAT"),
    }
}
