//! A TCP spoofing PEP (performance-enhancing proxy): a router that returns
//! pseudo-ACKs to the sender for data it holds and delivers that data to the
//! receiver itself (Yagiu & Tanaka 2001 §2.2; RFC 3135 §2.1 "TCP ACK
//! spoofing", §3.1.1). It can sit at any position of a path; it sees the
//! forward (sender → receiver) and reverse directions of every flow whose
//! route contains it. Only the forward direction's data is spoofed.
//!
//! # Behaviour (the specification the tests check)
//!
//! **Set-up stays end to end.** SYNs and SYN-ACKs pass unchanged; the PEP
//! records each side's ISN and options (MSS, window scale, SACK-permitted,
//! timestamps) and never answers a SYN itself. Spoofing starts for a
//! connection only once both SYNs have passed (the receiver has answered);
//! until then every segment passes unchanged.
//!
//! **What it acknowledges.** A forward data segment inside the PEP's window
//! is *absorbed* (the packet ends; the PEP keeps its byte range, `Ctx::absorb`)
//! and answered at once with a pseudo-ACK toward the sender (`Ctx::emit`,
//! reverse direction) whose ACK number is the PEP's in-order edge `rcv_nxt`:
//! only in-order data the PEP holds is acknowledged. Out-of-order data inside
//! the window is held (not acknowledged); its pseudo-ACK is a duplicate ACK,
//! with SACK blocks when SACK was negotiated (RFC 2018 §4), so the sender's
//! fast retransmit works against the PEP as against a receiver. Data already
//! held is absorbed and answered with a duplicate ACK. Data beyond the window
//! is dropped (counted as `overflow_drops`) and answered with an ACK.
//! The FIN is never pseudo-acknowledged (see tear-down).
//!
//! **Window.** The PEP accepts data up to `snd_una + buffer_bytes`, where
//! `snd_una` is what the receiver has acknowledged: the buffer holds
//! acknowledged-but-undelivered and out-of-order data. The pseudo-ACK's
//! window is that right edge minus `rcv_nxt` (never shrinking the right edge,
//! RFC 9293 §3.8.6), scaled by the receiver's window-scale shift when both
//! SYNs negotiated scaling (RFC 7323 §2.3), capped at the field's maximum.
//! When the receiver's ACKs free buffer while the sender's usable window is
//! below one MSS, the PEP sends a window-update pseudo-ACK (receiver SWS
//! avoidance, RFC 9293 §3.8.6.2.2).
//!
//! **Sending side: tcplab-tcp's own sender.** The PEP sends the held stream
//! toward the receiver through a `tcplab_tcp::Connection` in relay mode
//! (`Connection::relay`), the same code every tcplab endpoint sends with: the
//! sender's ISN and sequence numbers (no rewriting), the options both SYNs
//! negotiated (MSS, window scale, SACK, timestamps), the held in-order data as
//! its send buffer (`app_supply`) and the sender's FIN as its close. So its
//! congestion control (`cc`, initial window `initial_window_segments`), SACK
//! loss recovery (RFC 6675) or NewReno (RFC 6582) without SACK, Limited
//! Transmit (RFC 3042), the RTO (RFC 6298 over the PEP–receiver RTT, first
//! sampled from the handshake the PEP saw, RFC 6298 §2.2; `rto_min` keeps it
//! above the satellite RTT, Yagiu 2001 §2.2.3), spurious-timeout detection
//! (`spurious_detection`: F-RTO, Eifel, DSACK) and the persist timer toward a
//! zero window (RFC 9293 §3.8.6.1) are the core's. Its segments carry the
//! ACK number and window field the sender last sent (the reverse stream
//! stays end to end) and timestamps from the PEP's own clock toward the
//! receiver, anchored to the sender's SYN TSval so the receiver's PAWS check
//! (RFC 7323 §5) passes for the sender's and the PEP's segments alike. Receiver
//! ACKs that the PEP consumes are absorbed: the sender already had its
//! (pseudo-)ACK.
//!
//! **Tear-down stays end to end.** The sender's FIN is recorded (it occupies
//! the sequence number after the last data byte) and sent by the PEP after
//! all data; the PEP does not acknowledge it. The receiver's ACK that covers
//! the FIN passes to the sender unchanged, so the sender learns its FIN was
//! acknowledged only once the receiver has acknowledged all data. The
//! receiver's FIN and the sender's later pure ACKs pass unchanged.
//!
//! **RST** passes in both directions; the connection's held data is dropped
//! (`rst_freed_bytes`) and its state ends.
//!
//! **Invariant** (checked at the end of every run, `violations`): nothing the
//! PEP acknowledged is lost while the receiver stays reachable: for every
//! connection not reset, the bytes pseudo-acknowledged are either
//! acknowledged by the receiver or still held — outstanding in the relay's
//! retransmission queue, contiguously from the receiver's cumulative ACK, or
//! not yet sent — and after the receiver
//! acknowledged the FIN, everything pseudo-acknowledged was acknowledged by
//! the receiver. The engine's own end-to-end check (the receiver delivered
//! every byte the sender saw acknowledged) runs as well.
//!
//! Reported per run (`stats`): pseudo-ACKs sent, local retransmissions
//! (fast and timeout), bytes held (maximum, and a time series at
//! `series_interval_ns` resolution), bytes absorbed, overflow drops, bytes
//! freed by RST.
//!
//! Pseudo-ACKs carry timestamps from the PEP's own clock toward the sender
//! (anchored to the receiver's SYN-ACK TSval) and echo the sender's TSval of
//! the latest in-order segment (RFC 7323 §4.3 TS.Recent, simplified).
//!
//! Departures: no delayed pseudo-ACKs (one per data segment, as the paper's
//! router does); reverse-direction data passes unspoofed. The paper sizes the
//! router's RTO from its buffer, subject to RTO > satellite RTT; tcplab uses
//! RFC 6298 (RTO ≥ SRTT + 4·RTTVAR, so above the measured PEP–receiver RTT
//! once sampled) with a configured floor and initial value (default 1 s, above
//! a GEO RTT before any sample).

use std::collections::HashMap;

use crate::component::{Component, Ctx, DropKind};
use crate::config::PepConfig;
use crate::engine::{Dir, Packet};
use tcplab_tcp::seq::{to_wire, unwrap};
use tcplab_tcp::spurious::DetectorKind;
use tcplab_tcp::{
    CcKind, Config, Connection, Event, Flags, RtoProfile, SackBlock, Segment, TcpOptions, Time,
    NS_PER_MS,
};

