"""``snd_buf_model``: Linux's send buffer (truesize accounting, ``tcp_sndbuf_expand``, a writer
woken on writability) is a flow key, checked on both sides; a BBR flow with it finishes its
transfer and its writer runs dry where a payload-counted buffer never does."""

from __future__ import annotations

import pytest

pytest.importorskip("tcplab._core")

from tcplab.campaign.sweep import run_config
from tcplab.errors import ScenarioError
from tcplab.scenario.parse import parse_scenario

pytestmark = pytest.mark.core


def _scenario(**keys: object) -> dict[str, object]:
    return {
        "name": "sndbuf",
        "duration": "3s",
        "seed": 1,
        "path": [{"rate": "20Mbps", "delay": "20ms", "queue": 60}],
        "flows": [{"stack": "linux", "cc": "bbr", "bytes": "4MB", **keys}],
    }


def _tcp(**keys: object) -> dict[str, object]:
    return parse_scenario(_scenario(**keys), "<test>").to_config()["flows"][0]["tcp"]


def test_key_is_checked_set_by_the_linux_stack_and_absent_otherwise() -> None:
    plain = _scenario()
    del plain["flows"][0]["stack"]  # type: ignore[index]
    assert "snd_buf_model" not in parse_scenario(plain, "<test>").to_config()["flows"][0]["tcp"]
    assert _tcp()["snd_buf_model"] == "linux"  # stack = "linux" takes Linux's send buffer
    assert _tcp(snd_buf_model="fixed")["snd_buf_model"] == "fixed"  # a flow's key overrides it
    with pytest.raises(ScenarioError, match=r"snd_buf_model.*fixed.*linux"):
        _tcp(snd_buf_model="bsd")


def test_a_linux_send_buffer_transfers_everything() -> None:
    # 256 KiB of tcp_wmem[2] against a 100 KB BDP: the buffer limits the sender. Both models
    # deliver every byte; Linux's, charging 832 bytes per skb and writing only when a third
    # of the buffer is free, keeps less in flight and takes longer.
    done = {}
    for model in ("fixed", "linux"):
        res = run_config(
            parse_scenario(_scenario(snd_buf="256KiB", snd_buf_model=model), "<test>").to_config()
        )
        flow = res["flows"][0]
        assert flow["bytes_delivered"] == 4_000_000, flow
        done[model] = flow["duration_s"]
    assert done["linux"] > done["fixed"], done
