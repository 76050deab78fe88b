//! FQ-CoDel (RFC 8290) as `net/sched/sch_fq_codel.c` runs it: packets are
//! hashed into `flows` queues, each with its own CoDel state; a deficit
//! round robin serves new flows before old ones; when the queue is over
//! its limit, a batch is dropped from the head of the fattest flow.

use std::collections::VecDeque;

use serde::Deserialize;

use super::codel::{codel_dequeue, CodelParams, CodelSource, CodelStats, CodelVars};
use super::{Limit, QDrop, QOut, QPkt, QStats, Qdisc, PSCHED_MTU};
use crate::rng::Rng;
use tcplab_tcp::Time;

fn default_target() -> u64 {
    5_000_000
}
fn default_interval() -> u64 {
    100_000_000
}
fn default_flows() -> u32 {
    1024
}
fn default_quantum() -> u32 {
    PSCHED_MTU
}
fn default_drop_batch() -> u32 {
    64
}
fn default_memory_limit() -> u64 {
    32 << 20
}
fn yes() -> bool {
    true
}

/// `aqm = { kind = "fq_codel", ... }`: fq_codel_init() defaults (limit
/// 10240 packets there; here the link's `queue`).
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FqCodelConfig {
    #[serde(default = "default_target")]
    pub target_ns: u64,
    #[serde(default = "default_interval")]
    pub interval_ns: u64,
    /// fq_codel marks ECN-capable packets by default.
    #[serde(default = "yes")]
    pub ecn: bool,
    #[serde(default)]
    pub ce_threshold_ns: Option<u64>,
    #[serde(default = "default_flows")]
    pub flows: u32,
    /// DRR quantum, bytes (psched_mtu() of an Ethernet device).
    #[serde(default = "default_quantum")]
    pub quantum: u32,
    /// Most packets one over-limit drop removes from the fattest flow.
    #[serde(default = "default_drop_batch")]
    pub drop_batch: u32,
    /// Bytes the queued packets may occupy (each packet's memory is taken
    /// as its datagram length).
    #[serde(default = "default_memory_limit")]
    pub memory_limit: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Chain {
    None,
    New,
    Old,
}

/// sch_fq_codel.c: struct fq_codel_flow.
struct Flow {
    q: VecDeque<QPkt>,
    deficit: i64,
    cvars: CodelVars,
    chain: Chain,
}

pub struct FqCodel {
    flows: Vec<Flow>,
    /// Bytes queued per flow (q->backlogs).
    backlogs: Vec<u64>,
    quantum: u32,
    drop_batch: u32,
    memory_limit: u64,
    memory_usage: u64,
    limit: Limit,
    params: CodelParams,
    cstats: CodelStats,
    qlen: usize,
    backlog: u64,
    drop_overlimit: u64,
    pub new_flow_count: u64,
    new_flows: VecDeque<u32>,
    old_flows: VecDeque<u32>,
    /// The hash perturbation (Linux: a random `hashrnd` per boot).
    perturb: u64,
}

/// One flow's queue as codel_dequeue() sees it: sch_fq_codel.c:
/// dequeue_func() takes the head and lowers the flow's and the qdisc's
/// backlog; CoDel compares the qdisc's backlog with one MTU.
struct FlowSrc<'a> {
    q: &'a mut VecDeque<QPkt>,
    flow_backlog: &'a mut u64,
    backlog: &'a mut u64,
    qlen: &'a mut usize,
    mem: &'a mut u64,
}

impl CodelSource for FlowSrc<'_> {
    fn dequeue(&mut self) -> Option<QPkt> {
        let p = self.q.pop_front()?;
        *self.flow_backlog -= p.bytes as u64;
        *self.mem -= p.bytes as u64;
        *self.qlen -= 1;
        *self.backlog -= p.bytes as u64;
        Some(p)
    }
    fn backlog(&self) -> u64 {
        *self.backlog
    }
}

fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl FqCodel {
    pub fn new(c: &FqCodelConfig, limit: Limit, mut rng: Rng) -> FqCodel {
        let n = c.flows as usize;
        FqCodel {
            flows: (0..n)
                .map(|_| Flow {
                    q: VecDeque::new(),
                    deficit: 0,
                    cvars: CodelVars::default(),
                    chain: Chain::None,
                })
                .collect(),
            backlogs: vec![0; n],
            quantum: c.quantum,
            drop_batch: c.drop_batch,
            memory_limit: c.memory_limit,
            memory_usage: 0,
            limit,
            params: CodelParams::new(c.target_ns, c.interval_ns, c.ce_threshold_ns, c.ecn),
            cstats: CodelStats::default(),
            qlen: 0,
            backlog: 0,
            drop_overlimit: 0,
            new_flow_count: 0,
            new_flows: VecDeque::new(),
            old_flows: VecDeque::new(),
            perturb: rng.next_u64(),
        }
    }

    /// sch_fq_codel.c: fq_codel_hash() — reciprocal_scale(hash, flows_cnt).
    #[inline]
    pub fn bucket(&self, flow: u64) -> usize {
        let h = mix(flow ^ self.perturb) as u32;
        ((h as u64 * self.flows.len() as u64) >> 32) as usize
    }

    fn over_limit(&self) -> bool {
        (match self.limit {
            Limit::Packets(l) => self.qlen as u64 > l,
            Limit::Bytes(l) => self.backlog > l,
        }) || self.memory_usage > self.memory_limit
    }

    /// sch_fq_codel.c: fq_codel_drop() — find the fat flow and drop up to
    /// `max_packets` from its head, until half its backlog is gone. Returns
    /// the flow.
    fn drop_fattest(&mut self, max_packets: u32, out: &mut QOut) -> usize {
        let (mut maxbacklog, mut idx) = (0, 0);
        for (i, &b) in self.backlogs.iter().enumerate() {
            if b > maxbacklog {
                maxbacklog = b;
                idx = i;
            }
        }
        // Our goal is to drop half of this fat flow backlog.
        let threshold = maxbacklog >> 1;
        let flow = &mut self.flows[idx];
        let (mut len, mut i) = (0u64, 0u32);
        while let Some(p) = flow.q.pop_front() {
            len += p.bytes as u64;
            out.dropped.push((p, QDrop::Limit));
            i += 1;
            if i >= max_packets || len >= threshold {
                break;
            }
        }
        // Tell codel to increase its signal strength also.
        flow.cvars.count = flow.cvars.count.wrapping_add(i);
        self.backlogs[idx] -= len;
        self.memory_usage -= len;
        self.backlog -= len;
        self.qlen -= i as usize;
        self.drop_overlimit += i as u64;
        idx
    }
}

impl Qdisc for FqCodel {
    /// sch_fq_codel.c: fq_codel_enqueue().
    fn enqueue(&mut self, p: QPkt, _now: Time, out: &mut QOut) {
        let idx = self.bucket(p.flow);
        let flow = &mut self.flows[idx];
        flow.q.push_back(p);
        self.backlogs[idx] += p.bytes as u64;
        self.backlog += p.bytes as u64;
        if flow.chain == Chain::None {
            flow.chain = Chain::New;
            self.new_flows.push_back(idx as u32);
            self.new_flow_count += 1;
            flow.deficit = self.quantum as i64;
        }
        self.memory_usage += p.bytes as u64;
        self.qlen += 1;
        if !self.over_limit() {
            return;
        }
        // fq_codel_drop() is expensive (a linear search for the fat flow),
        // so it drops half of that flow's backlog, up to drop_batch packets.
        self.drop_fattest(self.drop_batch, out);
    }

