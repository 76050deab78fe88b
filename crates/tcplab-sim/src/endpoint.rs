//! tcplab's own TCP as a real host in the emulator (`tcplab emu --endpoint
//! server=tcplab` or `client=tcplab`): the same sans-IO `Connection` the
//! simulator runs, configured from the scenario's first `[[flows]]` entry
//! (congestion control, RTO profile, spurious-timeout detection and
//! response, SACK, timestamps, windows), terminating real TCP from a Linux
//! peer at one end of the emulated path.
//!
//! The emulator (`emu.rs`) hands the endpoint every TCP segment that leaves
//! the path toward its address (`on_segment`, with the payload bytes), runs
//! its timers (`on_timer`) and takes the segments it sends (`swap_tx`, the
//! payload read with `payload`); they enter the path at its end like a
//! packet from the TUN device there. The endpoint never reads a clock or
//! touches a device; its time is the emulator's.
//!
//! Bytes: the `Connection` counts offsets only. What the host sends is a
//! `endpoint_app::Stream` addressed by offset (a retransmission reads the
//! same bytes again); what it receives is written by offset into a ring of
//! the receive buffer's size and handed, in order, to the application when
//! the `Connection`'s application model has read it (`read_rate`, a paused
//! reader: the ring holds what is unread, as the window says).
//!
//! Applications (`endpoint_app.rs`): the server answers an HTTP/1.x GET or
//! HEAD with a file from its directory (`--serve DIR`), or, without one,
//! runs the bulk source (the flow's `bytes`, or unlimited until the peer
//! closes); the client sends one GET and saves the response body.
//!
//! Outputs as for a simulated flow (`conn_log.rs`): the event log with the
//! emulator's ground truth for timeouts and fast retransmits (the copies it
//! saw reach the peer, stamped by the order they entered the path), the
//! cwnd/ssthresh/SRTT/RTO series every `sample_interval`, and the flow row.

use std::net::Ipv4Addr;
use std::path::PathBuf;

use serde::Deserialize;
use tcplab_tcp::seq::unwrap;
use tcplab_tcp::{Config, Connection, Event, Flags, Segment, State, TcpOptions, Time};

use crate::config::{AppConfig, SimConfig};
use crate::conn_log::ConnLog;
use crate::endpoint_app::{HttpClient, ServerApp, ServerConn, Stream};
use crate::engine::Dir;
use crate::output::{EventKind, EventRow, FlowAgg, FlowSummary, Output};
use crate::rng::Rng;
use crate::validate::tcp_config;

/// The endpoint's settings (JSON from Python, `EmuOptions::endpoint`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EndpointOptions {
    /// "server" (at the path's start, where the server namespace is) or
    /// "client" (at its end).
    pub role: String,
    /// The endpoint's IPv4 address (the namespace address it replaces).
    pub addr: String,
    /// Server: the port it listens on; client: the server's port.
    pub port: u16,
    /// Server: answer HTTP GET with files from this directory (else the bulk source).
    #[serde(default)]
    pub serve: Option<String>,
    /// Client: the server's IPv4 address.
    #[serde(default)]
    pub peer: Option<String>,
    /// Client: the request target (`/file`) and `Host` field.
    #[serde(default)]
    pub target: Option<String>,
    #[serde(default)]
    pub host: Option<String>,
    /// Client: where the response body goes.
    #[serde(default)]
    pub save: Option<String>,
}

enum Role {
    Server(ServerApp),
    Client {
        peer: [u8; 4],
        target: String,
        host: String,
        save: PathBuf,
    },
}

enum App {
    Server(ServerConn),
    Client(HttpClient),
}

#[derive(Default, Clone, Copy)]
struct TimerSlot {
    scheduled: Option<Time>,
    gen: u32,
}

