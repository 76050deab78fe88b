//! CoDel (RFC 8289) as Linux runs it: `include/net/codel.h`,
//! `include/net/codel_impl.h` and `net/sched/sch_codel.c`.
//!
//! Time is Linux's `codel_time_t`: nanoseconds shifted right by
//! `CODEL_SHIFT` (10), in a wrapping u32, compared as signed differences.
//! The control law keeps 1/sqrt(count) in a 16-bit fixed-point
//! `rec_inv_sqrt`, refined by one Newton step per count change.
//! `codel_dequeue` is shared with fq_codel (one CoDel per flow queue).

use std::collections::VecDeque;

use serde::Deserialize;

use super::{Limit, QDrop, QOut, QPkt, QStats, Qdisc, PSCHED_MTU};
use tcplab_tcp::Time;

/// codel.h: CODEL_SHIFT.
pub const CODEL_SHIFT: u32 = 10;
/// codel.h: REC_INV_SQRT_BITS / REC_INV_SQRT_SHIFT.
const REC_INV_SQRT_BITS: u32 = 16;
const REC_INV_SQRT_SHIFT: u32 = 32 - REC_INV_SQRT_BITS;

pub type CodelTime = u32;

/// codel.h: codel_get_time() — ns >> CODEL_SHIFT.
#[inline]
pub fn codel_time(ns: Time) -> CodelTime {
    (ns >> CODEL_SHIFT) as u32
}

/// codel.h: codel_time_after(a, b).
#[inline]
fn after(a: CodelTime, b: CodelTime) -> bool {
    (a.wrapping_sub(b) as i32) > 0
}
#[inline]
fn after_eq(a: CodelTime, b: CodelTime) -> bool {
    (a.wrapping_sub(b) as i32) >= 0
}
#[inline]
fn before(a: CodelTime, b: CodelTime) -> bool {
    after(b, a)
}

fn default_target() -> u64 {
    5_000_000
}
fn default_interval() -> u64 {
    100_000_000
}

/// `aqm = { kind = "codel", ... }`: codel_params_init() defaults and
/// sch_codel's limit of 1000 packets (the link's `queue` sets the limit).
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CodelConfig {
    #[serde(default = "default_target")]
    pub target_ns: u64,
    #[serde(default = "default_interval")]
    pub interval_ns: u64,
    /// Mark ECN-capable packets instead of dropping them (sch_codel: off).
    #[serde(default)]
    pub ecn: bool,
    /// Mark every ECN-capable packet whose sojourn exceeds this (off: None).
    #[serde(default)]
    pub ce_threshold_ns: Option<u64>,
}

/// The largest time parameter: `16 * interval` must fit a signed
/// `codel_time_t` difference.
pub(super) const MAX_TIME_NS: u64 = 100_000_000_000;

pub(super) fn check_times(
    target: u64,
    interval: u64,
    ce: Option<u64>,
) -> Result<(), (String, String)> {
    for (f, v) in [
        ("target", target),
        ("interval", interval),
        ("ce_threshold", ce.unwrap_or(0)),
    ] {
        if v > MAX_TIME_NS {
            return Err((f.into(), format!("must be ≤ 100s (got {v} ns)")));
        }
    }
    if ce == Some(0) {
        return Err(("ce_threshold".into(), "must be > 0".into()));
    }
    Ok(())
}

/// codel.h: struct codel_params.
#[derive(Clone, Copy, Debug)]
pub struct CodelParams {
    pub target: CodelTime,
    pub interval: CodelTime,
    pub ce_threshold: CodelTime,
    pub mtu: u32,
    pub ecn: bool,
}

/// codel.h: CODEL_DISABLED_THRESHOLD.
const DISABLED_THRESHOLD: CodelTime = i32::MAX as u32;

impl CodelParams {
    pub fn new(target_ns: u64, interval_ns: u64, ce_ns: Option<u64>, ecn: bool) -> CodelParams {
        // sch_codel.c: codel_change() converts µs to codel time as
        // (val * NSEC_PER_USEC) >> CODEL_SHIFT; from ns that is ns >> 10.
        CodelParams {
            target: codel_time(target_ns),
            interval: codel_time(interval_ns),
            ce_threshold: ce_ns.map_or(DISABLED_THRESHOLD, codel_time),
            mtu: PSCHED_MTU,
            ecn,
        }
    }
}

/// codel.h: struct codel_vars.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CodelVars {
    pub count: u32,
    pub lastcount: u32,
    pub dropping: bool,
    pub rec_inv_sqrt: u16,
    pub first_above_time: CodelTime,
    pub drop_next: CodelTime,
    pub ldelay: CodelTime,
}

