"""The ``kind = "trace"`` hop reader: a link whose capacity comes from trace files (Mahimahi's
format or tcplab's csv), as ``crates/tcplab-sim/src/hops/trace.rs`` models it; see
docs/traces.md. Python checks the keys; the simulator reads the files (a bad trace is refused
by the core's validator with the file and the line)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
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
    "aqm",
)
#: Trace file formats (``format``).
TRACE_FORMATS: Final = ("mahimahi", "csv")
TRACE_DEFAULTS: Final[dict[str, object]] = {
    "delay": "0ms",
    "queue": 100,
    "repeat": True,
    "format": "mahimahi",
}


def trace_hop(
    t: Table,
    name: str,
    *,
    queue: Callable[[object, str], dict[str, Any]],
    loss_of: Callable[[Mapping[str, tuple[object, str]]], dict[str, Any]],
    file_name: Callable[[object, str], str],
) -> dict[str, Any]:
    """A ``kind = "trace"`` table → a ``HopConfig`` of kind ``trace`` (``fwd`` = ``down``,
    ``rev`` = ``up`` or ``up_rate``). File names stay as written; :func:`resolve_files` makes
    relative ones relative to the scenario file. The readers of the keys a trace hop shares
    with a link (``queue``, ``loss``/``loss_model``, file names) are the scenario parser's,
    passed in by it (this module sits below the parser, which imports it)."""
    _file_name, _loss_of, _queue = file_name, loss_of, queue
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
    aqm: dict[str, Any] | None = None
    if "aqm" in t:
        # Only when set: a direction without it keeps the DropTail model (docs/aqm.md). The
        # directions served by a trace file take it; an ``up_rate`` direction stays DropTail.
        from tcplab.scenario.aqm import parse_aqm

        # RED's idle damping uses the trace's mean rate, which the core reads from the file;
        # no rule here depends on it.
        aqm = parse_aqm(t.raw("aqm"), t.at("aqm"), common["queue"], 0)
    fwd = {"file": _file_name(t.raw("down"), t.at("down")), **common}
    if aqm is not None:
        fwd["aqm"] = aqm
    if "up" in t:
        rev = {"file": _file_name(t.raw("up"), t.at("up")), **common}
        if aqm is not None:
            rev["aqm"] = dict(aqm)
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


#: The keys of a hop (and of its ``fwd``/``rev`` directions) that name files the simulator
#: reads (``config::FILE_KEYS`` in the core, which joins relative ones to ``base_dir``).
FILE_KEYS: Final = ("file", "delay_trace", "schedule")


def file_names(hops: list[dict[str, Any]]) -> list[str]:
    """The file names the hops of a configuration read, as written."""
    found = []
    for hop in hops:
        for part in (hop, hop.get("fwd"), hop.get("rev")):
            if isinstance(part, dict):
                found += [part[k] for k in FILE_KEYS if isinstance(part.get(k), str)]
    return found


def base_dir(source: str) -> str:
    """The directory relative file names of scenario ``source`` are read from: the scenario
    file's (the current directory for a scenario that is not a file, e.g. ``<dict>``)."""
    return str(Path.cwd() if source.startswith("<") else Path(source).parent.absolute())


def resolved(config: Mapping[str, Any]) -> list[Path]:
    """The files a configuration's hops read, as paths the simulator opens."""
    base = Path(str(config.get("base_dir", Path.cwd())))
    return [base / f for f in file_names(list(config.get("hops", [])))]
