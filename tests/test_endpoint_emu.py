"""``tcplab emu --endpoint``: tcplab's own TCP as a real host against Linux in the namespaces.

The scripted checks (segment by segment) are Rust tests beside the code
(``crates/tcplab-sim/src/endpoint_tests.rs``); these run real Linux peers (curl,
``python -m http.server``, a slow or aborting reader) through real namespaces, every transfer
a few seconds. Without root, /dev/net/tun, iproute2 or curl the namespace tests are skipped;
the option checks run everywhere.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from support import realtime
from tcplab.real import emu, transfer

pytest.importorskip("tcplab._core")

REASON = emu.available() or (None if shutil.which("curl") else "needs curl")
needs_emu = realtime(REASON)
TAG = secrets.token_hex(3)


def _ours() -> set[str]:
    ns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return {line.split()[0] for line in ns.splitlines() if line.startswith(f"tle{TAG}")}


@pytest.fixture
def clean(monkeypatch: pytest.MonkeyPatch) -> object:
    monkeypatch.setenv("TCPLAB_EMU_TAG", TAG)
    yield None
    assert not _ours(), "namespaces left behind"


def _tcplab(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tcplab", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=dict(os.environ),
    )


def _scenario(tmp: Path, text: str) -> str:
    path = tmp / "s.toml"
    path.write_text('name = "t"\n' + text)
    return str(path)


def _sha(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()


LOSSY = (
    '[[path]]\nrate = "30Mbps"\ndelay = "5ms"\nqueue = 200\n'
    '[path.down]\nloss = 0.005\nreorder = {p = 0.01, extra = "3ms"}\n'
    "[path.up]\nloss = 0.005\n"
)


@needs_emu
def test_curl_fetches_a_file_from_the_tcplab_server_byte_exact(
    tmp_path: Path, clean: object
) -> None:
    www = tmp_path / "www"
    www.mkdir()
    data = os.urandom(2_000_000)
    (www / "f.bin").write_bytes(data)
    got, out = tmp_path / "got", tmp_path / "out"
    toml = LOSSY + '[[flows]]\ncc = "cubic"\nsack = true\n'
    r = _tcplab(
        "emu",
        _scenario(tmp_path, toml),
        "--endpoint",
        "server=tcplab",
        "--serve",
        str(www),
        "--out",
        str(out),
        "--quiet",
        "--",
        "sh",
        "-c",
        f'curl -sS --max-time 60 -o {got} "http://$TCPLAB_SERVER:8000/f.bin"',
    )
    assert r.returncode == 0, r.stderr
    assert _sha(got.read_bytes()) == _sha(data)
    s = json.loads((out / "summary.json").read_text())
    assert s["violations"] == []
    ep = s["endpoint"]
    assert ep["role"] == "server" and ep["cc"] == "cubic"
    c = ep["connections"][0]
    assert c["request"] == "GET /f.bin HTTP/1.1"
    assert c["bytes_sent"] == c["stream_bytes"] > len(data)
    # The loss on the path made tcplab's sender retransmit, and the emulator saw it.
    assert c["retransmitted_segments"] > 0
    fwd = next(x for x in s["connections"] if x["dir"] == "fwd" and x["data_bytes"] > 0)
    assert fwd["retransmitted_segments"] == c["retransmitted_segments"]
    flows = pq.read_table(out / "flows.parquet").to_pylist()
    assert flows[0]["retransmitted_segments"] == c["retransmitted_segments"]
    ev = pq.read_table(out / "events.parquet").to_pydict()
    assert "retransmit" in ev["kind"] and "established" in ev["kind"]
    ts = pq.read_table(out / "timeseries.parquet").to_pydict()
    assert len(ts["cwnd"]) > 0 and max(ts["srtt_ns"]) > 10_000_000


@needs_emu
def test_the_tcplab_client_fetches_from_a_linux_server_byte_exact(
    tmp_path: Path, clean: object
) -> None:
    www = tmp_path / "www"
    www.mkdir()
    data = os.urandom(1_500_000)
    (www / "f.bin").write_bytes(data)
    save, out = tmp_path / "saved", tmp_path / "out"
    toml = LOSSY + '[[flows]]\ncc = "newreno"\nspurious_detection = "frto"\n'
    r = _tcplab(
        "emu",
        _scenario(tmp_path, toml),
        "--endpoint",
        "client=tcplab",
        "--server",
        f"{sys.executable} -m http.server 8000 --bind 10.99.0.1 --directory {www}",
        "--get",
        "http://10.99.0.1:8000/f.bin",
        "--save",
        str(save),
        "--out",
        str(out),
        "--quiet",
        "--time-limit",
        "60",
    )
    assert r.returncode == 0, r.stderr
    assert _sha(save.read_bytes()) == _sha(data)
    s = json.loads((out / "summary.json").read_text())
    assert s["violations"] == []
    c = s["endpoint"]["connections"][0]
    assert c["status"] == 200 and c["complete"] and c["body_bytes"] == len(data)
    # Linux was the sender over the lossy path: the emulator counted its retransmissions.
    fwd = next(x for x in s["connections"] if x["dir"] == "fwd")
    assert fwd["retransmitted_segments"] > 0 and fwd["delivered_bytes"] >= len(data)


@needs_emu
def test_a_linux_reader_that_stops_gets_zero_window_probes_then_the_rest(
    tmp_path: Path, clean: object
) -> None:
    """The bulk source against a Linux client with a small buffer that stops reading for
    2 s: the window closes, tcplab's persist timer probes it (RFC 9293 §3.8.6.1), and the
    stream arrives whole once the reader resumes."""
    size = 600_000
    (tmp_path / "client.py").write_text(transfer.CLIENT)
    cmd = transfer.client_command(
        tmp_path, "got", size, pause_at=100_000, pause=2.0, rcvbuf=16384, linger=0.2
    )
    out = tmp_path / "out"
    toml = (
        '[[path]]\nrate = "20Mbps"\ndelay = "5ms"\n'
        f'[[flows]]\nrto = "linux"\napp = "bulk"\nbytes = {size}\n'
    )
    r = _tcplab(
        "emu",
        _scenario(tmp_path, toml),
        "--endpoint",
        "server=tcplab",
        "--out",
        str(out),
        "--quiet",
        "--",
        "sh",
        "-c",
        cmd,
    )
    assert r.returncode == 0, r.stderr
    want = transfer.bulk_pattern(size)
    assert _sha((tmp_path / "got").read_bytes()) == _sha(want)
    s = json.loads((out / "summary.json").read_text())
    c = s["endpoint"]["connections"][0]
    assert c["window_probes"] >= 1, c
    assert c["bytes_sent"] == size
    assert s["violations"] == []


@needs_emu
def test_a_linux_client_that_aborts_resets_the_tcplab_server(tmp_path: Path, clean: object) -> None:
    (tmp_path / "client.py").write_text(transfer.CLIENT)
    cmd = transfer.client_command(tmp_path, "got", 10**9, pause_at=200_000, rst=True, linger=0.3)
    out = tmp_path / "out"
    r = _tcplab(
        "emu",
        _scenario(tmp_path, '[[path]]\nrate = "20Mbps"\ndelay = "5ms"\n'),
        "--endpoint",
        "server=tcplab",
        "--out",
        str(out),
        "--quiet",
        "--",
        "sh",
        "-c",
        cmd,
    )
    assert r.returncode == 0, r.stderr
    s = json.loads((out / "summary.json").read_text())
    assert s["endpoint"]["connections"][0]["state"] == "Closed"
    ev = pq.read_table(out / "events.parquet").to_pydict()
    assert "reset" in ev["kind"]
    assert s["violations"] == []


@needs_emu
def test_the_papers_sender_as_a_real_host_times_out_spuriously_without_the_pep(
    tmp_path: Path, clean: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``reproduce spoofing-satellite --linux``'s real-host section on small files: the
    paper's sender (RTO fixed at 500 ms, below the 540 ms satellite RTT) takes timeouts the
    emulator's truth calls spurious without the PEP, none with it, and the PEP multiplies its
    rate; every file byte-exact."""
    from tcplab.papers import spoofing_linux
    from tcplab.report.checks import Report

    monkeypatch.setattr(spoofing_linux, "SIZES", {True: 60_000, False: 15_000})
    report = Report("spoofing-satellite", "t", tmp_path, quick=True)
    spoofing_linux.section(report, jobs=1)
    no_pep, pep = report.data["paper_sender_real"]["rows"]
    assert no_pep["sha256_ok"] and pep["sha256_ok"]
    assert no_pep["violations"] == [] and pep["violations"] == []
    assert no_pep["spurious_timeouts"] >= 1 and no_pep["timeouts"] >= no_pep["spurious_timeouts"]
    assert pep["data_timeouts"] == 0 and no_pep["data_timeouts"] >= no_pep["spurious_timeouts"]
    assert pep["sender_bps"] > 5 * no_pep["sender_bps"]
    assert (tmp_path / "paper_sender_real.png").exists()
    assert any("real host" in c.item for c in report.comparisons)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--endpoint", "client=tcplab", "--get", "http://10.99.0.1:8000/f"], "needs --get URL"),
        (
            ["--endpoint", "client=tcplab", "--get", "http://example.com/f", "--save", "x"],
            "--get: the server namespace is at 10.99.0.1 (got example.com)",
        ),
        (["--endpoint", "client=tcplab", "--get", "ftp://10.99.0.1/f", "--save", "x"], "http://"),
        (["--endpoint", "server=tcplab", "--serve", "/nonexistent/dir", "--", "true"], "--serve"),
        (["--endpoint", "server=tcplab", "--port", "0", "--", "true"], "--port: must be"),
        (["--endpoint", "server=tcplab", "--server", "x", "--", "true"], "no --server"),
        (["--serve", ".", "--", "true"], "need --endpoint"),
    ],
)
def test_endpoint_options_are_checked_in_one_line(
    tmp_path: Path, args: list[str], message: str
) -> None:
    r = _tcplab("emu", _scenario(tmp_path, "[[path]]\n"), *args)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], r.stderr
