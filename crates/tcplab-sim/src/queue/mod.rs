//! Queue disciplines ("qdiscs") for the queues tcplab owns: DropTail and the
//! active queue managers CoDel, FQ-CoDel, PIE, RED and DualPI2, each in its own file
//! behind the `Qdisc` trait, with Linux's defaults and arithmetic (each step
//! cites the kernel function it mirrors; `docs/aqm.md` describes them).
//!
//! A discipline holds `QPkt`s: a handle the owning component chooses (a
//! parked packet), the IP datagram length, a flow key for the flow-queueing
//! disciplines, the IP ECN codepoint and the enqueue time. The owner offers
//! packets (`enqueue`) and asks for the next one to transmit when its
//! transmitter is free (`dequeue`); the packets the discipline discards on
//! either call come back through `QOut::dropped`, and a packet it marks comes
//! out of `dequeue` (or stays queued) with the CE codepoint.
//!
//! A link direction without `aqm` keeps its own DropTail fast path
//! (`link.rs`), which computes each departure time when a packet is accepted;
//! these disciplines decide at dequeue time, so a managed direction runs a
//! transmitter that dequeues when it is free.

pub mod codel;
pub mod droptail;
pub mod dualpi2;
pub mod fq_codel;
pub(crate) mod managed;
pub mod pie;
pub mod red;

use serde::Deserialize;
use tcplab_tcp::Time;

use crate::rng::Rng;

/// IP ECN codepoints (RFC 3168 §5).
pub const NOT_ECT: u8 = 0;
pub const ECT1: u8 = 1;
pub const ECT0: u8 = 2;
pub const CE: u8 = 3;

/// One packet in a discipline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QPkt {
    /// The owner's handle (a parked packet's slab index).
    pub id: u32,
    /// IP datagram length, bytes.
    pub bytes: u32,
    /// Flow key (hashed by the flow-queueing disciplines).
    pub flow: u64,
    /// IP ECN codepoint (`NOT_ECT`, `ECT1`, `ECT0`, `CE`).
    pub ecn: u8,
    /// When it was enqueued, ns.
    pub enq: Time,
}

impl QPkt {
    /// `INET_ECN_set_ce()` (include/net/inet_ecn.h): an ECN-capable packet
    /// gets CE and the call says so; a Not-ECT packet is left alone.
    #[inline]
    pub fn set_ce(&mut self) -> bool {
        if self.ecn == NOT_ECT {
            return false;
        }
        self.ecn = CE;
        true
    }
}

#[cfg(test)]
impl QPkt {
    /// A test packet: `bytes` long, of flow 0, Not-ECT, enqueued at `enq`.
    pub(crate) fn test(id: u32, bytes: u32, enq: Time) -> QPkt {
        QPkt {
            id,
            bytes,
            flow: 0,
            ecn: NOT_ECT,
            enq,
        }
    }
}

/// Why a discipline discarded a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QDrop {
    /// The queue's hard limit (packets, bytes or memory) was exceeded.
    Limit,
    /// The discipline's control law chose it (early/AQM drop).
    Aqm,
}

/// What a call discarded. The owner drains `dropped` after each call; the
/// vector keeps its capacity, so the steady state does not allocate.
#[derive(Debug, Default)]
pub struct QOut {
    pub dropped: Vec<(QPkt, QDrop)>,
}

/// Counters every discipline keeps.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QStats {
    pub drops_limit: u64,
    pub drops_aqm: u64,
    pub ecn_marks: u64,
}

pub trait Qdisc {
    /// Offer `p` at `now` (`p.enq` is set by the caller to `now`).
    fn enqueue(&mut self, p: QPkt, now: Time, out: &mut QOut);
    /// The next packet to transmit at `now`, if any.
    fn dequeue(&mut self, now: Time, out: &mut QOut) -> Option<QPkt>;
    /// Packets queued.
    fn len(&self) -> usize;
    /// Bytes queued.
    fn bytes(&self) -> u64;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    fn stats(&self) -> QStats;
    /// The discipline's name as the configuration spells it.
    fn name(&self) -> &'static str;
}

/// Linux's `psched_mtu()` of an Ethernet device (MTU 1500 + 14-byte header):
/// the default quantum of fq_codel and the "one MTU" of CoDel and PIE.
pub const PSCHED_MTU: u32 = 1514;

