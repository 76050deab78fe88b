"""Speed of ``tcplab analyze`` against tshark on the same bulk-transfer capture.

Makes the capture with the simulator (``p2p-bulk``, both directions of the bottleneck,
headers only) unless ``--pcap`` names one, then times, best of ``--repeat`` rounds:

- ``tcplab analyze F --json`` (whole process, and the Rust analysis alone: ``wall_s``);
- ``tshark -n -r F -q -z io,stat,0`` (read and dissect, TCP analysis on by default);
- ``tshark -n -r F -q -z io,stat,0,tcp.analysis.retransmission`` (the same with a
  tcp.analysis field counted).

    python bench/analyze_bench.py [--duration 1300s] [--repeat 3] [--pcap FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def timed(cmd: list[str]) -> tuple[float, str]:
    t0 = time.perf_counter()
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return time.perf_counter() - t0, out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--duration", default="1300s", help="simulated time of the bulk transfer")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--pcap", help="use this capture instead of making one")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="tcplab-analyze-bench-"))
    if args.pcap:
        pcap = Path(args.pcap)
    else:
        subprocess.run(
            [
                "tcplab",
                "run",
                "p2p-bulk",
                "--quiet",
                "--set",
                f"duration={args.duration}",
                "--pcap",
                "0:both",
                "--out",
                str(tmp),
            ],
            check=True,
        )
        (pcap,) = tmp.glob("*.pcap")
    tcplab = shutil.which("tcplab") or "tcplab"
    tshark = shutil.which("tshark")
    best: dict[str, float] = {}
    rust_s = float("inf")
    packets = 0
    for _ in range(args.repeat):
        dt, out = timed([tcplab, "analyze", str(pcap), "--json"])
        s = json.loads(out)
        packets = s["packets"]
        rust_s = min(rust_s, s["wall_s"])
        best["tcplab analyze (process)"] = min(best.get("tcplab analyze (process)", 1e9), dt)
        if tshark:
            for name, extra in (
                ("tshark io,stat", "io,stat,0"),
                ("tshark io,stat + tcp.analysis", "io,stat,0,tcp.analysis.retransmission"),
            ):
                dt, _ = timed([tshark, "-n", "-r", str(pcap), "-q", "-z", extra])
                best[name] = min(best.get(name, 1e9), dt)
    best["tcplab analyze (Rust analysis only)"] = rust_s
    rows = {k: {"s": round(v, 3), "packets_per_s": round(packets / v)} for k, v in best.items()}
    base = best["tcplab analyze (process)"]
    for k in rows:
        rows[k]["tcplab_speedup"] = round(best[k] / base, 1)
    print(
        json.dumps(
            {
                "capture": str(pcap),
                "bytes": pcap.stat().st_size,
                "packets": packets,
                "load": os.getloadavg(),
                "results": rows,
            },
            indent=1,
        )
    )
    if not args.pcap:
        shutil.rmtree(tmp)
    return 0


if __name__ == "__main__":
    sys.exit(main())
