//! The RFC 3168 sender's CWR reduction, driven ACK by ACK (sans-IO: the test
//! carries every segment between the two endpoints itself and chooses which
//! data segments arrive CE-marked).

use tcplab_tcp::ecn::{EcnMode, CE};
use tcplab_tcp::{Config, Connection, Flags, Segment, Time, NS_PER_MS};

const ONE_WAY: Time = 20 * NS_PER_MS;

fn ecn_cfg() -> Config {
    Config {
        mss: 1000,
        initial_window: 10_000,
        ecn: EcnMode::On,
        ..Config::default()
    }
}

/// Every segment `c` has to send now.
fn drain(c: &mut Connection, now: Time) -> Vec<Segment> {
    std::iter::from_fn(|| c.poll_transmit(now)).collect()
}

/// A's initial sequence number.
const ISS_A: u32 = 1_000;

/// A (data sender) and B, both with `cfg`, after the handshake, at time `now`.
fn established_with(cfg: Config) -> (Connection, Connection, Time) {
    let (mut a, mut b) = (
        Connection::client(cfg.clone(), 40000, 5001, ISS_A, 0),
        Connection::server(cfg, 5001, 40000, 9_000, 0),
    );
    let mut now = 0;
    for s in drain(&mut a, now) {
        b.handle_segment(&s, now + ONE_WAY);
    }
    now += ONE_WAY;
    for s in drain(&mut b, now) {
        a.handle_segment(&s, now + ONE_WAY);
    }
    now += ONE_WAY;
    assert!(a.ecn_ok() && b.ecn_ok(), "ECN negotiated");
    (a, b, now)
}

fn established() -> (Connection, Connection, Time) {
    established_with(ecn_cfg())
}

/// One round trip: A's data reaches B one way later (`ce` picks the
/// segments that arrive CE-marked); B's ACKs, its delayed ACK included, go
/// back to A one by one, and `on_ack(A, ack)` runs after each.
fn round(
    a: &mut Connection,
    b: &mut Connection,
    now: &mut Time,
    ce: &mut dyn FnMut(&Segment) -> bool,
    on_ack: &mut dyn FnMut(&Connection, &Segment),
) {
    let data = drain(a, *now);
    *now += ONE_WAY;
    let mut acks = Vec::new();
    for mut s in data {
        if s.payload_len > 0 && ce(&s) {
            s.ecn = CE;
        }
        b.handle_segment(&s, *now);
        acks.extend(drain(b, *now));
    }
    if let Some(t) = b.poll_timeout().filter(|&t| t <= *now + 200 * NS_PER_MS) {
        b.handle_timeout(t);
        acks.extend(drain(b, t));
    }
    *now += ONE_WAY;
    for s in acks {
        a.handle_segment(&s, *now);
        on_ack(a, &s);
    }
}

/// RFC 3168 §6.1.2 reacts to ECE at most once per window of data, and
/// Linux's `tcp_fastretrans_alert()` ends the CWR state first (step D,
/// once something above `high_seq` is acknowledged: `tcp_end_cwnd_reduction`)
/// and then lets the same ACK's ECE start the next one (step E,
/// `tcp_try_to_open()` → `tcp_enter_cwr()`). Here the segment that carries
/// CWR, the first one above `high_seq`, is CE-marked itself, so the ACK
/// that ends the first reduction carries ECE: the second reduction starts
/// on that ACK, from cwnd = the first reduction's ssthresh.
#[test]
fn an_ece_on_the_ack_that_ends_a_reduction_starts_the_next() {
    let (mut a, mut b, mut now) = established();
    a.app_supply(10_000_000);
    // Round 1: the third segment of the initial window arrives CE.
    let mut n = 0;
    let mut first_ssthresh = 0;
    round(
        &mut a,
        &mut b,
        &mut now,
        &mut |_| {
            n += 1;
            n == 3
        },
        &mut |a, ack| {
            if ack.flags.contains(Flags::ECE) && first_ssthresh == 0 {
                first_ssthresh = a.ssthresh();
            }
        },
    );
    // Every later ACK of the window echoed ECE too, but one window reduces once.
    assert_eq!(a.ecn_stats().cwr_reductions, 1);
    assert!(a.ecn_stats().ece_received > 1);
    assert!(first_ssthresh > 0 && first_ssthresh < u64::MAX / 8);
    // Round 2: the segment carrying CWR arrives CE as well.
    let mut cwr_seq = None;
    let mut seen = Vec::new();
    round(
        &mut a,
        &mut b,
        &mut now,
        &mut |s| {
            let cwr = s.flags.contains(Flags::CWR);
            if cwr {
                cwr_seq = Some(s.seq);
            }
            cwr
        },
        &mut |a, ack| {
            seen.push((
                ack.flags.contains(Flags::ECE),
                a.ecn_stats().cwr_reductions,
                a.ssthresh(),
                ack.ack,
            ))
        },
    );
    let cwr_seq = cwr_seq.expect("CWR sent on new data");
    // The ACKs below the CWR segment still belong to the first reduction;
    // the first one above its start ends it, carries ECE and starts the
    // second at once.
    let k = seen
        .iter()
        .position(|s| (s.3.wrapping_sub(cwr_seq) as i32) > 0)
        .expect("the CWR segment acknowledged");
    assert!(
        seen[k].0,
        "the ACK that ends the first reduction carries ECE"
    );
    assert!(seen[..k].iter().all(|s| s.1 == 1), "{seen:?}");
    assert_eq!(seen[k].1, 2, "the second reduction starts on it: {seen:?}");
    // RFC stack (ssthresh from FlightSize): the second ssthresh is below the first.
    assert!(seen[k].2 < first_ssthresh, "{seen:?} {first_ssthresh}");
    assert_eq!(a.ecn_stats().cwr_reductions, 2, "once per window");
}

