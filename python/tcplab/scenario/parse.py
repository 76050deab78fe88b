"""TOML scenarios: loading, validation with field-naming errors, and conversion to the
normalized simulator configuration (the serde structs of ``crates/tcplab-sim/src/config.rs``).

Every rule lives here, once; docs/scenarios.md documents each key. A bad value
raises :class:`ScenarioError` with one line naming the field path and the rule, e.g.
``flows[0].mss: must be between 64 and 65495 (got 10)``. Nothing is silently clamped.
"""

from __future__ import annotations

import copy
import math
import os
import re
import tomllib
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, Final, NamedTuple

from tcplab.errors import ScenarioError, field_error, show
from tcplab.scenario import registry
from tcplab.scenario.aqm import parse_aqm

# The typed readers live in ``fields`` (the hop kinds' own modules use them too); this module
# calls them by the private names it always had.
from tcplab.scenario.fields import Table as _Table
from tcplab.scenario.fields import as_choice as _as_choice
from tcplab.scenario.fields import as_dist as _dist
from tcplab.scenario.fields import as_int as _as_int
from tcplab.scenario.fields import as_loss_model as _loss_model
from tcplab.scenario.fields import as_number as _as_number
from tcplab.scenario.fields import as_prob as _as_prob
from tcplab.scenario.fields import check_range as _check_range
from tcplab.scenario.fields import join_field as _join
from tcplab.scenario.fields import missing_field as _missing
from tcplab.scenario.trace import base_dir, file_names
from tcplab.scenario.units import U64_MAX, parse_rate, parse_size, parse_time

__all__ = [
    "HOP_KINDS",
    "Scenario",
    "ScenarioError",
    "apply_overrides",
    "builtin_scenarios",
    "load_scenario",
    "parse_scenario",
    "read_scenario",
]

U32_MAX: Final = 2**32 - 1
#: The smallest first retransmission timeout (``rto.initial``, a PEP's ``rto_initial``).
RTO_FLOOR_NS: Final = 1_000_000
RCV_BUF_MAX: Final = 2**30
ACK_DELAY_MAX_NS: Final = 500_000_000
MSS_MIN: Final = 64
MSS_MAX: Final = 65495  # largest IPv4 payload (65535) minus the 40 bytes of IP+TCP headers
HEADER_BYTES: Final = 28  # IPv4 + UDP headers: the smallest cross-traffic datagram

#: Named TCP profiles (``profile = "w-tcp"`` in a flow): defaults for the flow's TCP keys.
TCP_PROFILES: Final[dict[str, dict[str, object]]] = {
    # Sekiguchi 2008 §6: W-TCP of the field tests: max cwnd 64 KB, initial cwnd 4 KB (binary
    # kilobytes: 64 KB holds the 44 full packets of §5.3), SACK,
    # MTU 1500 (MSS 1460).
    "w-tcp": {"max_cwnd": "64KiB", "initial_window": "4KiB", "sack": True, "mss": 1460},
}
#: Named TCP stacks (``stack = "linux"`` in a flow): every default of one stack in one word;
#: a ``profile`` and the flow's own keys override them. ``"rfc"`` is tcplab's default (the
#: RFCs' conservative choices). ``"linux"`` mirrors Linux 6.x's defaults; docs/linux-stack.md
#: lists each key with the sysctl it mirrors.
TCP_STACKS: Final[dict[str, dict[str, object]]] = {
    "rfc": {},
    "linux": {
        "cc": "cubic",  # net.ipv4.tcp_congestion_control = cubic
        "initial_window": 10,  # TCP_INIT_CWND (RFC 6928)
        "sack": True,  # net.ipv4.tcp_sack = 1
        "dsack": True,  # net.ipv4.tcp_dsack = 1
        "timestamps": True,  # net.ipv4.tcp_timestamps = 1
        "window_scaling": True,  # net.ipv4.tcp_window_scaling = 1
        "rto": "linux",  # tcp_rto_min 200 ms, RTO = SRTT + max(200 ms, 4·mdev), max 120 s
        "ca_at_ssthresh": True,  # tcp_in_slow_start: cwnd < ssthresh
        "abc_l": 2,  # tcp_slow_start: every acknowledged segment counts
        "dupthresh": 3,  # net.ipv4.tcp_reordering = 3
        # tcp_cwnd_reduction: PRR, its extra segment only on an ACK that advanced snd.una
        # without a new loss (Linux 5.19 on), RecoverFS = prior_cwnd (recovery/prr.rs).
        "recovery_cwnd": "prr-linux",
        "loss_detection": "rack",  # net.ipv4.tcp_recovery = 1 (RACK)
        "tlp": True,  # net.ipv4.tcp_early_retrans = 3 (TLP)
        "spurious_detection": "frto-linux",  # net.ipv4.tcp_frto = 2
        "spurious_response": "undo",  # tcp_try_undo_loss -> tcp_undo_cwnd_reduction
        "spurious_fr": "dsack",  # tcp_try_undo_dsack
        "spurious_fr_response": "undo",  # tcp_undo_cwnd_reduction
        "ssthresh_from": "cwnd",  # tcp_reno_ssthresh / bictcp_recalc_ssthresh use cwnd
        "hystart": "linux",  # tcp_cubic hystart = 1, hystart_detect = 3 (reno: ignored)
        "cubic": "linux",  # tcp_cubic.c's arithmetic (bictcp_update, tcp_friendliness = 1)
        # tcp_cong.c's Reno in whole packets (tcp_reno_ssthresh, tcp_cong_avoid_ai).
        "reno": "linux",
        # Delayed ACKs: TCP_DELACK_MIN 40 ms, every 2nd full segment, quick-ACK mode at the
        # start (TCP_MAX_QUICKACKS = 16) and at once for out-of-order data.
        "ack": {"every": 2, "max_delay": "40ms", "quickack": 16, "immediate_on_ooo": True},
        # Receive window: rcv_ssthresh growth with a quick ACK per growing segment
        # (tcp_grow_window), DRS autotuning (tcp_moderate_rcvbuf = 1, tcp_rcv_space_adjust);
        # rcv_buf is tcp_rmem[2] (kernel default 6 MiB), tcp_rmem[1] = 131072.
        "rcv_window": "linux",
        "rcv_buf": "6MiB",
        # Linux's send buffer (sndbuf.rs): sk_wmem_queued in skb true sizes against
        # sk_sndbuf grown by tcp_sndbuf_expand up to tcp_wmem[2], and the testbed writer's
        # 64 KiB writes while sk_stream_is_writeable, so the sender runs dry where the
        # kernel's does (tcp_rate_check_app_limited). Measured on every cached Linux set
        # before it joined the stack (docs/linux-stack.md, "BBR").
        "snd_buf_model": "linux",
        # The transmit path (tso.rs): skbs of tcp_tso_autosize segments, tcp_cwnd_test,
        # tcp_tso_should_defer, PSH on every multi-segment skb and the receiver's immediate ACK
        # of a full-sized PSH segment (tcp_measure_rcv_mss).
        "tso_model": "linux",
        # RACK's reordering timer and the tail-loss probe on the 250-Hz timer wheel
        # (jiffies.rs): tcp_rack_mark_lost's usecs_to_jiffies(timeout + TCP_TIMEOUT_MIN_US),
        # tcp_schedule_loss_probe's 2·SRTT + TCP_TIMEOUT_MIN_US, each fired a tick late.
        "timers": "linux",
        # The sender's send path in time (tcp_write_xmit -> dev_hard_start_xmit, software
        # GSO): measured with validation/linux/burst_capture.py (validation/linux/README.md);
        # jitter: the same capture's spread of the time to the first segment (p10-p90
        # 12.2-29.1 us, as a uniform spread of 21 us around the median).
        "xmit_time": {"first": "18.8us", "gso": "3.6us", "gap": "1.3us", "jitter": "21us"},
    },
}
#: Lists defined once in Rust and read through the bindings (``tcplab.scenario.registry``): the
#: congestion controls with their ``cc_params`` (``CC_PARAMS``), the spurious-retransmission
#: detectors and responses, loss recovery choices and the named RTO profiles (``rto =
#: "linux"``; a table's keys override a profile, ``DEFAULT_RTO_PROFILE`` is the first).
_REGISTRY_NAMES: Final[dict[str, Any]] = {
    "CONGESTION_CONTROLS": lambda: registry.cc_names(),
    #: The PEP's own sending side runs a loss-based control (it has no per-flow parameters).
    "PEP_CONGESTION_CONTROLS": lambda: registry.cc_names(loss_based=True),
    "CC_PARAMS": lambda: {
        e["name"]: tuple(p["key"] for p in e["params"])
        for e in registry.registry()["congestion_controls"]
        if e["params"]
    },
    "RTO_PROFILES": registry.rto_profiles,
    "DEFAULT_RTO_PROFILE": lambda: next(iter(registry.rto_profiles())),
    "RECOVERY_CWNDS": lambda: registry.names("recovery_cwnds"),
    "LOSS_DETECTIONS": lambda: registry.names("loss_detections"),
    "SSTHRESH_FROM": lambda: registry.names("ssthresh_from"),
    "SPURIOUS_DETECTORS": lambda: registry.names("spurious_detectors"),
    "SPURIOUS_RESPONSES": lambda: registry.names("spurious_responses"),
    #: Detectors that judge fast retransmits (F-RTO is defined for timeouts only).
    "SPURIOUS_FR_DETECTORS": lambda: registry.names("spurious_fr_detectors"),
    "SPURIOUS_FR_RESPONSES": lambda: registry.names("spurious_fr_responses"),
    "ACK_TIMERS": lambda: registry.names("ack_timers"),
    "RTT_ESTIMATORS": lambda: registry.names("rtt_estimators"),
    "RCV_WINDOWS": lambda: registry.names("rcv_windows"),
}


