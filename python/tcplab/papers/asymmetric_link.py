"""Reproduction of Kato, Kamagata, Ito (Toshiba R&D, ~1996), "TCP/IP suitable for asymmetric
wireless link" (docs/papers.md §3): a bulk download over 10 Mbps Ethernet whose ACKs return
over a slow PPP serial uplink.

Settings from the paper: window 8760 B (simulation and testbed), MSS 1460, BSD/OS 2.1 receivers
that ACK every 2nd segment (with BSD's 200 ms delayed-ACK timer), data 1500 B IP = 1526 B
Ethernet frame, ACK 40 B IP = 72 B frame, uplink 9.6-38.4 kbps (testbed) and swept further in
theory and simulation. Where the paper is silent, tcplab chooses and exposes a knob:

- ``framing="paper"``: the paper's own theory and simulation framing — every ACK is a 72-byte
  frame at 8 bits per byte on the uplink (its 18 ms "uplink single delay" at 32 kbps is
  72 x 8 / 32000). Used for Fig. 4-5, the 32 kbps point and the saturation rate.
- ``framing="ppp-8n1"``: the testbed's uplink, PPP in HDLC-like framing (RFC 1662 §3.1: flag,
  address, control, 2-byte protocol, 2-byte FCS, flag = 8 bytes per frame, no compression as the
  paper says) on an asynchronous 8N1 serial line (10 line bits per byte: a "9600 bps" line
  carries 960 B/s). Used for Table 1 (ping RTTs). Byte stuffing of 0x7E/0x7D (≈ 2/256 of random
  data) is not modelled.
- No propagation delay on either direction (a LAN and a serial cable), queue 50 packets per
  direction (BSD's ifqueue default), Reno without SACK/timestamps/window scaling, initial window
  1 segment.
- The delayed-ACK timer is BSD's: a held ACK leaves at the next tick of the free-running 200 ms
  fast timeout (``ack.timer = "periodic"``), i.e. 0-200 ms after the segment (knob
  ``bsd_timer``; it matters only when the ACK interval exceeds what the window lets arrive).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from tcplab.campaign.sweep import run_configs
from tcplab.models.asymmetric import asym_bound, asym_saturation_uplink, asym_window
from tcplab.report import plots
from tcplab.report.checks import Above, AtLeast, Below, Claim, Info, Report, Within
from tcplab.scenario.parse import parse_scenario

#: Table 1 of the paper: ping RTT [ms] by uplink rate [kbps] for 1500-byte and 40-byte pings.
TABLE1: dict[float, dict[int, float]] = {
    9.6: {1500: 1584.8, 40: 53.72},
    19.2: {1500: 796.2, 40: 27.2},
    28.8: {1500: 531.7, 40: 18.4},
    38.4: {1500: 400.2, 40: 13.9},
}
PAPER_32K_MBPS = (1.2, 1.3)  # §3.3: "about 1.2 Mbps" (measured/simulated); §3.1 theory 1.3 Mbps
PAPER_SATURATION_KBPS = 200.0  # §3.3: "around 200 kbps" (theory and simulation)
PAPER_SYMMETRIC_MBPS = 7.0  # §3.2: testbed Ethernet, both directions on 10 Mbps
PAPER_WINDOW = 8760
PAPER_BDP_WINDOW = 24000  # §3.1
MSS = 1460
DOWN_BPS = 10_000_000

#: How far the phase of BSD's free-running 200 ms delayed-ACK tick moves one run's goodput (%):
#: the uncertainty the Fig. 8 checks are judged with (deterministic runs have no seed CI).
TICK_PHASE_PCT = 5.0

#: Uplink framing profiles: (overhead bytes per frame, line bits per byte).
FRAMINGS: dict[str, tuple[int, int]] = {"paper": (32, 8), "ppp-8n1": (8, 10)}


def preset(
    up_bps: float,
    *,
    framing: str = "paper",
    window: int = PAPER_WINDOW,
    ack_every: int = 2,
    max_delay: str = "200ms",
    bsd_timer: bool = True,
    duration: str = "30s",
    ack_filter: bool | int = False,
    ack_cc: bool = False,
    abc_l: int = 1,
    down_bps: float = DOWN_BPS,
    queue: int = 50,
    pings: Sequence[int] = (),
    transfer: int | None = None,
    seed: int = 1,
    start: str | None = None,
    sample_interval: str = "0s",
) -> dict[str, Any]:
    """The asymmetric access scenario as a TOML-equivalent table: 10 Mbps Ethernet down, the
    uplink at ``up_bps`` with ``framing``; ``ack_filter`` True or a decimation threshold (RFC 3449
    §5.2.1/§5.2.2), ``ack_cc`` receiver ACK congestion control (§4.3), ``abc_l`` the RFC 3465 L.
    With ``pings`` the flow sends one segment and each size gets a ping probe from the terminal."""
    if framing not in FRAMINGS:
        raise ValueError(f"framing: must be one of {', '.join(FRAMINGS)} (got {framing!r})")
    overhead, bits = FRAMINGS[framing]
    link: dict[str, Any] = {
        "kind": "link",
        "name": "access",
        "delay": "0s",
        "queue": queue,
        "down": {"rate": f"{down_bps:g}bps", "overhead": 26},
        "up": {"rate": f"{up_bps:g}bps", "overhead": overhead, "bits_per_byte": bits},
    }
    if ack_filter is not False:
        link["ack_filter"] = True if ack_filter is True else {"threshold": int(ack_filter)}
    flow: dict[str, Any] = {
        "cc": "reno",
        "sack": False,
        "dsack": False,
        "timestamps": False,
        "window_scaling": window > 65535,
        "mss": MSS,
        "rcv_buf": window,
        "snd_buf": window,
        "initial_window": 1,
        "ack": {
            "every": ack_every,
            "max_delay": max_delay,
            "timer": "periodic" if bsd_timer else "oneshot",
        },
        "bytes": "unlimited" if transfer is None else transfer,
        "ack_cc": ack_cc,
        "abc_l": abc_l,
    }
    if start is not None:
        flow["start"] = start
    table: dict[str, Any] = {
        "name": f"asymmetric-link-{up_bps / 1e3:g}k",
        "duration": duration,
        "seed": seed,
        "sample_interval": sample_interval,
        "path": [link],
        "flows": [flow],
    }
    if pings:
        flow["bytes"] = MSS
        table["cross"] = [
            {"kind": "ping", "name": f"ping{s}", "packet_size": s, "interval": "4s", "start": "1s"}
            for s in pings
        ]
    return table


def config(**kw: Any) -> dict[str, Any]:
    """:func:`preset` validated and normalized (``Scenario.config``)."""
    up = kw.pop("up_bps")
    return parse_scenario(preset(up, **kw), "<asymmetric-link>").to_config()


def goodput_mbps(summary: dict[str, Any]) -> float:
    return float(summary["flows"][0]["goodput_bps"]) / 1e6


def ping_rtts(configs: list[dict[str, Any]], jobs: int | None) -> list[dict[str, float]]:
    """Mean RTT [ms] per ping size of each configuration."""
    out = []
    for s in run_configs(configs, jobs):
        out.append({int(p["packet_bytes"]): float(p["rtt_mean_ms"]) for p in s["pings"]})
    return out


def knee_kbps(rates_kbps: Sequence[float], mbps: Sequence[float], linear_below: float) -> float:
    """Saturation uplink rate of a throughput curve: where the ACK-clocked line through the
    origin (slope fitted on points below ``linear_below`` kbps) meets the plateau (the maximum)."""
    low = [(r, x) for r, x in zip(rates_kbps, mbps, strict=True) if r <= linear_below]
    if not low:
        raise ValueError("knee_kbps: no points in the linear region")
    slope = sum(x for _, x in low) / sum(r for r, _ in low)
    return max(mbps) / slope


def interior_optimum(xs: Sequence[float], ys: Sequence[float]) -> tuple[float, bool]:
    """The x of the maximum of ys and whether it is interior (ys falls on both sides by > 5%)."""
    i = max(range(len(ys)), key=lambda k: ys[k])
    peak = ys[i]
    interior = 0 < i < len(ys) - 1 and min(ys[:i]) < 0.95 * peak and min(ys[i + 1 :]) < 0.95 * peak
    return float(xs[i]), interior


def table1_ping(report: Report, jobs: int | None) -> None:
    """Table 1: ping RTTs on the testbed's PPP 8N1 uplink."""
    out = Path(report.out_dir)
    rates = sorted(TABLE1)
    # One probe size per run, so a small ping never waits behind a large one.
    cfgs = [
        config(up_bps=r * 1e3, framing="ppp-8n1", pings=(size,), duration="30s")
        for r in rates
        for size in (1500, 40)
    ]
    flat = ping_rtts(cfgs, jobs)
    rtts = [{**flat[2 * k], **flat[2 * k + 1]} for k in range(len(rates))]
    table1: dict[str, Any] = {}
    for r, got in zip(rates, rtts, strict=True):
        for size in (1500, 40):
            paper = TABLE1[r][size]
            report.check(
                f"Table 1: ping RTT {size} B at {r:g} kbps",
                Within(paper, rel=0.10, kind="formula"),
                round(got[size], 2),
                unit="ms",
                source="Table 1's testbed value; ±10 %: the testbed's unmodelled host latency",
                note=f"{100 * (got[size] / paper - 1):+.1f}%; arithmetic of the configuration: "
                "an idle ping's RTT is the 8N1 serial line's transmission time of the probe plus "
                "the 10 Mbit/s downlink's, which the simulation only adds up",
            )
            table1[f"{r:g}k/{size}"] = {"paper": paper, "tcplab": got[size]}
    report.data["table1"] = table1
    fig, ax = plots.figure()
    for size, color in ((1500, "C0"), (40, "C1")):
        ax.plot(rates, [g[size] for g in rtts], "o-", color=color, label=f"tcplab {size} B")
        plots.mark_paper(ax, rates, [TABLE1[r][size] for r in rates], label=f"paper {size} B")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xticks(rates, [f"{r:g}" for r in rates])
    ax.set_xticks([], minor=True)
    ax.set_xlabel("uplink rate [kbit/s]")
    ax.set_ylabel("ping RTT [ms]")
    ax.set_title("Table 1: ping RTT over the PPP (8N1) uplink")
    ax.legend()
    report.figure(plots.save(fig, out / "table1_ping_rtt.png"), "Table 1: ping RTTs")


