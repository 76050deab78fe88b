"""Random cases for ``tcplab validate linux --random N --seed S [--space FILE]``.

A hand-picked matrix says how well tcplab does on the cases someone thought of; a user's case
is a draw from the whole space. This module defines that space, draws cases from it and
summarises the errors over the draw.

The default space (every range inclusive; "log-uniform" means the logarithm is uniform):

- ``cc``: reno or cubic, equally likely (a space file may add ``bbr``, the kernel's BBR against
  tcplab's);
- ``rate``: log-uniform over 1-200 Mbit/s (both directions);
- ``rtt``: log-uniform over 5-300 ms (twice the one-way delay);
- ``loss``: none with probability 1/4, else log-uniform over 1e-4-3e-2 (data direction);
- ``queue``: log-uniform over 0.1-4 bandwidth-delay products, in 1500-byte packets, at least 2.

Case ``i`` of seed ``S`` is drawn from its own stream (``numpy.random.default_rng([S, i])``),
so the first ``k`` cases of ``--random 40`` are those of ``--random k``. A space file (TOML)
may replace any of the keys above::

    cc = ["reno", "cubic"]    # any of reno, cubic, bbr
    rate = ["1Mbps", "200Mbps"]
    rtt = ["5ms", "300ms"]
    loss = [1e-4, 3e-2]
    loss_zero = 0.25          # probability of no random loss
    queue_bdp = [0.1, 4]
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from tcplab.errors import ScenarioError
from tcplab.real.validate.compare import CC_TCPLAB, Case
from tcplab.scenario.units import parse_rate, parse_time


@dataclass(frozen=True)
class Space:
    """The parameter space random cases are drawn from (see the module's docstring)."""

    cc: tuple[str, ...] = ("reno", "cubic")
    rate_bps: tuple[float, float] = (1e6, 200e6)
    rtt_ms: tuple[float, float] = (5.0, 300.0)
    loss: tuple[float, float] = (1e-4, 3e-2)
    loss_zero: float = 0.25
    queue_bdp: tuple[float, float] = (0.1, 4.0)

    def describe(self) -> str:
        """One line for reports."""
        return (
            f"cc {'/'.join(self.cc)}; rate log-uniform {self.rate_bps[0] / 1e6:g}-"
            f"{self.rate_bps[1] / 1e6:g} Mbit/s; RTT log-uniform {self.rtt_ms[0]:g}-"
            f"{self.rtt_ms[1]:g} ms; loss 0 with probability {self.loss_zero:g}, else "
            f"log-uniform {self.loss[0]:g}-{self.loss[1]:g}; queue log-uniform "
            f"{self.queue_bdp[0]:g}-{self.queue_bdp[1]:g} BDP (≥ 2 packets of 1500 B)"
        )


_KEYS = ("cc", "rate", "rtt", "loss", "loss_zero", "queue_bdp")


def _pair(where: str, key: str, value: Any, parse: Any) -> tuple[float, float]:
    if not isinstance(value, list) or len(value) != 2:
        raise ScenarioError(f"{where}: {key}: must be a list [low, high] (got {value!r})")
    lo, hi = (parse(v, f"{where}: {key}") for v in value)
    if not (0 < lo <= hi) or not math.isfinite(hi):
        raise ScenarioError(f"{where}: {key}: must satisfy 0 < low <= high (got {value!r})")
    return float(lo), float(hi)


def _number(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ScenarioError(f"{where}: must be a number (got {value!r})")
    return float(value)


def load_space(path: Path) -> Space:
    """A :class:`Space` from a TOML file; keys it leaves out keep their defaults. A bad file
    is a one-line :class:`ScenarioError` naming the file and the key."""
    where = str(path)
    try:
        doc = tomllib.loads(path.read_text())
    except OSError as err:
        raise ScenarioError(f"{where}: cannot read: {err.strerror}") from None
    except tomllib.TOMLDecodeError as err:
        raise ScenarioError(f"{where}: not valid TOML: {err}") from None
    unknown = sorted(set(doc) - set(_KEYS))
    if unknown:
        raise ScenarioError(f"{where}: {unknown[0]}: unknown key (expected one of {_KEYS})")
    kw: dict[str, Any] = {}
    if "cc" in doc:
        ccs = doc["cc"]
        if not isinstance(ccs, list) or not ccs or any(c not in CC_TCPLAB for c in ccs):
            raise ScenarioError(
                f"{where}: cc: must be a non-empty list of {', '.join(CC_TCPLAB)} (got {ccs!r})"
            )
        kw["cc"] = tuple(ccs)
    if "rate" in doc:
        kw["rate_bps"] = _pair(where, "rate", doc["rate"], parse_rate)
    if "rtt" in doc:
        lo, hi = _pair(where, "rtt", doc["rtt"], parse_time)
        kw["rtt_ms"] = (lo / 1e6, hi / 1e6)
    if "loss" in doc:
        kw["loss"] = _pair(where, "loss", doc["loss"], _number)
        if kw["loss"][1] >= 1:
            raise ScenarioError(f"{where}: loss: must be below 1 (got {doc['loss']!r})")
    if "loss_zero" in doc:
        p = _number(doc["loss_zero"], f"{where}: loss_zero")
        if not 0 <= p <= 1:
            raise ScenarioError(f"{where}: loss_zero: must be in [0, 1] (got {p!r})")
        kw["loss_zero"] = p
    if "queue_bdp" in doc:
        kw["queue_bdp"] = _pair(where, "queue_bdp", doc["queue_bdp"], _number)
    return Space(**kw)


def _log_uniform(rng: np.random.Generator, lo: float, hi: float) -> float:
    return float(math.exp(rng.uniform(math.log(lo), math.log(hi))))


def draw_cases(
    space: Space, n: int, seed: int, duration_s: float, warmup_s: float
) -> list[tuple[Case, dict[str, float]]]:
    """``n`` cases from ``space``: each with the drawn values before rounding (``queue_bdp``
    is the queue in bandwidth-delay products)."""
    out = []
    for i in range(n):
        rng = np.random.default_rng([seed, i])
        cc = space.cc[int(rng.integers(len(space.cc)))]
        rate = _log_uniform(rng, *space.rate_bps)
        rtt = _log_uniform(rng, *space.rtt_ms)
        lossless = rng.uniform() < space.loss_zero
        loss = _log_uniform(rng, *space.loss)
        qbdp = _log_uniform(rng, *space.queue_bdp)
        # Round to values a user would type (3 significant digits), so a case's --case line
        # runs exactly the drawn case.
        rate_bps = int(float(f"{rate:.3g}"))
        rtt_ms = float(f"{rtt:.3g}")
        loss = 0.0 if lossless else float(f"{loss:.3g}")
        bdp = rate_bps * rtt_ms / 1e3 / 8 / 1500
        queue = max(2, round(qbdp * bdp))
        case = Case(
            rtt_ms=rtt_ms,
            loss=loss,
            cc=cc,
            rate_bps=rate_bps,
            queue=queue,
            duration_s=duration_s,
            warmup_s=warmup_s,
        )
        out.append((case, {"queue_bdp": queue / bdp, "index": i}))
    return out


def case_spec(case: Case) -> str:
    """``case`` as a ``--case`` argument that runs it again."""
    return (
        f"cc={case.cc},rate={case.rate_bps}bps,rtt={case.rtt_ms:g}ms,loss={case.loss:g},"
        f"queue={case.queue},duration={case.duration_s:g}s"
        + (f",aqm={case.aqm}" if case.aqm is not None else "")
        + (",ecn=1" if case.ecn else "")
    )


#: The random draw's targets: goodput within 10 % on at least 90 % of the cases and within
#: 20 % on all; no case where tcplab times out (more than 0.5 RTOs per run) while Linux never
#: does; retransmissions within 30 % on at least 80 % of the cases.
GOODPUT_NEAR, GOODPUT_FAR = 0.10, 0.20
RETRANS_NEAR = 0.30
SHARE_GOODPUT, SHARE_RETRANS = 0.90, 0.80


def case_errors(row: dict[str, Any]) -> dict[str, Any]:
    """One case's errors (tcplab against Linux's mean) and which targets it meets."""
    lg, sg = row["linux_goodput"][0], row["tcplab_goodput"][0]
    lr, sr = row["linux_retrans"], row["tcplab_retrans"]
    lt, st = row["linux_timeouts"], row["tcplab_timeouts"]
    goodput_err = sg / lg - 1 if lg > 0 else math.inf
    retrans_err = (sr - lr) / lr if lr > 0 else (0.0 if sr == 0 else math.inf)
    return {
        "goodput_err": goodput_err,
        "retrans_err": retrans_err,
        "rto_diff": st - lt,
        "goodput_10": abs(goodput_err) <= GOODPUT_NEAR,
        "goodput_20": abs(goodput_err) <= GOODPUT_FAR,
        "retrans_30": abs(sr - lr) <= RETRANS_NEAR * lr if lr > 0 else sr == 0,
        "spurious_rtos": lt == 0 and st > 0.5,
    }


def distribution(values: list[float]) -> dict[str, float]:
    """Median, 90th percentile and maximum of ``|values|`` (NaN for none)."""
    a = np.abs(np.asarray(values, dtype=float))
    if a.size == 0:
        return {"median": math.nan, "p90": math.nan, "max": math.nan}
    return {
        "median": float(np.median(a)),
        "p90": float(np.percentile(a, 90)),
        "max": float(a.max()),
    }


def summarise(errors: list[dict[str, Any]]) -> dict[str, Any]:
    """The error distribution over a draw and whether the draw meets the targets."""
    n = len(errors)
    near = sum(e["goodput_10"] for e in errors)
    far = sum(e["goodput_20"] for e in errors)
    retrans = sum(e["retrans_30"] for e in errors)
    spurious = sum(e["spurious_rtos"] for e in errors)
    return {
        "cases": n,
        "goodput_err": distribution([e["goodput_err"] for e in errors]),
        "retrans_err": distribution(
            [e["retrans_err"] for e in errors if math.isfinite(e["retrans_err"])]
        ),
        "rto_diff": distribution([e["rto_diff"] for e in errors]),
        "goodput_within_10": near,
        "goodput_within_20": far,
        "retrans_within_30": retrans,
        "rtos_where_linux_none": spurious,
        "met": {
            "goodput_10": n > 0 and near >= SHARE_GOODPUT * n,
            "goodput_20": far == n,
            "rtos": spurious == 0,
            "retrans": n > 0 and retrans >= SHARE_RETRANS * n,
        },
    }


__all__ = [
    "Space",
    "case_errors",
    "case_spec",
    "distribution",
    "draw_cases",
    "load_space",
    "summarise",
]
