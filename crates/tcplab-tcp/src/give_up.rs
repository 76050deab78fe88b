//! When a connection stops retransmitting and gives up (RFC 1122 §4.2.3.5,
//! RFC 9293 §3.8.3: the R2 threshold), as Linux's `tcp_write_timeout()`.
//!
//! - An opening connection gives up at the retransmission timeout that
//!   follows its `syn_retries`-th SYN retransmission (`synack_retries` for
//!   the SYN-ACK of a passive open): `tcp_write_timeout()` compares
//!   `icsk_retransmits` with `net.ipv4.tcp_syn_retries` (and
//!   `tcp_synack_retries` in `inet_rtx_syn_ack()`/`reqsk_timer_handler()`).
//! - A synchronized connection gives up at a timeout when the time since the
//!   segment at SND.UNA was last sent before its first timeout reaches what
//!   `retries2` timeouts take in Linux's model: an RTO starting at
//!   `TCP_RTO_MIN` (200 ms) and doubling up to `TCP_RTO_MAX` (120 s)
//!   (`retransmits_timed_out()` with `tcp_model_timeout()`; Linux:
//!   `net.ipv4.tcp_retries2` = 15, 924.6 s). The model, not the connection's
//!   own RTO, sets the time, as in Linux: a connection with a 1 ms RTO does
//!   not give up after 16 ms. An acknowledgment of new data starts afresh.
//!
//! - A sender whose zero-window probes go unanswered gives up when the
//!   persist timer expires after `retries2` of them in a row
//!   (`tcp_probe_timer()`: `icsk_probes_out >= max_probes`, `max_probes` =
//!   `net.ipv4.tcp_retries2`). Any acceptable ACK resets the count
//!   (`tcp_ack()`), so a receiver that answers the probes keeps the
//!   connection open however long its window stays closed (RFC 1122
//!   §4.2.2.17).
//!
//! A connection that gives up sends nothing more (no RST: `tcp_write_err()`
//! → `tcp_done()`) and reports why ([`GiveUp`]).

use crate::{Time, NS_PER_MS, NS_PER_S};

/// include/net/tcp.h: TCP_RTO_MIN, TCP_RTO_MAX (the model's, whatever the
/// connection's own RTO bounds).
pub const TCP_RTO_MIN: Time = 200 * NS_PER_MS;
pub const TCP_RTO_MAX: Time = 120 * NS_PER_S;

/// Why a connection gave up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GiveUp {
    /// What was being retransmitted.
    pub what: GiveUpKind,
    /// Timeout retransmissions of it before giving up.
    pub retransmissions: u32,
    /// The limit that was reached (`syn_retries`, `synack_retries` or `retries2`).
    pub limit: u32,
    /// When.
    pub at: Time,
}

impl GiveUp {
    /// For a run's notes: "gave up at 183.000 s after 7 timeout
    /// retransmissions of its SYN (rto.syn_retries = 7)".
    pub fn describe(&self) -> String {
        format!(
            "gave up at {:.3} s after {} (rto.{} = {})",
            self.at as f64 * 1e-9,
            self.what.counted(self.retransmissions),
            self.what.setting(),
            self.limit
        )
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GiveUpKind {
    /// The SYN of an active open.
    Syn,
    /// The SYN-ACK of a passive open.
    SynAck,
    /// Data or a FIN of a synchronized connection.
    Data,
    /// Zero-window probes (the persist timer).
    Probe,
}

impl GiveUpKind {
    /// The setting that bounds it, as a scenario names it (`rto.<name>`).
    pub fn setting(self) -> &'static str {
        match self {
            GiveUpKind::Syn => "syn_retries",
            GiveUpKind::SynAck => "synack_retries",
            GiveUpKind::Data | GiveUpKind::Probe => "retries2",
        }
    }

    /// What was retransmitted, for a message.
    pub fn what(self) -> &'static str {
        match self {
            GiveUpKind::Syn => "its SYN",
            GiveUpKind::SynAck => "its SYN-ACK",
            GiveUpKind::Data => "unacknowledged data",
            GiveUpKind::Probe => "zero-window probes",
        }
    }

    /// `n` of them, for a message: "7 timeout retransmissions of its SYN",
    /// "15 unanswered zero-window probes".
    pub fn counted(self, n: u32) -> String {
        match self {
            GiveUpKind::Probe => format!("{n} unanswered {}", self.what()),
            _ => format!("{n} timeout retransmissions of {}", self.what()),
        }
    }
}

/// tcp_timer.c: `tcp_model_timeout()`. The time `boundary` timeout
/// retransmissions take when the RTO starts at `rto_base` and doubles up to
/// `rto_max`: exponential up to `ilog2(rto_max / rto_base)` doublings, then
/// `rto_max` per retransmission.
pub fn model_timeout(boundary: u32, rto_base: Time, rto_max: Time) -> Time {
    let base = rto_base.max(NS_PER_MS).min(rto_max.max(NS_PER_MS));
    let thresh = (rto_max / base).max(1).ilog2();
    if boundary <= thresh {
        ((2u64 << boundary) - 1).saturating_mul(base)
    } else {
        ((2u64 << thresh) - 1)
            .saturating_mul(base)
            .saturating_add(u64::from(boundary - thresh).saturating_mul(rto_max))
    }
}

