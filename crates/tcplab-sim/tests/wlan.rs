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

#[test]
fn retry_limit_discards_after_that_many_attempts() {
    // Every attempt corrupted: each frame is tried exactly `retry_limit` times, then discarded.
    for limit in [5u32, 7] {
        let mut cfg = saturated(1, 3);
        cfg["hops"][0]["retry_limit"] = json!(limit);
        cfg["hops"][0]["stations"][0]["errors"] = json!({"kind": "bernoulli", "p": 1.0});
        let s = run_json(&cfg.to_string(), None).unwrap().summary.unwrap();
        assert!(s.violations.is_empty(), "{:?}", s.violations);
        let sta = &s.hops[0];
        let dropped = sta["drops_retry_data"].as_u64().unwrap();
        let attempts = sta["attempts"].as_u64().unwrap();
        assert!(dropped > 100);
        assert_eq!(sta["tx_packets"].as_u64().unwrap(), 0);
        // the frame on the air at the end has used some of its attempts
        assert!(attempts >= dropped * limit as u64 && attempts < (dropped + 1) * limit as u64);
        assert_eq!(sta["frame_errors"].as_u64().unwrap(), attempts);
    }
}

#[test]
fn saturated_stations_share_transmissions_equally() {
    let s = run_json(&saturated(5, 20).to_string(), None)
        .unwrap()
        .summary
        .unwrap();
    let rx: Vec<f64> = s.cross.iter().map(|c| c.2 as f64).collect();
    let mean = rx.iter().sum::<f64>() / rx.len() as f64;
    for r in &rx {
        assert!((r - mean).abs() / mean < 0.05, "{rx:?}");
    }
    // collisions happen and are counted on both colliders
    let coll: u64 = s
        .hops
        .iter()
        .map(|h| h["collisions"].as_u64().unwrap())
        .sum();
    assert!(coll > 100, "{coll}");
}

/// The AP is one more DCF contender (IEEE 802.11-2007 §9.2.5.2; docs/papers.md §4): with `n`
/// saturated stations and a backlogged AP, the AP gets about 1/(n+1) of the successful
/// transmissions, no more. Its queue is kept full by a downlink TCP flow whose window is capped
/// below the AP queue (300 of 1000 packets, from the first segment on), with no retry discards
/// (retry limit 255) and an RTO of at least 10 s, above the queue's delay (1.7 s at n = 10),
/// so it never loses a segment or times out. Four seeds pooled: one 20-s run's counts differ
/// by up to 8 % between any two contenders. (With uplink TCP the AP gets more than 1/(n+1)
/// only while stations have nothing to send.)
#[test]
fn a_backlogged_ap_gets_a_stations_share() {
    let secs = 20u64;
    for n in [2usize, 4, 7, 10] {
        let (mut ap, mut sta) = (0.0, 0.0);
        for seed in 7..=10u64 {
            let mut cfg = saturated(n, secs);
            cfg["seed"] = json!(seed);
            let hop = &mut cfg["hops"][0];
            hop["ap_queue"] = json!(1000);
            hop["retry_limit"] = json!(255);
            hop["stations"]
                .as_array_mut()
                .unwrap()
                .push(json!({"name": "rx", "down_flows": [0]}));
            let link = json!({"rate_bps": 1_000_000_000u64, "delay_ns": 100_000u64,
                              "queue": {"kind": "packets", "limit": 1000}});
            cfg["hops"]
                .as_array_mut()
                .unwrap()
                .push(json!({"kind": "link", "name": "wired", "fwd": link, "rev": link}));
            let w = 300 * 1460u64;
            cfg["flows"] = json!([{"name": "down", "path": [1, 0], "start_ns": 0,
                "app": {"kind": "bulk", "bytes": null},
                "tcp": {"cc": "newreno", "sack": true, "dsack": true, "timestamps": false,
                        "window_scaling": true, "mss": 1460, "rcv_buf": 4 << 20,
                        "snd_buf": 4 << 20, "initial_window_bytes": w,
                        "initial_ssthresh": null, "max_cwnd": w, "limited_transmit": true,
                        "rto": {"initial_ns": 10_000_000_000u64,
                                "min_ns": 10_000_000_000u64,
                                "max_ns": 120_000_000_000u64, "granularity_ns": 1_000_000u64,
                                "max_backoff": 16},
                        "ack": {"every_n": 8, "max_delay_ns": 40_000_000u64,
                                "immediate_on_ooo": true, "quickack": 0}}}]);
            let s = run_json(&cfg.to_string(), None).unwrap().summary.unwrap();
            assert!(s.violations.is_empty(), "{:?}", s.violations);
            let f = &s.flows[0];
            assert_eq!(
                (f.timeouts, f.retransmitted_segments),
                (0, 0),
                "n={n} seed {seed}: the AP's flow must stay backlogged"
            );
            let tx = |h: &serde_json::Value| h["tx_packets"].as_u64().unwrap() as f64;
            let role = |h: &serde_json::Value, r: &str| h["role"].as_str() == Some(r);
            ap += tx(s.hops.iter().find(|h| role(h, "ap")).unwrap());
            sta += s
                .hops
                .iter()
                .filter(|h| role(h, "station"))
                .take(n)
                .map(tx)
                .sum::<f64>();
        }
        let share = ap / (ap + sta);
        let ratio = ap / (sta / n as f64);
        eprintln!(
            "n={n}: AP share {share:.4} vs 1/(n+1) {:.4}, AP / mean station {ratio:.3}",
            1.0 / (n + 1) as f64
        );
        assert!((ratio - 1.0).abs() < 0.05, "n={n}: AP / station {ratio}");
    }
}

