"""``tcplab emu``: real programs and the real Linux TCP stack over tcplab's path models.

Two network namespaces (server side, client side), one TUN device in each, and the
simulator's own path components (``tcplab._core.emu_run``, Rust) moving the packets between
them in real time. The path's first hop faces the server: its forward (``down``) direction
carries server → client traffic. Everything created here is removed on every exit path
(:meth:`Emulation.close`).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import secrets
import shutil
import signal
import struct
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType, TracebackType
from typing import Any

from tcplab.errors import ScenarioError

__all__ = [
    "CLIENT_ADDR",
    "SERVER_ADDR",
    "EmuError",
    "Emulation",
    "Terminated",
    "available",
    "check_path",
    "run_command",
]

SERVER_ADDR = "10.99.0.1"
CLIENT_ADDR = "10.99.0.2"

#: Path kinds the real-time driver runs; the others are refused (``check_path``).
REALTIME_KINDS = ("link", "satellite", "rlc", "dropper", "pep")

_TUNSETIFF = 0x400454CA
_IFF_TUN = 0x0001
_IFF_NO_PI = 0x1000


class EmuError(RuntimeError):
    """The emulation could not be set up or its emulator failed (exit status 1)."""


def available() -> str | None:
    """None if the emulator can run here, else the reason it cannot (one line)."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return "tcplab emu needs root (network namespaces and TUN devices)"
    if shutil.which("ip") is None:
        return "tcplab emu needs iproute2 (the ip command)"
    if not os.path.exists("/dev/net/tun"):
        return "tcplab emu needs /dev/net/tun (the tun kernel module)"
    try:
        from tcplab import _core
    except ImportError as err:
        return f"the compiled core is missing: {err}"
    if not hasattr(_core, "emu_run"):
        return "the compiled core has no emulator (Linux only)"
    return None


def check_path(data: Mapping[str, Any], source: str) -> None:
    """Refuse path components that cannot run in real time yet, naming the field."""
    path = data.get("path")
    if not isinstance(path, list):
        return
    for i, hop in enumerate(path):
        kind = hop.get("kind", "link") if isinstance(hop, Mapping) else "link"
        if kind not in REALTIME_KINDS:
            raise ScenarioError(
                f'path[{i}].kind: "{kind}" cannot run in real time yet (tcplab emu runs '
                f"{', '.join(REALTIME_KINDS)})",
                source=source,
            )


def _suffix() -> str:
    """``TCPLAB_EMU_TAG`` (1-6 lower-case letters or digits) if set, else 6 random hex
    digits: the tag in the names of the namespaces and devices of one emulation."""
    tag = os.environ.get("TCPLAB_EMU_TAG")
    if tag is None:
        return secrets.token_hex(3)
    # Not str.islower(): it is False for a tag of digits only ("810025"), which is valid.
    if not (1 <= len(tag) <= 6 and tag.isascii() and tag.isalnum() and tag == tag.lower()):
        raise EmuError(f"TCPLAB_EMU_TAG: must be 1-6 lower-case letters or digits (got {tag!r})")
    return tag


def _open_tun(name: str) -> int:
    fd = os.open("/dev/net/tun", os.O_RDWR | os.O_CLOEXEC)
    try:
        fcntl.ioctl(fd, _TUNSETIFF, struct.pack("16sH22x", name.encode(), _IFF_TUN | _IFF_NO_PI))
    except OSError:
        os.close(fd)
        raise
    return fd


def _ip(*args: str) -> None:
    r = subprocess.run(["ip", *args], capture_output=True, text=True, check=False)
    if r.returncode != 0:
        raise EmuError(f"ip {' '.join(args)}: {r.stderr.strip()}")


