"""W-CDMA radio bearer presets and the ``kind = "rlc"`` hop reader (Sekiguchi 2008).

The paper describes its five environments only qualitatively (§2, §6): strong field near the
base station, weak field at the cell edge (static), pedestrian, car and express train. The
numbers below are tcplab's calibration (see ``papers/sto3g.py`` and the README): the static
presets differ in block error rate (how many RLC retransmissions, hence how large and how
variable the steady delay is); the moving presets add radio stalls (handover, shadowing,
channel reallocation) whose rate rises with speed. Calibrated on Fig. 2 (STO incidence vs RTO
at the cell edge) and on the standard-profile STO/MB of Fig. 6; every other figure is a
prediction.
"""

from __future__ import annotations

from typing import Any, Final

#: Keys of a ``kind = "rlc"`` hop.
RLC_KEYS: Final = (
    "kind",
    "name",
    "preset",
    "pdu_size",
    "retx_interval",
    "max_dat",
    "down_rate",
    "up_rate",
    "down_bler",
    "up_bler",
    "delay",
    "queue",
    "spike_rate",
    "spike_duration",
)

#: Defaults shared by every preset (paper §2/§5: 42-byte PDU, 400 ms retransmission interval,
#: 384/64 kbps; MaxDAT 10: "operators use more than the TCP-optimal 6").
RLC_DEFAULTS: Final[dict[str, object]] = {
    "pdu_size": "42B",
    "retx_interval": "400ms",
    "max_dat": 10,
    "down_rate": "384kbps",
    "up_rate": "64kbps",
    "down_bler": 0.0,
    "up_bler": 0.0,
    # one-way core-network + processing delay beyond the radio (RTT ≈ 300 ms with a 1500-B
    # packet down and an ACK up, as the paper's emulator)
    "delay": "100ms",
    "queue": 100,
    "spike_rate": 0.0,
    "spike_duration": {"kind": "const", "value": "0s"},
}

#: The paper's environments. ``spike_rate`` is stalls per second.
RLC_PRESETS: Final[dict[str, dict[str, object]]] = {
    "strong": {"down_bler": 0.002, "up_bler": 0.002},
    "weak": {
        "down_bler": 0.02,
        "up_bler": 0.02,
        "spike_rate": 0.002,
        "spike_duration": {"kind": "uniform", "lo": "1s", "hi": "3s"},
    },
    "pedestrian": {
        "down_bler": 0.01,
        "up_bler": 0.01,
        "spike_rate": 0.012,
        "spike_duration": {"kind": "uniform", "lo": "1s", "hi": "4s"},
    },
    "car": {
        "down_bler": 0.01,
        "up_bler": 0.01,
        "spike_rate": 0.016,
        "spike_duration": {"kind": "uniform", "lo": "1.5s", "hi": "5s"},
    },
    "train": {
        "down_bler": 0.012,
        "up_bler": 0.012,
        "spike_rate": 0.022,
        "spike_duration": {"kind": "uniform", "lo": "1.5s", "hi": "6s"},
    },
}


def rlc_hop(t: Any, name: str) -> dict[str, Any]:
    """A ``kind = "rlc"`` table (a ``scenario._Table``) → the simulator's ``HopConfig::Rlc``."""
    from tcplab import scenario as sc
    from tcplab.units import parse_rate, parse_size, parse_time

    preset = t.get_choice("preset", tuple(RLC_PRESETS), "RLC preset", "strong")
    base = {**RLC_DEFAULTS, **RLC_PRESETS[preset]}

    def raw(key: str) -> object:
        return t.raw(key, base[key])

    def bler(key: str) -> float:
        p = sc._as_prob(raw(key), t.at(key))
        if p >= 1.0:
            raise sc.field_error(t.at(key), f"must be < 1 (got {p})")
        return p

    max_dat = sc._as_int(raw("max_dat"), t.at("max_dat"), 1, 1000)
    pdu = parse_size(raw("pdu_size"), t.at("pdu_size"))
    if pdu <= 0:
        raise sc.field_error(t.at("pdu_size"), "must be > 0")
    rate = sc._as_number(raw("spike_rate"), t.at("spike_rate"))
    if rate < 0:
        raise sc.field_error(t.at("spike_rate"), f"must be ≥ 0 (got {rate})")
    dur = sc._dist(raw("spike_duration"), t.at("spike_duration"), "time")
    seconds = ("value", "lo", "hi", "mean", "scale")
    dur_s = {k: (v / 1e9 if k in seconds else v) for k, v in dur.items()}
    if dur.get("kind") == "lognormal":
        dur_s["mu"] = dur["mu"] - 20.72326583694641  # ln(1e9): ns → s
    delay = parse_time(raw("delay"), t.at("delay"))
    queue = sc._as_int(raw("queue"), t.at("queue"), 1, 1_000_000)

    def direction(rate_key: str, bler_key: str) -> dict[str, Any]:
        return {
            "rate_bps": parse_rate(raw(rate_key), t.at(rate_key)),
            "bler": bler(bler_key),
            "delay_ns": delay,
            "queue_packets": queue,
        }

    return {
        "kind": "rlc",
        "name": name,
        "pdu_bytes": pdu,
        "retx_interval_ns": parse_time(raw("retx_interval"), t.at("retx_interval")),
        "max_dat": max_dat,
        "down": direction("down_rate", "down_bler"),
        "up": direction("up_rate", "up_bler"),
        "spike_rate_per_s": rate,
        "spike_duration_s": dur_s,
    }
