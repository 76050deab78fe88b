//! LEO satellite access (`kind = "leo"`): a Starlink-like bearer whose user
//! terminal is reassigned to a satellite every 15 s, at fixed seconds of
//! the minute (12, 27, 42 and 57), and whose base RTT and capacity in each
//! direction jump to new values at every reassignment. A slot's values are
//! drawn from per-slot distributions built from published measurements (a
//! preset), or read from a schedule file. Around each reassignment the
//! bearer pauses (packets wait: the latency spike) and loses packets. The
//! model, its presets and their sources: docs/leo.md.
//!
//! Each direction is a FIFO served at the slot's rate (`hops::varying`),
//! followed by the slot's one-way delay (half the base RTT) with no
//! overtaking (`hops::trace::DelaySchedule`): the hop is a `TraceHop` whose
//! sides are rate schedules. Every draw comes from the hop's own stream,
//! one per slot, so a slot's values do not depend on the traffic.

use crate::config::{LeoConfig, QueueConfig};
use crate::engine::Dir;
use crate::hops::trace::{for_each_line, parse_ms, DelaySchedule, Side, TraceHop};
use crate::hops::varying::{RateTable, RecurringLoss, VaryingDir};
use crate::loss::LossProcess;
use crate::rng::Rng;
use tcplab_tcp::Time;

const S: Time = 1_000_000_000;
const MS: Time = 1_000_000;
/// Length of one satellite assignment.
pub const SLOT_NS: Time = 15 * S;
/// The first reassignment of each minute, in seconds past the minute; the
/// others follow every 15 s (12, 27, 42, 57).
pub const FIRST_SECOND: u32 = 12;
/// Slots generated ahead (a day); the schedule then repeats.
const HORIZON_SLOTS: u64 = 24 * 3600 / 15;

/// A distribution given by published quantiles `(q, value)`, q increasing
/// in (0, 1). Its quantile function is linear in log(value) between the
/// points and extended with the end segments' slopes to q = 0 and q = 1,
/// so values stay positive and the published points are reproduced.
#[derive(Clone, Copy, Debug)]
pub struct Quantiles(pub &'static [(f64, f64)]);

impl Quantiles {
    /// The value at quantile `u` in [0, 1].
    pub fn at(&self, u: f64) -> f64 {
        let p = self.0;
        let k = p.partition_point(|&(q, _)| q < u).clamp(1, p.len() - 1);
        let ((q0, v0), (q1, v1)) = (p[k - 1], p[k]);
        let (l0, l1) = (v0.ln(), v1.ln());
        (l0 + (u - q0) * (l1 - l0) / (q1 - q0)).exp()
    }
}

/// A published condition: per-slot base RTT (ms) and capacity (Mbit/s)
/// distributions, and what happens around a reassignment.
#[derive(Clone, Copy, Debug)]
pub struct Preset {
    pub name: &'static str,
    pub rtt_ms: Quantiles,
    pub down_mbps: Quantiles,
    pub up_mbps: Quantiles,
    /// The bearer sends nothing for this long after a reassignment.
    pub handover_pause_ns: Time,
    /// Packets whose transmission starts within `handover_window_ns` after
    /// a reassignment are lost with this probability.
    pub handover_loss: f64,
    pub handover_window_ns: Time,
}

/// The presets; every number and its source: docs/leo.md.
pub const PRESETS: [Preset; 2] = [
    // Ookla Speedtest, Starlink users in Maine, 1 Oct – 15 Dec 2024:
    // 10th percentile, median, 90th percentile.
    Preset {
        name: "starlink-maine-2024",
        rtt_ms: Quantiles(&[(0.1, 37.0), (0.5, 47.0), (0.9, 72.0)]),
        down_mbps: Quantiles(&[(0.1, 22.81), (0.5, 116.77), (0.9, 250.96)]),
        up_mbps: Quantiles(&[(0.1, 6.79), (0.5, 18.17), (0.9, 27.17)]),
        handover_pause_ns: 40 * MS,
        handover_loss: 0.15,
        handover_window_ns: S,
    },
    // Idle RTT: Michel et al., Belgium, early 2022 (minimum, quartiles).
    // Downlink median: Ookla, Belgium, Q4 2021; the capacity spread and
    // the uplink/downlink ratio are the Maine preset's (docs/leo.md).
    Preset {
        name: "starlink-belgium-2022",
        rtt_ms: Quantiles(&[(0.001, 20.0), (0.25, 40.0), (0.5, 50.0), (0.75, 60.0)]),
        down_mbps: Quantiles(&[(0.1, 30.31), (0.5, 155.15), (0.9, 333.45)]),
        up_mbps: Quantiles(&[(0.1, 9.02), (0.5, 24.14), (0.9, 36.10)]),
        handover_pause_ns: 40 * MS,
        handover_loss: 0.15,
        handover_window_ns: S,
    },
];

/// The preset called `name`.
pub fn preset(name: &str) -> Option<&'static Preset> {
    PRESETS.iter().find(|p| p.name == name)
}

