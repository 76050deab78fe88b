"""The command-line side of plots and HTML pages: ``tcplab plot``, ``tcplab run --plot`` and the
HTML pages of ``tcplab run --out`` and ``tcplab reproduce`` (kept out of ``cli.py`` so that file
only holds the hooks)."""

from __future__ import annotations

import argparse
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tcplab.errors import ScenarioError, show

if TYPE_CHECKING:
    from tcplab.report.checks import Report
    from tcplab.results import RunResult

__all__ = ["add_parser", "add_run_options", "after_run", "reproducing", "write_index"]


def add_run_options(run: argparse.ArgumentParser) -> None:
    """``tcplab run --plot``."""
    run.add_argument(
        "--plot",
        action="store_true",
        help="record the segment trace and queue samples and draw the run's figures as PNG "
        "(into --out DIR, or the current directory); report.html embeds them",
    )


def add_parser(sub: Any) -> None:
    """``tcplab plot DIR [--flow N] [--out FILE|DIR] [--window START:END]``."""
    p = sub.add_parser(
        "plot",
        help="draw the figures of a run's outputs",
        description="Draw the figures of a `tcplab run --out DIR` directory: per flow the "
        "time-sequence graph and each timeout zoomed (runs made with --plot), cwnd/ssthresh/in "
        "flight, SRTT/RTO and goodput; per link the queue and the drops. Writes PNG files and "
        "report.html.",
    )
    p.add_argument("dir", metavar="DIR", help="a directory written by `tcplab run --out`")
    p.add_argument(
        "--flow", type=int, action="append", metavar="N", help="only flow N (repeatable)"
    )
    p.add_argument(
        "--out",
        metavar="FILE|DIR",
        help="a directory for the PNG files and report.html (default: DIR), or one FILE.png "
        "(the first figure: flow N's time-sequence graph) or FILE.html (a page with every figure)",
    )
    p.add_argument(
        "--window",
        metavar="START:END",
        help="zoom every time axis to START..END (seconds or values with units, e.g. 40s:50s)",
    )
    p.set_defaults(func=cmd_plot)


def _window(text: str | None) -> tuple[float, float] | None:
    if text is None:
        return None
    from tcplab.scenario.units import parse_time

    a, sep, b = text.partition(":")
    if not sep:
        raise ScenarioError(f"--window: must be START:END (got {show(text)})")

    def secs(v: str) -> float:
        try:
            return float(v)
        except ValueError:
            return parse_time(v, "--window") / 1e9

    t0, t1 = secs(a), secs(b)
    if not 0 <= t0 < t1:
        raise ScenarioError(f"--window: must be 0 <= START < END (got {show(text)})")
    return t0, t1


def cmd_plot(args: argparse.Namespace) -> int:
    import tempfile

    from tcplab.report.html import write_run_report
    from tcplab.report.runplot import plot_run
    from tcplab.results import RunResult

    src = Path(args.dir)
    if not src.is_dir():
        raise ScenarioError(f"{show(args.dir)}: not a directory")
    result = RunResult.read(src)
    window = _window(args.window)
    out = Path(args.out) if args.out else src
    try:
        if out.suffix in (".png", ".html"):
            with tempfile.TemporaryDirectory() as tmp:
                paths = plot_run(result, Path(tmp), flows=args.flow, window=window)
                out.parent.mkdir(parents=True, exist_ok=True)
                if out.suffix == ".png":
                    out.write_bytes(paths[0].read_bytes())
                else:
                    page = write_run_report(result, Path(tmp), paths)
                    out.write_bytes(page.read_bytes())
            print(f"wrote {out}")
            return 0
        out.mkdir(parents=True, exist_ok=True)
        paths = plot_run(result, out, flows=args.flow, window=window)
    except ValueError as err:
        raise ScenarioError(str(err)) from None
    write_run_report(result, out, paths)
    if not result.traced:
        print("note: no segment trace in this run (made without --plot): no time-sequence graph")
    print(f"wrote {len(paths)} figures and report.html to {out}")
    return 0


def after_run(args: argparse.Namespace, result: RunResult) -> list[Path]:
    """After ``tcplab run``: the figures (``--plot``) and ``report.html`` (``--out``)."""
    paths: list[Path] = []
    if args.plot:
        from tcplab.report.runplot import plot_run

        paths = plot_run(result, Path(args.out or "."))
    if args.out:
        from tcplab.report.html import write_run_report

        hint = "" if args.plot else "Run with --plot (or `tcplab plot DIR`) for the figures."
        write_run_report(result, Path(args.out), paths, hint=hint)
    return paths


@contextmanager
def reproducing(report: Report, jobs: int | None) -> Iterator[None]:
    """Around one reproduction: record its seeds and run time into ``report.provenance``
    (shown in its report.html)."""
    from tcplab.campaign.sweep import default_jobs, record_seeds
    from tcplab.report.html import provenance, seed_ranges

    start = time.perf_counter()
    with record_seeds() as seeds:
        yield
    report.provenance = provenance(
        **{
            "mode": "quick" if report.quick else "full",
            "seeds": seed_ranges(seeds),
            "run time": f"{time.perf_counter() - start:.1f} s wall",
            "worker processes": jobs or default_jobs(),
        },
        **report.provenance,
    )


def write_index(out: Path, reports: list[Report]) -> Path:
    """``index.html`` of ``tcplab reproduce all``."""
    from tcplab.report.html import provenance
    from tcplab.report.html import write_index as write

    entries = [
        (
            r.paper,
            r.title,
            r.out_dir / "report.html",
            r.comparisons,
            {
                "figures": len(r.figures),
                "seeds": r.provenance.get("seeds"),
                "run time": r.provenance.get("run time"),
            },
        )
        for r in reports
    ]
    quick = {r.quick for r in reports}
    return write(out, entries, provenance(mode="quick" if quick == {True} else "full"))
