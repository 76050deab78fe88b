//! An end host's NIC→memory path as a path component (Ito's thesis ch. 3;
//! docs/papers.md §5, docs/throughput-bound-notes.md §2.4–§2.5).
//!
//! Data packets (forward direction) pass one at a time through the host's
//! receive path (NIC buffer → PCI → backlog → socket buffer → application
//! over the front-side bus) when the hop is the last of the route, or the
//! sender's transmit path (the same terms in reverse) when it is the first;
//! set `feedback = false` on a sender host. Each packet of `size` bytes takes
//!
//! ```text
//!   s = size·8/B_nic                          (store-and-forward from the wire; `nic_rate`)
//!     + size·8·(1.25/B_FSB + 0.25/B_PCI)      thesis eq. (3.39), non-TOE
//!     | size·8·(1/B_FSB + 1/(8·F_TOE) + 0.12/B_PCI)   thesis eq. (3.40), TOE
//!     + t_L                                   per-packet stack latency, eq. (3.37)/(3.38)
//! ```
//!
//! so a back-to-back stream has transit time d = s (eq. 3.48/3.49) and the
//! host delivers at most MTU/d (eq. 3.50). With `nic_rate` unset the NIC's
//! wire reception overlaps the transfer of the previous packet (pipelined)
//! and the host bound is 1/(host terms) alone. Packets wait FIFO in a backlog
//! of `backlog` packets (Linux netdev_max_backlog); beyond it they are dropped.
//!
//! As a receiver with `feedback` on, the host times each train of `train`
//! consecutive data packets of a flow (completion times, i.e. when `recv()`
//! returns) and attaches the result to the next ACK of that flow that passes
//! back through it, as simulator metadata (`Packet::feedback`), which the
//! sender hands to its congestion control (`on_transit_feedback`). Reverse
//! packets (ACKs) are not delayed: the thesis's ACK path cost is not modelled.

use std::collections::VecDeque;

use crate::component::{Component, Ctx, DropKind};
use crate::config::HostConfig;
use crate::engine::{Dir, Packet};
use tcplab_tcp::cc::TransitFeedback;
use tcplab_tcp::Time;

#[derive(Clone, Copy, Debug, Default)]
struct Train {
    conn: u32,
    n: u32,
    first_done: Time,
    last_done: Time,
    /// Payload bytes of packets 2..n (the ones the span covers).
    bytes: u64,
    pending: Option<TransitFeedback>,
    /// When the pending train's last packet completes.
    ready_at: Time,
}

#[derive(Clone, Copy, Debug, Default)]
pub struct HostStats {
    pub packets: u64,
    pub bytes: u64,
    pub drops: u64,
    pub max_backlog: u64,
    /// Sum of per-packet service times (ns) and of transit times including
    /// the wait in the backlog.
    pub service_ns: u128,
    pub transit_ns: u128,
    pub trains: u64,
    pub feedback_sent: u64,
    /// When the first feedback left with an ACK (ns; None = never).
    pub first_feedback: Option<Time>,
    /// Sum over trains of the train rate, bytes/s (payload).
    pub train_rate_sum: f64,
    /// Sum over trains of the mean per-packet transit d = span/(P−1), ns.
    pub train_d_sum: u128,
}

pub struct HostHop {
    per_bit_ns: f64,
    t_l: Time,
    backlog: u64,
    feedback: bool,
    train_len: u32,
    busy_until: Time,
    /// (completion time, packet) in service order.
    pipe: VecDeque<(Time, Packet)>,
    trains: Vec<Train>,
    stats: HostStats,
}

impl HostHop {
    pub fn new(c: &HostConfig) -> HostHop {
        let mut per_bit = match c.f_toe_bps {
            None => 1.25 / c.b_fsb_bps as f64 + 0.25 / c.b_pci_bps as f64, // eq. (3.39)
            Some(f) => {
                1.0 / c.b_fsb_bps as f64 + 1.0 / (8.0 * f as f64) + 0.12 / c.b_pci_bps as f64
            } // eq. (3.40)
        };
        if let Some(nic) = c.nic_rate_bps {
            per_bit += 1.0 / nic as f64; // store-and-forward from the wire, eq. (3.48)
        }
        HostHop {
            per_bit_ns: per_bit * 1e9,
            t_l: c.t_l_ns,
            backlog: c.backlog as u64,
            feedback: c.feedback,
            train_len: c.train,
            busy_until: 0,
            pipe: VecDeque::with_capacity(256),
            trains: Vec::new(),
            stats: HostStats::default(),
        }
    }

    /// Service time of a packet of `size` bytes, ns (rounded up).
    #[inline]
    pub fn service(&self, size: u32) -> Time {
        (size as f64 * 8.0 * self.per_bit_ns).ceil() as Time + self.t_l
    }

    fn train_done(&mut self, p: &Packet, done: Time) {
        let fi = p.flow as usize;
        if self.trains.len() <= fi {
            self.trains.resize(fi + 1, Train::default());
        }
        let t = &mut self.trains[fi];
        if t.conn != p.conn {
            *t = Train {
                conn: p.conn,
                ..Train::default()
            };
        }
        if t.n == 0 {
            t.first_done = done;
            t.bytes = 0;
        } else {
            t.bytes += p.seg.payload_len as u64;
        }
        t.last_done = done;
        t.n += 1;
        if t.n == self.train_len {
            let fb = TransitFeedback {
                pkts: t.n,
                bytes: t.bytes as u32, // ≤ 999 · 65535 (check: train ≤ 1000)
                span: t.last_done - t.first_done,
            };
            self.stats.trains += 1;
            if let Some(r) = fb.rate_bytes_per_s() {
                self.stats.train_rate_sum += r;
            }
            self.stats.train_d_sum += fb.mean_transit().unwrap_or(0) as u128;
            t.pending = Some(fb);
            t.ready_at = t.last_done;
            t.n = 0;
        }
    }
}

