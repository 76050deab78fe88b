//! CUBIC window growth (RFC 9438).
//!
//! `CcState` holds windows in bytes; CUBIC's own arithmetic (W_max, K, W_est,
//! W_cubic) is done in segments (f64), as in the RFC (RFC 9438 §4.1: "the
//! unit of all window sizes in this document is segments"), and converted at
//! the edges. `cwnd` stays an integer number of bytes; the sub-byte part of
//! each increment is kept in `cwnd_frac` so slow growth is not lost.
//! Everything is deterministic (no randomness, no clock reads).
//!
//! Choices where the RFC leaves room (see the comments at each site):
//! * ssthresh on a congestion event uses FlightSize (RFC 9438 §4.6 Figure 5),
//!   not cwnd.
//! * cwnd == ssthresh is slow start (RFC 9438 §4.10 "no more than ssthresh",
//!   same as `CcState::in_slow_start` and Reno).
//! * The per-ACK concave/convex step is scaled by segments_acked (as eq. 4
//!   does for W_est), so delayed/stretch ACKs grow cwnd like per-segment ACKs;
//!   one ACK never moves cwnd past `target`.
//! * A congestion-avoidance stage that starts with cwnd_epoch >= W_max (or with
//!   no W_max yet) uses K = 0 and W_max = cwnd_epoch, as §4.8/§4.10 prescribe
//!   for the after-timeout and no-loss cases (Linux does the same).
//! * Application-limited ACKs do not grow cwnd, and the time between the
//!   previous ACK and an application-limited ACK is removed from t (§4.2).

use super::CcEntry;
use super::cubic_linux::LinuxCubic;
use super::reno_linux::{after_slow_start, PacketCount};
use super::hystart::HyStart;
use super::hystart_linux::HyStartLinux;
use super::slow_start::SlowStart;
use super::{AckInfo, CcState, CongestionControl};
use crate::{Time, NS_PER_MS};

/// RFC 9438 §4.1/§5: C = 0.4 segments/s^3.
const C: f64 = 0.4;
/// RFC 9438 §4.6: beta_cubic SHOULD be 0.7.
const BETA: f64 = 0.7;
/// beta_cubic as an exact fraction for the byte-valued ssthresh.
const BETA_NUM: u128 = 7;
const BETA_DEN: u128 = 10;
/// RFC 9438 §4.3: alpha_cubic = 3 * (1 - beta_cubic) / (1 + beta_cubic) ≈ 0.529.
const ALPHA: f64 = 3.0 * (1.0 - BETA) / (1.0 + BETA);

const NS_PER_S_F: f64 = 1e9;

#[inline]
fn secs(ns: Time) -> f64 {
    ns as f64 / NS_PER_S_F
}

/// The controller's private state; copied whole for undo (RFC 9438 §4.9).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
struct State {
    /// W_max, segments (RFC 9438 §4.1). 0 = no congestion event yet.
    w_max: f64,
    /// K, seconds (RFC 9438 §4.2 eq. 2).
    k: f64,
    /// t_epoch: start of the current congestion-avoidance stage; `None`
    /// until the first CA ACK after a congestion event.
    t_epoch: Option<Time>,
    /// cwnd_epoch, segments (RFC 9438 §4.2).
    cwnd_epoch: f64,
    /// W_est, segments (RFC 9438 §4.3).
    w_est: f64,
    /// cwnd_prior, segments (RFC 9438 §4.1/§4.6). 0 = not set yet.
    cwnd_prior: f64,
    /// The next CA stage is the first one after a timeout (RFC 9438 §4.8).
    after_rto: bool,
    /// Sub-byte part of cwnd, in bytes, in [0, 1).
    cwnd_frac: f64,
    /// The `st.cwnd` value `cwnd_frac` belongs to; if the connection changes
    /// cwnd behind our back (recovery, RTO), the fraction is dropped.
    frac_base: u64,
}

/// CUBIC congestion control (RFC 9438), fast convergence on by default.
#[derive(Debug, Clone)]
pub struct Cubic {
    s: State,
    /// State saved at the last congestion event (RFC 9438 §4.9).
    saved: Option<State>,
    /// Time of the previous ACK seen by `on_ack`, for excluding
    /// application-limited periods from t (RFC 9438 §4.2).
    last_ack: Option<Time>,
    /// RFC 9438 §4.7: fast convergence SHOULD be implemented (and SHOULD be
    /// disabled for a single flow with no competing traffic).
    fast_convergence: bool,
    /// Slow start with byte counting and HyStart++ (shared with Reno).
    ss: SlowStart,
    /// HyStart as Linux's tcp_cubic.c, if enabled, and the send-time RTT
    /// sample of the ACK being processed (`on_newest_rtt`).
    hystart_linux: Option<HyStartLinux>,
    newest_rtt: Option<Time>,
    /// Linux's tcp_cubic.c window arithmetic instead of RFC 9438's (`cubic_linux.rs`), and
    /// the bytes acknowledged short of a whole packet (Linux counts packets).
    linux: Option<LinuxCubic>,
    linux_acked: PacketCount,
}

