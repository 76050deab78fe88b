//! DCTCP (RFC 8257) as Linux's `net/ipv4/tcp_dctcp.c` runs it: Reno's
//! window growth, and a reduction in proportion to the extent of
//! congestion. The sender sends ECT(1) (the L4S identifier, RFC 9331, as
//! TCP Prague builds on DCTCP; Linux's DCTCP itself sends ECT(0)), the
//! receiver echoes each data segment's CE state (`ecn.rs`, scalable mode:
//! `dctcp_ece_ack_update()`), and once per round trip the sender updates
//!
//!   alpha = (1 − g)·alpha + g·F,
//!
//! F the fraction of the bytes acknowledged in that round trip by ACKs
//! carrying ECE (RFC 8257 §3.3; `dctcp_update_alpha()`, which counts
//! delivered packets), g = 1/16, alpha starting at 1
//! (`dctcp_alpha_on_init`). On ECE, at most once per window (the
//! connection's CWR state, `tcp_enter_cwr`), ssthresh = cwnd·(1 − alpha/2)
//! (§3.3; `dctcp_ssthresh()`); on loss cwnd halves as for Reno (§3.4;
//! `dctcp_react_to_loss()`). The connection negotiates ECN whatever the
//! flow's `ecn` says (`TCP_CONG_NEEDS_ECN`).

use super::hystart::HyStart;
use super::reno::Reno;
use super::CcEntry;
use super::{AckInfo, CcState, CongestionControl};
use crate::Time;

/// tcp_dctcp.c: DCTCP_MAX_ALPHA (alpha = 1 is 1024).
pub const MAX_ALPHA: u64 = 1024;
/// tcp_dctcp.c: dctcp_shift_g (g = 1/16).
const SHIFT_G: u32 = 4;

#[derive(Debug, Clone)]
pub struct Dctcp {
    reno: Reno,
    /// alpha in 1/1024.
    pub alpha: u64,
    /// The end of the current observation window (`next_seq`).
    next_seq: u64,
    /// Bytes acknowledged in the window, and of them by ECE ACKs.
    acked: u64,
    acked_ce: u64,
}

impl Default for Dctcp {
    fn default() -> Self {
        Dctcp {
            reno: Reno::default(),
            alpha: MAX_ALPHA,
            next_seq: 0,
            acked: 0,
            acked_ce: 0,
        }
    }
}

impl CongestionControl for Dctcp {
    fn name(&self) -> &'static str {
        "dctcp"
    }

    /// tcp_dctcp.c: .cong_avoid = tcp_reno_cong_avoid.
    fn on_ack(&mut self, st: &mut CcState, ack: &AckInfo) {
        self.reno.on_ack(st, ack);
    }

    /// dctcp_react_to_loss(): a loss halves the window.
    fn ssthresh_on_loss(&mut self, st: &CcState, flight: u64, now: Time) -> u64 {
        self.reno.ssthresh_on_loss(st, flight, now)
    }

    /// dctcp_ssthresh(): cwnd − cwnd·alpha/2, at least two segments.
    fn ssthresh_on_ece(&mut self, st: &CcState, _flight: u64, _now: Time) -> u64 {
        let cut = (st.cwnd * self.alpha) >> 11;
        (st.cwnd - cut).max(2 * st.mss)
    }

    /// dctcp_update_alpha(): count this ACK's bytes; at the end of a round
    /// trip (snd_una at or past `next_seq`) fold F into alpha and start the
    /// next window at snd_nxt (`dctcp_reset()`).
    fn on_ecn_ack(&mut self, acked: u64, ece: bool, snd_una: u64, snd_nxt: u64) {
        self.acked += acked;
        if ece {
            self.acked_ce += acked;
        }
        if snd_una < self.next_seq {
            return;
        }
        if self.acked > 0 {
            // alpha = (1 − g)·alpha + g·F, in 1/1024.
            // alpha −= min_not_zero(alpha, alpha >> g): the last steps take
            // a small alpha to 0 instead of stalling.
            let dec = match self.alpha >> SHIFT_G {
                0 => self.alpha,
                d => d,
            };
            let mut alpha = self.alpha - dec;
            // + g·F: the marked bytes × 1024/16 over the bytes acknowledged.
            let f = (self.acked_ce << (10 - SHIFT_G))
                .checked_div(self.acked)
                .unwrap_or(0);
            alpha = (alpha + f).min(MAX_ALPHA);
            self.alpha = alpha;
        }
        self.next_seq = snd_nxt;
        self.acked = 0;
        self.acked_ce = 0;
    }

    fn on_rto(&mut self, st: &mut CcState, flight: u64, first: bool, now: Time) {
        self.reno.on_rto(st, flight, first, now);
    }

    fn set_abc_limit(&mut self, l: u32) -> bool {
        self.reno.set_abc_limit(l)
    }

    fn set_hystart(&mut self, on: bool) -> bool {
        self.reno.set_hystart(on)
    }

    fn hystart(&self) -> Option<&HyStart> {
        self.reno.hystart()
    }
}

