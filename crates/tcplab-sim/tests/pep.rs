//! End-to-end tests of the spoofing PEP (`pep.rs`) on the satellite setting of
//! Yagiu & Tanaka 2001 §3.2.2, at reduced scale where possible.

use tcplab_sim::config::*;
use tcplab_sim::{Output, Sim};

const MS: u64 = 1_000_000;

fn link(name: &str, rate: u64, delay: u64, loss: LossConfig) -> HopConfig {
    let d = LinkDirConfig {
        rate_bps: rate,
        delay_ns: delay,
        queue: QueueConfig::Packets { limit: 1000 },
        loss,
        overhead_bytes: 0,
    };
    HopConfig::Link(LinkConfig {
        name: name.into(),
        fwd: d.clone(),
        rev: LinkDirConfig {
            loss: LossConfig::None,
            ..d
        },
    })
}

fn pep(buffer: u64) -> HopConfig {
    HopConfig::Pep(PepConfig {
        name: "pep".into(),
        buffer_bytes: buffer,
        cc: "newreno".into(),
        initial_window_segments: 10,
        rto_initial_ns: 1000 * MS,
        rto_min_ns: 1000 * MS,
        rto_max_ns: 60_000 * MS,
        series_interval_ns: 100 * MS,
    })
}

/// The paper's sender: Reno, IW 1, 64 KB window, fixed 500 ms RTO, MSS 1460.
fn paper_tcp() -> TcpConfigJson {
    let mut t = TcpConfigJson::default();
    t.cc = "reno".into();
    t.sack = false;
    t.dsack = false;
    t.timestamps = false;
    t.window_scaling = false;
    t.mss = 1460;
    t.rcv_buf = 65535;
    t.snd_buf = 1 << 22;
    t.initial_window_bytes = 1460;
    t.max_cwnd = Some(65535);
    t.limited_transmit = false;
    t.rto.initial_ns = 500 * MS;
    t.rto.min_ns = 500 * MS;
    t.rto.max_ns = 500 * MS;
    t.max_backoff_fixed();
    t.ack.every_n = 1;
    t.ack.max_delay_ns = 0;
    t
}

trait Fixed {
    fn max_backoff_fixed(&mut self);
}
impl Fixed for TcpConfigJson {
    fn max_backoff_fixed(&mut self) {
        self.rto.max_backoff = 0;
    }
}

fn run(hops: Vec<HopConfig>, bytes: u64, secs: u64) -> serde_json::Value {
    let n = hops.len();
    let cfg = SimConfig {
        name: "pep-test".into(),
        duration_ns: secs * 1000 * MS,
        seed: 7,
        sample_interval_ns: 0,
        hops,
        flows: vec![FlowConfig {
            name: "f".into(),
            path: (0..n).collect(),
            start_ns: 0,
            tcp: paper_tcp(),
            app: AppConfig::Bulk { bytes: Some(bytes) },
        }],
        cross: vec![],
        pcap: vec![],
    };
    let out: Output = Sim::new(cfg).unwrap().run(None).unwrap();
    serde_json::from_str(&out.summary.as_ref().unwrap().to_json()).unwrap()
}

#[test]
fn spoofing_beats_plain_tcp_on_geo() {
    let sat = || link("sat", 1_000_000, 270 * MS, LossConfig::None);
    let acc = || link("access", 1_000_000, 0, LossConfig::None);
    let plain = run(vec![acc(), sat()], 200_000, 600);
    let spoof = run(vec![acc(), pep(1 << 20), sat()], 200_000, 600);
    println!("{plain:#}\n{spoof:#}");
    panic!();
}
