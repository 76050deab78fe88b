//! Every congestion control in the registry (`tcplab_tcp::cc::REGISTRY`, so
//! a new one is tested here without editing this file) runs the same bulk
//! transfer over a bottleneck with a DropTail queue without invariant
//! violations and fills most of the link; the delay-based ones lose (far)
//! fewer packets than NewReno's sawtooth.

use tcplab_sim::config::{example_p2p, HopConfig, HostConfig, QueueConfig};
use tcplab_sim::Sim;

fn run(cc: &str) -> (f64, u64) {
    // (goodput bit/s, retransmitted segments)
    // 10 Mb/s, 50 ms one way, 100-packet queue; a fast receiving host that
    // feeds transit times back (bdp-tracking needs it; the others ignore it).
    let mut cfg = example_p2p(30_000_000_000, 0.0);
    let HopConfig::Link(l) = &mut cfg.hops[0] else {
        unreachable!()
    };
    l.fwd.queue = QueueConfig::Packets { limit: 100 };
    cfg.hops.push(HopConfig::Host(HostConfig {
        name: "rx".into(),
        b_fsb_bps: 100_000_000_000,
        b_pci_bps: 100_000_000_000,
        f_toe_bps: None,
        t_l_ns: 0,
        nic_rate_bps: None,
        backlog: 10_000,
        feedback: true,
        train: 10,
    }));
    let f = &mut cfg.flows[0];
    f.path = vec![0, 1];
    f.tcp.cc = cc.into();
    if tcplab_tcp::cc::find(cc).unwrap().target_rate {
        f.tcp.qos_target_bps = Some(TARGET_BPS);
    }
    if cc == "fast" {
        // the default α = 200 exceeds this 100-packet queue
        f.tcp.cc_params.insert("alpha".into(), 20.0);
    }
    f.tcp.timestamps = false; // µs-exact RTT samples for the delay-based controls
    let out = Sim::new(cfg).unwrap().run(None).unwrap();
    let s = out.summary.unwrap();
    assert!(s.violations.is_empty(), "{cc}: {:?}", s.violations);
    (s.flows[0].goodput_bps, s.flows[0].retransmitted_segments)
}

/// The target rate of a controller that needs one (QoS-TCP), bit/s: it must
/// hold at least that rate (its gentle 7/8 reduction overruns this queue,
/// so filling the link is not asked of it).
const TARGET_BPS: u64 = 4_000_000;

#[test]
fn every_registered_cc_fills_the_link() {
    let (_, reno_rtx) = run("newreno");
    assert!(tcplab_tcp::cc::REGISTRY.len() >= 8);
    for cc in tcplab_tcp::cc::REGISTRY.iter().map(|e| e.name) {
        let (gp, rtx) = run(cc);
        eprintln!("{cc}: goodput {gp:.3e} retransmitted {rtx} (newreno {reno_rtx})");
        if tcplab_tcp::cc::find(cc).unwrap().target_rate {
            let target = TARGET_BPS as f64;
            assert!(gp > 0.95 * target, "{cc}: goodput {gp}");
            continue;
        }
        assert!(gp > 7.5e6, "{cc}: goodput {gp}");
        if cc == "vegas" || cc == "bdp-tracking" || cc == "fast" {
            assert!(rtx * 4 < reno_rtx, "{cc}: {rtx} retransmissions");
        }
    }
}
