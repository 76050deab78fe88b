"""``tcplab validate linux``: real Linux TCP over tcplab's emulator against tcplab's simulator.

    tcplab validate linux [--case cc=cubic,rate=10Mbps,rtt=40ms,loss=0.01,queue=100
                                  [,aqm=fq_codel,ecn=1]] [--quick]
                          [--runs N] [--stack linux|matched|default] [--extra]
                          [--random N [--seed S] [--space FILE]]
                          [--linux-cache DIR] [--independent-seeds] [--out DIR] [--json]

Needs root (network namespaces, TUN devices). Without ``--case``: the matrix (reno and cubic,
10 Mbit/s, RTT 40 and 100 ms, loss 0 / 0.1 % / 1 %), ``DIR/report.md``, ``DIR/results.json``
and the cwnd figures (default DIR: ``out/validation-linux``); about 21 minutes of wall time
(Linux runs in real time), ``--quick`` about 2.5. With ``--case`` (repeatable, ``cc`` is reno,
cubic or bbr; the kernel's BBR paces itself, no ``fq`` needed): those cases,
``DIR/results.json`` and a cwnd-vs-time figure per case. ``--json`` prints one JSON object per
case and line: ``{"case": {...}, "linux": {...}, "tcplab": {...}}``.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import math
import os
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from tcplab.errors import ScenarioError
from tcplab.real.validate import add_arguments
from tcplab.real.validate.compare import (
    CC_TCPLAB,
    Case,
    Run,
    linux_run,
    linux_transfer,
    slow_start_exit,
    stalls_from_late,
    tcplab_runs,
)
from tcplab.real.validate.draw import (
    Space,
    case_errors,
    case_spec,
    draw_cases,
    load_space,
    summarise,
)
from tcplab.real.validate.netlab import KEY_SYSCTLS, Testbed, available
from tcplab.scenario.aqm import KINDS as AQM_KINDS
from tcplab.scenario.units import parse_rate, parse_time
from tcplab.stats import mean_ci95

RTTS_MS = (40.0, 100.0)
LOSSES = (0.0, 0.001, 0.01)
CCS = ("reno", "cubic")


#: Cases beyond the base matrix (``--extra``): rates 2 and 50 Mbit/s, RTT 10 and 250 ms, and a
#: queue of a quarter of the bandwidth-delay product (queue None);
#: (cc, rate Mbit/s, RTT ms, loss, queue).
EXTRA: tuple[tuple[str, float, float, float, int | None], ...] = (
    ("cubic", 2, 40, 0.0, 100),
    ("reno", 2, 40, 0.01, 100),
    ("cubic", 50, 40, 0.0, 100),
    ("reno", 50, 40, 0.001, 100),
    ("cubic", 10, 10, 0.001, 100),
    ("reno", 10, 10, 0.01, 100),
    ("cubic", 10, 250, 0.0, 100),
    ("reno", 10, 250, 0.001, 100),
    ("cubic", 10, 100, 0.0, None),
    ("reno", 10, 100, 0.001, None),
)


def extra_cases(quick: bool) -> list[Case]:
    """:data:`EXTRA` as cases (a quarter-BDP queue counted in 1500-byte packets)."""
    duration, warmup = (10.0, 2.0) if quick else (20.0, 3.0)
    out = []
    for cc, rate, rtt, loss, queue in EXTRA:
        c = Case(rtt_ms=rtt, loss=loss, cc=cc, rate_bps=int(rate * 1e6))
        q = queue if queue is not None else max(2, round(c.bdp_packets / 4))
        out.append(
            Case(
                rtt_ms=rtt,
                loss=loss,
                cc=cc,
                rate_bps=c.rate_bps,
                queue=q,
                duration_s=duration,
                warmup_s=warmup,
            )
        )
    return out


def matrix(quick: bool) -> tuple[list[Case], int, int]:
    """The cases, Linux repetitions and tcplab seeds."""
    duration, warmup = (10.0, 2.0) if quick else (20.0, 3.0)
    cases = [
        Case(rtt_ms=rtt, loss=loss, cc=cc, duration_s=duration, warmup_s=warmup)
        for rtt in RTTS_MS
        for loss in LOSSES
        for cc in CCS
    ]
    return cases, (1 if quick else 5), (5 if quick else 10)


def cubic_parameters() -> dict[str, str]:
    """tcp_cubic's module parameters (global, not per namespace), e.g. HyStart's switches."""
    d = Path("/sys/module/tcp_cubic/parameters")
    return {f.name: f.read_text().strip() for f in sorted(d.iterdir())} if d.is_dir() else {}


def lateness_over_runs(runs: list[dict[str, float]]) -> dict[str, float]:
    """The emulator's release lateness over all runs: packet-weighted mean, the median and the
    largest of the per-run quantiles, the largest maximum."""
    n = sum(r["packets"] for r in runs)
    return {
        "n": n,
        "mean": sum(r["mean"] * r["packets"] for r in runs) / max(1, n),
        "p50": float(np.median([r["p50"] for r in runs])),
        "p99_median": float(np.median([r["p99"] for r in runs])),
        "p99_max": max(r["p99"] for r in runs),
        "p999_max": max(r["p999"] for r in runs),
        "max": max(r["max"] for r in runs),
        "over_1ms_%": 100 * sum(r["over_1ms"] for r in runs) / max(1, n),
    }


def _fmt(mean: float, ci: float, scale: float = 1e6, digits: int = 2) -> str:
    if math.isnan(ci):
        return f"{mean / scale:.{digits}f}"
    return f"{mean / scale:.{digits}f} ± {ci / scale:.{digits}f}"


def plot_cwnd(
    path: Path, title: str, panels: list[tuple[str, list[Run], list[Run]]], t_max: float
) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(panels), 1, figsize=(9, 3.2 * len(panels)), squeeze=False)
    for ax, (label, linux, sim) in zip(axes[:, 0], panels, strict=True):
        for i, r in enumerate(linux):
            ax.plot(
                r.t_s,
                r.cwnd,
                color="tab:blue",
                lw=1.2,
                alpha=1.0 if i == 0 else 0.35,
                label="Linux (TCP_INFO snd_cwnd)" if i == 0 else None,
            )
        # Paired runs: every one (each is its Linux run's twin); else three seeds.
        for i, r in enumerate(sim if len(sim) == len(linux) else sim[:3]):
            ax.plot(
                r.t_s,
                r.cwnd,
                color="tab:orange",
                lw=1.2,
                ls="--",
                alpha=1.0 if i == 0 else 0.35,
                label="tcplab (cwnd / 1448 B)" if i == 0 else None,
            )
        ax.set_xlim(0, t_max)
        ax.set_ylim(bottom=0)
        ax.set_title(label, fontsize=10)
        ax.set_ylabel("cwnd (segments)")
        ax.grid(alpha=0.3)
        ax.legend(loc="upper right", fontsize=8)
    axes[-1, 0].set_xlabel("time since connect (s)")
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


#: The keys of a ``--case``, in the order of its doc.
CASE_KEYS = ("cc", "rate", "rtt", "loss", "queue", "duration", "aqm", "ecn")


def parse_case(spec: str, quick: bool) -> Case:
    """``cc=cubic,rate=10Mbps,rtt=40ms,loss=0.01,queue=100[,duration=20s][,aqm=fq_codel]
    [,ecn=1]`` (every key optional: reno, 10 Mbit/s, 40 ms, 0, 100, 20 s or 10 s with --quick,
    DropTail, ECN off), or the older ``CC,RTT_MS,LOSS``. ``aqm`` names the data direction's
    queue discipline (the scenario key's names, Linux's defaults, ``queue`` its hard limit);
    ``ecn=1`` turns ECN on at both ends and in the discipline, and needs a discipline that
    marks."""
    duration, warmup = (10.0, 2.0) if quick else (20.0, 3.0)
    values: dict[str, str] = {}
    if "=" not in spec:
        parts = spec.split(",")
        if len(parts) != 3:
            raise ScenarioError(f"--case: expected KEY=VALUE,... or CC,RTT_MS,LOSS (got {spec!r})")
        values = {"cc": parts[0], "rtt": f"{parts[1]}ms", "loss": parts[2]}
    else:
        for item in spec.split(","):
            key, eq, value = item.partition("=")
            if not eq or key.strip() not in CASE_KEYS:
                raise ScenarioError(
                    f"--case: {item!r}: expected one of {', '.join(CASE_KEYS)} as KEY=VALUE"
                )
            values[key.strip()] = value.strip()
    cc = values.get("cc", "reno")
    if cc not in CC_TCPLAB:
        raise ScenarioError(f"--case: cc: must be one of {', '.join(CC_TCPLAB)} (got {cc!r})")
    try:
        loss = float(values.get("loss", "0"))
        queue = int(values.get("queue", "100"))
    except ValueError as err:
        raise ScenarioError(f"--case: loss/queue: not a number ({err})") from None
    if not 0 <= loss < 1:
        raise ScenarioError(f"--case: loss: must be in [0, 1) (got {loss})")
    if queue < 1:
        raise ScenarioError(f"--case: queue: must be >= 1 (got {queue})")
    if "duration" in values:
        duration = parse_time(values["duration"], "--case: duration") / 1e9
        warmup = min(warmup, duration / 4)
    rtt_ns = parse_time(values.get("rtt", "40ms"), "--case: rtt")
    if rtt_ns <= 0:
        raise ScenarioError("--case: rtt: must be > 0")
    aqm = values.get("aqm")
    if aqm is not None and aqm not in AQM_KINDS:
        raise ScenarioError(f"--case: aqm: must be one of {', '.join(AQM_KINDS)} (got {aqm!r})")
    ecn_text = values.get("ecn", "0")
    if ecn_text not in ("0", "1"):
        raise ScenarioError(f"--case: ecn: must be 0 or 1 (got {ecn_text!r})")
    ecn = ecn_text == "1"
    if ecn and aqm in (None, "droptail"):
        raise ScenarioError("--case: ecn: needs an aqm that marks (DropTail only drops)")
    return Case(
        rtt_ms=rtt_ns / 1e6,
        loss=loss,
        cc=cc,
        rate_bps=parse_rate(values.get("rate", "10Mbps"), "--case: rate"),
        queue=queue,
        duration_s=duration,
        warmup_s=warmup,
        aqm=aqm,
        ecn=ecn,
    )


def _cache_path(cache: Path, case: Case, seed: int) -> Path:
    slug = "".join(ch if ch.isalnum() else "_" for ch in case.label)
    return cache / f"{slug}_q{case.queue}_d{case.duration_s:g}_w{case.warmup_s:g}_s{seed}.json"


def _save_run(path: Path, run: Run, lateness: dict[str, float]) -> None:
    obj = {
        "goodput_bps": run.goodput_bps,
        "retrans": run.retrans,
        "t_s": run.t_s.tolist(),
        "cwnd": run.cwnd.tolist(),
        "ssthresh": run.ssthresh.tolist(),
        "extra": run.extra,
        "lateness_us": lateness,
    }
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(obj, default=float))
    tmp.replace(path)


def _load_run(path: Path) -> tuple[Run, dict[str, float]]:
    obj = json.loads(path.read_text())
    run = Run(
        goodput_bps=obj["goodput_bps"],
        retrans=obj["retrans"],
        t_s=np.asarray(obj["t_s"], dtype=float),
        cwnd=np.asarray(obj["cwnd"], dtype=float),
        ssthresh=np.asarray(obj["ssthresh"], dtype=float),
        extra=obj["extra"],
    )
    return run, obj["lateness_us"]


def linux_runs(
    tb: Testbed | None, case: Case, reps: int, cache: Path | None = None
) -> tuple[list[Run], list[dict[str, float]]]:
    """``case`` ``reps`` times on Linux (emulator seeds 1000, 1001, ...): the runs and the
    emulator's lateness per run. With ``cache``, a Linux run stored there (same case, duration,
    warm-up and emulator seed) is read instead of run again, and a new one is stored: the
    tcplab side can be re-run against the same Linux runs."""
    linux: list[Run] = []
    lateness = []
    for rep in range(reps):
        path = _cache_path(cache, case, 1000 + rep) if cache is not None else None
        if path is not None and path.exists():
            run, late = _load_run(path)
        else:
            if tb is None:
                raise RuntimeError(f"{case.label}: Linux run {1000 + rep} is not in the cache")
            tr = linux_transfer(tb, case, seed=1000 + rep)
            run, late = linux_run(tr, case), tr.forward.lateness_us
            if path is not None:
                _save_run(path, run, late)
        lateness.append(late)
        linux.append(run)
    return linux, lateness


def compare_runs(
    case: Case, linux: list[Run], seeds: list[int], stack: str
) -> tuple[dict[str, Any], list[Run]]:
    """tcplab's side of ``case`` (``stack``), once per seed, against the Linux runs ``linux``:
    the row of the report and tcplab's runs."""
    reps = len(linux)
    # Paired runs also replay each Linux run's late releases (the testbed's timing error) as
    # link stalls, so both stacks see the same path; the ideal-timing runs are kept beside them.
    paired = seeds == [1000 + r for r in range(reps)]
    logged = all("late_releases" in r.extra for r in linux)
    sim_ideal = tcplab_runs(case, seeds, stack=stack)
    if paired and logged:
        stalls = [stalls_from_late(r.extra["late_releases"]) for r in linux]
        sim = tcplab_runs(case, seeds, stack=stack, stalls=stalls)
    else:
        sim = sim_ideal
    row = _row(case, linux, sim)
    row["replay"] = (
        "replayed" if paired and logged else ("not paired" if not paired else "not recorded")
    )
    if sim is not sim_ideal:
        ideal = _row(case, linux, sim_ideal)
        row["ideal"] = {k: v for k, v in ideal.items() if k.startswith("tcplab_") or k == "targets"}
        row["stalls_replayed"] = [sum(len(v) for v in st.values()) for st in stalls]
    return row, sim


