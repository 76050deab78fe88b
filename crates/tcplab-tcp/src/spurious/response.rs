//! Responses to a detected spurious timeout (the three compared in
//! Sekiguchi 2008 Table 2), and the undo after a spurious fast retransmit
//! (`respond_fr`).

use super::{FrResponseKind, Response, ResponseCtx, ResponseOut, Saved};
use crate::cc::{half_flight, CcState};

/// Undo the congestion-control reduction of a fast retransmit declared
/// spurious. `saved` holds cwnd, ssthresh and pipe_prev from before the
/// reduction (RFC 4015 §3.2 step (0), taken at recovery entry), `flight` is
/// FlightSize after the detecting ACK and `acked` the bytes it acknowledged.
/// Returns whether anything was undone.
///
/// RFC 4015 as published specifies the response to spurious *timeouts*; for a
/// fast retransmit only its congestion-state step applies: there was no
/// go-back-N to suppress (step (2)) and no timeout to adapt the RTO to
/// (step (4)). Neither response ever lowers cwnd below its current value (a
/// late DSACK verdict may come after cwnd has regrown).
pub fn respond_fr(
    kind: FrResponseKind,
    ccs: &mut CcState,
    saved: &Saved,
    flight: u64,
    acked: u64,
    iw: u64,
) -> bool {
    match kind {
        FrResponseKind::None => false,
        FrResponseKind::Eifel => {
            // RFC 4015 §3.2 step (3): cwnd = FlightSize + min(bytes_acked, IW);
            // ssthresh = pipe_prev. (ECN-Echo is not modelled.)
            let cwnd = (flight + acked.min(iw)).max(ccs.mss).min(ccs.max_cwnd);
            ccs.cwnd = ccs.cwnd.max(cwnd);
            ccs.ssthresh = saved.pipe_prev;
            true
        }
        FrResponseKind::Undo => {
            // Linux tcp_undo_cwnd_reduction() with Reno's undo_cwnd:
            // cwnd = max(cwnd, prior_cwnd); ssthresh = prior_ssthresh if larger.
            ccs.cwnd = ccs.cwnd.max(saved.cwnd).min(ccs.max_cwnd);
            ccs.ssthresh = ccs.ssthresh.max(saved.ssthresh);
            true
        }
    }
}

/// Eifel response (RFC 4015).
pub struct EifelResponse;

impl Response for EifelResponse {
    fn name(&self) -> &'static str {
        "eifel"
    }
    fn on_spurious(&mut self, c: &mut ResponseCtx) -> ResponseOut {
        // RFC 4015 §3.2 step (3): cwnd = FlightSize + min(bytes_acked, IW);
        // ssthresh = pipe_prev. (ECN-Echo is not modelled.)
        c.ccs.cwnd = (c.flight + c.acked.min(c.iw))
            .max(c.ccs.mss)
            .min(c.ccs.max_cwnd);
        c.ccs.ssthresh = c.saved.pipe_prev;
        ResponseOut {
            // Step (2): SPUR_TO: SND.NXT = SND.MAX (no go-back-N); after a late
            // detection (LATE_SPUR_TO) the retransmissions already happened.
            resume_new: !c.late,
            // Step (4): adapt the RTO on the next sample.
            rebase_rto: true,
        }
    }
}

/// Keep cwnd, halve ssthresh ("RFC 2861-like" in Sekiguchi 2008 Table 2).
pub struct KeepCwndResponse;

impl Response for KeepCwndResponse {
    fn name(&self) -> &'static str {
        "keep-cwnd"
    }
    fn on_spurious(&mut self, c: &mut ResponseCtx) -> ResponseOut {
        // cwnd back to its pre-timeout value; ssthresh = max(FlightSize/2, 2·SMSS)
        // of the pre-timeout flight (RFC 5681 eq. 4, as the timeout set it).
        c.ccs.cwnd = c.saved.cwnd.max(c.ccs.mss);
        c.ccs.ssthresh = half_flight(c.saved.flight, c.ccs.mss);
        ResponseOut {
            resume_new: !c.late,
            rebase_rto: false,
        }
    }
}

/// Plain Reno: nothing is undone (cwnd = loss window, ssthresh halved by the
/// timeout, go-back-N continues, RFC 5681 §3.1).
pub struct RenoResponse;

impl Response for RenoResponse {
    fn name(&self) -> &'static str {
        "reno"
    }
    fn on_spurious(&mut self, _c: &mut ResponseCtx) -> ResponseOut {
        ResponseOut::default()
    }
}

/// Linux's undo of a spurious timeout (`tcp_try_undo_loss` →
/// `tcp_undo_cwnd_reduction(sk, true)`): cwnd = max(cwnd, prior_cwnd),
/// ssthresh = max(ssthresh, prior_ssthresh), the loss marks cleared.
/// Unlike RFC 4015 it does not size cwnd from FlightSize, which SACKed and
/// lost data can inflate far beyond the window before the timeout.
pub struct UndoResponse;

