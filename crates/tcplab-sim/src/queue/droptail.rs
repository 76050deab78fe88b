//! DropTail: a FIFO that discards arrivals at its limit (Linux's `pfifo`
//! and `bfifo`, `sch_fifo.c: pfifo_enqueue()` / `bfifo_enqueue()`).

use std::collections::VecDeque;

use super::{Limit, QDrop, QOut, QPkt, QStats, Qdisc};
use tcplab_tcp::Time;

pub struct DropTail {
    q: VecDeque<QPkt>,
    bytes: u64,
    limit: Limit,
    stats: QStats,
}

impl DropTail {
    pub fn new(limit: Limit) -> DropTail {
        DropTail {
            q: VecDeque::new(),
            bytes: 0,
            limit,
            stats: QStats::default(),
        }
    }
}

impl Qdisc for DropTail {
    fn enqueue(&mut self, p: QPkt, _now: Time, out: &mut QOut) {
        // sch_fifo.c: pfifo_enqueue(): qlen < limit, else qdisc_drop();
        // bfifo_enqueue(): backlog + len <= limit.
        if self.limit.admits(self.q.len(), self.bytes, p.bytes) {
            self.bytes += p.bytes as u64;
            self.q.push_back(p);
        } else {
            self.stats.drops_limit += 1;
            out.dropped.push((p, QDrop::Limit));
        }
    }

    fn dequeue(&mut self, _now: Time, _out: &mut QOut) -> Option<QPkt> {
        let p = self.q.pop_front()?;
        self.bytes -= p.bytes as u64;
        Some(p)
    }

    fn len(&self) -> usize {
        self.q.len()
    }
    fn bytes(&self) -> u64 {
        self.bytes
    }
    fn stats(&self) -> QStats {
        self.stats
    }
    fn name(&self) -> &'static str {
        "droptail"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pkt(id: u32, bytes: u32) -> QPkt {
        QPkt::test(id, bytes, 0)
    }

    #[test]
    fn packet_and_byte_limits_drop_arrivals_in_fifo_order() {
        let mut out = QOut::default();
        let mut q = DropTail::new(Limit::Packets(2));
        for i in 0..3 {
            q.enqueue(pkt(i, 100), 0, &mut out);
        }
        assert_eq!(out.dropped, vec![(pkt(2, 100), QDrop::Limit)]);
        assert_eq!(q.dequeue(0, &mut out).unwrap().id, 0);
        assert_eq!(q.dequeue(0, &mut out).unwrap().id, 1);
        assert!(q.dequeue(0, &mut out).is_none());
        let mut q = DropTail::new(Limit::Bytes(250));
        out.dropped.clear();
        for i in 0..3 {
            q.enqueue(pkt(i, 100), 0, &mut out);
        }
        q.enqueue(pkt(3, 50), 0, &mut out);
        assert_eq!(q.len(), 3);
        assert_eq!(q.bytes(), 250);
        assert_eq!(q.stats().drops_limit, 1);
    }
}
