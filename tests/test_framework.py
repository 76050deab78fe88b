"""The shared layer of the reproductions: `tcplab model`, `tcplab reproduce` argument handling,
the report writer and the sweep runner."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tcplab.cli import main
from tcplab.report import Report


def test_model_list_and_eval(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["model"]) == 0
    listing = capsys.readouterr().out
    assert "mathis(" in listing and "pftk(" in listing
    assert main(["model", "mathis", "mss=1448", "rtt=100ms", "p=0.0001"]) == 0
    out = json.loads(capsys.readouterr().out)
    # 8·1448/0.1 · sqrt(3/2) / 0.01
    assert out["result"] == pytest.approx(8 * 1448 / 0.1 * 1.5**0.5 / 0.01)
    assert out["params"]["rtt"] == pytest.approx(0.1)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["model", "nosuch"], 'unknown model "nosuch"'),
        (["model", "mathis", "mss"], "model parameter: must be KEY=VALUE"),
        (["model", "mathis", "mss=abc"], "mss: must be a size like"),
        (["model", "mathis", "mss=1448", "rtt=0.1"], "missing 1 required positional argument"),
        (["model", "mathis", "mss=1448", "rtt=0.1", "p=2"], "0 < p < 1"),
        (["reproduce", "nosuch"], 'unknown paper "nosuch"'),
    ],
)
def test_bad_arguments_one_line(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err and "Traceback" not in err


def test_report_writes_verdicts(tmp_path: Path) -> None:
    r = Report("demo", "Demo paper", tmp_path / "demo")
    r.compare("throughput", 1.2e6, 1.25e6, unit="bit/s", rule="within 15%", ok=True)
    r.compare("saturation", 200e3, 320e3, unit="bit/s", rule="within 25%", ok=False, note="why")
    r.section("Notes", "text")
    path = r.write()
    md = path.read_text()
    assert "✅ holds" in md and "❌ misses" in md and "## Notes" in md
    res = json.loads((tmp_path / "demo" / "results.json").read_text())
    assert res["passed"] is False and len(res["comparisons"]) == 2


def test_sweep_order_matches_serial() -> None:
    pytest.importorskip("tcplab._core")
    from tcplab.scenario import load_scenario
    from tcplab.sweep import run_configs

    configs = []
    for seed in (1, 2, 3, 4):
        sc = load_scenario(None, ["duration=10s", "path[0].loss=0.01"])
        configs.append(sc.to_config(seed=seed))
    par = run_configs(configs, jobs=2)
    ser = run_configs(configs, jobs=1)
    assert [s["flows"][0]["bytes_delivered"] for s in par] == [
        s["flows"][0]["bytes_delivered"] for s in ser
    ]
    assert len({s["flows"][0]["bytes_delivered"] for s in par}) > 1
