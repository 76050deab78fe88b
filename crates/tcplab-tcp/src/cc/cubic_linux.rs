//! CUBIC's window arithmetic as Linux's `tcp_cubic.c` does it (`cubic = "linux"`), beside
//! RFC 9438's in `cubic.rs`. Where they differ (docs/linux-stack.md, "Linux's CUBIC"):
//!
//! - **Integer packets and jiffies.** cwnd, W_max (`last_max_cwnd`), the cubic origin and the
//!   target are whole packets; time is counted in jiffies (`HZ`) and converted to 1/1024 s
//!   (`BICTCP_HZ`). Growth is "one packet per `cnt` packets acknowledged" through
//!   `tcp_cong_avoid_ai`'s credit counter, so at small windows a target less than one packet
//!   above cwnd gives `cnt = 100·cwnd` (almost no growth) where RFC 9438 grows by the fraction.
//! - **The look-ahead is the minimum RTT** (`delay_min`), not SRTT (RFC 9438 §4.2 uses t + RTT).
//! - **The Reno-friendly estimate** (`tcp_friendliness`) starts at cwnd at each epoch and adds
//!   one packet per cwnd·15/8 packets acknowledged (α ≈ 0.53 per RTT, never switched to 1 as
//!   RFC 9438 §4.3 does once W_est reaches cwnd_prior); it only caps `cnt`.
//! - **Clamps**: `cnt ≥ 2` (cwnd grows at most 1.5× per RTT); before any loss
//!   (`last_max_cwnd = 0`) `cnt ≤ 20` (at least 5 % per RTT); `cnt` is recomputed at most once
//!   per jiffy and, while cwnd is unchanged, at most every HZ/32 jiffies.
//! - **A timeout resets everything** (`cubictcp_state` on TCP_CA_Loss → `bictcp_reset`:
//!   W_max = 0, so the ≤ 20 clamp applies again), and undo restores only cwnd
//!   (`.undo_cwnd = tcp_reno_undo_cwnd`), not W_max.
//! - **ssthresh = cwnd·717/1024** packets (`cubictcp_recalc_ssthresh`), with fast convergence
//!   W_max = cwnd·(1024 + 717)/2048.
//!
//! The cube root is exact (Linux's `cubic_root` is a table lookup with one Newton step,
//! average error 0.2 %).

use super::reno_linux::AiCredit;
use crate::jiffies::{jiffies, to_jiffies_ceil, HZ};
use crate::Time;

/// `BICTCP_HZ`: time inside the cubic function is in 1/2^10 s.
const BICTCP_HZ: u32 = 10;
/// `beta` (module parameter, /1024).
const BETA: u64 = 717;
const BETA_SCALE: u64 = 1024;
/// `bic_scale` = 41: `cube_rtt_scale = bic_scale · 10` (C ≈ 0.4 in 1/1024 units).
const CUBE_RTT_SCALE: u128 = 410;
/// `beta_scale = 8·(BICTCP_BETA_SCALE + beta) / 3 / (BICTCP_BETA_SCALE − beta)` (integer
/// arithmetic: 15), used by the Reno-friendly estimate.
const FRIENDLY_SCALE: u64 = 8 * (BETA_SCALE + BETA) / 3 / (BETA_SCALE - BETA);

/// `struct bictcp`'s window part, and `tp->snd_cwnd_cnt`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinuxCubic {
    /// `cnt`: cwnd grows by one packet per `cnt` packets acknowledged.
    pub cnt: u64,
    /// `last_max_cwnd` (W_max), packets; 0 = no loss since the start or the last timeout.
    pub last_max_cwnd: u64,
    last_cwnd: u64,
    last_time: u64,
    origin: u64,
    /// `bic_K`, 1/1024 s.
    k: u64,
    /// `delay_min`, ns (None = no sample).
    delay_min: Option<Time>,
    /// `epoch_start`, jiffies (None = 0 in Linux: no epoch).
    epoch_start: Option<u64>,
    ack_cnt: u64,
    /// `tcp_cwnd`: the Reno-friendly estimate, packets.
    pub tcp_cwnd: u64,
    /// `tp->snd_cwnd_cnt`: `tcp_cong_avoid_ai`'s credit, packets.
    cwnd_cnt: AiCredit,
}

impl LinuxCubic {
    /// `bictcp_acked`: a delay sample (the newest acknowledged segment's RTT, `ca_rtt_us`).
    /// "Discard delay samples right after fast recovery": none within one second (HZ
    /// jiffies) of the epoch start.
    pub fn on_delay_sample(&mut self, rtt: Time, now: Time) {
        if let Some(e) = self.epoch_start {
            if jiffies(now).saturating_sub(e) < HZ {
                return;
            }
        }
        let d = rtt.max(1_000);
        if self.delay_min.is_none_or(|m| m > d) {
            self.delay_min = Some(d);
        }
    }

