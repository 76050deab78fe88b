//! Property tests: random paths, queues, loss processes and TCP settings;
//! every run must keep every invariant, and every finite transfer on a
//! path with moderate loss must deliver every byte exactly once.
//! Also: determinism (same seed ⇒ identical outputs; other seed ⇒ differs).

use tcplab_sim::config::*;
use tcplab_sim::rng::Rng;
use tcplab_sim::{Output, Sim};

fn coin(r: &mut Rng) -> bool {
    r.next_u64() & 1 == 0
}

fn pick<T: Copy>(r: &mut Rng, xs: &[T]) -> T {
    xs[(r.next_u64() % xs.len() as u64) as usize]
}

fn random_dir(r: &mut Rng, lossy: bool) -> LinkDirConfig {
    let rate = pick(r, &[64_000u64, 384_000, 1_000_000, 10_000_000, 100_000_000]);
    let loss = if !lossy {
        LossConfig::None
    } else {
        match r.next_u64() % 3 {
            0 => LossConfig::None,
            1 => LossConfig::Bernoulli {
                p: pick(r, &[0.001, 0.01, 0.03, 0.05]),
            },
            _ => LossConfig::GilbertElliott {
                p_gb: 0.01,
                p_bg: pick(r, &[0.2, 0.5]),
                loss_good: 0.0,
                loss_bad: pick(r, &[0.3, 0.8]),
            },
        }
    };
    LinkDirConfig {
        rate_bps: rate,
        delay_ns: pick(r, &[0u64, 1, 10, 50, 150, 300]) * 1_000_000,
        queue: if coin(r) {
            QueueConfig::Packets {
                limit: pick(r, &[2u32, 5, 20, 100, 1000]),
            }
        } else {
            QueueConfig::Bytes {
                limit: pick(r, &[3_000u64, 30_000, 300_000]),
            }
        },
        loss,
        overhead_bytes: pick(r, &[0u32, 2, 38]),
        bits_per_byte: pick(r, &[8u32, 10]),
        reorder: None,
        outages_ns: Vec::new(),
        stalls_ns: Vec::new(),
        aqm: None,
        delay_trace: None,
    }
}

/// Reordering and spurious-fast-retransmit undo, drawn from their own stream
/// so the rest of each random configuration stays as it was.
fn add_reordering(seed: u64, c: &mut SimConfig) {
    let mut r = Rng::stream(seed, "property-reorder");
    for h in &mut c.hops {
        if let HopConfig::Link(l) = h {
            for d in [&mut l.fwd, &mut l.rev] {
                if r.next_u64().is_multiple_of(3) {
                    d.reorder = Some(ReorderConfig {
                        p: pick(&mut r, &[0.005, 0.02, 0.1]),
                        extra_ns: pick(&mut r, &[1u64, 5, 30]) * 1_000_000,
                    });
                }
            }
        }
    }
    let t = &mut c.flows[0].tcp;
    let mut fr = vec!["none"];
    if t.timestamps {
        fr.push("eifel");
    }
    if t.sack && t.dsack {
        fr.push("dsack");
    }
    t.spurious_fr = pick(&mut r, &fr).to_string();
    t.spurious_fr_response = pick(&mut r, &["eifel", "undo", "none"]).to_string();
}

fn random_config(seed: u64) -> SimConfig {
    let mut r = Rng::stream(seed, "property-config");
    let hops = 1 + (r.next_u64() % 3) as usize;
    let links: Vec<LinkConfig> = (0..hops)
        .map(|i| LinkConfig {
            name: format!("l{i}"),
            fwd: random_dir(&mut r, true),
            rev: random_dir(&mut r, true),
        })
        .collect();
    let slowest = links
        .iter()
        .map(|l| l.fwd.rate_bps.min(l.rev.rate_bps * 20))
        .min()
        .unwrap();
    let mut tcp = TcpConfigJson {
        cc: pick(&mut r, &["reno", "newreno", "cubic"]).to_string(),
        sack: coin(&mut r),
        dsack: coin(&mut r),
        timestamps: coin(&mut r),
        window_scaling: coin(&mut r),
        mss: pick(&mut r, &[536u32, 1000, 1448]),
        ..TcpConfigJson::default()
    };
    tcp.rcv_buf = pick(&mut r, &[16_384u64, 65_535, 1 << 20]);
    tcp.ack.every_n = pick(&mut r, &[1u32, 2, 4]);
    tcp.initial_window_bytes = tcp.mss as u64 * pick(&mut r, &[1u64, 3, 10]);
    tcp.rto.min_ns = pick(&mut r, &[200u64, 1000]) * 1_000_000;
    // a size that finishes in well under the run length at the slowest rate
    let cap = (slowest / 8 * 20).max(2_000);
    let bytes = 1 + r.next_u64() % cap.min(3_000_000);
    let app = if r.next_u64().is_multiple_of(3) {
        AppConfig::Downloads {
            sizes: Dist::Uniform {
                lo: 1.0,
                hi: (cap.min(200_000)) as f64,
            },
            think_ns: Dist::Exponential { mean: 1e9 },
            count: Some(3),
        }
    } else {
        AppConfig::Bulk { bytes: Some(bytes) }
    };
    let mut cfg = SimConfig {
        name: format!("prop-{seed}"),
        duration_ns: 3_000_000_000_000,
        seed,
        sample_interval_ns: 1_000_000_000,
        trace: false,
        hops: links.into_iter().map(HopConfig::Link).collect(),
        flows: vec![FlowConfig {
            name: "f".into(),
            path: (0..hops).collect(),
            start_ns: 0,
            tcp,
            app,
        }],
        cross: vec![],
        pcap: vec![],
        pings: vec![],
        record: Default::default(),
    };
    add_reordering(seed, &mut cfg);
    cfg
}

