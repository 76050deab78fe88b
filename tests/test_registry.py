"""The registries are defined once, in Rust: Python's lists and docs/scenarios.md follow them;
and three validation defects found once stay fixed on both paths (Python's own checks,
and the core's validator when Python's are bypassed)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("tcplab._core")

import tcplab
from support import REPO
from tcplab import _core
from tcplab.errors import ScenarioError
from tcplab.scenario import parse as scenario
from tcplab.scenario import registry
from tcplab.scenario.parse import _parse_scenario, load_scenario, parse_scenario

REFERENCE = REPO / "docs" / "scenarios.md"


@pytest.fixture(scope="module")
def reference() -> str:
    if not REFERENCE.is_file():
        pytest.skip("docs/scenarios.md is not here (not a source checkout)")
    return REFERENCE.read_text(encoding="utf-8")


def _row(reference: str, key: str, section: str = "## `[[flows]]`") -> str:
    """The row of ``key`` in a section of docs/scenarios.md (default: the flow keys and the
    sub-tables after them)."""
    text = reference.split(section, 1)[1]
    return next(line for line in text.splitlines() if line.startswith(f"| `{key}` |"))


def test_python_lists_are_the_rust_registry() -> None:
    table = json.loads(_core.registry())
    ccs = table["congestion_controls"]
    assert tuple(e["name"] for e in ccs) == scenario.CONGESTION_CONTROLS
    assert tuple(e["name"] for e in ccs if e["loss_based"]) == scenario.PEP_CONGESTION_CONTROLS
    assert scenario.CC_PARAMS["vegas"] == ("alpha", "beta", "gamma")
    assert tuple(table["spurious_detectors"]) == scenario.SPURIOUS_DETECTORS
    assert tuple(table["spurious_fr_responses"]) == scenario.SPURIOUS_FR_RESPONSES
    assert scenario.DEFAULT_RTO_PROFILE == "rfc6298"
    assert scenario.RTO_PROFILES["linux"] == {
        "initial": "1s",
        "min": "200ms",
        "max": "120s",
        "granularity": "200ms",
        "max_backoff": 16,
        "restart_on_rtx": True,
        "estimator": "linux",
        "syn_retries": 6,
        "synack_retries": 5,
        "retries2": 15,
    }
    assert scenario.ACK_TIMERS == ("oneshot", "periodic")
    assert scenario.RTT_ESTIMATORS == ("rfc6298", "linux")


def test_every_hop_kind_builds_hops_rust_knows() -> None:
    """Each ``[[path]]`` kind of the one table produces only hop kinds Rust deserializes, and
    every Rust hop kind is produced by some bundled scenario."""
    rust = set(registry.names("hop_kinds"))
    seen: set[str] = set()
    files = [*sorted((REPO / "scenarios").rglob("*.toml")), *map(str, scenario.builtin_scenarios())]
    for f in files:
        seen |= {h["kind"] for h in load_scenario(f).config["hops"]}
    data = _p2p()
    link = data["path"][0]
    data["path"] = [{**link, "ack_filter": True}, {"kind": "dropper", "data_segments": [3]}, link]
    seen |= {h["kind"] for h in parse_scenario(data).config["hops"]}
    assert seen == rust
    assert set(scenario.HOP_KINDS) >= {"link", "dumbbell", "satellite", "rlc", "wlan"}


def test_cc_table_documents_every_controller_its_parameters_and_defaults(reference: str) -> None:
    cc_row = _row(reference, "cc")
    documented = set(re.findall(r'"([a-z_-]+)"', cc_row))
    assert documented == set(registry.cc_names())
    params_row = _row(reference, "cc_params")
    for entry in registry.registry()["congestion_controls"]:
        if not entry["params"]:
            assert f"`{entry['name']}`:" not in params_row
            continue
        part = params_row.split(f"`{entry['name']}`:")[1].split(". `")[0]
        for p in entry["params"]:
            assert f"`{p['key']}`" in part, (entry["name"], p["key"])
            assert f"({p['default']:g})" in part, (entry["name"], p["key"], p["default"])


def _shown(ns: int) -> str:
    for unit, size in (("s", 10**9), ("ms", 10**6)):
        if ns % size == 0:
            return f"{ns // size} {unit}"
    raise AssertionError(ns)


def test_rto_profile_table_is_the_registry(reference: str) -> None:
    rows = {
        m.group(1): [c.strip() for c in line.split("|")[2:7]]
        for line in reference.splitlines()
        if (m := re.match(r"\| `([a-z0-9-]+)`( \(.*?\))? \| \d", line))
    }
    for p in registry.registry()["rto_profiles"]:
        expected = [_shown(p[k]) for k in ("initial_ns", "min_ns", "max_ns", "granularity_ns")]
        assert rows[p["name"]] == [*expected, str(p["max_backoff"])], p["name"]
    assert "`rfc6298` (default)" in reference


@pytest.mark.parametrize(
    ("key", "registry_name"),
    [
        ("spurious_detection", "spurious_detectors"),
        ("spurious_response", "spurious_responses"),
        ("spurious_fr", "spurious_fr_detectors"),
        ("spurious_fr_response", "spurious_fr_responses"),
        ("recovery_cwnd", "recovery_cwnds"),
        ("loss_detection", "loss_detections"),
        ("ssthresh_from", "ssthresh_from"),
        ("timer", "ack_timers"),
    ],
)
def test_choice_rows_list_the_registry(reference: str, key: str, registry_name: str) -> None:
    row = _row(reference, key)
    assert [n for n in registry.names(registry_name) if f'"{n}"' not in row] == []


def test_hop_kind_table_is_documented(reference: str) -> None:
    kind_row = _row(reference, "kind", "## `[[path]]`")
    for kind in scenario.HOP_KINDS:
        assert f'"{kind}"' in kind_row
        assert f'## `[[path]]` with `kind = "{kind}"`' in reference
        keys = scenario.HOP_KINDS[kind].keys()
        missing = [k for k in keys if f"`{k}" not in reference and f"[[path.{k}]]" not in reference]
        assert missing == [], kind


# -- the three defects, on both paths ------------------------------------------------------------

P2P = REPO / "python" / "tcplab" / "data" / "p2p-bulk.toml"


def _p2p(flow: dict[str, Any] | None = None, cross: list[Any] | None = None) -> dict[str, Any]:
    data = scenario.read_scenario(P2P)[0]
    data["flows"][0].update(flow or {})
    if cross is not None:
        data["cross"] = cross
    return data


def _both(data: dict[str, Any], message: str) -> None:
    """Python's own checks and the full path (with the core) refuse ``data`` with
    ``message``."""
    with pytest.raises(ScenarioError) as own:
        _parse_scenario(data, "bad.toml", with_core=False)
    assert str(own.value) == message
    with pytest.raises(ScenarioError) as full:
        parse_scenario(data, "bad.toml")
    assert full.value.located() == f"bad.toml: {message}"


def _core_refuses(data: dict[str, Any], change: Any, message: str, tmp_path: Path) -> None:
    """The core refuses a configuration Python's checks never saw (``change`` applied to the
    normalized configuration of valid ``data``): a ScenarioError naming the file and the TOML
    field, from ``tcplab.run`` as from :func:`scenario.core_check`."""
    sc = parse_scenario(data, "bad.toml")
    config = sc.to_config()
    change(config)
    with pytest.raises(ScenarioError) as err:
        scenario.core_check(sc.data, config)
    assert str(err.value) == message
    with pytest.raises(ScenarioError) as err:
        tcplab.run(sc._replace(config=config), out=tmp_path / "out")
    assert err.value.located() == f"bad.toml: {message}"


def test_eifel_without_timestamps_is_a_scenario_error(tmp_path: Path) -> None:
    message = 'flows[0].spurious_detection: "eifel" needs timestamps = true'
    _both(_p2p({"spurious_detection": "eifel", "timestamps": False}), message)

    def eifel(config: dict[str, Any]) -> None:
        config["flows"][0]["tcp"].update(spurious_detection="eifel", timestamps=False)

    _core_refuses(_p2p(), eifel, message, tmp_path)
    dsack = 'flows[0].spurious_detection: "dsack" needs sack = true and dsack = true'
    _both(_p2p({"spurious_detection": "dsack", "dsack": False}), dsack)


def test_eifel_error_from_a_file_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "eifel.toml"
    text = P2P.read_text(encoding="utf-8")
    path.write_text(
        text.replace("[[flows]]", '[[flows]]\nspurious_detection = "eifel"\ntimestamps = false'),
        encoding="utf-8",
    )
    with pytest.raises(ScenarioError) as err:
        load_scenario(path)
    assert err.value.located() == (
        f'{path}: flows[0].spurious_detection: "eifel" needs timestamps = true'
    )


def test_an_rlc_hop_name_is_unique_on_both_paths(tmp_path: Path) -> None:
    data = _p2p()
    data["path"] = [{"name": "air", **data["path"][0]}, {"kind": "rlc", "name": "air"}]
    data["path"][1]["preset"] = "strong"
    _both(data, 'path[1].name: duplicate link name "air" (also used by path[0])')
    data["path"][1]["name"] = "radio"

    def same(config: dict[str, Any]) -> None:
        config["hops"][1]["name"] = "air"

    _core_refuses(
        data, same, 'path[1].name: duplicate link name "air" (also used by path[0])', tmp_path
    )


def test_two_pings_or_a_ping_and_a_cbr_cannot_share_a_name(tmp_path: Path) -> None:
    ping = {"kind": "ping", "name": "probe", "interval": "100ms"}
    cbr = {"name": "probe", "rate": "1Mbps"}
    _both(_p2p(cross=[ping, dict(ping)]), 'cross[1].name: duplicate cross-traffic name "probe"')
    _both(_p2p(cross=[ping, cbr]), 'cross[0].name: duplicate cross-traffic name "probe"')

    def same(config: dict[str, Any]) -> None:
        config["pings"][1]["name"] = "probe"

    other = {**ping, "name": "other"}
    _core_refuses(
        _p2p(cross=[{**cbr, "name": "rate"}, ping, other]),
        same,
        'cross[2].name: duplicate cross-traffic name "probe"',
        tmp_path,
    )

    def ping_as_cbr(config: dict[str, Any]) -> None:
        config["pings"][0]["name"] = "rate"

    _core_refuses(
        _p2p(cross=[{**cbr, "name": "rate"}, ping]),
        ping_as_cbr,
        'cross[1].name: duplicate cross-traffic name "rate"',
        tmp_path,
    )