def measure(
    tb: Testbed | None,
    case: Case,
    reps: int,
    seeds: list[int],
    stack: str,
    cache: Path | None = None,
) -> tuple[dict[str, Any], list[Run], list[Run], list[dict[str, float]]]:
    """``case`` ``reps`` times on Linux (:func:`linux_runs`) and once per seed in tcplab
    (:func:`compare_runs`): the row of the report, the runs, and the emulator's lateness per
    Linux run."""
    linux, lateness = linux_runs(tb, case, reps, cache)
    row, sim = compare_runs(case, linux, seeds, stack)
    return row, linux, sim, lateness


def _row(case: Case, linux: list[Run], sim: list[Run]) -> dict[str, Any]:
    """The report's row for ``case`` from its Linux and tcplab runs."""
    lg = mean_ci95([r.goodput_bps for r in linux])
    sg = mean_ci95([r.goodput_bps for r in sim])
    lss = [slow_start_exit(r) for r in linux]
    sss = [slow_start_exit(r) for r in sim]
    row = {
        "case": case.label,
        "cc": case.cc,
        "rtt_ms": case.rtt_ms,
        "loss": case.loss,
        "rate_bps": case.rate_bps,
        "queue": case.queue,
        "linux_goodput": lg,
        "tcplab_goodput": sg,
        "ratio": sg[0] / lg[0],
        "linux_retrans": float(np.mean([r.retrans for r in linux])),
        "tcplab_retrans": float(np.mean([r.retrans for r in sim])),
        "linux_ss_peak": float(np.nanmean([p for _, p in lss])),
        "tcplab_ss_peak": float(np.nanmean([p for _, p in sss])),
        "linux_ss_exit_s": float(np.nanmean([t for t, _ in lss])),
        "tcplab_ss_exit_s": float(np.nanmean([t for t, _ in sss])),
        "tcplab_timeouts": float(np.mean([r.extra["timeouts"] for r in sim])),
        "linux_timeouts": float(np.mean([r.extra["timeouts"] for r in linux])),
        "linux_rto_ms": float(np.nanmean([r.extra["rto_ms_median"] for r in linux])),
        "tcplab_rto_ms": float(np.nanmean([r.extra["rto_ms_median"] for r in sim])),
        "linux_srtt_ms": float(np.nanmean([r.extra["srtt_ms_median"] for r in linux])),
        "tcplab_srtt_ms": float(np.nanmean([r.extra["srtt_ms_median"] for r in sim])),
        "linux_rwnd_limited_s": float(np.mean([r.extra["rwnd_limited_us"] for r in linux]) / 1e6),
        "linux_cwnd_mean": float(np.mean([_mean_after(r, case) for r in linux])),
        "tcplab_cwnd_mean": float(np.mean([_mean_after(r, case) for r in sim])),
        "linux_extra": [r.extra for r in linux],
        "tcplab_extra": [r.extra for r in sim],
        "linux_goodputs": [r.goodput_bps for r in linux],
        "tcplab_goodputs": [r.goodput_bps for r in sim],
    }
    if case.aqm is not None:
        row["aqm"] = case.aqm
        row["ecn"] = case.ecn
        for who, runs in (("linux", linux), ("tcplab", sim)):
            row[f"{who}_qdelay_p50_ms"] = float(np.mean([r.extra["sojourn_p50_ms"] for r in runs]))
            row[f"{who}_qdelay_p99_ms"] = float(np.mean([r.extra["sojourn_p99_ms"] for r in runs]))
            row[f"{who}_drops"] = float(
                np.mean([r.extra["drops_queue"] + r.extra["drops_aqm"] for r in runs])
            )
            row[f"{who}_marks"] = float(np.mean([r.extra["ecn_marks"] for r in runs]))
    row["targets"] = targets(row)
    if case.aqm is not None:
        row["aqm_targets"] = aqm_targets(row)
    return row


