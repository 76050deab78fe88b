from __future__ import annotations

import re
import tomllib
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from support import REPO, SCENARIOS
from tcplab.errors import ScenarioError
from tcplab.scenario.parse import (
    RTO_PROFILES,
    apply_overrides,
    builtin_scenarios,
    load_scenario,
    parse_scenario,
)

P2P_BULK = """\
name = "p2p-bulk"
duration = "600s"
seed = 1
[[path]]
kind = "link"
rate = "10Mbps"
delay = "50ms"        # one way
queue = 100           # packets, DropTail, each direction
[[flows]]
cc = "newreno"
sack = true
mss = 1448
bytes = "unlimited"
"""

BASE = """\
name = "t"
duration = "10s"
[[path]]
rate = "10Mbps"
delay = "10ms"
[[flows]]
cc = "newreno"
"""

DUMBBELL = """\
duration = "10s"
[[path]]
kind = "dumbbell"
pairs = 2
bottleneck = { rate = "10Mbps", delay = "10ms" }
[[flows]]
"""

DOWNLOADS = ["flows[0].app=downloads", "flows[0].sizes=10KB"]


def config_of(text: str, overrides: list[str] | None = None) -> dict[str, Any]:
    data = apply_overrides(tomllib.loads(text), overrides or [])
    return parse_scenario(data).to_config()


def error_of(text: str, overrides: list[str] | None = None) -> str:
    with pytest.raises(ScenarioError) as err:
        config_of(text, overrides)
    message = str(err.value)
    assert "\n" not in message
    return message


# -- the canonical scenario --------------------------------------------------------------------

P2P_DIR = {
    "rate_bps": 10_000_000,
    "delay_ns": 50_000_000,
    "queue": {"kind": "packets", "limit": 100},
    "loss": {"kind": "none"},
    "overhead_bytes": 0,
    "bits_per_byte": 8,
    "reorder": None,
    "outages_ns": [],
}
P2P_CONFIG = {
    "name": "p2p-bulk",
    "duration_ns": 600_000_000_000,
    "seed": 1,
    "sample_interval_ns": 100_000_000,
    "trace": False,
    "hops": [{"kind": "link", "name": "link0", "fwd": P2P_DIR, "rev": P2P_DIR}],
    "flows": [
        {
            "name": "flow0",
            "path": [0],
            "start_ns": 0,
            "tcp": {
                "cc": "newreno",
                "cc_params": {},
                "sack": True,
                "dsack": True,
                "timestamps": True,
                "window_scaling": True,
                "mss": 1448,
                "rcv_buf": 4_194_304,
                "snd_buf": 4_194_304,
                "initial_window_bytes": 14_480,
                "initial_ssthresh": None,
                "max_cwnd": None,
                "limited_transmit": True,
                "limited_transmit_sack": False,
                "dupthresh": 3,
                "ca_at_ssthresh": False,
                "qos_target_bps": None,
                "rto": {
                    "initial_ns": 1_000_000_000,
                    "min_ns": 1_000_000_000,
                    "max_ns": 60_000_000_000,
                    "granularity_ns": 1_000_000,
                    "max_backoff": 16,
                    "restart_on_rtx": False,
                    "estimator": "rfc6298",
                    "syn_retries": 7,
                    "synack_retries": 7,
                    "retries2": 15,
                },
                "ack": {
                    "every_n": 2,
                    "max_delay_ns": 200_000_000,
                    "immediate_on_ooo": True,
                    "quickack": 0,
                    "periodic": False,
                },
                "abc_l": 1,
                "hystart": False,
                "ack_cc": None,
                "spurious_detection": "none",
                "spurious_response": "eifel",
                "spurious_fr": "none",
                "spurious_fr_response": "eifel",
                "read_rate_bps": None,
                "recovery_cwnd": "immediate",
                "loss_detection": "dupthresh",
                "tlp": False,
                "ssthresh_from": "flight",
                "rcv_window": "fixed",
                "rcv_scaling_ratio": 158,
                "hystart_linux": False,
                "cubic_linux": False,
                "reno_linux": False,
            },
            "app": {"kind": "bulk", "bytes": None},
        }
    ],
    "cross": [],
    "pcap": [],
    "pings": [],
}


def test_p2p_bulk_files_are_verbatim() -> None:
    builtin = (resources.files("tcplab") / "data" / "p2p-bulk.toml").read_text(encoding="utf-8")
    assert builtin == P2P_BULK
    assert (SCENARIOS / "p2p-bulk.toml").read_text(encoding="utf-8") == P2P_BULK


def test_p2p_bulk_config() -> None:
    assert load_scenario(SCENARIOS / "p2p-bulk.toml").to_config() == P2P_CONFIG


def test_builtin_default_is_p2p_bulk() -> None:
    assert builtin_scenarios() == ["p2p-bulk"]
    default = load_scenario()
    assert default.source == "<built-in p2p-bulk>"
    assert default.to_config() == P2P_CONFIG
    assert load_scenario("p2p-bulk").to_config() == P2P_CONFIG


@pytest.mark.parametrize("path", sorted(SCENARIOS.glob("*.toml")), ids=lambda p: p.name)
def test_example_scenarios_are_valid(path: Path) -> None:
    scenario = load_scenario(path)
    assert scenario.name == path.stem
    assert scenario.flow_names
    assert scenario.hop_names


