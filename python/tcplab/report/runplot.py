"""Figures of one run (``tcplab plot``, ``tcplab run --plot``, ``RunResult.plot``).

Per flow:

- ``flow<N>-tseq.png``: the time-sequence graph (tcptrace/Stevens style) of a traced run: data
  segments as the sender sends them and as they reach the receiver, the cumulative-ACK line and
  SACK blocks as the sender gets them, retransmissions marked by reason and by ground truth
  (unnecessary: a copy sent earlier reached the receiver), timeouts (spurious or genuine, and
  whether the detector flagged them), spurious verdicts and fast retransmits.
- ``flow<N>-episodes.png``: the same graph zoomed on each timeout and fast retransmit (up to
  :data:`MAX_EPISODES`), one panel each, so each spurious timeout and the retransmissions it
  caused can be pointed at.
- ``flow<N>-state.png``: cwnd, ssthresh and bytes in flight; SRTT, RTTVAR and RTO; goodput.

Per link (hop): ``link-<name>.png``: queue occupancy per direction (a traced run) and cumulative
drops by cause and direction.

Long runs are drawn from per-pixel-column minima and maxima (:func:`decimate`), so a 24-hour run
draws as fast as a one-minute run and still shows every excursion.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tcplab.report.plots import figure, save

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
    from matplotlib.axes import Axes

    from tcplab.results import RunResult

__all__ = ["MAX_EPISODES", "decimate", "plot_run", "unnecessary_retransmissions"]

#: Most zoomed panels drawn per flow (the first ones in time; the figure says how many were left).
MAX_EPISODES = 12
#: Horizontal resolution the long-run decimation keeps (about one point per pixel column).
BINS = 1500
#: Above this many segments, data segments are drawn as per-bin envelopes instead of one mark each.
MAX_MARKS = 6000

#: Colours and markers (colour-blind-safe Okabe-Ito palette).
C_SEND = "#0072B2"
C_ARRIVE = "#9A9A9A"
C_ACK = "#009E73"
C_SACK = "#CC79A7"
C_SPURIOUS = "#D55E00"
C_GENUINE = "#555555"
C_DETECTED = "#E69F00"
RTX_STYLE: dict[str, tuple[str, str]] = {
    # reason → (marker, colour)
    "timeout": ("o", "#D55E00"),
    "after_timeout": ("s", "#E69F00"),
    "fast_retransmit": ("D", "#7B3294"),
    "partial_ack": ("^", "#0072B2"),
    "sack_recovery": ("v", "#009E73"),
    "rescue": ("P", "#CC79A7"),
    "control": ("X", "#000000"),
}


# -- data helpers -------------------------------------------------------------------------------


def decimate(x: np.ndarray, y: np.ndarray, bins: int = BINS) -> tuple[np.ndarray, np.ndarray]:
    """At most ``2 * bins`` points that draw like ``(x, y)``: for each of ``bins`` equal slices of
    the x range, its minimum and its maximum, in x order. ``x`` must be sorted."""
    import numpy as np

    n = len(x)
    if n <= 2 * bins:
        return x, y
    edges = np.linspace(x[0], x[-1], bins + 1)
    idx = np.clip(np.searchsorted(edges, x, side="right") - 1, 0, bins - 1)
    starts = np.flatnonzero(np.r_[True, idx[1:] != idx[:-1]])
    ymin = np.minimum.reduceat(y, starts)
    ymax = np.maximum.reduceat(y, starts)
    # the x of each bin's min and max: its first and last sample keep the line's shape honest
    ends = np.r_[starts[1:], n] - 1
    xs = np.empty(2 * len(starts))
    ys = np.empty(2 * len(starts))
    xs[0::2], xs[1::2] = x[starts], x[ends]
    ys[0::2], ys[1::2] = ymin, ymax
    return xs, ys


def unnecessary_retransmissions(
    events: pd.DataFrame, segments: pd.DataFrame
) -> tuple[np.ndarray, np.ndarray]:
    """Ground truth per ``retransmit`` row of ``events`` (in row order): True when a copy of its
    first byte sent *before* it reached the receiver (the retransmission was not needed), False
    when none did (or for a SYN/FIN, ``seq`` 0); and the time (ns) that earlier copy first
    arrived (-1 where none). Needs the segment trace (``arrive`` rows carry when their copy was
    sent)."""
    import numpy as np

    rtx = events[events["kind"] == "retransmit"]
    out = np.zeros(len(rtx), dtype=bool)
    first = np.full(len(rtx), -1, dtype=np.int64)
    arr = segments[segments["kind"] == "arrive"]
    if arr.empty or rtx.empty:
        return out, first
    groups = {key: g for key, g in arr.groupby(["flow", "conn"], observed=True)}
    for i, (flow, conn, seq, t) in enumerate(
        zip(rtx["flow"], rtx["conn"], rtx["seq"], rtx["t_ns"], strict=True)
    ):
        g = groups.get((flow, conn))
        if g is None or seq == 0:
            continue
        s = g["seq"].to_numpy()
        e = s + g["len"].to_numpy()
        earlier = (s <= seq) & (seq < e) & (g["sent_ns"].to_numpy() < t)
        if np.any(earlier):
            out[i] = True
            first[i] = int(g["t_ns"].to_numpy()[earlier].min())
    return out, first


def _si_bytes(max_bytes: float) -> tuple[float, str]:
    """A divisor and unit so ``max_bytes`` reads as a small number."""
    for div, unit in ((1e9, "GB"), (1e6, "MB"), (1e3, "kB")):
        if max_bytes >= 10 * div:
            return div, unit
    return 1.0, "bytes"


def _time_unit(span_s: float) -> tuple[float, str]:
    """Divisor (from seconds) and label for a time axis spanning ``span_s``."""
    if span_s >= 3 * 3600:
        return 3600.0, "h"
    if span_s >= 20 * 60:
        return 60.0, "min"
    if span_s < 2.0:
        return 1e-3, "ms"
    return 1.0, "s"


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_") or "x"


def _legend_right(ax: Axes, **kw: Any) -> None:
    """The legend outside the axes, to the right, so it never covers data."""
    handles, labels = ax.get_legend_handles_labels()
    if handles:
        seen: dict[str, Any] = {}
        for h, lab in zip(handles, labels, strict=True):
            seen.setdefault(lab, h)
        opts: dict[str, Any] = {
            "loc": "upper left",
            "bbox_to_anchor": (1.01, 1.0),
            "borderaxespad": 0.0,
            "fontsize": 8,
            "frameon": False,
        }
        ax.legend(seen.values(), seen.keys(), **{**opts, **kw})


#: Above this many event lines on one axes, they become short ticks along its top edge.
MAX_LINES = 40


class _VLines:
    """Vertical event lines (timeouts, verdicts, fast retransmits), grouped by label; drawn full
    height when there are few, as ticks along the top edge when many would hide the data."""

    def __init__(self) -> None:
        self.groups: dict[str, tuple[list[float], str, Any, float]] = {}

    def add(self, x: float, colour: str, style: Any, width: float, label: str) -> None:
        self.groups.setdefault(label, ([], colour, style, width))[0].append(x)

    def draw(self, ax: Axes) -> None:
        many = sum(len(g[0]) for g in self.groups.values()) > MAX_LINES
        for label, (xs, colour, style, width) in self.groups.items():
            ax.vlines(
                xs,
                0.92 if many else 0.0,
                1.0,
                transform=ax.get_xaxis_transform(),
                colors=colour,
                linestyles="-" if many else style,
                linewidth=0.8 if many else width,
                label=f"{label} (ticks at top)" if many else label,
                zorder=1,
            )


@dataclass
class _Flow:
    """One flow's rows, times in seconds."""

    id: int
    name: str
    events: pd.DataFrame
    timeseries: pd.DataFrame
    segments: pd.DataFrame | None
    unnecessary: np.ndarray | None  # per retransmit row of ``events``
    first_arrival: np.ndarray | None  # ns the earlier copy arrived, per retransmit row


