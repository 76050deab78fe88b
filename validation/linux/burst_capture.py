"""How bursty real Linux's sender is, and at what cwnd its queue overflows, on a small queue.

    sudo python validation/linux/burst_capture.py [--queue 21] [--rtt-ms 100] [--seconds 15]
                                                  [--rate-mbps 10] [--cc cubic|reno]
                                                  [--gso-max-segs N] [--busy N] [--out DIR]
                                                  [--loss P] [--receiver-info]
                                                  [--compare-tcplab]

Runs one cubic (or ``--cc``) bulk transfer over the matrix's link (10 Mbit/s, RTT and DropTail
queue as given) through ``tcplab emu`` between two Linux stacks. In the sender's namespace a raw
``AF_PACKET`` socket on its TUN device records every packet with the kernel's timestamp (when
the segment reached the device, or when the ACK was taken in; packets as (time s, source
address hex, payload bytes, seq, ack, source port, TCP flags)), and the sender samples
``TCP_INFO`` every 5 ms. Prints:

- the runs of data segments sent back to back (less than 200 µs apart; one segment takes
  1.2 ms on the link), as a histogram of run lengths;
- how many segments each ACK acknowledges (cumulatively, duplicate ACKs apart);
- every loss episode: cwnd just before ``ssthresh`` changed (or before it fell, when the new
  ssthresh equals the old), and the new ssthresh, in segments;
- the emulator's queue drops and release lateness;
- the tie at a full queue: after an ACK of two segments that released three or more, how
  often the next ACK's (of one segment) first segment is dropped in a replay of the sender's
  timestamps through the queue, and by how much that ACK and its segment came early (over all
  such pairs, the dropped and the kept);
- the application's writes (bytes per ``send()``) and which data segments carry PSH;
- from the emulator's link capture: the receiving host's time from a segment's due time to its
  ACK, by what the ACK covers, and the emulator's time from the sender's device stamp to a new
  segment on the idle link (its read of the TUN device), for a lone segment and the first of
  several.

``--gso-max-segs N`` sets the sender device's ``gso_max_segs`` before the connection opens, so
the socket builds skbs of at most N segments (1: no GSO skbs, hence no ``tcp_tso_should_defer``
and one segment per ``tcp_transmit_skb``). The emulator also writes a capture of the link
(``emu/link0-both.pcap``: data when the link starts to send it, ACKs when the receiver sent
them), the receiver's side of the transfer.

``--loss P`` drops data segments at random with probability P on the link (the path's
``down.loss``, as ``validate``'s ``loss``).

``--compare-tcplab`` runs the same case in tcplab too (as ``validate linux --stack linux``
builds it, seed 1000, a segment trace) and prints, for both, how many ACKs acknowledged *a* new
segments and released *r* new ones before the next ACK, over ``--seconds`` from the first data
segment, and tcplab's goodput and retransmissions.

``--receiver-info`` makes the receiver sample its own ``TCP_INFO`` and ``SO_RCVBUF`` while it
reads, and prints every change of its receive buffer (``tcpi_rcv_space`` → ``SO_RCVBUF``), when
``tcpi_rcv_ssthresh`` stopped growing (``tcp_grow_window`` asks for a quick ACK while it grows),
and the ACKs of one and of two segments per half second.

``--busy N`` runs N busy loops beside the transfer (a loaded machine; mind others on a shared
one). Needs root, TUN and iproute2. validation/linux/README.md ("Every remaining miss") quotes
its output.
"""

from __future__ import annotations

import argparse
import collections
import itertools
import json
import struct
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

MSS = 1448

# The receiver program and the sender's connect are rcv_window_capture.py's.
sys.path.insert(0, str(Path(__file__).resolve().parent))
from rcv_window_capture import ACCEPT, CONNECT, RECEIVER  # noqa: E402

