"""How far one validation case's tcplab retransmissions move when the sending host's measured
send time moves within its measurement error: the spread a single score is one draw from.

    python validation/linux/send_time_spread.py --case cc=bbr,rate=20Mbps,rtt=10ms,loss=0,queue=33
        --linux-cache DIR [--runs 5] [--from-us 16.8] [--to-us 20.8] [--step-us 0.1]
        [--json FILE]

Reads the case's Linux runs from ``validate linux``'s cache (no Linux run, no root) and runs
tcplab's side as ``validate linux --stack linux`` does (seeds paired with the Linux runs' emulator
seeds, each Linux run's late releases replayed as link stalls, and again with ideal timing),
once for each value of ``xmit_time.first`` (the "linux" profile's measured time from
``tcp_write_xmit`` to the first segment on the wire, 18.8 µs) from ``--from-us`` to ``--to-us``.
Prints each draw's per-run retransmissions and their mean, then the spread of the means against
Linux's mean and its 95 % CI. Simulation only: the load changes no number. docs/linux-stack.md
("BBR") quotes it.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

from tcplab.stats import mean_ci95


def draws(
    spec: str, cache: Path, runs: int, firsts_us: list[float]
) -> tuple[list[int], list[dict[str, Any]]]:
    """Linux's per-run retransmissions, and per ``xmit_time.first`` tcplab's (replayed stalls
    and ideal timing)."""
    from tcplab.real.validate.compare import stalls_from_late, tcplab_runs
    from tcplab.real.validate.run import linux_runs, parse_case
    from tcplab.scenario.parse import TCP_STACKS

    case = parse_case(spec, False)
    linux, _ = linux_runs(None, case, runs, cache)
    stalls = [stalls_from_late(r.extra["late_releases"]) for r in linux]
    seeds = [1000 + k for k in range(runs)]
    xt = TCP_STACKS["linux"]["xmit_time"]
    saved = dict(xt)
    out = []
    try:
        for f in firsts_us:
            # validate's scenario and the stack both read this profile entry.
            xt["first"] = f"{f:g}us"
            rep = tcplab_runs(case, seeds, stack="linux", stalls=stalls)
            ideal = tcplab_runs(case, seeds, stack="linux")
            out.append(
                {
                    "first_us": f,
                    "replayed": [r.retrans for r in rep],
                    "ideal": [r.retrans for r in ideal],
                }
            )
    finally:
        xt.clear()
        xt.update(saved)
    return [r.retrans for r in linux], out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--case", required=True, help="validate's --case syntax")
    ap.add_argument("--linux-cache", type=Path, required=True, help="validate linux's cache")
    ap.add_argument("--runs", type=int, default=5, help="Linux runs (and paired seeds) [5]")
    ap.add_argument("--from-us", type=float, default=16.8)
    ap.add_argument("--to-us", type=float, default=20.8)
    ap.add_argument("--step-us", type=float, default=0.1)
    ap.add_argument("--json", type=Path, help="write the draws here")
    a = ap.parse_args(argv)
    if a.step_us <= 0 or a.to_us < a.from_us:
        ap.error("--step-us must be > 0 and --to-us at least --from-us")
    n = round((a.to_us - a.from_us) / a.step_us) + 1
    firsts = [round(a.from_us + k * a.step_us, 6) for k in range(n)]
    linux, out = draws(a.case, a.linux_cache, a.runs, firsts)
    for d in out:
        print(
            f"first {d['first_us']:g} us: replayed {d['replayed']} mean "
            f"{np.mean(d['replayed']):.1f}; ideal {d['ideal']} mean {np.mean(d['ideal']):.1f}"
        )
    lm = float(np.mean(linux))
    means = np.array([np.mean(d["replayed"]) for d in out])
    per_run = np.array([d["replayed"] for d in out])
    summary = {
        "linux_runs": linux,
        "linux_mean": lm,
        "linux_ci95": mean_ci95([float(x) for x in linux])[1],
        "draws": len(out),
        "tcplab_mean_of_means": float(means.mean()),
        "tcplab_median": float(np.median(means)),
        "tcplab_p10_p90": [float(v) for v in np.percentile(means, [10, 90])],
        "tcplab_min_max": [float(means.min()), float(means.max())],
        "draws_within_30pct": float(np.mean(np.abs(means - lm) <= 0.3 * lm)) if lm else None,
        "tcplab_runs_above_linux_max": int((per_run > max(linux)).sum()),
        "tcplab_runs": int(per_run.size),
        "ideal_means": sorted({float(np.mean(d["ideal"])) for d in out}),
    }
    print(json.dumps(summary))
    if a.json is not None:
        a.json.write_text(json.dumps({"summary": summary, "draws": out}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
