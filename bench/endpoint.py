"""Benchmark of tcplab's own TCP as a real host in ``tcplab emu --endpoint``. Run as root.

    python bench/endpoint.py [--only clocks] [--json]

- clocks ("one TCP, two clocks"): the same tcplab sender (the scenario's flow: NewReno, SACK,
  timestamps, Linux's RTO profile, a bulk transfer of 4 MB) over the same lossless path
  (20 Mbit/s, 10 ms each way, a 1000-packet queue, cwnd capped at 400 KB so that slow start
  overflows nothing),
  once in simulated time (``tcplab run``: tcplab's receiver) and once in real time (the
  emulator's tcplab server endpoint, a Linux receiver in the client namespace reading
  everything). Goodput (bytes acknowledged / time from the connection's open to the last
  byte acknowledged), RTO and retransmission counts side by side.

(The 1 Gbit/s ceiling of a tcplab-endpoint transfer is ``bench/emu.py --only endpoint``.)

Each line states the machine load (``os.getloadavg``) it was measured under.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

import tcplab
from tcplab.real import emu, transfer
from tcplab.scenario.parse import parse_scenario


def _scenario(rate: str, delay: str, queue: int, size: int, max_cwnd: str) -> dict[str, Any]:
    return {
        "name": "bench-endpoint",
        "duration": "60s",
        "path": [{"kind": "link", "rate": rate, "delay": delay, "queue": queue}],
        "flows": [
            {
                "cc": "newreno",
                "rto": "linux",
                "app": "bulk",
                "bytes": size,
                # Below the path's BDP plus the queue: slow start cannot fill both, whatever
                # the receiver's ACK pattern (Linux ACKs more often than tcplab's receiver).
                "max_cwnd": max_cwnd,
            }
        ],
    }


def _emulate(data: dict[str, Any], size: int, time_limit: float) -> dict[str, Any]:
    """The tcplab server endpoint sends ``size`` bytes to a Linux reader; the summary."""
    r = transfer.endpoint_download(
        parse_scenario(data, "<bench>").to_config(), size, time_limit_s=time_limit
    )
    if not r["sha256_ok"]:
        raise SystemExit(f"endpoint transfer failed: {r['bytes']} of {size} bytes, or not exact")
    return r["summary"]


def clocks() -> dict[str, Any]:
    size = 4_000_000
    data = _scenario("20Mbps", "10ms", 1000, size, "400KB")
    sim = tcplab.run(parse_scenario(data, "<bench>")).summary["flows"][0]
    load = os.getloadavg()
    real = _emulate(data, size, 120)
    ep = real["endpoint"]["flows"][0]
    return {
        "bench": "clocks",
        "load": load,
        "sim_goodput_mbps": sim["goodput_bps"] / 1e6,
        "real_goodput_mbps": ep["goodput_bps"] / 1e6,
        "ratio": ep["goodput_bps"] / sim["goodput_bps"],
        "sim_timeouts": sim["timeouts"],
        "real_timeouts": ep["timeouts"],
        "sim_retransmitted": sim["retransmitted_segments"],
        "real_retransmitted": ep["retransmitted_segments"],
        "violations": real["violations"],
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", choices=["clocks"])
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    reason = emu.available()
    if reason:
        print(reason, file=sys.stderr)
        return 1
    runs = [clocks]
    if args.only:
        runs = [r for r in runs if r.__name__ == args.only]
    for r in runs:
        row = r()
        print(json.dumps(row) if args.json else ", ".join(f"{k} {v}" for k, v in row.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