/// codel.h: struct codel_stats (the counters tcplab reports).
#[derive(Clone, Copy, Debug, Default)]
pub struct CodelStats {
    pub maxpacket: u32,
    pub drop_count: u64,
    pub ecn_mark: u64,
    pub ce_mark: u64,
}

/// codel_impl.h: codel_Newton_step() — new_invsqrt = (invsqrt / 2) *
/// (3 - count * invsqrt^2), invsqrt in Q0.32.
pub fn newton_step(v: &mut CodelVars) {
    let invsqrt = (v.rec_inv_sqrt as u32) << REC_INV_SQRT_SHIFT;
    let invsqrt2 = ((invsqrt as u64 * invsqrt as u64) >> 32) as u32;
    let mut val = (3u64 << 32).wrapping_sub(v.count as u64 * invsqrt2 as u64);
    val >>= 2; // avoid overflow in the following multiply
    val = (val.wrapping_mul(invsqrt as u64)) >> (32 - 2 + 1);
    v.rec_inv_sqrt = (val >> REC_INV_SQRT_SHIFT) as u16;
}

/// codel_impl.h: codel_control_law() — t + interval / sqrt(count), with
/// reciprocal_scale(interval, rec_inv_sqrt << REC_INV_SQRT_SHIFT).
pub fn control_law(t: CodelTime, interval: CodelTime, rec_inv_sqrt: u16) -> CodelTime {
    let scale = (rec_inv_sqrt as u32) << REC_INV_SQRT_SHIFT;
    t.wrapping_add(((interval as u64 * scale as u64) >> 32) as u32)
}

/// Where `codel_dequeue` takes packets from (its `dequeue_func`) and the
/// backlog it compares with one MTU (the whole qdisc's, after the removal).
pub trait CodelSource {
    fn dequeue(&mut self) -> Option<QPkt>;
    fn backlog(&self) -> u64;
}

/// codel_impl.h: codel_should_drop().
fn should_drop(
    p: Option<&QPkt>,
    v: &mut CodelVars,
    params: &CodelParams,
    st: &mut CodelStats,
    backlog: u64,
    now: CodelTime,
) -> bool {
    let Some(p) = p else {
        v.first_above_time = 0;
        return false;
    };
    v.ldelay = now.wrapping_sub(codel_time(p.enq));
    st.maxpacket = st.maxpacket.max(p.bytes);
    if before(v.ldelay, params.target) || backlog <= params.mtu as u64 {
        // went below - stay below for at least interval
        v.first_above_time = 0;
        return false;
    }
    let mut ok_to_drop = false;
    if v.first_above_time == 0 {
        // just went above from below: if we stay above for at least
        // interval we'll say it's ok to drop
        v.first_above_time = now.wrapping_add(params.interval);
    } else if after(now, v.first_above_time) {
        ok_to_drop = true;
    }
    ok_to_drop
}

