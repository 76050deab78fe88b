#!/usr/bin/env python3
"""CUBIC over measured cellular traces (docs/traces.md, the goodput table).

For every pair ``NAME.down``/``NAME.up`` in ``--dir`` (default: the measured Mahimahi traces'
directory, docs/traces.md "Where files are read from"; skipped with a note when absent): one bulk
flow with ``stack = "linux"`` (CUBIC and Linux's defaults) for the whole length of the data
direction's trace, downloading (data over ``.down``, ACKs over ``.up``) and uploading (the reverse),
20 ms one way (``mm-delay 20``), a DropTail queue of ``--queue`` packets. Prints a Markdown table:
the trace's mean rate (1500-byte datagrams), the goodput and its share of the mean, the
retransmitted segments and timeouts, and a final JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from tcplab.analyze.tracefile import mahimahi_dir


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dir", type=Path, default=mahimahi_dir())
    ap.add_argument("--queue", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    if a.dir is None:
        print(
            "note: no trace directory: set TCPLAB_TRACE_DIR or pass --dir (docs/traces.md); "
            "nothing to run"
        )
        return 0
    if not a.dir.is_dir():
        print(f"note: {a.dir} is absent; nothing to run")
        return 0
    from tcplab.analyze import tracefile
    from tcplab.campaign.single import run_config
    from tcplab.scenario.parse import parse_scenario

    rows = []
    for down in sorted(a.dir.glob("*.down")):
        up = down.with_suffix(".up")
        if not up.exists():
            continue
        for label, data, acks in (("down", down, up), ("up", up, down)):
            tr = tracefile.load(data)
            secs = tr.duration_ns / 1e9
            scenario = {
                "name": f"{down.stem}-{label}",
                "duration": f"{tr.duration_ns}ns",
                "seed": a.seed,
                "path": [
                    {
                        "kind": "trace",
                        "down": str(data),
                        "up": str(acks),
                        "delay": "20ms",
                        "queue": a.queue,
                    }
                ],
                "flows": [{"stack": "linux", "bytes": "unlimited"}],
            }
            summary = run_config(parse_scenario(scenario).to_config())
            flow = summary["flows"][0]
            mean = tracefile.stats(tr)["mean_mbps"]
            goodput = flow["bytes_delivered"] * 8 / secs / 1e6
            rows.append(
                {
                    "trace": down.stem,
                    "data over": label,
                    "seconds": secs,
                    "mean_mbps": mean,
                    "goodput_mbps": goodput,
                    "share": goodput / mean,
                    "retransmitted_segments": flow["retransmitted_segments"],
                    "timeouts": flow["timeouts"],
                }
            )
    print(
        "| trace | data over | length (s) | mean (Mbit/s) | CUBIC goodput (Mbit/s) | share "
        "| retransmitted | timeouts |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['trace']} | {r['data over']} | {r['seconds']:.0f} | {r['mean_mbps']:.2f} | "
            f"{r['goodput_mbps']:.2f} | {r['share']:.0%} | {r['retransmitted_segments']} | "
            f"{r['timeouts']} |"
        )
    print(json.dumps({"queue": a.queue, "load_average_1min": os.getloadavg()[0], "rows": rows}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