def test_seed_override_and_pcap_paths(tmp_path: Path) -> None:
    scenario = load_scenario(
        SCENARIOS / "p2p-bulk.toml",
        ["pcap[0].hop=0", "pcap[1].hop=link0", "pcap[1].dir=rev", "pcap[1].file=/abs/x.pcap"],
    )
    assert scenario.seed == 1
    config = scenario.to_config(seed=7, out_dir=tmp_path)
    assert config["seed"] == 7
    assert config["pcap"] == [
        {"hop": 0, "dir": "both", "path": str(tmp_path / "link0-both.pcap"), "payload_snaplen": 0},
        {"hop": 0, "dir": "rev", "path": "/abs/x.pcap", "payload_snaplen": 0},
    ]
    assert scenario.config["seed"] == 1  # to_config does not change the scenario
    cwd_config = scenario.to_config()
    assert cwd_config["pcap"][0]["path"] == str(Path.cwd() / "link0-both.pcap")
    with pytest.raises(ScenarioError, match=r"^seed: must be between 0 and \d+ \(got -1\)$"):
        scenario.to_config(seed=-1)


# -- links, directions, loss -------------------------------------------------------------------


def test_asymmetric_link_overrides() -> None:
    link = load_scenario(SCENARIOS / "asym-link.toml").config["hops"][0]
    assert link["name"] == "access"
    assert link["fwd"]["rate_bps"] == 10_000_000
    assert link["rev"]["rate_bps"] == 32_000
    assert link["fwd"]["overhead_bytes"] == 26
    assert link["rev"]["overhead_bytes"] == 8
    for direction in ("fwd", "rev"):
        assert link[direction]["delay_ns"] == 1_000_000
        assert link[direction]["queue"] == {"kind": "packets", "limit": 50}


def test_loss_settings_per_direction() -> None:
    ge = '{kind = "gilbert_elliott", p_gb = 0.01, p_bg = 0.5}'
    link = config_of(BASE, ["path[0].loss=0.01", f"path[0].up.loss_model={ge}"])["hops"][0]
    assert link["fwd"]["loss"] == {"kind": "bernoulli", "p": 0.01}
    assert link["rev"]["loss"] == {
        "kind": "gilbert_elliott",
        "p_gb": 0.01,
        "p_bg": 0.5,
        "loss_good": 0.0,
        "loss_bad": 1.0,
    }
    link = config_of(BASE, [f"path[0].loss_model={ge}", "path[0].up.loss=0"])["hops"][0]
    assert link["fwd"]["loss"]["kind"] == "gilbert_elliott"
    assert link["rev"]["loss"] == {"kind": "none"}
    link = config_of(BASE, ['path[0].down.loss_model={kind = "bernoulli", p = 1}'])["hops"][0]
    assert link["fwd"]["loss"] == {"kind": "bernoulli", "p": 1.0}


def test_queue_in_bytes_and_multi_hop() -> None:
    config = load_scenario(SCENARIOS / "cross-traffic.toml").config
    assert [link["name"] for link in config["hops"]] == ["access", "bottleneck"]
    assert config["hops"][1]["fwd"]["queue"] == {"kind": "bytes", "limit": 150_000}
    assert config["flows"][0]["path"] == [0, 1]
    assert config["cross"] == [
        {
            "name": "cross0",
            "path": [1],
            "rate_bps": 4_000_000,
            "packet_bytes": 1200,
            "start_ns": 30_000_000_000,
            "stop_ns": 90_000_000_000,
        }
    ]


def test_cross_defaults() -> None:
    two_hops = BASE + '[[path]]\nrate = "1Mbps"\ndelay = "1ms"\n'
    cross = config_of(two_hops, ["cross[0].rate=1Mbps"])["cross"][0]
    assert cross["path"] == [0, 1]
    assert cross["packet_bytes"] == 1500
    assert (cross["start_ns"], cross["stop_ns"]) == (0, 10_000_000_000)
    assert config_of(DUMBBELL, ["cross[0].rate=1Mbps"])["cross"][0]["path"] == [2]


# -- dumbbell ----------------------------------------------------------------------------------


def test_dumbbell_expansion() -> None:
    config = load_scenario(SCENARIOS / "dumbbell-4.toml").config
    names = [link["name"] for link in config["hops"]]
    assert names == [f"access{k}" for k in range(4)] + ["bottleneck"] + [
        f"egress{k}" for k in range(4)
    ]
    bottleneck = config["hops"][4]
    assert bottleneck["fwd"]["rate_bps"] == 20_000_000
    assert bottleneck["fwd"]["delay_ns"] == 20_000_000
    assert bottleneck["rev"]["queue"] == {"kind": "packets", "limit": 100}
    access, egress = config["hops"][0], config["hops"][5]
    assert access["fwd"]["rate_bps"] == 1_000_000_000
    assert access["fwd"]["delay_ns"] == 1_000_000
    assert access["fwd"]["queue"] == {"kind": "packets", "limit": 1000}
    assert egress["fwd"]["rate_bps"] == 10_000_000_000  # defaults, not inherited from access
    assert egress["fwd"]["delay_ns"] == 0
    flows = [(f["name"], f["path"], f["tcp"]["cc"], f["start_ns"]) for f in config["flows"]]
    assert flows == [
        ("cubic.0", [0, 4, 5], "cubic", 0),
        ("cubic.1", [1, 4, 6], "cubic", 0),
        ("newreno.0", [2, 4, 7], "newreno", 1_000_000_000),
        ("newreno.1", [3, 4, 8], "newreno", 1_000_000_000),
    ]


def test_dumbbell_explicit_pair_and_count() -> None:
    config = config_of(
        DUMBBELL, ["path[0].pairs=4", "flows[0].pair=1", "flows[0].count=3", "flows[1].cc=cubic"]
    )
    assert [(f["name"], f["path"]) for f in config["flows"]] == [
        ("flow0", [1, 4, 6]),
        ("flow1", [1, 4, 6]),
        ("flow2", [1, 4, 6]),
        ("flow3", [3, 4, 8]),  # an entry without pair = k takes the pair of its flow index
    ]


