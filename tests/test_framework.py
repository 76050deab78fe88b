"""The shared layer of the reproductions: `tcplab model`, `tcplab reproduce` argument handling,
the report writer and the sweep runner."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from tcplab.cli import main
from tcplab.report.checks import (
    Above,
    AtLeast,
    AtMost,
    Below,
    Between,
    Claim,
    Factor,
    Highest,
    Info,
    Lowest,
    Order,
    Report,
    Within,
    firm_disagreements,
)
from tcplab.stats import ratio_ci95


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
    r.check("throughput", Within(1.2e6, rel=0.15), 1.25e6, unit="bit/s")
    r.check("saturation", Within(200e3, rel=0.25), 320e3, unit="bit/s", note="why")
    r.check("fit", Within(0.1, abs=0.01, kind="calibration"), 0.5)
    r.check("eq", Within(4.2, abs=0.05, kind="formula"), 4.21)
    r.check("noisy", AtMost(10), None, samples=[9.0, 10.5, 9.5, 11.0])
    r.check("aside", Info(), 3.0)
    r.section("Notes", "text")
    path = r.write()
    md = path.read_text()
    assert "✅ holds" in md and "❌ misses" in md and "❔ inconclusive" in md and "## Notes" in md
    assert "**1 of 3 predictions hold (1 miss, 1 inconclusive); calibrations: 0 of 1 hold; " in md
    res = json.loads((tmp_path / "demo" / "results.json").read_text())
    assert res["passed"] is False and len(res["comparisons"]) == 6
    kinds = [c["kind"] for c in res["comparisons"]]
    assert kinds == ["prediction", "prediction", "calibration", "formula", "prediction", "context"]
    assert [c["verdict"] for c in res["comparisons"]] == [
        "holds",
        "misses",
        "misses",
        "holds",
        "inconclusive",
        None,
    ]
    assert res["comparisons"][4]["n"] == 4 and res["comparisons"][4]["ci"] > 0
    assert res["counts"]["prediction"] == {
        "total": 3,
        "holds": 1,
        "misses": 1,
        "inconclusive": 1,
    }
    # a check that holds by construction is labelled, counted apart, out of the headline
    r3 = Report("demo", "Demo paper", tmp_path / "demo3")
    r3.check("pep", AtLeast(80, kind="construction"), 100.0, source="§5: 80 % or more")
    r3.check("x", Below(5), 4.0, source="§4: below 5 %")
    md3 = r3.write().read_text()
    assert "**1 of 1 predictions hold; by construction: 1 of 1 hold.**" in md3
    assert "| pep | by construction | ≥ 80 | 100 |" in md3 and "§5: 80 % or more" in md3
    res3 = json.loads((tmp_path / "demo3" / "results.json").read_text())
    assert res3["comparisons"][0]["source"] == "§5: 80 % or more"
    assert res3["counts"]["construction"]["total"] == 1
    # a calibration or formula that misses does not fail the predictions
    r2 = Report("demo", "Demo paper", tmp_path / "demo2")
    r2.check("fit", Within(0.1, abs=0.01, kind="calibration"), 0.5)
    r2.check("x", Below(5), 4.0, ci=0.5)
    assert r2.passed


@pytest.mark.parametrize(
    ("rule", "text", "value", "ci", "verdict"),
    [
        (Within(4.2, abs=0.05), "4.2 ± 0.05", 4.24, None, "holds"),
        (Within(4.2, abs=0.05), "4.2 ± 0.05", 4.24, 0.02, "inconclusive"),
        (Within(4.2, abs=0.05), "4.2 ± 0.05", 4.4, 0.1, "misses"),
        (Within(7, abs=0), "= 7", 7, None, "holds"),
        (Within(100, rel=0.1), "within ±10 % of 100", 89.0, None, "misses"),
        (Factor(0.36, 2), "within x2 of 0.36 (0.18 … 0.72)", 0.7, 0.01, "holds"),
        (Factor(0.36, 2), "within x2 of 0.36 (0.18 … 0.72)", 0.7, 0.05, "inconclusive"),
        (AtMost(10), "≤ 10", 10.0, None, "holds"),
        (Below(10), "< 10", 10.0, None, "misses"),
        (AtLeast(0.9), "≥ 0.9", 0.95, 0.04, "holds"),
        (Above(0), "> 0", 0.0, None, "misses"),
        (Between(2, 12), "2 … 12", 1.0, 0.5, "misses"),
        (Between(2, 12), "2 … 12", 1.0, 2.0, "inconclusive"),
        (AtMost(1), "≤ 1", [0.5, 0.99], [0.01, 0.02], "inconclusive"),
        (AtMost(1), "≤ 1", [0.5, 1.2], [0.01, 0.1], "misses"),
        (AtMost(1), "≤ 1", float("nan"), None, "inconclusive"),
        (Order(["a", "b", "c"]), "a > b > c", {"a": 3, "b": 2, "c": 1}, None, "holds"),
        (Order(["a", "b"]), "a > b", {"a": 3, "b": 2}, {"a": 0.6, "b": 0.6}, "inconclusive"),
        (Order(["a", "b"]), "a > b", {"a": 1, "b": 2}, {"a": 0.1, "b": 0.1}, "misses"),
        (Highest("t"), "t highest", {"t": 5, "w": 1, "s": 2}, {"t": 1.0, "s": 1.0}, "holds"),
        (Lowest("w"), "w lowest", {"t": 5, "w": 1, "s": 2}, {"w": 0.6, "s": 0.6}, "inconclusive"),
        (Claim("monotone", False), "monotone", "x", None, "misses"),
    ],
)
def test_rules_render_and_decide(rule: Any, text: str, value: Any, ci: Any, verdict: str) -> None:
    assert rule.text() == text
    assert rule.verdict(value, ci) == verdict


def test_rule_arguments_checked() -> None:
    with pytest.raises(ValueError, match="exactly one of abs= and rel="):
        Within(1.0)
    with pytest.raises(ValueError, match="rule kind"):
        AtMost(1, kind="guess")
    with pytest.raises(ValueError, match="Factor"):
        Factor(1.0, 0.5)


def test_firm_disagreements() -> None:
    a = {"comparisons": [{"item": "x", "verdict": "holds"}, {"item": "y", "verdict": "holds"}]}
    b = {
        "comparisons": [
            {"item": "x", "verdict": "misses"},
            {"item": "y", "verdict": "inconclusive"},
        ]
    }
    assert firm_disagreements(a, b) == ["x: holds vs misses"]


def test_ratio_ci95() -> None:
    r, h = ratio_ci95([2.0, 2.0, 2.0], [1.0, 1.0, 1.0])
    assert r == 2.0 and h == 0.0
    r, h = ratio_ci95([2.0, 4.0, 3.0], [1.0, 1.0, 1.0])
    assert r == 3.0 and h == pytest.approx(4.303 * 1.0 / math.sqrt(3), rel=1e-3)


def test_sweep_order_matches_serial() -> None:
    pytest.importorskip("tcplab._core")
    from tcplab.campaign.sweep import run_configs
    from tcplab.scenario.parse import load_scenario

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