#[test]
fn a_station_leaving_an_otherwise_idle_cell_during_its_backoff() {
    // One saturated station alone in cell a walks to cell b: whenever the handover starts while
    // its backoff counts down (no frame on the air), cell a is left without contenders but with
    // a transmission start armed for the departed station. That start must be void (it once hit
    // an empty contender list). Several seeds so some handovers land in a backoff.
    for seed in 1..=12u64 {
        let secs = 3u64;
        let cfg = json!({
            "name": "leave", "duration_ns": secs * 1_000_000_000, "seed": seed,
            "sample_interval_ns": 0,
            "hops": [{"kind": "wlan", "name": "cell", "sta_queue": 50, "handover_ns": 5_000_000u64,
                      "aps": [{"name": "a", "x": 0.0}, {"name": "b", "x": 20.0}],
                      "stations": [{"name": "walker", "cross": [0], "ap": 0,
                                    "path": [{"t_ns": 0, "x": 0.0, "y": 0.0},
                                             {"t_ns": 2_000_000_000u64, "x": 20.0, "y": 0.0}]}]}],
            "flows": [],
            "cross": [{"name": "cbr", "path": [0], "rate_bps": 60_000_000u64,
                       "packet_bytes": 1500, "start_ns": 0, "stop_ns": secs * 1_000_000_000}],
        });
        let s = run_json(&cfg.to_string(), None).unwrap().summary.unwrap();
        let sta = s.hops.iter().find(|h| h["role"] == "station").unwrap();
        assert_eq!(sta["handover_ap"], json!([1]), "{sta}");
        // It keeps sending in cell b: about 2 s of a saturated single station (~27 Mbit/s).
        assert!(sta["tx_packets"].as_u64().unwrap() > 4000, "{sta}");
    }
}

#[test]
fn cell_interference_bursts_hit_every_station_at_once() {
    // Four saturated stations, retry limit 5, a cell-wide burst of 30 ms on average every 1 s:
    // every station loses frames at the retry limit inside the bursts; without the bursts
    // (collisions only) a run of 5 collisions practically never happens at 4 stations.
    let secs = 20;
    let mut cfg = saturated(4, secs);
    cfg["hops"][0]["retry_limit"] = json!(5);
    cfg["hops"][0]["aps"][0]["interference"] =
        json!({"mean_gap_ns": 1_000_000_000u64, "mean_burst_ns": 30_000_000u64});
    let s = run_json(&cfg.to_string(), None).unwrap().summary.unwrap();
    let ap = s.hops.iter().find(|h| h["role"] == "ap").unwrap();
    let bursts = ap["interference_bursts"].as_u64().unwrap();
    assert!((10..=32).contains(&bursts), "{bursts}");
    let mut quiet = cfg.clone();
    quiet["hops"][0]["aps"][0]
        .as_object_mut()
        .unwrap()
        .remove("interference");
    let q = run_json(&quiet.to_string(), None).unwrap().summary.unwrap();
    let stations = |x: &tcplab_sim::output::Summary| -> Vec<(u64, u64)> {
        x.hops
            .iter()
            .filter(|h| h["role"] == "station")
            .map(|h| {
                (
                    h["frame_errors"].as_u64().unwrap(),
                    h["drops_retry_data"].as_u64().unwrap(),
                )
            })
            .collect()
    };
    let (with, without) = (stations(&s), stations(&q));
    eprintln!("bursts {bursts}; (frame errors, discards) with {with:?}, without {without:?}");
    for (w, wo) in with.iter().zip(&without) {
        // Frame errors only from the bursts; each burst discards frames of every station.
        assert_eq!(wo.0, 0);
        assert!(w.0 > 5 * bursts, "{w:?}");
        assert!(w.1 >= wo.1 + bursts, "{w:?} vs {wo:?}, {bursts} bursts");
    }
    // Validation names the field.
    let mut bad = saturated(1, 1);
    bad["hops"][0]["aps"][0]["interference"] =
        json!({"mean_gap_ns": 0, "mean_burst_ns": 1_000_000u64});
    let e = run_json(&bad.to_string(), None).unwrap_err();
    assert!(
        e.starts_with("hops[0].aps[0].interference: mean_gap"),
        "{e}"
    );
    bad["hops"][0]["aps"][0]["interference"] =
        json!({"mean_gap_ns": 1, "mean_burst_ns": 1, "loss": 1.5});
    let e = run_json(&bad.to_string(), None).unwrap_err();
    assert!(
        e.starts_with("hops[0].aps[0].interference.loss: must be a probability"),
        "{e}"
    );
}