# -- time-sequence graph ------------------------------------------------------------------------


def _draw_tseq(
    ax: Axes,
    fl: _Flow,
    t0: float,
    t1: float,
    tdiv: float,
    *,
    detail: bool,
    annotate: bool,
) -> tuple[float, str]:
    """Draw flow ``fl``'s time-sequence graph between ``t0`` and ``t1`` seconds on ``ax``;
    returns the y divisor and unit used. ``detail``: one mark per segment (zoomed views)."""
    import numpy as np

    assert fl.segments is not None
    seg = fl.segments
    ts = seg["t_ns"].to_numpy() / 1e9
    in_win = (ts >= t0) & (ts <= t1)
    seg = seg[in_win]
    ts = ts[in_win]
    kind = seg["kind"].astype(str).to_numpy()
    seq = seg["seq"].to_numpy().astype(np.float64)
    ln = seg["len"].to_numpy().astype(np.float64)
    conn = seg["conn"].to_numpy()
    data = (kind == "send") | (kind == "arrive")
    top = float(np.max(seq[data] + ln[data])) if np.any(data) else 1.0
    ydiv, yunit = _si_bytes(top)
    if detail:
        ydiv, yunit = (1e3, "kB") if top >= 1e4 else (1.0, "bytes")

    def marks(sel: np.ndarray, colour: str, label: str, lw: float) -> None:
        x, lo, hi = ts[sel], seq[sel], seq[sel] + ln[sel]
        if not len(x):
            return
        if len(x) > MAX_MARKS and not detail:
            # envelope per time bin: the lowest and highest byte drawn in that slice of time
            edges = np.linspace(t0, t1, BINS + 1)
            b = np.clip(np.searchsorted(edges, x, side="right") - 1, 0, BINS - 1)
            order = np.argsort(b, kind="stable")
            b, lo, hi = b[order], lo[order], hi[order]
            starts = np.flatnonzero(np.r_[True, b[1:] != b[:-1]])
            x = (edges[b[starts]] + edges[b[starts] + 1]) / 2
            lo = np.minimum.reduceat(lo, starts)
            hi = np.maximum.reduceat(hi, starts)
        ax.vlines(x / tdiv, lo / ydiv, hi / ydiv, colors=colour, linewidth=lw, label=label)

    marks(kind == "send", C_SEND, "data sent (sender)", 1.4 if detail else 1.0)
    marks(kind == "arrive", C_ARRIVE, "data arrived (receiver)", 0.9 if detail else 0.7)
    # the cumulative-ACK line, broken between connections
    ack = kind == "ack"
    if np.any(ack):
        xa, ya, ca = ts[ack], seq[ack], conn[ack]
        xs: list[np.ndarray] = []
        ys: list[np.ndarray] = []
        for c in np.unique(ca):
            m = ca == c
            x, y = decimate(xa[m], ya[m]) if not detail else (xa[m], ya[m])
            xs += [x, np.array([np.nan])]
            ys += [y, np.array([np.nan])]
        ax.plot(
            np.concatenate(xs) / tdiv,
            np.concatenate(ys) / ydiv,
            drawstyle="steps-post",
            color=C_ACK,
            linewidth=1.0,
            label="cumulative ACK (sender)",
        )
    sack = kind == "sack"
    if np.any(sack):
        ax.vlines(
            ts[sack] / tdiv,
            seq[sack] / ydiv,
            (seq[sack] + ln[sack]) / ydiv,
            colors=C_SACK,
            linewidth=3.0,
            alpha=0.8,
            label="SACK / DSACK block",
        )
    _draw_marks(ax, fl, t0, t1, tdiv, ydiv, annotate=annotate)
    return ydiv, yunit


