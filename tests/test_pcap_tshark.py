"""A pcap written by ``tcplab run --pcap`` opens in Debian's tshark with no malformed packet,
valid checksums, and the SACK, DSACK, timestamp, MSS and window-scale options TCP negotiated.

Skipped when tshark is not installed (``.ci/run`` installs it, so CI always runs it).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

pytest.importorskip("tcplab._core")

from tcplab.cli import main

pytestmark = pytest.mark.core

TSHARK = shutil.which("tshark")


def _fields(pcap: Path, *fields: str, display_filter: str | None = None) -> list[list[str]]:
    assert TSHARK is not None
    argv = [
        TSHARK,
        "-n",
        "-r",
        str(pcap),
        "-o",
        "tcp.check_checksum:TRUE",
        "-o",
        "ip.check_checksum:TRUE",
        "-T",
        "fields",
        "-E",
        "separator=\t",
        "-E",
        "occurrence=a",
        "-E",
        "aggregator=,",
    ]
    for f in fields:
        argv += ["-e", f]
    if display_filter:
        argv += ["-Y", display_filter]
    out = subprocess.run(argv, check=True, capture_output=True, text=True).stdout
    return [line.split("\t") for line in out.splitlines()]


@pytest.mark.skipif(TSHARK is None, reason="tshark is not installed")
@pytest.mark.parametrize("payload", ["0", "all"])
def test_pcap_opens_in_tshark(tmp_path: Path, payload: str) -> None:
    # A lossy link makes SACK blocks; a reordering-free link still makes
    # DSACKs after spurious retransmissions now and then, so only SACK is required.
    # --pcap taps headers only (payload 0); a [[pcap]] table can keep whole payloads.
    tap = (
        ["--pcap", "0:both"]
        if payload == "0"
        else ["--set", 'pcap[0]={hop = 0, dir = "both", payload = "all"}']
    )
    args = ["run", "--quiet", "--json", "--out", str(tmp_path), *tap]
    for override in ("duration=5s", "path[0].loss=0.02", "path[0].rate=2Mbps"):
        args += ["--set", override]
    code = main(args)
    assert code == 0
    (pcap,) = tmp_path.glob("*.pcap")
    summary = json.loads((tmp_path / "summary.json").read_text())
    # every transmission on the tapped link is in the file (both directions)
    assert len(_fields(pcap, "frame.number")) == summary["packets"] > 300
    # zero malformed packets
    assert _fields(pcap, "frame.number", display_filter="_ws.malformed") == []
    # IPv4 header checksums are always verifiable and good (status 1 = good)
    ip_status = {r[0] for r in _fields(pcap, "ip.checksum.status")}
    assert ip_status == {"1"}, ip_status
    tcp_status = {r[0] for r in _fields(pcap, "tcp.checksum.status")}
    if payload == "all":
        assert tcp_status == {"1"}, tcp_status
    # the SYN carries MSS, SACK-permitted, timestamps and window scale
    syn = _fields(
        pcap,
        "tcp.options.mss_val",
        "tcp.options.wscale.shift",
        "tcp.options.sack_perm",
        "tcp.options.timestamp.tsval",
        display_filter="tcp.flags.syn == 1 && tcp.flags.ack == 0",
    )
    assert syn, "no SYN captured"
    mss, wscale, sack_perm, tsval = syn[0]
    assert mss == "1448"
    assert wscale != "" and sack_perm != "" and tsval != ""
    # ACKs carry SACK blocks (losses on the forward direction)
    sacks = _fields(
        pcap, "tcp.options.sack_le", "tcp.options.sack_re", display_filter="tcp.options.sack_le"
    )
    assert len(sacks) > 10
    # every segment carries timestamps
    no_ts = _fields(pcap, "frame.number", display_filter="tcp && !tcp.options.timestamp.tsval")
    assert no_ts == []
