//! The discrete-event engine and the world it runs: links, flows (each a
//! series of TCP connections driven by an application), CBR cross traffic,
//! samplers, pcap taps and the invariant checker.
//!
//! Determinism: time is integer ns; events at the same instant run in the
//! order they were scheduled (a global sequence number breaks ties); every
//! random draw comes from a per-component stream (`rng::Rng::stream`).

use tcplab_tcp::seq::unwrap;
use tcplab_tcp::{Config, Connection, Event, Segment, State, Time};

use crate::component::{Component, Ctx, DropKind, Taps};
use crate::config::{AppConfig, FlowConfig, HopConfig, SimConfig, XmitTimeJson};
use crate::conn_log::ConnLog;
use crate::coverage::Coverage;
use crate::dist;
use crate::engine::{Dir, Engine, Ev, EventQueue, Packet, Side, Slab};
use crate::link::LinkHop;
use crate::output::{EventKind, EventRow, FlowAgg, FlowSummary, Output, SegmentKind, Summary};
use crate::ping::{is_ping, PingRt, PING_FLOW_BASE};
use crate::rng::Rng;
use crate::validate::{tcp_config, validate};

#[derive(Default, Clone, Copy)]
struct TimerSlot {
    scheduled: Option<Time>,
    gen: u32,
}

struct ConnPair {
    id: u32,
    snd: Connection,
    rcv: Connection,
    snd_iss: u32,
    timers: [TimerSlot; 2],
    opened_at: Time,
    /// Total bytes of this transfer (None = unlimited).
    size: Option<u64>,
    done_at: Option<Time>,
    /// Its event log and ground truth.
    log: ConnLog,
    coverage: Coverage,
    /// When the sender sent its first data segment.
    first_data_at: Option<Time>,
    sender_acked: bool,
    /// With `xmit_time`: when the sender's last segment reached the first hop.
    xmit_last: Time,
}

struct FlowRt {
    cfg: FlowConfig,
    tcp: Config,
    route: Vec<usize>,
    conns: Vec<ConnPair>,
    next_conn: u32,
    rng: Rng,
    /// The sending host's send-path jitter (`xmit_time.jitter`), its own
    /// stream so other draws of the flow stay where they were.
    host_rng: Rng,
    agg: FlowAgg,
    opened: u64,
    /// Receiver opens the connection (download) or sender (bulk upload).
    receiver_opens: bool,
}

struct CrossRt {
    route: Vec<usize>,
    rate_bps: u64,
    packet_bytes: u32,
    stop: Time,
    sent: u64,
    received: u64,
    dropped: u64,
}

pub struct Sim {
    cfg: SimConfig,
    /// The queue, slab and scratch lists components reach through `Ctx`.
    eng: Engine,
    hops: Vec<Box<dyn Component>>,
    flows: Vec<FlowRt>,
    cross: Vec<CrossRt>,
    pings: Vec<PingRt>,
    out: Output,
    now: Time,
    events_processed: u64,
    /// Sampler ticks skipped because nothing records them (counted as events).
    unrun_ticks: u64,
    packets_delivered: u64,
    packets_dropped: u64,
    stray: u64,
    violations: Vec<String>,
    /// Scratch list of one event's segments (`transmit_host`), reused.
    xmit_buf: Vec<Packet>,
}

/// Build one path component from its configuration (the hop registry).
/// Build a hop; hops that read files (traces) fail with the field and file.
pub(crate) fn build_hop(
    cfg: &HopConfig,
    seed: u64,
    idx: usize,
) -> Result<Box<dyn Component>, String> {
    let at = |e: String| format!("hops[{idx}].{e}");
    Ok(match cfg {
        HopConfig::Link(l) => {
            let mut h = LinkHop::new(l, seed, idx);
            for (d, c) in [("down", &l.fwd), ("up", &l.rev)] {
                if let Some(s) = crate::hops::trace::load_delay(&c.delay_trace, d).map_err(at)? {
                    h.set_delay_schedule(d == "up", s);
                }
            }
            Box::new(h)
        }
        HopConfig::Trace(t) => {
            Box::new(crate::hops::trace::TraceHop::new(t, seed, idx).map_err(at)?)
        }
        HopConfig::Leo(l) => Box::new(crate::hops::leo::hop(l, seed, idx).map_err(at)?),
        HopConfig::Pep(p) => Box::new(crate::pep::Pep::new(p)),
        HopConfig::Dropper(d) => Box::new(crate::dropper::Dropper::new(d)),
        HopConfig::AckFilterLink(l) => Box::new(crate::ackfilter::AckFilterLink::new(l, seed, idx)),
        HopConfig::Rlc(r) => Box::new(crate::rlc::RlcHop::new(r, seed, idx)),
        HopConfig::Wlan(w) => Box::new(crate::wlan::WlanHop::new(w, seed, idx)),
        HopConfig::Host(h) => Box::new(crate::host::HostHop::new(h)),
    })
}

pub type Progress<'a> = &'a mut dyn FnMut(f64) -> bool;

/// A TCP segment leaving its endpoint now toward the first hop of its route
/// in `dir`, with the next packet id.
#[inline]
fn tcp_packet(uid: &mut u64, fi: usize, conn: u32, dir: Dir, seg: Segment, now: Time) -> Packet {
    let p = Packet {
        uid: *uid,
        flow: fi as u32,
        conn,
        dir,
        hop: 0,
        udp: false,
        size: seg.ip_len() as u32,
        sent_at: now,
        seg,
        feedback: None,
    };
    *uid += 1;
    p
}

