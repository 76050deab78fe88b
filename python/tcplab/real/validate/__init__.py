"""``tcplab validate linux``: the real Linux TCP stack over tcplab's emulator against tcplab's
simulator on the same scenario (``run``: the matrix, one case, the report; ``netlab``: the
namespaces and the emulator; ``endpoints``: the bulk-transfer programs; ``compare``: the
matching tcplab scenario and the measurements)."""

from __future__ import annotations

import argparse
from pathlib import Path

#: ``--stack`` choices: the ``stack = "linux"`` profile (the default: tcplab's most faithful
#: model of Linux), the matched settings (tcplab's RFC mechanisms — NewReno/SACK recovery, no
#: PRR, RACK or HyStart — set up like the testbed's Linux: they answer how much of the
#: difference to Linux those Linux-specific mechanisms make), or tcplab's own defaults with
#: Linux's MSS and initial window.
STACKS = ("linux", "matched", "default")


def add_arguments(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--quick", action="store_true", help="one Linux run and 5 seeds per case, 10 s")
    ap.add_argument("--out", type=Path, help="output directory (matrix: out/validation-linux)")
    ap.add_argument(
        "--case",
        action="append",
        default=[],
        metavar="cc=C,rate=R,rtt=T,loss=P,queue=N[,aqm=A,ecn=0|1]",
        help="run this case instead of the matrix (repeatable; keys optional; aqm: the data "
        "queue's discipline, ecn=1: ECN at both ends and in the discipline)",
    )
    ap.add_argument(
        "--runs", type=int, metavar="N", help="Linux runs per case (default 5, quick 1)"
    )
    ap.add_argument(
        "--stack",
        choices=STACKS,
        default=None,
        help='tcplab\'s TCP settings: linux (the stack = "linux" profile, default), matched '
        "(tcplab's RFC mechanisms set up like the testbed's Linux) or default (tcplab's "
        "defaults); --random compares linux and matched unless this names one",
    )
    ap.add_argument(
        "--random",
        type=int,
        metavar="N",
        help="draw N cases at random from the parameter space (see --space) instead of the matrix",
    )
    ap.add_argument(
        "--seed", type=int, default=1, metavar="S", help="seed of the --random draw (default 1)"
    )
    ap.add_argument(
        "--space",
        type=Path,
        metavar="FILE",
        help="TOML file that narrows or widens --random's parameter space",
    )
    ap.add_argument("--json", action="store_true", help="one JSON object per case and line")
    ap.add_argument(
        "--extra",
        action="store_true",
        help="add the extra cases: rates 2/50 Mbit/s, RTT 10/250 ms, a quarter-BDP queue",
    )
    ap.add_argument(
        "--independent-seeds",
        action="store_true",
        help="tcplab seeds 1..10 instead of the Linux runs' emulator seeds (paired, default)",
    )
    ap.add_argument(
        "--linux-cache",
        type=Path,
        metavar="DIR",
        help="store each Linux run in DIR and reuse stored runs (re-run only tcplab's side)",
    )
