"""Figures for ``tcplab analyze --plot``: a time-sequence graph and RTT/RTO over time per
connection and data direction. Kept apart from ``tcplab.report.plots`` so the two can be merged
later.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tcplab.analyze.capture import AnalyzeResult

__all__ = ["MAX_FIGURES", "draw_all", "rtt_graph", "time_sequence"]

#: At most this many connection directions are drawn (the ones with the most bytes).
MAX_FIGURES = 20

CLASS_STYLE = {
    "fast_retransmit": ("tab:orange", "^"),
    "fast_recovery": ("gold", "v"),
    "rto": ("tab:red", "X"),
    "go_back_n": ("tab:purple", "s"),
    "tlp": ("tab:green", "D"),
    "other": ("tab:gray", "o"),
}


def _plt() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def time_sequence(res: AnalyzeResult, conn: dict[str, Any], path: Path) -> Path:
    """Data segments, the cumulative ACK, SACK blocks and retransmissions (by class, hollow
    when judged genuine, filled when spurious) against time."""
    plt = _plt()
    cid, d = conn["conn"], conn["dir"]
    p = res.packets
    p = p[(p["conn"] == cid) & (p["dir"] == d)]
    t0 = conn["start_s"]
    fig, ax = plt.subplots(figsize=(10, 5.5))
    data = p[p["kind"] == 0]
    ax.vlines(
        data["t_ns"] * 1e-9 - t0,
        data["seq"] / 1e3,
        data["end"] / 1e3,
        color="tab:blue",
        lw=1.2,
        label="data segment",
    )
    acks = p[p["kind"] == 1]
    ax.step(
        acks["t_ns"] * 1e-9 - t0,
        acks["seq"] / 1e3,
        where="post",
        color="black",
        lw=0.8,
        label="cumulative ACK",
    )
    sack = p[p["kind"] == 2]
    if len(sack):
        ax.vlines(
            sack["t_ns"] * 1e-9 - t0,
            sack["seq"] / 1e3,
            sack["end"] / 1e3,
            color="tab:cyan",
            lw=2.5,
            alpha=0.6,
            label="SACK block",
        )
    r = res.retransmissions
    r = r[(r["conn"] == cid) & (r["dir"] == d)]
    for cls, (color, marker) in CLASS_STYLE.items():
        sel = r[r["class_name"] == cls]
        if not len(sel):
            continue
        sp = sel["spurious"] == 1
        n_sp = int(sp.sum())
        if n_sp < len(sel):
            ax.scatter(
                sel["t_ns"][~sp] * 1e-9 - t0,
                sel["seq"][~sp] / 1e3,
                marker=marker,
                s=45,
                facecolors="none",
                edgecolors=color,
                label=f"{cls.replace('_', ' ')} ({len(sel) - n_sp} not spurious)",
                zorder=3,
            )
        if n_sp:
            ax.scatter(
                sel["t_ns"][sp] * 1e-9 - t0,
                sel["seq"][sp] / 1e3,
                marker=marker,
                s=45,
                color=color,
                label=f"{cls.replace('_', ' ')} ({n_sp} spurious)",
                zorder=3,
            )
    ax.set_xlabel("time since the connection's first packet (s)")
    ax.set_ylabel("sequence offset (kB)")
    ax.set_title(
        f"{conn['src']}:{conn['sport']} → {conn['dst']}:{conn['dport']} "
        f"({conn['side']} side): {conn['retransmissions']} retransmissions, "
        f"{conn['spurious_rtos']}/{conn['rtos']} RTOs spurious",
        fontsize=10,
    )
    ax.grid(alpha=0.3)
    ax.legend(loc="upper left", fontsize=8, framealpha=0.9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def rtt_graph(res: AnalyzeResult, conn: dict[str, Any], path: Path) -> Path:
    """RTT samples (by source), the smoothed RTT and the RFC 6298 RTO they imply, with the
    retransmission timeouts marked."""
    plt = _plt()
    cid, d = conn["conn"], conn["dir"]
    s = res.rtt_samples
    s = s[(s["conn"] == cid) & (s["dir"] == d)]
    t0 = conn["start_s"]
    fig, ax = plt.subplots(figsize=(10, 5))
    names = {0: "RTT sample (ACK, Karn)", 1: "RTT sample (timestamp echo)", 2: "handshake RTT"}
    for src, color in ((0, "tab:blue"), (1, "tab:cyan"), (2, "black")):
        sel = s[s["source"] == src]
        if len(sel):
            ax.scatter(
                sel["t_ns"] * 1e-9 - t0, sel["rtt_ns"] * 1e-6, s=6, color=color, label=names[src]
            )
    if len(s):
        ax.step(
            s["t_ns"] * 1e-9 - t0,
            s["srtt_ns"] * 1e-6,
            where="post",
            color="tab:green",
            label="SRTT",
        )
        ax.step(
            s["t_ns"] * 1e-9 - t0,
            s["rto_ns"] * 1e-6,
            where="post",
            color="tab:red",
            label="RTO (RFC 6298)",
        )
    r = res.retransmissions
    r = r[(r["conn"] == cid) & (r["dir"] == d) & (r["class_name"] == "rto")]
    for k, t in enumerate(r["t_ns"]):
        ax.axvline(
            t * 1e-9 - t0,
            color="tab:red",
            ls=":",
            lw=0.8,
            label="retransmission timeout" if k == 0 else None,
        )
    ax.set_xlabel("time since the connection's first packet (s)")
    ax.set_ylabel("ms")
    ax.set_yscale("log")
    ax.set_title(
        f"RTT and RTO, {conn['src']}:{conn['sport']} → {conn['dst']}:{conn['dport']}", fontsize=10
    )
    ax.grid(alpha=0.3, which="both")
    # below the axes: the RTO line runs along the top of the plot
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.15), ncol=3, fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def draw_all(res: AnalyzeResult, out: Path) -> list[Path]:
    """Both figures for the (at most ``MAX_FIGURES``) largest connection directions."""
    out.mkdir(parents=True, exist_ok=True)
    conns = sorted(res.summary["connections"], key=lambda c: -c["bytes_sent"])[:MAX_FIGURES]
    files = []
    for c in conns:
        stem = f"conn{c['conn']}-dir{c['dir']}"
        files.append(time_sequence(res, c, out / f"{stem}-tseq.png"))
        files.append(rtt_graph(res, c, out / f"{stem}-rtt.png"))
    return files
