"""Where a reproduction's time goes, and whether --quick agrees with the full run.

    python bench/reproduce_cost.py throughput-bound [--full] [--out DIR] [--runs FILE]
    python bench/reproduce_cost.py compare QUICK_DIR FULL_DIR

The first form runs one paper's reproduction (``--quick`` unless ``--full``) with every
function of its ``SECTIONS`` list timed apart: wall time and CPU time (user + sys of this
process and of the sweep's worker processes, which the pool reaps at the end of each sweep),
printed as a table, so the run budget can be spent where the confidence intervals need it.
With ``--runs FILE`` every single simulation is also logged (one JSON line: section, digest of
its configuration, wall and CPU seconds in the process that ran it, the pool call it was part
of), and a summary is printed: the costliest runs, the runs done more than once, and how busy
the worker processes of each pool call were (CPU seconds over wall times workers).
The second compares the firm verdicts (holds/misses) of two ``tcplab reproduce`` output
directories (e.g. ``--quick`` and full) paper by paper and exits 1 on any disagreement.
"""

from __future__ import annotations

import argparse
import hashlib
import inspect
import json
import os
import resource
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import tcplab.campaign.single as single
import tcplab.campaign.sweep as sweep
from tcplab.papers import PAPERS, load
from tcplab.report.checks import Report, firm_disagreements


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


_LOG: dict[str, Any] = {"path": None, "section": "", "top": "", "call": 0}


def _digest(config: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(config, sort_keys=True).encode()).hexdigest()[:16]


def _logged(run_config: Any) -> Any:
    """``run_config`` that appends one line per run to the log (from whichever process ran
    it; the pool forks after this is installed, so workers log too)."""

    def run(config: dict[str, Any], columns: bool = False) -> dict[str, Any]:
        w0, c0 = time.perf_counter(), time.process_time()
        out = run_config(config, columns)
        line = {
            "section": _LOG["section"],
            "call": _LOG["call"],
            "digest": _digest(config),
            "columns": columns,
            "wall": time.perf_counter() - w0,
            "cpu": time.process_time() - c0,
            "pid": os.getpid(),
        }
        with open(_LOG["path"], "a", encoding="utf-8") as f:
            f.write(json.dumps(line) + "\n")
        return out

    return run


