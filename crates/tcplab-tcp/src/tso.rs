//! How Linux's sender cuts new data into skbs and when it holds it back
//! (`tso_model = "linux"`; docs/linux-stack.md, "Linux's skbs").
//!
//! `tcp_write_xmit` (tcp_output.c) sends the write queue one skb at a time.
//! For each skb, in order:
//!
//! - **The quota** (`tcp_cwnd_test`): nothing while `packets_in_flight >=
//!   cwnd`, else `min(cwnd - in_flight, max(cwnd / 2, 1))` segments ("ensure
//!   we have at least 2 GSO packets in flight"), at most `max_segs`.
//! - **The skb size goal** (`tcp_tso_segs` → `tcp_tso_autosize`): about 1 ms
//!   at the pacing rate (`sk_pacing_rate >> sk_pacing_shift`, shift 10), plus
//!   `GSO_MAX_SIZE >> (min_rtt_us >> tcp_tso_rtt_log)` on short paths, at most
//!   `sk_gso_max_size`, at least the controller's `min_tso_segs` (2). The
//!   pacing rate is `tcp_update_pacing_rate`'s even when the flow is not
//!   paced: Linux keeps `sk_pacing_rate` for every socket.
//! - **Deferral** (`tcp_tso_should_defer`), for an skb of more than one
//!   segment: hold it back, and wait for the next ACK, when
//!   1. the connection is not in Recovery or Loss (`icsk_ca_state`),
//!   2. the last transmission is less than 1 ms old (`tcp_wstamp_ns`),
//!   3. the opening, `min(send window, cwnd room)`, holds fewer than
//!      `max_segs` segments,
//!   4. the skb is the write queue's tail, or the opening is shorter than it,
//!   5. the opening is below `min(snd_wnd, cwnd) / tcp_tso_win_divisor` (3),
//!   6. the ACK of the oldest unacknowledged skb is due (its send time +
//!      SRTT) within `min(SRTT / 2, 1 ms)` (the 6.18 rule),
//!   7. and the skb would get more data (no FIN).
//! - **The cut** (`tcp_mss_split_point` and `tso_fragment`): the skb leaves
//!   with the quota's segments, fewer when the window or the data end first
//!   (a short last segment only when Nagle allows it); its segments leave back
//!   to back (software GSO), the rest waits in the queue.
//!
//! Retransmissions (`tcp_xmit_retransmit_queue`) are not deferred. Not
//! modelled: `tcp_grow_skb` (a short send head taking data from the next
//! skb), `tcp_small_queue_check` (the device takes every skb at once here).

use crate::pacing::Pacer;
use crate::Time;

/// `sk_pacing_shift` (10: skbs of about 1 ms at the pacing rate).
const PACING_SHIFT: u32 = 10;
/// `sk_gso_max_size` (`GSO_LEGACY_MAX_SIZE`).
pub const GSO_MAX_SIZE: u64 = 65_536;
/// `net.ipv4.tcp_tso_rtt_log`.
const TSO_RTT_LOG: u32 = 9;
/// `sk_gso_max_segs` (`GSO_MAX_SEGS`).
const GSO_MAX_SEGS: u64 = 65_535;
/// `net.ipv4.tcp_tso_win_divisor`.
const TSO_WIN_DIVISOR: u64 = 3;
/// `NSEC_PER_MSEC`.
const MSEC: Time = 1_000_000;

/// Which transmit path a connection runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TsoKind {
    /// New data leaves as soon as cwnd and the windows allow, segment by segment.
    #[default]
    None,
    /// Linux's `tcp_write_xmit`: skbs, `tcp_cwnd_test` and `tcp_tso_should_defer`.
    Linux,
}

impl TsoKind {
    pub const NAMES: [&'static str; 2] = ["none", "linux"];

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "none" => Some(TsoKind::None),
            "linux" => Some(TsoKind::Linux),
            _ => None,
        }
    }
}

/// `tcp_tso_autosize` with the controller's `min_tso_segs`: segments per skb
/// at the pacing rate `rate` (bytes/s; None: `~0UL`, unlimited) and `min_rtt`
/// (`tcp_min_rtt`, None before a sample).
pub fn autosize(rate: Option<u64>, mss: u64, min_tso_segs: u32, min_rtt: Option<Time>) -> u64 {
    let mss = mss.max(1);
    let Some(rate) = rate else {
        // Unlimited rate: sk_pacing_rate >> 10 exceeds the GSO limit.
        return (GSO_MAX_SIZE / mss).clamp(min_tso_segs as u64, GSO_MAX_SEGS);
    };
    let mut bytes = rate >> PACING_SHIFT;
    // "Goal is to send at least one packet per ms, not one big TSO packet
    // every 100 ms": add GSO_MAX_SIZE >> (min_rtt_us >> tcp_tso_rtt_log).
    let r = min_rtt.map_or(u64::MAX, |m| (m / 1_000) >> TSO_RTT_LOG);
    if r < 32 {
        bytes += GSO_MAX_SIZE >> r;
    }
    let bytes = bytes.min(GSO_MAX_SIZE);
    (bytes / mss).max(min_tso_segs as u64).min(GSO_MAX_SEGS)
}