/// One connection of the host.
struct EConn {
    id: u32,
    peer: [u8; 4],
    peer_port: u16,
    local_port: u16,
    tcp: Connection,
    iss: u32,
    /// The peer's ISN, once its SYN arrived.
    irs: Option<u32>,
    /// Received bytes, data offset k at `k % ring.len()`; every byte in it
    /// lies in [`read`, `read` + ring.len()).
    ring: Vec<u8>,
    /// Data bytes the application has taken from the ring.
    read: u64,
    app: App,
    send: Stream,
    /// Bytes handed to the `Connection` (`app_supply`).
    supplied: u64,
    /// The send stream's length is known and `close` was called.
    closed: bool,
    timer: TimerSlot,
    opened_at: Time,
    first_data_at: Option<Time>,
    done_at: Option<Time>,
    /// The connection reached TIME-WAIT or CLOSED (folded into the flow row).
    finished: bool,
    log: ConnLog,
}

/// The emulator's view of what reached the endpoint's peer: does the peer
/// hold data offset `off` of the endpoint's stream on the connection
/// `(server addr, server port, client addr, client port)`?
pub type Truth<'a> = &'a dyn Fn(ConnKey, u64) -> bool;

/// A connection as the emulator keys it: (server addr, server port, client
/// addr, client port).
pub type ConnKey = ([u8; 4], u16, [u8; 4], u16);

/// tcplab's TCP host (module documentation).
pub struct Endpoint {
    role: Role,
    addr: [u8; 4],
    port: u16,
    tcp: Config,
    flow_name: String,
    rng: Rng,
    conns: Vec<EConn>,
    out: Output,
    agg: FlowAgg,
    /// Segments to send: (connection index or None for a RST to a stray
    /// segment, the destination, the segment).
    tx: Vec<(Option<u32>, [u8; 4], Segment)>,
    /// Timers to schedule: (time, connection index, generation).
    timers: Vec<(Time, u32, u32)>,
    sample_interval: Time,
    next_port: u16,
    violations: Vec<String>,
    /// Client: the transfer ended (the emulation may stop).
    done: bool,
    /// Segments that reached the endpoint for no connection of its own.
    stray: u64,
}

fn parse_addr(s: &str, field: &str) -> Result<[u8; 4], String> {
    s.parse::<Ipv4Addr>()
        .map(|a| a.octets())
        .map_err(|_| format!("endpoint.{field}: not an IPv4 address ({s:?})"))
}

impl Endpoint {
    pub fn new(cfg: &SimConfig, o: &EndpointOptions, mtu: usize) -> Result<Endpoint, String> {
        let Some(flow) = cfg.flows.first() else {
            return Err("flows: the tcplab endpoint is configured from the first [[flows]] entry (none given)".into());
        };
        let mut tcp = tcp_config(&flow.tcp).map_err(|e| format!("flows[0].tcp.{e}"))?;
        // Real peers read the MSS option as RFC 6691 has it.
        tcp.mss_option_rfc6691 = true;
        // The largest segment: IPv4 and TCP headers, the timestamp option, the MSS.
        let opts = if tcp.timestamps { 12 } else { 0 };
        if tcp.mss as usize + 40 + opts > mtu {
            return Err(format!(
                "flows[0].tcp.mss: {} bytes and {} of headers exceed the MTU {mtu}",
                tcp.mss,
                40 + opts
            ));
        }
        let addr = parse_addr(&o.addr, "addr")?;
        if o.port == 0 {
            return Err("endpoint.port: must be between 1 and 65535".into());
        }
        let role = match o.role.as_str() {
            "server" => match &o.serve {
                Some(d) => {
                    let p = PathBuf::from(d);
                    if !p.is_dir() {
                        return Err(format!("--serve: {d} is not a directory"));
                    }
                    Role::Server(ServerApp::Http(p))
                }
                None => Role::Server(ServerApp::Bulk(match &flow.app {
                    AppConfig::Bulk { bytes } => *bytes,
                    AppConfig::Downloads { .. } => None,
                })),
            },
            "client" => {
                let need = |v: &Option<String>, f: &str| {
                    v.clone()
                        .ok_or_else(|| format!("endpoint.{f}: the client needs it"))
                };
                Role::Client {
                    peer: parse_addr(&need(&o.peer, "peer")?, "peer")?,
                    target: need(&o.target, "target")?,
                    host: need(&o.host, "host")?,
                    save: PathBuf::from(need(&o.save, "save")?),
                }
            }
            r => {
                return Err(format!(
                    "endpoint.role: must be server or client (got {r:?})"
                ))
            }
        };
        let mut rng = Rng::stream(cfg.seed, "endpoint");
        let next_port = 32768 + (rng.next_u32() % 16384) as u16;
        Ok(Endpoint {
            role,
            addr,
            port: o.port,
            tcp,
            flow_name: flow.name.clone(),
            rng,
            conns: Vec::new(),
            out: Output::new(cfg.record.timeseries, cfg.record.events, None),
            agg: FlowAgg {
                hystart: flow.tcp.hystart,
                ..FlowAgg::default()
            },
            tx: Vec::with_capacity(64),
            timers: Vec::with_capacity(8),
            sample_interval: cfg.sample_interval_ns,
            next_port,
            violations: Vec::new(),
            done: false,
            stray: 0,
        })
    }

