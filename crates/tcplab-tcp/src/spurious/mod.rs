//! Spurious-retransmission detection and response.
//!
//! A *detector* (F-RTO RFC 5682, Eifel detection RFC 3522, DSACK-based RFC
//! 3708) watches the ACKs after a retransmission timeout and decides whether
//! the timeout was spurious. A *response* (RFC 4015 Eifel response, "keep
//! cwnd, halve ssthresh", plain Reno) decides what the sender does then.
//! Both are chosen per flow (`Config::spurious_detection`,
//! `Config::spurious_response`); `connection.rs` calls them at the RFC steps.
//!
//! Spurious *fast retransmits* (packet reordering) use the same detector
//! types on a second, separate instance (`Config::spurious_fr`): RFC 3522 and
//! RFC 3708 define one algorithm for both kinds of loss-recovery episode, so
//! the trait gains `on_fast_retransmit` (an episode that began with a fast
//! retransmit) and `cancel` (a timeout overtook that episode). F-RTO only
//! judges timeouts and keeps the no-op defaults; `Config::validate` rejects
//! it for `spurious_fr`. The undo after a spurious fast retransmit is an
//! `FrResponseKind` (`response.rs`).

mod dsack;
mod eifel;
mod frto;
mod response;

pub use dsack::DsackDetector;
pub use eifel::EifelDetector;
pub use frto::Frto;
pub use response::{respond_fr, EifelResponse, KeepCwndResponse, RenoResponse, UndoResponse};

use crate::cc::CcState;
use crate::Time;

/// Which detector runs after a timeout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DetectorKind {
    /// No detection: every timeout is handled conventionally (RFC 5681 §3.1).
    None,
    /// F-RTO; the SACK-enhanced algorithm (RFC 5682 §3) when SACK was
    /// negotiated, the basic one (§2) otherwise.
    Frto,
    /// F-RTO basic algorithm (RFC 5682 §2) even with SACK.
    FrtoBasic,
    /// Linux's F-RTO (kernel ≥ 3.10): RFC 5682 §3 plus a spurious verdict as
    /// soon as never-retransmitted pre-timeout data is (S)ACKed, without new data.
    FrtoLinux,
    /// Eifel detection with timestamps (RFC 3522).
    Eifel,
    /// DSACK-based detection (RFC 3708).
    Dsack,
}

impl DetectorKind {
    pub const NAMES: [&'static str; 6] =
        ["none", "frto", "frto-basic", "frto-linux", "eifel", "dsack"];
    /// The detectors that can judge a fast-retransmit episode (`Config::spurious_fr`).
    pub const FR_NAMES: [&'static str; 3] = ["none", "eifel", "dsack"];
    /// Can this detector judge a fast-retransmit episode? (F-RTO is defined
    /// for timeouts only, RFC 5682 §1.)
    pub fn judges_fast_retransmits(self) -> bool {
        matches!(
            self,
            DetectorKind::None | DetectorKind::Eifel | DetectorKind::Dsack
        )
    }
    pub fn parse(s: &str) -> Option<DetectorKind> {
        match s {
            "none" => Some(DetectorKind::None),
            "frto" => Some(DetectorKind::Frto),
            "frto-basic" => Some(DetectorKind::FrtoBasic),
            "frto-linux" => Some(DetectorKind::FrtoLinux),
            "eifel" => Some(DetectorKind::Eifel),
            "dsack" => Some(DetectorKind::Dsack),
            _ => None,
        }
    }
}

/// What the sender does once a timeout is declared spurious.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResponseKind {
    /// Eifel response (RFC 4015) including its RTO adaptation.
    Eifel,
    /// Keep cwnd, halve ssthresh (the "RFC 2861-like" response of
    /// Sekiguchi 2008 Table 2).
    KeepCwnd,
    /// Plain Reno: cwnd stays at the loss window, ssthresh halved, go-back-N.
    Reno,
    /// Linux `tcp_try_undo_loss` → `tcp_undo_cwnd_reduction`: cwnd =
    /// max(cwnd, cwnd before the timeout), ssthresh likewise, loss marks
    /// cleared; no RTO adaptation.
    Undo,
}

impl ResponseKind {
    pub const NAMES: [&'static str; 4] = ["eifel", "keep-cwnd", "reno", "undo"];
    pub fn parse(s: &str) -> Option<ResponseKind> {
        match s {
            "eifel" => Some(ResponseKind::Eifel),
            "keep-cwnd" => Some(ResponseKind::KeepCwnd),
            "reno" => Some(ResponseKind::Reno),
            "undo" => Some(ResponseKind::Undo),
            _ => None,
        }
    }
}

/// What the sender does once a fast retransmit is declared spurious
/// (`Config::spurious_fr_response`, `respond_fr`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrResponseKind {
    /// RFC 4015's congestion-state step applied to the fast-retransmit case:
    /// cwnd = FlightSize + min(bytes_acked, IW), ssthresh = pipe_prev.
    Eifel,
    /// Linux `tcp_undo_cwnd_reduction` (Reno `undo_cwnd`): cwnd =
    /// max(cwnd, prior_cwnd), ssthresh = max(ssthresh, prior_ssthresh).
    Undo,
    /// Detect and count only; the reduction stays.
    None,
}

impl FrResponseKind {
    pub const NAMES: [&'static str; 3] = ["eifel", "undo", "none"];
    pub fn parse(s: &str) -> Option<FrResponseKind> {
        match s {
            "eifel" => Some(FrResponseKind::Eifel),
            "undo" => Some(FrResponseKind::Undo),
            "none" => Some(FrResponseKind::None),
            _ => None,
        }
    }
}

/// Why a detector reached no verdict on a timeout (Sekiguchi 2008 Table 4
/// classifies F-RTO's misses this way).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum MissCause {
    /// The transfer had no new data left to probe with (it finished,
    /// FIN sent) or everything outstanding was acknowledged at once.
    Finished = 0,
    /// New data existed but the receiver's window had no room for it.
    NoWindow = 1,
    /// A duplicate ACK arrived first after the timeout (RFC 5682 §2.1 step 2a).
    DupAck = 2,
    /// Anything else (another timeout during detection, no timestamps, ...).
    Other = 3,
}

impl MissCause {
    pub const NAMES: [&'static str; 4] = ["finished", "no_window", "dupack", "other"];
    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }
}

/// A detector's answer to one ACK.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Nothing decided yet (or no episode running).
    Pending,
    /// F-RTO step 2b: send up to two new segments, then wait.
    SendNew,
    /// The timeout was spurious. `late` (RFC 3708/RFC 4015 LATE_SPUR_TO):
    /// the go-back-N retransmissions already happened.
    Spurious { late: bool },
    /// The timeout was genuine: conventional recovery.
    Genuine,
    /// No verdict possible: conventional recovery; the cause is recorded.
    NoVerdict(MissCause),
}

