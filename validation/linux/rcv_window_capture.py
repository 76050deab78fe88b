"""The receiver's ACKs and advertised window, real Linux vs tcplab's ``rcv_window = "linux"``.

    sudo python validation/linux/rcv_window_capture.py [--rtt-ms 40] [--out DIR]

Runs a 3 s bulk transfer over the matrix's link (10 Mbit/s, RTT as given, DropTail queue of
100 packets) twice: through ``tcplab emu`` between two Linux stacks (the receiver listens, as
in the matrix; the sender uses cubic) with a capture of both directions, and in ``tcplab run``
with ``stack = "linux"``, ``rcv_buf = "32MiB"`` (the testbed's ``tcp_rmem[2]``), also captured.
Then prints, for each, the receiver's ACKs in the first 0.5 s after the first data segment (how
many, how many acknowledge one segment), the runs of consecutive per-segment ACKs, and the
advertised window at 0.1 / 0.2 / 0.3 / 0.5 s (in segments of 1448 bytes). Needs root, TUN and
iproute2 for the Linux half (``--sim-only`` skips it).
"""

from __future__ import annotations

import argparse
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

MSS = 1448
#: The sender programs' start (this one's and burst_capture.py's): a listener tcplab emu waits
#: for, then a cubic connection to the receiver, retried until it listens (needs socket, time).
CONNECT = """
d = socket.socket(); d.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
d.bind(("10.99.0.1", 5999)); d.listen(1)  # only for tcplab emu's wait for a listener
for _ in range(200):
    try:
        c = socket.socket(); c.setsockopt(socket.IPPROTO_TCP, 13, b"cubic")
        c.connect(("10.99.0.2", 5001)); break
    except OSError:
        c.close(); time.sleep(0.05)
"""
SENDER = (
    """
import socket, time
"""
    + CONNECT.lstrip("\n")
    + """end, buf = time.monotonic() + 3.0, bytes(65536)
while time.monotonic() < end:
    c.send(buf)
c.close()
"""
)
#: The receiver programs' start (this one's and burst_capture.py's ``--receiver-info``): listen
#: on the receiver's address and accept the one connection as ``c`` (needs socket).
ACCEPT = """
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("10.99.0.2", 5001)); s.listen(1)
c, _ = s.accept()
"""
RECEIVER = (
    """
import socket
"""
    + ACCEPT.lstrip("\n")
    + """buf = bytearray(1 << 18)
while c.recv_into(buf):
    pass
"""
)


def packets(pcap: Path) -> list[tuple[float, bytes, int, int, int, int, int]]:
    """(time s, source address, payload length, ack, window field, flags, window scale option
    or -1) of every TCP packet of a raw-IPv4 pcap."""
    data = pcap.read_bytes()
    nano = data[:4] in (b"\x4d\x3c\xb2\xa1", b"\xa1\xb2\x3c\x4d")
    out, at = [], 24
    while at < len(data):
        sec, frac, incl = struct.unpack_from("<III", data, at)
        pkt = data[at + 16 : at + 16 + incl]
        at += 16 + incl
        ihl = (pkt[0] & 0x0F) * 4
        total = struct.unpack_from("!H", pkt, 2)[0]
        tcp = pkt[ihl:]
        ack, off_flags, window = struct.unpack_from("!IHH", tcp, 8)
        hlen = (off_flags >> 12) * 4
        wscale, opts, i = -1, tcp[20:hlen], 0
        while i < len(opts) and opts[i] != 0:
            if opts[i] == 1:
                i += 1
                continue
            if opts[i] == 3:
                wscale = opts[i + 2]
            i += max(opts[i + 1], 2)
        t = sec + frac / (1e9 if nano else 1e6)
        out.append((t, pkt[12:16], total - ihl - hlen, ack, window, off_flags & 0x3F, wscale))
    return out


def summary(pcap: Path) -> str:
    pk = packets(pcap)
    synack = next(p for p in pk if p[5] & 0x12 == 0x12)
    receiver, wscale, last = synack[1], max(synack[6], 0), synack[3]
    t0 = next(p[0] for p in pk if p[1] != receiver and p[2] > 0)
    acks = []  # (time since the first data segment, segments acknowledged, window in segments)
    for t, src, _, ack, win, flags, _ in pk:
        if src != receiver or flags & 0x02 or ack == last:
            continue
        acks.append((t - t0, ((ack - last) % 2**32) / MSS, (win << wscale) / MSS))
        last = ack
    early = [a for a in acks if a[0] < 0.5]
    runs, n = [], 0
    for _, segs, _ in early:
        if segs <= 1.01:
            n += 1
        elif n:
            runs.append(n)
            n = 0

    def window_at(t: float) -> str:
        w = [a[2] for a in acks if a[0] <= t]
        return f"{w[-1]:.0f}" if w else "-"

    return (
        f"{len(early)} ACKs in 0.5 s, {sum(1 for a in early if a[1] <= 1.01)} for one segment; "
        f"per-segment runs {runs[:6]}; window at 0.1/0.2/0.3/0.5 s "
        + " / ".join(window_at(t) for t in (0.1, 0.2, 0.3, 0.5))
        + f" segments (max {max(a[2] for a in acks):.0f})"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--rtt-ms", type=float, default=40.0)
    ap.add_argument("--out", type=Path, default=None, help="keep the captures here")
    ap.add_argument("--sim-only", action="store_true", help="only tcplab's side (no root)")
    a = ap.parse_args(argv)
    out = a.out or Path(tempfile.mkdtemp(prefix="rcvwin-"))
    out.mkdir(parents=True, exist_ok=True)
    path = f'[[path]]\nrate = "10Mbps"\ndelay = "{a.rtt_ms / 2:g}ms"\nqueue = 100\n'
    (out / "path.toml").write_text(path, encoding="utf-8")
    flow = '[[flows]]\nstack = "linux"\ncc = "cubic"\nmss = 1448\nrcv_buf = "32MiB"\n'
    (out / "sim.toml").write_text(f'duration = "3s"\nseed = 1\n{path}{flow}', encoding="utf-8")
    cli = [sys.executable, "-m", "tcplab"]
    subprocess.run(
        [*cli, "run", str(out / "sim.toml"), "--out", str(out / "sim"), "--pcap", "0:both"],
        check=True,
        capture_output=True,
    )
    if not a.sim_only:
        (out / "sender.py").write_text(SENDER, encoding="utf-8")
        (out / "receiver.py").write_text(RECEIVER, encoding="utf-8")
        server = f"{sys.executable} {out / 'sender.py'}"
        emu = [*cli, "emu", str(out / "path.toml"), "--out", str(out / "linux"), "--pcap"]
        subprocess.run(
            [
                *emu,
                "0:both",
                "--server",
                server,
                "--quiet",
                "--",
                sys.executable,
                str(out / "receiver.py"),
            ],
            check=True,
            timeout=60,
        )
        print(f"Linux : {summary(next((out / 'linux').glob('*.pcap')))}")
    print(f"tcplab: {summary(next((out / 'sim').glob('*.pcap')))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
