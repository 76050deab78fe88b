//! Real-time emulation: the simulator's path components moving real IP
//! packets between two network interfaces (`tcplab emu`).
//!
//! `Emu` is a second driver for the engine of `engine.rs` (ns-3's
//! `RealtimeSimulatorImpl` is the analogue): the same `Component`s, built by
//! the same `sim::build_hop`, see the same `Packet`s and timers through the
//! same `Ctx`; only the endpoints differ. Packets come from outside (a TUN
//! device per side, `emu_sys.rs`) with their real bytes, which wait in a pool
//! while their `Packet` (parsed header, IP length) crosses the components,
//! and leave through the other side's device when they pass the last hop.
//! The clock is the caller's: every event runs when the caller's clock has
//! reached its time, and the gap between the two is the release lateness.
//!
//! Direction: the path's first hop faces the server. A packet from the server
//! side travels `Dir::Fwd` (the scenario's `down`, data of a download) from
//! hop 0 to the last hop; a packet from the client side travels `Dir::Rev`
//! from the last hop to hop 0.
//!
//! Ground truth: per TCP connection and direction the emulator records which
//! data bytes entered the path and which reached the far side. A data segment
//! that starts below the highest sequence number already sent is a
//! retransmission; it is spurious when the original copy was (or, still in
//! flight, will be) delivered: decided as the simulator decides a fast
//! retransmit's truth (`sim.rs`, `on_arrive`): by the first copy of its first
//! byte to reach the receiver: spurious if that copy entered before the
//! retransmission, genuine otherwise; undecided at the end (the original was
//! lost and the retransmission never arrived) counts as genuine.

use std::collections::HashMap;

use serde::Deserialize;
use tcplab_tcp::seq::unwrap;
use tcplab_tcp::wire::{decode_tcp_header, encode_tcp_header, internet_checksum, tcp_checksum};
use tcplab_tcp::{Segment, Time};

use crate::component::{Component, Ctx, Taps};
use crate::config::{HopConfig, SimConfig};
use crate::coverage::Coverage;
use crate::endpoint::{ConnKey, Endpoint, EndpointOptions, Truth};
use crate::engine::{Dir, Engine, Ev, Packet, Side};
use crate::sim::build_hop;
use crate::validate::validate;

/// Run options besides the scenario (JSON from Python).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EmuOptions {
    /// Largest IP packet the devices carry (their MTU).
    #[serde(default = "default_mtu")]
    pub mtu: usize,
    /// Wall-clock (CLOCK_REALTIME) ns at emulator time 0, for pcap stamps.
    #[serde(default)]
    pub epoch_ns: u64,
    /// Test hook: panic when this many packets have entered (checks that
    /// the caller cleans up after a crashing emulator).
    #[serde(default)]
    pub panic_after_packets: Option<u64>,
    /// The timer is armed this long before a deadline and the loop waits
    /// the rest on the clock (the thread's wake-up latency, which would
    /// otherwise be release lateness). 0: timer only.
    #[serde(default = "default_timer_lead")]
    pub timer_lead_ns: u64,
    /// Largest share of one CPU the loop may spend waiting on the clock,
    /// per 10 ms window; past it the thread sleeps until each deadline for
    /// the rest of the window (`emu_sys.rs`).
    #[serde(default = "default_spin_share")]
    pub spin_share: f64,
    /// SCHED_FIFO priority of the emulator thread (0: an ordinary thread:
    /// no SCHED_FIFO, no CPU pinning, no idle-state request, no locked
    /// memory; `tcplab emu --no-realtime`).
    #[serde(default = "default_rt_priority")]
    pub rt_priority: i32,
    /// Pin the SCHED_FIFO thread to the CPU it starts on (`tcplab emu
    /// --pin-cpu`). Off by default: measured on this 2-core VM (kernel
    /// without preemption), pinning lowered p99 under load but on an idle
    /// machine raised the maximum from 1.4–2.6 ms to 21–34 ms, because a
    /// pinned thread cannot move away from a CPU a task holds in the kernel
    /// (docs/emu.md, Timing).
    #[serde(default)]
    pub pin_cpu: bool,
    /// tcplab's own TCP terminates the connections at one end of the path
    /// (`endpoint.rs`; `tcplab emu --endpoint`).
    #[serde(default)]
    pub endpoint: Option<EndpointOptions>,
}

fn default_mtu() -> usize {
    1500
}
fn default_timer_lead() -> u64 {
    100_000
}
fn default_spin_share() -> f64 {
    0.5
}
fn default_rt_priority() -> i32 {
    10
}

/// Where packets leave the path. `dir` is the direction the packet
/// travelled: `Fwd` packets go to the client side, `Rev` to the server side.
pub trait Wire {
    /// Write one IP packet; false if the device refused it.
    fn send(&mut self, dir: Dir, bytes: &[u8]) -> bool;
    /// The current time on the emulator's clock (ns since its start).
    fn clock(&mut self) -> Time;
}

/// Kinds that cannot run in real time yet, with the reason.
pub fn refuse(cfg: &SimConfig) -> Result<(), String> {
    for (i, h) in cfg.hops.iter().enumerate() {
        let why = match h {
            HopConfig::Wlan(_) => "a multi-station WLAN cell cannot run in real time yet",
            HopConfig::Host(_) => "an end-host model cannot run in real time (the hosts are real)",
            _ => continue,
        };
        return Err(format!("path[{i}].kind: {why} (tcplab emu)"));
    }
    for (fi, f) in cfg.flows.iter().enumerate() {
        if f.path != (0..cfg.hops.len()).collect::<Vec<_>>() {
            return Err(format!(
                "flows[{fi}].path: tcplab emu needs one chain of hops in order (no dumbbell)"
            ));
        }
    }
    Ok(())
}

/// Release lateness histogram: 1 µs buckets up to 100 ms, exact max; and
/// each release later than `LATE_LOG_NS` one by one, so a run's outcome can
/// be laid beside the moments its path was not on time.
struct Lateness {
    buckets: Vec<u64>,
    over: u64,
    n: u64,
    sum_ns: u128,
    max_ns: u64,
    /// `(previous release's due time, scheduled release, lateness,
    /// direction)`, ns; preallocated, never grown on the release path. The
    /// direction released nothing from the first to the second plus the third:
    /// the silence a simulation replays (`stalls`).
    log: Vec<(Time, Time, Time, u8)>,
    /// Late releases not logged because `log` was full.
    log_full: u64,
    /// Due time of the latest release per direction.
    last_due: [Time; 2],
}

const LATE_BUCKETS: usize = 100_000;
/// Releases later than this are logged individually (`late_releases`):
/// a quarter of the 1 ms the emulator aims for, well above its p99.
const LATE_LOG_NS: Time = 250_000;
const LATE_LOG_CAP: usize = 8192;

impl Lateness {
    fn new() -> Lateness {
        Lateness {
            buckets: vec![0; LATE_BUCKETS],
            over: 0,
            n: 0,
            sum_ns: 0,
            max_ns: 0,
            log: Vec::with_capacity(LATE_LOG_CAP),
            log_full: 0,
            last_due: [0; 2],
        }
    }

    /// Log one release: `at` is when it was due, `ns` how late it went.
    #[inline]
    fn log(&mut self, at: Time, ns: Time, dir: Dir) {
        let prev = std::mem::replace(&mut self.last_due[dir as usize], at);
        if ns <= LATE_LOG_NS {
            return;
        }
        if self.log.len() < LATE_LOG_CAP {
            self.log.push((prev, at, ns, dir as u8));
        } else {
            self.log_full += 1;
        }
    }

    #[inline]
    fn add(&mut self, ns: u64) {
        let b = (ns / 1000) as usize;
        if b < LATE_BUCKETS {
            self.buckets[b] += 1;
        } else {
            self.over += 1;
        }
        self.n += 1;
        self.sum_ns += ns as u128;
        self.max_ns = self.max_ns.max(ns);
    }

    /// Quantile `q` in µs: the upper edge of the bucket holding it (never
    /// above the maximum).
    fn quantile_us(&self, q: f64) -> f64 {
        if self.n == 0 {
            return 0.0;
        }
        let rank = ((q * self.n as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (b, &c) in self.buckets.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return ((b + 1) as f64).min(self.max_ns as f64 / 1000.0);
            }
        }
        self.max_ns as f64 / 1000.0
    }

    fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "packets": self.n,
            "mean": if self.n > 0 { self.sum_ns as f64 / self.n as f64 / 1000.0 } else { 0.0 },
            "p50": self.quantile_us(0.5),
            "p99": self.quantile_us(0.99),
            "p999": self.quantile_us(0.999),
            "max": self.max_ns as f64 / 1000.0,
            "over_1ms": self.buckets[1000..].iter().sum::<u64>() + self.over,
        })
    }

    fn log_json(&self) -> serde_json::Value {
        let dirs = ["fwd", "rev"];
        serde_json::json!({
            "threshold_us": LATE_LOG_NS as f64 / 1000.0,
            "prev_due_ns": self.log.iter().map(|r| r.0).collect::<Vec<_>>(),
            "due_ns": self.log.iter().map(|r| r.1).collect::<Vec<_>>(),
            "late_ns": self.log.iter().map(|r| r.2).collect::<Vec<_>>(),
            "dir": self.log.iter().map(|r| dirs[r.3 as usize]).collect::<Vec<_>>(),
            "not_logged": self.log_full,
        })
    }
}

