"""Validate tcplab against real Linux TCP: run the matrix on both stacks and write a report.

    python validation/linux/run.py [--quick] [--extra] [--reps N] [--out DIR]

Needs root (network namespaces, TUN devices) and the built simulator (``tcplab._core``). Writes
``DIR/report.md``, ``DIR/results.json`` and the cwnd figures (default DIR:
``out/validation-linux``). The full matrix takes about 21 minutes of wall time (Linux runs in
real time), ``--quick`` about 2.5 minutes.
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from compare import (  # noqa: E402
    STACKS,
    Case,
    Run,
    cwnd_dynamics,
    linux_run,
    linux_transfer,
    slow_start_exit,
    tcplab_runs,
)
from netlab import KEY_SYSCTLS, Testbed, available  # noqa: E402
from tcplab.stats import mean_ci95  # noqa: E402

RTTS_MS = (40.0, 100.0)
LOSSES = (0.0, 0.001, 0.01)
CCS = ("reno", "cubic")


#: Cases beyond the base matrix (issue 13): rates 2 and 50 Mbit/s, RTT 10 and 250 ms, and a
#: queue of a quarter of the bandwidth-delay product; (cc, rate Mbit/s, RTT ms, loss, queue).
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


def matrix(quick: bool, extra: bool = False, base: bool = True) -> tuple[list[Case], int, int]:
    """The cases, Linux repetitions and tcplab seeds. ``extra`` adds :data:`EXTRA` (a queue
    of None there is a quarter of the BDP)."""
    duration, warmup = (10.0, 2.0) if quick else (20.0, 3.0)
    cases = [
        Case(rtt_ms=rtt, loss=loss, cc=cc, duration_s=duration, warmup_s=warmup)
        for rtt in RTTS_MS
        for loss in LOSSES
        for cc in CCS
        if base
    ]
    for cc, rate, rtt, loss, queue in EXTRA if extra else ():
        c = Case(rtt_ms=rtt, loss=loss, cc=cc, rate_bps=int(rate * 1e6))
        q = queue if queue is not None else max(2, round(c.bdp_packets / 4))
        cases.append(
            Case(
                rtt_ms=rtt,
                loss=loss,
                cc=cc,
                rate_bps=int(rate * 1e6),
                queue=q,
                duration_s=duration,
                warmup_s=warmup,
            )
        )
    return cases, (1 if quick else 5), (5 if quick else 10)


def cubic_parameters() -> dict[str, str]:
    """tcp_cubic's module parameters (global, not per namespace), e.g. HyStart's switches."""
    d = Path("/sys/module/tcp_cubic/parameters")
    return {f.name: f.read_text().strip() for f in sorted(d.iterdir())} if d.is_dir() else {}


def quantiles_us(lateness_ns: list[int]) -> dict[str, float]:
    a = np.asarray(lateness_ns, dtype=float) / 1e3
    qs = {"p50": 50, "p90": 90, "p99": 99, "p99.9": 99.9}
    out = {k: float(np.percentile(a, q)) for k, q in qs.items()}
    out["max"] = float(a.max())
    out["mean"] = float(a.mean())
    out["n"] = len(a)
    out["over_1ms_%"] = float(100 * np.mean(a > 1000))
    return out


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
        for i, r in enumerate(sim[:3]):
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


def summarise(linux: list[Run], sim: list[Run], case: Case) -> dict[str, Any]:
    """One comparison row: Linux's runs against one tcplab side's."""
    lss = [slow_start_exit(r) for r in linux]
    row = {
        "case": case.label,
        "cc": case.cc,
        "rtt_ms": case.rtt_ms,
        "loss": case.loss,
        "rate_bps": case.rate_bps,
        "queue": case.queue,
        "linux_goodput": mean_ci95([r.goodput_bps for r in linux]),
        "linux_retrans": float(np.mean([r.retrans for r in linux])),
        "linux_ss_peak": float(np.nanmean([p for _, p in lss])),
        "linux_ss_exit_s": float(np.nanmean([t for t, _ in lss])),
        "linux_timeouts": float(np.mean([r.extra["timeouts"] for r in linux])),
        "linux_rto_ms": float(np.nanmean([r.extra["rto_ms_median"] for r in linux])),
        "linux_srtt_ms": float(np.nanmean([r.extra["srtt_ms_median"] for r in linux])),
        "linux_rwnd_limited_s": float(np.mean([r.extra["rwnd_limited_us"] for r in linux]) / 1e6),
        "linux_cwnd_mean": float(np.mean([_mean_after(r, case) for r in linux])),
        "linux_extra": [r.extra for r in linux],
        "linux_goodputs": [r.goodput_bps for r in linux],
    }
    row.update(tcplab_fields(sim, case))
    row["ratio"] = row["tcplab_goodput"][0] / row["linux_goodput"][0]
    return row


def tcplab_fields(sim: list[Run], case: Case) -> dict[str, Any]:
    """The tcplab half of a row."""
    sss = [slow_start_exit(r) for r in sim]
    return {
        "tcplab_goodput": mean_ci95([r.goodput_bps for r in sim]),
        "tcplab_retrans": float(np.mean([r.retrans for r in sim])),
        "tcplab_ss_peak": float(np.nanmean([p for _, p in sss])),
        "tcplab_ss_exit_s": float(np.nanmean([t for t, _ in sss])),
        "tcplab_timeouts": float(np.mean([r.extra["timeouts"] for r in sim])),
        "tcplab_rto_ms": float(np.nanmean([r.extra["rto_ms_median"] for r in sim])),
        "tcplab_srtt_ms": float(np.nanmean([r.extra["srtt_ms_median"] for r in sim])),
        "tcplab_cwnd_mean": float(np.mean([_mean_after(r, case) for r in sim])),
        "tcplab_extra": [r.extra for r in sim],
        "tcplab_goodputs": [r.goodput_bps for r in sim],
    }


def rescore(res: dict[str, Any], stacks: tuple[str, ...] = STACKS) -> dict[str, Any]:
    """Run the tcplab side (``stacks``) of a saved matrix (``results.json``) again with the
    tcplab installed now, against the same Linux runs (the Linux numbers are kept as measured)."""
    duration, warmup = (10.0, 2.0) if res["quick"] else (20.0, 3.0)
    for row in res["rows"]:
        case = Case(
            rtt_ms=row["rtt_ms"],
            loss=row["loss"],
            cc=row["cc"],
            rate_bps=row.get("rate_bps", 10_000_000),
            queue=row.get("queue", 100),
            duration_s=duration,
            warmup_s=warmup,
        )
        for stack in stacks:
            r = row["stacks"][stack]
            r.update(tcplab_fields(tcplab_runs(case, res["seeds"], stack=stack), case))
            r["ratio"] = r["tcplab_goodput"][0] / r["linux_goodput"][0]
            r["targets"] = targets(r)
        row.update({k: v for k, v in row["stacks"]["matched"].items() if k.startswith("tcplab")})
        row["ratio"] = row["stacks"]["matched"]["ratio"]
    res["rescored"] = True
    return res


def targets(row: dict[str, Any]) -> dict[str, bool | None]:
    """Issue 13's targets for one row (None: not applicable): goodput within ±5 % of Linux's
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


