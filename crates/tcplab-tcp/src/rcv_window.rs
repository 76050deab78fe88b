//! The receiver's advertised window: fixed (`rcv_window = "fixed"`, the
//! default: all free buffer space of `rcv_buf`) or as Linux 6.18 grows it
//! (`rcv_window = "linux"`), with the quick ACKs that announce the growth.
//!
//! Linux's receiver (net/ipv4/tcp_input.c, tcp_output.c) keeps three limits:
//! `sk_rcvbuf` (bytes of memory, skb truesize included), `window_clamp` (the
//! largest window, `tcp_win_from_space(sk_rcvbuf)`) and `rcv_ssthresh` (the
//! window it offers now, grown by about two segments per in-order full
//! segment up to the clamp). Dynamic right-sizing (`tcp_rcv_space_adjust`,
//! once per receiver RTT estimate) raises `sk_rcvbuf` and with it the clamp
//! to twice what the application read in the last RTT. Every segment that
//! grows `rcv_ssthresh` sets `icsk_ack.quick |= 1`, so it is ACKed at once:
//! while the window grows the receiver ACKs every segment, every second one
//! while it stays (`Connection` applies that to `AckPolicy`).
//!
//! Memory is counted in payload bytes: `tcp_space` = win_from_space(rcvbuf)
//! minus the bytes held (unread + out of order), which is win_from_space of
//! the free truesize when every skb has the same len/truesize ratio, the
//! measured `scaling_ratio`. Integer arithmetic throughout, no allocation.

use crate::Time;

/// `rcv_window`: how the advertised window is chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RcvWindowKind {
    /// All free space of `rcv_buf` (tcplab's default).
    Fixed,
    /// Linux 6.18's receive window and its autotuning (this module).
    Linux,
}