#: The managed-queue targets: goodput within 10 %, the median and 99th-percentile queueing
#: delay within 20 % or 1 ms, drop and mark counts within 30 %.
AQM_GOODPUT, AQM_DELAY, AQM_DELAY_MS, AQM_COUNTS = 0.10, 0.20, 1.0, 0.30


def aqm_targets(row: dict[str, Any]) -> dict[str, bool | None]:
    """A managed-queue case's targets (:data:`AQM_GOODPUT` and the rest; means over runs).
    A count is within 30 % of Linux's, or zero where Linux's is; marks are n/a without ECN."""

    def delay(k: str) -> bool:
        lv, sv = row[f"linux_{k}"], row[f"tcplab_{k}"]
        return abs(sv - lv) <= max(AQM_DELAY * lv, AQM_DELAY_MS)

    def count(k: str) -> bool:
        lv, sv = row[f"linux_{k}"], row[f"tcplab_{k}"]
        return abs(sv - lv) <= AQM_COUNTS * lv if lv > 0 else sv == 0

    return {
        "goodput_10": abs(row["tcplab_goodput"][0] / row["linux_goodput"][0] - 1) <= AQM_GOODPUT,
        "qdelay_p50": delay("qdelay_p50_ms"),
        "qdelay_p99": delay("qdelay_p99_ms"),
        "drops": count("drops"),
        "marks": count("marks") if row["ecn"] else None,
    }


def aqm_report(rows: list[dict[str, Any]]) -> str:
    """A markdown table of the managed-queue rows of ``rows`` against :func:`aqm_targets`
    (empty if there are none)."""
    rows = [r for r in rows if "aqm_targets" in r]
    if not rows:
        return ""

    names = ("goodput_10", "qdelay_p50", "qdelay_p99", "drops", "marks")
    intro = (
        "Managed queues (data direction; means over runs): goodput within 10 %, queueing delay "
        "(sojourn) median and 99th percentile within 20 % or 1 ms, drops (limit + discipline) "
        "and ECN marks within 30 %."
    )
    columns = (
        "case",
        "goodput Mbit/s Linux / tcplab",
        "sojourn p50 ms Linux / tcplab",
        "sojourn p99 ms Linux / tcplab",
        "drops Linux / tcplab",
        "marks Linux / tcplab",
    )

    def cells(r: dict[str, Any]) -> list[str]:
        return [
            str(r["case"]),
            f"{r['linux_goodput'][0] / 1e6:.3f} / {r['tcplab_goodput'][0] / 1e6:.3f}",
            f"{r['linux_qdelay_p50_ms']:.2f} / {r['tcplab_qdelay_p50_ms']:.2f}",
            f"{r['linux_qdelay_p99_ms']:.2f} / {r['tcplab_qdelay_p99_ms']:.2f}",
            f"{r['linux_drops']:.1f} / {r['tcplab_drops']:.1f}",
            f"{r['linux_marks']:.1f} / {r['tcplab_marks']:.1f}",
        ]

    labels = ("goodput", "p50", "p99", "drops", "marks")
    met = "Managed-queue targets met"
    table = _target_table(intro, columns, labels, rows, cells, names, "aqm_targets", met)
    return "\n".join(table)


