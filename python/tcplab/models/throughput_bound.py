# ruff: noqa: RUF002, RUF003  (the thesis's notation: −, –, α, μ)
"""The end-host TCP throughput bound of Ito's thesis (docs/throughput-bound-notes.md).

Masaya Ito, *A study on the upper bound of TCP throughput in a combined network–terminal system*,
PhD thesis, Osaka University, 2008. Equation numbers below are the thesis's.

Units: every function takes SI quantities — bandwidths in bit/s, times in s, MTU/MSS in bytes —
and returns bit/s (or a dimensionless ratio) unless the thesis's closed forms (3.57)–(3.59) are
asked for, which return Mbps with the thesis's "1024 ≈ 1 Gbps" convention.

Assumptions where the thesis is ambiguous (numbers refer to §6 of
docs/throughput-bound-notes.md):

- §6.7: (3.44)/(3.45) are printed with ``min`` in the first term; ``reading="max"`` is the reading
  that makes the bound approach the conventional model (3.5) above the 12 ms crossover.
  Both are implemented; :func:`crossover_rtt` gives where the two branches meet.
- §6.6: the fragmentation factor α (3.43) is 1 whenever MTU ≥ 1000 B.
- §6.2: in (2.1) the Δ < 0 branch uses Tx − |Δ|.
- §6.10: t_ptr in (3.60) is t_L; the constant 2.5e-11 s/bit is kept as printed.
"""

from __future__ import annotations

import math

from tcplab.models import model

GBPS = 1e9


def _pos(**kw: float) -> None:
    for k, v in kw.items():
        if not (v > 0 and math.isfinite(v)):
            raise ValueError(f"{k}: must be > 0 and finite (got {v})")


# -- conventional models (§3.2) ----------------------------------------------------------------


@model("tb_conventional_pftk")
def conventional_pftk(
    mtu: float, rtt: float, p: float, t0: float, wmax: float, printed: bool = True
) -> float:
    """Thesis eq. (3.1), bit/s: the Padhye et al. throughput as the thesis prints it
    (√(4p/3)); ``printed=False`` uses Padhye's √(2bp/3) with b = 2, which is the same number —
    the two forms coincide at b = 2."""
    _pos(mtu=mtu, rtt=rtt, t0=t0, wmax=wmax)
    if not 0 < p < 1:
        raise ValueError(f"p: must be in (0, 1) (got {p})")
    root = math.sqrt(4 * p / 3) if printed else math.sqrt(2 * 2 * p / 3)
    denom = rtt * root + t0 * min(1.0, 3 * math.sqrt(3 * p / 4)) * p * (1 + 32 * p * p)
    return 8 * min(wmax * mtu / rtt, mtu / denom)


@model("tb_conventional")
def conventional(mtu: float, rtt: float, sqrt_p: float = 1e-3, wmax: float | None = None) -> float:
    """Thesis eq. (3.5), bit/s: T_conv = W_max·MTU/RTT with W_max = 1/√p unless given. Not capped
    at the link rate — that is the point of (3.8)."""
    _pos(mtu=mtu, rtt=rtt, sqrt_p=sqrt_p)
    w = 1.0 / sqrt_p if wmax is None else wmax
    return w * mtu * 8 / rtt


@model("tb_rtt_lan")
def rtt_lan(mtu: float, b: float, distance: float = 0.0) -> float:
    """Thesis eq. (3.6), s: RTT = L/(0.66c) + MTU/B (MTU in bits); eq. (3.7) when L → 0."""
    _pos(mtu=mtu, b=b)
    return distance / (0.66 * 3e8) + mtu * 8 / b


# -- small-RTT bound (§3.3.1) ------------------------------------------------------------------


@model("tb_small_rtt")
def small_rtt_bound(
    mtu: float, b_ge: float, b_fsb: float, t_l: float, t_csum: float = 0.0
) -> float:
    """Thesis eq. (3.12), bit/s: two packets in the RTT, one in each end host."""
    _pos(mtu=mtu, b_ge=b_ge, b_fsb=b_fsb)
    bits = 8 * mtu
    send = bits / b_ge + t_l
    recv = bits / b_ge + bits / (0.5 * b_fsb) + t_csum + t_l
    return 2 * bits / (send + recv)