    /// sch_fq_codel.c: fq_codel_dequeue().
    fn dequeue(&mut self, now: Time, out: &mut QOut) -> Option<QPkt> {
        loop {
            let from_new = !self.new_flows.is_empty();
            let head = if from_new {
                &mut self.new_flows
            } else if !self.old_flows.is_empty() {
                &mut self.old_flows
            } else {
                return None;
            };
            let idx = *head.front().unwrap() as usize;
            let flow = &mut self.flows[idx];
            if flow.deficit <= 0 {
                flow.deficit += self.quantum as i64;
                head.pop_front();
                flow.chain = Chain::Old;
                self.old_flows.push_back(idx as u32);
                continue;
            }
            let mut src = FlowSrc {
                q: &mut flow.q,
                flow_backlog: &mut self.backlogs[idx],
                backlog: &mut self.backlog,
                qlen: &mut self.qlen,
                mem: &mut self.memory_usage,
            };
            let skb = codel_dequeue(
                &mut src,
                &self.params,
                &mut flow.cvars,
                &mut self.cstats,
                now,
                out,
            );
            match skb {
                None => {
                    // Force a pass through old_flows to prevent starvation.
                    if from_new && !self.old_flows.is_empty() {
                        self.new_flows.pop_front();
                        flow.chain = Chain::Old;
                        self.old_flows.push_back(idx as u32);
                    } else {
                        if from_new {
                            self.new_flows.pop_front();
                        } else {
                            self.old_flows.pop_front();
                        }
                        flow.chain = Chain::None;
                    }
                }
                Some(p) => {
                    flow.deficit -= p.bytes as i64;
                    return Some(p);
                }
            }
        }
    }

    fn len(&self) -> usize {
        self.qlen
    }
    fn bytes(&self) -> u64 {
        self.backlog
    }
    fn stats(&self) -> QStats {
        QStats {
            drops_limit: self.drop_overlimit,
            drops_aqm: self.cstats.drop_count,
            ecn_marks: self.cstats.ecn_mark + self.cstats.ce_mark,
        }
    }
    fn name(&self) -> &'static str {
        "fq_codel"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> FqCodelConfig {
        serde_json::from_str("{}").unwrap()
    }

    fn pkt(id: u32, flow: u64, bytes: u32, enq: Time) -> QPkt {
        QPkt {
            flow,
            ..QPkt::test(id, bytes, enq)
        }
    }

    /// Two flow keys that hash to different buckets.
    fn two_flows(q: &FqCodel) -> (u64, u64) {
        let a = 1;
        let b = (2..).find(|&k| q.bucket(k) != q.bucket(a)).unwrap();
        (a, b)
    }

    #[test]
    fn defaults_are_linuxs() {
        let c = cfg();
        assert_eq!(
            (c.target_ns, c.interval_ns, c.flows, c.quantum, c.drop_batch),
            (5_000_000, 100_000_000, 1024, 1514, 64)
        );
        assert!(c.ecn);
        assert_eq!(c.memory_limit, 32 << 20);
    }

