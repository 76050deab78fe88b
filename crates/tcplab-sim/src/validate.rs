//! Checks of a normalized configuration: the authority on what a run
//! accepts. Python reads the user's TOML (types, units, unknown keys) and
//! applies the same rules with the same messages; whenever the core is built
//! `tcplab.scenario` also runs these (`check_json`, through the bindings) and
//! raises their message as a `ScenarioError` naming the scenario's file, with
//! `hops[i]`/`flows[i]`/`pings[i]` mapped back to the TOML entry. Messages name
//! the field and the rule.

use crate::config::{HopConfig, SimConfig, TcpConfigJson};
use crate::dist;
use serde_json::Value;
use tcplab_tcp::config::SsthreshFrom;
use tcplab_tcp::rcv_window::RcvWindowKind;
use tcplab_tcp::recovery::{LossDetection, RecoveryCwnd};
use tcplab_tcp::MAX_TIME_NS;
use tcplab_tcp::{
    AckPolicyConfig, CcKind, Config, DetectorKind, FrResponseKind, ResponseKind, RtoProfile,
};

/// The shortest time-series period: one sample per flow per millisecond. A period of a few
/// nanoseconds made a 5 s run take minutes while recording nothing anyone could plot.
pub const MIN_SAMPLE_INTERVAL_NS: u64 = tcplab_tcp::NS_PER_MS;

/// The longest hop name, in bytes.
pub const MAX_HOP_NAME: usize = 64;

/// A hop's name becomes part of file names (`<name>-<dir>.pcap` in the output directory), so it
/// is 1 to 64 ASCII letters, digits, `-`, `_` or `.`, not starting with `.`: no `/` or `..`
/// can place a capture outside the output directory, and no capture is hidden.
pub fn check_hop_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= MAX_HOP_NAME
        && !name.starts_with('.')
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
    if ok {
        return Ok(());
    }
    let shown: String = name.chars().take(MAX_HOP_NAME + 1).collect();
    Err(format!(
        "must be 1 to {MAX_HOP_NAME} letters, digits, \"-\", \"_\" or \".\", not starting with \".\" (it names capture files; got {shown:?})"
    ))
}

