//! Everything a run produces, as columns (handed to Python as NumPy arrays
//! and written as Parquet there) plus a JSON summary.

use serde::Serialize;
use tcplab_tcp::Time;

/// Kinds of rows in the event log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum EventKind {
    /// seq = first unacked offset, len, reason = backoff count, spurious = ground
    /// truth (the segment had reached / did reach the receiver), detected =
    /// whether a detector flagged it, value = RTO in seconds.
    Timeout = 0,
    /// reason = `tcplab_tcp::RtxReason`.
    Retransmit = 1,
    /// seq = recovery point, reason = 0 fast recovery / 1 SACK, value = cwnd.
    EnterRecovery = 2,
    ExitRecovery = 3,
    /// seq = the timeout id that was declared spurious.
    SpuriousDetected = 4,
    /// reason = side (0 sender, 1 receiver).
    Established = 5,
    Closed = 6,
    Reset = 7,
    /// seq = transfer size in bytes (0 = unlimited).
    ConnOpen = 8,
    /// seq = size, value = transfer time in seconds.
    TransferDone = 9,
    /// A TCP packet dropped at a full queue; reason = direction (0 data, 1 ACK),
    /// value = hop index.
    DropQueue = 10,
    /// A TCP packet lost on the wire; as above.
    DropLoss = 11,
    /// The sender saw every data byte acknowledged (by the receiver or a
    /// PEP): seq = size, value = seconds since its first data segment was sent.
    SenderAcked = 12,
    /// A spurious-timeout detector ended without declaring timeout `seq`
    /// spurious; reason = `tcplab_tcp::MissCause` code or 4 = genuine,
    /// spurious = the timeout's ground truth when known at that time.
    DetectorVerdict = 13,
    /// A fast retransmit began a recovery episode: seq = the segment's
    /// offset, len, reason = `RtxReason::FastRetransmit`, spurious = ground
    /// truth (the receiver already held the segment, or the first copy of it
    /// to arrive was sent before the fast retransmit), detected = whether the
    /// `spurious_fr` detector flagged it, value = cwnd before the reduction.
    FastRetransmit = 14,
    /// The `spurious_fr` detector declared the connection's fast retransmit
    /// number `seq` (0-based, in row order) spurious; raw reason code 1 if the
    /// response undid the reduction, 0 if not; value = cwnd after.
    SpuriousFrDetected = 15,
    /// A tail loss probe (RFC 8985 §7): seq, len of the probe; reason 0 new
    /// data, 1 retransmission, 2 its ACK showed it repaired a loss (cwnd
    /// reduced); value = cwnd.
    Tlp = 16,
    /// RACK (RFC 8985 §6.2 step 5) marked segments lost: seq = the lowest,
    /// len = bytes, reason 0 on an ACK, 1 by the reordering timer, value =
    /// the reordering window in seconds.
    RackLoss = 17,
}

pub const EVENT_KIND_NAMES: [&str; 18] = [
    "timeout",
    "retransmit",
    "enter_recovery",
    "exit_recovery",
    "spurious_detected",
    "established",
    "closed",
    "reset",
    "conn_open",
    "transfer_done",
    "drop_queue",
    "drop_loss",
    "sender_acked",
    "detector_verdict",
    "fast_retransmit",
    "spurious_fr_detected",
    "tlp",
    "rack_loss",
];

/// Kinds of rows in the segment trace (`SimConfig::trace`; the time-sequence
/// graph). Offsets are stream offsets as in the event log (1 = first data byte).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum SegmentKind {
    /// The sender handed a data segment to its first hop: seq, len; sent_ns = t.
    Send = 0,
    /// A data segment reached the receiver: seq, len; sent_ns = when this
    /// copy left the sender (a copy sent before a retransmission that arrives
    /// makes the retransmission unnecessary).
    Arrive = 1,
    /// An ACK reached the sender: seq = cumulative ACK offset, len = the
    /// advertised window in bytes (scaled).
    Ack = 2,
    /// One SACK block of the ACK just before it: seq = left edge, len =
    /// right − left (RFC 2018 §3; a first block below the ACK is a DSACK,
    /// RFC 2883 §4).
    Sack = 3,
}

pub const SEGMENT_KIND_NAMES: [&str; 4] = ["send", "arrive", "ack", "sack"];

