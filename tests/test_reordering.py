"""Reordering links and spurious-fast-retransmit detection/undo through the scenario layer and
the CLI (``reorder`` on a link direction, ``spurious_fr`` / ``spurious_fr_response`` on a flow).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from support import SCENARIOS
from tcplab.cli import main
from tcplab.scenario.parse import ScenarioError, parse_scenario

BASE: dict[str, Any] = {
    "duration": "5s",
    "path": [{"rate": "10Mbps", "delay": "50ms"}],
    "flows": [{}],
}


def _with(path: dict[str, Any] | None = None, flow: dict[str, Any] | None = None) -> dict:
    return {**BASE, "path": [{**BASE["path"][0], **(path or {})}], "flows": [flow or {}]}


def test_reorder_and_spurious_fr_reach_the_configuration() -> None:
    data = _with(
        {"down": {"reorder": {"p": 0.02, "extra": "10ms"}}},
        {"spurious_fr": "dsack", "spurious_fr_response": "undo"},
    )
    cfg = parse_scenario(data).config
    hop = cfg["hops"][0]
    assert hop["fwd"]["reorder"] == {"p": 0.02, "extra_ns": 10_000_000}
    assert hop["rev"]["reorder"] is None
    tcp = cfg["flows"][0]["tcp"]
    assert (tcp["spurious_fr"], tcp["spurious_fr_response"]) == ("dsack", "undo")
    # p = 0 is no reordering at all.
    cfg = parse_scenario(_with({"reorder": {"p": 0, "extra": "1ms"}})).config
    assert cfg["hops"][0]["fwd"]["reorder"] is None


@pytest.mark.parametrize(
    ("path", "flow", "message"),
    [
        (
            {"reorder": {"p": 1.5, "extra": "10ms"}},
            {},
            "path[0].reorder.p: must be a probability between 0 and 1 (got 1.5)",
        ),
        ({"reorder": {"p": 0.1}}, {}, "path[0].reorder.extra: required field missing"),
        ({"reorder": {"p": 0.1, "extra": "0s"}}, {}, "path[0].reorder.extra: must be > 0"),
        (
            {"up": {"reorder": {"p": 0.1, "x": 1}}},
            {},
            "path[0].up.reorder.x: unknown field (allowed: extra, p)",
        ),
        (
            {"reorder": {"p": 0.1, "extra": "1ms"}, "ack_filter": True},
            {},
            "path[0].ack_filter: cannot be combined with reorder",
        ),
        (
            {},
            {"spurious_fr": "frto"},
            "flows[0].spurious_fr: unknown spurious-fast-retransmit detector",
        ),
        (
            {},
            {"spurious_fr_response": "keep-cwnd"},
            "flows[0].spurious_fr_response: unknown spurious-fast-retransmit response",
        ),
        (
            {},
            {"spurious_fr": "eifel", "timestamps": False},
            'flows[0].spurious_fr: "eifel" needs timestamps = true',
        ),
        (
            {},
            {"spurious_fr": "dsack", "dsack": False},
            'flows[0].spurious_fr: "dsack" needs sack = true and dsack = true',
        ),
    ],
)
def test_bad_values_name_the_field_and_the_rule(
    path: dict[str, Any], flow: dict[str, Any], message: str
) -> None:
    with pytest.raises(ScenarioError) as e:
        parse_scenario(_with(path, flow))
    assert str(e.value).startswith(message), str(e.value)
    assert "\n" not in str(e.value)


def _run(capsys: pytest.CaptureFixture[str], *sets: str) -> dict[str, Any]:
    args = ["run", str(SCENARIOS / "p2p-bulk.toml"), "--json", "--set", "duration=20s"]
    args += ["--set", 'path[0].down.reorder={p = 0.01, extra = "10ms"}']
    for s in sets:
        args += ["--set", s]
    status = main(args)
    out, err = capsys.readouterr()
    assert status == 0, err
    return json.loads(out)


def test_undo_on_a_reordering_path_through_the_cli(capsys: pytest.CaptureFixture[str]) -> None:
    plain = _run(capsys)["flows"][0]
    # Nothing is lost on this path: every fast retransmit is spurious by ground truth.
    assert plain["fast_retransmits"] > 5
    assert plain["spurious_fast_retransmits"] == plain["fast_retransmits"]
    assert plain["spurious_fr_detected"] == plain["fr_undone"] == 0
    for det in ("eifel", "dsack"):
        f = _run(capsys, f"flows[0].spurious_fr={det}", "flows[0].spurious_fr_response=undo")[
            "flows"
        ][0]
        assert 0 < f["spurious_fr_detected"] <= f["spurious_fast_retransmits"], det
        assert f["fr_undone"] == f["spurious_fr_detected"], det
        assert f["goodput_bps"] > 1.5 * plain["goodput_bps"], (det, f, plain)
