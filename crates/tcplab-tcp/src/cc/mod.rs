//! Congestion control behind one trait.
//!
//! The connection owns `cwnd`/`ssthresh` (in `CcState`) and runs loss
//! recovery; a `CongestionControl` decides how the window grows on ACKs and
//! what ssthresh becomes on a congestion event.
//!
//! Every controller is found by name in `REGISTRY` (as Linux's `tcp_cong.c`
//! finds a `tcp_congestion_ops` by its `.name` in `tcp_ca_find`). Each
//! controller's file defines its `CcEntry` — name, parameters with their
//! rules, what it supports, and the factory that builds it (quinn-proto's
//! per-controller `ControllerFactory`). Adding a controller is its file plus
//! one line in `registry!` below (and its row in docs/scenarios.md); the
//! validator, the bindings, Python's lists and checks and the tests that run
//! every controller all read the registry.

pub mod cubic_linux;
pub mod hystart;
pub mod hystart_linux;
mod params;
pub mod reno_linux;
pub mod slow_start;

pub use bdp_tracking::BdpTracking;
pub use cubic::Cubic;
pub use dctcp::Dctcp;
pub use fast::Fast;
pub use params::{check_params, show_f64, CcParams, Param};
pub use qos_tcp::QosTcp;
pub use reno::Reno;
pub use vegas::Vegas;
pub use westwood::Westwood;

use crate::config::CcKind;
pub use crate::rate::RateSample;
use crate::recovery::CaState;
use crate::Time;

/// One congestion control as scenarios name it.
#[derive(Debug)]
pub struct CcEntry {
    /// The `cc = "..."` name.
    pub name: &'static str,
    /// The `cc_params` keys it takes, with defaults and rules.
    pub params: &'static [Param],
    /// `(key, lower)`: `cc_params.key` must be ≥ `cc_params.lower` (defaults included).
    pub at_least: &'static [(&'static str, &'static str)],
    /// Needs a target rate (`qos_target`) and takes one only then.
    pub target_rate: bool,
    /// Loss-based with a standard slow start: Appropriate Byte Counting
    /// (`abc_l`), HyStart++ (`hystart`) apply, and a PEP may run it.
    pub loss_based: bool,
    /// Linux's HyStart (`hystart = "linux"`, `hystart_linux.rs`) applies.
    pub hystart_linux: bool,
    /// Linux's tcp_cubic.c window arithmetic (`cubic = "linux"`, `cubic_linux.rs`) applies.
    pub cubic_linux: bool,
    /// Linux's Reno arithmetic in whole packets (`reno = "linux"`, `reno_linux.rs`) applies.
    pub reno_linux: bool,
    /// Without SACK, leave fast recovery on the first new ACK (Reno,
    /// RFC 5681 §3.2) instead of NewReno's partial-ACK rule (RFC 6582).
    pub reno_recovery: bool,
    /// Linux's `.cong_control`: sets cwnd and the pacing rate itself from
    /// each ACK's delivery-rate sample (`cong_control`), so the connection
    /// runs delivery-rate estimation for it, paces by default (Linux's
    /// `SK_PACING_NEEDED`) and leaves cwnd alone in loss recovery.
    pub cong_control: bool,
    /// A scalable ECN controller (DCTCP, RFC 8257): the connection
    /// negotiates ECN whatever the flow's `ecn` (Linux's
    /// `TCP_CONG_NEEDS_ECN`), sends ECT(1) and echoes each segment's CE
    /// state (`ecn.rs`).
    pub scalable_ecn: bool,
    /// Build the controller (parameters already checked by `check_params`;
    /// the target rate is `Some` exactly when `target_rate`).
    pub build: fn(&CcParams, Option<u64>) -> Box<dyn CongestionControl>,
}

impl CcEntry {
    /// An entry for a controller without parameters or special support;
    /// set the fields that differ with struct update syntax.
    pub const fn new(
        name: &'static str,
        build: fn(&CcParams, Option<u64>) -> Box<dyn CongestionControl>,
    ) -> CcEntry {
        CcEntry {
            name,
            params: &[],
            at_least: &[],
            target_rate: false,
            loss_based: false,
            hystart_linux: false,
            cubic_linux: false,
            reno_linux: false,
            reno_recovery: false,
            cong_control: false,
            scalable_ecn: false,
            build,
        }
    }
}

