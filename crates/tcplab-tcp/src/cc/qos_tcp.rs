//! QoS-TCP (TCP-AV): a TCP that tries to hold an application-given target rate
//! (H. Shimonishi et al., "Congestion Control Enhancements for Streaming Media",
//! IEICE Trans. Commun. E89-B(9), pp. 2280–2291, 2006).
//!
//! **Reconstruction.** The 2006 paper's equations could not be retrieved; only its abstract was
//! found (docs/algorithms.md §5.5 [R]). The abstract names two mechanisms: (i) TCP parameters
//! tuned dynamically so that the throughput settles *around* the target rate, and (ii) a temporary
//! reduction of the target under severe congestion. The QoS-TCP paper being reproduced (Ando,
//! Murase, Oguchi, §1.1 and §6) adds: QoS-TCP sets the slow-start threshold from the target
//! bandwidth and steers cwnd to it, keeps cwnd as high as possible on packet loss, keeps TCP's
//! congestion-collapse protection, and after a window collapse regrows faster than Reno because
//! its ssthresh is higher. This module implements docs/algorithms.md §5.5:
//!
//! * `W_t = R_target · SRTT / 8` bytes (the window that carries the target rate at the current
//!   RTT; SRTT rather than the minimum RTT so that queueing delay is paid for).
//! * Growth: slow start while `cwnd < max(ssthresh, W_t)`, then Reno congestion avoidance.
//! * Loss (fast retransmit) at or below the target: `ssthresh = max(7/8 · FlightSize, 2·SMSS)`
//!   (the gentle reduction δ = 1/8 that keeps cwnd high while the target is not met).
//! * Loss above the target: Reno's halving, floored at the target window,
//!   `ssthresh = max(FlightSize/2, W_t)`: above its target QoS-TCP has nothing to secure and
//!   competes as a standard TCP, which is mechanism (i)'s "around the target".
//! * Timeout (collapse protection kept): cwnd = 1 SMSS and the RTO backs off as for any TCP
//!   (the connection does that); `ssthresh = max(FlightSize/2, W_t, 2·SMSS)`, so slow start climbs
//!   straight back to the target rate.
//!
//! Mechanism (ii) is not modelled: the abstract does not say what counts as severe congestion
//! or by how much the target falls. Results labelled TCP-AV should be read with that caveat.

use super::CcEntry;
use super::{half_flight, AckInfo, CcState, CongestionControl};
use crate::Time;

/// δ of the gentle window reduction below the target (docs/algorithms.md §5.5 [R]).
const DELTA_NUM: u64 = 1;
const DELTA_DEN: u64 = 8;

#[derive(Debug, Clone)]
pub struct QosTcp {
    /// Target rate, bit/s.
    target_bps: u64,
    /// Latest SRTT, ns.
    srtt: Time,
    bytes_acked: u64,
}

impl QosTcp {
    pub fn new(target_bps: u64) -> QosTcp {
        QosTcp {
            target_bps,
            srtt: 0,
            bytes_acked: 0,
        }
    }

    /// W_t in bytes: target rate × SRTT.
    pub fn target_window(&self, st: &CcState) -> u64 {
        let w = (self.target_bps as u128 * self.srtt as u128 / 8 / 1_000_000_000) as u64;
        w.min(st.max_cwnd)
    }

    fn gentle(flight: u64) -> u64 {
        flight - flight * DELTA_NUM / DELTA_DEN
    }
}

