//! PRR (RFC 6937) and RACK-TLP (RFC 8985) in the endpoint, on the
//! two-endpoint harness (10 Mb/s, 20 ms each way): the tail loss probe with
//! and without loss of the probe, RACK detecting a lost retransmission
//! without a timeout, and PRR spreading the reduction over the round trip.

mod harness;

use harness::{cfg, Net};
use tcplab_tcp::jiffies::{TimerKind, JIFFY, TCP_TIMEOUT_MIN};
use tcplab_tcp::recovery::{LossDetection, PrrBound, RecoveryCwnd};
use tcplab_tcp::{Config, Event, RttEstimatorKind, RtxReason, NS_PER_MS, NS_PER_S};

const BYTES: u64 = 200_000;
/// The last data segment of the transfer (1000-byte segments from offset 1).
const LAST: u64 = 1 + BYTES - 1000;

fn rack_tlp() -> Config {
    Config {
        loss_detection: LossDetection::Rack,
        tlp: true,
        ..cfg()
    }
}

fn run(c: Config, drop: harness::Dropper) -> Net {
    let mut n = Net::new(c.clone(), c);
    n.a.app_supply(BYTES);
    n.a.close();
    n.drop = drop;
    n.run_until(60 * NS_PER_S);
    assert_eq!(n.b.stats().bytes_delivered, BYTES);
    n
}

/// The first fast recovery of `n`: when it started, its recovery point and
/// when it ended.
fn first_recovery(n: &Net) -> (u64, u64, u64) {
    let (t0, recover) = n
        .events_a
        .iter()
        .find_map(|(t, e)| match e {
            Event::EnterRecovery { recover, .. } => Some((*t, *recover)),
            _ => None,
        })
        .unwrap();
    let exit = n
        .events_a
        .iter()
        .find_map(|(t, e)| matches!(e, Event::ExitRecovery { .. }).then_some(*t))
        .unwrap();
    (t0, recover, exit)
}

fn tlps(n: &Net, kind: u8) -> usize {
    n.count_a(|e| matches!(e, Event::Tlp { kind: k, .. } if *k == kind))
}

/// RFC 8985 §7.3: the last segment is lost; the PTO (2·SRTT ≈ 80 ms, far
/// below the 1 s RTO) sends a probe retransmitting it, which repairs the
/// loss: no timeout. Without TLP the same loss costs an RTO.
#[test]
fn tail_loss_is_repaired_by_the_probe() {
    let drop_last =
        || -> harness::Dropper { Box::new(|s, prior| s.a_to_b && s.off == LAST && prior == 0) };
    let n = run(rack_tlp(), drop_last());
    assert_eq!(n.a.stats().timeouts, 0);
    assert_eq!(
        tlps(&n, 1),
        1,
        "one probe, a retransmission of the last segment"
    );
    let probe = n
        .events_a
        .iter()
        .find_map(|(t, e)| {
            matches!(
                e,
                Event::Retransmit {
                    reason: RtxReason::Tlp,
                    ..
                }
            )
            .then_some(*t)
        })
        .unwrap();
    let first = n.data_sent().find(|s| s.off == LAST).unwrap().t;
    // PTO = 2·SRTT (one segment is not alone in flight here): well under the RTO.
    assert!(
        probe - first < 200 * NS_PER_MS,
        "probe {} ms after",
        (probe - first) / NS_PER_MS
    );

    let plain = run(cfg(), drop_last());
    assert_eq!(plain.a.stats().timeouts, 1);
    assert_eq!(tlps(&plain, 1), 0);
}

/// RFC 8985 §7.4: the last segment and the probe are both lost: the episode
/// stays open (no second probe) and the RTO recovers.
#[test]
fn lost_probe_leaves_the_rto() {
    let n = run(
        rack_tlp(),
        Box::new(|s, prior| s.a_to_b && s.off == LAST && prior <= 1),
    );
    // Linux-like timers: a 40 ms delayed ACK leaves the last segment alone in
    // flight, so PTO = 2·SRTT + WCDelAckT, capped at the RTO's expiry: the
    // probe stands in for the RTO, which follows it.
    let mut c = rack_tlp();
    c.rto = tcplab_tcp::RtoProfile {
        min: 200 * NS_PER_MS,
        granularity: 200 * NS_PER_MS,
        ..c.rto
    };
    c.ack.max_delay = 40 * NS_PER_MS;
    // With Linux's timers the probe, capped at the RTO's jiffies, fires a tick
    // after the RTO's instant; it still comes first, as the two are one timer in
    // Linux (the probe replaced the RTO).
    for timers in [TimerKind::Exact, TimerKind::Linux] {
        c.timers = timers;
        let mut m = Net::new(c.clone(), c.clone());
        m.a.app_supply(20_000);
        m.a.close();
        m.drop = Box::new(|s, _| s.a_to_b && s.off == 19_001);
        m.run_until(5 * NS_PER_S);
        let probe = m.count_a(|e| matches!(e, Event::Tlp { kind: 1, .. }));
        assert_eq!(probe, 1, "{timers:?}");
        assert!(m.a.stats().timeouts >= 1);
    }
    assert_eq!(tlps(&n, 1), 1, "one probe only");
    assert_eq!(n.a.stats().timeouts, 1);
}