def _draw_marks(
    ax: Axes, fl: _Flow, t0: float, t1: float, tdiv: float, ydiv: float, *, annotate: bool
) -> None:
    """Retransmissions by reason, timeouts, spurious verdicts and fast retransmits."""
    import numpy as np

    ev = fl.events
    t = ev["t_ns"].to_numpy() / 1e9
    win = (t >= t0) & (t <= t1)
    kind = ev["kind"].astype(str).to_numpy()
    rtx_rows = np.flatnonzero(kind == "retransmit")
    # big markers when zoomed in, smaller the more there are in an overview
    n_shown = int(np.count_nonzero(win[rtx_rows]))
    size = 9 if annotate else (7 if n_shown <= 30 else 5 if n_shown <= 300 else 3)
    for j, row in enumerate(rtx_rows):
        if not win[row]:
            continue
        reason = str(ev["reason_name"].iloc[row])
        marker, colour = RTX_STYLE.get(reason, ("*", "black"))
        control = reason == "control" or int(ev["seq"].iloc[row]) == 0
        unnecessary = fl.unnecessary is not None and bool(fl.unnecessary[j]) and not control
        verdict = "unnecessary" if unnecessary else "needed"
        if control:
            verdict = "SYN/FIN, not judged"
        elif fl.unnecessary is None:
            verdict = "truth unknown"
        if unnecessary and fl.first_arrival is not None and annotate:
            # where the earlier copy got through: what made this retransmission unnecessary
            ta = fl.first_arrival[j] / 1e9
            ax.plot(
                ta / tdiv,
                ev["seq"].iloc[row] / ydiv,
                marker="*",
                markersize=11,
                color=colour,
                markeredgecolor="black",
                markeredgewidth=0.5,
                linestyle="none",
                label="earlier copy arrives (so the retransmission was unnecessary)",
                zorder=6,
            )
        ax.plot(
            t[row] / tdiv,
            ev["seq"].iloc[row] / ydiv,
            marker=marker,
            markersize=size,
            markerfacecolor="none" if unnecessary else colour,
            markeredgecolor=colour,
            markeredgewidth=2.0 if size > 5 else 1.0,
            linestyle="none",
            label=f"retransmission: {reason} ({verdict})",
            zorder=5,
        )
    lines = _VLines()
    for row in np.flatnonzero((kind == "timeout") & win):
        spurious = int(ev["spurious"].iloc[row]) == 1
        detected = int(ev["detected"].iloc[row]) == 1
        colour = C_SPURIOUS if spurious else C_GENUINE
        label = "timeout: spurious" if spurious else "timeout: genuine"
        style: Any = "--"
        if spurious:
            label += " (detected)" if detected else " (not detected)"
            style = "--" if detected else (0, (6, 2, 1, 2))
        lines.add(t[row] / tdiv, colour, style, 1.2, label)
        if annotate:
            text = "spurious RTO" if spurious else "RTO"
            if spurious:
                text += "\ndetected" if detected else "\nmissed"
            ax.annotate(
                text,
                xy=(t[row] / tdiv, 1.0),
                xycoords=("data", "axes fraction"),
                xytext=(3, -3),
                textcoords="offset points",
                va="top",
                fontsize=7,
                color=colour,
            )
    for row in np.flatnonzero((kind == "spurious_detected") & win):
        lines.add(t[row] / tdiv, C_DETECTED, ":", 1.5, "detector: spurious verdict")
    for row in np.flatnonzero((kind == "detector_verdict") & win):
        lines.add(t[row] / tdiv, C_GENUINE, ":", 1.2, "detector: not spurious")
    for row in np.flatnonzero((kind == "fast_retransmit") & win):
        spurious = int(ev["spurious"].iloc[row]) == 1
        colour = C_SPURIOUS if spurious else "#7B3294"
        label = "fast retransmit: spurious" if spurious else "fast retransmit"
        lines.add(t[row] / tdiv, colour, "-.", 1.0, label)
    lines.draw(ax)


