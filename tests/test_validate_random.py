"""``tcplab validate linux --random``: the draw (always) and one seeded quick draw on the real
stack (root, namespaces and TUN, else skipped with the reason; about 30 s)."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from support import realtime
from tcplab.errors import ScenarioError

pytest.importorskip("numpy")

from tcplab.real.validate.draw import (
    Space,
    case_errors,
    case_spec,
    draw_cases,
    load_space,
    summarise,
)
from tcplab.real.validate.netlab import available


def test_draw_is_seeded_and_prefix_stable() -> None:
    a = draw_cases(Space(), 30, seed=5, duration_s=20, warmup_s=3)
    b = draw_cases(Space(), 10, seed=5, duration_s=20, warmup_s=3)
    assert [c for c, _ in a[:10]] == [c for c, _ in b]
    c = draw_cases(Space(), 10, seed=6, duration_s=20, warmup_s=3)
    assert [x for x, _ in c] != [x for x, _ in b]


def test_draw_stays_in_the_space() -> None:
    space = Space()
    drawn = draw_cases(space, 400, seed=1, duration_s=20, warmup_s=3)
    ccs = {c.cc for c, _ in drawn}
    assert ccs == {"reno", "cubic"}
    for case, info in drawn:
        assert 1e6 <= case.rate_bps <= 200e6
        assert 5 <= case.rtt_ms <= 300
        assert case.loss == 0 or 1e-4 <= case.loss <= 3e-2
        assert case.queue >= 2
        # The queue is the drawn number of BDPs rounded to packets, or 2 where that is more.
        bdp = case.bdp_packets
        assert info["queue_bdp"] == pytest.approx(case.queue / bdp)
        assert 0.1 * bdp - 0.5 <= case.queue <= 4 * bdp + 0.5 or case.queue == 2
    lossless = sum(c.loss == 0 for c, _ in drawn) / len(drawn)
    assert 0.18 < lossless < 0.32  # 1/4 of the cases
    # Log-uniform: about as many rates below the geometric middle as above it.
    mid = math.sqrt(1e6 * 200e6)
    below = sum(c.rate_bps < mid for c, _ in drawn) / len(drawn)
    assert 0.4 < below < 0.6


def test_case_spec_runs_the_drawn_case_again() -> None:
    from tcplab.real.validate.run import parse_case

    for case, _ in draw_cases(Space(), 20, seed=3, duration_s=20, warmup_s=3):
        again = parse_case(case_spec(case), quick=False)
        assert (again.cc, again.rate_bps, again.rtt_ms, again.loss, again.queue) == (
            case.cc,
            case.rate_bps,
            case.rtt_ms,
            case.loss,
            case.queue,
        )


def test_space_file_narrows_the_draw(tmp_path: Path) -> None:
    f = tmp_path / "space.toml"
    f.write_text('cc = ["cubic"]\nrate = ["10Mbps", "20Mbps"]\nrtt = ["50ms", "60ms"]\n'
                 "loss_zero = 1\nqueue_bdp = [1, 1]\n")  # fmt: skip
    space = load_space(f)
    for case, info in draw_cases(space, 20, seed=2, duration_s=20, warmup_s=3):
        assert case.cc == "cubic" and 10e6 <= case.rate_bps <= 20e6 and case.loss == 0
        assert 50 <= case.rtt_ms <= 60 and abs(info["queue_bdp"] - 1) < 0.05


def test_space_file_can_draw_bbr(tmp_path: Path) -> None:
    """BBR is one of the space's congestion controls when a space file lists it: its cases are
    drawn, written as a ``--case`` spec and read back, and tcplab's side runs BBR."""
    from tcplab.real.validate.compare import tcplab_scenario
    from tcplab.real.validate.run import parse_case

    f = tmp_path / "space.toml"
    f.write_text('cc = ["reno", "cubic", "bbr"]\n')
    drawn = draw_cases(load_space(f), 60, seed=4, duration_s=20, warmup_s=3)
    assert {c.cc for c, _ in drawn} == {"reno", "cubic", "bbr"}
    case = next(c for c, _ in drawn if c.cc == "bbr")
    assert parse_case(case_spec(case), quick=False).cc == "bbr"
    assert tcplab_scenario(case, 1000, stack="linux")["flows"][0]["cc"] == "bbr"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('cc = ["vegas"]', "space.toml: cc: must be a non-empty list of reno, cubic"),
        ('rate = ["10Mbps"]', "space.toml: rate: must be a list [low, high]"),
        ('rtt = ["50ms", "5ms"]', "space.toml: rtt: must satisfy 0 < low <= high"),
        ("loss = [0.1, 2]", "space.toml: loss: must be below 1"),
        ("loss_zero = 1.5", "space.toml: loss_zero: must be in [0, 1]"),
        ('queue_bdp = ["a", 2]', "space.toml: queue_bdp: must be a number"),
        ("mss = 1", "space.toml: mss: unknown key"),
        ("rate = [", "space.toml: not valid TOML"),
    ],
)
def test_bad_space_file_names_file_and_key(tmp_path: Path, text: str, message: str) -> None:
    f = tmp_path / "space.toml"
    f.write_text(text + "\n")
    with pytest.raises(ScenarioError) as err:
        load_space(f)
    assert message in str(err.value) and "\n" not in str(err.value)


def _row(lg: float, sg: float, lr: float, sr: float, lt: float, st: float) -> dict:
    return {
        "linux_goodput": (lg, 0.0),
        "tcplab_goodput": (sg, 0.0),
        "linux_retrans": lr,
        "tcplab_retrans": sr,
        "linux_timeouts": lt,
        "tcplab_timeouts": st,
    }


