"""One scenario on both stacks: real Linux TCP through the TUN testbed, and tcplab.

:func:`tcplab_scenario` is the tcplab scenario that matches the testbed: the same link in both
directions (rate, one-way delay, DropTail queue of ``queue`` packets not counting the one in
transmission, Bernoulli loss on the data direction only), MSS 1448 (Linux's MSS for a 1500-byte
MTU with timestamps), IW10, SACK, D-SACK, timestamps, window scaling, the ``linux`` RTO profile
(200 ms minimum, 1 s initial, 200 ms granularity term: Linux's RTO is SRTT + at least
200 ms), congestion avoidance from cwnd = ssthresh on (as Linux), and a Linux-like receiver
(quick-ACK for the first 16 segments, then an ACK every 2 full segments or after 40 ms, at once
on out-of-order data). Linux's
``reno`` is tcplab's ``newreno`` with SACK and byte counting L = 2 (Linux's slow start adds one
segment per segment acknowledged, so a delayed ACK of 2 segments adds 2).

A case with ``aqm`` puts that queue discipline (Linux's defaults, ``queue`` its hard limit) on
the data direction of both the emulated and the simulated link; with ``ecn`` both ends
negotiate ECN and the discipline marks (:attr:`Case.aqm_key`).

With ``stack="linux"`` the tcplab side is instead the flow ``stack = "linux"`` (every Linux
default in one word: PRR, RACK-TLP, Linux's HyStart for CUBIC, cwnd-based ssthresh, F-RTO,
DSACK undo; docs/linux-stack.md) with only the congestion control and MSS given.

Both runs yield a :class:`Run`: goodput over ``[warmup, duration]`` seconds after the flow
opened (tcplab: from the ``delivered`` time series; Linux: from the receiver's byte count),
retransmitted segments over the whole run, and cwnd in segments over time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tcplab.real.validate import STACKS
from tcplab.real.validate.netlab import AQM_COLUMNS
from tcplab.scenario.parse import TCP_STACKS

__all__ = [
    "AQM_COLUMNS",
    "CC_TCPLAB",
    "STACKS",
    "Case",
    "Run",
    "aqm_columns",
    "cwnd_dynamics",
    "linux_run",
    "slow_start_exit",
    "tcplab_runs",
]

#: Linux congestion control name -> tcplab's.
CC_TCPLAB = {"reno": "newreno", "cubic": "cubic", "bbr": "bbr"}
#: An ssthresh above this many segments is "infinite" (Linux: TCP_INFINITE_SSTHRESH = 2^31 - 1;
#: tcplab: a huge byte count).
_INF_SEGMENTS = 1_000_000


@dataclass(frozen=True)
class Case:
    """One point of the matrix."""

    rtt_ms: float
    loss: float
    cc: str
    rate_bps: int = 10_000_000
    queue: int = 100
    duration_s: float = 20.0
    warmup_s: float = 3.0
    #: The data direction's queue discipline (``aqm`` key; None: DropTail), whose hard limit
    #: is ``queue`` packets.
    aqm: str | None = None
    #: ECN on: both namespaces' ``net.ipv4.tcp_ecn = 1`` (the sender asks for it), the flow's
    #: ``ecn = true`` in tcplab, and the discipline's ``ecn`` parameter (it marks ECT packets
    #: instead of dropping them, as ``tc qdisc ... ecn``).
    ecn: bool = False

    @property
    def delay_ns(self) -> int:
        return int(self.rtt_ms * 1e6 / 2)

    @property
    def label(self) -> str:
        s = f"{self.cc} rtt={self.rtt_ms:g}ms loss={self.loss:g}"
        if self.rate_bps != 10_000_000:
            s += f" rate={self.rate_bps / 1e6:g}M"
        if self.queue != 100:
            s += f" queue={self.queue}"
        if self.aqm is not None:
            s += f" aqm={self.aqm}"
        if self.ecn:
            s += " ecn"
        return s

    @property
    def aqm_key(self) -> str | dict[str, Any] | None:
        """The data direction's ``aqm`` key: the discipline with its ``ecn`` parameter set
        to the case's (DropTail has none; DualPI2 has none either: it marks whatever is
        ECN-capable, so the flows' ECN decides)."""
        if self.aqm is None or self.aqm in ("droptail", "dualpi2"):
            return self.aqm
        return {"kind": self.aqm, "ecn": self.ecn}

    @property
    def bdp_packets(self) -> float:
        """Bandwidth-delay product in 1500-byte packets."""
        return self.rate_bps * self.rtt_ms / 1e3 / 8 / 1500


