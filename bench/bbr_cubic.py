"""BBR against CUBIC, one flow each, through one bottleneck: the throughput shares of the
kernel's two flows beside tcplab's (``stack = "linux"``) on the same path.

    python bench/bbr_cubic.py linux --buffer shallow|deep --cache DIR [--runs 5]
    python bench/bbr_cubic.py compare --cache DIR [--runs 5] [--figure FILE.png] [--json FILE]

``linux`` runs the real side on the validation testbed (``tcplab.real.validate.netlab``): two
senders in the sender namespace, one with ``TCP_CONGESTION = "bbr"`` and one with ``"cubic"``
(each set on its own socket before connect(), and read back: a sender whose socket reports
another congestion control is an error), to two receivers, through one ``tcplab emu`` link
(its DropTail queue shared), internal pacing (no ``fq`` here). Run it under the real-time lock
(``flock LOCKFILE ...``: no other real-time measurement meanwhile); each buffer's 5 runs take
about 5.5 minutes. Each run is stored in the cache as JSON with the machine load before and
after it; a run already in the cache is not run again.

``compare`` runs tcplab's side once per Linux run (seeds 1..runs; the CUBIC flow starts as
much after the BBR flow as it did in the paired Linux run) and prints the table of shares:
BBR's share of the two flows' goodput over [``WINDOW``] seconds after the BBR flow's connect(),
per stack, mean ± 95 % CI over the runs, and the difference in percentage points.

The path: 10 Mbit/s each way, 40 ms RTT, no random loss; a shallow buffer of 0.5 BDP (17
packets) and a deep one of 8 BDP (267 packets), BDP = 33.3 1500-byte packets. 60 s per run, the
share taken from 10 s on (both flows' start-up and CUBIC's first loss episode left out) and,
again, over the last 18 s (``LATE_WINDOW``). The shallow buffer's shares are steady from 10 s
on: BBR's PROBE_RTT every 10 s is the only pattern. The deep buffer's are not settled within
60 s: CUBIC fills the queue after start-up, and BBR, capped at twice its estimated BDP in
flight, wins bandwidth back only over tens of seconds (in both stacks, see the figure). The
first window compares that trajectory, the late one where it has come closest to its end.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

import numpy as np

from tcplab.stats import mean_ci95

RATE_BPS = 10_000_000
RTT_MS = 40.0
DURATION_S = 60.0
#: Shares are taken over this window (s after the BBR flow's connect()); it ends before the
#: later sender's 60 s are up, so neither flow has stopped writing.
WINDOW = (10.0, 58.0)
#: The last 18 s of ``WINDOW``: where the deep buffer's shares have come closest to settling
#: (they still converge at 58 s; see the module doc).
LATE_WINDOW = (40.0, 58.0)
BDP_PACKETS = RATE_BPS * RTT_MS / 1e3 / 8 / 1500
BUFFERS = {"shallow": round(0.5 * BDP_PACKETS), "deep": round(8 * BDP_PACKETS)}
CCS = ["bbr", "cubic"]
#: Emulator seeds of the Linux runs (the link has no random loss; kept for the record).
LINUX_SEED0 = 2000
#: Sampling: TCP_INFO every 100 ms (the sender), bytes received every 10 ms (the receiver).
SAMPLE_S = 0.1
#: Throughput-over-time bins in the figure.
BIN_S = 1.0


def _cache_file(cache: Path, buffer: str, run: int) -> Path:
    return cache / f"{buffer}-q{BUFFERS[buffer]}-run{run}.json"


def linux(buffer: str, runs: int, cache: Path) -> None:
    """The kernel's side: ``runs`` runs of the two flows through ``buffer``, into ``cache``."""
    from tcplab.real.validate.netlab import Testbed, available

    why = available()
    if why is not None:
        sys.exit(f"bbr_cubic: the testbed cannot run here: {why}")
    cache.mkdir(parents=True, exist_ok=True)
    with Testbed() as tb:
        for k in range(runs):
            path = _cache_file(cache, buffer, k)
            if path.exists():
                continue
            load_before = os.getloadavg()
            flows = tb.transfers(
                rate_bps=RATE_BPS,
                delay_ns=int(RTT_MS * 1e6 / 2),
                queue=BUFFERS[buffer],
                loss=0.0,
                ccs=CCS,
                duration_s=DURATION_S,
                seed=LINUX_SEED0 + k,
                sample_s=SAMPLE_S,
            )
            for f, cc in zip(flows, CCS, strict=True):
                if f.sender["cc"] != cc:
                    sys.exit(f"bbr_cubic: a {cc} sender's socket reports {f.sender['cc']!r}")
            fwd = flows[0].forward
            rec = {
                "buffer": buffer,
                "queue": BUFFERS[buffer],
                "run": k,
                "load_before": load_before,
                "load_after": os.getloadavg(),
                "lateness_us": fwd.lateness_us,
                "realtime": fwd.realtime,
                "directions": fwd.directions,
                "flows": [
                    {
                        "cc": f.sender["cc"],
                        "t0_ns": f.sender["t0_ns"],
                        "rx": f.receiver["samples"],
                        "retrans": f.sender["final"]["total_retrans"],
                        "tcp_info": [
                            {x: s[x] for x in ("t_ns", "snd_cwnd", "rtt", "pacing_rate")}
                            for s in f.sender["samples"]
                        ],
                    }
                    for f in flows
                ],
            }
            path.write_text(json.dumps(rec))
            print(
                f"{buffer} run {k}: lateness p99 {fwd.lateness_us['p99']:.0f} µs, "
                f"load {load_before[0]:.1f} -> {rec['load_after'][0]:.1f}",
                flush=True,
            )


