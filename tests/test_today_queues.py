"""Rows "beyond the paper" (the papers' links with today's queues): shown, never counted, and
the helpers that put a discipline in a paper's configuration."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tcplab.papers.today_queues import download_throughput_bps, queue_row, with_ap_aqm
from tcplab.report.checks import Below, Beyond, Report
from tcplab.scenario.wlan_configs import uplink_config


def test_beyond_rows_have_no_verdict_and_stay_out_of_the_tally(tmp_path: Path) -> None:
    r = Report("demo", "Demo paper", tmp_path / "demo")
    r.check("x", Below(5), 4.0, source="§4: below 5 %")
    c = r.check("AP with FQ-CoDel: Jain", Beyond(), None, samples=[0.9, 1.0, 0.95], paper=None)
    assert c.kind == "beyond" and c.verdict is None
    assert c.tcplab == pytest.approx(0.95) and c.ci > 0
    assert r.passed
    md = r.write().read_text()
    assert "**1 of 1 predictions hold.**" in md
    assert "| AP with FQ-CoDel: Jain | beyond the paper |" in md
    res = json.loads((tmp_path / "demo" / "results.json").read_text())
    assert res["counts"]["beyond"]["total"] == 1
    assert res["counts"]["prediction"]["total"] == 1


def test_with_ap_aqm_fills_the_discipline_and_leaves_the_paper_config_alone() -> None:
    c = uplink_config(3, ap_queue=50, duration_s=1.0)
    f = with_ap_aqm(c, "fq_codel")
    assert "ap_aqm" not in c["hops"][0]
    a = f["hops"][0]["ap_aqm"]
    assert a["kind"] == "fq_codel" and a["quantum"] == 1514 and a["ecn"] is True


def test_an_fq_codel_ap_runs_and_reports_its_row() -> None:
    pytest.importorskip("tcplab._core")
    from tcplab.campaign.sweep import run_configs

    (s,) = run_configs([with_ap_aqm(uplink_config(3, duration_s=3.0), "fq_codel")], 1)
    ap = queue_row(s, kind="wlan", role="ap")
    assert ap["aqm"] == "fq_codel" and ap["tx_packets"] > 0
    with pytest.raises(KeyError):
        queue_row(s, kind="wlan", role="nobody")


def test_download_throughput_is_bytes_over_transfer_times() -> None:
    kinds = ["timeout", "transfer_done"]
    ev = {
        "kind": np.array([1, 0, 1]),
        "seq": np.array([1000, 5, 3000]),
        "value": np.array([1.0, 9.0, 3.0]),
    }
    assert download_throughput_bps({"events_table": ev, "event_kinds": kinds}) == 4000 * 8 / 4.0