/// The names of the presets (for errors and the registry).
pub fn preset_names() -> Vec<&'static str> {
    PRESETS.iter().map(|p| p.name).collect()
}

/// One satellite assignment: base RTT and capacity each way.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Slot {
    pub rtt_ns: Time,
    pub down_bps: u64,
    pub up_bps: u64,
}

impl Preset {
    /// Slot `k` of a run seeded with `seed` at hop `idx`: three draws from
    /// the slot's own stream.
    pub fn slot(&self, seed: u64, idx: usize, k: u64) -> Slot {
        let mut rng = Rng::stream(seed, &format!("leo/{idx}/slot/{k}"));
        let rtt = self.rtt_ms.at(rng.uniform());
        let down = self.down_mbps.at(rng.uniform());
        let up = self.up_mbps.at(rng.uniform());
        Slot {
            rtt_ns: (rtt * MS as f64).round() as Time,
            down_bps: (down * 1e6).round() as u64,
            up_bps: (up * 1e6).round() as u64,
        }
    }
}

/// Read a slot schedule: the header `rtt_ms,down_mbps,up_mbps`, then one
/// row per slot (decimals allowed), `#` lines and blank lines skipped.
pub fn load_schedule(path: &str) -> Result<Vec<Slot>, String> {
    let f = std::fs::File::open(path).map_err(|e| format!("{path}: cannot read: {e}"))?;
    let mut slots = Vec::new();
    let mut header = true;
    for_each_line(f, path, |n, raw| {
        let line = raw.trim_ascii();
        if line.is_empty() || line[0] == b'#' {
            return Ok(());
        }
        let err = |what: &str| {
            format!(
                "{path}:{n}: {what} (got {:?})",
                String::from_utf8_lossy(raw)
            )
        };
        if std::mem::take(&mut header) {
            if line != b"rtt_ms,down_mbps,up_mbps" {
                return Err(err(
                    "the first line must be the header rtt_ms,down_mbps,up_mbps",
                ));
            }
            return Ok(());
        }
        let f: Vec<&[u8]> = line.split(|&c| c == b',').map(|x| x.trim_ascii()).collect();
        let rule = "must be rtt_ms,down_mbps,up_mbps (numbers, at most 6 decimals)";
        if f.len() != 3 {
            return Err(err(rule));
        }
        // parse_ms gives value·10⁶: ns for ms, bit/s for Mbit/s.
        let v: Vec<u64> = f
            .iter()
            .map(|x| parse_ms(x))
            .collect::<Option<_>>()
            .ok_or_else(|| err(rule))?;
        if v[1] == 0 || v[2] == 0 {
            return Err(err("rates must be > 0"));
        }
        slots.push(Slot {
            rtt_ns: v[0],
            down_bps: v[1],
            up_bps: v[2],
        });
        Ok(())
    })?;
    if slots.is_empty() {
        return Err(format!("{path}: no slots (empty schedule)"));
    }
    Ok(slots)
}

/// When the first reassignment comes in a run that starts `start_second`
/// seconds past the minute.
pub fn first_reassignment(start_second: u32) -> Time {
    let s = (FIRST_SECOND + 60 - start_second % 60) % 15;
    s as Time * S
}

/// Start of slot `k` (slot 0 runs from 0 to the first reassignment).
pub fn slot_start(first: Time, k: u64) -> Time {
    if k == 0 {
        0
    } else {
        first + (k - 1) * SLOT_NS
    }
}

