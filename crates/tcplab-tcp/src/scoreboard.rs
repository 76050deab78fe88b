//! Sender retransmission queue and SACK scoreboard.
//!
//! Every transmitted segment stays here, in sequence order, until it is
//! cumulatively acknowledged. Each entry carries the marks loss recovery
//! needs: SACKed (RFC 2018 / RFC 6675 §2 "SACKed"), lost (RFC 6675 §4
//! `IsLost`), retransmitted (RFC 6675 `HighRxt`, kept per segment), and the
//! send times for RTT samples and ground truth. Byte counters are kept
//! incrementally so `pipe` (RFC 6675 §4 `SetPipe`) is O(1) per ACK.
//!
//! Departure from RFC 6675: `HighRxt` is tracked as a per-segment
//! "retransmitted" mark rather than a single pointer, as Linux does; a
//! segment skipped by NextSeg rule 1 is therefore not counted twice in pipe.

use crate::rate::RateEstimator;
use crate::Time;
use std::cell::Cell;
use std::collections::VecDeque;

pub const SACKED: u8 = 1;
pub const LOST: u8 = 2;
/// Retransmitted since it was last marked lost (counts in pipe again).
pub const RETRANS: u8 = 4;
/// Retransmitted at least once (Karn's rule, RFC 6298 §3).
pub const EVER_RETRANS: u8 = 8;

#[derive(Clone, Copy, Debug)]
pub struct TxSeg {
    pub start: u64,
    pub end: u64,
    /// Last transmission time.
    pub sent_at: Time,
    /// First transmission time.
    pub first_sent_at: Time,
    pub flags: u8,
    pub tx_count: u16,
}

impl TxSeg {
    #[inline]
    pub fn len(&self) -> u64 {
        self.end - self.start
    }
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.end == self.start
    }
    #[inline]
    pub fn has(&self, f: u8) -> bool {
        self.flags & f != 0
    }
}

#[derive(Default, Debug)]
pub struct Scoreboard {
    q: VecDeque<TxSeg>,
    /// Bytes of all segments in the queue.
    outstanding: u64,
    sacked: u64,
    /// Lost and not SACKed.
    lost: u64,
    /// Retransmitted (RETRANS) and not SACKed.
    retrans: u64,
    /// Highest sequence number covered by a SACK block (0 = none).
    pub high_sacked: u64,
    /// Every un-SACKed segment ending at or below this is marked LOST
    /// (IsLost is monotone downwards), so `mark_lost` stops here.
    lost_floor: u64,
    /// Ranges in which every fully contained segment is SACKed: the SACK
    /// blocks already applied, so `sack` only walks what a block adds.
    covered: [(u64, u64); COVERED],
    n_covered: usize,
    /// No segment starting below this is a NextSeg rule-1 candidate
    /// (lost, un-SACKed, not retransmitted): searches resume here.
    lost_cursor: Cell<u64>,
    /// No segment starting below this is un-SACKed and not retransmitted
    /// (a rule-3 candidate).
    unsacked_cursor: Cell<u64>,
    /// Segments newly delivered (SACKed or cumulatively acknowledged
    /// without having been SACKed) since the last `take_delivered`: what
    /// RACK (RFC 8985 §6.2 steps 2–3) needs from an ACK.
    delivered: Delivered,
    /// Segments ever marked lost (Linux's `tp->lost`, `tcp_sum_lost`).
    lost_events: u64,
    /// Delivery-rate estimation (`rate.rs`), when the connection runs it:
    /// its per-segment records follow `q` entry for entry.
    rate: Option<Box<RateEstimator>>,
}

/// The newly delivered segments of one ACK, summarised for RACK.
#[derive(Clone, Copy, Debug)]
pub struct Delivered {
    /// (xmit_ts, end_seq) of the most recently sent never-retransmitted one.
    pub orig: Option<(Time, u64)>,
    /// (xmit_ts, end_seq) of the most recently (re)sent retransmitted one.
    pub rtx: Option<(Time, u64)>,
    /// Lowest end of a never-retransmitted one (u64::MAX: none).
    pub lowest_orig_end: u64,
    /// (xmit_ts, end_seq, ever retransmitted) of the highest-sequence one
    /// a cumulative ACK delivered, and of the highest-sequence one SACKed:
    /// the segment Linux's `tcp_rack_advance` sees last (`tcp_sacktag_*`
    /// runs first, then `tcp_clean_rtx_queue`, each in sequence order).
    pub last_cum: Option<(Time, u64, bool)>,
    pub last_sacked: Option<(Time, u64, bool)>,
}

