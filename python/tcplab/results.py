"""The data one run produces, as tables (Arrow is canonical; pandas and polars views).

Tables:

- ``flows``: one row per flow, from the simulator's summary (see docs/outputs.md).
- ``links``: one row per link direction (``name``, ``dir``, ``tx_packets``, ...).
- ``cross``: one row per cross-traffic source.
- ``timeseries``: per-flow samples every ``sample_interval`` (cwnd, ssthresh, srtt, ...).
- ``events``: the event log (timeouts with their ground truth, retransmissions, ...); ``kind`` is
  categorical, and each row's raw ``reason`` code is decoded by its kind into ``reason_name``.

A traced run (``trace=True``) adds:

- ``segments``: every data segment the sender sends and the receiver gets, every ACK and SACK
  block the sender gets (the time-sequence graph's data).
- ``queues``: packets queued or in service per hop and direction every ``sample_interval``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator, Mapping
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
    import polars as pl
    import pyarrow as pa

# numpy and pyarrow are imported where tables are built, not at import time: a
# `tcplab run --json` never builds a table and starts faster without them.

__all__ = [
    "EVENT_COLUMNS",
    "QUEUE_COLUMNS",
    "SEGMENT_COLUMNS",
    "TABLES",
    "TIMESERIES_COLUMNS",
    "TRACE_TABLES",
    "RunResult",
]

TIMESERIES_COLUMNS = (
    "flow",
    "conn",
    "t_ns",
    "cwnd",
    "ssthresh",
    "srtt_ns",
    "rttvar_ns",
    "rto_ns",
    "inflight",
    "delivered",
)
EVENT_COLUMNS = (
    "t_ns",
    "flow",
    "conn",
    "kind",
    "seq",
    "len",
    "reason",
    "spurious",
    "detected",
    "value",
)
SEGMENT_COLUMNS = ("t_ns", "flow", "conn", "kind", "seq", "len", "sent_ns")
QUEUE_COLUMNS = ("t_ns", "hop", "dir", "packets")
TABLES = ("flows", "links", "cross", "timeseries", "events")
#: Tables a traced run (``tcplab.run(..., trace=True)``, ``tcplab run --plot``) adds.
TRACE_TABLES = ("segments", "queues")
#: Fields of the ``--json`` report besides the summary's own ``flows``/``links``/``cross``.
REPORT_FIELDS = ("events", "packets", "sim_time_s")

_PARQUET_OPTIONS: dict[str, Any] = {"compression": "zstd", "compression_level": 3}


def write_parquet(
    table: pa.Table, path: str | os.PathLike[str], row_group_size: int | None = None
) -> None:
    """Write ``table`` as Parquet with tcplab's options (the bytes depend only on the data)."""
    import pyarrow.parquet as pq

    pq.write_table(table, path, row_group_size=row_group_size, **_PARQUET_OPTIONS)


def _check_columns(columns: Mapping[str, Any], table: str, expected: tuple[str, ...]) -> None:
    """Check the raw columns without numpy: every expected column present, equal lengths
    (the item size is the digits of the dtype string, e.g. ``"<u8"`` → 8 bytes)."""
    missing = [name for name in expected if name not in columns]
    if missing:
        raise ValueError(f"{table}: missing columns {missing}")
    lengths = {
        name: len(data) // int("".join(c for c in dtype if c.isdigit()))
        for name, (dtype, data) in columns.items()
    }
    if len(set(lengths.values())) > 1:
        raise ValueError(f"{table}: columns have different lengths: {lengths}")


def decode_columns(
    columns: Mapping[str, Any], table: str, expected: tuple[str, ...]
) -> dict[str, np.ndarray]:
    """``{name: (dtype string, little-endian bytes)}`` → ``{name: native numpy array}``, the
    ``expected`` columns first in their documented order, any others after them."""
    _check_columns(columns, table, expected)
    order = [*expected, *(name for name in columns if name not in expected)]
    import numpy as np

    arrays: dict[str, np.ndarray] = {}
    for name in order:
        dtype, data = columns[name]
        array = np.frombuffer(data, dtype=np.dtype(dtype))
        arrays[name] = array.astype(array.dtype.newbyteorder("="), copy=False)
    return arrays


