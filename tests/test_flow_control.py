"""A slow receiving application (``read_rate`` on a flow) through the scenario layer and the
simulator: the reader's rate sets the goodput, and bad values get one-line errors."""

from __future__ import annotations

from typing import Any

import pytest

from tcplab.campaign.sweep import run_config
from tcplab.scenario.parse import ScenarioError, parse_scenario

BASE: dict[str, Any] = {
    "duration": "20s",
    "path": [{"rate": "10Mbps", "delay": "20ms"}],
    "flows": [{}],
}


def _flow(**keys: Any) -> dict[str, Any]:
    return {**BASE, "flows": [keys]}


def test_read_rate_reaches_the_configuration() -> None:
    assert parse_scenario(_flow()).config["flows"][0]["tcp"]["read_rate_bps"] is None
    cfg = parse_scenario(_flow(read_rate="2Mbps")).config
    assert cfg["flows"][0]["tcp"]["read_rate_bps"] == 2_000_000


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("0Mbps", "flows[0].read_rate: must be > 0"),
        ("fast", "flows[0].read_rate:"),
    ],
)
def test_bad_read_rate_is_one_line(value: str, message: str) -> None:
    with pytest.raises(ScenarioError) as err:
        parse_scenario(_flow(read_rate=value))
    assert message in str(err.value)
    assert "\n" not in str(err.value)


def test_the_reader_sets_the_goodput() -> None:
    fast = run_config(parse_scenario(_flow(rcv_buf="256KB")).config)["flows"][0]
    slow = run_config(parse_scenario(_flow(rcv_buf="256KB", read_rate="2Mbps")).config)
    f = slow["flows"][0]
    assert fast["goodput_bps"] > 8e6
    assert f["goodput_bps"] == pytest.approx(2e6, rel=0.03)
    assert f["timeouts"] == 0
    assert not slow["invariants"]["violations"]
    # a reader so slow that rate x RTT is below a segment keeps closing the window: the
    # receiver reopens it with window updates
    crawl = run_config(parse_scenario(_flow(rcv_buf="16KB", read_rate="100kbps")).config)
    c = crawl["flows"][0]
    assert c["goodput_bps"] == pytest.approx(1e5, rel=0.05)
    assert c["window_updates"] > 0
