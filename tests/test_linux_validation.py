"""tcplab against real Linux TCP (validation/linux): one short bulk transfer through the TUN
testbed, compared with the same scenario in tcplab. About 10 s of wall time.

Skips unless run as root on a machine with network namespaces and /dev/net/tun. The bands come
from the measured spread (validation/linux/README.md): on this lossless case Linux and tcplab
agree on goodput within 0.2 % and on the initial slow start's peak cwnd within 1 %.

``TCPLAB_VALIDATION_RATE_SCALE=2 pytest tests/test_linux_validation.py`` runs the emulated link at
twice the configured rate, and the test must then fail (it does: goodput ratio ≈ 0.5).
"""

from __future__ import annotations

import os

import pytest

pytest.importorskip("tcplab._core")

from tcplab.real.validate.compare import (
    Case,
    linux_run,
    linux_transfer,
    slow_start_exit,
    tcplab_runs,
)
from tcplab.real.validate.netlab import Testbed as LinuxTestbed
from tcplab.real.validate.netlab import available

pytestmark = pytest.mark.core

#: |tcplab / Linux - 1| allowed for goodput on a lossless path (both keep the link busy after
#: slow start; measured: ≤ 0.2 % in every lossless case, see validation/linux/README.md; the
#: band leaves room for a loaded machine delaying the emulator).
GOODPUT_BAND = 0.03
#: |tcplab / Linux - 1| allowed for the peak cwnd of the initial slow start (measured for reno:
#: ≤ 1 %; the peak depends on when the first overflow's dupACKs return, sampled every 20 ms).
SLOW_START_BAND = 0.10


def _agree(a: float, b: float, band: float) -> bool:
    return abs(a / b - 1.0) <= band


@pytest.fixture(scope="module")
def linux_and_tcplab() -> tuple:
    why = available()
    if why is not None:
        pytest.skip(f"Linux TCP testbed unavailable: {why}")
    case = Case(rtt_ms=40.0, loss=0.0, cc="reno", duration_s=8.0, warmup_s=2.0)
    scale = float(os.environ.get("TCPLAB_VALIDATION_RATE_SCALE", "1"))
    with LinuxTestbed() as tb:
        tr = linux_transfer(tb, case, seed=1, rate_scale=scale)
    return case, tr, linux_run(tr, case), tcplab_runs(case, [1])[0]


def test_goodput_agrees(linux_and_tcplab: tuple) -> None:
    case, _, linux, sim = linux_and_tcplab
    ratio = sim.goodput_bps / linux.goodput_bps
    assert _agree(sim.goodput_bps, linux.goodput_bps, GOODPUT_BAND), (ratio, linux.goodput_bps)
    # the comparison is sensitive: tcplab on a link half as fast is far outside the band
    slow = tcplab_runs(case, [1], rate_scale=0.5)[0]
    assert not _agree(slow.goodput_bps, linux.goodput_bps, GOODPUT_BAND)


def test_slow_start_agrees(linux_and_tcplab: tuple) -> None:
    _, _, linux, sim = linux_and_tcplab
    assert linux.cwnd[0] == 10, "Linux's initial window is not 10 segments"
    t_l, peak_l = slow_start_exit(linux)
    t_s, peak_s = slow_start_exit(sim)
    assert _agree(peak_s, peak_l, SLOW_START_BAND), (peak_l, peak_s)
    assert abs(t_l - t_s) <= 0.1, (t_l, t_s)


def test_testbed_sanity(linux_and_tcplab: tuple) -> None:
    _, tr, linux, _ = linux_and_tcplab
    fwd = tr.forward.directions["fwd"]
    # MSS-sized segments: 1448 payload + 20 IP + 32 TCP with timestamps; no GSO super-packets
    assert fwd["max_packet"] == 1500
    assert linux.extra["snd_mss"] == 1448
    assert linux.extra["cc"] == "reno"
    assert tr.forward.write_errors == 0
    # the emulator releases packets on time (median well under a packet time of 1.2 ms)
    assert tr.forward.lateness_us["p50"] < 500


def test_two_flows_share_the_link() -> None:
    """Two kernel senders, BBR and CUBIC, each set on its own socket, through one emulated link
    (bench/bbr_cubic.py's machinery): each reports its own congestion control, both deliver,
    and together they fill the link (a flow that did not share the queue, or a link running
    at another rate, would not add up to it)."""
    why = available()
    if why is not None:
        pytest.skip(f"Linux TCP testbed unavailable: {why}")
    with LinuxTestbed() as tb:
        flows = tb.transfers(
            rate_bps=10_000_000,
            delay_ns=20_000_000,
            queue=17,
            loss=0.0,
            ccs=["bbr", "cubic"],
            duration_s=4.0,
            seed=1,
        )
    assert [f.sender["cc"] for f in flows] == ["bbr", "cubic"]
    # receivers on different ports, each with its own stream
    good = [f.goodput_bps(1.5, 3.5) for f in flows]
    assert all(g > 0.5e6 for g in good), good
    assert 0.85 * 10e6 <= sum(good) <= 1.02 * 10e6, good
    assert "netstat" in flows[0].sender
