"""The two ends of the bulk transfer, run inside the network namespaces (``ip netns exec NS
python3 endpoints.py receiver|sender ...``); standard library only. Each prints one JSON object
on stdout when it is done. Times are ``time.monotonic_ns()`` (one clock for all namespaces).

- ``receiver ADDR PORT``: listens, prints ``ready`` on a line of its own, accepts one
  connection and reads until EOF; records the cumulative bytes received every ``--sample``.
- ``sender ADDR PORT CC DURATION``: sets the congestion control on the socket before
  connecting, writes as fast as the socket takes data for ``DURATION`` seconds, sampling
  ``TCP_INFO`` every ``--sample``; then closes (the kernel still delivers what is buffered).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import selectors
import socket
import struct
import sys
import time
from typing import Any

#: struct tcp_info (include/uapi/linux/tcp.h) up to tcpi_snd_wnd; the layout only ever grows at
#: the end, so this prefix is valid for every kernel since 5.x (6.18 here).
TCP_INFO_FIELDS = [
    "state",
    "ca_state",
    "retransmits",
    "probes",
    "backoff",
    "options",
    "wscale",
    "flags",
    "rto",
    "ato",
    "snd_mss",
    "rcv_mss",
    "unacked",
    "sacked",
    "lost",
    "retrans",
    "fackets",
    "last_data_sent",
    "last_ack_sent",
    "last_data_recv",
    "last_ack_recv",
    "pmtu",
    "rcv_ssthresh",
    "rtt",
    "rttvar",
    "snd_ssthresh",
    "snd_cwnd",
    "advmss",
    "reordering",
    "rcv_rtt",
    "rcv_space",
    "total_retrans",
    "pacing_rate",
    "max_pacing_rate",
    "bytes_acked",
    "bytes_received",
    "segs_out",
    "segs_in",
    "notsent_bytes",
    "min_rtt",
    "data_segs_in",
    "data_segs_out",
    "delivery_rate",
    "busy_time",
    "rwnd_limited",
    "sndbuf_limited",
    "delivered",
    "delivered_ce",
    "bytes_sent",
    "bytes_retrans",
    "dsack_dups",
    "reord_seen",
    "rcv_ooopack",
    "snd_wnd",
]
TCP_INFO_FORMAT = "<8B24I4Q2I4IQ3Q2I2Q2I2I"
TCP_INFO_SIZE = struct.calcsize(TCP_INFO_FORMAT)  # 232
#: Fields kept in each sample (µs for rtt/rttvar/min_rtt, segments for cwnd/ssthresh, bytes/s
#: for pacing_rate and delivery_rate).
KEEP = [
    "ca_state",
    "snd_cwnd",
    "pacing_rate",
    "delivery_rate",
    "delivered",
    "snd_ssthresh",
    "rtt",
    "rttvar",
    "min_rtt",
    "rto",
    "total_retrans",
    "unacked",
    "lost",
    "retrans",
    "sacked",
    "bytes_acked",
    "bytes_retrans",
    "snd_wnd",
    "snd_mss",
    "rwnd_limited",
    "sndbuf_limited",
    "reordering",
    "dsack_dups",
    "total_rto",
]
# linux/tcp.h: TCP_CONGESTION = 13, TCP_INFO = 11
TCP_CONGESTION = getattr(socket, "TCP_CONGESTION", 13)
TCP_INFO = getattr(socket, "TCP_INFO", 11)


#: Fields added in Linux 6.7 after tcpi_snd_wnd (parsed when the kernel returns them; -1 if not).
TCP_INFO_FIELDS_67 = ["rcv_wnd", "rehash", "total_rto", "total_rto_recoveries", "total_rto_time"]
TCP_INFO_FORMAT_67 = "<2I2HI"


def parse_tcp_info(raw: bytes) -> dict[str, int]:
    """The fields of a ``getsockopt(TCP_INFO)`` answer (at least :data:`TCP_INFO_SIZE` bytes)."""
    if len(raw) < TCP_INFO_SIZE:
        raise ValueError(f"tcp_info is {len(raw)} bytes, expected >= {TCP_INFO_SIZE}")
    values = struct.unpack_from(TCP_INFO_FORMAT, raw)
    info = dict(zip(TCP_INFO_FIELDS, values, strict=True))
    if len(raw) >= TCP_INFO_SIZE + struct.calcsize(TCP_INFO_FORMAT_67):
        more = struct.unpack_from(TCP_INFO_FORMAT_67, raw, TCP_INFO_SIZE)
        info |= dict(zip(TCP_INFO_FIELDS_67, more, strict=True))
    else:
        info |= dict.fromkeys(TCP_INFO_FIELDS_67, -1)
    return info


def tcp_info(sock: socket.socket) -> dict[str, int]:
    return parse_tcp_info(sock.getsockopt(socket.IPPROTO_TCP, TCP_INFO, 256))


#: linux/tcp.h: TCP_CC_INFO = 26; linux/inet_diag.h ``struct tcp_bbr_info``: bbr_bw_lo, bbr_bw_hi
#: (bytes/s), bbr_min_rtt (µs), bbr_pacing_gain, bbr_cwnd_gain (<< 8).
TCP_CC_INFO = 26
BBR_INFO_FORMAT = "<5I"


def bbr_info(sock: socket.socket) -> dict[str, int]:
    """The BBR model of a socket whose congestion control is ``bbr`` (``TCP_CC_INFO``, as
    ``bbr_get_info``): ``bbr_bw`` (bytes/s, BBR's bandwidth estimate), ``bbr_min_rtt`` (µs),
    ``bbr_pacing_gain`` and ``bbr_cwnd_gain`` (in 1/256)."""
    raw = sock.getsockopt(socket.IPPROTO_TCP, TCP_CC_INFO, struct.calcsize(BBR_INFO_FORMAT))
    lo, hi, min_rtt, pacing_gain, cwnd_gain = struct.unpack_from(BBR_INFO_FORMAT, raw)
    return {
        "bbr_bw": lo | hi << 32,
        "bbr_min_rtt": min_rtt,
        "bbr_pacing_gain": pacing_gain,
        "bbr_cwnd_gain": cwnd_gain,
    }


def receiver(addr: str, port: int, sample_ns: int) -> dict[str, Any]:
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind((addr, port))
    srv.listen(1)
    print("ready", flush=True)
    conn, _ = srv.accept()
    t_accept = time.monotonic_ns()
    buf = bytearray(1 << 18)
    total = 0
    samples: list[tuple[int, int]] = [(t_accept, 0)]
    next_sample = t_accept + sample_ns
    while True:
        n = conn.recv_into(buf)
        now = time.monotonic_ns()
        if n == 0:
            break
        total += n
        if now >= next_sample:
            samples.append((now, total))
            next_sample = now + sample_ns
    samples.append((time.monotonic_ns(), total))
    info = tcp_info(conn)
    conn.close()
    srv.close()
    return {"t_accept_ns": t_accept, "bytes": total, "samples": samples, "rcv_mss": info["rcv_mss"]}


def sender(addr: str, port: int, cc: str, duration_s: float, sample_ns: int) -> dict[str, Any]:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, cc.encode())
    got = sock.getsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, 16).rstrip(b"\0").decode()
    t0 = time.monotonic_ns()
    sock.connect((addr, port))
    t_established = time.monotonic_ns()
    sock.setblocking(False)
    sel = selectors.DefaultSelector()
    sel.register(sock, selectors.EVENT_WRITE)
    chunk = b"\0" * (1 << 16)
    end = t0 + int(duration_s * 1e9)
    samples: list[dict[str, int]] = []
    written = 0
    next_sample = t0
    while True:
        now = time.monotonic_ns()
        if now >= next_sample:
            info = tcp_info(sock)
            sample = {"t_ns": now - t0} | {k: info[k] for k in KEEP}
            if got == "bbr":
                sample |= bbr_info(sock)
            samples.append(sample)
            next_sample += sample_ns
        if now >= end:
            break
        if sel.select(max(0.0, (min(next_sample, end) - now) / 1e9)):
            with contextlib.suppress(BlockingIOError):
                written += sock.send(chunk)
    final = tcp_info(sock)
    sel.close()
    sock.setblocking(True)
    sock.close()
    return {
        "t0_ns": t0,
        "t_established_ns": t_established,
        "cc": got,
        "written": written,
        "samples": samples,
        "final": final,
    }


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    sub = ap.add_subparsers(dest="role", required=True)
    r = sub.add_parser("receiver")
    r.add_argument("addr")
    r.add_argument("port", type=int)
    r.add_argument("--sample", type=float, default=0.01, help="seconds")
    s = sub.add_parser("sender")
    s.add_argument("addr")
    s.add_argument("port", type=int)
    s.add_argument("cc")
    s.add_argument("duration", type=float, help="seconds")
    s.add_argument("--sample", type=float, default=0.02, help="seconds")
    a = ap.parse_args(argv)
    sample_ns = int(a.sample * 1e9)
    if a.role == "receiver":
        out = receiver(a.addr, a.port, sample_ns)
    else:
        out = sender(a.addr, a.port, a.cc, a.duration, sample_ns)
    json.dump(out, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
