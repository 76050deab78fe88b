//! A link driven by a capacity trace (`kind = "trace"`): the replay of a
//! measured cellular bearer, with Mahimahi's `mm-link` semantics, and the
//! time-varying one-way delay (`delay_trace`) that `trace` and `link` hops
//! share. The model and where it differs from a rate-based link:
//! docs/traces.md.
//!
//! **Capacity traces.** A Mahimahi trace has one line per delivery
//! opportunity: a whole number of milliseconds since the link came up. Each
//! opportunity may carry 1504 bytes of packets as `mm-link` reads them from
//! its TUN device, i.e. the IP datagram plus the 4-byte packet-information
//! header a TUN device opened without `IFF_NO_PI` prepends: one 1500-byte
//! datagram fills an opportunity, a 40-byte ACK uses 44 of its bytes.
//! tcplab's own format (`format = "csv"`, header `time_us,bytes`) gives
//! opportunities at microsecond timestamps with byte counts, charged IP
//! bytes only. Opportunities at one timestamp are kept as one entry with
//! their bytes summed, which is equivalent (no arrival can fall between
//! them), and the trace repeats with the period of its last timestamp.
//!
//! **Service** (`link_queue.cc: LinkQueue::rationalize()`): at each
//! opportunity, in time order, the packet in transit and then the packets
//! waiting in the queue use its bytes; a packet larger than what is left
//! continues in the next opportunity, and bytes left when the queue runs
//! empty are lost. An opportunity at time t serves only packets that
//! arrived before t: `mm-link` burns every opportunity due at the current
//! millisecond before it enqueues an arriving packet
//! (`LinkQueue::read_packet()`), and floor(a) < t exactly when a < t for a
//! whole t. Because service is FIFO and an opportunity's use depends only on
//! packets that arrived before it, a packet's departure is known when it
//! arrives: one event per packet, as on a fixed link.
//!
//! **Queue** (`dropping_packet_queue.cc`): the limit counts packets (or IP
//! bytes) waiting, not the one in transit; a packet that has not received
//! any byte of an opportunity yet is waiting. **Loss** draws once per
//! accepted packet, which uses its opportunity bytes and is then lost on
//! the radio. **Delay** is added after the queue: fixed, or a delay trace.
//!
//! **Delay traces.** Rows of (time, one-way delay); a packet leaving the
//! queue at t gets the delay of the last row at or before t (the first
//! row's before it, the last row's after the end: delay traces do not
//! repeat). A packet never overtakes the one ahead of it (a bearer delivers
//! in order): a packet whose delay would let it arrive before its
//! predecessor arrives with it, so a delay drop bunches packets and a rise
//! stretches them.

use std::collections::VecDeque;
use std::io::Read;

use crate::component::{Component, Ctx, DropKind, Parked};
use crate::config::{LinkDirConfig, QueueConfig, TraceConfig, TraceDirConfig, TraceFormat};
use crate::engine::{Dir, Packet};
use crate::hops::varying::{RateTable, VaryingDir};
use crate::link::{Fate, LinkDir, LinkStats};
use crate::loss::LossProcess;
use crate::queue::managed::Managed;
use crate::queue::Limit;
use crate::rng::Rng;
use tcplab_tcp::Time;

/// Bytes of one Mahimahi delivery opportunity (`link_queue.hh: PACKET_SIZE`).
pub const MAHIMAHI_OPPORTUNITY_BYTES: u32 = 1504;
/// What `mm-link` charges each packet beyond its IP datagram: the TUN
/// packet-information header (flags and protocol, 4 bytes).
pub const MAHIMAHI_PACKET_OVERHEAD: u32 = 4;

/// A packet that will never leave: a trace that does not repeat has ended.
const NEVER: Time = Time::MAX;

/// One or more delivery opportunities at one timestamp.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Opp {
    /// Timestamp, in ticks of the trace (`CapacityTrace::tick_ns`).
    pub t: u32,
    /// Bytes the opportunities at `t` may carry.
    pub bytes: u32,
}

/// A capacity trace as loaded: opportunities in time order, 8 bytes per
/// distinct timestamp (a one-hour trace with one every millisecond: 29 MB).
#[derive(Clone, Debug)]
pub struct CapacityTrace {
    pub opps: Vec<Opp>,
    /// Length of one tick: 1 ms (Mahimahi) or 1 µs (csv).
    pub tick_ns: u64,
    /// Bytes charged to each packet beyond its IP datagram.
    pub packet_overhead: u32,
}

impl CapacityTrace {
    /// The period in ticks: the last timestamp (> 0 for a loaded trace).
    pub fn period(&self) -> u64 {
        self.opps.last().map_or(0, |o| o.t as u64)
    }

    /// The period in ns.
    pub fn duration_ns(&self) -> Time {
        self.period() * self.tick_ns
    }

    /// Total bytes of all opportunities in one period.
    pub fn total_bytes(&self) -> u64 {
        self.opps.iter().map(|o| o.bytes as u64).sum()
    }

    /// Bytes of the opportunities at times in `[0, until)` when the trace
    /// runs (repeating or not) from time 0, as the link sees them: round r
    /// has every opportunity at r·period + t, so a round's last and the next
    /// round's first (at t = 0) come at the same time.
    pub fn bytes_before(&self, until: Time, repeat: bool) -> u64 {
        let p = self.period();
        let q = until.div_ceil(self.tick_ns); // opportunities at ticks < q
        let round_bytes = |limit: u64| -> u64 {
            let k = self.opps.partition_point(|o| (o.t as u64) < limit);
            self.opps[..k].iter().map(|o| o.bytes as u64).sum()
        };
        if !repeat {
            return round_bytes(q);
        }
        // Rounds wholly before q, then the (at most two) it cuts.
        let full = if q > p { (q - p - 1) / p + 1 } else { 0 };
        let mut total = full * self.total_bytes();
        let mut r = full;
        while r * p < q {
            total += round_bytes(q - r * p);
            r += 1;
        }
        total
    }

    /// Load a trace file; errors name the file and the line.
    pub fn load(path: &str, format: TraceFormat) -> Result<CapacityTrace, String> {
        let f = std::fs::File::open(path).map_err(|e| format!("{path}: cannot read: {e}"))?;
        Self::parse(f, path, format)
    }

