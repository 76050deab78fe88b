"""Regression tests of the hardening round: one or more per defect, each named after it.

Each test failed before its fix. Subprocess tests drive the installed ``tcplab`` CLI where a
signal or the exit status of a whole process is the point; the rest run in-process.
"""

from __future__ import annotations

import itertools
import json
import os
import signal
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

import tcplab
from support import SCENARIOS, sigint_as_from_a_terminal
from tcplab.cli import main
from tcplab.errors import ScenarioError
from tcplab.scenario.parse import load_scenario, parse_scenario, read_scenario

core = pytest.importorskip("tcplab._core")

P2P = str(SCENARIOS / "p2p-bulk.toml")
U64_MAX_NS = "18446744073709551615ns"
CLI = [sys.executable, "-m", "tcplab"]


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(list(args))
    out, err = capsys.readouterr()
    return status, out, err


def one_line_error(err: str, *parts: str) -> None:
    """A single ``tcplab: error:`` line containing every part (no traceback)."""
    assert err.count("\n") == 1 and err.startswith("tcplab: error: "), err
    assert "Traceback" not in err
    for part in parts:
        assert part in err, (part, err)


# -- 1. simulated time cannot overflow -----------------------------------------------------------


@pytest.mark.parametrize(
    ("scenario", "sets", "field"),
    [
        (P2P, ["path[0].delay=" + U64_MAX_NS], "path[0].delay"),
        (P2P, ["path[0].reorder={p = 0.1, extra = '5000000h'}"], "path[0].reorder.extra"),
        (P2P, ["duration=" + U64_MAX_NS], "duration"),
        (P2P, ["sample_interval=5000000h"], "sample_interval"),
        (P2P, ["flows[0].rto.max=1000001h"], "flows[0].rto.max"),
        (str(SCENARIOS / "web-downloads.toml"), ["flows[0].think=" + U64_MAX_NS], "think"),
        (
            str(SCENARIOS / "throughput-bound/lan-host.toml"),
            ["path[1].t_l=" + U64_MAX_NS],
            "path[1].t_l",
        ),
        (
            str(SCENARIOS / "3g-train-frto.toml"),
            [f"path[0].stalls=[['1s', '{U64_MAX_NS}']]"],
            "stalls",
        ),
        (
            str(SCENARIOS / "3g-train-frto.toml"),
            ["path[0].spike_duration={kind = 'const', value = '2000000h'}"],
            "spike_duration",
        ),
        (
            str(SCENARIOS / "asymmetric-link/testbed.toml"),
            ["cross[0]={kind = 'ping', interval = '" + U64_MAX_NS + "'}"],
            "cross[0].interval",
        ),
    ],
)
def test_every_time_is_at_most_a_million_hours(scenario: str, sets: list[str], field: str) -> None:
    with pytest.raises(ScenarioError, match="at most 1000000h") as err:
        load_scenario(scenario, sets)
    assert field in str(err.value)


def test_the_rust_core_rechecks_every_time_field() -> None:
    config = load_scenario(P2P, ["duration=1s"]).to_config()
    config["hops"][0]["fwd"]["delay_ns"] = 2**64 - 1
    with pytest.raises(ValueError, match=r"hops\[0\]\.fwd\.delay_ns: must be at most 1000000h"):
        core.run(json.dumps(config), None)


def test_the_longest_times_run_without_overflow() -> None:
    """Every time at its bound at once: the run ends, time never runs backwards."""
    sets = [
        "duration=1000000h",
        "sample_interval=1000000h",
        "path[0].delay=1000000h",
        "path[0].reorder={p = 0.5, extra = '1000000h'}",
        "flows[0].rto={initial = '1000000h', min = '1000000h', max = '1000000h'}",
    ]
    result = tcplab.run(load_scenario(P2P, sets), tables=False)
    assert result.summary["invariants"]["violations"] == []
    assert result.summary["sim_time_s"] == pytest.approx(3.6e9)


# -- 2. pathological RTO settings are rejected with the rule --------------------------------------


def test_a_first_rto_below_1ms_is_rejected() -> None:
    with pytest.raises(ScenarioError, match=r"flows\[0\]\.rto\.initial: must be ≥ 1ms"):
        load_scenario(P2P, ["flows[0].rto.initial=1ns", "flows[0].rto.max_backoff=0"])
    with pytest.raises(ScenarioError, match=r"rto_initial: must be ≥ 1ms"):
        load_scenario(
            str(SCENARIOS / "satellite-pep.toml"),
            ["path[1].rto_initial=1ns", "path[1].rto_min=1ns"],
        )
    config = load_scenario(P2P, ["duration=1s"]).to_config()
    config["flows"][0]["tcp"]["rto"]["initial_ns"] = 1
    with pytest.raises(ValueError, match=r"rto\.initial: must be >= 1ms"):
        core.run(json.dumps(config), None)


