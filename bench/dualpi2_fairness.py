#!/usr/bin/env python3
"""Rate fairness between flows sharing a DualPI2 queue (docs/aqm.md, DualPI2).

Two bulk flows, 100 ms apart, share one link whose both directions run ``aqm = "dualpi2"``
(RFC 9332; Linux's defaults unless ``--aqm`` adds keys), ``queue = 1000``. Each flow is one of

- ``cubic``: Linux's stack (CUBIC, HyStart, PRR, RACK) with ``ecn = true``: ECT(0), the
  C-queue;
- ``reno``: the same with ``cc = "reno"``;
- ``dctcp``: Linux's stack with ``cc = "dctcp"``: ECT(1), the L-queue.

For each pair named with ``--pair`` (default: cubic+dctcp, reno+dctcp, dctcp+dctcp,
cubic+cubic) it prints both goodputs over the whole run and after ``--skip`` seconds, their
ratio (first over second), each flow's mean cwnd and SRTT after ``--skip``, the data queue's
sojourn percentiles, marks and drops, and each flow's retransmissions. Simulation only
(deterministic; no machine load in the numbers). A measurement, not a check: nothing is
asserted. Prints a table and a final JSON line.

    python bench/dualpi2_fairness.py --rate 100Mbps --delay 10ms --seconds 60
    python bench/dualpi2_fairness.py --rate 10Mbps --delay 50ms --pair dctcp+dctcp \\
        --aqm '{"min_qlen_step": 2}'
"""

from __future__ import annotations

import argparse
import json
from typing import Any

KINDS: dict[str, dict[str, Any]] = {
    "cubic": {"stack": "linux", "cc": "cubic", "ecn": True},
    "reno": {"stack": "linux", "cc": "reno", "ecn": True, "hystart": False},
    "dctcp": {"stack": "linux", "cc": "dctcp", "hystart": False, "cubic": "rfc9438"},
}
PAIRS = ("cubic+dctcp", "reno+dctcp", "dctcp+dctcp", "cubic+cubic")


def scenario(pair: str, rate: str, delay: str, seconds: int, aqm: dict[str, Any]) -> dict:
    flows = []
    for i, kind in enumerate(pair.split("+")):
        flows.append({"name": f"{kind}{i}", "start": f"{100 * i}ms", **KINDS[kind]})
    return {
        "name": f"dualpi2-{pair}",
        "duration": f"{seconds}s",
        "path": [
            {
                "name": "bottleneck",
                "rate": rate,
                "delay": delay,
                "queue": 1000,
                "aqm": {"kind": "dualpi2", **aqm},
            }
        ],
        "flows": flows,
    }


def run(pair: str, rate: str, delay: str, seconds: int, skip: int, aqm: dict) -> dict[str, Any]:
    from tcplab import _core
    from tcplab.scenario.parse import parse_scenario

    config = parse_scenario(scenario(pair, rate, delay, seconds, aqm), "dualpi2_fairness").config
    text = json.dumps({**config, "record": {"timeseries": True, "events": False}})
    raw = _core.run(text, None)
    summary = json.loads(raw["summary"])
    flows = summary["flows"]
    link = summary["links"][0]
    late, cwnd, srtt = _late_series(raw, len(flows), skip, seconds)
    g = [float(f["goodput_bps"]) / 1e6 for f in flows]
    return {
        "pair": pair,
        "goodput_mbps": g,
        "ratio": g[0] / g[1] if g[1] else float("nan"),
        "goodput_after_skip_mbps": late,
        "ratio_after_skip": late[0] / late[1] if late and late[1] else None,
        "mean_cwnd_segments": cwnd,
        "mean_srtt_ms": srtt,
        "sojourn_p50_ms": link["sojourn_p50_ms"],
        "sojourn_p99_ms": link["sojourn_p99_ms"],
        "ecn_marks": link["ecn_marks"],
        "drops": int(link["drops_aqm"]) + int(link["drops_queue"]),
        "retransmitted": [f["retransmitted_segments"] for f in flows],
    }


def _late_series(
    raw: dict, n: int, skip: int, seconds: int
) -> tuple[list[float], list[float], list[float]]:
    """Each flow's goodput (Mbit/s), mean cwnd (1448-byte segments) and mean SRTT (ms) from
    ``skip`` s to the end, from the flow time series (100 ms samples)."""
    from tcplab.results import TIMESERIES_COLUMNS, decode_columns

    if skip <= 0 or skip >= seconds:
        return [], [], []
    t = decode_columns(raw["timeseries"], "timeseries", TIMESERIES_COLUMNS)
    goodput, cwnd, srtt = [], [], []
    for i in range(n):
        mine = t["flow"] == i
        ts, d = t["t_ns"][mine], t["delivered"][mine]
        before = int(d[ts <= skip * 1e9].max(initial=0))
        goodput.append((int(d.max(initial=0)) - before) * 8 / (seconds - skip) / 1e6)
        late = ts > skip * 1e9
        cwnd.append(float(t["cwnd"][mine][late].mean()) / 1448)
        srtt.append(float(t["srtt_ns"][mine][late].mean()) / 1e6)
    return goodput, cwnd, srtt


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rate", default="100Mbps")
    ap.add_argument("--delay", default="10ms", help="one way")
    ap.add_argument("--seconds", type=int, default=60)
    ap.add_argument("--skip", type=int, default=10, help="goodput also from this second on")
    ap.add_argument("--pair", action="append", help=f"default: {', '.join(PAIRS)}")
    ap.add_argument("--aqm", default="{}", help="extra dualpi2 keys, as JSON")
    args = ap.parse_args()
    aqm = json.loads(args.aqm)
    rows = [run(p, args.rate, args.delay, args.seconds, args.skip, aqm) for p in args.pair or PAIRS]
    print(f"dualpi2 {args.rate}, {args.delay} one way, {args.seconds} s, aqm keys {aqm}")
    print(
        "| pair | goodput Mbit/s | ratio | after skip | ratio | cwnd (segments) | SRTT ms "
        "| p50/p99 ms | marks | drops |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        g = " / ".join(f"{x:.1f}" for x in r["goodput_mbps"])
        late = " / ".join(f"{x:.1f}" for x in r["goodput_after_skip_mbps"]) or "-"
        rs = f"{r['ratio_after_skip']:.2f}" if r["ratio_after_skip"] is not None else "-"
        print(
            f"| {r['pair']} | {g} | {r['ratio']:.2f} | {late} | {rs} | "
            f"{' / '.join(f'{x:.0f}' for x in r['mean_cwnd_segments'])} | "
            f"{' / '.join(f'{x:.1f}' for x in r['mean_srtt_ms'])} | "
            f"{r['sojourn_p50_ms']:.2f}/{r['sojourn_p99_ms']:.2f} | {r['ecn_marks']} | "
            f"{r['drops']} |"
        )
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