/// `tcp_cwnd_test`: segments the next skb may take (0: cwnd is full).
pub fn cwnd_quota(cwnd_pkts: u64, in_flight: u64) -> u64 {
    if in_flight >= cwnd_pkts {
        return 0;
    }
    // "For better scheduling, ensure we have at least 2 GSO packets in flight."
    let halfcwnd = (cwnd_pkts >> 1).max(1);
    halfcwnd.min(cwnd_pkts - in_flight)
}

/// The send head skb and the sender's state, as `tcp_tso_should_defer` and
/// `tcp_mss_split_point` read them (bytes unless named otherwise).
#[derive(Clone, Copy, Debug)]
pub struct SendHead {
    pub now: Time,
    pub mss: u64,
    /// `icsk_ca_state >= TCP_CA_Recovery`.
    pub in_recovery_or_loss: bool,
    /// `tp->tcp_wstamp_ns`.
    pub wstamp: Time,
    /// `tcp_packets_in_flight` and `tcp_snd_cwnd`, segments.
    pub in_flight: u64,
    pub cwnd_pkts: u64,
    /// `tcp_wnd_end(tp) - seq`: the peer's window left from the skb's start.
    pub send_win: u64,
    /// `tp->snd_wnd`.
    pub snd_wnd: u64,
    /// `tcp_tso_segs`.
    pub max_segs: u64,
    /// The unsent skb: its length and whether it is the write queue's tail.
    pub skb_len: u64,
    pub skb_is_tail: bool,
    /// The skb carries FIN (or the application's end of record).
    pub skb_fin: bool,
    /// Send time of the oldest unacknowledged skb (`tcp_rtx_queue_head`).
    pub head_sent_at: Option<Time>,
    /// SRTT, ns (0 before a sample).
    pub srtt: Time,
}

impl SendHead {
    /// `tcp_tso_should_defer` (6.18): hold the skb back to build a fuller
    /// one on the next ACK? Called for skbs of more than one segment.
    pub fn should_defer(&self) -> bool {
        // if (icsk->icsk_ca_state >= TCP_CA_Recovery) goto send_now;
        if self.in_recovery_or_loss {
            return false;
        }
        // "Avoid bursty behavior by allowing defer only if the last write
        // was recent (1 ms)": delta = tcp_clock_cache - tcp_wstamp_ns - 1 ms.
        if self.now as i128 - self.wstamp as i128 - MSEC as i128 > 0 {
            return false;
        }
        if self.in_flight >= self.cwnd_pkts {
            // BUG_ON(tcp_snd_cwnd(tp) <= in_flight): the caller checked.
            return false;
        }
        let cong_win = (self.cwnd_pkts - self.in_flight) * self.mss;
        let limit = self.send_win.min(cong_win);
        // "If a full-sized TSO skb can be sent, do it."
        if limit >= self.max_segs * self.mss {
            return false;
        }
        // "Middle in queue won't get any more data, full sendable already?"
        if !self.skb_is_tail && limit >= self.skb_len {
            return false;
        }
        // "If at least some fraction of a window is available, just use it."
        let chunk = self.snd_wnd.min(self.cwnd_pkts * self.mss) / TSO_WIN_DIVISOR;
        if limit >= chunk {
            return false;
        }
        let Some(head_sent_at) = self.head_sent_at else {
            return false;
        };
        // "If next ACK is likely to come too late, ie in more than min(1ms,
        // half srtt), do not defer."
        let how_far_is_the_ack = head_sent_at as i128 + self.srtt as i128 - self.now as i128;
        let threshold = (self.srtt >> 1).min(MSEC);
        if how_far_is_the_ack - threshold as i128 > 0 {
            return false;
        }
        // "Ok, it looks like it is advisable to defer": cwnd-limited,
        // rwnd-limited, or application-limited.
        if cong_win < self.send_win {
            if cong_win <= self.skb_len {
                return true;
            }
        } else if self.send_win <= self.skb_len {
            return true;
        }
        // "If this packet won't get more data, do not wait."
        !self.skb_fin
    }

