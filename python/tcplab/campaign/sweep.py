"""Run many simulations: a local process pool (the default), deterministic result order.

:func:`sweep` (``tcplab sweep``) runs one scenario over a grid of overrides and seeds and returns
one row per run and flow.

Each job is a normalized configuration (``Scenario.to_config()``, possibly edited); the result of
each is its summary dict, plus the event and time-series columns when asked for. Results come
back in job order whatever the pool does, so a sweep with the same seeds gives the same output.

>>> from tcplab.campaign.sweep import run_configs
>>> summaries = run_configs([cfg_a, cfg_b], jobs=2)
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import TYPE_CHECKING, Any

from tcplab.campaign.single import (
    FLOW_METRICS,
    default_jobs,
    quiet_worker,
    record_seeds,
    run_config,
    stop_pool,
)
from tcplab.campaign.single import column_values as _column_values
from tcplab.campaign.single import note_seeds as _note_seeds

if TYPE_CHECKING:
    import pyarrow as pa

    from tcplab.campaign.store import Store

__all__ = [
    "FLOW_METRICS",
    "default_jobs",
    "parse_vary",
    "record_seeds",
    "run_config",
    "run_configs",
    "store_sweep",
    "sweep",
]


def _noted(configs: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """``configs``, each one's seed noted as it is taken (a lazily iterated campaign)."""
    for c in configs:
        _note_seeds([c])
        yield c


def _job(args: tuple[dict[str, Any], bool]) -> dict[str, Any]:
    return run_config(*args)


