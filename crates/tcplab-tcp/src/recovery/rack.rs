//! RACK-TLP (RFC 8985): time-based loss detection (RACK, §6) and tail loss
//! probes (TLP, §7).
//!
//! RACK keeps the send time of the most recently sent segment that has been
//! delivered; an unacknowledged segment sent before it by more than the
//! reordering window is lost. It works for retransmissions as for original
//! segments (a lost retransmission is detected without a timeout). TLP sends
//! one probe segment when the ACK clock stops at the tail of a flight, so
//! that the loss is detected by RACK or fast recovery instead of an RTO.
//!
//! The connection drives it at named steps (`connection.rs`): per ACK,
//! [`Rack::on_ack`] (§6.2 steps 1–3), [`Rack::on_dsack`] (step 4) and
//! [`Rack::detect_loss`] (step 5); the reordering timer calls
//! `detect_loss` again (§6.2 step 5, "RACK_detect_loss_and_arm_timer");
//! [`Tlp`] holds the probe episode (§7.2–§7.4).

use crate::jiffies::{to_jiffies_ceil, wheel_fire, TCP_TIMEOUT_MIN};
use crate::scoreboard::{Delivered, Scoreboard, EVER_RETRANS, LOST, RETRANS, SACKED};
use crate::{Time, NS_PER_MS, NS_PER_S};

/// RFC 8985 §6.2 step 4: reo_wnd_persist after a DSACK.
const REO_WND_PERSIST: u32 = 16;
/// RFC 8985 §7.2: worst-case delayed-ACK time WCDelAckT.
pub const WC_DEL_ACK_T: Time = 200 * NS_PER_MS;

/// RFC 8985 §6.1 "RACK_sent_after": t1/seq1 sent after t2/seq2.
#[inline]
pub fn sent_after(t1: Time, seq1: u64, t2: Time, seq2: u64) -> bool {
    t1 > t2 || (t1 == t2 && seq1 > seq2)
}

/// RACK state (RFC 8985 §6.1 "Per-connection state").
#[derive(Clone, Copy, Debug)]
pub struct Rack {
    /// RACK.xmit_ts / RACK.end_seq: the most recently sent delivered segment.
    pub xmit_ts: Time,
    pub end_seq: u64,
    /// RACK.rtt: RTT of that segment (0: nothing delivered yet).
    pub rtt: Time,
    /// RACK.fack: highest end sequence delivered.
    pub fack: u64,
    pub reordering_seen: bool,
    pub reo_wnd_mult: u32,
    pub reo_wnd_persist: u32,
    /// RACK.dsack_round: SND.NXT when reo_wnd_mult was last raised.
    pub dsack_round: Option<u64>,
}

impl Default for Rack {
    fn default() -> Self {
        Rack {
            xmit_ts: 0,
            end_seq: 0,
            rtt: 0,
            fack: 0,
            reordering_seen: false,
            reo_wnd_mult: 1,
            reo_wnd_persist: REO_WND_PERSIST,
            dsack_round: None,
        }
    }
}

/// Losses found by one [`Rack::detect_loss`] pass.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Detected {
    /// Bytes newly marked lost, and the lowest sequence among them.
    pub bytes: u64,
    pub first_seq: Option<u64>,
    /// Of them, retransmissions that were lost again.
    pub lost_retrans: u32,
    /// Time until the next not-yet-lost segment's window expires
    /// (0 = no reordering timer needed).
    pub timeout: Time,
}