impl Default for Cubic {
    fn default() -> Self {
        Self::with_fast_convergence(true)
    }
}

impl Cubic {
    pub fn with_fast_convergence(on: bool) -> Self {
        Cubic {
            s: State::default(),
            saved: None,
            last_ack: None,
            fast_convergence: on,
            ss: SlowStart::default(),
            hystart_linux: None,
            newest_rtt: None,
            linux: None,
            linux_acked: PacketCount::default(),
        }
    }

    /// RFC 9438 §4.2 eq. 1: W_cubic(t) = C * (t - K)^3 + W_max (segments).
    #[inline]
    fn w_cubic(&self, t: f64) -> f64 {
        let d = t - self.s.k;
        C * d * d * d + self.s.w_max
    }

    /// cwnd in bytes including the accumulated fraction.
    fn cwnd_bytes(&mut self, st: &CcState) -> f64 {
        if st.cwnd != self.s.frac_base {
            self.s.cwnd_frac = 0.0;
            self.s.frac_base = st.cwnd;
        }
        st.cwnd as f64 + self.s.cwnd_frac
    }

    /// Store a new cwnd (bytes, fractional), capped at `st.max_cwnd`.
    fn set_cwnd(&mut self, st: &mut CcState, bytes: f64) {
        let max = st.max_cwnd as f64;
        if bytes >= max {
            st.cwnd = st.max_cwnd;
            self.s.cwnd_frac = 0.0;
        } else {
            let whole = bytes.floor();
            st.cwnd = whole as u64;
            self.s.cwnd_frac = bytes - whole;
        }
        self.s.frac_base = st.cwnd;
    }

    /// Start a congestion-avoidance stage at `now` with cwnd `cwnd` (segments).
    fn start_epoch(&mut self, cwnd: f64, now: Time) {
        let s = &mut self.s;
        // RFC 9438 §4.2: t_epoch = start of the CA stage; cwnd_epoch = cwnd then.
        s.t_epoch = Some(now);
        s.cwnd_epoch = cwnd;
        if s.after_rto || s.w_max <= cwnd {
            // RFC 9438 §4.8 (first CA stage after a timeout) and §4.10 (slow
            // start ended without loss, W_max undefined): K = 0 and
            // W_max = cwnd_epoch. Also used when cwnd_epoch >= W_max, where
            // eq. 2 would give K <= 0 (same as Linux's origin = cwnd).
            s.w_max = cwnd;
            s.k = 0.0;
        } else {
            // RFC 9438 §4.2 eq. 2: K = cbrt((W_max - cwnd_epoch) / C).
            s.k = ((s.w_max - cwnd) / C).cbrt();
        }
        // RFC 9438 §4.3 (and §4.8 after a timeout): W_est = cwnd_epoch.
        s.w_est = cwnd;
        if s.cwnd_prior <= 0.0 {
            // RFC 9438 §4.1/§4.10: cwnd_prior = cwnd on exiting the first
            // slow start without a congestion event.
            s.cwnd_prior = cwnd;
        }
        s.after_rto = false;
    }

    /// One ACK with Linux's arithmetic (tcp_cubic.c cubictcp_cong_avoid): slow start as
    /// `tcp_slow_start` (every acknowledged packet, at most `abc_l` per ACK, never past
    /// ssthresh; what is left over goes to congestion avoidance), then `bictcp_update` and
    /// `tcp_cong_avoid_ai`. Counts whole packets; a partial packet's bytes carry over.
    fn on_ack_linux(&mut self, st: &mut CcState, ack: &AckInfo) {
        let mss = st.mss.max(1);
        // tcp_slow_start: cwnd = min(cwnd + acked, ssthresh); the rest goes on.
        let Some(pkts) = after_slow_start(st, &mut self.linux_acked, ack.acked, self.ss.abc_l)
        else {
            return;
        };
        let lc = self.linux.as_mut().expect("linux arithmetic");
        lc.update(st.cwnd / mss, pkts, ack.now);
        let add = lc.cong_avoid_ai(pkts);
        st.cwnd = (st.cwnd + add * mss).min(st.max_cwnd);
    }

