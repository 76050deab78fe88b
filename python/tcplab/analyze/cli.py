"""``tcplab analyze``: TCP trace analysis of pcap/pcapng captures, the command. The analysis is
in :mod:`tcplab.analyze.capture`, the figures in :mod:`tcplab.analyze.plots`; see
``docs/analyze.md``."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

__all__ = ["add_parser", "cmd_analyze"]


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


def cmd_analyze(args: argparse.Namespace) -> int:
    """``tcplab analyze``: exit 0, or 2 (raised as ``ValueError``) for a non-capture."""
    # Imported here, not at the top: every ``tcplab`` command builds this command's parser.
    from tcplab.analyze.capture import analyze_capture, clear_outputs, render, write

    if not (args.out or args.plot):
        # Summary only: no tables, no pandas.
        from tcplab import _core

        raw = _core.analyze(args.capture, side=args.side, rto=args.rto, filter=args.filter)
        summary = json.loads(raw["summary"])
        print(json.dumps(summary) if args.json else render(summary))
        return 0
    if args.out:
        clear_outputs(Path(args.out))
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
        from tcplab.analyze.plots import draw_all

        for f in draw_all(res, out or Path(".")):
            if not args.json:
                print(f"wrote {f}")
    return 0
