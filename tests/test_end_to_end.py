"""End-to-end runs through the compiled simulator (skipped when ``tcplab._core`` is not built)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("tcplab._core")

import tcplab
from support import SCENARIOS
from tcplab import _core
from tcplab.cli import main
from tcplab.results import EVENT_COLUMNS, TIMESERIES_COLUMNS

pytestmark = pytest.mark.core

SHORT = ["duration=20s"]
LOSSY = ["duration=20s", "path[0].loss=0.01"]


def test_p2p_bulk_json_contract(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--json", "--quiet", "--set", "duration=20s"]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    report = json.loads(out)
    for key in ("scenario", "seed", "flows", "links", "wall_s", "events", "packets", "sim_time_s"):
        assert key in report, key
    assert report["scenario"] == "p2p-bulk"
    assert report["sim_time_s"] == pytest.approx(20.0)
    (flow,) = report["flows"]
    for key in (
        "id",
        "name",
        "bytes_delivered",
        "duration_s",
        "goodput_bps",
        "segments_sent",
        "retransmitted_segments",
        "timeouts",
        "spurious_timeouts",
        "spurious_detected",
    ):
        assert key in flow, key
    assert 0 < flow["goodput_bps"] <= 10e6
    assert flow["bytes_delivered"] > 0
    assert {(lk["name"], lk["dir"]) for lk in report["links"]} == {
        ("link0", "fwd"),
        ("link0", "rev"),
    }
    assert report["events"] > 0
    assert report["packets"] > 0


def test_run_api_tables() -> None:
    scenario = tcplab.load_scenario(SCENARIOS / "p2p-bulk.toml", SHORT)
    fractions: list[float] = []
    result = tcplab.run(scenario, seed=3, progress=fractions.append)
    assert result.seed == 3
    assert not result.summary["invariants"]["violations"]
    assert result.summary["invariants"]["checked"]
    assert list(result.flows["name"]) == ["flow0"]
    assert tuple(result.timeseries.columns[: len(TIMESERIES_COLUMNS)]) == TIMESERIES_COLUMNS
    assert tuple(result.events.columns[: len(EVENT_COLUMNS)]) == EVENT_COLUMNS
    assert len(result.timeseries) > 0
    assert fractions == sorted(fractions)
    assert all(0.0 <= f <= 1.0 for f in fractions)


def read_dir(path: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(path.iterdir())}


def test_same_seed_same_bytes_different_seed_different(tmp_path: Path) -> None:
    scenario = tcplab.load_scenario(SCENARIOS / "p2p-bulk.toml", LOSSY)
    tcplab.run(scenario, seed=1, out=tmp_path / "a")
    tcplab.run(scenario, seed=1, out=tmp_path / "b")
    tcplab.run(scenario, seed=2, out=tmp_path / "c")
    a, b, c = (read_dir(tmp_path / x) for x in "abc")
    assert a == b
    assert a["events.parquet"] != c["events.parquet"]
    assert a["timeseries.parquet"] != c["timeseries.parquet"]


@pytest.mark.parametrize("path", sorted(SCENARIOS.glob("*.toml")), ids=lambda p: p.name)
def test_every_example_scenario_runs(path: Path) -> None:
    duration = "40s" if path.name == "cross-traffic.toml" else "5s"  # its UDP starts at 30 s
    result = tcplab.run(tcplab.load_scenario(path, [f"duration={duration}"]))
    assert len(result.flows) == len(result.config["flows"])  # type: ignore[index]


def test_core_rejects_a_structurally_wrong_config() -> None:
    config = tcplab.load_scenario().to_config()
    config["flows"][0]["path"] = [5]
    with pytest.raises(ValueError):
        _core.run(json.dumps(config), None)
    with pytest.raises(ValueError):
        _core.run(json.dumps({"name": "x", "unknown": 1}), None)


def test_pcap_is_written_into_the_out_dir(tmp_path: Path) -> None:
    scenario = tcplab.load_scenario(SCENARIOS / "p2p-bulk.toml", ["duration=2s", "pcap[0].hop=0"])
    tcplab.run(scenario, out=tmp_path)
    magic = (tmp_path / "link0-both.pcap").read_bytes()[:4]
    pcap_magics = {0xA1B2C3D4, 0xA1B23C4D}  # microsecond and nanosecond pcap
    assert int.from_bytes(magic, "little") in pcap_magics or int.from_bytes(magic) in pcap_magics
