"""Benchmark of the real-time emulator (``tcplab emu``): release lateness, rate accuracy and
the highest rate Linux TCP sustains through it. Run as root; needs iperf3.

    python bench/emu.py [--quick] [--json] [--only lateness|rate|ceiling] [--no-realtime]
        [--pin-cpu]

- lateness: Linux TCP (iperf3 -R: the server sends, down the path) through a link of 10 and
  100 Mbit/s, RTT 40 ms (20 ms each way), queue 100 packets, for 10 s (``--quick``: 4 s);
  the emulator's release lateness (µs) and iperf3's goodput.
- rate: UDP offered at 12 Mbit/s to a 10 Mbit/s link: the IP bytes the emulator released
  toward the client over the real time between its first and last packet, against the link
  rate (the link runs saturated from the first packet on).
- ceiling: Linux TCP through a lossless 1 Gbit/s link, RTT 10 ms, queue 1000 packets:
  goodput against the link rate.

Each line states the machine load (``uptime``) it was measured under and the emulator
thread's scheduling (``--no-realtime``: an ordinary thread, for comparison).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from typing import Any

from tcplab import emu
from tcplab.scenario import parse_scenario


def _config(rate: str, delay: str, queue: int) -> dict[str, Any]:
    data = {
        "name": "bench-emu",
        "duration": "1s",
        "path": [{"kind": "link", "rate": rate, "delay": delay, "queue": queue}],
        "flows": [{}],
    }
    return parse_scenario(data, "<bench>").to_config()


def _load() -> str:
    return os.getloadavg().__repr__()


#: SCHED_FIFO priority of the emulator thread (``--no-realtime``: 0).
RT_PRIORITY = 10
#: Pin the emulator thread to its CPU (``--pin-cpu``).
PIN_CPU = False


def _iperf(config: dict[str, Any], client_args: list[str], seconds: float) -> tuple[dict, dict]:
    """iperf3 server in the server namespace, client (``-R``) in the client namespace."""
    with emu.Emulation(config, rt_priority=RT_PRIORITY, pin_cpu=PIN_CPU) as e:
        e.exec("server", ["iperf3", "-s", "-1"], stdout=subprocess.DEVNULL)
        time.sleep(0.5)
        client = e.exec(
            "client",
            ["iperf3", "-c", emu.SERVER_ADDR, "-R", "-J", "-t", str(seconds), *client_args],
            stdout=subprocess.PIPE,
        )
        out, _ = client.communicate(timeout=seconds + 30)
        summary = e.stop()
    return json.loads(out), summary


def lateness(rate_mbps: int, seconds: float) -> dict[str, Any]:
    report, s = _iperf(_config(f"{rate_mbps}Mbps", "20ms", 100), [], seconds)
    goodput = report["end"]["sum_received"]["bits_per_second"]
    return {
        "bench": f"lateness {rate_mbps} Mbit/s, RTT 40 ms, Linux TCP",
        "lateness_us": s["emulator"]["lateness_us"],
        "realtime": s["emulator"]["realtime"],
        "scheduling": s["emulator"]["scheduling"],
        "goodput_mbps": goodput / 1e6,
        "load": _load(),
    }


def rate(seconds: float) -> dict[str, Any]:
    _, s = _iperf(_config("10Mbps", "20ms", 100), ["-u", "-b", "12M", "-l", "1400"], seconds)
    m = s["emulator"]
    series = m["out_bytes_series"]["fwd"]
    # Full bins from 1 s after the first busy bin to 1 s before the last one: the
    # link is saturated throughout.
    busy = [i for i, b in enumerate(series) if b > 0]
    skip = round(1.0 / m["out_bin_s"])
    window = series[busy[0] + skip : busy[-1] - skip]
    span = len(window) * m["out_bin_s"]
    measured = 8 * sum(window) / span
    return {
        "bench": "rate accuracy, 10 Mbit/s link, UDP 12 Mbit/s offered",
        "ip_rate_bps": measured,
        "error_pct": 100 * (measured / 10e6 - 1),
        "span_s": span,
        "load": _load(),
    }


def ceiling(seconds: float) -> dict[str, Any]:
    report, s = _iperf(_config("1Gbps", "5ms", 1000), [], seconds)
    goodput = report["end"]["sum_received"]["bits_per_second"]
    return {
        "bench": "ceiling: Linux TCP, 1 Gbit/s link, RTT 10 ms",
        "goodput_mbps": goodput / 1e6,
        "of_link_rate_pct": goodput / 1e9 * 100,
        "lateness_us": s["emulator"]["lateness_us"],
        "scheduling": s["emulator"]["scheduling"],
        "load": _load(),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--only", choices=["lateness", "rate", "ceiling"])
    ap.add_argument("--no-realtime", action="store_true", help="the emulator as an ordinary thread")
    ap.add_argument("--pin-cpu", action="store_true", help="pin the emulator thread to its CPU")
    args = ap.parse_args()
    global RT_PRIORITY, PIN_CPU
    RT_PRIORITY = 0 if args.no_realtime else 10
    PIN_CPU = args.pin_cpu
    reason = emu.available()
    if reason:
        print(f"bench/emu.py: {reason}", file=sys.stderr)
        return 1
    t = 4.0 if args.quick else 10.0
    runs = []
    if args.only in (None, "lateness"):
        runs += [lambda: lateness(10, t), lambda: lateness(100, t)]
    if args.only in (None, "rate"):
        runs.append(lambda: rate(t))
    if args.only in (None, "ceiling"):
        runs.append(lambda: ceiling(t))
    for run in runs:
        row = run()
        print(json.dumps(row) if args.json else _fmt(row), flush=True)
    return 0


def _fmt(row: dict[str, Any]) -> str:
    parts = [row["bench"] + ":"]
    late = row.get("lateness_us")
    if late:
        parts.append(
            f"lateness µs mean {late['mean']:.1f} p50 {late['p50']:.0f} p99 {late['p99']:.0f} "
            f"p99.9 {late['p999']:.0f} max {late['max']:.0f} ({late['packets']} packets)"
        )
    for key in ("goodput_mbps", "of_link_rate_pct", "ip_rate_bps", "error_pct"):
        if key in row:
            parts.append(f"{key} {row[key]:.4g}")
    sched = row.get("scheduling")
    if sched:
        parts.append(
            f"{sched['policy']} thread CPU {sched['thread']['cpu_s']:.2f} s "
            f"(spin {sched['spin_s']:.2f} s)"
        )
    parts.append(f"load {row['load']}")
    return " ".join(parts)


if __name__ == "__main__":
    sys.exit(main())
