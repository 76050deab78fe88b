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
//! **Sending side.** The PEP sends the held stream toward the receiver with
//! the sequence numbers the sender used (no rewriting), in segments of the
//! negotiated MSS, under its own congestion control (`cc::CongestionControl`,
//! configurable, initial window `initial_window_segments`) and the receiver's
//! advertised window. Loss recovery: NewReno fast retransmit / fast recovery
//! on three duplicate ACKs (RFC 6582 §3.2) and a retransmission timeout
//! (RFC 6298 over the PEP–receiver RTT, `rto::RttEstimator`, Karn's rule via
//! `scoreboard::Scoreboard`) whose lower bound `rto_min` the configuration
//! keeps above the satellite RTT (Yagiu 2001 §2.2.3: the router's RTO is
//! larger than the satellite RTT). After a timeout every outstanding
//! segment is marked lost and resent as the window allows (go-back-N under
//! slow start, RFC 5681 §3.1). The receiver's SACK blocks are not used
//! (the paper's receiver has none). Receiver ACKs that the PEP consumes are
//! absorbed: the sender already had its (pseudo-)ACK.
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
//! acknowledged by the receiver or still held — outstanding in the PEP's
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
//! Departures: no delayed pseudo-ACKs (one per data segment, as the paper's
//! router does); reverse-direction data passes unspoofed; the PEP's segments
//! carry the sender's latest timestamp option unchanged. The paper sizes the
//! router's RTO from its buffer, subject to RTO > satellite RTT; tcplab uses
//! RFC 6298 (RTO ≥ SRTT + 4·RTTVAR, so above the measured PEP–receiver RTT
//! once sampled) with a configured floor and initial value (default 1 s, above
//! a GEO RTT before any sample).

use std::collections::HashMap;

use crate::component::{Component, Ctx, DropKind};
use crate::config::PepConfig;
use crate::sim::{Dir, Packet};
use tcplab_tcp::cc::{new_cc, AckInfo, CcState, CongestionControl};
use tcplab_tcp::rto::RttEstimator;
use tcplab_tcp::scoreboard::Scoreboard;
use tcplab_tcp::seq::{to_wire, unwrap};
use tcplab_tcp::{CcKind, Flags, RtoProfile, SackBlock, Segment, TcpOptions, Time, NS_PER_MS};

/// RFC 5681 §3.2: fast retransmit after three duplicate ACKs.
const DUPTHRESH: u32 = 3;

