//! Proportional Rate Reduction (RFC 6937): how much a sender in fast
//! recovery may send on each ACK, so that the flight shrinks smoothly from
//! FlightSize to ssthresh over one round trip instead of in a step.
//!
//! The connection calls [`Prr::start`] when it enters recovery (after the
//! congestion control chose ssthresh), [`Prr::on_ack`] on every ACK during
//! recovery (the entering one included) and [`Prr::on_sent`] for every byte
//! it sends or retransmits during recovery; cwnd is then pipe + sndcnt
//! (as Linux's `tcp_cwnd_reduction`).
//!
//! The RFC works in bytes with `CEIL`; here the proportional share is
//! rounded up to whole segments (as Linux, which counts packets), so that a
//! sender that only sends full-sized segments sends one on every other ACK
//! of a halving, as in RFC 6937 §3.1's example.
//!
//! [`PrrBound::Linux`] is Linux's `tcp_cwnd_reduction` as it is since 5.19
//! ("tcp: PRR uses CRB mode by default and SS mode conditionally"): once
//! pipe ≤ ssthresh it sends what was delivered, and the slow-start bound's
//! extra segment only on an ACK that advanced snd.una and marked nothing
//! newly lost; RecoverFS is the cwnd before the reduction (`prior_cwnd`),
//! and an ACK that delivered nothing leaves cwnd alone.

/// RFC 6937 §3: the two Reduction Bounds used once pipe ≤ ssthresh.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrrBound {
    /// Slow Start Reduction Bound: up to one segment per ACK more than was
    /// delivered (the RFC's recommendation, Linux's behaviour).
    Ssrb,
    /// Conservative Reduction Bound: strictly packet conserving.
    Crb,
    /// Linux's `tcp_cwnd_reduction`: conservative, with the slow-start
    /// bound's extra segment only on an ACK that advanced snd.una and marked
    /// nothing newly lost (`FLAG_SND_UNA_ADVANCED && !newly_lost`).
    Linux,
}

impl PrrBound {
    pub const NAMES: [&'static str; 3] = ["ssrb", "crb", "linux"];
    pub fn parse(s: &str) -> Option<PrrBound> {
        match s {
            "ssrb" => Some(PrrBound::Ssrb),
            "crb" => Some(PrrBound::Crb),
            "linux" => Some(PrrBound::Linux),
            _ => None,
        }
    }
}

/// Which part of RFC 6937 §3 set the last `sndcnt` (the examples' "RB" row).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrrStep {
    /// pipe > ssthresh: the proportional part.
    Proportional,
    /// sndcnt = ssthresh − pipe ("s").
    Ssthresh,
    /// sndcnt = prr_delivered − prr_out (+ SMSS with SSRB) ("b").
    Banked,
    /// sndcnt = DeliveredData + SMSS ("d", SSRB only).
    Delivered,
}

/// PRR state of one recovery episode (RFC 6937 §3).
#[derive(Clone, Copy, Debug)]
pub struct Prr {
    bound: PrrBound,
    /// FlightSize at the start of recovery.
    recover_fs: u64,
    /// Bytes delivered to the receiver during recovery.
    prr_delivered: u64,
    /// Bytes sent during recovery.
    prr_out: u64,
    /// What decided the last `sndcnt`.
    pub last_step: PrrStep,
}

impl Prr {
    /// RFC 6937 §3, at the beginning of recovery: prr_delivered = 0,
    /// prr_out = 0, RecoverFS = snd.nxt − snd.una.
    pub fn start(bound: PrrBound, recover_fs: u64) -> Self {
        Prr {
            bound,
            recover_fs: recover_fs.max(1),
            prr_delivered: 0,
            prr_out: 0,
            last_step: PrrStep::Proportional,
        }
    }

    pub fn prr_delivered(&self) -> u64 {
        self.prr_delivered
    }
    pub fn prr_out(&self) -> u64 {
        self.prr_out
    }

    /// The bound this episode runs.
    pub fn bound(&self) -> PrrBound {
        self.bound
    }

