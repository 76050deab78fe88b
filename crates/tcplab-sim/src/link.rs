//! One direction of a point-to-point link: a DropTail queue in front of a
//! transmitter of fixed rate, a propagation delay, and a loss process.
//!
//! Queue semantics follow ns-3's PointToPointNetDevice and a Linux qdisc:
//! the limit counts packets (or bytes) *waiting*, not the one being
//! serialised. Because service is FIFO at a fixed rate, the departure time of
//! a packet is known when it is accepted, so a packet costs one event per hop.
//! A packet lost on the wire (random or Gilbert–Elliott loss) still occupies
//! the transmitter for its serialisation time.
//!
//! Reordering (`reorder = {p, extra}`): a packet that is not lost is, with
//! probability `p` (a draw from the direction's own RNG stream, made only
//! when reordering is configured), held `extra` ns longer after propagation.
//! Packets so delayed cannot wait in the FIFO pipe: they go to a second pipe,
//! which is FIFO too because every delayed packet gets the same extra delay.

use std::collections::VecDeque;

use crate::component::{Component, Ctx, DropKind, Parked};
use crate::config::{LinkConfig, LinkDirConfig, QueueConfig};
use crate::engine::Packet;
use crate::hops::trace::DelaySchedule;
use crate::loss::LossProcess;
use crate::queue::managed::Managed;
use crate::queue::Limit;
use crate::rng::Rng;
use tcplab_tcp::Time;

#[derive(Clone, Copy, Debug, Default)]
pub struct LinkStats {
    pub tx_packets: u64,
    pub tx_bytes: u64,
    pub drops_queue: u64,
    pub drops_loss: u64,
    pub max_queue_packets: u64,
    /// Packets given the reordering delay.
    pub reordered: u64,
    /// Packets lost to a scheduled outage (also in `drops_loss`).
    pub drops_outage: u64,
    /// Packets held to the end of a scheduled stall.
    pub stalled: u64,
}

/// What happened to a packet offered to the link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fate {
    /// It will arrive at the far end at this time; `tx_start` is when its
    /// first bit goes on the wire.
    Arrives { at: Time, tx_start: Time },
    /// Dropped at the tail of a full queue.
    QueueDrop,
    /// Serialised, then lost on the wire (`tx_start` as above).
    Lost { tx_start: Time },
    /// It will arrive at `at`, which includes the reordering delay: later
    /// packets may overtake it.
    Reordered { at: Time, tx_start: Time },
}

#[derive(Debug)]
pub struct LinkDir {
    rate_bps: u64,
    delay: Time,
    /// A delay trace replacing `delay` (`delay_trace`), if any.
    delay_sched: Option<Box<DelaySchedule>>,
    overhead: u32,
    bits_per_byte: u32,
    pub(crate) limit_pkts: Option<u64>,
    pub(crate) limit_bytes: Option<u64>,
    busy_until: Time,
    /// (transmission end time, bytes) of packets waiting or in service.
    inq: VecDeque<(Time, u32)>,
    inq_bytes: u64,
    /// The last (size, tx_time) computed: a direction mostly carries one
    /// size (full segments one way, ACKs the other), so this saves a
    /// 64-bit division per packet.
    last_tx: (u32, Time),
    loss: LossProcess,
    /// (probability, extra delay) of the reordering process, if any.
    reorder: Option<(f64, Time)>,
    /// Scheduled outages `[start, end)`, sorted, and the first that has not
    /// ended before the latest transmission start (those only move forward).
    outages: Box<[(Time, Time)]>,
    next_outage: usize,
    /// Scheduled stalls `[start, end)`, sorted: a packet due to arrive inside
    /// one arrives at its end.
    stalls: Box<[(Time, Time)]>,
    rng: Rng,
    pub stats: LinkStats,
}

