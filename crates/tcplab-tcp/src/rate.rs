//! Delivery-rate estimation, as Linux's `tcp_rate.c` (the algorithm of
//! draft-cheng-iccrg-delivery-rate-estimation; docs/algorithms.md §5.9).
//!
//! When a segment is (re)sent it records the connection's `delivered` count,
//! the time of the last delivery (`delivered_mstamp`) and the send time of
//! the first segment of the current sending phase (`first_tx_mstamp`)
//! (`tcp_rate_skb_sent`). When it is delivered (SACKed, or cumulatively
//! acknowledged without having been SACKed) the most recently sent of the
//! ACK's delivered segments gives the sample's starting point
//! (`tcp_rate_skb_delivered`); at the end of the ACK the sample is the data
//! delivered since then over the longer of the send and the ACK phase
//! (`tcp_rate_gen`). A sending application that leaves the pipe idle marks
//! the connection application-limited until that bubble is delivered
//! (`tcp_rate_check_app_limited`); samples taken from it say so.
//!
//! Counts are in segments (Linux's packets: `tcp_skb_pcount` is 1 here, no
//! segment is larger than the MSS); times in ns (Linux: µs).
//!
//! The per-segment records live beside the scoreboard's segments, in the
//! same order (`Scoreboard` keeps them aligned); a connection that does not
//! estimate rates has none, and pays nothing.

use crate::Time;
use std::collections::VecDeque;

/// What a segment remembers of the connection when it is (re)sent
/// (`tcp_skb_cb.tx`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TxRate {
    /// `tx.delivered`: the connection's delivered count at the send.
    pub delivered: u64,
    /// `tx.delivered_mstamp`: when that count was last raised; None once
    /// the segment was SACKed (it must not start a sample again).
    pub delivered_mstamp: Option<Time>,
    /// `tx.first_tx_mstamp`: start of the sending phase it belongs to.
    pub first_tx_mstamp: Time,
    /// `tx.is_app_limited`.
    pub app_limited: bool,
}

/// One ACK's delivery-rate sample (`struct rate_sample`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RateSample {
    /// `prior_mstamp`: the starting point's `delivered_mstamp` (None: no
    /// segment with timing information was delivered).
    pub prior_mstamp: Option<Time>,
    /// `prior_delivered`: the connection's delivered count at that point.
    pub prior_delivered: u64,
    /// `delivered`: segments delivered over the interval (None: invalid).
    pub delivered: Option<u64>,
    /// `interval_us`, in ns (None: invalid sample).
    pub interval: Option<Time>,
    /// `snd_interval_us` / `rcv_interval_us`, ns.
    pub snd_interval: Time,
    pub rcv_interval: Time,
    /// `rtt_us`: RTT of the most recently sent segment this ACK (S)ACKed.
    pub rtt: Option<Time>,
    /// `losses`: segments newly marked lost on this ACK.
    pub losses: u64,
    /// `acked_sacked`: segments newly delivered on this ACK.
    pub acked_sacked: u64,
    /// `prior_in_flight`: segments in flight before the ACK.
    pub prior_in_flight: u64,
    /// `is_app_limited`, `is_retrans`, `is_ack_delayed`.
    pub is_app_limited: bool,
    pub is_retrans: bool,
    pub is_ack_delayed: bool,
    /// `last_end_seq`: end of the segment the sample starts from.
    pub(crate) last_end_seq: u64,
    /// `last_tx`: its send time (Linux keeps it in `tp->first_tx_mstamp`).
    pub(crate) last_tx: Time,
}

impl RateSample {
    /// The sample's delivery rate in bytes per second (segments of `mss`
    /// bytes), if valid.
    pub fn rate_bytes_per_s(&self, mss: u64) -> Option<u64> {
        match (self.delivered, self.interval) {
            (Some(d), Some(i)) if i > 0 => {
                Some((d as u128 * mss as u128 * 1_000_000_000 / i as u128) as u64)
            }
            _ => None,
        }
    }
}