    /// The endpoint's address.
    pub fn addr(&self) -> [u8; 4] {
        self.addr
    }

    /// The direction the endpoint's segments travel (a server's toward the
    /// client side: `Fwd`).
    pub fn tx_dir(&self) -> Dir {
        match self.role {
            Role::Server(_) => Dir::Fwd,
            Role::Client { .. } => Dir::Rev,
        }
    }

    pub fn is_client(&self) -> bool {
        matches!(self.role, Role::Client { .. })
    }

    /// Client: the transfer is over.
    pub fn done(&self) -> bool {
        self.done
    }

    /// Sampling period of the cwnd/RTO/SRTT series (0: none).
    pub fn sample_interval(&self) -> Time {
        self.sample_interval
    }

    /// The emulator's connection key of connection `c`: (server address,
    /// port, client address, port).
    fn key(&self, c: &EConn) -> ([u8; 4], u16, [u8; 4], u16) {
        match self.role {
            Role::Server(_) => (self.addr, c.local_port, c.peer, c.peer_port),
            Role::Client { .. } => (c.peer, c.peer_port, self.addr, c.local_port),
        }
    }

    fn new_conn(&mut self, peer: [u8; 4], peer_port: u16, local_port: u16, now: Time) -> EConn {
        let iss = self.rng.next_u32();
        let ts = self.rng.next_u32();
        let id = self.conns.len() as u32;
        let server = matches!(self.role, Role::Server(_));
        let tcp = if server {
            Connection::server(self.tcp.clone(), local_port, peer_port, iss, ts)
        } else {
            Connection::client(self.tcp.clone(), local_port, peer_port, iss, ts)
        };
        let ring = (self.tcp.rcv_buf + 2 * self.tcp.mss as u64).next_power_of_two() as usize;
        EConn {
            id,
            peer,
            peer_port,
            local_port,
            tcp,
            iss,
            irs: None,
            ring: vec![0; ring],
            read: 0,
            app: App::Server(ServerConn::new()),
            send: Stream::empty(),
            supplied: 0,
            closed: false,
            timer: TimerSlot::default(),
            opened_at: now,
            first_data_at: None,
            done_at: None,
            finished: false,
            log: ConnLog::default(),
        }
    }

    /// Client: open the connection and queue the request (the emulator
    /// calls this once, at time 0).
    pub fn open(&mut self, now: Time, entries: u64, truth: Truth) {
        let Role::Client {
            peer,
            target,
            host,
            save,
        } = &self.role
        else {
            return;
        };
        let (peer, port) = (*peer, self.port);
        let made = HttpClient::new(target, host, save);
        let local = self.next_port;
        let mut c = self.new_conn(peer, port, local, now);
        match made {
            Ok((client, req)) => {
                c.app = App::Client(client);
                c.send = req;
            }
            Err(e) => {
                self.violations.push(e);
                self.done = true;
                return;
            }
        }
        self.conns.push(c);
        let i = self.conns.len() - 1;
        self.out.event(EventRow {
            ..EventRow::new(now, 0, i as u32, EventKind::ConnOpen)
        });
        self.service(i, now, entries, truth);
    }