def test_dumbbell_with_one_path_entry_and_one_flow() -> None:
    config = config_of(DUMBBELL)
    assert len(config["hops"]) == 5
    assert config["flows"][0]["path"] == [0, 2, 3]


# -- flows -------------------------------------------------------------------------------------


@pytest.mark.parametrize("profile", sorted(RTO_PROFILES))
def test_rto_profiles(profile: str) -> None:
    rto = config_of(BASE, [f"flows[0].rto={profile}"])["flows"][0]["tcp"]["rto"]
    expected = {
        "rfc6298": (1_000_000_000, 1_000_000_000, 60_000_000_000),
        "standard": (3_000_000_000, 500_000_000, 60_000_000_000),
        "tuned-3g": (4_000_000_000, 4_000_000_000, 60_000_000_000),
        "linux": (1_000_000_000, 200_000_000, 120_000_000_000),
    }[profile]
    assert (rto["initial_ns"], rto["min_ns"], rto["max_ns"]) == expected
    granularity = 200_000_000 if profile == "linux" else 1_000_000
    assert (rto["granularity_ns"], rto["max_backoff"]) == (granularity, 16)


def test_rto_table_with_profile_and_overrides() -> None:
    rto = config_of(BASE, ["flows[0].rto.profile=linux", "flows[0].rto.min=300ms"])["flows"][0]
    assert rto["tcp"]["rto"] == {
        "initial_ns": 1_000_000_000,
        "min_ns": 300_000_000,
        "max_ns": 120_000_000_000,
        "granularity_ns": 200_000_000,
        "max_backoff": 16,
        "restart_on_rtx": True,
        "estimator": "linux",
        # net.ipv4.tcp_syn_retries, tcp_synack_retries, tcp_retries2
        "syn_retries": 6,
        "synack_retries": 5,
        "retries2": 15,
    }
    off = config_of(BASE, ["flows[0].rto.profile=linux", "flows[0].rto.restart_on_rtx=false"])
    assert off["flows"][0]["tcp"]["rto"]["restart_on_rtx"] is False
    rfc = config_of(BASE, ["flows[0].rto.profile=linux", "flows[0].rto.estimator=rfc6298"])
    assert rfc["flows"][0]["tcp"]["rto"]["estimator"] == "rfc6298"
    msg = r"rto\.estimator: unknown RTT estimator \"bsd\" \(choose from rfc6298, linux\)"
    with pytest.raises(ScenarioError, match=msg):
        config_of(BASE, ["flows[0].rto.estimator=bsd"])


def test_windows_and_buffers() -> None:
    tcp = config_of(
        BASE,
        [
            "flows[0].mss=1000",
            "flows[0].initial_window=4",
            "flows[0].max_cwnd=64KiB",
            "flows[0].initial_ssthresh=32KB",
            "flows[0].rcv_buf=1MiB",
            "flows[0].snd_buf=2000",
            "flows[0].ack.every=1",
            "flows[0].ack.max_delay=0",
            "flows[0].ack.quickack=16",
        ],
    )["flows"][0]["tcp"]
    assert tcp["mss"] == 1000
    assert tcp["initial_window_bytes"] == 4000
    assert tcp["max_cwnd"] == 65_536
    assert tcp["initial_ssthresh"] == 32_000
    assert (tcp["rcv_buf"], tcp["snd_buf"]) == (1_048_576, 2000)
    assert tcp["ack"] == {
        "every_n": 1,
        "max_delay_ns": 0,
        "immediate_on_ooo": True,
        "quickack": 16,
        "periodic": False,
    }
    tcp = config_of(BASE, ["flows[0].initial_window=4KB", "flows[0].initial_ssthresh=inf"])
    assert tcp["flows"][0]["tcp"]["initial_window_bytes"] == 4000
    assert tcp["flows"][0]["tcp"]["initial_ssthresh"] is None


def test_bulk_bytes_and_start() -> None:
    flow = config_of(BASE, ["flows[0].bytes=1MB", "flows[0].start=1.5s"])["flows"][0]
    assert flow["app"] == {"kind": "bulk", "bytes": 1_000_000}
    assert flow["start_ns"] == 1_500_000_000


def test_downloads_app() -> None:
    app = load_scenario(SCENARIOS / "web-downloads.toml").config["flows"][0]["app"]
    assert app == {
        "kind": "downloads",
        "sizes": {
            "kind": "empirical",
            "bins": [
                [1.0, 50_000.0, 66.0],
                [50_000.0, 100_000.0, 22.0],
                [100_000.0, 150_000.0, 7.0],
                [150_000.0, 200_000.0, 2.0],
                [500_000.0, 1_000_000.0, 2.0],
            ],
        },
        "think_ns": {"kind": "exponential", "mean": 2e9},
        "count": None,
    }


@pytest.mark.parametrize(
    ("sizes", "dist"),
    [
        ("10KB", {"kind": "const", "value": 10_000.0}),
        ('{kind = "const", value = 1448}', {"kind": "const", "value": 1448.0}),
        ('{kind = "uniform", lo = "1KB", hi = "2KB"}', {"kind": "uniform", "lo": 1e3, "hi": 2e3}),
        ('{kind = "exponential", mean = "50KB"}', {"kind": "exponential", "mean": 5e4}),
        (
            '{kind = "lognormal", mu = 8.5, sigma = 1.2}',
            {"kind": "lognormal", "mu": 8.5, "sigma": 1.2},
        ),
        (
            '{kind = "pareto", scale = "1KB", shape = 1.5}',
            {"kind": "pareto", "scale": 1e3, "shape": 1.5},
        ),
    ],
)
def test_distributions(sizes: str, dist: dict[str, Any]) -> None:
    app = config_of(
        BASE, ["flows[0].app=downloads", f"flows[0].sizes={sizes}", "flows[0].downloads=5"]
    )
    assert app["flows"][0]["app"]["sizes"] == dist
    assert app["flows"][0]["app"]["think_ns"] == {"kind": "const", "value": 0.0}
    assert app["flows"][0]["app"]["count"] == 5


