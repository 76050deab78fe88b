//! Eifel detection (RFC 3522): with timestamps, the first acceptable ACK after
//! a timeout retransmission or a fast retransmit tells whether it was sent for
//! the original transmission (TSecr older than the retransmission's TSval:
//! spurious) or for the retransmission.
//!
//! Step (5)'s second condition (no DSACK seen during the connection and the
//! ACK acknowledges all outstanding data: no verdict) is applied to
//! fast-retransmit episodes only; the timeout path predates it and is left as
//! it was, since the sto-3g reproductions pin its results.

use super::{AckView, Decision, Detector, MissCause, RtoView};

#[derive(Debug, Default)]
pub struct EifelDetector {
    /// RFC 3522 §3.2 step (2) RetransmitTS, while an episode is open.
    retransmit_ts: Option<u32>,
    /// No timestamps on the retransmission: no verdict possible.
    no_ts: bool,
    active: bool,
    id: u32,
    /// The episode began with a fast retransmit (RFC 3522 §3.2 step (6):
    /// SpuriousRecovery = dupacks+1 rather than SPUR_TO).
    fast: bool,
    /// An ACK carrying a DSACK option arrived earlier in the connection
    /// (RFC 3522 §3.2 step (5)).
    dsack_seen: bool,
}

impl EifelDetector {
    fn start(&mut self, v: &RtoView, fast: bool) {
        if self.active {
            // RFC 3522 §3.2: RetransmitTS belongs to the first retransmission
            // of the episode; later timeouts of the same episode keep it.
            return;
        }
        // RFC 3522 §3.2 steps (1)-(2): SpuriousRecovery = FALSE; remember the
        // TSval of the retransmission.
        self.active = true;
        self.id = v.id;
        self.fast = fast;
        self.retransmit_ts = v.ts_val;
        self.no_ts = v.ts_val.is_none();
    }
}

