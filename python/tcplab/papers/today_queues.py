"""The papers' links with today's queues: what a managed queue (docs/aqm.md) changes where the
paper had a DropTail buffer. Beyond the papers: they did not study these settings, so each
number is reported as ``Beyond`` (no paper value, no verdict, never counted in a report's
tally). The paper modules call these helpers from one section each (``qos_tcp_wlan`` at the
802.11 AP, ``sto3g`` at the 3G bearer's RLC buffer); every setting runs on the same seeds with
the paper's DropTail buffer and with the discipline, so the two columns differ only in the queue.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from tcplab.report.checks import Beyond, Report
from tcplab.scenario.aqm import parse_aqm

__all__ = ["beyond_rows", "download_throughput_bps", "queue_row", "with_ap_aqm"]


def with_ap_aqm(cfg: Mapping[str, Any], aqm: str) -> dict[str, Any]:
    """A normalized WLAN configuration (first hop ``wlan``) with ``aqm`` in place of the APs'
    DropTail queue, its ``ap_queue`` staying the hard limit."""
    out = copy.deepcopy(dict(cfg))
    hop = out["hops"][0]
    limit = {"kind": "packets", "limit": hop.get("ap_queue", 265)}
    hop["ap_aqm"] = parse_aqm(aqm, "ap_aqm", limit, hop.get("data_rate_bps", 54_000_000))
    return out


def queue_row(summary: Mapping[str, Any], **match: Any) -> dict[str, Any]:
    """The first summary row of ``links`` whose fields equal ``match``."""
    for row in summary["links"]:
        if all(row.get(k) == v for k, v in match.items()):
            return dict(row)
    raise KeyError(f"no links row with {match}")


def download_throughput_bps(res: Mapping[str, Any]) -> float:
    """Bytes of the run's completed downloads over their transfer times (bit/s): the
    throughput a user sees while downloading, think times left out."""
    ev = res["events_table"]
    done = ev["kind"] == res["event_kinds"].index("transfer_done")
    t = float(np.sum(ev["value"][done]))
    return float(np.sum(ev["seq"][done])) * 8 / t if t > 0 else float("nan")


def beyond_rows(
    report: Report,
    title: str,
    samples: Mapping[str, Mapping[str, Sequence[float]]],
    units: Mapping[str, str],
    note: str,
) -> None:
    """One ``Beyond`` row per metric and queue: ``samples[metric][queue]`` are per-seed values
    (mean ± 95 % CI in the report)."""
    for metric, by_queue in samples.items():
        for queue, values in by_queue.items():
            report.check(
                f"{title}: {metric}, {queue}",
                Beyond(),
                None,
                samples=[float(v) for v in values],
                paper=None,
                unit=units.get(metric, ""),
                note=note,
            )
