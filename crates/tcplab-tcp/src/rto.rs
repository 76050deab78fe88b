//! Retransmission-timeout estimation (RFC 6298) with a configurable profile.

use crate::config::RtoProfile;
use crate::Time;

/// RFC 6298 estimator: SRTT, RTTVAR and the (backed-off) RTO.
#[derive(Clone, Debug)]
pub struct RttEstimator {
    profile: RtoProfile,
    srtt: Time,
    rttvar: Time,
    /// RTO before backoff, already clamped to [min, max].
    base_rto: Time,
    backoff: u32,
    have_sample: bool,
    latest: Time,
    min_rtt: Time,
}

impl RttEstimator {
    pub fn new(profile: RtoProfile) -> Self {
        RttEstimator {
            // RFC 6298 §2.1: until a sample is made, RTO = initial value.
            base_rto: profile.initial,
            profile,
            srtt: 0,
            rttvar: 0,
            backoff: 0,
            have_sample: false,
            latest: 0,
            min_rtt: Time::MAX,
        }
    }

    /// Feed one RTT measurement that obeys Karn's rule (RFC 6298 §3).
    pub fn on_sample(&mut self, r: Time) {
        self.latest = r;
        self.min_rtt = self.min_rtt.min(r);
        if !self.have_sample {
            // RFC 6298 §2.2: SRTT <- R, RTTVAR <- R/2.
            self.srtt = r;
            self.rttvar = r / 2;
            self.have_sample = true;
        } else {
            // RFC 6298 §2.3: RTTVAR first (it uses the old SRTT), beta = 1/4, alpha = 1/8.
            // In u128: every time is ≤ MAX_TIME_NS, so the results fit a u64 again.
            let err = self.srtt.abs_diff(r) as u128;
            self.rttvar = ((3 * self.rttvar as u128 + err) / 4) as Time;
            self.srtt = ((7 * self.srtt as u128 + r as u128) / 8) as Time;
        }
        self.recompute();
        // RFC 6298 §5.7 note / §5: a new sample after backoff collapses the RTO.
        self.backoff = 0;
    }

    /// Restore estimator state (used by the Eifel response, RFC 4015 §4).
    pub fn rebase(&mut self, srtt: Time, rttvar: Time) {
        self.srtt = srtt;
        self.rttvar = rttvar;
        self.have_sample = true;
        self.backoff = 0;
        self.recompute();
    }

    fn recompute(&mut self) {
        // RFC 6298 §2.3: RTO <- SRTT + max(G, K*RTTVAR), K = 4.
        let rto =
            (self.srtt).saturating_add(self.profile.granularity.max(self.rttvar.saturating_mul(4)));
        // RFC 6298 §2.4 (lower bound) and §2.5 (upper bound).
        self.base_rto = rto.clamp(self.profile.min, self.profile.max);
    }

    /// RFC 6298 §5.5: back off the timer after an expiry.
    pub fn back_off(&mut self) {
        if self.backoff < self.profile.max_backoff {
            self.backoff += 1;
        }
    }

    /// RFC 6298 §5.7: after a SYN/SYN-ACK timeout and no sample yet, use 3 s.
    pub fn syn_fallback(&mut self) {
        if !self.have_sample && self.base_rto < 3 * crate::NS_PER_S {
            self.base_rto = (3 * crate::NS_PER_S).clamp(self.profile.min, self.profile.max);
        }
    }

    /// The current timeout including backoff, capped at the profile maximum.
    pub fn rto(&self) -> Time {
        self.rto_backed_off(0)
    }

    /// The current timeout doubled `extra` more times (e.g. per unanswered
    /// zero-window probe), capped at the profile maximum.
    pub fn rto_backed_off(&self, extra: u32) -> Time {
        let mut rto = self.base_rto;
        for _ in 0..self.backoff.saturating_add(extra) {
            rto = rto.saturating_mul(2);
            if rto >= self.profile.max {
                return self.profile.max;
            }
        }
        rto.min(self.profile.max)
    }

