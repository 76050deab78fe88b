"""802.11 DCF models used to check the WLAN cell (``crates/tcplab-sim/src/wlan.rs``).

- Bianchi, "Performance analysis of the IEEE 802.11 distributed coordination function", IEEE JSAC
  18(3), 2000: the saturation fixed point (eqs. 7 and 9) and throughput (eq. 13), basic access,
  with T_s = T_c as the simulator charges them (DATA + SIFS + ACK + DIFS; a collision costs the
  DATA frame plus EIFS). 802.11g ERP-OFDM timing as in the Rust module.
- ``ack_overflow_stations``: the smallest number of uplink TCP stations whose ACKs overflow the
  AP buffer when each flow is window-limited (Pilosof et al., INFOCOM 2003, mechanism): the AP
  holds about n·W/b ACKs for n flows of W segments and b segments per ACK.
"""

from __future__ import annotations

import math

from tcplab.models import model

__all__ = ["ack_overflow_stations", "bianchi", "ofdm_txtime"]


def ofdm_txtime(mpdu_bytes: int, rate_bps: float, signal_ext_s: float = 6e-6) -> float:
    """ERP-OFDM PPDU duration in s (IEEE 802.11-2007 §17.4.3 plus the 6-µs signal extension)."""
    ndbps = rate_bps * 4e-6
    nsym = math.ceil((16 + 8 * mpdu_bytes + 6) / ndbps)
    return 20e-6 + 4e-6 * nsym + signal_ext_s


@model("bianchi")
def bianchi(
    n: int,
    ip_bytes: int = 1500,
    cw_min: int = 15,
    cw_max: int = 1023,
    data_rate: float = 54e6,
    basic_rate: float = 24e6,
    slot: float = 9e-6,
    sifs: float = 10e-6,
) -> dict[str, float]:
    """Saturation throughput (bit/s of IP payload) of ``n`` 802.11g stations; returns
    ``{"tau", "p", "throughput_bps"}``."""
    if n < 1 or ip_bytes < 1 or cw_min < 1 or cw_max < cw_min:
        raise ValueError("bianchi: need n >= 1, ip_bytes >= 1, 1 <= cw_min <= cw_max")
    w = cw_min + 1
    m = round(math.log2((cw_max + 1) / w))

    def tau_of(p: float) -> float:  # eq. (7)
        return 2 * (1 - 2 * p) / ((1 - 2 * p) * (w + 1) + p * w * (1 - (2 * p) ** m))

    lo, hi = 0.0, 0.999999
    for _ in range(200):  # eq. (9) by bisection
        p = 0.5 * (lo + hi)
        if p - (1 - (1 - tau_of(p)) ** (n - 1)) > 0:
            hi = p
        else:
            lo = p
    p = 0.5 * (lo + hi)
    tau = tau_of(p)
    p_tr = 1 - (1 - tau) ** n
    p_s = n * tau * (1 - tau) ** (n - 1) / p_tr
    difs = sifs + 2 * slot
    ts = ofdm_txtime(ip_bytes + 36, data_rate) + sifs + ofdm_txtime(14, basic_rate) + difs
    tc = ts
    s = p_s * p_tr * ip_bytes * 8 / ((1 - p_tr) * slot + p_tr * p_s * ts + p_tr * (1 - p_s) * tc)
    return {"tau": tau, "p": p, "throughput_bps": s}


@model("ack_overflow_stations")
def ack_overflow_stations(ap_queue: float, window_segments: float, segs_per_ack: float = 1) -> int:
    """Smallest n with n·W/b > Q: from this many window-limited uplink flows on, their ACKs
    overflow an AP buffer of ``ap_queue`` packets."""
    if ap_queue <= 0 or window_segments <= 0 or segs_per_ack < 1:
        raise ValueError("ack_overflow_stations: need ap_queue > 0, window > 0, segs_per_ack >= 1")
    return math.floor(ap_queue * segs_per_ack / window_segments) + 1