/// Check a leo hop's settings (the schedule file is read by `check_files`).
pub fn check(c: &LeoConfig) -> Result<(), String> {
    match (&c.preset, &c.schedule) {
        (None, None) => return Err("preset: a preset or a schedule file is required".into()),
        (Some(p), _) if preset(p).is_none() => {
            return Err(format!(
                "preset: unknown LEO preset {p:?} (choose from {})",
                preset_names().join(", ")
            ))
        }
        _ => {}
    }
    crate::hops::trace::check_file_name("schedule", &c.schedule)?;
    if c.start_second >= 60 {
        return Err(format!(
            "start_second: must be between 0 and 59 (got {})",
            c.start_second
        ));
    }
    if let Some(p) = c.handover_loss.filter(|p| !(0.0..=1.0).contains(p)) {
        return Err(format!(
            "handover_loss: must be a probability between 0 and 1 (got {p})"
        ));
    }
    for (v, k) in [
        (c.handover_pause_ns, "handover_pause"),
        (c.handover_window_ns, "handover_window"),
    ] {
        if v.is_some_and(|v| v >= SLOT_NS) {
            return Err(format!("{k}: must be shorter than a slot (15s)"));
        }
    }
    Ok(())
}

/// Read the schedule file a leo hop names, if any; errors name the field.
pub fn check_files(c: &LeoConfig) -> Result<(), String> {
    if let Some(f) = &c.schedule {
        load_schedule(f).map_err(|e| format!("schedule: {e}"))?;
    }
    Ok(())
}

/// The slots of a hop over the horizon, its pause, loss and window.
fn plan(c: &LeoConfig, seed: u64, idx: usize) -> Result<(Vec<Slot>, Time, f64, Time), String> {
    let p = c.preset.as_deref().and_then(preset);
    // A schedule file's rows are used in turn (slot k is row k mod n).
    let slots = match (&c.schedule, p) {
        (Some(f), _) => {
            let rows = load_schedule(f).map_err(|e| format!("schedule: {e}"))?;
            (0..=HORIZON_SLOTS)
                .map(|k| rows[(k % rows.len() as u64) as usize])
                .collect()
        }
        (None, Some(p)) => (0..=HORIZON_SLOTS).map(|k| p.slot(seed, idx, k)).collect(),
        (None, None) => return Err("preset: a preset or a schedule file is required".into()),
    };
    let pause = c
        .handover_pause_ns
        .unwrap_or(p.map_or(0, |p| p.handover_pause_ns));
    let loss = c
        .handover_loss
        .unwrap_or(p.map_or(0.0, |p| p.handover_loss));
    let window = c
        .handover_window_ns
        .unwrap_or(p.map_or(0, |p| p.handover_window_ns));
    Ok((slots, pause, loss, window))
}

/// Both directions of a leo hop (downlink, uplink) as rate schedules.
pub fn sides(c: &LeoConfig, seed: u64, idx: usize) -> Result<[VaryingDir; 2], String> {
    let (slots, pause, loss, window) = plan(c, seed, idx)?;
    let first = first_reassignment(c.start_second);
    // The slots cover a day; the rates then start over (the last slot's
    // delay holds).
    let period = slot_start(first, slots.len() as u64);
    let build = |d: Dir| -> VaryingDir {
        let (mut starts, mut rates, mut delays) = (Vec::new(), Vec::new(), Vec::new());
        for (k, s) in slots.iter().enumerate() {
            let t = slot_start(first, k as u64);
            if k == 0 && first == 0 {
                continue; // slot 0 is empty when the run starts at a reassignment
            }
            let rate = match d {
                Dir::Fwd => s.down_bps,
                Dir::Rev => s.up_bps,
            };
            if t > 0 && pause > 0 {
                starts.push(t);
                rates.push(0);
            }
            starts.push(if t > 0 { t + pause } else { 0 });
            rates.push(rate);
            delays.push((t, s.rtt_ns / 2));
        }
        let tab = RateTable {
            starts: starts.into_boxed_slice(),
            rates: rates.into_boxed_slice(),
            period,
            repeat: true,
        };
        let recurring = (loss > 0.0 && window > 0).then_some(RecurringLoss {
            first: if first == 0 { SLOT_NS } else { first },
            every: SLOT_NS,
            window,
            p: loss,
        });
        let name = match d {
            Dir::Fwd => "down",
            Dir::Rev => "up",
        };
        VaryingDir::new(
            tab,
            c.queue,
            0,
            Some(DelaySchedule::new(delays)),
            LossProcess::None,
            recurring,
            Rng::stream(seed, &format!("leo/{idx}/{name}")),
        )
    };
    Ok([build(Dir::Fwd), build(Dir::Rev)])
}

/// The hop: a `TraceHop` whose two sides follow the slot schedule.
pub fn hop(c: &LeoConfig, seed: u64, idx: usize) -> Result<TraceHop, String> {
    let [down, up] = sides(c, seed, idx)?;
    Ok(TraceHop::from_sides(
        "leo",
        [Side::Varying(Box::new(down)), Side::Varying(Box::new(up))],
    ))
}