pub fn validate(c: &SimConfig) -> Result<(), String> {
    if c.duration_ns == 0 {
        return Err("duration: must be > 0".into());
    }
    if c.duration_ns > MAX_TIME_NS {
        return Err("duration: must be at most 1000000h".into());
    }
    if c.sample_interval_ns != 0 && c.sample_interval_ns < MIN_SAMPLE_INTERVAL_NS {
        return Err(format!(
            "sample_interval: must be 0 (no time series) or at least 1ms (got {}ns)",
            c.sample_interval_ns
        ));
    }
    if c.hops.is_empty() {
        return Err("path: at least one hop is required".into());
    }
    for (i, h) in c.hops.iter().enumerate() {
        check_hop_name(h.name()).map_err(|e| format!("hops[{i}].name: {e}"))?;
        // `[[pcap]] hop`, `cross.hops` and `--pcap NAME` pick hops by name.
        if let Some(j) = c.hops[..i].iter().position(|o| o.name() == h.name()) {
            return Err(format!(
                "hops[{i}].name: duplicate link name {:?} (also used by hops[{j}])",
                h.name()
            ));
        }
        if let HopConfig::Host(hc) = h {
            crate::host::check(hc).map_err(|e| format!("hops[{i}].{e}"))?;
            continue;
        }
        if let HopConfig::Wlan(w) = h {
            crate::wlan::validate(w, i, c)?;
            continue;
        }
        if let HopConfig::Pep(p) = h {
            crate::pep::check_config(p).map_err(|e| format!("hops[{i}].{e}"))?;
        }
        if let HopConfig::Dropper(d) = h {
            if d.data_segments.contains(&0) {
                return Err(format!(
                    "hops[{i}].data_segments: segment numbers start at 1 (got 0)"
                ));
            }
        }
        if let HopConfig::Leo(l) = h {
            crate::hops::leo::check(l).map_err(|e| format!("hops[{i}].{e}"))?;
        }
        if let HopConfig::Trace(t) = h {
            crate::hops::trace::check(t).map_err(|e| format!("hops[{i}].{e}"))?;
            continue;
        }
        if let HopConfig::Rlc(r) = h {
            crate::rlc::check(r).map_err(|e| format!("hops[{i}].{e}"))?;
        }
        let (fwd, rev) = match h {
            HopConfig::Link(l) => (&l.fwd, &l.rev),
            HopConfig::AckFilterLink(l) => {
                if l.fwd.reorder.is_some() || l.rev.reorder.is_some() {
                    return Err(format!(
                        "hops[{i}].reorder: not supported on an ack_filter_link"
                    ));
                }
                if l.fwd.delay_trace.is_some() || l.rev.delay_trace.is_some() {
                    return Err(format!(
                        "hops[{i}].delay_trace: not supported on an ack_filter_link"
                    ));
                }
                (&l.fwd, &l.rev)
            }
            _ => continue,
        };
        for d in [fwd, rev] {
            crate::hops::trace::check_file_name("delay_trace", &d.delay_trace)
                .map_err(|e| format!("hops[{i}].{e}"))?;
        }
        for (d, ld) in [("fwd", fwd), ("rev", rev)] {
            let f = format!("hops[{i}].{d}");
            if ld.rate_bps == 0 {
                return Err(format!("{f}.rate: must be > 0"));
            }
            if !(8..=16).contains(&ld.bits_per_byte) {
                return Err(format!(
                    "{f}.bits_per_byte: must be between 8 and 16 (got {})",
                    ld.bits_per_byte
                ));
            }
            crate::loss::check(&ld.loss, &format!("{f}.loss"), &format!("{f}.loss"))?;
            if let Some(r) = ld.reorder {
                crate::loss::check_prob(r.p, &format!("{f}.reorder.p"))?;
                if r.extra_ns == 0 {
                    return Err(format!("{f}.reorder.extra: must be > 0"));
                }
            }
            if let Some(a) = &ld.aqm {
                if matches!(h, HopConfig::AckFilterLink(_)) {
                    return Err(format!(
                        "hops[{i}].aqm: not supported on an ack_filter_link"
                    ));
                }
                a.check(crate::link::limit_of(ld), ld.rate_bps)
                    .map_err(|(k, e)| format!("{f}.aqm.{k}: {e}"))?;
            }
        }
    }
    if c.flows.is_empty() && c.cross.is_empty() && c.pings.is_empty() {
        return Err("flows: at least one flow is required".into());
    }
    let n = c.hops.len();
    for (i, f) in c.flows.iter().enumerate() {
        if c.flows[..i].iter().any(|o| o.name == f.name) {
            return Err(format!("flows[{i}].name: duplicate flow name {:?}", f.name));
        }
        if f.path.is_empty() || f.path.len() > 1000 {
            return Err(format!("flows[{i}].path: must list 1 to 1000 hops"));
        }
        if let Some(&bad) = f.path.iter().find(|&&k| k >= n) {
            return Err(format!(
                "flows[{i}].path: hop {bad} does not exist ({n} hops)"
            ));
        }
        tcp_config(&f.tcp).map_err(|e| format!("flows[{i}].{e}"))?;
        match &f.app {
            crate::config::AppConfig::Bulk { bytes } => {
                if *bytes == Some(0) {
                    return Err(format!("flows[{i}].bytes: must be > 0"));
                }
            }
            crate::config::AppConfig::Downloads {
                sizes, think_ns, ..
            } => {
                dist::check(sizes).map_err(|e| format!("flows[{i}].sizes.{e}"))?;
                if let crate::config::Dist::Const { value } = sizes {
                    if *value < 1.0 {
                        return Err(format!("flows[{i}].sizes: must be >= 1 byte (got {value})"));
                    }
                }
                dist::check(think_ns).map_err(|e| format!("flows[{i}].think.{e}"))?;
            }
        }
    }
    for (i, x) in c.cross.iter().enumerate() {
        if c.cross[..i].iter().any(|o| o.name == x.name) {
            return Err(format!(
                "cross[{i}].name: duplicate cross-traffic name {:?}",
                x.name
            ));
        }
        if x.rate_bps == 0 {
            return Err(format!("cross[{i}].rate: must be > 0"));
        }
        if !(28..=65535).contains(&x.packet_bytes) {
            return Err(format!(
                "cross[{i}].packet_size: must be between 28 and 65535 (got {})",
                x.packet_bytes
            ));
        }
        if let Some(&bad) = x.path.iter().find(|&&k| k >= n) {
            return Err(format!("cross[{i}].path: hop {bad} does not exist"));
        }
        if x.path.is_empty() {
            return Err(format!("cross[{i}].path: must list at least one hop"));
        }
    }
    for (i, p) in c.pings.iter().enumerate() {
        // One namespace for all cross traffic (`[[cross]]` of any kind).
        let cbr = c.cross.iter().map(|x| &x.name);
        if cbr
            .chain(c.pings[..i].iter().map(|o| &o.name))
            .any(|n| *n == p.name)
        {
            return Err(format!(
                "pings[{i}].name: duplicate cross-traffic name {:?}",
                p.name
            ));
        }
        if p.path.is_empty() {
            return Err(format!("pings[{i}].path: must list at least one hop"));
        }
        if let Some(&bad) = p.path.iter().find(|&&k| k >= n) {
            return Err(format!("pings[{i}].path: hop {bad} does not exist"));
        }
        if !(28..=65535).contains(&p.packet_bytes) {
            return Err(format!(
                "pings[{i}].packet_size: must be between 28 and 65535 (got {})",
                p.packet_bytes
            ));
        }
        if p.interval_ns == 0 {
            return Err(format!("pings[{i}].interval: must be > 0"));
        }
    }
    for (i, p) in c.pcap.iter().enumerate() {
        if p.hop >= n {
            return Err(format!("pcap[{i}].hop: hop {} does not exist", p.hop));
        }
        if matches!(c.hops[p.hop], HopConfig::Pep(_) | HopConfig::Dropper(_)) {
            return Err(format!(
                "pcap[{i}].hop: a pep or dropper hop transmits nothing itself (capture on a link next to it)"
            ));
        }
        if !matches!(p.dir.as_str(), "fwd" | "rev" | "both") {
            return Err(format!(
                "pcap[{i}].dir: must be fwd, rev or both (got {:?})",
                p.dir
            ));
        }
    }
    Ok(())
}