def _rows_table(rows: list[dict[str, Any]]) -> pa.Table:
    """Summary rows → a table with the union of their keys (first-seen order); a key a row
    lacks is null there. (Rows from different kinds of hop need not share every field.)"""
    import pyarrow as pa

    keys = list(dict.fromkeys(key for row in rows for key in row))
    return pa.table({key: [row.get(key) for row in rows] for key in keys})


#: What an event row's raw ``reason`` code names, by event kind (crates/tcplab-sim/src/output.rs
#: documents each kind's code). ``None``: the code is the retransmission reason
#: (``RunResult.reasons``, RtxReason). Kinds not listed carry a number or nothing there (a
#: ``timeout`` row's code is its backoff count) and get no name.
REASON_NAMES_BY_KIND: dict[str, tuple[str, ...] | None] = {
    "retransmit": None,
    "fast_retransmit": None,
    "enter_recovery": ("fast_recovery", "sack"),
    "established": ("sender", "receiver"),
    "drop_queue": ("data", "ack"),
    "drop_loss": ("data", "ack"),
    "detector_verdict": ("finished", "no_window", "dupack", "other", "genuine"),
    "spurious_fr_detected": ("kept", "undone"),
    "tlp": ("new_data", "retransmission", "repaired"),
    "rack_loss": ("ack", "timer"),
}


def _reason_names(
    kinds: np.ndarray, codes: np.ndarray, event_kinds: list[str], reasons: list[str]
) -> pa.DictionaryArray:
    """The ``reason_name`` column: each row's raw code decoded by its kind
    (:data:`REASON_NAMES_BY_KIND`), null where the kind's code is not a name or is out of range."""
    import numpy as np
    import pyarrow as pa

    names: list[str] = []
    lut = np.full((max(len(event_kinds), 1), 256), -1, dtype=np.int16)
    for k, kind in enumerate(event_kinds):
        if kind not in REASON_NAMES_BY_KIND:
            continue
        listed = REASON_NAMES_BY_KIND[kind]
        for code, name in enumerate(reasons if listed is None else listed):
            if name not in names:
                names.append(name)
            lut[k, code] = names.index(name)
    k_idx = kinds.astype(np.int64)
    ok = (k_idx >= 0) & (k_idx < lut.shape[0])
    idx = np.full(len(kinds), -1, dtype=np.int16)
    idx[ok] = lut[k_idx[ok], codes.astype(np.int64)[ok]]
    return pa.DictionaryArray.from_arrays(
        pa.array(idx, type=pa.int16(), mask=idx < 0), pa.array(names, type=pa.string())
    )


def _categorical(codes: np.ndarray, categories: list[str], column: str) -> pa.DictionaryArray:
    import numpy as np
    import pyarrow as pa

    if len(set(categories)) != len(categories):
        raise ValueError(f"{column}: category names are not unique: {categories}")
    indices = codes.astype(np.int16)
    if len(indices) and (indices.min() < 0 or indices.max() >= len(categories)):
        raise ValueError(f"{column}: code out of range 0..{len(categories) - 1}")
    return pa.DictionaryArray.from_arrays(
        pa.array(indices, type=pa.int16()), pa.array(categories, type=pa.string())
    )


#: Rows per Parquet row group (Arrow's default): a spilled table is written in groups of this
#: size, so its file is the one an in-memory table of the same rows gives.
ROW_GROUP = 1 << 20
#: Rows per Parquet row group of the trace tables (``segments``, ``queues``): a figure reads
#: them a row group at a time, so a long run's trace is drawn in pieces of this size.
TRACE_ROW_GROUP = 1 << 16
#: Rows the simulator holds before it spills a table (``output.rs``: ``SPILL_ROWS``).
_SPILL_ROWS = 1 << 16