/// codel_impl.h: codel_dequeue(). Dropped packets go to `out` as AQM
/// drops; a marked packet comes back with CE.
pub fn codel_dequeue<S: CodelSource>(
    src: &mut S,
    params: &CodelParams,
    v: &mut CodelVars,
    st: &mut CodelStats,
    now_ns: Time,
    out: &mut QOut,
) -> Option<QPkt> {
    let Some(mut skb) = src.dequeue() else {
        v.dropping = false;
        return None;
    };
    let now = codel_time(now_ns);
    let mut cur = Some(skb);
    let mut drop = should_drop(cur.as_ref(), v, params, st, src.backlog(), now);
    'end: {
        if v.dropping {
            if !drop {
                // sojourn time below target - leave dropping state
                v.dropping = false;
            } else if after_eq(now, v.drop_next) {
                // It's time for the next drop. Drop the current packet and
                // dequeue the next; a large backlog may call for more drops
                // now, hence the loop.
                while v.dropping && after_eq(now, v.drop_next) {
                    v.count = v.count.wrapping_add(1);
                    newton_step(v);
                    if params.ecn && skb.set_ce() {
                        st.ecn_mark += 1;
                        v.drop_next = control_law(v.drop_next, params.interval, v.rec_inv_sqrt);
                        cur = Some(skb);
                        break 'end;
                    }
                    out.dropped.push((skb, QDrop::Aqm));
                    st.drop_count += 1;
                    cur = src.dequeue();
                    if !should_drop(cur.as_ref(), v, params, st, src.backlog(), now) {
                        // leave dropping state
                        v.dropping = false;
                    } else {
                        // and schedule the next drop
                        v.drop_next = control_law(v.drop_next, params.interval, v.rec_inv_sqrt);
                    }
                    match cur {
                        Some(s) => skb = s,
                        None => break,
                    }
                }
            }
        } else if drop {
            if params.ecn && skb.set_ce() {
                st.ecn_mark += 1;
                cur = Some(skb);
            } else {
                out.dropped.push((skb, QDrop::Aqm));
                st.drop_count += 1;
                cur = src.dequeue();
                drop = should_drop(cur.as_ref(), v, params, st, src.backlog(), now);
                let _ = drop;
            }
            v.dropping = true;
            // If min went above target close to when we last went below it,
            // assume that the drop rate that controlled the queue on the
            // last cycle is a good starting point to control it now.
            let delta = v.count.wrapping_sub(v.lastcount);
            if delta > 1 && before(now.wrapping_sub(v.drop_next), 16 * params.interval) {
                v.count = delta;
                // the approximation is corrected quadratically by the next
                // Newton steps
                newton_step(v);
            } else {
                v.count = 1;
                v.rec_inv_sqrt = (!0u32 >> REC_INV_SQRT_SHIFT) as u16;
            }
            v.lastcount = v.count;
            v.drop_next = control_law(now, params.interval, v.rec_inv_sqrt);
        }
    }
    // end: packets above ce_threshold are marked too.
    if let Some(s) = cur.as_mut() {
        if after(v.ldelay, params.ce_threshold) && s.set_ce() {
            st.ce_mark += 1;
        }
    }
    cur
}

/// sch_codel.c: one CoDel queue with a packet limit.
pub struct Codel {
    q: VecDeque<QPkt>,
    bytes: u64,
    limit: Limit,
    params: CodelParams,
    vars: CodelVars,
    cstats: CodelStats,
    drops_limit: u64,
}

struct FifoSrc<'a> {
    q: &'a mut VecDeque<QPkt>,
    bytes: &'a mut u64,
}

impl CodelSource for FifoSrc<'_> {
    /// sch_codel.c: dequeue_func() — the head, backlog reduced.
    fn dequeue(&mut self) -> Option<QPkt> {
        let p = self.q.pop_front()?;
        *self.bytes -= p.bytes as u64;
        Some(p)
    }
    fn backlog(&self) -> u64 {
        *self.bytes
    }
}

impl Codel {
    pub fn new(c: &CodelConfig, limit: Limit) -> Codel {
        Codel {
            q: VecDeque::new(),
            bytes: 0,
            limit,
            params: CodelParams::new(c.target_ns, c.interval_ns, c.ce_threshold_ns, c.ecn),
            vars: CodelVars::default(),
            cstats: CodelStats::default(),
            drops_limit: 0,
        }
    }

    pub fn vars(&self) -> &CodelVars {
        &self.vars
    }
}

impl Qdisc for Codel {
    fn enqueue(&mut self, p: QPkt, _now: Time, out: &mut QOut) {
        // sch_codel.c: codel_qdisc_enqueue(): tail-enqueue below the limit,
        // else drop (the time stamp is `p.enq`).
        if self.limit.admits(self.q.len(), self.bytes, p.bytes) {
            self.bytes += p.bytes as u64;
            self.q.push_back(p);
        } else {
            self.drops_limit += 1;
            out.dropped.push((p, QDrop::Limit));
        }
    }

    fn dequeue(&mut self, now: Time, out: &mut QOut) -> Option<QPkt> {
        // sch_codel.c: codel_qdisc_dequeue().
        let mut src = FifoSrc {
            q: &mut self.q,
            bytes: &mut self.bytes,
        };
        codel_dequeue(
            &mut src,
            &self.params,
            &mut self.vars,
            &mut self.cstats,
            now,
            out,
        )
    }

    fn len(&self) -> usize {
        self.q.len()
    }
    fn bytes(&self) -> u64 {
        self.bytes
    }
    fn stats(&self) -> QStats {
        QStats {
            drops_limit: self.drops_limit,
            drops_aqm: self.cstats.drop_count,
            ecn_marks: self.cstats.ecn_mark + self.cstats.ce_mark,
        }
    }
    fn name(&self) -> &'static str {
        "codel"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::{ECT0, NOT_ECT};

    const MS: u64 = 1_000_000;

