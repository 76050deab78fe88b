//! Receiver ACK policy: delayed ACKs (RFC 1122 §4.2.3.2, RFC 5681 §4.2),
//! ACK every N full-sized segments, immediate ACKs for out-of-order data and
//! hole fills (RFC 5681 §4.2), optional quick-ACK start (Linux).

use crate::config::AckPolicyConfig;
use crate::Time;

#[derive(Debug)]
pub struct AckPolicy {
    cfg: AckPolicyConfig,
    /// Full-sized segments received since the last ACK we sent.
    unacked_segs: u32,
    /// Deadline of the delayed-ACK timer.
    deadline: Option<Time>,
    quick_left: u32,
    /// Runtime ACK ratio override (RFC 5690 "ACK Ratio"), if set.
    ratio: Option<u32>,
}

/// What to do after a data segment arrived.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AckNow {
    Yes,
    Later,
}

impl AckPolicy {
    pub fn new(cfg: AckPolicyConfig) -> Self {
        AckPolicy {
            quick_left: cfg.quickack,
            cfg,
            unacked_segs: 0,
            deadline: None,
            ratio: None,
        }
    }

    /// Set the ACK ratio at run time (RFC 5690 §3); None restores `every_n`.
    pub fn set_ratio(&mut self, r: Option<u32>) {
        self.ratio = r.map(|x| x.max(1));
    }

    fn every_n(&self) -> u32 {
        self.ratio.unwrap_or(self.cfg.every_n)
    }

    /// A data segment arrived. `full` = it carried a full MSS; `urgent` =
    /// out-of-order, hole-filling, duplicate or otherwise needing an
    /// immediate ACK.
    pub fn on_data(&mut self, now: Time, full: bool, urgent: bool) -> AckNow {
        if full {
            self.unacked_segs += 1;
        }
        if urgent && self.cfg.immediate_on_ooo {
            // RFC 5681 §4.2: out-of-order / hole-filling ⇒ immediate ACK.
            return AckNow::Yes;
        }
        if self.quick_left > 0 {
            self.quick_left -= 1;
            return AckNow::Yes;
        }
        if self.cfg.max_delay == 0 {
            return AckNow::Yes;
        }
        // RFC 1122 §4.2.3.2 / RFC 5681 §4.2: ACK at least every 2nd (here
        // every N-th) full-sized segment.
        if self.unacked_segs >= self.every_n() {
            return AckNow::Yes;
        }
        if self.deadline.is_none() {
            // RFC 5681 §4.2: an ACK MUST NOT be delayed more than 500 ms
            // after the first unacknowledged segment (checked in Config).
            self.deadline = Some(if self.cfg.periodic {
                // 4.4BSD: TF_DELACK is served by the next 200 ms fast
                // timeout (tcp_fasttimo), a free-running tick.
                (now / self.cfg.max_delay + 1) * self.cfg.max_delay
            } else {
                now.saturating_add(self.cfg.max_delay)
            });
        }
        AckNow::Later
    }

    /// An ACK was sent (for any reason): reset the counters and the timer.
    pub fn on_ack_sent(&mut self) {
        self.unacked_segs = 0;
        self.deadline = None;
    }

    /// Delayed-ACK deadline, if an ACK is being held.
    pub fn deadline(&self) -> Option<Time> {
        self.deadline
    }

    /// Linux's `icsk_ack.quick |= 1` (`tcp_grow_window`): the segment that
    /// grew the receive window is ACKed at once, the quick-ACK count kept.
    pub fn quick_or_one(&mut self) {
        self.quick_left |= 1;
    }

    /// Linux's `icsk_ack.quick = 0` (`__tcp_select_window` with less than
    /// half the buffer free): leave quick-ACK mode.
    pub fn clear_quick(&mut self) {
        self.quick_left = 0;
    }

