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
import re
import secrets
import shutil
import signal
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType, TracebackType
from typing import Any

from tcplab.errors import ScenarioError
from tcplab.real.reaper import remove_namespaces

__all__ = [
    "CLIENT_ADDR",
    "DEFAULT_PORT",
    "SERVER_ADDR",
    "EmuError",
    "Emulation",
    "Terminated",
    "available",
    "check_path",
    "endpoint_failure",
    "endpoint_options",
    "reclaim",
    "run_command",
]

SERVER_ADDR = "10.99.0.1"
CLIENT_ADDR = "10.99.0.2"

#: Path kinds the real-time driver runs; the others are refused (``check_path``).
REALTIME_KINDS = ("link", "satellite", "rlc", "dropper", "pep", "trace", "leo")

#: The devices' MTU range (the emulator's packet slots; checked before anything is made).
MTU_MIN = 576
MTU_MAX = 65535

#: One lock file per emulation, held (``flock``) by the process that owns it while its
#: namespaces exist: a namespace whose lock is free was left by an emulation that was killed
#: (SIGKILL) and is reclaimed by the next one (:func:`reclaim`).
LOCK_DIR = Path("/run/tcplab-emu")

#: The names an emulation gives its namespaces: ``tle<tag>-srv``, ``tle<tag>-cli``.
_NS_NAME = re.compile(r"tle([0-9a-z]{1,6})-(srv|cli)")

#: How long a tcplab server keeps the emulation running after the client command ends, so the
#: client's final ACK and FIN cross the emulated path and the summary counts every byte the
#: client received as acknowledged (a few path delays; a lost FIN is not waited for).
ENDPOINT_DRAIN_S = 0.5

#: Sysctls recorded per namespace in the summary besides every ``net.ipv4.tcp_*``.
_SYSCTLS_EXTRA = ("net.core.default_qdisc", "net.ipv4.ip_no_pmtu_disc")

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
    """Refuse path components that cannot run in real time yet, naming the field (call it on
    a validated scenario: an unknown kind is the validator's error)."""
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


def reclaim() -> list[str]:
    """Remove what emulations that were killed (SIGKILL, their reaper too) left behind: the
    namespaces of every lock file in :data:`LOCK_DIR` that no live process holds, with the
    processes still running in them. Returns the namespaces removed. Namespaces without a lock
    file (another program's, or an older tcplab's) are left alone."""
    removed: list[str] = []
    try:
        locks = sorted(LOCK_DIR.glob("*.lock"))
    except OSError:
        return removed
    for lock in locks:
        try:
            fd = os.open(lock, os.O_RDWR | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                continue  # its emulation is alive
            if not os.pread(fd, 64, 0):
                continue  # just created: its owner has not written its pid yet
            tag = lock.name.removesuffix(".lock")
            names = [f"tle{tag}-srv", f"tle{tag}-cli"]
            existing = set(_netns_list())
            remove_namespaces(names)
            removed.extend(n for n in names if n in existing)
            lock.unlink(missing_ok=True)
        finally:
            os.close(fd)
    return removed


def _netns_list() -> list[str]:
    r = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=False)
    return [line.split()[0] for line in r.stdout.splitlines() if line.strip()]


def _namespace_sysctls(ns: str) -> dict[str, str]:
    """Every ``net.ipv4.tcp_*`` sysctl of namespace ``ns`` (the congestion control, the buffer
    sizes, F-RTO, SACK, timestamps, ...: what shapes the real stack's run)."""
    r = subprocess.run(
        ["ip", "netns", "exec", ns, "sysctl", "-a", "--pattern", r"^net\.ipv4\.tcp_"],
        capture_output=True,
        text=True,
        check=False,
    )
    values: dict[str, str] = {}
    for line in r.stdout.splitlines():
        key, sep, value = line.partition(" = ")
        if sep:
            values[key.strip()] = value.strip()
    return values


