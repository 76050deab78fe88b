//! The sender's socket buffer in Linux's units, and the application that
//! fills it (`snd_buf_model = "linux"`; docs/linux-stack.md).
//!
//! Linux charges the send buffer by the true size of its buffers, not by
//! payload: `sk_wmem_queued` is the sum of `skb->truesize` over the write
//! queue (unsent) and the retransmission queue (sent, not yet cumulatively
//! acknowledged, SACKed or not). Each skb costs its payload plus the empty
//! skb `tcp_stream_alloc_skb` allocates (`SKB_EMPTY_TRUESIZE`), so the same
//! bytes cost more the more skbs they are cut into:
//!
//! - `tcp_sendmsg_locked` appends to the unsent tail skb up to the size goal
//!   (`tcp_xmit_size_goal`: 64 KB, at most half the peer's largest window)
//!   and starts a new skb only while `sk_stream_memory_free`
//!   (`sk_wmem_queued < sk_sndbuf`);
//! - `tcp_write_xmit` cuts the unsent skb at each transmission
//!   (`tso_fragment`): one skb per burst of `tcp_tso_segs` segments;
//! - SACK processing cuts an skb at a block's edges (`tcp_match_skb_to_sack`
//!   → `tcp_fragment`) and shifts newly SACKed skbs into the SACKed skb
//!   before them (`tcp_shift_skb_data`, `tcp_shifted_skb`), freeing them;
//! - a cumulative ACK frees whole skbs (`tcp_clean_rtx_queue`) and trims the
//!   one it ends in (`tcp_trim_head`).
//!
//! `sk_sndbuf` starts at `tcp_wmem[1]` and grows by `tcp_sndbuf_expand`
//! (at establishment and from `tcp_new_space`) to the congestion control's
//! `sndbuf_expand` (BBR 3, else 2) times cwnd worst-case skbs, capped at
//! `tcp_wmem[2]` (the flow's `snd_buf`).
//!
//! The application is the validation testbed's bulk sender: it writes
//! `APP_WRITE` bytes per `send()` whenever `select()` reports the socket
//! writable (`tcp_poll` → `sk_stream_is_writeable`: free space at least half
//! of what is queued), sleeps otherwise (`SOCK_NOSPACE`), and is woken after
//! an incoming ACK, once its transmissions are out, when the socket is
//! writable again (`tcp_data_snd_check` → `tcp_check_space` → `tcp_new_space`
//! → `sk_stream_write_space`; since Linux 5.16 without the former
//! `SOCK_QUEUE_SHRUNK` condition). Each `send()` starts with
//! `tcp_rate_check_app_limited` (the connection's).
//!
//! - a retransmission cuts the lost skb after the segments sent
//!   (`__tcp_retransmit_skb`: `tcp_fragment` to the cwnd quota, at most
//!   `tcp_tso_segs`): the kernel retransmits mostly one-segment skbs in
//!   recovery, each a new skb.
//!
//! - a write's tail shorter than a segment that leaves before the next write
//!   fills its skb is a short segment, which Linux counts as one packet when
//!   it is acknowledged (`tcp_skb_pcount`), not by its bytes.
//!
//! Departures: `tcp_collapse_retrans` does not merge retransmitted skbs (it
//! only merges what fits in one MSS, never full-sized segments), and a
//! trimmed head skb gives back its payload bytes. The skb count is kept as
//! the start offsets of the skbs, in sequence order.

use crate::Time;
use std::collections::VecDeque;

/// `SKB_DATA_ALIGN(sizeof(struct sk_buff))` on x86-64 (232 bytes, 64-byte aligned).
const SKB_STRUCT: u64 = 256;
/// `SKB_DATA_ALIGN(sizeof(struct skb_shared_info))` on x86-64.
const SKB_SHINFO: u64 = 320;
/// `MAX_TCP_HEADER`: `L1_CACHE_ALIGN(128 + MAX_HEADER)` with `MAX_HEADER` 128.
const MAX_TCP_HEADER: u64 = 256;
/// `skb->truesize` of the empty skb `tcp_stream_alloc_skb` allocates
/// (`alloc_skb_fclone(MAX_TCP_HEADER)`: a small head of
/// `SKB_HEAD_ALIGN(MAX_TCP_HEADER)` bytes, `SKB_TRUESIZE(MAX_TCP_HEADER)`).
/// The kernel's own counters agree: its first 64 KiB write queued 75 520 bytes
/// in 12 skbs (65 536 + 12 × 832).
pub const SKB_EMPTY_TRUESIZE: u64 = MAX_TCP_HEADER + SKB_STRUCT + SKB_SHINFO;
/// `tcp_wmem[1]`, the initial `sk_sndbuf` (kernel default).
pub const TCP_WMEM_DEFAULT: u64 = 16_384;
/// `TCP_INIT_CWND`.
const TCP_INIT_CWND: u64 = 10;
/// Bytes the sending application offers per `send()` (the testbed's sender:
/// 64 KiB).
pub const APP_WRITE: u64 = 65_536;

