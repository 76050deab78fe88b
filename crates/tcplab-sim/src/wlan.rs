//! IEEE 802.11 DCF cells (802.11g, ERP-OFDM, fixed rate) as one shared-medium path component.
//!
//! One `wlan` hop holds one or more access points (each its own cell on its own channel: cells do
//! not interfere) and the wireless stations. Each AP and each station is a DCF contender with a
//! drop-tail transmit queue counted in packets. The wired side of the APs (the switch and the
//! link to the server) is an ordinary hop after this one in the flows' paths; all APs share it
//! (same IP subnet), so a station that re-associates keeps its address and its TCP connections.
//!
//! ## Which station a packet belongs to
//! Every flow through the hop is listed by exactly one station: in `flows` when the flow's
//! *sender* is on the station (the hop must then be the first of the flow's path: data = uplink,
//! ACKs = AP downlink), in `down_flows` when its *receiver* is (the hop must be last: data = AP
//! downlink, ACKs = uplink). CBR cross-traffic sources on a station are listed in `cross`
//! (uplink). A station may carry several flows; they share its transmit queue. Handover changes
//! which cell serves the station inside this component, so flows' routes never change.
//!
//! ## DCF model (basic access, no RTS/CTS)
//! * Backoff: a frame at the head of a queue gets a counter drawn uniformly from {0..CW}; counters
//!   count idle slots after the medium has been idle DIFS and freeze while it is busy; the
//!   contenders whose counter reaches 0 in the same slot transmit together (a collision if more
//!   than one). IEEE 802.11-2007 §9.2.5.2 (backoff procedure), §9.2.3 (IFS). A frame that reaches
//!   a queue draws a backoff even if the medium was idle (equivalent to the post-backoff every
//!   station performs after its own transmission, §9.2.5.2); Bianchi's model assumes the same.
//! * Success: DATA, SIFS, ACK at the basic rate; the packet is handed on when the ACK ends.
//!   Failure (collision or frame error): the sender's retry counter grows, CW doubles
//!   (CW = min(2·(CW+1)−1, CWmax), §9.2.4), and the frame is discarded when the counter reaches
//!   `retry_limit` (dot11ShortRetryLimit, default 7, §9.2.4: "retries ... shall continue until the
//!   SRC ... is equal to dot11ShortRetryLimit"), i.e. at most `retry_limit` attempts. CW and the
//!   retry counter reset after a success or a discard.
//! * Busy time of an exchange: T_data + SIFS + T_ack, then DIFS. A collision costs the same: the
//!   longest colliding DATA frame followed by EIFS = SIFS + T_ack + DIFS (§9.2.3.4; T_ack here at
//!   the configured basic rate). This is Bianchi's T_s = T_c case (Bianchi 2000 §IV).
//! * MAC ACK frames are not lost (sent at the robust basic rate); RTS/CTS, fragmentation,
//!   capture and hidden terminals are not modelled.
//!
//! ## Constants (defaults) and sources
//! ERP-OFDM short-slot BSS (IEEE 802.11-2007 §19.8.4, Table 19-8 via docs/algorithms.md §9.1 [V]):
//! aSlotTime 9 µs, SIFS 10 µs plus 6 µs signal extension after each OFDM frame (§19.3.2.3),
//! DIFS = SIFS + 2·slot = 28 µs, CWmin 15, CWmax 1023. OFDM frame time (§17.4.3 TXTIME):
//! 16 µs preamble + 4 µs SIGNAL + 4 µs · ceil((16 + 8·L + 6) / N_DBPS) with N_DBPS = rate · 4 µs.
//! MAC overhead per MSDU: 24 B header + 4 B FCS + 8 B LLC/SNAP = 36 B; ACK frame 14 B. Worked
//! check (docs/algorithms.md §9.1): a 1500-B IP packet at 54 Mbit/s lasts 254 µs, an ACK at 24 Mbit/s
//! 34 µs (tests below).
//! Checked against standard-derived sources: the retry rule as quoted from the standard in INET's
//! `RecoveryProcedure` ("retries ... shall continue until the SRC ... is equal to
//! dot11ShortRetryLimit", Annex C: "the maximum number of transmission attempts"); ns-3's
//! `wifi-standard-constants` (OFDM aSIFSTime 16 µs = ERP's 10 µs SIFS + 6 µs signal extension,
//! DSSS slot 20 µs vs ERP short slot 9 µs); Bianchi's eq. (7) as implemented in several public
//! model scripts. The saturation test against Bianchi (1..10 stations) is in `tests/wlan.rs`.
//!
//! ## Frame errors and mobility
//! Each station has a frame-error process applied to every non-collided attempt to or from it:
//! independent (`bernoulli`) or bursty (`gilbert_elliott`, stepped once per attempt), and
//! optionally a distance term: P_dist = 0 up to `d0_m` from its AP, rising linearly to 1 at `d1_m`
//! (a modelling choice standing in for path loss, not a PHY model). A station moves along its
//! waypoints (piecewise linear). It hands over when the other AP is nearer than its own by more
//! than `handover_margin_m`: it is disconnected for `handover_ns`, then re-associates with the
//! nearer AP. Downlink packets for it are discarded by the AP, as an AP does for a station that has
//! left. Its own uplink frames are discarded too (`handover_flush`, default): a station that is not
//! associated may not send data (class 3) frames (IEEE 802.11-2007 §11.3), the frames it still
//! addresses to the old AP find no receiver and exhaust the retry limit (§9.2.4), and a driver
//! purges its transmit queues when it leaves the BSS (Linux mac80211 flushes the station's
//! queues on disassociation). The frame on the air when the link is lost completes its exchange.
//! A TCP sender on the station therefore sees its segments and retransmissions lost for the whole
//! outage: its RTO backs off across it and it resumes only at its next timeout after
//! re-association, with cwnd = 1 SMSS. `handover_flush = false` keeps the frames queued and
//! sends them on re-association (an idealised zero-loss handover).
//!
//! ## Cell-wide interference
//! Two cell-wide processes can add frame errors on top of the stations' own:
//! * `aps[].errors`: a loss process stepped once per non-collided attempt in the cell (its
//!   bursts are counted in frame attempts, so they stretch in time when the cell backs off);
//! * `aps[].interference`: bursts in *time*. Quiet spells (mean `mean_gap_ns`) and bursts (mean
//!   `mean_burst_ns`) alternate, each exponentially distributed; while a burst lasts, every
//!   non-collided attempt in the cell, to or from any station, is corrupted with probability
//!   `loss`. It stands for an interferer (another network, a microwave oven) that jams the whole
//!   channel for a while, so every contender's head frame fails together and a burst longer than
//!   the retry limit's backoff ladder discards frames of every station at once. The schedule is
//!   drawn interval by interval from its own random stream (independent of the traffic); the
//!   AP's stats row counts the bursts started (`interference_bursts`). A modelling choice, not a
//!   PHY model.
//!
//! ## A station's fading
//! `stations[].fading` is the same on/off process in time, but for one station's link: while a
//! fade lasts, every non-collided attempt to or from that station (its data frames and the AP's
//! frames to it) is corrupted with probability `loss`; the other stations do not see it. It is
//! the continuous-time two-state (Gilbert-Elliott) channel of a slowly fading indoor link, whose
//! errors are correlated over tens of milliseconds: a fade longer than the retry ladder (five or
//! seven attempts with their backoffs, a few ms) makes every attempt of a frame fail, so the frame
//! is discarded at the retry limit (§9.2.4) and the fade discards the frames behind it too. Each
//! station draws its schedule from its own stream; its stats row counts the fades (`fades`, only
//! on stations that have fading).
//!
//! `stations[].errors_down` (a loss model per attempt, as `errors`) hits only the AP's frames to
//! that station: a downlink weaker than the uplink, as when the AP transmits at reduced power
//! and the stations at full power. The AP counts these frame errors, its retries and its
//! discards at the retry limit; the station's own frames do not see them.