/// Declares each controller's module and lists its entries in `REGISTRY`:
/// `file: [ENTRY, ...]`. The order is the order scenarios' errors list them.
macro_rules! registry {
    ($($file:ident: [$($entry:ident),+]),+ $(,)?) => {
        $(mod $file;)+
        /// Every congestion control, in the order error messages list them.
        pub static REGISTRY: &[&CcEntry] = &[$($(&$file::$entry),+),+];
    };
}

registry! {
    reno: [RENO, NEWRENO],
    cubic: [CUBIC],
    vegas: [VEGAS],
    fast: [FAST],
    westwood: [WESTWOOD],
    bdp_tracking: [BDP_TRACKING],
    qos_tcp: [QOS_TCP],
    bbr: [BBR],
    dctcp: [DCTCP],
}

/// The registry entry named `name` (Linux's `tcp_ca_find`).
pub fn find(name: &str) -> Option<&'static CcEntry> {
    REGISTRY.iter().copied().find(|e| e.name == name)
}

/// The names of the registry entries `pick` selects, joined as `a/b/c`.
pub fn names_where(pick: impl Fn(&CcEntry) -> bool, sep: &str) -> String {
    REGISTRY
        .iter()
        .filter(|e| pick(e))
        .map(|e| e.name)
        .collect::<Vec<_>>()
        .join(sep)
}

/// The window state shared between the connection and its congestion control.
#[derive(Clone, Copy, Debug)]
pub struct CcState {
    /// Congestion window, bytes.
    pub cwnd: u64,
    /// Slow-start threshold, bytes.
    pub ssthresh: u64,
    /// Sender MSS, bytes.
    pub mss: u64,
    /// Upper bound on cwnd (configuration), bytes.
    pub max_cwnd: u64,
    /// Use congestion avoidance when cwnd == ssthresh (RFC 5681 §3.1 allows
    /// either; false = slow start, tcplab's default).
    pub ca_at_ssthresh: bool,
}

impl CcState {
    #[inline]
    pub fn in_slow_start(&self) -> bool {
        // RFC 5681 §3.1: either mode may be used when cwnd == ssthresh;
        // tcplab picks slow start unless configured otherwise.
        if self.ca_at_ssthresh {
            self.cwnd < self.ssthresh
        } else {
            self.cwnd <= self.ssthresh
        }
    }
}

/// What the congestion control sees of one ACK that advanced SND.UNA.
#[derive(Clone, Copy, Debug, Default)]
pub struct AckInfo {
    pub now: Time,
    /// Bytes newly acknowledged (cumulatively); with `reno = "linux"`, newly
    /// delivered, SACKed bytes included (Linux's `acked_sacked`).
    pub acked: u64,
    /// RTT sample from this ACK, if Karn's rule allowed one.
    pub rtt: Option<Time>,
    /// Smallest RTT seen so far on the connection.
    pub min_rtt: Option<Time>,
    /// Smoothed RTT.
    pub srtt: Time,
    /// Bytes in flight before this ACK.
    pub flight: u64,
    /// The sender is limited by the application or rwnd, not by cwnd
    /// (RFC 7661 §4.3 / RFC 9438 §5.8: do not grow cwnd then).
    pub app_limited: bool,
    /// SND.UNA after this ACK (stream offset; for once-per-RTT logic).
    pub snd_una: u64,
    /// Highest sequence sent so far (SND.NXT / snd_max, stream offset).
    pub snd_nxt: u64,
}

/// Receiver transit-time feedback (Ito's thesis §4.3): the receiving host
/// timed a train of `pkts` consecutive data packets of this flow, the last
/// `bytes` of which (all but the first) completed within `span` ns. It
/// reaches the sender with an ACK as simulator metadata (not a wire option);
/// see `tcplab_sim::host`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TransitFeedback {
    pub pkts: u32,
    /// (u32 keeps `Packet` small; a train is at most 1000 packets.)
    pub bytes: u32,
    pub span: Time,
}

impl TransitFeedback {
    /// Delivery rate of the train, bytes per second (docs/throughput-bound-notes.md §6.11:
    /// B = (P_init − 1)·size / (t_last − t_first)).
    pub fn rate_bytes_per_s(&self) -> Option<f64> {
        (self.span > 0 && self.pkts >= 2).then(|| self.bytes as f64 * 1e9 / self.span as f64)
    }

