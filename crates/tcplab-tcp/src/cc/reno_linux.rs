//! Linux's Reno window arithmetic in whole packets (tcp_cong.c; `reno = "linux"`).
//!
//! Linux keeps `snd_cwnd` and `snd_ssthresh` as packet counts, and its Reno
//! (`tcp_reno_cong_avoid`, `tcp_reno_ssthresh`) never leaves whole packets:
//!
//! - **`tcp_reno_ssthresh`**: ssthresh = max(cwnd >> 1, 2) packets: half of
//!   an odd window rounds down (13 → 6).
//! - **`tcp_slow_start`**: cwnd = min(cwnd + acked, ssthresh) in packets; what
//!   the ACK acknowledged beyond ssthresh goes on to congestion avoidance.
//! - **`tcp_cong_avoid_ai`**: one packet per cwnd packets acknowledged, from
//!   the credit counter `snd_cwnd_cnt` (zeroed when a reduction starts,
//!   `tcp_init_cwnd_reduction`, and at a timeout, `tcp_enter_loss`).
//! - **What counts as acknowledged** (`tcp_cong_control(sk, ack,
//!   acked_sacked, ...)`): the packets the ACK newly delivered, the ones it
//!   newly SACKs included, on an ACK that advanced snd.una
//!   (`tcp_may_raise_cwnd`); the connection passes that as `AckInfo::acked`.
//!
//! RFC 5681's arithmetic (`reno.rs`) is in bytes: FlightSize/2, or cwnd/2 with
//! `ssthresh_from = "cwnd"`, can fall between whole segments (6.5 segments
//! after a slow start to 13), and every later halving and increase keeps the
//! fraction. A window that is not a whole number of segments sends one
//! segment fewer than its packet count says: 4343 bytes (2.999 segments) send
//! two segments where Linux's 3 packets send three.
//!
//! `cubic = "linux"` (`cubic.rs`, `cubic_linux.rs`) shares `tcp_slow_start`
//! and `tcp_cong_avoid_ai` from here.

use super::CcState;

/// `tp->snd_cwnd_cnt` and `tcp_cong_avoid_ai`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AiCredit {
    cnt: u64,
}

impl AiCredit {
    /// `tcp_cong_avoid_ai(tp, w, acked)`: the packets to add to cwnd for
    /// `acked` packets acknowledged, one per `w`.
    pub fn add(&mut self, w: u64, acked: u64) -> u64 {
        let w = w.max(1);
        let mut add = 0;
        // "If credits accumulated at a higher w, apply them gently now."
        if self.cnt >= w {
            self.cnt = 0;
            add += 1;
        }
        self.cnt += acked;
        if self.cnt >= w {
            let d = self.cnt / w;
            self.cnt -= d * w;
            add += d;
        }
        add
    }

    /// `tcp_init_cwnd_reduction` / `tcp_enter_loss`: snd_cwnd_cnt = 0.
    pub fn reset(&mut self) {
        self.cnt = 0;
    }
}

/// Bytes acknowledged as the whole packets Linux counts (`acked` of
/// `tcp_clean_rtx_queue`); the bytes short of a packet carry over.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PacketCount {
    frac: u64,
}

impl PacketCount {
    /// Add `bytes` acknowledged; the whole packets they complete.
    pub fn packets(&mut self, bytes: u64, mss: u64) -> u64 {
        let mss = mss.max(1);
        self.frac += bytes;
        let pkts = self.frac / mss;
        self.frac %= mss;
        pkts
    }
}

/// `tcp_slow_start` for `pkts` packets acknowledged (at most `abc_l` of them
/// count, the stack's `abc_l`): cwnd = min(cwnd + acked, ssthresh). Returns
/// the packets left over for congestion avoidance.
pub fn slow_start(st: &mut CcState, pkts: u64, abc_l: u64) -> u64 {
    let mss = st.mss.max(1);
    let n = pkts.min(abc_l);
    let new = (st.cwnd + n * mss).min(st.ssthresh).min(st.max_cwnd);
    let used = new.saturating_sub(st.cwnd).div_ceil(mss).min(n);
    st.cwnd = new;
    pkts - used
}

