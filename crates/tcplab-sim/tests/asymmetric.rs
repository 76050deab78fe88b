//! The asymmetric-link additions end to end: serial framing and the ping
//! probe's RTT, ACK filtering / decimation (RFC 3449 §5.2.1/§5.2.2), receiver
//! ACK congestion control (RFC 3449 §4.3) and ABC (RFC 3465) on a small
//! 10 Mbps / 32 kbps case.

use serde_json::Value;
use tcplab_sim::config::{
    example_p2p, AckCcJson, AckFilterLinkConfig, AppConfig, HopConfig, LinkConfig, PingConfig,
    SimConfig,
};
use tcplab_sim::Sim;

const S: u64 = 1_000_000_000;

/// 10 Mbps Ethernet down, 32 kbps PPP 8N1 up, no propagation delay, the
/// paper's BSD-like TCP with a 32 KiB window.
fn asym(window: u64, seconds: u64) -> SimConfig {
    let mut c = example_p2p(seconds * S, 0.0);
    let HopConfig::Link(l) = &mut c.hops[0] else {
        unreachable!()
    };
    for d in [&mut l.fwd, &mut l.rev] {
        d.delay_ns = 0;
        d.queue = tcplab_sim::config::QueueConfig::Packets { limit: 50 };
    }
    l.fwd.overhead_bytes = 26;
    l.rev.rate_bps = 32_000;
    l.rev.overhead_bytes = 8;
    l.rev.bits_per_byte = 10;
    let t = &mut c.flows[0].tcp;
    t.cc = "reno".into();
    t.sack = false;
    t.dsack = false;
    t.timestamps = false;
    t.window_scaling = false;
    t.mss = 1460;
    t.rcv_buf = window;
    t.snd_buf = window;
    t.initial_window_bytes = 1460;
    c.sample_interval_ns = 0;
    c
}

fn with_filter(mut c: SimConfig, threshold: u32) -> SimConfig {
    let HopConfig::Link(LinkConfig { name, fwd, rev }) = c.hops[0].clone() else {
        unreachable!()
    };
    c.hops[0] = HopConfig::AckFilterLink(AckFilterLinkConfig {
        name,
        fwd,
        rev,
        filter_threshold: threshold,
    });
    c
}

fn run(c: SimConfig) -> Value {
    let out = Sim::new(c).unwrap().run(None).unwrap();
    let s: Value = serde_json::from_str(&out.summary.unwrap().to_json()).unwrap();
    assert_eq!(
        s["invariants"]["violations"].as_array().unwrap().len(),
        0,
        "{}",
        s["invariants"]["violations"]
    );
    s
}

fn goodput(s: &Value) -> f64 {
    s["flows"][0]["goodput_bps"].as_f64().unwrap()
}

/// A 40-byte ping from the terminal at 9600 bps 8N1: up 48 B × 10 bits =
/// 50 ms, down (40 + 26) B at 10 Mbps = 52.8 µs.
#[test]
fn ping_rtt_on_a_serial_uplink() {
    let mut c = asym(8760, 10);
    let HopConfig::Link(l) = &mut c.hops[0] else {
        unreachable!()
    };
    l.rev.rate_bps = 9600;
    c.flows[0].app = AppConfig::Bulk { bytes: Some(1460) };
    c.pings.push(PingConfig {
        name: "p".into(),
        path: vec![0],
        packet_bytes: 40,
        interval_ns: 2 * S,
        start_ns: S,
        stop_ns: 10 * S,
        from_receiver: true,
    });
    let mut from_sender = c.pings[0].clone();
    from_sender.name = "q".into();
    from_sender.from_receiver = false;
    from_sender.start_ns = S + S / 2;
    c.pings.push(from_sender);
    let s = run(c);
    for p in s["pings"].as_array().unwrap() {
        assert_eq!(p["sent"], 5);
        assert_eq!(p["received"], 5);
        let rtt = p["rtt_mean_ms"].as_f64().unwrap();
        assert!((rtt - 50.0528).abs() < 1e-3, "{rtt}");
    }
}

