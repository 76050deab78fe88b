//! A FIFO link direction whose rate changes with time: the service of the
//! csv rate form of a capacity trace (`time_us,rate_bps` rows) and of the
//! LEO access hop (`hops::leo`), whose rate jumps at each satellite
//! reassignment. docs/traces.md ("rate form") and docs/leo.md.
//!
//! Unlike a Mahimahi trace, capacity here is a rate, as on a `link`: a
//! packet is serialised at the rate in force while it is on the wire (a
//! packet that straddles a change is served at both rates, in turn), a
//! 40-byte ACK takes 40 bytes' worth of time, and capacity the queue cannot
//! use is not lost, simply not used. A zero rate is an outage in which
//! packets wait. Because service is FIFO and the schedule is known, a
//! packet's departure is computed when it arrives (one event per packet).

use std::io::Read;

use crate::config::QueueConfig;
use crate::hops::trace::{for_each_line, parse_u64, DelaySchedule, Served};
use crate::link::{Fate, LinkStats};
use crate::loss::LossProcess;
use crate::rng::Rng;
use tcplab_tcp::Time;

const NS_PER_S: u128 = 1_000_000_000;

/// A piecewise-constant rate: `rates[i]` bit/s from `starts[i]` (ns, the
/// first 0) to the next start; with `repeat`, the schedule starts over
/// every `period` ns, else the last rate holds for ever.
#[derive(Clone, Debug)]
pub struct RateTable {
    pub starts: Box<[Time]>,
    pub rates: Box<[u64]>,
    pub period: Time,
    pub repeat: bool,
}

impl RateTable {
    /// Load a csv rate trace: the header `time_us,rate_bps`, then rows of
    /// whole microseconds and bit/s; `#` lines and blank lines skipped;
    /// times must not decrease (a later row at the same time replaces the
    /// rate). Each rate holds until the next row; the last row's time is
    /// the period (as a Mahimahi trace's last timestamp). Errors name the
    /// file and the line.
    pub fn parse(r: impl Read, name: &str, repeat: bool) -> Result<RateTable, String> {
        let (mut starts, mut rates): (Vec<Time>, Vec<u64>) = (Vec::new(), Vec::new());
        let (mut header, mut last_line) = (true, 0);
        for_each_line(r, name, |n, raw| {
            let line = raw.trim_ascii();
            if line.is_empty() || line[0] == b'#' {
                return Ok(());
            }
            let err = |what: &str| {
                format!(
                    "{name}:{n}: {what} (got {:?})",
                    String::from_utf8_lossy(raw)
                )
            };
            if std::mem::take(&mut header) {
                if line != b"time_us,rate_bps" {
                    return Err(err("the first line must be the header time_us,rate_bps"));
                }
                return Ok(());
            }
            let mut it = line.splitn(2, |&c| c == b',');
            let (a, b) = (it.next().unwrap_or(b""), it.next().unwrap_or(b""));
            let rule = "must be time_us,rate_bps with whole numbers";
            let t = parse_u64(a.trim_ascii()).ok_or_else(|| err(rule))?;
            let rate = parse_u64(b.trim_ascii()).ok_or_else(|| err(rule))?;
            let t = t
                .checked_mul(1_000)
                .filter(|&ns| ns <= tcplab_tcp::MAX_TIME_NS)
                .ok_or_else(|| err("timestamp too large"))?;
            match starts.last() {
                None if t != 0 => return Err(err("the first row must be at time 0")),
                Some(&p) if t < p => {
                    return Err(err(&format!(
                        "timestamps must not decrease ({} after {})",
                        t / 1_000,
                        p / 1_000
                    )))
                }
                Some(&p) if t == p => {
                    *rates.last_mut().expect("a row") = rate;
                }
                _ => {
                    starts.push(t);
                    rates.push(rate);
                }
            }
            last_line = n;
            Ok(())
        })?;
        if starts.is_empty() {
            return Err(format!("{name}: no rows (empty trace)"));
        }
        let period = *starts.last().expect("a row");
        if period == 0 {
            return Err(format!(
                "{name}:{last_line}: the trace must last longer than 0 (its last timestamp is 0)"
            ));
        }
        if repeat {
            // The last row only marks the period.
            starts.pop();
            rates.pop();
        }
        if rates.iter().all(|&r| r == 0) {
            return Err(format!(
                "{name}: every rate is 0 (the link would never send)"
            ));
        }
        Ok(RateTable {
            starts: starts.into_boxed_slice(),
            rates: rates.into_boxed_slice(),
            period,
            repeat,
        })
    }

    pub fn load(path: &str, repeat: bool) -> Result<RateTable, String> {
        let f = std::fs::File::open(path).map_err(|e| format!("{path}: cannot read: {e}"))?;
        Self::parse(f, path, repeat)
    }