#: Record layouts of the files a long run spills its tables to (``output.rs``: ``TS_RECORD``,
#: ``EV_RECORD``): packed little-endian, in the tables' column order. (The segment trace and
#: queue samples, below,
_SPILL_DTYPES: dict[str, list[tuple[str, str]]] = {
    "timeseries": [
        ("flow", "<u4"),
        ("conn", "<u4"),
        ("t_ns", "<i8"),
        ("cwnd", "<u8"),
        ("ssthresh", "<u8"),
        ("srtt_ns", "<i8"),
        ("rttvar_ns", "<i8"),
        ("rto_ns", "<i8"),
        ("inflight", "<u8"),
        ("delivered", "<u8"),
    ],
    "events": [
        ("t_ns", "<i8"),
        ("flow", "<u4"),
        ("conn", "<u4"),
        ("kind", "<u1"),
        ("seq", "<u8"),
        ("len", "<u4"),
        ("reason", "<u1"),
        ("spurious", "<i1"),
        ("detected", "<i1"),
        ("value", "<f8"),
    ],
}
#: ``SEG_RECORD``, ``Q_RECORD``) hold the trace tables' raw columns the same way.
_SPILL_DTYPES["segments"] = [
    ("t_ns", "<i8"),
    ("flow", "<u4"),
    ("conn", "<u4"),
    ("kind", "<u1"),
    ("seq", "<u8"),
    ("len", "<u4"),
    ("sent_ns", "<i8"),
]
_SPILL_DTYPES["queues"] = [("t_ns", "<i8"), ("hop", "<u4"), ("dir", "<u1"), ("packets", "<u8")]
#: Rows per piece when a table is read in pieces (:meth:`RunResult.batches`).
BATCH_ROWS = 1 << 16
#: The time series' rate columns, in runs that have them (``Output::ts_rates``).
_SPILL_RATE_DTYPES: list[tuple[str, str]] = [
    ("pacing_rate_bps", "<u8"),
    ("delivery_rate_bps", "<u8"),
]


def events_table(ev: Mapping[str, np.ndarray], kinds: list[str], reasons: list[str]) -> pa.Table:
    """The event log as written (``kind`` categorical, ``reason_name`` appended): a simulated
    run's, and the emulator's tcplab endpoint's (``tcplab.real.emu``)."""
    import pyarrow as pa

    columns: dict[str, Any] = {}
    for name, a in ev.items():
        columns[name] = _categorical(a, kinds, name) if name == "kind" else a
    # appended, so the raw columns keep their order (EVENT_COLUMNS)
    columns["reason_name"] = _reason_names(ev["kind"], ev["reason"], kinds, reasons)
    return pa.table(columns)


#: What draws :meth:`RunResult.plot`'s figures: :func:`tcplab.report.runplot.plot_run`. The
#: report wing sits above this module and imports it, so the package (``tcplab/__init__.py``)
#: sets this when it is imported, before any result exists.
PLOT_RUN: Callable[..., list[Path]] | None = None