def run_matrix(
    quick: bool, out: Path, extra: bool = False, base: bool = True, reps: int | None = None
) -> dict[str, Any]:
    cases, default_reps, nseeds = matrix(quick, extra, base)
    reps = default_reps if reps is None else reps
    seeds = list(range(1, nseeds + 1))
    rows: list[dict[str, Any]] = []
    runs: dict[str, tuple[list[Run], list[Run]]] = {}
    runs_linux_stack: dict[str, tuple[list[Run], list[Run]]] = {}
    loads: list[float] = []
    lateness: list[int] = []
    env: dict[str, Any] = {}
    t_start = time.monotonic()
    with Testbed() as tb:
        env["sysctls_sender"] = tb.sysctls(tb.snd)
        env["sysctls_receiver"] = tb.sysctls(tb.rcv)
        env["link_sender"] = tb.link_info(tb.snd)
        env["cubic_module"] = cubic_parameters()
        for case in cases:
            linux: list[Run] = []
            for rep in range(reps):
                loads.append(_load())
                tr = linux_transfer(tb, case, seed=1000 + rep)
                lateness.extend(tr.forward.lateness_ns)
                env["realtime"] = tr.forward.realtime
                linux.append(linux_run(tr, case))
            sims = {stack: tcplab_runs(case, seeds, stack=stack) for stack in STACKS}
            runs[case.label] = (linux, sims["matched"])
            runs_linux_stack[case.label] = (linux, sims["linux"])
            row = summarise(linux, sims["matched"], case)
            row["stacks"] = {stack: summarise(linux, sims[stack], case) for stack in STACKS}
            for stack in STACKS:
                row["stacks"][stack]["targets"] = targets(row["stacks"][stack])
            rows.append(row)
            ls = row["stacks"]["linux"]
            print(
                f"{case.label:40s} linux {_fmt(*row['linux_goodput'])} "
                f"tcplab {_fmt(*row['tcplab_goodput'])} "
                f"linux-stack {_fmt(*ls['tcplab_goodput'])} Mbit/s "
                f"retrans {row['linux_retrans']:.0f}/{row['tcplab_retrans']:.0f}/"
                f"{ls['tcplab_retrans']:.0f} "
                f"RTOs {row['linux_timeouts']:.1f}/{ls['tcplab_timeouts']:.1f} "
                f"ss {row['linux_ss_peak']:.0f}@{row['linux_ss_exit_s']:.2f}/"
                f"{ls['tcplab_ss_peak']:.0f}@{ls['tcplab_ss_exit_s']:.2f} "
                f"uptime {_load()}",
                flush=True,
            )
    wall = time.monotonic() - t_start
    figs = []
    if base:
        figs = _figures(cases, runs, runs_linux_stack, out)
    return {
        "quick": quick,
        "reps": reps,
        "seeds": seeds,
        "rows": rows,
        "lateness_us": quantiles_us(lateness),
        "env": env,
        "wall_s": wall,
        "figures": figs,
        "kernel": platform.release(),
        "python": platform.python_version(),
        "load_1min": {"mean": float(np.mean(loads)), "max": float(np.max(loads))},
    }


