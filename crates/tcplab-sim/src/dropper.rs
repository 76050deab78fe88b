//! Deterministic error injection: a zero-delay hop that drops chosen data
//! segments of every connection passing forward through it.
//!
//! Segments are counted per connection, 1-based, over payload-carrying TCP
//! packets in the forward direction (first transmissions and
//! retransmissions alike, in the order they pass). Yagiu & Tanaka 2001 §3.2
//! inject "an error at the 11th segment" between sender and router; this hop
//! reproduces that without a random loss process. Everything else passes
//! unchanged and at once.

use std::collections::HashMap;

use crate::component::{Component, Ctx, DropKind};
use crate::config::DropperConfig;
use crate::engine::{Dir, Packet};

pub struct Dropper {
    targets: Vec<u64>,
    /// (flow, conn) → data segments seen.
    seen: HashMap<(u32, u32), u64>,
    passed: [u64; 2],
    bytes: [u64; 2],
    dropped: u64,
}

impl Dropper {
    pub fn new(cfg: &DropperConfig) -> Dropper {
        Dropper {
            targets: cfg.data_segments.clone(),
            seen: HashMap::new(),
            passed: [0; 2],
            bytes: [0; 2],
            dropped: 0,
        }
    }
}

impl Component for Dropper {
    fn on_packet(&mut self, p: Packet, ctx: &mut Ctx) {
        if p.dir == Dir::Fwd && !p.udp && p.seg.payload_len > 0 {
            let n = self.seen.entry((p.flow, p.conn)).or_insert(0);
            *n += 1;
            if self.targets.contains(n) {
                self.dropped += 1;
                ctx.drop(p, DropKind::Loss);
                return;
            }
        }
        self.passed[p.dir as usize] += 1;
        self.bytes[p.dir as usize] += p.size as u64;
        ctx.forward_now(p);
    }

    fn stats(&self, name: &str) -> Vec<serde_json::Value> {
        vec![
            serde_json::json!({
                "name": name, "kind": "dropper", "dir": "fwd",
                "tx_packets": self.passed[0], "tx_bytes": self.bytes[0],
                "drops_queue": 0, "drops_loss": self.dropped,
            }),
            serde_json::json!({
                "name": name, "kind": "dropper", "dir": "rev",
                "tx_packets": self.passed[1], "tx_bytes": self.bytes[1],
                "drops_queue": 0, "drops_loss": 0,
            }),
        ]
    }

    fn tx_packets(&self) -> u64 {
        self.passed[0] + self.passed[1]
    }
}