def fig4_5_uplink_rate(report: Report, jobs: int | None, duration: str) -> None:
    """Fig. 4-5: throughput vs uplink rate, window 8760, ACK every 2nd segment."""
    quick = report.quick
    out = Path(report.out_dir)
    up_kbps = [9.6, 19.2, 28.8, 32, 38.4, 64, 100, 150, 200, 250, 300, 400, 600, 1000]
    if quick:
        up_kbps = [9.6, 19.2, 32, 38.4, 64, 100, 150, 200, 250, 300, 600, 1000]
    curves: dict[str, list[float]] = {}
    for framing in ("paper", "ppp-8n1"):
        res = run_configs(
            [config(up_bps=k * 1e3, framing=framing, duration=duration) for k in up_kbps], jobs
        )
        curves[framing] = [goodput_mbps(s) for s in res]
    model = [asym_bound(DOWN_BPS, k * 1e3, window=PAPER_WINDOW) / 1e6 for k in up_kbps]
    sym = goodput_mbps(
        run_configs([config(up_bps=DOWN_BPS, framing="paper", duration=duration)], 1)[0]
    )
    report.data["fig4_5"] = {"up_kbps": up_kbps, "model": model, **curves, "symmetric": sym}
    fig, axes = plots.figure(ncols=2)
    for ax, log in zip(axes, (False, True), strict=True):
        ax.plot(up_kbps, model, "k--", label="model (paper §3.1, 72 B ACK frames)")
        ax.plot(up_kbps, curves["paper"], "o-", label="tcplab, paper framing")
        ax.plot(up_kbps, curves["ppp-8n1"], "^-", label="tcplab, testbed model (PPP 8N1 uplink)")
        ax.axvspan(9.6, 38.4, color="grey", alpha=0.12, label="testbed rates (no numbers)")
        plots.mark_paper(ax, [32, 32], list(PAPER_32K_MBPS), label="paper 32 kbps (1.2-1.3)")
        ax.axvline(PAPER_SATURATION_KBPS, color="grey", lw=0.8, ls=":", label="paper saturation")
        ax.set_xlabel("uplink rate [kbit/s]")
        ax.set_ylabel("goodput [Mbit/s]")
        if log:
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_title("Fig. 5 (log axes)")
        else:
            ax.set_xlim(0, 400)
            ax.set_title("Fig. 4: throughput vs uplink rate (window 8760 B, ACK every 2)")
        ax.legend(fontsize=7)
    report.figure(plots.save(fig, out / "fig4_5_uplink_rate.png"), "Fig. 4-5")

    i32 = up_kbps.index(32)
    x32 = curves["paper"][i32]
    # §3.3: "about 1.2 Mbps" from the simulation (1.3 Mbit/s from theory): 1.2 ± 10 %.
    report.check(
        "32 kbps uplink: throughput (paper framing)",
        Within(1.2, rel=0.10),
        round(x32, 3),
        paper="≈ 1.2 (theory 1.3)",
        unit="Mbit/s",
        source="§3.3: 'about 1.2 Mbps' (約 1.2Mbps); 'about' read as ±10 %",
        note="deterministic run: no CI",
    )
    y32 = curves["ppp-8n1"][i32]
    report.check(
        "32 kbps uplink: throughput (PPP 8N1 uplink)",
        Info("context: the testbed's real framing"),
        round(y32, 3),
        unit="Mbit/s",
        note="a 40 B ACK is 48 B x 10 bits = 480 line bits, not the paper's 576: 15 ms per ACK",
    )
    # Fig. 4's testbed curve (ttcp at 9.6-38.4 kbps; the text gives no numbers): "slope and
    # absolute value smaller than theory and simulation". tcplab's testbed model is the PPP 8N1
    # uplink of Table 1 with ideal hosts.
    tb = [k for k in up_kbps if k <= 38.4]
    tb_ratio = [curves["ppp-8n1"][up_kbps.index(k)] / curves["paper"][up_kbps.index(k)] for k in tb]
    report.check(
        "Fig. 4: testbed curve below the simulation (PPP 8N1 uplink / paper framing)",
        Below(1),
        [round(r, 3) for r in tb_ratio],
        ci=[round(r * TICK_PHASE_PCT / 100, 3) for r in tb_ratio],
        paper="lower (slope and value; figure only)",
        unit="x",
        source="§3.3: the testbed's slope and value are smaller than theory and simulation",
        note=f"at {', '.join(f'{k:g}' for k in tb)} kbps; ± the delayed-ACK tick's 5 %. The "
        "testbed's own 40 B ping RTTs (Table 1) put an ACK on the serial line in 13.9 ms at "
        "38.4 kbps, an ACK clock of 2 x 1460 B / 13.9 ms = 1.68 Mbit/s, above the paper's "
        "1.56 Mbit/s theory there: the uplink cannot explain the lower testbed. The paper blames "
        "PPP overhead and host processing; its Pentium-90 hosts reached only 7 Mbit/s on "
        "symmetric Ethernet. tcplab's hosts are ideal",
    )
    report.check(
        "32 kbps: model bound (paper §3.1: 2·1460 B / 18 ms)",
        Within(1.3, rel=0.02, kind="formula"),
        round(model[i32], 3),
        unit="Mbit/s",
    )
    report.check(
        "required window (paper §3.1)",
        Within(PAPER_BDP_WINDOW, rel=0.02, kind="formula"),
        round(asym_window(DOWN_BPS, 32e3)),
        unit="B",
    )
    report.check(
        "symmetric 10 Mbps throughput",
        Info("context: the paper's testbed hosts"),
        round(sym, 2),
        paper=PAPER_SYMMETRIC_MBPS,
        unit="Mbit/s",
        note="not a claim about TCP: the paper's 7 Mbps is what its Pentium-90 hosts managed "
        "(measured), tcplab's hosts are ideal",
    )
    report.check(
        "asymmetric/symmetric ratio at 32 kbps",
        Info("context: divides by the testbed's host-limited 7 Mbps"),
        f"1/{sym / x32:.1f}",
        paper="≈ 1/6",
        note="paper: 1.2 Mbps (sim) over 7 Mbps (testbed); tcplab: both simulated",
    )
    # §3.3: "around 200 kbps" (theory and simulation); its own arithmetic gives 236: ± 20 %.
    for framing, label in (("paper", "paper framing"), ("ppp-8n1", "PPP 8N1 uplink")):
        knee = knee_kbps(up_kbps, curves[framing], 64)
        report.check(
            f"saturation uplink rate ({label})",
            Within(PAPER_SATURATION_KBPS, rel=0.20, kind="formula"),
            round(knee, 1),
            unit="kbit/s",
            source="§3.3: 'around 200 kbps'; ±20 % spans its own arithmetic, 236 kbit/s",
            note="knee of the simulated curve: ACK-clock line meets the plateau. Arithmetic "
            "of the configuration: the line is the ACK clock (uplink rate / ACK frame x 2 "
            "segments) and the plateau the downlink rate, so the knee is their quotient",
        )
    report.check(
        "saturation uplink rate (model, 409 ACK/s x 72 B)",
        Within(236, rel=0.02, kind="formula"),
        round(asym_saturation_uplink(DOWN_BPS) / 1e3, 1),
        paper="≈ 236 (§3.3)",
        unit="kbit/s",
    )