    /// Mean per-packet transit time d over the train, ns (thesis eq. 4.10's d).
    pub fn mean_transit(&self) -> Option<Time> {
        (self.pkts >= 2).then(|| self.span / (self.pkts as u64 - 1))
    }
}

/// What a `.cong_control` controller (`CcEntry::cong_control`) sees of the
/// connection, in Linux's terms (counts in segments).
#[derive(Clone, Copy, Debug)]
pub struct TcpView {
    pub now: Time,
    /// `icsk_ca_state` after this ACK's loss detection and recovery steps.
    pub ca_state: CaState,
    /// `tcp_packets_in_flight`.
    pub in_flight: u64,
    /// `tp->delivered`, `tp->delivered_mstamp`, `tp->lost`.
    pub delivered: u64,
    pub delivered_mstamp: Time,
    pub lost: u64,
    /// `tp->srtt_us` (0: no sample yet), `tcp_min_rtt` (None: no sample).
    pub srtt: Time,
    pub min_rtt: Option<Time>,
    /// `tp->tcp_wstamp_ns`: the earliest departure time of the next skb.
    pub wstamp: Time,
    /// `tp->app_limited` (the controller may set it).
    pub app_limited: u64,
}

pub trait CongestionControl: Send {
    fn name(&self) -> &'static str;

    /// New data acknowledged while not in loss recovery: grow `st.cwnd`.
    fn on_ack(&mut self, st: &mut CcState, ack: &AckInfo);

    /// A congestion event (fast retransmit / SACK recovery entry): return
    /// the new ssthresh. `flight` is FlightSize at the event.
    fn ssthresh_on_loss(&mut self, st: &CcState, flight: u64, now: Time) -> u64;

    /// Loss recovery ended at a full ACK; set the window to continue with.
    /// The default deflates to ssthresh (RFC 5681 §3.2 step 6, RFC 6675 §5).
    /// ssthresh for a reduction an ECE starts (`tcp_enter_cwr()` →
    /// `.ssthresh`); as for a loss unless the controller scales it (DCTCP).
    fn ssthresh_on_ece(&mut self, st: &CcState, flight: u64, now: Time) -> u64 {
        self.ssthresh_on_loss(st, flight, now)
    }

    /// An ACK of an ECN connection acknowledged `acked` bytes (cumulative
    /// and SACK), `ece` whether it carried ECE; `snd_una` after it, and the
    /// highest sequence sent (DCTCP's per-window count, RFC 8257 §3.3).
    fn on_ecn_ack(&mut self, _acked: u64, _ece: bool, _snd_una: u64, _snd_nxt: u64) {}

    fn on_recovery_exit(&mut self, st: &mut CcState, _now: Time) {
        st.cwnd = st.ssthresh;
    }

    /// A retransmission timeout (first expiry for this segment when `first`).
    /// Set ssthresh (RFC 5681 eq. 4 by default) — the connection sets cwnd to
    /// the loss window afterwards.
    fn on_rto(&mut self, st: &mut CcState, flight: u64, first: bool, now: Time) {
        if first {
            st.ssthresh = self.ssthresh_on_loss(st, flight, now);
        }
    }

    /// An RTT sample (for delay-based variants).
    fn on_rtt_sample(&mut self, _rtt: Time, _now: Time) {}

    /// Transit-time feedback from the receiving host arrived with an ACK
    /// (handed over before that ACK is processed). Default: ignored.
    fn on_transit_feedback(&mut self, _st: &mut CcState, _fb: &TransitFeedback, _now: Time) {}

    /// The last congestion event was spurious: restore the controller's
    /// private state saved at that event (RFC 9438 §4.9).
    fn undo(&mut self) {}

    /// Set the Appropriate Byte Counting limit L in SMSS (RFC 3465 §2.2).
    /// Returns false if this controller does not do byte counting.
    fn set_abc_limit(&mut self, _l: u32) -> bool {
        false
    }

    /// Use HyStart++ (RFC 9406) in the initial slow start (see `hystart`).
    /// Returns false if this controller does not support it.
    fn set_hystart(&mut self, _on: bool) -> bool {
        false
    }

