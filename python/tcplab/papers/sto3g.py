"""Reproduction of Sekiguchi et al., "TCP retransmission with spurious-timeout detection for
3G" (IPSJ Journal 2008): RTO tuning (Fig. 2), the Section 5 model and emulator (Fig. 4/5), STO
per MB by environment (Fig. 6) and the train's 500 MB download, unnecessary retransmissions per
STO (Fig. 7) and throughput with one STO (Fig. 8) on every environment, Eifel detection's byte
overhead (§3.3) and F-RTO's misses (Table 4); plus F-RTO vs Eifel vs DSACK x responses.

Every run is an RLC radio bearer (``kind = "rlc"``, presets in :mod:`tcplab.scenario.radio`)
carrying W-TCP downloads (``profile = "w-tcp"``). The measures come from the event log: each timeout
row carries its ground truth (``spurious``) and the detector's verdict (``detected``).
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from tcplab.campaign.sweep import run_configs
from tcplab.report import plots
from tcplab.report.checks import (
    Above,
    AtLeast,
    AtMost,
    Below,
    Between,
    Factor,
    Highest,
    Info,
    Lowest,
    Order,
    Report,
    Within,
)
from tcplab.scenario.parse import Scenario, parse_scenario
from tcplab.stats import ratio_ci95

#: The paper's Fig. 2 workload: size mix of the cell-edge downloads (§4; the missing ~1% of
#: the printed mix is spread over the bins in proportion).
SIZE_MIX: list[list[Any]] = [
    ["1KB", "50KB", 66],
    ["50KB", "100KB", 22],
    ["100KB", "150KB", 7],
    ["150KB", "200KB", 2],
    ["500KB", "1MB", 2],
]
ENVIRONMENTS = ("weak", "strong", "pedestrian", "car", "train")
MOVING = ("pedestrian", "car", "train")
CONTENTS = {"6KB": 6_000, "18KB": 18_000, "300KB": 300_000, "2MB": 2_000_000}

# Paper values (read from the text; figure bars estimated where the text gives no number).
PAPER_FIG2 = {1.5: 0.10, 4.0: 0.01}
PAPER_FIG2_STRONG = 0.004
PAPER_FIG6_STD = {"train": 0.36, "weak": 0.18}
PAPER_FIG6_TUNED = {"train": 0.23, "weak": 0.01}
PAPER_FIG7 = {"2MB": (28.0, 3.0), "6KB": (1.6, None)}
PAPER_TABLE4 = {"finished": 0.28, "no_window": 0.007, "dupack": 0.003, "total": 0.29}


def mix(names: Sequence[str]) -> dict[str, Any]:
    """Equal shares of the given content sizes (each a narrow bin around the size)."""
    bins = []
    for k in names:
        b = CONTENTS.get(k) or {"300KB": 300_000, "2MB": 2_000_000}[k]
        bins.append([b, b + 1, 1])
    return {"kind": "empirical", "bins": bins}


def scenario(
    preset: str,
    rto: Any,
    sizes: Any,
    count: int,
    *,
    seed: int,
    detection: str = "none",
    response: str = "eifel",
    think: str = "2s",
    radio: dict[str, Any] | None = None,
    tcp: dict[str, Any] | None = None,
    duration: str | None = None,
    lan: bool = False,
) -> dict[str, Any]:
    """One normalized configuration: ``count`` downloads over an RLC bearer (``lan``: behind a
    10 Gbit/s zero-delay link whose counters give the IP bytes each direction carries)."""
    hops: list[dict[str, Any]] = [
        {"kind": "rlc", "name": "radio", "preset": preset, **(radio or {})}
    ]
    if lan:
        hops.insert(
            0, {"kind": "link", "name": "lan", "rate": "10Gbps", "delay": "0s", "queue": 100000}
        )
    data = {
        "name": f"sto3g-{preset}",
        "duration": duration or f"{max(600, count * 60)}s",
        "sample_interval": "0s",
        "path": hops,
        "flows": [
            {
                "name": "download",
                "profile": "w-tcp",
                "rto": rto,
                "app": "downloads",
                "sizes": sizes,
                "think": think,
                "downloads": count,
                "spurious_detection": detection,
                "spurious_response": response,
                **(tcp or {}),
            }
        ],
    }
    return _parsed(json.dumps(data, sort_keys=True)).to_config(seed=seed)


@functools.lru_cache(maxsize=256)
def _parsed(data: str) -> Scenario:
    """The scenario of a table (as JSON) without its seed: the runs of one setting differ only
    in their seed, so each setting is validated once and its config copied per seed."""
    return parse_scenario(json.loads(data))


def timeout_rows(res: dict[str, Any]) -> dict[str, np.ndarray]:
    """The timeout rows of a run's event log."""
    ev = res["events_table"]
    kinds = res["event_kinds"]
    sel = ev["kind"] == kinds.index("timeout")
    return {k: v[sel] for k, v in ev.items()}


def conns_with_sto(res: dict[str, Any]) -> tuple[int, int]:
    """(connections with ≥ 1 spurious timeout, connections)."""
    t = timeout_rows(res)
    hit = len(set(t["conn"][t["spurious"] == 1].tolist()))
    return hit, int(res["flows"][0]["connections"])


#: Tolerance for a paper number tcplab should match (calibration targets and predictions).
FACTOR = 2.0


def ci95(values: Sequence[float]) -> tuple[float, float]:
    """Mean and half-width of its 95% confidence interval (normal approximation)."""
    a = np.asarray(values, dtype=float)
    if len(a) == 0:
        return math.nan, math.nan
    if len(a) == 1:
        return float(a[0]), math.nan
    return float(a.mean()), float(1.96 * a.std(ddof=1) / math.sqrt(len(a)))


def prop_ci(k: int, n: int) -> tuple[float, float]:
    if n == 0:
        return math.nan, math.nan
    p = k / n
    return p, 1.96 * math.sqrt(max(p * (1 - p), 1.0 / n) / n)


# ---------------------------------------------------------------------------------------------


def fig2(report: Report, jobs: int | None) -> dict[str, Any]:
    import matplotlib.ticker as plt_ticker

    rtos = [1.5, 4.0, 10.0] if report.quick else [1.5, 2.0, 3.0, 4.0, 6.0, 8.0, 10.0]
    n, seeds = (400, 3) if report.quick else (400, 10)
    sizes = {"kind": "empirical", "bins": SIZE_MIX}
    cfgs = [
        scenario("weak", {"initial": f"{r}s", "min": f"{r}s"}, sizes, n, seed=s)
        for r in rtos
        for s in range(seeds)
    ]
    cfgs += [scenario("strong", "tuned-3g", sizes, n, seed=s) for s in range(seeds)]
    res = run_configs(cfgs, jobs, columns=True)
    share: dict[float, tuple[float, float]] = {}
    for i, r in enumerate(rtos):
        hit = tot = 0
        for s in range(seeds):
            h, t = conns_with_sto(res[i * seeds + s])
            hit, tot = hit + h, tot + t
        share[r] = prop_ci(hit, tot)
    hs = [conns_with_sto(x) for x in res[len(rtos) * seeds :]]
    strong = prop_ci(sum(h for h, _ in hs), sum(t for _, t in hs))
    fig, ax = plots.figure()
    ax.errorbar(
        rtos,
        [share[r][0] * 100 for r in rtos],
        [share[r][1] * 100 for r in rtos],
        marker="o",
        capsize=3,
        label="tcplab, weak (cell edge)",
    )
    ax.errorbar(
        [4.0],
        [strong[0] * 100],
        [strong[1] * 100],
        marker="^",
        capsize=3,
        label="tcplab, strong field",
    )
    plots.mark_paper(ax, list(PAPER_FIG2), [v * 100 for v in PAPER_FIG2.values()])
    plots.mark_paper(ax, [4.0], [PAPER_FIG2_STRONG * 100], label="paper, strong", marker="D")
    ax.set_xlabel("initial = minimum RTO (s)")
    ax.set_ylabel("connections with ≥ 1 STO (%)")
    # log axis: the strong-field 0.4 % and the flat ~1 % are read as easily as the 10 %
    ax.set_yscale("log")
    ax.set_ylim(0.1, 30)
    ax.yaxis.set_major_formatter(plt_ticker.FormatStrFormatter("%g"))
    ax.grid(True, which="both", axis="y", alpha=0.3)
    ax.legend()
    report.figure(plots.save(fig, report.out_dir / "fig2_sto_vs_rto.png"), "Fig. 2")
    # Every Fig. 2 number is a target the weak and strong presets were fitted to (radio.py):
    # calibrations, shown with their binomial CI, not predictions.
    lo, hi = share[1.5][0], share[4.0][0]
    note = "calibration target of the weak preset (tcplab/scenario/radio.py)"
    report.check(
        "Fig. 2 STO share at RTO 1.5 s",
        Factor(0.10, FACTOR, kind="calibration"),
        lo,
        ci=share[1.5][1],
        note=note,
    )
    report.check(
        "Fig. 2 STO share at RTO 4 s",
        Factor(0.01, FACTOR, kind="calibration"),
        hi,
        ci=share[4.0][1],
        note=note,
    )
    report.check(
        "Fig. 2 ratio 1.5 s / 4 s",
        Within(10, rel=0.5, kind="calibration"),
        round(lo / hi, 2) if hi > 0 else math.inf,
        paper="≈ 10 (10 % / 1 %)",
        note=note,
        estimate=True,
    )
    flat = [share[r][0] for r in rtos if r >= 4.0]
    report.check(
        "Fig. 2 flat from 4 s to 10 s: share at 10 s / share at 4 s",
        Within(1.0, abs=0.3, kind="calibration"),
        round(share[10.0][0] / hi, 3) if hi > 0 else math.nan,
        paper="flat (≈ 1)",
        note=f"{note}; shares {', '.join(f'{100 * v:.2f} %' for v in flat)} from 4 s up",
        estimate=True,
    )
    report.check(
        "Fig. 2 strong field at 4 s",
        Factor(PAPER_FIG2_STRONG, FACTOR, kind="calibration"),
        strong[0],
        ci=strong[1],
        note="calibration target of the strong preset",
    )
    return {"share": share, "strong": strong}


#: Fig. 4/5 settings (§5.3-5.4): 384/64 kb/s, RTT 300 ms, 300 KB, cwnd capped at the BDP.
FIG45_SIZE = 300_000
FIG45_RATE = 384_000
FIG45_RTT = 0.3
#: Spike duration (the paper gives none): long enough to fire the standard RTO at any point.
FIG45_TAU = 1.5
#: Congestion-avoidance growth per RTT used for the model overlay: tcplab's Reno counts bytes
#: acknowledged (RFC 5681 §3.1 / RFC 3465), so it grows 1 MSS per RTT even with delayed ACKs;
#: the paper's m (per-ACK counting with delayed ACKs) would be 0.5.
FIG45_M = 1.0


