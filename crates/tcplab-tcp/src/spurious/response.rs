//! Responses to a detected spurious timeout (the three compared in
//! Sekiguchi 2008 Table 2).

use super::{Response, ResponseCtx, ResponseOut};
use crate::cc::half_flight;

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

#[cfg(test)]
mod tests {
    use super::super::Saved;
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
