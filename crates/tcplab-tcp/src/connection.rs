//! The sans-IO TCP endpoint.
//!
//! Driver contract (quinn-proto style):
//! - `handle_segment(seg, now)` for every arriving segment;
//! - `handle_timeout(now)` when `poll_timeout()` has passed;
//! - then `poll_transmit(now)` until it returns `None`, and `poll_event()`
//!   until it returns `None`.
//!
//! Internally every sequence number is a 64-bit offset from the ISN: the SYN
//! is offset 0, data byte k is offset 1 + k, the FIN follows the last byte.
//! The application model is a byte counter: the sending application supplies
//! `app_supply` bytes (u64::MAX = unlimited); the send buffer bounds how far
//! past SND.UNA data may be taken (`snd_buf`). The receiving application reads
//! everything delivered at once, or at `read_rate_bps` (one MSS-sized chunk
//! at a time, on this endpoint's timer), unless `set_reader_paused` holds it.
//! Flow control follows from it: receiver SWS avoidance and window updates
//! (RFC 9293 §3.8.6.2.2) and the sender's persist timer (§3.8.6.1).
//!
//! Departure from docs/design.md §4 (one mechanism, one module): the NewReno /
//! Reno (RFC 6582 / 5681 §3.2) and SACK (RFC 6675) recovery rules live here,
//! in `enter_recovery`, `on_ack_in_recovery` and `next_data_segment`, over the
//! shared `scoreboard::Scoreboard`, because they share the transmit-selection
//! loop (NextSeg) and the timer rules with the rest of the sender. Congestion
//! control, spurious-timeout detection/response, RTO estimation, the ACK
//! policy and reassembly are separate modules behind their own interfaces.
//!
//! The recovery state is one `recovery::RecoveryState` (`self.rec`), read as
//! Linux's `tcp_ca_state` by `ca_state()`. On every ACK `process_ack` runs,
//! in order: the SACK scoreboard, the cumulative ACK, the spurious-timeout
//! and spurious-fast-retransmit detectors, RACK's steps 1–4 (RFC 8985 §6.2)
//! and the TLP episode (§7.4), loss detection (RACK step 5 or RFC 6675
//! IsLost) and recovery entry, and last the PRR step (RFC 6937 §3).
//!
//! Spurious fast retransmits: `enter_recovery` saves the pre-reduction state
//! (`fr_saved`) and opens an episode on a second detector instance
//! (`fr_detector`, Eifel or DSACK); `on_spurious_fr` runs the undo
//! (`spurious::respond_fr`) and, during recovery, clears the loss marks and
//! leaves recovery. A timeout cancels an open fast-retransmit episode.
//!
//! Relay mode (`Connection::relay`): the sending side of a spoofing PEP
//! (RFC 3135 §2.1, §3.1.1). The endpoint sends a stream another host
//! originated, with that host's ISN and the options both SYNs negotiated; the
//! driver supplies the bytes it holds (`app_supply`) and closes when the
//! originator's FIN is held. Everything on the sending side (segmentation,
//! congestion control, SACK recovery, RTO, F-RTO/Eifel, persist) is this
//! file's. The reverse stream stays end to end: the endpoint never ACKs the
//! peer's data (no pure ACKs, no reassembly) and its segments carry the ACK
//! number and window field the originator last sent (`relay_echo`). Its
//! timestamps come from its own clock (`ts_offset`, anchored by the driver).

use crate::cc::hystart::Phase as HyPhase;
use std::cell::Cell;
use std::collections::VecDeque;

use crate::ack_cc::AckRatioController;
use crate::ack_policy::{AckNow, AckPolicy};
use crate::cc::{new_cc_with, AckInfo, CcState, CongestionControl, TcpView, TransitFeedback};
use crate::config::{Config, SsthreshFrom};
use crate::ecn::{Ecn, EcnStats};
use crate::events::{Event, RecoveryKind, RtxReason};
use crate::give_up::{GiveUp, GiveUpKind, ProbesOut, WriteTimeout};
use crate::jiffies::{self, TimerKind};
use crate::pacing::Pacer;
use crate::rcv_window::{advmss, LinuxRcvWindow, RcvWindowKind};
use crate::reasm::Reassembly;
use crate::recovery::{
    CaState, LossDetection, Prr, PrrBound, RecoveryCwnd, RecoveryState, Tlp, TlpAck,
};
use crate::rto::RttEstimator;
use crate::scoreboard::{Scoreboard, EVER_RETRANS, SACKED};
use crate::segment::{Flags, SackBlock, Segment, TcpOptions, MAX_SACK_BLOCKS};
use crate::seq::{to_wire, unwrap};
use crate::sndbuf::{SndBuf, SndBufKind};
use crate::spurious::{
    self, AckView, Decision, Detector, MissCause, NewData, Response, ResponseCtx, RtoView, Saved,
};
use crate::tso::{SendHead, Tso, TsoKind};
use crate::Time;

/// RFC 5681 §3.2 / RFC 6675 §5: DupThresh.
pub const DUPTHRESH: u32 = 3;

/// Connection states (RFC 9293 §3.3.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    Closed,
    Listen,
    SynSent,
    SynRcvd,
    Established,
    FinWait1,
    FinWait2,
    CloseWait,
    Closing,
    LastAck,
    TimeWait,
}

/// Counters for the per-flow summary.
#[derive(Clone, Copy, Debug, Default)]
pub struct Stats {
    pub segments_sent: u64,
    pub data_segments_sent: u64,
    pub payload_bytes_sent: u64,
    pub retransmitted_segments: u64,
    pub retransmitted_bytes: u64,
    pub timeouts: u64,
    pub fast_retransmits: u64,
    pub recoveries: u64,
    pub spurious_detected: u64,
    /// Fast retransmits the `spurious_fr` detector declared spurious.
    pub spurious_fr_detected: u64,
    /// Of those, the episodes whose reduction the response undid.
    pub fr_undone: u64,
    pub acks_sent: u64,
    pub dupacks_rcvd: u64,
    pub dsacks_rcvd: u64,
    /// Data bytes cumulatively acknowledged by the peer.
    pub bytes_acked: u64,
    /// Data bytes delivered in order (into the receive buffer).
    pub bytes_delivered: u64,
    /// Of those, the bytes the application has read (equal to
    /// `bytes_delivered` unless the reader is slow or paused).
    pub bytes_read: u64,
    /// ACKs that acknowledged data never sent (ignored, RFC 9293 §3.10.7.4).
    pub bad_acks: u64,
    /// Zero-window probes sent (RFC 9293 §3.8.6.1).
    pub window_probes: u64,
    /// ACKs sent only to reopen the window after the application read.
    pub window_updates: u64,
}

/// Linux's record of how the window was used (tcp_cwnd_validate(): its
/// `is_cwnd_limited`, `max_packets_out` in bytes, `cwnd_usage_seq`), and
/// whether the transmit loop sent data since it last ran.
#[derive(Debug, Clone, Copy, Default)]
struct LinuxCwndUse {
    is_cwnd_limited: bool,
    max_packets_out: u64,
    usage_seq: u64,
    sent: bool,
}

pub struct Connection {
    cfg: Config,
    state: State,
    local_port: u16,
    remote_port: u16,

    // ---- send side ----
    iss: u32,
    snd_una: u64,
    snd_max: u64,
    /// Peer's advertised window, bytes (already scaled).
    snd_wnd: u64,
    snd_wl1: u64,
    snd_wl2: u64,
    /// Shift to apply to the peer's window field (RFC 7323 §2.3).
    snd_wscale: u8,
    /// Effective send MSS.
    mss: u64,
    /// Total data bytes the application has supplied (u64::MAX = unlimited).
    app_supply: u64,
    app_close: bool,
    fin_sent: bool,
    fin_acked: bool,
    fin_sent_at: Time,
    sb: Scoreboard,
    cc: Box<dyn CongestionControl>,
    ccs: CcState,
    rtt: RttEstimator,
    rtx_deadline: Option<Time>,
    syn_sent_at: Time,
    syn_retransmitted: bool,
    /// Retransmissions counted toward giving up (`give_up.rs`).
    write_timeout: WriteTimeout,
    /// Zero-window probes since the last acceptable ACK (`give_up.rs`).
    probes_out: ProbesOut,
    /// Set once the connection gave up retransmitting.
    gave_up: Option<GiveUp>,
    /// Retransmit this sequence number next, regardless of cwnd
    /// (fast retransmit, timeout, NewReno partial ACK).
    force_rtx: Option<(u64, RtxReason)>,

    // ---- loss recovery (recovery/: the state, PRR, RACK-TLP) ----
    rec: RecoveryState,
    /// The current stop reason of the transmit loop was cwnd.
    cwnd_limited: bool,
    /// Linux's per-window record of cwnd use (`reno`/`cubic = "linux"`).
    lx_cwnd: LinuxCwndUse,
    timeout_count: u32,
    // ---- options ----
    sack_ok: bool,
    ts_ok: bool,
    ts_recent: u32,
    ts_offset: u32,
    /// The timestamp clock's last tick asked: (its start, now / g), see `ts_now`.
    ts_tick: Cell<(Time, u64)>,
    last_ack_sent: u64,

    // ---- receive side ----
    irs: u32,
    reasm: Reassembly,
    rcv_wscale: u8,
    /// Delivered but not yet read by the application.
    app_unread: u64,
    reader_paused: bool,
    /// A rate-limited reader (`read_rate_bps`) busy with a chunk: (done at, bytes).
    read_busy: Option<(Time, u64)>,
    /// Right edge of the window last advertised (RCV.NXT + RCV.WND), bytes.
    adv_right: u64,
    /// Linux's receive window and its autotuning (`rcv_window = "linux"`).
    rwin: Option<LinuxRcvWindow>,
    /// Persist timer (RFC 9293 §3.8.6.1) and its backoff; a probe to send.
    persist_deadline: Option<Time>,
    persist_backoff: u32,
    probe_pending: bool,
    /// Offset of the peer's FIN, once seen.
    peer_fin: Option<u64>,
    ack_policy: AckPolicy,
    /// ECN (RFC 3168, `ecn.rs`).
    ecn: Ecn,
    /// A scalable receiver's delayed ACK that a CE change found pending, to
    /// be sent first: its RCV.NXT and its ECE (`dctcp_ece_ack_update()`).
    prior_ack: Option<(u64, bool)>,
    /// Receiver-side ACK congestion control (RFC 3449 §4.3), if configured.
    ack_cc: Option<AckRatioController>,
    ack_pending: bool,
    syn_pending: bool,
    rst_pending: bool,
    /// Bytes read by the application since the last `take_read`.
    newly_read: u64,

    /// The peer offered window scaling in its SYN.
    ws_peer_offered: bool,
    /// A bare FIN must be sent again (timeout with no data outstanding).
    fin_resend: bool,
    closed_reported: bool,

    // ---- spurious-timeout detection and response (spurious/) ----
    detector: Option<Box<dyn Detector>>,
    response: Box<dyn Response>,
    /// RFC 4015 §3.2 step (0) state of the current timeout episode.
    saved: Saved,
    /// F-RTO step 2b: new segments still allowed regardless of cwnd.
    frto_new_allow: u32,
    /// RFC 4015 §3.2 step (4): (SRTT_prev, RTTVAR_prev, SND.MAX at the timeout).
    rebase: Option<(Time, Time, u64)>,
    /// Id of the first timeout of the current episode (its backed-off
    /// repetitions share the detector's verdict).
    episode_first_id: u32,

    // ---- spurious fast-retransmit detection and undo ----
    /// A second detector instance that only sees fast-retransmit episodes.
    fr_detector: Option<Box<dyn Detector>>,
    /// cwnd, ssthresh, pipe_prev = max(FlightSize, ssthresh) and FlightSize
    /// before the current fast-recovery reduction (RFC 4015 §3.2 step (0);
    /// Linux prior_cwnd/prior_ssthresh).
    fr_saved: Saved,

    /// Relay mode: the ACK number and window field to put on every segment
    /// (the originator's latest), see the module documentation.
    relay: Option<(u32, u16)>,

    /// Pacing (`pacing.rs`), when this connection paces.
    pacer: Option<Box<Pacer>>,
    /// Linux's send buffer and its writer (`snd_buf_model = "linux"`, `sndbuf.rs`).
    sndbuf: Option<Box<SndBuf>>,
    /// Linux's skbs and `tcp_tso_should_defer` (`tso_model = "linux"`, `tso.rs`).
    tso: Option<Box<Tso>>,
    /// The controller sets cwnd itself (Linux's `.cong_control`).
    cc_owns: bool,

    events: VecDeque<Event>,
    stats: Stats,
}

impl Connection {
    /// Active open (sends a SYN). `iss` and `ts_offset` come from the driver
    /// (the simulator draws them from the flow's RNG stream).
    pub fn client(
        cfg: Config,
        local_port: u16,
        remote_port: u16,
        iss: u32,
        ts_offset: u32,
    ) -> Self {
        let mut c = Self::new(cfg, local_port, remote_port, iss, ts_offset);
        c.state = State::SynSent;
        c.syn_pending = true;
        if let Some(w) = c.rwin.as_mut() {
            // tcp_connect_init: the first window is a multiple of advmss.
            w.set_initial_window(advmss(c.cfg.mss, c.cfg.timestamps));
        }
        c
    }

    /// Passive open: waits for a SYN.
    pub fn server(
        cfg: Config,
        local_port: u16,
        remote_port: u16,
        iss: u32,
        ts_offset: u32,
    ) -> Self {
        let mut c = Self::new(cfg, local_port, remote_port, iss, ts_offset);
        c.state = State::Listen;
        if let Some(w) = c.rwin.as_mut() {
            // tcp_openreq_init_rwin: a multiple of the MSS less the timestamp option.
            w.set_initial_window(c.cfg.mss as u64);
        }
        c
    }

    fn new(cfg: Config, local_port: u16, remote_port: u16, iss: u32, ts_offset: u32) -> Self {
        let mss = cfg.mss as u64;
        let ccs = CcState {
            cwnd: cfg.initial_window,
            ssthresh: cfg.initial_ssthresh.unwrap_or(u64::MAX / 4),
            mss,
            max_cwnd: cfg.max_cwnd.unwrap_or(u64::MAX / 4),
            ca_at_ssthresh: cfg.ca_at_ssthresh,
        };
        let rwin = (cfg.rcv_window == RcvWindowKind::Linux).then(|| {
            LinuxRcvWindow::new(
                cfg.rcv_buf,
                cfg.rcv_scaling_ratio,
                advmss(cfg.mss, cfg.timestamps),
                cfg.window_scaling,
            )
        });
        let rcv_wscale = if let Some(w) = &rwin {
            w.wscale()
        } else if cfg.window_scaling {
            let mut s = 0u8;
            while (cfg.rcv_buf >> s) > 65535 && s < 14 {
                s += 1;
            }
            s
        } else {
            0
        };
        let mut cc = new_cc_with(cfg.cc, &cfg.cc_params);
        if cfg.abc_l != 1 {
            // RFC 3465 §2.2 limit L (Config::validate allows it for reno/newreno/cubic).
            let supported = cc.set_abc_limit(cfg.abc_l);
            debug_assert!(
                supported,
                "abc_l set for a controller without byte counting"
            );
        }
        if cfg.hystart {
            // RFC 9406 (Config::validate allows it for reno/newreno/cubic).
            let supported = cc.set_hystart(true);
            debug_assert!(supported, "hystart set for a controller without it");
        }
        if cfg.hystart_linux {
            // tcp_cubic.c HyStart (Config::validate allows it for cubic).
            let supported = cc.set_hystart_linux(true);
            debug_assert!(supported, "hystart_linux set for a controller without it");
        }
        if cfg.cubic_linux {
            // tcp_cubic.c window arithmetic (Config::validate allows it for cubic).
            let supported = cc.set_linux_arith(true);
            debug_assert!(supported, "cubic_linux set for a controller without it");
        }
        if cfg.reno_linux {
            // tcp_cong.c's Reno in whole packets (Config::validate allows it for reno/newreno).
            let supported = cc.set_linux_arith(true);
            debug_assert!(supported, "reno_linux set for a controller without it");
        }
        let ack_cc = cfg
            .ack_cc
            .map(|a| AckRatioController::new(a, cfg.ack.every_n, cfg.rcv_buf, cfg.mss));
        let cc_owns = cfg.cc.entry.cong_control;
        if cc_owns {
            cc.set_seed(((iss as u64) << 32) | ts_offset as u64);
        }
        let mut sb = Scoreboard::with_capacity(64);
        if cfg.estimates_rate() {
            sb.enable_rate();
        }
        let sndbuf = (cfg.snd_buf_model == SndBufKind::Linux)
            .then(|| Box::new(SndBuf::new(cfg.snd_buf, mss, cc.sndbuf_expand())));
        Connection {
            pacer: cfg.paces().then(Box::default),
            sndbuf,
            tso: (cfg.tso_model == TsoKind::Linux).then(Box::default),
            cc_owns,
            cc,
            ack_cc,
            rtt: RttEstimator::new(cfg.rto),
            ack_policy: AckPolicy::new(cfg.ack),
            ecn: if cfg.cc.entry.scalable_ecn {
                Ecn::scalable()
            } else {
                Ecn::new(cfg.ecn)
            },
            state: State::Closed,
            local_port,
            remote_port,
            iss,
            snd_una: 0,
            snd_max: 0,
            snd_wnd: 0,
            snd_wl1: 0,
            snd_wl2: 0,
            snd_wscale: 0,
            mss,
            app_supply: 0,
            app_close: false,
            fin_sent: false,
            fin_acked: false,
            fin_sent_at: 0,
            sb,
            ccs,
            rtx_deadline: None,
            syn_sent_at: 0,
            syn_retransmitted: false,
            write_timeout: WriteTimeout::default(),
            probes_out: ProbesOut::default(),
            gave_up: None,
            force_rtx: None,
            rec: RecoveryState::default(),
            cwnd_limited: false,
            lx_cwnd: LinuxCwndUse::default(),
            timeout_count: 0,
            sack_ok: false,
            ts_ok: false,
            ts_recent: 0,
            ts_offset,
            ts_tick: Cell::new((0, 0)),
            last_ack_sent: 0,
            irs: 0,
            reasm: Reassembly::new(0),
            rcv_wscale,
            app_unread: 0,
            reader_paused: false,
            read_busy: None,
            adv_right: 0,
            rwin,
            persist_deadline: None,
            persist_backoff: 0,
            probe_pending: false,
            peer_fin: None,
            ack_pending: false,
            prior_ack: None,
            syn_pending: false,
            rst_pending: false,
            newly_read: 0,
            ws_peer_offered: false,
            fin_resend: false,
            closed_reported: false,
            events: VecDeque::with_capacity(16),
            stats: Stats::default(),
            detector: spurious::new_detector(cfg.spurious_detection),
            response: spurious::new_response(cfg.spurious_response),
            saved: Saved::default(),
            fr_detector: spurious::new_detector(cfg.spurious_fr),
            fr_saved: Saved::default(),
            frto_new_allow: 0,
            rebase: None,
            episode_first_id: 0,
            relay: None,
            cfg,
        }
    }

