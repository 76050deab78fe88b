"""A campaign's result store: a directory of Parquet files that outlives the process.

Layout::

    DIR/
      build=<tcplab version>-<core build id>/   one partition per simulator build
        part-<time>-<pid>-<n>.parquet            a batch of finished runs (one row per run and flow)
        tables/<run key>.events.parquet          a run's event/time-series columns, when asked for
        tables/<run key>.timeseries.parquet

Every file is written beside its final name and renamed into place (``os.replace``), so a process
killed at any instant leaves either the whole file or none of it; a file under construction has a
``.tmp`` name that readers ignore. A run is identified by its *key*: a hash of the normalised
configuration (which holds the seed), the seed, tcplab's version and the *core build id* (a hash
of the compiled simulator module). A run already in the store is read, not recomputed; a run made
by another version or build has another key and lives in another partition, so it is never mixed
in: :class:`Store` reads one build's partition unless asked for another or for all of them.

Rows (one per run and flow; a run without flows has one row with a null ``flow``):
``run_key``, ``tcplab_version``, ``core_build``, ``scenario``, ``seed``, ``flow``, ``flow_name``,
:data:`tcplab.campaign.single.FLOW_METRICS`, the labels the caller gave the run (``tcplab sweep``:
the ``--vary`` keys, as text), ``has_tables``, ``config`` and ``summary`` (JSON text).

The directory is plain Parquet with Hive-style partition names: DuckDB
(``read_parquet('DIR/*/*.parquet', hive_partitioning = true, union_by_name = true)``) and polars
(``pl.scan_parquet('DIR/*/*.parquet')``) read it directly; see ``docs/campaigns.md``.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tcplab.scenario.trace import resolved

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
    import polars as pl
    import pyarrow as pa

__all__ = [
    "RUN_COLUMNS",
    "Store",
    "StoreWriter",
    "build_tag",
    "core_build",
    "encode_run",
    "key_maker",
    "run_key",
]

#: The columns every row has, in order (labels follow the metrics).
RUN_COLUMNS = (
    "run_key",
    "tcplab_version",
    "core_build",
    "scenario",
    "seed",
    "flow",
    "flow_name",
)
_TAIL_COLUMNS = ("has_tables", "config", "summary")
_FLOAT_METRICS = frozenset({"goodput_bps", "duration_s"})
_PART = re.compile(r"^part-[0-9A-Za-z_-]+\.parquet$")
_BUILD_DIR = re.compile(r"^build=(.+)$")


@functools.cache
def core_build() -> str:
    """The compiled simulator's build id: the first 16 hex digits of the SHA-256 of the
    extension module's file (any rebuild that changes the machine code changes it)."""
    from tcplab import _core

    digest = hashlib.sha256()
    with open(_core.__file__, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()[:16]


@functools.cache
def _version() -> str:
    from tcplab.version import version

    return version()


def build_tag() -> str:
    """``<tcplab version>-<core build id>``: the partition this process's runs go to."""
    return f"{_version()}-{core_build()}"


def run_key(config: Mapping[str, Any], tag: str | None = None) -> str:
    """The store key of the run of ``config`` (a normalised configuration with its seed) made by
    build ``tag`` (default: this process's :func:`build_tag`)."""
    return key_maker(config, tag)(config.get("seed"))


def key_maker(config: Mapping[str, Any], tag: str | None = None) -> Callable[[Any], str]:
    """``seed → run_key({**config, "seed": seed}, tag)``, hashing the configuration once (a
    sweep's seeds share everything else): SHA-256 over the build tag, the canonical JSON of the
    configuration without its seed, and the seed; 32 hex digits."""
    rest = {k: v for k, v in config.items() if k not in ("seed", "base_dir")}
    head = hashlib.sha256(f"tcplab-run\n{tag or build_tag()}\n{_canonical(rest)}\n".encode())
    # The files the run reads count by their contents, not by where the checkout is.
    for path in resolved(config):
        head.update(f"file={_file_digest(str(path))}\n".encode())

    def key(seed: Any) -> str:
        h = head.copy()
        h.update(f"seed={json.dumps(seed)}".encode())
        return h.hexdigest()[:32]

    return key


def _file_digest(path: str) -> str:
    """SHA-256 of a file the run reads (``missing`` if it cannot be read: the run then fails
    with the core's message)."""
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
    except OSError:
        return "missing"
    return digest.hexdigest()


def _canonical(config: Mapping[str, Any]) -> str:
    return json.dumps(config, sort_keys=True, separators=(",", ":"))


def encode_run(config: Mapping[str, Any], summary: Mapping[str, Any]) -> tuple[str, str]:
    """The ``config`` and ``summary`` columns of a run: canonical JSON of the configuration and
    of the summary without its column tables."""
    plain = {
        k: v for k, v in summary.items() if not k.endswith("_table") and k not in _COLUMN_LISTS
    }
    # The stored configuration names files as the scenario wrote them, without the machine's
    # directory they were read from.
    portable = {k: v for k, v in config.items() if k != "base_dir"}
    return _canonical(portable), json.dumps(plain, sort_keys=True, separators=(",", ":"))


_COLUMN_LISTS = frozenset({"event_kinds", "reasons"})


def _fsync_replace(tmp: Path, final: Path) -> None:
    fd = os.open(tmp, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, final)


class Store:
    """A result store at ``path`` (created when missing), reading and writing the partition of
    build ``build`` (default: this process's :func:`build_tag`; ``"all"`` reads every build and
    cannot be written to).

    >>> store = Store("campaign")
    >>> df = store.to_pandas(where={"flows[0].cc": "cubic"})
    """

    def __init__(self, path: str | os.PathLike[str], build: str | None = None) -> None:
        self.path = Path(path)
        if self.path.exists() and not self.path.is_dir():
            raise NotADirectoryError(f"{self.path}: the store must be a directory")
        self.build = build or build_tag()
        if "/" in self.build or self.build in ("", ".", ".."):
            raise ValueError(f"store build {self.build!r}: not a partition name")

    def __repr__(self) -> str:
        return f"Store({str(self.path)!r}, build={self.build!r})"

    # -- layout ----------------------------------------------------------------------------

    @property
    def partition(self) -> Path:
        """The directory of this store's build."""
        return self.path / f"build={self.build}"

    def builds(self) -> dict[str, int]:
        """Every build in the store and its number of part files."""
        out: dict[str, int] = {}
        if not self.path.is_dir():
            return out
        for d in sorted(self.path.iterdir()):
            m = _BUILD_DIR.match(d.name)
            if m and d.is_dir():
                out[m.group(1)] = sum(1 for p in d.iterdir() if _PART.match(p.name))
        return out

    def files(self) -> list[Path]:
        """The finished part files of this store's build (all builds for ``"all"``), oldest
        first."""
        dirs = (
            [self.path / f"build={b}" for b in self.builds()]
            if self.build == "all"
            else [self.partition]
        )
        out: list[Path] = []
        for d in dirs:
            if d.is_dir():
                out += sorted(p for p in d.iterdir() if _PART.match(p.name))
        return out

    def writable(self) -> None:
        """Raise unless this process may add runs here (its build is this store's build)."""
        if self.build != build_tag():
            raise ValueError(
                f"store {self.path}: opened for build {self.build}, but this simulator is "
                f"build {build_tag()}; runs are only added to their own build's partition"
            )

    # -- reading -----------------------------------------------------------------------------

    def _read(self, path: Path, columns: list[str] | None) -> pa.Table:
        import pyarrow.parquet as pq

        if columns is None:
            return pq.read_table(path)
        have = set(pq.read_schema(path).names)
        return pq.read_table(path, columns=[c for c in columns if c in have])

    def iter_tables(self, columns: list[str] | None = None) -> Iterator[pa.Table]:
        """Each part file as a table (only ``columns`` that it has, when given), oldest first;
        memory is one file at a time."""
        for path in self.files():
            yield self._read(path, columns)

    def done(self) -> dict[str, bool]:
        """Key of every stored run of this build → whether its event/time-series tables are
        stored too."""
        import pyarrow.compute as pc

        out: dict[str, bool] = {}
        for t in self.iter_tables(["run_key", "has_tables"]):
            t = t.filter(pc.is_valid(t["run_key"]))
            for key, tables in zip(
                t["run_key"].to_pylist(), t["has_tables"].to_pylist(), strict=True
            ):
                out[key] = out.get(key, False) or bool(tables)
        return out

    def table(
        self,
        where: Mapping[str, str] | None = None,
        columns: list[str] | None = None,
        keys: pa.Array | pa.ChunkedArray | None = None,
    ) -> pa.Table:
        """Every stored row of this store's build(s) (each run once, however often it was
        stored), filtered by ``where`` (column → value; a value matches when its text or its
        number is equal) and to the runs whose key is in ``keys`` (when given). A ``where``
        key that no row has is an error naming the columns."""
        import pyarrow as pa
        import pyarrow.compute as pc

        where = dict(where or {})
        parts: list[pa.Table] = []
        seen_columns: set[str] = set()
        need = None if columns is None else [*dict.fromkeys([*columns, "run_key", *where])]
        if isinstance(keys, pa.ChunkedArray):
            keys = keys.combine_chunks()
        for t in self.iter_tables(need):
            seen_columns.update(t.column_names)
            for key, value in where.items():
                if key not in t.column_names:
                    t = t.slice(0, 0)
                    break
                t = t.filter(_matches(t[key], key, value))
            if t.num_rows:
                parts.append(t)
        unknown = [k for k in where if seen_columns and k not in seen_columns]
        if unknown:
            raise KeyError(
                f"--where {unknown[0]}: no such column (columns: {', '.join(sorted(seen_columns))})"
            )
        if not parts:
            return pa.table({c: pa.array([], pa.string()) for c in (columns or RUN_COLUMNS)})
        table = pa.concat_tables(parts, promote_options="permissive")
        if keys is not None:  # one lookup table for all files, not one per file
            table = table.filter(pc.is_in(table["run_key"], value_set=keys))
        # the same run stored twice (two campaigns at once, or a rerun racing a kill): keep the
        # first copy; the rows are equal, the simulation being deterministic (copies made by
        # different builds are different runs)
        multi = self.build == "all"  # one build's keys are unique to it
        index = pa.array(range(table.num_rows), pa.int64())
        table = table.append_column("__row", index)
        by = [
            c
            for c in ("run_key", "flow", *(("core_build", "tcplab_version") * multi))
            if c in table.column_names
        ]
        keyed = pa.table(
            {c: pc.fill_null(table[c], -1 if c == "flow" else "") for c in by} | {"__row": index}
        )
        first = keyed.group_by(by, use_threads=False).aggregate([("__row", "min")])
        keep = pc.is_in(index, value_set=first["__row_min"])
        table = table.filter(keep).drop_columns(["__row"])
        if columns is not None:
            table = table.select([c for c in columns if c in table.column_names])
        return table

    def to_pandas(
        self, where: Mapping[str, str] | None = None, columns: list[str] | None = None
    ) -> pd.DataFrame:
        """:meth:`table` as a pandas DataFrame."""
        return self.table(where, columns).to_pandas()

    def to_polars(
        self, where: Mapping[str, str] | None = None, columns: list[str] | None = None
    ) -> pl.DataFrame:
        """:meth:`table` as a polars DataFrame (needs ``pip install polars``)."""
        import polars as pl

        frame = pl.from_arrow(self.table(where, columns))
        assert isinstance(frame, pl.DataFrame)
        return frame

    def summaries(self, keys: Iterable[str]) -> dict[str, dict[str, Any]]:
        """The stored summary of each of ``keys`` that is in the store."""
        import pyarrow as pa
        import pyarrow.compute as pc

        wanted = pa.array(sorted(set(keys)), pa.string())
        out: dict[str, dict[str, Any]] = {}
        if not len(wanted):
            return out
        for t in self.iter_tables(["run_key", "summary"]):
            t = t.filter(pc.is_in(t["run_key"], value_set=wanted))
            for key, text in zip(t["run_key"].to_pylist(), t["summary"].to_pylist(), strict=True):
                if key not in out:
                    out[key] = json.loads(text)
        return out

    def tables_of(self, key: str) -> dict[str, Any] | None:
        """A stored run's ``events_table``, ``event_kinds``, ``reasons`` and
        ``timeseries_table`` (as :func:`tcplab.campaign.sweep.run_config` returns them with
        ``columns=True``), or None when they were not stored."""
        import pyarrow.parquet as pq

        base = self.partition / "tables"
        ev, ts = base / f"{key}.events.parquet", base / f"{key}.timeseries.parquet"
        if not (ev.is_file() and ts.is_file()):
            return None
        events = pq.read_table(ev)
        meta = json.loads((events.schema.metadata or {})[b"tcplab"])
        return {
            "events_table": _numpy_columns(events),
            "event_kinds": meta["event_kinds"],
            "reasons": meta["reasons"],
            "timeseries_table": _numpy_columns(pq.read_table(ts)),
        }

    # -- writing -----------------------------------------------------------------------------

    def writer(self, flush_runs: int = 256, flush_seconds: float = 0.5) -> StoreWriter:
        """A buffered writer: a part file every ``flush_runs`` runs or ``flush_seconds``
        seconds, whichever comes first, and at :meth:`StoreWriter.close`."""
        self.writable()
        return StoreWriter(self, flush_runs, flush_seconds)


def _matches(column: pa.ChunkedArray, key: str, value: str) -> pa.ChunkedArray:
    """``column == value`` for a ``--where`` value given as text: compared as text for text
    columns, as a number (or true/false) for numeric and boolean ones."""
    import pyarrow as pa
    import pyarrow.compute as pc

    kind = column.type
    if pa.types.is_boolean(kind):
        if value.lower() not in ("true", "false"):
            raise ValueError(f"--where {key}: {value!r} is not true or false")
        return pc.fill_null(pc.equal(column, value.lower() == "true"), False)
    if pa.types.is_integer(kind) or pa.types.is_floating(kind):
        try:
            number = float(value)
        except ValueError:
            raise ValueError(f"--where {key}: {value!r} is not a number") from None
        return pc.fill_null(pc.equal(pc.cast(column, pa.float64()), number), False)
    return pc.fill_null(pc.equal(pc.cast(column, pa.string()), value), False)


def _numpy_columns(table: pa.Table) -> dict[str, np.ndarray]:
    return {name: table[name].to_numpy() for name in table.column_names}


class StoreWriter:
    """Appends finished runs to a :class:`Store` (see :meth:`Store.writer`). Use as a context
    manager, or call :meth:`close`: runs still buffered at a crash are lost, never half-written."""

    def __init__(self, store: Store, flush_runs: int, flush_seconds: float) -> None:
        self.store = store
        self.flush_runs = max(1, flush_runs)
        self.flush_seconds = flush_seconds
        self._rows: list[dict[str, Any]] = []
        self._runs = 0
        self._since = time.monotonic()
        self._count = 0
        self.written = 0  # runs in files so far

    @property
    def buffered(self) -> int:
        """Runs waiting for the next part file."""
        return self._runs

    def due_in(self) -> float:
        """Seconds until the buffered runs are due to be written (0: now)."""
        return max(0.0, self.flush_seconds - (time.monotonic() - self._since))

    def __enter__(self) -> StoreWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def add(
        self,
        key: str,
        config: Mapping[str, Any],
        summary: Mapping[str, Any],
        labels: Mapping[str, Any] | None = None,
        texts: tuple[str, str] | None = None,
    ) -> None:
        """Buffer one finished run (``summary`` as :func:`tcplab.campaign.single.run_config` returns
        it; its column tables, when present, are written at once). ``texts``:
        :func:`encode_run` of the run when already made (by the worker that ran it)."""
        from tcplab.campaign.single import FLOW_METRICS

        has_tables = "events_table" in summary
        if has_tables:
            self._write_tables(key, summary)
        config_text, summary_text = texts or encode_run(config, summary)
        base: dict[str, Any] = {
            "run_key": key,
            "tcplab_version": _version(),
            "core_build": core_build(),
            "scenario": str(config.get("name", "")),
            "seed": int(config.get("seed", 0)),
        }
        tail = {
            **{str(k): None if v is None else str(v) for k, v in (labels or {}).items()},
            "has_tables": has_tables,
            "config": config_text,
            "summary": summary_text,
        }
        flows = summary.get("flows") or [None]
        for flow in flows:
            row = dict(base)
            row["flow"] = None if flow is None else int(flow["id"])
            row["flow_name"] = None if flow is None else str(flow["name"])
            for m in FLOW_METRICS:
                v = None if flow is None else flow.get(m)
                row[m] = None if v is None else (float(v) if m in _FLOAT_METRICS else int(v))
            row.update(tail)
            self._rows.append(row)
        self._runs += 1
        if self._runs >= self.flush_runs or time.monotonic() - self._since >= self.flush_seconds:
            self.flush()

    def _write_tables(self, key: str, summary: Mapping[str, Any]) -> None:
        import pyarrow as pa

        from tcplab.results import write_parquet

        base = self.store.partition / "tables"
        base.mkdir(parents=True, exist_ok=True)
        meta = {"event_kinds": list(summary["event_kinds"]), "reasons": list(summary["reasons"])}
        for name, column in (("events", "events_table"), ("timeseries", "timeseries_table")):
            table = pa.table(dict(summary[column]))
            if name == "events":
                table = table.replace_schema_metadata({"tcplab": json.dumps(meta)})
            final = base / f"{key}.{name}.parquet"
            tmp = base / f".{key}.{name}.{uuid.uuid4().hex}.tmp"
            write_parquet(table, tmp)
            _fsync_replace(tmp, final)

    def _schema(self) -> pa.Schema:
        import pyarrow as pa

        from tcplab.campaign.single import FLOW_METRICS

        fields = [
            pa.field("run_key", pa.string()),
            pa.field("tcplab_version", pa.string()),
            pa.field("core_build", pa.string()),
            pa.field("scenario", pa.string()),
            pa.field("seed", pa.int64()),
            pa.field("flow", pa.int64()),
            pa.field("flow_name", pa.string()),
            *(
                pa.field(m, pa.float64() if m in _FLOAT_METRICS else pa.int64())
                for m in FLOW_METRICS
            ),
        ]
        fixed = {f.name for f in fields} | set(_TAIL_COLUMNS)
        labels = dict.fromkeys(k for row in self._rows for k in row if k not in fixed)
        fields += [pa.field(k, pa.string()) for k in labels]
        fields += [
            pa.field("has_tables", pa.bool_()),
            pa.field("config", pa.string()),
            pa.field("summary", pa.string()),
        ]
        return pa.schema(fields)

    def flush(self) -> None:
        """Write the buffered runs as one part file (atomically)."""
        import pyarrow as pa

        from tcplab.results import write_parquet

        self._since = time.monotonic()
        if not self._rows:
            return
        schema = self._schema()
        table = pa.Table.from_pylist(self._rows, schema=schema)
        part = self.store.partition
        part.mkdir(parents=True, exist_ok=True)
        self._count += 1
        name = f"part-{time.time_ns()}-{os.getpid()}-{uuid.uuid4().hex[:8]}-{self._count}"
        tmp = part / f".{name}.tmp"
        write_parquet(table, tmp)
        _fsync_replace(tmp, part / f"{name}.parquet")
        self.written += self._runs
        self._rows = []
        self._runs = 0

    def close(self) -> None:
        """Flush what is buffered."""
        self.flush()
