#!/usr/bin/env python3
"""tcplab's real-time trace replay against Mahimahi's ``mm-link`` (docs/traces.md, "Against
Mahimahi").

Needs root, Mahimahi installed from its own project (``mm-link`` and ``mm-delay`` on PATH; it
is not part of tcplab and is skipped with a note when absent), ``dumpcap`` and ``tshark``, an
unprivileged user to run the Mahimahi shells as (``--user``, default ``mmuser``: ``mm-link``
refuses to run as root) and ``net.ipv4.ip_forward = 1`` (``mm-link`` requires it).

Two parts, each run once through ``mm-delay D mm-link TRACE TRACE`` and once through
``tcplab emu`` with one ``trace`` hop of the same files and delay:

* ``accuracy``: a Linux CUBIC bulk download (``TCP_CONGESTION`` set on the sender's socket) for
  ``--seconds`` over a trace pair from ``--dir`` (default: the measured Mahimahi traces' directory,
  docs/traces.md "Where files are read from"), a DropTail queue of ``--queue`` packets each way.
  Real packets are captured with dumpcap where the sender puts them on the path and where the
  receiver gets them. Delivered bytes per 100 ms at the receiver are compared with
  the trace's capacity in the same 100 ms (each tool's trace clock: mm-link's log header,
  tcplab's ``clock_t0_ns``), per-packet one-way delays come from matching the two captures,
  and mm-link's per-packet timing error from its own ``--downlink-log`` (the millisecond
  it scheduled each delivery for) against the capture.
* ``ceiling``: constant-rate traces of 1 to ``--max-per-ms`` opportunities per millisecond
  (12 Mbit/s each), a CUBIC download of ``--ceiling-seconds``, goodput over its last part
  against the capacity.

Take reported numbers while no other real-time measurement shares the machine (on a shared
machine, under a common lock: ``flock LOCKFILE python bench/mahimahi_compare.py accuracy``).
Writes JSON rows to ``--out`` (default ``mahimahi_compare.json`` in the current directory) and,
with ``--plot``, the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from tcplab.analyze.tracefile import mahimahi_dir

PORT = 9123
#: The sender: listens, sets CUBIC on the listening socket (accepted sockets inherit it) and
#: sends zeros for argv[2] seconds, then closes.
SENDER = """import socket, sys, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, b"cubic")
s.bind((sys.argv[1], PORT)); s.listen(1)
c, _ = s.accept()
assert c.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, 16).rstrip(b"\\0") == b"cubic"
buf = bytes(65536); end = time.monotonic() + float(sys.argv[2])
while time.monotonic() < end:
    c.sendall(buf)
c.close()
""".replace("PORT", str(PORT))
#: The receiver: writes its pid, waits for the captures to start, reads until the sender
#: closes and prints (seconds since connect, bytes) every 100 ms.
RECEIVER = """import os, socket, sys, time
open(sys.argv[2], "w").write(str(os.getpid()))
time.sleep(float(sys.argv[3]))
c = socket.create_connection((sys.argv[1], PORT)); t0 = time.monotonic(); n = 0; out = []
nxt = 0.1
while True:
    b = c.recv(1 << 20)
    if not b:
        break
    n += len(b); t = time.monotonic() - t0
    if t >= nxt:
        out.append((round(t, 4), n)); nxt += 0.1
