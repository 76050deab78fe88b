"""Run a scenario in the simulator (``tcplab._core``) and collect the result."""

from __future__ import annotations

import json
import os
import re
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from tcplab.errors import InvariantError, ScenarioError
from tcplab.results import TABLES, TRACE_TABLES, RunResult
from tcplab.scenario.parse import Scenario, core_error, load_scenario

__all__ = ["run"]

ProgressCallback = Callable[[float], None]


def _core() -> ModuleType:
    try:
        from tcplab import _core
    except ImportError as err:
        raise ImportError(
            "the simulator extension tcplab._core is not built: install tcplab with `pip install .`"
        ) from err
    return _core


class _ProgressBar:
    """A tqdm bar on stderr that appears only once a run has taken more than 2 s."""

    def __init__(self, label: str) -> None:
        from tqdm import tqdm

        self._bar = tqdm(
            total=100,
            desc=label,
            delay=2,
            file=sys.stderr,
            leave=False,
            bar_format="{desc}: {percentage:3.0f}%|{bar}| [{elapsed}<{remaining}]",
        )

    def __call__(self, fraction: float) -> None:
        self._bar.update(min(max(fraction, 0.0), 1.0) * 100 - self._bar.n)

    def close(self) -> None:
        self._bar.close()


def _prepare_out(out: Path) -> None:
    """Create ``out`` and make sure it is writable before the run (not after it); remove a
    previous run's outputs there first, so an interrupted run never looks complete."""
    try:
        out.mkdir(parents=True, exist_ok=True)
        earlier = _earlier_captures(out)
        (out / "summary.json").unlink(missing_ok=True)  # the completion marker goes first
        for name in (*TABLES, *TRACE_TABLES):
            (out / f"{name}.parquet").unlink(missing_ok=True)
        # An output directory holds one run: the earlier run's captures, figures and page go
        # too, so none of them is taken for this run's.
        for path in earlier:
            path.unlink(missing_ok=True)
            path.with_name(path.name + ".incomplete").unlink(missing_ok=True)
        (out / "report.html").unlink(missing_ok=True)
        for path in out.iterdir():
            if _RUN_FIGURE.fullmatch(path.name) and path.is_file():
                path.unlink()
        probe = out / ".tcplab-write-test"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as err:
        raise OSError(f"{out}: cannot write the outputs there: {err.strerror or err}") from None


#: The figures ``tcplab run --plot`` draws into the output directory (report/runplot.py).
_RUN_FIGURE = re.compile(r"flow\d+-(?:tseq|episodes|state)\.png|link\d+-[^/]+\.png")


#: Bytes of one time-series row in the simulator's spill file (output.rs: TS_RECORD).
_TS_ROW_BYTES = 72
#: A time series that may take more disk than this while the run writes it is announced.
TIME_SERIES_WARN_BYTES = 1 << 30


