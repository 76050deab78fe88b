"""``tcplab emu`` on every exit path: each signal to tcplab and to each of its children, a
SIGKILL that leaves nothing to clean up with (the next emulation reclaims it), and the
checks made before anything is created.

The tests that create namespaces need root, /dev/net/tun and iproute2 (else skipped with the
reason). Every emulation here is named with this process's tag (``TCPLAB_EMU_TAG``): other
emulations may run on the machine at the same time and are never touched.
"""

from __future__ import annotations

import io
import json
import os
import secrets
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from support import emu_leftovers, realtime
from tcplab import cli
from tcplab.real import emu

pytest.importorskip("tcplab._core")

REASON = emu.available()
needs_emu = realtime(REASON)
TAG = secrets.token_hex(3)
SERVER_NS, CLIENT_NS = f"tle{TAG}-srv", f"tle{TAG}-cli"
LINK = '[[path]]\nrate = "10Mbps"\ndelay = "1ms"\n'


def _ours() -> set[str]:
    """Namespaces and root-namespace devices of this process's emulations, and its lock."""
    return emu_leftovers(TAG)


def _pids_in(ns: str, program: str | None = None) -> list[int]:
    """The processes in namespace ``ns`` (running ``program`` only, if given: the set-up's own
    short-lived ``sysctl`` runs there too)."""
    r = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True)
    pids = []
    for pid in r.stdout.split():
        try:
            argv0 = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].decode()
        except OSError:
            continue
        if program is None or Path(argv0).name.startswith(program):
            pids.append(int(pid))
    return pids


def _alive(pid: int) -> bool:
    """Running (a zombie waiting for its parent to reap it counts as gone)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "\nState:\tZ" not in status


def _reaper_of(pid: int) -> int | None:
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == pid and b"tcplab/real/reaper.py" in cmdline:
            return int(entry.name)
    return None


def _wait(predicate: object, limit_s: float) -> bool:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return True
        time.sleep(0.05)
    return False


@pytest.fixture
def clean(monkeypatch: pytest.MonkeyPatch) -> object:
    monkeypatch.setenv("TCPLAB_EMU_TAG", TAG)
    assert not _ours()
    yield None
    # Every exit path ends with nothing left; a failing test still removes what it made.
    left = _ours()
    if left:
        emu.remove_namespaces([SERVER_NS, CLIENT_NS])
        (emu.LOCK_DIR / f"{TAG}.lock").unlink(missing_ok=True)
    assert not left, f"left behind: {left}"


#: A server that listens at once (the client starts when a socket listens) and runs on.
SERVER = (
    f"exec {sys.executable} -c 'import socket, time; s = socket.socket(); "
    's.bind(("10.99.0.1", 5001)); s.listen(); time.sleep(60)\''
)


def _start(tmp: Path, *client: str) -> subprocess.Popen[str]:
    """tcplab emu with SERVER and ``client`` (run directly: a signal to it is a signal to the
    command, not to a shell waiting for it)."""
    toml = tmp / "s.toml"
    toml.write_text(LINK)
    return subprocess.Popen(
        [sys.executable, "-m", "tcplab", "emu", str(toml), "--server", SERVER, "--quiet",
         "--", *client],
        stderr=subprocess.PIPE, text=True, start_new_session=True,
        env={**os.environ, "TCPLAB_EMU_TAG": TAG},
    )  # fmt: skip


def _children(proc: subprocess.Popen[str], client_program: str) -> dict[str, int]:
    """The server's and the client's process (in their namespaces) and the reaper."""
    found: dict[str, int] = {}

    def ready() -> bool:
        server = _pids_in(SERVER_NS, Path(sys.executable).name[:6])
        client = _pids_in(CLIENT_NS, client_program)
        reaper = _reaper_of(proc.pid)
        if server and client and reaper:
            found.update(server=server[0], client=client[0], reaper=reaper)
            return True
        return proc.poll() is not None

    assert _wait(ready, 30), "the emulation did not start"
    assert found, proc.communicate(timeout=30)[1]
    return found


def _kill(proc: subprocess.Popen[str], target: int, sig: int) -> tuple[int, str]:
    """Send ``sig`` to ``target`` (0: none) and wait for tcplab's end."""
    if sig:
        os.kill(target, sig)
    try:
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    return proc.returncode, err


SIGNALS = [signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGKILL]


