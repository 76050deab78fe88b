"""The ``aqm`` and ``ecn`` scenario keys: defaults, one-line errors, and a managed queue's
summary columns in a short run."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tcplab.errors import ScenarioError
from tcplab.scenario.aqm import DEFAULTS, KINDS
from tcplab.scenario.parse import parse_scenario

ROOT = Path(__file__).resolve().parent.parent
QUEUE_RS = ROOT / "crates" / "tcplab-sim" / "src" / "queue"


def _scenario(aqm: Any = None, *, down: Any = None, ecn: Any = None, **link: Any) -> dict:
    path: dict[str, Any] = {"name": "l0", "rate": "10Mbps", "delay": "10ms", **link}
    if aqm is not None:
        path["aqm"] = aqm
    if down is not None:
        path["down"] = {"aqm": down}
    flow: dict[str, Any] = {"name": "f", "cc": "cubic", "bytes": "200KB"}
    if ecn is not None:
        flow["ecn"] = ecn
    return {"name": "aqm", "duration": "2s", "path": [path], "flows": [flow]}


def _config(data: dict) -> dict[str, Any]:
    return parse_scenario(data, "aqm.toml").config


def test_a_name_fills_linux_defaults_on_both_directions() -> None:
    c = _config(_scenario("fq_codel"))
    for d in ("fwd", "rev"):
        a = c["hops"][0][d]["aqm"]
        assert a["kind"] == "fq_codel"
        assert (a["target_ns"], a["interval_ns"], a["ecn"]) == (5_000_000, 100_000_000, True)
        assert (a["flows"], a["quantum"], a["drop_batch"]) == (1024, 1514, 64)
    # a direction's own table overrides the link's
    c = _config(_scenario("codel", down={"kind": "pie", "target": "20ms"}))
    assert c["hops"][0]["fwd"]["aqm"]["kind"] == "pie"
    assert c["hops"][0]["fwd"]["aqm"]["target_ns"] == 20_000_000
    assert c["hops"][0]["rev"]["aqm"]["kind"] == "codel"
    # without the key a direction has none (the DropTail fast path)
    assert "aqm" not in _config(_scenario())["hops"][0]["fwd"]


def _struct_fields(file: str, struct: str) -> set[str]:
    text = (QUEUE_RS / file).read_text(encoding="utf-8")
    body = re.search(rf"pub struct {struct} \{{(.*?)\n\}}", text, re.S)
    assert body, struct
    return set(re.findall(r"pub (\w+):", body.group(1)))


def test_every_kind_gives_the_core_struct_fields() -> None:
    if not QUEUE_RS.is_dir():
        pytest.skip("the Rust sources are not here (installed package)")
    structs = {
        "codel": ("codel.rs", "CodelConfig"),
        "fq_codel": ("fq_codel.rs", "FqCodelConfig"),
        "pie": ("pie.rs", "PieConfig"),
        "red": ("red.rs", "RedConfig"),
        "dualpi2": ("dualpi2.rs", "DualPi2Config"),
    }
    for kind in KINDS:
        a = _config(_scenario(kind))["hops"][0]["fwd"]["aqm"]
        want = _struct_fields(*structs[kind]) if kind in structs else set()
        assert set(a) - {"kind"} == want, kind
        # one TOML key per field (times and sizes lose their unit suffix; DualPI2's
        # step_threshold is a time or a number of packets)
        keys = {re.sub(r"_(ns|bytes|packets)$", "", f) for f in want}
        assert keys == set(DEFAULTS[kind]), kind


@pytest.mark.parametrize(
    ("aqm", "message"),
    [
        ("bfifo", 'path[0].aqm: unknown queue discipline "bfifo"'),
        ({"target": "5ms"}, "path[0].aqm.kind: required field missing"),
        ({"kind": "codel", "flows": 4}, "path[0].aqm.flows: unknown field"),
        ({"kind": "codel", "target": "0s"}, "path[0].aqm.target: must be > 0"),
        ({"kind": "codel", "interval": "101s"}, "path[0].aqm.interval: must be ≤ 100s"),
        ({"kind": "fq_codel", "ce_threshold": "0s"}, "path[0].aqm.ce_threshold: must be > 0"),
        ({"kind": "fq_codel", "flows": 0}, "path[0].aqm.flows: must be between 1 and 65536"),
        ({"kind": "fq_codel", "quantum": 100}, "path[0].aqm.quantum: must be ≥ 256 bytes"),
        ({"kind": "fq_codel", "ecn": "yes"}, "path[0].aqm.ecn: must be true or false"),
        ({"kind": "pie", "alpha": 33}, "path[0].aqm.alpha: must be between 0 and 32"),
        ({"kind": "red", "probability": 0}, "path[0].aqm.probability: must be in (0, 1]"),
        ({"kind": "red", "min": 30000, "max": 20000}, "path[0].aqm.min: must be < max"),
        ({"kind": "red", "max": "1MB"}, "path[0].aqm.max: must be ≤ the queue limit"),
        ({"kind": "red", "min": 5000, "burst": 1}, "path[0].aqm.burst: is too small for min"),
        ({"kind": "dualpi2", "target": "0s"}, "path[0].aqm.target: must be > 0"),
        ({"kind": "dualpi2", "tupdate": "500ns"}, "path[0].aqm.tupdate: must be ≥ 1us"),
        ({"kind": "dualpi2", "alpha": 0.001}, "path[0].aqm.alpha: must be between 1/256 and"),
        ({"kind": "dualpi2", "coupling": 0}, "path[0].aqm.coupling: must be between 1 and 255"),
        ({"kind": "dualpi2", "c_protection": 101}, "path[0].aqm.c_protection: must be between"),
        ({"kind": "dualpi2", "min_qlen_step": -1}, "path[0].aqm.min_qlen_step: must be between"),
        ({"kind": "dualpi2", "step_threshold": -1}, "path[0].aqm.step_threshold: must be between"),
        ({"kind": "dualpi2", "step_threshold": "2"}, "path[0].aqm.step_threshold: must be a time"),
    ],
)
def test_bad_parameters_get_one_line_field_errors(aqm: Any, message: str) -> None:
    with pytest.raises(ScenarioError) as err:
        _config(_scenario(aqm))
    text = str(err.value)
    assert message in text
    assert "\n" not in text


def test_the_core_gives_the_same_rule_for_the_direction() -> None:
    core = pytest.importorskip("tcplab._core")
    import json

    c = _config(_scenario("codel"))
    c["hops"][0]["fwd"]["aqm"]["target_ns"] = 0
    with pytest.raises(ValueError, match=r"hops\[0\]\.fwd\.aqm\.target: must be > 0"):
        core.validate(json.dumps(c))


def test_ack_filter_links_take_no_aqm() -> None:
    with pytest.raises(ScenarioError, match=r"path\[0\]\.aqm: not supported on an ack_filter"):
        _config(_scenario("codel", ack_filter={"threshold": 2}))


def test_the_ecn_key() -> None:
    modes = {True: "on", False: "off", "passive": "passive"}
    for value, mode in modes.items():
        assert _config(_scenario(ecn=value))["flows"][0]["tcp"]["ecn"] == mode
    # absent: the core's default (off), and the configuration stays as it was
    assert "ecn" not in _config(_scenario())["flows"][0]["tcp"]
    with pytest.raises(ScenarioError, match=r'flows\[0\]\.ecn: must be true, false or "passive"'):
        _config(_scenario(ecn="on"))


def test_a_managed_queue_reports_its_columns() -> None:
    pytest.importorskip("tcplab._core")
    from tcplab.campaign.single import run_config

    data = _scenario({"kind": "codel", "ecn": True}, ecn=True, queue=200)
    data["flows"][0]["bytes"] = "unlimited"
    summary = run_config(_config(data))
    fwd = next(r for r in summary["links"] if r["dir"] == "fwd")
    assert fwd["aqm"] == "codel"
    # slow start overshoots CoDel's 5 ms target: the ECN flow is marked, not dropped
    assert fwd["ecn_marks"] > 0
    assert fwd["drops_aqm"] == 0
    assert 0 < fwd["sojourn_p50_ms"] <= fwd["sojourn_p99_ms"]


@pytest.mark.parametrize("kind", ["pep", "dropper", "host"])
def test_hops_without_a_discipline_say_why(kind: str) -> None:
    data = _scenario()
    data["path"].append({"kind": kind, "aqm": "codel"})
    with pytest.raises(ScenarioError, match=rf"path\[1\]\.aqm: not supported on a {kind} hop: "):
        _config(data)


def test_traced_runs_sample_the_managed_queues_delay() -> None:
    pytest.importorskip("tcplab._core")
    from tcplab.runner import run

    data = _scenario({"kind": "codel"}, queue=200)
    data["flows"][0]["bytes"] = "unlimited"
    data["sample_interval"] = "50ms"
    q = run(parse_scenario(data, "aqm.toml"), trace=True).queues
    fwd = q[q["dir"].astype(str) == "fwd"]
    assert fwd["delay_ms"].notna().all()
    # CoDel holds the sojourn near its 5 ms target once the start-up burst is controlled
    late = fwd[fwd["t_ns"] > 1_000_000_000]["delay_ms"]
    assert 0 <= late.median() <= 20
    plain = run(parse_scenario(_scenario(), "aqm.toml"), trace=True).queues
    assert "delay_ms" not in plain


def _radio(aqm: Any) -> dict:
    hop = {"kind": "rlc", "queue": 50, "spike_rate": 0, "aqm": aqm}
    flow = {"name": "f", "cc": "cubic", "bytes": "unlimited"}
    return {"name": "rlc-aqm", "duration": "20s", "path": [hop], "flows": [flow]}


def test_an_rlc_buffer_takes_a_discipline_on_both_directions() -> None:
    c = _config(_radio({"kind": "codel", "target": "20ms"}))
    for d in ("down", "up"):
        assert c["hops"][0][d]["aqm"]["kind"] == "codel"
        assert c["hops"][0][d]["aqm"]["target_ns"] == 20_000_000
    with pytest.raises(ScenarioError, match=r"^path\[0\]\.aqm\.interval: must be > 0$"):
        _config(_radio({"kind": "codel", "interval": "0ms"}))
    # without the key the buffer keeps its DropTail model
    data = _radio("codel")
    del data["path"][0]["aqm"]
    assert "aqm" not in _config(data)["hops"][0]["down"]


def test_a_codel_rlc_buffer_reports_its_columns() -> None:
    pytest.importorskip("tcplab._core")
    from tcplab.campaign.single import run_config

    summary = run_config(_config(_radio("codel")))
    down = next(r for r in summary["links"] if r["kind"] == "rlc" and r["dir"] == "fwd")
    assert down["aqm"] == "codel"
    assert down["drops_aqm"] > 0
    assert 0 < down["sojourn_p50_ms"] <= down["sojourn_p99_ms"]


def _cell(**keys: Any) -> dict:
    hop = {"kind": "wlan", "ap_queue": 30, **keys}
    flows = [{"name": "f", "cc": "cubic", "bytes": "unlimited", "count": 2}]
    wired = {"name": "wired", "rate": "100Mbps", "delay": "1ms"}
    return {"name": "wlan-aqm", "duration": "3s", "path": [hop, wired], "flows": flows}


def test_the_wlan_ap_and_station_queues_take_a_discipline() -> None:
    c = _config(_cell(ap_aqm="fq_codel", sta_aqm={"kind": "pie", "target": "20ms"}))
    hop = c["hops"][0]
    assert hop["ap_aqm"]["kind"] == "fq_codel" and hop["sta_aqm"]["target_ns"] == 20_000_000
    assert "ap_aqm" not in _config(_cell())["hops"][0]
    with pytest.raises(ScenarioError, match=r"^path\[0\]\.ap_aqm\.quantum: must be ≥ 256"):
        _config(_cell(ap_aqm={"kind": "fq_codel", "quantum": 100}))
    moving = _cell(ap_aqm="codel")
    moving["path"][0]["aps"] = [{"name": "a"}, {"name": "b", "x": 50}]
    moving["path"][0]["stations"] = [{"flows": [0, 1], "path": [[0, 0, 0], [2, 50, 0]]}]
    with pytest.raises(ScenarioError, match=r"path\[0\]\.ap_aqm: not supported with moving"):
        _config(moving)


def test_an_fq_codel_ap_reports_its_columns() -> None:
    pytest.importorskip("tcplab._core")
    from tcplab.campaign.single import run_config

    summary = run_config(_config(_cell(ap_aqm="fq_codel")))
    ap = next(r for r in summary["links"] if r.get("role") == "ap")
    assert ap["aqm"] == "fq_codel"
    assert ap["sojourn_p50_ms"] is not None and ap["tx_packets"] > 0
    sta = next(r for r in summary["links"] if r.get("role") == "station")
    assert "aqm" not in sta or sta["aqm"] is None


def _trace_scenario(tmp_path: Path, aqm: Any, up: bool = False) -> dict:
    trace = tmp_path / "cell.down"
    trace.write_text("".join(f"{ms}\n" for ms in range(1, 101)), encoding="utf-8")
    hop: dict[str, Any] = {"kind": "trace", "down": str(trace), "delay": "20ms", "aqm": aqm}
    if up:
        hop["up"] = str(trace)
    else:
        hop["up_rate"] = "10Mbps"
    flow = {"name": "f", "cc": "cubic", "bytes": "unlimited", "ecn": True}
    return {"name": "trace-aqm", "duration": "5s", "path": [hop], "flows": [flow]}


def test_a_trace_hop_takes_a_discipline_on_its_trace_driven_directions(tmp_path: Path) -> None:
    c = _config(_trace_scenario(tmp_path, {"kind": "codel", "target": "20ms"}))
    assert c["hops"][0]["fwd"]["aqm"]["target_ns"] == 20_000_000
    assert "aqm" not in c["hops"][0]["rev"]  # up_rate: a link direction, DropTail
    both = _config(_trace_scenario(tmp_path, "fq_codel", up=True))["hops"][0]
    assert both["fwd"]["aqm"]["kind"] == both["rev"]["aqm"]["kind"] == "fq_codel"
    with pytest.raises(ScenarioError, match=r"^path\[0\]\.aqm\.interval: must be > 0$"):
        _config(_trace_scenario(tmp_path, {"kind": "codel", "interval": "0ms"}))


def test_a_codel_trace_hop_marks_and_reports_its_columns(tmp_path: Path) -> None:
    pytest.importorskip("tcplab._core")
    from tcplab.campaign.single import run_config

    summary = run_config(_config(_trace_scenario(tmp_path, {"kind": "codel", "ecn": True})))
    down = next(r for r in summary["links"] if r["kind"] == "trace" and r["dir"] == "fwd")
    assert down["aqm"] == "codel"
    assert down["ecn_marks"] > 0 and down["drops_aqm"] == 0
    assert 0 < down["sojourn_p50_ms"] <= down["sojourn_p99_ms"]
    up = next(r for r in summary["links"] if r["kind"] == "trace" and r["dir"] == "rev")
    assert "aqm" not in up


def test_dualpi2_runs_on_a_link_and_reports_its_columns() -> None:
    pytest.importorskip("tcplab._core")
    from tcplab.campaign.single import run_config

    data = _scenario({"kind": "dualpi2", "target": "10ms"}, ecn=True, queue=500)
    data["flows"][0]["bytes"] = "unlimited"
    c = _config(data)
    assert c["hops"][0]["fwd"]["aqm"]["target_ns"] == 10_000_000
    assert c["hops"][0]["fwd"]["aqm"]["coupling"] == 2
    fwd = next(r for r in run_config(c)["links"] if r["dir"] == "fwd")
    assert fwd["aqm"] == "dualpi2"
    # CUBIC sends ECT(0): a classic flow, marked with p'^2 in the C-queue
    assert fwd["ecn_marks"] > 0 and fwd["drops_aqm"] == 0
