//! `tso_model = Linux` end to end: new data leaves in skbs of
//! `tcp_tso_autosize` segments whose segments go back to back, a one-segment
//! opening is held back (`tcp_tso_should_defer`) while the next ACK is due,
//! and every byte still arrives once.

mod harness;

use harness::{cfg, Net};
use std::collections::BTreeMap;
use tcplab_tcp::config::CcKind;
use tcplab_tcp::segment::Flags;
use tcplab_tcp::tso::TsoKind;
use tcplab_tcp::{Config, NS_PER_MS, NS_PER_S};

const MSS: u64 = 1448;
const TOTAL: u64 = 4_000_000;

struct Outcome {
    delivered: u64,
    /// Per instant with new data: (segments, positions in it that carry PSH).
    psh: Vec<(usize, Vec<usize>)>,
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
    let mut psh_at: BTreeMap<u64, Vec<usize>> = BTreeMap::new();
    let mut seen = std::collections::HashSet::new();
    // The end of the data carries PSH anyway (tcp_push): leave its instant out.
    let end_t = n
        .data_sent()
        .find(|s| s.off + s.len as u64 >= TOTAL)
        .map(|s| s.t);
    for s in n.data_sent().filter(|s| Some(s.t) != end_t) {
        if seen.insert(s.off) {
            let k = at.entry(s.t).or_default();
            if s.seg.flags.contains(Flags::PSH) {
                psh_at.entry(s.t).or_default().push(*k);
            }
            *k += 1;
        }
    }
    let psh = at
        .iter()
        .map(|(t, k)| (*k, psh_at.get(t).cloned().unwrap_or_default()))
        .collect();
    let mut groups = BTreeMap::new();
    for c in at.values() {
        *groups.entry(*c).or_default() += 1;
    }
    Outcome {
        psh,
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

#[test]
fn every_multi_segment_skb_ends_with_psh() {
    // __tcp_transmit_skb sets PSH on every skb of more than one segment; GSO
    // keeps it on the last. An instant's new segments are one or more skbs:
    // the last segment of several carries PSH, a lone one none; in steady
    // state (2-segment skbs at 10 Mb/s) every second one does.
    let none = run(TsoKind::None);
    assert!(
        none.psh.iter().all(|(_, p)| p.is_empty()),
        "no PSH without skbs"
    );
    let linux = run(TsoKind::Linux);
    let mut pairs = 0;
    for (k, p) in &linux.psh {
        assert_eq!(p.last().copied(), (*k > 1).then(|| k - 1), "{k}: {p:?}");
        if p.len() * 2 == *k && p.iter().enumerate().all(|(i, &x)| x == 2 * i + 1) {
            pairs += 1;
        }
    }
    assert!(
        pairs * 10 > linux.psh.len() * 9,
        "{pairs} of {}",
        linux.psh.len()
    );
}
