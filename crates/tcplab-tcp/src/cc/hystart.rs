//! HyStart++ (RFC 9406): leave slow start on a round-trip delay increase,
//! before the bottleneck queue overflows, through Conservative Slow Start.
//!
//! One `HyStart` belongs to a loss-based controller (Reno/NewReno, CUBIC,
//! QoS-TCP). While `CcState::in_slow_start()`, the controller hands each
//! non-application-limited ACK to [`HyStart::on_slow_start_ack`] and applies
//! the returned [`SsStep`] instead of its own slow-start increase; a
//! congestion event (fast retransmit or RTO) calls [`HyStart::on_congestion`],
//! after which the controller's standard slow start applies (RFC 9406 §4.2:
//! HyStart++ is for the initial slow start only).
//!
//! Where the RFC leaves room:
//! * Rounds are tracked with windowEnd = SND.NXT (RFC 9406 §4.2); an ACK with
//!   SND.UNA >= windowEnd ends the round *after* its RTT sample has been
//!   counted in it (the segment it acknowledges was sent in that round).
//! * The first ACK starts the first round (windowEnd = SND.NXT then).
//! * ACKs without an RTT sample (Karn's rule) grow cwnd but add no sample.
//! * L = 8 SMSS (RFC 9406 §4.3, non-paced sender); tcplab does not pace.
//! * When CSS ends, ssthresh = cwnd; with `ca_at_ssthresh = false` the
//!   controller then does one more standard slow-start ACK (cwnd == ssthresh
//!   is slow start, RFC 5681 §3.1) before congestion avoidance.

use super::{AckInfo, CcState};
use crate::Time;

const MS: Time = 1_000_000;
/// RFC 9406 §4.3: MIN_RTT_THRESH = 4 msec.
pub const MIN_RTT_THRESH: Time = 4 * MS;
/// RFC 9406 §4.3: MAX_RTT_THRESH = 16 msec.
pub const MAX_RTT_THRESH: Time = 16 * MS;
/// RFC 9406 §4.3: MIN_RTT_DIVISOR = 8.
pub const MIN_RTT_DIVISOR: Time = 8;
/// RFC 9406 §4.3: N_RTT_SAMPLE = 8.
pub const N_RTT_SAMPLE: u32 = 8;
/// RFC 9406 §4.3: CSS_GROWTH_DIVISOR = 4.
pub const CSS_GROWTH_DIVISOR: u64 = 4;
/// RFC 9406 §4.3: CSS_ROUNDS = 5.
pub const CSS_ROUNDS: u32 = 5;
/// RFC 9406 §4.3: L = 8 for a non-paced sender (in SMSS).
pub const L: u64 = 8;

/// Where HyStart++ is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Standard slow start with the delay-increase check (RFC 9406 §4.2).
    SlowStart,
    /// Conservative Slow Start (RFC 9406 §4.2).
    Css,
    /// Done: CSS ended in congestion avoidance, or a congestion event
    /// happened; the controller's own slow start applies from here on.
    Done,
}

/// What one slow-start ACK does to the window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SsStep {
    /// Bytes to add to cwnd.
    pub increase: u64,
    /// Enter congestion avoidance: set ssthresh = cwnd after the increase
    /// (RFC 9406 §4.2, CSS_ROUNDS complete).
    pub enter_ca: bool,
}

/// HyStart++ state (RFC 9406 §4.2). RTTs in ns; `None` = infinity.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HyStart {
    phase: Phase,
    /// windowEnd: the round ends when SND.UNA reaches it.
    window_end: Option<u64>,
    last_round_min_rtt: Option<Time>,
    current_round_min_rtt: Option<Time>,
    rtt_sample_count: u32,
    css_baseline_min_rtt: Option<Time>,
    /// CSS rounds begun so far (the partial round of entry counts).
    css_rounds: u32,
    /// Slow-start exits to CSS so far (diagnostics / tests).
    pub css_entries: u32,
}

impl Default for HyStart {
    fn default() -> Self {
        HyStart {
            phase: Phase::SlowStart,
            window_end: None,
            last_round_min_rtt: None,
            current_round_min_rtt: None,
            rtt_sample_count: 0,
            css_baseline_min_rtt: None,
            css_rounds: 0,
            css_entries: 0,
        }
    }
}

impl HyStart {
    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// Active: the controller should use `on_slow_start_ack` in slow start.
    pub fn active(&self) -> bool {
        self.phase != Phase::Done
    }

    /// RFC 9406 §4.2: RttThresh = max(MIN_RTT_THRESH,
    /// min(lastRoundMinRTT / MIN_RTT_DIVISOR, MAX_RTT_THRESH)).
    pub fn rtt_thresh(last_round_min_rtt: Time) -> Time {
        (last_round_min_rtt / MIN_RTT_DIVISOR).clamp(MIN_RTT_THRESH, MAX_RTT_THRESH)
    }

