//! Per-connection configuration.

use crate::cc::{names_where, CcEntry};
use crate::recovery::{LossDetection, RecoveryCwnd};
use crate::spurious::{DetectorKind, FrResponseKind, ResponseKind};
use crate::{Time, NS_PER_MS, NS_PER_S};

/// RTO profile (RFC 6298 with the knobs real stacks expose).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RtoProfile {
    /// RTO before the first sample (RFC 6298 §2.1).
    pub initial: Time,
    /// Lower bound (RFC 6298 §2.4).
    pub min: Time,
    /// Upper bound (RFC 6298 §2.5).
    pub max: Time,
    /// Clock granularity G (RFC 6298 §2.3).
    pub granularity: Time,
    /// Cap on the number of doublings (RFC 6298 §5.5).
    pub max_backoff: u32,
    /// Restart the timer when the first unacknowledged segment is
    /// retransmitted by fast retransmit or loss recovery, as Linux does
    /// (`tcp_xmit_retransmit_queue` re-arms ICSK_TIME_RETRANS for the head),
    /// besides RFC 6298 §5.3's restart on an ACK of new data. Without it a
    /// head retransmission that waits in a long queue meets the timer armed
    /// by the last cumulative ACK before the loss.
    pub restart_on_rtx: bool,
    /// How SRTT and the variance term are kept, and which RTT samples feed
    /// them.
    pub estimator: RttEstimatorKind,
    /// SYN retransmissions before an active open gives up (RFC 1122
    /// §4.2.3.5 R2 for a SYN; Linux `net.ipv4.tcp_syn_retries`; `give_up.rs`).
    pub syn_retries: u32,
    /// SYN-ACK retransmissions before a passive open gives up (Linux
    /// `net.ipv4.tcp_synack_retries`).
    pub synack_retries: u32,
    /// A synchronized connection gives up once retransmitting one segment
    /// has taken as long as this many timeouts from 200 ms doubling to 120 s
    /// (RFC 1122 §4.2.3.5 R2; Linux `net.ipv4.tcp_retries2`, `give_up.rs`).
    pub retries2: u32,
}

/// The RTT estimator of an RTO profile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RttEstimatorKind {
    /// RFC 6298 §2: SRTT and RTTVAR updated per sample, RTO = SRTT +
    /// max(G, 4·RTTVAR); samples by RFC 7323 §4.2 (TSecr) or Karn's rule
    /// (the newest original segment cumulatively acknowledged).
    Rfc6298,
    /// Linux's `tcp_rtt_estimator`: the variance term is the largest mean
    /// deviation seen over the last round trip (it rises at once and decays
    /// by 1/4 per round trip, never below the minimum RTO), RTO = SRTT + that
    /// term (`__tcp_set_rto`); samples as `tcp_clean_rtx_queue` and
    /// `tcp_ack_update_rtt` take them: the oldest original segment newly
    /// acknowledged, else the oldest original segment newly SACKed (also on
    /// an ACK that does not advance SND.UNA), else TSecr.
    Linux,
}

impl RttEstimatorKind {
    /// The names a scenario gives (`rto.estimator`).
    pub const NAMES: [(&'static str, RttEstimatorKind); 2] = [
        ("rfc6298", RttEstimatorKind::Rfc6298),
        ("linux", RttEstimatorKind::Linux),
    ];

    pub fn parse(name: &str) -> Option<RttEstimatorKind> {
        Self::NAMES
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, k)| *k)
    }

    pub fn name(self) -> &'static str {
        Self::NAMES
            .iter()
            .find(|(_, k)| *k == self)
            .map_or("", |(n, _)| n)
    }
}

impl Default for RtoProfile {
    fn default() -> Self {
        RtoProfile::RFC6298
    }
}

impl RtoProfile {
    /// RFC 6298 §2: initial 1 s, minimum 1 s (SHOULD), maximum ≥ 60 s (MAY); 1 ms clock.
    /// Giving up (RFC 1122 §4.2.3.5): a SYN is retransmitted for at least 3 minutes
    /// (7 retransmissions: the 8th timeout comes 183 s after the SYN), data for at least
    /// 100 s (15 as Linux: 924.6 s).
    pub const RFC6298: RtoProfile = RtoProfile {
        initial: NS_PER_S,
        min: NS_PER_S,
        max: 60 * NS_PER_S,
        granularity: NS_PER_MS,
        max_backoff: 16,
        restart_on_rtx: false,
        estimator: RttEstimatorKind::Rfc6298,
        syn_retries: 7,
        synack_retries: 7,
        retries2: 15,
    };