impl Sim {
    pub fn new(cfg: SimConfig) -> Result<Sim, String> {
        validate(&cfg)?;
        let seed = cfg.seed;
        let hops: Vec<Box<dyn Component>> = cfg
            .hops
            .iter()
            .enumerate()
            .map(|(i, h)| build_hop(h, seed, i))
            .collect::<Result<_, _>>()?;
        let mut flows = Vec::with_capacity(cfg.flows.len());
        for (i, f) in cfg.flows.iter().enumerate() {
            let tcp = tcp_config(&f.tcp).map_err(|e| format!("flows[{i}].tcp.{e}"))?;
            flows.push(FlowRt {
                route: f.path.clone(),
                tcp,
                conns: Vec::with_capacity(2),
                next_conn: 0,
                rng: Rng::stream(seed, &format!("flow/{i}")),
                host_rng: Rng::stream(seed, &format!("flow/{i}/host")),
                agg: FlowAgg {
                    hystart: f.tcp.hystart,
                    ..FlowAgg::default()
                },
                opened: 0,
                receiver_opens: matches!(f.app, AppConfig::Downloads { .. }),
                cfg: f.clone(),
            });
        }
        let cross = cfg
            .cross
            .iter()
            .map(|c| CrossRt {
                route: c.path.clone(),
                rate_bps: c.rate_bps,
                packet_bytes: c.packet_bytes,
                stop: c.stop_ns,
                sent: 0,
                received: 0,
                dropped: 0,
            })
            .collect();
        let taps = Taps::open(&cfg.pcap, cfg.hops.len())?;
        let mut sim = Sim {
            eng: Engine {
                q: EventQueue::default(),
                slab: Slab::default(),
                taps,
                drops: Vec::with_capacity(16),
                immediate: Vec::with_capacity(16),
                absorbed: 0,
                absorbed_data: Vec::with_capacity(4),
                track_absorbed: true,
                emitted: Vec::with_capacity(16),
                uid: 0,
                ..Default::default()
            },
            hops,
            flows,
            cross,
            pings: cfg.pings.iter().cloned().map(PingRt::new).collect(),
            out: Output::new(
                cfg.record.timeseries,
                cfg.record.events,
                cfg.record.spill_dir.clone(),
            ),
            now: 0,
            events_processed: 0,
            unrun_ticks: 0,
            packets_delivered: 0,
            packets_dropped: 0,
            stray: 0,
            violations: Vec::new(),
            xmit_buf: Vec::new(),
            cfg,
        };
        // The rate columns only when some flow has rates (other runs' tables unchanged).
        sim.out.ts_rates = sim.flows.iter().any(|f| f.tcp.estimates_rate());
        // The queue samples' delay column only when some queue is managed.
        sim.out.q_managed = sim.cfg.hops.iter().any(|h| match h {
            HopConfig::Link(l) => l.fwd.aqm.is_some() || l.rev.aqm.is_some(),
            HopConfig::Rlc(r) => r.down.aqm.is_some() || r.up.aqm.is_some(),
            _ => false,
        });
        for (i, f) in sim.cfg.flows.iter().enumerate() {
            sim.eng.q.push(f.start_ns, Ev::OpenConn { flow: i as u32 });
        }
        for (i, c) in sim.cfg.cross.iter().enumerate() {
            sim.eng.q.push(c.start_ns, Ev::Cbr { cross: i as u32 });
        }
        for (i, p) in sim.cfg.pings.iter().enumerate() {
            sim.eng.q.push(p.start_ns, Ev::Ping { idx: i as u32 });
        }
        // The sampler ticks only for what it records: the time series, and
        // the queue samples of a trace. A run that keeps neither (summary
        // only) has no sampler events; its ticks are still counted in the
        // summary's `events` (one at 0 and every interval up to the end), so
        // the summary does not depend on which tables are kept.
        if let Some(ticks) = sim.cfg.duration_ns.checked_div(sim.cfg.sample_interval_ns) {
            if sim.cfg.record.timeseries || sim.cfg.trace {
                sim.eng.q.push(0, Ev::Sample);
            } else {
                sim.unrun_ticks = ticks + 1;
            }
        }
        Ok(sim)
    }

    /// Run to the configured duration. `progress` is called with the
    /// fraction of simulated time done about every 2^16 events; returning
    /// false aborts the run.
    pub fn run(mut self, progress: Option<Progress>) -> Result<Output, String> {
        let end = self.cfg.duration_ns;
        let mut progress = progress;
        while let Some((at, ev)) = self.eng.q.take_due(end) {
            if at < self.now {
                // Cannot happen with bounded settings and saturating sums;
                // a wrapped time would otherwise run silently backwards.
                self.violations
                    .push(format!("time ran backwards: {at} ns after {} ns", self.now));
                break;
            }
            self.now = at;
            self.events_processed += 1;
            match ev {
                Ev::Arrive(i) => self.on_arrive(i),
                Ev::Timer {
                    flow,
                    conn,
                    side,
                    gen,
                } => self.on_timer(flow, conn, side, gen),
                Ev::OpenConn { flow } => self.open_conn(flow as usize),
                Ev::Sample => self.sample(),
                Ev::Cbr { cross } => self.cbr_send(cross as usize),
                Ev::HopTimer { hop, token } => self.hop_timer(hop as usize, token),
                Ev::Ping { idx } => self.ping_send(idx as usize),
            }
            let mut k = 0;
            while k < self.eng.immediate.len() {
                let i = self.eng.immediate[k];
                k += 1;
                self.on_arrive(i);
            }
            self.eng.immediate.clear();
            if self.events_processed & 0xFFFF == 0 {
                if let Some(cb) = progress.as_mut() {
                    if !cb(self.now as f64 / end.max(1) as f64) {
                        return Err("interrupted".into());
                    }
                }
                if !self.violations.is_empty() && self.violations.len() > 100 {
                    break;
                }
                if self.out.failed() || self.eng.taps.has_failed() {
                    break; // finish() returns the error
                }
            }
        }
        self.now = end;
        self.finish()
    }

    // ------------------------------------------------------------------
    // Packets
    // ------------------------------------------------------------------

    fn hop_of(route: &[usize], dir: Dir, hop: usize) -> usize {
        match dir {
            Dir::Fwd => route[hop],
            Dir::Rev => route[route.len() - 1 - hop],
        }
    }

    /// Hand `p` to the next hop of its route at `now`.
    #[inline]
    fn forward(&mut self, p: Packet) {
        let route: &[usize] = if is_ping(&p) {
            &self.pings[(p.flow - PING_FLOW_BASE) as usize].cfg.path
        } else if p.udp {
            &self.cross[p.flow as usize].route
        } else {
            &self.flows[p.flow as usize].route
        };
        let hi = Self::hop_of(route, p.dir, p.hop as usize);
        self.call_hop(hi, |h, ctx| h.on_packet(p, ctx));
    }

    fn hop_timer(&mut self, hi: usize, token: u64) {
        self.call_hop(hi, |h, ctx| h.on_timer(token, ctx));
    }

    /// Call hop `hi` with a `Ctx`, then log its drops and route what it created.
    #[inline]
    fn call_hop(&mut self, hi: usize, f: impl FnOnce(&mut dyn Component, &mut Ctx)) {
        let mut ctx = Ctx {
            now: self.now,
            hop: hi,
            eng: &mut self.eng,
        };
        f(self.hops[hi].as_mut(), &mut ctx);
        self.after_hop(hi);
    }

    /// Log the drops and the absorbed data a call of hop `hi` reported and
    /// route the packets it created. Most calls do none of it: the tests are
    /// inline (always: left out of line it cost 23 instructions a packet),
    /// the work is called out.
    #[inline(always)]
    fn after_hop(&mut self, hi: usize) {
        if !self.eng.drops.is_empty() {
            self.log_drops(hi);
        }
        if !self.eng.absorbed_data.is_empty() {
            self.log_absorbed();
        }
        if !self.eng.emitted.is_empty() {
            self.route_emitted(hi);
        }
    }

    /// The data segment with this flow, connection and send time left the
    /// network without reaching the receiver (ground truth, `truth.rs`).
    fn data_gone(&mut self, flow: u32, conn: u32, sent_at: Time) {
        if let Some(c) = self.flows[flow as usize]
            .conns
            .iter_mut()
            .find(|c| c.id == conn)
        {
            c.log.gone(sent_at);
        }
    }

