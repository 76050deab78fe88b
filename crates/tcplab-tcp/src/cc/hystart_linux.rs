//! HyStart as Linux's `tcp_cubic.c` runs it (`hystart = 1`,
//! `hystart_detect = 3`, `hystart_low_window = 16`,
//! `hystart_ack_delta_us = 2000`): leave slow start (ssthresh = cwnd) when
//! either
//!
//! - an **ACK train** — ACKs arriving at most 2 ms apart since the start of
//!   the round — has lasted longer than (delay_min + ack_delay) / 2
//!   (`hystart_update`, HYSTART_ACK_TRAIN; the halving applies because the
//!   sender is not paced), or
//! - the **delay** — the smallest RTT of the round's first 8 ACKs — exceeds
//!   delay_min + clamp(delay_min / 8, 4 ms, 16 ms) (HYSTART_DELAY).
//!
//! A round starts when SND.UNA passes the SND.NXT recorded at the previous
//! round start (`bictcp_hystart_reset`), counted from the first ACK; the
//! tests run only while cwnd ≥ 16 segments.
//! Unlike HyStart++ (RFC 9406, `hystart.rs`) there is no conservative slow
//! start: the exit goes straight to congestion avoidance.

use crate::{Time, NS_PER_MS};

const NS_PER_US: Time = 1_000;

/// `hystart_low_window`: segments.
pub const LOW_WINDOW: u64 = 16;
/// `hystart_ack_delta_us`.
pub const ACK_DELTA: Time = 2 * NS_PER_MS;
/// HYSTART_MIN_SAMPLES.
pub const MIN_SAMPLES: u32 = 8;
/// HYSTART_DELAY_MIN / HYSTART_DELAY_MAX.
pub const DELAY_MIN: Time = 4 * NS_PER_MS;
pub const DELAY_MAX: Time = 16 * NS_PER_MS;

/// Why slow start ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    AckTrain,
    Delay,
}

#[derive(Clone, Copy, Debug, Default)]
pub struct HyStartLinux {
    /// `ca->found`: slow start was left.
    pub found: Option<Exit>,
    round_start: Time,
    last_ack: Time,
    /// SND.NXT at the round start (`ca->end_seq`).
    end_seq: u64,
    /// Smallest RTT of the round so far (`ca->curr_rtt`; None = ~0U).
    curr_rtt: Option<Time>,
    sample_cnt: u32,
    /// Smallest RTT seen (`ca->delay_min`).
    delay_min: Option<Time>,
    started: bool,
}

impl HyStartLinux {
    /// `bictcp_hystart_reset`.
    fn reset(&mut self, now: Time, snd_nxt: u64) {
        self.round_start = now;
        self.last_ack = now;
        self.end_seq = snd_nxt;
        self.curr_rtt = None;
        self.sample_cnt = 0;
        self.started = true;
    }

    /// After a timeout (`bictcp_state` on TCP_CA_Loss: `bictcp_reset` and
    /// `bictcp_hystart_reset`): HyStart runs again in the next slow start.
    pub fn on_loss(&mut self) {
        self.found = None;
        self.started = false;
    }

