//! `snd_buf_model = Linux` end to end: the send buffer is charged in Linux's
//! truesize units and new skbs are taken only while it has room; the sending
//! application writes only when the socket is writable,
//! so a buffer-limited sender runs dry and its rate samples are marked
//! app-limited (`tcp_rate_check_app_limited` at each write); every byte still
//! arrives once.

mod harness;

use harness::{cfg, Net};
use tcplab_tcp::config::CcKind;
use tcplab_tcp::sndbuf::SndBufKind;
use tcplab_tcp::{Config, NS_PER_MS, NS_PER_S};

const MSS: u64 = 1448;
const TOTAL: u64 = 3_000_000;

/// A BBR sender whose `snd_buf` (`tcp_wmem[2]`) is well under the path's
/// BDP (10 Mb/s, 40 ms RTT: 50 KB): the buffer, not cwnd, limits it.
fn sender(model: SndBufKind, snd_buf: u64) -> Config {
    Config {
        mss: MSS as u32,
        initial_window: 10 * MSS,
        cc: CcKind::parse("bbr").unwrap(),
        snd_buf,
        snd_buf_model: model,
        ..cfg()
    }
}

struct Outcome {
    /// Most payload bytes past SND.UNA at any 1 ms step.
    max_outstanding: u64,
    /// Whether `tp->app_limited` was ever set after the first round trip.
    app_limited_seen: bool,
    delivered: u64,
}

fn run(model: SndBufKind, snd_buf: u64) -> Outcome {
    let receiver = Config {
        mss: MSS as u32,
        rcv_buf: 8 << 20,
        ..cfg()
    };
    let mut n = Net::new(sender(model, snd_buf), receiver);
    n.a.app_supply(TOTAL);
    n.a.close();
    let mut out = Outcome {
        max_outstanding: 0,
        app_limited_seen: false,
        delivered: 0,
    };
    let mut t = 0;
    while t < 10 * NS_PER_S {
        t += NS_PER_MS;
        n.run_until(t);
        let outstanding = n.a.snd_max().saturating_sub(n.a.snd_una());
        out.max_outstanding = out.max_outstanding.max(outstanding);
        if t > 200 * NS_PER_MS {
            let r = n.a.scoreboard().rate().expect("BBR estimates rates");
            out.app_limited_seen |= r.app_limited != 0;
        }
    }
    out.delivered = n.b.stats().bytes_read;
    out
}

#[test]
fn a_truesize_buffer_holds_less_payload_and_its_writer_runs_dry() {
    let snd_buf = 40_000;
    let fixed = run(SndBufKind::Fixed, snd_buf);
    let linux = run(SndBufKind::Linux, snd_buf);
    for o in [&fixed, &linux] {
        assert_eq!(o.delivered, TOTAL, "every byte delivered once");
    }
    // Fixed: snd_buf payload bytes in flight. Linux: a new skb only while
    // sk_wmem_queued < sk_sndbuf, but tcp_sendmsg fills the tail skb to the
    // size goal (at most 45 segments) without asking, so up to one skb more.
    assert!(
        fixed.max_outstanding > snd_buf - MSS,
        "{}",
        fixed.max_outstanding
    );
    assert!(fixed.max_outstanding <= snd_buf);
    assert!(
        linux.max_outstanding <= snd_buf + 45 * MSS,
        "{} of {snd_buf}",
        linux.max_outstanding
    );
    // The fixed application never runs dry; the Linux one does, and its
    // writes find less than an MSS unsent with cwnd open.
    assert!(!fixed.app_limited_seen);
    assert!(linux.app_limited_seen);
}

/// A Reno sender whose writer runs dry in slow start (`tcp_sndbuf_expand`
/// keeps `sk_sndbuf` near twice cwnd): each 64 KiB write leaves a short tail
/// skb (65 536 = 45 × 1448 + 376), which leaves before the next write fills
/// it. Linux holds a second one while the first is in flight (Minshall's
/// `tcp_nagle_check`) and counts each as a whole packet when it is
/// acknowledged (`tcp_skb_pcount`), so cwnd stays in whole segments.
#[test]
fn short_tails_go_one_at_a_time_and_count_as_whole_segments() {
    const RATE: u64 = 100_000_000;
    let snd = Config {
        mss: MSS as u32,
        initial_window: 10 * MSS,
        cc: CcKind::parse("reno").unwrap(),
        abc_l: 2,
        snd_buf: 4 << 20,
        snd_buf_model: SndBufKind::Linux,
        ..cfg()
    };
    let receiver = Config {
        mss: MSS as u32,
        rcv_buf: 8 << 20,
        ..cfg()
    };
    let mut n = Net::new(snd, receiver);
    n.ab.rate_bps = RATE;
    n.ba.rate_bps = RATE;
    n.a.app_supply(TOTAL);
    n.a.close();
    let (mut shorts_seen, mut most_in_flight) = (0, 0);
    let mut t = 0;
    while t < 5 * NS_PER_S {
        t += NS_PER_MS;
        n.run_until(t);
        let shorts =
            n.a.scoreboard()
                .iter()
                .filter(|s| s.end - s.start < MSS && s.end < 1 + TOTAL)
                .count();
        most_in_flight = most_in_flight.max(shorts);
        shorts_seen += shorts;
        assert_eq!(n.a.cwnd() % MSS, 0, "cwnd {} at {t} ns", n.a.cwnd());
    }
    assert!(shorts_seen > 0, "the writer ran dry and short tails left");
    assert_eq!(most_in_flight, 1, "Minshall: one short segment in flight");
    assert_eq!(n.b.stats().bytes_read, TOTAL, "every byte delivered once");
}