impl Response for UndoResponse {
    fn name(&self) -> &'static str {
        "undo"
    }
    fn on_spurious(&mut self, c: &mut ResponseCtx) -> ResponseOut {
        c.ccs.cwnd = c.ccs.cwnd.max(c.saved.cwnd).min(c.ccs.max_cwnd);
        c.ccs.ssthresh = c.ccs.ssthresh.max(c.saved.ssthresh);
        ResponseOut {
            resume_new: !c.late,
            rebase_rto: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::CcState;

    fn st() -> CcState {
        // After a timeout: cwnd = 1 SMSS, ssthresh halved.
        CcState {
            cwnd: 1000,
            ssthresh: 5000,
            mss: 1000,
            max_cwnd: 64_000,
            ca_at_ssthresh: false,
        }
    }
    fn saved() -> Saved {
        Saved {
            cwnd: 10_000,
            ssthresh: 64_000,
            pipe_prev: 10_000,
            flight: 10_000,
            srtt_prev: 300,
            rttvar_prev: 50,
            snd_max_at_rto: 11_001,
        }
    }

    #[test]
    fn undo_restores_the_windows_before_the_timeout() {
        let (mut s, sv) = (st(), saved());
        let mut c = ResponseCtx {
            ccs: &mut s,
            saved: &sv,
            flight: 40_000, // SACKed and lost data: far above cwnd before
            acked: 2000,
            iw: 4000,
            late: false,
        };
        let out = UndoResponse.on_spurious(&mut c);
        assert_eq!((s.cwnd, s.ssthresh), (10_000, 64_000));
        assert!(out.resume_new && !out.rebase_rto);
    }

    #[test]
    fn eifel_restores_flight_plus_iw_and_pipe_prev() {
        let (mut s, sv) = (st(), saved());
        let mut c = ResponseCtx {
            ccs: &mut s,
            saved: &sv,
            flight: 8000,
            acked: 2000,
            iw: 4000,
            late: false,
        };
        let out = EifelResponse.on_spurious(&mut c);
        // RFC 4015 §3.2 step (3).
        assert_eq!(s.cwnd, 10_000);
        assert_eq!(s.ssthresh, 10_000);
        assert_eq!(
            out,
            ResponseOut {
                resume_new: true,
                rebase_rto: true
            }
        );
        // LATE_SPUR_TO: SND.NXT stays.
        let mut s = st();
        let mut c = ResponseCtx {
            ccs: &mut s,
            saved: &sv,
            flight: 0,
            acked: 9000,
            iw: 4000,
            late: true,
        };
        let out = EifelResponse.on_spurious(&mut c);
        assert_eq!(s.cwnd, 4000);
        assert!(!out.resume_new);
    }

    #[test]
    fn fast_retransmit_responses_restore_the_pre_recovery_state() {
        // After a fast retransmit: ssthresh = cwnd = 5000 (RFC 6675 §5 step 4.2).
        let fr = || CcState {
            cwnd: 5000,
            ssthresh: 5000,
            mss: 1000,
            max_cwnd: 64_000,
            ca_at_ssthresh: false,
        };
        let sv = Saved {
            cwnd: 10_000,
            ssthresh: 64_000,
            pipe_prev: 64_000,
            flight: 10_000,
            ..Saved::default()
        };
        // RFC 4015 §3.2 step (3): cwnd = FlightSize + min(acked, IW), ssthresh = pipe_prev.
        let mut s = fr();
        assert!(respond_fr(
            FrResponseKind::Eifel,
            &mut s,
            &sv,
            8000,
            3000,
            4000
        ));
        assert_eq!((s.cwnd, s.ssthresh), (11_000, 64_000));
        // Never below the current cwnd (late verdict after regrowth).
        let mut s = fr();
        s.cwnd = 20_000;
        respond_fr(FrResponseKind::Eifel, &mut s, &sv, 2000, 1000, 4000);
        assert_eq!(s.cwnd, 20_000);
        // Linux undo: cwnd = max(cwnd, prior_cwnd), ssthresh = prior_ssthresh.
        let mut s = fr();
        assert!(respond_fr(
            FrResponseKind::Undo,
            &mut s,
            &sv,
            8000,
            3000,
            4000
        ));
        assert_eq!((s.cwnd, s.ssthresh), (10_000, 64_000));
        // "none": detection only.
        let mut s = fr();
        assert!(!respond_fr(
            FrResponseKind::None,
            &mut s,
            &sv,
            8000,
            3000,
            4000
        ));
        assert_eq!((s.cwnd, s.ssthresh), (5000, 5000));
    }

    #[test]
    fn keep_cwnd_halves_ssthresh_and_reno_changes_nothing() {
        let (mut s, sv) = (st(), saved());
        let mut c = ResponseCtx {
            ccs: &mut s,
            saved: &sv,
            flight: 8000,
            acked: 2000,
            iw: 4000,
            late: false,
        };
        let out = KeepCwndResponse.on_spurious(&mut c);
        assert_eq!((s.cwnd, s.ssthresh), (10_000, 5000));
        assert!(out.resume_new && !out.rebase_rto);
        let mut s = st();
        let mut c = ResponseCtx {
            ccs: &mut s,
            saved: &sv,
            flight: 8000,
            acked: 2000,
            iw: 4000,
            late: false,
        };
        let out = RenoResponse.on_spurious(&mut c);
        assert_eq!((s.cwnd, s.ssthresh), (1000, 5000));
        assert_eq!(out, ResponseOut::default());
    }
}
