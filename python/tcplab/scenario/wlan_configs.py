"""Simulator configurations with an 802.11 cell (the ``wlan`` hop, ``wlan.rs`` in tcplab-sim).

The configurations are normalized simulator JSON (base units: ns, bit/s, bytes), ready for
:func:`tcplab.campaign.sweep.run_configs`. Topology: hop 0 is the WLAN (all APs and stations), hop 1
the wired link from the APs (one switch, same subnet) to the server. Every station sends one bulk
TCP flow uplink to the server; flow *i* is station *i*'s.

Defaults follow the paper being reproduced (Ando, Murase, Oguchi): 802.11g at a fixed 54 Mbit/s,
AP buffer 265 packets, uplink TCP. Settings the paper leaves open are chosen here and exposed as
arguments: the TCP of 2010 Linux hosts running iperf (NewReno+SACK, autotuned windows up to 4 MB,
an ACK per segment, RTO min 200 ms), the Ethernet-to-WLAN converter of each station as a
100-packet station queue (``sta_queue``), a 100 Mbit/s, 0.5 ms wired link.
"""

from __future__ import annotations

import copy
from typing import Any

__all__ = ["TCP_DEFAULTS", "handover_config", "tcp", "uplink_config"]

MS = 1_000_000
S = 1_000_000_000

#: The TCP of the hosts (normalized ``TcpConfigJson``).
TCP_DEFAULTS: dict[str, Any] = {
    "cc": "newreno",
    "sack": True,
    "dsack": True,
    "timestamps": False,
    "window_scaling": True,
    "mss": 1460,
    "rcv_buf": 4 << 20,
    "snd_buf": 4 << 20,
    "initial_window_bytes": 2 * 1460,
    "initial_ssthresh": None,
    "max_cwnd": None,
    "limited_transmit": True,
    "rto": {
        "initial_ns": 1 * S,
        "min_ns": 200 * MS,
        "max_ns": 120 * S,
        "granularity_ns": 1 * MS,
        "max_backoff": 16,
    },
    "ack": {"every_n": 1, "max_delay_ns": 40 * MS, "immediate_on_ooo": True, "quickack": 0},
}


def tcp(**changes: Any) -> dict[str, Any]:
    """:data:`TCP_DEFAULTS` with ``changes`` (``ack_every``, ``qos_target_bps`` and plain keys)."""
    t = copy.deepcopy(TCP_DEFAULTS)
    every = changes.pop("ack_every", None)
    if every is not None:
        t["ack"]["every_n"] = int(every)
    t.update(changes)
    return t


def _wired(rate_bps: int, delay_ns: int) -> dict[str, Any]:
    d = {"rate_bps": rate_bps, "delay_ns": delay_ns, "queue": {"kind": "packets", "limit": 1000}}
    return {"kind": "link", "name": "wired", "fwd": d, "rev": dict(d)}


def _flow(i: int, name: str, start_ns: int, tcp_cfg: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": name,
        "path": [0, 1],
        "start_ns": start_ns,
        "tcp": tcp_cfg,
        "app": {"kind": "bulk", "bytes": None},
    }


def _on_off(x: dict[str, float]) -> dict[str, Any]:
    """An on/off process in time (``mean_gap_s``, ``mean_burst_ms``, ``loss`` default 1) as the
    hop's ``interference``/``fading`` table."""
    return {
        "mean_gap_ns": int(x["mean_gap_s"] * S),
        "mean_burst_ns": int(x["mean_burst_ms"] * MS),
        "loss": float(x.get("loss", 1.0)),
    }


