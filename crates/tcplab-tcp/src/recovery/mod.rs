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

/// Linux's `tcp_ca_state`, derived from the sender's recovery fields.
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
    pub const NAMES: [&'static str; 3] = ["immediate", "prr", "prr-crb"];
    pub fn parse(s: &str) -> Option<RecoveryCwnd> {
        match s {
            "immediate" => Some(RecoveryCwnd::Immediate),
            "prr" | "prr-ssrb" => Some(RecoveryCwnd::Prr(PrrBound::Ssrb)),
            "prr-crb" => Some(RecoveryCwnd::Prr(PrrBound::Crb)),
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
