//! A point-to-point link whose reverse (ACK) direction keeps its queue as
//! explicit packets so that a newer cumulative ACK can replace older queued
//! ACKs of the same connection: ACK filtering (RFC 3449 §5.2.1) and, with a
//! threshold, ACK decimation (RFC 3449 §5.2.2).
//!
//! The forward direction is an ordinary `LinkDir` (departure time known at
//! enqueue). `LinkHop` stays the fast path for links without a filter.

use std::collections::VecDeque;

use crate::component::{Component, Ctx, DropKind};
use crate::config::AckFilterLinkConfig;
use crate::engine::Packet;
use crate::link::{Fate, LinkDir};
use crate::rng::Rng;
use tcplab_tcp::segment::Flags;
use tcplab_tcp::Time;

const FWD_PIPE: u64 = 0;
const REV_PIPE: u64 = 1;
const REV_TX_DONE: u64 = 2;

/// A packet an ACK filter may remove or be replaced by: a pure cumulative
/// ACK. RFC 3449 §5.2.1: only ACKs that carry no data and no control
/// information beyond the cumulative acknowledgement (no SYN/FIN/RST/URG,
/// no ECN echo, no SACK blocks) are candidates.
fn pure_ack(p: &Packet) -> bool {
    let f = p.seg.flags;
    !p.udp
        && p.seg.payload_len == 0
        && f.ack()
        && !f.syn()
        && !f.fin()
        && !f.rst()
        && !f.contains(Flags::URG)
        && !f.contains(Flags::ECE)
        && !f.contains(Flags::CWR)
        && p.seg.options.sack_len == 0
}

/// `a` acknowledges strictly more than `b` (32-bit sequence arithmetic).
fn newer(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) > 0
}

#[derive(Clone, Copy, Debug, Default)]
pub struct FilterStats {
    /// Queued ACKs removed because a newer cumulative ACK superseded them.
    pub acks_filtered: u64,
}

/// The reverse direction: explicit FIFO queue + one transmitter + pipe.
struct RevDir {
    wire: LinkDir,
    waiting: VecDeque<Packet>,
    waiting_bytes: u64,
    /// The packet being serialised and when its first bit left.
    in_service: Option<(Packet, Time)>,
    pipe: VecDeque<(Time, Packet)>,
    /// Filter only when more than this many older ACKs of the connection
    /// wait (0 = ACK filtering; > 0 = ACK decimation).
    threshold: u32,
    stats: FilterStats,
}

impl RevDir {
    /// RFC 3449 §5.2.1 (AF): when a pure cumulative ACK is enqueued, remove
    /// the older pure ACKs of the same connection still waiting (not the one
    /// on the wire). RFC 3449 §5.2.2 (AD): only once more than `threshold`
    /// such ACKs wait. Duplicate ACKs (same ack number) are never removed,
    /// so fast retransmit still sees them.
    fn filter(&mut self, p: &Packet, ctx: &mut Ctx) {
        if !pure_ack(p) {
            return;
        }
        let older = |q: &Packet| {
            pure_ack(q) && q.flow == p.flow && q.conn == p.conn && newer(p.seg.ack, q.seg.ack)
        };
        let n = self.waiting.iter().filter(|q| older(q)).count() as u32;
        if n == 0 || n <= self.threshold {
            return;
        }
        let mut kept = VecDeque::with_capacity(self.waiting.len());
        while let Some(q) = self.waiting.pop_front() {
            if older(&q) {
                self.waiting_bytes -= q.size as u64;
                self.stats.acks_filtered += 1;
                ctx.drop(q, DropKind::Queue);
            } else {
                kept.push_back(q);
            }
        }
        self.waiting = kept;
    }

    fn start_next(&mut self, ctx: &mut Ctx) {
        if self.in_service.is_some() {
            return;
        }
        if let Some(p) = self.waiting.pop_front() {
            self.waiting_bytes -= p.size as u64;
            let end = ctx.now.saturating_add(self.wire.tx_time(p.size));
            self.wire.stats.tx_packets += 1;
            self.wire.stats.tx_bytes += p.size as u64;
            self.in_service = Some((p, ctx.now));
            ctx.timer(end, REV_TX_DONE);
        }
    }

    fn on_packet(&mut self, p: Packet, ctx: &mut Ctx) {
        self.filter(&p, ctx);
        if self.in_service.is_some() {
            let waiting = self.waiting.len() as u64;
            let full = self.wire.limit_pkts.is_some_and(|l| waiting >= l)
                || self
                    .wire
                    .limit_bytes
                    .is_some_and(|l| self.waiting_bytes + p.size as u64 > l);
            if full {
                self.wire.stats.drops_queue += 1;
                ctx.drop(p, DropKind::Queue);
                return;
            }
        }
        self.waiting_bytes += p.size as u64;
        self.waiting.push_back(p);
        let n = self.waiting.len() as u64 + self.in_service.is_some() as u64 - 1;
        self.wire.stats.max_queue_packets = self.wire.stats.max_queue_packets.max(n);
        self.start_next(ctx);
    }

