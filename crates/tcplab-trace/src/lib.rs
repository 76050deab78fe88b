//! tcplab-trace: streaming TCP trace analysis of pcap/pcapng captures.
//!
//! `capture` frames records, `decode` strips link/IP headers and decodes TCP
//! with `tcplab_tcp::wire`, `analyze` follows every connection and
//! direction: RTT samples and the RFC 6298 RTO they imply, retransmissions
//! by class, and for each retransmission (RTOs above all) whether it was
//! spurious, with the evidence. `analyze_file` ties them together.

pub mod analyze;
pub mod capture;
pub mod decode;
pub mod synth;

use std::fs::File;
use std::io::BufReader;
use std::path::Path;
use std::time::Instant;

use serde_json::{json, Value};

pub use analyze::{Analyzer, ConnStats, Evidence, Options, RtoModel, RtxClass, Side};
pub use capture::{CaptureError, CaptureReader};
pub use decode::{decode, Skip};

/// Whole-file results.
pub struct Report {
    pub file: String,
    pub records: u64,
    pub tcp_packets: u64,
    pub skipped: [u64; 6],
    pub truncated_tail: bool,
    pub corrupt: Option<String>,
    pub midstream_conns: u64,
    pub wall_s: f64,
    pub side: Side,
    pub analyzer: Analyzer,
}

/// A connection filter: `A:PORT-B:PORT`, `PORT` (either end) or a
/// connection index (`#N`).
#[derive(Clone, Debug)]
pub enum Filter {
    Port(u16),
    Index(u32),
    Pair(String),
}

impl Filter {
    pub fn parse(s: &str) -> Result<Filter, String> {
        if let Some(n) = s.strip_prefix('#') {
            return n.parse().map(Filter::Index).map_err(|_| {
                format!("--filter {s:?}: '#' must be followed by a connection index")
            });
        }
        if let Ok(p) = s.parse::<u16>() {
            return Ok(Filter::Port(p));
        }
        if s.contains('-') && s.contains(':') {
            return Ok(Filter::Pair(s.to_string()));
        }
        Err(format!(
            "--filter {s:?}: must be a port, #INDEX or ADDR:PORT-ADDR:PORT"
        ))
    }

    fn matches(&self, c: &ConnStats) -> bool {
        self.matches_conn(c.id, c.a, c.b)
    }

    /// Whether connection `id` between `a` and `b` passes.
    pub fn matches_conn(&self, id: u32, a: (decode::Addr, u16), b: (decode::Addr, u16)) -> bool {
        match self {
            Filter::Port(p) => a.1 == *p || b.1 == *p,
            Filter::Index(i) => id == *i,
            Filter::Pair(s) => {
                let ab = format!("{}:{}-{}:{}", a.0, a.1, b.0, b.1);
                let ba = format!("{}:{}-{}:{}", b.0, b.1, a.0, a.1);
                *s == ab || *s == ba
            }
        }
    }
}

/// Analyses a capture held in any reader (`name` is used in messages).
pub fn analyze_reader<R: std::io::Read>(r: R, name: &str, opts: Options) -> Result<Report, String> {
    analyze_reader_until(r, name, opts, &mut || false)
}

/// How many records pass between two calls of an analysis's `stop`.
pub const STOP_EVERY: u64 = 1 << 16;

/// `analyze_reader`, asking `stop()` every `STOP_EVERY` records whether to
/// give up (Ctrl-C): then the error is `"interrupted"`.
pub fn analyze_reader_until<R: std::io::Read>(
    r: R,
    name: &str,
    opts: Options,
    stop: &mut dyn FnMut() -> bool,
) -> Result<Report, String> {
    let start = Instant::now();
    let side = opts.side;
    let mut rd = CaptureReader::new(r, name).map_err(|e| match e {
        CaptureError::NotACapture(m) => m,
        CaptureError::Io(e) => format!("{name}: read error: {e}"),
    })?;
    let mut an = Analyzer::new(opts);
    let mut skipped = [0u64; 6];
    let mut seen = 0u64;
    loop {
        let rec = match rd.next_record() {
            Ok(Some(r)) => r,
            Ok(None) => break,
            Err(e) => return Err(format!("{name}: read error: {e}")),
        };
        seen += 1;
        if seen.is_multiple_of(STOP_EVERY) && stop() {
            return Err("interrupted".into());
        }
        let t = rec.ts_ns;
        match decode(rec.linktype, rec.data) {
            Ok(p) => an.packet(t, &p),
            Err(s) => skipped[Skip::ALL.iter().position(|&x| x == s).unwrap_or(0)] += 1,
        }
    }
    an.finish();
    Ok(Report {
        file: name.to_string(),
        records: rd.records,
        tcp_packets: an.tcp_packets,
        skipped,
        truncated_tail: rd.truncated_tail,
        corrupt: rd.corrupt.clone(),
        midstream_conns: an.midstream_conns,
        wall_s: start.elapsed().as_secs_f64(),
        side,
        analyzer: an,
    })
}