@dataclass
class Run:
    """One run's measurements (either stack)."""

    goodput_bps: float
    retrans: int
    #: Time (s since the flow opened) and cwnd (segments) samples.
    t_s: np.ndarray
    cwnd: np.ndarray
    ssthresh: np.ndarray
    extra: dict[str, Any] = field(default_factory=dict)


def tcplab_scenario(
    case: Case, seed: int, sample_s: float = 0.02, stack: str = "matched"
) -> dict[str, Any]:
    """The tcplab scenario (as a TOML-shaped dict) matching ``case`` on the testbed; ``stack``
    picks the tcplab side (:data:`STACKS`)."""
    flow: dict[str, Any] = {
        "cc": CC_TCPLAB[case.cc],
        "sack": True,
        "dsack": True,
        "timestamps": True,
        "window_scaling": True,
        "mss": 1448,
        "initial_window": 10,
        # Linux: RTO = SRTT + max(tcp_rto_min, 4·mdev) (rto_min floors the variance term, so
        # RTO >= SRTT + 200 ms): the "linux" profile's 200 ms granularity G turns RFC 6298's
        # SRTT + max(G, 4·RTTVAR) into that (found by this validation, now in the profile).
        "rto": "linux",
        # Linux slow-starts only while cwnd < ssthresh (tcp_in_slow_start).
        "ca_at_ssthresh": True,
        "ack": {"every": 2, "max_delay": "40ms", "quickack": 16, "immediate_on_ooo": True},
        # The sender host's send time is the testbed's, not a TCP mechanism: both stacks get
        # the "linux" profile's measured xmit_time.
        "xmit_time": TCP_STACKS["linux"]["xmit_time"],
    }
    if case.cc == "reno":
        flow["abc_l"] = 2
    if stack == "default":
        flow = {"cc": CC_TCPLAB[case.cc], "mss": 1448, "initial_window": 10}
    elif stack == "linux":
        # The testbed's tcp_rmem[2] is 32 MiB (recorded per run), not the kernel's 6 MiB.
        flow = {"stack": "linux", "cc": CC_TCPLAB[case.cc], "mss": 1448, "rcv_buf": "32MiB"}
    elif stack != "matched":
        raise ValueError(f"stack: must be one of {', '.join(STACKS)} (got {stack!r})")
    down: dict[str, Any] = {"loss": case.loss}
    if case.aqm is not None:
        down["aqm"] = case.aqm_key
    if case.ecn:
        flow["ecn"] = True
    return {
        "name": f"linux-{case.cc}",
        "duration": f"{case.duration_s:g}s",
        "seed": seed,
        "sample_interval": f"{sample_s * 1000:g}ms",
        "path": [
            {
                "rate": f"{case.rate_bps}bps",
                "delay": f"{case.delay_ns}ns",
                "queue": case.queue,
                "down": down,
            }
        ],
        "flows": [flow],
    }


#: How far before a late release's due time a replayed stall may begin (:func:`stalls_from_late`).
SILENCE_BEFORE_NS = 5_000_000


