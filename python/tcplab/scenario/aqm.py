"""The ``aqm`` key of a queue: a queue discipline's name, or a table with its parameters.

The Rust core defines the disciplines (``crates/tcplab-sim/src/queue/``) and checks them
(``AqmConfig::check`` through ``validate.rs``, the authority); this module reads the TOML form,
fills every default (Linux's, as ``docs/aqm.md`` lists them) and mirrors the core's rules so a
scenario is rejected with the same one-line message before the core sees it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Final

from tcplab.errors import field_error, show
from tcplab.scenario.fields import Table, as_choice, as_int, as_number, join_field
from tcplab.scenario.units import parse_size, parse_time

#: Kinds, in the core's order (``AqmConfig::KINDS``).
KINDS: Final = ("droptail", "codel", "fq_codel", "pie", "red", "dualpi2")

#: Each kind's TOML keys and defaults (times as strings, as a user writes them); ``None``:
#: derived by the core (RED's thresholds and burst, from the queue limit as ``tc`` does).
DEFAULTS: Final[dict[str, dict[str, object]]] = {
    "droptail": {},
    # codel_params_init(): target 5 ms, interval 100 ms, no ECN, no CE threshold.
    "codel": {"target": "5ms", "interval": "100ms", "ecn": False, "ce_threshold": None},
    # fq_codel_init(): as CoDel but ECN on, 1024 flows, quantum psched_mtu() = 1514,
    # drop batch 64, memory limit 32 MiB.
    "fq_codel": {
        "target": "5ms",
        "interval": "100ms",
        "ecn": True,
        "ce_threshold": None,
        "flows": 1024,
        "quantum": 1514,
        "drop_batch": 64,
        "memory_limit": 32 << 20,
    },
    # pie_params_init(): target 15 ms, tupdate 15 ms, alpha 2 and beta 20 sixteenths.
    "pie": {
        "target": "15ms",
        "tupdate": "15ms",
        "alpha": 2,
        "beta": 20,
        "ecn": False,
        "bytemode": False,
        "dq_rate_estimator": False,
    },
    # iproute2 q_red.c: probability 0.02, avpkt 1000; min, max and burst derived.
    "red": {
        "min": None,
        "max": None,
        "probability": 0.02,
        "avpkt": 1000,
        "burst": None,
        "ecn": False,
        "harddrop": False,
    },
    # dualpi2_reset_default(): target 15 ms, tupdate 16 ms, alpha 0.16 Hz, beta 3.2 Hz, step
    # threshold 1 ms (a time; a whole number is packets of L-queue), the step applied whatever
    # the L-queue's length (min_qlen_step 0), coupling k = 2, C-queue weight 10 %, drop on
    # overload, decide at dequeue.
    "dualpi2": {
        "target": "15ms",
        "tupdate": "16ms",
        "alpha": 0.16,
        "beta": 3.2,
        "step_threshold": "1ms",
        "min_qlen_step": 0,
        "coupling": 2,
        "c_protection": 10,
        "drop_overload": True,
        "drop_early": False,
    },
}
#: sch_dualpi2.c: ALPHA_BETA_MAX, in 1/256 Hz.
_ALPHA_BETA_MAX: Final = 2**31 - 1

#: The largest time parameter (``codel.rs``: 16 intervals must fit a signed codel time).
_MAX_TIME_NS: Final = 100_000_000_000
_U32_MAX: Final = 2**32 - 1


def _bool(value: object, field: str) -> bool:
    if not isinstance(value, bool):
        raise field_error(field, f"must be true or false (got {show(value)})")
    return value


def _count(value: object, field: str) -> int:
    return as_int(value, field, 0, _U32_MAX)


def parse_aqm(value: object, field: str, queue: dict[str, Any], rate_bps: int) -> dict[str, Any]:
    """``aqm = "fq_codel"`` or ``aqm = {kind = "codel", target = "5ms", ...}`` on a queue whose
    hard limit is ``queue`` (the direction's ``QueueConfig``) in front of ``rate_bps`` → the
    core's ``AqmConfig`` with every default filled."""
    if isinstance(value, str):
        kind = as_choice(value, field, KINDS, "queue discipline")
        t = Table({}, field, ())
    else:
        if not isinstance(value, dict):
            raise field_error(
                field, f'must be a discipline like "fq_codel" or a table (got {show(value)})'
            )
        if "kind" not in value:
            raise field_error(join_field(field, "kind"), "required field missing")
        kind = as_choice(value["kind"], join_field(field, "kind"), KINDS, "queue discipline")
        t = Table(value, field, ("kind", *DEFAULTS[kind]))
    d = DEFAULTS[kind]

    def raw(key: str) -> object:
        return t.raw(key, d[key])

    def time(key: str) -> int:
        ns = parse_time(raw(key), t.at(key))
        if ns > _MAX_TIME_NS:
            raise field_error(t.at(key), f"must be ≤ 100s (got {ns} ns)")
        return ns

    out: dict[str, Any] = {"kind": kind}
    if kind in ("codel", "fq_codel"):
        out["target_ns"] = time("target")
        out["interval_ns"] = time("interval")
        for key in ("target", "interval"):
            if out[f"{key}_ns"] == 0:
                raise field_error(t.at(key), "must be > 0")
        out["ecn"] = _bool(raw("ecn"), t.at("ecn"))
        ce = None if raw("ce_threshold") is None else time("ce_threshold")
        if ce == 0:
            raise field_error(t.at("ce_threshold"), "must be > 0")
        out["ce_threshold_ns"] = ce
    if kind == "fq_codel":
        flows = _count(raw("flows"), t.at("flows"))
        if not 1 <= flows <= 65536:
            raise field_error(t.at("flows"), f"must be between 1 and 65536 (got {flows})")
        quantum = _count(raw("quantum"), t.at("quantum"))
        if quantum < 256:
            raise field_error(t.at("quantum"), f"must be ≥ 256 bytes (got {quantum})")
        batch = _count(raw("drop_batch"), t.at("drop_batch"))
        if batch == 0:
            raise field_error(t.at("drop_batch"), "must be ≥ 1")
        memory = parse_size(raw("memory_limit"), t.at("memory_limit"), positive=False)
        if memory == 0:
            raise field_error(t.at("memory_limit"), "must be > 0")
        out.update(flows=flows, quantum=quantum, drop_batch=batch, memory_limit=memory)
    elif kind == "pie":
        out["target_ns"] = time("target")
        out["tupdate_ns"] = time("tupdate")
        for key in ("target", "tupdate"):
            if out[f"{key}_ns"] == 0:
                raise field_error(t.at(key), "must be > 0")
        for key in ("alpha", "beta"):
            n = _count(raw(key), t.at(key))
            if n > 32:
                raise field_error(t.at(key), f"must be between 0 and 32 sixteenths (got {n})")
            out[key] = n
        for key in ("ecn", "bytemode", "dq_rate_estimator"):
            out[key] = _bool(raw(key), t.at(key))
    elif kind == "red":
        out.update(_red(t, d, queue, rate_bps))
    elif kind == "dualpi2":
        out.update(_dualpi2(t, d, time))
    return out


def _dualpi2(t: Table, d: dict[str, object], time: Callable[[str], int]) -> dict[str, Any]:
    """DualPI2's keys, checked as ``dualpi2.rs``'s ``check`` (``sch_dualpi2.c``'s policy)."""

    def raw(key: str) -> object:
        return t.raw(key, d[key])

    target = parse_time(raw("target"), t.at("target"))
    if target == 0:
        raise field_error(t.at("target"), "must be > 0")
    tupdate = parse_time(raw("tupdate"), t.at("tupdate"))
    if tupdate < 1000:
        raise field_error(t.at("tupdate"), "must be ≥ 1us")
    out: dict[str, Any] = {
        "target_ns": time("target"),
        "tupdate_ns": time("tupdate"),
    }
    # tc's `step_thresh 1ms` or `step_thresh 2p`: a time is the sojourn, a whole number the
    # L-queue's length in packets (step_in_packets); the time then keeps its default.
    step_raw = raw("step_threshold")
    step_packets = None
    if isinstance(step_raw, int) and not isinstance(step_raw, bool):
        step_packets = _count(step_raw, t.at("step_threshold"))
        step = parse_time(d["step_threshold"], t.at("step_threshold"))
    else:
        step = time("step_threshold")
    for key in ("alpha", "beta"):
        v = as_number(raw(key), t.at(key))
        top = _ALPHA_BETA_MAX / 256
        # Rust's f64::round (half away from zero), as dualpi2.rs: per_256().
        if not (math.isfinite(v) and 1 <= math.floor(v * 256 + 0.5) <= _ALPHA_BETA_MAX):
            raise field_error(t.at(key), f"must be between 1/256 and {top:.0f} Hz (got {_num(v)})")
        out[key] = float(v)
    out["step_threshold_ns"] = step
    out["step_threshold_packets"] = step_packets
    out["min_qlen_step"] = _count(raw("min_qlen_step"), t.at("min_qlen_step"))
    coupling = _count(raw("coupling"), t.at("coupling"))
    if not 1 <= coupling <= 255:
        raise field_error(t.at("coupling"), f"must be between 1 and 255 (got {coupling})")
    wc = _count(raw("c_protection"), t.at("c_protection"))
    if wc > 100:
        raise field_error(t.at("c_protection"), f"must be between 0 and 100 percent (got {wc})")
    out.update(coupling=coupling, c_protection=wc)
    for key in ("drop_overload", "drop_early"):
        out[key] = _bool(raw(key), t.at(key))
    return out


def _red(t: Table, d: dict[str, object], queue: dict[str, Any], rate_bps: int) -> dict[str, Any]:
    """RED's keys, checked as ``red.rs``'s ``check`` and ``resolve`` (iproute2's derivations)."""

    def raw(key: str) -> object:
        return t.raw(key, d[key])

    def opt_size(key: str) -> int | None:
        v = raw(key)
        return None if v is None else parse_size(v, t.at(key), positive=False)

    p = as_number(raw("probability"), t.at("probability"))
    if not 0.0 < p <= 1.0:
        raise field_error(t.at("probability"), f"must be in (0, 1] (got {_num(p)})")
    avpkt = _count(raw("avpkt"), t.at("avpkt"))
    if avpkt == 0:
        raise field_error(t.at("avpkt"), "must be > 0")
    burst = None if raw("burst") is None else _count(raw("burst"), t.at("burst"))
    if burst == 0:
        raise field_error(t.at("burst"), "must be > 0")
    qmin, qmax = opt_size("min"), opt_size("max")
    out = {
        "min_bytes": qmin,
        "max_bytes": qmax,
        "probability": p,
        "avpkt": avpkt,
        "burst": burst,
        "ecn": _bool(raw("ecn"), t.at("ecn")),
        "harddrop": _bool(raw("harddrop"), t.at("harddrop")),
    }
    # red.rs resolve(): q_red.c's defaults from the byte limit (packets times avpkt).
    lim = queue["limit"] if queue["kind"] == "bytes" else queue["limit"] * avpkt
    th_max = qmax if qmax is not None else (3 * qmin if qmin is not None else lim // 4)
    th_min = qmin if qmin is not None else th_max // 3
    if th_min >= th_max:
        raise field_error(t.at("min"), f"must be < max ({th_min} ≥ {th_max} bytes)")
    if th_max > lim:
        raise field_error(t.at("max"), f"must be ≤ the queue limit ({th_max} > {lim} bytes)")
    if th_max >= 1 << 24:
        raise field_error(t.at("max"), "must be < 16 MiB")
    b = burst if burst is not None else (2 * th_min + th_max) // (3 * avpkt)
    _eval_ewma(th_min, b, avpkt, t.at("burst"))
    del rate_bps  # the idle-damping table cannot fail for a positive rate and avpkt
    return out


def _eval_ewma(qmin: int, burst: int, avpkt: int, field: str) -> int:
    """iproute2 tc_red.c: tc_red_eval_ewma(), as ``red.rs`` runs it."""
    a = burst + 1.0 - qmin / avpkt
    if a < 1.0:
        raise field_error(field, f"is too small for min (at least {1 + qmin // avpkt})")
    w = 0.5
    for wlog in range(1, 32):
        if a <= (1.0 - (1.0 - w) ** burst) / w:
            return wlog
        w /= 2.0
    raise field_error(field, "is too large")


def _num(x: float) -> str:
    """A float as Rust's ``{}`` prints it (1 → "1", 0.5 → "0.5")."""
    if math.isfinite(x) and x == int(x):
        return str(int(x))
    return repr(x)
