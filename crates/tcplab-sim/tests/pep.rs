//! End-to-end tests of the spoofing PEP (`pep.rs`) on the satellite setting of
//! Yagiu & Tanaka 2001 §3.2.2, at reduced scale where possible.

use tcplab_sim::config::*;
use tcplab_sim::{Output, Sim, EVENT_KIND_NAMES};

const MS: u64 = 1_000_000;

fn link(name: &str, rate: u64, delay: u64, loss: LossConfig) -> HopConfig {
    let d = LinkDirConfig {
        rate_bps: rate,
        delay_ns: delay,
        queue: QueueConfig::Packets { limit: 1000 },
        loss,
        overhead_bytes: 0,
        bits_per_byte: 8,
        reorder: None,
        outages_ns: Vec::new(),
        stalls_ns: Vec::new(),
        aqm: None,
        delay_trace: None,
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
        spurious_detection: "none".into(),
        syn_retries: 7,
        synack_retries: 7,
        retries2: 15,
    })
}

/// The paper's sender: Reno, IW 1, 64 KB window, fixed 500 ms RTO, MSS 1460.
fn paper_tcp() -> TcpConfigJson {
    let mut t = TcpConfigJson {
        cc: "reno".into(),
        sack: false,
        dsack: false,
        timestamps: false,
        window_scaling: false,
        mss: 1460,
        rcv_buf: 65535,
        snd_buf: 1 << 22,
        initial_window_bytes: 1460,
        max_cwnd: Some(65535),
        limited_transmit: false,
        ca_at_ssthresh: true,
        ..TcpConfigJson::default()
    };
    t.rto.initial_ns = 500 * MS;
    t.rto.min_ns = 500 * MS;
    t.rto.max_ns = 500 * MS;
    t.rto.max_backoff = 0;
    t.ack.every_n = 1;
    t.ack.max_delay_ns = 0;
    t
}

struct Run {
    summary: serde_json::Value,
    /// Sender-side throughput (first data segment to all data acknowledged), bit/s.
    sender_bps: f64,
}

fn run(hops: Vec<HopConfig>, bytes: u64, secs: u64, seed: u64) -> Run {
    let n = hops.len();
    let cfg = SimConfig {
        name: "pep-test".into(),
        duration_ns: secs * 1000 * MS,
        seed,
        sample_interval_ns: 0,
        trace: false,
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
        pings: vec![],
        record: Default::default(),
    };
    let out: Output = Sim::new(cfg).unwrap().run(None).unwrap();
    let kind = EVENT_KIND_NAMES
        .iter()
        .position(|k| *k == "sender_acked")
        .unwrap() as u8;
    let k = out.ev_kind.iter().position(|&x| x == kind);
    let sender_bps = k.map_or(0.0, |k| bytes as f64 * 8.0 / out.ev_value[k]);
    let summary = serde_json::from_str(&out.summary.as_ref().unwrap().to_json()).unwrap();
    Run {
        summary,
        sender_bps,
    }
}

fn pep_row(s: &serde_json::Value) -> &serde_json::Value {
    s["links"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["kind"] == "pep")
        .unwrap()
}

fn assert_clean(s: &serde_json::Value) {
    assert!(
        s["invariants"]["violations"].as_array().unwrap().is_empty(),
        "{}",
        s["invariants"]
    );
}

/// The paper's headline: 1 MB over 1 Mbps / 540 ms, without spoofing < 5% of
/// the link rate, with spoofing > 80%, ratio >= 15x (Yagiu 2001 §4.2).
#[test]
fn spoofing_beats_plain_tcp_on_geo() {
    let sat = || link("sat", 1_000_000, 270 * MS, LossConfig::None);
    let acc = || link("access", 1_000_000, 0, LossConfig::None);
    let size = 1_000_000;
    let plain = run(vec![acc(), sat()], size, 2000, 1);
    let spoof = run(vec![acc(), pep(1 << 20), sat()], size, 2000, 1);
    assert_clean(&plain.summary);
    assert_clean(&spoof.summary);
    let (p, s) = (plain.sender_bps / 1e6, spoof.sender_bps / 1e6);
    eprintln!(
        "1 MB: plain {:.2}%, spoofing {:.1}%, ratio {:.1}x",
        p * 100.0,
        s * 100.0,
        s / p
    );
    assert!(p < 0.05, "plain TCP at {:.1}% of the link", p * 100.0);
    assert!(s > 0.80, "spoofing at {:.1}% of the link", s * 100.0);
    assert!(s / p >= 15.0, "ratio {:.1}", s / p);
    for r in [&plain, &spoof] {
        assert_eq!(r.summary["flows"][0]["bytes_delivered"], size);
    }
    assert!(pep_row(&spoof.summary)["pseudo_acks"].as_u64().unwrap() >= 685);
}