def stalls_from_late(late_releases: list[list[Any]]) -> dict[str, list[list[str]]]:
    """A Linux run's late releases (``[due, µs late, dir, previous due]``, seconds after
    connect(), see :func:`linux_run`) as link ``stalls`` per side (``down`` = data, ``up`` =
    ACKs). The late packet went out at due + late, and whatever was due meanwhile with it:
    that is the stall. It starts halfway between the previous release's due time and the late
    packet's (at most ``SILENCE_BEFORE_NS`` before it), so it holds the simulated packet
    nearest in time to the real one — simulated and real timing drift apart by a fraction of
    a packet time over a few round trips — and not the one before it, which would widen the
    gap by a packet time. Overlapping stalls merge; those before connect() are left out."""
    out: dict[str, list[list[str]]] = {}
    for direction, side in (("fwd", "down"), ("rev", "up")):
        spans = sorted(
            (
                max(0, round((prev + t) / 2 * 1e9), round(t * 1e9) - SILENCE_BEFORE_NS),
                round(t * 1e9) + round(late * 1e3),
            )
            for t, late, d, prev in late_releases
            if d == direction and t >= 0
        )
        merged: list[list[int]] = []
        for a, b in spans:
            if merged and a <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], b)
            else:
                merged.append([a, b])
        if merged:
            out[side] = [[f"{a}ns", f"{b - a}ns"] for a, b in merged]
    return out


def tcplab_runs(
    case: Case,
    seeds: list[int],
    rate_scale: float = 1.0,
    stack: str = "matched",
    stalls: list[dict[str, list[list[str]]]] | None = None,
) -> list[Run]:
    """``case`` in tcplab, once per seed. ``rate_scale`` multiplies the link rate (for tests
    that check the comparison notices a wrong rate); ``stack`` picks the tcplab side;
    ``stalls`` (one per seed, from :func:`stalls_from_late`) replays the paired Linux runs'
    late releases on the link."""
    from tcplab.campaign.sweep import run_config
    from tcplab.scenario.parse import parse_scenario

    out = []
    for k, seed in enumerate(seeds):
        sc = tcplab_scenario(case, seed, stack=stack)
        sc["path"][0]["rate"] = f"{round(case.rate_bps * rate_scale)}bps"
        if stalls is not None:
            for side, spans in stalls[k].items():
                sc["path"][0].setdefault(side, {})["stalls"] = spans
        summary = run_config(parse_scenario(sc).to_config(), columns=True)
        ts = summary["timeseries_table"]
        t_s = np.asarray(ts["t_ns"], dtype=float) / 1e9
        delivered = np.asarray(ts["delivered"], dtype=float)
        a, b = np.interp([case.warmup_s, case.duration_s], t_s, delivered)
        flow = summary["flows"][0]
        out.append(
            Run(
                goodput_bps=8 * (b - a) / (case.duration_s - case.warmup_s),
                retrans=int(flow["retransmitted_segments"]),
                t_s=t_s,
                cwnd=np.asarray(ts["cwnd"], dtype=float) / 1448,
                ssthresh=np.asarray(ts["ssthresh"], dtype=float) / 1448,
                extra={
                    "rto_ms_median": _median_after(t_s, np.asarray(ts["rto_ns"]) / 1e6, case),
                    "srtt_ms_median": _median_after(t_s, np.asarray(ts["srtt_ns"]) / 1e6, case),
                    "timeouts": int(flow["timeouts"]),
                    "fast_retransmits": int(flow["fast_retransmits"]),
                    "drops_queue": int(summary["links"][0]["drops_queue"]),
                    "drops_loss": int(summary["links"][0]["drops_loss"]),
                    **aqm_columns(summary["links"][0]),
                },
            )
        )
    return out


def linux_transfer(testbed: Any, case: Case, seed: int = 1000, rate_scale: float = 1.0) -> Any:
    """Run ``case`` once on the Linux testbed (a ``netlab.Testbed``): its ``Transfer``. A
    transfer whose endpoints failed is tried once more (it happened once in hundreds: the
    receiver did not print ``ready`` within 10 s), and said so on stderr."""
    import sys

    from tcplab.real.validate.netlab import TransferError

    link = {
        "rate_bps": case.rate_bps,
        "delay_ns": case.delay_ns,
        "queue": case.queue,
        "loss": case.loss,
        "cc": case.cc,
        "duration_s": case.duration_s,
        "seed": seed,
        "rate_scale": rate_scale,
        "aqm": case.aqm_key,
        "ecn": case.ecn,
    }
    try:
        return testbed.transfer(**link)
    except TransferError as err:
        print(f"validate linux: {case.label}, seed {seed}: {err}; once more", file=sys.stderr)
    try:
        return testbed.transfer(**link)
    except TransferError as err:
        raise TransferError(f"{case.label}, seed {seed}: {err} (twice)") from None