impl RcvWindowKind {
    pub const NAMES: [&'static str; 2] = ["fixed", "linux"];
    pub fn parse(s: &str) -> Option<RcvWindowKind> {
        match s {
            "fixed" => Some(RcvWindowKind::Fixed),
            "linux" => Some(RcvWindowKind::Linux),
            _ => None,
        }
    }
}

/// `net.ipv4.tcp_rmem[1]`: the initial `sk_rcvbuf` (kernel default 131072).
pub const TCP_RMEM_DEFAULT: u64 = 131_072;
/// `net.core.rmem_max` (kernel default 212992): one bound of the window scale
/// `tcp_select_initial_window` picks.
pub const RMEM_MAX: u64 = 212_992;
/// `TCP_RMEM_TO_WIN_SCALE` (include/net/tcp.h): `scaling_ratio` is a /256 fraction.
const TCP_RMEM_TO_WIN_SCALE: u32 = 8;
/// `TCP_DEFAULT_SCALING_RATIO`: 50 % until the first full segment is measured.
const TCP_DEFAULT_SCALING_RATIO: u32 = 1 << (TCP_RMEM_TO_WIN_SCALE - 1);
/// `TCP_INIT_CWND`: the first DRS measure expects at most 10 segments.
const TCP_INIT_CWND: u64 = 10;
/// `TCP_MSS_DEFAULT`: `tcp_initialize_rcv_mss` starts `icsk_ack.rcv_mss` at most here.
const TCP_MSS_DEFAULT: u64 = 536;
/// `TCP_MIN_MSS`.
const TCP_MIN_MSS: u64 = 88;
/// `TCP_MAX_WSCALE` (RFC 7323 §2.3).
const TCP_MAX_WSCALE: u8 = 14;
/// `tcp_grow_window` runs only for skbs of at least this many bytes (`tcp_event_data_recv`).
const GROW_MIN_LEN: u64 = 128;
/// `net.ipv4.tcp_app_win` (default 31): the share of the space kept from the window.
const TCP_APP_WIN: u32 = 31;

/// `TCPOLEN_TSTAMP_ALIGNED`: the timestamp option with its padding.
const TCPOLEN_TSTAMP_ALIGNED: u64 = 12;

/// `tp->advmss` of a connection whose segments carry `mss` payload bytes:
/// the announced MSS (the timestamp option, when on, comes out of it).
pub fn advmss(mss: u32, timestamps: bool) -> u64 {
    mss as u64
        + if timestamps {
            TCPOLEN_TSTAMP_ALIGNED
        } else {
            0
        }
}

/// Linux's receive-window state of one connection (`struct tcp_sock` fields named alike).
#[derive(Clone, Debug)]
pub struct LinuxRcvWindow {
    /// `tcp_rmem[2]`: the most `sk_rcvbuf` grows to.
    rmem_max: u64,
    /// len·256/truesize of a full segment on this receiver (the driver's skb
    /// overhead; `tcp_measure_rcv_mss` sets `scaling_ratio` to it).
    measured_ratio: u32,
    /// `tp->scaling_ratio`.
    scaling_ratio: u32,
    /// `sk->sk_rcvbuf`.
    rcvbuf: u64,
    /// `tp->window_clamp`.
    window_clamp: u64,
    /// `tp->rcv_ssthresh`.
    rcv_ssthresh: u64,
    /// `tp->rcv_wnd`: the window last advertised.
    rcv_wnd: u64,
    /// `tp->advmss`: the MSS we announced (payload + timestamp option).
    advmss: u64,
    /// `icsk->icsk_ack.rcv_mss`: our estimate of the peer's segment size.
    rcv_mss: u64,
    /// `tp->rx_opt.rcv_wscale`.
    wscale: u8,
    /// `tp->rcvq_space.space`, `.seq` (bytes read so far at the last measure), `.time`.
    space: u64,
    space_seq: u64,
    space_time: Time,
    /// `tp->rcv_rtt_est.rtt_us` (µs << 3; 0 = no sample yet).
    rtt_us8: u64,
    /// `tp->rcv_rtt_est.seq` / `.time` (None = no measure started).
    rtt_seq: u64,
    rtt_time: Option<Time>,
    /// `tp->rcv_rtt_last_tsecr`.
    last_tsecr: Option<u32>,
}

/// `__tcp_win_from_space`: the window a buffer of `space` truesize bytes holds.
fn win_from_space(ratio: u32, space: u64) -> u64 {
    (space * ratio as u64) >> TCP_RMEM_TO_WIN_SCALE
}

/// `__tcp_space_from_win`: the buffer (truesize bytes) a window of `win` needs.
fn space_from_win(ratio: u32, win: u64) -> u64 {
    (win << TCP_RMEM_TO_WIN_SCALE) / ratio as u64
}

/// `ALIGN(x, 1 << wscale)`.
fn align_up(x: u64, wscale: u8) -> u64 {
    let g = 1u64 << wscale;
    x.div_ceil(g) * g
}

impl LinuxRcvWindow {
    /// A socket before the handshake. `rmem_max` is `tcp_rmem[2]`, `ratio`
    /// the len·256/truesize of a full segment (1–255), `advmss` the MSS we
    /// announce, `wscale_ok` whether window scaling is offered.
    pub fn new(rmem_max: u64, ratio: u32, advmss: u64, wscale_ok: bool) -> Self {
        debug_assert!((1..=255).contains(&ratio));
        let rcvbuf = TCP_RMEM_DEFAULT.min(rmem_max.max(1));
        let mut w = LinuxRcvWindow {
            rmem_max,
            measured_ratio: ratio,
            scaling_ratio: TCP_DEFAULT_SCALING_RATIO,
            rcvbuf,
            window_clamp: 0,
            rcv_ssthresh: 0,
            rcv_wnd: 0,
            advmss,
            rcv_mss: TCP_MSS_DEFAULT,
            wscale: 0,
            space: 0,
            space_seq: 0,
            space_time: 0,
            rtt_us8: 0,
            rtt_seq: 0,
            rtt_time: None,
            last_tsecr: None,
        };
        // tcp_select_initial_window() with no clamp set (window_clamp = 0).
        let space = w.full_space();
        let max_clamp = 65535u64 << TCP_MAX_WSCALE;
        if wscale_ok {
            // "Set window scaling on max possible window": ilog2(space) - 15.
            let s = space.max(rmem_max).max(RMEM_MAX).min(max_clamp);
            w.wscale = (63 - s.leading_zeros() as i32 - 15).clamp(0, TCP_MAX_WSCALE as i32) as u8;
        }
        w.window_clamp = max_clamp.min(65535u64 << w.wscale);
        w
    }