class _DeferSignals:
    """While cleaning up, SIGINT, SIGTERM, SIGHUP and SIGQUIT are noted instead of acted on
    (an exception raised halfway through the clean-up would leave namespaces behind), then
    raised again once it is done. Only in the main thread (signal handlers live there)."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)

    def __init__(self) -> None:
        self.pending: list[int] = []
        self.old: dict[int, Any] = {}

    def __enter__(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return
        for sig in self.SIGNALS:
            self.old[sig] = signal.signal(sig, lambda signum, frame: self.pending.append(signum))

    def __exit__(self, *exc: object) -> None:
        for sig, handler in self.old.items():
            signal.signal(sig, handler)
        for sig in dict.fromkeys(self.pending):
            signal.raise_signal(sig)


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
    #: tcplab's own TCP at one end of the path (``--endpoint``; :func:`endpoint_options`).
    endpoint: dict[str, Any] | None = None
    #: Names carry it: ``tle<suffix>-srv``, ``tle<suffix>-cli``, devices ``tle<suffix>s|c``.
    suffix: str = field(default_factory=lambda: _suffix())
    #: Where to say what :func:`reclaim` removed (a file such as stderr), or None.
    log: Any = None
    namespaces: list[str] = field(default_factory=list)
    fds: list[int] = field(default_factory=list)
    procs: list[tuple[subprocess.Popen[bytes], bool]] = field(default_factory=list)
    summary: dict[str, Any] | None = None
    error: BaseException | None = None
    #: Each namespace's ``net.ipv4.tcp_*`` sysctls once set up (``server``, ``client``).
    sysctls_in_effect: dict[str, dict[str, str]] = field(default_factory=dict)
    _thread: threading.Thread | None = None
    _stop_w: int | None = None
    _stop_r: int | None = None
    _lock_fd: int | None = None
    _reaper: subprocess.Popen[bytes] | None = None

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

    @property
    def lock_path(self) -> Path:
        return LOCK_DIR / f"{self.suffix}.lock"

    def _guard(self) -> None:
        """Reclaim what killed emulations left, take this emulation's lock and start its reaper
        (:mod:`tcplab.real.reaper`), which removes the namespaces if this process dies."""
        removed = reclaim()
        if removed and self.log:
            print(
                f"tcplab emu: removed {', '.join(removed)} and the processes in them, left by "
                "an emulation that was killed",
                file=self.log,
            )
        try:
            LOCK_DIR.mkdir(mode=0o700, exist_ok=True)
            fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        except OSError as err:
            raise EmuError(
                f"{self.lock_path}: cannot create the lock file: {err.strerror}"
            ) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise EmuError(
                f"another tcplab emu runs with the tag {self.suffix!r} (TCPLAB_EMU_TAG)"
            ) from None
        self._lock_fd = fd
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        names = [self.server_ns, self.client_ns]
        reaper = Path(__file__).with_name("reaper.py")
        self._reaper = subprocess.Popen(
            [sys.executable, "-I", "-S", str(reaper), str(self.lock_path), *names],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            start_new_session=True,
        )

    def _setup(self) -> None:
        self._guard()
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
        self.sysctls_in_effect = {
            "server": _namespace_sysctls(self.server_ns),
            "client": _namespace_sysctls(self.client_ns),
        }
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
            "endpoint": self.endpoint,
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
        their fds) and the namespaces. Safe to call twice and after a partial setup. A signal
        that arrives meanwhile is acted on once everything is removed."""
        with _DeferSignals():
            self._close()

    def _close(self) -> None:
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
        # Anything left in a namespace (a child's grandchildren that left its process group)
        # is killed before it is deleted.
        remove_namespaces(reversed(self.namespaces))
        self.namespaces.clear()
        if self._lock_fd is not None:
            self.lock_path.unlink(missing_ok=True)
            os.close(self._lock_fd)
            self._lock_fd = None
        if self._reaper is not None:
            reaper, self._reaper = self._reaper, None
            with contextlib.suppress(OSError):
                assert reaper.stdin is not None
                reaper.stdin.write(b"done")
                reaper.stdin.close()
            try:
                reaper.wait(5)
            except subprocess.TimeoutExpired:
                reaper.kill()
                reaper.wait()


class Terminated(Exception):
    """SIGTERM, SIGHUP or SIGQUIT arrived (turned into an exception so that the clean-up runs;
    ``signum`` says which)."""

    def __init__(self, signum: int = signal.SIGTERM) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = int(signum)


def _on_signal(signum: int, frame: FrameType | None) -> None:
    raise Terminated(signum)


#: Signals that end an emulation as SIGTERM does: a closed terminal (SIGHUP), Ctrl-\ (SIGQUIT).
_ENDING_SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)

#: /proc/PID/net tables and the state of a socket that waits for peers: TCP LISTEN (0A), an
#: unconnected UDP socket (07), IPv4 and IPv6 (a dual-stack server listens on tcp6 only).
_LISTEN_TABLES = (("tcp", "0A"), ("tcp6", "0A"), ("udp", "07"), ("udp6", "07"))


def _listening(pid: int) -> bool:
    """A TCP or UDP socket (IPv4 or IPv6) is bound in the network namespace of process ``pid``
    (once it has entered one: ``ip netns exec`` starts in ours)."""
    try:
        if os.readlink(f"/proc/{pid}/ns/net") == os.readlink("/proc/self/ns/net"):
            return False
    except OSError:
        return False
    for table, state in _LISTEN_TABLES:
        try:
            lines = Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]
        except OSError:
            continue  # no such table (IPv6 not built in)
        if any(line.split()[3] == state for line in lines):
            return True
    return False