    /// RFC 6937 §3, on every ACK during recovery: `delivered` is
    /// DeliveredData (change in snd.una + signed change in SACKed bytes),
    /// `pipe` the RFC 6675 pipe after the ACK; `grow` whether the ACK
    /// advanced snd.una without marking a segment newly lost (read by
    /// [`PrrBound::Linux`] only). Returns sndcnt in bytes.
    pub fn on_ack(
        &mut self,
        delivered: u64,
        pipe: u64,
        ssthresh: u64,
        mss: u64,
        grow: bool,
    ) -> u64 {
        let mss = mss.max(1);
        // prr_delivered += DeliveredData
        self.prr_delivered += delivered;
        if pipe > ssthresh {
            // Proportional Rate Reduction:
            // sndcnt = CEIL(prr_delivered * ssthresh / RecoverFS) - prr_out
            // (the CEIL taken in whole segments).
            let share = self.prr_delivered as u128 * ssthresh as u128;
            let denom = self.recover_fs as u128 * mss as u128;
            let target = share.div_ceil(denom) as u64 * mss;
            self.last_step = PrrStep::Proportional;
            target.saturating_sub(self.prr_out)
        } else {
            let banked = self.prr_delivered.saturating_sub(self.prr_out);
            let (limit, step) = match self.bound {
                // PRR-CRB: limit = prr_delivered - prr_out
                PrrBound::Crb => (banked, PrrStep::Banked),
                // PRR-SSRB: limit = MAX(prr_delivered - prr_out, DeliveredData) + MSS
                PrrBound::Ssrb => {
                    if banked >= delivered {
                        (banked + mss, PrrStep::Banked)
                    } else {
                        (delivered + mss, PrrStep::Delivered)
                    }
                }
                // tcp_cwnd_reduction: sndcnt = max(prr_delivered - prr_out,
                // newly_acked_sacked); if (FLAG_SND_UNA_ADVANCED &&
                // !newly_lost) sndcnt++.
                PrrBound::Linux => {
                    let extra = if grow { mss } else { 0 };
                    if banked >= delivered {
                        (banked + extra, PrrStep::Banked)
                    } else {
                        (delivered + extra, PrrStep::Delivered)
                    }
                }
            };
            // sndcnt = MIN(ssthresh - pipe, limit)
            let room = ssthresh - pipe;
            if room <= limit {
                self.last_step = PrrStep::Ssthresh;
                room
            } else {
                self.last_step = step;
                limit
            }
        }
    }

