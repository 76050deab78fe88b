"""Python's scenario checks and the core's validator (``validate.rs``, the authority) agree.

A property test over generated scenarios: a valid base scenario (links, a PEP, an RLC bearer,
two flows, UDP and ping cross traffic) changed by one to three *knobs*. Each knob sets one
TOML key (what a user writes) and the matching field of the normalized configuration (what the
core reads), to a valid or a near-valid value: unknown names, out-of-range numbers, rule
combinations (Eifel without timestamps, RACK without SACK, HyStart on a delay-based control),
duplicate names, unknown keys, wrong types, unknown hop kinds. Then:

* Python's own verdict on the TOML (``with_core=False``) and the core's verdict on the
  configuration are the same: whatever one accepts the other accepts, and the reverse;
* with one knob, a rejection has the same message on both sides (the core's field mapped to
  the TOML entry as ``tcplab`` shows it) — except for unknown keys, wrong types and unknown
  kinds, which only the TOML reader can name (the core's JSON reader says ``config: ...``);
* where both accept, the configuration Python built is the one the knobs described.

``EXAMPLES`` scenarios run in CI (about 10 s on an idle machine).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tcplab.errors import ScenarioError
from tcplab.scenario import registry
from tcplab.scenario.parse import _parse_scenario, core_error

core = pytest.importorskip("tcplab._core")

EXAMPLES = 2000

BASE: dict[str, Any] = {
    "name": "parity",
    "duration": "10s",
    "path": [
        {"name": "l0", "rate": "10Mbps", "delay": "10ms"},
        {"kind": "pep", "name": "pep"},
        {"kind": "rlc", "name": "air", "preset": "strong"},
        {"name": "l1", "rate": "10Mbps", "delay": "10ms"},
    ],
    "flows": [{"name": "a"}, {"name": "b", "cc": "cubic"}],
    "cross": [
        {"name": "c0", "rate": "1Mbps"},
        {"kind": "ping", "name": "p0"},
        {"kind": "ping", "name": "p1"},
    ],
}


MS = 1_000_000
U32 = 2**32 - 1


def _aqm_full(kind: str, **over: Any) -> dict[str, Any]:
    """The core's ``AqmConfig`` of ``kind`` with Linux's defaults (docs/aqm.md), ``over`` set."""
    codel = {"target_ns": 5 * MS, "interval_ns": 100 * MS, "ce_threshold_ns": None}
    full: dict[str, dict[str, Any]] = {
        "droptail": {},
        "codel": {**codel, "ecn": False},
        "fq_codel": {
            **codel,
            "ecn": True,
            "flows": 1024,
            "quantum": 1514,
            "drop_batch": 64,
            "memory_limit": 32 << 20,
        },
        "pie": {
            "target_ns": 15 * MS,
            "tupdate_ns": 15 * MS,
            "alpha": 2,
            "beta": 20,
            "ecn": False,
            "bytemode": False,
            "dq_rate_estimator": False,
        },
        "red": {
            "min_bytes": None,
            "max_bytes": None,
            "probability": 0.02,
            "avpkt": 1000,
            "burst": None,
            "ecn": False,
            "harddrop": False,
        },
        "dualpi2": {
            "target_ns": 15 * MS,
            "tupdate_ns": 16 * MS,
            "alpha": 0.16,
            "beta": 3.2,
            "step_threshold_ns": MS,
            "step_threshold_packets": None,
            "min_qlen_step": 0,
            "coupling": 2,
            "c_protection": 10,
            "drop_overload": True,
            "drop_early": False,
        },
    }
    return {"kind": kind, **full[kind], **over}


#: (TOML value, the core's configuration) of the ``aqm`` knob: valid and near-valid values.
AQM_CASES: list[tuple[Any, Any]] = [
    (kind, _aqm_full(kind)) for kind in ("droptail", "codel", "fq_codel", "pie", "red", "dualpi2")
] + [
    ({"kind": "codel", "target": "0s"}, _aqm_full("codel", target_ns=0)),
    ({"kind": "codel", "interval": "101s"}, _aqm_full("codel", interval_ns=101_000 * MS)),
    ({"kind": "codel", "ce_threshold": "1ms"}, _aqm_full("codel", ce_threshold_ns=MS)),
    ({"kind": "fq_codel", "ce_threshold": "0s"}, _aqm_full("fq_codel", ce_threshold_ns=0)),
    ({"kind": "fq_codel", "flows": 0}, _aqm_full("fq_codel", flows=0)),
    ({"kind": "fq_codel", "flows": 65537}, _aqm_full("fq_codel", flows=65537)),
    ({"kind": "fq_codel", "quantum": 255}, _aqm_full("fq_codel", quantum=255)),
    ({"kind": "fq_codel", "drop_batch": 0}, _aqm_full("fq_codel", drop_batch=0)),
    ({"kind": "fq_codel", "ecn": False}, _aqm_full("fq_codel", ecn=False)),
    ({"kind": "pie", "alpha": 33}, _aqm_full("pie", alpha=33)),
    ({"kind": "pie", "beta": 32, "ecn": True}, _aqm_full("pie", beta=32, ecn=True)),
    ({"kind": "pie", "tupdate": "0s"}, _aqm_full("pie", tupdate_ns=0)),
    ({"kind": "red", "probability": 0}, _aqm_full("red", probability=0.0)),
    ({"kind": "red", "probability": 0.1}, _aqm_full("red", probability=0.1)),
    (
        {"kind": "red", "min": 30000, "max": 20000},
        _aqm_full("red", min_bytes=30000, max_bytes=20000),
    ),
    ({"kind": "red", "max": "200KB"}, _aqm_full("red", max_bytes=200_000)),
    ({"kind": "red", "min": 5000, "burst": 1}, _aqm_full("red", min_bytes=5000, burst=1)),
    ({"kind": "red", "avpkt": 0}, _aqm_full("red", avpkt=0)),
    ({"kind": "dualpi2", "target": "0s"}, _aqm_full("dualpi2", target_ns=0)),
    ({"kind": "dualpi2", "tupdate": "999ns"}, _aqm_full("dualpi2", tupdate_ns=999)),
    ({"kind": "dualpi2", "step_threshold": "0s"}, _aqm_full("dualpi2", step_threshold_ns=0)),
    ({"kind": "dualpi2", "step_threshold": 2}, _aqm_full("dualpi2", step_threshold_packets=2)),
    ({"kind": "dualpi2", "step_threshold": 0}, _aqm_full("dualpi2", step_threshold_packets=0)),
    ({"kind": "dualpi2", "min_qlen_step": 2}, _aqm_full("dualpi2", min_qlen_step=2)),
    ({"kind": "dualpi2", "min_qlen_step": U32}, _aqm_full("dualpi2", min_qlen_step=U32)),
    ({"kind": "dualpi2", "alpha": 1 / 512}, _aqm_full("dualpi2", alpha=1 / 512)),
    ({"kind": "dualpi2", "beta": 0.001}, _aqm_full("dualpi2", beta=0.001)),
    ({"kind": "dualpi2", "coupling": 256}, _aqm_full("dualpi2", coupling=256)),
    ({"kind": "dualpi2", "c_protection": 100}, _aqm_full("dualpi2", c_protection=100)),
    ({"kind": "dualpi2", "c_protection": 101}, _aqm_full("dualpi2", c_protection=101)),
    ("bfifo", {"kind": "bfifo"}),
]


class Knob(NamedTuple):
    """One key: ``toml(data, value)`` sets it in the TOML table, ``core(config, value)`` in the
    normalized configuration; ``shape``: a value only the TOML reader names (unknown key, wrong
    type, unknown kind), compared by verdict only."""

    name: str
    values: st.SearchStrategy[Any]
    toml: Callable[[dict[str, Any], Any], None]
    core: Callable[[dict[str, Any], Any], None]
    shape: Callable[[Any], bool] = lambda _v: False


def _flow_key(key: str, core_key: str | None = None) -> Callable[[int], tuple[Any, Any]]:
    def make(i: int) -> tuple[Any, Any]:
        def toml(d: dict[str, Any], v: Any) -> None:
            d["flows"][i][key] = v

        def core(c: dict[str, Any], v: Any) -> None:
            c["flows"][i]["tcp"][core_key or key] = v

        return toml, core

    return make


def _wrong_type(v: Any) -> bool:
    return isinstance(v, Wrong)


class Wrong(NamedTuple):
    """A value of the wrong type for its key (a string for a bool, a list for a number)."""

    value: Any


def _choice(names: tuple[str, ...]) -> st.SearchStrategy[Any]:
    bad = st.sampled_from(["bogus", "", "Eifel", "frto ", "reno2"])
    return st.one_of(st.sampled_from(names), bad, st.just(Wrong(1)))


def _unwrap(v: Any) -> Any:
    return v.value if isinstance(v, Wrong) else v


def _knobs() -> list[Knob]:
    knobs: list[Knob] = []
    names = registry.names
    cc_names = registry.cc_names()
    params = sorted(
        {p["key"] for e in registry.registry()["congestion_controls"] for p in e["params"]}
    )
    numbers = st.sampled_from(
        [-1.0, 0.0, 0.25, 0.5, 1.0, 1.5, 2.0, 2.5, 4.0, 10.0, 64.0, 65.0, 1e300]
    )

    for i in (0, 1):

        def flow(
            key: str, values: st.SearchStrategy[Any], core_key: str | None = None, i: int = i
        ) -> None:
            toml, core = _flow_key(key, core_key)(i)
            knobs.append(
                Knob(
                    f"flows[{i}].{key}",
                    values,
                    lambda d, v, t=toml: t(d, _unwrap(v)),
                    lambda c, v, k=core: k(c, _unwrap(v)),
                    _wrong_type,
                )
            )

        flow("cc", _choice(cc_names))
        flow("spurious_detection", _choice(names("spurious_detectors")))
        flow("spurious_response", _choice(names("spurious_responses")))
        flow("spurious_fr", _choice(names("spurious_fr_detectors")))
        flow("spurious_fr_response", _choice(names("spurious_fr_responses")))
        flow("recovery_cwnd", _choice(names("recovery_cwnds")))
        flow("loss_detection", _choice(names("loss_detections")))
        flow("ssthresh_from", _choice(names("ssthresh_from")))
        flow("tso_model", _choice(names("tso_models")))
        for key in ("sack", "dsack", "timestamps", "tlp"):
            flow(key, st.one_of(st.booleans(), st.just(Wrong("yes"))))
        for key in ("abc_l", "dupthresh"):
            flow(key, st.one_of(st.integers(0, 3), st.just(Wrong([1]))))

        def ack_every(d: dict[str, Any], v: Any, i: int = i) -> None:
            d["flows"][i]["ack"] = {"every": _unwrap(v)}

        def ack_every_core(c: dict[str, Any], v: Any, i: int = i) -> None:
            c["flows"][i]["tcp"]["ack"]["every_n"] = _unwrap(v)

        knobs.append(Knob(f"flows[{i}].ack.every", st.integers(0, 3), ack_every, ack_every_core))

        for key in ("syn_retries", "synack_retries", "retries2"):

            def retries(d: dict[str, Any], v: Any, i: int = i, key: str = key) -> None:
                d["flows"][i].setdefault("rto", {})[key] = v

            def retries_core(c: dict[str, Any], v: Any, i: int = i, key: str = key) -> None:
                c["flows"][i]["tcp"]["rto"][key] = v

            knobs.append(
                Knob(
                    f"flows[{i}].rto.{key}",
                    st.sampled_from([0, 1, 6, 127, 128]),
                    retries,
                    retries_core,
                )
            )

        def hystart(d: dict[str, Any], v: Any, i: int = i) -> None:
            d["flows"][i]["hystart"] = v

        def hystart_core(c: dict[str, Any], v: Any, i: int = i) -> None:
            c["flows"][i]["tcp"].update(hystart=v is True, hystart_linux=v == "linux")

        knobs.append(
            Knob(
                f"flows[{i}].hystart",
                st.sampled_from([False, True, "linux"]),
                hystart,
                hystart_core,
            )
        )

        def qos(d: dict[str, Any], v: Any, i: int = i) -> None:
            d["flows"][i]["qos_target"] = "4Mbps"

        def qos_core(c: dict[str, Any], v: Any, i: int = i) -> None:
            c["flows"][i]["tcp"]["qos_target_bps"] = 4_000_000

        knobs.append(Knob(f"flows[{i}].qos_target", st.just(True), qos, qos_core))

        def cc_params(d: dict[str, Any], v: Any, i: int = i) -> None:
            d["flows"][i]["cc_params"] = {k: _unwrap(x) for k, x in v.items()}

        def cc_params_core(c: dict[str, Any], v: Any, i: int = i) -> None:
            c["flows"][i]["tcp"]["cc_params"] = {k: _unwrap(x) for k, x in v.items()}

        knobs.append(
            Knob(
                f"flows[{i}].cc_params",
                st.dictionaries(
                    st.sampled_from([*params, "delta"]),
                    st.one_of(numbers, st.just(Wrong("2"))),
                    min_size=1,
                    max_size=3,
                ),
                cc_params,
                cc_params_core,
                lambda v: any(isinstance(x, Wrong) for x in v.values()),
            )
        )

        def unknown(d: dict[str, Any], v: Any, i: int = i) -> None:
            d["flows"][i]["sack_ok"] = v

        def unknown_core(c: dict[str, Any], v: Any, i: int = i) -> None:
            c["flows"][i]["tcp"]["sack_ok"] = v

        knobs.append(
            Knob(f"flows[{i}].sack_ok", st.just(True), unknown, unknown_core, lambda _v: True)
        )

        def flow_name(d: dict[str, Any], v: Any, i: int = i) -> None:
            d["flows"][i]["name"] = v

        def flow_name_core(c: dict[str, Any], v: Any, i: int = i) -> None:
            c["flows"][i]["name"] = v

        knobs.append(
            Knob(f"flows[{i}].name", st.sampled_from(["a", "b", "x"]), flow_name, flow_name_core)
        )

    for k in range(len(BASE["path"])):

        def hop_name(d: dict[str, Any], v: Any, k: int = k) -> None:
            d["path"][k]["name"] = v

        def hop_name_core(c: dict[str, Any], v: Any, k: int = k) -> None:
            c["hops"][k]["name"] = v

        knobs.append(
            Knob(
                f"path[{k}].name",
                # names that would put a capture file outside the output directory or hide it
                st.sampled_from(["l0", "pep", "air", "l1", "x", "../../x", ".x", "a/b", "a b"]),
                hop_name,
                hop_name_core,
            )
        )

    def sample_interval(d: dict[str, Any], v: Any) -> None:
        d["sample_interval"] = f"{v}ns"

    def sample_interval_core(c: dict[str, Any], v: Any) -> None:
        c["sample_interval_ns"] = v

    knobs.append(
        Knob(
            "sample_interval",
            st.sampled_from([0, 1, 999_999, 1_000_000, 250_000_000]),
            sample_interval,
            sample_interval_core,
        )
    )

    def hop_kind(d: dict[str, Any], v: Any) -> None:
        d["path"][0]["kind"] = v

    def hop_kind_core(c: dict[str, Any], v: Any) -> None:
        c["hops"][0]["kind"] = v

    knobs.append(
        Knob(
            "path[0].kind",
            st.sampled_from(["router", "bridge"]),
            hop_kind,
            hop_kind_core,
            lambda _v: True,
        )
    )

    for key, values in (
        ("cc", _choice(cc_names)),
        ("spurious_detection", _choice(names("spurious_detectors"))),
    ):

        def pep(d: dict[str, Any], v: Any, key: str = key) -> None:
            d["path"][1][key] = _unwrap(v)

        def pep_core(c: dict[str, Any], v: Any, key: str = key) -> None:
            c["hops"][1][key] = _unwrap(v)

        knobs.append(Knob(f"path[1].{key}", values, pep, pep_core, _wrong_type))

    for key in ("syn_retries", "synack_retries", "retries2"):

        def pep_retries(d: dict[str, Any], v: Any, key: str = key) -> None:
            d["path"][1][key] = v

        def pep_retries_core(c: dict[str, Any], v: Any, key: str = key) -> None:
            c["hops"][1][key] = v

        knobs.append(
            Knob(
                f"path[1].{key}",
                st.sampled_from([0, 1, 6, 127, 128]),
                pep_retries,
                pep_retries_core,
            )
        )

    def aqm(d: dict[str, Any], v: Any) -> None:
        d["path"][0]["aqm"] = v[0]

    def aqm_core(c: dict[str, Any], v: Any) -> None:
        for direction in ("fwd", "rev"):
            c["hops"][0][direction]["aqm"] = copy.deepcopy(v[1])

    # Compared by verdict and configuration: the core names the direction (`hops[0].fwd.aqm`),
    # the TOML key sits on the link (`path[0].aqm`); tests/test_aqm.py checks the messages.
    knobs.append(Knob("path[0].aqm", st.sampled_from(AQM_CASES), aqm, aqm_core, lambda _v: True))

    def ecn(d: dict[str, Any], v: Any) -> None:
        d["flows"][0]["ecn"] = v[0]

    def ecn_core(c: dict[str, Any], v: Any) -> None:
        c["flows"][0]["tcp"]["ecn"] = v[1]

    knobs.append(
        Knob(
            "flows[0].ecn",
            st.sampled_from([(True, "on"), (False, "off"), ("passive", "passive"), ("on", "on!")]),
            ecn,
            ecn_core,
            # "on" is not a TOML value (true is); the core names its own modes
            lambda v: v[0] == "on",
        )
    )

    # [[cross]] 0 is the UDP source (config cross[0]), 1 and 2 the pings (config pings[0, 1])
    where = [("cross", 0), ("pings", 0), ("pings", 1)]
    for j, (array, index) in enumerate(where):

        def cross_name(d: dict[str, Any], v: Any, j: int = j) -> None:
            d["cross"][j]["name"] = v

        def cross_name_core(c: dict[str, Any], v: Any, a: str = array, n: int = index) -> None:
            c[a][n]["name"] = v

        knobs.append(
            Knob(
                f"cross[{j}].name",
                st.sampled_from(["c0", "p0", "p1", "x"]),
                cross_name,
                cross_name_core,
            )
        )
    return knobs


KNOBS = _knobs()


class Verdict(NamedTuple):
    accepted: bool
    message: str
    config: dict[str, Any] | None


def _python(data: dict[str, Any]) -> Verdict:
    try:
        sc = _parse_scenario(data, "parity.toml", with_core=False)
    except ScenarioError as err:
        return Verdict(False, str(err), None)
    return Verdict(True, "", sc.config)


def _core_verdict(data: dict[str, Any], config: dict[str, Any]) -> Verdict:
    try:
        core.validate(json.dumps(config))
    except ValueError as err:
        return Verdict(False, str(core_error(str(err), data, config)), None)
    return Verdict(True, "", config)


_BASE_CONFIG = _python(BASE).config


_BASE_JSON = json.dumps(BASE)
_BASE_CONFIG_JSON = json.dumps(_BASE_CONFIG)


def test_the_base_scenario_is_valid_on_both_sides() -> None:
    assert _BASE_CONFIG is not None
    assert _core_verdict(BASE, copy.deepcopy(_BASE_CONFIG)).accepted


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)
@given(st.data())
def test_python_and_the_core_agree(data: st.DataObject) -> None:
    chosen = data.draw(
        st.lists(st.sampled_from(range(len(KNOBS))), min_size=1, max_size=3, unique=True),
        label="knobs",
    )
    # copies by JSON: several times faster than copy.deepcopy
    toml = json.loads(_BASE_JSON)
    config = json.loads(_BASE_CONFIG_JSON)
    shape = False
    for k in chosen:
        knob = KNOBS[k]
        value = data.draw(knob.values, label=knob.name)
        knob.toml(toml, value)
        knob.core(config, value)
        shape = shape or knob.shape(value)
    py = _python(toml)
    rust = _core_verdict(toml, config)
    assert py.accepted == rust.accepted, (py.message, rust.message)
    if py.accepted:
        assert py.config == config
    elif len(chosen) == 1 and not shape:
        assert py.message == rust.message


def _trace_hop(down: str, aqm: Any = None) -> dict[str, Any]:
    hop: dict[str, Any] = {"kind": "trace", "name": "cell", "down": down, "up_rate": "1Mbps"}
    if aqm is not None:
        hop["aqm"] = aqm
    return {"name": "parity", "duration": "10s", "path": [hop], "flows": [{"name": "a"}]}


@pytest.mark.parametrize("case", AQM_CASES, ids=lambda c: json.dumps(c[0]))
def test_a_trace_hops_aqm_has_the_same_verdict_on_both_sides(
    case: tuple[Any, Any], tmp_path: Path
) -> None:
    """``aqm`` on a ``kind = "trace"`` hop: the directions served by a trace file take it. The
    core names the direction (``path[0].down.aqm.target``), the TOML key sits on the hop
    (``path[0].aqm.target``); otherwise the messages are the same."""
    trace = tmp_path / "cell.down"
    trace.write_text("1\n", encoding="utf-8")
    toml_value, core_value = case
    data = _trace_hop(str(trace), toml_value)
    config = _python(_trace_hop(str(trace))).config
    assert config is not None
    config["hops"][0]["fwd"]["aqm"] = copy.deepcopy(core_value)
    py = _python(data)
    rust = _core_verdict(data, config)
    assert py.accepted == rust.accepted, (py.message, rust.message)
    if py.accepted:
        assert py.config == config
    elif toml_value != "bfifo":  # an unknown kind: only the TOML reader names it
        assert py.message == rust.message.replace(".down.aqm", ".aqm", 1)