impl Default for Delivered {
    fn default() -> Self {
        Delivered {
            orig: None,
            rtx: None,
            lowest_orig_end: u64::MAX,
            last_cum: None,
            last_sacked: None,
        }
    }
}

impl Delivered {
    #[inline]
    fn note(&mut self, s: &TxSeg, cumulative: bool) {
        let last = if cumulative {
            &mut self.last_cum
        } else {
            &mut self.last_sacked
        };
        if last.is_none_or(|(_, e, _)| s.end > e) {
            *last = Some((s.sent_at, s.end, s.has(EVER_RETRANS)));
        }
        fn newer(a: Option<(Time, u64)>, t: Time, e: u64) -> Option<(Time, u64)> {
            match a {
                Some((t0, e0)) if (t0, e0) >= (t, e) => a,
                _ => Some((t, e)),
            }
        }
        if s.has(EVER_RETRANS) {
            self.rtx = newer(self.rtx, s.sent_at, s.end);
        } else {
            self.orig = newer(self.orig, s.sent_at, s.end);
            self.lowest_orig_end = self.lowest_orig_end.min(s.end);
        }
    }
}

const COVERED: usize = 8;

/// What a cumulative ACK removed from the queue.
#[derive(Clone, Copy, Debug, Default)]
pub struct AckedSummary {
    pub bytes: u64,
    pub segments: u32,
    /// Send time of the newest never-retransmitted segment fully acked
    /// (an RTT sample that obeys Karn's rule).
    pub rtt_sent_at: Option<Time>,
    /// Send time of the oldest never-retransmitted segment fully acked that
    /// had not been SACKed before (Linux's `first_ackt`).
    pub first_sent_at: Option<Time>,
    /// Whether any acked segment had been retransmitted.
    pub any_retransmitted: bool,
    /// Whether any acked segment had never been retransmitted.
    pub any_original: bool,
}

impl Scoreboard {
    pub fn with_capacity(n: usize) -> Self {
        Scoreboard {
            q: VecDeque::with_capacity(n),
            ..Default::default()
        }
    }

    /// Run delivery-rate estimation (`rate.rs`) from now on (before the
    /// first segment is sent).
    pub fn enable_rate(&mut self) {
        debug_assert!(self.q.is_empty());
        self.rate = Some(Box::default());
    }
    /// The delivery-rate estimator, if enabled.
    #[inline]
    pub fn rate(&self) -> Option<&RateEstimator> {
        self.rate.as_deref()
    }
    #[inline]
    pub fn rate_mut(&mut self) -> Option<&mut RateEstimator> {
        self.rate.as_deref_mut()
    }
    /// Segments ever marked lost (Linux's `tp->lost`).
    #[inline]
    pub fn lost_events(&self) -> u64 {
        self.lost_events
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.q.is_empty()
    }
    #[inline]
    pub fn len(&self) -> usize {
        self.q.len()
    }
    #[inline]
    pub fn outstanding(&self) -> u64 {
        self.outstanding
    }
    #[inline]
    pub fn sacked_bytes(&self) -> u64 {
        self.sacked
    }
    #[inline]
    pub fn lost_bytes(&self) -> u64 {
        self.lost
    }
    /// Retransmitted (since last marked lost), not SACKed.
    #[inline]
    pub fn retrans_bytes(&self) -> u64 {
        self.retrans
    }
    pub fn iter(&self) -> impl Iterator<Item = &TxSeg> {
        self.q.iter()
    }
    pub fn get(&self, i: usize) -> Option<&TxSeg> {
        self.q.get(i)
    }
    pub fn front(&self) -> Option<&TxSeg> {
        self.q.front()
    }
    pub fn back(&self) -> Option<&TxSeg> {
        self.q.back()
    }