    /// Parse a trace from `r`; `name` is the file named in errors.
    pub fn parse(r: impl Read, name: &str, format: TraceFormat) -> Result<CapacityTrace, String> {
        let mut opps: Vec<Opp> = Vec::new();
        let mut last_line = 0;
        let mut header = format == TraceFormat::Csv;
        for_each_line(r, name, |n, line| {
            let err = |what: &str| {
                format!(
                    "{name}:{n}: {what} (got {:?})",
                    String::from_utf8_lossy(line)
                )
            };
            let line = line.trim_ascii();
            let (t, bytes) = match format {
                TraceFormat::Mahimahi => {
                    // Like mm-link, an empty line is an error, not a separator.
                    let t = parse_u64(line)
                        .ok_or_else(|| err("must be a whole number of milliseconds"))?;
                    (t, MAHIMAHI_OPPORTUNITY_BYTES as u64)
                }
                TraceFormat::Csv => {
                    if line.is_empty() || line[0] == b'#' {
                        return Ok(());
                    }
                    if header {
                        header = false;
                        if line != b"time_us,bytes" {
                            return Err(err(
                                "the first line must be the header time_us,bytes (or time_us,rate_bps)",
                            ));
                        }
                        return Ok(());
                    }
                    let mut it = line.splitn(2, |&c| c == b',');
                    let (a, b) = (it.next().unwrap_or(b""), it.next().unwrap_or(b""));
                    let t = parse_u64(a.trim_ascii())
                        .ok_or_else(|| err("must be time_us,bytes with whole numbers"))?;
                    let b = parse_u64(b.trim_ascii())
                        .ok_or_else(|| err("must be time_us,bytes with whole numbers"))?;
                    if b == 0 || b > u32::MAX as u64 {
                        return Err(err("bytes must be between 1 and 4294967295"));
                    }
                    (t, b)
                }
            };
            if t > u32::MAX as u64 {
                return Err(err(
                    "timestamp beyond 4294967295 ticks (49 days in ms, 71 minutes in µs)",
                ));
            }
            let t = t as u32;
            match opps.last_mut() {
                Some(o) if t < o.t => {
                    return Err(err(&format!(
                        "timestamps must not decrease ({t} after {})",
                        o.t
                    )))
                }
                Some(o) if t == o.t => {
                    o.bytes = o
                        .bytes
                        .checked_add(bytes as u32)
                        .ok_or_else(|| err("more than 4294967295 bytes at one timestamp"))?;
                }
                _ => opps.push(Opp {
                    t,
                    bytes: bytes as u32,
                }),
            }
            last_line = n;
            Ok(())
        })?;
        if opps.is_empty() {
            return Err(format!("{name}: no delivery opportunities (empty trace)"));
        }
        if opps.last().is_some_and(|o| o.t == 0) {
            return Err(format!(
                "{name}:{last_line}: the trace must last longer than 0 (its last timestamp is 0)"
            ));
        }
        opps.shrink_to_fit();
        let (tick_ns, packet_overhead) = match format {
            TraceFormat::Mahimahi => (1_000_000, MAHIMAHI_PACKET_OVERHEAD),
            TraceFormat::Csv => (1_000, 0),
        };
        Ok(CapacityTrace {
            opps,
            tick_ns,
            packet_overhead,
        })
    }
}

/// The mean rate of a trace, bit/s (at least 1).
fn mean_rate_bps(t: &CapacityTrace) -> u64 {
    rate_of(t.total_bytes(), t.duration_ns())
}

/// `bytes` over `ns`, bit/s (at least 1).
fn rate_of(bytes: u64, ns: Time) -> u64 {
    ((bytes as u128 * 8 * 1_000_000_000 / (ns as u128).max(1)).min(u64::MAX as u128) as u64).max(1)
}

/// A whole decimal number (no sign, at most 19 digits).
pub(crate) fn parse_u64(s: &[u8]) -> Option<u64> {
    if s.is_empty() || s.len() > 19 {
        return None;
    }
    let mut v = 0u64;
    for &c in s {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v * 10 + (c - b'0') as u64;
    }
    Some(v)
}

/// Call `f(line number, line)` for each line of `r` (without its `\n`),
/// reading 1 MiB at a time: the file is never held whole in memory.
pub(crate) fn for_each_line(
    mut r: impl Read,
    name: &str,
    mut f: impl FnMut(usize, &[u8]) -> Result<(), String>,
) -> Result<(), String> {
    let mut buf = vec![0u8; 1 << 20];
    let (mut filled, mut n) = (0usize, 0usize);
    loop {
        let got = r
            .read(&mut buf[filled..])
            .map_err(|e| format!("{name}: cannot read: {e}"))?;
        filled += got;
        let mut start = 0;
        while let Some(k) = buf[start..filled].iter().position(|&c| c == b'\n') {
            n += 1;
            f(n, &buf[start..start + k])?;
            start += k + 1;
        }
        if got == 0 {
            if start < filled {
                n += 1;
                f(n, &buf[start..filled])?;
            }
            return Ok(());
        }
        buf.copy_within(start..filled, 0);
        filled -= start;
        if filled == buf.len() {
            return Err(format!("{name}:{}: line longer than 1 MiB", n + 1));
        }
    }
}

/// A decimal number of milliseconds → ns, exactly (at most 6 decimals).
pub(crate) fn parse_ms(s: &[u8]) -> Option<Time> {
    let (int, frac) = match s.iter().position(|&c| c == b'.') {
        Some(k) => (&s[..k], &s[k + 1..]),
        None => (s, &b""[..]),
    };
    if frac.len() > 6 || (int.is_empty() && frac.is_empty()) {
        return None;
    }
    let i = if int.is_empty() { 0 } else { parse_u64(int)? };
    let f = if frac.is_empty() { 0 } else { parse_u64(frac)? };
    let ns = i
        .checked_mul(1_000_000)?
        .checked_add(f * 10u64.pow(6 - frac.len() as u32))?;
    (ns <= tcplab_tcp::MAX_TIME_NS).then_some(ns)
}

/// A one-way delay that changes with time (`delay_trace`), applied to the
/// packets of one FIFO direction in departure order.
#[derive(Clone, Debug)]
pub struct DelaySchedule {
    /// (from, delay) in ns, `from` strictly increasing.
    pts: Box<[(Time, Time)]>,
    /// The row in force at the latest departure (departures only move on).
    k: usize,
    /// Arrival time of the previous packet (no overtaking).
    last_at: Time,
}

impl DelaySchedule {
    pub fn new(pts: Vec<(Time, Time)>) -> DelaySchedule {
        assert!(!pts.is_empty(), "a delay schedule has at least one row");
        DelaySchedule {
            pts: pts.into_boxed_slice(),
            k: 0,
            last_at: 0,
        }
    }

    /// Load a delay trace: lines `time_ms,delay_ms` (decimals allowed down
    /// to the nanosecond), an optional header line `time_ms,delay_ms`,
    /// `#` comments and blank lines; times strictly increasing.
    pub fn load(path: &str) -> Result<DelaySchedule, String> {
        let f = std::fs::File::open(path).map_err(|e| format!("{path}: cannot read: {e}"))?;
        Self::parse(f, path)
    }