/// RFC 8257 §3.2 as `dctcp_ece_ack_update()` runs it: a DCTCP receiver's
/// ECE follows each segment's CE state, and when the state changes while a
/// delayed ACK is held, that ACK goes out first, for the segments before
/// the change and with their state, then the immediate ACK for the new one.
/// Segments arrive one by one: unmarked, CE, CE, unmarked.
#[test]
fn a_dctcp_receiver_sends_the_held_ack_with_the_prior_ce_state_first() {
    let (mut a, mut b, mut now) = established_with(Config {
        cc: tcplab_tcp::CcKind::parse("dctcp").unwrap(),
        ..ecn_cfg()
    });
    a.app_supply(4_000);
    let data = drain(&mut a, now);
    assert_eq!(data.len(), 4);
    // (ack, ECE) of each ACK B sends after each segment.
    let mut acks = Vec::new();
    for (k, mut s) in data.into_iter().enumerate() {
        if k == 1 || k == 2 {
            s.ecn = CE;
        }
        now += NS_PER_MS;
        b.handle_segment(&s, now);
        let sent: Vec<_> = drain(&mut b, now)
            .iter()
            .map(|x| (x.ack.wrapping_sub(ISS_A + 1), x.flags.contains(Flags::ECE)))
            .collect();
        acks.push(sent);
    }
    assert_eq!(
        acks,
        vec![
            vec![],                            // held (every second segment)
            vec![(1000, false), (2000, true)], // the held ACK first, then the CE change
            vec![],                            // no change: held
            vec![(3000, true), (4000, false)], // the held ACK (CE), then the change
        ]
    );
}

/// The window a sender holds against CE marks spread evenly at rate `p`
/// (each data segment marked with probability p, one round trip per
/// round, no queue): mean cwnd in segments over rounds 500..1500.
fn window_under_marks(cc: &str, p: f64) -> f64 {
    let (mut a, mut b, mut now) = established_with(Config {
        cc: tcplab_tcp::CcKind::parse(cc).unwrap(),
        initial_ssthresh: Some(20_000),
        rcv_buf: 50_000_000,
        snd_buf: 50_000_000,
        ..ecn_cfg()
    });
    a.app_supply(u64::MAX / 4);
    let mut x: u64 = 12345;
    let (mut sum, mut n) = (0.0, 0.0);
    for r in 0..1500 {
        round(
            &mut a,
            &mut b,
            &mut now,
            &mut |_| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                ((x >> 11) as f64 / (1u64 << 53) as f64) < p
            },
            &mut |_, _| {},
        );
        if r >= 500 {
            sum += a.cwnd() as f64 / 1000.0;
            n += 1.0;
        }
    }
    sum / n
}

/// The response functions RFC 9332 §2.1 couples, measured on the senders
/// themselves (no queue): with marks spread evenly a Reno sender with
/// delayed ACKs holds W ≈ 0.9/√p (the model's 1.22/√p counts a segment of
/// growth per round trip, delayed ACKs give less), and DCTCP, whose alpha
/// stays above the 16/1024 floor here (it falls from 1 and never sees a
/// window without marks), holds W ≈ 1.2-1.5/p (the model's 2/p grows
/// during the reduction's round trip, which Linux's CWR state does not).
#[test]
fn reno_and_dctcp_answer_spread_marks_in_the_coupled_shapes() {
    for (p, pc) in [(0.02, 4e-4), (0.04, 1e-3)] {
        let w = window_under_marks("dctcp", p);
        eprintln!("dctcp p {p}: W {w:.1}, W·p {:.2}", w * p);
        assert!((1.1..1.9).contains(&(w * p)), "dctcp p {p}: W {w:.1}");
        let w = window_under_marks("reno", pc);
        eprintln!("reno p {pc}: W {w:.1}, W·√p {:.2}", w * pc.sqrt());
        assert!(
            (0.7..1.1).contains(&(w * pc.sqrt())),
            "reno p {pc}: W {w:.1}"
        );
    }
}
