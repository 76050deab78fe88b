"""QoS-TCP on a moving WLAN terminal (Ando, Murase, Oguchi, ~2011; docs/papers.md §4).

Four parts, one function per figure or table (:data:`SECTIONS`):

0. The MAC before TCP: the DCF cell's saturation throughput for 1..10 stations against Bianchi's
   model; one terminal alone against its distance from the AP (paper Figs. 4-5), indoors and on
   the outdoor channel.
1. Uplink unfairness vs the number of stations for several AP buffer sizes: where unhappy
   terminals appear (paper: AP buffer 265.5 packets, fair up to 6 stations, unfair from 7) and
   the mechanism (the AP buffer overflows with TCP ACKs; ACK losses cause the timeouts).
2. The handover experiment: 2 background stations on AP1, 6 on AP2, a terminal walking from AP1 to
   AP2 with normal TCP or QoS-TCP, under the "simulator" channel (collisions only, retry limit 7)
   and the "testbed" channel (the devices' retry limit 5, the moving terminal's frame errors near
   the cell edge), and a grid of candidate testbed channels (per-station and cell-wide burst
   errors, each station's own fades in time, a weaker background station, a weak AP downlink,
   CUBIC hosts, CWmin 31); the same walk on the "outdoor" channel (retry limit 5, every
   station's frames failing more the farther it is from its AP, calibrated on Fig. 4) for the
   outdoor Fig. 6; ns-2's CWmin 31 gets its own simulator row.
3. A 7th station joining 6 normal-TCP stations 30 s late, without a handover: a late normal TCP
   (§5: it becomes unhappy) and a late QoS-TCP (§6, Fig. 11: an incumbent becomes unhappy).

Settings the paper leaves open (documented in ``tcplab.scenario.wlan_configs``): host TCP
(NewReno+SACK, autotuned windows, an ACK per segment, RTO min 200 ms), the stations'
Ethernet-converter queue (100 packets), the wired link, the walk (20 m in 40 s), the handover outage
(2 s; the terminal's uplink frames are lost while it is not associated), the QoS-TCP target rate
(4 Mbit/s, about the fair share at AP2). The unfairness threshold is measured on the testbed
channel's retry limit, as the paper measured it on its devices.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

import numpy as np

from tcplab.analyze.fairness import ap_drops, jain, throughput_series, unhappy
from tcplab.campaign.sweep import run_configs
from tcplab.models.wlan import ack_overflow_stations, bianchi
from tcplab.report import plots
from tcplab.report.checks import Above, AtLeast, AtMost, Below, Claim, Factor, Info, Report, Within
from tcplab.scenario.wlan_configs import TCP_DEFAULTS, handover_config, tcp, uplink_config
from tcplab.stats import mean_ci95, ratio_ci95

PAPER_THRESHOLD = 7  # unfair from 7 stations (fair up to 6) at the measured 265.5-packet buffer
PAPER_AP_QUEUE = 265
PAPER_RATIO = 20.0  # QoS-TCP vs normal TCP after handover, indoor testbed
PAPER_SIM_VS_TESTBED = 12.0  # total-throughput gap between ns-2 and the testbed (QoS-TCP)

#: The paper's devices discard a frame after 5 attempts (§6; IEEE 802.11's dot11ShortRetryLimit
#: default is 7, which ns-2 and tcplab's simulator channel use).
TESTBED_RETRY = 5
#: The per-station Gilbert-Elliott burst chain the testbed channel carried before (per frame
#: attempt): kept as a sensitivity row. With it the cell never reaches the unfair-but-stable
#: state the paper measured on its devices (unfair from 7 stations): the report measures its
#: threshold beside the default channel's. §6 says the observed bursts had no effect on
#: long-term throughput, so the default testbed channel carries the devices' retry limit and
#: the moving terminal's distance term, not this chain.
STATION_BURSTS = {"p_gb": 0.0005, "p_bg": 0.1, "loss_good": 0.0, "loss_bad": 0.9}
#: handover_config options of the default testbed channel: no per-station chain.
TESTBED = {"burst": {"p_gb": 0.0}}


# ---------------------------------------------------------------------------
# Part 0: the MAC against Bianchi
# ---------------------------------------------------------------------------


def saturation_configs(ns: list[int], secs: float = 4.0) -> list[dict[str, Any]]:
    """One saturated CBR source per station (far above its share), one AP."""
    out = []
    for n in ns:
        out.append(
            {
                "name": f"bianchi-{n}",
                "duration_ns": int(secs * 1e9),
                "seed": 7,
                "sample_interval_ns": 0,
                "hops": [
                    {
                        "kind": "wlan",
                        "name": "cell",
                        "sta_queue": 50,
                        "aps": [{"name": "ap"}],
                        "stations": [{"name": f"sta{i}", "cross": [i]} for i in range(n)],
                    }
                ],
                "flows": [],
                "cross": [
                    {
                        "name": f"cbr{i}",
                        "path": [0],
                        "rate_bps": 60_000_000,
                        "packet_bytes": 1500,
                        "start_ns": 0,
                        "stop_ns": int(secs * 1e9),
                    }
                    for i in range(n)
                ],
                "pcap": [],
            }
        )
    return out


def saturation(
    ns: list[int], jobs: int | None, secs: float = 4.0
) -> list[tuple[int, float, float]]:
    """(n, simulated bit/s, Bianchi bit/s) for each n."""
    res = run_configs(saturation_configs(ns, secs), jobs=jobs)
    out = []
    for n, s in zip(ns, res, strict=True):
        got = sum(c["received"] for c in s["cross"]) * 1500 * 8 / secs
        out.append((n, got, bianchi(n)["throughput_bps"]))
    return out


# ---------------------------------------------------------------------------
# Part 1: unfairness vs number of stations
# ---------------------------------------------------------------------------


def measure_uplink(s: dict[str, Any], n: int, measure_s: float) -> dict[str, Any]:
    """Per-run fairness numbers over the last ``measure_s`` seconds."""
    ts = s["timeseries_table"]
    t, rates = throughput_series(ts, list(range(n)), 1.0)
    window = t > t[-1] - measure_s
    mean = rates[:, window].mean(axis=1)
    found = unhappy(t[window], rates[:, window], fraction=0.1, min_s=5.0)
    ev = s["events_table"]
    kinds = s["event_kinds"]
    k_to = kinds.index("timeout")
    to = ev["kind"] == k_to
    drops = ap_drops(s["links"])
    return {
        "jain": jain(mean),
        "unhappy": len({f for f, _, _ in found}),
        "goodput_bps": float(mean.sum()),
        "timeouts": int(to.sum()),
        "spurious_timeouts": int((to & (ev["spurious"] == 1)).sum()),
        **drops,
    }


def unfair(rows: list[dict[str, Any]]) -> bool:
    """A configuration is unfair when most of its seeds show an unhappy terminal."""
    return sum(r["unhappy"] > 0 for r in rows) * 2 > len(rows)


def threshold(by_n: dict[int, list[dict[str, Any]]]) -> int | None:
    """The smallest n that is unfair and whose next tested n is unfair too (None if none)."""
    ns = sorted(by_n)
    for k, n in enumerate(ns):
        if unfair(by_n[n]) and (k + 1 == len(ns) or unfair(by_n[ns[k + 1]])):
            return n
    return None


def unfairness_sweep(
    queues: list[int],
    ns: list[int],
    seeds: list[int],
    jobs: int | None,
    duration_s: float,
    measure_s: float,
    **kw: Any,
) -> dict[int, dict[int, list[dict[str, Any]]]]:
    """{AP queue: {n: [per-seed rows]}}."""
    keys = [(q, n, sd) for q in queues for n in ns for sd in seeds]
    cfgs = [uplink_config(n, ap_queue=q, duration_s=duration_s, seed=sd, **kw) for q, n, sd in keys]
    res = run_configs(cfgs, jobs=jobs, columns=True)
    out: dict[int, dict[int, list[dict[str, Any]]]] = {q: {n: [] for n in ns} for q in queues}
    for (q, n, _), s in zip(keys, res, strict=True):
        out[q][n].append(measure_uplink(s, n, measure_s))
    return out


# ---------------------------------------------------------------------------
# Part 2: handover
# ---------------------------------------------------------------------------


def measure_handover(s: dict[str, Any], cfg: dict[str, Any]) -> dict[str, Any]:
    """The moving terminal's goodput before and after its handover, AP2's fair share after it."""
    n = len(cfg["flows"])
    mobile = n - 1
    hop = cfg["hops"][0]
    n_ap1 = sum(1 for st in hop["stations"][:-1] if st["ap"] == 0)
    t, rates = throughput_series(s["timeseries_table"], list(range(n)), 1.0)
    sta_rows = [r for r in s["links"] if r.get("kind") == "wlan" and r.get("role") == "station"]
    ho = sta_rows[mobile]["handover_t_s"]
    t_ho = ho[0] if ho else float("nan")
    back = t_ho + hop["handover_ns"] * 1e-9
    after = t > back + 5.0
    before = (t > 5.0) & (t <= t_ho)
    ap2 = [*list(range(n_ap1, n - 1)), mobile]
    fair_after = float(rates[ap2][:, after].sum(axis=0).mean() / len(ap2))
    mob_after = float(rates[mobile, after].mean())
    # At AP1 while the terminal is still within the fade onset of it (§4.1.3: QoS-TCP secures
    # about the fair share "except around the handover, where the signal weakens"): from 5 s to
    # the time the walk reaches FADE_M[0] metres, the same window on both channels.
    path = hop["stations"][-1]["path"]
    w0, w1 = path[-2], path[-1]
    t_edge = (w0["t_ns"] + (w1["t_ns"] - w0["t_ns"]) * FADE_M[0] / (w1["x"] - w0["x"])) * 1e-9
    near1 = (t > 5.0) & (t <= min(t_edge, t_ho))
    ap1 = [*list(range(n_ap1)), mobile]
    # (NaN when the walk starts before 5 s, leaving no 1-s bin in that window)
    has_near1 = bool(near1.any())
    fair_near1 = (
        float(rates[ap1][:, near1].sum(axis=0).mean() / len(ap1)) if has_near1 else float("nan")
    )
    found = unhappy(t[after], rates[ap2][:, after], fraction=0.1, min_s=5.0)
    # Mechanism: how full AP2's queue is (share of the TCP ACKs it drops), and how the terminal
    # re-entered: first new delivery after re-association, timeouts after it (and how many were
    # spurious: the segment had arrived, its ACK was lost).
    ap_rows = [r for r in s["links"] if r.get("kind") == "wlan" and r.get("role") == "ap"]
    a2 = ap_rows[1]
    ack_in = a2["drops_queue_ack"] + a2["tx_ack"]
    ts = s["timeseries_table"]
    m = ts["flow"] == mobile
    tt = ts["t_ns"][m] * 1e-9
    dl = ts["delivered"][m]
    base = dl[tt <= back][-1] if (tt <= back).any() else 0
    moved = tt[(tt > back) & (dl > base)]
    ev = s["events_table"]
    k_to = s["event_kinds"].index("timeout")
    to = (ev["kind"] == k_to) & (ev["flow"] == mobile) & (ev["t_ns"] * 1e-9 > back)
    # TCP data frames AP2's background stations discarded at the retry limit (whole run; they
    # never move): the data losses that shrink their windows now and then.
    bg2 = sta_rows[n_ap1 : n - 1]
    # AP2's share of the frames sent in its cell by AP2 and its background stations (the moving
    # terminal's frames are counted over both cells and left out).
    ap2_tx = a2["tx_packets"]
    return {
        "ap2_tx_share": ap2_tx / (ap2_tx + sum(r["tx_packets"] for r in bg2)),
        "ap2_bg_retry_data_per_min": sum(r["drops_retry_data"] for r in bg2)
        / len(bg2)
        / (cfg["duration_ns"] * 1e-9 / 60.0),
        "ap2_ack_drop": a2["drops_queue_ack"] / ack_in if ack_in else float("nan"),
        "ap2_queue_ack_drops": int(a2["drops_queue_ack"]),
        "ap2_retry_ack_drops": int(a2["drops_retry_ack"]),
        "first_delivery_after_s": float(moved[0] - back) if moved.size else float("inf"),
        "timeouts_after": int(to.sum()),
        "spurious_timeouts_after": int((to & (ev["spurious"] == 1)).sum()),
        "outage_drops": int(sta_rows[mobile]["drops_handover"]),
        "t_handover_s": t_ho,
        "mobile_before_bps": float(rates[mobile, before].mean()),
        "mobile_after_bps": mob_after,
        # The paper's "does not get in" (§4.1.3, §4.2): below the unhappy level (10 % of the
        # fair share) on average over the whole time after the handover, not only for 5 s.
        "mobile_starved": mob_after < 0.1 * fair_after,
        "mobile_near_ap1_bps": float(rates[mobile, near1].mean()) if has_near1 else float("nan"),
        "fair_share_near_ap1_bps": fair_near1,
        "mobile_total_bps": float(rates[mobile].mean()),
        "fair_share_after_bps": fair_after,
        "mobile_unhappy": any(f == len(ap2) - 1 for f, _, _ in found),
        "ap2_unhappy": len({f for f, _, _ in found}),
        "ap2_total_bps": float(rates[ap2][:, after].sum(axis=0).mean()),
        "cell_total_bps": float(rates.sum(axis=0).mean()),
        "series_t": t,
        "series_mobile": rates[mobile],
    }


def handover_runs(
    seeds: list[int],
    jobs: int | None,
    target_bps: float,
    normal: str = "newreno",
    channels: tuple[str, ...] = ("simulator", "testbed"),
    host_tcp: dict[str, Any] | None = None,
    **kw: Any,
) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """``channels`` x (normal TCP, QoS-TCP) on the moving terminal; ``normal`` is the
    congestion control of every normal-TCP host (background and moving), keyed as "newreno";
    ``host_tcp``: more keys of every host's TCP configuration (the QoS-TCP terminal's too)."""
    keys = [(ch, cc, sd) for ch in channels for cc in ("newreno", "qos_tcp") for sd in seeds]
    host = tcp(cc=normal, **(host_tcp or {}))
    cfgs = [
        handover_config(
            normal if cc == "newreno" else cc,
            channel=ch,
            seed=sd,
            target_bps=target_bps,
            tcp_cfg=host,
            **kw,
        )
        for ch, cc, sd in keys
    ]
    # A run is deterministic in its configuration: the sections that repeat a setting (the
    # sensitivity rows' baseline channel) reuse its measurement instead of running it again.
    digests = [json.dumps(c, sort_keys=True) for c in cfgs]
    todo = {d: c for d, c in zip(digests, cfgs, strict=True) if d not in _MEASURED}
    res = run_configs(list(todo.values()), jobs=jobs, columns=True)
    for (d, c), s in zip(todo.items(), res, strict=True):
        _MEASURED[d] = measure_handover(s, c)
    out: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for (ch, cc, _), d in zip(keys, digests, strict=True):
        out.setdefault((ch, cc), []).append(_MEASURED[d])
    return out


#: Handover measurements by configuration (JSON): small dicts, one per run made.
_MEASURED: dict[str, dict[str, Any]] = {}


def join_runs(
    seeds: list[int], jobs: int | None, target_bps: float, n: int = 7, join_s: float = 30.0
) -> dict[tuple[str, str], list[float]]:
    """The paper's late-joiner case without a handover (its §5/§6): ``n - 1`` normal-TCP stations
    on one AP, a last station joins at ``join_s`` with normal TCP or QoS-TCP. Returns the
    joiner's goodput over the last 50 s divided by the fair share, per channel and joiner."""
    d = join_detail(seeds, jobs, target_bps, n, join_s)
    return {k: [x["joiner_share"] for x in v] for k, v in d.items()}


