"""``tcplab reproduce asymmetric-link --linux``: the paper's testbed with real Linux hosts.

Real Linux downloads through ``tcplab emu`` over the emulated access link of the reproduction
(:func:`tcplab.papers.asymmetric_link.preset`: 10 Mbit/s Ethernet down, the testbed's PPP
8N1 serial uplink at 9.6-38.4 kbit/s up, queues of 50 packets), without and with the RFC 3449
ACK filter on the uplink. Throughput beside the paper's §3.1 curve (its 72-byte ACK frames),
its 32 kbit/s number and the ACK-clock bound 2·MSS / uplink delay of the ACKs Linux actually
sends, and tcplab's simulated ``stack = "linux"`` on the same path.
"""

from __future__ import annotations

import math
import os
import tempfile
from pathlib import Path
from typing import Any

from tcplab.campaign.sweep import run_configs
from tcplab.models.asymmetric import asym_bound
from tcplab.papers import real_host
from tcplab.report import plots
from tcplab.report.checks import AtMost, Info, Report
from tcplab.scenario.parse import parse_scenario

#: The testbed's uplink rates (Table 1).
UP_KBPS = (9.6, 19.2, 28.8, 38.4)
#: Linux's MSS with timestamps on a 1500-byte MTU, and its pure ACK: 40 B of headers plus the
#: 12-byte timestamps option.
LINUX_MSS = 1448
LINUX_ACK_IP = 52
#: Seconds of transfer each download is sized for (at the ACK-clock bound without filter).
SECONDS = 8.0


def linux_bound_bps(up_bps: float, framing: str = "ppp-8n1") -> float:
    """2·MSS per uplink ACK time for Linux's 52-byte ACKs on the uplink's framing (the §3.1
    bound with Linux's segment and ACK sizes; downlink framing as the paper's Ethernet)."""
    from tcplab.papers.asymmetric_link import FRAMINGS

    overhead, bits = FRAMINGS[framing]
    return asym_bound(
        10e6,
        up_bps,
        mss=LINUX_MSS,
        data_frame=1500 + 26,
        ack_frame=LINUX_ACK_IP + overhead,
        up_bits_per_byte=bits,
    )


def _path(up_kbps: float, ack_filter: bool) -> list[dict[str, Any]]:
    from tcplab.papers.asymmetric_link import preset

    return preset(up_kbps * 1e3, framing="ppp-8n1", ack_filter=ack_filter)["path"]


def real_download(up_kbps: float, ack_filter: bool, seed: int = 1) -> dict[str, Any]:
    """One real Linux download over the asymmetric link (read from ``--linux-cache`` when
    stored there)."""
    from tcplab.real import cache as linux_cache

    key = {"up_kbps": up_kbps, "ack_filter": ack_filter, "seed": seed,
           "path": _path(up_kbps, ack_filter), "size": download_size(up_kbps)}  # fmt: skip
    return linux_cache.cached(
        "asymmetric-download", key, lambda: _real_download(up_kbps, ack_filter, seed)
    )


def _real_download(up_kbps: float, ack_filter: bool, seed: int = 1) -> dict[str, Any]:
    from tcplab.real.transfer import download

    size = download_size(up_kbps)
    config = parse_scenario(
        {"name": "asymmetric-link-linux", "duration": "1s", "flows": [{}],
         "path": _path(up_kbps, ack_filter)},
        "asymmetric-link --linux",
    ).to_config(seed=seed)  # fmt: skip
    with tempfile.TemporaryDirectory() as d:
        r = download(Path(d), config, size, linger=1.0, timeout=120)
    s = r["summary"]
    down = next(x for x in s["links"] if x["dir"] == "fwd")
    up = next(x for x in s["links"] if x["dir"] == "rev")
    return {
        "up_kbps": up_kbps,
        "ack_filter": ack_filter,
        "size": size,
        "sha256_ok": r["sha256_ok"],
        "goodput_bps": size * 8 / r["duration_s"] if r["duration_s"] > 0 else math.nan,
        "data_packets": down["tx_packets"],
        "acks_sent": up["tx_packets"],
        "acks_filtered": up.get("acks_filtered", 0),
        "up_drops": up["drops_queue"],
        "down_drops": down["drops_queue"] + down["drops_loss"],
        "rtx": r["tcp_info"].get("total_retrans"),
    }


def download_size(up_kbps: float) -> int:
    """Bytes of one download: about :data:`SECONDS` at the ACK-clock bound without filter."""
    return int(linux_bound_bps(up_kbps * 1e3) * SECONDS / 8)


