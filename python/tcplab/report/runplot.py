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
draws as fast as a one-minute run and still shows every excursion. The segment trace is read in
pieces (:meth:`RunResult.batches`) and reduced as it is read: the overview keeps per time bin the
lowest and highest byte of each kind of mark, the zoomed panels only the rows inside their
windows, so the memory a figure takes does not grow with the run's length.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
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
    truth = _Truth(events)
    truth.add(segments)
    return truth.result()


class _Truth:
    """:func:`unnecessary_retransmissions` over a segment trace read in pieces: each piece's
    ``arrive`` rows are matched to the retransmissions whose first byte they carry (by binary
    search on the retransmissions' offsets, per connection), keeping the earliest arrival of a
    copy sent before each retransmission."""

    def __init__(self, events: pd.DataFrame) -> None:
        import numpy as np

        rtx = events[events["kind"] == "retransmit"]
        self.n = len(rtx)
        self.first = np.full(self.n, np.iinfo(np.int64).max, dtype=np.int64)
        key = _conn_key(rtx["flow"].to_numpy(), rtx["conn"].to_numpy())
        seq = rtx["seq"].to_numpy().astype(np.uint64)
        t = rtx["t_ns"].to_numpy().astype(np.int64)
        judged = seq != 0  # a SYN or FIN (offset 0) is not judged
        #: per connection: the row numbers of its judged retransmissions, by offset
        self.by_conn: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        rows = np.flatnonzero(judged)
        order = rows[np.lexsort((seq[rows], key[rows]))]
        if len(order):
            keys = key[order]
            starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
            for a, b in zip(starts, np.r_[starts[1:], len(order)], strict=True):
                idx = order[a:b]
                self.by_conn[int(keys[a])] = (seq[idx], t[idx], idx)

    def add(self, segments: pd.DataFrame) -> None:
        """Match one piece of the segment trace."""
        import numpy as np

        if not self.by_conn:
            return
        arr = segments[segments["kind"] == "arrive"]
        if arr.empty:
            return
        key = _conn_key(arr["flow"].to_numpy(), arr["conn"].to_numpy())
        s = arr["seq"].to_numpy().astype(np.uint64)
        e = s + arr["len"].to_numpy().astype(np.uint64)
        sent = arr["sent_ns"].to_numpy().astype(np.int64)
        t = arr["t_ns"].to_numpy().astype(np.int64)
        for k in np.unique(key):
            found = self.by_conn.get(int(k))
            if found is None:
                continue
            rseq, rt, rows = found
            m = np.flatnonzero(key == k)
            # the retransmissions whose first byte this copy carries: rseq in [s, e)
            lo = np.searchsorted(rseq, s[m], side="left")
            hi = np.searchsorted(rseq, e[m], side="left")
            counts = hi - lo
            total = int(counts.sum())
            if total == 0:
                continue
            a = np.repeat(m, counts)
            j = np.repeat(lo, counts) + (
                np.arange(total) - np.repeat(np.cumsum(counts) - counts, counts)
            )
            earlier = sent[a] < rt[j]  # this copy left before the retransmission
            np.minimum.at(self.first, rows[j[earlier]], t[a[earlier]])

    def result(self) -> tuple[np.ndarray, np.ndarray]:
        import numpy as np

        out = self.first != np.iinfo(np.int64).max
        return out, np.where(out, self.first, -1)


def _conn_key(flow: np.ndarray, conn: np.ndarray) -> np.ndarray:
    """One integer per (flow, connection)."""
    import numpy as np

    return (flow.astype(np.uint64) << np.uint64(32)) | conn.astype(np.uint64)


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
    unnecessary: np.ndarray | None  # per retransmit row of ``events``
    first_arrival: np.ndarray | None  # ns the earlier copy arrived, per retransmit row
    #: A traced run: the overview graph's reduced marks, and the segment rows inside the
    #: zoomed panels' windows (:func:`_read_trace`).
    overview: _TseqData | None = None
    zoomed: list[pd.DataFrame] = field(default_factory=list)


# -- time-sequence graph ------------------------------------------------------------------------