def __getattr__(name: str) -> Any:
    """The registry lists (``CONGESTION_CONTROLS``, ``RTO_PROFILES``, ...), read from the core
    when first asked for."""
    if name in _REGISTRY_NAMES:
        return _REGISTRY_NAMES[name]()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


#: Defaults of the links a dumbbell adds around its bottleneck (one per pair and side).
ACCESS_DEFAULTS: Final[dict[str, object]] = {
    "rate": "10Gbps",
    "delay": "0s",
    "queue": 1000,
    "overhead": 0,
}
LINK_DEFAULTS: Final[dict[str, object]] = {"queue": 100, "overhead": 0}

_DIR_KEYS: Final = (
    "outages",
    "stalls",
    "rate",
    "delay",
    "queue",
    "loss",
    "loss_model",
    "overhead",
    "bits_per_byte",
    "reorder",
    "delay_trace",
    "aqm",
)
_REORDER_KEYS: Final = ("p", "extra")
_LINK_BODY_KEYS: Final = (*_DIR_KEYS, "up", "down")
_LINK_KEYS: Final = ("kind", "name", *_LINK_BODY_KEYS, "ack_filter")
_ACK_FILTER_KEYS: Final = ("threshold",)
_ACK_CC_KEYS: Final = ("queue_threshold", "max_ratio")
_DUMBBELL_KEYS: Final = ("kind", "pairs", "bottleneck", "access", "egress")
_SATELLITE_KEYS: Final = ("kind", "name", "rtt", *(k for k in _LINK_BODY_KEYS if k != "delay"))
_PEP_KEYS: Final = (
    "kind",
    "name",
    "buffer",
    "cc",
    "initial_window",
    "rto_initial",
    "rto_min",
    "rto_max",
    "series_interval",
    "spurious_detection",
    "syn_retries",
    "synack_retries",
    "retries2",
)
_DROPPER_KEYS: Final = ("kind", "name", "data_segments")
#: Defaults of a ``kind = "satellite"`` hop (a GEO link; Yagiu & Tanaka 2001 §3.2.2).
SATELLITE_DEFAULTS: Final[dict[str, object]] = {"rate": "1Mbps", "rtt": "540ms", "queue": 1000}
#: Defaults of a ``kind = "pep"`` hop (a spoofing PEP, crates/tcplab-sim/src/pep.rs).
PEP_DEFAULTS: Final[dict[str, object]] = {
    "buffer": "1MiB",
    "cc": "newreno",
    "initial_window": 10,
    "rto_initial": "1s",
    "rto_min": "1s",
    "rto_max": "60s",
    "series_interval": "100ms",
    "spurious_detection": "none",
    # when the PEP's own connection toward the receiver gives up: RFC 6298's profile's
    "syn_retries": 7,
    "synack_retries": 7,
    "retries2": 15,
}
_HOST_KEYS: Final = (
    "kind",
    "name",
    "b_fsb",
    "b_pci",
    "f_toe",
    "t_l",
    "nic_rate",
    "backlog",
    "feedback",
    "train",
)
_TOP_KEYS: Final = (
    "name",
    "description",
    "duration",
    "seed",
    "sample_interval",
    "path",
    "flows",
    "cross",
    "pcap",
)
_FLOW_KEYS: Final = (
    "name",
    "count",
    "pair",
    "start",
    "cc",
    "cc_params",
    "sack",
    "dsack",
    "timestamps",
    "window_scaling",
    "mss",
    "rcv_buf",
    "snd_buf",
    "initial_window",
    "initial_ssthresh",
    "max_cwnd",
    "limited_transmit",
    "dupthresh",
    "ca_at_ssthresh",
    "qos_target",
    "rto",
    "ack",
    "abc_l",
    "hystart",
    "cubic",
    "reno",
    "ack_cc",
    "app",
    "bytes",
    "sizes",
    "think",
    "downloads",
    "profile",
    "spurious_detection",
    "spurious_response",
    "spurious_fr",
    "spurious_fr_response",
    "read_rate",
    "stack",
    "recovery_cwnd",
    "loss_detection",
    "tlp",
    "ssthresh_from",
    "rcv_window",
    "rcv_scaling_ratio",
    "snd_buf_model",
    "tso_model",
    "timers",
    "pacing",
    "xmit_time",
    "ecn",
)
_XMIT_KEYS: Final = ("first", "gso", "gap", "jitter")
_BULK_ONLY: Final = ("bytes",)
_DOWNLOADS_ONLY: Final = ("sizes", "think", "downloads")
_RTO_KEYS: Final = (
    "profile",
    "initial",
    "min",
    "max",
    "granularity",
    "max_backoff",
    "restart_on_rtx",
    "estimator",
    "syn_retries",
    "synack_retries",
    "retries2",
)
_ACK_KEYS: Final = ("every", "max_delay", "immediate_on_ooo", "quickack", "timer")
_CROSS_KEYS: Final = ("kind", "name", "rate", "packet_size", "start", "stop", "hops")
_PING_ONLY: Final = ("interval", "from")
_PCAP_KEYS: Final = ("hop", "dir", "file", "payload")


# ---------------------------------------------------------------------------------------------
# Small typed readers. Each takes the raw value and its field path and returns a checked value.


# ---------------------------------------------------------------------------------------------
# Links and topology


# NamedTuples rather than frozen dataclasses: importing dataclasses (and inspect) costs
# ~10 ms of every `tcplab` start.
class _Topology(NamedTuple):
    hops: list[dict[str, Any]]
    #: Route of each dumbbell pair (None for a chain of hops, which every flow traverses).
    pair_routes: list[list[int]] | None
    default_cross_hops: list[int]

    @property
    def names(self) -> list[str]:
        return [hop["name"] for hop in self.hops]

    def link_index(self, value: object, field: str) -> int:
        """A link given by index or by name → its index."""
        names = self.names
        if isinstance(value, str):
            if value in names:
                return names.index(value)
            raise field_error(field, f"unknown link {show(value)} (links: {', '.join(names)})")
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < len(names):
            raise field_error(
                field,
                f"must be a link index between 0 and {len(names) - 1} or a link name "
                f"(got {show(value)})",
            )
        return value


def _queue(value: object, field: str) -> dict[str, Any]:
    if isinstance(value, str):
        return {"kind": "bytes", "limit": parse_size(value, field, bare=False)}
    if isinstance(value, int) and not isinstance(value, bool):
        return {"kind": "packets", "limit": _as_int(value, field, 1, U32_MAX)}
    raise field_error(
        field,
        f'must be a packet count like 100 or a size like "64KB" (got {show(value)})',
    )


def _loss_of(values: Mapping[str, tuple[object, str]]) -> dict[str, Any]:
    """``loss`` (a probability) or ``loss_model`` (a table), each as (value, field), → a
    ``LossConfig`` (``none`` without either)."""
    if "loss_model" in values:
        return _loss_model(*values["loss_model"])
    if "loss" in values:
        p = _as_prob(*values["loss"])
        if p > 0:
            return {"kind": "bernoulli", "p": p}
    return {"kind": "none"}


def _file_name(value: object, field: str) -> str:
    """A file name the simulator reads (a trace): a non-empty string."""
    if not isinstance(value, str) or not value:
        raise field_error(field, f"must be a file name (got {show(value)})")
    if any(ord(c) < 32 or ord(c) == 127 for c in value):
        raise field_error(
            field, f"must be a file name without control characters (got {show(value)})"
        )
    return value


def _reorder(value: object, field: str) -> dict[str, Any] | None:
    """``reorder = {p = 0.01, extra = "10ms"}``: each packet that is not lost is, with
    probability ``p``, held ``extra`` longer in flight (later packets overtake it)."""
    t = _Table(value, field, _REORDER_KEYS)
    p = _as_prob(t.raw("p"), t.at("p"))
    extra = t.get_time("extra", positive=True)
    return {"p": p, "extra_ns": extra} if p > 0 else None


