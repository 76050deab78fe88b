#!/usr/bin/env python3
"""What a managed queue costs per packet (docs/aqm.md, Cost).

The same workloads run over a 100 Mbit/s, 10 ms link whose data direction is DropTail (the
fast path, no ``aqm``), ``aqm = "droptail"`` (the managed transmitter with a FIFO),
``"fq_codel"``, ``"codel"``, ``"pie"`` and ``"red"``; CPU time of the run (``time.process_time``
around the core's ``run``, summary only: no time series or event log) divided by the packets
the links transmitted (both directions), best of ``--repeat``. CPU time, not wall time: on a
shared machine wall time mostly measures the other processes. The load average is printed
beside the numbers.

``--instructions`` counts instructions instead, which no other process on the machine changes:
each configuration runs in a child process under ``valgrind --tool=callgrind`` twice, for
``--seconds`` and for a fifth of it, and the difference in instructions over the difference in
packets is the cost per packet (Python's start-up, the scenario's set-up and the queue's
allocation cancel out).

Workloads: one CUBIC bulk flow (Linux stack), and eight CUBIC flows with a 1 Mbit/s UDP
stream (eight flow queues and a sparse one for fq_codel). Use the release build the project
ships (``pip install --no-deps -e .`` without the faster-profile overrides). Prints a table
and a final JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any

DISCIPLINES = (None, "droptail", "fq_codel", "codel", "pie", "red")


def scenario(aqm: str | None, flows: int, seconds: int) -> dict[str, Any]:
    link: dict[str, Any] = {"name": "bottleneck", "rate": "100Mbps", "delay": "10ms"}
    link["queue"] = 1000
    if aqm is not None:
        link["down"] = {"aqm": aqm}
    data: dict[str, Any] = {
        "name": f"aqm-cost-{aqm}",
        "duration": f"{seconds}s",
        "path": [link],
        "flows": [{"name": "bulk", "count": flows, "stack": "linux"}],
    }
    if flows > 1:
        data["cross"] = [{"kind": "udp_cbr", "name": "udp", "rate": "1Mbps"}]
    return data


def cost(aqm: str | None, flows: int, seconds: int, repeat: int) -> dict[str, Any]:
    from tcplab import _core
    from tcplab.scenario.parse import parse_scenario

    config = parse_scenario(scenario(aqm, flows, seconds), "aqm_cost").config
    text = json.dumps({**config, "record": {"timeseries": False, "events": False}})
    best = float("inf")
    packets = 0
    for _ in range(repeat):
        t0 = time.process_time()
        raw = _core.run(text, None)
        cpu = time.process_time() - t0
        summary = json.loads(raw["summary"])
        packets = sum(int(r["tx_packets"]) for r in summary["links"])
        best = min(best, cpu)
    return {
        "aqm": aqm or "none (fast path)",
        "flows": flows,
        "packets": packets,
        "cpu_s": best,
        "ns_per_packet": best / packets * 1e9,
    }


def _instructions(aqm: str | None, flows: int, seconds: int) -> tuple[int, int]:
    """Instructions of a child process that runs the configuration once, and its packets."""
    import re
    import subprocess
    import tempfile

    from tcplab.scenario.parse import parse_scenario

    config = parse_scenario(scenario(aqm, flows, seconds), "aqm_cost").config
    text = json.dumps({**config, "record": {"timeseries": False, "events": False}})
    child = (
        "import json, sys; from tcplab import _core; "
        "s = json.loads(_core.run(sys.stdin.read(), None)['summary']); "
        "print(sum(int(r['tx_packets']) for r in s['links']))"
    )
    with tempfile.TemporaryDirectory() as tmp:
        out = subprocess.run(
            [
                "valgrind",
                "--tool=callgrind",
                f"--callgrind-out-file={tmp}/cg.out",
                sys.executable,
                "-c",
                child,
            ],
            input=text,
            capture_output=True,
            text=True,
            check=True,
        )
    found = re.search(r"Collected : (\d+)", out.stderr)
    if found is None:
        raise RuntimeError(f"no instruction count from callgrind: {out.stderr[-500:]}")
    return int(found.group(1)), int(out.stdout.strip())


def instructions(aqm: str | None, flows: int, seconds: int) -> dict[str, Any]:
    """Instructions per packet: the difference of a run of ``seconds`` and one of a fifth."""
    short = max(1, seconds // 5)
    i_long, p_long = _instructions(aqm, flows, seconds)
    i_short, p_short = _instructions(aqm, flows, short)
    return {
        "aqm": aqm or "none (fast path)",
        "flows": flows,
        "packets": p_long - p_short,
        "instructions": i_long - i_short,
        "instructions_per_packet": (i_long - i_short) / (p_long - p_short),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=int, default=60, help="simulated seconds per run")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument(
        "--instructions",
        action="store_true",
        help="count instructions per packet under callgrind (load-independent) instead of CPU time",
    )
    a = ap.parse_args()
    load = os.getloadavg()[0]
    rows = []
    for flows in (1, 8):
        for aqm in DISCIPLINES:
            if a.instructions:
                rows.append(instructions(aqm, flows, a.seconds))
            else:
                rows.append(cost(aqm, flows, a.seconds, a.repeat))
    key = "instructions_per_packet" if a.instructions else "ns_per_packet"
    unit = "instr/packet" if a.instructions else "ns/packet"
    print(f"{'workload':<10}{'queue':<20}{'packets':>10}{unit:>13}{'vs DropTail':>13}")
    for r in rows:
        base = next(b for b in rows if b["flows"] == r["flows"] and b["aqm"].startswith("none"))
        r["ratio"] = r[key] / base[key]
        print(
            f"{str(r['flows']) + ' flows':<10}{r['aqm']:<20}{r['packets']:>10}"
            f"{r[key]:>13.0f}{r['ratio']:>13.2f}"
        )
    print(f"(load average {load:.2f} at the start, {os.getloadavg()[0]:.2f} at the end)")
    print(json.dumps({"load_average_1min": load, "rows": rows}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