/// RFC 8985 §7.3: a whole flight is lost (every segment first sent between
/// 120 and 220 ms), so no ACK comes back; the application still has data, so
/// the probe carries a new segment, whose SACK lets RACK find the losses
/// one round trip later, without a timeout and well before the sender
/// without TLP starts its recovery.
#[test]
fn probe_with_new_data_when_the_flight_is_lost() {
    let lost = |s: &harness::Sent, prior: usize| {
        s.a_to_b && s.len > 0 && prior == 0 && (120 * NS_PER_MS..220 * NS_PER_MS).contains(&s.t)
    };
    let n = run(rack_tlp(), Box::new(lost));
    assert!(
        n.data_sent().filter(|s| lost(s, 0)).count() > 10,
        "a whole flight lost"
    );
    assert_eq!(tlps(&n, 0), 1, "one probe, with new data");
    assert_eq!(n.a.stats().timeouts, 0);
    let first_rtx = |n: &Net| {
        n.events_a
            .iter()
            .find_map(|(t, e)| matches!(e, Event::Retransmit { .. }).then_some(*t))
            .unwrap()
    };
    let plain = run(cfg(), Box::new(lost));
    assert!(first_rtx(&n) + 100 * NS_PER_MS < first_rtx(&plain));
}

/// RFC 8985 §6: segment k is lost and so is its fast retransmission. RACK
/// sees later-sent segments SACKed and marks the retransmission lost again
/// (RackLoss with lost_retrans), so the transfer needs no timeout; RFC 6675
/// DupThresh detection cannot, and waits for the RTO.
#[test]
fn rack_detects_a_lost_retransmission() {
    const K: u64 = 1 + 60 * 1000;
    let drop = || -> harness::Dropper { Box::new(|s, prior| s.a_to_b && s.off == K && prior <= 1) };
    let n = run(rack_tlp(), drop());
    assert_eq!(n.a.stats().timeouts, 0);
    let again =
        n.count_a(|e| matches!(e, Event::RackLoss { lost_retrans, .. } if *lost_retrans > 0));
    assert!(again >= 1, "RACK marked the lost retransmission");
    assert_eq!(n.data_sent().filter(|s| s.off == K).count(), 3);

    let plain = run(cfg(), drop());
    assert!(plain.a.stats().timeouts >= 1);
}

/// RFC 6937 §3.1 in the endpoint: one loss in a large flight. With the
/// immediate reduction (RFC 6675) nothing new is sent for the first half of
/// the recovery round ("half-silent"); PRR sends about every other ACK from
/// the start. Both end the recovery with the same cwnd (ssthresh).
#[test]
fn prr_spreads_the_reduction() {
    const K: u64 = 1 + 100 * 1000;
    let sent_in_first_half = |c: Config| {
        let n = run(c, Box::new(|s, prior| s.a_to_b && s.off == K && prior == 0));
        let (t0, recover, exit) = first_recovery(&n);
        let half = t0 + (exit - t0) / 2;
        let new_first_half = n
            .data_sent()
            .filter(|s| s.t > t0 && s.t < half && s.off >= recover)
            .count();
        let cwnd_exit = n
            .events_a
            .iter()
            .find_map(|(_, e)| match e {
                Event::ExitRecovery { cwnd } => Some(*cwnd),
                _ => None,
            })
            .unwrap();
        (new_first_half, cwnd_exit, n.a.stats().timeouts)
    };
    let mut c = cfg();
    c.initial_ssthresh = Some(60_000);
    let (imm, cw_imm, to_imm) = sent_in_first_half(c.clone());
    c.recovery_cwnd = RecoveryCwnd::Prr(PrrBound::Ssrb);
    let (prr, cw_prr, to_prr) = sent_in_first_half(c);
    assert_eq!(imm, 0, "RFC 6675: half-silent");
    assert!(prr >= 5, "PRR sends during the first half ({prr})");
    assert_eq!(cw_imm, cw_prr);
    assert_eq!((to_imm, to_prr), (0, 0));
}

