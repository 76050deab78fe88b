//! The radio bearer with spurious-timeout detectors, end to end: every spurious timeout is
//! either flagged by the detector (on its own event row) or counted as a miss by cause.

use tcplab_sim::config::{
    AppConfig, Dist, FlowConfig, HopConfig, RlcConfig, RlcDirConfig, SimConfig, TcpConfigJson,
};
use tcplab_sim::{Sim, EVENT_KIND_NAMES};

#[allow(dead_code)] // this file uses run_checked only
mod common;
use common::run_checked;

fn cfg(detector: &str, seed: u64) -> SimConfig {
    let dir = |rate| RlcDirConfig {
        rate_bps: rate,
        bler: 0.006,
        fade_bler: 0.0,
        delay_ns: 130_000_000,
        queue_packets: 100,
        aqm: None,
    };
    let mut tcp = TcpConfigJson {
        mss: 1460,
        initial_window_bytes: 4096,
        max_cwnd: Some(65_536),
        spurious_detection: detector.into(),
        ..TcpConfigJson::default()
    };
    tcp.rto.initial_ns = 4_000_000_000;
    tcp.rto.min_ns = 4_000_000_000;
    SimConfig {
        name: "sto3g".into(),
        duration_ns: 3_000_000_000_000,
        seed,
        sample_interval_ns: 0,
        trace: false,
        hops: vec![HopConfig::Rlc(RlcConfig {
            name: "radio".into(),
            pdu_bytes: 42,
            retx_interval_ns: 400_000_000,
            max_dat: 10,
            down: dir(384_000),
            up: dir(64_000),
            spike_rate_per_s: 0.03,
            spike_duration_s: Dist::Uniform { lo: 1.0, hi: 9.0 },
            stalls_ns: vec![],
            fade_rate_per_s: 0.0,
            fade_duration_s: None,
        })],
        flows: vec![FlowConfig {
            name: "dl".into(),
            path: vec![0],
            start_ns: 0,
            tcp,
            app: AppConfig::Downloads {
                sizes: Dist::Const { value: 300_000.0 },
                think_ns: Dist::Const { value: 2e9 },
                count: Some(20),
            },
        }],
        cross: vec![],
        pcap: vec![],
        pings: vec![],
        record: Default::default(),
    }
}

#[test]
fn detections_and_misses_add_up_to_ground_truth() {
    let kind_timeout = EVENT_KIND_NAMES
        .iter()
        .position(|k| *k == "timeout")
        .unwrap() as u8;
    for det in ["frto", "eifel", "dsack"] {
        let out = Sim::new(cfg(det, 3)).unwrap().run(None).unwrap();
        let s = out.summary.as_ref().unwrap();
        assert!(s.flows[0].spurious_timeouts > 0, "{det}: no STO to look at");
        let f = &s.flows[0];
        let missed = f.spurious_missed_finished
            + f.spurious_missed_no_window
            + f.spurious_missed_dupack
            + f.spurious_missed_other;
        // Each spurious timeout is detected or missed; nothing genuine is flagged.
        let flagged_spurious = (0..out.ev_kind.len())
            .filter(|&i| out.ev_kind[i] == kind_timeout && out.ev_detected[i] == 1)
            .inspect(|&i| assert_eq!(out.ev_spurious[i], 1, "{det}: genuine timeout flagged"))
            .count() as u64;
        assert_eq!(flagged_spurious, f.spurious_detected, "{det}");
        assert_eq!(f.spurious_detected + missed, f.spurious_timeouts, "{det}");
    }
    // Without a detector nothing is flagged and no miss is classified.
    let out = Sim::new(cfg("none", 3)).unwrap().run(None).unwrap();
    let f = &out.summary.as_ref().unwrap().flows[0];
    assert_eq!(f.spurious_detected, 0);
    assert_eq!(f.spurious_missed_other, 0);
}

/// The summary row of the radio's down (data) buffer, of one bulk download
/// over a clean bearer with the buffer's discipline `aqm`.
fn bulk_row(aqm: Option<&str>) -> serde_json::Value {
    let mut c = cfg("none", 1);
    c.duration_ns = 60_000_000_000;
    let HopConfig::Rlc(r) = &mut c.hops[0] else {
        unreachable!()
    };
    r.spike_rate_per_s = 0.0;
    r.down.queue_packets = 1000;
    r.down.aqm = aqm.map(|a| serde_json::from_str(a).unwrap());
    c.flows[0].tcp.max_cwnd = None;
    c.flows[0].tcp.rcv_buf = 4 << 20;
    c.flows[0].app = AppConfig::Bulk { bytes: None };
    run_checked(c).1["links"][0].clone()
}

#[test]
fn a_codel_rlc_buffer_drops_at_the_radio_and_keeps_the_sojourn_short() {
    let plain = bulk_row(None);
    assert!(plain.get("aqm").is_none() && plain.get("sojourn_p50_ms").is_none());
    let codel = bulk_row(Some(r#"{"kind": "droptail"}"#));
    // A DropTail discipline fills the 1000-packet buffer: seconds of sojourn.
    assert!(
        codel["sojourn_p50_ms"].as_f64().unwrap() > 1000.0,
        "{codel}"
    );
    let codel = bulk_row(Some(r#"{"kind": "codel"}"#));
    assert_eq!(codel["aqm"], "codel");
    assert!(codel["drops_aqm"].as_u64().unwrap() > 0, "{codel}");
    // One 1500-byte packet takes 31 ms at 384 kbit/s: CoDel holds the
    // sojourn to a few packets' time, where DropTail holds seconds.
    let p50 = codel["sojourn_p50_ms"].as_f64().unwrap();
    assert!(p50 < 200.0, "{codel}");
    assert!(codel["tx_packets"].as_u64().unwrap() > 500, "{codel}");
}
