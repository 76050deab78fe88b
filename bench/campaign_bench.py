"""Campaign benchmark: process pool vs a 2-worker Dask LocalCluster, and memory of a big sweep.

1. ``--runs`` (1,000) short runs (p2p-bulk, ``--duration`` of simulated time each) into a fresh
   result store, once on the local process pool (2 processes) and once on a
   ``dask.distributed.LocalCluster`` of 2 single-threaded workers set up as ``tcplab sweep
   --cluster local:2`` does (``tcplab.campaign.run.local_cluster``; cluster start-up excluded,
   as a standing cluster's would be), alternating, ``--repeat`` (3) times: the median wall time
   and the CPU time of the campaign's processes (load-independent). Target: Dask within 15 %
   of the pool's wall time.
2. ``--big`` (100,000) tiny runs swept into a store on the pool, sampling the campaign process's
   resident memory (``VmRSS``) every 0.25 s against the runs done so far: memory must stay flat
   (bounded by the runs in flight), not grow with the campaign.

    python bench/campaign_bench.py                 # both parts
    python bench/campaign_bench.py --big 0         # the timing part only

The machine's load average is printed beside the numbers (they are wall-clock times).
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from tcplab.campaign.run import Stats, local_cluster, sweep_table
from tcplab.campaign.store import Store
from tcplab.campaign.sweep import parse_vary
from tcplab.scenario.parse import apply_overrides, read_scenario


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def _rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def _grid(
    runs: int, duration: str
) -> tuple[dict[str, Any], list[tuple[str, list[str]]], list[int], str]:
    """p2p-bulk over 10 loss rates, runs/10 seeds each."""
    data, source = read_scenario("p2p-bulk")
    data = apply_overrides(data, [f"duration={duration}"])
    losses = ",".join(f"{0.002 * i:g}" for i in range(10))
    vary = parse_vary([f"path[0].loss={losses}"])
    seeds = list(range(1, runs // 10 + 1))
    return data, vary, seeds, source


def _cpu_self_and_reaped() -> float:
    import resource

    a, b = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return a.ru_utime + a.ru_stime + b.ru_utime + b.ru_stime


def _cpu_descendants() -> float:
    import psutil

    total = 0.0
    for p in psutil.Process().children(recursive=True):
        try:
            t = p.cpu_times()
            total += t.user + t.system
        except psutil.NoSuchProcess:
            pass
    return total


def pool_vs_dask(runs: int, duration: str, repeat: int) -> dict[str, Any]:
    """Wall time (median of ``repeat``, the two backends alternating) and CPU time (this
    process and its worker processes) of the same campaign on each backend."""
    import statistics

    from distributed import Client

    data, vary, seeds, source = _grid(runs, duration)
    out: dict[str, Any] = {"runs": runs, "duration": duration, "repeat": repeat}
    walls: dict[str, list[float]] = {"pool": [], "dask": []}
    cpus: dict[str, list[float]] = {"pool": [], "dask": []}
    loads: list[str] = []
    identical = True
    with (
        tempfile.TemporaryDirectory() as tmp,
        local_cluster(2) as cluster,
        Client(cluster) as client,
    ):
        # warm imports, as a standing cluster
        client.run(lambda: __import__("tcplab.campaign.sweep"))
        for i in range(repeat):
            loads.append(_load())
            # the pool: its processes are started and reaped inside the campaign
            c, t = _cpu_self_and_reaped(), time.perf_counter()
            pooled = sweep_table(data, vary, seeds, Store(Path(tmp, f"pool{i}")), source, jobs=2)
            walls["pool"].append(time.perf_counter() - t)
            cpus["pool"].append(_cpu_self_and_reaped() - c)
            # Dask: the scheduler runs in this process, the workers (and nannies) below it
            c, w, t = _cpu_self_and_reaped(), _cpu_descendants(), time.perf_counter()
            dasked = sweep_table(
                data, vary, seeds, Store(Path(tmp, f"dask{i}")), source, cluster=client
            )
            walls["dask"].append(time.perf_counter() - t)
            cpus["dask"].append(_cpu_self_and_reaped() - c + _cpu_descendants() - w)
            identical = identical and dasked.equals(pooled)
    for k in ("pool", "dask"):
        out[f"{k}_s"] = statistics.median(walls[k])
        out[f"{k}_all_s"] = walls[k]
        out[f"{k}_cpu_s"] = statistics.median(cpus[k])
    out["loads"] = loads
    out["rows_identical"] = identical
    out["dask_over_pool"] = out["dask_s"] / out["pool_s"]
    return out


def big_sweep(runs: int, duration: str) -> dict[str, Any]:
    data, vary, seeds, source = _grid(runs, duration)
    stats = Stats()
    samples: list[tuple[float, int, float]] = []
    stop = threading.Event()
    t0 = time.perf_counter()

    def sample() -> None:
        while not stop.is_set():
            samples.append((time.perf_counter() - t0, stats.total, _rss_mib()))
            stop.wait(0.25)

    before = _rss_mib()
    sampler = threading.Thread(target=sample, daemon=True)
    load = _load()
    with tempfile.TemporaryDirectory() as tmp:
        sampler.start()
        table = sweep_table(data, vary, seeds, Store(Path(tmp, "big")), source, jobs=2, stats=stats)
        campaign_s = time.perf_counter() - t0
        stop.set()
        sampler.join()
        after = _rss_mib()
        parts = len(list(Path(tmp, "big").glob("*/*.parquet")))
    running = [s for s in samples if 0 < s[1] < runs]
    computed_s = next((t for t, n, _ in samples if n >= runs), campaign_s)

    def rss_at(fraction: float) -> float:
        return next((r for _, n, r in running if n >= fraction * runs), float("nan"))

    return {
        "runs": runs,
        "duration": duration,
        "rows": table.num_rows,
        "part_files": parts,
        "wall_s": campaign_s,
        "runs_done_s": computed_s,
        "read_back_s": campaign_s - computed_s,
        "load": load,
        "rss_before_mib": before,
        "rss_at_10pct_mib": rss_at(0.1),
        "rss_at_50pct_mib": rss_at(0.5),
        "rss_at_90pct_mib": rss_at(0.9),
        "rss_peak_while_running_mib": max((r for _, _, r in running), default=float("nan")),
        "rss_after_reading_rows_mib": after,
        "samples": samples,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000, help="runs of the timing part (0: skip)")
    parser.add_argument("--duration", default="100s", help="simulated time of a short run")
    parser.add_argument("--repeat", type=int, default=3, help="timing rounds (median)")
    parser.add_argument(
        "--big", type=int, default=100_000, help="runs of the memory part (0: skip)"
    )
    parser.add_argument("--big-duration", default="1s", help="simulated time of a tiny run")
    parser.add_argument("--json", metavar="FILE", help="also write the results (and samples) here")
    args = parser.parse_args()
    results: dict[str, Any] = {"cpus": os.cpu_count()}
    if args.runs:
        r = pool_vs_dask(args.runs, args.duration, args.repeat)
        results["pool_vs_dask"] = r
        print(
            f"{r['runs']} runs of p2p-bulk {r['duration']} (median of {r['repeat']}): "
            f"pool (2 processes) {r['pool_s']:.2f} s wall, {r['pool_cpu_s']:.1f} s CPU; "
            f"Dask LocalCluster (2 workers) {r['dask_s']:.2f} s wall, {r['dask_cpu_s']:.1f} s CPU; "
            f"Dask/pool wall = {r['dask_over_pool']:.3f} (target ≤ 1.15); rows identical: "
            f"{r['rows_identical']}; walls pool {[round(x, 2) for x in r['pool_all_s']]} dask "
            f"{[round(x, 2) for x in r['dask_all_s']]}; load at each start {r['loads']}"
        )
    if args.big:
        b = big_sweep(args.big, args.big_duration)
        results["big"] = b
        print(
            f"{b['runs']:,} runs of p2p-bulk {b['duration']} into a store on the pool: "
            f"{b['wall_s']:.1f} s ({b['read_back_s']:.1f} s of it reading the rows back) "
            f"[load {b['load']}], {b['rows']:,} rows in "
            f"{b['part_files']} files; RSS before {b['rss_before_mib']:.0f} MiB, at 10/50/90 % "
            f"of runs {b['rss_at_10pct_mib']:.0f}/{b['rss_at_50pct_mib']:.0f}/"
            f"{b['rss_at_90pct_mib']:.0f} MiB, "
            f"peak while running {b['rss_peak_while_running_mib']:.0f} MiB, "
            f"after reading the rows back {b['rss_after_reading_rows_mib']:.0f} MiB"
        )
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
