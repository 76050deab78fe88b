"""Fuzz the ``tcplab analyze`` parser and analyser with ≥ 1 M mutated captures.

Runs ``crates/tcplab-trace/examples/fuzz_parser.rs`` in the dev profile (overflow checks and
debug assertions on, so arithmetic overflow counts as a crash): mutations of hand-built
pcap and pcapng captures (bit flips, boundary values, truncations, overwritten length fields,
duplicated chunks) through the whole pipeline; every panic is counted and its input saved to
the temporary directory. Exit status 1 if anything panicked. The in-CI version is the
``fuzz_mutated_captures_never_panic`` test (3000 inputs).

    python bench/analyze_fuzz.py [--inputs 1000000] [--seed 1]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--inputs", type=int, default=1_000_000)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    cmd = [
        "cargo",
        "run",
        "--quiet",
        "-p",
        "tcplab-trace",
        "--example",
        "fuzz_parser",
        "--",
        str(args.inputs),
        str(args.seed),
    ]
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    sys.stderr.write(out.stderr)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    result["load"] = os.getloadavg()
    print(json.dumps(result))
    return 1 if result["panics"] else out.returncode


if __name__ == "__main__":
    sys.exit(main())