/// Check a PEP configuration; the message names the field and the rule.
pub fn check_config(c: &PepConfig) -> Result<(), String> {
    if c.buffer_bytes < 536 {
        return Err(format!(
            "buffer: must be at least 536 bytes (one minimum MSS) (got {})",
            c.buffer_bytes
        ));
    }
    if !CcKind::parse(&c.cc).is_some_and(|k| k.entry.loss_based) {
        return Err(format!(
            "cc: unknown congestion control {:?} (choose from {})",
            c.cc,
            tcplab_tcp::cc::names_where(|e| e.loss_based, ", "),
        ));
    }
    if DetectorKind::parse(&c.spurious_detection).is_none() {
        return Err(format!(
            "spurious_detection: unknown spurious-timeout detector {:?} (choose from {})",
            c.spurious_detection,
            DetectorKind::NAMES.join(", "),
        ));
    }
    if c.initial_window_segments == 0 {
        return Err("initial_window: must be >= 1 segment (got 0)".into());
    }
    if c.rto_min_ns == 0 {
        return Err("rto_min: must be > 0".into());
    }
    if c.rto_min_ns > c.rto_max_ns {
        return Err("rto_min: must be <= rto_max".into());
    }
    if c.rto_initial_ns < tcplab_tcp::NS_PER_MS {
        return Err("rto_initial: must be >= 1ms".into());
    }
    if c.rto_initial_ns < c.rto_min_ns || c.rto_initial_ns > c.rto_max_ns {
        return Err("rto_initial: must be between rto_min and rto_max".into());
    }
    // The give-up limits, as a flow's (validate.rs: check_retries).
    for (key, n) in [
        ("syn_retries", c.syn_retries),
        ("synack_retries", c.synack_retries),
        ("retries2", c.retries2),
    ] {
        crate::validate::check_count(key, n)?;
    }
    Ok(())
}

/// What a SYN told us about one side.
#[derive(Clone, Copy, Debug, Default)]
struct SynInfo {
    isn: u32,
    mss: Option<u16>,
    wscale: Option<u8>,
    sack: bool,
    /// The SYN's TSval, if it carried timestamps.
    ts: Option<u32>,
}

struct PConn {
    flow: u32,
    conn: u32,
    fwd_syn: Option<SynInfo>,
    rev_syn: Option<SynInfo>,
    /// When the sender's SYN (or SYN-ACK) passed, and how many times it did.
    syn_at: Time,
    syns: u32,
    /// The receiver's SYN (or SYN-ACK) as it passed, and when.
    rev_seg: Option<Segment>,
    rev_syn_at: Time,
    /// Ports of the forward direction (sender → receiver).
    sport: u16,
    dport: u16,
    active: bool,
    ended: bool,
    /// Forward ISN; offsets are relative to it (first data byte = 1).
    iss: u32,
    /// In-order edge of held data: everything below is pseudo-acknowledged.
    rcv_nxt: u64,
    /// Out-of-order held ranges [lo, hi), sorted, disjoint, above rcv_nxt.
    ooo: Vec<(u64, u64)>,
    /// Offset of the sender's FIN, once it arrived in order.
    fin_off: Option<u64>,
    /// The sending side toward the receiver: tcplab-tcp's sender in relay
    /// mode, from the moment both SYNs passed until the connection ends.
    tx: Option<Connection>,
    /// What the receiver has acknowledged (the relay's SND.UNA; frozen at
    /// the end of the connection).
    snd_una: u64,
    fin_acked: bool,
    timer_gen: u32,
    timer_at: Option<Time>,
    // --- header echo ---
    /// Latest ACK field / window the sender put on its segments.
    fwd_ack: u32,
    fwd_window: u16,
    /// TSval to echo in pseudo-ACKs (RFC 7323 §4.3 TS.Recent, simplified:
    /// the TSval of the latest in-order segment).
    ts_recent: u32,
    /// The PEP's timestamp clock toward the sender: TSval = now in ms + this
    /// (anchored to the receiver's SYN-ACK TSval).
    ts_off_rev: u32,
    /// Highest offset ever pseudo-acknowledged.
    acked_to_sender: u64,
    /// Right edge of the window last advertised to the sender.
    adv_right: u64,
    /// Real time only: the held bytes, offset k at `k % buffer_bytes` (every
    /// held offset lies in [snd_una, snd_una + buffer_bytes), so none
    /// collide). Empty in simulation, freed when the connection ends.
    ring: Vec<u8>,
}

impl PConn {
    fn held(&self) -> u64 {
        let ooo: u64 = self.ooo.iter().map(|(a, b)| b - a).sum();
        self.rcv_nxt.saturating_sub(self.snd_una) + ooo
    }
}

#[derive(Default, Clone, Debug)]
struct PepStats {
    pseudo_acks: u64,
    dup_pseudo_acks: u64,
    /// Pseudo-ACKs that closed the sender's window (buffer full).
    zero_window_acks: u64,
    local_retransmits: u64,
    local_fast_retransmits: u64,
    local_timeouts: u64,
    local_spurious_timeouts: u64,
    data_segments_sent: u64,
    bytes_absorbed: u64,
    acks_absorbed: u64,
    overflow_drops: u64,
    window_updates: u64,
    rst_freed_bytes: u64,
    resets: u64,
    connections: u64,
    passed: [u64; 2],
    /// Packets and bytes leaving the PEP per direction (passed + created).
    tx_packets: [u64; 2],
    tx_bytes: [u64; 2],
    max_held: u64,
}

pub struct Pep {
    cfg: PepConfig,
    conns: Vec<PConn>,
    index: HashMap<(u32, u32), usize>,
    stats: PepStats,
    /// Bytes held over all connections.
    held_total: u64,
    series_t: Vec<f64>,
    series_bytes: Vec<u64>,
    /// Bytes pseudo-acknowledged so far (all connections) at each series point.
    series_acked: Vec<u64>,
    last_series: Option<Time>,
    violations: Vec<String>,
}

impl Pep {
    pub fn new(cfg: &PepConfig) -> Pep {
        Pep {
            cfg: cfg.clone(),
            conns: Vec::new(),
            index: HashMap::new(),
            stats: PepStats::default(),
            held_total: 0,
            series_t: Vec::new(),
            series_bytes: Vec::new(),
            series_acked: Vec::new(),
            last_series: None,
            violations: Vec::new(),
        }
    }

    fn conn_index(&mut self, p: &Packet) -> usize {
        if let Some(&i) = self.index.get(&(p.flow, p.conn)) {
            return i;
        }
        let (sport, dport) = match p.dir {
            Dir::Fwd => (p.seg.src_port, p.seg.dst_port),
            Dir::Rev => (p.seg.dst_port, p.seg.src_port),
        };
        self.conns.push(PConn {
            flow: p.flow,
            conn: p.conn,
            fwd_syn: None,
            rev_syn: None,
            syn_at: 0,
            syns: 0,
            rev_seg: None,
            rev_syn_at: 0,
            sport,
            dport,
            active: false,
            ended: false,
            iss: 0,
            rcv_nxt: 1,
            ooo: Vec::new(),
            fin_off: None,
            tx: None,
            snd_una: 1,
            fin_acked: false,
            timer_gen: 0,
            timer_at: None,
            fwd_ack: 0,
            fwd_window: 0,
            ts_recent: 0,
            ts_off_rev: 0,
            acked_to_sender: 1,
            adv_right: 1,
            ring: Vec::new(),
        });
        self.stats.connections += 1;
        let i = self.conns.len() - 1;
        self.index.insert((p.flow, p.conn), i);
        i
    }

    fn pass(&mut self, p: Packet, ctx: &mut Ctx) {
        self.stats.passed[p.dir as usize] += 1;
        self.count_tx(&p);
        ctx.forward_now(p);
    }

    fn count_tx(&mut self, p: &Packet) {
        self.stats.tx_packets[p.dir as usize] += 1;
        self.stats.tx_bytes[p.dir as usize] += p.size as u64;
    }