/// The `aqm` of a queue, as the normalized configuration gives it (Python
/// fills every default; `validate.rs` checks the rules).
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum AqmConfig {
    /// A FIFO that drops arrivals at its limit, with the sojourn counters of
    /// a managed queue.
    Droptail {},
    /// RFC 8289, `sch_codel.c`.
    Codel(codel::CodelConfig),
    /// RFC 8290, `sch_fq_codel.c`.
    FqCodel(fq_codel::FqCodelConfig),
    /// RFC 8033, `sch_pie.c`.
    Pie(pie::PieConfig),
    /// Floyd & Jacobson's RED as `sch_red.c` runs it.
    Red(red::RedConfig),
    /// RFC 9332, `sch_dualpi2.c`.
    Dualpi2(dualpi2::DualPi2Config),
}

impl AqmConfig {
    pub const KINDS: [&'static str; 6] = ["droptail", "codel", "fq_codel", "pie", "red", "dualpi2"];

    pub fn kind(&self) -> &'static str {
        match self {
            AqmConfig::Droptail {} => "droptail",
            AqmConfig::Codel(_) => "codel",
            AqmConfig::FqCodel(_) => "fq_codel",
            AqmConfig::Pie(_) => "pie",
            AqmConfig::Red(_) => "red",
            AqmConfig::Dualpi2(_) => "dualpi2",
        }
    }

    /// The rules of each parameter, for a queue with hard limit `limit` in
    /// front of a line of `rate_bps`: `Err((field, rule))`, field relative
    /// to the `aqm` table.
    pub fn check(&self, limit: Limit, rate_bps: u64) -> Result<(), (String, String)> {
        let pos = |f: &str, v: u64| {
            if v == 0 {
                Err((f.to_string(), "must be > 0".to_string()))
            } else {
                Ok(())
            }
        };
        match self {
            AqmConfig::Droptail {} => Ok(()),
            AqmConfig::Codel(c) => {
                pos("target", c.target_ns)?;
                pos("interval", c.interval_ns)?;
                codel::check_times(c.target_ns, c.interval_ns, c.ce_threshold_ns)
            }
            AqmConfig::FqCodel(c) => {
                pos("target", c.target_ns)?;
                pos("interval", c.interval_ns)?;
                codel::check_times(c.target_ns, c.interval_ns, c.ce_threshold_ns)?;
                if c.flows == 0 || c.flows > 65536 {
                    return Err((
                        "flows".into(),
                        format!("must be between 1 and 65536 (got {})", c.flows),
                    ));
                }
                if c.quantum < 256 {
                    return Err((
                        "quantum".into(),
                        format!("must be ≥ 256 bytes (got {})", c.quantum),
                    ));
                }
                if c.drop_batch == 0 {
                    return Err(("drop_batch".into(), "must be ≥ 1".into()));
                }
                pos("memory_limit", c.memory_limit)
            }
            AqmConfig::Pie(c) => {
                pos("target", c.target_ns)?;
                pos("tupdate", c.tupdate_ns)?;
                if c.alpha > 32 || c.beta > 32 {
                    let (f, v) = if c.alpha > 32 {
                        ("alpha", c.alpha)
                    } else {
                        ("beta", c.beta)
                    };
                    return Err((
                        f.into(),
                        format!("must be between 0 and 32 sixteenths (got {v})"),
                    ));
                }
                Ok(())
            }
            AqmConfig::Red(c) => red::check(c, limit, rate_bps),
            AqmConfig::Dualpi2(c) => dualpi2::check(c),
        }
    }
}

/// A discipline built from its configuration. `limit` is the queue's hard
/// limit (the link's `queue`), `rate_bps` the line rate (RED's idle damping),
/// `rng` the queue's own random stream.
pub fn build(cfg: &AqmConfig, limit: Limit, rate_bps: u64, rng: Rng) -> Box<dyn Qdisc + Send> {
    match cfg {
        AqmConfig::Droptail {} => Box::new(droptail::DropTail::new(limit)),
        AqmConfig::Codel(c) => Box::new(codel::Codel::new(c, limit)),
        AqmConfig::FqCodel(c) => Box::new(fq_codel::FqCodel::new(c, limit, rng)),
        AqmConfig::Pie(c) => Box::new(pie::Pie::new(c, limit, rng)),
        AqmConfig::Red(c) => Box::new(red::Red::new(c, limit, rate_bps, rng)),
        AqmConfig::Dualpi2(c) => Box::new(dualpi2::DualPi2::new(c, limit, rng)),
    }
}

/// A queue's hard limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    Packets(u64),
    Bytes(u64),
}

