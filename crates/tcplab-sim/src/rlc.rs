//! W-CDMA radio bearer: RLC acknowledged mode (3GPP TS 25.322) over a
//! dedicated channel, one instance per direction, plus a delay-spike
//! process shared by both directions.
//!
//! Model (Sekiguchi 2008 §2): an IP packet is cut into RLC PDUs of
//! `pdu_bytes`; each PDU is sent at the direction's rate and fails with
//! probability `bler`; a failed PDU is sent again after `retx_interval`
//! (the status-report/poll cycle), up to `max_dat` transmissions in all. A PDU
//! that fails `max_dat` times makes the RLC discard the whole SDU (the TCP
//! packet is lost). The receiving RLC delivers SDUs in sequence, so a packet
//! waiting for a PDU retransmission blocks every later packet (head-of-line
//! blocking). Retransmitted PDUs use the radio's capacity too.
//!
//! Delay spikes (handover, shadowing, channel reallocation) are radio
//! stalls: a Poisson process of rate `spike_rate_per_s` with durations drawn
//! from `spike_duration`; during a stall nothing moves in either direction.
//!
//! Fades (optional): a second Poisson process of periods in which every PDU
//! transmission attempt fails with `fade_bler` instead of `bler` (errors
//! correlated in time, a two-state Gilbert–Elliott channel with general
//! sojourn times). An attempt's state is the state at the time the attempt is
//! made: the first at the end of the packet's transmission, the k-th
//! retransmission `k × retx_interval` later.
//!
//! Simplifications (documented, not hidden): the retransmission of a PDU
//! completes `k × retx_interval` after its first transmission regardless of
//! the queue in front of it; capacity used by retransmissions delays later
//! packets; no transport-channel TTI granularity.

use std::collections::VecDeque;

use crate::component::{Component, Ctx, DropKind};
use crate::config::{Dist, RlcConfig, RlcDirConfig};
use crate::dist::sample;
use crate::engine::Packet;
use crate::queue::managed::Managed;
use crate::queue::Limit;
use crate::rng::Rng;
use tcplab_tcp::Time;

#[derive(Clone, Copy, Debug, Default)]
pub struct RlcStats {
    pub tx_packets: u64,
    /// IP bytes of the packets counted in `tx_packets`.
    pub tx_bytes: u64,
    pub pdus: u64,
    pub pdu_retx: u64,
    pub drops_maxdat: u64,
    pub drops_queue: u64,
    /// Packets delayed by head-of-line blocking behind an earlier one.
    pub hol_blocked: u64,
}

/// The stall schedule (both directions see the same stalls).
pub struct Spikes {
    rate_per_s: f64,
    duration: Dist,
    rng: Rng,
    /// Stalls [start, end), sorted; generated up to `horizon`.
    stalls: VecDeque<(Time, Time)>,
    horizon: Time,
    /// Scheduled stalls [start, end), sorted (configuration).
    fixed: Vec<(Time, Time)>,
    pub count: u64,
    pub total_ns: u64,
}

impl Spikes {
    pub fn new(rate_per_s: f64, duration: Dist, rng: Rng) -> Spikes {
        Spikes {
            rate_per_s,
            duration,
            rng,
            stalls: VecDeque::new(),
            horizon: 0,
            fixed: Vec::new(),
            count: 0,
            total_ns: 0,
        }
    }

    /// Add scheduled stalls (start, duration).
    pub fn with_fixed(mut self, stalls: &[(Time, Time)]) -> Spikes {
        self.fixed = stalls.iter().map(|&(s, d)| (s, s + d)).collect();
        self.fixed.sort_unstable();
        self.count += self.fixed.len() as u64;
        self.total_ns += stalls.iter().map(|s| s.1).sum::<Time>();
        self
    }

    /// The stall (random or scheduled) containing `t`, if any: its end.
    fn inside(&self, t: Time) -> Option<Time> {
        let r = self
            .stalls
            .iter()
            .take_while(|s| s.0 <= t)
            .find(|s| t < s.1)
            .map(|s| s.1);
        let f = self
            .fixed
            .iter()
            .take_while(|s| s.0 <= t)
            .find(|s| t < s.1)
            .map(|s| s.1);
        r.max(f)
    }

    /// Whether `t` falls in a period (stall or fade) of this schedule.
    pub fn active(&mut self, t: Time) -> bool {
        self.generate_to(t);
        self.inside(t).is_some()
    }

