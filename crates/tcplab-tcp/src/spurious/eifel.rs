//! Eifel detection (RFC 3522): with timestamps, the first acceptable ACK after
//! a timeout retransmission tells whether it was sent for the original
//! transmission (TSecr older than the retransmission's TSval: spurious) or
//! for the retransmission.

use super::{AckView, Decision, Detector, MissCause, RtoView};

#[derive(Debug, Default)]
pub struct EifelDetector {
    /// RFC 3522 §3.2 step (2) RetransmitTS, while an episode is open.
    retransmit_ts: Option<u32>,
    /// No timestamps on the retransmission: no verdict possible.
    no_ts: bool,
    active: bool,
    id: u32,
}

impl Detector for EifelDetector {
    fn name(&self) -> &'static str {
        "eifel"
    }

    fn on_rto(&mut self, v: &RtoView) {
        if self.active {
            // RFC 3522 §3.2: RetransmitTS belongs to the first retransmission
            // of the episode; later timeouts of the same episode keep it.
            return;
        }
        // RFC 3522 §3.2 steps (1)-(2): SpuriousRecovery = FALSE; remember the
        // TSval of the retransmission.
        self.active = true;
        self.id = v.id;
        self.retransmit_ts = v.ts_val;
        self.no_ts = v.ts_val.is_none();
    }

    fn on_ack(&mut self, a: &AckView) -> Decision {
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
        // Step (6): SpuriousRecovery = SPUR_TO.
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