def _join_measure(s: dict[str, Any], n: int, join_s: float) -> dict[str, Any]:
    """The joiner's goodput / fair share after ``join_s`` + 10 s, and whether an incumbent
    (a station that was there before the join) becomes unhappy after it (paper §6, Fig. 11)."""
    t, r = throughput_series(s["timeseries_table"], list(range(n)), 1.0)
    w = t > join_s + 10.0
    fair = r[:, w].sum(axis=0).mean() / n
    before = (t > join_s - 15.0) & (t <= join_s)
    inc_before = unhappy(t[before], r[:-1][:, before], fraction=0.1, min_s=5.0)
    inc_after = [f for f, _, _ in unhappy(t[w], r[:, w], fraction=0.1, min_s=5.0) if f < n - 1]
    ap = next(x for x in s["links"] if x.get("kind") == "wlan" and x.get("role") == "ap")
    ack_in = ap["drops_queue_ack"] + ap["tx_ack"]
    ev = s["events_table"]
    k_to = s["event_kinds"].index("timeout")
    return {
        "joiner_timeouts": int(((ev["kind"] == k_to) & (ev["flow"] == n - 1)).sum()),
        "ap_ack_drop": ap["drops_queue_ack"] / ack_in if ack_in else float("nan"),
        "joiner_share": float(r[-1, w].mean() / fair) if fair > 0 else 0.0,
        "incumbent_unhappy_before": bool(inc_before),
        "incumbent_unhappy_after": bool(inc_after),
        "cell_bps": float(r[:, w].sum(axis=0).mean()),
    }


def join_detail(
    seeds: list[int],
    jobs: int | None,
    target_bps: float,
    n: int = 7,
    join_s: float = 30.0,
    channels: tuple[str, ...] = ("simulator", "testbed"),
    joiners: tuple[str, ...] = ("newreno", "qos_tcp"),
    joiner_tcp: dict[str, Any] | None = None,
    weak_p: float | None = None,
    host_tcp: dict[str, Any] | None = None,
) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """:func:`join_runs` with the per-run measures of :func:`_join_measure`; the testbed channel
    is the devices' retry limit (:data:`TESTBED_RETRY`) without frame errors (no walk, so no
    distance term). ``joiner_tcp``: keys of the joiner's TCP configuration to change (the
    incumbents keep the hosts' defaults). ``weak_p``: on the testbed channel the first incumbent
    has independent frame errors with this probability per attempt (a slightly slower device,
    §5; bench/qos_variants.py). ``host_tcp``: the TCP configuration of every host (the hosts'
    defaults when ``None``; the joiner's changes and QoS-TCP go on top)."""
    keys = [(ch, cc, sd) for ch in channels for cc in joiners for sd in seeds]
    cfgs = []
    for ch, cc, sd in keys:
        c = uplink_config(
            n,
            duration_s=join_s + 60.0,
            seed=sd,
            retry_limit=7 if ch == "simulator" else TESTBED_RETRY,
            stagger_s=0.5,
            tcp_cfg=host_tcp,
        )
        if weak_p is not None and ch == "testbed":
            c["hops"][0]["stations"][0]["errors"] = {"kind": "bernoulli", "p": float(weak_p)}
        f = c["flows"][-1]
        f["start_ns"] = int(join_s * 1e9)
        f["tcp"] = {**f["tcp"], **(joiner_tcp or {})}
        if cc == "qos_tcp":
            f["tcp"] = {**f["tcp"], "cc": "qos_tcp", "qos_target_bps": int(target_bps)}
        cfgs.append(c)
    res = run_configs(cfgs, jobs=jobs, columns=True)
    out: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for (ch, cc, _), s in zip(keys, res, strict=True):
        out.setdefault((ch, cc), []).append(_join_measure(s, n, join_s))
    return out


_NO_STA = {"burst": {"p_gb": 0.0}}  # no per-station bursts
_INTF = {"mean_gap_s": 10.0, "mean_burst_ms": 200.0}
_FADES = {"mean_gap_s": 3.0, "mean_burst_ms": 50.0}  # each station's own fades
_DOWN = {"kind": "bernoulli", "p": 0.2}  # the AP's frames to a station, per attempt

#: Candidate testbed channels (label, normal TCP's congestion control, handover_config options).
TESTBED_GRID: list[tuple[str, str, dict[str, Any]]] = [
    (
        "cell interference 10 s / 200 ms, no per-station bursts, no fade",
        "newreno",
        {**_NO_STA, "fade_m": None, "interference": _INTF},
    ),
    (
        "cell interference 30 s / 1 s, no per-station bursts, no fade",
        "newreno",
        {**_NO_STA, "fade_m": None, "interference": {"mean_gap_s": 30.0, "mean_burst_ms": 1000.0}},
    ),
    ("cell interference 10 s / 200 ms, fade", "newreno", {**_NO_STA, "interference": _INTF}),
    ("weak AP2 station (frame error 0.2), fade", "newreno", {**_NO_STA, "weak_p": 0.2}),
    (
        "weak AP2 station + cell interference 10 s / 200 ms, fade",
        "newreno",
        {**_NO_STA, "weak_p": 0.2, "interference": _INTF},
    ),
    (
        "CUBIC hosts, cell interference 10 s / 200 ms, fade",
        "cubic",
        {**_NO_STA, "interference": _INTF},
    ),
    (
        "CWmin 31 (b/g BSS), per-station bursts + fade",
        "newreno",
        {"cw_min": 31, "burst": STATION_BURSTS},
    ),
    ("CWmin 31, fade only", "newreno", {**_NO_STA, "cw_min": 31}),
    # Each station's own fades in time (a Gilbert-Elliott channel per station link, errors
    # correlated over tens of ms): a fade outlasts the retry ladder and discards that station's
    # frames, the others carry on.
    ("station fades 3 s / 50 ms, fade", "newreno", {**_NO_STA, "fading": _FADES}),
    # The paper's AP transmitted at 10 % power (§4) and the stations' converters at full power:
    # the AP's frames to the stations fail more often than theirs to it.
    ("weak AP downlink (frame error 0.2), fade", "newreno", {**_NO_STA, "errors_down": _DOWN}),
    (
        "retry limit 7 + cell interference 10 s / 200 ms (diagnostic)",
        "newreno",
        {**_NO_STA, "fade_m": None, "interference": _INTF, "retry_limit": 7},
    ),
]


def _grid_row(h: dict[tuple[str, str], list[dict[str, Any]]]) -> dict[str, Any]:
    t, q = h[("testbed", "newreno")], h[("testbed", "qos_tcp")]
    t_after = _mean(t, "mobile_after_bps")
    return {
        "tcp_unhappy": float(np.mean([r["mobile_unhappy"] for r in t])),
        "qos_unhappy": float(np.mean([r["mobile_unhappy"] for r in q])),
        "tcp_after_bps": t_after,
        "qos_after_bps": _mean(q, "mobile_after_bps"),
        "ratio": _mean(q, "mobile_after_bps") / t_after if t_after > 0 else float("inf"),
        "qos_share_of_fair": _mean(q, "mobile_after_bps") / _mean(q, "fair_share_after_bps"),
        "ap2_ack_drop": _mean(t + q, "ap2_ack_drop"),
    }


def testbed_grid(
    seeds: list[int],
    jobs: int | None,
    target_bps: float,
    default: dict[tuple[str, str], list[dict[str, Any]]],
    clean5: dict[tuple[str, str], list[dict[str, Any]]],
    sim31: float | None = None,
) -> dict[str, dict[str, Any]]:
    """The testbed-channel candidates measured against the paper's testbed regime (normal TCP
    unhappy, QoS-TCP about the fair share, ratio many times), one row each; ``default`` and
    ``clean5`` are the default channel's and the error-free retry-5 channel's runs."""
    sim_q = float(np.mean([r["mobile_unhappy"] for r in default[("simulator", "qos_tcp")]]))
    rows = {
        "retry limit 5 + fade (default)": {**_grid_row(default), "sim_qos_unhappy": sim_q},
        "retry limit 5, no frame errors": {**_grid_row(clean5), "sim_qos_unhappy": sim_q},
    }
    for label, normal, kw in TESTBED_GRID:
        h = handover_runs(seeds, jobs, target_bps, normal=normal, channels=("testbed",), **kw)
        rows[label] = {**_grid_row(h), "sim_qos_unhappy": sim_q}
    # CWmin 31 applies to the simulator channel too (ns-2's default): does it keep that regime?
    if sim31 is None:
        h = handover_runs(seeds, jobs, target_bps, channels=("simulator",), cw_min=31)
        sim31 = float(np.mean([r["mobile_unhappy"] for r in h[("simulator", "qos_tcp")]]))
    for label in rows:
        if label.startswith("CWmin 31"):
            rows[label]["sim_qos_unhappy"] = sim31
    for r in rows.values():
        r["reproduces"] = bool(
            r["tcp_unhappy"] > 0.5
            and r["ratio"] >= 5
            and r["qos_share_of_fair"] >= 0.8
            and r["sim_qos_unhappy"] > 0.5
        )
    return rows