#: Runs in the sender's namespace: connects, sends for ``seconds``, samples TCP_INFO and
#: records the TUN device's packets; writes JSON to argv[1]. TCP_INFO: tcpi_snd_ssthresh at
#: byte 76, tcpi_snd_cwnd at 80 (include/uapi/linux/tcp.h).
SENDER = (
    r"""
import json, os, select, socket, struct, subprocess, sys, threading, time
seconds, cc, gso_max_segs = float(sys.argv[2]), sys.argv[3], int(sys.argv[4])
dev = next(n for n in os.listdir("/sys/class/net") if n != "lo")
if gso_max_segs:  # before connect(): the socket takes the device's limit when it connects
    subprocess.run(["ip", "link", "set", "dev", dev, "gso_max_segs", str(gso_max_segs)], check=True)
raw = socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM, socket.htons(3))  # ETH_P_ALL
raw.bind((dev, 0))
raw.setsockopt(socket.SOL_SOCKET, 35, 1)  # SO_TIMESTAMPNS
raw.setsockopt(socket.SOL_SOCKET, 33, 1 << 25)  # SO_RCVBUFFORCE: no drops while the GIL is away
pkts, stop = [], threading.Event()
def sniff():
    raw.settimeout(0.2)
    while not stop.is_set():
        try:
            data, anc, _, _ = raw.recvmsg(96, 64)
        except TimeoutError:
            continue
        ts = next((struct.unpack("qq", d[:16]) for l, t, d in anc if t == 35), None)
        if ts is None or len(data) < 40 or data[9] != 6:
            continue
        ihl = (data[0] & 15) * 4
        total = struct.unpack_from("!H", data, 2)[0]
        sport, _, seq, ack, off, flags = struct.unpack_from("!HHIIBB", data, ihl)
        length = total - ihl - (off >> 4) * 4
        pkts.append((ts[0] + ts[1] / 1e9, data[12:16].hex(), length, seq, ack, sport, flags))
sniffer = threading.Thread(target=sniff, daemon=True)
sniffer.start()
"""
    + CONNECT.lstrip("\n").replace('b"cubic"', "cc.encode()")
    + r"""c.setblocking(False)
end, buf, info, nxt, writes = time.monotonic() + seconds, bytes(65536), [], 0.0, []
while time.monotonic() < end:
    if select.select([], [c], [], 0.005)[1]:
        try:
            writes.append(c.send(buf))
        except BlockingIOError:
            pass
    now = time.monotonic()
    if now >= nxt:
        i = c.getsockopt(socket.IPPROTO_TCP, 11, 232)  # TCP_INFO
        info.append((now, struct.unpack_from("I", i, 80)[0], struct.unpack_from("I", i, 76)[0]))
        nxt = now + 0.005
stop.set(); sniffer.join()
with open(sys.argv[1], "w") as f:  # before close: the emulator ends the server when the
    json.dump({"pkts": pkts, "info": info, "writes": writes}, f)  # receiver, seeing the FIN, exits
c.close()
"""
)


#: ``--receiver-info``: the receiver program, also sampling its own socket about every 5 ms
#: while it reads: (seconds since accept, bytes read, tcpi_rcv_ssthresh, tcpi_rcv_space,
#: SO_RCVBUF); writes JSON to argv[1] when the sender closes. tcpi_rcv_ssthresh is at byte
#: 64 and tcpi_rcv_space at 96 of struct tcp_info (include/uapi/linux/tcp.h).
RECEIVER_INFO = (
    """
import json, socket, struct, sys, time
"""
    + ACCEPT.lstrip("\n")
    + r"""t0, buf, rows, nxt, total = time.monotonic(), bytearray(1 << 18), [], 0.0, 0
while n := c.recv_into(buf):
    total += n
    now = time.monotonic()
    if now >= nxt:
        i = c.getsockopt(socket.IPPROTO_TCP, 11, 232)  # TCP_INFO
        rows.append((now - t0, total, struct.unpack_from("I", i, 64)[0],
                     struct.unpack_from("I", i, 96)[0],
                     c.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF)))
        nxt = now + 0.005
with open(sys.argv[1], "w") as f:
    json.dump(rows, f)
"""
)

SENDER_ADDR = bytes([10, 99, 0, 1]).hex()
RECEIVER_PORT = 5001


def bursts(pkts: list[list]) -> collections.Counter[int]:
    """Histogram of the lengths of back-to-back runs (< 200 µs apart) of the sender's data."""
    data = sorted(p[0] for p in pkts if p[1] == SENDER_ADDR and p[2] > 0)
    runs: collections.Counter[int] = collections.Counter()
    n = 1
    for a, b in itertools.pairwise(data):
        if b - a < 200e-6:
            n += 1
        else:
            runs[n] += 1
            n = 1
    if data:
        runs[n] += 1
    return runs


