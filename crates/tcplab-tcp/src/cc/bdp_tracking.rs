//! BDP-tracking window control (Ito's thesis ch. 4, §4.3–§4.4;
//! docs/throughput-bound-notes.md §2.9–§2.10): drive cwnd to the
//! bandwidth-delay product B·RTT_min, with B measured by the receiving host
//! from the transit time of a packet train (`on_transit_feedback`).
//!
//! Once per round (an RTT, ended when SND.UNA passes the SND.NXT recorded at
//! its start), with W the window in packets and a = B·RTT_min/MSS:
//! - **Acquisition** (eq. 4.9, W ≤ a): W ← W + k·(a − W) (eq. 4.12), so the
//!   gap shrinks by (1 − k) per RTT (eq. 4.13).
//! - **Tracking** (W > a, or congestion seen): +1 per RTT when the RTT is
//!   not inflated (case T1); when it is (T3), the divisive decrease of
//!   eq. (4.17): ΔW/W = −(RTT̄_cong − RTT_min)/(RTT̄_cong − (1 − 1/μ)·RTT_min).
//! - Loss (3 dup-ACKs): halve in Acquisition; −1 packet in Tracking, or the
//!   eq. (4.17) decrease if this round was congested. RTO: W = P_init and
//!   back to Acquisition (re-acquiring from the loss window).
//!
//! Assumptions where the thesis is silent or inconsistent (docs/throughput-bound-notes.md §6):
//! - §6.1: W in packets, B in payload bytes/s inside the controller.
//! - §6.11: B = (P−1)·size/(t_last − t_first) over the receiver's train
//!   (the host computes it); the controller keeps the largest estimate
//!   since the connection began (`b_rounds` = 0, the default; or of the
//!   last `b_rounds` rounds), because a train that the sender's ACK clock
//!   spaced out measures the sending rate, not the path: only the initial
//!   window's burst (the thesis's probing session 1) and later line-rate
//!   bursts see the bottleneck.
//!   Until the first feedback arrives W stays at the initial window.
//! - §6.13/§6.14: a round is congested when the fraction ε of its RTT
//!   samples above RTT_min + tol exceeds `eps` (default 0.99, i.e. every
//!   sample: a standing queue; §6.14 suggests ½, but then the queueing a
//!   flow's own initial 10-packet burst causes at the bottleneck already
//!   reads as congestion and ends Acquisition in the first round),
//!   tol = max(tol_frac·RTT_min,
//!   tol_pkts·MSS/B). §6.13 suggests tol_frac = 0.05; the default here is
//!   0.002 with tol_pkts = 4, because §4.5's 40-packet router queue holds at
//!   most 0.7 % of a 24 ms RTT at 1 Gbps and a 5 % tolerance never fires.
//!   ε weights are decisions, not random draws.
//! - §6.13: Acquisition is left by the window test of eq. (4.9) (W ≥ a) or
//!   by a loss (halving, then Tracking), not by RTT inflation: the growth of
//!   Acquisition itself queues packets at the bottleneck every round.
//! - §6.13: the modes run A → T2/T3 → T1 (Fig. 4.19) and never return to A
//!   except after an RTO. In Tracking, a round with no RTT sample above
//!   the tolerance (no queue at all) takes T2's "mode-A increase" toward
//!   min(a, refill), where refill is the window after the last eq. (4.17)
//!   decrease or Tracking loss (∞ before any): after Acquisition ends in a
//!   loss the window refills fast, but once a decrease has located the
//!   available bandwidth (below B when there is cross traffic) it is not
//!   overshot again and μ's stronger decrease is not undone. Otherwise
//!   Tracking is T1: +1 per RTT.
//! - §6.15: loss responses as listed above.
//! - §6.16: updates once per RTT, k = 0.5; μ = max(1, round(B/B′)) with
//!   B′ = W·MSS/RTT̄ (eq. 4.16), unless `mu` fixes it; RTT_cong in the
//!   denominator of (4.17) is RTT̄_cong.
//! - Increases are spread over the next round's ACKs; decreases are
//!   immediate (avoids line-rate bursts of hundreds of packets). An
//!   Acquisition step is at most W (cwnd at most doubles per RTT, like slow
//!   start and FAST's min(2w, ·)); eq. (4.12) alone would jump from 10 to
//!   thousands of packets in one RTT on a gigabit path.

use super::{CcEntry, Param};
use super::{AckInfo, CcParams, CcState, CongestionControl, TransitFeedback};
use crate::Time;

