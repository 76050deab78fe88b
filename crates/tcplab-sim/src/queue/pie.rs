//! PIE (RFC 8033) as `net/sched/sch_pie.c` and `include/net/pie.h` run it:
//! a drop probability updated every `tupdate` from the queueing delay
//! (the head packet's sojourn, or Little's law over a dequeue-rate
//! estimate), a burst allowance, and de-randomized early drops at enqueue.
//!
//! Time is Linux's psched time (ns >> 6); the probability is a fraction of
//! `MAX_PROB` = 2^56 - 1. The kernel's periodic timer (`pie_timer`) is run
//! lazily: before each enqueue or dequeue, every update due up to now is
//! applied. Nothing the updates read changes between events, so this is
//! the same as running them on time.

use serde::Deserialize;

use super::droptail::{fifo_accessors, Fifo};
use super::{Limit, QOut, QPkt, QStats, Qdisc, PSCHED_MTU};
use crate::rng::Rng;
use tcplab_tcp::Time;

/// pie.h: MAX_PROB.
pub const MAX_PROB: u64 = u64::MAX >> 8;
const DTIME_INVALID: u64 = u64::MAX;
const QUEUE_THRESHOLD: u64 = 16384;
const DQCOUNT_INVALID: u64 = u64::MAX;
const PIE_SCALE: u32 = 8;
/// psched time: ns >> PSCHED_SHIFT (6).
const PSCHED_SHIFT: u32 = 6;
const PSCHED_TICKS_PER_SEC: u64 = 1_000_000_000 >> PSCHED_SHIFT;

#[inline]
fn ticks(ns: Time) -> u64 {
    ns >> PSCHED_SHIFT
}

fn default_target() -> u64 {
    15_000_000
}
fn default_tupdate() -> u64 {
    15_000_000
}
fn default_alpha() -> u32 {
    2
}
fn default_beta() -> u32 {
    20
}

/// `aqm = { kind = "pie", ... }`: pie_params_init() defaults (limit 1000
/// packets there; here the link's `queue`).
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PieConfig {
    #[serde(default = "default_target")]
    pub target_ns: u64,
    #[serde(default = "default_tupdate")]
    pub tupdate_ns: u64,
    /// In sixteenths (2 = 0.125), as `tc` passes it.
    #[serde(default = "default_alpha")]
    pub alpha: u32,
    #[serde(default = "default_beta")]
    pub beta: u32,
    #[serde(default)]
    pub ecn: bool,
    #[serde(default)]
    pub bytemode: bool,
    #[serde(default)]
    pub dq_rate_estimator: bool,
}

/// pie.h: struct pie_vars.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PieVars {
    pub qdelay: u64,
    pub qdelay_old: u64,
    pub burst_time: u64,
    pub dq_tstamp: u64,
    pub prob: u64,
    pub accu_prob: u64,
    pub dq_count: u64,
    pub avg_dq_rate: u32,
    pub backlog_old: u32,
}

impl Default for PieVars {
    fn default() -> Self {
        let mut v = PieVars {
            qdelay: 0,
            qdelay_old: 0,
            burst_time: 0,
            dq_tstamp: 0,
            prob: 0,
            accu_prob: 0,
            dq_count: 0,
            avg_dq_rate: 0,
            backlog_old: 0,
        };
        vars_init(&mut v);
        v
    }
}

/// pie.h: pie_vars_init().
fn vars_init(v: &mut PieVars) {
    v.burst_time = ticks(150_000_000); // 150 ms
    v.dq_tstamp = DTIME_INVALID;
    v.accu_prob = 0;
    v.dq_count = DQCOUNT_INVALID;
    v.avg_dq_rate = 0;
}

/// pie.h: struct pie_params (times in psched ticks).
#[derive(Clone, Copy, Debug)]
pub struct PieParams {
    pub target: u64,
    pub alpha: u32,
    pub beta: u32,
    pub ecn: bool,
    pub bytemode: bool,
    pub dq_rate_estimator: bool,
}