/// Linux's `tcp_cwnd_reduction` (`prr-linux`) after a burst loss that takes
/// pipe below ssthresh: an ACK that only SACKs sends what it delivered, as
/// PRR-CRB; the slow-start bound's extra segment comes only with an ACK that
/// advanced snd.una without a new loss. So while the ACKs only SACK (the
/// first round trip of the recovery) it sends as CRB does, and fewer than
/// RFC 6937's slow-start bound, which adds a segment on every ACK.
#[test]
fn prr_linux_adds_a_segment_only_when_snd_una_advances() {
    // 60 segments lost from a flight of 98 (congestion avoidance from 90
    // segments on): pipe falls far below the new ssthresh (49) in recovery.
    const K: u64 = 1 + 1_000_000;
    let sent_in_recovery = |bound: PrrBound| {
        let mut c = cfg();
        c.initial_ssthresh = Some(90_000);
        c.recovery_cwnd = RecoveryCwnd::Prr(bound);
        let mut n = Net::new(c.clone(), c);
        n.a.app_supply(2_000_000);
        n.a.close();
        n.drop = Box::new(|s, prior| s.a_to_b && (K..K + 60_000).contains(&s.off) && prior == 0);
        n.run_until(60 * NS_PER_S);
        assert_eq!(n.b.stats().bytes_delivered, 2_000_000);
        let (t0, _, exit) = first_recovery(&n);
        // The first round trip of the recovery (40 ms): no retransmission is
        // acknowledged yet, the ACKs only SACK.
        let rtt1 = t0 + 40 * NS_PER_MS;
        assert!(rtt1 < exit);
        let sent = n.data_sent().filter(|s| s.t >= t0 && s.t < rtt1).count();
        (sent, n.a.stats().timeouts)
    };
    let (crb, to_crb) = sent_in_recovery(PrrBound::Crb);
    let (linux, to_linux) = sent_in_recovery(PrrBound::Linux);
    let (ssrb, to_ssrb) = sent_in_recovery(PrrBound::Ssrb);
    assert!(
        crb == linux && linux < ssrb,
        "CRB {crb}, Linux {linux}, SSRB {ssrb}"
    );
    assert_eq!((to_crb, to_linux, to_ssrb), (0, 0, 0));
}

/// The segment at offset 50 001 and its fast retransmission are lost, so an
/// RTO recovers it: (time from the fast retransmission to the timeout, the
/// RTO when it fired).
fn fast_retransmit_to_timeout(c: Config) -> (u64, u64) {
    const HOLE: u64 = 1 + 50 * 1000;
    let drop: harness::Dropper = Box::new(|s, prior| s.a_to_b && s.off == HOLE && prior <= 1);
    let n = run(c, drop);
    let fr = n
        .events_a
        .iter()
        .find_map(|(t, e)| {
            matches!(
                e,
                Event::Retransmit {
                    reason: RtxReason::FastRetransmit,
                    ..
                }
            )
            .then_some(*t)
        })
        .expect("a fast retransmission");
    let (to, rto) = n
        .events_a
        .iter()
        .find_map(|(t, e)| match e {
            Event::Timeout { rto, .. } => Some((*t, *rto)),
            _ => None,
        })
        .expect("a timeout");
    (to - fr, rto)
}

/// `RtoProfile::restart_on_rtx` (the `linux` profile): retransmitting the
/// head segment restarts the retransmission timer, as Linux's
/// `tcp_xmit_retransmit_queue` does; RFC 6298 §5.3 restarts it only on an
/// ACK of new data. With the restart the timeout fires one RTO after the
/// fast retransmission, without it earlier (one RTO after the last
/// cumulative ACK before the loss was detected).
#[test]
fn head_retransmission_restarts_the_timer_with_restart_on_rtx() {
    let gap = |restart: bool| {
        let mut c = cfg();
        c.rto.restart_on_rtx = restart;
        fast_retransmit_to_timeout(c)
    };
    let (with, rto) = gap(true);
    assert_eq!(with, rto, "one RTO after the fast retransmission");
    let (without, rto) = gap(false);
    assert!(
        without < rto,
        "{without} ns: armed before the fast retransmission"
    );
}