def targets(row: dict[str, Any]) -> dict[str, bool | None]:
    """The validation targets for one row (None: not applicable): goodput within ±5 % of Linux's
    mean where Linux's 95 % CI half-width is under 5 % (else the CIs overlap), retransmissions
    within ±30 %, no RTO where Linux took none, CUBIC's slow-start peak within 15 % and its
    exit within one RTT."""
    lm, lci = row["linux_goodput"]
    sm, sci = row["tcplab_goodput"]
    lci = 0.0 if math.isnan(lci) else lci
    sci = 0.0 if math.isnan(sci) else sci
    tight = lci < 0.05 * lm
    goodput = abs(sm / lm - 1) <= 0.05 if tight else abs(sm - lm) <= lci + sci
    lr, sr = row["linux_retrans"], row["tcplab_retrans"]
    retrans = abs(sr - lr) <= 0.3 * lr if lr > 0 else sr == 0
    rtos = (row["tcplab_timeouts"] == 0) if row["linux_timeouts"] == 0 else None
    peak = exit_ = None
    if row["cc"] == "cubic" and not math.isnan(row["linux_ss_peak"]):
        peak = abs(row["tcplab_ss_peak"] / row["linux_ss_peak"] - 1) <= 0.15
        exit_ = abs(row["tcplab_ss_exit_s"] - row["linux_ss_exit_s"]) <= row["rtt_ms"] / 1e3
    return {"goodput": goodput, "retrans": retrans, "rtos": rtos, "ss_peak": peak, "ss_exit": exit_}


def targets_report(rows: list[dict[str, Any]], stack: str) -> str:
    """A markdown table of ``rows`` with the validation targets, and the count met per target."""

    names = ("goodput", "retrans", "rtos", "ss_peak", "ss_exit")
    columns = (
        "case",
        "Linux goodput",
        "tcplab goodput",
        "ratio",
        "retrans Linux / tcplab",
        "RTOs Linux / tcplab",
        "ss peak Linux / tcplab",
        "ss exit (s) Linux / tcplab",
    )

    def cells(row: dict[str, Any]) -> list[str]:
        return [
            str(row["case"]),
            _fmt(*row["linux_goodput"], digits=3),
            _fmt(*row["tcplab_goodput"], digits=3),
            f"{row['ratio']:.3f}",
            f"{row['linux_retrans']:.0f} / {row['tcplab_retrans']:.0f}",
            f"{row['linux_timeouts']:.1f} / {row['tcplab_timeouts']:.1f}",
            f"{row['linux_ss_peak']:.0f} / {row['tcplab_ss_peak']:.0f}",
            f"{row['linux_ss_exit_s']:.2f} / {row['tcplab_ss_exit_s']:.2f}",
        ]

    intro = f"tcplab side: `--stack {stack}`. ± is the 95 % CI over runs (Student t)."
    labels = ("goodput", "retrans", "RTOs", "peak", "exit")
    lines = _target_table(intro, columns, labels, rows, cells, names)
    replayed = [r for r in rows if "ideal" in r]
    if replayed:
        lines += [
            "The tcplab runs above replay each paired Linux run's late releases (the emulator's "
            "timing error, `late_releases` in its summary) as link stalls, so both stacks see "
            "the same path. With ideal timing instead (no stalls), targets met: "
            + _met([r["ideal"] for r in replayed], names)
            + f" (of the {len(replayed)} replayed cases). Cases where the replay changes "
            "tcplab's result:",
            "",
            "| case | stalls per run | retrans Linux / replayed / ideal "
            "| goodput replayed / ideal | ss peak Linux / replayed / ideal |",
            "|" + "---|" * 5,
        ]
        for r in replayed:
            i = r["ideal"]
            if (
                r["tcplab_retrans"] == i["tcplab_retrans"]
                and r["tcplab_goodput"][0] == i["tcplab_goodput"][0]
                and r["tcplab_ss_peak"] == i["tcplab_ss_peak"]
            ):
                continue
            retrans = (r["linux_retrans"], r["tcplab_retrans"], i["tcplab_retrans"])
            peak = (r["linux_ss_peak"], r["tcplab_ss_peak"], i["tcplab_ss_peak"])
            lines.append(
                f"| {r['case']} | {'/'.join(str(n) for n in r['stalls_replayed'])} | "
                + " / ".join(f"{x:.1f}" for x in retrans)
                + f" | {r['tcplab_goodput'][0] / 1e6:.3f} / {i['tcplab_goodput'][0] / 1e6:.3f} | "
                + " / ".join(f"{x:.0f}" for x in peak)
                + " |"
            )
        lines.append("")
    return "\n".join(lines)


def _target_table(
    intro: str,
    columns: tuple[str, ...],
    labels: tuple[str, ...],
    rows: list[dict[str, Any]],
    cells: Callable[[dict[str, Any]], list[str]],
    names: tuple[str, ...],
    key: str = "targets",
    met: str = "Targets met",
) -> list[str]:
    """The lines of a markdown table of ``rows`` against their targets ``row[key]``: ``intro``,
    the measured ``columns`` (each row's ``cells``), one ✓/✗ column per target in ``names``
    headed by ``labels``, and how many rows meet each target (after ``met``)."""
    lines = [intro, "", "| " + " | ".join(columns + labels) + " |"]
    lines.append("|" + "---|" * (len(columns) + len(labels)))
    for r in rows:
        marks = [_mark(r[key][n]) for n in names]
        lines.append("| " + " | ".join(cells(r) + marks) + " |")
    lines += ["", f"{met}: " + _met(rows, names, key) + ".", ""]
    return lines


def _mark(v: bool | None) -> str:
    return "n/a" if v is None else ("✓" if v else "✗")


def _met(rows: list[dict[str, Any]], names: tuple[str, ...], key: str = "targets") -> str:
    """How many of ``rows`` meet each target in ``names`` (of those it applies to)."""
    met = []
    for n in names:
        vals = [r[key][n] for r in rows if r[key][n] is not None]
        met.append(f"{n} {sum(vals)}/{len(vals)}")
    return ", ".join(met)


def case_fields(case: Case) -> dict[str, Any]:
    """``case``'s parameters as ``--json`` prints them."""
    return {
        "cc": case.cc,
        "rate_bps": case.rate_bps,
        "rtt_ms": case.rtt_ms,
        "loss": case.loss,
        "queue": case.queue,
        "duration_s": case.duration_s,
        "warmup_s": case.warmup_s,
        # A managed queue's keys only when it has one (other cases print as before).
        **({"aqm": case.aqm, "ecn": case.ecn} if case.aqm is not None else {}),
    }