/// sch_pie.c: pie_drop_early(); `rnd` is the 64-bit random draw it would
/// make (drawn only when needed).
pub fn drop_early(
    params: &PieParams,
    v: &mut PieVars,
    backlog: u64,
    packet_size: u32,
    rnd: &mut dyn FnMut() -> u64,
) -> bool {
    let mtu = PSCHED_MTU as u64;
    // If there is still burst allowance left skip random early drop.
    if v.burst_time > 0 {
        return false;
    }
    // If current delay is less than half of target, and if drop prob is
    // low already, disable early_drop.
    if v.qdelay < params.target / 2 && v.prob < MAX_PROB / 5 {
        return false;
    }
    // Fewer than 2 MTU-sized packets: no early drop (like RED's min_th).
    if backlog < 2 * mtu {
        return false;
    }
    // Byte mode: smaller packets get a lower drop probability.
    let local_prob = if params.bytemode && packet_size as u64 <= mtu {
        packet_size as u64 * (v.prob / mtu)
    } else {
        v.prob
    };
    if local_prob == 0 {
        v.accu_prob = 0;
    } else {
        v.accu_prob = v.accu_prob.wrapping_add(local_prob);
    }
    // RFC 8033 §5.1 de-randomization: no drop below 0.85, always at 8.5.
    if v.accu_prob < (MAX_PROB / 100) * 85 {
        return false;
    }
    if v.accu_prob >= (MAX_PROB / 2) * 17 {
        return true;
    }
    if (rnd() >> 8) < local_prob {
        v.accu_prob = 0;
        return true;
    }
    false
}

/// sch_pie.c: pie_process_dequeue(); `now` in psched ticks, `backlog`
/// after the removal, `len` the packet's length, `enq` its enqueue time.
pub fn process_dequeue(
    params: &PieParams,
    v: &mut PieVars,
    len: u32,
    enq: u64,
    backlog: u64,
    now: u64,
) {
    let mut dtime: u64 = 0;
    if !params.dq_rate_estimator {
        // qdelay from the packet's time stamp.
        v.qdelay = now.wrapping_sub(enq);
        if v.dq_tstamp != DTIME_INVALID {
            dtime = now.wrapping_sub(v.dq_tstamp);
        }
        v.dq_tstamp = now;
        if backlog == 0 {
            v.qdelay = 0;
        }
        if dtime == 0 {
            return;
        }
    } else {
        // With about QUEUE_THRESHOLD bytes queued and no cycle running,
        // start a measurement cycle.
        if backlog >= QUEUE_THRESHOLD && v.dq_count == DQCOUNT_INVALID {
            v.dq_tstamp = now;
            v.dq_count = 0;
        }
        if v.dq_count == DQCOUNT_INVALID {
            return;
        }
        v.dq_count += len as u64;
        if v.dq_count < QUEUE_THRESHOLD {
            return;
        }
        let mut count = (v.dq_count << PIE_SCALE) as u32;
        dtime = now.wrapping_sub(v.dq_tstamp);
        if dtime == 0 {
            return;
        }
        count = (count as u64 / (dtime as u32) as u64) as u32;
        if v.avg_dq_rate == 0 {
            v.avg_dq_rate = count;
        } else {
            v.avg_dq_rate = (v.avg_dq_rate - (v.avg_dq_rate >> 3)) + (count >> 3);
        }
        // Below the threshold, hold on to the last rate; else restart.
        if backlog < QUEUE_THRESHOLD {
            v.dq_count = DQCOUNT_INVALID;
        } else {
            v.dq_count = 0;
            v.dq_tstamp = now;
        }
    }
    // burst_allowance_reduction:
    if v.burst_time > 0 {
        v.burst_time = v.burst_time.saturating_sub(dtime);
    }
}

