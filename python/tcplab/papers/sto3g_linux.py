"""``tcplab reproduce sto-3g --linux``: the paper's Fig. 7 with the real Linux stack.

Real Linux downloads of the paper's four contents over the emulated W-CDMA bearer
(``kind = "rlc"``, a moving preset with its delay spikes) through ``tcplab emu``, once with
``net.ipv4.tcp_frto = 0`` and once with ``2`` (Linux's F-RTO), set in the namespaces the
emulator creates (``tcp_frto`` is per network namespace). The counts come from two sides that
do not depend on each other: the sender's own ``TCP_INFO`` (how many retransmission timeouts
fired, ``tcpi_total_rto``, and in how many episodes, ``tcpi_total_rto_recoveries``) and the
emulator's ground truth (which forwarded retransmissions were unnecessary: their original had
already reached the receiver). Beside them, tcplab's simulated ``frto-linux`` on the same
preset: the Fig. 7 runs of this report (W-TCP, tuned RTO) and a run matched to the real one
(``stack = "linux"``, no timestamps, the same minimum RTO, a 64 KiB receive window).
"""

from __future__ import annotations

import math
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from tcplab.campaign.sweep import run_configs
from tcplab.papers import real_host
from tcplab.report import plots
from tcplab.report.checks import AtLeast, Factor, Info, Report
from tcplab.scenario.parse import parse_scenario
from tcplab.stats import ratio_ci95

#: The moving preset of the real runs (Fig. 7's environment, the most delay spikes).
PRESET = "train"
#: The paper's contents (``sto3g.CONTENTS``) and real downloads per content and setting.
DOWNLOADS = {"6KB": 8, "18KB": 8, "300KB": 8, "2MB": 96}
DOWNLOADS_QUICK = {"6KB": 4, "18KB": 4, "300KB": 4, "2MB": 6}
FRTO = (0, 2)
#: The lowest minimum RTO Linux takes (``tcp_rto_min_us`` ≥ 1 µs; the timer then fires one
#: jiffy after SRTT + 4·mdev at the earliest).
RTO_MIN_US = 1
#: Set in both namespaces besides ``tcp_frto``: W-TCP has no timestamps, and with them Linux
#: undoes a timeout by them (Eifel detection) whatever ``tcp_frto`` says.
SYSCTLS = {"net.ipv4.tcp_timestamps": "0", "net.ipv4.tcp_rto_min_us": str(RTO_MIN_US)}
#: The client's SO_RCVBUF: W-TCP's 64 KiB window (Linux advertises about half of the
#: doubled buffer it keeps).
RCVBUF = 64 * 1024
#: Concurrent emulations (each is a pair of namespaces and an emulator thread).
PARALLEL = 4


def _jiffy_ms() -> float:
    """The running kernel's timer tick (``CONFIG_HZ``; the RTO is counted in these), or 1 ms
    when its configuration cannot be read."""
    import gzip
    import os
    import re

    for path in (f"/boot/config-{os.uname().release}", "/proc/config.gz"):
        try:
            raw = Path(path).read_bytes()
            if path.endswith(".gz"):
                raw = gzip.decompress(raw)
        except OSError:
            continue
        m = re.search(rb"^CONFIG_HZ=(\d+)$", raw, re.MULTILINE)
        if m:
            return 1000.0 / int(m.group(1))
    return 1.0


def real_download(preset: str, size: int, frto: int, seed: int) -> dict[str, Any]:
    """One real Linux download over the ``preset`` bearer (emulator seed ``seed``): the
    sender's TCP_INFO counts and the emulator's truth about its retransmissions (read from
    ``--linux-cache`` when stored there)."""
    from tcplab.real import cache as linux_cache

    key = {"preset": preset, "size": size, "frto": frto, "seed": seed, "sysctls": SYSCTLS,
           "rcvbuf": RCVBUF}  # fmt: skip
    return linux_cache.cached(
        "sto3g-download", key, lambda: _real_download(preset, size, frto, seed)
    )


