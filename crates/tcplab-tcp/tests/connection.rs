//! Hand-worked endpoint cases: handshake, NewReno partial ACKs, SACK
//! recovery, timeouts and backoff, DSACK, FIN and RST.

mod harness;

use harness::{cfg, Net};
use tcplab_tcp::{CcKind, Event, RtxReason, State, NS_PER_MS, NS_PER_S};

fn bulk(n: &mut Net, bytes: u64) {
    n.a.app_supply(bytes);
    n.a.close();
}

#[test]
fn handshake_negotiates_options_and_transfers() {
    let mut n = Net::new(cfg(), cfg());
    bulk(&mut n, 100_000);
    n.run_until(10 * NS_PER_S);
    let syn = &n.sent[0].seg;
    assert!(syn.flags.syn() && !syn.flags.ack());
    assert_eq!(syn.options.mss, Some(1000));
    assert!(syn.options.sack_permitted);
    assert!(syn.options.timestamps.is_some());
    assert!(syn.options.wscale.is_some());
    let synack = n.sent.iter().find(|s| !s.a_to_b).unwrap().seg;
    assert!(synack.flags.syn() && synack.flags.ack());
    assert_eq!(synack.options.wscale, Some(7)); // 4 MiB >> 7 = 32768 ≤ 65535
    assert_eq!(n.b.stats().bytes_delivered, 100_000);
    assert!(n.a.send_finished());
    assert_eq!(n.a.state(), State::TimeWait);
    assert_eq!(n.b.state(), State::Closed);
    assert_eq!(n.a.stats().retransmitted_segments, 0);
    // handshake RTT ≈ 40 ms + serialisation
    assert!(n.a.srtt() >= 40 * NS_PER_MS && n.a.srtt() < 60 * NS_PER_MS);
    assert!(n.count_a(|e| matches!(e, Event::Closed)) == 1);
}

/// RFC 6582 §3.2: two losses in one window without SACK. The third dupack
/// triggers one fast retransmit; the partial ACK that follows triggers the
/// retransmission of the second hole (step 5) without a timeout; the full
/// ACK ends recovery with cwnd = min(ssthresh, FlightSize + SMSS) (step 6).
#[test]
fn newreno_partial_ack() {
    let mut c = cfg();
    c.sack = false;
    c.initial_window = 20_000;
    // start in congestion avoidance (cwnd > ssthresh) so cwnd stays 20 000
    // during the first RTT
    c.initial_ssthresh = Some(10_000);
    let mut n = Net::new(c.clone(), c);
    bulk(&mut n, 40_000);
    // drop the first transmissions of data bytes 3000.. and 8000..
    n.drop = Box::new(|s, prior| s.a_to_b && prior == 0 && (s.off == 3001 || s.off == 8001));
    n.run_until(20 * NS_PER_S);
    assert_eq!(n.b.stats().bytes_delivered, 40_000);
    assert_eq!(n.a.stats().timeouts, 0, "no timeout with NewReno");
    let rtx: Vec<_> = n
        .events_a
        .iter()
        .filter_map(|(_, e)| match e {
            Event::Retransmit { seq, reason, .. } => Some((*seq, *reason)),
            _ => None,
        })
        .collect();
    assert_eq!(
        rtx,
        vec![
            (3001, RtxReason::FastRetransmit),
            (8001, RtxReason::PartialAck)
        ]
    );
    assert_eq!(n.count_a(|e| matches!(e, Event::EnterRecovery { .. })), 1);
    assert_eq!(n.count_a(|e| matches!(e, Event::ExitRecovery { .. })), 1);
    // At the third dupack 22 000 bytes are outstanding, 2000 of them sent by
    // Limited Transmit, which RFC 5681 §3.2 step 2 excludes: ssthresh = 20 000/2.
    if let Some((_, Event::EnterRecovery { ssthresh, cwnd, .. })) = n
        .events_a
        .iter()
        .find(|(_, e)| matches!(e, Event::EnterRecovery { .. }))
    {
        assert_eq!(*ssthresh, 10_000);
        assert_eq!(*cwnd, 13_000); // ssthresh + 3·SMSS
    }
}

/// Plain Reno leaves recovery at the first new ACK, so the second hole
/// needs another fast retransmit or a timeout.
#[test]
fn reno_exits_on_partial_ack() {
    let mut c = cfg();
    c.sack = false;
    c.cc = CcKind::parse("reno").unwrap();
    c.initial_window = 20_000;
    let mut n = Net::new(c.clone(), c);
    bulk(&mut n, 40_000);
    n.drop = Box::new(|s, prior| s.a_to_b && prior == 0 && (s.off == 3001 || s.off == 8001));
    n.run_until(30 * NS_PER_S);
    assert_eq!(n.b.stats().bytes_delivered, 40_000);
    let fr = n.count_a(|e| {
        matches!(
            e,
            Event::Retransmit {
                reason: RtxReason::FastRetransmit,
                ..
            }
        )
    });
    let to = n.a.stats().timeouts;
    assert!(
        fr + to as usize >= 2,
        "second hole needs a new FR or an RTO"
    );
    assert_eq!(
        n.count_a(|e| matches!(
            e,
            Event::Retransmit {
                reason: RtxReason::PartialAck,
                ..
            }
        )),
        0
    );
}

