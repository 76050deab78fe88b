//! Spurious-timeout detectors and responses on a two-endpoint harness:
//! a delay spike (the ACK path slows from 20 ms to 400 ms) makes the sender
//! time out although nothing was lost; a burst of losses makes a genuine one.

mod harness;

use harness::{cfg, Net};
use tcplab_tcp::{Config, DetectorKind, Event, ResponseKind, RtxReason, NS_PER_MS, NS_PER_S};

fn spike_cfg(det: DetectorKind, resp: ResponseKind) -> Config {
    let mut c = cfg();
    c.initial_window = 4_000;
    c.rto.min = 100 * NS_PER_MS;
    c.rto.initial = 100 * NS_PER_MS;
    c.spurious_detection = det;
    c.spurious_response = resp;
    c
}

/// Run a 40 KB transfer with a delay spike on the ACK path at 150 ms.
fn spike(det: DetectorKind, resp: ResponseKind, sack: bool) -> Net {
    let mut c = spike_cfg(det, resp);
    c.sack = sack;
    let mut n = Net::new(c.clone(), c);
    n.a.app_supply(40_000);
    n.a.close();
    n.run_until(150 * NS_PER_MS);
    n.ba.delay = 400 * NS_PER_MS;
    n.run_until(30 * NS_PER_S);
    assert_eq!(n.b.stats().bytes_delivered, 40_000);
    n
}

/// A genuine timeout: the second flight is lost entirely (first transmission).
fn genuine(det: DetectorKind, resp: ResponseKind, sack: bool) -> Net {
    let mut c = spike_cfg(det, resp);
    c.sack = sack;
    c.rto.min = 300 * NS_PER_MS;
    c.rto.initial = 300 * NS_PER_MS;
    let mut n = Net::new(c.clone(), c);
    n.a.app_supply(40_000);
    n.a.close();
    n.drop = Box::new(|s, prior| s.a_to_b && (4001..12001).contains(&s.off) && prior == 0);
    n.run_until(30 * NS_PER_S);
    assert_eq!(n.b.stats().bytes_delivered, 40_000);
    n
}

fn timeouts(n: &Net) -> usize {
    n.count_a(|e| matches!(e, Event::Timeout { .. }))
}
fn detected(n: &Net) -> usize {
    n.count_a(|e| matches!(e, Event::SpuriousDetected { .. }))
}
fn go_back_n(n: &Net) -> usize {
    n.count_a(|e| {
        matches!(
            e,
            Event::Retransmit {
                reason: RtxReason::AfterTimeout,
                ..
            }
        )
    })
}

#[test]
fn no_detector_goes_back_n_on_a_spike() {
    let n = spike(DetectorKind::None, ResponseKind::Eifel, true);
    assert!(timeouts(&n) >= 1);
    assert_eq!(detected(&n), 0);
    assert!(go_back_n(&n) >= 2, "go-back-N resent {}", go_back_n(&n));
}

/// Every detector, with and without SACK where it can run without it.
const DETECTOR_CASES: [(DetectorKind, bool); 7] = [
    (DetectorKind::Frto, true),
    (DetectorKind::Frto, false),
    (DetectorKind::FrtoBasic, true),
    (DetectorKind::FrtoLinux, true),
    (DetectorKind::FrtoLinux, false),
    (DetectorKind::Eifel, true),
    (DetectorKind::Dsack, true),
];

#[test]
fn every_detector_flags_the_spike() {
    for (det, sack) in DETECTOR_CASES {
        let n = spike(det, ResponseKind::Eifel, sack);
        assert!(timeouts(&n) >= 1, "{det:?}");
        assert_eq!(detected(&n), timeouts(&n), "{det:?} sack={sack}");
        assert_eq!(n.a.stats().spurious_detected as usize, detected(&n));
    }
}

#[test]
fn frto_and_eifel_avoid_go_back_n() {
    for det in [
        DetectorKind::Frto,
        DetectorKind::FrtoBasic,
        DetectorKind::FrtoLinux,
        DetectorKind::Eifel,
    ] {
        let n = spike(det, ResponseKind::Eifel, true);
        assert_eq!(go_back_n(&n), 0, "{det:?}");
        // Only the timeout retransmission itself was sent twice.
        assert_eq!(
            n.a.stats().retransmitted_segments as usize,
            timeouts(&n),
            "{det:?}"
        );
    }
}

#[test]
fn no_detector_declares_a_genuine_timeout_spurious() {
    for (det, sack) in DETECTOR_CASES {
        let n = genuine(det, ResponseKind::Eifel, sack);
        assert!(timeouts(&n) >= 1, "{det:?}");
        assert_eq!(detected(&n), 0, "{det:?} sack={sack}");
    }
}

/// cwnd right before the first timeout and right after the detection.
fn cwnd_around(n: &Net) -> (u64, u64, u64) {
    let before = n
        .events_a
        .iter()
        .find_map(|(_, e)| match e {
            Event::Timeout { cwnd, .. } => Some(*cwnd),
            _ => None,
        })
        .unwrap();
    // The sender's cwnd/ssthresh are read at the end; sample right after detection by
    // re-running up to the detection time.
    let t_det = n
        .events_a
        .iter()
        .find_map(|(t, e)| matches!(e, Event::SpuriousDetected { .. }).then_some(*t))
        .unwrap();
    (before, t_det, 0)
}