/// The connection's side of `tcp_rate.c` (`tcp_sock`'s `delivered`,
/// `delivered_mstamp`, `first_tx_mstamp`, `app_limited`, `lost`,
/// `rate_delivered`/`rate_interval_us`) plus the per-segment records.
#[derive(Clone, Debug)]
pub struct RateEstimator {
    /// `tp->delivered`: segments delivered (SACKed or cumulatively acked once each).
    pub delivered: u64,
    /// `tp->delivered_mstamp`: when `delivered` last grew.
    pub delivered_mstamp: Time,
    /// `tp->first_tx_mstamp`: send time of the sending phase's first segment.
    first_tx_mstamp: Time,
    /// `tp->app_limited`: 0 = not limited, else the delivered count that ends
    /// the app-limited bubble. `APP_LIMITED_INIT` is Linux's `~0U` at the start.
    pub app_limited: u64,
    /// `tp->rate_delivered`, `tp->rate_interval_us` (ns), `tp->rate_app_limited`:
    /// the last sample that was not app-limited, or the fastest one that was.
    pub rate_delivered: u64,
    pub rate_interval: Time,
    pub rate_app_limited: bool,
    /// The sample being built by the current ACK, then its result.
    pub rs: RateSample,
    /// `tp->delivered` at the start of the current ACK.
    ack_prior_delivered: u64,
    /// One record per scoreboard segment, same order.
    tx: VecDeque<TxRate>,
}

/// Linux's `tp->app_limited = ~0U` at `tcp_init_sock`: the first flight's
/// samples are app-limited, and the first ACK ends the bubble.
pub const APP_LIMITED_INIT: u64 = u64::MAX;

impl Default for RateEstimator {
    fn default() -> Self {
        RateEstimator {
            delivered: 0,
            delivered_mstamp: 0,
            first_tx_mstamp: 0,
            app_limited: APP_LIMITED_INIT,
            rate_delivered: 0,
            rate_interval: 0,
            rate_app_limited: false,
            rs: RateSample::default(),
            ack_prior_delivered: 0,
            tx: VecDeque::with_capacity(64),
        }
    }
}

/// `tcp_skb_sent_after(t1, t2, seq1, seq2)`: sent later, or at the same
/// time and ending higher.
#[inline]
fn sent_after(t1: Time, t2: Time, seq1: u64, seq2: u64) -> bool {
    t1 > t2 || (t1 == t2 && seq1 > seq2)
}

impl RateEstimator {
    /// `tcp_rate_skb_sent` for a new segment appended to the queue;
    /// `packets_out` is the number of segments outstanding before it.
    pub fn on_sent_new(&mut self, packets_out: usize, now: Time) {
        let r = self.record(packets_out, now);
        self.tx.push_back(r);
    }

    /// `tcp_rate_skb_sent` for a retransmission of queued segment `i`.
    pub fn on_resent(&mut self, i: usize, packets_out: usize, now: Time) {
        let r = self.record(packets_out, now);
        if let Some(t) = self.tx.get_mut(i) {
            *t = r;
        }
    }

    fn record(&mut self, packets_out: usize, now: Time) -> TxRate {
        // "If there are no packets in flight yet, then we know that any ACKs
        // after now indicate that the network was able to deliver those
        // packets completely in the sampling interval between now and the
        // next ACK" (packets_out, not the in-flight guess).
        if packets_out == 0 {
            self.first_tx_mstamp = now;
            self.delivered_mstamp = now;
        }
        TxRate {
            delivered: self.delivered,
            delivered_mstamp: Some(self.delivered_mstamp),
            first_tx_mstamp: self.first_tx_mstamp,
            app_limited: self.app_limited != 0,
        }
    }

    /// The head segment left the queue (cumulatively acknowledged).
    #[inline]
    pub fn pop_front(&mut self) {
        self.tx.pop_front();
    }

    /// The records, in queue order (for tests and checks).
    pub fn records(&self) -> &VecDeque<TxRate> {
        &self.tx
    }

    /// Start of an ACK: the sample starts empty (`tcp_ack`'s
    /// `rs.prior_in_flight`, `prior_delivered`).
    pub fn begin_ack(&mut self, prior_in_flight: u64) {
        self.rs = RateSample {
            prior_in_flight,
            ..RateSample::default()
        };
        self.ack_prior_delivered = self.delivered;
    }

