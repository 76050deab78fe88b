//! The segment trace (`SimConfig::trace`) only adds outputs: the same run with and without it
//! has the same summary, events and time series, and the trace agrees with the counters.

use tcplab_sim::config::example_p2p;
use tcplab_sim::{Output, Sim, EVENT_KIND_NAMES, SEGMENT_KIND_NAMES};

fn run(trace: bool) -> Output {
    let mut cfg = example_p2p(20_000_000_000, 0.001);
    cfg.trace = trace;
    Sim::new(cfg).unwrap().run(None).unwrap()
}

#[test]
fn trace_adds_rows_and_changes_nothing_else() {
    let (plain, traced) = (run(false), run(true));
    let (ps, ts) = (
        plain.summary.as_ref().unwrap(),
        traced.summary.as_ref().unwrap(),
    );
    assert_eq!(ps.to_json(), ts.to_json());
    assert_eq!(plain.ev_t, traced.ev_t);
    assert_eq!(plain.ev_seq, traced.ev_seq);
    assert_eq!(plain.ts_cwnd, traced.ts_cwnd);
    assert!(plain.seg_t.is_empty() && plain.q_t.is_empty());

    let kind = |name: &str| SEGMENT_KIND_NAMES.iter().position(|k| *k == name).unwrap() as u8;
    let count = |k: u8| traced.seg_kind.iter().filter(|&&x| x == k).count() as u64;
    let flow = &ts.flows[0];
    assert_eq!(count(kind("send")), flow.data_segments_sent);
    assert!(count(kind("arrive")) <= flow.data_segments_sent);
    assert!(
        count(kind("ack")) > 0 && count(kind("sack")) > 0,
        "a lossy run has SACK blocks"
    );
    // every retransmission in the event log is a `send` row at the same time and offset
    let rtx = EVENT_KIND_NAMES
        .iter()
        .position(|k| *k == "retransmit")
        .unwrap() as u8;
    for i in 0..traced.ev_t.len() {
        if traced.ev_kind[i] == rtx && traced.ev_seq[i] > 0 {
            let found = (0..traced.seg_t.len()).any(|j| {
                traced.seg_kind[j] == kind("send")
                    && traced.seg_t[j] == traced.ev_t[i]
                    && traced.seg_seq[j] == traced.ev_seq[i]
            });
            assert!(
                found,
                "retransmission at {} not in the trace",
                traced.ev_t[i]
            );
        }
    }
    // one queue sample per direction of the link per sample interval (20 s / 100 ms, and t = 0)
    assert_eq!(traced.q_t.len(), 2 * 201);
    assert!(traced.q_packets.iter().any(|&n| n > 0));
}
