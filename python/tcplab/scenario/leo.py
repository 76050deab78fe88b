"""The ``kind = "leo"`` hop reader: LEO satellite access (Starlink-like), as
``crates/tcplab-sim/src/hops/leo.rs`` models it; see docs/leo.md. The presets are the core's
(``registry()["leo_presets"]``); the simulator reads a schedule file (a bad one is refused by the
core's validator with the file and the line)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from tcplab.errors import field_error
from tcplab.scenario.fields import Table, as_prob
from tcplab.scenario.registry import names

#: The keys of a ``kind = "leo"`` table.
LEO_KEYS: Final = (
    "kind",
    "name",
    "preset",
    "schedule",
    "queue",
    "start_second",
    "handover_pause",
    "handover_loss",
    "handover_window",
)
LEO_DEFAULTS: Final[dict[str, object]] = {"queue": 1000, "start_second": 0}
#: A satellite assignment lasts 15 s; the handover times must be shorter.
_SLOT_NS: Final = 15_000_000_000


def leo_hop(
    t: Table,
    name: str,
    *,
    queue: Callable[[object, str], dict[str, Any]],
    file_name: Callable[[object, str], str],
) -> dict[str, Any]:
    """A ``kind = "leo"`` table → a ``HopConfig`` of kind ``leo``. The readers of the keys it
    shares with a link (``queue``, file names) are the scenario parser's, passed in by it."""
    d = LEO_DEFAULTS
    if "preset" not in t and "schedule" not in t:
        raise field_error(t.at("preset"), "required field missing (a preset, or set schedule)")
    hop: dict[str, Any] = {
        "kind": "leo",
        "name": name,
        "queue": queue(t.raw("queue", d["queue"]), t.at("queue")),
        "start_second": t.get_int("start_second", d["start_second"], 0, 59),
    }
    if "preset" in t:
        hop["preset"] = t.get_choice("preset", names("leo_presets"), "LEO preset")
    if "schedule" in t:
        hop["schedule"] = file_name(t.raw("schedule"), t.at("schedule"))
    for key in ("handover_pause", "handover_window"):
        if key in t:
            v = t.get_time(key)
            if v >= _SLOT_NS:
                raise field_error(t.at(key), "must be shorter than a slot (15s)")
            hop[f"{key}_ns"] = v
    if "handover_loss" in t:
        hop["handover_loss"] = as_prob(t.raw("handover_loss"), t.at("handover_loss"))
    return hop