def _link(t: _Table, name: str, defaults: Mapping[str, object]) -> dict[str, Any]:
    """A link table (direction keys, plus ``[up]``/``[down]`` overrides) → a ``HopConfig`` of
    kind ``link``.

    Keys at the top of the table apply to both directions; ``down`` overrides them for the
    forward (data) direction and ``up`` for the reverse (ACK) direction. Setting ``loss`` or
    ``loss_model`` in an override replaces the inherited loss setting as a whole.
    """
    layers = {"down": t.sub("down", _DIR_KEYS), "up": t.sub("up", _DIR_KEYS)}
    for layer in (t, layers["down"], layers["up"]):
        if layer is not None and "loss" in layer and "loss_model" in layer:
            raise field_error(layer.at("loss_model"), f"cannot be combined with {layer.at('loss')}")
    link: dict[str, Any] = {"kind": "link", "name": name}
    for direction, side, other in (("fwd", "down", "up"), ("rev", "up", "down")):
        values: dict[str, tuple[object, str]] = {k: (v, k) for k, v in defaults.items()}
        for layer in (t, layers[side]):
            if layer is None:
                continue
            given = {k: (layer.data[k], layer.at(k)) for k in _DIR_KEYS if k in layer}
            if "loss" in given or "loss_model" in given:
                values.pop("loss", None)
                values.pop("loss_model", None)
            values.update(given)
        for key in ("rate", "delay"):
            if key not in values:
                other_layer = layers[other]
                if other_layer is not None and key in other_layer:
                    raise field_error(
                        f"{t.at(side)}.{key}",
                        f"required field missing ({t.at(key)} is not set for both directions)",
                    )
                raise field_error(t.at(key), "required field missing")
        loss = _loss_of(values)
        link[direction] = {
            "rate_bps": parse_rate(*values["rate"]),
            "delay_ns": parse_time(*values["delay"]),
            "queue": _queue(*values["queue"]),
            "loss": loss,
            "overhead_bytes": _as_int(*values["overhead"], 0, 65535),
            "bits_per_byte": _as_int(*values.get("bits_per_byte", (8, "bits_per_byte")), 8, 16),
            "reorder": _reorder(*values["reorder"]) if "reorder" in values else None,
            "outages_ns": _schedule(*values["outages"], "outage") if "outages" in values else [],
        }
        if "stalls" in values:
            # Only when set: a config without stalls stays as it was (stored runs, hashes).
            link[direction]["stalls_ns"] = _schedule(*values["stalls"], "stall")
        if "delay_trace" in values:
            # Only when set, as stalls; a file the simulator reads (docs/traces.md).
            link[direction]["delay_trace"] = _file_name(*values["delay_trace"])
        if "aqm" in values:
            # Only when set: a direction without it keeps the DropTail fast path (docs/aqm.md).
            d = link[direction]
            d["aqm"] = parse_aqm(*values["aqm"], d["queue"], d["rate_bps"])
    if "ack_filter" in t and t.raw("ack_filter") is not False:
        for direction in ("fwd", "rev"):
            if link[direction]["reorder"] is not None:
                raise field_error(t.at("ack_filter"), "cannot be combined with reorder")
            if "delay_trace" in link[direction]:
                raise field_error(t.at("delay_trace"), "not supported on an ack_filter_link")
            if "aqm" in link[direction]:
                raise field_error(t.at("aqm"), "not supported on an ack_filter_link")
    if "ack_filter" in t:
        link.update(_ack_filter(t.raw("ack_filter"), t.at("ack_filter")))
    return link


def _schedule(value: object, field: str, what: str) -> list[list[int]]:
    """``outages``/``stalls = [["10s", "10s"], ...]``: when the link is cut or frozen and for
    how long (ns pairs), sorted and disjoint."""
    if not isinstance(value, list):
        raise field_error(
            field, f'must be a list of ["start", "duration"] pairs (got {show(value)})'
        )
    out: list[list[int]] = []
    for k, pair in enumerate(value):
        f = f"{field}[{k}]"
        if not (isinstance(pair, list) and len(pair) == 2):
            raise field_error(f, f'must be a ["start", "duration"] pair (got {show(pair)})')
        start, dur = parse_time(pair[0], f"{f}[0]"), parse_time(pair[1], f"{f}[1]")
        if dur <= 0:
            raise field_error(f"{f}[1]", f"must be > 0 (got {show(pair[1])})")
        if out and start < out[-1][0] + out[-1][1]:
            raise field_error(f"{f}[0]", f"must not start before the previous {what} ends")
        out.append([start, dur])
    return out


def _ack_filter(value: object, field: str) -> dict[str, Any]:
    """``ack_filter = true`` or ``{ threshold = T }`` → an ``ack_filter_link`` (RFC 3449 §5.2.1
    ACK filtering on the up direction; T > 0 = §5.2.2 ACK decimation)."""
    if isinstance(value, bool):
        return {"kind": "ack_filter_link", "filter_threshold": 0} if value else {}
    t = _Table(value, field, _ACK_FILTER_KEYS)
    return {"kind": "ack_filter_link", "filter_threshold": t.get_int("threshold", 0, 0, 1_000_000)}


def _wlan_keys() -> tuple[str, ...]:
    from tcplab.scenario.wlan import WLAN_KEYS

    return tuple(WLAN_KEYS)


def _wlan(t: _Table, name: str) -> dict[str, Any]:
    from tcplab.scenario.wlan import wlan_hop

    return wlan_hop(t.data, t.field, name)


def _rlc_keys() -> tuple[str, ...]:
    from tcplab.scenario.radio import RLC_KEYS

    return tuple(RLC_KEYS)


def _rlc(t: _Table, name: str) -> dict[str, Any]:
    from tcplab.scenario.radio import rlc_hop

    return rlc_hop(t, name)


def _trace_keys() -> tuple[str, ...]:
    from tcplab.scenario.trace import TRACE_KEYS

    return tuple(TRACE_KEYS)


def _trace(t: _Table, name: str) -> dict[str, Any]:
    from tcplab.scenario.trace import trace_hop

    return trace_hop(t, name, queue=_queue, loss_of=_loss_of, file_name=_file_name)


def _leo_keys() -> tuple[str, ...]:
    from tcplab.scenario.leo import LEO_KEYS

    return tuple(LEO_KEYS)


def _leo(t: _Table, name: str) -> dict[str, Any]:
    from tcplab.scenario.leo import leo_hop

    return leo_hop(t, name, queue=_queue, file_name=_file_name)


class HopKind(NamedTuple):
    """One ``[[path]]`` kind: its keys, its default name (``<prefix><index>``) and how it
    becomes simulator hops. ``keys`` is a function so that the radio and WLAN modules load
    only for scenarios that use them."""

    keys: Any
    prefix: str
    build: Any


#: Every ``[[path]]`` kind, in the order error messages list them: this one table drives the
#: key sets, the name checks (every kind's name is unique among the hops) and the docs tests.
#: ``dumbbell`` builds several hops and must be the only entry (``_dumbbell``).
HOP_KINDS: Final[dict[str, HopKind]] = {
    "link": HopKind(lambda: _LINK_KEYS, "link", lambda t, n: _link(t, n, LINK_DEFAULTS)),
    "dumbbell": HopKind(lambda: _DUMBBELL_KEYS, "", None),
    "satellite": HopKind(lambda: _SATELLITE_KEYS, "satellite", lambda t, n: _satellite(t, n)),
    "pep": HopKind(lambda: _PEP_KEYS, "pep", lambda t, n: _pep(t, n)),
    "dropper": HopKind(lambda: _DROPPER_KEYS, "dropper", lambda t, n: _dropper(t, n)),
    "rlc": HopKind(_rlc_keys, "radio", _rlc),
    "wlan": HopKind(_wlan_keys, "wlan", _wlan),
    "host": HopKind(lambda: _HOST_KEYS, "host", lambda t, n: _host(t, n)),
    "trace": HopKind(_trace_keys, "trace", _trace),
    "leo": HopKind(_leo_keys, "leo", _leo),
}


def _topology(top: _Table) -> _Topology:
    hops = top.tables("path", required=True)
    kinds = []
    for i, hop in enumerate(hops):
        field = f"path[{i}]"
        if not isinstance(hop, dict):
            raise field_error(field, f"must be a table (got {show(hop)})")
        kinds.append(_as_choice(hop.get("kind", "link"), f"{field}.kind", HOP_KINDS, "hop kind"))
    if "dumbbell" in kinds:
        if len(hops) > 1:
            i = kinds.index("dumbbell")
            raise field_error(f"path[{i}].kind", 'a "dumbbell" must be the only [[path]] entry')
        return _dumbbell(_Table(hops[0], "path[0]", _DUMBBELL_KEYS))
    links: list[dict[str, Any]] = []
    for i, hop in enumerate(hops):
        _no_aqm(hop, kinds[i], f"path[{i}]")
        kind = HOP_KINDS[kinds[i]]
        t = _Table(hop, f"path[{i}]", kind.keys())
        name = t.get_str("name", f"{kind.prefix}{i}")
        check_hop_name(name, t.at("name"))
        for j, earlier in enumerate(links):
            if earlier["name"] == name:
                raise field_error(
                    t.at("name"),
                    f"duplicate link name {show(name)} (also used by path[{j}])",
                )
        links.append(kind.build(t, name))
    return _Topology(links, None, list(range(len(links))))


#: Hop kinds whose queues do not run a queue discipline (``aqm``), and why.
_NO_AQM: Final[dict[str, str]] = {
    "pep": "the PEP's buffer is its own TCP connections' send buffer, not a packet queue",
    "dropper": "a dropper has no queue",
    "host": "the host's backlog is a model of its bus and NIC, not a packet queue",
}


def _no_aqm(hop: Mapping[str, Any], kind: str, field: str) -> None:
    """One line naming the reason when ``aqm`` is set on a hop kind that cannot take it."""
    if kind not in _NO_AQM:
        return
    for where in (None, "down", "up"):
        table = hop if where is None else hop.get(where)
        if isinstance(table, dict) and "aqm" in table:
            at = _join(field, "aqm") if where is None else f"{field}.{where}.aqm"
            raise field_error(at, f"not supported on a {kind} hop: {_NO_AQM[kind]}")


def _satellite(t: _Table, name: str) -> dict[str, Any]:
    """A GEO satellite hop: a link whose one-way delay is half of ``rtt`` (default 540 ms, the
    paper's end-to-end RTT), default rate 1 Mbps; ``loss`` (random) or ``loss_model`` (e.g.
    Gilbert-Elliott for bursty loss) and ``up``/``down`` overrides as for a link."""
    rtt = t.get_time("rtt", SATELLITE_DEFAULTS["rtt"], positive=True)
    data = {k: v for k, v in t.data.items() if k not in ("rtt", "kind")}
    for key in ("rate", "queue"):
        data.setdefault(key, SATELLITE_DEFAULTS[key])
    data["delay"] = f"{rtt // 2}ns"
    body = _Table(data, t.field, _LINK_KEYS)
    return _link(body, name, LINK_DEFAULTS)