    /// `tcp_rate_skb_delivered` for queued segment `i` (ending at `end_seq`,
    /// last sent at `sent_at`, retransmitted or not), newly SACKed
    /// (`sacked`) or cumulatively acknowledged; counts it delivered
    /// (`tcp_count_delivered`).
    pub fn on_delivered(
        &mut self,
        i: usize,
        end_seq: u64,
        sent_at: Time,
        retrans: bool,
        sacked: bool,
    ) {
        self.delivered += 1;
        let Some(t) = self.tx.get_mut(i) else {
            return;
        };
        let Some(mstamp) = t.delivered_mstamp else {
            return;
        };
        let rs = &mut self.rs;
        if rs.prior_mstamp.is_none() || sent_after(sent_at, rs.last_tx, end_seq, rs.last_end_seq) {
            rs.prior_delivered = t.delivered;
            rs.prior_mstamp = Some(mstamp);
            rs.is_app_limited = t.app_limited;
            rs.is_retrans = retrans;
            rs.last_end_seq = end_seq;
            rs.last_tx = sent_at;
            // "Record send time of most recently ACKed packet" and "find the
            // duration of the send phase of this window".
            self.first_tx_mstamp = sent_at;
            rs.snd_interval = sent_at.saturating_sub(t.first_tx_mstamp);
        }
        // "Mark off the skb delivered once it's sacked to avoid being used
        // again when it's cumulatively acked."
        if sacked {
            t.delivered_mstamp = None;
        }
    }

    /// `tcp_rate_gen` at the end of an ACK: `losses` segments newly marked
    /// lost, the RTT of the newest (S)ACKed segment, and the connection's
    /// minimum RTT (`tcp_min_rtt`; None before any sample).
    pub fn gen(&mut self, now: Time, losses: u64, rtt: Option<Time>, min_rtt: Option<Time>) {
        let delivered = self.delivered - self.ack_prior_delivered;
        // "Clear app limited if bubble is acked and gone."
        if self.app_limited != 0
            && (self.app_limited == APP_LIMITED_INIT || self.delivered > self.app_limited)
        {
            self.app_limited = 0;
        }
        if delivered > 0 {
            self.delivered_mstamp = now;
        }
        let rs = &mut self.rs;
        rs.acked_sacked = delivered;
        rs.losses = losses;
        rs.rtt = rtt;
        // "Return an invalid sample if no timing information is available."
        let Some(prior) = rs.prior_mstamp else {
            rs.delivered = None;
            rs.interval = None;
            return;
        };
        let d = self.delivered - rs.prior_delivered;
        rs.delivered = Some(d);
        // "Model sending data and receiving ACKs as separate pipeline phases
        // for a window ... To be safe we use the longer phase."
        rs.rcv_interval = now.saturating_sub(prior);
        let interval = rs.snd_interval.max(rs.rcv_interval);
        // "Normally we expect interval_us >= min-rtt."
        if min_rtt.is_some_and(|m| interval < m) {
            rs.interval = None;
            return;
        }
        rs.interval = Some(interval);
        // "Record the last non-app-limited or the highest app-limited bw."
        if !rs.is_app_limited
            || d as u128 * self.rate_interval as u128
                >= self.rate_delivered as u128 * interval as u128
        {
            self.rate_delivered = d;
            self.rate_interval = interval;
            self.rate_app_limited = rs.is_app_limited;
        }
    }

    /// `tcp_rate_check_app_limited`, when the application writes: with less
    /// than one segment unsent (`unsent_lt_mss`), fewer segments in flight
    /// than cwnd and every lost segment retransmitted, the pipe has a bubble
    /// the application made; samples until it is delivered are app-limited.
    pub fn check_app_limited(
        &mut self,
        unsent_lt_mss: bool,
        cwnd_open: bool,
        lost_repaired: bool,
        in_flight: u64,
    ) {
        if unsent_lt_mss && cwnd_open && lost_repaired {
            self.app_limited = (self.delivered + in_flight).max(1);
        }
    }

