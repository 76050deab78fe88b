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


def test_the_documented_command_uses_the_installed_tcplab(tmp_path: Path) -> None:
    """`python tests/scenario_fuzz.py ...` in a clone installed with `pip install .` (the
    README's install) put the clone's python/ first, whose tcplab has no built extension:
    ImportError instead of a run. A tree laid out like such a clone (the script, the
    scenarios, a python/tcplab without `_core`) must fuzz with the installed tcplab."""
    import shutil
    import subprocess
    import sys

    repo = Path(__file__).resolve().parent.parent
    (tmp_path / "tests").mkdir()
    shutil.copy(repo / "tests" / "scenario_fuzz.py", tmp_path / "tests")
    shutil.copytree(repo / "scenarios", tmp_path / "scenarios")
    shutil.copytree(repo / "python" / "tcplab" / "data", tmp_path / "python" / "tcplab" / "data")
    (tmp_path / "python" / "tcplab" / "__init__.py").write_text("")
    p = subprocess.run(
        [sys.executable, "tests/scenario_fuzz.py", "--cases", "20", "--seed", "1"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 0, p.stderr[-2000:]
    assert '"cases": 20' in p.stdout
