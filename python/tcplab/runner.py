"""Run a scenario in the simulator (``tcplab._core``) and collect the result."""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

from tcplab.errors import InvariantError
from tcplab.results import RunResult
from tcplab.scenario import Scenario, load_scenario

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


def run(
    scenario: Scenario | str | os.PathLike[str] | None = None,
    seed: int | None = None,
    out: str | os.PathLike[str] | None = None,
    progress: bool | ProgressCallback = False,
    trace: bool = False,
) -> RunResult:
    """Run ``scenario`` (a :class:`Scenario`, a TOML path, a built-in name; None = p2p-bulk).

    ``seed`` overrides the scenario's seed. With ``out``, the tables and ``summary.json`` are
    written there (and relative pcap files go there). ``progress=True`` shows a progress bar on
    stderr for runs longer than 2 s; a callable receives the fraction of simulated time done.

    ``trace=True`` also records every data segment, ACK and SACK block and samples each hop's
    queue (the ``segments`` and ``queues`` tables, which :meth:`RunResult.plot` draws); it
    changes no other output.

    Raises :class:`InvariantError` if the simulator reports a violated invariant (after writing
    the outputs, which the exception carries as ``.result``).
    """
    if not isinstance(scenario, Scenario):
        scenario = load_scenario(scenario)
    config = scenario.to_config(seed=seed, out_dir=out)
    if trace:
        config["trace"] = True
    core = _core()
    if out is not None:
        Path(out).mkdir(parents=True, exist_ok=True)
    bar = _ProgressBar(scenario.name) if progress is True else None
    callback = bar if bar is not None else (progress if callable(progress) else None)
    start = time.perf_counter()
    try:
        raw = core.run(json.dumps(config), callback)
    except RuntimeError as err:
        raise InvariantError([str(err)]) from err
    finally:
        if bar is not None:
            bar.close()
    wall_s = time.perf_counter() - start
    result = RunResult.from_core(
        raw, scenario=scenario.name, seed=config["seed"], wall_s=wall_s, config=config
    )
    if out is not None:
        result.write(out)
    violations = result.summary["invariants"]["violations"]
    if violations:
        raise InvariantError(violations, result)
    return result