def test_lognormal_median() -> None:
    sizes = '{kind = "lognormal", median = "10KB", sigma = 1}'
    dist = config_of(BASE, ["flows[0].app=downloads", f"flows[0].sizes={sizes}"])["flows"][0]
    assert dist["app"]["sizes"]["mu"] == pytest.approx(9.210340371976184)  # ln(10000)


def test_pcap_payload_all() -> None:
    pcap = config_of(BASE, ["pcap[0].hop=0", "pcap[0].dir=fwd", "pcap[0].payload=all"])["pcap"]
    assert pcap[0]["payload_snaplen"] is None
    assert Path(pcap[0]["path"]).name == "link0-fwd.pcap"


# -- validation: each rule, with its exact message ---------------------------------------------

GE = 'path[0].loss_model={kind = "gilbert_elliott"'
BOTTLENECK = "path[0].bottleneck"

ERRORS: list[tuple[str, list[str], str]] = [
    # top level
    (BASE, ["durration=10s"], 'durration: unknown field (did you mean "duration"?)'),
    (BASE, ["duration=0s"], 'duration: must be > 0 (got "0s")'),
    (BASE, ["duration=10"], 'duration: must be a time like "50ms" (got 10)'),
    (BASE, ["seed=-1"], "seed: must be between 0 and 18446744073709551615 (got -1)"),
    (BASE, ["seed=x"], 'seed: must be an integer (got "x")'),
    (BASE, ['name=""'], 'name: must be a non-empty string (got "")'),
    (BASE, ["sample_interval=-1ms"], 'sample_interval: must be ≥ 0 (got "-1ms")'),
    (BASE, ["path=[]"], "path: must have at least one [[path]] table"),
    (BASE, ["flows=3"], "flows: must be an array of tables [[flows]]"),
    (BASE, ["path=[3]"], "path[0]: must be a table (got 3)"),
    ('duration = "1s"\n[[flows]]\n', [], "path: required field missing (add a [[path]] table)"),
    ('[[path]]\nrate = "1Mbps"\ndelay = 0\n[[flows]]\n', [], "duration: required field missing"),
    # links
    (BASE, ["path[0].rate=10ms"], 'path[0].rate: must be a rate like "10Mbps" (got "10ms")'),
    (BASE, ["path[0].rate=-10Mbps"], 'path[0].rate: must be > 0 (got "-10Mbps")'),
    (BASE, ["path[0].delay=-1ms"], 'path[0].delay: must be ≥ 0 (got "-1ms")'),
    (BASE, ["path[0].queue=0"], "path[0].queue: must be between 1 and 4294967295 (got 0)"),
    (BASE, ['path[0].queue="100"'], 'path[0].queue: must be a size like "64KB" (got "100")'),
    (
        BASE,
        ["path[0].queue=1.5"],
        'path[0].queue: must be a packet count like 100 or a size like "64KB" (got 1.5)',
    ),
    (BASE, ["path[0].loss=1.5"], "path[0].loss: must be a probability between 0 and 1 (got 1.5)"),
    (BASE, ["path[0].loss=1%"], 'path[0].loss: must be a probability between 0 and 1 (got "1%")'),
    (BASE, ["path[0].overhead=-1"], "path[0].overhead: must be between 0 and 65535 (got -1)"),
    (
        BASE,
        ["path[0].kind=wire"],
        'path[0].kind: unknown hop kind "wire" '
        "(choose from link, dumbbell, satellite, pep, dropper, rlc, wlan, host, trace, leo)",
    ),
    (BASE, ["path[0].ratee=1Mbps"], 'path[0].ratee: unknown field (did you mean "rate"?)'),
    (
        BASE,
        ["path[0].loss=0.1", 'path[0].loss_model={kind = "bernoulli", p = 0.1}'],
        "path[0].loss_model: cannot be combined with path[0].loss",
    ),
    (
        BASE,
        ["path[0].up.loss=0.1", 'path[0].up.loss_model={kind = "bernoulli", p = 0.1}'],
        "path[0].up.loss_model: cannot be combined with path[0].up.loss",
    ),
    (
        BASE,
        ["path[0].loss_model=3"],
        'path[0].loss_model: must be a table like {kind = "...", ...} (got 3)',
    ),
    (BASE, ["path[0].loss_model={p = 0.1}"], "path[0].loss_model.kind: required field missing"),
    (
        BASE,
        ['path[0].loss_model={kind = "markov"}'],
        'path[0].loss_model.kind: unknown loss model "markov" (choose from bernoulli, '
        "gilbert_elliott)",
    ),
    (BASE, [f"{GE}, p_bg = 0.1}}"], "path[0].loss_model.p_gb: required field missing"),
    (
        BASE,
        [f"{GE}, p_gb = 0.1, p_bg = 2}}"],
        "path[0].loss_model.p_bg: must be a probability between 0 and 1 (got 2)",
    ),
    (
        BASE,
        ['path[0].loss_model={kind = "bernoulli", p = 0.1, q = 1}'],
        "path[0].loss_model.q: unknown field (allowed: kind, p)",
    ),
    (
        BASE,
        ["path[0].up.foo=1"],
        "path[0].up.foo: unknown field "
        "(allowed: aqm, bits_per_byte, delay, delay_trace, loss, loss_model, outages, overhead, "
        "queue, rate, reorder, stalls)",
    ),
    (BASE, ["path[0].up.rate=0kbps"], 'path[0].up.rate: must be > 0 (got "0kbps")'),
    (BASE, ["path[0].up=1"], "path[0].up: must be a table (got 1)"),
    (
        BASE,
        ["path[1].rate=1Mbps", "path[1].delay=0", "path[1].name=link0"],
        'path[1].name: duplicate link name "link0" (also used by path[0])',
    ),
    (
        'duration = "1s"\n[[path]]\ndelay = 0\n[[flows]]\n',
        [],
        "path[0].rate: required field missing",
    ),
    (
        'duration = "1s"\n[[path]]\nrate = "1Mbps"\n[[flows]]\n',
        [],
        "path[0].delay: required field missing",
    ),
    (
        'duration = "1s"\n[[path]]\ndelay = 0\n[path.down]\nrate = "1Mbps"\n[[flows]]\n',
        [],
        "path[0].up.rate: required field missing (path[0].rate is not set for both directions)",
    ),
    # dumbbell
    (
        BASE,
        ["path[1].kind=dumbbell"],
        'path[1].kind: a "dumbbell" must be the only [[path]] entry',
    ),
    (
        'duration = "1s"\n[[path]]\nkind = "dumbbell"\npairs = 1\n[[flows]]\n',
        [],
        "path[0].bottleneck: required field missing",
    ),
    (DUMBBELL, ["path[0].pairs=0"], "path[0].pairs: must be between 1 and 100000 (got 0)"),
    (
        DUMBBELL,
        [f"{BOTTLENECK}.ratee=1Mbps"],
        'path[0].bottleneck.ratee: unknown field (did you mean "rate"?)',
    ),
    (
        DUMBBELL,
        ["path[0].access.rate=1ms"],
        'path[0].access.rate: must be a rate like "10Mbps" (got "1ms")',
    ),
    (
        DUMBBELL,
        ["flows[0].count=3"],
        "flows[0]: flow 2 has no dumbbell pair (path[0].pairs = 2): set pair = k or raise pairs",
    ),
    (DUMBBELL, ["flows[0].pair=5"], "flows[0].pair: must be between 0 and 1 (got 5)"),
    (BASE, ["flows[0].pair=0"], 'flows[0].pair: only valid when the path is a "dumbbell"'),
    # flows: TCP
    (BASE, ["flows[0].mss=10"], "flows[0].mss: must be between 64 and 65495 (got 10)"),
    (
        BASE,
        ["flows[0].mss=1448.5"],
        'flows[0].mss: must be a size like "64KB" or a whole number of bytes (got 1448.5)',
    ),
    (
        BASE,
        ["flows[0].cc=hybla"],
        'flows[0].cc: unknown congestion control "hybla" '
        "(choose from reno, newreno, cubic, vegas, fast, westwood, bdp-tracking, qos_tcp, bbr, "
        "dctcp)",
    ),
    (BASE, ["flows[0].sackk=true"], 'flows[0].sackk: unknown field (did you mean "sack"?)'),
    (BASE, ["flows[0].sack=yes"], 'flows[0].sack: must be true or false (got "yes")'),
    (BASE, ["flows[0].rcv_buf=1KB"], 'flows[0].rcv_buf: must be ≥ mss (1448 bytes) (got "1KB")'),
    (BASE, ["flows[0].snd_buf=0"], "flows[0].snd_buf: must be > 0 (got 0)"),
    (
        BASE,
        ["flows[0].initial_window=0"],
        "flows[0].initial_window: must be between 1 and 4294967295 (got 0)",
    ),
    (
        BASE,
        ["flows[0].initial_window=1KB"],
        'flows[0].initial_window: must be ≥ mss (1448 bytes) (got "1KB")',
    ),
    (
        BASE,
        ["flows[0].initial_window=true"],
        'flows[0].initial_window: must be a number of segments like 10 or a size like "4KB" '
        "(got true)",
    ),
    (
        BASE,
        ["flows[0].max_cwnd=1000"],
        'flows[0].max_cwnd: must be ≥ mss (1448 bytes) or "inf" (got 1000)',
    ),
    (
        BASE,
        ["flows[0].max_cwnd=8KB"],
        'flows[0].initial_window: must be ≤ max_cwnd ("8KB") (got 10)',
    ),
    (
        BASE,
        ["flows[0].initial_ssthresh=lots"],
        'flows[0].initial_ssthresh: must be a size like "64KB" or a whole number of bytes '
        '(got "lots")',
    ),
    (
        BASE,
        ["flows[0].rto=fast"],
        'flows[0].rto: unknown RTO profile "fast" (choose from rfc6298, standard, tuned-3g, linux)',
    ),
    (
        BASE,
        ["flows[0].rto.profile=fast"],
        'flows[0].rto.profile: unknown RTO profile "fast" (choose from rfc6298, standard, '
        "tuned-3g, linux)",
    ),
    (BASE, ["flows[0].rto.min=90s"], 'flows[0].rto.min: must be ≤ rto.max ("60s") (got "90s")'),
    (
        BASE,
        ["flows[0].rto.max=500ms"],
        'flows[0].rto.max: must be ≥ rto.min ("1s") (got "500ms")',
    ),
    (
        BASE,
        ["flows[0].rto.initial=90s"],
        'flows[0].rto.initial: must be ≤ rto.max ("60s") (got "90s")',
    ),
    (BASE, ["flows[0].rto.initial=0"], "flows[0].rto.initial: must be > 0 (got 0)"),
    (
        BASE,
        ["flows[0].rto.max_backoff=40"],
        "flows[0].rto.max_backoff: must be between 0 and 32 (got 40)",
    ),
    (BASE, ["flows[0].rto.mni=1s"], 'flows[0].rto.mni: unknown field (did you mean "min"?)'),
    (BASE, ["flows[0].rto=3"], "flows[0].rto: must be a table (got 3)"),
    (
        BASE,
        ["flows[0].ack.every=0"],
        "flows[0].ack.every: must be between 1 and 4294967295 (got 0)",
    ),
    (
        BASE,
        ["flows[0].ack.zzz=1"],
        "flows[0].ack.zzz: unknown field "
        "(allowed: every, immediate_on_ooo, max_delay, quickack, timer)",
    ),
    (BASE, ["flows[0].ack.max_delay=-1ms"], 'flows[0].ack.max_delay: must be ≥ 0 (got "-1ms")'),
    (
        BASE,
        ["flows[0].ack.quickack=-1"],
        "flows[0].ack.quickack: must be between 0 and 4294967295 (got -1)",
    ),
    # flows: placement and apps
    (BASE, ["flows[0].start=10s"], 'flows[0].start: must be < duration ("10s") (got "10s")'),
    (BASE, ["flows[0].count=0"], "flows[0].count: must be between 1 and 100000 (got 0)"),
    (BASE, ["flows[0].name=a", "flows[1].name=a"], 'flows[1].name: duplicate flow name "a"'),
    (
        BASE,
        ["flows[0].app=stream"],
        'flows[0].app: unknown app "stream" (choose from bulk, downloads)',
    ),
    (BASE, ["flows[0].bytes=0"], "flows[0].bytes: must be > 0 (got 0)"),
    (BASE, ["flows[0].sizes=10KB"], 'flows[0].sizes: only valid with app = "downloads"'),
    (BASE, [*DOWNLOADS, "flows[0].bytes=1MB"], 'flows[0].bytes: only valid with app = "bulk"'),
    (BASE, ["flows[0].app=downloads"], "flows[0].sizes: required field missing"),
    (BASE, [*DOWNLOADS, "flows[0].downloads=0"], "flows[0].downloads: must be ≥ 1 (got 0)"),
    # distributions
    (
        BASE,
        ["flows[0].app=downloads", 'flows[0].sizes={kind = "normal"}'],
        'flows[0].sizes.kind: unknown distribution "normal" (choose from const, uniform, '
        "exponential, lognormal, pareto, empirical)",
    ),
    (
        BASE,
        ["flows[0].app=downloads", 'flows[0].sizes={kind = "uniform", lo = "10KB", hi = "5KB"}'],
        'flows[0].sizes.hi: must be > lo ("10KB") (got "5KB")',
    ),
    (
        BASE,
        [*DOWNLOADS, 'flows[0].think={kind = "exponential", mean = "0s"}'],
        'flows[0].think.mean: must be > 0 (got "0s")',
    ),
    (
        BASE,
        [*DOWNLOADS, 'flows[0].think={kind = "exponential", mean = 2}'],
        'flows[0].think.mean: must be a time like "50ms" (got 2)',
    ),
    (
        BASE,
        ["flows[0].app=downloads", 'flows[0].sizes={kind = "lognormal", sigma = 1}'],
        'flows[0].sizes.median: give exactly one of "median" (with units) or "mu"',
    ),
    (
        BASE,
        [
            "flows[0].app=downloads",
            'flows[0].sizes={kind = "lognormal", median = "1KB", sigma = 0}',
        ],
        "flows[0].sizes.sigma: must be > 0 (got 0)",
    ),
    (
        BASE,
        ["flows[0].app=downloads", 'flows[0].sizes={kind = "pareto", scale = "1KB", shape = "x"}'],
        'flows[0].sizes.shape: must be a number (got "x")',
    ),
    (
        BASE,
        ["flows[0].app=downloads", 'flows[0].sizes={kind = "empirical", bins = []}'],
        "flows[0].sizes.bins: must be a non-empty list of [lo, hi, weight] (got [])",
    ),
    (
        BASE,
        ["flows[0].app=downloads", 'flows[0].sizes={kind = "empirical", bins = [[1, 2]]}'],
        "flows[0].sizes.bins[0]: must be [lo, hi, weight] (got [1, 2])",
    ),
    (
        BASE,
        ["flows[0].app=downloads", 'flows[0].sizes={kind="empirical", bins=[["50KB", "1KB", 3]]}'],
        'flows[0].sizes.bins[0][1]: must be > lo ("50KB") (got "1KB")',
    ),
    (
        BASE,
        ["flows[0].app=downloads", 'flows[0].sizes={kind="empirical", bins=[[1, "1KB", 0]]}'],
        "flows[0].sizes.bins[0][2]: weight must be > 0 (got 0)",
    ),
    (
        BASE,
        ["flows[0].app=downloads", 'flows[0].sizes={kind="empirical", bins=[[-1, "1KB", 1]]}'],
        "flows[0].sizes.bins[0][0]: must be ≥ 0 (got -1)",
    ),
    (
        BASE,
        ["flows[0].app=downloads", 'flows[0].sizes={kind = "const", value = 1, lo = 1}'],
        "flows[0].sizes.lo: unknown field (allowed: kind, value)",
    ),
    (
        BASE,
        ["flows[0].app=downloads", "flows[0].sizes=10kb"],
        'flows[0].sizes: must be a size like "64KB" or a whole number of bytes (got "10kb")',
    ),
    # cross traffic
    (
        BASE,
        ["cross[0].rate=1Mbps", "cross[0].kind=tcp"],
        'cross[0].kind: unknown cross-traffic kind "tcp" (choose from udp_cbr, ping)',
    ),
    (BASE, ["cross[0].start=1s"], "cross[0].rate: required field missing"),
    (
        BASE,
        ["cross[0].rate=1Mbps", "cross[0].packet_size=20"],
        "cross[0].packet_size: must be between 28 and 65535 (got 20)",
    ),
    (
        BASE,
        ["cross[0].rate=1Mbps", "cross[0].start=10s"],
        'cross[0].start: must be < duration ("10s") (got "10s")',
    ),
    (
        BASE,
        ["cross[0].rate=1Mbps", "cross[0].start=2s", "cross[0].stop=1s"],
        'cross[0].stop: must be > start (got "1s")',
    ),
    (
        BASE,
        ["cross[0].rate=1Mbps", "cross[0].hops=[]"],
        "cross[0].hops: must be a non-empty list of links (got [])",
    ),
    (
        BASE,
        ["cross[0].rate=1Mbps", "cross[0].hops=[0, 0]"],
        "cross[0].hops[1]: link 0 listed twice",
    ),
    (
        BASE,
        ["cross[0].rate=1Mbps", 'cross[0].hops=["nope"]'],
        'cross[0].hops[0]: unknown link "nope" (links: link0)',
    ),
    (
        BASE,
        ["cross[0].rate=1Mbps", "cross[0].hops=[3]"],
        "cross[0].hops[0]: must be a link index between 0 and 0 or a link name (got 3)",
    ),
    (
        BASE,
        ["cross[0].rate=1Mbps", "cross[1].rate=1Mbps", "cross[1].name=cross0"],
        'cross[1].name: duplicate cross-traffic name "cross0"',
    ),
    # packet capture
    (
        BASE,
        ["pcap[0].hop=0", "pcap[0].dir=up"],
        'pcap[0].dir: unknown direction "up" (choose from fwd, rev, both)',
    ),
    (BASE, ["pcap[0].dir=fwd"], "pcap[0].hop: required field missing"),
    (
        BASE,
        ["pcap[0].hop=0", "pcap[1].hop=link0"],
        'pcap[1].file: duplicate file "link0-both.pcap" (also used by pcap[0])',
    ),
    (
        BASE,
        ["pcap[0].hop=0", "pcap[0].payload=-1"],
        "pcap[0].payload: must be between 0 and 65535 (got -1)",
    ),
    (
        BASE,
        ["pcap[0].hop=0", "pcap[0].payload=x"],
        'pcap[0].payload: must be a number of bytes or "all" (got "x")',
    ),
]