impl LinkDir {
    pub fn new(cfg: &LinkDirConfig, rng: Rng) -> LinkDir {
        let (limit_pkts, limit_bytes) = match cfg.queue {
            QueueConfig::Packets { limit } => (Some(limit as u64), None),
            QueueConfig::Bytes { limit } => (None, Some(limit)),
        };
        let loss = LossProcess::new(&cfg.loss);
        let mut l = LinkDir {
            rate_bps: cfg.rate_bps,
            delay: cfg.delay_ns,
            delay_sched: None,
            overhead: cfg.overhead_bytes,
            bits_per_byte: cfg.bits_per_byte,
            limit_pkts,
            limit_bytes,
            busy_until: 0,
            inq: VecDeque::with_capacity(limit_pkts.unwrap_or(64).min(4096) as usize + 1),
            inq_bytes: 0,
            last_tx: (0, 0),
            loss,
            reorder: cfg.reorder.map(|r| (r.p, r.extra_ns)),
            outages: cfg
                .outages_ns
                .iter()
                .map(|&(s, d)| (s, s.saturating_add(d)))
                .collect(),
            next_outage: 0,
            stalls: cfg
                .stalls_ns
                .iter()
                .map(|&(s, d)| (s, s.saturating_add(d)))
                .collect(),
            rng,
            stats: LinkStats::default(),
        };
        l.last_tx = (0, l.tx_time(0));
        l
    }

    /// Serialisation time of `bytes` (IP datagram) plus framing, rounded up to 1 ns.
    /// Each frame byte costs `bits_per_byte` line bits (10 on an 8N1 serial line).
    #[inline]
    pub fn tx_time(&self, bytes: u32) -> Time {
        let bits = (bytes as u64 + self.overhead as u64) * self.bits_per_byte as u64;
        (bits * 1_000_000_000).div_ceil(self.rate_bps)
    }

    pub fn delay(&self) -> Time {
        self.delay
    }

    /// Replace the fixed delay by a delay trace (`delay_trace`).
    pub fn set_delay_schedule(&mut self, s: Option<DelaySchedule>) {
        self.delay_sched = s.map(Box::new);
    }

    /// Packets waiting or in service at `now`.
    pub fn backlog(&mut self, now: Time) -> usize {
        self.purge(now);
        self.inq.len()
    }

    #[inline]
    fn purge(&mut self, now: Time) {
        while let Some(&(end, b)) = self.inq.front() {
            if end <= now {
                self.inq.pop_front();
                self.inq_bytes -= b as u64;
            } else {
                break;
            }
        }
    }

    /// Whether a packet whose transmission starts at `tx_start` (never
    /// earlier than the previous one's) is lost: the link is cut by a
    /// scheduled outage, or the loss process drops it.
    #[inline]
    pub(crate) fn lost_on_wire(&mut self, tx_start: Time) -> bool {
        if !self.outages.is_empty() && self.in_outage(tx_start) {
            self.stats.drops_outage += 1;
            return true;
        }
        // Loss-free links (most) skip the out-of-line call.
        !matches!(self.loss, LossProcess::None) && self.loss.lost(&mut self.rng)
    }

    #[inline(never)]
    fn in_outage(&mut self, t: Time) -> bool {
        while self.outages.get(self.next_outage).is_some_and(|o| o.1 <= t) {
            self.next_outage += 1;
        }
        self.outages.get(self.next_outage).is_some_and(|o| o.0 <= t)
    }

    /// When a packet due at `at` arrives: the end of the stall holding `at`,
    /// else `at`. Non-decreasing in `at`, so the link stays FIFO.
    #[inline]
    fn after_stalls(&mut self, at: Time) -> Time {
        if self.stalls.is_empty() {
            return at;
        }
        // Reordered packets come out of order: search, don't walk.
        let k = self.stalls.partition_point(|s| s.1 <= at);
        match self.stalls.get(k) {
            Some(&(start, end)) if start <= at => {
                self.stats.stalled += 1;
                end
            }
            _ => at,
        }
    }

