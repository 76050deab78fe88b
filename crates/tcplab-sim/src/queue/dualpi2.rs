//! DualPI2, the coupled dual-queue AQM of L4S (RFC 9332), as Linux's
//! `net/sched/sch_dualpi2.c` runs it:
//!
//! - packets whose ECN field has the ECT(1) bit (ECT(1) and CE) go to the
//!   L-queue, the rest to the C-queue (RFC 9332 §2.3, `dualpi2_skb_classify`);
//! - a PI controller updates a base probability p' every `tupdate` from the
//!   larger of the two queues' head sojourns (§2.4 and A.1,
//!   `calculate_probability`);
//! - the C-queue drops (or marks) with p_C = p'² (two random rolls), the
//!   L-queue marks with the coupled p_CL = k·p' (§2.1, `must_drop`,
//!   `dualpi2_classic_marking`, `dualpi2_scalable_marking`), and an L4S
//!   packet whose sojourn (or, with the threshold in packets, the L-queue's
//!   length) exceeds the step threshold is marked at dequeue (the native L4S
//!   AQM, §2.4 and A.1, `do_step_aqm`), if the L-queue held at least
//!   `min_qlen_step` packets when it arrived (`skb_apply_step`, A.1's
//!   minimum threshold in packets for links where one packet's
//!   serialisation exceeds the step);
//! - when k·p' ≥ 1 (overload) the L-queue drops with p_C like the
//!   C-queue (§4.2.1, `drop_overload`);
//! - a weighted round robin with credit keeps the L-queue's priority from
//!   starving the C-queue (§4.2.2, `dequeue_packet`, `c_protection`).
//!
//! The probability is a fraction of `MAX_PROB` = 2^32 − 1. The kernel's
//! `tupdate` timer (`dualpi2_timer`) runs lazily: before each enqueue or
//! dequeue every update due by then is applied, with the queue heads as they
//! were (they change only at events), so this is the same as running it on
//! time. tcplab's hard limit (`queue`) stands for `sch->limit` and its
//! memory limit; GSO splitting and tc filters do not apply.

use std::collections::VecDeque;

use serde::Deserialize;

use super::{Limit, QDrop, QOut, QPkt, QStats, Qdisc, NOT_ECT, PSCHED_MTU};
use crate::rng::Rng;
use tcplab_tcp::Time;

/// sch_dualpi2.c: MAX_PROB.
pub const MAX_PROB: u32 = u32::MAX;
/// sch_dualpi2.c: alpha and beta arrive in units of 1/256 Hz …
const ALPHA_BETA_SHIFT: u32 = 8;
/// … and are kept in units of 64 ns.
const ALPHA_BETA_GRANULARITY: u32 = 6;
const ALPHA_BETA_SCALING: u32 = ALPHA_BETA_SHIFT - ALPHA_BETA_GRANULARITY;
/// The largest alpha or beta in 1/256 Hz (`ALPHA_BETA_MAX`).
pub const ALPHA_BETA_MAX: u64 = (1 << 31) - 1;
/// The weights of the C- and L-queue add up to this (`MAX_WC`).
const MAX_WC: i32 = 100;
/// The ECN bit that sends a packet to the L-queue (`TC_DUALPI2_ECN_MASK_L4S_ECT`:
/// ECT(1), and CE).
const ECN_MASK_L4S: u8 = 1;

fn default_target() -> u64 {
    15_000_000
}
fn default_tupdate() -> u64 {
    16_000_000
}
fn default_alpha() -> f64 {
    0.16
}
fn default_beta() -> f64 {
    3.2
}
fn default_step() -> u64 {
    1_000_000
}
fn default_coupling() -> u32 {
    2
}
fn default_c_protection() -> u32 {
    10
}
fn default_true() -> bool {
    true
}