def fig9_ack_interval(
    report: Report, jobs: int | None, duration: str
) -> tuple[list[int], dict[int, list[float]]]:
    """Fig. 9: throughput vs ACK interval for several windows (32 kbps); returns the ACK
    intervals and the curves."""
    quick = report.quick
    out = Path(report.out_dir)
    acks = list(range(1, 17)) if not quick else [1, 2, 3, 4, 5, 6, 8, 10, 12, 16]
    windows9 = [PAPER_WINDOW, 16384, 32768]
    fig9: dict[int, list[float]] = {}
    for w in windows9:
        res = run_configs(
            [config(up_bps=32e3, window=w, ack_every=n, duration=duration) for n in acks], jobs
        )
        fig9[w] = [goodput_mbps(s) for s in res]
    report.data["fig9"] = {"ack_every": acks, **{str(w): v for w, v in fig9.items()}}
    fig, ax = plots.figure()
    for w in windows9:
        ax.plot(acks, fig9[w], "o-", label=f"tcplab, window {w} B")
        best, _ = interior_optimum(acks, fig9[w])
        ax.axvline(best, color=ax.lines[-1].get_color(), lw=0.6, ls=":")
    ax.set_xlabel("ACK interval [full segments per ACK]")
    ax.set_ylabel("goodput [Mbit/s]")
    ax.set_title("Fig. 9: throughput vs ACK interval (32 kbps uplink)")
    ax.legend(fontsize=8)
    report.figure(plots.save(fig, out / "fig9_ack_interval.png"), "Fig. 9")
    optima = {w: interior_optimum(acks, fig9[w]) for w in windows9}
    report.check(
        "Fig. 9: the ACK interval has an optimum for a given window",
        Claim(
            "for each window (8760, 16384, 32768 B): argmax interior, ≥ 5% lower on both sides",
            all(interior for _, interior in optima.values()),
        ),
        ", ".join(
            f"{w} B: N = {best:g} ({max(fig9[w]):.2f} Mbit/s)" for w, (best, _) in optima.items()
        ),
        paper="yes (figure, no numbers)",
        source="§5: 'an optimum ACK interval exists for a window size'; 5 %: the delayed-ACK "
        "tick's run-to-run spread",
    )
    return acks, fig9


