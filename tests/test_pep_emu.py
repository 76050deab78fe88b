"""The spoofing PEP in real time: real Linux TCP through ``tcplab emu`` with a ``pep`` hop.

Byte-exact transfers (sha256), the PEP's buffer returning to 0, many connections at once, a
receiver that stops reading, and RSTs from either side. Needs root, /dev/net/tun, iproute2
and curl (else skipped with the reason). ``TCPLAB_PEP_CONNS`` sets the number of concurrent
connections (20 here; ``bench/pep_load.py`` runs 200).
"""

from __future__ import annotations

import hashlib
import os
import secrets
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from support import realtime
from tcplab.real import emu
from tcplab.real.transfer import client_command, run

pytest.importorskip("tcplab._core")

REASON = emu.available() or (None if shutil.which("curl") else "needs curl")
needs_emu = realtime(REASON)
CONNS = int(os.environ.get("TCPLAB_PEP_CONNS", "20"))
#: The tag of this process's emulations (``TCPLAB_EMU_TAG``): others run at the same time.
TAG = secrets.token_hex(3)


def _ours() -> set[str]:
    ns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return {line.split()[0] for line in ns.splitlines() if line.startswith(f"tle{TAG}")}


@pytest.fixture(autouse=True)
def clean(monkeypatch: pytest.MonkeyPatch) -> object:
    """Name this test's emulation with TAG; nothing of it may be left behind."""
    monkeypatch.setenv("TCPLAB_EMU_TAG", TAG)
    yield None
    if REASON is None:
        assert not _ours(), f"left behind: {_ours()}"


def _run(tmp: Path, path_toml: str, client: str, size: int, abort: float = 0.0) -> Any:
    return run(tmp, path_toml, size, client, abort=abort, timeout=120)


def _pep(summary: Any) -> Any:
    row = summary["links"][0]
    assert row["kind"] == "pep" and row["dir"] == "fwd"
    return row


def _client(
    tmp: Path, out: str, size: int, pause_at: int = 0, pause: float = 0, rst: int = 0
) -> str:
    # The stop-reading and RST clients use a small receive buffer (the PEP's fills sooner).
    return client_command(
        tmp,
        out,
        size,
        pause_at=pause_at,
        pause=pause,
        rst=bool(rst),
        rcvbuf=32768 if pause_at else 0,
    )


def _same(a: bytes, b: bytes) -> bool:
    return hashlib.sha256(a).hexdigest() == hashlib.sha256(b).hexdigest()


GEO = '[[path]]\nkind = "pep"\n{pep}\n[[path]]\nkind = "satellite"\nrate = "{rate}"\n'


@needs_emu
def test_linux_through_the_pep_over_geo_is_byte_exact_and_frees_the_buffer(
    tmp_path: Path,
) -> None:
    size = 200_000
    data, s = _run(tmp_path, GEO.format(pep="", rate="1Mbps"), _client(tmp_path, "got", size), size)
    assert _same((tmp_path / "got").read_bytes(), data)
    pep = _pep(s)
    # Pseudo-ACKs for the held data; the PEP sent it on itself; all acknowledged at the end.
    assert pep["pseudo_acks"] >= size // 1448
    assert pep["bytes_absorbed"] >= size
    assert pep["data_segments_sent"] >= size // 1448
    assert pep["held_bytes_end"] == 0
    assert s["violations"] == []
    assert s["emulator"]["oversize"] == 0


@needs_emu
def test_many_connections_through_one_pep(tmp_path: Path) -> None:
    size = 30_000
    loop = " ".join(_client(tmp_path, f"got{i}", size) + " &" for i in range(CONNS))
    data, s = _run(tmp_path, GEO.format(pep="", rate="20Mbps"), f"{loop} wait", size)
    for i in range(CONNS):
        assert _same((tmp_path / f"got{i}").read_bytes(), data), i
    pep = _pep(s)
    assert pep["connections"] == CONNS
    assert pep["held_bytes_end"] == 0
    assert s["violations"] == []


@needs_emu
def test_a_receiver_that_stops_reading_cannot_grow_the_pep(tmp_path: Path) -> None:
    size = 300_000
    buffer = 65536
    data, s = _run(
        tmp_path,
        GEO.format(pep='buffer = "64KiB"', rate="10Mbps"),
        _client(tmp_path, "got", size, pause_at=20_000, pause=1.0),
        size,
    )
    assert _same((tmp_path / "got").read_bytes(), data)
    pep = _pep(s)
    assert pep["max_held_bytes"] <= buffer, "the buffer limit holds"
    assert pep["zero_window_acks"] > 0, "the sender saw a zero window"
    assert pep["overflow_drops"] == 0
    assert pep["held_bytes_end"] == 0
    assert s["violations"] == []


