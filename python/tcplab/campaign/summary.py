"""The rows of a sweep or a result store (one per run and flow): the summary ``tcplab sweep``
and ``tcplab results`` print, and the Parquet or CSV file they write."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tcplab.text import table as text_table

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["sweep_summary", "write_rows"]


def sweep_summary(rows: Iterable[dict[str, Any]], keys: Sequence[str]) -> str:
    """Goodput (mean ± 95 % CI over seeds) and loss-recovery counts per grid point and flow
    (keeps only those numbers per row, not the rows)."""
    from tcplab.stats import mean_ci95

    groups: dict[tuple[Any, ...], list[list[float]]] = {}
    for r in rows:
        g = groups.setdefault((*(r[k] for k in keys), r["flow"], r["flow_name"]), [[], [0.0] * 3])
        g[0].append(r["goodput_bps"])
        for i, m in enumerate(("retransmitted_segments", "timeouts", "spurious_timeouts")):
            g[1][i] += r[m]
    body = []
    for gkey, (goodput, sums) in groups.items():
        m, ci = mean_ci95(goodput)
        half = "" if math.isnan(ci) else f" ± {ci / 1e6:.3f}"  # NaN for a single seed
        n = len(goodput)
        body.append(
            [
                *[str(v) for v in gkey[:-2]],
                gkey[-1],
                str(n),
                f"{m / 1e6:.3f}{half}",
                f"{sums[0] / n:.1f}",
                f"{sums[1] / n:.2f}",
                f"{sums[2] / n:.2f}",
            ]
        )
    heads = [*keys, "flow", "runs", "goodput Mbit/s", "retx/run", "RTOs/run", "spurious/run"]
    return text_table(heads, body, "l" * (len(keys) + 1) + "r" * 5)


def write_rows(rows: list[dict[str, Any]] | pa.Table, out: Path) -> None:
    """One row per run and flow, as Parquet (pyarrow) or CSV."""
    import pyarrow as pa

    table = rows if isinstance(rows, pa.Table) else pa.Table.from_pylist(rows)
    out.parent.mkdir(parents=True, exist_ok=True)
    if out.suffix == ".csv":
        import pyarrow.csv as pcsv

        pcsv.write_csv(table, out)
    else:
        from tcplab.results import write_parquet

        write_parquet(table, out)