def wait_listening(proc: subprocess.Popen[bytes], limit_s: float) -> str | None:
    """Wait until the server command has a socket listening (at most ``limit_s``, or until
    it exits), so that the client does not race its start-up. Returns None once one listens,
    else why the client starts without one."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return (
                f"the server command exited (status {proc.returncode}) before any socket listened"
            )
        if _listening(proc.pid):
            return None
        time.sleep(0.02)
    return f"no socket is listening in the server namespace after {limit_s:g} s"


#: The port the tcplab server listens on unless ``--port`` says otherwise.
DEFAULT_PORT = 8000


def endpoint_options(
    role: str,
    *,
    port: int = DEFAULT_PORT,
    serve: str | None = None,
    get: str | None = None,
    save: str | None = None,
) -> dict[str, Any]:
    """The emulator's endpoint settings for ``--endpoint server=tcplab`` (listening on
    ``port``, serving files under ``serve`` or the bulk source) or ``client=tcplab``
    (fetching the URL ``get`` from the server namespace into ``save``). Raises ValueError with
    a one-line message naming the option."""
    if role == "server":
        if get or save:
            raise ValueError("--get/--save: only with --endpoint client=tcplab")
        if not 1 <= port <= 65535:
            raise ValueError(f"--port: must be between 1 and 65535 (got {port})")
        if serve is not None and not Path(serve).is_dir():
            raise ValueError(f"--serve: {serve} is not a directory")
        return {
            "role": "server",
            "addr": SERVER_ADDR,
            "port": port,
            "serve": str(Path(serve).resolve()) if serve else None,
        }
    if role != "client":
        raise ValueError(f"--endpoint: must be server=tcplab or client=tcplab (got {role!r})")
    if serve is not None:
        raise ValueError("--serve: only with --endpoint server=tcplab")
    if not get or not save:
        raise ValueError("--endpoint client=tcplab: needs --get URL and --save FILE")
    from urllib.parse import urlsplit

    url = urlsplit(get)
    if url.scheme != "http" or not url.hostname:
        raise ValueError(f"--get: must be an http:// URL (got {get!r})")
    if url.hostname != SERVER_ADDR:
        raise ValueError(
            f"--get: the server namespace is at {SERVER_ADDR} (got {url.hostname}); "
            "nothing else is reachable"
        )
    try:
        url_port = url.port or 80
    except ValueError:
        raise ValueError(f"--get: bad port in {get!r}") from None
    target = url.path or "/"
    if url.query:
        target += "?" + url.query
    return {
        "role": "client",
        "addr": CLIENT_ADDR,
        "port": url_port,
        "peer": SERVER_ADDR,
        "target": target,
        "host": url.netloc,
        "save": str(Path(save).resolve()),
    }


def run_command(
    config: dict[str, Any],
    argv: Sequence[str] | None,
    *,
    server: str | None = None,
    shell: bool = False,
    mtu: int = 1500,
    sysctls: Mapping[str, str] | None = None,
    server_wait_s: float = 10.0,
    panic_after_packets: int | None = None,
    realtime: bool = True,
    pin_cpu: bool = False,
    spin_share: float = 0.5,
    log: Any = None,
    endpoint: dict[str, Any] | None = None,
    time_limit_s: float = 600.0,
) -> tuple[int, dict[str, Any]]:
    """Run ``argv`` (or a shell) in the client namespace, ``server`` (a shell command) in the
    server namespace, over the emulated path; return (exit status, emulator summary). The
    exit status is the client's (128 + signal number if a signal ended it). ``realtime``
    False: the emulator thread is an ordinary one (no SCHED_FIFO, pinning, idle-state request
    or locked memory; docs/emu.md); ``pin_cpu``: pin the SCHED_FIFO thread to its CPU;
    ``spin_share``: the most of one CPU it spends waiting on the clock (docs/emu.md);
    ``sysctls``: set in both namespaces. SIGTERM, SIGHUP and SIGQUIT raise
    :class:`Terminated` after the clean-up; the summary records each namespace's
    ``net.ipv4.tcp_*`` sysctls (``namespaces``).
    ``endpoint`` (:func:`endpoint_options`): tcplab's TCP is the server (``argv`` is the
    client, as always) or the client (no ``argv``; the emulation ends when its transfer is
    over, at most ``time_limit_s``; the status is 0 if the body arrived whole, else 1)."""
    if endpoint is not None and endpoint["role"] == "client":
        return _run_client_endpoint(
            config,
            endpoint,
            server=server,
            mtu=mtu,
            server_wait_s=server_wait_s,
            realtime=realtime,
            pin_cpu=pin_cpu,
            spin_share=spin_share,
            time_limit_s=time_limit_s,
            sysctls=sysctls,
        )
    old_handlers = {sig: signal.signal(sig, _on_signal) for sig in _ENDING_SIGNALS}
    t0 = time.monotonic()
    try:
        with Emulation(
            config,
            mtu=mtu,
            sysctls=dict(sysctls or {}),
            panic_after_packets=panic_after_packets,
            rt_priority=10 if realtime else 0,
            pin_cpu=pin_cpu,
            spin_share=spin_share,
            log=log,
            endpoint=endpoint,
        ) as emu:
            if server:
                proc = emu.exec("server", ["sh", "-c", server])
                why = wait_listening(proc, server_wait_s)
                if why and log:
                    print(f"tcplab emu: warning: {why}; starting the client anyway", file=log)
            if shell:
                sh = os.environ.get("SHELL", "/bin/sh")
                if log:
                    serving = (
                        f"the server command runs at {SERVER_ADDR}"
                        if server
                        else "no server runs (start one with --server CMD)"
                    )
                    print(
                        f"tcplab emu: shell in the client namespace; TCPLAB_SERVER={SERVER_ADDR} "
                        f"TCPLAB_CLIENT={CLIENT_ADDR}; {serving}; exit the shell to end the "
                        "emulation",
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
            if endpoint is not None and emu.emulator_alive:
                # tcplab's server learns that its last bytes arrived from the client's last ACK
                # and FIN, which leave the client's kernel as the command exits and still have
                # the path to cross: the emulation runs on for ENDPOINT_DRAIN_S first.
                time.sleep(ENDPOINT_DRAIN_S)
            summary = emu.stop()
            summary["namespaces"] = {
                side: {"name": name, "sysctls": emu.sysctls_in_effect.get(side, {})}
                for side, name in (("server", emu.server_ns), ("client", emu.client_ns))
            }
    finally:
        for sig, handler in old_handlers.items():
            signal.signal(sig, handler)
    if status < 0:
        status = 128 - status
    summary["wall_s"] = time.monotonic() - t0
    summary["exit_status"] = status
    return status, summary


def _run_client_endpoint(
    config: dict[str, Any],
    endpoint: dict[str, Any],
    *,
    server: str | None,
    mtu: int,
    server_wait_s: float,
    realtime: bool,
    pin_cpu: bool,
    spin_share: float,
    time_limit_s: float,
    sysctls: Mapping[str, str] | None = None,
) -> tuple[int, dict[str, Any]]:
    """``run_command`` with tcplab's TCP as the client: the emulator starts once the server
    command listens and stops itself when the transfer is over."""
    old_handlers = {sig: signal.signal(sig, _on_signal) for sig in _ENDING_SIGNALS}
    t0 = time.monotonic()
    timed_out = False
    try:
        with Emulation(
            None,
            mtu=mtu,
            sysctls=dict(sysctls or {}),
            rt_priority=10 if realtime else 0,
            pin_cpu=pin_cpu,
            spin_share=spin_share,
            endpoint=endpoint,
        ) as emu:
            if server:
                proc = emu.exec("server", ["sh", "-c", server])
                wait_listening(proc, server_wait_s)
            emu.start(config)
            deadline = time.monotonic() + time_limit_s
            while emu.emulator_alive and time.monotonic() < deadline:
                time.sleep(0.02)
            timed_out = emu.emulator_alive
            summary = emu.stop()
            summary["namespaces"] = {
                side: {"name": name, "sysctls": emu.sysctls_in_effect.get(side, {})}
                for side, name in (("server", emu.server_ns), ("client", emu.client_ns))
            }
    finally:
        for sig, handler in old_handlers.items():
            signal.signal(sig, handler)
    summary["wall_s"] = time.monotonic() - t0
    conns = (summary.get("endpoint") or {}).get("connections") or []
    ok = bool(conns) and all(c.get("complete") for c in conns) and not timed_out
    summary["endpoint"]["timed_out"] = timed_out
    status = 0 if ok else 1
    summary["exit_status"] = status
    return status, summary


def endpoint_failure(summary: dict[str, Any]) -> str | None:
    """Why a tcplab client's transfer failed (one line), or None."""
    ep = summary.get("endpoint") or {}
    if ep.get("role") != "client":
        return None
    if ep.get("timed_out"):
        return "the transfer did not end within the time limit"
    conns = ep.get("connections") or []
    if not conns:
        return "no connection was opened"
    c = conns[0]
    if c.get("complete"):
        return None
    return c.get("error") or f"the connection ended in state {c.get('state')}"