impl Rack {
    /// RFC 8985 §6.2 steps 2–3 for one ACK: `d` summarises the segments it
    /// delivered, `fack_now` the highest sequence delivered after it
    /// (max of SND.UNA and the highest SACKed end), `valid_rtx(xmit_ts)`
    /// the §6.2 step 2 timestamp check of a retransmitted segment
    /// (ACK.ts_option.echo_reply ≥ Segment.xmit_ts; true without timestamps).
    pub fn on_ack(
        &mut self,
        d: &Delivered,
        fack_now: u64,
        now: Time,
        min_rtt: Time,
        valid_rtx: impl Fn(Time) -> bool,
    ) {
        // Step 2: a retransmitted segment counts only if its RTT cannot
        // belong to the original (rtt ≥ min_RTT and the echoed timestamp is
        // not older than the retransmission).
        let rtx = d
            .rtx
            .filter(|&(t, _)| now.saturating_sub(t) >= min_rtt && valid_rtx(t));
        let newest = match (d.orig, rtx) {
            (Some(a), Some(b)) => Some(if sent_after(b.0, b.1, a.0, a.1) { b } else { a }),
            (a, b) => a.or(b),
        };
        // RACK.rtt: Linux's order, not RFC 8985's. The RFC walks the newly
        // delivered segments in ascending xmit_ts order, so RACK.rtt is the
        // newest one's; Linux calls tcp_rack_advance() in sequence order
        // (tcp_sacktag_*, then tcp_clean_rtx_queue), so rack.rtt_us is the
        // highest-sequence one's. They differ when one ACK delivers a
        // retransmission with later originals — after a spurious timeout,
        // the head's RTO retransmission with the delayed originals: the RFC's
        // order takes the retransmission's short RTT and marks every
        // original still in flight lost (a go-back-N F-RTO has just declared
        // unnecessary), Linux's takes the originals' RTT and marks none.
        let last = d
            .last_cum
            .or(d.last_sacked)
            .filter(|&(t, _, retx)| !retx || (now.saturating_sub(t) >= min_rtt && valid_rtx(t)));
        if let Some((t, _, _)) = last {
            self.rtt = now.saturating_sub(t).max(1);
        }
        if let Some((t, e)) = newest {
            if last.is_none() {
                // The last segment in sequence order did not count (a
                // retransmission that may be the original's ACK): the
                // newest one that does.
                self.rtt = now.saturating_sub(t).max(1);
            }
            if sent_after(t, e, self.xmit_ts, self.end_seq) {
                self.xmit_ts = t;
                self.end_seq = e;
            }
        }
        // Step 3: an original segment delivered below RACK.fack arrived out
        // of order.
        if d.lowest_orig_end < self.fack {
            self.reordering_seen = true;
        }
        self.fack = self.fack.max(fack_now);
    }

    /// RFC 8985 §6.2 step 4: a DSACK arrived (`snd_una`, `snd_nxt` after
    /// the ACK): widen the window by min_RTT/4, once per round trip.
    pub fn on_dsack(&mut self, snd_una: u64, snd_nxt: u64) {
        self.end_dsack_round(snd_una);
        if self.dsack_round.is_none() {
            self.reo_wnd_mult = self.reo_wnd_mult.saturating_add(1);
            self.dsack_round = Some(snd_nxt);
            self.reo_wnd_persist = REO_WND_PERSIST;
        }
    }

    /// RFC 8985 §6.2 step 4: the round of the last window increase ends
    /// when SND.UNA passes it.
    pub fn end_dsack_round(&mut self, snd_una: u64) {
        if self.dsack_round.is_some_and(|r| snd_una >= r) {
            self.dsack_round = None;
        }
    }

    /// RFC 8985 §6.2 step 4: after each loss recovery the widened window
    /// decays; after `REO_WND_PERSIST` recoveries it is back to min_RTT/4.
    pub fn on_recovery_end(&mut self) {
        self.reo_wnd_persist = self.reo_wnd_persist.saturating_sub(1);
        if self.reo_wnd_persist == 0 {
            self.reo_wnd_mult = 1;
        }
    }

    /// RFC 8985 §6.2 step 5, RACK_update_reo_wnd(): no window while no
    /// reordering was seen and the sender is in recovery or DupThresh
    /// segments are SACKed; else min(reo_wnd_mult · min_RTT / 4, SRTT).
    pub fn reo_wnd(
        &self,
        in_recovery: bool,
        sacked_segs: u64,
        dupthresh: u32,
        min_rtt: Time,
        srtt: Time,
    ) -> Time {
        if !self.reordering_seen && (in_recovery || sacked_segs >= dupthresh as u64) {
            return 0;
        }
        (self.reo_wnd_mult as Time * min_rtt / 4).min(srtt)
    }

