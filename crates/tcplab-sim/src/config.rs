//! The normalized run configuration the simulator accepts.
//!
//! Python (`tcplab.scenario`) reads the user's TOML, validates it with
//! field-naming error messages and converts every quantity to base units
//! (nanoseconds, bits per second, bytes) before handing this structure over
//! as JSON. `validate.rs` checks it (the authority on what a run accepts;
//! Python applies the same rules) but never sees user units.

use serde::Deserialize;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SimConfig {
    pub name: String,
    /// Simulated time to run, ns.
    pub duration_ns: u64,
    /// Master seed; each component derives its own stream from it.
    pub seed: u64,
    /// Period of the per-flow time series, ns (0 = no time series).
    #[serde(default = "default_sample_interval")]
    pub sample_interval_ns: u64,
    /// Record the segment trace (every data segment sent and arriving, every
    /// ACK and SACK block the sender receives) and sample each hop's queue
    /// every `sample_interval_ns`. Off by default: it only adds outputs and
    /// does not change the simulation.
    #[serde(default)]
    pub trace: bool,
    /// Path components; flows list the indexes they traverse.
    pub hops: Vec<HopConfig>,
    pub flows: Vec<FlowConfig>,
    #[serde(default)]
    pub cross: Vec<CbrConfig>,
    #[serde(default)]
    pub pcap: Vec<PcapConfig>,
    /// ICMP-echo-like probes (`ping.rs`).
    #[serde(default)]
    pub pings: Vec<PingConfig>,
    /// Which tables the run records (all by default).
    #[serde(default)]
    pub record: Record,
}

/// The tables a run records besides its summary. A caller that outputs only
/// the summary turns both off and the run's memory no longer grows with
/// simulated time; `spill_dir` streams long tables to files there.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Record {
    #[serde(default = "yes")]
    pub timeseries: bool,
    #[serde(default = "yes")]
    pub events: bool,
    #[serde(default)]
    pub spill_dir: Option<String>,
}

impl Default for Record {
    fn default() -> Record {
        Record {
            timeseries: true,
            events: true,
            spill_dir: None,
        }
    }
}

fn yes() -> bool {
    true
}

fn default_dupthresh() -> u32 {
    3
}

fn default_sample_interval() -> u64 {
    100_000_000
}

/// One path component. New kinds add a variant here and a constructor in
/// `sim::build_hop`.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum HopConfig {
    Link(LinkConfig),
    /// A TCP spoofing PEP (`pep.rs`).
    Pep(PepConfig),
    /// Deterministic error injection: drops chosen data segments (`dropper.rs`).
    Dropper(DropperConfig),
    AckFilterLink(AckFilterLinkConfig),
    Rlc(RlcConfig),
    /// 802.11 DCF cells with their stations (`wlan.rs`).
    Wlan(crate::wlan::WlanConfig),
    /// An end host's NIC→memory path (`host::HostHop`, Ito's thesis ch. 3).
    Host(HostConfig),
    /// A link driven by capacity traces (`hops::trace`).
    Trace(TraceConfig),
    /// LEO satellite access (`hops::leo`).
    Leo(LeoConfig),
}

impl HopConfig {
    /// The `kind` of each variant, as the normalized configuration names it.
    pub const KINDS: [&'static str; 9] = [
        "link",
        "pep",
        "dropper",
        "ack_filter_link",
        "rlc",
        "wlan",
        "host",
        "trace",
        "leo",
    ];

    pub fn name(&self) -> &str {
        match self {
            HopConfig::Link(l) => &l.name,
            HopConfig::Pep(p) => &p.name,
            HopConfig::Dropper(d) => &d.name,
            HopConfig::AckFilterLink(l) => &l.name,
            HopConfig::Rlc(r) => &r.name,
            HopConfig::Wlan(w) => &w.name,
            HopConfig::Host(h) => &h.name,
            HopConfig::Trace(t) => &t.name,
            HopConfig::Leo(l) => &l.name,
        }
    }
}

