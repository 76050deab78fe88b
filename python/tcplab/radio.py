"""W-CDMA radio bearer presets and the ``kind = "rlc"`` hop reader (Sekiguchi 2008).

The paper describes its five environments only qualitatively (§2, §6): strong field near the
base station, weak field at the cell edge (static), pedestrian, car and express train. The
numbers below are tcplab's calibration (see ``papers/sto3g.py`` and the README): the static
presets differ in block error rate (how many RLC retransmissions, hence how large and how
variable the steady delay is); the moving presets add radio stalls (handover, shadowing,
channel reallocation) whose rate rises with speed. Calibrated on Fig. 2 (STO incidence vs RTO
at the cell edge) and on the standard-profile STO/MB of Fig. 6; every other figure is a
prediction.

Calibration method (``python -m tcplab.papers.sto3g calibrate`` prints the same table): a
small grid over block error rate, stall rate and stall durations, 3 seeds x 40 downloads of the
four contents per environment and profile, 2 x 300 downloads of the Fig. 2 mix per RTO value;
each preset chosen by eye for the least log-error against the targets below, favouring Fig. 2
for ``weak`` (the issue's Done-when criteria are on Fig. 2).

| target | paper | tcplab (calibration runs) |
|---|---|---|
| Fig. 2 weak, RTO 1.5 s | 10% of connections | 12.3% |
| Fig. 2 weak, RTO 4 s / 10 s | ~1%, flat | 1.0% / 1.7% |
| Fig. 2 strong, RTO 4 s | 0.4% | 0.2% |
| Fig. 6 standard: weak / strong / train | 0.18 (min) / > weak / 0.36 (max) | 0.73 / 0.41 / 0.38 |
| Fig. 6 tuned: weak / train | 0.01 / 0.23 | 0.075 / 0.27 |

Known conflict: with independent PDU errors, the RTT variance that gives Fig. 2's 10% STO at
1.5 s also gives standard-profile STOs at the cell edge (0.73/MB vs the paper's 0.18/MB), and
the rare long outages that keep Fig. 2 flat at ~1% from 4 to 10 s give ~0.07 STO/MB under the
tuned profile (paper 0.01/MB). The paper's Fig. 2 and Fig. 6 come from different field
campaigns; tcplab uses one preset for both.
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
    "stalls",
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
    "delay": "130ms",
    "queue": 100,
    "spike_rate": 0.0,
    "spike_duration": {"kind": "const", "value": "0s"},
}

#: The paper's environments (tcplab calibration, see the module docstring). ``spike_rate`` is
#: radio stalls per second; ``spike_duration`` their length.
RLC_PRESETS: Final[dict[str, dict[str, object]]] = {
    # near the base station: few block errors; frequent short shadowing stalls (0.5-3 s) and
    # a rare longer one (4-6 s)
    "strong": {
        "down_bler": 0.002,
        "up_bler": 0.002,
        "spike_rate": 0.025,
        "spike_duration": {"kind": "empirical", "bins": [["0.5s", "3s", 95], ["4s", "6s", 5]]},
    },
    # cell edge, static: many RLC retransmissions; rare long outages (radio-link
    # re-establishment, 10-20 s)
    "weak": {
        "down_bler": 0.09,
        "up_bler": 0.09,
        "spike_rate": 0.0015,
        "spike_duration": {"kind": "uniform", "lo": "10s", "hi": "20s"},
    },
    # moving: handover/shadowing stalls of 1-9 s, more frequent with speed
    "pedestrian": {
        "down_bler": 0.006,
        "up_bler": 0.006,
        "spike_rate": 0.004,
        "spike_duration": {"kind": "uniform", "lo": "1s", "hi": "9s"},
    },
    "car": {
        "down_bler": 0.006,
        "up_bler": 0.006,
        "spike_rate": 0.008,
        "spike_duration": {"kind": "uniform", "lo": "1s", "hi": "9s"},
    },
    "train": {
        "down_bler": 0.006,
        "up_bler": 0.006,
        "spike_rate": 0.013,
        "spike_duration": {"kind": "uniform", "lo": "1s", "hi": "9s"},
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
    if "bins" in dur:
        dur_s["bins"] = [[lo / 1e9, hi / 1e9, w] for lo, hi, w in dur["bins"]]
    if dur.get("kind") == "lognormal":
        dur_s["mu"] = dur["mu"] - 20.72326583694641  # ln(1e9): ns → s
    stalls_raw = t.raw("stalls", [])
    if not isinstance(stalls_raw, list):
        raise sc.field_error(t.at("stalls"), 'must be a list of ["start", "duration"] pairs')
    stalls = []
    for k, pair in enumerate(stalls_raw):
        f = f"{t.at('stalls')}[{k}]"
        if not (isinstance(pair, list) and len(pair) == 2):
            raise sc.field_error(f, f'must be a ["start", "duration"] pair (got {sc.show(pair)})')
        stalls.append([parse_time(pair[0], f"{f}[0]"), parse_time(pair[1], f"{f}[1]")])
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
        "stalls_ns": stalls,
    }