    /// The named profiles a scenario picks with `rto = "<name>"` (the first
    /// is the default); a scenario's `rto` table overrides single fields.
    pub const NAMED: [(&'static str, RtoProfile); 4] = [
        ("rfc6298", RtoProfile::RFC6298),
        // The 3G paper's "standard" profile (Linux-like RFC 2988): initial 3 s, minimum 0.5 s.
        (
            "standard",
            RtoProfile {
                initial: 3 * NS_PER_S,
                min: 500 * NS_PER_MS,
                ..RtoProfile::RFC6298
            },
        ),
        // The 3G paper's tuned profile: initial = minimum = 4 s.
        (
            "tuned-3g",
            RtoProfile {
                initial: 4 * NS_PER_S,
                min: 4 * NS_PER_S,
                ..RtoProfile::RFC6298
            },
        ),
        // Linux: TCP_TIMEOUT_INIT 1 s, TCP_RTO_MIN 200 ms, TCP_RTO_MAX 120 s; Linux floors
        // the variance term rather than the RTO (tcp_rtt_estimator/__tcp_set_rto: RTO =
        // SRTT + rttvar, rttvar ≥ TCP_RTO_MIN), i.e. RFC 6298's SRTT + max(G, 4·RTTVAR)
        // with G = 200 ms. Measured against Linux 6.18 in validation/linux (RTO 245 ms at
        // SRTT 44 ms, 372 ms at 172 ms).
        (
            "linux",
            RtoProfile {
                initial: NS_PER_S,
                min: 200 * NS_PER_MS,
                max: 120 * NS_PER_S,
                granularity: 200 * NS_PER_MS,
                max_backoff: 16,
                restart_on_rtx: true,
                estimator: RttEstimatorKind::Linux,
                // net.ipv4.tcp_syn_retries = 6, tcp_synack_retries = 5, tcp_retries2 = 15.
                syn_retries: 6,
                synack_retries: 5,
                retries2: 15,
            },
        ),
    ];
}

/// Receiver ACK policy (RFC 1122 §4.2.3.2, RFC 5681 §4.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AckPolicyConfig {
    /// ACK at least every `every_n` full-sized segments.
    pub every_n: u32,
    /// Longest delay of an ACK (0 = ACK every segment at once).
    pub max_delay: Time,
    /// Immediate ACK for out-of-order segments and segments that fill a hole.
    pub immediate_on_ooo: bool,
    /// ACK every segment for the first `quickack` data segments.
    pub quickack: u32,
    /// The delayed-ACK timer is a free-running periodic timer of period
    /// `max_delay` (4.4BSD's 200 ms fast timeout, `tcp_fasttimo`): a held ACK
    /// leaves at the next multiple of `max_delay`, after (0, max_delay].
    pub periodic: bool,
}

impl AckPolicyConfig {
    /// The delayed-ACK timers a scenario names (`ack.timer`): a one-shot
    /// timer from the first unacknowledged segment, or `periodic`.
    pub const TIMERS: [&'static str; 2] = ["oneshot", "periodic"];
}

impl Default for AckPolicyConfig {
    fn default() -> Self {
        AckPolicyConfig {
            every_n: 2,
            max_delay: 200 * NS_PER_MS,
            immediate_on_ooo: true,
            quickack: 0,
            periodic: false,
        }
    }
}

/// A congestion control chosen by name from `cc::REGISTRY`, with the target
/// rate of a controller that needs one (`CcEntry::target_rate`, bit/s).
#[derive(Clone, Copy, Debug)]
pub struct CcKind {
    pub entry: &'static CcEntry,
    pub target_bps: Option<u64>,
}

impl CcKind {
    /// The registry entry named `s`, without a target rate (`cc::find`).
    pub fn parse(s: &str) -> Option<CcKind> {
        crate::cc::find(s).map(|entry| CcKind {
            entry,
            target_bps: None,
        })
    }

    pub fn name(&self) -> &'static str {
        self.entry.name
    }
}

impl PartialEq for CcKind {
    fn eq(&self, other: &CcKind) -> bool {
        self.entry.name == other.entry.name && self.target_bps == other.target_bps
    }
}

