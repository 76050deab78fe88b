"""Run many simulations: a local process pool (the default), deterministic result order.

Each job is a normalized configuration (``Scenario.to_config()``, possibly edited); the result of
each is its summary dict, plus the event and time-series columns when asked for. Results come
back in job order whatever the pool does, so a sweep with the same seeds gives the same output.

>>> from tcplab.sweep import run_configs
>>> summaries = run_configs([cfg_a, cfg_b], jobs=2)
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any

__all__ = ["default_jobs", "run_config", "run_configs"]


def default_jobs() -> int:
    """Worker processes for sweeps: ``TCPLAB_JOBS`` or the number of CPUs."""
    env = os.environ.get("TCPLAB_JOBS")
    if env:
        return max(1, int(env))
    return max(1, os.cpu_count() or 1)


def run_config(config: dict[str, Any], columns: bool = False) -> dict[str, Any]:
    """Run one normalized configuration; returns the summary (with ``"events"`` and
    ``"timeseries"`` as numpy column dicts when ``columns``). Raises on invariant violations."""
    from tcplab import _core
    from tcplab.errors import InvariantError

    raw = _core.run(json.dumps(config), None)
    summary = json.loads(raw["summary"])
    violations = summary["invariants"]["violations"]
    if violations:
        raise InvariantError(violations)
    if columns:
        from tcplab.results import EVENT_COLUMNS, TIMESERIES_COLUMNS, _decode_columns

        summary["events_table"] = _decode_columns(raw["events"], "events", EVENT_COLUMNS)
        summary["event_kinds"] = list(raw["event_kinds"])
        summary["reasons"] = list(raw["reasons"])
        summary["timeseries_table"] = _decode_columns(
            raw["timeseries"], "timeseries", TIMESERIES_COLUMNS
        )
    return summary


def _job(args: tuple[dict[str, Any], bool]) -> dict[str, Any]:
    return run_config(*args)


def run_configs(
    configs: Sequence[dict[str, Any]] | Iterable[dict[str, Any]],
    jobs: int | None = None,
    columns: bool = False,
) -> list[dict[str, Any]]:
    """Run every configuration, ``jobs`` at a time (default :func:`default_jobs`); results in
    input order."""
    configs = list(configs)
    jobs = default_jobs() if jobs is None else jobs
    if jobs <= 1 or len(configs) <= 1:
        return [run_config(c, columns) for c in configs]
    with ProcessPoolExecutor(max_workers=min(jobs, len(configs))) as pool:
        chunk = max(1, len(configs) // (jobs * 8))
        return list(pool.map(_job, [(c, columns) for c in configs], chunksize=chunk))
