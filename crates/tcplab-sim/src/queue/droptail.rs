//! DropTail: a FIFO that discards arrivals at its limit (Linux's `pfifo`
//! and `bfifo`, `sch_fifo.c: pfifo_enqueue()` / `bfifo_enqueue()`).

use std::collections::VecDeque;

use super::{Limit, QDrop, QOut, QPkt, QStats, Qdisc};
use tcplab_tcp::Time;

/// The FIFO under every single-queue discipline (DropTail itself, PIE's
/// queue, RED's child `pfifo`/`bfifo`): the packets, their bytes, the hard
/// limit and the counters. A discipline decides what to mark or drop early;
/// the FIFO takes what is left at the tail and gives packets out at the head.
pub struct Fifo {
    q: VecDeque<QPkt>,
    bytes: u64,
    limit: Limit,
    pub stats: QStats,
}

impl Fifo {
    pub fn new(limit: Limit) -> Fifo {
        Fifo {
            q: VecDeque::new(),
            bytes: 0,
            limit,
            stats: QStats::default(),
        }
    }

    /// Whether a packet of `add` bytes fits under the limit.
    #[inline]
    pub fn admits(&self, add: u32) -> bool {
        self.limit.admits(self.q.len(), self.bytes, add)
    }

    /// `p` onto the tail (the caller checked `admits`).
    #[inline]
    pub fn push(&mut self, p: QPkt) {
        self.bytes += p.bytes as u64;
        self.q.push_back(p);
    }

    /// A packet the limit refuses: counted and handed back to the owner.
    #[inline]
    pub fn drop_at_limit(&mut self, p: QPkt, out: &mut QOut) {
        self.stats.drops_limit += 1;
        out.dropped.push((p, QDrop::Limit));
    }

    /// A packet the discipline's control law discards: counted and handed
    /// back to the owner.
    #[inline]
    pub fn drop_early(&mut self, p: QPkt, out: &mut QOut) {
        self.stats.drops_aqm += 1;
        out.dropped.push((p, QDrop::Aqm));
    }

    /// sch_fifo.c: pfifo_enqueue(): qlen < limit, else qdisc_drop();
    /// bfifo_enqueue(): backlog + len <= limit.
    #[inline]
    pub fn enqueue_tail(&mut self, p: QPkt, out: &mut QOut) {
        if self.admits(p.bytes) {
            self.push(p);
        } else {
            self.drop_at_limit(p, out);
        }
    }

    /// The head packet, if any.
    #[inline]
    pub fn pop(&mut self) -> Option<QPkt> {
        let p = self.q.pop_front()?;
        self.bytes -= p.bytes as u64;
        Some(p)
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.q.len()
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.q.is_empty()
    }

    /// Bytes queued.
    #[inline]
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
}

/// The `Qdisc` accessors of a discipline whose queue is the `Fifo` in its
/// field `fifo`, and its configuration name.
macro_rules! fifo_accessors {
    ($name:literal) => {
        fn len(&self) -> usize {
            self.fifo.len()
        }
        fn bytes(&self) -> u64 {
            self.fifo.bytes()
        }
        fn stats(&self) -> QStats {
            self.fifo.stats
        }
        fn name(&self) -> &'static str {
            $name
        }
    };
}
pub(crate) use fifo_accessors;

pub struct DropTail {
    fifo: Fifo,
}

impl DropTail {
    pub fn new(limit: Limit) -> DropTail {
        DropTail {
            fifo: Fifo::new(limit),
        }
    }
}

impl Qdisc for DropTail {
    fn enqueue(&mut self, p: QPkt, _now: Time, out: &mut QOut) {
        self.fifo.enqueue_tail(p, out);
    }

    fn dequeue(&mut self, _now: Time, _out: &mut QOut) -> Option<QPkt> {
        self.fifo.pop()
    }

    fifo_accessors!("droptail");
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
