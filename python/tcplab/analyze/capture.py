"""``tcplab analyze``: TCP trace analysis of pcap/pcapng captures.

The analysis runs in Rust (``tcplab._core.analyze``, crate ``tcplab-trace``); this module
turns its output into tables, JSON, Parquet and figures. See ``docs/analyze.md``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["AnalyzeResult", "analyze_capture", "render", "write"]


def _frame(cols: dict[str, tuple[str, bytes]]) -> pd.DataFrame:
    import numpy as np
    import pandas as pd

    return pd.DataFrame({k: np.frombuffer(data, dtype=dt) for k, (dt, data) in cols.items()})


@dataclass
class AnalyzeResult:
    """What ``tcplab analyze`` measured in one capture."""

    summary: dict[str, Any]
    #: one row per retransmission: conn, dir, t_ns, seq, len, class, spurious, evidence, backoff
    retransmissions: pd.DataFrame
    #: one row per RTT sample: conn, dir, t_ns, rtt_ns, source, srtt_ns, rto_ns
    rtt_samples: pd.DataFrame
    #: data/ACK/SACK points for time-sequence graphs (only with ``packets=True``)
    packets: pd.DataFrame

    @property
    def connections(self) -> pd.DataFrame:
        """One row per connection and data direction."""
        import pandas as pd

        return pd.DataFrame(self.summary["connections"])


def analyze_capture(
    path: str | Path,
    *,
    side: str = "auto",
    rto: str = "rfc6298",
    filter: str | None = None,
    collect: bool = True,
    packets: bool = False,
) -> AnalyzeResult:
    """Analyse ``path``. Raises ``ValueError`` with a one-line message for a file that is not
    a capture (or a bad option)."""
    from tcplab import _core

    raw = _core.analyze(
        str(path), side=side, rto=rto, filter=filter, collect=collect, packets=packets
    )
    import pandas as pd

    rtx = _frame(raw["retransmissions"])
    rtx["class_name"] = pd.Categorical.from_codes(rtx["class"], categories=raw["classes"])
    rtx["evidence_name"] = pd.Categorical.from_codes(rtx["evidence"], categories=raw["evidence"])
    return AnalyzeResult(
        summary=json.loads(raw["summary"]),
        retransmissions=rtx,
        rtt_samples=_frame(raw["rtt_samples"]),
        packets=_frame(raw["packets"]),
    )


def _table(conns: list[dict[str, Any]]) -> str:
    heads = (
        "conn",
        "dir",
        "from → to",
        "side",
        "MB",
        "goodput",
        "rtx",
        "fast",
        "rto",
        "gbn",
        "tlp",
        "STO",
        "unnec.",
        "srtt ms",
        "opts",
    )
    rows = []
    for c in conns:
        opts = ",".join(
            k
            for k, on in (
                ("sack", c["sack_permitted"]),
                ("ts", c["timestamps"]),
                (f"ws{c['wscale']}", c["wscale"] is not None),
            )
            if on
        )
        if not c["handshake"]:
            opts = (opts + " mid-stream").strip()
        rows.append(
            (
                str(c["conn"]),
                str(c["dir"]),
                f"{c['src']}:{c['sport']} → {c['dst']}:{c['dport']}",
                c["side"] or "",
                f"{c['bytes_unique'] / 1e6:.3f}",
                f"{c['goodput_bps'] / 1e6:.3f} Mb/s",
                str(c["retransmissions"]),
                str(c["fast_retransmits"]),
                str(c["rtos"]),
                str(c["go_back_n"]),
                str(c["tlp"]),
                f"{c['spurious_rtos']}/{c['rtos']}",
                str(c["spurious_retransmissions"]),
                f"{c['srtt_ms']:.0f}",
                opts,
            )
        )
    widths = [
        max(len(h), *(len(r[k]) for r in rows)) if rows else len(h) for k, h in enumerate(heads)
    ]

    def line(cells: tuple[str, ...]) -> str:
        return "  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip()

    return "\n".join([line(heads), *(line(r) for r in rows)])


def render(summary: dict[str, Any]) -> str:
    """The stdout table and the capture's totals."""
    s = summary
    skipped = ", ".join(f"{k} {v}" for k, v in s["skipped"].items() if v)
    notes = []
    if s["truncated_tail"]:
        notes.append("the file ends inside a packet (cut off): the partial packet was ignored")
    if s["corrupt"]:
        notes.append(f"reading stopped at a corrupt record: {s['corrupt']}")
    if s["midstream_connections"]:
        notes.append(
            f"{s['midstream_connections']} connection(s) started before the capture "
            "(no handshake: options unknown)"
        )
    uncertain = sum(1 for c in s["connections"] if c["side"] == "uncertain")
    if uncertain:
        notes.append(
            f"{uncertain} direction(s) with the capture point uncertain (no handshake, or "
            "handshake gaps too close to tell which end is near): verdicts that depend on the "
            "side are left undecided; give --side sender or --side receiver"
        )
    ups = s["unnecessary_per_sto"]
    out = [
        f"{s['file']}: {s['packets']} packets ({s['tcp_packets']} TCP) in {s['wall_s']:.3f} s"
        + (f"; skipped: {skipped}" if skipped else ""),
        *(f"note: {n}" for n in notes),
        _table(s["connections"]),
        f"STO per MB: {s['sto_per_mb']:.4f} ({s['spurious_rto_episodes']} spurious-timeout "
        f"episodes); unnecessary retransmissions per STO: "
        + (f"{ups:.2f}" if ups is not None else "n/a"),
    ]
    return "\n".join(out)


def write(res: AnalyzeResult, out: Path) -> None:
    """``summary.json`` and Parquet tables (connections, retransmissions, rtt_samples)."""
    import pyarrow as pa

    from tcplab.results import write_parquet

    out.mkdir(parents=True, exist_ok=True)
    write_parquet(
        pa.Table.from_pandas(res.connections, preserve_index=False), out / "connections.parquet"
    )
    write_parquet(
        pa.Table.from_pandas(res.retransmissions, preserve_index=False),
        out / "retransmissions.parquet",
    )
    write_parquet(
        pa.Table.from_pandas(res.rtt_samples, preserve_index=False), out / "rtt_samples.parquet"
    )
    # last: summary.json marks a complete output
    (out / "summary.json").write_text(json.dumps(res.summary, indent=2) + "\n")


#: The tables and figures ``tcplab analyze --out DIR [--plot]`` writes.
ANALYZE_TABLES = ("connections", "retransmissions", "rtt_samples")
_FIGURE = re.compile(r"conn\d+-dir\d+-(?:tseq|rtt)\.png")


def clear_outputs(out: Path) -> None:
    """Remove an earlier analysis's outputs from ``out`` (``summary.json`` first), so the
    directory never mixes two analyses; files that are not tcplab's stay."""
    if not out.is_dir():
        return
    (out / "summary.json").unlink(missing_ok=True)
    for name in ANALYZE_TABLES:
        (out / f"{name}.parquet").unlink(missing_ok=True)
    for path in out.iterdir():
        if _FIGURE.fullmatch(path.name) and path.is_file():
            path.unlink()
