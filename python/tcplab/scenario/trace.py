"""The ``kind = "trace"`` hop reader: a link whose capacity comes from trace files (Mahimahi's
format or tcplab's csv), as ``crates/tcplab-sim/src/hops/trace.rs`` models it; see
docs/traces.md. Python checks the keys; the simulator reads the files (a bad trace is refused
by the core's validator with the file and the line)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

from tcplab.errors import field_error
from tcplab.scenario.fields import Table

#: The keys of a ``kind = "trace"`` table.
TRACE_KEYS: Final = (
    "kind",
    "name",
    "down",
    "up",
    "up_rate",
    "delay",
    "delay_trace",
    "queue",
    "loss",
    "loss_model",
    "repeat",
    "format",
)
#: Trace file formats (``format``).
TRACE_FORMATS: Final = ("mahimahi", "csv")
TRACE_DEFAULTS: Final[dict[str, object]] = {
    "delay": "0ms",
    "queue": 100,
    "repeat": True,
    "format": "mahimahi",
}


def trace_hop(t: Table, name: str) -> dict[str, Any]:
    """A ``kind = "trace"`` table → a ``HopConfig`` of kind ``trace`` (``fwd`` = ``down``,
    ``rev`` = ``up`` or ``up_rate``). File names stay as written; :func:`resolve_files` makes
    relative ones relative to the scenario file."""
    # parse imports this module lazily, when a scenario has a trace hop
    from tcplab.scenario.parse import _file_name, _loss_of, _queue

    d = TRACE_DEFAULTS
    if "loss" in t and "loss_model" in t:
        raise field_error(t.at("loss_model"), f"cannot be combined with {t.at('loss')}")
    if "up" in t and "up_rate" in t:
        raise field_error(t.at("up_rate"), f"cannot be combined with {t.at('up')}")
    if "up" not in t and "up_rate" not in t:
        raise field_error(t.at("up"), "required field missing (a trace file, or set up_rate)")
    fmt = t.get_choice("format", TRACE_FORMATS, "trace format", d["format"])
    common: dict[str, Any] = {
        "format": fmt,
        "delay_ns": t.get_time("delay", d["delay"]),
        "queue": _queue(t.raw("queue", d["queue"]), t.at("queue")),
        "loss": _loss_of({k: (t.raw(k), t.at(k)) for k in ("loss", "loss_model") if k in t}),
    }
    if "delay_trace" in t:
        common["delay_trace"] = _file_name(t.raw("delay_trace"), t.at("delay_trace"))
    fwd = {"file": _file_name(t.raw("down"), t.at("down")), **common}
    if "up" in t:
        rev = {"file": _file_name(t.raw("up"), t.at("up")), **common}
    else:
        rate = t.get_rate("up_rate")
        if rate <= 0:
            raise field_error(t.at("up_rate"), "must be > 0")
        rev = {**common, "rate_bps": rate}
    return {
        "kind": "trace",
        "name": name,
        "fwd": fwd,
        "rev": rev,
        "repeat": t.get_bool("repeat", d["repeat"]),
    }


def resolve_files(hops: list[dict[str, Any]], source: str) -> None:
    """Make the trace and delay-trace file names of ``hops`` absolute: relative ones are
    relative to the scenario file ``source`` (to the current directory for a scenario that
    is not a file, e.g. ``<dict>``)."""
    base = Path.cwd() if source.startswith("<") else Path(source).parent.absolute()
    for hop in hops:
        for direction in ("fwd", "rev"):
            d = hop.get(direction)
            if not isinstance(d, dict):
                continue
            for key in ("file", "delay_trace"):
                if isinstance(d.get(key), str):
                    d[key] = str(base / d[key])
