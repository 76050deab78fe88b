//! Reno/NewReno window growth (RFC 5681 §3.1) with Appropriate Byte Counting
//! (RFC 3465), or in Linux's whole packets (`reno = "linux"`, `reno_linux.rs`).
//! NewReno differs from Reno only in loss recovery (RFC 6582), which lives in
//! the connection.

use super::CcEntry;
use super::hystart::HyStart;
use super::reno_linux::{after_slow_start, reno_ssthresh, AiCredit, PacketCount};
use super::slow_start::SlowStart;
use super::{half_flight, AckInfo, CcState, CongestionControl};
use crate::Time;

#[derive(Debug, Clone, Default)]
pub struct Reno {
    /// Byte counter for congestion avoidance (RFC 5681 §3.1, RFC 3465).
    bytes_acked: u64,
    /// Slow start with byte counting and HyStart++ (shared with CUBIC).
    ss: SlowStart,
    /// Linux's arithmetic in whole packets (`reno = "linux"`), if set.
    linux: Option<LinuxReno>,
}

/// `tcp_reno_cong_avoid`'s state: `snd_cwnd_cnt` and the bytes acknowledged
/// short of a whole packet.
#[derive(Debug, Clone, Copy, Default)]
struct LinuxReno {
    credit: AiCredit,
    acked: PacketCount,
}

impl CongestionControl for Reno {
    fn name(&self) -> &'static str {
        "reno"
    }

    fn on_ack(&mut self, st: &mut CcState, ack: &AckInfo) {
        if ack.app_limited {
            return;
        }
        if let Some(l) = self.linux.as_mut() {
            // tcp_reno_cong_avoid (after its tcp_is_cwnd_limited check).
            let mss = st.mss.max(1);
            let Some(pkts) = after_slow_start(st, &mut l.acked, ack.acked, self.ss.abc_l) else {
                return;
            };
            let add = l.credit.add(st.cwnd / mss, pkts);
            st.cwnd = (st.cwnd + add * mss).min(st.max_cwnd);
            return;
        }
        if st.in_slow_start() {
            // RFC 9406 §4.2 (HyStart++ slow start / CSS, L = 8; ssthresh = cwnd when CSS
            // ends) or RFC 3465 §2.2/§2.3 byte counting (`slow_start.rs`).
            let g = self.ss.on_ack(st, ack);
            st.cwnd = (st.cwnd + g.increase).min(st.max_cwnd);
            if g.enter_ca {
                st.ssthresh = st.cwnd;
            }
            self.bytes_acked = 0;
        } else {
            self.ss.on_congestion_avoidance();
            // RFC 5681 §3.1 / RFC 3465 §2.1: byte counting, cwnd += SMSS once a cwnd's worth is acked.
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
        self.ss.on_congestion();
        if let Some(l) = self.linux.as_mut() {
            // tcp_init_cwnd_reduction: snd_cwnd_cnt = 0; tcp_reno_ssthresh (the
            // connection passes cwnd with ssthresh_from = "cwnd", as Linux).
            l.credit.reset();
            return reno_ssthresh(flight, st.mss);
        }
        // RFC 5681 §3.2 step 2 / eq. 4.
        half_flight(flight, st.mss)
    }

    fn on_rto(&mut self, st: &mut CcState, flight: u64, first: bool, now: Time) {
        if first {
            st.ssthresh = self.ssthresh_on_loss(st, flight, now);
        }
        if let Some(l) = self.linux.as_mut() {
            // tcp_enter_loss: snd_cwnd_cnt = 0 at every timeout.
            l.credit.reset();
        }
        self.ss.on_rto();
    }

    fn set_linux_arith(&mut self, on: bool) -> bool {
        self.linux = on.then(LinuxReno::default);
        true
    }

    fn set_abc_limit(&mut self, l: u32) -> bool {
        self.ss.set_abc_limit(l);
        true
    }

    fn set_hystart(&mut self, on: bool) -> bool {
        self.ss.set_hystart(on);
        true
    }

    fn hystart(&self) -> Option<&HyStart> {
        self.ss.hystart.as_ref()
    }
}

/// `cc = "reno"`: Reno's window growth and recovery (RFC 5681).
pub(super) const RENO: CcEntry = CcEntry {
    loss_based: true,
    reno_linux: true,
    reno_recovery: true,
    ..CcEntry::new("reno", |_, _| Box::new(Reno::default()))
};

/// `cc = "newreno"`: Reno's window growth with NewReno's recovery (RFC 6582, in the connection).
pub(super) const NEWRENO: CcEntry = CcEntry {
    loss_based: true,
    reno_linux: true,
    ..CcEntry::new("newreno", |_, _| Box::new(Reno::default()))
};

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
            ca_at_ssthresh: false,
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

    /// RFC 3465 §2.2: with L = 2 a stretch ACK covering 4 segments opens
    /// cwnd by 2 SMSS in slow start (1 SMSS with L = 1); §2.3: after an RTO
    /// L is 1 again until slow start ends.
    #[test]
    fn abc_limit_and_rto() {
        let mut st = CcState {
            cwnd: 1000,
            ssthresh: 100_000,
            mss: 1000,
            max_cwnd: u64::MAX,
            ca_at_ssthresh: false,
        };
        let mut r = Reno::default();
        assert!(r.set_abc_limit(2));
        r.on_ack(&mut st, &ack(1500));
        assert_eq!(st.cwnd, 2500);
        r.on_ack(&mut st, &ack(4000));
        assert_eq!(st.cwnd, 4500, "capped at L*SMSS per ACK");
        r.on_rto(&mut st, 4500, true, 0);
        st.cwnd = 1000;
        r.on_ack(&mut st, &ack(4000));
        assert_eq!(st.cwnd, 2000, "L = 1 in the slow start after an RTO");
        st.ssthresh = 1000;
        r.on_ack(&mut st, &ack(1000)); // congestion avoidance ends that slow start
        st.ssthresh = 100_000;
        r.on_ack(&mut st, &ack(4000));
        assert_eq!(st.cwnd, 4000, "L = 2 again in a later slow start");
    }
}
