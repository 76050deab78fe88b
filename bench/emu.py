"""Benchmark of the real-time emulator (``tcplab emu``): release lateness, rate accuracy and
the highest rate Linux TCP sustains through it. Run as root; needs iperf3.

    python bench/emu.py [--quick] [--json] [--only lateness|rate|ceiling|endpoint|floor]
        [--no-realtime] [--pin-cpu] [--spin-share F]

- lateness: Linux TCP (iperf3 -R: the server sends, down the path) through a link of 10 and
  100 Mbit/s, RTT 40 ms (20 ms each way), queue 100 packets, for 10 s (``--quick``: 4 s);
  the emulator's release lateness (µs) and iperf3's goodput.
- rate: UDP offered at 12 Mbit/s to a 10 Mbit/s link: the IP bytes the emulator released
  toward the client over the real time between its first and last packet, against the link
  rate (the link runs saturated from the first packet on).
- ceiling: Linux TCP through a lossless 1 Gbit/s link, RTT 10 ms, queue 1000 packets:
  goodput against the link rate.
- endpoint: the same link carrying tcplab's own TCP as a real host (``--endpoint
  server=tcplab``: its bulk source, CUBIC, paced, cwnd capped at 2 MB) sending 200 MB to a
  Linux reader: goodput against the link rate, checked byte-exact.
- floor: what the machine itself allows, with no emulator and no traffic: cyclictest (package
  ``rt-tests``; skipped with a note when it is missing) with one measuring thread per CPU at the
  emulator's ``SCHED_FIFO`` priority, 100 µs interval, memory locked, ``/dev/cpu_dma_latency``
  held at 0 — the wake-up latency a thread that sleeps until a deadline sees; and a spin probe:
  one ``SCHED_FIFO`` process per CPU, pinned, reading the clock in a loop that never sleeps
  (0.8 s of every second, under the kernel's real-time throttle), recording every gap over
  200 µs — time the CPU was taken from a thread that never gave it up (interrupts, softirq,
  higher-priority kernel threads, the hypervisor). Gaps that overlap on every CPU at once
  stopped the whole machine. The emulator's release lateness cannot go below these.

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

from tcplab.real import emu
from tcplab.scenario.parse import parse_scenario


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
#: The emulator's clock-wait budget (``--spin-share``).
SPIN_SHARE = 0.5


def _iperf(config: dict[str, Any], client_args: list[str], seconds: float) -> tuple[dict, dict]:
    """iperf3 server in the server namespace, client (``-R``) in the client namespace."""
    with emu.Emulation(
        config, rt_priority=RT_PRIORITY, pin_cpu=PIN_CPU, spin_share=SPIN_SHARE
    ) as e:
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
        "stalls": s["emulator"].get("stalls"),
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


#: The tcplab endpoint's transfer in the ``endpoint`` row (bytes).
ENDPOINT_BYTES = 200_000_000


def endpoint_ceiling() -> dict[str, Any]:
    """tcplab's own TCP (the server endpoint's bulk source, CUBIC, paced as Linux paces behind
    ``fq``, cwnd capped at 2 MB) to a Linux reader through the same lossless 1 Gbit/s link:
    goodput against the link rate, byte-exact."""
    from tcplab.real.transfer import endpoint_download

    data = {
        "name": "bench-emu-endpoint",
        "duration": "60s",
        "path": [{"kind": "link", "rate": "1Gbps", "delay": "5ms", "queue": 1000}],
        # cwnd capped at the BDP (1.25 MB) plus half the queue (0.75 MB): a loss-based sender
        # left uncapped fills any drop-tail queue. Paced: unpaced, each ACK releases its
        # segments at once, and the Linux receiver's stretch ACKs make those bursts overflow
        # the 1000-packet queue in slow start even below the cap (bench/README.md).
        "flows": [
            {
                "cc": "cubic",
                "rto": "linux",
                "app": "bulk",
                "bytes": ENDPOINT_BYTES,
                "pacing": True,
                "max_cwnd": "2MB",
            }
        ],
    }
    load = _load()
    r = endpoint_download(
        parse_scenario(data, "<bench>").to_config(),
        ENDPOINT_BYTES,
        time_limit_s=120,
    )
    s = r["summary"]
    flow = s["endpoint"]["flows"][0]
    return {
        "bench": "ceiling: tcplab endpoint (CUBIC, paced), 1 Gbit/s link, RTT 10 ms",
        "goodput_mbps": flow["goodput_bps"] / 1e6,
        "of_link_rate_pct": flow["goodput_bps"] / 1e9 * 100,
        "sha256_ok": r["sha256_ok"],
        "retransmitted": flow["retransmitted_segments"],
        "lateness_us": s["emulator"]["lateness_us"],
        "scheduling": s["emulator"]["scheduling"],
        "load": load,
    }


def _cyclictest(seconds: float) -> dict[str, Any]:
    """cyclictest's wake-up latency per CPU (µs): p99, p99.9, max and wake-ups over 1 ms."""
    import shutil
    import tempfile

    if not shutil.which("cyclictest"):
        return {"skipped": "cyclictest not installed (apt-get install rt-tests)"}
    with tempfile.NamedTemporaryFile("r", suffix=".hist") as hist:
        args = ["-m", "-S", "-q", "-p", str(max(RT_PRIORITY, 1)), "-i", "100"]
        args += ["-D", f"{int(seconds)}", "-h", "20000", f"--histfile={hist.name}"]
        subprocess.run(
            ["cyclictest", *args],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        rows = [[int(v) for v in line.split()] for line in hist if line[:1].isdigit()]
    cpus = []
    for c in range(1, len(rows[0])):
        total = sum(r[c] for r in rows)
        acc, cut = 0, {}
        for r in rows:
            acc += r[c]
            for q in (0.99, 0.999):
                if q not in cut and acc >= q * total:
                    cut[q] = r[0]
        seen = [r[0] for r in rows if r[c]]
        cpus.append(
            {
                "wakeups": total,
                "p99": cut[0.99],
                "p999": cut[0.999],
                "max": max(seen),
                "over_1ms": sum(r[c] for r in rows if r[0] > 1000),
            }
        )
    return {"cpus": cpus}


def _spin(cpu: int, seconds: float, conn: Any) -> None:
    """Spin on the clock pinned to ``cpu`` under SCHED_FIFO; send back every gap over
    200 µs as (start ns, length ns). 0.8 s of spin per second keeps the process under the
    kernel's real-time throttle (0.95 s per second), which would otherwise be the gaps."""
    os.sched_setaffinity(0, {cpu})
    if RT_PRIORITY:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(RT_PRIORITY))
    now = time.monotonic_ns
    gaps: list[tuple[int, int]] = []
    spun = 0
    for _ in range(max(1, round(seconds))):
        start = last = now()
        end = start + 800_000_000
        while last < end:
            t = now()
            if t - last > 200_000:
                gaps.append((last, t - last))
            last = t
        spun += last - start
        time.sleep(0.2)
    conn.send((spun, gaps))
    conn.close()