/// A TCP spoofing (pseudo-ACK) PEP; behaviour in `pep.rs`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PepConfig {
    pub name: String,
    /// Per-connection buffer for data acknowledged to the sender but not yet
    /// by the receiver (plus out-of-order data), bytes.
    pub buffer_bytes: u64,
    /// Congestion control of the PEP's sending side (a loss-based entry of
    /// `tcplab_tcp::cc::REGISTRY`: "reno", "newreno", "cubic").
    pub cc: String,
    /// Initial window of the PEP's sending side, segments.
    pub initial_window_segments: u32,
    /// RTO of the PEP's sending side (RFC 6298 over the PEP–receiver RTT).
    pub rto_initial_ns: u64,
    /// Lower bound of that RTO; keep it above the satellite RTT.
    pub rto_min_ns: u64,
    pub rto_max_ns: u64,
    /// Resolution of the reported held-bytes time series, ns.
    pub series_interval_ns: u64,
    /// Spurious-timeout detector of the PEP's sending side ("none", "frto",
    /// "frto-basic", "frto-linux", "eifel", "dsack"; `tcplab_tcp::DetectorKind`).
    /// Eifel needs timestamps and DSACK needs SACK on the connection; without
    /// them the detector never declares a timeout spurious.
    #[serde(default = "default_spurious_detection")]
    pub spurious_detection: String,
    /// When the PEP's own connection toward the receiver gives up
    /// (`give_up.rs`; RFC 6298's profile by default, as a flow's `rto`).
    #[serde(default = "default_syn_retries")]
    pub syn_retries: u32,
    #[serde(default = "default_synack_retries")]
    pub synack_retries: u32,
    #[serde(default = "default_retries2")]
    pub retries2: u32,
}

/// Drops the listed data segments (1-based count of payload-carrying
/// segments of each connection passing forward through this hop).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DropperConfig {
    pub name: String,
    pub data_segments: Vec<u64>,
}

/// A W-CDMA radio bearer (RLC acknowledged mode, `rlc.rs`): `down` carries
/// the forward (data) direction, `up` the reverse (ACK) direction.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RlcConfig {
    pub name: String,
    /// RLC PDU size in bytes (payload per PDU).
    pub pdu_bytes: u32,
    /// Time between retransmissions of a PDU, ns.
    pub retx_interval_ns: u64,
    /// Most transmissions of one PDU; beyond, the SDU is discarded.
    pub max_dat: u32,
    pub down: RlcDirConfig,
    pub up: RlcDirConfig,
    /// Radio stalls per second (Poisson), and their durations in seconds.
    pub spike_rate_per_s: f64,
    pub spike_duration_s: Dist,
    /// Scheduled stalls (start, duration) in ns, besides the random ones.
    #[serde(default)]
    pub stalls_ns: Vec<(u64, u64)>,
    /// Fades: periods (Poisson starts per second, durations in seconds) in
    /// which a PDU fails with each direction's `fade_bler` instead of `bler`
    /// (cell edge: the link power is capped and cannot follow a slow fade).
    #[serde(default)]
    pub fade_rate_per_s: f64,
    #[serde(default)]
    pub fade_duration_s: Option<Dist>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RlcDirConfig {
    pub rate_bps: u64,
    /// Block (PDU) error rate.
    pub bler: f64,
    /// Block error rate during a fade (see `RlcConfig::fade_rate_per_s`).
    #[serde(default)]
    pub fade_bler: f64,
    /// Fixed one-way delay after the radio (core network, processing), ns.
    pub delay_ns: u64,
    /// Most packets waiting in the RLC buffer.
    pub queue_packets: u32,
    /// The buffer's queue discipline (`None`: the DropTail model in `rlc.rs`).
    #[serde(default)]
    pub aqm: Option<crate::queue::AqmConfig>,
}

/// An end host's receive (or transmit) path: see `host::HostHop`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostConfig {
    pub name: String,
    /// Front-side bus bandwidth B_FSB, bit/s.
    pub b_fsb_bps: u64,
    /// NIC–memory bus bandwidth B_PCI, bit/s.
    pub b_pci_bps: u64,
    /// TOE network-processor speed F_TOE, bit/s (None = non-TOE NIC).
    pub f_toe_bps: Option<u64>,
    /// Per-packet latency t_L, ns.
    pub t_l_ns: u64,
    /// Wire rate at which the NIC receives a frame before transferring it
    /// (store-and-forward, not overlapped); None = pipelined.
    pub nic_rate_bps: Option<u64>,
    /// Backlog queue limit, packets waiting.
    pub backlog: u32,
    /// Measure packet trains and feed their transit time back on ACKs.
    pub feedback: bool,
    /// Train length P_init, packets.
    pub train: u32,
}