    pub fn srtt(&self) -> Time {
        self.srtt
    }
    pub fn rttvar(&self) -> Time {
        self.rttvar
    }
    pub fn backoff(&self) -> u32 {
        self.backoff
    }
    pub fn has_sample(&self) -> bool {
        self.have_sample
    }
    pub fn latest(&self) -> Time {
        self.latest
    }
    /// Smallest sample seen (Time::MAX before the first).
    pub fn min_rtt(&self) -> Time {
        self.min_rtt
    }
    pub fn profile(&self) -> &RtoProfile {
        &self.profile
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{NS_PER_MS, NS_PER_S};

    fn profile(min_ms: u64) -> RtoProfile {
        RtoProfile {
            initial: NS_PER_S,
            min: min_ms * NS_PER_MS,
            max: 60 * NS_PER_S,
            granularity: NS_PER_MS,
            max_backoff: 6,
            restart_on_rtx: false,
        }
    }

    /// Hand-worked RFC 6298 sequence for samples 100, 140, 80, 300 ms with no minimum.
    #[test]
    fn rfc6298_sequence() {
        let mut e = RttEstimator::new(profile(0));
        assert_eq!(e.rto(), NS_PER_S); // §2.1 initial
        e.on_sample(100 * NS_PER_MS);
        // SRTT=100, RTTVAR=50, RTO=100+200=300 ms
        assert_eq!(e.srtt(), 100 * NS_PER_MS);
        assert_eq!(e.rttvar(), 50 * NS_PER_MS);
        assert_eq!(e.rto(), 300 * NS_PER_MS);
        e.on_sample(140 * NS_PER_MS);
        // RTTVAR = 3/4*50 + 1/4*|100-140| = 37.5+10 = 47.5; SRTT = 7/8*100 + 140/8 = 105
        assert_eq!(e.rttvar(), 47_500_000);
        assert_eq!(e.srtt(), 105 * NS_PER_MS);
        assert_eq!(e.rto(), 105 * NS_PER_MS + 190 * NS_PER_MS);
        e.on_sample(80 * NS_PER_MS);
        // RTTVAR = 3/4*47.5 + 1/4*25 = 35.625+6.25 = 41.875; SRTT = 7/8*105 + 10 = 101.875
        assert_eq!(e.rttvar(), 41_875_000);
        assert_eq!(e.srtt(), 101_875_000);
        assert_eq!(e.rto(), 101_875_000 + 167_500_000);
        e.on_sample(300 * NS_PER_MS);
        // RTTVAR = 3/4*41.875 + 1/4*198.125 = 31.40625+49.53125 = 80.9375
        // SRTT = 7/8*101.875 + 37.5 = 89.140625+37.5 = 126.640625
        assert_eq!(e.rttvar(), 80_937_500);
        assert_eq!(e.srtt(), 126_640_625);
        assert_eq!(e.rto(), 126_640_625 + 323_750_000);
    }

    #[test]
    fn min_max_and_backoff() {
        let mut e = RttEstimator::new(profile(1000));
        e.on_sample(10 * NS_PER_MS);
        assert_eq!(e.rto(), NS_PER_S); // §2.4 floor of 1 s
        e.back_off();
        assert_eq!(e.rto(), 2 * NS_PER_S); // §5.5
        for _ in 0..10 {
            e.back_off();
        }
        // capped at 2^6 doublings
        assert_eq!(e.backoff(), 6);
        assert_eq!(e.rto(), 60 * NS_PER_S); // 64 s capped at max 60 s
        e.on_sample(10 * NS_PER_MS);
        assert_eq!(e.backoff(), 0);
        assert_eq!(e.rto(), NS_PER_S);
    }

    #[test]
    fn granularity_floors_variance_term() {
        let mut p = profile(0);
        p.granularity = 500 * NS_PER_MS; // 1990s BSD tick
        let mut e = RttEstimator::new(p);
        for _ in 0..50 {
            e.on_sample(100 * NS_PER_MS);
        }
        // RTTVAR decays towards 0, so the G term dominates: RTO = SRTT + G
        assert_eq!(e.rto(), 600 * NS_PER_MS);
    }
}