    /// Data segments a middlebox absorbed (`Ctx::absorb`).
    #[inline(never)]
    fn log_absorbed(&mut self) {
        for k in 0..self.eng.absorbed_data.len() {
            let (flow, conn, sent_at) = self.eng.absorbed_data[k];
            self.data_gone(flow, conn, sent_at);
        }
        self.eng.absorbed_data.clear();
    }

    /// Send the packets hop `hi` created: each continues from `hi`'s position
    /// on its flow's route in its direction.
    #[inline(never)]
    fn route_emitted(&mut self, hi: usize) {
        for k in 0..self.eng.emitted.len() {
            let (mut p, at) = self.eng.emitted[k];
            let route: &[usize] = if p.udp {
                &self.cross[p.flow as usize].route
            } else {
                &self.flows[p.flow as usize].route
            };
            let Some(pos) = route.iter().position(|&h| h == hi) else {
                self.violations.push(format!(
                    "hop {hi} emitted a packet for flow {} whose route does not contain it",
                    p.flow
                ));
                self.eng.absorbed += 1;
                continue;
            };
            let pos = match p.dir {
                Dir::Fwd => pos,
                Dir::Rev => route.len() - 1 - pos,
            };
            p.hop = (pos + 1) as u16;
            if !p.udp && p.dir == Dir::Fwd && p.seg.payload_len > 0 {
                let f = &mut self.flows[p.flow as usize];
                if let Some(c) = f.conns.iter_mut().find(|c| c.id == p.conn) {
                    c.log.sent(p.sent_at);
                }
            }
            let i = self.eng.slab.put(p);
            if at <= self.now {
                self.eng.immediate.push(i);
            } else {
                self.eng.q.push(at, Ev::Arrive(i));
            }
        }
        self.eng.emitted.clear();
    }

    /// Count and log the drops a component reported.
    #[inline(never)]
    fn log_drops(&mut self, hi: usize) {
        for i in 0..self.eng.drops.len() {
            let (p, kind) = self.eng.drops[i];
            self.on_drop(p, kind, hi);
        }
        self.eng.drops.clear();
    }

    fn on_drop(&mut self, p: Packet, kind: DropKind, hi: usize) {
        self.packets_dropped += 1;
        if is_ping(&p) {
            self.pings[(p.flow - PING_FLOW_BASE) as usize].dropped += 1;
            return;
        }
        if p.udp {
            self.cross[p.flow as usize].dropped += 1;
            return;
        }
        if p.dir == Dir::Fwd && p.seg.payload_len > 0 {
            self.data_gone(p.flow, p.conn, p.sent_at);
        }
        let ek = match kind {
            DropKind::Queue => EventKind::DropQueue,
            DropKind::Loss => EventKind::DropLoss,
        };
        let seq = self.pkt_offset(&p);
        self.out.event(EventRow {
            seq,
            len: p.seg.payload_len,
            reason: p.dir as u8,
            value: hi as f64,
            ..EventRow::new(self.now, p.flow, p.conn, ek)
        });
    }

    /// Stream offset of a TCP packet's first sequence number (ground truth).
    fn pkt_offset(&self, p: &Packet) -> u64 {
        let f = &self.flows[p.flow as usize];
        match f.conns.iter().find(|c| c.id == p.conn) {
            Some(c) => match p.dir {
                Dir::Fwd => unwrap(c.snd_iss, p.seg.seq, c.snd.snd_una()),
                Dir::Rev => 0,
            },
            None => 0,
        }
    }

    /// The packet in slab slot `i` reaches its next hop or its endpoint. A
    /// TCP segment for an endpoint is read in place, not copied out of the
    /// slab; its slot is freed before the endpoint sends anything.
    fn on_arrive(&mut self, i: u32) {
        let p = self.eng.slab.get(i);
        let route_len = if is_ping(p) {
            self.pings[(p.flow - PING_FLOW_BASE) as usize]
                .cfg
                .path
                .len()
        } else if p.udp {
            self.cross[p.flow as usize].route.len()
        } else {
            self.flows[p.flow as usize].route.len()
        };
        if (p.hop as usize) < route_len {
            let p = self.eng.slab.take(i);
            self.forward(p);
            return;
        }
        self.packets_delivered += 1;
        if is_ping(p) {
            let p = self.eng.slab.take(i);
            let uid = self.eng.uid;
            let pr = &mut self.pings[(p.flow - PING_FLOW_BASE) as usize];
            if let Some(reply) = pr.on_arrive(&p, uid, self.now) {
                self.eng.uid += 1;
                self.forward(reply);
            }
            return;
        }
        if p.udp {
            self.cross[p.flow as usize].received += 1;
            self.eng.slab.release(i);
            return;
        }
        let fi = p.flow as usize;
        let Some(ci) = self.flows[fi].conns.iter().position(|c| c.id == p.conn) else {
            self.stray += 1;
            self.eng.slab.release(i);
            return;
        };
        let now = self.now;
        let side = match p.dir {
            Dir::Fwd => Side::Receiver,
            Dir::Rev => Side::Sender,
        };
        {
            let pair = &mut self.flows[fi].conns[ci];
            if side == Side::Receiver && p.seg.payload_len > 0 {
                // Ground truth: record what physically reached the receiver.
                let off = unwrap(pair.snd_iss, p.seg.seq, pair.snd.snd_una());
                let (lo, hi) = (off - 1, off - 1 + p.seg.payload_len as u64);
                pair.coverage.insert(lo, hi);
                // The truth of pending timeouts and fast retransmits; the
                // segment has left the network.
                let len = p.seg.payload_len as u64;
                pair.log.on_arrival(&mut self.out, off, len, p.sent_at);
                pair.log.gone(p.sent_at);
            }
            if self.cfg.trace {
                Self::trace_arrival(&mut self.out, fi as u32, pair, p, now);
            }
            if let (Side::Sender, Some(fb)) = (side, &p.feedback) {
                pair.snd.on_transit_feedback(fb, now);
            }
            match side {
                Side::Receiver => pair.rcv.handle_segment(&p.seg, now),
                Side::Sender => pair.snd.handle_segment(&p.seg, now),
            }
        }
        self.eng.slab.release(i);
        self.service(fi, ci, side);
    }

    fn on_timer(&mut self, flow: u32, conn: u32, side: Side, gen: u32) {
        let fi = flow as usize;
        let Some(ci) = self.flows[fi].conns.iter().position(|c| c.id == conn) else {
            return;
        };
        let now = self.now;
        {
            let pair = &mut self.flows[fi].conns[ci];
            let slot = &mut pair.timers[side as usize];
            if slot.gen != gen {
                return; // superseded
            }
            slot.scheduled = None;
            match side {
                Side::Sender => pair.snd.handle_timeout(now),
                Side::Receiver => pair.rcv.handle_timeout(now),
            }
        }
        self.service(fi, ci, side);
    }