    /// RFC 6675 §4 SetPipe(): octets not SACKed and not lost count once;
    /// retransmitted octets count (again).
    #[inline]
    pub fn pipe(&self) -> u64 {
        self.outstanding - self.sacked - self.lost + self.retrans
    }

    /// Record a new segment sent at the tail.
    pub fn push(&mut self, start: u64, end: u64, now: Time) {
        debug_assert!(self.q.back().is_none_or(|b| b.end == start));
        if let Some(r) = self.rate.as_deref_mut() {
            // tcp_rate_skb_sent (packets_out before this segment).
            r.on_sent_new(self.q.len(), now);
        }
        self.outstanding += end - start;
        self.q.push_back(TxSeg {
            start,
            end,
            sent_at: now,
            first_sent_at: now,
            flags: 0,
            tx_count: 1,
        });
    }

    fn set_flag(&mut self, i: usize, f: u8) {
        let s = &mut self.q[i];
        if s.flags & f != 0 {
            return;
        }
        s.flags |= f;
        let len = s.len();
        let sacked = s.flags & SACKED != 0;
        if f == LOST && s.start < self.lost_cursor.get() {
            self.lost_cursor.set(s.start);
        }
        match f {
            SACKED => {
                self.sacked += len;
                if s.flags & LOST != 0 {
                    self.lost -= len;
                }
                if s.flags & RETRANS != 0 {
                    self.retrans -= len;
                }
            }
            LOST if !sacked => {
                self.lost += len;
                self.lost_events += 1;
            }
            RETRANS if !sacked => self.retrans += len,
            _ => {}
        }
    }

    fn clear_flag(&mut self, i: usize, f: u8) {
        let s = &mut self.q[i];
        if s.flags & f == 0 {
            return;
        }
        s.flags &= !f;
        let len = s.len();
        let sacked = s.flags & SACKED != 0;
        // A cleared mark can make the segment a NextSeg candidate again.
        let start = s.start;
        if start < self.lost_cursor.get() {
            self.lost_cursor.set(start);
        }
        if start < self.unsacked_cursor.get() {
            self.unsacked_cursor.set(start);
        }
        match f {
            SACKED => {
                self.sacked -= len;
                if s.flags & LOST != 0 {
                    self.lost += len;
                }
                if s.flags & RETRANS != 0 {
                    self.retrans += len;
                }
            }
            LOST if !sacked => self.lost -= len,
            RETRANS if !sacked => self.retrans -= len,
            _ => {}
        }
    }

    /// Remove everything below `ack`. A segment straddling `ack` is trimmed.
    pub fn ack_to(&mut self, ack: u64) -> AckedSummary {
        let mut sum = AckedSummary::default();
        while let Some(front) = self.q.front().copied() {
            if front.end <= ack {
                let len = front.len();
                self.outstanding -= len;
                if front.has(SACKED) {
                    self.sacked -= len;
                } else {
                    if front.has(LOST) {
                        self.lost -= len;
                    }
                    if front.has(RETRANS) {
                        self.retrans -= len;
                    }
                    self.delivered.note(&front, true);
                    if let Some(r) = self.rate.as_deref_mut() {
                        // tcp_clean_rtx_queue -> tcp_rate_skb_delivered.
                        let rtx = front.has(EVER_RETRANS);
                        r.on_delivered(0, front.end, front.sent_at, rtx, false);
                    }
                }
                if let Some(r) = self.rate.as_deref_mut() {
                    r.pop_front();
                }
                sum.bytes += len;
                sum.segments += 1;
                if front.has(EVER_RETRANS) {
                    sum.any_retransmitted = true;
                } else {
                    sum.any_original = true;
                    sum.rtt_sent_at = Some(front.sent_at);
                    if !front.has(SACKED) && sum.first_sent_at.is_none() {
                        sum.first_sent_at = Some(front.sent_at);
                    }
                }
                self.q.pop_front();
            } else {
                if front.start < ack {
                    // Partial ACK of a segment: trim it (no RTT sample: Karn-safe).
                    // A trimmed segment may now lie inside a covered range
                    // without being SACKed: forget the ranges.
                    self.n_covered = 0;
                    let cut = ack - front.start;
                    let f = &mut self.q[0];
                    f.start = ack;
                    self.outstanding -= cut;
                    if f.flags & SACKED != 0 {
                        self.sacked -= cut;
                    } else {
                        if f.flags & LOST != 0 {
                            self.lost -= cut;
                        }
                        if f.flags & RETRANS != 0 {
                            self.retrans -= cut;
                        }
                    }
                    sum.bytes += cut;
                }
                break;
            }
        }
        if self.q.is_empty() {
            self.high_sacked = 0;
        }
        sum
    }