    /// RFC 8985 §6.2 step 5, RACK_detect_loss(): every unacknowledged
    /// segment sent before RACK.xmit_ts whose RACK.rtt + reo_wnd has passed
    /// is marked lost (a lost retransmission included); the others set the
    /// reordering timer.
    pub fn detect_loss(&self, sb: &mut Scoreboard, now: Time, reo_wnd: Time) -> Detected {
        let mut out = Detected::default();
        if self.rtt == 0 {
            return out; // nothing delivered yet
        }
        let mut i = 0;
        while let Some(s) = sb.get(i).copied() {
            i += 1;
            // Delivered, or already lost and not retransmitted since
            // ("Segment.xmit_ts = INFINITE_TS").
            if s.has(SACKED) || (s.has(LOST) && !s.has(RETRANS)) {
                continue;
            }
            if !sent_after(self.xmit_ts, self.end_seq, s.sent_at, s.end) {
                // Never-retransmitted segments further on were sent later
                // still, and so was any retransmission of them.
                if !s.has(EVER_RETRANS) {
                    break;
                }
                continue;
            }
            let deadline = s.sent_at + self.rtt + reo_wnd;
            if deadline <= now {
                if s.has(RETRANS) {
                    out.lost_retrans += 1;
                }
                sb.mark_seg_lost(i - 1);
                out.bytes += s.len();
                out.first_seq.get_or_insert(s.start);
            } else {
                out.timeout = out.timeout.max(deadline - now);
            }
        }
        out
    }
}

/// What an ACK meant for the tail loss probe episode (RFC 8985 §7.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TlpAck {
    /// No probe outstanding, or not decided yet.
    Pending,
    /// The episode ended without a loss (new data delivered, the
    /// retransmission was DSACKed, or original and probe both arrived).
    NoLoss,
    /// The probe repaired a loss: the congestion control must respond.
    Repaired,
}

/// Tail-loss-probe state (RFC 8985 §7.1): TLP.end_seq and TLP.is_retrans.
#[derive(Clone, Copy, Debug, Default)]
pub struct Tlp {
    pub end_seq: Option<u64>,
    pub is_retrans: bool,
}

impl Tlp {
    /// RFC 8985 §7.2, TLP_calc_PTO(): 2·SRTT (+ WCDelAckT when one segment
    /// is in flight), 1 s before any RTT sample; never later than the RTO.
    pub fn pto(srtt: Option<Time>, one_segment: bool, rto_remaining: Option<Time>) -> Time {
        let mut pto = match srtt {
            Some(s) => 2 * s + if one_segment { WC_DEL_ACK_T } else { 0 },
            None => NS_PER_S,
        };
        if let Some(r) = rto_remaining {
            pto = pto.min(r);
        }
        pto
    }

    /// When Linux's probe timer fires (`timers = "linux"`, `jiffies.rs`):
    /// `tcp_schedule_loss_probe` takes 2·SRTT plus `TCP_TIMEOUT_MIN_US`, or plus
    /// `TCP_RTO_MIN` when one packet is in flight, in whole jiffies
    /// (`TCP_TIMEOUT_INIT` before any RTT sample), never more than the jiffies to
    /// the RTO, and arms it on the timer wheel at `now` (so it fires after `now`).
    pub fn linux_pto_fire(
        now: Time,
        srtt: Option<Time>,
        one_segment: bool,
        rto_remaining: Option<Time>,
    ) -> Time {
        let mut timeout = match srtt {
            Some(s) => to_jiffies_ceil(
                2 * s
                    + if one_segment {
                        WC_DEL_ACK_T
                    } else {
                        TCP_TIMEOUT_MIN
                    },
            ),
            None => to_jiffies_ceil(NS_PER_S),
        };
        if let Some(r) = rto_remaining.filter(|&r| r > 0) {
            timeout = timeout.min(to_jiffies_ceil(r));
        }
        wheel_fire(now, timeout)
    }

    /// RFC 8985 §7.3: a probe was sent; `end_seq` is SND.NXT after it.
    pub fn on_probe(&mut self, end_seq: u64, is_retrans: bool) {
        self.end_seq = Some(end_seq);
        self.is_retrans = is_retrans;
    }

