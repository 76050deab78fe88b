"""Cross-check tcplab's PRR (RFC 6937) against ns-3's: NewReno + PRR with SACK in tcplab versus
ns-3's ``TcpLinuxReno`` + ``TcpPrrRecovery`` on several path settings, small queues included
(where the reduction's shape matters most).

    python bench/ns3_prr.py [--duration S] [--ns3 wheel|PATH] [--out FILE.json]

``--ns3 wheel`` (the default) runs ``bench/ns3/build/p2p_bulk``, built with
``bench/ns3/build.sh`` if missing against the PyPI ``ns3`` wheel (ns-3 3.44); ``--ns3 PATH``
runs a ``p2p_bulk`` built by ``NS3_ROOT=<built ns-3 tree> bench/ns3/build.sh`` against another
ns-3 (e.g. ``bench/ns3/build/p2p_bulk-ns-3.48-85-g140646449a33``, a current ns-3-dev).
tcplab's side matches the ns-3 program (bench/README.md): one unlimited flow, MSS 1448, IW10,
SACK, timestamps, window scaling, 4 MiB buffers, delayed ACK every 2 segments or 200 ms, RTO
minimum 1 s (RFC 6298 otherwise), DropTail device queues counting waiting packets, a 2-byte PPP
header per frame; ``TcpLinuxReno``'s slow start adds every acknowledged segment (``abc_l = 2``
with ACKs of 2), it slow-starts only while cwnd < ssthresh and halves cwnd (not FlightSize).
tcplab is also run with the immediate reduction (RFC 6675) to show what PRR changes, and ns-3
with its classic recovery (``TcpClassicRecovery``) to show what ns-3's PRR changes: on the small
queues ns-3 3.44's PRR is 8 to 11 % below its own classic recovery while RFC 6937 PRR moves
tcplab by under 2 %; ns-3-dev's PRR (RFC 9937 accounting with SACK) is within 3 % of its classic
recovery and within 5 % of tcplab's PRR on all seven paths (bench/README.md).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
NS3_BIN = BENCH / "ns3" / "build" / "p2p_bulk"

#: (rate, one-way delay, queue in packets): RTT 20 to 400 ms, 2 to 50 Mbit/s, queues from a
#: fraction of the BDP to more than it.
SETTINGS: list[tuple[str, str, int]] = [
    ("10Mbps", "50ms", 100),
    ("10Mbps", "50ms", 20),
    ("10Mbps", "20ms", 10),
    ("20Mbps", "10ms", 5),
    ("50Mbps", "20ms", 50),
    ("2Mbps", "100ms", 10),
    ("10Mbps", "200ms", 30),
]


def ns3_binary(choice: str) -> Path:
    """The ``p2p_bulk`` binary that ``--ns3`` names: ``wheel`` (built here if missing) or a path."""
    if choice == "wheel":
        if not NS3_BIN.exists():
            env = {k: v for k, v in os.environ.items() if k != "NS3_ROOT"}  # the wheel build
            subprocess.run(["bash", str(BENCH / "ns3" / "build.sh")], check=True, env=env)
        return NS3_BIN
    path = Path(choice)
    if not path.is_file():
        raise SystemExit(
            f"ns3_prr.py: --ns3 {choice}: no such file (give 'wheel' or a p2p_bulk binary built "
            "by NS3_ROOT=<ns-3 tree> bench/ns3/build.sh)"
        )
    return path


def ns3(
    binary: Path, rate: str, delay: str, queue: int, duration: float, recovery: str = "prr"
) -> dict[str, Any]:
    out = subprocess.run(
        [
            str(binary),
            f"--duration={duration:g}",
            f"--rate={rate}",
            f"--delay={delay}",
            f"--queue={queue}",
            f"--recovery={recovery}",
            "--verbose=0",
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    res: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    return res


def tcplab(rate: str, delay: str, queue: int, duration: float, recovery: str) -> dict[str, Any]:
    from tcplab.campaign.sweep import run_config
    from tcplab.scenario.parse import parse_scenario

    sc = {
        "name": "ns3-prr",
        "duration": f"{duration:g}s",
        "seed": 1,
        "path": [{"rate": rate, "delay": delay, "queue": queue, "overhead": 2}],
        "flows": [
            {
                "cc": "newreno",
                "sack": True,
                "mss": 1448,
                "initial_window": 10,
                "abc_l": 2,
                "ca_at_ssthresh": True,
                "ssthresh_from": "cwnd",
                "recovery_cwnd": recovery,
            }
        ],
    }
    flow: dict[str, Any] = run_config(parse_scenario(sc).to_config())["flows"][0]
    return flow


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--duration", type=float, default=100.0, help="simulated seconds per run")
    ap.add_argument(
        "--ns3",
        default="wheel",
        help="the ns-3 side: 'wheel' (bench/ns3/build/p2p_bulk, PyPI ns3 3.44) or the path of a "
        "p2p_bulk built by NS3_ROOT=<ns-3 tree> bench/ns3/build.sh",
    )
    ap.add_argument("--out", type=Path, default=None, help="write the rows as JSON here")
    a = ap.parse_args(argv)
    binary = ns3_binary(a.ns3)
    rows = []
    version: str | None = None
    print(
        "| rate | RTT | queue | ns-3 PRR goodput (Mbit/s) | tcplab PRR | diff | "
        "tcplab immediate | retrans ns-3 / tcplab PRR | RTOs ns-3 / tcplab PRR | "
        "ns-3 classic | tcplab PRR vs ns-3 classic |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for rate, delay, queue in SETTINGS:
        n = ns3(binary, rate, delay, queue, a.duration)
        nc = ns3(binary, rate, delay, queue, a.duration, "classic")
        if version is None:
            version = str(n["ns3_version"])
            print(f"ns-3 {version} ({binary})", file=sys.stderr)
        prr = tcplab(rate, delay, queue, a.duration, "prr")
        imm = tcplab(rate, delay, queue, a.duration, "immediate")
        diff = (prr["goodput_bps"] - n["goodput_bps"]) / n["goodput_bps"] * 100
        diff_classic = (prr["goodput_bps"] - nc["goodput_bps"]) / nc["goodput_bps"] * 100
        row = {
            "ns3_version": n["ns3_version"],
            "rate": rate,
            "delay": delay,
            "queue": queue,
            "ns3_goodput_bps": n["goodput_bps"],
            "tcplab_prr_goodput_bps": prr["goodput_bps"],
            "tcplab_immediate_goodput_bps": imm["goodput_bps"],
            "diff_pct": diff,
            "ns3_classic_goodput_bps": nc["goodput_bps"],
            "diff_vs_ns3_classic_pct": diff_classic,
            "ns3_retransmissions": n["retransmissions"],
            "ns3_fast_recoveries": n["fast_recoveries"],
            "ns3_classic_retransmissions": nc["retransmissions"],
            "ns3_classic_fast_recoveries": nc["fast_recoveries"],
            "tcplab_prr_retransmissions": prr["retransmitted_segments"],
            "tcplab_prr_fast_retransmits": prr["fast_retransmits"],
            "ns3_rto": n["rto_losses"],
            "tcplab_prr_rto": prr["timeouts"],
        }
        rows.append(row)
        rtt = 2 * float(delay.removesuffix("ms"))
        print(
            f"| {rate} | {rtt:g} ms | {queue} | {n['goodput_bps'] / 1e6:.3f} | "
            f"{prr['goodput_bps'] / 1e6:.3f} | {diff:+.2f} % | {imm['goodput_bps'] / 1e6:.3f} | "
            f"{n['retransmissions']} / {prr['retransmitted_segments']} | "
            f"{n['rto_losses']} / {prr['timeouts']} | {nc['goodput_bps'] / 1e6:.3f} | "
            f"{diff_classic:+.2f} % |",
            flush=True,
        )
    if a.out:
        a.out.write_text(json.dumps(rows, indent=1))
    worst = max(abs(r["diff_pct"]) for r in rows)
    within = sum(abs(r["diff_pct"]) <= 5.0 for r in rows)
    within_classic = sum(abs(r["diff_vs_ns3_classic_pct"]) <= 5.0 for r in rows)
    print(
        f"ns-3 {version}: largest |diff|: {worst:.2f} % over {len(rows)} settings; within 5 % of "
        f"ns-3's PRR on {within}, of its classic recovery on {within_classic}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
