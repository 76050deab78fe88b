"""Capacity trace files (docs/traces.md): loading, statistics, conversion, synthesis and plots;
the ``tcplab trace stats|plot|convert|synth`` command is in :mod:`tcplab.analyze.cli`.

Files are read by the simulator's own loader (``_core.trace_load``), so what these tools
report is what a ``kind = "trace"`` hop replays. Rates count IP bytes of full-size (1500-byte)
datagrams: a Mahimahi opportunity (1504 bytes as ``mm-link`` counts them) carries 1500.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

MAHIMAHI_OPPORTUNITY = 1504
DATAGRAM = 1500


def mahimahi_dir() -> Path | None:
    """Where tests and benchmarks read the eight measured Mahimahi traces: the directory in
    ``$TCPLAB_TRACE_DIR``, or None when it is not set (they skip then; docs/traces.md). The
    traces are not part of the repository and it names no place outside it."""
    env = os.environ.get("TCPLAB_TRACE_DIR")
    return Path(env) if env else None


class Trace(NamedTuple):
    """A loaded trace: distinct timestamps (ns) and the IP bytes their opportunities carry."""

    t_ns: np.ndarray
    ip_bytes: np.ndarray
    format: str

    @property
    def duration_ns(self) -> int:
        return int(self.t_ns[-1])


def load(path: str | Path, fmt: str = "mahimahi") -> Trace:
    """Read a trace with the simulator's loader; errors name the file and the line."""
    from tcplab import _core

    d = _core.trace_load(str(path), fmt)  # ValueError naming the file and line
    if "rates" in d:
        return _from_rates(d)
    t = np.frombuffer(d["t"][1], dtype="<u4").astype(np.int64) * int(d["tick_ns"])
    b = np.frombuffer(d["bytes"][1], dtype="<u4").astype(np.int64)
    if fmt == "mahimahi":
        b = b // MAHIMAHI_OPPORTUNITY * DATAGRAM
    return Trace(t, b, fmt)


