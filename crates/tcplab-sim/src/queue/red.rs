//! RED (Floyd & Jacobson 1993) as `net/sched/sch_red.c` and
//! `include/net/red.h` run it, with the parameters `tc` derives
//! (iproute2's `q_red.c` and `tc_red.c`): the average queue `qavg` is a
//! fixed-point EWMA with weight 2^-Wlog, decayed over idle periods through a
//! table; between the thresholds a packet is marked or dropped with a
//! probability that grows with the packets since the last mark.

use serde::Deserialize;

use super::droptail::{fifo_accessors, Fifo};
use super::{Limit, QOut, QPkt, QStats, Qdisc};
use crate::rng::Rng;
use tcplab_tcp::Time;

fn default_probability() -> f64 {
    0.02
}
fn default_avpkt() -> u32 {
    1000
}

/// `aqm = { kind = "red", ... }`: thresholds in bytes of backlog.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RedConfig {
    /// qth_min; None: max / 3 (q_red.c).
    #[serde(default)]
    pub min_bytes: Option<u64>,
    /// qth_max; None: 3 min, or limit / 4 (q_red.c).
    #[serde(default)]
    pub max_bytes: Option<u64>,
    /// max_p, the marking probability at qth_max.
    #[serde(default = "default_probability")]
    pub probability: f64,
    /// Average packet size, bytes (EWMA weight and idle damping).
    #[serde(default = "default_avpkt")]
    pub avpkt: u32,
    /// Burst (packets) the average lets through; None: (2 min + max) / (3 avpkt).
    #[serde(default)]
    pub burst: Option<u32>,
    #[serde(default)]
    pub ecn: bool,
    /// Drop instead of marking above qth_max even with ECN.
    #[serde(default)]
    pub harddrop: bool,
}

/// The parameters `tc` hands the kernel.
#[derive(Clone, Debug, PartialEq)]
pub struct RedParms {
    pub qth_min: u64,
    pub qth_max: u64,
    pub wlog: u32,
    pub max_p: u32,
    pub scell_log: u32,
    pub stab: [u8; 256],
}

/// The byte limit RED's defaults derive from: the queue's byte limit, or
/// the packet limit times `avpkt`.
fn limit_bytes(limit: Limit, avpkt: u32) -> u64 {
    match limit {
        Limit::Bytes(b) => b,
        Limit::Packets(n) => n * avpkt as u64,
    }
}

/// iproute2 tc_red.c: tc_red_eval_ewma() — the largest weight 2^-Wlog whose
/// average, after `burst` back-to-back packets from empty, stays below
/// qth_min.
fn eval_ewma(qmin: u64, burst: u32, avpkt: u32) -> Result<u32, String> {
    let a = burst as f64 + 1.0 - qmin as f64 / avpkt as f64;
    if a < 1.0 {
        return Err(format!(
            "is too small for min (at least {})",
            1 + qmin / avpkt as u64
        ));
    }
    let mut w = 0.5f64;
    for wlog in 1..32 {
        if a <= (1.0 - (1.0 - w).powi(burst as i32)) / w {
            return Ok(wlog);
        }
        w /= 2.0;
    }
    Err("is too large".into())
}

/// iproute2 tc_red.c: tc_red_eval_idle_damping() — the table of shifts
/// that decay qavg over an idle period (as if packets of `avpkt` had left
/// at the line rate), in psched ticks of 64 ns.
fn eval_idle_damping(wlog: u32, avpkt: u32, rate_bps: u64) -> Result<(u32, [u8; 256]), String> {
    let bytes_per_s = rate_bps as f64 / 8.0;
    // tc_calc_xmittime(): µs × 15.625 ticks per µs.
    let xmit_time = 1e6 * avpkt as f64 / bytes_per_s * (1000.0 / 64.0);
    let lw = -(1.0 - 1.0 / (1u64 << wlog) as f64).ln() / xmit_time;
    let maxtime = 31.0 / lw;
    let clog = (0..32)
        .find(|&c| maxtime / ((1u64 << c) as f64) < 512.0)
        .ok_or("cannot tabulate the idle damping")?;
    let mut stab = [0u8; 256];
    for (i, s) in stab.iter_mut().enumerate().take(255).skip(1) {
        *s = (((i as u64) << clog) as f64 * lw).min(31.0) as u8;
    }
    stab[255] = 31;
    Ok((clog, stab))
}