    /// One ACK in slow start (the controller checked `st.in_slow_start()`
    /// and that the ACK is not application-limited). Returns `None` once
    /// HyStart++ is done (use standard slow start).
    pub fn on_slow_start_ack(&mut self, st: &CcState, ack: &AckInfo) -> Option<SsStep> {
        if self.phase == Phase::Done {
            return None;
        }
        if self.window_end.is_none() {
            // RFC 9406 §4.2: a round starts with windowEnd = SND.NXT.
            self.window_end = Some(ack.snd_nxt);
        }
        // RFC 9406 §4.2: N = bytes newly acknowledged; cwnd grows by
        // min(N, L*SMSS) in slow start, divided by CSS_GROWTH_DIVISOR in CSS.
        let n = ack.acked.min(L * st.mss);
        let increase = match self.phase {
            Phase::SlowStart => n,
            _ => n / CSS_GROWTH_DIVISOR,
        };
        // RFC 9406 §4.2: currentRoundMinRTT = min(currentRoundMinRTT, currRTT);
        // rttSampleCount += 1.
        if let Some(rtt) = ack.rtt {
            self.current_round_min_rtt =
                Some(self.current_round_min_rtt.map_or(rtt, |m| m.min(rtt)));
            self.rtt_sample_count += 1;
        }
        if self.rtt_sample_count >= N_RTT_SAMPLE {
            match self.phase {
                Phase::SlowStart => {
                    // RFC 9406 §4.2: with >= N_RTT_SAMPLE samples and both
                    // round minima valid, exit to CSS if currentRoundMinRTT
                    // >= lastRoundMinRTT + RttThresh.
                    if let (Some(cur), Some(last)) =
                        (self.current_round_min_rtt, self.last_round_min_rtt)
                    {
                        if cur >= last + Self::rtt_thresh(last) {
                            self.css_baseline_min_rtt = Some(cur);
                            self.phase = Phase::Css;
                            // RFC 9406 §4.2: a partial round of entry counts
                            // towards CSS_ROUNDS.
                            self.css_rounds = 1;
                            self.css_entries += 1;
                        }
                    }
                }
                Phase::Css => {
                    // RFC 9406 §4.2: if currentRoundMinRTT < cssBaselineMinRtt
                    // the exit was spurious: cssBaselineMinRtt = infinity,
                    // resume slow start including HyStart++.
                    if let (Some(cur), Some(base)) =
                        (self.current_round_min_rtt, self.css_baseline_min_rtt)
                    {
                        if cur < base {
                            self.css_baseline_min_rtt = None;
                            self.phase = Phase::SlowStart;
                            self.css_rounds = 0;
                        }
                    }
                }
                Phase::Done => {}
            }
        }
        let mut enter_ca = false;
        if self.window_end.is_some_and(|w| ack.snd_una >= w) {
            // End of an RTT round.
            if self.phase == Phase::Css {
                if self.css_rounds >= CSS_ROUNDS {
                    // RFC 9406 §4.2: CSS_ROUNDS complete: enter congestion
                    // avoidance, ssthresh = cwnd.
                    enter_ca = true;
                    self.phase = Phase::Done;
                } else {
                    self.css_rounds += 1;
                }
            }
            // RFC 9406 §4.2: at the start of each round, lastRoundMinRTT =
            // currentRoundMinRTT, currentRoundMinRTT = infinity,
            // rttSampleCount = 0, windowEnd = SND.NXT.
            self.last_round_min_rtt = self.current_round_min_rtt;
            self.current_round_min_rtt = None;
            self.rtt_sample_count = 0;
            self.window_end = Some(ack.snd_nxt);
        }
        Some(SsStep { increase, enter_ca })
    }

