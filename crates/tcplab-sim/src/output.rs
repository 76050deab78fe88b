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
}

pub const EVENT_KIND_NAMES: [&str; 16] = [
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
    pub summary: Option<Summary>,
}

impl Output {
    /// Append an event row; returns its index.
    #[allow(clippy::too_many_arguments)]
    pub fn event(
        &mut self,
        t: Time,
        flow: u32,
        conn: u32,
        kind: EventKind,
        seq: u64,
        len: u32,
        reason: u8,
        spurious: i8,
        detected: i8,
        value: f64,
    ) -> usize {
        self.ev_t.push(t as i64);
        self.ev_flow.push(flow);
        self.ev_conn.push(conn);
        self.ev_kind.push(kind as u8);
        self.ev_seq.push(seq);
        self.ev_len.push(len);
        self.ev_reason.push(reason);
        self.ev_spurious.push(spurious);
        self.ev_detected.push(detected);
        self.ev_value.push(value);
        self.ev_t.len() - 1
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
        self.seg_t.push(t as i64);
        self.seg_flow.push(flow);
        self.seg_conn.push(conn);
        self.seg_kind.push(kind as u8);
        self.seg_seq.push(seq);
        self.seg_len.push(len);
        self.seg_sent.push(sent as i64);
    }

    /// Append a queue sample (packets waiting or in service).
    pub fn queue(&mut self, t: Time, hop: u32, dir: u8, packets: u64) {
        self.q_t.push(t as i64);
        self.q_hop.push(hop);
        self.q_dir.push(dir);
        self.q_packets.push(packets);
    }

    pub fn set_spurious(&mut self, row: usize, v: i8) {
        self.ev_spurious[row] = v;
    }

    pub fn set_detected(&mut self, row: usize, v: i8) {
        self.ev_detected[row] = v;
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
    ) {
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
    }
}
