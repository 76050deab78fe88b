"""tcplab: how TCP behaves on hard links (3G, satellite, asymmetric, WLAN, host-limited).

>>> import tcplab
>>> result = tcplab.run(tcplab.load_scenario("scenarios/p2p-bulk.toml"), seed=1)
>>> result.flows[["name", "goodput_bps"]]
"""

from importlib.metadata import PackageNotFoundError, version

from tcplab.errors import InvariantError, ScenarioError
from tcplab.results import RunResult
from tcplab.runner import run
from tcplab.scenario import Scenario, load_scenario, parse_scenario

try:
    __version__ = version("tcplab")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0+unknown"

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
