"""Accuracy of ``tcplab analyze`` against the simulator's ground truth, beside tshark.

Each case runs a tcplab simulation with two capture points — a 10 Gbit/s, zero-delay hop next
to the sender (``snd.pcap``) and one next to the receiver (``rcv.pcap``) around the path under
test — and compares ``tcplab analyze`` on both files with the run's event table:

- every ``timeout`` row is an RTO with its truth (``spurious``: a copy sent before the timeout
  reached the receiver); precision/recall of the analyser's spurious-RTO class;
- every ``retransmit``/``fast_retransmit`` row is a retransmission with its reason
  (``timeout`` → rto, ``after_timeout`` → go_back_n, ``fast_retransmit`` → fast_retransmit,
  ``partial_ack``/``sack_recovery``/``rescue`` → fast_recovery): precision/recall per class.

Analyser rows are matched to truth rows by connection (source port 10000 + connection
number), sequence offset and time (sender side: within 2 ms; receiver side: the first
analyser row of that sequence at or after the truth time). tshark's flags
(``tcp.analysis.retransmission``, ``fast_retransmission``, ``spurious_retransmission``) are
counted on the same files.

    python bench/analyze_accuracy.py [--quick] [--jobs N] [--md FILE]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

PRESETS = ("strong", "weak", "pedestrian", "car", "train")
CLASS_OF_REASON = {
    "timeout": "rto",
    "after_timeout": "go_back_n",
    "fast_retransmit": "fast_retransmit",
    "partial_ack": "fast_recovery",
    "sack_recovery": "fast_recovery",
    "rescue": "fast_recovery",
}
CLASSES = ("rto", "go_back_n", "fast_retransmit", "fast_recovery", "tlp")
LAN = {"kind": "link", "rate": "10Gbps", "delay": "0s", "queue": 100000}


def case_configs(quick: bool) -> list[tuple[str, dict[str, Any]]]:
    """(name, scenario table) for every case."""
    n = 12 if quick else 60
    cases: list[tuple[str, dict[str, Any]]] = []
    sizes = {"kind": "empirical", "bins": [["300KB", "301KB", 1], ["2MB", "2.001MB", 1]]}
    variants = [("ts+sack", {}), ("no-ts", {"timestamps": False}), ("no-sack", {"sack": False})]
    for preset in PRESETS:
        for vname, tcp in variants:
            if quick and vname != "ts+sack" and preset not in ("train", "weak"):
                continue
            cases.append(
                (
                    f"sto-3g {preset} {vname}",
                    {
                        "name": f"acc-{preset}",
                        "duration": f"{n * 40}s",
                        "sample_interval": "0s",
                        "path": [LAN, {"kind": "rlc", "name": "radio", "preset": preset}, LAN],
                        "flows": [
                            {
                                "name": "download",
                                "profile": "w-tcp",
                                "app": "downloads",
                                "sizes": sizes,
                                "think": {"kind": "exponential", "mean": "2s"},
                                "downloads": n,
                                **tcp,
                            }
                        ],
                    },
                )
            )
    for vname, tcp in variants:
        cases.append(
            (
                f"lossy 2% {vname}",
                {
                    "name": "acc-lossy",
                    "duration": "60s" if quick else "200s",
                    "sample_interval": "0s",
                    "path": [
                        LAN,
                        {
                            "kind": "link",
                            "rate": "4Mbps",
                            "delay": "40ms",
                            "queue": 60,
                            "loss": 0.02,
                        },
                        LAN,
                    ],
                    "flows": [{"cc": "newreno", "bytes": "unlimited", "mss": 1448, **tcp}],
                },
            )
        )
        cases.append(
            (
                f"reordering 1% {vname}",
                {
                    "name": "acc-reorder",
                    "duration": "30s" if quick else "120s",
                    "sample_interval": "0s",
                    "path": [
                        LAN,
                        {
                            "kind": "link",
                            "rate": "10Mbps",
                            "delay": "50ms",
                            "queue": 100,
                            "down": {"reorder": {"p": 0.01, "extra": "10ms"}},
                        },
                        LAN,
                    ],
                    "flows": [{"cc": "newreno", "bytes": "unlimited", **tcp}],
                },
            )
        )
    return cases


def truth_rows(res: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(timeouts, retransmissions) from the run's event table."""
    ev = res["events_table"]
    kinds = res["event_kinds"]
    reasons = res["reasons"]
    k_to = kinds.index("timeout")
    k_rtx = kinds.index("retransmit")
    k_fr = kinds.index("fast_retransmit") if "fast_retransmit" in kinds else -1
    timeouts, rtx = [], []
    for i in range(len(ev["kind"])):
        kind = int(ev["kind"][i])
        row = {
            "conn": int(ev["conn"][i]),
            "t": int(ev["t_ns"][i]),
            "seq": int(ev["seq"][i]),
            "spurious": int(ev["spurious"][i]),
            "backoff": int(ev["reason"][i]),
        }
        if kind == k_to:
            timeouts.append(row)
        elif kind == k_rtx:
            name = reasons[int(ev["reason"][i])]
            if name in CLASS_OF_REASON:
                rtx.append({**row, "class": CLASS_OF_REASON[name]})
        elif kind == k_fr:
            pass  # the matching `retransmit` row (reason fast_retransmit) carries it
    return timeouts, rtx


