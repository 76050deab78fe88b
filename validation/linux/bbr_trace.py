"""The kernel's BBR and tcplab's over time on one validation case: cwnd, pacing rate and
delivery rate of both stacks, and when each leaves STARTUP.

    sudo python validation/linux/bbr_trace.py [--rate-mbps 20] [--rtt-ms 300] [--queue 250]
                                              [--loss 0] [--seed 1000] [--until 7]
                                              [--save-linux FILE.json | --linux FILE.json]
                                              [--out FILE.png]

Runs the case once on the validation testbed (real Linux endpoints through ``tcplab emu``, cc
bbr; root, TUN, iproute2; wrap it in the real-time lock on a shared machine) and once in tcplab
(``stack = "linux"``, the same seed, ideal timing). The Linux sender samples ``TCP_INFO`` and
``TCP_CC_INFO`` every 20 ms: cwnd, ``tcpi_pacing_rate``, ``tcpi_delivery_rate`` and BBR's
bandwidth estimate and pacing gain; tcplab's time series gives cwnd, ``pacing_rate_bps`` and
``delivery_rate_bps``. ``--linux FILE`` plots a run saved with ``--save-linux`` instead of
running Linux (no root needed). Prints the retransmissions and the time each stack entered
DRAIN (the first finite ssthresh: ``bbr_check_drain`` sets it then) and, for Linux, the
time its pacing gain first fell below STARTUP's. docs/linux-stack.md ("BBR") quotes it.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

#: Linux's bbr_high_gain in 1/256 (STARTUP's pacing and cwnd gain).
HIGH_GAIN = 739
#: An ssthresh at or above this many segments is Linux's "infinite" one.
INF_SEGMENTS = 1_000_000


def linux_samples(case: Any, seed: int) -> dict[str, Any]:
    """One run of ``case`` on the testbed: the sender's samples and final ``tcp_info``."""
    from tcplab.real.validate.compare import linux_transfer
    from tcplab.real.validate.netlab import Testbed

    with Testbed() as tb:
        tr = linux_transfer(tb, case, seed=seed)
    return {"samples": tr.sender["samples"], "final": tr.sender["final"]}


def tcplab_series(case: Any, seed: int) -> tuple[dict[str, np.ndarray], int]:
    """tcplab's time series of ``case`` (``stack = "linux"``) and its retransmissions."""
    from tcplab.campaign.sweep import run_config
    from tcplab.real.validate.compare import tcplab_scenario
    from tcplab.scenario.parse import parse_scenario

    res = run_config(
        parse_scenario(tcplab_scenario(case, seed, stack="linux")).to_config(), columns=True
    )
    ts = res["timeseries_table"]
    cols = {k: np.asarray(ts[k], dtype=float) for k in ("t_ns", "cwnd", "ssthresh")}
    cols |= {k: np.asarray(ts[k], dtype=float) for k in ("pacing_rate_bps", "delivery_rate_bps")}
    return cols, int(res["flows"][0]["retransmitted_segments"])