def test_link_stalls_per_direction() -> None:
    link = config_of(BASE, ['path[0].down.stalls=[["1s", "2ms"], ["3s", "1us"]]'])["hops"][0]
    assert link["fwd"]["stalls_ns"] == [[1_000_000_000, 2_000_000], [3_000_000_000, 1_000]]
    # Unset: not in the config at all, so configs without stalls are what they were.
    assert "stalls_ns" not in link["rev"]
    msg = error_of(BASE, ['path[0].stalls=[["1s", "2s"], ["2s", "1s"]]'])
    assert msg == "path[0].stalls[1][0]: must not start before the previous stall ends"
    msg = error_of(BASE, ['path[0].up.stalls=[["1s", "0s"]]'])
    assert msg == 'path[0].up.stalls[0][1]: must be > 0 (got "0s")'


def test_a_stalled_link_holds_packets_and_delivers_everything() -> None:
    from tcplab.campaign.sweep import run_config

    text = BASE.replace('duration = "10s"', 'duration = "3s"')
    plain = run_config(config_of(text, []))
    stalled = run_config(config_of(text, ['path[0].down.stalls=[["1s", "300ms"]]']))
    rows = {r["dir"]: r for r in stalled["links"]}
    assert rows["fwd"]["stalled"] > 0 and "stalled" not in rows["rev"]
    assert "stalled" not in plain["links"][0]
    # Nothing lost, but 300 ms of the data direction frozen: fewer bytes by the end.
    assert rows["fwd"]["drops_loss"] == 0
    assert stalled["flows"][0]["bytes_delivered"] < plain["flows"][0]["bytes_delivered"]