/// The `linux` estimator (Linux's `tcp_clean_rtx_queue`): an ACK that only
/// SACKs data sent before the head's last transmission re-arms the timer —
/// the head's retransmission may still be on its way — while SACKs of data
/// sent after it do not (they would keep extending the timeout in
/// recovery). With RFC 6298's estimator the timeout follows one RTO after
/// the fast retransmission; with Linux's, one RTO after the last SACK of the
/// flight that was in the network when the head was retransmitted, i.e.
/// later, but by no more than that flight's round trip (measured: 45 ms).
#[test]
fn sacks_of_earlier_data_rearm_the_timer_with_the_linux_estimator() {
    let gap = |estimator: RttEstimatorKind| {
        let mut c = cfg();
        c.rto.restart_on_rtx = true;
        c.rto.estimator = estimator;
        fast_retransmit_to_timeout(c)
    };
    let (rfc, rto) = gap(RttEstimatorKind::Rfc6298);
    assert_eq!(rfc, rto, "RFC 6298: one RTO after the fast retransmission");
    let (linux, rto) = gap(RttEstimatorKind::Linux);
    assert!(
        linux > rto,
        "re-armed after the fast retransmission: {linux} vs RTO {rto}"
    );
    assert!(
        linux < rto + 100 * NS_PER_MS,
        "not past the flight's round trip (40 ms plus its queue): {linux} vs RTO {rto}"
    );
}

/// tcp_fastretrans_alert() with RACK: segment X is lost and so is its first
/// retransmission; K, the first segment sent in the recovery (at its
/// recovery point), is lost too. RACK marks X's retransmission and K lost on
/// the same ACK and both are retransmitted, X first. X's arrival fills the
/// hole below K: the cumulative ACK reaches the recovery point and ends the
/// recovery while K's retransmission is still in flight. K still counts in
/// lost_out, so Linux enters a new recovery at once (tcp_time_to_recover),
/// but retransmits nothing: tcp_xmit_retransmit_queue() skips a lost skb
/// with TCPCB_SACKED_RETRANS set. K is sent twice, not three times.
#[test]
fn recovery_entered_with_the_lost_segment_in_flight_does_not_resend_it() {
    const X: u64 = 1 + 60 * 1000;
    let mut x_rtx_at: Option<u64> = None;
    let mut k: Option<u64> = None;
    let drop: harness::Dropper = Box::new(move |s, prior| {
        if !s.a_to_b || s.len == 0 {
            return false;
        }
        if s.off == X {
            if prior == 1 {
                x_rtx_at = Some(s.t);
            }
            return prior <= 1;
        }
        if x_rtx_at.is_some() && k.is_none() && prior == 0 && s.off > X {
            k = Some(s.off);
            return true;
        }
        false
    });
    let n = run(rack_tlp(), drop);
    assert_eq!(n.a.stats().timeouts, 0);
    let (_, recover, _) = first_recovery(&n);
    let sends = |off: u64| n.data_sent().filter(|s| s.off == off).count();
    assert_eq!(sends(X), 3, "original and two retransmissions");
    assert_eq!(sends(recover), 2, "K: original and one retransmission");
    let recoveries = n.count_a(|e| matches!(e, Event::EnterRecovery { .. }));
    assert!(recoveries >= 2, "a new recovery starts with K still lost");
}

/// When the first retransmission of `off` left, with `timers`, and whether
/// a RACK reordering timer or a probe sent it.
fn first_rtx_of(timers: TimerKind, drop_off: u64) -> (u64, bool, bool) {
    let mut c = rack_tlp();
    c.timers = timers;
    let n = run(
        c,
        Box::new(move |s, prior| s.a_to_b && s.off == drop_off && prior == 0),
    );
    let t = n
        .data_sent()
        .filter(|s| s.off == drop_off)
        .nth(1)
        .unwrap()
        .t;
    let by_timer = n.count_a(|e| matches!(e, Event::RackLoss { timer: true, .. })) > 0;
    (t, by_timer, tlps(&n, 1) > 0)
}

