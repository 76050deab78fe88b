//! Flow control: a slow or paused receiving application, receiver SWS
//! avoidance and window updates (RFC 9293 §3.8.6.2.2), and the persist
//! timer that probes a zero window (RFC 9293 §3.8.6.1, RFC 1122 §4.2.2.17).

mod harness;

use harness::{cfg, Net};
use tcplab_tcp::{Config, Event, GiveUpKind, NS_PER_MS, NS_PER_S};

fn slow_reader(rate_bps: u64, rcv_buf: u64) -> Config {
    Config {
        rcv_buf,
        read_rate_bps: Some(rate_bps),
        ..cfg()
    }
}

fn bulk(n: &mut Net, bytes: u64) {
    n.a.app_supply(bytes);
    n.a.close();
}

#[test]
fn a_slow_reader_paces_the_transfer_and_the_window_never_overruns_the_buffer() {
    // 10 Mb/s path, a reader at 2 Mb/s with a 32 KB buffer: 1 MB takes ~4 s.
    let mut n = Net::new(cfg(), slow_reader(2_000_000, 32_000));
    bulk(&mut n, 1_000_000);
    n.run_until(20 * NS_PER_S);
    assert_eq!(n.b.stats().bytes_delivered, 1_000_000);
    assert!(n.a.send_finished());
    let done = n.b.take_read();
    assert_eq!(done, 1_000_000);
    // the reader's pace, not the link's, sets the time: 1 MB at 2 Mb/s = 4 s
    let last = n.data_sent().map(|s| s.t).max().unwrap();
    assert!(
        last > 3_800 * NS_PER_MS && last < 4_300 * NS_PER_MS,
        "{last}"
    );
    // no segment beyond the advertised window was needed or lost
    assert_eq!(n.a.stats().retransmitted_segments, 0);
    assert_eq!(n.a.stats().timeouts, 0);
    // flow control, not the link, limited the sender: the window it was
    // offered shrank to about the reader's rate × RTT (2 Mb/s × 40 ms = 10 KB)
    let late: Vec<u16> = n
        .sent
        .iter()
        .filter(|s| !s.a_to_b && s.t > NS_PER_S && s.t < 3 * NS_PER_S)
        .map(|s| s.seg.window)
        .collect();
    let mean = late.iter().map(|&w| w as f64).sum::<f64>() / late.len() as f64;
    assert!(mean > 6_000.0 && mean < 16_000.0, "{mean}");
    // receiver SWS avoidance: a window > 0 is never advertised below one MSS
    // (the 7-bit scale of a 32 KB buffer is 0, so the field is in bytes)
    assert!(n
        .sent
        .iter()
        .filter(|s| !s.a_to_b && s.seg.flags.ack() && !s.seg.flags.syn())
        .all(|s| s.seg.window == 0 || s.seg.window >= 1000));
}

#[test]
fn a_lost_window_update_is_recovered_by_the_persist_probe() {
    // B's application reads nothing for 2 s: A fills B's 20 KB buffer and is
    // left with a zero window and nothing in flight. Then B reads it all and
    // sends a window update, which is lost (as is every ACK offering a
    // window for 0.5 s): only A's persist timer can restart the transfer.
    let mut n = Net::new(
        cfg(),
        Config {
            rcv_buf: 20_000,
            ..cfg()
        },
    );
    n.b.set_reader_paused(true, 0);
    bulk(&mut n, 60_000);
    n.run_until(2 * NS_PER_S);
    assert_eq!(n.b.stats().bytes_delivered, 20_000);
    let probes_before = n.a.stats().window_probes;
    let t_resume = n.now;
    n.drop =
        Box::new(move |s, _| !s.a_to_b && s.seg.window > 0 && s.t < t_resume + 500 * NS_PER_MS);
    n.b.set_reader_paused(false, n.now);
    assert_eq!(n.b.stats().window_updates, 1);
    n.run_until(30 * NS_PER_S);
    assert!(
        n.a.stats().window_probes > probes_before,
        "no probe after the lost update"
    );
    assert_eq!(n.b.stats().bytes_delivered, 60_000, "stalled");
    assert!(n.a.send_finished());
    // a probe is not a timeout and does not collapse the window
    assert_eq!(n.a.stats().timeouts, 0);
    assert_eq!(n.count_a(|e| matches!(e, Event::Timeout { .. })), 0);
}

