"""``tcplab sweep``: the grid, the seeds, the rows and their files, and bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tcplab.campaign.sweep import parse_vary, sweep
from tcplab.cli import main
from tcplab.scenario.parse import read_scenario

SHORT = ["duration=3s"]


def run_main(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(list(args))
    out, err = capsys.readouterr()
    return status, out, err


def test_parse_vary_keeps_toml_arrays_and_tables_whole() -> None:
    got = parse_vary(["a=1,2", 'b=[0, 1],[2],{kind = "x", n = 1}', "c='p,q',r"])
    assert got == [
        ("a", ["1", "2"]),
        ("b", ["[0, 1]", "[2]", '{kind = "x", n = 1}']),
        ("c", ["'p,q'", "r"]),
    ]


def test_parse_vary_reads_escaped_quotes_inside_strings() -> None:
    # `\"` inside "..." is a quote character, not the end of the string (it made 2 grid
    # points of 3); in '...' (a TOML literal string) a backslash is just a backslash.
    got = parse_vary(['flows[0].name="a\\"b,c",x,y', "n='a\\',b"])
    assert got == [("flows[0].name", ['"a\\"b,c"', "x", "y"]), ("n", ["'a\\'", "b"])]


@pytest.mark.parametrize(
    ("items", "message"),
    [
        (["noequals"], "--vary 'noequals': expected KEY=V1,V2"),
        (["a=1,,2"], "--vary a: empty value"),
        (["a=1", "a=2"], "--vary a: given twice"),
    ],
)
def test_parse_vary_errors(items: list[str], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_vary(items)


def test_grid_order_types_and_determinism() -> None:
    from tcplab.scenario.parse import apply_overrides

    data, source = read_scenario("p2p-bulk")
    data = apply_overrides(data, SHORT)
    vary = parse_vary(["path[0].loss=0.0,0.01", "flows[0].cc=newreno,cubic"])
    rows = sweep(data, vary, seeds=[1, 2], source=source, jobs=2)
    assert [(r["path[0].loss"], r["flows[0].cc"], r["seed"]) for r in rows] == [
        (loss, cc, seed) for loss in (0.0, 0.01) for cc in ("newreno", "cubic") for seed in (1, 2)
    ]
    assert all(isinstance(r["path[0].loss"], float) for r in rows)
    # random loss costs goodput (the lossless runs still lose to the queue in slow start)
    clean = [r for r in rows if r["path[0].loss"] == 0.0]
    lossy = [r for r in rows if r["path[0].loss"] == 0.01]
    assert max(r["goodput_bps"] for r in lossy) < min(r["goodput_bps"] for r in clean)
    # the seed matters under loss, and the same seeds give the same rows (pool or not)
    assert len({r["goodput_bps"] for r in lossy if r["flows[0].cc"] == "newreno"}) == 2
    assert sweep(data, vary, seeds=[1, 2], source=source, jobs=1) == rows


def test_cli_table_and_files(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    import pyarrow.csv as pcsv
    import pyarrow.parquet as pq

    pq_path, csv_path = tmp_path / "rows.parquet", tmp_path / "sub" / "rows.csv"
    args = ["sweep", "--set", SHORT[0], "--vary", "path[0].rate=5Mbps,10Mbps", "--seeds", "2"]
    status, out, _ = run_main(capsys, *args, "--out", str(pq_path))
    assert status == 0
    lines = out.splitlines()
    assert lines[0].split()[:3] == ["path[0].rate", "flow", "runs"]
    assert lines[1].split()[:3] == ["5Mbps", "flow0", "2"]
    assert lines[2].split()[:3] == ["10Mbps", "flow0", "2"]
    assert f"wrote 4 rows to {pq_path}" in out
    table = pq.read_table(pq_path)
    assert table.num_rows == 4
    assert table.column("seed").to_pylist() == [1, 2, 1, 2]
    assert run_main(capsys, *args, "--seed", "7", "--out", str(csv_path))[0] == 0
    assert pcsv.read_csv(csv_path).column("seed").to_pylist() == [7, 8, 7, 8]
    status, out, _ = run_main(capsys, *args, "--json")
    assert status == 0
    rows = json.loads(out)
    assert [r["path[0].rate"] for r in rows] == ["5Mbps", "5Mbps", "10Mbps", "10Mbps"]
    assert all(r["bytes_delivered"] > 0 for r in rows)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--seeds", "0"], "--seeds: must be ≥ 1 (got 0)"),
        (["--jobs", "0"], "--jobs: must be ≥ 1 (got 0)"),
        (["--out", "x.txt"], "--out: must end in .parquet or .csv (got x.txt)"),
        (
            ["--vary", "flows[0].cc=newreno,bogus"],
            'flows[0].cc: unknown congestion control "bogus"',
        ),
        (["--vary", "flows[0].cc=bogus"], "(at flows[0].cc=bogus)"),
    ],
)
def test_cli_bad_input_is_one_line_exit_2(
    capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    status, out, err = run_main(capsys, "sweep", *args)
    assert status == 2
    assert out == ""
    assert err.count("\n") == 1
    assert message in err
