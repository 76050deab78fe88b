"""validation/linux/burst_capture.py's analysis: back-to-back runs, ACK coverage, loss
episodes, the queue replay and PSH from a sender-side capture (the capture itself needs root
and runs by hand)."""

from __future__ import annotations

import struct
from pathlib import Path

from support import load_script, write_raw_pcap

BC = load_script("validation/linux/burst_capture.py", "burst_capture")
SND = BC.SENDER_ADDR
RCV = bytes([10, 99, 0, 2]).hex()


def test_back_to_back_runs_split_at_200us() -> None:
    # (time s, source, payload, seq, ack): a pair 50 µs apart, a single, a run of three.
    t = [0.0, 50e-6, 1.5e-3, 3.0e-3, 3.1e-3, 3.19e-3]
    pkts = [[x, SND, 1448, i, 0, 40000, 0x10] for i, x in enumerate(t)]
    pkts.append([1e-6, SND, 0, 0, 0, 40000, 0x10])  # a pure ACK from the sender is not data
    pkts.append([20e-6, RCV, 0, 0, 0, 5001, 0x10])  # nor is the receiver's ACK
    assert BC.bursts(pkts) == {2: 1, 1: 1, 3: 1}


def test_ack_coverage_counts_segments_and_skips_duplicates() -> None:
    base = 2**32 - 1448  # the cumulative ACK wraps
    acks = [base, base + 2 * 1448, base + 2 * 1448, base + 3 * 1448, base + 13 * 1448]
    pkts = [[i * 1e-3, RCV, 0, 0, a % 2**32, 5001, 0x10] for i, a in enumerate(acks)]
    pkts.append([2.5e-3, RCV, 0, 0, 12345, 5999, 0x10])  # another connection's packet: not counted
    pkts.append([0.5e-3, RCV, 0, 0, 999, 5001, 0x14])  # a reset from before the listen: not counted
    assert BC.ack_coverage(pkts) == {2: 1, 1: 1, 10: 1}


def test_episodes_on_ssthresh_change_and_on_a_drop_to_the_same_ssthresh() -> None:
    inf = 2**31 - 1
    info = [(0.0, 10, inf), (0.1, 60, inf), (0.2, 55, 42), (0.3, 50, 42), (0.4, 70, 42)]
    info += [(0.5, 52, 42), (0.6, 60, 42)]  # 70 -> 52: a reduction with ssthresh 42 again
    assert BC.episodes(info) == [(0.2, 60, 42), (0.5, 70, 42)]


def test_replay_drops_a_fourth_back_to_back_segment_and_names_the_ack() -> None:
    # 12 Mbit/s: a 1500-byte packet takes 1 ms. An ACK of two segments releases four at once:
    # one goes on the wire, two wait, the fourth finds the queue (2) full.
    rate, mss = 12e6, 1448
    pkts = [[0.0, RCV, 0, 0, 1000, 5001, 0x10], [0.001, RCV, 0, 0, 1000 + 2 * mss, 5001, 0x10]]
    pkts += [[0.001 + i * 2e-6, SND, mss, 5000 + i * mss, 0, 40000, 0x10] for i in range(4)]
    # The dropped segment is sent again 10 ms later, when the queue is empty: not dropped.
    pkts.append([0.011, RCV, 0, 0, 1000 + 2 * mss, 5001, 0x10])
    pkts.append([0.0111, SND, mss, 5000 + 3 * mss, 0, 40000, 0x10])
    n, retransmitted, causes = BC.replay_drops(pkts, rate, 2)
    assert (n, retransmitted) == (1, 1)
    assert causes == {(2, 4): 1}
    # A queue of 3 takes all four.
    assert BC.replay_drops(pkts, rate, 3)[0] == 0


def test_psh_gaps_count_first_transmissions_only() -> None:
    mss = 1448
    flags = [0x10, 0x18, 0x10, 0x10, 0x18, 0x18]
    pkts = [[i * 1e-3, SND, mss, i * mss, 0, 40000, f] for i, f in enumerate(flags)]
    pkts.append([9e-3, SND, mss, 1 * mss, 0, 40000, 0x18])  # a retransmission: not counted
    assert BC.psh_gaps(pkts) == "3 of 6, apart [(1, 1), (3, 1)]"


