//! HyStart++ (RFC 9406) end to end on the canonical 10 Mbit/s, 100 ms RTT
//! path with a 100-packet DropTail queue (BDP ≈ 86 packets).

use tcplab_sim::config::{example_p2p, HopConfig, QueueConfig};
use tcplab_sim::output::EventKind;
use tcplab_sim::Sim;

const S: u64 = 1_000_000_000;
const INF: u64 = u64::MAX / 8;

#[derive(Debug)]
struct Run {
    /// First exit from slow start: HyStart++'s first CSS entry, else the
    /// time ssthresh first became finite (a loss). (ns, cwnd segments).
    ss_exit: Option<(u64, f64)>,
    /// Time of the first queue drop, ns.
    first_drop_t: Option<u64>,
    /// Retransmissions in the first 10 s (the slow start and its recovery).
    early_rtx: usize,
    goodput_bps: f64,
    rtx: u64,
    css_entries: Option<u64>,
}

fn run(cc: &str, hystart: bool, queue: u32, abc_l: u32) -> Run {
    let mut cfg = example_p2p(30 * S, 0.0);
    cfg.sample_interval_ns = 10_000_000;
    let HopConfig::Link(l) = &mut cfg.hops[0] else {
        unreachable!()
    };
    l.fwd.queue = QueueConfig::Packets { limit: queue };
    let t = &mut cfg.flows[0].tcp;
    t.cc = cc.into();
    t.hystart = hystart;
    t.abc_l = abc_l;
    let out = Sim::new(cfg).unwrap().run(None).unwrap();
    let s = out.summary.as_ref().unwrap();
    assert!(s.violations.is_empty(), "{:?}", s.violations);
    let f = &s.flows[0];
    let out = &out;
    let ev = |kind: EventKind| {
        (0..out.ev_t.len())
            .filter(move |&i| out.ev_kind[i] == kind as u8)
            .map(|i| out.ev_t[i] as u64)
    };
    let ss_exit = match (f.hystart_first_css_s, f.hystart_first_css_cwnd) {
        (Some(t), Some(c)) => Some(((t * 1e9).round() as u64, c as f64 / 1448.0)),
        _ => out
            .ts_ssthresh
            .iter()
            .position(|&x| x < INF)
            .map(|i| (out.ts_t[i] as u64, out.ts_cwnd[i] as f64 / 1448.0)),
    };
    let r = Run {
        ss_exit,
        first_drop_t: ev(EventKind::DropQueue).next(),
        early_rtx: ev(EventKind::Retransmit).filter(|&t| t < 10 * S).count(),
        goodput_bps: f.goodput_bps,
        rtx: f.retransmitted_segments,
        css_entries: f.hystart_css_entries,
    };
    eprintln!("{cc} hystart={hystart} queue={queue} abc_l={abc_l}: {r:?}");
    r
}

#[test]
fn hystart_off_reports_nothing() {
    let r = run("cubic", false, 100, 1);
    assert_eq!(r.css_entries, None);
}

/// CUBIC with Linux-like byte counting (abc_l = 2, so an ACK for 2
/// segments opens cwnd by 2 as HyStart++'s L = 8 does): without HyStart++
/// slow start doubles cwnd per RTT until the queue overflows; with it CUBIC
/// enters Conservative Slow Start before the first drop (the burst already
/// sent still overflows the queue a little) and retransmits far less.
#[test]
fn cubic_hystart_leaves_slow_start_before_the_first_loss() {
    let off = run("cubic", false, 100, 2);
    let on = run("cubic", true, 100, 2);
    let (exit_t, exit_cwnd) = on.ss_exit.unwrap();
    assert!(on.css_entries.unwrap() >= 1);
    assert!(
        exit_t < on.first_drop_t.unwrap(),
        "CSS at {exit_t} ns, first drop at {:?}",
        on.first_drop_t
    );
    // without HyStart++ slow start ends only with the losses it causes
    let (off_t, off_cwnd) = off.ss_exit.unwrap();
    assert!(off.first_drop_t.unwrap() < off_t);
    assert!(exit_cwnd < off_cwnd, "{exit_cwnd} vs {off_cwnd} segments");
    assert!(
        on.early_rtx * 3 < off.early_rtx,
        "{} vs {} retransmissions in the first 10 s",
        on.early_rtx,
        off.early_rtx
    );
    assert!(on.rtx * 3 < off.rtx);
    assert!(on.goodput_bps > off.goodput_bps);
}

/// The same for NewReno (the module is shared), with a deeper queue.
#[test]
fn newreno_hystart_too() {
    let off = run("newreno", false, 200, 2);
    let on = run("newreno", true, 200, 2);
    assert!(on.ss_exit.unwrap().0 < on.first_drop_t.unwrap());
    assert!(on.early_rtx * 3 < off.early_rtx);
}
