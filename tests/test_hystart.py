"""HyStart++ (RFC 9406) through the scenario key ``hystart`` and CUBIC's RFC 3465 byte counting."""

from __future__ import annotations

from typing import Any

import pytest

from tcplab.errors import ScenarioError
from tcplab.scenario import parse_scenario


def _scenario(**flow: Any) -> dict[str, Any]:
    return {
        "name": "hystart",
        "duration": "10s",
        "seed": 1,
        "path": [{"rate": "10Mbps", "delay": "50ms", "queue": 100}],
        "flows": [{"cc": "cubic", "abc_l": 2, **flow}],
    }


def test_key_parses_and_defaults_off() -> None:
    assert parse_scenario(_scenario()).config["flows"][0]["tcp"]["hystart"] is False
    cfg = parse_scenario(_scenario(hystart=True)).config
    assert cfg["flows"][0]["tcp"]["hystart"] is True
    assert cfg["flows"][0]["tcp"]["abc_l"] == 2  # byte counting applies to CUBIC too


@pytest.mark.parametrize(
    ("flow", "message"),
    [
        ({"hystart": "yes"}, "flows[0].hystart: must be"),
        (
            {"hystart": True, "cc": "vegas", "abc_l": 1},
            "flows[0].hystart: HyStart++ applies to reno/newreno/cubic only",
        ),
    ],
)
def test_bad_values_one_line_errors(flow: dict[str, Any], message: str) -> None:
    with pytest.raises(ScenarioError) as err:
        parse_scenario(_scenario(**flow))
    assert message in str(err.value) and "\n" not in str(err.value)


def test_rust_rechecks_hystart() -> None:
    pytest.importorskip("tcplab._core")
    import json

    from tcplab import _core

    cfg = parse_scenario(_scenario(hystart=True, abc_l=1)).config
    cfg["flows"][0]["tcp"]["cc"] = "westwood"
    with pytest.raises(ValueError, match="hystart: HyStart\\+\\+ applies to reno/newreno/cubic"):
        _core.run(json.dumps(cfg), None)


def test_cubic_leaves_slow_start_early_with_hystart() -> None:
    pytest.importorskip("tcplab._core")
    from tcplab.sweep import run_config

    def run(hystart: bool) -> dict[str, Any]:
        sc = parse_scenario(_scenario(hystart=hystart)).to_config()
        return run_config(sc)["flows"][0]

    off, on = run(False), run(True)
    assert "hystart_css_entries" not in off  # off: the summary is as before
    assert on["hystart_css_entries"] >= 1
    # CSS begins within the first second, at ~148 segments (BDP ≈ 86 + 100 queue slots)
    assert on["hystart_first_css_s"] < 1.0
    assert on["hystart_first_css_cwnd"] < 200 * 1448
    assert on["retransmitted_segments"] * 3 < off["retransmitted_segments"]