def emulator(stall_at_ns: int | None, detection: str, *, columns_dt: str = "0s") -> dict[str, Any]:
    """The §5.4 emulator: a clean bearer (no block errors, no random spikes), one scheduled
    stall of FIG45_TAU at ``stall_at_ns``, W-TCP with cwnd capped at the BDP."""
    bdp = int(FIG45_RATE * FIG45_RTT / 8)
    radio = {"down_bler": 0.0, "up_bler": 0.0, "spike_rate": 0.0}
    if stall_at_ns is not None:
        radio["stalls"] = [[f"{stall_at_ns}ns", f"{FIG45_TAU}s"]]
    cfg = scenario(
        "strong",
        "standard",
        f"{FIG45_SIZE}B",
        1,
        seed=1,
        detection=detection,
        radio=radio,
        tcp={"max_cwnd": f"{bdp}B"},
    )
    cfg["sample_interval_ns"] = 5_000_000 if columns_dt != "0s" else 0
    return cfg


def transfer_throughput(res: dict[str, Any]) -> float:
    """Throughput (bit/s) of the first completed download of a run (size / transfer time)."""
    ev = res["events_table"]
    done = ev["kind"] == res["event_kinds"].index("transfer_done")
    return float(ev["seq"][done][0]) * 8 / float(ev["value"][done][0])


def fig45(report: Report, jobs: int | None) -> dict[str, Any]:
    from tcplab.models.sto3g import throughput

    mss = 1460
    c = FIG45_RATE * FIG45_RTT / 8 / mss
    ws = {"w=3": 3.0, "w=c/2": c / 2, "w=c": c}
    # Where does cwnd reach w? From a run without the stall (its time series).
    base = run_configs([emulator(None, "none", columns_dt="5ms")], 1, columns=True)[0]
    ts = base["timeseries_table"]
    at = {}
    for k, w in ws.items():
        idx = np.nonzero(ts["cwnd"] >= min(w, math.floor(c)) * mss)[0]
        at[k] = int(ts["t_ns"][idx[0]]) if len(idx) else None
    variants = {"without F-RTO/Eifel": "none", "F-RTO + Eifel": "frto"}
    cfgs = [emulator(at[k], det) for k in ws for det in variants.values()]
    res = run_configs(cfgs, jobs, columns=True)
    sim = {}
    i = 0
    for k in ws:
        for v in variants:
            r = res[i]
            i += 1
            f = r["flows"][0]
            sim[(k, v)] = (
                transfer_throughput(r),
                f["timeouts"],
                f["spurious_timeouts"],
                unnecessary_per_sto(r)[0],
            )
    model = {
        (k, v): throughput(
            FIG45_SIZE,
            FIG45_RATE,
            FIG45_RTT,
            w,
            tau=FIG45_TAU,
            frto=1.0 if det == "frto" else 0.0,
            mss=mss,
            m=FIG45_M,
        )
        for k, w in ws.items()
        for v, det in variants.items()
    }
    fig, (ax, rel) = plots.figure(ncols=2, size=(5.6, 4.2))
    x = np.arange(len(ws))
    # Right: each series against its own mean over the STO positions, where the checks'
    # 1 % differences ("w=3 lowest", "independent of the position") can be seen.
    for j, v in enumerate(variants):
        for src, vals, style in (
            ("tcplab sim", [sim[(k, v)][0] for k in ws], "o-"),
            ("model", [model[(k, v)] for k in ws], "D--"),
        ):
            m = float(np.mean(vals))
            rel.plot(
                x,
                [100 * (y / m - 1) for y in vals],
                style,
                color=f"C{j}" if src == "tcplab sim" else ("C3" if j else "C2"),
                label=f"{src}, {v}",
            )
    rel.axhline(0, color="grey", lw=0.6)
    rel.set_xticks(x, list(ws))
    rel.set_xlabel("cwnd when the STO happens")
    rel.set_ylabel("throughput vs its mean over positions (%)")
    rel.set_title("the same, relative to each series' mean", fontsize=10)
    rel.legend(fontsize=7)
    for j, v in enumerate(variants):
        off = (j - 0.5) * 0.4
        ax.bar(x + off, [sim[(k, v)][0] / 1e3 for k in ws], 0.38, label=f"tcplab sim, {v}")
        ax.plot(
            x + off,
            [model[(k, v)] / 1e3 for k in ws],
            "D",
            color="C3" if j else "C2",
            label=f"model eqs. (5)-(10), {v}",
        )
    ax.set_xticks(x, list(ws))
    ax.set_ylabel("throughput (kbit/s)")
    ax.set_xlabel("cwnd when the STO happens")
    ax.set_title(f"Fig. 4/5: 384/64 kb/s, RTT 300 ms, 300 KB, spike {FIG45_TAU} s")
    ax.set_ylim(0, 400)
    ax.legend(fontsize=8, loc="upper center", ncol=2)
    report.figure(
        plots.save(fig, report.out_dir / "fig4_fig5_model_vs_sim.png"),
        "Fig. 4 (model) and Fig. 5 (emulation) overlaid",
    )
    t1 = [model[(k, "F-RTO + Eifel")] for k in ws]
    t2 = [model[(k, "without F-RTO/Eifel")] for k in ws]
    spread = (max(t1) - min(t1)) / max(t1)
    report.check(
        "Fig. 4 model: T1 spread over STO positions",
        Below(1, kind="formula"),
        round(spread * 100, 4),
        paper="constant",
        unit="%",
        note="the paper's eqs. (5)-(10) re-evaluated",
    )
    report.check(
        "Fig. 4 model: early STO hurts most without F-RTO",
        Lowest("w=3", kind="formula"),
        {k: round(v / 1e3, 1) for k, v in zip(ws, t2, strict=True)},
        paper="w=3 lowest",
        unit="kbit/s",
        note="the paper's eqs. (5)-(10) re-evaluated",
    )
    s1 = [sim[(k, "F-RTO + Eifel")][0] for k in ws]
    s2 = [sim[(k, "without F-RTO/Eifel")][0] for k in ws]
    sto = [sim[(k, v)][2] for k in ws for v in variants]
    report.check(
        "Fig. 5 sim: spurious timeouts per run (the scheduled stall)",
        Info("setup check: the scenario schedules one stall per run"),
        sto,
    )
    sspread = (max(s1) - min(s1)) / max(s1)
    report.check(
        "Fig. 5 sim: F-RTO+Eifel throughput spread over STO positions",
        Below(10),
        round(sspread * 100, 1),
        paper="≈ 0 (independent of position)",
        unit="%",
        source="§5: with F-RTO+Eifel the throughput does not depend on where the STO happens; "
        "< 10 %: the emulator's own deviation from the model (§5: ≈ 15 %) is larger",
        note="one deterministic run per position: no CI",
    )
    report.check(
        "Fig. 5 sim: F-RTO+Eifel / without, at every position",
        AtLeast(1),
        [round(a / b, 3) for a, b in zip(s1, s2, strict=True)],
        paper="≥ 1 (F-RTO+Eifel wins)",
        unit="x",
        source="§5: the improvement ratio's trend agrees with the model (no value)",
    )
    # The paper's emulator shows "the same trend as the model": an early STO hurts most.
    report.check(
        "Fig. 5 sim: early STO hurts most without F-RTO",
        Lowest("w=3"),
        {k: round(v / 1e3, 1) for k, v in zip(ws, s2, strict=True)},
        paper="w=3 lowest",
        unit="kbit/s",
        source="§5: the emulator shows the model's trend (an early STO hurts most)",
        note="see 'Differences from the paper' (Fig. 4/5): RFC 5681's ssthresh floor of 2 "
        "segments and the ACK burst after the stall shrink the early-STO penalty from ~23 "
        "packets (model) to ~5",
    )
    # Eq. (1): unnecessary retransmissions after one STO (§5.2's numbers), then the emulation.
    from tcplab.models.sto3g import unnecessary_rtx

    for label, kw, paper in (
        ("cwnd capped at the BDP", {}, 10),
        ("cwnd 64 KB", {"max_cwnd": 65535.0}, 44),
    ):
        report.check(
            f"eq. (1): most unnecessary retransmissions without F-RTO, {label}",
            Within(paper, abs=0, kind="formula"),
            unnecessary_rtx(FIG45_RATE, FIG45_RTT, **kw),
            unit="packets",
            note="384 kbit/s, RTT 300 ms, MSS 1460 B",
        )
    report.check(
        "eq. (1): unnecessary retransmissions with F-RTO + Eifel",
        Within(1, abs=0, kind="formula"),
        unnecessary_rtx(FIG45_RATE, FIG45_RTT, frto=1.0),
        unit="packets",
    )
    # The emulation: the go-back-N after the STO resends what was in flight, at most the
    # BDP-capped window of eq. (1); F-RTO + Eifel resends the one timed-out segment.
    report.check(
        "Fig. 5 sim: unnecessary retransmissions per STO without F-RTO (each position)",
        AtMost(10, kind="construction"),
        [sim[(k, "without F-RTO/Eifel")][3] for k in ws],
        paper="≤ 10 (eq. (1), cwnd capped at the BDP)",
        unit="packets",
        source="§5.2: at most 10 packets with cwnd capped at the BDP",
        note="holds by construction: the emulation caps cwnd at the BDP, 10 packets, and a "
        "go-back-N resends at most what was in flight. Positions " + ", ".join(ws),
    )
    report.check(
        "Fig. 5 sim: unnecessary retransmissions per STO with F-RTO + Eifel (each position)",
        Within(1, abs=0),
        [sim[(k, "F-RTO + Eifel")][3] for k in ws],
        paper="1 (eq. (1))",
        unit="packets",
        source="eq. (1): R = 1 with F-RTO+Eifel",
    )
    ratio = float(np.mean([a / m for a, m in zip(s1, t1, strict=True)]))
    report.check(
        "Fig. 5 sim/model with F-RTO+Eifel",
        Within(0.85, abs=0.1),
        round(ratio, 3),
        paper="≈ 0.85 (~15 % below the model)",
        source="§5: the emulator's throughput about 15 % below the model; 'about' read as "
        "±10 points",
    )
    return {
        "stall_at_s": {k: (v or 0) / 1e9 for k, v in at.items()},
        "sim_bps": {f"{k}/{v}": x[0] for (k, v), x in sim.items()},
        "model_bps": {f"{k}/{v}": x for (k, v), x in model.items()},
    }


def sto_per_mb(res: dict[str, Any]) -> float:
    """Spurious-timeout *episodes* per MB delivered: a stall that outlasts several backed-off
    RTOs counts once (the timeout rows with backoff 0 that were spurious)."""
    t = timeout_rows(res)
    n = int(((t["spurious"] == 1) & (t["reason"] == 0)).sum())
    return n / max(res["flows"][0]["bytes_delivered"] / 1e6, 1e-9)