def floor(seconds: float) -> dict[str, Any]:
    """The machine's own timing floor, with no emulator running (see the module's doc)."""
    import multiprocessing as mp

    ctx = mp.get_context("fork")
    cpus = sorted(os.sched_getaffinity(0))
    probes = []
    for cpu in cpus:
        recv, send = ctx.Pipe(duplex=False)
        p = ctx.Process(target=_spin, args=(cpu, seconds, send))
        p.start()
        probes.append((p, recv))
    results = [recv.recv() for _, recv in probes]
    for p, _ in probes:
        p.join()
    spin = []
    for cpu, (spun, gaps) in zip(cpus, results, strict=True):
        lengths = [g for _, g in gaps]
        spin.append(
            {
                "cpu": cpu,
                "spun_s": spun / 1e9,
                "gaps_over_200us": len(gaps),
                "gaps_over_1ms": sum(g > 1_000_000 for g in lengths),
                "max_us": max(lengths, default=0) / 1e3,
                "lost_pct": 100 * sum(lengths) / spun if spun else 0.0,
            }
        )
    # A gap over 1 ms on the first CPU that overlaps one on every other CPU: the whole
    # machine stopped (the hypervisor, or a stop-the-machine kernel operation).
    first, *others = [[(s, s + g) for s, g in gaps if g > 1_000_000] for _, gaps in results]
    together = sum(all(any(a < e and b > s for a, b in o) for o in others) for s, e in first)
    return {
        "bench": f"floor: no emulator, idle path, {len(cpus)} CPUs",
        "cyclictest_us": _cyclictest(seconds),
        "spin": spin,
        "gaps_over_1ms_on_every_cpu": together,
        "load": _load(),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--only", choices=["lateness", "rate", "ceiling", "endpoint", "floor"])
    ap.add_argument("--no-realtime", action="store_true", help="the emulator as an ordinary thread")
    ap.add_argument("--pin-cpu", action="store_true", help="pin the emulator thread to its CPU")
    ap.add_argument("--spin-share", type=float, default=0.5, help="the emulator's spin budget")
    args = ap.parse_args()
    global RT_PRIORITY, PIN_CPU, SPIN_SHARE
    RT_PRIORITY = 0 if args.no_realtime else 10
    PIN_CPU = args.pin_cpu
    SPIN_SHARE = args.spin_share
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
    if args.only in (None, "endpoint"):
        runs.append(endpoint_ceiling)
    if args.only in (None, "floor"):
        runs.append(lambda: floor(3 * t))
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
    for key in ("goodput_mbps", "of_link_rate_pct", "ip_rate_bps", "error_pct", "retransmitted"):
        if key in row:
            parts.append(f"{key} {row[key]:.4g}")
    for kind, st in (row.get("stalls") or {}).items():
        parts.append(
            f"{kind} >1 ms {st['over_1ms']} (>200 µs {st['over_200us']}) max {st['max_us']:.0f} µs;"
        )
    cyc = row.get("cyclictest_us")
    if cyc is not None:
        if "skipped" in cyc:
            parts.append(f"cyclictest skipped: {cyc['skipped']}")
        for i, c in enumerate(cyc.get("cpus", [])):
            parts.append(
                f"cyclictest cpu{i} µs p99 {c['p99']} p99.9 {c['p999']} max {c['max']} "
                f"({c['over_1ms']} of {c['wakeups']} over 1 ms);"
            )
    for c in row.get("spin", []):
        parts.append(
            f"spin cpu{c['cpu']} {c['spun_s']:.1f} s: {c['gaps_over_200us']} gaps > 200 µs, "
            f"{c['gaps_over_1ms']} > 1 ms, max {c['max_us']:.0f} µs, {c['lost_pct']:.3f} % lost;"
        )
    if "gaps_over_1ms_on_every_cpu" in row:
        parts.append(f"gaps > 1 ms on every CPU at once {row['gaps_over_1ms_on_every_cpu']}")
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