def _end(proc: subprocess.Popen[bytes], own_group: bool, grace_s: float = 2.0) -> None:
    """SIGTERM ``proc`` (its whole process group if it leads one), then SIGKILL what is left
    after ``grace_s``."""

    def send(sig: int) -> None:
        try:
            if own_group:
                os.killpg(proc.pid, sig)
            elif proc.poll() is None:
                proc.send_signal(sig)
        except ProcessLookupError:
            pass

    if proc.poll() is None:
        send(signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(grace_s)
    send(signal.SIGKILL)  # a group may outlive its leader
    if proc.poll() is None:
        proc.wait()


@dataclass
class Emulation:
    """Two namespaces joined by the emulator running ``config`` (a normalized simulator
    configuration). Use as a context manager; :meth:`exec` runs a command in one side."""

    #: The path to run (a normalized simulator configuration); None: namespaces only, the
    #: emulator is started later with :meth:`start` (and may be restarted after :meth:`stop`).
    config: dict[str, Any] | None
    mtu: int = 1500
    sysctls: dict[str, str] = field(default_factory=dict)
    #: Test hook: the emulator panics after this many packets.
    panic_after_packets: int | None = None
    #: SCHED_FIFO priority of the emulator thread; 0: an ordinary thread (``--no-realtime``).
    rt_priority: int = 10
    #: Pin the SCHED_FIFO thread to its CPU (``--pin-cpu``; docs/emu.md, Timing).
    pin_cpu: bool = False
    #: The most of one CPU the thread spends waiting on the clock per 10 ms (``--spin-share``).
    spin_share: float = 0.5
    #: Names carry it: ``tle<suffix>-srv``, ``tle<suffix>-cli``, devices ``tle<suffix>s|c``.
    suffix: str = field(default_factory=lambda: _suffix())
    namespaces: list[str] = field(default_factory=list)
    fds: list[int] = field(default_factory=list)
    procs: list[tuple[subprocess.Popen[bytes], bool]] = field(default_factory=list)
    summary: dict[str, Any] | None = None
    error: BaseException | None = None
    _thread: threading.Thread | None = None
    _stop_w: int | None = None
    _stop_r: int | None = None

    @property
    def server_ns(self) -> str:
        return f"tle{self.suffix}-srv"

    @property
    def client_ns(self) -> str:
        return f"tle{self.suffix}-cli"

    @property
    def env(self) -> dict[str, str]:
        return {"TCPLAB_SERVER": SERVER_ADDR, "TCPLAB_CLIENT": CLIENT_ADDR}

    def __enter__(self) -> Emulation:
        try:
            self._setup()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _setup(self) -> None:
        ends = (
            (self.server_ns, "s", SERVER_ADDR, CLIENT_ADDR),
            (self.client_ns, "c", CLIENT_ADDR, SERVER_ADDR),
        )
        for ns, tag, local, peer in ends:
            _ip("netns", "add", ns)
            self.namespaces.append(ns)
            dev = f"tle{self.suffix}{tag}"
            self.fds.append(_open_tun(dev))
            _ip("link", "set", "dev", dev, "netns", ns)
            _ip("-n", ns, "link", "set", "lo", "up")
            _ip("-n", ns, "link", "set", "dev", dev, "mtu", str(self.mtu), "up")
            _ip("-n", ns, "addr", "add", local, "peer", f"{peer}/32", "dev", dev)
            # No default route: traffic to any other address (a DNS lookup) fails at once
            # instead of vanishing into the path.
            settings = {
                "net.ipv6.conf.all.disable_ipv6": "1",
                "net.ipv6.conf.default.disable_ipv6": "1",
                "net.ipv4.tcp_no_metrics_save": "1",
                **self.sysctls,
            }
            for key, value in settings.items():
                r = subprocess.run(
                    ["ip", "netns", "exec", ns, "sysctl", "-qw", f"{key}={value}"],
                    capture_output=True,
                    text=True,
                    check=False,
                )
                if r.returncode != 0:
                    raise EmuError(f"sysctl {key}={value} in {ns}: {r.stderr.strip()}")
        if self.config is not None:
            self.start(self.config)

    def start(self, config: dict[str, Any]) -> None:
        """Start the emulator on ``config`` between the two devices (a thread of its own)."""
        if self.emulator_alive:
            raise EmuError("the emulator is already running")
        self.config = config
        self.summary = None
        self.error = None
        self._stop_r, self._stop_w = os.pipe2(os.O_CLOEXEC)
        options = {
            "mtu": self.mtu,
            "panic_after_packets": self.panic_after_packets,
            "rt_priority": self.rt_priority,
            "pin_cpu": self.pin_cpu,
            "spin_share": self.spin_share,
        }
        from tcplab import _core

        stop_r = self._stop_r

        def emulate() -> None:
            try:
                text = _core.emu_run(
                    json.dumps(config), json.dumps(options), self.fds[0], self.fds[1], stop_r
                )
                self.summary = json.loads(text)
            except BaseException as err:  # a Rust panic arrives as PanicException
                self.error = err

        self._thread = threading.Thread(target=emulate, name="tcplab-emu", daemon=True)
        self._thread.start()

    @property
    def emulator_alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def exec(
        self,
        side: str,
        argv: Sequence[str],
        *,
        stdin: int | None = None,
        stdout: Any = None,
        stderr: Any = None,
        new_session: bool = True,
    ) -> subprocess.Popen[bytes]:
        """Start ``argv`` in the ``server`` or ``client`` namespace with ``TCPLAB_SERVER`` and
        ``TCPLAB_CLIENT`` set; the process is ended by :meth:`close` if still running."""
        ns = self.server_ns if side == "server" else self.client_ns
        proc = subprocess.Popen(
            ["ip", "netns", "exec", ns, *argv],
            env={**os.environ, **self.env},
            stdin=stdin,
            stdout=stdout,
            stderr=stderr,
            start_new_session=new_session,
        )
        self.procs.append((proc, new_session))
        return proc

    def stop(self) -> dict[str, Any]:
        """Stop the emulator and return its summary (raises EmuError if it failed)."""
        if self._stop_w is not None and self._thread is not None:
            with contextlib.suppress(OSError):
                os.write(self._stop_w, b"x")
            self._thread.join(10)
            if self._thread.is_alive():
                raise EmuError("the emulator did not stop within 10 s")
            for fd in (self._stop_r, self._stop_w):
                with contextlib.suppress(OSError):
                    os.close(fd)
            self._stop_r = self._stop_w = None
        if self.error is not None:
            raise EmuError(f"the emulator failed: {self.error}")
        if self.summary is None:
            raise EmuError("the emulator did not run")
        return self.summary

    def close(self) -> None:
        """End every process started here, stop the emulator, delete the devices (closing
        their fds) and the namespaces. Safe to call twice and after a partial setup."""
        for proc, own_group in reversed(self.procs):
            _end(proc, own_group)
        self.procs.clear()
        if self._stop_w is not None and self._thread is not None and self._thread.is_alive():
            os.write(self._stop_w, b"x")
            self._thread.join(10)
        for fd in (*self.fds, self._stop_r, self._stop_w):
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self.fds.clear()
        self._stop_r = self._stop_w = None
        for ns in reversed(self.namespaces):
            # Kill anything left in the namespace (a child's grandchildren that left its
            # process group), then delete it.
            r = subprocess.run(
                ["ip", "netns", "pids", ns], capture_output=True, text=True, check=False
            )
            for pid in r.stdout.split():
                with contextlib.suppress(ProcessLookupError, ValueError):
                    os.kill(int(pid), signal.SIGKILL)
            subprocess.run(["ip", "netns", "del", ns], capture_output=True, check=False)
        self.namespaces.clear()


class Terminated(Exception):
    """SIGTERM arrived (turned into an exception so that cleanup runs)."""


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    raise Terminated()


def _listening(pid: int) -> bool:
    """A TCP or UDP socket is bound in the network namespace of process ``pid`` (once it has
    entered one: ``ip netns exec`` starts in ours)."""
    try:
        if os.readlink(f"/proc/{pid}/ns/net") == os.readlink("/proc/self/ns/net"):
            return False
    except OSError:
        return False
    for table, state in (("tcp", "0A"), ("udp", "07")):
        try:
            lines = Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]
        except OSError:
            return False
        if any(line.split()[3] == state for line in lines):
            return True
    return False