/// Packet bytes waiting while their `Packet` crosses the path: fixed-size
/// slots in one buffer; a packet's uid names its slot in the low 24 bits.
struct Pool {
    stride: usize,
    bytes: Vec<u8>,
    lens: Vec<u32>,
    free: Vec<u32>,
}

const SLOT_BITS: u32 = 24;
/// Bin of the released-bytes series (`emulator.out_bytes_series`).
const SERIES_BIN_NS: Time = 100_000_000;

impl Pool {
    fn new(stride: usize) -> Pool {
        let n = 4096;
        Pool {
            stride,
            bytes: vec![0; stride * n],
            lens: vec![0; n],
            free: (0..n as u32).rev().collect(),
        }
    }

    fn put(&mut self, b: &[u8]) -> Option<u32> {
        if b.len() > self.stride {
            return None;
        }
        let slot = match self.free.pop() {
            Some(s) => s,
            None => {
                // Grow (rare: only when more packets wait than ever before).
                let n = self.lens.len();
                if n * 2 > 1 << SLOT_BITS {
                    return None;
                }
                self.bytes.resize(self.stride * n * 2, 0);
                self.lens.resize(n * 2, 0);
                self.free.extend((n as u32 + 1..2 * n as u32).rev());
                n as u32
            }
        };
        let at = slot as usize * self.stride;
        self.bytes[at..at + b.len()].copy_from_slice(b);
        self.lens[slot as usize] = b.len() as u32;
        Some(slot)
    }

    #[inline]
    fn get(&self, uid: u64) -> &[u8] {
        let slot = (uid & ((1 << SLOT_BITS) - 1)) as usize;
        let at = slot * self.stride;
        &self.bytes[at..at + self.lens[slot] as usize]
    }

    #[inline]
    fn get_mut(&mut self, uid: u64) -> &mut [u8] {
        let slot = (uid & ((1 << SLOT_BITS) - 1)) as usize;
        let at = slot * self.stride;
        &mut self.bytes[at..at + self.lens[slot] as usize]
    }

    #[inline]
    fn release(&mut self, uid: u64) {
        self.free.push((uid & ((1 << SLOT_BITS) - 1)) as u32);
    }

    fn in_use(&self) -> usize {
        self.lens.len() - self.free.len()
    }
}

/// A retransmission waiting for the first copy of its first byte to arrive.
struct Pending {
    off: u64,
    /// Entry number (uid >> SLOT_BITS) of the retransmission.
    entry: u64,
    row: usize,
    /// Made by a hop in the path (a PEP), not by the end host.
    by_hop: bool,
}

/// One direction of one TCP connection, as the emulator saw it.
#[derive(Default)]
struct DirTruth {
    isn: Option<u32>,
    /// Highest stream offset sent + 1 (offset 0 is the SYN).
    max_end: u64,
    delivered: Coverage,
    pending: Vec<Pending>,
    data_segments: u64,
    data_bytes: u64,
    retransmissions: u64,
    retransmitted_bytes: u64,
    spurious: u64,
    delivered_bytes: u64,
    /// A hop that sends the stream on itself (a PEP, which acknowledges the
    /// end host's segments and delivers them with its own TCP): the highest
    /// offset it has sent + 1, and its retransmissions, judged by the same
    /// rule as the end host's.
    hop_max_end: u64,
    hop_retransmissions: u64,
    hop_retransmitted_bytes: u64,
    hop_spurious: u64,
}

impl DirTruth {
    /// Stream offset of a segment's first sequence number (learning the ISN
    /// from the SYN, or from the first segment seen).
    fn offset(&mut self, seg: &Segment) -> u64 {
        let isn = *self.isn.get_or_insert(if seg.flags.syn() {
            seg.seq
        } else {
            seg.seq.wrapping_sub(1)
        });
        if self.max_end == 0 {
            self.max_end = 1;
        }
        unwrap(isn, seg.seq, self.max_end)
    }
}

struct Conn {
    /// Server address and port, client address and port.
    key: ([u8; 4], u16, [u8; 4], u16),
    first_seen_ns: Time,
    dirs: [DirTruth; 2],
}

/// One retransmission the emulator forwarded.
struct RtxRow {
    t_ns: Time,
    conn: u32,
    dir: Dir,
    offset: u64,
    len: u32,
    spurious: bool,
    /// The hop that made it (a PEP); None: the end host.
    hop: Option<usize>,
}

/// The emulator's ground truth as the endpoint asks for it (`endpoint::Truth`):
/// did data offset `off` of connection `key`, in the endpoint's sending
/// direction `dir`, reach the peer?
fn delivered_truth<'a>(
    conns: &'a [Conn],
    conn_ids: &'a HashMap<ConnKey, u32>,
    dir: Dir,
) -> impl Fn(ConnKey, u64) -> bool + 'a {
    let d = dir as usize;
    move |key, off| {
        conn_ids
            .get(&key)
            .is_some_and(|&c| conns[c as usize].dirs[d].delivered.contains(off))
    }
}

/// The real-time driver (see the module doc).
pub struct Emu {
    cfg: SimConfig,
    eng: Engine,
    hops: Vec<Box<dyn Component>>,
    pool: Pool,
    now: Time,
    entries: u64,
    conns: Vec<Conn>,
    conn_ids: HashMap<([u8; 4], u16, [u8; 4], u16), u32>,
    rtx: Vec<RtxRow>,
    late: Lateness,
    pcap_epoch_ns: u64,
    panic_after: Option<u64>,
    /// Per direction (fwd = from the server side): packets and bytes in/out.
    packets_in: [u64; 2],
    bytes_in: [u64; 2],
    packets_out: [u64; 2],
    bytes_out: [u64; 2],
    dropped: [u64; 2],
    /// Real times of the first and last packet out, per direction.
    first_out_ns: [Time; 2],
    last_out_ns: [Time; 2],
    /// IP bytes released per `SERIES_BIN_NS` of real time, per direction.
    out_series: [Vec<u64>; 2],
    /// Largest IP packet released, per direction.
    max_packet: [u32; 2],
    not_ipv4: u64,
    oversize: u64,
    write_errors: u64,
    max_pool: usize,
    violations: Vec<String>,
    /// Hops that read payloads (`Component::wants_bytes`: the PEP).
    wants_bytes: Vec<bool>,
    /// Packets hops created (a PEP's pseudo-ACKs and segments), per direction.
    created: [u64; 2],
    /// Scratch for building a created packet's bytes.
    scratch: Vec<u8>,
    /// tcplab's TCP host at one end of the path, if asked for.
    endpoint: Option<Endpoint>,
    /// Packets the endpoint sent and received.
    endpoint_packets: [u64; 2],
    /// The endpoint's segments being sent (kept for its capacity).
    endpoint_tx: Vec<(Option<u32>, [u8; 4], Segment)>,
}

/// IPv4 header fields the emulator needs.
struct Ip {
    total: usize,
    ihl: usize,
    proto: u8,
    src: [u8; 4],
    dst: [u8; 4],
}

/// Start a packet in `b`: room for an IPv4 header, then `seg`'s TCP
/// header; returns the TCP header's length (the payload goes after it).
pub(crate) fn tcp_header_into(b: &mut Vec<u8>, seg: &Segment) -> usize {
    b.clear();
    b.resize(20 + 60, 0);
    let thl = encode_tcp_header(seg, &mut b[20..]);
    b.truncate(20 + thl);
    thl
}

/// Complete the packet in `b` (IPv4 header room, a TCP header of `thl`
/// bytes, the payload): the RFC 791 header (version 4, IHL 5, DF, TTL 64,
/// TCP) and both checksums.
pub(crate) fn ipv4_finish(b: &mut [u8], src: [u8; 4], dst: [u8; 4], thl: usize) {
    let total = b.len();
    b[0] = 0x45;
    b[2..4].copy_from_slice(&(total as u16).to_be_bytes());
    b[6] = 0x40;
    b[8] = 64;
    b[9] = 6;
    b[12..16].copy_from_slice(&src);
    b[16..20].copy_from_slice(&dst);
    let ipc = internet_checksum(&b[..20]);
    b[10..12].copy_from_slice(&ipc.to_be_bytes());
    let tc = tcp_checksum(src, dst, &b[20..20 + thl], &b[20 + thl..]);
    b[36..38].copy_from_slice(&tc.to_be_bytes());
}