def test_tie_after_burst_counts_the_single_acks_segment_dropped_behind_three() -> None:
    # 12 Mbit/s: a 1500-byte packet takes 1 ms. An ACK of two releases three back to back (one
    # on the wire, two waiting); the ACK of one, 1 ms later minus 40 µs, releases one more 20 µs
    # sooner after it than the three left after theirs: it reaches the full queue and is dropped.
    rate, mss = 12e6, 1448
    pkts = [[0.0, RCV, 0, 0, 1000, 5001, 0x10], [0.010, RCV, 0, 0, 1000 + 2 * mss, 5001, 0x10]]
    pkts += [[0.010 + 50e-6 + i * 2e-6, SND, mss, 5000 + i * mss, 0, 40000, 0x10] for i in range(3)]
    pkts.append([0.011 - 40e-6, RCV, 0, 0, 1000 + 3 * mss, 5001, 0x10])
    pkts.append([0.011 - 40e-6 + 30e-6, SND, mss, 5000 + 3 * mss, 0, 40000, 0x18])
    # The same again 20 ms later, but the single ACK comes 200 µs late: the queue has room.
    pkts.append([0.030, RCV, 0, 0, 1000 + 5 * mss, 5001, 0x10])
    pkts += [
        [0.030 + 50e-6 + i * 2e-6, SND, mss, 5000 + (4 + i) * mss, 0, 40000, 0x10] for i in range(3)
    ]
    pkts.append([0.031 + 200e-6, RCV, 0, 0, 1000 + 6 * mss, 5001, 0x10])
    pkts.append([0.031 + 230e-6, SND, mss, 5000 + 7 * mss, 0, 40000, 0x18])
    pairs, drops, spacing, delay, lost = BC.tie_after_burst(pkts, rate, 2)
    assert (pairs, drops, lost) == (2, 1, [True, False])
    assert abs(spacing[0] - (-40e-6)) < 1e-9
    assert abs(delay[0] - (30e-6 - 50e-6)) < 1e-9
    # The kept pair's margins are reported too: its ACK came 200 µs late.
    assert abs(spacing[1] - 200e-6) < 1e-9
    # A queue of 3 keeps it: the pairs are still counted, no drop.
    assert BC.tie_after_burst(pkts, rate, 3)[:2] == (2, 0)


def _pcap(path: Path, packets: list[tuple[float, str, int, int, int, int, int]]) -> None:
    """A LINKTYPE_RAW, ns-stamped capture of IPv4/TCP packets (time s, source address hex,
    source port, seq, ack, flags, payload bytes), as the emulator writes its link."""
    datagrams = []
    for t, src, sport, seq, ack, flags, payload in packets:
        total = 40 + payload
        ip = struct.pack(
            "!BBHHHBBH4s4s", 0x45, 0, total, 0, 0, 64, 6, 0, bytes.fromhex(src), b"\0" * 4
        )
        tcp = struct.pack("!HHIIBBHHH", sport, 1, seq, ack, 5 << 4, flags, 65535, 0, 0)
        datagrams.append((round(t * 1e9), ip + tcp + b"\0" * payload))
    write_raw_pcap(path, datagrams)


