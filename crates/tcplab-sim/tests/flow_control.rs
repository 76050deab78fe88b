//! A slow receiving application end to end: the reader's rate, not the
//! link's, sets the goodput; the invariants hold (every byte delivered
//! once, packets conserved); an ACK path that loses window updates does not
//! stall the transfer.

use tcplab_sim::config::*;
use tcplab_sim::output::FlowSummary;
use tcplab_sim::{Output, Sim};

const NS_PER_S: u64 = 1_000_000_000;

fn slow_reader(read_bps: u64, rcv_buf: u64, loss: f64, bytes: Option<u64>) -> SimConfig {
    let mut c = example_p2p(30 * NS_PER_S, loss);
    let f = &mut c.flows[0];
    f.tcp.read_rate_bps = Some(read_bps);
    f.tcp.rcv_buf = rcv_buf;
    if let Some(n) = bytes {
        f.app = AppConfig::Bulk { bytes: Some(n) };
    }
    c
}

fn run(c: SimConfig) -> Output {
    let out = Sim::new(c).unwrap().run(None).unwrap();
    let s = out.summary.as_ref().unwrap();
    assert!(s.violations.is_empty(), "{:?}", s.violations);
    out
}

fn flow(out: &Output) -> &FlowSummary {
    &out.summary.as_ref().unwrap().flows[0]
}

#[test]
fn the_reader_sets_the_goodput() {
    // 10 Mbit/s path, a 2 Mbit/s reader: goodput ≈ 2 Mbit/s, not 10.
    let out = run(slow_reader(2_000_000, 64 << 10, 0.0, None));
    let f = flow(&out);
    assert!(
        (f.goodput_bps - 2e6).abs() < 0.03 * 2e6,
        "goodput {}",
        f.goodput_bps
    );
    assert_eq!(f.timeouts, 0);
    // and without the limit the same path runs near its rate
    let mut c = slow_reader(2_000_000, 64 << 10, 0.0, None);
    c.flows[0].tcp.read_rate_bps = None;
    c.flows[0].tcp.rcv_buf = 4 << 20;
    assert!(flow(&run(c)).goodput_bps > 8e6);
}

#[test]
fn lost_window_updates_do_not_stall_the_transfer() {
    // A reader at 100 kbit/s keeps a 16 KB window nearly closed, and the ACK
    // path loses packets in bursts (Gilbert–Elliott, ~3 ACKs per burst), so
    // window updates are lost: the updates the receiver sends as the window
    // keeps doubling (and the RTO for data in flight) restart the sender.
    // The persist timer's own case, a zero window with nothing in flight,
    // is in tcplab-tcp's tests/window.rs.
    for seed in 1..=6 {
        let mut c = slow_reader(100_000, 16 << 10, 0.0, Some(100_000));
        c.seed = seed;
        if let HopConfig::Link(l) = &mut c.hops[0] {
            l.rev.loss = LossConfig::GilbertElliott {
                p_gb: 0.05,
                p_bg: 0.3,
                loss_good: 0.0,
                loss_bad: 1.0,
            };
        }
        c.duration_ns = 300 * NS_PER_S;
        let out = run(c);
        let f = flow(&out);
        assert_eq!(f.bytes_delivered, 100_000, "seed {seed}: stalled");
        assert!(f.window_updates > 0, "seed {seed}");
    }
}