/// Check a PEP configuration; the message names the field and the rule.
pub fn check_config(c: &PepConfig) -> Result<(), String> {
    if c.buffer_bytes < 536 {
        return Err(format!(
            "buffer: must be at least 536 bytes (one minimum MSS) (got {})",
            c.buffer_bytes
        ));
    }
    if !matches!(
        CcKind::parse(&c.cc),
        Some(CcKind::Reno | CcKind::NewReno | CcKind::Cubic)
    ) {
        return Err(format!(
            "cc: must be one of reno, newreno, cubic (got {:?})",
            c.cc
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
    Ok(())
}

/// What a SYN told us about one side.
#[derive(Clone, Copy, Debug, Default)]
struct SynInfo {
    isn: u32,
    mss: Option<u16>,
    wscale: Option<u8>,
    sack: bool,
    ts: bool,
}

struct PConn {
    flow: u32,
    conn: u32,
    fwd_syn: Option<SynInfo>,
    rev_syn: Option<SynInfo>,
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
    // --- sending side toward the receiver ---
    snd_una: u64,
    snd_nxt: u64,
    sb: Scoreboard,
    ccs: CcState,
    cc: Box<dyn CongestionControl>,
    rtt: RttEstimator,
    dupacks: u32,
    /// Send the first segment at once (fast retransmit, partial ACK, RTO).
    force_front: bool,
    in_recovery: bool,
    recover: u64,
    rwnd: u64,
    mss: u64,
    rcv_shift: u8,
    fin_acked: bool,
    timer_gen: u32,
    timer_at: Option<Time>,
    // --- header echo ---
    /// Latest ACK field / window / timestamps the sender put on its segments.
    fwd_ack: u32,
    fwd_window: u16,
    fwd_ts: Option<(u32, u32)>,
    /// TSval to echo in pseudo-ACKs (RFC 7323 §4.3 TS.Recent, simplified:
    /// the TSval of the latest in-order segment).
    ts_recent: u32,
    /// Latest TSval the receiver sent (our pseudo-ACKs reuse it: monotone).
    rev_tsval: u32,
    /// Highest offset ever pseudo-acknowledged.
    acked_to_sender: u64,
    /// Right edge of the window last advertised to the sender.
    adv_right: u64,
}

impl PConn {
    fn held(&self) -> u64 {
        let ooo: u64 = self.ooo.iter().map(|(a, b)| b - a).sum();
        self.rcv_nxt.saturating_sub(self.snd_una) + ooo
    }

    /// End of the stream the PEP may send: held in-order data, plus the FIN.
    fn send_end(&self) -> u64 {
        match self.fin_off {
            Some(f) if f == self.rcv_nxt => f + 1,
            _ => self.rcv_nxt,
        }
    }
}

#[derive(Default, Clone, Debug)]
struct PepStats {
    pseudo_acks: u64,
    dup_pseudo_acks: u64,
    local_retransmits: u64,
    local_fast_retransmits: u64,
    local_timeouts: u64,
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
        let kind = CcKind::parse(&self.cfg.cc).expect("validated");
        let profile = RtoProfile {
            initial: self.cfg.rto_initial_ns,
            min: self.cfg.rto_min_ns,
            max: self.cfg.rto_max_ns,
            granularity: NS_PER_MS,
            max_backoff: 16,
        };
        let (sport, dport) = match p.dir {
            Dir::Fwd => (p.seg.src_port, p.seg.dst_port),
            Dir::Rev => (p.seg.dst_port, p.seg.src_port),
        };
        self.conns.push(PConn {
            flow: p.flow,
            conn: p.conn,
            fwd_syn: None,
            rev_syn: None,
            sport,
            dport,
            active: false,
            ended: false,
            iss: 0,
            rcv_nxt: 1,
            ooo: Vec::new(),
            fin_off: None,
            snd_una: 1,
            snd_nxt: 1,
            sb: Scoreboard::with_capacity(64),
            ccs: CcState {
                cwnd: 0,
                ssthresh: u64::MAX / 4,
                mss: 536,
                max_cwnd: u64::MAX / 4,
                ca_at_ssthresh: false,
            },
            cc: new_cc(kind),
            rtt: RttEstimator::new(profile),
            dupacks: 0,
            force_front: false,
            in_recovery: false,
            recover: 1,
            rwnd: 0,
            mss: 536,
            rcv_shift: 0,
            fin_acked: false,
            timer_gen: 0,
            timer_at: None,
            fwd_ack: 0,
            fwd_window: 0,
            fwd_ts: None,
            ts_recent: 0,
            rev_tsval: 0,
            acked_to_sender: 1,
            adv_right: 1,
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

    fn on_syn(&mut self, ci: usize, p: &Packet) {
        let o = &p.seg.options;
        let info = SynInfo {
            isn: p.seg.seq,
            mss: o.mss,
            wscale: o.wscale,
            sack: o.sack_permitted,
            ts: o.timestamps.is_some(),
        };
        let c = &mut self.conns[ci];
        match p.dir {
            Dir::Fwd => c.fwd_syn = Some(info),
            Dir::Rev => {
                c.rev_syn = Some(info);
                c.rwnd = p.seg.window as u64;
            }
        }
        if let Some(ts) = o.timestamps {
            match p.dir {
                Dir::Fwd => c.ts_recent = ts.0,
                Dir::Rev => c.rev_tsval = ts.0,
            }
        }
        if c.active {
            return; // a retransmitted SYN or SYN-ACK changes nothing
        }
        if let (Some(f), Some(r)) = (c.fwd_syn, c.rev_syn) {
            // Both sides answered: spoofing may start (set-up stays end to end).
            c.active = true;
            c.iss = f.isn;
            let mss = f.mss.unwrap_or(536).min(r.mss.unwrap_or(536)) as u64;
            c.mss = mss;
            c.ccs.mss = mss;
            c.ccs.cwnd = self.cfg.initial_window_segments as u64 * mss;
            // RFC 7323 §2.2: scaling applies only if both SYNs carried the option.
            if let (Some(_), Some(shift)) = (f.wscale, r.wscale) {
                c.rcv_shift = shift;
            }
            c.fwd_ack = r.isn.wrapping_add(1);
        }
    }

    /// A pseudo-ACK from the PEP to the sender.
    fn pseudo_ack(&mut self, ci: usize, ctx: &mut Ctx, dup: bool) {
        let buffer = self.cfg.buffer_bytes;
        let c = &mut self.conns[ci];
        let (f, r) = (c.fwd_syn.unwrap(), c.rev_syn.unwrap());
        let right = c.snd_una + buffer;
        let wnd = right.saturating_sub(c.rcv_nxt);
        let field = (wnd >> c.rcv_shift).min(65535) as u16;
        let mut options = TcpOptions::default();
        if f.ts && r.ts {
            options.timestamps = Some((c.rev_tsval, c.ts_recent));
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
        };
        c.acked_to_sender = c.acked_to_sender.max(c.rcv_nxt);
        c.adv_right = c.rcv_nxt + ((field as u64) << c.rcv_shift);
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
        let usable = c.adv_right.saturating_sub(c.rcv_nxt);
        let right = c.snd_una + buffer;
        let cap = c.rcv_nxt + (65535u64 << c.rcv_shift);
        let grow = right.min(cap).saturating_sub(c.adv_right);
        if usable < c.mss && grow >= (buffer / 2).min(c.mss) {
            self.stats.window_updates += 1;
            self.pseudo_ack(ci, ctx, false);
        }
    }

    /// Forward data segment while spoofing is active.
    fn on_fwd_data(&mut self, ci: usize, p: Packet, ctx: &mut Ctx) {
        let buffer = self.cfg.buffer_bytes;
        let c = &mut self.conns[ci];
        if p.seg.flags.ack() {
            c.fwd_ack = p.seg.ack;
            c.fwd_window = p.seg.window;
        }
        if let Some(ts) = p.seg.options.timestamps {
            c.fwd_ts = Some(ts);
        }
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
        if fin_in && c.fin_off.is_none() && e == c.rcv_nxt {
            c.fin_off = Some(e);
        }
        let advanced = c.rcv_nxt > before;
        self.stats.bytes_absorbed += new_bytes;
        ctx.absorb();
        if p.seg.payload_len > 0 {
            // One pseudo-ACK per data segment (Yagiu 2001 §2.2).
            self.pseudo_ack(ci, ctx, !advanced);
        }
        self.record_held(ctx.now);
        self.try_send(ci, ctx);
    }

    /// An ACK from the receiver (consumed by the PEP's sending side).
    fn on_rev_ack(&mut self, ci: usize, seg: &Segment, now: Time) -> bool {
        let c = &mut self.conns[ci];
        if let Some(ts) = seg.options.timestamps {
            c.rev_tsval = ts.0;
        }
        c.rwnd = (seg.window as u64) << c.rcv_shift;
        let a = unwrap(c.iss, seg.ack, c.snd_una);
        let top = c.snd_nxt;
        if a > c.snd_una && a <= top {
            let flight = c.sb.outstanding();
            let sum = c.sb.ack_to(a);
            let acked = a - c.snd_una;
            c.snd_una = a;
            let mut rtt = None;
            if let Some(t) = sum.rtt_sent_at {
                if !sum.any_retransmitted {
                    // Karn's rule (RFC 6298 §3) via the scoreboard.
                    let r = now.saturating_sub(t);
                    c.rtt.on_sample(r);
                    c.cc.on_rtt_sample(r, now);
                    rtt = Some(r);
                }
            }
            if c.in_recovery {
                if a >= c.recover {
                    // RFC 6582 §3.2 step 3: full acknowledgment.
                    c.in_recovery = false;
                    c.cc.on_recovery_exit(&mut c.ccs, now);
                } else {
                    // RFC 6582 §3.2 step 3 partial ACK: retransmit the first
                    // unacknowledged segment, deflate by the amount acked, add back one MSS.
                    c.ccs.cwnd = c.ccs.cwnd.saturating_sub(acked) + c.mss;
                    if !c.sb.is_empty() {
                        c.sb.mark_seg_lost(0);
                        c.force_front = true;
                    }
                }
            } else {
                let info = AckInfo {
                    now,
                    acked,
                    rtt,
                    min_rtt: c.rtt.has_sample().then(|| c.rtt.min_rtt()),
                    srtt: c.rtt.srtt(),
                    flight,
                    app_limited: false,
                    snd_una: c.snd_una,
                    snd_nxt: c.snd_nxt,
                };
                c.cc.on_ack(&mut c.ccs, &info);
            }
            c.dupacks = 0;
            if let Some(f) = c.fin_off {
                if a > f {
                    c.fin_acked = true;
                }
            }
            // RFC 6298 §5.3: restart the timer on new data acknowledged.
            c.timer_at = None;
            return true;
        }
        if a == c.snd_una && seg.payload_len == 0 && !seg.flags.fin() && !c.sb.is_empty() {
            c.dupacks += 1;
            if c.in_recovery {
                // RFC 6582 §3.2 step 4: inflate.
                c.ccs.cwnd += c.mss;
            } else if c.dupacks == DUPTHRESH && a > c.recover.saturating_sub(1) {
                // RFC 6582 §3.2 steps 1–2.
                let flight = c.sb.outstanding();
                c.ccs.ssthresh = c.cc.ssthresh_on_loss(&c.ccs, flight, now);
                c.ccs.cwnd = c.ccs.ssthresh + DUPTHRESH as u64 * c.mss;
                c.in_recovery = true;
                c.recover = c.snd_nxt;
                c.sb.mark_seg_lost(0);
                c.force_front = true;
                self.stats.local_fast_retransmits += 1;
            }
        }
        false
    }

    /// Send lost segments, then new held data, as the windows allow.
    fn try_send(&mut self, ci: usize, ctx: &mut Ctx) {
        loop {
            let c = &mut self.conns[ci];
            if !c.active || c.ended {
                return;
            }
            let cwnd = c.ccs.cwnd.max(c.mss);
            let pipe = c.sb.pipe();
            // Retransmissions first (RFC 6675 §5 NextSeg rule 1 analogue).
            if let Some(i) = c.sb.next_lost() {
                let seg = *c.sb.get(i).unwrap();
                // The first unacknowledged segment, once deemed lost, goes at
                // once (RFC 5681 §3.2 step 2, RFC 6582 §3.2 step 3); later
                // ones as the window allows.
                let force = i == 0 && c.force_front;
                if !force && pipe + seg.len() > cwnd {
                    break;
                }
                c.force_front = false;
                c.sb.on_retransmit(i, ctx.now);
                self.stats.local_retransmits += 1;
                self.send_seg(ci, seg.start, seg.end, ctx);
                continue;
            }
            let end = c.send_end();
            if c.snd_nxt >= end {
                break;
            }
            let mut hi = (c.snd_nxt + c.mss).min(c.rcv_nxt);
            if hi == c.rcv_nxt && end == c.rcv_nxt + 1 {
                hi = end; // FIN rides on the last segment
            }
            let len = hi - c.snd_nxt;
            if pipe + len.min(c.mss) > cwnd {
                break;
            }
            // Receiver window (RFC 9293 §3.8.6.2.1: send up to SND.UNA + SND.WND).
            let data_hi = hi.min(c.rcv_nxt);
            if data_hi > c.snd_una + c.rwnd && data_hi > c.snd_nxt {
                break;
            }
            let lo = c.snd_nxt;
            c.sb.push(lo, hi, ctx.now);
            c.snd_nxt = hi;
            self.send_seg(ci, lo, hi, ctx);
        }
        self.arm_timer(ci, ctx);
    }

    fn send_seg(&mut self, ci: usize, lo: u64, hi: u64, ctx: &mut Ctx) {
        let c = &self.conns[ci];
        let fin = c.fin_off.is_some_and(|f| hi == f + 1);
        let data_hi = if fin { hi - 1 } else { hi };
        let mut options = TcpOptions::default();
        let (f, r) = (c.fwd_syn.unwrap(), c.rev_syn.unwrap());
        if f.ts && r.ts {
            options.timestamps = c.fwd_ts.or(Some((c.ts_recent, c.rev_tsval)));
        }
        let mut flags = Flags::ACK;
        if fin {
            flags |= Flags::FIN;
        }
        let seg = Segment {
            src_port: c.sport,
            dst_port: c.dport,
            seq: to_wire(c.iss, lo),
            ack: c.fwd_ack,
            flags,
            window: c.fwd_window,
            options,
            payload_len: (data_hi - lo) as u32,
        };
        let p = Packet {
            uid: ctx.new_uid(),
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
        self.stats.data_segments_sent += 1;
        self.count_tx(&p);
        ctx.emit(p, ctx.now);
    }

    /// RFC 6298 §5.1–5.3: keep one timer running while data is outstanding.
    fn arm_timer(&mut self, ci: usize, ctx: &mut Ctx) {
        let c = &mut self.conns[ci];
        if c.sb.is_empty() || c.ended {
            c.timer_at = None;
            return;
        }
        if c.timer_at.is_some() {
            return;
        }
        let at = ctx.now.saturating_add(c.rtt.rto());
        c.timer_at = Some(at);
        c.timer_gen = c.timer_gen.wrapping_add(1);
        ctx.timer(at, ((ci as u64) << 32) | c.timer_gen as u64);
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
        c.sb = Scoreboard::default();
        c.timer_at = None;
        self.record_held(now);
    }

    /// Bytes this PEP holds for all connections now.
    pub fn held_bytes(&self) -> u64 {
        self.held_total
    }
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
            self.on_syn(ci, &p);
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
                    // The sender's pure ACKs (handshake, ACK of the receiver's FIN).
                    self.pass(p, ctx);
                }
            }
            Dir::Rev if c.rcv_nxt == 1 && c.fin_off.is_none() => {
                // Nothing held yet: the receiver's segments (the ACK that
                // completes a handshake the receiver opened, window updates)
                // pass unchanged — set-up stays end to end.
                let c = &mut self.conns[ci];
                c.rwnd = (p.seg.window as u64) << c.rcv_shift;
                if let Some(ts) = p.seg.options.timestamps {
                    c.rev_tsval = ts.0;
                }
                self.pass(p, ctx);
            }
            Dir::Rev => {
                let advanced = self.on_rev_ack(ci, &p.seg, ctx.now);
                let c = &self.conns[ci];
                let covers_fin = c.fin_acked;
                if advanced {
                    self.record_held(ctx.now);
                    self.maybe_window_update(ci, ctx);
                }
                if covers_fin || p.seg.payload_len > 0 || flags.fin() {
                    // End-to-end tear-down: the receiver's ACK of the FIN (and
                    // its own FIN or data) reaches the sender unchanged.
                    if covers_fin && !self.conns[ci].ended {
                        self.conns[ci].ended = true;
                        self.conns[ci].timer_at = None;
                    }
                    self.pass(p, ctx);
                } else {
                    self.stats.acks_absorbed += 1;
                    ctx.absorb();
                }
                self.try_send(ci, ctx);
            }
        }
    }

    fn on_timer(&mut self, token: u64, ctx: &mut Ctx) {
        let ci = (token >> 32) as usize;
        let gen = token as u32;
        let Some(c) = self.conns.get_mut(ci) else {
            return;
        };
        if c.timer_gen != gen {
            return;
        }
        let Some(at) = c.timer_at else {
            return;
        };
        if at > ctx.now {
            return;
        }
        c.timer_at = None;
        if c.ended || c.sb.is_empty() {
            return;
        }
        // RFC 6298 §5.4–5.6 and RFC 5681 §3.1 (loss window of one segment).
        let first = c.rtt.backoff() == 0;
        let flight = c.sb.outstanding();
        c.cc.on_rto(&mut c.ccs, flight, first, ctx.now);
        c.ccs.cwnd = c.mss;
        c.rtt.back_off();
        c.sb.mark_all_lost();
        c.force_front = true;
        c.in_recovery = false;
        c.dupacks = 0;
        c.recover = c.snd_nxt;
        self.stats.local_timeouts += 1;
        self.try_send(ci, ctx);
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
                "window_updates": s.window_updates,
                "local_retransmits": s.local_retransmits,
                "local_fast_retransmits": s.local_fast_retransmits,
                "local_timeouts": s.local_timeouts,
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
            // ... and what it holds is either outstanding in its scoreboard
            // (contiguously from what the receiver acknowledged) or not yet sent.
            if !c.ended && c.active {
                let mut at = c.snd_una;
                let mut gap = false;
                for s in c.sb.iter() {
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
                if !gap && at != c.snd_nxt.max(c.snd_una) && !c.sb.is_empty() {
                    v.push(format!(
                        "pep: flow {} conn {}: retransmission queue ends at {at}, sent up to {}",
                        c.flow, c.conn, c.snd_nxt
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
    use crate::component::Engine;

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
    fn invariant_check_catches_acknowledged_data_gone_missing() {
        let mut pep = Pep::new(&cfg(100_000));
        let mut h = Harness::default();
        open(&mut h, &mut pep, false);
        for k in 0..2 {
            h.send(&mut pep, data(k), 10 + k as u64);
        }
        assert!(pep.violations().is_empty());
        // Simulate a bug: the first segment leaves the retransmission queue
        // although the receiver never acknowledged it.
        pep.conns[0].sb.ack_to(1 + MSS as u64);
        let v = pep.violations();
        assert_eq!(v.len(), 1, "{v:?}");
        assert!(v[0].contains("in no retransmission queue"));
    }
}
