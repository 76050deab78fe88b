#!/usr/bin/env python3
"""What a trace hop costs (docs/traces.md, Cost).

* Loading: a generated one-hour Mahimahi trace (a random walk of the rate, 0 to 60 Mbit/s,
  mean about 24 Mbit/s, with outages: about 7 M lines) is loaded by the simulator's loader;
  wall and CPU time and the process's peak resident memory.
* Per packet: the same workloads (UDP at twice the mean rate; one CUBIC bulk flow) over a fixed
  link at the trace's mean rate and over the trace hop; best CPU time of ``--repeat`` runs per
  packet (the run only, not reading the trace), and the ratio. CPU time, not wall time: on a
  shared machine wall time mostly measures the other processes.

Runs ``cargo run --release -p tcplab-sim --example trace_bench`` (the release profile the project
ships; the first build takes minutes). With ``--mahimahi-dir`` (default: the measured Mahimahi
traces' directory, docs/traces.md "Where files are read from"; skipped when absent) it also loads a
one-hour trace made of a measured trace repeated. Prints a table and a final JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from tcplab.analyze.tracefile import mahimahi_dir

REPO = Path(__file__).resolve().parent.parent


def synth_trace(path: Path, seconds: int, seed: int = 1) -> None:
    """A trace from ``tcplab trace synth``'s generator, peak 60 Mbit/s (mean about 24)."""
    from tcplab.analyze import tracefile

    tracefile.write(tracefile.synth(seconds, 60e6, seed), path, "mahimahi")


def repeat_trace(src: Path, dst: Path, seconds: int) -> None:
    """A measured trace repeated (each round shifted by its last timestamp) to `seconds`."""
    lines = np.loadtxt(src, dtype=np.int64, ndmin=1)
    period = int(lines[-1])
    rounds = -(-seconds * 1000 // period)
    out = np.concatenate([lines + r * period for r in range(rounds)])
    with open(dst, "w") as f:
        f.write("\n".join(map(str, out.tolist())))
        f.write("\n")


def bench_bin() -> list[str]:
    base = ["cargo", "run", "--quiet", "--release", "-p", "tcplab-sim", "--example"]
    return [*base, "trace_bench", "--"]


def run(args: list[str]) -> list[dict[str, object]]:
    out = subprocess.run(
        bench_bin() + args, cwd=REPO, check=True, capture_output=True, text=True
    ).stdout
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=int, default=120, help="simulated seconds per cost run")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--mahimahi-dir", type=Path, default=mahimahi_dir())
    a = ap.parse_args()
    load = os.getloadavg()[0]
    results: dict[str, object] = {"load_average_1min": load}
    with tempfile.TemporaryDirectory() as tmp:
        synth = Path(tmp) / "synth-1h.down"
        synth_trace(synth, 3600)
        rows = run(["load", str(synth)])
        measured = a.mahimahi_dir / "TMobile-LTE-short.down" if a.mahimahi_dir else None
        if measured is not None and measured.exists():
            rep = Path(tmp) / "tmobile-lte-1h.down"
            repeat_trace(measured, rep, 3600)
            rows += run(["load", str(rep)])
        else:
            print(
                f"note: {measured or 'no TCPLAB_TRACE_DIR'}: the measured one-hour trace is skipped"
            )
        results["load"] = rows
        print(
            f"{'one-hour trace':<28}{'timestamps':>11}{'file MB':>9}{'load s':>8}"
            f"{'cpu s':>7}{'peak MB':>9}"
        )
        for r in rows:
            path = Path(str(r["file"]))
            size = path.stat().st_size / 1e6
            print(
                f"{path.name:<28}{r['timestamps']:>11}{size:>9.1f}"
                f"{float(r['load_s']):>8.3f}{float(r['load_cpu_s']):>7.3f}"
                f"{float(r['peak_rss_mb']):>9.1f}"
            )
        short = Path(tmp) / "synth-10min.down"
        synth_trace(short, 600, seed=2)
        cost = run(["cost", str(short), str(a.seconds), str(a.repeat)])
    results["cost"] = cost
    print(f"\n{'workload':<28}{'link ns/pkt':>12}{'trace ns/pkt':>13}{'ratio':>7}")
    for r in cost:
        ratio = float(r["trace_ns_per_packet"]) / float(r["link_ns_per_packet"])
        r["ratio"] = ratio
        print(
            f"{r['workload']!s:<28}{float(r['link_ns_per_packet']):>12.0f}"
            f"{float(r['trace_ns_per_packet']):>13.0f}{ratio:>7.2f}"
        )
    print(f"(load average {load:.2f})")
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
