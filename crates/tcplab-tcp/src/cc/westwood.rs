//! TCP Westwood+ (Mascolo et al.; Linux `tcp_westwood.c`; docs/algorithms.md §5.2):
//! Reno growth; a bandwidth estimate sampled once per RTT (at least
//! 50 ms) through two cascaded 7/8 EWMA stages sets ssthresh = BWE·RTTmin
//! after loss recovery and after a timeout.

use super::CcEntry;
use super::{half_flight, AckInfo, CcState, CongestionControl, Reno};
use crate::Time;

const RTT_MIN_WIN: Time = 50_000_000;

#[derive(Debug, Clone, Default)]
pub struct Westwood {
    reno: Reno,
    bk: u64,
    win_start: Time,
    bw_ns_est: f64,
    bw_est: f64,
    rtt: Time,
    rtt_min: Time,
    reset_rtt_min: bool,
    started: bool,
}

impl Westwood {
    /// bw_rttmin(): max(BWE·RTTmin, 2 segments), bytes.
    fn bw_rttmin(&self, mss: u64) -> u64 {
        let w = self.bw_est * self.rtt_min as f64 / 1e9;
        (w as u64).max(2 * mss)
    }
}

impl CongestionControl for Westwood {
    fn name(&self) -> &'static str {
        "westwood"
    }

    fn on_rtt_sample(&mut self, rtt: Time, _now: Time) {
        self.rtt = rtt;
        self.rtt_min = if self.reset_rtt_min || self.rtt_min == 0 {
            rtt
        } else {
            self.rtt_min.min(rtt)
        };
        self.reset_rtt_min = false;
    }

    fn on_ack(&mut self, st: &mut CcState, ack: &AckInfo) {
        if !self.started {
            self.started = true;
            self.win_start = ack.now;
        }
        // tcp_westwood.c westwood_update_window: sample once per RTT (>= 50 ms).
        let delta = ack.now - self.win_start;
        if self.rtt > 0 && delta > self.rtt.max(RTT_MIN_WIN) {
            let sample = self.bk as f64 * 1e9 / delta as f64; // bytes/s
            if self.bw_est == 0.0 && self.bw_ns_est == 0.0 {
                self.bw_ns_est = sample;
                self.bw_est = sample;
            } else {
                self.bw_ns_est = (7.0 * self.bw_ns_est + sample) / 8.0;
                self.bw_est = (7.0 * self.bw_est + self.bw_ns_est) / 8.0;
            }
            self.bk = 0;
            self.win_start = ack.now;
        }
        // Cumulative ACKs only reach here, so acked bytes are exact.
        self.bk += ack.acked;
        self.reno.on_ack(st, ack);
    }

    fn ssthresh_on_loss(&mut self, st: &CcState, flight: u64, now: Time) -> u64 {
        let _ = (flight, now);
        // Linux: the Reno hook on entering recovery (cwnd/2).
        half_flight(st.cwnd, st.mss)
    }

    fn on_recovery_exit(&mut self, st: &mut CcState, _now: Time) {
        // tcp_westwood.c CA_EVENT_COMPLETE_CWR: cwnd = ssthresh = bw_rttmin().
        let w = self.bw_rttmin(st.mss);
        st.ssthresh = w;
        st.cwnd = w.min(st.max_cwnd);
    }

    fn on_rto(&mut self, st: &mut CcState, _flight: u64, first: bool, _now: Time) {
        // tcp_westwood.c CA_EVENT_LOSS: ssthresh = bw_rttmin(); reset rtt_min.
        if first {
            st.ssthresh = self.bw_rttmin(st.mss);
        }
        self.reset_rtt_min = true;
    }
}

/// `cc = "westwood"` (Westwood+).
pub(super) const WESTWOOD: CcEntry =
    CcEntry::new("westwood", |_, _| Box::new(Westwood::default()));

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recovery_exit_sets_bandwidth_delay_product() {
        let mut w = Westwood::default();
        let mut st = CcState {
            cwnd: 100_000,
            ssthresh: u64::MAX / 4,
            mss: 1000,
            max_cwnd: u64::MAX,
            ca_at_ssthresh: false,
        };
        w.on_rtt_sample(100_000_000, 0);
        // 1 MB/s for a second in 10 ms ACK steps
        for i in 0..=100u64 {
            let a = AckInfo {
                now: i * 10_000_000,
                acked: 10_000,
                ..Default::default()
            };
            w.on_ack(&mut st, &a);
        }
        let ss = w.ssthresh_on_loss(&st, st.cwnd, 0);
        assert_eq!(ss, st.cwnd / 2);
        w.on_recovery_exit(&mut st, 0);
        // BWE ≈ 1 MB/s · 100 ms = 100 kB
        assert!((st.cwnd as f64 - 100_000.0).abs() < 5_000.0, "{}", st.cwnd);
    }
}
