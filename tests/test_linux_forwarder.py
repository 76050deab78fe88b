"""The Linux-validation forwarder's link model (validation/linux/forwarder.py), without a kernel:
departure times, DropTail drops and loss against hand-computed values and against link.rs's
semantics; and the tcp_info parser's layout."""

from __future__ import annotations

import os
import re
import struct
import sys
import time

import pytest

from support import REPO

sys.path.insert(0, str(REPO / "validation" / "linux"))

from endpoints import TCP_INFO_FIELDS, TCP_INFO_FORMAT, TCP_INFO_SIZE, parse_tcp_info
from forwarder import Direction, LinkDir, forward, tx_time_ns

MS = 1_000_000


def test_tx_time_rounds_up() -> None:
    # 1500 B at 10 Mbit/s = 12000 bits = 1.2 ms exactly; 1 B at 3 bit/s = 8/3 s rounded up
    assert tx_time_ns(1500, 10_000_000) == 1_200_000
    assert tx_time_ns(1, 3) == 2_666_666_667


def test_fifo_departures_and_delay() -> None:
    link = LinkDir(rate_bps=10_000_000, delay_ns=20 * MS, queue=10)
    # three 1500-byte packets at t = 0: back-to-back, each 1.2 ms
    assert [link.offer(1500, 0) for _ in range(3)] == [21_200_000, 22_400_000, 23_600_000]
    # a 52-byte ACK-sized packet at 10 ms finds the link idle: 41.6 µs of serialisation
    assert link.offer(52, 10 * MS) == 10 * MS + 41_600 + 20 * MS
    # one arriving while the link is busy starts when the previous one ends
    assert link.offer(1500, 10 * MS + 10_000) == 10 * MS + 41_600 + 1_200_000 + 20 * MS


def test_droptail_counts_waiting_packets_only() -> None:
    # queue = 2: one in transmission plus 2 waiting are accepted; the 4th is dropped
    link = LinkDir(rate_bps=8_000_000, delay_ns=0, queue=2)  # 1000 B = 1 ms
    fates = [link.offer(1000, 0) for _ in range(4)]
    assert fates == [1 * MS, 2 * MS, 3 * MS, None]
    assert link.drops_queue == 1
    assert link.max_queue == 2
    # at exactly t = 1 ms the first has left (end <= now): room for one more, ending at 4 ms
    assert link.offer(1000, 1 * MS) == 4 * MS
    assert link.offer(1000, 1 * MS) is None
    # after everything drained the link is idle again
    assert link.offer(1000, 10 * MS) == 11 * MS
    assert link.tx_packets == 5 and link.drops_queue == 2


def test_lost_packets_occupy_the_transmitter() -> None:
    link = LinkDir(rate_bps=8_000_000, delay_ns=5 * MS, queue=10, loss=1.0)
    assert link.offer(1000, 0) is None
    assert link.drops_loss == 1 and link.drops_queue == 0
    link.loss = 0.0
    # the lost packet still took 0 … 1 ms on the wire
    assert link.offer(1000, 0) == 2 * MS + 5 * MS


def test_bernoulli_loss_is_seeded() -> None:
    def drops(seed: int) -> list[bool]:
        link = LinkDir(rate_bps=10**9, delay_ns=0, queue=10**6, loss=0.1, seed=seed)
        return [link.offer(100, i * 10**6) is None for i in range(20000)]

    a = drops(1)
    assert a == drops(1)
    assert a != drops(2)
    assert abs(sum(a) / len(a) - 0.1) < 0.01


def test_long_run_rate_is_exact() -> None:
    # saturate for 10 s of virtual time: departures are spaced by exactly the serialisation time
    link = LinkDir(rate_bps=10_000_000, delay_ns=0, queue=1000)
    now, sent = 0, 0
    while now < 10_000 * MS:
        if link.offer(1500, now) is not None:
            sent += 1
        now += 1 * MS  # offered at 1000 packets/s > 833 packets/s
    assert link.busy_until == sent * 1_200_000
    assert link.drops_queue > 0


def test_rejects_bad_parameters() -> None:
    with pytest.raises(ValueError):
        LinkDir(rate_bps=0, delay_ns=0, queue=1)
    with pytest.raises(ValueError):
        LinkDir(rate_bps=1, delay_ns=0, queue=0)
    with pytest.raises(ValueError):
        LinkDir(rate_bps=1, delay_ns=0, queue=1, loss=1.5)


def test_event_loop_over_pipes() -> None:
    """The loop itself, with pipes instead of TUN fds: every packet comes out on the other side
    after its serialisation and delay, in order, and lateness is recorded per packet."""
    r_in, w_in = os.pipe()
    r_out, w_out = os.pipe()
    os.set_blocking(r_in, False)
    os.set_blocking(r_out, False)
    link = LinkDir(rate_bps=8_000_000, delay_ns=20 * MS, queue=100)  # 100 B = 100 µs
    for i in range(5):
        # pipes are streams: write one "packet" at a time and let the loop read it
        os.write(w_in, bytes([i]) * 100)
    t0 = time.monotonic()
    stats = forward(
        [Direction("fwd", r_in, w_out, link)],
        stop=lambda: time.monotonic() - t0 > 0.2,
        check_every_ns=10 * MS,
    )
    got = os.read(r_out, 10_000)
    for fd in (r_in, w_in, r_out, w_out):
        os.close(fd)
    # the five writes were read as one 500-byte "packet" or several; bytes arrive in order
    assert got == b"".join(bytes([i]) * 100 for i in range(5))
    assert len(stats.lateness_ns) == link.tx_packets >= 1
    assert all(late >= 0 for late in stats.lateness_ns)
    assert stats.directions["fwd"]["tx_bytes"] == 500


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