    pub fn parse(r: impl Read, name: &str) -> Result<DelaySchedule, String> {
        let mut pts: Vec<(Time, Time)> = Vec::new();
        let mut first = true;
        for_each_line(r, name, |n, raw| {
            let line = raw.trim_ascii();
            if line.is_empty() || line[0] == b'#' {
                return Ok(());
            }
            let err = |what: &str| {
                format!(
                    "{name}:{n}: {what} (got {:?})",
                    String::from_utf8_lossy(raw)
                )
            };
            if std::mem::take(&mut first) && line == b"time_ms,delay_ms" {
                return Ok(());
            }
            let mut it = line.splitn(2, |&c| c == b',');
            let (a, b) = (it.next().unwrap_or(b""), it.next().unwrap_or(b""));
            let rule = "must be time_ms,delay_ms (milliseconds, at most 6 decimals)";
            let t = parse_ms(a.trim_ascii()).ok_or_else(|| err(rule))?;
            let d = parse_ms(b.trim_ascii()).ok_or_else(|| err(rule))?;
            if let Some(&(prev, _)) = pts.last() {
                if t <= prev {
                    return Err(err("times must increase"));
                }
            }
            pts.push((t, d));
            Ok(())
        })?;
        if pts.is_empty() {
            return Err(format!("{name}: no rows (empty delay trace)"));
        }
        Ok(DelaySchedule::new(pts))
    }

    /// The delay in force at `t` (non-decreasing across calls).
    #[inline]
    pub fn delay_at(&mut self, t: Time) -> Time {
        while self.pts.get(self.k + 1).is_some_and(|p| p.0 <= t) {
            self.k += 1;
        }
        self.pts[self.k].1
    }

    /// When a packet leaving at `t` (non-decreasing across calls) reaches
    /// the far end: `t` plus the delay in force, but never before the
    /// packet ahead of it.
    #[inline]
    pub fn arrival(&mut self, t: Time) -> Time {
        let at = t.saturating_add(self.delay_at(t)).max(self.last_at);
        self.last_at = at;
        at
    }
}

/// The packets of a FIFO direction whose service is computed on arrival
/// (service start, departure, IP bytes), and its DropTail limit, which
/// counts packets (or IP bytes) waiting: a packet whose service has begun
/// is in transit, not waiting (`dropping_packet_queue.cc`, and a link).
#[derive(Debug)]
pub(crate) struct Fifo {
    limit_pkts: Option<u64>,
    limit_bytes: Option<u64>,
    inq: VecDeque<(Time, Time, u32)>,
    inq_bytes: u64,
}

impl Fifo {
    pub(crate) fn new(queue: QueueConfig) -> Fifo {
        let (limit_pkts, limit_bytes) = match queue {
            QueueConfig::Packets { limit } => (Some(limit as u64), None),
            QueueConfig::Bytes { limit } => (None, Some(limit)),
        };
        Fifo {
            limit_pkts,
            limit_bytes,
            inq: VecDeque::with_capacity(limit_pkts.unwrap_or(64).min(4096) as usize + 1),
            inq_bytes: 0,
        }
    }

    /// Forget the packets that have left by `now`.
    #[inline]
    fn purge(&mut self, now: Time) {
        while let Some(&(_, dep, b)) = self.inq.front() {
            if dep > now {
                break;
            }
            self.inq.pop_front();
            self.inq_bytes -= b as u64;
        }
    }

    /// Packets waiting or in transit at `now`.
    pub(crate) fn backlog(&mut self, now: Time) -> usize {
        self.purge(now);
        self.inq.len()
    }

    /// Packets in the system (after the latest `admit` or `backlog`).
    #[inline]
    pub(crate) fn len(&self) -> u64 {
        self.inq.len() as u64
    }

    /// Whether a packet of `bytes` arriving at `now` finds room: the
    /// number of packets waiting, or None when the queue is full.
    #[inline]
    pub(crate) fn admit(&mut self, bytes: u32, now: Time) -> Option<u64> {
        self.purge(now);
        let n = self.inq.len() as u64;
        let (waiting, waiting_bytes) = match self.inq.front() {
            Some(&(start, _, b)) if start <= now => (n - 1, self.inq_bytes - b as u64),
            _ => (n, self.inq_bytes),
        };
        let full = self.limit_pkts.is_some_and(|l| waiting >= l)
            || self
                .limit_bytes
                .is_some_and(|l| waiting_bytes + bytes as u64 > l);
        (!full).then_some(waiting)
    }

    /// Record an accepted packet's service.
    #[inline]
    pub(crate) fn push(&mut self, start: Time, depart: Time, bytes: u32) {
        self.inq.push_back((start, depart, bytes));
        self.inq_bytes += bytes as u64;
    }
}

/// What a direction whose departures are computed when a packet arrives
/// keeps besides its service model (delivery opportunities, a rate
/// schedule): the FIFO, the delay after it, the loss process and the
/// direction's random stream; and the tail both run once a packet's service
/// is known. `TraceDir` and `hops::varying::VaryingDir` hold one.
#[derive(Debug)]
pub(crate) struct Served {
    pub(crate) fifo: Fifo,
    delay: Time,
    delay_sched: Option<DelaySchedule>,
    loss: LossProcess,
    pub(crate) rng: Rng,
}

impl Served {
    pub(crate) fn new(
        queue: QueueConfig,
        delay: Time,
        delay_sched: Option<DelaySchedule>,
        loss: LossProcess,
        rng: Rng,
    ) -> Served {
        Served {
            fifo: Fifo::new(queue),
            delay,
            delay_sched,
            loss,
            rng,
        }
    }

    /// A packet of `bytes`, accepted with `waiting` packets waiting ahead,
    /// is served from `start` until `depart` (`NEVER`: the capacity ended
    /// first): record it, draw its loss (`lost_before`: a loss the caller
    /// drew first from the same stream, which then skips the loss process's
    /// draw), and add the delay.
    #[inline]
    pub(crate) fn depart(
        &mut self,
        stats: &mut LinkStats,
        waiting: u64,
        bytes: u32,
        (start, depart): (Time, Time),
        lost_before: bool,
    ) -> Fate {
        self.fifo.push(start, depart, bytes);
        stats.max_queue_packets = stats.max_queue_packets.max(waiting);
        self.sent(stats, bytes, (start, depart), lost_before)
    }

    /// The tail of `depart` without the FIFO: count the packet, draw its
    /// loss and add the delay (a managed direction, whose discipline holds
    /// the waiting packets, calls it when a packet's service ends).
    #[inline]
    pub(crate) fn sent(
        &mut self,
        stats: &mut LinkStats,
        bytes: u32,
        (start, depart): (Time, Time),
        lost_before: bool,
    ) -> Fate {
        stats.tx_packets += 1;
        stats.tx_bytes += bytes as u64;
        let tx_start = start.min(depart);
        if lost_before || (!matches!(self.loss, LossProcess::None) && self.loss.lost(&mut self.rng))
        {
            stats.drops_loss += 1;
            return Fate::Lost { tx_start };
        }
        if depart == NEVER {
            return Fate::Arrives {
                at: NEVER,
                tx_start,
            };
        }
        let at = match self.delay_sched.as_mut() {
            None => depart.saturating_add(self.delay),
            Some(s) => s.arrival(depart),
        };
        Fate::Arrives { at, tx_start }
    }
}