/// A bidirectional link: `fwd` carries data from senders to receivers, `rev`
/// the ACKs back. Each direction has its own rate, delay, queue and loss.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkConfig {
    pub name: String,
    pub fwd: LinkDirConfig,
    pub rev: LinkDirConfig,
}

/// A link whose reverse direction filters ACKs (RFC 3449 §5.2.1/§5.2.2,
/// `ackfilter.rs`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AckFilterLinkConfig {
    pub name: String,
    pub fwd: LinkDirConfig,
    pub rev: LinkDirConfig,
    /// Filter only when more than this many older ACKs of the connection
    /// wait: 0 = ACK filtering, > 0 = ACK decimation.
    #[serde(default)]
    pub filter_threshold: u32,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkDirConfig {
    pub rate_bps: u64,
    pub delay_ns: u64,
    pub queue: QueueConfig,
    #[serde(default)]
    pub loss: LossConfig,
    /// Link-layer framing bytes added to each IP datagram for serialization
    /// time (e.g. 2 for PPP as ns-3 models it, 38 for Ethernet incl. preamble/IFG).
    #[serde(default)]
    pub overhead_bytes: u32,
    /// Line bits per byte of frame (8 = synchronous; 10 = asynchronous serial
    /// with one start and one stop bit, 8N1: a "9600 bps" line carries 960 B/s).
    #[serde(default = "default_bits_per_byte")]
    pub bits_per_byte: u32,
    /// Reordering: each packet that is not lost is, with probability `p`,
    /// held `extra_ns` longer in flight, so later packets overtake it
    /// (`link` hops only).
    #[serde(default)]
    pub reorder: Option<ReorderConfig>,
    /// Scheduled outages `(start, duration)` in ns, sorted and disjoint: the
    /// link is cut, and every packet whose transmission starts inside one is
    /// lost (`drops_outage`, counted in `drops_loss` too). The same schedule
    /// runs in simulated and in real time (`tcplab emu`).
    #[serde(default)]
    pub outages_ns: Vec<(u64, u64)>,
    /// Scheduled stalls `(start, duration)` in ns, sorted and disjoint: a
    /// packet due to leave the link inside one leaves at its end instead
    /// (nothing is lost, the order is kept). A link that freezes; also how a
    /// real-time run's late releases (`emulator.late_releases`) are replayed
    /// in simulation.
    #[serde(default)]
    pub stalls_ns: Vec<(u64, u64)>,
    /// The queue discipline (`queue::AqmConfig`); None: the DropTail fast
    /// path, which computes each departure when a packet is accepted.
    #[serde(default)]
    pub aqm: Option<crate::queue::AqmConfig>,
    /// A delay trace replacing `delay_ns` (`hops::trace::DelaySchedule`: a
    /// path the simulator reads; packets never overtake).
    #[serde(default)]
    pub delay_trace: Option<String>,
}

/// A link driven by capacity traces (`hops/trace.rs`): `fwd` is the
/// downlink (data), `rev` the uplink (ACKs).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceConfig {
    pub name: String,
    pub fwd: TraceDirConfig,
    pub rev: TraceDirConfig,
    /// Start the traces over when they end (as `mm-link` does by default);
    /// otherwise packets after the end never leave.
    #[serde(default = "yes")]
    pub repeat: bool,
}

/// The keys of a hop (and of its `fwd`/`rev` directions) that name files
/// the simulator reads.
pub const FILE_KEYS: [&str; 3] = ["file", "delay_trace", "schedule"];

