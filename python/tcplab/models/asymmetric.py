"""The ACK-clock bound of a bulk transfer over an asymmetric link (Kato, Kamagata, Ito, "TCP/IP
suitable for asymmetric wireless link", Toshiba R&D, ~1996, §3.1; RFC 3449 §3.1).

A receiver that ACKs every ``ack_every`` segments lets the sender send ``ack_every·MSS`` bytes per
ACK, and the ACKs leave one per *uplink single delay* (the serialisation time of one ACK frame on
the uplink), so

    throughput ≤ ack_every·MSS / (ack_frame·up_bits_per_byte / up_bps)          (paper §3.1)

until the downlink itself is the bottleneck: the bound saturates where one ACK's uplink delay
equals the downlink time of the data it acknowledges (paper §3.3, "≈ 200 kbps"). The window must
cover the bandwidth-delay product and twice the data per ACK (paper: 4·MSS with ACK every 2nd
segment), or the sender waits for window-opening ACKs.

Sizes are link frames in bytes (paper: data 1526 B and ACK 72 B Ethernet frames); rates in bit/s;
results in bit/s of TCP payload (goodput) or bytes.
"""

from __future__ import annotations

import math

from tcplab.models import model

__all__ = ["ack_delay", "asym_bound", "asym_saturation_uplink", "asym_window"]


def ack_delay(up_bps: float, ack_frame: float = 72.0, up_bits_per_byte: float = 8.0) -> float:
    """Uplink single delay of one ACK frame, seconds."""
    return ack_frame * up_bits_per_byte / up_bps


def _check(**kv: float) -> None:
    for k, v in kv.items():
        if not (v > 0):
            raise ValueError(f"{k}: must be > 0 (got {v})")


@model("asym_bound")
def asym_bound(
    down_bps: float,
    up_bps: float,
    mss: float = 1460.0,
    ack_every: float = 2.0,
    data_frame: float = 1526.0,
    ack_frame: float = 72.0,
    up_bits_per_byte: float = 8.0,
    window: float = math.inf,
) -> float:
    """Goodput bound in bit/s: min(ACK clock, downlink, window / RTT) (paper §3.1)."""
    _check(
        down_bps=down_bps,
        up_bps=up_bps,
        mss=mss,
        ack_every=ack_every,
        data_frame=data_frame,
        ack_frame=ack_frame,
        up_bits_per_byte=up_bits_per_byte,
        window=window,
    )
    t_ack = ack_delay(up_bps, ack_frame, up_bits_per_byte)
    ack_clock = ack_every * mss * 8.0 / t_ack
    downlink = down_bps * mss / data_frame
    # One round trip: a data frame down plus an ACK frame up (the paper's 1.2 + 18 ms).
    rtt = data_frame * 8.0 / down_bps + t_ack
    by_window = window * 8.0 / rtt
    return min(ack_clock, downlink, by_window)


@model("asym_window")
def asym_window(
    down_bps: float,
    up_bps: float,
    mss: float = 1460.0,
    ack_every: float = 2.0,
    data_frame: float = 1526.0,
    ack_frame: float = 72.0,
    up_bits_per_byte: float = 8.0,
) -> float:
    """Smallest window (bytes) that does not limit the transfer: max(bandwidth x RTT,
    2·ack_every·MSS) (paper §3.1: 10 Mbps x (1.2 + 18) ms ≈ 24000 B and MSSx2x2 = 5840 B)."""
    _check(down_bps=down_bps, up_bps=up_bps, mss=mss, ack_every=ack_every)
    rtt = data_frame * 8.0 / down_bps + ack_delay(up_bps, ack_frame, up_bits_per_byte)
    return max(down_bps * rtt / 8.0, 2.0 * ack_every * mss)


@model("asym_saturation_uplink")
def asym_saturation_uplink(
    down_bps: float,
    ack_every: float = 2.0,
    data_frame: float = 1526.0,
    ack_frame: float = 72.0,
    up_bits_per_byte: float = 8.0,
) -> float:
    """Uplink rate (bit/s) above which the downlink, not the ACK clock, limits: the ACK rate the
    downlink can generate times the ACK frame's line bits (paper §3.3: 819 segments/s → 409
    ACKs/s ≈ 236 kbit/s)."""
    _check(down_bps=down_bps, ack_every=ack_every, data_frame=data_frame, ack_frame=ack_frame)
    acks_per_s = down_bps / (data_frame * 8.0) / ack_every
    return acks_per_s * ack_frame * up_bits_per_byte