    /// A segment addressed to the endpoint (from `src`) left the path.
    pub fn on_segment(
        &mut self,
        src: [u8; 4],
        seg: &Segment,
        payload: &[u8],
        now: Time,
        entries: u64,
        truth: Truth,
    ) {
        let found = self.conns.iter().rposition(|c| {
            c.peer == src && c.peer_port == seg.src_port && c.local_port == seg.dst_port
        });
        // A new SYN on the port of a finished connection opens a new one.
        let reuse =
            found.is_some_and(|i| self.conns[i].finished) && seg.flags.syn() && !seg.flags.ack();
        let i = match found {
            Some(i) if !reuse => i,
            _ => {
                let listening = matches!(self.role, Role::Server(_))
                    && seg.dst_port == self.port
                    && seg.flags.syn()
                    && !seg.flags.ack()
                    && !seg.flags.rst();
                if !listening {
                    self.stray += 1;
                    self.reset_stray(src, seg, payload.len() as u64);
                    return;
                }
                let c = self.new_conn(src, seg.src_port, seg.dst_port, now);
                self.conns.push(c);
                let i = self.conns.len() - 1;
                self.out.event(EventRow {
                    ..EventRow::new(now, 0, i as u32, EventKind::ConnOpen)
                });
                i
            }
        };
        let c = &mut self.conns[i];
        if seg.flags.syn() && c.irs.is_none() {
            c.irs = Some(seg.seq);
        }
        if let (Some(irs), false) = (c.irs, payload.is_empty()) {
            // Data offset of the first payload byte (the SYN takes offset 0).
            let hint = c.tcp.rcv_data_in_order() + 1;
            let off = unwrap(irs, seg.seq, hint) + seg.flags.syn() as u64;
            if off >= 1 {
                ring_put(&mut c.ring, c.read, off - 1, payload);
            }
        }
        c.tcp.handle_segment(seg, now);
        self.service(i, now, entries, truth);
    }

    /// RFC 9293 §3.10.7.1: a segment for no connection is answered with a
    /// RST (unless it is one).
    fn reset_stray(&mut self, src: [u8; 4], seg: &Segment, len: u64) {
        if seg.flags.rst() {
            return;
        }
        let mut rst = Segment {
            src_port: seg.dst_port,
            dst_port: seg.src_port,
            seq: 0,
            ack: 0,
            flags: Flags::RST,
            window: 0,
            options: TcpOptions::default(),
            payload_len: 0,
            ecn: 0,
        };
        if seg.flags.ack() {
            rst.seq = seg.ack;
        } else {
            let n = len + seg.flags.syn() as u64 + seg.flags.fin() as u64;
            rst.ack = seg.seq.wrapping_add(n as u32);
            rst.flags |= Flags::ACK;
        }
        self.tx.push((None, src, rst));
    }

    /// Timer `gen` of connection `idx` fired.
    pub fn on_timer(&mut self, idx: u32, gen: u32, now: Time, entries: u64, truth: Truth) {
        let i = idx as usize;
        let Some(c) = self.conns.get_mut(i) else {
            return;
        };
        if c.timer.gen != gen {
            return; // superseded
        }
        c.timer.scheduled = None;
        c.tcp.handle_timeout(now);
        self.service(i, now, entries, truth);
    }

    /// After an input: the application reads and answers, the connection
    /// sends, its events are logged, its timer re-armed.
    fn service(&mut self, i: usize, now: Time, entries: u64, truth: Truth) {
        self.run_app(i, now);
        let c = &mut self.conns[i];
        while let Some(seg) = c.tcp.poll_transmit(now) {
            if seg.payload_len > 0 && c.first_data_at.is_none() {
                c.first_data_at = Some(now);
            }
            self.tx.push((Some(i as u32), c.peer, seg));
        }
        let sender = matches!(self.role, Role::Server(_));
        let key = self.key(&self.conns[i]);
        let c = &mut self.conns[i];
        while let Some(e) = c.tcp.poll_event() {
            let received = |off: u64| truth(key, off);
            let (out, agg) = (&mut self.out, &mut self.agg);
            // Timeouts and fast retransmits are the sender's; a client
            // that only requests still logs its own if it has any.
            let is_sender =
                sender || matches!(e, Event::Timeout { .. } | Event::FastRetransmit { .. });
            c.log
                .record(out, agg, now, 0, c.id, is_sender, e, received, entries);
        }
        if let Some(t) = c.tcp.poll_timeout() {
            if c.timer.scheduled.is_none_or(|s| t < s) {
                c.timer.gen = c.timer.gen.wrapping_add(1);
                c.timer.scheduled = Some(t);
                self.timers.push((t.max(now), i as u32, c.timer.gen));
            }
        }
        let over = matches!(c.tcp.state(), State::TimeWait | State::Closed);
        if over && !c.finished {
            self.finish_conn(i, now);
        }
    }

