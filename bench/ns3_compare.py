"""What bench/ns3_bbr.py and bench/ns3_aqm.py share: cached ``p2p_bulk`` runs, the Linux runs
and tcplab's paired runs of one validation case, the command line and the loop over cases.

Each bench supplies its cases and a ``compare_case(binary, spec, args)`` that turns one case
into a row; :func:`main` parses the common options (plus the bench's own), runs every case,
writes the rows as JSON with ``--out`` and returns them for the bench's table.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

from ns3_prr import ns3_binary  # noqa: E402


def err(sim: float, linux: float) -> float:
    """Relative error of ``sim`` against ``linux`` (0 when both are 0)."""
    if linux == 0:
        return 0.0 if sim == 0 else float("inf")
    return sim / linux - 1


def cached_run(
    cmd: list[str], cache_file: Path | None, timeout_s: float | None = None
) -> dict[str, Any] | None:
    """The JSON record ``p2p_bulk`` prints last for ``cmd``, from ``cache_file`` when it is
    there (and stored there after a run); None if the run took longer than ``timeout_s``
    seconds of wall time."""
    if cache_file is not None and cache_file.exists():
        cached: dict[str, Any] = json.loads(cache_file.read_text())
        return cached
    try:
        out = subprocess.run(
            cmd, check=True, capture_output=True, text=True, timeout=timeout_s
        ).stdout
    except subprocess.TimeoutExpired:
        return None
    res: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    if cache_file is not None:
        cache_file.write_text(json.dumps(res))
    return res


def linux_and_tcplab(spec: str, runs: int, cache: Path) -> tuple[Any, dict[str, Any]]:
    """Case ``spec`` (validate's ``--case`` syntax) and the validation's row for it: the first
    ``runs`` Linux runs from ``cache`` against tcplab's paired runs (``stack = "linux"``)."""
    from tcplab.real.validate.run import compare_runs, linux_runs, parse_case

    case = parse_case(spec, quick=False)
    linux, _ = linux_runs(None, case, runs, cache)
    row, _sim = compare_runs(case, linux, [1000 + r for r in range(runs)], "linux")
    return case, row


def main(
    description: str,
    cases: list[str],
    compare_case: Callable[[Path, str, argparse.Namespace], dict[str, Any]],
    argv: list[str] | None = None,
    extra: Callable[[argparse.ArgumentParser], None] | None = None,
) -> list[dict[str, Any]]:
    """Parse the common options (and the bench's ``extra`` ones), compare every case and
    return the rows (also written to ``--out``)."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--linux-cache", type=Path, required=True, help="validate linux's cache")
    ap.add_argument("--runs", type=int, default=5, help="runs per case and stack [5]")
    ap.add_argument("--case", action="append", default=None, help="validate's --case syntax")
    ap.add_argument(
        "--ns3",
        default="wheel",
        help="'wheel' (bench/ns3/build/p2p_bulk, PyPI ns3 3.44) or a p2p_bulk binary",
    )
    ap.add_argument("--ns3-cache", type=Path, default=None, help="keep ns-3 runs here")
    if extra is not None:
        extra(ap)
    ap.add_argument("--out", type=Path, default=None, help="write the rows as JSON here")
    a = ap.parse_args(argv)
    if a.runs < 1:
        ap.error("--runs: must be >= 1")
    binary = ns3_binary(a.ns3)
    if a.ns3_cache is not None:
        a.ns3_cache.mkdir(parents=True, exist_ok=True)
    rows = []
    for spec in a.case or cases:
        rows.append(compare_case(binary, spec, a))
        print(f"done: {spec}", file=sys.stderr, flush=True)
    if a.out:
        a.out.write_text(json.dumps(rows, indent=1))
    return rows