    /// `bictcp_acked` + `hystart_update` for one ACK with an RTT sample.
    /// `ack_delay` is `hystart_ack_delay` (≤ 1 ms). Returns the exit when
    /// this ACK ends slow start (the caller sets ssthresh = cwnd).
    #[allow(clippy::too_many_arguments)]
    pub fn on_ack(
        &mut self,
        now: Time,
        rtt: Time,
        snd_una: u64,
        snd_nxt: u64,
        in_slow_start: bool,
        cwnd_segs: u64,
        ack_delay: Time,
    ) -> Option<Exit> {
        let delay = rtt.max(NS_PER_US);
        // "first time call or link delay decreases"
        if self.delay_min.is_none_or(|d| d > delay) {
            self.delay_min = Some(delay);
        }
        if self.found.is_some() || !in_slow_start {
            return None;
        }
        let delay_min = self.delay_min.unwrap();
        // hystart_update: rounds are counted from the first ACK on, below
        // hystart_low_window too (since Linux 6.13, "tcp_cubic: fix incorrect
        // HyStart round start detection"; before it the first round started
        // only at cwnd = 16, out of phase with the flight).
        if !self.started || snd_una > self.end_seq {
            self.reset(now, snd_nxt);
        }
        if cwnd_segs < LOW_WINDOW {
            return None;
        }
        // HYSTART_ACK_TRAIN
        if now.saturating_sub(self.last_ack) <= ACK_DELTA {
            self.last_ack = now;
            // Not paced (no fq): the threshold is halved.
            let threshold = (delay_min + ack_delay) / 2;
            if now - self.round_start > threshold {
                self.found = Some(Exit::AckTrain);
                return self.found;
            }
        }
        // HYSTART_DELAY
        self.curr_rtt = Some(self.curr_rtt.map_or(delay, |c| c.min(delay)));
        if self.sample_cnt < MIN_SAMPLES {
            self.sample_cnt += 1;
        } else if self.curr_rtt.unwrap() > delay_min + (delay_min / 8).clamp(DELAY_MIN, DELAY_MAX) {
            self.found = Some(Exit::Delay);
            return self.found;
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    const MS: Time = NS_PER_MS;

    #[test]
    fn delay_increase_after_eight_samples() {
        let mut h = HyStartLinux::default();
        // Round 1: 40 ms RTTs, 10 ACKs 2.4 ms apart (no ACK train).
        let mut now = 0;
        for k in 0..10 {
            now += 2400 * NS_PER_US;
            assert_eq!(h.on_ack(now, 40 * MS, 100 + k, 1000, true, 20, MS), None);
        }
        // Round 2 (SND.UNA passed 1000): RTTs 44 ms — threshold is
        // 40 + clamp(5, 4, 16) = 45 ms: no exit.
        for k in 0..10 {
            now += 2400 * NS_PER_US;
            assert_eq!(h.on_ack(now, 44 * MS, 1001 + k, 2000, true, 40, MS), None);
        }
        // Round 3: 46 ms: the 9th ACK of the round exits.
        let mut exit = None;
        for k in 0..10 {
            now += 2400 * NS_PER_US;
            exit = exit.or(h.on_ack(now, 46 * MS, 2001 + k, 3000, true, 80, MS));
            if exit.is_some() {
                assert_eq!(k, 8);
                break;
            }
        }
        assert_eq!(exit, Some(Exit::Delay));
    }

    #[test]
    fn ack_train_longer_than_half_the_min_delay() {
        let mut h = HyStartLinux::default();
        let mut now = 0;
        // ACKs 1 ms apart, RTT 40 ms: threshold (40 + 1) / 2 = 20.5 ms.
        let mut exit_at = None;
        for k in 0..40u64 {
            now += MS;
            if h.on_ack(now, 40 * MS, 100 + k, 10_000, true, 32, MS)
                .is_some()
            {
                exit_at = Some(k);
                break;
            }
        }
        // Round started at the first ACK (1 ms); 21 ms later > 20.5 ms.
        assert_eq!(exit_at, Some(21));
        assert_eq!(h.found, Some(Exit::AckTrain));
    }

    /// The round runs from its first ACK even when cwnd reaches
    /// hystart_low_window only later in it (Linux ≥ 6.13 hystart_update):
    /// such a round cannot show a train (its last ACK time is stale), the
    /// next one, started when SND.UNA passes the round's SND.NXT, can.
    #[test]
    fn round_starts_below_the_low_window() {
        let mut h = HyStartLinux::default();
        let mut exit_at = None;
        for k in 1..200u64 {
            let cwnd = if k < 10 { 10 } else { 32 };
            // SND.UNA passes the first round's SND.NXT (10_000) at k = 100.
            let (snd_una, snd_nxt) = (100 * k, if k <= 100 { 10_000 } else { 30_000 });
            if h.on_ack(k * MS, 40 * MS, snd_una, snd_nxt, true, cwnd, MS)
                .is_some()
            {
                exit_at = Some(k);
                break;
            }
        }
        // Second round from 101 ms; 21 ms later > (40 + 1) / 2 ms. (Starting
        // the round at cwnd = 16, k = 10, would have exited at k = 31.)
        assert_eq!(exit_at, Some(122));
    }

    #[test]
    fn inactive_below_low_window_and_after_exit() {
        let mut h = HyStartLinux::default();
        for k in 0..100u64 {
            assert_eq!(h.on_ack(k * MS, 40 * MS, k, 10_000, true, 15, MS), None);
        }
        h.found = Some(Exit::Delay);
        assert_eq!(h.on_ack(200 * MS, 90 * MS, 1, 2, true, 50, MS), None);
        h.on_loss();
        assert!(h.found.is_none());
    }
}
