//! Helpers the integration tests share.

use tcplab_sim::config::{SimConfig, TcpConfigJson};
use tcplab_sim::{Output, Sim};

const MS: u64 = 1_000_000;

/// The TCP of `stack = "linux"` (python/tcplab/scenario/parse.py, TCP_STACKS;
/// docs/linux-stack.md): CUBIC with tcp_cubic.c's arithmetic and HyStart,
/// PRR, RACK with TLP, F-RTO, ssthresh from cwnd, a 200 ms minimum RTO.
pub fn linux_tcp(ecn: bool) -> TcpConfigJson {
    let mut t = TcpConfigJson {
        cc: "cubic".into(),
        rcv_buf: 6 << 20,
        rcv_window: "linux".into(),
        ecn: if ecn { "on" } else { "off" }.into(),
        ca_at_ssthresh: true,
        abc_l: 2,
        recovery_cwnd: "prr".into(),
        loss_detection: "rack".into(),
        tlp: true,
        spurious_detection: "frto-linux".into(),
        spurious_response: "undo".into(),
        spurious_fr: "dsack".into(),
        spurious_fr_response: "undo".into(),
        ssthresh_from: "cwnd".into(),
        hystart_linux: true,
        cubic_linux: true,
        ..Default::default()
    };
    t.rto.min_ns = 200 * MS;
    t.rto.max_ns = 120_000 * MS;
    t.rto.estimator = "linux".into();
    t.rto.restart_on_rtx = true;
    t.ack.max_delay_ns = 40 * MS;
    t.ack.quickack = 16;
    t
}

/// Check `c` as the CLI does (fields, then the files it names), run it, assert
/// that the run reports no invariant violation, and return the output with its
/// summary as JSON.
pub fn run_checked(c: SimConfig) -> (Output, serde_json::Value) {
    tcplab_sim::validate::validate(&c).unwrap();
    tcplab_sim::validate::files(&c).unwrap();
    let out = Sim::new(c).unwrap().run(None).unwrap();
    let summary: serde_json::Value =
        serde_json::from_str(&out.summary.as_ref().unwrap().to_json()).unwrap();
    assert!(
        summary["invariants"]["violations"]
            .as_array()
            .unwrap()
            .is_empty(),
        "{}",
        summary["invariants"]
    );
    (out, summary)
}
