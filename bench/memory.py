"""Peak memory of long runs: does it grow with simulated time?

Runs ``tcplab run SCENARIO --set duration=Ds --json --quiet`` (and, with ``--out``, into a
temporary directory) once per duration under ``/usr/bin/time -v`` and prints one JSON line
per run: the duration, the peak resident set size (``Maximum resident set size``), the wall
time and, with ``--out``, the bytes of Parquet written. The bar: with ``--json`` alone the
peak RSS from 600 s to 60,000 s simulated stays within 20 %; with ``--out`` it stays bounded
while the Parquet files grow (long tables are spilled to disk beyond 65,536 rows).

    python bench/memory.py                          # 600, 6000, 60000 s; --json only
    python bench/memory.py --out                    # the same, writing Parquet
    python bench/memory.py --durations 60 600       # quick check
    python bench/memory.py --out --set sample_interval=10ms   # 10x the time-series rows
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def measure(scenario: str, duration: int, out: bool, sets: list[str]) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as d:
        cmd = [sys.executable, "-m", "tcplab", "run", scenario, "--set", f"duration={duration}s"]
        for item in sets:
            cmd += ["--set", item]
        cmd += ["--out", d, "--quiet"] if out else ["--json", "--quiet"]
        start = time.perf_counter()
        done = subprocess.run(
            ["/usr/bin/time", "-v", *cmd], capture_output=True, text=True, check=False
        )
        wall = time.perf_counter() - start
        if done.returncode != 0:
            raise SystemExit(f"{' '.join(cmd)} failed:\n{done.stderr}")
        rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr)
        assert rss is not None, done.stderr
        row: dict[str, object] = {
            "duration_s": duration,
            "mode": "--out" if out else "--json",
            "set": sets,
            "peak_rss_mb": round(int(rss.group(1)) / 1024, 1),
            "wall_s": round(wall, 1),
        }
        if out:
            row["parquet_mb"] = round(
                sum(p.stat().st_size for p in Path(d).glob("*.parquet")) / 2**20, 2
            )
        return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", default=str(ROOT / "scenarios" / "p2p-bulk.toml"))
    parser.add_argument("--durations", type=int, nargs="+", default=[600, 6000, 60000])
    parser.add_argument("--out", action="store_true", help="write Parquet (--out DIR)")
    parser.add_argument("--set", action="append", default=[], help="as for tcplab run")
    args = parser.parse_args()
    for duration in args.durations:
        print(json.dumps(measure(args.scenario, duration, args.out, args.set)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