    /// Index of the first segment with `end > seq`.
    #[inline]
    fn lower_bound(&self, seq: u64) -> usize {
        self.q.partition_point(|s| s.end <= seq)
    }

    /// Mark segments fully inside [left, right) SACKed (RFC 2018 §4).
    /// Returns (newly SACKed bytes, whether any of them had never been
    /// retransmitted — "original data SACKed", and the newest and the oldest
    /// send time of those).
    ///
    /// Only the parts of the block not already covered by an earlier block
    /// are walked, so repeated blocks cost O(new segments), not O(window).
    pub fn sack(&mut self, left: u64, right: u64) -> (u64, bool, Option<Time>, Option<Time>) {
        let mut newly = 0;
        let mut orig = false;
        let mut sent: Option<Time> = None;
        let mut oldest: Option<Time> = None;
        // [left, right) minus the covered ranges, in at most COVERED + 1 pieces.
        let mut pieces = [(0u64, 0u64); COVERED + 1];
        pieces[0] = (left, right);
        let mut n = 1;
        for &(a, b) in &self.covered[..self.n_covered] {
            let mut k = 0;
            while k < n {
                let (x, y) = pieces[k];
                if b <= x || a >= y {
                    k += 1;
                    continue;
                }
                // remove [a, b) from [x, y): keep [x, a) and [b, y)
                let lo = (x < a).then_some((x, a));
                let hi = (b < y).then_some((b, y));
                match (lo, hi) {
                    (Some(l), Some(h)) if n < pieces.len() => {
                        pieces[k] = l;
                        pieces[n] = h;
                        n += 1;
                        k += 1;
                    }
                    (Some(l), Some(_)) => {
                        // out of room: keep the piece whole (correct, just slower)
                        pieces[k] = (l.0, y);
                        k += 1;
                    }
                    (Some(p), None) | (None, Some(p)) => {
                        pieces[k] = p;
                        k += 1;
                    }
                    (None, None) => {
                        pieces[k] = pieces[n - 1];
                        n -= 1;
                    }
                }
            }
        }
        for &(x, y) in &pieces[..n] {
            let mut i = self.lower_bound(x);
            while i < self.q.len() {
                let s = self.q[i];
                if s.start >= y {
                    break;
                }
                if s.start >= left && s.end <= right && !s.has(SACKED) {
                    self.set_flag(i, SACKED);
                    self.delivered.note(&s, false);
                    if let Some(r) = self.rate.as_deref_mut() {
                        // tcp_sacktag_walk -> tcp_rate_skb_delivered.
                        r.on_delivered(i, s.end, s.sent_at, s.has(EVER_RETRANS), true);
                    }
                    newly += s.len();
                    if !s.has(EVER_RETRANS) {
                        orig = true;
                        sent = Some(sent.map_or(s.sent_at, |t: Time| t.max(s.sent_at)));
                        oldest = Some(oldest.map_or(s.sent_at, |t: Time| t.min(s.sent_at)));
                    }
                    if s.end > self.high_sacked {
                        self.high_sacked = s.end;
                    }
                }
                i += 1;
            }
        }
        self.cover(left, right);
        (newly, orig, sent, oldest)
    }

    /// What the ACKs since the last call delivered (and forget it).
    pub fn take_delivered(&mut self) -> Delivered {
        std::mem::take(&mut self.delivered)
    }

    /// The lowest start `a` of a covered range [a, b) with a < seq ≤ b.
    fn covered_below(&self, seq: u64) -> Option<u64> {
        self.covered[..self.n_covered]
            .iter()
            .filter(|&&(a, b)| a < seq && seq <= b)
            .map(|&(a, _)| a)
            .min()
    }

