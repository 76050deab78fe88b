//! Pacing, as Linux's TCP paces without the `fq` qdisc (internal pacing,
//! `tcp_output.c`; docs/algorithms.md §5.8).
//!
//! - **The rate** (`sk_pacing_rate`, bytes/s) is the congestion control's
//!   own when it sets one (BBR), else `tcp_update_pacing_rate`'s after each
//!   ACK: `mss · max(cwnd, packets_out) / srtt` times 200 %
//!   (`tcp_pacing_ss_ratio`) while cwnd < ssthresh/2 and 120 %
//!   (`tcp_pacing_ca_ratio`) after. Until then the rate is unlimited.
//! - **The departure clock** (`tcp_wstamp_ns`): each transmission starts no
//!   earlier than it, then moves it on by the segment's payload time at the
//!   rate (`tcp_update_skb_after_send`), less up to half of that when the
//!   sender is late (the "credit" for OS jitter). The first ten data
//!   segments of a connection are not paced ("original sch_fq does not pace
//!   first 10 MSS").
//! - **The check** (`tcp_pacing_check`): before a transmission that would
//!   start after `now`, the sender stops and arms a timer for the departure
//!   time (Linux's hrtimer, `tcp_pace_kick`). No timer is armed for a flow
//!   that does not pace, nor while nothing waits for a pacing gap.
//! - **Bursts** (`tcp_tso_autosize`, `tcp_tso_segs`): Linux builds one skb of
//!   several segments per transmission (GSO) — about 1 ms at the pacing rate,
//!   at least `min_tso_segs` — and the departure clock moves on by the whole
//!   skb. A burst started at `now` goes on without a new check while it has
//!   segments left (it ends early when cwnd or data run out, as
//!   `tcp_mss_split_point` cuts the skb).

use crate::Time;

/// `net.ipv4.tcp_pacing_ss_ratio` and `tcp_pacing_ca_ratio` (percent).
pub const PACING_SS_RATIO: u64 = 200;
pub const PACING_CA_RATIO: u64 = 120;
/// `net.ipv4.tcp_min_tso_segs`, for controllers without `.min_tso_segs`.
pub const MIN_TSO_SEGS: u32 = 2;

/// A connection's pacing state.
#[derive(Clone, Debug, Default)]
pub struct Pacer {
    /// `sk_pacing_rate`, bytes/s (None: `~0UL`, unlimited).
    rate: Option<u64>,
    /// `tp->tcp_wstamp_ns`: the earliest departure time of the next skb.
    wstamp: Time,
    /// `tp->data_segs_out`.
    data_segs_out: u64,
    /// The pacing timer (`tp->pacing_timer`), when armed.
    pub deadline: Option<Time>,
    /// The current burst (skb): started at `burst_at`, `burst_left` segments to go,
    /// `credit` ns of lateness still to take off its departure-clock advance.
    burst_at: Time,
    burst_left: u64,
    credit: Time,
}

impl Pacer {
    /// The pacing rate, bytes/s (None: unlimited).
    pub fn rate(&self) -> Option<u64> {
        self.rate
    }

    /// The congestion control set `sk_pacing_rate` (bytes/s).
    pub fn set_rate(&mut self, rate: u64) {
        self.rate = Some(rate);
    }

    /// The departure time of the next skb (`tcp_wstamp_ns`).
    pub fn wstamp(&self) -> Time {
        self.wstamp
    }

    /// `tcp_update_pacing_rate`: the rate from cwnd (bytes), packets_out,
    /// ssthresh (bytes) and SRTT (0: no sample, the rate is not divided).
    pub fn update_linux(
        &mut self,
        mss: u64,
        cwnd: u64,
        ssthresh: u64,
        packets_out: u64,
        srtt: Time,
    ) {
        let cwnd_pkts = cwnd / mss.max(1);
        // "Normal Slow Start condition is (tp->snd_cwnd < tp->snd_ssthresh).
        // If snd_cwnd >= (tp->snd_ssthresh / 2), we are approaching end of
        // slow start and should slow down."
        let ratio = if cwnd_pkts < ssthresh / mss.max(1) / 2 {
            PACING_SS_RATIO
        } else {
            PACING_CA_RATIO
        };
        // rate = mss · USEC_PER_SEC/100 · ratio · max(cwnd, packets_out) / srtt_us
        let mut rate = mss as u128 * 10_000 * ratio as u128 * cwnd_pkts.max(packets_out) as u128;
        let srtt_us = srtt / 1_000;
        if srtt_us > 0 {
            rate /= srtt_us as u128;
        }
        self.rate = Some(rate.min(u64::MAX as u128) as u64);
    }

    /// `tcp_tso_autosize` with the controller's `min_tso_segs`: segments per
    /// skb at the current rate (`min_rtt`: `tcp_min_rtt`, None before a sample).
    pub fn tso_segs(&self, mss: u64, min_tso_segs: u32, min_rtt: Option<Time>) -> u64 {
        crate::tso::autosize(self.rate, mss, min_tso_segs, min_rtt)
    }

    /// `tcp_pacing_check`: may a transmission start at `now`? Inside a burst
    /// started at `now` it may; otherwise not before the departure clock.
    /// When it may not, the pacing timer is armed for the departure time.
    #[inline]
    pub fn blocked(&mut self, now: Time) -> bool {
        if self.burst_left > 0 && self.burst_at == now {
            return false;
        }
        if self.wstamp <= now {
            return false;
        }
        self.deadline = Some(self.wstamp);
        true
    }

