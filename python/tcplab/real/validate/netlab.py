"""Two network namespaces joined by tcplab's real-time emulator (``tcplab.real.emu``).

``Testbed`` (a context manager) is a :class:`tcplab.tcplab_emu.Emulation` without a path: the sender
in the server namespace (10.99.0.1, the path's forward direction carries its data), the
receiver in the client namespace (10.99.0.2), MTU 1500, ``tcp_no_metrics_save = 1``.
:meth:`Testbed.transfer` starts the emulator on the case's link — the simulator's own
``link`` component — runs one bulk transfer and stops it. Leaving the context kills leftover
processes, deletes the devices and the namespaces, also after an error.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from tcplab.real import emu as tcplab_emu
from tcplab.scenario.parse import parse_scenario

__all__ = ["AQM_COLUMNS", "RECEIVER_ADDR", "SENDER_ADDR", "Testbed", "Transfer", "available"]

SENDER_ADDR = tcplab_emu.SERVER_ADDR
RECEIVER_ADDR = tcplab_emu.CLIENT_ADDR
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


#: TcpExt counters recorded per transfer (sender namespace).
NETSTAT_KEYS = (
    "TCPHystartTrainDetect",
    "TCPHystartTrainCwnd",
    "TCPHystartDelayDetect",
    "TCPHystartDelayCwnd",
    "TCPLossProbes",
    "TCPLossProbeRecovery",
    "TCPTimeouts",
    "TCPSpuriousRTOs",
    "TCPSackRecovery",
    "TCPLostRetransmit",
    "TCPDSACKRecv",
    "TCPDSACKUndo",
    "TCPSackRecoveryFail",
    "TCPFastRetrans",
    "TCPSlowStartRetrans",
)


#: A managed queue's summary columns (docs/outputs.md) that the validation compares.
AQM_COLUMNS = ("drops_aqm", "ecn_marks", "sojourn_p50_ms", "sojourn_p99_ms")


#: Real-time priority of the Linux endpoints (SCHED_FIFO), below the emulator's 10. On a loaded
#: machine ordinary processes starve them: at load 16 on 2 cores a 25.6 Mbit/s CUBIC transfer
#: (RTT 40 ms, queue 9) reached 4.0 and 8.8 Mbit/s with normal priority and 20.9 Mbit/s under
#: SCHED_FIFO, which is what tcplab predicts (20.7) and what the link allows. The endpoints block
#: in select() and send()/recv(), so they take the CPU only when the stack has work for them.
ENDPOINT_RT_PRIORITY = 5


def _endpoint_priority() -> None:
    """Runs in the child before exec: the endpoint (and ``ip netns exec``) under SCHED_FIFO."""
    os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(ENDPOINT_RT_PRIORITY))


def available() -> str | None:
    """None if the testbed can run here, else the reason it cannot."""
    why = tcplab_emu.available()
    if why is not None:
        return why
    name = f"tlprobe{os.getpid()}"
    r = subprocess.run(["ip", "netns", "add", name], capture_output=True, text=True, check=False)
    if r.returncode != 0:
        return f"cannot create a network namespace: {r.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", name], capture_output=True, check=False)
    return None


def _run(*cmd: str) -> str:
    r = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: {r.stderr.strip()}")
    return r.stdout


class TransferError(RuntimeError):
    """A transfer could not be run or did not finish (an endpoint failed or hung)."""


@dataclass
class ForwardStats:
    """What the emulator reported for one transfer."""

    #: Release lateness (µs): mean, p50, p99, p999, max, packets, over_1ms.
    lateness_us: dict[str, float]
    write_errors: int
    #: Whether the emulator thread ran under SCHED_FIFO.
    realtime: bool
    #: Per direction: drops_queue, drops_loss, tx_packets, max_packet (and, on a managed
    #: queue, drops_aqm, ecn_marks, sojourn_p50_ms, sojourn_p99_ms).
    directions: dict[str, dict[str, int]]
    #: Each release later than the emulator's log threshold: ``[t_ns, late_ns, dir, prev_ns]``,
    #: ``t_ns`` when it was due and ``prev_ns`` when the direction's release before it was due,
    #: on CLOCK_MONOTONIC (the end hosts' ``time.monotonic_ns()``).
    late_releases: list[list[Any]]


def link_config(
    rate_bps: int,
    delay_ns: int,
    queue: int,
    loss: float,
    seed: int,
    aqm: str | dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The emulated link: ``rate_bps`` and ``delay_ns`` each way, DropTail ``queue`` packets,
    Bernoulli ``loss`` on the data direction only; ``aqm`` (the scenario key) manages the data
    direction's queue."""
    down: dict[str, Any] = {"loss": loss}
    if aqm is not None:
        down["aqm"] = aqm
    data = {
        "name": "validation-linux",
        "duration": "1s",
        "seed": seed,
        "path": [
            {
                "kind": "link",
                "rate": f"{rate_bps}bps",
                "delay": f"{delay_ns}ns",
                "queue": queue,
                "down": down,
            }
        ],
        "flows": [{}],
    }
    return parse_scenario(data, "<validation/linux>").to_config()


