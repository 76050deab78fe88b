"""tcplab: how TCP behaves on hard links (3G, satellite, asymmetric, WLAN, host-limited).

>>> import tcplab
>>> result = tcplab.run(tcplab.load_scenario("scenarios/p2p-bulk.toml"), seed=1)
>>> result.flows[["name", "goodput_bps"]]
"""

from typing import Any

from tcplab.errors import InvariantError, ScenarioError
from tcplab.results import RunResult
from tcplab.runner import run
from tcplab.scenario import Scenario, load_scenario, parse_scenario


def __getattr__(name: str) -> Any:
    # importlib.metadata is slow to import: look the version up only when asked.
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version("tcplab")
        except PackageNotFoundError:  # a source tree that was never installed
            return "0+unknown"
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