    /// Relay mode (module documentation): an established sending side for a
    /// connection whose handshake passed end to end. `iss` is the
    /// originator's ISN, `cfg` carries the options the originator's SYN
    /// offered (`sack`, `timestamps`, `window_scaling`, `mss`), `synack` is
    /// the peer's SYN-ACK as it passed (its ISN, MSS, window scale, SACK,
    /// timestamps and window). `handshake_rtt`: the time from the SYN to
    /// the SYN-ACK as the relay saw them, if the SYN passed only once
    /// (Karn-safe, RFC 6298 §3); the first RTT sample (RFC 6298 §2.2).
    pub fn relay(
        cfg: Config,
        local_port: u16,
        remote_port: u16,
        iss: u32,
        ts_offset: u32,
        synack: &Segment,
        handshake_rtt: Option<Time>,
    ) -> Self {
        let mut c = Self::new(cfg, local_port, remote_port, iss, ts_offset);
        c.parse_syn_options(synack);
        c.snd_una = 1;
        c.snd_max = 1;
        c.state = State::Established;
        c.relay = Some((synack.seq.wrapping_add(1), 0));
        if let Some(r) = handshake_rtt {
            c.handshake_sample(r.max(1));
        }
        c
    }

    /// Relay mode: the ACK number and window field the originator put on
    /// its latest segment; the relay's segments carry them unchanged.
    pub fn relay_echo(&mut self, ack: u32, window: u16) {
        if let Some(r) = self.relay.as_mut() {
            *r = (ack, window);
        }
    }

    /// Is this endpoint a relay (`Connection::relay`)?
    pub fn is_relay(&self) -> bool {
        self.relay.is_some()
    }

    /// The retransmission queue (read-only; for a driver's checks).
    pub fn scoreboard(&self) -> &Scoreboard {
        &self.sb
    }

    // ------------------------------------------------------------------
    // Application interface
    // ------------------------------------------------------------------

    /// The sending application makes `total` bytes available in all
    /// (u64::MAX = an unlimited source). May be raised later.
    pub fn app_supply(&mut self, total: u64) {
        debug_assert!(total >= self.app_supply);
        if let Some(t) = self.tso.as_mut() {
            // tcp_sendmsg_locked ends in tcp_push -> tcp_write_xmit.
            t.rearm();
        }
        if let Some(s) = self.sndbuf.as_ref() {
            // A writer that is not waiting for buffer space writes at once.
            let idle = !s.nospace && self.state == State::Established;
            self.app_supply = total;
            if idle {
                self.app_write();
            }
            return;
        }
        if total > self.app_supply && self.sb.rate().is_some() {
            self.check_app_limited();
        }
        self.app_supply = total;
    }

    /// Total bytes the application has supplied.
    pub fn app_supplied(&self) -> u64 {
        self.app_supply
    }

    /// The sending application has no more data: send FIN after it.
    pub fn close(&mut self) {
        self.app_close = true;
    }

    /// Abort the connection with a RST (RFC 9293 §3.10.5).
    pub fn abort(&mut self) {
        if !matches!(self.state, State::Closed | State::Listen) {
            self.rst_pending = true;
        }
    }

    /// Hold (true) or resume reading delivered data; on resuming, what is
    /// waiting is read (and the window reopened) as it would have been.
    pub fn set_reader_paused(&mut self, paused: bool, now: Time) {
        self.reader_paused = paused;
        if !paused {
            let instant = self.cfg.read_rate_bps.is_none() && self.app_unread > 0;
            self.read_all(now);
            if instant {
                self.maybe_window_update();
            }
        }
    }

    /// The application reads what was delivered: all of it at once, or, with
    /// `read_rate_bps`, one chunk (up to an MSS) at a time at that rate.
    fn read_all(&mut self, now: Time) {
        if self.reader_paused || self.app_unread == 0 {
            return;
        }
        match self.cfg.read_rate_bps {
            None => {
                self.newly_read += self.app_unread;
                self.stats.bytes_read += self.app_unread;
                self.app_unread = 0;
                self.rcv_space_adjust(now);
            }
            Some(rate) => {
                if self.read_busy.is_none() {
                    let chunk = self.app_unread.min(self.mss.max(1));
                    let ns = (chunk as u128 * 8 * 1_000_000_000).div_ceil(rate as u128);
                    self.read_busy = Some((now.saturating_add(ns as Time), chunk));
                }
            }
        }
    }

    /// A rate-limited read finished: free its buffer space, reopen the window
    /// if that is worth an ACK, go on reading.
    fn finish_read(&mut self, chunk: u64, now: Time) {
        self.read_busy = None;
        self.app_unread -= chunk;
        self.newly_read += chunk;
        self.stats.bytes_read += chunk;
        self.rcv_space_adjust(now);
        self.maybe_window_update();
        self.read_all(now);
    }

    /// Linux's `tcp_rcv_space_adjust` after the application read (`rcv_window = "linux"`).
    fn rcv_space_adjust(&mut self, now: Time) {
        if let Some(w) = self.rwin.as_mut() {
            let span = self.reasm.ooo_end().map_or(0, |e| e - self.reasm.rcv_nxt);
            w.on_read(now, self.stats.bytes_read, self.app_unread, span);
        }
    }

    /// Bytes held in the receive buffer: unread and out of order.
    fn rcv_held(&self) -> u64 {
        self.app_unread + self.reasm.ooo_bytes()
    }

    /// Window update (as Linux's tcp_cleanup_rbuf): ACK at once when the
    /// window the peer knows is at most half the buffer and the one we can
    /// now offer is at least twice it and larger by the receiver-SWS step
    /// (RFC 9293 §3.8.6.2.2).
    fn maybe_window_update(&mut self) {
        if self.ack_pending || !self.state_synchronized() {
            return;
        }
        let known = self.known_window();
        if let Some(w) = &self.rwin {
            // tcp_cleanup_rbuf: the window the peer knows is at most half the
            // clamp and the one we would offer now at least twice it.
            let (new, _) = w.peek_window(self.rcv_held(), known);
            if 2 * known <= w.window_clamp() && new > 0 && new >= 2 * known {
                self.ack_pending = true;
                self.stats.window_updates += 1;
            }
            return;
        }
        let avail = self.rcv_window();
        if known * 2 <= self.cfg.rcv_buf && avail >= 2 * known && avail - known >= self.sws_step() {
            self.ack_pending = true;
            self.stats.window_updates += 1;
        }
    }

    fn state_synchronized(&self) -> bool {
        !matches!(
            self.state,
            State::Closed | State::Listen | State::SynSent | State::SynRcvd
        )
    }

    /// The window the peer was last told: advertised right edge − RCV.NXT.
    fn known_window(&self) -> u64 {
        self.adv_right.saturating_sub(self.reasm.rcv_nxt)
    }

    /// Receiver SWS avoidance step (RFC 9293 §3.8.6.2.2):
    /// min(Fr · RCV.BUFF, Eff.snd.MSS) with Fr = 1/2.
    fn sws_step(&self) -> u64 {
        (self.cfg.rcv_buf / 2).min(self.mss)
    }

    /// The window to advertise: all free buffer space with an instant reader
    /// (it is refilled on every read); with a slow or paused reader the
    /// right edge moves on only in steps of at least `sws_step`
    /// (RFC 9293 §3.8.6.2.2) and never moves left.
    fn advertised_window(&self) -> u64 {
        let avail = self.rcv_window();
        if self.cfg.read_rate_bps.is_none() && !self.reader_paused {
            return avail;
        }
        let known = self.known_window();
        if avail >= known + self.sws_step() {
            avail
        } else {
            known.min(avail)
        }
    }

    /// Bytes delivered but not yet read by the application (they occupy the
    /// receive buffer).
    pub fn unread(&self) -> u64 {
        self.app_unread
    }

    /// Bytes the receiving application read since the last call.
    pub fn take_read(&mut self) -> u64 {
        std::mem::take(&mut self.newly_read)
    }

    /// The driver reports, after this endpoint sent an ACK, how many packets
    /// wait ahead of it in the local uplink interface queue; with ACK
    /// congestion control on (RFC 3449 §4.3) this adapts the ACK ratio.
    pub fn on_uplink_backlog(&mut self, queued_ahead: u32) {
        if let Some(c) = self.ack_cc.as_mut() {
            let d = c.on_ack_sent(queued_ahead);
            self.ack_policy.set_ratio(Some(d));
        }
    }

    /// Whether receiver-side ACK congestion control is on.
    pub fn ack_cc_enabled(&self) -> bool {
        self.ack_cc.is_some()
    }

    /// Current ACK ratio of the ACK congestion control (None when off).
    pub fn ack_cc_ratio(&self) -> Option<u32> {
        self.ack_cc.as_ref().map(|c| c.ratio())
    }

    /// Set the receiver's ACK ratio at run time (RFC 5690).
    pub fn set_ack_ratio(&mut self, r: Option<u32>) {
        self.ack_policy.set_ratio(r);
    }

    // ------------------------------------------------------------------
    // Accessors
    // ------------------------------------------------------------------

    pub fn state(&self) -> State {
        self.state
    }
    pub fn stats(&self) -> &Stats {
        &self.stats
    }
    pub fn cwnd(&self) -> u64 {
        self.ccs.cwnd
    }
    pub fn ssthresh(&self) -> u64 {
        self.ccs.ssthresh
    }
    pub fn srtt(&self) -> Time {
        self.rtt.srtt()
    }
    pub fn rttvar(&self) -> Time {
        self.rtt.rttvar()
    }
    pub fn rto(&self) -> Time {
        self.rtt.rto()
    }
    pub fn mss(&self) -> u64 {
        self.mss
    }
    /// Bytes in flight (RFC 6675 pipe).
    pub fn in_flight(&self) -> u64 {
        self.sb.pipe()
    }
    /// Data bytes sent and not cumulatively acknowledged.
    pub fn outstanding(&self) -> u64 {
        self.sb.outstanding()
    }
    pub fn in_recovery(&self) -> bool {
        self.rec.in_recovery
    }
    /// Skbs `tcp_tso_should_defer` held back (`tso_model = "linux"`).
    pub fn tso_deferrals(&self) -> Option<u64> {
        self.tso.as_ref().map(|t| t.deferrals)
    }
    /// The sender's recovery state in Linux's terms (`tcp_ca_state`).
    pub fn ca_state(&self) -> CaState {
        self.rec.ca_state(self.sb.sacked_bytes())
    }
    pub fn local_port(&self) -> u16 {
        self.local_port
    }
    /// Data bytes acknowledged by the peer.
    pub fn data_acked(&self) -> u64 {
        self.snd_una.saturating_sub(1).min(self.data_end_total())
    }
    /// Receive side: next expected data offset (payload bytes received in order).
    pub fn rcv_data_in_order(&self) -> u64 {
        self.reasm.rcv_nxt.saturating_sub(1)
    }
    /// Receive side: has data byte `k` (0-based) arrived?
    pub fn has_received_byte(&self, k: u64) -> bool {
        self.reasm.has_byte(k + 1)
    }
    /// The peer closed its direction and all its data was delivered.
    pub fn peer_finished(&self) -> bool {
        self.peer_fin.is_some_and(|f| self.reasm.rcv_nxt > f)
    }
    /// Everything we supplied was acknowledged, FIN included.
    pub fn send_finished(&self) -> bool {
        self.fin_acked
    }
    pub fn is_closed(&self) -> bool {
        self.state == State::Closed
    }
    /// Sender: the sequence offset one past the highest byte sent.
    /// Transit-time feedback from the receiving host (simulator metadata
    /// carried with an ACK; thesis §4.3): handed to the congestion control.
    pub fn on_transit_feedback(&mut self, fb: &TransitFeedback, now: Time) {
        self.cc.on_transit_feedback(&mut self.ccs, fb, now);
        self.ccs.cwnd = self.ccs.cwnd.min(self.ccs.max_cwnd);
    }