impl Detector for EifelDetector {
    fn name(&self) -> &'static str {
        "eifel"
    }

    fn on_rto(&mut self, v: &RtoView) {
        self.start(v, false);
    }

    fn on_fast_retransmit(&mut self, v: &RtoView) {
        self.start(v, true);
    }

    fn cancel(&mut self) {
        self.active = false;
    }

    fn on_ack(&mut self, a: &AckView) -> Decision {
        // RFC 3522 §3.2 step (5) needs "a DSACK was received before this ACK".
        let dsack_seen_before = self.dsack_seen;
        self.dsack_seen |= !a.dsacks.is_empty();
        // RFC 3522 §3.2 step (3): wait for the first acceptable ACK (one that
        // acknowledges the retransmitted segment, i.e. advances SND.UNA).
        if !self.active || a.ack <= a.prev_una {
            return Decision::Pending;
        }
        self.active = false;
        if self.no_ts {
            return Decision::NoVerdict(MissCause::Other);
        }
        let (Some(rts), Some(ecr)) = (self.retransmit_ts, a.tsecr) else {
            return Decision::NoVerdict(MissCause::Other);
        };
        // RFC 3522 §3.2 step (4): TSecr >= RetransmitTS (modulo 2^32): the ACK
        // was sent for the retransmission -> not spurious.
        if (ecr.wrapping_sub(rts) as i32) >= 0 {
            return Decision::Genuine;
        }
        // RFC 3522 §3.2 step (5) (as RFC 4015 §2 reads it): an ACK carrying a
        // DSACK was triggered by the retransmission, the ACKs of the original
        // having been lost; stay conservative.
        if !a.dsacks.is_empty() {
            return Decision::Genuine;
        }
        // RFC 3522 §3.2 step (5), second part: without an earlier DSACK, an
        // ACK of all outstanding data may follow the loss of the ACKs of the
        // original: ambiguous, no verdict (fast-retransmit episodes only, see
        // the module notes).
        if self.fast && !dsack_seen_before && a.ack >= a.snd_max {
            return Decision::NoVerdict(MissCause::Other);
        }
        // Step (6): SpuriousRecovery = SPUR_TO (timeout) or dupacks+1 (fast
        // retransmit); both are "spurious" here.
        Decision::Spurious { late: false }
    }

    fn pending(&self) -> Option<u32> {
        self.active.then_some(self.id)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{ack, rto};
    use super::*;

    #[test]
    fn fast_retransmit_episode_old_echo_is_spurious_fresh_echo_is_not() {
        // RFC 3522 §3.2 steps (2)-(6) for a fast retransmit: RetransmitTS = 5000.
        let mut e = EifelDetector::default();
        e.on_fast_retransmit(&rto(0, 1001, 9001, Some(5000), true));
        assert_eq!(e.pending(), Some(0));
        // Dupacks (no advance) are not acceptable ACKs.
        assert_eq!(e.on_ack(&ack(1001, 1001)), Decision::Pending);
        // The delayed original filled the hole: its TSval (4000) is echoed.
        let v = AckView {
            tsecr: Some(4000),
            snd_max: 9001,
            ..ack(1001, 6001)
        };
        assert_eq!(e.on_ack(&v), Decision::Spurious { late: false });
        assert_eq!(e.pending(), None);

        // The retransmission filled it (the original was lost).
        let mut e = EifelDetector::default();
        e.on_fast_retransmit(&rto(1, 1001, 9001, Some(5000), true));
        let v = AckView {
            tsecr: Some(5000),
            snd_max: 9001,
            ..ack(1001, 6001)
        };
        assert_eq!(e.on_ack(&v), Decision::Genuine);
    }

    #[test]
    fn fast_retransmit_step5_all_outstanding_acked_needs_an_earlier_dsack() {
        // RFC 3522 §3.2 step (5): old echo, ACK of everything outstanding, no
        // DSACK ever seen -> DONE (no verdict).
        let mut e = EifelDetector::default();
        e.on_fast_retransmit(&rto(0, 1001, 9001, Some(5000), true));
        let v = AckView {
            tsecr: Some(4000),
            snd_max: 9001,
            ..ack(1001, 9001)
        };
        assert_eq!(e.on_ack(&v), Decision::NoVerdict(MissCause::Other));
        // After a DSACK was seen on an earlier ACK the same ACK is spurious.
        let d = [(101u64, 201u64)];
        let dup = AckView {
            dsacks: &d,
            ..ack(9001, 9001)
        };
        assert_eq!(e.on_ack(&dup), Decision::Pending);
        e.on_fast_retransmit(&rto(1, 9001, 20001, Some(6000), true));
        let v = AckView {
            tsecr: Some(5500),
            snd_max: 20001,
            ..ack(9001, 20001)
        };
        assert_eq!(e.on_ack(&v), Decision::Spurious { late: false });
        // A cancelled episode decides nothing.
        e.on_fast_retransmit(&rto(2, 20001, 30001, Some(7000), true));
        e.cancel();
        let v = AckView {
            tsecr: Some(1),
            snd_max: 30001,
            ..ack(20001, 21001)
        };
        assert_eq!(e.on_ack(&v), Decision::Pending);
    }

    #[test]
    fn echo_of_original_is_spurious_echo_of_retransmission_is_not() {
        let mut e = EifelDetector::default();
        e.on_rto(&rto(0, 1001, 9001, Some(5000), true));
        // The first acceptable ACK echoes a TSval older than RetransmitTS.
        let v = AckView {
            tsecr: Some(4000),
            ..ack(1001, 3001)
        };
        assert_eq!(e.on_ack(&v), Decision::Spurious { late: false });

        let mut e = EifelDetector::default();
        e.on_rto(&rto(0, 1001, 9001, Some(5000), true));
        let v = AckView {
            tsecr: Some(5000),
            ..ack(1001, 2001)
        };
        assert_eq!(e.on_ack(&v), Decision::Genuine);
    }

    #[test]
    fn dupacks_wait_dsack_is_conservative_wraparound_and_no_ts() {
        let mut e = EifelDetector::default();
        e.on_rto(&rto(0, 1001, 9001, Some(3), true));
        // Not acceptable yet (does not advance): keep waiting.
        assert_eq!(e.on_ack(&ack(1001, 1001)), Decision::Pending);
        // A second timeout keeps the first RetransmitTS.
        e.on_rto(&rto(1, 1001, 9001, Some(900), true));
        // TSecr just below RetransmitTS across the 2^32 wrap: spurious.
        let v = AckView {
            tsecr: Some(u32::MAX - 2),
            ..ack(1001, 2001)
        };
        assert_eq!(e.on_ack(&v), Decision::Spurious { late: false });

        // RFC 3522 §3.2 step (5): an old echo with a DSACK -> not spurious.
        let mut e = EifelDetector::default();
        e.on_rto(&rto(0, 1001, 9001, Some(5000), true));
        let d = [(1001u64, 2001u64)];
        let v = AckView {
            tsecr: Some(4000),
            dsacks: &d,
            ..ack(1001, 2001)
        };
        assert_eq!(e.on_ack(&v), Decision::Genuine);

        let mut e = EifelDetector::default();
        e.on_rto(&rto(0, 1001, 9001, None, true));
        assert_eq!(
            e.on_ack(&ack(1001, 2001)),
            Decision::NoVerdict(MissCause::Other)
        );
    }
}