/// Segments dropped on the satellite hop and on the
/// sender–router hop; every byte reaches the receiver exactly once (the
/// engine checks in-order, once-only delivery against ground truth, and that
/// a transfer acknowledged in full was delivered in full).
#[test]
fn losses_on_both_sides_of_the_pep_deliver_every_byte_once() {
    let size = 300_000;
    let mut local = 0;
    let mut sender_rtx = 0;
    for seed in 1..=4 {
        let hops = vec![
            HopConfig::Dropper(DropperConfig {
                name: "err".into(),
                data_segments: vec![11, 40],
            }),
            link("access", 1_000_000, 0, LossConfig::Bernoulli { p: 0.02 }),
            pep(64 * 1024),
            link(
                "sat",
                1_000_000,
                270 * MS,
                LossConfig::GilbertElliott {
                    p_gb: 0.01,
                    p_bg: 0.3,
                    loss_good: 0.01,
                    loss_bad: 1.0,
                },
            ),
        ];
        let r = run(hops, size, 3000, seed);
        let s = &r.summary;
        assert_clean(s);
        let f = &s["flows"][0];
        assert_eq!(f["bytes_delivered"], size, "seed {seed}: {f}");
        assert_eq!(f["connections_completed"], 1);
        let p = pep_row(s);
        assert_eq!(p["held_bytes_end"], 0);
        assert!(p["max_held_bytes"].as_u64().unwrap() <= 64 * 1024);
        eprintln!(
            "seed {seed}: pep local rtx {}, sender rtx {}",
            p["local_retransmits"], f["retransmitted_segments"]
        );
        local += p["local_retransmits"].as_u64().unwrap();
        sender_rtx += f["retransmitted_segments"].as_u64().unwrap();
    }
    assert!(local > 0, "the satellite hop lost segments the PEP resent");
    assert!(sender_rtx > 0, "the sender resent what the first hop lost");
}

/// The PEP with modern end hosts (SACK, timestamps, window scaling, IW 10,
/// CUBIC/NewReno), uploads and downloads (the receiver opens the connection),
/// losses on both sides: every byte arrives once and no invariant breaks.
#[test]
fn modern_hosts_and_downloads_through_the_pep() {
    for seed in 1..=6u64 {
        let n = 3;
        let cc = if seed % 2 == 0 { "cubic" } else { "newreno" };
        let tcp = TcpConfigJson {
            cc: cc.into(),
            ..TcpConfigJson::default()
        };
        let app = if seed % 3 == 0 {
            AppConfig::Downloads {
                sizes: Dist::Uniform {
                    lo: 1.0,
                    hi: 300_000.0,
                },
                think_ns: Dist::Const { value: 1e9 },
                count: Some(4),
            }
        } else {
            AppConfig::Bulk {
                bytes: Some(500_000),
            }
        };
        let cfg = SimConfig {
            name: "pep-modern".into(),
            duration_ns: 3_000_000 * MS,
            seed,
            sample_interval_ns: 0,
            trace: false,
            hops: vec![
                link(
                    "access",
                    10_000_000,
                    5 * MS,
                    LossConfig::Bernoulli { p: 0.01 },
                ),
                pep(256 * 1024),
                link(
                    "sat",
                    2_000_000,
                    270 * MS,
                    LossConfig::Bernoulli { p: 0.02 },
                ),
            ],
            flows: vec![FlowConfig {
                name: "f".into(),
                path: (0..n).collect(),
                start_ns: 0,
                tcp,
                app,
            }],
            cross: vec![],
            pcap: vec![],
            pings: vec![],
            record: Default::default(),
        };
        let out = Sim::new(cfg).unwrap().run(None).unwrap();
        let s: serde_json::Value =
            serde_json::from_str(&out.summary.as_ref().unwrap().to_json()).unwrap();
        assert_clean(&s);
        let f = &s["flows"][0];
        assert_eq!(f["bytes_delivered"], f["bytes_written"], "seed {seed}: {f}");
        assert_eq!(
            f["connections_completed"], f["connections"],
            "seed {seed}: {f}"
        );
        let p = pep_row(&s);
        assert!(p["pseudo_acks"].as_u64().unwrap() > 0, "seed {seed}");
        assert_eq!(p["held_bytes_end"], 0);
    }
}

/// The satellite hop goes dark for good after 3 s: the PEP's own connection
/// toward the receiver gives up after its `retries2` (give_up.rs), and the
/// run's notes say why the bytes it had pseudo-acknowledged never arrived.
#[test]
fn a_pep_that_gives_up_is_in_the_runs_notes() {
    let mut pep_cfg = pep(1 << 20);
    if let HopConfig::Pep(p) = &mut pep_cfg {
        p.retries2 = 3;
    }
    let mut sat = link("sat", 1_000_000, 270 * MS, LossConfig::None);
    if let HopConfig::Link(l) = &mut sat {
        l.fwd.outages_ns = vec![(3000 * MS, 1_000_000 * MS)];
    }
    let r = run(
        vec![link("lan", 100_000_000, MS, LossConfig::None), pep_cfg, sat],
        2_000_000,
        60,
        1,
    );
    assert_clean(&r.summary);
    let notes: Vec<&str> = r.summary["invariants"]["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    assert!(
        notes.iter().any(|n| n
            .starts_with("pep: flow 0 conn 0: its connection toward the receiver gave up at ")
            && n.contains("(retries2 = 3 on the PEP)")),
        "{notes:?}"
    );
}