def case_json(case: Case, row: dict[str, Any], stack: str) -> dict[str, Any]:
    """One case as ``--json`` prints it."""

    def side(who: str) -> dict[str, Any]:
        mean, ci = row[f"{who}_goodput"]
        return {
            "goodput_bps": mean,
            "goodput_ci95_bps": None if math.isnan(ci) else ci,
            "retransmitted_segments": row[f"{who}_retrans"],
            "rtos": row[f"{who}_timeouts"],
            "slow_start_peak_segments": _num(row[f"{who}_ss_peak"]),
            "slow_start_peak_s": _num(row[f"{who}_ss_exit_s"]),
            "cwnd_mean_segments": row[f"{who}_cwnd_mean"],
            "srtt_ms": _num(row[f"{who}_srtt_ms"]),
            "rto_ms": _num(row[f"{who}_rto_ms"]),
            "runs": len(row[f"{who}_goodputs"]),
            **(
                {
                    "sojourn_p50_ms": row[f"{who}_qdelay_p50_ms"],
                    "sojourn_p99_ms": row[f"{who}_qdelay_p99_ms"],
                    "drops": row[f"{who}_drops"],
                    "ecn_marks": row[f"{who}_marks"],
                }
                if "aqm" in row
                else {}
            ),
        }

    return {
        "case": {**case_fields(case), "stack": stack},
        "linux": side("linux"),
        "tcplab": side("tcplab"),
        # Whether tcplab's runs replayed the Linux runs' late releases (see measure()), and
        # the same runs with ideal timing.
        "timing_replay": row.get("replay", "not paired"),
        **(
            {
                "tcplab_ideal_timing": {
                    "goodput_bps": row["ideal"]["tcplab_goodput"][0],
                    "retransmitted_segments": row["ideal"]["tcplab_retrans"],
                    "rtos": row["ideal"]["tcplab_timeouts"],
                    "slow_start_peak_segments": _num(row["ideal"]["tcplab_ss_peak"]),
                    "targets": row["ideal"]["targets"],
                },
                "stalls_replayed_per_run": row["stalls_replayed"],
            }
            if "ideal" in row
            else {}
        ),
    }


def _num(x: float) -> float | None:
    return None if math.isnan(x) else x


def run_matrix(quick: bool, out: Path, stack: str = "linux") -> dict[str, Any]:
    cases, reps, nseeds = matrix(quick)
    seeds = list(range(1, nseeds + 1))
    rows: list[dict[str, Any]] = []
    runs: dict[str, tuple[list[Run], list[Run]]] = {}
    lateness: list[dict[str, float]] = []
    env: dict[str, Any] = {}
    t_start = time.monotonic()
    with Testbed() as tb:
        env["sysctls_sender"] = tb.sysctls(tb.snd)
        env["sysctls_receiver"] = tb.sysctls(tb.rcv)
        env["link_sender"] = tb.link_info(tb.snd)
        env["cubic_module"] = cubic_parameters()
        for case in cases:
            row, linux, sim, late = measure(tb, case, reps, seeds, stack)
            lateness.extend(late)
            runs[case.label] = (linux, sim)
            rows.append(row)
            print(
                f"{case.label:32s} linux {_fmt(*row['linux_goodput'])} "
                f"tcplab {_fmt(*row['tcplab_goodput'])} Mbit/s "
                f"ratio {row['ratio']:.3f} "
                f"retrans {row['linux_retrans']:.0f}/{row['tcplab_retrans']:.0f}",
                flush=True,
            )
        env["realtime"] = (
            tb.emu.summary["emulator"]["realtime"] if tb.emu and tb.emu.summary else None
        )
    wall = time.monotonic() - t_start
    figs = []
    for loss, name in ((0.0, "cwnd_lossless.png"), (0.01, "cwnd_lossy.png")):
        panels = []
        for cc in CCS:
            c = next(c for c in cases if c.rtt_ms == 100.0 and c.loss == loss and c.cc == cc)
            panels.append((c.label, *runs[c.label]))
        t_max = cases[0].duration_s
        plot_cwnd(
            out / name, f"cwnd, 10 Mbit/s, RTT 100 ms, queue 100, loss {loss:g}", panels, t_max
        )
        figs.append(name)
    c = next(c for c in cases if c.rtt_ms == 100.0 and c.loss == 0.0 and c.cc == "reno")
    c2 = next(c for c in cases if c.rtt_ms == 100.0 and c.loss == 0.0 and c.cc == "cubic")
    plot_cwnd(
        out / "cwnd_slowstart.png",
        "initial slow start, 10 Mbit/s, RTT 100 ms, queue 100, no random loss",
        [(x.label, *runs[x.label]) for x in (c, c2)],
        3.0,
    )
    figs.append("cwnd_slowstart.png")
    return {
        "quick": quick,
        "stack": stack,
        "reps": reps,
        "seeds": seeds,
        "rows": rows,
        "lateness_us": lateness_over_runs(lateness),
        "env": env,
        "wall_s": wall,
        "figures": figs,
        "kernel": platform.release(),
        "python": platform.python_version(),
    }


def write_report(res: dict[str, Any], out: Path, command: str) -> None:
    rows = res["rows"]
    lat = res["lateness_us"]
    s = res["env"]["sysctls_sender"]
    r = res["env"]["sysctls_receiver"]
    lines = [
        "# tcplab vs real Linux TCP",
        "",
        f"Command: `{command}` ({res['wall_s'] / 60:.1f} min wall). Kernel {res['kernel']}, "
        f"Python {res['python']}. Linux: {res['reps']} run(s) per case; tcplab "
        f"(`--stack {res.get('stack', 'matched')}`): seeds "
        f"{res['seeds'][0]} to {res['seeds'][-1]}. Link: 10 Mbit/s each way, DropTail 100 packets "
        "(not counting the one in transmission), loss on the data direction only. Goodput is "
        f"measured from {rows and _warm(res)} s to the end of the run; ± is the 95 % CI "
        "(Student t; none with one run). Retransmissions are segments per run (whole run).",
        "",
        "| case | Linux goodput (Mbit/s) | tcplab goodput (Mbit/s) | tcplab / Linux "
        "| retrans Linux | retrans tcplab | slow-start peak cwnd Linux / tcplab (segments) "
        "| at (s) Linux / tcplab |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        lines.append(
            f"| {row['case']} | {_fmt(*row['linux_goodput'], digits=3)} | "
            f"{_fmt(*row['tcplab_goodput'], digits=3)} | {row['ratio']:.3f} | "
            f"{row['linux_retrans']:.0f} | {row['tcplab_retrans']:.0f} | "
            f"{row['linux_ss_peak']:.0f} / {row['tcplab_ss_peak']:.0f} | "
            f"{row['linux_ss_exit_s']:.2f} / {row['tcplab_ss_exit_s']:.2f} |"
        )
    lines += [
        "",
        "Per case, after the warm-up: mean cwnd (segments), median smoothed RTT and median RTO "
        "(ms), RTOs per run, and the time Linux's sender was limited by the receive window "
        "(`tcpi_rwnd_limited`, s per run).",
        "",
        "| case | cwnd Linux / tcplab | SRTT Linux / tcplab | RTO Linux / tcplab "
        "| RTOs Linux / tcplab | Linux rwnd-limited |",
        "|---|---|---|---|---|---|",
    ]
    for row in rows:
        lines.append(
            f"| {row['case']} | {row['linux_cwnd_mean']:.1f} / {row['tcplab_cwnd_mean']:.1f} | "
            f"{row['linux_srtt_ms']:.1f} / {row['tcplab_srtt_ms']:.1f} | "
            f"{row['linux_rto_ms']:.0f} / {row['tcplab_rto_ms']:.0f} | "
            f"{row['linux_timeouts']:.1f} / {row['tcplab_timeouts']:.1f} | "
            f"{row['linux_rwnd_limited_s']:.2f} |"
        )
    lines += [
        "",
        "## Emulator timing error",
        "",
        "Release lateness of each packet written to a TUN device relative to the time the link "
        f"model gave it (all runs, {lat['n']} packets, emulator under SCHED_FIFO: "
        f"{res['env'].get('realtime')}): mean {lat['mean']:.1f} µs, p50 {lat['p50']:.0f} µs "
        f"(median run), p99 {lat['p99_median']:.0f} µs (median run) / {lat['p99_max']:.0f} µs "
        f"(worst run), p99.9 {lat['p999_max']:.0f} µs (worst run), max {lat['max']:.0f} µs; "
        f"{lat['over_1ms_%']:.3f} % of packets more than 1 ms late. Serialisation runs on the "
        "model's clock, so lateness delays individual packets but does not change the rate.",
        "",
        "## Linux settings (sender / receiver namespace)",
        "",
        "| sysctl | sender | receiver |",
        "|---|---|---|",
    ]
    for k in KEY_SYSCTLS:
        lines.append(f"| net.ipv4.{k} | {s.get(k, 'n/a')} | {r.get(k, 'n/a')} |")
    lines += [
        "",
        f"TUN device: `{res['env']['link_sender']['qdisc']}`. The namespaces' default congestion "
        "control does not matter: the sender sets reno or cubic on its socket (and reports "
        "what it got). tcp_cubic module parameters (global): "
        + (", ".join(f"{k}={v}" for k, v in res["env"].get("cubic_module", {}).items()) or "n/a")
        + ".",
        "",
        "Figures: " + ", ".join(f"[{f}]({f})" for f in res["figures"]) + ".",
        "",
    ]
    (out / "report.md").write_text("\n".join(lines))


