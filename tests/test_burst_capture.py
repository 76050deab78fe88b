"""validation/linux/burst_capture.py's analysis: back-to-back runs, ACK coverage and loss
episodes from a sender-side capture (the capture itself needs root and runs by hand)."""

from __future__ import annotations

from support import load_script

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