#: Column types of the endpoint's event log and series (as ``tcplab run`` writes them).
_EVENT_DTYPES = {
    "t_ns": "<i8",
    "flow": "<u4",
    "conn": "<u4",
    "kind": "<u1",
    "seq": "<u8",
    "len": "<u4",
    "reason": "<u1",
    "spurious": "<i1",
    "detected": "<i1",
    "value": "<f8",
}
_SERIES_DTYPES = {
    "flow": "<u4",
    "conn": "<u4",
    "t_ns": "<i8",
    "cwnd": "<u8",
    "ssthresh": "<u8",
    "srtt_ns": "<i8",
    "rttvar_ns": "<i8",
    "rto_ns": "<i8",
    "inflight": "<u8",
    "delivered": "<u8",
}


def _write_endpoint_tables(ep: dict[str, Any], out: Path) -> None:
    """The tcplab endpoint's ``flows``, ``events`` and ``timeseries`` tables, in the same
    layout as a simulated run's (docs/outputs.md)."""
    import numpy as np
    import pyarrow as pa

    from tcplab.results import events_table, write_parquet

    write_parquet(pa.Table.from_pylist(ep["flows"]), out / "flows.parquet")
    ev = {k: np.asarray(ep["events"][k], dtype=np.dtype(t)) for k, t in _EVENT_DTYPES.items()}
    write_parquet(
        events_table(ev, list(ep["event_kinds"]), list(ep["reasons"])), out / "events.parquet"
    )
    ts = {k: np.asarray(ep["timeseries"][k], dtype=np.dtype(t)) for k, t in _SERIES_DTYPES.items()}
    write_parquet(pa.table(ts), out / "timeseries.parquet")