    /// Whether outages are scheduled (their counter is reported only then).
    pub(crate) fn has_outages(&self) -> bool {
        !self.outages.is_empty()
    }

    /// Offer a packet of `bytes` (IP datagram length) at `now`.
    /// (Inlined into its callers, `LinkHop::on_packet` above all: one
    /// call and one `Fate` through memory less per packet.)
    #[inline(always)]
    pub fn offer(&mut self, bytes: u32, now: Time) -> Fate {
        self.purge(now);
        let n = self.inq.len() as u64;
        if n > 0 {
            // The head of `inq` is in service; the rest are waiting.
            let waiting = n - 1;
            let waiting_bytes = self.inq_bytes - self.inq.front().unwrap().1 as u64;
            let full = self.limit_pkts.is_some_and(|l| waiting >= l)
                || self
                    .limit_bytes
                    .is_some_and(|l| waiting_bytes + bytes as u64 > l);
            if full {
                self.stats.drops_queue += 1;
                return Fate::QueueDrop;
            }
        }
        let start = self.busy_until.max(now);
        let end = start.saturating_add(self.tx_time_cached(bytes));
        self.busy_until = end;
        self.inq.push_back((end, bytes));
        self.inq_bytes += bytes as u64;
        self.stats.max_queue_packets = self.stats.max_queue_packets.max(n);
        self.depart(bytes, start, end)
    }

    /// `tx_time(bytes)`, remembering the last size asked.
    #[inline(always)]
    fn tx_time_cached(&mut self, bytes: u32) -> Time {
        if bytes != self.last_tx.0 {
            self.last_tx = (bytes, self.tx_time(bytes));
        }
        self.last_tx.1
    }

    /// A packet of `bytes` is serialised from `start` to `end`: count it
    /// and draw its fate on the wire (loss, outage, reordering, stall).
    #[inline(always)]
    fn depart(&mut self, bytes: u32, start: Time, end: Time) -> Fate {
        self.stats.tx_packets += 1;
        self.stats.tx_bytes += bytes as u64;
        if self.lost_on_wire(start) {
            self.stats.drops_loss += 1;
            return Fate::Lost { tx_start: start };
        }
        if let Some((p, extra)) = self.reorder {
            if self.rng.bernoulli(p) {
                self.stats.reordered += 1;
                let delay = match self.delay_sched.as_mut() {
                    None => self.delay,
                    Some(s) => s.delay_at(end),
                };
                let at = end.saturating_add(delay).saturating_add(extra);
                return Fate::Reordered {
                    at: self.after_stalls(at),
                    tx_start: start,
                };
            }
        }
        // A delay trace keeps the order: no packet arrives before the one
        // ahead of it (hops/trace.rs, `DelaySchedule::arrival`).
        let at = match self.delay_sched.as_mut() {
            None => end.saturating_add(self.delay),
            Some(s) => s.arrival(end),
        };
        Fate::Arrives {
            at: self.after_stalls(at),
            tx_start: start,
        }
    }
}

/// A bidirectional point-to-point link as a path component.
///
/// Packets on the wire wait in a per-direction pipe ordered by arrival time
/// (the link is FIFO with one delay), and one timer per direction releases
/// the head: the engine's heap holds two entries per link instead of one per
/// packet in flight. Reordered packets wait in a second pipe per direction
/// (timer tokens 2 and 3), allocated only when reordering is configured.
/// The pipes hold the packets parked in the engine's slab, not the packets.
pub struct LinkHop {
    dirs: [LinkDir; 2],
    pipes: [VecDeque<(Time, Parked)>; 2],
    late: [VecDeque<(Time, Parked)>; 2],
    /// Directions with an `aqm`: the discipline decides at dequeue time.
    managed: [Option<Box<Managed>>; 2],
}

/// The hard limit of a direction's queue.
pub(crate) fn limit_of(dir: &LinkDirConfig) -> Limit {
    match dir.queue {
        QueueConfig::Packets { limit } => Limit::Packets(limit as u64),
        QueueConfig::Bytes { limit } => Limit::Bytes(limit),
    }
}