    /// The first window (tcp_select_initial_window): the space rounded down to
    /// a multiple of `mss` — the advertised MSS when we open the connection
    /// (`tcp_connect_init`), the MSS less the timestamp option when we answer
    /// a SYN (`tcp_openreq_init_rwin`). `rcv_ssthresh` starts there.
    pub fn set_initial_window(&mut self, mss: u64) {
        let mut space = self.full_space().min(self.window_clamp);
        if space > mss && mss > 0 {
            space -= space % mss;
        }
        self.rcv_wnd = space;
        self.rcv_ssthresh = space;
        // tcp_initialize_rcv_mss().
        self.rcv_mss = self
            .advmss
            .min(self.rcv_wnd / 2)
            .clamp(TCP_MIN_MSS, TCP_MSS_DEFAULT);
    }

    /// The peer did not agree to window scaling: no scale, a 16-bit window
    /// (tcp_rcv_synsent_state_process / tcp_openreq_init_rwin).
    pub fn no_wscale(&mut self) {
        self.wscale = 0;
        self.window_clamp = self.window_clamp.min(65535);
    }

    /// The window scale we announce (`tp->rx_opt.rcv_wscale`).
    pub fn wscale(&self) -> u8 {
        self.wscale
    }

    /// The window field of our SYN or SYN-ACK (unscaled, RFC 7323 §2.2).
    pub fn syn_window(&self) -> u64 {
        self.rcv_wnd.min(65535)
    }

    /// `tcp_init_buffer_space`: the connection is established at `now`;
    /// `read` = bytes the application has read so far (`copied_seq`).
    pub fn on_established(&mut self, now: Time, read: u64) {
        self.space_time = now;
        self.space_seq = read;
        let maxwin = self.full_space();
        if self.window_clamp >= maxwin {
            self.window_clamp = maxwin;
            if maxwin > 4 * self.advmss {
                // tcp_app_win: keep maxwin >> tcp_app_win for the application.
                self.window_clamp = (maxwin - (maxwin >> TCP_APP_WIN)).max(4 * self.advmss);
            }
        }
        // "Force reservation of one segment."
        if self.window_clamp > 2 * self.advmss && self.window_clamp + self.advmss > maxwin {
            self.window_clamp = (2 * self.advmss).max(maxwin.saturating_sub(self.advmss));
        }
        self.rcv_ssthresh = self.rcv_ssthresh.min(self.window_clamp);
        self.space = self
            .rcv_ssthresh
            .min(self.rcv_wnd)
            .min(TCP_INIT_CWND * self.advmss);
    }

    /// `tcp_full_space`: the window the whole buffer holds.
    pub fn full_space(&self) -> u64 {
        win_from_space(self.scaling_ratio, self.rcvbuf)
    }

    /// `tcp_space`: the window the free buffer holds, with `held` bytes
    /// (unread and out of order) in it.
    fn space_free(&self, held: u64) -> u64 {
        self.full_space().saturating_sub(held)
    }

    /// `tcp_set_window_clamp` (as `tcp_measure_rcv_mss` calls it).
    fn set_window_clamp(&mut self, val: u64) {
        // SOCK_MIN_RCVBUF / 2: 2 KiB plus an skb's overhead; never reached here.
        let new = val.max(1);
        if new == self.window_clamp {
            return;
        }
        let old = self.window_clamp;
        self.window_clamp = new;
        if new < old {
            // __tcp_adjust_rcv_ssthresh (no reserved memory).
            self.rcv_ssthresh = self.rcv_ssthresh.min(new);
        } else {
            self.rcv_ssthresh = self.rcv_ssthresh.max(self.rcv_wnd.min(new));
        }
    }

