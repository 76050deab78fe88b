//! BBR (v1) as Linux's `tcp_bbr.c` (`cc = "bbr"`; docs/algorithms.md §5.10).
//!
//! BBR is a `.cong_control` controller: on every ACK it takes the ACK's
//! delivery-rate sample (`rate.rs`) and sets cwnd and the pacing rate
//! itself (`bbr_main`); the connection's loss-recovery cwnd rules (PRR,
//! cwnd = ssthresh) do not apply, as in Linux's `tcp_cong_control`. Each
//! function below is the kernel function it is named after, in the
//! kernel's units: bandwidth in packets per µs scaled by 2^24 (`BW_SCALE`),
//! gains in 1/256 (`BBR_SCALE`), times in µs, the min-RTT and PROBE_RTT
//! stamps in jiffies (`HZ`), windows in packets.
//!
//! The start of the PROBE_BW gain cycle is random (`prandom_u32_max(7)`);
//! the draw comes from a generator seeded per connection
//! (`CongestionControl::set_seed`).

use crate::jiffies::{jiffies, HZ};
use super::{AckInfo, CcEntry, CcParams, CcState, CongestionControl, RateSample, TcpView};
use crate::recovery::CaState;
use crate::Time;

/// The registry entry.
pub static BBR: CcEntry = CcEntry {
    cong_control: true,
    ..CcEntry::new("bbr", |_: &CcParams, _| Box::new(Bbr::default()))
};

const BW_SCALE: u32 = 24;
const BW_UNIT: u64 = 1 << BW_SCALE;
const BBR_SCALE: u32 = 8;
const BBR_UNIT: u64 = 1 << BBR_SCALE;
const CYCLE_LEN: u32 = 8;
/// `bbr_bw_rtts`: window of the max-bandwidth filter, rounds.
const BW_RTTS: u64 = CYCLE_LEN as u64 + 2;
/// `bbr_min_rtt_win_sec`.
const MIN_RTT_WIN_SEC: u64 = 10;
/// `bbr_probe_rtt_mode_ms`.
const PROBE_RTT_MODE_MS: u64 = 200;
/// `bbr_min_tso_rate`, bit/s.
const MIN_TSO_RATE: u64 = 1_200_000;
/// `bbr_pacing_margin_percent`.
const PACING_MARGIN_PERCENT: u64 = 1;
/// `bbr_high_gain` = 2/ln 2, `bbr_drain_gain` = its inverse, `bbr_cwnd_gain`.
pub const HIGH_GAIN: u64 = BBR_UNIT * 2885 / 1000 + 1;
pub const DRAIN_GAIN: u64 = BBR_UNIT * 1000 / 2885;
const CWND_GAIN: u64 = BBR_UNIT * 2;
/// `bbr_pacing_gain[]`: the PROBE_BW cycle.
pub const PACING_GAIN: [u64; CYCLE_LEN as usize] = [
    BBR_UNIT * 5 / 4,
    BBR_UNIT * 3 / 4,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
];
/// `bbr_cycle_rand`.
const CYCLE_RAND: u64 = 7;
/// `bbr_cwnd_min_target`.
const CWND_MIN_TARGET: u64 = 4;
/// `bbr_full_bw_thresh`, `bbr_full_bw_cnt`.
const FULL_BW_THRESH: u64 = BBR_UNIT * 5 / 4;
const FULL_BW_CNT: u32 = 3;
/// Long-term (policer) estimator: `bbr_lt_intvl_min_rtts`, `bbr_lt_loss_thresh`,
/// `bbr_lt_bw_ratio`, `bbr_lt_bw_diff` (bytes/s), `bbr_lt_bw_max_rtts`.
const LT_INTVL_MIN_RTTS: u32 = 4;
const LT_LOSS_THRESH: u64 = 50;
const LT_BW_RATIO: u64 = BBR_UNIT / 8;
const LT_BW_DIFF: u64 = 4000 / 8;
const LT_BW_MAX_RTTS: u32 = 48;
/// ACK aggregation: `bbr_extra_acked_gain`, `bbr_extra_acked_win_rtts`,
/// `bbr_ack_epoch_acked_reset_thresh`, `bbr_extra_acked_max_us`.
const EXTRA_ACKED_GAIN: u64 = BBR_UNIT;
const EXTRA_ACKED_WIN_RTTS: u32 = 5;
const ACK_EPOCH_ACKED_RESET_THRESH: u64 = 1 << 20;
const EXTRA_ACKED_MAX_US: u64 = 100 * 1000;
/// `TCP_INIT_CWND`.
const TCP_INIT_CWND: u64 = 10;
/// `GSO_MAX_SIZE - 1 - MAX_TCP_HEADER` (bbr_tso_segs_goal's cap, bytes).
const TSO_GOAL_MAX_BYTES: u64 = 65_536 - 1 - 320;

/// `enum bbr_mode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Mode {
    #[default]
    Startup,
    Drain,
    ProbeBw,
    ProbeRtt,
}

/// `struct minmax` (lib/win_minmax.c): the best three samples of a window.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct MinMax {
    s: [(u64, u64); 3], // (t, v)
}

impl MinMax {
    fn get(&self) -> u64 {
        self.s[0].1
    }

    /// `minmax_reset`.
    fn reset(&mut self, t: u64, v: u64) {
        self.s = [(t, v); 3];
    }

    /// `minmax_running_max`.
    fn running_max(&mut self, win: u64, t: u64, v: u64) {
        if v >= self.s[0].1 || t.wrapping_sub(self.s[2].0) > win {
            return self.reset(t, v); // "found new max" / "nothing left in window"
        }
        if v >= self.s[1].1 {
            self.s[2] = (t, v);
            self.s[1] = (t, v);
        } else if v >= self.s[2].1 {
            self.s[2] = (t, v);
        }
        self.subwin_update(win, (t, v));
    }

    /// `minmax_subwin_update`.
    fn subwin_update(&mut self, win: u64, val: (u64, u64)) {
        let dt = val.0.wrapping_sub(self.s[0].0);
        if dt > win {
            // "Passed entire window without a new val so make 2nd choice the
            // new val & 3rd choice the new 2nd choice."
            self.s[0] = self.s[1];
            self.s[1] = self.s[2];
            self.s[2] = val;
            if val.0.wrapping_sub(self.s[0].0) > win {
                self.s[0] = self.s[1];
                self.s[1] = self.s[2];
                self.s[2] = val;
            }
        } else if self.s[1].0 == self.s[0].0 && dt > win / 4 {
            self.s[2] = val;
            self.s[1] = val;
        } else if self.s[2].0 == self.s[1].0 && dt > win / 2 {
            self.s[2] = val;
        }
    }
}