/// RFC 3449 §5.2.1: with a 32 KiB window the ACK queue on a 32 kbps uplink
/// is long; replacing queued ACKs by the newest lets each transmitted ACK
/// cover far more data, so the download is no longer bound by one ACK per
/// two segments per 15 ms. Decimation with a huge threshold filters nothing.
#[test]
fn ack_filtering_lifts_the_ack_clock_bound() {
    let base = run(asym(32768, 10));
    let af = run(with_filter(asym(32768, 10), 0));
    let never = run(with_filter(asym(32768, 10), 1_000_000));
    let filtered = |s: &Value| s["links"][1]["acks_filtered"].as_u64().unwrap();
    // the ACK-clock bound: 2 × 1460 B per 15 ms = 1.557 Mbit/s
    assert!(goodput(&base) < 1.6e6, "{}", goodput(&base));
    assert!(goodput(&af) > 3.0 * goodput(&base), "{}", goodput(&af));
    assert!(filtered(&af) > 1000);
    assert_eq!(filtered(&never), 0);
    assert!((goodput(&never) - goodput(&base)).abs() < 1e-6 * goodput(&base));
}

/// RFC 3449 §4.3: the receiver raises its ACK ratio while its uplink queue
/// is congested: fewer ACKs per byte, more goodput.
#[test]
fn ack_congestion_control_sends_fewer_acks() {
    let base = run(asym(32768, 10));
    let mut c = asym(32768, 10);
    c.flows[0].tcp.ack_cc = Some(AckCcJson {
        queue_threshold: 2,
        max_ratio: 0,
    });
    let acc = run(c);
    let per_mb = |s: &Value| {
        s["flows"][0]["acks_sent"].as_f64().unwrap()
            / s["flows"][0]["bytes_delivered"].as_f64().unwrap()
            * 1e6
    };
    assert!(
        per_mb(&acc) < 0.5 * per_mb(&base),
        "{} vs {}",
        per_mb(&acc),
        per_mb(&base)
    );
    assert!(goodput(&acc) > 2.0 * goodput(&base), "{}", goodput(&acc));
}

/// RFC 3465 §2.2: with ACK filtering each ACK covers many segments; L = 2
/// lets slow start use them, so a 64 KB transfer ends sooner than with L = 1.
#[test]
fn byte_counting_speeds_up_slow_start_with_stretch_acks() {
    let time = |l: u32| {
        let mut c = with_filter(asym(65535, 10), 0);
        c.flows[0].app = AppConfig::Bulk { bytes: Some(65536) };
        c.flows[0].tcp.abc_l = l;
        run(c)["flows"][0]["duration_s"].as_f64().unwrap()
    };
    let (l1, l2) = (time(1), time(2));
    assert!(l2 < 0.95 * l1, "L=1 {l1} s, L=2 {l2} s");
}

/// The mitigations keep every simulator invariant (delivery, conservation,
/// scoreboard) under random loss on both directions, with and without SACK,
/// with short and long queues: a finite transfer is delivered in full.
#[test]
fn mitigations_keep_invariants_under_loss() {
    use tcplab_sim::config::{LossConfig, QueueConfig};
    for (i, (loss, sack, threshold, acc, queue)) in [
        (0.01, false, 0, false, 5),
        (0.01, true, 0, true, 50),
        (0.05, true, 2, true, 5),
        (0.05, false, 2, false, 50),
        (0.02, true, 0, false, 3),
        (0.02, false, 1, true, 3),
    ]
    .into_iter()
    .enumerate()
    {
        let mut c = with_filter(asym(65535, 120), threshold);
        c.seed = i as u64 + 1;
        let HopConfig::AckFilterLink(l) = &mut c.hops[0] else {
            unreachable!()
        };
        l.fwd.loss = LossConfig::Bernoulli { p: loss };
        l.rev.loss = LossConfig::Bernoulli { p: loss / 2.0 };
        l.fwd.queue = QueueConfig::Packets { limit: queue };
        l.rev.queue = QueueConfig::Packets { limit: queue };
        let t = &mut c.flows[0].tcp;
        t.sack = sack;
        t.dsack = sack;
        t.abc_l = 2;
        if acc {
            t.ack_cc = Some(AckCcJson {
                queue_threshold: 1,
                max_ratio: 0,
            });
        }
        c.flows[0].app = AppConfig::Bulk {
            bytes: Some(2_000_000),
        };
        let s = run(c);
        assert_eq!(
            s["flows"][0]["bytes_delivered"], 2_000_000,
            "case {i}: {}",
            s["invariants"]
        );
    }
}