/// Resolve the files a JSON configuration names against its `base_dir`
/// (the scenario file's directory, which the scenario loader gives so that
/// the file names themselves stay as the user wrote them and a stored
/// configuration does not depend on where the checkout is): relative names
/// are joined to it, and `base_dir` is removed. Without `base_dir`,
/// relative names are relative to the current directory.
pub fn resolve_base_dir(v: &mut serde_json::Value) -> Result<(), String> {
    let Some(obj) = v.as_object_mut() else {
        return Ok(());
    };
    let base = match obj.remove("base_dir") {
        None => return Ok(()),
        Some(serde_json::Value::String(b)) => std::path::PathBuf::from(b),
        Some(_) => return Err("config.base_dir: must be a string".into()),
    };
    let join = |m: &mut serde_json::Map<String, serde_json::Value>| {
        for k in FILE_KEYS {
            if let Some(serde_json::Value::String(f)) = m.get_mut(k) {
                if std::path::Path::new(f.as_str()).is_relative() {
                    *f = base.join(&*f).to_string_lossy().into_owned();
                }
            }
        }
    };
    if let Some(hops) = obj.get_mut("hops").and_then(|h| h.as_array_mut()) {
        for h in hops.iter_mut().filter_map(|h| h.as_object_mut()) {
            join(h);
            for d in ["fwd", "rev"] {
                if let Some(m) = h.get_mut(d).and_then(|x| x.as_object_mut()) {
                    join(m);
                }
            }
        }
    }
    Ok(())
}

/// LEO satellite access (`hops/leo.rs`, docs/leo.md): slots of 15 s whose
/// base RTT and capacity come from a preset's distributions or a schedule
/// file; a pause and loss around each reassignment.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LeoConfig {
    pub name: String,
    /// A published condition (`hops::leo::PRESETS`).
    #[serde(default)]
    pub preset: Option<String>,
    /// A slot schedule file replacing the preset's distributions (a path the
    /// simulator reads).
    #[serde(default)]
    pub schedule: Option<String>,
    /// Each direction's queue.
    pub queue: QueueConfig,
    /// The second of the minute at which the run starts (reassignments come
    /// at 12, 27, 42 and 57).
    #[serde(default)]
    pub start_second: u32,
    /// Overrides of the preset's handover pause, loss and loss window.
    #[serde(default)]
    pub handover_pause_ns: Option<u64>,
    #[serde(default)]
    pub handover_loss: Option<f64>,
    #[serde(default)]
    pub handover_window_ns: Option<u64>,
}

/// One direction of a trace hop: a capacity trace file, or a fixed rate.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceDirConfig {
    /// The capacity trace (a path the simulator reads).
    #[serde(default)]
    pub file: Option<String>,
    #[serde(default)]
    pub format: TraceFormat,
    /// A fixed rate instead of a trace (`up_rate`), bit/s.
    #[serde(default)]
    pub rate_bps: Option<u64>,
    /// One-way propagation delay after the queue, ns.
    pub delay_ns: u64,
    /// A delay trace replacing `delay_ns` (a path the simulator reads).
    #[serde(default)]
    pub delay_trace: Option<String>,
    pub queue: QueueConfig,
    #[serde(default)]
    pub loss: LossConfig,
    /// The queue discipline of a direction served by delivery
    /// opportunities; None: the DropTail model that computes each
    /// departure on arrival.
    #[serde(default)]
    pub aqm: Option<crate::queue::AqmConfig>,
}

/// How a capacity trace file is written.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TraceFormat {
    /// One line per 1504-byte delivery opportunity, in whole milliseconds.
    #[default]
    Mahimahi,
    /// `time_us,bytes` rows: opportunities at microseconds with byte counts.
    Csv,
}

/// A link direction's reordering process (`LinkDirConfig::reorder`).
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReorderConfig {
    /// Probability that a packet is delayed.
    pub p: f64,
    /// The extra one-way delay of a delayed packet, ns (> 0).
    pub extra_ns: u64,
}