def wait_listening(proc: subprocess.Popen[bytes], limit_s: float) -> None:
    """Wait until the server command has a socket listening (at most ``limit_s``, or until
    it exits), so that the client does not race its start-up."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline and proc.poll() is None:
        if _listening(proc.pid):
            return
        time.sleep(0.02)


def run_command(
    config: dict[str, Any],
    argv: Sequence[str] | None,
    *,
    server: str | None = None,
    shell: bool = False,
    mtu: int = 1500,
    server_wait_s: float = 10.0,
    panic_after_packets: int | None = None,
    realtime: bool = True,
    pin_cpu: bool = False,
    spin_share: float = 0.5,
    log: Any = None,
) -> tuple[int, dict[str, Any]]:
    """Run ``argv`` (or a shell) in the client namespace, ``server`` (a shell command) in the
    server namespace, over the emulated path; return (exit status, emulator summary). The
    exit status is the client's (128 + signal number if a signal ended it). ``realtime``
    False: the emulator thread is an ordinary one (no SCHED_FIFO, pinning, idle-state request
    or locked memory; docs/emu.md); ``pin_cpu``: pin the SCHED_FIFO thread to its CPU;
    ``spin_share``: the most of one CPU it spends waiting on the clock (docs/emu.md)."""
    old_term = signal.signal(signal.SIGTERM, _on_sigterm)
    t0 = time.monotonic()
    try:
        with Emulation(
            config,
            mtu=mtu,
            panic_after_packets=panic_after_packets,
            rt_priority=10 if realtime else 0,
            pin_cpu=pin_cpu,
            spin_share=spin_share,
        ) as emu:
            if server:
                proc = emu.exec("server", ["sh", "-c", server])
                wait_listening(proc, server_wait_s)
            if shell:
                sh = os.environ.get("SHELL", "/bin/sh")
                if log:
                    print(
                        f"tcplab emu: shell in the client namespace; TCPLAB_SERVER={SERVER_ADDR} "
                        f"TCPLAB_CLIENT={CLIENT_ADDR}; exit the shell to end the emulation",
                        file=log,
                    )
                # The shell owns the terminal: Ctrl-C is for it, not for us.
                client = emu.exec("client", [sh], new_session=False)
                old_int = signal.signal(signal.SIGINT, signal.SIG_IGN)
            else:
                assert argv
                client = emu.exec("client", list(argv), new_session=False)
                old_int = signal.getsignal(signal.SIGINT)
            try:
                while client.poll() is None:
                    if not emu.emulator_alive:
                        break
                    time.sleep(0.02)
            finally:
                signal.signal(signal.SIGINT, old_int)
            if client.poll() is None:  # the emulator died first
                _end(client, own_group=False)
                emu.stop()  # raises EmuError with the emulator's failure
            status = client.returncode
            summary = emu.stop()
    finally:
        signal.signal(signal.SIGTERM, old_term)
    if status < 0:
        status = 128 - status
    summary["wall_s"] = time.monotonic() - t0
    summary["exit_status"] = status
    return status, summary


def write_outputs(summary: dict[str, Any], out: Path) -> None:
    """``summary.json`` and the Parquet tables ``links``, ``connections``, ``retransmissions``."""
    import pyarrow as pa

    from tcplab.results import write_parquet

    out.mkdir(parents=True, exist_ok=True)
    rtx = summary.get("retransmissions", {})
    doc = {k: v for k, v in summary.items() if k != "retransmissions"}
    doc["retransmissions"] = {
        "segments": len(rtx.get("spurious", [])),
        "spurious": sum(1 for s in rtx.get("spurious", []) if s),
    }
    (out / "summary.json").write_text(json.dumps(doc, indent=2) + "\n")
    links = summary["links"]
    keys = sorted({k for row in links for k in row})
    write_parquet(pa.table({k: [row.get(k) for row in links] for k in keys}), out / "links.parquet")
    conns = summary["connections"]
    if conns:
        write_parquet(pa.Table.from_pylist(conns), out / "connections.parquet")
    write_parquet(pa.table(rtx), out / "retransmissions.parquet")
