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


def _emu(
    tmp: Path, toml: str, role: str, *args: str, cmd: str | None = None, out: str = "out"
) -> dict[str, object]:
    """``tcplab emu`` of the scenario ``toml`` with tcplab's endpoint as ``role`` (and ``args``,
    ``cmd`` run in the client namespace): it must exit 0; returns its summary.json."""
    o = tmp / out
    argv = ["emu", _scenario(tmp, toml), "--endpoint", f"{role}=tcplab", *args]
    argv += ["--out", str(o), "--quiet"] + (["--", "sh", "-c", cmd] if cmd else [])
    r = _tcplab(*argv)
    assert r.returncode == 0, r.stderr
    return json.loads((o / "summary.json").read_text())


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
    s = _emu(
        tmp_path,
        toml,
        "server",
        "--serve",
        str(www),
        cmd=f'curl -sS --max-time 60 -o {got} "http://$TCPLAB_SERVER:8000/f.bin"',
    )
    assert _sha(got.read_bytes()) == _sha(data)
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
    save = tmp_path / "saved"
    toml = LOSSY + '[[flows]]\ncc = "newreno"\nspurious_detection = "frto"\n'
    s = _emu(
        tmp_path,
        toml,
        "client",
        "--server",
        f"{sys.executable} -m http.server 8000 --bind 10.99.0.1 --directory {www}",
        "--get",
        "http://10.99.0.1:8000/f.bin",
        "--save",
        str(save),
        "--time-limit",
        "60",
    )
    assert _sha(save.read_bytes()) == _sha(data)
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
    toml = (
        '[[path]]\nrate = "20Mbps"\ndelay = "5ms"\n'
        f'[[flows]]\nrto = "linux"\napp = "bulk"\nbytes = {size}\n'
    )
    s = _emu(tmp_path, toml, "server", cmd=cmd)
    want = transfer.bulk_pattern(size)
    assert _sha((tmp_path / "got").read_bytes()) == _sha(want)
    c = s["endpoint"]["connections"][0]
    assert c["window_probes"] >= 1, c
    assert c["bytes_sent"] == size
    assert s["violations"] == []


def _handshake_options(out: Path) -> list[dict[str, object]]:
    """Per connection direction of the emulation's capture: who sent it and the options its
    SYN carried (tcplab's own capture analyser reads them off the wire)."""
    from tcplab.analyze.capture import analyze_capture

    (cap,) = out.glob("*.pcap")
    conns = analyze_capture(cap, collect=False).summary["connections"]
    return [
        {k: c[k] for k in ("src", "handshake", "mss", "wscale", "sack_permitted", "timestamps")}
        for c in conns
    ]


@needs_emu
def test_the_handshake_with_linux_negotiates_every_option_both_ways(
    tmp_path: Path, clean: object
) -> None:
    """Against real Linux in both roles (curl to the tcplab server; the tcplab client to
    Linux's http.server), both SYNs on the wire carry MSS, SACK-permitted, timestamps and
    window scale, and the transfer that follows is byte-exact."""
    www = tmp_path / "www"
    www.mkdir()
    data = os.urandom(300_000)
    (www / "f.bin").write_bytes(data)
    toml = (
        '[[path]]\nrate = "20Mbps"\ndelay = "5ms"\n'
        "[[flows]]\nsack = true\ntimestamps = true\nwindow_scaling = true\n"
    )
    got, saved = tmp_path / "got", tmp_path / "saved"
    pcap = ("--pcap", "0:both")
    curl = f'curl -sS --max-time 30 -o {got} "http://$TCPLAB_SERVER:8000/f.bin"'
    _emu(tmp_path, toml, "server", "--serve", str(www), *pcap, cmd=curl, out="out-server")
    assert _sha(got.read_bytes()) == _sha(data)
    server = f"{sys.executable} -m http.server 8000 --bind {emu.SERVER_ADDR} --directory {www}"
    get = f"http://{emu.SERVER_ADDR}:8000/f.bin"
    _emu(tmp_path, toml, "client", "--server", server, "--get", get, "--save", str(saved), *pcap,
         out="out-client")  # fmt: skip
    assert _sha(saved.read_bytes()) == _sha(data)
    out, out2 = tmp_path / "out-server", tmp_path / "out-client"
    for o in (out, out2):
        dirs = _handshake_options(o)
        assert {d["src"] for d in dirs} == {emu.SERVER_ADDR, emu.CLIENT_ADDR}, dirs
        for d in dirs:
            assert d["handshake"] and d["sack_permitted"] and d["timestamps"], d
            assert d["wscale"] is not None and 1400 <= d["mss"] <= 1460, d