# -- 3. only the tables that are output are kept; long ones stream to disk -------------------------


@pytest.mark.parametrize(
    "path", sorted(SCENARIOS.rglob("*.toml")), ids=lambda p: str(p.relative_to(SCENARIOS))
)
def test_without_tables_the_summary_is_the_same_and_nothing_is_kept(path: Path) -> None:
    sc = load_scenario(path)
    full = tcplab.run(sc)
    lean = tcplab.run(sc, tables=False)
    assert lean.summary == full.summary
    assert len(lean.timeseries) == 0 and len(lean.events) == 0
    assert len(full.events) > 0


def test_a_spilled_time_series_is_written_whole(tmp_path: Path) -> None:
    """70,001 samples (more than the 65,536 held in memory) → the same table as in memory."""
    sc = load_scenario(P2P, ["duration=70s", "sample_interval=1ms"])
    in_memory = tcplab.run(sc).timeseries
    result = tcplab.run(sc, out=tmp_path)
    assert result._spilled["timeseries"][1] == 65_536  # the first rows went through the disk
    import pandas as pd

    written = pd.read_parquet(tmp_path / "timeseries.parquet")
    assert len(written) == 70_001
    pd.testing.assert_frame_equal(written, in_memory)
    pd.testing.assert_frame_equal(result.timeseries, in_memory)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "cross.parquet",
        "events.parquet",
        "flows.parquet",
        "links.parquet",
        "summary.json",
        "timeseries.parquet",
    ]


# -- 4. deep nesting is an error line, not a RecursionError ---------------------------------------


def test_deep_nesting_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    deep = "[" * 1000 + "]" * 1000
    status, _, err = cli(capsys, "run", P2P, "--set", f"duration={deep}")
    assert status == 2
    one_line_error(err, "nested too deeply")
    (tmp_path / "scenarios").mkdir()
    bad = tmp_path / "scenarios" / "deep.toml"
    bad.write_text(f"x = {'[' * 600}{']' * 600}\n", encoding="utf-8")
    status, _, err = cli(capsys, "run", str(bad))
    assert status == 2
    one_line_error(err, "deep.toml", "nested too deeply")
    status, out, _ = cli(capsys, "scenarios", str(tmp_path / "scenarios"))
    assert status == 0 and "invalid: invalid TOML: nested too deeply" in out
    status, _, err = cli(capsys, "sweep", P2P, "--vary", f"duration={deep}")
    assert status == 2
    one_line_error(err, "nested too deeply")


# -- 5. interruption: SIGTERM as SIGINT, atomic outputs, incomplete pcap, sweep workers ------------


def _start(args: list[str], cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*CLI, *args],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=sigint_as_from_a_terminal,
    )


def _wait_for(path: Path, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.05)


