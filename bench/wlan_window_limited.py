#!/usr/bin/env python3
"""What limits AP2's uplink senders while their station queue is empty (qos-tcp-wlan).

For ``--seeds`` of the handover experiment (``handover_config``: normal TCP on every host, the
simulator channel and the report's testbed channel; AP2's background stations after 10 s) and of
the unfairness sweep's 7-station cell (``uplink_config``, retry limit 5 and 7; every station
after 19 s) this runs each seed with the segment trace and 20-ms samples and prints:

- ``empty``: share of samples with the station's queue empty (segments sent, minus those that
  reached the server less the wired link's 0.62 ms, minus those dropped);
- of the empty samples, the share in which the sender had a full congestion window in flight
  (``inflight >= cwnd - 1 MSS``), the receiver's window was full, or neither (a handshake);
  the share in congestion avoidance and within 2 s of a timeout;
- the smallest advertised window, the median ACK delay (receiver to sender) and cwnd;
- the AP's share of the frames of the AP and those stations, against (1 - d)/(2 - d) from
  the share d of TCP ACKs AP2 drops (an ACK per segment);
- per flow and minute of that window: station-queue overflow episodes and retry-limit
  discards of data frames (drops within 0.5 s of each other are one), and the median cwnd before
  an overflow;
- of the empty samples, those of a station still in its handshake (SYN or SYN-ACK lost) show as
  "rwnd-limited" (the SYN-ACK's unscaled window) or "other".

``--cc cubic`` runs CUBIC on every host, ``--sta-queue`` sets the converter queue (default 100).
The numbers are quoted in the report's "Why AP2's stations are window-limited" and
docs/papers.md §4.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

import numpy as np

WIRE_NS = 500_000 + 120_000  # the wired link: 0.5 ms and a 1500-B packet at 100 Mbit/s
MSS = 1460


def run(cfg: dict[str, Any]) -> Any:
    """One run with the segment trace and the tables; raises on invariant violations, as
    ``tcplab.run`` does (``tcplab.run`` takes a scenario, this a normalized configuration)."""
    from tcplab import _core
    from tcplab.errors import InvariantError
    from tcplab.results import RunResult

    cfg = {**cfg, "trace": True, "sample_interval_ns": 20_000_000}
    raw = _core.run(json.dumps({**cfg, "record": {"timeseries": True, "events": True}}), None)
    r = RunResult.from_core(raw, scenario=cfg["name"], seed=cfg["seed"], wall_s=0, config=cfg)
    violations = r.summary["invariants"]["violations"]
    if violations:
        raise InvariantError(violations, r)
    return r


def per_flow(r: Any, f: int, t0_ns: float, minutes: float) -> dict[str, float]:
    seg, ev = r.segments, r.events
    s = seg[seg.flow == f]
    send = np.sort(s.t_ns[s.kind == "send"].to_numpy())
    arrived = np.sort(s.t_ns[s.kind == "arrive"].to_numpy()) - WIRE_NS
    e = ev[ev.flow == f]
    data = e.reason_name == "data"
    dq = np.sort(e.t_ns[(e.kind == "drop_queue") & data].to_numpy())
    dl = np.sort(e.t_ns[(e.kind == "drop_loss") & data].to_numpy())
    drops = np.sort(np.r_[dq, dl])
    acks = s[(s.kind == "ack") & (s.t_ns > t0_ns)]
    at = acks.t_ns.to_numpy()
    x = r.timeseries[(r.timeseries.flow == f) & (r.timeseries.t_ns > t0_ns)]
    t = x.t_ns.to_numpy()
    q = (
        np.searchsorted(send, t, "right")
        - np.searchsorted(arrived, t, "right")
        - np.searchsorted(drops, t, "right")
    )
    k = np.searchsorted(at, t, "right") - 1
    wnd = acks.len.to_numpy()
    rwnd = (
        np.where(k >= 0, wnd[np.maximum(k, 0)], 1 << 40) if len(wnd) else np.full(len(t), 1 << 40)
    )
    cw, inflight, ss = x.cwnd.to_numpy(), x.inflight.to_numpy(), x.ssthresh.to_numpy()
    empty = q <= 0
    cwl = inflight + MSS > cw
    rwl = ~cwl & (inflight + MSS > rwnd)
    to = np.sort(e.t_ns[e.kind == "timeout"].to_numpy())
    j = np.searchsorted(to, t, "right") - 1
    since = (
        np.where(j >= 0, t - to[np.maximum(j, 0)], np.inf) if len(to) else np.full(len(t), np.inf)
    )
    starts = dq[np.r_[True, np.diff(dq) > 5e8]] if len(dq) else dq
    starts = starts[starts > t0_ns]
    ts_all = r.timeseries[r.timeseries.flow == f]
    i = np.maximum(np.searchsorted(ts_all.t_ns.to_numpy(), starts) - 1, 0)
    w_over = ts_all.cwnd.to_numpy()[i] / MSS if len(starts) else np.array([np.nan])

    def episodes(d: np.ndarray) -> int:
        d = d[d > t0_ns]
        return int((np.diff(d) > 5e8).sum() + 1) if len(d) else 0

    return {
        "samples": float(len(t)),
        "empty": float(empty.sum()),
        "cwnd": float((empty & cwl).sum()),
        "rwnd": float((empty & rwl).sum()),
        "other": float((empty & ~cwl & ~rwl).sum()),
        "ca": float((empty & cwl & (cw >= ss)).sum()),
        "after_timeout": float((empty & (since < 2e9)).sum()),
        "rwnd_min_kb": float(wnd.min() / 1024) if len(wnd) else np.nan,
        "ack_delay_ms": float(np.median((acks.t_ns - acks.sent_ns).to_numpy()) / 1e6)
        if len(at)
        else np.nan,
        "cwnd_med": float(np.median(cw) / MSS),
        "overflow_per_min": episodes(dq) / minutes,
        "retry_per_min": episodes(dl) / minutes,
        "cwnd_at_overflow": float(np.median(w_over)) if len(starts) else np.nan,
    }


def cases(
    cc: str, seed: int, sta_queue: int
) -> list[tuple[str, dict[str, Any], int, list[int], float]]:
    """(label, configuration, AP index, the AP's background flows, start of the window in s)."""
    from tcplab.papers.qos_tcp_wlan import TESTBED, TESTBED_RETRY
    from tcplab.scenario.wlan_configs import handover_config, tcp, uplink_config

    host = tcp(cc=cc)
    out: list[tuple[str, dict[str, Any], int, list[int], float]] = []
    for channel, extra in (("simulator", {}), ("testbed", TESTBED)):
        cfg = handover_config(
            cc, channel=channel, seed=seed, tcp_cfg=host, sta_queue=sta_queue, **extra
        )
        n_ap1 = sum(1 for s in cfg["hops"][0]["stations"][:-1] if s["ap"] == 0)
        bg2 = list(range(n_ap1, len(cfg["flows"]) - 1))
        out.append((f"handover, {channel} channel", cfg, 1, bg2, 10.0))
    for retry in (TESTBED_RETRY, 7):
        # the unfairness sweep's 7-station cell (stations start 2 s apart: window from 19 s)
        cfg = uplink_config(
            7, seed=seed, retry_limit=retry, duration_s=60.0, tcp_cfg=host, sta_queue=sta_queue
        )
        out.append((f"7 stations on one AP, retry limit {retry}", cfg, 0, list(range(7)), 19.0))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=8)
    ap.add_argument("--cc", default="newreno", choices=["newreno", "cubic"])
    ap.add_argument("--sta-queue", type=int, default=100, help="converter queue (packets)")
    a = ap.parse_args()
    acc: dict[str, tuple[list[dict[str, float]], list[float], list[tuple[float, float]]]] = {}
    for seed in range(1, a.seeds + 1):
        for label, cfg, ap_i, flows, t0 in cases(a.cc, seed, a.sta_queue):
            rows, shares, preds = acc.setdefault(label, ([], [], []))
            r = run(cfg)
            minutes = (cfg["duration_ns"] * 1e-9 - t0) / 60.0
            rows += [per_flow(r, f, t0 * 1e9, minutes) for f in flows]
            wl = [x for x in r.summary["links"] if x.get("kind") == "wlan"]
            a2 = [x for x in wl if x["role"] == "ap"][ap_i]
            sta = [x for x in wl if x["role"] == "station"]
            bg_tx = sum(sta[f]["tx_packets"] for f in flows)
            shares.append(a2["tx_packets"] / (a2["tx_packets"] + bg_tx))
            d = a2["drops_queue_ack"] / (a2["drops_queue_ack"] + a2["tx_ack"])
            preds.append((d, (1 - d) / (2 - d)))
    for label, (rows, shares, preds) in acc.items():
        tot = {k: sum(x[k] for x in rows) for k in ("samples", "empty", "cwnd", "rwnd", "other")}
        emp = tot["empty"]
        mean = {k: float(np.nanmean([x[k] for x in rows])) for k in rows[0]}
        med = {k: float(np.nanmedian([x[k] for x in rows])) for k in rows[0]}
        print(
            f"{label} ({a.cc}, {a.seeds} seeds, {len(rows)} flows): queue empty "
            f"{emp / tot['samples']:.3f}; of that cwnd-limited {tot['cwnd'] / emp:.3f}, "
            f"rwnd-limited {tot['rwnd'] / emp:.3f}, other {tot['other'] / emp:.3f}; "
            f"in congestion avoidance {sum(x['ca'] for x in rows) / emp:.3f}, within 2 s of a "
            f"timeout {sum(x['after_timeout'] for x in rows) / emp:.3f}"
        )
        print(
            f"  smallest advertised window {np.nanmin([x['rwnd_min_kb'] for x in rows]):.0f} KB, "
            f"ACK delay {med['ack_delay_ms']:.0f} ms, cwnd {med['cwnd_med']:.0f} segments "
            f"(medians); AP share {np.mean(shares):.3f}, ACK drop "
            f"{np.mean([p[0] for p in preds]):.3f} -> (1-d)/(2-d) "
            f"{np.mean([p[1] for p in preds]):.3f}"
        )
        print(
            f"  per flow-minute: overflow episodes {mean['overflow_per_min']:.2f} (cwnd before "
            f"{med['cwnd_at_overflow']:.0f} segments), retry-limit discards "
            f"{mean['retry_per_min']:.2f}"
        )


if __name__ == "__main__":
    main()
