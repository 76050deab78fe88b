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

__all__ = [
    "CLIENT",
    "SERVER",
    "bulk_pattern",
    "client_command",
    "download",
    "endpoint_download",
    "endpoint_sender",
    "netstat",
    "run",
    "tcp_info",
]

#: Server: sends FILE to each client after its first request bytes; ABORT > 0 closes with a
#: RST (SO_LINGER 0) ABORT seconds after handing the data to the socket; SNDBUF > 0 sets
#: SO_SNDBUF (else Linux autotunes). With INFO (optional), once everything sent is
#: acknowledged (``tcpi_unacked`` = 0, at most 600 s) it appends the socket's ``TCP_INFO``
#: (hex) as a JSON line to INFO.
SERVER = """
import json, os, socket, struct, sys, threading, time
data = open(sys.argv[1], "rb").read()
abort, sndbuf = float(sys.argv[2]), int(sys.argv[3])
info = sys.argv[4] if len(sys.argv) > 4 else ""
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
        if info:
            end = time.monotonic() + 600
            while time.monotonic() < end:
                raw = c.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 256)
                if struct.unpack_from("I", raw, 24)[0] == 0:
                    break
                time.sleep(0.02)
            with open(info, "a") as f:
                f.write(json.dumps({"tcp_info": raw.hex()}) + "\\n")
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


#: ``struct tcp_info`` fields read by :func:`tcp_info` (byte offset, struct format), from
#: include/uapi/linux/tcp.h of Linux 6.7+ (``tcpi_total_rto*`` are new in 6.7).
TCP_INFO_FIELDS: dict[str, tuple[int, str]] = {
    "rto_us": (8, "I"),
    "unacked": (24, "I"),
    "rtt_us": (68, "I"),
    "rttvar_us": (72, "I"),
    "total_retrans": (100, "I"),
    "bytes_acked": (120, "Q"),
    "bytes_retrans": (208, "Q"),
    "dsack_dups": (216, "I"),
    "total_rto": (240, "H"),
    "total_rto_recoveries": (242, "H"),
    "total_rto_time_ms": (244, "I"),
}


def tcp_info(raw: bytes) -> dict[str, int]:
    """The :data:`TCP_INFO_FIELDS` of one ``TCP_INFO`` blob (fields past its end are absent:
    an older kernel returns a shorter struct)."""
    import struct

    out = {}
    for name, (off, fmt) in TCP_INFO_FIELDS.items():
        if off + struct.calcsize(fmt) <= len(raw):
            out[name] = struct.unpack_from(fmt, raw, off)[0]
    return out


def netstat(text: str) -> dict[str, int]:
    """``/proc/net/netstat`` (pairs of header and value lines) → ``{"TcpExt.TCPTimeouts": n}``."""
    out: dict[str, int] = {}
    lines = text.splitlines()
    for head, vals in zip(lines[::2], lines[1::2], strict=False):
        hk, *names = head.split()
        vk, *values = vals.split()
        if hk == vk:
            group = hk.rstrip(":")
            out.update({f"{group}.{n}": int(v) for n, v in zip(names, values, strict=True)})
    return out


def download(
    work: Path,
    config: dict[str, Any],
    size: int,
    *,
    sysctls: dict[str, str] | None = None,
    rcvbuf: int = 0,
    sndbuf: int = 0,
    linger: float = 1.0,
    timeout: float = 300.0,
) -> dict[str, Any]:
    """One real Linux download of a random ``size``-byte file over the path of ``config`` (a
    normalized simulator configuration), in this process: namespaces with ``sysctls`` set in
    both, the server's ``TCP_INFO`` once everything is acknowledged, the server namespace's
    ``/proc/net/netstat`` at the end. Returns ``{"sha256_ok", "bytes", "duration_s",
    "tcp_info", "netstat", "summary"}`` (``summary``: the emulator's). Raises EmuError if the
    emulation fails and TimeoutError if the client has not finished after ``timeout`` s."""
    import hashlib
    import time

    from tcplab.real import emu

    work.mkdir(parents=True, exist_ok=True)
    data = os.urandom(size)
    (work / "f").write_bytes(data)
    (work / "server.py").write_text(SERVER)
    (work / "client.py").write_text(CLIENT)
    info = work / "info.jsonl"
    info.unlink(missing_ok=True)
    with emu.Emulation(config, sysctls=dict(sysctls or {})) as em:
        srv = em.exec(
            "server",
            [sys.executable, str(work / "server.py"), str(work / "f"), "0", str(sndbuf), str(info)],
        )
        emu.wait_listening(srv, 10.0)
        cli = em.exec(
            "client",
            ["sh", "-c", client_command(work, "got", size, rcvbuf=rcvbuf, linger=linger)],
        )
        end = time.monotonic() + timeout
        while cli.poll() is None and time.monotonic() < end and em.emulator_alive:
            time.sleep(0.05)
        if cli.poll() is None:
            if not em.emulator_alive:
                em.stop()  # raises the emulator's failure
            raise TimeoutError(f"the download of {size} bytes did not end within {timeout} s")
        # The server writes TCP_INFO once its last byte is acknowledged (the client lingers).
        wait = time.monotonic() + 10
        while not info.exists() and time.monotonic() < wait:
            time.sleep(0.05)
        r = subprocess.run(
            ["ip", "netns", "exec", em.server_ns, "cat", "/proc/net/netstat"],
            capture_output=True,
            text=True,
            check=False,
        )
        summary = em.stop()
    got = (work / "got").read_bytes()
    times = json.loads((work / "got.json").read_text())
    rows = [json.loads(line) for line in info.read_text().splitlines()] if info.exists() else []
    return {
        "sha256_ok": hashlib.sha256(got).digest() == hashlib.sha256(data).digest(),
        "bytes": len(got),
        "duration_s": (times["last_byte_s"] or times["request_s"]) - times["request_s"],
        "tcp_info": tcp_info(bytes.fromhex(rows[-1]["tcp_info"])) if rows else {},
        "netstat": netstat(r.stdout),
        "summary": summary,
    }


def bulk_pattern(size: int) -> bytes:
    """The first ``size`` bytes of the tcplab server endpoint's bulk source (docs/emu.md):
    byte k is byte k mod 4 of the little-endian ``(k div 4) * 0x9E3779B1 mod 2**32``."""
    import numpy as np

    words = np.arange(size // 4 + 1, dtype=np.uint32) * np.uint32(0x9E3779B1)
    return words.astype("<u4").tobytes()[:size]


def endpoint_download(
    config: dict[str, Any],
    size: int,
    *,
    sysctls: dict[str, str] | None = None,
    rcvbuf: int = 0,
    linger: float = 0.3,
    time_limit_s: float = 300.0,
) -> dict[str, Any]:
    """tcplab's own TCP (the emulator's server endpoint, configured from ``config``'s first
    flow, whose ``bytes`` should be ``size``) sends its bulk source to a Linux reader
    (:data:`CLIENT`) in the client namespace over ``config``'s path. Returns ``{"sha256_ok",
    "bytes", "duration_s" (the reader's request to its last byte), "summary"}`` (the
    emulator's summary; its ``endpoint`` section is the tcplab sender's). Raises TimeoutError
    if the reader has not finished after ``time_limit_s``."""
    import hashlib
    import tempfile

    from tcplab.real import emu

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        (work / "client.py").write_text(CLIENT)
        cmd = client_command(work, "got", size, rcvbuf=rcvbuf, linger=linger)
        cmd = f"timeout {time_limit_s:.0f} {cmd}"
        status, summary = emu.run_command(
            config,
            ["sh", "-c", cmd],
            sysctls=sysctls,
            endpoint=emu.endpoint_options("server"),
        )
        got = (work / "got").read_bytes() if (work / "got").exists() else b""
        times = json.loads((work / "got.json").read_text()) if (work / "got.json").exists() else {}
    if status == 124:
        raise TimeoutError(f"the reader of {size} bytes did not finish within {time_limit_s} s")
    want = bulk_pattern(size)
    last = times.get("last_byte_s") or times.get("request_s") or 0.0
    return {
        "sha256_ok": hashlib.sha256(got).digest() == hashlib.sha256(want).digest(),
        "bytes": len(got),
        "duration_s": last - (times.get("request_s") or 0.0),
        "summary": summary,
    }


def endpoint_sender(
    config: dict[str, Any],
    size: int,
    *,
    time_limit_s: float = 300.0,
    sysctls: dict[str, str] | None = None,
    rcvbuf: int = 0,
) -> dict[str, Any]:
    """:func:`endpoint_download` measured as the ``--linux`` sections of ``tcplab reproduce``
    report a paper's sender that runs as tcplab's endpoint: byte-exactness, the goodput of the
    sender's view (its first data segment to the last byte acknowledged: the ``sender_acked``
    event), of the reader's view (its request to its last byte) and of the connection (the
    flow row, from the SYN on), the sender's timeouts (all; of data, the event log's, which
    has no SYN-ACK or FIN timeouts; spurious by the emulator's truth; declared spurious by its
    own detector) and its retransmissions (all, and those the emulator saw were unnecessary:
    their original had already reached the reader)."""
    r = endpoint_download(config, size, sysctls=sysctls, rcvbuf=rcvbuf, time_limit_s=time_limit_s)
    s = r["summary"]
    ep = s["endpoint"]
    conn = ep["connections"][0]
    ev = ep["events"]
    acked = ep["event_kinds"].index("sender_acked")
    sender_s = [v for k, v in zip(ev["kind"], ev["value"], strict=True) if k == acked]
    timeout = ep["event_kinds"].index("timeout")
    fwd = [x for x in s["connections"] if x["dir"] == "fwd"]
    return {
        "sha256_ok": r["sha256_ok"],
        "violations": s["violations"],
        "receiver_bps": size * 8 / r["duration_s"] if r["duration_s"] > 0 else 0.0,
        "sender_bps": size * 8 / sender_s[0] if sender_s else 0.0,
        "connection_bps": ep["flows"][0]["goodput_bps"],
        "timeouts": conn["timeouts"],
        "data_timeouts": sum(1 for k in ev["kind"] if k == timeout),
        "spurious_timeouts": conn["spurious_timeouts"],
        "spurious_detected": conn["spurious_detected"],
        "retransmitted_segments": conn["retransmitted_segments"],
        "unnecessary_retransmissions": sum(x["spurious_retransmissions"] for x in fwd),
    }
