//! Retransmission-timeout estimation (RFC 6298) with a configurable profile.

use crate::config::{RtoProfile, RttEstimatorKind};
use crate::Time;

/// Linux's estimator state (`tcp_sock`'s `srtt_us`, `mdev_us`,
/// `mdev_max_us`, `rttvar_us`, `rtt_seq`), in ns. `srtt8` is 8·SRTT and the
/// deviations are in RTO units (4× the mean deviation), as in the kernel.
#[derive(Clone, Copy, Debug, Default)]
struct LinuxVar {
    srtt8: i64,
    mdev: i64,
    mdev_max: i64,
    rttvar: i64,
    rtt_seq: u64,
}

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
    linux: LinuxVar,
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
            linux: LinuxVar::default(),
        }
    }

    /// Whether this estimator is Linux's (samples then go to
    /// [`Self::on_sample_linux`]).
    pub fn is_linux(&self) -> bool {
        self.profile.estimator == RttEstimatorKind::Linux
    }

    /// Note a sample for the latest and smallest RTT only (the estimator
    /// itself is fed elsewhere).
    pub fn note(&mut self, r: Time) {
        self.latest = r;
        self.min_rtt = self.min_rtt.min(r);
    }

    /// Feed one sample to Linux's estimator (`tcp_rtt_estimator`, then
    /// `tcp_set_rto`), with SND.UNA and SND.NXT at the ACK: the variance
    /// term's round trip ends when SND.UNA passes the SND.NXT recorded at its
    /// start (`rtt_seq`).
    pub fn on_sample_linux(&mut self, r: Time, snd_una: u64, snd_nxt: u64) {
        let rto_min = self.profile.min as i64;
        let m = r.max(1) as i64;
        let v = &mut self.linux;
        if self.have_sample {
            // m is now the error in the estimate; srtt = 7/8 srtt + 1/8 new.
            let err = m - (v.srtt8 >> 3);
            v.srtt8 += err;
            let mut dm;
            if err < 0 {
                // A falling RTT moves the deviation with gain 1/32, not 1/4
                // (the kernel's "similar to one of Eifel findings").
                dm = -err - (v.mdev >> 2);
                if dm > 0 {
                    dm >>= 3;
                }
            } else {
                dm = err - (v.mdev >> 2);
            }
            v.mdev += dm;
            if v.mdev > v.mdev_max {
                v.mdev_max = v.mdev;
                if v.mdev_max > v.rttvar {
                    v.rttvar = v.mdev_max;
                }
            }
            if snd_una > v.rtt_seq {
                // A round trip ended: decay toward its largest deviation.
                if v.mdev_max < v.rttvar {
                    v.rttvar -= (v.rttvar - v.mdev_max) >> 2;
                }
                v.rtt_seq = snd_nxt;
                v.mdev_max = rto_min;
            }
        } else {
            // First sample: SRTT = R and RTO = 3·R (mdev = 2·R), at least
            // the minimum.
            v.srtt8 = m << 3;
            v.mdev = m << 1;
            v.rttvar = v.mdev.max(rto_min);
            v.mdev_max = v.rttvar;
            v.rtt_seq = snd_nxt;
            self.have_sample = true;
        }
        v.srtt8 = v.srtt8.max(1);
        self.srtt = (v.srtt8 >> 3) as Time;
        // RFC 6298 RTTVAR units for outputs and the Eifel rebase.
        self.rttvar = (v.rttvar / 4) as Time;
        // __tcp_set_rto: SRTT + rttvar; tcp_bound_rto caps it.
        self.base_rto = ((v.srtt8 >> 3) + v.rttvar)
            .max(0)
            .min(self.profile.max as i64) as Time;
        self.backoff = 0;
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
        if self.is_linux() {
            self.linux.srtt8 = (srtt as i64) << 3;
            self.linux.mdev = 4 * rttvar as i64;
            self.linux.rttvar = self.linux.mdev.max(self.profile.min as i64);
            self.linux.mdev_max = self.linux.rttvar;
            self.have_sample = true;
            self.backoff = 0;
            self.base_rto = (srtt + self.linux.rttvar as Time).min(self.profile.max);
            return;
        }
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
            estimator: RttEstimatorKind::Rfc6298,
            ..RtoProfile::RFC6298
        }
    }

    fn linux() -> RttEstimator {
        RttEstimator::new(RtoProfile::NAMED[3].1)
    }

    const MS: Time = NS_PER_MS;

    #[test]
    fn linux_first_sample_gives_three_rtts_at_least_the_floor() {
        // tcp_rtt_estimator, no previous measure: mdev = 2·R, rttvar =
        // max(mdev, rto_min); RTO = R + rttvar.
        let mut e = linux();
        e.on_sample_linux(100 * MS, 0, 10);
        assert_eq!((e.srtt(), e.rto()), (100 * MS, 300 * MS));
        let mut e = linux();
        e.on_sample_linux(40 * MS, 0, 10);
        assert_eq!(e.rto(), 240 * MS); // 2·40 ms < 200 ms: the floor
    }

    #[test]
    fn linux_variance_rises_at_once_and_decays_a_quarter_per_round_trip() {
        let mut e = linux();
        e.on_sample_linux(100 * MS, 0, 10); // rttvar 200 ms, rtt_seq 10
        for _ in 0..20 {
            e.on_sample_linux(100 * MS, 5, 10); // same round trip: no decay
        }
        // mdev fell (200 → ~1.6 ms) but rttvar holds the round trip's max.
        assert_eq!(e.rto(), 300 * MS);
        // SND.UNA passes rtt_seq: rttvar -= (rttvar - max(mdev_max, 200 ms)) / 4
        // = 200 ms (the floor already): unchanged, and the round trip restarts.
        e.on_sample_linux(100 * MS, 11, 20);
        assert_eq!(e.rto(), 300 * MS);
        // A jump to 500 ms: err 400, mdev += 400 - mdev/4 → rttvar at once.
        let before = e.rto();
        e.on_sample_linux(500 * MS, 12, 20);
        assert!(e.srtt() == 150 * MS, "{}", e.srtt());
        assert!(e.rto() > before + 200 * MS, "{} vs {}", e.rto(), before);
        let peak = e.rttvar();
        // Falling RTTs move mdev with gain 1/32 only; rttvar keeps the
        // largest deviation of a round trip: the one that ends when SND.UNA
        // passes rtt_seq = 20 had the peak in it, so no decay there ...
        e.on_sample_linux(100 * MS, 15, 30);
        assert_eq!(e.rttvar(), peak);
        e.on_sample_linux(100 * MS, 21, 30);
        assert_eq!(e.rttvar(), peak);
        // ... the next one did not: a quarter of the excess goes.
        e.on_sample_linux(100 * MS, 31, 40);
        let after = e.rttvar();
        assert!(after < peak && after > peak / 2, "{after} vs {peak}");
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
