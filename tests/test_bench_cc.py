"""``bench/bench.py --cc``: the scenario copy runs the chosen congestion control (the rest of the
benchmark needs ns-3 and is run by hand, see bench/README.md)."""

from __future__ import annotations

import importlib.util
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _bench() -> object:
    spec = importlib.util.spec_from_file_location("tcplab_bench", ROOT / "bench" / "bench.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["tcplab_bench"] = mod
    spec.loader.exec_module(mod)
    return mod


def test_scenario_with_cc_sets_the_flow_only() -> None:
    bench = _bench()
    text = (ROOT / "scenarios" / "p2p-bulk.toml").read_text()
    out = bench.scenario_with_cc(text, "bbr")  # type: ignore[attr-defined]
    doc, before = tomllib.loads(out), tomllib.loads(text)
    assert [f["cc"] for f in doc["flows"]] == ["bbr"]
    doc["flows"][0]["cc"] = before["flows"][0]["cc"]
    assert doc == before
    with pytest.raises(bench.BenchError):  # type: ignore[attr-defined]
        bench.scenario_with_cc(text.replace('cc = "newreno"', ""), "bbr")  # type: ignore[attr-defined]