def _pep(t: _Table, name: str) -> dict[str, Any]:
    """A spoofing PEP hop (``pep.rs``)."""
    d = PEP_DEFAULTS
    rto = {k: t.get_time(k, d[k], positive=True) for k in ("rto_initial", "rto_min", "rto_max")}
    if rto["rto_min"] > rto["rto_max"]:
        raise field_error(
            t.at("rto_min"),
            f"must be ≤ rto_max ({show(t.raw('rto_max', d['rto_max']))}) "
            f"(got {show(t.raw('rto_min', d['rto_min']))})",
        )
    if not rto["rto_min"] <= rto["rto_initial"] <= rto["rto_max"]:
        raise field_error(
            t.at("rto_initial"),
            f"must be between rto_min and rto_max "
            f"(got {show(t.raw('rto_initial', d['rto_initial']))})",
        )
    if rto["rto_initial"] < RTO_FLOOR_NS:
        raise field_error(
            t.at("rto_initial"),
            f"must be ≥ 1ms (got {show(t.raw('rto_initial', d['rto_initial']))})",
        )
    buffer = t.get_size("buffer", d["buffer"])
    if buffer < 536:
        raise field_error(
            t.at("buffer"), f"must be at least 536 bytes (got {show(t.raw('buffer'))})"
        )
    return {
        "kind": "pep",
        "name": name,
        "buffer_bytes": buffer,
        "cc": t.get_choice("cc", registry.cc_names(loss_based=True), "congestion control", d["cc"]),
        "initial_window_segments": t.get_int("initial_window", d["initial_window"], 1, 1000),
        "rto_initial_ns": rto["rto_initial"],
        "rto_min_ns": rto["rto_min"],
        "rto_max_ns": rto["rto_max"],
        "series_interval_ns": t.get_time("series_interval", d["series_interval"], positive=True),
        "spurious_detection": t.get_choice(
            "spurious_detection",
            registry.names("spurious_detectors"),
            "spurious-timeout detector",
            d["spurious_detection"],
        ),
        # as a flow's rto.* (crates/tcplab-tcp/src/give_up.rs), 1 … 127
        **{k: t.get_int(k, d[k], 1, 127) for k in ("syn_retries", "synack_retries", "retries2")},
    }


def _dropper(t: _Table, name: str) -> dict[str, Any]:
    """A hop that drops the listed data segments (1-based, per connection) — deterministic
    error injection (``dropper.rs``)."""
    raw = t.raw("data_segments")
    if not isinstance(raw, list) or not raw:
        raise field_error(
            t.at("data_segments"), f"must be a non-empty list like [11] (got {show(raw)})"
        )
    segs = [_as_int(v, f"{t.at('data_segments')}[{k}]", 1, U64_MAX) for k, v in enumerate(raw)]
    return {"kind": "dropper", "name": name, "data_segments": segs}


def _host(t: _Table, name: str) -> dict[str, Any]:
    """A ``[[path]]`` entry of kind ``host``: an end host's NIC→memory path (Ito's thesis ch. 3;
    defaults: Fig. 3.9's non-TOE host behind a 1 Gbps NIC)."""
    f_toe = t.raw("f_toe", None)
    nic = t.raw("nic_rate", "1Gbps")
    return {
        "kind": "host",
        "name": name,
        "b_fsb_bps": t.get_rate("b_fsb", "6.5Gbps"),
        "b_pci_bps": t.get_rate("b_pci", "1Gbps"),
        "f_toe_bps": None if f_toe is None else t.get_rate("f_toe"),
        "t_l_ns": t.get_time("t_l", "1.2us"),
        "nic_rate_bps": None if nic == "pipelined" else t.get_rate("nic_rate", "1Gbps"),
        "backlog": t.get_int("backlog", 1000, 1, U32_MAX),
        "feedback": t.get_bool("feedback", True),
        "train": t.get_int("train", 10, 2, 1000),
    }


def _cc_params(t: _Table, cc: str) -> dict[str, float]:
    """``cc_params``: the keys, rules and defaults of the congestion control's registry entry
    (``CcEntry::params`` in Rust, which checks them the same way in ``check_params``)."""
    raw = t.raw("cc_params", {})
    field = t.at("cc_params")
    if not isinstance(raw, dict):
        raise field_error(field, f"must be a table like {{alpha = 2}} (got {show(raw)})")
    entry = registry.cc(cc)
    assert entry is not None, cc
    params = {p["key"]: p for p in entry["params"]}
    out: dict[str, float] = {}
    # in key order, as Rust's BTreeMap reads them: the same first error on both sides
    for key in sorted(raw):
        value = raw[key]
        if key not in params:
            rule = (
                f"unknown parameter (choose from {', '.join(params)})"
                if params
                else f"congestion control {show(cc)} takes no parameters"
            )
            raise field_error(_join(field, key), rule)
        x = _as_number(value, _join(field, key))
        if not registry.param_accepts(params[key], x):
            rule = params[key]["rule"]
            raise field_error(_join(field, key), f"{rule} (got {registry.show_number(x)})")
        out[key] = x
    for key, low in entry["at_least"]:
        value = out.get(key, params[key]["default"])
        if value < out.get(low, params[low]["default"]):
            raise field_error(
                _join(field, key), f"must be ≥ {low} (got {registry.show_number(value)})"
            )
    return out


def _dumbbell(t: _Table) -> _Topology:
    pairs = t.get_int("pairs", lo=1, hi=100_000)
    bottleneck = t.sub("bottleneck", _LINK_BODY_KEYS)
    if bottleneck is None:
        _missing(t.at("bottleneck"))
    empty: dict[str, object] = {}
    access = t.sub("access", _LINK_BODY_KEYS) or _Table(empty, t.at("access"), ())
    egress = t.sub("egress", _LINK_BODY_KEYS) or _Table(empty, t.at("egress"), ())
    access_link = _link(access, "access", ACCESS_DEFAULTS)
    egress_link = _link(egress, "egress", ACCESS_DEFAULTS)
    links = [{**copy.deepcopy(access_link), "name": f"access{k}"} for k in range(pairs)]
    links.append(_link(bottleneck, "bottleneck", LINK_DEFAULTS))
    links += [{**copy.deepcopy(egress_link), "name": f"egress{k}"} for k in range(pairs)]
    routes = [[k, pairs, pairs + 1 + k] for k in range(pairs)]
    return _Topology(links, routes, [pairs])


# ---------------------------------------------------------------------------------------------
# Flows


def _rto(value: object, field: str) -> dict[str, Any]:
    named = registry.rto_profiles()
    profiles = tuple(named)
    default = profiles[0]
    if isinstance(value, str):
        t = _Table({"profile": value}, field, _RTO_KEYS)
        profile_field = field
    else:
        t = _Table(value, field, _RTO_KEYS)
        profile_field = t.at("profile")
    profile = _as_choice(t.raw("profile", default), profile_field, profiles, "RTO profile")
    settings: dict[str, object] = {**named[default], **named[profile]}
    raw = {
        k: t.raw(k, settings[k]) for k in ("initial", "min", "max", "granularity", "max_backoff")
    }
    out = {
        "initial_ns": parse_time(raw["initial"], t.at("initial"), positive=True),
        "min_ns": parse_time(raw["min"], t.at("min")),
        "max_ns": parse_time(raw["max"], t.at("max"), positive=True),
        "granularity_ns": parse_time(raw["granularity"], t.at("granularity")),
        "max_backoff": _as_int(raw["max_backoff"], t.at("max_backoff"), 0, 32),
        "restart_on_rtx": t.get_bool("restart_on_rtx", bool(settings["restart_on_rtx"])),
        "estimator": _as_choice(
            t.raw("estimator", settings["estimator"]),
            t.at("estimator"),
            registry.names("rtt_estimators"),
            "RTT estimator",
        ),
        # When the connection gives up (crates/tcplab-tcp/src/give_up.rs); 127 is Linux's
        # MAX_TCP_SYNCNT, applied to every count alike.
        **{
            k: _as_int(t.raw(k, settings[k]), t.at(k), 1, 127)
            for k in ("syn_retries", "synack_retries", "retries2")
        },
    }
    if out["initial_ns"] < RTO_FLOOR_NS:
        # A smaller first timeout retransmits the SYN every few ns until it is answered:
        # millions of timeouts (and events) per simulated millisecond.
        raise field_error(t.at("initial"), f"must be ≥ 1ms (got {show(raw['initial'])})")
    for low in ("min", "initial"):
        if out[f"{low}_ns"] > out["max_ns"]:
            if "max" in t and low not in t:
                raise field_error(
                    t.at("max"),
                    f"must be ≥ rto.{low} ({show(raw[low])}) (got {show(raw['max'])})",
                )
            raise field_error(
                t.at(low),
                f"must be ≤ rto.max ({show(raw['max'])}) (got {show(raw[low])})",
            )
    return out


def _ack(value: object, field: str) -> dict[str, Any]:
    t = _Table(value, field, _ACK_KEYS)
    max_delay = t.get_time("max_delay", "200ms")
    if max_delay > ACK_DELAY_MAX_NS:
        # RFC 5681 §4.2: an ACK MUST NOT be delayed more than 500 ms.
        raise field_error(
            t.at("max_delay"), f"must be at most 500ms (got {show(t.raw('max_delay'))})"
        )
    return {
        "every_n": t.get_int("every", 2, 1, U32_MAX),
        "max_delay_ns": max_delay,
        "immediate_on_ooo": t.get_bool("immediate_on_ooo", True),
        "quickack": t.get_int("quickack", 0, 0, U32_MAX),
        "periodic": _ack_timer(t),
    }


#: The longest ``xmit_time`` term (validate.rs: XMIT_TIME_MAX_NS).
XMIT_TIME_MAX_NS: Final = 1_000_000