    /// Remember [left, right) as covered: drop ranges it contains or that
    /// lie below the cumulative ACK; if full, forget the lowest range.
    fn cover(&mut self, left: u64, right: u64) {
        let floor = self.q.front().map_or(u64::MAX, |s| s.start);
        let mut k = 0;
        while k < self.n_covered {
            let (a, b) = self.covered[k];
            if (left <= a && b <= right) || b <= floor {
                self.covered[k] = self.covered[self.n_covered - 1];
                self.n_covered -= 1;
            } else if a <= left && right <= b {
                return; // already covered
            } else {
                k += 1;
            }
        }
        if self.n_covered == COVERED {
            let lowest = (0..COVERED).min_by_key(|&k| self.covered[k].0).unwrap();
            self.covered[lowest] = self.covered[COVERED - 1];
            self.n_covered -= 1;
        }
        self.covered[self.n_covered] = (left, right);
        self.n_covered += 1;
    }

    /// RFC 6675 §4 IsLost() applied to every un-SACKed segment: a segment is
    /// lost when DupThresh discontiguous SACKed blocks, or more than
    /// (DupThresh − 1)·SMSS SACKed bytes, lie above it. Returns bytes newly
    /// marked lost. Scans from the highest SACKed segment downwards.
    pub fn mark_lost(&mut self, dupthresh: u32, smss: u64) -> u64 {
        if self.high_sacked == 0 {
            return 0;
        }
        let mut newly = 0;
        let mut sacked_above = 0u64;
        let mut blocks_above = 0u32;
        let mut in_block = false;
        // End of the highest un-SACKed segment for which IsLost holds: every
        // un-SACKed segment below it is lost too (more SACKed data above).
        let mut threshold: Option<u64> = None;
        let top = self.lower_bound(self.high_sacked - 1);
        let mut i = top.min(self.q.len().saturating_sub(1)) as isize;
        while i >= 0 {
            let idx = i as usize;
            let s = self.q[idx];
            if s.end <= self.lost_floor {
                break; // everything un-SACKed below is already marked
            }
            if s.has(SACKED) {
                sacked_above += s.len();
                if !in_block {
                    blocks_above += 1;
                    in_block = true;
                }
                // Jump over the rest of a covered range below this segment: the
                // segments lying fully inside it are SACKed (the `covered`
                // invariant), so they only add their bytes to the same block.
                if let Some(a) = self.covered_below(s.start) {
                    let j = self.lower_bound(a);
                    if j + 1 < idx {
                        sacked_above += s.start - self.q[j + 1].start;
                        i = j as isize;
                        continue;
                    }
                }
            } else {
                in_block = false;
                if blocks_above >= dupthresh || sacked_above > (dupthresh as u64 - 1) * smss {
                    threshold.get_or_insert(s.end);
                    if !s.has(LOST) {
                        self.set_flag(idx, LOST);
                        newly += s.len();
                    }
                }
            }
            i -= 1;
        }
        if let Some(t) = threshold {
            self.lost_floor = self.lost_floor.max(t);
        }
        newly
    }

    /// A timeout was spurious (RFC 4015 §3.2 step 2): nothing is presumed
    /// lost any more.
    pub fn clear_lost(&mut self) {
        for i in 0..self.q.len() {
            self.clear_flag(i, LOST);
        }
        self.lost_floor = 0;
    }

    /// Is the first un-acked segment lost per IsLost (RFC 6675 §5 entry rule)?
    pub fn first_is_lost(&self) -> bool {
        self.q.front().is_some_and(|s| s.has(LOST))
    }

    /// RTO (RFC 6675 §5.1, RFC 5681 §3.1): every outstanding un-SACKed
    /// segment is considered lost, and no segment counts as retransmitted.
    pub fn mark_all_lost(&mut self) {
        for i in 0..self.q.len() {
            self.clear_flag(i, RETRANS);
            if !self.q[i].has(SACKED) {
                self.set_flag(i, LOST);
            }
        }
        if let Some(b) = self.q.back() {
            self.lost_floor = self.lost_floor.max(b.end);
        }
    }