/// Largest `b_rounds` (`check_params` enforces it).
pub(crate) const MAX_ROUNDS: usize = 64;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Acquisition,
    Tracking,
}

#[derive(Debug, Clone)]
pub struct BdpTracking {
    k: f64,
    p_init: f64,
    mu_fixed: f64,
    tol_frac: f64,
    tol_pkts: f64,
    eps_min: f64,
    b_rounds: usize,
    /// 1: a loss in Acquisition caps Tracking's mode-A increase at the window
    /// that lost (tcplab's default); 0: no cap, T2 refills toward a.
    acq_loss_cap: bool,
    pub mode: Mode,
    /// Per-round maxima of the feedback rate (bytes/s), a ring.
    b_ring: [f64; MAX_ROUNDS],
    b_idx: usize,
    b_round: f64,
    /// Largest rate ever reported (used when `b_rounds` = 0).
    b_max: f64,
    rtt_min: Time,
    round_end: u64,
    round_start: Time,
    n: u32,
    n_cong: u32,
    sum_all: f64,
    sum_cong: f64,
    /// This round's RTT inflation, kept for a loss response.
    last_congested: Option<f64>,
    w: f64,
    target: f64,
    step: f64,
    /// The μ of the last decrease (for the time series / tests).
    pub last_mu: f64,
    /// Congestion tolerance (ns), refreshed on every ACK.
    tol_cache: f64,
    /// Cap on Tracking's mode-A increase (case T2): the window after the
    /// last decrease or Tracking loss (∞ before any), packets.
    pub refill: f64,
}

impl BdpTracking {
    pub fn new(p: &CcParams) -> BdpTracking {
        BdpTracking {
            k: p.get("k", 0.5),
            p_init: p.get("p_init", 10.0),
            mu_fixed: p.get("mu", 0.0),
            tol_frac: p.get("tol_frac", 0.002),
            tol_pkts: p.get("tol_pkts", 4.0),
            eps_min: p.get("eps", 0.99),
            b_rounds: p.get("b_rounds", 0.0) as usize,
            acq_loss_cap: p.get("acq_loss_cap", 1.0) != 0.0,
            mode: Mode::Acquisition,
            b_ring: [0.0; MAX_ROUNDS],
            b_idx: 0,
            b_round: 0.0,
            b_max: 0.0,
            rtt_min: Time::MAX,
            round_end: 0,
            round_start: 0,
            n: 0,
            n_cong: 0,
            sum_all: 0.0,
            sum_cong: 0.0,
            last_congested: None,
            w: 0.0,
            target: 0.0,
            step: 0.0,
            last_mu: 1.0,
            tol_cache: 0.0,
            refill: f64::INFINITY,
        }
    }

    /// Estimated bottleneck rate B, payload bytes/s (0 = none yet).
    pub fn b_est(&self) -> f64 {
        if self.b_rounds == 0 {
            return self.b_max.max(self.b_round);
        }
        self.b_ring[..self.b_rounds]
            .iter()
            .fold(self.b_round, |m, &x| m.max(x))
    }

    /// Thesis eq. (4.17): W'/W for a mean congested RTT `rtt_cong`.
    pub fn decrease_factor(rtt_cong: f64, rtt_min: f64, mu: f64) -> f64 {
        let f = 1.0 - (rtt_cong - rtt_min) / (rtt_cong - (1.0 - 1.0 / mu) * rtt_min);
        f.clamp(0.0, 1.0)
    }

    fn tol(&self, mss: f64) -> f64 {
        let b = self.b_est();
        let ser = if b > 0.0 { mss / b * 1e9 } else { 0.0 };
        (self.tol_frac * self.rtt_min as f64).max(self.tol_pkts * ser)
    }

    fn mu(&self, mss: f64, rtt_mean: f64) -> f64 {
        if self.mu_fixed >= 1.0 {
            return self.mu_fixed;
        }
        // Thesis eq. (4.16): μ = B/B′, B′ = W·MSS/RTT.
        let b_prime = self.w * mss / (rtt_mean * 1e-9);
        (self.b_est() / b_prime).round().max(1.0)
    }