/// Whether new data could be sent now (F-RTO step 2b).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NewData {
    Yes,
    /// The application has no more data (or the FIN was sent).
    Exhausted,
    /// The receiver's window is full.
    NoWindow,
}

/// The sender's state at the first retransmission of a loss-recovery
/// episode: a retransmission timeout (`Detector::on_rto`) or a fast
/// retransmit (`Detector::on_fast_retransmit`).
#[derive(Clone, Copy, Debug)]
pub struct RtoView {
    pub now: Time,
    /// The timeout id, or the fast-retransmit number for `on_fast_retransmit`.
    pub id: u32,
    pub snd_una: u64,
    /// Highest sequence sent so far, exclusive (SND.MAX).
    pub snd_max: u64,
    /// TSval that the retransmission carries (RFC 3522 RetransmitTS).
    pub ts_val: Option<u32>,
    /// SACK was negotiated.
    pub sack: bool,
}

/// What the detectors see of one ACK (after the scoreboard was updated).
#[derive(Clone, Copy, Debug)]
pub struct AckView<'a> {
    pub now: Time,
    /// Cumulative ACK (sequence offset) and SND.UNA before it.
    pub ack: u64,
    pub prev_una: u64,
    pub snd_max: u64,
    /// RFC 5681 §2 / RFC 6675 §2 duplicate ACK.
    pub is_dupack: bool,
    /// The ACK (cumulatively or via SACK) covers data sent before the
    /// timeout and never retransmitted (Linux FLAG_ORIG_SACK_ACKED).
    pub orig_acked: bool,
    /// End of the highest segment this ACK newly SACKed (0 = none); F-RTO
    /// compares it with `recover` (RFC 5682 §3 step 3a).
    pub newly_sacked_high: u64,
    /// TSecr of the ACK.
    pub tsecr: Option<u32>,
    /// DSACK blocks it carries (sequence offsets, [left, right)).
    pub dsacks: &'a [(u64, u64)],
    pub new_data: NewData,
    pub srtt: Time,
}