/// Which send-buffer model a connection runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SndBufKind {
    /// `snd_buf` payload bytes past SND.UNA; the application never runs dry.
    #[default]
    Fixed,
    /// Linux's `sk_wmem_queued`/`sk_sndbuf` and a writer woken on writability.
    Linux,
}

impl SndBufKind {
    pub const NAMES: [&'static str; 2] = ["fixed", "linux"];

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "fixed" => Some(SndBufKind::Fixed),
            "linux" => Some(SndBufKind::Linux),
            _ => None,
        }
    }
}

/// One connection's send buffer (Linux's units) and its writer's state.
#[derive(Clone, Debug)]
pub struct SndBuf {
    /// `sk_sndbuf`.
    sndbuf: u64,
    /// `tcp_wmem[2]`.
    wmem_max: u64,
    /// The congestion control's `.sndbuf_expand` (2 without one).
    expand_factor: u64,
    /// `max(tp->rx_opt.mss_clamp, tp->mss_cache)`.
    mss_clamp: u64,
    /// Start offsets of the skbs holding [first, end), in order.
    skbs: VecDeque<u64>,
    /// `tp->write_seq` as an offset: one past the last byte written.
    end: u64,
    /// One past the last new byte transmitted (`tp->snd_nxt` for data).
    sent: u64,
    /// The current transmission burst: its time and segments left.
    burst_at: Time,
    burst_left: u64,
    /// A boundary put at the end of the last transmitted segment, moved on
    /// while the burst goes on (`tso_fragment` cuts at the burst's end).
    split_at: Option<u64>,
    /// The current retransmission burst (`tcp_xmit_retransmit_queue`): its
    /// time, segments left, and the cut put after its last segment.
    rtx_at: Time,
    rtx_left: u64,
    rtx_split_at: Option<u64>,
    /// `SOCK_NOSPACE`: the writer sleeps until the socket is writable.
    pub nospace: bool,
    /// An ACK arrived since the last `tcp_check_space`.
    acked: bool,
    /// `tp->max_window`: the largest window the peer offered.
    max_window: u64,
    /// `send()` calls made (for tests and diagnostics).
    pub sends: u64,
    /// Short segments in flight (a write's tail sent before the next write
    /// filled its skb): their ends and what each lacks of a whole segment.
    shorts: VecDeque<(u64, u64)>,
}

impl SndBuf {
    /// A socket with `tcp_wmem[2] = wmem_max`, a segment size of `mss` and
    /// the congestion control's `sndbuf_expand`.
    pub fn new(wmem_max: u64, mss: u64, expand_factor: u64) -> Self {
        Self {
            sndbuf: TCP_WMEM_DEFAULT.min(wmem_max),
            wmem_max,
            expand_factor,
            mss_clamp: mss,
            skbs: VecDeque::new(),
            end: 1,
            sent: 1,
            burst_at: 0,
            burst_left: 0,
            split_at: None,
            rtx_at: 0,
            rtx_left: 0,
            rtx_split_at: None,
            nospace: false,
            acked: false,
            max_window: 0,
            sends: 0,
            shorts: VecDeque::new(),
        }
    }

    /// The peer's window, for its largest (`tp->max_window`).
    pub fn note_window(&mut self, wnd: u64) {
        self.max_window = self.max_window.max(wnd);
    }

    /// The peer's MSS option (`tp->rx_opt.mss_clamp`).
    pub fn set_mss_clamp(&mut self, mss: u64) {
        self.mss_clamp = self.mss_clamp.max(mss);
    }

    /// `sk_sndbuf`.
    pub fn sndbuf(&self) -> u64 {
        self.sndbuf
    }

    /// One past the last byte the application has written (`write_seq`).
    pub fn write_end(&self) -> u64 {
        self.end
    }

    /// Buffers held (`skb` count).
    pub fn skbs(&self) -> usize {
        self.skbs.len()
    }