/// `struct bbr`, with the socket fields only BBR writes (`sk_pacing_rate`).
#[derive(Clone, Debug, Default)]
pub struct Bbr {
    pub min_rtt_us: u64,
    /// `min_rtt_stamp`, `probe_rtt_done_stamp`: jiffies (0 = unset for the latter).
    min_rtt_stamp: u64,
    probe_rtt_done_stamp: u64,
    bw: MinMax,
    pub rtt_cnt: u64,
    next_rtt_delivered: u64,
    /// `cycle_mstamp`, µs.
    cycle_mstamp: u64,
    pub mode: Mode,
    prev_ca_state: Option<CaState>,
    packet_conservation: bool,
    pub round_start: bool,
    idle_restart: bool,
    probe_rtt_round_done: bool,
    lt_is_sampling: bool,
    lt_rtt_cnt: u32,
    pub lt_use_bw: bool,
    pub lt_bw: u64,
    lt_last_delivered: u64,
    /// `lt_last_stamp`, ms.
    lt_last_stamp: u64,
    lt_last_lost: u64,
    pub pacing_gain: u64,
    pub cwnd_gain: u64,
    pub full_bw_reached: bool,
    full_bw_cnt: u32,
    pub cycle_idx: u32,
    has_seen_rtt: bool,
    /// `prior_cwnd`, packets.
    pub prior_cwnd: u64,
    full_bw: u64,
    /// `ack_epoch_mstamp`, µs.
    ack_epoch_mstamp: u64,
    extra_acked: [u64; 2],
    ack_epoch_acked: u64,
    extra_acked_win_rtts: u32,
    extra_acked_win_idx: usize,
    /// `sk->sk_pacing_rate`, bytes/s.
    pub pacing_rate: u64,
    /// The connection's random stream for `prandom_u32_max`.
    rng: u64,
    /// The connection's `tp->mss_cache` (set on every call).
    mss: u64,
}

#[inline]
fn us(t: Time) -> u64 {
    t / 1_000
}

impl Bbr {
    /// SplitMix64 step; `prandom_u32_max(n)` as Linux's reciprocal scaling.
    fn prandom_max(&mut self, n: u64) -> u64 {
        self.rng = self.rng.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.rng;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        ((z >> 32) * n) >> 32
    }

    /// `bbr_max_bw`.
    pub fn max_bw(&self) -> u64 {
        self.bw.get()
    }

    /// `bbr_bw`: the long-term (policed) rate when in use, else the max filter.
    pub fn bw(&self) -> u64 {
        if self.lt_use_bw {
            self.lt_bw
        } else {
            self.max_bw()
        }
    }

    /// `bbr_extra_acked`.
    fn extra_acked(&self) -> u64 {
        self.extra_acked[0].max(self.extra_acked[1])
    }

    /// `bbr_rate_bytes_per_sec`: with the 1 % pacing margin.
    fn rate_bytes_per_sec(&self, rate: u64, gain: u64) -> u64 {
        let mut rate = rate as u128;
        rate *= self.mss as u128;
        rate *= gain as u128;
        rate >>= BBR_SCALE;
        rate *= (1_000_000 / 100 * (100 - PACING_MARGIN_PERCENT)) as u128;
        (rate >> BW_SCALE) as u64
    }

    /// `bbr_bw_to_pacing_rate` (no `sk_max_pacing_rate` cap here).
    fn bw_to_pacing_rate(&self, bw: u64, gain: u64) -> u64 {
        self.rate_bytes_per_sec(bw, gain)
    }

    /// `bbr_init_pacing_rate_from_rtt`: high_gain · cwnd / SRTT (1 ms before a sample).
    fn init_pacing_rate_from_rtt(&mut self, cwnd: u64, srtt: Time) {
        let rtt_us = if srtt > 0 {
            self.has_seen_rtt = true;
            us(srtt).max(1)
        } else {
            1_000
        };
        let bw = cwnd * BW_UNIT / rtt_us;
        self.pacing_rate = self.bw_to_pacing_rate(bw, HIGH_GAIN);
    }

    /// `bbr_set_pacing_rate`: only upwards until the pipe is full.
    fn set_pacing_rate(&mut self, bw: u64, gain: u64, cwnd: u64, srtt: Time) {
        let rate = self.bw_to_pacing_rate(bw, gain);
        if !self.has_seen_rtt && srtt > 0 {
            self.init_pacing_rate_from_rtt(cwnd, srtt);
        }
        if self.full_bw_reached || rate > self.pacing_rate {
            self.pacing_rate = rate;
        }
    }

    /// `bbr_min_tso_segs`.
    fn min_tso(&self) -> u64 {
        if self.pacing_rate < (MIN_TSO_RATE >> 3) {
            1
        } else {
            2
        }
    }

    /// `bbr_tso_segs_goal`.
    fn tso_segs_goal(&self) -> u64 {
        let bytes = (self.pacing_rate >> 10).min(TSO_GOAL_MAX_BYTES);
        (bytes / self.mss.max(1)).max(self.min_tso()).min(0x7f)
    }

    /// `bbr_save_cwnd`.
    fn save_cwnd(&mut self, cwnd: u64) {
        if self.prev_ca_state.is_none_or(|s| rank(s) < rank(CaState::Recovery))
            && self.mode != Mode::ProbeRtt
        {
            self.prior_cwnd = cwnd; // "this cwnd is good enough"
        } else {
            // "loss recovery or BBR_PROBE_RTT have temporarily cut cwnd"
            self.prior_cwnd = self.prior_cwnd.max(cwnd);
        }
    }

    /// `bbr_bdp`: ceil(bw · min_rtt · gain), TCP_INIT_CWND before an RTT sample.
    fn bdp(&self, bw: u64, gain: u64) -> u64 {
        if self.min_rtt_us == u32::MAX as u64 {
            return TCP_INIT_CWND;
        }
        let w = bw as u128 * self.min_rtt_us as u128;
        // "round the value up to avoid a negative feedback loop"
        ((w * gain as u128) >> BBR_SCALE).div_ceil(BW_UNIT as u128) as u64
    }

    /// `bbr_quantization_budget`.
    fn quantization_budget(&self, cwnd: u64) -> u64 {
        let mut cwnd = cwnd + 3 * self.tso_segs_goal();
        cwnd = (cwnd + 1) & !1;
        if self.mode == Mode::ProbeBw && self.cycle_idx == 0 {
            cwnd += 2;
        }
        cwnd
    }