    /// The earliest stall start strictly after `t`, with its end.
    fn next_after(&self, t: Time) -> Option<(Time, Time)> {
        let r = self.stalls.iter().find(|s| s.0 > t).copied();
        let f = self.fixed.iter().find(|s| s.0 > t).copied();
        match (r, f) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn generate_to(&mut self, t: Time) {
        if self.rate_per_s <= 0.0 {
            return;
        }
        // Stalls past twice the longest allowed time can never matter (every
        // configured time is ≤ MAX_TIME_NS, so a run ends before that).
        let t = t.min(2 * tcplab_tcp::MAX_TIME_NS);
        while self.horizon <= t {
            let gap = (self.rng.exponential(1.0 / self.rate_per_s) * 1e9) as Time;
            let start = self.horizon.saturating_add(gap.max(1));
            let dur = (sample(&self.duration, &mut self.rng) * 1e9) as Time;
            let end = start.saturating_add(dur);
            self.count += 1;
            self.total_ns += dur;
            self.stalls.push_back((start, end));
            self.horizon = end;
        }
    }

    /// Forget stalls that ended before `t` (nothing asks about them again).
    fn prune(&mut self, t: Time) {
        while self
            .stalls
            .front()
            .is_some_and(|s| s.1.saturating_add(60_000_000_000) < t)
        {
            self.stalls.pop_front();
        }
    }

    /// The first instant at or after `t` outside a stall.
    pub fn free_at(&mut self, t: Time) -> Time {
        let mut t = t;
        loop {
            self.generate_to(t);
            match self.inside(t) {
                Some(e) => t = e,
                None => return t,
            }
        }
    }

    /// When `work` ns of transmission starting at `t` ends, pausing in stalls.
    pub fn advance(&mut self, t: Time, work: Time) -> Time {
        let mut t = self.free_at(t);
        let mut work = work;
        loop {
            self.generate_to(t.saturating_add(work));
            match self.next_after(t) {
                Some((s, e)) if s < t.saturating_add(work) => {
                    work -= s - t;
                    t = self.free_at(e);
                }
                _ => return t.saturating_add(work),
            }
        }
    }
}

pub struct RlcDir {
    cfg: RlcDirConfig,
    pdu_bytes: u32,
    retx_interval: Time,
    max_dat: u32,
    delay: Time,
    rng: Rng,
    busy_until: Time,
    /// In-sequence delivery: the last SDU release time.
    last_release: Time,
    /// Transmission end times of accepted packets (queue occupancy).
    inq: VecDeque<Time>,
    pub stats: RlcStats,
}

/// What happens to one packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RlcFate {
    Delivered {
        at: Time,
        tx_start: Time,
    },
    /// Discarded after MaxDAT (the RLC gives up on the SDU at `at`).
    MaxDat {
        tx_start: Time,
    },
    QueueDrop,
}

impl RlcDir {
    fn new(c: &RlcConfig, d: &RlcDirConfig, rng: Rng) -> RlcDir {
        RlcDir {
            cfg: d.clone(),
            pdu_bytes: c.pdu_bytes,
            retx_interval: c.retx_interval_ns,
            max_dat: c.max_dat,
            delay: d.delay_ns,
            rng,
            busy_until: 0,
            last_release: 0,
            inq: VecDeque::new(),
            stats: RlcStats::default(),
        }
    }

    /// SDUs accepted and not yet through the radio at `now` (what the
    /// queue limit counts); reads `inq` without purging it.
    pub fn queued(&self, now: Time) -> u64 {
        // Transmission end times are pushed in order (each starts after busy_until).
        (self.inq.len() - self.inq.partition_point(|&e| e <= now)) as u64
    }

    fn pdu_time(&self) -> Time {
        (self.pdu_bytes as u64 * 8 * 1_000_000_000).div_ceil(self.cfg.rate_bps)
    }

    pub fn offer(
        &mut self,
        bytes: u32,
        now: Time,
        spikes: &mut Spikes,
        fades: &mut Spikes,
    ) -> RlcFate {
        while self.inq.front().is_some_and(|&e| e <= now) {
            self.inq.pop_front();
        }
        if self.inq.len() as u64 > self.cfg.queue_packets as u64 {
            self.stats.drops_queue += 1;
            return RlcFate::QueueDrop;
        }
        let tx_start = spikes.free_at(self.busy_until.max(now));
        let (fate, tx_end) = self.send(bytes, tx_start, spikes, fades);
        self.inq.push_back(tx_end);
        fate
    }