    /// A data segment of `len` bytes arrived at `now`, with the peer's TSecr
    /// (our clock's ticks, `ts_now` = our clock now, `tick_ns` its tick).
    /// `in_order`: it advanced RCV.NXT (to `rcv_nxt`); `held` = bytes held
    /// (unread + out of order) after it. Returns true when it grew the window
    /// (`icsk_ack.quick |= 1`: ACK it at once).
    #[allow(clippy::too_many_arguments)]
    pub fn on_data(
        &mut self,
        now: Time,
        len: u64,
        in_order: bool,
        rcv_nxt: u64,
        held: u64,
        tsecr: Option<(u32, u32, Time)>,
        sack: bool,
    ) -> bool {
        // tcp_rcv_rtt_measure_ts (tcp_rcv_established, every data segment).
        if let Some((ecr, ts_now, tick_ns)) = tsecr {
            if ecr != 0 && self.last_tsecr != Some(ecr) {
                self.last_tsecr = Some(ecr);
                if len >= self.rcv_mss {
                    let ticks = ts_now.wrapping_sub(ecr) as i32;
                    if ticks >= 0 {
                        // tcp_rtt_tsopt_us: a zero delta counts as one tick.
                        let us = (ticks.max(1) as u64 * tick_ns) / 1_000;
                        self.rcv_rtt_update(us, false);
                    }
                }
            }
        }
        if !in_order {
            // tcp_data_queue_ofo: the window grows for out-of-order data too
            // (SACK flows only; without SACK it must not, to force DUPACKs).
            return sack && len >= GROW_MIN_LEN && self.grow_window(len, held);
        }
        // tcp_event_data_recv -> tcp_measure_rcv_mss.
        if len >= self.rcv_mss {
            if len != self.rcv_mss && self.scaling_ratio != self.measured_ratio {
                self.scaling_ratio = self.measured_ratio;
                let val = win_from_space(self.scaling_ratio, self.rcvbuf);
                self.set_window_clamp(val);
                if self.window_clamp < self.rcv_ssthresh {
                    self.rcv_ssthresh = self.window_clamp;
                }
            }
            self.rcv_mss = len.min(self.advmss);
        }
        // tcp_rcv_rtt_measure: the time to receive one window of data.
        match self.rtt_time {
            Some(_) if rcv_nxt < self.rtt_seq => {}
            t => {
                if let Some(t) = t {
                    let us = (now.saturating_sub(t) / 1_000).max(1);
                    self.rcv_rtt_update(us, true);
                }
                // new_measure: time the next window's worth of data.
                self.rtt_seq = rcv_nxt + self.rcv_wnd;
                self.rtt_time = Some(now);
            }
        }
        len >= GROW_MIN_LEN && self.grow_window(len, held)
    }

    /// `tcp_grow_window`. The truesize test ("Check #2": does an skb of this
    /// len/truesize fit the buffer later?) passes: the scaling ratio was
    /// measured on the same skbs, so win_from_space(truesize) ≤ len.
    fn grow_window(&mut self, len: u64, held: u64) -> bool {
        let limit = self.window_clamp.min(self.space_free(held));
        if limit <= self.rcv_ssthresh {
            return false;
        }
        let room = limit - self.rcv_ssthresh;
        let incr = (2 * self.advmss).max(2 * len);
        self.rcv_ssthresh += room.min(incr);
        true
    }

    /// `tcp_rcv_rtt_update`: the receiver's RTT estimate (µs), the minimum of
    /// window-based samples, smoothed (1/8) for timestamp samples.
    fn rcv_rtt_update(&mut self, sample_us: u64, win_dep: bool) {
        let m = sample_us << 3;
        let old = self.rtt_us8;
        if old == 0 || m < old {
            self.rtt_us8 = m;
        } else if !win_dep {
            self.rtt_us8 = old - (old >> 3) + sample_us;
        }
    }