    fn end_round(&mut self, mss: f64) {
        let b = self.b_est();
        self.b_max = b;
        if self.b_rounds > 0 {
            self.b_ring[self.b_idx] = self.b_round;
            self.b_idx = (self.b_idx + 1) % self.b_rounds;
        }
        self.b_round = 0.0;
        self.step = 0.0;
        self.last_congested = None;
        if b <= 0.0 || self.rtt_min == Time::MAX {
            self.reset_round();
            return; // no bandwidth or RTT yet: hold the initial window
        }
        let rtt_min = self.rtt_min as f64;
        let a = b * rtt_min * 1e-9 / mss; // target window, packets (eq. 4.10)
                                          // A round without RTT samples (Karn's rule while retransmitted data
                                          // is acknowledged) shows no congestion.
        let eps = if self.n > 0 {
            self.n_cong as f64 / self.n as f64
        } else {
            0.0
        };
        if self.mode == Mode::Tracking && eps > self.eps_min {
            // T3: divisive decrease (eq. 4.17).
            let rtt_cong = self.sum_cong / self.n_cong as f64;
            let mu = self.mu(mss, self.sum_all / self.n as f64);
            self.last_mu = mu;
            self.w = (self.w * Self::decrease_factor(rtt_cong, rtt_min, mu)).max(2.0);
            self.mode = Mode::Tracking;
            self.last_congested = Some(rtt_cong);
            self.refill = self.w;
        } else if self.mode == Mode::Tracking
            && self.n_cong == 0
            && self.w < a.min(self.refill) - 1.0
        {
            // T2: no queueing at all this round: the mode-A increase
            // (eq. 4.12) toward min(a, refill).
            let goal = a.min(self.refill);
            let inc = (self.k * (goal - self.w)).max(1.0).min(self.w);
            self.set_target(self.w + inc);
        } else if self.mode == Mode::Acquisition && self.w < a {
            // Eq. (4.12): W' = (1 − k)·W + k·a.
            // Capped at doubling per RTT (as slow start and FAST's min(2w, ·)).
            let inc = (self.k * (a - self.w)).max(1.0).min(self.w);
            self.set_target(self.w + inc);
        } else {
            // Eq. (4.9): W > a → Tracking; T1: +1 per RTT.
            self.mode = Mode::Tracking;
            self.set_target(self.w + 1.0);
        }
        self.reset_round();
    }

    fn set_target(&mut self, t: f64) {
        self.target = t;
        self.step = (t - self.w) / self.w.max(1.0);
    }

    fn reset_round(&mut self) {
        self.n = 0;
        self.n_cong = 0;
        self.sum_all = 0.0;
        self.sum_cong = 0.0;
    }
}

impl CongestionControl for BdpTracking {
    fn name(&self) -> &'static str {
        "bdp-tracking"
    }

    fn on_transit_feedback(&mut self, _st: &mut CcState, fb: &TransitFeedback, _now: Time) {
        if let Some(r) = fb.rate_bytes_per_s() {
            self.b_round = self.b_round.max(r);
        }
    }

    fn on_rtt_sample(&mut self, rtt: Time, _now: Time) {
        self.rtt_min = self.rtt_min.min(rtt);
        self.n += 1;
        self.sum_all += rtt as f64;
        if (rtt as f64) > self.rtt_min as f64 + self.tol_cache {
            self.n_cong += 1;
            self.sum_cong += rtt as f64;
        }
    }

    fn on_ack(&mut self, st: &mut CcState, ack: &AckInfo) {
        let mss = st.mss as f64;
        let cur = st.cwnd as f64 / mss;
        if (self.w - cur).abs() >= 1.0 {
            self.w = cur; // the connection changed cwnd (recovery exit, RTO)
            self.step = 0.0;
        }
        self.tol_cache = self.tol(mss);
        // A round ends when SND.UNA passes the SND.NXT of its start, or after
        // two RTTs at most: after an RTO, SND.NXT is far ahead of what the
        // small post-timeout window acknowledges per RTT.
        let max_round = 2 * ack.srtt.max(if self.rtt_min == Time::MAX {
            0
        } else {
            self.rtt_min
        });
        if ack.snd_una > self.round_end
            || (max_round > 0 && ack.now >= self.round_start + max_round)
        {
            self.round_end = ack.snd_nxt;
            self.round_start = ack.now;
            self.end_round(mss);
        }
        if !ack.app_limited && self.step > 0.0 && self.w < self.target {
            self.w = (self.w + self.step * ack.acked as f64 / mss).min(self.target);
        }
        st.cwnd = ((self.w * mss) as u64).clamp(2 * st.mss, st.max_cwnd);
        st.ssthresh = st.cwnd; // no separate slow start
    }

    fn ssthresh_on_loss(&mut self, st: &CcState, _flight: u64, _now: Time) -> u64 {
        let mss = st.mss as f64;
        let w = st.cwnd as f64 / mss;
        self.step = 0.0;
        let nw = match (self.mode, self.last_congested) {
            (Mode::Acquisition, _) => {
                self.mode = Mode::Tracking; // A → T2 (Fig. 4.19)
                if self.acq_loss_cap {
                    self.refill = w; // the window that overflowed caps the refill
                }
                w / 2.0
            }
            (Mode::Tracking, Some(rc)) => {
                let mu = self.mu(mss, rc);
                w * Self::decrease_factor(rc, self.rtt_min as f64, mu)
            }
            (Mode::Tracking, None) => w - 1.0,
        };
        let nw = nw.max(2.0);
        if self.mode == Mode::Tracking && self.refill < w {
            self.refill = self.refill.min(nw); // a loss in Tracking
        }
        (nw * mss) as u64
    }

    fn on_rto(&mut self, st: &mut CcState, _flight: u64, first: bool, _now: Time) {
        if first {
            // Notes §6.15: back to probing (Acquisition).
            st.ssthresh = (self.p_init * st.mss as f64) as u64;
            self.mode = Mode::Acquisition;
            self.step = 0.0;
            self.reset_round();
        }
    }
}

