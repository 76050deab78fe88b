"""validation/linux/bbr_internals.py's parsing of a bpftrace log (the run itself needs root and
bpftrace and is made by hand; validation/linux/bbr-trace/ keeps one)."""

from __future__ import annotations

import itertools

from support import REPO, load_script

BI = load_script("validation/linux/bbr_internals.py", "bbr_internals")


def _line(t_ns: int, sk: int, rtt_cnt: int, cnt: int, app_limited: int, mode: int = 0) -> str:
    # t_ns sk rtt_cnt next_rtt_delivered mode round_start full_bw_reached full_bw_cnt full_bw
    # bw delivered ca_state app_limited packets_out wmem_queued sndbuf unsent
    return (
        f"{t_ns} {sk} {rtt_cnt} 10 {mode} 1 {int(mode > 0)} {cnt} {1 << 24} {1 << 24} 10 3 "
        f"{app_limited} 5 1000 4000 -1"
    )


def test_parse_keeps_the_busiest_socket_and_times_from_connect() -> None:
    log = "\n".join(
        [
            "t0_ns 1000000000 retrans 7",
            "Attaching 1 probe...",
            _line(1_500_000_000, 11, 1, 0, 0),
            _line(1_600_000_000, 22, 9, 0, 0),  # another connection to the same port
            _line(2_000_000_000, 11, 2, 1, 40),
            _line(3_000_000_000, 11, 3, 3, 0, mode=1),
        ]
    )
    rows, retrans = BI.parse(log)
    assert retrans == 7
    assert [r["sk"] for r in rows] == [11, 11, 11]
    assert [r["t_s"] for r in rows] == [0.5, 1.0, 2.0]
    assert [r["app_limited"] for r in rows] == [0, 40, 0]
    assert rows[1]["unsent"] == -1  # signed: write_seq - snd_nxt


def test_bandwidth_unit_is_packets_per_microsecond_shifted_by_24() -> None:
    # One MSS-sized packet per µs is 1448 * 8 bit per µs = 11584 Mbit/s.
    assert BI.mbps(1 << 24) == 11584.0


def test_saved_run_reads_and_leaves_startup() -> None:
    log = (REPO / "validation/linux/bbr-trace/internals_20M_300ms_s1000.txt").read_text()
    rows, retrans = BI.parse(log)
    assert retrans > 0
    assert any(r["mode"] == 1 for r in rows)  # DRAIN was reached
    assert all(b["rtt_cnt"] >= a["rtt_cnt"] for a, b in itertools.pairwise(rows))