def _reader(tmp: Path, size: int, chunk: int, every: float, stop_after: int = 0) -> str:
    """The shell command of a Linux reader with a 4 KiB SO_RCVBUF that reads ``chunk`` bytes
    every ``every`` seconds; with ``stop_after``, it stops reading after that many bytes and
    exits 3 s later with the rest unread (its kernel then resets the connection)."""
    (tmp / "reader.py").write_text(
        "import os, socket, sys, time\n"
        "size, chunk, every, stop = (int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]),"
        " int(sys.argv[4]))\n"
        "c = socket.socket()\n"
        "c.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)\n"
        "c.connect((os.environ['TCPLAB_SERVER'], 8000))\n"
        "c.sendall(b'GET')\n"
        "got = bytearray()\n"
        "while len(got) < size:\n"
        "    if stop and len(got) >= stop:\n"
        "        time.sleep(3.0)\n"
        "        break\n"
        "    b = c.recv(chunk)\n"
        "    if not b:\n"
        "        break\n"
        "    got += b\n"
        "    time.sleep(every)\n"
        "open(sys.argv[5], 'wb').write(got)\n"
    )
    return f"{sys.executable} {tmp / 'reader.py'} {size} {chunk} {every} {stop_after} {tmp / 'got'}"


@needs_emu
def test_a_slow_linux_reader_gets_zero_window_probes_and_every_byte(
    tmp_path: Path, clean: object
) -> None:
    """A reader that drains 4 KB every 0.4 s behind a 4 KiB buffer keeps the window shut
    longer than the RTO at a time: tcplab's persist timer probes it again and again
    (RFC 9293 §3.8.6.1), and every byte arrives."""
    size = 40_000
    toml = (
        '[[path]]\nrate = "20Mbps"\ndelay = "5ms"\n'
        f'[[flows]]\nrto = "linux"\napp = "bulk"\nbytes = {size}\n'
    )
    s = _emu(tmp_path, toml, "server", cmd=_reader(tmp_path, size, 4096, 0.4))
    assert _sha((tmp_path / "got").read_bytes()) == _sha(transfer.bulk_pattern(size))
    c = s["endpoint"]["connections"][0]
    assert c["window_probes"] >= 3, c
    assert c["bytes_sent"] == size and c["state"] in ("TimeWait", "Closed"), c
    assert s["violations"] == []


@needs_emu
def test_a_linux_reader_that_stops_for_good_is_probed_until_it_resets(
    tmp_path: Path, clean: object
) -> None:
    """A reader that stops reading after 20 kB and never resumes: the closed window is probed
    with the persist timer's backoff for the 3 s it waits, then its exit with unread data
    resets the connection (RFC 2525 §2.17), which tcplab's server takes quietly; the emulation
    ends, no invariant broken."""
    out = tmp_path / "out"
    toml = '[[path]]\nrate = "20Mbps"\ndelay = "5ms"\n[[flows]]\nrto = "linux"\n'
    s = _emu(tmp_path, toml, "server", cmd=_reader(tmp_path, 10**9, 4096, 0.0, stop_after=20_000))
    got = (tmp_path / "got").read_bytes()
    assert len(got) >= 20_000 and _sha(got) == _sha(transfer.bulk_pattern(len(got)))
    c = s["endpoint"]["connections"][0]
    assert c["window_probes"] >= 2, c
    assert c["state"] == "Closed", c
    ev = pq.read_table(out / "events.parquet").to_pydict()
    assert "reset" in ev["kind"]
    assert s["violations"] == []


@needs_emu
def test_a_linux_client_that_aborts_resets_the_tcplab_server(tmp_path: Path, clean: object) -> None:
    (tmp_path / "client.py").write_text(transfer.CLIENT)
    cmd = transfer.client_command(tmp_path, "got", 10**9, pause_at=200_000, rst=True, linger=0.3)
    out = tmp_path / "out"
    s = _emu(tmp_path, '[[path]]\nrate = "20Mbps"\ndelay = "5ms"\n', "server", cmd=cmd)
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


@needs_emu
def test_w_tcp_as_a_real_host_detects_a_forced_spurious_timeout(
    tmp_path: Path, clean: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``reproduce sto-3g --linux``'s W-TCP section on a small file with one scheduled radio
    stall longer than the tuned RTO: each variant takes a timeout the emulator's truth calls
    spurious; F-RTO declares it spurious and the Eifel response sends fewer unnecessary
    retransmissions than W-TCP without a detector; the real goodput is near the simulated run
    of the same configuration; every file byte-exact."""
    from tcplab.papers import sto3g_linux as m
    from tcplab.report.checks import Report

    monkeypatch.setattr(m, "WTCP_SIZE", 100_000)
    monkeypatch.setattr(m, "WTCP_SIM_SEEDS", 1)
    monkeypatch.setattr(m, "WTCP_DOWNLOADS_QUICK", 1)
    monkeypatch.setattr(m, "WTCP_RADIO", {"stalls": [["1s", "6s"]], "spike_rate": 0})
    report = Report("sto-3g", "t", tmp_path, quick=True)
    m.wtcp_section(report, jobs=1)
    d = report.data["wtcp_real"]
    assert all(r["sha256_ok"] and r["violations"] == [] for r in d["downloads"])
    off, frto = d["real"]["off"], d["real"]["F-RTO+Eifel"]
    assert off["spurious"] >= 1 and frto["spurious"] >= 1
    assert off["detected"] == 0 and frto["detected"] >= 1
    assert frto["unnecessary_per_sto"] < off["unnecessary_per_sto"]
    for v in ("off", "F-RTO+Eifel"):
        sim = d["sim_same_seeds"][v]["goodput_bps"]
        assert 0.7 < d["real"][v]["goodput_bps"] / sim < 1.3, (v, d["real"][v], sim)
    assert any("W-TCP (real host)" in c.item for c in report.comparisons)


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
