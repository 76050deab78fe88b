# ruff: noqa: RUF002, RUF003  (the thesis's notation: α, μ)
"""Seed 004 at reduced scale: the host component, cc_params validation, and the §4.5 dumbbell's
Done-when claims (FAST with an over-large α oscillates, bdp-tracking settles, two bdp-tracking
flows share fairly)."""

from __future__ import annotations

from typing import Any

import pytest

from tcplab.errors import ScenarioError
from tcplab.scenario.parse import parse_scenario


def _sc(flow: dict[str, Any], hop: dict[str, Any] | None = None) -> dict[str, Any]:
    path: list[dict[str, Any]] = [{"rate": "1Gbps", "delay": "50us"}]
    if hop is not None:
        path.append({"kind": "host", **hop})
    return parse_scenario({"duration": "1s", "path": path, "flows": [flow]}).to_config()


def test_host_hop_defaults_and_units() -> None:
    cfg = _sc({}, {"b_fsb": "9.8Gbps", "f_toe": "32Gbps", "t_l": "0.4us"})
    h = cfg["hops"][1]
    assert h["kind"] == "host" and h["name"] == "host1"
    assert h["b_fsb_bps"] == 9_800_000_000 and h["b_pci_bps"] == 1_000_000_000
    assert h["f_toe_bps"] == 32_000_000_000 and h["t_l_ns"] == 400
    assert h["nic_rate_bps"] == 1_000_000_000 and h["feedback"] and h["train"] == 10
    assert _sc({}, {"nic_rate": "pipelined"})["hops"][1]["nic_rate_bps"] is None


@pytest.mark.parametrize(
    ("flow", "hop", "message"),
    [
        ({}, {"train": 1}, r"^path\[1\]\.train: must be between 2 and"),
        ({}, {"bfsb": 1}, r"^path\[1\]\.bfsb: unknown field \(did you mean \"b_fsb\"\?\)"),
        (
            {"cc": "vegas", "cc_params": {"delta": 1}},
            None,
            r"^flows\[0\]\.cc_params\.delta: unknown",
        ),
        (
            {"cc": "vegas", "cc_params": {"alpha": 3, "beta": 2}},
            None,
            r"cc_params\.beta: must be ≥ alpha",
        ),
        (
            {"cc": "fast", "cc_params": {"gamma": 1.5}},
            None,
            r"cc_params\.gamma: must be in \(0, 1\]",
        ),
        ({"cc": "bdp-tracking", "cc_params": {"k": 1}}, None, r"cc_params\.k: must be in \(0, 1\)"),
        ({"cc": "newreno", "cc_params": {"alpha": 1}}, None, r"takes no parameters"),
    ],
)
def test_bad_input_is_one_line(
    flow: dict[str, Any], hop: dict[str, Any] | None, message: str
) -> None:
    with pytest.raises(ScenarioError, match=message) as e:
        _sc(flow, hop)
    assert "\n" not in str(e.value)


core = pytest.importorskip("tcplab._core")


@pytest.mark.core
def test_rust_rechecks_cc_params() -> None:
    from tcplab.campaign.sweep import run_config

    cfg = _sc({"cc": "fast"})
    cfg["flows"][0]["tcp"]["cc_params"] = {"alpha": -1.0}
    with pytest.raises(Exception, match=r"cc_params\.alpha: must be > 0 packets"):
        run_config(cfg)


@pytest.mark.core
def test_b_rounds_rules_agree_in_python_and_rust() -> None:
    """Python accepts b_rounds 0..64 (0 = since the start); Rust used to refuse 0 and accept
    values past its 64-entry ring."""
    from tcplab.campaign.sweep import run_config

    for ok in (0, 64):
        cfg = _sc({"cc": "bdp-tracking", "cc_params": {"b_rounds": ok}})
        assert run_config(cfg)["flows"][0]["bytes_delivered"] > 0
    with pytest.raises(
        ScenarioError, match=r"cc_params\.b_rounds: must be an integer in \[0, 64\]"
    ):
        _sc({"cc": "bdp-tracking", "cc_params": {"b_rounds": 65}})
    cfg = _sc({"cc": "bdp-tracking"})
    cfg["flows"][0]["tcp"]["cc_params"] = {"b_rounds": 65.0}
    with pytest.raises(Exception, match=r"cc_params\.b_rounds: must be an integer in \[0, 64\]"):
        run_config(cfg)


@pytest.mark.core
def test_acq_loss_cap_rules_agree_in_python_and_rust() -> None:
    from tcplab.campaign.sweep import run_config

    for ok in (0, 1):
        cfg = _sc({"cc": "bdp-tracking", "cc_params": {"acq_loss_cap": ok}})
        assert run_config(cfg)["flows"][0]["bytes_delivered"] > 0
    with pytest.raises(ScenarioError, match=r"cc_params\.acq_loss_cap: must be 0 .* or 1"):
        _sc({"cc": "bdp-tracking", "cc_params": {"acq_loss_cap": 0.5}})
    cfg = _sc({"cc": "bdp-tracking"})
    cfg["flows"][0]["tcp"]["cc_params"] = {"acq_loss_cap": 2.0}
    with pytest.raises(Exception, match=r"cc_params\.acq_loss_cap: must be 0 .* or 1"):
        run_config(cfg)