fn spike_until(det: DetectorKind, resp: ResponseKind, until: u64) -> Net {
    let c = spike_cfg(det, resp);
    let mut n = Net::new(c.clone(), c);
    n.a.app_supply(400_000);
    n.a.close();
    n.run_until(150 * NS_PER_MS);
    n.ba.delay = 400 * NS_PER_MS;
    n.run_until(until);
    n
}

#[test]
fn responses_set_the_window_as_specified() {
    // Find the detection time with a long transfer, then stop right after it.
    let probe = spike_until(DetectorKind::Eifel, ResponseKind::Eifel, 3 * NS_PER_S);
    let (before, t_det, _) = cwnd_around(&probe);
    let mss = 1000;
    for resp in [
        ResponseKind::Eifel,
        ResponseKind::KeepCwnd,
        ResponseKind::Reno,
        ResponseKind::Undo,
    ] {
        let n = spike_until(DetectorKind::Eifel, resp, t_det);
        assert_eq!(n.a.stats().spurious_detected, 2, "{resp:?}");
        let (cwnd, ssthresh) = (n.a.cwnd(), n.a.ssthresh());
        match resp {
            // RFC 4015 §3.2 step (3): cwnd = FlightSize + min(acked, IW) (no more than the
            // old window here), ssthresh = pipe_prev >= the old flight.
            ResponseKind::Eifel => {
                assert!(cwnd > 2 * mss && cwnd <= before + 4_000, "{cwnd} {before}");
                assert!(ssthresh >= before / 2, "{ssthresh}");
            }
            // Keep cwnd, halve ssthresh.
            ResponseKind::KeepCwnd => {
                assert!(cwnd >= before, "{cwnd} {before}");
                assert!(ssthresh < before, "{ssthresh} {before}");
            }
            // Reno: loss window (plus the slow-start growth of this ACK), go-back-N.
            ResponseKind::Reno => assert!(cwnd <= 3 * mss, "{cwnd}"),
            // Linux's undo: the window before the timeout.
            ResponseKind::Undo => assert!(cwnd >= before, "{cwnd} {before}"),
        }
    }
    // Reno response goes back N, the others do not.
    let reno = spike(DetectorKind::Eifel, ResponseKind::Reno, true);
    assert!(go_back_n(&reno) >= 2);
    let keep = spike(DetectorKind::Eifel, ResponseKind::KeepCwnd, true);
    assert_eq!(go_back_n(&keep), 0);
    let undo = spike(DetectorKind::Eifel, ResponseKind::Undo, true);
    assert_eq!(go_back_n(&undo), 0);
}

#[test]
fn eifel_response_rebases_the_rto() {
    // RFC 4015 §3.2 step (4): on the first sample after the spike, SRTT = max(SRTT_prev, R)
    // and RTTVAR = max(RTTVAR_prev, R/2); without the rebase SRTT only moves 1/8 of the way
    // per sample (RFC 6298 §2.3).
    let probe = spike_until(DetectorKind::Eifel, ResponseKind::Eifel, 3 * NS_PER_S);
    let (_, t_det, _) = cwnd_around(&probe);
    let after = t_det + 600 * NS_PER_MS;
    let eifel = spike_until(DetectorKind::Eifel, ResponseKind::Eifel, after);
    let keep = spike_until(DetectorKind::Eifel, ResponseKind::KeepCwnd, after);
    // The RTT after the ACK path slowed to 400 ms is about 430 ms; before it was about 45 ms.
    assert!(eifel.a.srtt() >= 400 * NS_PER_MS, "{}", eifel.a.srtt());
    assert!(keep.a.srtt() < 350 * NS_PER_MS, "{}", keep.a.srtt());
}

/// A spurious timeout at the tail of a transfer: all 12 KB are in flight when the ACK path
/// slows down, so F-RTO step 2b has no new data to probe with.
fn tail_spike(det: DetectorKind) -> Net {
    let mut c = spike_cfg(det, ResponseKind::Eifel);
    c.initial_window = 20_000;
    let mut n = Net::new(c.clone(), c);
    n.a.app_supply(12_000);
    n.a.close();
    // Handshake done at ~40 ms, the whole transfer sent then; its ACKs leave B from ~60 ms.
    n.run_until(50 * NS_PER_MS);
    n.ba.delay = 400 * NS_PER_MS;
    n.run_until(30 * NS_PER_S);
    assert_eq!(n.b.stats().bytes_delivered, 12_000);
    n
}

#[test]
fn tail_timeout_rfc_frto_finishes_without_verdict_linux_frto_detects() {
    // RFC 5682 §2.1/§3.1 step 2b: no new data -> conventional recovery, classified as
    // "transfer finished" (Sekiguchi 2008 Table 4, cause 1), and go-back-N follows.
    let n = tail_spike(DetectorKind::Frto);
    assert!(timeouts(&n) >= 1);
    assert_eq!(detected(&n), 0);
    assert!(n.count_a(|e| matches!(e, Event::DetectorVerdict { outcome: 0, .. })) >= 1);
    assert!(go_back_n(&n) >= 1, "go-back-N resent {}", go_back_n(&n));
    // Linux F-RTO: the first ACK of original data decides "spurious"; nothing is resent
    // beyond the timeout retransmission.
    let n = tail_spike(DetectorKind::FrtoLinux);
    assert!(timeouts(&n) >= 1);
    assert_eq!(detected(&n), timeouts(&n));
    assert_eq!(go_back_n(&n), 0);
}