    /// The latest sample's delivery rate (`tp->rate_delivered /
    /// tp->rate_interval_us`), bytes per second, for the time series.
    pub fn latest_rate(&self, mss: u64) -> u64 {
        if self.rate_interval == 0 {
            return 0;
        }
        (self.rate_delivered as u128 * mss as u128 * 1_000_000_000 / self.rate_interval as u128)
            as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    const MS: Time = 1_000_000;

    /// Ten segments sent back to back at t = 0 ms into an idle pipe, ACKed one
    /// per ms from 50 ms on: each sample's interval is the ACK phase from the
    /// first send (the send phase is shorter), and the first flight is
    /// app-limited (Linux starts with `app_limited = ~0U`).
    #[test]
    fn ack_phase_and_initial_bubble() {
        let mut r = RateEstimator::default();
        for k in 0..10 {
            r.on_sent_new(k, 10 * MS);
        }
        assert!(r
            .records()
            .iter()
            .all(|t| t.app_limited && t.delivered == 0));
        r.begin_ack(10);
        r.pop_front();
        r.on_delivered(0, 1449, 10 * MS, false, false);
        r.gen(60 * MS, 0, Some(50 * MS), Some(50 * MS));
        assert_eq!(r.rs.delivered, Some(1));
        assert_eq!(r.rs.interval, Some(50 * MS));
        assert!(r.rs.is_app_limited);
        assert_eq!(r.app_limited, 0, "the first ACK ends the initial bubble");
        // Second ACK, one ms later: two delivered over 51 ms.
        r.begin_ack(9);
        r.on_delivered(0, 2 * 1449, 10 * MS, false, false);
        r.pop_front();
        r.gen(61 * MS, 0, Some(51 * MS), Some(50 * MS));
        assert_eq!((r.rs.delivered, r.rs.interval), (Some(2), Some(51 * MS)));
        assert_eq!(r.rs.rate_bytes_per_s(1000), Some(2000 * 1000 / 51));
        // Segments sent now are not app-limited and carry delivered = 2.
        r.on_sent_new(8, 61 * MS);
        let last = *r.records().back().unwrap();
        assert_eq!((last.delivered, last.app_limited), (2, false));
        assert_eq!(last.delivered_mstamp, Some(61 * MS));
    }

    /// A SACKed segment starts no second sample when it is cumulatively
    /// acknowledged; of several delivered segments the most recently sent
    /// one gives the starting point.
    #[test]
    fn newest_sent_starts_the_sample_and_sacked_once() {
        let mut r = RateEstimator {
            app_limited: 0,
            ..Default::default()
        };
        r.on_sent_new(0, 0);
        r.on_sent_new(1, MS);
        r.on_sent_new(2, 2 * MS);
        r.begin_ack(3);
        r.on_delivered(2, 3000, 2 * MS, false, true); // SACK of the third
        r.gen(40 * MS, 1, None, None);
        assert_eq!(r.rs.losses, 1);
        assert_eq!(r.rs.snd_interval, 2 * MS);
        assert_eq!(r.rs.interval, Some(40 * MS));
        assert_eq!(r.records()[2].delivered_mstamp, None);
        // Cumulative ACK of all three: the SACKed one is skipped, the second
        // (sent at 1 ms) is the newest with timing information.
        r.begin_ack(2);
        r.on_delivered(0, 1000, 0, false, false);
        r.on_delivered(1, 2000, MS, false, false);
        // (The SACKed one is not shown again: it was counted on its SACK and
        // its record holds no timing any more.)
        assert_eq!(r.delivered, 3);
        assert_eq!(r.rs.last_end_seq, 2000);
        assert_eq!(r.rs.prior_delivered, 0);
    }

    /// An interval shorter than the minimum RTT is not a valid sample
    /// (ACK compression of a retransmission, for instance).
    #[test]
    fn interval_below_min_rtt_is_invalid() {
        let mut r = RateEstimator::default();
        r.on_sent_new(0, 100 * MS);
        r.begin_ack(1);
        r.on_delivered(0, 1000, 100 * MS, true, false);
        r.gen(110 * MS, 0, None, Some(50 * MS));
        assert_eq!(r.rs.interval, None);
        assert_eq!(r.rs.delivered, Some(1));
    }

    /// An application that leaves less than a segment unsent while cwnd has
    /// room marks the pipe app-limited until the bubble's data is delivered.
    #[test]
    fn app_limited_bubble() {
        let mut r = RateEstimator {
            app_limited: 0,
            delivered: 100,
            ..Default::default()
        };
        r.check_app_limited(true, false, true, 5);
        assert_eq!(r.app_limited, 0, "cwnd-limited: not app-limited");
        r.check_app_limited(true, true, true, 5);
        assert_eq!(r.app_limited, 105);
        r.on_sent_new(0, 0);
        assert!(r.records()[0].app_limited);
        r.begin_ack(5);
        r.delivered = 105;
        r.gen(MS, 0, None, None);
        assert_eq!(r.app_limited, 105, "not yet past the bubble");
        r.begin_ack(5);
        r.delivered = 106;
        r.gen(2 * MS, 0, None, None);
        assert_eq!(r.app_limited, 0);
    }
}