def _mean_after(run: Run, case: Case) -> float:
    """Mean cwnd (segments) sampled after the warm-up."""
    return float(run.cwnd[run.t_s >= case.warmup_s].mean())


def _warm(res: dict[str, Any]) -> float:
    return 2.0 if res["quick"] else 3.0


def run_cases(
    cases: list[Case],
    reps: int,
    seeds: list[int],
    stack: str,
    out: Path | None,
    as_json: bool,
    cache: Path | None = None,
) -> list[dict[str, Any]]:
    """The given cases: a JSON line per case (``as_json``) or a few lines of text, and with
    ``out`` results.json, report.md (the validation targets per case) and one cwnd figure per
    case. ``cache``: see :func:`measure`."""
    results = []
    rows = []
    cached = cache is not None and all(
        _cache_path(cache, c, 1000 + r).exists() for c in cases for r in range(reps)
    )
    with contextlib.nullcontext(None) if cached else Testbed() as tb:
        for case in cases:
            row, linux, sim, late = measure(tb, case, reps, seeds, stack, cache)
            rows.append(row)
            obj = case_json(case, row, stack)
            obj["targets"] = row["targets"]
            if "aqm_targets" in row:
                obj["aqm_targets"] = row["aqm_targets"]
            obj["emulator_lateness_us"] = late
            results.append(obj)
            if as_json:
                print(json.dumps(obj), flush=True)
            else:
                print(
                    f"{case.label} rate={case.rate_bps / 1e6:g}Mbit/s queue={case.queue} "
                    f"stack={stack}: goodput Mbit/s linux {_fmt(*row['linux_goodput'], digits=3)} "
                    f"tcplab {_fmt(*row['tcplab_goodput'], digits=3)} (ratio {row['ratio']:.3f}); "
                    f"retrans {row['linux_retrans']:.0f}/{row['tcplab_retrans']:.0f}; "
                    f"RTOs {row['linux_timeouts']:.1f}/{row['tcplab_timeouts']:.1f}; "
                    f"slow-start peak {row['linux_ss_peak']:.0f}/{row['tcplab_ss_peak']:.0f}; "
                    f"mean cwnd {row['linux_cwnd_mean']:.1f}/{row['tcplab_cwnd_mean']:.1f}, "
                    f"SRTT ms {row['linux_srtt_ms']:.1f}/{row['tcplab_srtt_ms']:.1f}, "
                    f"RTO ms {row['linux_rto_ms']:.0f}/{row['tcplab_rto_ms']:.0f} (linux/tcplab)"
                    + (
                        f"; sojourn p50 ms {row['linux_qdelay_p50_ms']:.2f}/"
                        f"{row['tcplab_qdelay_p50_ms']:.2f}, p99 {row['linux_qdelay_p99_ms']:.2f}/"
                        f"{row['tcplab_qdelay_p99_ms']:.2f}; drops {row['linux_drops']:.1f}/"
                        f"{row['tcplab_drops']:.1f}; marks {row['linux_marks']:.1f}/"
                        f"{row['tcplab_marks']:.1f}"
                        if "aqm" in row
                        else ""
                    ),
                    flush=True,
                )
            if out is not None:
                name = "cwnd_" + "".join(ch if ch.isalnum() else "_" for ch in case.label) + ".png"
                plot_cwnd(
                    out / name, f"cwnd, {case.label}", [(case.label, linux, sim)], case.duration_s
                )
    if out is not None:
        (out / "results.json").write_text(json.dumps(results, indent=1, default=float))
        lat = lateness_over_runs([x for r in results for x in r["emulator_lateness_us"]])
        (out / "report.md").write_text(
            "# tcplab vs real Linux TCP: the validation targets\n\n"
            + targets_report(rows, stack)
            + aqm_report(rows)
            + f"\nEmulator release lateness over {lat['n']} packets: p50 {lat['p50']:.0f} µs, "
            f"p99 {lat['p99_median']:.0f} µs (median run) / {lat['p99_max']:.0f} µs (worst), "
            f"{lat['over_1ms_%']:.3f} % of packets more than 1 ms late.\n"
        )
    return results


#: The stacks a random draw compares with Linux unless ``--stack`` names one.
RANDOM_STACKS = ("linux", "matched")