/// A leo configuration with the default queue (for tests and tools).
pub fn config(name: &str, preset: &str, queue: QueueConfig) -> LeoConfig {
    LeoConfig {
        name: name.into(),
        preset: Some(preset.into()),
        schedule: None,
        queue,
        start_second: 0,
        handover_pause_ns: None,
        handover_loss: None,
        handover_window_ns: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::link::Fate;

    fn at(f: Fate) -> Time {
        match f {
            Fate::Arrives { at, .. } => at,
            f => panic!("{f:?}"),
        }
    }

    /// The q-quantile of sorted `v` (nearest rank).
    fn q(v: &[f64], q: f64) -> f64 {
        v[((q * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1]
    }

    #[test]
    fn reassignments_come_at_12_27_42_57_seconds_past_the_minute() {
        assert_eq!(first_reassignment(0), 12 * S);
        assert_eq!(first_reassignment(12), 0);
        assert_eq!(first_reassignment(13), 14 * S);
        assert_eq!(first_reassignment(58), 14 * S);
        assert_eq!(slot_start(12 * S, 3), 42 * S);
    }

    #[test]
    fn the_quantile_function_passes_through_the_published_points() {
        for p in PRESETS {
            for d in [p.rtt_ms, p.down_mbps, p.up_mbps] {
                for &(qq, v) in d.0 {
                    assert!((d.at(qq) - v).abs() < 1e-9 * v, "{} {qq}", p.name);
                }
                assert!(d.at(0.0) > 0.0);
            }
        }
    }

    /// Measure each slot through the hop's own service: an idle probe each
    /// way for the base RTT, a burst of 50 full-size packets each way for
    /// the capacity. The per-slot statistics over 2000 slots are those of
    /// the preset's distributions (median, 5th and 95th percentile within
    /// 10 %), and its published points are reproduced too.
    #[test]
    fn presets_reproduce_their_per_slot_statistics() {
        for p in PRESETS {
            let c = config("leo", p.name, QueueConfig::Packets { limit: 1000 });
            let [mut down, mut up] = sides(&c, 7, 0).unwrap();
            let first = first_reassignment(0);
            let (mut rtt, mut dn, mut upc) = (Vec::new(), Vec::new(), Vec::new());
            for k in 1..=2000u64 {
                let t0 = slot_start(first, k) + 2 * S; // after the pause and the loss window
                let rtt_ns = (at(down.offer(100, t0)) - t0) + (at(up.offer(100, t0)) - t0);
                rtt.push(rtt_ns as f64 / MS as f64);
                let t1 = t0 + S;
                for (d, v) in [(&mut down, &mut dn), (&mut up, &mut upc)] {
                    let a0 = at(d.offer(1500, t1));
                    let mut a = a0;
                    for _ in 1..50 {
                        a = at(d.offer(1500, t1));
                    }
                    // 49 packets' serialisation between the first and last arrival.
                    v.push(49.0 * 12_000.0 / ((a - a0) as f64 / S as f64) / 1e6);
                }
            }
            for v in [&mut rtt, &mut dn, &mut upc] {
                v.sort_by(f64::total_cmp);
            }
            for (what, v, d) in [
                ("rtt", &rtt, p.rtt_ms),
                ("down", &dn, p.down_mbps),
                ("up", &upc, p.up_mbps),
            ] {
                let checks = [0.05, 0.5, 0.95].into_iter().map(|x| (x, d.at(x)));
                for (qq, want) in checks.chain(d.0.iter().copied().filter(|x| x.0 >= 0.05)) {
                    let got = q(v, qq);
                    assert!(
                        (got / want - 1.0).abs() <= 0.10,
                        "{} {what} p{}: measured {got:.2}, preset {want:.2}",
                        p.name,
                        qq * 100.0
                    );
                }
            }
        }
    }

    #[test]
    fn rtt_and_capacity_jump_at_a_reassignment_after_a_pause() {
        let mut c = config(
            "leo",
            "starlink-maine-2024",
            QueueConfig::Packets { limit: 1000 },
        );
        c.handover_loss = Some(0.0);
        let p = preset("starlink-maine-2024").unwrap();
        let (s0, s1) = (p.slot(1, 0, 0), p.slot(1, 0, 1));
        let [mut down, _] = sides(&c, 1, 0).unwrap();
        // Before 12 s: slot 0's delay and rate.
        let t = 11 * S;
        let tx = (12_000 * S).div_ceil(s0.down_bps);
        assert_eq!(at(down.offer(1500, t)), t + tx + s0.rtt_ns / 2);
        // A packet arriving at the reassignment waits out the 40 ms pause,
        // then is sent at slot 1's rate with slot 1's delay (or behind the
        // previous packet, never before it).
        let t = 12 * S;
        let tx = (12_000 * S).div_ceil(s1.down_bps);
        let want = (t + 40 * MS + tx + s1.rtt_ns / 2).max(11 * S + s0.rtt_ns / 2);
        assert_eq!(at(down.offer(1500, t)), want);
        // The same seed gives the same slots; another seed others.
        assert_eq!(p.slot(1, 0, 5), p.slot(1, 0, 5));
        assert_ne!(p.slot(1, 0, 5), p.slot(2, 0, 5));
    }

    #[test]
    fn handover_loss_falls_in_the_second_after_each_reassignment() {
        let c = config(
            "leo",
            "starlink-maine-2024",
            QueueConfig::Packets { limit: 100_000 },
        );
        let [mut down, _] = sides(&c, 3, 0).unwrap();
        let (mut inside, mut outside) = ((0, 0), (0, 0));
        // Probes every 10 ms for 20 minutes, at a rate any slot carries.
        for i in 0..120_000u64 {
            let t = i * 10 * MS;
            let lost = matches!(down.offer(100, t), Fate::Lost { .. });
            let w = t >= 12 * S && (t - 12 * S) % SLOT_NS < S + 50 * MS;
            let c = if w { &mut inside } else { &mut outside };
            c.0 += lost as u64;
            c.1 += 1;
        }
        assert_eq!(outside.0, 0);
        let r = inside.0 as f64 / inside.1 as f64;
        assert!((0.12..0.18).contains(&r), "{r}");
    }

    #[test]
    fn a_schedule_file_gives_the_slots_and_bad_ones_get_file_and_line() {
        let dir = std::env::temp_dir().join(format!("leo-sched-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("s.csv");
        std::fs::write(
            &f,
            "rtt_ms,down_mbps,up_mbps\n30,100,10\n# c\n60.5,12,1.5\n",
        )
        .unwrap();
        let path = f.to_str().unwrap();
        let s = load_schedule(path).unwrap();
        assert_eq!(
            s[1],
            Slot {
                rtt_ns: 60_500_000,
                down_bps: 12_000_000,
                up_bps: 1_500_000
            }
        );
        let mut c = config(
            "leo",
            "starlink-maine-2024",
            QueueConfig::Packets { limit: 10 },
        );
        c.preset = None;
        c.schedule = Some(path.into());
        let [mut down, _] = sides(&c, 1, 0).unwrap();
        // No preset: no pause, no loss. Slot 1 (from 12 s): 12 Mbit/s, 30.25 ms.
        assert_eq!(at(down.offer(1500, 13 * S)), 13 * S + MS + 30_250_000);
        // The schedule repeats: slot 2 is slot 0 again (100 Mbit/s, 15 ms).
        assert_eq!(at(down.offer(1500, 28 * S)), 28 * S + 120_000 + 15 * MS);
        std::fs::write(&f, "rtt_ms,down_mbps,up_mbps\n30,100\n").unwrap();
        let e = load_schedule(path).unwrap_err();
        assert!(e.ends_with(":2: must be rtt_ms,down_mbps,up_mbps (numbers, at most 6 decimals) (got \"30,100\")"), "{e}");
        std::fs::write(&f, "rtt_ms,down_mbps,up_mbps\n30,0,1\n").unwrap();
        assert!(load_schedule(path)
            .unwrap_err()
            .contains(":2: rates must be > 0"));
        std::fs::write(&f, "").unwrap();
        assert!(load_schedule(path)
            .unwrap_err()
            .ends_with(": no slots (empty schedule)"));
        std::fs::remove_dir_all(&dir).unwrap();
        let mut bad = config("leo", "starlink-mars", QueueConfig::Packets { limit: 10 });
        assert!(check(&bad)
            .unwrap_err()
            .starts_with("preset: unknown LEO preset \"starlink-mars\""));
        bad.preset = Some("starlink-maine-2024".into());
        bad.start_second = 60;
        assert_eq!(
            check(&bad).unwrap_err(),
            "start_second: must be between 0 and 59 (got 60)"
        );
    }
}
