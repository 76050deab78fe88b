"""``tcplab reproduce spoofing-satellite --linux``: the paper's setting with real hosts.

Two real-time sections beside the simulated figures, both through ``tcplab emu`` over the
emulated GEO hop (1 Mbit/s, RTT 540 ms) without and with tcplab's PEP in front of it:

* Linux's own sender to a Linux receiver (:mod:`tcplab.papers.spoofing_satellite`): Linux's
  measured RFC 6298 RTO never fires below the satellite RTT, so without the PEP it already
  uses much of the link and the PEP buys it little;
* the paper's sender — tcplab's TCP configured as §3.2.2 has it (:data:`PAPER_TCP`: Reno,
  RTO fixed at 500 ms, 64 KB window, initial cwnd 1), running as a real host in the emulator
  (``--endpoint server=tcplab``) — to a Linux receiver (:func:`section`). Its fixed RTO sits
  below the RTT, so without the PEP every round ends in a spurious timeout; with the PEP the
  pseudo-ACKs come back before it fires.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tcplab.papers import real_host
from tcplab.papers.spoofing_satellite import (
    LINK_BPS,
    MB,
    PAPER_TCP,
    config,
    paper_bounds,
    throughputs,
)
from tcplab.report.checks import Above, AtLeast, Info, Report

__all__ = ["SIZES", "real_run", "reproduce", "section"]

#: Bytes per transfer: the paper's 1 MB file through the PEP (about 10 s at 1 Mbit/s); without
#: the PEP a smaller file keeps the real-time run near a minute at the paper's < 5 % of the link
#: (the simulated utilisation of both sizes is shown beside it).
SIZES = {True: 1 * MB, False: 200_000}

#: The longest a real transfer may take (seconds) before it counts as stuck.
TIME_LIMIT_S = 150.0


def real_run(spoof: bool, size: int) -> dict[str, Any]:
    """One real-time transfer of the paper's sender (tcplab's endpoint) to a Linux reader over
    the paper's path (read from ``--linux-cache`` when stored there)."""
    from tcplab.real import cache as linux_cache

    def run() -> dict[str, Any]:
        from tcplab.real.transfer import endpoint_sender

        m = endpoint_sender(config(spoof=spoof, size=size), size, time_limit_s=TIME_LIMIT_S)
        return {"pep": spoof, "size_bytes": size, **m}

    key = {"spoof": spoof, "size": size, "tcp": PAPER_TCP}
    return linux_cache.cached("spoofing-paper-sender", key, run)


