//! `rcv_window = "linux"` end to end: the receiver's advertised window grows
//! (rcv_ssthresh towards a window clamp that DRS raises once per RTT), and
//! every segment that grows it is ACKed at once; with `"fixed"` the window
//! stays put and only the 16 quick ACKs of the start are per segment.

mod harness;

use harness::{cfg, Net};
use tcplab_tcp::rcv_window::RcvWindowKind;
use tcplab_tcp::{AckPolicyConfig, Config, NS_PER_MS, NS_PER_S};

const MSS: u64 = 1448;

fn receiver(kind: RcvWindowKind) -> Config {
    Config {
        mss: MSS as u32,
        rcv_buf: 32 << 20,
        rcv_window: kind,
        ack: AckPolicyConfig {
            every_n: 2,
            max_delay: 40 * NS_PER_MS,
            immediate_on_ooo: true,
            quickack: 16,
            periodic: false,
        },
        ..cfg()
    }
}

/// B's ACKs of data after the handshake: (bytes newly acknowledged, window in bytes).
fn acks(kind: RcvWindowKind) -> Vec<(u64, u64)> {
    let sender = Config {
        mss: MSS as u32,
        initial_window: 10 * MSS,
        ..cfg()
    };
    let mut n = Net::new(sender, receiver(kind));
    n.a.app_supply(4_000_000);
    n.a.close();
    n.run_until(NS_PER_S);
    let wscale = n
        .sent
        .iter()
        .find(|s| !s.a_to_b && s.seg.flags.syn())
        .and_then(|s| s.seg.options.wscale)
        .expect("B offers window scaling");
    let mut out = vec![];
    let mut prev: Option<u32> = None;
    for s in n.sent.iter().filter(|s| !s.a_to_b) {
        let ack = s.seg.ack;
        if s.seg.flags.syn() {
            prev = Some(ack);
            continue;
        }
        if let Some(p) = prev {
            let adv = ack.wrapping_sub(p) as u64;
            if adv > 0 {
                out.push((adv, (s.seg.window as u64) << wscale));
            }
        }
        prev = Some(ack);
    }
    out
}

#[test]
fn linux_receiver_grows_its_window_and_acks_each_growing_segment() {
    let a = acks(RcvWindowKind::Linux);
    let first = a[0].1;
    let last = a.last().unwrap().1;
    // tcp_rmem[1] = 131072 at the measured len/truesize (158/256): a
    // 56-segment window once the first full segment arrived (80896 bytes).
    assert!(a.iter().any(|&(_, w)| w == 80896), "{:?}", &a[..30]);
    assert!(first < 80896, "starts below the clamp: {first}");
    // DRS raised the clamp: the window ends well above where it started.
    assert!(last > 3 * 80896, "window {last}");
    // Never shrinks.
    assert!(a.windows(2).all(|p| p[1].1 >= p[0].1));
    // Every ACK that announces a larger window covers at most two segments
    // (the quick ACK of the growing segment), and there are many more
    // per-segment ACKs than the 16 of the start.
    assert!(a
        .windows(2)
        .filter(|p| p[1].1 > p[0].1)
        .all(|p| p[1].0 <= 2 * MSS));
    let single = a.iter().filter(|&&(adv, _)| adv == MSS).count();
    assert!(single > 60, "{single} per-segment ACKs");
}

#[test]
fn fixed_receiver_keeps_its_window_and_acks_every_second_segment() {
    let a = acks(RcvWindowKind::Fixed);
    let single = a.iter().filter(|&&(adv, _)| adv == MSS).count();
    // The 16 quick ACKs of the start (plus a delayed ACK or two at the end
    // of a flight), then every second segment.
    assert!((16..=22).contains(&single), "{single} per-segment ACKs");
    // The whole 32 MiB buffer (minus nothing unread) is offered throughout.
    assert!(a.iter().all(|&(_, w)| w >= 32 << 20 >> 1), "{:?}", &a[..5]);
}