/// One direction of a trace hop: a FIFO served by delivery opportunities.
#[derive(Debug)]
pub struct TraceDir {
    opps: Box<[Opp]>,
    tick_ns: u64,
    period: u64,
    overhead: u32,
    repeat: bool,
    /// The opportunity the latest packet finished in (round of the trace,
    /// index) and its bytes still unused.
    round: u64,
    idx: usize,
    left: u32,
    served: Served,
    pub stats: LinkStats,
    /// With an `aqm`: the transmitter that takes packets from the
    /// discipline at the delivery opportunities.
    managed: Option<Box<ManagedTx>>,
}

/// The transmitter of a direction whose queue runs a discipline. Mahimahi's
/// `mm-link` asks its queue for a packet at a delivery opportunity, when the
/// packet in transit has had all its bytes (`link_queue.cc:
/// LinkQueue::rationalize()` → `packet_queue_->dequeue()`), so the sojourn
/// a discipline sees runs from enqueue to that opportunity. While a packet
/// is in transit or waiting the transmitter wakes at every opportunity (the
/// cursor is the next one); idle, it sleeps until a packet arrives.
struct ManagedTx {
    m: Managed,
    /// The packet whose bytes the opportunities are carrying.
    tx: Option<InTransit>,
    /// A timer waits for the cursor's opportunity.
    armed: bool,
}

struct InTransit {
    h: Parked,
    /// IP bytes.
    bytes: u32,
    /// The opportunity that carried its first byte.
    start: Time,
    /// Bytes still to send (the IP datagram plus the per-packet overhead).
    need: u32,
}

impl std::fmt::Debug for ManagedTx {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ManagedTx")
            .field("aqm", &self.m.q.name())
            .field("queued", &self.m.q.len())
            .field("in_transit", &self.tx.is_some())
            .field("armed", &self.armed)
            .finish()
    }
}

impl TraceDir {
    pub fn new(
        trace: CapacityTrace,
        repeat: bool,
        cfg: &TraceDirConfig,
        delay_sched: Option<DelaySchedule>,
        rng: Rng,
    ) -> TraceDir {
        let period = trace.period();
        TraceDir {
            opps: trace.opps.into_boxed_slice(),
            tick_ns: trace.tick_ns,
            period,
            overhead: trace.packet_overhead,
            repeat,
            round: 0,
            idx: 0,
            left: 0,
            served: Served::new(
                cfg.queue,
                cfg.delay_ns,
                delay_sched,
                LossProcess::new(&cfg.loss),
                rng,
            ),
            stats: LinkStats::default(),
            managed: None,
        }
    }

    /// Give the direction the discipline `cfg` (its hard limit is the
    /// direction's `queue`), drawing from `rng`. RED's idle damping assumes
    /// the line rate; a trace has none, so it gets the trace's mean rate.
    pub(crate) fn with_aqm(
        mut self,
        cfg: &crate::queue::AqmConfig,
        queue: QueueConfig,
        rng: Rng,
    ) -> TraceDir {
        let limit = queue_limit(queue);
        let rate = self.mean_rate_bps();
        self.managed = Some(Box::new(ManagedTx {
            m: Managed::new(cfg, limit, rate, rng),
            tx: None,
            armed: false,
        }));
        self
    }

    /// The trace's mean rate over one period, bit/s (at least 1).
    fn mean_rate_bps(&self) -> u64 {
        let bytes: u64 = self.opps.iter().map(|o| o.bytes as u64).sum();
        rate_of(bytes, self.period * self.tick_ns)
    }

    /// Time of the cursor's opportunity.
    #[inline]
    fn opp_time(&self) -> Time {
        (self.round * self.period + self.opps[self.idx].t as u64).saturating_mul(self.tick_ns)
    }

    /// Move the cursor to the first opportunity strictly after `now`;
    /// false when there is none (a trace that does not repeat has ended).
    fn seek_after(&mut self, now: Time) -> bool {
        let q = now / self.tick_ns;
        let (round, x) = (q / self.period, q % self.period);
        if round > 0 && !self.repeat {
            return false;
        }
        // The last opportunity is at `period` > x: one exists in this round.
        self.round = round;
        self.idx = self.opps.partition_point(|o| o.t as u64 <= x);
        self.left = self.opps[self.idx].bytes;
        true
    }

    /// Move the cursor to the next opportunity; false at the end of a
    /// trace that does not repeat.
    #[inline]
    fn advance(&mut self) -> bool {
        self.idx += 1;
        if self.idx == self.opps.len() {
            if !self.repeat {
                self.idx -= 1;
                self.left = 0;
                return false;
            }
            self.idx = 0;
            self.round += 1;
        }
        self.left = self.opps[self.idx].bytes;
        true
    }

    /// Packets waiting or in transit at `now`.
    pub fn backlog(&mut self, now: Time) -> usize {
        if self.managed.is_some() {
            return self.managed_held() as usize;
        }
        self.served.fifo.backlog(now)
    }

    /// Offer a packet of `bytes` (IP datagram) arriving at `now` (never
    /// earlier than the previous offer).
    #[inline]
    pub fn offer(&mut self, bytes: u32, now: Time) -> Fate {
        // dropping_packet_queue.cc: DroppingPacketQueue::good_with()
        let Some(waiting) = self.served.fifo.admit(bytes, now) else {
            self.stats.drops_queue += 1;
            return Fate::QueueDrop;
        };
        let n = self.served.fifo.len();
        // link_queue.cc: LinkQueue::rationalize(). With packets still in
        // the system the new one follows the last where it ended; with none,
        // the rest of that opportunity was lost and the new packet waits for
        // the first opportunity after its arrival.
        let mut live = n > 0 || self.seek_after(now);
        let mut need = bytes + self.overhead;
        let mut start = NEVER;
        while live {
            if self.left > 0 {
                if start == NEVER {
                    start = self.opp_time();
                }
                let take = self.left.min(need);
                self.left -= take;
                need -= take;
                if need == 0 {
                    break;
                }
            }
            live = self.advance();
        }
        let depart = if live { self.opp_time() } else { NEVER };
        self.served
            .depart(&mut self.stats, waiting, bytes, (start, depart), false)
    }

    /// A managed direction: `p` arrives at `ctx.now`. Opportunities due by
    /// now are used first (`LinkQueue::read_packet()` calls `rationalize()`
    /// before it enqueues: an opportunity serves only packets that arrived
    /// before it); then the discipline takes the packet, and an idle
    /// transmitter waits for the first opportunity after it.
    /// `place(fate, packet, ctx)` takes each packet whose service ended;
    /// `token` is the transmitter's timer.
    pub(crate) fn managed_offer(
        &mut self,
        p: Packet,
        ctx: &mut Ctx,
        token: u64,
        place: &mut impl FnMut(Fate, Parked, &mut Ctx),
    ) {
        self.serve(ctx, token, place);
        let Some(mut mx) = self.managed.take() else {
            unreachable!("managed_offer on a DropTail direction")
        };
        mx.m.enqueue(p, ctx, |_| {});
        // Packets waiting or in transit ahead of the newest.
        let n = mx.m.q.len() as u64 + mx.tx.is_some() as u64;
        self.stats.max_queue_packets = self.stats.max_queue_packets.max(n.saturating_sub(1));
        if !mx.armed && !mx.m.q.is_empty() && self.seek_after(ctx.now) {
            mx.armed = true;
            ctx.timer(self.opp_time(), token);
        }
        self.managed = Some(mx);
    }

