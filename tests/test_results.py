from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from support import EVENT_KINDS, SCENARIOS, fake_core_result
from tcplab.results import EVENT_COLUMNS, TABLES, TIMESERIES_COLUMNS, RunResult
from tcplab.scenario.parse import load_scenario


def make_result(seed: int = 1, scenario: str = "p2p-bulk.toml") -> RunResult:
    config = load_scenario(SCENARIOS / scenario).to_config(seed=seed)
    raw = fake_core_result(config)
    return RunResult.from_core(raw, scenario=config["name"], seed=seed, wall_s=0.5, config=config)


def test_summary_tables() -> None:
    result = make_result(scenario="dumbbell-4.toml")
    assert list(result.flows["name"]) == ["cubic.0", "cubic.1", "newreno.0", "newreno.1"]
    assert result.flows["bytes_delivered"].dtype == np.int64
    assert result.flows["goodput_bps"].dtype == np.float64
    assert len(result.links) == 18  # 9 links x 2 directions
    assert set(result.links.columns) >= {"name", "dir", "tx_packets", "drops_queue", "drops_loss"}
    assert result.cross.empty


def test_timeseries_columns_and_dtypes() -> None:
    ts = make_result().timeseries
    assert tuple(ts.columns) == TIMESERIES_COLUMNS
    assert len(ts) == 6
    assert ts["t_ns"].dtype == np.int64
    assert ts["cwnd"].dtype == np.uint64
    assert ts["flow"].dtype == np.uint32
    assert list(ts["t_ns"]) == [0, 100_000_000, 200_000_000, 300_000_000, 400_000_000, 500_000_000]


def test_events_decode_kind_and_reason() -> None:
    ev = make_result().events
    assert tuple(ev.columns) == (*EVENT_COLUMNS, "reason_name")
    assert isinstance(ev["kind"].dtype, pd.CategoricalDtype)
    assert list(ev["kind"].cat.categories) == EVENT_KINDS
    assert list(ev["kind"].astype(str)) == ["connection_open", "timeout", "spurious_detected"]
    # raw codes; none of these kinds names its code (a timeout's is its backoff count)
    assert list(ev["reason"]) == [0, 1, 0]
    assert ev["reason_name"].isna().all()
    assert list(ev["spurious"]) == [-1, 1, -1]
    assert ev["spurious"].dtype == np.int8
    assert list(ev["value"]) == [0.0, 1.5, 0.25]


def test_reason_names_decode_by_kind() -> None:
    """Each kind's code means something else; a code that is a count is not decoded (a timeout
    backed off 9 times used to crash the export)."""
    from tcplab.results import _reason_names

    kinds = ["timeout", "retransmit", "drop_queue", "detector_verdict", "fast_retransmit"]
    rtx = ["timeout", "after_timeout", "fast_retransmit"]
    k = np.array([0, 1, 1, 2, 2, 3, 4, 0], "<u1")
    c = np.array([9, 1, 0, 1, 0, 4, 2, 200], "<u1")
    got = _reason_names(k, c, kinds, rtx).to_pylist()
    assert got == [
        None,
        "after_timeout",
        "timeout",
        "ack",
        "data",
        "genuine",
        "fast_retransmit",
        None,
    ]
    # a code beyond a kind's names is null, not an error
    assert _reason_names(np.array([2], "<u1"), np.array([7], "<u1"), kinds, rtx).to_pylist() == [
        None
    ]


def test_arrow_and_polars() -> None:
    result = make_result()
    tables = result.to_arrow()
    assert set(tables) == set(TABLES)
    assert all(isinstance(t, pa.Table) for t in tables.values())
    assert pa.types.is_dictionary(tables["events"].schema.field("kind").type)
    assert tables["timeseries"].num_rows == 6
    assert tables["flows"].schema.metadata is None  # no pandas metadata in the files
    pl = pytest.importorskip("polars")
    frames = result.to_polars()
    assert frames["events"]["kind"].cast(pl.String).to_list() == [
        "connection_open",
        "timeout",
        "spurious_detected",
    ]
    assert frames["flows"]["name"].to_list() == ["flow0"]