def _tseq(fl: _Flow, path: Path, t0: float, t1: float, scenario: str) -> Path:
    tdiv, tunit = _time_unit(t1 - t0)
    fig, ax = figure(size=(11.0, 5.0))
    _, yunit = _draw_tseq(ax, fl, t0, t1, tdiv, detail=False, annotate=False)
    ax.set_xlabel(f"time ({tunit})")
    ax.set_ylabel(f"sequence offset in the connection ({yunit})")
    nconn = fl.timeseries["conn"].nunique() if len(fl.timeseries) else 1
    extra = f", {nconn} connections (each starts at 0)" if nconn > 1 else ""
    ax.set_title(f"{scenario}: flow {fl.id} ({fl.name}) time-sequence graph{extra}", fontsize=10)
    ax.set_xlim(t0 / tdiv, t1 / tdiv)
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    _legend_right(ax)
    return save(fig, path)


def _episodes(fl: _Flow) -> list[tuple[float, float, float]]:
    """(event time, window start, window end) in seconds for each timeout and fast retransmit."""
    import numpy as np

    ev = fl.events
    kind = ev["kind"].astype(str).to_numpy()
    t = ev["t_ns"].to_numpy() / 1e9
    out = []
    for row in np.flatnonzero((kind == "timeout") | (kind == "fast_retransmit")):
        te = float(t[row])
        rto = float(ev["value"].iloc[row]) if kind[row] == "timeout" else 0.0
        # what led up to it (the RTO's span), and what followed: the next verdict or ~half an RTO
        before = max(rto, _srtt_at(fl, te) * 2, 0.2)
        after = max(0.6 * before, _srtt_at(fl, te) * 3, 0.5)
        later = t[(t > te) & np.isin(kind, ["spurious_detected", "detector_verdict"])]
        if len(later) and later[0] - te < 3 * after:
            after = max(after, float(later[0] - te) * 1.3)
        start, end = te - 1.05 * before, te + after
        # the retransmission this timeout/fast retransmit sent: show where its earlier copy
        # arrived (what makes it unnecessary), with a margin
        if fl.first_arrival is not None:
            rtx = np.flatnonzero(kind == "retransmit")
            same = np.flatnonzero(
                (t[rtx] == te) & (ev["seq"].to_numpy()[rtx] == ev["seq"].iloc[row])
            )
            for j in same:
                ta = fl.first_arrival[j] / 1e9
                if ta >= 0:
                    span = end - start
                    start = min(start, ta - 0.08 * span)
                    end = max(end, ta + 0.08 * span)
        out.append((te, max(start, 0.0), end))
    return out