def grid_table(rows: dict[str, dict[str, Any]]) -> str:
    """The grid as a Markdown table."""
    out = [
        "| testbed channel | normal TCP unhappy | QoS-TCP unhappy | TCP after (Mbit/s) | "
        "QoS-TCP after (Mbit/s) | ratio | QoS-TCP / fair | AP2 ACK drop | "
        "simulator: QoS-TCP unhappy |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for k, r in rows.items():
        out.append(
            f"| {k} | {r['tcp_unhappy']:.2f} | {r['qos_unhappy']:.2f} | "
            f"{r['tcp_after_bps'] / 1e6:.2f} | {r['qos_after_bps'] / 1e6:.2f} | "
            f"{r['ratio']:.2f} | {r['qos_share_of_fair']:.2f} | {r['ap2_ack_drop']:.2f} | "
            f"{r['sim_qos_unhappy']:.2f} |"
        )
    return "\n".join(out)


# ---------------------------------------------------------------------------
# The reproduction
# ---------------------------------------------------------------------------


def _mean(rows: list[dict[str, Any]], key: str) -> float:
    return float(np.mean([r[key] for r in rows]))


def mac_vs_bianchi(report: Report, jobs: int | None, st: dict[str, Any]) -> None:
    """Part 0: the DCF cell's saturation throughput for 1..10 stations against Bianchi."""
    out = report.out_dir
    sat = saturation(list(range(1, 11)), jobs)
    worst = max(abs(g - m) / m for _, g, m in sat)
    report.check(
        "DCF saturation throughput vs Bianchi (1..10 stations), worst relative error",
        AtMost(5, kind="formula"),
        worst * 100,
        paper="Bianchi's model (not the paper's)",
        unit="%",
        note="validates tcplab's DCF against a published model; not a number of the paper, so "
        "counted with the formulas, not the predictions",
    )
    fig, ax = plots.figure()
    ax.plot([n for n, _, _ in sat], [g / 1e6 for _, g, _ in sat], "o-", label="tcplab DCF cell")
    ax.plot([n for n, _, _ in sat], [m / 1e6 for _, _, m in sat], "k--", label="Bianchi (2000)")
    ax.set_xlabel("saturated stations")
    ax.set_ylabel("saturation throughput (Mbit/s, IP payload)")
    ax.set_ylim(0, 35)
    ax.legend()
    report.figure(
        plots.save(fig, out / "bianchi.png"),
        "802.11g DCF saturation throughput, 1500-B packets, 54 Mbit/s: tcplab vs Bianchi's model",
    )
    report.data["saturation"] = sat


#: Frame-error onset and total loss of the indoor distance term (m from the associated AP): the
#: ``fade_m`` default of :func:`tcplab.scenario.wlan_configs.handover_config`, the moving
#: terminal's weakening signal near the cell edge (§4.1.3). Its onset was taken from the
#: outdoor Fig. 4; the indoor site has little interference (§4.1.1) and Fig. 5 prints no values,
#: so it is not calibrated.
FADE_M = (5.0, 15.0)
PAPER_FALL_M = 5.0  # Fig. 4 (outdoor): throughput falls about 5 m from the AP
#: The outdoor site's distance term, for every station (``fade_all``): there the other APs'
#: interference dominates (§4.1.1, Fig. 4's channel scan), so every station's frames fail more
#: the farther it is from its AP, from the AP on (onset 0 m). Total loss at 11 m is a
#: calibration: a lone terminal's throughput then halves at 5 m, Fig. 4's fall (measured, 3 seeds
#: each: total loss at 10, 11, 12 m halves it at about 4.6, 5.1, 6 m).
OUTDOOR_M = (0.0, 11.0)
#: handover_config options of the outdoor channel: the testbed channel (retry limit 5, no
#: per-station chain) with the outdoor distance term on every station.
OUTDOOR = {**TESTBED, "fade_m": OUTDOOR_M, "fade_all": True}


def distance_config(d_m: float, seed: int, channel: str, duration_s: float) -> dict[str, Any]:
    """One station alone on one AP at ``d_m`` metres, one bulk TCP upload (paper Figs. 4-5:
    single-terminal throughput by place). ``channel``: ``"simulator"`` (collisions only, retry
    limit 7, no distance term), ``"testbed"`` (the devices' retry limit :data:`TESTBED_RETRY`
    and the indoor distance term :data:`FADE_M`) or ``"outdoor"`` (retry limit 5 and the
    outdoor term :data:`OUTDOOR_M`)."""
    if channel not in ("simulator", "testbed", "outdoor"):
        raise ValueError(f"distance_config: unknown channel {channel!r}")
    tb = channel != "simulator"
    c = uplink_config(1, duration_s=duration_s, seed=seed, retry_limit=TESTBED_RETRY if tb else 7)
    sta = c["hops"][0]["stations"][0]
    sta["path"] = [{"t_ns": 0, "x": float(d_m), "y": 0.0}]
    if tb:
        d0, d1 = FADE_M if channel == "testbed" else OUTDOOR_M
        sta["distance_errors"] = {"d0_m": d0, "d1_m": d1}
    return c


def _params(quick: bool) -> dict[str, Any]:
    """Runs per experiment, where the confidence intervals need them (bench/reproduce_cost.py
    measures each section)."""
    if quick:
        return {
            "queues": [50, 265, 1000],
            "ns": list(range(2, 12)),
            "seeds": [1, 2, 3],
            "thr_seeds": [1, 2, 3],
            "dur": 50.0,
            "meas": 20.0,
            "ho_seeds": list(range(1, 9)),
            "grid_seeds": list(range(1, 5)),
            "dist_seeds": [1, 2],
        }
    return {
        "queues": [50, 265, 1000],
        "ns": list(range(2, 13)),
        "seeds": [1, 2, 3, 4, 5],
        # The paper's queue decides the threshold row: an unhappy terminal appears in a run with a
        # probability that rises with n, and 5 seeds put a 0.25 probability over the "most
        # seeds" line (3 of 5 at 6 stations; 6 of 24 with more seeds), so that queue gets 24.
        "thr_seeds": list(range(1, 25)),
        "dur": 60.0,
        "meas": 30.0,
        # 64: on seeds 1-16 alone the simulator channel kept QoS-TCP out in 13 of 16 seeds,
        # on 17-64 in 18 of 48 (and 7-9 of 16 on four more blocks of 16 seeds tried once):
        # 16 seeds made that row look firm (docs/papers.md §4).
        "ho_seeds": list(range(1, 65)),
        # The grid and the sensitivity rows are context (no verdict): as many seeds as --quick.
        "grid_seeds": list(range(1, 5)),
        "dist_seeds": [1, 2, 3],
    }


def distance(report: Report, jobs: int | None, st: dict[str, Any]) -> None:
    """Paper Figs. 4-5 (single-terminal throughput against the distance from the AP)."""
    p = _params(report.quick)
    ds = [1.0, 3.0, 5.0, 7.0, 9.0, 11.0, 13.0, 15.0]
    chans = ("simulator", "testbed", "outdoor")
    keys = [(ch, d, sd) for ch in chans for d in ds for sd in p["dist_seeds"]]
    cfgs = [distance_config(d, sd, ch, 15.0) for ch, d, sd in keys]
    res = run_configs(cfgs, jobs=jobs)
    got: dict[tuple[str, float], list[float]] = {}
    for (ch, d, _), s in zip(keys, res, strict=True):
        got.setdefault((ch, d), []).append(s["flows"][0]["goodput_bps"])
    curve = {ch: [float(np.mean(got[(ch, d)])) for d in ds] for ch in chans}

    def half_at(ch: str) -> float:
        v = np.asarray(curve[ch])
        return next((d for d, x in zip(ds, v, strict=True) if x < 0.5 * v[0]), float("inf"))

    st["half_indoor"] = half_at("testbed")
    report.check(
        "Fig. 4: single terminal, first distance where throughput falls below half its 1-m value",
        Within(PAPER_FALL_M, abs=2, kind="calibration"),
        half_at("outdoor"),
        unit="m",
        note=f"outdoor channel (retry limit 5, frame errors rising from {OUTDOOR_M[0]:g} m to "
        f"total loss at {OUTDOOR_M[1]:g} m); the {OUTDOOR_M[1]:g} m was fitted to this "
        "observation, so it is a calibration. The indoor testbed term (onset "
        f"{FADE_M[0]:g} m, total loss at {FADE_M[1]:g} m, the onset taken from this figure "
        f"before) halves the throughput only at {st['half_indoor']:g} m: with retry limit 5 a "
        "frame is lost only after 5 failed attempts",
        estimate=True,
    )
    fig, ax = plots.figure()
    for ch, style in (("simulator", "o--"), ("testbed", "s-"), ("outdoor", "^-")):
        lab = {"testbed": "testbed (indoor)", "outdoor": "outdoor"}.get(ch, ch)
        ax.plot(ds, np.asarray(curve[ch]) / 1e6, style, label=f"tcplab, {lab} channel")
    ax.axvspan(*FADE_M, color="0.9", zorder=0, label="indoor distance term (frame errors 0 → 1)")
    ax.axvline(PAPER_FALL_M, color="k", ls=":", lw=1, label="paper (outdoor Fig. 4): falls ~5 m")
    ax.set_xlabel("distance from the AP (m)")
    ax.set_ylabel(f"one uplink TCP alone (Mbit/s, mean of {len(p['dist_seeds'])} seeds)")
    ax.set_ylim(0, None)
    ax.legend(fontsize=8, loc="lower left")
    report.figure(
        plots.save(fig, report.out_dir / "distance.png"),
        "Figs. 4-5: one terminal alone, uplink TCP throughput by distance from the AP; the paper "
        "prints no values, only that outdoors it falls about 5 m from the AP (interference)",
    )
    report.data["distance"] = {"m": ds, **{f"{ch}_bps": v for ch, v in curve.items()}}


def unfairness(report: Report, jobs: int | None, st: dict[str, Any]) -> None:
    """Unhappy terminals vs stations and AP queue; the mechanism (ACKs overflow the AP)."""
    p = _params(report.quick)
    queues, ns, seeds, dur, meas = (p[k] for k in ("queues", "ns", "seeds", "dur", "meas"))
    # The paper measured the 265.5-packet buffer and the 6/7 threshold on its devices, whose
    # retry limit is 5: the sweep runs on that channel (before: retry limit 7, collisions only).
    others = [q for q in queues if q != PAPER_AP_QUEUE]
    sweep = unfairness_sweep(others, ns, seeds, jobs, dur, meas, retry_limit=TESTBED_RETRY)
    sweep[PAPER_AP_QUEUE] = unfairness_sweep(
        [PAPER_AP_QUEUE], ns, p["thr_seeds"], jobs, dur, meas, retry_limit=TESTBED_RETRY
    )[PAPER_AP_QUEUE]
    thr = {q: threshold(sweep[q]) for q in queues}
    # The same at Q = 265 with the per-station burst chain (sensitivity) and with ns-2's retry
    # limit 7 (the simulator channel): where each channel's threshold lies.
    ns_ctx = [n for n in ns if 5 <= n <= 9]
    chain = {"kind": "gilbert_elliott", **STATION_BURSTS}
    ctx = {
        "retry limit 5 + per-station bursts": unfairness_sweep(
            [PAPER_AP_QUEUE],
            ns_ctx,
            seeds,
            jobs,
            dur,
            meas,
            retry_limit=TESTBED_RETRY,
            errors=chain,
        )[PAPER_AP_QUEUE],
        "retry limit 7, collisions only (simulator channel)": unfairness_sweep(
            [PAPER_AP_QUEUE], ns_ctx, seeds, jobs, dur, meas
        )[PAPER_AP_QUEUE],
    }
    ctx_thr = {k: threshold(v) for k, v in ctx.items()}
    st["ctx_thr"] = ctx_thr
    t265 = thr.get(PAPER_AP_QUEUE)
    st["t265"] = t265
    report.check(
        "first unfair station count, AP queue 265",
        Within(PAPER_THRESHOLD, abs=0),
        t265 if t265 is not None else float("inf"),  # none up to the largest n tested
        unit="stations",
        source="§4: measured fair up to 6 stations, unfair from 7; 6 is fair, so exactly 7",
        note="unfair = an unhappy terminal (<10 % of fair share for ≥ 5 s) in most seeds; "
        "paper: fair up to 6, unfair from 7, measured on its devices (retry limit 5), so "
        "tcplab measures it on that channel. Disclosure: a 3-seed look at this threshold (7) "
        "was seen before the per-station burst chain left the default testbed channel; the "
        "reason kept is §6 (the bursts did not change long-term throughput, while the chain "
        "moves this threshold, next row)",
        estimate=True,
    )
    # What the threshold is read from: the share of runs (seeds) with an unhappy terminal.
    n_thr = len(p["thr_seeds"])
    p_unhappy = {
        n: mean_ci95([float(r["unhappy"] > 0) for r in sweep[PAPER_AP_QUEUE][n]]) for n in ns
    }
    st["p_unhappy"] = p_unhappy
    st["t265_first5"] = threshold({n: sweep[PAPER_AP_QUEUE][n][:5] for n in ns})
    p_txt = "; ".join(f"{n}: {m:.2f} ± {c:.2f}" for n, (m, c) in p_unhappy.items() if 4 <= n <= 9)
    st["p_unhappy_txt"] = p_txt
    report.check(
        f"runs with an unhappy terminal by station count, AP queue 265 ({n_thr} seeds)",
        Info("context: the measurement the threshold row is read from"),
        p_txt,
        paper="none up to 6, unfair from 7",
        note="share of seeds with an unhappy terminal in the last "
        f"{meas:.0f} s ± its 95 % interval; the threshold row takes the first n above one half "
        "(and the next n too)",
    )
    report.check(
        "first unfair station count at Q = 265 on the other channels (stations 5-9)",
        Info("context: what the channel does to the threshold"),
        "; ".join(f"{k}: {v if v is not None else '> 9'}" for k, v in ctx_thr.items()),
        paper="7 (devices)",
        note="the per-station chain's data losses keep every window small, so the AP never "
        "stays overflowing with ACKs: §6 says the bursts did not change long-term throughput",
    )
    ordered = [thr[q] if thr[q] is not None else max(ns) + 1 for q in queues]
    monotone = all(a <= b for a, b in itertools.pairwise(ordered)) and ordered[0] < ordered[-1]
    report.check(
        "threshold grows with the AP queue",
        Claim("non-decreasing in Q, smallest < largest", monotone),
        ", ".join(f"Q={q}: {thr[q] if thr[q] is not None else f'>{max(ns)}'}" for q in queues),
        paper="larger buffer → later",
        source="§2: the threshold depends on the AP buffer (no values)",
        estimate=True,
    )
    # mechanism at Q = 265, above the threshold
    rows_hi = [r for n in ns if t265 is not None and n >= t265 for r in sweep[PAPER_AP_QUEUE][n]]
    qa = sum(r["drops_queue_ack"] for r in rows_hi)
    qd = sum(r["drops_queue_data"] for r in rows_hi)
    share_ack = qa / (qa + qd) if qa + qd else float("nan")
    report.check(
        "AP queue drops that are TCP ACKs (unfair runs, Q = 265)",
        AtLeast(90, kind="construction"),
        share_ack * 100,
        paper="ACKs overflow the AP",
        unit="%",
        source="§2: the AP's buffer overflows with ACKs (no share given)",
        note="holds by construction: every station sends uplink, so the AP's own queue carries "
        "nothing but the TCP ACKs (and handshake segments) going down",
        estimate=True,
    )
    to = sum(r["timeouts"] for r in rows_hi)
    sp = sum(r["spurious_timeouts"] for r in rows_hi)
    report.check(
        "timeouts whose segment had reached the receiver (lost ACKs, not data)",
        Above(50),
        100 * sp / to if to else float("nan"),
        paper="ACK loss → timeouts",
        unit="%",
        source="§2: a small-window flow loses all its ACKs and times out; > 50 %: most of the "
        "timeouts",
        note=f"{sp} of {to} timeouts",
        estimate=True,
    )
    fig, axes = plots.figure(ncols=3, size=(5.0, 4.0))
    for q in queues:
        axes[0].plot(
            ns, [np.mean([r["jain"] for r in sweep[q][n]]) for n in ns], "o-", label=f"AP queue {q}"
        )
        axes[1].plot(
            ns,
            [np.mean([r["unhappy"] for r in sweep[q][n]]) for n in ns],
            "o-",
            label=f"AP queue {q}",
        )
    axes[0].set_xlabel("uplink TCP stations")
    axes[0].set_ylabel(f"Jain's index (last {meas:.0f} s, mean of seeds)")
    axes[0].set_ylim(0, 1.05)
    axes[0].legend(fontsize=8)
    axes[1].set_xlabel("uplink TCP stations")
    axes[1].set_ylabel("unhappy terminals (mean of seeds)")
    # The paper gives the threshold, not a count of unhappy terminals: a line, not a point.
    axes[1].axvline(
        PAPER_THRESHOLD, color="black", ls=":", lw=1.2, label="paper: unfair from 7 (Q=265)"
    )
    axes[1].legend(fontsize=8)
    acks = [np.mean([r["drops_queue_ack"] for r in sweep[PAPER_AP_QUEUE][n]]) / dur for n in ns]
    data = [np.mean([r["drops_queue_data"] for r in sweep[PAPER_AP_QUEUE][n]]) / dur for n in ns]
    axes[2].plot(ns, acks, "o-", label="TCP ACKs")
    axes[2].plot(ns, data, "s-", label="TCP data")
    axes[2].set_xlabel("uplink TCP stations")
    axes[2].set_ylabel("AP queue drops (packets/s), Q = 265")
    axes[2].legend(fontsize=8)
    report.figure(
        plots.save(fig, report.out_dir / "unfairness.png"),
        "Uplink TCP over one 802.11g AP, retry limit 5 (the paper's devices): fairness vs "
        "stations for several AP queues, "
        "and what the AP drops",
    )
    report.data["unfairness"] = {str(q): {str(n): sweep[q][n] for n in ns} for q in queues}
    report.data["thresholds"] = {str(q): thr[q] for q in queues}


def window_limited(report: Report, jobs: int | None, st: dict[str, Any]) -> None:
    """Window-limited hosts (64 KB, no window scaling): where the ACKs overflow the AP."""
    p = _params(report.quick)
    ns, seeds, dur, meas = (p[k] for k in ("ns", "seeds", "dur", "meas"))
    wl_cfg = tcp(rcv_buf=65535, window_scaling=False)
    wl = unfairness_sweep([PAPER_AP_QUEUE], ns, seeds, jobs, dur, meas, tcp_cfg=wl_cfg)[
        PAPER_AP_QUEUE
    ]
    onset = next(
        (n for n in ns if sum(r["drops_queue_ack"] > 0 for r in wl[n]) * 2 > len(wl[n])), None
    )
    predicted = ack_overflow_stations(PAPER_AP_QUEUE + 0.5, 65535 // 1460)
    report.check(
        "64-KB windows: first station count whose ACKs overflow the AP (Q = 265)",
        Within(PAPER_THRESHOLD, abs=0, kind="formula"),
        onset if onset is not None else float("inf"),
        unit="stations",
        source="§4: unfair from 7 stations with a 265.5-packet buffer",
        note=f"arithmetic of the configuration: n window-limited flows keep at most n·W "
        f"segments' ACKs at the AP, and n·W > Q gives {predicted}: 6·44 < 265.5 < 7·44",
        estimate=True,
    )
    wl_thr = threshold(wl)
    st.update(onset=onset, predicted=predicted, wl_thr=wl_thr)
    report.data["window_limited"] = {
        "overflow_onset": onset,
        "predicted": predicted,
        "unfair_threshold": wl_thr,
        "rows": {str(n): wl[n] for n in ns},
    }


def stations(report: Report, jobs: int | None, st: dict[str, Any]) -> None:
    """Per-station goodput over time at 7 stations, AP queue 265 (seed 1), unhappy spans."""
    from tcplab.campaign.sweep import run_config

    dur = _params(report.quick)["dur"]
    ex = run_config(
        uplink_config(
            7, ap_queue=PAPER_AP_QUEUE, duration_s=dur, seed=1, retry_limit=TESTBED_RETRY
        ),
        columns=True,
    )
    t_ex, r_ex = throughput_series(ex["timeseries_table"], list(range(7)), 1.0)
    joined = np.array([[tt > 2.0 * k + 1.0 for tt in t_ex] for k in range(7)])
    spans = unhappy(t_ex, r_ex, active=joined)
    # The unhappy spans in a panel of their own: drawn over the goodput axis they covered the
    # curves of the stations that sit near zero.
    fig, (ax, bars) = plots.figure(nrows=2, size=(7.5, 2.6))
    for k in range(7):
        ax.plot(t_ex, r_ex[k] / 1e6, lw=1, label=f"station {k}")
    for k, a, b in spans:
        bars.broken_barh([(a, b - a)], (k - 0.35, 0.7), color=f"C{k}")
    ax.set_ylabel("goodput (Mbit/s, 1-s bins)")
    ax.legend(fontsize=7, ncol=4)
    bars.set_xlim(ax.get_xlim())
    bars.set_yticks(range(7), [f"station {k}" for k in range(7)], fontsize=7)
    bars.set_ylim(-0.6, 6.6)
    bars.set_ylabel("unhappy spans")
    bars.set_xlabel("time (s)  (station k starts at 2k s; unhappy: < 10 % of fair share)")
    report.figure(
        plots.save(fig, report.out_dir / "stations.png"),
        "7 uplink TCP stations, AP queue 265, retry limit 5 (the paper's devices): per-station "
        "goodput over time (seed 1)",
    )
    report.data["example_unhappy_spans"] = spans


TARGET_BPS = 4e6  # QoS-TCP's target rate, about the fair share at AP2


def handover(report: Report, jobs: int | None, st: dict[str, Any]) -> None:
    """The handover in both channel regimes (paper Figs. 6-9): the checks of §4-5."""
    ho_seeds = _params(report.quick)["ho_seeds"]
    ho = handover_runs(ho_seeds, jobs, TARGET_BPS, **TESTBED)
    st.update(ho=ho, ho_seeds=ho_seeds)
    for (ch, cc), rows in sorted(ho.items()):
        report.data[f"handover/{ch}/{cc}"] = [
            {k: v for k, v in r.items() if not k.startswith("series")} for r in rows
        ]
    sim_q = ho[("simulator", "qos_tcp")]
    tb_q = ho[("testbed", "qos_tcp")]
    tb_t = ho[("testbed", "newreno")]
    # Shares of seeds are means of 0/1 per seed: their CI is the Student-t interval of those.
    # (The simulator channel's "QoS-TCP unhappy" claim is judged once, with both CWmin values,
    # in simulator_cwmin31.)
    # §4.1.3 says QoS-TCP holds about the fair share everywhere but around the handover (where
    # the signal weakens): at AP1 before the walk reaches the fade, and at AP2 after it.
    shares = [
        ratio_ci95(
            [r["mobile_near_ap1_bps"] for r in tb_q], [r["fair_share_near_ap1_bps"] for r in tb_q]
        ),
        ratio_ci95(
            [r["mobile_after_bps"] for r in tb_q], [r["fair_share_after_bps"] for r in tb_q]
        ),
    ]
    report.check(
        "testbed channel: QoS-TCP / fair share at AP1 (before the cell edge) and at AP2 (after "
        "the handover)",
        Within(1.0, abs=0.2),
        [round(m, 3) for m, _ in shares],
        ci=[h for _, h in shares],
        paper="≈ 1 (secures about the fair share, except around the handover)",
        source="§4.1.3: 'apart from around the handover, where the signal weakens, it secures "
        "about the fair share' (fair-share 程度), so both APs; 'about' read as ±20 %",
        note="AP1: from 5 s until the walk is 5 m from AP1 (the distance term's onset), fair "
        "share of AP1's 3 stations; AP2: from 5 s after re-association, fair share of its 7. "
        "Above its target (4 Mbit/s) tcplab's QoS-TCP halves as a standard TCP but not below "
        "the target window (docs/algorithms.md §5.5), so at AP2, whose fair share is below "
        "the target, the row mostly reads that setting; one miss misses",
    )
    ratio, ratio_ci = ratio_ci95(
        [r["mobile_after_bps"] for r in tb_q], [r["mobile_after_bps"] for r in tb_t]
    )
    # "about 20 times": within a factor 2 of 20 (10 … 40).
    report.check(
        "testbed channel: QoS-TCP / normal TCP goodput after handover",
        Factor(PAPER_RATIO, 2),
        ratio,
        ci=ratio_ci,
        paper="≈ 20",
        unit="x",
        source="§4.1.3: 'about 20 times' (約 20 倍); x2: the denominator is a starving flow's "
        "rate, which one backed-off RTO more or less moves by that much",
    )
    report.check(
        "testbed channel: normal TCP terminal does not get in after handover (share of seeds)",
        Above(0.5),
        None,
        samples=[float(r["mobile_starved"]) for r in tb_t],
        paper="yes",
        source="§4.1.3: normal TCP 'does not cut into the existing communication' and becomes "
        "the unhappy terminal after handover; > 0.5: in most seeds",
        note="a seed counts when the terminal's goodput over the whole time after the handover "
        "stays below the unhappy level (10 % of AP2's fair share); seeds with at least one 5-s "
        f"stretch below it: {np.mean([r['mobile_unhappy'] for r in tb_t]):.2f}",
    )
    # §5 (Fig. 9) and §7: "合計スループットに約 12 倍の差" — the QoS-TCP terminal's total
    # throughput (over the whole experiment) differs about 12x between ns-2 and the testbed.
    gap, gap_ci = ratio_ci95(
        [r["mobile_total_bps"] for r in tb_q], [r["mobile_total_bps"] for r in sim_q]
    )
    report.check(
        "Fig. 9: the QoS-TCP terminal's total throughput (whole run), testbed / simulator channel",
        Factor(PAPER_SIM_VS_TESTBED, 2),
        gap,
        ci=gap_ci,
        paper="≈ 12",
        unit="x",
        source="§5: 'a difference of about 12 times' (約 12 倍); x2 as for the 20x row",
        note="the paper (§5, Fig. 9; §7): 'a difference of about 12x in total throughput' "
        "between its ns-2 result and the indoor testbed for the moving QoS-TCP terminal, "
        "'where the testbed secures bandwidth'; tcplab: the moving QoS-TCP terminal's goodput "
        "over the whole run (before and after the handover), testbed / simulator channel",
    )
    # The other window: the time after the handover only, where §5 places the difference (the
    # unhappy-terminal phenomenon) and §7's "where the testbed secures bandwidth" applies.
    after, after_ci = ratio_ci95(
        [r["mobile_after_bps"] for r in tb_q], [r["mobile_after_bps"] for r in sim_q]
    )
    sim_zero = sum(bool(r["mobile_starved"]) for r in sim_q)
    st.update(gap_after=after, gap_after_ci=after_ci, gap_after_zero=sim_zero)
    report.check(
        "the other window for Fig. 9's 12x: the time after the handover only, testbed / simulator",
        Info("context: would this window decide the row?"),
        after,
        ci=after_ci,
        unit="x",
        note=f"from 5 s after re-association to the end of the run; {sim_zero} of {len(sim_q)} "
        "simulator seeds stay below the unhappy level there and the rest get the fair share "
        "or more, so the "
        "interval is wider than the row's band (6 … 24): this window would leave the row "
        "undecided, it would not make it hold",
    )
    cell, cell_ci = ratio_ci95(
        [r["cell_total_bps"] for r in tb_q], [r["cell_total_bps"] for r in sim_q]
    )
    report.check(
        "the other reading of 'total throughput': all 9 stations together, testbed / simulator",
        Info("context: rules out this reading"),
        cell,
        ci=cell_ci,
        unit="x",
        note="the cells carry about the same total on both channels, so the paper's 12x can only "
        "be the QoS-TCP terminal's own total",
    )
    # Fig. 6 (outdoor walk): "hardly any difference from TCP", on the outdoor site's own
    # channel (§4.1.1-4.1.2: interference from the site's other APs dominates, throughput falls
    # about 5 m from the AP): retry limit 5 and the calibrated distance term on every station.
    od = handover_runs(ho_seeds, jobs, TARGET_BPS, channels=("testbed",), **OUTDOOR)
    od_q, od_t = od[("testbed", "qos_tcp")], od[("testbed", "newreno")]
    st["outdoor"] = {"qos_tcp": od_q, "newreno": od_t}
    for cc, rows in (("newreno", od_t), ("qos_tcp", od_q)):
        report.data[f"handover/outdoor/{cc}"] = [
            {k: v for k, v in r.items() if not k.startswith("series")} for r in rows
        ]
    walk, walk_ci = ratio_ci95(
        [r["mobile_total_bps"] for r in od_q], [r["mobile_total_bps"] for r in od_t]
    )
    od_before = _mean(od_q, "mobile_before_bps") / _mean(od_t, "mobile_before_bps")
    od_after = _mean(od_q, "mobile_after_bps") / _mean(od_t, "mobile_after_bps")
    st.update(od_before=od_before, od_after=od_after)
    report.check(
        "Fig. 6 (outdoor walk): moving QoS-TCP / normal TCP, goodput over the whole run",
        Factor(1.0, 1.25),
        walk,
        ci=walk_ci,
        paper="≈ 1 (hardly any difference)",
        unit="x",
        source="§4.1.2: 'hardly any difference from TCP' (差もほとんどない); read as ±25 %",
        note="outdoor channel: retry limit 5 and every station's frames failing more the farther "
        f"it is from its AP ({OUTDOOR_M[0]:g} m → total loss at {OUTDOOR_M[1]:g} m, Fig. 4's "
        f"calibration); QoS-TCP / TCP before the handover {od_before:.2f}, after it "
        f"{od_after:.2f} (see 'Fig. 6 on the outdoor channel')",
    )
    report.check(
        "outdoor channel: AP2's TCP-ACK drop share and normal TCP kept out after the handover "
        "(share of seeds)",
        Info("context: does the outdoor channel keep AP2 overflowing?"),
        f"{_mean(od_t + od_q, 'ap2_ack_drop'):.2f} / "
        f"{np.mean([r['mobile_starved'] for r in od_t]):.2f}",
        note="indoor testbed channel: "
        f"{_mean(tb_t + tb_q, 'ap2_ack_drop'):.2f} / "
        f"{np.mean([r['mobile_starved'] for r in tb_t]):.2f}"
        "; the background stations' own frame errors at 2 m from their AP discard TCP data at "
        "the retry limit, so every window stays small and AP2 does not overflow with ACKs",
    )


def mechanism(report: Report, jobs: int | None, st: dict[str, Any]) -> None:
    """How full AP2's queue is against what the moving terminal gets (mechanism.png)."""
    ho = st["ho"]
    tb_t = ho[("testbed", "newreno")]
    drop_sim = _mean(ho[("simulator", "newreno")] + ho[("simulator", "qos_tcp")], "ap2_ack_drop")
    drop_tb = _mean(tb_t + ho[("testbed", "qos_tcp")], "ap2_ack_drop")
    report.check(
        "AP2 queue: share of TCP ACKs dropped after the handover, simulator → testbed channel",
        Info("mechanism, context"),
        f"{drop_sim:.2f} → {drop_tb:.2f}",
        paper="AP 'always overflowing with ACKs' (unfair from 7 stations, measured on the testbed)",
        note="retry limit 5 turns runs of collisions into data losses (and the fade near the "
        "cell edge adds more): every window shrinks now and then, which unloads AP2",
    )
    rd_sim, rd_tb = (
        _mean(ho[(ch, "newreno")] + ho[(ch, "qos_tcp")], "ap2_bg_retry_data_per_min")
        for ch in ("simulator", "testbed")
    )
    report.check(
        "AP2's background stations: TCP data frames discarded at the retry limit, per station "
        "and minute, simulator → testbed channel",
        Info("mechanism, context"),
        f"{rd_sim:.1f} → {rd_tb:.1f}",
        paper="rare in ns-2 (collisions only, retry limit 7); frequent on the devices (§6)",
        note="whole run; these stations stay at 2 m from AP2 (no distance term), so every "
        "discard is a run of collisions reaching the retry limit (7 or 5 attempts)",
    )
    st.update(rd_sim=rd_sim, rd_tb=rd_tb)
    share_sim, share_tb = (
        _mean(ho[(ch, "newreno")] + ho[(ch, "qos_tcp")], "ap2_tx_share")
        for ch in ("simulator", "testbed")
    )
    pred = [(1 - d) / (2 - d) for d in (drop_sim, drop_tb)]
    n_ap2 = 7
    report.check(
        "AP2's share of the frames sent by AP2 and its background stations, simulator → testbed "
        "channel",
        Info("mechanism, context"),
        f"{share_sim:.2f} → {share_tb:.2f}",
        paper=f"DCF: 1/(n+1) = {1 / (n_ap2 + 1):.3f} for a backlogged AP among {n_ap2} stations",
        note=f"a backlogged AP gets a station's share (tests/wlan.rs, "
        f"a_backlogged_ap_gets_a_stations_share); AP2 gets more because its stations are often "
        f"window-limited with nothing queued, and with an ACK per segment its share follows from "
        f"the ACKs it drops, d: (1 - d)/(2 - d) = {pred[0]:.2f} → {pred[1]:.2f} "
        f"(see 'Why AP2's stations are window-limited')",
    )
    st.update(share_sim=share_sim, share_tb=share_tb)
    to_tb = sum(r["timeouts_after"] for r in tb_t)
    sp_tb = sum(r["spurious_timeouts_after"] for r in tb_t)
    entered = float(np.mean([r["first_delivery_after_s"] < 5.0 for r in tb_t]))
    report.check(
        "testbed channel, normal TCP: first delivery within 5 s of re-association (share of seeds)",
        Info("mechanism, context"),
        entered,
        paper="does not get in",
        note=f"{sp_tb} of {to_tb} timeouts after re-association spurious (ACK lost at AP2)",
    )
    st.update(drop_sim=drop_sim, drop_tb=drop_tb, to_tb=to_tb, sp_tb=sp_tb, entered=entered)
    fig, ax = plots.figure(size=(6.0, 4.2))
    for (ch, cc), (mk, col) in {
        ("simulator", "newreno"): ("o", "C0"),
        ("simulator", "qos_tcp"): ("o", "C1"),
        ("testbed", "newreno"): ("s", "C0"),
        ("testbed", "qos_tcp"): ("s", "C1"),
    }.items():
        rows = ho[(ch, cc)]
        ax.scatter(
            [r["ap2_ack_drop"] for r in rows],
            [r["mobile_after_bps"] / r["fair_share_after_bps"] for r in rows],
            marker=mk,
            facecolors=col if ch == "testbed" else "none",
            edgecolors=col,
            label=f"{'TCP' if cc == 'newreno' else 'QoS-TCP'}, {ch} channel",
        )
    ax.axhline(0.1, color="grey", lw=0.8, ls=":")
    ax.set_xlabel("AP2: share of TCP ACKs dropped at its queue after the handover")
    ax.set_ylabel("moving terminal after handover / fair share at AP2")
    ax.legend(fontsize=8, loc="center")  # the empty gap between the two channels' clusters
    report.figure(
        plots.save(fig, report.out_dir / "mechanism.png"),
        "Each handover run (seed): how full AP2's queue is vs what the moving terminal gets; "
        "dotted: the unhappy level (10 % of the fair share)",
    )


def handover_figure(report: Report, jobs: int | None, st: dict[str, Any]) -> None:
    """The moving terminal over time (cumulative in-order delivery) and after the handover."""
    ho, ho_seeds = st["ho"], st["ho_seeds"]
    fig, axes = plots.figure(ncols=2, size=(6.0, 4.2))
    # Goodput is in-order delivery (the cumulative ACK). A hole whose retransmission or ACK is
    # lost stalls it for several backed-off RTOs while the receiver keeps the SACKed data
    # behind the hole (4 MiB autotuned window); the repair releases all of it at once. In
    # 1-s rate bins that drew as seconds of zero and then a 28 Mbit/s spike, a rate the link
    # never carried; the cumulative delivery draws the same data as a flat stretch and a step.
    for (ch, cc), style in {
        ("simulator", "newreno"): "C0--",
        ("simulator", "qos_tcp"): "C1--",
        ("testbed", "newreno"): "C0-",
        ("testbed", "qos_tcp"): "C1-",
    }.items():
        r = ho[(ch, cc)][0]
        t = np.asarray(r["series_t"])
        cum = np.cumsum(np.asarray(r["series_mobile"]) * np.diff(t, prepend=0.0)) / 8e6
        name = "TCP" if cc == "newreno" else "QoS-TCP"
        axes[0].plot(t, cum, style, lw=1.2, label=f"{name}, {ch} channel")
    t_ho = ho[("testbed", "qos_tcp")][0]["t_handover_s"]
    axes[0].axvline(t_ho, color="grey", lw=0.8)
    axes[0].set_xlabel("time (s)  (walk AP1 → AP2 from 20 s to 60 s; grey: handover)")
    axes[0].set_ylabel("moving terminal: data delivered in order (MB, seed 1)")
    axes[0].legend(fontsize=8, loc="upper left")
    labels, vals, fair = [], [], []
    for ch in ("simulator", "testbed"):
        for cc in ("newreno", "qos_tcp"):
            labels.append(f"{'TCP' if cc == 'newreno' else 'QoS-TCP'}\n{ch}")
            vals.append(_mean(ho[(ch, cc)], "mobile_after_bps") / 1e6)
            fair.append(_mean(ho[(ch, cc)], "fair_share_after_bps") / 1e6)
    x = np.arange(len(labels))
    axes[1].bar(x, vals, color=["C0", "C1", "C0", "C1"], label="moving terminal after handover")
    axes[1].hlines(fair, x - 0.35, x + 0.35, colors="k", label="fair share at AP2")
    # The paper gives ratios, not rates: QoS-TCP ≈ the fair share, normal TCP ≈ 1/20 of
    # QoS-TCP. Drawn on the testbed bars, placed with tcplab's fair share there.
    fair_tb = fair[labels.index("QoS-TCP\ntestbed")]
    plots.mark_paper(
        axes[1],
        [x[labels.index("QoS-TCP\ntestbed")], x[labels.index("TCP\ntestbed")]],
        [fair_tb, fair_tb / PAPER_RATIO],
        label="paper (testbed): QoS-TCP ≈ fair share, TCP ≈ 1/20 of it",
    )
    axes[1].set_title("relative to tcplab's fair share at AP2 (the paper gives ratios)", fontsize=9)
    axes[1].set_xticks(x, labels, fontsize=8)
    axes[1].set_ylabel(f"goodput after handover (Mbit/s, mean of {len(ho_seeds)} seeds)")
    axes[1].set_ylim(0, max(max(vals), max(fair)) * 1.35)
    axes[1].legend(fontsize=7, loc="upper left")
    report.figure(
        plots.save(fig, report.out_dir / "handover.png"),
        "Handover from AP1 (2 background stations) to AP2 (6): the moving terminal with TCP or "
        "QoS-TCP (target 4 Mbit/s); paper: testbed QoS-TCP about the fair share, TCP 1/20 of it. "
        "Left: data delivered in order over time (slope = goodput); a flat stretch followed by "
        "a step is a stall of several backed-off RTOs whose repair releases the data the "
        "receiver held behind the hole (drawn as 1-s rates, it looked like seconds of zero and "
        "then a 28 Mbit/s spike)",
    )


def sensitivity(report: Report, jobs: int | None, st: dict[str, Any]) -> None:
    """The handover with the frames held over the outage, CUBIC hosts, no frame errors."""
    ho, seeds = st["ho"], _params(report.quick)["grid_seeds"]
    held = handover_runs(seeds, jobs, TARGET_BPS, handover_flush=False, **TESTBED)
    cub = handover_runs(seeds, jobs, TARGET_BPS, normal="cubic", **TESTBED)
    clean5 = handover_runs(seeds, jobs, TARGET_BPS, burst={"p_gb": 0.0}, fade_m=None)
    bursts = handover_runs(seeds, jobs, TARGET_BPS, channels=("testbed",), burst=STATION_BURSTS)

    def _ratio(h: dict[tuple[str, str], list[dict[str, Any]]]) -> float:
        t_ = _mean(h[("testbed", "newreno")], "mobile_after_bps")
        return _mean(h[("testbed", "qos_tcp")], "mobile_after_bps") / t_ if t_ > 0 else float("inf")

    sim_default = ho[("simulator", "qos_tcp")]
    sens = {
        "frames lost during the outage (default)": ho,
        "frames held over the outage (before)": held,
        "CUBIC hosts, frames lost": cub,
        "retry limit 5, no frame errors": clean5,
        "per-station bursts + fade (the testbed channel before)": bursts,
    }
    rows = {
        k: {
            "ratio": _ratio(h),
            "tcp_unhappy": float(np.mean([r["mobile_unhappy"] for r in h[("testbed", "newreno")]])),
            "qos_unhappy": float(np.mean([r["mobile_unhappy"] for r in h[("testbed", "qos_tcp")]])),
            # (the simulator channel has no burst chain: the default runs where not run again)
            "sim_qos_unhappy": float(
                np.mean([r["mobile_unhappy"] for r in h.get(("simulator", "qos_tcp"), sim_default)])
            ),
            "ap2_ack_drop_testbed": _mean(
                h[("testbed", "newreno")] + h[("testbed", "qos_tcp")], "ap2_ack_drop"
            ),
            "tcp_per_seed": [r["mobile_after_bps"] for r in h[("testbed", "newreno")]],
            "qos_per_seed": [r["mobile_after_bps"] for r in h[("testbed", "qos_tcp")]],
        }
        for k, h in sens.items()
    }
    report.data["handover_sensitivity"] = rows
    st.update(sens_rows=rows, clean5=clean5)


def simulator_cwmin31(report: Report, jobs: int | None, st: dict[str, Any]) -> None:
    """ns-2's 802.11 default CWmin is 31: the simulator channel with it, as a row of its own."""
    h = handover_runs(st["ho_seeds"], jobs, TARGET_BPS, channels=("simulator",), cw_min=31)
    rows = h[("simulator", "qos_tcp")]
    st["sim31"] = float(np.mean([r["mobile_unhappy"] for r in rows]))
    st["sim31_starved"] = float(np.mean([r["mobile_starved"] for r in rows]))
    # One claim (ns-2: QoS-TCP becomes the unhappy terminal), judged once on both CWmin
    # values the simulator channel can have: 802.11g's ERP 15 and ns-2's default 31.
    both = [
        mean_ci95([float(r["mobile_starved"]) for r in rs])
        for rs in (st["ho"][("simulator", "qos_tcp")], rows)
    ]
    report.check(
        "simulator channel: QoS-TCP terminal does not get in after handover (share of seeds), "
        "CWmin 15 and ns-2's 31",
        Above(0.5),
        [round(m, 3) for m, _ in both],
        ci=[h for _, h in both],
        paper="yes (ns-2, Fig. 8)",
        source="§4.2: in ns-2 QoS-TCP 'cannot cut into the existing communication' and itself "
        "becomes the unhappy terminal; > 0.5: in most seeds",
        note="collisions only, retry limit 7; 802.11g's ERP CWmin 15, then ns-2's default CWmin "
        "31 (same seeds); a seed counts when the terminal's goodput over the whole time after "
        "the handover stays below 10 % of AP2's fair share; one miss misses",
    )
    report.data["handover/simulator_cwmin31/qos_tcp"] = [
        {k: v for k, v in r.items() if not k.startswith("series")} for r in rows
    ]


def grid(report: Report, jobs: int | None, st: dict[str, Any]) -> None:
    """Candidate testbed channels against the paper's testbed regime (a search, context)."""
    seeds = _params(report.quick)["grid_seeds"]
    g = testbed_grid(seeds, jobs, TARGET_BPS, st["ho"], st["clean5"], sim31=st["sim31"])
    report.data["handover_testbed_grid"] = g
    n_repro = sum(r["reproduces"] for r in g.values())
    # What the weak downlink does to the unfairness threshold (Q = 265, stations 5-7).
    p = _params(report.quick)
    down = unfairness_sweep(
        [PAPER_AP_QUEUE],
        [5, 6, 7],
        p["seeds"],
        jobs,
        p["dur"],
        p["meas"],
        retry_limit=TESTBED_RETRY,
        errors_down=_DOWN,
    )[PAPER_AP_QUEUE]
    down_unfair = {n: float(np.mean([r["unhappy"] > 0 for r in rows])) for n, rows in down.items()}
    report.data["weak_downlink_unhappy_runs"] = down_unfair
    # Both together, on the handover's seeds (4 seeds cannot tell this row from the regime).
    h = handover_runs(
        st["ho_seeds"],
        jobs,
        TARGET_BPS,
        channels=("testbed",),
        **{**_NO_STA, "errors_down": _DOWN, "fading": _FADES},
    )
    both = _grid_row(h)
    both["tcp_starved"] = float(np.mean([r["mobile_starved"] for r in h[("testbed", "newreno")]]))
    report.data["weak_downlink_and_station_fades"] = both
    st.update(grid=g, n_repro=n_repro, down_unfair=down_unfair, down_fades=both)
    report.check(
        "testbed-channel candidates reproducing the testbed regime (rows of the grid)",
        Info("search over open settings, context"),
        f"{n_repro} of {len(g)}",
        paper="bursts make QoS-TCP win, normal TCP starve",
        note="TCP unhappy > 0.5, ratio ≥ 5, QoS-TCP ≥ 0.8 fair, simulator regime kept",
    )


def late_joiner(report: Report, jobs: int | None, st: dict[str, Any]) -> None:
    """The paper's §5-6 without a handover: a 7th station joins 6 normal-TCP stations 30 s late,
    with normal TCP (it becomes unhappy) or QoS-TCP (an incumbent becomes unhappy, Fig. 11)."""
    join = join_detail(st["ho_seeds"], jobs, TARGET_BPS)
    report.data["late_joiner"] = {f"{ch}/{cc}": v for (ch, cc), v in join.items()}
    share = {k: [r["joiner_share"] for r in v] for k, v in join.items()}
    j_tcp = float(np.mean(share[("testbed", "newreno")]))
    j_q = float(np.mean(share[("testbed", "qos_tcp")]))
    st.update(
        j_tcp=j_tcp,
        j_q=j_q,
        join_drop=_mean(join[("testbed", "newreno")], "ap_ack_drop"),
        join_to=_mean(join[("testbed", "newreno")], "joiner_timeouts"),
    )
    # §5: "a terminal that joins later becomes the unhappy terminal" (normal TCP joining a
    # cell of normal TCPs): unhappy = below 10 % of the fair share, tcplab's definition.
    report.check(
        "testbed channel, no handover: a late 7th normal-TCP station's goodput / fair share",
        Below(0.1),
        None,
        samples=share[("testbed", "newreno")],
        paper="unhappy (< 0.1 of fair)",
        source="§6: a normal TCP made to join later starts from window 1 with no ssthresh "
        "advantage, very likely loses the race to grow its window and becomes unhappy; < 0.1: "
        "tcplab's unhappy level (the paper gives none)",
        note=f"a miss: tcplab's late normal-TCP joiner gets {j_tcp:.2f}x the fair share "
        f"({_mean(join[('testbed', 'newreno')], 'joiner_timeouts'):.1f} timeouts per joiner, "
        "mean of seeds). The AP drops only "
        f"{_mean(join[('testbed', 'newreno')], 'ap_ack_drop'):.0%} of the ACKs (whole run), "
        "so a window-1 retransmission's ACK gets through within a few tries; the joiner's start "
        "is not the cause (next row). See 'Where tcplab differs'",
    )
    # The paper's own joiner (§6): "window at its initial value 1", "no ssthresh advantage".
    # Bound it from below: one segment and ssthresh 2 segments (RFC 5681's least), so the
    # joiner leaves slow start at once and grows by one segment per round trip.
    mss = int(TCP_DEFAULTS["mss"])
    paper_joiner = join_detail(
        st["ho_seeds"],
        jobs,
        TARGET_BPS,
        channels=("testbed",),
        joiners=("newreno",),
        joiner_tcp={"initial_window_bytes": mss, "initial_ssthresh": 2 * mss},
    )[("testbed", "newreno")]
    report.data["late_joiner_window1"] = paper_joiner
    pj = [r["joiner_share"] for r in paper_joiner]
    st.update(j_w1=float(np.mean(pj)), j_w1_to=_mean(paper_joiner, "joiner_timeouts"))
    report.check(
        "the same late normal-TCP joiner with window 1 and ssthresh 2 segments: goodput / "
        "fair share",
        Info("context: is the joiner's start what tcplab lacks?"),
        None,
        samples=pj,
        note="the paper's joiner as §6 words it ('window at its initial value 1', 'no ssthresh "
        "advantage'), bounded from below: initial window 1 segment, ssthresh 2 segments; the "
        f"incumbents unchanged. It gets {np.mean(pj):.2f}x the fair share "
        f"({_mean(paper_joiner, 'joiner_timeouts'):.1f} timeouts per joiner; AP ACK drop "
        f"{_mean(paper_joiner, 'ap_ack_drop'):.0%}): the joiner's start does not keep it out",
    )
    report.check(
        "testbed channel, no handover: a late 7th QoS-TCP station's goodput / fair share",
        Info("context: the paper states no number"),
        None,
        samples=share[("testbed", "qos_tcp")],
        note=f"normal TCP {j_tcp:.2f}, QoS-TCP {j_q:.2f}",
    )
    # §6 (Fig. 11): normal TCPs in a fair state, a QoS-TCP joins, "one of the normal TCPs
    # already communicating becomes the unhappy terminal" (on the testbed).
    inc = [float(r["incumbent_unhappy_after"]) for r in join[("testbed", "qos_tcp")]]
    report.check(
        "Fig. 11 (testbed): an incumbent normal-TCP station becomes unhappy after a QoS-TCP "
        "station joins (share of seeds)",
        Above(0.5),
        None,
        samples=inc,
        paper="yes (one of the incumbents)",
        source="§5/Fig. 11: a slower incumbent becomes unhappy when QoS-TCP joins; > 0.5: in "
        "most seeds",
        note="6 normal-TCP stations (fair: no one unhappy in the 15 s before the join in "
        f"{np.mean([not r['incumbent_unhappy_before'] for r in join[('testbed', 'qos_tcp')]]):.0%}"
        " of the seeds), a QoS-TCP station joins at 30 s; unhappy = < 10 % of the fair share "
        "for ≥ 5 s after the join",
    )
    inc_t = [float(r["incumbent_unhappy_after"]) for r in join[("testbed", "newreno")]]
    inc_s = [float(r["incumbent_unhappy_after"]) for r in join[("simulator", "qos_tcp")]]
    st.update(inc_q=float(np.mean(inc)), inc_t=float(np.mean(inc_t)))
    jq = join[("testbed", "qos_tcp")]
    st["inc_before_q"] = sum(bool(r["incumbent_unhappy_before"]) for r in jq)
    st["inc_after_fair_q"] = sum(
        bool(r["incumbent_unhappy_after"]) for r in jq if not r["incumbent_unhappy_before"]
    )
    report.check(
        "the same with a normal-TCP joiner / on the simulator channel (share of seeds)",
        Info("context: incumbents unhappy without QoS-TCP, or with retry limit 7"),
        f"{np.mean(inc_t):.2f} / {np.mean(inc_s):.2f}",
        note="paper: with a normal-TCP joiner the joiner, not an incumbent, becomes unhappy",
    )
    fig, ax = plots.figure(size=(6.0, 4.0))
    labels, means, cis = [], [], []
    for ch in ("simulator", "testbed"):
        for cc in ("newreno", "qos_tcp"):
            m, h = mean_ci95(share[(ch, cc)])
            labels.append(f"{'TCP' if cc == 'newreno' else 'QoS-TCP'} joins\n{ch}")
            means.append(m)
            cis.append(0.0 if np.isnan(h) else h)
    x = np.arange(len(labels))
    ax.bar(
        x, means, yerr=cis, capsize=3, color=["C0", "C1", "C0", "C1"], label="tcplab (± 95 % CI)"
    )
    ax.axhline(1.0, color="k", lw=0.8, label="fair share")
    ax.axhline(0.1, color="grey", lw=0.8, ls=":", label="unhappy level (0.1)")
    ax.set_xticks(x, labels, fontsize=8)
    ax.set_ylabel("late 7th station after the join / fair share")
    ax.set_ylim(0, max(means) * 1.4)
    ax.legend(fontsize=7, loc="upper left")
    report.figure(
        plots.save(fig, report.out_dir / "late_joiner.png"),
        f"A 7th station joins 6 normal-TCP stations at 30 s (no handover), mean of "
        f"{len(st['ho_seeds'])} seeds; the paper prints no value: a late normal-TCP joiner "
        "becomes unhappy on its testbed (below the dotted 0.1 level in tcplab's terms)",
    )


def discussion(report: Report, jobs: int | None, st: dict[str, Any]) -> None:
    """The report's setup and its discussion of where tcplab differs from the paper."""
    t265, onset, predicted, wl_thr = (st[k] for k in ("t265", "onset", "predicted", "wl_thr"))
    ns, ho, ho_seeds, grid = _params(report.quick)["ns"], st["ho"], st["ho_seeds"], st["grid"]
    sim_q, tb_q, tb_t = (
        ho[k] for k in (("simulator", "qos_tcp"), ("testbed", "qos_tcp"), ("testbed", "newreno"))
    )
    frac_unhappy_sim = float(np.mean([r["mobile_unhappy"] for r in sim_q]))
    starved_sim = float(np.mean([r["mobile_starved"] for r in sim_q]))
    frac_unhappy_tcp = float(np.mean([r["mobile_unhappy"] for r in tb_t]))
    tcp_after = _mean(tb_t, "mobile_after_bps")
    share_tb = _mean(tb_q, "mobile_after_bps") / _mean(tb_q, "fair_share_after_bps")
    share_ap1 = _mean(tb_q, "mobile_near_ap1_bps") / _mean(tb_q, "fair_share_near_ap1_bps")
    ratio = _mean(tb_q, "mobile_after_bps") / tcp_after if tcp_after > 0 else float("inf")
    drop_sim, drop_tb, to_tb, sp_tb, entered = (
        st[k] for k in ("drop_sim", "drop_tb", "to_tb", "sp_tb", "entered")
    )
    sens_rows, n_repro, j_tcp, j_q = st["sens_rows"], st["n_repro"], st["j_tcp"], st["j_q"]
    inc_q, inc_t = st["inc_q"], st["inc_t"]
    gseeds = _params(report.quick)["grid_seeds"]
    ctx_txt = "; ".join(
        f"{k}: {v if v is not None else 'above 9'}" for k, v in st["ctx_thr"].items()
    )
    br = st["sens_rows"]["per-station bursts + fade (the testbed channel before)"]
    frac_unhappy_q = float(np.mean([r["mobile_unhappy"] for r in tb_q]))
    sim_before, tb_before = (_mean(x, "mobile_before_bps") / 1e6 for x in (sim_q, tb_q))
    sim_after, tb_after_q = (_mean(x, "mobile_after_bps") / 1e6 for x in (sim_q, tb_q))
    walk_before = _mean(tb_q, "mobile_before_bps") / _mean(tb_t, "mobile_before_bps")
    walk_indoor = _mean(tb_q, "mobile_total_bps") / _mean(tb_t, "mobile_total_bps")
    od_before, od_after = st["od_before"], st["od_after"]
    od_drop = _mean(st["outdoor"]["newreno"] + st["outdoor"]["qos_tcp"], "ap2_ack_drop")
    od_starved = float(np.mean([r["mobile_starved"] for r in st["outdoor"]["newreno"]]))
    join_drop, join_to, j_w1, j_w1_to = (st[k] for k in ("join_drop", "join_to", "j_w1", "j_w1_to"))
    gap_after, gap_after_ci, gap_after_zero = (
        st[k] for k in ("gap_after", "gap_after_ci", "gap_after_zero")
    )
    n_ho = len(ho_seeds)
    fair_ap2 = _mean(tb_q, "fair_share_after_bps")
    starved = [(ch, r) for (ch, _), rows in ho.items() for r in rows if r["mobile_starved"]]
    n_starved, n_starved_hi = len(starved), sum(ch == "simulator" for ch, _ in starved)
    first16_txt = ""
    if len(sim_q) > 16:
        first16 = float(np.mean([r["mobile_starved"] for r in sim_q[:16]]))
        first16_txt = (
            f" On seeds 1-16 alone (the full run's seeds until 2026-11-28) it is {first16:.0%}"
            f" with CWmin 15; {len(sim_q)} seeds give {starved_sim:.0%}."
        )
    sim_regime = (
        "is reproduced"
        if min(starved_sim, st["sim31_starved"]) > 0.5
        else "is reproduced only in part"
    )
    report.section("Setup and choices", __doc__ or "")
    q_ack = sum(r["ap2_queue_ack_drops"] for r in tb_t + tb_q)
    r_ack = sum(r["ap2_retry_ack_drops"] for r in tb_t + tb_q)
    hr = sens_rows["frames held over the outage (before)"]
    lr = sens_rows["frames lost during the outage (default)"]
    cr = sens_rows["CUBIC hosts, frames lost"]
    c5 = sens_rows["retry limit 5, no frame errors"]
    gc = grid["CUBIC hosts, cell interference 10 s / 200 ms, fade"]
    gw = grid["CWmin 31 (b/g BSS), per-station bursts + fade"]
    gf = grid["CWmin 31, fade only"]
    gk = grid["weak AP2 station (frame error 0.2), fade"]
    gs = grid["station fades 3 s / 50 ms, fade"]
    gd = grid["weak AP downlink (frame error 0.2), fade"]
    gdf = st["down_fades"]
    down_txt = ", ".join(f"{v:.2f}" for v in st["down_unfair"].values())
    seeds = _params(report.quick)["seeds"]
    plain = [
        r
        for k, r in grid.items()
        if not k.startswith(("CUBIC", "CWmin", "retry limit 7", "weak AP downlink"))
    ]
    lo_drop = min(r["ap2_ack_drop"] for r in plain)
    hi_drop = max(r["ap2_ack_drop"] for r in plain)
    hi_intf = max(
        r["tcp_unhappy"]
        for k, r in grid.items()
        if "interference" in k and not k.startswith(("CUBIC", "retry limit 7"))
    )
    starved_tcp = sum(r["mobile_starved"] for r in tb_t)
    tb_tcp_vals = ", ".join(f"{r['mobile_after_bps'] / 1e6:.2f}" for r in tb_t)
    tb_q_vals = ", ".join(f"{r['mobile_after_bps'] / 1e6:.2f}" for r in tb_q)
    report.section(
        "Where tcplab differs from the paper",
        f"""
**Unfairness threshold.** The paper measured its AP's buffer (265.5 packets) and the threshold
(fair up to 6 stations, unfair from 7) on its devices, whose retry limit is 5 (§6), so tcplab
measures the threshold on that channel: the first unfair station count at AP queue 265 is {t265};
by AP queue: {report.data["thresholds"]}. The same sweep at Q = 265 on the other channels:
{ctx_txt}. With retry limit 7 (collisions only, ns-2's setting) a frame is practically never lost,
every window grows until the AP queue overflows with ACKs, and a station is locked out earlier.
The per-station burst chain the testbed channel carried before (a burst per station about every
2,000 frame attempts, each discarding about one frame at retry limit 5) keeps every window small,
so the AP stops overflowing and the cell stays fair further. §6 says the bursts the paper observed
did not change long-term throughput; the chain is therefore no longer part of the default testbed
channel and survives as a sensitivity row. A 3-seed look at this threshold (7) was seen before that
choice; the full run's seeds give the number above.

*Why the threshold misses (measured).* In tcplab an unhappy terminal is a random event of a run,
whose probability rises gradually with the number of stations: the share of runs with one at
AP queue 265 is {st["p_unhappy_txt"]} (4 to 9 stations, {len(_params(report.quick)["thr_seeds"])}
seeds). The paper's devices went from fair at 6 to unfair at 7; tcplab has no such step: a
station is locked out at any n from 4 on if its window is caught small while the AP queue is full
of ACKs, and more stations only make that likelier. The threshold, the first n at which more than
half the runs have an unhappy terminal, therefore lands on whichever n first crosses one half,
{t265} here; the same sweep's first 5 seeds alone (as many as the other queues get) give
{st["t265_first5"]}. The hosts' windows are autotuned (not
window-limited), so the AP buffer overflows with ACKs for any number of stations; what grows with
n is the share of ACKs each flow loses, and a flow caught with a small window times out repeatedly
(most of its timeouts are spurious: the data had arrived, the ACKs were dropped at the AP). With
window-limited flows (64 KB, an ACK per segment) the ACKs overflow the 265-packet buffer from
{onset} stations in tcplab (model: {predicted}, since 6·44 < 265.5 < 7·44;
`tcplab model ack_overflow_stations ap_queue=265.5 window_segments=44`), but such flows survive the
ACK losses longer: their first unfair station count is
{wl_thr if wl_thr is not None else f"above {max(ns)}"} (collisions-only channel).

**Handover.** The simulator-channel regime of the paper {sim_regime}: the QoS-TCP terminal
does not get in after handover (below 10 % of the fair share over the whole time after it) in
{starved_sim:.0%} of the seeds with 802.11g's CWmin 15 and in {st["sim31_starved"]:.0%} with ns-2's
default CWmin 31, and has at least one 5-s unhappy stretch in {frac_unhappy_sim:.0%} (CWmin 15).
On the testbed channel (the devices' retry limit 5 and the moving terminal's distance term)
normal TCP does not get in after the handover in {starved_tcp / len(tb_t):.0%} of the seeds and has
an unhappy stretch in {frac_unhappy_tcp:.0%} (with the per-station burst chain:
{br["tcp_unhappy"]:.0%}); QoS-TCP has one in {frac_unhappy_q:.0%} ({br["qos_unhappy"]:.0%}).
Normal TCP gets {tcp_after / 1e6:.2f} Mbit/s after the handover (per seed: {tb_tcp_vals}; QoS-TCP:
{tb_q_vals}). Where this text and the sensitivity and grid tables below say "unhappy", they mean
a seed with at least one 5-s stretch below 10 % of the fair share.

*Why "normal TCP does not get in after handover" misses (measured).* The paper's terminal
"does not cut into the existing communication" after the handover, so the row counts a seed when
the terminal's goodput over the whole time after the handover stays below the unhappy level (10 %
of AP2's fair share): {starved_tcp} of {len(tb_t)} seeds on the testbed channel (simulator
channel: {sum(r["mobile_starved"] for r in ho[("simulator", "newreno")])} of
{len(ho[("simulator", "newreno")])}). Before, a seed counted when the terminal had at least one
5-s stretch below that level: {sum(r["mobile_unhappy"] for r in tb_t)} of {len(tb_t)} have one,
but most of them starve for a few backed-off RTOs after re-association and then get in (AP2's
queue, drained by the channel's data losses, lets a retransmission's ACK through; see below).

*The ≈ 20x and "about the fair share" (measured).* QoS-TCP takes {share_tb:.2f}x the fair share at
AP2 and {share_ap1:.2f}x at AP1 before the cell edge (where the paper's QoS-TCP held about the fair
share too). Above its target (4 Mbit/s) the reconstruction halves its window on a loss as the
normal TCPs do, but not below the target window (docs/algorithms.md §5.5), and the target is
{TARGET_BPS / fair_ap2:.2f}x AP2's fair share ({fair_ap2 / 1e6:.2f} Mbit/s); in a cell where some
stations are unhappy the happy ones share what those leave. At AP2 the row therefore mostly reads
the target against the fair share, a setting the paper does not give. The ratio is {ratio:.1f}x
because normal TCP is near zero in some seeds and near the fair share in others (per-seed values
above); a mean of 20x needs it starved in nearly every seed. What lets it in: AP2 drops
{drop_tb:.0%} of the TCP ACKs on the testbed channel against {drop_sim:.0%} on the simulator
channel, because retry limit 5 turns runs of 5 collisions into data losses (each of AP2's
background stations discards {st["rd_tb"]:.1f} TCP data frames a minute at the retry limit, against
{st["rd_sim"]:.1f} with retry limit 7, all of them collisions) and the fade near the cell edge adds
more, so windows halve now and then and AP2's queue is less full (mechanism.png: {n_starved_hi} of
the {n_starved} starved runs lie in the simulator channel's high-drop cluster; without the fade AP2
drops {c5["ap2_ack_drop_testbed"]:.2f} and normal TCP is unhappy in {c5["tcp_unhappy"]:.0%} of the
seeds). At that loss a window-1 retransmission's ACK gets through within a few tries: in
{entered:.0%} of the seeds normal TCP delivered new data within 5 s of re-association, and {sp_tb}
of its {to_tb} later timeouts were spurious (ACKs lost at AP2). AP2's own ACK frames are rarely
lost at the retry limit: {r_ack} against {q_ack} dropped at its full queue.

*Why AP2's stations are window-limited (measured).* AP2 sends {st["share_sim"]:.2f} of the frames
of AP2 and its background stations on the simulator channel and {st["share_tb"]:.2f} on the testbed
channel, where a backlogged AP among 7 stations gets 1/8: the MAC gives a backlogged AP a
station's share and no more (AP / mean station 0.97-1.01 with 2 to 10 saturated stations,
tests/wlan.rs `a_backlogged_ap_gets_a_stations_share`), so the extra share is the stations'
idle time. Each station's converter queue was found empty in 49 % of 20-ms samples (simulator
channel) and 66 % (testbed channel), from the segment trace of 8 handover seeds (AP2's six
background stations, normal TCP, after 10 s; `bench/wlan_window_limited.py`). In every such
sample the sender had a full congestion window in flight (inflight ≥ cwnd - 1 MSS); the
receiver's window never fell below 4 MB and the application always had data. Most of these
samples are in congestion avoidance (80 % and 94 %), few within 2 s of a timeout (6 % and 10 %).
The cause is AIMD against the ACK queue: a station keeps its queue busy only while its window
exceeds its share of the ACK pipe, its goodput times the ACK delay that AP2's queue sets
(3.9 Mbit/s · 321 ms ≈ 108 segments on the simulator channel, 3.6 Mbit/s · 211 ms ≈ 66 on the
testbed channel). Every data loss halves the window: per flow-minute 1.5 runs of collisions
reaching retry limit 7 and 0.7 overflows of the 100-packet converter queue (at about 210
segments) on the simulator channel, 7.3 retry-limit discards on the testbed channel; congestion
avoidance regrows it by one segment per round trip (0.32 s, 0.21 s), so the window (median 123
and 64 segments) spends about half and two thirds of the time below the pipe. With an ACK per
segment AP2 then sends one frame per data frame whose ACK it does not drop, which is the share
above. The unfairness sweep's 7-station cell is the same (queues empty 69 % of the time at retry
limit 5, 56 % at 7; the AP's share 0.39 and 0.31, (1 - d)/(2 - d) to the third decimal; the few
empty samples not cwnd-limited, 0.5 % and 4.8 %, are a station still in its handshake). A
1000-packet converter queue hardly changes it (handover queues empty 52 % and 66 %, AP2's ACK
drop 0.63 and 0.39, same seeds). This is what the configured hosts do, not a MAC error. Hosts
that stay backlogged for longer need a window that recovers faster: with CUBIC on every host the
handover's queues are empty 48 % and 55 % of the time and AP2 drops 0.64 and 0.54 of the ACKs
(NewReno: 0.58 and 0.36), at the costs measured above.

*Fig. 9's 12x (measured).* The moving QoS-TCP terminal gets {sim_before:.2f} Mbit/s
before the handover on the simulator channel and {tb_before:.2f} on the testbed channel, and
{sim_after:.2f} against {tb_after_q:.2f} after it: the whole-run gap can reach 12x only if the
simulator terminal also gets almost nothing before the handover, which tcplab's 3-station AP1 does
not do. Over the time after the handover alone (where §5 places the difference) the gap is
{gap_after:.1f} ± {gap_after_ci:.1f}x: {gap_after_zero} of {n_ho} simulator seeds stay below the
unhappy level there and the others get the fair share or more, so that window would leave the row
undecided rather than make it hold; the whole run is kept (the paper's "total").

*Fig. 6 on the outdoor channel (measured).* The outdoor walk ("hardly any difference", §4.1.2) is
judged on its own channel: the paper's outdoor site is dominated by the other APs' interference
(§4.1.1, Fig. 4), so every station's frames, the background stations' at 2 m from their AP
too, fail more the farther it is from its AP, with total loss at {OUTDOOR_M[1]:g} m fitted so a
lone terminal's throughput halves at 5 m (the Fig. 4 row; the indoor term halves it only at
{st["half_indoor"]:g} m). Before, the indoor testbed runs stood for both sites, where the same ratio
is {walk_indoor:.2f}x (before the handover {walk_before:.2f}x, after it {ratio:.1f}x). Outdoors
AP2 drops {od_drop:.2f} of the TCP ACKs (indoors {drop_tb:.2f}) and normal TCP is kept out after
the handover in {od_starved:.0%} of the seeds: the background stations' own frame errors discard
TCP data at the retry limit, every window stays small and the cell does not reach the
unfair-but-stable state, as the paper's outdoor result needs. The difference that is left is
QoS-TCP's own: QoS-TCP / TCP is {od_before:.2f}x before the handover and {od_after:.2f}x after
it, because where the lossy channel keeps it below its target the reconstruction reduces its
window by 1/8 on a discarded frame where NewReno halves (docs/algorithms.md §5.5). The onset at
the AP is a choice the paper does not fix: a term flat to 3 m with total loss at 7.4 m also halves
a lone terminal's throughput at 5 m but spares the background stations at 2 m, and with it the
ratio is higher still (`bench/qos_variants.py`, docs/papers.md §4).

*Model changes measured and not adopted (`bench/qos_variants.py`; its numbers, dated, in
docs/papers.md §4; the report computes none of them).* (1) The outdoor distance term on the indoor
walk's terminal: QoS-TCP falls below the fair share at both APs and both terminals are kept out
more often; the paper's indoor site has little interference (§4.1.1). (2) One slightly slower
incumbent (§5's device differences, independent frame errors per attempt on one of the six) for
Fig. 11: at 0.1 per attempt an incumbent is no more often unhappy after a QoS-TCP joins than in the
15 s before any join, at 0.3 the slower station is unhappy before any join, no longer "slightly"
slower; and a slower station built into every cell would be a setting chosen for this row. (3)
CUBIC on every normal-TCP host (Linux's default since 2.6.19; the paper's hosts ran Linux): AP2
stays overloaded and normal TCP is kept out in about half the seeds, but QoS-TCP falls below the
fair share and is kept out too, and tcplab's CUBIC cells are unfair from fewer stations than the
paper's (an earlier side run's sweep, docs/papers.md §4). (4) The reconstruction's earlier rule
above the target (the gentle 1/8 reduction there too, until 2026-11-28): QoS-TCP took well over the
fair share at both APs and more than twice its target at AP1, not the throughput "around the target
rate" of TCP-AV's abstract (docs/algorithms.md §5.5; the numbers, measured on the commit before the
change, in docs/papers.md §4).

*The handover itself.* While the terminal is not associated, its uplink frames are now lost
(`handover_flush`, default; IEEE 802.11-2007 §11.3 forbids data frames from an unassociated
station, the frames still addressed to the old AP exhaust the retry limit, and drivers flush their
queues on disassociation). Before, they waited in the terminal's queue and went out on
re-association, so the handover was lossless. Now the terminal's TCP times out repeatedly across
the 2-s outage (RTO backoff), resumes at its next timeout after re-association with cwnd 1 and a
small ssthresh, and must get one retransmission's ACK through AP2's queue. This is the paper's
"late joiner with window 1" situation. With the frames held normal TCP is unhappy in
{hr["tcp_unhappy"]:.0%} of the seeds, with them lost in {lr["tcp_unhappy"]:.0%} (QoS-TCP
{hr["qos_unhappy"]:.0%} → {lr["qos_unhappy"]:.0%}; ratio {hr["ratio"]:.2f}x → {lr["ratio"]:.2f}x).

*What the late-joiner misses mean (measured).* The paper's §6 explains both of its testbed results
with one race: after a burst every window is small, and a station that starts from window 1 with no
ssthresh advantage (a late normal TCP) loses it and starves, while QoS-TCP's high ssthresh wins it
and pushes an incumbent into starvation (Fig. 11). tcplab's late normal TCP gets {j_tcp:.2f}x the
fair share ({join_to:.1f} timeouts per joiner). A new tcplab (or RFC) connection slow-starts with an
unbounded ssthresh (RFC 5681 §3.1), where the paper's joiner had "window 1" and "no ssthresh
advantage"; but that is not what lets it in: the same joiner with an initial window of 1 segment
and ssthresh 2 segments (RFC 5681's least, so it grows by one segment per round trip from the
start) still gets {j_w1:.2f}x the fair share ({j_w1_to:.1f} timeouts per joiner). The AP drops
{join_drop:.0%} of the ACKs, and at that rate a window-1 retransmission's ACK gets through within a
few tries; the paper's AP was "always overflowing with ACKs" (§1.2), which tcplab's cell is not
(the same cause as the handover rows). After a QoS-TCP joins,
an incumbent is unhappy in {inc_q:.0%} of the seeds ({inc_t:.0%} after a normal-TCP joiner): the
QoS-TCP joiner takes {j_q:.2f}x the fair share, spread over the six incumbents rather than taken
from one, because tcplab's stations are equal; the paper (§5) attributes the victim to a station
that was slightly slower from the start (device differences), which tcplab does not model. The
paper's starting point, six normal TCPs in a fair state, is not the usual state of tcplab's cell:
in the 15 s before the join an incumbent is already unhappy in {st["inc_before_q"]} of
{len(ho_seeds)} seeds (stations started 0.5 s apart; an unhappy terminal is a random event of a run
at any station count, see the threshold above). Of the {len(ho_seeds) - st["inc_before_q"]}
seeds that were fair before the QoS-TCP joined, an incumbent becomes unhappy after it in
{st["inc_after_fair_q"]}.

*ns-2's CWmin.* ns-2's 802.11 model defaults to CWmin 31 (802.11b's value) where an ERP-only
802.11g BSS uses 15. QoS-TCP does not get in after the handover on the simulator channel in
{starved_sim:.0%} of the seeds with CWmin 15 and {st["sim31_starved"]:.0%} with CWmin 31 (one row of
the table above, judged on both).{first16_txt}

*Sensitivity (in `results.json`, `handover_sensitivity`).* With CUBIC on every normal-TCP host
(Linux's default since 2.6.19; the paper does not name its hosts' congestion control), AP2 stays
overloaded on the testbed channel (ACK drop {cr["ap2_ack_drop_testbed"]:.2f}) and the normal-TCP
terminal starves in {cr["tcp_unhappy"]:.0%} of the seeds, as in the paper. But the QoS-TCP terminal
starves in {cr["qos_unhappy"]:.0%} of them too (ratio {cr["ratio"]:.2f}x), because the starving
happens in the RTO backoff *before* any ACK gets through. There a target-rate ssthresh gives no
advantage, and QoS-TCP's larger window near the cell edge has inflated its RTT and so its RTO. The
paper's explanation (QoS-TCP's high ssthresh wins the regrowth race after the bursts) needs the
terminal to get ACKs through first. tcplab has no mechanism by which the paper's QoS-TCP escapes
the post-outage backoff while normal TCP does not.

*Candidate testbed channels (measured, `handover_testbed_grid`; {len(gseeds)} seeds per cell, both
terminals; the default and no-error rows {len(ho_seeds)} and {len(gseeds)}).*
The paper (§6) describes its bursts as temporary, exceeding the retry limit, with "no
effect at all on long-term throughput", every flow briefly with a small window; and (§5)
device-specific differences, a background station slightly weaker from the start. tcplab models
both: cell-wide interference bursts in time (`aps[].interference` in the WLAN hop: every frame of
every station of the cell fails while a burst lasts; `handover_config(interference=...)`), and a
weaker background station on AP2 (`weak_p`: independent frame errors on its attempts). None of them
reproduces the testbed regime (normal TCP unhappy in most seeds, ratio ≥ 5, QoS-TCP ≥ 0.8x the
fair share, the simulator channel still starving QoS-TCP): {n_repro} of {len(grid)} rows do.

{grid_table(grid)}

With NewReno hosts, retry limit 5 and the ERP CWmin 15, AP2 stays unloaded whatever the bursts: its
ACK-drop share is {lo_drop:.2f} to {hi_drop:.2f} in those rows, against {drop_sim:.2f} on the
simulator channel. The cell-wide bursts discard frames of every station at once, and that lets a
window-1 newcomer in rather than keeping it out: normal TCP is unhappy in at most {hi_intf:.0%} of
the seeds with them. The weaker background station does not become the victim in place of the
QoS-TCP terminal (QoS-TCP unhappy {gk["qos_unhappy"]:.0%}). Two rows keep AP2 overloaded: CUBIC
hosts (ACK drop {gc["ap2_ack_drop"]:.2f}) and CWmin 31, the contention window of a BSS with 802.11b
rates in its basic rate set and ns-2's default (fewer collisions, so retry limit 5 discards far
fewer frames; ACK drop {gw["ap2_ack_drop"]:.2f} with the per-station bursts). There the normal-TCP
terminal is unhappy in {gc["tcp_unhappy"]:.0%} and {gw["tcp_unhappy"]:.0%} of the seeds, but QoS-TCP
is unhappy too in {gc["qos_unhappy"]:.0%} and {gw["qos_unhappy"]:.0%}, and the ratio stays at
{gc["ratio"]:.1f}x and {gw["ratio"]:.1f}x. CWmin 31 without any burst errors gives
{gf["ratio"]:.0f}x only because both terminals starve (QoS-TCP {gf["qos_share_of_fair"]:.2f}x the
fair share). The paper text names neither CUBIC nor a b/g BSS, so the defaults are kept (retry limit
5, fade, CWmin 15) and the testbed regime stays only partly reproduced. What the rows do show is the
paper's direction: where AP2 stays overloaded, the burst errors help QoS-TCP more than normal TCP
(CWmin 31: QoS-TCP unhappy {gf["qos_unhappy"]:.0%} → {gw["qos_unhappy"]:.0%} with the bursts, normal
TCP {gf["tcp_unhappy"]:.0%} → {gw["tcp_unhappy"]:.0%}).

*Each station's own fades, and a weak AP downlink (measured, rows of the grid).* Two more
candidates from the paper's words: bursts that exceed the retry limit (§6), as each station's own
fades in time (`stations[].fading` in the WLAN hop: a fade of 50 ms on average every 3 s per
station, every attempt to or from that station failing while it lasts, so a fade outlasts the
retry ladder and discards that station's frames while the others carry on), and the AP's
transmit power of 10 % (§4) against full-power converters, as a weak downlink
(`stations[].errors_down`: the AP's frames to every station fail with probability 0.2 per
attempt). The fades unload AP2 as the other data losses do (ACK drop {gs["ap2_ack_drop"]:.2f};
normal TCP unhappy {gs["tcp_unhappy"]:.0%}, QoS-TCP {gs["qos_unhappy"]:.0%}). The weak downlink
keeps AP2 overloaded (ACK drop {gd["ap2_ack_drop"]:.2f}) but both terminals have unhappy
stretches (normal TCP {gd["tcp_unhappy"]:.0%} of the seeds, QoS-TCP {gd["qos_unhappy"]:.0%}), and it
makes small cells unfair: runs with an unhappy terminal at AP queue 265 with 5, 6, 7 stations
{down_txt} ({len(seeds)} seeds each), where the paper's cell was fair up to 6. Both together
({len(ho_seeds)} seeds): AP2 ACK drop {gdf["ap2_ack_drop"]:.2f}, normal TCP unhappy
{gdf["tcp_unhappy"]:.0%} and kept out after the handover in {gdf["tcp_starved"]:.0%}, QoS-TCP
unhappy {gdf["qos_unhappy"]:.0%}, ratio {gdf["ratio"]:.1f}x. Neither joins the testbed channel:
the settings that keep AP2 overloaded put QoS-TCP through unhappy stretches with normal TCP, the
settings that unload it let both in, and none keeps normal TCP out while QoS-TCP holds its share.

A measured detail against the paper's
picture of a late joiner with window 1 and no ssthresh advantage: the moving normal-TCP terminal
keeps the ssthresh of its first timeout in the outage (half its pre-handover window, e.g. 34
segments in one seed without the fade), so once one ACK gets through it slow-starts back almost as
fast as QoS-TCP. The rest is candidates, not measurements: the 2006 TCP-AV equations (its behaviour
on timeout; searched for again, not found) and an AP that is "not a simple FIFO" (the paper's ref.
[7], which does not say how). The paper's 20x and 12x are single testbed measurements; tcplab
reports means over seeds.

**QoS-TCP** is a labelled reconstruction (`crates/tcplab-tcp/src/cc/qos_tcp.rs`,
docs/algorithms.md §5.5): the equations of Shimonishi et al. (2006) were not available.
In fixed cells it secures more above the fair share than an earlier study measured for TCP-AV
on real wireless-LAN machines (about 10 % above it, APSITT 2008): `bench/qos_variants.py --only
target`, docs/papers.md §4. The share rows above may read that strength as well as the setting.
""",
    )


#: One function per figure or table, in report order (bench/reproduce_cost.py times each);
#: each takes (report, jobs, state) and leaves in ``state`` what later sections cite.
SECTIONS = [
    mac_vs_bianchi,
    distance,
    unfairness,
    window_limited,
    stations,
    handover,
    mechanism,
    handover_figure,
    sensitivity,
    simulator_cwmin31,
    grid,
    late_joiner,
    discussion,
]


def reproduce(report: Report, jobs: int | None) -> None:
    """Every section of :data:`SECTIONS` in turn."""
    st: dict[str, Any] = {}
    for section in SECTIONS:
        section(report, jobs, st)


def today_queues(report: Report, jobs: int | None, st: dict[str, Any]) -> None:
    """Beyond the paper: the uplink unfairness with FQ-CoDel in place of the AP's DropTail
    buffer (same stations, seeds and channel as the unfairness sweep; not counted)."""
    from tcplab.papers.today_queues import beyond_rows, queue_row, with_ap_aqm

    p = _params(report.quick)
    seeds, dur, meas = p["seeds"], p["dur"], p["meas"]
    ns = [7, 9] if report.quick else [7, 8, 9, 10]
    queues = {"DropTail 265": None, "FQ-CoDel (limit 265)": "fq_codel"}
    keys = [(q, n, sd) for q in queues for n in ns for sd in seeds]
    cfgs = []
    for q, n, sd in keys:
        c = uplink_config(n, ap_queue=PAPER_AP_QUEUE, duration_s=dur, seed=sd, retry_limit=5)
        cfgs.append(c if queues[q] is None else with_ap_aqm(c, queues[q]))
    res = run_configs(cfgs, jobs=jobs, columns=True)
    rows: dict[str, dict[int, list[dict[str, Any]]]] = {q: {n: [] for n in ns} for q in queues}
    for (q, n, _), s in zip(keys, res, strict=True):
        r = measure_uplink(s, n, meas)
        ap = queue_row(s, kind="wlan", role="ap")
        r["ap_sojourn_p50_ms"] = ap.get("sojourn_p50_ms")
        rows[q][n].append(r)
    pooled = {q: [r for n in ns for r in rows[q][n]] for q in queues}
    samples = {
        "runs with an unhappy terminal": {
            q: [float(r["unhappy"] > 0) for r in v] for q, v in pooled.items()
        },
        "Jain's index": {q: [r["jain"] for r in v] for q, v in pooled.items()},
        "total goodput": {q: [r["goodput_bps"] / 1e6 for r in v] for q, v in pooled.items()},
        "AP ACK drops": {q: [r["drops_queue_ack"] / dur for r in v] for q, v in pooled.items()},
        "timeouts": {q: [r["timeouts"] for r in v] for q, v in pooled.items()},
        "spurious timeouts": {q: [r["spurious_timeouts"] for r in v] for q, v in pooled.items()},
    }
    units = {
        "runs with an unhappy terminal": "share",
        "total goodput": "Mbit/s",
        "AP ACK drops": "packets/s",
        "timeouts": "per run",
        "spurious timeouts": "per run",
    }
    beyond_rows(
        report,
        f"AP with today's queue, {', '.join(map(str, ns))} uplink stations",
        samples,
        units,
        f"beyond the paper: {len(seeds)} seeds x {len(ns)} station counts, retry limit 5, "
        f"last {meas:.0f} s of {dur:.0f} s",
    )
    fig, axes = plots.figure(ncols=2, size=(5.0, 4.0))
    for q in queues:
        axes[0].plot(ns, [np.mean([r["jain"] for r in rows[q][n]]) for n in ns], "o-", label=q)
        acks = [np.mean([r["drops_queue_ack"] for r in rows[q][n]]) / dur for n in ns]
        axes[1].plot(ns, acks, "o-", label=q)
    axes[0].set_xlabel("uplink TCP stations")
    axes[0].set_ylabel(f"Jain's index (last {meas:.0f} s, mean of seeds)")
    axes[0].set_ylim(0, 1.05)
    axes[0].legend(fontsize=8)
    axes[0].set_xticks(ns)
    axes[1].set_xticks(ns)
    axes[1].set_xlabel("uplink TCP stations")
    axes[1].set_ylabel("AP queue drops of TCP ACKs (packets/s)")
    axes[1].set_ylim(bottom=0)
    axes[1].legend(fontsize=8)
    report.figure(
        plots.save(fig, report.out_dir / "today_queues_ap.png"),
        "Beyond the paper: the AP's DropTail buffer (265 packets) against FQ-CoDel with the "
        "same limit, retry limit 5",
    )
    report.data["today_queues"] = {q: {str(n): rows[q][n] for n in ns} for q in queues}
    fq, dt = pooled["FQ-CoDel (limit 265)"], pooled["DropTail 265"]
    u_dt, u_fq = (np.mean([r["unhappy"] > 0 for r in x]) for x in (dt, fq))
    j_dt, j_fq = (np.mean([r["jain"] for r in x]) for x in (dt, fq))
    report.section(
        "Beyond the paper: FQ-CoDel at the AP",
        f"""
The paper's unfairness comes from one FIFO at the AP that every station's TCP ACKs share: when
it overflows, a station with a small window loses all its ACKs at once and times out, and the
others take its share. With FQ-CoDel in its place (same 265-packet limit, Linux's defaults;
docs/aqm.md) each connection's ACKs queue apart and FQ-CoDel's DRR serves the connections in
turn, and a full queue drops from the fattest flow queue. Runs with an unhappy terminal:
{u_dt:.0%} with DropTail, {u_fq:.0%} with FQ-CoDel; mean Jain's index {j_dt:.3f} and
{j_fq:.3f} ({len(dt)} runs each, {", ".join(map(str, ns))} stations). The ACKs FQ-CoDel drops
are spread over every connection, so each one now times out now and then (mostly spurious
timeouts: the data had arrived) instead of one starving: timeouts per run
{np.mean([r["timeouts"] for r in dt]):.0f} with DropTail, {np.mean([r["timeouts"] for r in fq]):.0f}
with FQ-CoDel.
The rows are tcplab's measurements of a setting the paper did not study (kind "beyond the
paper"): they carry no verdict and do not count. Linux's mac80211 runs FQ-CoDel per station and
TID with airtime fairness; tcplab's AP has one FQ-CoDel, so this is the flow-queueing effect
alone.
""",
    )


SECTIONS.append(today_queues)