def analysed_rows(pcap: Path, side: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    from tcplab.analyze.capture import analyze_capture

    res = analyze_capture(pcap, side=side, collect=True)
    conns = {c["conn"]: c for c in res.summary["connections"]}
    r = res.retransmissions
    rows = []
    for i in range(len(r)):
        c = conns.get(int(r["conn"].iloc[i]))
        if c is None or int(r["dir"].iloc[i]) != c["dir"]:
            continue
        rows.append(
            {
                # the simulator's connection n uses port 10000 + n at its client end
                "conn": int(c["dport"] if c["sport"] == 5001 else c["sport"]) - 10000,
                "t": int(r["t_ns"].iloc[i]),
                "seq": int(r["seq"].iloc[i]),
                "class": str(r["class_name"].iloc[i]),
                "spurious": int(r["spurious"].iloc[i]),
                "evidence": str(r["evidence_name"].iloc[i]),
            }
        )
    return rows, res.summary


def match(truth: list[dict[str, Any]], rows: list[dict[str, Any]], side: str) -> dict[int, int]:
    """truth index → analyser row index."""
    by_key: dict[tuple[int, int], list[int]] = defaultdict(list)
    for j, r in enumerate(rows):
        by_key[(r["conn"], r["seq"])].append(j)
    used: set[int] = set()
    out: dict[int, int] = {}
    order = sorted(range(len(truth)), key=lambda i: truth[i]["t"])
    for i in order:
        tr = truth[i]
        best = None
        for j in by_key.get((tr["conn"], tr["seq"]), ()):
            if j in used:
                continue
            dt = rows[j]["t"] - tr["t"]
            ok = abs(dt) <= 2_000_000 if side == "sender" else dt >= 0
            if ok and (best is None or abs(dt) < abs(rows[best]["t"] - tr["t"])):
                best = j
        if best is not None:
            used.add(best)
            out[i] = best
    return out


def tshark_counts(pcap: Path) -> dict[str, int]:
    exe = shutil.which("tshark")
    if exe is None:
        return {}
    flags = {
        "retransmission": "tcp.analysis.retransmission",
        "fast_retransmission": "tcp.analysis.fast_retransmission",
        "spurious_retransmission": "tcp.analysis.spurious_retransmission",
    }
    out = subprocess.run(
        [
            exe,
            "-n",
            "-r",
            str(pcap),
            "-T",
            "fields",
            "-e",
            "frame.number",
            *[a for f in flags.values() for a in ("-e", f)],
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    counts: Counter[str] = Counter()
    for line in out.splitlines():
        cols = line.split("\t")
        for k, name in enumerate(flags):
            if len(cols) > k + 1 and cols[k + 1]:
                counts[name] += 1
    return dict(counts)


def run_case(arg: tuple[str, dict[str, Any], int]) -> dict[str, Any]:
    name, table, seed = arg
    from tcplab.campaign.sweep import run_config
    from tcplab.scenario.parse import parse_scenario

    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        table = {
            **table,
            "seed": seed,
            "pcap": [
                {"hop": 0, "dir": "both", "file": "snd.pcap"},
                {"hop": 2, "dir": "both", "file": "rcv.pcap"},
            ],
        }
        cfg = parse_scenario(table).to_config(out_dir=d)
        res = run_config(cfg, columns=True)
        timeouts, rtx = truth_rows(res)
        out: dict[str, Any] = {"case": name, "seed": seed}
        for side, f in (("sender", "snd.pcap"), ("receiver", "rcv.pcap")):
            rows, summary = analysed_rows(d / f, side)
            m_to = match(timeouts, [r for r in rows], side)
            # spurious-RTO class: analyser rows of class rto judged spurious
            pred = {j for j, r in enumerate(rows) if r["class"] == "rto" and r["spurious"] == 1}
            tp = sum(1 for i, j in m_to.items() if timeouts[i]["spurious"] == 1 and j in pred)
            true_pos = sum(1 for t in timeouts if t["spurious"] == 1)
            m_rtx = match(rtx, rows, side)
            cls: dict[str, dict[str, int]] = {}
            for c in CLASSES:
                n_pred = sum(1 for r in rows if r["class"] == c)
                n_true = sum(1 for r in rtx if r["class"] == c)
                hit = sum(
                    1 for i, j in m_rtx.items() if rtx[i]["class"] == c and rows[j]["class"] == c
                )
                cls[c] = {"pred": n_pred, "true": n_true, "tp": hit}
            ts = tshark_counts(d / f)
            out[side] = {
                "timeouts": len(timeouts),
                "spurious_true": true_pos,
                "spurious_pred": len(pred),
                "spurious_tp": tp,
                "rtos_pred": sum(1 for r in rows if r["class"] == "rto"),
                "rtos_matched": sum(1 for j in m_to.values() if rows[j]["class"] == "rto"),
                "classes": cls,
                "retransmissions_true": len(rtx),
                "retransmissions_pred": len(rows),
                "evidence": dict(Counter(r["evidence"] for r in rows if r["spurious"] == 1)),
                "tshark": ts,
                "packets": summary["packets"],
                "sto_per_mb": summary["sto_per_mb"],
            }
        delivered = sum(f["bytes_delivered"] for f in res["flows"])
        t = [x for x in timeouts if x["spurious"] == 1 and x["backoff"] == 0]
        out["truth_sto_per_mb"] = len(t) / max(delivered / 1e6, 1e-9)
    return out


def pr(tp: int, pred: int, true: int) -> tuple[float, float]:
    p = tp / pred if pred else float("nan")
    r = tp / true if true else float("nan")
    return p, r


def group(name: str) -> str:
    return name.rsplit(" ", 1)[0] if name.startswith("sto-3g") else name


def report(results: Sequence[dict[str, Any]]) -> str:
    lines = [
        "| case | side | timeouts (spurious) | spurious-RTO precision | recall | "
        "rto P/R | go-back-N P/R | fast rtx P/R | fast recovery P/R | "
        "tshark rtx / fast / spurious | analyze rtx (truth) |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    agg: dict[tuple[str, str], dict[str, Any]] = {}
    for r in results:
        for side in ("sender", "receiver"):
            key = (r["case"], side)
            a = agg.setdefault(
                key,
                {"t": 0, "st": 0, "sp": 0, "tp": 0, "cls": {}, "ts": Counter(), "rp": 0, "rt": 0},
            )
            s = r[side]
            a["t"] += s["timeouts"]
            a["st"] += s["spurious_true"]
            a["sp"] += s["spurious_pred"]
            a["tp"] += s["spurious_tp"]
            a["rp"] += s["retransmissions_pred"]
            a["rt"] += s["retransmissions_true"]
            a["ts"].update(s["tshark"])
            for c, v in s["classes"].items():
                cc = a["cls"].setdefault(c, Counter())
                cc.update(v)

    def f(x: float) -> str:
        return "n/a" if np.isnan(x) else f"{x:.2f}"

    for (case, side), a in agg.items():
        p, rc = pr(a["tp"], a["sp"], a["st"])
        cells = []
        for c in ("rto", "go_back_n", "fast_retransmit", "fast_recovery"):
            v = a["cls"][c]
            cp, cr = pr(v["tp"], v["pred"], v["true"])
            cells.append(f"{f(cp)} / {f(cr)}")
        ts = a["ts"]
        lines.append(
            f"| {case} | {side} | {a['t']} ({a['st']}) | {f(p)} | {f(rc)} | "
            + " | ".join(cells)
            + f" | {ts.get('retransmission', 0)} / {ts.get('fast_retransmission', 0)} / "
            f"{ts.get('spurious_retransmission', 0)} | {a['rp']} ({a['rt']}) |"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--seeds", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--only", help="run only cases whose name contains this")
    ap.add_argument("--json", metavar="FILE", help="write every case's numbers to FILE")
    args = ap.parse_args(argv)
    cases = [c for c in case_configs(args.quick) if not args.only or args.only in c[0]]
    jobs = [(n, t, s + 1) for n, t in cases for s in range(args.seeds)]
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        results = list(pool.map(run_case, jobs))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1) + "\n")
    print(report(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