#: The tables ``tcplab emu --out`` writes (the last three only with a tcplab endpoint).
EMU_TABLES = ("links", "connections", "retransmissions", "flows", "events", "timeseries")


def prepare_out(out: Path) -> None:
    """Create ``out`` and remove an earlier emulation's outputs from it before this one starts:
    ``summary.json`` first (it marks a complete output), then the tables and the captures that
    ``summary.json`` lists, so the directory never holds two emulations' files; files that are
    not tcplab's stay."""
    out.mkdir(parents=True, exist_ok=True)
    summary = out / "summary.json"
    try:
        listed = json.loads(summary.read_text("utf-8")).get("pcaps") or []
    except (OSError, ValueError, AttributeError):
        listed = []
    summary.unlink(missing_ok=True)
    for name in EMU_TABLES:
        (out / f"{name}.parquet").unlink(missing_ok=True)
    here = out.resolve()
    for name in listed:
        # recorded as given (relative to the working directory, or absolute), or relative to
        # out: only a file in out itself is removed
        for path in {Path(str(name)), out / str(name)}:
            if path.resolve().parent == here and path.is_file():
                path.unlink()


def write_outputs(summary: dict[str, Any], out: Path) -> None:
    """The Parquet tables ``links``, ``connections``, ``retransmissions`` (with a tcplab
    endpoint also its ``flows``, ``events`` and ``timeseries``), then ``summary.json``."""
    import pyarrow as pa

    from tcplab.results import write_parquet

    out.mkdir(parents=True, exist_ok=True)
    rtx = summary.get("retransmissions", {})
    doc = {k: v for k, v in summary.items() if k != "retransmissions"}
    ep = summary.get("endpoint")
    if ep:
        _write_endpoint_tables(ep, out)
        columns = ("events", "timeseries", "event_kinds", "reasons")
        doc["endpoint"] = {k: v for k, v in ep.items() if k not in columns}
    doc["retransmissions"] = {
        "segments": len(rtx.get("spurious", [])),
        "spurious": sum(1 for s in rtx.get("spurious", []) if s),
    }
    links = summary["links"]
    keys = sorted({k for row in links for k in row})
    write_parquet(pa.table({k: [row.get(k) for row in links] for k in keys}), out / "links.parquet")
    conns = summary["connections"]
    if conns:
        write_parquet(pa.Table.from_pylist(conns), out / "connections.parquet")
    write_parquet(pa.table(rtx), out / "retransmissions.parquet")
    # last, and under a temporary name: summary.json marks a complete output
    tmp = out / ".summary.json.tmp"
    tmp.write_text(json.dumps(doc, indent=2) + "\n")
    tmp.replace(out / "summary.json")
