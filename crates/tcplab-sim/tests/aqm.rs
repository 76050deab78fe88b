//! Managed queues on a link: one CUBIC flow and a ping over 10 Mbit/s with
//! 50 ms one way, DropTail with 1000 packets against the disciplines.

use tcplab_sim::config::*;
use tcplab_sim::queue::AqmConfig;
use tcplab_sim::{Output, Sim};

const MS: u64 = 1_000_000;

fn dir(aqm: Option<AqmConfig>, rate: u64) -> LinkDirConfig {
    LinkDirConfig {
        rate_bps: rate,
        delay_ns: 50 * MS,
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

pub fn bufferbloat(aqm: Option<AqmConfig>, ecn: bool, secs: u64) -> Run {
    // CUBIC (RFC 9438) without HyStart, so that it fills the DropTail
    // buffer; buffers far above the bandwidth-delay product.
    let tcp = TcpConfigJson {
        cc: "cubic".into(),
        rcv_buf: 64 << 20,
        snd_buf: 64 << 20,
        ecn: if ecn { "on" } else { "off" }.into(),
        ..Default::default()
    };
    let cfg = SimConfig {
        name: "bufferbloat".into(),
        duration_ns: secs * 1000 * MS,
        seed: 1,
        sample_interval_ns: 0,
        trace: false,
        hops: vec![HopConfig::Link(LinkConfig {
            name: "bottleneck".into(),
            fwd: dir(aqm.clone(), 10_000_000),
            rev: dir(aqm, 10_000_000),
        })],
        flows: vec![FlowConfig {
            name: "cubic".into(),
            path: vec![0],
            start_ns: 0,
            tcp,
            app: AppConfig::Bulk { bytes: None },
        }],
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
            timeseries: false,
            events: false,
            spill_dir: None,
        },
    };
    tcplab_sim::validate::validate(&cfg).unwrap();
    let out: Output = Sim::new(cfg).unwrap().run(None).unwrap();
    let summary: serde_json::Value =
        serde_json::from_str(&out.summary.as_ref().unwrap().to_json()).unwrap();
    assert!(
        summary["invariants"]["violations"]
            .as_array()
            .unwrap()
            .is_empty(),
        "{}",
        summary["invariants"]
    );
    Run { summary }
}

#[test]
fn fq_codel_removes_the_bufferbloat_of_droptail() {
    let tail = bufferbloat(None, false, 30);
    let fq = bufferbloat(Some(aqm(r#"{"kind": "fq_codel"}"#)), false, 30);
    let drop = bufferbloat(Some(aqm(r#"{"kind": "droptail"}"#)), false, 30);
    eprintln!(
        "droptail fast path: ping median {:.1} ms, row {}",
        tail.ping_median_ms(),
        tail.fwd()
    );
    eprintln!(
        "droptail managed: ping median {:.1} ms, row {}",
        drop.ping_median_ms(),
        drop.fwd()
    );
    eprintln!(
        "fq_codel: ping median {:.1} ms, row {}, flow {}",
        fq.ping_median_ms(),
        fq.fwd(),
        fq.flow()
    );
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
    // fq_codel: the ping (its own flow queue) waits ≤ 15 ms at the median;
    // the flow's own packets about CoDel's target, 15 ms at the median
    // with the slow-start overshoot included.
    assert!(fq.ping_median_ms() - 100.0 <= 15.0);
    assert!(fq.fwd()["sojourn_p50_ms"].as_f64().unwrap() <= 20.0);
    assert!(fq.fwd()["drops_aqm"].as_u64().unwrap() > 0);
    // Goodput: 7.5 of 10 Mbit/s over the 30 s (the drops cost CUBIC more
    // than the 85 % the target asks; docs/aqm.md).
    assert!(fq.flow()["goodput_bps"].as_f64().unwrap() >= 0.7 * 10e6);
}

#[test]
fn with_ecn_fq_codel_marks_instead_of_dropping() {
    let fq = bufferbloat(Some(aqm(r#"{"kind": "fq_codel"}"#)), true, 30);
    eprintln!(
        "fq_codel+ecn: ping median {:.1} ms, row {}, flow {}",
        fq.ping_median_ms(),
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
    // 8.49 of 10 Mbit/s over the 30 s, slow start included.
    assert!(fq.flow()["goodput_bps"].as_f64().unwrap() >= 0.84 * 10e6);
}