    fn record_held(&mut self, now: Time) {
        let total: u64 = self
            .conns
            .iter()
            .filter(|c| !c.ended)
            .map(|c| c.held())
            .sum();
        let acked: u64 = self.conns.iter().map(|c| c.acked_to_sender - 1).sum();
        self.held_total = total;
        self.stats.max_held = self.stats.max_held.max(total);
        let due = self
            .last_series
            .is_none_or(|t| now >= t + self.cfg.series_interval_ns);
        if due {
            self.series_t.push(now as f64 * 1e-9);
            self.series_bytes.push(total);
            self.series_acked.push(acked);
            self.last_series = Some(now);
        } else if let Some(b) = self.series_bytes.last_mut() {
            // Keep the peak of the interval (and the latest acknowledged count).
            *b = (*b).max(total);
            *self.series_acked.last_mut().unwrap() = acked;
        }
    }

    /// The relay's configuration: the PEP's sending-side settings and the
    /// options the sender's SYN offered (the receiver's come from its SYN-ACK).
    fn relay_config(&self, f: &SynInfo, r: &SynInfo) -> Config {
        // RFC 9293 §3.7.1 (RFC 6691): the MSS counts data only, so a segment
        // with the timestamps option carries 12 bytes less (as Linux's 1448).
        let opts = if f.ts.is_some() && r.ts.is_some() {
            12
        } else {
            0
        };
        let mss = f.mss.unwrap_or(536).min(r.mss.unwrap_or(536)) as u64 - opts;
        Config {
            cc: CcKind::parse(&self.cfg.cc).expect("validated"),
            sack: f.sack,
            timestamps: f.ts.is_some(),
            window_scaling: f.wscale.is_some(),
            // RFC 9293 §3.7.1: 536 without the option.
            mss: mss as u32,
            // The relay advertises no window of its own (it echoes the sender's).
            rcv_buf: 65535,
            snd_buf: self.cfg.buffer_bytes.max(mss),
            initial_window: self.cfg.initial_window_segments as u64 * mss,
            rto: RtoProfile {
                initial: self.cfg.rto_initial_ns,
                min: self.cfg.rto_min_ns,
                max: self.cfg.rto_max_ns,
                granularity: NS_PER_MS,
                max_backoff: 16,
                restart_on_rtx: false,
                estimator: tcplab_tcp::RttEstimatorKind::Rfc6298,
                syn_retries: self.cfg.syn_retries,
                synack_retries: self.cfg.synack_retries,
                retries2: self.cfg.retries2,
            },
            spurious_detection: DetectorKind::parse(&self.cfg.spurious_detection)
                .expect("validated"),
            ..Config::default()
        }
    }

    fn on_syn(&mut self, ci: usize, p: &Packet, now: Time, real_bytes: bool) {
        let o = &p.seg.options;
        let info = SynInfo {
            isn: p.seg.seq,
            mss: o.mss,
            wscale: o.wscale,
            sack: o.sack_permitted,
            ts: o.timestamps.map(|t| t.0),
        };
        let c = &mut self.conns[ci];
        match p.dir {
            Dir::Fwd => {
                c.fwd_syn = Some(info);
                c.syn_at = now;
                c.syns += 1;
            }
            Dir::Rev => {
                c.rev_syn = Some(info);
                c.rev_seg = Some(p.seg);
                c.rev_syn_at = now;
            }
        }
        if let (Some(ts), Dir::Fwd) = (o.timestamps, p.dir) {
            c.ts_recent = ts.0;
        }
        if c.active {
            return; // a retransmitted SYN or SYN-ACK changes nothing
        }
        let (Some(f), Some(r), Some(rseg)) = (c.fwd_syn, c.rev_syn, c.rev_seg) else {
            return;
        };
        // Both sides answered: spoofing may start (set-up stays end to end).
        // Either side may have opened (a download's sender answers the SYN).
        let cfg = self.relay_config(&f, &r);
        let c = &mut self.conns[ci];
        c.active = true;
        c.iss = f.isn;
        c.fwd_ack = r.isn.wrapping_add(1);
        // The PEP's timestamp clocks run in ms from the SYN TSvals they face.
        let ms = |t: Time| (t / NS_PER_MS) as u32;
        c.ts_off_rev = r.ts.unwrap_or(0).wrapping_sub(ms(c.rev_syn_at));
        let ts_off_fwd = f.ts.unwrap_or(0).wrapping_sub(ms(c.syn_at));
        // The PEP–receiver RTT from the handshake when the sender opened and
        // its SYN passed once (Karn's rule, RFC 6298 §3).
        let rtt = (c.syns == 1 && rseg.flags.ack() && c.rev_syn_at >= c.syn_at)
            .then(|| c.rev_syn_at - c.syn_at);
        let mut tx = Connection::relay(cfg, c.sport, c.dport, f.isn, ts_off_fwd, &rseg, rtt);
        tx.relay_echo(c.fwd_ack, c.fwd_window);
        c.tx = Some(tx);
        if real_bytes {
            c.ring = vec![0; self.cfg.buffer_bytes as usize];
        }
    }

    /// A pseudo-ACK from the PEP to the sender.
    fn pseudo_ack(&mut self, ci: usize, ctx: &mut Ctx, dup: bool) {
        let buffer = self.cfg.buffer_bytes;
        let c = &mut self.conns[ci];
        let (f, r) = (c.fwd_syn.unwrap(), c.rev_syn.unwrap());
        let right = c.snd_una + buffer;
        let wnd = right.saturating_sub(c.rcv_nxt);
        // RFC 7323 §2.2: scaling applies only if both SYNs carried the option.
        let shift = match (f.wscale, r.wscale) {
            (Some(_), Some(s)) => s.min(14),
            _ => 0,
        };
        let field = (wnd >> shift).min(65535) as u16;
        let mut options = TcpOptions::default();
        if f.ts.is_some() && r.ts.is_some() {
            let tsval = ((ctx.now / NS_PER_MS) as u32).wrapping_add(c.ts_off_rev);
            options.timestamps = Some((tsval, c.ts_recent));
        }
        if f.sack && r.sack {
            // RFC 2018 §4: report held out-of-order blocks.
            let max = if options.timestamps.is_some() { 3 } else { 4 };
            for (k, &(lo, hi)) in c.ooo.iter().take(max).enumerate() {
                options.sack[k] = SackBlock {
                    left: to_wire(c.iss, lo),
                    right: to_wire(c.iss, hi),
                };
                options.sack_len = (k + 1) as u8;
            }
        }
        let seg = Segment {
            src_port: c.dport,
            dst_port: c.sport,
            seq: c.fwd_ack,
            ack: to_wire(c.iss, c.rcv_nxt),
            flags: Flags::ACK,
            window: field,
            options,
            payload_len: 0,
            ecn: 0,
        };
        c.acked_to_sender = c.acked_to_sender.max(c.rcv_nxt);
        c.adv_right = c.rcv_nxt + ((field as u64) << shift);
        let p = Packet {
            uid: ctx.new_uid(),
            flow: c.flow,
            conn: c.conn,
            dir: Dir::Rev,
            hop: 0,
            udp: false,
            size: seg.ip_len() as u32,
            sent_at: ctx.now,
            seg,
            feedback: None,
        };
        self.stats.pseudo_acks += 1;
        if field == 0 {
            self.stats.zero_window_acks += 1;
        }
        if dup {
            self.stats.dup_pseudo_acks += 1;
        }
        self.count_tx(&p);
        ctx.emit(p, ctx.now);
    }