    fn cfg(ecn: bool) -> CodelConfig {
        CodelConfig {
            target_ns: 5 * MS,
            interval_ns: 100 * MS,
            ecn,
            ce_threshold_ns: None,
        }
    }

    fn pkt(id: u32, enq: Time, ecn: u8) -> QPkt {
        QPkt {
            ecn,
            ..QPkt::test(id, 1500, enq)
        }
    }

    /// The float recurrence Linux's integer Newton step approximates:
    /// r(1) = 1, r(n) = r(n-1)/2 * (3 - n r(n-1)^2).
    fn float_recurrence(n: u32) -> Vec<f64> {
        let mut r = vec![0.0, 1.0];
        for k in 2..=n {
            let x: f64 = r[k as usize - 1];
            r.push(x / 2.0 * (3.0 - k as f64 * x * x));
        }
        r
    }

    #[test]
    fn newton_steps_track_one_over_sqrt_count() {
        // RFC 8289 §5.5: the control law is t + interval / sqrt(count).
        // Linux starts at rec_inv_sqrt = ~0 >> 16 (1.0) and refines it by one
        // Newton step per increment: it follows the float recurrence to the
        // fixed point's precision and converges to 1/sqrt(count).
        let r = float_recurrence(5000);
        let mut v = CodelVars {
            count: 1,
            rec_inv_sqrt: (!0u32 >> REC_INV_SQRT_SHIFT) as u16,
            ..Default::default()
        };
        for count in 2..5000u32 {
            v.count = count;
            newton_step(&mut v);
            let got = v.rec_inv_sqrt as f64 / 65536.0;
            assert!(
                (got - r[count as usize]).abs() < 2e-3,
                "count {count}: {got} vs {}",
                r[count as usize]
            );
            if count >= 200 {
                let exact = 1.0 / (count as f64).sqrt();
                assert!((got - exact).abs() / exact < 0.03, "count {count}");
            }
        }
        // The first step, as the kernel's integer arithmetic computes it.
        let mut v = CodelVars {
            count: 2,
            rec_inv_sqrt: 0xffff,
            ..Default::default()
        };
        newton_step(&mut v);
        // (1/2)(3 - 2) = 0.5, from 0xffff/65536 rather than 1.0: 32769.
        assert_eq!(v.rec_inv_sqrt, 32769);
        let interval = codel_time(100 * MS);
        assert_eq!(control_law(1000, interval, 0xffff), 1000 + interval - 2);
        assert_eq!(control_law(0, interval, 32768), interval / 2);
    }

    /// A queue that stays 10 ms deep: packets enqueued every 1 ms, each
    /// dequeued 10 ms later. CoDel's first drop comes one interval after the
    /// sojourn first exceeded target, the next ones at interval/sqrt(count).
    fn standing_queue(ecn: bool, pkt_ecn: u8) -> (Vec<Time>, Codel) {
        let mut q = Codel::new(&cfg(ecn), Limit::Packets(1000));
        let mut out = QOut::default();
        let mut signals = Vec::new();
        for (id, t) in (0..2000 * MS).step_by(MS as usize).enumerate() {
            q.enqueue(pkt(id as u32, t, pkt_ecn), t, &mut out);
            if t >= 10 * MS {
                let before = out.dropped.len();
                let p = q.dequeue(t, &mut out);
                if out.dropped.len() > before || p.is_some_and(|p| p.ecn == crate::queue::CE) {
                    signals.push(t);
                }
            }
        }
        (signals, q)
    }

    #[test]
    fn standing_queue_drops_at_the_control_law_times() {
        let (drops, q) = standing_queue(false, NOT_ECT);
        // Above target from the first dequeue at 10 ms: first drop once now
        // is after first_above_time = 10 ms + interval (codel time units).
        assert!((110 * MS..=112 * MS).contains(&drops[0]), "{drops:?}");
        // Each drop removes one extra packet, so the standing queue shrinks
        // by 1 ms per drop; once it is below target (5 ms) CoDel stops: 5
        // or 6 drops spaced by interval/sqrt(count).
        let gaps: Vec<f64> = drops
            .windows(2)
            .map(|w| (w[1] - w[0]) as f64 / MS as f64)
            .collect();
        // The gap after the k-th drop is interval * r(k) (1 ms arrivals).
        let r = float_recurrence(10);
        for (k, g) in gaps.iter().enumerate() {
            let expect = 100.0 * r[k + 1];
            assert!((g - expect).abs() < 1.5, "gap {k}: {g} vs {expect}");
        }
        assert!(
            (5..=6).contains(&drops.len()),
            "{} drops: {drops:?}",
            drops.len()
        );
        assert_eq!(q.stats().drops_aqm, drops.len() as u64);
        assert_eq!(q.stats().ecn_marks, 0);
    }