def _srtt_at(fl: _Flow, t: float) -> float:
    import numpy as np

    ts = fl.timeseries
    if ts.empty:
        return 0.0
    i = int(np.searchsorted(ts["t_ns"].to_numpy() / 1e9, t, side="right")) - 1
    return float(ts["srtt_ns"].iloc[max(i, 0)]) / 1e9


def _episodes_figure(fl: _Flow, path: Path, scenario: str, t0: float, t1: float) -> Path | None:
    eps = [e for e in _episodes(fl) if t0 <= e[0] <= t1]
    if not eps:
        return None
    shown = eps[:MAX_EPISODES]
    ncols = min(3, len(shown))
    nrows = math.ceil(len(shown) / ncols)
    fig, axes = figure(ncols, nrows, size=(4.6, 3.4))
    flat = list(axes.flat) if hasattr(axes, "flat") else [axes]
    for k, (te, a, b) in enumerate(shown):
        ax = flat[k]
        tdiv, tunit = _time_unit(b - a)
        _, yunit = _draw_tseq(ax, fl, a, b, tdiv, detail=True, annotate=True)
        ax.set_xlim(a / tdiv, b / tdiv)
        ax.set_xlabel(f"time ({tunit})", fontsize=8)
        ax.set_ylabel(f"sequence offset ({yunit})", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.3)
        ax.set_title(f"episode {k + 1} at {te:.3f} s", fontsize=9)
    for ax in flat[len(shown) :]:
        ax.axis("off")
    # one legend for all panels, below them
    labels: dict[str, Any] = {}
    for ax in flat[: len(shown)]:
        for h, lab in zip(*ax.get_legend_handles_labels(), strict=True):
            labels.setdefault(lab, h)
    more = f" (first {len(shown)} of {len(eps)})" if len(eps) > len(shown) else ""
    fig.suptitle(
        f"{scenario}: flow {fl.id} ({fl.name}), each timeout and fast retransmit{more}; "
        "hollow retransmission marker = unnecessary (ground truth)",
        fontsize=10,
    )
    fig.legend(
        labels.values(),
        labels.keys(),
        loc="lower center",
        ncols=min(3, max(1, len(labels))),
        fontsize=8,
        frameon=False,
    )
    import matplotlib.pyplot as plt

    rows_leg = math.ceil(len(labels) / 3)
    fig.tight_layout(rect=(0, 0.03 + 0.035 * rows_leg * 3.4 / (3.4 * nrows), 1, 0.96))
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


# -- state over time ----------------------------------------------------------------------------