    /// `tcp_mss_split_point` for a quota of `max_segs` segments: the bytes of
    /// the skb that leave now. `nagle_holds` is `tcp_nagle_check` for a short
    /// last segment.
    pub fn split_point(&self, max_segs: u64, nagle_holds: bool) -> u64 {
        let window = self.send_win;
        let max_len = self.mss * max_segs;
        if max_len <= window && !self.skb_is_tail {
            return max_len;
        }
        let needed = self.skb_len.min(window);
        if max_len <= needed {
            return max_len;
        }
        let partial = needed % self.mss;
        if partial != 0 && nagle_holds {
            return needed - partial;
        }
        needed
    }
}

/// A connection's transmit-path state.
#[derive(Clone, Debug, Default)]
pub struct Tso {
    /// `sk_pacing_rate` of a flow that does not pace (`tcp_update_pacing_rate`
    /// after each ACK); a paced flow's pacer holds its own.
    pub rate: Pacer,
    /// `tp->tcp_wstamp_ns` of a flow that does not pace: the last
    /// transmission's time.
    pub last_xmit: Time,
    /// The skb being transmitted: started at `skb_at`, `skb_left` segments to go.
    skb_at: Time,
    skb_left: u64,
    skb_segs: u64,
    /// `tp->max_window`.
    pub max_window: u64,
    /// Skbs held back by `tcp_tso_should_defer` (counted once per hold).
    pub deferrals: u64,
    /// An skb is held back until the next `tcp_write_xmit` trigger.
    deferring: bool,
}

impl Tso {
    /// Is an skb started at `now` still going out?
    #[inline]
    pub fn in_skb(&self, now: Time) -> bool {
        self.skb_left > 0 && self.skb_at == now
    }

    /// An skb of `segs` segments starts at `now`.
    pub fn start_skb(&mut self, now: Time, segs: u64) {
        self.skb_at = now;
        self.skb_left = segs.max(1);
        self.skb_segs = segs.max(1);
        self.deferring = false;
    }

    /// Segments of the current skb.
    pub fn skb_segs(&self) -> u64 {
        self.skb_segs
    }

    /// Is the next segment the last of the current skb?
    pub fn last_of_skb(&self) -> bool {
        self.skb_left == 1
    }

    /// A data segment left at `now` (of the current skb, or a retransmission).
    pub fn on_segment(&mut self, now: Time) {
        self.last_xmit = self.last_xmit.max(now);
        self.skb_left = self.skb_left.saturating_sub(1);
    }

    /// The sender held an skb back; it stays held until `rearm`.
    pub fn on_defer(&mut self) {
        if !self.deferring {
            self.deferring = true;
            self.deferrals += 1;
        }
    }

    /// Is an skb held back?
    pub fn deferred(&self) -> bool {
        self.deferring
    }

    /// Something that runs `tcp_write_xmit` happened (an ACK, a write, the
    /// pacing timer): a held skb is looked at again.
    pub fn rearm(&mut self) {
        self.deferring = false;
    }