def _xmit_time(value: object, field: str) -> dict[str, int]:
    """``xmit_time = {first, gso, gap, jitter}``: the sending host's send path in time (sim.rs,
    ``transmit_host``); each term 0 to 1 ms, 0 when absent; ``jitter`` (spread of the time to
    the first segment, centred on ``first``) at most twice ``first``."""
    t = _Table(value, field, _XMIT_KEYS)
    out = {}
    for key in _XMIT_KEYS:
        ns = t.get_time(key, 0)
        if ns > XMIT_TIME_MAX_NS:
            raise field_error(t.at(key), f"must be at most 1ms (got {ns} ns)")
        out[f"{key}_ns"] = ns
    if out["jitter_ns"] > 2 * out["first_ns"]:
        raise field_error(
            t.at("jitter"),
            f"must be at most twice first ({out['first_ns']} ns) (got {out['jitter_ns']} ns)",
        )
    return out


def _ack_timer(t: _Table) -> bool:
    """``timer = "periodic"``: the delayed-ACK timer is a free-running tick of period
    ``max_delay`` (4.4BSD's 200 ms fast timeout); ``"oneshot"`` (default) starts at the first
    unacknowledged segment."""
    timers = registry.names("ack_timers")
    periodic = t.get_choice("timer", timers, "delayed-ACK timer", timers[0])
    if periodic == "periodic" and t.get_time("max_delay", "200ms") == 0:
        raise field_error(t.at("timer"), 'a "periodic" timer needs max_delay > 0')
    return periodic == "periodic"


def _at_least_mss(n: int, raw: object, field: str, mss: int, alternative: str = "") -> int:
    if n < mss:
        raise field_error(field, f"must be ≥ mss ({mss} bytes){alternative} (got {show(raw)})")
    return n


def _size_or_inf(t: _Table, key: str, mss: int) -> int | None:
    value = t.raw(key, "inf")
    if value == "inf":
        return None
    return _at_least_mss(parse_size(value, t.at(key)), value, t.at(key), mss, ' or "inf"')


def _tcp(t: _Table) -> dict[str, Any]:
    own_keys = set(t.data)
    stack: dict[str, object] = {}
    if "stack" in t:
        # A TCP stack supplies every default; a profile and the flow's keys override it.
        stack = TCP_STACKS[t.get_choice("stack", tuple(TCP_STACKS), "TCP stack")]
    if "profile" in t:
        # A TCP profile supplies defaults; keys given in the flow override them.
        name = t.get_choice("profile", tuple(TCP_PROFILES), "TCP profile")
        t = _Table({**stack, **TCP_PROFILES[name], **t.data}, t.field, _FLOW_KEYS)
    elif stack:
        t = _Table({**stack, **t.data}, t.field, _FLOW_KEYS)
    mss_raw = t.raw("mss", 1448)
    mss = parse_size(mss_raw, t.at("mss"))
    _check_range(mss, mss_raw, t.at("mss"), MSS_MIN, MSS_MAX)

    def buf(key: str) -> int:
        return _at_least_mss(t.get_size(key, "4MiB"), t.raw(key, "4MiB"), t.at(key), mss)

    rcv_buf = buf("rcv_buf")
    if rcv_buf > RCV_BUF_MAX:
        # RFC 7323 §2.3: a shift of at most 14 → a window of at most 2^30 bytes.
        raise field_error(
            t.at("rcv_buf"),
            f"must be at most 1GiB, the largest scaled window (got {show(t.raw('rcv_buf'))})",
        )

    iw_raw = t.raw("initial_window", 10)
    if isinstance(iw_raw, int) and not isinstance(iw_raw, bool):
        iw = _as_int(iw_raw, t.at("initial_window"), 1, U32_MAX) * mss
    elif isinstance(iw_raw, str):
        iw = parse_size(iw_raw, t.at("initial_window"), bare=False)
        _at_least_mss(iw, iw_raw, t.at("initial_window"), mss)
    else:
        raise field_error(
            t.at("initial_window"),
            f'must be a number of segments like 10 or a size like "4KB" (got {show(iw_raw)})',
        )
    max_cwnd = _size_or_inf(t, "max_cwnd", mss)
    if max_cwnd is not None and iw > max_cwnd:
        raise field_error(
            t.at("initial_window"),
            f"must be ≤ max_cwnd ({show(t.raw('max_cwnd'))}) (got {show(iw_raw)})",
        )
    cc = t.get_choice("cc", registry.cc_names(), "congestion control", "newreno")
    entry = registry.cc(cc)
    assert entry is not None
    qos_target: int | None = None
    if entry["target_rate"]:
        if "qos_target" not in t:
            raise field_error(t.at("qos_target"), f"required when cc = {show(cc)} (a rate)")
        qos_target = t.get_rate("qos_target")
    elif "qos_target" in t:
        targets = '" or "'.join(registry.cc_names(target_rate=True))
        raise field_error(t.at("qos_target"), f'only valid with cc = "{targets}"')
    out = {
        "cc": cc,
        "qos_target_bps": qos_target,
        "cc_params": _cc_params(t, cc),
        "sack": t.get_bool("sack", True),
        "dsack": t.get_bool("dsack", True),
        "timestamps": t.get_bool("timestamps", True),
        "window_scaling": t.get_bool("window_scaling", True),
        "mss": mss,
        "rcv_buf": rcv_buf,
        "snd_buf": buf("snd_buf"),
        "initial_window_bytes": iw,
        "initial_ssthresh": _size_or_inf(t, "initial_ssthresh", mss),
        "max_cwnd": max_cwnd,
        "limited_transmit": _limited_transmit(t) != "off",
        "limited_transmit_sack": _limited_transmit(t) == "with-sack",
        "dupthresh": t.get_int("dupthresh", 3, 1, U32_MAX),
        "ca_at_ssthresh": t.get_bool("ca_at_ssthresh", False),
        "rto": _rto(t.raw("rto", next(iter(registry.rto_profiles()))), t.at("rto")),
        "ack": _ack(t.raw("ack", {}), t.at("ack")),
        # RFC 3465 §2.2: L MUST NOT exceed 2*SMSS. A stack's abc_l belongs to its slow start:
        # a controller without one (BBR) takes it only from the flow's own keys.
        "abc_l": t.get_int("abc_l", 1, 1, 2) if entry["loss_based"] or "abc_l" in own_keys else 1,
        # true: HyStart++ (RFC 9406); "linux": tcp_cubic.c's HyStart (cubic only).
        "hystart": _hystart(t) == "rfc9406",
        # A stack's "linux" HyStart belongs to its CUBIC: Linux's reno has none.
        "hystart_linux": _hystart(t) == "linux"
        and (entry["hystart_linux"] or "hystart" in own_keys),
        # "linux": tcp_cubic.c's window arithmetic; "rfc9438" (default): RFC 9438's.
        "cubic_linux": _cubic(t, cc, entry["cubic_linux"], own_keys),
        # "linux": tcp_cong.c's Reno in whole packets; "rfc5681" (default): bytes.
        "reno_linux": _reno(t, cc, entry["reno_linux"], own_keys),
        "ack_cc": _ack_cc(t.raw("ack_cc", False), t.at("ack_cc")),
        "spurious_detection": t.get_choice(
            "spurious_detection",
            registry.names("spurious_detectors"),
            "spurious-timeout detector",
            "none",
        ),
        "spurious_response": t.get_choice(
            "spurious_response",
            registry.names("spurious_responses"),
            "spurious-timeout response",
            "eifel",
        ),
        "spurious_fr": t.get_choice(
            "spurious_fr",
            registry.names("spurious_fr_detectors"),
            "spurious-fast-retransmit detector",
            "none",
        ),
        "spurious_fr_response": t.get_choice(
            "spurious_fr_response",
            registry.names("spurious_fr_responses"),
            "spurious-fast-retransmit response",
            "eifel",
        ),
    }
    out["read_rate_bps"] = t.get_rate("read_rate") if "read_rate" in t else None
    # Loss recovery: PRR (RFC 6937), RACK and TLP (RFC 8985); all need SACK.
    out["recovery_cwnd"] = t.get_choice(
        "recovery_cwnd",
        registry.names("recovery_cwnds"),
        "fast-recovery cwnd reduction",
        "immediate",
    )
    out["loss_detection"] = t.get_choice(
        "loss_detection", registry.names("loss_detections"), "loss detection", "dupthresh"
    )
    out["tlp"] = t.get_bool("tlp", False)
    if "pacing" in t:
        # Linux's internal pacing (pacing.rs); absent: as the controller needs (BBR paces).
        out["pacing"] = t.get_bool("pacing")
    if "xmit_time" in t:
        out["xmit_time"] = _xmit_time(t.raw("xmit_time"), t.at("xmit_time"))
    if "ecn" in t:
        # ECN (RFC 3168, ecn.rs): true requests and accepts it (net.ipv4.tcp_ecn = 1),
        # "passive" accepts only (tcp_ecn = 2, Linux's default), false never. Only when set, so
        # configurations without it stay as they were.
        out["ecn"] = _ecn(t.raw("ecn"), t.at("ecn"))
    # The send buffer: "fixed" (snd_buf payload bytes) or "linux" (sndbuf.rs: truesize units,
    # snd_buf = tcp_wmem[2], a writer woken on writability). Only when set, so configurations
    # without it stay as they were.
    if "snd_buf_model" in t:
        out["snd_buf_model"] = t.get_choice(
            "snd_buf_model", registry.names("snd_buf_models"), "send-buffer model", "fixed"
        )
    # How new data is cut into skbs and held back: "none" or "linux" (tso.rs:
    # tcp_write_xmit's skbs, tcp_tso_should_defer). Only when set, as snd_buf_model.
    if "tso_model" in t:
        out["tso_model"] = t.get_choice(
            "tso_model", registry.names("tso_models"), "transmit-path model", "none"
        )
    # When RACK's reordering timer and the tail-loss probe fire: "exact" (RFC 8985's
    # instant) or "linux" (jiffies.rs: the kernel's jiffies and timer wheel). Only when set,
    # as snd_buf_model.
    if "timers" in t:
        out["timers"] = t.get_choice("timers", registry.names("timers"), "timer model", "exact")
    # The advertised window: "fixed" (all free rcv_buf) or "linux" (rcv_window.rs).
    out["rcv_window"] = t.get_choice(
        "rcv_window", registry.names("rcv_windows"), "receive-window model", "fixed"
    )
    if "rcv_scaling_ratio" in t and out["rcv_window"] != "linux":
        raise field_error(t.at("rcv_scaling_ratio"), 'applies to rcv_window = "linux" only')
    # Linux's tp->scaling_ratio: len·256/truesize of a full segment.
    out["rcv_scaling_ratio"] = t.get_int(
        "rcv_scaling_ratio", registry.registry()["rcv_scaling_ratio_default"], 1, 255
    )
    out["ssthresh_from"] = t.get_choice(
        "ssthresh_from",
        registry.names("ssthresh_from"),
        "multiplicative-decrease basis",
        "flight",
    )
    for key, on in (
        ("recovery_cwnd", out["recovery_cwnd"] != "immediate"),
        ("loss_detection", out["loss_detection"] == "rack"),
        ("tlp", out["tlp"]),
    ):
        if on and not out["sack"]:
            raise field_error(t.at(key), "needs sack = true (RFC 6937 / RFC 8985 use SACK)")
    for key in ("spurious_detection", "spurious_fr"):
        if out[key] == "eifel" and not out["timestamps"]:
            # RFC 3522 §2: Eifel detection needs the timestamps option.
            raise field_error(t.at(key), '"eifel" needs timestamps = true')
        if out[key] == "dsack" and not (out["sack"] and out["dsack"]):
            # RFC 3708 §2: DSACK-based detection needs SACK and DSACK.
            raise field_error(t.at(key), '"dsack" needs sack = true and dsack = true')
    loss_based = "/".join(registry.cc_names(loss_based=True))
    if out["abc_l"] != 1 and not entry["loss_based"]:
        raise field_error(t.at("abc_l"), f"the byte-counting limit applies to {loss_based} only")
    if out["hystart_linux"] and not entry["hystart_linux"]:
        linux = "/".join(registry.cc_names(hystart_linux=True))
        rule = f'"linux" (tcp_cubic.c\'s HyStart) applies to {linux} only'
        raise field_error(t.at("hystart"), rule)
    if out["hystart"] and not entry["loss_based"]:
        # RFC 9406 modifies the slow start of loss-based controllers.
        raise field_error(t.at("hystart"), f"HyStart++ applies to {loss_based} only")
    return out