    /// Use every opportunity due by `ctx.now` (its timer, or an arrival at
    /// the same instant that came first): `link_queue.cc:
    /// LinkQueue::rationalize()`. The packet in transit takes the
    /// opportunity's bytes first; when it has them all it leaves at the
    /// opportunity's time and the discipline gives the next one (it may
    /// drop or mark on the way). Bytes left when the queue runs dry are
    /// lost, as in `mm-link`.
    pub(crate) fn serve(
        &mut self,
        ctx: &mut Ctx,
        token: u64,
        place: &mut impl FnMut(Fate, Parked, &mut Ctx),
    ) {
        let Some(mut mx) = self.managed.take() else {
            return;
        };
        while mx.armed && self.opp_time() <= ctx.now {
            let t = self.opp_time();
            let mut left = self.left;
            while left > 0 {
                if mx.tx.is_none() {
                    let Some(h) = mx.m.dequeue(ctx, |_| {}) else {
                        break;
                    };
                    let bytes = ctx.parked_mut(&h).size;
                    mx.tx = Some(InTransit {
                        h,
                        bytes,
                        start: t,
                        need: bytes + self.overhead,
                    });
                }
                let Some(tx) = mx.tx.as_mut() else { break };
                let take = left.min(tx.need);
                left -= take;
                tx.need -= take;
                if tx.need == 0 {
                    let Some(tx) = mx.tx.take() else { break };
                    mx.m.busy = false;
                    let fate = self
                        .served
                        .sent(&mut self.stats, tx.bytes, (tx.start, t), false);
                    place(fate, tx.h, ctx);
                }
            }
            self.left = 0;
            if mx.tx.is_none() && mx.m.q.is_empty() {
                // Idle: the opportunities until the next arrival are lost.
                mx.armed = false;
            } else if self.advance() {
                ctx.timer(self.opp_time(), token);
            } else {
                // The trace ended: what is queued or in transit never leaves.
                mx.armed = false;
            }
        }
        self.managed = Some(mx);
    }

    /// Packets the discipline holds or the opportunities are carrying.
    fn managed_held(&self) -> u64 {
        self.managed
            .as_ref()
            .map_or(0, |mx| mx.m.q.len() as u64 + mx.tx.is_some() as u64)
    }
}

/// A direction of a trace hop: trace-driven, or a fixed rate (`up_rate`).
pub(crate) enum Side {
    Trace(Box<TraceDir>),
    Rate(Box<LinkDir>),
    /// A time-varying rate (the csv rate form, a LEO slot schedule).
    Varying(Box<VaryingDir>),
}

impl Side {
    #[inline]
    fn offer(&mut self, bytes: u32, now: Time) -> Fate {
        match self {
            Side::Trace(t) => t.offer(bytes, now),
            Side::Rate(l) => l.offer(bytes, now),
            Side::Varying(v) => v.offer(bytes, now),
        }
    }

    fn stats(&self) -> &LinkStats {
        match self {
            Side::Trace(t) => &t.stats,
            Side::Rate(l) => &l.stats,
            Side::Varying(v) => &v.stats,
        }
    }

    fn backlog(&mut self, now: Time) -> usize {
        match self {
            Side::Trace(t) => t.backlog(now),
            Side::Rate(l) => l.backlog(now),
            Side::Varying(v) => v.backlog(now),
        }
    }
}

/// The field a direction's errors name (the user's keys).
fn dir_key(d: Dir) -> &'static str {
    match d {
        Dir::Fwd => "down",
        Dir::Rev => "up",
    }
}

/// Load a direction's delay trace (if any); errors name the field.
pub fn load_delay(path: &Option<String>, field: &str) -> Result<Option<DelaySchedule>, String> {
    path.as_deref()
        .map(|p| DelaySchedule::load(p).map_err(|e| format!("{field}.delay_trace: {e}")))
        .transpose()
}

/// What a capacity trace file holds: delivery opportunities (Mahimahi, csv
/// `time_us,bytes`) or a rate schedule (csv `time_us,rate_bps`).
pub enum Capacity {
    Opps(CapacityTrace),
    Rates(RateTable),
}

/// Load a capacity trace; a csv file's header says which form it is.
pub fn load_capacity(path: &str, format: TraceFormat, repeat: bool) -> Result<Capacity, String> {
    if format == TraceFormat::Csv && csv_is_rate_form(path)? {
        return RateTable::load(path, repeat).map(Capacity::Rates);
    }
    CapacityTrace::load(path, format).map(Capacity::Opps)
}

/// Whether a csv trace's first line (after `#` and blank lines) is the
/// rate form's header.
fn csv_is_rate_form(path: &str) -> Result<bool, String> {
    let mut f = std::fs::File::open(path).map_err(|e| format!("{path}: cannot read: {e}"))?;
    let mut buf = vec![0u8; 1 << 16];
    let mut filled = 0;
    loop {
        let got = f
            .read(&mut buf[filled..])
            .map_err(|e| format!("{path}: cannot read: {e}"))?;
        filled += got;
        if got == 0 || filled == buf.len() {
            break;
        }
    }
    Ok(buf[..filled]
        .split(|&c| c == b'\n')
        .map(|l| l.trim_ascii())
        .find(|l| !l.is_empty() && l[0] != b'#')
        .is_some_and(|l| l == b"time_us,rate_bps"))
}

/// Load every file a trace hop names (capacity and delay traces), so a
/// scenario is checked before it runs; errors name the field and file.
pub fn check_files(cfg: &TraceConfig) -> Result<(), String> {
    for (d, c) in [(Dir::Fwd, &cfg.fwd), (Dir::Rev, &cfg.rev)] {
        if let Some(f) = &c.file {
            let k = dir_key(d);
            let cap = load_capacity(f, c.format, cfg.repeat).map_err(|e| format!("{k}: {e}"))?;
            if let Some(a) = &c.aqm {
                let Capacity::Opps(t) = cap else {
                    return Err(format!(
                        "{k}.aqm: a rate-form csv trace (time_us,rate_bps) has no discipline \
                         interface; use delivery opportunities (time_us,bytes or Mahimahi)"
                    ));
                };
                a.check(queue_limit(c.queue), mean_rate_bps(&t))
                    .map_err(|(f, e)| format!("{k}.aqm.{f}: {e}"))?;
            }
        }
        load_delay(&c.delay_trace, dir_key(d))?;
    }
    Ok(())
}

