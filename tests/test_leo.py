"""The ``kind = "leo"`` hop from the scenario side: its keys, the parity of Python's checks
with the core's, the presets from the core's registry, and a short run (docs/leo.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tcplab.errors import ScenarioError
from tcplab.scenario.parse import _parse_scenario, load_scenario

REPO = Path(__file__).resolve().parent.parent
BUNDLED = REPO / "scenarios" / "leo-starlink.toml"


def _scenario(**hop: Any) -> dict[str, Any]:
    return {
        "duration": "2s",
        "path": [{"kind": "leo", **hop}],
        "flows": [{"stack": "linux", "bytes": "unlimited"}],
    }


def test_leo_keys_build_the_hop() -> None:
    pytest.importorskip("tcplab._core")
    (hop,) = load_scenario(BUNDLED).config["hops"]
    assert hop == {
        "kind": "leo",
        "name": "leo0",
        "queue": {"kind": "packets", "limit": 1000},
        "start_second": 0,
        "preset": "starlink-maine-2024",
    }
    s = _parse_scenario(
        _scenario(
            preset="starlink-belgium-2022",
            handover_pause="10ms",
            handover_loss=0,
            handover_window="500ms",
            start_second=30,
        ),
        "<dict>",
        with_core=True,
    )
    (hop,) = s.config["hops"]
    assert hop["handover_pause_ns"] == 10_000_000 and hop["handover_loss"] == 0
    assert hop["handover_window_ns"] == 500_000_000 and hop["start_second"] == 30


# (key, bad value, the field of the normalized hop, its value there)
BAD: list[tuple[str, Any, str, Any]] = [
    ("preset", "starlink-mars", "preset", "starlink-mars"),
    ("start_second", 60, "start_second", 60),
    ("handover_loss", 2, "handover_loss", 2.0),
    ("handover_loss", -0.1, "handover_loss", -0.1),
    ("handover_pause", "15s", "handover_pause_ns", 15_000_000_000),
    ("handover_window", "20s", "handover_window_ns", 20_000_000_000),
]


@pytest.mark.parametrize(("key", "value", "field", "raw"), BAD, ids=[f"{b[0]}={b[1]}" for b in BAD])
def test_python_and_the_core_refuse_bad_leo_keys_alike(
    key: str, value: Any, field: str, raw: Any
) -> None:
    core = pytest.importorskip("tcplab._core")
    with pytest.raises(ScenarioError) as py:
        hop = {"preset": "starlink-maine-2024", key: value}
        _parse_scenario(_scenario(**hop), "<dict>", with_core=False)
    config = _parse_scenario(
        _scenario(preset="starlink-maine-2024"), "<dict>", with_core=False
    ).config
    config["hops"][0][field] = raw
    with pytest.raises(ValueError) as rust:
        core.validate(json.dumps(config))
    assert (
        str(py.value).splitlines()[0].endswith(str(rust.value).replace("hops[0].", "path[0]."))
    ), (str(py.value), str(rust.value))


def test_a_leo_hop_needs_a_preset_or_a_schedule_and_reads_the_schedule(tmp_path: Path) -> None:
    pytest.importorskip("tcplab._core")
    with pytest.raises(ScenarioError, match=r"path\[0\].preset: required field missing"):
        _parse_scenario(_scenario(), "<dict>", with_core=False)
    (tmp_path / "slots.csv").write_text("rtt_ms,down_mbps,up_mbps\n40,50,10\n60,x,10\n")
    scenario = tmp_path / "s.toml"
    scenario.write_text(
        'duration = "2s"\n[[path]]\nkind = "leo"\nschedule = "slots.csv"\n[[flows]]\ncc = "cubic"\n'
    )
    with pytest.raises(ScenarioError) as e:
        load_scenario(scenario)
    assert "slots.csv:3: must be rtt_ms,down_mbps,up_mbps" in str(e.value)
    assert "\n" not in str(e.value).strip()


def test_a_run_over_a_leo_preset_jumps_at_the_reassignment() -> None:
    """A 20 s run crosses the reassignment at 12 s: a link row of kind leo per direction, and
    the flow's goodput is bounded by what the two slots can carry."""
    core = pytest.importorskip("tcplab._core")
    from tcplab.campaign.single import run_config

    s = load_scenario(BUNDLED, ["duration=20s"])
    summary = run_config(s.to_config())
    rows = [r for r in summary["links"] if r["name"] == "leo0"]
    assert [r["dir"] for r in rows] == ["fwd", "rev"] and all(r["kind"] == "leo" for r in rows)
    (s0, s1) = core.leo_slots("starlink-maine-2024", 1, 0, 2)[:2]
    capacity_bits = s0[2] * 12 + s1[2] * 8  # slot 0 to 12 s, slot 1 after
    delivered = summary["flows"][0]["bytes_delivered"] * 8
    assert 0.3 * capacity_bits < delivered < capacity_bits
    assert s1[0] == 12_000_000_000