    /// Forget all SACK information (receiver reneging, RFC 2018 §8).
    pub fn clear_sacks(&mut self) {
        for i in 0..self.q.len() {
            self.clear_flag(i, SACKED);
        }
        self.high_sacked = 0;
        self.lost_floor = 0;
        self.n_covered = 0;
    }

    /// Mark segment `i` as retransmitted now.
    pub fn on_retransmit(&mut self, i: usize, now: Time) {
        if let Some(r) = self.rate.as_deref_mut() {
            // tcp_rate_skb_sent for the retransmission.
            r.on_resent(i, self.q.len(), now);
        }
        self.set_flag(i, RETRANS);
        let s = &mut self.q[i];
        s.flags |= EVER_RETRANS;
        s.sent_at = now;
        s.tx_count = s.tx_count.saturating_add(1);
    }

    /// Mark segment `i` lost (NewReno partial ACK / F-RTO / conventional).
    pub fn mark_seg_lost(&mut self, i: usize) {
        if !self.q[i].has(SACKED) {
            if self.q[i].flags & (LOST | RETRANS) == LOST | RETRANS {
                // tcp_sum_lost: a lost retransmission is counted again.
                self.lost_events += 1;
            }
            self.clear_flag(i, RETRANS);
            self.set_flag(i, LOST);
        }
    }

    /// Index of the segment containing `seq`, if queued.
    pub fn find(&self, seq: u64) -> Option<usize> {
        let i = self.lower_bound(seq);
        (i < self.q.len() && self.q[i].start <= seq).then_some(i)
    }

    /// RFC 6675 §4 NextSeg() rule 1: lowest un-SACKed segment below the
    /// highest SACKed byte that IsLost and is not yet retransmitted.
    /// Without SACK the same search returns segments marked lost by the
    /// timeout or by NewReno.
    pub fn next_lost(&self) -> Option<usize> {
        let from = self.q.partition_point(|s| s.start < self.lost_cursor.get());
        let found =
            (from..self.q.len()).find(|&i| self.q[i].flags & (SACKED | LOST | RETRANS) == LOST);
        self.lost_cursor.set(match found {
            Some(i) => self.q[i].start,
            None => self
                .q
                .back()
                .map_or(0, |b| b.end)
                .max(self.lost_cursor.get()),
        });
        found
    }

    /// RFC 6675 §4 NextSeg() rule 3: lowest un-SACKed, not retransmitted
    /// segment that has SACKed data above it.
    pub fn next_unsacked_below_high_sacked(&self) -> Option<usize> {
        let hs = self.high_sacked;
        let from = self
            .q
            .partition_point(|s| s.start < self.unsacked_cursor.get());
        let mut i = from;
        while i < self.q.len() && self.q[i].end <= hs {
            if self.q[i].flags & (SACKED | RETRANS) == 0 {
                self.unsacked_cursor.set(self.q[i].start);
                return Some(i);
            }
            i += 1;
        }
        // Everything scanned below `i` is SACKed or retransmitted.
        if let Some(s) = self.q.get(i) {
            self.unsacked_cursor
                .set(s.start.max(self.unsacked_cursor.get()));
        } else if let Some(b) = self.q.back() {
            self.unsacked_cursor
                .set(b.end.max(self.unsacked_cursor.get()));
        }
        None
    }

    /// RFC 6675 §4 NextSeg() rule 4: the highest un-SACKed segment.
    pub fn highest_unsacked(&self) -> Option<usize> {
        self.q.iter().rposition(|s| !s.has(SACKED))
    }

