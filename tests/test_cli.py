from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import tcplab
from support import SCENARIOS, FakeCore
from tcplab.cli import main
from tcplab.runner import _ProgressBar

BAD_MSS = """\
duration = "10s"
[[path]]
rate = "10Mbps"
delay = "10ms"
[[flows]]
mss = 10
"""


@pytest.fixture
def bad_scenario(tmp_path: Path) -> Path:
    path = tmp_path / "bad.toml"
    path.write_text(BAD_MSS, encoding="utf-8")
    return path


def run_main(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(list(args))
    out, err = capsys.readouterr()
    return status, out, err


# -- errors ------------------------------------------------------------------------------------


def test_scenario_error_is_one_line_exit_2(
    capsys: pytest.CaptureFixture[str], bad_scenario: Path
) -> None:
    status, out, err = run_main(capsys, "run", str(bad_scenario))
    assert status == 2
    assert out == ""
    assert err == (
        f"tcplab: error: {bad_scenario}: flows[0].mss: must be between 64 and 65495 (got 10)\n"
    )


@pytest.mark.parametrize("module", ["tcplab.cli", "tcplab"])
def test_error_in_a_subprocess_has_no_traceback(bad_scenario: Path, module: str) -> None:
    env = dict(os.environ)
    package_root = str(Path(tcplab.__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root, env.get("PYTHONPATH")]))
    proc = subprocess.run(
        [sys.executable, "-m", module, "run", str(bad_scenario)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert "Traceback" not in proc.stderr
    assert proc.stderr.count("\n") == 1
    assert proc.stderr.startswith("tcplab: error: ")
    assert proc.stderr.rstrip().endswith("flows[0].mss: must be between 64 and 65495 (got 10)")


_EXIT_PROGRAM = """
import atexit, pathlib, sys, threading, time
from tcplab.cli import _exit
marker = pathlib.Path(sys.argv[3])
atexit.register(lambda: marker.write_text(marker.read_text() + "atexit ran"))
print("buffered")  # a pipe's stdout is block-buffered: still in the buffer
print("to stderr", end="", file=sys.stderr)
if sys.argv[1] == "thread":
    threading.Thread(target=lambda: (time.sleep(0.3), marker.write_text("thread done, "))).start()
_exit(int(sys.argv[2]))
"""


@pytest.mark.parametrize("case", ["alone", "thread"])
def test_the_command_exits_as_the_interpreter_would(case: str, tmp_path: Path) -> None:
    # `tcplab` skips the interpreter's teardown: the status, the buffered output, a running
    # thread's work and the atexit handlers (after the threads) must be as after a normal exit.
    marker = tmp_path / "marker"
    marker.write_text("")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # buffered stdout
    proc = subprocess.run(
        [sys.executable, "-c", _EXIT_PROGRAM, case, "7", str(marker)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 7
    assert proc.stdout == "buffered\n"
    assert proc.stderr == "to stderr"
    thread = "thread done, " if case == "thread" else ""
    assert marker.read_text() == thread + "atexit ran"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["run", "nope.toml"],
            "tcplab: error: nope.toml: no such scenario file (built-in scenarios: p2p-bulk)",
        ),
        (
            ["run", "--set", "duration"],
            'tcplab: error: <built-in p2p-bulk>: --set "duration": expected KEY=VALUE, '
            "e.g. flows[0].cc=cubic",
        ),
        (
            ["run", "--set", "flows[0].cc=hybla"],
            'tcplab: error: <built-in p2p-bulk>: flows[0].cc: unknown congestion control "hybla" '
            "(choose from reno, newreno, cubic, vegas, fast, westwood, bdp-tracking, qos_tcp, bbr, "
            "dctcp)",
        ),
        (
            ["run", "--pcap", "7"],
            "tcplab: error: <built-in p2p-bulk>: pcap[0].hop: must be a link index between 0 "
            "and 0 or a link name (got 7)",
        ),
        (
            ["run", "--seed", "-1"],
            "tcplab: error: seed: must be between 0 and 18446744073709551615 (got -1)",
        ),
    ],
)
def test_input_errors_exit_2(
    capsys: pytest.CaptureFixture[str], fake_core: FakeCore, args: list[str], message: str
) -> None:
    status, out, err = run_main(capsys, *args)
    assert (status, out, err) == (2, "", message + "\n")
    assert fake_core.configs == []


def test_simulator_value_error_exit_2(
    capsys: pytest.CaptureFixture[str], fake_core: FakeCore
) -> None:
    fake_core.error = ValueError("links[0].fwd.rate_bps: must be > 0\n(details)")
    status, _, err = run_main(capsys, "run")
    assert status == 2
    # the core's own validation errors name the scenario like Python's
    assert (
        err == "tcplab: error: <built-in p2p-bulk>: links[0].fwd.rate_bps: must be > 0 (details)\n"
    )


def test_invariant_violation_exit_3(
    capsys: pytest.CaptureFixture[str], fake_core: FakeCore
) -> None:
    fake_core.violations = ["flow0: 1448 bytes never delivered", "link0: seq went backwards"]
    status, out, err = run_main(capsys, "run", "--json")
    assert status == 3
    assert json.loads(out)["flows"][0]["name"] == "flow0"  # the data is still reported
    assert err == (
        "tcplab: error: 2 invariant violation(s): flow0: 1448 bytes never delivered; "
        "link0: seq went backwards\n"
    )


def test_simulator_runtime_error_exit_3(
    capsys: pytest.CaptureFixture[str], fake_core: FakeCore
) -> None:
    fake_core.error = RuntimeError("byte 1000 delivered twice")
    status, out, err = run_main(capsys, "run")
    assert (status, out) == (3, "")
    assert err == "tcplab: error: 1 invariant violation(s): byte 1000 delivered twice\n"


def test_missing_simulator_exit_1(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "tcplab._core", None)
    monkeypatch.delattr(tcplab, "_core", raising=False)
    status, out, err = run_main(capsys, "run")
    assert (status, out) == (1, "")
    assert err == (
        "tcplab: error: the simulator extension tcplab._core is not built: install tcplab with "
        "`pip install .`\n"
    )


def test_no_command_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main([])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert (
        err == "tcplab: error: the following arguments are required: COMMAND (see tcplab --help)\n"
    )


# -- tcplab run --------------------------------------------------------------------------------


def test_json_output(capsys: pytest.CaptureFixture[str], fake_core: FakeCore) -> None:
    status, out, err = run_main(capsys, "run", "--json", "--seed", "5", "--set", "duration=20s")
    assert (status, err) == (0, "")
    assert out.count("\n") == 1
    report = json.loads(out)
    assert {
        "scenario",
        "seed",
        "flows",
        "links",
        "wall_s",
        "events",
        "packets",
        "sim_time_s",
    } <= set(report)
    assert (report["scenario"], report["seed"], report["sim_time_s"]) == ("p2p-bulk", 5, 20.0)
    flow = report["flows"][0]
    assert {
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
    } <= set(flow)
    assert isinstance(report["wall_s"], float)
    assert fake_core.configs[0]["seed"] == 5
    assert fake_core.configs[0]["duration_ns"] == 20_000_000_000


def test_table_output(capsys: pytest.CaptureFixture[str], fake_core: FakeCore) -> None:
    status, out, _ = run_main(capsys, "run", str(SCENARIOS / "dumbbell-4.toml"))
    assert status == 0
    lines = out.splitlines()
    assert lines[0].startswith("dumbbell-4  seed 1  simulated 120.0 s in ")
    assert lines[0].endswith("(123,456 events, 2,080 packets)")
    header = "flow       goodput Mbit/s  delivered MB  segments  retransmits  timeouts (spurious)"
    assert lines[2] == header
    assert (
        lines[3]
        == "cubic.0             9.600          1.50     1,036            3                2 (1)"
    )
    assert "bottleneck  fwd       1,040   1.55            2           1" in out


def test_out_dir_and_pcap(
    capsys: pytest.CaptureFixture[str], fake_core: FakeCore, tmp_path: Path
) -> None:
    out_dir = tmp_path / "run1"
    status, out, _ = run_main(
        capsys, "run", "--out", str(out_dir), "--pcap", "0:fwd", "--pcap", "link0"
    )
    assert status == 0
    assert sorted(p.name for p in out_dir.iterdir()) == [
        "cross.parquet",
        "events.parquet",
        "flows.parquet",
        "links.parquet",
        "report.html",
        "summary.json",
        "timeseries.parquet",
    ]
    assert out.endswith(f"wrote {out_dir}/summary.json, *.parquet and report.html\n")
    assert fake_core.configs[0]["pcap"] == [
        {"hop": 0, "dir": "fwd", "path": str(out_dir / "link0-fwd.pcap"), "payload_snaplen": 0},
        {"hop": 0, "dir": "both", "path": str(out_dir / "link0-both.pcap"), "payload_snaplen": 0},
    ]


def test_quiet_prints_nothing(capsys: pytest.CaptureFixture[str], fake_core: FakeCore) -> None:
    assert run_main(capsys, "run", "--quiet") == (0, "", "")
    assert fake_core.callbacks == [None]


def test_progress_only_on_a_terminal(
    capsys: pytest.CaptureFixture[str], fake_core: FakeCore, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_main(capsys, "run", "--json")
    assert fake_core.callbacks == [None]  # stderr is not a terminal under pytest
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    status, out, _ = run_main(capsys, "run", "--json")
    assert status == 0
    assert isinstance(fake_core.callbacks[1], _ProgressBar)
    json.loads(out)  # stdout stays clean
    run_main(capsys, "run", "--json", "--quiet")
    assert fake_core.callbacks[2] is None


# -- tcplab scenarios --------------------------------------------------------------------------


def test_scenarios_listing(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    status, out, _ = run_main(capsys, "scenarios", str(SCENARIOS))
    assert status == 0
    lines = out.splitlines()
    assert lines[0].split() == ["scenario", "hops", "flows", "duration", "description"]
    assert lines[1].split()[:5] == ["p2p-bulk", "1", "1", "600", "s"]
    assert "[built-in]" in lines[1]
    listed = [line.split()[0] for line in lines[2:]]
    assert listed == [str(p) for p in sorted(SCENARIOS.glob("*.toml"))]
    (tmp_path / "broken.toml").write_text('duration = "1s"\n', encoding="utf-8")
    status, out, _ = run_main(capsys, "scenarios", str(tmp_path))
    assert status == 0
    assert "invalid: path: required field missing (add a [[path]] table)" in out


def test_scenarios_bad_dir(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    status, _, err = run_main(capsys, "scenarios", str(tmp_path / "nope"))
    assert status == 2
    assert err == f'tcplab: error: "{tmp_path / "nope"}": not a directory\n'


def test_a_closed_stdout_is_not_an_error() -> None:
    """``tcplab model | head``: the reader goes away early; no "Broken pipe" message."""
    p = subprocess.Popen(
        [sys.executable, "-m", "tcplab", "model"], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert p.stdout is not None and p.stderr is not None
    p.stdout.close()
    status = p.wait(timeout=120)
    assert (status, p.stderr.read()) == (141, b"")


def _subparsers(parser: Any) -> dict[str, Any]:
    (action,) = [a for a in parser._actions if a.dest == "command"]
    return dict(action.choices)


def _options(parser: Any) -> list[tuple[Any, ...]]:
    return [
        (
            a.dest,
            a.option_strings,
            a.nargs,
            a.default,
            # A command's own subcommands (tcplab trace stats, ...) are parsers of their own,
            # built anew each time: compare their names and help.
            {k: v.format_help() for k, v in a.choices.items()}
            if isinstance(a.choices, dict)
            else a.choices,
            a.type,
            a.required,
        )
        for a in parser._actions
    ] + [("defaults", sorted(parser._defaults.items(), key=str))]


def test_the_parser_of_one_command_is_the_full_parsers() -> None:
    """``tcplab CMD`` builds only CMD's parser (start-up time); its options, help and defaults
    are the same as in the whole parser, and anything that is not a command gets the whole."""
    from tcplab.cli import _parser

    full = _subparsers(_parser())
    assert {"run", "emu", "sweep", "reproduce", "results", "analyze", "plot"} <= set(full)
    for name, whole in full.items():
        one = _subparsers(_parser(name))
        assert list(one) == [name]
        assert one[name].format_help() == whole.format_help()
        assert _options(one[name]) == _options(whole)
    assert set(_subparsers(_parser("no-such-command"))) == set(full)