def run_random(
    space: Space,
    n: int,
    seed: int,
    quick: bool,
    reps: int,
    seeds: list[int],
    stacks: tuple[str, ...],
    out: Path,
    as_json: bool,
    cache: Path | None = None,
) -> dict[str, Any]:
    """``n`` cases drawn from ``space`` with ``seed``, each run ``reps`` times on Linux and
    compared with tcplab under every stack in ``stacks``; writes ``out/results.json``,
    ``out/report.md`` and ``out/errors.png`` and returns the results."""
    duration, warmup = (10.0, 2.0) if quick else (20.0, 3.0)
    drawn = draw_cases(space, n, seed, duration, warmup)
    cases_out: list[dict[str, Any]] = []
    cached = cache is not None and all(
        _cache_path(cache, c, 1000 + r).exists() for c, _ in drawn for r in range(reps)
    )
    t_start = time.monotonic()
    load_start = os.getloadavg()
    with contextlib.nullcontext(None) if cached else Testbed() as tb:
        for case, info in drawn:
            linux, late = linux_runs(tb, case, reps, cache)
            obj: dict[str, Any] = {
                "case": {
                    "spec": case_spec(case),
                    **case_fields(case),
                    "queue_bdp": info["queue_bdp"],
                    "index": info["index"],
                },
                "tcplab": {},
                "emulator_lateness_us": late,
            }
            for stack in stacks:
                row, _ = compare_runs(case, linux, seeds, stack)
                side = case_json(case, row, stack)
                obj["linux"] = side["linux"]
                obj["tcplab"][stack] = {**side["tcplab"], "errors": case_errors(row)}
            cases_out.append(obj)
            if as_json:
                print(json.dumps(obj, default=float), flush=True)
            else:
                errs = ", ".join(
                    f"{st} goodput {obj['tcplab'][st]['errors']['goodput_err']:+.1%} "
                    f"retrans {obj['tcplab'][st]['retransmitted_segments']:.0f}"
                    for st in stacks
                )
                print(
                    f"[{info['index'] + 1}/{n}] {case_spec(case)}: linux "
                    f"{obj['linux']['goodput_bps'] / 1e6:.3f} Mbit/s retrans "
                    f"{obj['linux']['retransmitted_segments']:.0f}; {errs}",
                    flush=True,
                )
    res = {
        "seed": seed,
        "n": n,
        "quick": quick,
        "reps": reps,
        "tcplab_seeds": seeds,
        "space": space.describe(),
        "space_bounds": dataclasses.asdict(space),
        "stacks": list(stacks),
        "cases": cases_out,
        "summary": {st: summarise([c["tcplab"][st]["errors"] for c in cases_out]) for st in stacks},
        "wall_s": time.monotonic() - t_start,
        "loadavg_start_end": [load_start, os.getloadavg()],
        "kernel": platform.release(),
    }
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(res, indent=1, default=float))
    plot_random_errors(out / "errors.png", res)
    (out / "report.md").write_text(random_report(res))
    return res


def goodput_cis_overlap(case: dict[str, Any], stack: str) -> bool | None:
    """Whether the 95 % CIs of Linux's and tcplab's mean goodput (over their runs) overlap in a
    random draw's case: a reading aid for the report (how well the runs resolve the case), not
    a target. None when a side has no CI (a single run)."""
    lx, t = case["linux"], case["tcplab"][stack]
    if lx["goodput_ci95_bps"] is None or t["goodput_ci95_bps"] is None:
        return None
    gap = abs(lx["goodput_bps"] - t["goodput_bps"])
    return bool(gap <= lx["goodput_ci95_bps"] + t["goodput_ci95_bps"])


def _with_ci(mean_bps: float, ci_bps: float | None) -> str:
    """A goodput in Mbit/s with its 95 % CI when there is one."""
    return f"{mean_bps / 1e6:.3f}" + ("" if ci_bps is None else f" ± {ci_bps / 1e6:.3f}")


def _pct(x: float) -> str:
    return "n/a" if math.isnan(x) else f"{100 * x:.1f} %"


