//! Growth while the sender is not cwnd-limited, on the two-endpoint harness
//! (10 Mb/s, 20 ms each way): Linux's controllers grow cwnd only through
//! tcp_is_cwnd_limited() — a window that was cwnd-limited, or, in slow start,
//! a cwnd below twice what was outstanding (tcp_cwnd_validate's
//! `max_packets_out`). tcplab's other controllers grow only while the
//! transmit loop last stopped at cwnd or with at least half of it in flight,
//! and not when it last stopped for want of data.

mod harness;

use harness::{cfg, Net};
use tcplab_tcp::{Config, NS_PER_MS};

/// An application that offers 6 segments every 100 ms (2.5 round trips):
/// each burst leaves at once and is acknowledged before the next, so at most
/// 6 of the initial window's 10 are ever outstanding. Returns the sender's
/// cwnd in segments after 2 s.
fn cwnd_after_paced_writes(c: Config) -> u64 {
    let mut n = Net::new(c.clone(), c);
    for k in 1..=20u64 {
        n.a.app_supply(k * 6_000);
        n.run_until(k * 100 * NS_PER_MS);
    }
    assert_eq!(n.b.stats().bytes_delivered, 120_000);
    n.a.cwnd() / 1000
}

#[test]
fn slow_start_grows_only_to_twice_what_was_outstanding_in_linux() {
    let rfc = cwnd_after_paced_writes(cfg());
    let linux = cwnd_after_paced_writes(Config {
        reno_linux: true,
        ..cfg()
    });
    // 6 outstanding: 2·6 = 12 > 10, so Linux's slow start grows cwnd to 12
    // and no further; tcplab's own rule sees a loop that ran out of data
    // after every burst and never grows.
    assert_eq!(linux, 12, "Linux: cwnd < 2 · max_packets_out");
    assert_eq!(rfc, 10, "tcplab's own rule: application-limited throughout");
}
