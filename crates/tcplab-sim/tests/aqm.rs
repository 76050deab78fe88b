//! Managed queues on a link: one CUBIC flow and a ping over 10 Mbit/s with
//! 50 ms one way, DropTail with 1000 packets against the disciplines.

use tcplab_sim::config::*;
use tcplab_sim::queue::AqmConfig;

mod common;
pub use common::{linux_tcp, run_checked};

const MS: u64 = 1_000_000;

fn dir(aqm: Option<AqmConfig>, rate: u64, delay_ns: u64) -> LinkDirConfig {
    LinkDirConfig {
        rate_bps: rate,
        delay_ns,
        queue: QueueConfig::Packets { limit: 1000 },
        loss: LossConfig::None,
        overhead_bytes: 0,
        bits_per_byte: 8,
        reorder: None,
        outages_ns: Vec::new(),
        stalls_ns: Vec::new(),
        aqm,
        delay_trace: None,
    }
}

pub fn aqm(json: &str) -> AqmConfig {
    serde_json::from_str(json).unwrap()
}

pub struct Run {
    pub summary: serde_json::Value,
    /// The lowest goodput of a 5 s window starting at 5, 10, ... s.
    pub min_window_bps: f64,
}

impl Run {
    pub fn fwd(&self) -> &serde_json::Value {
        &self.summary["links"][0]
    }
    pub fn flow(&self) -> &serde_json::Value {
        &self.summary["flows"][0]
    }
    pub fn ping_median_ms(&self) -> f64 {
        let mut v: Vec<f64> = self.summary["pings"][0]["rtt_ms"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect();
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    }
}

pub fn bufferbloat(aqm: Option<AqmConfig>, tcp: TcpConfigJson, secs: u64) -> Run {
    bufferbloat_flows(aqm, tcp, secs, 1)
}

/// `bufferbloat` with `n` flows of the same TCP (started 100 ms apart);
/// `Run::flow` is the first, the summary has them all.
pub fn bufferbloat_flows(aqm: Option<AqmConfig>, tcp: TcpConfigJson, secs: u64, n: u64) -> Run {
    bufferbloat_mix(aqm, vec![tcp; n as usize], secs)
}

/// `bufferbloat` with one flow per TCP in `tcps` (started 100 ms apart).
pub fn bufferbloat_mix(aqm: Option<AqmConfig>, tcps: Vec<TcpConfigJson>, secs: u64) -> Run {
    mix(aqm, tcps, secs, 10_000_000, 50 * MS)
}

/// One flow per TCP in `tcps` and a ping over `rate` with `delay_ns` one
/// way, `queue = 1000`, `aqm` on both directions.
pub fn mix(
    aqm: Option<AqmConfig>,
    tcps: Vec<TcpConfigJson>,
    secs: u64,
    rate: u64,
    delay_ns: u64,
) -> Run {
    let flows = tcps
        .into_iter()
        .enumerate()
        .map(|(i, tcp)| FlowConfig {
            name: format!("{}{i}", tcp.cc),
            path: vec![0],
            start_ns: i as u64 * 100 * MS,
            tcp,
            app: AppConfig::Bulk { bytes: None },
        })
        .collect();
    let cfg = SimConfig {
        name: "bufferbloat".into(),
        duration_ns: secs * 1000 * MS,
        seed: 1,
        sample_interval_ns: 100 * MS,
        trace: false,
        hops: vec![HopConfig::Link(LinkConfig {
            name: "bottleneck".into(),
            fwd: dir(aqm.clone(), rate, delay_ns),
            rev: dir(aqm, rate, delay_ns),
        })],
        flows,
        cross: vec![],
        pcap: vec![],
        pings: vec![PingConfig {
            name: "ping".into(),
            path: vec![0],
            packet_bytes: 84,
            interval_ns: 100 * MS,
            start_ns: 0,
            stop_ns: secs * 1000 * MS,
            from_receiver: false,
        }],
        record: Record {
            timeseries: true,
            events: false,
            spill_dir: None,
        },
    };
    let (out, summary) = run_checked(cfg);
    // bytes delivered at each 5 s boundary, from the time series
    let at = |t: i64| {
        out.ts_t
            .iter()
            .zip(&out.ts_delivered)
            .filter(|(&s, _)| s <= t)
            .map(|(_, &d)| d)
            .next_back()
            .unwrap_or(0)
    };
    let step = 5_000 * MS as i64;
    let min_window_bps = (1..secs as i64 / 5)
        .map(|k| (at((k + 1) * step) - at(k * step)) as f64 * 8.0 / 5.0)
        .fold(f64::INFINITY, f64::min);
    Run {
        summary,
        min_window_bps,
    }
}

/// Goodput over the run, and the lowest goodput of any 5 s window after the
/// first 5 s (bytes delivered, from the 100 ms time series).
fn goodputs(r: &Run) -> (f64, f64) {
    let total = r.flow()["goodput_bps"].as_f64().unwrap();
    (total, r.min_window_bps)
}

#[test]
fn fq_codel_removes_the_bufferbloat_of_droptail() {
    let tail = bufferbloat(None, linux_tcp(false), 30);
    let drop = bufferbloat(Some(aqm(r#"{"kind": "droptail"}"#)), linux_tcp(false), 30);
    let fq = bufferbloat(Some(aqm(r#"{"kind": "fq_codel"}"#)), linux_tcp(false), 30);
    for (name, r) in [
        ("droptail fast path", &tail),
        ("droptail managed", &drop),
        ("fq_codel", &fq),
    ] {
        eprintln!(
            "{name}: ping median {:.1} ms, goodput {:?}, row {}, flow {}",
            r.ping_median_ms(),
            goodputs(r),
            r.fwd(),
            r.flow()
        );
    }
    // The managed DropTail is the fast path's queue: the same drops and
    // delays (its tx_packets counts packets whose transmission started, the
    // fast path's those accepted).
    assert_eq!(tail.fwd()["drops_queue"], drop.fwd()["drops_queue"]);
    assert_eq!(
        tail.fwd()["max_queue_packets"],
        drop.fwd()["max_queue_packets"]
    );
    assert_eq!(tail.ping_median_ms(), drop.ping_median_ms());
    // DropTail with 1000 packets: the queue stands at hundreds of ms, for
    // the flow's packets and for the ping behind them.
    assert!(drop.fwd()["sojourn_p50_ms"].as_f64().unwrap() >= 300.0);
    assert!(tail.ping_median_ms() - 100.0 >= 300.0);
    // fq_codel: the ping (its own flow queue) and the flow's own packets
    // wait ≤ 15 ms at the median.
    assert!(fq.ping_median_ms() - 100.0 <= 15.0);
    assert!(fq.fwd()["sojourn_p50_ms"].as_f64().unwrap() <= 15.0);
    assert!(fq.fwd()["drops_aqm"].as_u64().unwrap() > 0);
    assert_eq!(fq.flow()["timeouts"].as_u64().unwrap(), 0);
    // Goodput ≥ 85 % of the 10 Mbit/s line over the run and in every 5 s
    // window after the first 5 s.
    let (total, window) = goodputs(&fq);
    assert!(total >= 0.85 * 10e6, "{total}");
    assert!(window >= 0.85 * 10e6, "{window}");
}

#[test]
fn with_ecn_fq_codel_marks_instead_of_dropping() {
    let fq = bufferbloat(Some(aqm(r#"{"kind": "fq_codel"}"#)), linux_tcp(true), 30);
    eprintln!(
        "fq_codel+ecn: ping median {:.1} ms, goodput {:?}, row {}, flow {}",
        fq.ping_median_ms(),
        goodputs(&fq),
        fq.fwd(),
        fq.flow()
    );
    let row = fq.fwd();
    assert!(row["ecn_marks"].as_u64().unwrap() > 0);
    // The flow loses at most 5 packets (the start-up overshoot is marked,
    // not dropped).
    let lost = row["drops_aqm"].as_u64().unwrap() + row["drops_queue"].as_u64().unwrap();
    assert!(lost <= 5, "{lost} lost");
    assert!(fq.flow()["retransmitted_segments"].as_u64().unwrap() <= 5);
    assert!(row["sojourn_p50_ms"].as_f64().unwrap() <= 15.0);
    assert!(fq.ping_median_ms() - 100.0 <= 15.0);
    let (total, window) = goodputs(&fq);
    assert!(total >= 0.85 * 10e6, "{total}");
    assert!(window >= 0.85 * 10e6, "{window}");
}

/// The same flow with the RFC defaults of tcplab's TCP (no RACK, PRR or
/// HyStart, a 1 s minimum RTO): CoDel's drops in the slow-start overshoot
/// also hit retransmissions, which only the timeout repairs.
#[test]
fn with_the_rfc_stack_lost_retransmissions_wait_for_the_timeout() {
    let rfc = TcpConfigJson {
        cc: "cubic".into(),
        rcv_buf: 64 << 20,
        snd_buf: 64 << 20,
        ..Default::default()
    };
    let fq = bufferbloat(Some(aqm(r#"{"kind": "fq_codel"}"#)), rfc, 30);
    eprintln!(
        "fq_codel, rfc stack: ping median {:.1} ms, goodput {:?}, row {}, flow {}",
        fq.ping_median_ms(),
        goodputs(&fq),
        fq.fwd(),
        fq.flow()
    );
    assert!(fq.ping_median_ms() - 100.0 <= 15.0);
    assert!(fq.flow()["timeouts"].as_u64().unwrap() > 0);
}

/// DualPI2 (RFC 9332) with classic traffic only: CUBIC flows are C-queue
/// flows, whose queueing delay the PI2 controller holds near its 15 ms
/// target (RFC 9332 §2.4) where the 1000-packet FIFO stands at hundreds of
/// ms; with ECN (ECT(0), still the C-queue) it marks with p'² instead of
/// dropping. Four flows keep the queue busy; one flow's sawtooth empties it
/// after each reduction (below). A check against the RFC's stated design,
/// not against another implementation.
#[test]
fn dualpi2_holds_classic_flows_near_its_target() {
    let total = |r: &Run| -> f64 {
        r.summary["flows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["goodput_bps"].as_f64().unwrap())
            .sum()
    };
    for ecn in [false, true] {
        let r = bufferbloat_flows(Some(aqm(r#"{"kind": "dualpi2"}"#)), linux_tcp(ecn), 30, 4);
        let row = r.fwd();
        eprintln!("dualpi2 ×4 ecn={ecn}: goodput {:.0}, row {row}", total(&r));
        let p50 = row["sojourn_p50_ms"].as_f64().unwrap();
        assert!((10.0..=20.0).contains(&p50), "{p50}");
        if ecn {
            assert!(row["ecn_marks"].as_u64().unwrap() > 0);
            assert!(row["drops_aqm"].as_u64().unwrap() <= 5);
        } else {
            assert!(row["drops_aqm"].as_u64().unwrap() > 0);
            assert_eq!(row["ecn_marks"], 0);
        }
        assert!(total(&r) >= 0.9 * 10e6, "{}", total(&r));
    }
    // One flow: each multiplicative decrease drains the queue, so the
    // median sojourn is below the target, and never the FIFO's standing queue.
    let one = bufferbloat(Some(aqm(r#"{"kind": "dualpi2"}"#)), linux_tcp(false), 30);
    eprintln!("dualpi2 ×1: row {}", one.fwd());
    assert!(one.fwd()["sojourn_p50_ms"].as_f64().unwrap() <= 15.0);
    assert!(one.fwd()["sojourn_p99_ms"].as_f64().unwrap() <= 60.0);
}

/// DCTCP (RFC 8257) on Linux's stack: ECT(1), ECN negotiated whatever the
/// flow's `ecn`, alpha-scaled reductions.
fn dctcp() -> TcpConfigJson {
    TcpConfigJson {
        cc: "dctcp".into(),
        hystart_linux: false,
        cubic_linux: false,
        ..linux_tcp(false)
    }
}

/// DualPI2 with scalable traffic, checked against RFC 9332's stated design
/// (no external implementation runs here), at 100 Mbit/s with 10 ms one
/// way, where the 1 ms step is eight packets' serialisation: DCTCP's
/// ECT(1) packets take the L-queue, whose step holds their sojourn at
/// about 1 ms with no loss (§2.4, A.1), at ≥ 85 % of the link.
#[test]
fn dualpi2_serves_dctcp_in_the_l_queue_below_its_step() {
    let goodput = |r: &Run, i: usize| r.summary["flows"][i]["goodput_bps"].as_f64().unwrap();
    let l4s = mix(
        Some(aqm(r#"{"kind": "dualpi2"}"#)),
        vec![dctcp(), dctcp()],
        20,
        100_000_000,
        10 * MS,
    );
    let row = l4s.fwd();
    let total = goodput(&l4s, 0) + goodput(&l4s, 1);
    eprintln!("dualpi2 2×dctcp: {total:.0}, row {row}");
    let (p50, p99) = (
        row["sojourn_p50_ms"].as_f64().unwrap(),
        row["sojourn_p99_ms"].as_f64().unwrap(),
    );
    assert!(p50 <= 1.0 && p99 <= 2.0, "{p50} {p99}");
    assert!(row["ecn_marks"].as_u64().unwrap() > 0);
    assert_eq!(row["drops_aqm"], 0);
    assert_eq!(row["drops_queue"], 0);
    assert_eq!(l4s.flow()["retransmitted_segments"], 0);
    assert!(total >= 0.85 * 100e6, "{total}");
}

/// At 10 Mbit/s one 1500-byte packet takes 1.2 ms to serialise, longer than
/// the 1 ms step: with Linux's default `min_qlen_step = 0` every packet
/// queued behind another is step-marked, and two DCTCP flows (50 ms one
/// way) collapse to a few segments of cwnd. `skb_apply_step()`'s minimum
/// L-queue length (RFC 9332 A.1's threshold in packets) spares the second
/// packet of each two-segment burst, and the flows grow: eight times the
/// goodput here (a 1 ms step is still well below the 100 ms path's
/// window, so they do not fill the link; docs/aqm.md).
#[test]
fn min_qlen_step_keeps_dctcp_from_collapsing_on_a_slow_link() {
    let total = |r: &Run| -> f64 {
        (0..2)
            .map(|i| r.summary["flows"][i]["goodput_bps"].as_f64().unwrap())
            .sum()
    };
    let run = |a: &str| {
        mix(
            Some(aqm(a)),
            vec![dctcp(), dctcp()],
            20,
            10_000_000,
            50 * MS,
        )
    };
    let default = run(r#"{"kind": "dualpi2"}"#);
    let spared = run(r#"{"kind": "dualpi2", "min_qlen_step": 2}"#);
    eprintln!(
        "10 Mbit/s 2×dctcp: default {:.0} bit/s {}, min_qlen_step 2 {:.0} bit/s {}",
        total(&default),
        default.fwd(),
        total(&spared),
        spared.fwd()
    );
    assert!(total(&default) < 0.1 * 10e6, "{}", total(&default));
    assert!(
        total(&spared) >= 5.0 * total(&default),
        "{}",
        total(&spared)
    );
    assert!(total(&spared) >= 0.3 * 10e6, "{}", total(&spared));
    assert_eq!(spared.fwd()["drops_aqm"], 0);
}
