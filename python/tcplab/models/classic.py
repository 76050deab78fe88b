"""Classic steady-state TCP throughput models, used to validate the simulator.

- Mathis, Semke, Mahdavi, Ott, "The macroscopic behavior of the TCP congestion avoidance
  algorithm", CCR 27(3), 1997: B = (MSS/RTT)·C/√p with C = √(3/2) for a receiver that ACKs every
  segment and √(3/4) with delayed ACKs (b = 2).
- Padhye, Firoiu, Towsley, Kurose, "Modeling TCP throughput", SIGCOMM 1998 (PFTK), the
  approximate formula (their eq. 31 simplified) with timeouts and the receiver window cap.
"""

from __future__ import annotations

import math

from tcplab.models import model


@model("mathis")
def mathis(mss: float, rtt: float, p: float, b: float = 1.0) -> float:
    """Throughput in bit/s of a Reno flow with MSS ``mss`` bytes, round-trip time ``rtt``
    seconds and loss probability ``p``; ``b`` segments acknowledged per ACK."""
    if not (mss > 0 and rtt > 0 and 0 < p < 1 and b >= 1):
        raise ValueError("mathis: need mss > 0, rtt > 0, 0 < p < 1, b >= 1")
    c = math.sqrt(3.0 / (2.0 * b))
    return 8.0 * mss / rtt * c / math.sqrt(p)


@model("pftk")
def pftk(
    mss: float, rtt: float, p: float, rto: float, wmax: float = math.inf, b: float = 2.0
) -> float:
    """PFTK approximate throughput in bit/s: Reno with timeouts (RTO ``rto`` s) and a receiver
    window of ``wmax`` segments; ``b`` segments per ACK."""
    if not (mss > 0 and rtt > 0 and 0 < p < 1 and rto > 0 and b >= 1 and wmax >= 1):
        raise ValueError("pftk: need mss, rtt, rto > 0, 0 < p < 1, b >= 1, wmax >= 1")
    denom = rtt * math.sqrt(2 * b * p / 3) + rto * min(1.0, 3 * math.sqrt(3 * b * p / 8)) * p * (
        1 + 32 * p * p
    )
    rate = 1.0 / denom
    if math.isfinite(wmax):
        rate = min(wmax / rtt, rate)
    return 8.0 * mss * rate