/// Accumulated per-flow counters over all its connections.
#[derive(Default, Clone, Copy, Debug)]
pub struct FlowAgg {
    pub segments_sent: u64,
    pub data_segments_sent: u64,
    pub retransmitted_segments: u64,
    pub retransmitted_bytes: u64,
    pub timeouts: u64,
    pub spurious_timeouts: u64,
    pub spurious_detected: u64,
    pub fast_retransmits: u64,
    /// Fast retransmits whose segment had in fact reached the receiver (ground truth).
    pub spurious_fast_retransmits: u64,
    pub spurious_fr_detected: u64,
    pub fr_undone: u64,
    pub acks_sent: u64,
    pub window_probes: u64,
    pub window_updates: u64,
    pub bytes_delivered: u64,
    pub bytes_written: u64,
    pub connections: u64,
    pub completed: u64,
    pub active_ns: u64,
    pub dsacks: u64,
    pub last_delivery: Time,
    /// Spurious timeouts the flow's detector missed, by `tcplab_tcp::MissCause`.
    pub spurious_missed: [u64; 4],
    /// HyStart++ is on for this flow (`hystart = true`).
    pub hystart: bool,
    /// HyStart++ exits from slow start to CSS (RFC 9406 §4.2).
    pub hystart_css_entries: u64,
    /// The first of them: (time ns, cwnd bytes).
    pub hystart_first_css: Option<(Time, u64)>,
    /// CSS ends in congestion avoidance.
    pub hystart_ca_entries: u64,
}

impl FlowAgg {
    /// One connection's sender counters (its `Stats`) and the ground truth's
    /// spurious timeouts and fast retransmits, as the simulator (`sim.rs`) and
    /// the emulator's endpoint (`endpoint.rs`) fold a finished connection.
    pub fn add_sender(&mut self, s: &tcplab_tcp::Stats, spurious: u64, spurious_fr: u64) {
        self.segments_sent += s.segments_sent;
        self.data_segments_sent += s.data_segments_sent;
        self.retransmitted_segments += s.retransmitted_segments;
        self.retransmitted_bytes += s.retransmitted_bytes;
        self.timeouts += s.timeouts;
        self.spurious_timeouts += spurious;
        self.spurious_detected += s.spurious_detected;
        self.fast_retransmits += s.fast_retransmits;
        self.spurious_fast_retransmits += spurious_fr;
        self.spurious_fr_detected += s.spurious_fr_detected;
        self.fr_undone += s.fr_undone;
        self.window_probes += s.window_probes;
        self.dsacks += s.dsacks_rcvd;
    }
}

#[derive(Serialize, Debug)]
pub struct FlowSummary {
    pub id: usize,
    pub name: String,
    pub bytes_written: u64,
    pub bytes_delivered: u64,
    pub duration_s: f64,
    pub goodput_bps: f64,
    pub segments_sent: u64,
    pub data_segments_sent: u64,
    pub retransmitted_segments: u64,
    pub retransmitted_bytes: u64,
    pub timeouts: u64,
    pub spurious_timeouts: u64,
    pub spurious_detected: u64,
    pub fast_retransmits: u64,
    /// Fast retransmits whose segment had reached (or later reached) the
    /// receiver through a copy sent before them: ground truth.
    pub spurious_fast_retransmits: u64,
    /// Fast retransmits the `spurious_fr` detector declared spurious.
    pub spurious_fr_detected: u64,
    /// Of those, episodes whose cwnd/ssthresh reduction was undone.
    pub fr_undone: u64,
    pub acks_sent: u64,
    /// Zero-window probes the sender sent (RFC 9293 §3.8.6.1).
    pub window_probes: u64,
    /// ACKs the receiver sent only to reopen its window after a slow read.
    pub window_updates: u64,
    pub dsacks_received: u64,
    pub connections: u64,
    pub connections_completed: u64,
    /// Spurious timeouts the detector missed, by cause (0 without a detector).
    pub spurious_missed_finished: u64,
    pub spurious_missed_no_window: u64,
    pub spurious_missed_dupack: u64,
    pub spurious_missed_other: u64,
    /// HyStart++ (flows with `hystart = true` only): exits from slow start
    /// to Conservative Slow Start, the first one's time (s) and cwnd
    /// (bytes), and CSS ends in congestion avoidance (RFC 9406 §4.2).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hystart_css_entries: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hystart_first_css_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hystart_first_css_cwnd: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hystart_ca_entries: Option<u64>,
}

impl FlowSummary {
    pub fn new(id: usize, name: String, a: &FlowAgg) -> FlowSummary {
        let duration_s = a.active_ns as f64 * 1e-9;
        FlowSummary {
            id,
            name,
            bytes_written: a.bytes_written,
            bytes_delivered: a.bytes_delivered,
            duration_s,
            goodput_bps: if duration_s > 0.0 {
                a.bytes_delivered as f64 * 8.0 / duration_s
            } else {
                0.0
            },
            segments_sent: a.segments_sent,
            data_segments_sent: a.data_segments_sent,
            retransmitted_segments: a.retransmitted_segments,
            retransmitted_bytes: a.retransmitted_bytes,
            timeouts: a.timeouts,
            spurious_timeouts: a.spurious_timeouts,
            spurious_detected: a.spurious_detected,
            fast_retransmits: a.fast_retransmits,
            spurious_fast_retransmits: a.spurious_fast_retransmits,
            spurious_fr_detected: a.spurious_fr_detected,
            fr_undone: a.fr_undone,
            acks_sent: a.acks_sent,
            window_probes: a.window_probes,
            window_updates: a.window_updates,
            dsacks_received: a.dsacks,
            connections: a.connections,
            connections_completed: a.completed,
            spurious_missed_finished: a.spurious_missed[0],
            spurious_missed_no_window: a.spurious_missed[1],
            spurious_missed_dupack: a.spurious_missed[2],
            spurious_missed_other: a.spurious_missed[3],
            hystart_css_entries: a.hystart.then_some(a.hystart_css_entries),
            hystart_first_css_s: a.hystart_first_css.map(|(t, _)| t as f64 * 1e-9),
            hystart_first_css_cwnd: a.hystart_first_css.map(|(_, c)| c),
            hystart_ca_entries: a.hystart.then_some(a.hystart_ca_entries),
        }
    }
}