def random_report(res: dict[str, Any]) -> str:
    """The report of a random draw: the error distribution per stack, the targets and every
    case outside them."""
    n = res["n"]
    lines = [
        "# tcplab vs real Linux TCP: a random draw",
        "",
        f"{n} cases drawn with seed {res['seed']} from: {res['space']}. Linux: {res['reps']} "
        f"run(s) per case; tcplab: seeds {', '.join(map(str, res['tcplab_seeds']))} per stack "
        f"({res['wall_s'] / 60:.1f} min wall, kernel {res['kernel']}, load average "
        f"{res['loadavg_start_end'][0][0]:.1f} at the start and "
        f"{res['loadavg_start_end'][1][0]:.1f} at the end; the Linux endpoints run under "
        "SCHED_FIFO, see the testbed).",
        "",
        "Errors are tcplab's mean against Linux's mean per case: goodput (tcplab / Linux - 1), "
        "retransmitted segments ((tcplab - Linux) / Linux, cases where Linux retransmitted), "
        "RTOs per run (tcplab - Linux). The distribution is over the absolute errors.",
        "",
        "| stack | goodput error median / p90 / max | retrans error median / p90 / max "
        "| RTO difference median / p90 / max | goodput ≤ 10 % | goodput ≤ 20 % "
        "| retrans ≤ 30 % | RTOs where Linux has none |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for st, sm in res["summary"].items():
        g, r, o = sm["goodput_err"], sm["retrans_err"], sm["rto_diff"]
        lines.append(
            f"| {st} | {_pct(g['median'])} / {_pct(g['p90'])} / {_pct(g['max'])} "
            f"| {_pct(r['median'])} / {_pct(r['p90'])} / {_pct(r['max'])} "
            f"| {o['median']:.2f} / {o['p90']:.2f} / {o['max']:.2f} "
            f"| {sm['goodput_within_10']}/{n} | {sm['goodput_within_20']}/{n} "
            f"| {sm['retrans_within_30']}/{n} | {sm['rtos_where_linux_none']} |"
        )
    lines += [
        "",
        "Targets: goodput within 10 % on at least 90 % of the cases and within 20 % on all; no "
        "case with more than 0.5 tcplab RTOs per run where Linux took none; retransmissions "
        "within 30 % on at least 80 % of the cases.",
        "",
    ]
    for st, sm in res["summary"].items():
        met = ", ".join(f"{k} {'met' if v else 'missed'}" for k, v in sm["met"].items())
        beyond = [c for c in res["cases"] if not c["tcplab"][st]["errors"]["goodput_10"]]
        known = [o for c in beyond if (o := goodput_cis_overlap(c, st)) is not None]
        tail = (
            f" In {sum(known)} of the {len(known)} case(s) beyond 10 % goodput the 95 % CIs "
            "(over the runs) overlap: the runs do not separate the two means."
            if known
            else ""
        )
        lines.append(f"- `--stack {st}`: {met}.{tail}")
    lines += ["", "## Cases outside a target", ""]
    for st in res["stacks"]:
        bad = [
            c
            for c in res["cases"]
            if not (
                (e := c["tcplab"][st]["errors"])["goodput_10"]
                and e["retrans_30"]
                and not e["spurious_rtos"]
            )
        ]
        lines += [f"### `--stack {st}`: {len(bad)} of {n}", ""]
        if not bad:
            continue
        lines += [
            "| # | case (`--case`) | queue (BDP) | goodput Linux / tcplab (Mbit/s, ± 95 % CI) "
            "| error | CIs overlap | retrans Linux / tcplab | RTOs Linux / tcplab |",
            "|---|---|---|---|---|---|---|---|",
        ]
        overlap = {True: "yes", False: "no", None: "n/a (one run)"}
        for c in bad:
            t, lx, e = c["tcplab"][st], c["linux"], c["tcplab"][st]["errors"]
            lines.append(
                f"| {c['case']['index']} | `{c['case']['spec']}` | {c['case']['queue_bdp']:.2f} "
                f"| {_with_ci(lx['goodput_bps'], lx['goodput_ci95_bps'])} / "
                f"{_with_ci(t['goodput_bps'], t['goodput_ci95_bps'])} "
                f"| {e['goodput_err']:+.1%} | {overlap[goodput_cis_overlap(c, st)]} "
                f"| {lx['retransmitted_segments']:.1f} / {t['retransmitted_segments']:.1f} "
                f"| {lx['rtos']:.1f} / {t['rtos']:.1f} |"
            )
        lines.append("")
    lines += ["Figure: [errors.png](errors.png) (error against each drawn parameter).", ""]
    return "\n".join(lines)


def plot_random_errors(path: Path, res: dict[str, Any]) -> None:
    """Goodput and retransmission errors against each drawn parameter, one colour per stack."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cases = res["cases"]
    b = res["space_bounds"]
    loss_floor = b["loss"][0] / 3  # where lossless cases are drawn on the log loss axis
    qmax = max([b["queue_bdp"][1], *(c["case"]["queue_bdp"] for c in cases)])
    params = (
        (
            "rate (Mbit/s)",
            [c["case"]["rate_bps"] / 1e6 for c in cases],
            (b["rate_bps"][0] / 1e6, b["rate_bps"][1] / 1e6),
        ),
        ("RTT (ms)", [c["case"]["rtt_ms"] for c in cases], tuple(b["rtt_ms"])),
        (
            "random loss (none: at the left edge)",
            [c["case"]["loss"] or loss_floor for c in cases],
            (loss_floor, b["loss"][1]),
        ),
        ("queue (BDP)", [c["case"]["queue_bdp"] for c in cases], (b["queue_bdp"][0], qmax)),
    )
    metrics = (
        ("goodput error (%)", "goodput_err", (10, 20)),
        ("retransmission error (%)", "retrans_err", (30,)),
    )
    colours = {"linux": "tab:blue", "matched": "tab:orange", "default": "tab:green"}
    markers = {"reno": "o", "cubic": "s"}
    fig, axes = plt.subplots(len(metrics), len(params), figsize=(15, 7), squeeze=False)
    for i, (ylabel, key, bands) in enumerate(metrics):
        for j, (xlabel, xs, (lo, hi)) in enumerate(params):
            ax = axes[i, j]
            for band in sorted(bands, reverse=True):
                ax.axhspan(-band, band, color="0.85" if band == bands[0] else "0.93", zorder=0)
            for st in res["stacks"]:
                for cc, m in markers.items():
                    pts = [
                        (x, 100 * c["tcplab"][st]["errors"][key])
                        for x, c in zip(xs, cases, strict=True)
                        if c["case"]["cc"] == cc and math.isfinite(c["tcplab"][st]["errors"][key])
                    ]
                    if pts:
                        ax.scatter(
                            *zip(*pts, strict=True),
                            marker=m,
                            s=22,
                            facecolors="none" if st != res["stacks"][0] else colours[st],
                            edgecolors=colours.get(st, "k"),
                            label=f"{st}, {cc}",
                        )
            ax.set_xscale("log")
            ax.set_xlim(lo / 1.15, hi * 1.15)
            ax.axhline(0, color="k", lw=0.6)
            ax.set_xlabel(xlabel)
            if j == 0:
                ax.set_ylabel(ylabel)
            ax.grid(alpha=0.3)
    axes[0, 0].legend(fontsize=7, loc="best")
    fig.suptitle(
        f"tcplab against Linux, {res['n']} random cases (seed {res['seed']}); grey bands: "
        "the targets (goodput ±10 % / ±20 %, retransmissions ±30 %)",
        fontsize=11,
    )
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main(argv: list[str] | None = None, prog: str = "tcplab validate linux") -> int:
    ap = argparse.ArgumentParser(
        prog=prog, description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    add_arguments(ap)
    return validate(ap.parse_args(argv))


def validate(a: argparse.Namespace) -> int:
    """Run ``tcplab validate linux`` with parsed arguments; returns the exit status."""
    cases = [parse_case(spec, a.quick) for spec in a.case]
    if a.runs is not None and a.runs < 1:
        raise ScenarioError(f"--runs: must be >= 1 (got {a.runs})")
    if a.random is not None:
        if a.random < 1:
            raise ScenarioError(f"--random: must be >= 1 (got {a.random})")
        if cases or a.extra:
            raise ScenarioError("--random: draws its own cases; drop --case and --extra")
    elif a.space is not None:
        raise ScenarioError("--space: only with --random")
    space = load_space(a.space) if a.space is not None else Space()
    why = available()
    if why is not None:
        print(f"tcplab: error: validate linux: {why}", file=sys.stderr)
        return 1
    reps = a.runs or (1 if a.quick else 5)
    # Paired runs (common random numbers): tcplab's seed k is the seed of the emulator's
    # k-th Linux run, so both see the same per-packet loss draws (the emulator runs the
    # simulator's link component with that scenario seed). With 1 % loss, whether a loss
    # ends the initial slow start before the queue overflows decides a run's
    # retransmissions (50 vs 200 at RTT 40 ms), and the pairing gives both stacks the
    # same draw. --independent-seeds: tcplab seeds 1..10 (5 with --quick) instead.
    if a.independent_seeds:
        seeds = list(range(1, (5 if a.quick else 10) + 1))
    else:
        seeds = [1000 + r for r in range(reps)]
    if a.linux_cache is not None:
        a.linux_cache.mkdir(parents=True, exist_ok=True)
    if a.random is not None:
        stacks = (a.stack,) if a.stack is not None else RANDOM_STACKS
        out = a.out or Path("out/validation-linux-random")
        run_random(
            space, a.random, a.seed, a.quick, reps, seeds, stacks, out, a.json, a.linux_cache
        )
        print(f"wrote {out / 'report.md'}", file=sys.stderr if a.json else sys.stdout)
        return 0
    stack = a.stack or "linux"
    if a.extra:
        cases = (cases or matrix(a.quick)[0]) + extra_cases(a.quick)
    if cases or a.json or a.stack is not None or a.runs is not None or a.linux_cache:
        if not cases:
            cases = matrix(a.quick)[0]
        if a.out is not None:
            a.out.mkdir(parents=True, exist_ok=True)
        run_cases(cases, reps, seeds, stack, a.out, a.json, a.linux_cache)
        return 0
    out = a.out or Path("out/validation-linux")
    out.mkdir(parents=True, exist_ok=True)
    res = run_matrix(a.quick, out, stack)
    command = "tcplab validate linux" + (" --quick" if a.quick else "")
    (out / "results.json").write_text(json.dumps(res, indent=1, default=float))
    write_report(res, out, command)
    print(f"wrote {out / 'report.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