    /// `sk_wmem_queued`: payload plus one empty skb's truesize per skb.
    pub fn wmem_queued(&self) -> u64 {
        let first = self.skbs.front().copied().unwrap_or(self.end);
        (self.end - first) + SKB_EMPTY_TRUESIZE * self.skbs.len() as u64
    }

    /// `sk_stream_is_writeable` as `tcp_poll` asks it: `sk_stream_wspace`
    /// (`sk_sndbuf - sk_wmem_queued`) at least `sk_stream_min_wspace`
    /// (`sk_wmem_queued / 2`), and `__sk_stream_memory_free`
    /// (`sk_wmem_queued < sk_sndbuf`; `tcp_notsent_lowat` is unlimited).
    pub fn writeable(&self) -> bool {
        let q = self.wmem_queued();
        q < self.sndbuf && self.sndbuf - q >= q >> 1
    }

    /// `tcp_sndbuf_expand`: room for `sndbuf_expand` × max(cwnd, TCP_INIT_CWND,
    /// reordering + 1) worst-case skbs (one per segment, its head a power of
    /// two: `roundup_pow_of_two(mss + MAX_TCP_HEADER + shinfo) + sk_buff`),
    /// never above `tcp_wmem[2]` and never shrinking.
    pub fn expand(&mut self, cwnd_pkts: u64, reordering: u64) {
        let per_mss =
            (self.mss_clamp + MAX_TCP_HEADER + SKB_SHINFO).next_power_of_two() + SKB_STRUCT;
        let nr_segs = cwnd_pkts.max(TCP_INIT_CWND).max(reordering + 1);
        let sndmem = self.expand_factor * nr_segs * per_mss;
        if self.sndbuf < sndmem {
            self.sndbuf = sndmem.min(self.wmem_max);
        }
    }

    /// `tcp_xmit_size_goal` (`tso.rs`).
    fn size_goal(mss: u64, max_window: u64) -> u64 {
        crate::tso::Tso::size_goal(mss, max_window)
    }

    /// The unsent skb holding offset `at`: its end, and whether it is the
    /// write queue's tail (`tcp_write_queue_tail`).
    pub fn send_head(&self, at: u64) -> (u64, bool) {
        let i = self.skbs.partition_point(|&b| b <= at);
        match self.skbs.get(i) {
            Some(&b) => (b, false),
            None => (self.end, true),
        }
    }

    /// One `send()` of up to `APP_WRITE` bytes, the application's data ending
    /// at offset `limit` (`tcp_sendmsg_locked`'s copy loop): fill the unsent
    /// tail skb to the size goal, start a new skb while
    /// `sk_stream_memory_free`. Returns the bytes taken; fewer than offered
    /// means the buffer is full (`wait_for_space` sets `SOCK_NOSPACE`).
    pub fn sendmsg(&mut self, limit: u64, mss: u64) -> u64 {
        self.sends += 1;
        let want = APP_WRITE.min(limit.saturating_sub(self.end));
        let goal = Self::size_goal(mss, self.max_window);
        let mut copied = 0;
        while copied < want {
            let room = match self.skbs.back() {
                Some(&b) if b >= self.sent => (b + goal).saturating_sub(self.end),
                _ => 0,
            };
            if room == 0 {
                if self.wmem_queued() >= self.sndbuf {
                    self.nospace = true;
                    break;
                }
                self.skbs.push_back(self.end);
                continue;
            }
            let n = room.min(want - copied);
            self.end += n;
            copied += n;
        }
        copied
    }

    /// Put an skb boundary at `at` (`tcp_fragment`/`tso_fragment`), if `at` is
    /// inside an skb; true if it was.
    fn split(&mut self, at: u64) -> bool {
        let Some(&first) = self.skbs.front() else {
            return false;
        };
        if at <= first || at >= self.end {
            return false;
        }
        match self.skbs.binary_search(&at) {
            Err(i) => {
                self.skbs.insert(i, at);
                true
            }
            Ok(_) => false,
        }
    }

    /// Remove the boundary at `at`, if there is one.
    fn unsplit(&mut self, at: u64) {
        if let Ok(i) = self.skbs.binary_search(&at) {
            if i > 0 {
                self.skbs.remove(i);
            }
        }
    }