/// DualPI2's parameters (`dualpi2_reset_default()`'s defaults).
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DualPi2Config {
    /// PI2 target queueing delay, ns (15 ms).
    #[serde(default = "default_target")]
    pub target_ns: u64,
    /// Interval between probability updates, ns (16 ms).
    #[serde(default = "default_tupdate")]
    pub tupdate_ns: u64,
    /// Integral gain, Hz (0.16).
    #[serde(default = "default_alpha")]
    pub alpha: f64,
    /// Proportional gain, Hz (3.2).
    #[serde(default = "default_beta")]
    pub beta: f64,
    /// The L-queue's step threshold on sojourn, ns (1 ms).
    #[serde(default = "default_step")]
    pub step_threshold_ns: u64,
    /// The step threshold on the L-queue's length in packets instead
    /// (`step_in_packets`, tc's `step_thresh Np`); none: on sojourn.
    #[serde(default)]
    pub step_threshold_packets: Option<u32>,
    /// The step applies to an L4S packet only if the L-queue held at least
    /// this many packets when it arrived (`min_qlen_step`, 0: always).
    #[serde(default)]
    pub min_qlen_step: u32,
    /// Coupling factor k (2).
    #[serde(default = "default_coupling")]
    pub coupling: u32,
    /// The C-queue's weight in the round robin, percent (10).
    #[serde(default = "default_c_protection")]
    pub c_protection: u32,
    /// On overload the L-queue drops as the C-queue does (true) instead of
    /// marking until the limit.
    #[serde(default = "default_true")]
    pub drop_overload: bool,
    /// Decide at enqueue (true) instead of at dequeue (false).
    #[serde(default)]
    pub drop_early: bool,
}

/// `alpha` or `beta` in Hz → tc's unit of 1/256 Hz (iproute2 rounds).
fn per_256(hz: f64) -> u64 {
    (hz * 256.0).round() as u64
}

/// The parameters' rules (`dualpi2_policy`); `Err((field, rule))`.
pub fn check(c: &DualPi2Config) -> Result<(), (String, String)> {
    if c.target_ns == 0 {
        return Err(("target".into(), "must be > 0".into()));
    }
    if c.tupdate_ns < 1_000 {
        return Err(("tupdate".into(), "must be ≥ 1us".into()));
    }
    for (f, v) in [
        ("target", c.target_ns),
        ("tupdate", c.tupdate_ns),
        ("step_threshold", c.step_threshold_ns),
    ] {
        if v > super::codel::MAX_TIME_NS {
            return Err((f.into(), format!("must be ≤ 100s (got {v} ns)")));
        }
    }
    for (f, v) in [("alpha", c.alpha), ("beta", c.beta)] {
        let max = ALPHA_BETA_MAX as f64 / 256.0;
        if !(v.is_finite() && per_256(v) >= 1 && per_256(v) <= ALPHA_BETA_MAX) {
            return Err((
                f.into(),
                format!("must be between 1/256 and {max:.0} Hz (got {v})"),
            ));
        }
    }
    if !(1..=255).contains(&c.coupling) {
        return Err((
            "coupling".into(),
            format!("must be between 1 and 255 (got {})", c.coupling),
        ));
    }
    if c.c_protection > MAX_WC as u32 {
        return Err((
            "c_protection".into(),
            format!("must be between 0 and 100 percent (got {})", c.c_protection),
        ));
    }
    Ok(())
}

/// sch_dualpi2.c: dualpi2_scale_alpha_beta() — 1/256 Hz → the increment of
/// the probability per ns of queueing delay in units of 64 ns.
fn scale_alpha_beta(param: u64) -> u32 {
    (((param * MAX_PROB as u64) >> ALPHA_BETA_SCALING) / 1_000_000_000) as u32
}

/// Which queue a packet is in (`dualpi2_classification_results`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Class {
    Classic,
    L4s,
}

