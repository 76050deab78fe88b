"""A user-space link between two TUN devices with tcplab's link semantics.

:class:`LinkDir` is one direction of a link and mirrors ``crates/tcplab-sim/src/link.rs``
(``LinkDir::offer``): a DropTail queue in front of a transmitter of fixed rate, then a one-way
propagation delay and a Bernoulli loss process.

- Serialisation time of an IP datagram of ``n`` bytes is ``ceil(8 n 1e9 / rate)`` ns, taken
  from a virtual departure clock (``busy_until``): a packet starts when the previous one ends
  or when it arrives, whichever is later, so the long-run rate is exact whatever the timing
  error of the process releasing packets.
- The queue limit counts packets *waiting*, not the one in transmission (as ns-3's
  PointToPointNetDevice and a Linux qdisc): with ``queue = 100`` a packet is dropped when 100
  packets wait behind the one being sent, i.e. 101 are in the system.
- A packet whose transmission ends exactly at ``now`` has left the queue.
- A packet lost on the wire still occupies the transmitter for its serialisation time (the loss
  draw happens after it is queued).

:func:`forward` is the single-threaded event loop (epoll on the two TUN fds plus a heap of timed
releases) and records, for every packet it writes, how late it was written relative to its
intended release time.
"""

from __future__ import annotations

import heapq
import os
import random
import select
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["Direction", "ForwardStats", "LinkDir", "forward", "tx_time_ns"]

#: Below this remaining wait the loop sleeps with nanosleep instead of epoll (whose timeout has
#: millisecond granularity in Python 3.11): packets that arrive meanwhile are read right after.
_SPIN_NS = 1_000_000


def tx_time_ns(nbytes: int, rate_bps: int) -> int:
    """Serialisation time of ``nbytes`` (IP datagram) at ``rate_bps``, rounded up to 1 ns."""
    return -(-(nbytes * 8 * 1_000_000_000) // rate_bps)


@dataclass
class LinkDir:
    """One direction of a link: DropTail queue, transmitter, propagation delay, loss."""

    rate_bps: int
    delay_ns: int
    queue: int
    loss: float = 0.0
    seed: int = 1
    busy_until: int = 0
    #: Transmission end times of the packets waiting or in service.
    inq: deque[int] = field(default_factory=deque)
    tx_packets: int = 0
    tx_bytes: int = 0
    drops_queue: int = 0
    drops_loss: int = 0
    max_queue: int = 0

    def __post_init__(self) -> None:
        if self.rate_bps <= 0 or self.delay_ns < 0 or self.queue < 1:
            raise ValueError("rate must be > 0, delay >= 0 and queue >= 1")
        if not 0.0 <= self.loss <= 1.0:
            raise ValueError("loss must be a probability")
        self._rng = random.Random(self.seed)

    def offer(self, nbytes: int, now: int) -> int | None:
        """Offer a datagram of ``nbytes`` at ``now`` (ns); return its arrival time at the far
        end, or None if it is dropped (queue full, or lost on the wire)."""
        inq = self.inq
        while inq and inq[0] <= now:
            inq.popleft()
        n = len(inq)
        # The head of inq is in service; the others wait.
        if n > 0 and n - 1 >= self.queue:
            self.drops_queue += 1
            return None
        start = max(self.busy_until, now)
        end = start + tx_time_ns(nbytes, self.rate_bps)
        self.busy_until = end
        inq.append(end)
        self.max_queue = max(self.max_queue, n)
        self.tx_packets += 1
        self.tx_bytes += nbytes
        if self.loss > 0.0 and self._rng.random() < self.loss:
            self.drops_loss += 1
            return None
        return end + self.delay_ns

    def counters(self) -> dict[str, int]:
        return {
            "tx_packets": self.tx_packets,
            "tx_bytes": self.tx_bytes,
            "drops_queue": self.drops_queue,
            "drops_loss": self.drops_loss,
            "max_queue": self.max_queue,
        }


@dataclass
class Direction:
    """A link direction bound to the TUN fd it reads from and the one it writes to."""

    name: str
    src_fd: int
    dst_fd: int
    link: LinkDir
    max_packet: int = 0
    min_packet: int = 1 << 30


@dataclass
class ForwardStats:
    """What the loop saw: per-direction counters and the release lateness of each packet."""

    #: ns by which each write happened after the packet's intended release time.
    lateness_ns: list[int] = field(default_factory=list)
    write_errors: int = 0
    #: Whether the loop ran under SCHED_FIFO.
    realtime: bool = False
    directions: dict[str, dict[str, int]] = field(default_factory=dict)


def forward(
    dirs: list[Direction],
    stop: Callable[[], bool],
    clock: Callable[[], int] = time.monotonic_ns,
    check_every_ns: int = 50_000_000,
    realtime: bool = False,
) -> ForwardStats:
    """Move packets between TUN fds through ``dirs`` until ``stop()`` is true (checked at least
    every ``check_every_ns``). The fds must be non-blocking. With ``realtime`` the loop runs
    under SCHED_FIFO priority 10 if the process may (root), and is restored afterwards."""
    stats = ForwardStats()
    old_policy = os.sched_getscheduler(0)
    old_param = os.sched_getparam(0)
    if realtime:
        try:
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(10))
            stats.realtime = True
        except OSError:
            pass
    by_fd = {d.src_fd: d for d in dirs}
    ep = select.epoll()
    for fd in by_fd:
        ep.register(fd, select.EPOLLIN)
    heap: list[tuple[int, int, int, bytes]] = []
    seq = 0
    late = stats.lateness_ns
    next_check = clock() + check_every_ns
    try:
        while True:
            now = clock()
            while heap and heap[0][0] <= now:
                at, _, fd, pkt = heapq.heappop(heap)
                try:
                    os.write(fd, pkt)
                except OSError:
                    stats.write_errors += 1
                late.append(clock() - at)
            if now >= next_check:
                if stop():
                    break
                next_check = now + check_every_ns
            wait = min(heap[0][0] if heap else next_check, next_check) - now
            if wait <= 0:
                ready = ep.poll(0)
            elif wait < _SPIN_NS:
                ready = ep.poll(0)
                if not ready:
                    time.sleep(wait / 1e9)
                    ready = ep.poll(0)
            else:
                # epoll rounds its timeout up to whole milliseconds: wake up to 1 ms early and
                # finish the wait with nanosleep (the branch above)
                ready = ep.poll((wait - _SPIN_NS) / 1e9)
            for fd, _ in ready:
                d = by_fd[fd]
                while True:
                    try:
                        pkt = os.read(fd, 65536)
                    except BlockingIOError:
                        break
                    t = clock()
                    size = len(pkt)
                    d.max_packet = max(d.max_packet, size)
                    d.min_packet = min(d.min_packet, size)
                    at = d.link.offer(size, t)
                    if at is not None:
                        seq += 1
                        heapq.heappush(heap, (at, seq, d.dst_fd, pkt))
    finally:
        ep.close()
        if stats.realtime:
            os.sched_setscheduler(0, old_policy, old_param)
    for d in dirs:
        stats.directions[d.name] = d.link.counters() | {
            "max_packet": d.max_packet,
            "min_packet": d.min_packet if d.max_packet else 0,
        }
    return stats