/// Write the ECN field (RFC 3168 §5: the two low bits of the TOS octet)
/// of the IPv4 header `b` and update its header checksum incrementally,
/// RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m'), m the 16-bit word that holds
/// the field. A managed queue that sets CE on a real ECN-capable packet
/// (RFC 3168 §6.1.1, a router's mark) calls it as the packet leaves.
pub(crate) fn ipv4_set_ecn(b: &mut [u8], ecn: u8) {
    let old = u16::from_be_bytes([b[0], b[1]]);
    b[1] = (b[1] & !0x03) | (ecn & 0x03);
    let new = u16::from_be_bytes([b[0], b[1]]);
    let hc = u16::from_be_bytes([b[10], b[11]]);
    let mut sum = (!hc) as u32 + (!old) as u32 + new as u32;
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    b[10..12].copy_from_slice(&(!(sum as u16)).to_be_bytes());
}

fn parse_ipv4(b: &[u8]) -> Option<Ip> {
    if b.len() < 20 || b[0] >> 4 != 4 {
        return None;
    }
    let ihl = (b[0] & 0x0f) as usize * 4;
    let total = u16::from_be_bytes([b[2], b[3]]) as usize;
    if ihl < 20 || total < ihl || total > b.len() {
        return None;
    }
    Some(Ip {
        total,
        ihl,
        proto: b[9],
        src: [b[12], b[13], b[14], b[15]],
        dst: [b[16], b[17], b[18], b[19]],
    })
}

impl Emu {
    pub fn new(cfg: SimConfig, opts: &EmuOptions) -> Result<Emu, String> {
        validate(&cfg)?;
        refuse(&cfg)?;
        if !(576..=65535).contains(&opts.mtu) {
            return Err(format!(
                "mtu: must be between 576 and 65535 (got {})",
                opts.mtu
            ));
        }
        if !(0.0..=1.0).contains(&opts.spin_share) {
            return Err(format!(
                "spin_share: must be between 0 and 1 (got {})",
                opts.spin_share
            ));
        }
        let hops: Vec<Box<dyn Component>> = cfg
            .hops
            .iter()
            .enumerate()
            .map(|(i, h)| build_hop(h, cfg.seed, i))
            .collect::<Result<_, _>>()?;
        let wants_bytes = hops.iter().map(|h| h.wants_bytes()).collect();
        let mut taps = Taps::open(&cfg.pcap, cfg.hops.len())?;
        taps.deferred = Some(Vec::with_capacity(16));
        let endpoint = match &opts.endpoint {
            Some(o) => Some(Endpoint::new(&cfg, o, opts.mtu)?),
            None => None,
        };
        let mut eng = Engine {
            taps,
            drops: Vec::with_capacity(16),
            immediate: Vec::with_capacity(16),
            emitted: Vec::with_capacity(4),
            real_bytes: true,
            ..Default::default()
        };
        if let Some(ep) = &endpoint {
            if ep.sample_interval() > 0 {
                eng.q.push(0, Ev::Sample);
            }
            if ep.is_client() {
                eng.q.push(0, Ev::OpenConn { flow: 0 });
            }
        }
        Ok(Emu {
            eng,
            endpoint,
            endpoint_packets: [0; 2],
            endpoint_tx: Vec::with_capacity(64),
            wants_bytes,
            created: [0; 2],
            scratch: Vec::with_capacity(opts.mtu),
            hops,
            pool: Pool::new(opts.mtu),
            now: 0,
            entries: 0,
            conns: Vec::new(),
            conn_ids: HashMap::new(),
            rtx: Vec::new(),
            late: Lateness::new(),
            pcap_epoch_ns: opts.epoch_ns,
            panic_after: opts.panic_after_packets,
            packets_in: [0; 2],
            bytes_in: [0; 2],
            packets_out: [0; 2],
            bytes_out: [0; 2],
            dropped: [0; 2],
            first_out_ns: [0; 2],
            last_out_ns: [0; 2],
            out_series: [Vec::new(), Vec::new()],
            max_packet: [0; 2],
            not_ipv4: 0,
            oversize: 0,
            write_errors: 0,
            max_pool: 0,
            violations: Vec::new(),
            cfg,
        })
    }

    /// Wall-clock ns at emulator time 0 (pcap timestamps).
    pub fn set_epoch(&mut self, epoch_ns: u64) {
        self.pcap_epoch_ns = epoch_ns;
    }

    /// The buffers every packet touches (address, length): the byte pool
    /// and the lateness histogram; `emu_sys` locks them into memory so that
    /// their first touch is no page fault on the packet path.
    pub fn hot_regions(&self) -> [(usize, usize); 2] {
        [
            (self.pool.bytes.as_ptr() as usize, self.pool.bytes.len()),
            (
                self.late.buckets.as_ptr() as usize,
                self.late.buckets.len() * std::mem::size_of::<u64>(),
            ),
        ]
    }

    /// When the next event is due (None: nothing scheduled).
    pub fn next_deadline(&self) -> Option<Time> {
        self.eng.q.next_at()
    }

    /// Run every event due at or before `until`.
    pub fn run_due(&mut self, until: Time, wire: &mut dyn Wire) {
        while let Some((at, ev)) = self.eng.q.pop_due(until) {
            self.now = at;
            match ev {
                Ev::Arrive(i) => self.on_arrive(i, wire),
                Ev::HopTimer { hop, token } => {
                    self.call_hop(hop as usize, wire, |h, ctx| h.on_timer(token, ctx))
                }
                Ev::Timer { flow, gen, .. } => {
                    self.endpoint_call(|ep, now, n, truth| ep.on_timer(flow, gen, now, n, truth))
                }
                Ev::OpenConn { .. } => {
                    self.endpoint_call(|ep, now, n, truth| ep.open(now, n, truth))
                }
                Ev::Sample => {
                    if let Some(ep) = self.endpoint.as_mut() {
                        ep.sample(at);
                        let next = at.saturating_add(ep.sample_interval());
                        self.eng.q.push(next, Ev::Sample);
                    }
                }
                _ => unreachable!("the emulator schedules packets, hop and endpoint timers only"),
            }
            self.drain_immediate(wire);
        }
        self.now = self.now.max(until);
    }

    fn drain_immediate(&mut self, wire: &mut dyn Wire) {
        let mut k = 0;
        while k < self.eng.immediate.len() {
            let i = self.eng.immediate[k];
            k += 1;
            self.on_arrive(i, wire);
        }
        self.eng.immediate.clear();
    }

    /// A packet entered from the server side (`Dir::Fwd`) or the client side
    /// (`Dir::Rev`) at `now` (≥ every earlier call's time).
    pub fn inject(&mut self, dir: Dir, bytes: &[u8], now: Time, wire: &mut dyn Wire) {
        self.run_due(now, wire);
        let d = dir as usize;
        self.packets_in[d] += 1;
        self.bytes_in[d] += bytes.len() as u64;
        if let Some(n) = self.panic_after {
            if self.packets_in[0] + self.packets_in[1] >= n {
                panic!("tcplab emu: test panic after {n} packets (panic_after_packets)");
            }
        }
        let Some(ip) = parse_ipv4(bytes) else {
            // IPv6 or garbage: the namespaces carry IPv4 only.
            self.not_ipv4 += 1;
            return;
        };
        let bytes = &bytes[..ip.total];
        let Some(slot) = self.pool.put(bytes) else {
            self.oversize += 1;
            return;
        };
        self.max_pool = self.max_pool.max(self.pool.in_use());
        let uid = (self.entries << SLOT_BITS) | slot as u64;
        self.entries += 1;
        let mut p = Packet {
            uid,
            flow: 0,
            conn: 0,
            dir,
            hop: 0,
            udp: true,
            size: ip.total as u32,
            sent_at: now,
            seg: Segment::default(),
            feedback: None,
        };
        if ip.proto == 6 {
            if let Ok((seg, _)) = decode_tcp_header(&bytes[ip.ihl..]) {
                p.udp = false;
                p.seg = seg;
                p.flow = self.conn_id(dir, &ip, &seg);
                self.on_enter(&p);
            }
        }
        // The IP ECN field, which a managed queue reads (ECN-capable or not)
        // and may set to CE.
        p.seg.ecn = bytes[1] & 0x03;
        let hi = self.hop_of(dir, 0);
        self.hand_to_hop(hi, p, wire);
        self.drain_immediate(wire);
    }

    /// `on_packet` of hop `hi`, with the payload for a hop that reads it
    /// and the pool slot freed if the hop absorbs the packet (a PEP keeps
    /// the bytes it acknowledged).
    fn hand_to_hop(&mut self, hi: usize, p: Packet, wire: &mut dyn Wire) {
        if !self.wants_bytes[hi] {
            self.call_hop(hi, wire, |h, ctx| h.on_packet(p, ctx));
            return;
        }
        let uid = p.uid;
        self.eng.payload_in.clear();
        if !p.udp {
            let b = self.pool.get(uid);
            let ihl = ((b[0] & 0x0f) as usize) * 4;
            let thl = (b.get(ihl + 12).copied().unwrap_or(0) >> 4) as usize * 4;
            if let Some(pl) = b.get(ihl + thl..) {
                self.eng.payload_in.extend_from_slice(pl);
            }
        }
        let absorbed = self.eng.absorbed;
        self.call_hop(hi, wire, |h, ctx| h.on_packet(p, ctx));
        if self.eng.absorbed > absorbed {
            self.pool.release(uid);
        }
    }