#[derive(Debug)]
pub struct Summary {
    pub name: String,
    pub seed: u64,
    pub sim_time_ns: Time,
    pub events: u64,
    pub packets: u64,
    pub stray: u64,
    pub flows: Vec<FlowSummary>,
    /// One row per hop and direction (from `Component::stats`).
    pub hops: Vec<serde_json::Value>,
    pub cross: Vec<(String, u64, u64, u64)>,
    pub violations: Vec<String>,
    pub notes: Vec<String>,
    pub pcaps: Vec<String>,
    /// One row per ping probe (`ping::PingRt::summary`).
    pub pings: Vec<serde_json::Value>,
}

impl Summary {
    pub fn to_json(&self) -> String {
        let cross: Vec<serde_json::Value> = self
            .cross
            .iter()
            .map(|(n, s, r, d)| serde_json::json!({"name": n, "sent": s, "received": r, "dropped": d}))
            .collect();
        serde_json::json!({
            "name": self.name,
            "seed": self.seed,
            "sim_time_s": self.sim_time_ns as f64 * 1e-9,
            "events": self.events,
            "packets": self.packets,
            "stray_packets": self.stray,
            "flows": self.flows,
            "links": self.hops,
            "cross": cross,
            "invariants": {
                "checked": [
                    "receiver delivers only bytes that arrived, in order, once",
                    "delivered <= sent <= written",
                    "a transfer acknowledged in full was delivered in full",
                    "no ACK acknowledges data never sent",
                    "sender scoreboard counters match a recount",
                    "packet conservation (created = delivered + dropped + in flight)",
                ],
                "violations": self.violations,
                "notes": self.notes,
            },
            "pcaps": self.pcaps,
            "pings": self.pings,
        })
        .to_string()
    }
}

/// Rows kept in memory before they are spilled to disk (`Record::spill_dir`).
pub const SPILL_ROWS: usize = 1 << 16;
/// Most rows of one table held in memory when there is nowhere to spill to
/// (about 1.2 GB of time series): past it the run stops with an error
/// saying how to record less or stream to disk.
pub const MEMORY_ROWS: usize = 1 << 24;
/// Bytes of one spilled time-series row: flow u32, conn u32, then t, cwnd,
/// ssthresh, srtt, rttvar, rto, inflight, delivered as 8-byte integers,
/// little-endian and packed (the column order of the Parquet table); with
/// the rate columns (`Output::ts_rates`) two more u64 follow.
pub const TS_RECORD: u64 = 72;
/// Bytes of one spilled event row: t i64, flow u32, conn u32, kind u8,
/// seq u64, len u32, reason u8, spurious i8, detected i8, value f64.
pub const EV_RECORD: u64 = 40;
/// Bytes of one spilled segment-trace row: t i64, flow u32, conn u32, kind
/// u8, seq u64, len u32, sent i64.
pub const SEG_RECORD: u64 = 37;
/// Bytes of one spilled queue sample: t i64, hop u32, dir u8, packets u64;
/// with a managed queue (`Output::q_managed`) its delay i64 follows.
pub const Q_RECORD: u64 = 21;
const EV_SPURIOUS_AT: u64 = 30;
const EV_DETECTED_AT: u64 = 31;

/// A table's rows written to a file as fixed-size records once more than
/// `SPILL_ROWS` are held (Python turns the file into Parquet row groups);
/// a late amendment of a written row is a write at its offset.
#[derive(Debug)]
struct Spill {
    file: std::fs::File,
    path: String,
    rows: u64,
}

impl Spill {
    fn create(dir: &str, name: &str) -> std::io::Result<Spill> {
        let path = std::path::Path::new(dir).join(name);
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)?;
        Ok(Spill {
            file,
            path: path.to_string_lossy().into_owned(),
            rows: 0,
        })
    }

    fn append(&mut self, bytes: &[u8], rows: usize) -> std::io::Result<()> {
        use std::io::{Seek, SeekFrom, Write};
        self.file.seek(SeekFrom::End(0))?;
        self.file.write_all(bytes)?;
        self.rows += rows as u64;
        Ok(())
    }

    fn put_byte(&self, offset: u64, v: u8) -> std::io::Result<()> {
        use std::os::unix::fs::FileExt;
        self.file.write_all_at(&[v], offset)
    }

    fn get_byte(&self, offset: u64) -> std::io::Result<u8> {
        use std::os::unix::fs::FileExt;
        let mut b = [0u8];
        self.file.read_exact_at(&mut b, offset)?;
        Ok(b[0])
    }
}