class _Marks:
    """Vertical marks (time, lowest byte, highest byte) of one kind for a graph over ``t0..t1``
    seconds: kept one by one up to ``limit`` marks; beyond that folded into :data:`BINS` equal
    slices of time, each drawn as one mark from the lowest byte to the highest any mark in it
    covers (``limit`` None: never folded). ``quantum`` > 0 instead keeps, per slice, each
    distinct range rounded out to multiples of it (SACK blocks: the holes between them stay
    visible)."""

    def __init__(self, t0: float, t1: float, limit: int | None, quantum: float = 0.0) -> None:
        self.t0, self.t1, self.limit, self.quantum = t0, t1, limit, quantum
        self.raw: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self.n = 0
        self.lo: np.ndarray | None = None  # per bin, once folded
        self.hi: np.ndarray | None = None
        self.blocks: np.ndarray | None = None  # (bin, lo, hi) rows, once folded with a quantum

    def add(self, x: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> None:
        import numpy as np

        if not len(x):
            return
        if self.lo is None and self.blocks is None:
            self.raw.append((x, lo, hi))
            self.n += len(x)
            if self.limit is None or self.n <= self.limit:
                return
            x, lo, hi = (np.concatenate(c) for c in zip(*self.raw, strict=True))
            self.raw = []
            if self.quantum > 0:
                self.blocks = np.empty((0, 3), dtype=np.int64)
            else:
                self.lo = np.full(BINS, np.inf)
                self.hi = np.full(BINS, -np.inf)
        b = self._bin(x)
        if self.blocks is not None:
            q = self.quantum
            rows = np.stack([b, np.floor(lo / q), np.ceil(hi / q)], axis=1).astype(np.int64)
            self.blocks = np.unique(np.concatenate([self.blocks, rows]), axis=0)
        else:
            assert self.lo is not None and self.hi is not None
            np.minimum.at(self.lo, b, lo)
            np.maximum.at(self.hi, b, hi)

    def _bin(self, x: np.ndarray) -> np.ndarray:
        import numpy as np

        edges = np.linspace(self.t0, self.t1, BINS + 1)
        return np.clip(np.searchsorted(edges, x, side="right") - 1, 0, BINS - 1)

    def result(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(time, low, high) of the marks to draw."""
        import numpy as np

        edges = np.linspace(self.t0, self.t1, BINS + 1)
        mid = (edges[:-1] + edges[1:]) / 2
        if self.blocks is not None:
            b = self.blocks
            return mid[b[:, 0]], b[:, 1] * self.quantum, b[:, 2] * self.quantum
        if self.lo is not None and self.hi is not None:
            has = np.isfinite(self.lo)
            return mid[has], self.lo[has], self.hi[has]
        if not self.raw:
            e = np.empty(0)
            return e, e, e
        x, lo, hi = (np.concatenate(c) for c in zip(*self.raw, strict=True))
        return x, lo, hi


class _Steps:
    """Lines (one per key: a connection's cumulative ACK, a queue's length) for a graph over
    ``t0..t1`` seconds: kept point by point while all keys together hold at most ``limit``
    points (then drawn through :func:`decimate`, per key); beyond that folded into :data:`BINS`
    slices of time per key, each kept as its first and last time and its lowest and highest
    value, as :func:`decimate` draws them. ``limit`` None: every point as it is (zoomed
    views)."""

    def __init__(self, t0: float, t1: float, limit: int | None) -> None:
        self.t0, self.t1, self.limit = t0, t1, limit
        self.raw: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self.n = 0
        #: once folded: columns key, bin, first x, last x, min y, max y (one row per key and bin)
        self.folded: tuple[np.ndarray, ...] | None = None

    def add(self, key: np.ndarray, x: np.ndarray, y: np.ndarray) -> None:
        import numpy as np

        if not len(x):
            return
        if self.folded is None:
            self.raw.append((key, x, y))
            self.n += len(x)
            if self.limit is None or self.n <= self.limit:
                return
            key, x, y = (np.concatenate(c) for c in zip(*self.raw, strict=True))
            self.raw = []
            e = np.empty(0)
            self.folded = (np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64), e, e, e, e)
        edges = np.linspace(self.t0, self.t1, BINS + 1)
        b = np.searchsorted(edges, x, side="right") - 1
        # points before and after the window (a queue's samples are not cut to it) keep a
        # slice of their own on each side, so the line still enters and leaves the window
        b = np.where(x <= self.t1, np.clip(b, -1, BINS - 1), BINS)
        y = y.astype(np.float64)
        old = self.folded
        self.folded = _fold_steps(
            np.concatenate([old[0], key.astype(np.int64)]),
            np.concatenate([old[1], b]),
            np.concatenate([old[2], x]),
            np.concatenate([old[3], x]),
            np.concatenate([old[4], y]),
            np.concatenate([old[5], y]),
        )

    def lines(self) -> list[tuple[int, np.ndarray, np.ndarray]]:
        """(key, x, y) per key in key order, ready to draw."""
        import numpy as np

        out: list[tuple[int, np.ndarray, np.ndarray]] = []
        if self.folded is None:
            if not self.raw:
                return out
            key, x, y = (np.concatenate(c) for c in zip(*self.raw, strict=True))
            for k in np.unique(key):
                m = key == k
                xs, ys = decimate(x[m], y[m]) if self.limit is not None else (x[m], y[m])
                out.append((int(k), xs, ys))
            return out
        key, _, xf, xl, ymin, ymax = self.folded
        for k in np.unique(key):
            m = key == k
            xs = np.empty(2 * int(m.sum()))
            ys = np.empty_like(xs)
            xs[0::2], xs[1::2] = xf[m], xl[m]
            ys[0::2], ys[1::2] = ymin[m], ymax[m]
            out.append((int(k), xs, ys))
        return out


def _fold_steps(*cols: np.ndarray) -> tuple[np.ndarray, ...]:
    """Rows (key, bin, first x, last x, min y, max y) merged to one per key and bin, sorted."""
    import numpy as np

    key, b, xf, xl, ymin, ymax = cols
    order = np.lexsort((xf, b, key))
    key, b, xf, xl, ymin, ymax = (c[order] for c in cols)
    starts = np.flatnonzero(np.r_[True, (key[1:] != key[:-1]) | (b[1:] != b[:-1])])
    return (
        key[starts],
        b[starts],
        np.minimum.reduceat(xf, starts),
        np.maximum.reduceat(xl, starts),
        np.minimum.reduceat(ymin, starts),
        np.maximum.reduceat(ymax, starts),
    )


@dataclass
class _TseqData:
    """What a time-sequence graph draws over ``t0..t1`` seconds, reduced as the segment trace
    is read (:meth:`add`, piece by piece): data segments sent and arrived, the cumulative ACK
    per connection, SACK blocks, and the highest byte (the y scale). ``detail``: every mark as
    it is (zoomed views)."""

    t0: float
    t1: float
    detail: bool
    send: _Marks
    arrive: _Marks
    sack: _Marks
    ack: _Steps
    top: float = 0.0

    @classmethod
    def new(cls, t0: float, t1: float, *, detail: bool, top: float = 0.0) -> _TseqData:
        limit = None if detail else MAX_MARKS
        # SACK blocks beyond MAX_MARKS: each distinct block per time slice, its edges rounded
        # out to 1/4096 of the graph's height (finer than a pixel)
        quantum = top / 4096 if top > 0 and not detail else 0.0
        return cls(
            t0,
            t1,
            detail,
            send=_Marks(t0, t1, limit),
            arrive=_Marks(t0, t1, limit),
            sack=_Marks(t0, t1, limit if quantum > 0 else None, quantum),
            ack=_Steps(t0, t1, None if detail else ACK_POINTS),
        )

    def add(self, seg: pd.DataFrame) -> None:
        """One piece of a flow's segment trace (rows outside ``t0..t1`` are skipped)."""
        import numpy as np

        ts = seg["t_ns"].to_numpy() / 1e9
        win = (ts >= self.t0) & (ts <= self.t1)
        if not np.any(win):
            return
        ts = ts[win]
        kind = seg["kind"].astype(str).to_numpy()[win]
        seq = seg["seq"].to_numpy()[win].astype(np.float64)
        hi = seq + seg["len"].to_numpy()[win].astype(np.float64)
        send, arrive = kind == "send", kind == "arrive"
        data = send | arrive
        if np.any(data):
            self.top = max(self.top, float(np.max(hi[data])))
        self.send.add(ts[send], seq[send], hi[send])
        self.arrive.add(ts[arrive], seq[arrive], hi[arrive])
        ack = kind == "ack"
        self.ack.add(seg["conn"].to_numpy()[win][ack], ts[ack], seq[ack])
        sack = kind == "sack"
        self.sack.add(ts[sack], seq[sack], hi[sack])


#: Cumulative-ACK points kept one by one in an overview (all connections together); beyond,
#: they are kept per time slice (:class:`_Steps`).
ACK_POINTS = 1 << 14


def _draw_tseq(
    ax: Axes, fl: _Flow, d: _TseqData, tdiv: float, *, annotate: bool
) -> tuple[float, str]:
    """Draw flow ``fl``'s time-sequence graph from ``d`` on ``ax``; returns the y divisor and
    unit used."""
    import numpy as np

    top = d.top if d.top > 0 else 1.0
    detail = d.detail
    ydiv, yunit = _si_bytes(top)
    if detail:
        ydiv, yunit = (1e3, "kB") if top >= 1e4 else (1.0, "bytes")

    def marks(m: _Marks, colour: str, label: str, lw: float, **kw: Any) -> None:
        x, lo, hi = m.result()
        if not len(x):
            return
        ax.vlines(x / tdiv, lo / ydiv, hi / ydiv, colors=colour, linewidth=lw, label=label, **kw)

    marks(d.send, C_SEND, "data sent (sender)", 1.4 if detail else 1.0)
    marks(d.arrive, C_ARRIVE, "data arrived (receiver)", 0.9 if detail else 0.7)
    # the cumulative-ACK line, broken between connections
    lines = d.ack.lines()
    if lines:
        xs: list[np.ndarray] = []
        ys: list[np.ndarray] = []
        for _, x, y in lines:
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
    marks(d.sack, C_SACK, "SACK / DSACK block", 3.0, alpha=0.8)
    _draw_marks(ax, fl, d.t0, d.t1, tdiv, ydiv, annotate=annotate)
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
    assert fl.overview is not None
    tdiv, tunit = _time_unit(t1 - t0)
    fig, ax = figure(size=(11.0, 5.0))
    _, yunit = _draw_tseq(ax, fl, fl.overview, tdiv, annotate=False)
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
        d = _TseqData.new(a, b, detail=True)
        for piece in fl.zoomed:
            d.add(piece)
        _, yunit = _draw_tseq(ax, fl, d, tdiv, annotate=True)
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


@dataclass
class _Queues:
    """The queue samples a run's link figures draw, reduced as they are read in pieces: per
    hop and direction (key ``2 * hop + dir``), the queue length and, for a managed queue, its
    delay."""

    packets: dict[int, tuple[np.ndarray, np.ndarray]]
    delay: dict[int, tuple[np.ndarray, np.ndarray]]
    managed: bool

    @classmethod
    def read(cls, run: RunResult, t0: float, t1: float) -> _Queues:
        import numpy as np

        packets, delay = _Steps(t0, t1, ACK_POINTS), _Steps(t0, t1, ACK_POINTS)
        managed = False
        for q in run.batches("queues"):
            managed = managed or "delay_ms" in q
            key = 2 * q["hop"].to_numpy().astype(np.int64) + (q["dir"].astype(str) == "rev")
            t = q["t_ns"].to_numpy() / 1e9
            packets.add(key, t, q["packets"].to_numpy().astype(float))
            if "delay_ms" in q:
                has = q["delay_ms"].notna().to_numpy()
                delay.add(key[has], t[has], q["delay_ms"].to_numpy()[has].astype(float))
        return cls(
            {k: (x, y) for k, x, y in packets.lines()},
            {k: (x, y) for k, x, y in delay.lines()},
            managed,
        )


def _queue_delay(axq: Axes, q: _Queues, hop: int, tdiv: float) -> None:
    """A managed queue's delay (the latest packet's sojourn) on a right-hand axis, dashed."""
    axd = axq.twinx()
    for i, (d, colour) in enumerate((("fwd", C_SEND), ("rev", C_ACK))):
        if 2 * hop + i not in q.delay:
            continue
        x, y = q.delay[2 * hop + i]
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
    queues: _Queues | None,
) -> Path:
    import numpy as np

    tdiv, tunit = _time_unit(t1 - t0)
    fig, axes = figure(1, 2, size=(11.0, 2.8))
    axq, axd = axes
    if queues is not None and queues.packets:
        for i, (d, colour) in enumerate((("fwd", C_SEND), ("rev", C_ACK))):
            if 2 * hop + i not in queues.packets:
                continue
            x, y = queues.packets[2 * hop + i]
            label = "data direction (fwd)" if d == "fwd" else "ACK direction (rev)"
            axq.plot(x / tdiv, y, color=colour, linewidth=1.0, drawstyle="steps-post", label=label)
        axq.set_ylim(bottom=0)
        if any(k // 2 == hop for k in queues.delay):
            _queue_delay(axq, queues, hop, tdiv)
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
    managed = managed or (queues is not None and queues.managed)
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
    traced = run.traced
    events = run.events
    tops: dict[int, float] = {}
    truth = _read_truth(run, events, ids, t0, t1, tops) if traced else None
    rtx_rows = np.flatnonzero(events["kind"].astype(str).to_numpy() == "retransmit")
    ts_all = run.timeseries
    paths: list[Path] = []
    fls = []
    for fid in ids:
        mask = (events["flow"] == fid).to_numpy()
        fls.append(
            _Flow(
                id=fid,
                name=str(flow_rows[ids.index(fid)]["name"]) if flows is None else _name(run, fid),
                events=events[mask],
                timeseries=ts_all[ts_all["flow"] == fid],
                unnecessary=None if truth is None else truth[0][mask[rtx_rows]],
                first_arrival=None if truth is None else truth[1][mask[rtx_rows]],
            )
        )
    if traced:
        _read_trace(run, fls, t0, t1, tops)
    for fl in fls:
        fid = fl.id
        base = out / f"{prefix}flow{fid}"
        if fl.overview is not None:
            paths.append(_tseq(fl, Path(f"{base}-tseq.png"), t0, t1, run.scenario))
            ep = _episodes_figure(fl, Path(f"{base}-episodes.png"), run.scenario, t0, t1)
            if ep is not None:
                paths.append(ep)
        st = _state(fl, Path(f"{base}-state.png"), t0, t1, run.scenario)
        if st is not None:
            paths.append(st)
    queues = _Queues.read(run, t0, t1) if traced else None
    for hop, name in enumerate(_hop_names(run)):
        path = out / f"{prefix}link{hop}-{_slug(name)}.png"
        paths.append(_link(run, hop, name, path, t0, t1, queues))
    return paths


def _read_truth(
    run: RunResult,
    events: pd.DataFrame,
    ids: list[int],
    t0: float,
    t1: float,
    tops: dict[int, float],
) -> tuple[np.ndarray, np.ndarray]:
    """First pass over the segment trace: :func:`unnecessary_retransmissions`, and into
    ``tops`` each flow's highest byte sent or arrived within ``t0..t1`` (the overview's y
    scale)."""
    import numpy as np

    truth = _Truth(events)
    for seg in run.batches("segments"):
        truth.add(seg)
        ts = seg["t_ns"].to_numpy() / 1e9
        kind = seg["kind"].astype(str).to_numpy()
        data = ((kind == "send") | (kind == "arrive")) & (ts >= t0) & (ts <= t1)
        if not np.any(data):
            continue
        hi = seg["seq"].to_numpy()[data].astype(np.float64) + seg["len"].to_numpy()[data]
        flow = seg["flow"].to_numpy()[data]
        for fid in ids:
            m = flow == fid
            if np.any(m):
                tops[fid] = max(tops.get(fid, 0.0), float(hi[m].max()))
    return truth.result()


def _read_trace(
    run: RunResult, fls: list[_Flow], t0: float, t1: float, tops: dict[int, float]
) -> None:
    """Second pass over the segment trace: each flow's overview graph (reduced to what the
    figure can show, :class:`_TseqData`) and the rows inside its zoomed panels' windows."""
    import numpy as np

    windows: dict[int, list[tuple[float, float]]] = {}
    for fl in fls:
        fl.overview = _TseqData.new(t0, t1, detail=False, top=tops.get(fl.id, 0.0))
        eps = [(a, b) for te, a, b in _episodes(fl) if t0 <= te <= t1][:MAX_EPISODES]
        windows[fl.id] = eps
    for seg in run.batches("segments"):
        flow = seg["flow"].to_numpy()
        ts = seg["t_ns"].to_numpy() / 1e9
        for fl in fls:
            m = flow == fl.id
            if not np.any(m):
                continue
            mine = seg[m]
            assert fl.overview is not None
            fl.overview.add(mine)
            inside = np.zeros(int(m.sum()), dtype=bool)
            for a, b in windows[fl.id]:
                inside |= (ts[m] >= a) & (ts[m] <= b)
            if np.any(inside):
                fl.zoomed.append(mine[inside])


def _name(run: RunResult, fid: int) -> str:
    for f in run.summary.get("flows", []):
        if int(f["id"]) == fid:
            return str(f["name"])
    return str(fid)