    /// A congestion event (loss, RTO) in slow start or CSS: the controller's
    /// loss response applies and later slow starts use standard slow start
    /// (RFC 9406 §4.2: HyStart++ SHOULD be used only for the initial slow
    /// start).
    pub fn on_congestion(&mut self) {
        self.phase = Phase::Done;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    fn st() -> CcState {
        CcState {
            cwnd: 10 * MSS,
            ssthresh: u64::MAX / 4,
            mss: MSS,
            max_cwnd: u64::MAX / 4,
            ca_at_ssthresh: false,
        }
    }

    /// Drives HyStart++ with ACKs of 2 segments; `round(acks, rtt)` sends
    /// `acks` ACKs with RTT `rtt`, the last one reaching windowEnd (the
    /// SND.NXT seen by the previous round's last ACK). Each ACK's snd_nxt is
    /// SND.NXT before the sender answers it with 2 new segments.
    struct Driver {
        h: HyStart,
        st: CcState,
        una: u64,
        nxt: u64,
        end: u64,
    }

    impl Driver {
        fn new() -> Self {
            Driver {
                h: HyStart::default(),
                st: st(),
                una: 0,
                nxt: 10 * MSS,
                end: 10 * MSS,
            }
        }

        /// Returns the total cwnd increase and whether CA was entered.
        fn round(&mut self, acks: u32, rtt: Time) -> (u64, bool) {
            let end = self.end;
            let mut total = 0;
            let mut ca = false;
            for i in 0..acks {
                self.una = if i + 1 == acks {
                    end
                } else {
                    (self.una + 2 * MSS).min(end - 1)
                };
                let a = AckInfo {
                    acked: 2 * MSS,
                    rtt: Some(rtt),
                    snd_una: self.una,
                    snd_nxt: self.nxt,
                    ..Default::default()
                };
                if i + 1 == acks {
                    self.end = self.nxt;
                }
                self.nxt += 2 * MSS;
                let step = self.h.on_slow_start_ack(&self.st, &a).unwrap();
                self.st.cwnd += step.increase;
                total += step.increase;
                if step.enter_ca {
                    self.st.ssthresh = self.st.cwnd;
                    ca = true;
                }
            }
            (total, ca)
        }
    }

    #[test]
    fn thresholds() {
        assert_eq!(HyStart::rtt_thresh(10 * MS), 4 * MS);
        assert_eq!(HyStart::rtt_thresh(80 * MS), 10 * MS);
        assert_eq!(HyStart::rtt_thresh(200 * MS), 16 * MS);
    }

    #[test]
    fn exits_on_rtt_increase_at_threshold_only() {
        let mut d = Driver::new();
        d.round(10, 100 * MS);
        // +12 ms < RttThresh = 12.5 ms: stays in slow start
        d.round(10, 112 * MS);
        assert_eq!(d.h.phase(), Phase::SlowStart);
        // 112 -> 126 ms: +14 ms >= 112/8 = 14 ms: exit to CSS
        d.round(10, 126 * MS);
        assert_eq!(d.h.phase(), Phase::Css);
        assert_eq!(d.h.css_baseline_min_rtt, Some(126 * MS));
    }

    #[test]
    fn needs_n_rtt_sample() {
        let mut d = Driver::new();
        d.round(10, 100 * MS);
        // a large increase seen by only 7 samples: no exit
        d.round(7, 200 * MS);
        assert_eq!(d.h.phase(), Phase::SlowStart);
        // slow start: cwnd grows by min(N, L*SMSS) = N per ACK
        let (inc, _) = d.round(8, 400 * MS);
        assert_eq!(d.h.phase(), Phase::Css);
        // the exit happens on the 8th sample: all 8 ACKs were slow start
        assert_eq!(inc, 8 * 2 * MSS);
    }

    #[test]
    fn css_growth_is_a_quarter_and_ends_in_ca_after_5_rounds() {
        let mut d = Driver::new();
        d.round(10, 100 * MS);
        d.round(10, 120 * MS); // exit on the 8th ACK of this round: CSS round 1
        assert_eq!(d.h.phase(), Phase::Css);
        for r in 2..=CSS_ROUNDS {
            let (inc, ca) = d.round(10, 120 * MS);
            // CSS: cwnd += min(N, L*SMSS) / CSS_GROWTH_DIVISOR
            assert_eq!(inc, 10 * 2 * MSS / 4, "round {r}");
            if r < CSS_ROUNDS {
                assert!(!ca);
                assert_eq!(d.h.phase(), Phase::Css);
            } else {
                assert!(ca, "CSS ends after {CSS_ROUNDS} rounds");
                assert_eq!(d.h.phase(), Phase::Done);
                assert_eq!(d.st.ssthresh, d.st.cwnd);
            }
        }
        let a = AckInfo {
            acked: MSS,
            ..Default::default()
        };
        assert_eq!(d.h.on_slow_start_ack(&d.st, &a), None);
    }

    #[test]
    fn l_caps_a_stretch_ack() {
        let mut d = Driver::new();
        let a = AckInfo {
            acked: 20 * MSS,
            snd_nxt: 30 * MSS,
            snd_una: 1,
            ..Default::default()
        };
        assert_eq!(d.h.on_slow_start_ack(&d.st, &a).unwrap().increase, 8 * MSS);
    }

    #[test]
    fn returns_to_slow_start_when_rtt_falls_back() {
        let mut d = Driver::new();
        d.round(10, 100 * MS);
        d.round(10, 120 * MS);
        assert_eq!(d.h.phase(), Phase::Css);
        d.round(10, 120 * MS);
        assert_eq!(d.h.phase(), Phase::Css);
        // the RTT drops below the CSS baseline (120 ms): back to slow start
        d.round(10, 105 * MS);
        assert_eq!(d.h.phase(), Phase::SlowStart);
        assert_eq!(d.h.css_baseline_min_rtt, None);
        let (inc, _) = d.round(10, 105 * MS);
        assert_eq!(inc, 10 * 2 * MSS, "full slow-start growth again");
        // and HyStart++ still runs: a new increase exits again
        d.round(10, 125 * MS);
        assert_eq!(d.h.phase(), Phase::Css);
        assert_eq!(d.h.css_entries, 2);
    }

    #[test]
    fn congestion_ends_hystart() {
        let mut d = Driver::new();
        d.round(10, 100 * MS);
        d.h.on_congestion();
        let a = AckInfo {
            acked: MSS,
            ..Default::default()
        };
        assert_eq!(d.h.on_slow_start_ack(&d.st, &a), None);
    }
}