impl Component for HostHop {
    fn on_packet(&mut self, mut p: Packet, ctx: &mut Ctx) {
        if p.dir == Dir::Rev {
            if self.feedback && !p.udp {
                if let Some(t) = self.trains.get_mut(p.flow as usize) {
                    // Only once the train's last packet has left the host (no
                    // information from the future).
                    if t.conn == p.conn && t.pending.is_some() && ctx.now >= t.ready_at {
                        if let Some(fb) = t.pending.take() {
                            p.feedback = Some(fb);
                            self.stats.feedback_sent += 1;
                            self.stats.first_feedback.get_or_insert(ctx.now);
                        }
                    }
                }
            }
            ctx.forward_now(p);
            return;
        }
        let now = ctx.now;
        // Packets in the host (in service and waiting); the one in service
        // does not count against the backlog limit.
        let waiting = (self.pipe.len() as u64).saturating_sub(1);
        if !self.pipe.is_empty() && waiting >= self.backlog {
            self.stats.drops += 1;
            ctx.drop(p, DropKind::Queue);
            return;
        }
        let start = self.busy_until.max(now);
        let s = self.service(p.size);
        let done = start + s;
        self.busy_until = done;
        self.stats.packets += 1;
        self.stats.bytes += p.size as u64;
        self.stats.max_backlog = self.stats.max_backlog.max(waiting);
        self.stats.service_ns += s as u128;
        self.stats.transit_ns += (done - now) as u128;
        if self.feedback && !p.udp && p.seg.payload_len > 0 {
            self.train_done(&p, done);
        }
        if self.pipe.is_empty() {
            ctx.timer(done, 0);
        }
        self.pipe.push_back((done, p));
    }

    fn on_timer(&mut self, _token: u64, ctx: &mut Ctx) {
        while let Some(&(at, p)) = self.pipe.front() {
            if at > ctx.now {
                ctx.timer(at, 0);
                break;
            }
            self.pipe.pop_front();
            ctx.tap(&p, at);
            ctx.forward_now(p);
        }
    }

    fn held(&self) -> u64 {
        self.pipe.len() as u64
    }

    fn stats(&self, name: &str) -> Vec<serde_json::Value> {
        let s = &self.stats;
        let n = s.packets.max(1) as f64;
        vec![serde_json::json!({
            "name": name, "kind": "host", "dir": "fwd", "tx_packets": s.packets,
            "tx_bytes": s.bytes, "drops_queue": s.drops, "drops_loss": 0,
            "max_queue_packets": s.max_backlog,
            "service_mean_ns": s.service_ns as f64 / n,
            "transit_mean_ns": s.transit_ns as f64 / n,
            "trains": s.trains, "feedback_sent": s.feedback_sent,
            "first_feedback_ns": s.first_feedback,
            "train_d_mean_ns": if s.trains > 0 { s.train_d_sum as f64 / s.trains as f64 } else { 0.0 },
            "train_rate_mean_bps": if s.trains > 0 { 8.0 * s.train_rate_sum / s.trains as f64 } else { 0.0 },
        })]
    }

    fn tx_packets(&self) -> u64 {
        self.stats.packets
    }
}

/// Structural checks; the message names the field and the rule.
pub fn check(c: &HostConfig) -> Result<(), String> {
    if c.b_fsb_bps == 0 {
        return Err("b_fsb: must be > 0".into());
    }
    if c.b_pci_bps == 0 {
        return Err("b_pci: must be > 0".into());
    }
    if c.f_toe_bps == Some(0) {
        return Err("f_toe: must be > 0".into());
    }
    if c.nic_rate_bps == Some(0) {
        return Err("nic_rate: must be > 0".into());
    }
    if c.backlog == 0 {
        return Err("backlog: must be >= 1 packet (got 0)".into());
    }
    if !(2..=1000).contains(&c.train) {
        return Err(format!(
            "train: must be between 2 and 1000 packets (got {})",
            c.train
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(toe: bool) -> HostConfig {
        HostConfig {
            name: "h".into(),
            b_fsb_bps: 6_500_000_000,
            b_pci_bps: 1_000_000_000,
            f_toe_bps: toe.then_some(32_000_000_000),
            t_l_ns: 1200,
            nic_rate_bps: Some(1_000_000_000),
            backlog: 1000,
            feedback: true,
            train: 10,
        }
    }

    #[test]
    fn service_time_is_the_thesis_transit_time() {
        // eq. (3.48): d = MTU/B_GE + (1.25/B_FSB + 0.25/B_PCI)·MTU + t_L
        let h = HostHop::new(&cfg(false));
        let bits = 1500.0 * 8.0;
        let d = bits / 1e9 + (1.25 / 6.5e9 + 0.25 / 1e9) * bits + 1.2e-6;
        assert!((h.service(1500) as f64 - d * 1e9).abs() <= 1.0);
        // eq. (3.49) for the TOE NIC
        let h = HostHop::new(&cfg(true));
        let d = bits / 1e9 + (1.0 / 6.5e9 + 1.0 / 256e9 + 0.12 / 1e9) * bits + 1.2e-6;
        assert!((h.service(1500) as f64 - d * 1e9).abs() <= 1.0);
    }

    #[test]
    fn check_names_fields() {
        let mut c = cfg(false);
        c.train = 1;
        assert_eq!(
            check(&c).unwrap_err(),
            "train: must be between 2 and 1000 packets (got 1)"
        );
    }
}
