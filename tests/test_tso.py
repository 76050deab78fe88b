"""``tso_model``: Linux's transmit path (skbs of ``tcp_tso_autosize`` segments,
``tcp_tso_should_defer``, PSH on every multi-segment skb and the receiver's immediate ACK of it)
is a flow key, checked on both sides and part of ``stack = "linux"``; a flow with it delivers
every byte, and on a shallow queue it bursts, and so loses, differently from one without it."""

from __future__ import annotations

import pytest

pytest.importorskip("tcplab._core")

from tcplab.campaign.sweep import run_config
from tcplab.errors import ScenarioError
from tcplab.scenario.parse import parse_scenario

pytestmark = pytest.mark.core


def _scenario(**keys: object) -> dict[str, object]:
    return {
        "name": "tso",
        "duration": "4s",
        "seed": 1,
        "path": [{"rate": "25Mbps", "delay": "8ms", "queue": 8}],
        "flows": [{"stack": "linux", "cc": "reno", "bytes": "6MB", **keys}],
    }


def _tcp(**keys: object) -> dict[str, object]:
    return parse_scenario(_scenario(**keys), "<test>").to_config()["flows"][0]["tcp"]


def test_key_is_checked_and_part_of_the_linux_stack() -> None:
    assert _tcp()["tso_model"] == "linux", "stack = linux"
    assert "tso_model" not in _tcp(stack="rfc"), "absent unless set or in the stack"
    assert _tcp(stack="rfc", tso_model="linux")["tso_model"] == "linux"
    assert _tcp(tso_model="none")["tso_model"] == "none"
    with pytest.raises(ScenarioError, match=r"tso_model.*none.*linux"):
        _tcp(tso_model="bsd")


def test_linux_skbs_deliver_everything_and_change_the_bursts() -> None:
    # A 0.2-BDP queue: the held-back openings leave with the next ACK's segments, so the
    # bursts and with them the queue's drops differ; every byte still arrives once.
    res = {}
    for model in ("none", "linux"):
        out = run_config(parse_scenario(_scenario(tso_model=model), "<test>").to_config())
        flow = out["flows"][0]
        assert flow["bytes_delivered"] == 6_000_000, flow
        res[model] = (flow["retransmitted_segments"], out["links"][0]["drops_queue"])
    assert res["none"] != res["linux"], res