def _steady(ts: dict[str, Any], t0_s: float) -> Any:
    return ts["t_ns"] >= int(t0_s * 1e9)


def fig6_window_shortage(report: Report, jobs: int | None, duration: str) -> None:
    """Fig. 6 and §3.1: "throughput lost to a window shortage". At 32 kbps the paper requires a
    window above the BDP, 10 Mbps x (1.2 + 18) ms ≈ 24000 B, more than twice the usual 8760 B.
    The download with 8760 B and with 24000 B, ACK every 2nd segment, started at several phases
    of BSD's free-running 200 ms delayed-ACK tick (the only thing that moves a run: the
    interval over phases is the CI); the sender's flight against its window from 1 ms samples."""
    import numpy as np

    out = Path(report.out_dir)
    wins = (PAPER_WINDOW, PAPER_BDP_WINDOW)
    phases_ms = [0, 50, 100, 150] if report.quick else list(range(0, 200, 20))
    keys = [(w, ph) for w in wins for ph in phases_ms]
    res = run_configs(
        [
            config(
                up_bps=32e3,
                window=w,
                duration=duration,
                start=f"{ph}ms",
                sample_interval="1ms",
            )
            for w, ph in keys
        ],
        jobs,
        columns=True,
    )
    good = {
        w: [goodput_mbps(r) for (ww, _), r in zip(keys, res, strict=True) if ww == w] for w in wins
    }
    first = {w: next(r for (ww, _), r in zip(keys, res, strict=True) if ww == w) for w in wins}
    # steady state: from 2 s on (slow start from one segment is over well before)
    limited, srtt = {}, {}
    for w in wins:
        shares, rtts = [], []
        for (ww, _), r in zip(keys, res, strict=True):
            if ww != w:
                continue
            ts = r["timeseries_table"]
            sel = _steady(ts, 2.0)
            # window-limited: less than one segment of the advertised window left to send
            shares.append(100 * float(np.mean(ts["inflight"][sel] > w - MSS)))
            rtts.append(float(np.mean(ts["srtt_ns"][sel])) / 1e6)
        limited[w], srtt[w] = float(np.mean(shares)), float(np.mean(rtts))
    report.data["fig6"] = {
        "phases_ms": phases_ms,
        "goodput_mbps": {str(w): v for w, v in good.items()},
        "window_limited_pct": {str(w): v for w, v in limited.items()},
        "srtt_ms": {str(w): v for w, v in srtt.items()},
    }
    fig, axes = plots.figure(ncols=2, size=(5.2, 4.2))
    t_a, t_b = 5.0, 5.4
    for k, w in enumerate(wins):
        ts = first[w]["timeseries_table"]
        sel = (ts["t_ns"] >= int(t_a * 1e9)) & (ts["t_ns"] <= int(t_b * 1e9))
        t_ms = (ts["t_ns"][sel] - int(t_a * 1e9)) / 1e6
        d = ts["delivered"][sel].astype(float)
        color = f"C{k}"
        axes[0].plot(t_ms, (d - d[0]) / 1e3, color=color, label=f"window {w} B")
        axes[1].step(
            t_ms,
            ts["inflight"][sel] / 1e3,
            where="post",
            color=color,
            label=f"window {w} B: in flight",
        )
        axes[1].axhline(w / 1e3, color=color, ls="--", lw=0.8)
    axes[0].set_xlabel(f"time from t = {t_a:g} s [ms]")
    axes[0].set_ylabel("data delivered [kB]")
    axes[0].set_title("delivered: the same slope (the ACK clock)")
    axes[0].legend(fontsize=8, loc="upper left")
    axes[1].set_xlabel(f"time from t = {t_a:g} s [ms]")
    axes[1].set_ylabel("bytes in flight [kB] (dashed: window)")
    axes[1].set_title("in flight: both windows full")
    axes[1].set_ylim(0, PAPER_BDP_WINDOW / 1e3 * 1.35)
    axes[1].legend(fontsize=8, loc="upper left")
    fig.suptitle("Fig. 6: window shortage at 32 kbit/s uplink, ACK every 2 (tcplab)")
    report.figure(
        plots.save(fig, out / "fig6_window_shortage.png"),
        "Fig. 6: window shortage (8760 B vs the 24000 B the paper requires)",
    )
    # rounded to 0.01 %: runs the tick's phase does not move give one value, not a 1e-14 CI
    ratio = [
        round(100 * a / b, 2)
        for a, b in zip(good[PAPER_WINDOW], good[PAPER_BDP_WINDOW], strict=True)
    ]
    report.check(
        "§3.1: a window below the BDP (8760 < 24000 B) limits throughput (ACK every 2, 32 kbps)",
        Below(90),
        None,
        samples=ratio,
        paper="limited (window must exceed 24000 B; Fig. 6)",
        unit="% of the 24000 B window's",
        source="§3.3/Fig. 6: throughput falls for lack of window (no value); < 90 %: a loss "
        "beyond twice the tick's ±5 %",
        note=f"{len(phases_ms)} phases of the 200 ms delayed-ACK tick; "
        f"{sum(good[PAPER_WINDOW]) / len(phases_ms):.3f} vs "
        f"{sum(good[PAPER_BDP_WINDOW]) / len(phases_ms):.3f} Mbit/s. The BDP uses the 10 Mbps "
        "downlink rate, but the ACK clock caps the flow at ≈ 1.3 Mbit/s, whose pipe is 1.3 "
        "Mbit/s x 19.2 ms ≈ 3.1 kB: 8760 B (6 segments) already keeps the uplink saturated with "
        "ACKs. The paper's required window is a bound for the 10 Mbps path, not for the "
        "ACK-limited one",
    )
    report.check(
        "Fig. 6: share of time the sender's window is full, 8760 B / 24000 B",
        Info("the mechanism: why a larger window does not help"),
        f"{limited[PAPER_WINDOW]:.0f} % / {limited[PAPER_BDP_WINDOW]:.0f} %",
        note="in flight within one segment of the window (1 ms samples from 2 s on); the sender "
        "waits for window-opening ACKs with either window",
    )
    report.check(
        "Fig. 6: smoothed RTT, 8760 B / 24000 B",
        Info("the extra window waits as ACKs in the uplink queue"),
        f"{srtt[PAPER_WINDOW]:.0f} / {srtt[PAPER_BDP_WINDOW]:.0f}",
        unit="ms",
        note="RTT ≈ window / ACK-clocked rate: the larger window lengthens the ACK queue, not "
        "the rate",
    )