    /// RFC 8985 §7.4.2, TLP_process_ack(): `dsack_end` the end of a DSACK
    /// block the ACK carries, `pure_dupack` an ACK that acknowledges
    /// nothing new and carries no SACK information.
    pub fn on_ack(&mut self, ack: u64, dsack_end: Option<u64>, pure_dupack: bool) -> TlpAck {
        let Some(end) = self.end_seq else {
            return TlpAck::Pending;
        };
        if ack < end {
            return TlpAck::Pending;
        }
        if !self.is_retrans {
            // The probe carried new data and was delivered.
            self.end_seq = None;
            TlpAck::NoLoss
        } else if dsack_end == Some(end) {
            // The retransmission was unnecessary.
            self.end_seq = None;
            TlpAck::NoLoss
        } else if ack > end {
            // The probe repaired a single loss.
            self.end_seq = None;
            TlpAck::Repaired
        } else if pure_dupack {
            // Original and probe both arrived (the probe caused a dupack).
            self.end_seq = None;
            TlpAck::NoLoss
        } else {
            TlpAck::Pending
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;
    const MS: Time = NS_PER_MS;

    /// `n` segments of MSS bytes from sequence 1, segment k sent at k ms.
    fn board(n: u64) -> Scoreboard {
        let mut sb = Scoreboard::default();
        for k in 0..n {
            sb.push(1 + k * MSS, 1 + (k + 1) * MSS, k * MS);
        }
        sb
    }

    fn sack(sb: &mut Scoreboard, rack: &mut Rack, k: u64, now: Time) {
        sb.sack(1 + k * MSS, 1 + (k + 1) * MSS);
        let d = sb.take_delivered();
        rack.on_ack(&d, sb.high_sacked, now, 50 * MS, |_| true);
    }

    /// RFC 8985 §3.4-style example: segments P1..P3 sent, P3 SACKed one RTT
    /// later. Without reordering seen and with fewer than DupThresh SACKed
    /// segments the window is min_RTT/4; P1 and P2 are lost only after
    /// RACK.rtt + reo_wnd from their own send times, and the reordering
    /// timer is armed for exactly that.
    #[test]
    fn reordering_window_delays_marking() {
        let mut sb = board(3);
        let mut rack = Rack::default();
        // P3 (sent at 2 ms) SACKed at 102 ms: RACK.rtt = 100 ms.
        sack(&mut sb, &mut rack, 2, 102 * MS);
        assert_eq!((rack.xmit_ts, rack.rtt), (2 * MS, 100 * MS));
        let reo = rack.reo_wnd(false, 1, 3, 100 * MS, 100 * MS);
        assert_eq!(reo, 25 * MS, "min_RTT/4");
        let d = rack.detect_loss(&mut sb, 102 * MS, reo);
        assert_eq!(d.bytes, 0);
        // P1 (sent at 0) is lost at 0 + 100 + 25 = 125 ms, P2 at 126 ms:
        // the timer waits for the later one (RACK_detect_loss takes the
        // largest remaining time).
        assert_eq!(d.timeout, 24 * MS);
        // An ACK at 125 ms: P1 lost, P2 (sent at 1 ms) still within its window.
        let d = rack.detect_loss(&mut sb, 125 * MS, reo);
        assert_eq!((d.bytes, d.first_seq), (MSS, Some(1)));
        assert_eq!(d.timeout, MS);
        let d = rack.detect_loss(&mut sb, 126 * MS, reo);
        assert_eq!((d.bytes, d.first_seq), (MSS, Some(1 + MSS)));
        assert_eq!(sb.lost_bytes(), 2 * MSS);
        // If P1 had arrived late instead (before the timer), that is
        // reordering: the window stays even with DupThresh SACKs.
        let mut sb = board(5);
        let mut rack = Rack::default();
        for k in 1..5 {
            sack(&mut sb, &mut rack, k, (100 + k) * MS);
        }
        assert!(!rack.reordering_seen);
        assert_eq!(rack.reo_wnd(false, 4, 3, 100 * MS, 100 * MS), 0);
        sb.ack_to(1 + 5 * MSS);
        let d = sb.take_delivered();
        rack.on_ack(&d, 1 + 5 * MSS, 105 * MS, 100 * MS, |_| true);
        assert!(rack.reordering_seen);
        assert_eq!(rack.reo_wnd(true, 4, 3, 100 * MS, 100 * MS), 25 * MS);
    }

    /// RFC 8985 §6.2 step 4: a DSACK widens the window by min_RTT/4 once
    /// per round trip, up to SRTT; 16 recoveries later it is back.
    #[test]
    fn dsack_widens_the_window_once_per_round() {
        let mut rack = Rack {
            reordering_seen: true,
            ..Rack::default()
        };
        rack.on_dsack(100, 200);
        rack.on_dsack(150, 250); // same round: ignored
        assert_eq!(rack.reo_wnd_mult, 2);
        assert_eq!(rack.reo_wnd(false, 0, 3, 40 * MS, 100 * MS), 20 * MS);
        rack.on_dsack(200, 300); // SND.UNA passed the round
        assert_eq!(rack.reo_wnd_mult, 3);
        rack.reo_wnd_mult = 20;
        assert_eq!(rack.reo_wnd(false, 0, 3, 40 * MS, 100 * MS), 100 * MS);
        for _ in 0..15 {
            rack.on_recovery_end();
        }
        assert_eq!(rack.reo_wnd_mult, 20);
        rack.on_recovery_end();
        assert_eq!(rack.reo_wnd_mult, 1);
    }

    /// RFC 8985 §1 / §6: RACK detects a lost retransmission. Segment 0 is
    /// lost and retransmitted at 120 ms; segment 5, sent after it at
    /// 130 ms, is SACKed at 230 ms while the retransmission is still
    /// missing: the retransmission is lost again, without an RTO.
    #[test]
    fn lost_retransmission_is_detected() {
        let mut sb = board(5);
        let mut rack = Rack::default();
        for k in 1..5 {
            sack(&mut sb, &mut rack, k, (100 + k) * MS);
        }
        let reo = rack.reo_wnd(false, 4, 3, 100 * MS, 100 * MS);
        let d = rack.detect_loss(&mut sb, 104 * MS, reo);
        assert_eq!(d.first_seq, Some(1));
        // Recovery retransmits segment 0 at 120 ms and sends segment 5.
        let i = sb.find(1).unwrap();
        sb.on_retransmit(i, 120 * MS);
        sb.push(1 + 5 * MSS, 1 + 6 * MSS, 130 * MS);
        let reo = rack.reo_wnd(true, 4, 3, 100 * MS, 100 * MS);
        assert_eq!(rack.detect_loss(&mut sb, 125 * MS, reo).bytes, 0);
        // Segment 5 SACKed at 230 ms: the retransmission (sent at 120 ms)
        // is older than RACK.xmit_ts and 100 ms have passed.
        sack(&mut sb, &mut rack, 5, 230 * MS);
        assert_eq!(rack.xmit_ts, 130 * MS);
        let d = rack.detect_loss(&mut sb, 230 * MS, reo);
        assert_eq!((d.bytes, d.first_seq, d.lost_retrans), (MSS, Some(1), 1));
        // It is a NextSeg candidate again (lost, not retransmitted).
        assert_eq!(sb.next_lost(), Some(0));
    }

    /// RFC 8985 §6.2 step 2: an ACK of a retransmission that is faster than
    /// min_RTT may belong to the original: it does not advance RACK.
    #[test]
    fn ambiguous_retransmission_ack_is_ignored() {
        let mut sb = board(2);
        let mut rack = Rack::default();
        let i = sb.find(1).unwrap();
        sb.on_retransmit(i, 90 * MS);
        sb.sack(1, 1 + MSS);
        let d = sb.take_delivered();
        rack.on_ack(&d, 1 + MSS, 100 * MS, 50 * MS, |_| true);
        assert_eq!(rack.rtt, 0, "10 ms < min_RTT: ambiguous");
        sb.sack(1 + MSS, 1 + 2 * MSS);
        let d = sb.take_delivered();
        rack.on_ack(&d, 1 + 2 * MSS, 101 * MS, 50 * MS, |_| true);
        assert_eq!((rack.xmit_ts, rack.rtt), (MS, 100 * MS));
    }

    /// A spurious timeout: ten segments sent at 0–9 ms, a 3 s delay spike,
    /// the head retransmitted by the RTO at 1 s; after the spike one ACK
    /// delivers the head's original and the next segment. RACK.rtt is the
    /// higher segment's (Linux's order, ≈ 3 s), not the retransmission's
    /// (2 s, RFC 8985's ascending-xmit order), so the eight originals still
    /// in flight — delayed like the two, not lost — stay unmarked.
    #[test]
    fn spurious_timeout_does_not_mark_the_delayed_originals_lost() {
        let mut sb = board(10);
        let mut rack = Rack::default();
        sb.on_retransmit(0, 1000 * MS);
        let now = 3000 * MS;
        sb.ack_to(1 + 2 * MSS);
        let d = sb.take_delivered();
        rack.on_ack(&d, 1 + 2 * MSS, now, 50 * MS, |_| true);
        assert_eq!(rack.rtt, now - MS, "the highest-sequence segment's RTT");
        assert_eq!(
            rack.xmit_ts,
            1000 * MS,
            "the retransmission is the newest sent"
        );
        let det = rack.detect_loss(&mut sb, now, 0);
        assert_eq!(det.bytes, 0, "{det:?}");
        assert!(
            det.timeout > 0,
            "the others wait for their reordering timer"
        );
        assert_eq!(sb.lost_bytes(), 0);
    }

    /// RFC 8985 §7.2: PTO = 2·SRTT, + WCDelAckT with one segment in
    /// flight, 1 s without an RTT sample, capped by the RTO.
    #[test]
    fn pto() {
        assert_eq!(Tlp::pto(Some(40 * MS), false, None), 80 * MS);
        assert_eq!(Tlp::pto(Some(40 * MS), true, None), 280 * MS);
        assert_eq!(Tlp::pto(None, false, None), NS_PER_S);
        assert_eq!(Tlp::pto(Some(40 * MS), true, Some(250 * MS)), 250 * MS);
    }

    /// RFC 8985 §7.4: the probe's ACK decides whether a loss happened.
    #[test]
    fn tlp_episode_outcomes() {
        // Probe with new data: delivered, no loss.
        let mut t = Tlp::default();
        t.on_probe(11_001, false);
        assert_eq!(t.on_ack(10_001, None, false), TlpAck::Pending);
        assert_eq!(t.on_ack(11_001, None, false), TlpAck::NoLoss);
        assert_eq!(t.end_seq, None);
        // Retransmission of the last segment, which was not lost: the
        // receiver DSACKs the probe.
        t.on_probe(10_001, true);
        assert_eq!(t.on_ack(10_001, Some(10_001), false), TlpAck::NoLoss);
        // Retransmission, the original lost, the probe repairs it and the
        // ACK covers data beyond it (new data sent meanwhile).
        t.on_probe(10_001, true);
        assert_eq!(t.on_ack(10_001, None, false), TlpAck::Pending);
        assert_eq!(t.on_ack(12_001, None, false), TlpAck::Repaired);
        // Original and probe both arrived: a pure duplicate ACK.
        t.on_probe(10_001, true);
        assert_eq!(t.on_ack(10_001, None, true), TlpAck::NoLoss);
    }

    /// RFC 8985 §7.3–§7.4 with RACK: the tail segment and the probe both
    /// lost. The probe (a retransmission of the last segment) is not
    /// delivered, so no ACK ends the episode; the RTO still does.
    #[test]
    fn tlp_probe_lost_leaves_the_episode_open() {
        let mut t = Tlp::default();
        t.on_probe(10_001, true);
        // Only ACKs below the probe arrive.
        assert_eq!(t.on_ack(9_001, None, false), TlpAck::Pending);
        assert_eq!(t.end_seq, Some(10_001));
    }
}