def sim_linux(up_kbps: float, ack_filter: bool) -> dict[str, Any]:
    """tcplab's ``stack = "linux"`` on the same path: the same download (its size), goodput
    to its last byte."""
    from tcplab.papers.asymmetric_link import preset

    table = preset(up_kbps * 1e3, framing="ppp-8n1", ack_filter=ack_filter, duration="120s")
    table["flows"] = [{"stack": "linux", "bytes": download_size(up_kbps)}]
    return parse_scenario(table, "asymmetric-link --linux (sim)").to_config()


def section(report: Report, jobs: int | None) -> None:
    from tcplab.papers.asymmetric_link import PAPER_32K_MBPS, PAPER_WINDOW

    title = "Real Linux hosts over the emulated asymmetric link (--linux)"
    if real_host.not_run(report, title):
        return
    m = real_host.measure(lambda: [real_download(k, f) for k in UP_KBPS for f in (False, True)])
    rows = m.rows
    sims = run_configs([sim_linux(k, f) for k in UP_KBPS for f in (False, True)], jobs)
    for row, s in zip(rows, sims, strict=True):
        row["sim_goodput_bps"] = float(s["flows"][0]["goodput_bps"])
        row["bound_bps"] = linux_bound_bps(row["up_kbps"] * 1e3)
        row["paper_model_bps"] = asym_bound(10e6, row["up_kbps"] * 1e3, window=PAPER_WINDOW)
        row["segments_per_ack"] = (
            row["data_packets"] / (row["acks_sent"] + row["acks_filtered"] + row["up_drops"])
            if row["acks_sent"]
            else math.nan
        )
    report.data["linux"] = {
        "rows": rows,
        "loadavg_before": m.load_before,
        "loadavg_after": m.load_after,
        "downloads_from_cache": m.from_cache,
    }
    lines = [
        f"Real Linux ({os.uname().release}, defaults: CUBIC, SACK, timestamps, autotuned "
        "buffers, delayed ACKs) downloads over `tcplab emu` with the reproduction's access "
        "link: 10 Mbit/s down, the testbed's PPP 8N1 serial uplink (8 bytes of framing per "
        "frame, 10 line bits per byte), 50-packet queues, no propagation delay; each download "
        f"sized for about {SECONDS:g} s at the bound, goodput from the request to the last byte "
        "at the client. The bound is the paper's §3.1 ACK clock with Linux's sizes: 2·1448 B "
        f"per uplink time of a {LINUX_ACK_IP}-byte ACK ({LINUX_ACK_IP + 8} B x 10 bits). "
        "'segments / ACK' is data packets over ACKs the receiver sent (forwarded, filtered and "
        "dropped at the uplink queue). " + real_host.load_sentence(m),
        "",
        "| uplink (kbit/s) | ACK filter | Linux goodput (Mbit/s) | ACK-clock bound, Linux "
        'ACKs (Mbit/s) | paper §3.1 curve (Mbit/s) | tcplab `stack = "linux"` (Mbit/s) | '
        "segments / ACK | ACKs filtered | uplink drops | downlink drops | rtx |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['up_kbps']:g} | {'on' if r['ack_filter'] else 'off'} | "
            f"{r['goodput_bps'] / 1e6:.3f} | {r['bound_bps'] / 1e6:.3f} | "
            f"{r['paper_model_bps'] / 1e6:.3f} | {r['sim_goodput_bps'] / 1e6:.3f} | "
            f"{r['segments_per_ack']:.2f} | {r['acks_filtered']} | {r['up_drops']} | "
            f"{r['down_drops']} | {r['rtx']} |"
        )
    off = [r for r in rows if not r["ack_filter"]]
    on = [r for r in rows if r["ack_filter"]]
    spread = [r["goodput_bps"] / 1e6 for r in on]
    frac = [r["goodput_bps"] / r["bound_bps"] for r in off]
    spa = [r["segments_per_ack"] for r in off]
    dropped = [r["up_kbps"] for r in on if r["up_drops"] or r["down_drops"]]
    lines += [
        "",
        f"- Without the filter Linux reaches {min(frac):.0%}-{max(frac):.0%} of the ACK-clock "
        f"bound, which assumes 2 segments per ACK; its receiver sent {min(spa):.2f}-"
        f"{max(spa):.2f} (more ACKs: quick ACKs at the start, window updates; fewer: ACKs that "
        "cover more than two segments), and goodput follows that ratio.",
        f"- With the filter the goodput ranges from {min(spread):.1f} to {max(spread):.1f} "
        "Mbit/s over these four rates (one download each); each ACK that gets through covers "
        "many segments, so the sender sends in bursts. "
        + (
            f"Packets were still dropped at {', '.join(f'{r:g}' for r in dropped)} kbit/s "
            "(drop and retransmission columns). "
            if dropped
            else "Nothing was dropped. "
        )
        + "Not the paper's experiment (RFC 3449 came later).",
        "- The paper's numbers: 1.2 Mbit/s at 32 kbit/s (simulation; theory 1.3), the testbed "
        "below theory; the curve is its §3.1 bound with 72-byte ACK frames, window 8760 B.",
        real_host.byte_exact_bullet(rows),
    ]
    report.section(title, "\n".join(lines))
    for r in off:
        report.check(
            f"Linux, {r['up_kbps']:g} kbit/s uplink, no filter: goodput / ACK-clock bound",
            AtMost(1.05),
            round(r["goodput_bps"] / r["bound_bps"], 3),
            paper="≤ 1 (the paper's §3.1 bound)",
            unit="x",
            note="real Linux over tcplab emu, one download; 5 % for the goodput's clock",
        )
    k32 = next(r for r in off if r["up_kbps"] == 38.4)
    report.check(
        "Linux, 38.4 kbit/s uplink, no filter: goodput",
        Info(f"paper at 32 kbit/s: about {PAPER_32K_MBPS[0]} Mbit/s (simulation)"),
        round(k32["goodput_bps"] / 1e6, 3),
        unit="Mbit/s",
    )
    for a, b in zip(off, on, strict=True):
        report.check(
            f"Linux, {a['up_kbps']:g} kbit/s uplink: ACK filter gain",
            Info("RFC 3449 §5.2.1: beyond the paper"),
            round(b["goodput_bps"] / a["goodput_bps"], 2),
            unit="x",
        )
    report.check(
        "Linux, 38.4 kbit/s uplink, no filter: real / tcplab's linux stack",
        Info("how far the real stack and tcplab's model differ"),
        round(k32["goodput_bps"] / k32["sim_goodput_bps"], 2),
        unit="x",
    )
    report.byte_exact(
        "Linux over the emulated asymmetric link: every file byte-exact",
        rows,
        note=f"{len(rows)} real downloads",
    )
    _figure(report, rows)


