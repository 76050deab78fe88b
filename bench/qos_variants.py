#!/usr/bin/env python3
"""qos-tcp-wlan: model changes measured and not adopted, so that the report and
docs/papers.md §4 quote no number that a script of the repository does not compute.

Each variant changes one setting of the reproduction's handover or late-joiner experiment and is
run on the same seeds as the full reproduction's handover rows (``--seeds``, default 64; the
late-joiner variants on ``--join-seeds``, default 16). Printed: one Markdown row per variant with
the measures the reproduction judges, each a mean over seeds (shares of seeds for "kept out" and
"incumbent unhappy"; ratios of means with their 95 % interval where the report gives one):

- ``outdoor onset 3 m``: the outdoor channel with the distance term flat to 3 m and total loss at
  7.4 m (also halves a lone terminal's throughput at 5 m, but spares the background stations at
  2 m from their AP);
- ``outdoor term indoors``: the outdoor distance term (0 → 11 m) on the indoor walk's terminal;
- ``CUBIC hosts``: CUBIC on every normal-TCP host of the handover experiment;
- ``slower incumbent p``: the late-joiner experiment on the testbed channel with one of the six
  incumbents slightly slower (independent frame errors ``p`` per attempt, the paper's §5 device
  differences).

``--out FILE`` also writes the rows as JSON with the date and commit.
"""

from __future__ import annotations

import argparse
import datetime
import json
import subprocess
from typing import Any

import numpy as np

from tcplab.papers import qos_tcp_wlan as q
from tcplab.stats import mean_ci95, ratio_ci95


def _share(rows: list[dict[str, Any]], key: str) -> float:
    return float(np.mean([float(r[key]) for r in rows]))


def handover_row(ho: dict[tuple[str, str], list[dict[str, Any]]]) -> dict[str, Any]:
    """The handover measures of the testbed-channel rows (and the simulator's, when run)."""
    tb_q, tb_t = ho[("testbed", "qos_tcp")], ho[("testbed", "newreno")]
    out: dict[str, Any] = {
        "qos_fair_ap1": ratio_ci95(
            [r["mobile_near_ap1_bps"] for r in tb_q], [r["fair_share_near_ap1_bps"] for r in tb_q]
        ),
        "qos_fair_ap2": ratio_ci95(
            [r["mobile_after_bps"] for r in tb_q], [r["fair_share_after_bps"] for r in tb_q]
        ),
        "qos_over_tcp_after": ratio_ci95(
            [r["mobile_after_bps"] for r in tb_q], [r["mobile_after_bps"] for r in tb_t]
        ),
        "qos_over_tcp_whole": ratio_ci95(
            [r["mobile_total_bps"] for r in tb_q], [r["mobile_total_bps"] for r in tb_t]
        ),
        "tcp_kept_out": _share(tb_t, "mobile_starved"),
        "qos_kept_out": _share(tb_q, "mobile_starved"),
        "ap2_ack_drop": float(np.mean([r["ap2_ack_drop"] for r in tb_q + tb_t])),
    }
    if ("simulator", "qos_tcp") in ho:
        out["sim_qos_kept_out"] = _share(ho[("simulator", "qos_tcp")], "mobile_starved")
    return out


def join_row(d: dict[tuple[str, str], list[dict[str, Any]]]) -> dict[str, Any]:
    jq, jt = d[("testbed", "qos_tcp")], d[("testbed", "newreno")]
    return {
        "incumbent_unhappy_after_qos": mean_ci95([float(r["incumbent_unhappy_after"]) for r in jq]),
        "incumbent_unhappy_after_tcp": _share(jt, "incumbent_unhappy_after"),
        "incumbent_unhappy_before": _share(jq + jt, "incumbent_unhappy_before"),
        "tcp_joiner_share": float(np.mean([r["joiner_share"] for r in jt])),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=64)
    ap.add_argument("--join-seeds", type=int, default=16)
    ap.add_argument("--jobs", type=int, default=None)
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    seeds = list(range(1, a.seeds + 1))
    jseeds = list(range(1, a.join_seeds + 1))
    tgt = q.TARGET_BPS
    tb_only = ("testbed",)
    rows: dict[str, dict[str, Any]] = {
        "outdoor channel (the report's)": handover_row(
            q.handover_runs(seeds, a.jobs, tgt, channels=tb_only, **q.OUTDOOR)
        ),
        "outdoor onset 3 m (flat to 3 m, total loss at 7.4 m)": handover_row(
            q.handover_runs(
                seeds, a.jobs, tgt, channels=tb_only, **{**q.OUTDOOR, "fade_m": (3.0, 7.4)}
            )
        ),
        "indoor testbed channel (the report's)": handover_row(
            q.handover_runs(seeds, a.jobs, tgt, **q.TESTBED)
        ),
        "outdoor term indoors (moving terminal, 0 -> 11 m)": handover_row(
            q.handover_runs(seeds, a.jobs, tgt, **{**q.TESTBED, "fade_m": q.OUTDOOR_M})
        ),
        "CUBIC hosts (handover)": handover_row(
            q.handover_runs(seeds, a.jobs, tgt, normal="cubic", **q.TESTBED)
        ),
    }
    for p in (None, 0.1, 0.3):
        name = "late joiner (the report's)" if p is None else f"slower incumbent p = {p}"
        rows[name] = join_row(q.join_detail(jseeds, a.jobs, tgt, channels=tb_only, weak_p=p))

    def f(v: Any) -> str:
        if isinstance(v, tuple | list):
            return f"{v[0]:.2f} ± {v[1]:.2f}"
        return f"{v:.2f}"

    keys = sorted({k for r in rows.values() for k in r})
    print(f"seeds: handover 1-{a.seeds}, late joiner 1-{a.join_seeds}")
    print("| variant | " + " | ".join(keys) + " |")
    print("|---|" + "---|" * len(keys))
    for name, r in rows.items():
        print(f"| {name} | " + " | ".join(f(r[k]) if k in r else "" for k in keys) + " |")
    if a.out:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True
        ).stdout.strip()
        meta = {"date": datetime.date.today().isoformat(), "commit": commit}
        with open(a.out, "w") as fh:
            json.dump({**meta, "seeds": a.seeds, "join_seeds": a.join_seeds, "rows": rows}, fh)


if __name__ == "__main__":
    main()