    /// The RTT of the most recently sent segment the coming ACK acknowledges
    /// in full (Linux's `ca_rtt_us`: from send times, not timestamps; None
    /// if all were retransmitted), handed over before `on_ack`. Default:
    /// ignored.
    fn on_newest_rtt(&mut self, _rtt: Option<Time>) {}

    /// An ACK with an RTT sample arrived during fast recovery, where
    /// `on_ack` is not called (PRR sets cwnd). Linux still calls the
    /// controller's `pkts_acked` there (`tcp_clean_rtx_queue`, before
    /// `tcp_fastretrans_alert`), and tcp_cubic.c's `bictcp_acked` runs
    /// HyStart whenever cwnd < ssthresh. Default: ignored.
    fn on_pkts_acked_in_recovery(
        &mut self,
        _st: &mut CcState,
        _now: Time,
        _rtt: Time,
        _snd_una: u64,
        _snd_nxt: u64,
    ) {
    }

    /// Use HyStart as Linux's `tcp_cubic.c` (`hystart_linux.rs`). Returns
    /// false if this controller does not support it.
    fn set_hystart_linux(&mut self, _on: bool) -> bool {
        false
    }

    /// Use Linux's window arithmetic: tcp_cubic.c's (`cubic_linux.rs`) for CUBIC, tcp_cong.c's
    /// Reno in whole packets (`reno_linux.rs`) for Reno. Returns false if this controller does
    /// not support it.
    fn set_linux_arith(&mut self, _on: bool) -> bool {
        false
    }

    /// HyStart++ state, if this controller runs it (diagnostics / tests).
    fn hystart(&self) -> Option<&hystart::HyStart> {
        None
    }

    /// Seed for the controller's own random draws (derived from the
    /// connection's ISN and timestamp offset, themselves drawn from the
    /// flow's stream). Default: ignored.
    fn set_seed(&mut self, _seed: u64) {}

    /// Linux's `.init` at `tcp_init_transfer` (the connection is established;
    /// the handshake's RTT sample is in `tp`). Default: nothing.
    fn init(&mut self, _st: &mut CcState, _tp: &mut TcpView) {}

    /// Linux's `.cong_control` (`CcEntry::cong_control` controllers only): the
    /// ACK's rate sample, after its loss detection and recovery steps.
    fn cong_control(&mut self, _st: &mut CcState, _tp: &mut TcpView, _rs: &RateSample) {}

    /// Linux's `.set_state(TCP_CA_Loss)`, after a timeout (`.cong_control`
    /// controllers only).
    fn on_loss_state(&mut self, _st: &mut CcState, _tp: &mut TcpView) {}

    /// Linux's `.cwnd_event(CA_EVENT_TX_START)`: data is sent with nothing
    /// in flight (`.cong_control` controllers only).
    fn on_tx_start(&mut self, _st: &mut CcState, _tp: &mut TcpView) {}

    /// The pacing rate this controller sets (`sk_pacing_rate`, bytes/s);
    /// None: Linux's `tcp_update_pacing_rate` sets it.
    fn pacing_rate(&self) -> Option<u64> {
        None
    }

    /// Linux's `.min_tso_segs`: the fewest segments per paced burst.
    fn min_tso_segs(&self) -> u32 {
        crate::pacing::MIN_TSO_SEGS
    }

    /// Linux's `.sndbuf_expand`: cwnds of send buffer `tcp_sndbuf_expand`
    /// makes room for (2 without one).
    fn sndbuf_expand(&self) -> u64 {
        2
    }
}

/// Build a congestion controller by kind.
pub fn new_cc(kind: CcKind) -> Box<dyn CongestionControl> {
    new_cc_with(kind, &CcParams::default())
}

/// Build a congestion controller by kind with its parameters (`cc_params`,
/// checked by `check_params`; unknown keys never reach here).
pub fn new_cc_with(kind: CcKind, p: &CcParams) -> Box<dyn CongestionControl> {
    (kind.entry.build)(p, kind.target_bps)
}

/// RFC 5681 eq. 4: ssthresh = max(FlightSize / 2, 2*SMSS).
#[inline]
pub fn half_flight(flight: u64, mss: u64) -> u64 {
    (flight / 2).max(2 * mss)
}
