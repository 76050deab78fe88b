"""W-CDMA radio bearer presets and the ``kind = "rlc"`` hop reader (Sekiguchi 2008).

The paper describes its five environments only qualitatively (§2, §6): strong field near the
base station, weak field at the cell edge (static), pedestrian, car and express train. The
numbers below are tcplab's calibration (see ``papers/sto3g.py`` and docs/scenarios.md): the static
presets differ in block error rate (how many RLC retransmissions, hence how large and how
variable the steady delay is); the moving presets add radio stalls (handover, shadowing,
channel reallocation) whose rate rises with speed. Calibrated on Fig. 2 (STO incidence vs RTO
at the cell edge) and on the standard-profile STO/MB of Fig. 6; every other figure is a
prediction.

Calibration method (``python -m tcplab.papers.sto3g calibrate`` prints the same table): a
small grid over block error rates, fade rate/duration/BLER, stall rate and stall durations, 12
seeds x 40 downloads of the four contents per environment and profile, 6 x 300 downloads of
the Fig. 2 mix per RTO value (fewer seeds leave the weak preset's long fades too few per run
to compare candidates); each preset chosen by eye for the least log-error against the targets
below, favouring Fig. 2 for ``weak`` (the issue's Done-when criteria are on Fig. 2).

| target | paper | tcplab (calibration runs) |
|---|---|---|
| Fig. 2 weak, RTO 1.5 s | 10% of connections | 9.6% |
| Fig. 2 weak, RTO 4 s / 10 s | ~1%, flat | 0.9% / 0.9% |
| Fig. 2 strong, RTO 4 s | 0.4% | 0.4% |
| Fig. 6 standard: weak / strong / train | 0.18 (min) / > weak / 0.36 (max) | 0.34 / 0.29 / 0.31 |
| Fig. 6 tuned: weak / train | 0.01 / 0.23 | 0.060 / 0.22 |

Weak preset, correlated block errors ("fades"). With independent PDU errors (BLER 9%, the
preset before) the weak field gave 0.72 STO/MB under the standard profile (paper 0.18) at the
same Fig. 2 point. The cause: 94% of those STOs hit the first flight, whose RTO is 3 x the
handshake RTT (0.82 s). A 2-PDU SYN rarely waits for an RLC retransmission (1 - 0.91^2 =
17%), while a 36-PDU data packet almost always does (1 - 0.91^36 = 97%, 25% of them twice). So
the handshake sample under-states the data RTT at every connection start. A power-limited
cell-edge link cannot follow slow fades: block errors come in bursts (a two-state
Gilbert-Elliott channel, docs/algorithms.md §8.2), and handshake and first flight then see the
same state. The fit puts 0.5% BLER outside a fade, where power control holds its target, and
30% in fades of 5-20 s covering ~35% of the time. That halves the conflict (standard
0.34/MB; first-flight STOs 0.64 -> 0.20/MB; median RTO at an STO 0.82 -> 1.33 s) but does not
remove it. The grid covered 0.5-3% BLER outside fades, 25-70% inside, fades of 1-40 s over
10-50% of the time. Its best settings that keep Fig. 2 at ~10% give 0.28-0.40/MB (8-16
seeds), and none reaches the paper's 0.18. Not tried: RLC status/poll timing, or
retransmissions queued behind new PDUs.

Known conflicts that remain: weak/standard 0.34 vs 0.18/MB (above), and strong (0.29) still
just below weak, where the paper has strong > weak. The rare long outages that keep Fig. 2 flat
at ~1% from 4 to 10 s give ~0.06 STO/MB under the tuned profile (paper 0.01/MB): a per-time
outage process that hits 1% of short (~45 KB, ~3.5 s) web connections hits ~0.05 per MB of
long downloads. The paper's Fig. 2 and Fig. 6 come from different field campaigns; tcplab uses
one preset for both.
"""

from __future__ import annotations

from typing import Any, Final