    /// The radio sends a packet of `bytes` from `tx_start` (outside a
    /// stall): its PDUs' transmissions and retransmissions, and when the
    /// receiving RLC releases it in sequence (or gives it up); with the end of
    /// its first transmission (the buffer's occupancy counts it until then).
    pub fn send(
        &mut self,
        bytes: u32,
        tx_start: Time,
        spikes: &mut Spikes,
        fades: &mut Spikes,
    ) -> (RlcFate, Time) {
        let n_pdus = bytes.div_ceil(self.pdu_bytes).max(1) as u64;
        let pdu_t = self.pdu_time();
        let tx_end = spikes.advance(tx_start, n_pdus * pdu_t);
        // Per PDU: transmissions until success, at most MaxDAT (TS 25.322 §9.7.3.4).
        let mut worst = 0u32;
        let mut retx = 0u64;
        let mut lost = false;
        let faded = |fades: &mut Spikes, k: u32| {
            fades.rate_per_s > 0.0 && fades.active(tx_end + k as u64 * self.retx_interval)
        };
        for _ in 0..n_pdus {
            let mut k = 0u32;
            loop {
                let p = if faded(fades, k) {
                    self.cfg.fade_bler
                } else {
                    self.cfg.bler
                };
                if !self.rng.bernoulli(p) {
                    break;
                }
                k += 1;
                if k >= self.max_dat {
                    lost = true;
                    break;
                }
            }
            retx += k.min(self.max_dat - 1) as u64;
            worst = worst.max(k);
        }
        self.stats.pdus += n_pdus;
        self.stats.pdu_retx += retx;
        self.stats.tx_packets += 1;
        self.stats.tx_bytes += bytes as u64;
        // Retransmitted PDUs take capacity from what follows.
        self.busy_until = spikes.advance(tx_end, retx * pdu_t);
        // The last PDU to get through decides when the SDU is complete; a
        // discarded SDU holds the in-sequence queue until the RLC gives up
        // after MaxDAT − 1 retransmission intervals.
        let k = worst.min(self.max_dat - 1) as u64;
        let ready = spikes.free_at(tx_end.saturating_add(k.saturating_mul(self.retx_interval)));
        if ready < self.last_release {
            self.stats.hol_blocked += 1;
        }
        let release = ready.max(self.last_release);
        self.last_release = release;
        if lost {
            self.stats.drops_maxdat += 1;
            return (RlcFate::MaxDat { tx_start }, tx_end);
        }
        let at = release + self.delay;
        (RlcFate::Delivered { at, tx_start }, tx_end)
    }
}

/// Structural checks; the message names the field and the rule.
pub fn check(c: &RlcConfig) -> Result<(), String> {
    if c.pdu_bytes == 0 {
        return Err("rlc.pdu_size: must be > 0".into());
    }
    if c.max_dat == 0 {
        return Err(format!("rlc.max_dat: must be >= 1 (got {})", c.max_dat));
    }
    if !(c.spike_rate_per_s >= 0.0 && c.spike_rate_per_s.is_finite()) {
        return Err("rlc.spike_rate: must be >= 0".into());
    }
    crate::dist::check(&c.spike_duration_s).map_err(|e| format!("rlc.spike_duration.{e}"))?;
    if !(c.fade_rate_per_s >= 0.0 && c.fade_rate_per_s.is_finite()) {
        return Err("rlc.fade_rate: must be >= 0".into());
    }
    if let Some(d) = &c.fade_duration_s {
        crate::dist::check(d).map_err(|e| format!("rlc.fade_duration.{e}"))?;
    } else if c.fade_rate_per_s > 0.0 {
        return Err("rlc.fade_duration: required when fade_rate > 0".into());
    }
    for (d, x) in [("down", &c.down), ("up", &c.up)] {
        if x.rate_bps == 0 {
            return Err(format!("rlc.{d}.rate: must be > 0"));
        }
        if let Some(a) = &x.aqm {
            a.check(Limit::Packets(x.queue_packets as u64), x.rate_bps)
                .map_err(|(k, e)| format!("rlc.{d}.aqm.{k}: {e}"))?;
        }
        if !(0.0..1.0).contains(&x.bler) {
            return Err(format!("rlc.{d}.bler: must be in [0, 1) (got {})", x.bler));
        }
        if !(0.0..1.0).contains(&x.fade_bler) {
            return Err(format!(
                "rlc.{d}.fade_bler: must be in [0, 1) (got {})",
                x.fade_bler
            ));
        }
    }
    Ok(())
}