pub struct DualPi2 {
    /// The C-queue and the L-queue.
    c: VecDeque<QPkt>,
    l: VecDeque<QPkt>,
    limit: Limit,
    /// Bytes of both queues (`sch->qstats.backlog`).
    backlog: u64,
    target: Time,
    tupdate: Time,
    alpha: u32,
    beta: u32,
    /// The step threshold: ns of sojourn, or packets with `step_in_packets`.
    step_thresh: u64,
    step_in_packets: bool,
    min_qlen_step: u32,
    /// Per L-queue packet, in the same order: whether the step applies to
    /// it (`dualpi2_skb_cb->apply_step`, decided at enqueue).
    l_step: VecDeque<bool>,
    coupling: u32,
    drop_overload: bool,
    drop_early: bool,
    /// The C-queue's and L-queue's weights and the round robin's credit
    /// (its sign says which queue goes next).
    wc: i32,
    wl: i32,
    credit: i32,
    credit_init: i32,
    /// The base probability p' (`pi2_prob`), a fraction of `MAX_PROB`.
    pub prob: u32,
    last_qdelay: Time,
    next_update: Time,
    rng: Rng,
    stats: QStats,
    /// Marks by the step threshold (`step_marks`), of `stats.ecn_marks`.
    pub step_marks: u64,
}

impl DualPi2 {
    pub fn new(c: &DualPi2Config, limit: Limit, rng: Rng) -> DualPi2 {
        let wc = c.c_protection as i32;
        let wl = MAX_WC - wc;
        // dualpi2_calculate_c_protection(): the credit starts at
        // psched_mtu × (wc − wl), so the L-queue goes first when wl > wc.
        let credit_init = PSCHED_MTU as i32 * (wc - wl);
        DualPi2 {
            c: VecDeque::new(),
            l: VecDeque::new(),
            limit,
            backlog: 0,
            target: c.target_ns,
            tupdate: c.tupdate_ns,
            alpha: scale_alpha_beta(per_256(c.alpha)),
            beta: scale_alpha_beta(per_256(c.beta)),
            step_thresh: c
                .step_threshold_packets
                .map_or(c.step_threshold_ns, u64::from),
            step_in_packets: c.step_threshold_packets.is_some(),
            min_qlen_step: c.min_qlen_step,
            l_step: VecDeque::new(),
            coupling: c.coupling,
            drop_overload: c.drop_overload,
            drop_early: c.drop_early,
            wc,
            wl,
            credit: credit_init,
            credit_init,
            prob: 0,
            last_qdelay: 0,
            // dualpi2_init(): the timer first fires tupdate after the start.
            next_update: c.tupdate_ns,
            rng,
            stats: QStats::default(),
            step_marks: 0,
        }
    }

    /// RFC 9332 §2.1 and A.1: the L-queue's and C-queue's probabilities
    /// from the base one, as fractions: (p_CL = k·p', p_C = p'²).
    pub fn probabilities(&self) -> (f64, f64) {
        let p = self.prob as f64 / MAX_PROB as f64;
        ((self.coupling as f64 * p).min(1.0), p * p)
    }

    /// sch_dualpi2.c: dualpi2_timer() — every update due by `now`.
    fn catch_up(&mut self, now: Time) {
        while self.next_update <= now {
            let t = self.next_update;
            self.prob = self.calculate_probability(t);
            self.next_update += self.tupdate;
        }
    }

