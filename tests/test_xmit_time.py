"""``xmit_time``: the sending host's send path in time (sim.rs ``transmit_host``)."""

from __future__ import annotations

import copy
import json

import pytest

from tcplab.errors import ScenarioError
from tcplab.scenario.parse import parse_scenario

core = pytest.importorskip("tcplab._core")

BASE = {
    "name": "x",
    "duration": "2s",
    "path": [{"rate": "10Mbps", "delay": "5ms", "queue": 2}],
    "flows": [{"stack": "linux"}],
}


def _tcp(data: dict) -> dict:
    return parse_scenario(data).config["flows"][0]["tcp"]


def test_linux_stack_has_the_measured_send_path_and_rfc_has_none() -> None:
    assert _tcp(BASE)["xmit_time"] == {"first_ns": 18_800, "gso_ns": 3_600, "gap_ns": 1_300}
    rfc = copy.deepcopy(BASE)
    rfc["flows"] = [{}]
    assert "xmit_time" not in _tcp(rfc)


def test_a_flow_overrides_the_stack_and_missing_terms_are_zero() -> None:
    d = copy.deepcopy(BASE)
    d["flows"][0]["xmit_time"] = {"first": "10us"}
    assert _tcp(d)["xmit_time"] == {"first_ns": 10_000, "gso_ns": 0, "gap_ns": 0}


def test_python_and_core_reject_a_term_over_1ms_alike() -> None:
    d = copy.deepcopy(BASE)
    d["flows"][0]["xmit_time"] = {"gso": "2ms"}
    with pytest.raises(
        ScenarioError, match=r"xmit_time\.gso: must be at most 1ms \(got 2000000 ns\)"
    ):
        parse_scenario(d)
    cfg = _tcp(BASE)
    cfg["xmit_time"]["gso_ns"] = 2_000_000
    whole = parse_scenario(BASE).config
    whole["flows"][0]["tcp"] = cfg
    with pytest.raises(ValueError, match=r"xmit_time\.gso: must be at most 1ms \(got 2000000 ns\)"):
        core.validate(json.dumps(whole))
