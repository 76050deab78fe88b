"""The Linux-validation endpoints' ``struct tcp_info`` parser (validation/linux/endpoints.py),
without a kernel."""

from __future__ import annotations

import re
import struct

import pytest

from tcplab.real.validate.endpoints import (
    TCP_INFO_FIELDS,
    TCP_INFO_FORMAT,
    TCP_INFO_SIZE,
    parse_tcp_info,
)


def _codes(fmt: str) -> list[str]:
    """A struct format's field codes, one per field (``"<2IQ"`` → ``["I", "I", "Q"]``)."""
    return [c for n, c in re.findall(r"(\d*)([A-Za-z])", fmt) for _ in range(int(n or 1))]


def test_tcp_info_layout() -> None:
    # offsets of struct tcp_info fields, counted from include/uapi/linux/tcp.h
    assert TCP_INFO_SIZE == 232
    codes = _codes(TCP_INFO_FORMAT)
    assert len(codes) == len(TCP_INFO_FIELDS)
    offsets = {"rto": 8, "snd_ssthresh": 76, "snd_cwnd": 80, "total_retrans": 100}
    offsets |= {"pacing_rate": 104, "min_rtt": 148, "delivery_rate": 160, "snd_wnd": 228}
    for name, off in offsets.items():
        i = TCP_INFO_FIELDS.index(name)
        assert struct.calcsize("<" + "".join(codes[:i])) == off, name
    raw = bytearray(TCP_INFO_SIZE + 16)
    struct.pack_into("<I", raw, 80, 42)
    struct.pack_into("<I", raw, 100, 7)
    info = parse_tcp_info(bytes(raw))
    assert info["snd_cwnd"] == 42 and info["total_retrans"] == 7
    with pytest.raises(ValueError):
        parse_tcp_info(bytes(100))