def test_errors_and_targets() -> None:
    good = case_errors(_row(10e6, 10.5e6, 100, 120, 0, 0))
    assert good["goodput_10"] and good["retrans_30"] and not good["spurious_rtos"]
    assert good["goodput_err"] == pytest.approx(0.05)
    bad = case_errors(_row(10e6, 12.5e6, 100, 140, 0, 1))
    assert not bad["goodput_10"] and not bad["goodput_20"] and not bad["retrans_30"]
    assert bad["spurious_rtos"]
    # Linux's own RTOs are no target miss; tcplab's half an RTO per run is tolerated.
    assert not case_errors(_row(1e6, 1e6, 10, 10, 2, 5))["spurious_rtos"]
    assert not case_errors(_row(1e6, 1e6, 10, 10, 0, 0.4))["spurious_rtos"]
    s = summarise([good] * 9 + [bad])
    assert s["goodput_within_10"] == 9 and s["met"]["goodput_10"]
    assert not s["met"]["goodput_20"] and not s["met"]["rtos"]
    assert s["goodput_err"]["max"] == pytest.approx(0.25)
    assert not summarise([good] * 8 + [bad] * 2)["met"]["goodput_10"]


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tcplab", "validate", "linux", *args],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--random", "0"], "--random: must be >= 1"),
        (["--random", "2", "--case", "cc=reno"], "--random: draws its own cases"),
        (["--space", "x.toml"], "--space: only with --random"),
    ],
)
def test_bad_random_options(args: list[str], message: str) -> None:
    pytest.importorskip("tcplab._core")
    r = _cli(*args)
    assert r.returncode == 2 and message in r.stderr, r.stderr


REASON = available()


@realtime(f"Linux TCP testbed unavailable: {REASON}" if REASON else None)
def test_seeded_quick_draw_reports_both_stacks(tmp_path: Path) -> None:
    pytest.importorskip("tcplab._core")
    space = tmp_path / "space.toml"
    # Small and quick: 2-10 Mbit/s, RTT 10-50 ms (the full space reaches 200 Mbit/s).
    space.write_text('rate = ["2Mbps", "10Mbps"]\nrtt = ["10ms", "50ms"]\n')
    out = tmp_path / "out"
    r = _cli("--random", "2", "--seed", "11", "--quick", "--space", str(space), "--json",
             "--out", str(out))  # fmt: skip
    assert r.returncode == 0, r.stderr
    lines = [json.loads(x) for x in r.stdout.strip().splitlines()]
    assert [x["case"]["index"] for x in lines] == [0, 1]
    drawn = [c for c, _ in draw_cases(load_space(space), 2, 11, 10.0, 2.0)]
    assert [x["case"]["spec"] for x in lines] == [case_spec(c) for c in drawn]
    for x in lines:
        assert set(x["tcplab"]) == {"linux", "matched"}
        assert x["linux"]["goodput_bps"] > 0
        for side in x["tcplab"].values():
            assert side["goodput_bps"] > 0 and "goodput_err" in side["errors"]
    res = json.loads((out / "results.json").read_text())
    assert set(res["summary"]) == {"linux", "matched"} and res["seed"] == 11
    report = (out / "report.md").read_text()
    assert "seed 11" in report and "goodput error median / p90 / max" in report
    assert (out / "errors.png").stat().st_size > 10_000


def test_report_says_whether_a_missed_cases_cis_overlap() -> None:
    from tcplab.real.validate.run import goodput_cis_overlap, random_report

    def case(i: int, lx: float, lx_ci: float, t: float, t_ci: float) -> dict:
        errors = case_errors(_row(lx, t, 10, 10, 0, 0))
        return {
            "case": {"index": i, "spec": f"cc=reno,case={i}", "queue_bdp": 1.0},
            "linux": {"goodput_bps": lx, "goodput_ci95_bps": lx_ci,
                      "retransmitted_segments": 10.0, "rtos": 0.0},
            "tcplab": {"linux": {"goodput_bps": t, "goodput_ci95_bps": t_ci,
                                 "retransmitted_segments": 10.0, "rtos": 0.0,
                                 "errors": errors}},
        }  # fmt: skip

    # +36 % with wide CIs (a few losses per run), +30 % with tight ones, and one within 10 %.
    wide, tight, fine = case(0, 1.8e6, 0.7e6, 2.45e6, 0.8e6), case(1, 10e6, 0.1e6, 13e6, 0.1e6), \
        case(2, 5e6, 0.1e6, 5.1e6, 0.1e6)  # fmt: skip
    assert goodput_cis_overlap(wide, "linux") and not goodput_cis_overlap(tight, "linux")
    cases = [wide, tight, fine]
    res = {
        "n": 3, "seed": 5, "space": "test", "reps": 5, "tcplab_seeds": [1000], "wall_s": 6.0,
        "kernel": "k", "loadavg_start_end": [[1.0], [1.0]], "stacks": ["linux"], "cases": cases,
        "summary": {"linux": summarise([c["tcplab"]["linux"]["errors"] for c in cases])},
    }  # fmt: skip
    report = random_report(res)
    assert "In 1 of the 2 case(s) beyond 10 % goodput the 95 % CIs" in report, report
    rows = [x for x in report.splitlines() if x.startswith("| 0 |") or x.startswith("| 1 |")]
    assert "| 1.800 ± 0.700 / 2.450 ± 0.800 | +36.1% | yes |" in rows[0], rows[0]
    assert "| +30.0% | no |" in rows[1], rows[1]
    # A single run has no CI: the report says so instead of failing.
    for c in cases:
        c["linux"]["goodput_ci95_bps"] = None
    assert goodput_cis_overlap(wide, "linux") is None
    report = random_report(res)
    assert "beyond 10 % goodput the 95 % CIs" not in report
    assert "| 1.800 / 2.450 ± 0.800 | +36.1% | n/a (one run) |" in report, report