    /// `bictcp_update` for an ACK of `acked` packets at cwnd `cwnd` packets: sets `cnt`.
    pub fn update(&mut self, cwnd: u64, acked: u64, now: Time) {
        let j = jiffies(now);
        self.ack_cnt += acked;
        if self.last_cwnd == cwnd && j.saturating_sub(self.last_time) <= HZ / 32 {
            return;
        }
        // "The CUBIC function can update ca->cnt at most once per jiffy."
        if !(self.epoch_start.is_some() && j == self.last_time) {
            self.last_cwnd = cwnd;
            self.last_time = j;
            let epoch = match self.epoch_start {
                Some(e) => e,
                None => {
                    self.epoch_start = Some(j);
                    self.ack_cnt = acked;
                    self.tcp_cwnd = cwnd;
                    if self.last_max_cwnd <= cwnd {
                        self.k = 0;
                        self.origin = cwnd;
                    } else {
                        // K = cbrt((W_max − cwnd)·2^40 / 410) in 1/1024 s (cube_factor).
                        let x = ((self.last_max_cwnd - cwnd) as u128) << (10 + 3 * BICTCP_HZ);
                        self.k = icbrt(x / CUBE_RTT_SCALE);
                        self.origin = self.last_max_cwnd;
                    }
                    j
                }
            };
            // t = now − epoch_start + delay_min, in 1/1024 s.
            let dmin = self.delay_min.map_or(0, to_jiffies_ceil);
            let t = ((j - epoch + dmin) << BICTCP_HZ) / HZ;
            let offs = t.abs_diff(self.k) as u128;
            let delta = ((CUBE_RTT_SCALE * offs * offs * offs) >> (10 + 3 * BICTCP_HZ)) as u64;
            let target = if t < self.k {
                self.origin.saturating_sub(delta)
            } else {
                self.origin + delta
            };
            self.cnt = if target > cwnd {
                cwnd / (target - cwnd)
            } else {
                100 * cwnd // "very small increment"
            };
            // "The initial growth of cubic function may be too conservative when the
            // available bandwidth is still unknown": at least 5 % per RTT before a loss.
            if self.last_max_cwnd == 0 && self.cnt > 20 {
                self.cnt = 20;
            }
        }
        // tcp_friendliness: the Reno estimate grows by one packet per cwnd·15/8 acknowledged.
        let delta = (cwnd * FRIENDLY_SCALE) >> 3;
        if delta > 0 && self.ack_cnt > delta {
            let n = (self.ack_cnt - 1) / delta; // the kernel's `while (ack_cnt > delta)`
            self.ack_cnt -= n * delta;
            self.tcp_cwnd += n;
        }
        if self.tcp_cwnd > cwnd {
            let max_cnt = cwnd / (self.tcp_cwnd - cwnd);
            self.cnt = self.cnt.min(max_cnt);
        }
        // "The maximum rate of cwnd increase CUBIC allows is 1 packet per 2 packets ACKed,
        // meaning cwnd grows at 1.5x per RTT."
        self.cnt = self.cnt.max(2);
    }

    /// `tcp_cong_avoid_ai(tp, cnt, acked)`: the packets to add to cwnd.
    pub fn cong_avoid_ai(&mut self, acked: u64) -> u64 {
        self.cwnd_cnt.add(self.cnt, acked)
    }

    /// `cubictcp_recalc_ssthresh` at cwnd `cwnd` packets: ends the epoch, sets W_max (fast
    /// convergence when `fast_convergence`) and returns ssthresh in packets. Also
    /// `tcp_init_cwnd_reduction` / `tcp_enter_loss`: snd_cwnd_cnt = 0.
    pub fn recalc_ssthresh(&mut self, cwnd: u64, fast_convergence: bool) -> u64 {
        self.epoch_start = None;
        self.last_max_cwnd = if cwnd < self.last_max_cwnd && fast_convergence {
            cwnd * (BETA_SCALE + BETA) / (2 * BETA_SCALE)
        } else {
            cwnd
        };
        self.cwnd_cnt.reset();
        (cwnd * BETA / BETA_SCALE).max(2)
    }

    /// `cubictcp_state(TCP_CA_Loss)` → `bictcp_reset`: everything but the credit counter
    /// (which `tcp_enter_loss` zeroes too) back to zero, W_max and delay_min included.
    pub fn on_loss_state(&mut self) {
        *self = LinuxCubic::default();
    }
}