    /// After an endpoint was handed input: run the application, send what it
    /// wants to send, record its events, re-arm its timer.
    fn service(&mut self, fi: usize, ci: usize, side: Side) {
        let now = self.now;
        // Application on the receiving side: read, then close after the peer's FIN.
        // One lookup of the connection per block (service runs for every
        // packet an endpoint receives); calls that need all of `self` are on
        // rare paths, after the borrow ends.
        if side == Side::Receiver {
            let f = &mut self.flows[fi];
            let pair = &mut f.conns[ci];
            let mut transfer_done = false;
            let read = pair.rcv.take_read();
            if read > 0 {
                f.agg.last_delivery = now;
                let delivered = pair.rcv.stats().bytes_delivered;
                // Invariants: the receiver never delivers bytes that did not
                // arrive, were not sent or were not written.
                if delivered > pair.coverage.prefix()
                    || delivered > pair.snd.snd_max().saturating_sub(1)
                    || pair.size.is_some_and(|sz| delivered > sz)
                {
                    Self::delivery_violations(&mut self.violations, fi, pair, delivered);
                }
                if let Some(sz) = pair.size {
                    if pair.rcv.stats().bytes_read == sz && pair.done_at.is_none() {
                        pair.done_at = Some(now);
                        let id = pair.id;
                        let dur = now - pair.opened_at;
                        f.agg.completed += 1;
                        f.agg.active_ns += dur;
                        self.out.event(EventRow {
                            seq: sz,
                            value: dur as f64 * 1e-9,
                            ..EventRow::new(now, fi as u32, id, EventKind::TransferDone)
                        });
                        transfer_done = true;
                    }
                }
            }
            // The application closes once it has read everything (EOF).
            if pair.rcv.peer_finished()
                && matches!(pair.rcv.state(), State::CloseWait)
                && pair.rcv.unread() == 0
            {
                pair.rcv.close();
            }
            if transfer_done {
                // (Only draws the think time and queues the next OpenConn.)
                self.schedule_next_conn(fi);
            }
        }
        self.transmit(fi, ci, side);
        // The sender's view of completion (Yagiu 2001 §3.1 measures throughput
        // at the sender, up to the ACK of the last data).
        let mut pair = &mut self.flows[fi].conns[ci];
        let first_event = {
            if side == Side::Sender && !pair.sender_acked {
                if let (Some(sz), Some(t0)) = (pair.size, pair.first_data_at) {
                    if pair.snd.snd_una() > sz {
                        pair.sender_acked = true;
                        let id = pair.id;
                        self.out.event(EventRow {
                            seq: sz,
                            value: (now - t0) as f64 * 1e-9,
                            ..EventRow::new(now, fi as u32, id, EventKind::SenderAcked)
                        });
                    }
                }
            }
            match side {
                Side::Sender => pair.snd.poll_event(),
                Side::Receiver => pair.rcv.poll_event(),
            }
        };
        // Events (most calls have none: then `pair` is still the lookup above).
        if let Some(e) = first_event {
            self.record_event(fi, ci, side, e);
            loop {
                let pair = &mut self.flows[fi].conns[ci];
                let conn = match side {
                    Side::Sender => &mut pair.snd,
                    Side::Receiver => &mut pair.rcv,
                };
                let Some(e) = conn.poll_event() else {
                    break;
                };
                self.record_event(fi, ci, side, e);
            }
            pair = &mut self.flows[fi].conns[ci];
        }
        // Timer.
        let q = &mut self.eng.q;
        let conn = match side {
            Side::Sender => &pair.snd,
            Side::Receiver => &pair.rcv,
        };
        if let Some(t) = conn.poll_timeout() {
            let slot = &mut pair.timers[side as usize];
            if slot.scheduled.is_none_or(|s| t < s) {
                slot.gen = slot.gen.wrapping_add(1);
                slot.scheduled = Some(t);
                q.push(
                    t.max(now),
                    Ev::Timer {
                        flow: fi as u32,
                        conn: pair.id,
                        side,
                        gen: slot.gen,
                    },
                );
            }
        }
        // Retire a connection once both directions are closed.
        let snd_done = matches!(pair.snd.state(), State::TimeWait | State::Closed);
        let rcv_done = matches!(pair.rcv.state(), State::Closed | State::TimeWait);
        if snd_done && rcv_done {
            self.retire(fi, ci);
        }
    }

    /// The delivery invariants `service` found broken, one message each
    /// (out of line: the messages' formatting stays off the packet path).
    #[cold]
    #[inline(never)]
    fn delivery_violations(
        violations: &mut Vec<String>,
        fi: usize,
        pair: &ConnPair,
        delivered: u64,
    ) {
        if delivered > pair.coverage.prefix() {
            violations.push(format!(
                "flow {fi} conn {}: receiver delivered {delivered} bytes but only {} arrived in sequence",
                pair.id,
                pair.coverage.prefix()
            ));
        }
        let sent = pair.snd.snd_max().saturating_sub(1);
        if delivered > sent {
            violations.push(format!(
                "flow {fi} conn {}: delivered {delivered} > sent {sent}",
                pair.id
            ));
        }
        if let Some(sz) = pair.size.filter(|&sz| delivered > sz) {
            violations.push(format!(
                "flow {fi} conn {}: delivered {delivered} > written {sz}",
                pair.id
            ));
        }
    }

    /// Send every segment the endpoint has for the network now, each to the
    /// first hop of its route in its direction.
    ///
    /// The flow, the hops and the engine state are borrowed apart so one
    /// lookup serves a whole burst. A hop that drops or creates packets
    /// (rare) ends the burst: its drops are logged and its packets routed
    /// before the next segment, as `forward` does.
    fn transmit(&mut self, fi: usize, ci: usize, side: Side) {
        if side == Side::Sender {
            if let Some(x) = self.flows[fi].cfg.tcp.xmit_time {
                self.transmit_host(fi, ci, x);
                return;
            }
        }
        let now = self.now;
        let dir = match side {
            Side::Sender => Dir::Fwd,
            Side::Receiver => Dir::Rev,
        };
        loop {
            let Sim {
                flows,
                hops,
                eng,
                out,
                cfg,
                ..
            } = self;
            let trace = cfg.trace;
            let f = &mut flows[fi];
            let pair = &mut f.conns[ci];
            let route = &f.route;
            let hi = Self::hop_of(route, dir, 0);
            // Receiver ACK congestion control watches the first hop of the
            // reverse route (`uplink_backlog`); on or off for the whole connection.
            let ack_cc = side == Side::Receiver && pair.rcv.ack_cc_enabled();
            let mut call_out = false;
            loop {
                let conn = match side {
                    Side::Sender => &mut pair.snd,
                    Side::Receiver => &mut pair.rcv,
                };
                let Some(seg) = conn.poll_transmit(now) else {
                    break;
                };
                if side == Side::Sender && seg.payload_len > 0 {
                    Self::data_sent(pair, out, trace, fi, now, &seg);
                }
                let p = tcp_packet(&mut eng.uid, fi, pair.id, dir, seg, now);
                let mut ctx = Ctx { now, hop: hi, eng };
                hops[hi].on_packet(p, &mut ctx);
                if !eng.drops.is_empty() || !eng.emitted.is_empty() || !eng.absorbed_data.is_empty()
                {
                    call_out = true;
                    break;
                }
                if ack_cc {
                    Self::uplink_backlog(hops, route, &mut pair.rcv, now);
                }
            }
            if !call_out {
                return;
            }
            self.after_hop(hi);
            let f = &mut self.flows[fi];
            if side == Side::Receiver && f.conns[ci].rcv.ack_cc_enabled() {
                Self::uplink_backlog(&mut self.hops, &f.route, &mut f.conns[ci].rcv, now);
            }
        }
    }

