//! One connection's event log and its ground truth, shared by the
//! simulator's endpoints (`sim.rs`) and the emulator's tcplab host
//! (`endpoint.rs`): every `tcplab_tcp::Event` of a connection becomes an
//! event row; timeouts and fast retransmits get their truth (spurious or
//! not) now or when the first copy of their segment reaches the receiver;
//! the detector's verdicts and the spurious timeouts it missed.

use tcplab_tcp::{Config, Event, Time};

use crate::output::{EventKind, EventRow, FlowAgg, Output};
use crate::truth::Truth;

/// The event-log bookkeeping of one connection.
pub struct ConnLog {
    /// Timeouts and fast retransmits waiting for their truth (`truth.rs`),
    /// stamped on the driver's order of sending (the simulator's time; the
    /// emulator's packet entry count): a copy stamped earlier was sent
    /// before them.
    truth: Truth,
    /// Keep the ground-truth and detector marks of a timeout's row even
    /// when the events table is not recorded (a detector's miss causes,
    /// `classify_misses`, read them).
    timeout_marks: bool,
    /// The same for a fast retransmit's row.
    fr_marks: bool,
    /// Spurious timeouts (ground truth).
    pub spurious: u64,
    /// Spurious fast retransmits (ground truth).
    pub spurious_fr: u64,
    /// Event-log row of each fast retransmit, by episode number.
    fr_rows: Vec<usize>,
    /// Event-log row of each timeout, by timeout id (for the detector's verdict).
    timeout_rows: Vec<usize>,
    /// The detector's outcome code per timeout id (`DetectorVerdict`), 255 = none.
    verdicts: Vec<u8>,
}

impl Default for ConnLog {
    /// The emulator's host: it does not see segments enter and leave the
    /// network, so pending truth never expires, and every row keeps its marks.
    fn default() -> Self {
        ConnLog {
            truth: Truth::never_expiring(),
            timeout_marks: true,
            fr_marks: true,
            spurious: 0,
            spurious_fr: 0,
            fr_rows: Vec::new(),
            timeout_rows: Vec::new(),
            verdicts: Vec::new(),
        }
    }
}

impl ConnLog {
    /// The simulator's connection: it reports every data segment entering
    /// (`sent`) and leaving (`gone`) the network, so pending truth is
    /// bounded by what is in flight. Without an events table a row's marks
    /// are kept only for what reads them: a timeout's, when the flow runs a
    /// detector (`classify_misses`).
    pub fn simulated(detector: bool) -> Self {
        ConnLog {
            truth: Truth::default(),
            timeout_marks: detector,
            fr_marks: false,
            ..ConnLog::default()
        }
    }

    /// A data segment stamped `sent_at` entered the network (simulator only).
    #[inline]
    pub fn sent(&mut self, sent_at: u64) {
        self.truth.sent(sent_at);
    }

    /// A data segment stamped `sent_at` left the network: it reached the
    /// receiver (after `on_arrival`), was dropped, or a middlebox absorbed
    /// it (simulator only).
    #[inline]
    pub fn gone(&mut self, sent_at: u64) {
        self.truth.gone(sent_at);
    }

    /// Count a retransmission (timeout or fast retransmit) found spurious.
    fn count_spurious(&mut self, fr: bool) {
        if fr {
            self.spurious_fr += 1;
        } else {
            self.spurious += 1;
        }
    }

    /// Ground truth for the retransmission logged at `row`: spurious now, or
    /// decided later by the copies that reach the receiver (`on_arrival`).
    fn note_truth(&mut self, spurious: bool, seq: u64, at: u64, row: usize, fr: bool) {
        if spurious {
            self.count_spurious(fr);
        } else {
            self.truth.note(seq, at, row, fr);
        }
    }

    /// Are retransmissions waiting for their truth?
    pub fn pending(&self) -> bool {
        !self.truth.is_empty()
    }