/// Release the due head of a pipe; re-arm its timer for the next one.
#[inline]
fn release(pipe: &mut VecDeque<(Time, Parked)>, token: u64, ctx: &mut Ctx) {
    while let Some(&(at, _)) = pipe.front() {
        if at > ctx.now {
            ctx.timer(at, token);
            break;
        }
        if let Some((_, h)) = pipe.pop_front() {
            ctx.forward_parked_now(h);
        }
    }
}

impl LinkHop {
    /// Give the down (`rev = false`) or up direction a delay trace.
    pub fn set_delay_schedule(&mut self, rev: bool, s: DelaySchedule) {
        self.dirs[rev as usize].set_delay_schedule(Some(s));
    }

    pub fn new(cfg: &LinkConfig, seed: u64, idx: usize) -> LinkHop {
        LinkHop {
            dirs: [
                LinkDir::new(&cfg.fwd, Rng::stream(seed, &format!("link/{idx}/fwd"))),
                LinkDir::new(&cfg.rev, Rng::stream(seed, &format!("link/{idx}/rev"))),
            ],
            pipes: [VecDeque::with_capacity(64), VecDeque::with_capacity(64)],
            late: [&cfg.fwd, &cfg.rev]
                .map(|d| VecDeque::with_capacity(if d.reorder.is_some() { 64 } else { 0 })),
            managed: [(&cfg.fwd, "fwd"), (&cfg.rev, "rev")].map(|(d, n)| {
                d.aqm.as_ref().map(|a| {
                    Box::new(Managed::new(
                        a,
                        limit_of(d),
                        d.rate_bps,
                        Rng::stream(seed, &format!("link/{idx}/{n}/aqm")),
                    ))
                })
            }),
        }
    }

    /// A packet reaches a managed direction: the discipline takes it (or
    /// discards it or others), and an idle transmitter starts.
    #[inline(never)]
    fn managed_packet(&mut self, p: Packet, ctx: &mut Ctx) {
        let d = p.dir as usize;
        let m = self.managed[d].as_mut().unwrap();
        m.enqueue(p, ctx, |_| {});
        // Packets queued or in service ahead of the newest (the fast path's
        // count when it accepts a packet).
        let n = m.backlog().saturating_sub(1);
        let s = &mut self.dirs[d].stats;
        s.max_queue_packets = s.max_queue_packets.max(n);
        if !m.busy {
            self.transmit_next(d, ctx);
        }
    }

    /// The transmitter of managed direction `d` is free: dequeue the next
    /// packet (the discipline may drop or mark on the way) and serialise it.
    fn transmit_next(&mut self, d: usize, ctx: &mut Ctx) {
        let m = self.managed[d].as_mut().unwrap();
        let Some(h) = m.dequeue(ctx, |_| {}) else {
            return;
        };
        let bytes = ctx.parked_mut(&h).size;
        let dir = &mut self.dirs[d];
        let start = ctx.now;
        let end = start.saturating_add(dir.tx_time_cached(bytes));
        ctx.timer(end, 4 + d as u64);
        let fate = dir.depart(bytes, start, end);
        self.place(fate, h, d, ctx);
    }

    /// Put a transmitted parked packet where its fate says.
    fn place(&mut self, fate: Fate, h: Parked, d: usize, ctx: &mut Ctx) {
        let (pipe, at, tx_start, token) = match fate {
            Fate::Arrives { at, tx_start } => (&mut self.pipes[d], at, tx_start, d as u64),
            Fate::Reordered { at, tx_start } => (&mut self.late[d], at, tx_start, 2 + d as u64),
            Fate::Lost { tx_start } => {
                let p = ctx.unpark(h);
                ctx.tap(&p, tx_start);
                ctx.drop(p, DropKind::Loss);
                return;
            }
            Fate::QueueDrop => unreachable!("a managed queue drops in its discipline"),
        };
        let p = *ctx.parked_mut(&h);
        ctx.tap(&p, tx_start);
        debug_assert!(pipe.back().is_none_or(|b| b.0 <= at));
        if pipe.is_empty() {
            ctx.timer(at, token);
        }
        pipe.push_back((at, h));
    }
}

