"""The spoofing PEP in real time: real Linux TCP through ``tcplab emu`` with a ``pep`` hop.

Byte-exact transfers (sha256), the PEP's buffer returning to 0, many connections at once, a
receiver that stops reading, and RSTs from either side. Needs root, /dev/net/tun, iproute2
and curl (else skipped with the reason). ``TCPLAB_PEP_CONNS`` sets the number of concurrent
connections (20 here; ``bench/pep_load.py`` runs 200).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tcplab import emu

pytest.importorskip("tcplab._core")

REASON = emu.available() or (None if shutil.which("curl") else "needs curl")
needs_emu = pytest.mark.skipif(REASON is not None, reason=str(REASON))
CONNS = int(os.environ.get("TCPLAB_PEP_CONNS", "20"))

#: A server that sends FILE to each client after its first request bytes; with ABORT set it
#: closes with a RST (SO_LINGER 0) ABORT seconds after handing the data to its socket.
SERVER = """
import os, socket, struct, sys, threading, time
data = open(sys.argv[1], "rb").read()
abort = float(sys.argv[2])
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((os.environ["TCPLAB_SERVER"], 8000))
s.listen(512)
def serve(c):
    try:
        c.recv(100)
        c.sendall(data)
        if abort:
            time.sleep(abort)
            c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    except OSError:
        pass
    c.close()
while True:
    c, _ = s.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
"""

#: A client that fetches SIZE bytes into OUT: it reads PAUSE_AT bytes, stops reading for
#: PAUSE seconds, then reads the rest; with RST set it aborts (SO_LINGER 0) after PAUSE_AT.
CLIENT = """
import os, socket, struct, sys, time
out, size, pause_at, pause, rst = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), \\
    float(sys.argv[4]), sys.argv[5] == "1"
c = socket.socket()
c.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 32768)
c.connect((os.environ["TCPLAB_SERVER"], 8000))
c.sendall(b"GET")
got = bytearray()
while len(got) < size:
    if pause_at and len(got) >= pause_at:
        if rst:
            c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            c.close()
            break
        time.sleep(pause)
        pause_at = 0
    try:
        b = c.recv(65536)
    except ConnectionResetError:
        break  # the server aborted
    if not b:
        break
    got += b
open(out, "wb").write(got)
time.sleep(1.5)  # the last ACKs cross the satellite hop back to the PEP
"""


def _run(tmp: Path, path_toml: str, client: str, size: int, abort: float = 0.0) -> Any:
    """Run SERVER (sending a random SIZE-byte file) and `client` through the path; return
    (the file's bytes, the summary)."""
    data = os.urandom(size)
    (tmp / "f").write_bytes(data)
    (tmp / "server.py").write_text(SERVER)
    (tmp / "client.py").write_text(CLIENT)
    (tmp / "s.toml").write_text('name = "pep-emu"\n' + path_toml)
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "tcplab",
            "emu",
            str(tmp / "s.toml"),
            "--out",
            str(tmp / "out"),
            "--quiet",
            "--server",
            f"{sys.executable} {tmp / 'server.py'} {tmp / 'f'} {abort}",
            "--",
            "sh",
            "-c",
            client,
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    summary = json.loads((tmp / "out" / "summary.json").read_text())
    return data, summary


def _pep(summary: Any) -> Any:
    row = summary["links"][0]
    assert row["kind"] == "pep" and row["dir"] == "fwd"
    return row


def _client(
    tmp: Path, out: str, size: int, pause_at: int = 0, pause: float = 0, rst: int = 0
) -> str:
    return f"{sys.executable} {tmp / 'client.py'} {tmp / out} {size} {pause_at} {pause} {rst}"


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