def _figure(report: Report, rows: list[dict[str, Any]]) -> None:
    from tcplab.papers.asymmetric_link import PAPER_32K_MBPS, PAPER_WINDOW

    fig, ax = plots.figure()
    w, h = fig.get_size_inches()
    fig.set_size_inches(w * 1.45, h)  # room for the legend beside the axes
    xs = [8, 10, 15, 20, 25, 30, 35, 40]
    ax.plot(xs, [asym_bound(10e6, k * 1e3, window=PAPER_WINDOW) / 1e6 for k in xs], "k--",
            label="paper §3.1 curve (72 B ACK frames)")  # fmt: skip
    ax.plot(xs, [linux_bound_bps(k * 1e3) / 1e6 for k in xs], "k:",
            label="ACK-clock bound, Linux ACKs on PPP 8N1")  # fmt: skip
    plots.mark_paper(ax, [32, 32], list(PAPER_32K_MBPS), label="paper 32 kbit/s (1.2-1.3)")
    for filt, marker, color in ((False, "o", "C0"), (True, "s", "C1")):
        rs = [r for r in rows if r["ack_filter"] == filt]
        name = "with ACK filter" if filt else "no ACK filter"
        ax.plot([r["up_kbps"] for r in rs], [r["goodput_bps"] / 1e6 for r in rs], marker + "-",
                color=color, label=f"real Linux, {name}")  # fmt: skip
        ax.plot([r["up_kbps"] for r in rs], [r["sim_goodput_bps"] / 1e6 for r in rs],
                marker, color=color, mfc="none", ls=":",
                label=f"tcplab linux stack, {name}")  # fmt: skip
    ax.set_xlabel("uplink rate [kbit/s]")
    ax.set_ylabel("goodput [Mbit/s]")
    ax.set_ylim(0, None)
    ax.set_title("Real Linux over the emulated 10 Mbit/s / slow-uplink link")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    report.figure(
        plots.save(fig, report.out_dir / "linux_uplink.png"),
        "Real Linux: throughput vs uplink rate, with and without the ACK filter, beside the "
        "paper's curve and the ACK-clock bound",
    )


def reproduce(report: Report, jobs: int | None = None) -> None:
    """``tcplab reproduce asymmetric-link --linux``: the paper's reproduction with this module's
    real-Linux :func:`section` in it."""
    from tcplab.papers import asymmetric_link

    asymmetric_link.reproduce(report, jobs, linux=section)