def run_configs(
    configs: Sequence[dict[str, Any]] | Iterable[dict[str, Any]],
    jobs: int | None = None,
    columns: bool = False,
    store: Store | None = None,
    cluster: Any = None,
    progress: bool = False,
) -> list[dict[str, Any]]:
    """Run every configuration, ``jobs`` at a time (default :func:`default_jobs`); results in
    input order.

    ``store``: a :class:`tcplab.campaign.store.Store` that runs are read from when already there and
    written to as they finish; ``cluster``: a Dask scheduler address (or client) to run on
    (see :mod:`tcplab.campaign.run`). Both default to what :func:`tcplab.campaign.run.use` set
    (``tcplab reproduce --store/--cluster``)."""
    from tcplab.campaign import run as campaign

    default_store, default_cluster, stats = campaign.defaults()
    store = default_store if store is None else store
    cluster = default_cluster if cluster is None else cluster
    if store is not None or cluster is not None:
        jobs_in = (campaign.Job(c, tag=i) for i, c in enumerate(_noted(configs)))
        found: dict[int, dict[str, Any]] = {}
        for job, summary in campaign.execute(
            jobs_in,
            jobs=jobs,
            cluster=cluster,
            store=store,
            columns=columns,
            progress=progress,
            stats=stats,
        ):
            found[job.tag] = summary
        return [found[i] for i in range(len(found))]
    configs = list(configs)
    _note_seeds(configs)
    jobs = default_jobs() if jobs is None else jobs
    if jobs <= 1 or len(configs) <= 1:
        return [run_config(c, columns) for c in configs]
    pool = ProcessPoolExecutor(max_workers=min(jobs, len(configs)), initializer=quiet_worker)
    try:
        chunk = max(1, len(configs) // (jobs * 8))
        results = list(pool.map(_job, [(c, columns) for c in configs], chunksize=chunk))
    except BaseException:
        stop_pool(pool)
        raise
    pool.shutdown()
    return results


def _split_top(text: str) -> list[str]:
    """Split on commas outside brackets, braces and quotes (so TOML arrays and inline tables
    stay whole); a backslash in a "..." string escapes the next character, as in TOML."""
    parts: list[str] = []
    depth, quote, escaped, cur = 0, "", False, []
    for ch in text:
        if escaped:  # the character after a backslash in a "..." string (TOML escapes)
            escaped = False
        elif quote == '"' and ch == "\\":
            escaped = True
        elif quote:
            quote = "" if ch == quote else quote
        elif ch in "\"'":
            quote = ch
        elif ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
            continue
        cur.append(ch)
    parts.append("".join(cur).strip())
    return parts


def parse_vary(items: Sequence[str]) -> list[tuple[str, list[str]]]:
    """``KEY=V1,V2,...`` strings → ``[(KEY, [V1, V2, ...])]`` in the given order (values stay
    text; they are read like ``--set`` values). Raises ``ValueError`` naming the bad item."""
    from tcplab.errors import ScenarioError

    out: list[tuple[str, list[str]]] = []
    for item in items:
        key, sep, text = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ScenarioError(
                f"--vary {item!r}: expected KEY=V1,V2,..., e.g. flows[0].cc=reno,cubic"
            )
        values = _split_top(text)
        if any(v == "" for v in values):
            raise ScenarioError(f"--vary {key}: empty value in {text!r}")
        if any(k == key for k, _ in out):
            raise ScenarioError(f"--vary {key}: given twice")
        out.append((key, values))
    return out


def sweep(
    data: dict[str, Any],
    vary: Sequence[tuple[str, Sequence[str]]],
    seeds: Sequence[int],
    source: str = "<dict>",
    jobs: int | None = None,
    store: Store | None = None,
    cluster: Any = None,
    progress: bool = False,
) -> list[dict[str, Any]]:
    """Run the scenario table ``data`` (as read from TOML, ``--set`` already applied) at every
    point of the grid ``vary`` (the Cartesian product, first key slowest) and every seed.

    Every point is validated before anything runs (a bad value fails the whole sweep with the
    field named). Returns one row per run and flow, in grid, seed, flow order: the varied keys
    (numbers when all of a key's values are TOML numbers, else their text), ``seed``, ``flow``,
    ``flow_name``, and :data:`FLOW_METRICS`.

    With a ``store`` the grid is walked lazily and runs stream to the store (see
    :func:`tcplab.campaign.run.sweep_table`, which returns the same rows as an Arrow table without
    ever holding a campaign's worth of Python objects); ``cluster`` runs on Dask."""
    import itertools

    if store is not None:
        from tcplab.campaign.run import sweep_table

        table = sweep_table(data, vary, seeds, store, source, jobs, cluster, progress)
        return table.to_pylist()

    from tcplab.errors import ScenarioError
    from tcplab.scenario.parse import apply_overrides, parse_scenario

    if not seeds:
        raise ScenarioError("--seeds: must be ≥ 1 (got 0)")
    keys = [k for k, _ in vary]
    points = list(itertools.product(*[list(v) for _, v in vary]))
    configs: list[dict[str, Any]] = []
    meta: list[tuple[tuple[str, ...], int]] = []
    for point in points:
        sets = [f"{k}={v}" for k, v in zip(keys, point, strict=True)]
        table = apply_overrides(data, sets)
        where = ", ".join(sets)
        try:
            scenario = parse_scenario(table, source)
        except ScenarioError as err:
            if where:
                err.message = f"{err.message} (at {where})"
            raise
        for seed in seeds:
            configs.append(scenario.to_config(seed=seed))
            meta.append((point, seed))
    results = run_configs(configs, jobs=jobs, cluster=cluster, progress=progress)
    typed = {k: _column_values(list(v)) for k, v in vary}
    rows: list[dict[str, Any]] = []
    for (point, seed), summary in zip(meta, results, strict=True):
        for flow in summary["flows"]:
            row: dict[str, Any] = {k: typed[k][v] for k, v in zip(keys, point, strict=True)}
            row["seed"] = seed
            row["flow"] = flow["id"]
            row["flow_name"] = flow["name"]
            for m in FLOW_METRICS:
                row[m] = flow[m]
            rows.append(row)
    return rows


def store_sweep(
    args: Any,
    data: dict[str, Any],
    vary: Sequence[tuple[str, Sequence[str]]],
    seeds: Sequence[int],
    source: str,
) -> pa.Table | list[dict[str, Any]]:
    """``tcplab sweep`` with ``--store`` (rows as an Arrow table read from the store) or with
    ``--cluster`` only (rows as :func:`tcplab.campaign.sweep.sweep` returns them)."""
    import sys

    from tcplab.campaign.run import Stats, open_store, sweep_table

    progress = sys.stderr.isatty()
    if not args.store:
        return sweep(data, vary, seeds, source, args.jobs, cluster=args.cluster, progress=progress)
    store = open_store(args.store)
    stats = Stats()
    table = sweep_table(
        data, vary, seeds, store, source, args.jobs, args.cluster, progress, stats=stats
    )
    print(
        f"store {store.path}: {stats.total} runs, {stats.computed} computed, "
        f"{stats.stored} already stored",
        file=sys.stderr,
    )
    return table
