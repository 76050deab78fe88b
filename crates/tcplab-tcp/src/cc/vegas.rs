//! TCP Vegas (Brakmo & Peterson, IEEE JSAC 13(8), 1995), in the form of
//! Linux `tcp_vegas.c` (docs/algorithms.md §5.1): once per RTT compare the
//! expected and actual rates through `diff = cwnd·(rtt − baseRTT)/baseRTT`,
//! the number of this flow's packets queued in the path.
//!
//! Parameters (packets): `alpha`, `beta`, `gamma`; defaults are Linux's
//! 2/4/1 (the 1995 paper and ns-2 use 1/3/1). Loss handling is Reno's.

use super::{CcEntry, Param};
use super::{half_flight, AckInfo, CcParams, CcState, CongestionControl};
use crate::Time;

#[derive(Debug, Clone)]
pub struct Vegas {
    alpha: f64,
    beta: f64,
    gamma: f64,
    /// Smallest RTT ever seen (propagation estimate).
    base_rtt: Time,
    /// Smallest RTT in the current round.
    min_rtt: Time,
    cnt_rtt: u32,
    /// The round ends when SND.UNA passes this (Linux `beg_snd_nxt`).
    beg_snd_nxt: u64,
    /// Reno byte counter used when Vegas falls back to Reno growth.
    bytes_acked: u64,
}

impl Vegas {
    pub fn new(p: &CcParams) -> Vegas {
        Vegas {
            alpha: p.get("alpha", 2.0),
            beta: p.get("beta", 4.0),
            gamma: p.get("gamma", 1.0),
            base_rtt: Time::MAX,
            min_rtt: Time::MAX,
            cnt_rtt: 0,
            beg_snd_nxt: 0,
            bytes_acked: 0,
        }
    }

    fn reno(&mut self, st: &mut CcState, acked: u64) {
        if st.in_slow_start() {
            st.cwnd += acked.min(st.mss);
        } else {
            self.bytes_acked += acked;
            if self.bytes_acked >= st.cwnd {
                self.bytes_acked -= st.cwnd;
                st.cwnd += st.mss;
            }
        }
    }
}

impl CongestionControl for Vegas {
    fn name(&self) -> &'static str {
        "vegas"
    }

    fn on_rtt_sample(&mut self, rtt: Time, _now: Time) {
        // tcp_vegas.c vegas_pkts_acked: baseRTT = min ever, minRTT = min this round.
        self.base_rtt = self.base_rtt.min(rtt);
        self.min_rtt = self.min_rtt.min(rtt);
        self.cnt_rtt += 1;
    }

    fn on_ack(&mut self, st: &mut CcState, ack: &AckInfo) {
        if ack.snd_una > self.beg_snd_nxt {
            // One RTT has elapsed (tcp_vegas.c vegas_cong_avoid).
            self.beg_snd_nxt = ack.snd_nxt;
            if self.cnt_rtt <= 2 || ack.app_limited {
                // Too few samples to tell queueing from delayed ACKs: Reno.
                self.reno(st, ack.acked);
            } else {
                let mss = st.mss as f64;
                let w = st.cwnd as f64 / mss;
                let rtt = self.min_rtt as f64;
                let base = self.base_rtt as f64;
                let target = w * base / rtt;
                let diff = w * (rtt - base) / base;
                if st.in_slow_start() {
                    if diff > self.gamma {
                        // Leave slow start: Brakmo & Peterson §3.3 / Linux.
                        let w2 = w.min(target + 1.0);
                        st.cwnd = (w2 * mss) as u64;
                        st.ssthresh = st.ssthresh.min(st.cwnd.saturating_sub(st.mss));
                    } else {
                        st.cwnd += ack.acked.min(st.mss);
                    }
                } else if diff > self.beta {
                    st.cwnd = st.cwnd.saturating_sub(st.mss);
                    st.ssthresh = st.ssthresh.min(st.cwnd.saturating_sub(st.mss));
                } else if diff < self.alpha {
                    st.cwnd += st.mss;
                }
                st.cwnd = st.cwnd.max(2 * st.mss);
                st.ssthresh = st.ssthresh.max(2 * st.mss);
                // tcp_current_ssthresh(): ssthresh >= 3/4 cwnd
                st.ssthresh = st.ssthresh.max(st.cwnd * 3 / 4);
            }
            self.cnt_rtt = 0;
            self.min_rtt = Time::MAX;
        } else if st.in_slow_start() && !ack.app_limited {
            st.cwnd += ack.acked.min(st.mss);
        }
        st.cwnd = st.cwnd.min(st.max_cwnd);
    }

    fn ssthresh_on_loss(&mut self, st: &CcState, flight: u64, _now: Time) -> u64 {
        self.bytes_acked = 0;
        self.cnt_rtt = 0;
        self.min_rtt = Time::MAX;
        half_flight(flight, st.mss)
    }
}

/// `cc = "vegas"`, parameters in packets.
pub(super) const VEGAS: CcEntry = CcEntry {
    params: &[
        Param::new("alpha", 2.0, "must be > 0 packets").gt(0.0),
        Param::new("beta", 4.0, "must be > 0 packets").gt(0.0),
        Param::new("gamma", 1.0, "must be > 0 packets").gt(0.0),
    ],
    at_least: &[("beta", "alpha")],
    ..CcEntry::new("vegas", |p, _| Box::new(Vegas::new(p)))
};

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    fn st(w: u64) -> CcState {
        CcState {
            cwnd: w * MSS,
            ssthresh: 2 * MSS,
            mss: MSS,
            max_cwnd: u64::MAX,
            ca_at_ssthresh: false,
        }
    }

    /// One round: five RTT samples of `rtt`, then the ACK that ends the
    /// round (the decision uses this round's samples); cwnd in packets.
    fn round(v: &mut Vegas, s: &mut CcState, rtt: Time) -> u64 {
        for _ in 0..5 {
            v.on_rtt_sample(rtt, 0);
        }
        let una = v.beg_snd_nxt + 1;
        let a = AckInfo {
            acked: MSS,
            snd_una: una,
            snd_nxt: una + 100 * MSS,
            ..Default::default()
        };
        v.on_ack(s, &a);
        s.cwnd / MSS
    }

    #[test]
    fn holds_between_alpha_and_beta() {
        let mut v = Vegas::new(&CcParams::default());
        let mut s = st(20);
        // no queueing (baseRTT 100): diff = 0 < alpha → +1
        assert_eq!(round(&mut v, &mut s, 100), 21);
        // diff = 21·(110−100)/100 = 2.1: alpha <= diff <= beta → hold
        assert_eq!(round(&mut v, &mut s, 110), 21);
        // little queueing: diff = 21·0.05 < alpha → +1 per round
        assert_eq!(round(&mut v, &mut s, 105), 22);
        // heavy queueing: diff = 22·0.5 > beta → −1
        assert_eq!(round(&mut v, &mut s, 150), 21);
    }
}