fn lossless(c: &SimConfig) -> bool {
    c.hops.iter().all(|h| {
        let HopConfig::Link(l) = h else {
            return false;
        };
        let heavy = |d: &LinkDirConfig| match d.loss {
            LossConfig::None => false,
            LossConfig::Bernoulli { p } => p > 0.03,
            LossConfig::GilbertElliott { .. } => true,
        };
        !heavy(&l.fwd) && !heavy(&l.rev)
    })
}

#[test]
fn random_paths_keep_invariants_and_deliver_everything() {
    let mut checked_complete = 0;
    for seed in 0..300u64 {
        let cfg = random_config(seed);
        let moderate = lossless(&cfg);
        let out = Sim::new(cfg.clone()).unwrap().run(None).unwrap();
        let s = out.summary.as_ref().unwrap();
        assert!(
            s.violations.is_empty(),
            "seed {seed}: {:?}\n{cfg:#?}",
            s.violations
        );
        let f = &s.flows[0];
        assert!(f.bytes_delivered <= f.bytes_written, "seed {seed}");
        if moderate {
            // every finite transfer completes: every byte delivered exactly once
            assert!(
                s.notes.is_empty() && f.bytes_delivered == f.bytes_written,
                "seed {seed}: {} of {} delivered; notes {:?}\n{cfg:#?}",
                f.bytes_delivered,
                f.bytes_written,
                s.notes
            );
            checked_complete += 1;
        }
    }
    assert!(
        checked_complete > 40,
        "only {checked_complete} runs checked for completion"
    );
}

fn columns(o: &Output) -> Vec<Vec<u8>> {
    fn b<T: std::fmt::Debug>(v: &[T]) -> Vec<u8> {
        format!("{v:?}").into_bytes()
    }
    vec![
        b(&o.ts_t),
        b(&o.ts_cwnd),
        b(&o.ts_srtt),
        b(&o.ts_delivered),
        b(&o.ev_t),
        b(&o.ev_kind),
        b(&o.ev_seq),
        b(&o.ev_spurious),
        o.summary.as_ref().unwrap().to_json().into_bytes(),
    ]
}

#[test]
fn same_seed_same_output_other_seed_differs() {
    let mut cfg = example_p2p(60_000_000_000, 0.01);
    let a = Sim::new(cfg.clone()).unwrap().run(None).unwrap();
    let b = Sim::new(cfg.clone()).unwrap().run(None).unwrap();
    assert_eq!(columns(&a), columns(&b));
    cfg.seed = 2;
    let c = Sim::new(cfg).unwrap().run(None).unwrap();
    assert_ne!(columns(&a)[4], columns(&c)[4]);
}

/// More than 2^32 bytes through one connection: 32-bit sequence numbers
/// wrap (at least once, whatever the ISN) and nothing breaks.
#[test]
fn sequence_wrap_long_transfer() {
    let mut cfg = example_p2p(60_000_000_000, 0.000001);
    let HopConfig::Link(l) = &mut cfg.hops[0] else {
        unreachable!("example_p2p has one link")
    };
    for d in [&mut l.fwd, &mut l.rev] {
        d.rate_bps = 1_000_000_000;
        d.delay_ns = 5_000_000;
        d.queue = QueueConfig::Packets { limit: 1000 };
    }
    cfg.flows[0].app = AppConfig::Bulk {
        bytes: Some(4_500_000_000),
    };
    let out = Sim::new(cfg).unwrap().run(None).unwrap();
    let s = out.summary.unwrap();
    assert!(s.violations.is_empty(), "{:?}", s.violations);
    assert_eq!(s.flows[0].bytes_delivered, 4_500_000_000, "{:?}", s.notes);
    assert!(s.flows[0].retransmitted_segments > 0);
}
