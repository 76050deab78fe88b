"""What an output directory holds: one run, its provenance, nothing outside it.

Regression tests, each failed before its fix: a hop name that is a path wrote captures outside
``--out``; ``summary.json`` recorded neither the scenario nor the build and embedded the output
path; a run, an analysis or a reproduction into a used directory left the earlier one's
figures and captures beside the new results.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import tcplab
from support import SCENARIOS
from tcplab.cli import main
from tcplab.scenario.parse import parse_scenario

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


# -- provenance ----------------------------------------------------------------------------------


def test_summary_records_what_made_the_run_and_not_where_it_went(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["run", P2P, "--set", "duration=2s", "--seed", "7", "--pcap", "0", "--quiet"]
    for d in ("one", "two"):
        assert main([*args, "--out", str(tmp_path / d)]) == 0
    capsys.readouterr()
    one, two = tmp_path / "one", tmp_path / "two"
    # the same run in two directories: the same bytes, file by file
    names = sorted(p.name for p in one.iterdir())
    assert names == sorted(p.name for p in two.iterdir())
    for name in names:
        assert (one / name).read_bytes() == (two / name).read_bytes(), name
    summary = json.loads((one / "summary.json").read_text())
    assert summary["pcaps"] == ["link0-both.pcap"]
    prov = summary["provenance"]
    assert prov["tcplab"] == tcplab.__version__
    assert prov["core"] == core.__version__
    assert prov["commit"]
    assert prov["command"] == ["tcplab", *args]
    table = prov["scenario_table"]
    assert table["duration"] == "2s" and table["seed"] == 7  # --set and --seed applied
    assert table["pcap"] == [{"hop": 0, "dir": "both"}]  # --pcap applied
    # the table runs again to the same results
    again = tcplab.run(parse_scenario(table, "<provenance>"))
    assert again.summary["flows"] == summary["flows"]
    html = (one / "report.html").read_text()
    assert 'id="provenance"' in html and prov["scenario_sha256"] in html
    assert str(one) not in (one / "summary.json").read_text() + html


# -- one run per output directory -----------------------------------------------------------------


def test_a_run_into_a_used_directory_leaves_nothing_of_the_earlier_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    first = ["run", P2P, "--set", "duration=1s", "--pcap", "0", "--plot", "--out", str(out)]
    assert main([*first, "--quiet"]) == 0
    assert (out / "link0-both.pcap").exists() and list(out.glob("*.png"))
    (out / "notes.txt").write_text("mine")  # not tcplab's: kept
    second = ["run", P2P, "--set", "duration=1s", "--set", "path[0].name=wire"]
    assert main([*second, "--out", str(out), "--quiet"]) == 0
    capsys.readouterr()
    names = sorted(p.name for p in out.iterdir())
    assert not [n for n in names if n.endswith((".png", ".pcap"))], names
    assert "segments.parquet" not in names and "notes.txt" in names
    summary = json.loads((out / "summary.json").read_text())
    assert summary["provenance"]["scenario_table"]["path"][0]["name"] == "wire"
    assert "link0" not in (out / "report.html").read_text()


def test_an_analysis_into_a_used_directory_keeps_no_earlier_figures(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cap = tmp_path / "cap"
    assert (
        main(["run", P2P, "--set", "duration=2s", "--pcap", "0", "--out", str(cap), "--quiet"]) == 0
    )
    out = tmp_path / "an"
    out.mkdir()
    stale = out / "conn7-dir1-tseq.png"  # an earlier analysis's figure of a connection not here
    stale.write_bytes(b"png")
    (out / "mine.png").write_bytes(b"png")
    assert (
        main(["analyze", str(cap / "link0-both.pcap"), "--out", str(out), "--plot", "--json"]) == 0
    )
    capsys.readouterr()
    assert not stale.exists() and (out / "mine.png").exists()
    assert (out / "summary.json").exists() and list(out.glob("conn*-tseq.png"))


def test_an_interrupted_reproduction_leaves_no_earlier_results(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reproduction interrupted in a directory holding a finished one: the finished one's
    results.json, reports and figures must not sit beside the new figures."""
    from tcplab import papers
    from tcplab.report import plots

    folder = tmp_path / "out" / "sto-3g"
    folder.mkdir(parents=True)
    old = {"paper": "sto-3g", "figures": ["fig_old.png", "../outside.png"], "passed": True}
    (folder / "results.json").write_text(json.dumps(old))
    for name in ("report.md", "report.html", "fig_old.png", "mine.txt"):
        (folder / name).write_text("earlier")
    (tmp_path / "out" / "outside.png").write_text("not in the paper's folder")

    def interrupted(report: object, jobs: object = None) -> None:
        import matplotlib.pyplot as plt

        fig, _ = plt.subplots()
        plots.save(fig, folder / "fig_new.png")
        raise KeyboardInterrupt

    monkeypatch.setattr(papers.load("sto-3g"), "reproduce", interrupted)
    status = main(["reproduce", "sto-3g", "--quick", "--out", str(tmp_path / "out")])
    capsys.readouterr()
    assert status == 130
    names = sorted(p.name for p in folder.iterdir())
    assert names == ["fig_new.png", "mine.txt"], names
    assert (tmp_path / "out" / "outside.png").exists()


def test_an_installed_package_records_the_commit_its_core_was_built_from(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An installed wheel has no git work tree beside it: its provenance said ``unknown``."""
    import re

    from tcplab import version

    # where a wheel's files live: no crates/ beside the package, no git work tree around it
    monkeypatch.setattr(version, "__file__", str(tmp_path / "site-packages/tcplab/version.py"))
    commit = version.build()
    assert re.fullmatch(r"[0-9a-f]{40}(-dirty)?", commit), commit
    assert commit == core.__build_commit__