    /// sch_dualpi2.c: calculate_probability() at `now` — the PI controller
    /// on the larger head sojourn of the two queues (RFC 9332 A.1:
    /// p' += alpha·(qdelay − target) + beta·(qdelay − qdelay_old)).
    fn calculate_probability(&mut self, now: Time) -> u32 {
        // get_queue_delays(): the head packets' sojourns (0 when empty).
        let head = |q: &VecDeque<QPkt>| q.front().map_or(0, |p| now - p.enq);
        let qdelay = head(&self.l).max(head(&self.c));
        let mut delta = (qdelay as i64 - self.target as i64) * self.alpha as i64;
        delta += (qdelay as i64 - self.last_qdelay as i64) * self.beta as i64;
        self.last_qdelay = qdelay;
        // __scale_delta(): delta in units of 64 ns; the sum kept in 32 bits,
        // bounded at 0 and MAX_PROB.
        let new_prob = if delta > 0 {
            let n = ((delta as u64 >> ALPHA_BETA_GRANULARITY) as u32).wrapping_add(self.prob);
            if n < self.prob {
                MAX_PROB
            } else {
                n
            }
        } else {
            let n = self
                .prob
                .wrapping_sub(((-delta) as u64 >> ALPHA_BETA_GRANULARITY) as u32);
            if n > self.prob {
                0
            } else {
                n
            }
        };
        // Without drop on overload, p_CL is capped at 100 %.
        if !self.drop_overload {
            return new_prob.min(MAX_PROB / self.coupling);
        }
        new_prob
    }

    /// sch_dualpi2.c: dualpi2_roll().
    #[inline]
    fn roll(&mut self, prob: u32) -> bool {
        self.rng.next_u32() <= prob
    }

    /// INET_ECN_set_ce() with the mark counted (`dualpi2_mark`).
    fn mark(&mut self, p: &mut QPkt) -> bool {
        if p.set_ce() {
            self.stats.ecn_marks += 1;
            true
        } else {
            false
        }
    }

    /// sch_dualpi2.c: must_drop() — mark or decide to drop `p` by the PI2
    /// probability; never with less than two MTUs queued. `backlog` is the
    /// queue's bytes without `p` when it is being dequeued.
    fn must_drop(&mut self, p: &mut QPkt, class: Class, backlog: u64) -> bool {
        if backlog < 2 * PSCHED_MTU as u64 {
            return false;
        }
        let prob = self.prob;
        let local_l_prob = prob as u64 * self.coupling as u64;
        let overload = local_l_prob > MAX_PROB as u64;
        match class {
            // dualpi2_classic_marking(): p_C = p'² by two rolls; drop a
            // Not-ECT packet, and every packet on overload.
            Class::Classic => {
                if self.roll(prob) && self.roll(prob) {
                    if overload || p.ecn == NOT_ECT {
                        return true;
                    }
                    self.mark(p);
                }
                false
            }
            // dualpi2_scalable_marking(): p_CL = k·p'; on overload drop
            // with p_C (drop_overload) or mark.
            Class::L4s => {
                if overload {
                    if !(self.drop_overload && self.roll(prob) && self.roll(prob)) {
                        self.mark(p);
                        return false;
                    }
                    return true;
                }
                if self.roll(local_l_prob as u32) {
                    if p.ecn == NOT_ECT {
                        return true;
                    }
                    self.mark(p);
                }
                false
            }
        }
    }

    /// sch_dualpi2.c: dequeue_packet() — the next packet by the weighted
    /// round robin (the L-queue first unless the C-queue has credit), the
    /// credit change it will make if it is sent, and whether the step
    /// applies to it.
    fn dequeue_packet(&mut self) -> Option<(QPkt, Class, i32, bool)> {
        let (l_len, c_len) = (self.l.len(), self.c.len());
        let (p, class, change, step) = if l_len > 0 && (c_len == 0 || self.credit <= 0) {
            let p = self.l.pop_front()?;
            let step = self.l_step.pop_front().unwrap_or(true);
            (p, Class::L4s, if c_len > 0 { self.wc } else { 0 }, step)
        } else if c_len > 0 {
            let p = self.c.pop_front()?;
            (
                p,
                Class::Classic,
                if l_len > 0 { -self.wl } else { 0 },
                false,
            )
        } else {
            self.credit = self.credit_init;
            return None;
        };
        self.backlog -= p.bytes as u64;
        Some((p, class, change * p.bytes as i32, step))
    }

