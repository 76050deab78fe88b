"""``tcplab analyze``: TCP trace analysis of pcap/pcapng captures.

The analysis runs in Rust (``tcplab._core.analyze``, crate ``tcplab-trace``); this module
turns its output into tables, JSON, Parquet and figures. See ``docs/analyze.md``.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["AnalyzeResult", "add_parser", "analyze_capture", "cmd_analyze"]


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


def add_parser(sub: Any) -> None:
    """Register the ``analyze`` subcommand on the CLI's subparsers."""
    p = sub.add_parser(
        "analyze",
        help="analyse a pcap/pcapng capture: retransmissions by class, spurious RTOs",
        description="Analyse TCP in a pcap or pcapng capture: per connection and direction, "
        "bytes, goodput, handshake options, RTT and RTO, retransmissions by class (fast "
        "retransmit, fast recovery, RTO, go-back-N, tail-loss probe) and, for every "
        "retransmission, spurious or genuine with the evidence used.",
    )
    p.add_argument("capture", metavar="CAPTURE", help="pcap or pcapng file")
    p.add_argument("--out", metavar="DIR", help="write summary.json and Parquet tables to DIR")
    p.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    p.add_argument(
        "--plot", action="store_true", help="draw PNG figures per connection (into --out or .)"
    )
    p.add_argument(
        "--side",
        choices=("sender", "receiver", "auto"),
        default="auto",
        help="where the capture was taken relative to the data sender (default: from the "
        "handshake timing)",
    )
    p.add_argument(
        "--rto",
        choices=("rfc6298", "linux"),
        default="rfc6298",
        help="RTO model the RTT samples feed (RFC 6298: min 1 s; linux: min 200 ms)",
    )
    p.add_argument(
        "--filter",
        metavar="CONN",
        help="only this connection: a port, #INDEX or ADDR:PORT-ADDR:PORT",
    )
    p.set_defaults(func=cmd_analyze)


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


def cmd_analyze(args: argparse.Namespace) -> int:
    """``tcplab analyze``: exit 0, or 2 (raised as ``ValueError``) for a non-capture."""
    if not (args.out or args.plot):
        # Summary only: no tables, no pandas.
        from tcplab import _core

        raw = _core.analyze(args.capture, side=args.side, rto=args.rto, filter=args.filter)
        summary = json.loads(raw["summary"])
        print(json.dumps(summary) if args.json else render(summary))
        return 0
    res = analyze_capture(
        args.capture,
        side=args.side,
        rto=args.rto,
        filter=args.filter,
        collect=bool(args.out or args.plot),
        packets=bool(args.plot),
    )
    if args.json:
        print(json.dumps(res.summary))
    else:
        print(render(res.summary))
    out = Path(args.out) if args.out else None
    if out is not None:
        write(res, out)
    if args.plot:
        from tcplab.analyze_plots import draw_all

        for f in draw_all(res, out or Path(".")):
            if not args.json:
                print(f"wrote {f}")
    return 0


def write(res: AnalyzeResult, out: Path) -> None:
    """``summary.json`` and Parquet tables (connections, retransmissions, rtt_samples)."""
    import pyarrow as pa

    from tcplab.results import write_parquet

    out.mkdir(parents=True, exist_ok=True)
    (out / "summary.json").write_text(json.dumps(res.summary, indent=2) + "\n")
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