    /// Bytes for the packets hop `hi` created (IPv4 and TCP headers with
    /// correct checksums, addresses of the connection, the payload the hop
    /// supplied), each continuing from `hi` in its direction.
    fn route_emitted(&mut self, hi: usize) {
        for k in 0..self.eng.emitted.len() {
            let (mut p, at) = self.eng.emitted[k];
            let payload: &[u8] = match self.eng.payload_spans.iter().find(|s| s.0 == p.uid) {
                Some(&(_, start, len)) => {
                    &self.eng.payload_out[start as usize..(start + len) as usize]
                }
                None => &[],
            };
            if payload.len() != p.seg.payload_len as usize || p.udp {
                self.violations.push(format!(
                    "hop {hi} created a packet without its bytes (payload {} of {})",
                    payload.len(),
                    p.seg.payload_len
                ));
                continue;
            }
            let Some(conn) = self.conns.get(p.flow as usize) else {
                self.violations.push(format!(
                    "hop {hi} created a packet for an unknown connection"
                ));
                continue;
            };
            let (server, _, client, _) = conn.key;
            let (src, dst) = match p.dir {
                Dir::Fwd => (server, client),
                Dir::Rev => (client, server),
            };
            let b = &mut self.scratch;
            let thl = tcp_header_into(b, &p.seg);
            b.extend_from_slice(payload);
            ipv4_finish(b, src, dst, thl);
            let total = b.len();
            let Some(slot) = self.pool.put(b) else {
                self.oversize += 1;
                continue;
            };
            self.max_pool = self.max_pool.max(self.pool.in_use());
            p.uid = (self.entries << SLOT_BITS) | slot as u64;
            self.entries += 1;
            p.size = total as u32;
            self.created[p.dir as usize] += 1;
            self.on_created(&p, hi);
            let pos = match p.dir {
                Dir::Fwd => hi,
                Dir::Rev => self.hops.len() - 1 - hi,
            };
            p.hop = (pos + 1) as u16;
            let i = self.eng.slab.put(p);
            if at <= self.now {
                self.eng.immediate.push(i);
            } else {
                self.eng.q.push(at, Ev::Arrive(i));
            }
        }
        self.eng.emitted.clear();
        self.eng.payload_out.clear();
        self.eng.payload_spans.clear();
    }

    /// Call the endpoint with the time, the packet entry count (the order
    /// stamp of what it sends next) and the emulator's ground truth (which
    /// data offsets of its stream reached the peer); then send what it sent
    /// and schedule its timers.
    fn endpoint_call(&mut self, f: impl FnOnce(&mut Endpoint, Time, u64, Truth)) {
        let Emu {
            endpoint,
            conns,
            conn_ids,
            now,
            entries,
            ..
        } = self;
        let Some(ep) = endpoint.as_mut() else {
            return;
        };
        f(
            ep,
            *now,
            *entries,
            &delivered_truth(conns, conn_ids, ep.tx_dir()),
        );
        self.flush_endpoint();
    }

    /// A TCP packet for the endpoint's address left the path: to the endpoint.
    fn deliver_to_endpoint(&mut self, p: &Packet) {
        let Emu {
            endpoint,
            pool,
            conns,
            conn_ids,
            now,
            entries,
            ..
        } = self;
        let Some(ep) = endpoint.as_mut() else {
            return;
        };
        let b = pool.get(p.uid);
        let ihl = ((b[0] & 0x0f) as usize) * 4;
        let thl = ((b[ihl + 12] >> 4) as usize) * 4;
        let src = [b[12], b[13], b[14], b[15]];
        let truth = delivered_truth(conns, conn_ids, ep.tx_dir());
        ep.on_segment(src, &p.seg, &b[ihl + thl..], *now, *entries, &truth);
        drop(truth);
        self.endpoint_packets[1] += 1;
        self.flush_endpoint();
    }

    /// The endpoint's segments enter the path at its end (with their bytes
    /// and the ground truth of a packet read from a device); its timers go
    /// to the event queue.
    fn flush_endpoint(&mut self) {
        let Some(ep) = self.endpoint.as_mut() else {
            return;
        };
        for (t, idx, gen) in ep.take_timers() {
            let ev = Ev::Timer {
                flow: idx,
                conn: 0,
                side: Side::Sender,
                gen,
            };
            self.eng.q.push(t.max(self.now), ev);
        }
        let mut tx = std::mem::take(&mut self.endpoint_tx);
        ep.swap_tx(&mut tx);
        let dir = ep.tx_dir();
        let src = ep.addr();
        for &(idx, dst, seg) in &tx {
            let Some(ep) = self.endpoint.as_mut() else {
                break;
            };
            let b = &mut self.scratch;
            let thl = tcp_header_into(b, &seg);
            let at = b.len();
            b.resize(at + seg.payload_len as usize, 0);
            if let Some(i) = idx {
                ep.payload(i, &seg, &mut b[at..]);
            }
            ipv4_finish(b, src, dst, thl);
            let total = b.len();
            let Some(slot) = self.pool.put(b) else {
                self.oversize += 1;
                continue;
            };
            self.max_pool = self.max_pool.max(self.pool.in_use());
            let ip = Ip {
                total,
                ihl: 20,
                proto: 6,
                src,
                dst,
            };
            let flow = self.conn_id(dir, &ip, &seg);
            let p = Packet {
                uid: (self.entries << SLOT_BITS) | slot as u64,
                flow,
                conn: 0,
                dir,
                hop: 0,
                udp: false,
                size: total as u32,
                sent_at: self.now,
                seg,
                feedback: None,
            };
            self.entries += 1;
            self.endpoint_packets[0] += 1;
            self.on_enter(&p);
            let i = self.eng.slab.put(p);
            self.eng.immediate.push(i);
        }
        tx.clear();
        self.endpoint_tx = tx;
    }

    /// The endpoint's transfer is over (a client's) and nothing it sent is
    /// still on the path: the emulation may end.
    pub fn endpoint_done(&self) -> bool {
        self.endpoint.as_ref().is_some_and(|e| e.done())
            && !self.eng.q.pending().any(|e| matches!(e.ev, Ev::Arrive(_)))
            && self.eng.immediate.is_empty()
            && self.hops.iter().all(|h| h.held() == 0)
    }

    fn conn_id(&mut self, dir: Dir, ip: &Ip, seg: &Segment) -> u32 {
        let key = match dir {
            Dir::Fwd => (ip.src, seg.src_port, ip.dst, seg.dst_port),
            Dir::Rev => (ip.dst, seg.dst_port, ip.src, seg.src_port),
        };
        if let Some(&id) = self.conn_ids.get(&key) {
            return id;
        }
        let id = self.conns.len() as u32;
        self.conns.push(Conn {
            key,
            first_seen_ns: self.now,
            dirs: [DirTruth::default(), DirTruth::default()],
        });
        self.conn_ids.insert(key, id);
        id
    }

    /// Ground truth when a TCP segment enters the path.
    fn on_enter(&mut self, p: &Packet) {
        let t = &mut self.conns[p.flow as usize].dirs[p.dir as usize];
        let off = t.offset(&p.seg);
        let len = p.seg.payload_len as u64;
        let data_off = off + p.seg.flags.syn() as u64;
        let end = data_off + len;
        if len > 0 {
            t.data_segments += 1;
            t.data_bytes += len;
            self.judge(p, data_off, end, None);
        }
        let t = &mut self.conns[p.flow as usize].dirs[p.dir as usize];
        let seq_end = end + p.seg.flags.fin() as u64;
        t.max_end = t.max_end.max(seq_end);
    }

    /// Ground truth for a data segment a hop created (a PEP sending on what
    /// it acknowledged): a retransmission when it starts below what that hop
    /// has sent so far; spurious by the same rule as the end host's.
    fn on_created(&mut self, p: &Packet, hop: usize) {
        let t = &mut self.conns[p.flow as usize].dirs[p.dir as usize];
        let len = p.seg.payload_len as u64;
        if len == 0 {
            return;
        }
        let data_off = t.offset(&p.seg) + p.seg.flags.syn() as u64;
        let end = data_off + len;
        self.judge(p, data_off, end, Some(hop));
        let t = &mut self.conns[p.flow as usize].dirs[p.dir as usize];
        t.hop_max_end = t.hop_max_end.max(end + p.seg.flags.fin() as u64);
    }