    /// Bits the schedule can carry in `[0, until)`.
    pub fn bits_before(&self, until: Time) -> u128 {
        let mut c = Cursor::default();
        let mut t = 0;
        let mut bits = 0u128;
        while t < until {
            let (rate, end) = c.at(self, t);
            let e = end.min(until);
            bits += rate as u128 * (e - t) as u128 / NS_PER_S;
            t = e;
        }
        bits
    }
}

/// A position in a `RateTable` (round of the period, segment).
#[derive(Clone, Copy, Debug, Default)]
struct Cursor {
    round: u64,
    idx: usize,
}

impl Cursor {
    /// The rate in force at `t` (never earlier than the previous call's)
    /// and when it ends (`Time::MAX` for ever).
    #[inline]
    fn at(&mut self, tab: &RateTable, t: Time) -> (u64, Time) {
        let n = tab.starts.len();
        let base = |c: &Cursor| c.round.saturating_mul(tab.period);
        let end = |c: &Cursor| -> Time {
            if c.idx + 1 < n {
                base(c).saturating_add(tab.starts[c.idx + 1])
            } else if tab.repeat {
                base(c).saturating_add(tab.period)
            } else {
                Time::MAX
            }
        };
        if end(self) <= t {
            if tab.repeat && t >= base(self).saturating_add(2 * tab.period) {
                // A long idle gap: jump to the round of `t`.
                self.round = t / tab.period;
                self.idx = 0;
            }
            while end(self) <= t {
                self.idx += 1;
                if self.idx == n {
                    self.idx = 0;
                    self.round += 1;
                }
            }
        }
        (tab.rates[self.idx], end(self))
    }
}

/// Loss around events that recur (a LEO reassignment): a packet whose
/// transmission starts within `window` ns after `first + k·every` is lost
/// with probability `p`.
#[derive(Clone, Copy, Debug)]
pub struct RecurringLoss {
    pub first: Time,
    pub every: Time,
    pub window: Time,
    pub p: f64,
}

impl RecurringLoss {
    #[inline]
    fn covers(&self, t: Time) -> bool {
        t >= self.first && (t - self.first) % self.every < self.window
    }
}

/// One direction served at a time-varying rate.
#[derive(Debug)]
pub struct VaryingDir {
    tab: RateTable,
    cur: Cursor,
    busy_until: Time,
    served: Served,
    recurring: Option<RecurringLoss>,
    pub stats: LinkStats,
}

