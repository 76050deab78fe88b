"""``tcplab analyze``: the command line, its outputs, bad input, and the analysis of a
simulator capture checked against the run's own event table (ground truth)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("tcplab._core")

from tcplab.analyze.capture import analyze_capture
from tcplab.campaign.sweep import run_config
from tcplab.cli import main
from tcplab.scenario.parse import parse_scenario

pytestmark = pytest.mark.core

LAN = {"kind": "link", "rate": "10Gbps", "delay": "0s", "queue": 100000}


@pytest.fixture(scope="module")
def train_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    """W-TCP downloads over the sto-3g `train` preset, captured next to the sender (hop 0)
    and next to the receiver (hop 2)."""
    d = tmp_path_factory.mktemp("train")
    table = {
        "name": "analyze-train",
        "duration": "200s",
        "seed": 3,
        "sample_interval": "0s",
        "path": [
            LAN,
            {
                "kind": "rlc",
                "name": "radio",
                "preset": "train",
                # radio stalls long enough for timeouts (1-9 s stalls come at random too)
                "stalls": [["6s", "5s"], ["20s", "8s"], ["40s", "3s"], ["60s", "12s"]],
            },
            LAN,
        ],
        "flows": [
            {
                "name": "download",
                "profile": "w-tcp",
                "app": "downloads",
                "sizes": {"kind": "empirical", "bins": [["300KB", "301KB", 1]]},
                "think": {"kind": "exponential", "mean": "2s"},
                "downloads": 10,
            }
        ],
        "pcap": [
            {"hop": 0, "dir": "both", "file": "snd.pcap"},
            {"hop": 2, "dir": "both", "file": "rcv.pcap"},
        ],
    }
    res = run_config(parse_scenario(table).to_config(out_dir=d), columns=True)
    return d, res


def _truth_timeouts(res: dict) -> list[tuple[int, int, int]]:
    ev = res["events_table"]
    k = res["event_kinds"].index("timeout")
    sel = ev["kind"] == k
    return sorted(
        zip(
            ev["conn"][sel].tolist(),
            ev["seq"][sel].tolist(),
            ev["spurious"][sel].tolist(),
            strict=True,
        )
    )


def test_sender_side_rtos_match_ground_truth(train_run: tuple[Path, dict]) -> None:
    d, res = train_run
    truth = _truth_timeouts(res)
    assert len(truth) >= 3, "the scenario should produce timeouts"
    r = analyze_capture(d / "snd.pcap", side="sender")
    conns = {c["conn"]: c for c in r.summary["connections"]}
    rx = r.retransmissions
    rto = rx[rx["class_name"] == "rto"]
    got = sorted(
        (int(conns[c]["dport"]) - 10000, int(s), int(sp))
        for c, s, sp in zip(rto["conn"], rto["seq"], rto["spurious"], strict=True)
    )
    assert got == truth
    # every flow's bytes are accounted for
    assert sum(c["bytes_acked"] for c in conns.values()) >= res["flows"][0]["bytes_delivered"]
    assert r.summary["sto_per_mb"] > 0


def test_cli_table_json_out_and_plot(
    train_run: tuple[Path, dict], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    d, _ = train_run
    assert main(["analyze", str(d / "snd.pcap"), "--side", "sender"]) == 0
    table = capsys.readouterr().out
    assert "STO per MB" in table and "10.1.0.1:5001" in table
    assert main(["analyze", str(d / "rcv.pcap"), "--json", "--filter", "10001"]) == 0
    obj = json.loads(capsys.readouterr().out)
    assert {"packets", "wall_s", "connections"} <= obj.keys()
    assert len(obj["connections"]) == 1
    c = obj["connections"][0]
    for k in ("retransmissions", "fast_retransmits", "rtos", "spurious_rtos", "sto_per_mb"):
        assert k in c
    assert c["side"] == "receiver"  # from the handshake timing
    out = tmp_path / "out"
    assert (
        main(["analyze", str(d / "snd.pcap"), "--out", str(out), "--plot", "--filter", "#1"]) == 0
    )
    names = sorted(p.name for p in out.iterdir())
    for f in (
        "summary.json",
        "connections.parquet",
        "retransmissions.parquet",
        "rtt_samples.parquet",
        "conn1-dir1-tseq.png",
        "conn1-dir1-rtt.png",
    ):
        assert f in names, names
    import pyarrow.parquet as pq

    assert pq.read_table(out / "rtt_samples.parquet").num_rows > 10


def test_not_a_capture_exits_2_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = tmp_path / "notes.txt"
    f.write_text("hello, not a capture\n")
    assert main(["analyze", str(f)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "notes.txt: not a capture" in err and "magic" in err


def test_cut_off_capture_is_reported(train_run: tuple[Path, dict], tmp_path: Path) -> None:
    d, _ = train_run
    data = (d / "snd.pcap").read_bytes()
    cut = tmp_path / "cut.pcap"
    cut.write_bytes(data[: len(data) // 2 + 7])
    r = analyze_capture(cut)
    assert r.summary["truncated_tail"] is True
    assert r.summary["packets"] > 100


def test_a_capture_mid_path_is_uncertain_not_all_spurious(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A capture on the bottleneck (40 s: the cross traffic starts at 30 s), in the middle of
    the path: the handshake cannot place it. Guessing a side used to call every retransmission
    spurious (110 of 110, truth 1)."""
    scenario = Path(__file__).resolve().parent.parent / "scenarios" / "cross-traffic.toml"
    out = tmp_path / "x"
    args = ["run", str(scenario), "--set", "duration=40s", "--set", "path[1].loss=0.01"]
    assert main([*args, "--pcap", "1", "--out", str(out), "--quiet"]) == 0
    truth = json.loads((out / "summary.json").read_text())["flows"][0]
    capsys.readouterr()
    assert main(["analyze", str(out / "bottleneck-both.pcap"), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    (data,) = [c for c in summary["connections"] if c["data_packets"] > 0]
    assert data["side"] == "uncertain"
    assert data["retransmissions"] > 10
    assert (
        data["spurious_retransmissions"]
        <= truth["spurious_timeouts"] + truth["spurious_fast_retransmits"]
    )


def _syn_flood(path: Path, n: int, gap_ns: int) -> None:
    """A pcap (raw IPv4, ns timestamps) of ``n`` SYNs ``gap_ns`` apart, each from its own
    address, none answered."""
    import struct

    from support import write_raw_pcap

    packets = []
    for k in range(n):
        tcp = struct.pack(">HHIIBBHHH", 40000, 80, k, 0, 5 << 4, 0x02, 65535, 0, 0)
        ip = struct.pack(">BBHHHBBHII", 0x45, 0, 40, 0, 0, 64, 6, 0, 0x0A000000 + k, 0x0A630001)
        packets.append((1_000_000_000 + k * gap_ns, ip + tcp))
    write_raw_pcap(path, packets)


def test_analysis_memory_follows_open_connections_not_the_capture(tmp_path: Path) -> None:
    """Unanswered SYNs 10 ms apart: 100 s of them and 800 s of them. A half-open connection
    is closed once idle for longer than a TCP waits between SYNs, and a connection without
    data keeps no result, so the peak (RSS, measured in a fresh process) is that of about
    130 s of SYNs in both. Before, every connection stayed until the end (about 3 KB each):
    the longer capture peaked over 200 MB above the shorter one."""
    import subprocess
    import sys

    script = (
        "import resource, sys\n"
        "from tcplab import _core\n"
        "s = _core.analyze(sys.argv[1])['summary']\n"
        "assert '\"connections\":[]' in s and '\"tcp_packets\":' + sys.argv[2] in s, s[:300]\n"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)\n"
    )
    peak = {}
    for n in (10_000, 80_000):
        f = tmp_path / f"syn{n}.pcap"
        _syn_flood(f, n, 10_000_000)
        r = subprocess.run(
            [sys.executable, "-c", script, str(f), str(n)],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert r.returncode == 0, r.stderr
        peak[n] = int(r.stdout) / 1024  # MB
    assert peak[80_000] - peak[10_000] < 40, peak