/// Read every file a configuration names (capacity and delay traces) and
/// check its contents, as building the run would; errors name the field,
/// the file and the line.
pub fn files(c: &SimConfig) -> Result<(), String> {
    for (i, h) in c.hops.iter().enumerate() {
        let at = |e: String| format!("hops[{i}].{e}");
        match h {
            HopConfig::Trace(t) => crate::hops::trace::check_files(t).map_err(at)?,
            HopConfig::Leo(l) => crate::hops::leo::check_files(l).map_err(at)?,
            HopConfig::Link(l) => {
                for (d, ld) in [("down", &l.fwd), ("up", &l.rev)] {
                    crate::hops::trace::load_delay(&ld.delay_trace, d).map_err(at)?;
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// Convert the JSON TCP settings to the endpoint configuration.
/// The give-up counts (`give_up.rs`): at least one retransmission, at most
/// Linux's `MAX_TCP_SYNCNT` (127) for every count alike.
fn check_retries(key: &str, n: u32) -> Result<u32, String> {
    check_count(&format!("rto.{key}"), n)
}

/// A give-up count (`syn_retries`, `synack_retries`, `retries2`): 1 … 127,
/// Linux's MAX_TCP_SYNCNT applied to every count alike.
pub(crate) fn check_count(field: &str, n: u32) -> Result<u32, String> {
    if (1..=127).contains(&n) {
        Ok(n)
    } else {
        Err(format!("{field}: must be between 1 and 127 (got {n})"))
    }
}

/// `parsed`, the value of `field` read as one of its kinds, or the one-line
/// error that names the field, what it selects, the value given and the
/// choices (listed only when the value is unknown).
fn known<T>(
    parsed: Option<T>,
    field: &str,
    what: &str,
    value: &str,
    choices: impl FnOnce() -> String,
) -> Result<T, String> {
    parsed.ok_or_else(|| {
        format!(
            "{field}: unknown {what} {value:?} (choose from {})",
            choices()
        )
    })
}

pub fn tcp_config(t: &TcpConfigJson) -> Result<Config, String> {
    if let Some(x) = &t.xmit_time {
        for (key, ns) in [
            ("first", x.first_ns),
            ("gso", x.gso_ns),
            ("gap", x.gap_ns),
            ("jitter", x.jitter_ns),
        ] {
            if ns > crate::config::XMIT_TIME_MAX_NS {
                return Err(format!(
                    "xmit_time.{key}: must be at most 1ms (got {ns} ns)"
                ));
            }
        }
        // The spread is centred on `first`: it may not reach below zero.
        if x.jitter_ns > 2 * x.first_ns {
            return Err(format!(
                "xmit_time.jitter: must be at most twice first ({} ns) (got {} ns)",
                x.first_ns, x.jitter_ns
            ));
        }
    }
    let mut cc = known(
        CcKind::parse(&t.cc),
        "cc",
        "congestion control",
        &t.cc,
        || tcplab_tcp::cc::names_where(|_| true, ", "),
    )?;
    let targets = || tcplab_tcp::cc::names_where(|e| e.target_rate, "\" or \"");
    match (cc.entry.target_rate, t.qos_target_bps) {
        (true, None) => {
            return Err(format!(
                "qos_target: required when cc = \"{}\" (a rate)",
                cc.name()
            ))
        }
        (false, Some(_)) => {
            return Err(format!(
                "qos_target: only valid with cc = \"{}\"",
                targets()
            ))
        }
        _ => cc.target_bps = t.qos_target_bps,
    }
    let cfg = Config {
        cc,
        cc_params: tcplab_tcp::cc::CcParams(
            t.cc_params.iter().map(|(k, v)| (k.clone(), *v)).collect(),
        ),
        sack: t.sack,
        dsack: t.dsack,
        timestamps: t.timestamps,
        window_scaling: t.window_scaling,
        mss: t.mss,
        rcv_buf: t.rcv_buf,
        snd_buf: t.snd_buf,
        initial_window: t.initial_window_bytes,
        initial_ssthresh: t.initial_ssthresh,
        max_cwnd: t.max_cwnd,
        limited_transmit: t.limited_transmit,
        limited_transmit_sack: t.limited_transmit_sack,
        dupthresh: t.dupthresh,
        ca_at_ssthresh: t.ca_at_ssthresh,
        rto: RtoProfile {
            initial: t.rto.initial_ns,
            min: t.rto.min_ns,
            max: t.rto.max_ns,
            granularity: t.rto.granularity_ns,
            max_backoff: t.rto.max_backoff,
            restart_on_rtx: t.rto.restart_on_rtx,
            estimator: tcplab_tcp::RttEstimatorKind::parse(&t.rto.estimator).ok_or_else(|| {
                format!(
                    "rto.estimator: must be one of rfc6298, linux (got {:?})",
                    t.rto.estimator
                )
            })?,
            syn_retries: check_retries("syn_retries", t.rto.syn_retries)?,
            synack_retries: check_retries("synack_retries", t.rto.synack_retries)?,
            retries2: check_retries("retries2", t.rto.retries2)?,
        },
        ack: AckPolicyConfig {
            every_n: t.ack.every_n,
            max_delay: t.ack.max_delay_ns,
            immediate_on_ooo: t.ack.immediate_on_ooo,
            quickack: t.ack.quickack,
            periodic: t.ack.periodic,
        },
        ts_granularity: tcplab_tcp::NS_PER_MS,
        abc_l: t.abc_l,
        hystart: t.hystart,
        hystart_linux: t.hystart_linux,
        cubic_linux: t.cubic_linux,
        reno_linux: t.reno_linux,
        ack_cc: t.ack_cc.map(|a| tcplab_tcp::ack_cc::AckCcConfig {
            queue_threshold: a.queue_threshold,
            max_ratio: a.max_ratio,
        }),
        spurious_detection: known(
            DetectorKind::parse(&t.spurious_detection),
            "spurious_detection",
            "spurious-timeout detector",
            &t.spurious_detection,
            || DetectorKind::NAMES.join(", "),
        )?,
        spurious_response: known(
            ResponseKind::parse(&t.spurious_response),
            "spurious_response",
            "spurious-timeout response",
            &t.spurious_response,
            || ResponseKind::NAMES.join(", "),
        )?,
        spurious_fr: known(
            DetectorKind::parse(&t.spurious_fr).filter(|d| d.judges_fast_retransmits()),
            "spurious_fr",
            "spurious-fast-retransmit detector",
            &t.spurious_fr,
            || DetectorKind::FR_NAMES.join(", "),
        )?,
        spurious_fr_response: known(
            FrResponseKind::parse(&t.spurious_fr_response),
            "spurious_fr_response",
            "spurious-fast-retransmit response",
            &t.spurious_fr_response,
            || FrResponseKind::NAMES.join(", "),
        )?,
        read_rate_bps: t.read_rate_bps,
        recovery_cwnd: known(
            RecoveryCwnd::parse(&t.recovery_cwnd),
            "recovery_cwnd",
            "fast-recovery cwnd reduction",
            &t.recovery_cwnd,
            || RecoveryCwnd::NAMES.join(", "),
        )?,
        loss_detection: known(
            LossDetection::parse(&t.loss_detection),
            "loss_detection",
            "loss detection",
            &t.loss_detection,
            || LossDetection::NAMES.join(", "),
        )?,
        tlp: t.tlp,
        ssthresh_from: known(
            SsthreshFrom::parse(&t.ssthresh_from),
            "ssthresh_from",
            "multiplicative-decrease basis",
            &t.ssthresh_from,
            || SsthreshFrom::NAMES.join(", "),
        )?,
        rcv_window: known(
            RcvWindowKind::parse(&t.rcv_window),
            "rcv_window",
            "receive-window model",
            &t.rcv_window,
            || RcvWindowKind::NAMES.join(", "),
        )?,
        rcv_scaling_ratio: t.rcv_scaling_ratio,
        snd_buf_model: known(
            tcplab_tcp::sndbuf::SndBufKind::parse(&t.snd_buf_model),
            "snd_buf_model",
            "send-buffer model",
            &t.snd_buf_model,
            || tcplab_tcp::sndbuf::SndBufKind::NAMES.join(", "),
        )?,
        tso_model: known(
            tcplab_tcp::tso::TsoKind::parse(&t.tso_model),
            "tso_model",
            "transmit-path model",
            &t.tso_model,
            || tcplab_tcp::tso::TsoKind::NAMES.join(", "),
        )?,
        timers: known(
            tcplab_tcp::jiffies::TimerKind::parse(&t.timers),
            "timers",
            "timer model",
            &t.timers,
            || tcplab_tcp::jiffies::TimerKind::NAMES.join(", "),
        )?,
        pacing: t.pacing,
        ecn: known(
            tcplab_tcp::ecn::EcnMode::parse(&t.ecn),
            "ecn",
            "ECN mode",
            &t.ecn,
            || tcplab_tcp::ecn::EcnMode::NAMES.join(", "),
        )?,
        mss_option_rfc6691: false,
    };
    cfg.validate()?;
    Ok(cfg)
}

/// Every time in a configuration, wherever it is, must be at most
/// `MAX_TIME_NS` (10⁶ h): a key ending in `_ns` holds nanoseconds and one
/// ending in `_s` (but not `_per_s`) seconds, as a number or, for a
/// distribution or a list of stalls, in every number inside it. One rule for
/// all, so no time sum in the simulator can overflow (see `MAX_TIME_NS`).
pub fn time_bounds(v: &Value) -> Result<(), String> {
    fn walk(v: &Value, path: &str, limit: Option<f64>) -> Result<(), String> {
        match v {
            Value::Object(m) => {
                for (k, x) in m {
                    let p = if path.is_empty() {
                        k.clone()
                    } else {
                        format!("{path}.{k}")
                    };
                    let lim = if k.ends_with("_ns") {
                        Some(MAX_TIME_NS as f64)
                    } else if k.ends_with("_s") && !k.ends_with("_per_s") {
                        Some(MAX_TIME_NS as f64 / 1e9)
                    } else {
                        limit
                    };
                    walk(x, &p, lim)?;
                }
                Ok(())
            }
            Value::Array(a) => {
                for (i, x) in a.iter().enumerate() {
                    walk(x, &format!("{path}[{i}]"), limit)?;
                }
                Ok(())
            }
            Value::Number(n) => match (limit, n.as_f64()) {
                (Some(lim), Some(x)) if x.is_nan() || x > lim => Err(format!(
                    "{path}: must be at most 1000000h, the longest time tcplab takes (got {n})"
                )),
                _ => Ok(()),
            },
            _ => Ok(()),
        }
    }
    walk(v, "", None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{example_p2p, CbrConfig, PingConfig};

    fn with_hop_name(name: &str) -> SimConfig {
        let mut c = example_p2p(1_000_000_000, 0.0);
        match &mut c.hops[0] {
            HopConfig::Link(l) => l.name = name.into(),
            _ => unreachable!("example_p2p's first hop is a link"),
        }
        c
    }

    #[test]
    fn a_hop_name_cannot_leave_the_output_directory() {
        let long = "x".repeat(65);
        for bad in [
            "../../x",
            "a/b",
            ".hidden",
            "",
            "a b",
            "\u{e9}t\u{e9}",
            &long,
        ] {
            let e = validate(&with_hop_name(bad)).unwrap_err();
            assert!(
                e.starts_with("hops[0].name: must be 1 to 64 letters"),
                "{e}"
            );
            assert!(e.contains("it names capture files"), "{e}");
        }
        for good in ["link0", "sat.up", "a-b_c", &"x".repeat(64)] {
            assert_eq!(validate(&with_hop_name(good)), Ok(()), "{good}");
        }
    }

    #[test]
    fn the_sample_interval_is_off_or_at_least_a_millisecond() {
        let mut c = example_p2p(1_000_000_000, 0.0);
        for (ns, ok) in [(0, true), (1, false), (999_999, false), (1_000_000, true)] {
            c.sample_interval_ns = ns;
            match validate(&c) {
                Ok(()) => assert!(ok, "{ns}"),
                Err(e) => {
                    assert!(!ok, "{ns}: {e}");
                    assert_eq!(
                        e,
                        format!(
                            "sample_interval: must be 0 (no time series) or at least 1ms (got {ns}ns)"
                        )
                    );
                }
            }
        }
    }

    #[test]
    fn eifel_without_timestamps_names_the_field() {
        let mut c = example_p2p(1_000_000_000, 0.0);
        c.flows[0].tcp.spurious_detection = "eifel".into();
        c.flows[0].tcp.timestamps = false;
        assert_eq!(
            validate(&c).unwrap_err(),
            "flows[0].spurious_detection: \"eifel\" needs timestamps = true"
        );
    }

    #[test]
    fn names_are_unique_for_every_hop_kind_and_all_cross_traffic() {
        let mut c = example_p2p(1_000_000_000, 0.0);
        let rlc = r#"{"kind": "rlc", "name": "link0", "pdu_bytes": 40, "retx_interval_ns": 1,
            "max_dat": 4, "spike_rate_per_s": 0, "spike_duration_s": {"kind": "const", "value": 1},
            "down": {"rate_bps": 1, "bler": 0, "delay_ns": 0, "queue_packets": 9},
            "up": {"rate_bps": 1, "bler": 0, "delay_ns": 0, "queue_packets": 9}}"#;
        c.hops.push(serde_json::from_str(rlc).unwrap());
        assert_eq!(
            validate(&c).unwrap_err(),
            "hops[1].name: duplicate link name \"link0\" (also used by hops[0])"
        );
        let mut c = example_p2p(1_000_000_000, 0.0);
        let ping = |name: &str| PingConfig {
            name: name.into(),
            path: vec![0],
            packet_bytes: 64,
            interval_ns: 1,
            start_ns: 0,
            stop_ns: 1,
            from_receiver: true,
        };
        c.pings = vec![ping("p"), ping("p")];
        assert_eq!(
            validate(&c).unwrap_err(),
            "pings[1].name: duplicate cross-traffic name \"p\""
        );
        c.pings = vec![ping("x")];
        c.cross = vec![CbrConfig {
            name: "x".into(),
            path: vec![0],
            rate_bps: 1,
            packet_bytes: 100,
            start_ns: 0,
            stop_ns: 1,
        }];
        assert_eq!(
            validate(&c).unwrap_err(),
            "pings[0].name: duplicate cross-traffic name \"x\""
        );
        let mut c = example_p2p(1_000_000_000, 0.0);
        c.flows.push(c.flows[0].clone());
        assert_eq!(
            validate(&c).unwrap_err(),
            "flows[1].name: duplicate flow name \"flow0\""
        );
    }

    #[test]
    fn every_time_is_bounded() {
        let ok = serde_json::json!({"duration_ns": MAX_TIME_NS, "x": {"think_ns": {"mean": 1.0}}});
        assert!(time_bounds(&ok).is_ok());
        let big = serde_json::json!({"hops": [{"fwd": {"delay_ns": u64::MAX}}]});
        let e = time_bounds(&big).unwrap_err();
        assert!(
            e.starts_with("hops[0].fwd.delay_ns: must be at most 1000000h"),
            "{e}"
        );
        let dist = serde_json::json!({"spike_duration_s": {"kind": "const", "value": 4e9}});
        assert!(time_bounds(&dist).is_err());
        let stalls = serde_json::json!({"stalls_ns": [[0, u64::MAX]]});
        assert!(time_bounds(&stalls).is_err());
        // a rate per second is not a time
        let rate = serde_json::json!({"spike_rate_per_s": 1e300});
        assert!(time_bounds(&rate).is_ok());
    }
}