    /// Re-enter quick-ACK mode (e.g. after idle).
    pub fn enter_quickack(&mut self) {
        self.quick_left = self.cfg.quickack;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::NS_PER_MS;

    fn cfg() -> AckPolicyConfig {
        AckPolicyConfig {
            every_n: 2,
            max_delay: 200 * NS_PER_MS,
            immediate_on_ooo: true,
            quickack: 0,
            periodic: false,
        }
    }

    /// BSD's fast timer: the held ACK leaves at the next 200 ms tick.
    #[test]
    fn periodic_timer_fires_on_the_tick() {
        let mut c = cfg();
        c.periodic = true;
        let mut p = AckPolicy::new(c);
        assert_eq!(p.on_data(10 * NS_PER_MS, true, false), AckNow::Later);
        assert_eq!(p.deadline(), Some(200 * NS_PER_MS));
        p.on_ack_sent();
        assert_eq!(p.on_data(399 * NS_PER_MS, true, false), AckNow::Later);
        assert_eq!(p.deadline(), Some(400 * NS_PER_MS));
        p.on_ack_sent();
        assert_eq!(p.on_data(400 * NS_PER_MS, true, false), AckNow::Later);
        assert_eq!(p.deadline(), Some(600 * NS_PER_MS), "strictly after now");
    }

    /// Delayed-ACK timing: first segment at t=10 ms arms the timer for
    /// 210 ms; the second full segment triggers an ACK at once.
    #[test]
    fn delayed_ack_timing() {
        let mut p = AckPolicy::new(cfg());
        assert_eq!(p.on_data(10 * NS_PER_MS, true, false), AckNow::Later);
        assert_eq!(p.deadline(), Some(210 * NS_PER_MS));
        // a second segment does not move the deadline... it sends the ACK
        assert_eq!(p.on_data(50 * NS_PER_MS, true, false), AckNow::Yes);
        p.on_ack_sent();
        assert_eq!(p.deadline(), None);
        // a lone small segment waits for the timer
        assert_eq!(p.on_data(300 * NS_PER_MS, false, false), AckNow::Later);
        assert_eq!(p.on_data(301 * NS_PER_MS, false, false), AckNow::Later);
        assert_eq!(p.deadline(), Some(500 * NS_PER_MS));
        // out-of-order ⇒ immediately
        assert_eq!(p.on_data(302 * NS_PER_MS, true, true), AckNow::Yes);
    }

    #[test]
    fn every_n_and_quickack() {
        let mut c = cfg();
        c.every_n = 4;
        c.quickack = 2;
        let mut p = AckPolicy::new(c);
        assert_eq!(p.on_data(0, true, false), AckNow::Yes);
        p.on_ack_sent();
        assert_eq!(p.on_data(0, true, false), AckNow::Yes);
        p.on_ack_sent();
        for _ in 0..3 {
            assert_eq!(p.on_data(0, true, false), AckNow::Later);
        }
        assert_eq!(p.on_data(0, true, false), AckNow::Yes);
        p.on_ack_sent();
        p.set_ratio(Some(1));
        assert_eq!(p.on_data(0, true, false), AckNow::Yes);
    }

    /// `quick |= 1` ACKs the next segment at once without adding to a
    /// running quick-ACK count; `clear_quick` ends quick-ACK mode.
    #[test]
    fn quick_or_one_and_clear() {
        let mut c = cfg();
        c.quickack = 2;
        let mut p = AckPolicy::new(c);
        p.quick_or_one(); // 2 | 1 = 3
        for _ in 0..3 {
            assert_eq!(p.on_data(0, true, false), AckNow::Yes);
            p.on_ack_sent();
        }
        assert_eq!(p.on_data(0, true, false), AckNow::Later);
        p.quick_or_one(); // 0 | 1 = 1
        assert_eq!(p.on_data(0, true, false), AckNow::Yes);
        p.on_ack_sent();
        p.quick_or_one();
        p.clear_quick();
        assert_eq!(p.on_data(0, true, false), AckNow::Later);
    }
}