/// One row of the event log (`events.parquet`; columns in `docs/outputs.md`).
/// `EventRow::new` fills the columns a kind does not use (0, and −1 for
/// "not applicable"); a call site sets only those its kind does:
/// `EventRow { seq, len, value: cwnd as f64, ..EventRow::new(now, flow, conn, EventKind::Tlp) }`.
#[derive(Clone, Copy, Debug)]
pub struct EventRow {
    pub t: Time,
    pub flow: u32,
    pub conn: u32,
    pub kind: EventKind,
    /// The sequence number (stream offset) the event concerns, or the id it refers to.
    pub seq: u64,
    /// Bytes.
    pub len: u32,
    /// A code whose meaning depends on `kind`.
    pub reason: u8,
    /// Ground truth for a timeout or fast retransmit: 1 spurious, 0 not, −1 not applicable.
    pub spurious: i8,
    /// Whether the sender detected it as spurious: 1, 0, −1 not applicable.
    pub detected: i8,
    /// A number that depends on `kind`.
    pub value: f64,
}

impl EventRow {
    /// A row of `kind` for connection `conn` of flow `flow` at `t`, with
    /// `seq`, `len`, `reason` and `value` 0 and `spurious`, `detected` −1.
    #[inline]
    pub fn new(t: Time, flow: u32, conn: u32, kind: EventKind) -> EventRow {
        EventRow {
            t,
            flow,
            conn,
            kind,
            seq: 0,
            len: 0,
            reason: 0,
            spurious: -1,
            detected: -1,
            value: 0.0,
        }
    }
}

/// The tables that spill (`Output::append_spill`).
#[derive(Clone, Copy)]
enum Table {
    Timeseries,
    Events,
    Segments,
    Queues,
}

/// Where a spilled table is: the file and how many of the table's rows it
/// holds (they come before the rows still in memory).
#[derive(Debug, Clone)]
pub struct Spilled {
    pub path: String,
    pub rows: u64,
}

#[derive(Default, Debug)]
pub struct Output {
    // time series
    pub ts_flow: Vec<u32>,
    pub ts_conn: Vec<u32>,
    pub ts_t: Vec<i64>,
    pub ts_cwnd: Vec<u64>,
    pub ts_ssthresh: Vec<u64>,
    pub ts_srtt: Vec<i64>,
    pub ts_rttvar: Vec<i64>,
    pub ts_rto: Vec<i64>,
    pub ts_inflight: Vec<u64>,
    pub ts_delivered: Vec<u64>,
    /// The rate columns, present only when some flow paces or estimates
    /// delivery rates (`pacing_rate_bps`, `delivery_rate_bps`; 0 for a flow
    /// without them), so other runs' tables keep their columns.
    pub ts_rates: bool,
    pub ts_pacing_rate: Vec<u64>,
    pub ts_delivery_rate: Vec<u64>,
    // events
    pub ev_t: Vec<i64>,
    pub ev_flow: Vec<u32>,
    pub ev_conn: Vec<u32>,
    pub ev_kind: Vec<u8>,
    pub ev_seq: Vec<u64>,
    pub ev_len: Vec<u32>,
    pub ev_reason: Vec<u8>,
    pub ev_spurious: Vec<i8>,
    pub ev_detected: Vec<i8>,
    pub ev_value: Vec<f64>,
    // segment trace (only with `SimConfig::trace`)
    pub seg_t: Vec<i64>,
    pub seg_flow: Vec<u32>,
    pub seg_conn: Vec<u32>,
    pub seg_kind: Vec<u8>,
    pub seg_seq: Vec<u64>,
    pub seg_len: Vec<u32>,
    pub seg_sent: Vec<i64>,
    // queue samples (only with `SimConfig::trace`): one row per hop,
    // direction and `sample_interval` for hops whose queue is observable
    pub q_t: Vec<i64>,
    pub q_hop: Vec<u32>,
    pub q_dir: Vec<u8>,
    pub q_packets: Vec<u64>,
    /// Whether the queue samples carry `q_delay` (runs with a managed
    /// queue, `aqm`; other runs' tables keep their columns).
    pub q_managed: bool,
    /// The queueing delay of a managed queue: the sojourn of the latest
    /// packet to leave it, ns; -1 for a queue without a discipline.
    pub q_delay: Vec<i64>,
    pub summary: Option<Summary>,
    /// Tables not asked for are not recorded (`Record`).
    skip_timeseries: bool,
    skip_events: bool,
    /// With events off: (spurious, detected) of the rows that are amended
    /// later (timeouts, fast retransmits), which the summary still needs.
    marks: Vec<[i8; 2]>,
    spill_dir: Option<String>,
    /// `MEMORY_ROWS` (smaller in tests).
    memory_rows: usize,
    ts_spill: Option<Spill>,
    ev_spill: Option<Spill>,
    seg_spill: Option<Spill>,
    q_spill: Option<Spill>,
    /// The first error writing a spill file (the run fails with it).
    pub spill_error: Option<String>,
}

