//! F-RTO (RFC 5682): sender-only detection of spurious retransmission
//! timeouts. After the timeout retransmission is acknowledged, send new data
//! instead of going back N; if the next ACK acknowledges data that was sent
//! before the timeout and never retransmitted, the timeout was spurious.
//!
//! `Frto::linux` is Linux's variant (`net.ipv4.tcp_frto`, `tcp_process_loss` since
//! 3.10, commit "tcp: implement RFC 5682 F-RTO"): the SACK-enhanced algorithm, plus
//! a spurious verdict as soon as *any* ACK after the timeout acknowledges,
//! cumulatively or by SACK, data sent before the timeout and never retransmitted
//! (`FLAG_ORIG_SACK_ACKED` -> `tcp_try_undo_loss(sk, true)`), in step 2 as well
//! as in step 3. It needs no new data to probe with, so a timeout at the tail
//! of a transfer is still decided (docs/algorithms.md §3.2 "Linux extras (b)").

use super::{AckView, Decision, Detector, MissCause, NewData, RtoView};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    Idle,
    /// Step 2: waiting for the first (basic) / the covering (SACK) ACK.
    WaitAck1,
    /// Step 3: new data sent, waiting for the deciding ACK.
    WaitAck2,
}

#[derive(Debug)]
pub struct Frto {
    /// Use the SACK-enhanced algorithm (§3) when SACK was negotiated.
    sack_variant: bool,
    sack: bool,
    step: Step,
    /// RFC 5682 "recover".
    recover: u64,
    /// Still in RTO recovery from an earlier timeout (SND.UNA < recover).
    in_rto_recovery: bool,
    /// Linux's variant (see the module comment).
    linux: bool,
    id: u32,
}

impl Frto {
    pub fn new(sack_variant: bool) -> Frto {
        Frto {
            sack_variant,
            sack: false,
            step: Step::Idle,
            recover: 0,
            in_rto_recovery: false,
            linux: false,
            id: 0,
        }
    }

    /// Linux's F-RTO (`frto-linux`): the SACK-enhanced steps (with or without
    /// SACK, as Linux has no basic variant) plus the early spurious verdict.
    pub fn linux() -> Frto {
        Frto {
            linux: true,
            ..Frto::new(true)
        }
    }

    fn enhanced(&self) -> bool {
        self.linux || (self.sack_variant && self.sack)
    }
}