def _counted(run_configs: Any) -> Any:
    """``run_configs`` that numbers its calls and logs each call's wall time and size."""

    def run(configs: Any, jobs: int | None = None, *a: Any, **kw: Any) -> list[dict[str, Any]]:
        configs = list(configs)
        _LOG["call"] += 1
        call = _LOG["call"]
        frame = sys._getframe(1)
        while frame is not None and "tcplab/papers/" not in frame.f_code.co_filename:
            frame = frame.f_back
        where = frame.f_code.co_name if frame is not None else "?"
        _LOG["section"] = f"{_LOG['top']}/{where}" if _LOG["top"] else where
        w0 = time.perf_counter()
        out = run_configs(configs, jobs, *a, **kw)
        workers = min(jobs or single.default_jobs(), len(configs))
        chunk = max(1, len(configs) // (workers * 8))  # as run_configs chooses it
        line = {"pool": call, "section": _LOG["section"], "runs": len(configs)}
        line |= {"wall": time.perf_counter() - w0, "workers": workers, "chunk": chunk}
        with open(_LOG["path"], "a", encoding="utf-8") as f:
            f.write(json.dumps(line) + "\n")
        return out

    return run


def install_run_log(path: Path) -> None:
    """Log every run of this process and its pools to ``path`` (see the module text)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("", encoding="utf-8")
    _LOG["path"] = str(path)
    sweep.run_config = _logged(sweep.run_config)
    single.run_config = _logged(single.run_config)
    patched = _counted(sweep.run_configs)
    sweep.run_configs = patched
    import sys as _sys

    # the paper modules took their own reference at import time
    for name, mod in list(_sys.modules.items()):
        if name.startswith("tcplab.papers") and getattr(mod, "run_configs", None) is not None:
            mod.run_configs = patched  # type: ignore[attr-defined]


def _makespan(costs: list[float], workers: int, chunk: int) -> float:
    """When the last of ``costs`` (CPU seconds, in submission order) ends if ``workers`` idle
    cores take chunks of ``chunk`` runs in that order, each the moment one is free (what
    ``ProcessPoolExecutor.map`` does); one worker runs them one after the other."""
    free = [0.0] * max(1, workers)
    for i in range(0, len(costs), chunk):
        k = free.index(min(free))
        free[k] += sum(costs[i : i + chunk])
    return max(free)


def summarize_runs(path: Path, top: int = 12) -> None:
    """Print the summary of a run log (see the module text) and, from the CPU seconds each run
    and each section took, the wall time the reproduction would take on idle cores: the
    sections' own (serial) CPU time plus the makespan of each pool call."""
    runs, pools, sections = [], [], []
    for line in path.read_text(encoding="utf-8").splitlines():
        d = json.loads(line)
        if "sections" in d:
            sections = d["sections"]
        else:
            (pools if "pool" in d else runs).append(d)
    seen: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in runs:
        seen[r["digest"]].append(r)
    cpu = sum(r["cpu"] for r in runs)
    again = [v for v in seen.values() if len(v) > 1]
    waste = sum(r["cpu"] for v in again for r in v[1:])
    print(f"{len(runs)} runs, {len(seen)} distinct, {cpu:.1f} s CPU in runs")
    print(f"runs done more than once: {len(again)} configurations, {waste:.1f} s CPU repeated")
    for v in sorted(again, key=lambda v: -sum(r["cpu"] for r in v[1:]))[:top]:
        secs = sorted({r["section"] for r in v})
        print(f"  {v[0]['digest']} x{len(v)} {v[0]['cpu']:.2f} s each, in {', '.join(secs)}")
    print("costliest runs:")
    for r in sorted(runs, key=lambda r: -r["cpu"])[:top]:
        print(f"  {r['cpu']:7.2f} s CPU  {r['section']} (pool call {r['call']})")
    by_call: dict[int, list[float]] = defaultdict(list)
    for r in runs:
        by_call[r["call"]].append(r["cpu"])
    print("pool calls (makespan: the call's wall time on idle cores, from its runs' CPU):")
    span: dict[str, float] = defaultdict(float)
    in_runs: dict[str, float] = defaultdict(float)
    for p in pools:
        costs = by_call[p["pool"]]  # completion order of the log, close to submission order
        chunk = p.get("chunk", 1)
        p["makespan"] = _makespan(costs, p["workers"], chunk)
        top_section = p["section"].split("/")[0]
        span[top_section] += p["makespan"]
        in_runs[top_section] += sum(costs)
    for p in sorted(pools, key=lambda p: -p["makespan"])[:top]:
        total = sum(by_call[p["pool"]])
        print(
            f"  call {p['pool']:3d} {p['section']}: {p['runs']} runs, {total:.1f} s CPU, "
            f"makespan {p['makespan']:.1f} s on {p['workers']} workers (wall {p['wall']:.1f} s)"
        )
    if sections:
        print("| section | CPU (s) | of it in runs | idle-core wall estimate (s) |")
        print("|---|---|---|---|")
        est_all = cpu_all = 0.0
        for name, _, c in sections:
            key = name if name != "reproduce" else ""
            runs_cpu = sum(v for k, v in in_runs.items() if k == key or (not key and k != key))
            serial = max(0.0, c - runs_cpu)
            est = serial + sum(v for k, v in span.items() if k == key)
            est_all += est
            cpu_all += c
            print(f"| {name} | {c:.1f} | {runs_cpu:.1f} | {est:.1f} |")
        print(f"| total | {cpu_all:.1f} | {cpu:.1f} | {est_all:.1f} |")


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
        _LOG["section"] = _LOG["top"] = fn.__name__ if fn.__name__ != "reproduce" else ""
        w0, c0 = time.perf_counter(), _cpu()
        if "state" in inspect.signature(fn).parameters:
            fn(report, jobs, state)
        else:
            fn(report, jobs)
        rows.append((fn.__name__, time.perf_counter() - w0, _cpu() - c0))
    report.write()
    w_all, c_all = time.perf_counter() - w_all, _cpu() - c_all
    if _LOG["path"]:
        with open(_LOG["path"], "a", encoding="utf-8") as f:
            f.write(json.dumps({"sections": rows}) + "\n")
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
    if len(sys.argv) > 1 and sys.argv[1] == "runs":
        for path in sys.argv[2:]:
            print(f"== {path}")
            summarize_runs(Path(path))
        return 0
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
    ap.add_argument("--runs", type=Path, help="log every run to this JSON-lines file")
    args = ap.parse_args()
    if args.runs:
        load(args.paper)  # import the paper's module before patching its reference
        install_run_log(args.runs)
    rc = profile(args.paper, args.full, args.out, args.jobs)
    if args.runs:
        summarize_runs(args.runs)
    return rc


if __name__ == "__main__":
    raise SystemExit(main())
