"""The ``--linux`` sections of ``tcplab reproduce sto-3g``, ``asymmetric-link`` and
``spoofing-satellite``: the text they share (``papers/real_host.py``), their
measures on made-up rows, the ``TCP_INFO``/netstat readers, the section without root, and one
small real download (root + TUN, else skipped with the reason)."""

from __future__ import annotations

import math
import struct
from pathlib import Path
from typing import Any

import pytest

from support import realtime
from tcplab.papers import (
    asymmetric_linux,
    real_host,
    spoofing_linux,
    spoofing_satellite,
    sto3g_linux,
)
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


def _wtcp(
    timeouts: int, spurious: int, detected: int, rtx: int, unnecessary: int, bps: float = 300e3
) -> dict[str, Any]:
    return {"data_timeouts": timeouts, "spurious_timeouts": spurious,
            "spurious_detected": detected, "retransmitted_segments": rtx,
            "unnecessary_retransmissions": unnecessary, "sender_bps": bps}  # fmt: skip


def test_the_w_tcp_measures_count_spurious_timeouts_of_verified_downloads() -> None:
    rows = [
        _wtcp(1, 1, 1, 1, 1, 200e3),  # F-RTO caught it: one retransmission
        _wtcp(2, 2, 1, 6, 6, 400e3),  # two spurious timeouts, six unnecessary rtx
        _wtcp(1, 0, 0, 3, 2, 300e3),  # a genuine rtx: its timeout is not in the ratio
    ]
    m = sto3g_linux.wtcp_measures(rows)
    assert m["unnecessary_per_sto"] == pytest.approx(7 / 3)
    assert (m["timeouts"], m["spurious"], m["detected"]) == (4, 3, 2)
    assert m["sto_per_mb"] == pytest.approx(3 / (3 * sto3g_linux.WTCP_SIZE / 1e6))
    assert m["goodput_bps"] == pytest.approx(300e3)
    assert math.isnan(sto3g_linux.wtcp_measures([_wtcp(0, 0, 0, 0, 0)])["unnecessary_per_sto"])


@pytest.mark.parametrize(
    "section",
    [
        sto3g_linux.section,
        sto3g_linux.wtcp_section,
        asymmetric_linux.section,
        spoofing_linux.section,
        spoofing_satellite._linux,
    ],
)
def test_the_sections_say_why_they_did_not_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, section: Any
) -> None:
    monkeypatch.setattr(emu, "available", lambda: "tcplab emu needs root (test)")
    report = Report("x", "t", tmp_path, quick=True)
    section(report, jobs=1)
    ((title, text),) = report.sections
    assert "--linux" in title and "Not run here: tcplab emu needs root (test)" in text
    assert report.comparisons == []


def test_the_shared_sentences_on_load_cache_and_sha256(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(real_host.os, "cpu_count", lambda: 2)
    m = real_host.Measured([{}, {}, {}], (1.0, 2.5, 3.25), (4.0, 5.0, 6.125), 0)
    assert real_host.load_sentence(m) == (
        "Load average before 1.00, 2.50, 3.25, after 4.00, 5.00, 6.12 on 2 cores."
    )
    m.from_cache = 2
    text = real_host.load_sentence(m, "Load (1, 5, 15 min)", " (4 at a time)")
    assert text.startswith("Load (1, 5, 15 min) before 1.00, 2.50, 3.25, after ")
    assert "on 2 cores (4 at a time). 2 of the 3 downloads were read from `--linux-cache`" in text
    ok = [{"sha256_ok": True, "violations": []}]
    bad = [*ok, {"sha256_ok": True, "violations": ["reordered"]}]
    assert real_host.byte_exact_bullet(ok) == "- Every file arrived byte-exact (sha256)."
    assert real_host.byte_exact_bullet(bad) == "- Every file arrived byte-exact (sha256)."
    assert real_host.byte_exact_bullet(bad, "transfer", violations=True) == (
        "- A transfer was not byte-exact or reported violations (see results.json)."
    )
    assert real_host.byte_exact_bullet([{"sha256_ok": False}]) == (
        "- A download was not byte-exact (see results.json)."
    )
    assert real_host.byte_exact_bullet(ok, violations=True).endswith(
        "and the emulator reported no violations."
    )


@realtime(REASON)
def test_one_real_download_over_the_train_bearer() -> None:
    """A 6 KB download with tcp_frto = 2: byte-exact, and the sender's timeout count from
    TCP_INFO agrees with its namespace's TcpExt.TCPTimeouts."""
    r = sto3g_linux.real_download("train", 6000, 2, 1000)
    assert r["sha256_ok"] and r["delivered"] == 6000
    assert r["timeouts"] is not None and r["timeouts"] == r["netstat_timeouts"]
    assert r["rtx_unnecessary"] <= r["rtx"]


def test_a_stored_w_tcp_download_is_read_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--linux-cache`` keeps W-TCP's real downloads: the second call with the same settings
    reads the first's row instead of running it again."""
    from tcplab.real import cache, transfer

    calls: list[int] = []
    monkeypatch.setattr(transfer, "endpoint_sender", lambda *a, **k: calls.append(1) or {})
    monkeypatch.setattr(cache, "_dir", None)
    cache.use(tmp_path)
    first = sto3g_linux.wtcp_real("off", 1000, 7)
    assert sto3g_linux.wtcp_real("off", 1000, 7) == first and len(calls) == 1
    sto3g_linux.wtcp_real("F-RTO+Eifel", 1000, 7)
    assert len(calls) == 2
