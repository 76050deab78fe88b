//! Loss recovery state and the mechanisms that hook into it.
//!
//! The sender's recovery state follows Linux's `tcp_ca_state`
//! ([`CaState`]): Open, Disorder (SACKed or duplicate-ACKed data, no loss
//! yet), CWR (a reduction without a loss, here after a TLP-repaired loss),
//! Recovery (fast recovery, RFC 6675 / RFC 6582) and Loss (after an RTO).
//! `connection.rs` keeps the transitions; the mechanisms are modules here:
//! PRR (RFC 6937) sets cwnd during Recovery, RACK-TLP (RFC 8985) marks
//! losses and sends tail loss probes.

pub mod prr;
pub mod rack;

pub use prr::{Prr, PrrBound, PrrStep};
pub use rack::{Rack, Tlp, TlpAck};

use crate::events::RecoveryKind;
use crate::Time;

/// The sender's loss-recovery state in one place (what Linux keeps in
/// `tcp_ca_state` and its companions); `connection.rs` makes the
/// transitions at the RFCs' steps and the mechanisms below keep their own
/// state here.
#[derive(Clone, Debug)]
pub struct RecoveryState {
    /// Fast recovery (RFC 5681 §3.2 / RFC 6582 / RFC 6675) is running.
    pub in_recovery: bool,
    pub recovery_kind: RecoveryKind,
    /// RFC 6582 `recover` / RFC 6675 RecoveryPoint (exclusive: SND.MAX at entry).
    pub recover: u64,
    pub dupacks: u32,
    /// RFC 6582 §3.2 step 5 "impatient" timer: the first partial ACK was seen.
    pub first_partial_seen: bool,
    /// RFC 6675 §4 RescueRxt.
    pub rescue_rxt: Option<u64>,
    /// Retransmitting after a timeout (go-back-N phase; Linux's Loss state).
    pub after_rto: bool,
    /// New data sent under Limited Transmit (RFC 3042) since the last
    /// cumulative ACK; excluded from FlightSize at recovery entry.
    pub lt_bytes: u64,
    /// PRR (RFC 6937) state of the current SACK recovery, if `recovery_cwnd = prr`.
    pub prr: Option<Prr>,
    /// RACK (RFC 8985 §6) state and its reordering timer.
    pub rack: Rack,
    pub rack_deadline: Option<Time>,
    /// TLP (RFC 8985 §7): the probe episode, the PTO timer, a probe to send.
    pub tlp: Tlp,
    pub tlp_deadline: Option<Time>,
    pub tlp_pending: bool,
}

impl Default for RecoveryState {
    fn default() -> Self {
        RecoveryState {
            in_recovery: false,
            recovery_kind: RecoveryKind::FastRecovery,
            recover: 0,
            dupacks: 0,
            first_partial_seen: false,
            rescue_rxt: None,
            after_rto: false,
            lt_bytes: 0,
            prr: None,
            rack: Rack::default(),
            rack_deadline: None,
            tlp: Tlp::default(),
            tlp_deadline: None,
            tlp_pending: false,
        }
    }
}

impl RecoveryState {
    /// Linux's `tcp_ca_state` for this state (`sacked`: bytes SACKed now).
    /// CWR is not a lasting state here: a TLP-repaired loss reduces cwnd at
    /// once, as Linux's `tcp_process_tlp_ack` ends its CWR immediately.
    pub fn ca_state(&self, sacked: u64) -> CaState {
        if self.after_rto {
            CaState::Loss
        } else if self.in_recovery {
            CaState::Recovery
        } else if self.dupacks > 0 || sacked > 0 {
            CaState::Disorder
        } else {
            CaState::Open
        }
    }
}

/// Linux's `tcp_ca_state`, derived from [`RecoveryState`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CaState {
    Open,
    Disorder,
    Cwr,
    Recovery,
    Loss,
}

/// How cwnd is reduced when fast recovery starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecoveryCwnd {
    /// cwnd = ssthresh at once (RFC 6675 §5 step 4.2; RFC 6582 §3.2 with
    /// inflation without SACK).
    Immediate,
    /// Proportional Rate Reduction (RFC 6937) with the given bound
    /// (SACK recovery; without SACK the RFC 6582 rules apply).
    Prr(PrrBound),
}

impl RecoveryCwnd {
    pub const NAMES: [&'static str; 4] = ["immediate", "prr", "prr-crb", "prr-linux"];
    pub fn parse(s: &str) -> Option<RecoveryCwnd> {
        match s {
            "immediate" => Some(RecoveryCwnd::Immediate),
            "prr" | "prr-ssrb" => Some(RecoveryCwnd::Prr(PrrBound::Ssrb)),
            "prr-crb" => Some(RecoveryCwnd::Prr(PrrBound::Crb)),
            // Linux's tcp_cwnd_reduction (recovery/prr.rs).
            "prr-linux" => Some(RecoveryCwnd::Prr(PrrBound::Linux)),
            _ => None,
        }
    }
}

/// How losses are detected during SACK recovery.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LossDetection {
    /// RFC 6675 §4 IsLost (DupThresh SACKed segments or bytes above).
    Dupthresh,
    /// RACK (RFC 8985 §6), with its DupThresh rule while no reordering was
    /// seen, as Linux (`tcp_recovery = 1`).
    Rack,
}

impl LossDetection {
    pub const NAMES: [&'static str; 2] = ["dupthresh", "rack"];
    pub fn parse(s: &str) -> Option<LossDetection> {
        match s {
            "dupthresh" => Some(LossDetection::Dupthresh),
            "rack" => Some(LossDetection::Rack),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ca_state_follows_linux_order() {
        let mut r = RecoveryState::default();
        assert_eq!(r.ca_state(0), CaState::Open);
        assert_eq!(r.ca_state(1448), CaState::Disorder);
        r.dupacks = 1;
        assert_eq!(r.ca_state(0), CaState::Disorder);
        r.in_recovery = true;
        assert_eq!(r.ca_state(1448), CaState::Recovery);
        r.after_rto = true; // Loss dominates, as TCP_CA_Loss > TCP_CA_Recovery
        assert_eq!(r.ca_state(1448), CaState::Loss);
    }
}
