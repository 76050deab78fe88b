"""The kernel's BBR from the inside, one validation case: packet-timed rounds, the full-bandwidth
count, and what the rate sampler and the socket's send buffer were doing at each of them.

    sudo python validation/linux/bbr_internals.py [--rate-mbps 20] [--rtt-ms 300] [--queue 250]
                                                  [--loss 0] [--seed 1000] [--seconds 8]
                                                  [--until 6] [--save FILE.txt | --log FILE.txt]

Runs the case once on the validation testbed (real Linux endpoints through ``tcplab emu``, cc
bbr; root, TUN, iproute2, ``bpftrace`` and a kernel with BTF; wrap it in the real-time lock on a
shared machine) with ``bpftrace`` attached to the ``tcp:tcp_probe`` tracepoint. The tracepoint
fires as each segment reaches the sender's socket, before the ACK is processed, so each record
shows the state the previous ACK left. The script reads, by their BTF names, BBR's private
state (``struct bbr``: ``rtt_cnt``, ``next_rtt_delivered``, ``mode``, ``round_start``,
``full_bw``, ``full_bw_cnt``, ``full_bw_reached``, the newest max-filter sample) and the sender's
``tp->delivered``, ``tp->app_limited`` (``tcp_rate_check_app_limited``), ``icsk_ca_state``,
``packets_out``, ``sk_wmem_queued``, ``sk_sndbuf`` and the unsent bytes (``write_seq -
snd_nxt``), and prints a line whenever the round count, the full-bandwidth count, the mode, the
CA state or whether the connection is marked app-limited changes. ``--log FILE`` reads a saved
log instead of running (no root needed). docs/linux-stack.md ("BBR") quotes its output.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

# The case's options are bbr_trace.py's.
sys.path.insert(0, str(Path(__file__).resolve().parent))
from bbr_trace import case_arguments

#: BW_UNIT of tcp_bbr.c: bandwidth in packets per µs << 24.
BW_SCALE = 24
MSS = 1448

#: Printed on every change of the key; the receiver listens on netlab's PORT (5001), so the
#: sender's socket is the one whose destination port is 5001.
PROGRAM = r"""
tracepoint:tcp:tcp_probe /args->dport == %(port)d/
{
  $tp = (struct tcp_sock *)args->skaddr;
  $b = (struct bbr *)$tp->inet_conn.icsk_ca_priv;
  $ca = $tp->inet_conn.icsk_ca_state;
  $al = $tp->app_limited;
  $key = ($al != 0 ? 1000000 : 0) + $b->rtt_cnt * 1000 + $b->mode * 100
         + $b->full_bw_reached * 50 + $b->full_bw_cnt * 10 + $ca;
  if (@last[args->skaddr] != $key + 1) {
    @last[args->skaddr] = $key + 1;
    printf("%%llu %%llu %%u %%u %%u %%u %%u %%u %%u %%u %%u %%u %%u %%u %%d %%d %%d\n",
      nsecs, (uint64)args->skaddr, $b->rtt_cnt, $b->next_rtt_delivered, $b->mode,
      $b->round_start, $b->full_bw_reached, $b->full_bw_cnt, $b->full_bw, $b->bw.s[0].v,
      $tp->delivered, $ca, $al, $tp->packets_out,
      $tp->inet_conn.icsk_inet.sk.sk_wmem_queued, $tp->inet_conn.icsk_inet.sk.sk_sndbuf,
      (int32)($tp->write_seq - $tp->snd_nxt));
  }
}
"""

FIELDS = [
    "t_ns",
    "sk",
    "rtt_cnt",
    "next_rtt_delivered",
    "mode",
    "round_start",
    "full_bw_reached",
    "full_bw_cnt",
    "full_bw",
    "bw",
    "delivered",
    "ca_state",
    "app_limited",
    "packets_out",
    "wmem_queued",
    "sndbuf",
    "unsent",
]
MODES = {0: "STARTUP", 1: "DRAIN", 2: "PROBE_BW", 3: "PROBE_RTT"}
CA = {0: "Open", 1: "Disorder", 2: "CWR", 3: "Recovery", 4: "Loss"}


def run_case(a: argparse.Namespace, port: int) -> tuple[str, int]:
    """Run the case under bpftrace: the raw log (first line: the sender's ``t0_ns``)."""
    from tcplab.real.validate.netlab import Testbed

    with tempfile.TemporaryDirectory() as tmp:
        prog = Path(tmp) / "bbr.bt"
        prog.write_text(PROGRAM % {"port": port})
        out = Path(tmp) / "out.txt"
        with out.open("w") as fh:
            bt = subprocess.Popen(["bpftrace", str(prog)], stdout=fh, stderr=subprocess.PIPE)
            try:
                deadline = time.monotonic() + 30
                while "Attaching" not in out.read_text() and time.monotonic() < deadline:
                    if bt.poll() is not None:
                        err = bt.stderr.read().decode() if bt.stderr else ""
                        raise SystemExit(f"bbr_internals: bpftrace failed: {err.strip()}")
                    time.sleep(0.1)
                with Testbed() as tb:
                    tr = tb.transfer(
                        rate_bps=round(a.rate_mbps * 1e6),
                        delay_ns=round(a.rtt_ms * 1e6 / 2),
                        queue=a.queue,
                        loss=a.loss,
                        cc="bbr",
                        duration_s=a.seconds,
                        seed=a.seed,
                    )
            finally:
                bt.send_signal(2)
                try:
                    bt.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    bt.kill()
                    bt.wait()
        text = out.read_text()
    retrans = int(tr.sender["final"]["total_retrans"])
    return f"t0_ns {tr.sender['t0_ns']} retrans {retrans}\n{text}", retrans


def parse(log: str) -> tuple[list[dict[str, Any]], int]:
    """The records of the sender's socket (the one with the most records) and the retrans."""
    lines = log.splitlines()
    head = lines[0].split()
    t0, retrans = int(head[1]), int(head[3])
    rows = [
        dict(zip(FIELDS, map(int, ln.split()), strict=True)) for ln in lines[1:] if ln[:1].isdigit()
    ]
    if not rows:
        raise SystemExit("bbr_internals: no records (did the tracepoint fire?)")
    counts: dict[int, int] = {}
    for r in rows:
        counts[r["sk"]] = counts.get(r["sk"], 0) + 1
    sk = max(counts, key=lambda k: counts[k])
    out = []
    for r in rows:
        if r["sk"] == sk:
            r["t_s"] = (r["t_ns"] - t0) / 1e9
            out.append(r)
    return out, retrans


def mbps(bw: int) -> float:
    """A tcp_bbr.c bandwidth (packets per µs << 24) in Mbit/s of MSS-sized segments."""
    return bw * 1e6 / (1 << BW_SCALE) * MSS * 8 / 1e6


def report(rows: list[dict[str, Any]], until: float) -> None:
    print(
        f"{'t s':>7} {'round':>5} {'mode':>8} {'full_bw_cnt':>11} {'full_bw Mb/s':>12} "
        f"{'max_bw Mb/s':>11} {'CA state':>9} {'app_limited':>11} {'packets_out':>11} "
        f"{'wmem_queued':>11} {'sndbuf':>8} {'unsent':>8}"
    )
    for r in rows:
        if r["t_s"] > until:
            break
        print(
            f"{r['t_s']:7.3f} {r['rtt_cnt']:5d} {MODES.get(r['mode'], r['mode']):>8} "
            f"{r['full_bw_cnt']:11d} {mbps(r['full_bw']):12.2f} {mbps(r['bw']):11.2f} "
            f"{CA.get(r['ca_state'], r['ca_state']):>9} {r['app_limited']:11d} "
            f"{r['packets_out']:11d} {r['wmem_queued']:11d} {r['sndbuf']:8d} {r['unsent']:8d}"
        )
    drain = next((r["t_s"] for r in rows if r["mode"] != 0), None)
    print(f"STARTUP left at {drain:.3f} s" if drain is not None else "STARTUP not left")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    case_arguments(ap, "emulator seed", 6.0)
    ap.add_argument("--seconds", type=float, default=8.0, help="length of the transfer")
    src = ap.add_mutually_exclusive_group()
    src.add_argument("--log", type=Path, help="read this saved log instead of running")
    src.add_argument("--save", type=Path, help="save the raw log here")
    a = ap.parse_args(argv)

    if a.log is not None:
        log = a.log.read_text()
    else:
        if shutil.which("bpftrace") is None:
            print("bbr_internals: needs bpftrace (and a kernel with BTF)", file=sys.stderr)
            return 2
        from tcplab.real.validate.netlab import PORT

        log, _ = run_case(a, PORT)
        if a.save is not None:
            a.save.write_text(log)
    rows, retrans = parse(log)
    print(json.dumps({"retransmissions": retrans, "records": len(rows)}))
    report(rows, a.until)
    return 0


if __name__ == "__main__":
    sys.exit(main())
