//! The 802.11 DCF cell against Bianchi's saturation model, before TCP runs on it.

use serde_json::json;
use tcplab_sim::wlan::{bianchi, Timing, WlanConfig};
use tcplab_sim::{run_json, SimConfig};

/// `n` stations, each with a CBR source far above its share (saturated queues), one AP.
fn saturated(n: usize, secs: u64) -> serde_json::Value {
    let stations: Vec<_> = (0..n)
        .map(|i| json!({"name": format!("sta{i}"), "cross": [i]}))
        .collect();
    let cross: Vec<_> = (0..n)
        .map(|i| {
            json!({"name": format!("cbr{i}"), "path": [0], "rate_bps": 60_000_000u64,
                   "packet_bytes": 1500, "start_ns": 0, "stop_ns": secs * 1_000_000_000})
        })
        .collect();
    json!({
        "name": "bianchi", "duration_ns": secs * 1_000_000_000u64, "seed": 7,
        "sample_interval_ns": 0,
        "hops": [{"kind": "wlan", "name": "cell", "sta_queue": 50,
                  "aps": [{"name": "ap"}], "stations": stations}],
        "flows": [], "cross": cross,
    })
}

#[test]
fn saturation_throughput_matches_bianchi() {
    let w: WlanConfig =
        serde_json::from_value(json!({"name": "c", "aps": [], "stations": []})).unwrap();
    let t = Timing::new(&w);
    let secs = 4;
    for n in 1..=10usize {
        let cfg = saturated(n, secs);
        let out = run_json(&cfg.to_string(), None).unwrap();
        let s = out.summary.unwrap();
        assert!(s.violations.is_empty(), "{:?}", s.violations);
        let received: u64 = s.cross.iter().map(|c| c.2).sum();
        let sim = received as f64 * 1500.0 * 8.0 / secs as f64;
        // CWmin 15 → W = 16; CWmax 1023 → m = 6 (Bianchi 2000 eq. (7)).
        let (_, p, model) = bianchi(n as u32, 16, 6, &t, 1500);
        let err = (sim - model).abs() / model;
        eprintln!(
            "n={n} sim {:.2} Mb/s model {:.2} Mb/s p={p:.3} err {:.2}%",
            sim / 1e6,
            model / 1e6,
            err * 100.0
        );
        assert!(err < 0.05, "n={n}: sim {sim} vs Bianchi {model}");
    }
}

#[test]
fn wlan_config_errors_name_the_field() {
    let mut cfg = saturated(2, 1);
    cfg["hops"][0]["cw_min"] = json!(20);
    let e = run_json(&cfg.to_string(), None).unwrap_err();
    assert!(e.starts_with("hops[0].cw_min: must be 2^k - 1"), "{e}");
    let mut cfg = saturated(2, 1);
    cfg["hops"][0]["stations"][1]["cross"] = json!([0]);
    let e = run_json(&cfg.to_string(), None).unwrap_err();
    assert!(e.contains("already on another station"), "{e}");
    let mut cfg = saturated(2, 1);
    cfg["hops"][0]["data_rate_bps"] = json!(50_000_000);
    let e = run_json(&cfg.to_string(), None).unwrap_err();
    assert!(
        e.starts_with("hops[0].data_rate: must be an 802.11g OFDM rate"),
        "{e}"
    );
    let _: SimConfig = serde_json::from_value(saturated(1, 1)).unwrap();
}