@model("tb_small_rtt_limit")
def small_rtt_limit(b_ge: float, b_fsb: float) -> float:
    """Right-hand side of eq. (3.12), bit/s: 1/(1/B_GE + 1/B_FSB)."""
    _pos(b_ge=b_ge, b_fsb=b_fsb)
    return 1.0 / (1 / b_ge + 1 / b_fsb)


@model("tb_table31_ratio")
def table31_ratio(mtu: float, b_ge: float, b_fsb: float, t_l: float) -> float:
    """Table 3.1's normalised ratio 1/(1 + 2B_GE/B_FSB + t_L·B_GE/MTU) (MTU in bits; the table's
    form, not (3.12)'s: docs/throughput-bound-notes.md §6.3)."""
    _pos(mtu=mtu, b_ge=b_ge, b_fsb=b_fsb)
    return 1.0 / (1 + 2 * b_ge / b_fsb + t_l * b_ge / (8 * mtu))


# -- the general bound (§3.3.2) ----------------------------------------------------------------


def frag_alpha(mtu: float, mss: float = 1460) -> int:
    """Thesis eq. (3.43): MTU fragments per MSS slot; 1 for MTU ≥ 1000 B
    (docs/throughput-bound-notes.md §6.6)."""
    _pos(mtu=mtu, mss=mss)
    if mtu >= 1000:
        return 1
    k = math.floor(mss / mtu)
    return int(k // math.floor((mss + 40 * k) / mss))


def t_l_nontoe(b_fsb: float, t_psw: float) -> float:
    """Thesis eq. (3.37), s: t_L = 949 B/B_FSB + t_psw/2 (949 bytes of pointer/header work)."""
    return 949 * 8 / b_fsb + t_psw / 2


def t_l_toe(f_toe: float, t_psw: float) -> float:
    """Thesis eq. (3.38), s: t_L = 205 B/F_TOE + t_psw/2."""
    return 205 * 8 / f_toe + t_psw / 2


def host_per_bit(b_fsb: float, b_pci: float, f_toe: float | None = None) -> float:
    """The receiver's data-transfer time per bit, s/bit: term 2 of (3.39) (non-TOE) or (3.40)
    (TOE, when ``f_toe`` is given)."""
    if f_toe is None:
        return 1.25 / b_fsb + 0.25 / b_pci  # thesis eq. (3.39)
    return 1 / b_fsb + 1 / (8 * f_toe) + 0.12 / b_pci  # thesis eq. (3.40)


def _first_term(mtu: float, rtt: float, b_ge: float, sqrt_p: float, reading: str) -> float:
    a = frag_alpha(mtu)
    link = 1 / (a * b_ge)
    loss = sqrt_p * rtt / (a * 8 * mtu)
    if reading == "min":
        return min(link, loss)  # as printed in (3.44)/(3.45)
    if reading == "max":
        return max(link, loss)  # docs/throughput-bound-notes.md §6.7
    raise ValueError(f"reading: must be 'min' or 'max' (got {reading!r})")


@model("tb_bound_nontoe")
def bound_nontoe(
    mtu: float,
    rtt: float,
    b_ge: float = 1e9,
    b_fsb: float = 6.5e9,
    b_pci: float = 1e9,
    t_l: float = 1.2e-6,
    sqrt_p: float = 1e-3,
    reading: str = "max",
) -> float:
    """Thesis eq. (3.44), bit/s: the non-TOE upper bound (defaults: Fig. 3.9's host)."""
    _pos(mtu=mtu, rtt=rtt, b_ge=b_ge, b_fsb=b_fsb, b_pci=b_pci, sqrt_p=sqrt_p)
    first = _first_term(mtu, rtt, b_ge, sqrt_p, reading)
    return 1.0 / (first + host_per_bit(b_fsb, b_pci) + t_l / (8 * mtu))


@model("tb_bound_toe")
def bound_toe(
    mtu: float,
    rtt: float,
    b_ge: float = 1e9,
    b_fsb: float = 12e9,
    b_pci: float = 2.5e9,
    f_toe: float = 32e9,
    t_l: float = 0.1e-6,
    sqrt_p: float = 1e-3,
    reading: str = "max",
) -> float:
    """Thesis eq. (3.45), bit/s: the TOE upper bound (defaults: Fig. 3.10's host)."""
    _pos(mtu=mtu, rtt=rtt, b_ge=b_ge, b_fsb=b_fsb, b_pci=b_pci, f_toe=f_toe, sqrt_p=sqrt_p)
    first = _first_term(mtu, rtt, b_ge, sqrt_p, reading)
    return 1.0 / (first + host_per_bit(b_fsb, b_pci, f_toe) + t_l / (8 * mtu))


@model("tb_bound_pipelined")
def bound_pipelined(
    mtu: float,
    rtt: float,
    b_ge: float = 1e9,
    b_fsb: float = 6.5e9,
    b_pci: float = 1e9,
    t_l: float = 1.2e-6,
    sqrt_p: float = 1e-3,
    f: float = 0.375,
    f_toe: float | None = None,
) -> float:
    """tcplab's correction of (3.44)/(3.45), bit/s: min(MTU/d, W_max·MTU/RTT).

    Not in the thesis. (3.44) *adds* the host's time for a window to RTT/cwnd ((3.29)–(3.30):
    the receiver works on a burst after it has arrived). A receiver that works while the rest of
    the window is in flight — every real stack, and tcplab's host component — is limited by the
    slower of the two stages instead: the host (MTU/d, eq. (3.48)–(3.50)) or the window
    (W_max·MTU/RTT). W_max is the largest window loss allows, from the thesis's own (3.2)–(3.3):
    N = f·W_max² packets per loss cycle and p = 1/N, so W_max = 1/√(f·p); f = 3/8 for Reno's
    sawtooth (the default), f = 1 for the thesis's "ideal" rule (W_max = 1/√p as in (3.4)).
    Below the crossover it equals the `max` reading of (3.44) when the window term does not bind
    (both are MTU/d); above it, it is the larger of the two. ``f_toe`` selects the TOE host
    terms of (3.49)."""
    _pos(mtu=mtu, rtt=rtt, sqrt_p=sqrt_p, f=f)
    host = 8 * mtu / transit_time(mtu, b_ge, b_fsb, b_pci, t_l, f_toe)
    window = 8 * mtu / (sqrt_p * math.sqrt(f) * rtt)
    return min(host, window)


@model("tb_crossover_rtt")
def crossover_rtt(mtu: float = 1500, b_ge: float = 1e9, sqrt_p: float = 1e-3) -> float:
    """Where the two first-term branches of (3.44)/(3.45) meet, s: B_GE·RTT = MTU/√p."""
    _pos(mtu=mtu, b_ge=b_ge, sqrt_p=sqrt_p)
    return 8 * mtu / (sqrt_p * b_ge)


@model("tb_transit_time")
def transit_time(
    mtu: float,
    b_ge: float,
    b_fsb: float,
    b_pci: float,
    t_l: float,
    f_toe: float | None = None,
) -> float:
    """Thesis eq. (3.48) (non-TOE) / (3.49) (TOE), s: per-packet transit time d at the receiver.
    MTU/d is the bound (3.50)."""
    _pos(mtu=mtu, b_ge=b_ge, b_fsb=b_fsb, b_pci=b_pci)
    bits = 8 * mtu
    return bits / b_ge + host_per_bit(b_fsb, b_pci, f_toe) * bits + t_l


# -- closed forms of §3.5 (Mbps, 1024 ≈ 1 Gbps) ------------------------------------------------


def closed_form_constant(
    b_fsb_gbps: float, b_pci_gbps: float, f_toe_gbps: float | None = None, b_ge_gbps: float = 1.0
) -> float:
    """The per-bit constant of (3.57)/(3.58) in 1/Gbps, from the host's component values:
    1/B_GE + 1.25/B_FSB + 0.24/B_PCI (non-TOE; the thesis's 0.24) or
    1/B_GE + 1/B_FSB + 1/(8F_TOE) + 0.12/B_PCI (TOE). The thesis prints 1.36 and 1.09."""
    if f_toe_gbps is None:
        return 1 / b_ge_gbps + 1.25 / b_fsb_gbps + 0.24 / b_pci_gbps
    return 1 / b_ge_gbps + 1 / b_fsb_gbps + 1 / (8 * f_toe_gbps) + 0.12 / b_pci_gbps


@model("tb_closed_nontoe")
def closed_nontoe(mtu: float, mss: float = 1460, const: float = 1.36, lat: float = 1.2) -> float:
    """Thesis eq. (3.57), Mbps: the non-TOE curve; ``const`` is the per-bit constant (1.36 as
    printed; :func:`closed_form_constant` derives it), ``lat`` the latency coefficient (1.2).
    Reproduced as printed, including its jump at MTU = MSS (docs/throughput-bound-notes.md §6.8)."""
    _pos(mtu=mtu, mss=mss, const=const)
    if mtu < mss:
        return 1024 * mtu / mss * frag_alpha(mtu, mss)
    return 1024 / (const + lat / (mtu / mss))


@model("tb_closed_toe")
def closed_toe(mtu: float, mss: float = 1460, const: float = 1.09, lat: float = 0.1) -> float:
    """Thesis eq. (3.58), Mbps: the TOE curve."""
    _pos(mtu=mtu, mss=mss, const=const)
    if mtu < mss:
        return 1024 * mtu / mss * frag_alpha(mtu, mss)
    return 1024 / (const + lat / (mtu / mss))


@model("tb_closed_toe_off")
def closed_toe_off(mtu: float, mss: float = 1460, const: float = 1.09, lat: float = 0.1) -> float:
    """Thesis eq. (3.59), Mbps: the TOE NIC with offload off (2 MSS per 4 KB page)."""
    _pos(mtu=mtu, mss=mss, const=const)
    if mtu < 2048:
        return 1024 * mtu / (2 * mss) * frag_alpha(mtu, mss)
    return 1024 / (const + lat / (mtu / mss))


# -- bandwidth estimation (§3.6) and the loopback fit (§3.4.2) ---------------------------------


@model("tb_estimate_bandwidth")
def estimate_bandwidth(
    d: float, mtu: float, b_fsb: float, b_pci: float, t_ptr: float, e: float = 0.0
) -> float:
    """Thesis eq. (3.60), bit/s: the link bandwidth from the measured transit time ``d`` (s),
    with timestamp error ``e`` (s); t_ptr = t_L (docs/throughput-bound-notes.md §6.10)."""
    _pos(d=d, mtu=mtu, b_fsb=b_fsb, b_pci=b_pci)
    bits = 8 * mtu
    inv = d / bits - 1.25 / b_fsb - 1 / (4 * b_pci) - (t_ptr + e) / bits - 2.5e-11
    if inv <= 0:
        raise ValueError("d: too small for these host terms (estimated 1/B_GE ≤ 0)")
    return 1.0 / inv


@model("tb_estimate_error")
def estimate_error(mtu: float, b_ge: float, de: float) -> float:
    """Thesis eq. (3.61): relative error ΔB/B = B_GE·Δe/MTU (MTU in bits)."""
    _pos(mtu=mtu, b_ge=b_ge)
    return b_ge * de / (8 * mtu)


@model("tb_min_mtu_for_accuracy")
def min_mtu_for_accuracy(b_ge: float = 1e9, de: float = 2e-6, rel: float = 0.03) -> float:
    """Inverse of (3.61), bytes: the smallest MTU with ΔB/B ≤ ``rel``."""
    _pos(b_ge=b_ge, de=de, rel=rel)
    return b_ge * de / rel / 8


@model("tb_loopback_rate")
def loopback_rate(mtu: float, b_int: float, t_l: float) -> float:
    """Thesis eq. (3.52), 1/s: 1/d = B_int/(MTU + t_L·B_int), B_int in bytes/s."""
    _pos(mtu=mtu, b_int=b_int)
    return b_int / (mtu + t_l * b_int)


def fit_loopback(mtus: list[float], inv_d: list[float]) -> tuple[float, float]:
    """Least-squares fit of (3.52) to (MTU, 1/d) pairs: returns (B_int bytes/s, t_L s).
    d/1 = MTU/B_int + t_L is linear in MTU."""
    n = len(mtus)
    if n < 2 or n != len(inv_d):
        raise ValueError("fit_loopback: need at least two (MTU, 1/d) pairs of equal length")
    ds = [1 / v for v in inv_d]
    mx, my = sum(mtus) / n, sum(ds) / n
    sxx = sum((x - mx) ** 2 for x in mtus)
    sxy = sum((x - mx) * (y - my) for x, y in zip(mtus, ds, strict=True))
    slope = sxy / sxx
    return 1 / slope, my - slope * mx


# -- buffer sizing (§2.3, §3.3.2, §4.2) --------------------------------------------------------


@model("tb_thr_ip_net")
def thr_ip_net(tx: float, delta: float, rtt: float, b_ge: float) -> float:
    """Thesis eq. (2.1), bit/s: IP send buffer ``tx`` bytes over/under-sized by ``delta`` bytes
    (Δ < 0 read as Tx − |Δ|, docs/throughput-bound-notes.md §6.2)."""
    _pos(tx=tx, rtt=rtt, b_ge=b_ge)
    tx_b, d_b = 8 * tx, 8 * delta
    if delta > 0:
        return b_ge * (tx_b + d_b) / ((rtt / 2 + 2 * d_b / b_ge) * b_ge)
    return b_ge * (tx_b - abs(d_b)) / (rtt / 2 * b_ge)


@model("tb_optimal_buffers")
def optimal_buffers(rtt: float, b_ge: float) -> dict[str, float]:
    """Thesis eqs. (2.2)–(2.3), bytes: Tx = B·RTT/2 and RCVBUF = SNDBUF = Qx = 2Tx = B·RTT."""
    _pos(rtt=rtt, b_ge=b_ge)
    tx = b_ge * rtt / 2 / 8
    return {"tx": tx, "qx": 2 * tx}


@model("tb_ip2n")
def ip2n(q_tx: float, rtt: float, b_ge: float) -> float:
    """Thesis eq. (3.16), bit/s: IP-to-network throughput against send-buffer size (bytes)."""
    _pos(q_tx=q_tx, rtt=rtt, b_ge=b_ge)
    q = 8 * q_tx
    if rtt / 2 <= q / b_ge:
        return (q + b_ge * rtt / 2) / (2 * q / b_ge)
    return 2 * q / (q / b_ge + rtt / 2)


@model("tb_send_buffer_curve")
def send_buffer_curve(r: float) -> float:
    """Thesis eqs. (4.4)/(4.5): throughput/C against r = C·D/Buf (under-buffered for r > 1,
    over-buffered for r < 1; 1 at the optimum (4.6))."""
    _pos(r=r)
    if r >= 1:
        return 3 / (3 + (1 - r) ** 2)  # thesis eq. (4.4)
    x = (1 - r) ** 2 / (4 * r - r * r)
    return (1 + x) / (1 + 2 * x)  # thesis eq. (4.5)


@model("tb_receive_buffer_curve")
def receive_buffer_curve(tx_over_cd: float, dq_over_cd: float) -> float:
    """Thesis eq. (4.7), throughput/C from the network into the receive buffer; ΔQ = 0 with
    Tx = C·D is the optimum (4.8)."""
    t, q = tx_over_cd, dq_over_cd
    return (t + t * t + q) / (2 + q + 0.5 * q * q)


# -- window control (§4.3) and baselines (§2.5) -------------------------------------------------


@model("tb_decrease_factor")
def decrease_factor(rtt_over_min: float, mu: float = 1.0) -> float:
    """Thesis eq. (4.17): W'/W = 1 − (RTT − RTT_min)/(RTT − (1 − 1/μ)·RTT_min)."""
    if rtt_over_min < 1 or mu < 1:
        raise ValueError("need rtt_over_min ≥ 1 and mu ≥ 1")
    g = rtt_over_min
    return 1 - (g - 1) / (g - (1 - 1 / mu))


@model("tb_hstcp")
def hstcp(w: float) -> dict[str, float]:
    """Thesis eq. (2.5) with RFC 3649's response function: a(w), b(w) of HighSpeed TCP."""
    _pos(w=w)
    low, high, b_high = 38.0, 83000.0, 0.1
    if w <= low:
        return {"a": 1.0, "b": 0.5}
    b = (b_high - 0.5) * (math.log(w) - math.log(low)) / (math.log(high) - math.log(low)) + 0.5
    p = 0.078 / w**1.2
    return {"a": w * w * p * 2 * b / (2 - b), "b": b}


@model("tb_stcp")
def stcp(w: float, loss: bool = False) -> float:
    """Thesis eq. (2.6): Scalable TCP's next window (+1 % per ACK, −1/8 on loss)."""
    _pos(w=w)
    return w - w / 8 if loss else 1.01 * w


@model("tb_bound_nontoe_min")
def bound_nontoe_min(mtu: float, rtt: float, **kw: float) -> float:
    """Eq. (3.44) with the printed ``min`` (the CLI passes numbers only)."""
    return bound_nontoe(mtu, rtt, reading="min", **kw)  # type: ignore[arg-type]


@model("tb_bound_toe_min")
def bound_toe_min(mtu: float, rtt: float, **kw: float) -> float:
    """Eq. (3.45) with the printed ``min`` (the CLI passes numbers only)."""
    return bound_toe(mtu, rtt, reading="min", **kw)  # type: ignore[arg-type]
