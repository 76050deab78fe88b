"""What changes with ``stack = "linux"``: each paper reproduction's main scenario run with the
paper's TCP and again with a Linux 6.x sender and receiver (docs/linux-stack.md).

    python bench/linux_stack_papers.py [--paper NAME ...] [--out FILE.json]

The Linux run takes the paper's scenario as the reproduction builds it and sets every key of
the ``linux`` stack in each flow (``stack = "linux"`` plus the stack's keys given explicitly,
so the paper's own TCP keys, which would override a stack, give way); a flow whose congestion
control is not loss-based Reno/CUBIC (QoS-TCP) keeps it. Path, buffers, MSS, application and
seeds stay the paper's. The builders call ``parse_scenario`` themselves, so the rewrite happens
there (:func:`linux_flows`); the WLAN reproduction takes a normalized TCP configuration.
Prints one markdown row per paper.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from tcplab.campaign.sweep import run_configs
from tcplab.scenario.parse import TCP_STACKS, parse_scenario

LINUX: dict[str, Any] = {"stack": "linux", **TCP_STACKS["linux"]}


def linux_flow(flow: dict[str, Any]) -> dict[str, Any]:
    """``flow`` (a scenario table's flow) with every key of the linux stack set."""
    out = copy.deepcopy(flow)
    cc = out.get("cc")
    out.update(copy.deepcopy(LINUX))
    if cc not in (None, "reno", "newreno", "cubic"):
        out["cc"] = cc
    # The stack's per-controller arithmetic applies only to its own controllers; as a flow's
    # own key it is an error elsewhere, so leave out what does not apply, as the stack does.
    if out["cc"] not in ("reno", "newreno"):
        out.pop("reno", None)
    if out["cc"] != "cubic":
        out.pop("cubic", None)
    return out


@contextmanager
def linux_flows(module: ModuleType) -> Iterator[None]:
    """While active, the scenarios ``module`` parses get :func:`linux_flow` flows.

    A builder may memoize its parsed scenarios (sto3g's ``_parsed``); those caches are emptied
    on entry and exit, or the Linux build would get the paper's parse back from the cache."""
    orig: Callable[..., Any] = module.parse_scenario

    def patched(data: Any, *args: Any, **kw: Any) -> Any:
        data = copy.deepcopy(data)
        data["flows"] = [linux_flow(f) for f in data.get("flows", [])]
        return orig(data, *args, **kw)

    def clear_caches() -> None:
        for v in vars(module).values():
            if callable(getattr(v, "cache_clear", None)):
                v.cache_clear()

    clear_caches()
    module.parse_scenario = patched
    try:
        yield
    finally:
        module.parse_scenario = orig
        clear_caches()


def _both(module: ModuleType, build: Callable[[], list[dict[str, Any]]]) -> tuple[Any, Any]:
    paper = build()
    with linux_flows(module):
        linux = build()
    res = run_configs(paper + linux, jobs=2)
    return res[: len(paper)], res[len(paper) :]


def asymmetric_link() -> dict[str, Any]:
    from tcplab.papers import asymmetric_link as m

    (p,), (lx,) = _both(m, lambda: [m.config(up_bps=32e3, duration="30s")])
    f, g = p["flows"][0], lx["flows"][0]
    return {
        "paper": "asymmetric-link",
        "scenario": "10 Mbit/s down, 32 kbit/s up (the paper's framing and window), 30 s",
        "metric": "downlink goodput (kbit/s)",
        "paper_tcp": f["goodput_bps"] / 1e3,
        "linux": g["goodput_bps"] / 1e3,
        "notes": f"timeouts {f['timeouts']} / {g['timeouts']}",
    }


def spoofing_satellite() -> dict[str, Any]:
    from tcplab.papers import spoofing_satellite as m

    (p,), (lx,) = _both(m, lambda: [m.config(spoof=False, size=1_000_000)])
    f, g = p["flows"][0], lx["flows"][0]
    return {
        "paper": "spoofing-satellite",
        "scenario": "1 MB over the 1 Mbit/s, 540 ms satellite hop, no PEP",
        "metric": "transfer time (s)",
        "paper_tcp": f["duration_s"],
        "linux": g["duration_s"],
        "notes": f"timeouts {f['timeouts']} / {g['timeouts']}, spurious "
        f"{f['spurious_timeouts']} / {g['spurious_timeouts']}",
    }


def sto3g() -> dict[str, Any]:
    from tcplab.papers import sto3g as m

    sizes = {"kind": "empirical", "bins": m.SIZE_MIX}

    def build() -> list[dict[str, Any]]:
        rto = {"initial": "1.5s", "min": "1.5s"}
        return [m.scenario("weak", rto, sizes, 100, seed=s) for s in range(3)]

    p, lx = _both(m, build)

    def per(res: list[dict[str, Any]], key: str) -> float:
        return float(
            np.mean([r["flows"][0][key] / max(1, r["flows"][0]["connections"]) for r in res])
        )

    return {
        "paper": "sto-3g",
        "scenario": "100 downloads over the weak RLC bearer, RTO 1.5 s (paper) vs Linux's, 3 seeds",
        "metric": "spurious timeouts per download",
        "paper_tcp": per(p, "spurious_timeouts"),
        "linux": per(lx, "spurious_timeouts"),
        "notes": f"timeouts per download {per(p, 'timeouts'):.3f} / {per(lx, 'timeouts'):.3f}",
    }


def qos_tcp_wlan() -> dict[str, Any]:
    from tcplab.analyze.fairness import jain
    from tcplab.papers.qos_tcp_wlan import PAPER_AP_QUEUE
    from tcplab.scenario.wlan_configs import uplink_config

    tcp = parse_scenario(
        {
            "name": "t",
            "duration": "1s",
            "path": [{"rate": "1Gbps", "delay": "1ms"}],
            "flows": [{"stack": "linux", "mss": 1460, "rcv_buf": "4MiB", "snd_buf": "4MiB"}],
        }
    ).config["flows"][0]["tcp"]
    cfgs = [
        uplink_config(7, ap_queue=PAPER_AP_QUEUE, duration_s=30, seed=1),
        uplink_config(7, ap_queue=PAPER_AP_QUEUE, duration_s=30, seed=1, tcp_cfg=tcp),
    ]
    p, lx = run_configs(cfgs, jobs=2)

    def j(r: dict[str, Any]) -> float:
        return float(jain([f["goodput_bps"] for f in r["flows"]]))

    def lo(r: dict[str, Any]) -> float:
        return min(f["goodput_bps"] for f in r["flows"]) / 1e6

    return {
        "paper": "qos-tcp-wlan",
        "scenario": "7 uplink TCP stations on one AP (queue 265), 30 s",
        "metric": "Jain index of the stations' goodputs",
        "paper_tcp": j(p),
        "linux": j(lx),
        "notes": f"slowest station {lo(p):.2f} / {lo(lx):.2f} Mbit/s",
    }


def throughput_bound() -> dict[str, Any]:
    from tcplab.papers import throughput_bound as m

    (p,), (lx,) = _both(m, lambda: [m.host_config(1460, m.SEC35_NONTOE, duration=1.0)])
    f, g = p["flows"][0], lx["flows"][0]
    return {
        "paper": "throughput-bound",
        "scenario": "1 Gbit/s into the §3.5 non-TOE host, MTU 1460, 1 s (paper: 400 Mbit/s)",
        "metric": "goodput (Mbit/s)",
        "paper_tcp": f["goodput_bps"] / 1e6,
        "linux": g["goodput_bps"] / 1e6,
        "notes": f"retransmitted {f['retransmitted_segments']} / {g['retransmitted_segments']}",
    }


PAPERS = [asymmetric_link, spoofing_satellite, sto3g, qos_tcp_wlan, throughput_bound]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=None, help="write the rows as JSON here")
    ap.add_argument("--paper", action="append", default=[], help="only this paper (repeatable)")
    a = ap.parse_args(argv)
    rows = []
    print(
        "| paper | main scenario | metric | paper's TCP | stack = linux | notes (paper / linux) |"
    )
    print("|---|---|---|---|---|---|")
    for fn in PAPERS:
        if a.paper and fn.__name__.replace("_", "-").replace("sto3g", "sto-3g") not in a.paper:
            continue
        r = fn()
        rows.append(r)
        print(
            f"| {r['paper']} | {r['scenario']} | {r['metric']} | {r['paper_tcp']:.3g} | "
            f"{r['linux']:.3g} | {r['notes']} |",
            flush=True,
        )
    if a.out:
        a.out.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