    #[test]
    fn with_ecn_it_marks_instead_and_the_queue_stays() {
        let (marks, q) = standing_queue(true, ECT0);
        // Marking does not shorten the queue: the signals go on at an
        // increasing rate (interval/sqrt(count)).
        assert!((110 * MS..=112 * MS).contains(&marks[0]));
        assert!(marks.len() > 20, "{}", marks.len());
        assert_eq!(q.stats().drops_aqm, 0);
        assert_eq!(q.stats().ecn_marks, marks.len() as u64);
        let last_gap = (marks[marks.len() - 1] - marks[marks.len() - 2]) as f64 / MS as f64;
        let count = q.vars().count;
        let r = float_recurrence(count);
        assert!(
            (last_gap - 100.0 * r[count as usize - 1]).abs() < 1.5,
            "{last_gap}"
        );
        // A Not-ECT packet is dropped even with ecn on.
        let (drops, q) = standing_queue(true, NOT_ECT);
        assert_eq!(q.stats().drops_aqm, drops.len() as u64);
    }

    /// codel_dequeue()'s re-entry into the dropping state (RFC 8289 §5.5,
    /// "Linux version"): within 16 intervals of the last scheduled drop it
    /// resumes at the count the last episode added (`count - lastcount`),
    /// later it starts over at 1.
    fn reenter(since_drop_next: Time) -> (CodelVars, Time) {
        let now = 10_000 * MS;
        let mut q = Codel::new(&cfg(false), Limit::Packets(1000));
        let mut out = QOut::default();
        for i in 0..3 {
            q.enqueue(pkt(i, now - 50 * MS, NOT_ECT), now - 50 * MS, &mut out);
        }
        let mut r = 0xffffu16;
        for c in 2..=10 {
            let mut v = CodelVars {
                count: c,
                rec_inv_sqrt: r,
                ..Default::default()
            };
            newton_step(&mut v);
            r = v.rec_inv_sqrt;
        }
        // The last episode raised count from 3 to 10 and ended; the sojourn
        // has been above target for more than an interval again.
        q.vars = CodelVars {
            count: 10,
            lastcount: 3,
            dropping: false,
            rec_inv_sqrt: r,
            first_above_time: codel_time(now - 200 * MS),
            drop_next: codel_time(now - since_drop_next),
            ldelay: 0,
        };
        assert!(q.dequeue(now, &mut out).is_some());
        assert_eq!(out.dropped.len(), 1, "the head is dropped on entry");
        let v = *q.vars();
        assert!(v.dropping);
        (v, now)
    }

    #[test]
    fn reentering_soon_resumes_at_the_last_episodes_count() {
        let (v, now) = reenter(500 * MS);
        assert_eq!((v.count, v.lastcount), (7, 7));
        // One Newton step from 1/sqrt(10) towards 1/sqrt(7): the next drop
        // is about interval/sqrt(7) away.
        let gap = (v.drop_next.wrapping_sub(codel_time(now)) as u64) << CODEL_SHIFT;
        let want = 100.0 / 7f64.sqrt();
        let got = gap as f64 / MS as f64;
        assert!((got - want).abs() / want < 0.05, "{got} vs {want}");
        // More than 16 intervals later: a fresh start, one interval away.
        let (v, now) = reenter(1700 * MS);
        assert_eq!((v.count, v.lastcount), (1, 1));
        let gap = (v.drop_next.wrapping_sub(codel_time(now)) as u64) << CODEL_SHIFT;
        assert!((gap as f64 / MS as f64 - 100.0).abs() < 0.01, "{gap}");
    }

    #[test]
    fn one_mtu_of_backlog_is_never_dropped() {
        // codel_should_drop(): backlog <= mtu → no drop however old.
        let mut q = Codel::new(&cfg(false), Limit::Packets(1000));
        let mut out = QOut::default();
        for i in 0..1000u32 {
            let t = i as u64 * 200 * MS;
            q.enqueue(pkt(i, t, NOT_ECT), t, &mut out);
            q.enqueue(pkt(i, t, NOT_ECT), t, &mut out);
            // two packets queued, each dequeue leaves one (≤ 1 MTU) behind
            assert!(q.dequeue(t + 150 * MS, &mut out).is_some());
            assert!(q.dequeue(t + 150 * MS, &mut out).is_some());
        }
        assert!(out.dropped.is_empty());
    }
}
