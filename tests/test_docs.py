"""docs/scenarios.md documents every scenario key, and CI runs the README's test command."""

from __future__ import annotations

import re

import pytest

from support import REPO
from tcplab.scenario import parse as scenario
from tcplab.scenario.fields import DIST_KEYS

README = REPO / "README.md"
SCENARIO_REFERENCE = REPO / "docs" / "scenarios.md"


@pytest.fixture(scope="module")
def readme() -> str:
    if not README.is_file():
        pytest.skip("README.md is not here")
    return README.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def reference() -> str:
    """The scenario reference (docs/scenarios.md); it must exist wherever the README does."""
    if not README.is_file():
        pytest.skip("README.md is not here (not a source checkout)")
    return SCENARIO_REFERENCE.read_text(encoding="utf-8")


#: The hop kinds' key sets come from the one table of hop kinds (``scenario.HOP_KINDS``).
KEY_SETS = [
    "_TOP_KEYS",
    *(f"HOP_KINDS.{kind}" for kind in scenario.HOP_KINDS),
    "_FLOW_KEYS",
    "_RTO_KEYS",
    "_ACK_KEYS",
    "_ACK_CC_KEYS",
    "_ACK_FILTER_KEYS",
    "_CROSS_KEYS",
    "_PING_ONLY",
    "_PCAP_KEYS",
]


def test_every_wlan_key_is_documented(reference: str) -> None:
    from tcplab.scenario.wlan import WLAN_KEYS

    doc = reference
    assert [k for k in WLAN_KEYS if f"`{k}" not in doc and f"`[[path.{k}]]`" not in doc] == []


@pytest.mark.parametrize("name", KEY_SETS)
def test_every_scenario_key_is_documented(reference: str, name: str) -> None:
    kind = name.removeprefix("HOP_KINDS.")
    keys: tuple[str, ...] = (
        scenario.HOP_KINDS[kind].keys() if kind != name else getattr(scenario, name)
    )
    missing = [
        k
        for k in keys
        if f"`{k}" not in reference
        and f"`[[{k}]]`" not in reference
        and f"[[path.{k}]]" not in reference
    ]
    assert not missing


def test_every_profile_distribution_and_cc_is_documented(reference: str) -> None:
    names = [*scenario.RTO_PROFILES, *DIST_KEYS, *scenario.CONGESTION_CONTROLS]
    for keys in DIST_KEYS.values():
        names += keys
    assert [n for n in names if f"`{n}" not in reference and f'"{n}"' not in reference] == []


def test_ci_runs_the_readme_test_command(readme: str) -> None:
    """``.ci/run`` runs the README's test command: its steps, in its order, each a line of its
    own (the script stops at the first failing command and times each step)."""
    commands = re.findall(r"```sh\n\s*(.*?)\n\s*```", readme, re.S)
    test_command = next(c.strip() for c in commands if "pytest" in c)
    assert test_command == ("pip install '.[test]' && cargo test --workspace -q && pytest -q")
    lines = [line.strip() for line in (REPO / ".ci" / "run").read_text("utf-8").splitlines()]
    assert "set -euo pipefail" in lines
    at = [lines.index(step) for step in test_command.split(" && ")]
    assert at == sorted(at)