def _from_rates(d: dict[str, Any]) -> Trace:
    """A csv rate trace (``time_us,rate_bps``) as the IP bytes it carries in each
    millisecond: the rates integrated exactly (in bits), each millisecond given the whole bytes
    carried by its end less those given before (so nothing is lost to rounding), and the
    milliseconds that carry nothing left out (they are outages). One period, as a repeating
    hop reads it: the last row's time ends it."""
    starts = np.frombuffer(d["starts_ns"][1], dtype="<u8").astype(np.int64)
    rates = np.frombuffer(d["rates"][1], dtype="<u8").astype(object)
    period = int(d["period_ns"])
    ms = np.arange(1_000_000, -(-period // 1_000_000) * 1_000_000 + 1, 1_000_000)
    ms = np.minimum(ms, period)
    # bits carried up to each start (exact: Python integers), then up to each ms end
    ends = np.append(starts[1:], period)
    seg_bits = rates * (ends - starts).astype(object)
    before = np.concatenate([[0], np.cumsum(seg_bits)[:-1]]).astype(object)
    i = np.searchsorted(starts, ms, side="right") - 1
    bits = before[i] + rates[i] * (ms - starts[i]).astype(object)
    total = np.array([b // 8_000_000_000 for b in bits], dtype=np.int64)  # whole bytes
    per_ms = np.diff(np.concatenate([[0], total]))
    keep = per_ms > 0
    if not keep[-1]:  # the trace lasts its whole period
        keep[-1] = True
    return Trace(ms[keep].astype(np.int64), per_ms[keep].astype(np.int64), "csv")


def per_bin(tr: Trace, bin_ns: int) -> np.ndarray:
    """IP bytes the trace carries in each bin of ``bin_ns`` over one period: bin k holds the
    opportunities at times in (k·bin, (k+1)·bin], so one at the period's end (where the next
    round begins) falls in the last bin, and one at 0 in the first."""
    idx = np.maximum(tr.t_ns - 1, 0) // bin_ns
    return np.bincount(idx, weights=tr.ip_bytes, minlength=int(idx[-1]) + 1)


def stats(tr: Trace, outage_ns: int = 500_000_000) -> dict[str, Any]:
    """Duration, mean rate, percentiles of the rate per second, and outages (gaps of at
    least ``outage_ns`` between opportunities, including from 0 to the first)."""
    secs = per_bin(tr, 1_000_000_000) * 8 / 1e6
    if tr.duration_ns % 1_000_000_000:
        secs = secs[:-1] if secs.size > 1 else secs  # a partial last second
    gaps = np.diff(np.concatenate([[0], tr.t_ns]))
    out = gaps[gaps >= outage_ns]
    pct = (0, 5, 25, 50, 75, 95, 100)
    return {
        "format": tr.format,
        "duration_s": tr.duration_ns / 1e9,
        "timestamps": int(tr.t_ns.size),
        "bytes": int(tr.ip_bytes.sum()),
        "mean_mbps": float(tr.ip_bytes.sum() * 8 / tr.duration_ns * 1e3),
        "per_second_mbps": {f"p{p}": float(np.percentile(secs, p)) for p in pct},
        "outage_threshold_s": outage_ns / 1e9,
        "outages": int(out.size),
        "outage_total_s": float(out.sum() / 1e9),
        "outage_longest_s": float(out.max() / 1e9) if out.size else 0.0,
    }


def write(tr: Trace, path: str | Path, fmt: str) -> None:
    """Write ``tr`` in ``fmt``. To Mahimahi: one line per 1500 IP bytes, at the millisecond
    at or after each opportunity (bytes short of a whole datagram carry over to the next
    row); to csv: the IP bytes at each timestamp in µs."""
    with open(path, "w") as f:
        if fmt == "csv":
            f.write("time_us,bytes\n")
            us = tr.t_ns // 1000
            f.write(
                "".join(
                    f"{t},{b}\n" for t, b in zip(us.tolist(), tr.ip_bytes.tolist(), strict=True)
                )
            )
            return
        ms = -(-tr.t_ns // 1_000_000)
        total = np.cumsum(tr.ip_bytes) // DATAGRAM
        counts = np.diff(np.concatenate([[0], total]))
        lines = np.repeat(ms, counts)
        if lines.size == 0 or lines[-1] == 0:
            raise ValueError(f"{path}: the converted trace would be empty or last 0 ms")
        f.write("\n".join(map(str, lines.tolist())))
        f.write("\n")


def synth(seconds: int, peak_bps: float, seed: int = 1) -> Trace:
    """A generated Mahimahi trace: per 100 ms a rate from a reflected random walk in [0,
    ``peak_bps``], zero during outages (2 % of the 100 ms steps start one of 0.2-2 s), and per
    millisecond a Poisson number of 1500-byte opportunities at that rate."""
    rng = np.random.default_rng(seed)
    steps = seconds * 10
    top = peak_bps / (DATAGRAM * 8 * 1000)  # opportunities per ms
    walk = np.cumsum(rng.normal(0.0, 0.06 * top, steps)) + 0.4 * top
    walk = np.abs(np.mod(walk, 2 * top) - top)
    k = 0
    while k < steps:
        if rng.random() < 0.02:
            n = int(rng.integers(2, 21))
            walk[k : k + n] = 0.0
            k += n
        k += 1
    counts = rng.poisson(np.repeat(walk, 100))
    counts[-1] = max(int(counts[-1]), 1)  # the trace lasts its whole length
    ms = np.arange(1, counts.size + 1, dtype=np.int64)
    keep = counts > 0
    return Trace(ms[keep] * 1_000_000, counts[keep] * DATAGRAM, "mahimahi")


def plot(tr: Trace, out: str | Path, title: str) -> None:
    """Rate per 100 ms and per second over the trace's period."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 3.2))
    for bin_ns, style in ((100_000_000, {"lw": 0.6, "alpha": 0.5}), (1_000_000_000, {"lw": 1.5})):
        rate = per_bin(tr, bin_ns) * 8 / (bin_ns / 1e9) / 1e6
        x = np.arange(rate.size) * bin_ns / 1e9
        ax.step(x, rate, where="post", label=f"per {bin_ns / 1e9:g} s", **style)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("capacity (Mbit/s, 1500-byte datagrams)")
    ax.set_title(title, fontsize=9)
    ax.legend(loc="upper right", fontsize=8)
    ax.set_xlim(0, tr.duration_ns / 1e9)
    ax.set_ylim(bottom=0)
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    plt.close(fig)