impl Eq for CcKind {}

/// What a loss's multiplicative decrease is applied to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SsthreshFrom {
    /// FlightSize (RFC 5681 §3.1 eq. 4, RFC 9438 §4.6).
    Flight,
    /// cwnd (Linux: `tcp_reno_ssthresh`, CUBIC's `bictcp_recalc_ssthresh`).
    Cwnd,
}

impl SsthreshFrom {
    pub const NAMES: [&'static str; 2] = ["flight", "cwnd"];
    pub fn parse(s: &str) -> Option<SsthreshFrom> {
        match s {
            "flight" => Some(SsthreshFrom::Flight),
            "cwnd" => Some(SsthreshFrom::Cwnd),
            _ => None,
        }
    }
}

/// len·256/truesize of a full 1448-byte segment measured on a Linux 6.18
/// receiver behind a TUN device (its window clamp 80896 = 131072·158/256).
pub const DEFAULT_RCV_SCALING_RATIO: u32 = 158;

/// Everything one endpoint needs to know. Both ends of a connection are
/// usually built from the same `Config`.
#[derive(Clone, Debug)]
pub struct Config {
    pub cc: CcKind,
    /// Parameters of the congestion control (`cc_params`), checked by
    /// `cc::check_params`.
    pub cc_params: crate::cc::CcParams,
    /// Offer/accept SACK (RFC 2018).
    pub sack: bool,
    /// Generate DSACK blocks as a receiver (RFC 2883).
    pub dsack: bool,
    /// Offer/accept timestamps (RFC 7323 §3).
    pub timestamps: bool,
    /// Offer/accept window scaling (RFC 7323 §2).
    pub window_scaling: bool,
    /// MSS we announce and the most payload we put in a segment.
    pub mss: u32,
    /// Receive buffer: the largest window we advertise.
    pub rcv_buf: u64,
    /// Send buffer: the most unacknowledged + unsent bytes we hold (with
    /// `snd_buf_model = Linux`, `tcp_wmem[2]` in Linux's truesize units).
    pub snd_buf: u64,
    /// The send buffer and its application: payload bytes and an application
    /// that never runs dry (`Fixed`), or Linux's `sk_wmem_queued`/`sk_sndbuf`
    /// with a writer woken on writability (`Linux`, `sndbuf.rs`).
    pub snd_buf_model: crate::sndbuf::SndBufKind,
    /// How new data is cut into skbs and held back: segment by segment as
    /// cwnd allows (`None`), or Linux's `tcp_write_xmit` (`Linux`, `tso.rs`).
    pub tso_model: crate::tso::TsoKind,
    /// How RACK's reordering timer and the tail-loss probe fire: at the
    /// computed instant (`Exact`) or on Linux's jiffies timer wheel (`Linux`,
    /// `jiffies.rs`).
    pub timers: crate::jiffies::TimerKind,
    /// Initial congestion window in bytes.
    pub initial_window: u64,
    /// Initial ssthresh (None = arbitrarily high, RFC 5681 §3.1).
    pub initial_ssthresh: Option<u64>,
    /// Cap on cwnd.
    pub max_cwnd: Option<u64>,
    /// Limited Transmit (RFC 3042).
    pub limited_transmit: bool,
    /// Limited Transmit also with SACK, on top of RFC 6675's pipe (as ns-3's
    /// TcpSocketBase does: a new segment per duplicate ACK before recovery and
    /// whatever cwnd − pipe allows); false = with SACK only the pipe counts
    /// (RFC 6675, as Linux).
    pub limited_transmit_sack: bool,
    /// Duplicate ACKs that trigger fast retransmit (RFC 5681 §3.2 DupThresh,
    /// 3; Linux `tcp_reordering`). A large value leaves loss to the RTO.
    pub dupthresh: u32,
    /// Congestion avoidance (not slow start) when cwnd == ssthresh
    /// (RFC 5681 §3.1: either is allowed).
    pub ca_at_ssthresh: bool,
    pub rto: RtoProfile,
    pub ack: AckPolicyConfig,
    /// Timestamp clock tick (RFC 7323 §5.4 suggests 1 ms–1 s).
    pub ts_granularity: Time,
    /// Appropriate Byte Counting limit L in SMSS (RFC 3465 §2.2): slow start
    /// grows cwnd by min(bytes acked, L·SMSS) per ACK. 1 = RFC 5681 §3.1.
    pub abc_l: u32,
    /// HyStart++ (RFC 9406) in the initial slow start (reno/newreno/cubic).
    pub hystart: bool,
    /// HyStart as Linux's tcp_cubic.c: ACK trains and delay increase
    /// (cubic only; `cc/hystart_linux.rs`).
    pub hystart_linux: bool,
    /// CUBIC with Linux's tcp_cubic.c window arithmetic (`cc/cubic_linux.rs`) instead of
    /// RFC 9438's (cubic only).
    pub cubic_linux: bool,
    /// Reno with Linux's window arithmetic in whole packets (`cc/reno_linux.rs`:
    /// `tcp_reno_ssthresh`, `tcp_slow_start`, `tcp_cong_avoid_ai`) instead of RFC 5681's in
    /// bytes (reno/newreno only).
    pub reno_linux: bool,
    /// Receiver-side ACK congestion control (RFC 3449 §4.3), if enabled.
    pub ack_cc: Option<crate::ack_cc::AckCcConfig>,
    /// Spurious-timeout detector (F-RTO, Eifel, DSACK) and response.
    pub spurious_detection: DetectorKind,
    pub spurious_response: ResponseKind,
    /// Spurious fast-retransmit detector (`None`, `Eifel` RFC 3522 or `Dsack`
    /// RFC 3708; one verdict per recovery episode) and the undo that follows.
    pub spurious_fr: DetectorKind,
    pub spurious_fr_response: FrResponseKind,
    /// The receiving application reads at most this many bit/s (None: it
    /// reads everything as soon as it is delivered). A slower reader fills
    /// the receive buffer, shrinks the advertised window (receiver SWS
    /// avoidance, RFC 9293 §3.8.6.2.2) and can close it; the sender then
    /// probes the zero window (RFC 9293 §3.8.6.1).
    pub read_rate_bps: Option<u64>,
    /// cwnd during fast recovery: cwnd = ssthresh at once, or PRR
    /// (RFC 6937; SACK recovery only).
    pub recovery_cwnd: RecoveryCwnd,
    /// Loss detection in SACK recovery: RFC 6675 DupThresh or RACK
    /// (RFC 8985 §6).
    pub loss_detection: LossDetection,
    /// Tail loss probes (RFC 8985 §7; needs SACK).
    pub tlp: bool,
    /// ssthresh after a loss from FlightSize (the RFCs) or cwnd (Linux).
    pub ssthresh_from: SsthreshFrom,
    /// The advertised window: all free space of `rcv_buf` (`Fixed`), or
    /// Linux's rcv_ssthresh growth and autotuning with `rcv_buf` as
    /// `tcp_rmem[2]` (`Linux`, `rcv_window.rs`).
    pub rcv_window: crate::rcv_window::RcvWindowKind,
    /// With `rcv_window = Linux`: len·256/truesize of a full received
    /// segment (Linux's `scaling_ratio` once measured), 1–255.
    pub rcv_scaling_ratio: u32,
    /// Pace transmissions (`pacing.rs`, Linux's internal pacing). None: as
    /// the congestion control needs (Linux paces a `.cong_control`
    /// controller such as BBR without `fq`, and no other).
    pub pacing: Option<bool>,
    /// ECN (RFC 3168, `ecn.rs`): off, request and accept, or accept only
    /// (Linux's `tcp_ecn` 0, 1, 2).
    pub ecn: crate::ecn::EcnMode,
    /// The MSS option as RFC 6691 §2 has it (a host talking to real peers,
    /// the emulator's endpoint): the option announces the largest segment
    /// without TCP options, `mss` + 12 when timestamps are offered (RFC 7323
    /// §3), and the send MSS is the peer's option less the 12 bytes of
    /// timestamps every segment then carries (as Linux's tcp_mss_to_mtu and
    /// tcp_current_mss). false: the option is `mss` and a segment carries
    /// `mss` bytes of data whatever its options (the simulator's model).
    pub mss_option_rfc6691: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            cc: CcKind::parse("newreno").expect("newreno is registered"),
            cc_params: crate::cc::CcParams::default(),
            sack: true,
            dsack: true,
            timestamps: true,
            window_scaling: true,
            mss: 1448,
            rcv_buf: 4 << 20,
            snd_buf: 4 << 20,
            snd_buf_model: crate::sndbuf::SndBufKind::Fixed,
            tso_model: crate::tso::TsoKind::None,
            timers: crate::jiffies::TimerKind::Exact,
            initial_window: 10 * 1448,
            initial_ssthresh: None,
            max_cwnd: None,
            limited_transmit: true,
            limited_transmit_sack: false,
            dupthresh: crate::connection::DUPTHRESH,
            ca_at_ssthresh: false,
            rto: RtoProfile::default(),
            ack: AckPolicyConfig::default(),
            ts_granularity: NS_PER_MS,
            abc_l: 1,
            hystart: false,
            hystart_linux: false,
            cubic_linux: false,
            reno_linux: false,
            ack_cc: None,
            spurious_detection: DetectorKind::None,
            spurious_response: ResponseKind::Eifel,
            spurious_fr: DetectorKind::None,
            spurious_fr_response: FrResponseKind::Eifel,
            read_rate_bps: None,
            recovery_cwnd: RecoveryCwnd::Immediate,
            loss_detection: LossDetection::Dupthresh,
            tlp: false,
            ssthresh_from: SsthreshFrom::Flight,
            rcv_window: crate::rcv_window::RcvWindowKind::Fixed,
            rcv_scaling_ratio: DEFAULT_RCV_SCALING_RATIO,
            pacing: None,
            ecn: crate::ecn::EcnMode::Off,
            mss_option_rfc6691: false,
        }
    }
}