def _real_download(preset: str, size: int, frto: int, seed: int) -> dict[str, Any]:
    from tcplab.real.transfer import download

    config = parse_scenario(
        {"name": f"sto3g-linux-{preset}", "duration": "1s", "flows": [{}],
         "path": [{"kind": "rlc", "name": "radio", "preset": preset}]},
        "sto3g --linux",
    ).to_config(seed=seed)  # fmt: skip
    sysctls = {**SYSCTLS, "net.ipv4.tcp_frto": str(frto)}
    with tempfile.TemporaryDirectory() as d:
        r = download(Path(d), config, size, sysctls=sysctls, rcvbuf=RCVBUF, linger=1.0,
                     timeout=60 + size * 8 / 384e3 * 4)  # fmt: skip
    s = r["summary"]
    data = max(s["connections"], key=lambda c: c["data_bytes"])
    radio = next(x for x in s["links"] if x["dir"] == "fwd")
    ti = r["tcp_info"]
    return {
        "preset": preset,
        "size": size,
        "frto": frto,
        "seed": seed,
        "sha256_ok": r["sha256_ok"],
        "duration_s": r["duration_s"],
        "delivered": r["bytes"],
        "timeouts": ti.get("total_rto"),
        "episodes": ti.get("total_rto_recoveries"),
        "linux_retrans": ti.get("total_retrans"),
        "netstat_timeouts": r["netstat"].get("TcpExt.TCPTimeouts"),
        "spurious_rtos_linux": r["netstat"].get("TcpExt.TCPSpuriousRTOs"),
        "rtx": data["retransmitted_segments"],
        "rtx_unnecessary": data["spurious_retransmissions"],
        "stalls": radio.get("stalls"),
        "violations": len(s.get("violations", [])),
    }


def real_runs(report: Report, contents: dict[str, int]) -> list[dict[str, Any]]:
    """Every real download of the section, paired: seed k of a content runs with both
    ``tcp_frto`` settings (the same spike schedule in the emulator's time)."""
    from tcplab.papers.sto3g import CONTENTS

    n = DOWNLOADS_QUICK if report.quick else DOWNLOADS
    jobs = [
        (PRESET, contents[name], frto, 1000 + k)
        for name in CONTENTS
        for k in range(n[name])
        for frto in FRTO
    ]
    # Longest first: the pool's tail is then short downloads.
    jobs.sort(key=lambda j: -j[1])
    with ThreadPoolExecutor(PARALLEL) as pool:
        return list(pool.map(lambda j: real_download(*j), jobs))


