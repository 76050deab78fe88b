"""The ``kind = "wlan"`` hop of a TOML scenario (an 802.11g cell, ``wlan.rs`` in tcplab-sim).

```toml
[[path]]
kind = "wlan"
ap_queue = 265          # AP transmit queue, packets
sta_queue = 100         # each station's transmit queue, packets
# ap_aqm = "fq_codel"   # a queue discipline in place of the AP's DropTail queue (sta_aqm: stations)
retry_limit = 7         # dot11ShortRetryLimit
# data_rate = "54Mbps", basic_rate = "24Mbps", cw_min = 15, cw_max = 1023, slot = "9us",
# sifs = "10us", handover = "2s", handover_margin = 0 (m),
# handover_flush = true (a station's uplink frames are lost while it is not associated)
# aps = [{name = "ap1", x = 0, y = 0, errors = {kind = "gilbert_elliott", ...},
#         interference = {mean_gap = "10s", mean_burst = "200ms", loss = 1.0}}]
[[path.stations]]       # optional: by default every flow gets its own station on AP 0
flows = [0, 1]          # flow indices whose sender is on this station
ap = 0
errors = {kind = "bernoulli", p = 0.01}
# errors_down = {...}   # a loss model for the AP's frames to this station only
# fading = {mean_gap = "3s", mean_burst = "50ms", loss = 1.0}   # this station's fades in time
path = [[0, 0.0, 1.0], [40, 20.0, 1.0]]   # waypoints: [time s, x m, y m]
```
The WLAN hop must be the first ``[[path]]`` entry (the stations send uplink to the far end).
"""

from __future__ import annotations

from typing import Any, Final

from tcplab.errors import field_error, show

__all__ = ["WLAN_KEYS", "assign_stations", "wlan_hop"]

#: Most stations on a WLAN hop (``wlan.rs`` re-checks it).
MAX_STATIONS = 4096

WLAN_KEYS: Final = (
    "kind",
    "name",
    "ap_queue",
    "sta_queue",
    "ap_aqm",
    "sta_aqm",
    "retry_limit",
    "data_rate",
    "basic_rate",
    "cw_min",
    "cw_max",
    "slot",
    "sifs",
    "handover",
    "handover_margin",
    "handover_flush",
    "aps",
    "stations",
)
_AP_KEYS: Final = ("name", "x", "y", "errors", "interference")
_STA_KEYS: Final = (
    "name",
    "flows",
    "cross",
    "ap",
    "path",
    "errors",
    "errors_down",
    "distance_errors",
    "fading",
)
_OFDM: Final = (6, 9, 12, 18, 24, 36, 48, 54)


def _errors(value: object, field: str) -> dict[str, Any]:
    from tcplab.scenario.fields import as_loss_model

    return as_loss_model(value, field)


def _number(value: object, field: str, lo: float | None = None) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise field_error(field, f"must be a number (got {show(value)})")
    if lo is not None and value < lo:
        raise field_error(field, f"must be ≥ {lo} (got {show(value)})")
    return float(value)


def _indices(value: object, field: str) -> list[int]:
    if not isinstance(value, list) or any(
        isinstance(v, bool) or not isinstance(v, int) or v < 0 for v in value
    ):
        raise field_error(field, f"must be a list of indices like [0, 1] (got {show(value)})")
    return list(value)