class RunResult:
    """The outcome of one run: the summary and the tables.

    ``summary`` is the simulator's summary dict; ``scenario``, ``seed``, ``wall_s`` (wall-clock
    seconds of the simulation) and ``config`` (the normalized configuration that ran) describe
    the run.
    """

    def __init__(
        self,
        summary: dict[str, Any],
        timeseries: Mapping[str, np.ndarray] | None,
        events: Mapping[str, np.ndarray] | None,
        event_kinds: list[str],
        reasons: list[str],
        *,
        scenario: str,
        seed: int,
        wall_s: float = 0.0,
        config: dict[str, Any] | None = None,
        raw: Mapping[str, Any] | None = None,
    ) -> None:
        self.summary = summary
        self._raw = raw
        #: Tables whose first rows the simulator spilled to a file: name → (path, rows).
        self._spilled: dict[str, tuple[str, int]] = dict(raw.get("spilled", {})) if raw else {}
        self._written: Path | None = None
        #: Trace tables in Parquet files not read yet (a run read back with :meth:`read`).
        self._trace_files: dict[str, Path] = {}
        if timeseries is not None:
            self._timeseries = dict(timeseries)
        if events is not None:
            self._events = dict(events)
        self.event_kinds = list(event_kinds)
        self.reasons = list(reasons)
        self.scenario = scenario
        self.seed = seed
        self.wall_s = wall_s
        self.config = config
        #: What made this run (:func:`tcplab.runner.run` fills it in); ``summary.json`` records it.
        self.provenance: dict[str, Any] | None = None

    @property
    def traced(self) -> bool:
        """Whether the run recorded the segment trace and queue samples (``trace=True``)."""
        if self._raw is None and "_arrow" in self.__dict__:
            return "segments" in self._trace_files or "segments" in self.__dict__["_arrow"]
        return bool(self.config and self.config.get("trace"))

    @property
    def spilled(self) -> bool:
        """Whether the simulator spilled a table to a file (:meth:`write` turns it into Parquet;
        until then the table cannot be read)."""
        return bool(self._spilled)

    @classmethod
    def read(cls, out_dir: str | os.PathLike[str]) -> RunResult:
        """Load what :meth:`write` wrote into ``out_dir`` (``summary.json`` and the Parquet
        tables; a traced run's ``segments`` and ``queues`` when present)."""
        import pyarrow.parquet as pq

        out = Path(out_dir)
        summary_path = out / "summary.json"
        if not summary_path.is_file():
            raise FileNotFoundError(f"{out}: no summary.json (not a `tcplab run --out` directory)")
        summary = json.loads(summary_path.read_text("utf-8"))
        tables = {}
        trace_files = {}
        for name in (*TABLES, *TRACE_TABLES):
            path = out / f"{name}.parquet"
            if name in TRACE_TABLES:
                # read when asked for (or in pieces, batches()): a long run's trace is large
                if path.is_file():
                    trace_files[name] = path
            elif path.is_file():
                tables[name] = pq.read_table(path)
            else:
                raise FileNotFoundError(f"{path}: missing (written by `tcplab run --out`)")
        result = cls(
            summary,
            None,
            None,
            [],
            [],
            scenario=str(summary.get("scenario", out.name)),
            seed=int(summary.get("seed", 0)),
        )
        result.__dict__["_arrow"] = tables
        result._trace_files = trace_files
        return result

    @classmethod
    def from_core(
        cls,
        raw: Mapping[str, Any],
        *,
        scenario: str,
        seed: int,
        wall_s: float = 0.0,
        config: dict[str, Any] | None = None,
    ) -> RunResult:
        """Build from the dict ``tcplab._core.run`` returns."""
        if not raw["summary"]:
            raise ValueError("the simulator returned no summary")
        _check_columns(raw["timeseries"], "timeseries", TIMESERIES_COLUMNS)
        _check_columns(raw["events"], "events", EVENT_COLUMNS)
        return cls(
            json.loads(raw["summary"]),
            None,
            None,
            list(raw["event_kinds"]),
            list(raw["reasons"]),
            scenario=scenario,
            seed=seed,
            wall_s=wall_s,
            config=config,
            raw=raw,
        )

    @cached_property
    def _timeseries(self) -> dict[str, np.ndarray]:
        assert self._raw is not None
        return decode_columns(self._raw["timeseries"], "timeseries", TIMESERIES_COLUMNS)

    @cached_property
    def _events(self) -> dict[str, np.ndarray]:
        assert self._raw is not None
        return decode_columns(self._raw["events"], "events", EVENT_COLUMNS)

    def __repr__(self) -> str:
        flows = len(self.summary.get("flows", []))
        return f"<RunResult {self.scenario!r} seed={self.seed} flows={flows}>"

    # -- Arrow (canonical) ----------------------------------------------------------------------

    @cached_property
    def _arrow(self) -> dict[str, pa.Table]:
        tables = {name: self._table(name) for name in TABLES}
        if self._has_trace:
            tables.update({name: self._trace_table(name) for name in TRACE_TABLES})
        return tables

    def _arrow_table(self, name: str) -> pa.Table | None:
        """One table as Arrow, or None if the run has no such table (an untraced run's trace
        tables); a trace table read back from its file is read now, once. Only this table is
        built: the others (a long run's segment trace) are not read for it."""
        import pyarrow.parquet as pq

        if name in self._trace_files:
            self._arrow[name] = pq.read_table(self._trace_files.pop(name))
        if "_arrow" in self.__dict__:
            return self._arrow.get(name)
        if name in TRACE_TABLES:
            return self._trace_table(name) if self._has_trace else None
        return self._table(name)

    @property
    def _has_trace(self) -> bool:
        """The run recorded the segment trace (``trace=True``)."""
        return self.traced and self._raw is not None and "segments" in self._raw

    def _table(self, name: str) -> pa.Table:
        """One table as Arrow (see :data:`TABLES`)."""
        import pyarrow as pa

        if name in ("flows", "links", "cross"):
            return _rows_table(self.summary.get(name, []))
        if name in self._spilled:
            return self._read_spilled(name)
        if name == "timeseries":
            return pa.table(self._timeseries)
        return events_table(self._events, self.event_kinds, self.reasons)

    def _read_spilled(self, name: str) -> pa.Table:
        """A spilled table, read back from the Parquet file write() made of it."""
        import pyarrow.parquet as pq

        if self._written is None:
            raise RuntimeError(f"{name}: a spilled table is read after write()")
        return pq.read_table(self._written / f"{name}.parquet", memory_map=True)

    def _file(self, name: str) -> Path | None:
        """The Parquet file table ``name`` is to be read from, if it is not in memory."""
        if name in self._trace_files:
            return self._trace_files[name]
        if name in self._spilled and self._written is not None:
            return self._written / f"{name}.parquet"
        return None

    def batches(self, name: str, columns: list[str] | None = None) -> Iterator[pd.DataFrame]:
        """Table ``name`` (``columns`` of it) in pieces of at most :data:`BATCH_ROWS` rows, in
        order, as pandas DataFrames: a table on disk (a long run's trace) is read piece by
        piece, never whole. Raises ValueError if the run has no such table."""
        path = self._file(name)
        if path is not None:
            import pyarrow.parquet as pq

            # without pre-buffering, which would read ahead the whole file's column chunks
            with pq.ParquetFile(path, pre_buffer=False) as f:
                for batch in f.iter_batches(
                    batch_size=BATCH_ROWS, columns=columns, use_threads=False
                ):
                    yield batch.to_pandas()
            return
        table = self._arrow_table(name)
        if table is None:
            raise ValueError(f"no {name} table in this run")
        if columns is not None:
            table = table.select(columns)
        for batch in table.to_batches(max_chunksize=BATCH_ROWS):
            yield batch.to_pandas()

    def _held(self, name: str) -> dict[str, np.ndarray]:
        """The rows of table ``name`` the simulator still held in memory (after its spill)."""
        if name == "timeseries":
            return self._timeseries
        if name == "events":
            return self._events
        assert self._raw is not None
        expected = SEGMENT_COLUMNS if name == "segments" else QUEUE_COLUMNS
        return decode_columns(self._raw[name], name, expected)

    def _chunks(self, name: str) -> Iterator[dict[str, np.ndarray]]:
        """A spilled table in pieces of one Parquet row group (:func:`_row_group`): the rows in
        its spill file, then those the simulator still held in memory."""
        import numpy as np

        path, spilled = self._spilled[name]
        held = self._held(name)
        layout = _SPILL_DTYPES[name]
        if name == "timeseries" and "pacing_rate_bps" in held:
            layout = layout + _SPILL_RATE_DTYPES  # output.rs: the rate columns follow
        if name == "queues" and "delay_ns" in held:
            layout = [*layout, ("delay_ns", "<i8")]  # output.rs: a managed queue's delay
        dtype = np.dtype(layout)
        total = spilled + len(next(iter(held.values())))
        group = _row_group(name)
        for start in range(0, total, group):
            stop = min(start + group, total)
            cols = {c: np.empty(stop - start, dtype=a.dtype) for c, a in held.items()}
            pos = 0
            # From the file in slices of SPILL_ROWS records, so a row group's columns are the
            # only full-size copy in memory.
            for first in range(start, min(stop, spilled), _SPILL_ROWS):
                n = min(_SPILL_ROWS, min(stop, spilled) - first)
                rec = np.fromfile(path, dtype=dtype, count=n, offset=first * dtype.itemsize)
                for c, col in cols.items():
                    col[pos : pos + n] = rec[c]
                pos += n
            if stop > spilled:
                lo = max(start, spilled) - spilled
                for c, col in cols.items():
                    col[pos:] = held[c][lo : stop - spilled]
            yield cols

    def _write_spilled(self, name: str, path: Path) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        writer = None
        try:
            for chunk in self._chunks(name):
                if name == "timeseries":
                    table = pa.table(chunk)
                elif name == "events":
                    table = events_table(chunk, self.event_kinds, self.reasons)
                else:
                    table = self._trace_columns(name, chunk)
                if writer is None:
                    writer = pq.ParquetWriter(path, table.schema, **_PARQUET_OPTIONS)
                writer.write_table(table, row_group_size=_row_group(name))
        finally:
            if writer is not None:
                writer.close()

    def _trace_table(self, name: str) -> pa.Table:
        """``segments`` or ``queues`` of a traced run (read back from its Parquet file if
        the simulator spilled it)."""
        if name in self._spilled:
            return self._read_spilled(name)
        return self._trace_columns(name, self._held(name))

    def _trace_columns(self, name: str, cols: Mapping[str, np.ndarray]) -> pa.Table:
        """``segments`` (``kind`` categorical) or ``queues`` (``dir`` categorical, ``link``
        the hop's name) from raw columns."""
        import numpy as np
        import pyarrow as pa

        assert self._raw is not None
        if name == "segments":
            seg_cols: dict[str, Any] = dict(cols)
            kinds = list(self._raw["segment_kinds"])
            seg_cols["kind"] = _categorical(cols["kind"], kinds, "kind")
            return pa.table(seg_cols)
        q = cols
        hop_names = [str(h.get("name", i)) for i, h in enumerate((self.config or {})["hops"])]
        names = np.array(hop_names, dtype=object)
        q_cols: dict[str, Any] = {
            "t_ns": q["t_ns"],
            "hop": q["hop"],
            "link": pa.array(
                names[q["hop"].astype(np.int64)] if len(q["hop"]) else [], pa.string()
            ),
            "dir": _categorical(q["dir"], ["fwd", "rev"], "dir"),
            "packets": q["packets"],
        }
        if "delay_ns" in q:
            # Runs with a managed queue (`aqm`): its queueing delay; null for the others.
            d = q["delay_ns"]
            q_cols["delay_ms"] = pa.array(d / 1e6, pa.float64(), mask=d < 0)
        return pa.table(q_cols)

    def to_arrow(self) -> dict[str, pa.Table]:
        """``{"flows", "links", "cross", "timeseries", "events"}`` (and ``"segments"``,
        ``"queues"`` for a traced run) → pyarrow Tables."""
        for name in TRACE_TABLES:
            self._arrow_table(name)
        return dict(self._arrow)

    # -- pandas -------------------------------------------------------------------------------

    def _pandas(self, name: str) -> pd.DataFrame:
        table = self._arrow_table(name)
        assert table is not None, name
        return table.to_pandas()

    @cached_property
    def flows(self) -> pd.DataFrame:
        return self._pandas("flows")

    @cached_property
    def links(self) -> pd.DataFrame:
        return self._pandas("links")

    @cached_property
    def cross(self) -> pd.DataFrame:
        return self._pandas("cross")

    @cached_property
    def timeseries(self) -> pd.DataFrame:
        return self._pandas("timeseries")

    @cached_property
    def events(self) -> pd.DataFrame:
        return self._pandas("events")

    @cached_property
    def segments(self) -> pd.DataFrame:
        """The segment trace (a traced run only; see the module docstring)."""
        table = self._arrow_table("segments")
        if table is None:
            raise ValueError("no segment trace: run with trace=True (tcplab run --plot)")
        return table.to_pandas()

    @cached_property
    def queues(self) -> pd.DataFrame:
        """Queue samples per hop and direction (a traced run only)."""
        table = self._arrow_table("queues")
        if table is None:
            raise ValueError("no queue samples: run with trace=True (tcplab run --plot)")
        return table.to_pandas()

    def plot(
        self,
        out: str | os.PathLike[str] | None = None,
        *,
        flows: list[int] | None = None,
        window: tuple[float, float] | None = None,
    ) -> list[Path]:
        """Draw this run's figures as PNG (:func:`tcplab.report.runplot.plot_run`): per flow a
        time-sequence graph (a traced run), cwnd/ssthresh/in flight, SRTT/RTO and goodput; per link
        queue and drops. ``out`` is a directory (default: the current one); ``flows`` selects flows
        by id; ``window`` = (start, end) in seconds zooms every time axis. Returns the files."""
        assert PLOT_RUN is not None, "set when the tcplab package is imported"
        return PLOT_RUN(self, Path(out or "."), flows=flows, window=window)

    # -- polars ---------------------------------------------------------------------------------

    def to_polars(self) -> dict[str, pl.DataFrame]:
        """The tables as polars DataFrames (needs ``pip install 'tcplab[polars]'``)."""
        try:
            import polars as pl
        except ImportError as err:
            raise ImportError("to_polars() needs polars: pip install 'tcplab[polars]'") from err
        return {name: pl.from_arrow(table) for name, table in self.to_arrow().items()}  # type: ignore[misc]

    # -- reports and files ----------------------------------------------------------------------

    def report(self) -> dict[str, Any]:
        """The ``tcplab run --json`` object."""
        out: dict[str, Any] = {"scenario": self.scenario, "seed": self.seed}
        for key in ("flows", "links", "cross"):
            out[key] = self.summary.get(key, [])
        if self.summary.get("pings"):
            out["pings"] = self.summary["pings"]
        notes = self.summary.get("invariants", {}).get("notes")
        if notes:
            # Why bytes were not delivered (summary.json has them as invariants.notes).
            out["notes"] = notes
        out["wall_s"] = self.wall_s
        for key in REPORT_FIELDS:
            out[key] = self.summary.get(key)
        return out

    def write(self, out_dir: str | os.PathLike[str]) -> list[Path]:
        """Write ``summary.json`` and one Parquet file per table into ``out_dir``.

        The bytes depend only on the run's data (no wall time, no timestamps), so the same
        scenario and seed give identical files. Each file is written under a temporary name
        and renamed into place; ``summary.json`` comes last and marks the output complete.
        """
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        paths = []
        try:
            trace = TRACE_TABLES if self._has_trace else ()
            for name in (*TABLES, *trace):
                path = out / f"{name}.parquet"
                tmp = out / f".{name}.parquet.tmp"
                if name in self._spilled:
                    self._write_spilled(name, tmp)
                elif name in trace:
                    write_parquet(self._trace_table(name), tmp, TRACE_ROW_GROUP)
                else:
                    write_parquet(self._table(name), tmp)
                os.replace(tmp, path)
                paths.append(path)
            summary = {"scenario": self.scenario, "seed": self.seed, **self.summary}
            if summary.get("pcaps"):
                # Captures inside the output directory by their name there, so the same run in
                # two directories gives the same bytes.
                summary["pcaps"] = [_relative_to(p, out) for p in summary["pcaps"]]
            if self.provenance is not None:
                summary["provenance"] = self.provenance
            text = json.dumps(summary, indent=2, ensure_ascii=False) + "\n"
            tmp = out / ".summary.json.tmp"
            tmp.write_text(text, "utf-8")
            os.replace(tmp, out / "summary.json")
        finally:
            for leftover in out.glob(".*.tmp"):
                leftover.unlink(missing_ok=True)
        self._written = out
        self.discard_spill()
        return [out / "summary.json", *paths]

    def discard_spill(self) -> None:
        """Delete the files the simulator spilled tables to (after :meth:`write`)."""
        for path, _ in self._spilled.values():
            Path(path).unlink(missing_ok=True)


def _row_group(name: str) -> int:
    """Rows per Parquet row group of table ``name`` (whether or not it was spilled, so a
    spilled table's file is the one the same rows in memory give)."""
    return TRACE_ROW_GROUP if name in TRACE_TABLES else ROW_GROUP


def _relative_to(path: str, out: Path) -> str:
    """``path`` relative to ``out`` when it lies inside it, else as given."""
    try:
        return Path(path).absolute().relative_to(out.absolute()).as_posix()
    except ValueError:
        return path