/// A row that is never amended (events are not recorded).
const NO_ROW: usize = usize::MAX;

impl Output {
    /// An output that records the time series and the events only if asked,
    /// spilling them to files in `spill_dir` beyond `SPILL_ROWS` rows.
    pub fn new(timeseries: bool, events: bool, spill_dir: Option<String>) -> Output {
        Output {
            skip_timeseries: !timeseries,
            skip_events: !events,
            spill_dir,
            memory_rows: MEMORY_ROWS,
            ..Output::default()
        }
    }

    /// The spilled part of each table that has one: (table name, where).
    pub fn spilled(&self) -> Vec<(&'static str, Spilled)> {
        [
            ("timeseries", &self.ts_spill),
            ("events", &self.ev_spill),
            ("segments", &self.seg_spill),
            ("queues", &self.q_spill),
        ]
        .into_iter()
        .filter_map(|(name, s)| {
            s.as_ref().map(|s| {
                let w = Spilled {
                    path: s.path.clone(),
                    rows: s.rows,
                };
                (name, w)
            })
        })
        .collect()
    }

    fn over_cap(&mut self, table: &str) {
        if self.spill_error.is_none() {
            self.spill_error = Some(format!(
                "the {table} table reached {} rows in memory: write the outputs to a \
                 directory (--out; they stream to disk) or record only the summary (tcplab.run(..., tables=False))",
                self.memory_rows
            ));
        }
    }

    /// The run must stop: a spill file failed or a table is over `MEMORY_ROWS`.
    pub fn failed(&self) -> bool {
        self.spill_error.is_some()
    }

    fn spill_failed(&mut self, name: &str, e: std::io::Error) {
        if self.spill_error.is_none() {
            let dir = self.spill_dir.as_deref().unwrap_or("");
            let path = std::path::Path::new(dir).join(name);
            self.spill_error = Some(format!(
                "{}{}: {e}",
                crate::component::OUTPUT_ERROR,
                path.display()
            ));
        }
    }

    fn spill_events(&mut self) {
        let n = self.ev_t.len();
        let mut buf = Vec::with_capacity(n * EV_RECORD as usize);
        for i in 0..n {
            buf.extend_from_slice(&self.ev_t[i].to_le_bytes());
            buf.extend_from_slice(&self.ev_flow[i].to_le_bytes());
            buf.extend_from_slice(&self.ev_conn[i].to_le_bytes());
            buf.push(self.ev_kind[i]);
            buf.extend_from_slice(&self.ev_seq[i].to_le_bytes());
            buf.extend_from_slice(&self.ev_len[i].to_le_bytes());
            buf.push(self.ev_reason[i]);
            buf.push(self.ev_spurious[i] as u8);
            buf.push(self.ev_detected[i] as u8);
            buf.extend_from_slice(&self.ev_value[i].to_le_bytes());
        }
        if !self.append_spill(Table::Events, &buf, n) {
            return;
        }
        self.ev_t.clear();
        self.ev_flow.clear();
        self.ev_conn.clear();
        self.ev_kind.clear();
        self.ev_seq.clear();
        self.ev_len.clear();
        self.ev_reason.clear();
        self.ev_spurious.clear();
        self.ev_detected.clear();
        self.ev_value.clear();
    }

    fn spill_timeseries(&mut self) {
        let n = self.ts_t.len();
        let mut buf = Vec::with_capacity(n * TS_RECORD as usize);
        for i in 0..n {
            buf.extend_from_slice(&self.ts_flow[i].to_le_bytes());
            buf.extend_from_slice(&self.ts_conn[i].to_le_bytes());
            buf.extend_from_slice(&self.ts_t[i].to_le_bytes());
            buf.extend_from_slice(&self.ts_cwnd[i].to_le_bytes());
            buf.extend_from_slice(&self.ts_ssthresh[i].to_le_bytes());
            buf.extend_from_slice(&self.ts_srtt[i].to_le_bytes());
            buf.extend_from_slice(&self.ts_rttvar[i].to_le_bytes());
            buf.extend_from_slice(&self.ts_rto[i].to_le_bytes());
            buf.extend_from_slice(&self.ts_inflight[i].to_le_bytes());
            buf.extend_from_slice(&self.ts_delivered[i].to_le_bytes());
            if self.ts_rates {
                buf.extend_from_slice(&self.ts_pacing_rate[i].to_le_bytes());
                buf.extend_from_slice(&self.ts_delivery_rate[i].to_le_bytes());
            }
        }
        if !self.append_spill(Table::Timeseries, &buf, n) {
            return;
        }
        self.ts_flow.clear();
        self.ts_conn.clear();
        self.ts_t.clear();
        self.ts_cwnd.clear();
        self.ts_ssthresh.clear();
        self.ts_srtt.clear();
        self.ts_rttvar.clear();
        self.ts_rto.clear();
        self.ts_inflight.clear();
        self.ts_delivered.clear();
        self.ts_pacing_rate.clear();
        self.ts_delivery_rate.clear();
    }

