//! FAST TCP (Jin, Wei, Low, INFOCOM 2004; thesis eq. (2.7); docs/algorithms.md §5.3).
//!
//! Once per RTT: `w ← min(2w, (1−γ)·w + γ·(baseRTT/avgRTT·w + α))`, with
//! baseRTT the smallest RTT seen and avgRTT a per-ACK EWMA of the RTT with
//! weight min(3/w, 1/4). The equilibrium keeps `alpha` of this flow's
//! packets queued at the bottleneck. An increase is spread over the next
//! round's ACKs (as ns-2's FAST module does) rather than sent as one burst;
//! a decrease applies at once. Loss: Reno's halving (thesis §2.5).
//!
//! Parameters: `alpha` (packets, default 200: the ns-2 module's value,
//! docs/throughput-bound-notes.md §6.18), `gamma` in (0, 1] (default 0.5).

use super::{CcEntry, Param};
use super::{half_flight, AckInfo, CcParams, CcState, CongestionControl};
use crate::Time;

#[derive(Debug, Clone)]
pub struct Fast {
    alpha: f64,
    gamma: f64,
    base_rtt: Time,
    avg_rtt: f64,
    round_end: u64,
    round_start: Time,
    /// Window to reach by the end of this round (packets) and the
    /// per-acked-packet step toward it.
    target: f64,
    step: f64,
    /// cwnd in packets as a float (sub-packet increments accumulate here).
    w: f64,
}

impl Fast {
    pub fn new(p: &CcParams) -> Fast {
        Fast {
            alpha: p.get("alpha", 200.0),
            gamma: p.get("gamma", 0.5),
            base_rtt: Time::MAX,
            avg_rtt: 0.0,
            round_end: 0,
            round_start: 0,
            target: 0.0,
            step: 0.0,
            w: 0.0,
        }
    }

    /// Thesis eq. (2.7).
    pub fn update(&self, w: f64) -> f64 {
        let ratio = self.base_rtt as f64 / self.avg_rtt;
        (2.0 * w).min((1.0 - self.gamma) * w + self.gamma * (ratio * w + self.alpha))
    }
}

impl CongestionControl for Fast {
    fn name(&self) -> &'static str {
        "fast"
    }

    fn on_rtt_sample(&mut self, rtt: Time, _now: Time) {
        self.base_rtt = self.base_rtt.min(rtt);
        if self.avg_rtt == 0.0 {
            self.avg_rtt = rtt as f64;
        } else {
            let wt = (3.0 / self.w.max(1.0)).min(0.25);
            self.avg_rtt += wt * (rtt as f64 - self.avg_rtt);
        }
    }

    fn on_ack(&mut self, st: &mut CcState, ack: &AckInfo) {
        let mss = st.mss as f64;
        let cur = st.cwnd as f64 / mss;
        if (self.w - cur).abs() >= 1.0 {
            self.w = cur; // the connection changed cwnd (recovery, RTO)
        }
        // Once per RTT: when SND.UNA passes the SND.NXT of the round's start,
        // or after two RTTs at most (after an RTO SND.NXT is far ahead).
        let max_round = 2 * ack.srtt.max(if self.base_rtt == Time::MAX {
            0
        } else {
            self.base_rtt
        });
        let timed_out = max_round > 0 && ack.now >= self.round_start + max_round;
        if (ack.snd_una > self.round_end || timed_out) && self.avg_rtt > 0.0 {
            self.round_end = ack.snd_nxt;
            self.round_start = ack.now;
            let t = self.update(self.w).max(2.0);
            if t < self.w {
                self.w = t;
                self.step = 0.0;
            } else {
                self.step = (t - self.w) / self.w.max(1.0);
            }
            self.target = t;
        }
        if !ack.app_limited && self.step > 0.0 && self.w < self.target {
            self.w = (self.w + self.step * ack.acked as f64 / mss).min(self.target);
        }
        st.cwnd = ((self.w * mss) as u64).clamp(2 * st.mss, st.max_cwnd);
        st.ssthresh = st.ssthresh.min(st.cwnd); // no separate slow start
    }

    fn ssthresh_on_loss(&mut self, st: &CcState, flight: u64, _now: Time) -> u64 {
        self.step = 0.0;
        half_flight(flight, st.mss)
    }
}

/// `cc = "fast"` (FAST TCP).
pub(super) const FAST: CcEntry = CcEntry {
    params: &[
        Param::new("alpha", 200.0, "must be > 0 packets").gt(0.0),
        Param::new("gamma", 0.5, "must be in (0, 1]").gt(0.0).le(1.0),
    ],
    ..CcEntry::new("fast", |p, _| Box::new(Fast::new(p)))
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equilibrium_queues_alpha_packets() {
        let mut p = CcParams::default();
        p.0.push(("alpha".into(), 20.0));
        let mut f = Fast::new(&p);
        f.base_rtt = 100;
        // w = 120 with 20 packets queued: RTT = 100·120/100 → fixed point
        f.avg_rtt = 120.0;
        assert!((f.update(120.0) - 120.0).abs() < 1e-9);
        // below the fixed point it grows, capped at 2w
        f.avg_rtt = 100.0;
        assert!((f.update(10.0) - 20.0).abs() < 1e-9);
    }
}