/// ⌊∛x⌋ for x < 2^96.
fn icbrt(x: u128) -> u64 {
    let mut r = (x as f64).cbrt() as u64;
    while (r as u128 + 1).pow(3) <= x {
        r += 1;
    }
    while r > 0 && (r as u128).pow(3) > x {
        r -= 1;
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::NS_PER_MS;
    const MS: Time = NS_PER_MS;
    const S: Time = 1_000 * MS;

    #[test]
    fn integer_cube_root() {
        for x in [0u128, 1, 7, 8, 26, 27, 1 << 40, 999_999_999_999] {
            let r = icbrt(x) as u128;
            assert!(r.pow(3) <= x && (r + 1).pow(3) > x, "{x}");
        }
    }

    /// tcp_cubic's constants: beta_scale 15, so the Reno estimate adds one packet per
    /// cwnd·15/8 acknowledged (α = 8/15 ≈ 0.53 per RTT, RFC 9438's 3(1−β)/(1+β) = 0.529).
    #[test]
    fn friendliness_scale() {
        assert_eq!(FRIENDLY_SCALE, 15);
        let mut c = LinuxCubic {
            last_max_cwnd: 1000, // far above: the cubic term is concave, cnt huge
            ..Default::default()
        };
        c.recalc_ssthresh(1000, false);
        c.on_delay_sample(40 * MS, 0);
        // Epoch at cwnd 16; ack 16 packets per 40 ms for 15 RTTs (cwnd held at 16 so the
        // estimate's growth is visible alone).
        let mut now = 10 * S;
        for _ in 0..15 {
            for _ in 0..16 {
                c.update(16, 1, now);
                now += 40 * MS / 16;
            }
        }
        // cnt and the estimate are recomputed at most every HZ/32 jiffies while cwnd stays:
        // one more (empty) ACK later makes the last ones count.
        c.update(16, 0, now + 100 * MS);
        // 240 packets acked, delta = 16·15/8 = 30 → 8 packets (the first ACK starts the count).
        assert_eq!(c.tcp_cwnd, 16 + 7);
        // cnt capped by the estimate: 16 / (23 − 16) = 2.
        assert_eq!(c.cnt, 2);
    }

    /// Before any loss cnt ≤ 20 (≥ 5 % per RTT); cnt ≥ 2 always (≤ 1.5× per RTT).
    #[test]
    fn cnt_clamps() {
        let mut c = LinuxCubic::default();
        c.on_delay_sample(40 * MS, 0);
        c.update(100, 1, S);
        assert_eq!(c.last_max_cwnd, 0);
        assert_eq!(
            c.cnt, 20,
            "epoch start at cwnd = origin: target = cwnd, cnt clamped"
        );
        // Far beyond K with a W_max set: the target runs away, cnt floors at 2.
        let mut c = LinuxCubic::default();
        c.recalc_ssthresh(100, false);
        c.on_delay_sample(40 * MS, 0);
        c.update(70, 1, S);
        c.update(71, 1, S + 30 * S);
        assert_eq!(c.cnt, 2);
        // Growth at cnt = 2: one packet per 2 acknowledged.
        let added: u64 = (0..10).map(|_| c.cong_avoid_ai(1)).sum();
        assert_eq!(added, 5);
    }

    /// Small windows, whole packets: below the origin the target is origin − ⌊delta⌋, i.e.
    /// rounded up; at or above it, a target under one packet above cwnd gives the "very
    /// small increment" (cnt = 100·cwnd) where RFC 9438 grows by the fraction.
    #[test]
    fn small_window_integer_target() {
        let mut c = LinuxCubic::default();
        c.on_delay_sample(40 * MS, 0);
        c.last_max_cwnd = 12;
        assert_eq!(c.recalc_ssthresh(12, true), 8); // 12·717/1024 = 8.4
        assert_eq!(c.last_max_cwnd, 12);
        c.update(8, 1, 10 * S);
        // K = cbrt(4/0.4) ≈ 2.15 s; at t = 40 ms W(t) = 12 − 0.4·2.11³ ≈ 8.24, but the
        // kernel's target is 12 − ⌊3.78⌋ = 9: one packet per 8 acknowledged.
        assert_eq!(c.cnt, 8);
        // No W_max above cwnd: origin = cwnd, delta < 1 packet for the first RTTs.
        let mut c = LinuxCubic::default();
        c.on_delay_sample(40 * MS, 0);
        c.last_max_cwnd = 5;
        c.update(8, 1, 10 * S);
        assert_eq!(c.cnt, 100 * 8);
    }

    /// A timeout resets W_max and delay_min (bictcp_reset); a loss keeps delay_min and
    /// discards delay samples for a second after the epoch starts.
    #[test]
    fn loss_state_resets() {
        let mut c = LinuxCubic::default();
        c.on_delay_sample(40 * MS, 0);
        c.recalc_ssthresh(50, true);
        c.update(35, 1, 2 * S);
        c.on_delay_sample(30 * MS, 2 * S + 500 * MS);
        assert_eq!(c.delay_min, Some(40 * MS), "within 1 s of the epoch start");
        c.on_delay_sample(30 * MS, 3 * S + 100 * MS);
        assert_eq!(c.delay_min, Some(30 * MS));
        c.on_loss_state();
        assert_eq!(c, LinuxCubic::default());
    }
}