/// A file name must not hold control characters: errors name the file,
/// and an error is one line.
pub fn check_file_name(field: &str, name: &Option<String>) -> Result<(), String> {
    match name {
        Some(n) if n.chars().any(|c| c.is_ascii_control()) => Err(format!(
            "{field}: must be a file name without control characters (got {n:?})"
        )),
        _ => Ok(()),
    }
}

/// Check a trace hop's settings (the files are read by `check_files`).
pub fn check(cfg: &TraceConfig) -> Result<(), String> {
    for (d, c) in [(Dir::Fwd, &cfg.fwd), (Dir::Rev, &cfg.rev)] {
        let k = dir_key(d);
        check_file_name(k, &c.file)?;
        check_file_name("delay_trace", &c.delay_trace)?;
        match (&c.file, c.rate_bps) {
            (Some(_), Some(_)) => {
                return Err(format!(
                    "{k}: a trace file and a fixed rate cannot be combined"
                ))
            }
            (None, None) => return Err(format!("{k}: a trace file or a fixed rate is required")),
            (None, Some(0)) => return Err(format!("{k}_rate: must be > 0")),
            _ => {}
        }
        crate::loss::check(&c.loss, &format!("{k}.loss"), &format!("{k}.loss"))?;
        if let Some(a) = &c.aqm {
            if c.rate_bps.is_some() {
                return Err(format!(
                    "{k}.aqm: only a direction served by a trace file takes a discipline (not {k}_rate)"
                ));
            }
            // RED's idle damping needs the trace's mean rate, known once the
            // file is read (`check_files`); the other rules need no rate.
            a.check(queue_limit(c.queue), u64::MAX / 16)
                .map_err(|(f, e)| format!("{k}.aqm.{f}: {e}"))?;
        }
    }
    Ok(())
}

/// A direction's hard queue limit.
fn queue_limit(q: QueueConfig) -> Limit {
    match q {
        QueueConfig::Packets { limit } => Limit::Packets(limit as u64),
        QueueConfig::Bytes { limit } => Limit::Bytes(limit),
    }
}

/// A bidirectional trace-driven link as a path component. Like `LinkHop`,
/// packets on the wire wait in one FIFO pipe per direction (arrival times
/// never decrease: no overtaking), released by one timer per direction.
pub struct TraceHop {
    kind: &'static str,
    sides: [Side; 2],
    pipes: [VecDeque<(Time, Parked)>; 2],
}

impl TraceHop {
    /// Build the hop, reading its trace files.
    pub fn new(cfg: &TraceConfig, seed: u64, idx: usize) -> Result<TraceHop, String> {
        let side = |d: Dir, c: &TraceDirConfig| -> Result<Side, String> {
            let k = dir_key(d);
            let rng = Rng::stream(seed, &format!("trace/{idx}/{k}"));
            let sched = load_delay(&c.delay_trace, k)?;
            Ok(match (&c.file, c.rate_bps) {
                (Some(f), _) => {
                    match load_capacity(f, c.format, cfg.repeat).map_err(|e| format!("{k}: {e}"))? {
                        Capacity::Opps(t) => {
                            let mut dir = TraceDir::new(t, cfg.repeat, c, sched, rng);
                            if let Some(a) = &c.aqm {
                                let rng = Rng::stream(seed, &format!("trace/{idx}/{k}/aqm"));
                                dir = dir.with_aqm(a, c.queue, rng);
                            }
                            Side::Trace(Box::new(dir))
                        }
                        Capacity::Rates(_) if c.aqm.is_some() => {
                            return Err(format!(
                                "{k}.aqm: a rate-form csv trace has no discipline interface"
                            ))
                        }
                        Capacity::Rates(t) => Side::Varying(Box::new(VaryingDir::new(
                            t,
                            c.queue,
                            c.delay_ns,
                            sched,
                            LossProcess::new(&c.loss),
                            None,
                            rng,
                        ))),
                    }
                }
                (None, rate) => {
                    let lc = LinkDirConfig {
                        rate_bps: rate.unwrap_or(0),
                        delay_ns: c.delay_ns,
                        queue: c.queue,
                        loss: c.loss,
                        overhead_bytes: 0,
                        bits_per_byte: 8,
                        reorder: None,
                        outages_ns: Vec::new(),
                        stalls_ns: Vec::new(),
                        delay_trace: None,
                        aqm: None,
                    };
                    let mut l = LinkDir::new(&lc, rng);
                    l.set_delay_schedule(sched);
                    Side::Rate(Box::new(l))
                }
            })
        };
        Ok(TraceHop::from_sides(
            "trace",
            [side(Dir::Fwd, &cfg.fwd)?, side(Dir::Rev, &cfg.rev)?],
        ))
    }

    /// A hop from its two directions; `kind` names it in the summary.
    pub(crate) fn from_sides(kind: &'static str, sides: [Side; 2]) -> TraceHop {
        TraceHop {
            kind,
            sides,
            pipes: [VecDeque::with_capacity(64), VecDeque::with_capacity(64)],
        }
    }
}

/// Put a packet whose service on a managed direction ended where its fate
/// says: the direction's pipe, or the loss counter.
fn place(pipe: &mut VecDeque<(Time, Parked)>, token: u64, fate: Fate, h: Parked, ctx: &mut Ctx) {
    match fate {
        Fate::Arrives { at, tx_start } | Fate::Reordered { at, tx_start } => {
            let p = *ctx.parked_mut(&h);
            ctx.tap(&p, tx_start);
            debug_assert!(pipe.back().is_none_or(|b| b.0 <= at));
            if pipe.is_empty() && at != NEVER {
                ctx.timer(at, token);
            }
            pipe.push_back((at, h));
        }
        Fate::Lost { tx_start } => {
            let p = ctx.unpark(h);
            ctx.tap(&p, tx_start);
            ctx.drop(p, DropKind::Loss);
        }
        Fate::QueueDrop => unreachable!("a managed queue drops in its discipline"),
    }
}

impl TraceHop {
    /// The managed trace direction `d`, if it is one.
    #[inline]
    fn managed(&mut self, d: usize) -> Option<&mut TraceDir> {
        match &mut self.sides[d] {
            Side::Trace(t) if t.managed.is_some() => Some(t),
            _ => None,
        }
    }
}

