"""Two network namespaces joined by TUN devices and the user-space link of ``forwarder.py``.

``Testbed`` (a context manager) creates namespaces ``<prefix>-snd`` and ``<prefix>-rcv``, one
TUN device in each (created in the root namespace with ``TUNSETIFF`` on ``/dev/net/tun`` with
``IFF_TUN | IFF_NO_PI``, then moved; the fd stays attached), a point-to-point address pair
(10.77.0.1 sender, 10.77.0.2 receiver: each end's peer route points into its TUN), MTU 1500,
and sets ``tcp_no_metrics_save = 1`` in both namespaces. :meth:`Testbed.transfer` runs one bulk
transfer through the forwarder. Leaving the context kills leftover processes, closes the TUN fds
(which deletes the devices) and deletes the namespaces, also after an error.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from forwarder import Direction, ForwardStats, LinkDir, forward

__all__ = ["RECEIVER_ADDR", "SENDER_ADDR", "Testbed", "Transfer", "available"]

TUNSETIFF = 0x400454CA
IFF_TUN = 0x0001
IFF_NO_PI = 0x1000
SENDER_ADDR = "10.77.0.1"
RECEIVER_ADDR = "10.77.0.2"
PORT = 5001
ENDPOINTS = Path(__file__).resolve().parent / "endpoints.py"

#: sysctls recorded per namespace (everything under net.ipv4.tcp_ is recorded; these are the
#: ones the report lists).
KEY_SYSCTLS = [
    "tcp_sack",
    "tcp_dsack",
    "tcp_timestamps",
    "tcp_window_scaling",
    "tcp_rmem",
    "tcp_wmem",
    "tcp_moderate_rcvbuf",
    "tcp_no_metrics_save",
    "tcp_recovery",
    "tcp_early_retrans",
    "tcp_frto",
    "tcp_congestion_control",
    "tcp_slow_start_after_idle",
    "tcp_ecn",
    "tcp_reordering",
    "tcp_autocorking",
    "tcp_limit_output_bytes",
    "tcp_rto_min_us",
    "tcp_pacing_ss_ratio",
    "tcp_pacing_ca_ratio",
    "tcp_min_tso_segs",
    "tcp_mtu_probing",
]


def available() -> str | None:
    """None if the testbed can run here, else the reason it cannot."""
    if os.geteuid() != 0:
        return "needs root (network namespaces and TUN devices)"
    if shutil.which("ip") is None:
        return "needs iproute2 (ip)"
    if not os.path.exists("/dev/net/tun"):
        return "no /dev/net/tun"
    name = f"tlprobe{os.getpid()}"
    r = subprocess.run(["ip", "netns", "add", name], capture_output=True, text=True, check=False)
    if r.returncode != 0:
        return f"cannot create a network namespace: {r.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", name], capture_output=True, check=False)
    try:
        fd = _open_tun(f"tlprobe{os.getpid() % 10000}")
    except OSError as e:
        return f"cannot create a TUN device: {e}"
    os.close(fd)
    return None


def _open_tun(name: str) -> int:
    fd = os.open("/dev/net/tun", os.O_RDWR | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        fcntl.ioctl(fd, TUNSETIFF, struct.pack("16sH22x", name.encode(), IFF_TUN | IFF_NO_PI))
    except OSError:
        os.close(fd)
        raise
    return fd


def _run(*cmd: str) -> str:
    r = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: {r.stderr.strip()}")
    return r.stdout


@dataclass
class Transfer:
    """One bulk transfer: the sender's and receiver's records and the forwarder's statistics."""

    sender: dict[str, Any]
    receiver: dict[str, Any]
    forward: ForwardStats
    wall_s: float

    def goodput_bps(self, start_s: float, end_s: float) -> float:
        """Receiver goodput between ``start_s`` and ``end_s`` after the sender's connect()."""
        t0 = self.sender["t0_ns"]
        samples = self.receiver["samples"]
        got = _bytes_at(samples, t0 + end_s * 1e9) - _bytes_at(samples, t0 + start_s * 1e9)
        return 8 * got / (end_s - start_s)


def _bytes_at(samples: list[list[int]], t_ns: float) -> float:
    """Cumulative received bytes at ``t_ns`` (linear between samples)."""
    prev_t, prev_b = samples[0]
    if t_ns <= prev_t:
        return float(prev_b)
    for t, b in samples[1:]:
        if t >= t_ns:
            return prev_b + (b - prev_b) * (t_ns - prev_t) / max(1, t - prev_t)
        prev_t, prev_b = t, b
    return float(prev_b)


@dataclass
class _Proc:
    """An endpoint process and the files its stdout and stderr go to."""

    popen: subprocess.Popen[str]
    out: IO[str]
    err: IO[str]

    def output(self) -> str:
        self.out.seek(0)
        return self.out.read()

    def errors(self) -> str:
        self.err.seek(0)
        return self.err.read().strip()[-2000:]


