//! tcplab-sim: a deterministic discrete-event packet simulator that drives
//! the sans-IO TCP of `tcplab-tcp` over configurable paths.

pub mod ackfilter;
pub mod component;
pub mod config;
pub mod coverage;
pub mod dist;
pub mod dropper;
pub mod emu;
#[cfg(target_os = "linux")]
pub mod emu_sys;
pub mod engine;
pub mod host;
pub mod link;
pub mod loss;
pub mod output;
pub mod pcap;
pub mod pep;
pub mod ping;
pub mod rlc;
pub mod rng;
pub mod sim;
pub mod validate;
pub mod wlan;

pub use config::SimConfig;
pub use output::{Output, EVENT_KIND_NAMES, SEGMENT_KIND_NAMES};
pub use sim::Sim;

/// Parse a JSON configuration and run it.
pub fn run_json(json: &str, progress: Option<sim::Progress>) -> Result<Output, String> {
    let value: serde_json::Value =
        serde_json::from_str(json).map_err(|e| format!("config: {e}"))?;
    validate::time_bounds(&value)?;
    let cfg: SimConfig = serde_json::from_value(value).map_err(|e| format!("config: {e}"))?;
    Sim::new(cfg)?.run(progress)
}
