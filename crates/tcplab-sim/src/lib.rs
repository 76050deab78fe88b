//! tcplab-sim: a deterministic discrete-event packet simulator that drives
//! the sans-IO TCP of `tcplab-tcp` over configurable paths.

pub mod ackfilter;
pub mod component;
pub mod config;
pub mod conn_log;
pub mod coverage;
pub mod dist;
pub mod dropper;
pub mod emu;
#[cfg(target_os = "linux")]
pub mod emu_sys;
pub mod endpoint;
pub mod endpoint_app;
#[cfg(test)]
mod endpoint_tests;
pub mod engine;
pub mod hops;
pub mod host;
pub mod link;
pub mod loss;
pub mod output;
pub mod pcap;
pub mod pep;
pub mod ping;
pub mod queue;
pub mod rlc;
pub mod rng;
pub mod sim;
mod truth;
pub mod validate;
pub mod wlan;

pub use config::SimConfig;
pub use output::{Output, EVENT_KIND_NAMES, SEGMENT_KIND_NAMES};
pub use sim::Sim;

/// Parse and validate a JSON configuration without running it (what
/// `tcplab.scenario` asks of the core for every scenario it accepts).
pub fn check_json(json: &str) -> Result<SimConfig, String> {
    let mut value: serde_json::Value =
        serde_json::from_str(json).map_err(|e| format!("config: {e}"))?;
    config::resolve_base_dir(&mut value)?;
    validate::time_bounds(&value)?;
    let cfg: SimConfig = serde_json::from_value(value).map_err(|e| format!("config: {e}"))?;
    validate::validate(&cfg)?;
    validate::files(&cfg)?;
    Ok(cfg)
}

/// The registries Python derives its lists, rules and messages from (one
/// JSON object; `tcplab.registry` reads it): congestion controls with their
/// parameters and rules, spurious detectors and responses, loss recovery
/// choices, RTO profiles, delayed-ACK timers and hop kinds.
pub fn registry_json() -> String {
    use serde_json::json;
    use tcplab_tcp::recovery::{LossDetection, RecoveryCwnd};
    use tcplab_tcp::{
        config::SsthreshFrom, AckPolicyConfig, DetectorKind, FrResponseKind, ResponseKind,
        RtoProfile, RttEstimatorKind,
    };
    let num = |x: f64| if x.is_finite() { json!(x) } else { json!(null) };
    let ccs: Vec<_> = tcplab_tcp::cc::REGISTRY
        .iter()
        .map(|e| {
            let params: Vec<_> = e
                .params
                .iter()
                .map(|p| {
                    json!({
                        "key": p.key, "default": p.default,
                        "min": num(p.min), "min_open": p.min_open,
                        "max": num(p.max), "max_open": p.max_open,
                        "integer": p.integer, "zero_ok": p.zero_ok, "rule": p.rule,
                    })
                })
                .collect();
            json!({
                "name": e.name, "params": params, "at_least": e.at_least,
                "target_rate": e.target_rate, "loss_based": e.loss_based,
                "hystart_linux": e.hystart_linux,
                "cubic_linux": e.cubic_linux,
                "reno_linux": e.reno_linux,
            })
        })
        .collect();
    // A list, not an object: the first profile is the default.
    let rto: Vec<_> = RtoProfile::NAMED
        .iter()
        .map(|(name, p)| {
            json!({
                "name": name, "initial_ns": p.initial, "min_ns": p.min, "max_ns": p.max,
                "granularity_ns": p.granularity, "max_backoff": p.max_backoff,
                "restart_on_rtx": p.restart_on_rtx, "estimator": p.estimator.name(),
                "syn_retries": p.syn_retries, "synack_retries": p.synack_retries,
                "retries2": p.retries2,
            })
        })
        .collect();
    json!({
        "congestion_controls": ccs,
        "spurious_detectors": DetectorKind::NAMES,
        "spurious_fr_detectors": DetectorKind::FR_NAMES,
        "spurious_responses": ResponseKind::NAMES,
        "spurious_fr_responses": FrResponseKind::NAMES,
        "recovery_cwnds": RecoveryCwnd::NAMES,
        "loss_detections": LossDetection::NAMES,
        "ssthresh_from": SsthreshFrom::NAMES,
        "rcv_windows": tcplab_tcp::rcv_window::RcvWindowKind::NAMES,
        "snd_buf_models": tcplab_tcp::sndbuf::SndBufKind::NAMES,
        "tso_models": tcplab_tcp::tso::TsoKind::NAMES,
        "timers": tcplab_tcp::jiffies::TimerKind::NAMES,
        "rcv_scaling_ratio_default": tcplab_tcp::config::DEFAULT_RCV_SCALING_RATIO,
        "rto_profiles": rto,
        "ack_timers": AckPolicyConfig::TIMERS,
        "rtt_estimators": RttEstimatorKind::NAMES.map(|(n, _)| n),
        "hop_kinds": config::HopConfig::KINDS,
        "leo_presets": hops::leo::preset_names(),
    })
    .to_string()
}

/// Parse a JSON configuration and run it.
pub fn run_json(json: &str, progress: Option<sim::Progress>) -> Result<Output, String> {
    let mut value: serde_json::Value =
        serde_json::from_str(json).map_err(|e| format!("config: {e}"))?;
    config::resolve_base_dir(&mut value)?;
    validate::time_bounds(&value)?;
    let cfg: SimConfig = serde_json::from_value(value).map_err(|e| format!("config: {e}"))?;
    Sim::new(cfg)?.run(progress)
}