    /// `tcp_rcv_space_adjust` (after the application read, `read` bytes in
    /// all, `inq` still unread): once per receiver RTT, if it read more than
    /// last time, `tcp_rcvbuf_grow` sizes the buffer for it.
    /// `ooo_span` = highest out-of-order byte − RCV.NXT (0 if none).
    pub fn on_read(&mut self, now: Time, read: u64, inq: u64, ooo_span: u64) {
        let time_us = now.saturating_sub(self.space_time) / 1_000;
        if self.rtt_us8 == 0 || time_us < (self.rtt_us8 >> 3) {
            return;
        }
        // Bytes copied to the user in the last RTT, less what still waits.
        let copied = read.saturating_sub(self.space_seq).saturating_sub(inq);
        if copied > self.space {
            self.rcvbuf_grow(copied, ooo_span);
        }
        self.space_seq = read;
        self.space_time = now;
    }

    /// `tcp_rcvbuf_grow(sk, newval)` (6.18 with "tcp: fix too slow
    /// tcp_rcvbuf_grow() action"): twice what was read in the last RTT ("DRS
    /// is always one RTT late"), plus twice its growth over the RTT before
    /// ("slow start: allow the sender to double its rate"), plus room for
    /// what waits out of order; capped by tcp_rmem[2]. Out-of-order data
    /// calls it with `newval` = the current space (`tcp_data_queue_ofo`).
    pub fn rcvbuf_grow(&mut self, newval: u64, ooo_span: u64) {
        let oldval = self.space;
        self.space = newval;
        let mut rcvwin = newval << 1;
        if let Some(grow) = (rcvwin * newval.saturating_sub(oldval)).checked_div(oldval) {
            rcvwin += grow << 1;
        }
        rcvwin += ooo_span;
        let rcvbuf = space_from_win(self.scaling_ratio, rcvwin).min(self.rmem_max);
        if rcvbuf > self.rcvbuf {
            self.rcvbuf = rcvbuf;
            // "Make the window clamp follow along."
            self.window_clamp = win_from_space(self.scaling_ratio, rcvbuf);
        }
    }

    /// `tcp_select_window` (`__tcp_select_window`, tcp_shrink_window = 0):
    /// the window to advertise now, `held` bytes in the buffer, `known` the
    /// window the peer was last told (never shrunk). Also returns whether the
    /// free space fell under half the buffer (`icsk_ack.quick = 0`).
    pub fn select_window(&mut self, held: u64, known: u64) -> (u64, bool) {
        let (window, quick_off) = self.peek_window(held, known);
        self.rcv_wnd = window;
        (window, quick_off)
    }

    /// `select_window` without recording the result (`tcp_cleanup_rbuf`'s
    /// look at `__tcp_select_window`).
    pub fn peek_window(&self, held: u64, known: u64) -> (u64, bool) {
        let mut mss = self.rcv_mss;
        let mut free = self.space_free(held);
        let allowed = self.full_space();
        let full = self.window_clamp.min(allowed);
        let mut quick_off = false;
        let mut window = 'sel: {
            if mss > full {
                mss = full;
                if mss == 0 {
                    break 'sel 0;
                }
            }
            if free < full >> 1 {
                quick_off = true;
                free -= free % (1u64 << self.wscale);
                if free < allowed >> 4 || free < mss {
                    break 'sel 0;
                }
            }
            free = free.min(self.rcv_ssthresh);
            if self.wscale > 0 {
                // "Advertise enough space so that it won't get scaled away."
                align_up(free, self.wscale)
            } else {
                // Without scaling: keep the window a multiple of the MSS.
                let mut w = self.rcv_wnd;
                if w + mss <= free || w > free {
                    w = if mss > 0 { free - free % mss } else { free };
                } else if mss == full && free > w + (full >> 1) {
                    w = free;
                }
                w
            }
        };
        if window < known {
            // Never shrink the window (RFC 9293 §3.8.6.2.2).
            window = align_up(known, self.wscale);
        }
        (window.min(65535u64 << self.wscale), quick_off)
    }

    /// `tp->window_clamp` (for tests and the window-update rule).
    pub fn window_clamp(&self) -> u64 {
        self.window_clamp
    }