    /// The segment trace's rows to `.segments.spill` (`SEG_RECORD`).
    fn spill_segments(&mut self) {
        let n = self.seg_t.len();
        let mut buf = Vec::with_capacity(n * SEG_RECORD as usize);
        for i in 0..n {
            buf.extend_from_slice(&self.seg_t[i].to_le_bytes());
            buf.extend_from_slice(&self.seg_flow[i].to_le_bytes());
            buf.extend_from_slice(&self.seg_conn[i].to_le_bytes());
            buf.push(self.seg_kind[i]);
            buf.extend_from_slice(&self.seg_seq[i].to_le_bytes());
            buf.extend_from_slice(&self.seg_len[i].to_le_bytes());
            buf.extend_from_slice(&self.seg_sent[i].to_le_bytes());
        }
        if self.append_spill(Table::Segments, &buf, n) {
            self.seg_t.clear();
            self.seg_flow.clear();
            self.seg_conn.clear();
            self.seg_kind.clear();
            self.seg_seq.clear();
            self.seg_len.clear();
            self.seg_sent.clear();
        }
    }

    /// The queue samples to `.queues.spill` (`Q_RECORD`, and the delay of a
    /// managed queue).
    fn spill_queues(&mut self) {
        let n = self.q_t.len();
        let mut buf = Vec::with_capacity(n * (Q_RECORD as usize + 8));
        for i in 0..n {
            buf.extend_from_slice(&self.q_t[i].to_le_bytes());
            buf.extend_from_slice(&self.q_hop[i].to_le_bytes());
            buf.push(self.q_dir[i]);
            buf.extend_from_slice(&self.q_packets[i].to_le_bytes());
            if self.q_managed {
                buf.extend_from_slice(&self.q_delay[i].to_le_bytes());
            }
        }
        if self.append_spill(Table::Queues, &buf, n) {
            self.q_t.clear();
            self.q_hop.clear();
            self.q_dir.clear();
            self.q_packets.clear();
            self.q_delay.clear();
        }
    }

    /// Append `rows` records to a table's spill file (created on first use);
    /// false (and the run fails) if that cannot be done.
    fn append_spill(&mut self, table: Table, buf: &[u8], rows: usize) -> bool {
        let Some(dir) = self.spill_dir.clone() else {
            return false;
        };
        let (slot, name) = match table {
            Table::Timeseries => (&mut self.ts_spill, ".timeseries.spill"),
            Table::Events => (&mut self.ev_spill, ".events.spill"),
            Table::Segments => (&mut self.seg_spill, ".segments.spill"),
            Table::Queues => (&mut self.q_spill, ".queues.spill"),
        };
        if slot.is_none() {
            match Spill::create(&dir, name) {
                Ok(s) => *slot = Some(s),
                Err(e) => {
                    self.spill_failed(name, e);
                    return false;
                }
            }
        }
        if let Err(e) = slot.as_mut().unwrap().append(buf, rows) {
            self.spill_failed(name, e);
            return false;
        }
        true
    }

    fn ev_spilled(&self) -> usize {
        self.ev_spill.as_ref().map_or(0, |s| s.rows as usize)
    }

    /// Append an event row; returns its index (an opaque handle for
    /// `set_spurious`/`set_detected`/`spurious`/`detected`).
    pub fn event(&mut self, r: EventRow) -> usize {
        self.event_marked(r, true)
    }

    /// `event`, where `marked` says whether the row's ground-truth and
    /// detector marks are read later even when events are not recorded (a
    /// timeout of a flow that runs a detector: `Sim::classify_misses`).
    /// Unmarked rows then cost nothing.
    pub fn event_marked(&mut self, r: EventRow, marked: bool) -> usize {
        if self.skip_events {
            if marked && matches!(r.kind, EventKind::Timeout | EventKind::FastRetransmit) {
                self.marks.push([r.spurious, r.detected]);
                return self.marks.len() - 1;
            }
            return NO_ROW;
        }
        if self.ev_t.len() >= SPILL_ROWS && self.spill_dir.is_some() {
            self.spill_events();
        } else if self.ev_t.len() >= self.memory_rows {
            self.over_cap("events");
            return NO_ROW;
        }
        self.ev_t.push(r.t as i64);
        self.ev_flow.push(r.flow);
        self.ev_conn.push(r.conn);
        self.ev_kind.push(r.kind as u8);
        self.ev_seq.push(r.seq);
        self.ev_len.push(r.len);
        self.ev_reason.push(r.reason);
        self.ev_spurious.push(r.spurious);
        self.ev_detected.push(r.detected);
        self.ev_value.push(r.value);
        self.ev_spilled() + self.ev_t.len() - 1
    }

    /// Are events recorded (the events table)?
    pub fn records_events(&self) -> bool {
        !self.skip_events
    }