def wlan_hop(hop: object, field: str, name: str) -> dict[str, Any]:
    """A ``[[path]]`` table of kind ``wlan`` → the simulator's hop configuration."""
    from tcplab.scenario.fields import Table as _Table

    t = _Table(hop, field, WLAN_KEYS)
    out: dict[str, Any] = {"kind": "wlan", "name": name}
    for key in ("data_rate", "basic_rate"):
        if key in t:
            rate = t.get_rate(key)
            if rate % 1_000_000 or rate // 1_000_000 not in _OFDM:
                raise field_error(
                    t.at(key),
                    f"must be an 802.11g OFDM rate (6, 9, 12, 18, 24, 36, 48 or 54 Mbps) "
                    f"(got {show(t.raw(key))})",
                )
            out[f"{key}_bps"] = rate
    for key, lo, hi in (
        ("ap_queue", 1, 1 << 20),
        ("sta_queue", 1, 1 << 20),
        ("retry_limit", 1, 255),
    ):
        if key in t:
            out[key] = t.get_int(key, lo=lo, hi=hi)
    for key in ("cw_min", "cw_max"):
        if key in t:
            v = t.get_int(key, lo=1, hi=65535)
            if (v + 1) & v:
                raise field_error(t.at(key), f"must be 2^k - 1, like 15 or 1023 (got {v})")
            out[key] = v
    for key in ("slot", "sifs", "handover"):
        if key in t:
            out[f"{key}_ns"] = t.get_time(key, positive=key != "sifs")
    if "handover_margin" in t:
        out["handover_margin_m"] = _number(t.raw("handover_margin"), t.at("handover_margin"), 0)
    if "handover_flush" in t:
        flush = t.raw("handover_flush")
        if not isinstance(flush, bool):
            raise field_error(t.at("handover_flush"), f"must be true or false (got {show(flush)})")
        out["handover_flush"] = flush
    aps_raw = t.raw("aps", [{"name": "ap1"}])
    if not isinstance(aps_raw, list) or not aps_raw:
        raise field_error(t.at("aps"), "must be a non-empty list of AP tables")
    aps = []
    for k, a in enumerate(aps_raw):
        at = _Table(a, f"{t.at('aps')}[{k}]", _AP_KEYS)
        ap: dict[str, Any] = {
            "name": at.get_str("name", f"ap{k + 1}"),
            "x": _number(at.raw("x", 0.0), at.at("x")),
            "y": _number(at.raw("y", 0.0), at.at("y")),
        }
        if "errors" in at:
            ap["errors"] = _errors(at.raw("errors"), at.at("errors"))
        if "interference" in at:
            ap["interference"] = _on_off(at.raw("interference"), at.at("interference"))
        aps.append(ap)
    out["aps"] = aps
    stations = []
    for k, s in enumerate(t.tables("stations", required=False)):
        st = _Table(s, f"{t.at('stations')}[{k}]", _STA_KEYS)
        sta: dict[str, Any] = {
            "name": st.get_str("name", f"sta{k}"),
            "flows": _indices(st.raw("flows", []), st.at("flows")),
            "cross": _indices(st.raw("cross", []), st.at("cross")),
            "ap": st.get_int("ap", 0, 0, len(aps) - 1),
        }
        if "errors" in st:
            sta["errors"] = _errors(st.raw("errors"), st.at("errors"))
        if "errors_down" in st:
            sta["errors_down"] = _errors(st.raw("errors_down"), st.at("errors_down"))
        if "fading" in st:
            sta["fading"] = _on_off(st.raw("fading"), st.at("fading"))
        if "distance_errors" in st:
            dt = _Table(st.raw("distance_errors"), st.at("distance_errors"), ("d0", "d1"))
            d0 = _number(dt.raw("d0"), dt.at("d0"), 0)
            d1 = _number(dt.raw("d1"), dt.at("d1"), 0)
            if d1 <= d0:
                raise field_error(dt.at("d1"), f"must be > d0 ({d0}) (got {show(dt.raw('d1'))})")
            sta["distance_errors"] = {"d0_m": d0, "d1_m": d1}
        if "path" in st:
            sta["path"] = _waypoints(st.raw("path"), st.at("path"))
        stations.append(sta)
    out["stations"] = stations
    for key, queue_key, default in (("ap_aqm", "ap_queue", 265), ("sta_aqm", "sta_queue", 1000)):
        if key not in t:
            continue  # only when set: a queue without it keeps its DropTail model
        if any(len(st.get("path", [])) > 1 for st in stations):
            raise field_error(
                t.at(key),
                "not supported with moving stations (a handover purges the queues, which a "
                "queue discipline does not offer)",
            )
        from tcplab.scenario.aqm import parse_aqm

        limit = {"kind": "packets", "limit": out.get(queue_key, default)}
        rate = out.get("data_rate_bps", 54_000_000)
        out[key] = parse_aqm(t.raw(key), t.at(key), limit, rate)
    return out