/// iproute2 q_red.c: red_parse_opt()'s defaults and derived parameters.
pub fn resolve(c: &RedConfig, limit: Limit, rate_bps: u64) -> Result<RedParms, (String, String)> {
    let lim = limit_bytes(limit, c.avpkt);
    let qth_max = c
        .max_bytes
        .unwrap_or_else(|| c.min_bytes.map_or(lim / 4, |m| 3 * m));
    let qth_min = c.min_bytes.unwrap_or(qth_max / 3);
    if qth_min >= qth_max {
        return Err((
            "min".into(),
            format!("must be < max ({qth_min} ≥ {qth_max} bytes)"),
        ));
    }
    if qth_max > lim {
        return Err((
            "max".into(),
            format!("must be ≤ the queue limit ({qth_max} > {lim} bytes)"),
        ));
    }
    if qth_max >= 1 << 24 {
        return Err(("max".into(), "must be < 16 MiB".into()));
    }
    let burst = c
        .burst
        .unwrap_or(((2 * qth_min + qth_max) / (3 * c.avpkt as u64)) as u32);
    let wlog = eval_ewma(qth_min, burst, c.avpkt).map_err(|e| ("burst".to_string(), e))?;
    let (scell_log, stab) = eval_idle_damping(wlog, c.avpkt, rate_bps)
        .map_err(|e| ("avpkt".to_string(), e.to_string()))?;
    Ok(RedParms {
        qth_min,
        qth_max,
        wlog,
        // q_red.c: max_P = probability * 2^32.
        max_p: (c.probability * 4294967296.0).min(u32::MAX as f64) as u32,
        scell_log,
        stab,
    })
}

pub(super) fn check(c: &RedConfig, limit: Limit, rate_bps: u64) -> Result<(), (String, String)> {
    if !(c.probability > 0.0 && c.probability <= 1.0) {
        return Err((
            "probability".into(),
            format!("must be in (0, 1] (got {})", c.probability),
        ));
    }
    if c.avpkt == 0 {
        return Err(("avpkt".into(), "must be > 0".into()));
    }
    if c.burst == Some(0) {
        return Err(("burst".into(), "must be > 0".into()));
    }
    resolve(c, limit, rate_bps).map(|_| ())
}

pub struct Red {
    /// The child FIFO (sch_red.c's `pfifo`/`bfifo` of the qdisc's limit).
    fifo: Fifo,
    ecn: bool,
    harddrop: bool,
    // red.h: struct red_parms (fixed point at Wlog).
    qth_min: u64,
    qth_max: u64,
    wlog: u32,
    max_p_delta: u32,
    scell_log: u32,
    scell_max: u64,
    stab: [u8; 256],
    // red.h: struct red_vars.
    pub qavg: u64,
    qcount: i64,
    qr: u32,
    /// When the queue went idle, ns (None: busy).
    qidlestart: Option<Time>,
    rng: Rng,
}

/// red.h: RED_DONT_MARK, RED_PROB_MARK, RED_HARD_MARK.
#[derive(Debug, PartialEq, Eq)]
#[allow(clippy::enum_variant_names)]
enum Action {
    DontMark,
    ProbMark,
    HardMark,
}

impl Red {
    pub fn new(c: &RedConfig, limit: Limit, rate_bps: u64, rng: Rng) -> Red {
        let p = resolve(c, limit, rate_bps).expect("validated RED parameters");
        Red::with_parms(&p, c.ecn, c.harddrop, limit, rng)
    }