@needs_emu
@pytest.mark.parametrize("side", ["receiver", "sender"])
def test_a_rst_mid_transfer_frees_the_buffer(tmp_path: Path, side: str) -> None:
    size = 400_000
    if side == "receiver":
        client = _client(tmp_path, "got", size, pause_at=20_000, rst=1)
        abort = 0.0
    else:
        client = _client(tmp_path, "got", size)
        abort = 0.3  # the PEP has acknowledged all of it by then and holds most
    data, s = _run(tmp_path, GEO.format(pep="", rate="1Mbps"), client, size, abort)
    got = (tmp_path / "got").read_bytes()
    assert len(got) < size and data.startswith(got), "a prefix, never a wrong byte"
    pep = _pep(s)
    assert pep["resets"] == 1
    assert pep["rst_freed_bytes"] > 0
    assert pep["held_bytes_end"] == 0
    assert s["violations"] == []


def test_linux_section_says_why_it_did_not_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tcplab.papers import spoofing_satellite
    from tcplab.report.checks import Report

    monkeypatch.setattr(emu, "available", lambda: "tcplab emu needs root (test)")
    report = Report("spoofing-satellite", "t", tmp_path, quick=True)
    spoofing_satellite._linux(report, jobs=1)
    ((title, text),) = report.sections
    assert "--linux" in title and "Not run here: tcplab emu needs root (test)" in text
    assert report.comparisons == []


@needs_emu
def test_the_hop_behind_the_pep_cut_mid_transfer(tmp_path: Path) -> None:
    """The radio hop behind the PEP stops for 2 s mid-transfer (an rlc stall: nothing gets
    through, nothing is lost). The PEP's own RTO fires during the cut and it recovers by
    itself; the file arrives byte-exact and its buffer empties."""
    size = 120_000
    path = (
        '[[path]]\nkind = "pep"\n'
        '[[path]]\nkind = "rlc"\npreset = "strong"\ndown_bler = 0\nup_bler = 0\n'
        'spike_rate = 0\nqueue = 10000\nstalls = [["1.5s", "2s"]]\n'
    )
    data, s = _run(tmp_path, path, _client(tmp_path, "got", size), size)
    assert _same((tmp_path / "got").read_bytes(), data)
    pep = _pep(s)
    assert pep["local_timeouts"] >= 1, "the PEP timed out during the cut"
    assert pep["held_bytes_end"] == 0
    assert s["violations"] == []


def test_a_satellite_hop_cut_for_10s_in_simulation_loses_what_it_carries() -> None:
    """``outages`` on a satellite hop (simulated): what starts its transmission during the cut
    is lost (``drops_outage``, part of ``drops_loss``), the PEP recovers by its own RTO and
    the transfer completes with the PEP's buffer empty."""
    from tcplab.runner import run
    from tcplab.scenario.parse import parse_scenario

    def once(outages: list[list[str]]) -> Any:
        sat: dict[str, Any] = {"kind": "satellite", "name": "sat"}
        if outages:
            sat["outages"] = outages
        sc = parse_scenario(
            {"name": "cut", "duration": "120s",
             "path": [{"kind": "pep"}, sat],
             "flows": [{"bytes": 200_000}]},
        )  # fmt: skip
        return run(sc, tables=False).summary

    base, cut = once([]), once([["1.5s", "10s"]])
    assert "drops_outage" not in base["links"][1]  # only reported where outages are set
    sat = {row["dir"]: row for row in cut["links"] if row["name"] == "sat"}
    assert sat["fwd"]["drops_outage"] > 0
    assert sat["fwd"]["drops_loss"] >= sat["fwd"]["drops_outage"]
    pep = _pep(cut)
    assert pep["local_timeouts"] >= 1 and pep["held_bytes_end"] == 0
    flow, flow0 = cut["flows"][0], base["flows"][0]
    assert flow["bytes_delivered"] == flow0["bytes_delivered"] == 200_000
    assert flow["duration_s"] > flow0["duration_s"] + 10


@needs_emu
def test_the_satellite_hop_behind_the_pep_cut_for_10s(tmp_path: Path) -> None:
    """The issue's fault: the GEO hop behind the real-time PEP is cut for 10 s mid-transfer
    (``outages``: what it would carry is lost, both directions). The PEP retransmits by its
    own RTO once the link is back; real Linux at both ends sees every byte exactly once
    (sha256 and length), the PEP's buffer empties and it acknowledged nothing it did not hold."""
    size = 200_000
    path = '[[path]]\nkind = "pep"\n[[path]]\nkind = "satellite"\noutages = [["1.5s", "10s"]]\n'
    data, s = _run(tmp_path, path, _client(tmp_path, "got", size), size)
    got = (tmp_path / "got").read_bytes()
    assert len(got) == size and _same(got, data)
    sat = {row["dir"]: row for row in s["links"] if row["kind"] == "link"}
    assert sat["fwd"]["drops_outage"] > 0, "the cut fell mid-transfer"
    pep = _pep(s)
    assert pep["local_timeouts"] >= 1, "the PEP timed out during the cut"
    assert pep["held_bytes_end"] == 0
    assert s["violations"] == []