    /// The sender sent data segment `seg` at `now`: its ground truth, the
    /// first-data time and (with `trace`) its row in the segment trace.
    #[inline]
    fn data_sent(
        pair: &mut ConnPair,
        out: &mut Output,
        trace: bool,
        fi: usize,
        now: Time,
        seg: &Segment,
    ) {
        pair.log.sent(now);
        if pair.first_data_at.is_none() {
            pair.first_data_at = Some(now);
        }
        if trace {
            let off = unwrap(pair.snd_iss, seg.seq, pair.snd.snd_una());
            let k = SegmentKind::Send;
            out.segment(now, fi as u32, pair.id, k, off, seg.payload_len, now);
        }
    }

    /// `transmit` for a sender whose host takes time to send (`xmit_time`):
    /// what this event released reaches the first hop after the host's
    /// send path, not at once. Linux runs that path in the ACK's softirq:
    /// tcp_ack() -> tcp_data_snd_check() -> tcp_write_xmit() builds one
    /// GSO skb of the segments the window allows and tcp_transmit_skb() ->
    /// ip_queue_xmit() -> __dev_queue_xmit() hands it to the qdisc; the
    /// device has no segmentation offload, so validate_xmit_skb() ->
    /// skb_gso_segment() cuts it into segments before dev_hard_start_xmit()
    /// gives them to the driver one after the other (xmit_one()). So the
    /// first segment leaves `first` after the ACK, `gso` later when there
    /// are several (the software segmentation), and the others follow `gap`
    /// apart. The host is one CPU's softirq: nothing leaves before the
    /// previous segment plus `gap`, so segments never overtake each other.
    /// At a tail-drop queue of one or two packets these microseconds decide
    /// which packet finds the queue full (validation/linux/README.md). The
    /// softirq's time is not the same on every ACK (other work on the CPU,
    /// cache state): with `jitter` each event's first segment leaves at a
    /// time drawn uniformly over `first` ± jitter / 2, from the flow's own
    /// stream, so such ties fall either way as on a real host instead of
    /// always the same way.
    #[inline(never)]
    fn transmit_host(&mut self, fi: usize, ci: usize, x: XmitTimeJson) {
        let now = self.now;
        let Sim {
            flows,
            eng,
            out,
            cfg,
            xmit_buf,
            ..
        } = self;
        let trace = cfg.trace;
        let f = &mut flows[fi];
        let pair = &mut f.conns[ci];
        while let Some(seg) = pair.snd.poll_transmit(now) {
            if seg.payload_len > 0 {
                Self::data_sent(pair, out, trace, fi, now, &seg);
            }
            xmit_buf.push(tcp_packet(&mut eng.uid, fi, pair.id, Dir::Fwd, seg, now));
        }
        let n = xmit_buf.len() as u64;
        if n == 0 {
            return;
        }
        // The softirq's time varies from event to event (other work on the
        // CPU, caches): uniform over `first` ± jitter / 2 (validation says
        // jitter <= 2 first, so the offset stays >= 0).
        let first_ns = if x.jitter_ns > 0 {
            let u = (f.host_rng.uniform() * x.jitter_ns as f64) as u64;
            x.first_ns.saturating_sub(x.jitter_ns / 2).saturating_add(u)
        } else {
            x.first_ns
        };
        let first = now
            .saturating_add(first_ns)
            .saturating_add(if n > 1 { x.gso_ns } else { 0 });
        for (k, p) in xmit_buf.drain(..).enumerate() {
            let at = first
                .saturating_add(k as u64 * x.gap_ns)
                .max(pair.xmit_last.saturating_add(x.gap_ns));
            pair.xmit_last = at;
            let i = eng.slab.put(p);
            eng.q.push(at, Ev::Arrive(i));
        }
    }

    #[inline(never)]
    fn record_event(&mut self, fi: usize, ci: usize, side: Side, e: Event) {
        let now = self.now;
        let f = &mut self.flows[fi];
        let ConnPair { id, log, rcv, .. } = &mut f.conns[ci];
        let sender = side == Side::Sender;
        // Ground truth: the receiver already holds the offset.
        let received = |seq: u64| rcv.has_received_byte(seq - 1);
        log.record(
            &mut self.out,
            &mut f.agg,
            now,
            fi as u32,
            *id,
            sender,
            e,
            received,
            now,
        );
    }

    #[inline(never)]
    fn schedule_next_conn(&mut self, fi: usize) {
        let now = self.now;
        let f = &mut self.flows[fi];
        if let AppConfig::Downloads {
            think_ns, count, ..
        } = &f.cfg.app
        {
            if count.is_none_or(|c| f.opened < c) {
                let think = dist::sample(think_ns, &mut f.rng) as Time;
                self.eng
                    .q
                    .push(now.saturating_add(think), Ev::OpenConn { flow: fi as u32 });
            }
        }
    }