@pytest.mark.parametrize(("text", "overrides", "message"), ERRORS, ids=[e[2] for e in ERRORS])
def test_validation_messages(text: str, overrides: list[str], message: str) -> None:
    assert error_of(text, overrides) == message


def test_error_names_the_source(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(BASE.replace('"10Mbps"', '"10ms"'), encoding="utf-8")
    with pytest.raises(ScenarioError) as err:
        load_scenario(path)
    assert err.value.source == str(path)
    assert err.value.located() == f'{path}: path[0].rate: must be a rate like "10Mbps" (got "10ms")'


def test_missing_file_and_bad_toml(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError) as err:
        load_scenario(tmp_path / "nope.toml")
    assert err.value.located() == (
        f"{tmp_path / 'nope.toml'}: no such scenario file (built-in scenarios: p2p-bulk)"
    )
    bad = tmp_path / "bad.toml"
    bad.write_text("duration = \n", encoding="utf-8")
    with pytest.raises(ScenarioError) as err:
        load_scenario(bad)
    assert str(err.value).startswith("invalid TOML: ")
    assert "line 1" in str(err.value)
    assert "\n" not in str(err.value)


# -- overrides ---------------------------------------------------------------------------------


def test_overrides_parse_values() -> None:
    data = apply_overrides(
        tomllib.loads(BASE),
        [
            "duration=20s",
            "flows[0].cc=cubic",
            "path[0].loss=0.01",
            "path[0].up.rate=64kbps",
            "flows[1].sack=false",
            "flows[0].initial_ssthresh=inf",
            "cross[0].hops=[0]",
            'path[0].loss_model={kind = "bernoulli", p = 0.5}',
            "seed=3",
        ],
    )
    assert data["duration"] == "20s"
    assert data["flows"] == [{"cc": "cubic", "initial_ssthresh": "inf"}, {"sack": False}]
    assert data["path"][0]["loss"] == 0.01
    assert data["path"][0]["up"] == {"rate": "64kbps"}
    assert data["path"][0]["loss_model"] == {"kind": "bernoulli", "p": 0.5}
    assert data["cross"] == [{"hops": [0]}]
    assert data["seed"] == 3
    assert tomllib.loads(BASE)["duration"] == "10s"  # the input is not modified


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("flows", '--set "flows": expected KEY=VALUE, e.g. flows[0].cc=cubic'),
        ("=1", '--set "=1": expected KEY=VALUE, e.g. flows[0].cc=cubic'),
        (
            "flows[0]cc=1",
            '--set "flows[0]cc=1": bad key "flows[0]cc" (use a dotted path like flows[0].cc)',
        ),
        ("flows[5].cc=cubic", "--set flows[5].cc: index 5 out of range (flows has 1 entries)"),
        ("duration.x=1", "--set duration.x: duration is not a table"),
        ("flows.cc=1", "--set flows.cc: flows is not a table"),
        ("name[0]=1", "--set name[0]: name is not a list"),
    ],
)
def test_override_errors(override: str, message: str) -> None:
    with pytest.raises(ScenarioError) as err:
        apply_overrides(tomllib.loads(BASE), [override])
    assert str(err.value) == message