def real_measures(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Per content size: spurious-timeout episodes per MB and unnecessary retransmissions per
    spurious timeout (downloads with at least one timeout whose every retransmission the
    emulator found unnecessary, as ``sto3g.unnecessary_per_sto`` takes connections whose
    every timeout was spurious), with the downloads' 95% CI."""
    ok = [r for r in rows if r["timeouts"] is not None]
    verified = [r for r in ok if r["rtx"] == r["rtx_unnecessary"]]
    with_sto = [r for r in verified if r["timeouts"] > 0]
    num = [float(r["rtx_unnecessary"]) for r in with_sto]
    den = [float(r["timeouts"]) for r in with_sto]
    unn, unn_ci = ratio_ci95(num, den) if sum(den) else (math.nan, math.nan)
    mb = sum(r["delivered"] for r in rows) / 1e6
    episodes = sum(r["episodes"] for r in verified)
    return {
        "downloads": len(rows),
        "mb": mb,
        "timeouts": sum(den),
        "episodes": episodes,
        "sto_per_mb": episodes / mb if mb else math.nan,
        "unnecessary_per_sto": unn,
        "unnecessary_ci": unn_ci,
        "unnecessary_total": sum(num),
        "with_genuine_rtx": len(ok) - len(verified),
        "timeouts_unverified": sum(r["timeouts"] for r in ok if r not in verified),
        "no_tcp_info": len(rows) - len(ok),
    }


#: The simulated variants: the real runs' two settings, and ``frto-linux`` with the RFC 6675
#: DupThresh loss detection instead of the stack's RACK (which tells where tcplab's model and
#: the real stack part after a spurious timeout).
SIM_VARIANTS: dict[str, dict[str, Any]] = {
    "none": {},
    "frto-linux": {},
    "frto-linux+dupthresh": {"loss_detection": "dupthresh"},
}


#: tcplab's simulated counterpart of the real runs: Linux's stack as tcplab models it
#: (docs/linux-stack.md) with the real runs' settings.
def matched_tcp(detection: str) -> dict[str, Any]:
    g = f"{_jiffy_ms():g}ms"
    return {
        # the stack's keys, then these (a flow's own keys override its stack)
        "stack": "linux",
        "timestamps": False,
        "mss": 1460,
        "rcv_buf": "64KiB",
        "rto": {"profile": "linux", "min": g, "granularity": g},
        "spurious_detection": detection.split("+")[0],
    }


def sim_matched(contents: dict[str, int], quick: bool, jobs: int | None) -> dict[str, Any]:
    """The simulated Linux stack on the same preset: none vs frto-linux, per content."""
    from tcplab.papers import sto3g

    n, seeds = (40, 4) if quick else (100, 8)
    cfgs = []
    keys = []
    for name in contents:
        for det in SIM_VARIANTS:
            for s in range(seeds):
                data = {
                    "name": f"sto3g-linux-sim-{PRESET}",
                    "duration": "7200s",
                    "seed": s,
                    "sample_interval": "0s",
                    "path": [{"kind": "rlc", "name": "radio", "preset": PRESET}],
                    "flows": [
                        {
                            "name": "download",
                            "app": "downloads",
                            "sizes": name,
                            "think": "2s",
                            "downloads": n if name != "2MB" else max(8, n // 3),
                            **matched_tcp(det),
                            **SIM_VARIANTS[det],
                        }
                    ],
                }
                cfgs.append(parse_scenario(data).to_config())
                keys.append((name, det))
    res = run_configs(cfgs, jobs, columns=True)
    out: dict[str, dict[str, Any]] = {}
    for name in contents:
        out[name] = {}
        for det in SIM_VARIANTS:
            rs = [r for r, k in zip(res, keys, strict=True) if k == (name, det)]
            tot = [sto3g.unnecessary_per_sto(r) for r in rs]
            num = [x[0] * x[1] if x[1] else 0.0 for x in tot]
            den = [float(x[1]) for x in tot]
            unn, ci = ratio_ci95(num, den) if sum(den) else (math.nan, math.nan)
            out[name][det] = {
                "unnecessary_per_sto": unn,
                "unnecessary_ci": ci,
                "timeouts": sum(den),
                "sto_per_mb": float(np.mean([sto3g.sto_per_mb(r) for r in rs])),
            }
    return out


def _fmt(x: float, ci: float | None = None) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    if ci is None or math.isnan(ci):
        return f"{x:.2f}"
    return f"{x:.2f} ± {ci:.2f}"


def section(report: Report, jobs: int | None) -> None:
    """The ``--linux`` section of the sto-3g reproduction (its checks and figure)."""
    import os

    from tcplab.papers.sto3g import CONTENTS, FACTOR

    title = f"Fig. 7 with real Linux TCP over the emulated 3G bearer (--linux, {PRESET})"
    if real_host.not_run(report, title):
        return
    m = real_host.measure(lambda: real_runs(report, CONTENTS))
    rows = m.rows
    real = {
        name: {
            f: real_measures([r for r in rows if r["size"] == size and r["frto"] == f])
            for f in FRTO
        }
        for name, size in CONTENTS.items()
    }
    sim = sim_matched(CONTENTS, report.quick, jobs)
    fig7 = report.data.get("fig78", {}).get("unnecessary", {})
    report.data["linux"] = {
        "preset": PRESET,
        "sysctls": SYSCTLS,
        "rcvbuf": RCVBUF,
        "loadavg_before": m.load_before,
        "loadavg_after": m.load_after,
        "downloads": rows,
        "downloads_from_cache": m.from_cache,
        "real": real,
        "sim_matched": sim,
    }
    lines = [
        f"Real Linux ({os.uname().release}) downloads of the paper's four contents over the "
        f'emulated `{PRESET}` bearer (`kind = "rlc"`, its own delay spikes and block errors; '
        "one emulation per download, emulator seeds 1000, 1001, ... and the same seeds for "
        "both settings), with `net.ipv4.tcp_frto = 0` and `= 2` set in the emulator's "
        f"namespaces, `tcp_timestamps = 0` (W-TCP has none; with them Linux undoes a timeout "
        f"by them whatever `tcp_frto` says) and `tcp_rto_min_us = {RTO_MIN_US}` (the lowest "
        f"Linux takes; its timer has {_jiffy_ms():g} ms jiffies here), the client's SO_RCVBUF "
        f"{RCVBUF // 1024} KiB (W-TCP's window), everything else Linux's defaults (CUBIC, "
        "SACK, IW 10, TLP). Timeouts are the sender's own count (`TCP_INFO`: "
        "`tcpi_total_rto`, episodes `tcpi_total_rto_recoveries`); a retransmission is "
        "unnecessary when the emulator saw its original reach the receiver first. A download's "
        "timeouts are spurious when every retransmission it sent was unnecessary (nothing is "
        "lost on this bearer but by RLC discard or queue overflow); unnecessary "
        "retransmissions per spurious timeout is their sum over the sum of those downloads' "
        "timeouts, with the 95% CI over downloads. "
        + real_host.load_sentence(
            m, "Load average (1, 5, 15 min)", f" ({PARALLEL} emulations at a time)"
        ),
        "",
        "| content | tcp_frto | downloads | MB | timeouts | STO episodes / MB | "
        'unnecessary rtx / STO | tcplab `stack = "linux"` (none / frto-linux) | '
        "tcplab frto-linux, DupThresh | tcplab Fig. 7, W-TCP (off / frto-linux) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name in CONTENTS:
        for f in FRTO:
            m = real[name][f]
            det = "none" if f == 0 else "frto-linux"
            v = "off" if f == 0 else "F-RTO Linux+Eifel"
            sm = sim[name][det]
            f7 = fig7.get(name, {}).get(v, math.nan)
            dt = sim[name]["frto-linux+dupthresh"]
            dup = (
                f"{_fmt(dt['unnecessary_per_sto'], dt['unnecessary_ci'])} "
                f"(STO/MB {dt['sto_per_mb']:.2f})"
                if f == 2
                else ""
            )
            extra = (
                f" ({m['with_genuine_rtx']} with a genuine rtx, {m['timeouts_unverified']} "
                "timeouts not counted)"
                if m["with_genuine_rtx"]
                else ""
            )
            lines.append(
                f"| {name} | {f} | {m['downloads']} | {m['mb']:.2f} | {m['timeouts']:.0f}{extra} "
                f"| {m['sto_per_mb']:.2f} | {_fmt(m['unnecessary_per_sto'], m['unnecessary_ci'])} "
                f"| {_fmt(sm['unnecessary_per_sto'], sm['unnecessary_ci'])} "
                f"(STO/MB {sm['sto_per_mb']:.2f}) | {dup} | {_fmt(f7)} |"
            )
    a, b = real["2MB"][0], real["2MB"][2]
    ua, ub = a["unnecessary_per_sto"], b["unnecessary_per_sto"]
    cut = ua / ub if ub and not math.isnan(ub) and ub > 0 else math.nan
    cut_ci = (
        cut * math.hypot(a["unnecessary_ci"] / ua, b["unnecessary_ci"] / ub)
        if ua and ub and not (math.isnan(a["unnecessary_ci"]) or math.isnan(b["unnecessary_ci"]))
        else None
    )
    sa = sim["2MB"]["none"]["unnecessary_per_sto"]
    sb = sim["2MB"]["frto-linux"]["unnecessary_per_sto"]
    sim_cut = sa / sb if sb and sb > 0 else math.nan
    lines += [
        "",
        f"- 2 MB: `tcp_frto = 2` cuts unnecessary retransmissions per spurious timeout from "
        f"{_fmt(ua)} to {_fmt(ub)}, {cut:.1f}x (paper, W-TCP: 28 → 3, 9.3x; tcplab's simulated "
        f"Linux stack on the same preset: {_fmt(sa)} → {_fmt(sb)}, {sim_cut:.1f}x).",
        f"- Real Linux against tcplab's `frto-linux` (matched simulation) at 2 MB: "
        f"{_fmt(ub)} vs {_fmt(sb)} unnecessary rtx per STO with F-RTO, {_fmt(ua)} vs {_fmt(sa)} "
        "without; spurious-timeout episodes per MB "
        f"{b['sto_per_mb']:.2f} vs {sim['2MB']['frto-linux']['sto_per_mb']:.2f} (with), "
        f"{a['sto_per_mb']:.2f} vs {sim['2MB']['none']['sto_per_mb']:.2f} (without).",
        f"- tcplab's `frto-linux` with the `linux` stack's RACK loss detection retransmits "
        f"{_fmt(sb)} segments per STO at 2 MB, with DupThresh loss detection "
        f'(`loss_detection = "dupthresh"`) '
        f"{_fmt(sim['2MB']['frto-linux+dupthresh']['unnecessary_per_sto'])}. (Before "
        "RACK.rtt followed Linux's order — the RTT of the highest-sequence segment an ACK "
        "delivers, `tcp_rack_advance` — the ACK that delivered the head's RTO retransmission "
        "with the delayed originals set RACK.rtt to the retransmission's short RTT and marked "
        "every original still in flight lost: 27.7 per STO, a go-back-N after F-RTO's "
        "verdict; docs/linux-stack.md, RACK.)",
        real_host.byte_exact_bullet(rows),
    ]
    report.section(title, "\n".join(lines))
    report.check(
        "Linux Fig. 7 2MB: tcp_frto 0 / 2 unnecessary rtx per STO",
        AtLeast(5),
        round(cut, 2) if not math.isnan(cut) else math.nan,
        ci=cut_ci,
        paper="≈ 9.3 (28 / 3); the issue: ≥ 5",
        unit="x",
        note=f"real Linux over tcplab emu, {PRESET}; {a['timeouts']:.0f} / {b['timeouts']:.0f} "
        "timeouts counted",
    )
    for f, paper, label in ((0, 28.0, "tcp_frto = 0"), (2, 3.0, "tcp_frto = 2")):
        m = real["2MB"][f]
        report.check(
            f"Linux Fig. 7 2MB {label}",
            Factor(paper, FACTOR),
            m["unnecessary_per_sto"],
            ci=m["unnecessary_ci"],
            unit="pkts/STO",
            note="the paper's W-TCP terminal; Linux's own window, IW and recovery",
        )
    for f, det in ((0, "none"), (2, "frto-linux")):
        report.check(
            f"Linux vs tcplab `stack = linux` 2MB, {det}: real / simulated",
            Info("how far the real stack and tcplab's model differ"),
            round(real["2MB"][f]["unnecessary_per_sto"] / sim["2MB"][det]["unnecessary_per_sto"], 2)
            if sim["2MB"][det]["unnecessary_per_sto"]
            else math.nan,
            unit="x",
        )
    report.byte_exact(
        "Linux over the emulated 3G bearer: every file byte-exact",
        rows,
        note=f"{len(rows)} real downloads",
    )
    _figure(report, real, sim, fig7)


def _figure(
    report: Report,
    real: dict[str, dict[int, dict[str, Any]]],
    sim: dict[str, dict[str, Any]],
    fig7: dict[str, dict[str, float]],
) -> None:
    from tcplab.papers.sto3g import CONTENTS

    fig, ax = plots.figure(ncols=2)
    names = list(CONTENTS)
    x = np.arange(len(names))
    series = [
        ("real Linux, tcp_frto = 0", [real[c][0]["unnecessary_per_sto"] for c in names],
         [real[c][0]["unnecessary_ci"] for c in names], "C0", None),
        ("real Linux, tcp_frto = 2", [real[c][2]["unnecessary_per_sto"] for c in names],
         [real[c][2]["unnecessary_ci"] for c in names], "C1", None),
        ("tcplab linux stack, none", [sim[c]["none"]["unnecessary_per_sto"] for c in names],
         [sim[c]["none"]["unnecessary_ci"] for c in names], "C0", "//"),
        ("tcplab linux stack, frto-linux",
         [sim[c]["frto-linux"]["unnecessary_per_sto"] for c in names],
         [sim[c]["frto-linux"]["unnecessary_ci"] for c in names], "C1", "//"),
    ]  # fmt: skip
    wd = 0.8 / len(series)
    for j, (label, ys, cis, color, hatch) in enumerate(series):
        off = (j - (len(series) - 1) / 2) * wd
        y = np.array([0.0 if math.isnan(v) else v for v in ys])
        err = [0.0 if (math.isnan(e) or math.isnan(v)) else min(e, 0.95 * v)
               for v, e in zip(ys, cis, strict=True)]  # fmt: skip
        ax[0].bar(x + off, y, wd, yerr=err, capsize=2, color=color, hatch=hatch,
                  alpha=1.0 if hatch is None else 0.45, label=label)  # fmt: skip
    for i, c in enumerate(names):
        for f, off in ((0, -1.5 * wd), (2, -0.5 * wd)):
            if math.isnan(real[c][f]["unnecessary_per_sto"]):
                ax[0].annotate("no STO", (x[i] + off, 0.05), rotation=90, ha="center",
                               va="bottom", fontsize=6)  # fmt: skip
    i2 = names.index("2MB")
    plots.mark_paper(ax[0], [x[i2] - 1.5 * wd, x[i2] - 0.5 * wd], [28.0, 3.0])
    ax[0].set_yscale("symlog", linthresh=1)
    ax[0].set_ylim(0, 200)
    ax[0].set_xticks(x, names)
    ax[0].set_xlabel("content size")
    ax[0].set_ylabel("unnecessary retransmissions per STO (packets)")
    ax[0].set_title(f"Fig. 7 with real Linux ({PRESET})")
    ax[0].legend(fontsize=7, loc="upper left")
    wd2 = 0.35
    ax[1].bar(x - wd2 / 2, [real[c][0]["sto_per_mb"] for c in names], wd2 / 2, color="C0",
              label="real, tcp_frto = 0")  # fmt: skip
    ax[1].bar(x, [real[c][2]["sto_per_mb"] for c in names], wd2 / 2, color="C1",
              label="real, tcp_frto = 2")  # fmt: skip
    ax[1].bar(x + wd2 / 2, [sim[c]["frto-linux"]["sto_per_mb"] for c in names], wd2 / 2,
              color="C1", hatch="//", alpha=0.45,
              label="tcplab linux stack, frto-linux")  # fmt: skip
    ax[1].set_xticks(x, names)
    ax[1].set_xlabel("content size")
    ax[1].set_ylabel("spurious-timeout episodes per MB")
    ax[1].set_title("STO per MB (real: the sender's count, emulator's truth)")
    ax[1].legend(fontsize=7)
    _ = fig7
    report.figure(
        plots.save(fig, report.out_dir / "linux_fig7.png"),
        "Fig. 7 with real Linux: unnecessary retransmissions per spurious timeout and STO "
        "episodes per MB, real stack beside tcplab's simulated Linux stack",
    )


#: W-TCP as a real host: the content (the paper's largest, where Fig. 7 compares), downloads
#: per variant (the same emulator seeds for both) and the longest a download may take.
WTCP_SIZE = 2_000_000
WTCP_DOWNLOADS = 6
WTCP_DOWNLOADS_QUICK = 2
WTCP_TIME_LIMIT_S = 400.0
#: variant -> (spurious_detection, spurious_response), as Fig. 7's "off" and "F-RTO+Eifel".
WTCP_VARIANTS = {"off": ("none", "eifel"), "F-RTO+Eifel": ("frto", "eifel")}
#: Simulated seeds of the prediction beside the real downloads (cheap: simulated time).
WTCP_SIM_SEEDS = 40
#: Keys over the preset's in the bearer of this section (none: the preset as it is).
WTCP_RADIO: dict[str, Any] = {}


def wtcp_config(variant: str, size: int, seed: int) -> dict[str, Any]:
    """The sto-3g scenario's sender (W-TCP profile, tuned RTO, ``variant``'s detector and
    response) sending ``size`` bytes once over the ``PRESET`` bearer."""
    det, resp = WTCP_VARIANTS[variant]
    data = {
        "name": f"sto3g-wtcp-{PRESET}",
        "duration": "3600s",
        "seed": seed,
        "sample_interval": "0s",
        "path": [{"kind": "rlc", "name": "radio", "preset": PRESET, **WTCP_RADIO}],
        "flows": [
            {
                "name": "download",
                "profile": "w-tcp",
                "rto": "tuned-3g",
                "spurious_detection": det,
                "spurious_response": resp,
                # The profile's 1460 bytes and the timestamp option do not fit a real
                # 1500-byte MTU (the endpoint refuses them): 1448, as Linux sends.
                "mss": 1448,
                "bytes": size,
            }
        ],
    }
    return parse_scenario(data, "sto3g --linux").to_config()


def wtcp_real(variant: str, size: int, seed: int) -> dict[str, Any]:
    """One real-time transfer of W-TCP (tcplab's endpoint) to a Linux reader with W-TCP's
    64 KiB receive buffer (read from ``--linux-cache`` when stored there)."""
    from tcplab.real import cache as linux_cache

    def run() -> dict[str, Any]:
        from tcplab.real.transfer import endpoint_sender

        m = endpoint_sender(
            wtcp_config(variant, size, seed), size, time_limit_s=WTCP_TIME_LIMIT_S, rcvbuf=RCVBUF
        )
        return {"variant": variant, "size": size, "seed": seed, **m}

    # A list, not the tuple: the stored key must read back equal (JSON has no tuples).
    key = {"variant": list(WTCP_VARIANTS[variant]), "size": size, "seed": seed, "preset": PRESET,
           "radio": WTCP_RADIO, "rcvbuf": RCVBUF}  # fmt: skip
    return linux_cache.cached("sto3g-wtcp-sender", key, run)


def wtcp_measures(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Over downloads: timeouts (all, spurious by the emulator's truth, declared spurious by
    the sender's detector), spurious timeouts per MB, unnecessary retransmissions per spurious
    timeout (downloads with a timeout whose every retransmission was unnecessary, as
    :func:`real_measures`), and the mean sender-view goodput."""
    with_sto = [
        r
        for r in rows
        if r["data_timeouts"] > 0
        and r["retransmitted_segments"] == r["unnecessary_retransmissions"]
    ]
    num = [float(r["unnecessary_retransmissions"]) for r in with_sto]
    den = [float(r["data_timeouts"]) for r in with_sto]
    unn, ci = ratio_ci95(num, den) if sum(den) else (math.nan, math.nan)
    mb = len(rows) * WTCP_SIZE / 1e6
    return {
        "downloads": len(rows),
        "timeouts": sum(r["data_timeouts"] for r in rows),
        "spurious": sum(r["spurious_timeouts"] for r in rows),
        "detected": sum(r["spurious_detected"] for r in rows),
        "sto_per_mb": sum(r["spurious_timeouts"] for r in rows) / mb,
        "unnecessary_per_sto": unn,
        "unnecessary_ci": ci,
        "goodput_bps": float(np.mean([r["sender_bps"] for r in rows])),
    }


def _sim_measures(res: list[dict[str, Any]]) -> dict[str, Any]:
    from tcplab.papers import sto3g

    per = [sto3g.unnecessary_per_sto(r) for r in res]
    num = [x[0] * x[1] if x[1] else 0.0 for x in per]
    den = [float(x[1]) for x in per]
    unn, ci = ratio_ci95(num, den) if sum(den) else (math.nan, math.nan)
    flows = [r["flows"][0] for r in res]
    mb = sum(f["bytes_delivered"] for f in flows) / 1e6
    return {
        "downloads": len(res),
        "timeouts": sum(int(f["timeouts"]) for f in flows),
        "spurious": sum(int(f["spurious_timeouts"]) for f in flows),
        "detected": sum(int(f["spurious_detected"]) for f in flows),
        "sto_per_mb": sum(int(f["spurious_timeouts"]) for f in flows) / mb if mb else math.nan,
        "unnecessary_per_sto": unn,
        "unnecessary_ci": ci,
        "goodput_bps": float(np.mean([f["goodput_bps"] for f in flows])),
    }


def wtcp_section(report: Report, jobs: int | None) -> None:
    """W-TCP (tcplab's endpoint) as a real host over the emulated bearer to a Linux reader,
    off and with F-RTO + Eifel, beside the simulator's run of the same configurations."""
    import os

    title = f"W-TCP as a real host: tcplab's TCP in the emulator (--linux, {PRESET})"
    if real_host.not_run(report, title):
        return
    n = WTCP_DOWNLOADS_QUICK if report.quick else WTCP_DOWNLOADS
    jobs_real = [(v, WTCP_SIZE, 2000 + k) for k in range(n) for v in WTCP_VARIANTS]
    # One at a time: the endpoint runs in this process (its signal handlers need the main
    # thread).
    m = real_host.measure(lambda: [wtcp_real(*j) for j in jobs_real])
    rows, load0, load1 = m.rows, m.load_before, m.load_after
    real = {v: wtcp_measures([r for r in rows if r["variant"] == v]) for v in WTCP_VARIANTS}
    # The simulator: the same configurations with the same seeds, and a larger sample.
    same_cfgs = [wtcp_config(v, WTCP_SIZE, s) for v, _, s in jobs_real]
    pred_keys = [(v, s) for v in WTCP_VARIANTS for s in range(WTCP_SIM_SEEDS)]
    pred_cfgs = [wtcp_config(v, WTCP_SIZE, 3000 + s) for v, s in pred_keys]
    res = run_configs(same_cfgs + pred_cfgs, jobs, columns=True)
    same_res, pred_res = res[: len(same_cfgs)], res[len(same_cfgs) :]
    same = {
        v: _sim_measures([r for r, j in zip(same_res, jobs_real, strict=True) if j[0] == v])
        for v in WTCP_VARIANTS
    }
    pred = {
        v: _sim_measures([r for r, k in zip(pred_res, pred_keys, strict=True) if k[0] == v])
        for v in WTCP_VARIANTS
    }
    report.data["wtcp_real"] = {
        "preset": PRESET,
        "size_bytes": WTCP_SIZE,
        "rcvbuf": RCVBUF,
        "loadavg_before": load0,
        "loadavg_after": load1,
        "downloads": rows,
        "real": real,
        "sim_same_seeds": same,
        "sim_prediction": pred,
    }
    lines = [
        "The paper's sender itself — tcplab's TCP configured as the sto-3g scenario's W-TCP "
        "(64 KB window, 4 KB initial window, SACK, timestamps, the tuned RTO; MSS 1448, what "
        "a 1500-byte MTU carries with the timestamp option), without a "
        "spurious-timeout detector (`off`) and with F-RTO and the Eifel response — runs as a "
        "real host in `tcplab emu` (`--endpoint server=tcplab`, its bulk source) and sends "
        f"{WTCP_SIZE / 1e6:g} MB to a Linux reader (SO_RCVBUF {RCVBUF // 1024} KiB) over the "
        f"emulated `{PRESET}` bearer; {n} download(s) per variant, emulator seeds 2000, 2001, ... "
        "(the same for both). Timeouts are the sender's timeouts of data; spurious by the "
        "emulator's truth (a copy of the timed-out segment had reached the reader); detected "
        "is what F-RTO declared spurious. Unnecessary retransmissions per STO as in the Linux "
        "section above. Goodput is the sender's view (first data segment to last byte "
        "acknowledged). Beside it: the simulator's run of the same configurations with the "
        f"same seeds (its own clock: the spikes fall at the same times, the packets not quite), "
        f"and its prediction over {WTCP_SIM_SEEDS} other seeds. Load average before "
        f"{load0[0]:.2f}, after {load1[0]:.2f} on {os.cpu_count()} cores (one emulation at a "
        "time).",
        "",
        "| variant | run | downloads | timeouts | spurious (truth) | detected | STO / MB | "
        "unnecessary rtx / STO | goodput (kbit/s) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for v in WTCP_VARIANTS:
        for label, m in (("real host", real[v]), ("simulated, same seeds", same[v]),
                         (f"simulated, {WTCP_SIM_SEEDS} seeds", pred[v])):  # fmt: skip
            lines.append(
                f"| {v} | {label} | {m['downloads']} | {m['timeouts']} | {m['spurious']} | "
                f"{m['detected']} | {m['sto_per_mb']:.2f} | "
                f"{_fmt(m['unnecessary_per_sto'], m['unnecessary_ci'])} | "
                f"{m['goodput_bps'] / 1e3:.0f} |"
            )
    a, b = real["off"], real["F-RTO+Eifel"]
    lines += [
        "",
        f"- Real host: F-RTO declared {b['detected']} of its {b['spurious']} spurious "
        f"timeouts spurious; unnecessary retransmissions per STO {_fmt(a['unnecessary_per_sto'])} "
        f"off, {_fmt(b['unnecessary_per_sto'])} with F-RTO + Eifel (paper, 2 MB: 28 → 3; "
        f"simulated prediction {_fmt(pred['off']['unnecessary_per_sto'])} → "
        f"{_fmt(pred['F-RTO+Eifel']['unnecessary_per_sto'])}). Goodput "
        f"{a['goodput_bps'] / 1e3:.0f} and {b['goodput_bps'] / 1e3:.0f} kbit/s against the "
        f"simulator's {same['off']['goodput_bps'] / 1e3:.0f} and "
        f"{same['F-RTO+Eifel']['goodput_bps'] / 1e3:.0f} on the same seeds.",
        f"- {n} real download(s) per variant: a few spurious timeouts, so the real per-STO "
        "numbers carry wide intervals; they test that the mechanism works against a real "
        "receiver, the simulated columns carry the statistics.",
        real_host.byte_exact_bullet(rows, violations=True),
    ]
    report.section(title, "\n".join(lines))
    report.check(
        "W-TCP (real host) F-RTO + Eifel: spurious timeouts detected / spurious",
        Info("the detector against the emulator's truth, real receiver"),
        f"{b['detected']} / {b['spurious']}",
        note=f"{n} real downloads of {WTCP_SIZE / 1e6:g} MB",
    )
    for v, paper in (("off", 28.0), ("F-RTO+Eifel", 3.0)):
        report.check(
            f"W-TCP (real host) 2MB {v}: unnecessary rtx per STO",
            Info(f"paper: {paper:g}; simulated prediction {_fmt(pred[v]['unnecessary_per_sto'])}"),
            round(real[v]["unnecessary_per_sto"], 2),
            ci=real[v]["unnecessary_ci"],
            unit="pkts/STO",
            note=f"{n} real downloads; too few STOs for a verdict",
        )
        report.check(
            f"W-TCP (real host) 2MB {v}: goodput real / simulated (same seeds)",
            Info("two clocks: the same sender and bearer in real and simulated time"),
            round(real[v]["goodput_bps"] / same[v]["goodput_bps"], 3)
            if same[v]["goodput_bps"]
            else math.nan,
            unit="x",
        )
    report.byte_exact(
        "W-TCP over the emulated 3G bearer: every file byte-exact",
        rows,
        note=f"{len(rows)} real downloads",
    )


def sections(report: Report, jobs: int | None) -> None:
    """Both real-host sections: real Linux (:func:`section`) and W-TCP (:func:`wtcp_section`)."""
    section(report, jobs)
    wtcp_section(report, jobs)


def reproduce(report: Report, jobs: int | None = None) -> None:
    """``tcplab reproduce sto-3g --linux``: the paper's reproduction with this module's
    real-host :func:`sections` in it."""
    from tcplab.papers import sto3g

    sto3g.reproduce(report, jobs, linux=sections)
