"""``rcv_window``: the ``linux`` stack's receiver advertises a growing window (Linux's
rcv_ssthresh growth and DRS autotuning) and ACKs every segment that grows it; the keys are
checked and documented."""

from __future__ import annotations

import importlib.util
import itertools
import struct
from pathlib import Path

import pytest

pytest.importorskip("tcplab._core")

import tcplab
from support import REPO
from tcplab.errors import ScenarioError
from tcplab.scenario import parse as scenario
from tcplab.scenario.parse import load_scenario, parse_scenario

pytestmark = pytest.mark.core

MSS = 1448
CAPTURE = "validation/linux/rcv_window_capture.py"
SCENARIO = """
name = "rcv-window"
duration = "1s"
seed = 1
[[path]]
rate = "10Mbps"
delay = "20ms"
queue = 100
[[flows]]
stack = "linux"
cc = "cubic"
mss = 1448
"""


def _receiver_acks(pcap: Path) -> list[tuple[int, int]]:
    """(bytes newly acknowledged, scaled window) of every ACK the receiver sent after its
    SYN-ACK, from a raw-IPv4 pcap of both directions."""
    data = pcap.read_bytes()
    at = 24
    receiver: bytes | None = None
    wscale = 0
    last_ack: int | None = None
    out: list[tuple[int, int]] = []
    while at < len(data):
        incl = struct.unpack_from("<I", data, at + 8)[0]
        pkt = data[at + 16 : at + 16 + incl]
        at += 16 + incl
        ihl = (pkt[0] & 0x0F) * 4
        src = pkt[12:16]
        tcp = pkt[ihl:]
        ack, off_flags, window = struct.unpack_from("!IHH", tcp, 8)
        hlen, flags = (off_flags >> 12) * 4, off_flags & 0x3F
        if flags & 0x12 == 0x12:  # SYN-ACK: the (passive) receiver's
            receiver, last_ack = src, ack
            opts, i = tcp[20:hlen], 0
            while i < len(opts) and opts[i] != 0:
                if opts[i] == 1:
                    i += 1
                    continue
                if opts[i] == 3:
                    wscale = opts[i + 2]
                i += opts[i + 1]
            continue
        if src != receiver or last_ack is None:
            continue
        if ack != last_ack:
            out.append(((ack - last_ack) % 2**32, window << wscale))
            last_ack = ack
    return out


def _run(tmp_path: Path, *sets: str) -> list[tuple[int, int]]:
    path = tmp_path / "s.toml"
    path.write_text(SCENARIO, encoding="utf-8")
    tcplab.run(load_scenario(path, [*sets, "pcap=[{hop = 0, dir = 'both'}]"]), out=tmp_path)
    return _receiver_acks(next(tmp_path.glob("*.pcap")))


def test_linux_stack_receiver_grows_its_window(tmp_path: Path) -> None:
    acks = _run(tmp_path)
    windows = [w for _, w in acks]
    # 131072 bytes of buffer at 158/256: the 56-segment window of the first RTTs, then DRS.
    assert 80_896 in windows
    assert windows[-1] > 3 * 80_896
    assert all(b >= a for a, b in itertools.pairwise(windows))
    # Every growing segment is ACKed at once: far more per-segment ACKs than the 16 quick
    # ACKs of the start.
    assert sum(1 for adv, _ in acks if adv == MSS) > 60


def test_fixed_window_is_the_old_receiver(tmp_path: Path) -> None:
    # Without the transmit path too: its skbs' PSH segments are ACKed at once (tso.rs).
    acks = _run(tmp_path, "flows[0].rcv_window=fixed", "flows[0].tso_model=none")
    assert len({w for _, w in acks}) <= 2  # rcv_buf (less nothing unread), rounded to the scale
    assert sum(1 for adv, _ in acks if adv == MSS) <= 22


def test_capture_script_sim_side(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """validation/linux/rcv_window_capture.py's tcplab half: the receiver pattern the README
    compares with Linux's (per-segment ACK runs 22, 24, 66; window 56 / 187 / 240 / 240)."""
    spec = importlib.util.spec_from_file_location("capture", REPO / CAPTURE)
    assert spec is not None and spec.loader is not None
    capture = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(capture)
    assert capture.main(["--sim-only", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    # The first three runs; with Linux's transmit path lone ACKs of PSH segments follow them.
    assert "per-segment runs [22, 24, 66" in out, out
    assert "window at 0.1/0.2/0.3/0.5 s 56 / 187 / 240 / 240 segments" in out, out


def _flow(**keys: object) -> dict[str, object]:
    data = {
        "name": "k",
        "duration": "1s",
        "path": [{"rate": "10Mbps", "delay": "1ms"}],
        "flows": [keys],
    }
    return parse_scenario(data, "<test>").to_config()["flows"][0]["tcp"]


def test_keys() -> None:
    assert scenario.RCV_WINDOWS == ("fixed", "linux")
    tcp = _flow(stack="linux")
    assert (tcp["rcv_window"], tcp["rcv_buf"], tcp["rcv_scaling_ratio"]) == ("linux", 6 << 20, 158)
    assert _flow()["rcv_window"] == "fixed"
    assert _flow(rcv_window="linux", rcv_scaling_ratio=219)["rcv_scaling_ratio"] == 219
    with pytest.raises(ScenarioError, match=r"rcv_window.*fixed.*linux"):
        _flow(rcv_window="bsd")
    with pytest.raises(ScenarioError, match=r"rcv_scaling_ratio.*\"linux\" only"):
        _flow(rcv_scaling_ratio=200)
    with pytest.raises(ScenarioError, match="rcv_scaling_ratio"):
        _flow(rcv_window="linux", rcv_scaling_ratio=256)