@pytest.mark.parametrize(
    ("sig", "status"),
    [(signal.SIGTERM, 143), (signal.SIGINT, 130)],
)
def test_an_interrupted_run_leaves_no_complete_looking_output(
    tmp_path: Path, sig: signal.Signals, status: int
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    for stale in ("summary.json", "timeseries.parquet", "events.parquet"):
        (out / stale).write_text("from an earlier run")
    # Started as from a test suite run in the background (SIGINT ignored, inherited by every
    # child): the SIGINT case hung there, and only there, until `_start` gave the child the
    # default action back (`sigint_as_from_a_terminal`).
    ignored = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        proc = _start(
            [
                "run",
                P2P,
                "--set",
                "duration=100000s",
                "--pcap",
                "0",
                "--out",
                str(out),
                "--quiet",
            ],
            tmp_path,
        )
    finally:
        signal.signal(signal.SIGINT, ignored)
    try:
        _wait_for(out / ".link0-both.pcap.part")  # the capture, until the run completes
        time.sleep(0.5)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == status, err
    one_line_error(err, "terminated (SIGTERM)" if sig == signal.SIGTERM else "interrupted")
    names = sorted(p.name for p in out.iterdir())
    assert names == ["link0-both.pcap.incomplete"], names


def test_sigterm_stops_the_sweep_workers(tmp_path: Path) -> None:
    proc = _start(
        [
            "sweep",
            P2P,
            "--set",
            "duration=100000s",
            "--vary",
            "flows[0].cc=reno,cubic",
            "--jobs",
            "2",
        ],
        tmp_path,
    )
    deadline = time.monotonic() + 30
    children: list[int] = []
    while len(children) < 2 and time.monotonic() < deadline:
        time.sleep(0.1)
        children = _children(proc.pid)
    assert len(children) >= 2, "the pool never started"
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 143, err
    time.sleep(0.2)
    alive = [pid for pid in children if _alive(pid)]
    assert alive == [], f"workers still running: {alive}"


def _children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        text = (task / "children").read_text().split()
        found += [int(x) for x in text]
    return found


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


# -- 6. errors keep the contract -----------------------------------------------------------------


def test_rust_validator_errors_are_scenario_errors_with_the_file() -> None:
    sc = load_scenario(P2P, ["duration=1s"])
    sc.config["hops"][0]["fwd"]["delay_ns"] = 2**64 - 1  # past the Python checks
    with pytest.raises(ScenarioError) as err:
        tcplab.run(sc)
    # the core's hops[0] is the TOML's path[0] (scenario.core_error)
    assert err.value.located().startswith(f"{P2P}: path[0].fwd.delay_ns: must be at most")


@pytest.mark.parametrize(
    ("sets", "rule"),
    [
        (["flows[0].rcv_buf=2GiB"], r"flows\[0\]\.rcv_buf: must be at most 1GiB"),
        (["flows[0].ack.max_delay=600ms"], r"flows\[0\]\.ack\.max_delay: must be at most 500ms"),
    ],
)
def test_rust_only_rules_are_checked_in_python(sets: list[str], rule: str) -> None:
    with pytest.raises(ScenarioError, match=rule):
        load_scenario(P2P, sets)


def test_wlan_cross_traffic_error_names_a_real_field() -> None:
    with pytest.raises(ScenarioError) as err:
        load_scenario(str(SCENARIOS / "wlan-uplink.toml"), ["cross[0].rate=1Mbps"])
    assert str(err.value).startswith("path[0].stations: cross-traffic source")


def test_file_errors_are_exit_1_with_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, _, err = cli(
        capsys,
        "run",
        P2P,
        "--set",
        "duration=1s",
        "--set",
        "pcap=[{hop=0, file='/proc/no/x.pcap'}]",
    )
    assert status == 1
    one_line_error(err, f"{P2P}: pcap[0].file: cannot create /proc/no/x.pcap")
    start = time.monotonic()
    status, _, err = cli(capsys, "run", P2P, "--set", "duration=100000s", "--out", "/proc/no")
    assert status == 1 and time.monotonic() - start < 5  # found before the run, not after
    one_line_error(err, "/proc/no: cannot write")
    start = time.monotonic()
    status, _, err = cli(
        capsys, "sweep", P2P, "--set", "duration=100000s", "--out", "/proc/no/rows.csv"
    )
    assert status == 1 and time.monotonic() - start < 5
    one_line_error(err, "cannot write")


def test_argparse_errors_are_one_line() -> None:
    done = subprocess.run([*CLI, "run", "--bogus"], capture_output=True, text=True)
    assert done.returncode == 2
    one_line_error(done.stderr, "unrecognized arguments: --bogus")


# -- 7. tcplab model -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["bianchi", "n=5", "data_rate=0"], "bianchi: float division by zero"),
        (["asym_bound", "down_bps=10Mbps", "up_bps=inf"], "up_bps: must be a finite number"),
        (["mathis", "mss=1460", "rtt=10Mbps", "p=0.01"], 'rtt: must be a time like "50ms"'),
        (["mathis", "mss=1460", "rtt=0.1", "p=0.01", "p=0.02"], "p: given twice"),
        (["mathis", "mss=1460", "rtt=0.1", "p=nan"], "p: must be a finite number"),
        (["mathis", "mss=1460", "rtt=0.1", "p=10Mbps"], "p: must be a plain number"),
        (["asym_window", "down_bps=1e308", "up_bps=1e-308"], "the result is not finite"),
    ],
)
def test_model_inputs_are_checked(
    capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    status, out, err = cli(capsys, "model", *args)
    assert status == 2 and out == ""
    one_line_error(err, message)


def test_model_output_is_strict_json(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = cli(capsys, "model", "mathis", "mss=1460B", "rtt=100ms", "p=0.01")
    assert status == 0
    assert json.loads(out)["params"] == {"mss": 1460.0, "rtt": 0.1, "p": 0.01}


# -- 8. sweep grid bound -------------------------------------------------------------------------


def test_a_huge_sweep_grid_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = cli(capsys, "sweep", P2P, "--seeds", "100000000000")
    assert status == 2
    one_line_error(err, "at most 1,000,000 per sweep")


# -- 9. nothing silently accepted or clamped -----------------------------------------------------


def test_an_rlc_hop_cannot_reuse_a_name() -> None:
    with pytest.raises(ScenarioError, match=r'path\[1\]\.name: duplicate link name "air"'):
        load_scenario(
            P2P, ["path[0].name=air", "path[1]={kind = 'rlc', name = 'air', preset = 'strong'}"]
        )


def test_zero_byte_downloads_are_refused() -> None:
    web = str(SCENARIOS / "web-downloads.toml")
    with pytest.raises(ScenarioError, match=r"flows\[0\]\.sizes: must be ≥ 1 byte"):
        load_scenario(web, ["flows[0].sizes=0"])
    with pytest.raises(ScenarioError, match=r"sizes\.value: must be ≥ 1 byte"):
        load_scenario(web, ["flows[0].sizes={kind = 'const', value = 0}"])


def test_empirical_weights_must_sum_to_a_finite_number() -> None:
    bins = "[[1, 100, 1e308], [100, 200, 1e308]]"
    with pytest.raises(ScenarioError, match="weights must sum to a finite number"):
        load_scenario(
            str(SCENARIOS / "web-downloads.toml"),
            [f"flows[0].sizes={{kind = 'empirical', bins = {bins}}}"],
        )


def test_a_line_break_in_set_is_refused() -> None:
    with pytest.raises(ScenarioError, match="must be one line"):
        load_scenario(P2P, ["duration=1s\nflows[0].cc=cubic"])


# -- 10. pcap ------------------------------------------------------------------------------------


def _timestamps(path: Path) -> list[int]:
    data = path.read_bytes()
    at, out = 24, []
    while at < len(data):
        secs, nanos, incl, _ = struct.unpack_from("<IIII", data, at)
        out.append(secs * 10**9 + nanos)
        at += 16 + incl
    return out


def test_both_direction_captures_are_in_time_order(tmp_path: Path) -> None:
    sets = [
        "duration=20s",
        "pcap=[{hop = 0, dir = 'both', file = 'both.pcap'},"
        " {hop = 0, dir = 'fwd', file = 'fwd.pcap'}]",
    ]
    tcplab.run(load_scenario(P2P, sets), out=tmp_path)
    both = _timestamps(tmp_path / "both.pcap")
    fwd = _timestamps(tmp_path / "fwd.pcap")
    assert len(fwd) > 10_000 and len(both) > len(fwd)  # overlapping captures both fill
    assert all(a <= b for a, b in itertools.pairwise(both))
    assert all(a <= b for a, b in itertools.pairwise(fwd))


def test_capture_on_a_pep_hop_is_refused() -> None:
    with pytest.raises(ScenarioError, match=r"pcap\[0\]\.hop: a pep hop transmits nothing"):
        load_scenario(str(SCENARIOS / "satellite-pep.toml"), ["pcap=[{hop = 1}]"])


# -- 11. minor -----------------------------------------------------------------------------------


def test_a_byte_order_mark_is_ignored(tmp_path: Path) -> None:
    path = tmp_path / "bom.toml"
    path.write_bytes(b"\xef\xbb\xbf" + Path(P2P).read_bytes())
    assert load_scenario(path).name == load_scenario(P2P).name


def test_api_misuse_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="is a directory"):
        read_scenario(tmp_path)
    assert load_scenario(P2P, overrides=None).name == "p2p-bulk"
    with pytest.raises(ScenarioError, match="must be a KEY=VALUE string"):
        load_scenario(P2P, overrides=[1])  # type: ignore[list-item]
    with pytest.raises(ScenarioError, match="must be a table"):
        parse_scenario(None)  # type: ignore[arg-type]


def test_an_empty_out_is_refused(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    os.chdir(tmp_path)
    status, _, err = cli(capsys, "run", P2P, "--set", "duration=1s", "--out", "")
    assert status == 2
    one_line_error(err, '--out: must name a directory (got "")')
    assert list(tmp_path.iterdir()) == []


def test_errors_cut_long_keys_and_values(capsys: pytest.CaptureFixture[str]) -> None:
    """An error line once repeated a 240 KB key; keys and values are cut to their start and end."""
    key = "k" * 240_000
    status, _, err = cli(capsys, "run", P2P, "--set", f"{key}=1")
    assert status == 2
    one_line_error(err, "unknown field", "more characters")
    assert len(err) < 1000
    status, _, err = cli(capsys, "run", P2P, "--set", f"duration={'9' * 5000}s")
    assert status == 2
    one_line_error(err, "duration: must be at most 1000000h", "more characters")
    assert len(err) < 1000
    # An integer beyond Python's 4300-digit conversion limit is a value, not a crash message.
    status, _, err = cli(capsys, "run", P2P, "--set", f"duration={'9' * 5000}")
    assert status == 2
    one_line_error(err, 'duration: must be a time like "50ms"', "more characters")


def test_a_time_series_of_gigabytes_is_announced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A 1 bps bottleneck leaves almost nothing to simulate, so a million hours of it sampled
    every 100 ms ran fast and wrote its time series at 30-70 MB a second without a word. It
    runs as asked (nothing is bounded silently) but one line says how much it may take."""
    from tcplab import runner

    sets = ["path[0].bottleneck.rate=1bps", "duration=1000000h"]
    huge = load_scenario(str(SCENARIOS / "dumbbell-4.toml"), sets).to_config()
    # 3.6e10 ticks, 4 flows, 72 bytes a row
    assert runner.time_series_bytes(huge) == (36_000_000_000 + 1) * 4 * 72
    assert runner.time_series_bytes({**huge, "sample_interval_ns": 0}) == 0
    # A short run with the same size announced (the real one would write for hours).
    small = load_scenario(P2P, ["duration=2s"])
    runner.run(small, out=tmp_path / "small")
    assert "warning" not in capsys.readouterr().err
    size = runner.time_series_bytes(small.to_config())
    with pytest.MonkeyPatch.context() as m:
        m.setattr(runner, "TIME_SERIES_WARN_BYTES", size - 1)
        runner.run(small, out=tmp_path / "warned")
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("tcplab: warning: the time series may take up to")
    assert "sample_interval = 0 records none" in err[0]


def test_an_unanswered_handshake_gives_up_and_says_why() -> None:
    """A million-hour delay kept every SYN retransmission in flight (one per 60 s RTO for the
    whole run: 60M copies, 8.45 GB); the TCP now gives up as RFC 1122 §4.2.3.5 and Linux's
    tcp_write_timeout() do, and the run's notes say why nothing was delivered."""
    for stack, at, n in (("rfc", "183.000", 7), ("linux", "127.000", 6)):
        r = tcplab.run(
            load_scenario(
                P2P,
                [
                    "path[0].delay=1000000h",
                    "duration=1000000h",
                    f"flows[0].stack={stack}",
                ],
            ),
            tables=False,
        )
        (note,) = r.summary["invariants"]["notes"]
        assert f"the sender gave up at {at} s after {n} timeout retransmissions of its SYN" in note
        assert r.summary["flows"][0]["segments_sent"] == n + 1


def test_the_emu_summary_says_why_an_endpoint_connection_stopped() -> None:
    """An endpoint connection that gave up had a `reset` row but no line in the printed
    summary; the endpoint's `notes` (endpoint.rs) are now printed as `tcplab run` prints its."""
    from tcplab.cli import _render_emu

    note = (
        "conn 0: the tcplab client gave up at 7.000 s after 2 timeout retransmissions of its "
        "SYN (rto.syn_retries = 2); 0 bytes received, 0 bytes of its own acknowledged"
    )
    flow = {
        "connections": 1, "bytes_delivered": 0, "goodput_bps": 0.0, "retransmitted_segments": 2,
        "timeouts": 2, "spurious_timeouts": 0, "spurious_detected": 0,
    }  # fmt: skip
    summary = {
        "links": [],
        "connections": [],
        "emulator": {
            "lateness_us": dict.fromkeys(("mean", "p50", "p99", "p999", "max", "packets"), 0)
        },
        "endpoint": {"role": "client", "cc": "newreno", "flows": [flow], "notes": [note]},
    }
    assert f"\nnote: {note}" in _render_emu(summary)


def test_the_cli_says_why_nothing_was_delivered(capsys: pytest.CaptureFixture[str]) -> None:
    """The notes were only in summary.json: `tcplab run` (table or --json) showed a flow that
    delivered nothing without saying why."""
    sets = ["--set", "path[0].delay=1000000h", "--set", "duration=1000000h"]
    assert main(["run", *sets]) == 0
    out = capsys.readouterr().out
    assert "note: flow 0 conn 0: the sender gave up at 183.000 s" in out
    assert main(["run", *sets, "--json"]) == 0
    (note,) = json.loads(capsys.readouterr().out)["notes"]
    assert "of its SYN (rto.syn_retries = 7); 0 bytes delivered" in note