    /// The application's part: take what the connection's reader has read,
    /// answer, supply bytes, close.
    fn run_app(&mut self, i: usize, now: Time) {
        let Endpoint { conns, role, .. } = self;
        let c = &mut conns[i];
        let n = c.tcp.take_read();
        if n > 0 {
            let ring_len = c.ring.len() as u64;
            let mut k = c.read;
            let end = c.read + n;
            while k < end {
                let at = (k % ring_len) as usize;
                let m = ((end - k) as usize).min(c.ring.len() - at);
                let data = &c.ring[at..at + m];
                match (&mut c.app, &*role) {
                    (App::Server(s), Role::Server(app)) => {
                        if let Some(resp) = s.on_data(app, data) {
                            c.send = resp;
                        }
                    }
                    (App::Client(h), _) => h.on_data(data),
                    _ => {}
                }
                k += m as u64;
            }
            c.read = end;
        }
        if let (App::Server(s), Role::Server(app)) = (&mut c.app, &*role) {
            if c.tcp.state() == State::Established || c.tcp.state() == State::CloseWait {
                if let Some(st) = s.on_established(app) {
                    c.send = st;
                }
            }
        }
        let peer_done = c.tcp.peer_finished() && c.tcp.unread() == 0;
        if let App::Client(h) = &mut c.app {
            if (h.complete() || peer_done) && !c.closed {
                // The response is complete (or the server closed): close our side.
                h.finish(peer_done);
                c.closed = true;
                c.tcp.close();
                c.done_at.get_or_insert(now);
            }
        }
        // Supply what the stream holds (an unlimited source in steps of the
        // send buffer, so a FIN after the peer closed follows soon).
        if !c.closed {
            let len = c.send.total();
            let responded = match &c.app {
                App::Server(s) => s.responded,
                App::Client(_) => true,
            };
            let target = match len {
                Some(n) => n,
                None => (c.tcp.snd_una().saturating_sub(1) + 2 * self.tcp.snd_buf).max(c.supplied),
            };
            if target > c.supplied {
                c.supplied = target;
                c.tcp.app_supply(target);
            }
            let server_done = responded && len.is_some();
            if let App::Server(_) = c.app {
                if server_done || peer_done {
                    // The whole response is supplied, or the peer closed
                    // (an unlimited source stops here): FIN after the data.
                    c.closed = true;
                    c.tcp.close();
                }
            }
        }
        if let (App::Server(_), Some(n)) = (&c.app, c.send.total()) {
            if c.closed && c.done_at.is_none() && c.tcp.snd_una() > n {
                c.done_at = Some(now);
            }
        }
    }

    fn finish_conn(&mut self, i: usize, now: Time) {
        let c = &mut self.conns[i];
        c.finished = true;
        c.ring = Vec::new();
        let transfer = c.send.total();
        if let App::Client(h) = &mut c.app {
            h.finish(c.tcp.peer_finished());
        }
        fold(&mut self.agg, c, now);
        c.log.classify_misses(&mut self.agg, &self.out, &self.tcp);
        if let Some(t) = c.done_at {
            // The sender's view as the simulator logs it (sim.rs, `SenderAcked`):
            // first data segment sent to the last data byte acknowledged.
            if let Some(t0) = c.first_data_at {
                self.out.event(EventRow {
                    seq: transfer.unwrap_or(0),
                    value: (t - t0) as f64 * 1e-9,
                    ..EventRow::new(t, 0, c.id, EventKind::SenderAcked)
                });
            }
            self.out.event(EventRow {
                seq: transfer.unwrap_or(0),
                value: (t - c.opened_at) as f64 * 1e-9,
                ..EventRow::new(t, 0, c.id, EventKind::TransferDone)
            });
        }
        if self.is_client() {
            self.done = true;
        }
    }