pub(super) const DCTCP: CcEntry = CcEntry {
    loss_based: true,
    scalable_ecn: true,
    ..CcEntry::new("dctcp", |_, _| Box::new(Dctcp::default()))
};

#[cfg(test)]
mod tests {
    use super::*;

    fn st(cwnd: u64) -> CcState {
        CcState {
            cwnd,
            ssthresh: u64::MAX,
            mss: 1000,
            max_cwnd: u64::MAX,
            ca_at_ssthresh: false,
        }
    }

    /// RFC 8257 §3.3: alpha ← (1 − g)·alpha + g·F once per window; with F
    /// held at 0.25 alpha converges to 0.25, and the reduction is then
    /// cwnd·(1 − alpha/2) = 0.875·cwnd.
    #[test]
    fn alpha_is_an_ewma_of_the_marked_fraction_per_window() {
        let mut d = Dctcp::default();
        assert_eq!(d.alpha, 1024, "alpha starts at 1");
        // The first ACK closes the first window, unmarked: alpha = 15/16.
        d.on_ecn_ack(1000, false, 1000, 100_000);
        assert_eq!(d.alpha, 960);
        let mut una = 100_000;
        d.on_ecn_ack(99_000, false, una, 200_000);
        assert_eq!(d.alpha, 900);
        // Windows with a quarter of the bytes marked.
        let mut end = 200_000;
        for _ in 0..200 {
            for k in 0..100 {
                una += 1000;
                d.on_ecn_ack(1000, k % 4 == 0, una, end);
            }
            una = end;
            end += 100_000;
            d.on_ecn_ack(0, false, una, end);
        }
        assert!((d.alpha as i64 - 256).abs() <= 16, "{}", d.alpha);
        let s = st(100_000);
        let want = 100_000 - 100_000 * d.alpha / 2048;
        assert_eq!(d.ssthresh_on_ece(&s, 0, 0), want);
        assert!((want as f64 / 100_000.0 - 0.875).abs() < 0.01);
        // A loss still halves (dctcp_react_to_loss).
        assert_eq!(d.ssthresh_on_loss(&s, 100_000, 0), 50_000);
        // Never below two segments.
        assert_eq!(d.ssthresh_on_ece(&st(1000), 0, 0), 2000);
    }

    /// dctcp_update_alpha()'s fixed point: `alpha -= min_not_zero(alpha,
    /// alpha >> 4)` takes all of an alpha below 16/1024 away, so once alpha
    /// has fallen that low (after a spell without marks) a window only
    /// leaves g·F in it: with F = 10 % per window alpha stays at 6/1024
    /// (F/16), not the EWMA's 102/1024, until a window with F ≥ 1/4 lifts
    /// it to 16 or more. The reduction is then cwnd·F/32. Linux's
    /// arithmetic, kept as it is (docs/aqm.md: why DCTCP out-competes
    /// CUBIC under DualPI2).
    #[test]
    fn a_small_alpha_is_replaced_by_g_f_each_window() {
        let mut d = Dctcp::default();
        // Windows of ten 1000-byte ACKs, `marked` of them with ECE.
        d.on_ecn_ack(0, false, 0, 10_000);
        let mut una = 0;
        let mut window = |d: &mut Dctcp, marked: u64| {
            for k in 0..10 {
                una += 1000;
                d.on_ecn_ack(1000, k < marked, una, una + 10_000);
            }
        };
        for _ in 0..100 {
            window(&mut d, 0);
        }
        assert_eq!(d.alpha, 0);
        for _ in 0..200 {
            window(&mut d, 1);
            assert_eq!(d.alpha, 6, "(0.1 << 6) = 6, every window");
        }
        // One window with F = 0.3: 19 ≥ 16, and the EWMA works again.
        window(&mut d, 3);
        assert_eq!(d.alpha, 19);
        for _ in 0..200 {
            window(&mut d, 1);
        }
        assert!((90..=110).contains(&d.alpha), "{}", d.alpha);
    }

    /// No marks: alpha decays by 1/16 per window to 0 (min_not_zero: the
    /// last steps take it to 0 instead of stalling).
    #[test]
    fn alpha_decays_to_zero_without_marks() {
        let mut d = Dctcp::default();
        let mut end = 0;
        for _ in 0..200 {
            end += 10_000;
            d.on_ecn_ack(10_000, false, end - 10_000, end);
        }
        assert_eq!(d.alpha, 0);
        assert_eq!(d.ssthresh_on_ece(&st(50_000), 0, 0), 50_000);
    }
}