def uplink_config(
    n: int,
    *,
    ap_queue: int = 265,
    sta_queue: int = 100,
    duration_s: float = 60.0,
    seed: int = 1,
    retry_limit: int = 7,
    errors: dict[str, Any] | None = None,
    tcp_cfg: dict[str, Any] | None = None,
    stagger_s: float = 2.0,
    sample_s: float = 0.5,
    wired_bps: int = 100_000_000,
    wired_delay_ns: int = 500_000,
    fading: dict[str, float] | None = None,
    errors_down: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """``n`` stations on one AP, each with one bulk TCP upload to the wired server. ``fading``:
    every station's link fades on its own; ``errors_down``: a loss model for the AP's frames to
    every station (:func:`handover_config`)."""
    t = tcp_cfg or tcp()
    stations: list[dict[str, Any]] = [
        {"name": f"sta{i}", "flows": [i], "ap": 0, "errors": errors or {"kind": "none"}}
        for i in range(n)
    ]
    for st in stations:
        if fading is not None:
            st["fading"] = _on_off(fading)
        if errors_down is not None:
            st["errors_down"] = dict(errors_down)
    return {
        "name": f"wlan-uplink-{n}",
        "duration_ns": int(duration_s * S),
        "seed": seed,
        "sample_interval_ns": int(sample_s * S),
        "hops": [
            {
                "kind": "wlan",
                "name": "wlan",
                "ap_queue": ap_queue,
                "sta_queue": sta_queue,
                "retry_limit": retry_limit,
                "aps": [{"name": "ap1", "x": 0.0, "y": 0.0}],
                "stations": stations,
            },
            _wired(wired_bps, wired_delay_ns),
        ],
        "flows": [_flow(i, f"sta{i}", int(i * stagger_s * S), t) for i in range(n)],
        "cross": [],
        "pcap": [],
    }


def handover_config(
    moving_cc: str,
    *,
    channel: str = "simulator",
    target_bps: int = 3_000_000,
    n_ap1: int = 2,
    n_ap2: int = 6,
    ap_queue: int = 265,
    walk_start_s: float = 20.0,
    walk_s: float = 40.0,
    duration_s: float = 100.0,
    handover_s: float = 2.0,
    handover_flush: bool = True,
    sta_queue: int = 100,
    seed: int = 1,
    burst: dict[str, float] | None = None,
    cell_burst: dict[str, float] | None = None,
    interference: dict[str, float] | None = None,
    weak_p: float | None = None,
    fading: dict[str, float] | None = None,
    errors_down: dict[str, Any] | None = None,
    fade_m: tuple[float, float] | None = (5.0, 15.0),
    fade_all: bool = False,
    cw_min: int = 15,
    retry_limit: int | None = None,
    tcp_cfg: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The paper's handover experiment: APs 20 m apart, ``n_ap1`` background stations on AP1 and
    ``n_ap2`` on AP2 (all uplink TCP), and a moving terminal (the last flow) that starts next to
    AP1 and walks to AP2 between ``walk_start_s`` and ``walk_start_s + walk_s``.

    ``channel="simulator"``: collisions only, retry limit 7 (ns-2 defaults).
    ``channel="testbed"``: every station's frames see bursty Gilbert-Elliott errors and the retry
    limit is 5 (the paper's devices). ``handover_flush``: the terminal's uplink frames are lost
    while it is not associated (default; ``False`` holds them for re-association). ``burst``
    overrides the chain (``p_gb``, ``p_bg``, ``loss_good``, ``loss_bad``, per frame attempt).

    Options of the testbed channel, off by default (sensitivity rows of the reproduction; none of
    them reproduces the paper's testbed regime, see its report):

    * ``cell_burst``: a Gilbert-Elliott chain per AP cell, stepped per frame attempt in the cell.
    * ``interference``: cell-wide interference bursts in *time* (``mean_gap_s`` between bursts,
      ``mean_burst_ms`` per burst, both exponential, frame error ``loss`` during a burst, default
      1): every frame of every station of the cell fails together while a burst lasts (an
      interferer jamming the channel). The paper's §6: bursts that exceed the retry limit,
      "temporary", no effect on long-term throughput, every flow briefly with a small window.
    * ``weak_p``: the first background station on AP2 has independent frame errors with this
      probability per attempt, in place of the per-station chain (the paper's §5:
      device-specific differences, a station with a slightly lower throughput from the start).
    * ``fading``: every station's link (background and moving) fades on its own, in *time*
      (``mean_gap_s`` between fades, ``mean_burst_ms`` per fade, both exponential, frame error
      ``loss`` during a fade, default 1): the stations' ``fading`` in the WLAN hop.
    * ``errors_down``: a loss model for the AP's frames to every station (background and
      moving), per attempt: the stations' ``errors_down`` (a downlink weaker than the uplink).
    * ``fade_m``: the moving terminal's distance term (``None``: off).
    * ``fade_all``: the distance term ``fade_m`` for every station, the background stations by
      their distance to their AP (2 m) too: a site whose interference every station hears, so
      each one's frames fail more the farther it is from its AP (the paper's outdoor site,
      §4.1.1-4.1.2, where the other APs' interference dominates).

    ``cw_min`` (both channels): 15 is 802.11g in an ERP-only BSS (short slot); 31 is the value
    of a BSS with 802.11b rates in its basic rate set (b/g mixed mode) and ns-2's default.
    ``retry_limit`` overrides the channel's retry limit (diagnostics).
    """
    if channel not in ("simulator", "testbed"):
        raise ValueError(f'channel: must be "simulator" or "testbed" (got {channel!r})')
    if fade_all and fade_m is None:
        raise ValueError("fade_all: needs the distance term fade_m")
    base = tcp_cfg or tcp()
    ge = {"p_gb": 0.0005, "p_bg": 0.1, "loss_good": 0.0, "loss_bad": 0.9, **(burst or {})}
    errors: dict[str, Any] = (
        {"kind": "none"} if channel == "simulator" else {"kind": "gilbert_elliott", **ge}
    )
    cell_errors: dict[str, Any] = {"kind": "none"}
    if channel == "testbed" and cell_burst is not None:
        cell_errors = {"kind": "gilbert_elliott", **cell_burst}
    ap_extra: dict[str, Any] = {}
    if channel == "testbed" and interference is not None:
        ap_extra["interference"] = _on_off(interference)
    sta_extra: dict[str, Any] = {}
    if channel == "testbed" and fading is not None:
        sta_extra["fading"] = _on_off(fading)
    if channel == "testbed" and errors_down is not None:
        sta_extra["errors_down"] = dict(errors_down)
    retry = retry_limit if retry_limit is not None else (7 if channel == "simulator" else 5)
    stations = []
    flows = []
    for i in range(n_ap1 + n_ap2):
        ap = 0 if i < n_ap1 else 1
        x = (0.0 if ap == 0 else 20.0) + (1.0 + 0.5 * i) * (1 if ap == 0 else -1) * 0.0
        stations.append(
            {
                "name": f"bg{i}",
                "flows": [i],
                "ap": ap,
                "path": [{"t_ns": 0, "x": x, "y": 2.0}],
                "errors": errors,
                **sta_extra,
            }
        )
        if channel == "testbed" and weak_p is not None and i == n_ap1:
            stations[-1]["errors"] = {"kind": "bernoulli", "p": float(weak_p)}
        flows.append(_flow(i, f"bg{i}-ap{ap + 1}", int(i * 0.1 * S), base))
    k = len(stations)
    t0 = int(walk_start_s * S)
    mobile_extra: dict[str, Any] = {}
    if channel == "testbed" and fade_m is not None:
        mobile_extra["distance_errors"] = {"d0_m": fade_m[0], "d1_m": fade_m[1]}
        if fade_all:
            for st in stations:
                st["distance_errors"] = dict(mobile_extra["distance_errors"])
    stations.append(
        {
            **mobile_extra,
            **sta_extra,
            "name": "mobile",
            "flows": [k],
            "ap": 0,
            "path": [
                {"t_ns": 0, "x": 0.0, "y": 1.0},
                {"t_ns": t0, "x": 0.0, "y": 1.0},
                {"t_ns": t0 + int(walk_s * S), "x": 20.0, "y": 1.0},
            ],
            "errors": errors,
        }
    )
    if moving_cc == "qos_tcp":
        mt = {**base, "cc": "qos_tcp", "qos_target_bps": int(target_bps)}
    else:
        mt = {**base, "cc": moving_cc}
    flows.append(_flow(k, f"mobile-{moving_cc}", int(1 * S), mt))
    return {
        "name": f"wlan-handover-{moving_cc}-{channel}",
        "duration_ns": int(duration_s * S),
        "seed": seed,
        "sample_interval_ns": int(0.5 * S),
        "hops": [
            {
                "kind": "wlan",
                "name": "wlan",
                "ap_queue": ap_queue,
                "retry_limit": retry,
                "cw_min": cw_min,
                "sta_queue": sta_queue,
                "handover_ns": int(handover_s * S),
                "handover_flush": handover_flush,
                "aps": [
                    {"name": "ap1", "x": 0.0, "y": 0.0, "errors": cell_errors, **ap_extra},
                    {"name": "ap2", "x": 20.0, "y": 0.0, "errors": cell_errors, **ap_extra},
                ],
                "stations": stations,
            },
            _wired(100_000_000, 500_000),
        ],
        "flows": flows,
        "cross": [],
        "pcap": [],
    }