#: Keys of a ``kind = "rlc"`` hop.
RLC_KEYS: Final = (
    "kind",
    "name",
    "aqm",
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
    "fade_rate",
    "fade_duration",
    "down_fade_bler",
    "up_fade_bler",
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
    # fades: periods of high block error rate (no fades by default)
    "fade_rate": 0.0,
    "fade_duration": {"kind": "const", "value": "0s"},
    "down_fade_bler": 0.0,
    "up_fade_bler": 0.0,
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
    # cell edge, static: the link is power-limited, so slow fades (shadowing, 5-20 s, ~35% of
    # the time) are not compensated and blocks fail in bursts (30% block errors in a fade,
    # 0.5% outside, where power control holds its BLER target); rare long outages
    # (radio-link re-establishment, 10-20 s)
    "weak": {
        "down_bler": 0.005,
        "up_bler": 0.005,
        "fade_rate": 0.0431,
        "fade_duration": {"kind": "uniform", "lo": "5s", "hi": "20s"},
        "down_fade_bler": 0.3,
        "up_fade_bler": 0.3,
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
    """A ``kind = "rlc"`` table (a :class:`~tcplab.scenario.fields.Table`) → the simulator's
    ``HopConfig::Rlc``."""
    from tcplab.errors import field_error, show
    from tcplab.scenario import fields as sc
    from tcplab.scenario.units import parse_rate, parse_size, parse_time

    preset = t.get_choice("preset", tuple(RLC_PRESETS), "RLC preset", "strong")
    base = {**RLC_DEFAULTS, **RLC_PRESETS[preset]}

    def raw(key: str) -> object:
        return t.raw(key, base[key])

    def bler(key: str) -> float:
        p = sc.as_prob(raw(key), t.at(key))
        if p >= 1.0:
            raise field_error(t.at(key), f"must be < 1 (got {p})")
        return p

    max_dat = sc.as_int(raw("max_dat"), t.at("max_dat"), 1, 1000)
    pdu = parse_size(raw("pdu_size"), t.at("pdu_size"))
    if pdu <= 0:
        raise field_error(t.at("pdu_size"), "must be > 0")
    rate = sc.as_number(raw("spike_rate"), t.at("spike_rate"))
    if rate < 0:
        raise field_error(t.at("spike_rate"), f"must be ≥ 0 (got {rate})")

    def seconds_dist(key: str) -> dict[str, Any]:
        dur = sc.as_dist(raw(key), t.at(key), "time")
        seconds = ("value", "lo", "hi", "mean", "scale")
        out = {k: (v / 1e9 if k in seconds else v) for k, v in dur.items()}
        if "bins" in dur:
            out["bins"] = [[lo / 1e9, hi / 1e9, w] for lo, hi, w in dur["bins"]]
        if dur.get("kind") == "lognormal":
            out["mu"] = dur["mu"] - 20.72326583694641  # ln(1e9): ns → s
        return out

    dur_s = seconds_dist("spike_duration")
    fade_rate = sc.as_number(raw("fade_rate"), t.at("fade_rate"))
    if fade_rate < 0:
        raise field_error(t.at("fade_rate"), f"must be ≥ 0 (got {fade_rate})")
    fade_s = seconds_dist("fade_duration")
    stalls_raw = t.raw("stalls", [])
    if not isinstance(stalls_raw, list):
        raise field_error(t.at("stalls"), 'must be a list of ["start", "duration"] pairs')
    stalls = []
    for k, pair in enumerate(stalls_raw):
        f = f"{t.at('stalls')}[{k}]"
        if not (isinstance(pair, list) and len(pair) == 2):
            raise field_error(f, f'must be a ["start", "duration"] pair (got {show(pair)})')
        stalls.append([parse_time(pair[0], f"{f}[0]"), parse_time(pair[1], f"{f}[1]")])
    delay = parse_time(raw("delay"), t.at("delay"))
    queue = sc.as_int(raw("queue"), t.at("queue"), 1, 1_000_000)

    def direction(rate_key: str, bler_key: str) -> dict[str, Any]:
        d = {
            "rate_bps": parse_rate(raw(rate_key), t.at(rate_key)),
            "bler": bler(bler_key),
            "fade_bler": bler(bler_key.replace("_bler", "_fade_bler")),
            "delay_ns": delay,
            "queue_packets": queue,
        }
        if "aqm" in t:
            # Only when set: a buffer without it keeps the DropTail model (docs/aqm.md).
            from tcplab.scenario.aqm import parse_aqm

            limit = {"kind": "packets", "limit": queue}
            d["aqm"] = parse_aqm(t.raw("aqm"), t.at("aqm"), limit, d["rate_bps"])
        return d

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
        "fade_rate_per_s": fade_rate,
        "fade_duration_s": fade_s,
    }