def _state(fl: _Flow, path: Path, t0: float, t1: float, scenario: str) -> Path | None:
    import numpy as np

    ts = fl.timeseries
    if ts.empty:
        return None
    t = ts["t_ns"].to_numpy() / 1e9
    m = (t >= t0) & (t <= t1)
    ts, t = ts[m], t[m]
    if not len(t):
        return None
    tdiv, tunit = _time_unit(t1 - t0)
    fig, axes = figure(1, 3, size=(11.0, 2.6))
    ax1, ax2, ax3 = axes
    cwnd = ts["cwnd"].to_numpy().astype(float)
    inflight = ts["inflight"].to_numpy().astype(float)
    ssth = ts["ssthresh"].to_numpy().astype(float)
    top = max(float(cwnd.max()), float(inflight.max()), 1.0)
    ydiv, yunit = _si_bytes(top)
    # ssthresh starts "infinite": drawn only where it is finite and on the cwnd scale
    ssth = np.where(ssth > 4 * top, np.nan, ssth)
    for y, label, colour, width in (
        (inflight, "bytes in flight", C_ACK, 0.8),  # under cwnd, which bounds it
        (cwnd, "cwnd", C_SEND, 1.2),
        (ssth, "ssthresh (blank: not yet set)", C_SPURIOUS, 1.0),
    ):
        x, yy = decimate(t, y)
        ax1.plot(x / tdiv, yy / ydiv, color=colour, linewidth=width, label=label)
    ax1.set_ylabel(f"window ({yunit})")
    ax1.set_ylim(bottom=0)
    srtt = ts["srtt_ns"].to_numpy() / 1e6
    rto = ts["rto_ns"].to_numpy() / 1e6
    rttvar = ts["rttvar_ns"].to_numpy() / 1e6
    for y, label, colour in (
        (srtt, "SRTT", C_SEND),
        (rttvar, "RTTVAR", C_ARRIVE),
        (rto, "RTO", C_SPURIOUS),
    ):
        x, yy = decimate(t, y)
        ax2.plot(x / tdiv, yy, color=colour, linewidth=1.0, label=label)
    ax2.set_ylabel("time (ms)")
    ax2.set_ylim(bottom=0)
    # goodput: delivered bytes over windows of ~1/300 of the span (at least one sample interval)
    delivered = ts["delivered"].to_numpy().astype(float)
    if len(t) > 1:
        step = max(1, round((t1 - t0) / 300 / max(float(np.median(np.diff(t))), 1e-9)))
        idx = np.arange(0, len(t), step)
        tt = t[idx]
        rate = np.diff(delivered[idx]) * 8 / np.maximum(np.diff(tt), 1e-12)
        rate = np.where(rate < 0, np.nan, rate)  # a new connection resets nothing; guard anyway
        rdiv, runit = (1e6, "Mbit/s") if np.nanmax(np.r_[rate, 0]) >= 1e6 else (1e3, "kbit/s")
        window = float(np.median(np.diff(tt))) if len(tt) > 1 else 0.0
        ax3.plot(
            tt[1:] / tdiv,
            rate / rdiv,
            drawstyle="steps-pre",
            color=C_SEND,
            linewidth=1.0,
            label=f"goodput (delivered in order, {window:.3g} s bins)",
        )
        ax3.set_ylabel(f"goodput ({runit})")
        ax3.set_ylim(bottom=0)
    ev = fl.events
    kind = ev["kind"].astype(str).to_numpy()
    et = ev["t_ns"].to_numpy() / 1e9
    lines = _VLines()
    for row in np.flatnonzero((kind == "timeout") & (et >= t0) & (et <= t1)):
        spurious = int(ev["spurious"].iloc[row]) == 1
        colour = C_SPURIOUS if spurious else C_GENUINE
        lines.add(
            et[row] / tdiv, colour, "--", 0.8, f"timeout: {'spurious' if spurious else 'genuine'}"
        )
    for ax in axes:
        lines.draw(ax)
    for ax in axes:
        ax.set_xlim(t0 / tdiv, t1 / tdiv)
        ax.grid(alpha=0.3)
        _legend_right(ax)
    ax3.set_xlabel(f"time ({tunit})")
    ax1.set_title(
        f"{scenario}: flow {fl.id} ({fl.name}), sender state every "
        f"{_interval_text(t)} (the connection open at each sample)",
        fontsize=10,
    )
    return save(fig, path)