def case_arguments(ap: argparse.ArgumentParser, seed_help: str, until_s: float) -> None:
    """The case's options (default: the 20 Mbit/s, RTT 300 ms, 250-packet case) and
    ``--until``; bbr_internals.py takes the same."""
    ap.add_argument("--rate-mbps", type=float, default=20.0)
    ap.add_argument("--rtt-ms", type=float, default=300.0)
    ap.add_argument("--queue", type=int, default=250, help="packets")
    ap.add_argument("--loss", type=float, default=0.0)
    ap.add_argument("--seed", type=int, default=1000, help=seed_help)
    ap.add_argument("--until", type=float, default=until_s, help="seconds shown")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    case_arguments(ap, "emulator and tcplab seed", 7.0)
    src = ap.add_mutually_exclusive_group()
    src.add_argument("--linux", type=Path, help="plot this saved Linux run instead of running")
    src.add_argument("--save-linux", type=Path, help="save the Linux run here")
    ap.add_argument("--out", type=Path, default=Path("bbr_trace.png"))
    a = ap.parse_args(argv)

    from tcplab.real.validate.compare import Case

    case = Case(
        rtt_ms=a.rtt_ms, loss=a.loss, cc="bbr", rate_bps=round(a.rate_mbps * 1e6), queue=a.queue
    )
    if a.linux is not None:
        lx = json.loads(a.linux.read_text())
    else:
        lx = linux_samples(case, a.seed)
        if a.save_linux is not None:
            a.save_linux.write_text(json.dumps(lx))
    samples = lx["samples"]
    if "bbr_pacing_gain" not in samples[0]:
        print(f"bbr_trace.py: {a.linux}: no TCP_CC_INFO fields in the samples", file=sys.stderr)
        return 1
    lt = np.array([s["t_ns"] for s in samples]) / 1e9
    l_cwnd = np.array([s["snd_cwnd"] for s in samples], dtype=float)
    l_pace = np.array([s["pacing_rate"] for s in samples], dtype=float) * 8 / 1e6
    l_deliv = np.array([s["delivery_rate"] for s in samples], dtype=float) * 8 / 1e6
    l_bw = np.array([s["bbr_bw"] for s in samples], dtype=float) * 8 / 1e6
    l_gain = np.array([s["bbr_pacing_gain"] for s in samples])
    l_ss = np.array([s["snd_ssthresh"] for s in samples], dtype=float)
    ts, t_retrans = tcplab_series(case, a.seed)
    tt = ts["t_ns"] / 1e9
    t_cwnd = ts["cwnd"] / 1448

    def first(t: np.ndarray, mask: np.ndarray) -> float:
        return float(t[np.argmax(mask)]) if mask.any() else float("nan")

    started = l_gain == HIGH_GAIN
    l_gain_drop = (
        first(lt, (lt > lt[np.argmax(started)]) & (l_gain < HIGH_GAIN))
        if started.any()
        else float("nan")
    )
    l_drain = first(lt, l_ss < INF_SEGMENTS)
    t_drain = first(tt, ts["ssthresh"] / 1448 < INF_SEGMENTS)
    print(f"case: {case.label}, seed {a.seed}")
    print(f"retransmissions: linux {lx['final']['total_retrans']}, tcplab {t_retrans}")
    print(f"DRAIN entered (first finite ssthresh): linux {l_drain:.3f} s, tcplab {t_drain:.3f} s")
    print(f"linux pacing gain first below STARTUP's: {l_gain_drop:.3f} s")

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(3, 1, figsize=(9, 8), sharex=True)
    # One panel per quantity: (y label, [(t, values, label, colour, line style), ...]).
    panels = [
        (
            "cwnd (segments)",
            [(lt, l_cwnd, "Linux", "tab:blue", "-"), (tt, t_cwnd, "tcplab", "tab:orange", "--")],
        ),
        (
            "pacing rate (Mbit/s)",
            [
                (lt, l_pace, "Linux pacing rate", "tab:blue", "-"),
                (tt, ts["pacing_rate_bps"] / 1e6, "tcplab pacing rate", "tab:orange", "--"),
            ],
        ),
        (
            "delivery rate (Mbit/s)",
            [
                (lt, l_deliv, "Linux delivery rate", "tab:blue", "-"),
                (lt, l_bw, "Linux BBR bw estimate", "tab:green", ":"),
                (tt, ts["delivery_rate_bps"] / 1e6, "tcplab delivery rate", "tab:orange", "--"),
            ],
        ),
    ]
    for x, (ylabel, lines) in zip(ax, panels, strict=True):
        for t, v, label, color, style in lines:
            x.plot(t, v, label=label, color=color, linestyle=style)
        x.set_ylabel(ylabel)
    ax[2].set_xlabel("time since connect (s)")
    for x in ax:
        for t, c in ((l_drain, "tab:blue"), (t_drain, "tab:orange")):
            if np.isfinite(t):
                x.axvline(t, color=c, linewidth=0.8, alpha=0.6)
        x.set_xlim(0, a.until)
        x.grid(alpha=0.3)
        x.legend(loc="upper left", fontsize=8)
    ax[0].set_title(
        f"BBR, {a.rate_mbps:g} Mbit/s, RTT {a.rtt_ms:g} ms, queue {a.queue} packets, loss "
        f"{a.loss:g}: Linux and tcplab (vertical lines: DRAIN entered)",
        fontsize=10,
    )
    fig.tight_layout()
    fig.savefig(a.out, dpi=110)
    print(f"wrote {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
