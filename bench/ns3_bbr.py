"""tcplab's BBR and ns-3's ``TcpBbr`` against the kernel's BBR, case by case: each simulator's
error against the same real Linux runs.

    python bench/ns3_bbr.py --linux-cache DIR [--runs 5] [--case SPEC ...] [--ns3 wheel|PATH]
                            [--ns3-cache DIR] [--timeout S] [--out FILE.json]

The Linux runs are those ``tcplab validate linux --linux-cache DIR --case cc=bbr,...`` stored
(emulator seeds 1000, 1001, ...); a case missing from the cache is an error (run it with
``validate linux`` first, under the real-time lock). tcplab's side is exactly the validation's
(``stack = "linux"``, paired seeds, the Linux runs' late releases replayed as stalls). ns-3's
side is ``bench/ns3/build/p2p_bulk --cc=bbr`` (the PyPI ``ns3`` wheel, ns-3 3.44; built with
``bench/ns3/build.sh`` if missing) with the testbed's settings where ns-3 has them: MSS 1448,
IW10, SACK, timestamps, window scaling, a 32 MiB receive buffer (the testbed's ``tcp_rmem[2]``)
and a 4 MiB send buffer (Linux's ``tcp_wmem[2]``, the most its send buffer grows to), a
delayed ACK every 2 segments or after 40 ms, a 200 ms minimum RTO, DropTail queues of ``queue``
packets not counting the one in transmission, Bernoulli loss on the data direction, and the
link rate raised by 1502/1500 so that 1500-byte IP packets leave at the case's rate behind
ns-3's 2-byte PPP header. ns-3 seeds 1..runs. Goodput and the median smoothed RTT are taken
from the warm-up on (3 s of 20 s), retransmissions over the whole run, as in the validation.
``--ns3-cache DIR`` keeps each ns-3 run's JSON (per case and seed) to be read instead of run
again; an ns-3 run that takes longer than ``--timeout`` seconds of wall time is stopped and its
case reported as not finished (ns-3 3.44's ``TcpBbr`` with SACK loss recovery over a window of
about a thousand packets took 50 s of wall time per simulated second here).

The defaults are the ten cases of the BBR table in ``docs/linux-stack.md``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import numpy as np

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

import ns3_compare  # noqa: E402

#: The ten BBR cases of docs/linux-stack.md (2-100 Mbit/s, RTT 10-300 ms, loss 0-2 %, queues of
#: 0.25-4 BDP).
CASES = [
    "cc=bbr,rate=2Mbps,rtt=100ms,loss=0,queue=17",
    "cc=bbr,rate=10Mbps,rtt=40ms,loss=0,queue=8",
    "cc=bbr,rate=10Mbps,rtt=40ms,loss=0,queue=133",
    "cc=bbr,rate=10Mbps,rtt=100ms,loss=0.01,queue=83",
    "cc=bbr,rate=20Mbps,rtt=10ms,loss=0,queue=33",
    "cc=bbr,rate=20Mbps,rtt=300ms,loss=0,queue=250",
    "cc=bbr,rate=50Mbps,rtt=20ms,loss=0.001,queue=83",
    "cc=bbr,rate=100Mbps,rtt=10ms,loss=0,queue=83",
    "cc=bbr,rate=5Mbps,rtt=200ms,loss=0.02,queue=167",
    "cc=bbr,rate=100Mbps,rtt=50ms,loss=0.005,queue=208",
]

#: The testbed's receive buffer (tcp_rmem[2]) and Linux's largest send buffer (tcp_wmem[2]).
RCV_BUF_BYTES = 32 * 1024 * 1024
SND_BUF_BYTES = 4 * 1024 * 1024


def testbed_args(case: Any, seed: int) -> list[str]:
    """``p2p_bulk``'s arguments for ``case`` (a validation ``Case``) with the testbed's
    settings (see the module doc) and ns-3 seed ``seed``."""
    return [
        f"--duration={case.duration_s:g}",
        f"--seed={seed}",
        # 1500-byte IP packets leave at the case's rate behind ns-3's 2-byte PPP header.
        f"--rate={round(case.rate_bps * 1502 / 1500)}bps",
        f"--delay={case.delay_ns}ns",
        f"--queue={case.queue}",
        f"--loss={case.loss:g}",
        f"--cc={case.cc}",
        "--minRto=0.2",
        "--delAckTimeout=0.04",
        f"--bufBytes={RCV_BUF_BYTES}",
        f"--sndBufBytes={SND_BUF_BYTES}",
        f"--warmup={case.warmup_s:g}",
        "--sampleMs=20",
        "--verbose=0",
    ]


def ns3_run(
    binary: Path, case: Any, seed: int, timeout_s: float, cache: Path | None
) -> dict[str, Any] | None:
    """One ns-3 ``TcpBbr`` run of ``case`` (a validation ``Case``); None if it did not finish
    within ``timeout_s`` seconds of wall time."""
    path = None
    if cache is not None:
        name = f"{case.cc}_r{case.rate_bps}_d{case.delay_ns}_q{case.queue}_l{case.loss:g}"
        path = cache / f"{name}_t{case.duration_s:g}_w{case.warmup_s:g}_s{seed}.json"
    return ns3_compare.cached_run([str(binary), *testbed_args(case, seed)], path, timeout_s)


def compare_case(binary: Path, spec: str, a: argparse.Namespace) -> dict[str, Any]:
    """One case: the Linux runs from ``a.linux_cache``, tcplab's paired runs, ``a.runs`` ns-3
    runs (the ``ns3`` entry is None if one of them did not finish)."""
    case, row = ns3_compare.linux_and_tcplab(spec, a.runs, a.linux_cache)
    ns = []
    for seed in range(1, a.runs + 1):
        r = ns3_run(binary, case, seed, a.timeout, a.ns3_cache)
        if r is None:
            break
        ns.append(r)
    out: dict[str, Any] = {
        "case": spec,
        "linux": {
            "goodput_bps": row["linux_goodput"][0],
            "srtt_ms": row["linux_srtt_ms"],
            "retrans": row["linux_retrans"],
        },
        "tcplab": {
            "goodput_bps": row["tcplab_goodput"][0],
            "srtt_ms": row["tcplab_srtt_ms"],
            "retrans": row["tcplab_retrans"],
        },
        "ns3": None,
    }
    if len(ns) == a.runs:
        out["ns3"] = {
            "goodput_bps": float(np.mean([r["goodput_after_warmup_bps"] for r in ns])),
            "srtt_ms": float(np.mean([r["srtt_median_ms"] for r in ns])),
            "retrans": float(np.mean([r["retransmissions"] for r in ns])),
            "rto_losses": float(np.mean([r["rto_losses"] for r in ns])),
            "runs": ns,
        }
    for sim in ("tcplab", "ns3"):
        if out[sim] is None:
            continue
        out[sim]["err"] = {
            k: ns3_compare.err(out[sim][k], out["linux"][k])
            for k in ("goodput_bps", "srtt_ms", "retrans")
        }
    return out


def table(rows: list[dict[str, Any]]) -> str:
    """The Markdown table: each metric's Linux value, tcplab's and ns-3's error."""
    lines = [
        "| case | goodput Linux | tcplab | ns-3 | SRTT ms Linux | tcplab | ns-3 | "
        "retrans Linux | tcplab | ns-3 |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]

    def cell(err: float | None, other: float | None) -> str:
        if err is None:
            return "did not finish"
        mark = " *" if other is None or abs(err) < abs(other) else ""
        return f"{err * 100:+.0f} %{mark}"

    none = dict.fromkeys(("goodput_bps", "srtt_ms", "retrans"))
    for r in rows:
        t, lx = r["tcplab"]["err"], r["linux"]
        n = r["ns3"]["err"] if r["ns3"] is not None else none
        spec = r["case"].replace("cc=bbr,", "")
        lines.append(
            f"| {spec} | {lx['goodput_bps'] / 1e6:.2f} | "
            f"{cell(t['goodput_bps'], n['goodput_bps'])} | "
            f"{cell(n['goodput_bps'], t['goodput_bps'])} | {lx['srtt_ms']:.1f} | "
            f"{cell(t['srtt_ms'], n['srtt_ms'])} | {cell(n['srtt_ms'], t['srtt_ms'])} | "
            f"{lx['retrans']:.0f} | {cell(t['retrans'], n['retrans'])} | "
            f"{cell(n['retrans'], t['retrans'])} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    def timeout(ap: argparse.ArgumentParser) -> None:
        ap.add_argument(
            "--timeout", type=float, default=600.0, help="wall seconds per ns-3 run [600]"
        )

    rows = ns3_compare.main(__doc__.splitlines()[0], CASES, compare_case, argv, timeout)
    print(table(rows))
    closer = {
        k: sum(
            r["ns3"] is None or abs(r["tcplab"]["err"][k]) < abs(r["ns3"]["err"][k]) for r in rows
        )
        for k in ("goodput_bps", "srtt_ms", "retrans")
    }
    print(
        f"tcplab closer to Linux than ns-3 (of {len(rows)} cases; a case ns-3 did not finish "
        "counts for tcplab): "
        f"goodput {closer['goodput_bps']}, SRTT {closer['srtt_ms']}, "
        f"retransmissions {closer['retrans']} (* marks the closer simulator)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