    /// Buffer freed by the receiver's ACKs reopens the sender's window: a
    /// window-update pseudo-ACK when the usable window last advertised was
    /// below one MSS and the right edge can move by at least
    /// min(buffer / 2, MSS) (receiver SWS avoidance, RFC 9293 §3.8.6.2.2).
    fn maybe_window_update(&mut self, ci: usize, ctx: &mut Ctx) {
        let buffer = self.cfg.buffer_bytes;
        let c = &self.conns[ci];
        if c.fin_off.is_some() {
            return;
        }
        let (f, r) = (c.fwd_syn.unwrap(), c.rev_syn.unwrap());
        let shift = match (f.wscale, r.wscale) {
            (Some(_), Some(s)) => s.min(14),
            _ => 0,
        };
        let mss = c.tx.as_ref().map_or(536, |t| t.mss());
        let usable = c.adv_right.saturating_sub(c.rcv_nxt);
        let right = c.snd_una + buffer;
        let cap = c.rcv_nxt + (65535u64 << shift);
        let grow = right.min(cap).saturating_sub(c.adv_right);
        if usable < mss && grow >= (buffer / 2).min(mss) {
            self.stats.window_updates += 1;
            self.pseudo_ack(ci, ctx, false);
        }
    }

    /// The sender's ACK field and window: the relay's segments carry them.
    fn note_fwd_header(&mut self, ci: usize, seg: &Segment) {
        let c = &mut self.conns[ci];
        if seg.flags.ack() {
            c.fwd_ack = seg.ack;
            c.fwd_window = seg.window;
            if let Some(tx) = c.tx.as_mut() {
                tx.relay_echo(seg.ack, seg.window);
            }
        }
    }

    /// Forward data segment while spoofing is active.
    fn on_fwd_data(&mut self, ci: usize, p: Packet, ctx: &mut Ctx) {
        let buffer = self.cfg.buffer_bytes;
        self.note_fwd_header(ci, &p.seg);
        let c = &mut self.conns[ci];
        let s = unwrap(c.iss, p.seg.seq, c.rcv_nxt);
        let e = s + p.seg.payload_len as u64;
        let limit = c.snd_una + buffer;
        if p.seg.payload_len > 0 && s >= limit {
            // Beyond the window: discard, answer with an ACK (RFC 9293 §3.10.7.4).
            self.stats.overflow_drops += 1;
            ctx.drop(p, DropKind::Queue);
            self.pseudo_ack(ci, ctx, true);
            return;
        }
        let e_acc = e.min(limit);
        let fin_in = p.seg.flags.fin() && e_acc == e;
        let before = c.rcv_nxt;
        let mut new_bytes = 0;
        if s <= c.rcv_nxt {
            if e_acc > c.rcv_nxt {
                new_bytes += e_acc - c.rcv_nxt;
                c.rcv_nxt = e_acc;
                if let Some(ts) = p.seg.options.timestamps {
                    c.ts_recent = ts.0;
                }
            }
            // Merge out-of-order ranges now reached.
            while let Some(&(lo, hi)) = c.ooo.first() {
                if lo > c.rcv_nxt {
                    break;
                }
                c.rcv_nxt = c.rcv_nxt.max(hi);
                c.ooo.remove(0);
            }
        } else if e_acc > s {
            new_bytes += insert_range(&mut c.ooo, s, e_acc);
        }
        if !c.ring.is_empty() && e_acc > s {
            // Real time: keep the bytes (never below what the receiver has
            // acknowledged: those ring slots belong to later offsets).
            let pl = ctx.payload();
            let lo = s.max(c.snd_una);
            if pl.len() as u64 != e - s {
                let msg = format!(
                    "pep: flow {} conn {}: segment of {} bytes came with {} payload bytes",
                    c.flow,
                    c.conn,
                    e - s,
                    pl.len()
                );
                self.violations.push(msg);
            } else if e_acc > lo {
                ring_write(
                    &mut c.ring,
                    lo,
                    &pl[(lo - s) as usize..(e_acc - s) as usize],
                );
            }
        }
        let c = &mut self.conns[ci];
        if fin_in && c.fin_off.is_none() && e == c.rcv_nxt {
            c.fin_off = Some(e);
        }
        // The held in-order stream is the relay's send buffer; the sender's
        // FIN, once held in order, is its close.
        if let Some(tx) = c.tx.as_mut() {
            tx.app_supply(c.rcv_nxt - 1);
            if c.fin_off.is_some() {
                tx.close();
            }
        }
        let advanced = c.rcv_nxt > before;
        self.stats.bytes_absorbed += new_bytes;
        ctx.absorb(&p);
        if p.seg.payload_len > 0 {
            // One pseudo-ACK per data segment (Yagiu 2001 §2.2).
            self.pseudo_ack(ci, ctx, !advanced);
        }
        self.record_held(ctx.now);
        self.drive(ci, ctx);
    }

    /// Send what the relay wants to send, collect its events, re-arm its timer.
    fn drive(&mut self, ci: usize, ctx: &mut Ctx) {
        let Pep { conns, stats, .. } = self;
        let c = &mut conns[ci];
        if c.ended {
            return;
        }
        let Some(tx) = c.tx.as_mut() else {
            return;
        };
        while let Some(seg) = tx.poll_transmit(ctx.now) {
            let uid = ctx.new_uid();
            if !c.ring.is_empty() && seg.payload_len > 0 {
                // Real time: the segment's bytes from the held stream.
                let off = unwrap(c.iss, seg.seq, c.snd_una);
                let (a, b) = ring_slices(&c.ring, off, seg.payload_len as usize);
                ctx.emit_payload(uid, a, b);
            }
            let p = Packet {
                uid,
                flow: c.flow,
                conn: c.conn,
                dir: Dir::Fwd,
                hop: 0,
                udp: false,
                size: seg.ip_len() as u32,
                sent_at: ctx.now,
                seg,
                feedback: None,
            };
            stats.data_segments_sent += 1;
            stats.tx_packets[0] += 1;
            stats.tx_bytes[0] += p.size as u64;
            ctx.emit(p, ctx.now);
        }
        while let Some(e) = tx.poll_event() {
            match e {
                Event::Timeout { .. } => stats.local_timeouts += 1,
                Event::FastRetransmit { .. } => stats.local_fast_retransmits += 1,
                Event::Retransmit { .. } => stats.local_retransmits += 1,
                Event::SpuriousDetected { .. } => stats.local_spurious_timeouts += 1,
                _ => {}
            }
        }
        c.snd_una = tx.snd_una();
        if let Some(f) = c.fin_off {
            c.fin_acked |= c.snd_una > f;
        }
        // One engine timer per relay; a later deadline waits for the earlier
        // one to fire (stale firings are ignored by generation).
        if let Some(t) = tx.poll_timeout() {
            if c.timer_at.is_none_or(|s| t < s) {
                c.timer_gen = c.timer_gen.wrapping_add(1);
                c.timer_at = Some(t);
                ctx.timer(t.max(ctx.now), ((ci as u64) << 32) | c.timer_gen as u64);
            }
        }
    }