impl CongestionControl for QosTcp {
    fn name(&self) -> &'static str {
        "qos_tcp"
    }

    fn on_ack(&mut self, st: &mut CcState, ack: &AckInfo) {
        if ack.srtt > 0 {
            self.srtt = ack.srtt;
        }
        if ack.app_limited {
            return;
        }
        let wt = self.target_window(st);
        if st.cwnd <= st.ssthresh.max(wt) {
            // Slow start (RFC 5681 §3.1 eq. 2) up to the higher of ssthresh and the target window.
            st.cwnd += ack.acked.min(st.mss);
            self.bytes_acked = 0;
        } else {
            // Reno congestion avoidance (RFC 5681 §3.1, byte counting).
            self.bytes_acked += ack.acked;
            if self.bytes_acked >= st.cwnd {
                self.bytes_acked -= st.cwnd;
                st.cwnd += st.mss;
            }
        }
        st.cwnd = st.cwnd.min(st.max_cwnd);
    }

    fn ssthresh_on_loss(&mut self, st: &CcState, flight: u64, _now: Time) -> u64 {
        self.bytes_acked = 0;
        let wt = self.target_window(st);
        if flight > wt {
            // Above the target: Reno's halving (RFC 5681 §3.1 eq. 4), not below W_t.
            half_flight(flight, st.mss).max(wt)
        } else {
            Self::gentle(flight).max(2 * st.mss)
        }
    }

    fn on_rto(&mut self, st: &mut CcState, flight: u64, first: bool, _now: Time) {
        if first {
            self.bytes_acked = 0;
            st.ssthresh = half_flight(flight, st.mss).max(self.target_window(st));
        }
    }

    fn on_rtt_sample(&mut self, _rtt: Time, _now: Time) {}
}

/// `cc = "qos_tcp"` with its `qos_target` rate.
pub(super) const QOS_TCP: CcEntry = CcEntry {
    target_rate: true,
    ..CcEntry::new("qos_tcp", |_, target| {
        Box::new(QosTcp::new(target.expect("qos_tcp is built with its target rate")))
    })
};

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(acked: u64, srtt: Time) -> AckInfo {
        AckInfo {
            now: 0,
            acked,
            rtt: None,
            min_rtt: None,
            srtt,
            flight: 0,
            app_limited: false,
            ..AckInfo::default()
        }
    }

    #[test]
    fn target_window_sets_slow_start_and_floors_losses() {
        // 8 Mbit/s × 100 ms = 100 kB target window.
        let mut q = QosTcp::new(8_000_000);
        let mut st = CcState {
            cwnd: 10_000,
            ssthresh: 20_000,
            mss: 1000,
            max_cwnd: u64::MAX,
            ca_at_ssthresh: false,
        };
        q.on_ack(&mut st, &ack(1000, 100_000_000));
        assert_eq!(q.target_window(&st), 100_000);
        // Above ssthresh but below W_t: still slow start.
        st.cwnd = 50_000;
        q.on_ack(&mut st, &ack(1000, 100_000_000));
        assert_eq!(st.cwnd, 51_000);
        // Loss well above the target: Reno's halving.
        assert_eq!(q.ssthresh_on_loss(&st, 300_000, 0), 150_000);
        // Loss above the target, half of it below: not below the target window.
        assert_eq!(q.ssthresh_on_loss(&st, 160_000, 0), 100_000);
        // Below the target: gentle 1/8, floor 2 SMSS.
        assert_eq!(q.ssthresh_on_loss(&st, 40_000, 0), 35_000);
        assert_eq!(q.ssthresh_on_loss(&st, 1_000, 0), 2_000);
        // Timeout: ssthresh = max(flight/2, W_t); the connection sets cwnd = 1 SMSS.
        q.on_rto(&mut st, 40_000, true, 0);
        assert_eq!(st.ssthresh, 100_000);
        q.on_rto(&mut st, 400_000, true, 0);
        assert_eq!(st.ssthresh, 200_000);
    }

    #[test]
    fn zero_target_is_reno() {
        // With no target every loss is above it: Reno's halving.
        let mut q = QosTcp::new(0);
        let st = CcState {
            cwnd: 10_000,
            ssthresh: 5_000,
            mss: 1000,
            max_cwnd: u64::MAX,
            ca_at_ssthresh: false,
        };
        assert_eq!(q.ssthresh_on_loss(&st, 16_000, 0), 8_000);
    }
}