def psh_gaps(pkts: list[list]) -> str:
    """How many new data segments carry PSH (the last of each write, ``tcp_push``), and the
    histogram of the distances (in segments) between consecutive ones."""
    seen: set[int] = set()
    psh = []
    for p in sorted(pkts, key=lambda p: p[0]):
        if p[1] == SENDER_ADDR and p[2] > 0 and p[3] not in seen:
            seen.add(p[3])
            if p[6] & 8:
                psh.append(p[3])
    gaps = collections.Counter(round(((b - a) % 2**32) / MSS) for a, b in itertools.pairwise(psh))
    return f"{len(psh)} of {len(seen)}, apart {sorted(gaps.most_common(4))}"


def ack_advances(pkts: list[list]) -> Iterator[tuple[float, int]]:
    """Each ACK that advances the cumulative ACK, in time order: (its time s, the segments it
    acknowledged)."""
    last = None
    # The receiver's packets of the transfer only: not the resets that answered the sender's
    # connects before the receiver listened (flags 0x04), nor other connections.
    mine = (p for p in pkts if p[1] != SENDER_ADDR and p[5] == RECEIVER_PORT and not p[6] & 4)
    for p in sorted(mine, key=lambda p: p[0]):
        if last is not None and p[4] != last:
            yield p[0], round(((p[4] - last) % 2**32) / MSS)
        last = p[4]


def ack_coverage(pkts: list[list]) -> collections.Counter[int]:
    """Histogram of segments acknowledged per ACK that advances the cumulative ACK."""
    return collections.Counter(n for _, n in ack_advances(pkts))