def test_receiver_ack_time_and_emulator_read_latency_from_the_link_capture(tmp_path: Path) -> None:
    # 12 Mbit/s, 1 ms one way: a 1448-byte segment (1488 bytes of IP) takes 0.992 ms on the link.
    rate, one_way, mss, tx = 12e6, 1e-3, 1448, 8 * 1488 / 12e6
    link = [
        (0.010, SND, 40000, 0, 0, 0x10, mss),  # segment 1
        (0.010 + tx, SND, 40000, mss, 0, 0x18, mss),  # segment 2, PSH
        # The receiver's ACK of 1 (a first ACK: no earlier one, so not timed), then of 2 PSH
        # 50 µs after segment 2 was due.
        (0.010 + tx + one_way, RCV, 5001, 0, mss, 0x10, 0),
        (0.010 + 2 * tx + one_way + 50e-6, RCV, 5001, 0, 2 * mss, 0x10, 0),
        # Segment 3 on an idle link, then 4 and 5; the receiver ACKs 3 to 5 (3+) and nothing else.
        (0.020, SND, 40000, 2 * mss, 0, 0x10, mss),
        (0.020 + tx, SND, 40000, 3 * mss, 0, 0x10, mss),
        (0.020 + 2 * tx, SND, 40000, 4 * mss, 0, 0x10, mss),
        (0.020 + 3 * tx + one_way + 30e-6, RCV, 5001, 0, 5 * mss, 0x10, 0),
    ]
    _pcap(tmp_path / "link.pcap", link)
    packets = BC.link_packets(tmp_path / "link.pcap")
    assert len(packets) == 8 and packets[1][5] == 0x18
    rcv = BC.receiver_ack_time(packets, rate, one_way)
    assert rcv["1"] == [] and rcv["2"] == []
    assert [round(x * 1e6, 3) for x in rcv["1 PSH"]] == [50.0]
    assert [round(x * 1e6, 3) for x in rcv["3+"]] == [30.0]
    # The sender's side: an ACK released segment 1 alone (20 µs before the link took it) and
    # another released 3-5 together (the first 7 µs before the link took it).
    pkts = [
        [0.0099, RCV, 0, 0, 1, 5001, 0x10],
        [0.010 - 20e-6, SND, mss, 0, 0, 40000, 0x10],
        [0.0199, RCV, 0, 0, 1, 5001, 0x10],
    ]
    pkts += [[0.020 - 7e-6 + i * 1e-6, SND, mss, (2 + i) * mss, 0, 40000, 0x10] for i in range(3)]
    read = BC.emulator_read_latency(pkts, packets, rate)
    assert [round(x * 1e6, 3) for x in read["lone"]] == [20.0]
    assert [round(x * 1e6, 3) for x in read["first"]] == [7.0]


def test_ack_coverage_by_time_bins_from_the_first_data_segment() -> None:
    mss = 1448
    pkts = [[1.0, SND, mss, 0, 0, 40000, 0x10]]  # the first data segment: t = 0
    acks = [(1.1, 1), (1.2, 3), (1.3, 4), (1.7, 6), (1.8, 6)]  # +1, +2, +1, +2, a duplicate
    pkts += [[t, RCV, 0, 0, 1000 + k * mss, 5001, 0x10] for t, k in acks]
    pkts.insert(0, [1.05, RCV, 0, 0, 1000, 5001, 0x10])  # the ACK the counts start from
    assert BC.ack_coverage_by_time(pkts, 0.5) == [(0.0, 2, 1), (0.5, 0, 1)]


def test_receiver_growth_lists_buffer_changes_and_when_rcv_ssthresh_stopped() -> None:
    # (s, bytes read, rcv_ssthresh, rcv_space, SO_RCVBUF)
    rows = [
        [0.0, 0, 60000, 14000, 131072],
        [0.1, 1000, 90000, 14000, 131072],
        [0.2, 5000, 400000, 50000, 600000],
        [0.3, 9000, 700000, 50000, 600000],
        [0.4, 9500, 700000, 50000, 600000],
    ]
    changes, t_top, top = BC.receiver_growth(rows)
    assert changes == [(0.0, 14000, 131072), (0.2, 50000, 600000)]
    assert (t_top, top) == (0.3, 700000)


def test_release_pairs_counts_what_each_ack_acknowledged_and_released() -> None:
    ev = [("a", 10), ("s", 12), ("s", 13), ("a", 12), ("s", 14), ("s", 15), ("s", 16)]
    # a duplicate ACK, then a retransmission (not new) and a new segment
    ev += [("a", 12), ("s", 11), ("s", 17), ("a", 18)]
    assert BC.release_pairs(ev) == {(0, 2): 1, (2, 3): 1, (0, 1): 1, (6, 0): 1}
