"""The flow key ``pacing``, ``cc = "bbr"`` with ``stack = "linux"``, and the time series' rate
columns (pacing rate and delivery-rate samples, present only in runs that have them)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tcplab.errors import ScenarioError
from tcplab.scenario.parse import parse_scenario


def _scenario(**flow: Any) -> dict[str, Any]:
    return {
        "name": "bbr",
        "duration": "6s",
        "seed": 1,
        "sample_interval": "100ms",
        "path": [{"rate": "10Mbps", "delay": "20ms", "queue": 66}],
        "flows": [{"cc": "bbr", **flow}],
    }


def test_pacing_key_is_given_through_or_left_to_the_controller() -> None:
    tcp = parse_scenario(_scenario()).config["flows"][0]["tcp"]
    assert "pacing" not in tcp  # absent: BBR paces, the others do not (Rust decides)
    tcp = parse_scenario(_scenario(cc="cubic", pacing=True)).config["flows"][0]["tcp"]
    assert tcp["pacing"] is True


def test_linux_stack_with_bbr_leaves_out_the_slow_start_keys() -> None:
    tcp = parse_scenario(_scenario(stack="linux")).config["flows"][0]["tcp"]
    assert tcp["cc"] == "bbr" and tcp["abc_l"] == 1 and tcp["loss_detection"] == "rack"
    with pytest.raises(ScenarioError, match=r"flows\[0\]\.abc_l: the byte-counting limit"):
        parse_scenario(_scenario(stack="linux", abc_l=2))


def test_bad_pacing_value_is_a_one_line_error() -> None:
    with pytest.raises(ScenarioError) as err:
        parse_scenario(_scenario(pacing="yes"))
    assert "flows[0].pacing: must be" in str(err.value) and "\n" not in str(err.value)


def _timeseries(**flow: Any) -> dict[str, Any]:
    pytest.importorskip("tcplab._core")
    import numpy as np

    from tcplab import _core

    cfg = parse_scenario(_scenario(**flow)).config
    cols = _core.run(json.dumps(cfg), None)["timeseries"]
    return {k: np.frombuffer(data, dtype=np.dtype(dt)) for k, (dt, data) in cols.items()}


def test_rate_columns_only_where_a_flow_has_rates() -> None:
    import numpy as np

    ts = _timeseries()
    # In PROBE_BW BBR paces at 0.99 x its bandwidth estimate times the gain cycle's 3/4, 1 or
    # 5/4; the estimate is the bottleneck's payload rate (10 Mbit/s x 1448/1500), and so are
    # its delivery-rate samples.
    late = ts["t_ns"] > 3_000_000_000
    pacing = ts["pacing_rate_bps"][late]
    delivery = ts["delivery_rate_bps"][late]
    base = float(np.median(pacing))
    assert 9.4e6 < base < 9.7e6
    assert {round(float(p) / base, 2) for p in pacing} <= {0.75, 1.0, 1.25}
    assert 9e6 < delivery.mean() < 10e6
    assert "pacing_rate_bps" not in _timeseries(cc="cubic")
    paced = _timeseries(cc="cubic", pacing=True)
    assert paced["pacing_rate_bps"][-1] > 0 and paced["delivery_rate_bps"][-1] > 0