    /// The data bytes of segment `seg` that connection `idx` sends, into
    /// `out` (its payload length).
    pub fn payload(&mut self, idx: u32, seg: &Segment, out: &mut [u8]) {
        if out.is_empty() {
            return;
        }
        let c = &mut self.conns[idx as usize];
        let off = unwrap(c.iss, seg.seq, c.tcp.snd_una().max(1));
        if let Err(e) = c.send.fill(off - 1, out) {
            let v = format!("endpoint conn {}: {e}", c.id);
            if self.violations.len() < 20 {
                self.violations.push(v);
            }
        }
    }

    /// The segments to send since the last call, swapped into `v` (an
    /// empty vector the caller keeps, so neither allocates again).
    pub fn swap_tx(&mut self, v: &mut Vec<(Option<u32>, [u8; 4], Segment)>) {
        std::mem::swap(&mut self.tx, v);
    }

    /// The timers to schedule since the last call.
    pub fn take_timers(&mut self) -> std::vec::Drain<'_, (Time, u32, u32)> {
        self.timers.drain(..)
    }

    /// A copy of `[off, off + len)` of the endpoint's stream on connection
    /// `key` reached the peer; `entry` orders it among the packets that
    /// entered the path (ground truth for pending timeouts).
    pub fn on_delivered(
        &mut self,
        key: ([u8; 4], u16, [u8; 4], u16),
        off: u64,
        len: u64,
        entry: u64,
    ) {
        for k in 0..self.conns.len() {
            if !self.conns[k].log.pending() || self.key(&self.conns[k]) != key {
                continue;
            }
            let c = &mut self.conns[k];
            c.log.on_arrival(&mut self.out, off, len, entry);
        }
    }

    /// One row of the cwnd/RTO/SRTT series per open connection.
    pub fn sample(&mut self, now: Time) {
        for c in self.conns.iter().filter(|c| !c.finished) {
            let t = &c.tcp;
            let delivered = t.data_acked() + t.stats().bytes_read;
            self.out.sample(
                now,
                0,
                c.id,
                t.cwnd(),
                t.ssthresh().min(u64::MAX / 8),
                t.srtt(),
                t.rttvar(),
                t.rto(),
                t.in_flight(),
                delivered,
                (
                    t.pacing_rate().unwrap_or(0).saturating_mul(8),
                    t.rate_estimator()
                        .map_or(0, |r| r.latest_rate(t.mss()).saturating_mul(8)),
                ),
            );
        }
    }

    /// The endpoint's part of the summary: the flow row, its connections,
    /// the event log and the series (columns), and violations.
    pub fn finish(mut self, now: Time) -> (serde_json::Value, Vec<String>) {
        for i in 0..self.conns.len() {
            if !self.conns[i].finished {
                self.finish_conn(i, now);
            }
        }
        let mut violations = std::mem::take(&mut self.violations);
        for c in &self.conns {
            if let Err(e) = c.tcp.check_invariants() {
                violations.push(format!("endpoint conn {}: {e}", c.id));
            }
            if c.tcp.stats().bad_acks > 0 {
                violations.push(format!(
                    "endpoint conn {}: {} ACKs acknowledged data never sent",
                    c.id,
                    c.tcp.stats().bad_acks
                ));
            }
        }
        let conns: Vec<_> = self
            .conns
            .iter()
            .map(|c| {
                let ip = |a: [u8; 4]| Ipv4Addr::from(a).to_string();
                let s = c.tcp.stats();
                let mut j = serde_json::json!({
                    "conn": c.id,
                    "peer": format!("{}:{}", ip(c.peer), c.peer_port),
                    "local_port": c.local_port,
                    "state": format!("{:?}", c.tcp.state()),
                    "opened_s": c.opened_at as f64 * 1e-9,
                    "done_s": c.done_at.map(|t| t as f64 * 1e-9),
                    "bytes_sent": c.tcp.data_acked(),
                    "bytes_received": s.bytes_read,
                    "stream_bytes": c.send.total(),
                    "timeouts": s.timeouts,
                    "retransmitted_segments": s.retransmitted_segments,
                    "spurious_timeouts": c.log.spurious,
                    "spurious_detected": s.spurious_detected,
                    "window_probes": s.window_probes,
                });
                match &c.app {
                    App::Server(sv) => {
                        j["request"] = sv.request.clone().into();
                    }
                    App::Client(h) => {
                        j["status"] = h.status.into();
                        j["content_length"] = h.content_length.into();
                        j["body_bytes"] = h.body_bytes.into();
                        j["error"] = h.error.clone().into();
                        j["complete"] = (h.error.is_none() && h.status.is_some()).into();
                    }
                }
                j
            })
            .collect();
        let o = &self.out;
        let flow = FlowSummary::new(0, self.flow_name.clone(), &self.agg);
        let role = match self.role {
            Role::Server(_) => "server",
            Role::Client { .. } => "client",
        };
        // Why a connection stopped short, as a simulated run's `invariants.notes` say it
        // (give_up.rs); its `reset` row (reason 2) is in the events.
        let notes: Vec<String> = self
            .conns
            .iter()
            .filter_map(|c| {
                let g = c.tcp.gave_up()?;
                Some(format!(
                    "conn {}: the tcplab {role} {}; {} bytes received, {} bytes of its own acknowledged",
                    c.id,
                    g.describe(),
                    c.tcp.stats().bytes_read,
                    c.tcp.data_acked()
                ))
            })
            .collect();
        let j = serde_json::json!({
            "role": role,
            "addr": Ipv4Addr::from(self.addr).to_string(),
            "port": self.port,
            "cc": self.tcp.cc.name(),
            "stray_segments": self.stray,
            "notes": notes,
            "flows": [flow],
            "connections": conns,
            "events": {
                "t_ns": o.ev_t, "flow": o.ev_flow, "conn": o.ev_conn, "kind": o.ev_kind,
                "seq": o.ev_seq, "len": o.ev_len, "reason": o.ev_reason,
                "spurious": o.ev_spurious, "detected": o.ev_detected, "value": o.ev_value,
            },
            "timeseries": {
                "flow": o.ts_flow, "conn": o.ts_conn, "t_ns": o.ts_t, "cwnd": o.ts_cwnd,
                "ssthresh": o.ts_ssthresh, "srtt_ns": o.ts_srtt, "rttvar_ns": o.ts_rttvar,
                "rto_ns": o.ts_rto, "inflight": o.ts_inflight, "delivered": o.ts_delivered,
            },
            "event_kinds": crate::output::EVENT_KIND_NAMES,
            "reasons": tcplab_tcp::RtxReason::NAMES,
        });
        (j, violations)
    }
}

