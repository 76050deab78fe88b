//! Pacing (`tcplab_tcp::pacing`) and BBR (`cc = "bbr"`) through the whole
//! simulator: a paced flow spaces its segments, BBR fills a bottleneck with
//! a small standing queue, runs are deterministic, and the invariants hold.

use tcplab_sim::config::{example_p2p, HopConfig, QueueConfig, SimConfig};
use tcplab_sim::output::Output;
use tcplab_sim::Sim;

const MS: i64 = 1_000_000;

/// 10 Mbit/s, 20 ms one way (RTT 40 ms, BDP ≈ 33 packets), a queue of
/// `queue` packets, `cc`, pacing as given, the segment trace on.
fn config(cc: &str, pacing: Option<bool>, queue: u32, loss: f64) -> SimConfig {
    let mut cfg = example_p2p(10_000_000_000, loss);
    cfg.trace = true;
    cfg.sample_interval_ns = 10_000_000;
    let HopConfig::Link(l) = &mut cfg.hops[0] else {
        unreachable!()
    };
    l.fwd.delay_ns = 20_000_000;
    l.rev.delay_ns = 20_000_000;
    l.fwd.queue = QueueConfig::Packets { limit: queue };
    let t = &mut cfg.flows[0].tcp;
    t.cc = cc.into();
    t.pacing = pacing;
    cfg
}

fn run(cfg: SimConfig) -> Output {
    let out = Sim::new(cfg).unwrap().run(None).unwrap();
    let s = out.summary.as_ref().unwrap();
    assert!(s.violations.is_empty(), "{:?}", s.violations);
    out
}

/// Send times of the data segments (first transmissions and retransmissions).
fn send_times(o: &Output) -> Vec<i64> {
    (0..o.seg_t.len())
        .filter(|&i| o.seg_kind[i] == 0)
        .map(|i| o.seg_t[i])
        .collect()
}

/// Largest number of data segments sent at one instant after `from`.
fn largest_burst(t: &[i64], from: i64) -> usize {
    let mut best = 0;
    let mut i = 0;
    while i < t.len() {
        let mut j = i;
        while j < t.len() && t[j] == t[i] {
            j += 1;
        }
        if t[i] >= from {
            best = best.max(j - i);
        }
        i = j;
    }
    best
}

/// A paced CUBIC flow never sends more than one burst (here 2 segments:
/// 1 ms at its rate is less than 2 segments) at an instant once pacing has
/// started; the same flow unpaced sends the ACK clock's bursts. Both fill
/// the link.
#[test]
fn pacing_spaces_segments() {
    let paced = run(config("cubic", Some(true), 100, 0.0));
    let unpaced = run(config("cubic", None, 100, 0.0));
    let tp = send_times(&paced);
    let tu = send_times(&unpaced);
    assert!(
        largest_burst(&tp, 500 * MS) <= 2,
        "{}",
        largest_burst(&tp, 500 * MS)
    );
    assert!(largest_burst(&tu, 0) >= 3, "{}", largest_burst(&tu, 0));
    for o in [&paced, &unpaced] {
        let gp = o.summary.as_ref().unwrap().flows[0].goodput_bps;
        assert!(gp > 8.5e6, "goodput {gp}");
    }
}

/// BBR fills a 10 Mbit/s link whose queue holds 2 BDP and keeps the queue
/// small: after STARTUP the median SRTT stays within 1.5 × the 40 ms
/// propagation RTT (a loss-based CUBIC flow fills the queue instead).
#[test]
fn bbr_fills_the_link_with_a_small_queue() {
    let o = run(config("bbr", None, 66, 0.0));
    let s = o.summary.as_ref().unwrap();
    let gp = s.flows[0].goodput_bps;
    assert!(gp > 9.0e6, "goodput {gp}");
    let mut srtt: Vec<i64> = (0..o.ts_t.len())
        .filter(|&i| o.ts_t[i] > 3_000 * MS)
        .map(|i| o.ts_srtt[i])
        .collect();
    srtt.sort();
    let median = srtt[srtt.len() / 2];
    assert!(median < 60 * MS, "BBR median SRTT {median}");
    let c = run(config("cubic", None, 66, 0.0));
    let mut cs: Vec<i64> = (0..c.ts_t.len())
        .filter(|&i| c.ts_t[i] > 3_000 * MS)
        .map(|i| c.ts_srtt[i])
        .collect();
    cs.sort();
    assert!(cs[cs.len() / 2] > median, "CUBIC fills the queue");
}

/// Same seed, same output (the gain cycle's random start included); a
/// lossy path exercises recovery, RTOs and the long-term sampler.
#[test]
fn bbr_deterministic_with_loss() {
    let a = run(config("bbr", None, 33, 0.02));
    let b = run(config("bbr", None, 33, 0.02));
    assert_eq!(send_times(&a), send_times(&b));
    assert_eq!(a.ts_cwnd, b.ts_cwnd);
    let s = a.summary.as_ref().unwrap();
    assert!(s.flows[0].retransmitted_segments > 0);
    assert!(s.flows[0].goodput_bps > 2e6, "{}", s.flows[0].goodput_bps);
}

/// BBR without pacing (`pacing = false`) still runs: cwnd alone limits it.
#[test]
fn bbr_unpaced_runs() {
    let o = run(config("bbr", Some(false), 66, 0.0));
    assert!(o.summary.as_ref().unwrap().flows[0].goodput_bps > 8e6);
}
