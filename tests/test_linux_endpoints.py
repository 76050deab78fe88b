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


def test_bbr_info_over_loopback() -> None:
    """``TCP_CC_INFO`` of a BBR sender on loopback (skipped where the kernel has no bbr): the
    model is in STARTUP (pacing and cwnd gain 2/ln 2 in 1/256, Linux's bbr_high_gain = 739)
    with a min RTT and a bandwidth once data was acknowledged."""
    import socket
    import threading

    from tcplab.real.validate.endpoints import TCP_CONGESTION, bbr_info

    avail = "/proc/sys/net/ipv4/tcp_available_congestion_control"
    try:
        with open(avail) as f:
            if "bbr" not in f.read().split():
                pytest.skip("the kernel has no bbr")
    except OSError:
        pytest.skip(f"{avail} is not readable")
    srv = socket.create_server(("127.0.0.1", 0))
    got = bytearray()

    def drain() -> None:
        conn, _ = srv.accept()
        while chunk := conn.recv(1 << 16):
            got.extend(chunk)
        conn.close()

    t = threading.Thread(target=drain)
    t.start()
    s = socket.socket()
    s.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, b"bbr")
    s.connect(srv.getsockname())
    s.sendall(b"\0" * 200_000)
    info = bbr_info(s)
    s.close()
    t.join(timeout=10)
    srv.close()
    assert len(got) == 200_000
    assert info["bbr_pacing_gain"] == 739 and info["bbr_cwnd_gain"] == 739
    assert info["bbr_min_rtt"] > 0 and info["bbr_bw"] > 0