impl VaryingDir {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        tab: RateTable,
        queue: QueueConfig,
        delay: Time,
        delay_sched: Option<DelaySchedule>,
        loss: LossProcess,
        recurring: Option<RecurringLoss>,
        rng: Rng,
    ) -> VaryingDir {
        VaryingDir {
            tab,
            cur: Cursor::default(),
            busy_until: 0,
            served: Served::new(queue, delay, delay_sched, loss, rng),
            recurring,
            stats: LinkStats::default(),
        }
    }

    /// When a packet of `bits` whose transmission starts at `start` ends:
    /// the schedule integrated from `start` (a zero rate waits it out).
    #[inline]
    fn finish(&mut self, bits: u128, start: Time) -> (Time, Time) {
        let mut t = start;
        let mut need = bits;
        let mut first = None;
        loop {
            let (rate, end) = self.cur.at(&self.tab, t);
            if rate == 0 {
                if end == Time::MAX {
                    return (first.unwrap_or(Time::MAX), Time::MAX);
                }
                t = end;
                continue;
            }
            first.get_or_insert(t);
            // Bits this segment carries from t: rate·(end − t)/1e9.
            let room = if end == Time::MAX {
                u128::MAX
            } else {
                rate as u128 * (end - t) as u128 / NS_PER_S
            };
            if room >= need {
                let dt = (need * NS_PER_S).div_ceil(rate as u128);
                return (first.unwrap_or(t), t.saturating_add(dt as Time).min(end));
            }
            need -= room;
            t = end;
        }
    }

    /// Packets waiting or in transmission at `now`.
    pub fn backlog(&mut self, now: Time) -> usize {
        self.served.fifo.backlog(now)
    }

    /// Offer a packet of `bytes` arriving at `now` (never earlier than the
    /// previous offer).
    #[inline]
    pub fn offer(&mut self, bytes: u32, now: Time) -> Fate {
        // The limit counts packets waiting, not the one on the wire.
        let Some(waiting) = self.served.fifo.admit(bytes, now) else {
            self.stats.drops_queue += 1;
            return Fate::QueueDrop;
        };
        let (start, end) = self.finish(bytes as u128 * 8, now.max(self.busy_until));
        self.busy_until = end;
        // A recurring loss window draws first, then the loss process.
        let rng = &mut self.served.rng;
        let lost_recurring = self
            .recurring
            .is_some_and(|r| r.covers(start) && rng.bernoulli(r.p));
        self.served.depart(
            &mut self.stats,
            waiting,
            bytes,
            (start, end),
            lost_recurring,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Time = 1_000_000;

    fn tab(src: &str, repeat: bool) -> RateTable {
        RateTable::parse(src.as_bytes(), "r.csv", repeat).unwrap()
    }

    fn dir(t: RateTable) -> VaryingDir {
        VaryingDir::new(
            t,
            QueueConfig::Packets { limit: 100 },
            0,
            None,
            LossProcess::None,
            None,
            Rng::stream(1, "t"),
        )
    }

    fn at(f: Fate) -> Time {
        match f {
            Fate::Arrives { at, .. } => at,
            f => panic!("{f:?}"),
        }
    }

    #[test]
    fn a_packet_is_served_at_the_rates_in_force_while_it_is_on_the_wire() {
        // 12 Mbit/s for 10 ms, 0 (an outage) for 5 ms, 1.2 Mbit/s to 30 ms.
        let t = tab(
            "time_us,rate_bps\n0,12000000\n10000,0\n15000,1200000\n30000,0\n",
            true,
        );
        assert_eq!(t.period, 30 * MS);
        assert_eq!(t.bits_before(30 * MS), 120_000 + 18_000);
        let mut d = dir(t);
        // 1500 bytes at 12 Mbit/s: 1 ms each.
        assert_eq!(at(d.offer(1500, 0)), MS);
        // A 40-byte packet takes 40 bytes' worth of time, not a slot.
        assert_eq!(at(d.offer(40, 0)), MS + 26_667);
        // A packet started at 9.5 ms sends 6000 bits before the outage and
        // the other 6000 at 1.2 Mbit/s from 15 ms: 5 ms more.
        let mut d = dir(tab(
            "time_us,rate_bps\n0,12000000\n10000,0\n15000,1200000\n30000,0\n",
            true,
        ));
        assert_eq!(at(d.offer(1500, 9_500_000)), 20 * MS);
        // The schedule repeats after 30 ms: idle capacity is not lost, a
        // packet at 31 ms is served at 12 Mbit/s.
        assert_eq!(at(d.offer(1500, 31 * MS)), 32 * MS);
        // A gap of many periods is skipped.
        assert_eq!(at(d.offer(1500, 3_000 * MS + MS)), 3_002 * MS);
    }

    #[test]
    fn without_repeat_the_last_rate_holds() {
        let mut d = dir(tab("time_us,rate_bps\n0,12000000\n1000,1200000\n", false));
        assert_eq!(at(d.offer(1500, 0)), MS);
        assert_eq!(at(d.offer(1500, 0)), 11 * MS);
        assert_eq!(at(d.offer(1500, 100 * MS)), 110 * MS);
        // A link that ends at 0 never sends again.
        let mut d = dir(tab("time_us,rate_bps\n0,12000000\n1000,0\n", false));
        assert_eq!(at(d.offer(1500, 0)), MS);
        assert_eq!(at(d.offer(1500, 0)), Time::MAX);
    }

    #[test]
    fn recurring_loss_hits_only_its_windows() {
        let t = tab("time_us,rate_bps\n0,12000000\n1000000,0\n", true);
        let r = RecurringLoss {
            first: 10 * MS,
            every: 100 * MS,
            window: 5 * MS,
            p: 1.0,
        };
        let mut d = VaryingDir::new(
            t,
            QueueConfig::Packets { limit: 100 },
            0,
            None,
            LossProcess::None,
            Some(r),
            Rng::stream(1, "t"),
        );
        let lost = |f: Fate| matches!(f, Fate::Lost { .. });
        assert!(!lost(d.offer(1500, 9 * MS)));
        assert!(lost(d.offer(1500, 10 * MS)));
        assert!(lost(d.offer(1500, 114 * MS)));
        assert!(!lost(d.offer(1500, 116 * MS)));
        assert_eq!(d.stats.drops_loss, 2);
    }

    #[test]
    fn bad_rate_traces_get_one_line_errors_naming_file_and_line() {
        let e = |s: &str| RateTable::parse(s.as_bytes(), "r.csv", true).unwrap_err();
        assert_eq!(e(""), "r.csv: no rows (empty trace)");
        assert_eq!(
            e("time_us,rate_bps\n0,5\n10,x\n"),
            "r.csv:3: must be time_us,rate_bps with whole numbers (got \"10,x\")"
        );
        assert_eq!(
            e("time_us,rate_bps\n0,5\n10,5\n3,5\n"),
            "r.csv:4: timestamps must not decrease (3 after 10) (got \"3,5\")"
        );
        assert_eq!(
            e("time_us,rate_bps\n5,5\n"),
            "r.csv:2: the first row must be at time 0 (got \"5,5\")"
        );
        assert_eq!(
            e("time_us,rate_bps\n0,5\n"),
            "r.csv:2: the trace must last longer than 0 (its last timestamp is 0)"
        );
        assert_eq!(
            e("time_us,rate_bps\n0,0\n10,7\n"),
            "r.csv: every rate is 0 (the link would never send)"
        );
        assert_eq!(
            e("0,5\n"),
            "r.csv:1: the first line must be the header time_us,rate_bps (got \"0,5\")"
        );
    }
}