# -- the config matches the simulator's serde structs -----------------------------------------

CONFIG_RS = REPO / "crates" / "tcplab-sim" / "src" / "config.rs"


def _rust_items(source: str) -> dict[str, dict[str, set[str]]]:
    """``{struct name: {"": fields}}`` and ``{enum name: {variant: fields}}``, read from the
    Rust source (pub fields; snake_case variant names; a newtype variant ``Link(LinkConfig)``
    has the fields of its struct)."""
    items: dict[str, dict[str, set[str]]] = {}
    newtypes: list[tuple[str, str, str]] = []
    for kind, name, body in re.findall(r"pub (struct|enum) (\w+) \{(.*?)\n\}", source, re.S):
        body = re.sub(r"//[^\n]*", "", body)
        if kind == "struct":
            items[name] = {"": set(re.findall(r"pub (\w+):", body))}
            continue
        variants: dict[str, set[str]] = {}
        pattern = r"\n    (\w+)\s*(\(\w+\)|\{.*?\})?,?(?=\n|$)"
        for variant, payload in re.findall(pattern, body, re.S):
            snake = re.sub(r"(?<!^)([A-Z])", r"_\1", variant).lower()
            if payload.startswith("("):
                newtypes.append((name, snake, payload[1:-1]))
            variants[snake] = set(re.findall(r"(\w+):", payload))
        items[name] = variants
    for enum, variant, struct in newtypes:
        items[enum][variant] = items[struct][""]
    return items