def _linux_arith(
    t: _Table, key: str, default: str, applies_to: str, supported: bool, own_keys: Iterable[str]
) -> bool:
    """``KEY = DEFAULT | "linux"``: a controller's window arithmetic, its RFC's or Linux's (a
    stack's "linux" applies only when the flow's cc supports it; given by the flow itself it
    requires such a cc, named in ``applies_to``)."""
    value = t.raw(key, default)
    if value not in (default, "linux"):
        raise field_error(t.at(key), f'must be "{default}" or "linux" (got {show(value)})')
    if value == "linux" and not supported:
        if key in own_keys:
            raise field_error(t.at(key), f'"linux" applies to {applies_to}')
        return False
    return value == "linux"


def _cubic(t: _Table, cc: str, supported: bool, own_keys: Iterable[str]) -> bool:
    """``cubic = "rfc9438" | "linux"``: which CUBIC arithmetic."""
    only = f'cc = "cubic" only (got {cc})'
    return _linux_arith(t, "cubic", "rfc9438", only, supported, own_keys)


def _reno(t: _Table, cc: str, supported: bool, own_keys: Iterable[str]) -> bool:
    """``reno = "rfc5681" | "linux"``: Reno's window arithmetic in bytes (RFC 5681) or in
    Linux's whole packets."""
    only = f"cc = {'/'.join(registry.cc_names(reno_linux=True))} only (got {cc})"
    return _linux_arith(t, "reno", "rfc5681", only, supported, own_keys)


def _ecn(value: object, field: str) -> str:
    """``ecn = true | false | "passive"`` → the core's ECN mode ("on", "off", "passive")."""
    if isinstance(value, bool):
        return "on" if value else "off"
    if value == "passive":
        return "passive"
    raise field_error(field, f'must be true, false or "passive" (got {show(value)})')


def _limited_transmit(t: _Table) -> str:
    """``limited_transmit``: true (RFC 3042 without SACK; with SACK the pipe alone counts, as
    RFC 6675 and Linux), false, or ``"with-sack"`` (also with SACK, on top of the pipe, as
    ns-3's TcpSocketBase)."""
    value = t.raw("limited_transmit", True)
    if isinstance(value, bool):
        return "on" if value else "off"
    if value == "with-sack":
        return "with-sack"
    raise field_error(
        t.at("limited_transmit"), f'must be true, false or "with-sack" (got {show(value)})'
    )


def _hystart(t: _Table) -> str:
    """``hystart``: false (off), true (HyStart++, RFC 9406) or ``"linux"`` (tcp_cubic.c)."""
    value = t.raw("hystart", False)
    if isinstance(value, bool):
        return "rfc9406" if value else "off"
    if value == "linux":
        return "linux"
    raise field_error(t.at("hystart"), f'must be true, false or "linux" (got {show(value)})')


def _ack_cc(value: object, field: str) -> dict[str, Any] | None:
    """``ack_cc = true`` or ``{ queue_threshold = 2, max_ratio = 0 }``: receiver ACK congestion
    control (RFC 3449 §4.3) driven by the local uplink queue; max_ratio 0 = half the window."""
    if isinstance(value, bool):
        return {"queue_threshold": 2, "max_ratio": 0} if value else None
    t = _Table(value, field, _ACK_CC_KEYS)
    return {
        "queue_threshold": t.get_int("queue_threshold", 2, 1, U32_MAX),
        "max_ratio": t.get_int("max_ratio", 0, 0, U32_MAX),
    }


def _app(t: _Table) -> dict[str, Any]:
    app = t.get_choice("app", ("bulk", "downloads"), "app", "bulk")
    wrong = _DOWNLOADS_ONLY if app == "bulk" else _BULK_ONLY
    other = "downloads" if app == "bulk" else "bulk"
    for key in wrong:
        if key in t:
            raise field_error(t.at(key), f'only valid with app = "{other}"')
    if app == "bulk":
        size = t.raw("bytes", "unlimited")
        return {
            "kind": "bulk",
            "bytes": None if size == "unlimited" else t.get_size("bytes"),
        }
    count = t.raw("downloads", None)
    return {
        "kind": "downloads",
        "sizes": _dist(t.raw("sizes"), t.at("sizes"), "size"),
        "think_ns": _dist(t.raw("think", "0s"), t.at("think"), "time"),
        "count": None if count is None else _as_int(count, t.at("downloads"), 1),
    }


def _start(t: _Table, top: _Table, duration_ns: int) -> int:
    """``start`` (default 0), which must fall inside the run."""
    start = t.get_time("start", 0)
    if start >= duration_ns:
        raise field_error(
            t.at("start"),
            f"must be < duration ({show(top.raw('duration'))}) (got {show(t.raw('start'))})",
        )
    return start


def _flows(top: _Table, topo: _Topology, duration_ns: int) -> list[dict[str, Any]]:
    flows: list[dict[str, Any]] = []
    names: set[str] = set()
    for i, entry in enumerate(top.tables("flows", required=True)):
        t = _Table(entry, f"flows[{i}]", _FLOW_KEYS)
        count = t.get_int("count", 1, 1, 100_000)
        name = t.get_str("name") if "name" in t else None
        start = _start(t, top, duration_ns)
        pair: int | None = None
        if "pair" in t:
            if topo.pair_routes is None:
                raise field_error(t.at("pair"), 'only valid when the path is a "dumbbell"')
            pair = t.get_int("pair", lo=0, hi=len(topo.pair_routes) - 1)
        tcp = _tcp(t)
        app = _app(t)
        for j in range(count):
            index = len(flows)
            if topo.pair_routes is None:
                route = list(range(len(topo.hops)))
            else:
                k = index if pair is None else pair
                if k >= len(topo.pair_routes):
                    raise field_error(
                        t.field,
                        f"flow {index} has no dumbbell pair (path[0].pairs = "
                        f"{len(topo.pair_routes)}): set pair = k or raise pairs",
                    )
                route = topo.pair_routes[k]
            if name is None:
                flow_name = f"flow{index}"
            elif count == 1:
                flow_name = name
            else:
                flow_name = f"{name}.{j}"
            if flow_name in names:
                raise field_error(t.at("name"), f"duplicate flow name {show(flow_name)}")
            names.add(flow_name)
            flows.append(
                {
                    "name": flow_name,
                    "path": list(route),
                    "start_ns": start,
                    "tcp": copy.deepcopy(tcp),
                    "app": copy.deepcopy(app),
                }
            )
    return flows


# ---------------------------------------------------------------------------------------------
# Cross traffic and packet capture