impl Component for LinkHop {
    #[inline]
    fn on_packet(&mut self, p: Packet, ctx: &mut Ctx) {
        if self.managed[p.dir as usize].is_some() {
            return self.managed_packet(p, ctx);
        }
        match self.dirs[p.dir as usize].offer(p.size, ctx.now) {
            Fate::Arrives { at, tx_start } => {
                ctx.tap(&p, tx_start);
                let d = p.dir as usize;
                let pipe = &mut self.pipes[d];
                debug_assert!(pipe.back().is_none_or(|b| b.0 <= at));
                if pipe.is_empty() {
                    ctx.timer(at, d as u64);
                }
                pipe.push_back((at, ctx.park(p)));
            }
            Fate::Reordered { at, tx_start } => {
                ctx.tap(&p, tx_start);
                let d = p.dir as usize;
                let late = &mut self.late[d];
                // One extra delay per direction: the late pipe is FIFO too.
                debug_assert!(late.back().is_none_or(|b| b.0 <= at));
                if late.is_empty() {
                    ctx.timer(at, 2 + d as u64);
                }
                late.push_back((at, ctx.park(p)));
            }
            Fate::Lost { tx_start } => {
                ctx.tap(&p, tx_start);
                ctx.drop(p, DropKind::Loss);
            }
            Fate::QueueDrop => ctx.drop(p, DropKind::Queue),
        }
    }

    fn on_timer(&mut self, token: u64, ctx: &mut Ctx) {
        match token {
            0 | 1 => release(&mut self.pipes[token as usize], token, ctx),
            2 | 3 => release(&mut self.late[token as usize - 2], token, ctx),
            _ => self.transmit_next(token as usize - 4, ctx),
        }
    }

    fn held(&self) -> u64 {
        let queued: usize = self.managed.iter().flatten().map(|m| m.q.len()).sum();
        (self.pipes[0].len()
            + self.pipes[1].len()
            + self.late[0].len()
            + self.late[1].len()
            + queued) as u64
    }

    fn stats(&self, name: &str) -> Vec<serde_json::Value> {
        ["fwd", "rev"]
            .iter()
            .zip(self.dirs.iter())
            .map(|(d, l)| {
                let s = l.stats;
                let mut v = serde_json::json!({
                    "name": name, "kind": "link", "dir": d, "tx_packets": s.tx_packets,
                    "tx_bytes": s.tx_bytes, "drops_queue": s.drops_queue,
                    "drops_loss": s.drops_loss, "max_queue_packets": s.max_queue_packets,
                    "reordered": s.reordered,
                });
                if l.has_outages() {
                    v["drops_outage"] = s.drops_outage.into();
                }
                if !l.stalls.is_empty() {
                    v["stalled"] = s.stalled.into();
                }
                v
            })
            .zip(self.managed.iter())
            .map(|(mut v, m)| {
                if let Some(m) = m {
                    m.stats_into(&mut v);
                }
                v
            })
            .collect()
    }

    fn tx_packets(&self) -> u64 {
        self.dirs[0].stats.tx_packets + self.dirs[1].stats.tx_packets
    }
    fn backlog(&mut self, dir: crate::engine::Dir, now: Time) -> Option<u64> {
        if let Some(m) = &self.managed[dir as usize] {
            return Some(m.backlog());
        }
        Some(self.dirs[dir as usize].backlog(now) as u64)
    }

