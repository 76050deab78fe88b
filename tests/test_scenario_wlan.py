"""The ``kind = "wlan"`` hop and ``cc = "qos_tcp"`` in TOML scenarios: one-line field errors."""

from __future__ import annotations

import copy
import tomllib
from collections.abc import Callable
from typing import Any

import pytest

from support import SCENARIOS
from tcplab.errors import ScenarioError
from tcplab.scenario.parse import parse_scenario

BASE = tomllib.loads((SCENARIOS / "wlan-uplink.toml").read_text(encoding="utf-8"))


def _err(change: Callable[[dict[str, Any]], object]) -> str:
    d = copy.deepcopy(BASE)
    change(d)
    with pytest.raises(ScenarioError) as e:
        parse_scenario(d)
    return str(e.value)


def test_wlan_scenario_builds_one_station_per_flow() -> None:
    cfg = parse_scenario(copy.deepcopy(BASE)).config
    hop = cfg["hops"][0]
    assert hop["kind"] == "wlan" and hop["ap_queue"] == 265
    assert [s["flows"] for s in hop["stations"]] == [[k] for k in range(7)]
    assert all(f["path"] == [0, 1] for f in cfg["flows"])


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d["path"][0].update(cw_min=20), "path[0].cw_min: must be 2^k - 1"),
        (lambda d: d["path"][0].update(bogus=1), "path[0].bogus: unknown field"),
        (lambda d: d["path"].reverse(), 'path[1].kind: a "wlan" hop must be the first'),
        (
            lambda d: d["flows"][0].update(cc="qos_tcp"),
            'flows[0].qos_target: required when cc = "qos_tcp"',
        ),
        (
            lambda d: d["flows"][0].update(qos_target="4Mbps"),
            'flows[0].qos_target: only valid with cc = "qos_tcp"',
        ),
        (
            lambda d: d["path"][0].update(stations=[{"flows": [0, 1]}]),
            "path[0].stations: flow 2 must be on exactly one station",
        ),
        (
            lambda d: d["path"][0].update(data_rate="50Mbps"),
            "path[0].data_rate: must be an 802.11g OFDM rate",
        ),
        (
            lambda d: d["path"][0].update(
                aps=[{"interference": {"mean_gap": "10s", "mean_burst": "0s"}}]
            ),
            "path[0].aps[0].interference.mean_burst:",
        ),
        (
            lambda d: d["path"][0].update(
                aps=[{"interference": {"mean_gap": "10s", "mean_burst": "1ms", "loss": 2}}]
            ),
            "path[0].aps[0].interference.loss: must be a probability",
        ),
        (
            lambda d: d["path"][0].update(
                stations=[
                    {"flows": list(range(7)), "fading": {"mean_gap": "0s", "mean_burst": "1ms"}}
                ]
            ),
            "path[0].stations[0].fading.mean_gap:",
        ),
        (
            lambda d: d["path"][0].update(
                stations=[{"flows": list(range(7)), "errors_down": {"kind": "bernoulli", "p": 2}}]
            ),
            "path[0].stations[0].errors_down",
        ),
    ],
)
def test_wlan_field_errors(change: Callable[[dict[str, Any]], object], message: str) -> None:
    msg = _err(change)
    assert msg.startswith(message), msg
    assert "\n" not in msg


def test_qos_tcp_target_reaches_the_config() -> None:
    d = copy.deepcopy(BASE)
    d["flows"][0].update(cc="qos_tcp", qos_target="4Mbps")
    tcp = parse_scenario(d).config["flows"][0]["tcp"]
    assert tcp["cc"] == "qos_tcp" and tcp["qos_target_bps"] == 4_000_000


def test_interference_reaches_the_config() -> None:
    d = copy.deepcopy(BASE)
    d["path"][0]["aps"] = [{"interference": {"mean_gap": "10s", "mean_burst": "200ms"}}]
    ap = parse_scenario(d).config["hops"][0]["aps"][0]
    assert ap["interference"] == {
        "mean_gap_ns": 10_000_000_000,
        "mean_burst_ns": 200_000_000,
        "loss": 1.0,
    }


def test_station_fading_and_downlink_errors_reach_the_config() -> None:
    d = copy.deepcopy(BASE)
    d["path"][0]["stations"] = [
        {
            "flows": list(range(7)),
            "fading": {"mean_gap": "3s", "mean_burst": "50ms", "loss": 0.9},
            "errors_down": {"kind": "bernoulli", "p": 0.1},
        }
    ]
    sta = parse_scenario(d).config["hops"][0]["stations"][0]
    assert sta["fading"] == {"mean_gap_ns": 3_000_000_000, "mean_burst_ns": 50_000_000, "loss": 0.9}
    assert sta["errors_down"]["kind"] == "bernoulli" and sta["errors_down"]["p"] == 0.1


def test_wlan_scenario_runs() -> None:
    pytest.importorskip("tcplab._core")
    from tcplab.runner import run
    from tcplab.scenario.parse import load_scenario

    sc = load_scenario(SCENARIOS / "wlan-uplink.toml")
    r = run(sc)
    assert len(r.summary["flows"]) == 7
    ap = [row for row in r.summary["links"] if row.get("role") == "ap"]
    assert ap[0]["drops_queue_ack"] > 0