    /// sch_dualpi2.c: do_step_aqm() — an L4S packet the step applies to
    /// (`apply_step`) that waited longer than the step threshold, or that
    /// leaves more than the threshold's packets behind it in the L-queue
    /// (`step_in_packets`), is marked (a Not-ECT one dropped: true).
    fn step_aqm(&mut self, p: &mut QPkt, apply_step: bool, now: Time) -> bool {
        let qdelay = if self.step_in_packets {
            self.l.len() as u64
        } else {
            now - p.enq
        };
        if apply_step && qdelay > self.step_thresh {
            if p.ecn == NOT_ECT {
                return true;
            }
            if self.mark(p) {
                self.step_marks += 1;
            }
        }
        false
    }
}

impl Qdisc for DualPi2 {
    /// sch_dualpi2.c: dualpi2_qdisc_enqueue() → dualpi2_enqueue_skb().
    fn enqueue(&mut self, mut p: QPkt, now: Time, out: &mut QOut) {
        self.catch_up(now);
        // dualpi2_skb_classify(): ECT(1) or CE → the L-queue.
        let class = if p.ecn & ECN_MASK_L4S != 0 {
            Class::L4s
        } else {
            Class::Classic
        };
        if !self
            .limit
            .admits(self.c.len() + self.l.len(), self.backlog, p.bytes)
        {
            self.stats.drops_limit += 1;
            out.dropped.push((p, QDrop::Limit));
            return;
        }
        if self.drop_early && self.must_drop(&mut p, class, self.backlog) {
            self.stats.drops_aqm += 1;
            out.dropped.push((p, QDrop::Aqm));
            return;
        }
        self.backlog += p.bytes as u64;
        match class {
            Class::L4s => {
                // skb_apply_step(): the L-queue's length before this packet.
                self.l_step
                    .push_back(self.l.len() >= self.min_qlen_step as usize);
                self.l.push_back(p)
            }
            Class::Classic => self.c.push_back(p),
        }
    }

    /// sch_dualpi2.c: dualpi2_qdisc_dequeue().
    fn dequeue(&mut self, now: Time, out: &mut QOut) -> Option<QPkt> {
        self.catch_up(now);
        while let Some((mut p, class, change, step)) = self.dequeue_packet() {
            if !self.drop_early && self.must_drop(&mut p, class, self.backlog) {
                self.stats.drops_aqm += 1;
                out.dropped.push((p, QDrop::Aqm));
                continue;
            }
            if class == Class::L4s && self.step_aqm(&mut p, step, now) {
                self.stats.drops_aqm += 1;
                out.dropped.push((p, QDrop::Aqm));
                continue;
            }
            self.credit += change;
            return Some(p);
        }
        None
    }

    fn len(&self) -> usize {
        self.c.len() + self.l.len()
    }

    fn bytes(&self) -> u64 {
        self.backlog
    }

    fn stats(&self) -> QStats {
        self.stats
    }

    fn name(&self) -> &'static str {
        "dualpi2"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::{CE, ECT0, ECT1};

    const MS: u64 = 1_000_000;

    fn cfg() -> DualPi2Config {
        serde_json::from_str("{}").unwrap()
    }

    fn q() -> DualPi2 {
        DualPi2::new(&cfg(), Limit::Packets(10_000), Rng::stream(1, "dualpi2"))
    }

    fn pkt(id: u32, ecn: u8, enq: Time) -> QPkt {
        QPkt {
            ecn,
            ..QPkt::test(id, 1500, enq)
        }
    }