def fig8_window(report: Report, jobs: int | None, duration: str) -> list[int]:
    """Fig. 8: throughput vs window for fixed ACK intervals (32 kbps), and the required-window
    claim of §3.1; returns the windows."""
    quick = report.quick
    out = Path(report.out_dir)
    wins = [4380, 8760, 13140, 17520, 24000, 32768, 49152, 65535]
    if quick:
        wins = [4380, 8760, 17520, 24000, 32768, 65535]
    acks8 = [2, 4, 8]
    fig8: dict[int, list[float]] = {}
    for n in acks8:
        res = run_configs(
            [config(up_bps=32e3, window=w, ack_every=n, duration=duration) for w in wins], jobs
        )
        fig8[n] = [goodput_mbps(s) for s in res]
    report.data["fig8"] = {"window": wins, **{str(n): v for n, v in fig8.items()}}
    fig, ax = plots.figure(size=(6.4, 5.0))
    for n in acks8:
        ax.plot([w / 1024 for w in wins], fig8[n], "o-", label=f"tcplab, ACK every {n}")
        ax.axhline(asym_bound(DOWN_BPS, 32e3, ack_every=n) / 1e6, color="grey", lw=0.6, ls="--")
    ax.axvline(PAPER_BDP_WINDOW / 1024, color="k", lw=0.6, ls=":", label="BDP window (§3.1)")
    ax.set_xlabel("window [KiB]")
    ax.set_ylabel("goodput [Mbit/s]")
    ax.set_title("Fig. 8: throughput vs window (32 kbps)\ndashed: model bound per ACK interval")
    # below the axes: inside, every corner has a curve or a bound line
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2)
    report.figure(plots.save(fig, out / "fig8_window.png"), "Fig. 8")
    # One claim each ("the window helps", "only up to a point"), judged on every ACK interval
    # drawn: one miss misses. Both as shares of the best window's goodput, with ±5 %: the BSD
    # 200 ms tick's phase moves these runs by that much (section "Where tcplab differs").
    rises = [round(100 * fig8[n][0] / max(fig8[n]), 1) for n in acks8]
    beyond = {
        n: [y for w, y in zip(wins, fig8[n], strict=True) if w >= PAPER_BDP_WINDOW] for n in acks8
    }
    report.check(
        "Fig. 8: the window helps: smallest window / best, ACK every 2, 4, 8",
        Below(90),
        rises,
        ci=[TICK_PHASE_PCT] * len(acks8),
        paper="rises",
        unit="%",
        source="§4.1: a larger window raises throughput; < 90 %: a rise beyond twice the "
        "tick's ±5 %",
        note="; ".join(
            f"ACK every {n}: {fig8[n][0]:.2f} of {max(fig8[n]):.2f} Mbit/s at {wins[0]} B"
            for n in acks8
        )
        + ". ACK every 2 hardly rises: even 3 segments (4380 B) keep the 55 ACK/s uplink "
        "nearly busy (see the required-window check)",
    )
    report.check(
        "Fig. 8: only up to a point: worst window ≥ 24000 B / best, ACK every 2, 4, 8",
        AtLeast(90),
        [round(100 * min(beyond[n]) / max(fig8[n]), 1) for n in acks8],
        ci=[TICK_PHASE_PCT] * len(acks8),
        paper="plateau",
        unit="%",
        source="§4.3: beyond a certain window it no longer improves; ≥ 90 %: within twice the "
        "tick's ±5 %",
        note="; ".join(
            f"ACK every {n}: {min(beyond[n]):.2f}-{max(beyond[n]):.2f} Mbit/s" for n in acks8
        ),
    )
    return wins


