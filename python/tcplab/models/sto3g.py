"""Sekiguchi et al., IPSJ Journal 2008, Section 5: unnecessary retransmissions and throughput
of a transfer hit by one spurious timeout (STO), with and without F-RTO + Eifel response.

Time is counted in RTT rounds ``d``; windows and data in packets of ``mss`` bytes.
``w0`` initial window, ``r`` slow-start growth per round (1.5 with delayed ACKs, 2 without),
``c`` = BDP = w_max, ``m`` congestion-avoidance growth per round, ``w_s`` the window when the
STO hits (round ``t_s``), ``tau`` the delay spike (seconds).

Readings of the printed equations (documented differences):
- eq. (2) is printed ``w0(r^{t_s-1})/(r-1)``; tcplab uses the geometric sum of the windows sent
  up to and including round t_s, ``w0(r^{t_s}-1)/(r-1)``, consistent with eqs. (3)-(4).
- eqs. (7) and (9) are printed without the spike duration ``tau``, which makes T1 jump at
  D = D_1; tcplab keeps ``tau`` in every region (the spike costs its time whatever D is).
- t_1 = log_r(D_1(r-1)/w0 + 1) (the round where slow start reaches c, from eq. (5)) and
  t_2 = t_s + tau + (c - w_s/2)/m (linear growth from w_s/2 to c, consistent with eq. (6)).
"""

from __future__ import annotations

import math

from tcplab.models import model


def _bdp_packets(rate_bps: float, rtt: float, mss: float) -> float:
    return rate_bps * rtt / 8.0 / mss


@model("sto3g-unnecessary-rtx")
def unnecessary_rtx(
    rate_bps: float,
    rtt: float,
    mss: float = 1460.0,
    max_cwnd: float = math.inf,
    w_s: float = math.inf,
    frto: float = 0.0,
) -> int:
    """Unnecessary retransmissions (packets) after one STO, eq. (1): 1 with F-RTO + Eifel,
    min(w_s, w_max) without, w_max = min(BDP, max_cwnd) (``max_cwnd`` in bytes)."""
    if not (rate_bps > 0 and rtt > 0 and mss > 0 and max_cwnd > 0 and w_s > 0):
        raise ValueError("sto3g-unnecessary-rtx: need rate_bps, rtt, mss, max_cwnd, w_s > 0")
    if frto:
        return 1  # Sekiguchi 2008 eq. (1), with F-RTO and Eifel response
    # eq. (1): a window of whole packets: cwnd capped at the BDP holds floor(BDP/mss) packets
    # (384 kb/s x 300 ms = 14400 B -> 9.9 -> the paper's 10 when the cap is the BDP rounded);
    # a byte cap holds floor(max_cwnd/mss) full packets (64 KB -> 44).
    bdp = _bdp_packets(rate_bps, rtt, mss)
    w_max = round(bdp) if not math.isfinite(max_cwnd) else math.floor(max_cwnd / mss)
    return int(min(w_s, w_max))


@model("sto3g-throughput")
def throughput(
    size: float,
    rate_bps: float,
    rtt: float,
    w_s: float,
    tau: float = 1.0,
    frto: float = 1.0,
    w0: float = 4096.0,
    mss: float = 1460.0,
    r: float = 1.5,
    m: float = 0.5,
) -> float:
    """Throughput in bit/s of a ``size``-byte transfer with one STO when cwnd = ``w_s``
    packets, eqs. (2)-(10); ``frto`` = 1 with F-RTO + Eifel response (T1), 0 without (T2).
    ``w0`` initial window in bytes; cwnd is capped at the BDP c."""
    if not (size > 0 and rate_bps > 0 and rtt > 0 and w0 > 0 and mss > 0 and tau >= 0):
        raise ValueError("sto3g-throughput: need size, rate_bps, rtt, w0, mss > 0, tau >= 0")
    if not (r > 1 and m > 0):
        raise ValueError("sto3g-throughput: need r > 1 and m > 0")
    c = _bdp_packets(rate_bps, rtt, mss)
    w0p = w0 / mss
    if not (w0p <= w_s <= c * (1 + 1e-9)):
        raise ValueError(f"sto3g-throughput: need w0 <= w_s <= c (c = {c:.2f} packets)")
    d_pk = size / mss
    taur = tau / rtt
    t_s = 1.0 + math.log(w_s / w0p, r)  # w_s = w0 r^(t_s - 1)
    d_s = w0p * (r**t_s - 1) / (r - 1)  # eq. (2), see module note
    d_1 = (r * c - w0p) / (r - 1)  # eq. (3)
    d_2 = d_s + (c * c - w_s * w_s / 4) / (2 * m)  # eq. (4)
    t_1 = math.log(d_1 * (r - 1) / w0p + 1, r)
    t_2 = t_s + taur + (c - w_s / 2) / m
    if d_pk < d_s:
        # The transfer ends before the STO: both are plain slow start.
        rounds = math.log(d_pk * (r - 1) / w0p + 1, r)
    elif frto:
        if d_pk < d_1:
            rounds = taur + math.log(d_pk * (r - 1) / w0p + 1, r)  # eq. (5)
        else:
            rounds = taur + t_1 + (d_pk - d_1) / c  # eqs. (7), (9)
    else:
        if d_pk < d_2:
            x = (-w_s + math.sqrt(w_s * w_s + 8 * m * (d_pk - d_s))) / (2 * m)
            rounds = t_s + taur + x  # eqs. (6), (8)
        else:
            rounds = t_2 + (d_pk - d_2) / c  # eq. (10)
    return size * 8.0 / (rounds * rtt)
