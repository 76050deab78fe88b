"""``xmit_time``: the sending host's send path in time (sim.rs ``transmit_host``)."""

from __future__ import annotations

import copy
import json

import pytest

from tcplab.campaign.sweep import run_config
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
    assert _tcp(BASE)["xmit_time"] == {
        "first_ns": 18_800,
        "gso_ns": 3_600,
        "gap_ns": 1_300,
        "jitter_ns": 21_000,
    }
    rfc = copy.deepcopy(BASE)
    rfc["flows"] = [{}]
    assert "xmit_time" not in _tcp(rfc)


def test_a_flow_overrides_the_stack_and_missing_terms_are_zero() -> None:
    d = copy.deepcopy(BASE)
    d["flows"][0]["xmit_time"] = {"first": "10us"}
    assert _tcp(d)["xmit_time"] == {"first_ns": 10_000, "gso_ns": 0, "gap_ns": 0, "jitter_ns": 0}


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


def test_python_and_core_reject_a_jitter_beyond_twice_first_alike() -> None:
    """The spread is centred on ``first``: more than twice ``first`` would reach below zero."""
    d = copy.deepcopy(BASE)
    d["flows"][0]["xmit_time"] = {"first": "10us", "jitter": "21us"}
    msg = r"xmit_time\.jitter: must be at most twice first \(10000 ns\) \(got 21000 ns\)"
    with pytest.raises(ScenarioError, match=msg):
        parse_scenario(d)
    d["flows"][0]["xmit_time"] = {"first": "10us", "jitter": "20us"}
    cfg = _tcp(d)
    assert cfg["xmit_time"]["jitter_ns"] == 20_000
    cfg["xmit_time"]["jitter_ns"] = 21_000
    whole = parse_scenario(d).config
    whole["flows"][0]["tcp"] = cfg
    with pytest.raises(ValueError, match=msg):
        core.validate(json.dumps(whole))


def test_the_jitter_is_seeded() -> None:
    """Same seed, same run; the spread moves the result of a 2-packet queue's ties."""
    d = {
        "name": "x",
        "duration": "3s",
        "seed": 3,
        "path": [{"rate": "13.3Mbps", "delay": "2.9ms", "queue": 2}],
        "flows": [{"stack": "linux", "cc": "cubic"}],
    }

    def goodput(jitter: str) -> float:
        e = copy.deepcopy(d)
        e["flows"][0]["xmit_time"] = {
            "first": "18.8us",
            "gso": "3.6us",
            "gap": "1.3us",
            "jitter": jitter,
        }
        return float(run_config(parse_scenario(e).to_config())["flows"][0]["goodput_bps"])

    assert goodput("21us") == goodput("21us")
    assert goodput("21us") != goodput("0us")