    /// `tp->rcv_ssthresh`.
    pub fn rcv_ssthresh(&self) -> u64 {
        self.rcv_ssthresh
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::NS_PER_MS;

    const MSS: u64 = 1448;
    const ADVMSS: u64 = 1460;
    /// len·256/truesize measured on the TUN testbed (the capture's clamp 80896 = 131072·158/256).
    const RATIO: u32 = 158;

    fn established(rmem_max: u64) -> LinuxRcvWindow {
        let mut w = LinuxRcvWindow::new(rmem_max, RATIO, ADVMSS, true);
        w.set_initial_window(ADVMSS);
        w.on_established(0, 0);
        w
    }

    /// The capture (Linux 6.18 receiver, active open, RTT 40 ms): wscale 10,
    /// SYN window 64240, first ACK 64512, then +3 KiB per segment to 80896.
    #[test]
    fn initial_window_and_growth_match_the_capture() {
        let mut w = established(33_554_432);
        assert_eq!(w.wscale(), 10);
        assert_eq!(w.syn_window(), 64240);
        assert_eq!(w.select_window(0, 0).0, 64512);
        let mut wins = vec![];
        let mut grew = vec![];
        for k in 1..=8u64 {
            grew.push(w.on_data(k * NS_PER_MS, MSS, true, k * MSS, 0, None, true));
            wins.push(w.select_window(0, 0).0 / 1024);
        }
        assert_eq!(wins, [66, 69, 72, 75, 78, 79, 79, 79]);
        assert_eq!(grew, [true, true, true, true, true, true, false, false]);
        assert_eq!(w.window_clamp(), 80896);
    }

    /// A passive opener's first window is a multiple of the MSS less the
    /// timestamp option (the sender's SYN-ACK in the capture: 65160).
    #[test]
    fn passive_initial_window() {
        let mut w = LinuxRcvWindow::new(33_554_432, RATIO, ADVMSS, true);
        w.set_initial_window(MSS);
        assert_eq!(w.syn_window(), 65160);
        // Without window scaling the scale stays 0 and the window ≤ 65535.
        let mut w = LinuxRcvWindow::new(6 << 20, RATIO, ADVMSS, false);
        w.set_initial_window(MSS);
        w.on_established(0, 0);
        assert_eq!(w.wscale(), 0);
        let (win, _) = w.select_window(0, 0);
        // Before data, rcv_mss is TCP_MSS_DEFAULT: a multiple of 536 under the clamp.
        assert_eq!(win, 64076 - 64076 % 536);
        // tcp_rmem[2] = 6 MiB (the kernel default) gives scale 7.
        assert_eq!(
            LinuxRcvWindow::new(6 << 20, RATIO, ADVMSS, true).wscale(),
            7
        );
    }

    /// DRS: at most once per receiver RTT, and only when more was read than
    /// the last time; the clamp becomes twice what was read in that RTT.
    #[test]
    fn drs_raises_the_clamp_once_per_rtt() {
        let mut w = established(33_554_432);
        // The first data segment: RTT sample 40 ms from the timestamp echo.
        w.on_data(
            40 * NS_PER_MS,
            MSS,
            true,
            MSS,
            0,
            Some((100, 140, NS_PER_MS)),
            true,
        );
        assert_eq!(w.rtt_us8 >> 3, 40_000);
        let before = w.window_clamp();
        // 30 ms after establishment: under one RTT, nothing happens.
        w.on_read(30 * NS_PER_MS, 60 * MSS, 0, 0);
        assert_eq!(w.window_clamp(), before);
        // 41 ms: 60 segments read in the last RTT > space (10 * advmss):
        // rcvwin = 2·60 + 4·60·(60·MSS − space)/space segments.
        w.on_read(41 * NS_PER_MS, 60 * MSS, 0, 0);
        let c1 = w.window_clamp();
        let (new, old) = (60 * MSS, 10 * ADVMSS);
        let rcvwin = 2 * new + ((2 * new * (new - old) / old) << 1);
        assert_eq!(c1, win_from_space(RATIO, space_from_win(RATIO, rcvwin)));
        // Within the next RTT: no second step, however much is read.
        w.on_read(60 * NS_PER_MS, 200 * MSS, 0, 0);
        assert_eq!(w.window_clamp(), c1);
        // One RTT later: 340 more segments (growth 280/60) → a larger buffer.
        w.on_read(82 * NS_PER_MS, 400 * MSS, 0, 0);
        let rcvwin = 2 * 340 * MSS + ((2 * 340 * MSS * 280 / 60) << 1);
        assert_eq!(
            w.window_clamp(),
            win_from_space(RATIO, space_from_win(RATIO, rcvwin))
        );
        // A smaller result never shrinks the buffer.
        let c2 = w.window_clamp();
        w.on_read(130 * NS_PER_MS, 750 * MSS, 0, 0);
        assert_eq!(w.space, 350 * MSS);
        assert_eq!(w.window_clamp(), c2);
        // Less read than last time: nothing changes, the measure restarts.
        w.on_read(180 * NS_PER_MS, 760 * MSS, 0, 0);
        assert_eq!((w.space, w.window_clamp()), (350 * MSS, c2));
        assert_eq!(w.space_time, 180 * NS_PER_MS);
        // tcp_rmem[2] caps the buffer.
        let mut small = established(200_000);
        small.on_data(NS_PER_MS, MSS, true, MSS, 0, None, true);
        small.rtt_us8 = 8;
        small.on_read(NS_PER_MS, 1 << 30, 0, 0);
        assert_eq!(small.window_clamp(), win_from_space(RATIO, 200_000));
    }

    /// rcv_ssthresh grows by max(2·advmss, 2·len) per in-order segment while
    /// below the clamp (each such segment asks for an immediate ACK), and
    /// stops at the clamp; a full buffer stops it too.
    #[test]
    fn growth_stops_at_the_clamp_and_when_memory_is_held() {
        let mut w = established(33_554_432);
        w.on_data(NS_PER_MS, MSS, true, MSS, 0, None, true);
        let start = w.rcv_ssthresh();
        w.space = 50 * MSS;
        w.rcvbuf_grow(50 * MSS, 0);
        let clamp = w.window_clamp();
        let mut n = 0;
        let mut k = 1;
        while w.on_data(NS_PER_MS, MSS, true, (k + 1) * MSS, 0, None, true) {
            n += 1;
            k += 1;
            assert!(w.rcv_ssthresh() <= clamp);
        }
        assert_eq!(w.rcv_ssthresh(), clamp);
        assert_eq!(n, (clamp - start).div_ceil(2 * ADVMSS));
        // Memory held: the free space bounds the growth.
        let mut w = established(33_554_432);
        w.on_data(NS_PER_MS, MSS, true, MSS, 0, None, true);
        let held = w.full_space() - w.rcv_ssthresh();
        assert!(!w.on_data(NS_PER_MS, MSS, true, 2 * MSS, held, None, true));
        // Out of order without SACK: no growth (DUPACKs must not carry a new window).
        assert!(!w.on_data(NS_PER_MS, MSS, false, 2 * MSS, 0, None, false));
    }

    /// The window never shrinks below what the peer was told, and a buffer
    /// less than half free stops quick-ACK mode and rounds to the scale.
    #[test]
    fn select_window_never_shrinks() {
        let mut w = established(33_554_432);
        let (first, _) = w.select_window(0, 0);
        let (win, quick_off) = w.select_window(w.full_space() * 3 / 4, first);
        assert!(quick_off);
        assert_eq!(win, first);
        let (win, quick_off) = w.select_window(0, 10_000);
        assert!(!quick_off);
        assert_eq!(win, first);
    }

    /// Out-of-order data adds its span to the window DRS asks for.
    #[test]
    fn ooo_span_adds_to_the_buffer() {
        let mut a = established(33_554_432);
        let mut b = a.clone();
        a.space = 100 * MSS;
        b.space = 100 * MSS;
        a.rcvbuf_grow(100 * MSS, 0);
        b.rcvbuf_grow(100 * MSS, 50 * MSS);
        assert!(b.window_clamp() > a.window_clamp() + 49 * MSS);
    }
}
