"""The analysis wing's commands. ``tcplab analyze``: TCP trace analysis of pcap/pcapng captures;
the analysis is in :mod:`tcplab.analyze.capture`, the figures in :mod:`tcplab.analyze.plots`; see
``docs/analyze.md``. ``tcplab trace``: capacity trace files, the work in
:mod:`tcplab.analyze.tracefile`; see ``docs/traces.md``."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from tcplab.scenario.trace import TRACE_FORMATS

__all__ = ["add_parser", "add_trace_parser", "cmd_analyze", "cmd_trace"]


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


def add_trace_parser(sub: Any) -> None:
    """Register the ``trace`` subcommand on the CLI's subparsers."""
    p = sub.add_parser(
        "trace",
        help="capacity trace files: stats, plot, convert, synth",
        description='Capacity trace files for kind = "trace" hops (docs/traces.md), read by '
        "the simulator's own loader.",
    )
    cmds = p.add_subparsers(dest="trace_command", required=True, metavar="COMMAND")
    st = cmds.add_parser("stats", help="duration, mean and per-second rates, outages")
    pl = cmds.add_parser("plot", help="draw the capacity over time (PNG)")
    cv = cmds.add_parser("convert", help="convert between the mahimahi and csv formats")
    for c in (st, pl, cv):
        c.add_argument("file", metavar="FILE")
        c.add_argument("--format", choices=TRACE_FORMATS, default="mahimahi", help="of FILE")
    st.add_argument("--outage", type=float, default=0.5, help="outage gap, s (default 0.5)")
    st.add_argument("--json", action="store_true", help="print one JSON object")
    pl.add_argument("-o", "--out", metavar="PNG", help="default: FILE.png")
    cv.add_argument("-o", "--out", metavar="FILE", required=True)
    cv.add_argument("--to", choices=TRACE_FORMATS, required=True)
    sy = cmds.add_parser("synth", help="generate a Mahimahi trace (a random walk of the rate)")
    sy.add_argument("-o", "--out", metavar="FILE", required=True)
    sy.add_argument("--seconds", type=int, default=60)
    sy.add_argument("--peak", type=float, default=20.0, help="highest rate, Mbit/s")
    sy.add_argument("--seed", type=int, default=1)
    p.set_defaults(func=cmd_trace)


def cmd_trace(args: argparse.Namespace) -> int:
    """``tcplab trace stats|plot|convert|synth`` (docs/traces.md)."""
    # Imported here, not at the top: tracefile imports numpy, and every ``tcplab`` command
    # builds this command's parser.
    from tcplab.analyze import tracefile

    cmd = args.trace_command
    if cmd == "synth":
        if args.seconds < 1 or args.peak <= 0:
            raise ValueError("synth: --seconds must be >= 1 and --peak > 0")
        tracefile.write(
            tracefile.synth(args.seconds, args.peak * 1e6, args.seed), args.out, "mahimahi"
        )
        return 0
    tr = tracefile.load(args.file, args.format)
    if cmd == "stats":
        s = tracefile.stats(tr, int(args.outage * 1e9))
        if args.json:
            print(json.dumps(s))
            return 0
        r = s["per_second_mbps"]
        print(f"{args.file}: {s['duration_s']:.3f} s, {s['timestamps']} timestamps")
        print(f"  mean {s['mean_mbps']:.3f} Mbit/s")
        print(
            "  per second (Mbit/s): "
            + ", ".join(f"{k} {v:.2f}" for k, v in r.items()).replace("p0 ", "min ")
        )
        print(
            f"  outages (gaps >= {s['outage_threshold_s']:g} s): {s['outages']}, "
            f"{s['outage_total_s']:.2f} s in all, longest {s['outage_longest_s']:.2f} s"
        )
    elif cmd == "plot":
        out = args.out or f"{args.file}.png"
        tracefile.plot(tr, out, Path(args.file).name)
        print(out, file=sys.stderr)
    else:
        tracefile.write(tr, args.out, args.to)
    return 0
