//! Helpers the integration tests share.

use tcplab_sim::config::TcpConfigJson;

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