pub struct RlcHop {
    dirs: [RlcDir; 2],
    spikes: Spikes,
    fades: Spikes,
    /// Directions whose buffer runs a queue discipline (`aqm`).
    managed: [Option<Box<Managed>>; 2],
    /// A managed direction's transmitter timer is armed (timer token = direction).
    armed: [bool; 2],
}

impl RlcHop {
    pub fn new(cfg: &RlcConfig, seed: u64, idx: usize) -> RlcHop {
        RlcHop {
            dirs: [
                RlcDir::new(
                    cfg,
                    &cfg.down,
                    Rng::stream(seed, &format!("rlc/{idx}/down")),
                ),
                RlcDir::new(cfg, &cfg.up, Rng::stream(seed, &format!("rlc/{idx}/up"))),
            ],
            spikes: Spikes::new(
                cfg.spike_rate_per_s,
                cfg.spike_duration_s.clone(),
                Rng::stream(seed, &format!("rlc/{idx}/spike")),
            )
            .with_fixed(&cfg.stalls_ns),
            fades: Spikes::new(
                cfg.fade_rate_per_s,
                cfg.fade_duration_s
                    .clone()
                    .unwrap_or(Dist::Const { value: 0.0 }),
                Rng::stream(seed, &format!("rlc/{idx}/fade")),
            ),
            managed: [(&cfg.down, "down"), (&cfg.up, "up")].map(|(d, n)| {
                d.aqm.as_ref().map(|a| {
                    Box::new(Managed::new(
                        a,
                        Limit::Packets(d.queue_packets as u64),
                        d.rate_bps,
                        Rng::stream(seed, &format!("rlc/{idx}/{n}/aqm")),
                    ))
                })
            }),
            armed: [false; 2],
        }
    }

    /// The radio of managed direction `d` may start a packet: at the end of
    /// the previous one (its retransmissions included) and outside a stall.
    /// The discipline gives the next packet when the radio starts it, so its
    /// sojourn runs from enqueue to the start of its radio transmission and
    /// CoDel's dequeue-time drops happen then (`codel_dequeue()`).
    fn transmit_next(&mut self, d: usize, ctx: &mut Ctx) {
        let start = self.spikes.free_at(self.dirs[d].busy_until.max(ctx.now));
        if start > ctx.now {
            self.armed[d] = true;
            ctx.timer(start, d as u64);
            return;
        }
        self.armed[d] = false;
        let m = self.managed[d].as_mut().unwrap();
        let Some(h) = m.dequeue(ctx, |_| {}) else {
            return;
        };
        let bytes = ctx.parked_mut(&h).size;
        let (fate, _) = self.dirs[d].send(bytes, start, &mut self.spikes, &mut self.fades);
        self.armed[d] = true;
        ctx.timer(self.dirs[d].busy_until, d as u64);
        debug_assert!(
            fate != RlcFate::QueueDrop,
            "a managed buffer drops in its discipline"
        );
        place(ctx.unpark(h), fate, ctx);
    }
}

/// A packet the radio has taken goes on, or is lost, as its fate says.
#[inline]
fn place(p: Packet, fate: RlcFate, ctx: &mut Ctx) {
    match fate {
        RlcFate::Delivered { at, tx_start } => {
            ctx.tap(&p, tx_start);
            ctx.forward(p, at);
        }
        RlcFate::MaxDat { tx_start } => {
            ctx.tap(&p, tx_start);
            ctx.drop(p, DropKind::Loss);
        }
        RlcFate::QueueDrop => ctx.drop(p, DropKind::Queue),
    }
}

impl Component for RlcHop {
    fn on_packet(&mut self, p: Packet, ctx: &mut Ctx) {
        self.spikes.prune(ctx.now);
        self.fades.prune(ctx.now);
        let d = p.dir as usize;
        if let Some(m) = self.managed[d].as_mut() {
            m.enqueue(p, ctx, |_| {});
            if !self.armed[d] {
                self.transmit_next(d, ctx);
            }
            return;
        }
        let fate = self.dirs[d].offer(p.size, ctx.now, &mut self.spikes, &mut self.fades);
        place(p, fate, ctx);
    }