    fn set_mark(&mut self, row: usize, col: usize, v: i8) {
        if row == NO_ROW {
            return;
        }
        if self.skip_events {
            self.marks[row][col] = v;
            return;
        }
        let base = self.ev_spilled();
        if row >= base {
            let col = if col == 0 {
                &mut self.ev_spurious
            } else {
                &mut self.ev_detected
            };
            col[row - base] = v;
        } else {
            let at = row as u64 * EV_RECORD + [EV_SPURIOUS_AT, EV_DETECTED_AT][col];
            if let Err(e) = self.ev_spill.as_ref().unwrap().put_byte(at, v as u8) {
                self.spill_failed(".events.spill", e);
            }
        }
    }

    fn mark(&self, row: usize, col: usize) -> i8 {
        if row == NO_ROW {
            return 0;
        }
        if self.skip_events {
            return self.marks[row][col];
        }
        let base = self.ev_spilled();
        if row >= base {
            [&self.ev_spurious, &self.ev_detected][col][row - base]
        } else {
            let at = row as u64 * EV_RECORD + [EV_SPURIOUS_AT, EV_DETECTED_AT][col];
            // A read error reads as "not set" (and a write to the file failed first).
            self.ev_spill
                .as_ref()
                .unwrap()
                .get_byte(at)
                .map_or(0, |b| b as i8)
        }
    }