    /// Check the incremental counters against a full recount (tests, debug).
    pub fn check_counters(&self) -> Result<(), String> {
        let (mut o, mut sa, mut l, mut r) = (0, 0, 0, 0);
        let mut prev_end: Option<u64> = None;
        for s in &self.q {
            if let Some(p) = prev_end {
                if p != s.start {
                    return Err(format!(
                        "scoreboard gap/overlap at {} (prev end {p})",
                        s.start
                    ));
                }
            }
            prev_end = Some(s.end);
            o += s.len();
            if s.has(SACKED) {
                sa += s.len();
            } else {
                if s.has(LOST) {
                    l += s.len();
                }
                if s.has(RETRANS) {
                    r += s.len();
                }
            }
        }
        if let Some(rate) = self.rate.as_deref() {
            if rate.records().len() != self.q.len() {
                return Err(format!(
                    "{} delivery-rate records for {} segments",
                    rate.records().len(),
                    self.q.len()
                ));
            }
        }
        if (o, sa, l, r) != (self.outstanding, self.sacked, self.lost, self.retrans) {
            return Err(format!(
                "scoreboard counters {:?} != recount {:?}",
                (self.outstanding, self.sacked, self.lost, self.retrans),
                (o, sa, l, r)
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn board(n: u64, mss: u64) -> Scoreboard {
        let mut sb = Scoreboard::default();
        for i in 0..n {
            sb.push(1 + i * mss, 1 + (i + 1) * mss, i);
        }
        sb
    }

    /// Hand-worked RFC 6675 example: 10 segments of 1000 B, segment 0 lost,
    /// segments 1..=3 SACKed in one block: DupThresh = 3 ⇒ more than 2·SMSS
    /// SACKed above segment 0 ⇒ IsLost(0).
    #[test]
    fn islost_by_bytes_and_pipe() {
        let mut sb = board(10, 1000);
        assert_eq!(sb.pipe(), 10_000);
        sb.sack(1001, 3001);
        assert_eq!(sb.mark_lost(3, 1000), 0); // 2000 B above: not > 2·SMSS
        assert_eq!(sb.pipe(), 8_000);
        sb.sack(3001, 4001);
        assert_eq!(sb.mark_lost(3, 1000), 1000);
        assert!(sb.first_is_lost());
        // pipe = 10 000 − 3000 SACKed − 1000 lost
        assert_eq!(sb.pipe(), 6_000);
        assert_eq!(sb.next_lost(), Some(0));
        sb.on_retransmit(0, 50);
        // the retransmission is in flight again
        assert_eq!(sb.pipe(), 7_000);
        assert_eq!(sb.next_lost(), None);
        sb.check_counters().unwrap();
        // cumulative ACK up to the end of segment 3
        let s = sb.ack_to(4001);
        assert_eq!(s.bytes, 4000);
        assert!(s.any_retransmitted);
        assert_eq!(sb.pipe(), 6_000);
        sb.check_counters().unwrap();
    }

    /// IsLost by discontiguous blocks: three separate 1-segment blocks above.
    #[test]
    fn islost_by_blocks() {
        let mut sb = board(8, 1000);
        // SACK segments 2, 4, 6 (three discontiguous blocks)
        sb.sack(2001, 3001);
        sb.sack(4001, 5001);
        sb.sack(6001, 7001);
        let newly = sb.mark_lost(3, 1000);
        // segment 0 and 1 have 3 blocks above; 3 has 2 blocks / 2000 B; 5 has 1.
        assert_eq!(newly, 2000);
        assert!(sb.get(0).unwrap().has(LOST));
        assert!(sb.get(1).unwrap().has(LOST));
        assert!(!sb.get(3).unwrap().has(LOST));
        assert_eq!(sb.next_unsacked_below_high_sacked(), Some(0));
        sb.on_retransmit(0, 9);
        sb.on_retransmit(1, 9);
        assert_eq!(sb.next_unsacked_below_high_sacked(), Some(3));
        assert_eq!(sb.highest_unsacked(), Some(7));
        sb.check_counters().unwrap();
    }

    #[test]
    fn rto_marks_all_lost_and_partial_ack_trims() {
        let mut sb = board(4, 1000);
        sb.sack(2001, 3001);
        sb.on_retransmit(0, 5);
        sb.mark_all_lost();
        assert_eq!(sb.pipe(), 0);
        assert_eq!(sb.lost_bytes(), 3000);
        let s = sb.ack_to(501);
        assert_eq!(s.bytes, 500);
        assert_eq!(sb.outstanding(), 3500);
        sb.check_counters().unwrap();
        assert_eq!(sb.find(600), Some(0));
        assert_eq!(sb.find(1001), Some(1));
        assert_eq!(sb.find(4001), None);
    }

    /// The incremental `sack`/`mark_lost` give the same marks as a full
    /// rescan (the RFC 6675 §4 definitions applied naively) on random
    /// SACK/ACK/retransmit/RTO sequences.
    #[test]
    #[allow(clippy::needless_range_loop)]
    fn incremental_marks_match_a_full_rescan() {
        fn naive(sb: &Scoreboard, dupthresh: u32, smss: u64) -> Vec<bool> {
            let n = sb.len();
            let mut lost = vec![false; n];
            for i in 0..n {
                let s = sb.get(i).unwrap();
                if s.has(SACKED) {
                    continue;
                }
                let mut bytes = 0;
                let mut blocks = 0;
                let mut in_block = false;
                for j in i + 1..n {
                    let t = sb.get(j).unwrap();
                    if t.has(SACKED) {
                        bytes += t.len();
                        if !in_block {
                            blocks += 1;
                            in_block = true;
                        }
                    } else {
                        in_block = false;
                    }
                }
                lost[i] = blocks >= dupthresh || bytes > (dupthresh as u64 - 1) * smss;
            }
            lost
        }
        let mut x: u64 = 0x2545_F491_4F6C_DD1D;
        let mut rnd = move |m: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m
        };
        for _case in 0..2000 {
            let mss = 100;
            let mut sb = Scoreboard::default();
            let mut next = 1u64;
            let mut una = 1u64;
            let mut blocks: Vec<(u64, u64)> = Vec::new();
            for _ in 0..20 {
                sb.push(next, next + mss, 0);
                next += mss;
            }
            for _step in 0..60 {
                match rnd(10) {
                    0..=5 => {
                        // a SACK block over whole segments, often growing at the top
                        let segs = (next - una) / mss;
                        if segs == 0 {
                            continue;
                        }
                        let a = una + rnd(segs) * mss;
                        let b = (a + (1 + rnd(6)) * mss).min(next);
                        sb.sack(a, b);
                        blocks.push((a, b));
                    }
                    6 => {
                        let segs = (next - una) / mss;
                        if segs > 0 {
                            una += rnd(segs.min(3) + 1) * mss;
                            sb.ack_to(una);
                        }
                    }
                    7 => {
                        for _ in 0..3 {
                            sb.push(next, next + mss, 0);
                            next += mss;
                        }
                    }
                    8 => {
                        if let Some(i) = sb.next_lost() {
                            sb.on_retransmit(i, 1);
                        }
                    }
                    _ => {
                        if rnd(4) == 0 {
                            sb.mark_all_lost();
                        } else if rnd(8) == 0 {
                            sb.clear_lost();
                        }
                    }
                }
                let before: Vec<bool> = (0..sb.len())
                    .map(|i| sb.get(i).unwrap().has(LOST))
                    .collect();
                sb.mark_lost(3, mss);
                let want = naive(&sb, 3, mss);
                for i in 0..sb.len() {
                    let got = sb.get(i).unwrap().has(LOST);
                    // marks are never removed by mark_lost; a rescan marks exactly the
                    // un-SACKed segments IsLost selects, plus those marked before
                    assert_eq!(got, want[i] || before[i], "segment {i}");
                }
                for i in 0..sb.len() {
                    let t = sb.get(i).unwrap();
                    let inside = blocks.iter().any(|&(a, b)| a <= t.start && t.end <= b);
                    assert_eq!(t.has(SACKED), inside, "SACKED mark of segment {i}");
                }
                // the cursors give what a scan from the front gives
                let want_lost = sb
                    .iter()
                    .position(|t| t.flags & (SACKED | LOST | RETRANS) == LOST);
                assert_eq!(sb.next_lost(), want_lost);
                let hs = sb.high_sacked;
                let want_unsacked = sb
                    .iter()
                    .take_while(|t| t.end <= hs)
                    .position(|t| t.flags & (SACKED | RETRANS) == 0);
                assert_eq!(sb.next_unsacked_below_high_sacked(), want_unsacked);
                sb.check_counters().unwrap();
            }
        }
    }
}