def _cross(top: _Table, topo: _Topology, duration_ns: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for i, entry in enumerate(top.tables("cross", required=False)):
        t = _Table(entry, f"cross[{i}]", (*_CROSS_KEYS, *_PING_ONLY))
        kind = t.get_choice("kind", ("udp_cbr", "ping"), "cross-traffic kind", "udp_cbr")
        if kind == "ping":
            continue
        for key in _PING_ONLY:
            if key in t:
                raise field_error(t.at(key), 'only a cross-traffic entry of kind "ping" takes it')
        name = t.get_str("name", f"cross{i}")
        if any(c["name"] == name for c in out):
            raise field_error(t.at("name"), f"duplicate cross-traffic name {show(name)}")
        size_raw = t.raw("packet_size", 1500)
        size = parse_size(size_raw, t.at("packet_size"))
        _check_range(size, size_raw, t.at("packet_size"), HEADER_BYTES, 65535)
        start = _start(t, top, duration_ns)
        stop = t.get_time("stop", top.raw("duration"))
        if stop <= start:
            raise field_error(t.at("stop"), f"must be > start (got {show(t.raw('stop'))})")
        hops_raw = t.raw("hops", None)
        if hops_raw is None:
            hops = list(topo.default_cross_hops)
        else:
            if not isinstance(hops_raw, list) or not hops_raw:
                raise field_error(
                    t.at("hops"),
                    f"must be a non-empty list of links (got {show(hops_raw)})",
                )
            hops = []
            for j, h in enumerate(hops_raw):
                index = topo.link_index(h, f"{t.at('hops')}[{j}]")
                if index in hops:
                    raise field_error(f"{t.at('hops')}[{j}]", f"link {show(h)} listed twice")
                hops.append(index)
        out.append(
            {
                "name": name,
                "path": hops,
                "rate_bps": t.get_rate("rate"),
                "packet_bytes": size,
                "start_ns": start,
                "stop_ns": stop,
            }
        )
    return out


def _pings(
    top: _Table, topo: _Topology, duration_ns: int, cbr: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """``[[cross]]`` entries of kind ``ping``: ICMP-echo-like probes (``ping.rs``). A request of
    ``packet_size`` bytes (IP datagram) every ``interval``; ``from = "receiver"`` (default) sends
    it up the reverse direction first, as a terminal pinging its server."""
    out: list[dict[str, Any]] = []
    for i, entry in enumerate(top.tables("cross", required=False)):
        t = _Table(entry, f"cross[{i}]", (*_CROSS_KEYS, *_PING_ONLY))
        if t.raw("kind", "udp_cbr") != "ping":
            continue
        if "rate" in t:
            raise field_error(t.at("rate"), 'a "ping" sends one request per interval: use interval')
        name = t.get_str("name", f"ping{i}")
        if any(c["name"] == name for c in (*cbr, *out)):
            # one namespace for every [[cross]] entry, as Rust's validate.rs checks it
            raise field_error(t.at("name"), f"duplicate cross-traffic name {show(name)}")
        size_raw = t.raw("packet_size", 64)
        size = parse_size(size_raw, t.at("packet_size"))
        _check_range(size, size_raw, t.at("packet_size"), HEADER_BYTES, 65535)
        start = _start(t, top, duration_ns)
        stop = t.get_time("stop", top.raw("duration"))
        if stop <= start:
            raise field_error(t.at("stop"), f"must be > start (got {show(t.raw('stop'))})")
        hops_raw = t.raw("hops", None)
        if hops_raw is None:
            hops = topo.pair_routes[0] if topo.pair_routes else list(range(len(topo.hops)))
        else:
            if not isinstance(hops_raw, list) or not hops_raw:
                raise field_error(
                    t.at("hops"), f"must be a non-empty list of links (got {show(hops_raw)})"
                )
            hops = [topo.link_index(h, f"{t.at('hops')}[{j}]") for j, h in enumerate(hops_raw)]
        origin = t.get_choice("from", ("receiver", "sender"), "ping origin", "receiver")
        out.append(
            {
                "name": name,
                "path": hops,
                "packet_bytes": size,
                "interval_ns": t.get_time("interval", "1s", positive=True),
                "start_ns": start,
                "stop_ns": stop,
                "from_receiver": origin == "receiver",
            }
        )
    return out


def _pcaps(top: _Table, topo: _Topology) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for i, entry in enumerate(top.tables("pcap", required=False)):
        t = _Table(entry, f"pcap[{i}]", _PCAP_KEYS)
        link = topo.link_index(t.raw("hop"), t.at("hop"))
        if topo.hops[link]["kind"] in ("pep", "dropper"):
            raise field_error(
                t.at("hop"),
                f"a {topo.hops[link]['kind']} hop transmits nothing itself: capture on a link "
                f"next to it (got {show(t.raw('hop'))})",
            )
        direction = t.get_choice("dir", ("fwd", "rev", "both"), "direction", "both")
        file = t.get_str("file", f"{topo.names[link]}-{direction}.pcap")
        for j, earlier in enumerate(out):
            if earlier["path"] == file:
                raise field_error(
                    t.at("file"),
                    f"duplicate file {show(file)} (also used by pcap[{j}])",
                )
        payload = t.raw("payload", 0)
        snaplen = None if payload == "all" else _payload(payload, t.at("payload"))
        out.append({"hop": link, "dir": direction, "path": file, "payload_snaplen": snaplen})
    return out


#: The shortest time-series period (validate.rs: MIN_SAMPLE_INTERVAL_NS).
MIN_SAMPLE_INTERVAL_NS: Final = 1_000_000
#: The longest hop name (validate.rs: MAX_HOP_NAME).
MAX_HOP_NAME: Final = 64
_HOP_NAME = re.compile(r"[A-Za-z0-9_.-]+")


def _sample_interval(top: _Table) -> int:
    """``sample_interval``: 0 (no time series) or at least 1 ms (validate.rs)."""
    ns = top.get_time("sample_interval", "100ms")
    if 0 < ns < MIN_SAMPLE_INTERVAL_NS:
        raise field_error(
            top.at("sample_interval"),
            f"must be 0 (no time series) or at least 1ms (got {ns}ns)",
        )
    return ns


def check_hop_name(name: str, field: str) -> None:
    """A hop's name names capture files (``<name>-<dir>.pcap``): 1 to 64 ASCII letters, digits,
    ``-``, ``_`` or ``.``, not starting with ``.`` (validate.rs: check_hop_name)."""
    if (
        len(name) <= MAX_HOP_NAME
        and not name.startswith(".")
        and _HOP_NAME.fullmatch(name) is not None
    ):
        return
    raise field_error(
        field,
        f'must be 1 to {MAX_HOP_NAME} letters, digits, "-", "_" or ".", not starting with "." '
        f"(it names capture files; got {show(name[: MAX_HOP_NAME + 1])})",
    )


def _payload(value: object, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise field_error(field, f'must be a number of bytes or "all" (got {show(value)})')
    return _as_int(value, field, 0, 65535)


# ---------------------------------------------------------------------------------------------
# Public API


class Scenario(NamedTuple):
    """A validated scenario.

    ``data`` is the TOML table as read (after any overrides); ``config`` the normalized
    simulator configuration with the scenario's own seed and pcap paths as written.
    Use :meth:`to_config` to get the configuration for one run.
    """

    name: str
    source: str
    data: dict[str, Any]
    config: dict[str, Any]
    description: str = ""

    @property
    def seed(self) -> int:
        return int(self.config["seed"])

    @property
    def duration_ns(self) -> int:
        return int(self.config["duration_ns"])

    @property
    def hop_names(self) -> list[str]:
        return [hop["name"] for hop in self.config["hops"]]

    @property
    def flow_names(self) -> list[str]:
        return [flow["name"] for flow in self.config["flows"]]

    def to_config(
        self, seed: int | None = None, out_dir: str | os.PathLike[str] | None = None
    ) -> dict[str, Any]:
        """The normalized config for one run: ``seed`` overrides the scenario's seed; relative
        pcap file names are resolved against ``out_dir`` (default: the current directory)."""
        config = copy.deepcopy(self.config)
        if seed is not None:
            config["seed"] = _as_int(seed, "seed", 0, U64_MAX)
        base = Path(out_dir) if out_dir is not None else Path.cwd()
        for pcap in config["pcap"]:
            path = Path(pcap["path"])
            pcap["path"] = str(path if path.is_absolute() else base / path)
        return config


def parse_scenario(data: Mapping[str, Any], source: str = "<dict>") -> Scenario:
    """Validate a scenario table (as read from TOML) and build its configuration.

    Python checks the table (types, units, unknown keys and every rule); when the core is
    built, the simulator's validator then checks the configuration too (it is the authority).
    """
    return _parse_scenario(data, source, with_core=True)


def _parse_scenario(data: Mapping[str, Any], source: str, *, with_core: bool) -> Scenario:
    """:func:`parse_scenario`; ``with_core=False`` applies Python's own checks only (the
    tests compare their verdicts and messages with the core's)."""
    if not isinstance(source, str):
        raise TypeError(f"parse_scenario: source must be a string (got {type(source).__name__})")
    try:
        if not isinstance(data, Mapping):
            raise field_error("", f"a scenario must be a table of keys (got {show(data)})")
        table = dict(data)
        top = _Table(table, "", _TOP_KEYS)
        default_name = "scenario" if source.startswith("<") else Path(source).stem
        name = top.get_str("name", default_name)
        description = top.get_str("description", "") if "description" in top else ""
        duration = top.get_time("duration", positive=True)
        topo = _topology(top)
        cross = _cross(top, topo, duration)
        config = {
            "name": name,
            "duration_ns": duration,
            "seed": top.get_int("seed", 1, 0, U64_MAX),
            "sample_interval_ns": _sample_interval(top),
            # the segment trace and queue samples: tcplab.run(trace=True), tcplab run --plot
            "trace": False,
            "hops": topo.hops,
            "flows": _flows(top, topo, duration),
            "cross": cross,
            "pings": _pings(top, topo, duration, cross),
            "pcap": _pcaps(top, topo),
        }
        if any(file_names(topo.hops)):
            # Files are read relative to the scenario file; the names stay as written.
            config["base_dir"] = base_dir(source)
        if "wlan" in {h["kind"] for h in topo.hops}:
            from tcplab.scenario.wlan import assign_stations

            assign_stations(config)
        if with_core:
            core_check(table, config)
        copied = copy.deepcopy(table)
    except ScenarioError as err:
        err.source = err.source or source
        raise
    except RecursionError:
        raise ScenarioError("a value is nested too deeply", source=source) from None
    return Scenario(name, source, copied, config, description)


def _origins(data: Mapping[str, Any], config: Mapping[str, Any]) -> dict[str, list[str]]:
    """For each list of a configuration built from the TOML table ``data``, the TOML entry each
    element came from: a dumbbell's hops all come from ``path[0]``, ``count`` flows from one
    ``[[flows]]``, and ``cross``/``pings`` from the ``[[cross]]`` entries of their kind."""
    path = data.get("path") or [{}]
    dumbbell = isinstance(path[0], dict) and path[0].get("kind") == "dumbbell"
    hops = [0 if dumbbell else k for k in range(len(config["hops"]))]
    flows = [i for i, f in enumerate(data.get("flows", [])) for _ in range(f.get("count", 1))]
    entries = data.get("cross", [])
    pings = [i for i, c in enumerate(entries) if c.get("kind", "udp_cbr") == "ping"]
    cbr = [i for i, c in enumerate(entries) if c.get("kind", "udp_cbr") != "ping"]
    return {
        "hops": [f"path[{k}]" for k in hops],
        "flows": [f"flows[{k}]" for k in flows],
        "cross": [f"cross[{k}]" for k in cbr],
        "pings": [f"cross[{k}]" for k in pings],
        "pcap": [f"pcap[{k}]" for k in range(len(config["pcap"]))],
    }


_CORE_FIELD = re.compile(r"\b(hops|flows|cross|pings|pcap)\[(\d+)\]")


def core_error(message: str, data: Mapping[str, Any], config: Mapping[str, Any]) -> ScenarioError:
    """The core validator's ``message`` about ``config`` (built from the TOML table ``data``)
    as a :class:`ScenarioError` naming the TOML entries: ``hops[3]`` is ``path[3]``, the
    second ping the ``[[cross]]`` entry it came from."""
    try:
        origins = _origins(data, config)
    except (AttributeError, TypeError, IndexError):  # not built from this table
        return ScenarioError(message)

    def toml(m: re.Match[str]) -> str:
        entries = origins[m.group(1)]
        k = int(m.group(2))
        return entries[k] if k < len(entries) else m.group(0)

    return ScenarioError(_CORE_FIELD.sub(toml, message))


def core_check(data: Mapping[str, Any], config: dict[str, Any]) -> None:
    """Run the simulator's own validator (``validate.rs``, the authority on what a run accepts)
    over ``config`` built from ``data``; raise its message as :func:`core_error` does. Does
    nothing when the core is not built."""
    try:
        from tcplab import _core
    except ImportError:
        return
    import json

    try:
        _core.validate(json.dumps(config))
    except ValueError as err:
        raise core_error(str(err), data, config) from None


#: Scenarios shipped inside the package (a plain directory: tcplab is never run zipped,
#: and importlib.resources costs more start-up time than the rest of the CLI).
_DATA = Path(__file__).parent.parent / "data"


def builtin_scenarios() -> list[str]:
    """Names of the scenarios shipped inside the package (``tcplab run NAME``)."""
    data = _DATA
    return sorted(p.name.removesuffix(".toml") for p in data.iterdir() if p.name.endswith(".toml"))


def read_scenario(path: str | os.PathLike[str] | None = None) -> tuple[dict[str, Any], str]:
    """Read a scenario's TOML table without validating it: ``(table, source)``.

    ``path`` is a TOML file, or the name of a built-in scenario (None = ``p2p-bulk``).
    """
    if path is not None and not isinstance(path, str | os.PathLike):
        raise ScenarioError(f"scenario: must be a file path or a built-in name (got {show(path)})")
    name = "p2p-bulk" if path is None else str(path)
    file = Path(name)
    if file.is_dir():
        raise ScenarioError("is a directory, not a scenario file", source=name)
    if file.is_file():
        source = name
        try:
            text = file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as err:
            raise ScenarioError(f"cannot read: {err}", source=source) from None
    elif name in builtin_scenarios():
        source = f"<built-in {name}>"
        text = (_DATA / f"{name}.toml").read_text(encoding="utf-8")
    else:
        builtins = ", ".join(builtin_scenarios())
        raise ScenarioError(f"no such scenario file (built-in scenarios: {builtins})", source=name)
    try:
        # A UTF-8 byte-order mark (some Windows editors write one) is not part of the TOML.
        return tomllib.loads(text.removeprefix("\ufeff")), source
    except ValueError as err:  # TOMLDecodeError, or an integer of more than 4300 digits
        raise ScenarioError(f"invalid TOML: {err}", source=source) from None
    except RecursionError:
        raise ScenarioError(
            "invalid TOML: nested too deeply (arrays or tables inside each other)", source=source
        ) from None


def load_scenario(
    path: str | os.PathLike[str] | None = None, overrides: Iterable[str] | None = ()
) -> Scenario:
    """Load and validate a scenario from a TOML file, or a built-in one by name (None =
    ``p2p-bulk``). ``overrides`` are ``KEY=VALUE`` strings applied before validation (see
    :func:`apply_overrides`)."""
    data, source = read_scenario(path)
    try:
        data = apply_overrides(data, () if overrides is None else overrides)
    except ScenarioError as err:
        err.source = source
        raise
    return parse_scenario(data, source)


# ---------------------------------------------------------------------------------------------
# --set KEY=VALUE overrides

_KEY_STEP = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*)((?:\[\d+\])*)")


def _key_steps(key: str, item: str) -> list[str | int]:
    steps: list[str | int] = []
    for part in key.split("."):
        m = _KEY_STEP.fullmatch(part)
        if m is None:
            raise ScenarioError(
                f"--set {show(item)}: bad key {show(key)} (use a dotted path like flows[0].cc)"
            )
        steps.append(m.group(1))
        steps += [int(x) for x in re.findall(r"\[(\d+)\]", m.group(2))]
    return steps


def parse_literal(text: str) -> object:
    """Parse a TOML literal (``0.01``, ``true``, ``[0, 1]``, ``{kind = ...}``); else a string."""
    try:
        value = tomllib.loads(f"v = {text}")["v"]
    except ValueError:  # TOMLDecodeError, or an integer of more than 4300 digits
        return text
    except RecursionError:
        raise ScenarioError(f"--set value nested too deeply: {show(text[:40])}...") from None
    if isinstance(value, float) and not math.isfinite(value):
        return text  # "inf" means "no limit" to tcplab, not a float
    return value


def _walk(steps: list[str | int]) -> Iterator[tuple[str | int, str | int | None, str]]:
    """(step, next step, path so far) for each step of a key."""
    path = ""
    for i, step in enumerate(steps):
        path = f"{path}[{step}]" if isinstance(step, int) else _join(path, step)
        yield step, steps[i + 1] if i + 1 < len(steps) else None, path


def apply_overrides(data: Mapping[str, Any], overrides: Iterable[str]) -> dict[str, Any]:
    """Apply ``KEY=VALUE`` overrides to a scenario table (a copy is returned).

    KEY is a dotted path with list indexes (``duration``, ``flows[0].cc``,
    ``path[0].up.rate``); missing tables are created, and an index equal to the length of a
    list appends a new table. VALUE is read as a TOML literal when it is one (``0.01``,
    ``true``, ``[0, 2]``, ``{kind = "exponential", mean = "2s"}``), else as a string
    (``20s``, ``cubic``).
    """
    if isinstance(overrides, str) or not isinstance(overrides, Iterable):
        raise ScenarioError(
            f"--set: overrides must be a list of KEY=VALUE strings (got {show(overrides)})"
        )
    try:
        result = copy.deepcopy(dict(data))
    except RecursionError:
        raise ScenarioError("--set: the scenario table is nested too deeply") from None
    for item in overrides:
        if not isinstance(item, str):
            raise ScenarioError(f"--set {show(item)}: must be a KEY=VALUE string")
        if "\n" in item or "\r" in item:
            raise ScenarioError(f"--set {show(item)}: must be one line (a line break in KEY=VALUE)")
        key, sep, text = item.partition("=")
        if not sep or not key.strip():
            raise ScenarioError(f"--set {show(item)}: expected KEY=VALUE, e.g. flows[0].cc=cubic")
        steps = _key_steps(key.strip(), item)
        if not isinstance(steps[0], str):  # pragma: no cover - the regex starts with a name
            raise ScenarioError(f"--set {show(item)}: bad key")
        node: Any = result
        for step, nxt, path in _walk(steps):
            fresh: Any = {} if isinstance(nxt, str) else []
            if isinstance(step, int):
                if step > len(node):
                    raise ScenarioError(
                        f"--set {key}: index {step} out of range ({path.rsplit('[', 1)[0]} has "
                        f"{len(node)} entries)"
                    )
                if step == len(node):
                    node.append(fresh)
            if nxt is None:
                node[step] = parse_literal(text.strip())
                break
            child = node[step] if isinstance(step, int) else node.setdefault(step, fresh)
            if isinstance(nxt, int) and not isinstance(child, list):
                raise ScenarioError(f"--set {key}: {path} is not a list")
            if isinstance(nxt, str) and not isinstance(child, dict):
                raise ScenarioError(f"--set {key}: {path} is not a table")
            node = child
    return result