impl Component for TraceHop {
    #[inline]
    fn on_packet(&mut self, p: Packet, ctx: &mut Ctx) {
        let d = p.dir as usize;
        if let Side::Trace(t) = &mut self.sides[d] {
            if t.managed.is_some() {
                let pipe = &mut self.pipes[d];
                let mut put = |f: Fate, h: Parked, ctx: &mut Ctx| place(pipe, d as u64, f, h, ctx);
                return t.managed_offer(p, ctx, 2 + d as u64, &mut put);
            }
        }
        match self.sides[d].offer(p.size, ctx.now) {
            Fate::Arrives { at, tx_start } | Fate::Reordered { at, tx_start } => {
                if tx_start != NEVER {
                    ctx.tap(&p, tx_start);
                }
                let pipe = &mut self.pipes[d];
                debug_assert!(pipe.back().is_none_or(|b| b.0 <= at));
                if pipe.is_empty() && at != NEVER {
                    ctx.timer(at, d as u64);
                }
                pipe.push_back((at, ctx.park(p)));
            }
            Fate::Lost { tx_start } => {
                if tx_start != NEVER {
                    ctx.tap(&p, tx_start);
                }
                ctx.drop(p, DropKind::Loss);
            }
            Fate::QueueDrop => ctx.drop(p, DropKind::Queue),
        }
    }

    fn on_timer(&mut self, token: u64, ctx: &mut Ctx) {
        if token >= 2 {
            // A managed direction's delivery opportunity.
            let d = token as usize - 2;
            if let Side::Trace(t) = &mut self.sides[d] {
                let pipe = &mut self.pipes[d];
                let mut put = |f: Fate, h: Parked, ctx: &mut Ctx| place(pipe, d as u64, f, h, ctx);
                t.serve(ctx, token, &mut put);
            }
            return;
        }
        let pipe = &mut self.pipes[token as usize];
        while let Some(&(at, _)) = pipe.front() {
            if at > ctx.now {
                if at != NEVER {
                    ctx.timer(at, token);
                }
                break;
            }
            if let Some((_, h)) = pipe.pop_front() {
                ctx.forward_parked_now(h);
            }
        }
    }

    fn held(&self) -> u64 {
        let managed: u64 = self
            .sides
            .iter()
            .map(|s| match s {
                Side::Trace(t) => t.managed_held(),
                _ => 0,
            })
            .sum();
        (self.pipes[0].len() + self.pipes[1].len()) as u64 + managed
    }

    fn stats(&self, name: &str) -> Vec<serde_json::Value> {
        ["fwd", "rev"]
            .iter()
            .zip(self.sides.iter())
            .map(|(d, side)| {
                let s = side.stats();
                let mut v = serde_json::json!({
                    "name": name, "kind": self.kind, "dir": d, "tx_packets": s.tx_packets,
                    "tx_bytes": s.tx_bytes, "drops_queue": s.drops_queue,
                    "drops_loss": s.drops_loss, "max_queue_packets": s.max_queue_packets,
                    "reordered": s.reordered,
                });
                if let Side::Trace(t) = side {
                    if let Some(mx) = &t.managed {
                        mx.m.stats_into(&mut v);
                    }
                }
                v
            })
            .collect()
    }

    fn tx_packets(&self) -> u64 {
        self.sides[0].stats().tx_packets + self.sides[1].stats().tx_packets
    }

    fn backlog(&mut self, dir: Dir, now: Time) -> Option<u64> {
        Some(self.sides[dir as usize].backlog(now) as u64)
    }

