"""Where a reproduction's time goes, and whether --quick agrees with the full run.

    python bench/reproduce_cost.py throughput-bound [--full] [--out DIR]
    python bench/reproduce_cost.py compare QUICK_DIR FULL_DIR

The first form runs one paper's reproduction (``--quick`` unless ``--full``) with every
function of its ``SECTIONS`` list timed apart: wall time and CPU time (user + sys of this
process and of the sweep's worker processes, which the pool reaps at the end of each sweep),
printed as a table, so the run budget can be spent where the confidence intervals need it.
The second compares the firm verdicts (holds/misses) of two ``tcplab reproduce`` output
directories (e.g. ``--quick`` and full) paper by paper and exits 1 on any disagreement.
"""

from __future__ import annotations

import argparse
import inspect
import json
import resource
import sys
import time
from pathlib import Path

from tcplab.papers import PAPERS, load
from tcplab.report.checks import Report, firm_disagreements


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def profile(paper: str, full: bool, out: Path, jobs: int | None) -> int:
    module = load(paper)
    sections = getattr(module, "SECTIONS", None)
    if not sections:
        print(f"{paper}: no SECTIONS list, timing reproduce() as a whole", file=sys.stderr)
        sections = [module.reproduce]
    report = Report(paper, PAPERS[paper][1], out / paper, quick=not full)
    rows = []
    state: dict[str, object] = {}  # sections of three arguments share it (qos-tcp-wlan)
    w_all, c_all = time.perf_counter(), _cpu()
    for fn in sections:
        w0, c0 = time.perf_counter(), _cpu()
        if len(inspect.signature(fn).parameters) == 3:
            fn(report, jobs, state)
        else:
            fn(report, jobs)
        rows.append((fn.__name__, time.perf_counter() - w0, _cpu() - c0))
    report.write()
    w_all, c_all = time.perf_counter() - w_all, _cpu() - c_all
    print(f"{paper} ({'full' if full else 'quick'}): {report.headline()}")
    print("| section | wall (s) | CPU (s) |\n|---|---|---|")
    for name, w, c in rows:
        print(f"| {name} | {w:.1f} | {c:.1f} |")
    print(f"| total | {w_all:.1f} | {c_all:.1f} |")
    return 0


def compare(a: Path, b: Path) -> int:
    bad = 0
    for paper in PAPERS:
        ra, rb = a / paper / "results.json", b / paper / "results.json"
        if not (ra.exists() and rb.exists()):
            continue
        ja, jb = (json.loads(p.read_text(encoding="utf-8")) for p in (ra, rb))
        diff = firm_disagreements(ja, jb)
        print(f"{paper}: {ja['headline']} | {jb['headline']}")
        for d in diff:
            print(f"  firm verdicts differ: {d}")
        bad += len(diff)
    return 1 if bad else 0


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "compare":
        ap = argparse.ArgumentParser(prog="reproduce_cost.py compare")
        ap.add_argument("a", type=Path)
        ap.add_argument("b", type=Path)
        args = ap.parse_args(sys.argv[2:])
        return compare(args.a, args.b)
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paper", choices=sorted(PAPERS))
    ap.add_argument("--full", action="store_true", help="the full run (default: --quick)")
    ap.add_argument("--out", type=Path, default=Path("out/reproduce_cost"))
    ap.add_argument("--jobs", type=int, default=None)
    args = ap.parse_args()
    return profile(args.paper, args.full, args.out, args.jobs)


if __name__ == "__main__":
    raise SystemExit(main())