def _interval_text(t: np.ndarray) -> str:
    import numpy as np

    if len(t) < 2:
        return "sample"
    dt = float(np.median(np.diff(t)))
    return f"{dt * 1e3:.0f} ms" if dt < 1 else f"{dt:g} s"


# -- links --------------------------------------------------------------------------------------


def _queue_delay(axq: Axes, q: pd.DataFrame, tdiv: float) -> None:
    """A managed queue's delay (the latest packet's sojourn) on a right-hand axis, dashed."""
    axd = axq.twinx()
    for d, colour in (("fwd", C_SEND), ("rev", C_ACK)):
        qd = q[(q["dir"].astype(str) == d) & q["delay_ms"].notna()]
        if qd.empty:
            continue
        x, y = decimate(qd["t_ns"].to_numpy() / 1e9, qd["delay_ms"].to_numpy().astype(float))
        label = f"queue delay, {d}"
        axd.plot(x / tdiv, y, color=colour, linewidth=0.8, linestyle="--", label=label)
        axq.plot([], [], color=colour, linewidth=0.8, linestyle="--", label=label)
    axd.set_ylim(bottom=0)
    axd.set_ylabel("queue delay (ms)")


def _link(
    run: RunResult,
    hop: int,
    name: str,
    path: Path,
    t0: float,
    t1: float,
    queues: pd.DataFrame | None,
) -> Path:
    import numpy as np

    tdiv, tunit = _time_unit(t1 - t0)
    fig, axes = figure(1, 2, size=(11.0, 2.8))
    axq, axd = axes
    if queues is not None and not queues.empty:
        q = queues[queues["hop"] == hop]
        for d, colour in (("fwd", C_SEND), ("rev", C_ACK)):
            qd = q[q["dir"].astype(str) == d]
            if qd.empty:
                continue
            x, y = decimate(qd["t_ns"].to_numpy() / 1e9, qd["packets"].to_numpy().astype(float))
            label = "data direction (fwd)" if d == "fwd" else "ACK direction (rev)"
            axq.plot(x / tdiv, y, color=colour, linewidth=1.0, drawstyle="steps-post", label=label)
        axq.set_ylim(bottom=0)
        if "delay_ms" in q and q["delay_ms"].notna().any():
            _queue_delay(axq, q, tdiv)
            # clear of the right-hand axis's ticks and label
            _legend_right(axq, bbox_to_anchor=(1.08, 1.0))
        else:
            _legend_right(axq)
    else:
        why = (
            "queue not sampled: run with --plot (trace=True)"
            if not run.traced
            else "this hop kind reports no queue"
        )
        axq.text(0.5, 0.5, why, ha="center", va="center", transform=axq.transAxes, fontsize=9)
        axq.set_yticks([])
    axq.set_ylabel("queue (packets)")
    ev = run.events
    kind = ev["kind"].astype(str).to_numpy()
    drop = np.isin(kind, ["drop_queue", "drop_loss"]) & (ev["value"].to_numpy() == hop)
    any_drop = False
    # a run read back from its directory may carry no configuration: its queue samples tell
    hops = (run.config or {}).get("hops") or []
    cfg = hops[hop] if hop < len(hops) else {}
    managed = any(isinstance(cfg.get(k), dict) and "aqm" in cfg[k] for k in ("fwd", "rev"))
    managed = managed or (queues is not None and "delay_ms" in queues)
    # a managed queue's drops are the discipline's as well as the hard limit's
    at_queue = "queue (limit or AQM)" if managed else "queue full"
    for k, cause in (("drop_queue", at_queue), ("drop_loss", "lost on the link")):
        for d, direction in (("data", "data"), ("ack", "ACKs")):
            sel = drop & (kind == k) & (ev["reason_name"].astype(str).to_numpy() == d)
            if not np.any(sel):
                continue
            any_drop = True
            x = ev["t_ns"].to_numpy()[sel] / 1e9
            y = np.arange(1, len(x) + 1, dtype=float)
            x, y = decimate(x, y)
            style = "-" if k == "drop_queue" else "--"
            axd.plot(
                np.r_[x, t1] / tdiv,
                np.r_[y, y[-1]],
                drawstyle="steps-post",
                linestyle=style,
                color=C_SEND if d == "data" else C_ACK,
                linewidth=1.2,
                label=f"{direction}: {cause}",
            )
    if any_drop:
        _legend_right(axd)
        axd.set_ylim(bottom=0)
    else:
        axd.text(0.5, 0.5, "no TCP packet dropped on this hop", ha="center", va="center",
                 transform=axd.transAxes, fontsize=9)  # fmt: skip
        axd.set_yticks([])
    axd.set_ylabel("drops (cumulative)")
    axd.set_xlabel(f"time ({tunit})")
    for ax in axes:
        ax.set_xlim(t0 / tdiv, t1 / tdiv)
        ax.grid(alpha=0.3)
    axq.set_title(f"{run.scenario}: hop {hop} ({name})", fontsize=10)
    return save(fig, path)