/// sch_pie.c: pie_calculate_probability() (RFC 8033 §4.2).
pub fn calculate_probability(params: &PieParams, v: &mut PieVars, backlog: u64) {
    let (qdelay, qdelay_old);
    let mut update_prob = true;
    if params.dq_rate_estimator {
        qdelay_old = v.qdelay;
        v.qdelay_old = v.qdelay;
        qdelay = if v.avg_dq_rate > 0 {
            ((backlog as u32) << PIE_SCALE) as u64 / v.avg_dq_rate as u64
        } else {
            0
        };
    } else {
        qdelay = v.qdelay;
        qdelay_old = v.qdelay_old;
    }
    // qdelay zero with a backlog: the backlog is very small, no update.
    if qdelay == 0 && backlog != 0 {
        update_prob = false;
    }
    // alpha and beta are in sixteenths and in units of HZ: scale them.
    let mut alpha = (params.alpha as u64 * (MAX_PROB / PSCHED_TICKS_PER_SEC)) >> 4;
    let mut beta = (params.beta as u64 * (MAX_PROB / PSCHED_TICKS_PER_SEC)) >> 4;
    // RFC 8033 §4.2: smaller steps at low probabilities.
    if v.prob < MAX_PROB / 10 {
        alpha >>= 1;
        beta >>= 1;
        let mut power = 100u64;
        while v.prob < MAX_PROB / power && power <= 1_000_000 {
            alpha >>= 2;
            beta >>= 2;
            power *= 10;
        }
    }
    let mut delta: i64 = 0;
    delta =
        delta.wrapping_add((alpha as i64).wrapping_mul(qdelay.wrapping_sub(params.target) as i64));
    delta = delta.wrapping_add((beta as i64).wrapping_mul(qdelay.wrapping_sub(qdelay_old) as i64));
    let oldprob = v.prob;
    // Increase the probability in steps of no more than 2 %.
    if delta > (MAX_PROB / (100 / 2)) as i64 && v.prob >= MAX_PROB / 10 {
        delta = ((MAX_PROB / 100) * 2) as i64;
    }
    // Non-linear drop: raise it quickly for delays ≥ 250 ms.
    if qdelay > ticks(250_000_000) {
        delta += (MAX_PROB / (100 / 2)) as i64;
    }
    v.prob = v.prob.wrapping_add(delta as u64);
    if delta > 0 {
        // prevent overflow
        if v.prob < oldprob {
            v.prob = MAX_PROB;
            update_prob = false;
        }
    } else if v.prob > oldprob {
        // prevent underflow
        v.prob = 0;
    }
    // Delay zero for two updates: reduce the probability to 98.4 %.
    if qdelay == 0 && qdelay_old == 0 && update_prob {
        v.prob -= v.prob / 64;
    }
    v.qdelay = qdelay;
    v.backlog_old = backlog as u32;
    // Restart the measurement cycle when the delay has been low for two
    // updates, the probability is zero and (estimator) a rate is known.
    if v.qdelay < params.target / 2
        && v.qdelay_old < params.target / 2
        && v.prob == 0
        && (!params.dq_rate_estimator || v.avg_dq_rate > 0)
    {
        vars_init(v);
    }
    if !params.dq_rate_estimator {
        v.qdelay_old = qdelay;
    }
}

pub struct Pie {
    fifo: Fifo,
    params: PieParams,
    pub vars: PieVars,
    tupdate: Time,
    next_update: Time,
    rng: Rng,
}

impl Pie {
    pub fn new(c: &PieConfig, limit: Limit, rng: Rng) -> Pie {
        Pie {
            fifo: Fifo::new(limit),
            params: PieParams {
                target: ticks(c.target_ns),
                alpha: c.alpha,
                beta: c.beta,
                ecn: c.ecn,
                bytemode: c.bytemode,
                dq_rate_estimator: c.dq_rate_estimator,
            },
            vars: PieVars::default(),
            tupdate: c.tupdate_ns,
            // sch_pie.c: pie_init() arms the timer HZ/2 ahead.
            next_update: 500_000_000,
            rng,
        }
    }

