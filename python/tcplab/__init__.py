"""tcplab: how TCP behaves on hard links (3G, satellite, asymmetric, WLAN, host-limited).

>>> import tcplab
>>> result = tcplab.run(tcplab.load_scenario("scenarios/p2p-bulk.toml"), seed=1)
>>> result.flows[["name", "goodput_bps"]]
"""

from pathlib import Path
from typing import Any

from tcplab import results
from tcplab.errors import InvariantError, ScenarioError
from tcplab.results import RunResult
from tcplab.runner import run
from tcplab.scenario.parse import Scenario, load_scenario, parse_scenario


def _plot_run(result: RunResult, out: Path, **options: Any) -> list[Path]:
    # RunResult.plot() draws with the report wing, imported (with matplotlib) only when asked.
    from tcplab.report.runplot import plot_run

    return plot_run(result, out, **options)


results.PLOT_RUN = _plot_run


def __getattr__(name: str) -> Any:
    # importlib.metadata is slow to import: look the version up only when asked.
    if name == "__version__":
        from tcplab.version import version

        return version()
    raise AttributeError(f"module 'tcplab' has no attribute {name!r}")


__all__ = [
    "InvariantError",
    "RunResult",
    "Scenario",
    "ScenarioError",
    "__version__",
    "load_scenario",
    "parse_scenario",
    "run",
]