/// An ACK of `bytes` in whole packets (`acked` carries the rest over) through
/// `tcp_slow_start`: the packets left for congestion avoidance, or None when
/// the ACK is used up or slow start goes on. Slow start is Linux's
/// `tcp_in_slow_start()`, cwnd < ssthresh, whatever `ca_at_ssthresh` says: a
/// cwnd equal to ssthresh grows in congestion avoidance (with `cwnd <=
/// ssthresh` it would stay there, `tcp_slow_start` stopping at ssthresh).
pub fn after_slow_start(
    st: &mut CcState,
    acked: &mut PacketCount,
    bytes: u64,
    abc_l: u64,
) -> Option<u64> {
    let mut pkts = acked.packets(bytes, st.mss);
    if st.cwnd < st.ssthresh {
        // tcp_reno_cong_avoid: `acked = tcp_slow_start(tp, acked); if (!acked) return;`
        pkts = slow_start(st, pkts, abc_l);
        if pkts == 0 {
            return None;
        }
    }
    Some(pkts)
}

/// `tcp_reno_ssthresh`: max(cwnd >> 1, 2) packets, for a window of
/// `basis` bytes (cwnd, with `ssthresh_from = "cwnd"`); bytes.
pub fn reno_ssthresh(basis: u64, mss: u64) -> u64 {
    let mss = mss.max(1);
    ((basis / mss) >> 1).max(2) * mss
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ssthresh_halves_whole_packets() {
        assert_eq!(reno_ssthresh(13 * 1448, 1448), 6 * 1448);
        assert_eq!(reno_ssthresh(6 * 1448, 1448), 3 * 1448);
        assert_eq!(
            reno_ssthresh(3 * 1448, 1448),
            2 * 1448,
            "at least 2 packets"
        );
        // A byte short of 6 packets is 5 packets to Linux's packet count.
        assert_eq!(reno_ssthresh(6 * 1448 - 1, 1448), 2 * 1448);
    }

    #[test]
    fn ai_one_packet_per_window_with_carried_credit() {
        let mut c = AiCredit::default();
        assert_eq!(c.add(4, 3), 0);
        assert_eq!(c.add(4, 1), 1);
        assert_eq!(c.add(4, 9), 2, "a stretch ACK adds cnt / w");
        // 1 credit left; at a smaller window the credit that reached w is applied first.
        assert_eq!(c.add(2, 0), 0);
        assert_eq!(c.add(2, 1), 1);
        c.add(5, 4);
        c.reset();
        assert_eq!(c.add(5, 4), 0, "a reduction zeroes the credit");
    }

    #[test]
    fn slow_start_stops_at_ssthresh_and_hands_on_the_rest() {
        let mut st = CcState {
            cwnd: 4 * 1000,
            ssthresh: 5 * 1000,
            mss: 1000,
            max_cwnd: u64::MAX,
            ca_at_ssthresh: true,
        };
        assert_eq!(slow_start(&mut st, 2, 2), 1);
        assert_eq!(st.cwnd, 5000);
        let mut p = PacketCount::default();
        assert_eq!(p.packets(1500, 1000), 1);
        assert_eq!(p.packets(500, 1000), 1, "the half packet carried over");
    }

    /// cwnd == ssthresh is congestion avoidance to Linux even where tcplab's
    /// own rule (`ca_at_ssthresh = false`) would call it slow start.
    #[test]
    fn cwnd_at_ssthresh_goes_on_in_congestion_avoidance() {
        for ca_at_ssthresh in [false, true] {
            let mut st = CcState {
                cwnd: 5 * 1000,
                ssthresh: 5 * 1000,
                mss: 1000,
                max_cwnd: u64::MAX,
                ca_at_ssthresh,
            };
            let mut p = PacketCount::default();
            assert_eq!(after_slow_start(&mut st, &mut p, 2000, 2), Some(2));
            assert_eq!(st.cwnd, 5000);
        }
    }
}