#[test]
fn a_station_queue_discipline_takes_the_place_of_its_droptail_queue() {
    // Three saturated stations: DropTail keeps their 50-packet queues full. CoDel drops at
    // dequeue and shortens the sojourn, though it cannot hold an unresponsive flood to its
    // target (its drop rate grows as the square root of its count).
    let run = |aqm: Option<&str>| {
        let mut cfg = saturated(3, 5);
        if let Some(a) = aqm {
            cfg["hops"][0]["sta_aqm"] = json!({ "kind": a });
        }
        run_json(&cfg.to_string(), None).unwrap().summary.unwrap()
    };
    let plain = run(None);
    let sta = &plain.hops[0];
    assert!(sta.get("aqm").is_none() && sta["drops_queue"].as_u64().unwrap() > 0);
    let dt = run(Some("droptail"));
    let codel = run(Some("codel"));
    let (d, c) = (&dt.hops[0], &codel.hops[0]);
    assert_eq!(
        (d["aqm"].as_str(), c["aqm"].as_str()),
        (Some("droptail"), Some("codel"))
    );
    // One station gets about a third of ~27 Mbit/s: a full 50-packet queue waits ~60 ms.
    let p50 = |r: &serde_json::Value| r["sojourn_p50_ms"].as_f64().unwrap();
    assert!(p50(d) > 30.0, "{d}");
    assert!(p50(c) < p50(d), "{c}\n{d}");
    assert!(c["drops_aqm"].as_u64().unwrap() > 0, "{c}");
    assert_eq!(d["drops_aqm"].as_u64(), Some(0));
    // Every drop at a managed queue is split into data and ACK.
    for r in [d, c] {
        let all = r["drops_queue"].as_u64().unwrap() + r["drops_aqm"].as_u64().unwrap();
        assert_eq!(all, r["drops_queue_data"].as_u64().unwrap(), "{r}");
    }
    // The AP rows have no discipline.
    let ap = &codel.hops[3];
    assert_eq!(ap["role"], "ap");
    assert!(ap.get("aqm").is_none());
}

#[test]
fn a_queue_discipline_with_moving_stations_is_refused() {
    let mut cfg = saturated(1, 1);
    cfg["hops"][0]["ap_aqm"] = json!({"kind": "codel", "target_ns": 0});
    let e = run_json(&cfg.to_string(), None).err().unwrap();
    assert!(e.contains("hops[0].ap_aqm.target: must be > 0"), "{e}");
    cfg["hops"][0]["ap_aqm"] = json!({"kind": "codel"});
    cfg["hops"][0]["aps"] = json!([{"name": "a"}, {"name": "b", "x": 100.0}]);
    cfg["hops"][0]["stations"][0]["path"] =
        json!([{"t_ns": 0, "x": 0.0, "y": 0.0}, {"t_ns": 1_000_000_000u64, "x": 100.0, "y": 0.0}]);
    let e = run_json(&cfg.to_string(), None).err().unwrap();
    assert!(
        e.contains("hops[0].ap_aqm: not supported with moving stations"),
        "{e}"
    );
}

