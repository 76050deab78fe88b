"""Fairness metrics for shared media: per-station throughput over time, Jain's index, "unhappy
terminal" detection and the AP's drops split into data and ACKs.

Inputs are the columns a run returns (``run_config(..., columns=True)``: ``timeseries_table`` with
``flow``, ``t_ns``, ``delivered``) and the summary's ``links`` rows of a ``wlan`` hop.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

__all__ = [
    "ap_drops",
    "jain",
    "station_throughput",
    "throughput_series",
    "unhappy",
]


def jain(x: Sequence[float] | np.ndarray) -> float:
    """Jain's fairness index (Σx)² / (n·Σx²): 1 when all equal, 1/n when one takes all."""
    a = np.asarray(x, dtype=float)
    if a.size == 0:
        raise ValueError("jain: needs at least one value")
    s2 = float((a * a).sum())
    return 1.0 if s2 == 0.0 else float(a.sum() ** 2 / (a.size * s2))


def throughput_series(
    ts: Mapping[str, np.ndarray], flows: Sequence[int], interval_s: float = 1.0
) -> tuple[np.ndarray, np.ndarray]:
    """Goodput of each flow in consecutive ``interval_s`` bins: (bin end times in s, array
    [len(flows), bins] in bit/s), from the sampled ``delivered`` counter (interpolated)."""
    if interval_s <= 0:
        raise ValueError(f"interval_s: must be > 0 (got {interval_s})")
    t = np.asarray(ts["t_ns"], dtype=float) * 1e-9
    f = np.asarray(ts["flow"])
    d = np.asarray(ts["delivered"], dtype=float)
    end = float(t.max()) if t.size else 0.0
    edges = np.arange(0.0, end + 1e-9, interval_s)
    out = np.zeros((len(flows), max(len(edges) - 1, 0)))
    for k, i in enumerate(flows):
        m = f == i
        if not m.any():
            continue
        cum = np.interp(edges, t[m], d[m], left=0.0)
        out[k] = np.diff(cum) * 8.0 / interval_s
    return edges[1:], out


def station_throughput(
    ts: Mapping[str, np.ndarray],
    stations: Mapping[str, Sequence[int]],
    interval_s: float = 1.0,
) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Per-station goodput over time: the sum over each station's flows."""
    names = list(stations)
    all_flows = [f for n in names for f in stations[n]]
    t, per_flow = throughput_series(ts, all_flows, interval_s)
    out: dict[str, np.ndarray] = {}
    k = 0
    for n in names:
        m = len(stations[n])
        out[n] = per_flow[k : k + m].sum(axis=0)
        k += m
    return t, out


def unhappy(
    t: np.ndarray,
    rates: np.ndarray,
    *,
    fraction: float = 0.1,
    min_s: float = 5.0,
    start_s: float = 0.0,
    active: np.ndarray | None = None,
) -> list[tuple[int, float, float]]:
    """Unhappy terminals: intervals of at least ``min_s`` in which a flow's rate stays below
    ``fraction`` of the fair share (the total rate of the active flows in that bin divided by
    their number). ``rates`` is [flows, bins] at bin end times ``t``; ``active`` an optional
    boolean mask of the same shape (default: every flow is active from ``start_s``). Returns
    (flow row, start s, end s) for each such interval."""
    if not 0 < fraction < 1:
        raise ValueError(f"fraction: must be in (0, 1) (got {fraction})")
    if rates.ndim != 2 or rates.shape[1] != len(t):
        raise ValueError("rates: must be [flows, bins] with one column per time in t")
    act = np.ones_like(rates, dtype=bool) if active is None else active
    act = act & (t >= start_s)[None, :]
    n_act = act.sum(axis=0)
    total = np.where(act, rates, 0.0).sum(axis=0)
    fair = np.divide(total, n_act, out=np.zeros_like(total), where=n_act > 0)
    step = float(t[1] - t[0]) if len(t) > 1 else 1.0
    found: list[tuple[int, float, float]] = []
    for k in range(rates.shape[0]):
        low = act[k] & (rates[k] < fraction * fair) & (fair > 0)
        run_start = None
        for j, v in enumerate(np.append(low, False)):
            if v and run_start is None:
                run_start = j
            elif not v and run_start is not None:
                dur = (j - run_start) * step
                if dur >= min_s - 1e-9:
                    found.append((k, float(t[run_start] - step), float(t[j - 1])))
                run_start = None
    return found


def ap_drops(links: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """The APs' drops of a ``wlan`` hop summed and split: queue drops of TCP data and of pure
    ACKs, retry-limit drops, and packets discarded for stations that had left (handover)."""
    keys = (
        "drops_queue_data",
        "drops_queue_ack",
        "drops_retry_data",
        "drops_retry_ack",
        "drops_handover",
    )
    aps = [r for r in links if r.get("kind") == "wlan" and r.get("role") == "ap"]
    return {k: int(sum(int(r[k]) for r in aps)) for k in keys}
