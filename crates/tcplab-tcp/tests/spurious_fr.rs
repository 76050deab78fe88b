//! Spurious fast retransmits on the two-endpoint harness: one data segment is
//! held back 15 ms (reordered, not lost) so that later segments overtake it,
//! the receiver sends three duplicate ACKs and the sender fast-retransmits a
//! segment that was never lost. Eifel detection (RFC 3522, timestamps) and
//! DSACK-based detection (RFC 3708) must flag it, and the response must
//! restore cwnd/ssthresh; a segment that is really lost must not be flagged.

mod harness;

use harness::{cfg, Net};
use tcplab_tcp::{Config, DetectorKind, Event, FrResponseKind, NS_PER_MS, NS_PER_S};

/// Offset of the segment that is delayed or dropped (the 40th, well into the
/// transfer so that cwnd is large enough for three dupacks).
const VICTIM: u64 = 1 + 40 * 1000;
const BYTES: u64 = 300_000;

fn fr_cfg(det: DetectorKind, resp: FrResponseKind, sack: bool) -> Config {
    let mut c = cfg();
    c.sack = sack;
    c.spurious_fr = det;
    c.spurious_fr_response = resp;
    c.initial_ssthresh = Some(30_000);
    c
}

/// Delay the first transmission of `VICTIM` by 15 ms (the RTT is 40 ms).
fn reordered(det: DetectorKind, resp: FrResponseKind, sack: bool) -> Net {
    let c = fr_cfg(det, resp, sack);
    let mut n = Net::new(c.clone(), c);
    n.a.app_supply(BYTES);
    n.a.close();
    n.extra_delay = Box::new(|s, prior| {
        if s.a_to_b && s.off == VICTIM && prior == 0 {
            15 * NS_PER_MS
        } else {
            0
        }
    });
    n.run_until(30 * NS_PER_S);
    assert_eq!(n.b.stats().bytes_delivered, BYTES);
    n
}

/// Drop the first transmission of `VICTIM`: a genuine loss.
fn lost(det: DetectorKind, resp: FrResponseKind, sack: bool) -> Net {
    let c = fr_cfg(det, resp, sack);
    let mut n = Net::new(c.clone(), c);
    n.a.app_supply(BYTES);
    n.a.close();
    n.drop = Box::new(|s, prior| s.a_to_b && s.off == VICTIM && prior == 0);
    n.run_until(30 * NS_PER_S);
    assert_eq!(n.b.stats().bytes_delivered, BYTES);
    n
}

/// (cwnd, ssthresh).
type Win = (u64, u64);

/// (cwnd, ssthresh) before the first fast retransmit's reduction, after it
/// (EnterRecovery) and after the detection (SpuriousFrDetected, with `undone`).
fn windows(n: &Net) -> (Win, Win, Option<(u64, u64, bool)>) {
    let mut before = None;
    let mut reduced = None;
    let mut after = None;
    for (_, e) in &n.events_a {
        match *e {
            Event::FastRetransmit { cwnd, ssthresh, .. } if before.is_none() => {
                before = Some((cwnd, ssthresh))
            }
            Event::EnterRecovery { cwnd, ssthresh, .. } if reduced.is_none() => {
                reduced = Some((cwnd, ssthresh))
            }
            Event::SpuriousFrDetected {
                cwnd,
                ssthresh,
                undone,
                ..
            } if after.is_none() => after = Some((cwnd, ssthresh, undone)),
            _ => {}
        }
    }
    (before.expect("no fast retransmit"), reduced.unwrap(), after)
}

fn fast_retransmits(n: &Net) -> usize {
    n.count_a(|e| matches!(e, Event::FastRetransmit { .. }))
}
fn detected(n: &Net) -> usize {
    n.count_a(|e| matches!(e, Event::SpuriousFrDetected { .. }))
}

/// Every detector that can judge a fast retransmit, with the SACK settings it runs with.
const CASES: [(DetectorKind, bool); 3] = [
    (DetectorKind::Eifel, true),
    (DetectorKind::Eifel, false),
    (DetectorKind::Dsack, true),
];

#[test]
fn without_a_detector_the_reordering_costs_a_reduction() {
    let n = reordered(DetectorKind::None, FrResponseKind::Eifel, true);
    assert_eq!(fast_retransmits(&n), 1);
    assert_eq!(detected(&n), 0);
    let (before, reduced, after) = windows(&n);
    assert!(reduced.1 < before.1, "{before:?} {reduced:?}");
    assert!(after.is_none());
    assert_eq!(n.a.stats().spurious_fr_detected, 0);
}

