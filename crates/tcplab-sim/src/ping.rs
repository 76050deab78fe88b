//! An ICMP-echo-like probe ("ping"): a request of a given IP size crosses the
//! path one way, the far end answers at once with a reply of the same size
//! (as an echo reply carries the request's data back), and the sender records
//! the round-trip time. Probe packets are UDP-like packets whose `flow` is
//! `PING_FLOW_BASE + probe index`; `conn` is 0 for a request, 1 for a reply.

use crate::config::PingConfig;
use crate::engine::{Dir, Packet};
use tcplab_tcp::{Segment, Time};

/// Flow numbers at and above this mark probe packets.
pub const PING_FLOW_BASE: u32 = 1 << 31;

#[inline]
pub fn is_ping(p: &Packet) -> bool {
    p.udp && p.flow >= PING_FLOW_BASE
}

pub struct PingRt {
    pub cfg: PingConfig,
    pub sent: u64,
    pub received: u64,
    pub dropped: u64,
    /// Round-trip time of every answered request, in order of arrival.
    pub rtts: Vec<Time>,
}

impl PingRt {
    pub fn new(cfg: PingConfig) -> PingRt {
        PingRt {
            cfg,
            sent: 0,
            received: 0,
            dropped: 0,
            rtts: Vec::new(),
        }
    }

    /// The next request, if the probe is still running; also returns when
    /// the one after it is due.
    pub fn request(&mut self, idx: usize, uid: u64, now: Time) -> Option<(Packet, Time)> {
        if now >= self.cfg.stop_ns {
            return None;
        }
        self.sent += 1;
        let p = Packet {
            uid,
            flow: PING_FLOW_BASE + idx as u32,
            conn: 0,
            dir: if self.cfg.from_receiver {
                Dir::Rev
            } else {
                Dir::Fwd
            },
            hop: 0,
            udp: true,
            size: self.cfg.packet_bytes,
            sent_at: now,
            seg: Segment::default(),
            feedback: None,
        };
        Some((p, now.saturating_add(self.cfg.interval_ns)))
    }

    /// A probe packet reached the end of its route. A request turns into a
    /// reply (returned, to be sent back at once with a fresh `uid`); a reply
    /// yields an RTT sample.
    pub fn on_arrive(&mut self, p: &Packet, uid: u64, now: Time) -> Option<Packet> {
        if p.conn == 0 {
            Some(Packet {
                uid,
                conn: 1,
                hop: 0,
                dir: match p.dir {
                    Dir::Fwd => Dir::Rev,
                    Dir::Rev => Dir::Fwd,
                },
                ..*p
            })
        } else {
            self.received += 1;
            self.rtts.push(now - p.sent_at);
            None
        }
    }

    pub fn summary(&self) -> serde_json::Value {
        let n = self.rtts.len();
        let ms: Vec<f64> = self.rtts.iter().map(|&t| t as f64 * 1e-6).collect();
        let mean = if n > 0 {
            ms.iter().sum::<f64>() / n as f64
        } else {
            f64::NAN
        };
        let min = ms.iter().cloned().fold(f64::INFINITY, f64::min);
        let max = ms.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        serde_json::json!({
            "name": self.cfg.name,
            "packet_bytes": self.cfg.packet_bytes,
            "sent": self.sent,
            "received": self.received,
            "dropped": self.dropped,
            "rtt_mean_ms": if n > 0 { Some(mean) } else { None },
            "rtt_min_ms": if n > 0 { Some(min) } else { None },
            "rtt_max_ms": if n > 0 { Some(max) } else { None },
            "rtt_ms": ms,
        })
    }
}