    /// sch_pie.c: pie_timer() — every update due by `now`.
    fn catch_up(&mut self, now: Time) {
        while self.next_update <= now {
            calculate_probability(&self.params, &mut self.vars, self.fifo.bytes());
            self.next_update += self.tupdate;
        }
    }
}

impl Qdisc for Pie {
    /// sch_pie.c: pie_qdisc_enqueue().
    fn enqueue(&mut self, mut p: QPkt, now: Time, out: &mut QOut) {
        self.catch_up(now);
        if !self.fifo.admits(p.bytes) {
            self.vars.accu_prob = 0;
            self.fifo.drop_at_limit(p, out);
            return;
        }
        let rng = &mut self.rng;
        let enqueue = if !drop_early(
            &self.params,
            &mut self.vars,
            self.fifo.bytes(),
            p.bytes,
            &mut || rng.next_u64(),
        ) {
            true
        } else if self.params.ecn && self.vars.prob <= MAX_PROB / 10 && p.set_ce() {
            // An ECN-capable packet is marked while the probability is
            // below 10 %, else dropped.
            self.fifo.stats.ecn_marks += 1;
            true
        } else {
            false
        };
        if enqueue {
            self.fifo.push(p);
        } else {
            self.vars.accu_prob = 0;
            self.fifo.drop_early(p, out);
        }
    }

    /// sch_pie.c: pie_qdisc_dequeue().
    fn dequeue(&mut self, now: Time, _out: &mut QOut) -> Option<QPkt> {
        self.catch_up(now);
        let p = self.fifo.pop()?;
        process_dequeue(
            &self.params,
            &mut self.vars,
            p.bytes,
            ticks(p.enq),
            self.fifo.bytes(),
            ticks(now),
        );
        Some(p)
    }

    fifo_accessors!("pie");
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn params() -> PieParams {
        PieParams {
            target: ticks(15 * MS),
            alpha: 2,
            beta: 20,
            ecn: false,
            bytemode: false,
            dq_rate_estimator: false,
        }
    }

    fn prob(v: &PieVars) -> f64 {
        v.prob as f64 / MAX_PROB as f64
    }

    #[test]
    fn probability_update_follows_rfc8033_with_its_scaling() {
        // RFC 8033 §4.2: p += alpha (qdelay - target) + beta (qdelay -
        // qdelay_old), alpha = 0.125/s, beta = 1.25/s, both scaled down
        // (÷2, then ÷4 per decade) while p < 10 %.
        let par = params();
        let mut v = PieVars {
            qdelay: ticks(35 * MS),
            qdelay_old: ticks(15 * MS),
            ..Default::default()
        };
        calculate_probability(&par, &mut v, 100_000);
        // p = 0 < 1e-6: alpha and beta are ÷2 ÷4^5 (power 100 → 1e7).
        let scale = 1.0 / 2.0 / 4f64.powi(5);
        let expect = scale * (0.125 * 0.020 + 1.25 * 0.020);
        assert!(
            (prob(&v) - expect).abs() / expect < 1e-3,
            "{} vs {expect}",
            prob(&v)
        );
        // At p ≥ 10 % the full gains apply and a step is capped at 2 %.
        v.prob = MAX_PROB / 5;
        v.qdelay = ticks(40 * MS);
        v.qdelay_old = ticks(40 * MS);
        calculate_probability(&par, &mut v, 100_000);
        let expect = 0.2 + 0.125 * 0.025;
        assert!((prob(&v) - expect).abs() < 1e-4, "{}", prob(&v));
        v.qdelay = ticks(240 * MS);
        v.qdelay_old = ticks(40 * MS);
        let before = prob(&v);
        calculate_probability(&par, &mut v, 100_000);
        assert!((prob(&v) - before - 0.02).abs() < 1e-6);
        // Above 250 ms another 2 % is added.
        v.qdelay = ticks(300 * MS);
        v.qdelay_old = ticks(300 * MS);
        let before = prob(&v);
        calculate_probability(&par, &mut v, 100_000);
        // 0.125 x 0.285 s is over the 2 % cap: 2 %, plus 2 % above 250 ms.
        let step = 0.04;
        assert!((prob(&v) - before - step).abs() < 1e-4);
        // Two updates with zero delay and no backlog decay p by 1/64.
        v.qdelay = 0;
        v.qdelay_old = 0;
        let before = v.prob;
        calculate_probability(&par, &mut v, 0);
        assert!(v.prob < before);
    }