    /// RFC 6937 §3, on any data transmission or retransmission:
    /// prr_out += (data sent).
    pub fn on_sent(&mut self, bytes: u64) {
        self.prr_out += bytes;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    /// One scripted recovery as in RFC 6937 §3.1: `n` segments in flight
    /// (plus two sent by Limited Transmit on the first two duplicate ACKs),
    /// the segments in `lost` lost, the others answered by one SACKing ACK
    /// each; recovery starts on the third duplicate ACK. Per ACK of the
    /// recovery: (segment the ACK answers, pipe before sending, segments
    /// sent, the bound that decided).
    fn walk(
        n: u64,
        lost: &[u64],
        ssthresh_segs: u64,
        bound: PrrBound,
    ) -> Vec<(u64, u64, u64, PrrStep)> {
        let mut outstanding = n; // segments sent and not cumulatively acked
        let mut sacked = 0u64;
        let mut dupacks = 0;
        let mut prr: Option<Prr> = None;
        let mut retrans_out = 0u64; // retransmissions in flight
        let mut rows = Vec::new();
        for seg in 0..n {
            if lost.contains(&seg) {
                continue;
            }
            sacked += 1;
            dupacks += 1;
            if prr.is_none() && dupacks < 3 {
                // RFC 3042 Limited Transmit: one new segment per dupack.
                outstanding += 1;
                continue;
            }
            // RFC 6675 IsLost: every lost segment has ≥ 3 SACKed segments above
            // once recovery starts in these examples.
            let lost_now = lost.len() as u64;
            let p = prr.get_or_insert_with(|| Prr::start(bound, n * MSS));
            let pipe = outstanding - sacked - lost_now + retrans_out;
            let sndcnt = p.on_ack(MSS, pipe * MSS, ssthresh_segs * MSS, MSS, false);
            let sent = sndcnt / MSS;
            p.on_sent(sent * MSS);
            // Retransmissions first (lost segments), then new data.
            let rtx = sent.min(lost_now - retrans_out);
            retrans_out += rtx;
            outstanding += sent - rtx;
            rows.push((seg, pipe, sent, p.last_step));
        }
        rows
    }

    /// RFC 6937 §3.1, first example: a single loss in a flight of 20, Reno
    /// (ssthresh = 10). PRR spreads the reduction over the round trip: one
    /// segment on every other ACK, the first of them the fast
    /// retransmission, and the flight ends at ssthresh. (The RFC's own table
    /// for this example is one ACK off from the algorithm it prints from ACK
    /// 5 on — its pipe row stays at 18 for three ACKs — so the walk checks
    /// the algorithm's properties rather than that row.)
    #[test]
    fn rfc6937_single_loss_sends_every_other_ack() {
        for bound in [PrrBound::Ssrb, PrrBound::Crb] {
            let rows = walk(20, &[0], 10, bound);
            // Recovery starts at the ACK of segment 3 and sees 17 ACKs.
            assert_eq!(rows.len(), 17);
            assert_eq!(rows[0].0, 3);
            let sent_on: Vec<u64> = rows.iter().filter(|r| r.2 > 0).map(|r| r.0).collect();
            assert_eq!(sent_on, vec![3, 5, 7, 9, 11, 13, 15, 17], "{bound:?}");
            assert!(rows.iter().all(|r| r.2 <= 1), "never a burst");
            assert!(rows
                .iter()
                .all(|r| r.3 == PrrStep::Proportional || r.1 <= 10));
            // Flight after the last ACK of the round: ssthresh exactly.
            let (_, pipe, sent, _) = *rows.last().unwrap();
            assert_eq!(pipe + sent, 10);
        }
    }

    /// RFC 6937 §3.1, second example: segments 0–14 lost, only 5 ACKs return
    /// (segments 15–19); recovery starts on the third (segment 17) with
    /// pipe = 4. PRR-CRB sends one retransmission per ACK (pipe 4, 4, 4,
    /// bound "b"); PRR-SSRB two (pipe 4, 5, 6; bounds "bd", "d", "d").
    #[test]
    fn rfc6937_burst_loss_crb_and_ssrb() {
        let lost: Vec<u64> = (0..15).collect();
        let crb = walk(20, &lost, 10, PrrBound::Crb);
        assert_eq!(
            crb.iter().map(|r| (r.0, r.1, r.2)).collect::<Vec<_>>(),
            vec![(17, 4, 1), (18, 4, 1), (19, 4, 1)]
        );
        assert!(crb.iter().all(|r| r.3 == PrrStep::Banked));
        let ssrb = walk(20, &lost, 10, PrrBound::Ssrb);
        assert_eq!(
            ssrb.iter().map(|r| (r.0, r.1, r.2)).collect::<Vec<_>>(),
            vec![(17, 4, 2), (18, 5, 2), (19, 6, 2)]
        );
        // "bd" on the first ACK (banked = delivered), "d" after.
        assert_eq!(ssrb[1].3, PrrStep::Delivered);
        assert_eq!(ssrb[2].3, PrrStep::Delivered);
    }

    /// Linux's `tcp_cwnd_reduction` on the RFC's burst-loss example: ACKs
    /// that only SACK (snd.una stays) send what they deliver, as PRR-CRB
    /// (pipe 4, 4, 4); the slow-start bound's extra segment comes only with
    /// an ACK that advanced snd.una and marked nothing newly lost.
    #[test]
    fn linux_bound_adds_a_segment_only_when_snd_una_advanced_without_loss() {
        let lost: Vec<u64> = (0..15).collect();
        let linux = walk(20, &lost, 10, PrrBound::Linux);
        assert_eq!(
            linux.iter().map(|r| (r.0, r.1, r.2)).collect::<Vec<_>>(),
            vec![(17, 4, 1), (18, 4, 1), (19, 4, 1)]
        );
        let mut p = Prr::start(PrrBound::Linux, 20 * MSS);
        // pipe 4 of ssthresh 10, one segment delivered, snd.una advanced.
        assert_eq!(p.on_ack(MSS, 4 * MSS, 10 * MSS, MSS, true), 2 * MSS);
        p.on_sent(2 * MSS);
        // The same without the advance (or with a new loss): one.
        assert_eq!(p.on_ack(MSS, 5 * MSS, 10 * MSS, MSS, false), MSS);
        p.on_sent(MSS);
        // Never past ssthresh: pipe 9 leaves room for one.
        assert_eq!(p.on_ack(2 * MSS, 9 * MSS, 10 * MSS, MSS, true), MSS);
        assert_eq!(p.last_step, PrrStep::Ssthresh);
    }

    /// RFC 6937 §4: with a small loss PRR converges to exactly ssthresh;
    /// CUBIC's β = 0.7 (ssthresh 14 of 20) sends on 7 of every 10 ACKs.
    #[test]
    fn proportional_share_follows_ssthresh_over_recover_fs() {
        let mut p = Prr::start(PrrBound::Ssrb, 20 * MSS);
        let mut sent = 0;
        for k in 1..=10u64 {
            // pipe stays above ssthresh for these ACKs
            let s = p.on_ack(MSS, 19 * MSS, 14 * MSS, MSS, false);
            p.on_sent(s);
            sent += s;
            assert_eq!(sent, (k * 14).div_ceil(20) * MSS);
        }
        assert_eq!(sent, 7 * MSS);
    }

    #[test]
    fn application_stall_is_banked_and_reduction_bound_catches_up() {
        // RFC 6937 §4: sending opportunities missed while the application
        // stalled are banked (prr_delivered − prr_out) and spent later, at
        // most up to ssthresh − pipe.
        let mut p = Prr::start(PrrBound::Crb, 10 * MSS);
        for _ in 0..4 {
            p.on_ack(MSS, 9 * MSS, 5 * MSS, MSS, false); // nothing sent
        }
        // pipe fell to 2 segments: CRB may send what was delivered (5), but
        // only up to ssthresh − pipe = 3.
        let s = p.on_ack(MSS, 2 * MSS, 5 * MSS, MSS, false);
        assert_eq!(s, 3 * MSS);
        assert_eq!(p.last_step, PrrStep::Ssthresh);
    }
}