    /// `bbr_inflight`.
    fn inflight(&self, bw: u64, gain: u64) -> u64 {
        self.quantization_budget(self.bdp(bw, gain))
    }

    /// `bbr_packets_in_net_at_edt`.
    fn packets_in_net_at_edt(&self, tp: &TcpView, inflight_now: u64) -> u64 {
        let now = tp.now;
        let edt = tp.wstamp.max(now);
        let interval_us = us(edt - now);
        let interval_delivered = ((self.bw() as u128 * interval_us as u128) >> BW_SCALE) as u64;
        let mut inflight_at_edt = inflight_now;
        if self.pacing_gain > BBR_UNIT {
            inflight_at_edt += self.tso_segs_goal(); // "include EDT skb"
        }
        inflight_at_edt.saturating_sub(interval_delivered)
    }

    /// `bbr_ack_aggregation_cwnd`.
    fn ack_aggregation_cwnd(&self) -> u64 {
        if EXTRA_ACKED_GAIN > 0 && self.full_bw_reached {
            let max_aggr_cwnd = self.bw() * EXTRA_ACKED_MAX_US / BW_UNIT;
            let aggr_cwnd = (EXTRA_ACKED_GAIN * self.extra_acked()) >> BBR_SCALE;
            aggr_cwnd.min(max_aggr_cwnd)
        } else {
            0
        }
    }

    /// `bbr_set_cwnd_to_recover_or_restore`: Some(cwnd) when packet
    /// conservation decides it.
    fn set_cwnd_to_recover_or_restore(
        &mut self,
        tp: &TcpView,
        rs: &RateSample,
        acked: u64,
        cwnd: &mut u64,
    ) -> bool {
        let prev_state = self.prev_ca_state.unwrap_or(CaState::Open);
        let state = tp.ca_state;
        let mut c = *cwnd;
        // "An ACK for P pkts should release at most 2*P packets. We do this in
        // two steps. First, here we deduct the number of lost packets."
        if rs.losses > 0 {
            c = c.saturating_sub(rs.losses).max(1);
        }
        if state == CaState::Recovery && prev_state != CaState::Recovery {
            // "Starting 1st round of Recovery, so do packet conservation."
            self.packet_conservation = true;
            self.next_rtt_delivered = tp.delivered; // "start round now"
            c = tp.in_flight + acked;
        } else if rank(prev_state) >= rank(CaState::Recovery)
            && rank(state) < rank(CaState::Recovery)
        {
            // "Exiting loss recovery; restore cwnd saved before recovery."
            c = c.max(self.prior_cwnd);
            self.packet_conservation = false;
        }
        self.prev_ca_state = Some(state);
        if self.packet_conservation {
            *cwnd = c.max(tp.in_flight + acked);
            return true;
        }
        *cwnd = c;
        false
    }