@dataclass
class Testbed:
    """Sender and receiver namespaces joined by two TUN devices (see the module doc)."""

    prefix: str = field(default_factory=lambda: f"tl{os.getpid()}")
    mtu: int = 1500
    #: Run the forwarder loop under SCHED_FIFO (a busy machine delays it much less).
    realtime: bool = True
    #: Extra sysctls set in both namespaces (``{"net.ipv4.tcp_wmem": "4096 4194304 4194304"}``).
    settings: dict[str, str] = field(default_factory=dict)
    fds: dict[str, int] = field(default_factory=dict)
    namespaces: list[str] = field(default_factory=list)
    procs: list[_Proc] = field(default_factory=list)

    @property
    def snd(self) -> str:
        return f"{self.prefix}-snd"

    @property
    def rcv(self) -> str:
        return f"{self.prefix}-rcv"

    def __enter__(self) -> Testbed:
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
            (self.snd, "s", SENDER_ADDR, RECEIVER_ADDR),
            (self.rcv, "r", RECEIVER_ADDR, SENDER_ADDR),
        )
        for ns, tag, local, peer in ends:
            _run("ip", "netns", "add", ns)
            self.namespaces.append(ns)
            dev = f"{self.prefix}{tag}"[:15]
            self.fds[ns] = _open_tun(dev)
            _run("ip", "link", "set", dev, "netns", ns)
            ex = ("ip", "netns", "exec", ns)
            _run(*ex, "ip", "link", "set", "lo", "up")
            _run(*ex, "ip", "link", "set", dev, "mtu", str(self.mtu), "up")
            _run(*ex, "ip", "addr", "add", local, "peer", peer, "dev", dev)
            _run(*ex, "sysctl", "-q", "-w", "net.ipv4.tcp_no_metrics_save=1")
            for key, value in self.settings.items():
                _run(*ex, "sysctl", "-q", "-w", f"{key}={value}")

    def device(self, ns: str) -> str:
        return f"{self.prefix}{'s' if ns == self.snd else 'r'}"[:15]

    def sysctls(self, ns: str) -> dict[str, str]:
        """Every ``net.ipv4.tcp_*`` sysctl in namespace ``ns``."""
        out: dict[str, str] = {}
        for line in _run(
            "ip", "netns", "exec", ns, "sysctl", "-a", "-r", r"^net\.ipv4\.tcp_"
        ).splitlines():
            k, _, v = line.partition(" = ")
            out[k.removeprefix("net.ipv4.")] = " ".join(v.split())
        return out

    def link_info(self, ns: str) -> dict[str, str]:
        """The TUN device's qdisc, MTU and offload-relevant state in ``ns``."""
        ex = ("ip", "netns", "exec", ns)
        dev = self.device(ns)
        return {
            "qdisc": " ".join(_run(*ex, "tc", "qdisc", "show", "dev", dev).split()),
            "link": " ".join(_run(*ex, "ip", "-d", "-s", "link", "show", dev).split()),
        }

    def transfer(
        self,
        *,
        rate_bps: int,
        delay_ns: int,
        queue: int,
        loss: float,
        cc: str,
        duration_s: float,
        seed: int = 1,
        rate_scale: float = 1.0,
        sample_s: float = 0.02,
    ) -> Transfer:
        """One bulk transfer from the sender namespace to the receiver namespace. The data
        direction has loss ``loss``; the ACK direction is lossless. ``rate_scale`` multiplies
        the forwarder's actual rate (fault injection for tests: the comparison must notice)."""
        rate = int(rate_bps * rate_scale)
        fwd = Direction(
            "fwd",
            self.fds[self.snd],
            self.fds[self.rcv],
            LinkDir(rate, delay_ns, queue, loss, seed),
        )
        rev = Direction(
            "rev",
            self.fds[self.rcv],
            self.fds[self.snd],
            LinkDir(rate, delay_ns, queue, 0.0, seed + 1),
        )
        py = sys.executable
        t_start = time.monotonic()
        recv = self._spawn(self.rcv, py, str(ENDPOINTS), "receiver", RECEIVER_ADDR, str(PORT))
        while not recv.output().startswith("ready"):
            if recv.popen.poll() is not None or time.monotonic() > t_start + 10:
                raise RuntimeError(f"receiver did not start: {recv.errors()}")
            time.sleep(0.01)
        send = self._spawn(
            self.snd,
            py,
            str(ENDPOINTS),
            "sender",
            RECEIVER_ADDR,
            str(PORT),
            cc,
            str(duration_s),
            "--sample",
            str(sample_s),
        )
        deadline = time.monotonic() + duration_s + 30.0

        def stop() -> bool:
            done = send.popen.poll() is not None and recv.popen.poll() is not None
            return done or time.monotonic() > deadline

        stats = forward([fwd, rev], stop, realtime=self.realtime)
        outs = []
        for p, role in ((send, "sender"), (recv, "receiver")):
            if p.popen.poll() is None:
                raise RuntimeError(f"{role} did not finish within {duration_s + 30} s")
            if p.popen.returncode != 0:
                raise RuntimeError(f"{role} failed ({p.popen.returncode}): {p.errors()}")
            lines = p.output().splitlines()
            outs.append(json.loads(lines[-1]))
        return Transfer(outs[0], outs[1], stats, time.monotonic() - t_start)

    def _spawn(self, ns: str, *cmd: str) -> _Proc:
        # Output goes to unnamed temporary files, not pipes: nobody reads a pipe while the
        # forwarder runs, and a full pipe would block the endpoint.
        out = tempfile.TemporaryFile("w+")  # noqa: SIM115 (closed in close())
        err = tempfile.TemporaryFile("w+")  # noqa: SIM115
        p = subprocess.Popen(["ip", "netns", "exec", ns, *cmd], stdout=out, stderr=err, text=True)
        proc = _Proc(p, out, err)
        self.procs.append(proc)
        return proc

    def close(self) -> None:
        for p in self.procs:
            if p.popen.poll() is None:
                p.popen.kill()
                p.popen.wait()
            p.out.close()
            p.err.close()
        self.procs.clear()
        for fd in self.fds.values():
            os.close(fd)
        self.fds.clear()
        for ns in self.namespaces:
            subprocess.run(["ip", "netns", "del", ns], capture_output=True, check=False)
        self.namespaces.clear()