def fig7_improved(
    report: Report, jobs: int | None, duration: str, acks: list[int], fig9: dict[int, list[float]]
) -> list[float]:
    """Fig. 7: after the improvement (window, Fig. 9's optimal ACK interval) vs uplink rate;
    returns the uplink rates."""
    out = Path(report.out_dir)
    up7 = [9.6, 19.2, 32, 38.4, 64, 100, 200, 400, 1000]
    improved_window = 32768
    best_n, _ = interior_optimum(acks, fig9[improved_window])
    variants7 = {
        "before: window 8760, ACK every 2": {"window": PAPER_WINDOW, "ack_every": 2},
        "window 32 KiB, ACK every 2": {"window": improved_window, "ack_every": 2},
        f"window 32 KiB, ACK every {best_n:g} (Fig. 9 optimum)": {
            "window": improved_window,
            "ack_every": int(best_n),
        },
    }
    fig7: dict[str, list[float]] = {}
    for label, kw in variants7.items():
        res = run_configs([config(up_bps=k * 1e3, duration=duration, **kw) for k in up7], jobs)
        fig7[label] = [goodput_mbps(s) for s in res]
    report.data["fig7"] = {"up_kbps": up7, **fig7}
    fig, ax = plots.figure()
    # "before" and "32 KiB, ACK every 2" nearly coincide: the first drawn wide and pale under
    # the second, dashed, so both stay visible.
    styles = [{"lw": 5, "alpha": 0.4, "ms": 9}, {"ls": "--", "marker": "^"}, {}]
    for (label, ys), style in zip(fig7.items(), styles, strict=True):
        ax.plot(up7, ys, **{"marker": "o", **style}, label=f"tcplab, {label}")
    ax.axvspan(9.6, 38.4, color="grey", alpha=0.12, label="the paper's testbed rates")
    ax.set_xscale("log")
    ax.set_xlabel("uplink rate [kbit/s]")
    ax.set_ylabel("goodput [Mbit/s]")
    ax.set_title("Fig. 7: after improvement, vs uplink rate")
    ax.legend(fontsize=8)
    report.figure(plots.save(fig, out / "fig7_improved.png"), "Fig. 7")
    before, after = next(iter(fig7.values())), list(fig7.values())[-1]
    i32 = up7.index(32)
    report.check(
        "Fig. 7: improvement raises throughput at 32 kbps (after / before)",
        Above(1.0),
        round(after[i32] / before[i32], 2),
        paper="higher (figure, no numbers)",
        unit="x",
        source="§4.3: the proposal improves performance; no value printed, so the rule is "
        "the claim (higher), not a tcplab-chosen margin",
        note=f"{before[i32]:.2f} → {after[i32]:.2f} Mbit/s",
    )
    # §4.3: "the proposal improves performance without being affected by the transmission
    # rate" (伝送速度に影響されずに). Figs. 7-9 are testbed measurements, so over the
    # testbed's uplink rates: the improved throughput at the slowest rate against the fastest.
    tb = [k for k in up7 if k <= 38.4]
    flat = 100 * after[up7.index(tb[0])] / after[up7.index(tb[-1])]
    report.check(
        "Fig. 7: the improved throughput does not depend on the uplink rate "
        f"({tb[0]:g} vs {tb[-1]:g} kbps)",
        AtLeast(90),
        round(flat, 1),
        ci=TICK_PHASE_PCT,
        paper="not affected by the rate",
        unit="%",
        source="§4.3: 'without being affected by the transmission rate'; ≥ 90 %: twice the "
        "delayed-ACK tick's ±5 %",
        note=f"{after[up7.index(tb[0])]:.2f} vs {after[up7.index(tb[-1])]:.2f} Mbit/s: with "
        f"ACK every {best_n:g} the flow is still ACK-clocked below ≈ 64 kbit/s (the uplink "
        f"carries 1 ACK per {best_n:g} x 1460 B), so its rate scales with the uplink rate "
        "like the plain curve's, only higher. The paper's hosts were testbed PCs (7 Mbit/s on "
        "symmetric Ethernet): a host-limited ceiling below the ACK clock would flatten its "
        "curve; tcplab's hosts are ideal",
    )
    gains = [round(a / b, 2) for a, b in zip(after, before, strict=True)][: len(tb)]
    report.check(
        "Fig. 7: the other reading, the gain (after / before) at each testbed rate",
        Info("context: the same sentence read as 'the gain is the same at every rate'"),
        gains,
        unit="x",
        note=f"at {', '.join(f'{k:g}' for k in tb)} kbps",
    )
    return up7