    /// Data `[data_off, end)` of `p`, sent by the end host (`hop` None) or
    /// by a hop: a retransmission (possibly repackaged with new data) when
    /// it starts below what that sender had sent so far. Spurious when its
    /// first byte had already reached the far side; else pending until a
    /// copy arrives (`on_deliver`).
    fn judge(&mut self, p: &Packet, data_off: u64, end: u64, hop: Option<usize>) {
        let t = &mut self.conns[p.flow as usize].dirs[p.dir as usize];
        let (sent_end, count, bytes, spurious_count) = match hop {
            None => (
                t.max_end,
                &mut t.retransmissions,
                &mut t.retransmitted_bytes,
                &mut t.spurious,
            ),
            Some(_) => (
                t.hop_max_end,
                &mut t.hop_retransmissions,
                &mut t.hop_retransmitted_bytes,
                &mut t.hop_spurious,
            ),
        };
        if data_off >= sent_end {
            return;
        }
        let old_end = end.min(sent_end);
        *count += 1;
        *bytes += old_end - data_off;
        let spurious = t.delivered.covers(data_off, old_end);
        let row = self.rtx.len();
        if spurious {
            *spurious_count += 1;
        } else {
            t.pending.push(Pending {
                off: data_off,
                entry: p.uid >> SLOT_BITS,
                row,
                by_hop: hop.is_some(),
            });
        }
        self.rtx.push(RtxRow {
            t_ns: self.now,
            conn: p.flow,
            dir: p.dir,
            offset: data_off,
            len: (old_end - data_off) as u32,
            spurious,
            hop,
        });
    }

    /// Ground truth when a TCP segment reaches the far side.
    fn on_deliver(&mut self, p: &Packet) {
        let len = p.seg.payload_len as u64;
        if len == 0 {
            return;
        }
        let c = &mut self.conns[p.flow as usize];
        let key = c.key;
        let t = &mut c.dirs[p.dir as usize];
        let off = t.offset(&p.seg) + p.seg.flags.syn() as u64;
        t.delivered.insert(off, off + len);
        t.delivered_bytes += len;
        let entry = p.uid >> SLOT_BITS;
        if let Some(ep) = self.endpoint.as_mut().filter(|e| e.tx_dir() == p.dir) {
            // The endpoint's pending timeouts and fast retransmits.
            ep.on_delivered(key, off, len, entry);
        }
        let t = &mut self.conns[p.flow as usize].dirs[p.dir as usize];
        let mut k = 0;
        while k < t.pending.len() {
            let q = &t.pending[k];
            if q.off >= off && q.off < off + len {
                if entry < q.entry {
                    // A copy sent before the retransmission got there first.
                    self.rtx[q.row].spurious = true;
                    if q.by_hop {
                        t.hop_spurious += 1;
                    } else {
                        t.spurious += 1;
                    }
                }
                t.pending.swap_remove(k);
                continue;
            }
            k += 1;
        }
    }

    #[inline]
    fn hop_of(&self, dir: Dir, pos: usize) -> usize {
        match dir {
            Dir::Fwd => pos,
            Dir::Rev => self.hops.len() - 1 - pos,
        }
    }

    fn on_arrive(&mut self, i: u32, wire: &mut dyn Wire) {
        let p = self.eng.slab.take(i);
        if (p.hop as usize) < self.hops.len() {
            let hi = self.hop_of(p.dir, p.hop as usize);
            self.hand_to_hop(hi, p, wire);
            return;
        }
        // Past the last hop: to the endpoint if it is addressed to it, else
        // out through the far side's device.
        if self.pool.get(p.uid)[1] & 0x03 != p.seg.ecn {
            // A managed queue marked it CE: the real packet carries the mark.
            ipv4_set_ecn(self.pool.get_mut(p.uid), p.seg.ecn);
        }
        let real = wire.clock();
        let late = real.saturating_sub(self.now);
        let to_ep = !p.udp
            && self
                .endpoint
                .as_ref()
                .is_some_and(|e| e.tx_dir() != p.dir && self.pool.get(p.uid)[16..20] == e.addr());
        let ok = to_ep || wire.send(p.dir, self.pool.get(p.uid));
        self.late.add(late);
        self.late.log(self.now, late, p.dir);
        let d = p.dir as usize;
        if ok {
            if self.packets_out[d] == 0 {
                self.first_out_ns[d] = real;
            }
            self.last_out_ns[d] = real;
            let bin = (real / SERIES_BIN_NS) as usize;
            if self.out_series[d].len() <= bin {
                // Once per bin (100 ms), not per packet.
                self.out_series[d].resize(bin + 1, 0);
            }
            self.out_series[d][bin] += p.size as u64;
            self.packets_out[d] += 1;
            self.bytes_out[d] += p.size as u64;
            self.max_packet[d] = self.max_packet[d].max(p.size);
            if !p.udp {
                self.on_deliver(&p);
            }
            if to_ep {
                self.deliver_to_endpoint(&p);
            }
        } else {
            self.write_errors += 1;
        }
        self.pool.release(p.uid);
    }

    fn call_hop(
        &mut self,
        hi: usize,
        wire: &mut dyn Wire,
        f: impl FnOnce(&mut dyn Component, &mut Ctx),
    ) {
        let _ = wire;
        let mut ctx = Ctx {
            now: self.now,
            hop: hi,
            eng: &mut self.eng,
        };
        f(self.hops[hi].as_mut(), &mut ctx);
        // Taps first: a packet lost on the wire is captured, then freed.
        let taps = &mut self.eng.taps;
        if let Some(mut d) = taps.deferred.take() {
            for &(w, uid, t) in d.iter() {
                let bytes = self.pool.get(uid);
                let t_ns = self.pcap_epoch_ns + t;
                let wr = &mut taps.writers[w];
                // Records of a two-direction capture are held until no
                // earlier one can come (a tap is never stamped before now).
                let res = wr
                    .write_raw(t_ns, bytes)
                    .and_then(|()| wr.release_until(self.pcap_epoch_ns + self.now));
                if let Err(e) = res {
                    taps.failed(w, e);
                }
            }
            d.clear();
            taps.deferred = Some(d);
        }
        for k in 0..self.eng.drops.len() {
            let (p, _) = self.eng.drops[k];
            self.dropped[p.dir as usize] += 1;
            self.pool.release(p.uid);
        }
        self.eng.drops.clear();
        if !self.eng.emitted.is_empty() {
            self.route_emitted(hi);
        }
    }