/// RFC 6675: three losses in one window are all repaired in one recovery
/// episode, by SACK-driven retransmissions, without a timeout.
#[test]
fn sack_recovers_three_losses_in_one_rtt() {
    let mut c = cfg();
    c.initial_window = 30_000;
    let mut n = Net::new(c.clone(), c);
    bulk(&mut n, 60_000);
    n.drop = Box::new(|s, prior| {
        s.a_to_b && prior == 0 && (s.off == 2001 || s.off == 5001 || s.off == 9001)
    });
    n.run_until(20 * NS_PER_S);
    assert_eq!(n.b.stats().bytes_delivered, 60_000);
    assert_eq!(n.a.stats().timeouts, 0);
    assert_eq!(n.a.stats().retransmitted_segments, 3);
    assert_eq!(n.count_a(|e| matches!(e, Event::EnterRecovery { .. })), 1);
    let times: Vec<_> = n
        .events_a
        .iter()
        .filter(|(_, e)| matches!(e, Event::Retransmit { .. }))
        .map(|(t, _)| *t)
        .collect();
    // all three retransmissions within one RTT (~45 ms) of the first
    assert!(times[2] - times[0] < 45 * NS_PER_MS, "{times:?}");
    // the receiver saw SACK blocks
    assert!(n
        .sent
        .iter()
        .any(|s| !s.a_to_b && s.seg.options.sack_len > 0));
}

/// RFC 6298 §5.4–5.6: a lost retransmission leads to a timeout; the timer
/// backs off; cwnd collapses to one segment; the transfer still completes.
#[test]
fn timeout_and_backoff() {
    let mut c = cfg();
    c.initial_window = 4_000;
    let mut n = Net::new(c.clone(), c);
    bulk(&mut n, 20_000);
    // the last segment is lost twice: no dupacks can follow it
    n.drop = Box::new(|s, prior| s.a_to_b && s.off == 19001 && prior < 2);
    n.run_until(60 * NS_PER_S);
    assert_eq!(n.b.stats().bytes_delivered, 20_000);
    let tos: Vec<_> = n
        .events_a
        .iter()
        .filter_map(|(t, e)| match e {
            Event::Timeout {
                backoff, rto, cwnd, ..
            } => Some((*t, *backoff, *rto, *cwnd)),
            _ => None,
        })
        .collect();
    assert_eq!(tos.len(), 2, "{tos:?}");
    assert_eq!(tos[0].1, 0);
    assert_eq!(tos[1].1, 1);
    // the second timeout fires one doubled RTO after the first
    assert_eq!(tos[1].0 - tos[0].0, 2 * tos[0].2);
    assert_eq!(n.a.stats().timeouts, 2);
}

/// RFC 2883: a spurious retransmission makes the receiver report a DSACK,
/// which the sender counts.
#[test]
fn dsack_reported_for_duplicate() {
    let mut c = cfg();
    c.initial_window = 4_000;
    c.rto.min = 100 * NS_PER_MS;
    c.rto.initial = 100 * NS_PER_MS;
    let mut n = Net::new(c.clone(), c);
    bulk(&mut n, 8_000);
    // delay spike: the reverse pipe stalls so the sender times out spuriously
    n.ba.delay = 20 * NS_PER_MS;
    n.drop = Box::new(|_, _| false);
    // make ACKs slow after the handshake by raising the reverse delay
    n.run_until(45 * NS_PER_MS);
    n.ba.delay = 400 * NS_PER_MS;
    n.run_until(10 * NS_PER_S);
    assert_eq!(n.b.stats().bytes_delivered, 8_000);
    assert!(n.a.stats().timeouts >= 1);
    assert!(n.a.stats().dsacks_rcvd >= 1, "sender saw no DSACK");
    assert!(n
        .sent
        .iter()
        .any(|s| !s.a_to_b && s.seg.options.sack_len > 0));
}

#[test]
fn rst_mid_transfer_closes_both() {
    let mut n = Net::new(cfg(), cfg());
    n.a.app_supply(u64::MAX);
    n.run_until(200 * NS_PER_MS);
    assert!(n.b.stats().bytes_delivered > 0);
    n.a.abort();
    n.run_until(400 * NS_PER_MS);
    assert_eq!(n.a.state(), State::Closed);
    assert_eq!(n.b.state(), State::Closed);
    assert!(n
        .events_b
        .iter()
        .any(|(_, e)| matches!(e, Event::Reset { sent: false })));
}

/// Without SACK/timestamps/window scaling on one side, the options are
/// not used and the transfer still works with a 64 KB window.
#[test]
fn options_off_and_window_limit() {
    let mut a = cfg();
    a.sack = false;
    a.timestamps = false;
    a.window_scaling = false;
    let mut b = cfg();
    b.rcv_buf = 65535;
    let mut n = Net::new(a, b);
    bulk(&mut n, 300_000);
    n.run_until(30 * NS_PER_S);
    assert_eq!(n.b.stats().bytes_delivered, 300_000);
    let data = n.data_sent().next().unwrap();
    assert!(data.seg.options.timestamps.is_none());
    assert!(n.sent.iter().all(|s| s.seg.options.sack_len == 0));
    // never more than the 65535-byte window outstanding
    assert!(n.a.outstanding() <= 65535);
}

/// Delayed ACKs: with every-2 ACKing, a bulk transfer sends about one ACK
/// per two data segments.
#[test]
fn ack_every_second_segment() {
    let mut n = Net::new(cfg(), cfg());
    bulk(&mut n, 1_000_000);
    n.run_until(30 * NS_PER_S);
    let data = n.data_sent().count() as f64;
    let acks = n.b.stats().acks_sent as f64;
    assert!(
        (acks / data - 0.5).abs() < 0.05,
        "{acks} ACKs for {data} segments"
    );
}
