"""One run of a normalized configuration (:func:`run_config`), and what every way of running
many shares: the per-flow metrics a row carries, the default number of workers, stopping a
process pool, how a varied key's values appear in rows, and the record of the seeds run."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from typing import Any

__all__ = [
    "FLOW_METRICS",
    "column_values",
    "default_jobs",
    "note_seeds",
    "record_seeds",
    "run_config",
    "stop_pool",
]

#: Open :func:`record_seeds` collections (a reproduction's provenance lists its seeds).
_SEED_SINKS: list[set[int]] = []


@contextmanager
def record_seeds() -> Iterator[set[int]]:
    """Collect the seed of every configuration :func:`run_config`/:func:`run_configs` runs
    (from this process) while the block runs."""
    sink: set[int] = set()
    _SEED_SINKS.append(sink)
    try:
        yield sink
    finally:
        _SEED_SINKS.remove(sink)


def note_seeds(configs: Iterable[dict[str, Any]]) -> None:
    if _SEED_SINKS:
        seeds = {int(c["seed"]) for c in configs if "seed" in c}
        for sink in _SEED_SINKS:
            sink.update(seeds)


#: Per-flow summary fields a sweep row carries (all of them numeric).
FLOW_METRICS = (
    "goodput_bps",
    "bytes_delivered",
    "duration_s",
    "segments_sent",
    "retransmitted_segments",
    "fast_retransmits",
    "timeouts",
    "spurious_timeouts",
    "spurious_detected",
)


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

    note_seeds([config])
    # Only the summary is needed unless the columns are asked for.
    record = {"timeseries": columns, "events": columns}
    raw = _core.run(json.dumps({**config, "record": record}), None)
    summary = json.loads(raw["summary"])
    violations = summary["invariants"]["violations"]
    if violations:
        raise InvariantError(violations)
    if columns:
        from tcplab.results import EVENT_COLUMNS, TIMESERIES_COLUMNS, decode_columns

        summary["events_table"] = decode_columns(raw["events"], "events", EVENT_COLUMNS)
        summary["event_kinds"] = list(raw["event_kinds"])
        summary["reasons"] = list(raw["reasons"])
        summary["timeseries_table"] = decode_columns(
            raw["timeseries"], "timeseries", TIMESERIES_COLUMNS
        )
    return summary


def quiet_worker() -> None:
    """Pool worker initializer: the campaign's process decides what a signal means. A forked
    worker inherits the command line's handlers; with them, Ctrl-C (SIGINT reaches the whole
    process group) and :func:`stop_pool`'s SIGTERM each printed a traceback per worker. A worker
    ignores SIGINT (the campaign stops the pool) and takes the default action for the others."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for name in ("SIGTERM", "SIGHUP", "SIGQUIT"):
        signal.signal(getattr(signal, name), signal.SIG_DFL)


def stop_pool(pool: ProcessPoolExecutor) -> None:
    """Interrupted (Ctrl-C, SIGTERM), failed or broken (a worker killed): stop the workers now
    rather than let them finish their queue, and reap them (a broken pool's surviving workers
    could otherwise keep the process from exiting)."""
    import threading
    from concurrent.futures import InvalidStateError

    def quiet(args: threading.ExceptHookArgs) -> None:
        # The pool's manager thread, finding its workers gone, marks every pending future
        # broken, including the ones shutdown() just cancelled: CPython 3.11 then raises
        # InvalidStateError in that thread (a traceback on stderr). Nothing is lost.
        if args.exc_type is not InvalidStateError:
            previous(args)

    previous, threading.excepthook = threading.excepthook, quiet
    try:
        procs = list((getattr(pool, "_processes", None) or {}).values())
        for proc in procs:
            proc.terminate()
        for proc in procs:
            # A worker still starting (forked, its initializer not yet run) can swallow the
            # SIGTERM in an inherited handler and go on to run a job: kill it.
            proc.join(timeout=5)
            if proc.is_alive():
                proc.kill()
        pool.shutdown(wait=True, cancel_futures=True)
    finally:
        threading.excepthook = previous


def column_values(values: list[str]) -> dict[str, Any]:
    """How a varied key's values appear in the rows: numbers when every value is a TOML number
    (so the column is numeric), else the text as given."""
    from tcplab.scenario.parse import parse_literal

    parsed = [parse_literal(v) for v in values]
    if all(isinstance(x, int | float) and not isinstance(x, bool) for x in parsed):
        as_float = any(isinstance(x, float) for x in parsed)
        return {v: float(x) if as_float else x for v, x in zip(values, parsed, strict=True)}
    return {v: v for v in values}