use std::collections::VecDeque;

use serde::Deserialize;

use crate::component::{Component, Ctx, DropKind};
use crate::config::{LossConfig, SimConfig};
use crate::engine::{Dir, Packet};
use crate::loss::LossProcess;
use crate::queue::managed::Managed;
use crate::queue::Limit;
use crate::rng::Rng;
use tcplab_tcp::Time;

// ---------------------------------------------------------------------------
// Configuration
// ---------------------------------------------------------------------------

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WlanConfig {
    pub name: String,
    #[serde(default = "d_data_rate")]
    pub data_rate_bps: u64,
    #[serde(default = "d_basic_rate")]
    pub basic_rate_bps: u64,
    #[serde(default = "d_slot")]
    pub slot_ns: u64,
    #[serde(default = "d_sifs")]
    pub sifs_ns: u64,
    #[serde(default = "d_ext")]
    pub signal_ext_ns: u64,
    #[serde(default = "d_cwmin")]
    pub cw_min: u32,
    #[serde(default = "d_cwmax")]
    pub cw_max: u32,
    #[serde(default = "d_retry")]
    pub retry_limit: u32,
    #[serde(default = "d_mac_oh")]
    pub mac_overhead_bytes: u32,
    /// AP transmit queue, packets (all frames held, including the one being sent).
    #[serde(default = "d_ap_queue")]
    pub ap_queue: u32,
    /// Station transmit queue, packets.
    #[serde(default = "d_sta_queue")]
    pub sta_queue: u32,
    /// The APs' queue discipline (`None`: the DropTail queue of `ap_queue` packets).
    #[serde(default)]
    pub ap_aqm: Option<crate::queue::AqmConfig>,
    /// The stations' queue discipline (`None`: DropTail of `sta_queue` packets).
    #[serde(default)]
    pub sta_aqm: Option<crate::queue::AqmConfig>,
    pub aps: Vec<ApConfig>,
    pub stations: Vec<StationConfig>,
    /// Disconnection during a handover, ns.
    #[serde(default = "d_handover")]
    pub handover_ns: u64,
    #[serde(default)]
    pub handover_margin_m: f64,
    /// What a station does with its uplink frames while it is not associated: `true` (default)
    /// discards them (the frames queued when the link to the old AP is lost, and those the host
    /// hands over during the outage); `false` keeps them queued and sends them after
    /// re-association (the behaviour before this option existed). See the module notes.
    #[serde(default = "d_true")]
    pub handover_flush: bool,
}

fn d_true() -> bool {
    true
}

fn d_data_rate() -> u64 {
    54_000_000
}
fn d_basic_rate() -> u64 {
    24_000_000
}
fn d_slot() -> u64 {
    9_000
}
fn d_sifs() -> u64 {
    10_000
}
fn d_ext() -> u64 {
    6_000
}
fn d_cwmin() -> u32 {
    15
}
fn d_cwmax() -> u32 {
    1023
}
fn d_retry() -> u32 {
    7
}
fn d_mac_oh() -> u32 {
    36
}
fn d_ap_queue() -> u32 {
    265
}
fn d_sta_queue() -> u32 {
    1000
}
fn d_handover() -> u64 {
    2_000_000_000
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApConfig {
    pub name: String,
    /// Cell-wide frame errors (interference hitting every frame of the cell), stepped once
    /// per non-collided attempt in the cell; applied on top of the stations' own processes.
    #[serde(default)]
    pub errors: LossConfig,
    /// Time-based interference bursts over the whole cell (module notes); none by default.
    #[serde(default)]
    pub interference: Option<Interference>,
    #[serde(default)]
    pub x: f64,
    #[serde(default)]
    pub y: f64,
}

/// An on/off interference process over one cell, in time: quiet spells and bursts alternate,
/// each of exponentially distributed length (a continuous-time two-state Markov chain); while a
/// burst lasts, every non-collided frame attempt in the cell (uplink and downlink, every
/// station) is corrupted with probability `loss`.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Interference {
    /// Mean length of a quiet spell, ns (the mean time between bursts).
    pub mean_gap_ns: u64,
    /// Mean length of a burst, ns.
    pub mean_burst_ns: u64,
    /// Frame error probability during a burst.
    #[serde(default = "d_one")]
    pub loss: f64,
}