    /// `tcp_xmit_size_goal`: the largest skb `tcp_sendmsg_locked` builds,
    /// whole segments up to `sk_gso_max_size - 1 - MAX_TCP_HEADER`, at most
    /// half the peer's largest window (`tcp_bound_to_half_wnd`).
    pub fn size_goal(mss: u64, max_window: u64) -> u64 {
        /// `MAX_TCP_HEADER` on x86-64.
        const MAX_TCP_HEADER: u64 = 256;
        let mut goal = GSO_MAX_SIZE - 1 - MAX_TCP_HEADER;
        if max_window > 536 {
            goal = goal.min(max_window / 2);
        }
        let mss = mss.max(1);
        (goal / mss).max(1) * mss
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    const MS: Time = 1_000_000;
    const MSS: u64 = 1448;

    /// tcp_tso_autosize: ~1 ms at the rate, at least min_tso_segs, plus the
    /// short-path bonus; an unlimited rate gives a whole 64 KB.
    #[test]
    fn autosize_follows_the_rate() {
        // 10 MB/s >> 10 = 9765 B; min_rtt 40 ms: 40000 >> 9 = 78 >= 32, no bonus.
        assert_eq!(autosize(Some(10_000_000), MSS, 2, Some(40 * MS)), 6);
        // 8 Mbit/s Reno at 1.2 × cwnd/srtt (case of a 2-packet queue): 2.
        assert_eq!(autosize(Some(1_280_000), MSS, 2, Some(7 * MS)), 2);
        assert_eq!(autosize(Some(1_280_000), MSS, 1, Some(40 * MS)), 1);
        // min_rtt 1 ms: 1000 >> 9 = 1, bonus 32768 B.
        assert_eq!(
            autosize(Some(1_250_000), MSS, 2, Some(MS)),
            (1220 + 32768) / 1448
        );
        assert_eq!(autosize(None, MSS, 2, None), 45);
    }

    #[test]
    fn cwnd_test_keeps_two_skbs_in_flight() {
        assert_eq!(cwnd_quota(10, 10), 0);
        assert_eq!(cwnd_quota(10, 0), 5);
        assert_eq!(cwnd_quota(10, 8), 2);
        assert_eq!(cwnd_quota(1, 0), 1);
    }

    fn head() -> SendHead {
        // Reno at 8 Mbit/s, RTT 6.8 ms, cwnd 5 with 4 in flight: one segment
        // of room, the oldest skb sent one SRTT ago (its ACK is due now).
        SendHead {
            now: 100 * MS,
            mss: MSS,
            in_recovery_or_loss: false,
            wstamp: 100 * MS - MS / 2,
            in_flight: 4,
            cwnd_pkts: 5,
            send_win: 100_000,
            snd_wnd: 100_000,
            max_segs: 2,
            skb_len: 40 * MSS,
            skb_is_tail: true,
            skb_fin: false,
            head_sent_at: Some(100 * MS - 7 * MS),
            srtt: 7 * MS,
        }
    }

    /// Each condition of tcp_tso_should_defer, one at a time.
    #[test]
    fn should_defer_each_condition() {
        let h = head();
        assert!(h.should_defer(), "one segment of room, ACK due: wait");
        assert!(!SendHead {
            in_recovery_or_loss: true,
            ..h
        }
        .should_defer());
        assert!(
            !SendHead {
                wstamp: h.now - MS - 1,
                ..h
            }
            .should_defer(),
            "last transmission more than 1 ms ago"
        );
        assert!(
            SendHead {
                wstamp: h.now - MS,
                ..h
            }
            .should_defer(),
            "exactly 1 ms: delta is not > 0"
        );
        assert!(
            !SendHead { in_flight: 3, ..h }.should_defer(),
            "room for max_segs"
        );
        assert!(
            !SendHead {
                skb_is_tail: false,
                skb_len: MSS,
                ..h
            }
            .should_defer(),
            "a middle skb that fits"
        );
        assert!(
            !SendHead {
                cwnd_pkts: 3,
                in_flight: 2,
                ..h
            }
            .should_defer(),
            "a third of cwnd is available"
        );
        assert!(
            !SendHead {
                head_sent_at: None,
                ..h
            }
            .should_defer(),
            "nothing in flight"
        );
        assert!(
            !SendHead {
                head_sent_at: Some(h.now - 7 * MS + MS + 1),
                ..h
            }
            .should_defer(),
            "ACK due in more than 1 ms"
        );
        assert!(
            SendHead {
                head_sent_at: Some(h.now - 7 * MS + MS),
                ..h
            }
            .should_defer(),
            "ACK due in exactly 1 ms"
        );
        // srtt 1 ms: the threshold is srtt/2.
        let short = SendHead {
            srtt: MS,
            head_sent_at: Some(h.now - MS / 2 + 1),
            ..h
        };
        assert!(!short.should_defer(), "ACK due in more than SRTT/2");
        // Application-limited: the skb is shorter than the opening.
        let app = SendHead {
            skb_len: MSS / 2,
            cwnd_pkts: 30,
            in_flight: 29,
            ..h
        };
        assert!(app.should_defer());
        assert!(!SendHead {
            skb_fin: true,
            ..app
        }
        .should_defer());
    }

    #[test]
    fn split_point_cuts_at_quota_window_and_data() {
        let h = head();
        assert_eq!(h.split_point(2, false), 2 * MSS);
        let small_win = SendHead {
            send_win: MSS + 100,
            ..h
        };
        assert_eq!(small_win.split_point(2, false), MSS + 100);
        assert_eq!(small_win.split_point(2, true), MSS, "Nagle keeps the runt");
        let short = SendHead {
            skb_len: 3 * MSS,
            ..h
        };
        assert_eq!(short.split_point(5, false), 3 * MSS);
    }

    #[test]
    fn size_goal_is_bounded_by_half_the_window() {
        assert_eq!(Tso::size_goal(MSS, 1 << 30), 45 * MSS);
        assert_eq!(Tso::size_goal(MSS, 20_000), 6 * MSS);
    }
}
