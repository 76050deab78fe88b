"""``kind = "trace"`` hops in scenarios, ``delay_trace`` on links, and ``tcplab trace``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from support import REPO
from tcplab.analyze import tracefile
from tcplab.errors import ScenarioError
from tcplab.scenario.parse import load_scenario, parse_scenario
from tcplab.scenario.trace import resolved

BUNDLED = REPO / "scenarios" / "trace-cellular.toml"


def _scenario(hop: dict[str, Any]) -> dict[str, Any]:
    return {"duration": "2s", "path": [hop], "flows": [{"cc": "cubic"}]}


def test_trace_keys_build_the_hop_and_files_are_relative_to_the_scenario() -> None:
    s = load_scenario(BUNDLED)
    (hop,) = s.config["hops"]
    assert hop["kind"] == "trace" and hop["repeat"] is True
    # Names stay as written; the core reads them relative to the scenario's directory.
    assert hop["fwd"]["file"] == "traces/synth-20s.down"
    assert hop["rev"]["file"] == "traces/synth-20s.up"
    assert s.config["base_dir"] == str(REPO / "scenarios")
    assert resolved(s.config) == [
        REPO / "scenarios" / "traces" / "synth-20s.down",
        REPO / "scenarios" / "traces" / "synth-20s.up",
    ]
    assert hop["fwd"]["delay_ns"] == 20_000_000
    assert hop["fwd"]["queue"] == {"kind": "packets", "limit": 200}


@pytest.mark.parametrize(
    ("hop", "message"),
    [
        ({"kind": "trace", "down": "x"}, "path[0].up: required field missing"),
        (
            {"kind": "trace", "down": "x", "up": "y", "up_rate": "1Mbps"},
            "path[0].up_rate: cannot be combined with path[0].up",
        ),
        ({"kind": "trace", "down": "", "up_rate": "1Mbps"}, "path[0].down: must be a file name"),
        (
            {"kind": "trace", "down": "a\nb", "up_rate": "1Mbps"},
            'path[0].down: must be a file name without control characters (got "a\\nb")',
        ),
        (
            {"kind": "trace", "down": "x", "up_rate": "1Mbps", "format": "pcap"},
            'path[0].format: unknown trace format "pcap"',
        ),
        (
            {"kind": "trace", "down": "x", "up_rate": "1Mbps", "loss": 0.1, "loss_model": {}},
            "path[0].loss_model: cannot be combined with path[0].loss",
        ),
    ],
)
def test_trace_key_rules(hop: dict[str, Any], message: str) -> None:
    with pytest.raises(ScenarioError) as err:
        parse_scenario(_scenario(hop))
    assert str(err.value).startswith(message), str(err.value)


def test_a_bad_trace_is_refused_with_its_file_and_line(tmp_path: Path) -> None:
    pytest.importorskip("tcplab._core")
    bad = tmp_path / "bad.down"
    bad.write_text("1\n5\n3\n")
    with pytest.raises(ScenarioError) as err:
        parse_scenario(_scenario({"kind": "trace", "down": str(bad), "up_rate": "1Mbps"}))
    assert str(err.value) == (
        f'path[0].down: {bad}:3: timestamps must not decrease (3 after 5) (got "3")'
    )
    delay = tmp_path / "d.csv"
    delay.write_text("0,10\nx,1\n")
    link = {"rate": "1Mbps", "delay": "1ms", "delay_trace": str(delay)}
    with pytest.raises(ScenarioError) as err:
        parse_scenario(_scenario(link))
    assert str(err.value).startswith(f"path[0].down.delay_trace: {delay}:2: must be time_ms")


def test_a_run_over_a_trace_reports_a_link_row() -> None:
    pytest.importorskip("tcplab._core")
    from tcplab.campaign.single import run_config

    s = load_scenario(BUNDLED, ["duration=5s"])
    summary = run_config(s.to_config())
    rows = [r for r in summary["links"] if r["name"] == "trace0"]
    assert [r["dir"] for r in rows] == ["fwd", "rev"]
    assert all(r["kind"] == "trace" for r in rows)
    down = tracefile.load(str(resolved(s.config)[0]))
    # The flow gets no more than the trace carries in 5 s.
    capacity = down.ip_bytes[down.t_ns <= 5_000_000_000].sum()
    delivered = summary["flows"][0]["bytes_delivered"]
    assert 0.3 * capacity < delivered <= capacity


def test_trace_tools_round_trip_and_stats(tmp_path: Path) -> None:
    pytest.importorskip("tcplab._core")
    src = tmp_path / "a.down"
    # 4 opportunities at 1 ms, one at 2 ms, an outage of 998 ms, one at 1000 ms.
    src.write_text("1\n1\n1\n1\n2\n1000\n")
    tr = tracefile.load(src)
    assert tr.t_ns.tolist() == [1_000_000, 2_000_000, 1_000_000_000]
    assert tr.ip_bytes.tolist() == [6000, 1500, 1500]
    s = tracefile.stats(tr, outage_ns=500_000_000)
    assert s["duration_s"] == 1.0 and s["bytes"] == 9000
    assert s["mean_mbps"] == pytest.approx(9000 * 8 / 1e6)
    assert (s["outages"], s["outage_longest_s"]) == (1, 0.998)
    csv = tmp_path / "a.csv"
    back = tmp_path / "b.down"
    tracefile.write(tr, csv, "csv")
    assert csv.read_text().splitlines()[:2] == ["time_us,bytes", "1000,6000"]
    tracefile.write(tracefile.load(csv, "csv"), back, "mahimahi")
    assert back.read_text() == src.read_text()


def test_synth_traces_have_the_asked_peak(tmp_path: Path) -> None:
    tr = tracefile.synth(60, 20e6, seed=3)
    rate = tracefile.per_bin(tr, 1_000_000_000)[:-1] * 8 / 1e6
    assert rate.max() <= 20 * 1.2 and rate.mean() > 2
    assert np.all(np.diff(tr.t_ns) > 0)


def test_trace_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("tcplab._core")
    from tcplab.cli import main

    f = tmp_path / "s.down"
    assert main(["trace", "synth", "-o", str(f), "--seconds", "5", "--peak", "10"]) == 0
    assert main(["trace", "stats", str(f), "--json"]) == 0
    s = json.loads(capsys.readouterr().out)
    assert s["duration_s"] == 5.0 and 0 < s["mean_mbps"] <= 12
    png = tmp_path / "s.png"
    assert main(["trace", "plot", str(f), "-o", str(png)]) == 0
    assert png.stat().st_size > 1000
    assert main(["trace", "stats", str(tmp_path / "missing.down")]) == 2
    assert "missing.down: cannot read" in capsys.readouterr().err


def test_a_stored_trace_run_does_not_depend_on_where_the_checkout_is(tmp_path: Path) -> None:
    """The same scenario and traces in two directories: the same run key and stored config
    (no machine path in either); another trace's contents give another key."""
    pytest.importorskip("tcplab._core")
    import shutil

    from tcplab.campaign.store import encode_run, run_key

    copy = tmp_path / "elsewhere"
    shutil.copytree(REPO / "scenarios" / "traces", copy / "traces")
    shutil.copy(BUNDLED, copy / BUNDLED.name)
    a, b = load_scenario(BUNDLED).to_config(), load_scenario(copy / BUNDLED.name).to_config()
    assert a["base_dir"] != b["base_dir"]
    assert run_key(a, "t") == run_key(b, "t")
    text = encode_run(b, {})[0]
    assert encode_run(a, {})[0] == text and str(tmp_path) not in text
    (copy / "traces" / "synth-20s.up").write_text("1\n2\n")
    assert run_key(load_scenario(copy / BUNDLED.name).to_config(), "t") != run_key(a, "t")