# -- entry point --------------------------------------------------------------------------------


def _hop_names(run: RunResult) -> list[str]:
    if run.config and run.config.get("hops"):
        return [str(h.get("name", i)) for i, h in enumerate(run.config["hops"])]
    names = [str(row["name"]) for row in run.summary.get("links", [])]
    return list(dict.fromkeys(names))


def plot_run(
    run: RunResult,
    out: Path,
    *,
    flows: Sequence[int] | None = None,
    window: tuple[float, float] | None = None,
    prefix: str = "",
) -> list[Path]:
    """Draw ``run``'s figures into ``out`` (see the module docstring); returns the PNG paths in a
    fixed order (per flow: time-sequence, episodes, state; then the links)."""
    import numpy as np

    sim_s = float(run.summary.get("sim_time_s") or 0.0)
    if window is not None:
        t0, t1 = window
        if not (0 <= t0 < t1):
            raise ValueError(f"window: must be 0 <= start < end (got {t0}, {t1})")
    else:
        t0, t1 = 0.0, max(sim_s, 1e-3)
    flow_rows = run.summary.get("flows", [])
    ids = [int(f["id"]) for f in flow_rows]
    if flows is not None:
        unknown = [f for f in flows if f not in ids]
        if unknown:
            raise ValueError(f"flow: no flow {unknown[0]} in this run (flows: {ids})")
        ids = list(flows)
    segments = run.segments if run.traced else None
    events = run.events
    truth = unnecessary_retransmissions(events, segments) if segments is not None else None
    rtx_rows = np.flatnonzero(events["kind"].astype(str).to_numpy() == "retransmit")
    ts_all = run.timeseries
    paths: list[Path] = []
    for fid in ids:
        mask = (events["flow"] == fid).to_numpy()
        fl = _Flow(
            id=fid,
            name=str(flow_rows[ids.index(fid)]["name"]) if flows is None else _name(run, fid),
            events=events[mask],
            timeseries=ts_all[ts_all["flow"] == fid],
            segments=None if segments is None else segments[segments["flow"] == fid],
            unnecessary=None if truth is None else truth[0][mask[rtx_rows]],
            first_arrival=None if truth is None else truth[1][mask[rtx_rows]],
        )
        base = out / f"{prefix}flow{fid}"
        if fl.segments is not None:
            paths.append(_tseq(fl, Path(f"{base}-tseq.png"), t0, t1, run.scenario))
            ep = _episodes_figure(fl, Path(f"{base}-episodes.png"), run.scenario, t0, t1)
            if ep is not None:
                paths.append(ep)
        st = _state(fl, Path(f"{base}-state.png"), t0, t1, run.scenario)
        if st is not None:
            paths.append(st)
    queues = run.queues if run.traced else None
    for hop, name in enumerate(_hop_names(run)):
        path = out / f"{prefix}link{hop}-{_slug(name)}.png"
        paths.append(_link(run, hop, name, path, t0, t1, queues))
    return paths


def _name(run: RunResult, fid: int) -> str:
    for f in run.summary.get("flows", []):
        if int(f["id"]) == fid:
            return str(f["name"])
    return str(fid)