fn d_one() -> f64 {
    1.0
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StationConfig {
    pub name: String,
    /// Flows whose sender is on this station.
    #[serde(default)]
    pub flows: Vec<usize>,
    /// Flows whose receiver is on this station.
    #[serde(default)]
    pub down_flows: Vec<usize>,
    /// CBR cross-traffic sources on this station.
    #[serde(default)]
    pub cross: Vec<usize>,
    /// The AP the station is associated with at t = 0.
    #[serde(default)]
    pub ap: usize,
    /// Waypoints (time, x, y); empty = the station sits at its AP.
    #[serde(default)]
    pub path: Vec<Waypoint>,
    #[serde(default)]
    pub errors: LossConfig,
    #[serde(default)]
    pub distance_errors: Option<DistanceErrors>,
    /// Fades of this station's link in time (module notes); none by default.
    #[serde(default)]
    pub fading: Option<Interference>,
    /// Frame errors on the AP's frames to this station only, per attempt, on top of `errors`
    /// (module notes: a weak downlink); none by default.
    #[serde(default)]
    pub errors_down: LossConfig,
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Waypoint {
    pub t_ns: u64,
    pub x: f64,
    pub y: f64,
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DistanceErrors {
    pub d0_m: f64,
    pub d1_m: f64,
}

const OFDM_RATES: [u64; 8] = [6, 9, 12, 18, 24, 36, 48, 54];

fn check_errors(e: &LossConfig, f: &str) -> Result<(), String> {
    crate::loss::check(e, &format!("{f}.p"), f)
}

/// An on/off process in time (cell interference, a station's fading): both means > 0.
fn check_on_off(i: &Interference, fi: &str) -> Result<(), String> {
    if i.mean_gap_ns == 0 || i.mean_burst_ns == 0 {
        return Err(format!(
            "{fi}: mean_gap and mean_burst must be > 0 ns (got {} and {})",
            i.mean_gap_ns, i.mean_burst_ns
        ));
    }
    crate::loss::check_prob(i.loss, &format!("{fi}.loss"))
}

/// Structural checks of hop `i` (a `wlan`) against the whole configuration.
pub fn validate(w: &WlanConfig, i: usize, c: &SimConfig) -> Result<(), String> {
    let f = format!("hops[{i}]");
    for (k, r) in [
        ("data_rate", w.data_rate_bps),
        ("basic_rate", w.basic_rate_bps),
    ] {
        if r % 1_000_000 != 0 || !OFDM_RATES.contains(&(r / 1_000_000)) {
            return Err(format!(
                "{f}.{k}: must be an 802.11g OFDM rate (6, 9, 12, 18, 24, 36, 48 or 54 Mbit/s; got {r} bit/s)"
            ));
        }
    }
    if w.slot_ns == 0 {
        return Err(format!("{f}.slot: must be > 0"));
    }
    if w.cw_min == 0 || !(w.cw_min + 1).is_power_of_two() {
        return Err(format!(
            "{f}.cw_min: must be 2^k - 1 with k >= 1 (got {})",
            w.cw_min
        ));
    }
    if w.cw_max < w.cw_min || !(w.cw_max + 1).is_power_of_two() || w.cw_max > 65535 {
        return Err(format!(
            "{f}.cw_max: must be 2^k - 1, >= cw_min and <= 65535 (got {})",
            w.cw_max
        ));
    }
    if w.retry_limit == 0 || w.retry_limit > 255 {
        return Err(format!(
            "{f}.retry_limit: must be 1 to 255 (got {})",
            w.retry_limit
        ));
    }
    if w.ap_queue == 0 || w.sta_queue == 0 {
        return Err(format!("{f}.ap_queue/sta_queue: must be >= 1 packet"));
    }
    for (k, a, limit) in [
        ("ap_aqm", &w.ap_aqm, w.ap_queue),
        ("sta_aqm", &w.sta_aqm, w.sta_queue),
    ] {
        let Some(a) = a else { continue };
        if w.stations.iter().any(|s| s.path.len() > 1) {
            return Err(format!(
                "{f}.{k}: not supported with moving stations (a handover purges the queues, \
                 which a queue discipline does not offer)"
            ));
        }
        a.check(Limit::Packets(limit as u64), w.data_rate_bps)
            .map_err(|(x, e)| format!("{f}.{k}.{x}: {e}"))?;
    }
    if w.aps.is_empty() || w.aps.len() > 64 {
        return Err(format!("{f}.aps: must list 1 to 64 access points"));
    }
    if w.stations.is_empty() || w.stations.len() > 4096 {
        return Err(format!("{f}.stations: must list 1 to 4096 stations"));
    }
    if w.handover_ns < 1_000_000 && w.stations.iter().any(|s| s.path.len() > 1) {
        return Err(format!(
            "{f}.handover: must be at least 1 ms (longer than any frame exchange)"
        ));
    }
    if !(w.handover_margin_m >= 0.0 && w.handover_margin_m.is_finite()) {
        return Err(format!("{f}.handover_margin: must be a distance >= 0 m"));
    }
    for (a, ap) in w.aps.iter().enumerate() {
        check_errors(&ap.errors, &format!("{f}.aps[{a}].errors"))?;
        if let Some(i) = ap.interference {
            check_on_off(&i, &format!("{f}.aps[{a}].interference"))?;
        }
    }
    let mut flow_owner = vec![None; c.flows.len()];
    let mut cross_owner = vec![None; c.cross.len()];
    for (s, st) in w.stations.iter().enumerate() {
        let sf = format!("{f}.stations[{s}]");
        if let Some(i) = st.fading {
            check_on_off(&i, &format!("{sf}.fading"))?;
        }
        check_errors(&st.errors_down, &format!("{sf}.errors_down"))?;
        if st.ap >= w.aps.len() {
            return Err(format!(
                "{sf}.ap: AP {} does not exist ({} APs)",
                st.ap,
                w.aps.len()
            ));
        }
        for (k, fl) in st.flows.iter().chain(st.down_flows.iter()).enumerate() {
            let up = k < st.flows.len();
            let Some(cfg) = c.flows.get(*fl) else {
                return Err(format!("{sf}.flows: flow {fl} does not exist"));
            };
            let pos_ok = if up {
                cfg.path.first() == Some(&i)
            } else {
                cfg.path.last() == Some(&i)
            };
            if !pos_ok || cfg.path.iter().filter(|&&h| h == i).count() != 1 {
                return Err(format!(
                    "{sf}.flows: flow {fl} must pass the WLAN hop once, as its {} hop",
                    if up {
                        "first (sender on the station)"
                    } else {
                        "last (receiver on the station)"
                    }
                ));
            }
            if flow_owner[*fl].replace(s).is_some() {
                return Err(format!(
                    "{sf}.flows: flow {fl} is already on another station"
                ));
            }
        }
        for x in &st.cross {
            let Some(cfg) = c.cross.get(*x) else {
                return Err(format!("{sf}.cross: cross source {x} does not exist"));
            };
            if cfg.path.first() != Some(&i) || cfg.path.iter().filter(|&&h| h == i).count() != 1 {
                return Err(format!(
                    "{sf}.cross: source {x} must have the WLAN hop first"
                ));
            }
            if cross_owner[*x].replace(s).is_some() {
                return Err(format!(
                    "{sf}.cross: source {x} is already on another station"
                ));
            }
        }
        for (k, wp) in st.path.iter().enumerate() {
            if !(wp.x.is_finite() && wp.y.is_finite()) {
                return Err(format!("{sf}.path[{k}]: coordinates must be finite"));
            }
            if k > 0 && wp.t_ns <= st.path[k - 1].t_ns {
                return Err(format!("{sf}.path[{k}].t: waypoint times must increase"));
            }
        }
        check_errors(&st.errors, &format!("{sf}.errors"))?;
        if let Some(d) = st.distance_errors {
            if !(d.d0_m >= 0.0 && d.d1_m > d.d0_m && d.d1_m.is_finite()) {
                return Err(format!(
                    "{sf}.distance_errors: need 0 <= d0 < d1 (got d0 = {}, d1 = {})",
                    d.d0_m, d.d1_m
                ));
            }
        }
    }
    for (k, fl) in c.flows.iter().enumerate() {
        if fl.path.contains(&i) && flow_owner[k].is_none() {
            return Err(format!(
                "flows[{k}].path: passes WLAN hop {i} but no station of {f}.stations lists it"
            ));
        }
    }
    for (k, x) in c.cross.iter().enumerate() {
        if x.path.contains(&i) && cross_owner[k].is_none() {
            return Err(format!(
                "cross[{k}].path: passes WLAN hop {i} but no station of {f}.stations lists it"
            ));
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// Timing
// ---------------------------------------------------------------------------

/// Duration of an ERP-OFDM PPDU carrying `bytes` of MPDU at `rate_bps`
/// (IEEE 802.11-2007 §17.4.3 TXTIME, plus the §19.3.2.3 signal extension).
#[inline]
pub fn ofdm_txtime(bytes: u32, rate_bps: u64, signal_ext_ns: u64) -> Time {
    let ndbps = rate_bps * 4 / 1_000_000; // data bits per 4-µs OFDM symbol
    let bits = 16 + 8 * bytes as u64 + 6; // SERVICE + PSDU + tail
    let nsym = bits.div_ceil(ndbps);
    16_000 + 4_000 + 4_000 * nsym + signal_ext_ns
}

/// MAC ACK frame length (IEEE 802.11-2007 §7.2.1.3).
pub const ACK_BYTES: u32 = 14;

/// Timing of a cell derived from its configuration.
#[derive(Clone, Copy, Debug)]
pub struct Timing {
    pub slot: Time,
    pub sifs: Time,
    pub difs: Time,
    pub ack: Time,
    data_rate: u64,
    ext: Time,
    mac_oh: u32,
}

impl Timing {
    pub fn new(w: &WlanConfig) -> Timing {
        Timing {
            slot: w.slot_ns,
            sifs: w.sifs_ns,
            // IEEE 802.11-2007 §9.2.3.3: DIFS = aSIFSTime + 2 × aSlotTime.
            difs: w.sifs_ns + 2 * w.slot_ns,
            ack: ofdm_txtime(ACK_BYTES, w.basic_rate_bps, w.signal_ext_ns),
            data_rate: w.data_rate_bps,
            ext: w.signal_ext_ns,
            mac_oh: w.mac_overhead_bytes,
        }
    }

    /// Air time of the DATA frame carrying an IP datagram of `ip_bytes`.
    #[inline]
    pub fn data(&self, ip_bytes: u32) -> Time {
        ofdm_txtime(ip_bytes + self.mac_oh, self.data_rate, self.ext)
    }

    /// Medium occupancy of one exchange (success: DATA+SIFS+ACK+DIFS; a collision
    /// costs the same with EIFS, see the module notes).
    pub fn exchange(&self, ip_bytes: u32) -> Time {
        self.data(ip_bytes) + self.sifs + self.ack + self.difs
    }
}

// ---------------------------------------------------------------------------
// Bianchi's model
// ---------------------------------------------------------------------------

/// Bianchi's saturation model (G. Bianchi, "Performance analysis of the IEEE 802.11 distributed
/// coordination function", IEEE JSAC 18(3), 2000): `n` saturated stations, minimum window
/// `w = CWmin + 1`, `m` backoff stages (CWmax + 1 = 2^m · w). Returns (τ, p, S) with S the
/// saturation throughput of MSDU payload in bit/s, for IP datagrams of `ip_bytes`, T_s and T_c
/// from `Timing::exchange` (T_s = T_c, basic access).
pub fn bianchi(n: u32, w: u32, m: u32, timing: &Timing, ip_bytes: u32) -> (f64, f64, f64) {
    let w = w as f64;
    let n_f = n as f64;
    // eq. (7): τ(p) = 2(1−2p) / ((1−2p)(W+1) + pW(1−(2p)^m)); eq. (9): p = 1 − (1−τ)^(n−1).
    let tau_of = |p: f64| {
        2.0 * (1.0 - 2.0 * p)
            / ((1.0 - 2.0 * p) * (w + 1.0) + p * w * (1.0 - (2.0 * p).powi(m as i32)))
    };
    // Solve p − (1 − (1 − τ(p))^(n−1)) = 0 by bisection on [0, 1) (the function is increasing).
    let (mut lo, mut hi) = (0.0f64, 0.999_999);
    for _ in 0..200 {
        let p = 0.5 * (lo + hi);
        let g = p - (1.0 - (1.0 - tau_of(p)).powi(n as i32 - 1));
        if g > 0.0 {
            hi = p;
        } else {
            lo = p;
        }
    }
    let p = 0.5 * (lo + hi);
    let tau = tau_of(p);
    // eq. (10)-(13): P_tr, P_s, S = P_s P_tr E[P] / ((1−P_tr)σ + P_tr P_s T_s + P_tr (1−P_s) T_c).
    let p_tr = 1.0 - (1.0 - tau).powi(n as i32);
    let p_s = n_f * tau * (1.0 - tau).powi(n as i32 - 1) / p_tr;
    let ts = timing.exchange(ip_bytes) as f64 * 1e-9;
    let tc = ts;
    let sigma = timing.slot as f64 * 1e-9;
    let payload = ip_bytes as f64 * 8.0;
    let s =
        p_s * p_tr * payload / ((1.0 - p_tr) * sigma + p_tr * p_s * ts + p_tr * (1.0 - p_s) * tc);
    (tau, p, s)
}

// ---------------------------------------------------------------------------
// Runtime
// ---------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, Default)]
pub struct NodeStats {
    pub tx_frames: u64,
    pub tx_bytes: u64,
    pub tx_data: u64,
    pub tx_ack: u64,
    pub attempts: u64,
    pub collisions: u64,
    pub frame_errors: u64,
    pub drops_queue_data: u64,
    pub drops_queue_ack: u64,
    pub drops_retry_data: u64,
    pub drops_retry_ack: u64,
    /// Downlink packets discarded because their station had left (handover).
    pub drops_handover: u64,
    pub max_queue: u64,
}

struct Node {
    /// The transmit queue; with a queue discipline only the MAC's head
    /// frame (the one contending or being sent), the rest waits in `managed`.
    queue: VecDeque<Packet>,
    limit: usize,
    managed: Option<Box<Managed>>,
    cw: u32,
    retries: u32,
    /// Idle slots still to count, relative to the cell's countdown origin.
    backoff: u64,
    contending: bool,
    /// The cell (AP index) serving this node.
    cell: usize,
    connected: bool,
    rng: Rng,
    stats: NodeStats,
}

struct Cell {
    contenders: Vec<u16>,
    busy: bool,
    /// Countdown origin: the medium has been idle DIFS (EIFS) at this time.
    cs: Time,
    gen: u64,
    /// Nodes transmitting in the current exchange and whether each succeeded.
    tx: Vec<(u16, bool)>,
    err: LossProcess,
    err_rng: Rng,
    intf: Option<IntfState>,
}

/// The state of a cell's interference process: the schedule is drawn lazily, interval by
/// interval, from its own stream, so it does not depend on the traffic; the per-frame draws
/// during a burst come from a second stream.
struct IntfState {
    cfg: Interference,
    on: bool,
    /// When the current quiet spell or burst ends.
    until: Time,
    sched: Rng,
    hit: Rng,
    bursts: u64,
}

impl IntfState {
    /// `what`: the process's name in the random streams (`ap/{a}`, `fading/sta/{s}`).
    fn new(cfg: Interference, seed: u64, idx: usize, what: &str) -> IntfState {
        let mut sched = Rng::stream(seed, &format!("wlan/{idx}/interference/{what}"));
        let until = sched.exponential(cfg.mean_gap_ns as f64).ceil() as Time;
        IntfState {
            cfg,
            on: false,
            until,
            sched,
            hit: Rng::stream(seed, &format!("wlan/{idx}/interference-hits/{what}")),
            bursts: 0,
        }
    }

    /// Whether a burst is on at `now` (times queried never decrease).
    fn on_at(&mut self, now: Time) -> bool {
        while now >= self.until {
            self.on = !self.on;
            let mean = if self.on {
                self.bursts += 1;
                self.cfg.mean_burst_ns
            } else {
                self.cfg.mean_gap_ns
            };
            self.until = self
                .until
                .saturating_add((self.sched.exponential(mean as f64).ceil() as Time).max(1));
        }
        self.on
    }

    /// One frame attempt at `now`: corrupted by the interference?
    fn lost(&mut self, now: Time) -> bool {
        self.on_at(now) && self.hit.bernoulli(self.cfg.loss)
    }
}

struct StaRt {
    err: LossProcess,
    err_rng: Rng,
    path: Vec<Waypoint>,
    dist_err: Option<DistanceErrors>,
    fade: Option<IntfState>,
    down_err: LossProcess,
    down_rng: Rng,
    handovers: Vec<(Time, usize)>,
}

/// Handover schedule entry: (time, station, new AP).
type HoEvent = (Time, u16, u16);

const K_TX_START: u64 = 0;
const K_TX_END: u64 = 1;
const K_DISCONNECT: u64 = 2;
const K_RECONNECT: u64 = 3;

#[inline]
fn token(kind: u64, a: u64, b: u64) -> u64 {
    (kind << 56) | ((a & 0xFF_FFFF) << 32) | (b & 0xFFFF_FFFF)
}

pub struct WlanHop {
    t: Timing,
    cw_min: u32,
    cw_max: u32,
    retry_limit: u32,
    n_sta: usize,
    /// Stations 0..n_sta, then APs.
    nodes: Vec<Node>,
    cells: Vec<Cell>,
    stas: Vec<StaRt>,
    ap_pos: Vec<(f64, f64)>,
    /// flow → station | 1<<31 if the station is the flow's sender.
    flow_map: Vec<u32>,
    cross_map: Vec<u32>,
    handovers: Vec<HoEvent>,
    handover_ns: Time,
    handover_flush: bool,
    started: bool,
}

/// A drop at a node's queue, counted as data or ACK.
fn count_queue_drop(st: &mut NodeStats, p: &Packet) {
    if WlanHop::is_ack(p) {
        st.drops_queue_ack += 1;
    } else {
        st.drops_queue_data += 1;
    }
}

const SENDER_BIT: u32 = 1 << 31;
const UNMAPPED: u32 = u32::MAX;

impl WlanHop {
    pub fn new(w: &WlanConfig, seed: u64, idx: usize) -> WlanHop {
        let n_sta = w.stations.len();
        // Validation guarantees every flow through the hop is listed by a station.
        let listed = |f: fn(&StationConfig) -> &Vec<usize>| {
            w.stations
                .iter()
                .flat_map(|s| f(s).iter().copied())
                .max()
                .map_or(0, |m| m + 1)
        };
        let n_flows = listed(|s| &s.flows).max(listed(|s| &s.down_flows));
        let n_cross = listed(|s| &s.cross);
        let mut nodes = Vec::with_capacity(n_sta + w.aps.len());
        let mut flow_map = vec![UNMAPPED; n_flows];
        let mut cross_map = vec![UNMAPPED; n_cross];
        let mut stas = Vec::with_capacity(n_sta);
        for (s, st) in w.stations.iter().enumerate() {
            for &f in &st.flows {
                if f < n_flows {
                    flow_map[f] = s as u32 | SENDER_BIT;
                }
            }
            for &f in &st.down_flows {
                if f < n_flows {
                    flow_map[f] = s as u32;
                }
            }
            for &x in &st.cross {
                if x < n_cross {
                    cross_map[x] = s as u32 | SENDER_BIT;
                }
            }
            let limit = w.sta_queue as usize;
            nodes.push(Node {
                queue: VecDeque::with_capacity(limit.min(1024) + 1),
                limit,
                managed: w.sta_aqm.as_ref().map(|a| {
                    let rng = Rng::stream(seed, &format!("wlan/{idx}/aqm/sta/{s}"));
                    let m = Managed::new(a, Limit::Packets(limit as u64), w.data_rate_bps, rng);
                    Box::new(m)
                }),
                cw: w.cw_min,
                retries: 0,
                backoff: 0,
                contending: false,
                cell: st.ap,
                connected: true,
                rng: Rng::stream(seed, &format!("wlan/{idx}/backoff/sta/{s}")),
                stats: NodeStats::default(),
            });
            stas.push(StaRt {
                err: LossProcess::new(&st.errors),
                err_rng: Rng::stream(seed, &format!("wlan/{idx}/errors/sta/{s}")),
                path: st.path.clone(),
                dist_err: st.distance_errors,
                fade: st
                    .fading
                    .map(|i| IntfState::new(i, seed, idx, &format!("fading/sta/{s}"))),
                down_err: LossProcess::new(&st.errors_down),
                down_rng: Rng::stream(seed, &format!("wlan/{idx}/errors-down/sta/{s}")),
                handovers: Vec::new(),
            });
        }
        for (a, _) in w.aps.iter().enumerate() {
            let limit = w.ap_queue as usize;
            nodes.push(Node {
                queue: VecDeque::with_capacity(limit.min(4096) + 1),
                limit,
                managed: w.ap_aqm.as_ref().map(|q| {
                    let rng = Rng::stream(seed, &format!("wlan/{idx}/aqm/ap/{a}"));
                    let m = Managed::new(q, Limit::Packets(limit as u64), w.data_rate_bps, rng);
                    Box::new(m)
                }),
                cw: w.cw_min,
                retries: 0,
                backoff: 0,
                contending: false,
                cell: a,
                connected: true,
                rng: Rng::stream(seed, &format!("wlan/{idx}/backoff/ap/{a}")),
                stats: NodeStats::default(),
            });
        }
        let cells = w
            .aps
            .iter()
            .enumerate()
            .map(|(a, ap)| Cell {
                contenders: Vec::with_capacity(n_sta + 1),
                busy: false,
                cs: 0,
                gen: 0,
                tx: Vec::with_capacity(n_sta + 1),
                err: LossProcess::new(&ap.errors),
                err_rng: Rng::stream(seed, &format!("wlan/{idx}/errors/ap/{a}")),
                intf: ap
                    .interference
                    .map(|i| IntfState::new(i, seed, idx, &format!("ap/{a}"))),
            })
            .collect();
        let ap_pos: Vec<(f64, f64)> = w.aps.iter().map(|a| (a.x, a.y)).collect();
        let handovers = handover_schedule(w, &ap_pos);
        WlanHop {
            t: Timing::new(w),
            cw_min: w.cw_min,
            cw_max: w.cw_max,
            retry_limit: w.retry_limit,
            n_sta,
            nodes,
            cells,
            stas,
            ap_pos,
            flow_map,
            cross_map,
            handovers,
            handover_ns: w.handover_ns,
            handover_flush: w.handover_flush,
            started: false,
        }
    }

    /// Station of a packet and whether it travels uplink.
    #[inline]
    fn classify(&self, p: &Packet) -> (usize, bool) {
        let m = if p.udp {
            self.cross_map[p.flow as usize]
        } else {
            self.flow_map[p.flow as usize]
        };
        debug_assert_ne!(
            m, UNMAPPED,
            "validated: every flow through the hop has a station"
        );
        let sta = (m & !SENDER_BIT) as usize;
        let sender_side = m & SENDER_BIT != 0;
        let uplink = if p.udp {
            true
        } else {
            sender_side == (p.dir == Dir::Fwd)
        };
        (sta, uplink)
    }

    #[inline]
    /// A TCP segment without payload (pure ACK, also SYN/FIN): counted as "ack" in the stats.
    fn is_ack(p: &Packet) -> bool {
        !p.udp && p.seg.payload_len == 0
    }

    fn start(&mut self, ctx: &mut Ctx) {
        self.started = true;
        for (i, &(t, _, _)) in self.handovers.iter().enumerate() {
            ctx.timer(t.max(ctx.now), token(K_DISCONNECT, i as u64, 0));
        }
    }

    fn enqueue(&mut self, node: usize, p: Packet, ctx: &mut Ctx) {
        let n = &mut self.nodes[node];
        if let Some(m) = n.managed.as_mut() {
            let st = &mut n.stats;
            m.enqueue(p, ctx, |p| count_queue_drop(st, p));
            Self::refill(n, ctx);
            let waiting = n.managed.as_ref().map_or(0, |m| m.q.len() as u64);
            let held = n.queue.len() as u64 + waiting;
            n.stats.max_queue = n.stats.max_queue.max(held);
            if !n.contending && n.connected && !n.queue.is_empty() {
                let c = n.cell;
                self.join(node, ctx.now);
                self.schedule(c, ctx);
            }
            return;
        }
        if n.queue.len() >= n.limit {
            count_queue_drop(&mut n.stats, &p);
            ctx.drop(p, DropKind::Queue);
            return;
        }
        n.queue.push_back(p);
        n.stats.max_queue = n.stats.max_queue.max(n.queue.len() as u64);
        if !n.contending && n.connected {
            let c = n.cell;
            self.join(node, ctx.now);
            self.schedule(c, ctx);
        }
    }

    /// A node with a queue discipline whose MAC holds no frame takes the
    /// next one from it (a driver pulling from its qdisc when it has room,
    /// `qdisc_restart()`): the discipline's sojourn runs from enqueue to the
    /// head of the MAC's queue, and its dequeue-time drops happen then.
    fn refill(n: &mut Node, ctx: &mut Ctx) {
        let Some(m) = n.managed.as_mut() else { return };
        if !n.queue.is_empty() {
            return;
        }
        let st = &mut n.stats;
        if let Some(h) = m.dequeue(ctx, |p| count_queue_drop(st, p)) {
            n.queue.push_back(ctx.unpark(h));
        }
    }

    /// `node` (with a frame at its head) starts contending in its cell.
    fn join(&mut self, node: usize, now: Time) {
        let slot = self.t.slot;
        let n = &mut self.nodes[node];
        let cell = &mut self.cells[n.cell];
        // Counters are kept relative to the countdown origin `cs`; a node that joins while
        // the countdown runs starts at the next slot boundary.
        let offset = if cell.busy || now <= cell.cs {
            0
        } else {
            (now - cell.cs).div_ceil(slot)
        };
        // IEEE 802.11-2007 §9.2.4: backoff = random integer drawn from [0, CW].
        n.backoff = offset + n.rng.next_u64() % (n.cw as u64 + 1);
        n.contending = true;
        cell.contenders.push(node as u16);
    }

    fn leave(&mut self, node: usize, c: usize) {
        let cell = &mut self.cells[c];
        if let Some(k) = cell.contenders.iter().position(|&x| x as usize == node) {
            cell.contenders.swap_remove(k);
        }
        self.nodes[node].contending = false;
    }

    /// (Re)arm the cell's next transmission.
    fn schedule(&mut self, c: usize, ctx: &mut Ctx) {
        if self.cells[c].busy {
            return;
        }
        // Any start armed before is stale: its contender may have left (a handover) and left
        // the cell without contenders.
        self.cells[c].gen += 1;
        let cell = &self.cells[c];
        let Some(k) = cell
            .contenders
            .iter()
            .map(|&x| self.nodes[x as usize].backoff)
            .min()
        else {
            return;
        };
        let at = (cell.cs + k * self.t.slot).max(ctx.now);
        ctx.timer(at, token(K_TX_START, c as u64, cell.gen));
    }

    /// Frame error for an attempt to or from station `sta` (not collided); `down`: the AP's
    /// frame to it.
    fn frame_error(&mut self, sta: usize, now: Time, down: bool) -> bool {
        let ap_pos = self.ap_pos[self.nodes[sta].cell];
        let s = &mut self.stas[sta];
        let cell = &mut self.cells[self.nodes[sta].cell];
        let cell_hit = cell.err.lost(&mut cell.err_rng);
        let intf_hit = cell.intf.as_mut().is_some_and(|i| i.lost(now));
        let cell_hit = cell_hit || intf_hit;
        let fade_hit = s.fade.as_mut().is_some_and(|f| f.lost(now));
        let down_hit = down && s.down_err.lost(&mut s.down_rng);
        let lost = s.err.lost(&mut s.err_rng) || cell_hit || fade_hit || down_hit;
        if let Some(d) = s.dist_err {
            let (x, y) = position(&s.path, now).unwrap_or(ap_pos);
            let dist = ((x - ap_pos.0).powi(2) + (y - ap_pos.1).powi(2)).sqrt();
            let pd = ((dist - d.d0_m) / (d.d1_m - d.d0_m)).clamp(0.0, 1.0);
            let hit = s.err_rng.bernoulli(pd);
            return lost || hit;
        }
        lost
    }

    fn tx_start(&mut self, c: usize, gen: u64, ctx: &mut Ctx) {
        if self.cells[c].busy || self.cells[c].gen & 0xFFFF_FFFF != gen {
            return;
        }
        let now = ctx.now;
        let k = self.cells[c]
            .contenders
            .iter()
            .map(|&x| self.nodes[x as usize].backoff)
            .min()
            .unwrap();
        let mut tx = std::mem::take(&mut self.cells[c].tx);
        tx.clear();
        for &x in &self.cells[c].contenders {
            let n = &mut self.nodes[x as usize];
            n.backoff -= k;
            if n.backoff == 0 {
                tx.push((x, true));
            }
        }
        let collided = tx.len() > 1;
        let mut longest = 0;
        for e in tx.iter_mut() {
            let node = e.0 as usize;
            let (size, dest) = {
                let p = self.nodes[node].queue.front().unwrap();
                let dest = if node < self.n_sta {
                    node
                } else {
                    self.classify(p).0
                };
                (p.size, dest)
            };
            longest = longest.max(self.t.data(size));
            self.nodes[node].stats.attempts += 1;
            if collided {
                self.nodes[node].stats.collisions += 1;
                e.1 = false;
            } else if self.frame_error(dest, now, node >= self.n_sta) {
                self.nodes[node].stats.frame_errors += 1;
                e.1 = false;
            } else {
                let p = *self.nodes[node].queue.front().unwrap();
                ctx.tap(&p, now);
            }
        }
        let cell = &mut self.cells[c];
        cell.tx = tx;
        cell.busy = true;
        // Success: DATA + SIFS + ACK; collision: DATA + (EIFS − DIFS) — equal (module notes).
        let end = now
            .saturating_add(longest)
            .saturating_add(self.t.sifs)
            .saturating_add(self.t.ack);
        ctx.timer(end, token(K_TX_END, c as u64, 0));
    }

    fn tx_end(&mut self, c: usize, ctx: &mut Ctx) {
        let now = ctx.now;
        let mut tx = std::mem::take(&mut self.cells[c].tx);
        {
            let cell = &mut self.cells[c];
            cell.busy = false;
            cell.cs = now.saturating_add(self.t.difs);
        }
        for &(x, ok) in &tx {
            let node = x as usize;
            let n = &mut self.nodes[node];
            if ok {
                let p = n.queue.pop_front().unwrap();
                n.stats.tx_frames += 1;
                n.stats.tx_bytes += p.size as u64;
                if Self::is_ack(&p) {
                    n.stats.tx_ack += 1;
                } else {
                    n.stats.tx_data += 1;
                }
                n.cw = self.cw_min;
                n.retries = 0;
                ctx.forward_now(p);
            } else {
                n.retries += 1;
                if n.retries >= self.retry_limit {
                    // IEEE 802.11-2007 §9.2.4: discard at the retry limit; reset CW.
                    let p = n.queue.pop_front().unwrap();
                    if Self::is_ack(&p) {
                        n.stats.drops_retry_ack += 1;
                    } else {
                        n.stats.drops_retry_data += 1;
                    }
                    ctx.drop(p, DropKind::Loss);
                    n.cw = self.cw_min;
                    n.retries = 0;
                } else {
                    // IEEE 802.11-2007 §9.2.4: CW = min(2·(CW+1) − 1, aCWmax).
                    n.cw = (2 * (n.cw + 1) - 1).min(self.cw_max);
                }
            }
            Self::refill(n, ctx);
            if self.handover_flush && !n.connected && node < self.n_sta {
                // The link was lost during this exchange: what is left goes too (module notes).
                while let Some(p) = n.queue.pop_back() {
                    n.stats.drops_handover += 1;
                    ctx.drop(p, DropKind::Loss);
                }
                n.retries = 0;
            }
            if !n.queue.is_empty() && n.connected && n.cell == c {
                n.backoff = n.rng.next_u64() % (n.cw as u64 + 1);
            } else {
                self.leave(node, c);
                let n = &self.nodes[node];
                if !n.queue.is_empty() && n.connected {
                    let nc = n.cell;
                    self.join(node, now);
                    self.schedule(nc, ctx);
                }
            }
        }
        tx.clear();
        self.cells[c].tx = tx;
        self.schedule(c, ctx);
    }

    fn disconnect(&mut self, i: usize, ctx: &mut Ctx) {
        let (_, sta, new_ap) = self.handovers[i];
        let sta = sta as usize;
        let old = self.nodes[sta].cell;
        self.stas[sta].handovers.push((ctx.now, new_ap as usize));
        self.nodes[sta].connected = false;
        let transmitting =
            self.cells[old].busy && self.cells[old].tx.iter().any(|&(x, _)| x as usize == sta);
        if self.nodes[sta].contending && !transmitting {
            self.leave(sta, old);
        }
        if self.handover_flush {
            // The station's queued uplink frames are lost with the link (module notes); a frame
            // on the air completes its exchange.
            let keep = usize::from(transmitting);
            let n = &mut self.nodes[sta];
            while n.queue.len() > keep {
                let p = n.queue.pop_back().unwrap();
                n.stats.drops_handover += 1;
                ctx.drop(p, DropKind::Loss);
            }
        }
        // The old AP discards what it holds for the departed station (keeping a frame that
        // is on the air now; its exchange completes).
        let ap = self.n_sta + old;
        let ap_busy =
            self.cells[old].busy && self.cells[old].tx.iter().any(|&(x, _)| x as usize == ap);
        let mut q = std::mem::take(&mut self.nodes[ap].queue);
        let mut k = 0usize;
        let mut dropped = 0u64;
        q.retain(|p| {
            let keep = (k == 0 && ap_busy) || self.classify(p).0 != sta;
            k += 1;
            if !keep {
                ctx.drop(*p, DropKind::Loss);
                dropped += 1;
            }
            keep
        });
        self.nodes[ap].queue = q;
        self.nodes[ap].stats.drops_handover += dropped;
        if self.nodes[ap].queue.is_empty() && self.nodes[ap].contending && !ap_busy {
            self.leave(ap, old);
        }
        self.schedule(old, ctx);
        ctx.timer(
            ctx.now.saturating_add(self.handover_ns),
            token(K_RECONNECT, i as u64, 0),
        );
    }

    fn reconnect(&mut self, i: usize, ctx: &mut Ctx) {
        let (_, sta, new_ap) = self.handovers[i];
        let sta = sta as usize;
        let n = &mut self.nodes[sta];
        n.cell = new_ap as usize;
        n.connected = true;
        n.cw = self.cw_min;
        n.retries = 0;
        if !n.queue.is_empty() && !n.contending {
            self.join(sta, ctx.now);
            self.schedule(new_ap as usize, ctx);
        }
    }

    /// Counters of node `i` (stations first, then APs).
    pub fn node_stats(&self, i: usize) -> NodeStats {
        self.nodes[i].stats
    }
}

/// Position on a piecewise-linear path at `t` (None for a station without a path).
fn position(path: &[Waypoint], t: Time) -> Option<(f64, f64)> {
    let first = path.first()?;
    if t <= first.t_ns {
        return Some((first.x, first.y));
    }
    for w in path.windows(2) {
        let (a, b) = (w[0], w[1]);
        if t <= b.t_ns {
            let f = (t - a.t_ns) as f64 / (b.t_ns - a.t_ns) as f64;
            return Some((a.x + f * (b.x - a.x), a.y + f * (b.y - a.y)));
        }
    }
    let l = path.last().unwrap();
    Some((l.x, l.y))
}

/// When each moving station hands over: sampled every 10 ms along its path, a handover starts
/// when another AP is nearer than the current one by more than the margin.
fn handover_schedule(w: &WlanConfig, ap_pos: &[(f64, f64)]) -> Vec<HoEvent> {
    const STEP: Time = 10_000_000;
    let mut ev = Vec::new();
    for (s, st) in w.stations.iter().enumerate() {
        if st.path.len() < 2 {
            continue;
        }
        let mut cur = st.ap;
        let mut t = st.path[0].t_ns;
        let end = st.path.last().unwrap().t_ns;
        let mut busy_until = 0;
        while t <= end {
            if t >= busy_until {
                let (x, y) = position(&st.path, t).unwrap();
                let d = |a: usize| ((x - ap_pos[a].0).powi(2) + (y - ap_pos[a].1).powi(2)).sqrt();
                let best = (0..ap_pos.len())
                    .min_by(|&a, &b| d(a).total_cmp(&d(b)))
                    .unwrap();
                if best != cur && d(best) + w.handover_margin_m < d(cur) {
                    ev.push((t, s as u16, best as u16));
                    cur = best;
                    busy_until = t.saturating_add(w.handover_ns);
                }
            }
            t += STEP;
        }
    }
    ev.sort_by_key(|e| (e.0, e.1));
    ev
}

impl Component for WlanHop {
    fn on_packet(&mut self, p: Packet, ctx: &mut Ctx) {
        if !self.started {
            self.start(ctx);
        }
        let (sta, uplink) = self.classify(&p);
        if uplink {
            if self.handover_flush && !self.nodes[sta].connected {
                // Not associated: no data frames (IEEE 802.11-2007 §11.3); module notes.
                self.nodes[sta].stats.drops_handover += 1;
                ctx.drop(p, DropKind::Loss);
                return;
            }
            self.enqueue(sta, p, ctx);
            return;
        }
        if !self.nodes[sta].connected {
            let ap = self.n_sta + self.nodes[sta].cell;
            self.nodes[ap].stats.drops_handover += 1;
            ctx.drop(p, DropKind::Loss);
            return;
        }
        let ap = self.n_sta + self.nodes[sta].cell;
        self.enqueue(ap, p, ctx);
    }

    fn on_timer(&mut self, tok: u64, ctx: &mut Ctx) {
        let kind = tok >> 56;
        let a = ((tok >> 32) & 0xFF_FFFF) as usize;
        let b = tok & 0xFFFF_FFFF;
        match kind {
            K_TX_START => self.tx_start(a, b, ctx),
            K_TX_END => self.tx_end(a, ctx),
            K_DISCONNECT => self.disconnect(a, ctx),
            K_RECONNECT => self.reconnect(a, ctx),
            _ => unreachable!("wlan timer kind {kind}"),
        }
    }

    fn stats(&self, name: &str) -> Vec<serde_json::Value> {
        self.nodes
            .iter()
            .enumerate()
            .map(|(i, n)| {
                let s = n.stats;
                let (role, idx) = if i < self.n_sta {
                    ("station", i)
                } else {
                    ("ap", i - self.n_sta)
                };
                let ho: &[(Time, usize)] = if i < self.n_sta {
                    &self.stas[i].handovers
                } else {
                    &[]
                };
                let bursts = if i < self.n_sta {
                    0
                } else {
                    self.cells[i - self.n_sta]
                        .intf
                        .as_ref()
                        .map_or(0, |x| x.bursts)
                };
                let ho_t: Vec<f64> = ho.iter().map(|&(t, _)| t as f64 * 1e-9).collect();
                let ho_ap: Vec<usize> = ho.iter().map(|&(_, a)| a).collect();
                let mut v = serde_json::json!({
                    "name": name, "kind": "wlan", "dir": if role == "ap" { "down" } else { "up" },
                    "role": role, "index": idx, "cell": n.cell,
                    "tx_packets": s.tx_frames, "tx_bytes": s.tx_bytes,
                    "tx_data": s.tx_data, "tx_ack": s.tx_ack,
                    "drops_queue": s.drops_queue_data + s.drops_queue_ack,
                    "drops_loss": s.drops_retry_data + s.drops_retry_ack + s.drops_handover,
                    "drops_queue_data": s.drops_queue_data, "drops_queue_ack": s.drops_queue_ack,
                    "drops_retry_data": s.drops_retry_data, "drops_retry_ack": s.drops_retry_ack,
                    "drops_handover": s.drops_handover,
                    "attempts": s.attempts, "collisions": s.collisions,
                    "frame_errors": s.frame_errors, "max_queue_packets": s.max_queue,
                    "handover_t_s": ho_t, "handover_ap": ho_ap,
                    "interference_bursts": bursts,
                });
                if let Some(m) = &n.managed {
                    m.stats_into(&mut v);
                }
                // Only on a station that has fading, so other runs' rows stay as they were.
                if let Some(f) = self.stas.get(i).and_then(|x| x.fade.as_ref()) {
                    v["fades"] = f.bursts.into();
                }
                v
            })
            .collect()
    }

    fn held(&self) -> u64 {
        let queued = |n: &Node| n.managed.as_ref().map_or(0, |m| m.q.len() as u64);
        self.nodes
            .iter()
            .map(|n| n.queue.len() as u64 + queued(n))
            .sum()
    }

    fn tx_packets(&self) -> u64 {
        self.nodes.iter().map(|n| n.stats.tx_frames).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> WlanConfig {
        serde_json::from_str(r#"{"name":"w","aps":[{"name":"ap"}],"stations":[{"name":"s"}]}"#)
            .unwrap()
    }

    #[test]
    fn erp_ofdm_frame_times() {
        let t = Timing::new(&cfg());
        // docs/algorithms.md §9.1 worked numbers: 1500-B IP packet at 54 Mbit/s = 254 µs,
        // ACK at 24 Mbit/s = 34 µs, DIFS = 28 µs.
        assert_eq!(t.data(1500), 254_000);
        assert_eq!(t.ack, 34_000);
        assert_eq!(t.difs, 28_000);
        // 40-B TCP ACK: 16+8·76+6 = 630 bits → 3 symbols → 38 µs.
        assert_eq!(t.data(40), 38_000);
        // ACK at 6 Mbit/s (N_DBPS 24): 134 bits → 6 symbols → 50 µs.
        assert_eq!(ofdm_txtime(ACK_BYTES, 6_000_000, 6_000), 50_000);
    }

    #[test]
    fn bianchi_single_station_is_the_no_collision_cycle() {
        let t = Timing::new(&cfg());
        let (tau, p, s) = bianchi(1, 16, 6, &t, 1500);
        assert!(p.abs() < 1e-9);
        assert!((tau - 2.0 / 17.0).abs() < 1e-9);
        // One station: mean backoff (W−1)/2 = 7.5 slots per exchange.
        let cycle = t.exchange(1500) as f64 * 1e-9 + 7.5 * 9e-6;
        assert!((s - 12000.0 / cycle).abs() / s < 1e-9, "{s}");
        // n = 10: collisions cut throughput below the 1-station value.
        let (_, p10, s10) = bianchi(10, 16, 6, &t, 1500);
        assert!(p10 > 0.2 && p10 < 0.5, "{p10}");
        assert!(s10 < s);
    }

    #[test]
    fn interference_schedule_alternates_with_the_configured_means() {
        let cfg = Interference {
            mean_gap_ns: 10_000_000,
            mean_burst_ns: 2_000_000,
            loss: 1.0,
        };
        let mut a = IntfState::new(cfg, 3, 0, "ap/1");
        // Sample every 10 µs for 200 s: the share of time on is burst / (gap + burst) = 1/6,
        // and about 200 s / 12 ms bursts start.
        let step = 10_000;
        let n = 20_000_000u64;
        let mut on = 0u64;
        for k in 0..n {
            on += u64::from(a.on_at(k * step));
        }
        let share = on as f64 / n as f64;
        assert!((share - 1.0 / 6.0).abs() < 0.01, "{share}");
        let expect = 200e9 / 12e6;
        assert!(
            (a.bursts as f64 - expect).abs() < 0.05 * expect,
            "{}",
            a.bursts
        );
        // The schedule does not depend on how often it is queried, and loss 1 hits every frame
        // of a burst.
        let mut b = IntfState::new(cfg, 3, 0, "ap/1");
        let mut c = IntfState::new(cfg, 3, 0, "ap/1");
        for k in 0..200_000u64 {
            let t = k * 1_000_000;
            if k % 7 == 0 {
                assert_eq!(b.on_at(t), c.lost(t));
            } else {
                c.on_at(t);
            }
            b.on_at(t);
        }
        assert_eq!(b.bursts, c.bursts);
        // Another AP's stream gives another schedule.
        let mut d = IntfState::new(cfg, 3, 0, "ap/0");
        d.on_at(200_000_000_000);
        assert_ne!(d.bursts, b.bursts);
    }

    #[test]
    fn handover_schedule_midpoint() {
        let mut w = cfg();
        w.aps = vec![
            ApConfig {
                name: "a".into(),
                errors: LossConfig::None,
                interference: None,
                x: 0.0,
                y: 0.0,
            },
            ApConfig {
                name: "b".into(),
                errors: LossConfig::None,
                interference: None,
                x: 20.0,
                y: 0.0,
            },
        ];
        w.stations[0].path = vec![
            Waypoint {
                t_ns: 0,
                x: 0.0,
                y: 0.0,
            },
            Waypoint {
                t_ns: 20_000_000_000,
                x: 20.0,
                y: 0.0,
            },
        ];
        let aps: Vec<_> = w.aps.iter().map(|a| (a.x, a.y)).collect();
        let ev = handover_schedule(&w, &aps);
        assert_eq!(ev.len(), 1);
        // Nearer to b from just past 10 m (t = 10 s); the first 10-ms sample after.
        assert_eq!(ev[0].1, 0);
        assert_eq!(ev[0].2, 1);
        assert!(
            ev[0].0 > 10_000_000_000 && ev[0].0 <= 10_010_000_000,
            "{}",
            ev[0].0
        );
        w.handover_margin_m = 4.0;
        let ev = handover_schedule(&w, &aps);
        // b nearer by 4 m at x = 12 m.
        assert!(ev[0].0 > 12_000_000_000 && ev[0].0 <= 12_010_000_000);
    }
}