def test_the_csv_rate_form_serves_at_its_rates_and_bad_rows_name_file_and_line(
    tmp_path: Path,
) -> None:
    """A csv trace with the header ``time_us,rate_bps``: 12 Mbit/s for 900 ms, then an outage
    of 100 ms, repeating; the uplink at a fixed rate. A CUBIC download for 4 s gets at most the
    10.8 Mbit/s the trace carries on average, and most of it."""
    pytest.importorskip("tcplab._core")
    from tcplab.campaign.single import run_config

    (tmp_path / "r.csv").write_text("time_us,rate_bps\n0,12000000\n900000,0\n1000000,0\n")
    scenario = tmp_path / "s.toml"
    scenario.write_text(
        'duration = "4s"\n[[path]]\nkind = "trace"\ndown = "r.csv"\nformat = "csv"\n'
        'up_rate = "2Mbps"\ndelay = "10ms"\nqueue = 100\n[[flows]]\nstack = "linux"\n'
        'bytes = "unlimited"\n'
    )
    summary = run_config(load_scenario(scenario).to_config())
    goodput = summary["flows"][0]["bytes_delivered"] * 8 / 4
    assert 0.6 * 10.8e6 < goodput < 10.8e6
    (tmp_path / "r.csv").write_text("time_us,rate_bps\n0,12000000\n900000,fast\n")
    with pytest.raises(ScenarioError) as e:
        load_scenario(scenario)
    message = str(e.value).strip()
    assert "r.csv:3: must be time_us,rate_bps with whole numbers" in message
    assert "\n" not in message


def test_trace_tools_read_the_csv_rate_form(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """12 Mbit/s for 200 ms, an outage to 300 ms, 6 Mbit/s to the period's end at 1 s: the
    tools see 1500 bytes in each of the first 200 ms, 750 in each of the last 700, one outage
    of 101 ms (from the last full millisecond at 200 ms to the first at 301 ms), and a
    conversion to Mahimahi carries the same bytes and ends at the period."""
    pytest.importorskip("tcplab._core")
    from tcplab.cli import main

    src = tmp_path / "r.csv"
    src.write_text("time_us,rate_bps\n0,12000000\n200000,0\n300000,6000000\n1000000,0\n")
    tr = tracefile.load(src, "csv")
    assert tr.t_ns.size == 900 and tr.duration_ns == 1_000_000_000
    assert tr.ip_bytes[:200].tolist() == [1500] * 200 and set(tr.ip_bytes[200:]) == {750}
    assert main(["trace", "stats", str(src), "--format", "csv", "--outage", "0.05", "--json"]) == 0
    s = json.loads(capsys.readouterr().out)
    assert s["bytes"] == 825_000 and s["mean_mbps"] == pytest.approx(6.6)
    assert (s["outages"], s["outage_longest_s"]) == (1, 0.101)
    mm = tmp_path / "r.down"
    convert = ["trace", "convert", str(src), "--format", "csv", "--to", "mahimahi"]
    assert main([*convert, "-o", str(mm)]) == 0
    lines = mm.read_text().split()
    assert len(lines) == 550 and lines[-1] == "1000" and lines[:2] == ["1", "2"]
    png = tmp_path / "r.png"
    assert main(["trace", "plot", str(src), "--format", "csv", "-o", str(png)]) == 0
    assert png.stat().st_size > 1000
    src.write_text("time_us,rate_bps\n0,12000000\n10,x\n")
    assert main(["trace", "stats", str(src), "--format", "csv"]) == 2
    assert "r.csv:3: must be time_us,rate_bps with whole numbers" in capsys.readouterr().err