@needs_emu
@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: signal.Signals(s).name)
def test_a_signal_to_tcplab_removes_everything(tmp_path: Path, clean: object, sig: int) -> None:
    proc = _start(tmp_path, "sleep", "60")
    kids = _children(proc, "sleep")
    status, err = _kill(proc, proc.pid, sig)
    if sig == signal.SIGKILL:
        # Nothing runs in tcplab any more: its reaper removes everything.
        assert status == -signal.SIGKILL
        assert _wait(lambda: not _ours(), 10), _ours()
    else:
        assert status == 128 + sig, err
        name = signal.Signals(sig).name
        assert err.strip().splitlines()[-1] in (
            f"tcplab: error: terminated ({name}); the namespaces, devices and processes were "
            "removed",
            "tcplab: error: interrupted",
        )
    assert _wait(lambda: not any(_alive(p) for p in kids.values()), 10), kids


@needs_emu
@pytest.mark.parametrize(
    ("child", "sig"),
    [(child, sig) for child in ("server", "client") for sig in SIGNALS]
    # The reaper ignores SIGINT, SIGTERM, SIGHUP and SIGQUIT alike: one of them, and SIGKILL.
    + [("reaper", signal.SIGTERM), ("reaper", signal.SIGKILL)],
    ids=lambda v: v if isinstance(v, str) else signal.Signals(v).name,
)
def test_a_signal_to_a_child_ends_or_spares_the_run_and_removes_everything(
    tmp_path: Path, clean: object, sig: int, child: str
) -> None:
    # Unless it is the one signalled, the client runs on until the test lets it end.
    go = tmp_path / "go"
    client = (
        ["sleep", "60"]
        if child == "client"
        else ["sh", "-c", f"until [ -e {go} ]; do sleep 0.05; done"]
    )
    proc = _start(tmp_path, *client)
    kids = _children(proc, client[0])
    os.kill(kids[child], sig)
    if child != "client":
        time.sleep(0.5)  # what the signal does, it has done
        assert proc.poll() is None, "the run went on"
        go.touch()
    status, err = _kill(proc, proc.pid, 0)
    # The client's status is tcplab's; a server or reaper signalled changes nothing (the
    # reaper ignores every signal but SIGKILL, and then tcplab cleans up alone).
    assert status == (128 + sig if child == "client" else 0), err
    assert not _ours()
    assert _wait(lambda: not any(_alive(p) for p in kids.values()), 10), kids