def section(report: Report, jobs: int | None) -> None:
    """The paper's sender as a real host (tcplab's endpoint) to a Linux receiver, without and
    with the PEP; the simulated sender on the same path beside it."""
    from tcplab.campaign.sweep import run_configs
    from tcplab.report import plots

    title = "The paper's sender as a real host: tcplab's TCP in the emulator (--linux)"
    if real_host.not_run(report, title):
        return
    rows = [real_run(spoof, SIZES[spoof]) for spoof in (False, True)]
    cfgs = [config(spoof=sp, size=n) for sp in (False, True) for n in sorted(set(SIZES.values()))]
    sims = run_configs(cfgs, jobs=jobs, columns=True)
    sim_util = {
        (c_sp, n): throughputs(s, n)["sender_bps"] / LINK_BPS
        for (c_sp, n), s in zip(
            [(sp, n) for sp in (False, True) for n in sorted(set(SIZES.values()))],
            sims,
            strict=True,
        )
    }
    for r in rows:
        r["sim_sender_bps"] = sim_util[(r["pep"], r["size_bytes"])] * LINK_BPS
    report.data["paper_sender_real"] = {
        "rows": rows,
        "sim_utilisation": {
            f"{'pep' if sp else 'no-pep'}-{n}": u for (sp, n), u in sim_util.items()
        },
    }
    u = {r["pep"]: r["sender_bps"] / LINK_BPS for r in rows}
    ratio = u[True] / u[False] if u[False] > 0 else float("inf")
    lines = [
        "tcplab's TCP configured as the paper's sender (Reno, no SACK or timestamps, MSS 1460, "
        "64 KB window, initial cwnd 1, RTO fixed at 500 ms) runs as a real host in `tcplab emu` "
        "(`--endpoint server=tcplab`, its bulk source) and sends to a Linux receiver over the "
        "emulated 1 Mbit/s access link and GEO hop (RTT 540 ms), without and with tcplab's PEP. "
        "Utilisation is the sender's view of §3.1 (from its first data segment until the last "
        "byte is acknowledged, as the simulated figures measure it); the receiver's view (its "
        "request to its last byte, one round trip of the request in it) and the simulated "
        "sender on the same path beside it. Connection set-up and tear-down stay end to end "
        "through the PEP, as in the paper: the SYN-ACK and the FIN wait 540 ms for their ACK, so "
        "the fixed RTO retransmits them once or twice in every run (counted in the timeouts, "
        "outside the sender's time).",
        "",
        "| PEP | bytes | sender (% link) | receiver (% link) | simulated sender (% link) | "
        "timeouts: all / of data / spurious | retransmitted | sha256 |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {'yes' if r['pep'] else 'no'} | {r['size_bytes']:,} | "
            f"{100 * r['sender_bps'] / LINK_BPS:.1f} | {100 * r['receiver_bps'] / LINK_BPS:.1f} | "
            f"{100 * r['sim_sender_bps'] / LINK_BPS:.1f} | "
            f"{r['timeouts']} / {r['data_timeouts']} / {r['spurious_timeouts']} | "
            f"{r['retransmitted_segments']} | "
            f"{'ok' if r['sha256_ok'] else 'MISMATCH'} |"
        )
    n_small, n_big = sorted(set(SIZES.values()))
    lines += [
        "",
        f"- Without the PEP the paper's sender uses {100 * u[False]:.1f}% of the link: its "
        "fixed 500 ms RTO fires before the first ACK of every round (540 ms away), and the "
        "emulator's ground truth marks those timeouts spurious. Through the PEP the pseudo-ACKs "
        f"arrive at once and it uses {100 * u[True]:.0f}%: {ratio:.1f}x.",
        f"- Simulated without the PEP, {n_small:,} and {n_big:,} bytes give "
        f"{100 * sim_util[(False, n_small)]:.1f}% and {100 * sim_util[(False, n_big)]:.1f}% of "
        "the link: the smaller real file (a real run takes its real time) changes little.",
    ]
    linux = report.data.get("linux", {}).get("rows", [])
    lin = {r["pep"]: r["goodput_bps"] for r in linux if r["window"] == "64 KB windows"}
    if len(lin) == 2:
        lines.append(
            "- Linux's own sender (the section above, 64 KB windows) gets "
            f"{lin[True] / lin[False]:.1f}x from the PEP: its RTO is measured (RFC 6298), so it "
            "takes no spurious timeouts without the PEP; the paper's gain comes from a sender "
            "Linux cannot be set up to be."
        )
    report.section(title, "\n".join(lines))
    report.check(
        "paper's sender (real host) + PEP: link utilisation",
        Above(80),
        round(100 * u[True], 1),
        unit="%",
        note="tcplab's TCP as a real host over tcplab emu (one transfer, no CI)",
    )
    report.check(
        "paper's sender (real host): PEP / no PEP utilisation",
        AtLeast(15),
        round(ratio, 1),
        unit="x",
        note="tcplab's TCP as a real host over tcplab emu (one transfer per cell, no CI)",
    )
    report.check(
        "paper's sender (real host) without PEP: timeouts, of them spurious",
        Info(),
        f"{rows[0]['timeouts']} ({rows[0]['spurious_timeouts']})",
        note="the emulator's ground truth: a copy of the timed-out segment reached the receiver",
    )
    report.byte_exact(
        "paper's sender over the emulated GEO link: every file byte-exact",
        rows,
        note="checked on every transfer of this section",
    )
    fig, ax = plots.figure()
    x = np.arange(len(rows))
    ax.bar(x - 0.2, [100 * r["sender_bps"] / LINK_BPS for r in rows], 0.4, label="real time")
    ax.bar(x + 0.2, [100 * r["sim_sender_bps"] / LINK_BPS for r in rows], 0.4, label="simulated")
    paper_bounds(ax)
    ax.set_xticks(x, [f"{'PEP' if r['pep'] else 'no PEP'}\n{r['size_bytes']:,} B" for r in rows])
    ax.set_ylabel("sender goodput (% of the 1 Mbit/s link)")
    ax.set_ylim(0, 115)
    ax.set_title("The paper's sender (tcplab's TCP) as a real host", fontsize=9)
    ax.legend(loc="upper left", fontsize=8)
    path = plots.save(fig, report.out_dir / "paper_sender_real.png")
    report.figure(path, "The paper's sender as a real host over the emulated GEO link")


def reproduce(report: Report, jobs: int | None = None) -> None:
    """``tcplab reproduce spoofing-satellite --linux``: the reproduction with Linux's sender
    and the paper's sender as real hosts."""
    from tcplab.papers import spoofing_satellite

    spoofing_satellite.reproduce(report, jobs, linux=section)