/// Reads and analyses `path`. Errors (not a capture, unreadable) are one
/// line naming the file and the problem.
pub fn analyze_file(path: &Path, opts: Options) -> Result<Report, String> {
    analyze_file_until(path, opts, &mut || false)
}

/// `analyze_file` with a `stop` check (`analyze_reader_until`).
pub fn analyze_file_until(
    path: &Path,
    opts: Options,
    stop: &mut dyn FnMut() -> bool,
) -> Result<Report, String> {
    let name = path.display().to_string();
    let f = File::open(path).map_err(|e| format!("{name}: cannot open: {e}"))?;
    analyze_reader_until(BufReader::with_capacity(1 << 20, f), &name, opts, stop)
}

fn half_json(h: &analyze::HalfStats) -> Value {
    let dur = h.last_ns.saturating_sub(h.first_ns) as f64 * 1e-9;
    let goodput = if dur > 0.0 {
        h.bytes_acked as f64 * 8.0 / dur
    } else {
        0.0
    };
    let mb = h.bytes_acked.max(h.bytes_unique) as f64 / 1e6;
    json!({
        "side": h.side.map(|s| s.name()),
        "packets": h.packets,
        "data_packets": h.data_packets,
        "bytes_sent": h.bytes_sent,
        "bytes_unique": h.bytes_unique,
        "bytes_acked": h.bytes_acked,
        "duration_s": dur,
        "goodput_bps": goodput,
        "syn": h.syn,
        "mss": h.mss,
        "wscale": h.wscale,
        "sack_permitted": h.sack_permitted,
        "timestamps": h.timestamps,
        "retransmissions": h.retransmissions,
        "fast_retransmits": h.by_class[RtxClass::FastRetransmit as usize],
        "fast_recovery_retransmissions": h.by_class[RtxClass::FastRecovery as usize],
        "rto_retransmissions": h.by_class[RtxClass::Rto as usize],
        "go_back_n": h.by_class[RtxClass::GoBackN as usize],
        "tlp": h.by_class[RtxClass::Tlp as usize],
        "other_retransmissions": h.by_class[RtxClass::Other as usize],
        "rtos": h.rtos,
        "rto_episodes": h.rto_episodes,
        "spurious_rtos": h.spurious_rtos,
        "spurious_rto_episodes": h.spurious_rto_episodes,
        "spurious_retransmissions": h.spurious_retransmissions,
        "undecided_retransmissions": h.undecided,
        "sto_per_mb": if mb > 0.0 { h.spurious_rto_episodes as f64 / mb } else { 0.0 },
        "unnecessary_per_sto": if h.spurious_rto_episodes > 0 {
            Some(h.spurious_retransmissions as f64 / h.spurious_rto_episodes as f64)
        } else { None },
        "dsacks": h.dsacks,
        "dupacks": h.dupacks,
        "reordered": h.reordered,
        "duplicates": h.duplicates,
        "zero_window_s": h.zero_window_ns as f64 * 1e-9,
        "rwnd_limited_s": h.rwnd_limited_ns as f64 * 1e-9,
        "delay_spikes": h.delay_spikes,
        "max_ack_gap_s": h.max_ack_gap_ns as f64 * 1e-9,
        "rtt_samples": h.rtt_samples,
        "rtt_min_ms": h.rtt_min_ns as f64 * 1e-6,
        "srtt_ms": h.srtt_ns as f64 * 1e-6,
        "rto_ms": h.rto_ns as f64 * 1e-6,
    })
}

