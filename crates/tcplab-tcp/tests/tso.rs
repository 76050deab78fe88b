//! `tso_model = Linux` end to end: new data leaves in skbs of
//! `tcp_tso_autosize` segments whose segments go back to back, a one-segment
//! opening is held back (`tcp_tso_should_defer`) while the next ACK is due,
//! and every byte still arrives once.

mod harness;

use harness::{cfg, Net};
use std::collections::BTreeMap;
use tcplab_tcp::config::CcKind;
use tcplab_tcp::tso::TsoKind;
use tcplab_tcp::{Config, NS_PER_MS, NS_PER_S};

const MSS: u64 = 1448;
const TOTAL: u64 = 4_000_000;

struct Outcome {
    delivered: u64,
    deferrals: Option<u64>,
    /// New data segments sent at one instant, by count (instants).
    groups: BTreeMap<usize, usize>,
}

/// A Reno sender, 10 Mb/s each way, 2 ms one way: ACKs of two segments come
/// 2.3 ms apart, a per-segment ACK (the receiver's quick-ACK start) 1.2 ms.
fn run(model: TsoKind) -> Outcome {
    let sender = Config {
        mss: MSS as u32,
        initial_window: 10 * MSS,
        cc: CcKind::parse("reno").unwrap(),
        tso_model: model,
        ..cfg()
    };
    let receiver = Config {
        mss: MSS as u32,
        rcv_buf: 8 << 20,
        ..cfg()
    };
    let mut n = Net::new(sender, receiver);
    n.ab.delay = 2 * NS_PER_MS;
    n.ba.delay = 2 * NS_PER_MS;
    n.a.app_supply(TOTAL);
    n.a.close();
    n.run_until(20 * NS_PER_S);
    let mut at: BTreeMap<u64, usize> = BTreeMap::new();
    let mut seen = std::collections::HashSet::new();
    for s in n.data_sent() {
        if seen.insert(s.off) {
            *at.entry(s.t).or_default() += 1;
        }
    }
    let mut groups = BTreeMap::new();
    for c in at.values() {
        *groups.entry(*c).or_default() += 1;
    }
    Outcome {
        delivered: n.b.stats().bytes_read,
        deferrals: n.a.tso_deferrals(),
        groups,
    }
}

#[test]
fn linux_skbs_defer_one_segment_openings_and_deliver_everything() {
    let none = run(TsoKind::None);
    let linux = run(TsoKind::Linux);
    assert_eq!(none.delivered, TOTAL, "every byte delivered once");
    assert_eq!(linux.delivered, TOTAL, "every byte delivered once");
    assert_eq!(none.deferrals, None);
    let deferrals = linux.deferrals.expect("the Linux transmit path runs");
    assert!(deferrals > 0, "a one-segment opening was held back");
    // Without the model each ACK of two segments releases three (cwnd grows
    // by one per round in congestion avoidance). With it, an ACK sends one
    // 2-segment skb and holds the third segment, and the next ACK releases it
    // with its own: four at once.
    let at = |o: &Outcome, k: usize| o.groups.get(&k).copied().unwrap_or(0);
    assert_eq!(at(&none, 4), 0, "{:?}", none.groups);
    assert!(at(&linux, 4) * 2 > at(&linux, 3), "{:?}", linux.groups);
    assert_eq!(
        at(&linux, 1),
        0,
        "a held segment never leaves alone: {:?}",
        linux.groups
    );
}