def _on_off(value: object, field: str) -> dict[str, Any]:
    """An on/off process in time (an AP's ``interference``, a station's ``fading``)."""
    from tcplab.scenario.fields import Table as _Table

    it = _Table(value, field, ("mean_gap", "mean_burst", "loss"))
    loss = _number(it.raw("loss", 1.0), it.at("loss"), 0)
    if loss > 1:
        raise field_error(it.at("loss"), f"must be a probability ≤ 1 (got {show(loss)})")
    return {
        "mean_gap_ns": it.get_time("mean_gap", positive=True),
        "mean_burst_ns": it.get_time("mean_burst", positive=True),
        "loss": loss,
    }


def _waypoints(value: object, field: str) -> list[dict[str, Any]]:
    from tcplab.scenario.units import parse_time

    if not isinstance(value, list) or not value:
        raise field_error(field, "must be a list of [time, x, y] waypoints")
    out: list[dict[str, Any]] = []
    for k, w in enumerate(value):
        f = f"{field}[{k}]"
        if not isinstance(w, list) or len(w) != 3:
            raise field_error(f, f'must be [time, x, y] like ["10s", 5.0, 0.0] (got {show(w)})')
        t_ns = parse_time(w[0] if isinstance(w[0], str) else f"{w[0]}s", f)
        if out and t_ns <= out[-1]["t_ns"]:
            raise field_error(f, "waypoint times must increase")
        out.append({"t_ns": t_ns, "x": _number(w[1], f), "y": _number(w[2], f)})
    return out


def assign_stations(config: dict[str, Any]) -> None:
    """Give every flow its own station on AP 0 when a WLAN hop lists no stations; check that
    the WLAN hop comes first and that listed flows and cross sources exist."""
    for i, hop in enumerate(config["hops"]):
        if hop.get("kind") != "wlan":
            continue
        if i != 0:
            raise field_error(f"path[{i}].kind", 'a "wlan" hop must be the first [[path]] entry')
        if not hop["stations"]:
            hop["stations"] = [
                {"name": f"sta{k}", "flows": [k], "cross": [], "ap": 0}
                for k in range(len(config["flows"]))
            ]
        if len(hop["stations"]) > MAX_STATIONS:
            raise field_error(
                f"path[{i}].stations",
                f"at most {MAX_STATIONS} stations (one per flow unless listed; "
                f"got {len(hop['stations'])})",
            )
        for k, st in enumerate(hop["stations"]):
            for key, n in (("flows", len(config["flows"])), ("cross", len(config["cross"]))):
                bad = [v for v in st[key] if v >= n]
                if bad:
                    raise field_error(
                        f"path[{i}].stations[{k}].{key}",
                        f"{key[:-1] if key == 'flows' else 'cross source'} {bad[0]} does not "
                        f"exist ({n} defined)",
                    )
        on_station = {c for st in hop["stations"] for c in st["cross"]}
        for k, cross in enumerate(config["cross"]):
            if i in cross["path"] and k not in on_station:
                raise field_error(
                    f"path[{i}].stations",
                    f"cross-traffic source {show(cross['name'])} passes this WLAN hop but no "
                    f"station sends it (add cross = [{k}] to a [[path.stations]] entry)",
                )
        listed = [f for st in hop["stations"] for f in st["flows"]]
        for f in range(len(config["flows"])):
            if listed.count(f) != 1:
                raise field_error(
                    f"path[{i}].stations",
                    f"flow {f} must be on exactly one station (listed {listed.count(f)} times)",
                )