@dataclass
class Transfer:
    """One bulk transfer: the sender's and receiver's records and the emulator's statistics."""

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
    """Sender and receiver namespaces joined by the emulator (see the module doc)."""

    mtu: int = 1500
    #: Run the emulator under SCHED_FIFO (a busy machine delays it much less).
    realtime: bool = True
    #: Extra sysctls set in both namespaces (``{"net.ipv4.tcp_wmem": "4096 4194304 4194304"}``).
    settings: dict[str, str] = field(default_factory=dict)
    procs: list[_Proc] = field(default_factory=list)
    emu: tcplab_emu.Emulation | None = None

    @property
    def snd(self) -> str:
        assert self.emu is not None
        return self.emu.server_ns

    @property
    def rcv(self) -> str:
        assert self.emu is not None
        return self.emu.client_ns

    def __enter__(self) -> Testbed:
        self.emu = tcplab_emu.Emulation(
            None, mtu=self.mtu, sysctls=self.settings, rt_priority=10 if self.realtime else 0
        )
        try:
            self.emu.__enter__()
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

    def device(self, ns: str) -> str:
        assert self.emu is not None
        return f"tle{self.emu.suffix}{'s' if ns == self.snd else 'c'}"

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

    def netstat(self, ns: str) -> dict[str, int]:
        """The ``TcpExt`` counters of namespace ``ns`` (``/proc/net/netstat``; per namespace)."""
        lines = _run("ip", "netns", "exec", ns, "cat", "/proc/net/netstat").splitlines()
        out: dict[str, int] = {}
        for head, vals in zip(lines[::2], lines[1::2], strict=False):
            names, values = head.split(), vals.split()
            if names and names[0] == "TcpExt:":
                out.update({k: int(v) for k, v in zip(names[1:], values[1:], strict=False)})
        return out

    def transfer(self, *, cc: str, **link: Any) -> Transfer:
        """One bulk transfer from the sender namespace to the receiver namespace with congestion
        control ``cc``: :meth:`transfers` with one flow, which takes the other keywords
        (``rate_bps``, ``delay_ns``, ``queue``, ``loss``, ``duration_s``, ``seed``,
        ``rate_scale``, ``sample_s``, ``aqm``, ``ecn``)."""
        (one,) = self.transfers(ccs=[cc], **link)
        return one

    def transfers(
        self,
        *,
        rate_bps: int,
        delay_ns: int,
        queue: int,
        loss: float,
        ccs: list[str],
        duration_s: float,
        seed: int = 1,
        rate_scale: float = 1.0,
        sample_s: float = 0.02,
        aqm: str | dict[str, Any] | None = None,
        ecn: bool = False,
    ) -> list[Transfer]:
        """One bulk transfer per entry of ``ccs``, all at once through the same emulated link
        (the flows share its queue): flow ``i`` is a sender with congestion control ``ccs[i]``
        (set on its socket) to a receiver on port ``PORT + i``. The senders start one after
        the other, each as soon as it is spawned; every record has its own ``t0_ns``. The
        sender namespace's ``TcpExt`` counters (namespace-wide, so the sum over the flows) go
        into the first flow's record. The data direction has loss ``loss`` and the queue
        discipline ``aqm`` (the scenario key; None: DropTail); the ACK direction is lossless.
        ``ecn`` sets ``net.ipv4.tcp_ecn`` to 1 in both namespaces (the senders ask for ECN),
        else to 2, the kernel's default (ECN only when the peer asks). ``rate_scale``
        multiplies the emulated link's rate (fault injection for tests: the comparison must
        notice)."""
        assert self.emu is not None
        rate = int(rate_bps * rate_scale)
        mode = 1 if ecn else 2
        for ns in (self.snd, self.rcv):
            _run("ip", "netns", "exec", ns, "sysctl", "-q", "-w", f"net.ipv4.tcp_ecn={mode}")
        before = self.netstat(self.snd)
        self.emu.start(link_config(rate, delay_ns, queue, loss, seed, aqm))
        py = sys.executable
        t_start = time.monotonic()
        pairs: list[tuple[_Proc, _Proc]] = []
        try:
            recvs = [
                self._spawn(self.rcv, py, str(ENDPOINTS), "receiver", RECEIVER_ADDR, str(PORT + i))
                for i in range(len(ccs))
            ]
            for recv in recvs:
                self._wait_ready(recv, t_start)
            for i, (cc, recv) in enumerate(zip(ccs, recvs, strict=True)):
                send = self._spawn(
                    self.snd, py, str(ENDPOINTS), "sender", RECEIVER_ADDR, str(PORT + i), cc,
                    str(duration_s), "--sample", str(sample_s),
                )  # fmt: skip
                pairs.append((send, recv))
            deadline = time.monotonic() + duration_s + 30.0
            while time.monotonic() < deadline and self.emu.emulator_alive:
                if all(p.popen.poll() is not None for pair in pairs for p in pair):
                    break
                time.sleep(0.05)
        finally:
            summary = self.emu.stop()
        records: list[tuple[dict[str, Any], dict[str, Any]]] = []
        for send, recv in pairs:
            outs = []
            for p, role in ((send, "sender"), (recv, "receiver")):
                if p.popen.poll() is None:
                    raise TransferError(f"{role} did not finish within {duration_s + 30} s")
                if p.popen.returncode != 0:
                    raise TransferError(f"{role} failed ({p.popen.returncode}): {p.errors()}")
                lines = p.output().splitlines()
                outs.append(json.loads(lines[-1]))
            records.append((outs[0], outs[1]))
        m = summary["emulator"]
        dirs = {
            row["dir"]: {
                "drops_queue": row["drops_queue"],
                "drops_loss": row["drops_loss"],
                "tx_packets": row["tx_packets"],
                "max_packet": m["max_packet_bytes"][row["dir"]],
                # A managed queue's drops, marks and sojourn quantiles (docs/outputs.md).
                **{k: row[k] for k in AQM_COLUMNS if k in row},
            }
            for row in summary["links"]
        }
        log = m["late_releases"]
        t0 = m["clock_t0_ns"]
        late = [
            [t0 + t, ns, d, t0 + prev]
            for t, ns, d, prev in zip(
                log["due_ns"], log["late_ns"], log["dir"], log["prev_due_ns"], strict=True
            )
        ]
        stats = ForwardStats(m["lateness_us"], m["write_errors"], m["realtime"], dirs, late)
        # The sender namespace's TcpExt counters over this transfer (its only connections):
        # which HyStart test ended slow start and at what cwnd, TLPs, RTOs, ...
        after = self.netstat(self.snd)
        records[0][0]["netstat"] = {
            k: v - before.get(k, 0) for k, v in after.items() if k in NETSTAT_KEYS
        }
        wall = time.monotonic() - t_start
        return [Transfer(snd, rcv, stats, wall) for snd, rcv in records]

    def _wait_ready(self, recv: _Proc, t_start: float) -> None:
        """Until receiver ``recv`` prints ``ready`` (at most 10 s after ``t_start``)."""
        while not recv.output().startswith("ready"):
            if recv.popen.poll() is not None or time.monotonic() > t_start + 10:
                if recv.popen.poll() is None:
                    recv.popen.kill()  # it may hold the port a retry needs
                    recv.popen.wait()
                raise TransferError(
                    f"receiver did not start within 10 s: {recv.errors() or 'no message'}"
                )
            time.sleep(0.01)

    def _spawn(self, ns: str, *cmd: str) -> _Proc:
        """``cmd`` in namespace ``ns`` under SCHED_FIFO (:data:`ENDPOINT_RT_PRIORITY`)."""
        # Output goes to unnamed temporary files, not pipes: nobody reads a pipe during the
        # run, and a full pipe would block the endpoint.
        out = tempfile.TemporaryFile("w+")  # noqa: SIM115 (closed in close())
        err = tempfile.TemporaryFile("w+")  # noqa: SIM115
        p = subprocess.Popen(
            ["ip", "netns", "exec", ns, *cmd],
            stdout=out,
            stderr=err,
            text=True,
            preexec_fn=_endpoint_priority,
        )
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
        if self.emu is not None:
            self.emu.close()