    fn queue_delay(&mut self, dir: crate::engine::Dir, _now: Time) -> Option<Time> {
        self.managed[dir as usize].as_ref().map(|m| m.last_sojourn)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::LossConfig;

    fn cfg(limit: u32) -> LinkDirConfig {
        LinkDirConfig {
            rate_bps: 8_000_000, // 1 byte per µs
            delay_ns: 10_000,
            queue: QueueConfig::Packets { limit },
            loss: LossConfig::None,
            overhead_bytes: 0,
            bits_per_byte: 8,
            reorder: None,
            outages_ns: Vec::new(),
            stalls_ns: Vec::new(),
            aqm: None,
            delay_trace: None,
        }
    }

    #[test]
    fn a_scheduled_outage_cuts_the_link_and_only_while_it_lasts() {
        let mut c = cfg(1_000_000);
        // Cut from 1 ms for 2 ms: [1 ms, 3 ms).
        c.outages_ns = vec![(1_000_000, 2_000_000)];
        let mut l = LinkDir::new(&c, Rng::stream(3, "o"));
        // 100-byte packets every 0.5 ms: each starts at once (100 µs of service).
        let fates: Vec<bool> = (0..10)
            .map(|i| matches!(l.offer(100, i * 500_000), Fate::Lost { .. }))
            .collect();
        // Starts 0, 0.5, 1.0 (cut), 1.5, 2.0, 2.5 (cut), 3.0, 3.5, ... (up again).
        assert_eq!(
            fates,
            [false, false, true, true, true, true, false, false, false, false]
        );
        assert_eq!(l.stats.drops_outage, 4);
        assert_eq!(l.stats.drops_loss, 4);
        assert_eq!(l.stats.tx_packets, 10);
    }

    #[test]
    fn a_packet_queued_into_an_outage_is_lost_when_its_transmission_starts() {
        let mut c = cfg(1_000_000);
        c.outages_ns = vec![(150_000, 100_000), (1_000_000, 1)];
        let mut l = LinkDir::new(&c, Rng::stream(3, "o"));
        // Three 100-byte packets at t = 0 start at 0, 100 and 200 µs: only
        // the third starts inside [150, 250) µs (a queued packet is cut
        // when its turn comes).
        let f: Vec<bool> = (0..3)
            .map(|_| matches!(l.offer(100, 0), Fate::Lost { .. }))
            .collect();
        assert_eq!(f, [false, false, true]);
        // The 1 ns outage at 1 ms: a packet starting at exactly 1 ms is cut.
        assert!(matches!(l.offer(100, 1_000_000), Fate::Lost { .. }));
        assert!(matches!(l.offer(100, 1_000_001), Fate::Arrives { .. }));
    }

    #[test]
    fn a_scheduled_stall_holds_arrivals_to_its_end_and_loses_nothing() {
        let mut c = cfg(100);
        // 1 byte per µs, 10 µs delay: a 1000-byte packet takes 1 ms to send.
        c.stalls_ns = vec![(2_500_000, 1_000_000), (6_000_000, 10)];
        let mut l = LinkDir::new(&c, Rng::stream(1, "t"));
        let at: Vec<Time> = (0..8)
            .map(|k| match l.offer(1000, k * 1_000_000) {
                Fate::Arrives { at, .. } => at,
                f => panic!("{f:?}"),
            })
            .collect();
        // Due at 1.01, 2.01, 3.01 (inside [2.5, 3.5): at 3.5), 4.01, ...;
        // 6.01 ms is after the 10 ns stall at 6.0 ms.
        assert_eq!(
            at,
            [
                1_010_000, 2_010_000, 3_500_000, 4_010_000, 5_010_000, 6_010_000, 7_010_000,
                8_010_000
            ]
        );
        assert_eq!(l.stats.stalled, 1);
        assert_eq!(l.stats.drops_loss + l.stats.drops_queue, 0);
    }

    #[test]
    fn reordering_delays_a_fraction_by_the_extra_delay() {
        let mut c = cfg(1_000_000);
        c.reorder = Some(crate::config::ReorderConfig {
            p: 0.1,
            extra_ns: 5_000_000,
        });
        let mut l = LinkDir::new(&c, Rng::stream(3, "r"));
        let (mut late, n) = (0u64, 100_000u64);
        for i in 0..n {
            let now = i * 1_000_000;
            match l.offer(100, now) {
                Fate::Reordered { at, tx_start } => {
                    assert_eq!(at, tx_start + 100_000 + 10_000 + 5_000_000);
                    late += 1;
                }
                Fate::Arrives { at, .. } => assert_eq!(at, now + 110_000),
                f => panic!("{f:?}"),
            }
        }
        assert_eq!(l.stats.reordered, late);
        assert!((late as f64 / n as f64 - 0.1).abs() < 0.005, "{late}");
    }

    #[test]
    fn serial_start_stop_bits() {
        // A 40-byte ACK in PPP framing (8 bytes) on a 9600 bps 8N1 line:
        // 48 bytes x 10 bits = 480 bits = 50 ms.
        let mut c = cfg(10);
        c.rate_bps = 9600;
        c.overhead_bytes = 8;
        c.bits_per_byte = 10;
        let l = LinkDir::new(&c, Rng::stream(1, "x"));
        assert_eq!(l.tx_time(40), 50_000_000);
    }

    #[test]
    fn fifo_timing_and_droptail() {
        let mut l = LinkDir::new(&cfg(2), Rng::stream(1, "x"));
        assert_eq!(l.tx_time(1000), 1_000_000);
        // 1 in service + 2 waiting fit; the 4th is dropped.
        assert_eq!(
            l.offer(1000, 0),
            Fate::Arrives {
                at: 1_010_000,
                tx_start: 0
            }
        );
        assert_eq!(
            l.offer(1000, 0),
            Fate::Arrives {
                at: 2_010_000,
                tx_start: 1_000_000
            }
        );
        assert!(matches!(l.offer(1000, 0), Fate::Arrives { .. }));
        assert_eq!(l.offer(1000, 0), Fate::QueueDrop);
        // after the first leaves, there is room again
        assert!(matches!(l.offer(1000, 1_000_000), Fate::Arrives { .. }));
        assert_eq!(l.stats.drops_queue, 1);
        assert_eq!(l.backlog(10_000_000), 0);
    }

    #[test]
    fn bernoulli_rate() {
        let mut c = cfg(1_000_000);
        c.loss = LossConfig::Bernoulli { p: 0.1 };
        let mut l = LinkDir::new(&c, Rng::stream(1, "x"));
        let mut lost = 0;
        for i in 0..100_000u64 {
            if matches!(l.offer(100, i * 1_000_000), Fate::Lost { .. }) {
                lost += 1;
            }
        }
        assert!((lost as f64 / 1e5 - 0.1).abs() < 0.005, "{lost}");
    }

    #[test]
    fn gilbert_elliott_is_bursty() {
        let mut c = cfg(1_000_000);
        // mean bad sojourn 10 packets, bad 1/11 of the time, all lost in bad
        c.loss = LossConfig::GilbertElliott {
            p_gb: 0.01,
            p_bg: 0.1,
            loss_good: 0.0,
            loss_bad: 1.0,
        };
        let mut l = LinkDir::new(&c, Rng::stream(5, "ge"));
        let mut lost = 0;
        let mut runs = 0;
        let mut prev = false;
        let n = 200_000u64;
        for i in 0..n {
            let x = matches!(l.offer(100, i * 1_000_000), Fate::Lost { .. });
            if x {
                lost += 1;
                if !prev {
                    runs += 1;
                }
            }
            prev = x;
        }
        let rate = lost as f64 / n as f64;
        assert!((rate - 1.0 / 11.0).abs() < 0.01, "{rate}");
        let mean_burst = lost as f64 / runs as f64;
        assert!((mean_burst - 10.0).abs() < 1.0, "{mean_burst}");
    }
}
