//! DSACK-based detection (RFC 3708): a late detector. Every segment
//! retransmitted in the episode that the receiver reports as a duplicate
//! (RFC 2883 DSACK) was needlessly resent; when the episode is over and all
//! its retransmissions were reported, the timeout (or fast retransmit) was
//! spurious. RFC 3708 §3 is the same for both kinds of episode: it starts at
//! the first retransmission and ends when the cumulative ACK passes SND.MAX
//! at that time (`recover`).

use super::{AckView, Decision, Detector, MissCause, RtoView};
use crate::Time;

#[derive(Debug, Default)]
pub struct DsackDetector {
    active: bool,
    id: u32,
    /// RFC 3708 §3: end of the episode (SND.MAX at the timeout).
    episode_end: u64,
    /// Retransmitted ranges not yet reported by a DSACK.
    retrans: Vec<(u64, u64)>,
    any_retrans: bool,
    /// Deadline for late DSACKs once the episode ended.
    listen_until: Option<Time>,
}

impl Detector for DsackDetector {
    fn name(&self) -> &'static str {
        "dsack"
    }

    fn on_rto(&mut self, v: &RtoView) {
        if self.active && self.listen_until.is_none() {
            // Another timeout inside the same episode: keep counting.
            self.episode_end = self.episode_end.max(v.snd_max);
            return;
        }
        // RFC 3708 §3 step 1: a new episode begins at the first retransmission.
        self.active = true;
        self.id = v.id;
        self.episode_end = v.snd_max;
        self.retrans.clear();
        self.any_retrans = false;
        self.listen_until = None;
    }

    fn on_fast_retransmit(&mut self, v: &RtoView) {
        // RFC 3708 §3 step 1: an episode begins at the fast retransmit; the
        // previous one (if still listening for late DSACKs) is given up.
        self.active = false;
        self.on_rto(v);
    }

    fn cancel(&mut self) {
        self.active = false;
        self.retrans.clear();
    }

    fn on_retransmit(&mut self, start: u64, end: u64) {
        // RFC 3708 §3 step 2: count the retransmissions of the episode.
        if self.active && self.listen_until.is_none() {
            self.retrans.push((start, end));
            self.any_retrans = true;
        }
    }

    fn on_ack(&mut self, a: &AckView) -> Decision {
        if !self.active {
            return Decision::Pending;
        }
        // RFC 3708 §3 step 3: a DSACK exactly reporting a retransmitted segment
        // means both copies arrived; DSACKs for never-retransmitted data
        // (network duplication) are ignored.
        for &(l, r) in a.dsacks {
            self.retrans.retain(|&(s, e)| !(l <= s && e <= r));
        }
        if self.listen_until.is_none() && a.ack >= self.episode_end {
            // Recovery is over; DSACKs for the last retransmissions are still
            // in flight: listen for about two RTTs (RFC 3708 §3 step 4).
            self.listen_until = Some(a.now.saturating_add(a.srtt.max(1).saturating_mul(2)));
        }
        if let Some(t) = self.listen_until {
            if self.any_retrans && self.retrans.is_empty() {
                // Step 4: all retransmissions were unnecessary -> spurious (late).
                self.active = false;
                return Decision::Spurious { late: true };
            }
            if a.now > t {
                self.active = false;
                return Decision::NoVerdict(MissCause::Other);
            }
        }
        Decision::Pending
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
    fn all_retransmissions_dsacked_is_spurious() {
        let mut d = DsackDetector::default();
        d.on_rto(&rto(0, 1001, 3001, None, true));
        d.on_retransmit(1001, 2001);
        d.on_retransmit(2001, 3001);
        let b1 = [(1001u64, 2001u64)];
        let v = AckView {
            dsacks: &b1,
            ..ack(1001, 3001)
        };
        // Episode over but one retransmission is still unreported: listen.
        assert_eq!(d.on_ack(&v), Decision::Pending);
        let b2 = [(2001u64, 3001u64)];
        let v = AckView {
            dsacks: &b2,
            ..ack(3001, 3001)
        };
        assert_eq!(d.on_ack(&v), Decision::Spurious { late: true });
    }

    #[test]
    fn fast_retransmit_episode_counts_retransmissions_against_dsacks() {
        // RFC 3708 §3: one fast retransmit + one partial-ACK retransmission;
        // both DSACKed after the episode ends (ack >= 5001) -> spurious.
        let mut d = DsackDetector::default();
        d.on_fast_retransmit(&rto(7, 1001, 5001, None, true));
        assert_eq!(d.pending(), Some(7));
        d.on_retransmit(1001, 2001);
        d.on_retransmit(3001, 4001);
        let b1 = [(1001u64, 2001u64)];
        let v = AckView {
            dsacks: &b1,
            ..ack(1001, 5001)
        };
        assert_eq!(d.on_ack(&v), Decision::Pending);
        let b2 = [(3001u64, 4001u64)];
        let v = AckView {
            dsacks: &b2,
            ..ack(5001, 5001)
        };
        assert_eq!(d.on_ack(&v), Decision::Spurious { late: true });

        // Only one of two retransmissions reported: not spurious (no verdict
        // once the listening period ends); a cancelled episode says nothing.
        let mut d = DsackDetector::default();
        d.on_fast_retransmit(&rto(8, 1001, 5001, None, true));
        d.on_retransmit(1001, 2001);
        d.on_retransmit(3001, 4001);
        let v = AckView {
            dsacks: &b1,
            now: 1,
            ..ack(1001, 5001)
        };
        assert_eq!(d.on_ack(&v), Decision::Pending);
        let v = AckView {
            now: 10_000_000_000,
            ..ack(5001, 5001)
        };
        assert_eq!(d.on_ack(&v), Decision::NoVerdict(MissCause::Other));
        d.on_fast_retransmit(&rto(9, 5001, 6001, None, true));
        d.on_retransmit(5001, 6001);
        d.cancel();
        let b = [(5001u64, 6001u64)];
        let v = AckView {
            dsacks: &b,
            ..ack(5001, 6001)
        };
        assert_eq!(d.on_ack(&v), Decision::Pending);
    }

    #[test]
    fn missing_dsack_or_duplication_is_not_spurious() {
        let mut d = DsackDetector::default();
        d.on_rto(&rto(0, 1001, 3001, None, true));
        d.on_retransmit(1001, 2001);
        // A DSACK for data never retransmitted (network duplication) is ignored.
        let b = [(5001u64, 6001u64)];
        let v = AckView {
            dsacks: &b,
            now: 1,
            ..ack(1001, 3001)
        };
        assert_eq!(d.on_ack(&v), Decision::Pending);
        // No DSACK within the listening period: no verdict.
        let v = AckView {
            now: 10_000_000_000,
            ..ack(3001, 3001)
        };
        assert_eq!(d.on_ack(&v), Decision::NoVerdict(MissCause::Other));
    }
}