    #[test]
    fn early_drops_are_derandomized_and_wait_for_the_burst_allowance() {
        let par = params();
        let mut v = PieVars::default();
        let mut rnd = || 0u64; // a draw that always drops
        v.prob = MAX_PROB / 2;
        v.qdelay = ticks(100 * MS);
        // The 150 ms burst allowance first.
        assert!(!drop_early(&par, &mut v, 100_000, 1500, &mut rnd));
        v.burst_time = 0;
        // Fewer than two MTUs queued: never.
        assert!(!drop_early(&par, &mut v, 2000, 1500, &mut rnd));
        // accu_prob must reach 0.85 first: p = 0.5 → the second packet.
        v.accu_prob = 0;
        assert!(!drop_early(&par, &mut v, 100_000, 1500, &mut rnd));
        assert!(drop_early(&par, &mut v, 100_000, 1500, &mut rnd));
        assert_eq!(v.accu_prob, 0);
        // At p = 0.1 nothing drops until accu_prob reaches 0.85 (8 packets
        // after a drop), then each packet drops with p: one drop per
        // 8 + 1/p = 18 packets.
        let mut rng = Rng::stream(1, "pie");
        let mut r = || rng.next_u64();
        v.prob = MAX_PROB / 10;
        // (pie_qdisc_enqueue() resets accu_prob after every drop.)
        let drops = (0..100_000)
            .filter(|_| {
                let d = drop_early(&par, &mut v, 100_000, 1500, &mut r);
                if d {
                    v.accu_prob = 0;
                }
                d
            })
            .count();
        assert!((drops as f64 / 1e5 - 1.0 / 18.0).abs() < 0.003, "{drops}");
    }

    #[test]
    fn a_standing_queue_is_brought_to_target() {
        // 1500 B packets at 12 Mbit/s into a 10 Mbit/s drain: without drops
        // the queue would grow without bound; PIE holds it near 15 ms.
        let mut q = Pie::new(
            &serde_json::from_str("{}").unwrap(),
            Limit::Packets(10_000),
            Rng::stream(2, "pie"),
        );
        let mut out = QOut::default();
        let (tx, arr) = (1_200_000u64, 1_000_000u64); // ns per packet
        let (mut next_tx, mut t, mut id) = (0u64, 0u64, 0u32);
        let mut delays = Vec::new();
        while t < 20_000 * MS {
            q.enqueue(QPkt::test(id, 1500, t), t, &mut out);
            id += 1;
            t += arr;
            while next_tx <= t {
                if let Some(p) = q.dequeue(next_tx, &mut out) {
                    if next_tx > 10_000 * MS {
                        delays.push((next_tx - p.enq) as f64 / MS as f64);
                    }
                }
                next_tx += tx;
            }
        }
        let mean = delays.iter().sum::<f64>() / delays.len() as f64;
        assert!((8.0..30.0).contains(&mean), "mean delay {mean} ms");
        // It drops about the excess (1/6 of the arrivals).
        let frac = q.stats().drops_aqm as f64 / id as f64;
        assert!((0.1..0.25).contains(&frac), "{frac}");
    }
}