out.append((round(time.monotonic() - t0, 4), n))
open(sys.argv[4], "w").write(repr(out))
""".replace("PORT", str(PORT))


def opportunities(path: Path) -> list[int]:
    return [int(x) for x in path.read_text().split()]


def capture(ns_pid: int | None, dev: str, out: Path, seconds: float) -> subprocess.Popen:
    cmd = ["dumpcap", "-q", "-i", dev, "-s", "96", "-f", f"tcp port {PORT}"]
    cmd += ["-a", f"duration:{int(seconds)}", "-w", str(out)]
    if ns_pid is not None:
        cmd = ["nsenter", "-t", str(ns_pid), "-n", *cmd]
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def packets(pcap: Path) -> list[tuple[float, int, int, int]]:
    """(time s, IP length, IP id, TCP seq) of each data packet from the sender."""
    r = subprocess.run(
        [
            *("tshark", "-r", str(pcap), "-n", "-Y", f"tcp.srcport=={PORT} && tcp.len>0"),
            *("-T", "fields", "-e", "frame.time_epoch", "-e", "ip.len", "-e", "ip.id"),
            *("-e", "tcp.seq_raw"),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    rows = []
    for line in r.stdout.splitlines():
        t, ln, pid, seq = line.split("\t")
        rows.append((float(t), int(ln), int(pid, 16), int(seq)))
    return rows


def wait_file(p: Path, timeout: float) -> str:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if p.exists() and p.read_text().strip():
            return p.read_text().strip()
        time.sleep(0.05)
    raise RuntimeError(f"{p} did not appear")


def run_mm(
    trace_down: Path, trace_up: Path, a: argparse.Namespace, tmp: Path, capture_on: bool
) -> dict:
    """One download through mm-delay + mm-link; returns the raw material."""
    for f in ("pid", "recv.out", "down.log"):
        (tmp / f).unlink(missing_ok=True)
    (tmp / "send.py").write_text(SENDER)
    (tmp / "recv.py").write_text(RECEIVER)
    os.chmod(tmp, 0o777)
    q = f"--downlink-queue=droptail --downlink-queue-args=packets={a.queue} "
    q += f"--uplink-queue=droptail --uplink-queue-args=packets={a.queue}"
    inner = f"python3 {tmp}/recv.py $MAHIMAHI_BASE {tmp}/pid {a.wait} {tmp}/recv.out"
    cmd = (
        f"mm-delay {a.delay_ms} mm-link {trace_up} {trace_down} {q} "
        f"--downlink-log={tmp}/down.log -- sh -c '{inner}'"
    )
    sender = subprocess.Popen(
        [sys.executable, str(tmp / "send.py"), "0.0.0.0", str(a.seconds)],
        stderr=subprocess.PIPE,
    )
    shell = subprocess.Popen(["su", a.user, "-c", cmd], cwd=tmp, stderr=subprocess.PIPE)
    caps = []
    try:
        pid = int(wait_file(tmp / "pid", 20))
        addr = (
            subprocess.run(
                [
                    "nsenter",
                    "-t",
                    str(pid),
                    "-n",
                    "ip",
                    "-4",
                    "-o",
                    "addr",
                    "show",
                    "dev",
                    "ingress",
                ],
                capture_output=True,
                text=True,
                check=True,
            )
            .stdout.split()[3]
            .split("/")[0]
        )
        if capture_on:
            dur = a.wait + a.seconds + 6
            caps.append(capture(None, "any", tmp / "mm_send.pcap", dur))
            caps.append(capture(pid, "ingress", tmp / "mm_recv.pcap", dur))
        shell.wait(timeout=a.seconds + 120)
        sender.wait(timeout=30)
    finally:
        for p in (shell, sender):
            if p.poll() is None:
                p.kill()
                p.wait()
        for c in caps:
            c.wait(timeout=a.wait + a.seconds + 30)
    log = (tmp / "down.log").read_text().splitlines()
    hdr = {
        ln.split(":")[0][2:]: ln.split(":", 1)[1].strip()
        for ln in log
        if ln.startswith("#") and ":" in ln
    }
    t0_ms = int(hdr["init timestamp"]) + int(hdr["base timestamp"])
    # Departures of data packets (pure SYN-ACK/FIN/ACK datagrams are under 100 bytes).
    departures = [
        int(f[0])
        for f in (ln.split() for ln in log if not ln.startswith("#"))
        if f[1] == "-" and int(f[2]) > 100
    ]
    res = {
        "t0_s": t0_ms / 1e3,
        "recv": eval((tmp / "recv.out").read_text()),
        "sched_s": [(int(hdr["init timestamp"]) + d) / 1e3 for d in departures],
        "after_queue_s": 0.0,
        "server": "0.0.0.0",
        "client": addr,
    }
    if capture_on:
        res["send"] = packets(tmp / "mm_send.pcap")
        res["got"] = packets(tmp / "mm_recv.pcap")
    return res


def run_tcplab(
    trace_down: Path, trace_up: Path, a: argparse.Namespace, tmp: Path, capture_on: bool
) -> dict:
    """One download through ``tcplab emu`` with one trace hop."""
    for f in ("pid", "recv.out"):
        (tmp / f).unlink(missing_ok=True)
    (tmp / "send.py").write_text(SENDER)
    (tmp / "recv.py").write_text(RECEIVER)
    (tmp / "s.toml").write_text(
        f'name = "mm-compare"\n[[path]]\nkind = "trace"\ndown = "{trace_down}"\n'
        f'up = "{trace_up}"\ndelay = "{a.delay_ms}ms"\nqueue = {a.queue}\n'
    )
    dur = a.wait + a.seconds + 6
    cap = f"dumpcap -q -i any -s 96 -f 'tcp port {PORT}' -a duration:{dur} -w"
    server = f'sh -c "{cap} {tmp}/t_send.pcap & exec {sys.executable} {tmp}/send.py '
    server += f'$TCPLAB_SERVER {a.seconds}"'
    if not capture_on:
        server = f"{sys.executable} {tmp}/send.py $TCPLAB_SERVER {a.seconds}"
    client = f"{cap} {tmp}/t_recv.pcap & " if capture_on else ""
    client += f"{sys.executable} {tmp}/recv.py $TCPLAB_SERVER {tmp}/pid {a.wait} {tmp}/recv.out"
    client += "; wait" if capture_on else ""
    out = tmp / "out"
    shutil.rmtree(out, ignore_errors=True)
    mono = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
    real = time.clock_gettime_ns(time.CLOCK_REALTIME)
    r = subprocess.run(
        [
            *(sys.executable, "-m", "tcplab", "emu", str(tmp / "s.toml"), "--out", str(out)),
            *("--quiet", "--server", server, "--", "sh", "-c", client),
        ],
        capture_output=True,
        text=True,
        timeout=a.seconds + 180,
    )
    if r.returncode != 0:
        raise RuntimeError(f"tcplab emu failed: {r.stderr.strip()[-2000:]}")
    summary = json.loads((out / "summary.json").read_text())
    emu = summary["emulator"]
    res = {
        "t0_s": (emu["clock_t0_ns"] + real - mono) / 1e9,
        "recv": eval((tmp / "recv.out").read_text()),
        "after_queue_s": a.delay_ms / 1e3,
        "lateness_us": emu.get("lateness_us"),
        "realtime": emu.get("realtime"),
    }
    if capture_on:
        res["send"] = packets(tmp / "t_send.pcap")
        res["got"] = packets(tmp / "t_recv.pcap")
    return res


def pct(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(q / 100 * len(s)))] if s else float("nan")


def analyse(r: dict, down: Path, a: argparse.Namespace) -> dict:
    """Delivered bytes per 100 ms against the trace's capacity, delays, timing."""
    opps = opportunities(down)
    period = opps[-1]
    got = r["got"]
    t_first = got[0][0]
    start_ms = (t_first - r["t0_s"] - r["after_queue_s"]) * 1e3 + a.skip * 1e3
    end_ms = start_ms + (a.seconds - a.skip - 1.0) * 1e3
    k0, k1 = int(start_ms // 100) + 1, int(end_ms // 100)
    cap = dict.fromkeys(range(k0, k1), 0)
    reps = int(end_ms // period) + 1
    for rep in range(reps):
        for m in opps:
            k = int((rep * period + m) // 100)
            if k in cap:
                cap[k] += 1500
    dlv = dict.fromkeys(range(k0, k1), 0)
    for t, ln, _, _ in got:
        k = int(((t - r["t0_s"] - r["after_queue_s"]) * 1e3) // 100)
        if k in dlv:
            dlv[k] += ln  # both charge a datagram its IP bytes
    err = [dlv[k] - cap[k] for k in cap]
    abs_err = [abs(e) for e in err]
    sent = {(pid, seq): t for t, _, pid, seq in r["send"]}
    delays = [(t - sent[(pid, seq)]) * 1e3 for t, _, pid, seq in got if (pid, seq) in sent]
    row = {
        "bins": len(cap),
        "capacity_bytes": sum(cap.values()),
        "delivered_bytes": sum(dlv.values()),
        "delivered_over_capacity": sum(dlv.values()) / max(1, sum(cap.values())),
        "mean_capacity_per_bin": sum(cap.values()) / len(cap),
        "mae_bytes": sum(abs_err) / len(abs_err),
        "p95_abs_err_bytes": pct(abs_err, 95),
        "max_abs_err_bytes": max(abs_err),
        "delay_ms": {q: pct(delays, q) for q in (5, 25, 50, 75, 95, 99)},
        "delay_matched": len(delays),
        "data_packets": len(got),
        "series": {"k": list(cap), "cap": list(cap.values()), "dlv": list(dlv.values())},
        "delays": delays,
    }
    if "sched_s" in r:
        # The log's data departures and the captured data packets, both in departure order.
        sched = r["sched_s"]
        row["timing_unpaired"] = abs(len(sched) - len(got))
        # Paired only when every data packet the log has was captured (dumpcap may drop some
        # under load): then the k-th of each is the same packet.
        if len(sched) == len(got):
            tim = [(g[0] - s) * 1e3 for g, s in zip(got, sched, strict=True)]
            row["timing_ms"] = {q: pct(tim, q) for q in (1, 50, 99, 99.9)}
    if r.get("lateness_us") is not None:
        row["lateness_us"] = r["lateness_us"]
    return row


def ceiling(a: argparse.Namespace, tmp: Path, runner: Callable[..., dict], name: str) -> list[dict]:
    rows = []
    for n in a.per_ms:
        tr = tmp / f"const{n}.trace"
        tr.write_text("".join(f"{m}\n" * n for m in range(1, 1001)))
        r = runner(tr, tr, a, tmp, False)
        rec = [(t, b) for t, b in r["recv"] if t >= a.skip]
        (ta, ba), (tb, bb) = rec[0], rec[-2] if len(rec) > 2 else rec[-1]
        goodput = (bb - ba) * 8 / (tb - ta) / 1e6
        # The most payload the trace carries: 1448 of every 1500 bytes.
        best = n * 1500 * 8 / 1e3 * 1448 / 1500
        rows.append(
            {
                "tool": name,
                "per_ms": n,
                "rate_mbps": n * 12.0,
                "goodput_mbps": goodput,
                "share": goodput / best,
            }
        )
        print(
            f"{name}: {n * 12} Mbit/s trace: goodput {goodput:.1f} Mbit/s "
            f"({goodput / best:.3f} of the most it can carry)",
            flush=True,
        )
    return rows


def plot(res: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(2, 2, figsize=(11, 7.5))
    acc = res.get("accuracy", {})
    colors = {"mm-link": "tab:orange", "tcplab emu": "tab:blue"}
    # The trace's capacity over every bin either tool compared (each starts 3 s after its own
    # connection), then what each delivered.
    cap = {
        k: c
        for row in acc.values()
        for k, c in zip(row["series"]["k"], row["series"]["cap"], strict=True)
    }
    shown = sorted({k for row in acc.values() for k in row["series"]["k"][:100]})
    ax[0, 0].step(
        [k / 10 for k in shown],
        [cap[k] / 1e3 for k in shown],
        "k-",
        where="post",
        lw=2,
        label="trace capacity",
    )
    for name, row in acc.items():
        ser = row["series"]
        ks = ser["k"][:100]
        ax[0, 0].step(
            [k / 10 for k in ks],
            [d / 1e3 for d in ser["dlv"][:100]],
            where="post",
            color=colors[name],
            lw=1,
            label=f"{name} delivered",
        )
        err = sorted(abs(d - c) / 1e3 for d, c in zip(ser["dlv"], ser["cap"], strict=True))
        ax[0, 1].plot(
            err,
            [i / len(err) for i in range(len(err))],
            color=colors[name],
            label=f"{name} (MAE {row['mae_bytes'] / 1e3:.2f} kB)",
        )
        dl = sorted(row["delays"])
        ax[1, 0].plot(dl, [i / len(dl) for i in range(len(dl))], color=colors[name], label=name)
    ax[0, 0].set(
        xlabel="trace time (s)",
        ylabel="kB per 100 ms",
        title="Delivered vs capacity, first 10 s each tool compared",
    )
    ax[0, 1].set(
        xlabel="|delivered - capacity| per 100 ms (kB)",
        ylabel="fraction of bins",
        title="Error per 100 ms bin",
    )
    ax[1, 0].set(
        xlabel="one-way delay, sender to receiver capture (ms)",
        ylabel="fraction of data packets",
        title="Per-packet delay",
    )
    for name, rows in res.get("ceiling", {}).items():
        ax[1, 1].plot(
            [r["rate_mbps"] for r in rows],
            [r["share"] for r in rows],
            "o-",
            color=colors[name],
            label=name,
        )
    ax[1, 1].set(
        xlabel="constant trace rate (Mbit/s)",
        ylabel="CUBIC goodput / most possible",
        title="Ceiling",
        xscale="log",
        ylim=(0, 1.05),
    )
    for x in ax.flat:
        x.grid(alpha=0.3)
        x.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("part", nargs="?", choices=["accuracy", "ceiling", "both"], default="both")
    ap.add_argument("--dir", type=Path, default=mahimahi_dir())
    ap.add_argument("--trace", default="TMobile-LTE-short")
    ap.add_argument("--seconds", type=float, default=40.0)
    ap.add_argument("--ceiling-seconds", type=float, default=8.0)
    ap.add_argument("--per-ms", type=int, nargs="+", default=[1, 4, 10, 20, 40, 80])
    ap.add_argument("--skip", type=float, default=3.0, help="seconds left out at the start")
    ap.add_argument("--delay-ms", type=int, default=10)
    ap.add_argument("--queue", type=int, default=1000)
    ap.add_argument("--wait", type=float, default=2.0)
    ap.add_argument("--user", default="mmuser")
    ap.add_argument("--tools", nargs="+", default=["mm-link", "tcplab emu"])
    ap.add_argument("--out", type=Path, default=Path("mahimahi_compare.json"))
    ap.add_argument("--plot", type=Path)
    a = ap.parse_args()
    a.part = ["accuracy", "ceiling"] if a.part == "both" else [a.part]
    missing = [t for t in ("mm-link", "mm-delay", "dumpcap", "tshark") if not shutil.which(t)]
    if missing:
        print(
            f"note: {', '.join(missing)} not installed; nothing to compare (install "
            "Mahimahi from its own project, and Wireshark's dumpcap and tshark)"
        )
        return 0
    if a.dir is None:
        print(
            "note: no trace directory: set TCPLAB_TRACE_DIR or pass --dir (docs/traces.md); "
            "nothing to run"
        )
        return 0
    down, up = a.dir / f"{a.trace}.down", a.dir / f"{a.trace}.up"
    if not (down.exists() and up.exists()):
        print(f"note: {down} or {up} is absent; nothing to run")
        return 0
    if os.geteuid() != 0:
        print("note: needs root (network namespaces, captures); nothing run")
        return 0
    res = json.loads(a.out.read_text()) if a.out.exists() else {}
    runners = {"mm-link": run_mm, "tcplab emu": run_tcplab}
    res["load_before"] = os.getloadavg()
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        if "accuracy" in a.part:
            res.setdefault("accuracy", {})
            for name in a.tools:
                row = analyse(runners[name](down, up, a, tmp, True), down, a)
                res["accuracy"][name] = row
                show = {k: v for k, v in row.items() if k not in ("series", "delays")}
                print(name, json.dumps(show), flush=True)
        if "ceiling" in a.part:
            res.setdefault("ceiling", {})
            q = a.queue
            for name in a.tools:
                res["ceiling"][name] = ceiling(a, tmp, runners[name], name)
            a.queue = q
    res["load_after"] = os.getloadavg()
    res["trace"] = a.trace
    a.out.write_text(json.dumps(res))
    if a.plot:
        plot(res, a.plot)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