    /// red.h: red_set_parms().
    pub fn with_parms(p: &RedParms, ecn: bool, harddrop: bool, limit: Limit, rng: Rng) -> Red {
        let delta = (p.qth_max - p.qth_min).max(1);
        let max_p = if p.max_p == 0 { 1 } else { p.max_p };
        Red {
            fifo: Fifo::new(limit),
            ecn,
            harddrop,
            qth_min: p.qth_min << p.wlog,
            qth_max: p.qth_max << p.wlog,
            wlog: p.wlog,
            max_p_delta: ((max_p as u64 / delta) as u32).max(1),
            scell_log: p.scell_log,
            scell_max: 255 << p.scell_log,
            stab: p.stab,
            qavg: 0,
            qcount: -1,
            qr: 0,
            qidlestart: None,
            rng,
        }
    }

    /// red.h: red_calc_qavg() — from the idle time, or the EWMA step
    /// qavg + (backlog - qavg >> Wlog) (i.e. qavg (1 - W) + backlog W).
    fn calc_qavg(&self, now: Time) -> u64 {
        match self.qidlestart {
            None => self
                .qavg
                .wrapping_add(self.fifo.bytes().wrapping_sub(self.qavg >> self.wlog)),
            Some(start) => {
                // red_calc_qavg_from_idle_time(): the idle time in µs,
                // bounded by Scell_max, looked up in the shift table.
                let us_idle = ((now - start) / 1000).min(self.scell_max);
                let shift = self.stab[((us_idle >> self.scell_log) & 0xff) as usize];
                if shift > 0 {
                    self.qavg >> shift
                } else {
                    // (1-W)^m ≈ 1 - mW for the first part of the exponent.
                    let dec = ((self.qavg as u128 * us_idle as u128) >> self.scell_log) as u64;
                    if dec < self.qavg >> 1 {
                        self.qavg - dec
                    } else {
                        self.qavg >> 1
                    }
                }
            }
        }
    }

    /// red.h: red_random() — reciprocal_divide(random, max_P_reciprocal).
    fn random(&mut self) -> u32 {
        self.rng.next_u32() / self.max_p_delta
    }

    /// red.h: red_action() with red_mark_probability().
    fn action(&mut self, qavg: u64) -> Action {
        if qavg < self.qth_min {
            self.qcount = -1;
            Action::DontMark
        } else if qavg >= self.qth_max {
            self.qcount = -1;
            Action::HardMark
        } else {
            self.qcount += 1;
            if self.qcount != 0 {
                // max_P (qavg - qth_min) / (qth_max - qth_min) ≥ rnd / qcount
                let lhs = ((qavg - self.qth_min) >> self.wlog) as u128 * self.qcount as u128;
                if lhs >= self.qr as u128 {
                    self.qcount = 0;
                    self.qr = self.random();
                    return Action::ProbMark;
                }
            } else {
                self.qr = self.random();
            }
            Action::DontMark
        }
    }
}

impl Qdisc for Red {
    /// sch_red.c: red_enqueue().
    fn enqueue(&mut self, mut p: QPkt, now: Time, out: &mut QOut) {
        self.qavg = self.calc_qavg(now);
        self.qidlestart = None; // red_end_of_idle_period()
        let congestion_drop = match self.action(self.qavg) {
            Action::DontMark => false,
            Action::ProbMark => {
                if self.ecn && p.set_ce() {
                    self.fifo.stats.ecn_marks += 1;
                    false
                } else {
                    true
                }
            }
            Action::HardMark => {
                if !self.harddrop && self.ecn && p.set_ce() {
                    self.fifo.stats.ecn_marks += 1;
                    false
                } else {
                    true
                }
            }
        };
        if congestion_drop {
            self.fifo.drop_early(p, out);
            return;
        }
        // The child FIFO's limit.
        self.fifo.enqueue_tail(p, out);
    }