/// The resend with Linux's timers (`linux`) is on a tick, 2 ms to 2 ms plus
/// two jiffies after the one with exact timers.
fn on_a_tick_and_later(exact: u64, linux: u64) {
    assert_eq!(linux % JIFFY, 0, "fired at a tick: {linux} ns");
    let late = linux - exact;
    assert!(
        (TCP_TIMEOUT_MIN..=TCP_TIMEOUT_MIN + 2 * JIFFY).contains(&late),
        "{} us later",
        late / 1000
    );
}

/// Linux tcp_rack_mark_lost: the reordering timer is armed for
/// usecs_to_jiffies(timeout + TCP_TIMEOUT_MIN_US) and fires on a tick of the
/// 250-Hz timer wheel, one bucket after its expiry. A segment two before the
/// last is lost: two SACKs (below DupThresh) leave RACK waiting for its
/// reordering window (min RTT / 4 = 10 ms); the timer resends it. With Linux's
/// timers the resend is on a tick, later by at least 2 ms and at most 2 ms
/// plus two jiffies.
#[test]
fn linux_timers_fire_the_reordering_timer_on_a_tick() {
    let off = LAST - 2 * 1000;
    let (exact, exact_timer, _) = first_rtx_of(TimerKind::Exact, off);
    let (linux, linux_timer, _) = first_rtx_of(TimerKind::Linux, off);
    assert!(
        exact_timer && linux_timer,
        "the reordering timer found the loss"
    );
    on_a_tick_and_later(exact, linux);
}

/// Linux tcp_schedule_loss_probe: 2·SRTT + TCP_TIMEOUT_MIN_US in whole jiffies,
/// fired on the wheel; the probe for a lost last segment leaves on a tick, 2 ms
/// to 2 ms + two jiffies after the exact PTO's.
#[test]
fn linux_timers_fire_the_probe_on_a_tick() {
    let (exact, _, exact_probe) = first_rtx_of(TimerKind::Exact, LAST);
    let (linux, _, linux_probe) = first_rtx_of(TimerKind::Linux, LAST);
    assert!(
        exact_probe && linux_probe,
        "a probe resent the last segment"
    );
    on_a_tick_and_later(exact, linux);
}

/// Segments acknowledged after the ACK that ends the first recovery until
/// cwnd first grows, and cwnd (in segments) at that exit. One segment at
/// offset 30 001 is lost in congestion avoidance.
fn segments_to_first_increase_after_recovery(c: Config) -> (u64, u64) {
    const K: u64 = 1 + 30 * 1000;
    let mut n = Net::new(c.clone(), c);
    n.a.app_supply(BYTES);
    n.a.close();
    n.drop = Box::new(|s, prior| s.a_to_b && s.off == K && prior == 0);
    let exited = |n: &Net| n.count_a(|e| matches!(e, Event::ExitRecovery { .. })) > 0;
    // Steps of 50 µs: an ACK every 1.6 ms at most, so one ACK per step.
    let step = 50_000;
    let mut t = 0;
    while !exited(&n) {
        t += step;
        n.run_until(t);
        assert!(t < 10 * NS_PER_S, "no recovery");
    }
    let (una, cwnd) = (n.a.snd_una(), n.a.cwnd());
    while n.a.cwnd() <= cwnd {
        t += step;
        n.run_until(t);
        assert!(t < 20 * NS_PER_S, "cwnd never grew");
    }
    ((n.a.snd_una() - una) / 1000, cwnd / 1000)
}

/// Linux's tcp_ack(): tcp_fastretrans_alert() ends Recovery on the full ACK
/// (cwnd = ssthresh) before tcp_cong_control() runs, which then finds the
/// Open state and counts what that ACK delivered towards the next increase
/// (tcp_cong_avoid_ai's snd_cwnd_cnt). So after the exit fewer than cwnd
/// segments are acknowledged before cwnd grows; without that count, cwnd.
#[test]
fn linux_counts_the_ack_that_ends_recovery_towards_growth() {
    let c = Config {
        reno_linux: true,
        // tcp_in_slow_start(): cwnd < ssthresh, as in `stack = "linux"`.
        ca_at_ssthresh: true,
        sack: true,
        loss_detection: LossDetection::Rack,
        recovery_cwnd: RecoveryCwnd::Prr(PrrBound::Linux),
        initial_ssthresh: Some(22_000),
        ..cfg()
    };
    let (after, cwnd) = segments_to_first_increase_after_recovery(c);
    assert!(
        after < cwnd,
        "{after} segments acknowledged after the exit before cwnd {cwnd} grew"
    );
}
