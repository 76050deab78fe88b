//! Slow start shared by Reno/NewReno and CUBIC (RFC 9438 §4.10 uses Reno's): RFC 5681 §3.1
//! with Appropriate Byte Counting (RFC 3465) and, if enabled, HyStart++ (RFC 9406). Each
//! controller applies the growth to its own cwnd representation (Reno whole bytes, CUBIC
//! bytes plus a fraction).

use super::hystart::HyStart;
use super::{AckInfo, CcState};

/// The slow-start state of one connection.
#[derive(Debug, Clone)]
pub struct SlowStart {
    /// ABC limit L in SMSS (RFC 3465 §2.2); 1 = RFC 5681 eq. 2.
    pub abc_l: u64,
    /// In the slow start that follows a retransmission timeout (RFC 3465 §2.3).
    pub after_rto: bool,
    /// HyStart++ for the initial slow start (RFC 9406), if enabled.
    pub hystart: Option<HyStart>,
}

impl Default for SlowStart {
    fn default() -> Self {
        SlowStart {
            abc_l: 1,
            after_rto: false,
            hystart: None,
        }
    }
}

/// One slow-start ACK's growth.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Growth {
    /// Bytes to add to cwnd.
    pub increase: u64,
    /// Slow start ends here (HyStart++ left CSS): the caller sets ssthresh = cwnd.
    pub enter_ca: bool,
}

impl SlowStart {
    /// RFC 9406 §4.2: HyStart++'s growth for this slow-start ACK (slow start or CSS with
    /// L = 8), if HyStart++ runs and still applies.
    pub fn hystart_step(&mut self, st: &CcState, ack: &AckInfo) -> Option<Growth> {
        self.hystart
            .as_mut()
            .and_then(|h| h.on_slow_start_ack(st, ack))
            .map(|s| Growth {
                increase: s.increase,
                enter_ca: s.enter_ca,
            })
    }

    /// RFC 3465 §2.2: cwnd += min(N, L·SMSS) per ACK; RFC 3465 §2.3: L = 1 SMSS in the slow
    /// start after an RTO. With L = 1 this is RFC 5681 §3.1 eq. 2.
    pub fn abc_increase(&self, st: &CcState, ack: &AckInfo) -> u64 {
        let l = if self.after_rto { 1 } else { self.abc_l };
        ack.acked.min(l * st.mss)
    }

    /// The growth of one slow-start ACK: HyStart++'s if it applies, else byte counting.
    pub fn on_ack(&mut self, st: &CcState, ack: &AckInfo) -> Growth {
        self.hystart_step(st, ack).unwrap_or(Growth {
            increase: self.abc_increase(st, ack),
            enter_ca: false,
        })
    }

    /// An ACK in congestion avoidance: the post-RTO slow start is over (RFC 3465 §2.3).
    pub fn on_congestion_avoidance(&mut self) {
        self.after_rto = false;
    }

    /// A congestion event: RFC 9406 §4.2, HyStart++ is for the initial slow start only.
    pub fn on_congestion(&mut self) {
        if let Some(h) = self.hystart.as_mut() {
            h.on_congestion();
        }
    }

    /// A retransmission timeout: L = 1 in the next slow start (RFC 3465 §2.3), HyStart++ off.
    pub fn on_rto(&mut self) {
        self.after_rto = true;
        self.on_congestion();
    }

    /// `CongestionControl::set_abc_limit`.
    pub fn set_abc_limit(&mut self, l: u32) {
        self.abc_l = l.max(1) as u64;
    }

    /// `CongestionControl::set_hystart`.
    pub fn set_hystart(&mut self, on: bool) {
        self.hystart = on.then(HyStart::default);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(acked: u64) -> AckInfo {
        AckInfo {
            acked,
            ..AckInfo::default()
        }
    }

    fn st() -> CcState {
        CcState {
            cwnd: 10_000,
            ssthresh: u64::MAX,
            mss: 1000,
            max_cwnd: u64::MAX,
            ca_at_ssthresh: false,
        }
    }

    /// RFC 3465 §2.2 (L per ACK) and §2.3 (L = 1 after an RTO until congestion avoidance).
    #[test]
    fn byte_counting_limit_and_rto() {
        let mut ss = SlowStart::default();
        assert_eq!(ss.on_ack(&st(), &ack(3000)).increase, 1000);
        ss.set_abc_limit(2);
        assert_eq!(ss.on_ack(&st(), &ack(3000)).increase, 2000);
        assert_eq!(ss.on_ack(&st(), &ack(500)).increase, 500);
        ss.on_rto();
        assert_eq!(ss.on_ack(&st(), &ack(3000)).increase, 1000);
        ss.on_congestion_avoidance();
        assert_eq!(ss.on_ack(&st(), &ack(3000)).increase, 2000);
    }

    /// HyStart++'s slow start counts up to L = 8 SMSS per ACK (RFC 9406 §4.2) until a
    /// congestion event ends it (§4.2: initial slow start only).
    #[test]
    fn hystart_growth_then_off() {
        let mut ss = SlowStart::default();
        ss.set_hystart(true);
        let g = ss.on_ack(&st(), &ack(6000));
        assert_eq!(g.increase, 6000);
        assert!(!g.enter_ca);
        ss.on_congestion();
        assert_eq!(ss.on_ack(&st(), &ack(6000)).increase, 1000);
    }
}