    fn reset(&mut self, ci: usize, now: Time) {
        let c = &mut self.conns[ci];
        if !c.ended {
            self.stats.rst_freed_bytes += c.held();
            self.stats.resets += 1;
        }
        c.ended = true;
        c.ooo.clear();
        c.snd_una = c.rcv_nxt;
        c.tx = None;
        c.ring = Vec::new();
        c.timer_at = None;
        self.record_held(now);
    }

    /// Bytes this PEP holds for all connections now.
    pub fn held_bytes(&self) -> u64 {
        self.held_total
    }
}

/// Write `b` at stream offset `off` of a ring buffer (offset k at k % len).
fn ring_write(ring: &mut [u8], off: u64, b: &[u8]) {
    let n = ring.len();
    let at = (off % n as u64) as usize;
    let first = b.len().min(n - at);
    ring[at..at + first].copy_from_slice(&b[..first]);
    ring[..b.len() - first].copy_from_slice(&b[first..]);
}

/// The `len` bytes at stream offset `off` of a ring buffer, as two slices.
fn ring_slices(ring: &[u8], off: u64, len: usize) -> (&[u8], &[u8]) {
    let n = ring.len();
    let at = (off % n as u64) as usize;
    let first = len.min(n - at);
    (&ring[at..at + first], &ring[..len - first])
}

/// Insert [lo, hi) into sorted disjoint ranges; returns the bytes new to the set.
fn insert_range(v: &mut Vec<(u64, u64)>, lo: u64, hi: u64) -> u64 {
    let before: u64 = v.iter().map(|(a, b)| b - a).sum();
    let mut nlo = lo;
    let mut nhi = hi;
    v.retain(|&(a, b)| {
        if b < nlo || a > nhi {
            true
        } else {
            nlo = nlo.min(a);
            nhi = nhi.max(b);
            false
        }
    });
    let pos = v.partition_point(|&(a, _)| a < nlo);
    v.insert(pos, (nlo, nhi));
    let after: u64 = v.iter().map(|(a, b)| b - a).sum();
    after - before
}

impl Component for Pep {
    fn on_packet(&mut self, p: Packet, ctx: &mut Ctx) {
        if p.udp {
            self.pass(p, ctx);
            return;
        }
        let ci = self.conn_index(&p);
        let flags = p.seg.flags;
        if flags.rst() {
            // RST passes both ways and drops held data.
            self.reset(ci, ctx.now);
            self.pass(p, ctx);
            return;
        }
        if flags.syn() {
            self.on_syn(ci, &p, ctx.now, ctx.real_bytes());
            self.pass(p, ctx);
            return;
        }
        let c = &self.conns[ci];
        if !c.active || c.ended {
            self.pass(p, ctx);
            return;
        }
        match p.dir {
            Dir::Fwd => {
                if p.seg.payload_len > 0 || flags.fin() {
                    self.on_fwd_data(ci, p, ctx);
                } else {
                    // The sender's pure ACKs (handshake, ACK of the receiver's
                    // FIN, window updates) pass; the relay echoes their header.
                    self.note_fwd_header(ci, &p.seg);
                    self.pass(p, ctx);
                }
            }
            Dir::Rev => {
                // The receiver's ACK (window, SACK blocks, timestamps) goes
                // to the relay's sender.
                let nothing_held = c.rcv_nxt == 1 && c.fin_off.is_none();
                let before = c.snd_una;
                if let Some(tx) = self.conns[ci].tx.as_mut() {
                    tx.handle_segment(&p.seg, ctx.now);
                }
                let c = &mut self.conns[ci];
                if let Some(tx) = c.tx.as_ref() {
                    c.snd_una = tx.snd_una();
                }
                if let Some(f) = c.fin_off {
                    c.fin_acked |= c.snd_una > f;
                }
                let covers_fin = c.fin_acked;
                if c.snd_una > before {
                    self.record_held(ctx.now);
                    self.maybe_window_update(ci, ctx);
                }
                if nothing_held || covers_fin || p.seg.payload_len > 0 || flags.fin() {
                    // Nothing held yet (the ACK that completes a handshake the
                    // receiver opened, window updates): set-up stays end to
                    // end. End-to-end tear-down: the receiver's ACK of the FIN
                    // (and its own FIN or data) reaches the sender unchanged.
                    self.drive(ci, ctx);
                    if covers_fin && !self.conns[ci].ended {
                        let c = &mut self.conns[ci];
                        c.ended = true;
                        c.timer_at = None;
                        c.ring = Vec::new();
                    }
                    self.pass(p, ctx);
                } else {
                    self.stats.acks_absorbed += 1;
                    ctx.absorb(&p);
                    self.drive(ci, ctx);
                }
            }
        }
    }

    fn wants_bytes(&self) -> bool {
        true
    }

    fn on_timer(&mut self, token: u64, ctx: &mut Ctx) {
        let ci = (token >> 32) as usize;
        let gen = token as u32;
        let Some(c) = self.conns.get_mut(ci) else {
            return;
        };
        if c.timer_gen != gen || c.ended {
            return; // superseded, or the connection ended
        }
        c.timer_at = None;
        if let Some(tx) = c.tx.as_mut() {
            tx.handle_timeout(ctx.now);
        }
        self.drive(ci, ctx);
    }

    fn stats(&self, name: &str) -> Vec<serde_json::Value> {
        let s = &self.stats;
        vec![
            serde_json::json!({
                "name": name, "kind": "pep", "dir": "fwd",
                "tx_packets": s.tx_packets[0], "tx_bytes": s.tx_bytes[0],
                "drops_queue": s.overflow_drops, "drops_loss": 0,
                "pseudo_acks": s.pseudo_acks,
                "dup_pseudo_acks": s.dup_pseudo_acks,
                "zero_window_acks": s.zero_window_acks,
                "window_updates": s.window_updates,
                "local_retransmits": s.local_retransmits,
                "local_fast_retransmits": s.local_fast_retransmits,
                "local_timeouts": s.local_timeouts,
                "local_spurious_timeouts": s.local_spurious_timeouts,
                "data_segments_sent": s.data_segments_sent,
                "bytes_absorbed": s.bytes_absorbed,
                "acks_absorbed": s.acks_absorbed,
                "overflow_drops": s.overflow_drops,
                "rst_freed_bytes": s.rst_freed_bytes,
                "resets": s.resets,
                "connections": s.connections,
                "max_held_bytes": s.max_held,
                "held_bytes_end": self.held_total,
                "buffer_bytes": self.cfg.buffer_bytes,
                "held_series_t": self.series_t,
                "held_series_bytes": self.series_bytes,
                "acked_series_bytes": self.series_acked,
            }),
            serde_json::json!({
                "name": name, "kind": "pep", "dir": "rev",
                "tx_packets": s.tx_packets[1], "tx_bytes": s.tx_bytes[1],
                "drops_queue": 0, "drops_loss": 0,
            }),
        ]
    }

    fn tx_packets(&self) -> u64 {
        self.stats.passed[0]
            + self.stats.passed[1]
            + self.stats.pseudo_acks
            + self.stats.data_segments_sent
    }