@pytest.mark.core
def test_loopback_host_follows_eq_3_52() -> None:
    """Table 3.2's loopback: tcplab's host with B_FSB = 2.25·B_int, B_PCI = B_FSB/4 and no NIC
    term delivers MTU/d with d = MTU/B_int + t_L (thesis (3.52))."""
    from tcplab.campaign.sweep import run_configs
    from tcplab.models import throughput_bound as tb
    from tcplab.papers.throughput_bound import FIT353_B_INT, FIT353_T_L, loopback_config

    mtus = [7000, 16000]
    res = run_configs([loopback_config(m, FIT353_B_INT, FIT353_T_L, 0.02) for m in mtus], jobs=1)
    for m, r in zip(mtus, res, strict=True):
        got = r["flows"][0]["goodput_bps"] / 8 * m / (m - 40)
        want = tb.loopback_rate(m, FIT353_B_INT, FIT353_T_L) * m
        assert abs(got / want - 1) < 0.02, (m, got, want)


@pytest.mark.core
def test_simulated_transfer_bounded_by_host() -> None:
    from tcplab.campaign.sweep import run_configs
    from tcplab.models import throughput_bound as tb
    from tcplab.papers.throughput_bound import FIG39, FIG310, host_config

    cases = [(m, h) for h in (FIG39, FIG310) for m in (1500, 9000)]
    res = run_configs([host_config(m, h, duration=0.2) for m, h in cases], jobs=1)
    for (m, h), r in zip(cases, res, strict=True):
        ip = r["flows"][0]["goodput_bps"] * m / (m - 40)
        bound = (tb.bound_toe if "f_toe" in h else tb.bound_nontoe)(m, 1e-4, **h)
        assert 0.9 * bound <= ip <= bound, (m, h, ip, bound)


@pytest.mark.core
def test_above_the_crossover_the_pipelined_host_beats_the_additive_bound() -> None:
    """Window W = 1/√p at RTT 24 ms (above 12 ms): the simulated host overlaps its work with the
    window's flight, so it reaches min(MTU/d, W·MTU/RTT), above the (3.44) bound (the
    reproduction's fixed-window sensitivity; its verdicts come from the loss-driven runs)."""
    from tcplab.campaign.sweep import run_config
    from tcplab.models import throughput_bound as tb
    from tcplab.papers.throughput_bound import SEC35_NONTOE, _host_bound, host_config

    h, mtu, rtt = SEC35_NONTOE, 1500, 0.024
    r = run_config(host_config(mtu, h, duration=200 * rtt, rtt=rtt, rcv_pkts=1000))
    ip = r["flows"][0]["goodput_bps"] * mtu / (mtu - 40)
    host_only = 1 / (1 / h["b_ge"] + tb.host_per_bit(h["b_fsb"], h["b_pci"]) + h["t_l"] / (8 * mtu))
    pipelined = min(host_only, 1000 * mtu * 8 / rtt)
    assert ip > 1.2 * _host_bound(mtu, h, rtt=rtt)
    assert 0.9 * pipelined < ip <= pipelined


@pytest.mark.core
def test_loss_driven_transfer_against_the_bound_below_and_above_the_crossover() -> None:
    """The bound against loss-driven transfers, at reduced scale: NewReno with Bernoulli loss
    p = 1e-4 (√p = 1e-2, RTTs ×0.1 of the thesis's, so √p·RTT and the bound are the thesis's at
    6/24/96 ms).
    Below the crossover (1.17 ms here, 11.7 ms at √p = 1e-3) the transfer is host-limited and
    sits within 10 % under (3.44); above it the loss-driven window (mean ≈ 1.3/√p, not the
    thesis's 1/√p) and the pipelined host take it above the `max` reading — the miss the
    reproduction reports — while the printed `min` reading (= MTU/d there) and tcplab's
    pipelined bound min(MTU/d, W_max·MTU/RTT), W_max = 1/√(3p/8), still hold."""
    from tcplab.models import throughput_bound as tb
    from tcplab.papers.throughput_bound import SEC35_NONTOE, host_loss_sweep

    h, sp = SEC35_NONTOE, 1e-2
    rtts = [0.6e-3, 2.4e-3, 9.6e-3]
    res = host_loss_sweep(sp, rtts, seeds=4, cycles=30, jobs=2)
    x = tb.crossover_rtt(1500, h["b_ge"], sp)
    for r in res:
        ip, rtt = r["ip_bps"], r["rtt_s"]
        b_max = tb.bound_nontoe(1500, rtt, sqrt_p=sp, **h)
        b_min = tb.bound_nontoe(1500, rtt, sqrt_p=sp, reading="min", **h)
        assert ip <= 1.0005 * b_min, (rtt, ip, b_min)
        b_pipe = tb.bound_pipelined(1500, rtt, sqrt_p=sp, **h)
        assert ip <= 1.0005 * b_pipe, (rtt, ip, b_pipe)
        if rtt < x:
            assert b_pipe == pytest.approx(b_max, rel=1e-9)
            assert 0.9 * b_max <= ip <= 1.0005 * b_max, (rtt, ip, b_max)
        else:
            assert ip > 1.2 * b_max, (rtt, ip, b_max)
    assert 1.1 < res[-1]["cwnd_sqrt_p"] < 1.7, res[-1]["cwnd_sqrt_p"]