def _load() -> float:
    """The 1-minute load average (the machine is shared; real-time runs suffer from load)."""
    return float(Path("/proc/loadavg").read_text().split()[0])


def _figures(
    cases: list[Case],
    runs: dict[str, tuple[list[Run], list[Run]]],
    runs_linux_stack: dict[str, tuple[list[Run], list[Run]]],
    out: Path,
) -> list[str]:
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
    plot_cwnd(
        out / "cwnd_slowstart_linux_stack.png",
        'initial slow start, tcplab stack = "linux" (dashed), RTT 100 ms, no random loss',
        [(x.label, *runs_linux_stack[x.label]) for x in (c, c2)],
        3.0,
    )
    figs.append("cwnd_slowstart_linux_stack.png")
    return figs


def write_report(res: dict[str, Any], out: Path, command: str) -> None:
    rows = res["rows"]
    lat = res["lateness_us"]
    s = res["env"]["sysctls_sender"]
    r = res["env"]["sysctls_receiver"]
    lines = [
        "# tcplab vs real Linux TCP",
        "",
        f"Command: `{command}` ({res['wall_s'] / 60:.1f} min wall"
        + ("; tcplab's side re-run afterwards" if res.get("rescored") else "")
        + f"). Kernel {res['kernel']}, "
        f"Python {res['python']}. Linux: {res['reps']} run(s) per case; tcplab: seeds "
        f"{res['seeds'][0]} to {res['seeds'][-1]}. Link: 10 Mbit/s each way, DropTail 100 packets "
        "unless the case says otherwise "
        "(not counting the one in transmission), loss on the data direction only. Goodput is "
        f"measured from {rows and _warm(res)} s to the end of the run; ± is the 95 % CI "
        "(Student t; none with one run). Retransmissions are segments per run (whole run). "
        f"1-minute load average while Linux ran: mean {res['load_1min']['mean']:.1f}, "
        f"max {res['load_1min']['max']:.1f} (2 cores, shared).",
        "",
        "## tcplab with the matched settings",
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
    lines += _linux_stack_section(rows)
    lines += [
        "",
        "## Forwarder timing error",
        "",
        "Lateness of each packet written to a TUN device relative to its intended release time "
        f"(all runs, {lat['n']} packets, loop under SCHED_FIFO: {res['env'].get('realtime')}): "
        f"mean {lat['mean']:.0f} µs, p50 {lat['p50']:.0f} µs, p90 {lat['p90']:.0f} µs, "
        f"p99 {lat['p99']:.0f} µs, p99.9 {lat['p99.9']:.0f} µs, max {lat['max']:.0f} µs; "
        f"{lat['over_1ms_%']:.2f} % of packets more than 1 ms late. Serialisation runs on a "
        "virtual clock, so lateness delays individual packets but does not change the link rate.",
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


def _mark(ok: bool | None) -> str:
    return "n/a" if ok is None else ("✓" if ok else "✗")


def _linux_stack_section(rows: list[dict[str, Any]]) -> list[str]:
    """The same Linux runs against tcplab's ``stack = "linux"``, with issue 13's targets."""
    lines = [
        "",
        '## tcplab with `stack = "linux"`',
        "",
        'The same Linux runs against tcplab\'s flow `stack = "linux"` (only cc and MSS given). '
        "Targets: goodput within ±5 % of Linux's mean where Linux's CI half-width is under 5 % "
        "(else CIs overlapping), retransmissions within ±30 %, no RTO where Linux took none "
        "(n/a: Linux took some), CUBIC's slow-start peak within 15 % and exit within one RTT.",
        "",
        "| case | Linux goodput | tcplab goodput | ratio | retrans Linux / tcplab "
        "| RTOs Linux / tcplab | ss peak Linux / tcplab | ss exit (s) Linux / tcplab "
        "| goodput | retrans | RTOs | peak | exit |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        s = row["stacks"]["linux"]
        t = s["targets"]
        lines.append(
            f"| {s['case']} | {_fmt(*s['linux_goodput'], digits=3)} | "
            f"{_fmt(*s['tcplab_goodput'], digits=3)} | {s['ratio']:.3f} | "
            f"{s['linux_retrans']:.0f} / {s['tcplab_retrans']:.0f} | "
            f"{s['linux_timeouts']:.1f} / {s['tcplab_timeouts']:.1f} | "
            f"{s['linux_ss_peak']:.0f} / {s['tcplab_ss_peak']:.0f} | "
            f"{s['linux_ss_exit_s']:.2f} / {s['tcplab_ss_exit_s']:.2f} | "
            + " | ".join(_mark(t[k]) for k in ("goodput", "retrans", "rtos", "ss_peak", "ss_exit"))
            + " |"
        )
    met = {
        k: (
            sum(1 for r in rows if r["stacks"]["linux"]["targets"][k]),
            sum(1 for r in rows if r["stacks"]["linux"]["targets"][k] is not None),
        )
        for k in ("goodput", "retrans", "rtos", "ss_peak", "ss_exit")
    }
    lines += [
        "",
        "Targets met: " + ", ".join(f"{k} {a}/{n}" for k, (a, n) in met.items()) + ".",
    ]
    return lines


def _mean_after(run: Run, case: Case) -> float:
    """Mean cwnd (segments) sampled after the warm-up."""
    return float(run.cwnd[run.t_s >= case.warmup_s].mean())


def _warm(res: dict[str, Any]) -> float:
    return 2.0 if res["quick"] else 3.0


def diagnose(spec: str, duration: float, seeds: int, settings: dict[str, str]) -> None:
    """One case, ``CC,RTT_MS,LOSS``: one Linux run and ``seeds`` tcplab runs; prints goodput and
    cwnd dynamics (how fast cwnd rises and falls) side by side."""
    cc, rtt, loss = spec.split(",")
    case = Case(rtt_ms=float(rtt), loss=float(loss), cc=cc, duration_s=duration, warmup_s=3.0)
    with Testbed(settings=settings) as tb:
        tr = linux_transfer(tb, case)
    linux = linux_run(tr, case)
    sim = tcplab_runs(case, list(range(1, seeds + 1)))
    print(f"{case.label}, {duration:g} s, goodput after {case.warmup_s:g} s")
    print(
        f"linux : {linux.goodput_bps / 1e6:.3f} Mbit/s, {linux.retrans} retrans, "
        f"{linux.extra['timeouts']} RTOs, recovery {100 * linux.extra['recovery_fraction']:.1f} % "
        f"of samples, {cwnd_dynamics(linux, case)}"
    )
    for seed, r in enumerate(sim, 1):
        print(
            f"tcplab seed {seed}: {r.goodput_bps / 1e6:.3f} Mbit/s, {r.retrans} retrans, "
            f"{r.extra['timeouts']} RTOs, {r.extra['fast_retransmits']} fast retransmits, "
            f"{cwnd_dynamics(r, case)}"
        )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="one Linux run and 5 seeds per case, 10 s")
    ap.add_argument("--extra", action="store_true", help="add the extra cases (rates, RTTs, queue)")
    ap.add_argument("--no-base", action="store_true", help="only the extra cases")
    ap.add_argument("--reps", type=int, default=None, help="Linux runs per case (default 5)")
    ap.add_argument(
        "--rescore",
        nargs="?",
        const=",".join(STACKS),
        metavar="STACKS",
        help="re-run tcplab's side (default: matched,linux) against DIR/results.json's Linux "
        "runs (no root needed)",
    )
    ap.add_argument("--out", type=Path, default=Path("out/validation-linux"))
    ap.add_argument(
        "--case", metavar="CC,RTT_MS,LOSS", help="diagnose one case instead (e.g. reno,40,0.01)"
    )
    ap.add_argument("--duration", type=float, default=20.0, help="with --case: seconds")
    ap.add_argument("--seeds", type=int, default=3, help="with --case: tcplab seeds")
    ap.add_argument(
        "--sysctl",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="with --case: set a sysctl in both namespaces (repeatable)",
    )
    a = ap.parse_args(argv)
    if a.rescore:
        stacks = tuple(a.rescore.split(","))
        res = rescore(json.loads((a.out / "results.json").read_text()), stacks)
        (a.out / "results.json").write_text(json.dumps(res, indent=1, default=float))
        write_report(
            res, a.out, res.get("command", "python validation/linux/run.py") + " --rescore"
        )
        print(f"wrote {a.out / 'report.md'}")
        return 0
    why = available()
    if why is not None:
        print(f"validation/linux: cannot run: {why}", file=sys.stderr)
        return 1
    if a.case:
        settings = dict(item.split("=", 1) for item in a.sysctl)
        diagnose(a.case, a.duration, a.seeds, settings)
        return 0
    a.out.mkdir(parents=True, exist_ok=True)
    res = run_matrix(a.quick, a.out, extra=a.extra or a.no_base, base=not a.no_base, reps=a.reps)
    command = "python validation/linux/run.py" + " ".join(
        [""]
        + (["--quick"] if a.quick else [])
        + (["--extra"] if a.extra else [])
        + (["--no-base"] if a.no_base else [])
        + ([f"--reps {a.reps}"] if a.reps else [])
    )
    res["command"] = command
    (a.out / "results.json").write_text(json.dumps(res, indent=1, default=float))
    write_report(res, a.out, command)
    print(f"wrote {a.out / 'report.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