    /// `bbr_set_cwnd`: packets.
    fn set_cwnd(&mut self, st: &mut CcState, tp: &TcpView, rs: &RateSample, bw: u64, gain: u64) {
        let acked = rs.acked_sacked;
        let mss = st.mss.max(1);
        let mut cwnd = st.cwnd / mss;
        'done: {
            if acked == 0 {
                break 'done; // "no packet fully ACKed; just apply caps"
            }
            if self.set_cwnd_to_recover_or_restore(tp, rs, acked, &mut cwnd) {
                break 'done;
            }
            let mut target = self.bdp(bw, gain);
            // "Increment the cwnd to account for excess ACKed data that seems
            // due to aggregation (of data and/or ACKs) visible in the ACK stream."
            target += self.ack_aggregation_cwnd();
            target = self.quantization_budget(target);
            if self.full_bw_reached {
                cwnd = (cwnd + acked).min(target); // "only cut cwnd if we filled the pipe"
            } else if cwnd < target || tp.delivered < TCP_INIT_CWND {
                cwnd += acked;
            }
            cwnd = cwnd.max(CWND_MIN_TARGET);
        }
        cwnd = cwnd.min(st.max_cwnd / mss); // snd_cwnd_clamp
        if self.mode == Mode::ProbeRtt {
            cwnd = cwnd.min(CWND_MIN_TARGET); // "drain queue, refresh min_rtt"
        }
        st.cwnd = cwnd * mss;
    }

    /// `bbr_is_next_cycle_phase`.
    fn is_next_cycle_phase(&self, tp: &TcpView, rs: &RateSample) -> bool {
        let is_full_length = us(tp.delivered_mstamp).saturating_sub(self.cycle_mstamp) > self.min_rtt_us;
        if self.pacing_gain == BBR_UNIT {
            return is_full_length; // "just use wall clock time"
        }
        let inflight = self.packets_in_net_at_edt(tp, rs.prior_in_flight);
        let bw = self.max_bw();
        if self.pacing_gain > BBR_UNIT {
            return is_full_length
                && (rs.losses > 0 || inflight >= self.inflight(bw, self.pacing_gain));
        }
        is_full_length || inflight <= self.inflight(bw, BBR_UNIT)
    }

    /// `bbr_advance_cycle_phase`.
    fn advance_cycle_phase(&mut self, tp: &TcpView) {
        self.cycle_idx = (self.cycle_idx + 1) & (CYCLE_LEN - 1);
        self.cycle_mstamp = us(tp.delivered_mstamp);
    }

    /// `bbr_update_cycle_phase`.
    fn update_cycle_phase(&mut self, tp: &TcpView, rs: &RateSample) {
        if self.mode == Mode::ProbeBw && self.is_next_cycle_phase(tp, rs) {
            self.advance_cycle_phase(tp);
        }
    }

    /// `bbr_reset_probe_bw_mode`: a random phase other than 1 (the 3/4 drain).
    fn reset_probe_bw_mode(&mut self, tp: &TcpView) {
        self.mode = Mode::ProbeBw;
        self.cycle_idx = CYCLE_LEN - 1 - self.prandom_max(CYCLE_RAND) as u32;
        self.advance_cycle_phase(tp); // "flip to next phase of gain cycle"
    }

    /// `bbr_reset_mode`.
    fn reset_mode(&mut self, tp: &TcpView) {
        if !self.full_bw_reached {
            self.mode = Mode::Startup;
        } else {
            self.reset_probe_bw_mode(tp);
        }
    }

    /// `bbr_reset_lt_bw_sampling_interval`.
    fn reset_lt_bw_sampling_interval(&mut self, tp: &TcpView) {
        self.lt_last_stamp = us(tp.delivered_mstamp) / 1_000;
        self.lt_last_delivered = tp.delivered;
        self.lt_last_lost = tp.lost;
        self.lt_rtt_cnt = 0;
    }

    /// `bbr_reset_lt_bw_sampling`.
    fn reset_lt_bw_sampling(&mut self, tp: &TcpView) {
        self.lt_bw = 0;
        self.lt_use_bw = false;
        self.lt_is_sampling = false;
        self.reset_lt_bw_sampling_interval(tp);
    }

    /// `bbr_lt_bw_interval_done`: two consistent lossy intervals mean a policer.
    fn lt_bw_interval_done(&mut self, tp: &TcpView, bw: u64) {
        if self.lt_bw > 0 {
            let diff = bw.abs_diff(self.lt_bw);
            if diff * BBR_UNIT <= LT_BW_RATIO * self.lt_bw
                || self.rate_bytes_per_sec(diff, BBR_UNIT) <= LT_BW_DIFF
            {
                // "All criteria are met; estimate we're policed."
                self.lt_bw = (bw + self.lt_bw) >> 1;
                self.lt_use_bw = true;
                self.pacing_gain = BBR_UNIT; // "try to avoid drops"
                self.lt_rtt_cnt = 0;
                return;
            }
        }
        self.lt_bw = bw;
        self.reset_lt_bw_sampling_interval(tp);
    }

    /// `bbr_lt_bw_sampling`: the long-term (token-bucket policer) estimator.
    fn lt_bw_sampling(&mut self, tp: &TcpView, rs: &RateSample) {
        if self.lt_use_bw {
            if self.mode == Mode::ProbeBw && self.round_start {
                self.lt_rtt_cnt += 1;
                if self.lt_rtt_cnt >= LT_BW_MAX_RTTS {
                    self.reset_lt_bw_sampling(tp); // "stop using lt_bw"
                    self.reset_probe_bw_mode(tp); // "restart gain cycling"
                }
            }
            return;
        }
        // "Wait for the first loss before sampling, to let the policer exhaust
        // its tokens and estimate the steady-state rate allowed by the policer."
        if !self.lt_is_sampling {
            if rs.losses == 0 {
                return;
            }
            self.reset_lt_bw_sampling_interval(tp);
            self.lt_is_sampling = true;
        }
        // "To avoid underestimates, reset sampling if we run out of data."
        if rs.is_app_limited {
            return self.reset_lt_bw_sampling(tp);
        }
        if self.round_start {
            self.lt_rtt_cnt += 1;
        }
        if self.lt_rtt_cnt < LT_INTVL_MIN_RTTS {
            return;
        }
        if self.lt_rtt_cnt > 4 * LT_INTVL_MIN_RTTS {
            return self.reset_lt_bw_sampling(tp); // "interval is too long"
        }
        if rs.losses == 0 {
            return;
        }
        let lost = tp.lost - self.lt_last_lost;
        let delivered = tp.delivered - self.lt_last_delivered;
        // "Is loss rate (lost/delivered) >= lt_loss_thresh? If not, wait."
        if delivered == 0 || (lost << BBR_SCALE) < LT_LOSS_THRESH * delivered {
            return;
        }
        let t = (us(tp.delivered_mstamp) / 1_000) as i64 - self.lt_last_stamp as i64;
        if t < 1 {
            return; // "interval is less than one ms, so wait"
        }
        if t as u64 >= u32::MAX as u64 / 1_000 {
            return self.reset_lt_bw_sampling(tp);
        }
        let bw = delivered * BW_UNIT / (t as u64 * 1_000);
        self.lt_bw_interval_done(tp, bw);
    }

    /// `bbr_update_bw`: rounds and the windowed max-bandwidth filter.
    fn update_bw(&mut self, tp: &TcpView, rs: &RateSample) {
        self.round_start = false;
        let (Some(delivered), Some(interval)) = (rs.delivered, rs.interval) else {
            return; // "Not a valid observation"
        };
        let interval_us = us(interval);
        if interval_us == 0 {
            return;
        }
        // "See if we've reached the next RTT"
        if rs.prior_delivered >= self.next_rtt_delivered {
            self.next_rtt_delivered = tp.delivered;
            self.rtt_cnt += 1;
            self.round_start = true;
            self.packet_conservation = false;
        }
        self.lt_bw_sampling(tp, rs);
        let bw = delivered * BW_UNIT / interval_us;
        // "we filter out app-limited samples unless they describe the path bw
        // at least as well as our bw model."
        if !rs.is_app_limited || bw >= self.max_bw() {
            self.bw.running_max(BW_RTTS, self.rtt_cnt, bw);
        }
    }

    /// `bbr_update_ack_aggregation`: the windowed max of data ACKed beyond
    /// bw · interval (extra_acked).
    fn update_ack_aggregation(&mut self, st: &CcState, tp: &TcpView, rs: &RateSample) {
        if EXTRA_ACKED_GAIN == 0
            || rs.acked_sacked == 0
            || rs.delivered.is_none()
            || rs.interval.is_none_or(|i| us(i) == 0)
        {
            return;
        }
        if self.round_start {
            self.extra_acked_win_rtts = (self.extra_acked_win_rtts + 1).min(0x1f);
            if self.extra_acked_win_rtts >= EXTRA_ACKED_WIN_RTTS {
                self.extra_acked_win_rtts = 0;
                self.extra_acked_win_idx = 1 - self.extra_acked_win_idx;
                self.extra_acked[self.extra_acked_win_idx] = 0;
            }
        }
        // "Compute how many packets we expected to be delivered over epoch."
        let epoch_us = us(tp.delivered_mstamp).saturating_sub(self.ack_epoch_mstamp);
        let mut expected_acked = self.bw() * epoch_us / BW_UNIT;
        // "Reset the aggregation epoch if ACK rate is below expected rate or
        // significantly large no. of ack received since epoch."
        if self.ack_epoch_acked <= expected_acked
            || self.ack_epoch_acked + rs.acked_sacked >= ACK_EPOCH_ACKED_RESET_THRESH
        {
            self.ack_epoch_acked = 0;
            self.ack_epoch_mstamp = us(tp.delivered_mstamp);
            expected_acked = 0;
        }
        self.ack_epoch_acked = (self.ack_epoch_acked + rs.acked_sacked).min(0xfffff);
        let extra = (self.ack_epoch_acked - expected_acked).min(st.cwnd / st.mss.max(1));
        if extra > self.extra_acked[self.extra_acked_win_idx] {
            self.extra_acked[self.extra_acked_win_idx] = extra;
        }
    }

    /// `bbr_check_full_bw_reached`: three rounds without 25 % growth.
    fn check_full_bw_reached(&mut self, rs: &RateSample) {
        if self.full_bw_reached || !self.round_start || rs.is_app_limited {
            return;
        }
        let bw_thresh = (self.full_bw * FULL_BW_THRESH) >> BBR_SCALE;
        if self.max_bw() >= bw_thresh {
            self.full_bw = self.max_bw();
            self.full_bw_cnt = 0;
            return;
        }
        self.full_bw_cnt += 1;
        self.full_bw_reached = self.full_bw_cnt >= FULL_BW_CNT;
    }

    /// `bbr_check_drain`: STARTUP → DRAIN → PROBE_BW.
    fn check_drain(&mut self, st: &mut CcState, tp: &TcpView) {
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain; // "drain queue we created"
            st.ssthresh = self.inflight(self.max_bw(), BBR_UNIT) * st.mss;
        }
        if self.mode == Mode::Drain
            && self.packets_in_net_at_edt(tp, tp.in_flight) <= self.inflight(self.max_bw(), BBR_UNIT)
        {
            self.reset_probe_bw_mode(tp); // "we estimate queue is drained"
        }
    }

    /// `bbr_check_probe_rtt_done`.
    fn check_probe_rtt_done(&mut self, st: &mut CcState, tp: &TcpView) {
        if !(self.probe_rtt_done_stamp != 0 && jiffies(tp.now) > self.probe_rtt_done_stamp) {
            return;
        }
        self.min_rtt_stamp = jiffies(tp.now); // "wait a while until PROBE_RTT"
        let mss = st.mss.max(1);
        st.cwnd = (st.cwnd / mss).max(self.prior_cwnd) * mss;
        self.reset_mode(tp);
    }

    /// `bbr_update_min_rtt`: the 10 s min-RTT filter and PROBE_RTT.
    fn update_min_rtt(&mut self, st: &mut CcState, tp: &mut TcpView, rs: &RateSample) {
        let now_j = jiffies(tp.now);
        let filter_expired = now_j > self.min_rtt_stamp + MIN_RTT_WIN_SEC * HZ;
        if let Some(rtt) = rs.rtt {
            let rtt_us = us(rtt);
            if rtt_us <= self.min_rtt_us || (filter_expired && !rs.is_ack_delayed) {
                self.min_rtt_us = rtt_us;
                self.min_rtt_stamp = now_j;
            }
        }
        if PROBE_RTT_MODE_MS > 0 && filter_expired && !self.idle_restart && self.mode != Mode::ProbeRtt {
            self.mode = Mode::ProbeRtt; // "dip, drain queue"
            self.save_cwnd(st.cwnd / st.mss.max(1)); // "note cwnd so we can restore it"
            self.probe_rtt_done_stamp = 0;
        }
        if self.mode == Mode::ProbeRtt {
            // "Ignore low rate samples during this mode."
            tp.app_limited = (tp.delivered + tp.in_flight).max(1);
            // "Maintain min packets in flight for max(200 ms, 1 round)."
            if self.probe_rtt_done_stamp == 0 && tp.in_flight <= CWND_MIN_TARGET {
                self.probe_rtt_done_stamp = now_j + (PROBE_RTT_MODE_MS * HZ).div_ceil(1_000);
                self.probe_rtt_round_done = false;
                self.next_rtt_delivered = tp.delivered;
            } else if self.probe_rtt_done_stamp != 0 {
                if self.round_start {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done {
                    self.check_probe_rtt_done(st, tp);
                }
            }
        }
        // "Restart after idle ends only once we process a new S/ACK for data"
        if rs.delivered.is_some_and(|d| d > 0) {
            self.idle_restart = false;
        }
    }

    /// `bbr_update_gains`.
    fn update_gains(&mut self) {
        (self.pacing_gain, self.cwnd_gain) = match self.mode {
            Mode::Startup => (HIGH_GAIN, HIGH_GAIN),
            Mode::Drain => (DRAIN_GAIN, HIGH_GAIN),
            Mode::ProbeBw => (
                if self.lt_use_bw {
                    BBR_UNIT
                } else {
                    PACING_GAIN[self.cycle_idx as usize]
                },
                CWND_GAIN,
            ),
            Mode::ProbeRtt => (BBR_UNIT, BBR_UNIT),
        };
    }

    /// `bbr_update_model`.
    fn update_model(&mut self, st: &mut CcState, tp: &mut TcpView, rs: &RateSample) {
        self.update_bw(tp, rs);
        self.update_ack_aggregation(st, tp, rs);
        self.update_cycle_phase(tp, rs);
        self.check_full_bw_reached(rs);
        self.check_drain(st, tp);
        self.update_min_rtt(st, tp, rs);
        self.update_gains();
    }
}