@pytest.mark.core
def test_dumbbell_fast_oscillates_bdp_tracking_settles_and_is_fair() -> None:
    from tcplab.campaign.sweep import run_configs
    from tcplab.papers.throughput_bound import _series, cwnd_cv, dumbbell_config, jain

    dur = 40.0
    runs = [
        ("fast", {"alpha": 200, "gamma": 0.5}),
        ("bdp-tracking", {}),
    ]
    cfgs = [dumbbell_config([r], bottleneck=155e6, duration=dur) for r in runs]
    two = dumbbell_config(
        [("bdp-tracking", {}), ("bdp-tracking", {})],
        bottleneck=155e6,
        duration=dur,
        cross_rate=0,
        stagger=5.0,
    )
    res = run_configs([*cfgs, two], jobs=2, columns=True)
    cv = [cwnd_cv(*_series(r, 0), t0=dur / 2) for r in res[:2]]
    assert cv[0] > 0.3, cv  # FAST with α = 200 > the 40-packet queue oscillates
    assert cv[1] < 0.05, cv  # bdp-tracking settles
    t, w = _series(res[1], 0)
    bdp_avail = (155e6 - 100e6) * 0.024 / (552 * 8)
    assert abs(w[t >= dur / 2].mean() / bdp_avail - 1) < 0.1  # just around B·RTT_min
    means = []
    for f in (0, 1):
        t, w = _series(res[2], f)
        means.append(float(w[t >= dur / 2].mean()))
    assert jain(means) >= 0.95, means


@pytest.mark.core
def test_lan_host_scenario_runs_at_the_bound() -> None:
    from support import SCENARIOS
    from tcplab.campaign.sweep import run_config
    from tcplab.models import throughput_bound as tb
    from tcplab.scenario.parse import load_scenario

    sc = load_scenario(SCENARIOS / "throughput-bound" / "lan-host.toml")
    r = run_config(sc.to_config())
    ip = r["flows"][0]["goodput_bps"] * 9000 / 8960
    bound = tb.bound_nontoe(9000, 1e-4, b_ge=1e9, b_fsb=9.8e9, b_pci=1.06e9, t_l=13.7e-6)
    assert 0.95 * bound < ip <= bound


def test_dumbbell_claims_judged_once_on_the_thesis_rule(tmp_path: Any) -> None:
    """Each §4.5 claim is one prediction over every dumbbell setting of the run, judged on the
    thesis's literal rule; tcplab's rule is context beside it; a quick run (one setting of
    four) cannot make the verdict firm."""
    from tcplab.papers import throughput_bound as tbp
    from tcplab.report.checks import Report

    def metrics(good: bool) -> dict[str, Any]:
        return {
            "fast_cv_ratio": 5.0 if good else 0.4,
            "cv": 0.01 if good else 1.3,
            "b_known_rtt": 1.0,
            "cwnd_over_avail": 0.95 if good else 0.3,
            "goodput_over_newreno": 1.2 if good else 0.3,
            "goodput_mbps": 500.0 if good else 100.0,
            "jain": 1.0,
            "two_flow_over_half": [1.0, 0.99] if good else [0.2, 0.2],
            "two_flow_settled_s": [10.0, 12.0],
        }

    cases = [
        {"where": w, "metrics": {tbp.LITERAL_BDP: metrics(False), tbp.DEFAULT_BDP: metrics(True)}}
        for w in ("1000 Mbps / 10 ms", "155 Mbps / 10 ms")
    ]
    for quick in (False, True):
        rep = Report("throughput-bound", "t", tmp_path / str(quick), quick=quick)
        tbp._dumbbell_checks(rep, cases)
        pred = [c for c in rep.comparisons if c.kind == "prediction"]
        assert len(pred) == len(tbp.DUMBBELL_CLAIMS)
        assert all(c.item.endswith("the thesis's rule") and c.source for c in pred)
        ours = [c for c in rep.comparisons if c.item.endswith("tcplab's rule")]
        assert len(ours) == len(pred) and {c.kind for c in ours} == {"context"}
        verdicts = {c.item.split(":")[0]: c.verdict for c in pred}
        if quick:
            assert set(verdicts.values()) == {"inconclusive"}
        else:
            assert verdicts["R11 B known at the sender after the first data segment"] == "holds"
            assert verdicts["R14 bdp-tracking cwnd / available B·RTT_min after convergence"] == (
                "misses"
            )
            assert "holds" in next(c.rule for c in ours if c.item.startswith("R14"))
