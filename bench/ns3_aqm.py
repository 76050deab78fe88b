"""tcplab's queue disciplines and ns-3's queue discs against real Linux CUBIC through tcplab's
emulator running the same discipline: each simulator's error against the same Linux runs.

    python bench/ns3_aqm.py --linux-cache DIR [--runs 5] [--case SPEC ...] [--ns3 wheel|PATH]
                            [--ns3-cache DIR] [--out FILE.json]

The Linux runs are those ``tcplab validate linux --linux-cache DIR --case ...,aqm=...,ecn=...``
stored (emulator seeds 1000, 1001, ...); a case missing from the cache is an error (run it with
``validate linux`` first, under the real-time lock). tcplab's side is exactly the validation's
(``stack = "linux"``, paired seeds, the Linux runs' late releases replayed as stalls). ns-3's
side is ``bench/ns3/build/p2p_bulk --aqm=... [--ecn=1]`` (the PyPI ``ns3`` wheel, ns-3 3.44;
built with ``bench/ns3/build.sh`` if missing): ``CoDelQueueDisc``, ``FqCoDelQueueDisc``,
``PieQueueDisc`` or ``RedQueueDisc`` of ``queue`` packets on the data direction with Linux's
defaults where ns-3 has the parameter (docs/aqm.md lists them), RED's thresholds and averaging
weight derived from the queue limit as iproute2's ``tc`` derives them (:func:`red_parameters`),
``UseEcn`` on both TCPs and the disc with ``ecn=1``; the TCP settings are those of
``bench/ns3_bbr.py`` (MSS 1448, IW10, SACK, timestamps, 200 ms minimum RTO, delayed ACK every 2
segments or 40 ms, PRR) with ``TcpCubic``. ns-3 seeds 1..runs.

Compared, as the validation's managed-queue targets: goodput from the warm-up on, the data
queue's median and 99th-percentile sojourn time (whole run), its drops (limit and discipline)
and its ECN marks; means over runs.

The defaults are the eight cases of ``docs/aqm.md``: CoDel, FQ-CoDel, PIE and RED, each once
without and once with ECN, at 10 and 20 Mbit/s (each discipline sees both rates and each rate
both ECN settings), CUBIC, RTT 40 ms, a 1000-packet limit, 15 s runs.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import numpy as np

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

import ns3_compare  # noqa: E402
from ns3_bbr import testbed_args  # noqa: E402

_BASE = "cc=cubic,rtt=40ms,queue=1000,duration=15s"
#: The eight cases of docs/aqm.md.
CASES = [
    f"{_BASE},rate=10Mbps,aqm=fq_codel,ecn=0",
    f"{_BASE},rate=20Mbps,aqm=fq_codel,ecn=1",
    f"{_BASE},rate=10Mbps,aqm=codel,ecn=1",
    f"{_BASE},rate=20Mbps,aqm=codel,ecn=0",
    f"{_BASE},rate=10Mbps,aqm=pie,ecn=0",
    f"{_BASE},rate=20Mbps,aqm=pie,ecn=1",
    f"{_BASE},rate=10Mbps,aqm=red,ecn=1",
    f"{_BASE},rate=20Mbps,aqm=red,ecn=0",
]

#: The compared metrics and their tolerance (relative; delays also within 1 ms).
METRICS = {
    "goodput_bps": 0.10,
    "sojourn_p50_ms": 0.20,
    "sojourn_p99_ms": 0.20,
    "drops": 0.30,
    "ecn_marks": 0.30,
}
#: RED's defaults in iproute2's q_red.c: average packet 1000 bytes, probability 0.02.
RED_AVPKT, RED_MAX_P = 1000, 0.02


def red_parameters(queue_packets: int) -> tuple[int, int, float]:
    """RED's (min, max) thresholds in bytes and averaging weight for a limit of
    ``queue_packets`` packets, as tcplab's ``red.rs`` derives them from iproute2's q_red.c:
    limit = packets * avpkt, max = limit / 4, min = max / 3, burst = (2 min + max) / (3
    avpkt), and tc_red_eval_ewma()'s largest weight 2^-Wlog whose average after ``burst``
    back-to-back packets stays below min."""
    limit = queue_packets * RED_AVPKT
    qmax = limit // 4
    qmin = qmax // 3
    burst = (2 * qmin + qmax) // (3 * RED_AVPKT)
    a = burst + 1 - qmin / RED_AVPKT
    w = 0.5
    for _ in range(1, 32):
        if a <= (1 - (1 - w) ** burst) / w:
            return qmin, qmax, w
        w /= 2
    raise ValueError(f"no RED weight for a {queue_packets}-packet limit")


def ns3_run(binary: Path, case: Any, seed: int, cache: Path | None) -> dict[str, Any]:
    """One ns-3 run of ``case`` (a validation ``Case`` with an ``aqm``)."""
    path = None
    if cache is not None:
        name = f"{case.aqm}_e{int(case.ecn)}_r{case.rate_bps}_d{case.delay_ns}_q{case.queue}"
        path = cache / f"{name}_t{case.duration_s:g}_w{case.warmup_s:g}_s{seed}.json"
    cmd = [str(binary), *testbed_args(case, seed), f"--aqm={case.aqm}", f"--ecn={int(case.ecn)}"]
    if case.aqm == "red":
        qmin, qmax, w = red_parameters(case.queue)
        cmd += [
            f"--redMin={qmin}",
            f"--redMax={qmax}",
            f"--redQw={w!r}",
            f"--redMaxP={RED_MAX_P}",
            f"--redAvpkt={RED_AVPKT}",
        ]
    res = ns3_compare.cached_run(cmd, path)
    assert res is not None  # no timeout: every run finishes
    return res


def _met(metric: str, sim: float, linux: float) -> bool:
    if metric.startswith("sojourn") and abs(sim - linux) <= 1.0:
        return True
    return abs(ns3_compare.err(sim, linux)) <= METRICS[metric]


def compare_case(binary: Path, spec: str, a: argparse.Namespace) -> dict[str, Any]:
    """One case: the Linux runs from ``a.linux_cache``, tcplab's paired runs and ``a.runs``
    ns-3 runs."""
    from tcplab.real.validate.run import parse_case

    if parse_case(spec, quick=False).aqm is None:
        raise SystemExit(f"{spec}: needs an aqm")
    case, row = ns3_compare.linux_and_tcplab(spec, a.runs, a.linux_cache)
    ns = [ns3_run(binary, case, seed, a.ns3_cache) for seed in range(1, a.runs + 1)]

    def side(who: str) -> dict[str, float]:
        return {
            "goodput_bps": row[f"{who}_goodput"][0],
            "sojourn_p50_ms": row[f"{who}_qdelay_p50_ms"],
            "sojourn_p99_ms": row[f"{who}_qdelay_p99_ms"],
            "drops": row[f"{who}_drops"],
            "ecn_marks": row[f"{who}_marks"],
        }

    out: dict[str, Any] = {
        "case": spec,
        "linux": side("linux"),
        "tcplab": side("tcplab"),
        "ns3": {
            "goodput_bps": float(np.mean([r["goodput_after_warmup_bps"] for r in ns])),
            "sojourn_p50_ms": float(np.mean([r["sojourn_p50_ms"] for r in ns])),
            "sojourn_p99_ms": float(np.mean([r["sojourn_p99_ms"] for r in ns])),
            "drops": float(np.mean([r["aqm_drops"] + r["queue_drops"] for r in ns])),
            "ecn_marks": float(np.mean([r["ecn_marks"] for r in ns])),
            "runs": ns,
        },
    }
    for sim in ("tcplab", "ns3"):
        out[sim]["err"] = {k: ns3_compare.err(out[sim][k], out["linux"][k]) for k in METRICS}
        out[sim]["met"] = {k: _met(k, out[sim][k], out["linux"][k]) for k in METRICS}
        if not case.ecn:
            out[sim]["met"]["ecn_marks"] = None  # nothing marks without ECN
    return out


def table(rows: list[dict[str, Any]]) -> str:
    """The Markdown table: each metric's Linux value and tcplab's and ns-3's error (✓ within
    the target's tolerance)."""
    heads = {
        "goodput_bps": "goodput Mbit/s",
        "sojourn_p50_ms": "sojourn p50 ms",
        "sojourn_p99_ms": "sojourn p99 ms",
        "drops": "drops",
        "ecn_marks": "marks",
    }
    lines = [
        "| case | " + " | ".join(f"{h} Linux | tcplab | ns-3" for h in heads.values()) + " |",
        "|---|" + "---|---|---|" * len(heads),
    ]

    def cell(r: dict[str, Any], sim: str, k: str) -> str:
        e, ok = r[sim]["err"][k], r[sim]["met"][k]
        if ok is None:
            return "n/a"
        text = f"{r[sim][k]:.0f} (Linux 0)" if r["linux"][k] == 0 else f"{e * 100:+.0f} %"
        return text + (" ✓" if ok else "")

    for r in rows:
        spec = r["case"].replace(f"{_BASE},", "").replace("Mbps", "M")
        cells = []
        for k in heads:
            lv = r["linux"][k] / 1e6 if k == "goodput_bps" else r["linux"][k]
            cells.append(f"{lv:.2f} | {cell(r, 'tcplab', k)} | {cell(r, 'ns3', k)}")
        lines.append(f"| {spec} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    rows = ns3_compare.main(__doc__.splitlines()[0], CASES, compare_case, argv)
    print(table(rows))
    for sim in ("tcplab", "ns3"):
        met = ", ".join(
            f"{k} {sum(bool(v) for v in vals)}/{len(vals)}"
            for k in METRICS
            if (vals := [r[sim]["met"][k] for r in rows if r[sim]["met"][k] is not None])
        )
        print(f"{sim} within the targets: {met}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
