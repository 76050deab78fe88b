#!/usr/bin/env python3
"""CUBIC over each LEO preset across satellite reassignments (docs/leo.md, the figure).

For every preset of ``kind = "leo"``: one bulk download with ``stack = "linux"`` (CUBIC and
Linux's defaults) for ``--seconds`` of simulated time, seed ``--seed``, the preset's defaults
(queue of 1000 packets, 40 ms pause and 15 % loss in the second after each reassignment), and
the same with the handover loss off (``handover_loss = 0``) to show what the loss costs. The
figure has one column per preset: goodput per 500 ms beside the slot's downlink capacity, and
the sender's smoothed RTT beside the slot's base RTT, with every reassignment instant marked.
Prints a Markdown table (goodput over the mean slot capacity, retransmissions, timeouts) and
writes the figure to ``--out``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent


def run(preset: str, seconds: int, seed: int, loss: bool) -> dict[str, Any]:
    from tcplab.campaign.single import run_config
    from tcplab.scenario.parse import parse_scenario

    hop: dict[str, Any] = {"kind": "leo", "preset": preset}
    if not loss:
        hop["handover_loss"] = 0.0
    scenario = {
        "name": f"leo-{preset}",
        "duration": f"{seconds}s",
        "seed": seed,
        "sample_interval": "500ms",
        "path": [hop],
        "flows": [{"stack": "linux", "bytes": "unlimited"}],
    }
    return run_config(parse_scenario(scenario).to_config(), columns=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=int, default=120)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", type=Path, default=REPO / "docs" / "figures" / "leo_cubic.png")
    a = ap.parse_args()
    import numpy as np

    from tcplab import _core
    from tcplab.report.plots import figure, save
    from tcplab.scenario.registry import names

    presets = names("leo_presets")
    fig, axes = figure(ncols=len(presets), nrows=2, size=(6.4, 3.4))
    rows = []
    for col, preset in enumerate(presets):
        # The slots the hop draws (hop index 0, the run's seed), with their start times.
        slots = _core.leo_slots(preset, a.seed, 0, a.seconds // 15 + 2)
        starts = np.array([s[0] for s in slots] + [a.seconds * 10**9]) / 1e9
        down = np.array([s[2] for s in slots]) / 1e6
        rtt = np.array([s[1] for s in slots]) / 1e6
        t_end = np.minimum(starts[1:], a.seconds)
        t_beg = np.minimum(starts[:-1], a.seconds)
        mean_capacity = float(np.sum(down * (t_end - t_beg)) / a.seconds)
        ax_rate, ax_rtt = axes[0][col], axes[1][col]
        ax_rate.step(starts[:-1], down, where="post", color="black", lw=1.2, label="slot capacity")
        ax_rtt.step(starts[:-1], rtt, where="post", color="black", lw=1.2, label="slot base RTT")
        for loss, style in ((True, "-"), (False, ":")):
            summary = run(preset, a.seconds, a.seed, loss)
            flow = summary["flows"][0]
            ts = summary["timeseries_table"]
            t = np.asarray(ts["t_ns"]) / 1e9
            delivered = np.asarray(ts["delivered"], dtype=float)
            rate = np.diff(delivered) * 8 / np.diff(t) / 1e6
            label = "CUBIC" if loss else "CUBIC, no handover loss"
            ax_rate.plot(t[1:], rate, style, color="tab:blue", lw=1, label=label)
            srtt = np.asarray(ts["srtt_ns"], dtype=float) / 1e6
            ax_rtt.plot(
                t,
                np.where(srtt > 0, srtt, np.nan),
                style,
                color="tab:red",
                lw=1,
                label=f"SRTT ({label})",
            )
            goodput = flow["bytes_delivered"] * 8 / a.seconds / 1e6
            rows.append(
                {
                    "preset": preset,
                    "handover_loss": "preset" if loss else "0",
                    "mean_capacity_mbps": mean_capacity,
                    "goodput_mbps": goodput,
                    "share": goodput / mean_capacity,
                    "retransmitted_segments": flow["retransmitted_segments"],
                    "timeouts": flow["timeouts"],
                }
            )
        for ax in (ax_rate, ax_rtt):
            for k, s in enumerate(starts[1:-1]):
                ax.axvline(
                    s, color="grey", lw=0.6, ls="--", label="reassignment" if k == 0 else None
                )
            ax.set_xlim(0, a.seconds)
            ax.set_xlabel("time (s)")
            ax.legend(fontsize=7, loc="upper right")
        ax_rate.set_ylabel("downlink (Mbit/s, per 500 ms)")
        ax_rate.set_title(preset)
        ax_rtt.set_ylabel("RTT (ms)")
    save(fig, a.out)
    print(
        "| preset | handover loss | mean slot capacity (Mbit/s) | CUBIC goodput (Mbit/s) "
        "| share | retransmitted | timeouts |"
    )
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['preset']} | {r['handover_loss']} | {r['mean_capacity_mbps']:.1f} "
            f"| {r['goodput_mbps']:.1f} | {r['share']:.0%} | {r['retransmitted_segments']} "
            f"| {r['timeouts']} |"
        )
    print(f"figure: {a.out}")
    print(json.dumps(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