    /// Append a segment-trace row.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub fn segment(
        &mut self,
        t: Time,
        flow: u32,
        conn: u32,
        kind: SegmentKind,
        seq: u64,
        len: u32,
        sent: Time,
    ) {
        if self.seg_t.len() >= SPILL_ROWS && self.spill_dir.is_some() {
            self.spill_segments();
        } else if self.seg_t.len() >= self.memory_rows {
            return self.over_cap("segments");
        }
        self.seg_t.push(t as i64);
        self.seg_flow.push(flow);
        self.seg_conn.push(conn);
        self.seg_kind.push(kind as u8);
        self.seg_seq.push(seq);
        self.seg_len.push(len);
        self.seg_sent.push(sent as i64);
    }

    /// Append a queue sample (packets waiting or in service; the managed
    /// queue's delay, `Component::queue_delay`).
    pub fn queue(&mut self, t: Time, hop: u32, dir: u8, packets: u64, delay: Option<Time>) {
        if self.q_t.len() >= SPILL_ROWS && self.spill_dir.is_some() {
            self.spill_queues();
        } else if self.q_t.len() >= self.memory_rows {
            return self.over_cap("queues");
        }
        self.q_t.push(t as i64);
        self.q_hop.push(hop);
        self.q_dir.push(dir);
        self.q_packets.push(packets);
        if self.q_managed {
            self.q_delay
                .push(delay.map_or(-1, |d| d.min(i64::MAX as u64) as i64));
        }
    }

    pub fn set_spurious(&mut self, row: usize, v: i8) {
        self.set_mark(row, 0, v);
    }

    pub fn set_detected(&mut self, row: usize, v: i8) {
        self.set_mark(row, 1, v);
    }

    /// The ground truth recorded on event row `row`.
    pub fn spurious(&self, row: usize) -> i8 {
        self.mark(row, 0)
    }

    /// Whether a detector flagged event row `row`.
    pub fn detected(&self, row: usize) -> i8 {
        self.mark(row, 1)
    }

    #[allow(clippy::too_many_arguments)]
    pub fn sample(
        &mut self,
        t: Time,
        flow: u32,
        conn: u32,
        cwnd: u64,
        ssthresh: u64,
        srtt: Time,
        rttvar: Time,
        rto: Time,
        inflight: u64,
        delivered: u64,
        rates: (u64, u64),
    ) {
        if self.skip_timeseries {
            return;
        }
        if self.ts_t.len() >= SPILL_ROWS && self.spill_dir.is_some() {
            self.spill_timeseries();
        } else if self.ts_t.len() >= self.memory_rows {
            return self.over_cap("timeseries");
        }
        self.ts_t.push(t as i64);
        self.ts_flow.push(flow);
        self.ts_conn.push(conn);
        self.ts_cwnd.push(cwnd);
        self.ts_ssthresh.push(ssthresh);
        self.ts_srtt.push(srtt as i64);
        self.ts_rttvar.push(rttvar as i64);
        self.ts_rto.push(rto as i64);
        self.ts_inflight.push(inflight);
        self.ts_delivered.push(delivered);
        if self.ts_rates {
            self.ts_pacing_rate.push(rates.0);
            self.ts_delivery_rate.push(rates.1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(o: &mut Output, i: u64, kind: EventKind) -> usize {
        o.event(EventRow {
            seq: i,
            len: 1,
            value: 0.5,
            ..EventRow::new(i, 0, 0, kind)
        })
    }

    #[test]
    fn events_off_keep_only_the_marks_the_summary_needs() {
        let mut o = Output::new(false, false, None);
        assert_eq!(ev(&mut o, 1, EventKind::Retransmit), NO_ROW);
        let r = ev(&mut o, 2, EventKind::Timeout);
        o.set_spurious(r, 1);
        o.set_detected(NO_ROW, 1);
        assert_eq!((o.spurious(r), o.detected(r)), (1, -1));
        o.sample(0, 0, 0, 1, 1, 1, 1, 1, 1, 1, (0, 0));
        assert!(o.ev_t.is_empty() && o.ts_t.is_empty());
    }

    #[test]
    fn without_a_spill_dir_a_table_stops_at_the_memory_cap() {
        let mut o = Output::new(true, true, None);
        o.memory_rows = 100;
        for i in 0..150 {
            ev(&mut o, i, EventKind::Retransmit);
            o.sample(i, 0, 0, 1, 1, 1, 1, 1, 1, 1, (0, 0));
        }
        assert_eq!((o.ev_t.len(), o.ts_t.len()), (100, 100));
        assert!(o.failed());
        let e = o.spill_error.unwrap();
        assert!(
            e.starts_with("the events table reached 100 rows in memory"),
            "{e}"
        );
    }

    #[test]
    fn spilled_rows_are_amended_in_the_file() {
        let dir = std::env::temp_dir().join(format!("tcplab-spill-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut o = Output::new(true, true, Some(dir.to_string_lossy().into_owned()));
        let rows: Vec<usize> = (0..SPILL_ROWS as u64 + 10)
            .map(|i| ev(&mut o, i, EventKind::Timeout))
            .collect();
        assert_eq!(rows[SPILL_ROWS + 9], SPILL_ROWS + 9);
        assert_eq!(o.ev_t.len(), 10);
        o.set_spurious(rows[3], 1);
        o.set_detected(rows[SPILL_ROWS + 2], 0);
        assert_eq!((o.spurious(rows[3]), o.detected(rows[3])), (1, -1));
        assert_eq!(o.detected(rows[SPILL_ROWS + 2]), 0);
        let spilled = o.spilled();
        let (name, s) = spilled[0].clone();
        assert_eq!(name, "events");
        assert_eq!(s.rows, SPILL_ROWS as u64);
        let bytes = std::fs::read(&s.path).unwrap();
        assert_eq!(bytes.len() as u64, SPILL_ROWS as u64 * EV_RECORD);
        let r3 = &bytes[3 * EV_RECORD as usize..4 * EV_RECORD as usize];
        assert_eq!(i64::from_le_bytes(r3[..8].try_into().unwrap()), 3);
        assert_eq!(r3[EV_SPURIOUS_AT as usize], 1);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_segment_trace_and_queue_samples_spill_and_stay_bounded() {
        let dir = std::env::temp_dir().join(format!("tcplab-seg-spill-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut o = Output::new(true, true, Some(dir.to_string_lossy().into_owned()));
        o.q_managed = true;
        let n = 3 * SPILL_ROWS as u64 + 5;
        for i in 0..n {
            o.segment(i, 1, 2, SegmentKind::Arrive, 1000 + i, 1448, i / 2);
            o.queue(i, 0, 1, i, Some(7));
            // what is held in memory never exceeds one spill's worth
            assert!(o.seg_t.len() <= SPILL_ROWS && o.q_t.len() <= SPILL_ROWS);
        }
        let spilled = o.spilled();
        let names: Vec<&str> = spilled.iter().map(|(n, _)| *n).collect();
        assert_eq!(names, ["segments", "queues"]);
        let seg = std::fs::read(&spilled[0].1.path).unwrap();
        assert_eq!(spilled[0].1.rows + o.seg_t.len() as u64, n);
        assert_eq!(seg.len() as u64, spilled[0].1.rows * SEG_RECORD);
        // row 5: t, flow, conn, kind, seq, len, sent
        let r = &seg[5 * SEG_RECORD as usize..6 * SEG_RECORD as usize];
        assert_eq!(i64::from_le_bytes(r[..8].try_into().unwrap()), 5);
        assert_eq!(u32::from_le_bytes(r[8..12].try_into().unwrap()), 1);
        assert_eq!(u32::from_le_bytes(r[12..16].try_into().unwrap()), 2);
        assert_eq!(r[16], SegmentKind::Arrive as u8);
        assert_eq!(u64::from_le_bytes(r[17..25].try_into().unwrap()), 1005);
        assert_eq!(u32::from_le_bytes(r[25..29].try_into().unwrap()), 1448);
        assert_eq!(i64::from_le_bytes(r[29..37].try_into().unwrap()), 2);
        let q = std::fs::read(&spilled[1].1.path).unwrap();
        assert_eq!(q.len() as u64, spilled[1].1.rows * (Q_RECORD + 8));
        let r = &q[5 * (Q_RECORD + 8) as usize..];
        assert_eq!(u64::from_le_bytes(r[13..21].try_into().unwrap()), 5);
        assert_eq!(i64::from_le_bytes(r[21..29].try_into().unwrap()), 7);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