#[test]
fn the_persist_timer_backs_off_while_the_window_stays_closed() {
    // B's application never reads: the window closes for good and A probes
    // at RTO, 2·RTO, 4·RTO, ... without ever timing out.
    let mut n = Net::new(
        cfg(),
        Config {
            rcv_buf: 20_000,
            ..cfg()
        },
    );
    n.b.set_reader_paused(true, 0);
    bulk(&mut n, 100_000);
    n.run_until(40 * NS_PER_S);
    assert_eq!(n.b.stats().bytes_delivered, 20_000);
    let probes: Vec<u64> = n
        .sent
        .iter()
        .filter(|s| {
            s.a_to_b
                && s.len == 0
                && s.seg.seq.wrapping_add(1) == n.sent[0].seg.seq.wrapping_add(20_001)
        })
        .map(|s| s.t)
        .collect();
    assert!(probes.len() >= 3, "{probes:?}");
    let gaps: Vec<u64> = probes.windows(2).map(|w| w[1] - w[0]).collect();
    assert!(
        gaps.windows(2).all(|g| g[1] >= 2 * g[0] - 10 * NS_PER_MS),
        "{gaps:?}"
    );
    assert_eq!(n.a.stats().window_probes as usize, probes.len());
    assert_eq!(n.a.stats().timeouts, 0);
    // every probe is answered with an ACK (RFC 9293 §3.10.7.4)
    let answers = n
        .sent
        .iter()
        .filter(|s| !s.a_to_b && s.seg.window == 0)
        .count();
    assert!(answers >= probes.len());
    // resuming the reader reopens the window and the transfer ends
    n.b.set_reader_paused(false, n.now);
    n.run_until(60 * NS_PER_S);
    assert_eq!(n.b.stats().bytes_delivered, 100_000);
    assert!(n.a.send_finished());
}

#[test]
fn zero_read_rate_is_rejected() {
    let c = Config {
        read_rate_bps: Some(0),
        ..cfg()
    };
    assert_eq!(c.validate().unwrap_err(), "read_rate: must be > 0 (got 0)");
}

#[test]
fn unanswered_zero_window_probes_give_up_answered_ones_never_do() {
    // tcp_probe_timer(): the sender gives up when the persist timer expires
    // after `retries2` probes in a row that no ACK answered; an answered
    // probe resets the count (tcp_ack()), so a receiver that answers keeps
    // the connection open however long its window stays closed (RFC 1122
    // §4.2.2.17).
    let sender = |retries2| {
        let mut c = cfg();
        c.rto.retries2 = retries2;
        c
    };
    let closed = |retries2| {
        let mut n = Net::new(
            sender(retries2),
            Config {
                rcv_buf: 20_000,
                ..cfg()
            },
        );
        n.b.set_reader_paused(true, 0);
        bulk(&mut n, 100_000);
        n.run_until(2 * NS_PER_S);
        assert_eq!(n.b.stats().bytes_delivered, 20_000);
        n
    };
    // Answered: 3 allowed, far more probes sent, the connection stays.
    let mut n = closed(3);
    n.run_until(300 * NS_PER_S);
    assert!(
        n.a.stats().window_probes > 6,
        "{}",
        n.a.stats().window_probes
    );
    assert!(n.a.gave_up().is_none());
    // Unanswered: every ACK from B is lost from now on.
    let mut n = closed(3);
    let probes_before = n.a.stats().window_probes;
    n.drop = Box::new(|s, _| !s.a_to_b);
    n.run_until(300 * NS_PER_S);
    let g = n.a.gave_up().expect("gave up");
    assert_eq!(g.what, GiveUpKind::Probe);
    assert_eq!((g.retransmissions, g.limit), (3, 3));
    assert_eq!(n.a.stats().window_probes - probes_before, 3);
    assert_eq!(
        n.count_a(|e| matches!(
            e,
            Event::GaveUp {
                what: GiveUpKind::Probe,
                ..
            }
        )),
        1
    );
    // nothing is sent after giving up
    let last = n
        .sent
        .iter()
        .filter(|s| s.a_to_b)
        .map(|s| s.t)
        .max()
        .unwrap();
    assert!(last <= g.at, "{last} > {}", g.at);
}
