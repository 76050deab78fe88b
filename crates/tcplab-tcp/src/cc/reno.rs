//! Reno/NewReno window growth (RFC 5681 §3.1). NewReno differs from Reno
//! only in loss recovery (RFC 6582), which lives in the connection.

use super::{half_flight, AckInfo, CcState, CongestionControl};
use crate::Time;

#[derive(Default, Debug, Clone)]
pub struct Reno {
    /// Byte counter for congestion avoidance (RFC 5681 §3.1, RFC 3465).
    bytes_acked: u64,
}

impl CongestionControl for Reno {
    fn name(&self) -> &'static str {
        "reno"
    }

    fn on_ack(&mut self, st: &mut CcState, ack: &AckInfo) {
        if ack.app_limited {
            return;
        }
        if st.in_slow_start() {
            // RFC 5681 §3.1 eq. 2: cwnd += min(N, SMSS) per ACK (ABC with L = 1 SMSS).
            st.cwnd += ack.acked.min(st.mss);
            self.bytes_acked = 0;
        } else {
            // RFC 5681 §3.1: byte counting, cwnd += SMSS once a cwnd's worth is acked.
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
        // RFC 5681 §3.2 step 2 / eq. 4.
        half_flight(flight, st.mss)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(acked: u64) -> AckInfo {
        AckInfo {
            now: 0,
            acked,
            rtt: None,
            min_rtt: None,
            srtt: 0,
            flight: 0,
            app_limited: false,
            snd_una: 0,
            snd_nxt: 0,
        }
    }

    #[test]
    fn slow_start_then_linear() {
        let mut r = Reno::default();
        let mut st = CcState {
            cwnd: 1000,
            ssthresh: 4000,
            mss: 1000,
            max_cwnd: u64::MAX,
        };
        // a delayed ACK for 2 segments grows cwnd by only 1 SMSS (L = 1)
        r.on_ack(&mut st, &ack(2000));
        assert_eq!(st.cwnd, 2000);
        r.on_ack(&mut st, &ack(1000));
        r.on_ack(&mut st, &ack(1000));
        r.on_ack(&mut st, &ack(1000));
        assert_eq!(st.cwnd, 5000); // cwnd == ssthresh counts as slow start
                                   // CA: one SMSS per cwnd of acked bytes
        for _ in 0..4 {
            r.on_ack(&mut st, &ack(1000));
        }
        assert_eq!(st.cwnd, 5000);
        r.on_ack(&mut st, &ack(1000));
        assert_eq!(st.cwnd, 6000);
        assert_eq!(r.ssthresh_on_loss(&st, 3000, 0), 2000);
        assert_eq!(r.ssthresh_on_loss(&st, 9000, 0), 4500);
    }
}