def ack_coverage_by_time(pkts: list[list], bin_s: float) -> list[tuple[float, int, int]]:
    """Per ``bin_s`` from the first data segment: (bin start s, ACKs that advance the cumulative
    ACK by one segment, by two)."""
    t0 = next(p[0] for p in pkts if p[1] == SENDER_ADDR and p[2] > 0)
    bins: dict[int, collections.Counter[int]] = collections.defaultdict(collections.Counter)
    for t, n in ack_advances(pkts):
        bins[int((t - t0) // bin_s)][n] += 1
    return [(k * bin_s, bins[k][1], bins[k][2]) for k in sorted(bins) if k >= 0]


def receiver_growth(rows: list[list[float]]) -> tuple[list[tuple[float, int, int]], float, int]:
    """From ``--receiver-info``'s samples: every change of the receive buffer (seconds,
    tcpi_rcv_space, SO_RCVBUF), and when tcpi_rcv_ssthresh first reached its largest value
    (seconds, bytes): after that, ``tcp_grow_window`` no longer asks for quick ACKs."""
    changes, last = [], None
    for t, _, _, space, rcvbuf in rows:
        if rcvbuf != last:
            changes.append((t, space, rcvbuf))
            last = rcvbuf
    top = max(r[2] for r in rows)
    return changes, next(r[0] for r in rows if r[2] == top), top


def release_pairs(events: list[tuple[str, int]]) -> collections.Counter[tuple[int, int]]:
    """Per ACK, in time order: (segments it newly acknowledged, new segments sent before the
    next ACK); a duplicate ACK acknowledges 0. ``events`` are ("a", cumulative ACK in
    segments) and ("s", segment number) in time order; a retransmission is not new."""
    out: collections.Counter[tuple[int, int]] = collections.Counter()
    una, cur, top = None, None, -1
    for kind, v in events:
        if kind == "a":
            if cur is not None:
                out[tuple(cur)] += 1
            cur = [v - una if una is not None and v > una else 0, 0]
            una = v if una is None else max(una, v)
        else:
            if cur is not None and v > top:
                cur[1] += 1
            top = max(top, v)
    if cur is not None:
        out[tuple(cur)] += 1
    return out


def linux_release_events(pkts: list[list], seconds: float) -> list[tuple[str, int]]:
    """:func:`release_pairs`' events from the sender-side capture, over ``seconds`` from the
    first data segment."""
    first = next(p for p in pkts if p[1] == SENDER_ADDR and p[2] > 0)
    isn, t0 = first[3] - 1, first[0]
    out = []
    for p in sorted(pkts, key=lambda p: p[0]):
        if p[0] - t0 > seconds or p[6] & 4:
            continue
        if p[1] == SENDER_ADDR and p[2] > 0:
            out.append(("s", ((p[3] - isn - 1) % 2**32) // MSS))
        elif p[1] != SENDER_ADDR and p[5] == RECEIVER_PORT and p[6] & 0x10:
            out.append(("a", ((p[4] - isn - 1) % 2**32) // MSS))
    return out


def tcplab_release_events(a: argparse.Namespace) -> tuple[list[tuple[str, int]], dict[str, Any]]:
    """The same case in tcplab as ``validate linux --stack linux`` builds it (seed 1000,
    traced): :func:`release_pairs`' events over ``--seconds`` and the flow's row."""
    import tcplab
    from tcplab.real.validate.compare import Case, tcplab_scenario
    from tcplab.scenario.parse import parse_scenario

    case = Case(
        rtt_ms=a.rtt_ms,
        loss=a.loss,
        cc=a.cc,
        rate_bps=round(a.rate_mbps * 1e6),
        queue=a.queue,
        duration_s=a.seconds,
    )
    table = tcplab_scenario(case, 1000, stack="linux")
    res = tcplab.run(parse_scenario(table, "<burst_capture>"), trace=True)
    seg = res.segments.sort_values("t_ns", kind="stable")
    out = [
        ("s" if k == "send" else "a", int((q - 1) // MSS))
        for k, q in zip(seg["kind"], seg["seq"], strict=True)
        if k in ("send", "ack")
    ]
    return out, res.flows.iloc[0].to_dict()


def ack_to_wire(pkts: list[list]) -> dict[int, list[list[float]]]:
    """Per ACK of the receiver that releases data: the delays (s) from the ACK's timestamp
    (taken in on the device) to each data segment the sender put on the device before the
    receiver's next packet, keyed by how many segments it released (1, 2, 3 = three or
    more). A segment more than 1 ms after its ACK was not released by it (the application
    or a timer sent it) and ends the burst."""
    out: dict[int, list[list[float]]] = {1: [], 2: [], 3: []}
    burst: list[float] = []
    ack_t = None

    def close() -> None:
        if ack_t is not None and burst:
            out[min(len(burst), 3)].append([t - ack_t for t in burst])

    for p in sorted(pkts, key=lambda p: p[0]):
        if p[1] != SENDER_ADDR:
            if p[5] == RECEIVER_PORT and not p[6] & 4:
                close()
                ack_t, burst = p[0], []
        elif p[2] > 0 and ack_t is not None:
            if p[0] - ack_t > 1e-3:
                close()
                ack_t, burst = None, []
            else:
                burst.append(p[0])
    close()
    return out


def _us(xs: list[float], q: float) -> float:
    return 1e6 * sorted(xs)[min(len(xs) - 1, int(q * len(xs)))]


def episodes(info: list[list]) -> list[tuple[float, int, int]]:
    """(s since start, cwnd before, new ssthresh) for every ssthresh change or cwnd drop of
    more than a fifth (a reduction to the same ssthresh)."""
    out, t0 = [], info[0][0]
    for (_, cw0, ss0), (t, cw, ss) in itertools.pairwise(info):
        if ss != ss0 or (cw < 0.8 * cw0 and ss < 2**30):
            out.append((t - t0, cw0, ss))
    return out


def replay_drops(pkts: list[list], rate_bps: float, queue: int) -> tuple[int, int, Counter]:
    """The sender's data segments, at their device timestamps, through a DropTail queue of
    ``queue`` waiting packets served at ``rate_bps`` (IP bytes: payload + 52 header bytes):
    (drops, how many of the retransmitted segments were among them, and per drop the ACK that
    released it as (segments it acknowledged, segments it released)). If the replay's drops
    are the emulator's, the sender's own timing decides the losses."""
    dropped, retx, causes = _replay(pkts, rate_bps, queue)
    return len(dropped), len(dropped & retx), causes


def _replay(pkts: list[list], rate_bps: float, queue: int) -> tuple[set[int], set[int], Counter]:
    """``replay_drops``'s queue: (sequence numbers dropped at their first transmission or
    later, sequence numbers sent more than once, the releasing ACK of each drop)."""
    finish: list[float] = []  # when each packet in the queue or on the wire is done
    dropped, first, retx = set(), set(), set()
    causes: collections.Counter[tuple[int, int]] = collections.Counter()
    last_ack = None
    acked = 0
    burst: list[int] = []
    for p in sorted(pkts, key=lambda p: p[0]):
        if p[1] == SENDER_ADDR and p[2] > 0:
            t, svc = p[0], 8 * (p[2] + 52) / rate_bps
            finish = [f for f in finish if f > t]
            waiting = sum(1 for f in finish if f - svc > t)
            if p[3] in first:
                retx.add(p[3])
            first.add(p[3])
            if waiting >= queue:
                dropped.add(p[3])
                burst.append(1)
            else:
                finish.append(max(t, finish[-1] if finish else t) + svc)
                burst.append(0)
        elif p[1] != SENDER_ADDR and p[5] == RECEIVER_PORT and not p[6] & 4:
            if any(burst):
                causes[(acked, len(burst))] += 1
            acked = round(((p[4] - last_ack) % 2**32) / MSS) if last_ack is not None else 0
            last_ack, burst = p[4], []
    return dropped, retx, causes


def tie_after_burst(
    pkts: list[list], rate_bps: float, queue: int
) -> tuple[int, int, list[float], list[float], list[bool]]:
    """The tie at a full 2-packet queue: an ACK of two segments that releases three or more
    new ones (a cwnd increase; the queue is then full), followed by an ACK of one segment that
    releases new data. Returns (how many such pairs of ACKs, in how many the single ACK's
    first segment is dropped in the replay of ``replay_drops``, and per pair: the spacing of
    the two ACKs on the device minus one packet time on the link, the single ACK's time to
    its first segment minus the first ACK's, both in s, and whether that segment was
    dropped). Segments more than 1 ms after an ACK, or sent before, are not its release;
    retransmissions end the pair."""
    dropped, _, _ = _replay(pkts, rate_bps, queue)
    packet = 8 * (MSS + 52) / rate_bps
    acks: list[tuple[float, int, list[tuple[float, int]], bool]] = []
    seen: set[int] = set()
    last = None
    for p in sorted(pkts, key=lambda p: p[0]):
        if p[1] != SENDER_ADDR:
            if p[5] == RECEIVER_PORT and not p[6] & 4:
                n = round(((p[4] - last) % 2**32) / MSS) if last is not None else 0
                if last is None or 0 < (p[4] - last) % 2**32 < 2**31:
                    last = p[4]
                acks.append((p[0], n, [], True))
        elif p[2] > 0 and acks and p[0] - acks[-1][0] <= 1e-3:
            if p[3] in seen:
                acks[-1] = (*acks[-1][:3], False)
            else:
                acks[-1][2].append((p[0], p[3]))
        if p[1] == SENDER_ADDR and p[2] > 0:
            seen.add(p[3])
    spacing: list[float] = []
    delay: list[float] = []
    lost: list[bool] = []
    for (t0, n0, s0, new0), (t1, n1, s1, new1) in itertools.pairwise(acks):
        if n0 == 2 and len(s0) >= 3 and n1 == 1 and s1 and new0 and new1:
            lost.append(s1[0][1] in dropped)
            spacing.append(t1 - t0 - packet)
            delay.append((s1[0][0] - t1) - (s0[0][0] - t0))
    return len(lost), sum(lost), spacing, delay, lost


def link_packets(pcap: Path) -> list[tuple[float, str, int, int, int, int, int, int]]:
    """The TCP packets of the emulator's link capture (``emu/link0-both.pcap``, LINKTYPE_RAW,
    ns timestamps: a data segment when the link starts to send it, an ACK when the emulator
    took it from the receiver): (time s, source address hex, source port, seq, ack, TCP flags,
    IP length, payload bytes)."""
    raw = pcap.read_bytes()
    out = []
    off = 24
    while off + 16 <= len(raw):
        sec, nsec, incl, _ = struct.unpack_from("<IIII", raw, off)
        pkt = raw[off + 16 : off + 16 + incl]
        off += 16 + incl
        if len(pkt) < 40 or pkt[0] >> 4 != 4 or pkt[9] != 6:
            continue
        ihl = (pkt[0] & 15) * 4
        total = struct.unpack_from("!H", pkt, 2)[0]
        sport, _, seq, ack = struct.unpack_from("!HHII", pkt, ihl)
        doff = (pkt[ihl + 12] >> 4) * 4
        t = sec + nsec * 1e-9
        out.append((t, pkt[12:16].hex(), sport, seq, ack, pkt[ihl + 13], total, total - ihl - doff))
    return out


def receiver_ack_time(
    link: list[tuple[float, str, int, int, int, int, int, int]], rate_bps: float, one_way_s: float
) -> dict[str, list[float]]:
    """The receiving host's time from a data segment's arrival to its ACK, from the link
    capture (``link_packets``): a segment is due at the receiver one transmission (its IP length
    at ``rate_bps``) and ``one_way_s`` after its timestamp; an ACK that advances is timed from
    the segment that ends at its ACK number. Returns the delays (s) by what the ACK covers:
    ``"1 PSH"``, ``"1"`` (one segment without PSH), ``"2"``, ``"3+"``."""
    out: dict[str, list[float]] = {"1 PSH": [], "1": [], "2": [], "3+": []}
    due: dict[int, tuple[float, bool]] = {}
    last_ack: int | None = None
    for t, src, sport, seq, ack, flags, total, payload in link:
        if src == SENDER_ADDR:
            if payload > 0:
                due[(seq + payload) % 2**32] = (
                    t + 8 * total / rate_bps + one_way_s,
                    bool(flags & 8),
                )
        elif sport == RECEIVER_PORT and not flags & 4 and flags & 16:
            advances = last_ack is None or 0 < (ack - last_ack) % 2**32 < 2**31
            if advances and last_ack is not None and ack in due:
                n = round(((ack - last_ack) % 2**32) / MSS)
                at, psh = due[ack]
                key = "3+" if n >= 3 else "2" if n == 2 else "1 PSH" if psh else "1"
                if n >= 1:
                    out[key].append(t - at)
            if advances:
                last_ack = ack
    return out


def emulator_read_latency(
    pkts: list[list], link: list[tuple[float, str, int, int, int, int, int, int]], rate_bps: float
) -> dict[str, list[float]]:
    """How long after the sender's device timestamp (``pkts``, the sender-side capture) the
    emulator's link starts to send a new data segment that found it idle (``link``, the link
    capture): the emulator's read of the TUN device. Keyed by what released the segment:
    ``"lone"`` (an ACK that released one segment), ``"first"`` (the first of several). Both
    captures stamp CLOCK_REALTIME."""
    kind: dict[int, str] = {}
    sent: dict[int, float] = {}
    release: list[int] = []
    last_ack_t = None

    def close() -> None:
        if release:
            kind[release[0]] = "lone" if len(release) == 1 else "first"

    for p in sorted(pkts, key=lambda p: p[0]):
        if p[1] != SENDER_ADDR:
            close()
            release, last_ack_t = [], p[0]
        elif p[2] > 0 and p[3] not in sent:
            sent[p[3]] = p[0]
            if last_ack_t is not None and p[0] - last_ack_t <= 1e-3:
                release.append(p[3])
    close()
    out: dict[str, list[float]] = {"lone": [], "first": []}
    busy_until = None
    seen: set[int] = set()
    for t, src, _, seq, _, _, total, payload in link:
        if src != SENDER_ADDR or payload <= 0:
            continue
        idle = busy_until is None or t > busy_until + 1e-6
        busy_until = t + 8 * total / rate_bps
        if seq in seen:
            continue
        seen.add(seq)
        if idle and seq in kind:
            out[kind[seq]].append(t - sent[seq])
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--queue", type=int, default=21)
    ap.add_argument("--rtt-ms", type=float, default=100.0)
    ap.add_argument("--seconds", type=float, default=15.0)
    ap.add_argument("--rate-mbps", type=float, default=10.0)
    ap.add_argument("--cc", choices=("cubic", "reno"), default="cubic")
    ap.add_argument(
        "--gso-max-segs",
        type=int,
        default=0,
        help="the sender device's gso_max_segs (1: one segment per skb, so no TSO deferral)",
    )
    ap.add_argument("--busy", type=int, default=0, help="busy loops beside the transfer")
    ap.add_argument("--out", type=Path, default=None, help="keep the files here")
    ap.add_argument("--loss", type=float, default=0.0, help="random loss of data segments")
    ap.add_argument(
        "--compare-tcplab",
        action="store_true",
        help="run the case in tcplab too and compare what each ACK acknowledged and released",
    )
    ap.add_argument(
        "--receiver-info",
        action="store_true",
        help="the receiver samples its own TCP_INFO (rcv_ssthresh, rcv_space) and SO_RCVBUF",
    )
    a = ap.parse_args(argv)
    if not 1 <= a.seconds <= 20:
        ap.error(f"--seconds: must be in 1..20 (got {a.seconds:g})")
    if not 0 <= a.loss < 1:
        ap.error(f"--loss: must be in [0, 1) (got {a.loss:g})")
    out = a.out or Path(tempfile.mkdtemp(prefix="burst-"))
    out.mkdir(parents=True, exist_ok=True)
    path = (
        f'[[path]]\nrate = "{a.rate_mbps:g}Mbps"\ndelay = "{a.rtt_ms / 2:g}ms"\nqueue = {a.queue}\n'
        + (f"down = {{ loss = {a.loss!r} }}\n" if a.loss else "")
    )
    (out / "path.toml").write_text(path, encoding="utf-8")
    (out / "sender.py").write_text(SENDER, encoding="utf-8")
    (out / "receiver.py").write_text(
        RECEIVER_INFO if a.receiver_info else RECEIVER, encoding="utf-8"
    )
    receiver_json = out / "receiver.json"
    result = out / "sender.json"
    # Both endpoints under SCHED_FIFO 5, below the emulator, as in the validation's testbed.
    server = (
        f"chrt -f 5 {sys.executable} {out / 'sender.py'} {result} {a.seconds:g} {a.cc} "
        f"{a.gso_max_segs}"
    )
    busy = [
        subprocess.Popen(["timeout", f"{a.seconds + 3:g}", "sh", "-c", "while :; do :; done"])
        for _ in range(a.busy)
    ]
    try:
        with open("/proc/loadavg") as f:
            load0 = f.read().split()[0]
        subprocess.run(
            [sys.executable, "-m", "tcplab", "emu", str(out / "path.toml"), "--out",
             str(out / "emu"), "--pcap", "0:both", "--server", server, "--quiet", "--",
             "chrt", "-f", "5", sys.executable, str(out / "receiver.py"), str(receiver_json)],
            check=True,
            timeout=a.seconds + 60,
        )  # fmt: skip
        with open("/proc/loadavg") as f:
            load1 = f.read().split()[0]
    finally:
        for p in busy:
            p.kill()
            p.wait()
    run = json.loads(result.read_text(encoding="utf-8"))
    summary = json.loads((out / "emu" / "summary.json").read_text(encoding="utf-8"))
    emu = summary["emulator"]
    print(f"load average {load0} -> {load1}; busy loops {a.busy}; files in {out}")
    rate = 8 * emu["bytes_out"]["fwd"] / a.seconds / 1e6
    print(f"{a.cc}, gso_max_segs {a.gso_max_segs or 'default'}: {rate:.2f} Mbit/s on the link")
    print(f"back-to-back runs of data segments: {sorted(bursts(run['pkts']).items())}")
    n, retx, causes = replay_drops(run["pkts"], a.rate_mbps * 1e6, a.queue)
    print(
        f"replay of the sender's timestamps through the queue: {n} drops, {retx} of them "
        f"retransmitted; the ACK before each (acknowledged, released): "
        f"{causes.most_common(5)}"
    )
    pairs, tie_drops, spacing, delay, lost = tie_after_burst(
        run["pkts"], a.rate_mbps * 1e6, a.queue
    )
    if spacing:
        print(
            f"an ACK of 2 releasing 3+, then an ACK of 1: {pairs}, the second's segment dropped in "
            f"{tie_drops}"
        )
        for what, keep in (("all pairs", None), ("the dropped", True), ("the kept", False)):
            sp = [x for x, d in zip(spacing, lost, strict=True) if keep is None or d == keep]
            dl = [x for x, d in zip(delay, lost, strict=True) if keep is None or d == keep]
            if sp:
                print(
                    f"  {what}: ACK spacing minus one packet time p10/p50/p90 "
                    f"{_us(sp, 0.1):.1f}/{_us(sp, 0.5):.1f}/{_us(sp, 0.9):.1f} µs, the single's "
                    f"time to the device minus the first's {_us(dl, 0.1):.1f}/{_us(dl, 0.5):.1f}/"
                    f"{_us(dl, 0.9):.1f} µs"
                )
    w = sorted(run["writes"])
    print(
        f"application writes: {len(w)}, bytes p10/p50/p90 {w[len(w) // 10]}/{w[len(w) // 2]}/"
        f"{w[9 * len(w) // 10]}; data segments with PSH: {psh_gaps(run['pkts'])}"
    )
    print(f"segments per advancing ACK: {sorted(ack_coverage(run['pkts']).items())}")
    eps = ", ".join(f"{t:.2f} s {cw}->{ss}" for t, cw, ss in episodes(run["info"]))
    print(f"loss episodes (cwnd before -> ssthresh): {eps}")
    for n, delays in ack_to_wire(run["pkts"]).items():
        if not delays:
            continue
        first = [d[0] for d in delays]
        gaps = [b - a for d in delays for a, b in itertools.pairwise(d)]
        what = "one segment" if n == 1 else f"{n}{'+' if n == 3 else ''} segments"
        print(
            f"ACKs releasing {what}: {len(delays)}; ACK to first segment on the device "
            f"p10/p50/p90 {_us(first, 0.1):.1f}/{_us(first, 0.5):.1f}/{_us(first, 0.9):.1f} µs"
            + (f"; gap between its segments p50 {_us(gaps, 0.5):.1f} µs" if gaps else "")
        )
    pcap = out / "emu" / "link0-both.pcap"
    if pcap.exists():
        link = link_packets(pcap)
        for what, times in (
            (
                "receiver: ACK after the segment it answers was due",
                receiver_ack_time(link, a.rate_mbps * 1e6, a.rtt_ms / 2e3),
            ),
            (
                "emulator: a new segment on the idle link after the sender's device stamp",
                emulator_read_latency(run["pkts"], link, a.rate_mbps * 1e6),
            ),
        ):
            print(
                f"{what}, p10/p50/p90 µs: "
                + "; ".join(
                    f"{k}: {len(v)}, {_us(v, 0.1):.1f}/{_us(v, 0.5):.1f}/{_us(v, 0.9):.1f}"
                    for k, v in times.items()
                    if v
                )
            )
    if a.compare_tcplab:
        lx = release_pairs(linux_release_events(run["pkts"], a.seconds))
        events, flow = tcplab_release_events(a)
        tl = release_pairs(events)
        print(
            f"per ACK (acknowledged, released), Linux / tcplab over {a.seconds:g} s: "
            + ", ".join(
                f"{k}: {lx[k]}/{tl[k]}"
                for k in sorted(set(lx) | set(tl), key=lambda k: -lx[k] - tl[k])[:10]
            )
        )
        print(
            f"tcplab: {8 * flow['bytes_delivered'] / a.seconds / 1e6:.2f} Mbit/s delivered, "
            f"{flow['retransmitted_segments']} segments retransmitted, "
            f"{flow['fast_retransmits']} fast retransmits, {flow['timeouts']} timeouts"
        )
    if a.receiver_info:
        changes, t_top, top = receiver_growth(json.loads(receiver_json.read_text("utf-8")))
        print(
            "receiver buffer (s: rcv_space -> SO_RCVBUF, bytes): "
            + ", ".join(f"{t:.2f}: {sp} -> {rb}" for t, sp, rb in changes)
        )
        print(f"receiver: rcv_ssthresh reached its largest value, {top} bytes, at {t_top:.2f} s")
        print(
            "ACKs of one / two segments per 0.5 s: "
            + ", ".join(
                f"{t:.1f} s {n1}/{n2}" for t, n1, n2 in ack_coverage_by_time(run["pkts"], 0.5)
            )
        )
    lat = emu["lateness_us"]
    print(
        f"queue drops {emu['dropped']['fwd']}; emulator lateness mean {lat['mean']:.1f} µs, "
        f"max {lat['max']:.0f} µs, {lat['over_1ms']} packets over 1 ms"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