/// The rule PRR, RACK and TLP share (the text Python's scenario loader shows too).
const NEEDS_SACK: &str = "needs sack = true (RFC 6937 / RFC 8985 use SACK)";

impl Config {
    /// Check structural rules; the message names the field and the rule.
    pub fn validate(&self) -> Result<(), String> {
        if !(64..=65495).contains(&self.mss) {
            return Err(format!(
                "mss: must be between 64 and 65495 (got {})",
                self.mss
            ));
        }
        if self.rcv_buf < self.mss as u64 {
            return Err(format!(
                "rcv_buf: must be at least one MSS (got {})",
                self.rcv_buf
            ));
        }
        if self.rcv_buf > (1 << 30) {
            return Err(format!(
                "rcv_buf: must be at most 1 GiB, the largest scaled window (got {})",
                self.rcv_buf
            ));
        }
        if !self.window_scaling && self.rcv_buf > 65535 {
            // Not an error: the advertised window is capped at 65535 without scaling.
        }
        if self.snd_buf < self.mss as u64 {
            return Err(format!(
                "snd_buf: must be at least one MSS (got {})",
                self.snd_buf
            ));
        }
        if !(1..=255).contains(&self.rcv_scaling_ratio) {
            return Err(format!(
                "rcv_scaling_ratio: must be between 1 and 255 (got {})",
                self.rcv_scaling_ratio
            ));
        }
        if self.read_rate_bps == Some(0) {
            return Err("read_rate: must be > 0 (got 0)".into());
        }
        if self.dupthresh == 0 {
            return Err("dupthresh: must be between 1 and 4294967295 (got 0)".into());
        }
        if self.initial_window == 0 {
            return Err("initial_window: must be > 0".into());
        }
        if self.rto.min > self.rto.max {
            return Err("rto.min: must be <= rto.max".into());
        }
        if self.rto.initial < NS_PER_MS || self.rto.max == 0 {
            // A smaller first timeout retransmits the SYN every few ns until it is
            // answered: millions of timeouts per simulated millisecond.
            return Err("rto.initial: must be >= 1ms".into());
        }
        if self.ack.every_n == 0 {
            return Err("ack.every: must be between 1 and 4294967295 (got 0)".into());
        }
        if self.ack.periodic && self.ack.max_delay == 0 {
            return Err("ack.timer: a periodic delayed-ACK timer needs ack.max_delay > 0".into());
        }
        if self.ack.max_delay > 500 * NS_PER_MS {
            // RFC 5681 §4.2: an ACK MUST NOT be delayed more than 500 ms.
            return Err("ack.max_delay: must be <= 500ms (RFC 5681 §4.2)".into());
        }
        if !(1..=2).contains(&self.abc_l) {
            // RFC 3465 §2.2: L MUST NOT exceed 2*SMSS.
            return Err(format!(
                "abc_l: must be between 1 and 2 (got {})",
                self.abc_l
            ));
        }
        let loss_based = self.cc.entry.loss_based;
        if self.abc_l != 1 && !loss_based {
            return Err(format!(
                "abc_l: the byte-counting limit applies to {} only",
                names_where(|e| e.loss_based, "/")
            ));
        }
        if self.hystart && !loss_based {
            // RFC 9406 modifies the slow start of loss-based controllers.
            return Err(format!(
                "hystart: HyStart++ applies to {} only",
                names_where(|e| e.loss_based, "/")
            ));
        }
        if self.hystart_linux && !self.cc.entry.hystart_linux {
            return Err(format!(
                "hystart: \"linux\" (tcp_cubic.c's HyStart) applies to {} only",
                names_where(|e| e.hystart_linux, "/")
            ));
        }
        if self.cubic_linux && !self.cc.entry.cubic_linux {
            return Err(format!(
                "cubic: \"linux\" (tcp_cubic.c's arithmetic) applies to {} only",
                names_where(|e| e.cubic_linux, "/")
            ));
        }
        if self.reno_linux && !self.cc.entry.reno_linux {
            return Err(format!(
                "reno: \"linux\" (Linux's Reno arithmetic) applies to {} only",
                names_where(|e| e.reno_linux, "/")
            ));
        }
        if self.hystart_linux && self.hystart {
            return Err("hystart: choose HyStart++ or Linux's HyStart, not both".into());
        }
        if let Some(a) = self.ack_cc {
            if a.queue_threshold == 0 {
                return Err("ack_cc.queue_threshold: must be >= 1 (got 0)".into());
            }
            if a.max_ratio != 0 && a.max_ratio < self.ack.every_n {
                return Err(format!(
                    "ack_cc.max_ratio: must be 0 (auto) or >= ack.every ({}) (got {})",
                    self.ack.every_n, a.max_ratio
                ));
            }
        }
        crate::cc::check_params(self.cc.entry, &self.cc_params)?;
        if self.ts_granularity == 0 {
            return Err("ts_granularity: must be > 0".into());
        }
        if self.spurious_detection == DetectorKind::Eifel && !self.timestamps {
            // RFC 3522 §2: Eifel detection needs the timestamps option.
            return Err("spurious_detection: \"eifel\" needs timestamps = true".into());
        }
        if self.spurious_detection == DetectorKind::Dsack && !(self.sack && self.dsack) {
            // RFC 3708 §2: DSACK-based detection needs SACK and DSACK.
            return Err("spurious_detection: \"dsack\" needs sack = true and dsack = true".into());
        }
        if !self.spurious_fr.judges_fast_retransmits() {
            // RFC 5682 (F-RTO) is defined for retransmission timeouts only.
            return Err(format!(
                "spurious_fr: must be one of {} (F-RTO judges timeouts only)",
                DetectorKind::FR_NAMES.join(", ")
            ));
        }
        if self.spurious_fr == DetectorKind::Eifel && !self.timestamps {
            // RFC 3522 §2.
            return Err("spurious_fr: \"eifel\" needs timestamps = true".into());
        }
        if self.spurious_fr == DetectorKind::Dsack && !(self.sack && self.dsack) {
            // RFC 3708 §2.
            return Err("spurious_fr: \"dsack\" needs sack = true and dsack = true".into());
        }
        if self.recovery_cwnd != RecoveryCwnd::Immediate && !self.sack {
            // PRR is implemented for SACK recovery (RFC 6937 §3 with SACKd).
            return Err(format!("recovery_cwnd: {NEEDS_SACK}"));
        }
        if self.loss_detection == LossDetection::Rack && !self.sack {
            // RFC 8985 §2: RACK needs SACK.
            return Err(format!("loss_detection: {NEEDS_SACK}"));
        }
        if self.tlp && !self.sack {
            // RFC 8985 §2: TLP needs SACK.
            return Err(format!("tlp: {NEEDS_SACK}"));
        }
        Ok(())
    }

    /// Does this connection pace (`pacing`, or the controller's need)?
    pub fn paces(&self) -> bool {
        self.pacing.unwrap_or(self.cc.entry.cong_control)
    }

    /// Does it estimate delivery rates (`rate.rs`)? A `.cong_control`
    /// controller needs them; a paced flow records them for the time series.
    pub fn estimates_rate(&self) -> bool {
        self.cc.entry.cong_control || self.paces()
    }
}