    /// New data [start, end) leaves (`tcp_write_xmit`): a segment at a new time
    /// or past `tso_segs` starts a new skb; the unsent rest is cut off after
    /// it (`tso_fragment`).
    pub fn on_transmit(&mut self, start: u64, end: u64, now: Time, tso_segs: u64) {
        let continues = self.burst_left > 0 && self.burst_at == now && self.split_at == Some(start);
        if continues {
            self.unsplit(start);
        } else {
            self.split(start);
            self.burst_at = now;
            self.burst_left = tso_segs.max(1);
        }
        self.burst_left -= 1;
        self.split_at = self.split(end).then_some(end);
        self.sent = self.sent.max(end);
    }

    /// A retransmission of [start, end) leaves (`tcp_xmit_retransmit_queue`
    /// → `__tcp_retransmit_skb`): a lost skb longer than what may be sent is
    /// cut after it (`tcp_fragment` to `cur_mss * segs`, `segs` the cwnd
    /// quota, at most `tcp_tso_segs`), so the retransmitted part is an skb of
    /// its own. Segments sent at the same time right after each other, up to
    /// `max_segs`, are one skb.
    pub fn on_retransmit(&mut self, start: u64, end: u64, now: Time, max_segs: u64) {
        let continues = self.rtx_left > 0 && self.rtx_at == now && self.rtx_split_at == Some(start);
        if continues {
            self.unsplit(start);
        } else {
            self.rtx_at = now;
            self.rtx_left = max_segs.max(1);
        }
        self.rtx_left -= 1;
        self.rtx_split_at = self.split(end).then_some(end);
    }

    /// New data shorter than a segment of `mss` bytes left, ending at `end`
    /// (`tcp_minshall_update` sets `snd_sml`).
    pub fn on_short_sent(&mut self, end: u64, len: u64, mss: u64) {
        self.shorts.push_back((end, mss.saturating_sub(len)));
    }

    /// `tcp_nagle_check` for a short segment while data is in flight (the
    /// testbed's sender leaves Nagle on: no `TCP_NODELAY`): Minshall's rule
    /// holds it while an earlier short segment is unacknowledged
    /// (`tcp_minshall_check`: `snd_sml` after `snd_una`), so at most one is in
    /// flight, and the next write fills its skb (`tcp_sendmsg_locked` appends
    /// to the unsent tail).
    pub fn nagle_holds(&self, snd_una: u64) -> bool {
        self.shorts.back().is_some_and(|&(end, _)| end > snd_una)
    }

    /// What a cumulative ACK to `una` adds to the bytes the congestion
    /// control counts as acknowledged, beyond the bytes themselves. Linux
    /// counts acknowledged skbs in packets (`tcp_clean_rtx_queue`'s
    /// `acked_pcount`, which `tcp_slow_start` and `tcp_cong_avoid_ai` add to
    /// cwnd; `tcp_skb_pcount` of a short segment is 1), so a short segment
    /// counts as a whole one and cwnd stays in whole segments, where counting
    /// its bytes would leave cwnd a fraction of a segment short.
    pub fn short_acked_extra(&mut self, una: u64) -> u64 {
        let mut extra = 0;
        while let Some(&(end, lack)) = self.shorts.front() {
            if end > una {
                break;
            }
            extra += lack;
            self.shorts.pop_front();
        }
        extra
    }

    /// A SACK block [left, right) (`tcp_sacktag_walk`): cut at its edges
    /// (`tcp_match_skb_to_sack`), then every skb inside shifts into the first
    /// (`tcp_shift_skb_data`) and is freed.
    pub fn on_sack(&mut self, left: u64, right: u64) {
        let right = right.min(self.sent);
        if left >= right {
            return;
        }
        self.split(left);
        self.split(right);
        let lo = self.skbs.partition_point(|&b| b <= left);
        let hi = self.skbs.partition_point(|&b| b < right);
        if hi > lo {
            self.skbs.drain(lo..hi);
        }
        self.acked = true;
    }

    /// A cumulative ACK to `una` (`tcp_clean_rtx_queue`): free the skbs below
    /// it, trim the one it ends in (`tcp_trim_head`).
    pub fn on_ack(&mut self, una: u64) {
        let una = una.min(self.end);
        self.acked = true;
        while self.skbs.len() > 1 && self.skbs[1] <= una {
            self.skbs.pop_front();
        }
        if let Some(f) = self.skbs.front_mut() {
            if una >= self.end {
                self.skbs.clear();
            } else if *f < una {
                *f = una;
            }
        }
        if self.split_at.is_some_and(|s| s <= una) {
            self.split_at = None;
        }
    }