def mitigations(
    report: Report,
    jobs: int | None,
    duration: str,
    up7: list[float],
    wins: list[int],
    acks: list[int],
) -> None:
    """RFC 3449 mitigations on the Fig. 7-9 curves, and byte counting on a short transfer
    (beyond the paper)."""
    out = Path(report.out_dir)
    mitigations: dict[str, dict[str, Any]] = {
        "none": {},
        "ACK filtering (§5.2.1)": {"ack_filter": True},
        "ACK decimation T=2 (§5.2.2)": {"ack_filter": 2},
        "ACK congestion control (§4.3)": {"ack_cc": True},
        "byte counting L=2 (§4.7, RFC 3465)": {"abc_l": 2},
    }
    mit: dict[str, dict[str, list[float]]] = {}
    mw = 32768
    for label, kw in mitigations.items():
        a = run_configs(
            [config(up_bps=k * 1e3, window=mw, duration=duration, **kw) for k in up7], jobs
        )
        b = run_configs(
            [config(up_bps=32e3, window=w, duration=duration, **kw) for w in wins], jobs
        )
        c = run_configs(
            [config(up_bps=32e3, window=mw, ack_every=n, duration=duration, **kw) for n in acks],
            jobs,
        )
        mit[label] = {
            "rate": [goodput_mbps(s) for s in a],
            "window": [goodput_mbps(s) for s in b],
            "ack": [goodput_mbps(s) for s in c],
        }
    report.data["mitigations"] = {"up_kbps": up7, "window": wins, "ack_every": acks, **mit}
    fig, axes = plots.figure(ncols=3, size=(5.2, 4.2))
    for label, d in mit.items():
        # "none" drawn last, black and dashed, so a mitigation without effect shows as such
        style: dict[str, Any] = (
            {"color": "black", "ls": "--", "lw": 1.2, "zorder": 5}
            if label == "none"
            else {"marker": "o", "ms": 3}
        )
        axes[0].plot(up7, d["rate"], label=label, **style)
        axes[1].plot([w / 1024 for w in wins], d["window"], label=label, **style)
        axes[2].plot(acks, d["ack"], label=label, **style)
    axes[0].set_xscale("log")
    axes[0].set_xlabel("uplink rate [kbit/s]")
    axes[0].set_title(f"vs uplink rate (window {mw // 1024} KiB, ACK every 2)")
    axes[1].set_xlabel("window [KiB]")
    axes[1].set_title("vs window (32 kbps, ACK every 2)")
    axes[2].set_xlabel("ACK interval [segments]")
    axes[2].set_title(f"vs ACK interval (32 kbps, window {mw // 1024} KiB)")
    for ax in axes:
        ax.set_ylabel("goodput [Mbit/s]")
    axes[0].legend(fontsize=7)
    report.figure(plots.save(fig, out / "mitigations.png"), "RFC 3449 mitigations")
    base32 = mit["none"]["rate"][up7.index(32)]
    for label in list(mitigations)[1:]:
        v = mit[label]["rate"][up7.index(32)]
        report.check(
            f"mitigation at 32 kbps, window 32 KiB: {label}",
            Info("not in the paper"),
            f"{base32:.2f} → {v:.2f}",
            unit="Mbit/s",
        )

    # Byte counting matters while cwnd grows: a 64 KB transfer with ACK filtering.
    short = []
    for limit in (1, 2):
        res = run_configs(
            [config(up_bps=32e3, window=65535, ack_filter=True, abc_l=limit, transfer=65536)], 1
        )
        short.append(res[0]["flows"][0]["duration_s"])
    report.check(
        "64 KB transfer with ACK filtering: ABC L=1 vs L=2",
        Info("not in the paper (RFC 3465 §2.2)"),
        f"{short[0]:.3f} s → {short[1]:.3f} s",
    )
    report.data["abc_transfer_s"] = {"L=1": short[0], "L=2": short[1]}