/// The retransmission count and start time `tcp_write_timeout()` judges.
#[derive(Clone, Copy, Debug, Default)]
pub struct WriteTimeout {
    /// Timeout retransmissions since the last progress (`icsk_retransmits`).
    retransmits: u32,
    /// When the segment now retransmitted was sent before its first
    /// retransmission (`tp->retrans_stamp`).
    stamp: Option<Time>,
}

impl WriteTimeout {
    /// The retransmission timer expired while opening: true when the
    /// handshake gives up instead of retransmitting (`tcp_write_timeout()`:
    /// `icsk_retransmits >= retry_until`).
    pub fn syn_expired(&mut self, limit: u32) -> bool {
        if self.retransmits >= limit {
            return true;
        }
        self.retransmits += 1;
        false
    }

    /// The retransmission timer expired on a synchronized connection whose
    /// oldest outstanding segment (or FIN) was last sent at `sent_at`: true
    /// when it gives up instead of retransmitting (`retransmits_timed_out()`).
    pub fn expired(&mut self, now: Time, sent_at: Time, retries2: u32) -> bool {
        let stamp = *self.stamp.get_or_insert(sent_at);
        if self.retransmits > 0
            && now.saturating_sub(stamp) >= model_timeout(retries2, TCP_RTO_MIN, TCP_RTO_MAX)
        {
            return true;
        }
        self.retransmits = self.retransmits.saturating_add(1);
        false
    }

    /// Retransmissions counted so far.
    pub fn retransmits(&self) -> u32 {
        self.retransmits
    }

    /// New data was acknowledged, or the handshake completed: the count
    /// starts again (RFC 1122 §4.2.3.5 counts retransmissions of the same
    /// segment).
    pub fn on_progress(&mut self) {
        *self = WriteTimeout::default();
    }
}

/// tcp_timer.c: `tcp_probe_timer()`. Zero-window probes sent since the
/// last acceptable ACK (`icsk_probes_out`, counted by `tcp_send_probe0()`).
#[derive(Clone, Copy, Debug, Default)]
pub struct ProbesOut(u32);

impl ProbesOut {
    /// The persist timer expired: true when the connection gives up
    /// instead of probing again (`icsk_probes_out >= max_probes`).
    pub fn expired(&mut self, retries2: u32) -> bool {
        if self.0 >= retries2 {
            return true;
        }
        self.0 += 1;
        false
    }

    /// An acceptable ACK arrived (`tcp_ack()`: `icsk_probes_out = 0`), a
    /// probe's answer included.
    pub fn on_ack(&mut self) {
        self.0 = 0;
    }

    /// Probes sent since the last ACK.
    pub fn count(&self) -> u32 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linux_retries2_is_924_6_seconds() {
        // tcp(7): with the default tcp_retries2 = 15 and TCP_RTO_MIN 200 ms,
        // TCP_RTO_MAX 120 s, a connection gives up after 924.6 s.
        assert_eq!(
            model_timeout(15, 200 * NS_PER_MS, 120 * NS_PER_S),
            924_600 * NS_PER_MS
        );
        // Within the exponential part: (2^(b+1) - 1) · base.
        assert_eq!(model_timeout(3, NS_PER_S, 60 * NS_PER_S), 15 * NS_PER_S);
        // A fixed RTO (min = max): one RTO per retransmission plus the first.
        assert_eq!(
            model_timeout(15, 500 * NS_PER_MS, 500 * NS_PER_MS),
            8 * NS_PER_S
        );
    }

    #[test]
    fn the_handshake_gives_up_after_the_limit() {
        let mut w = WriteTimeout::default();
        for _ in 0..6 {
            assert!(!w.syn_expired(6));
        }
        assert!(w.syn_expired(6));
        assert_eq!(w.retransmits(), 6);
    }

    #[test]
    fn unanswered_probes_give_up_and_an_answer_starts_again() {
        let mut p = ProbesOut::default();
        for _ in 0..15 {
            assert!(!p.expired(15));
        }
        p.on_ack();
        for _ in 0..15 {
            assert!(!p.expired(15));
        }
        assert!(p.expired(15));
        assert_eq!(p.count(), 15);
        assert_eq!(
            GiveUpKind::Probe.counted(15),
            "15 unanswered zero-window probes"
        );
        assert_eq!(
            GiveUpKind::Syn.counted(7),
            "7 timeout retransmissions of its SYN"
        );
    }

    #[test]
    fn progress_restarts_the_data_count() {
        let limit = 924_600 * NS_PER_MS;
        let mut w = WriteTimeout::default();
        assert!(!w.expired(NS_PER_S, 0, 15));
        assert!(!w.expired(limit - 1, 0, 15));
        assert!(w.expired(limit, 0, 15));
        w.on_progress();
        assert!(!w.expired(limit + NS_PER_S, limit, 15));
        assert!(!w.expired(2 * limit - 1, limit, 15));
        assert!(w.expired(2 * limit, limit, 15));
        // Fewer retries, less time: 3 timeouts from 200 ms = 3 s.
        let mut w = WriteTimeout::default();
        assert!(!w.expired(NS_PER_MS, 0, 3));
        assert!(w.expired(3 * NS_PER_S, 0, 3));
    }
}