    pub fn snd_max(&self) -> u64 {
        self.snd_max
    }
    pub fn snd_una(&self) -> u64 {
        self.snd_una
    }
    /// The window, in bytes, that a segment's window field from the peer
    /// advertises (RFC 7323 §2.3: shifted by the peer's scale; a SYN's
    /// field is never scaled).
    pub fn peer_window(&self, seg: &Segment) -> u64 {
        if seg.flags.syn() {
            seg.window as u64
        } else {
            (seg.window as u64) << self.snd_wscale
        }
    }
    pub fn cc_name(&self) -> &'static str {
        self.cc.name()
    }

    /// Internal consistency checks (run by the simulator at the end of
    /// every connection): scoreboard counters, sequence ordering.
    pub fn check_invariants(&self) -> Result<(), String> {
        self.sb.check_counters()?;
        if self.snd_una > self.snd_max {
            return Err(format!(
                "SND.UNA {} > SND.MAX {}",
                self.snd_una, self.snd_max
            ));
        }
        if let (Some(f), Some(l)) = (self.sb.front(), self.sb.back()) {
            if f.start < self.snd_una || l.end > self.snd_max {
                return Err(format!(
                    "scoreboard [{}, {}) outside [SND.UNA {}, SND.MAX {})",
                    f.start, l.end, self.snd_una, self.snd_max
                ));
            }
        }
        Ok(())
    }

    // ------------------------------------------------------------------
    // Helpers
    // ------------------------------------------------------------------

    /// Offset one past the last data byte the app supplied (capped so it
    /// never overflows for an unlimited source).
    fn data_end_total(&self) -> u64 {
        self.app_supply.min(u64::MAX / 4)
    }

    /// How far new data may be taken: app supply and send buffer.
    fn avail_end(&self) -> u64 {
        if let Some(s) = &self.sndbuf {
            return (1 + self.data_end_total()).min(s.write_end());
        }
        let by_buf = self.snd_una.max(1) + self.cfg.snd_buf;
        (1 + self.data_end_total()).min(by_buf)
    }

    /// TSval at `now` (RFC 7323 §5.4: a clock ticking every `ts_granularity`).
    fn ts_now(&self, now: Time) -> u32 {
        // now / g, without the division while `now` stays in the last tick
        // asked (every segment of one event, and the ACK that follows): a
        // 64-bit division is one instruction but tens of cycles.
        let g = self.cfg.ts_granularity;
        let (start, ticks) = self.ts_tick.get();
        let ticks = if now >= start && now - start < g {
            ticks
        } else {
            let t = now / g;
            self.ts_tick.set((t * g, t));
            t
        };
        (ticks as u32).wrapping_add(self.ts_offset)
    }

    fn rcv_window(&self) -> u64 {
        match &self.rwin {
            // tcp_full_space less what is unread (the window data may fill).
            Some(w) => w.full_space().saturating_sub(self.app_unread),
            None => self.cfg.rcv_buf.saturating_sub(self.app_unread),
        }
    }

    fn push_event(&mut self, e: Event) {
        self.events.push_back(e);
    }

    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    /// Earliest deadline of the retransmission, delayed-ACK and persist
    /// timers and of a rate-limited read.
    #[inline]
    pub fn poll_timeout(&self) -> Option<Time> {
        // Called after every input. A plain fold over the four options: an
        // array iterator with flatten().min() did not optimise to this
        // (~40 instead of ~14 instructions a call, measured with callgrind).
        fn earlier(a: Option<Time>, b: Option<Time>) -> Option<Time> {
            match (a, b) {
                (Some(x), Some(y)) => Some(x.min(y)),
                (x, None) => x,
                (None, y) => y,
            }
        }
        let t = earlier(self.rtx_deadline, self.ack_policy.deadline());
        let t = earlier(t, self.persist_deadline);
        let t = earlier(t, self.read_busy.map(|(t, _)| t));
        if self.rec.rack_deadline.is_none()
            && self.rec.tlp_deadline.is_none()
            && self.pacer.is_none()
        {
            return t;
        }
        let t = earlier(t, self.pacer.as_ref().and_then(|p| p.deadline));
        earlier(earlier(t, self.rec.rack_deadline), self.rec.tlp_deadline)
    }

    fn arm_rtx_if_idle(&mut self, now: Time) {
        // RFC 6298 §5.1: start the timer when sending data if it is not running.
        if self.rtx_deadline.is_none() {
            self.rtx_deadline = Some(now.saturating_add(self.rtt.rto()));
        }
    }

    fn restart_rtx(&mut self, now: Time) {
        // RFC 6298 §5.3: restart the timer so it expires after RTO.
        self.rtx_deadline = Some(now.saturating_add(self.rtt.rto()));
    }

    // ------------------------------------------------------------------
    // Segment construction
    // ------------------------------------------------------------------

    fn base_segment(&mut self, flags: Flags, seq: u64, payload_len: u32, now: Time) -> Segment {
        let mut seg = Segment {
            src_port: self.local_port,
            dst_port: self.remote_port,
            seq: to_wire(self.iss, seq),
            ack: 0,
            flags,
            window: 0,
            options: TcpOptions::default(),
            payload_len,
            ecn: 0,
        };
        if let (Some((ack, window)), true) = (self.relay, flags.ack()) {
            // Relay mode: the reverse stream is the originator's to acknowledge.
            seg.ack = ack;
            seg.window = window;
        } else if flags.ack() {
            seg.ack = to_wire(self.irs, self.reasm.rcv_nxt);
            let bytes = match self.rwin.as_mut() {
                // A SYN-ACK's window is never scaled (RFC 7323 §2.2; syn_segment).
                Some(w) if flags.syn() => w.syn_window(),
                Some(w) => {
                    let known = self.adv_right.saturating_sub(self.reasm.rcv_nxt);
                    let held = self.app_unread + self.reasm.ooo_bytes();
                    let (win, quick_off) = w.select_window(held, known);
                    if quick_off {
                        self.ack_policy.clear_quick();
                    }
                    win
                }
                None => self.advertised_window(),
            };
            let wnd = (bytes >> self.rcv_wscale).min(65535);
            seg.window = wnd as u16;
            self.adv_right = self.reasm.rcv_nxt + (wnd << self.rcv_wscale);
            if let (Some(w), true) = (&self.rwin, flags.syn()) {
                // The SYN-ACK offers the unscaled first window.
                self.adv_right = self.reasm.rcv_nxt + w.syn_window();
            }
            self.last_ack_sent = self.reasm.rcv_nxt;
            self.ecn.on_send_ack(&mut seg);
            self.ack_pending = false;
            self.ack_policy.on_ack_sent();
            self.stats.acks_sent += 1;
        }
        if self.ts_ok {
            // RFC 7323 §3.2: TSval from our clock, TSecr = TS.Recent.
            let ecr = if flags.ack() { self.ts_recent } else { 0 };
            seg.options.timestamps = Some((self.ts_now(now), ecr));
        }
        if self.sack_ok && flags.ack() && (self.reasm.has_ooo() || self.reasm.pending_dsack()) {
            let max = if self.ts_ok { 3 } else { MAX_SACK_BLOCKS };
            let mut blocks = [(0u64, 0u64); MAX_SACK_BLOCKS];
            let n = self.reasm.sack_blocks(&mut blocks[..max]);
            for (k, &(l, r)) in blocks[..n].iter().enumerate() {
                seg.options.sack[k] = SackBlock {
                    left: to_wire(self.irs, l),
                    right: to_wire(self.irs, r),
                };
            }
            seg.options.sack_len = n as u8;
        }
        self.stats.segments_sent += 1;
        seg
    }

    #[cold]
    #[inline(never)]
    fn syn_segment(&mut self, now: Time) -> Segment {
        let is_synack = self.state == State::SynRcvd;
        let flags = if is_synack {
            Flags::SYN | Flags::ACK
        } else {
            Flags::SYN
        };
        let mut seg = self.base_segment(flags, 0, 0, now);
        self.ecn.on_send_syn(&mut seg, is_synack);
        // RFC 7323 §2.2: the window field of a SYN is never scaled.
        seg.window = match &self.rwin {
            Some(w) => w.syn_window() as u16,
            None => self.cfg.rcv_buf.min(65535) as u16,
        };
        // RFC 6691 §2 (`mss_option_rfc6691`): the option leaves out the
        // timestamp option's 12 bytes that every segment will carry.
        let opt_room = if self.cfg.mss_option_rfc6691 && self.cfg.timestamps {
            12
        } else {
            0
        };
        seg.options.mss = Some((self.cfg.mss + opt_room).min(65535) as u16);
        let offer_ws = self.cfg.window_scaling && (!is_synack || self.snd_wscale_offered());
        if offer_ws {
            seg.options.wscale = Some(self.rcv_wscale);
        }
        let offer_sack = self.cfg.sack && (!is_synack || self.sack_ok);
        seg.options.sack_permitted = offer_sack;
        let offer_ts = self.cfg.timestamps && (!is_synack || self.ts_ok);
        seg.options.timestamps = if offer_ts {
            let ecr = if is_synack { self.ts_recent } else { 0 };
            Some((self.ts_now(now), ecr))
        } else {
            None
        };
        if self.snd_max == 0 {
            self.snd_max = 1;
        }
        self.syn_sent_at = now;
        self.arm_rtx_if_idle(now);
        seg
    }

    fn snd_wscale_offered(&self) -> bool {
        self.ws_peer_offered
    }

    // ------------------------------------------------------------------
    // Output
    // ------------------------------------------------------------------

    /// The next segment to send now, if any.
    pub fn poll_transmit(&mut self, now: Time) -> Option<Segment> {
        if self.rst_pending {
            self.rst_pending = false;
            let seq = self.snd_max;
            let seg = self.base_segment(Flags::RST | Flags::ACK, seq, 0, now);
            self.enter_closed(true);
            return Some(seg);
        }
        match self.state {
            State::Closed | State::Listen => return None,
            State::SynSent | State::SynRcvd => {
                if self.syn_pending {
                    self.syn_pending = false;
                    return Some(self.syn_segment(now));
                }
                return None;
            }
            _ => {}
        }
        if let Some((ack, ece)) = self.prior_ack.take() {
            return Some(self.prior_state_ack(ack, ece, now));
        }
        if let Some(seg) = self.next_data_segment(now) {
            self.lx_cwnd.sent |= seg.payload_len > 0;
            return Some(seg);
        }
        if self.sndbuf_wakeup() {
            if let Some(seg) = self.next_data_segment(now) {
                self.lx_cwnd.sent |= seg.payload_len > 0;
                return Some(seg);
            }
        }
        if self.linux_cwnd_use() {
            self.linux_cwnd_validate();
        }
        if let Some(seg) = self.maybe_fin(now) {
            return Some(seg);
        }
        if self.probe_pending && self.zero_window_stalled() {
            // Zero-window probe (RFC 9293 §3.8.6.1 allows a retransmission;
            // as Linux's tcp_xmit_probe_skb): an already acknowledged
            // sequence number, no data, so the peer must answer with an ACK
            // carrying its current window and nothing enters the flight.
            self.probe_pending = false;
            self.stats.window_probes += 1;
            let seq = self.snd_una - 1;
            let seg = self.base_segment(Flags::ACK, seq, 0, now);
            self.update_persist(now);
            return Some(seg);
        }
        if self.ack_pending && self.relay.is_some() {
            // Relay mode: the peer's segments are acknowledged end to end.
            self.ack_pending = false;
        } else if self.ack_pending {
            let seq = self.snd_max;
            return Some(self.base_segment(Flags::ACK, seq, 0, now));
        }
        self.update_persist(now);
        None
    }

    fn can_send_data_state(&self) -> bool {
        matches!(
            self.state,
            State::Established
                | State::CloseWait
                | State::FinWait1
                | State::Closing
                | State::LastAck
        )
    }

    fn next_data_segment(&mut self, now: Time) -> Option<Segment> {
        if !self.can_send_data_state() {
            return None;
        }
        // Nothing in flight, nothing to retransmit or probe, no new data
        // (a pure receiver's every poll, an application-limited sender's):
        // every rule below finds nothing (an empty scoreboard's pipe is 0,
        // and no pacing timer is armed while nothing could be sent), so
        // only their verdict on cwnd is left to record.
        if self.sb.is_empty()
            && self.force_rtx.is_none()
            && !self.rec.tlp_pending
            && self.frto_new_allow == 0
            && !self.rec.in_recovery
            && !self.rec.after_rto
            && self.sb.lost_bytes() == 0
            && self.new_data_len().is_none()
        {
            self.cwnd_limited = self.sb.pipe() + self.mss > self.send_cwnd();
            return None;
        }
        // Forced retransmission: fast retransmit (RFC 5681 §3.2 step 2),
        // timeout (RFC 6298 §5.4), NewReno partial ACK (RFC 6582 §3.2 step 5).
        if self.pace_blocked(now) {
            return None;
        }
        if let Some((seq, reason)) = self.force_rtx.take() {
            if let Some(i) = self.sb.find(seq) {
                if !self.sb.get(i).unwrap().has(SACKED) {
                    return Some(self.retransmit(i, reason, now));
                }
            }
        }
        if self.rec.tlp_pending {
            self.rec.tlp_pending = false;
            if let Some(seg) = self.send_tlp_probe(now) {
                return Some(seg);
            }
        }
        if self.frto_holds() && self.frto_new_allow > 0 {
            // RFC 5682 §2.1 step 2b: transmit up to two new segments
            // (regardless of cwnd; the detection needs them).
            if let Some(len) = self.new_data_len() {
                self.frto_new_allow -= 1;
                return Some(self.send_new(len, now));
            }
            self.frto_new_allow = 0;
        }
        let pipe = self.sb.pipe();
        let cwnd = self.send_cwnd();
        if pipe + self.mss > cwnd {
            // RFC 6675 §5 step (C): send only while cwnd − pipe ≥ 1 SMSS.
            self.cwnd_limited = true;
            return None;
        }
        self.cwnd_limited = pipe * 2 >= cwnd;
        // RFC 6675 §4 NextSeg rule 1 (and go-back-N after a timeout); held
        // while F-RTO decides (RFC 5682 §2.1 step 2: do not rewind SND.NXT).
        if self.frto_holds() {
            return None;
        }
        if self.rec.in_recovery || self.rec.after_rto || self.sb.lost_bytes() > 0 {
            if let Some(i) = self.sb.next_lost() {
                let reason = if self.rec.in_recovery {
                    if self.sack_ok {
                        RtxReason::SackRecovery
                    } else {
                        RtxReason::PartialAck
                    }
                } else {
                    RtxReason::AfterTimeout
                };
                return Some(self.retransmit(i, reason, now));
            }
        }
        // Rule 2: new data, if the receiver's window allows.
        if let Some(len) = self.new_data_len() {
            if self.tso.is_some() && self.tso_defers(now) {
                // tcp_write_xmit: break with is_cwnd_limited (or rwnd) set.
                self.cwnd_limited = true;
                return None;
            }
            if self.rec.dupacks > 0 && !self.rec.in_recovery {
                self.rec.lt_bytes += len;
            }
            return Some(self.send_new(len, now));
        }
        if self.rec.in_recovery && self.sack_ok {
            // Rule 3.
            if let Some(i) = self.sb.next_unsacked_below_high_sacked() {
                return Some(self.retransmit(i, RtxReason::SackRecovery, now));
            }
            // Rule 4: one rescue retransmission per recovery.
            if self.rec.rescue_rxt.is_none_or(|r| self.snd_una > r) {
                if let Some(i) = self.sb.highest_unsacked() {
                    self.rec.rescue_rxt = Some(self.rec.recover);
                    return Some(self.retransmit(i, RtxReason::Rescue, now));
                }
            }
        }
        self.cwnd_limited = false;
        None
    }

    /// Whether the controller is Linux's (`reno`/`cubic = "linux"`), whose
    /// growth asks tcp_is_cwnd_limited() (`may_raise_cwnd`).
    #[inline]
    fn linux_cwnd_use(&self) -> bool {
        self.cfg.reno_linux || self.cfg.cubic_linux
    }

    /// tcp_write_xmit's end: `is_cwnd_limited |= tcp_packets_in_flight >=
    /// cwnd`, then tcp_cwnd_validate() when it sent something or cwnd
    /// stopped it. The record is per window of data: once cwnd-limited it
    /// stays so until SND.UNA passes `cwnd_usage_seq` (the SND.NXT of that
    /// moment), and while it is not, `max_packets_out` keeps the most that
    /// was outstanding (SACKed included: `packets_out`).
    fn linux_cwnd_validate(&mut self) {
        let limited = self.cwnd_limited || self.sb.pipe() >= self.send_cwnd();
        let lx = &mut self.lx_cwnd;
        if !(lx.sent || limited) {
            return;
        }
        lx.sent = false;
        let out = self.sb.outstanding();
        if self.snd_una >= lx.usage_seq
            || limited
            || (!lx.is_cwnd_limited && out > lx.max_packets_out)
        {
            lx.is_cwnd_limited = limited;
            lx.max_packets_out = out;
            lx.usage_seq = self.snd_max;
        }
    }

    /// May this ACK grow cwnd? Linux's controllers ask
    /// tcp_is_cwnd_limited(): the window's record above, or, in slow start,
    /// "ensure cwnd grows to twice what was ACKed" (cwnd < 2 ·
    /// max_packets_out); the others ask whether the transmit loop last
    /// stopped at cwnd.
    fn may_raise_cwnd(&self) -> bool {
        if !self.linux_cwnd_use() {
            return self.cwnd_limited;
        }
        let lx = &self.lx_cwnd;
        lx.is_cwnd_limited || (self.ccs.in_slow_start() && self.ccs.cwnd < 2 * lx.max_packets_out)
    }

    /// The congestion window the sending rules compare the pipe with.
    #[inline]
    fn send_cwnd(&self) -> u64 {
        let mut cwnd = self.ccs.cwnd;
        if self.rec.dupacks > 0
            && (!self.sack_ok || self.cfg.limited_transmit_sack)
            && !self.rec.in_recovery
            && self.cfg.limited_transmit
        {
            // RFC 3042: on the first two dupacks, allow new data beyond cwnd
            // (with SACK only when asked: on top of RFC 6675's pipe, which
            // already falls by each SACKed segment).
            cwnd += self.rec.dupacks.min(2) as u64 * self.mss;
        }
        cwnd
    }

    /// Length of the next new segment, if one may be sent now (app supply,
    /// receiver window, sender SWS avoidance).
    fn new_data_len(&self) -> Option<u64> {
        let avail = self.avail_end();
        if self.snd_max >= avail || self.fin_sent {
            return None;
        }
        let wnd_edge = self.snd_una + self.snd_wnd;
        if self.snd_max >= wnd_edge {
            return None;
        }
        let len = self
            .mss
            .min(avail - self.snd_max)
            .min(wnd_edge - self.snd_max);
        // Sender SWS avoidance (RFC 9293 §3.8.6.2.1) : send a short
        // segment only if it is the end of the available data or the
        // window cannot take more.
        let send = len == self.mss || self.snd_max + len == avail || len * 2 >= self.snd_wnd;
        // tcp_write_xmit -> tcp_nagle_test for a short segment of Linux's
        // send buffer (sndbuf.rs; a FIN goes at once).
        if send
            && len < self.mss
            && !(self.app_close && self.snd_max + len == 1 + self.data_end_total())
            && self
                .sndbuf
                .as_deref()
                .is_some_and(|s| s.nagle_holds(self.snd_una))
        {
            return None;
        }
        send.then_some(len)
    }

    /// Could new data be sent after an ACK to `una` (F-RTO step 2b)?
    fn new_data_state(&self, una: u64) -> NewData {
        if self.fin_sent || self.snd_max >= self.avail_end() {
            NewData::Exhausted
        } else if self.snd_max >= una + self.snd_wnd {
            NewData::NoWindow
        } else {
            NewData::Yes
        }
    }

    fn frto_holds(&self) -> bool {
        self.detector
            .as_ref()
            .is_some_and(|d| d.holds_retransmissions())
    }

    fn data_flags(&self, end: u64) -> Flags {
        let mut f = Flags::ACK;
        if end == self.avail_end() {
            f |= Flags::PSH;
        }
        if self.fin_sent && end == 1 + self.data_end_total() {
            f |= Flags::FIN;
        }
        f
    }

    fn send_new(&mut self, len: u64, now: Time) -> Segment {
        // __tcp_transmit_skb: "Force a PSH flag on all (GSO) packets to
        // expedite GRO flush at receiver" (tcp_skb_pcount(skb) > 1); GSO
        // leaves it on the skb's last segment (tcp_gso_segment).
        let gso_push = self
            .tso
            .as_deref()
            .is_some_and(|t| t.in_skb(now) && t.skb_segs() > 1 && t.last_of_skb());
        self.on_data_sent(len, now);
        let start = self.snd_max;
        let end = start + len;
        self.sb.push(start, end, now);
        self.snd_max = end;
        // Piggyback the FIN on the last data segment.
        if self.app_close && end == 1 + self.data_end_total() {
            self.fin_sent = true;
            self.fin_sent_at = now;
            self.snd_max += 1;
            self.fin_wait_transition();
        }
        if self.sndbuf.is_some() {
            let segs = self.skb_segs(now);
            let mss = self.mss;
            if let Some(s) = self.sndbuf.as_mut() {
                s.on_transmit(start, end, now, segs);
                if len < mss {
                    s.on_short_sent(end, len, mss);
                }
            }
        }
        let mut flags = self.data_flags(end);
        if gso_push {
            flags |= Flags::PSH;
        }
        let mut seg = self.base_segment(flags, start, len as u32, now);
        self.ecn.on_send_new_data(&mut seg);
        self.stats.data_segments_sent += 1;
        self.stats.payload_bytes_sent += len;
        self.arm_rtx_if_idle(now);
        if let (true, Some(p)) = (self.rec.in_recovery, self.rec.prr.as_mut()) {
            // RFC 6937 §3: prr_out += (data sent).
            p.on_sent(len);
        } else if let Some(c) = self.ecn.cwr_mut() {
            c.prr.on_sent(len);
        }
        if self.cfg.tlp {
            // RFC 8985 §7.2: (re)start the PTO after sending new data.
            self.schedule_tlp(now);
        }
        seg
    }

    /// RFC 8985 §7.2: arm the PTO when the sender is in the Open state
    /// (no recovery, nothing SACKed), no probe is outstanding and data is
    /// in flight; otherwise the RTO alone guards the flight.
    fn schedule_tlp(&mut self, now: Time) {
        let open = self.sack_ok
            && !self.rec.in_recovery
            && !self.rec.after_rto
            && self.sb.sacked_bytes() == 0
            && self.rec.tlp.end_seq.is_none()
            && !self.sb.is_empty()
            && self.can_send_data_state();
        if !open {
            self.rec.tlp_deadline = None;
            return;
        }
        let srtt = (self.rtt.srtt() > 0).then(|| self.rtt.srtt());
        let one = self.sb.outstanding() <= self.mss;
        let rto_left = self.rtx_deadline.map(|d| d.saturating_sub(now));
        self.rec.tlp_deadline = Some(match self.cfg.timers {
            TimerKind::Exact => now + Tlp::pto(srtt, one, rto_left),
            TimerKind::Linux => {
                let fire = Tlp::linux_pto_fire(now, srtt, one, rto_left);
                // The probe and the RTO are one timer in Linux (icsk_retransmit_timer):
                // the armed probe replaced the RTO, so a probe capped at the RTO's
                // jiffies but fired a tick after it still comes first, and the RTO is
                // re-armed after it (tcp_send_loss_probe).
                if self.rtx_deadline.is_some_and(|d| d < fire) {
                    self.rtx_deadline = Some(fire);
                }
                fire
            }
        });
    }

    /// RFC 8985 §7.3: the PTO expired. Send one new segment if the
    /// receiver's window allows (regardless of cwnd), else retransmit the
    /// highest-sequence segment; remember TLP.end_seq and re-arm the RTO.
    #[cold]
    #[inline(never)]
    fn send_tlp_probe(&mut self, now: Time) -> Option<Segment> {
        if self.rec.tlp.end_seq.is_some() || self.rec.in_recovery || self.rec.after_rto {
            return None;
        }
        let seg = if let Some(len) = self.new_data_len() {
            // Mark the episode first so send_new does not re-arm the PTO.
            let start = self.snd_max;
            self.rec.tlp.on_probe(start + len, false);
            let seg = self.send_new(len, now);
            self.push_event(Event::Tlp {
                seq: start,
                len: len as u32,
                kind: 0,
                cwnd: self.ccs.cwnd,
            });
            seg
        } else {
            let i = self.sb.len().checked_sub(1)?;
            let last = *self.sb.get(i)?;
            if last.has(SACKED) {
                return None;
            }
            self.rec.tlp.on_probe(self.snd_max, true);
            self.push_event(Event::Tlp {
                seq: last.start,
                len: last.len() as u32,
                kind: 1,
                cwnd: self.ccs.cwnd,
            });
            self.retransmit(i, RtxReason::Tlp, now)
        };
        self.restart_rtx(now);
        Some(seg)
    }

    #[cold]
    #[inline(never)]
    fn retransmit(&mut self, i: usize, reason: RtxReason, now: Time) -> Segment {
        let s = *self.sb.get(i).unwrap();
        self.on_data_sent(s.len(), now);
        self.sb.on_retransmit(i, now);
        if self.sndbuf.is_some() {
            let segs = self.tso_segs();
            if let Some(b) = self.sndbuf.as_mut() {
                b.on_retransmit(s.start, s.end, now, segs);
            }
        }
        if let (true, Some(p)) = (self.rec.in_recovery, self.rec.prr.as_mut()) {
            // RFC 6937 §3: prr_out += (data sent).
            p.on_sent(s.len());
        } else if let Some(c) = self.ecn.cwr_mut() {
            c.prr.on_sent(s.len());
        }
        let len = s.len();
        let flags = self.data_flags(s.end);
        let seg = self.base_segment(flags, s.start, len as u32, now);
        self.stats.data_segments_sent += 1;
        self.stats.payload_bytes_sent += len;
        self.stats.retransmitted_segments += 1;
        self.stats.retransmitted_bytes += len;
        if let Some(d) = self.detector.as_mut() {
            d.on_retransmit(s.start, s.end);
        }
        if let Some(d) = self.fr_detector.as_mut() {
            // RFC 3708 §3 step 2: count the episode's retransmissions.
            d.on_retransmit(s.start, s.end);
        }
        self.push_event(Event::Retransmit {
            seq: s.start,
            len: len as u32,
            reason,
        });
        self.arm_rtx_if_idle(now);
        if self.rtt.profile().restart_on_rtx
            && s.start == self.snd_una
            && reason != RtxReason::Timeout
        {
            // Linux tcp_xmit_retransmit_queue(): retransmitting the head of the
            // retransmission queue re-arms the retransmission timer (the RTO
            // path already restarted it, RFC 6298 §5.6).
            self.rtx_deadline = Some(now.saturating_add(self.rtt.rto()));
        }
        seg
    }

    fn fin_wait_transition(&mut self) {
        self.state = match self.state {
            State::Established => State::FinWait1,
            State::CloseWait => State::LastAck,
            s => s,
        };
    }

    fn maybe_fin(&mut self, now: Time) -> Option<Segment> {
        if self.fin_resend {
            self.fin_resend = false;
            if self.fin_sent && !self.fin_acked {
                let seq = self.snd_max - 1;
                self.fin_sent_at = now;
                return Some(self.base_segment(Flags::FIN | Flags::ACK, seq, 0, now));
            }
        }
        if !self.app_close || self.fin_sent || !self.can_send_data_state() {
            return None;
        }
        // All data must have been sent first.
        if self.snd_max != 1 + self.data_end_total() {
            return None;
        }
        self.fin_sent = true;
        self.fin_sent_at = now;
        let seq = self.snd_max;
        self.snd_max += 1;
        self.fin_wait_transition();
        self.arm_rtx_if_idle(now);
        Some(self.base_segment(Flags::FIN | Flags::ACK, seq, 0, now))
    }

    // ------------------------------------------------------------------
    // Timers
    // ------------------------------------------------------------------

    pub fn handle_timeout(&mut self, now: Time) {
        if let Some(p) = self.pacer.as_mut() {
            // tcp_pace_kick: the pacing gap is over; the driver polls again.
            if p.on_timer(now) {
                if let Some(t) = self.tso.as_mut() {
                    t.rearm();
                }
            }
        }
        if self.ack_policy.deadline().is_some_and(|d| d <= now) {
            // RFC 5681 §4.2: the delayed-ACK timer expired.
            self.ack_pending = true;
            self.ack_policy.on_ack_sent();
        }
        if self.rec.tlp_deadline.is_some_and(|d| d <= now) {
            // RFC 8985 §7.3: the PTO expired; the probe goes out with the
            // next transmission. The PTO stands in for the RTO (§7.2: it is
            // capped at the RTO's expiry), which is re-armed after the probe.
            self.rec.tlp_deadline = None;
            self.rec.tlp_pending = true;
            if self.rtx_deadline.is_some_and(|d| d <= now) {
                self.restart_rtx(now);
            }
        } else if self.rtx_deadline.is_some_and(|d| d <= now) {
            self.rtx_deadline = None;
            self.on_rto(now);
        }
        if self.rec.rack_deadline.is_some_and(|d| d <= now) {
            // RFC 8985 §6.2 step 5: the reordering timer expired.
            self.rec.rack_deadline = None;
            self.rack_detect(now, true);
            if self.rack_may_enter_recovery() {
                // As Linux's tcp_rack_reo_timeout: one segment's worth of
                // delivery for the PRR step.
                self.enter_recovery(now, self.mss, false);
            }
        }
        if let Some((t, chunk)) = self.read_busy {
            if t <= now {
                self.finish_read(chunk, now);
            }
        }
        if self.persist_deadline.is_some_and(|d| d <= now) {
            // RFC 9293 §3.8.6.1 / RFC 1122 §4.2.2.17: the persist timer
            // expired; probe the zero window, back off like the RTO.
            self.persist_deadline = None;
            // tcp_probe_timer(): after retries2 probes without an ACK, give up.
            let retries2 = self.rtt.profile().retries2;
            if self.probes_out.expired(retries2) {
                let n = self.probes_out.count();
                self.give_up(GiveUpKind::Probe, n, retries2, now);
                return;
            }
            self.probe_pending = true;
            self.persist_backoff = (self.persist_backoff + 1).min(self.cfg.rto.max_backoff);
        }
    }

    /// Data waits, nothing is in flight and the peer's window is zero: the
    /// only thing that can reopen it is an ACK the peer may never resend
    /// (RFC 9293 §3.8.6.1), so the persist timer runs.
    fn zero_window_stalled(&self) -> bool {
        self.can_send_data_state()
            && self.snd_wnd == 0
            && self.snd_max == self.snd_una
            && self.rtx_deadline.is_none()
            && !self.fin_sent
            && self.avail_end() > self.snd_max
    }

    /// Arm or disarm the persist timer. The interval is the RTO (RFC 6298)
    /// doubled per unanswered probe, capped at the profile maximum.
    #[inline]
    fn update_persist(&mut self, now: Time) {
        // An open window with no persist state (after every poll that sends
        // nothing): nothing to arm or clear.
        if self.snd_wnd != 0
            && self.persist_deadline.is_none()
            && self.persist_backoff == 0
            && !self.probe_pending
        {
            return;
        }
        self.update_persist_stalled(now);
    }

    #[inline(never)]
    fn update_persist_stalled(&mut self, now: Time) {
        if !self.zero_window_stalled() {
            self.persist_deadline = None;
            self.persist_backoff = 0;
            self.probe_pending = false;
            return;
        }
        if self.persist_deadline.is_none() && !self.probe_pending {
            self.persist_deadline =
                Some(now.saturating_add(self.rtt.rto_backed_off(self.persist_backoff)));
        }
    }

    /// tcp_write_timeout() -> tcp_write_err() -> tcp_done(): stop
    /// retransmitting and close without a RST; the driver reads why from
    /// `gave_up()`.
    fn give_up(&mut self, what: GiveUpKind, retransmissions: u32, limit: u32, now: Time) {
        self.gave_up = Some(GiveUp {
            what,
            retransmissions,
            limit,
            at: now,
        });
        self.syn_pending = false;
        self.fin_resend = false;
        // Reported as given up, not as a clean close.
        self.closed_reported = true;
        self.force_rtx = None;
        self.state = State::Closed;
        self.rtx_deadline = None;
        self.persist_deadline = None;
        self.rec.tlp_deadline = None;
        self.rec.rack_deadline = None;
        self.sb = Scoreboard::default();
        self.push_event(Event::GaveUp {
            what,
            retransmissions,
        });
    }

    /// Why the connection gave up retransmitting, if it did (`give_up.rs`).
    pub fn gave_up(&self) -> Option<GiveUp> {
        self.gave_up
    }

    fn on_rto(&mut self, now: Time) {
        // tcp_retransmit_timer(): tcp_write_timeout() decides first whether to
        // retransmit at all (RFC 1122 §4.2.3.5 R2).
        let p = *self.rtt.profile();
        match self.state {
            State::SynSent | State::SynRcvd => {
                let (what, limit) = if self.state == State::SynSent {
                    (GiveUpKind::Syn, p.syn_retries)
                } else {
                    (GiveUpKind::SynAck, p.synack_retries)
                };
                if self.write_timeout.syn_expired(limit) {
                    let n = self.write_timeout.retransmits();
                    self.give_up(what, n, limit, now);
                    return;
                }
                // RFC 6298 §5.5/5.6 for the SYN; §5.7 fallback applies on establishment.
                self.rtt.back_off();
                self.syn_retransmitted = true;
                self.syn_pending = true;
                self.stats.retransmitted_segments += 1;
                self.stats.timeouts += 1;
                self.push_event(Event::Retransmit {
                    seq: 0,
                    len: 0,
                    reason: RtxReason::Control,
                });
                self.rtx_deadline = Some(now.saturating_add(self.rtt.rto()));
                return;
            }
            State::Closed | State::Listen | State::TimeWait => return,
            _ => {}
        }
        // The oldest outstanding segment's last transmission (the timer was
        // armed then or later); a bare FIN's, one RTO ago.
        let sent_at = self
            .sb
            .front()
            .map_or(now.saturating_sub(self.rtt.rto()), |s| s.sent_at);
        if (!self.sb.is_empty() || (self.fin_sent && !self.fin_acked))
            && self.write_timeout.expired(now, sent_at, p.retries2)
        {
            let n = self.write_timeout.retransmits();
            self.give_up(GiveUpKind::Data, n, p.retries2, now);
            return;
        }
        if self.sb.is_empty() {
            if self.fin_sent && !self.fin_acked {
                // Retransmit a bare FIN.
                self.rtt.back_off();
                self.stats.timeouts += 1;
                self.stats.retransmitted_segments += 1;
                let seq = self.snd_max - 1;
                let seg_needed = seq;
                self.push_event(Event::Retransmit {
                    seq: seg_needed,
                    len: 0,
                    reason: RtxReason::Control,
                });
                self.fin_resend = true;
                self.rtx_deadline = Some(now.saturating_add(self.rtt.rto()));
            }
            return;
        }
        let first = self.sb.front().copied().unwrap();
        let flight = self.sb.outstanding();
        // RFC 5681 §3.1 eq. 4: only the first timeout of a segment reduces ssthresh.
        let first_expiry = self.rtt.backoff() == 0;
        let id = self.timeout_count;
        self.timeout_count += 1;
        self.stats.timeouts += 1;
        self.push_event(Event::Timeout {
            id,
            seq: first.start,
            len: first.len() as u32,
            backoff: self.rtt.backoff(),
            rto: self.rtt.rto(),
            cwnd: self.ccs.cwnd,
        });
        if first_expiry {
            self.episode_first_id = id;
            // RFC 4015 §3.2 step (0): before cwnd and ssthresh are reduced, save
            // pipe_prev = max(FlightSize, ssthresh), SRTT_prev = SRTT + 2·G,
            // RTTVAR_prev = RTTVAR (later timeouts of the episode keep them).
            let g = self.rtt.profile().granularity;
            self.saved = Saved {
                cwnd: self.ccs.cwnd,
                ssthresh: self.ccs.ssthresh,
                pipe_prev: flight.max(self.ccs.ssthresh.min(u64::MAX / 8)),
                flight,
                srtt_prev: self.rtt.srtt() + 2 * g,
                rttvar_prev: self.rtt.rttvar(),
                snd_max_at_rto: self.snd_max,
            };
        }
        self.frto_new_allow = 0;
        self.rebase = None;
        if let Some(d) = self.fr_detector.as_mut() {
            // A timeout overtook the fast-retransmit episode: its reduction is
            // superseded by the timeout's, nothing is left to undo.
            d.cancel();
        }
        if let Some(d) = self.detector.as_mut() {
            let ts_val = if self.ts_ok {
                Some(((now / self.cfg.ts_granularity) as u32).wrapping_add(self.ts_offset))
            } else {
                None
            };
            d.on_rto(&RtoView {
                now,
                id,
                snd_una: self.snd_una,
                snd_max: self.snd_max,
                ts_val,
                sack: self.sack_ok,
            });
        }
        let basis = self.loss_basis(flight);
        self.cc.on_rto(&mut self.ccs, basis, first_expiry, now);
        // RFC 5681 §3.1: cwnd = LW = 1 full-sized segment.
        self.ccs.cwnd = self.mss;
        // RFC 6675 §5.1 / RFC 6582 §3.2 (after a timeout): everything
        // outstanding is presumed lost; no new recovery before SND.UNA
        // passes what was sent so far.
        self.sb.mark_all_lost();
        if self.cc_owns {
            // tcp_enter_loss -> tcp_set_ca_state(TCP_CA_Loss) -> .set_state.
            self.rec.after_rto = true;
            let mut tp = self.tcp_view(now);
            self.cc.on_loss_state(&mut self.ccs, &mut tp);
            self.sync_cc(&tp);
        }
        self.rec.in_recovery = false;
        self.rec.prr = None;
        // tcp_enter_loss(): the Loss state ends a CWR reduction; CWR is sent.
        self.ecn.end_cwr();
        self.ecn.queue_cwr();
        // RFC 8985 §7: the RTO ends any probe episode; RACK's timer has
        // nothing left to time (everything is marked lost).
        self.rec.tlp = Tlp::default();
        self.rec.tlp_deadline = None;
        self.rec.tlp_pending = false;
        self.rec.rack_deadline = None;
        self.rec.recover = self.snd_max;
        self.rec.dupacks = 0;
        self.rec.after_rto = true;
        self.rec.rescue_rxt = None;
        // RFC 6298 §5.4: retransmit the earliest unacknowledged segment;
        // §5.5: back off; §5.6: restart the timer.
        self.force_rtx = Some((first.start, RtxReason::Timeout));
        self.rtt.back_off();
        self.rtx_deadline = Some(now.saturating_add(self.rtt.rto()));
    }

    // ------------------------------------------------------------------
    // Input
    // ------------------------------------------------------------------

    pub fn handle_segment(&mut self, seg: &Segment, now: Time) {
        if let Some(t) = self.tso.as_mut() {
            // tcp_ack -> tcp_data_snd_check -> tcp_write_xmit.
            t.rearm();
        }
        match self.state {
            State::Closed => {}
            State::Listen => self.on_listen(seg, now),
            State::SynSent => self.on_syn_sent(seg, now),
            _ => self.on_synchronized(seg, now),
        }
    }

    fn parse_syn_options(&mut self, seg: &Segment) {
        let o = &seg.options;
        // RFC 9293 §3.7.1: without an MSS option assume 536.
        let peer_mss = o.mss.map_or(536, |m| m as u64);
        self.mss = (self.cfg.mss as u64).min(peer_mss).max(1);
        if let Some(s) = self.sndbuf.as_mut() {
            s.set_mss_clamp(peer_mss);
        }
        self.ccs.mss = self.mss;
        if self.cfg.initial_window < self.mss {
            self.ccs.cwnd = self.mss;
        }
        self.ws_peer_offered = o.wscale.is_some();
        if let (true, Some(ws)) = (self.cfg.window_scaling, o.wscale) {
            // RFC 7323 §2.3: shift capped at 14.
            self.snd_wscale = ws.min(14);
        } else {
            self.snd_wscale = 0;
            self.rcv_wscale = 0;
            if let Some(w) = self.rwin.as_mut() {
                w.no_wscale();
            }
        }
        self.sack_ok = self.cfg.sack && o.sack_permitted;
        self.ecn.on_rcv_syn(seg);
        self.ts_ok = self.cfg.timestamps && o.timestamps.is_some();
        if self.cfg.mss_option_rfc6691 && self.ts_ok {
            // RFC 6691 §2: the peer's option counts no TCP options; ours
            // carry timestamps (RFC 7323 §3: 10 bytes, padded to 12).
            self.mss = (self.cfg.mss as u64)
                .min(peer_mss.saturating_sub(12))
                .max(1);
            self.ccs.mss = self.mss;
        }
        if let Some((tsval, _)) = o.timestamps {
            self.ts_recent = tsval;
        }
        self.irs = seg.seq;
        // SYN consumes offset 0 on the peer's side: data starts at 1.
        self.reasm = Reassembly::new(1);
        self.last_ack_sent = 1;
        self.snd_wnd = seg.window as u64; // RFC 7323 §2.2: not scaled in a SYN
        self.snd_wl1 = 0;
        self.snd_wl2 = 0;
    }

    fn on_listen(&mut self, seg: &Segment, _now: Time) {
        if seg.flags.rst() || !seg.flags.syn() || seg.flags.ack() {
            return;
        }
        self.parse_syn_options(seg);
        self.state = State::SynRcvd;
        self.syn_pending = true;
    }

    fn on_syn_sent(&mut self, seg: &Segment, now: Time) {
        if !(seg.flags.syn() && seg.flags.ack()) {
            return;
        }
        if seg.ack != to_wire(self.iss, 1) {
            return;
        }
        if seg.flags.rst() {
            self.enter_closed(false);
            return;
        }
        self.parse_syn_options(seg);
        self.snd_una = 1;
        self.establish(now);
        self.ack_pending = true;
    }

    /// The handshake's RTT sample, to the profile's estimator.
    fn handshake_sample(&mut self, r: Time) {
        if self.rtt.is_linux() {
            self.rtt.note(r);
            self.rtt.on_sample_linux(r, self.snd_una, self.snd_max);
        } else {
            self.rtt.on_sample(r);
        }
    }

    fn establish(&mut self, now: Time) {
        self.state = State::Established;
        self.rtx_deadline = None;
        self.write_timeout.on_progress();
        if !self.syn_retransmitted {
            // Handshake RTT sample (the SYN was sent once: Karn-safe).
            self.handshake_sample(now - self.syn_sent_at);
        } else {
            // RFC 6298 §5.7.
            self.rtt.syn_fallback();
        }
        if let Some(w) = self.rwin.as_mut() {
            w.on_established(now, self.stats.bytes_read);
        }
        self.rate_on_established(now);
        // tcp_ack of the SYN-ACK (or of the handshake's last ACK) ends in
        // tcp_cong_control, so the first skbs are sized from the handshake RTT.
        self.tso_update_rate();
        if self.sndbuf.is_some() {
            // tcp_init_buffer_space -> tcp_sndbuf_expand; connect() returns and
            // the application writes.
            let cwnd = self.ccs.cwnd / self.mss.max(1);
            if let Some(s) = self.sndbuf.as_mut() {
                s.expand(cwnd, self.cfg.dupthresh as u64);
            }
            self.app_write();
        }
        self.push_event(Event::Established);
    }

    #[cold]
    #[inline(never)]
    fn enter_closed(&mut self, sent_rst: bool) {
        let was_open = self.state != State::Closed;
        self.state = State::Closed;
        self.rtx_deadline = None;
        self.sb = Scoreboard::default();
        if was_open {
            self.push_event(Event::Reset { sent: sent_rst });
        }
    }

    fn on_synchronized(&mut self, seg: &Segment, now: Time) {
        if seg.flags.rst() {
            // RFC 9293 §3.10.7.4 (RFC 5961 §3 relaxed): a RST inside the window resets.
            let seq = unwrap(self.irs, seg.seq, self.reasm.rcv_nxt);
            if seq >= self.reasm.rcv_nxt && seq <= self.reasm.rcv_nxt + self.rcv_window() {
                self.enter_closed(false);
            }
            return;
        }
        if seg.flags.syn() {
            // Retransmitted SYN / SYN-ACK: our reply was lost.
            if self.state == State::SynRcvd {
                self.syn_pending = true;
            } else {
                self.ack_pending = true;
            }
            return;
        }
        if !seg.flags.ack() {
            return;
        }
        if self.state == State::SynRcvd {
            if unwrap(self.iss, seg.ack, 1) < 1 {
                return;
            }
            self.snd_una = 1;
            self.establish(now);
        }
        if self.relay.is_some() {
            // Relay mode: only the ACK side; the peer's data and FIN pass end
            // to end. RFC 7323 §4.3: TS.Recent follows the peer's newest TSval.
            if let (true, Some((tsval, _))) = (self.ts_ok, seg.options.timestamps) {
                if (tsval.wrapping_sub(self.ts_recent) as i32) >= 0 {
                    self.ts_recent = tsval;
                }
            }
            self.process_ack(seg, now);
            self.ack_pending = false;
            self.maybe_finish();
            return;
        }
        // RFC 7323 §4.3: TS.Recent ← SEG.TSval if SEG.TSval ≥ TS.Recent and
        // SEG.SEQ ≤ Last.ACK.sent — for every segment, pure ACKs included, so
        // a data sender echoes the TSval of the latest ACK (as Linux's
        // tcp_store_ts_recent), which the receiver's RTT estimate uses.
        if self.ts_ok {
            if let Some((tsval, _)) = seg.options.timestamps {
                let start = unwrap(self.irs, seg.seq, self.reasm.rcv_nxt);
                if (tsval.wrapping_sub(self.ts_recent) as i32) >= 0 && start <= self.last_ack_sent {
                    self.ts_recent = tsval;
                }
            }
        }
        self.process_ack(seg, now);
        if seg.payload_len > 0 || seg.flags.fin() {
            self.process_data(seg, now);
        } else if unwrap(self.irs, seg.seq, self.reasm.rcv_nxt) < self.reasm.rcv_nxt {
            // RFC 9293 §3.10.7.4: an unacceptable segment (here a zero-length
            // one below RCV.NXT, e.g. a zero-window probe) is answered with
            // an ACK.
            self.ack_pending = true;
        }
        self.maybe_finish();
    }

    fn process_ack(&mut self, seg: &Segment, now: Time) {
        if let Some(s) = self.sndbuf.as_mut() {
            s.on_ack_arrival();
        }
        let ack = unwrap(self.iss, seg.ack, self.snd_una);
        if ack > self.snd_max {
            // RFC 9293 §3.10.7.4: ACK of data not yet sent: drop, send an ACK.
            self.stats.bad_acks += 1;
            self.ack_pending = true;
            return;
        }
        if ack < self.snd_una {
            return; // old ACK
        }
        // tcp_ack(): an acceptable ACK, a zero-window probe's answer included.
        self.probes_out.on_ack();
        // ---- ECN (ecn.rs): whether this ACK echoes congestion (FLAG_ECE);
        // what it does is decided below, in tcp_fastretrans_alert()'s order ----
        let ece = self.ecn.on_ack_ece(seg);
        let seg_seq = unwrap(self.irs, seg.seq, self.reasm.rcv_nxt);
        let wnd = (seg.window as u64) << self.snd_wscale;
        let window_changed = wnd != self.snd_wnd;
        // RFC 9293 §3.10.7.4: window update rules (SND.WL1/WL2).
        if self.snd_wl1 < seg_seq || (self.snd_wl1 == seg_seq && self.snd_wl2 <= ack) {
            self.snd_wnd = wnd;
            self.snd_wl1 = seg_seq;
            self.snd_wl2 = ack;
        }
        // tcp_ack(): `if (!prior_packets) goto no_queue;`: nothing is
        // outstanding and the ACK acknowledges nothing new, as on every
        // segment a pure data receiver gets. The rest of this function
        // would change nothing then (no sample, no scoreboard, no
        // duplicate ACK, no congestion control): leave it out.
        if ack == self.snd_una && self.sb.is_empty() && self.ack_changes_nothing(seg) {
            // (What the full path takes and drops at its end.)
            self.sb.take_delivered();
            return;
        }

        let rate_in = self.rate_begin_ack();
        // Segments marked lost before this ACK (tcp_ack's `lost = tp->lost`).
        let lost_before = self.sb.lost_events();
        // RFC 6937 §2 DeliveredData = change in snd.una + change in SACKd.
        let sacked_before = self.sb.sacked_bytes();
        let una_before = self.snd_una;
        // ---- SACK scoreboard (RFC 2018 §4, RFC 2883 §4 for DSACK) ----
        let mut newly_sacked = 0u64;
        let mut dsacks = [(0u64, 0u64); 1];
        let mut n_dsack = 0usize;
        let mut sacked_high = 0u64;
        let mut orig_sacked = false;
        // Send time of the oldest original segment newly SACKed (Linux's
        // `first_sackt`, an RTT sample for its estimator).
        let mut sack_first: Option<Time> = None;
        // ... and of the newest (Linux's `last_sackt`, the rate sample's RTT).
        let mut sack_last: Option<Time> = None;
        let detecting = self
            .detector
            .as_ref()
            .is_some_and(|d| d.pending().is_some());
        if self.sack_ok {
            for (k, b) in seg.options.sack_blocks().iter().enumerate() {
                let l = unwrap(self.iss, b.left, ack);
                let r = unwrap(self.iss, b.right, ack);
                if r <= l || r > self.snd_max {
                    continue;
                }
                // RFC 2883 §4: a first block below the cumulative ACK, or
                // inside the second block, reports a duplicate.
                if k == 0 {
                    let is_dsack = r <= ack || {
                        let bl = seg.options.sack_blocks();
                        bl.len() > 1 && {
                            let l2 = unwrap(self.iss, bl[1].left, ack);
                            let r2 = unwrap(self.iss, bl[1].right, ack);
                            l >= l2 && r <= r2
                        }
                    };
                    if is_dsack {
                        self.stats.dsacks_rcvd += 1;
                        dsacks[0] = (l, r);
                        n_dsack = 1;
                        continue;
                    }
                }
                let (n, orig, newest, oldest) = self.sb.sack(l.max(ack), r);
                if let Some(s) = self.sndbuf.as_mut() {
                    s.on_sack(l.max(ack), r);
                }
                newly_sacked += n;
                sack_last = sack_last.max(newest);
                if let Some(t) = oldest {
                    sack_first = Some(sack_first.map_or(t, |f: Time| f.min(t)));
                }
                if n > 0 {
                    sacked_high = sacked_high.max(r.min(self.sb.high_sacked));
                    // Original data sent before the timeout SACKed (F-RTO §3 step 3b).
                    orig_sacked |= orig && l < self.saved.snd_max_at_rto;
                }
            }
        }

        let prior_flight = self.sb.pipe();
        // tcp_ack_update_rtt's `ca_rtt_us` (the rate sample's `rtt_us`).
        let mut ca_rtt = sack_last.map(|t| now - t);
        let acked_bytes;
        let mut short_extra = 0;
        let prev_una_all = self.snd_una;
        // Data sent before the timeout and never retransmitted, acked now?
        let orig_cum = detecting
            && ack > self.snd_una
            && self.sb.iter().take_while(|s| s.end <= ack).any(|s| {
                !s.has(EVER_RETRANS) && !s.has(SACKED) && s.start < self.saved.snd_max_at_rto
            });
        // (Only the detectors below read it: not evaluated for every ACK without one.)
        let is_dup_early = (self.detector.is_some() || self.fr_detector.is_some())
            && ack == self.snd_una
            && !self.sb.is_empty()
            && seg.payload_len == 0
            && !seg.flags.syn()
            && !seg.flags.fin()
            && if self.sack_ok {
                newly_sacked > 0
            } else {
                !window_changed
            };
        if ack > self.snd_una {
            // ---- new data acknowledged ----
            let sum = self.sb.ack_to(ack);
            if let Some(s) = self.sndbuf.as_mut() {
                s.on_ack(ack);
                short_extra = s.short_acked_extra(ack);
            }
            acked_bytes = sum.bytes;
            let prev_una = self.snd_una;
            self.snd_una = ack;
            // RFC 1122 §4.2.3.5: the give-up count is per segment.
            self.write_timeout.on_progress();
            self.stats.bytes_acked += sum.bytes;
            if self.fin_sent && ack == self.snd_max {
                self.fin_acked = true;
            }
            // RTT sample: RFC 7323 §4.2 (TSecr, valid even for
            // retransmissions) or RFC 6298 §3 Karn's rule.
            let mut sample = None;
            if self.ts_ok {
                if let Some((_, ecr)) = seg.options.timestamps {
                    if ecr != 0 {
                        let ticks = self.ts_now(now).wrapping_sub(ecr) as u64;
                        sample = Some(ticks * self.cfg.ts_granularity);
                    }
                }
            } else if let Some(t) = sum.rtt_sent_at {
                sample = Some(now - t);
            }
            // Linux's sample (tcp_clean_rtx_queue, tcp_ack_update_rtt): the
            // oldest original segment newly acked unless retransmitted data
            // was acked (Karn), else the oldest newly SACKed, else TSecr.
            let linux_sample = self.rtt.is_linux().then(|| {
                let seq = (!sum.any_retransmitted)
                    .then_some(sum.first_sent_at)
                    .flatten()
                    .or(sack_first)
                    .map(|t| now - t);
                seq.or(if self.ts_ok { sample } else { None })
            });
            if let Some(r) = sample {
                // Clock granularity: a 0-tick sample still counts as one tick.
                let r = r.max(1);
                match self.rebase {
                    Some((srtt_prev, rttvar_prev, mark)) if ack > mark => {
                        // RFC 4015 §3.2 step (4), on the first sample for data
                        // sent after the timeout: SRTT = max(SRTT_prev, R),
                        // RTTVAR = max(RTTVAR_prev, R/2), RTO recomputed.
                        self.rebase = None;
                        self.rtt.rebase(srtt_prev.max(r), rttvar_prev.max(r / 2));
                    }
                    _ if self.rtt.is_linux() => self.rtt.note(r),
                    _ => self.rtt.on_sample(r),
                }
                self.cc.on_rtt_sample(r, now);
            }
            if let Some(Some(r)) = linux_sample {
                self.rtt.on_sample_linux(r, ack, self.snd_max);
            }
            if rate_in.is_some() || (self.rec.in_recovery && self.cfg.hystart_linux) {
                // tcp_clean_rtx_queue: ca_rtt_us is the newest SACKed
                // segment's, else the newest cumulatively acked one's (no
                // retransmission acked), else the TSecr sample.
                ca_rtt = ca_rtt
                    .or(sum
                        .rtt_sent_at
                        .filter(|_| !sum.any_retransmitted)
                        .map(|t| now - t))
                    .or(sample.filter(|_| self.ts_ok));
            }
            if rate_in.is_some() {
                // FLAG_ACK_MAYBE_DELAYED: one runt segment ACKed, nothing SACKed.
                let delayed = sum.segments == 1 && sum.bytes < self.mss && sacked_before == 0;
                if let Some(r) = self.sb.rate_mut() {
                    r.rs.is_ack_delayed = delayed && newly_sacked == 0;
                }
            }
            self.rec.dupacks = 0;
            self.rec.lt_bytes = 0;
            if self.rec.after_rto && self.sb.lost_bytes() == 0 {
                self.rec.after_rto = false;
            }
            // tcp_fastretrans_alert() step D: the CWR state ends once
            // something above high_seq is acknowledged.
            self.cwr_try_end();
            // Step E, tcp_try_to_open(): an ECE in the Open state will enter
            // CWR on this ACK (below), and tcp_cong_control() then reduces
            // instead of growing.
            let cwr_next = ece && self.may_enter_cwr();
            let mut grow = !self.rec.in_recovery;
            if self.rec.in_recovery {
                if self.cfg.hystart_linux {
                    self.pkts_acked_in_recovery(ca_rtt, now);
                }
                self.on_ack_in_recovery(ack, prev_una, acked_bytes, prior_flight, now);
                // tcp_ack(): tcp_fastretrans_alert() ends Recovery on this ACK (state D,
                // tcp_end_cwnd_reduction: cwnd = ssthresh) before tcp_cong_control() runs;
                // that then finds the Open state and grows by what the ACK delivered
                // (tcp_may_raise_cwnd → tcp_cong_avoid). The RFCs leave the exit ACK's
                // growth open; the other stacks do not count it.
                grow = self.linux_cwnd_use() && !self.rec.in_recovery;
            }
            if grow && !self.ecn.in_cwr() && !cwr_next {
                // (tcp_cong_control: no growth during a CWR reduction.)
                // tcp_cong_control(sk, ack, delivered, ...) → tcp_cong_avoid(sk, ack,
                // acked_sacked): Linux's controllers grow by the packets this ACK newly
                // delivered, SACKed ones included (tp->delivered - prior_delivered), on
                // an ACK that advanced snd.una (tcp_may_raise_cwnd); RFC 5681/3465 count
                // the bytes the cumulative ACK covers. The two differ most on the ACK
                // that ends recovery, whose cumulative ACK covers every segment SACKed
                // during it.
                let acked = if self.linux_cwnd_use() {
                    self.delivered_since(una_before, sacked_before)
                } else {
                    acked_bytes
                };
                let info = AckInfo {
                    now,
                    // A short segment counts as a whole one (tcp_clean_rtx_queue's
                    // acked_pcount; sndbuf.rs).
                    acked: acked + short_extra,
                    rtt: sample,
                    min_rtt: (self.rtt.min_rtt() != Time::MAX).then(|| self.rtt.min_rtt()),
                    srtt: self.rtt.srtt(),
                    flight: prior_flight,
                    app_limited: !self.may_raise_cwnd(),
                    snd_una: self.snd_una,
                    snd_nxt: self.snd_max,
                };
                let before = self.cc.hystart().map(|h| h.phase());
                if self.cfg.hystart_linux || self.cfg.cubic_linux {
                    self.cc.on_newest_rtt(sum.rtt_sent_at.map(|t| now - t));
                }
                self.cc.on_ack(&mut self.ccs, &info);
                let after = self.cc.hystart().map(|h| h.phase());
                if before != after {
                    if let Some(p) = after {
                        self.push_event(Event::HyStart {
                            css: p == HyPhase::Css,
                            ca: p == HyPhase::Done,
                            cwnd: self.ccs.cwnd,
                            ssthresh: self.ccs.ssthresh,
                        });
                    }
                }
            }
            // RFC 6298 §5.2 / §5.3.
            if self.sb.is_empty() && (!self.fin_sent || self.fin_acked) {
                self.rtx_deadline = None;
            } else if !(self.rec.in_recovery
                && !self.sack_ok
                && self.rec.recovery_kind == RecoveryKind::FastRecovery
                && self.rec.first_partial_seen
                && ack < self.rec.recover)
            {
                self.restart_rtx(now);
            }
            if self.cfg.tlp {
                // RFC 8985 §7.2: restart the PTO on an ACK of new data.
                self.schedule_tlp(now);
            }
        } else {
            acked_bytes = 0;
            if self.rec.in_recovery && self.cfg.hystart_linux {
                self.pkts_acked_in_recovery(ca_rtt, now);
            }
            if let Some(t) = sack_first.filter(|_| self.rtt.is_linux()) {
                // Linux takes an RTT sample from newly SACKed data on any ACK
                // (tcp_clean_rtx_queue), and re-arms the timer with it when
                // that data was sent before the head's last transmission:
                // the head's (re)transmission may still be on its way, and
                // the RTO now reflects the longer path (a later-sent SACK
                // would only extend the timeout in loss recovery).
                self.rtt.on_sample_linux(now - t, ack, self.snd_max);
                let head_sent = self.sb.iter().next().map(|h| h.sent_at);
                if self.rtx_deadline.is_some() && head_sent.is_some_and(|h| t < h) {
                    self.restart_rtx(now);
                }
            }
            // ---- duplicate ACK? ----
            let outstanding = !self.sb.is_empty();
            let pure = seg.payload_len == 0 && !seg.flags.syn() && !seg.flags.fin();
            let is_dup = outstanding
                && pure
                && if self.sack_ok {
                    // RFC 6675 §2: a dupack carries SACK information for
                    // previously un-SACKed data.
                    newly_sacked > 0
                } else {
                    // RFC 5681 §2: same ACK, no data, window unchanged.
                    !window_changed
                };
            if is_dup {
                self.rec.dupacks += 1;
                self.stats.dupacks_rcvd += 1;
                if self.rec.in_recovery && !self.sack_ok {
                    // RFC 5681 §3.2 step 4 / RFC 6582 §3.2 step 3: inflate.
                    self.ccs.cwnd += self.mss;
                }
            }
        }
        // ---- spurious-timeout and spurious-fast-retransmit detection (spurious/) ----
        // Every ACK is shown to the detectors (F-RTO tracks the end of RTO recovery, DSACK
        // late reports); the costlier fields are only computed while a decision is pending.
        if self.detector.is_some() || self.fr_detector.is_some() {
            let view = AckView {
                now,
                ack,
                prev_una: prev_una_all,
                snd_max: self.snd_max,
                is_dupack: is_dup_early,
                orig_acked: orig_cum || orig_sacked,
                newly_sacked_high: sacked_high,
                tsecr: if self.ts_ok {
                    seg.options.timestamps.map(|t| t.1)
                } else {
                    None
                },
                dsacks: &dsacks[..n_dsack],
                new_data: self.new_data_state(ack),
                srtt: self.rtt.srtt(),
            };
            if let Some(d) = self.detector.as_mut() {
                let id = d.pending().unwrap_or(0);
                let decision = d.on_ack(&view);
                self.apply_decision(id, decision, acked_bytes);
            }
            if let Some(d) = self.fr_detector.as_mut() {
                let id = d.pending();
                let decision = d.on_ack(&view);
                if let (Some(id), Decision::Spurious { .. }) = (id, decision) {
                    self.on_spurious_fr(id, acked_bytes);
                }
            }
        }

        // ---- RACK-TLP (recovery/rack.rs) ----
        let rack = self.sack_ok && self.cfg.loss_detection == LossDetection::Rack;
        let delivered = self.sb.take_delivered();
        if rack {
            // RFC 8985 §6.2 steps 1–3 (min_RTT is the RTT estimator's).
            let min_rtt = self.min_rtt_or_srtt();
            let fack = self.snd_una.max(self.sb.high_sacked);
            let tsecr = if self.ts_ok {
                seg.options.timestamps.map(|t| t.1)
            } else {
                None
            };
            let (g, off) = (self.cfg.ts_granularity, self.ts_offset);
            // Step 2: a retransmission counts only if the echoed timestamp is
            // not older than it.
            let valid = |xmit: Time| {
                tsecr.is_none_or(|e| {
                    let sent = ((xmit / g) as u32).wrapping_add(off);
                    (e.wrapping_sub(sent) as i32) >= 0
                })
            };
            self.rec.rack.on_ack(&delivered, fack, now, min_rtt, valid);
            // Step 4: DSACKs widen the reordering window.
            self.rec.rack.end_dsack_round(self.snd_una);
            if n_dsack > 0 {
                self.rec.rack.on_dsack(self.snd_una, self.snd_max);
            }
        }
        if self.rec.tlp.end_seq.is_some() {
            // RFC 8985 §7.4.2: did the probe repair a loss?
            let dsack_end = (n_dsack > 0).then_some(dsacks[0].1);
            let pure_dupack =
                ack == prev_una_all && seg.payload_len == 0 && seg.options.sack_blocks().is_empty();
            if self.rec.tlp.on_ack(ack, dsack_end, pure_dupack) == TlpAck::Repaired {
                self.on_tlp_repaired(now);
            }
        }

        let delivered_data = self.delivered_since(una_before, sacked_before);
        if self.ecn.ok() {
            // DCTCP's per-window count of the bytes ECE acknowledged.
            let ece = seg.flags.contains(Flags::ECE);
            self.cc
                .on_ecn_ack(delivered_data, ece, self.snd_una, self.snd_max);
        }
        // A recovery already running takes its PRR step after loss detection;
        // one entered on this ACK takes it in enter_recovery.
        let mut prr_step = self.rec.in_recovery;

        // ---- loss detection ----
        if rack {
            // RFC 8985 §6.2 step 5, when the ACK delivered something (Linux
            // runs it when RACK advanced; the reordering timer covers the rest).
            if delivered.orig.is_some() || delivered.rtx.is_some() {
                self.rack_detect(now, false);
            }
        } else if self.sack_ok && newly_sacked > 0 {
            self.sb.mark_lost(self.cfg.dupthresh, self.mss);
        }
        // tcp_cwnd_reduction's condition for its extra segment:
        // FLAG_SND_UNA_ADVANCED and no segment newly marked lost.
        let grow = self.snd_una > una_before && self.sb.lost_events() == lost_before;
        if !self.rec.in_recovery && !self.sb.is_empty() {
            let trigger = if rack {
                // Linux tcp_time_to_recover with RACK: any segment marked lost.
                self.rack_may_enter_recovery()
            } else {
                self.rec.dupacks >= self.cfg.dupthresh || (self.sack_ok && self.sb.first_is_lost())
            };
            // RFC 6582 §3.2 step 1 / RFC 6675 §5.1: not before SND.UNA passes
            // the previous recovery point.
            if trigger && self.snd_una >= self.rec.recover {
                self.enter_recovery(now, delivered_data, grow);
                prr_step = false;
            }
        }

        // ---- PRR (recovery/prr.rs): cwnd for this ACK during SACK recovery ----
        if prr_step && self.rec.in_recovery {
            self.prr_step(delivered_data, grow);
        }
        // tcp_fastretrans_alert() step E, tcp_try_to_open() →
        // tcp_enter_cwr(): an ECE in the Open state, when this ACK started no
        // loss recovery, starts a reduction (after the congestion control saw
        // the ACK, as tcp_in_ack_event() runs first). Once per window: not
        // while one runs, but the ACK that ended the last one (step D above)
        // may start the next.
        if ece && self.may_enter_cwr() {
            self.enter_cwr(now);
        }
        if self.ecn.in_cwr() {
            self.cwr_step(delivered_data, grow);
        }
        if let Some(rate_in) = rate_in {
            self.rate_end_ack(now, rate_in, ca_rtt);
        }
        self.tso_update_rate();
    }

    /// `tcp_cong_control` -> `tcp_update_pacing_rate` for a flow that does not
    /// pace (`tso_model = "linux"`): Linux keeps `sk_pacing_rate` for
    /// `tcp_tso_autosize` whether or not the flow paces.
    fn tso_update_rate(&mut self) {
        // (Every ACK ends here: most flows have no transmit-path model.)
        if self.tso.is_none() || self.pacer.is_some() {
            return;
        }
        let (mss, cwnd, ssthresh) = (self.mss, self.ccs.cwnd, self.ccs.ssthresh);
        let (packets_out, srtt) = (self.sb.len() as u64, self.rtt.srtt());
        if let Some(t) = self.tso.as_mut() {
            t.rate.update_linux(mss, cwnd, ssthresh, packets_out, srtt);
        }
    }

    /// For an ACK of nothing new while nothing is outstanding: true when
    /// the rest of `process_ack` would leave every state as it is: no SACK
    /// blocks to read (a DSACK is counted), no spurious-retransmission
    /// detector or RACK to show the ACK to, no TLP episode to close, no
    /// ECN feedback to count, no recovery or CWR reduction to step.
    #[inline]
    fn ack_changes_nothing(&self, seg: &Segment) -> bool {
        !(self.sack_ok && seg.options.sack_len > 0)
            && self.detector.is_none()
            && self.fr_detector.is_none()
            && !(self.sack_ok && self.cfg.loss_detection == LossDetection::Rack)
            && self.rec.tlp.end_seq.is_none()
            && !self.ecn.ok()
            && !self.ecn.in_cwr()
            && !self.rec.in_recovery
    }

    /// tcp_enter_cwr() / tcp_init_cwnd_reduction(): ssthresh from the
    /// congestion control as for a loss, PRR from the prior cwnd.
    #[cold]
    #[inline(never)]
    fn enter_cwr(&mut self, now: Time) {
        let basis = self.loss_basis(self.sb.outstanding());
        self.ccs.ssthresh = self.cc.ssthresh_on_ece(&self.ccs, basis, now);
        // Linux's reduction bound when the flow runs Linux's PRR, else the RFC's.
        let bound = match self.cfg.recovery_cwnd {
            RecoveryCwnd::Prr(PrrBound::Linux) => PrrBound::Linux,
            _ => PrrBound::Ssrb,
        };
        self.ecn.start_cwr(self.snd_max, self.ccs.cwnd, bound);
    }

    /// dctcp_ece_ack_update()'s `__tcp_send_ack(sk, *prior_rcv_nxt)`: the
    /// held delayed ACK, for RCV.NXT `ack` as it was before the segment that
    /// changed the CE state and with the prior state's ECE; the ACK for that
    /// segment stays due.
    #[cold]
    #[inline(never)]
    fn prior_state_ack(&mut self, ack: u64, ece: bool, now: Time) -> Segment {
        let mut seg = self.base_segment(Flags::ACK, self.snd_max, 0, now);
        seg.ack = to_wire(self.irs, ack);
        seg.flags = if ece {
            seg.flags | Flags::ECE
        } else {
            Flags(seg.flags.0 & !Flags::ECE.0)
        };
        self.last_ack_sent = ack;
        self.ack_pending = true;
        seg
    }

    /// tcp_enter_cwr(): only from the Open (or Disorder) state, not during
    /// loss recovery, after a timeout or in an earlier reduction.
    fn may_enter_cwr(&self) -> bool {
        !self.rec.in_recovery && !self.rec.after_rto && !self.ecn.in_cwr()
    }

    /// tcp_fastretrans_alert() step D for the CWR state: "CWR is to be held
    /// something *above* high_seq is ACKed", then tcp_end_cwnd_reduction():
    /// cwnd = ssthresh.
    fn cwr_try_end(&mut self) {
        if self
            .ecn
            .cwr_mut()
            .is_some_and(|c| self.snd_una > c.high_seq)
        {
            self.ecn.end_cwr();
            self.ccs.cwnd = self.ccs.ssthresh.max(self.mss);
        }
    }

    /// tcp_cwnd_reduction() on an ACK in CWR: cwnd = pipe + sndcnt.
    fn cwr_step(&mut self, delivered: u64, grow: bool) {
        let (pipe, ssthresh, mss) = (self.sb.pipe(), self.ccs.ssthresh, self.mss);
        let Some(c) = self.ecn.cwr_mut() else { return };
        if delivered > 0 {
            let sndcnt = c.prr.on_ack(delivered, pipe, ssthresh, mss, grow);
            // Force one segment out when nothing was sent yet.
            let sndcnt = if c.prr.prr_out() == 0 {
                sndcnt.max(mss)
            } else {
                sndcnt
            };
            self.ccs.cwnd = (pipe + sndcnt).max(mss);
        }
    }

    /// ECN counters (`ecn.rs`).
    pub fn ecn_stats(&self) -> EcnStats {
        self.ecn.stats
    }

    /// Whether ECN was negotiated.
    pub fn ecn_ok(&self) -> bool {
        self.ecn.ok()
    }

    /// RFC 6937 §2: DeliveredData = change_in(snd.una) + change_in(SACKd), since
    /// snd.una was `una_before` with `sacked_before` bytes SACKed (Linux's
    /// `tp->delivered - prior_delivered`, in bytes).
    fn delivered_since(&self, una_before: u64, sacked_before: u64) -> u64 {
        ((self.snd_una - una_before) as i128 + self.sb.sacked_bytes() as i128
            - sacked_before as i128)
            .max(0) as u64
    }

    /// RFC 6937 §3, on an ACK during SACK recovery with PRR: sndcnt from
    /// DeliveredData and pipe; cwnd = pipe + sndcnt (Linux tcp_cwnd_reduction).
    /// `grow`: the ACK advanced snd.una and marked nothing newly lost.
    fn prr_step(&mut self, delivered: u64, grow: bool) {
        if self.rec.recovery_kind != RecoveryKind::Sack {
            return;
        }
        if let Some(p) = self.rec.prr.as_mut() {
            // tcp_cwnd_reduction: `if (newly_acked_sacked <= 0) return;`
            if delivered == 0 && p.bound() == PrrBound::Linux {
                return;
            }
            let pipe = self.sb.pipe();
            let sndcnt = p.on_ack(delivered, pipe, self.ccs.ssthresh, self.mss, grow);
            self.ccs.cwnd = pipe + sndcnt;
        }
    }

    /// What the congestion control's multiplicative decrease is applied to:
    /// FlightSize (RFC 5681 eq. 4, RFC 9438 §4.6) or, as Linux
    /// (`tcp_reno_ssthresh`, `bictcp_recalc_ssthresh`), cwnd.
    fn loss_basis(&self, flight: u64) -> u64 {
        match self.cfg.ssthresh_from {
            SsthreshFrom::Flight => flight,
            SsthreshFrom::Cwnd => self.ccs.cwnd,
        }
    }

    /// min_RTT for RACK (RFC 8985 §6.2 step 1): the estimator's minimum,
    /// or SRTT before the first sample.
    fn min_rtt_or_srtt(&self) -> Time {
        let m = self.rtt.min_rtt();
        if m == Time::MAX {
            self.rtt.srtt()
        } else {
            m
        }
    }

    /// RFC 8985 §6.2 step 5: mark what RACK finds lost, (re)arm or stop the
    /// reordering timer.
    fn rack_detect(&mut self, now: Time, timer: bool) {
        let reo_wnd = self.rec.rack.reo_wnd(
            self.rec.in_recovery || self.rec.after_rto,
            self.sb.sacked_bytes() / self.mss.max(1),
            self.cfg.dupthresh,
            self.min_rtt_or_srtt(),
            self.rtt.srtt(),
        );
        let d = self.rec.rack.detect_loss(&mut self.sb, now, reo_wnd);
        if let Some(seq) = d.first_seq {
            self.push_event(Event::RackLoss {
                seq,
                bytes: d.bytes,
                lost_retrans: d.lost_retrans,
                timer,
                reo_wnd,
            });
        }
        self.rec.rack_deadline = (d.timeout > 0).then(|| match self.cfg.timers {
            TimerKind::Exact => now + d.timeout,
            // Linux tcp_rack_mark_lost: usecs_to_jiffies(timeout + TCP_TIMEOUT_MIN_US) on the
            // timer wheel.
            TimerKind::Linux => jiffies::wheel_fire(
                now,
                jiffies::to_jiffies_ceil(d.timeout + jiffies::TCP_TIMEOUT_MIN),
            ),
        });
    }

    /// Linux tcp_time_to_recover with RACK: some segment is marked lost and
    /// the sender is not already recovering (nor before the last recovery
    /// point).
    fn rack_may_enter_recovery(&self) -> bool {
        !self.rec.in_recovery
            && !self.rec.after_rto
            && self.sb.lost_bytes() > 0
            && self.snd_una >= self.rec.recover
            && !self.sb.is_empty()
    }

    /// RFC 8985 §7.4.2: the tail loss probe repaired a loss: respond as to
    /// a loss (Linux: CWR, cwnd = ssthresh at once).
    #[cold]
    #[inline(never)]
    fn on_tlp_repaired(&mut self, now: Time) {
        let flight = self.sb.outstanding();
        let basis = self.loss_basis(flight);
        let ssthresh = self.cc.ssthresh_on_loss(&self.ccs, basis, now);
        self.ccs.ssthresh = ssthresh;
        self.ccs.cwnd = self.ccs.cwnd.min(ssthresh).max(self.mss);
        self.push_event(Event::Tlp {
            seq: self.snd_una,
            len: 0,
            kind: 2,
            cwnd: self.ccs.cwnd,
        });
    }

    /// Act on a detector's decision about timeout `id`.
    #[cold]
    #[inline(never)]
    fn apply_decision(&mut self, id: u32, d: Decision, acked: u64) {
        // The verdict covers every timeout of the episode up to `id`.
        let ids = self.episode_first_id.min(id)..=self.timeout_count.saturating_sub(1).max(id);
        match d {
            Decision::Pending => {}
            Decision::SendNew => self.frto_new_allow = 2,
            Decision::Genuine => {
                if matches!(
                    self.cfg.spurious_detection,
                    spurious::DetectorKind::Frto
                        | spurious::DetectorKind::FrtoBasic
                        | spurious::DetectorKind::FrtoLinux
                ) {
                    // RFC 5682 §2.1 step 3a / §3.1 step 3a: cwnd <= 3·MSS, then
                    // slow start retransmitting the unacknowledged segments.
                    self.ccs.cwnd = self.ccs.cwnd.min(3 * self.mss);
                }
                for id in ids {
                    self.push_event(Event::DetectorVerdict { id, outcome: 4 });
                }
            }
            Decision::NoVerdict(c) => {
                for id in ids {
                    self.push_event(Event::DetectorVerdict {
                        id,
                        outcome: c as u8,
                    });
                }
            }
            Decision::Spurious { late } => {
                for id in ids {
                    self.stats.spurious_detected += 1;
                    self.push_event(Event::SpuriousDetected { id });
                }
                let mut ctx = ResponseCtx {
                    ccs: &mut self.ccs,
                    saved: &self.saved,
                    // FlightSize (RFC 5681 §2): sent and not cumulatively acknowledged;
                    // the timeout's "lost" marks are about to be undone.
                    flight: self.sb.outstanding(),
                    acked,
                    iw: self.cfg.initial_window.max(self.mss),
                    late,
                };
                let out = self.response.on_spurious(&mut ctx);
                if self.cc_owns {
                    // tcp_undo_cwnd_reduction -> .undo_cwnd (bbr_undo_cwnd).
                    self.cc.undo();
                }
                if out.resume_new {
                    // RFC 4015 §3.2 step (2): SND.NXT = SND.MAX — the segments
                    // presumed lost by the timeout are in flight after all.
                    self.sb.clear_lost();
                    self.rec.after_rto = false;
                }
                if out.rebase_rto {
                    self.rebase = Some((
                        self.saved.srtt_prev,
                        self.saved.rttvar_prev,
                        self.saved.snd_max_at_rto,
                    ));
                }
            }
        }
    }

    /// A fast retransmit was declared spurious: count it and run the
    /// `spurious_fr_response`.
    #[cold]
    #[inline(never)]
    fn on_spurious_fr(&mut self, id: u32, acked: u64) {
        self.stats.spurious_fr_detected += 1;
        let undone = spurious::respond_fr(
            self.cfg.spurious_fr_response,
            &mut self.ccs,
            &self.fr_saved,
            // FlightSize (RFC 5681 §2) after the detecting ACK.
            self.sb.outstanding(),
            acked,
            self.cfg.initial_window.max(self.mss),
        );
        if undone {
            self.stats.fr_undone += 1;
            if self.cc_owns {
                // tcp_undo_cwnd_reduction -> .undo_cwnd.
                self.cc.undo();
            }
            if self.rec.in_recovery {
                // The hole was filled by the delayed original (Linux
                // tcp_try_undo_partial -> tcp_undo_cwnd_reduction(sk, true)):
                // forget the loss marks, cancel a pending NewReno partial-ACK
                // retransmission and leave recovery. A later loss may start a
                // new episode at once (no reduction is in effect to protect).
                self.sb.clear_lost();
                if matches!(
                    self.force_rtx,
                    Some((_, RtxReason::PartialAck | RtxReason::FastRetransmit))
                ) {
                    self.force_rtx = None;
                }
                self.rec.recover = self.snd_una;
                self.exit_recovery();
            }
        }
        self.push_event(Event::SpuriousFrDetected {
            id,
            undone,
            cwnd: self.ccs.cwnd,
            ssthresh: self.ccs.ssthresh,
        });
    }

    /// Fast recovery starts; `delivered` is the DeliveredData of the ACK
    /// (or timer) that started it, for the first PRR step (`grow` as in
    /// [`Self::prr_step`]).
    #[cold]
    #[inline(never)]
    fn enter_recovery(&mut self, now: Time, delivered: u64, grow: bool) {
        // RFC 5681 §3.2 step 2 (and RFC 6675 §5 step 4.2): data sent by
        // Limited Transmit is not counted in FlightSize here.
        let flight = self.sb.outstanding().saturating_sub(self.rec.lt_bytes);
        // RFC 4015 §3.2 step (0), before cwnd and ssthresh are reduced:
        // pipe_prev = max(FlightSize, ssthresh); Linux keeps prior_cwnd and
        // prior_ssthresh (tcp_init_cwnd_reduction) for the undo.
        self.fr_saved = Saved {
            cwnd: self.ccs.cwnd,
            ssthresh: self.ccs.ssthresh,
            pipe_prev: flight.max(self.ccs.ssthresh.min(u64::MAX / 8)),
            flight,
            ..Saved::default()
        };
        // tcp_enter_recovery(): a recovery that starts during an ECN CWR
        // reduction keeps its ssthresh (one reduction per window).
        let ssthresh = if self.ecn.end_cwr() {
            self.ccs.ssthresh
        } else {
            let basis = self.loss_basis(flight);
            self.cc.ssthresh_on_loss(&self.ccs, basis, now)
        };
        self.ecn.queue_cwr();
        self.ccs.ssthresh = ssthresh;
        self.rec.in_recovery = true;
        self.rec.recover = self.snd_max;
        self.rec.first_partial_seen = false;
        self.rec.rescue_rxt = None;
        self.stats.recoveries += 1;
        // RFC 8985 §7: a recovery ends the probe episode.
        self.rec.tlp = Tlp::default();
        self.rec.tlp_deadline = None;
        self.rec.tlp_pending = false;
        let rack = self.sack_ok && self.cfg.loss_detection == LossDetection::Rack;
        // With RACK the lowest segment it marked lost and has not
        // retransmitted since is retransmitted first. If there is none (the
        // recovery starts because a retransmission of the last one is still
        // in flight, counted in lost_out), nothing is: tcp_enter_recovery()
        // retransmits nothing itself, and tcp_xmit_retransmit_queue() skips
        // a lost skb with TCPCB_SACKED_RETRANS set and stops once
        // retrans_out >= lost_out.
        let i = if rack { self.sb.next_lost() } else { Some(0) };
        let first = i.map(|i| {
            // The first segment is presumed lost (RFC 5681 §3.2 step 2,
            // RFC 6675 §5 step 4.3).
            self.sb.mark_seg_lost(i);
            *self.sb.get(i).unwrap()
        });
        if self.sack_ok {
            self.rec.recovery_kind = RecoveryKind::Sack;
            if let RecoveryCwnd::Prr(bound) = self.cfg.recovery_cwnd {
                // RFC 6937 §3: RecoverFS = snd.nxt − snd.una (Linux's
                // tcp_init_cwnd_reduction: prior_cwnd, the cwnd before the
                // reduction), then the step for the ACK that started recovery.
                let recover_fs = if bound == PrrBound::Linux {
                    self.fr_saved.cwnd
                } else {
                    self.sb.outstanding()
                };
                self.rec.prr = Some(Prr::start(bound, recover_fs));
                self.prr_step(delivered, grow);
            } else {
                // RFC 6675 §5 step 4.2: cwnd = ssthresh.
                self.ccs.cwnd = ssthresh;
            }
        } else {
            // RFC 5681 §3.2 step 3 / RFC 6582 §3.2 step 2: cwnd = ssthresh + 3·SMSS.
            self.rec.recovery_kind = RecoveryKind::FastRecovery;
            self.ccs.cwnd = ssthresh + 3 * self.mss;
        }
        if let Some(first) = first {
            self.force_rtx = Some((first.start, RtxReason::FastRetransmit));
            self.stats.fast_retransmits += 1;
            let id = (self.stats.fast_retransmits - 1) as u32;
            // RFC 3522 §3.2 steps (1)-(2) / RFC 3708 §3 step 1: the episode
            // starts with this retransmission (sent at `now`, with this TSval).
            let v = RtoView {
                now,
                id,
                snd_una: self.snd_una,
                snd_max: self.snd_max,
                ts_val: self.ts_ok.then(|| self.ts_now(now)),
                sack: self.sack_ok,
            };
            if let Some(d) = self.fr_detector.as_mut() {
                d.on_fast_retransmit(&v);
            }
            self.push_event(Event::FastRetransmit {
                id,
                seq: first.start,
                len: first.len() as u32,
                cwnd: self.fr_saved.cwnd,
                ssthresh: self.fr_saved.ssthresh,
            });
        }
        self.push_event(Event::EnterRecovery {
            kind: self.rec.recovery_kind,
            recover: self.rec.recover,
            cwnd: self.ccs.cwnd,
            ssthresh,
        });
    }

    fn exit_recovery(&mut self) {
        self.rec.in_recovery = false;
        self.rec.prr = None;
        if self.cfg.loss_detection == LossDetection::Rack {
            // RFC 8985 §6.2 step 4: the reordering window decays per recovery.
            self.rec.rack.on_recovery_end();
        }
        self.push_event(Event::ExitRecovery {
            cwnd: self.ccs.cwnd,
        });
    }

    /// tcp_clean_rtx_queue → `pkts_acked` during fast recovery (`on_ack`
    /// is not called there): the controller sees the ACK's RTT sample
    /// (`cubic.rs`, HyStart while PRR holds cwnd below ssthresh).
    fn pkts_acked_in_recovery(&mut self, rtt: Option<Time>, now: Time) {
        if let Some(rtt) = rtt {
            let (una, nxt) = (self.snd_una, self.snd_max);
            self.cc
                .on_pkts_acked_in_recovery(&mut self.ccs, now, rtt, una, nxt);
        }
    }

    fn on_ack_in_recovery(&mut self, ack: u64, _prev_una: u64, acked: u64, _prior: u64, now: Time) {
        if ack >= self.rec.recover {
            // Full ACK.
            if self.sack_ok {
                // RFC 6675 §5: recovery ends when HighACK ≥ RecoveryPoint.
                self.cc.on_recovery_exit(&mut self.ccs, now);
            } else if self.cfg.cc.entry.reno_recovery {
                self.ccs.cwnd = self.ccs.ssthresh;
            } else {
                // RFC 6582 §3.2 step 6 option (1):
                // cwnd = min(ssthresh, max(FlightSize, SMSS) + SMSS).
                let flight = self.sb.outstanding();
                self.cc.on_recovery_exit(&mut self.ccs, now);
                self.ccs.cwnd = self.ccs.ssthresh.min(flight.max(self.mss) + self.mss);
            }
            self.exit_recovery();
            return;
        }
        if self.sack_ok {
            return; // RFC 6675: the ACK only updates the scoreboard and pipe.
        }
        if self.cfg.cc.entry.reno_recovery {
            // RFC 5681 §3.2 step 6: Reno leaves recovery on the first new ACK.
            self.ccs.cwnd = self.ccs.ssthresh;
            self.rec.recover = self.snd_una; // allow a new fast retransmit
            self.exit_recovery();
            return;
        }
        // RFC 6582 §3.2 step 5: partial ACK — retransmit the first
        // unacknowledged segment, deflate cwnd by the amount acked and add
        // back one SMSS if at least one SMSS was acked.
        if let Some(first) = self.sb.front().copied() {
            self.sb.mark_seg_lost(0);
            self.force_rtx = Some((first.start, RtxReason::PartialAck));
        }
        self.ccs.cwnd =
            self.ccs.cwnd.saturating_sub(acked) + if acked >= self.mss { self.mss } else { 0 };
        self.ccs.cwnd = self.ccs.cwnd.max(self.mss);
        if !self.rec.first_partial_seen {
            // "Impatient" variant: reset the timer on the first partial ACK only.
            self.rec.first_partial_seen = true;
            self.restart_rtx(now);
        }
    }

    fn process_data(&mut self, seg: &Segment, now: Time) {
        if !matches!(
            self.state,
            State::Established | State::FinWait1 | State::FinWait2
        ) {
            // Data after the peer's FIN, or in a closing state: just ACK.
            if seg.payload_len > 0 || seg.flags.fin() {
                self.ack_pending = true;
            }
            return;
        }
        let start = unwrap(self.irs, seg.seq, self.reasm.rcv_nxt);
        let end = start + seg.payload_len as u64;
        let mut urgent = false;
        let rcv_nxt_before = self.reasm.rcv_nxt;
        if seg.payload_len > 0 {
            // RFC 9293 §3.10.7.4: accept what fits in the window.
            let right = self.reasm.rcv_nxt + self.rcv_window();
            let end_in = end.min(right);
            let out = self
                .reasm
                .on_data(start, end_in, self.cfg.dsack && self.sack_ok);
            if out.delivered > 0 {
                self.stats.bytes_delivered += out.delivered;
                self.app_unread += out.delivered;
            }
            if self.rwin.is_some() && !out.duplicate {
                self.linux_data_recv(seg, now, out.delivered > 0);
            }
            if out.delivered > 0 {
                self.read_all(now);
            }
            urgent = out.out_of_order || out.filled_hole || out.duplicate || end_in < end;
            // dctcp_ece_ack_update(): a scalable receiver whose CE state
            // changes while a delayed ACK is held sends that ACK first, with
            // the prior state and the prior RCV.NXT (`__tcp_send_ack(sk,
            // prior_rcv_nxt)`), then the immediate one below.
            if let Some(prior) = self.ecn.scalable_ce_change(seg) {
                if self.ack_policy.deadline().is_some() && !self.ack_pending {
                    self.prior_ack = Some((rcv_nxt_before, prior));
                }
            }
            // ECN: the first CE is acknowledged at once (tcp_ecn_check_ce).
            urgent |= self.ecn.on_rcv_data(seg);
        }
        if seg.flags.fin() {
            self.peer_fin = Some(end);
        }
        if let Some(f) = self.peer_fin {
            if self.reasm.rcv_nxt == f {
                // The FIN occupies one sequence number (RFC 9293 §3.10.7.4 step 8).
                self.reasm.rcv_nxt = f + 1;
                self.state = match self.state {
                    State::Established => State::CloseWait,
                    State::FinWait1 => State::Closing,
                    State::FinWait2 => State::TimeWait,
                    s => s,
                };
                self.ack_pending = true;
                return;
            }
        }
        let full = seg.payload_len as u64 >= self.mss;
        // tcp_measure_rcv_mss: a full-sized segment with PSH "is likely the end
        // of an application write" and sets ICSK_ACK_PUSHED; tcp_cleanup_rbuf
        // then ACKs at once when the application has read everything (not in
        // ping-pong mode), without waiting for a second segment.
        let pushed =
            self.tso.is_some() && full && seg.flags.contains(Flags::PSH) && self.app_unread == 0;
        if self.ack_policy.on_data(now, full, urgent) == AckNow::Yes || pushed {
            self.ack_pending = true;
        }
    }

    /// Linux's receive path for a new data segment (`rcv_window = "linux"`):
    /// the receiver's RTT from the timestamp echo, `tcp_measure_rcv_mss` and
    /// `tcp_grow_window`, before the application reads it; a segment that
    /// grew the window is ACKed at once (`icsk_ack.quick |= 1`).
    fn linux_data_recv(&mut self, seg: &Segment, now: Time, in_order: bool) {
        let tsecr = match (self.ts_ok, seg.options.timestamps) {
            (true, Some((_, ecr))) => Some((ecr, self.ts_now(now), self.cfg.ts_granularity)),
            _ => None,
        };
        // The segment itself is not yet counted against the buffer (measured:
        // Linux's window reaches the clamp exactly).
        let held = self.rcv_held().saturating_sub(seg.payload_len as u64);
        let rcv_nxt = self.reasm.rcv_nxt;
        let sack = self.sack_ok;
        let grew = self.rwin.as_mut().is_some_and(|w| {
            w.on_data(
                now,
                seg.payload_len as u64,
                in_order,
                rcv_nxt,
                held,
                tsecr,
                sack,
            )
        });
        if grew {
            self.ack_policy.quick_or_one();
        }
    }

    /// After every segment: the close steps, when there are any to take.
    #[inline]
    fn maybe_finish(&mut self) {
        if self.fin_acked
            || (matches!(self.state, State::Closed | State::TimeWait) && !self.closed_reported)
        {
            self.finish_steps();
        }
    }

    #[cold]
    #[inline(never)]
    fn finish_steps(&mut self) {
        if self.fin_acked {
            self.state = match self.state {
                State::FinWait1 => State::FinWait2,
                State::Closing => State::TimeWait,
                State::LastAck => State::Closed,
                s => s,
            };
        }
        if self.fin_acked {
            // The transfer ended while a detector was still deciding
            // (Sekiguchi 2008 Table 4: "FIN before detection").
            if let Some(id) = self.detector.as_ref().and_then(|d| d.pending()) {
                self.detector = spurious::new_detector(self.cfg.spurious_detection);
                for id in
                    self.episode_first_id.min(id)..=self.timeout_count.saturating_sub(1).max(id)
                {
                    self.push_event(Event::DetectorVerdict {
                        id,
                        outcome: MissCause::Finished as u8,
                    });
                }
            }
        }
        if matches!(self.state, State::Closed | State::TimeWait) && !self.closed_reported {
            self.closed_reported = true;
            self.rtx_deadline = None;
            self.push_event(Event::Closed);
        }
    }
    // ------------------------------------------------------------------
    // Pacing (pacing.rs) and delivery-rate estimation (rate.rs): the hooks
    // ------------------------------------------------------------------

    /// The pacing rate, bytes/s (None: not pacing, or no rate set yet).
    pub fn pacing_rate(&self) -> Option<u64> {
        self.pacer.as_ref().and_then(|p| p.rate())
    }

    /// The delivery-rate estimator (None: this connection runs none).
    pub fn rate_estimator(&self) -> Option<&crate::rate::RateEstimator> {
        self.sb.rate()
    }

    /// Segments for `bytes` (Linux counts packets; the last may be short).
    #[inline]
    fn pkts(&self, bytes: u64) -> u64 {
        bytes.div_ceil(self.mss.max(1))
    }

    /// What a `.cong_control` controller sees of the connection now.
    fn tcp_view(&self, now: Time) -> TcpView {
        let r = self.sb.rate();
        let m = self.rtt.min_rtt();
        TcpView {
            now,
            ca_state: self.ca_state(),
            in_flight: self.pkts(self.sb.pipe()),
            delivered: r.map_or(0, |r| r.delivered),
            delivered_mstamp: r.map_or(0, |r| r.delivered_mstamp),
            lost: self.sb.lost_events(),
            srtt: self.rtt.srtt(),
            min_rtt: (m != Time::MAX).then_some(m),
            wstamp: self.pacer.as_ref().map_or(now, |p| p.wstamp()),
            app_limited: r.map_or(0, |r| r.app_limited),
        }
    }

    /// Take back what the controller changed in the view (`tp->app_limited`)
    /// and the pacing rate it set (`sk_pacing_rate`).
    fn sync_cc(&mut self, tp: &TcpView) {
        if let Some(r) = self.sb.rate_mut() {
            r.app_limited = tp.app_limited;
        }
        if let (Some(p), Some(rate)) = (self.pacer.as_mut(), self.cc.pacing_rate()) {
            p.set_rate(rate);
        }
    }

    /// Established (`tcp_init_transfer`): the SYN or SYN-ACK counts as
    /// delivered (`tcp_clean_rtx_queue`; `tcp_rcv_state_process`'s
    /// `tp->delivered++`), and a `.cong_control` controller starts (`.init`).
    fn rate_on_established(&mut self, now: Time) {
        if let Some(r) = self.sb.rate_mut() {
            r.delivered += 1;
        }
        if self.cc_owns {
            let mut tp = self.tcp_view(now);
            self.cc.init(&mut self.ccs, &mut tp);
            self.sync_cc(&tp);
        }
    }

    /// The sending application's writes (`snd_buf_model = "linux"`): one
    /// `send()` after another while the socket is writable and it has data,
    /// each starting with `tcp_rate_check_app_limited` (`tcp_sendmsg_locked`).
    /// It sleeps (`SOCK_NOSPACE`) when the socket is not writable or a write
    /// was cut short.
    fn app_write(&mut self) {
        let limit = 1 + self.data_end_total();
        loop {
            let Some(s) = self.sndbuf.as_mut() else {
                return;
            };
            if s.write_end() >= limit {
                s.nospace = false;
                return;
            }
            if !s.writeable() {
                s.nospace = true;
                return;
            }
            if self.sb.rate().is_some() {
                self.check_app_limited();
            }
            let (mss, wnd) = (self.mss, self.snd_wnd);
            let Some(s) = self.sndbuf.as_mut() else {
                return;
            };
            s.note_window(wnd);
            let copied = s.sendmsg(limit, mss);
            if copied > 0 {
                if let Some(t) = self.tso.as_mut() {
                    t.rearm();
                }
            }
            if copied < crate::sndbuf::APP_WRITE && self.sndbuf.as_ref().is_some_and(|s| s.nospace)
            {
                return;
            }
        }
    }

    /// `tcp_check_space` after an ACK (once its transmissions are out, as
    /// `tcp_data_snd_check` runs first): if it freed buffers while the writer
    /// sleeps, `tcp_new_space` expands the buffer when cwnd is not full
    /// (`tcp_should_expand_sndbuf`) and wakes the writer if the socket is
    /// writable (`sk_stream_write_space`). True if it wrote.
    fn sndbuf_wakeup(&mut self) -> bool {
        // Without a send-buffer model (most connections) nothing sleeps:
        // return before the two divisions below (this runs on every
        // `poll_transmit` that finds nothing else to send).
        if self.sndbuf.is_none() {
            return false;
        }
        let in_flight = self.pkts(self.sb.pipe());
        let cwnd = self.ccs.cwnd / self.mss.max(1);
        let reordering = self.cfg.dupthresh as u64;
        let Some(s) = self.sndbuf.as_mut() else {
            return false;
        };
        if !s.take_wakeup() {
            return false;
        }
        if in_flight < cwnd {
            s.expand(cwnd, reordering);
        }
        if !s.writeable() {
            return false;
        }
        let before = s.write_end();
        self.app_write();
        self.sndbuf.as_ref().is_some_and(|s| s.write_end() > before)
    }

    /// `tcp_tso_segs`: segments per transmitted skb (the pacer's autosizing,
    /// else a whole `sk_gso_max_size`).
    fn tso_segs(&self) -> u64 {
        let m = self.rtt.min_rtt();
        // The pacing rate: the pacer's, or the one the transmit path keeps
        // for a flow that does not pace.
        let rate = self
            .pacer
            .as_deref()
            .or_else(|| self.tso.as_deref().map(|t| &t.rate));
        match rate {
            Some(p) => p.tso_segs(
                self.mss,
                self.cc.min_tso_segs(),
                (m != Time::MAX).then_some(m),
            ),
            None => (65_536 / self.mss.max(1)).max(1),
        }
    }

    /// `tcp_rate_check_app_limited`, when the application writes.
    fn check_app_limited(&mut self) {
        let unsent_lt_mss = self.avail_end().saturating_sub(self.snd_max) < self.mss;
        let in_flight = self.pkts(self.sb.pipe());
        let cwnd_open = in_flight < self.ccs.cwnd / self.mss.max(1);
        let repaired = self.sb.lost_bytes() <= self.sb.retrans_bytes();
        if let Some(r) = self.sb.rate_mut() {
            r.check_app_limited(unsent_lt_mss, cwnd_open, repaired, in_flight);
        }
    }

    /// Start of an ACK (`tcp_ack`): the sample's `prior_in_flight`; returns
    /// cwnd and the lost count before it. None when neither rates nor pacing
    /// run, or nothing was outstanding (`tcp_ack`'s `no_queue` path, which
    /// takes no sample and calls no congestion control).
    fn rate_begin_ack(&mut self) -> Option<(u64, u64)> {
        if (self.sb.rate().is_none() && self.pacer.is_none()) || self.sb.is_empty() {
            return None;
        }
        let in_flight = self.pkts(self.sb.pipe());
        if let Some(r) = self.sb.rate_mut() {
            r.begin_ack(in_flight);
        }
        Some((self.ccs.cwnd, self.sb.lost_events()))
    }

    /// End of an ACK: `tcp_rate_gen`, then `tcp_cong_control` — a
    /// `.cong_control` controller sets cwnd and the pacing rate from the
    /// sample (the recovery steps above leave its cwnd alone: Linux runs no
    /// `tcp_cwnd_reduction` for it and `tcp_end_cwnd_reduction` returns
    /// early), any other has its pacing rate set by `tcp_update_pacing_rate`.
    fn rate_end_ack(&mut self, now: Time, (cwnd_in, lost_in): (u64, u64), ca_rtt: Option<Time>) {
        let m = self.rtt.min_rtt();
        let min_rtt = (m != Time::MAX).then_some(m);
        let losses = self.sb.lost_events() - lost_in;
        if let Some(r) = self.sb.rate_mut() {
            r.gen(now, losses, ca_rtt, min_rtt);
        }
        if self.cc_owns {
            self.ccs.cwnd = cwnd_in;
            let rs = self.sb.rate().map(|r| r.rs).unwrap_or_default();
            let mut tp = self.tcp_view(now);
            self.cc.cong_control(&mut self.ccs, &mut tp, &rs);
            self.sync_cc(&tp);
        } else if let Some(p) = self.pacer.as_mut() {
            let packets_out = self.sb.len() as u64;
            p.update_linux(
                self.mss,
                self.ccs.cwnd,
                self.ccs.ssthresh,
                packets_out,
                self.rtt.srtt(),
            );
        }
    }

    /// `tcp_pacing_check` before a data transmission (new data in
    /// `tcp_write_xmit`, retransmissions in `tcp_xmit_retransmit_queue`,
    /// probes): true if it must wait for the pacing timer, which is then
    /// armed. The timeout's retransmission (`tcp_retransmit_timer`) is not
    /// checked, and no timer is armed while nothing could be sent.
    fn pace_blocked(&mut self, now: Time) -> bool {
        if self.pacer.is_none() || matches!(self.force_rtx, Some((_, RtxReason::Timeout))) {
            return false;
        }
        let waiting = self.force_rtx.is_some()
            || self.rec.tlp_pending
            || self.frto_new_allow > 0
            || (self.sb.pipe() + self.mss <= self.ccs.cwnd
                && (self.sb.lost_bytes() > self.sb.retrans_bytes()
                    || self.rec.in_recovery
                    || self.new_data_len().is_some()));
        waiting && self.pacer.as_mut().is_some_and(|p| p.blocked(now))
    }

    /// A data segment of `len` bytes goes out: `tcp_event_data_sent`'s
    /// `CA_EVENT_TX_START` (nothing in flight) and the departure clock.
    fn on_data_sent(&mut self, len: u64, now: Time) {
        if self.cc_owns && self.sb.pipe() == 0 {
            let mut tp = self.tcp_view(now);
            self.cc.on_tx_start(&mut self.ccs, &mut tp);
            self.sync_cc(&tp);
        }
        if self.pacer.is_some() {
            let segs = self.skb_segs(now);
            if let Some(p) = self.pacer.as_mut() {
                p.on_sent(len, now, segs);
            }
        }
        if let Some(t) = self.tso.as_mut() {
            t.on_segment(now);
        }
    }

    /// Segments of the skb a transmission at `now` starts: the one
    /// `tcp_write_xmit` cut (`tso_model = "linux"`), else `tcp_tso_segs`.
    fn skb_segs(&self, now: Time) -> u64 {
        match self.tso.as_deref() {
            Some(t) if t.in_skb(now) => t.skb_segs(),
            _ => self.tso_segs(),
        }
    }

    /// `tcp_write_xmit` before new data (`tso_model = "linux"`): inside an
    /// skb started at `now` its next segment goes; otherwise the send head skb
    /// is held back if `tcp_tso_should_defer` says so (true), or a new skb is
    /// cut to `tcp_cwnd_test`'s quota (`tcp_mss_split_point`).
    fn tso_defers(&mut self, now: Time) -> bool {
        match self.tso.as_deref() {
            None => return false,
            Some(t) if t.in_skb(now) => return false,
            // Deferred: nothing runs tcp_write_xmit again until an ACK, a
            // write or the pacing timer.
            Some(t) if t.deferred() => return true,
            Some(_) => {}
        }
        let mss = self.mss.max(1);
        let max_segs = self.tso_segs();
        let avail = self.avail_end();
        let (skb_end, skb_is_tail) = match self.sndbuf.as_deref() {
            Some(s) => {
                let (end, tail) = s.send_head(self.snd_max);
                (end.min(avail), tail || end >= avail)
            }
            None => {
                // The application writes size-goal skbs (tcp_sendmsg_locked).
                let t = self.tso.as_deref().map_or(0, |t| t.max_window);
                let goal = Tso::size_goal(mss, t.max(self.snd_wnd));
                let end = 1 + ((self.snd_max - 1) / goal + 1) * goal;
                (end.min(avail), end >= avail)
            }
        };
        let in_flight = self.pkts(self.sb.pipe());
        let cwnd_pkts = self.ccs.cwnd / mss;
        let head = SendHead {
            now,
            mss,
            in_recovery_or_loss: matches!(self.ca_state(), CaState::Recovery | CaState::Loss),
            wstamp: match self.pacer.as_deref() {
                Some(p) => p.wstamp(),
                None => self.tso.as_deref().map_or(0, |t| t.last_xmit),
            },
            in_flight,
            cwnd_pkts,
            send_win: (self.snd_una + self.snd_wnd).saturating_sub(self.snd_max),
            snd_wnd: self.snd_wnd,
            max_segs,
            skb_len: skb_end.saturating_sub(self.snd_max),
            skb_is_tail,
            skb_fin: self.app_close && skb_end == 1 + self.data_end_total(),
            head_sent_at: self.sb.front().map(|s| s.sent_at),
            srtt: self.rtt.srtt(),
        };
        let snd_wnd = self.snd_wnd;
        let Some(t) = self.tso.as_mut() else {
            return false;
        };
        t.max_window = t.max_window.max(snd_wnd);
        // tcp_write_xmit: tcp_tso_should_defer only for an skb of more than
        // one segment (tcp_init_tso_segs); one segment goes to tcp_nagle_test,
        // which the sender's SWS rule stands for here.
        if head.skb_len > mss && head.should_defer() {
            t.on_defer();
            return true;
        }
        let quota = crate::tso::cwnd_quota(cwnd_pkts, in_flight)
            .min(max_segs)
            .max(1);
        let bytes = head.split_point(quota, false);
        t.start_skb(now, bytes.div_ceil(mss));
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_timestamp_clock_is_now_over_its_granularity_whatever_the_order_asked() {
        // `ts_now` skips the division inside the last tick asked: the same
        // value as the division for times forward, backward, at tick edges
        // and far apart.
        for g in [1, 7, crate::NS_PER_MS, 1_000_003] {
            let cfg = Config {
                ts_granularity: g,
                ..Config::default()
            };
            let c = Connection::client(cfg, 1, 2, 100, 0xFFFF_FF00);
            let mut x: u64 = 99;
            let mut t: u64 = 0;
            for k in 0..20_000u64 {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                t = match k % 5 {
                    0 => t + (x >> 40) % (3 * g), // forward, often in the same tick
                    1 => t / g * g + g - 1,       // a tick's last ns
                    2 => (t / g + 1) * g,         // the next tick's first
                    3 => t.saturating_sub((x >> 44) % (2 * g)), // backward
                    _ => (x >> 1) % (u64::MAX / 2), // anywhere
                };
                let want = ((t / g) as u32).wrapping_add(0xFFFF_FF00);
                assert_eq!(c.ts_now(t), want, "g {g} t {t}");
            }
        }
    }
}