impl Report {
    /// Connections that pass `filter`.
    pub fn connections<'a>(
        &'a self,
        filter: Option<&'a Filter>,
    ) -> impl Iterator<Item = &'a ConnStats> + 'a {
        self.analyzer
            .finished
            .iter()
            .filter(move |c| filter.is_none_or(|f| f.matches(c)))
    }

    /// The `--json` object: capture totals and one entry per connection and
    /// data direction (directions that carried no data are left out).
    pub fn to_json(&self, filter: Option<&Filter>) -> Value {
        let mut conns = Vec::new();
        let totals = self.each_row(filter, |v| conns.push(v));
        let mut top = self.top_json(totals);
        top["connections"] = Value::Array(conns);
        top
    }

    /// `to_json(filter).to_string()`, written one connection row at a time:
    /// only the text is held, not a tree of values for every row.
    pub fn to_json_string(&self, filter: Option<&Filter>) -> String {
        let mut rows = String::new();
        let totals = self.each_row(filter, |v| {
            if !rows.is_empty() {
                rows.push(',');
            }
            rows.push_str(&v.to_string());
        });
        let mut top = self.top_json(totals);
        top["connections"] = Value::Array(Vec::new());
        let top = top.to_string();
        // Every string value is escaped, so the key's unescaped form occurs once.
        let k = top
            .find(r#""connections":[]"#)
            .expect("the connections key")
            + r#""connections":["#.len();
        let mut out = String::with_capacity(top.len() + rows.len());
        out.push_str(&top[..k]);
        out.push_str(&rows);
        out.push_str(&top[k..]);
        out
    }

    /// Calls `f` with each connection and data direction's row; returns the
    /// totals (spurious-timeout episodes, bytes, unnecessary retransmissions).
    fn each_row(&self, filter: Option<&Filter>, mut f: impl FnMut(Value)) -> (u64, u64, u64) {
        let (mut sto, mut bytes, mut unnecessary) = (0u64, 0u64, 0u64);
        for c in self.connections(filter) {
            for (d, h) in c.halves.iter().enumerate() {
                if h.bytes_sent == 0 {
                    continue;
                }
                let (src, dst) = if d == 0 { (c.a, c.b) } else { (c.b, c.a) };
                let mut v = half_json(h);
                let o = v.as_object_mut().expect("object");
                o.insert("conn".into(), json!(c.id));
                o.insert("dir".into(), json!(d));
                o.insert("src".into(), json!(src.0.to_string()));
                o.insert("sport".into(), json!(src.1));
                o.insert("dst".into(), json!(dst.0.to_string()));
                o.insert("dport".into(), json!(dst.1));
                o.insert("handshake".into(), json!(c.handshake));
                o.insert("closed".into(), json!(c.closed));
                o.insert("start_s".into(), json!(c.first_ns as f64 * 1e-9));
                sto += h.spurious_rto_episodes;
                bytes += h.bytes_acked.max(h.bytes_unique);
                unnecessary += h.spurious_retransmissions;
                f(v);
            }
        }
        (sto, bytes, unnecessary)
    }

    /// The capture totals of the `--json` object (no `connections`).
    fn top_json(&self, (sto, bytes, unnecessary): (u64, u64, u64)) -> Value {
        let mut skipped = serde_json::Map::new();
        for (k, s) in Skip::ALL.iter().enumerate() {
            skipped.insert(s.name().into(), json!(self.skipped[k]));
        }
        json!({
            "file": self.file,
            "packets": self.records,
            "tcp_packets": self.tcp_packets,
            "wall_s": self.wall_s,
            "side": self.side.name(),
            "skipped": skipped,
            "truncated_tail": self.truncated_tail,
            "corrupt": self.corrupt,
            "midstream_connections": self.midstream_conns,
            "time_reversals": self.analyzer.time_reversals,
            "sto_per_mb": if bytes > 0 { sto as f64 / (bytes as f64 / 1e6) } else { 0.0 },
            "spurious_rto_episodes": sto,
            "unnecessary_per_sto": if sto > 0 { Some(unnecessary as f64 / sto as f64) } else { None },
        })
    }
}