    /// A congestion event (fast retransmit or first RTO): save undo state,
    /// update W_max and cwnd_prior, end the epoch; return the new ssthresh.
    fn congestion_event(&mut self, st: &CcState, flight: u64) -> u64 {
        // RFC 9406 §4.2: HyStart++ is for the initial slow start only.
        self.ss.on_congestion();
        // RFC 9438 §4.9: save the state to restore if the event was spurious.
        self.saved = Some(self.s);
        let mss = st.mss.max(1) as f64;
        let cwnd = self.cwnd_bytes(st) / mss;
        let s = &mut self.s;
        // RFC 9438 §4.7: with fast convergence, W_max = cwnd * (1 + beta) / 2
        // if cwnd < W_max, otherwise W_max = cwnd (cwnd before the reduction).
        s.w_max = if self.fast_convergence && cwnd < s.w_max {
            cwnd * (1.0 + BETA) / 2.0
        } else {
            cwnd
        };
        // RFC 9438 §4.6 Figure 5: cwnd_prior = cwnd (saved before reduction).
        s.cwnd_prior = cwnd;
        // RFC 9438 §4.2: the next CA stage starts a new epoch.
        s.t_epoch = None;
        s.after_rto = false;
        // RFC 9438 §4.6 Figure 5: ssthresh = flight_size * beta_cubic,
        // ssthresh = max(ssthresh, 2 MSS). The RFC uses flight_size; using
        // cwnd instead is only allowed with cwnd-validation measures (RFC 7661),
        // and FlightSize matches the crate's Reno (RFC 5681 eq. 4).
        // Integer arithmetic so e.g. 0.7 * 90000 is exactly 63000.
        let ssthresh = (flight as u128 * BETA_NUM / BETA_DEN) as u64;
        ssthresh.max(2 * st.mss)
    }
}