/// The order of `enum tcp_ca_state` (Open < Disorder < CWR < Recovery < Loss).
fn rank(s: CaState) -> u8 {
    match s {
        CaState::Open => 0,
        CaState::Disorder => 1,
        CaState::Cwr => 2,
        CaState::Recovery => 3,
        CaState::Loss => 4,
    }
}

impl CongestionControl for Bbr {
    fn name(&self) -> &'static str {
        "bbr"
    }

    /// Not called: BBR sets cwnd in `cong_control` (Linux calls no
    /// `.cong_avoid` for a `.cong_control` controller).
    fn on_ack(&mut self, _st: &mut CcState, _ack: &AckInfo) {}

    /// `bbr_ssthresh`: save cwnd, keep ssthresh.
    fn ssthresh_on_loss(&mut self, st: &CcState, _flight: u64, _now: Time) -> u64 {
        self.save_cwnd(st.cwnd / st.mss.max(1));
        st.ssthresh
    }

    /// `tcp_end_cwnd_reduction` returns early for `.cong_control`: cwnd stays.
    fn on_recovery_exit(&mut self, _st: &mut CcState, _now: Time) {}

    /// `bbr_undo_cwnd`: "spurious slow-down; reset full pipe detection", and
    /// `bbr_reset_lt_bw_sampling` (its interval stamps are taken anew when
    /// sampling restarts at the next loss, so they are left here).
    fn undo(&mut self) {
        self.full_bw = 0;
        self.full_bw_cnt = 0;
        self.lt_bw = 0;
        self.lt_use_bw = false;
        self.lt_is_sampling = false;
        self.lt_rtt_cnt = 0;
    }

    fn set_seed(&mut self, seed: u64) {
        self.rng = seed;
    }

    /// `bbr_init`, at `tcp_init_transfer`.
    fn init(&mut self, st: &mut CcState, tp: &mut TcpView) {
        self.mss = st.mss;
        self.prior_cwnd = 0;
        st.ssthresh = u64::MAX / 4; // TCP_INFINITE_SSTHRESH
        self.rtt_cnt = 0;
        self.next_rtt_delivered = 0;
        self.prev_ca_state = Some(CaState::Open);
        self.packet_conservation = false;
        self.probe_rtt_done_stamp = 0;
        self.probe_rtt_round_done = false;
        self.min_rtt_us = tp.min_rtt.map_or(u32::MAX as u64, us);
        self.min_rtt_stamp = jiffies(tp.now);
        self.bw.reset(self.rtt_cnt, 0);
        self.has_seen_rtt = false;
        self.init_pacing_rate_from_rtt(st.cwnd / st.mss.max(1), tp.srtt);
        self.round_start = false;
        self.idle_restart = false;
        self.full_bw_reached = false;
        self.full_bw = 0;
        self.full_bw_cnt = 0;
        self.cycle_mstamp = 0;
        self.cycle_idx = 0;
        self.reset_lt_bw_sampling(tp);
        self.mode = Mode::Startup;
        self.update_gains();
        self.ack_epoch_mstamp = us(tp.now);
        self.ack_epoch_acked = 0;
        self.extra_acked_win_rtts = 0;
        self.extra_acked_win_idx = 0;
        self.extra_acked = [0, 0];
    }

    /// `bbr_main`.
    fn cong_control(&mut self, st: &mut CcState, tp: &mut TcpView, rs: &RateSample) {
        self.mss = st.mss;
        self.update_model(st, tp, rs);
        let bw = self.bw();
        self.set_pacing_rate(bw, self.pacing_gain, st.cwnd / st.mss.max(1), tp.srtt);
        self.set_cwnd(st, tp, rs, bw, self.cwnd_gain);
    }

    /// `bbr_set_state(TCP_CA_Loss)`: "treat RTO like end of a round".
    fn on_loss_state(&mut self, _st: &mut CcState, tp: &mut TcpView) {
        self.prev_ca_state = Some(CaState::Loss);
        self.full_bw = 0;
        self.round_start = true;
        let rs = RateSample {
            losses: 1,
            ..RateSample::default()
        };
        self.lt_bw_sampling(tp, &rs);
    }

    /// `bbr_cwnd_event(CA_EVENT_TX_START)`: restarting from idle.
    fn on_tx_start(&mut self, st: &mut CcState, tp: &mut TcpView) {
        if tp.app_limited == 0 {
            return;
        }
        self.idle_restart = true;
        self.ack_epoch_mstamp = us(tp.now);
        self.ack_epoch_acked = 0;
        // "Avoid pointless buffer overflows: pace at est. bw if we don't need
        // more speed (we're restarting from idle and app-limited)."
        if self.mode == Mode::ProbeBw {
            self.set_pacing_rate(self.bw(), BBR_UNIT, st.cwnd / st.mss.max(1), tp.srtt);
        } else if self.mode == Mode::ProbeRtt {
            self.check_probe_rtt_done(st, tp);
        }
    }

    fn pacing_rate(&self) -> Option<u64> {
        Some(self.pacing_rate)
    }

    fn min_tso_segs(&self) -> u32 {
        self.min_tso() as u32
    }

    /// `bbr_sndbuf_expand`: "Provision 3 * cwnd since BBR may slow-start even
    /// during recovery."
    fn sndbuf_expand(&self) -> u64 {
        3
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    const MS: Time = 1_000_000;
    const MSS: u64 = 1000;

    /// A connection at 1 packet per ms (bw 2^24/1000 in BBR units), RTT 100 ms.
    struct Harness {
        bbr: Bbr,
        st: CcState,
        tp: TcpView,
    }

    impl Harness {
        fn new() -> Harness {
            let mut st = CcState {
                cwnd: 10 * MSS,
                ssthresh: u64::MAX / 4,
                mss: MSS,
                max_cwnd: u64::MAX / 4,
                ca_at_ssthresh: true,
            };
            let mut tp = TcpView {
                now: 100 * MS,
                ca_state: CaState::Open,
                in_flight: 0,
                delivered: 1,
                delivered_mstamp: 100 * MS,
                lost: 0,
                srtt: 100 * MS,
                min_rtt: Some(100 * MS),
                wstamp: 0,
                app_limited: 0,
            };
            let mut bbr = Bbr::default();
            bbr.set_seed(1);
            bbr.init(&mut st, &mut tp);
            Harness { bbr, st, tp }
        }

        /// One ACK delivering `acked` packets; the sample covers `d` packets
        /// over `interval_ms` and starts a round when `round` (its
        /// prior_delivered reaches the round's end).
        fn ack(&mut self, acked: u64, d: u64, interval_ms: u64, in_flight: u64, round: bool) {
            self.tp.now += MS;
            self.tp.delivered += acked;
            self.tp.delivered_mstamp = self.tp.now;
            self.tp.in_flight = in_flight;
            let prior = if round {
                self.bbr.next_rtt_delivered
            } else {
                self.bbr.next_rtt_delivered.saturating_sub(1)
            };
            let rs = RateSample {
                prior_mstamp: Some(self.tp.now - interval_ms * MS),
                prior_delivered: prior,
                delivered: Some(d),
                interval: Some(interval_ms * MS),
                rtt: Some(100 * MS),
                acked_sacked: acked,
                prior_in_flight: in_flight,
                ..RateSample::default()
            };
            self.bbr.cong_control(&mut self.st, &mut self.tp, &rs);
        }

        fn cwnd(&self) -> u64 {
            self.st.cwnd / MSS
        }
    }

    /// bbr_init: STARTUP at high gain; the pacing rate is high_gain · cwnd /
    /// SRTT with the 1 % margin (bbr_init_pacing_rate_from_rtt,
    /// bbr_rate_bytes_per_sec).
    #[test]
    fn init_startup_and_pacing_rate() {
        let h = Harness::new();
        assert_eq!(h.bbr.mode, Mode::Startup);
        assert_eq!((h.bbr.pacing_gain, h.bbr.cwnd_gain), (HIGH_GAIN, HIGH_GAIN));
        assert_eq!(HIGH_GAIN, 739);
        assert_eq!(DRAIN_GAIN, 88);
        // 10 packets / 100 ms = 100 kB/s, × 739/256 × 0.99 ≈ 285.8 kB/s.
        let r = h.bbr.pacing_rate as f64;
        let want = 100_000.0 * 739.0 / 256.0 * 0.99;
        assert!((r / want - 1.0).abs() < 1e-3, "{r}"); // integer truncation only
        assert_eq!(h.bbr.min_rtt_us, 100_000);
        assert_eq!(h.st.ssthresh, u64::MAX / 4);
    }

    /// bbr_check_full_bw_reached and bbr_check_drain: three rounds without 25 %
    /// bandwidth growth end STARTUP; DRAIN sets ssthresh to the BDP-based
    /// inflight and ends once inflight has fallen to it (PROBE_BW).
    #[test]
    fn startup_drain_probe_bw() {
        let mut h = Harness::new();
        // Growing rounds: 10, 20, 40 packets per 100 ms.
        for d in [10, 20, 40] {
            h.ack(1, d, 100, 20, true);
            assert_eq!(h.bbr.mode, Mode::Startup);
        }
        assert_eq!(h.bbr.full_bw_cnt, 0);
        // Then the bandwidth stays at 100 packets per 100 ms (1 per ms).
        h.ack(1, 100, 100, 200, true);
        for k in 1..=3 {
            assert!(!h.bbr.full_bw_reached);
            h.ack(1, 100, 100, 200, true);
            assert_eq!(h.bbr.full_bw_cnt, k);
        }
        assert!(h.bbr.full_bw_reached);
        assert_eq!(h.bbr.mode, Mode::Drain, "inflight 200 > BDP");
        assert_eq!(h.bbr.pacing_gain, DRAIN_GAIN);
        // ssthresh = bbr_inflight(max_bw, 1): BDP 100 + 3·tso goal (2) rounded up even.
        assert_eq!(h.st.ssthresh, 106 * MSS);
        // A non-round ACK with in-flight down to the BDP: PROBE_BW.
        h.ack(1, 100, 100, 100, false);
        assert_eq!(h.bbr.mode, Mode::ProbeBw);
        assert_ne!(h.bbr.cycle_idx, 1, "never starts in the 3/4 phase... after the flip");
        assert_eq!(h.bbr.cwnd_gain, CWND_GAIN);
    }

    fn in_probe_bw() -> Harness {
        let mut h = Harness::new();
        for _ in 0..5 {
            h.ack(1, 100, 100, 100, true);
        }
        h.ack(1, 100, 100, 100, false);
        assert_eq!(h.bbr.mode, Mode::ProbeBw);
        // A cwnd grown to the PROBE_BW target (2·BDP and the budget).
        h.st.cwnd = 200 * MSS;
        h
    }

    /// bbr_update_cycle_phase: a 1.0 phase lasts min_rtt; the 1.25 phase also
    /// needs inflight to reach 1.25·BDP (or a loss); the 0.75 phase ends early
    /// once inflight is down to the BDP.
    #[test]
    fn gain_cycle() {
        let mut h = in_probe_bw();
        h.bbr.cycle_idx = 7;
        h.bbr.advance_cycle_phase(&h.tp);
        h.bbr.update_gains();
        assert_eq!((h.bbr.cycle_idx, h.bbr.pacing_gain), (0, 320));
        // Full length (100 ms) passes but inflight stays at the BDP: no advance.
        for _ in 0..120 {
            h.ack(1, 100, 100, 100, false);
        }
        assert_eq!(h.bbr.cycle_idx, 0);
        // Inflight reaches bbr_inflight(bw, 1.25) = 125 + 6 + 2 (+2 in phase 0).
        h.ack(1, 100, 100, 134, false);
        assert_eq!((h.bbr.cycle_idx, h.bbr.pacing_gain), (1, 192));
        // The 3/4 phase ends at once when inflight is down to the BDP.
        h.ack(1, 100, 100, 150, false);
        assert_eq!(h.bbr.cycle_idx, 1);
        h.ack(1, 100, 100, 106, false);
        assert_eq!(h.bbr.cycle_idx, 2);
        // Unit phases: one min_rtt each.
        for _ in 0..100 {
            h.ack(1, 100, 100, 106, false);
        }
        assert_eq!(h.bbr.cycle_idx, 2);
        h.ack(1, 100, 100, 106, false);
        assert_eq!(h.bbr.cycle_idx, 3);
    }

    /// bbr_update_min_rtt: the min-RTT estimate expires after 10 s, PROBE_RTT
    /// caps cwnd at 4 packets for 200 ms and one round, then cwnd is restored
    /// (bbr_check_probe_rtt_done) and PROBE_BW resumes.
    #[test]
    fn probe_rtt() {
        let mut h = in_probe_bw();
        let cwnd = h.cwnd();
        h.tp.now += 10_100 * MS; // past the 10 s window (in jiffies)
        h.ack(1, 100, 100, 100, false);
        assert_eq!(h.bbr.mode, Mode::ProbeRtt);
        assert_eq!(h.cwnd(), 4);
        assert_eq!(h.bbr.prior_cwnd, cwnd);
        assert_ne!(h.tp.app_limited, 0, "PROBE_RTT marks samples app-limited");
        // Inflight falls to 4: the 200 ms start.
        h.ack(1, 100, 100, 4, false);
        assert_ne!(h.bbr.probe_rtt_done_stamp, 0);
        for _ in 0..150 {
            h.ack(1, 100, 100, 4, false);
        }
        h.ack(1, 100, 100, 4, true); // the round ends, 200 ms not yet over
        assert_eq!(h.bbr.mode, Mode::ProbeRtt);
        for _ in 0..60 {
            h.ack(1, 100, 100, 4, false);
        }
        assert_eq!(h.bbr.mode, Mode::ProbeBw);
        assert!(h.cwnd() >= cwnd, "cwnd restored: {}", h.cwnd());
    }

    /// bbr_set_cwnd_to_recover_or_restore: the first round of Recovery keeps
    /// in-flight + acked (packet conservation); leaving recovery restores the
    /// cwnd saved by bbr_ssthresh.
    #[test]
    fn recovery_conservation_and_restore() {
        let mut h = in_probe_bw();
        let cwnd = h.cwnd();
        let ss = h.bbr.ssthresh_on_loss(&h.st, 0, 0);
        assert_eq!(ss, h.st.ssthresh, "bbr_ssthresh keeps ssthresh");
        assert_eq!(h.bbr.prior_cwnd, cwnd);
        h.tp.ca_state = CaState::Recovery;
        h.ack(2, 100, 100, 50, false);
        assert_eq!(h.cwnd(), 52);
        assert!(h.bbr.packet_conservation);
        // Losses are deducted; conservation still holds in-flight + acked.
        h.tp.now += MS;
        let rs = RateSample {
            delivered: None,
            acked_sacked: 1,
            losses: 10,
            ..RateSample::default()
        };
        h.tp.in_flight = 40;
        h.bbr.cong_control(&mut h.st, &mut h.tp, &rs);
        assert_eq!(h.cwnd(), 42);
        // Recovery ends: cwnd back to at least the saved one.
        h.tp.ca_state = CaState::Open;
        h.ack(1, 100, 100, 40, false);
        assert!(h.cwnd() >= cwnd);
        assert!(!h.bbr.packet_conservation);
    }

    /// bbr_set_state(TCP_CA_Loss): an RTO counts as a round end and resets
    /// full-bandwidth tracking; leaving Loss restores the saved cwnd.
    #[test]
    fn rto_loss_state() {
        let mut h = in_probe_bw();
        let cwnd = h.cwnd();
        h.bbr.ssthresh_on_loss(&h.st, 0, 0);
        h.st.cwnd = MSS; // tcp_enter_loss: in flight + 1
        h.tp.ca_state = CaState::Loss;
        h.bbr.on_loss_state(&mut h.st, &mut h.tp);
        assert_eq!(h.bbr.prev_ca_state, Some(CaState::Loss));
        assert!(h.bbr.round_start);
        assert_eq!(h.bbr.full_bw, 0);
        assert!(h.bbr.lt_is_sampling, "the RTO's loss starts long-term sampling");
        h.ack(1, 100, 100, 1, false);
        assert!(h.cwnd() < 10, "cwnd grows by acked in Loss: {}", h.cwnd());
        h.tp.ca_state = CaState::Open;
        h.ack(1, 100, 100, 1, false);
        assert!(h.cwnd() >= cwnd);
    }

    /// bbr_lt_bw_sampling: two lossy intervals (≥ 20 % loss) with the same
    /// delivery rate mean a policer: BBR uses their average at gain 1, for 48
    /// rounds at most.
    #[test]
    fn long_term_policer_bw() {
        let mut h = in_probe_bw();
        let lossy_interval = |h: &mut Harness| {
            // 4 rounds of 100 ms, 100 packets delivered and 30 lost per round.
            for _ in 0..4 {
                for k in 0..100 {
                    h.tp.lost += if k < 30 { 1 } else { 0 };
                    let round = k == 0;
                    h.tp.now += MS;
                    h.tp.delivered += 1;
                    h.tp.delivered_mstamp = h.tp.now;
                    let rs = RateSample {
                        prior_mstamp: Some(h.tp.now - 100 * MS),
                        prior_delivered: if round { h.bbr.next_rtt_delivered } else { 0 },
                        delivered: Some(100),
                        interval: Some(100 * MS),
                        acked_sacked: 1,
                        losses: if k < 30 { 1 } else { 0 },
                        prior_in_flight: 100,
                        ..RateSample::default()
                    };
                    h.bbr.cong_control(&mut h.st, &mut h.tp, &rs);
                }
            }
        };
        lossy_interval(&mut h);
        assert!(h.bbr.lt_bw > 0 && !h.bbr.lt_use_bw, "first interval");
        lossy_interval(&mut h);
        assert!(h.bbr.lt_use_bw, "second consistent interval: policed");
        assert_eq!(h.bbr.pacing_gain, BBR_UNIT);
        assert_eq!(h.bbr.bw(), h.bbr.lt_bw);
        // 48 rounds later the long-term estimate is dropped.
        for _ in 0..48 {
            h.ack(1, 100, 100, 100, true);
        }
        assert!(!h.bbr.lt_use_bw);
    }

    /// bbr_update_ack_aggregation: data ACKed beyond bw · epoch becomes
    /// extra_acked and, once the pipe is full, extra cwnd (at most 100 ms of bw).
    #[test]
    fn ack_aggregation() {
        let mut h = in_probe_bw();
        let before = h.cwnd();
        // Silence for 20 ms, then 40 packets at once (20 expected).
        h.tp.now += 20 * MS;
        h.ack(1, 100, 100, 100, false);
        h.ack(40, 100, 100, 100, false);
        assert!(h.bbr.extra_acked() >= 19, "{}", h.bbr.extra_acked());
        assert_eq!(h.bbr.ack_aggregation_cwnd(), h.bbr.extra_acked());
        h.ack(1, 100, 100, 100, false);
        assert!(h.cwnd() > before, "{} > {before}", h.cwnd());
    }

    /// The windowed max filter (lib/win_minmax.c) forgets a maximum after its
    /// window (10 rounds) and keeps the best later samples.
    #[test]
    fn minmax_window() {
        let mut m = MinMax::default();
        m.reset(0, 100);
        m.running_max(10, 1, 50);
        m.running_max(10, 5, 70);
        assert_eq!(m.get(), 100);
        m.running_max(10, 11, 60);
        assert_eq!(m.get(), 70, "the round-0 maximum expired");
        m.running_max(10, 16, 10);
        assert_eq!(m.get(), 60);
        m.running_max(10, 17, 200);
        assert_eq!(m.get(), 200);
    }

    /// bbr_min_tso_segs: 1 below 1.2 Mbit/s, else 2; the TSO goal ~1 ms at the rate.
    #[test]
    fn tso_segs() {
        let mut b = Bbr {
            mss: 1448,
            ..Bbr::default()
        };
        b.pacing_rate = 100_000;
        assert_eq!(b.min_tso_segs(), 1);
        b.pacing_rate = 12_500_000;
        assert_eq!(b.min_tso_segs(), 2);
        assert_eq!(b.tso_segs_goal(), 8);
    }

    /// bbr_cwnd_event(CA_EVENT_TX_START) while app-limited: idle restart; in
    /// PROBE_BW the pacing rate drops to the estimate (gain 1).
    #[test]
    fn idle_restart() {
        let mut h = in_probe_bw();
        h.tp.app_limited = 0;
        h.bbr.on_tx_start(&mut h.st, &mut h.tp);
        assert!(!h.bbr.idle_restart, "not app-limited: nothing");
        h.tp.app_limited = 500;
        h.bbr.on_tx_start(&mut h.st, &mut h.tp);
        assert!(h.bbr.idle_restart);
        assert_eq!(h.bbr.pacing_rate, h.bbr.bw_to_pacing_rate(h.bbr.bw(), BBR_UNIT));
    }
}