#[test]
fn a_reordered_segment_is_detected_and_the_reduction_undone() {
    for (det, sack) in CASES {
        for resp in [FrResponseKind::Eifel, FrResponseKind::Undo] {
            let n = reordered(det, resp, sack);
            let what = format!("{det:?} {resp:?} sack={sack}");
            assert_eq!(fast_retransmits(&n), 1, "{what}");
            assert_eq!(detected(&n), 1, "{what}");
            assert_eq!(n.a.stats().spurious_fr_detected, 1, "{what}");
            assert_eq!(n.a.stats().fr_undone, 1, "{what}");
            let (before, reduced, after) = windows(&n);
            let (cwnd, ssthresh, undone) = after.unwrap();
            assert!(undone, "{what}");
            assert!(reduced.1 < before.1, "{what}: {before:?} {reduced:?}");
            match resp {
                // Linux tcp_undo_cwnd_reduction: cwnd = max(cwnd, prior_cwnd),
                // ssthresh = prior_ssthresh.
                FrResponseKind::Undo => {
                    assert!(cwnd >= before.0, "{what}: {cwnd} < {}", before.0);
                    assert_eq!(ssthresh, before.1, "{what}");
                }
                // RFC 4015 §3.2 step (3): ssthresh = pipe_prev = max(FlightSize,
                // ssthresh) >= the old ssthresh; cwnd = FlightSize + min(acked, IW)
                // (never below the reduced cwnd).
                FrResponseKind::Eifel => {
                    assert!(ssthresh >= before.1, "{what}: {ssthresh} < {}", before.1);
                    assert!(cwnd >= reduced.0, "{what}: {cwnd} < {}", reduced.0);
                }
                FrResponseKind::None => unreachable!(),
            }
        }
    }
}

#[test]
fn eifel_decides_on_the_first_acceptable_ack_dsack_only_after_the_episode() {
    let t_of = |n: &Net, f: fn(&Event) -> bool| {
        n.events_a
            .iter()
            .find_map(|(t, e)| f(e).then_some(*t))
            .unwrap()
    };
    let is_fr = |e: &Event| matches!(e, Event::FastRetransmit { .. });
    let is_exit = |e: &Event| matches!(e, Event::ExitRecovery { .. });
    let is_det = |e: &Event| matches!(e, Event::SpuriousFrDetected { .. });
    // Eifel: the ACK of the delayed original arrives within one RTT, while
    // recovery is still under way; the undo ends recovery at that instant.
    let e = reordered(DetectorKind::Eifel, FrResponseKind::Undo, true);
    let (fr, det) = (t_of(&e, is_fr), t_of(&e, is_det));
    assert!(det > fr && det < fr + 40 * NS_PER_MS, "{fr} {det}");
    assert_eq!(t_of(&e, is_exit), det);
    // DSACK (RFC 3708 §3): only once the cumulative ACK passes `recover`
    // and the DSACK for the retransmission came back.
    let d = reordered(DetectorKind::Dsack, FrResponseKind::Undo, true);
    let (exit, det) = (t_of(&d, is_exit), t_of(&d, is_det));
    assert!(det >= exit, "{exit} {det}");
}

#[test]
fn a_lost_segment_is_not_flagged_and_nothing_is_undone() {
    for (det, sack) in CASES {
        for resp in [FrResponseKind::Eifel, FrResponseKind::Undo] {
            let n = lost(det, resp, sack);
            let what = format!("{det:?} {resp:?} sack={sack}");
            assert!(fast_retransmits(&n) >= 1, "{what}");
            assert_eq!(detected(&n), 0, "{what}");
            assert_eq!(n.a.stats().fr_undone, 0, "{what}");
        }
    }
}

#[test]
fn the_undo_finishes_the_transfer_sooner() {
    let done = |n: &Net| {
        n.events_a
            .iter()
            .find_map(|(t, e)| matches!(e, Event::Closed).then_some(*t))
            .unwrap_or(u64::MAX)
    };
    let base = reordered(DetectorKind::Eifel, FrResponseKind::None, true);
    // "none" detects but leaves the reduction in place.
    assert_eq!(base.a.stats().spurious_fr_detected, 1);
    assert_eq!(base.a.stats().fr_undone, 0);
    let undo = reordered(DetectorKind::Eifel, FrResponseKind::Undo, true);
    assert!(
        done(&undo) < done(&base),
        "undo {} vs none {}",
        done(&undo),
        done(&base)
    );
}
