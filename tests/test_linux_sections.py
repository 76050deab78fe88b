"""The ``--linux`` sections of ``tcplab reproduce sto-3g`` and ``asymmetric-link``: their
measures on made-up rows, the ``TCP_INFO``/netstat readers, the section without root, and one
small real download (root + TUN, else skipped with the reason)."""

from __future__ import annotations

import math
import struct
from pathlib import Path
from typing import Any

import pytest

from support import realtime
from tcplab.papers import asymmetric_linux, sto3g_linux
from tcplab.real import emu
from tcplab.real.transfer import netstat, tcp_info
from tcplab.report.checks import Report

REASON = emu.available()


def _row(timeouts: int, rtx: int, unnecessary: int, episodes: int = 1) -> dict[str, Any]:
    return {"timeouts": timeouts, "episodes": episodes, "rtx": rtx,
            "rtx_unnecessary": unnecessary, "delivered": 2_000_000}  # fmt: skip


def test_unnecessary_per_sto_counts_only_downloads_whose_every_rtx_was_unnecessary() -> None:
    rows = [
        _row(1, 20, 20),  # a spurious timeout that went back N over 20 segments
        _row(2, 4, 4, episodes=1),  # one episode, backed off once: 2 timeouts
        _row(1, 9, 8),  # a genuine retransmission: its timeout is not counted
        _row(0, 0, 0, episodes=0),  # nothing happened
    ]
    m = sto3g_linux.real_measures(rows)
    assert m["unnecessary_per_sto"] == pytest.approx(24 / 3)
    assert m["timeouts"] == 3 and m["episodes"] == 2
    assert m["with_genuine_rtx"] == 1 and m["timeouts_unverified"] == 1
    assert m["sto_per_mb"] == pytest.approx(2 / 8.0)
    assert math.isnan(sto3g_linux.real_measures([_row(0, 0, 0, 0)])["unnecessary_per_sto"])


def test_tcp_info_and_netstat_readers() -> None:
    raw = bytearray(248)
    struct.pack_into("I", raw, 100, 33)  # tcpi_total_retrans
    struct.pack_into("HH", raw, 240, 2, 1)  # tcpi_total_rto, tcpi_total_rto_recoveries
    info = tcp_info(bytes(raw))
    assert (info["total_retrans"], info["total_rto"], info["total_rto_recoveries"]) == (33, 2, 1)
    assert "total_rto" not in tcp_info(bytes(raw[:232]))  # an older kernel's shorter struct
    text = "TcpExt: TCPTimeouts TCPSpuriousRTOs\nTcpExt: 3 1\nIpExt: InOctets\nIpExt: 10\n"
    assert netstat(text) == {"TcpExt.TCPTimeouts": 3, "TcpExt.TCPSpuriousRTOs": 1,
                             "IpExt.InOctets": 10}  # fmt: skip


def test_the_ack_clock_bound_of_linux_acks() -> None:
    # 2 x 1448 B per (52 + 8) B x 10 bits at 9.6 kbit/s (62.5 ms per ACK).
    assert asymmetric_linux.linux_bound_bps(9600) == pytest.approx(2 * 1448 * 8 / 0.0625)


@pytest.mark.parametrize("module", [sto3g_linux, asymmetric_linux])
def test_the_sections_say_why_they_did_not_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, module: Any
) -> None:
    monkeypatch.setattr(emu, "available", lambda: "tcplab emu needs root (test)")
    report = Report("x", "t", tmp_path, quick=True)
    module.section(report, jobs=1)
    ((title, text),) = report.sections
    assert "--linux" in title and "Not run here: tcplab emu needs root (test)" in text
    assert report.comparisons == []


@realtime(REASON)
def test_one_real_download_over_the_train_bearer() -> None:
    """A 6 KB download with tcp_frto = 2: byte-exact, and the sender's timeout count from
    TCP_INFO agrees with its namespace's TcpExt.TCPTimeouts."""
    r = sto3g_linux.real_download("train", 6000, 2, 1000)
    assert r["sha256_ok"] and r["delivered"] == 6000
    assert r["timeouts"] is not None and r["timeouts"] == r["netstat_timeouts"]
    assert r["rtx_unnecessary"] <= r["rtx"]
