//! Linux's clock for TCP's timers and stamps: jiffies at `CONFIG_HZ`, and the
//! timer wheel that fires the sender's timers (`kernel/time/timer.c`).
//!
//! `timers = "linux"` (part of `stack = "linux"`) arms RACK's reordering
//! timer and the tail-loss probe as the kernel does: the timeout is converted
//! to whole jiffies (`usecs_to_jiffies` rounds up) after TCP adds its own
//! minimum, and the timer wheel fires it at a tick no earlier than a whole
//! number of jiffies after it was armed (`calc_index` moves every timer one
//! bucket out). On a slow link the reordering timer then often fires after
//! the next ACK, which marks the loss itself (docs/linux-stack.md, "Timers
//! on the tick"). `timers = "exact"` fires them at the computed instant, as
//! RFC 8985 describes.

use crate::{Time, NS_PER_MS};

/// CONFIG_HZ of the kernel modelled (250: Debian's and this project's testbed
/// kernel's; measured on the testbed as the rate /proc/timer_list's jiffies
/// advance).
pub const HZ: u64 = 250;
/// One jiffy, ns.
pub const JIFFY: Time = 1_000 * NS_PER_MS / HZ;
/// `TCP_TIMEOUT_MIN_US` (include/net/tcp.h): added to RACK's reordering
/// timeout and to the probe timeout of a flight of more than one packet.
pub const TCP_TIMEOUT_MIN: Time = 2 * NS_PER_MS;

/// `jiffies` at `now` (the simulation starts at a tick).
#[inline]
pub fn jiffies(now: Time) -> u64 {
    now / JIFFY
}

/// `usecs_to_jiffies` (rounds up).
#[inline]
pub fn to_jiffies_ceil(d: Time) -> u64 {
    d.div_ceil(JIFFY)
}

/// `LVL_CLK_SHIFT`: each level of the wheel is 8 times coarser.
const LVL_CLK_SHIFT: u32 = 3;
/// `LVL_SIZE`: buckets per level.
const LVL_SIZE: u64 = 64;
/// The wheel's levels (`LVL_DEPTH` with HZ > 100).
const LVL_DEPTH: u32 = 9;

/// When a timer armed at `now` for `timeout` jiffies fires: `mod_timer`'s
/// `expires = jiffies + timeout` goes into the bucket `calc_wheel_index`
/// picks, the first level whose range holds the delay (`LVL_START(n)` =
/// 63·8^(n−1) jiffies), and `calc_index` rounds it up to that level's
/// granularity and one bucket further ("a timer does not fire early"). The
/// tick that reaches the bucket runs it.
pub fn wheel_fire(now: Time, timeout: u64) -> Time {
    let expires = jiffies(now) + timeout;
    let mut lvl = 0;
    while lvl + 1 < LVL_DEPTH && timeout >= (LVL_SIZE - 1) << (lvl * LVL_CLK_SHIFT) {
        lvl += 1;
    }
    let shift = lvl * LVL_CLK_SHIFT;
    let bucket = ((expires >> shift) + 1) << shift;
    bucket * JIFFY
}

/// How the sender's RACK reordering timer and tail-loss probe are fired.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TimerKind {
    /// At the instant RFC 8985 computes.
    #[default]
    Exact,
    /// As Linux arms them: `tcp_rack_mark_lost` and `tcp_schedule_loss_probe`
    /// on the jiffies timer wheel.
    Linux,
}

impl TimerKind {
    pub const NAMES: [&'static str; 2] = ["exact", "linux"];

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "exact" => Some(TimerKind::Exact),
            "linux" => Some(TimerKind::Linux),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_level_0_timer_fires_one_tick_after_its_expiry() {
        // Armed 1 ms into jiffy 10 for 2 jiffies: expires = 12, bucket 13.
        assert_eq!(wheel_fire(10 * JIFFY + NS_PER_MS, 2), 13 * JIFFY);
        // Armed at a tick: still one bucket out, so never early.
        assert_eq!(wheel_fire(10 * JIFFY, 2), 13 * JIFFY);
        // The delay is more than the timeout, at most one jiffy more.
        for k in 0..40 {
            let now = 7 * JIFFY + k * 100_000;
            let d = wheel_fire(now, 5) - now;
            assert!(d > 5 * JIFFY && d <= 6 * JIFFY, "{d}");
        }
    }

    #[test]
    fn a_longer_timer_is_rounded_to_its_levels_granularity() {
        // 62 jiffies: still level 0.
        assert_eq!(wheel_fire(0, 62), 63 * JIFFY);
        // 63 jiffies: level 1, 8-jiffy buckets: expires 63 -> bucket (63 >> 3) + 1 = 8 -> 64.
        assert_eq!(wheel_fire(0, 63), 64 * JIFFY);
        // 100 jiffies from jiffy 5: expires 105 -> (105 >> 3 + 1) << 3 = 112.
        assert_eq!(wheel_fire(5 * JIFFY, 100), 112 * JIFFY);
        // 504 jiffies (2.016 s): level 2, 64-jiffy buckets.
        assert_eq!(wheel_fire(0, 504), 512 * JIFFY);
    }

    #[test]
    fn usecs_to_jiffies_rounds_up() {
        assert_eq!(to_jiffies_ceil(0), 0);
        assert_eq!(to_jiffies_ceil(1), 1);
        assert_eq!(to_jiffies_ceil(JIFFY), 1);
        assert_eq!(to_jiffies_ceil(JIFFY + 1), 2);
        // A RACK timeout of 4.25 ms plus TCP_TIMEOUT_MIN_US: 6.25 ms -> 2 jiffies at HZ 250.
        assert_eq!(to_jiffies_ceil(4_250_000 + TCP_TIMEOUT_MIN), 2);
    }
}