def linux_run(transfer: Any, case: Case) -> Run:
    """A :class:`Run` from a ``netlab.Transfer``."""
    samples = transfer.sender["samples"]
    t_s = np.array([s["t_ns"] for s in samples], dtype=float) / 1e9
    final = transfer.sender["final"]
    fwd = transfer.forward.directions["fwd"]
    t0 = transfer.sender["t0_ns"]
    return Run(
        goodput_bps=transfer.goodput_bps(case.warmup_s, case.duration_s),
        retrans=int(final["total_retrans"]),
        t_s=t_s,
        cwnd=np.array([s["snd_cwnd"] for s in samples], dtype=float),
        ssthresh=np.array([s["snd_ssthresh"] for s in samples], dtype=float),
        extra={
            "rto_ms_median": _median_after(t_s, np.array([x["rto"] for x in samples]) / 1e3, case),
            "srtt_ms_median": _median_after(t_s, np.array([x["rtt"] for x in samples]) / 1e3, case),
            "drops_queue": fwd["drops_queue"],
            "drops_loss": fwd["drops_loss"],
            **aqm_columns(fwd),
            "max_packet": fwd["max_packet"],
            "dsack_dups": int(final["dsack_dups"]),
            "timeouts": int(final["total_rto"]),
            "rto_recoveries": int(final["total_rto_recoveries"]),
            "rwnd_limited_us": int(final["rwnd_limited"]),
            "sndbuf_limited_us": int(final["sndbuf_limited"]),
            "min_rtt_us": int(final["min_rtt"]),
            "snd_mss": int(final["snd_mss"]),
            "cc": transfer.sender["cc"],
            "netstat": transfer.sender.get("netstat", {}),
            # When the emulator released a packet late, relative to connect(): [due s, µs late,
            # dir, s the direction's previous release was due].
            "late_releases": [
                [(t - t0) / 1e9, ns / 1e3, d, (prev - t0) / 1e9]
                for t, ns, d, prev in transfer.forward.late_releases
            ],
            "recovery_fraction": float(
                np.mean([x["ca_state"] >= 3 for x in samples if x["t_ns"] >= case.warmup_s * 1e9])
            ),
        },
    )


def aqm_columns(link: dict[str, Any]) -> dict[str, Any]:
    """The :data:`AQM_COLUMNS` of a link summary row (simulator or emulator), if it has them
    (only a managed queue, one with an ``aqm`` key, has)."""
    return {k: link[k] for k in AQM_COLUMNS if k in link}


def slow_start_exit(run: Run) -> tuple[float, float]:
    """(time in s, peak cwnd in segments) of the initial slow start: the largest cwnd sampled
    before ssthresh first becomes finite, and when that sample was taken (NaN, NaN if slow
    start never ended)."""
    finite = np.nonzero(run.ssthresh < _INF_SEGMENTS)[0]
    if len(finite) == 0 or finite[0] == 0:
        return math.nan, math.nan
    i = int(np.argmax(run.cwnd[: finite[0]]))
    return float(run.t_s[i]), float(run.cwnd[i])


def _median_after(t_s: np.ndarray, values: np.ndarray, case: Case) -> float:
    """Median of ``values`` sampled after the warm-up."""
    keep = values[t_s >= case.warmup_s]
    return float(np.median(keep)) if len(keep) else math.nan


def cwnd_dynamics(run: Run, case: Case) -> dict[str, float]:
    """After the warm-up: mean cwnd, the rate at which cwnd rises and falls (sum of the sampled
    increases, resp. decreases, per second; segments/s) and the number of sampled decreases."""
    keep = run.t_s >= case.warmup_s
    t, c = run.t_s[keep], run.cwnd[keep]
    d = np.diff(c)
    span = float(t[-1] - t[0]) if len(t) > 1 else math.nan
    return {
        "cwnd_mean": float(c.mean()),
        "rise_per_s": float(d[d > 0].sum() / span),
        "fall_per_s": float(-d[d < 0].sum() / span),
        "decreases": int((d < 0).sum()),
    }