fn default_bits_per_byte() -> u32 {
    8
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum QueueConfig {
    /// DropTail with a limit in packets (waiting + in transmission).
    Packets { limit: u32 },
    /// DropTail with a limit in bytes of IP datagrams (waiting + in transmission).
    Bytes { limit: u64 },
}

#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum LossConfig {
    #[default]
    None,
    /// Independent loss with probability `p` per packet.
    Bernoulli { p: f64 },
    /// Two-state Gilbert–Elliott chain, stepped once per packet: `p_gb` is
    /// P(good→bad), `p_bg` P(bad→good); loss probability per state.
    GilbertElliott {
        p_gb: f64,
        p_bg: f64,
        loss_good: f64,
        loss_bad: f64,
    },
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowConfig {
    pub name: String,
    /// Indexes into `hops`, in the order data traverses them; ACKs return
    /// through the same hops in reverse order, in their `rev` direction.
    pub path: Vec<usize>,
    /// When the first connection opens, ns.
    #[serde(default)]
    pub start_ns: u64,
    pub tcp: TcpConfigJson,
    pub app: AppConfig,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TcpConfigJson {
    /// A congestion control's name in `tcplab_tcp::cc::REGISTRY`.
    pub cc: String,
    /// Congestion-control parameters (`cc::check_params` lists them).
    #[serde(default)]
    pub cc_params: std::collections::BTreeMap<String, f64>,
    pub sack: bool,
    pub dsack: bool,
    pub timestamps: bool,
    pub window_scaling: bool,
    /// Sender MSS (payload bytes per segment).
    pub mss: u32,
    /// Receive buffer (bytes): the largest window the receiver advertises.
    pub rcv_buf: u64,
    /// Send buffer (bytes): the most unacknowledged + unsent data the sender holds.
    pub snd_buf: u64,
    /// The send buffer and its application: "fixed" (snd_buf payload bytes, an
    /// application that never runs dry) or "linux" (Linux's truesize accounting,
    /// snd_buf = tcp_wmem[2], a writer woken on writability).
    #[serde(default = "default_snd_buf_model")]
    pub snd_buf_model: String,
    /// How new data is cut into skbs and held back: "none" (as cwnd allows) or
    /// "linux" (tcp_write_xmit's skbs and tcp_tso_should_defer).
    #[serde(default = "default_tso_model")]
    pub tso_model: String,
    /// How RACK's reordering timer and the tail-loss probe fire: "exact" or
    /// "linux" (on the jiffies timer wheel).
    #[serde(default = "default_timers")]
    pub timers: String,
    /// Initial window in bytes (Python resolves "N segments" to N·MSS).
    pub initial_window_bytes: u64,
    /// Initial ssthresh in bytes; None = "arbitrarily high" (RFC 5681 §3.1).
    pub initial_ssthresh: Option<u64>,
    /// Cap on cwnd in bytes (None = none).
    pub max_cwnd: Option<u64>,
    pub limited_transmit: bool,
    /// Limited Transmit also with SACK (on top of the pipe; ns-3's behaviour).
    #[serde(default)]
    pub limited_transmit_sack: bool,
    /// Duplicate ACKs that trigger fast retransmit (default 3, RFC 5681 §3.2).
    #[serde(default = "default_dupthresh")]
    pub dupthresh: u32,
    /// Congestion avoidance when cwnd == ssthresh (default false: slow start).
    #[serde(default)]
    pub ca_at_ssthresh: bool,
    /// Target rate of `cc = "qos_tcp"`, bit/s (required for it, rejected otherwise).
    #[serde(default)]
    pub qos_target_bps: Option<u64>,
    pub rto: RtoConfigJson,
    pub ack: AckConfigJson,
    /// RFC 3465 ABC limit L in SMSS for slow start (1 = RFC 5681).
    #[serde(default = "default_abc_l")]
    pub abc_l: u32,
    /// HyStart++ (RFC 9406) in the initial slow start.
    #[serde(default)]
    pub hystart: bool,
    /// HyStart as Linux's tcp_cubic.c (cubic only).
    #[serde(default)]
    pub hystart_linux: bool,
    /// CUBIC with Linux's tcp_cubic.c window arithmetic (cubic only).
    #[serde(default)]
    pub cubic_linux: bool,
    /// Reno/NewReno with Linux's window arithmetic in whole packets (reno/newreno only).
    #[serde(default)]
    pub reno_linux: bool,
    /// Receiver-side ACK congestion control (RFC 3449 §4.3), None = off.
    #[serde(default)]
    pub ack_cc: Option<AckCcJson>,
    /// Spurious-timeout detector: "none" | "frto" | "frto-basic" | "frto-linux" | "eifel" | "dsack".
    #[serde(default = "default_spurious_detection")]
    pub spurious_detection: String,
    /// Response to a detected spurious timeout: "eifel" | "keep-cwnd" | "reno".
    #[serde(default = "default_spurious_response")]
    pub spurious_response: String,
    /// Spurious fast-retransmit detector: "none" | "eifel" | "dsack".
    #[serde(default = "default_spurious_detection")]
    pub spurious_fr: String,
    /// Response to a detected spurious fast retransmit: "eifel" | "undo" | "none".
    #[serde(default = "default_spurious_response")]
    pub spurious_fr_response: String,
    /// The receiving application's read rate, bit/s (None: reads at once).
    #[serde(default)]
    pub read_rate_bps: Option<u64>,
    /// cwnd in fast recovery: "immediate" | "prr" | "prr-crb" (RFC 6937) |
    /// "prr-linux" (Linux's tcp_cwnd_reduction).
    #[serde(default = "default_recovery_cwnd")]
    pub recovery_cwnd: String,
    /// Loss detection in SACK recovery: "dupthresh" | "rack" (RFC 8985 §6).
    #[serde(default = "default_loss_detection")]
    pub loss_detection: String,
    /// Tail loss probes (RFC 8985 §7).
    #[serde(default)]
    pub tlp: bool,
    /// ssthresh after a loss from "flight" (RFC 5681 eq. 4) or "cwnd" (Linux).
    #[serde(default = "default_ssthresh_from")]
    pub ssthresh_from: String,
    /// The advertised window: "fixed" (all free space of rcv_buf) or "linux"
    /// (Linux's growth and autotuning, rcv_buf = tcp_rmem[2]).
    #[serde(default = "default_rcv_window")]
    pub rcv_window: String,
    /// With rcv_window = "linux": len·256/truesize of a full segment.
    #[serde(default = "default_rcv_scaling_ratio")]
    pub rcv_scaling_ratio: u32,
    /// Pace transmissions (Linux's internal pacing); absent: as the
    /// congestion control needs (BBR paces, the others do not).
    #[serde(default)]
    pub pacing: Option<bool>,
    /// ECN (RFC 3168): "off", "on" (request and accept) or "passive"
    /// (accept only; Linux's default, `tcp_ecn = 2`).
    #[serde(default = "default_ecn")]
    pub ecn: String,
    /// The sending host's transmit path in time (`xmit_time`, simulator
    /// only); None: segments reach the first hop the instant TCP sends them.
    #[serde(default)]
    pub xmit_time: Option<XmitTimeJson>,
}

/// How long the sending host takes to put what one event (an ACK, a timer,
/// the application) releases on the wire: `first_ns` to the first segment,
/// `gso_ns` more when it releases several, `gap_ns` between them, and the
/// time to the first segment spread uniformly over `jitter_ns` around
/// `first_ns` (sim.rs, `Sim::transmit_host`).
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct XmitTimeJson {
    pub first_ns: u64,
    pub gso_ns: u64,
    pub gap_ns: u64,
    #[serde(default)]
    pub jitter_ns: u64,
}

/// The longest `xmit_time` term accepted (1 ms: a host's send path takes
/// microseconds; more is a unit mistake).
pub const XMIT_TIME_MAX_NS: u64 = 1_000_000;

fn default_ecn() -> String {
    "off".into()
}

fn default_rcv_window() -> String {
    "fixed".into()
}

fn default_snd_buf_model() -> String {
    "fixed".into()
}

fn default_tso_model() -> String {
    "none".into()
}

fn default_timers() -> String {
    "exact".into()
}

fn default_rcv_scaling_ratio() -> u32 {
    tcplab_tcp::config::DEFAULT_RCV_SCALING_RATIO
}

fn default_ssthresh_from() -> String {
    "flight".into()
}

fn default_recovery_cwnd() -> String {
    "immediate".into()
}

fn default_loss_detection() -> String {
    "dupthresh".into()
}

fn default_abc_l() -> u32 {
    1
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AckCcJson {
    /// Packets waiting ahead of a just-sent ACK in the uplink queue that
    /// count as congestion.
    pub queue_threshold: u32,
    /// Largest ACK ratio (0 = half the receive window in segments).
    pub max_ratio: u32,
}

fn default_spurious_detection() -> String {
    "none".into()
}

fn default_spurious_response() -> String {
    "eifel".into()
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RtoConfigJson {
    pub initial_ns: u64,
    pub min_ns: u64,
    pub max_ns: u64,
    pub granularity_ns: u64,
    /// Cap on the number of doublings (RTO = base · 2^min(backoff, cap)).
    pub max_backoff: u32,
    /// Restart the timer on a retransmission of the first unacknowledged
    /// segment (Linux; `RtoProfile::restart_on_rtx`).
    #[serde(default)]
    pub restart_on_rtx: bool,
    /// `rfc6298` or `linux` (`RtoProfile::estimator`).
    #[serde(default = "default_estimator")]
    pub estimator: String,
    /// When the connection gives up (`RtoProfile::syn_retries`,
    /// `synack_retries`, `retries2`; RFC 6298's profile by default).
    #[serde(default = "default_syn_retries")]
    pub syn_retries: u32,
    #[serde(default = "default_synack_retries")]
    pub synack_retries: u32,
    #[serde(default = "default_retries2")]
    pub retries2: u32,
}

fn default_syn_retries() -> u32 {
    tcplab_tcp::RtoProfile::RFC6298.syn_retries
}

fn default_synack_retries() -> u32 {
    tcplab_tcp::RtoProfile::RFC6298.synack_retries
}

fn default_retries2() -> u32 {
    tcplab_tcp::RtoProfile::RFC6298.retries2
}

fn default_estimator() -> String {
    "rfc6298".into()
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AckConfigJson {
    /// ACK at least every N full-sized segments.
    pub every_n: u32,
    /// Longest an ACK may be delayed, ns (0 = no delayed ACK).
    pub max_delay_ns: u64,
    /// Send an immediate ACK for an out-of-order segment or one that fills a hole.
    pub immediate_on_ooo: bool,
    /// ACK every segment for the first N segments (Linux quick-ACK), 0 = off.
    pub quickack: u32,
    /// Delayed-ACK timer is a free-running tick of period max_delay (BSD).
    #[serde(default)]
    pub periodic: bool,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum AppConfig {
    /// One connection sending `bytes` (None = unlimited) as fast as TCP allows.
    Bulk { bytes: Option<u64> },
    /// A series of downloads, each on its own connection, separated by think times.
    Downloads {
        sizes: Dist,
        think_ns: Dist,
        /// Number of downloads (None = until the run ends).
        count: Option<u64>,
    },
}

/// A distribution of non-negative values (bytes or ns).
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Dist {
    Const {
        value: f64,
    },
    Uniform {
        lo: f64,
        hi: f64,
    },
    Exponential {
        mean: f64,
    },
    /// Log-normal with the given parameters of the underlying normal.
    Lognormal {
        mu: f64,
        sigma: f64,
    },
    /// Pareto with minimum `scale` and tail index `shape`.
    Pareto {
        scale: f64,
        shape: f64,
    },
    /// Piecewise uniform: pick a bin with probability ∝ weight, then uniform in [lo, hi).
    Empirical {
        bins: Vec<(f64, f64, f64)>,
    },
}

/// Constant-bit-rate UDP cross traffic along `path` (forward direction).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CbrConfig {
    pub name: String,
    pub path: Vec<usize>,
    pub rate_bps: u64,
    /// IP datagram size in bytes.
    pub packet_bytes: u32,
    pub start_ns: u64,
    pub stop_ns: u64,
}

/// An ICMP-echo-like probe: every `interval_ns` a request of `packet_bytes`
/// (IP datagram) travels `path` one way, the far end answers at once with a
/// reply of the same size, and the round-trip time is recorded.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PingConfig {
    pub name: String,
    /// Hops in data (forward) order, as for flows.
    pub path: Vec<usize>,
    pub packet_bytes: u32,
    pub interval_ns: u64,
    pub start_ns: u64,
    pub stop_ns: u64,
    /// The request starts at the receivers' end (travels the reverse
    /// direction first, like a terminal pinging its server) when true.
    pub from_receiver: bool,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PcapConfig {
    /// Index into `hops`.
    pub hop: usize,
    /// "fwd" | "rev" | "both"
    pub dir: String,
    pub path: String,
    /// Payload bytes to keep per packet (None = whole payload, as zeros).
    pub payload_snaplen: Option<u32>,
}

/// The canonical scenario (`scenarios/p2p-bulk.toml`) with the Python
/// layer's defaults, for Rust tests, examples and benchmarks.
pub fn example_p2p(duration_ns: u64, loss: f64) -> SimConfig {
    let dir = LinkDirConfig {
        rate_bps: 10_000_000,
        delay_ns: 50_000_000,
        queue: QueueConfig::Packets { limit: 100 },
        loss: if loss > 0.0 {
            LossConfig::Bernoulli { p: loss }
        } else {
            LossConfig::None
        },
        overhead_bytes: 0,
        bits_per_byte: 8,
        reorder: None,
        outages_ns: Vec::new(),
        stalls_ns: Vec::new(),
        aqm: None,
        delay_trace: None,
    };
    SimConfig {
        name: "p2p-bulk".into(),
        duration_ns,
        seed: 1,
        sample_interval_ns: 100_000_000,
        trace: false,
        hops: vec![HopConfig::Link(LinkConfig {
            name: "link0".into(),
            fwd: dir.clone(),
            rev: LinkDirConfig {
                loss: LossConfig::None,
                ..dir
            },
        })],
        flows: vec![FlowConfig {
            name: "flow0".into(),
            path: vec![0],
            start_ns: 0,
            tcp: TcpConfigJson::default(),
            app: AppConfig::Bulk { bytes: None },
        }],
        cross: vec![],
        pcap: vec![],
        pings: vec![],
        record: Default::default(),
    }
}

impl Default for TcpConfigJson {
    fn default() -> Self {
        TcpConfigJson {
            cc: "newreno".into(),
            cc_params: Default::default(),
            sack: true,
            dsack: true,
            timestamps: true,
            window_scaling: true,
            mss: 1448,
            rcv_buf: 4 << 20,
            snd_buf: 4 << 20,
            snd_buf_model: default_snd_buf_model(),
            tso_model: default_tso_model(),
            timers: default_timers(),
            initial_window_bytes: 10 * 1448,
            initial_ssthresh: None,
            max_cwnd: None,
            limited_transmit: true,
            limited_transmit_sack: false,
            dupthresh: 3,
            ca_at_ssthresh: false,
            qos_target_bps: None,
            rto: RtoConfigJson {
                initial_ns: 1_000_000_000,
                min_ns: 1_000_000_000,
                max_ns: 60_000_000_000,
                granularity_ns: 1_000_000,
                max_backoff: 16,
                restart_on_rtx: false,
                estimator: default_estimator(),
                syn_retries: default_syn_retries(),
                synack_retries: default_synack_retries(),
                retries2: default_retries2(),
            },
            ack: AckConfigJson {
                every_n: 2,
                max_delay_ns: 200_000_000,
                immediate_on_ooo: true,
                quickack: 0,
                periodic: false,
            },
            abc_l: 1,
            hystart: false,
            hystart_linux: false,
            cubic_linux: false,
            reno_linux: false,
            ack_cc: None,
            spurious_detection: default_spurious_detection(),
            spurious_response: default_spurious_response(),
            spurious_fr: default_spurious_detection(),
            spurious_fr_response: default_spurious_response(),
            read_rate_bps: None,
            recovery_cwnd: default_recovery_cwnd(),
            loss_detection: default_loss_detection(),
            tlp: false,
            ssthresh_from: default_ssthresh_from(),
            rcv_window: default_rcv_window(),
            rcv_scaling_ratio: default_rcv_scaling_ratio(),
            pacing: None,
            ecn: default_ecn(),
            xmit_time: None,
        }
    }
}