    fn open_conn(&mut self, fi: usize) {
        let now = self.now;
        let f = &mut self.flows[fi];
        let size = match &f.cfg.app {
            AppConfig::Bulk { bytes } => *bytes,
            AppConfig::Downloads { sizes, .. } => {
                Some((dist::sample(sizes, &mut f.rng) as u64).max(1))
            }
        };
        let id = f.next_conn;
        f.next_conn += 1;
        f.opened += 1;
        let snd_iss = f.rng.next_u32();
        let rcv_iss = f.rng.next_u32();
        let ts_a = f.rng.next_u32();
        let ts_b = f.rng.next_u32();
        let sport = 10000 + (id % 50000) as u16;
        let dport = 5001;
        let (mut snd, rcv) = if f.receiver_opens {
            (
                Connection::server(f.tcp.clone(), dport, sport, snd_iss, ts_a),
                Connection::client(f.tcp.clone(), sport, dport, rcv_iss, ts_b),
            )
        } else {
            (
                Connection::client(f.tcp.clone(), sport, dport, snd_iss, ts_a),
                Connection::server(f.tcp.clone(), dport, sport, rcv_iss, ts_b),
            )
        };
        match size {
            Some(n) => {
                snd.app_supply(n);
                snd.close();
            }
            None => snd.app_supply(u64::MAX),
        }
        f.conns.push(ConnPair {
            id,
            snd,
            rcv,
            snd_iss,
            timers: [TimerSlot::default(); 2],
            opened_at: now,
            size,
            done_at: None,
            log: ConnLog::simulated(f.tcp.spurious_detection != tcplab_tcp::DetectorKind::None),
            coverage: Coverage::default(),
            first_data_at: None,
            sender_acked: false,
            xmit_last: 0,
        });
        let ci = f.conns.len() - 1;
        self.out.event(EventRow {
            seq: size.unwrap_or(0),
            ..EventRow::new(now, fi as u32, id, EventKind::ConnOpen)
        });
        let opener = if self.flows[fi].receiver_opens {
            Side::Receiver
        } else {
            Side::Sender
        };
        self.service(fi, ci, opener);
    }

    fn fold(agg: &mut FlowAgg, pair: &ConnPair) {
        let r = pair.rcv.stats();
        agg.add_sender(pair.snd.stats(), pair.log.spurious, pair.log.spurious_fr);
        agg.acks_sent += r.acks_sent;
        agg.window_updates += r.window_updates;
        agg.bytes_delivered += r.bytes_read;
        agg.bytes_written += match pair.size {
            Some(n) => n,
            None => pair.snd.snd_max().saturating_sub(1),
        };
        agg.connections += 1;
    }

    fn check_pair(violations: &mut Vec<String>, fi: usize, pair: &ConnPair) {
        if pair.snd.stats().bad_acks > 0 {
            violations.push(format!(
                "flow {fi} conn {}: {} ACKs acknowledged data never sent",
                pair.id,
                pair.snd.stats().bad_acks
            ));
        }
        if let Err(e) = pair.snd.check_invariants() {
            violations.push(format!("flow {fi} conn {}: {e}", pair.id));
        }
        if let Some(sz) = pair.size {
            let d = pair.rcv.stats().bytes_delivered;
            if pair.snd.send_finished() && d != sz {
                violations.push(format!(
                    "flow {fi} conn {}: sender saw all {sz} bytes acknowledged but the receiver delivered {d}",
                    pair.id
                ));
            }
        }
    }

    #[inline(never)]
    fn retire(&mut self, fi: usize, ci: usize) {
        let f = &mut self.flows[fi];
        let pair = f.conns.remove(ci);
        Self::check_pair(&mut self.violations, fi, &pair);
        Self::fold(&mut f.agg, &pair);
        pair.log.classify_misses(&mut f.agg, &self.out, &f.tcp);
    }

    /// Segment trace (`SimConfig::trace`): a data segment reaching the
    /// receiver, or an ACK and its SACK blocks reaching the sender; offsets
    /// as in the event log.
    fn trace_arrival(out: &mut Output, flow: u32, pair: &ConnPair, p: &Packet, now: Time) {
        let (iss, una) = (pair.snd_iss, pair.snd.snd_una());
        match p.dir {
            Dir::Fwd if p.seg.payload_len > 0 => {
                let off = unwrap(iss, p.seg.seq, una);
                let k = SegmentKind::Arrive;
                out.segment(now, flow, pair.id, k, off, p.seg.payload_len, p.sent_at);
            }
            Dir::Rev if p.seg.flags.ack() => {
                let ack = unwrap(iss, p.seg.ack, una);
                let wnd = pair.snd.peer_window(&p.seg);
                let wnd = wnd.min(u32::MAX as u64) as u32;
                out.segment(now, flow, pair.id, SegmentKind::Ack, ack, wnd, p.sent_at);
                for b in p.seg.options.sack_blocks() {
                    let (l, r) = (unwrap(iss, b.left, una), unwrap(iss, b.right, una));
                    let len = r.saturating_sub(l).min(u32::MAX as u64) as u32;
                    out.segment(now, flow, pair.id, SegmentKind::Sack, l, len, p.sent_at);
                }
            }
            _ => {}
        }
    }

    /// Queue samples (`SimConfig::trace`): packets queued or in service on
    /// every hop and direction whose component reports them.
    fn sample_queues(&mut self) {
        let now = self.now;
        for (hi, h) in self.hops.iter_mut().enumerate() {
            for dir in [Dir::Fwd, Dir::Rev] {
                if let Some(n) = h.queue_len(dir, now) {
                    let delay = h.queue_delay(dir, now);
                    self.out.queue(now, hi as u32, dir as u8, n, delay);
                }
            }
        }
    }

    fn sample(&mut self) {
        #[cfg(test)]
        tests::TICKS.with(|t| t.set(t.get() + 1));
        let now = self.now;
        if self.cfg.trace {
            self.sample_queues();
        }
        for (fi, f) in self.flows.iter().enumerate() {
            if let Some(pair) = f.conns.last() {
                let c = &pair.snd;
                self.out.sample(
                    now,
                    fi as u32,
                    pair.id,
                    c.cwnd(),
                    c.ssthresh().min(u64::MAX / 8),
                    c.srtt(),
                    c.rttvar(),
                    c.rto(),
                    c.in_flight(),
                    f.agg.bytes_delivered + pair.rcv.stats().bytes_read,
                    (
                        c.pacing_rate().unwrap_or(0).saturating_mul(8),
                        c.rate_estimator()
                            .map_or(0, |r| r.latest_rate(c.mss()).saturating_mul(8)),
                    ),
                );
            }
        }
        self.eng
            .q
            .push(now.saturating_add(self.cfg.sample_interval_ns), Ev::Sample);
    }

    fn cbr_send(&mut self, ci: usize) {
        let now = self.now;
        let c = &mut self.cross[ci];
        if now >= c.stop {
            return;
        }
        c.sent += 1;
        let gap = (c.packet_bytes as u64 * 8 * 1_000_000_000).div_ceil(c.rate_bps);
        let p = Packet {
            uid: self.eng.uid,
            flow: ci as u32,
            conn: 0,
            dir: Dir::Fwd,
            hop: 0,
            udp: true,
            size: c.packet_bytes,
            sent_at: now,
            seg: Segment::default(),
            feedback: None,
        };
        self.eng.uid += 1;
        self.eng
            .q
            .push(now.saturating_add(gap), Ev::Cbr { cross: ci as u32 });
        self.forward(p);
    }

    /// Receiver ACK congestion control (RFC 3449 §4.3): tell the receiver
    /// how many packets wait ahead of its ACK in its uplink queue — the
    /// first hop of the flow's reverse route.
    fn uplink_backlog(
        hops: &mut [Box<dyn Component>],
        route: &[usize],
        rcv: &mut Connection,
        now: Time,
    ) {
        let Some(&hop) = route.last() else {
            return;
        };
        if let Some(b) = hops[hop].backlog(Dir::Rev, now) {
            let ahead = b.saturating_sub(1).min(u32::MAX as u64) as u32;
            rcv.on_uplink_backlog(ahead);
        }
    }