/// Write `data` (data offset `off`) into the receive ring whose oldest
/// unread byte is `read`; bytes below `read` are already taken, bytes past
/// the ring cannot be in the window (the `Connection` refuses them).
fn ring_put(ring: &mut [u8], read: u64, off: u64, data: &[u8]) {
    let n = ring.len() as u64;
    let lo = off.max(read);
    let hi = (off + data.len() as u64).min(read + n);
    let mut k = lo;
    while k < hi {
        let at = (k % n) as usize;
        let m = ((hi - k) as usize).min(ring.len() - at);
        let src = (k - off) as usize;
        ring[at..at + m].copy_from_slice(&data[src..src + m]);
        k += m as u64;
    }
}

/// A connection's counters into the flow row (as the simulator's `fold`,
/// one side only): what the host sent and what it received.
fn fold(agg: &mut FlowAgg, c: &EConn, now: Time) {
    let s = c.tcp.stats();
    agg.add_sender(s, c.log.spurious, c.log.spurious_fr);
    // One host is both ends of its connection: its own ACKs and window updates.
    agg.acks_sent += s.acks_sent;
    agg.window_updates += s.window_updates;
    // Delivered: the bytes the peer acknowledged plus those the host read.
    agg.bytes_delivered += c.tcp.data_acked() + s.bytes_read;
    agg.bytes_written += c.supplied;
    agg.connections += 1;
    if c.done_at.is_some() {
        agg.completed += 1;
    }
    agg.active_ns += c.done_at.unwrap_or(now) - c.opened_at;
    if s.bytes_read > 0 || c.tcp.data_acked() > 0 {
        agg.last_delivery = now;
    }
}