def fig6(report: Report, jobs: int | None) -> dict[str, Any]:
    n, seeds = (40, 8) if report.quick else (120, 30)
    sizes = mix(list(CONTENTS))  # the paper's four contents, equal numbers of downloads
    out: dict[str, dict[str, tuple[float, float]]] = {}
    cfgs = [
        scenario(env, prof, sizes, n, seed=s)
        for env in ENVIRONMENTS
        for prof in ("standard", "tuned-3g")
        for s in range(seeds)
    ]
    res = run_configs(cfgs, jobs, columns=True)
    k = 0
    for env in ENVIRONMENTS:
        out[env] = {}
        for prof in ("standard", "tuned-3g"):
            out[env][prof] = ci95([sto_per_mb(r) for r in res[k : k + seeds]])
            k += seeds
    fig, ax = plots.figure()
    x = np.arange(len(ENVIRONMENTS))
    for j, prof in enumerate(("standard", "tuned-3g")):
        ax.bar(
            x + (j - 0.5) * 0.4,
            [out[e][prof][0] for e in ENVIRONMENTS],
            0.4,
            yerr=[out[e][prof][1] for e in ENVIRONMENTS],
            capsize=3,
            label=f"tcplab {prof}",
        )
    plots.mark_paper(
        ax,
        [x[ENVIRONMENTS.index(e)] - 0.2 for e in PAPER_FIG6_STD],
        list(PAPER_FIG6_STD.values()),
        label="paper standard",
    )
    plots.mark_paper(
        ax,
        [x[ENVIRONMENTS.index(e)] + 0.2 for e in PAPER_FIG6_TUNED],
        list(PAPER_FIG6_TUNED.values()),
        label="paper tuned",
        marker="D",
    )
    ax.set_xticks(x, ENVIRONMENTS)
    ax.set_ylabel("spurious timeouts per MB")
    ax.legend()
    report.figure(plots.save(fig, report.out_dir / "fig6_sto_per_mb.png"), "Fig. 6")
    # The presets were chosen against Fig. 6's weak and train bars and the standard profile's
    # ordering (radio.py's calibration table): those rows are calibrations.
    cal = "calibration target (tcplab/scenario/radio.py's table)"
    for env, v in PAPER_FIG6_STD.items():
        m, h = out[env]["standard"]
        report.check(
            f"Fig. 6 {env} standard",
            Factor(v, FACTOR, kind="calibration"),
            m,
            ci=h,
            unit="/MB",
            note=cal,
        )
    for env, v in PAPER_FIG6_TUNED.items():
        m, h = out[env]["tuned-3g"]
        report.check(
            f"Fig. 6 {env} tuned",
            Factor(v, FACTOR, kind="calibration"),
            m,
            ci=h,
            unit="/MB",
            note=cal,
        )
    for prof in ("standard", "tuned-3g"):
        vals = {e: out[e][prof][0] for e in ENVIRONMENTS}
        cis = {e: out[e][prof][1] for e in ENVIRONMENTS}
        for rule, paper in ((Highest, "train highest"), (Lowest, "weak lowest")):
            env = "train" if rule is Highest else "weak"
            report.check(
                f"Fig. 6 {prof}: {paper} of the five environments",
                rule(env, kind="calibration"),
                {e: round(v, 3) for e, v in vals.items()},
                ci=cis,
                paper=paper,
                unit="/MB",
                note=cal
                + "; pairs whose CIs overlap make it inconclusive"
                + (
                    "; it misses because weak's STO/MB stays above the paper's 0.18 (standard) and "
                    "0.01 (tuned) — the calibration conflict in 'Differences from the paper' — "
                    "so "
                    + ", ".join(e for e in ENVIRONMENTS if vals[e] < vals["weak"])
                    + " fall below it"
                    if env == "weak" and rule(env).verdict(vals, cis) == "misses"
                    else ""
                ),
            )
    report.check(
        "Fig. 6 standard: strong field above weak field",
        Order(["strong", "weak"], kind="calibration"),
        {e: round(out[e]["standard"][0], 3) for e in ("strong", "weak")},
        ci={e: out[e]["standard"][1] for e in ("strong", "weak")},
        paper="strong > weak",
        unit="/MB",
        note=cal,
    )
    # Predictions: what the fit did not target.
    diff = [out[e]["standard"][0] - out[e]["tuned-3g"][0] for e in ENVIRONMENTS]
    dci = [math.hypot(out[e]["standard"][1], out[e]["tuned-3g"][1]) for e in ENVIRONMENTS]
    report.check(
        "Fig. 6 tuning lowers STO/MB everywhere (standard minus tuned, per environment)",
        Above(0),
        [round(d, 3) for d in diff],
        ci=[round(h, 3) for h in dci],
        paper="> 0 everywhere",
        unit="/MB",
        source="§6.2.1: 'tuning lowers the STO frequency in every environment'",
        note="environments in order " + ", ".join(ENVIRONMENTS),
    )
    report.check(
        "Fig. 6 tuned STO/MB rises with speed",
        Order(list(reversed(MOVING)), kind="construction"),
        {e: round(out[e]["tuned-3g"][0], 3) for e in MOVING},
        ci={e: out[e]["tuned-3g"][1] for e in MOVING},
        paper="train > car > pedestrian",
        unit="/MB",
        source="§6.2.1: with tuning the STO frequency falls as the speed falls",
        note="holds by construction: the moving presets differ in the rate of delay spikes, "
        "chosen to rise with speed (tcplab/radio.py), and with the tuned RTO only spikes "
        "cause STOs",
    )
    return out


def unnecessary_per_sto(res: dict[str, Any]) -> tuple[float, int]:
    """Unnecessary retransmissions per spurious timeout: retransmissions (timeout and go-back-N)
    of connections whose every timeout was spurious, divided by their timeouts."""
    ev = res["events_table"]
    kinds = res["event_kinds"]
    to = ev["kind"] == kinds.index("timeout")
    rtx = (ev["kind"] == kinds.index("retransmit")) & np.isin(ev["reason"], (0, 1))
    tot_rtx = n_sto = 0
    for c in set(ev["conn"][to].tolist()):
        sel = to & (ev["conn"] == c)
        if np.all(ev["spurious"][sel] == 1):
            n_sto += int(sel.sum())
            tot_rtx += int((rtx & (ev["conn"] == c)).sum())
    return (tot_rtx / n_sto if n_sto else math.nan), n_sto


def _gain(a: tuple[float, float], b: tuple[float, float]) -> tuple[float, float]:
    """a/b - 1 for two independent (mean, CI half-width) pairs, with the propagated half-width."""
    (ma, ha), (mb, hb) = a, b
    if not (mb > 0 and ma > 0):
        return math.nan, math.nan
    rel = math.hypot(0.0 if math.isnan(ha) else ha / ma, 0.0 if math.isnan(hb) else hb / mb)
    return ma / mb - 1, ma / mb * rel


def _fig78_plot(
    report: Report,
    env: str,
    variants: dict[str, str],
    unn: dict[str, dict[str, float]],
    unn_ci: dict[str, dict[str, float]],
    gains: dict[str, tuple[float, float]],
) -> None:
    """Fig. 7 (unnecessary retransmissions per STO) and Fig. 8 (throughput gain of F-RTO+Eifel
    for downloads with one STO), each with the paper's own numbers marked."""
    import matplotlib.ticker as plt_ticker

    fig, ax = plots.figure(ncols=2)
    x = np.arange(len(CONTENTS))
    wd = 0.8 / len(variants)
    for j, v in enumerate(variants):
        off = (j - (len(variants) - 1) / 2) * wd
        ys = [unn[c][v] for c in CONTENTS]
        err = [
            0.0 if math.isnan(unn_ci[c][v]) else min(unn_ci[c][v], 0.95 * y)
            for c, y in zip(CONTENTS, ys, strict=True)
        ]
        ax[0].bar(x + off, ys, wd, yerr=err, capsize=2, label=f"tcplab {v}")
    off_off, off_frto = -wd, 0.0
    i6, i2 = list(CONTENTS).index("6KB"), list(CONTENTS).index("2MB")
    plots.mark_paper(ax[0], [x[i2] + off_off, x[i2] + off_frto, x[i6] + off_off], [28.0, 3.0, 1.6])
    # "< 2" for 6 KB, 18 KB, 300 KB with F-RTO: an upper limit, drawn as a bar-top cap
    for c in ("6KB", "18KB", "300KB"):
        i = list(CONTENTS).index(c)
        ax[0].plot(
            [x[i] + off_frto - wd / 2, x[i] + off_frto + wd / 2],
            [2, 2],
            color="black",
            lw=2,
            label="paper: < 2 with F-RTO" if c == "6KB" else None,
        )
    ax[0].set_yscale("log")
    ax[0].set_yticks([1, 2, 5, 10, 20, 50])
    ax[0].yaxis.set_major_formatter(plt_ticker.FormatStrFormatter("%g"))
    ax[0].yaxis.set_minor_formatter(plt_ticker.NullFormatter())
    ax[0].set_xticks(x, list(CONTENTS))
    ax[0].set_xlabel("content size")
    ax[0].set_ylabel("unnecessary retransmissions per STO (packets)")
    ax[0].set_title(f"Fig. 7 ({env}, tuned RTO)")
    ax[0].legend(fontsize=7)
    g = [100 * gains[c][0] for c in CONTENTS]
    gh = [0.0 if math.isnan(gains[c][1]) else 100 * gains[c][1] for c in CONTENTS]
    ax[1].bar(x, g, 0.6, yerr=gh, capsize=3, color="C1", label="tcplab: F-RTO+Eifel vs off")
    ax[1].axhline(0, color="grey", lw=0.6)
    ax[1].fill_between(
        [x[1] - 0.4, x[-1] + 0.4], 2, 12, color="black", alpha=0.12, label="paper: +2 … +12 %"
    )
    # the few one-STO downloads of 6 KB and 18 KB give CIs of tens of %: a symmetric-log axis,
    # linear within ±20 %, shows them whole and keeps the paper's band readable
    ax[1].set_yscale("symlog", linthresh=20)
    ax[1].set_ylim(-100, 100)
    ax[1].set_yticks([-100, -50, -20, -10, 0, 10, 20, 50, 100])
    ax[1].yaxis.set_minor_locator(plt_ticker.NullLocator())
    ax[1].yaxis.set_major_formatter(plt_ticker.FormatStrFormatter("%g"))
    for i, (v, e) in enumerate(zip(g, gh, strict=True)):
        ax[1].annotate(f"{v:+.1f}\n± {e:.0f}", (x[i] + 0.32, 28), ha="left", fontsize=7)
    ax[1].annotate("paper:\n'little'", (x[0] + 0.32, -60), ha="left", fontsize=7)
    ax[1].set_xticks(x, list(CONTENTS))
    ax[1].set_xlabel("content size")
    ax[1].set_ylabel("throughput gain (%), one-STO downloads")
    ax[1].set_title("Fig. 8 (95 % CI; symlog axis)")
    ax[1].legend(fontsize=7, loc="lower right")
    report.figure(plots.save(fig, report.out_dir / "fig7_fig8.png"), "Fig. 7 and Fig. 8")


