"""``timers``: RACK's reordering timer and the tail-loss probe at RFC 8985's instant
(``"exact"``) or as Linux arms them on its 250-Hz timer wheel (``"linux"``, part of
``stack = "linux"``); the key is checked, and on a slow link with a 3-packet queue Linux's
later reordering timer avoids the second reduction the exact one causes
(docs/linux-stack.md, "Timers on the tick")."""

from __future__ import annotations

import pytest

pytest.importorskip("tcplab._core")

from tcplab.campaign.sweep import run_config
from tcplab.errors import ScenarioError
from tcplab.scenario.parse import parse_scenario

pytestmark = pytest.mark.core


def _scenario(**keys: object) -> dict[str, object]:
    # Seed 67's case #0 of the random validation, where the mechanism was found.
    return {
        "name": "timers",
        "duration": "20s",
        "seed": 1000,
        "path": [{"rate": "1960000bps", "delay": "20.5ms", "queue": 3, "down": {"loss": 0.00303}}],
        "flows": [{"stack": "linux", "cc": "cubic", **keys}],
    }


def _tcp(**keys: object) -> dict[str, object]:
    return parse_scenario(_scenario(**keys), "<test>").to_config()["flows"][0]["tcp"]


def test_key_is_checked_and_part_of_the_linux_stack() -> None:
    assert _tcp()["timers"] == "linux", "stack = linux"
    assert "timers" not in _tcp(stack="rfc"), "absent unless set or in the stack"
    assert _tcp(stack="rfc", timers="linux")["timers"] == "linux"
    assert _tcp(timers="exact")["timers"] == "exact"
    with pytest.raises(ScenarioError, match=r"timers.*exact.*linux"):
        _tcp(timers="hrtimer")


def test_linux_timers_avoid_the_second_reduction() -> None:
    # With the exact timer the lost segment is resent into the still-full queue and the
    # next ACK's new segment is dropped beyond the recovery point: a second episode
    # halves ssthresh again (7 -> 4 packets). Linux's timer fires after the next ACK,
    # which marks the loss itself; ssthresh stays near 7 and goodput near Linux's
    # 1.75 Mbit/s (5 runs on the testbed).
    res = {}
    for timers in ("exact", "linux"):
        out = run_config(parse_scenario(_scenario(timers=timers), "<test>").to_config())
        flow = out["flows"][0]
        assert flow["bytes_delivered"] > 0
        res[timers] = flow["goodput_bps"]
    assert res["exact"] < 1.55e6 < 1.65e6 < res["linux"], res