    fn on_timer(&mut self, token: u64, ctx: &mut Ctx) {
        self.armed[token as usize] = false;
        self.transmit_next(token as usize, ctx);
    }

    fn held(&self) -> u64 {
        self.managed
            .iter()
            .flatten()
            .map(|m| m.q.len() as u64)
            .sum()
    }

    fn stats(&self, name: &str) -> Vec<serde_json::Value> {
        ["fwd", "rev"]
            .iter()
            .zip(self.dirs.iter().zip(self.managed.iter()))
            .map(|(d, (l, m))| {
                let s = l.stats;
                let mut v = serde_json::json!({
                    "name": name, "kind": "rlc", "dir": d, "tx_packets": s.tx_packets,
                    "tx_bytes": s.tx_bytes,
                    "pdus": s.pdus, "pdu_retx": s.pdu_retx, "drops_loss": s.drops_maxdat,
                    "drops_queue": s.drops_queue, "hol_blocked": s.hol_blocked,
                    "stalls": self.spikes.count,
                    "stall_s": self.spikes.total_ns as f64 * 1e-9,
                });
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

    fn queue_len(&mut self, dir: crate::engine::Dir, now: Time) -> Option<u64> {
        if let Some(m) = &self.managed[dir as usize] {
            return Some(m.backlog());
        }
        Some(self.dirs[dir as usize].queued(now))
    }

    fn queue_delay(&mut self, dir: crate::engine::Dir, _now: Time) -> Option<Time> {
        self.managed[dir as usize].as_ref().map(|m| m.last_sojourn)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(bler: f64, max_dat: u32, rate: f64) -> RlcConfig {
        RlcConfig {
            name: "radio".into(),
            pdu_bytes: 42,
            retx_interval_ns: 400_000_000,
            max_dat,
            down: RlcDirConfig {
                rate_bps: 384_000,
                bler,
                fade_bler: 0.0,
                delay_ns: 50_000_000,
                queue_packets: 1000,
                aqm: None,
            },
            up: RlcDirConfig {
                rate_bps: 64_000,
                bler,
                fade_bler: 0.0,
                delay_ns: 50_000_000,
                queue_packets: 1000,
                aqm: None,
            },
            spike_rate_per_s: rate,
            spike_duration_s: Dist::Const { value: 2.0 },
            stalls_ns: vec![],
            fade_rate_per_s: 0.0,
            fade_duration_s: None,
        }
    }

    fn run(c: &RlcConfig, n: usize) -> (Vec<Option<Time>>, RlcStats) {
        let mut d = RlcDir::new(c, &c.down, Rng::stream(1, "t"));
        let mut sp = Spikes::new(
            c.spike_rate_per_s,
            c.spike_duration_s.clone(),
            Rng::stream(1, "s"),
        );
        let mut fd = Spikes::new(
            c.fade_rate_per_s,
            c.fade_duration_s
                .clone()
                .unwrap_or(Dist::Const { value: 0.0 }),
            Rng::stream(1, "f"),
        );
        let mut out = vec![];
        for i in 0..n {
            let now = i as Time * 40_000_000; // 1500 B every 40 ms ≈ 300 kb/s
            out.push(match d.offer(1500, now, &mut sp, &mut fd) {
                RlcFate::Delivered { at, .. } => Some(at),
                _ => None,
            });
        }
        (out, d.stats)
    }

    #[test]
    fn queued_counts_sdus_not_yet_through_without_changing_them() {
        let c = cfg(0.0, 6, 0.0);
        let mut d = RlcDir::new(&c, &c.down, Rng::stream(1, "t"));
        let mut sp = Spikes::new(0.0, Dist::Const { value: 0.0 }, Rng::stream(1, "s"));
        let mut fd = Spikes::new(0.0, Dist::Const { value: 0.0 }, Rng::stream(1, "f"));
        // three back-to-back SDUs of 36 PDUs each, offered at t = 0
        for _ in 0..3 {
            d.offer(1500, 0, &mut sp, &mut fd);
        }
        let sdu = 36 * (42u64 * 8 * 1_000_000_000).div_ceil(384_000);
        assert_eq!(d.queued(0), 3);
        assert_eq!(d.queued(sdu), 2); // the first one's transmission ended at `sdu`
        assert_eq!(d.queued(3 * sdu), 0);
        assert_eq!(
            d.queued(sdu - 1),
            3,
            "reading at a later time purged nothing"
        );
    }

    #[test]
    fn clean_channel_is_rate_plus_delay() {
        let (out, st) = run(&cfg(0.0, 6, 0.0), 1);
        // 36 PDUs of 42 B at 384 kb/s = 31.5 ms, plus 50 ms.
        let pdu = (42u64 * 8 * 1_000_000_000).div_ceil(384_000);
        assert_eq!(out[0], Some(36 * pdu + 50_000_000));
        assert_eq!(st.pdu_retx, 0);
    }

    #[test]
    fn tx_bytes_counts_the_ip_bytes_of_every_sdu_sent() {
        let (_, st) = run(&cfg(0.0, 6, 0.0), 3);
        assert_eq!((st.tx_packets, st.tx_bytes), (3, 3 * 1500));
    }

    #[test]
    fn retransmissions_delay_in_sequence_and_maxdat_loses() {
        let (out, st) = run(&cfg(0.05, 4, 0.0), 2000);
        assert!(st.pdu_retx > 0 && st.hol_blocked > 0);
        // Deliveries are in sequence.
        let got: Vec<Time> = out.iter().flatten().copied().collect();
        assert!(got.windows(2).all(|w| w[0] <= w[1]));
        // P(a PDU fails 4 times) = 0.05^4; 36 PDUs per packet, 2000 packets:
        // expected 0.45 packet losses; with bler 0.3 many are lost.
        let (_, st) = run(&cfg(0.3, 4, 0.0), 2000);
        let p = 1.0 - (1.0 - 0.3f64.powi(4)).powi(36);
        let share = st.drops_maxdat as f64 / 2000.0;
        assert!((share - p).abs() < 0.05, "{share} vs {p}");
    }

    #[test]
    fn stalls_delay_everything() {
        let (calm, _) = run(&cfg(0.0, 6, 0.0), 500);
        let (spiky, _) = run(&cfg(0.0, 6, 0.5), 500);
        let d = |o: &Vec<Option<Time>>| o.iter().flatten().sum::<Time>();
        assert!(d(&spiky) > d(&calm), "{} {}", d(&spiky), d(&calm));
        let mut sp = Spikes::new(1.0, Dist::Const { value: 0.5 }, Rng::stream(2, "x"));
        let t = sp.free_at(0);
        assert_eq!(t, 0);
        // work of 10 s passes over about ten 0.5-s stalls.
        let end = sp.advance(0, 10_000_000_000);
        assert!(end > 12_000_000_000 && end < 20_000_000_000, "{end}");
        // A scheduled stall: nothing moves in [1 s, 3 s).
        let mut sp = Spikes::new(0.0, Dist::Const { value: 0.0 }, Rng::stream(2, "x"))
            .with_fixed(&[(1_000_000_000, 2_000_000_000)]);
        assert_eq!(sp.free_at(1_500_000_000), 3_000_000_000);
        assert_eq!(sp.advance(500_000_000, 1_000_000_000), 3_500_000_000);
        assert_eq!(sp.advance(3_000_000_000, 10), 3_000_000_010);
    }

    #[test]
    fn fades_raise_block_errors_only_inside_them() {
        // bler 0 outside fades, 0.5 inside: retransmissions only for packets
        // sent in a fade, and a fade-free schedule changes nothing.
        let mut c = cfg(0.0, 10, 0.0);
        c.down.fade_bler = 0.5;
        let (_, none) = run(&c, 2000);
        assert_eq!(none.pdu_retx, 0);
        c.fade_rate_per_s = 0.05;
        c.fade_duration_s = Some(Dist::Const { value: 5.0 });
        let (_, st) = run(&c, 2000);
        // 80 s of traffic, fades cover about 5/(20+5) = 20% of it.
        let share = st.pdu_retx as f64 / st.pdus as f64;
        assert!(share > 0.03 && share < 0.5, "retransmitted share {share}");
        assert!(check(&c).is_ok());
        c.fade_duration_s = None;
        assert!(check(&c).unwrap_err().contains("fade_duration"));
    }
}