def test_config_matches_config_rs() -> None:
    if not CONFIG_RS.is_file():
        pytest.skip("crates/tcplab-sim/src/config.rs is not here (installed package)")
    rust = _rust_items(CONFIG_RS.read_text(encoding="utf-8"))
    web = load_scenario(SCENARIOS / "web-downloads.toml").to_config()
    cross = load_scenario(SCENARIOS / "cross-traffic.toml", ["pcap[0].hop=0"]).to_config()
    lossy = load_scenario(SCENARIOS / "lossy-ge.toml").to_config()
    # A managed queue and an ECN flow: the keys that appear only when set.
    managed = load_scenario(
        SCENARIOS / "lossy-ge.toml", ['path[0].aqm="fq_codel"', "flows[0].ecn=true"]
    ).to_config()

    def fields(struct: str) -> set[str]:
        return rust[struct][""]

    def variant(enum: str, value: dict[str, Any]) -> None:
        assert value["kind"] in rust[enum], (enum, value)
        assert set(value) - {"kind"} == rust[enum][value["kind"]], (enum, value)

    for config in (web, cross, lossy, managed):
        # `aqm` and `ecn` only when set (a config without them stays as it was)
        unset = set() if config is managed else {"aqm", "ecn"}
        # `record` (which tables to keep) is the runner's, not the scenario's
        assert set(config) == fields("SimConfig") - {"record"}
        for link in config["hops"]:
            variant("HopConfig", link)
            for direction in ("fwd", "rev"):
                # `stalls_ns` and `delay_trace` only when set, as `aqm`
                assert (
                    set(link[direction])
                    == fields("LinkDirConfig")
                    - {
                        "stalls_ns",
                        "delay_trace",
                    }
                    - unset
                )
                variant("QueueConfig", link[direction]["queue"])
                variant("LossConfig", link[direction]["loss"])
        for flow in config["flows"]:
            assert set(flow) == fields("FlowConfig")
            # `pacing`, `xmit_time`, `snd_buf_model`, `tso_model` and `timers` only when set
            # (absent: as the congestion control needs; instant hosts; a payload-counted send
            # buffer; no skbs; exact timers)
            optional = {"pacing", "xmit_time", "snd_buf_model", "tso_model", "timers"}
            assert set(flow["tcp"]) - optional == fields("TcpConfigJson") - optional - unset
            assert set(flow["tcp"]["rto"]) == fields("RtoConfigJson")
            assert set(flow["tcp"]["ack"]) == fields("AckConfigJson")
            variant("AppConfig", flow["app"])
        for cbr in config["cross"]:
            assert set(cbr) == fields("CbrConfig")
        for pcap in config["pcap"]:
            assert set(pcap) == fields("PcapConfig")
    app = web["flows"][0]["app"]
    variant("Dist", app["sizes"])
    variant("Dist", app["think_ns"])
    assert lossy["hops"][0]["fwd"]["loss"]["kind"] == "gilbert_elliott"