@needs_emu
def test_after_sigkill_of_tcplab_and_its_reaper_the_next_emulation_reclaims_the_leftovers(
    tmp_path: Path, clean: object
) -> None:
    proc = _start(tmp_path, "sleep", "60")
    kids = _children(proc, "sleep")
    os.kill(kids["reaper"], signal.SIGKILL)
    time.sleep(0.2)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(30)  # (its children, alive, still hold its stderr)
    assert proc.stderr is not None
    proc.stderr.close()
    # Nothing was left to clean up: both namespaces and the server are still there.
    assert {SERVER_NS, CLIENT_NS} <= _ours()
    assert _alive(kids["server"])
    r = subprocess.run(
        [sys.executable, "-m", "tcplab", "emu", str(tmp_path / "s.toml"), "--quiet", "--", "true"],
        capture_output=True, text=True, timeout=60, env={**os.environ, "TCPLAB_EMU_TAG": TAG},
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert r.stderr.strip() == (
        f"tcplab emu: removed {SERVER_NS}, {CLIENT_NS} and the processes in them, left by an "
        "emulation that was killed"
    )
    assert not _ours()
    assert _wait(lambda: not any(_alive(p) for p in kids.values()), 10), kids


@needs_emu
def test_a_live_emulations_namespaces_are_not_reclaimed(tmp_path: Path, clean: object) -> None:
    proc = _start(tmp_path, "sleep", "60")
    _children(proc, "sleep")
    try:
        assert emu.reclaim() == []
        assert {SERVER_NS, CLIENT_NS} <= _ours()
    finally:
        _kill(proc, proc.pid, signal.SIGTERM)


@needs_emu
def test_a_dual_stack_server_counts_as_listening(tmp_path: Path, clean: object) -> None:
    """iperf3 and most servers listen on an IPv6 socket that takes IPv4 too (tcp6 only)."""
    toml = tmp_path / "s.toml"
    toml.write_text(LINK)
    server = (
        f"{sys.executable} -c 'import socket, time; s = socket.socket(socket.AF_INET6); "
        "s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0); "
        's.bind(("::", 5001)); s.listen(); time.sleep(60)\''
    )
    client = f"{sys.executable} -c 'import socket; socket.create_connection((\"10.99.0.1\", 5001))'"
    r = subprocess.run(
        [sys.executable, "-m", "tcplab", "emu", str(toml), "--server", server, "--json",
         "--", "sh", "-c", client],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "warning" not in r.stderr
    summary = json.loads(r.stderr.strip().splitlines()[-1])
    # The client started once the socket listened, not after the 10 s limit.
    assert summary["wall_s"] < 8, summary["wall_s"]


@needs_emu
def test_a_server_that_never_listens_is_reported(clean: object) -> None:
    from tcplab import parse_scenario

    config = parse_scenario(
        {"path": [{"rate": "10Mbps", "delay": "1ms"}], "flows": [{}], "duration": "1s"}, "t"
    ).to_config()
    for server, why in [
        ("exit 3", "the server command exited (status 3) before any socket listened"),
        ("sleep 60", "no socket is listening in the server namespace after 0.5 s"),
    ]:
        log = io.StringIO()
        status, _ = emu.run_command(
            config, ["true"], server=server, server_wait_s=0.5, log=log, realtime=False
        )
        assert status == 0
        assert f"tcplab emu: warning: {why}; starting the client anyway" in log.getvalue()


@needs_emu
def test_the_summary_records_each_namespaces_tcp_sysctls(tmp_path: Path, clean: object) -> None:
    toml = tmp_path / "s.toml"
    toml.write_text(LINK)
    out = tmp_path / "out"
    r = subprocess.run(
        [sys.executable, "-m", "tcplab", "emu", str(toml), "--out", str(out),
         "--sysctl", "net.ipv4.tcp_congestion_control=reno", "--", "true"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "TCP congestion control: server reno, client reno" in r.stderr
    ns = json.loads((out / "summary.json").read_text())["namespaces"]
    assert ns["server"]["name"].endswith("-srv") and ns["client"]["name"].endswith("-cli")
    for side in ("server", "client"):
        sysctls = ns[side]["sysctls"]
        assert sysctls["net.ipv4.tcp_congestion_control"] == "reno"
        assert sysctls["net.ipv4.tcp_no_metrics_save"] == "1"
        assert {"net.ipv4.tcp_rmem", "net.ipv4.tcp_frto", "net.ipv4.tcp_sack"} <= set(sysctls)


@needs_emu
@pytest.mark.parametrize("extra", [[], ["--set", "pcap[0].payload=all"]])
def test_emu_captures_keep_the_payload(tmp_path: Path, clean: object, extra: list[str]) -> None:
    toml = tmp_path / "s.toml"
    toml.write_text(LINK)
    out = tmp_path / "out"
    server = f"{sys.executable} -m http.server 8000 --bind 10.99.0.1"
    r = subprocess.run(
        [sys.executable, "-m", "tcplab", "emu", str(toml), "--out", str(out), "--pcap", "0",
         *extra, "--quiet", "--server", server, "--",
         "sh", "-c", "curl -s -o /dev/null http://$TCPLAB_SERVER:8000/"],
        capture_output=True, text=True, timeout=60, cwd=tmp_path,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    raw = (out / "link0-both.pcap").read_bytes()
    pos, payload = 24, 0
    while pos < len(raw):
        incl = int.from_bytes(raw[pos + 8 : pos + 12], "little")
        orig = int.from_bytes(raw[pos + 12 : pos + 16], "little")
        assert incl == orig, "every packet whole"
        ip = raw[pos + 16 : pos + 16 + incl]
        ihl = (ip[0] & 15) * 4
        payload += len(ip) - ihl - (ip[ihl + 12] >> 4) * 4
        pos += 16 + incl
    assert payload > 0
    assert b"HTTP/1.0 200 OK" in raw


def test_an_unknown_hop_kind_is_called_unknown(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    toml = tmp_path / "s.toml"
    toml.write_text('[[path]]\nkind = "lnk"\n')
    assert cli.main(["emu", str(toml), "--", "true"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f'tcplab: error: {toml}: path[0].kind: unknown hop kind "lnk"'), err


@pytest.mark.parametrize("mtu", ["100", "575", "65536"])
def test_mtu_is_checked_before_anything_is_made(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    mtu: str,
) -> None:
    def made(*args: object, **kwargs: object) -> None:
        raise AssertionError("an emulation was started")

    monkeypatch.setattr(emu, "run_command", made)
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    toml = tmp_path / "s.toml"
    toml.write_text(LINK)
    assert cli.main(["emu", str(toml), "--mtu", mtu, "--", "true"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"tcplab: error: emu: --mtu: must be between 576 and 65535 bytes (got {mtu})"


def test_without_root_it_runs_again_through_sudo(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """sudo's secure_path would not find a tcplab installed in a virtual environment: the
    command runs again as ``sudo <this python> -m tcplab ...``, saying so."""
    calls: list[list[str]] = []

    def execv(path: str, argv: list[str]) -> None:
        calls.append([path, *argv])
        raise SystemExit(0)

    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    monkeypatch.setattr(os, "execv", execv)
    monkeypatch.setattr("shutil.which", lambda name: f"/usr/bin/{name}")
    toml = tmp_path / "s.toml"
    toml.write_text(LINK)
    argv = ["emu", str(toml), "--server", "sleep 1", "--", "sh", "-c", "echo $TCPLAB_SERVER"]
    with pytest.raises(SystemExit):
        cli.main(argv)
    assert calls == [["/usr/bin/sudo", "/usr/bin/sudo", sys.executable, "-m", "tcplab", *argv]]
    err = capsys.readouterr().err.strip()
    assert err.startswith("tcplab: tcplab emu needs root (network namespaces and TUN devices); ")
    assert "running it again as root: sudo " in err


def test_without_root_or_sudo_one_line_and_status_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    monkeypatch.setattr("shutil.which", lambda name: None)
    toml = tmp_path / "s.toml"
    toml.write_text(LINK)
    assert cli.main(["emu", str(toml), "--", "true"]) == 1
    err = capsys.readouterr().err.strip()
    assert err == (
        "tcplab: error: tcplab emu needs root (network namespaces and TUN devices); run it as root"
    )


@needs_emu
def test_a_device_that_vanishes_ends_the_emulation(tmp_path: Path, clean: object) -> None:
    """A namespace deleted under a running emulation (nothing runs in it, so its device goes
    with it): the emulator used to poll the dead device at full speed until the client ended;
    now the run ends at once with one line, and the rest is removed."""
    toml = tmp_path / "s.toml"
    toml.write_text(LINK)
    proc = subprocess.Popen(
        [sys.executable, "-m", "tcplab", "emu", str(toml), "--quiet", "--", "sleep", "60"],
        stderr=subprocess.PIPE, text=True, start_new_session=True,
        env={**os.environ, "TCPLAB_EMU_TAG": TAG},
    )  # fmt: skip
    try:
        assert _wait(lambda: _pids_in(CLIENT_NS, "sleep"), 30), "the emulation did not start"
        subprocess.run(["ip", "netns", "del", SERVER_NS], check=True)
        _, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 1, err
    assert "reading the server side's TUN device" in err


@needs_emu
def test_an_emulation_into_a_used_directory_leaves_nothing_of_the_earlier_one(
    tmp_path: Path, clean: object
) -> None:
    """Two emulations into one ``--out`` left the first one's capture beside the second's
    summary (found running the docs' commands in order)."""
    toml = tmp_path / "s.toml"
    toml.write_text(LINK)
    out = tmp_path / "out"
    out.mkdir()
    old = out / "radio-both.pcap"
    old.write_bytes(b"an earlier emulation's capture")
    (out / "links.parquet").write_bytes(b"earlier")
    (out / "summary.json").write_text(json.dumps({"pcaps": [str(old)]}))
    (out / "mine.txt").write_text("not tcplab's")
    r = subprocess.run(
        [sys.executable, "-m", "tcplab", "emu", str(toml), "--out", str(out), "--pcap", "0",
         "--quiet", "--", "true"],
        capture_output=True, text=True, timeout=60, env={**os.environ, "TCPLAB_EMU_TAG": TAG},
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    names = sorted(p.name for p in out.iterdir())
    assert names == [
        "connections.parquet", "link0-both.pcap", "links.parquet", "mine.txt",
        "retransmissions.parquet", "summary.json",
    ] or names == [
        "link0-both.pcap", "links.parquet", "mine.txt", "retransmissions.parquet", "summary.json",
    ], names  # fmt: skip
    assert json.loads((out / "summary.json").read_text())["pcaps"] == [str(out / "link0-both.pcap")]
    assert (out / "links.parquet").read_bytes() != b"earlier"