    /// End of the run: the summary (JSON).
    pub fn finish(mut self) -> Result<serde_json::Value, String> {
        self.eng.taps.finish()?;
        let held: u64 = self.hops.iter().map(|h| h.held()).sum();
        let mut in_flight = 0u64;
        while let Some((_, ev)) = self.eng.q.pop_due(Time::MAX) {
            if matches!(ev, Ev::Arrive(_)) {
                in_flight += 1;
            }
        }
        // Conservation: every IPv4 packet that entered (or a hop created)
        // left, was dropped, absorbed by a PEP, or is still inside the path.
        let entered = self.entries;
        let left = self.packets_out[0] + self.packets_out[1] + self.write_errors;
        let dropped = self.dropped[0] + self.dropped[1];
        let absorbed = self.eng.absorbed;
        if entered != left + dropped + absorbed + held + in_flight {
            self.violations.push(format!(
                "packet conservation: {entered} entered != {left} left + {dropped} dropped + {absorbed} absorbed + {held} held + {in_flight} in flight"
            ));
        }
        let mut notes = Vec::new();
        for h in &self.hops {
            self.violations.extend(h.violations());
            notes.extend(h.notes());
        }
        let endpoint = match self.endpoint.take() {
            Some(ep) => {
                let (j, v) = ep.finish(self.now);
                self.violations.extend(v);
                j
            }
            None => serde_json::Value::Null,
        };
        let dirs = ["fwd", "rev"];
        let conns: Vec<_> = self
            .conns
            .iter()
            .enumerate()
            .flat_map(|(i, c)| {
                let ip = |a: [u8; 4]| format!("{}.{}.{}.{}", a[0], a[1], a[2], a[3]);
                dirs.iter().zip(c.dirs.iter()).map(move |(d, t)| {
                    serde_json::json!({
                        "conn": i,
                        "dir": d,
                        "server": format!("{}:{}", ip(c.key.0), c.key.1),
                        "client": format!("{}:{}", ip(c.key.2), c.key.3),
                        "first_seen_s": c.first_seen_ns as f64 * 1e-9,
                        "data_segments": t.data_segments,
                        "data_bytes": t.data_bytes,
                        "delivered_bytes": t.delivered_bytes,
                        "retransmitted_segments": t.retransmissions,
                        "retransmitted_bytes": t.retransmitted_bytes,
                        "spurious_retransmissions": t.spurious,
                        "path_retransmitted_segments": t.hop_retransmissions,
                        "path_retransmitted_bytes": t.hop_retransmitted_bytes,
                        "path_spurious_retransmissions": t.hop_spurious,
                    })
                })
            })
            .collect();
        let rtx = serde_json::json!({
            "t_ns": self.rtx.iter().map(|r| r.t_ns).collect::<Vec<_>>(),
            "conn": self.rtx.iter().map(|r| r.conn).collect::<Vec<_>>(),
            "dir": self.rtx.iter().map(|r| dirs[r.dir as usize]).collect::<Vec<_>>(),
            "offset": self.rtx.iter().map(|r| r.offset).collect::<Vec<_>>(),
            "len": self.rtx.iter().map(|r| r.len).collect::<Vec<_>>(),
            "spurious": self.rtx.iter().map(|r| r.spurious).collect::<Vec<_>>(),
            "by": self.rtx.iter().map(|r| match r.hop {
                Some(h) => self.cfg.hops[h].name().to_string(),
                None => "sender".to_string(),
            }).collect::<Vec<_>>(),
        });
        let links: Vec<_> = self
            .cfg
            .hops
            .iter()
            .zip(self.hops.iter())
            .flat_map(|(c, h)| h.stats(c.name()))
            .collect();
        Ok(serde_json::json!({
            "scenario": self.cfg.name,
            "seed": self.cfg.seed,
            "duration_s": self.now as f64 * 1e-9,
            "links": links,
            "connections": conns,
            "retransmissions": rtx,
            "emulator": {
                "lateness_us": self.late.to_json(),
                "late_releases": self.late.log_json(),
                "packets_in": {"fwd": self.packets_in[0], "rev": self.packets_in[1]},
                "bytes_in": {"fwd": self.bytes_in[0], "rev": self.bytes_in[1]},
                "packets_out": {"fwd": self.packets_out[0], "rev": self.packets_out[1]},
                "bytes_out": {"fwd": self.bytes_out[0], "rev": self.bytes_out[1]},
                "dropped": {"fwd": self.dropped[0], "rev": self.dropped[1]},
                "max_packet_bytes": {"fwd": self.max_packet[0], "rev": self.max_packet[1]},
                "first_out_ns": {"fwd": self.first_out_ns[0], "rev": self.first_out_ns[1]},
                "last_out_ns": {"fwd": self.last_out_ns[0], "rev": self.last_out_ns[1]},
                "out_bin_s": SERIES_BIN_NS as f64 * 1e-9,
                "out_bytes_series": {"fwd": self.out_series[0], "rev": self.out_series[1]},
                "held_at_end": held + in_flight,
                "not_ipv4": self.not_ipv4,
                "created": {"fwd": self.created[0], "rev": self.created[1]},
                "endpoint_packets": {"sent": self.endpoint_packets[0], "received": self.endpoint_packets[1]},
                "absorbed": self.eng.absorbed,
                "oversize": self.oversize,
                "write_errors": self.write_errors,
                "max_packets_waiting": self.max_pool,
            },
            "pcaps": self.eng.taps.paths,
            "endpoint": endpoint,
            "violations": self.violations,
            "notes": notes,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::example_p2p;
    use tcplab_tcp::segment::Flags;
    use tcplab_tcp::wire::encode_tcp_header;

    /// A wire that records what leaves and a clock `lag` ns behind events.
    struct Rec {
        out: Vec<(Dir, Vec<u8>, Time)>,
        t: Time,
    }
    impl Wire for Rec {
        fn send(&mut self, dir: Dir, bytes: &[u8]) -> bool {
            self.out.push((dir, bytes.to_vec(), self.t));
            true
        }
        fn clock(&mut self) -> Time {
            self.t
        }
    }

    fn tcp(
        src: [u8; 4],
        dst: [u8; 4],
        sp: u16,
        dp: u16,
        seq: u32,
        flags: Flags,
        len: usize,
    ) -> Vec<u8> {
        let seg = Segment {
            src_port: sp,
            dst_port: dp,
            seq,
            ack: 0,
            flags,
            window: 1000,
            payload_len: len as u32,
            ..Default::default()
        };
        let mut b = vec![0u8; 20 + 60 + len];
        let h = encode_tcp_header(&seg, &mut b[20..]);
        b.truncate(20 + h + len);
        for (k, x) in b[20 + h..].iter_mut().enumerate() {
            *x = (seq as usize + k) as u8;
        }
        let total = b.len() as u16;
        b[0] = 0x45;
        b[2..4].copy_from_slice(&total.to_be_bytes());
        b[9] = 6;
        b[12..16].copy_from_slice(&src);
        b[16..20].copy_from_slice(&dst);
        b
    }

    const S: [u8; 4] = [10, 0, 0, 1];
    const C: [u8; 4] = [10, 0, 0, 2];

    /// Run until nothing is scheduled, the clock following the events.
    fn drain(e: &mut Emu, w: &mut Rec) {
        while let Some(at) = e.next_deadline() {
            w.t = at + 7_000;
            e.run_due(at, w);
        }
    }

    fn emu(rate_bps: u64, loss: f64) -> Emu {
        let mut cfg = example_p2p(1_000_000_000, loss);
        if let HopConfig::Link(l) = &mut cfg.hops[0] {
            l.fwd.rate_bps = rate_bps;
            l.rev.rate_bps = rate_bps;
        }
        let opts: EmuOptions = serde_json::from_str("{}").unwrap();
        Emu::new(cfg, &opts).unwrap()
    }

    #[test]
    fn real_bytes_cross_the_link_at_its_rate_and_delay() {
        let mut e = emu(8_000_000, 0.0); // 1 byte per µs
        let delay = match &e.cfg.hops[0] {
            HopConfig::Link(l) => l.fwd.delay_ns,
            _ => unreachable!(),
        };
        let mut w = Rec { out: vec![], t: 0 };
        let a = tcp(S, C, 80, 5000, 100, Flags::SYN, 0);
        let b = tcp(S, C, 80, 5000, 101, Flags::ACK, 1000);
        e.inject(Dir::Fwd, &a, 0, &mut w);
        e.inject(Dir::Fwd, &b, 0, &mut w);
        drain(&mut e, &mut w);
        assert_eq!(w.out.len(), 2);
        assert_eq!(w.out[0].1, a);
        assert_eq!(w.out[1].1, b, "the payload bytes arrive unchanged");
        assert!(w.out.iter().all(|o| o.0 == Dir::Fwd));
        // The second packet leaves after both serialisations and the delay.
        let t1 = a.len() as u64 * 1000 + b.len() as u64 * 1000 + delay;
        assert_eq!(w.out[1].2, t1 + 7_000);
        let s = e.finish().unwrap();
        assert_eq!(s["emulator"]["lateness_us"]["max"], 7.0);
        assert_eq!(s["links"][0]["tx_packets"], 2);
        assert_eq!(s["links"][0]["tx_bytes"], (a.len() + b.len()) as u64);
        assert!(s["violations"].as_array().unwrap().is_empty());
    }

    /// A 1 Mbit/s link whose data direction runs CoDel with ECN, and a
    /// burst of 200 data packets with IP ECN field `ecn` (valid checksums).
    fn codel_burst(ecn: u8) -> (Vec<Vec<u8>>, serde_json::Value) {
        let mut cfg = example_p2p(1_000_000_000, 0.0);
        if let HopConfig::Link(l) = &mut cfg.hops[0] {
            l.fwd.rate_bps = 1_000_000;
            l.fwd.queue = crate::config::QueueConfig::Packets { limit: 1000 };
            l.fwd.aqm = Some(serde_json::from_str(r#"{"kind": "codel", "ecn": true}"#).unwrap());
        }
        let opts: EmuOptions = serde_json::from_str("{}").unwrap();
        let mut e = Emu::new(cfg, &opts).unwrap();
        let mut w = Rec { out: vec![], t: 0 };
        for k in 0..200u32 {
            let mut b = tcp(S, C, 80, 5000, 1 + k * 1000, Flags::ACK, 1000);
            b[1] = 0xb8 | ecn; // DSCP EF beside the ECN field: kept as it is
            let c = internet_checksum(&b[..20]);
            b[10..12].copy_from_slice(&c.to_be_bytes());
            e.inject(Dir::Fwd, &b, 0, &mut w);
        }
        drain(&mut e, &mut w);
        let out = w.out.into_iter().map(|o| o.1).collect();
        (out, e.finish().unwrap())
    }

    #[test]
    fn a_managed_queue_marks_real_ect_packets_and_fixes_the_checksum() {
        // The burst waits up to 1.7 s: CoDel enters its dropping state one
        // interval after the sojourn passed 5 ms and marks ECT(0) packets.
        let (out, s) = codel_burst(crate::queue::ECT0);
        let ce: Vec<&Vec<u8>> = out.iter().filter(|b| b[1] & 3 == 3).collect();
        assert_eq!(
            out.len(),
            200,
            "ECN-capable packets are marked, not dropped"
        );
        assert!(!ce.is_empty());
        assert_eq!(s["links"][0]["ecn_marks"], ce.len() as u64);
        for b in &out {
            // RFC 1624's update gives the checksum a full recomputation gives.
            assert_eq!(internet_checksum(&b[..20]), 0, "{:02x?}", &b[..20]);
            assert_eq!(b[1] & 0xfc, 0xb8, "the DSCP bits are untouched");
        }
        // Not-ECT packets are dropped instead (RFC 3168 §6.1.1).
        let (out, s) = codel_burst(crate::queue::NOT_ECT);
        assert!(out.len() < 200);
        assert!(out.iter().all(|b| b[1] == 0xb8));
        assert_eq!(s["links"][0]["drops_aqm"], (200 - out.len()) as u64);
        assert_eq!(s["links"][0]["ecn_marks"], 0);
    }

    #[test]
    fn an_rlc_buffer_with_codel_marks_real_packets_in_real_time() {
        // The same burst through a clean 384 kbit/s radio bearer whose RLC
        // buffer runs CoDel with ECN: the radio takes a packet from CoDel
        // when it starts it, and the marks reach the real packets.
        let mut cfg = example_p2p(1_000_000_000, 0.0);
        let dir = |rate: u64| {
            serde_json::json!({"rate_bps": rate, "bler": 0.0, "delay_ns": 10_000_000,
                "queue_packets": 1000, "aqm": {"kind": "codel", "ecn": true}})
        };
        cfg.hops[0] = serde_json::from_value(serde_json::json!({
            "kind": "rlc", "name": "radio", "pdu_bytes": 42, "retx_interval_ns": 400_000_000u64,
            "max_dat": 10, "down": dir(384_000), "up": dir(64_000), "spike_rate_per_s": 0.0,
            "spike_duration_s": {"kind": "const", "value": 1.0},
        }))
        .unwrap();
        let opts: EmuOptions = serde_json::from_str("{}").unwrap();
        let mut e = Emu::new(cfg, &opts).unwrap();
        let mut w = Rec { out: vec![], t: 0 };
        for k in 0..100u32 {
            let mut b = tcp(S, C, 80, 5000, 1 + k * 1000, Flags::ACK, 1000);
            b[1] = crate::queue::ECT0;
            let c = internet_checksum(&b[..20]);
            b[10..12].copy_from_slice(&c.to_be_bytes());
            e.inject(Dir::Fwd, &b, 0, &mut w);
        }
        drain(&mut e, &mut w);
        let s = e.finish().unwrap();
        let ce = w.out.iter().filter(|o| o.1[1] & 3 == 3).count();
        assert_eq!(
            w.out.len(),
            100,
            "ECN-capable packets are marked, not dropped"
        );
        assert!(ce > 0);
        let row = &s["links"][0];
        assert_eq!(
            (row["kind"].as_str(), row["aqm"].as_str()),
            (Some("rlc"), Some("codel"))
        );
        assert_eq!(row["ecn_marks"], ce as u64);
        assert!(w.out.iter().all(|o| internet_checksum(&o.1[..20]) == 0));
    }

    #[test]
    fn ipv4_set_ecn_matches_a_full_checksum() {
        let mut b = tcp(S, C, 80, 5000, 1, Flags::ACK, 10);
        for tos in [0u8, 0x02, 0xfd, 0xff, 0x10] {
            b[1] = tos;
            b[10..12].fill(0);
            let c = internet_checksum(&b[..20]);
            b[10..12].copy_from_slice(&c.to_be_bytes());
            for ecn in 0..4 {
                ipv4_set_ecn(&mut b, ecn);
                assert_eq!(b[1], (tos & 0xfc) | ecn);
                assert_eq!(internet_checksum(&b[..20]), 0);
            }
        }
    }

    #[test]
    fn client_packets_travel_the_reverse_direction() {
        let mut e = emu(8_000_000, 0.0);
        let mut w = Rec { out: vec![], t: 0 };
        e.inject(Dir::Rev, &tcp(C, S, 5000, 80, 1, Flags::SYN, 0), 0, &mut w);
        drain(&mut e, &mut w);
        assert_eq!(w.out[0].0, Dir::Rev);
        let s = e.finish().unwrap();
        assert_eq!(s["links"][0]["dir"], "fwd");
        assert_eq!(s["links"][0]["tx_packets"], 0);
        assert_eq!(s["links"][1]["tx_packets"], 1);
        assert_eq!(s["connections"][0]["server"], "10.0.0.1:80");
    }

    #[test]
    fn retransmissions_are_flagged_spurious_only_when_the_original_arrived() {
        let mut e = emu(8_000_000, 0.0);
        let mut w = Rec { out: vec![], t: 0 };
        e.inject(Dir::Fwd, &tcp(S, C, 80, 5000, 0, Flags::SYN, 0), 0, &mut w);
        let seg = |seq| tcp(S, C, 80, 5000, seq, Flags::ACK, 100);
        e.inject(Dir::Fwd, &seg(1), 0, &mut w);
        drain(&mut e, &mut w);
        // Delivered, then sent again: spurious at once.
        e.inject(Dir::Fwd, &seg(1), w.t, &mut w);
        // Sent, and sent again while the first copy is in flight: the
        // first copy arrives first, so spurious.
        e.inject(Dir::Fwd, &seg(101), w.t, &mut w);
        e.inject(Dir::Fwd, &seg(101), w.t, &mut w);
        drain(&mut e, &mut w);
        drain(&mut e, &mut w);
        let s = e.finish().unwrap();
        let c = &s["connections"][0];
        assert_eq!(c["retransmitted_segments"], 2);
        assert_eq!(c["spurious_retransmissions"], 2);
        assert_eq!(
            s["retransmissions"]["spurious"],
            serde_json::json!([true, true])
        );
        assert_eq!(s["retransmissions"]["offset"], serde_json::json!([1, 101]));
    }

    #[test]
    fn a_delivered_retransmission_of_a_dropped_segment_is_genuine() {
        let mut cfg = example_p2p(1_000_000_000, 0.0);
        let d: HopConfig =
            serde_json::from_str(r#"{"kind": "dropper", "name": "d", "data_segments": [1]}"#)
                .unwrap();
        cfg.hops.insert(0, d);
        cfg.flows[0].path = vec![0, 1];
        let opts: EmuOptions = serde_json::from_str("{}").unwrap();
        let mut e = Emu::new(cfg, &opts).unwrap();
        let mut w = Rec { out: vec![], t: 0 };
        let seg = |seq| tcp(S, C, 80, 5000, seq, Flags::ACK, 100);
        e.inject(Dir::Fwd, &tcp(S, C, 80, 5000, 0, Flags::SYN, 0), 0, &mut w);
        e.inject(Dir::Fwd, &seg(1), 0, &mut w); // dropped by the dropper
        e.inject(Dir::Fwd, &seg(101), 0, &mut w);
        e.inject(Dir::Fwd, &seg(1), 1_000, &mut w); // the retransmission
        drain(&mut e, &mut w);
        assert_eq!(w.out.len(), 3);
        let s = e.finish().unwrap();
        assert_eq!(s["connections"][0]["retransmitted_segments"], 1);
        assert_eq!(s["connections"][0]["spurious_retransmissions"], 0);
        assert_eq!(s["connections"][0]["delivered_bytes"], 200);
        assert_eq!(s["retransmissions"]["spurious"], serde_json::json!([false]));
    }

    #[test]
    fn a_retransmission_of_a_lost_segment_is_genuine() {
        // Every packet of the forward direction is lost (loss = 1 on a
        // link is allowed); the retransmission is then undecided → genuine.
        let mut e = emu(8_000_000, 1.0);
        let mut w = Rec { out: vec![], t: 0 };
        let seg = |seq| tcp(S, C, 80, 5000, seq, Flags::ACK, 100);
        e.inject(Dir::Fwd, &tcp(S, C, 80, 5000, 0, Flags::SYN, 0), 0, &mut w);
        e.inject(Dir::Fwd, &seg(1), 0, &mut w);
        e.inject(Dir::Fwd, &seg(1), 1_000_000, &mut w);
        drain(&mut e, &mut w);
        let s = e.finish().unwrap();
        assert_eq!(s["connections"][0]["retransmitted_segments"], 1);
        assert_eq!(s["connections"][0]["spurious_retransmissions"], 0);
        assert_eq!(s["emulator"]["dropped"]["fwd"], 3);
        assert!(s["violations"].as_array().unwrap().is_empty(), "{s}");
    }

    #[test]
    fn non_ipv4_and_oversize_packets_are_counted_not_forwarded() {
        let mut e = emu(8_000_000, 0.0);
        let mut w = Rec { out: vec![], t: 0 };
        e.inject(Dir::Fwd, &[0x60; 40], 0, &mut w);
        let mut big = tcp(S, C, 80, 5000, 1, Flags::ACK, 1600);
        e.inject(Dir::Fwd, &big, 0, &mut w);
        big.truncate(30); // total length beyond the bytes read
        e.inject(Dir::Fwd, &big, 0, &mut w);
        drain(&mut e, &mut w);
        assert!(w.out.is_empty());
        let s = e.finish().unwrap();
        assert_eq!(s["emulator"]["not_ipv4"], 2);
        assert_eq!(s["emulator"]["oversize"], 1);
    }

    #[test]
    fn lateness_quantiles() {
        let mut l = Lateness::new();
        for us in 1..=1000u64 {
            l.add(us * 1000 - 500);
        }
        assert_eq!(l.quantile_us(0.5), 500.0);
        assert_eq!(l.quantile_us(0.99), 990.0);
        assert_eq!(l.quantile_us(1.0), 999.5);
        l.add(5_000_000_000);
        assert_eq!(l.to_json()["max"], 5_000_000.0);
        assert_eq!(l.to_json()["over_1ms"], 1);
    }

    #[test]
    fn late_releases_are_logged_with_the_silence_before_them() {
        let mut l = Lateness::new();
        // On time at 1 ms and 2 ms (fwd), 2.5 ms (rev); fwd due at 3 ms goes
        // 1.2 ms late, then 4 ms only 0.25 ms (at the threshold: not logged).
        for (at, ns, dir) in [
            (1_000_000, 10_000, Dir::Fwd),
            (2_000_000, 0, Dir::Fwd),
            (2_500_000, 0, Dir::Rev),
            (3_000_000, 1_200_000, Dir::Fwd),
            (4_000_000, LATE_LOG_NS, Dir::Fwd),
            (5_000_000, 300_000, Dir::Rev),
        ] {
            l.log(at, ns, dir);
        }
        let j = l.log_json();
        assert_eq!(j["prev_due_ns"], serde_json::json!([2_000_000, 2_500_000]));
        assert_eq!(j["due_ns"], serde_json::json!([3_000_000, 5_000_000]));
        assert_eq!(j["late_ns"], serde_json::json!([1_200_000, 300_000]));
        assert_eq!(j["dir"], serde_json::json!(["fwd", "rev"]));
        assert_eq!(j["not_logged"], 0);
        let mut full = Lateness::new();
        for k in 0..LATE_LOG_CAP as u64 + 3 {
            full.log(k, LATE_LOG_NS + 1, Dir::Rev);
        }
        assert_eq!(full.log.len(), LATE_LOG_CAP);
        assert_eq!(full.log_json()["not_logged"], 3);
    }

    #[test]
    fn options_out_of_range_are_refused() {
        let opts: EmuOptions = serde_json::from_str(r#"{"spin_share": 1.5}"#).unwrap();
        let err = Emu::new(example_p2p(1_000_000_000, 0.0), &opts)
            .err()
            .unwrap();
        assert_eq!(err, "spin_share: must be between 0 and 1 (got 1.5)");
        let opts: EmuOptions = serde_json::from_str(r#"{"mtu": 100}"#).unwrap();
        let err = Emu::new(example_p2p(1_000_000_000, 0.0), &opts)
            .err()
            .unwrap();
        assert!(err.starts_with("mtu: "), "{err}");
    }

    #[test]
    fn components_that_cannot_run_in_real_time_are_refused() {
        let mut cfg = example_p2p(1_000_000_000, 0.0);
        cfg.flows[0].path = vec![];
        assert!(refuse(&cfg).unwrap_err().starts_with("flows[0].path:"));
    }

    fn pep_emu(buffer: u64) -> Emu {
        let mut cfg = example_p2p(1_000_000_000, 0.0);
        let pep: HopConfig = serde_json::from_str(&format!(
            r#"{{"kind": "pep", "name": "p", "buffer_bytes": {buffer}, "cc": "newreno",
                "initial_window_segments": 4, "rto_initial_ns": 1000000000,
                "rto_min_ns": 200000000, "rto_max_ns": 60000000000,
                "series_interval_ns": 1000000}}"#
        ))
        .unwrap();
        cfg.hops.insert(0, pep);
        cfg.flows[0].path = vec![0, 1];
        refuse(&cfg).unwrap();
        let opts: EmuOptions = serde_json::from_str("{}").unwrap();
        Emu::new(cfg, &opts).unwrap()
    }

    fn checksums_ok(b: &[u8]) -> bool {
        let ihl = (b[0] & 0x0f) as usize * 4;
        let src: [u8; 4] = b[12..16].try_into().unwrap();
        let dst: [u8; 4] = b[16..20].try_into().unwrap();
        internet_checksum(&b[..ihl]) == 0 && tcp_checksum(src, dst, &b[ihl..], &[]) == 0
    }

    #[test]
    fn a_pep_holds_real_bytes_and_answers_with_checksummed_pseudo_acks() {
        let mut e = pep_emu(100_000);
        let mut w = Rec { out: vec![], t: 0 };
        // A download: the client opens, the server answers and sends.
        e.inject(
            Dir::Rev,
            &tcp(C, S, 5000, 80, 7000, Flags::SYN, 0),
            0,
            &mut w,
        );
        drain(&mut e, &mut w);
        let synack = tcp(S, C, 80, 5000, 100, Flags::SYN | Flags::ACK, 0);
        e.inject(Dir::Fwd, &synack, w.t, &mut w);
        let data = tcp(S, C, 80, 5000, 101, Flags::ACK, 1000);
        e.inject(Dir::Fwd, &data, w.t + 1_000, &mut w);
        // Until the PEP's copy reached the client (its RTO timer runs on).
        while w.out.len() < 4 {
            let at = e.next_deadline().unwrap();
            w.t = at + 7_000;
            e.run_due(at, &mut w);
        }
        // The client acknowledges: the PEP frees the bytes, its timer stops.
        let mut ack = tcp(C, S, 5000, 80, 7001, Flags::ACK, 0);
        ack[28..32].copy_from_slice(&(101u32 + 1000).to_be_bytes());
        e.inject(Dir::Rev, &ack, w.t, &mut w);
        drain(&mut e, &mut w);
        let to_server: Vec<_> = w.out.iter().filter(|o| o.0 == Dir::Rev).collect();
        let to_client: Vec<_> = w.out.iter().filter(|o| o.0 == Dir::Fwd).collect();
        assert_eq!(to_server.len(), 2, "the SYN and one pseudo-ACK");
        let (ack, _) = decode_tcp_header(&to_server[1].1[20..]).unwrap();
        assert!(ack.flags.ack() && ack.payload_len == 0);
        assert_eq!(ack.ack, 101 + 1000, "the held data is acknowledged");
        assert_eq!(&to_server[1].1[12..16], &C, "from the client's address");
        assert!(checksums_ok(&to_server[1].1));
        // No MSS option on the SYNs: 536-byte segments (RFC 9293 §3.7.1).
        assert_eq!(to_client.len(), 3, "the SYN-ACK and the PEP's two segments");
        assert_eq!(to_client[0].1, synack, "set-up passes unchanged");
        let mut got = Vec::new();
        for (k, o) in to_client[1..].iter().enumerate() {
            let (seg, hl) = decode_tcp_header(&o.1[20..]).unwrap();
            assert_eq!(seg.seq, 101 + 536 * k as u32);
            assert!(checksums_ok(&o.1));
            got.extend_from_slice(&o.1[20 + hl..]);
        }
        assert_eq!(got, &data[40..], "the same bytes");
        let s = e.finish().unwrap();
        assert!(s["violations"].as_array().unwrap().is_empty(), "{s}");
        assert_eq!(s["links"][0]["pseudo_acks"], 1);
        assert_eq!(s["links"][0]["held_bytes_end"], 0);
        assert_eq!(
            s["links"][0]["acks_absorbed"], 1,
            "the client's ACK ends at the PEP"
        );
    }

    #[test]
    fn a_peps_own_retransmissions_are_in_the_connection_table() {
        let mut e = pep_emu(100_000);
        let mut w = Rec { out: vec![], t: 0 };
        e.inject(
            Dir::Rev,
            &tcp(C, S, 5000, 80, 7000, Flags::SYN, 0),
            0,
            &mut w,
        );
        drain(&mut e, &mut w);
        e.inject(
            Dir::Fwd,
            &tcp(S, C, 80, 5000, 100, Flags::SYN | Flags::ACK, 0),
            w.t,
            &mut w,
        );
        let data = tcp(S, C, 80, 5000, 101, Flags::ACK, 1000);
        e.inject(Dir::Fwd, &data, w.t + 1_000, &mut w);
        // The client never acknowledges: the PEP's RTO (1 s) resends its
        // first segment, which had reached the client: spurious.
        while w.t < 1_500_000_000 {
            let at = e.next_deadline().unwrap();
            w.t = at + 7_000;
            e.run_due(at, &mut w);
        }
        let s = e.finish().unwrap();
        let fwd = &s["connections"][0];
        assert_eq!(fwd["dir"], "fwd");
        assert_eq!(
            fwd["retransmitted_segments"], 0,
            "the server resent nothing"
        );
        let n = fwd["path_retransmitted_segments"].as_u64().unwrap();
        assert!(n >= 1, "{fwd}");
        assert_eq!(n, s["links"][0]["local_retransmits"], "as the PEP counted");
        assert_eq!(fwd["path_retransmitted_bytes"], 536 * n);
        assert_eq!(
            fwd["path_spurious_retransmissions"], n,
            "every copy had arrived"
        );
        let rtx = &s["retransmissions"];
        assert_eq!(rtx["by"].as_array().unwrap().len() as u64, n);
        assert!(rtx["by"].as_array().unwrap().iter().all(|b| b == "p"));
        assert!(rtx["spurious"]
            .as_array()
            .unwrap()
            .iter()
            .all(|b| b == true));
    }
}