    /// An ACK arrived (SACK or cumulative): `tcp_check_space` will run.
    pub fn on_ack_arrival(&mut self) {
        self.acked = true;
    }

    /// `tcp_check_space`: after an ACK while the writer sleeps
    /// (`SOCK_NOSPACE`), `tcp_new_space` runs (true).
    pub fn take_wakeup(&mut self) -> bool {
        std::mem::take(&mut self.acked) && self.nospace
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sndbuf_expand_matches_the_kernels_counters() {
        // bpftrace on the testbed's kernel: sk_sndbuf 69120 at establishment
        // (BBR, cwnd 10), 3628800 at cwnd 525, then tcp_wmem[2].
        let mut s = SndBuf::new(4 << 20, 1448, 3);
        s.set_mss_clamp(1460);
        assert_eq!(s.sndbuf(), 16_384);
        s.expand(10, 3);
        assert_eq!(s.sndbuf(), 69_120);
        s.expand(525, 3);
        assert_eq!(s.sndbuf(), 3_628_800);
        s.expand(700, 3);
        assert_eq!(s.sndbuf(), 4 << 20);
        s.expand(10, 3);
        assert_eq!(s.sndbuf(), 4 << 20, "never shrinks");
        let mut c = SndBuf::new(4 << 20, 1448, 2);
        c.expand(10, 3);
        assert_eq!(c.sndbuf(), 46_080, "CUBIC/Reno: twice cwnd");
    }

    #[test]
    fn writes_fill_size_goal_skbs_until_the_buffer_is_full() {
        let mut s = SndBuf::new(4 << 20, 1448, 3);
        s.expand(10, 3);
        let goal = SndBuf::size_goal(1448, 1 << 30);
        assert_eq!(goal, 45 * 1448);
        // First write: two skbs (64 KiB > one size goal).
        assert_eq!(s.sendmsg(u64::MAX, 1448), APP_WRITE);
        assert_eq!(s.skbs(), 2);
        assert_eq!(s.wmem_queued(), APP_WRITE + 2 * SKB_EMPTY_TRUESIZE);
        assert!(
            !s.writeable(),
            "67200 of 69120 queued: less than half of it free"
        );
        // The second write fills 69120 bytes of buffer and stops.
        let n = s.sendmsg(u64::MAX, 1448);
        assert!(n < APP_WRITE && s.nospace);
        assert!(s.wmem_queued() >= s.sndbuf());
        assert!(!s.writeable());
        // The application's data ends: the write is short, not blocked.
        let mut t = SndBuf::new(4 << 20, 1448, 3);
        t.expand(10, 3);
        assert_eq!(t.sendmsg(1 + 1000, 1448), 1000);
        assert!(!t.nospace);
    }

    #[test]
    fn writeable_is_a_third_of_the_buffer_free() {
        let mut s = SndBuf::new(3 * 65_536, 1448, 3);
        s.sndbuf = 3 * 65_536;
        while s.writeable() {
            s.sendmsg(u64::MAX, 1448);
        }
        let q = s.wmem_queued();
        assert!(q * 3 > 2 * s.sndbuf(), "stops above two thirds: {q}");
    }

    #[test]
    fn transmissions_cut_skbs_per_burst_and_sacks_merge_them() {
        let mss = 1448;
        let mut s = SndBuf::new(4 << 20, mss, 3);
        s.expand(100, 3);
        s.sendmsg(u64::MAX, mss);
        let before = s.skbs();
        // Three bursts of four segments.
        let mut seq = 1;
        for t in 0..3u64 {
            for _ in 0..4 {
                s.on_transmit(seq, seq + mss, t * 1000, 4);
                seq += mss;
            }
        }
        // Three sent skbs, the unsent rest of the first 64 KB skb, the second.
        assert_eq!(s.skbs(), 3 + before);
        assert_eq!(s.skbs[1], 1 + 4 * mss);
        // Segment 2 (of burst 0) is lost: segments 3..12 SACKed. The block cuts
        // burst 0 after segment 2 and shifts bursts 1 and 2 into that piece.
        s.on_sack(1 + 2 * mss, 1 + 12 * mss);
        assert_eq!(
            &s.skbs.iter().copied().take(3).collect::<Vec<_>>()[..],
            [1, 1 + 2 * mss, 1 + 12 * mss]
        );
        assert_eq!(s.take_wakeup(), s.nospace);
        // The hole is repaired: everything below 12 segments acknowledged.
        s.on_ack(1 + 12 * mss);
        assert_eq!(s.skbs[0], 1 + 12 * mss);
        assert_eq!(
            s.wmem_queued(),
            (s.write_end() - (1 + 12 * mss)) + SKB_EMPTY_TRUESIZE * s.skbs() as u64
        );
        s.on_ack(s.write_end());
        assert_eq!((s.skbs(), s.wmem_queued()), (0, 0));
    }

    #[test]
    fn a_retransmission_cuts_the_lost_skb_after_what_it_sends() {
        let mss = 1448;
        let mut s = SndBuf::new(4 << 20, mss, 3);
        s.expand(100, 3);
        s.sendmsg(u64::MAX, mss);
        // One skb of four segments leaves; segments 1-3 are lost, 4 is SACKed.
        for k in 0..4 {
            s.on_transmit(1 + k * mss, 1 + (k + 1) * mss, 0, 4);
        }
        s.on_sack(1 + 3 * mss, 1 + 4 * mss);
        let before = s.skbs();
        let queued = s.wmem_queued();
        // A quota of one segment: the lost skb [1, 3 segments) is cut after it.
        s.on_retransmit(1, 1 + mss, 1000, 4);
        assert_eq!(s.skbs(), before + 1);
        assert_eq!(s.wmem_queued(), queued + SKB_EMPTY_TRUESIZE);
        assert_eq!(s.skbs[1], 1 + mss);
        // Two more at one later time, one burst: one skb of two segments, the
        // cut after the first moved to after the second.
        s.on_retransmit(1 + mss, 1 + 2 * mss, 2000, 4);
        s.on_retransmit(1 + 2 * mss, 1 + 3 * mss, 2000, 4);
        assert_eq!(
            &s.skbs.iter().copied().take(3).collect::<Vec<_>>()[..],
            [1, 1 + mss, 1 + 3 * mss]
        );
        assert_eq!(s.skbs(), before + 1);
        // A boundary that was there before (the SACKed skb's start) stays when
        // the burst reaches it: two skbs retransmitted at once stay two.
        let mut t = SndBuf::new(4 << 20, mss, 3);
        t.expand(100, 3);
        t.sendmsg(u64::MAX, mss);
        t.on_transmit(1, 1 + mss, 0, 1);
        t.on_transmit(1 + mss, 1 + 2 * mss, 1, 1);
        let n = t.skbs();
        t.on_retransmit(1, 1 + mss, 5000, 4);
        t.on_retransmit(1 + mss, 1 + 2 * mss, 5000, 4);
        assert_eq!(t.skbs(), n);
        assert_eq!(t.skbs[1], 1 + mss);
    }

    #[test]
    fn a_short_segment_counts_whole_once_acknowledged_and_holds_the_next() {
        let mss = 1448;
        let mut s = SndBuf::new(4 << 20, mss, 2);
        s.expand(100, 3);
        // A write's tail of 376 bytes leaves after 45 whole segments.
        let tail = 1 + 45 * mss;
        s.on_short_sent(tail + 376, 376, mss);
        assert!(s.nagle_holds(1), "the next short waits for its ACK");
        assert_eq!(s.short_acked_extra(tail), 0, "not yet acknowledged");
        assert!(s.nagle_holds(tail));
        assert_eq!(s.short_acked_extra(tail + 376 + mss), mss - 376);
        assert!(!s.nagle_holds(tail + 376 + mss));
        assert_eq!(s.short_acked_extra(tail + 376 + 2 * mss), 0, "once");
        // Two in flight (a FIN's tail is not held): one ACK covers both.
        s.on_short_sent(10_000_000, 100, mss);
        s.on_short_sent(10_000_200, 200, mss);
        assert_eq!(s.short_acked_extra(10_000_200), 2 * mss - 300);
    }

    #[test]
    fn a_wakeup_needs_an_ack_and_a_sleeping_writer() {
        let mut s = SndBuf::new(4 << 20, 1448, 3);
        s.expand(10, 3);
        s.sendmsg(u64::MAX, 1448);
        s.on_transmit(1, 1449, 0, 2);
        s.on_ack(1449);
        assert!(!s.take_wakeup(), "writer awake: no wakeup");
        s.nospace = true;
        assert!(!s.take_wakeup(), "no ACK since");
        s.on_transmit(1449, 2897, 1, 2);
        s.on_transmit(2897, 4345, 2, 2);
        s.on_ack_arrival();
        assert!(s.take_wakeup(), "a SACK-only or duplicate ACK wakes it too");
        assert!(!s.take_wakeup());
    }
}