impl CongestionControl for Cubic {
    fn name(&self) -> &'static str {
        "cubic"
    }

    fn on_ack(&mut self, st: &mut CcState, ack: &AckInfo) {
        let prev_ack = self.last_ack.replace(ack.now);
        let newest_rtt = self.newest_rtt.take();
        if let (Some(lc), Some(rtt)) = (self.linux.as_mut(), newest_rtt) {
            // tcp_cubic.c bictcp_acked: delay_min, also while not cwnd-limited.
            lc.on_delay_sample(rtt, ack.now);
        }
        if ack.app_limited {
            // RFC 9438 §4.2 / §5.8: no growth while application-limited, and
            // t MUST NOT include that period: push t_epoch forward by it.
            if let (Some(t0), Some(prev)) = (self.s.t_epoch, prev_ack) {
                self.s.t_epoch = Some(t0 + ack.now.saturating_sub(prev));
            }
            return;
        }
        let mss = st.mss.max(1) as f64;
        if let (Some(h), Some(rtt)) = (self.hystart_linux.as_mut(), newest_rtt) {
            // tcp_cubic.c: bictcp_acked (HyStart) runs before the slow-start
            // increase; an exit sets ssthresh = cwnd, so this ACK already
            // counts in congestion avoidance. Its delay sample is the RTT of
            // the newest segment acknowledged, from send times in µs (not
            // the timestamp echo, which a delayed ACK holds at the oldest).
            // hystart_ack_delay is min(1 ms, 4·GSO max size / pacing rate):
            // 1 ms below ~2 Gbit/s.
            let exit = h.on_ack(
                ack.now,
                rtt,
                ack.snd_una,
                ack.snd_nxt,
                st.in_slow_start(),
                st.cwnd / st.mss.max(1),
                NS_PER_MS,
            );
            if exit.is_some() {
                st.ssthresh = st.cwnd;
            }
        }
        let cwnd_b = self.cwnd_bytes(st);
        if st.in_slow_start() {
            if let Some(step) = self.ss.hystart_step(st, ack) {
                // RFC 9406 §4.2: HyStart++ slow start / CSS growth (L = 8);
                // ssthresh = cwnd when CSS ends (RFC 9438 §4.10 then starts
                // CA with W_max = cwnd_epoch, K = 0).
                self.set_cwnd(st, cwnd_b + step.increase as f64);
                if step.enter_ca {
                    st.ssthresh = st.cwnd;
                }
                return;
            }
            if self.linux.is_some() {
                self.on_ack_linux(st, ack);
                return;
            }
            // RFC 9438 §4.10: slow start while cwnd <= ssthresh, Reno style
            // with Appropriate Byte Counting (RFC 3465 §2.2/§2.3, shared with
            // Reno in `slow_start.rs`).
            let inc = self.ss.abc_increase(st, ack);
            self.set_cwnd(st, cwnd_b + inc as f64);
            return;
        }
        if self.linux.is_some() {
            self.on_ack_linux(st, ack);
            return;
        }
        // RFC 3465 §2.3: the post-RTO slow start is over.
        self.ss.on_congestion_avoidance();

        let cwnd = cwnd_b / mss;
        let t_epoch = match self.s.t_epoch {
            Some(t) => t,
            None => {
                self.start_epoch(cwnd, ack.now);
                ack.now
            }
        };
        // RFC 9438 §4.2: t = t_current - t_epoch; RTT = smoothed RTT (0 if none yet).
        let t = secs(ack.now.saturating_sub(t_epoch));
        let rtt = secs(ack.srtt);
        // RFC 9438 §4.1: segments_acked may be fractional.
        let segs_acked = ack.acked as f64 / mss;
        let denom = cwnd.max(1.0);

        // RFC 9438 §4.3: alpha_cubic, switched to 1 once W_est >= cwnd_prior.
        let alpha = if self.s.w_est >= self.s.cwnd_prior {
            1.0
        } else {
            ALPHA
        };
        // RFC 9438 §4.3 eq. 4: W_est += alpha * segments_acked / cwnd.
        self.s.w_est += alpha * segs_acked / denom;

        let new_cwnd = if self.w_cubic(t) < self.s.w_est {
            // RFC 9438 §4.3: Reno-friendly region, cwnd = W_est (never
            // shrunk on an ACK: cwnd may already exceed W_est after
            // chasing W_cubic(t + RTT)).
            self.s.w_est.max(cwnd)
        } else {
            // RFC 9438 §4.2: target = W_cubic(t + RTT) bounded to [cwnd, 1.5 cwnd].
            let target = self.w_cubic(t + rtt).min(1.5 * cwnd).max(cwnd);
            // RFC 9438 §4.4 (concave) / §4.5 (convex): cwnd += (target - cwnd) / cwnd
            // per new ACK; scaled by segments_acked (like eq. 4) so one ACK for
            // n segments counts as n, and never past target.
            let step = ((target - cwnd) / denom * segs_acked).min(target - cwnd);
            cwnd + step
        };
        self.set_cwnd(st, new_cwnd * mss);
    }

    fn ssthresh_on_loss(&mut self, st: &CcState, flight: u64, _now: Time) -> u64 {
        if let Some(lc) = self.linux.as_mut() {
            // tcp_cubic.c cubictcp_recalc_ssthresh on snd_cwnd (the connection passes cwnd
            // with ssthresh_from = "cwnd", as Linux; FlightSize otherwise).
            let mss = st.mss.max(1);
            return lc.recalc_ssthresh(flight / mss, self.fast_convergence) * mss;
        }
        // RFC 9438 §4.6/§4.7. The connection sets cwnd (= ssthresh, or via
        // recovery and `on_recovery_exit`, which keeps the default).
        self.congestion_event(st, flight)
    }

    fn on_rto(&mut self, st: &mut CcState, flight: u64, first: bool, _now: Time) {
        if let Some(lc) = self.linux.as_mut() {
            // tcp_enter_loss: ssthresh from cubictcp_recalc_ssthresh on the first expiry,
            // then cubictcp_state(TCP_CA_Loss) → bictcp_reset (W_max = 0, delay_min = 0).
            if first {
                let mss = st.mss.max(1);
                st.ssthresh = lc.recalc_ssthresh(flight / mss, self.fast_convergence) * mss;
            }
            lc.on_loss_state();
            if let Some(h) = self.hystart_linux.as_mut() {
                h.on_loss();
            }
            return;
        }
        if first {
            // RFC 9438 §4.8: ssthresh set with beta_cubic as in §4.6, W_max
            // updated as on a loss (§4.7); repeated expiries of the same
            // segment do not reduce ssthresh again (RFC 5681 §3.1).
            st.ssthresh = self.congestion_event(st, flight);
        }
        // RFC 9438 §4.8: cwnd follows Reno (set by the connection); the first
        // CA stage afterwards uses K = 0, W_max = W_est = cwnd_epoch.
        self.s.t_epoch = None;
        self.s.after_rto = true;
        // RFC 3465 §2.3: L = 1 SMSS in the slow start after an RTO; HyStart++ off.
        self.ss.on_rto();
        if let Some(h) = self.hystart_linux.as_mut() {
            // bictcp_state(TCP_CA_Loss): HyStart runs again.
            h.on_loss();
        }
    }

    fn set_abc_limit(&mut self, l: u32) -> bool {
        self.ss.set_abc_limit(l);
        true
    }

    fn set_hystart(&mut self, on: bool) -> bool {
        self.ss.set_hystart(on);
        true
    }

    fn hystart(&self) -> Option<&HyStart> {
        self.ss.hystart.as_ref()
    }

    fn on_newest_rtt(&mut self, rtt: Option<Time>) {
        self.newest_rtt = rtt;
    }

    fn on_pkts_acked_in_recovery(
        &mut self,
        st: &mut CcState,
        now: Time,
        rtt: Time,
        snd_una: u64,
        snd_nxt: u64,
    ) {
        // tcp_cubic.c: cubictcp_acked() is the `pkts_acked` hook, called by
        // tcp_clean_rtx_queue() for every ACK, in fast recovery too. PRR can
        // take cwnd below the ssthresh set at the loss; cwnd < ssthresh is
        // then "slow start" to bictcp_acked, and HyStart (not yet found)
        // runs: a delay exit sets ssthresh = cwnd, and
        // tcp_end_cwnd_reduction() later leaves recovery at that cwnd.
        if let Some(lc) = self.linux.as_mut() {
            lc.on_delay_sample(rtt, now);
        }
        if let Some(h) = self.hystart_linux.as_mut() {
            let exit = h.on_ack(
                now,
                rtt,
                snd_una,
                snd_nxt,
                st.in_slow_start(),
                st.cwnd / st.mss.max(1),
                NS_PER_MS,
            );
            if exit.is_some() {
                st.ssthresh = st.cwnd;
            }
        }
    }

    fn set_hystart_linux(&mut self, on: bool) -> bool {
        self.hystart_linux = on.then(HyStartLinux::default);
        true
    }

    fn set_linux_arith(&mut self, on: bool) -> bool {
        self.linux = on.then(LinuxCubic::default);
        true
    }

    fn undo(&mut self) {
        if self.linux.is_some() {
            // tcp_cubic.c: .undo_cwnd = tcp_reno_undo_cwnd restores cwnd only (done by the
            // connection); W_max and the epoch stay as the congestion event left them.
            return;
        }
        // RFC 9438 §4.9: restore W_max, K, t_epoch, W_est, cwnd_prior (and
        // our cwnd_epoch / fraction bookkeeping) saved at the last congestion
        // event. cwnd and ssthresh are restored by the connection, which also
        // applies the "only if cwnd < cwnd_prior" condition.
        if let Some(saved) = self.saved.take() {
            self.s = saved;
        }
    }
}