    fn on_tx_done(&mut self, ctx: &mut Ctx) {
        let Some((p, start)) = self.in_service.take() else {
            return;
        };
        ctx.tap(&p, start);
        if self.wire.lost_on_wire(start) {
            self.wire.stats.drops_loss += 1;
            ctx.drop(p, DropKind::Loss);
        } else {
            let at = ctx.now.saturating_add(self.wire.delay());
            if self.pipe.is_empty() {
                ctx.timer(at, REV_PIPE);
            }
            self.pipe.push_back((at, p));
        }
        self.start_next(ctx);
    }

    fn held(&self) -> u64 {
        (self.waiting.len() + self.pipe.len() + self.in_service.is_some() as usize) as u64
    }
}

/// A link with an ACK filter on its reverse direction.
pub struct AckFilterLink {
    fwd: LinkDir,
    fwd_pipe: VecDeque<(Time, Packet)>,
    rev: RevDir,
}

impl AckFilterLink {
    pub fn new(cfg: &AckFilterLinkConfig, seed: u64, idx: usize) -> AckFilterLink {
        AckFilterLink {
            fwd: LinkDir::new(&cfg.fwd, Rng::stream(seed, &format!("link/{idx}/fwd"))),
            fwd_pipe: VecDeque::with_capacity(64),
            rev: RevDir {
                wire: LinkDir::new(&cfg.rev, Rng::stream(seed, &format!("link/{idx}/rev"))),
                waiting: VecDeque::with_capacity(64),
                waiting_bytes: 0,
                in_service: None,
                pipe: VecDeque::with_capacity(64),
                threshold: cfg.filter_threshold,
                stats: FilterStats::default(),
            },
        }
    }
}

fn release(pipe: &mut VecDeque<(Time, Packet)>, token: u64, ctx: &mut Ctx) {
    while let Some(&(at, p)) = pipe.front() {
        if at > ctx.now {
            ctx.timer(at, token);
            break;
        }
        pipe.pop_front();
        ctx.forward_now(p);
    }
}

impl Component for AckFilterLink {
    fn on_packet(&mut self, p: Packet, ctx: &mut Ctx) {
        if p.dir as usize == 1 {
            self.rev.on_packet(p, ctx);
            return;
        }
        match self.fwd.offer(p.size, ctx.now) {
            Fate::Arrives { at, tx_start } => {
                ctx.tap(&p, tx_start);
                if self.fwd_pipe.is_empty() {
                    ctx.timer(at, FWD_PIPE);
                }
                self.fwd_pipe.push_back((at, p));
            }
            Fate::Lost { tx_start } => {
                ctx.tap(&p, tx_start);
                ctx.drop(p, DropKind::Loss);
            }
            Fate::QueueDrop => ctx.drop(p, DropKind::Queue),
            Fate::Reordered { .. } => {
                unreachable!("validate() rejects reorder on an ack_filter_link")
            }
        }
    }

    fn on_timer(&mut self, token: u64, ctx: &mut Ctx) {
        match token {
            FWD_PIPE => release(&mut self.fwd_pipe, FWD_PIPE, ctx),
            REV_PIPE => release(&mut self.rev.pipe, REV_PIPE, ctx),
            _ => self.rev.on_tx_done(ctx),
        }
    }

    fn held(&self) -> u64 {
        self.fwd_pipe.len() as u64 + self.rev.held()
    }

    fn stats(&self, name: &str) -> Vec<serde_json::Value> {
        let row = |d: &str, l: &crate::link::LinkDir, filtered: Option<u64>| {
            let s = l.stats;
            let mut v = serde_json::json!({
                "name": name, "kind": "ack_filter_link", "dir": d, "tx_packets": s.tx_packets,
                "tx_bytes": s.tx_bytes, "drops_queue": s.drops_queue,
                "drops_loss": s.drops_loss, "max_queue_packets": s.max_queue_packets,
            });
            if let Some(f) = filtered {
                v["acks_filtered"] = f.into();
            }
            if l.has_outages() {
                v["drops_outage"] = s.drops_outage.into();
            }
            v
        };
        vec![
            row("fwd", &self.fwd, None),
            row("rev", &self.rev.wire, Some(self.rev.stats.acks_filtered)),
        ]
    }

    fn tx_packets(&self) -> u64 {
        self.fwd.stats.tx_packets + self.rev.wire.stats.tx_packets
    }
    fn backlog(&mut self, dir: crate::engine::Dir, now: Time) -> Option<u64> {
        Some(match dir {
            crate::engine::Dir::Fwd => self.fwd.backlog(now) as u64,
            crate::engine::Dir::Rev => self.rev.held() - self.rev.pipe.len() as u64,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn purity_and_order() {
        let mut p = Packet {
            uid: 0,
            flow: 0,
            conn: 0,
            dir: crate::engine::Dir::Rev,
            hop: 0,
            udp: false,
            size: 40,
            sent_at: 0,
            seg: Default::default(),
            feedback: None,
        };
        p.seg.flags = Flags::ACK;
        assert!(pure_ack(&p));
        p.seg.options.sack_len = 1;
        assert!(
            !pure_ack(&p),
            "an ACK with SACK blocks carries more than the cumulative ACK"
        );
        p.seg.options.sack_len = 0;
        p.seg.payload_len = 1;
        assert!(!pure_ack(&p));
        assert!(newer(5, 3));
        assert!(!newer(3, 3));
        assert!(newer(2, u32::MAX - 1), "wraps");
    }
}
