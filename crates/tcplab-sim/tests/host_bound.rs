//! A bulk transfer through the end-host component never exceeds the thesis
//! bound MTU/d (eq. 3.44/3.50) and comes within 10 % of it where the bound is
//! tight: small RTT, window not limiting, no loss (Ito's thesis §3.3).

use tcplab_sim::config::{example_p2p, HopConfig, HostConfig, SimConfig};
use tcplab_sim::Sim;

fn host(toe: bool) -> HostConfig {
    // Fig. 3.9 (non-TOE) and Fig. 3.10 (TOE) host values.
    HostConfig {
        name: "rx-host".into(),
        b_fsb_bps: if toe { 12_000_000_000 } else { 6_500_000_000 },
        b_pci_bps: if toe { 2_500_000_000 } else { 1_000_000_000 },
        f_toe_bps: toe.then_some(32_000_000_000),
        t_l_ns: if toe { 100 } else { 1200 },
        nic_rate_bps: Some(1_000_000_000),
        backlog: 1000,
        feedback: true,
        train: 10,
    }
}

fn scenario(mtu: u32, toe: bool, rcv_pkts: u64) -> SimConfig {
    let mut cfg = example_p2p(300_000_000, 0.0);
    let HopConfig::Link(l) = &mut cfg.hops[0] else {
        unreachable!()
    };
    for d in [&mut l.fwd, &mut l.rev] {
        d.rate_bps = 1_000_000_000;
        d.delay_ns = 25_000; // LAN: ping RTT ≈ 0.1 ms
        d.queue = tcplab_sim::config::QueueConfig::Packets { limit: 1000 };
    }
    cfg.hops.push(HopConfig::Host(host(toe)));
    let f = &mut cfg.flows[0];
    f.path = vec![0, 1];
    f.tcp.timestamps = false; // IP datagram = MSS + 40 = MTU
    f.tcp.mss = mtu - 40;
    f.tcp.rcv_buf = rcv_pkts * (mtu as u64 - 40);
    f.tcp.initial_window_bytes = 10 * (mtu as u64 - 40);
    cfg
}

/// (simulated IP-level throughput, thesis bound MTU/d), bit/s.
fn run(mtu: u32, toe: bool, rcv_pkts: u64) -> (f64, f64, serde_json::Value) {
    let cfg = scenario(mtu, toe, rcv_pkts);
    let HopConfig::Host(hc) = &cfg.hops[1] else {
        unreachable!()
    };
    let d = tcplab_sim::host::HostHop::new(hc).service(mtu) as f64 * 1e-9;
    let out = Sim::new(cfg).unwrap().run(None).unwrap();
    let s = out.summary.as_ref().unwrap();
    assert!(s.violations.is_empty(), "{:?}", s.violations);
    let f = &s.flows[0];
    let ip = f.goodput_bps * mtu as f64 / (mtu - 40) as f64;
    (ip, mtu as f64 * 8.0 / d, s.hops[2].clone())
}

#[test]
fn simulated_transfer_is_bounded_by_the_host_and_tight() {
    for toe in [false, true] {
        for mtu in [1500u32, 4000, 9000] {
            let (sim, bound, hop) = run(mtu, toe, 64);
            eprintln!("toe={toe} mtu={mtu}: sim {sim:.4e} bound {bound:.4e} {hop}");
            assert!(sim <= bound, "toe={toe} mtu={mtu}: {sim} > bound {bound}");
            assert!(
                sim >= 0.9 * bound,
                "toe={toe} mtu={mtu}: {sim} < 90 % of bound {bound}"
            );
            assert_eq!(hop["drops_queue"], 0);
            // the trains report the host's delivery rate
            assert!(hop["trains"].as_u64().unwrap() > 100);
        }
    }
}

#[test]
fn small_window_stays_below_the_bound() {
    // cwnd limited to 2 packets: the window term dominates, far below MTU/d
    let (sim, bound, _) = run(1500, false, 2);
    assert!(sim < 0.8 * bound, "{sim} vs {bound}");
}