#[test]
fn a_station_fade_hits_only_that_station() {
    // Three saturated stations, retry limit 5; station 0's link fades (30 ms on average every
    // 1 s, every attempt to or from it fails): it loses frames at the retry limit inside its
    // fades, the other two see no frame error at all.
    let mut cfg = saturated(3, 20);
    cfg["hops"][0]["retry_limit"] = json!(5);
    cfg["hops"][0]["stations"][0]["fading"] =
        json!({"mean_gap_ns": 1_000_000_000u64, "mean_burst_ns": 30_000_000u64});
    let s = run_json(&cfg.to_string(), None).unwrap().summary.unwrap();
    let sta: Vec<_> = s.hops.iter().filter(|h| h["role"] == "station").collect();
    let fades = sta[0]["fades"].as_u64().unwrap();
    assert!((10..=32).contains(&fades), "{fades}");
    assert!(sta[0]["frame_errors"].as_u64().unwrap() > 5 * fades);
    assert!(sta[0]["drops_retry_data"].as_u64().unwrap() >= fades);
    for other in &sta[1..] {
        assert_eq!(other["frame_errors"].as_u64(), Some(0), "{other}");
        // only a station with fading reports its fades
        assert!(other.get("fades").is_none());
    }
    let mut bad = saturated(1, 1);
    bad["hops"][0]["stations"][0]["fading"] =
        json!({"mean_gap_ns": 1_000_000u64, "mean_burst_ns": 0});
    let e = run_json(&bad.to_string(), None).unwrap_err();
    assert!(e.starts_with("hops[0].stations[0].fading: mean_gap"), "{e}");
}

#[test]
fn downlink_errors_hit_only_the_aps_frames_to_the_station() {
    // One TCP upload: the AP's frames to the station (the TCP ACKs) fail with probability 0.5
    // per attempt, the station's data frames never do.
    let cfg = |down: serde_json::Value| {
        json!({
            "name": "down", "duration_ns": 3_000_000_000u64, "seed": 3, "sample_interval_ns": 0,
            "hops": [{"kind": "wlan", "name": "cell", "retry_limit": 5, "aps": [{"name": "ap"}],
                      "stations": [{"name": "s", "flows": [0], "errors_down": down}]},
                     {"kind": "link", "name": "wired",
                      "fwd": {"rate_bps": 100_000_000u64, "delay_ns": 500_000u64,
                              "queue": {"kind": "packets", "limit": 1000}},
                      "rev": {"rate_bps": 100_000_000u64, "delay_ns": 500_000u64,
                              "queue": {"kind": "packets", "limit": 1000}}}],
            "flows": [{"name": "up", "path": [0, 1], "start_ns": 0,
                       "app": {"kind": "bulk", "bytes": null},
                       "tcp": {"cc": "newreno", "sack": true, "dsack": true, "timestamps": false,
                               "window_scaling": true, "mss": 1460, "rcv_buf": 1 << 20,
                               "snd_buf": 1 << 20, "initial_window_bytes": 2920,
                               "initial_ssthresh": null, "max_cwnd": null,
                               "limited_transmit": true,
                               "rto": {"initial_ns": 1_000_000_000u64, "min_ns": 200_000_000u64,
                                       "max_ns": 120_000_000_000u64, "granularity_ns": 1_000_000u64,
                                       "max_backoff": 16},
                               "ack": {"every_n": 1, "max_delay_ns": 40_000_000u64,
                                       "immediate_on_ooo": true, "quickack": 0}}}],
            "cross": [],
        })
    };
    let run = |down| {
        run_json(&cfg(down).to_string(), None)
            .unwrap()
            .summary
            .unwrap()
    };
    let s = run(json!({"kind": "bernoulli", "p": 0.5}));
    let (sta, ap) = (&s.hops[0], &s.hops[1]);
    assert_eq!(
        (sta["role"].as_str(), ap["role"].as_str()),
        (Some("station"), Some("ap"))
    );
    assert_eq!(sta["frame_errors"].as_u64(), Some(0), "{sta}");
    let n = |k: &str| ap[k].as_u64().unwrap();
    // of the attempts that did not collide
    let share = n("frame_errors") as f64 / (n("attempts") - n("collisions")) as f64;
    assert!((share - 0.5).abs() < 0.03, "{ap}");
    // 0.5^5 of the ACK frames are discarded at the retry limit
    assert!(ap["drops_retry_ack"].as_u64().unwrap() > 0, "{ap}");
    let clean = run(json!({"kind": "none"}));
    assert_eq!(clean.hops[1]["frame_errors"].as_u64(), Some(0));
    let e = run_json(
        &cfg(json!({"kind": "bernoulli", "p": 2.0})).to_string(),
        None,
    )
    .unwrap_err();
    assert!(e.starts_with("hops[0].stations[0].errors_down"), "{e}");
}