def _fig7_checks(
    report: Report, unn: dict[str, dict[str, float]], unn_ci: dict[str, dict[str, float]]
) -> None:
    """Fig. 7's numbers: 28 and 3 at 2 MB, 1.6 at 6 KB without F-RTO, < 2 elsewhere with it."""
    for name, v, paper in (("2MB", "off", 28.0), ("2MB", "F-RTO+Eifel", 3.0), ("6KB", "off", 1.6)):
        label = "without F-RTO" if v == "off" else "with F-RTO"
        report.check(
            f"Fig. 7 {name} {label}",
            Factor(paper, FACTOR),
            unn[name][v],
            ci=unn_ci[name][v],
            unit="pkts/STO",
            source=f"§6.2.2: an average of {paper:g}; within x2: a field average over an "
            "unstated number of STOs, no interval printed",
            note="counted as the sender's retransmissions of connections whose every timeout "
            "was spurious; the paper counts packets the receiver got twice (a go-back-N "
            "retransmission lost on the radio counts here, not there)",
        )
    a, b = unn["2MB"]["off"], unn["2MB"]["F-RTO+Eifel"]
    ha, hb = unn_ci["2MB"]["off"], unn_ci["2MB"]["F-RTO+Eifel"]
    report.check(
        "Fig. 7 F-RTO cut at 2 MB (without / with)",
        Info("context: the quotient of the two 2 MB rows, already judged"),
        round(a / b, 2) if b else math.inf,
        ci=a / b * math.hypot(ha / a, hb / b) if a and b else None,
        paper="≈ 9.3 (28 / 3)",
        unit="x",
    )
    for name in ("6KB", "18KB", "300KB"):
        report.check(
            f"Fig. 7 {name} with F-RTO",
            Below(2),
            unn[name]["F-RTO+Eifel"],
            ci=unn_ci[name]["F-RTO+Eifel"],
            unit="pkts/STO",
            source="§6.2.2: 'below 2 on average' (平均 2 パケット未満)",
            note="n/a: no STO in these runs"
            if math.isnan(unn[name]["F-RTO+Eifel"])
            else "above 2: STOs at the tail of a transfer, where F-RTO's step 2b has no new "
            "data and RFC 5682 goes back N (table 'where F-RTO falls back to go-back-N')"
            if unn[name]["F-RTO+Eifel"] >= 2
            else "",
        )
    for name in ("6KB", "18KB", "300KB"):
        report.check(
            f"Fig. 7 {name} with F-RTO, Linux variant (not the paper's)",
            Info("beyond the paper; paper's < 2 is for RFC 4138 F-RTO"),
            unn[name]["F-RTO Linux+Eifel"],
            ci=unn_ci[name]["F-RTO Linux+Eifel"],
            unit="pkts/STO",
        )


#: Figs. 7-8: the environments where the paper downloaded its four contents (§6.1: on the express
#: train it measured with one 500 MB download instead); its bars are averages over them.
FIG78_ENVS = ("weak", "strong", "pedestrian", "car")
#: "F-RTO+Eifel" is RFC 5682 F-RTO, the paper's (2008, RFC 4138) implementation; the Linux
#: variant (kernel >= 3.10) is shown beside it (see the report's F-RTO section).
FIG78_VARIANTS = {"off": "none", "F-RTO+Eifel": "frto", "F-RTO Linux+Eifel": "frto-linux"}


def _fig78_measure(runs: dict[tuple[str, str], list[dict[str, Any]]]) -> dict[str, Any]:
    """Per content and variant, over the given runs: unnecessary retransmissions per STO (with
    the CI of a ratio of means over runs), one-STO download throughput and F-RTO's verdicts."""
    unn: dict[str, dict[str, float]] = {}
    unn_ci: dict[str, dict[str, float]] = {}
    thr: dict[str, dict[str, tuple[float, float]]] = {}
    steps: dict[str, dict[str, dict[str, Any]]] = {}
    for name in CONTENTS:
        unn[name], unn_ci[name], thr[name], steps[name] = {}, {}, {}, {}
        for v in FIG78_VARIANTS:
            rs = runs[(name, v)]
            tot = [unnecessary_per_sto(r) for r in rs]
            # retransmissions / STOs pooled over runs; the CI treats runs as the samples
            num = [x[0] * x[1] if x[1] else 0.0 for x in tot]
            den = [float(x[1]) for x in tot]
            if sum(den):
                unn[name][v], unn_ci[name][v] = ratio_ci95(num, den)
            else:
                unn[name][v], unn_ci[name][v] = math.nan, math.nan
            thr[name][v] = ci95(one_sto_throughputs(rs))
            steps[name][v] = verdict_breakdown(rs)
    gains = {name: _gain(thr[name]["F-RTO+Eifel"], thr[name]["off"]) for name in CONTENTS}
    return {"unn": unn, "unn_ci": unn_ci, "thr": thr, "steps": steps, "gains": gains}


def _fig78_env_plot(report: Report, per_env: dict[str, dict[str, Any]]) -> None:
    """Figs. 7-8 per environment (tcplab only: the paper prints pooled numbers)."""
    import matplotlib.ticker as plt_ticker

    fig, ax = plots.figure(ncols=2, size=(7.0, 4.8))
    x = np.arange(len(CONTENTS))
    envs = list(per_env)
    wd = 0.8 / (2 * len(envs))
    for j, env in enumerate(envs):
        m = per_env[env]
        for k, v in enumerate(("off", "F-RTO+Eifel")):
            off = (2 * j + k - (2 * len(envs) - 1) / 2) * wd
            ax[0].bar(
                x + off,
                [m["unn"][c][v] for c in CONTENTS],
                wd,
                color=f"C{j}",
                alpha=1.0 if k == 0 else 0.45,
                hatch=None if k == 0 else "///",
                label=env if k == 0 else None,
            )
        off = (j - (len(envs) - 1) / 2) * 0.8 / len(envs)
        g = [100 * m["gains"][c][0] for c in CONTENTS]
        gh = [0.0 if math.isnan(m["gains"][c][1]) else 100 * m["gains"][c][1] for c in CONTENTS]
        ax[1].errorbar(x + off, g, gh, fmt="o", ms=3, capsize=2, color=f"C{j}", label=env)
    ax[0].set_yscale("log")
    ax[0].set_yticks([1, 2, 5, 10, 20, 50])
    ax[0].yaxis.set_major_formatter(plt_ticker.FormatStrFormatter("%g"))
    ax[0].yaxis.set_minor_formatter(plt_ticker.NullFormatter())
    ax[0].set_xticks(x, list(CONTENTS))
    ax[0].set_xlabel("content size")
    ax[0].set_ylabel("unnecessary retransmissions per STO (packets)")
    ax[0].set_title("Fig. 7 per environment\n(left of each pair: without F-RTO; hatched: F-RTO)")
    ax[1].axhline(0, color="grey", lw=0.6)
    ax[1].axhspan(2, 12, color="black", alpha=0.12, label="paper (pooled): +2 … +12 %")
    ax[1].set_yscale("symlog", linthresh=20)
    ax[1].set_ylim(-100, 300)
    ax[1].set_yticks([-100, -50, -20, 0, 20, 50, 100, 300])
    ax[1].yaxis.set_major_formatter(plt_ticker.FormatStrFormatter("%g"))
    ax[1].set_xticks(x, list(CONTENTS))
    ax[1].set_xlabel("content size")
    ax[1].set_ylabel("throughput gain of F-RTO+Eifel (%)")
    ax[1].set_title("Fig. 8 per environment\n(one-STO downloads, 95 % CI; symlog axis)")
    for a in ax:
        a.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=3)
    report.figure(
        plots.save(fig, report.out_dir / "fig7_fig8_by_env.png"),
        "Fig. 7 and Fig. 8 in each environment (tuned RTO)",
    )