/// `cc = "bdp-tracking"` (Ito's thesis ch. 4).
pub(super) const BDP_TRACKING: CcEntry = CcEntry {
    params: &[
        Param::new("k", 0.5, "must be in (0, 1)").gt(0.0).lt(1.0),
        Param::new("p_init", 10.0, "must be an integer ≥ 2").ge(2.0).integer(),
        Param::new("mu", 0.0, "must be 0 (estimate) or ≥ 1").ge(1.0).or_zero(),
        Param::new("tol_frac", 0.002, "must be in [0, 1)").ge(0.0).lt(1.0),
        Param::new("tol_pkts", 4.0, "must be ≥ 0").ge(0.0),
        Param::new("eps", 0.99, "must be in [0, 1)").ge(0.0).lt(1.0),
        // 0 = the largest rate since the start (the default); at most the ring's size
        Param::new(
            "b_rounds",
            0.0,
            "must be an integer in [0, 64] (0 = since the start)",
        )
        .ge(0.0)
        .le(MAX_ROUNDS as f64)
        .integer(),
        // 1 = a loss in Acquisition caps Tracking's refill at the window that
        // lost (tcplab's rule, the default); 0 = the thesis's T2 refill toward a
        Param::new(
            "acq_loss_cap",
            1.0,
            "must be 0 (refill toward a) or 1 (cap at the loss window)",
        )
        .ge(0.0)
        .le(1.0)
        .integer(),
    ],
    ..CcEntry::new("bdp-tracking", |p, _| Box::new(BdpTracking::new(p)))
};

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;
    const RTT: Time = 10_000_000;

    fn st(w: u64) -> CcState {
        CcState {
            cwnd: w * MSS,
            ssthresh: w * MSS,
            mss: MSS,
            max_cwnd: u64::MAX,
            ca_at_ssthresh: false,
        }
    }

    /// One round: `acks` ACKs of one packet each with RTT `rtt`, feedback of
    /// rate `b` bytes/s, then the ACK that ends it. Returns W in packets.
    fn round(c: &mut BdpTracking, s: &mut CcState, rtt: Time, b: f64) -> f64 {
        let fb = TransitFeedback {
            pkts: 10,
            bytes: (b * 1e-3) as u32 * 9,
            span: 9_000_000,
        };
        c.on_transit_feedback(s, &fb, 0);
        let acks = (s.cwnd / MSS) as usize;
        let start = c.round_end;
        for i in 0..acks {
            c.on_rtt_sample(rtt, 0);
            let a = AckInfo {
                acked: MSS,
                snd_una: start.min(start.saturating_sub(acks as u64) + i as u64),
                snd_nxt: start + 10_000,
                ..Default::default()
            };
            c.on_ack(s, &a);
        }
        let a = AckInfo {
            acked: MSS,
            snd_una: start + 1,
            snd_nxt: start + 10_000,
            ..Default::default()
        };
        c.on_ack(s, &a);
        c.w
    }

    #[test]
    fn acquisition_closes_the_gap_by_one_minus_k_per_round() {
        // B = 10 MB/s, RTT_min = 10 ms, MSS 1000 → a = 100 packets (R14)
        // (from W = 40 so that no step hits the doubling cap)
        let mut c = BdpTracking::new(&CcParams::default());
        let mut s = st(40);
        round(&mut c, &mut s, RTT, 1e7); // learns B and RTT_min
        let mut gap = 100.0 - c.w;
        for _ in 0..4 {
            let w = round(&mut c, &mut s, RTT, 1e7);
            let g = 100.0 - w;
            assert!((g / gap - 0.5).abs() < 0.03, "gap {gap} -> {g}");
            gap = g;
        }
        assert_eq!(c.mode, Mode::Acquisition);
        // then Tracking: +1 per round, no standing oscillation
        for _ in 0..8 {
            round(&mut c, &mut s, RTT, 1e7);
        }
        assert_eq!(c.mode, Mode::Tracking);
        assert!(c.w > 99.0 && c.w < 110.0, "{}", c.w);
    }

    #[test]
    fn congestion_applies_eq_4_17() {
        let mut p = CcParams::default();
        p.0.push(("mu".into(), 2.0));
        let mut c = BdpTracking::new(&p);
        let mut s = st(10);
        round(&mut c, &mut s, RTT, 1e7);
        for _ in 0..10 {
            round(&mut c, &mut s, RTT, 1e7);
        }
        let w = c.w;
        // every sample 20 % above RTT_min: W' = W·(1 − 0.2/0.7) (R15)
        round(&mut c, &mut s, RTT * 6 / 5, 1e7);
        // (the previous round had grown W by its T1 step of +1)
        assert!((c.w / (w + 1.0) - 0.714).abs() < 0.002, "{} {}", c.w, w);
        assert_eq!(c.mode, Mode::Tracking);
        // the doubling cap: from W = 10 toward a = 100 the first step is +10
        let mut c = BdpTracking::new(&CcParams::default());
        let mut s = st(10);
        round(&mut c, &mut s, RTT, 1e7);
        round(&mut c, &mut s, RTT, 1e7);
        // (W reached 20, the next step is again +W = +20: the round-ending
        // ACK already added its share, one packet)
        assert!((c.w - 21.0).abs() < 0.01, "{}", c.w);
        assert!((BdpTracking::decrease_factor(1.2, 1.0, 1.0) - 1.0 / 1.2).abs() < 1e-12);
    }

    #[test]
    fn rounds_without_rtt_samples_still_grow() {
        // After an RTO every ACK covers retransmitted data (Karn: no samples);
        // the window must still re-acquire.
        let mut c = BdpTracking::new(&CcParams::default());
        let mut s = st(40);
        round(&mut c, &mut s, RTT, 1e7);
        c.on_rto(&mut s, 0, true, 0);
        s.cwnd = MSS;
        let mut w = 1.0;
        for _ in 0..4 {
            let start = c.round_end;
            for i in 0..(s.cwnd / MSS) {
                let a = AckInfo {
                    acked: MSS,
                    snd_una: start.saturating_sub(10) + i,
                    snd_nxt: start + 10_000,
                    ..Default::default()
                };
                c.on_ack(&mut s, &a);
            }
            let a = AckInfo {
                acked: MSS,
                snd_una: start + 1,
                snd_nxt: start + 10_000,
                ..Default::default()
            };
            c.on_ack(&mut s, &a);
            assert!(c.w > w, "{} after {}", c.w, w);
            w = c.w;
        }
    }

    #[test]
    fn loss_halves_in_acquisition_and_steps_in_tracking() {
        let mut c = BdpTracking::new(&CcParams::default());
        let s = st(40);
        assert_eq!(c.ssthresh_on_loss(&s, 0, 0), 20 * MSS);
        c.mode = Mode::Tracking;
        assert_eq!(c.ssthresh_on_loss(&s, 0, 0), 39 * MSS);
    }

    #[test]
    fn acq_loss_cap_decides_whether_the_lost_window_caps_the_refill() {
        let s = st(40);
        let mut capped = BdpTracking::new(&CcParams::default());
        capped.ssthresh_on_loss(&s, 0, 0);
        assert_eq!(capped.refill, 40.0);
        let p = CcParams(vec![("acq_loss_cap".to_string(), 0.0)]);
        let mut thesis = BdpTracking::new(&p);
        assert_eq!(thesis.ssthresh_on_loss(&s, 0, 0), 20 * MSS);
        assert_eq!(thesis.mode, Mode::Tracking);
        assert!(thesis.refill.is_infinite());
    }
}