    /// sch_red.c: red_dequeue() — an empty child starts an idle period.
    fn dequeue(&mut self, now: Time, _out: &mut QOut) -> Option<QPkt> {
        let p = self.fifo.pop();
        if p.is_none() && self.qidlestart.is_none() {
            self.qidlestart = Some(now);
        }
        p
    }

    fifo_accessors!("red");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> RedConfig {
        serde_json::from_str("{}").unwrap()
    }

    #[test]
    fn tc_defaults_and_derived_parameters() {
        // limit 400 kB: max = limit/4 = 100 kB, min = max/3, burst =
        // (2 min + max) / (3 avpkt) = 55 packets.
        let p = resolve(&cfg(), Limit::Bytes(400_000), 10_000_000).unwrap();
        assert_eq!((p.qth_min, p.qth_max), (33_333, 100_000));
        // Wlog: the weight whose average after 55 packets stays below min.
        let w = 1.0 / (1u64 << p.wlog) as f64;
        let a = 55.0 + 1.0 - 33_333.0 / 1000.0;
        assert!(a <= (1.0 - (1.0 - w).powi(55)) / w);
        let w2 = 2.0 * w;
        assert!(a > (1.0 - (1.0 - w2).powi(55)) / w2);
        assert_eq!(p.max_p, (0.02 * 4294967296.0) as u32);
        assert_eq!(p.stab[0], 0);
        assert_eq!(p.stab[255], 31);
        assert!(p.stab.windows(2).all(|w| w[0] <= w[1]));
        assert!(resolve(
            &RedConfig {
                min_bytes: Some(50_000),
                max_bytes: Some(40_000),
                ..cfg()
            },
            Limit::Bytes(400_000),
            10_000_000
        )
        .is_err());
    }

    #[test]
    fn qavg_is_the_ewma_of_the_backlog() {
        let p = resolve(&cfg(), Limit::Bytes(400_000), 10_000_000).unwrap();
        let mut r = Red::with_parms(&p, false, false, Limit::Bytes(400_000), Rng::stream(1, "r"));
        let mut out = QOut::default();
        let w = 1.0 / (1u64 << p.wlog) as f64;
        let mut avg = 0.0f64;
        for i in 0..200u32 {
            // qavg is computed from the backlog before the arrival
            avg = avg * (1.0 - w) + r.bytes() as f64 * w;
            r.enqueue(QPkt::test(i, 100, 0), 0, &mut out);
            let got = r.qavg as f64 / (1u64 << p.wlog) as f64;
            assert!((got - avg).abs() < 1.0, "{i}: {got} vs {avg}");
        }
    }

    #[test]
    fn marking_rate_between_thresholds_follows_max_p() {
        // Hold qavg at the middle of [min, max]: p_b = max_p / 2 = 1 %;
        // with the count-based spacing, marks are uniform over 1..1/p_b
        // packets apart: about one per 1/p_b / 2 + ... ≈ 2 p_b of packets.
        let p = resolve(&cfg(), Limit::Bytes(400_000), 10_000_000).unwrap();
        let mut r = Red::with_parms(&p, true, false, Limit::Bytes(400_000), Rng::stream(1, "r"));
        let mid = (p.qth_min + p.qth_max) / 2;
        let n = 200_000;
        let mut marks = 0;
        for _ in 0..n {
            if r.action(mid << p.wlog) == Action::ProbMark {
                marks += 1;
            }
        }
        // Floyd & Jacobson §7: with p_a = p_b / (1 - count p_b) the gap is
        // uniform on [1, 1/p_b], mean (1/p_b + 1)/2 = 50.5 packets.
        let rate = marks as f64 / n as f64;
        assert!((rate - 1.0 / 50.5).abs() < 0.001, "{rate}");
        assert_eq!(r.action(p.qth_max << p.wlog), Action::HardMark);
        assert_eq!(r.action(0), Action::DontMark);
    }
}
