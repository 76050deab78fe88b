"""What an output directory holds: one run, its provenance, nothing outside it.

Regression tests, each failed before its fix: a hop name that is a path wrote captures outside
``--out``; ``summary.json`` recorded neither the scenario nor the build and embedded the output
path; a run, an analysis or a reproduction into a used directory left the earlier one's
figures and captures beside the new results.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from support import SCENARIOS
from tcplab.cli import main

core = pytest.importorskip("tcplab._core")

P2P = str(SCENARIOS / "p2p-bulk.toml")


def one_line_error(err: str, *parts: str) -> None:
    assert err.count("\n") == 1 and err.startswith("tcplab: error: "), err
    for part in parts:
        assert part in err, (part, err)


# -- a hop name is not a path ----------------------------------------------------------------


@pytest.mark.parametrize("name", ["../../x", "a/b", ".hidden", "/tmp/x"])
def test_a_hop_name_cannot_place_a_capture_outside_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    out = tmp_path / "a" / "b" / "out"
    status = main(["run", P2P, "--set", f"path[0].name={name}", "--pcap", "0", "--out", str(out)])
    _, err = capsys.readouterr()
    assert status == 2
    one_line_error(err, "p2p-bulk.toml", "path[0].name", "it names capture files")
    assert not list(tmp_path.rglob("*.pcap*")), "no capture anywhere"


def test_a_tiny_sample_interval_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["run", P2P, "--set", "sample_interval=1ns", "--json"])
    _, err = capsys.readouterr()
    assert status == 2
    one_line_error(err, "p2p-bulk.toml", "sample_interval", "at least 1ms", "1ns")
    assert main(["run", P2P, "--set", "duration=1s", "--set", "sample_interval=0", "--json"]) == 0
    capsys.readouterr()