/// `cc = "cubic"` (RFC 9438).
pub(super) const CUBIC: CcEntry = CcEntry {
    loss_based: true,
    hystart_linux: true,
    cubic_linux: true,
    ..CcEntry::new("cubic", |_, _| Box::new(Cubic::default()))
};

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;
    const MS: Time = 1_000_000;
    const S: Time = 1_000_000_000;

    fn state(cwnd_segs: u64, ssthresh_segs: u64) -> CcState {
        CcState {
            cwnd: cwnd_segs * MSS,
            ssthresh: ssthresh_segs * MSS,
            mss: MSS,
            max_cwnd: u64::MAX,
            ca_at_ssthresh: false,
        }
    }

    fn ack(now: Time, acked: u64, srtt: Time) -> AckInfo {
        AckInfo {
            now,
            acked,
            rtt: Some(srtt),
            min_rtt: Some(srtt),
            srtt,
            flight: 0,
            app_limited: false,
            snd_una: 0,
            snd_nxt: 0,
        }
    }

    fn segs(st: &CcState) -> f64 {
        st.cwnd as f64 / MSS as f64
    }

    /// tcp_cubic.c bictcp_acked in fast recovery: PRR left cwnd (83) below
    /// the loss's ssthresh (111), so HyStart runs; RTTs 40 ms above the
    /// 87 ms minimum end "slow start" after 8 samples: ssthresh = cwnd, the
    /// window tcp_end_cwnd_reduction then leaves recovery with. Without
    /// Linux HyStart the hook changes nothing; with cwnd ≥ ssthresh neither.
    #[test]
    fn hystart_runs_in_recovery_below_ssthresh() {
        let feed = |cc: &mut Cubic, st: &mut CcState| {
            let mut now = 0;
            // One round with the path's minimum, then one of queue-delayed RTTs.
            cc.on_pkts_acked_in_recovery(st, now, 87 * MS, 0, 0);
            for k in 1..=12u64 {
                now += 5 * MS;
                cc.on_pkts_acked_in_recovery(st, now, 127 * MS, k, 1000);
            }
        };
        let mut cc = Cubic::default();
        assert!(cc.set_hystart_linux(true));
        let mut st = state(83, 111);
        feed(&mut cc, &mut st);
        assert_eq!(st.ssthresh, 83 * MSS);
        assert_eq!(st.cwnd, 83 * MSS);

        let mut plain = Cubic::default();
        let mut st = state(83, 111);
        feed(&mut plain, &mut st);
        assert_eq!(st.ssthresh, 111 * MSS);

        let mut cc = Cubic::default();
        cc.set_hystart_linux(true);
        let mut st = state(111, 111);
        st.ca_at_ssthresh = true;
        feed(&mut cc, &mut st);
        assert_eq!(st.ssthresh, 111 * MSS);
    }

    /// Congestion avoidance at 100 segments, then a loss with FlightSize =
    /// 100 segments: ssthresh = 70 segments. The connection then sets
    /// cwnd = 70 segments; ssthresh is put one byte lower so the first ACK is
    /// already CA (with cwnd == ssthresh the crate does one slow-start ACK
    /// first, RFC 9438 §4.10), giving cwnd_epoch = 70 exactly.
    fn after_loss_at_100(cc: &mut Cubic) -> CcState {
        let mut st = state(100, 50);
        cc.s.w_max = 100.0; // steady state: previous W_max = current cwnd
        let ss = cc.ssthresh_on_loss(&st, 100 * MSS, 0);
        assert_eq!(ss, 70 * MSS);
        assert!((cc.s.w_max - 100.0).abs() < 1e-9);
        assert!((cc.s.cwnd_prior - 100.0).abs() < 1e-9);
        st.cwnd = ss;
        st.ssthresh = ss - 1;
        st
    }

    /// ACK clock: one MSS-sized ACK every rtt/cwnd until `until`.
    fn run(cc: &mut Cubic, st: &mut CcState, mut now: Time, until: Time, rtt: Time) -> Time {
        while now < until {
            now += (rtt as f64 / segs(st)) as Time;
            cc.on_ack(st, &ack(now, MSS, rtt));
        }
        now
    }

    /// RFC 3465 §2.2 in CUBIC's slow start (as Reno): with L = 2 an ACK for
    /// 2 segments opens cwnd by 2 SMSS (1 with L = 1), a stretch ACK by at
    /// most 2; §2.3: L = 1 in the slow start after an RTO.
    #[test]
    fn slow_start_byte_counting() {
        let mut cc = Cubic::default();
        let mut st = state(10, 1000);
        cc.on_ack(&mut st, &ack(0, 2 * MSS, 100 * MS));
        assert_eq!(st.cwnd, 11 * MSS, "L = 1 by default");
        assert!(cc.set_abc_limit(2));
        cc.on_ack(&mut st, &ack(1, 2 * MSS, 100 * MS));
        assert_eq!(st.cwnd, 13 * MSS);
        cc.on_ack(&mut st, &ack(2, 5 * MSS, 100 * MS));
        assert_eq!(st.cwnd, 15 * MSS, "capped at L*SMSS per ACK");
        cc.on_rto(&mut st, 15 * MSS, true, 3);
        st.cwnd = MSS;
        cc.on_ack(&mut st, &ack(4, 2 * MSS, 100 * MS));
        assert_eq!(st.cwnd, 2 * MSS, "L = 1 after an RTO");
    }

    /// Linux's arithmetic (tcp_cubic.c cubictcp_cong_avoid): tcp_slow_start stops at
    /// ssthresh and hands the rest of the ACK to congestion avoidance; there cwnd grows by
    /// whole packets, at most one per 2 acknowledged (cnt ≥ 2), and ssthresh is
    /// cwnd·717/1024 packets.
    #[test]
    fn linux_arithmetic_through_cubic() {
        let mut cc = Cubic::default();
        assert!(cc.set_linux_arith(true));
        cc.set_abc_limit(2);
        let mut st = state(10, 11);
        st.ca_at_ssthresh = true;
        cc.on_newest_rtt(Some(40 * MS));
        cc.on_ack(&mut st, &ack(S, 2 * MSS, 40 * MS));
        assert_eq!(st.cwnd, 11 * MSS, "slow start capped at ssthresh");
        // A partial packet is carried over, not counted.
        cc.on_ack(&mut st, &ack(S + MS, MSS / 2, 40 * MS));
        assert_eq!(st.cwnd % MSS, 0);
        // 200 packets acknowledged in congestion avoidance: at most +100.
        let before = st.cwnd / MSS;
        for i in 0..100 {
            cc.on_ack(&mut st, &ack(2 * S + i * 10 * MS, 2 * MSS, 40 * MS));
        }
        let grown = st.cwnd / MSS - before;
        assert!(grown > 0 && grown <= 100, "{grown}");
        assert_eq!(st.cwnd % MSS, 0, "whole packets");
        let cwnd = st.cwnd / MSS;
        assert_eq!(
            cc.ssthresh_on_loss(&st, st.cwnd, 3 * S),
            cwnd * 717 / 1024 * MSS
        );
    }

    /// HyStart++ through CUBIC: slow-start ACKs grow by min(N, 8 SMSS).
    #[test]
    fn hystart_slow_start_uses_l_8() {
        let mut cc = Cubic::default();
        assert!(cc.set_hystart(true));
        let mut st = state(10, 1000);
        cc.on_ack(&mut st, &ack(0, 10 * MSS, 100 * MS));
        assert_eq!(st.cwnd, 18 * MSS);
        cc.ssthresh_on_loss(&st, st.cwnd, 1);
        assert!(!cc.hystart().unwrap().active(), "initial slow start only");
    }

    #[test]
    fn k_after_loss() {
        // Hand-worked: K = cbrt((100 - 70) / 0.4) = cbrt(75) = 4.2172 s.
        let mut cc = Cubic::default();
        let mut st = after_loss_at_100(&mut cc);
        cc.on_ack(&mut st, &ack(0, MSS, 100 * MS));
        assert!((cc.s.cwnd_epoch - 70.0).abs() < 1e-9);
        assert!((cc.s.k - 4.2172).abs() < 1e-4, "K = {}", cc.s.k);

        // With cwnd == ssthresh (recovery exit as the connection does it) the
        // first ACK is slow start (+1 MSS), so CA starts at cwnd_epoch = 71:
        // K = cbrt(29 / 0.4) = cbrt(72.5) = 4.1698 s.
        let mut cc = Cubic::default();
        let mut st = after_loss_at_100(&mut cc);
        st.ssthresh = st.cwnd;
        cc.on_ack(&mut st, &ack(0, MSS, 100 * MS));
        assert_eq!(st.cwnd, 71 * MSS);
        assert_eq!(cc.s.t_epoch, None);
        cc.on_ack(&mut st, &ack(1, MSS, 100 * MS));
        assert!((cc.s.cwnd_epoch - 71.0).abs() < 1e-9);
        assert!((cc.s.k - 4.1698).abs() < 1e-4, "K = {}", cc.s.k);
    }

    #[test]
    fn follows_cubic_curve() {
        // RTT 200 ms: W_est = 70 + 0.5294 * t / 0.2 stays below W_cubic(t)
        // until past 1.5K (it reaches cwnd_prior = 100, where alpha becomes 1,
        // only at t = 11.3 s), so the window is in the concave then convex
        // region throughout. (With RTT 100 ms, W_est hits 100 at 5.7 s and
        // then the Reno-friendly region wins before 1.5K, as it should.)
        // W(t) = 0.4 (t - 4.2172)^3 + 100:
        //   t = K/2 = 2.1086 s -> 100 - 0.4 * 2.1086^3 = 96.25
        //   t = K              -> 100.00
        //   t = 1.5K = 6.3258 s -> 103.75
        let rtt = 200 * MS;
        let mut cc = Cubic::default();
        let mut st = after_loss_at_100(&mut cc);
        let k = (30.0f64 / 0.4).cbrt();
        let mut now = 0;
        for (t, want) in [(k / 2.0, 96.25), (k, 100.0), (1.5 * k, 103.75)] {
            now = run(&mut cc, &mut st, now, (t * 1e9) as Time, rtt);
            let got = segs(&st);
            assert!(
                (got - want).abs() < 0.25,
                "t = {t}: cwnd {got}, want {want}"
            );
        }
        // Plateau: the window grows little around K.
        let mut cc = Cubic::default();
        let mut st = after_loss_at_100(&mut cc);
        let now = run(&mut cc, &mut st, 0, ((k - 0.5) * 1e9) as Time, rtt);
        let a = segs(&st);
        run(&mut cc, &mut st, now, ((k + 0.5) * 1e9) as Time, rtt);
        assert!(segs(&st) - a < 0.2, "{} -> {}", a, segs(&st));
    }

    #[test]
    fn fast_convergence() {
        let mut cc = Cubic::default();
        let mut st = after_loss_at_100(&mut cc);
        // Second loss at cwnd = 90 < W_max = 100:
        // W_max = 90 * (1 + 0.7) / 2 = 76.5, ssthresh = 0.7 * 90 = 63 segments.
        st.cwnd = 90 * MSS;
        let ss = cc.ssthresh_on_loss(&st, 90 * MSS, 0);
        assert_eq!(ss, 63 * MSS);
        assert!((cc.s.w_max - 76.5).abs() < 1e-9, "{}", cc.s.w_max);
        assert!((cc.s.cwnd_prior - 90.0).abs() < 1e-9);

        // Without fast convergence W_max = cwnd.
        let mut cc = Cubic::with_fast_convergence(false);
        let mut st = after_loss_at_100(&mut cc);
        st.cwnd = 90 * MSS;
        cc.ssthresh_on_loss(&st, 90 * MSS, 0);
        assert!((cc.s.w_max - 90.0).abs() < 1e-9);

        // A loss above W_max sets W_max = cwnd; ssthresh never below 2 MSS.
        let mut cc = Cubic::default();
        let mut st = after_loss_at_100(&mut cc);
        st.cwnd = 120 * MSS;
        assert_eq!(cc.ssthresh_on_loss(&st, MSS, 0), 2 * MSS);
        assert!((cc.s.w_max - 120.0).abs() < 1e-9);
    }

    #[test]
    fn reno_friendly_region() {
        // RTT 1 ms: W_cubic(0.02) = 100 - 0.4 * (4.2172 - 0.02)^3 = 70.4, so
        // CUBIC is in the Reno-friendly region and cwnd = W_est, which grows
        // by alpha_cubic = 0.5294 segments per RTT from cwnd_epoch = 70:
        //   after 20 RTTs: 70 + 20 * 0.5294 = 80.59.
        // W_est reaches cwnd_prior = 100 after 30 / 0.5294 = 56.7 RTTs; then
        // alpha = 1: after 100 RTTs, 100 + (100 - 56.7) = 143.3.
        let rtt = MS;
        let mut cc = Cubic::default();
        let mut st = after_loss_at_100(&mut cc);
        let now = run(&mut cc, &mut st, 0, 20 * rtt, rtt);
        assert!((segs(&st) - 80.59).abs() < 0.3, "{}", segs(&st));
        assert!((cc.s.w_est - segs(&st)).abs() < 0.01);
        run(&mut cc, &mut st, now, 100 * rtt, rtt);
        assert!((segs(&st) - 143.3).abs() < 1.0, "{}", segs(&st));
    }

    #[test]
    fn undo_restores_state() {
        let rtt = 100 * MS;
        let mut cc = Cubic::default();
        let mut st = after_loss_at_100(&mut cc);
        let now = run(&mut cc, &mut st, 0, 2 * S, rtt);
        let (cc_before, st_before) = (cc.clone(), st);

        // A (spurious) loss, recovery, then undo.
        let ss = cc.ssthresh_on_loss(&st, st.cwnd, now);
        st.ssthresh = ss;
        st.cwnd = ss;
        assert_ne!(cc.s, cc_before.s);
        cc.undo();
        assert_eq!(cc.s, cc_before.s);
        // The connection restores cwnd and ssthresh; growth then continues
        // exactly as if the loss had not happened.
        st.cwnd = st_before.cwnd;
        st.ssthresh = st_before.ssthresh;
        let mut reference = cc_before;
        let mut st_ref = st_before;
        run(&mut cc, &mut st, now, 3 * S, rtt);
        run(&mut reference, &mut st_ref, now, 3 * S, rtt);
        assert_eq!(st.cwnd, st_ref.cwnd);
        assert_eq!(cc.s, reference.s);

        // Undo after an RTO restores it too; a second undo is a no-op.
        let saved = cc.s;
        let flight = st.cwnd;
        cc.on_rto(&mut st, flight, true, 3 * S);
        assert!(cc.s.after_rto);
        cc.undo();
        assert_eq!(cc.s, saved);
        cc.undo();
        assert_eq!(cc.s, saved);
    }

    #[test]
    fn app_limited_does_not_grow() {
        let rtt = 100 * MS;
        // Slow start.
        let mut cc = Cubic::default();
        let mut st = state(10, 100);
        let mut a = ack(0, MSS, rtt);
        a.app_limited = true;
        cc.on_ack(&mut st, &a);
        assert_eq!(st.cwnd, 10 * MSS);

        // Congestion avoidance: no growth, and the app-limited time is left
        // out of t, so growth resumes where it stopped.
        let mut cc = Cubic::default();
        let mut st = after_loss_at_100(&mut cc);
        let now = run(&mut cc, &mut st, 0, S, rtt);
        let (mut idle_cc, mut idle_st) = (cc.clone(), st);
        let w = st.cwnd;
        for i in 1..=50 {
            let mut a = ack(now + i * 20 * MS, MSS, rtt);
            a.app_limited = true;
            idle_cc.on_ack(&mut idle_st, &a);
            assert_eq!(idle_st.cwnd, w);
        }
        // 1 s app-limited; then the same ACK 10 ms later in each case.
        idle_cc.on_ack(&mut idle_st, &ack(now + S + 10 * MS, MSS, rtt));
        cc.on_ack(&mut st, &ack(now + 10 * MS, MSS, rtt));
        assert_eq!(idle_st.cwnd, st.cwnd);
    }

    #[test]
    fn timeout_restarts_with_k_zero() {
        // RFC 9438 §4.8: ssthresh = 0.7 * FlightSize; the first CA stage
        // after the timeout uses K = 0 and W_max = W_est = cwnd_epoch.
        let mut cc = Cubic::default();
        let mut st = after_loss_at_100(&mut cc);
        st.cwnd = 80 * MSS;
        cc.on_rto(&mut st, 80 * MSS, true, 0);
        assert_eq!(st.ssthresh, 56 * MSS);
        // repeated expiry: ssthresh unchanged
        st.cwnd = MSS;
        cc.on_rto(&mut st, 80 * MSS, false, 0);
        assert_eq!(st.ssthresh, 56 * MSS);
        // slow start up to ssthresh, then CA
        let mut now = 0;
        while st.in_slow_start() {
            now += MS;
            cc.on_ack(&mut st, &ack(now, MSS, 100 * MS));
        }
        cc.on_ack(&mut st, &ack(now + MS, MSS, 100 * MS));
        assert!((cc.s.cwnd_epoch - 57.0).abs() < 1e-9);
        assert_eq!(cc.s.k, 0.0);
        assert!((cc.s.w_max - 57.0).abs() < 1e-9);
        assert!(!cc.s.after_rto);
    }

    #[test]
    fn fractional_growth_and_cap() {
        // Tiny increments accumulate instead of being truncated away.
        let mut cc = Cubic::default();
        let mut st = after_loss_at_100(&mut cc);
        let mut now = 0;
        for _ in 0..2000 {
            now += MS;
            cc.on_ack(&mut st, &ack(now, 1, MS)); // 1 byte acked each time
        }
        assert!(st.cwnd > 70 * MSS);
        // cwnd never exceeds max_cwnd.
        let mut cc = Cubic::default();
        let mut st = after_loss_at_100(&mut cc);
        st.max_cwnd = 75 * MSS;
        run(&mut cc, &mut st, 0, 10 * S, 10 * MS);
        assert_eq!(st.cwnd, 75 * MSS);
        // Slow start is Reno's: +min(acked, MSS).
        let mut cc = Cubic::default();
        let mut st = state(10, 100);
        cc.on_ack(&mut st, &ack(0, 3 * MSS, 0));
        assert_eq!(st.cwnd, 11 * MSS);
        assert_eq!(cc.name(), "cubic");
    }
}