impl Detector for Frto {
    fn name(&self) -> &'static str {
        if self.linux {
            "frto-linux"
        } else if self.sack_variant {
            "frto"
        } else {
            "frto-basic"
        }
    }

    fn on_rto(&mut self, v: &RtoView) {
        self.sack = v.sack;
        // RFC 5682 §2.1 step 1 / §3.1 step 1: already in RTO recovery and
        // "recover" >= SND.UNA: do not enter step 2; store the highest
        // sequence number sent in "recover" and recover conventionally.
        let repeat = self.in_rto_recovery && self.recover >= v.snd_una;
        self.recover = v.snd_max.saturating_sub(1);
        self.in_rto_recovery = true;
        if repeat && self.step == Step::Idle {
            return;
        }
        // A timeout during steps 2/3 (a recurring timeout on the same SND.UNA)
        // restarts at step 1 with this timeout (§3.1 step 2: "If RTO expires again,
        // go to step 1"; Linux applies F-RTO to recurring timeouts the same way).
        self.id = v.id;
        self.step = Step::WaitAck1;
    }

    fn on_ack(&mut self, a: &AckView) -> Decision {
        if a.ack > self.recover {
            self.in_rto_recovery = false;
        }
        let advanced = a.ack > a.prev_una;
        if self.linux && self.step != Step::Idle && a.orig_acked {
            // Linux tcp_process_loss: "Step 3.b. A timeout is spurious if not all
            // data are lost, i.e., never-retransmitted data are (s)acked" — checked
            // on every ACK of the episode, before step 2b, so no new data is needed.
            self.step = Step::Idle;
            self.in_rto_recovery = false;
            self.recover = a.ack;
            return Decision::Spurious { late: false };
        }
        match self.step {
            Step::Idle => Decision::Pending,
            Step::WaitAck1 => {
                if !advanced && !a.is_dupack {
                    // Neither advances nor duplicates (window update, reverse
                    // data): ignore and stay (RFC 5682 leaves this open; Linux).
                    return Decision::Pending;
                }
                if self.enhanced() && !advanced {
                    // RFC 5682 §3.1 step 2: dupacks before the cumulative ACK of
                    // the retransmission only update the scoreboard.
                    return Decision::Pending;
                }
                if a.is_dupack {
                    // RFC 5682 §2.1 step 2a: a duplicate ACK -> conventional.
                    self.step = Step::Idle;
                    return Decision::NoVerdict(MissCause::DupAck);
                }
                // RFC 5682 §2.1 step 2 / §3.1 step 2a: "recover" is the highest
                // sequence number sent so far (unchanged: hold kept SND.NXT).
                if a.ack > self.recover {
                    // Step 2a: the ACK covers "recover": no verdict possible.
                    self.step = Step::Idle;
                    let cause = if a.new_data == NewData::Exhausted {
                        MissCause::Finished
                    } else {
                        MissCause::Other
                    };
                    return Decision::NoVerdict(cause);
                }
                // Step 2b: send up to two new segments and go to step 3; if no new
                // data can be sent, recover conventionally.
                match a.new_data {
                    NewData::Yes => {
                        self.step = Step::WaitAck2;
                        Decision::SendNew
                    }
                    NewData::Exhausted => {
                        self.step = Step::Idle;
                        Decision::NoVerdict(MissCause::Finished)
                    }
                    NewData::NoWindow => {
                        self.step = Step::Idle;
                        Decision::NoVerdict(MissCause::NoWindow)
                    }
                }
            }
            Step::WaitAck2 => {
                if self.enhanced() {
                    // RFC 5682 §3.1 step 3a: the ACK acknowledges a sequence number
                    // above "recover" (SACK or cumulative) -> genuine.
                    // Linux: any dupack or SACK that did not cover original data
                    // (checked above) once new data is out ("FLAG_DATA_SACKED ||
                    // num_dupack": "Step 3.a. loss was real").
                    if a.ack > self.recover + 1
                        || a.newly_sacked_high > self.recover + 1
                        || (self.linux && a.is_dupack)
                    {
                        self.step = Step::Idle;
                        return Decision::Genuine;
                    }
                    // Step 3b: it acknowledges data not acknowledged earlier.
                    if advanced || a.newly_sacked_high > 0 {
                        self.step = Step::Idle;
                        self.in_rto_recovery = false;
                        self.recover = a.ack;
                        return Decision::Spurious { late: false };
                    }
                    return Decision::Pending;
                }
                if a.is_dupack {
                    // RFC 5682 §2.1 step 3a: duplicate ACK -> genuine.
                    self.step = Step::Idle;
                    return Decision::Genuine;
                }
                if advanced {
                    // Step 3b: it acknowledges data that was not retransmitted
                    // (only the first segment was): SpuriousRecovery = SPUR_TO,
                    // recover = SND.UNA. The spurious response ends RTO recovery.
                    self.step = Step::Idle;
                    self.in_rto_recovery = false;
                    self.recover = a.ack;
                    return Decision::Spurious { late: false };
                }
                Decision::Pending
            }
        }
    }

    fn holds_retransmissions(&self) -> bool {
        self.step != Step::Idle
    }

    fn pending(&self) -> Option<u32> {
        (self.step != Step::Idle).then_some(self.id)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{ack, rto};
    use super::*;

    // Timeout at SND.UNA = 1001 with SND.MAX = 11001 (ten segments out).
    fn started(sack: bool) -> Frto {
        let mut f = Frto::new(true);
        f.on_rto(&rto(0, 1001, 11001, None, sack));
        assert!(f.holds_retransmissions());
        f
    }

    #[test]
    fn basic_spurious_two_advancing_acks() {
        let mut f = started(false);
        // RFC 5682 §2.1 step 2b: the first ACK advances -> two new segments.
        assert_eq!(f.on_ack(&ack(1001, 3001)), Decision::SendNew);
        assert!(f.holds_retransmissions());
        // Step 3b: the second ACK advances over never-retransmitted data.
        assert_eq!(
            f.on_ack(&ack(3001, 5001)),
            Decision::Spurious { late: false }
        );
        assert!(!f.holds_retransmissions());
    }

    #[test]
    fn basic_genuine_dupack_after_new_data() {
        let mut f = started(false);
        assert_eq!(f.on_ack(&ack(1001, 2001)), Decision::SendNew);
        // Step 3a: a duplicate ACK -> genuine.
        let d = AckView {
            is_dupack: true,
            ..ack(2001, 2001)
        };
        assert_eq!(f.on_ack(&d), Decision::Genuine);
    }

    #[test]
    fn basic_dupack_first_is_a_miss() {
        let mut f = started(false);
        // Step 2a: the first ACK is a duplicate: conventional recovery.
        let d = AckView {
            is_dupack: true,
            ..ack(1001, 1001)
        };
        assert_eq!(f.on_ack(&d), Decision::NoVerdict(MissCause::DupAck));
    }

    #[test]
    fn window_update_is_ignored() {
        let mut f = started(false);
        assert_eq!(f.on_ack(&ack(1001, 1001)), Decision::Pending);
        assert!(f.holds_retransmissions());
    }

    #[test]
    fn no_new_data_or_window() {
        let mut f = started(false);
        let v = AckView {
            new_data: NewData::Exhausted,
            ..ack(1001, 2001)
        };
        assert_eq!(f.on_ack(&v), Decision::NoVerdict(MissCause::Finished));
        let mut f = started(false);
        let v = AckView {
            new_data: NewData::NoWindow,
            ..ack(1001, 2001)
        };
        assert_eq!(f.on_ack(&v), Decision::NoVerdict(MissCause::NoWindow));
        // An ACK covering "recover" (everything outstanding) decides nothing.
        let mut f = started(false);
        assert!(matches!(
            f.on_ack(&ack(1001, 11001)),
            Decision::NoVerdict(_)
        ));
    }

    #[test]
    fn sack_variant_waits_through_dupacks_and_uses_sack_info() {
        let mut f = started(true);
        // §3.1 step 2: dupacks before the covering ACK only update the scoreboard.
        let d = AckView {
            is_dupack: true,
            newly_sacked_high: 5001,
            ..ack(1001, 1001)
        };
        assert_eq!(f.on_ack(&d), Decision::Pending);
        assert_eq!(f.on_ack(&ack(1001, 2001)), Decision::SendNew);
        // Step 3a: SACK above "recover" (the new segments) -> genuine.
        let g = AckView {
            is_dupack: true,
            newly_sacked_high: 12001,
            ..ack(2001, 2001)
        };
        assert_eq!(f.on_ack(&g), Decision::Genuine);

        // Step 3b: SACK of original data below "recover" -> spurious.
        let mut f = started(true);
        assert_eq!(f.on_ack(&ack(1001, 2001)), Decision::SendNew);
        let s = AckView {
            is_dupack: true,
            newly_sacked_high: 4001,
            ..ack(2001, 2001)
        };
        assert_eq!(f.on_ack(&s), Decision::Spurious { late: false });
    }

    #[test]
    fn after_a_spurious_verdict_the_next_timeout_runs_frto_again() {
        let mut f = started(false);
        assert_eq!(f.on_ack(&ack(1001, 3001)), Decision::SendNew);
        assert_eq!(
            f.on_ack(&ack(3001, 5001)),
            Decision::Spurious { late: false }
        );
        // No further progress, another timeout at the same SND.UNA: not "in RTO recovery".
        f.on_rto(&rto(1, 5001, 13001, None, false));
        assert!(f.holds_retransmissions());
    }

    #[test]
    fn repeated_timeout_in_rto_recovery_skips_frto() {
        let mut f = started(false);
        assert!(matches!(
            f.on_ack(&ack(1001, 11001)),
            Decision::NoVerdict(_)
        ));
        // New timeout while recover >= SND.UNA... but recovery ended at 11001:
        // F-RTO runs again.
        f.on_rto(&rto(1, 11001, 20001, None, false));
        assert!(f.holds_retransmissions());
        // A timeout while still in RTO recovery (recover >= SND.UNA) after a
        // conventional fallback: step 1 says do not enter step 2.
        let mut f = started(false);
        let d = AckView {
            is_dupack: true,
            ..ack(1001, 1001)
        };
        let _ = f.on_ack(&d);
        f.on_rto(&rto(1, 1001, 11001, None, false));
        assert!(!f.holds_retransmissions());
    }

    // Linux variant (`frto-linux`): timeout at SND.UNA = 1001, SND.MAX = 11001.
    fn linux_started(sack: bool) -> Frto {
        let mut f = Frto::linux();
        f.on_rto(&rto(0, 1001, 11001, None, sack));
        assert!(f.holds_retransmissions());
        f
    }

    #[test]
    fn linux_first_ack_of_original_data_is_spurious_without_new_data() {
        for sack in [false, true] {
            // The first ACK covers the retransmitted segment and original data
            // behind it: spurious at once (FLAG_ORIG_SACK_ACKED), even with no new
            // data left — where RFC 5682 step 2b falls back to go-back-N.
            let mut f = linux_started(sack);
            let v = AckView {
                new_data: NewData::Exhausted,
                ..ack(1001, 3001)
            };
            assert_eq!(f.on_ack(&v), Decision::Spurious { late: false });
            assert!(!f.holds_retransmissions());
            // The RFC algorithm on the same ACK: no verdict, "finished".
            let mut r = Frto::new(true);
            r.on_rto(&rto(0, 1001, 11001, None, sack));
            assert_eq!(r.on_ack(&v), Decision::NoVerdict(MissCause::Finished));
            // An ACK of everything outstanding that includes original data is
            // spurious too (RFC 5682 step 2a: no verdict).
            let mut f = linux_started(sack);
            assert_eq!(
                f.on_ack(&ack(1001, 11001)),
                Decision::Spurious { late: false }
            );
        }
    }

    #[test]
    fn linux_sack_of_original_data_in_step_2_is_spurious() {
        let mut f = linux_started(true);
        let d = AckView {
            is_dupack: true,
            orig_acked: true,
            newly_sacked_high: 4001,
            ..ack(1001, 1001)
        };
        assert_eq!(f.on_ack(&d), Decision::Spurious { late: false });
    }

    #[test]
    fn linux_ack_of_only_the_retransmission_probes_or_falls_back() {
        // Only the retransmitted segment acknowledged: no original data, so the
        // RFC's step 2b runs: send new data ...
        let only_rtx = AckView {
            orig_acked: false,
            ..ack(1001, 2001)
        };
        let mut f = linux_started(true);
        assert_eq!(f.on_ack(&only_rtx), Decision::SendNew);
        // ... and step 3 decides: a SACK of only the new data -> genuine.
        let g = AckView {
            is_dupack: true,
            orig_acked: false,
            newly_sacked_high: 12001,
            ..ack(2001, 2001)
        };
        assert_eq!(f.on_ack(&g), Decision::Genuine);
        // Step 3 without SACK: a duplicate ACK -> genuine.
        let mut f = linux_started(false);
        assert_eq!(f.on_ack(&only_rtx), Decision::SendNew);
        let d = AckView {
            is_dupack: true,
            orig_acked: false,
            ..ack(2001, 2001)
        };
        assert_eq!(f.on_ack(&d), Decision::Genuine);
        // Step 3: original data acknowledged -> spurious.
        let mut f = linux_started(false);
        assert_eq!(f.on_ack(&only_rtx), Decision::SendNew);
        assert_eq!(
            f.on_ack(&ack(2001, 4001)),
            Decision::Spurious { late: false }
        );
        // No new data and nothing original acknowledged: conventional recovery.
        let mut f = linux_started(true);
        let v = AckView {
            new_data: NewData::Exhausted,
            ..only_rtx
        };
        assert_eq!(f.on_ack(&v), Decision::NoVerdict(MissCause::Finished));
        // Nor does an ACK of only the retransmission covering everything decide.
        let mut f = Frto::linux();
        f.on_rto(&rto(0, 1001, 2001, None, true));
        let v = AckView {
            orig_acked: false,
            new_data: NewData::Exhausted,
            ..ack(1001, 2001)
        };
        assert_eq!(f.on_ack(&v), Decision::NoVerdict(MissCause::Finished));
    }
}