    fn ping_send(&mut self, idx: usize) {
        let now = self.now;
        if let Some((p, next)) = self.pings[idx].request(idx, self.eng.uid, now) {
            self.eng.uid += 1;
            self.eng.q.push(next, Ev::Ping { idx: idx as u32 });
            self.forward(p);
        }
    }

    fn finish(mut self) -> Result<Output, String> {
        let end = self.now;
        let mut in_flight = 0u64;
        for e in self.eng.q.pending() {
            if matches!(e.ev, Ev::Arrive(_)) {
                in_flight += 1;
            }
        }
        let held: u64 = self.hops.iter().map(|h| h.held()).sum();
        // Packet conservation: every packet is delivered, dropped, absorbed
        // by a middlebox, held in a component, or in flight.
        let accounted =
            self.packets_delivered + self.packets_dropped + self.eng.absorbed + held + in_flight;
        if self.eng.uid != accounted {
            self.violations.push(format!(
                "packet conservation: {} created != {} delivered + {} dropped + {} absorbed + {} held + {} in flight",
                self.eng.uid, self.packets_delivered, self.packets_dropped, self.eng.absorbed, held, in_flight
            ));
        }
        for h in &self.hops {
            self.violations.extend(h.violations());
        }
        let mut notes = Vec::new();
        for fi in 0..self.flows.len() {
            let pairs = std::mem::take(&mut self.flows[fi].conns);
            for pair in &pairs {
                Self::check_pair(&mut self.violations, fi, pair);
                let f = &mut self.flows[fi];
                Self::fold(&mut f.agg, pair);
                pair.log.classify_misses(&mut f.agg, &self.out, &f.tcp);
                for (side, conn) in [("sender", &pair.snd), ("receiver", &pair.rcv)] {
                    if let Some(g) = conn.gave_up() {
                        // The data is not delivered, and this is why (give_up.rs).
                        notes.push(format!(
                            "flow {fi} conn {}: the {side} {}; {} bytes delivered",
                            pair.id,
                            g.describe(),
                            pair.rcv.stats().bytes_read
                        ));
                    }
                }
                if let Some(sz) = pair.size {
                    let d = pair.rcv.stats().bytes_read;
                    if d < sz {
                        notes.push(format!(
                            "flow {fi} conn {}: {d} of {sz} bytes delivered (read by the application) when the run ended at {:.3} s",
                            pair.id,
                            end as f64 * 1e-9
                        ));
                        f.agg.active_ns += end - pair.opened_at;
                    }
                } else {
                    f.agg.active_ns += end - pair.opened_at.max(f.cfg.start_ns);
                }
            }
        }
        for h in &self.hops {
            notes.extend(h.notes());
        }
        if let Some(e) = self.out.spill_error.take() {
            return Err(e);
        }
        // Last: the captures get their names only when the run is complete.
        self.eng.taps.finish()?;
        if self.violations.len() > 20 {
            let more = self.violations.len() - 20;
            self.violations.truncate(20);
            self.violations
                .push(format!("... and {more} more violations"));
        }
        let mut out = self.out;
        out.summary = Some(Summary {
            name: self.cfg.name.clone(),
            seed: self.cfg.seed,
            sim_time_ns: end,
            events: self.events_processed + self.unrun_ticks,
            packets: self.hops.iter().map(|h| h.tx_packets()).sum(),
            stray: self.stray,
            flows: self
                .flows
                .iter()
                .enumerate()
                .map(|(i, f)| FlowSummary::new(i, f.cfg.name.clone(), &f.agg))
                .collect(),
            hops: self
                .cfg
                .hops
                .iter()
                .zip(self.hops.iter())
                .flat_map(|(c, h)| h.stats(c.name()))
                .collect(),
            cross: self
                .cross
                .iter()
                .zip(self.cfg.cross.iter())
                .map(|(c, cc)| (cc.name.clone(), c.sent, c.received, c.dropped))
                .collect(),
            violations: self.violations,
            notes,
            pcaps: std::mem::take(&mut self.eng.taps.paths),
            pings: self.pings.iter().map(|p| p.summary()).collect(),
        });
        Ok(out)
    }
}
#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{example_p2p, LossConfig};
    use crate::truth::PEAK;

    thread_local! {
        /// Sampler ticks run on this thread.
        pub(super) static TICKS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
    }

    /// A lossy path with no propagation delay and a 1 ms RTO: nearly every
    /// timeout is spurious, a few hundred genuine ones per minute. With
    /// only the summary recorded, the ground-truth bookkeeping must stay
    /// bounded by what is in flight, not grow with every genuine timeout.
    fn rto_storm(secs: u64) -> (usize, u64) {
        let mut c = example_p2p(secs * 1_000_000_000, 0.2);
        let HopConfig::Link(l) = &mut c.hops[0] else {
            unreachable!()
        };
        l.fwd.delay_ns = 0;
        l.rev.delay_ns = 0;
        l.rev.loss = LossConfig::None;
        let r = &mut c.flows[0].tcp.rto;
        (r.initial_ns, r.min_ns, r.max_ns) = (1_000_000, 1_000_000, 1_000_000);
        c.sample_interval_ns = 0;
        c.record.timeseries = false;
        c.record.events = false;
        PEAK.with(|p| p.set(0));
        let out = Sim::new(c).unwrap().run(None).unwrap();
        let s = out.summary.as_ref().unwrap();
        assert!(s.violations.is_empty(), "{:?}", s.violations);
        let f = &s.flows[0];
        assert!(f.timeouts > 10_000 && f.spurious_timeouts < f.timeouts);
        (PEAK.with(|p| p.get()), f.timeouts - f.spurious_timeouts)
    }

    #[test]
    fn pending_ground_truth_is_bounded_by_what_is_in_flight() {
        let (short, _) = rto_storm(20);
        let (long, genuine) = rto_storm(300);
        // Before, every genuine timeout stayed pending to the end of the run.
        assert!(genuine > 1000, "{genuine}");
        assert!(
            long <= short.max(64) * 2,
            "peak {long} after 300 s, {short} after 20 s"
        );
        assert!(
            (long as u64) < genuine / 4,
            "peak {long}, genuine timeouts {genuine}"
        );
    }

    /// A 2 MB transfer over `example_p2p` (1 % loss) with the sender's
    /// `xmit_time`: every byte delivered once and in order; its duration.
    fn bulk_with_send_time(xmit: Option<XmitTimeJson>, seed: u64) -> f64 {
        let mut c = example_p2p(60_000_000_000, 0.01);
        c.seed = seed;
        c.flows[0].app = AppConfig::Bulk {
            bytes: Some(2_000_000),
        };
        c.flows[0].tcp.xmit_time = xmit;
        let out = Sim::new(c).unwrap().run(None).unwrap();
        let s = out.summary.unwrap();
        assert!(s.violations.is_empty(), "{:?}", s.violations);
        let f = &s.flows[0];
        assert_eq!(f.bytes_delivered, 2_000_000);
        f.duration_s
    }

    /// `xmit_time` holds each segment in the sending host: a transfer takes
    /// longer by about the send path per round trip, and every byte still
    /// arrives once and in order (no segment overtakes another).
    #[test]
    fn host_send_time_delays_segments_in_order() {
        let seed = example_p2p(1, 0.0).seed;
        let run = |xmit: Option<XmitTimeJson>| bulk_with_send_time(xmit, seed);
        let instant = run(None);
        let held = run(Some(XmitTimeJson {
            first_ns: 1_000_000,
            gso_ns: 500_000,
            gap_ns: 100_000,
            jitter_ns: 0,
        }));
        assert!(held > instant * 1.005, "{held} s vs {instant} s instant");
    }

    /// `xmit_time.jitter` spreads the time to each event's first segment:
    /// a run with it is reproducible from its seed, differs from the run
    /// without it, and still delivers every byte once and in order (the
    /// spread never lets a segment overtake an earlier one).
    #[test]
    fn host_send_time_jitter_is_seeded_and_keeps_order() {
        let run = |jitter_ns: u64, seed: u64| {
            let x = XmitTimeJson {
                first_ns: 500_000,
                gso_ns: 0,
                gap_ns: 10_000,
                jitter_ns,
            };
            bulk_with_send_time(Some(x), seed)
        };
        let fixed = run(0, 7);
        let spread = run(1_000_000, 7);
        assert_eq!(spread, run(1_000_000, 7), "same seed, same run");
        assert_ne!(spread, fixed, "the spread moves the segments");
    }

    /// The sampler runs only when its output is recorded: a summary-only
    /// run of a long idle path costs the same with or without a
    /// `sample_interval`.
    #[test]
    fn no_sampler_events_without_a_time_series() {
        let run = |interval: u64, tables: bool| {
            // A transfer of 10 kB, then an hour of nothing.
            let mut c = example_p2p(3_600_000_000_000, 0.0);
            c.flows[0].app = AppConfig::Bulk {
                bytes: Some(10_000),
            };
            c.sample_interval_ns = interval;
            c.record.timeseries = tables;
            c.record.events = tables;
            let out = Sim::new(c).unwrap().run(None).unwrap();
            (out.summary.unwrap().events, out.ts_t.len())
        };
        let ticks = |interval: u64, tables: bool| {
            TICKS.with(|t| t.set(0));
            let r = run(interval, tables);
            (r, TICKS.with(|t| t.get()))
        };
        let ((summary_only, rows), ran) = ticks(100_000_000, false);
        assert_eq!((rows, ran), (0, 0));
        // With the time series recorded, one tick every 100 ms (rows only
        // while the connection is open). The summary counts the same
        // events either way: it does not depend on which tables are kept.
        let ((with_ts, rows), ran) = ticks(100_000_000, true);
        assert_eq!((with_ts, ran), (summary_only, 36_001));
        assert!(rows > 0);
        let ((none, _), _) = ticks(0, false);
        assert_eq!(summary_only, none + 36_001);
    }

    /// A path that delays a packet for a million hours: the SYN is never
    /// answered. The TCP gives up after its `syn_retries` retransmissions
    /// instead of sending one SYN per maximum RTO (60 s) for the whole run,
    /// each copy kept in flight to the end; the run says why nothing arrived.
    #[test]
    fn an_unanswered_handshake_gives_up() {
        const HOUR: u64 = 3_600_000_000_000;
        let run = |linux: bool| {
            let mut c = example_p2p(10_000 * HOUR, 0.0);
            if let HopConfig::Link(l) = &mut c.hops[0] {
                l.fwd.delay_ns = 1_000_000 * HOUR;
                l.rev.delay_ns = 1_000_000 * HOUR;
            }
            if linux {
                let p = tcplab_tcp::RtoProfile::NAMED[3].1;
                let r = &mut c.flows[0].tcp.rto;
                (r.min_ns, r.max_ns, r.syn_retries) = (p.min, p.max, p.syn_retries);
            }
            c.record.timeseries = false;
            c.record.events = false;
            Sim::new(c).unwrap().run(None).unwrap().summary.unwrap()
        };
        let s = run(false);
        // RFC 1122 §4.2.3.5: at least 3 minutes (the 8th timeout at 183 s).
        assert_eq!(s.flows[0].segments_sent, 8, "{:?}", s.notes);
        assert_eq!(s.flows[0].bytes_delivered, 0);
        assert!(s.violations.is_empty(), "{:?}", s.violations);
        assert_eq!(s.notes.len(), 1, "{:?}", s.notes);
        assert!(
            s.notes[0].starts_with(
                "flow 0 conn 0: the sender gave up at 183.000 s after 7 timeout retransmissions of its SYN (rto.syn_retries = 7)"
            ),
            "{}",
            s.notes[0]
        );
        // Linux: tcp_syn_retries = 6, the 7th timeout 127 s after the SYN.
        let s = run(true);
        assert_eq!(s.flows[0].segments_sent, 7);
        assert!(
            s.notes[0].contains("gave up at 127.000 s after 6"),
            "{}",
            s.notes[0]
        );
    }

    /// A path that goes dark for good after the handshake: the sender gives
    /// up on its data when `retries2` timeouts' worth of time has passed
    /// (RFC 1122 §4.2.3.5 R2, Linux's `retransmits_timed_out()`).
    #[test]
    fn a_connection_whose_path_dies_gives_up() {
        let mut c = example_p2p(3_600_000_000_000, 0.0);
        if let HopConfig::Link(l) = &mut c.hops[0] {
            l.fwd.outages_ns = vec![(2_000_000_000, u64::MAX / 4)];
        }
        c.record.timeseries = false;
        c.record.events = false;
        let s = Sim::new(c).unwrap().run(None).unwrap().summary.unwrap();
        assert!(s.violations.is_empty(), "{:?}", s.violations);
        assert_eq!(s.notes.len(), 1, "{:?}", s.notes);
        let n = &s.notes[0];
        assert!(
            n.contains("the sender gave up")
                && n.contains("of unacknowledged data (rto.retries2 = 15)"),
            "{n}"
        );
        // 924.6 s (Linux's model: 200 ms doubling to 120 s, 15 times) after
        // the head segment was last sent before its first timeout (about
        // 2 s), at the first timeout after that (60 s apart by then).
        let at: f64 = n
            .split("gave up at ")
            .nth(1)
            .unwrap()
            .split(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert!((926.6..987.0).contains(&at), "{n}");
    }
}