    /// A data copy of `[off, off + len)` stamped `sent` (see `PendingTruth::at`)
    /// reached the receiver. A pending timeout is spurious if a copy sent
    /// before it arrives. A pending fast retransmit is decided by the first
    /// copy to arrive: spurious if it was sent before the fast retransmit,
    /// genuine otherwise (so no entry outlives it).
    pub fn on_arrival(&mut self, out: &mut Output, off: u64, len: u64, sent: u64) {
        let mut found = [0u64; 2];
        self.truth.arrive(off, len, sent, |row, fr| {
            out.set_spurious(row, 1);
            found[fr as usize] += 1;
        });
        self.spurious += found[0];
        self.spurious_fr += found[1];
    }

    /// Log event `e` of connection `id` of flow `f` at `now`. `sender`: the
    /// event is the sending side's (timeouts and fast retransmits are
    /// logged only for it); `received(seq)`: the receiver already holds
    /// stream offset `seq`; `stamp`: now on the order of sending.
    #[allow(clippy::too_many_arguments)]
    pub fn record(
        &mut self,
        out: &mut Output,
        agg: &mut FlowAgg,
        now: Time,
        f: u32,
        id: u32,
        sender: bool,
        e: Event,
        received: impl Fn(u64) -> bool,
        stamp: u64,
    ) {
        match e {
            Event::Timeout {
                seq,
                len,
                backoff,
                rto,
                ..
            } => {
                if !sender {
                    return;
                }
                // Ground truth: already at the receiver?
                let spurious = received(seq);
                let keep = self.timeout_marks || out.records_events();
                let row = out.event_marked(
                    EventRow {
                        seq,
                        len,
                        reason: backoff.min(255) as u8,
                        spurious: spurious as i8,
                        detected: 0,
                        value: rto as f64 * 1e-9,
                        ..EventRow::new(now, f, id, EventKind::Timeout)
                    },
                    keep,
                );
                if keep {
                    self.timeout_rows.push(row);
                }
                self.note_truth(spurious, seq, stamp, row, false);
            }
            Event::FastRetransmit {
                id: n,
                seq,
                len,
                cwnd,
                ..
            } => {
                if !sender {
                    return;
                }
                // Ground truth: spurious iff the receiver already holds the
                // segment, or the first copy of it to arrive later was sent
                // before the fast retransmit (the retransmission was not needed).
                let spurious = received(seq);
                let keep = self.fr_marks || out.records_events();
                let row = out.event_marked(
                    EventRow {
                        seq,
                        len,
                        reason: tcplab_tcp::RtxReason::FastRetransmit as u8,
                        spurious: spurious as i8,
                        detected: 0,
                        value: cwnd as f64,
                        ..EventRow::new(now, f, id, EventKind::FastRetransmit)
                    },
                    keep,
                );
                if keep {
                    // Rows are indexed by the episode number (`SpuriousFrDetected::id`).
                    debug_assert_eq!(self.fr_rows.len(), n as usize);
                    self.fr_rows.push(row);
                }
                self.note_truth(spurious, seq, stamp, row, true);
            }
            Event::SpuriousFrDetected {
                id: n,
                undone,
                cwnd,
                ..
            } => {
                if !sender {
                    return;
                }
                if let Some(&row) = self.fr_rows.get(n as usize) {
                    out.set_detected(row, 1);
                }
                out.event(EventRow {
                    seq: n as u64,
                    reason: undone as u8,
                    detected: 1,
                    value: cwnd as f64,
                    ..EventRow::new(now, f, id, EventKind::SpuriousFrDetected)
                });
            }
            Event::Retransmit { seq, len, reason } => {
                out.event(EventRow {
                    seq,
                    len,
                    reason: reason as u8,
                    ..EventRow::new(now, f, id, EventKind::Retransmit)
                });
            }
            Event::EnterRecovery {
                kind,
                recover,
                cwnd,
                ..
            } => {
                out.event(EventRow {
                    seq: recover,
                    reason: kind as u8,
                    value: cwnd as f64,
                    ..EventRow::new(now, f, id, EventKind::EnterRecovery)
                });
            }
            Event::ExitRecovery { cwnd } => {
                out.event(EventRow {
                    value: cwnd as f64,
                    ..EventRow::new(now, f, id, EventKind::ExitRecovery)
                });
            }
            Event::SpuriousDetected { id: tid } => {
                // The detector's verdict goes on the timeout's own row.
                if let Some(&row) = self.timeout_rows.get(tid as usize) {
                    out.set_detected(row, 1);
                }
                out.event(EventRow {
                    seq: tid as u64,
                    detected: 1,
                    ..EventRow::new(now, f, id, EventKind::SpuriousDetected)
                });
            }
            Event::Established => {
                out.event(EventRow {
                    reason: (!sender) as u8,
                    ..EventRow::new(now, f, id, EventKind::Established)
                });
            }
            Event::DetectorVerdict { id: tid, outcome } => {
                let k = tid as usize;
                if self.verdicts.len() <= k {
                    self.verdicts.resize(k + 1, 255);
                }
                self.verdicts[k] = outcome;
                out.event(EventRow {
                    seq: tid as u64,
                    reason: outcome,
                    detected: 0,
                    ..EventRow::new(now, f, id, EventKind::DetectorVerdict)
                });
            }
            Event::HyStart { css, ca, cwnd, .. } => {
                // Summary counters only (no event row: the events table and
                // its kind dictionary stay as they were).
                if css {
                    agg.hystart_css_entries += 1;
                    agg.hystart_first_css.get_or_insert((now, cwnd));
                }
                if ca {
                    agg.hystart_ca_entries += 1;
                }
            }
            Event::Tlp {
                seq,
                len,
                kind,
                cwnd,
            } => {
                out.event(EventRow {
                    seq,
                    len,
                    reason: kind,
                    value: cwnd as f64,
                    ..EventRow::new(now, f, id, EventKind::Tlp)
                });
            }
            Event::RackLoss {
                seq,
                bytes,
                timer,
                reo_wnd,
                ..
            } => {
                out.event(EventRow {
                    seq,
                    len: bytes.min(u32::MAX as u64) as u32,
                    reason: timer as u8,
                    value: reo_wnd as f64 * 1e-9,
                    ..EventRow::new(now, f, id, EventKind::RackLoss)
                });
            }
            Event::Closed => {
                out.event(EventRow {
                    reason: (!sender) as u8,
                    ..EventRow::new(now, f, id, EventKind::Closed)
                });
            }
            Event::Reset { sent } => {
                out.event(EventRow {
                    reason: sent as u8,
                    ..EventRow::new(now, f, id, EventKind::Reset)
                });
            }
            Event::GaveUp {
                retransmissions, ..
            } => {
                // A `reset` row with reason 2: closed without a RST after
                // `retransmissions` timeouts (the run's notes say why).
                out.event(EventRow {
                    reason: 2,
                    value: retransmissions as f64,
                    ..EventRow::new(now, f, id, EventKind::Reset)
                });
            }
        }
    }

    /// Every spurious timeout a detector did not flag, by cause (Sekiguchi 2008 Table 4):
    /// the detector's own outcome (`MissCause`), "other" when it gave none or called the
    /// timeout genuine. Only for flows that run a detector.
    pub fn classify_misses(&self, agg: &mut FlowAgg, out: &Output, tcp: &Config) {
        if tcp.spurious_detection == tcplab_tcp::DetectorKind::None {
            return;
        }
        for (id, &row) in self.timeout_rows.iter().enumerate() {
            if out.spurious(row) == 1 && out.detected(row) != 1 {
                let v = self.verdicts.get(id).copied().unwrap_or(255);
                agg.spurious_missed[(v as usize).min(3)] += 1;
            }
        }
    }
}