    #[test]
    fn linux_defaults_and_their_scaling() {
        let c = cfg();
        assert_eq!(
            (c.target_ns, c.tupdate_ns, c.step_threshold_ns),
            (15 * MS, 16 * MS, MS)
        );
        assert_eq!((c.coupling, c.c_protection), (2, 10));
        assert!(c.drop_overload && !c.drop_early);
        // Step on sojourn, applied whatever the L-queue's length.
        assert_eq!((c.step_threshold_packets, c.min_qlen_step), (None, 0));
        // dualpi2_reset_default(): alpha 41/256 Hz and beta 819/256 Hz.
        assert_eq!((per_256(c.alpha), per_256(c.beta)), (41, 819));
        let d = q();
        // 41 · (2^32 − 1) / 4 / 10^9 and 819 · (2^32 − 1) / 4 / 10^9.
        assert_eq!((d.alpha, d.beta), (44, 879));
        // wc = 10 %, wl = 90 %: the credit starts at 1514 · (10 − 90).
        assert_eq!(d.credit, -121_120);
        assert_eq!(check(&c), Ok(()));
    }

    #[test]
    fn ect1_and_ce_go_to_the_l_queue_the_rest_to_the_c_queue() {
        let mut d = q();
        let mut out = QOut::default();
        for (i, e) in [NOT_ECT, ECT0, ECT1, CE].into_iter().enumerate() {
            d.enqueue(pkt(i as u32, e, 0), 0, &mut out);
        }
        let ids = |v: &VecDeque<QPkt>| v.iter().map(|p| p.id).collect::<Vec<_>>();
        assert_eq!(ids(&d.c), vec![0, 1]);
        assert_eq!(ids(&d.l), vec![2, 3]);
    }

    /// RFC 9332 A.1 / calculate_probability(): each update adds
    /// alpha·(qdelay − target) + beta·(qdelay − qdelay_old), in the kernel's
    /// fixed point, bounded at 0.
    #[test]
    fn the_pi_update_follows_the_kernels_arithmetic() {
        let mut d = q();
        let mut out = QOut::default();
        // A classic packet waits from 0; the first update is at 16 ms,
        // with qdelay 16 ms: 1 ms above target, 16 ms above qdelay_old = 0.
        d.enqueue(pkt(0, NOT_ECT, 0), 0, &mut out);
        d.catch_up(16 * MS);
        let want = ((MS as i64 * 44 + 16 * MS as i64 * 879) >> 6) as u32;
        assert_eq!(d.prob, want);
        // In RFC 9332's terms: alpha·(1 ms) + beta·(16 ms) = 0.000156 + 0.0512.
        let p = d.prob as f64 / MAX_PROB as f64;
        assert!((p - (0.16 * 0.001 + 3.2 * 0.016)).abs() < 2e-4, "{p}");
        // Next update at 32 ms: qdelay 32 ms, +17 ms above target, +16 ms
        // above the last.
        d.catch_up(32 * MS);
        let want2 = want + ((17 * MS as i64 * 44 + 16 * MS as i64 * 879) >> 6) as u32;
        assert_eq!(d.prob, want2);
        // An empty queue: qdelay 0 pulls the probability down to 0 (bounded).
        d.dequeue(32 * MS, &mut out);
        for k in 3..40 {
            d.catch_up(k * 16 * MS);
        }
        assert_eq!(d.prob, 0);
    }

    /// RFC 9332 §2.1: p_C = p'² and p_CL = k·p'. With p' held at 0.2, the
    /// C-queue's ECT(0) packets are marked with 0.04 and the L-queue's with
    /// 0.4 (k = 2), measured over many dequeues.
    #[test]
    fn coupled_marking_is_p_squared_for_classic_and_k_p_for_l4s() {
        for (ecn, want) in [(ECT0, 0.04), (ECT1, 0.4)] {
            let mut d = q();
            // No update during the test: keep the base probability fixed.
            d.next_update = Time::MAX;
            d.prob = (0.2 * MAX_PROB as f64) as u32;
            d.step_thresh = Time::MAX;
            let mut out = QOut::default();
            let n = 40_000;
            let mut marked = 0;
            for i in 0..n {
                // Four packets queued: the three left when one is taken
                // are above the floor of two MTUs (3028 bytes).
                while d.len() < 4 {
                    d.enqueue(pkt(i, ecn, 0), 0, &mut out);
                }
                let p = d.dequeue(0, &mut out).unwrap();
                marked += (p.ecn == CE) as u32;
            }
            assert!(out.dropped.is_empty());
            let f = marked as f64 / n as f64;
            assert!((f - want).abs() < 0.01, "ecn {ecn}: {f} vs {want}");
            let (pl, pc) = d.probabilities();
            assert!((pl - 0.4).abs() < 1e-6 && (pc - 0.04).abs() < 1e-6);
        }
    }

