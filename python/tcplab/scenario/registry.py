"""The registries tcplab defines once, in Rust, read through the bindings (``_core.registry``).

Congestion controls (``crates/tcplab-tcp/src/cc``: each controller's ``CcEntry`` with its name,
``cc_params`` keys, defaults and rules), spurious-retransmission detectors and responses, loss
recovery choices, RTO profiles, delayed-ACK timers and the normalized hop kinds. The scenario
loader takes its choices, parameter rules and the lists its error messages name from here, so
a new congestion control is its Rust file and one registry line, and Python follows.
"""

from __future__ import annotations

import json
import math
from functools import cache
from typing import Any

__all__ = [
    "cc",
    "cc_names",
    "names",
    "param_accepts",
    "registry",
    "rto_profiles",
    "show_number",
]

_TIME_UNITS = (("h", 3_600_000_000_000), ("s", 1_000_000_000), ("ms", 1_000_000), ("us", 1_000))


@cache
def registry() -> dict[str, Any]:
    """Every registry as one table (``crates/tcplab-sim/src/lib.rs``, ``registry_json``)."""
    try:
        from tcplab import _core
    except ImportError:
        raise ImportError(
            "the simulator extension tcplab._core is not built (its registries define the "
            "congestion controls and other names a scenario uses): install tcplab with "
            "`pip install .`"
        ) from None
    table: dict[str, Any] = json.loads(_core.registry())
    return table


def names(kind: str) -> tuple[str, ...]:
    """The names of one list registry (``"spurious_detectors"``, ``"hop_kinds"``, ...)."""
    return tuple(registry()[kind])


def cc(name: str) -> dict[str, Any] | None:
    """The congestion control ``name``'s entry (``name``, ``params``, ``at_least``,
    ``target_rate``, ``loss_based``, ``hystart_linux``, ``cubic_linux``, ``reno_linux``), None if
    there is none."""
    return next((e for e in registry()["congestion_controls"] if e["name"] == name), None)


def cc_names(**flags: bool) -> tuple[str, ...]:
    """Names of the congestion controls, in the registry's order; ``loss_based=True`` and the
    like keep the entries with those flags."""
    return tuple(
        e["name"]
        for e in registry()["congestion_controls"]
        if all(e[flag] == want for flag, want in flags.items())
    )


def param_accepts(param: dict[str, Any], value: float) -> bool:
    """Does ``value`` satisfy a ``cc_params`` rule (Rust's ``Param::accepts``)?"""
    if not math.isfinite(value):
        return False
    if param["zero_ok"] and value == 0:
        return True
    lo, hi = param["min"], param["max"]
    above = lo is None or (value > lo if param["min_open"] else value >= lo)
    below = hi is None or (value < hi if param["max_open"] else value <= hi)
    return above and below and (not param["integer"] or float(value).is_integer())


def show_number(value: float) -> str:
    """A parameter value as both validators quote it (Python's float repr: ``2.0``)."""
    return repr(float(value))


def _time(ns: int) -> str:
    """Nanoseconds in the largest unit that keeps them whole (``200ms``, ``60s``)."""
    for unit, size in _TIME_UNITS:
        if ns and ns % size == 0:
            return f"{ns // size}{unit}"
    return f"{ns}ns"


@cache
def rto_profiles() -> dict[str, dict[str, str | int | bool]]:
    """The named RTO profiles (``rto = "linux"``) in scenario units, the default first."""
    return {
        p["name"]: {
            "initial": _time(p["initial_ns"]),
            "min": _time(p["min_ns"]),
            "max": _time(p["max_ns"]),
            "granularity": _time(p["granularity_ns"]),
            "max_backoff": p["max_backoff"],
            "restart_on_rtx": p["restart_on_rtx"],
            "estimator": p["estimator"],
            "syn_retries": p["syn_retries"],
            "synack_retries": p["synack_retries"],
            "retries2": p["retries2"],
        }
        for p in registry()["rto_profiles"]
    }
