//! A reordering link end to end: a fraction of the data packets is held back
//! so that later ones overtake them, which makes the sender fast-retransmit
//! segments that were never lost. With a spurious-fast-retransmit detector
//! and an undo the transfer is faster at the same seed; every byte is
//! delivered once (the invariant checker runs on every run), and the
//! detector flags only fast retransmits that were spurious by ground truth.

use tcplab_sim::config::*;
use tcplab_sim::output::EventKind;
use tcplab_sim::{Output, Sim};

const NS_PER_MS: u64 = 1_000_000;

fn reorder_path(p: f64, extra_ms: u64, loss: f64, det: &str, resp: &str) -> SimConfig {
    let mut c = example_p2p(60_000 * NS_PER_MS, loss);
    let HopConfig::Link(l) = &mut c.hops[0] else {
        unreachable!()
    };
    l.fwd.reorder = Some(ReorderConfig {
        p,
        extra_ns: extra_ms * NS_PER_MS,
    });
    let t = &mut c.flows[0].tcp;
    t.spurious_fr = det.into();
    t.spurious_fr_response = resp.into();
    c
}

fn run(c: SimConfig) -> Output {
    let out = Sim::new(c).unwrap().run(None).unwrap();
    let s = out.summary.as_ref().unwrap();
    assert!(s.violations.is_empty(), "{:?}", s.violations);
    out
}

/// (fast retransmits, spurious by ground truth, detected, detected but genuine).
fn fr_rows(out: &Output) -> (usize, usize, usize, usize) {
    let mut n = (0, 0, 0, 0);
    for i in 0..out.ev_kind.len() {
        if out.ev_kind[i] == EventKind::FastRetransmit as u8 {
            n.0 += 1;
            n.1 += (out.ev_spurious[i] == 1) as usize;
            n.2 += (out.ev_detected[i] == 1) as usize;
            n.3 += (out.ev_detected[i] == 1 && out.ev_spurious[i] != 1) as usize;
        }
    }
    n
}

fn flow(out: &Output) -> &tcplab_sim::output::FlowSummary {
    &out.summary.as_ref().unwrap().flows[0]
}

#[test]
fn undo_raises_goodput_on_a_reordering_path_and_flags_only_spurious_ones() {
    // 1% of the data packets arrive 10 ms late on a 10 Mbit/s, 100 ms RTT path.
    let base = run(reorder_path(0.01, 10, 0.0, "none", "eifel"));
    let b = flow(&base);
    assert!(b.fast_retransmits > 10, "{}", b.fast_retransmits);
    // Nothing is lost: every fast retransmit is spurious by ground truth.
    assert_eq!(b.spurious_fast_retransmits, b.fast_retransmits);
    assert_eq!((b.spurious_fr_detected, b.fr_undone), (0, 0));
    for (det, resp) in [
        ("eifel", "eifel"),
        ("eifel", "undo"),
        ("dsack", "eifel"),
        ("dsack", "undo"),
    ] {
        let out = run(reorder_path(0.01, 10, 0.0, det, resp));
        let f = flow(&out);
        let (n, spurious, detected, false_alarms) = fr_rows(&out);
        assert_eq!(n as u64, f.fast_retransmits, "{det}/{resp}");
        assert_eq!(spurious as u64, f.spurious_fast_retransmits, "{det}/{resp}");
        assert_eq!(detected as u64, f.spurious_fr_detected, "{det}/{resp}");
        assert_eq!(false_alarms, 0, "{det}/{resp}");
        assert!(f.spurious_fr_detected <= f.spurious_fast_retransmits);
        assert!(
            f.spurious_fr_detected * 10 >= f.spurious_fast_retransmits * 9,
            "{det}/{resp}: detected {} of {}",
            f.spurious_fr_detected,
            f.spurious_fast_retransmits
        );
        assert_eq!(f.fr_undone, f.spurious_fr_detected, "{det}/{resp}");
        assert!(
            f.goodput_bps > 2.0 * b.goodput_bps,
            "{det}/{resp}: {} vs {}",
            f.goodput_bps,
            b.goodput_bps
        );
    }
    // Detection without a response changes nothing but the counters.
    let det_only = run(reorder_path(0.01, 10, 0.0, "eifel", "none"));
    let d = flow(&det_only);
    assert_eq!(d.goodput_bps, b.goodput_bps);
    assert_eq!(d.spurious_fr_detected, d.fast_retransmits);
    assert_eq!(d.fr_undone, 0);
}

#[test]
fn with_real_loss_too_genuine_fast_retransmits_are_never_flagged() {
    for det in ["eifel", "dsack"] {
        let out = run(reorder_path(0.01, 10, 0.001, det, "undo"));
        let f = flow(&out);
        let (_, spurious, detected, false_alarms) = fr_rows(&out);
        // Some fast retransmits repair real losses...
        assert!(f.fast_retransmits > f.spurious_fast_retransmits, "{det}");
        // ...and none of those is flagged.
        assert_eq!(false_alarms, 0, "{det}");
        assert!(detected <= spurious, "{det}");
        assert!(f.spurious_fr_detected > 0, "{det}");
    }
}

#[test]
fn reordered_packets_are_counted_and_the_default_path_draws_nothing() {
    let out = run(reorder_path(0.01, 10, 0.0, "none", "eifel"));
    let links = &out.summary.as_ref().unwrap().hops;
    let fwd = links[0]["reordered"].as_u64().unwrap();
    let tx = links[0]["tx_packets"].as_u64().unwrap();
    assert!(
        fwd > 0 && (fwd as f64 / tx as f64 - 0.01).abs() < 0.003,
        "{fwd}/{tx}"
    );
    assert_eq!(links[1]["reordered"].as_u64(), Some(0));
    // Reordering off: the run is the canonical one, bit for bit.
    let plain = run(example_p2p(60_000 * NS_PER_MS, 0.0));
    let mut c = reorder_path(0.01, 10, 0.0, "none", "eifel");
    let HopConfig::Link(l) = &mut c.hops[0] else {
        unreachable!()
    };
    l.fwd.reorder = None;
    let off = run(c);
    assert_eq!(flow(&off).goodput_bps, flow(&plain).goodput_bps);
    assert_eq!(off.ev_t, plain.ev_t);
}
