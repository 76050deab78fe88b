#!/usr/bin/env python3
"""A 20 MB HTTP download over a measured cellular trace in real time, against the simulator's
prediction for the same transfer (docs/traces.md, "In real time").

The trace pair ``--trace`` (default ``TMobile-UMTS-driving``) from ``--dir`` (default: the measured
Mahimahi traces' directory, docs/traces.md "Where files are read from"; skipped with a note when
absent), 20 ms one way, a DropTail queue of 200 packets each way. ``tcplab emu`` serves a random
file of ``--mb`` MB with Python's http.server, its sender on Linux CUBIC (the ``TCP_CONGESTION``
socket option), and fetches it with curl; the file is checked byte-exact (SHA-256)
and the rate is its size over curl's total time. The simulator runs the same path with one
``stack = "linux"`` flow of the same size (the HTTP response header is a few hundred bytes
more), and its rate is the size over the flow's completion time. Needs root (as ``tcplab emu``
does). Run it while no other real-time measurement shares the
machine (on a shared machine, under a common lock: ``flock LOCKFILE python bench/trace_emu.py``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from tcplab.analyze.tracefile import mahimahi_dir

#: Python's http.server whose listening socket uses CUBIC (TCP_CONGESTION; accepted sockets
#: inherit it): a namespace may only take a congestion control the host allows by sysctl,
#: and a host may not allow cubic, while a socket option by root always can.
SERVER = """import functools, http.server, socket, sys
class Server(http.server.ThreadingHTTPServer):
    def server_bind(self):
        self.socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, b"cubic")
        super().server_bind()
handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=sys.argv[1])
Server(("10.99.0.1", 8000), handler).serve_forever()
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dir", type=Path, default=mahimahi_dir())
    ap.add_argument("--trace", default="TMobile-UMTS-driving")
    ap.add_argument("--mb", type=float, default=20.0)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    if a.dir is None:
        print(
            "note: no trace directory: set TCPLAB_TRACE_DIR or pass --dir (docs/traces.md); "
            "nothing to run"
        )
        return 0
    down, up = a.dir / f"{a.trace}.down", a.dir / f"{a.trace}.up"
    if not (down.exists() and up.exists()):
        print(f"note: {down} or {up} is absent; nothing to run")
        return 0
    from tcplab.campaign.single import run_config
    from tcplab.scenario.parse import parse_scenario

    size = int(a.mb * 1e6)
    path = f'[[path]]\nkind = "trace"\ndown = "{down}"\nup = "{up}"\ndelay = "20ms"\nqueue = 200\n'
    scenario = {
        "name": "trace-emu",
        "duration": "3600s",
        "seed": a.seed,
        "path": [
            {"kind": "trace", "down": str(down), "up": str(up), "delay": "20ms", "queue": 200}
        ],
        "flows": [{"stack": "linux", "bytes": size}],
    }
    flow = run_config(parse_scenario(scenario).to_config())["flows"][0]
    sim_s = flow["duration_s"]
    sim_mbps = size * 8 / sim_s / 1e6

    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        (tmp / "www").mkdir()
        data = os.urandom(size)
        (tmp / "www" / "f").write_bytes(data)
        (tmp / "s.toml").write_text('name = "trace-emu"\n' + path)
        (tmp / "srv.py").write_text(SERVER)
        got, out = tmp / "got", tmp / "out"
        r = subprocess.run(
            [
                sys.executable,
                "-m",
                "tcplab",
                "emu",
                str(tmp / "s.toml"),
                "--seed",
                str(a.seed),
                "--out",
                str(out),
                "--quiet",
                "--server",
                f"{sys.executable} {tmp / 'srv.py'} {tmp / 'www'}",
                "--",
                "sh",
                "-c",
                f'curl -sS --max-time 1200 -o {got} -w "%{{time_total}}" '
                f'"http://$TCPLAB_SERVER:8000/f"',
            ],
            capture_output=True,
            text=True,
            timeout=1500,
        )
        if r.returncode != 0:
            print(r.stderr, file=sys.stderr)
            return 1
        exact = hashlib.sha256(got.read_bytes()).hexdigest() == hashlib.sha256(data).hexdigest()
        emu_s = float(r.stdout.strip().splitlines()[-1])
        summary = json.loads((out / "summary.json").read_text())
    emu_mbps = size * 8 / emu_s / 1e6
    row = {
        "trace": a.trace,
        "bytes": size,
        "sha256_exact": exact,
        "sim_s": sim_s,
        "sim_mbps": sim_mbps,
        "sim_retransmitted": flow["retransmitted_segments"],
        "emu_s": emu_s,
        "emu_mbps": emu_mbps,
        "ratio": emu_mbps / sim_mbps,
        "emu_drops_queue": summary["links"][0]["drops_queue"],
        "emu_late_releases": summary.get("late_releases"),
    }
    print(
        f"{a.trace}, {a.mb:g} MB: simulator {sim_mbps:.3f} Mbit/s ({sim_s:.1f} s), "
        f"emu {emu_mbps:.3f} Mbit/s ({emu_s:.1f} s), ratio {row['ratio']:.3f}, "
        f"sha256 {'exact' if exact else 'MISMATCH'}"
    )
    print(json.dumps(row))
    return 0 if exact else 1


if __name__ == "__main__":
    raise SystemExit(main())
