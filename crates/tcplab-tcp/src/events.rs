//! Events an endpoint reports to its driver.

use crate::Time;

/// Why a segment was sent again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum RtxReason {
    /// RFC 6298 §5.4: the retransmission timer expired.
    Timeout = 0,
    /// Go-back-N resend after a timeout (RFC 5681 §3.1 / RFC 6675 §5.1).
    AfterTimeout = 1,
    /// RFC 5681 §3.2 step 2 / RFC 6582 §3.2 step 2: fast retransmit.
    FastRetransmit = 2,
    /// RFC 6582 §3.2 step 5: NewReno partial ACK.
    PartialAck = 3,
    /// RFC 6675 §4 NextSeg rules 1 and 3.
    SackRecovery = 4,
    /// RFC 6675 §4 NextSeg rule 4.
    Rescue = 5,
    /// SYN, SYN-ACK or FIN retransmission.
    Control = 6,
    /// RFC 8985 §7.3: a tail loss probe retransmitting the last segment.
    Tlp = 7,
}

impl RtxReason {
    pub const NAMES: [&'static str; 8] = [
        "timeout",
        "after_timeout",
        "fast_retransmit",
        "partial_ack",
        "sack_recovery",
        "rescue",
        "control",
        "tlp",
    ];
    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }
}

/// Which loss recovery was entered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum RecoveryKind {
    /// RFC 5681 §3.2 (Reno) / RFC 6582 (NewReno).
    FastRecovery = 0,
    /// RFC 6675.
    Sack = 1,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Event {
    /// The three-way handshake completed.
    Established,
    /// The retransmission timer expired for the segment at `seq`.
    /// `id` numbers the timeouts of this connection (0, 1, ...) so a driver
    /// can attach ground truth (was the segment in fact delivered?).
    Timeout {
        id: u32,
        seq: u64,
        len: u32,
        backoff: u32,
        rto: Time,
        cwnd: u64,
    },
    /// A segment was sent again.
    Retransmit {
        seq: u64,
        len: u32,
        reason: RtxReason,
    },
    /// Loss recovery began; `recover` is RecoveryPoint / `recover`.
    EnterRecovery {
        kind: RecoveryKind,
        recover: u64,
        cwnd: u64,
        ssthresh: u64,
    },
    /// Loss recovery ended at a full ACK.
    ExitRecovery { cwnd: u64 },
    /// A detector declared timeout `id` spurious.
    SpuriousDetected { id: u32 },
    /// A detector finished with timeout `id` without declaring it spurious:
    /// `outcome` is a `spurious::MissCause` code (0..=3) or 4 = genuine.
    DetectorVerdict { id: u32, outcome: u8 },
    /// A fast retransmit of the segment at `seq` began loss-recovery episode
    /// `id` (0, 1, ... per connection) so a driver can attach ground truth;
    /// `cwnd` and `ssthresh` are the values before the reduction.
    FastRetransmit {
        id: u32,
        seq: u64,
        len: u32,
        cwnd: u64,
        ssthresh: u64,
    },
    /// The `spurious_fr` detector declared fast retransmit `id` spurious;
    /// `undone`: the response restored cwnd/ssthresh (and left recovery).
    SpuriousFrDetected {
        id: u32,
        undone: bool,
        cwnd: u64,
        ssthresh: u64,
    },
    /// HyStart++ (RFC 9406 §4.2) changed phase on an ACK: `css` = it left
    /// slow start for Conservative Slow Start (false: back to slow start, or
    /// CSS ended in congestion avoidance, `ca` true). `cwnd`/`ssthresh` after
    /// the ACK.
    HyStart {
        css: bool,
        ca: bool,
        cwnd: u64,
        ssthresh: u64,
    },
    /// RFC 8985 §7: a tail loss probe was sent (`kind` 0: new data, 1: a
    /// retransmission of the last segment) or its ACK showed that it
    /// repaired a loss (`kind` 2; cwnd and ssthresh were reduced).
    Tlp {
        seq: u64,
        len: u32,
        kind: u8,
        cwnd: u64,
    },
    /// RACK (RFC 8985 §6.2 step 5) marked `bytes` lost, the lowest at
    /// `seq`, `lost_retrans` of the segments being retransmissions lost
    /// again; `timer`: found by the reordering timer, not an ACK.
    RackLoss {
        seq: u64,
        bytes: u64,
        lost_retrans: u32,
        timer: bool,
        reo_wnd: Time,
    },
    /// All data written was acknowledged and both FINs exchanged (or the
    /// connection otherwise finished cleanly).
    Closed,
    /// The connection was reset (sent or received RST).
    Reset { sent: bool },
    /// The connection gave up retransmitting and closed without a RST
    /// (`give_up.rs`, Linux `tcp_write_err()`).
    GaveUp {
        what: crate::give_up::GiveUpKind,
        retransmissions: u32,
    },
}
