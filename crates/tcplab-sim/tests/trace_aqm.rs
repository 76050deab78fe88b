//! A queue discipline on a trace hop (`aqm` on `kind = "trace"`): the
//! transmitter takes packets from the discipline at the delivery
//! opportunities, as `mm-link` asks its queue (`link_queue.cc:
//! LinkQueue::rationalize()`). Synthetic Mahimahi traces written by the
//! tests; no measured trace is needed.

use std::path::{Path, PathBuf};

use tcplab_sim::config::*;
use tcplab_sim::queue::AqmConfig;

mod common;
use common::{linux_tcp, run_checked};

const MS: u64 = 1_000_000;
const S: u64 = 1_000_000_000;

/// Write a Mahimahi trace (one line per opportunity) under a fresh
/// directory of the test's own; returns its path.
fn write_trace(name: &str, lines: &[u64]) -> PathBuf {
    // One file per call: the tests run in parallel threads of one process, and two
    // writing the same name let one read the file while the other had truncated it.
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("tcplab-trace-aqm-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(format!("{n}-{name}"));
    let text: String = lines.iter().map(|t| format!("{t}\n")).collect();
    std::fs::write(&p, text).unwrap();
    p
}

/// A bursty 1-second trace: 0, 1 or 2 opportunities per millisecond in a
/// fixed pattern (mean 1.0 per ms, 12.03 Mbit/s of 1504-byte opportunities).
fn bursty() -> Vec<u64> {
    let mut v = Vec::new();
    for ms in 1..=1000u64 {
        for _ in 0..(ms * 7 % 3) {
            v.push(ms);
        }
    }
    v
}

fn aqm(json: &str) -> AqmConfig {
    serde_json::from_str(json).unwrap()
}

/// One flow over a trace hop (the trace down, a fixed 10 Mbit/s up), 20 ms
/// one way in each direction, the down queue `limit` packets with `aqm`.
fn config(trace: &Path, limit: u32, aqm: Option<AqmConfig>, secs: u64, ecn: bool) -> SimConfig {
    let mut c = example_p2p(secs * S, 0.0);
    let dir = |file: Option<String>, rate: Option<u64>, aqm: Option<AqmConfig>| TraceDirConfig {
        file,
        format: TraceFormat::Mahimahi,
        rate_bps: rate,
        delay_ns: 20 * MS,
        delay_trace: None,
        queue: QueueConfig::Packets { limit },
        loss: LossConfig::None,
        aqm,
    };
    c.hops = vec![HopConfig::Trace(TraceConfig {
        name: "cell".into(),
        fwd: dir(Some(trace.to_str().unwrap().into()), None, aqm),
        rev: dir(None, Some(10_000_000), None),
        repeat: true,
    })];
    c.flows[0].tcp = linux_tcp(ecn);
    c.sample_interval_ns = 0;
    c
}

fn run(c: SimConfig) -> serde_json::Value {
    run_checked(c).1
}

fn down(s: &serde_json::Value) -> &serde_json::Value {
    &s["links"][0]
}

fn ms(v: &serde_json::Value, k: &str) -> f64 {
    v[k].as_f64().unwrap_or_else(|| panic!("{k} in {v}"))
}

/// The managed transmitter with a FIFO (`aqm = "droptail"`) is `mm-link`'s
/// DropTail queue, which the unmanaged trace hop computes on arrival: a
/// CUBIC flow over a bursty trace sees the same drops, the same deliveries
/// and the same retransmissions, packet for packet.
#[test]
fn a_managed_fifo_on_a_trace_is_the_droptail_model() {
    let t = write_trace("bursty.down", &bursty());
    let plain = run(config(&t, 60, None, 20, false));
    let fifo = run(config(
        &t,
        60,
        Some(aqm(r#"{"kind": "droptail"}"#)),
        20,
        false,
    ));
    for k in ["drops_queue", "max_queue_packets"] {
        assert_eq!(down(&plain)[k], down(&fifo)[k], "{k}");
    }
    // tx_packets: the unmanaged hop counts a packet when it accepts it, the
    // transmitter when its last byte leaves; they differ by the packets
    // still waiting or in transit when the run ends (at most limit + 1).
    let tx = |s: &serde_json::Value| down(s)["tx_packets"].as_u64().unwrap();
    assert!(tx(&plain) >= tx(&fifo) && tx(&plain) - tx(&fifo) <= 61);
    assert!(down(&plain)["drops_queue"].as_u64().unwrap() > 0);
    for k in ["bytes_delivered", "retransmitted_segments", "timeouts"] {
        assert_eq!(plain["flows"][0][k], fifo["flows"][0][k], "{k}");
    }
    assert_eq!(plain["links"][1], fifo["links"][1]);
    assert_eq!(down(&fifo)["aqm"], "droptail");
    assert!(down(&plain).get("aqm").is_none());
}

/// The sojourn a discipline sees runs from enqueue to the opportunity that
/// takes the packet: with one opportunity every 50 ms and a datagram every
/// 50 ms arriving 10 ms after each, every datagram waits 40 ms.
#[test]
fn the_sojourn_runs_to_the_opportunity_that_takes_the_packet() {
    let t = write_trace("every50.down", &[50]);
    let mut c = config(&t, 100, Some(aqm(r#"{"kind": "droptail"}"#)), 3, false);
    c.flows.clear();
    c.cross = vec![CbrConfig {
        name: "udp".into(),
        path: vec![0],
        rate_bps: 240_000, // 1500 bytes every 50 ms
        packet_bytes: 1500,
        start_ns: 10 * MS,
        stop_ns: 3 * S,
    }];
    let s = run(c);
    let d = down(&s);
    assert!((ms(d, "sojourn_p50_ms") - 40.0).abs() < 0.1, "{d}");
    assert!((ms(d, "sojourn_p99_ms") - 40.0).abs() < 0.1, "{d}");
    assert_eq!(d["max_queue_packets"], 0);
    // 60 datagrams offered; the last one, at 2.96 s, leaves at 3.0 s and
    // is still on the 20 ms wire when the run ends.
    assert_eq!(s["cross"][0]["received"], 59);
}

/// CoDel on the trace hop keeps the standing queue near its 5 ms target
/// where a 1000-packet DropTail queue fills to hundreds of milliseconds;
/// with ECN it marks instead of dropping, and the flow keeps the trace's
/// capacity.
#[test]
fn codel_on_a_trace_keeps_the_queue_near_target_and_marks_with_ecn() {
    let t = write_trace("bursty.down", &bursty());
    let secs = 30;
    let fifo = run(config(
        &t,
        1000,
        Some(aqm(r#"{"kind": "droptail"}"#)),
        secs,
        false,
    ));
    let codel = r#"{"kind": "codel", "target_ns": 5000000, "interval_ns": 100000000, "ecn": true}"#;
    let drop = run(config(&t, 1000, Some(aqm(codel)), secs, false));
    let mark = run(config(&t, 1000, Some(aqm(codel)), secs, true));
    for (name, s) in [("droptail", &fifo), ("codel", &drop), ("codel+ecn", &mark)] {
        eprintln!("{name}: {} / {}", down(s), s["flows"][0]);
    }
    assert!(ms(down(&fifo), "sojourn_p50_ms") >= 200.0);
    for s in [&drop, &mark] {
        assert!(ms(down(s), "sojourn_p50_ms") <= 15.0, "{}", down(s));
        assert_eq!(down(s)["drops_queue"], 0);
    }
    // Without ECN CoDel drops; with it, it marks and drops nothing.
    assert!(down(&drop)["drops_aqm"].as_u64().unwrap() > 0);
    assert_eq!(down(&drop)["ecn_marks"], 0);
    assert!(down(&mark)["ecn_marks"].as_u64().unwrap() > 0);
    assert_eq!(down(&mark)["drops_aqm"], 0);
    assert_eq!(mark["flows"][0]["retransmitted_segments"], 0);
    // The trace carries 12.03 Mbit/s of opportunities, 1500 of each 1504
    // bytes IP: the flow keeps ≥ 85 % of it.
    let capacity = 1500.0 * 8.0 * 1000.0;
    for s in [&drop, &mark] {
        let g = s["flows"][0]["goodput_bps"].as_f64().unwrap();
        assert!(g >= 0.85 * capacity, "{g}");
    }
}

/// The discipline's errors name the direction and the field; a fixed-rate
/// direction and a rate-form csv trace take none.
#[test]
fn a_trace_hops_discipline_is_checked() {
    let t = write_trace("check.down", &[1]);
    let bad = r#"{"kind": "codel", "target_ns": 0, "interval_ns": 100000000, "ecn": false}"#;
    let c = config(&t, 100, Some(aqm(bad)), 1, false);
    let e = tcplab_sim::validate::validate(&c).unwrap_err();
    assert_eq!(e, "hops[0].down.aqm.target: must be > 0");
    let mut c = config(&t, 100, None, 1, false);
    let HopConfig::Trace(h) = &mut c.hops[0] else {
        unreachable!()
    };
    h.rev.aqm = Some(aqm(r#"{"kind": "droptail"}"#));
    let e = tcplab_sim::validate::validate(&c).unwrap_err();
    assert!(
        e.starts_with("hops[0].up.aqm: only a direction served by a trace file"),
        "{e}"
    );
    let dir = t.parent().unwrap().join("rate.csv");
    std::fs::write(&dir, "time_us,rate_bps\n0,1000000\n1000000,2000000\n").unwrap();
    let mut c = config(&dir, 100, Some(aqm(r#"{"kind": "droptail"}"#)), 1, false);
    let HopConfig::Trace(h) = &mut c.hops[0] else {
        unreachable!()
    };
    h.fwd.format = TraceFormat::Csv;
    tcplab_sim::validate::validate(&c).unwrap();
    let e = tcplab_sim::validate::files(&c).unwrap_err();
    assert!(
        e.starts_with("hops[0].down.aqm: a rate-form csv trace"),
        "{e}"
    );
}