def time_series_bytes(config: dict[str, Any]) -> int:
    """The most disk the run's time series can take while it is written: one row per flow per
    ``sample_interval`` for the whole ``duration`` (fewer while a flow has no connection)."""
    interval = int(config["sample_interval_ns"])
    if interval <= 0:
        return 0
    rows = (int(config["duration_ns"]) // interval + 1) * len(config["flows"])
    return rows * _TS_ROW_BYTES


def _warn_time_series(config: dict[str, Any]) -> None:
    """Nothing is bounded silently: a time series of many gigabytes (a million hours sampled
    every 100 ms) is what was asked for, so it runs, but says so first."""
    size = time_series_bytes(config)
    if size > TIME_SERIES_WARN_BYTES:
        print(
            f"tcplab: warning: the time series may take up to {size / 1e9:,.1f} GB on disk "
            f"(one row per flow every sample_interval for the whole duration); "
            f"sample_interval = 0 records none",
            file=sys.stderr,
        )


def _earlier_captures(out: Path) -> list[Path]:
    """The captures an earlier run in ``out`` wrote there (its ``summary.json`` lists them)."""
    try:
        listed = json.loads((out / "summary.json").read_text("utf-8")).get("pcaps") or []
    except (OSError, ValueError, AttributeError):
        return []
    paths = []
    for name in listed:
        path = out / str(name)  # relative names are in out; absolute ones stay absolute
        if path.resolve().parent == out.resolve():
            paths.append(path)
    return paths


def _mark_incomplete(config: dict[str, Any]) -> None:
    """After an interrupted run, rename each capture to ``<file>.incomplete`` (the simulator
    writes it as ``.<file>.part`` and renames it itself when it stops early; this covers an
    interruption after it finished, while the other outputs are written)."""
    for pcap in config.get("pcap", []):
        path = Path(pcap["path"])
        if path.exists():
            os.replace(path, path.with_name(path.name + ".incomplete"))


def run(
    scenario: Scenario | str | os.PathLike[str] | None = None,
    seed: int | None = None,
    out: str | os.PathLike[str] | None = None,
    progress: bool | ProgressCallback = False,
    *,
    tables: bool = True,
    trace: bool = False,
    command: Sequence[str] | None = None,
    scratch: str | os.PathLike[str] | None = None,
) -> RunResult:
    """Run ``scenario`` (a :class:`Scenario`, a TOML path, a built-in name; None = p2p-bulk).

    ``seed`` overrides the scenario's seed. With ``out``, the tables and ``summary.json`` are
    written there (and relative pcap files go there); ``summary.json`` is written last and
    marks a complete output. ``progress=True`` shows a progress bar on stderr for runs longer
    than 2 s; a callable receives the fraction of simulated time done. ``tables=False``
    records only the summary (no time series or event log; memory stays flat however long the
    run), and is refused with ``out``.

    With ``out``, ``summary.json`` records what made the run (``provenance``: tcplab's version,
    the simulator core's, the git commit of the source tree, the scenario table as run, with
    every override and the seed applied, its SHA-256, and ``command``, the command line without
    its ``--out``, when given).

    ``trace=True`` also records every data segment, ACK and SACK block and samples each hop's
    queue (the ``segments`` and ``queues`` tables, which :meth:`RunResult.plot` draws); it
    changes no other output.

    ``scratch`` (without ``out``): a directory (the caller's, to remove) the tables stream to
    and are read back from in pieces (:meth:`RunResult.batches`), instead of being held in
    memory; ``tcplab run --plot`` without ``--out`` draws a long run's figures this way.

    An invalid configuration raises :class:`ScenarioError` naming the scenario's source. An
    interrupted run (KeyboardInterrupt, or SIGTERM under the CLI) renames its pcap files to
    ``<file>.incomplete`` and writes no ``summary.json``. Raises :class:`InvariantError` if the
    simulator reports a violated invariant (after writing the outputs, which the exception
    carries as ``.result``).
    """
    if not isinstance(scenario, Scenario):
        scenario = load_scenario(scenario)
    if out is not None and not os.fspath(out).strip():
        raise ScenarioError('out: must name a directory (got "")')
    if out is not None and not tables:
        raise ValueError("run(): tables=False cannot write outputs (out is set)")
    config = scenario.to_config(seed=seed, out_dir=out)
    if trace:
        config["trace"] = True
    core = _core()
    if out is not None:
        _prepare_out(Path(out))
        _warn_time_series(config)
    for i, pcap in enumerate(config["pcap"]):
        try:
            # created here to fail before the run, not after it; the simulator recreates it
            Path(pcap["path"]).open("wb").close()
            Path(pcap["path"]).unlink()
        except OSError as err:
            raise OSError(
                f"{scenario.source}: pcap[{i}].file: cannot create {pcap['path']}: "
                f"{err.strerror or err}"
            ) from None
    record: dict[str, Any] = {"timeseries": tables, "events": tables}
    spill = out if out is not None else scratch if tables else None
    if spill is not None:
        # Long tables stream to files in the output directory (output.rs, SPILL_ROWS).
        record["spill_dir"] = str(Path(spill))
    bar = _ProgressBar(scenario.name) if progress is True else None
    callback = bar if bar is not None else (progress if callable(progress) else None)
    start = time.perf_counter()
    try:
        raw = core.run(json.dumps({**config, "record": record}), callback)
    except ValueError as err:  # the simulator's own validation (validate.rs)
        error = core_error(str(err), scenario.data, config)
        error.source = scenario.source
        raise error from None
    except RuntimeError as err:
        raise InvariantError([str(err)]) from err
    except BaseException:
        _mark_incomplete(config)
        if spill is not None:
            for name in _SPILL_FILES:
                (Path(spill) / name).unlink(missing_ok=True)
        raise
    finally:
        if bar is not None:
            bar.close()
    wall_s = time.perf_counter() - start
    result = None
    try:
        result = RunResult.from_core(
            raw, scenario=scenario.name, seed=config["seed"], wall_s=wall_s, config=config
        )
        if out is not None:
            result.provenance = provenance(scenario, config["seed"], core, command)
            result.write(out)
        elif spill is not None and result.spilled:
            result.write(spill)  # the spilled tables become Parquet there, read in pieces
    except BaseException:
        # The simulator renamed its captures into place when it finished; the outputs around
        # them are not complete (no summary.json), so neither are they.
        _mark_incomplete(config)
        if result is not None:
            result.discard_spill()
        raise
    violations = result.summary["invariants"]["violations"]
    if violations:
        raise InvariantError(violations, result)
    return result


#: The files the simulator spills long tables to (output.rs).
_SPILL_FILES = (".timeseries.spill", ".events.spill", ".segments.spill", ".queues.spill")


def provenance(
    scenario: Scenario, seed: int, core: ModuleType, command: Sequence[str] | None
) -> dict[str, Any]:
    """What made a run: versions, the source tree's commit, the scenario as run (``--set`` and
    ``--pcap`` applied, the seed that ran) and its SHA-256 (of its canonical JSON), and the
    command line without ``--out`` and its directory (which would make the same run in two
    directories differ)."""
    import hashlib  # here: only runs that write outputs record it (OpenSSL's load is ~1 % of a run)

    from tcplab.version import build, version

    canonical = json.dumps(
        {**scenario.data, "seed": seed},
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
        default=str,
    )
    out: dict[str, Any] = {
        "tcplab": version(),
        "core": str(getattr(core, "__version__", "unknown")),
        "commit": build(),
        "scenario_sha256": hashlib.sha256(canonical.encode()).hexdigest(),
        "scenario_table": json.loads(canonical),
    }
    if command is not None:
        out["command"] = _without_out(list(command))
    return out


def _without_out(argv: list[str]) -> list[str]:
    """``tcplab ARGV`` without ``--out DIR`` / ``--out=DIR``."""
    kept: list[str] = []
    skip = False
    for arg in argv:
        if skip:
            skip = False
        elif arg == "--out":
            skip = True
        elif not arg.startswith("--out="):
            kept.append(arg)
    return ["tcplab", *kept]