def fig78(report: Report, jobs: int | None) -> dict[str, Any]:
    """Figs. 7-8 on every environment of §6: the paper's numbers are judged on the pool of the
    four environments where it downloaded the four contents; each environment (and the train,
    where the paper did not download them) is shown apart."""
    # quick: enough downloads for tens of STOs per content (a handful decides nothing)
    n, seeds = (100, 4) if report.quick else (150, 20)
    envs = (*FIG78_ENVS, "train")
    keys = [
        (env, name, v, s)
        for env in envs
        for name in CONTENTS
        for v in FIG78_VARIANTS
        for s in range(seeds)
    ]
    cfgs = [
        scenario(
            env,
            "tuned-3g",
            name,
            n if name != "2MB" else max(8, n // 3),
            seed=s,
            detection=FIG78_VARIANTS[v],
        )
        for env, name, v, s in keys
    ]
    res = run_configs(cfgs, jobs, columns=True)
    by: dict[str, dict[tuple[str, str], list[dict[str, Any]]]] = {e: {} for e in envs}
    for (env, name, v, _), r in zip(keys, res, strict=True):
        by[env].setdefault((name, v), []).append(r)
    per_env = {env: _fig78_measure(by[env]) for env in envs}
    pool: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for env in FIG78_ENVS:
        for key, rs in by[env].items():
            pool.setdefault(key, []).extend(rs)
    m = _fig78_measure(pool)
    unn, unn_ci, thr, steps, gains = m["unn"], m["unn_ci"], m["thr"], m["steps"], m["gains"]
    # Table 4 counts every STO of the §6 downloads: the four contents in these environments.
    t4 = {}
    for v in ("F-RTO+Eifel", "F-RTO Linux+Eifel"):
        rs = [r for name in CONTENTS for r in pool[(name, v)]]
        t4[FIG78_VARIANTS[v]] = {
            "sto": sum(r["flows"][0]["spurious_timeouts"] for r in rs),
            "causes": {
                k: sum(r["flows"][0][f"spurious_missed_{k}"] for r in rs) for k in MISS_CAUSES
            },
        }
    variants = FIG78_VARIANTS
    _fig78_plot(report, "4 environments pooled", variants, unn, unn_ci, gains)
    _fig78_env_plot(report, per_env)
    _fig7_checks(report, unn, unn_ci)
    env_lines = [
        "| environment | content | STOs (off / F-RTO) | unnecessary rtx per STO, off "
        "| with F-RTO | one-STO gain of F-RTO+Eifel |",
        "|---|---|---|---|---|---|",
    ]
    for env in envs:
        e = per_env[env]
        for name in CONTENTS:
            g, h = e["gains"][name]
            k_off, k_on = (e["steps"][name][v]["sto"] for v in ("off", "F-RTO+Eifel"))
            if min(k_off, k_on) < 5:  # a handful of STOs: no interval worth printing
                u_off, u_on = (
                    "—" if math.isnan(e["unn"][name][v]) else f"{e['unn'][name][v]:.2f}"
                    for v in ("off", "F-RTO+Eifel")
                )
                gain = ("—" if math.isnan(g) else f"{100 * g:+.1f} %") + " (< 5 STOs: no CI)"
            else:
                u_off, u_on = (
                    f"{e['unn'][name][v]:.2f} ± {e['unn_ci'][name][v]:.2f}"
                    for v in ("off", "F-RTO+Eifel")
                )
                gain = f"{100 * g:+.1f} ± {100 * h:.1f} %"
            env_lines.append(f"| {env} | {name} | {k_off} / {k_on} | {u_off} | {u_on} | {gain} |")
    report.section(
        "Figs. 7-8 in each environment",
        f"Tuned RTO, {seeds} runs of {n} downloads ({max(8, n // 3)} of 2 MB) per environment, "
        "content and variant. The paper's numbers are averages over the environments where it "
        "downloaded the four contents (static weak, static strong, pedestrian, car; §6.1: on the "
        "express train it measured one 500 MB download instead), so the report's Fig. 7-8 rows "
        "judge the pool of those four, each STO counting once. The train is shown for "
        "comparison (the earlier reproduction used it alone). STO counts are of the runs' "
        "spurious timeouts; '±' is the 95 % CI over runs.\n\n" + "\n".join(env_lines),
    )
    lines = [
        "| content | F-RTO | STOs | detected | missed: finished / no_window / dupack / other "
        "| go-back-N rtx per miss | unnecessary rtx per STO |",
        "|---|---|---|---|---|---|---|",
    ]
    for name in CONTENTS:
        for v in ("F-RTO+Eifel", "F-RTO Linux+Eifel"):
            b = steps[name][v]
            ms = " / ".join(str(b["missed"][c]) for c in MISS_CAUSES)
            lines.append(
                f"| {name} | {variants[v]} | {b['sto']} | {b['detected']} | {ms} | "
                f"{b['gbn_per_miss']:.1f} | {unn[name][v]:.2f} |"
            )
    report.section(
        "Fig. 7: where F-RTO falls back to go-back-N",
        "Per spurious timeout of the Fig. 7 runs (the four environments pooled): the detector's "
        "verdict, the miss cause and the go-back-N retransmissions (reason `after_timeout`) that "
        "followed each miss, until the next timeout or the end of the connection.\n\n"
        + "\n".join(lines),
    )
    # "+2 % to +12 % for 18 KB and larger": each gain within 2 … 12 %, with its CI.
    for name in ("18KB", "300KB", "2MB"):
        g, h = gains[name]
        report.check(
            f"Fig. 8 gain {name}",
            Between(2, 12),
            round(g * 100, 1),
            ci=round(h * 100, 1),
            paper="2-12",
            unit="%",
            source="§6.2.3: 'about 2 % to 12 %' (2%~12%程度) for 18 KB and larger",
            note=f"downloads with one STO in slow start: {thr[name]['off'][0] / 1e3:.0f} → "
            f"{thr[name]['F-RTO+Eifel'][0] / 1e3:.0f} kbit/s",
        )
    g, h = gains["6KB"]
    report.check(
        "Fig. 8 gain 6KB",
        Info("paper: 'little' (no number)"),
        round(g * 100, 1),
        ci=round(h * 100, 1),
        unit="%",
    )
    return {
        "unnecessary": unn,
        "unnecessary_ci": unn_ci,
        "throughput": thr,
        "steps": steps,
        "table4_counts": t4,
        "per_env": {
            env: {"unnecessary": e["unn"], "unnecessary_ci": e["unn_ci"], "gains": e["gains"]}
            for env, e in per_env.items()
        },
    }


#: §3.3: Eifel detection "adds a timestamp to every packet, so the data grow by 0.8 % to 23 %
#: depending on the packet length" (the option's 12 bytes of a 1500-byte data packet and of a
#: 52-byte ACK).
PAPER_EIFEL_OVERHEAD = {"data": 0.8, "ACK": 23.0}


def _link(res: dict[str, Any], hop: str, d: str) -> dict[str, Any]:
    return next(x for x in res["links"] if x["name"] == hop and x["dir"] == d)


def eifel_overhead(report: Report, jobs: int | None) -> dict[str, Any]:
    """§3.3's argument against Eifel detection: its timestamps cost 0.8-23 % more bytes. The same
    download of each content with RFC 5682 F-RTO (no timestamps) and with Eifel detection
    (RFC 3522, timestamps on), on a clean bearer (no block errors, no stalls: no retransmission
    blurs the header cost); IP bytes per direction counted at a LAN hop before the radio, and
    the RLC PDUs the radio carries."""
    clean = {"down_bler": 0.0, "up_bler": 0.0, "spike_rate": 0.0}
    variants = {"F-RTO": ("frto", False), "Eifel": ("eifel", True)}
    cfgs = [
        scenario(
            "strong",
            "tuned-3g",
            name,
            1,
            seed=1,
            detection=det,
            radio=clean,
            # RFC 6691 §2: the sender reduces its data for the options it sends, so with
            # timestamps (12 bytes) a full segment carries 1448 bytes in the same 1500-byte packet
            tcp={"timestamps": ts, "mss": 1448 if ts else 1460},
            lan=True,
        )
        for name in CONTENTS
        for det, ts in variants.values()
    ]
    res = run_configs(cfgs, jobs)
    rows: dict[str, dict[str, float]] = {}
    for i, name in enumerate(CONTENTS):
        a, b = res[2 * i], res[2 * i + 1]  # F-RTO, Eifel
        row: dict[str, float] = {}
        for d, label in (("fwd", "data"), ("rev", "ACK")):
            la, lb = _link(a, "lan", d), _link(b, "lan", d)
            ra, rb = _link(a, "radio", d), _link(b, "radio", d)
            # share of the Eifel run's bytes that the timestamps add (the paper's 12/1500, 12/52)
            row[f"{label} bytes"] = 100 * (1 - la["tx_bytes"] / lb["tx_bytes"])
            row[f"{label} per packet"] = 100 * (
                1 - (la["tx_bytes"] / la["tx_packets"]) / (lb["tx_bytes"] / lb["tx_packets"])
            )
            row[f"{label} radio PDUs"] = 100 * (1 - ra["pdus"] / rb["pdus"])
            row[f"{label} packets"] = lb["tx_packets"] / la["tx_packets"]
        rows[name] = row
    lines = [
        "| content | data: extra bytes | data: radio PDUs | ACK: extra bytes | ACK: per ACK "
        "| ACK: radio PDUs |",
        "|---|---|---|---|---|---|",
        "| paper | 0.8 % (12 of 1500 B) | — | 23 % (12 of 52 B) | 23 % | — |",
    ]
    for name, r in rows.items():
        lines.append(
            f"| {name} | {r['data bytes']:.2f} % | {r['data radio PDUs']:.2f} % | "
            f"{r['ACK bytes']:.1f} % | {r['ACK per packet']:.1f} % | {r['ACK radio PDUs']:.1f} % |"
        )
    report.section(
        "Eifel detection's byte overhead (§3.3)",
        "The share of the bytes of an Eifel-detection download (timestamps on) that the "
        "timestamps add, against the same download with F-RTO and no timestamps: IP bytes at a "
        "LAN hop before the radio (both directions), per ACK (mean ACK size), and RLC PDUs on the "
        "radio. One download per content on a clean bearer (deterministic: no CI). With "
        "timestamps a full segment carries 1448 payload bytes instead of 1460, so a download "
        "needs 0.8 % more data packets, and as many more ACKs; per transfer the ACK direction "
        "therefore grows by slightly more than the 12/52 of one ACK. On the radio a 40-byte ACK "
        "fits one 42-byte RLC PDU and a 52-byte one needs two: there the timestamps take half of "
        "the uplink's PDUs, twice the IP-level share the paper counts.\n\n" + "\n".join(lines),
    )
    big = rows["2MB"]
    report.check(
        "Eifel detection byte overhead, data direction (2 MB download, IP bytes)",
        Within(PAPER_EIFEL_OVERHEAD["data"], abs=0.05, kind="formula"),
        round(big["data bytes"], 3),
        paper="0.8 (12 of 1500 B)",
        unit="%",
        source="§3.3: 0.8 %, read to its printed precision (± 0.05)",
        note="arithmetic of the configuration: the 12 timestamp-option bytes of a 1500-byte "
        "packet, counted on deterministic clean-bearer runs",
    )
    report.check(
        "Eifel detection byte overhead, ACK direction (2 MB download, per ACK)",
        Within(PAPER_EIFEL_OVERHEAD["ACK"], abs=0.5, kind="formula"),
        round(big["ACK per packet"], 2),
        paper="23 (12 of 52 B)",
        unit="%",
        source="§3.3: 23 %, read to its printed precision (± 0.5)",
        note="arithmetic of the configuration: 12 option bytes of a 52-byte ACK (mean ACK "
        f"size); per transfer {big['ACK bytes']:.1f} % ({big['ACK packets']:.4f}x as many "
        "ACKs: 1448-byte segments)",
    )
    report.check(
        "Eifel detection overhead on the radio, ACK direction (2 MB, RLC PDUs)",
        Info("beyond the paper: a 52-byte ACK needs two 42-byte PDUs"),
        round(big["ACK radio PDUs"], 1),
        unit="%",
    )
    return rows


def train_500mb(report: Report, jobs: int | None, fig6_out: dict[str, Any]) -> dict[str, Any]:
    """§6.1: on the express train the paper measured with one 500 MB download ("limited
    trials and measurement time"), not the four contents. The same download in tcplab, under
    both RTO profiles: STO per MB with a Poisson interval on the episode count."""
    size = 50_000_000 if report.quick else 500_000_000
    cfgs = [
        # ~3 h of simulated time at ~330 kbit/s; the downloads app stops after the one download
        scenario("train", prof, f"{size}B", 1, seed=1, duration=f"{size * 8 // 150_000}s")
        for prof in ("standard", "tuned-3g")
    ]
    res = run_configs(cfgs, jobs, columns=True)
    out: dict[str, Any] = {"size_bytes": size}
    for prof, r, paper in zip(
        ("standard", "tuned-3g"),
        res,
        (PAPER_FIG6_STD["train"], PAPER_FIG6_TUNED["train"]),
        strict=True,
    ):
        t = timeout_rows(r)
        n = int(((t["spurious"] == 1) & (t["reason"] == 0)).sum())
        mb = r["flows"][0]["bytes_delivered"] / 1e6
        done = r["flows"][0]["connections_completed"]
        v, h = n / mb, 1.96 * math.sqrt(max(n, 1)) / mb
        four = fig6_out["train"][prof]
        out[prof] = {
            "sto": n,
            "mb": mb,
            "sto_per_mb": v,
            "ci": h,
            "completed": done,
            "duration_s": r["flows"][0]["duration_s"],
        }
        report.check(
            # one item name in both modes, so --quick and the full run are compared
            f"Fig. 6 train {'standard' if prof == 'standard' else 'tuned'}: one long download "
            "(the paper's train workload: 500 MB; 50 MB with --quick)",
            Factor(paper, FACTOR, kind="calibration"),
            round(v, 3),
            ci=round(h, 3),
            unit="/MB",
            note=f"{n} STO episodes in {mb:.0f} MB ({r['flows'][0]['duration_s'] / 3600:.2f} h); "
            f"the train preset was fitted to this number on the four contents "
            f"({four[0]:.3f} ± {four[1]:.3f}/MB there); Poisson interval on the count",
        )
    return out


MISS_CAUSES = ("finished", "no_window", "dupack", "other")


def verdict_breakdown(results: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Spurious timeouts by the detector's verdict (``detected`` or a miss cause) and the
    go-back-N retransmissions after each miss (until the connection's next timeout)."""
    sto = detected = gbn = 0
    missed = dict.fromkeys(MISS_CAUSES, 0)
    for res in results:
        ev = res["events_table"]
        kinds = res["event_kinds"]
        kt, kr, kv, kd = (
            kinds.index(x)
            for x in ("timeout", "retransmit", "detector_verdict", "spurious_detected")
        )
        order = np.argsort(ev["t_ns"], kind="stable")
        per: dict[int, list[int]] = {}
        for i in order:
            if ev["kind"][i] in (kt, kr, kv, kd):
                per.setdefault(int(ev["conn"][i]), []).append(int(i))
        for rows in per.values():
            tos = [i for i in rows if ev["kind"][i] == kt]
            verdict: dict[int, str] = {}
            for i in rows:
                if ev["kind"][i] == kv and ev["reason"][i] < len(MISS_CAUSES):
                    verdict[int(ev["seq"][i])] = MISS_CAUSES[int(ev["reason"][i])]
                elif ev["kind"][i] == kd:
                    verdict[int(ev["seq"][i])] = "detected"
            for n, i in enumerate(tos):
                if ev["spurious"][i] != 1:
                    continue
                sto += 1
                v = verdict.get(n, "other")
                if v == "detected":
                    detected += 1
                    continue
                missed[v] += 1
                t0 = ev["t_ns"][i]
                t1 = ev["t_ns"][tos[n + 1]] if n + 1 < len(tos) else math.inf
                gbn += sum(
                    1
                    for j in rows
                    if ev["kind"][j] == kr and ev["reason"][j] == 1 and t0 <= ev["t_ns"][j] < t1
                )
    n_miss = sum(missed.values())
    return {
        "sto": sto,
        "detected": detected,
        "missed": missed,
        "gbn_per_miss": gbn / n_miss if n_miss else math.nan,
    }


def one_sto_throughputs(results: Sequence[dict[str, Any]]) -> list[float]:
    """Throughput (bit/s) of the downloads that had exactly one STO in slow start (§6.2.3's
    samples): one timeout, a spurious one, and no loss recovery before it, so ssthresh still
    had its initial value (the sender was in slow start)."""
    out = []
    for res in results:
        ev = res["events_table"]
        kinds = res["event_kinds"]
        to = ev["kind"] == kinds.index("timeout")
        done = ev["kind"] == kinds.index("transfer_done")
        fr = ev["kind"] == kinds.index("fast_retransmit")
        for c in set(ev["conn"][to].tolist()):
            sel = to & (ev["conn"] == c)
            if sel.sum() != 1 or ev["spurious"][sel][0] != 1:
                continue
            if (fr & (ev["conn"] == c) & (ev["t_ns"] < ev["t_ns"][sel][0])).any():
                continue  # a fast retransmit before it: ssthresh was set, not slow start
            d = done & (ev["conn"] == c)
            if d.any():
                out.append(float(ev["seq"][d][0]) * 8 / float(ev["value"][d][0]))
    return out


def table4(report: Report, fig78_out: dict[str, Any]) -> dict[str, Any]:
    """Table 4 on the §6 downloads: every STO of the Figs. 7-8 runs with F-RTO (the four
    contents in static weak, static strong, pedestrian and car, tuned RTO), by the cause the
    detector missed it; RFC 5682 F-RTO judged, Linux's shown beside it."""
    out: dict[str, Any] = {}
    for d, c in fig78_out["table4_counts"].items():
        total, causes = c["sto"], c["causes"]
        share = {k: v / total if total else math.nan for k, v in causes.items()}
        n_missed = sum(causes.values())
        out[d] = {
            "total_sto": total,
            "share": share,
            "missed": n_missed / total if total else math.nan,
        }
    rfc, lin = out["frto"], out["frto-linux"]
    n = rfc["total_sto"]
    causes = fig78_out["table4_counts"]["frto"]["causes"]
    src = (
        "Table 4: {v} of all STOs; within x2: one field campaign's share, no count or "
        "interval printed"
    )
    why = {
        "finished": "the share is set by how many STOs hit a transfer's tail, i.e. by the "
        "downloads per content, which the paper does not give (see 'Differences')",
        "no_window": "tcplab's receiver reads at once, so its window never stops step 2b's new "
        "data (a stalling receiver is not modelled; see 'Differences')",
        "dupack": "the RLC bearer delivers in order: no duplicate ACK follows a timeout unless "
        "a packet is lost (see 'Differences')",
    }
    for k, row in (
        ("finished", "STO, then the transfer ended with FIN"),
        ("no_window", "no window space for new data"),
        ("dupack", "a duplicate ACK after the timeout"),
    ):
        report.check(
            f"Table 4 miss: {k} ({row})",
            Factor(PAPER_TABLE4[k], FACTOR),
            round(rfc["share"][k], 4),
            ci=prop_ci(causes[k], n)[1],
            source=src.format(v=f"{100 * PAPER_TABLE4[k]:g} %"),
            note=f"{causes[k]} of {n} STOs (RFC 5682 F-RTO); {why[k]}",
        )
    report.check(
        "Table 4: STOs F-RTO missed in all",
        Info("context: the sum of the three causes above (and tcplab's 'other')"),
        round(rfc["missed"], 4),
        ci=prop_ci(sum(causes.values()), n)[1],
        paper=PAPER_TABLE4["total"],
        note=f"{sum(causes.values())} of {n}; other (RFC 5682 step 2a, no such row in the "
        f"paper) {rfc['share']['other']:.4f}",
    )
    report.check(
        "Table 4: STOs missed by Linux F-RTO (not the paper's)",
        Info("beyond the paper"),
        round(lin["missed"], 4),
        note=f"{lin['total_sto']} STOs; finished {lin['share']['finished']:.4f}",
    )
    lines = [
        "| F-RTO | STOs | missed | finished | no_window | dupack | other |",
        "|---|---|---|---|---|---|---|",
        "| paper (field, RFC 4138) | — | 0.29 | 0.28 | 0.007 | 0.003 | — |",
    ]
    for d, r in out.items():
        sh = r["share"]
        lines.append(
            f"| {d} | {r['total_sto']} | {r['missed']:.3f} | "
            + " | ".join(f"{sh[k]:.3f}" for k in MISS_CAUSES)
            + " |"
        )
    report.section(
        "Table 4: F-RTO misses by cause, RFC 5682 vs Linux F-RTO",
        "Shares of all spurious timeouts of the §6 downloads (the Figs. 7-8 runs: the four "
        "contents in static weak, static strong, pedestrian and car, tuned RTO). `frto` is "
        "RFC 5682, the algorithm of the paper's implementation (RFC 4138); `frto-linux` adds "
        "Linux's verdict without new data.\n\n" + "\n".join(lines),
    )
    return out


def detection_delays(res: dict[str, Any]) -> list[float]:
    """Seconds from each detected timeout to its detection."""
    ev = res["events_table"]
    kinds = res["event_kinds"]
    to = ev["kind"] == kinds.index("timeout")
    det = ev["kind"] == kinds.index("spurious_detected")
    at: dict[tuple[int, int], float] = {}
    count: dict[int, int] = {}
    for c, t in zip(ev["conn"][to], ev["t_ns"][to], strict=True):
        tid = count.get(int(c), 0)
        count[int(c)] = tid + 1
        at[(int(c), tid)] = float(t)
    return [
        (float(t) - at[(int(c), int(tid))]) * 1e-9
        for c, tid, t in zip(ev["conn"][det], ev["seq"][det], ev["t_ns"][det], strict=True)
        if (int(c), int(tid)) in at
    ]


def detectors(report: Report, jobs: int | None) -> dict[str, Any]:
    """F-RTO vs Eifel vs DSACK, each with each response, on the moving presets: detection
    share and delay, unnecessary retransmissions per STO, throughput of one-STO downloads."""
    n, seeds = (20, 2) if report.quick else (100, 8)
    sizes = mix(("300KB", "2MB"))
    combos = [
        (d, r)
        for d in ("frto", "frto-linux", "eifel", "dsack")
        for r in ("eifel", "keep-cwnd", "reno")
    ]
    combos = [("none", "reno"), *combos]
    cfgs = [
        scenario(env, "tuned-3g", sizes, n, seed=s, detection=d, response=r)
        for env in MOVING
        for d, r in combos
        for s in range(seeds)
    ]
    res = run_configs(cfgs, jobs, columns=True)
    rows = []
    k = 0
    for env in MOVING:
        for d, r in combos:
            rs = res[k : k + seeds]
            k += seeds
            fs = [x["flows"][0] for x in rs]
            sto = sum(f["spurious_timeouts"] for f in fs)
            unn = [unnecessary_per_sto(x) for x in rs]
            n_sto = sum(u[1] for u in unn)
            thr = ci95(one_sto_throughputs(rs))
            delays = [dl for x in rs for dl in detection_delays(x)]
            rows.append(
                {
                    "env": env,
                    "detector": d,
                    "response": r,
                    "sto": sto,
                    "detected_share": sum(f["spurious_detected"] for f in fs) / sto
                    if sto
                    else math.nan,
                    "detection_delay_s": float(np.mean(delays)) if delays else math.nan,
                    "unnecessary_per_sto": sum(u[0] * u[1] for u in unn if u[1]) / n_sto
                    if n_sto
                    else math.nan,
                    "one_sto_kbps": thr[0] / 1e3,
                    "one_sto_ci_kbps": thr[1] / 1e3,
                    "goodput_kbps": float(np.mean([f["goodput_bps"] for f in fs]) / 1e3),
                }
            )
    lines = [
        "| env | detector | response | STOs | detected | delay (s) | unnecessary rtx/STO "
        "| one-STO download kb/s (95% CI) | goodput kb/s |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        lines.append(
            f"| {row['env']} | {row['detector']} | {row['response']} | {row['sto']} | "
            f"{row['detected_share']:.2f} | {row['detection_delay_s']:.2f} | "
            f"{row['unnecessary_per_sto']:.1f} | {row['one_sto_kbps']:.0f} "
            f"± {row['one_sto_ci_kbps']:.0f} | {row['goodput_kbps']:.1f} |"
        )
    report.section("Detectors x responses (beyond the paper)", "\n".join(lines))
    fig, ax = plots.figure(ncols=2, size=(7.0, 4.6))
    labels = [f"{d}/{r}" for d, r in combos]
    x = np.arange(len(combos))
    for j, env in enumerate(MOVING):
        sel = [row for row in rows if row["env"] == env]
        off = (j - 1) * 0.27
        ax[0].bar(x + off, [row["unnecessary_per_sto"] for row in sel], 0.27, label=env)
        ax[1].bar(
            x + off,
            [row["one_sto_kbps"] for row in sel],
            0.27,
            yerr=[row["one_sto_ci_kbps"] for row in sel],
            capsize=2,
            label=env,
        )
    for a in ax:
        a.set_xticks(x, labels, rotation=60, ha="right", fontsize=8)
        a.legend(fontsize=8, loc="upper center", ncol=3)
    ax[0].set_ylim(0, 50)
    ax[1].set_ylim(0, 380)
    # short labels: the long ones ran off the figure
    ax[0].set_ylabel("unnecessary rtx per STO (packets)")
    ax[1].set_ylabel("one-STO downloads (kbit/s)")
    ax[0].set_xlabel("detector / response")
    ax[1].set_xlabel("detector / response")
    ax[0].set_title("detector / response, tuned RTO")
    ax[1].set_title("300 KB and 2 MB downloads")
    report.figure(
        plots.save(fig, report.out_dir / "detectors_x_responses.png"),
        "F-RTO vs Eifel vs DSACK detection, each with each response (moving presets)",
    )
    return {"rows": rows}


def analyze_row(report: Report, jobs: int | None) -> dict[str, Any]:
    """STO per MB measured by ``tcplab analyze`` on sender-side captures of the Fig. 6 runs
    (standard profile) beside the simulator's truth for the same runs."""
    import tempfile
    from pathlib import Path

    from tcplab.analyze.capture import analyze_capture

    n, seeds = (40, 4) if report.quick else (120, 6)
    sizes = mix(list(CONTENTS))
    lan = {"kind": "link", "rate": "10Gbps", "delay": "0s", "queue": 100000}
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        cfgs, files = [], []
        for env in PAPER_FIG6_STD:
            for s in range(seeds):
                f = Path(tmp) / f"{env}-{s}.pcap"
                files.append(f)
                data = {
                    "name": f"sto3g-{env}-analyze",
                    "duration": f"{max(600, n * 60)}s",
                    "seed": s,
                    "sample_interval": "0s",
                    "path": [lan, {"kind": "rlc", "name": "radio", "preset": env}],
                    "flows": [
                        {
                            "name": "download",
                            "profile": "w-tcp",
                            "rto": "standard",
                            "app": "downloads",
                            "sizes": sizes,
                            "think": "2s",
                            "downloads": n,
                        }
                    ],
                    # hop 0 is next to the sender: data as sent, ACKs as received
                    "pcap": [{"hop": 0, "dir": "both", "file": str(f)}],
                }
                cfgs.append(parse_scenario(data).to_config())
        res = run_configs(cfgs, jobs, columns=True)
        k = 0
        for env, paper in PAPER_FIG6_STD.items():
            truth, measured = [], []
            for _ in range(seeds):
                truth.append(sto_per_mb(res[k]))
                summary = analyze_capture(files[k], side="sender", collect=False).summary
                measured.append(summary["sto_per_mb"])
                k += 1
            t, m = float(np.mean(truth)), float(np.mean(measured))
            out[env] = {"truth": t, "analyze": m}
            # Not a paper prediction: tcplab analyze's measurement against the simulator's
            # own truth for the same runs (shown, not counted, as a tcplab-internal check).
            report.check(
                f"Fig. 6 STO/MB, {env}, standard RTO: `tcplab analyze` on sender-side captures",
                Within(round(t, 3), rel=0.1, kind="formula"),
                round(m, 3),
                paper=paper,
                unit="/MB",
                note=(
                    f"analyze vs the simulator's truth {t:.3f}/MB for the same runs ({seeds} runs"
                    f" of {n} downloads); the rule is analyze within 10 % of that truth"
                ),
            )
    return out


def reproduce(
    report: Report, jobs: int | None, linux: Callable[[Report, int | None], None] | None = None
) -> None:
    """The paper's figures and tables; with ``linux``, Fig. 7 again with real Linux TCP over
    the emulated bearer (``tcplab emu``; :func:`tcplab.papers.sto3g_linux.reproduce` passes
    its section)."""
    report.data["fig45"] = fig45(report, jobs)
    report.data["fig2"] = fig2(report, jobs)
    report.data["fig6"] = fig6(report, jobs)
    report.data["train_500mb"] = train_500mb(report, jobs, report.data["fig6"])
    report.data["fig78"] = fig78(report, jobs)
    report.data["eifel_overhead"] = eifel_overhead(report, jobs)
    report.data["table4"] = table4(report, report.data["fig78"])
    report.data["detectors"] = detectors(report, jobs)
    report.data["analyze_row"] = analyze_row(report, jobs)
    report.data["today_queues"] = today_queues(report, jobs)
    if linux is not None:
        linux(report, jobs)
    report.section(
        "Differences from the paper",
        """
- **Radio presets** are tcplab's calibration of the paper's qualitative environments
  (`tcplab/scenario/radio.py`, method and table there; `python -m tcplab.papers.sto3g calibrate`).
  The weak (cell-edge) preset is fitted to Fig. 2. With independent PDU errors (9% BLER), the
  standard profile gave 0.72-0.79 STO/MB at the cell edge (paper 0.18, the minimum): 94% of
  those STOs hit the first flight, whose RTO (3 x the handshake RTT, 0.82 s) is set by a 2-PDU
  SYN that rarely waits for an RLC retransmission, while nearly every 36-PDU data packet waits
  at least one. The weak preset now has correlated block errors, a Gilbert-Elliott channel as
  at a power-limited cell edge: 0.5% BLER, and 30% in slow fades of 5-20 s covering ~35% of
  the time. Handshake and first flight then see the same channel state, and weak/standard
  falls to 0.31/MB (full run) at the same Fig. 2 point (9.9% at 1.5 s). That is within x2 of
  0.18 but still above it; the best fade settings of the calibration grid that keep Fig. 2
  give 0.28-0.40/MB and none reaches 0.18: the conflict is smaller, not gone. Strong (0.35)
  and weak (0.31) are about equal under the standard profile (overlapping 95% CIs, 30 runs
  each); the paper has strong > weak. The rare long outages that keep Fig. 2 flat at ~1% from 4 s to
  10 s give ~0.06 STO/MB under the tuned profile (paper 0.01/MB). The paper's Fig. 2 and
  Fig. 6 come from different field campaigns.
- **STO per MB** counts spurious-timeout *episodes* (a stall outlasting several backed-off RTOs
  counts once); counting every expiry doubles the standard-profile bars.
- **Fig. 4/5**: the model is eqs. (1)-(10) as read in `tcplab/models/sto3g.py` (eq. (2) as the
  geometric sum up to round t_s, the spike kept in eqs. (7)/(9)); the overlay uses m = 1 MSS
  per RTT because tcplab's Reno counts bytes acknowledged. The emulation shows F-RTO+Eifel
  winning at every STO position and independent of it, but hardly the paper's "an early STO
  hurts most without F-RTO". The model restarts congestion avoidance from w_s/2 = 1.5 segments
  after an early STO; in tcplab ssthresh has RFC 5681's floor of 2 segments and the burst of
  ACKs released after the stall lifts cwnd to 3 at once, while the BDP-capped window holds 9
  whole segments. The early-STO penalty (area under the linear ramp) shrinks from ~23 packets
  in the model to ~5 in the simulation, about the size of the effect of where exactly the
  stall falls. The emulation is ~22% below the model (paper: ~15%): handshake, delayed ACKs
  with an odd BDP-capped window (9 segments) and RTT ≈ 0.38 s rather than 0.3 s.
- **Fig. 7** counts timeout and go-back-N retransmissions of connections whose timeouts were
  all spurious (the paper counts duplicates at the receiver). Figs. 7-8 are judged on the pool
  of static weak, static strong, pedestrian and car, the environments where the paper
  downloaded its four contents (on the express train it measured one 500 MB download); each
  environment, the train included, is shown in "Figs. 7-8 in each environment". With RFC 5682
  F-RTO (the paper's algorithm, below) 6 KB and 18 KB match (full run: 1.38 and 1.73 per STO;
  paper < 2). At 2 MB tcplab's F-RTO does better than the paper's: 1.42 ± 0.25 per STO (paper
  3), while without F-RTO it resends 34 (paper 28), so the cut is 24x, not the paper's 9.3x
  (shown as context: the quotient of two rows already judged). 300 KB does not match
  (3.2 ± 0.8, paper < 2). The table "where F-RTO falls back to
  go-back-N" shows why: 43 of the 328 300 KB STOs (13 %) hit the tail of the transfer, when
  everything is sent and step 2b has no new data to probe with. RFC 5682 then recovers
  conventionally and goes back N over the whole window in flight, ~12 retransmissions per such
  miss. The ACKs do not stop it. They return one per ~63 ms as the window queued in the RLC
  during the stall drains at 384 kbit/s, and each lets slow start resend 3 segments while it
  acknowledges 2, so the retransmissions stay ahead of the ACKs to the end. Linux's F-RTO
  (`frto-linux`) declares these STOs spurious on the first ACK of original data: 300 KB falls
  to 1.4 (9 misses of 334). The paper's < 2 at 300 KB means its tail STOs were rarer or cheaper
  than tcplab's. The paper gives neither its receive window nor where in a transfer its STOs
  fell.
- **The 500 MB train download** (§6.1, the paper's workload for the train's Fig. 6 bars) gives
  fewer STOs per MB than the four contents the train preset was fitted on (full run: 0.25 vs
  0.31/MB standard, 0.18 vs 0.19/MB tuned): a long download has no first flight per 2 MB and its
  RTO has converged. Both stay within x2 of the paper's 0.36 and 0.23, the standard one below
  it. Its cost: 500 MB take 3.3 h of simulated time (347 000 segments, 12.5 million RLC PDUs)
  and ~0.15 CPU-s per run.
- **Eifel detection's overhead** (§3.3): the paper's 0.8 % and 23 % are the timestamps option's
  12 bytes of a 1500-byte data packet and of a 52-byte ACK; tcplab measures them on the same
  download with and without timestamps (RFC 6691 §2: with the option a segment carries 1448
  bytes). On the radio the ACK direction pays more than the paper counts: a 40-byte ACK fits
  one 42-byte RLC PDU, a 52-byte one needs two, so half the uplink PDUs are the timestamps'.
  The other sto-3g runs keep tcplab's default `timestamps = true` with the W-TCP profile's
  1460-byte MSS (1512-byte packets, 36 PDUs like a 1500-byte one): the paper does not say
  whether its W-TCP used timestamps.
- **Fig. 8** uses, as the paper does (§6.2.3), downloads with exactly one STO in slow start:
  one timeout, a spurious one, and no fast retransmit before it (ssthresh still its initial
  value).
- **Fig. 7's count** is the sender's: timeout and go-back-N retransmissions of connections whose
  every timeout was spurious. The paper counts packets the receiver got twice (§6.2.2); a
  go-back-N retransmission lost on the radio counts here and not there. The simulator records
  no per-packet duplicate arrival at the receiver, so the paper's count is not yet measured.
- **Which F-RTO the reproduction uses**: RFC 5682 (`frto`, SACK-enhanced with SACK). The paper
  (2008) cites RFC 4138, whose step 2b, like RFC 5682's, falls back to conventional recovery
  without new data; Linux added the verdict without new data only in 3.10 (2013, commit
  e33099f96d99 "tcp: implement RFC5682 F-RTO": "the one case where it increases undo events").
  Table 4 agrees: the paper's 28% "transfer finished" misses exist only for an F-RTO that needs
  new data; Linux's F-RTO (shown beside it) misses far fewer. The Linux 2.6-era F-RTO the
  field phones' servers could have run is not modelled.
- **Table 4** is scored on the §6 downloads themselves: every STO of the Figs. 7-8 runs with
  RFC 5682 F-RTO (the four contents in static weak, static strong, pedestrian and car, tuned
  RTO), as the paper counts "all STOs of this measurement". tcplab counts an STO as "finished"
  when step 2 found no new data left (the FIN was queued; the ACKed data had all reached the
  receiver, as the paper's definition says) or when the transfer completed with the verdict
  still pending. The share depends on how many STOs hit the tail of a transfer: equal numbers of
  downloads per content (the 2 MB ones carry most bytes and most STOs) give far fewer than the
  paper's 28 %; the paper does not give its downloads per content. "other" is RFC 5682 step 2a:
  the first ACK after the timeout covers everything outstanding while data remains, mostly an
  STO on the first flight (IW 4 KB); the paper has no such row. The two small causes never
  occur in tcplab: the receiver reads at once, so its advertised window never stops step 2b's
  new data, and the RLC bearer delivers in order, so no duplicate ACK follows a timeout unless
  a packet is lost (MaxDAT drops are rare). A finite receive window with a receiving application
  that can stall (the "no window" cause) is not modelled; the paper gives neither its
  terminals' receive window nor their reading.
- **F-RTO variants**: `frto` and `frto-basic` follow RFC 5682; `frto-linux` is Linux's
  (kernel >= 3.10) and is shown beside RFC F-RTO in Fig. 7 and Table 4 only.
""",
    )


def calibration_table(jobs: int | None = None, seeds: int = 12) -> list[tuple[str, float, str]]:
    """The calibration targets of :mod:`tcplab.scenario.radio` measured with the current presets:
    (target, tcplab value, paper value)."""
    cfgs = [
        scenario(e, p, mix(list(CONTENTS)), 40, seed=s)
        for e in ENVIRONMENTS
        for p in ("standard", "tuned-3g")
        for s in range(seeds)
    ]
    sizes = {"kind": "empirical", "bins": SIZE_MIX}
    rtos = (1.5, 4.0, 10.0)
    f2_seeds = seeds // 2
    cfgs += [
        scenario("weak", {"initial": f"{r}s", "min": f"{r}s"}, sizes, 300, seed=s)
        for r in rtos
        for s in range(f2_seeds)
    ]
    cfgs += [scenario("strong", "tuned-3g", sizes, 300, seed=s) for s in range(f2_seeds)]
    res = run_configs(cfgs, jobs, columns=True)
    rows: list[tuple[str, float, str]] = []
    k = 0
    paper6 = {
        ("weak", "standard"): "0.18",
        ("train", "standard"): "0.36",
        ("weak", "tuned-3g"): "0.01",
        ("train", "tuned-3g"): "0.23",
    }
    for e in ENVIRONMENTS:
        for p in ("standard", "tuned-3g"):
            v = float(np.mean([sto_per_mb(r) for r in res[k : k + seeds]]))
            rows.append((f"Fig. 6 {e} {p} STO/MB", v, paper6.get((e, p), "—")))
            k += seeds
    paper2 = {1.5: "0.10", 4.0: "0.01", 10.0: "0.01"}
    for r in rtos:
        h = sum(conns_with_sto(x)[0] for x in res[k : k + f2_seeds])
        t = sum(conns_with_sto(x)[1] for x in res[k : k + f2_seeds])
        rows.append((f"Fig. 2 weak RTO {r} s share", h / t, paper2[r]))
        k += f2_seeds
    h = sum(conns_with_sto(x)[0] for x in res[k : k + f2_seeds])
    t = sum(conns_with_sto(x)[1] for x in res[k : k + f2_seeds])
    rows.append(("Fig. 2 strong RTO 4 s share", h / t, "0.004"))
    return rows


if __name__ == "__main__":
    import sys

    if sys.argv[1:] != ["calibrate"]:
        sys.exit("usage: python -m tcplab.papers.sto3g calibrate")
    for name, value, paper in calibration_table():
        print(f"{name:40s} tcplab {value:8.4f}   paper {paper}")


def today_queues(report: Report, jobs: int | None) -> dict[str, Any]:
    """Beyond the paper: the 3G bearer's spurious timeouts with a CoDel RLC buffer in place of
    its DropTail buffer (Fig. 6's downloads, standard RTO, same seeds; not counted)."""
    from tcplab.papers.today_queues import beyond_rows, download_throughput_bps, queue_row

    n, seeds = (40, 8) if report.quick else (120, 30)
    sizes = mix(list(CONTENTS))
    # Linux's defaults, and CoDel set for the bearer as RFC 8289 §4.2-4.3 advise: the interval
    # about the path's RTT (~300 ms), the target above one packet's time on the radio (31 ms).
    bearer = {"kind": "codel", "target": "50ms", "interval": "300ms"}
    queues: dict[str, Any] = {
        "DropTail 100": None,
        "CoDel (limit 100)": "codel",
        "CoDel 50 ms/300 ms": bearer,
    }
    keys = [(env, q, s) for env in ENVIRONMENTS for q in queues for s in range(seeds)]
    cfgs = [
        scenario(env, "standard", sizes, n, seed=s, radio={"aqm": queues[q]} if queues[q] else None)
        for env, q, s in keys
    ]
    res = run_configs(cfgs, jobs, columns=True)
    per: dict[str, dict[str, dict[str, list[float]]]] = {}
    for (env, q, _), r in zip(keys, res, strict=True):
        down = queue_row(r, kind="rlc", dir="fwd")
        t = timeout_rows(r)
        mb = max(r["flows"][0]["bytes_delivered"] / 1e6, 1e-9)
        m = per.setdefault(env, {}).setdefault(q, {})
        for key, v in (
            ("spurious timeouts", sto_per_mb(r)),
            ("genuine timeouts", float(((t["spurious"] == 0) & (t["reason"] == 0)).sum()) / mb),
            ("download throughput", download_throughput_bps(r) / 1e3),
            ("CoDel drops", float(down.get("drops_aqm") or 0) / mb),
        ):
            m.setdefault(key, []).append(v)
    units = {
        "spurious timeouts": "per MB",
        "genuine timeouts": "per MB",
        "download throughput": "kbit/s",
        "CoDel drops": "per MB",
    }
    for env in ENVIRONMENTS:
        samples = {k: {q: per[env][q][k] for q in queues} for k in units}
        del samples["CoDel drops"]["DropTail 100"]  # a DropTail buffer has no CoDel
        beyond_rows(
            report,
            f"3G bearer with today's queue, {env}",
            samples,
            units,
            f"beyond the paper: {seeds} runs of {n} downloads (Fig. 6's contents), standard RTO",
        )
    fig, ax = plots.figure()
    x = np.arange(len(ENVIRONMENTS))
    w = 0.8 / len(queues)
    for j, q in enumerate(queues):
        v = [ci95(per[e][q]["spurious timeouts"]) for e in ENVIRONMENTS]
        off = (j - (len(queues) - 1) / 2) * w
        ax.bar(x + off, [a for a, _ in v], w, yerr=[b for _, b in v], capsize=3, label=q)
    ax.set_xticks(x, ENVIRONMENTS)
    ax.set_ylabel("spurious timeouts per MB (standard RTO)")
    ax.legend()
    report.figure(
        plots.save(fig, report.out_dir / "today_queues_rlc.png"),
        "Beyond the paper: spurious timeouts with the RLC buffer DropTail or CoDel",
    )
    mean = {
        q: np.mean([np.mean(per[e][q]["spurious timeouts"]) for e in ENVIRONMENTS]) for q in queues
    }
    report.section(
        "Beyond the paper: a CoDel RLC buffer",
        f"""
CoDel in place of the RLC buffer's DropTail (same 100-packet limit, Linux's defaults: target
5 ms, interval 100 ms; the radio dequeues when it starts a packet, docs/aqm.md) on Fig. 6's
downloads with the standard RTO, and CoDel set for the bearer (target 50 ms, interval 300 ms:
RFC 8289 §4.2-4.3, the interval about the path's RTT, the target above one packet's 31 ms on the
384 kbit/s radio). Spurious timeouts per MB, mean over the five environments:
{mean["DropTail 100"]:.2f} with DropTail, {mean["CoDel (limit 100)"]:.2f} with Linux's CoDel,
{mean["CoDel 50 ms/300 ms"]:.2f} with the bearer's. With Linux's 5 ms target every packet
behind the one on the radio is already "late", so CoDel drops steadily (the drop rows), halves
the download throughput and adds genuine timeouts. A likely reason for the extra spurious
timeouts, not measured here: an emptier buffer takes the queueing delay out of the RTT samples
that padded the RTO, so a delay spike outlasts a smaller RTO more often. These rows are
tcplab's measurements of a setting the paper did not study (kind "beyond the paper"): no
verdict, not counted.
""",
    )
    return {env: per[env] for env in ENVIRONMENTS}