    /// Not-ECT classic packets are dropped where ECT ones would be marked;
    /// nothing is marked or dropped with less than two MTUs queued.
    #[test]
    fn classic_not_ect_is_dropped_and_a_short_queue_is_left_alone() {
        let mut d = q();
        d.next_update = Time::MAX;
        d.prob = MAX_PROB / 2; // p_C = 0.25
        let mut out = QOut::default();
        for i in 0..1000 {
            d.enqueue(pkt(i, NOT_ECT, 0), 0, &mut out);
        }
        for _ in 0..1000 {
            let _ = d.dequeue(0, &mut out);
        }
        let dropped = d.stats().drops_aqm;
        assert!((200..300).contains(&dropped), "{dropped}");
        assert_eq!(d.stats().ecn_marks, 0);
        // Two packets (3000 bytes < 2 · 1514): the floor holds.
        let mut d = q();
        d.next_update = Time::MAX;
        d.prob = MAX_PROB;
        let mut out = QOut::default();
        d.enqueue(pkt(0, NOT_ECT, 0), 0, &mut out);
        d.enqueue(pkt(1, NOT_ECT, 0), 0, &mut out);
        assert!(d.dequeue(0, &mut out).is_some() && d.dequeue(0, &mut out).is_some());
        assert!(out.dropped.is_empty());
    }

    /// The step: an L4S packet that waited more than 1 ms is marked at
    /// dequeue whatever p' is (here 0); one that waited less is not.
    #[test]
    fn the_l_queue_marks_above_the_step_threshold() {
        let mut d = q();
        let mut out = QOut::default();
        d.enqueue(pkt(0, ECT1, 0), 0, &mut out);
        d.enqueue(pkt(1, ECT1, 0), 0, &mut out);
        assert_eq!(
            d.dequeue(MS, &mut out).unwrap().ecn,
            ECT1,
            "1 ms: not above"
        );
        assert_eq!(d.dequeue(MS + 1, &mut out).unwrap().ecn, CE);
        assert_eq!((d.step_marks, d.stats().ecn_marks), (1, 1));
        assert_eq!(d.prob, 0);
    }

    /// `n` L4S packets enqueued at 0 into a DualPI2 with `c`, then every one
    /// dequeued at `at`: their ECN fields, and the step marks.
    fn l4s_burst(c: DualPi2Config, n: u32, at: Time) -> (Vec<u8>, u64) {
        let mut d = DualPi2::new(&c, Limit::Packets(10_000), Rng::stream(3, "burst"));
        let mut out = QOut::default();
        for i in 0..n {
            d.enqueue(pkt(i, ECT1, 0), 0, &mut out);
        }
        let got = (0..n).map(|_| d.dequeue(at, &mut out).unwrap().ecn);
        (got.collect(), d.step_marks)
    }

    /// skb_apply_step(): with `min_qlen_step` = 2 the step applies only to an
    /// L4S packet that found at least two packets in the L-queue; the first
    /// two of a burst are never step-marked however long they wait (here
    /// 5 ms, above the 1 ms step; p' is still 0).
    #[test]
    fn min_qlen_step_spares_packets_that_found_a_short_l_queue() {
        for (min_qlen, want) in [(0, vec![CE, CE, CE, CE]), (2, vec![ECT1, ECT1, CE, CE])] {
            let c = DualPi2Config {
                min_qlen_step: min_qlen,
                ..cfg()
            };
            let (got, marks) = l4s_burst(c, 4, 5 * MS);
            assert_eq!(got, want, "min_qlen_step {min_qlen}");
            assert_eq!(marks, want.iter().filter(|&&e| e == CE).count() as u64);
        }
    }

