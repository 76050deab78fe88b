"""Real Linux transfers through ``tcplab emu``: a server and a client program for bulk
downloads, run in the emulator's namespaces (the PEP tests, ``bench/pep_load.py`` and the
``--linux`` sections of ``tcplab reproduce``).

The server sends a file to every client that connects (after its request bytes); the client
fetches it, can stop reading for a while or abort with a RST, and writes what it received plus
a JSON line of timings (``OUT.json``: request sent, first and last byte, wall-clock seconds).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

__all__ = ["CLIENT", "SERVER", "client_command", "run"]

#: Server: sends FILE to each client after its first request bytes; ABORT > 0 closes with a
#: RST (SO_LINGER 0) ABORT seconds after handing the data to the socket; SNDBUF > 0 sets
#: SO_SNDBUF (else Linux autotunes).
SERVER = """
import os, socket, struct, sys, threading, time
data = open(sys.argv[1], "rb").read()
abort, sndbuf = float(sys.argv[2]), int(sys.argv[3])
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
if sndbuf:
    s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, sndbuf)
s.bind((os.environ["TCPLAB_SERVER"], 8000))
s.listen(1024)
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

#: Client: fetches SIZE bytes into OUT; reads PAUSE_AT bytes, stops reading for PAUSE s, then
#: reads the rest; RST = 1 aborts (SO_LINGER 0) at PAUSE_AT instead; RCVBUF > 0 sets
#: SO_RCVBUF before connecting (else Linux autotunes). Waits LINGER s at the end (the last
#: ACKs cross a slow hop back to a PEP before the emulation ends).
CLIENT = """
import json, os, socket, struct, sys, time
out, size, pause_at, pause, rst, rcvbuf, linger = sys.argv[1], int(sys.argv[2]), \\
    int(sys.argv[3]), float(sys.argv[4]), sys.argv[5] == "1", int(sys.argv[6]), \\
    float(sys.argv[7])
c = socket.socket()
if rcvbuf:
    c.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
for attempt in range(50):
    try:
        c.connect((os.environ["TCPLAB_SERVER"], 8000))
        break
    except ConnectionRefusedError:
        c.close()
        time.sleep(0.1)
        c = socket.socket()
        if rcvbuf:
            c.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
t_req = time.monotonic()
c.sendall(b"GET")
got = bytearray()
t_first = t_last = None
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
        break
    if not b:
        break
    t_last = time.monotonic()
    t_first = t_first or t_last
    got += b
open(out, "wb").write(got)
times = {"bytes": len(got), "request_s": t_req, "first_byte_s": t_first, "last_byte_s": t_last}
open(out + ".json", "w").write(json.dumps(times))
time.sleep(linger)
"""


def client_command(
    work: Path,
    out: str,
    size: int,
    *,
    pause_at: int = 0,
    pause: float = 0.0,
    rst: bool = False,
    rcvbuf: int = 0,
    linger: float = 1.5,
) -> str:
    """The shell command that runs :data:`CLIENT` (written by :func:`run`) into ``work/out``."""
    return (
        f"{sys.executable} {work / 'client.py'} {work / out} {size} {pause_at} {pause} "
        f"{int(rst)} {rcvbuf} {linger}"
    )


def run(
    work: Path,
    path_toml: str,
    size: int,
    client: str,
    *,
    abort: float = 0.0,
    sndbuf: int = 0,
    timeout: float = 300,
) -> tuple[bytes, dict[str, Any]]:
    """Serve a random ``size``-byte file from the server namespace and run the shell command
    ``client`` (see :func:`client_command`) in the client namespace, through a scenario whose
    ``[[path]]`` tables are ``path_toml``; return the file and the emulator's summary.
    Raises RuntimeError with tcplab's message if the emulation fails."""
    work.mkdir(parents=True, exist_ok=True)
    data = os.urandom(size)
    (work / "f").write_bytes(data)
    (work / "server.py").write_text(SERVER)
    (work / "client.py").write_text(CLIENT)
    (work / "s.toml").write_text('name = "emu-transfer"\n' + path_toml)
    server = f"{sys.executable} {work / 'server.py'} {work / 'f'} {abort} {sndbuf}"
    cmd = [sys.executable, "-m", "tcplab", "emu", str(work / "s.toml"), "--out", str(work / "out")]
    cmd += ["--quiet", "--server", server, "--", "sh", "-c", client]
    r = subprocess.run(
        cmd,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if r.returncode != 0:
        raise RuntimeError(f"tcplab emu failed ({r.returncode}): {r.stderr.strip()[-2000:]}")
    summary = json.loads((work / "out" / "summary.json").read_text())
    return data, summary