def test_report_has_the_json_contract() -> None:
    report = make_result(seed=3).report()
    assert list(report) == [
        "scenario",
        "seed",
        "flows",
        "links",
        "cross",
        "wall_s",
        "events",
        "packets",
        "sim_time_s",
    ]
    assert report["scenario"] == "p2p-bulk"
    assert report["seed"] == 3
    flow = report["flows"][0]
    for key in (
        "id",
        "name",
        "bytes_delivered",
        "duration_s",
        "goodput_bps",
        "segments_sent",
        "retransmitted_segments",
        "timeouts",
        "spurious_timeouts",
        "spurious_detected",
    ):
        assert key in flow
    json.dumps(report)


def read_dir(path: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(path.iterdir())}


def test_write_is_deterministic(tmp_path: Path) -> None:
    paths = make_result().write(tmp_path / "a")
    assert [p.name for p in paths] == ["summary.json", *(f"{t}.parquet" for t in TABLES)]
    make_result().write(tmp_path / "b")
    make_result(seed=2).write(tmp_path / "c")
    a, b, c = (read_dir(tmp_path / x) for x in "abc")
    assert a == b
    assert a["timeseries.parquet"] != c["timeseries.parquet"]
    summary = json.loads(a["summary.json"])
    assert (summary["scenario"], summary["seed"]) == ("p2p-bulk", 1)
    assert "wall_s" not in summary
    events = pq.read_table(tmp_path / "a" / "events.parquet").to_pandas()
    assert list(events["kind"].astype(str)) == ["connection_open", "timeout", "spurious_detected"]
    column = pq.read_metadata(tmp_path / "a" / "flows.parquet").row_group(0).column(0)
    assert column.compression == "ZSTD"


def _raw_with(**changes: Any) -> dict[str, Any]:
    raw = fake_core_result(load_scenario(SCENARIOS / "p2p-bulk.toml").to_config())
    raw.update(changes)
    return raw


def test_mismatched_column_lengths() -> None:
    raw = _raw_with()
    raw["timeseries"]["cwnd"] = ("<u8", np.zeros(2, "<u8").tobytes())
    with pytest.raises(ValueError, match=r"^timeseries: columns have different lengths"):
        RunResult.from_core(raw, scenario="x", seed=1)


def test_missing_column() -> None:
    raw = _raw_with()
    del raw["events"]["reason"]
    with pytest.raises(ValueError, match=r"^events: missing columns \['reason'\]$"):
        RunResult.from_core(raw, scenario="x", seed=1)


def test_event_code_out_of_range() -> None:
    result = RunResult.from_core(_raw_with(event_kinds=["timeout"]), scenario="x", seed=1)
    with pytest.raises(ValueError, match=r"^kind: code out of range 0\.\.0$"):
        result.events  # noqa: B018


def test_big_endian_columns_are_converted() -> None:
    raw = _raw_with()
    raw["timeseries"]["t_ns"] = (">i8", np.arange(6, dtype=">i8").tobytes())
    ts = RunResult.from_core(raw, scenario="x", seed=1).timeseries
    assert list(ts["t_ns"]) == [0, 1, 2, 3, 4, 5]
    assert ts["t_ns"].dtype == np.int64


def test_empty_summary_is_an_error() -> None:
    with pytest.raises(ValueError, match=r"^the simulator returned no summary$"):
        RunResult.from_core(_raw_with(summary=""), scenario="x", seed=1)


def test_rows_with_different_fields() -> None:
    raw = _raw_with()
    summary = json.loads(raw["summary"])
    summary["links"] = [
        {"name": "radio", "dir": "fwd", "kind": "rlc", "rlc_retransmissions": 4},
        {"name": "link0", "dir": "fwd", "kind": "link", "max_queue_packets": 100},
    ]
    raw["summary"] = json.dumps(summary)
    links = RunResult.from_core(raw, scenario="x", seed=1).links
    assert list(links.columns) == [
        "name",
        "dir",
        "kind",
        "rlc_retransmissions",
        "max_queue_packets",
    ]
    assert links["rlc_retransmissions"].isna().tolist() == [False, True]
    assert links["max_queue_packets"].isna().tolist() == [True, False]