/// A spurious-retransmission detector. A connection holds one instance for
/// timeouts (`Config::spurious_detection`, fed `on_rto`) and, separately, one
/// for fast retransmits (`Config::spurious_fr`, fed `on_fast_retransmit`);
/// an instance only ever sees one kind of episode start.
pub trait Detector: Send {
    fn name(&self) -> &'static str;
    /// The retransmission timer expired (the timeout retransmission follows).
    fn on_rto(&mut self, v: &RtoView);
    /// A fast retransmit began a loss-recovery episode (RFC 3522 §3.2 and
    /// RFC 3708 §3 treat it like a timeout; RFC 3522 §3.2 step (5) adds a
    /// condition for it). Detectors defined for timeouts only keep the default.
    fn on_fast_retransmit(&mut self, _v: &RtoView) {}
    /// Abandon the open episode without a verdict (a retransmission timeout
    /// overtook a fast-retransmit episode). Detectors that implement
    /// `on_fast_retransmit` must implement it.
    fn cancel(&mut self) {}
    /// A segment [start, end) was retransmitted (any reason).
    fn on_retransmit(&mut self, _start: u64, _end: u64) {}
    /// An acceptable ACK arrived. Returns this ACK's decision.
    fn on_ack(&mut self, a: &AckView) -> Decision;
    /// The detector needs the sender to hold go-back-N retransmissions
    /// (F-RTO steps 2 and 3).
    fn holds_retransmissions(&self) -> bool {
        false
    }
    /// The timeout id the pending decision belongs to, if any.
    fn pending(&self) -> Option<u32>;
}

/// The state saved at the first timeout of an episode, before cwnd and
/// ssthresh were reduced (RFC 4015 §3.2 step (0)).
#[derive(Clone, Copy, Debug, Default)]
pub struct Saved {
    pub cwnd: u64,
    pub ssthresh: u64,
    /// max(FlightSize, ssthresh) before the timeout (RFC 4015 pipe_prev).
    pub pipe_prev: u64,
    pub flight: u64,
    /// SRTT + 2·G and RTTVAR before the timeout (RFC 4015 SRTT_prev, RTTVAR_prev).
    pub srtt_prev: Time,
    pub rttvar_prev: Time,
    pub snd_max_at_rto: u64,
}

/// What a response is handed.
pub struct ResponseCtx<'a> {
    pub ccs: &'a mut CcState,
    pub saved: &'a Saved,
    /// FlightSize after the detecting ACK.
    pub flight: u64,
    /// Bytes the detecting ACK acknowledged.
    pub acked: u64,
    /// Initial window (RFC 4015 IW).
    pub iw: u64,
    pub late: bool,
}

/// What the sender does next.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ResponseOut {
    /// Resume with new data: SND.NXT = SND.MAX, no go-back-N.
    pub resume_new: bool,
    /// Adapt the RTO on the next sample (RFC 4015 §3.2 step (4)).
    pub rebase_rto: bool,
}

pub trait Response: Send {
    fn name(&self) -> &'static str;
    fn on_spurious(&mut self, c: &mut ResponseCtx) -> ResponseOut;
}

/// Build a detector by kind (`None` for no detection). The same types serve
/// fast-retransmit episodes (`DetectorKind::judges_fast_retransmits`).
pub fn new_detector(kind: DetectorKind) -> Option<Box<dyn Detector>> {
    match kind {
        DetectorKind::None => None,
        DetectorKind::Frto => Some(Box::new(Frto::new(true))),
        DetectorKind::FrtoBasic => Some(Box::new(Frto::new(false))),
        DetectorKind::FrtoLinux => Some(Box::new(Frto::linux())),
        DetectorKind::Eifel => Some(Box::new(EifelDetector::default())),
        DetectorKind::Dsack => Some(Box::new(DsackDetector::default())),
    }
}

pub fn new_response(kind: ResponseKind) -> Box<dyn Response> {
    match kind {
        ResponseKind::Eifel => Box::new(EifelResponse),
        ResponseKind::KeepCwnd => Box::new(KeepCwndResponse),
        ResponseKind::Reno => Box::new(RenoResponse),
        ResponseKind::Undo => Box::new(UndoResponse),
    }
}

#[cfg(test)]
pub(crate) mod testutil {
    use super::*;

    pub fn rto(id: u32, una: u64, max: u64, ts: Option<u32>, sack: bool) -> RtoView {
        RtoView {
            now: 0,
            id,
            snd_una: una,
            snd_max: max,
            ts_val: ts,
            sack,
        }
    }

    /// An ACK view with no options; adjust fields with struct update syntax.
    pub fn ack(prev_una: u64, ack: u64) -> AckView<'static> {
        AckView {
            now: 0,
            ack,
            prev_una,
            snd_max: 100_000,
            is_dupack: false,
            orig_acked: ack > prev_una,
            newly_sacked_high: 0,
            tsecr: None,
            dsacks: &[],
            new_data: NewData::Yes,
            srtt: 100_000_000,
        }
    }
}
