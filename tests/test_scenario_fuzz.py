"""The scenario fuzzer (``tests/scenario_fuzz.py``) in CI: 3,000 seeded cases over every bundled
scenario's keys — 0 tracebacks, 0 panics, 0 cases past the time bound, every rejection one line
naming the file and the field, every accepted case run without an invariant violation."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("tcplab._core")

from scenario_fuzz import run_cases

CASES = 3000


def test_fuzzed_scenarios_are_rejected_cleanly_or_run(tmp_path: Path) -> None:
    outcome = run_cases(CASES, seed=2026, workdir=tmp_path)
    assert outcome.failures == []
    assert outcome.cases == CASES
    assert outcome.stopped_at_bound == 0
    # both sides are exercised: many rejections and many runs
    assert outcome.rejected > CASES // 2 and outcome.ran > CASES // 10


def test_non_finite_outputs_are_found() -> None:
    from scenario_fuzz import non_finite

    good = {"flows": [{"goodput_bps": 1.5, "duration_s": 2.0}], "wall_s": 0.1}
    assert non_finite(good) == []
    bad = {"flows": [{"goodput_bps": None, "duration_s": float("inf")}], "x": [float("nan")]}
    assert sorted(non_finite(bad)) == [
        "flows[0].duration_s=inf",
        "flows[0].goodput_bps=null",
        "x[0]=nan",
    ]