    /// A data segment of `len` bytes leaves at `now` (`__tcp_transmit_skb`'s
    /// departure time and `tcp_update_skb_after_send`); `tso_segs` is the
    /// size of a burst that starts with it.
    pub fn on_sent(&mut self, len: u64, now: Time, tso_segs: u64) {
        if !(self.burst_left > 0 && self.burst_at == now) {
            // A new skb: it departs at max(wstamp, now); the lateness is credit.
            let prior = self.wstamp;
            self.wstamp = self.wstamp.max(now);
            self.credit = self.wstamp - prior;
            self.burst_at = now;
            self.burst_left = tso_segs.max(1);
        }
        self.burst_left -= 1;
        self.data_segs_out += 1;
        match self.rate {
            Some(rate) if rate > 0 && self.data_segs_out >= 10 => {
                let len_ns = (len as u128 * 1_000_000_000 / rate as u128) as Time;
                // "take into account OS jitter": len_ns -= min(len_ns/2, credit)
                let cut = (len_ns / 2).min(self.credit);
                self.credit -= cut;
                self.wstamp += len_ns - cut;
            }
            _ => {}
        }
    }

    /// The pacing timer fired (`tcp_pace_kick`): the sender may try again.
    pub fn on_timer(&mut self, now: Time) -> bool {
        if self.deadline.is_some_and(|d| d <= now) {
            self.deadline = None;
            return true;
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    const MS: Time = 1_000_000;

    /// tcp_update_pacing_rate: 200 % of cwnd·mss/srtt below ssthresh/2,
    /// 120 % above; packets_out counts when larger than cwnd.
    #[test]
    fn linux_rate() {
        let mut p = Pacer::default();
        assert_eq!(p.rate(), None);
        // 10 segments of 1000 B per 100 ms = 100 kB/s.
        p.update_linux(1000, 10_000, u64::MAX / 4, 0, 100 * MS);
        assert_eq!(p.rate(), Some(200_000));
        p.update_linux(1000, 10_000, 20_000, 0, 100 * MS);
        assert_eq!(p.rate(), Some(120_000), "cwnd >= ssthresh/2");
        p.update_linux(1000, 10_000, 20_000, 20, 100 * MS);
        assert_eq!(p.rate(), Some(240_000), "max(cwnd, packets_out)");
    }

    /// The first ten segments leave unpaced; then each moves the departure
    /// clock on by len/rate and a later transmission waits for it.
    #[test]
    fn departure_clock_and_first_ten() {
        let mut p = Pacer::default();
        p.set_rate(1_000_000); // 1 MB/s: 1000 B take 1 ms
        for _ in 0..9 {
            assert!(!p.blocked(0));
            p.on_sent(1000, 0, 1);
        }
        assert_eq!(p.wstamp(), 0);
        p.on_sent(1000, 0, 1); // the tenth is paced
        assert_eq!(p.wstamp(), MS);
        assert!(p.blocked(0));
        assert_eq!(p.deadline, Some(MS));
        assert!(!p.on_timer(MS - 1));
        assert!(p.on_timer(MS));
        assert!(!p.blocked(MS));
        p.on_sent(1000, MS, 1);
        assert_eq!(p.wstamp(), 2 * MS);
    }

    /// A late sender gets up to half of each segment's time back (the credit
    /// for OS jitter), once per skb.
    #[test]
    fn credit_for_lateness() {
        let mut p = Pacer::default();
        p.set_rate(1_000_000);
        p.data_segs_out = 10;
        p.on_sent(1000, 0, 1);
        assert_eq!(p.wstamp(), MS);
        // Sent 3 ms late: the skb departs now, its advance is halved.
        p.on_sent(1000, 4 * MS, 1);
        assert_eq!(p.wstamp(), 4 * MS + MS / 2);
        // On time: no credit.
        p.on_sent(1000, 4 * MS + MS / 2, 1);
        assert_eq!(p.wstamp(), 5 * MS + MS / 2);
    }

    /// A burst (skb) of tso_segs segments goes out at once and moves the
    /// clock by all of them; tcp_tso_autosize gives ~1 ms at the rate, at
    /// least min_tso_segs.
    #[test]
    fn bursts() {
        let mut p = Pacer::default();
        p.set_rate(12_500_000); // 100 Mbit/s: 12207 B per 1/1024 s
        assert_eq!(p.tso_segs(1448, 2, Some(40 * MS)), 8);
        p.set_rate(1_250_000); // 10 Mbit/s: 1220 B < 1 segment
        assert_eq!(p.tso_segs(1448, 2, Some(40 * MS)), 2);
        assert_eq!(p.tso_segs(1448, 1, Some(40 * MS)), 1);
        // A sub-ms path adds gso_max_size >> (min_rtt_us >> 9).
        assert_eq!(p.tso_segs(1448, 2, Some(MS)), (1220 + 32768) / 1448);
        p.data_segs_out = 10;
        p.set_rate(1_000_000);
        assert!(!p.blocked(0));
        p.on_sent(1000, 0, 2);
        assert!(!p.blocked(0), "second segment of the skb");
        p.on_sent(1000, 0, 2);
        assert!(p.blocked(0));
        assert_eq!(p.deadline, Some(2 * MS));
    }
}
