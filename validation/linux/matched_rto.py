"""Which Linux mechanism removes the ``--stack matched`` timeouts of a random draw.

    python validation/linux/matched_rto.py RESULTS_JSON LINUX_CACHE_DIR [--runs 5]

``RESULTS_JSON`` is a ``tcplab validate linux --random`` run's ``results.json`` and
``LINUX_CACHE_DIR`` its ``--linux-cache``. For every case, tcplab runs the ``matched`` stack,
``matched`` with RACK loss detection (``loss_detection = "rack"``), ``matched`` with PRR
(``recovery_cwnd = "prr"``) and the ``linux`` stack, paired with the cached Linux runs (emulator
seeds 1000 on, each run's late releases replayed as link stalls, as ``validate`` does), and
prints the timeouts per run of each; at the end, per variant, the cases with more than 0.5
timeouts per run where Linux took none (the random draw's RTO target). Simulation only.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from tcplab.campaign.sweep import run_config
from tcplab.real.validate.compare import Case, stalls_from_late, tcplab_scenario
from tcplab.scenario.parse import parse_scenario

#: Flow keys added to the ``matched`` stack (None: the ``linux`` stack itself).
VARIANTS: dict[str, dict[str, Any] | None] = {
    "matched": {},
    "matched+rack": {"loss_detection": "rack"},
    "matched+prr": {"recovery_cwnd": "prr"},
    "linux": None,
}


def cache_file(cache: Path, case: Case, seed: int) -> Path:
    """The cached Linux run of ``case`` with emulator seed ``seed`` (validate's file name)."""
    slug = "".join(ch if ch.isalnum() else "_" for ch in case.label)
    return cache / f"{slug}_q{case.queue}_d{case.duration_s:g}_w{case.warmup_s:g}_s{seed}.json"


def timeouts(case: Case, seed: int, extra: dict[str, Any] | None, late: list[list[Any]]) -> int:
    """tcplab's timeouts on ``case`` for one seed and variant, with ``late`` replayed."""
    sc = tcplab_scenario(case, seed, stack="linux" if extra is None else "matched")
    sc["flows"][0].update(extra or {})
    for side, spans in stalls_from_late(late).items():
        sc["path"][0].setdefault(side, {})["stalls"] = spans
    summary = run_config(parse_scenario(sc).to_config(), columns=True)
    return int(summary["flows"][0]["timeouts"])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results", type=Path)
    ap.add_argument("cache", type=Path)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args(argv)
    rows = json.loads(args.results.read_text())["cases"]
    spurious: dict[str, list[int]] = {k: [] for k in VARIANTS}
    for row in rows:
        c = row["case"]
        case = Case(
            rtt_ms=c["rtt_ms"],
            loss=c["loss"],
            cc=c["cc"],
            rate_bps=c["rate_bps"],
            queue=c["queue"],
            duration_s=c["duration_s"],
            warmup_s=c["warmup_s"],
        )
        seeds = [1000 + k for k in range(args.runs)]
        lates = [
            json.loads(cache_file(args.cache, case, s).read_text())["extra"].get(
                "late_releases", []
            )
            for s in seeds
        ]
        linux_rtos = row["linux"]["rtos"]
        cells = []
        for name, extra in VARIANTS.items():
            runs = zip(seeds, lates, strict=True)
            per_run = sum(timeouts(case, s, extra, late) for s, late in runs) / len(seeds)
            if per_run > 0.5 and linux_rtos == 0:
                spurious[name].append(c["index"])
            cells.append(f"{name} {per_run:.1f}")
        print(f"{c['index']:>3} {c['spec']}: Linux {linux_rtos:.1f} | " + " | ".join(cells))
    for name, idx in spurious.items():
        print(f"{name}: {len(idx)} cases with tcplab RTOs where Linux has none {idx}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