impl Limit {
    /// Whether a queue of `len` packets and `bytes` bytes may take one more
    /// packet of `add` bytes (`qdisc_enqueue_tail` under pfifo/bfifo limits).
    #[inline]
    pub fn admits(self, len: usize, bytes: u64, add: u32) -> bool {
        match self {
            Limit::Packets(l) => (len as u64) < l,
            Limit::Bytes(l) => bytes + add as u64 <= l,
        }
    }
}

/// Sojourn-time histogram of a managed queue: 1 µs buckets below 1024 µs,
/// then 512 buckets per power of two (relative width < 0.2 %). Allocated
/// once per managed queue.
#[derive(Debug, Clone)]
pub struct Sojourn {
    buckets: Vec<u64>,
    n: u64,
}

const SOJ_LINEAR: u64 = 1024;
const SOJ_SUB: u32 = 9; // 512 sub-buckets per octave
const SOJ_OCTAVES: usize = 40;

impl Default for Sojourn {
    fn default() -> Self {
        Sojourn {
            buckets: vec![0; SOJ_LINEAR as usize + SOJ_OCTAVES * (1 << SOJ_SUB)],
            n: 0,
        }
    }
}

impl Sojourn {
    #[inline]
    fn index(us: u64) -> usize {
        if us < SOJ_LINEAR {
            return us as usize;
        }
        let k = 63 - us.leading_zeros(); // ≥ 10
        let sub = (us >> (k - SOJ_SUB)) & ((1 << SOJ_SUB) - 1);
        let i = SOJ_LINEAR as usize + (k as usize - 10) * (1 << SOJ_SUB) + sub as usize;
        i.min(SOJ_LINEAR as usize + SOJ_OCTAVES * (1 << SOJ_SUB) - 1)
    }

    /// The bucket's [low, high) bounds in µs.
    fn bounds(i: usize) -> (u64, u64) {
        if (i as u64) < SOJ_LINEAR {
            return (i as u64, i as u64 + 1);
        }
        let j = i - SOJ_LINEAR as usize;
        let k = 10 + (j >> SOJ_SUB) as u32;
        let sub = (j & ((1 << SOJ_SUB) - 1)) as u64;
        let w = 1u64 << (k - SOJ_SUB);
        let lo = (1u64 << k) + sub * w;
        (lo, lo + w)
    }

    #[inline]
    pub fn record(&mut self, ns: Time) {
        self.buckets[Self::index(ns / 1000)] += 1;
        self.n += 1;
    }

    pub fn count(&self) -> u64 {
        self.n
    }

    /// The `q`-quantile in ms (the middle of the bucket that holds it), or
    /// None without samples.
    pub fn quantile_ms(&self, q: f64) -> Option<f64> {
        if self.n == 0 {
            return None;
        }
        let rank = ((q * self.n as f64).ceil() as u64).clamp(1, self.n);
        let mut seen = 0;
        for (i, &c) in self.buckets.iter().enumerate() {
            seen += c;
            if seen >= rank {
                let (lo, hi) = Self::bounds(i);
                return Some((lo + hi) as f64 / 2.0 / 1000.0);
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sojourn_buckets_are_contiguous_and_quantiles_land_in_them() {
        let mut prev_hi = 0;
        for i in 0..(SOJ_LINEAR as usize + 5 * 512) {
            let (lo, hi) = Sojourn::bounds(i);
            assert_eq!(lo, prev_hi, "bucket {i}");
            assert_eq!(Sojourn::index(lo), i);
            assert_eq!(Sojourn::index(hi - 1), i);
            prev_hi = hi;
        }
        let mut s = Sojourn::default();
        for ms in 1..=100u64 {
            s.record(ms * 1_000_000);
        }
        let p50 = s.quantile_ms(0.5).unwrap();
        let p99 = s.quantile_ms(0.99).unwrap();
        assert!((p50 - 50.0).abs() < 0.1, "{p50}");
        assert!((p99 - 99.0).abs() < 0.2, "{p99}");
        assert_eq!(Sojourn::default().quantile_ms(0.5), None);
    }

    #[test]
    fn set_ce_marks_only_ecn_capable_packets() {
        let mut p = QPkt::test(0, 1500, 0);
        assert!(!p.set_ce());
        assert_eq!(p.ecn, NOT_ECT);
        for e in [ECT0, ECT1, CE] {
            p.ecn = e;
            assert!(p.set_ce());
            assert_eq!(p.ecn, CE);
        }
    }
}