    fn queue_delay(&mut self, dir: Dir, _now: Time) -> Option<Time> {
        self.managed(dir as usize)
            .and_then(|t| t.managed.as_ref().map(|mx| mx.m.last_sojourn))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::LossConfig;

    fn mm(lines: &str) -> CapacityTrace {
        CapacityTrace::parse(lines.as_bytes(), "t.down", TraceFormat::Mahimahi).unwrap()
    }

    fn dir_cfg(limit: u32) -> TraceDirConfig {
        TraceDirConfig {
            file: None,
            format: TraceFormat::Mahimahi,
            rate_bps: None,
            delay_ns: 0,
            delay_trace: None,
            queue: QueueConfig::Packets { limit },
            loss: LossConfig::None,
            aqm: None,
        }
    }

    fn dir(lines: &str, limit: u32, repeat: bool) -> TraceDir {
        TraceDir::new(
            mm(lines),
            repeat,
            &dir_cfg(limit),
            None,
            Rng::stream(1, "t"),
        )
    }

    const MS: Time = 1_000_000;

    fn at(f: Fate) -> Time {
        match f {
            Fate::Arrives { at, .. } => at,
            f => panic!("{f:?}"),
        }
    }

    #[test]
    fn opportunities_at_one_timestamp_merge_and_the_period_is_the_last() {
        let t = mm("0\n0\n3\n3\n3\n10\n");
        assert_eq!(
            t.opps,
            [
                Opp { t: 0, bytes: 3008 },
                Opp { t: 3, bytes: 4512 },
                Opp { t: 10, bytes: 1504 }
            ]
        );
        assert_eq!(t.duration_ns(), 10 * MS);
        // [0, 10 ms) holds the first two entries; [0, 20.000001 ms) two
        // whole rounds (9024 bytes each, the second ending at 20 ms) and
        // the third round's first entry, also at 20 ms.
        assert_eq!(t.bytes_before(10 * MS, true), 7520);
        assert_eq!(t.bytes_before(20 * MS + 1, true), 2 * 9024 + 3008);
        assert_eq!(t.bytes_before(30 * MS, false), 7520 + 1504);
    }

    #[test]
    fn a_full_packet_uses_one_opportunity_small_ones_share_and_a_large_one_continues() {
        let mut l = dir("1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n", 1000, true);
        // A 1500-byte datagram (1504 with the TUN header) fills one
        // opportunity: arrivals at 0 leave at 1, 2, 3 ms.
        assert_eq!(at(l.offer(1500, 0)), MS);
        assert_eq!(at(l.offer(1500, 0)), 2 * MS);
        assert_eq!(at(l.offer(1500, 0)), 3 * MS);
        // 40-byte ACKs cost 44 bytes: 34 of them fit in one opportunity.
        let mut l = dir("1\n2\n3\n4\n", 1000, true);
        let deps: Vec<Time> = (0..35).map(|_| at(l.offer(40, 0))).collect();
        assert!(deps[..34].iter().all(|&d| d == MS));
        assert_eq!(deps[34], 2 * MS);
        // 1000-byte packets cost 1004: the second uses the 500 bytes left
        // at 1 ms and 504 at 2 ms, the third the 1000 left there and 4 at
        // 3 ms, the fourth 1004 of the 1500 left at 3 ms.
        let mut l = dir("1\n2\n3\n4\n", 1000, true);
        let deps: Vec<Time> = (0..4).map(|_| at(l.offer(1000, 0))).collect();
        assert_eq!(deps, [MS, 2 * MS, 3 * MS, 3 * MS]);
    }

    #[test]
    fn bytes_of_an_opportunity_that_finds_the_queue_empty_are_lost() {
        let mut l = dir("1\n2\n3\n4\n", 1000, true);
        assert_eq!(at(l.offer(100, 0)), MS);
        // The queue is empty after 1 ms: the 1400 bytes left are lost, a
        // packet arriving at 1.5 ms leaves at the next opportunity.
        assert_eq!(at(l.offer(100, 3 * MS / 2)), 2 * MS);
        // An arrival at exactly an opportunity's time misses it (mm-link
        // burns the opportunity before it enqueues the packet).
        assert_eq!(at(l.offer(100, 3 * MS)), 4 * MS);
        // An arrival just before an opportunity that the previous packet
        // left unfinished shares it.
        let mut l = dir("1\n2\n3\n4\n", 1000, true);
        assert_eq!(at(l.offer(100, 0)), MS);
        assert_eq!(at(l.offer(100, MS - 1)), MS);
    }

    #[test]
    fn the_trace_repeats_with_the_period_of_its_last_timestamp() {
        // Opportunities at 0, 5 ms; period 5 ms: then 5 (0 of round 1),
        // 10, 10, 15, 15, ...
        let mut l = dir("0\n5\n", 1000, true);
        let deps: Vec<Time> = (0..5).map(|_| at(l.offer(1500, 0))).collect();
        assert_eq!(deps, [5 * MS, 5 * MS, 10 * MS, 10 * MS, 15 * MS]);
        // An idle gap of many rounds is skipped in one search.
        assert_eq!(at(l.offer(1500, 1_000 * MS + 1)), 1_005 * MS);
        // Without repeat, packets after the end never leave.
        let mut l = dir("0\n5\n", 1000, false);
        assert_eq!(at(l.offer(1500, 0)), 5 * MS);
        assert_eq!(at(l.offer(1500, 0)), NEVER);
        assert_eq!(at(l.offer(1500, 6 * MS)), NEVER);
    }

    #[test]
    fn the_limit_counts_waiting_packets_not_the_one_in_transit() {
        // One packet waiting is allowed. At 0 the first waits for the
        // opportunity at 1 ms: the second is refused.
        let mut l = dir("1\n2\n3\n4\n5\n", 1, true);
        assert_eq!(at(l.offer(1500, 0)), MS);
        assert_eq!(l.offer(1500, 0), Fate::QueueDrop);
        // A 3000-byte packet spans 2 and 3 ms; at 2.5 ms it is in transit,
        // so one more may wait.
        let mut l = dir("1\n2\n3\n4\n5\n", 1, true);
        assert_eq!(at(l.offer(2996, MS + 1)), 3 * MS);
        assert_eq!(at(l.offer(1500, 5 * MS / 2)), 4 * MS);
        assert_eq!(l.offer(1500, 5 * MS / 2), Fate::QueueDrop);
        assert_eq!(l.stats.drops_queue, 1);
    }

    #[test]
    fn csv_traces_have_microsecond_opportunities_with_byte_counts() {
        let src = "# a comment\ntime_us,bytes\n10,1500\n10,500\n25,100\n";
        let t = CapacityTrace::parse(src.as_bytes(), "x.csv", TraceFormat::Csv).unwrap();
        assert_eq!(
            t.opps,
            [Opp { t: 10, bytes: 2000 }, Opp { t: 25, bytes: 100 }]
        );
        let mut l = TraceDir::new(t, true, &dir_cfg(100), None, Rng::stream(1, "t"));
        // No per-packet overhead in csv: 2000 bytes carry a 1500 and a 500.
        assert_eq!(at(l.offer(1500, 0)), 10_000);
        assert_eq!(at(l.offer(500, 0)), 10_000);
        assert_eq!(at(l.offer(100, 0)), 25_000);
    }

    #[test]
    fn bad_traces_get_one_line_errors_naming_file_and_line() {
        let e = |s: &str, f| CapacityTrace::parse(s.as_bytes(), "t.down", f).unwrap_err();
        let m = TraceFormat::Mahimahi;
        assert_eq!(e("", m), "t.down: no delivery opportunities (empty trace)");
        assert_eq!(
            e("1\n5\n3\n", m),
            "t.down:3: timestamps must not decrease (3 after 5) (got \"3\")"
        );
        assert_eq!(
            e("1\nabc\n", m),
            "t.down:2: must be a whole number of milliseconds (got \"abc\")"
        );
        assert_eq!(
            e("1\n\n3\n", m),
            "t.down:2: must be a whole number of milliseconds (got \"\")"
        );
        assert_eq!(
            e("0\n0\n", m),
            "t.down:2: the trace must last longer than 0 (its last timestamp is 0)"
        );
        let c = TraceFormat::Csv;
        assert_eq!(
            e("10,5\n", c),
            "t.down:1: the first line must be the header time_us,bytes (or time_us,rate_bps) (got \"10,5\")"
        );
        assert_eq!(
            e("time_us,bytes\n10,0\n", c),
            "t.down:2: bytes must be between 1 and 4294967295 (got \"10,0\")"
        );
        let missing = CapacityTrace::load("/nonexistent/x.down", m).unwrap_err();
        assert!(
            missing.starts_with("/nonexistent/x.down: cannot read: "),
            "{missing}"
        );
        // A trace with CRLF line ends and no final newline loads.
        assert_eq!(mm("1\r\n2").opps.len(), 2);
        for e in [e("1\n5\n3\n", m), missing] {
            assert!(!e.contains('\n'));
        }
        // A file name with a control character would make a message of two lines.
        assert_eq!(
            check_file_name("down", &Some("a\nb".into())).unwrap_err(),
            "down: must be a file name without control characters (got \"a\\nb\")"
        );
        assert!(check_file_name("down", &Some("traces/a b.down".into())).is_ok());
    }

    #[test]
    fn a_long_trace_is_read_in_chunks() {
        // Lines straddle the 1 MiB read boundary.
        let mut s = String::new();
        for k in 1..=300_000u32 {
            s.push_str(&format!("{}\n", k / 3 + 1));
        }
        let t = mm(&s);
        assert_eq!(t.opps.len(), 100_001);
        assert_eq!(t.total_bytes(), 300_000 * 1504);
    }

    #[test]
    fn delay_traces_never_let_a_packet_overtake() {
        let src = "time_ms,delay_ms\n# comment\n0,50\n100,10\n200,80.5\n";
        let mut s = DelaySchedule::parse(src.as_bytes(), "d.csv").unwrap();
        assert_eq!(s.arrival(0), 50 * MS);
        assert_eq!(s.arrival(99 * MS), 149 * MS);
        // The delay drops by 40 ms at 100 ms: packets bunch behind the last.
        assert_eq!(s.arrival(100 * MS), 149 * MS);
        assert_eq!(s.arrival(140 * MS), 150 * MS);
        // It rises at 200 ms: packets stretch.
        assert_eq!(s.arrival(200 * MS), 280 * MS + 500_000);
        assert_eq!(s.arrival(10_000 * MS), 10_080 * MS + 500_000);
        let e = DelaySchedule::parse("0,5\n0,6\n".as_bytes(), "d.csv").unwrap_err();
        assert_eq!(e, "d.csv:2: times must increase (got \"0,6\")");
        let e = DelaySchedule::parse("0,5.1234567\n".as_bytes(), "d.csv").unwrap_err();
        assert!(e.starts_with("d.csv:1: must be time_ms,delay_ms"), "{e}");
    }
}
