"""The kernel's BBR from the inside, one validation case: packet-timed rounds, the full-bandwidth
count, and what the rate sampler and the socket's send buffer were doing at each of them.

    sudo python validation/linux/bbr_internals.py [--rate-mbps 20] [--rtt-ms 300] [--queue 250]
                                                  [--loss 0] [--seed 1000] [--seconds 8]
                                                  [--until 6] [--save FILE.txt | --log FILE.txt]
                                                  [--every] [--csv FILE.csv]

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
CA state or whether the connection is marked app-limited changes. ``--every`` prints a record
for every segment that reaches the socket instead, with the bytes in flight, the write queue's
skb count, ``sacked_out``, ``lost_out``, ``retrans_out`` and ``snd_cwnd`` besides, and also
records each ``send()`` and each retransmitted skb; ``--csv FILE`` writes all of it, with the
skbs of both queues derived from ``sk_wmem_queued`` (``parse``), for comparison with tcplab's
per-ACK series (bench/sndbuf_trace.py). ``--log FILE`` reads a saved log instead of running
(no root needed). docs/linux-stack.md ("BBR") quotes its output.
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

#: One record's printf format: one call, so that another probe's line cannot split it.
RECORD_FMT = " ".join(["%llu"] * 2 + ["%u"] * 12 + ["%d"] * 4 + ["%u"] * 6)

#: Printed on every change of the key (or, with ``--every``, on every segment that reaches the
#: socket); the receiver listens on netlab's PORT (5001), so the sender's socket is the one whose
#: destination port is 5001. With ``--every``, ``WRITER``'s lines come too.
PROGRAM = r"""
tracepoint:tcp:tcp_probe /args->dport == %(port)d/
{
  $tp = (struct tcp_sock *)args->skaddr;
  $b = (struct bbr *)$tp->inet_conn.icsk_ca_priv;
  $ca = $tp->inet_conn.icsk_ca_state;
  $al = $tp->app_limited;
  $key = ($al != 0 ? 1000000 : 0) + $b->rtt_cnt * 1000 + $b->mode * 100
         + $b->full_bw_reached * 50 + $b->full_bw_cnt * 10 + $ca;
  if (%(every)d || @last[args->skaddr] != $key + 1) {
    @last[args->skaddr] = $key + 1;
    printf("%(fmt)s\n",
      nsecs, (uint64)args->skaddr, $b->rtt_cnt, $b->next_rtt_delivered, $b->mode,
      $b->round_start, $b->full_bw_reached, $b->full_bw_cnt, $b->full_bw, $b->bw.s[0].v,
      $tp->delivered, $ca, $al, $tp->packets_out,
      $tp->inet_conn.icsk_inet.sk.sk_wmem_queued, $tp->inet_conn.icsk_inet.sk.sk_sndbuf,
      (int32)($tp->write_seq - $tp->snd_nxt), (int32)($tp->snd_nxt - $tp->snd_una),
      $tp->inet_conn.icsk_inet.sk.sk_write_queue.qlen, $tp->sacked_out, $tp->lost_out,
      $tp->retrans_out, $tp->snd_cwnd, args->data_len);
  }
}
"""

#: The writer and the retransmissions (``--every``; tracepoints only, as this kernel has no
#: kprobes): W after each ``send()`` (``sock:sock_send_length``: the bytes taken, then the
#: queue, the socket's flags with ``SOCK_NOSPACE``), R for each retransmitted skb
#: (``tcp:tcp_retransmit_skb``, after ``tcp_retransmit_skb`` cut it to the cwnd quota: its
#: sequence, length and segments). The sender socket's destination port is compared in network
#: byte order where the tracepoint gives the socket only.
WRITER = r"""
tracepoint:sock:sock_send_length
  /((struct sock *)args->sk)->__sk_common.skc_dport == %(nport)d/
{
  $sk = (struct sock *)args->sk;
  $tp = (struct tcp_sock *)args->sk;
  printf("W %%llu %%d %%d %%d %%d %%u %%lu\n", nsecs, args->ret, $sk->sk_wmem_queued,
    $sk->sk_sndbuf, (int32)($tp->write_seq - $tp->snd_nxt),
    $sk->sk_write_queue.qlen, $sk->sk_socket->flags);
}
tracepoint:tcp:tcp_retransmit_skb /args->dport == %(port)d/
{
  $skb = (struct sk_buff *)args->skbaddr;
  $tp = (struct tcp_sock *)args->skaddr;
  printf("R %%llu %%u %%u %%u\n", nsecs, ((struct tcp_skb_cb *)$skb->cb)->seq - $tp->snd_una,
    $skb->len, ((struct skb_shared_info *)($skb->head + $skb->end))->gso_segs);
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
#: Logs written with ``--every`` (and logs of this version) add these per record; the kernel
#: keeps no skb count, so ``skbs`` is derived in ``parse``: every skb of the write and
#: retransmission queues costs its payload plus ``SKB_EMPTY_TRUESIZE`` in ``sk_wmem_queued``.
MORE_FIELDS = [
    "in_flight_bytes",
    "write_qlen",
    "sacked_out",
    "lost_out",
    "retrans_out",
    "snd_cwnd",
    "data_len",
]
#: ``SKB_TRUESIZE(MAX_TCP_HEADER)`` on x86-64 (crates/tcplab-tcp/src/sndbuf.rs).
SKB_EMPTY_TRUESIZE = 832
MODES = {0: "STARTUP", 1: "DRAIN", 2: "PROBE_BW", 3: "PROBE_RTT"}
CA = {0: "Open", 1: "Disorder", 2: "CWR", 3: "Recovery", 4: "Loss"}


def run_case(a: argparse.Namespace, port: int) -> tuple[str, int]:
    """Run the case under bpftrace: the raw log (first line: the sender's ``t0_ns``)."""
    from tcplab.real.validate.netlab import Testbed

    with tempfile.TemporaryDirectory() as tmp:
        prog = Path(tmp) / "bbr.bt"
        text = PROGRAM % {"port": port, "every": int(a.every), "fmt": RECORD_FMT}
        if a.every:
            nport = int.from_bytes(port.to_bytes(2, "big"), "little")
            text += WRITER % {"nport": nport, "port": port}
        prog.write_text(text)
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
    """The records of the sender's socket (the one with the most records) and the retrans.

    Records with the per-ACK fields (``MORE_FIELDS``) also get ``skbs``, the skbs in the write
    and retransmission queues, from ``sk_wmem_queued`` less the payload they hold (``unsent``
    plus ``in_flight_bytes``) in units of ``SKB_EMPTY_TRUESIZE``, and ``skbs_rem``, the
    remainder (0 when every skb's truesize is its payload plus one empty skb)."""
    lines = log.splitlines()
    head = lines[0].split()
    t0, retrans = int(head[1]), int(head[3])
    rows = []
    for ln in lines[1:]:
        if not ln[:1].isdigit():
            continue
        vals = ln.split()
        if len(vals) == len(FIELDS):
            names = FIELDS
        elif len(vals) == len(FIELDS) + len(MORE_FIELDS) and all(v.isdigit() for v in vals):
            names = FIELDS + MORE_FIELDS
        else:
            # A record of an older version of this script (two printf calls) that another
            # probe's line split in two: left out.
            continue
        rows.append(dict(zip(names, map(int, vals), strict=True)))
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
            if "write_qlen" in r:
                over = r["wmem_queued"] - r["unsent"] - r["in_flight_bytes"]
                r["skbs"], r["skbs_rem"] = divmod(over, SKB_EMPTY_TRUESIZE)
            out.append(r)
    return out, retrans


def writer_events(log: str, t0_ns: int) -> list[tuple[str, float, list[int]]]:
    """The W (``send()``) and R (a retransmitted skb) lines of an ``--every`` log: (kind,
    seconds since the sender's ``t0_ns``, the other numbers)."""
    out = []
    for ln in log.splitlines():
        if ln[:2] in ("W ", "R "):
            f = ln.split()
            out.append((f[0], (int(f[1]) - t0_ns) / 1e9, [int(x) for x in f[2:]]))
    return out


def changes(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records at which the round, the mode, the full-bandwidth count, the CA state or the
    app-limited mark changes (what a log without ``--every`` holds)."""
    keys = ("rtt_cnt", "mode", "full_bw_reached", "full_bw_cnt", "ca_state")
    out, last = [], None
    for r in rows:
        k = (*(r[x] for x in keys), r["app_limited"] != 0)
        if k != last:
            out.append(r)
            last = k
    return out


def mbps(bw: int) -> float:
    """A tcp_bbr.c bandwidth (packets per µs << 24) in Mbit/s of MSS-sized segments."""
    return bw * 1e6 / (1 << BW_SCALE) * MSS * 8 / 1e6


def report(rows: list[dict[str, Any]], until: float) -> None:
    print(
        f"{'t s':>7} {'round':>5} {'mode':>8} {'full_bw_cnt':>11} {'full_bw Mb/s':>12} "
        f"{'max_bw Mb/s':>11} {'CA state':>9} {'app_limited':>11} {'packets_out':>11} "
        f"{'wmem_queued':>11} {'sndbuf':>8} {'unsent':>8} {'skbs':>6}"
    )
    for r in changes(rows):
        if r["t_s"] > until:
            break
        print(
            f"{r['t_s']:7.3f} {r['rtt_cnt']:5d} {MODES.get(r['mode'], r['mode']):>8} "
            f"{r['full_bw_cnt']:11d} {mbps(r['full_bw']):12.2f} {mbps(r['bw']):11.2f} "
            f"{CA.get(r['ca_state'], r['ca_state']):>9} {r['app_limited']:11d} "
            f"{r['packets_out']:11d} {r['wmem_queued']:11d} {r['sndbuf']:8d} {r['unsent']:8d} "
            f"{r.get('skbs', '-'):>6}"
        )
    drain = next((r["t_s"] for r in rows if r["mode"] != 0), None)
    print(f"STARTUP left at {drain:.3f} s" if drain is not None else "STARTUP not left")


#: The CSV's columns: the record's kind (A: a segment reached the socket, W: a write, R: a
#: retransmitted skb), seconds from the sender's start, then the record's fields.
CSV_A = ["t_s", *[f for f in FIELDS + MORE_FIELDS if f not in ("t_ns", "sk")], "skbs", "skbs_rem"]
CSV_W = ["t_s", "ret", "wmem_queued", "sndbuf", "unsent", "write_qlen", "sock_flags"]
CSV_R = ["t_s", "seq_minus_una", "len", "gso_segs"]


def write_csv(
    path: Path, rows: list[dict[str, Any]], writes: list[tuple[str, float, list[int]]]
) -> None:
    """Every record in time order, one line each: ``A`` lines with ``CSV_A``'s columns,
    ``W`` lines with ``CSV_W``'s, ``R`` lines with ``CSV_R``'s (the header lines say so)."""
    ev: list[tuple[float, str]] = [
        (r["t_s"], "A," + ",".join(str(r.get(c, "")) for c in CSV_A)) for r in rows
    ]
    ev += [(t, f"{k},{t}," + ",".join(map(str, nums))) for k, t, nums in writes]
    head = [f"#{k}," + ",".join(c) for k, c in (("A", CSV_A), ("W", CSV_W), ("R", CSV_R))]
    path.write_text("\n".join(head + [x for _, x in sorted(ev, key=lambda e: e[0])]) + "\n")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    case_arguments(ap, "emulator seed", 6.0)
    ap.add_argument("--seconds", type=float, default=8.0, help="length of the transfer")
    src = ap.add_mutually_exclusive_group()
    src.add_argument("--log", type=Path, help="read this saved log instead of running")
    src.add_argument("--save", type=Path, help="save the raw log here")
    ap.add_argument(
        "--every",
        action="store_true",
        help="record every segment reaching the socket (not only changes), the writes and "
        "the retransmitted skbs",
    )
    ap.add_argument(
        "--csv", type=Path, help="write every record of the sender's socket here (per-ACK logs)"
    )
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
    if a.csv is not None:
        write_csv(a.csv, rows, writer_events(log, int(log.split(maxsplit=2)[1])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
