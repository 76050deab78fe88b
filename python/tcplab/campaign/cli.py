"""``tcplab results``: export and summarise the runs in a result store (the store is
:mod:`tcplab.campaign.store`, the campaigns that fill it :mod:`tcplab.campaign.run`). Apart
from the campaign engine so that building the ``tcplab`` parser does not import it."""

from __future__ import annotations

from typing import Any

__all__ = ["add_results_command"]


def add_results_command(sub: Any) -> None:
    """Register ``tcplab results`` on the CLI's subparsers."""
    res = sub.add_parser(
        "results",
        help="export and summarise the runs in a result store",
        description="Read the runs of a result store (tcplab sweep/reproduce --store DIR): print "
        "goodput and loss-recovery counts per scenario, labels and flow, and optionally write "
        "the rows (one per run and flow) to a Parquet or CSV file. Reads this tcplab build's "
        "runs unless --build says otherwise.",
    )
    res.add_argument("dir", metavar="DIR", help="the store directory")
    res.add_argument(
        "--where",
        action="append",
        default=[],
        metavar="KEY=V",
        help="keep rows whose column KEY equals V (text, or a number for numeric columns), "
        "e.g. flows[0].cc=cubic or seed=3; repeatable (all must hold)",
    )
    res.add_argument("--out", metavar="FILE", help="write the rows to FILE (.parquet or .csv)")
    res.add_argument(
        "--build",
        metavar="TAG",
        help="read the runs of build TAG (VERSION-BUILDID, as listed), or 'all' for every "
        "build (rows carry tcplab_version and core_build); default: this tcplab's build",
    )
    res.set_defaults(func=_cmd_results)


#: Columns that are not labels (everything else a row has is a label given by its campaign).
_NOT_LABELS = frozenset(
    {"has_tables", "config", "summary", "run_key", "tcplab_version", "core_build", "seed"}
)


def _cmd_results(args: Any) -> int:
    import sys
    from pathlib import Path

    import pyarrow.compute as pc

    from tcplab.campaign.run import open_store
    from tcplab.campaign.single import FLOW_METRICS
    from tcplab.campaign.summary import sweep_summary, write_rows
    from tcplab.errors import ScenarioError

    path = Path(args.dir)
    if not path.is_dir():
        raise ScenarioError(f"{args.dir}: not a directory (a result store is a directory)")
    out = Path(args.out) if args.out else None
    if out is not None and out.suffix not in (".parquet", ".csv"):
        raise ScenarioError(f"--out: must end in .parquet or .csv (got {args.out})")
    where: dict[str, str] = {}
    for item in args.where:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ScenarioError(f"--where {item!r}: expected KEY=VALUE, e.g. seed=3")
        where[key.strip()] = value.strip()
    store = open_store(args.dir, args.build)
    builds = store.builds()
    if args.build and args.build != "all" and args.build not in builds:
        raise ScenarioError(
            f"--build {args.build}: not in {args.dir} (builds: {', '.join(builds) or 'none'})"
        )
    others = [b for b in builds if b != store.build and store.build != "all"]
    if others:
        print(
            f"note: {args.dir} also holds runs of other builds ({', '.join(others)}), not read "
            "here: --build TAG or --build all reads them",
            file=sys.stderr,
        )
    try:
        table = store.table(where)
    except (KeyError, ValueError) as err:
        raise ScenarioError(str(err.args[0])) from None
    if out is not None:
        write_rows(table, out)
    if table.num_rows == 0:
        print(
            f"no runs in {args.dir} for build {store.build}"
            + (" matching --where" if where else "")
        )
        return 0
    labels = [
        c
        for c in table.column_names
        if c not in _NOT_LABELS and c not in FLOW_METRICS and c not in ("flow", "flow_name")
    ]
    if store.build == "all":  # never average one build's runs with another's
        labels = ["tcplab_version", "core_build", *labels]
    view = table.select([*labels, "flow", "flow_name", *FLOW_METRICS])
    view = view.filter(pc.is_valid(view["flow"]))
    rows = (r for b in view.to_batches(max_chunksize=8192) for r in b.to_pylist())
    print(sweep_summary(rows, labels))
    runs = len(pc.unique(table["run_key"]))
    print(f"\n{runs} runs, {table.num_rows} rows (build {store.build})")
    if out is not None:
        print(f"wrote {table.num_rows} rows to {out}")
    return 0