def _cum_at(t: np.ndarray, b: np.ndarray, x: np.ndarray) -> np.ndarray:
    return np.interp(x, t, b)


def linux_series(rec: dict[str, Any]) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per flow: (time s after the BBR flow's connect(), cumulative bytes received)."""
    t_ref = rec["flows"][0]["t0_ns"]
    out = []
    for f in rec["flows"]:
        rx = np.asarray(f["rx"], dtype=float)
        out.append(((rx[:, 0] - t_ref) / 1e9, rx[:, 1]))
    return out


def tcplab_series(
    queue: int, seed: int, offset_s: float
) -> tuple[list[tuple[np.ndarray, np.ndarray]], list[int]]:
    """tcplab's side of one run: per flow (time s, cumulative bytes delivered), and each
    flow's retransmitted segments. The CUBIC flow opens ``offset_s`` after the BBR flow."""
    from tcplab.campaign.sweep import run_config
    from tcplab.scenario.parse import parse_scenario

    def flow(cc: str) -> dict[str, Any]:
        # The testbed's tcp_rmem[2] is 32 MiB, as in the single-flow validation.
        return {"stack": "linux", "cc": cc, "mss": 1448, "rcv_buf": "32MiB"}

    sc = {
        "name": "bbr-vs-cubic",
        "duration": f"{DURATION_S:g}s",
        "seed": seed,
        "sample_interval": "100ms",
        "path": [
            {
                "rate": f"{RATE_BPS}bps",
                "delay": f"{int(RTT_MS * 1e6 / 2)}ns",
                "queue": queue,
            }
        ],
        "flows": [flow("bbr"), {**flow("cubic"), "start": f"{round(offset_s * 1e9)}ns"}],
    }
    summary = run_config(parse_scenario(sc).to_config(), columns=True)
    ts = summary["timeseries_table"]
    fl = np.asarray(ts["flow"])
    t = np.asarray(ts["t_ns"], dtype=float) / 1e9
    d = np.asarray(ts["delivered"], dtype=float)
    series = [(t[fl == k], d[fl == k]) for k in range(len(CCS))]
    return series, [int(f["retransmitted_segments"]) for f in summary["flows"]]


def shares(
    series: list[tuple[np.ndarray, np.ndarray]], window: tuple[float, float] = WINDOW
) -> tuple[float, list[float]]:
    """BBR's share of the goodput over ``window`` and each flow's goodput (bit/s)."""
    good = []
    for t, b in series:
        lo, hi = _cum_at(t, b, np.asarray(window))
        good.append(8 * (hi - lo) / (window[1] - window[0]))
    return good[0] / sum(good), good


def compare(cache: Path, runs: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for buffer, queue in BUFFERS.items():
        rows = []
        for k in range(runs):
            path = _cache_file(cache, buffer, k)
            if not path.exists():
                sys.exit(f"bbr_cubic: {path}: missing (run `bbr_cubic.py linux --buffer {buffer}`)")
            rec = json.loads(path.read_text())
            lx = linux_series(rec)
            offset = (rec["flows"][1]["t0_ns"] - rec["flows"][0]["t0_ns"]) / 1e9
            sim, sim_retrans = tcplab_series(queue, k + 1, offset)
            ls, lg = shares(lx)
            ss, sg = shares(sim)
            rows.append(
                {
                    "run": k,
                    "offset_s": offset,
                    "linux_share": ls,
                    "tcplab_share": ss,
                    "linux_share_late": shares(lx, LATE_WINDOW)[0],
                    "tcplab_share_late": shares(sim, LATE_WINDOW)[0],
                    "linux_goodput_bps": lg,
                    "tcplab_goodput_bps": sg,
                    "linux_retrans": [f["retrans"] for f in rec["flows"]],
                    "tcplab_retrans": sim_retrans,
                    "load": [rec["load_before"][0], rec["load_after"][0]],
                    "lateness_us": rec["lateness_us"],
                    "linux": lx,
                    "tcplab": sim,
                }
            )
        out[buffer] = {"queue": queue, "rows": rows}
    return out


def table(res: dict[str, Any]) -> str:
    lines = [
        "| buffer | window s | BBR share, Linux | BBR share, tcplab | difference | "
        "BBR / CUBIC Mbit/s, Linux | BBR / CUBIC Mbit/s, tcplab | "
        "retransmissions BBR / CUBIC, Linux | tcplab | within 10 points |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for buffer, r in res.items():
        rows = r["rows"]

        def mbps(key: str, i: int, rows: list[dict[str, Any]] = rows) -> str:
            return f"{np.mean([x[key][i] for x in rows]) / 1e6:.2f}"

        def rt(key: str, i: int, rows: list[dict[str, Any]] = rows) -> str:
            return f"{np.mean([x[key][i] for x in rows]):.0f}"

        for suffix, window in (("", WINDOW), ("_late", LATE_WINDOW)):
            cells = []
            means = []
            for who in ("linux", "tcplab"):
                xs = [x[f"{who}_share{suffix}"] for x in rows]
                m, ci = mean_ci95(xs)
                means.append(m)
                cells.append(
                    f"{100 * m:.1f} ± {100 * ci:.1f} % ({100 * min(xs):.1f}-{100 * max(xs):.1f})"
                )
            diff = round(100 * (means[1] - means[0]), 1) + 0.0
            rates = (
                f"{mbps('linux_goodput_bps', 0)} / {mbps('linux_goodput_bps', 1)} | "
                f"{mbps('tcplab_goodput_bps', 0)} / {mbps('tcplab_goodput_bps', 1)} | "
                f"{rt('linux_retrans', 0)} / {rt('linux_retrans', 1)} | "
                f"{rt('tcplab_retrans', 0)} / {rt('tcplab_retrans', 1)}"
                if suffix == ""
                else "| | |"
            )
            lines.append(
                f"| {buffer} ({r['queue']} pkts) | {window[0]:g}-{window[1]:g} | {cells[0]} | "
                f"{cells[1]} | {diff:+.1f} points | {rates} | "
                f"{'yes' if abs(diff) <= 10 else 'no'} |"
            )
    return "\n".join(lines)


def figure(res: dict[str, Any], path: Path) -> None:
    """Throughput over time per flow (1 s bins, mean over the runs), Linux beside tcplab, one
    panel per buffer."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    edges = np.arange(0.0, WINDOW[1] + 1e-9, BIN_S)
    fig, axes = plt.subplots(
        len(res), 2, figsize=(11, 3.2 * len(res)), sharex=True, sharey=True, squeeze=False
    )
    colours = {"bbr": "tab:blue", "cubic": "tab:red"}
    for row_axes, (buffer, r) in zip(axes, res.items(), strict=True):
        for ax, who in zip(row_axes, ("linux", "tcplab"), strict=True):
            for i, cc in enumerate(CCS):
                rates = []
                for x in r["rows"]:
                    t, b = x[who][i]
                    cum = _cum_at(np.asarray(t), np.asarray(b), edges)
                    rates.append(8 * np.diff(cum) / BIN_S / 1e6)
                rates_a = np.asarray(rates)
                mid = (edges[:-1] + edges[1:]) / 2
                ax.plot(mid, rates_a.mean(axis=0), color=colours[cc], label=f"{cc} (mean of runs)")
                ax.fill_between(
                    mid, rates_a.min(axis=0), rates_a.max(axis=0), color=colours[cc], alpha=0.15
                )
            ax.axvspan(0, WINDOW[0], color="0.9", zorder=0)
            name = "Linux (kernel, tcplab emu)" if who == "linux" else "tcplab (stack = linux)"
            ax.set_title(f"{name}, {buffer} buffer ({r['queue']} packets)", fontsize=10)
            ax.set_ylim(0, RATE_BPS / 1e6 * 1.15)
            ax.grid(alpha=0.3)
        row_axes[0].set_ylabel("throughput (Mbit/s, 1 s bins)")
    for ax in axes[-1]:
        ax.set_xlabel("time since the BBR flow's connect() (s)")
    axes[0][0].legend(loc="upper right", fontsize=8)
    fig.suptitle(
        f"BBR vs CUBIC, {RATE_BPS / 1e6:g} Mbit/s, RTT {RTT_MS:g} ms: shaded band = min-max over "
        f"runs, grey = left out of the share",
        fontsize=10,
    )
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    sub = ap.add_subparsers(dest="what", required=True)
    lx = sub.add_parser("linux", help="the kernel's runs (real time; take the lock)")
    lx.add_argument("--buffer", choices=list(BUFFERS), required=True)
    lx.add_argument("--cache", type=Path, required=True)
    lx.add_argument("--runs", type=int, default=5)
    cp = sub.add_parser("compare", help="tcplab beside the cached Linux runs")
    cp.add_argument("--cache", type=Path, required=True)
    cp.add_argument("--runs", type=int, default=5)
    cp.add_argument("--figure", type=Path)
    cp.add_argument("--json", type=Path)
    a = ap.parse_args(argv)
    if a.what == "linux":
        linux(a.buffer, a.runs, a.cache)
        return
    res = compare(a.cache, a.runs)
    print(table(res))
    for buffer, r in res.items():
        for x in r["rows"]:
            print(
                f"{buffer} run {x['run']}: BBR share linux {100 * x['linux_share']:.1f} % "
                f"tcplab {100 * x['tcplab_share']:.1f} % (from {LATE_WINDOW[0]:g} s: "
                f"{100 * x['linux_share_late']:.1f} / {100 * x['tcplab_share_late']:.1f} %), "
                f"CUBIC started {1e3 * x['offset_s']:.1f} ms later, "
                f"load {x['load'][0]:.1f}-{x['load'][1]:.1f}, emulator lateness p99 "
                f"{x['lateness_us']['p99']:.0f} µs max {x['lateness_us']['max']:.0f} µs"
            )
    if a.figure:
        figure(res, a.figure)
    if a.json:
        slim = {
            b: {
                "queue": r["queue"],
                "rows": [
                    {k: v for k, v in x.items() if k not in ("linux", "tcplab")} for x in r["rows"]
                ],
            }
            for b, r in res.items()
        }
        a.json.write_text(json.dumps(slim, indent=1))


if __name__ == "__main__":
    main()