def reproduce(
    report: Report,
    jobs: int | None = None,
    linux: Callable[[Report, int | None], None] | None = None,
) -> None:
    """Table 1, Fig. 4-9 and the RFC 3449 mitigations, one function each; with ``linux``,
    real Linux hosts over the emulated link (:func:`tcplab.papers.asymmetric_linux.reproduce`
    passes its section)."""
    start = time.perf_counter()
    duration = "10s" if report.quick else "60s"
    table1_ping(report, jobs)
    fig4_5_uplink_rate(report, jobs, duration)
    acks, curves9 = fig9_ack_interval(report, jobs, duration)
    fig6_window_shortage(report, jobs, duration)
    wins = fig8_window(report, jobs, duration)
    up7 = fig7_improved(report, jobs, duration, acks, curves9)
    mitigations(report, jobs, duration, up7, wins, acks)
    if linux is not None:
        linux(report, jobs)
    report.section(
        "Setup and choices",
        (__doc__ or "").split("\n\n", 1)[1]
        + f"\n\nRun length per point: {duration} of simulated time. Wall time: "
        f"{time.perf_counter() - start:.1f} s.",
    )
    report.section(
        "Where tcplab differs from the paper",
        "- Table 1: the 40-byte RTTs come out 7-10% below the testbed's. A straight-line fit of "
        "the paper's own numbers gives ≈ 51 line bytes per 40-byte ping and ≈ 0.6 ms fixed delay "
        "(≈ 1516 bytes and 5 ms for 1500 B pings); tcplab's PPP 8N1 framing gives 48 bytes and no "
        "host/UART latency. Not calibrated away: the processing delay is not in the paper.\n"
        "- 32 kbps: with the paper's framing (72 B ACK frames at 8 bits/byte) tcplab gives the "
        "paper's 1.3 Mbit/s theory. With the testbed's real PPP 8N1 framing an ACK is 480 line "
        "bits instead of 576, so the ACK clock is 20% faster (≈ 1.55 Mbit/s); the paper reports "
        "the testbed below theory, which it attributes to PPP overhead and host processing — a "
        "host processing delay per ACK that tcplab does not model.\n"
        "- Symmetric Ethernet: tcplab's hosts are ideal (≈ 9.5 Mbit/s goodput); the paper "
        "measured ≈ 7 Mbit/s on Pentium-90 PCs.\n"
        "- Fig. 4's testbed curve (no numbers in the text) lies below theory and simulation in "
        "the paper; tcplab's testbed model (Table 1's PPP 8N1 uplink, ideal hosts) lies ≈ 20 % "
        "above them, because a 40-byte ACK costs 480 line bits instead of the theory's 576. "
        "Even Table 1's measured 40 B ping RTTs (13.9 ms at 38.4 kbps, host latency included) "
        "give an ACK clock above the theory, so the testbed's deficit is in the hosts (the "
        "7 Mbit/s symmetric figure says the same), which tcplab does not model: a miss, not "
        "calibrated away.\n"
        "- Fig. 6 (window shortage): the paper requires a window above the 10 Mbps BDP, 24000 B. "
        "At 32 kbps the ACK clock (≈ 55 ACKs/s) limits the flow to ≈ 1.3 Mbit/s with 8760 B and "
        "with 24000 B alike: with either window the sender's window is full all the time, and "
        "the larger window only waits as ACKs in the uplink queue (smoothed RTT ≈ 54 vs 146 ms). "
        "8760 B reaches 98 % of the 24000 B window's throughput: a miss.\n"
        "- Fig. 6-9 of the paper are figures without numbers in the text: tcplab checks the "
        "claims (window shortage, plateau in window, interior optimum in ACK interval, "
        "improvement vs uplink rate), not point values.\n"
        "- BSD's periodic delayed-ACK tick fires every 200 ms whatever the receiver holds, so a "
        "few ACKs per second acknowledge fewer than N segments and waste an uplink slot; which "
        "depends on the tick's phase, so throughput beyond the BDP window wanders by ±5% "
        "(Fig. 8). The one-shot timer (``bsd_timer=False``) does not show it.\n"
        "- Fig. 7: with a large fixed ACK interval the improved curve stays below the plain one at "
        "fast uplinks. That is start-up, not steady state: with an initial window of one segment "
        "the receiver gets fewer than N segments per round and ACKs only on its 200 ms timer "
        "until cwnd reaches N (it grows by one segment per ACK), which costs seconds of a short "
        "run. Adaptive ACK ratios (RFC 3449 §4.3) start at 2 and avoid it.\n"
        "- Fig. 7's 'improves performance without being affected by the transmission rate': "
        "Figs. 7-9 were measured on the testbed (9.6-38.4 kbit/s). In tcplab the improved "
        "flow (32 KiB, Fig. 9's ACK interval) is still ACK-clocked there, one ACK per N "
        "segments, so its goodput scales with the uplink rate like the plain curve (a miss "
        "measured in the Fig. 7 row); only the gain after/before is about the same at every "
        "testbed rate (the context row beside it). A host-limited ceiling such as the testbed "
        "PCs' 7 Mbit/s would flatten the paper's curve; tcplab's hosts are ideal.\n"
        "- Table 1 and the saturation rate are counted as formulas: an idle ping's RTT is the "
        "serial line's transmission time of the probe plus the downlink's, and the knee of the "
        "throughput curve is the downlink rate over the ACK clock; the simulation only adds "
        "them up.",
    )