    /// do_step_aqm() with the threshold in packets (`step_in_packets`): a
    /// packet is marked when more than the threshold's packets stay behind
    /// it in the L-queue, however short its sojourn.
    #[test]
    fn a_step_threshold_in_packets_counts_the_l_queue() {
        let c = DualPi2Config {
            step_threshold_packets: Some(2),
            ..cfg()
        };
        // At dequeue 4, 3, 2, 1, 0 packets stay behind: "> 2" marks the first two.
        let (got, marks) = l4s_burst(c, 5, 0);
        assert_eq!(got, vec![CE, CE, ECT1, ECT1, ECT1]);
        assert_eq!(marks, 2);
    }

    /// Overload (k·p' > 1): the L-queue drops with p'² as the C-queue
    /// (RFC 9332 §4.2.1) and marks the rest; without drop_overload it only
    /// marks.
    #[test]
    fn overload_drops_l4s_packets_with_the_classic_probability() {
        for (drop_overload, want_drops) in [(true, true), (false, false)] {
            let c = DualPi2Config {
                drop_overload,
                step_threshold_ns: u64::MAX,
                ..cfg()
            };
            let mut d = DualPi2::new(&c, Limit::Packets(10_000), Rng::stream(2, "o"));
            d.next_update = Time::MAX;
            d.prob = (0.8 * MAX_PROB as f64) as u32; // k·p' = 1.6
            let mut out = QOut::default();
            for i in 0..2000 {
                d.enqueue(pkt(i, ECT1, 0), 0, &mut out);
            }
            let mut sent = 0;
            while d.dequeue(0, &mut out).is_some() {
                sent += 1;
            }
            let drops = d.stats().drops_aqm;
            if want_drops {
                // p'² = 0.64 of the packets.
                let f = drops as f64 / 2000.0;
                assert!((f - 0.64).abs() < 0.04, "{f}");
            } else {
                assert_eq!(drops, 0);
            }
            assert_eq!(sent + drops, 2000);
            // Every sent packet is marked but the last three (fewer than two
            // MTUs stay behind them).
            assert_eq!(d.stats().ecn_marks + 3, sent);
        }
    }

    /// The round robin: with both queues backlogged the C-queue gets about
    /// its 10 % weight of the bytes, and the L-queue the rest.
    #[test]
    fn c_protection_gives_the_classic_queue_its_weight() {
        let mut d = q();
        d.next_update = Time::MAX;
        d.step_thresh = Time::MAX;
        let mut out = QOut::default();
        for i in 0..3000 {
            d.enqueue(pkt(i, NOT_ECT, 0), 0, &mut out);
            d.enqueue(pkt(i, ECT1, 0), 0, &mut out);
        }
        let mut classic = 0;
        for _ in 0..2000 {
            let p = d.dequeue(0, &mut out).unwrap();
            classic += (p.ecn == NOT_ECT) as u32;
        }
        assert!((195..=205).contains(&classic), "{classic}");
    }

    #[test]
    fn bad_parameters_name_their_field() {
        let bad = |c: DualPi2Config| check(&c).unwrap_err().0;
        assert_eq!(
            bad(DualPi2Config {
                alpha: 0.0,
                ..cfg()
            }),
            "alpha"
        );
        assert_eq!(bad(DualPi2Config { beta: 1e9, ..cfg() }), "beta");
        assert_eq!(
            bad(DualPi2Config {
                coupling: 0,
                ..cfg()
            }),
            "coupling"
        );
        assert_eq!(
            bad(DualPi2Config {
                c_protection: 101,
                ..cfg()
            }),
            "c_protection"
        );
        assert_eq!(
            bad(DualPi2Config {
                tupdate_ns: 999,
                ..cfg()
            }),
            "tupdate"
        );
    }
}