    fn notes(&self) -> Vec<String> {
        // The relay's give-up (give_up.rs, `retries2` of this PEP): what it
        // had acknowledged to the sender is not delivered, and this is why.
        self.conns
            .iter()
            .filter_map(|c| {
                let g = c.tx.as_ref()?.gave_up()?;
                Some(format!(
                    "pep: flow {} conn {}: its connection toward the receiver gave up at {:.3} s after {} ({} = {} on the PEP); it held {} bytes already acknowledged to the sender",
                    c.flow,
                    c.conn,
                    g.at as f64 * 1e-9,
                    g.what.counted(g.retransmissions),
                    g.what.setting(),
                    g.limit,
                    c.held()
                ))
            })
            .collect()
    }

    fn violations(&self) -> Vec<String> {
        let mut v = self.violations.clone();
        for c in &self.conns {
            if c.ended && !c.fin_acked {
                continue; // reset: the receiver is unreachable or aborted
            }
            // Every pseudo-acknowledged byte is acknowledged by the receiver or held.
            if c.acked_to_sender > c.snd_una && c.acked_to_sender > c.rcv_nxt {
                v.push(format!(
                    "pep: flow {} conn {}: pseudo-acknowledged up to {} but holds only up to {}",
                    c.flow, c.conn, c.acked_to_sender, c.rcv_nxt
                ));
            }
            // ... and what it holds is either outstanding in the relay's
            // retransmission queue (contiguously from what the receiver
            // acknowledged) or not yet sent.
            if let (false, Some(tx)) = (c.ended, c.tx.as_ref()) {
                if let Err(e) = tx.check_invariants() {
                    v.push(format!("pep: flow {} conn {}: relay: {e}", c.flow, c.conn));
                }
                let mut at = c.snd_una;
                let mut gap = false;
                for s in tx.scoreboard().iter() {
                    if s.start != at {
                        gap = true;
                        v.push(format!(
                            "pep: flow {} conn {}: bytes {at}..{} acknowledged to the sender are in no retransmission queue",
                            c.flow, c.conn, s.start
                        ));
                        break;
                    }
                    at = s.end;
                }
                // The FIN follows the data in sequence space but not in the queue.
                let sent = match c.fin_off {
                    Some(f) if tx.snd_max() == f + 1 => f,
                    _ => tx.snd_max(),
                };
                if !gap && !tx.scoreboard().is_empty() && at != sent {
                    v.push(format!(
                        "pep: flow {} conn {}: retransmission queue ends at {at}, sent up to {sent}",
                        c.flow, c.conn
                    ));
                }
            }
            if c.fin_acked && c.snd_una <= c.acked_to_sender {
                v.push(format!(
                    "pep: flow {} conn {}: receiver acknowledged the FIN before all pseudo-acknowledged data",
                    c.flow, c.conn
                ));
            }
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Engine;

    const MSS: u32 = 1000;
    const ISS: u32 = 5000;
    const IRS: u32 = 9000;

    /// Drives a `Pep` directly and collects what it did with each input.
    #[derive(Default)]
    struct Harness {
        eng: Engine,
    }

    #[derive(Default, Debug)]
    struct Out {
        forwarded: Vec<Packet>,
        emitted: Vec<Packet>,
        dropped: usize,
        absorbed: u64,
    }

    impl Harness {
        fn ctx_call(&mut self, now: Time, f: impl FnOnce(&mut Ctx)) -> Out {
            let before = self.eng.absorbed;
            let mut ctx = Ctx {
                now,
                hop: 0,
                eng: &mut self.eng,
            };
            f(&mut ctx);
            let e = &mut self.eng;
            let out = Out {
                forwarded: e.immediate.drain(..).map(|i| e.slab.take(i)).collect(),
                emitted: e.emitted.drain(..).map(|(p, _)| p).collect(),
                dropped: e.drops.len(),
                absorbed: e.absorbed - before,
            };
            e.drops.clear();
            out
        }
        fn send(&mut self, pep: &mut Pep, p: Packet, now: Time) -> Out {
            self.ctx_call(now, |ctx| pep.on_packet(p, ctx))
        }
        fn fire(&mut self, pep: &mut Pep, now: Time) -> Out {
            let c = &pep.conns[0];
            let token = c.timer_gen as u64;
            self.ctx_call(now, |ctx| pep.on_timer(token, ctx))
        }
    }

    fn cfg(buffer: u64) -> PepConfig {
        PepConfig {
            name: "pep".into(),
            buffer_bytes: buffer,
            cc: "newreno".into(),
            initial_window_segments: 2,
            rto_initial_ns: 1_000 * NS_PER_MS,
            rto_min_ns: 1_000 * NS_PER_MS,
            rto_max_ns: 60_000 * NS_PER_MS,
            series_interval_ns: NS_PER_MS,
            spurious_detection: "none".into(),
            syn_retries: 7,
            synack_retries: 7,
            retries2: 15,
        }
    }

    fn pkt(dir: Dir, seq: u32, ack: u32, flags: Flags, len: u32) -> Packet {
        let (src_port, dst_port) = match dir {
            Dir::Fwd => (1000, 80),
            Dir::Rev => (80, 1000),
        };
        let seg = Segment {
            src_port,
            dst_port,
            seq,
            ack,
            flags,
            window: 65535,
            options: TcpOptions::default(),
            payload_len: len,
            ecn: 0,
        };
        Packet {
            uid: 0,
            flow: 0,
            conn: 0,
            dir,
            hop: 1,
            udp: false,
            size: seg.ip_len() as u32,
            sent_at: 0,
            seg,
            feedback: None,
        }
    }

    fn syn(dir: Dir, sack: bool) -> Packet {
        let (seq, ack, flags) = match dir {
            Dir::Fwd => (ISS, 0, Flags::SYN),
            Dir::Rev => (IRS, ISS + 1, Flags::SYN | Flags::ACK),
        };
        let mut p = pkt(dir, seq, ack, flags, 0);
        p.seg.options.mss = Some(MSS as u16);
        p.seg.options.sack_permitted = sack;
        p
    }

    /// Data segment k (0-based) of MSS bytes from the sender.
    fn data(k: u32) -> Packet {
        pkt(Dir::Fwd, ISS + 1 + k * MSS, IRS + 1, Flags::ACK, MSS)
    }

    /// An ACK from the receiver acknowledging `n` data bytes.
    fn rack(n: u32) -> Packet {
        pkt(Dir::Rev, IRS + 1, ISS + 1 + n, Flags::ACK, 0)
    }

    fn open(h: &mut Harness, pep: &mut Pep, sack: bool) {
        let o = h.send(pep, syn(Dir::Fwd, sack), 0);
        assert_eq!(o.forwarded.len(), 1);
        let o = h.send(pep, syn(Dir::Rev, sack), 1);
        assert_eq!(o.forwarded.len(), 1);
        assert!(o.emitted.is_empty());
    }

    #[test]
    fn no_spoofing_before_the_receiver_answered() {
        let mut pep = Pep::new(&cfg(100_000));
        let mut h = Harness::default();
        let o = h.send(&mut pep, syn(Dir::Fwd, false), 0);
        assert_eq!(o.forwarded.len(), 1, "the SYN passes");
        assert!(o.emitted.is_empty(), "the PEP never answers a SYN");
        // Data before the receiver's SYN-ACK passes unchanged, unacknowledged.
        let o = h.send(&mut pep, data(0), 1);
        assert_eq!(o.forwarded.len(), 1);
        assert_eq!(o.absorbed, 0);
        assert!(o.emitted.is_empty());
        assert_eq!(pep.stats.pseudo_acks, 0);
    }

    #[test]
    fn acknowledges_in_order_data_it_holds_and_dupacks_holes() {
        let mut pep = Pep::new(&cfg(100_000));
        let mut h = Harness::default();
        open(&mut h, &mut pep, true);
        let o = h.send(&mut pep, data(0), 10);
        assert_eq!(o.absorbed, 1);
        assert!(o.forwarded.is_empty());
        let acks: Vec<_> = o.emitted.iter().filter(|p| p.dir == Dir::Rev).collect();
        let sent: Vec<_> = o.emitted.iter().filter(|p| p.dir == Dir::Fwd).collect();
        assert_eq!(acks.len(), 1);
        assert_eq!(acks[0].seg.ack, ISS + 1 + MSS);
        assert_eq!(acks[0].seg.seq, IRS + 1);
        // 99 000 bytes free, capped at the unscaled field's 65535.
        assert_eq!(acks[0].seg.window, 65535);
        // The PEP sends the held segment toward the receiver with the sender's numbers.
        assert_eq!(sent.len(), 1);
        assert_eq!(sent[0].seg.seq, ISS + 1);
        assert_eq!(sent[0].seg.payload_len, MSS);
        // Segment 1 lost before the PEP: segment 2 is held, not acknowledged.
        let o = h.send(&mut pep, data(2), 20);
        let ack = o.emitted.iter().find(|p| p.dir == Dir::Rev).unwrap();
        assert_eq!(ack.seg.ack, ISS + 1 + MSS, "duplicate ACK");
        assert_eq!(ack.seg.options.sack_len, 1);
        assert_eq!(ack.seg.options.sack[0].left, ISS + 1 + 2 * MSS);
        assert_eq!(pep.conns[0].held(), 2 * MSS as u64);
        assert!(
            o.emitted.iter().all(|p| p.dir == Dir::Rev),
            "no hole is sent on"
        );
        // The retransmission fills the hole: one cumulative pseudo-ACK for all three.
        let o = h.send(&mut pep, data(1), 30);
        let ack = o.emitted.iter().find(|p| p.dir == Dir::Rev).unwrap();
        assert_eq!(ack.seg.ack, ISS + 1 + 3 * MSS);
        assert_eq!(ack.seg.options.sack_len, 0);
        assert_eq!(pep.stats.pseudo_acks, 3);
    }

    #[test]
    fn window_is_the_free_buffer_and_overflow_is_refused() {
        let mut pep = Pep::new(&cfg(3 * MSS as u64));
        let mut h = Harness::default();
        open(&mut h, &mut pep, false);
        let mut last = None;
        for k in 0..3 {
            let o = h.send(&mut pep, data(k), 10 + k as u64);
            last = o.emitted.into_iter().find(|p| p.dir == Dir::Rev);
        }
        assert_eq!(last.unwrap().seg.window, 0, "buffer full: zero window");
        assert_eq!(pep.stats.zero_window_acks, 1);
        let o = h.send(&mut pep, data(3), 20);
        assert_eq!(o.dropped, 1, "beyond the window");
        assert_eq!(pep.stats.overflow_drops, 1);
        // The receiver acknowledges two segments: the window reopens with an update.
        let o = h.send(&mut pep, rack(2 * MSS), 600);
        assert_eq!(o.absorbed, 1, "the receiver's ACK is consumed by the PEP");
        let upd = o.emitted.iter().find(|p| p.dir == Dir::Rev).unwrap();
        assert_eq!(upd.seg.window as u32, 2 * MSS);
        assert_eq!(pep.conns[0].held(), MSS as u64);
    }

    #[test]
    fn fin_is_acknowledged_end_to_end_only() {
        let mut pep = Pep::new(&cfg(100_000));
        let mut h = Harness::default();
        open(&mut h, &mut pep, false);
        h.send(&mut pep, data(0), 10);
        let mut last = data(1);
        last.seg.flags |= Flags::FIN;
        let o = h.send(&mut pep, last, 11);
        let ack = o.emitted.iter().find(|p| p.dir == Dir::Rev).unwrap();
        assert_eq!(ack.seg.ack, ISS + 1 + 2 * MSS, "data acknowledged, FIN not");
        let fin = o.emitted.iter().find(|p| p.dir == Dir::Fwd).unwrap();
        assert!(fin.seg.flags.fin(), "the PEP sends the FIN after the data");
        // The receiver acknowledges the data only: consumed.
        let o = h.send(&mut pep, rack(2 * MSS), 600);
        assert!(o.forwarded.is_empty());
        // The receiver acknowledges the FIN: this ACK reaches the sender.
        let o = h.send(&mut pep, rack(2 * MSS + 1), 601);
        assert_eq!(o.forwarded.len(), 1);
        assert_eq!(o.forwarded[0].seg.ack, ISS + 2 + 2 * MSS);
        assert!(pep.violations().is_empty());
    }

    #[test]
    fn rst_mid_transfer_passes_and_frees_the_buffer() {
        for dir in [Dir::Rev, Dir::Fwd] {
            let mut pep = Pep::new(&cfg(100_000));
            let mut h = Harness::default();
            open(&mut h, &mut pep, false);
            for k in 0..5 {
                h.send(&mut pep, data(k), 10 + k as u64);
            }
            assert_eq!(pep.held_bytes(), 5 * MSS as u64);
            let rst = match dir {
                Dir::Rev => pkt(Dir::Rev, IRS + 1, 0, Flags::RST, 0),
                Dir::Fwd => pkt(Dir::Fwd, ISS + 1 + 5 * MSS, 0, Flags::RST, 0),
            };
            let o = h.send(&mut pep, rst, 100);
            assert_eq!(o.forwarded.len(), 1, "RST passes ({dir:?})");
            assert_eq!(pep.held_bytes(), 0, "buffer freed ({dir:?})");
            assert_eq!(pep.stats.rst_freed_bytes, 5 * MSS as u64);
            // Nothing is retransmitted for a reset connection.
            let o = h.fire(&mut pep, 10_000 * NS_PER_MS);
            assert!(o.emitted.is_empty());
            // Later segments pass unspoofed.
            let o = h.send(&mut pep, data(6), 200);
            assert_eq!(o.forwarded.len(), 1);
            assert!(pep.violations().is_empty());
        }
    }

    #[test]
    fn retransmits_locally_on_timeout_and_on_three_dupacks() {
        let mut pep = Pep::new(&cfg(100_000));
        let mut h = Harness::default();
        open(&mut h, &mut pep, false);
        for k in 0..6 {
            h.send(&mut pep, data(k), 10 + k as u64);
        }
        // The PEP's own window (IW 2) let two segments out; both lost on the satellite.
        let o = h.fire(&mut pep, 1_000 * NS_PER_MS + 10);
        assert_eq!(pep.stats.local_timeouts, 1);
        let rtx: Vec<_> = o.emitted.iter().filter(|p| p.dir == Dir::Fwd).collect();
        assert_eq!(rtx.len(), 1, "loss window of one segment");
        assert_eq!(rtx[0].seg.seq, ISS + 1);
        // Recovery grows the window; then segment 3 is lost and 3 dupacks follow.
        h.send(&mut pep, rack(MSS), 2_000 * NS_PER_MS);
        h.send(&mut pep, rack(2 * MSS), 2_001 * NS_PER_MS);
        let t = 2_600 * NS_PER_MS;
        h.send(&mut pep, rack(3 * MSS), t);
        let mut fast = Vec::new();
        for i in 0..3 {
            let o = h.send(&mut pep, rack(3 * MSS), t + 1 + i);
            fast.extend(o.emitted.into_iter().filter(|p| p.dir == Dir::Fwd));
        }
        assert_eq!(pep.stats.local_fast_retransmits, 1);
        assert!(fast.iter().any(|p| p.seg.seq == ISS + 1 + 3 * MSS));
        // The sender never saw any of this: no pseudo-ACK beyond the 6 for its data.
        assert_eq!(pep.stats.pseudo_acks, 6);
    }

    #[test]
    fn the_relays_give_up_limit_is_the_peps_own() {
        // The receiver never answers the PEP's data: the relay retransmits
        // on timeouts (1 s, 2 s, 4 s, ...) until its `retries2` says stop
        // (give_up.rs: 2 → 1.4 s in Linux's model, reached at the second
        // timeout), and then sends nothing more.
        let run = |retries2: u32| {
            let mut pep = Pep::new(&PepConfig {
                retries2,
                ..cfg(100_000)
            });
            let mut h = Harness::default();
            open(&mut h, &mut pep, false);
            h.send(&mut pep, data(0), 10);
            for s in 1..=40 {
                h.fire(&mut pep, s * 1_000 * NS_PER_MS + 10);
            }
            pep
        };
        let gave_up = run(2);
        assert_eq!(gave_up.stats.local_timeouts, 1);
        // The run's notes say why the pseudo-acknowledged bytes never arrived.
        let notes = gave_up.notes();
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(
            notes[0].starts_with("pep: flow 0 conn 0: its connection toward the receiver gave up at ")
                && notes[0].contains("after 1 timeout retransmissions of unacknowledged data (retries2 = 2 on the PEP)")
                && notes[0].ends_with(&format!("it held {} bytes already acknowledged to the sender", MSS)),
            "{}",
            notes[0]
        );
        let kept_on = run(15);
        assert!(
            kept_on.stats.local_timeouts >= 4,
            "{}",
            kept_on.stats.local_timeouts
        );
        assert!(kept_on.notes().is_empty(), "{:?}", kept_on.notes());
        assert_eq!(
            check_config(&PepConfig {
                synack_retries: 0,
                ..cfg(100_000)
            }),
            Err("synack_retries: must be between 1 and 127 (got 0)".to_string())
        );
    }

    /// An ACK from the receiver acknowledging `n` data bytes, with SACK
    /// blocks given as (first, last+1) segment numbers.
    fn rack_sack(n: u32, blocks: &[(u32, u32)]) -> Packet {
        let mut p = rack(n);
        for (k, &(a, b)) in blocks.iter().enumerate() {
            p.seg.options.sack[k] = SackBlock {
                left: ISS + 1 + a * MSS,
                right: ISS + 1 + b * MSS,
            };
        }
        p.seg.options.sack_len = blocks.len() as u8;
        p
    }

    fn fwd_sent(o: &Out) -> Vec<u32> {
        o.emitted
            .iter()
            .filter(|p| p.dir == Dir::Fwd && p.seg.payload_len > 0)
            .map(|p| (p.seg.seq - ISS - 1) / MSS)
            .collect()
    }

    #[test]
    fn the_receivers_sack_blocks_drive_the_relays_recovery() {
        // One TCP: the PEP's sending side is tcplab-tcp's sender, so two
        // holes reported by SACK are both repaired within one round trip
        // (RFC 6675), where NewReno would need a round trip per hole.
        let mut c = cfg(100_000);
        c.initial_window_segments = 10;
        let mut pep = Pep::new(&c);
        let mut h = Harness::default();
        open(&mut h, &mut pep, true);
        let mut sent = Vec::new();
        for k in 0..6 {
            sent.extend(fwd_sent(&h.send(&mut pep, data(k), 10 + k as u64)));
        }
        assert_eq!(sent, vec![0, 1, 2, 3, 4, 5]);
        // Segments 0 and 2 are lost on the satellite hop.
        let t = 600 * NS_PER_MS;
        let acks = [
            rack_sack(0, &[(1, 2)]),
            rack_sack(0, &[(3, 4), (1, 2)]),
            rack_sack(0, &[(3, 5), (1, 2)]),
            rack_sack(0, &[(3, 6), (1, 2)]),
        ];
        let mut rtx = Vec::new();
        for (i, a) in acks.into_iter().enumerate() {
            rtx.extend(fwd_sent(&h.send(&mut pep, a, t + i as u64)));
        }
        // Both holes at once (the third copy of 2 is RFC 6675 §4 rule 4's
        // rescue retransmission: the highest un-SACKed segment); nothing SACKed.
        assert_eq!(rtx, vec![0, 2, 2], "{rtx:?}");
        assert_eq!(pep.stats.local_fast_retransmits, 1);
        assert_eq!(pep.stats.local_timeouts, 0);
        let o = h.send(&mut pep, rack(6 * MSS), t + 600 * NS_PER_MS);
        assert!(fwd_sent(&o).is_empty());
        assert_eq!(pep.held_bytes(), 0);
        assert!(pep.violations().is_empty(), "{:?}", pep.violations());
    }

    #[test]
    fn frto_toward_the_receiver_undoes_a_spurious_timeout() {
        // The satellite hop stalls past the PEP's RTO; the originals arrive.
        // With F-RTO (RFC 5682) the relay sends new data instead of going
        // back N, and declares the timeout spurious.
        let mut c = cfg(100_000);
        c.spurious_detection = "frto".into();
        let mut pep = Pep::new(&c);
        let mut h = Harness::default();
        open(&mut h, &mut pep, false);
        for k in 0..8 {
            h.send(&mut pep, data(k), 10 + k as u64);
        }
        let o = h.fire(&mut pep, 1_000 * NS_PER_MS + 10);
        assert_eq!(fwd_sent(&o), vec![0], "the timeout retransmits the first");
        let t = 1_200 * NS_PER_MS;
        // RFC 5682 §2.1 step 2b: the first ACK advances; two new segments.
        let o = h.send(&mut pep, rack(MSS), t);
        assert_eq!(fwd_sent(&o), vec![2, 3]);
        // Step 3b: the next ACK covers never-retransmitted data: spurious.
        h.send(&mut pep, rack(2 * MSS), t + 1);
        assert_eq!(pep.stats.local_spurious_timeouts, 1);
        assert_eq!(pep.stats.local_retransmits, 1, "segment 1 was never resent");
    }

    #[test]
    fn invariant_check_catches_acknowledged_data_gone_missing() {
        let mut pep = Pep::new(&cfg(100_000));
        let mut h = Harness::default();
        open(&mut h, &mut pep, false);
        for k in 0..2 {
            h.send(&mut pep, data(k), 10 + k as u64);
        }
        assert!(pep.violations().is_empty());
        // Simulate a bug: the PEP forgets the second segment it acknowledged.
        pep.conns[0].rcv_nxt = 1 + MSS as u64;
        let v = pep.violations();
        assert_eq!(v.len(), 1, "{v:?}");
        assert!(v[0].contains("pseudo-acknowledged up to"), "{v:?}");
    }
}