    #[test]
    fn drr_shares_bytes_by_quantum_and_new_flows_go_first() {
        let mut q = FqCodel::new(&cfg(), Limit::Packets(10_240), Rng::stream(1, "fq"));
        let mut out = QOut::default();
        let (a, b) = two_flows(&q);
        // Flow a: 20 packets of 1500 B queued first; flow b: 60 of 500 B.
        for i in 0..20 {
            q.enqueue(pkt(i, a, 1500, 0), 0, &mut out);
        }
        for i in 0..60 {
            q.enqueue(pkt(100 + i, b, 500, 0), 0, &mut out);
        }
        let order: Vec<u64> = (0..80)
            .map(|_| q.dequeue(0, &mut out).unwrap().flow)
            .collect();
        assert!(out.dropped.is_empty());
        // Both start as new flows with one quantum (1514 B). A flow is served
        // while its deficit is > 0: a sends two 1500 B packets (1514 → 14 →
        // -1486), then b four 500 B packets (→ -486); then each gets +1514
        // per round on the old list: a one packet (28 → -1472), b three.
        assert_eq!(&order[..10], &[a, a, b, b, b, b, a, b, b, b]);
        // Byte shares over the rounds where both are backlogged are equal
        // within one quantum.
        let (mut ba, mut bb) = (0i64, 0i64);
        for &f in &order[..50] {
            if f == a {
                ba += 1500;
            } else {
                bb += 500;
            }
        }
        assert!((ba - bb).abs() <= 2 * 1514, "{ba} vs {bb}");
        // A flow that arrives while others are backlogged is served next
        // (RFC 8290 §4.2: new flows first).
        let mut q = FqCodel::new(&cfg(), Limit::Packets(10_240), Rng::stream(1, "fq"));
        for i in 0..10 {
            q.enqueue(pkt(i, a, 1500, 0), 0, &mut out);
        }
        q.dequeue(0, &mut out);
        q.dequeue(0, &mut out); // a moved to the old list
        q.enqueue(pkt(99, b, 100, 0), 0, &mut out);
        assert_eq!(q.dequeue(0, &mut out).unwrap().id, 99);
        assert_eq!(q.new_flow_count, 2);
    }

    #[test]
    fn over_the_limit_half_the_fattest_flow_is_dropped_from_its_head() {
        let mut q = FqCodel::new(&cfg(), Limit::Packets(100), Rng::stream(1, "fq"));
        let mut out = QOut::default();
        let (a, b) = two_flows(&q);
        for i in 0..90 {
            q.enqueue(pkt(i, a, 1000, 0), 0, &mut out);
        }
        for i in 0..10 {
            q.enqueue(pkt(1000 + i, b, 1000, 0), 0, &mut out);
        }
        assert!(out.dropped.is_empty());
        // The 101st packet (of the thin flow b) triggers fq_codel_drop():
        // flow a (90 kB) loses packets from its head until 45 kB are gone.
        q.enqueue(pkt(2000, b, 1000, 0), 0, &mut out);
        let ids: Vec<u32> = out.dropped.iter().map(|d| d.0.id).collect();
        assert_eq!(ids, (0..45).collect::<Vec<_>>());
        assert!(out.dropped.iter().all(|d| d.1 == QDrop::Limit));
        assert_eq!(q.len(), 56);
        assert_eq!(q.stats().drops_limit, 45);
        // ... and at most drop_batch packets at once.
        let mut c = cfg();
        c.drop_batch = 8;
        let mut q = FqCodel::new(&c, Limit::Packets(100), Rng::stream(1, "fq"));
        out.dropped.clear();
        for i in 0..101 {
            q.enqueue(pkt(i, a, 1000, 0), 0, &mut out);
        }
        assert_eq!(out.dropped.len(), 8);
    }

    #[test]
    fn each_flow_has_its_own_codel() {
        // A fat flow with a standing queue gets CoDel drops; a sparse flow
        // whose packets never wait is never dropped.
        let mut q = FqCodel::new(&cfg(), Limit::Packets(10_240), Rng::stream(1, "fq"));
        let mut out = QOut::default();
        let (fat, thin) = two_flows(&q);
        let ms = 1_000_000u64;
        let mut id = 0;
        for t in (0..3000 * ms).step_by(ms as usize) {
            // fat: 2 packets per ms in, link: 1 packet per ms out
            q.enqueue(pkt(id, fat, 1500, t), t, &mut out);
            q.enqueue(pkt(id + 1, fat, 1500, t), t, &mut out);
            if t % (20 * ms) == 0 {
                q.enqueue(pkt(id + 2, thin, 100, t), t, &mut out);
            }
            id += 3;
            q.dequeue(t, &mut out);
        }
        assert!(q.stats().drops_aqm > 100, "{:?}", q.stats());
        assert!(out.dropped.iter().all(|d| d.0.flow == fat));
    }
}
