"""Capture files of ``tcplab run``: written as ``.<file>.part`` and renamed only when the run is
complete, so an interrupted or killed run leaves nothing that looks complete; a full disk is an
output error (exit status 1, the file named), not bad input; ``--pcap`` captures take ``--set``
overrides like the scenario's own."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import tcplab
from tcplab import cli
from tcplab.results import RunResult

pytest.importorskip("tcplab._core")


def _tcplab(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tcplab", *args], capture_output=True, text=True, cwd=cwd,
        timeout=120,
    )  # fmt: skip


@pytest.fixture
def full_dir(tmp_path: Path) -> Iterator[Path]:
    """A 64 KiB file system (tmpfs), full after 64 KiB of capture."""
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    d = tmp_path / "small"
    d.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(d)], check=False)
    if r.returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    try:
        yield d
    finally:
        subprocess.run(["umount", str(d)], check=False)


def test_a_full_disk_is_exit_1_naming_the_capture(full_dir: Path) -> None:
    r = _tcplab("run", "p2p-bulk", "--set", "duration=5s", "--pcap", "0", cwd=full_dir)
    pcap = full_dir / "link0-both.pcap"
    assert r.returncode == 1, r.stderr
    assert r.stderr.strip() == (
        f"tcplab: error: cannot write {pcap}: No space left on device (os error 28)"
    )
    assert not pcap.exists()
    assert (full_dir / "link0-both.pcap.incomplete").exists()
    assert not (full_dir / ".link0-both.pcap.part").exists()


def test_sigkill_leaves_no_capture_that_looks_complete(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "tcplab", "run", "p2p-bulk", "--set", "duration=100000s",
         "--pcap", "0", "--quiet"],
        cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    part = tmp_path / ".link0-both.pcap.part"
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not (part.exists() and part.stat().st_size > 10**5):
            time.sleep(0.05)
        assert part.exists(), "the run did not start writing"
    finally:
        proc.kill()
        proc.wait()
    assert sorted(p.name for p in tmp_path.iterdir()) == [".link0-both.pcap.part"]


def test_an_interruption_while_the_outputs_are_written_marks_the_capture(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def interrupted(self: RunResult, out: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(RunResult, "write", interrupted)
    scenario = tcplab.load_scenario("p2p-bulk")
    data = {**scenario.data, "duration": "1s", "pcap": [{"hop": 0}]}
    with pytest.raises(KeyboardInterrupt):
        tcplab.run(tcplab.parse_scenario(data, "t"), out=tmp_path / "out")
    names = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert "link0-both.pcap" not in names and "summary.json" not in names
    assert "link0-both.pcap.incomplete" in names


def test_a_complete_run_names_its_capture(tmp_path: Path) -> None:
    r = _tcplab("run", "p2p-bulk", "--set", "duration=1s", "--pcap", "0", "--quiet", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link0-both.pcap"]


@pytest.mark.parametrize("command", ["run", "emu"])
def test_set_reaches_a_pcap_capture(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    command: str,
) -> None:
    """``--pcap 0 --set pcap[0].payload=...``: the override applies to the ``--pcap`` capture
    (it used to make a second capture without a hop)."""
    seen: list[dict[str, object]] = []

    def fake_run(scenario: tcplab.Scenario, *args: object, **kwargs: object) -> None:
        seen.extend(scenario.data["pcap"])
        raise KeyboardInterrupt

    from tcplab.real import emu

    def fake_emu(config: dict[str, object], *args: object, **kwargs: object) -> None:
        seen.extend(config["pcap"])  # type: ignore[arg-type]
        raise KeyboardInterrupt

    monkeypatch.setattr("tcplab.runner.run", fake_run)
    monkeypatch.setattr(emu, "run_command", fake_emu)
    monkeypatch.setattr(emu, "available", lambda: None)
    toml = tmp_path / "s.toml"
    toml.write_text('[[path]]\nrate = "10Mbps"\ndelay = "1ms"\n[[flows]]\n')
    args = [command, str(toml), "--pcap", "0", "--set", "pcap[0].payload=100"]
    args += ["--set", "duration=1s"] if command == "run" else ["--", "true"]
    with contextlib.suppress(KeyboardInterrupt):
        assert cli.main(args) == 130, capsys.readouterr().err
    assert len(seen) == 1
    if command == "run":
        assert seen[0] == {"hop": 0, "dir": "both", "payload": 100}
    else:
        assert seen[0]["hop"] == 0 and seen[0]["payload_snaplen"] == 100


def test_sigterm_during_a_run_keeps_the_capture_as_incomplete(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "tcplab", "run", "p2p-bulk", "--set", "duration=100000s",
         "--pcap", "0", "--quiet"],
        cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    part = tmp_path / ".link0-both.pcap.part"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not part.exists():
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link0-both.pcap.incomplete"]


def test_a_sender_tap_capture_sees_what_the_sender_sent(tmp_path: Path) -> None:
    """docs/outputs.md, where a capture records each direction: a zero-delay fast link at the
    sender's end records every transmission (the simulator's count); a capture on the rlc hop
    can only miss some (those its queue refused)."""
    import json

    toml = tmp_path / "s.toml"
    toml.write_text(
        'name = "tap"\nduration = "30s"\n[[path]]\nname = "sender-tap"\nrate = "10Gbps"\n'
        'delay = "0s"\n[[path]]\nkind = "rlc"\npreset = "car"\n[[flows]]\n'
    )
    r = _tcplab("run", str(toml), "--pcap", "sender-tap", "--pcap", "1", "--json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    truth = json.loads(r.stdout)["flows"][0]["retransmitted_segments"]
    counted = {}
    for name in ("sender-tap-both.pcap", "radio1-both.pcap"):
        a = _tcplab("analyze", str(tmp_path / name), "--json", cwd=tmp_path)
        assert a.returncode == 0, a.stderr
        counted[name] = json.loads(a.stdout)["connections"][0]["retransmissions"]
    assert truth > 0
    assert counted["sender-tap-both.pcap"] == truth
    assert counted["radio1-both.pcap"] <= truth
