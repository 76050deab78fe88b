"""HyStart++ (RFC 9406) through the scenario key ``hystart`` and CUBIC's RFC 3465 byte counting."""

from __future__ import annotations

from typing import Any

import pytest

from tcplab.errors import ScenarioError
from tcplab.scenario.parse import parse_scenario


def _scenario(**flow: Any) -> dict[str, Any]:
    return {
        "name": "hystart",
        "duration": "10s",
        "seed": 1,
        "path": [{"rate": "10Mbps", "delay": "50ms", "queue": 100}],
        "flows": [{"cc": "cubic", "abc_l": 2, **flow}],
    }


def test_key_parses_and_defaults_off() -> None:
    assert parse_scenario(_scenario()).config["flows"][0]["tcp"]["hystart"] is False
    cfg = parse_scenario(_scenario(hystart=True)).config
    assert cfg["flows"][0]["tcp"]["hystart"] is True
    assert cfg["flows"][0]["tcp"]["abc_l"] == 2  # byte counting applies to CUBIC too


@pytest.mark.parametrize(
    ("flow", "message"),
    [
        ({"hystart": "yes"}, "flows[0].hystart: must be"),
        (
            {"hystart": True, "cc": "vegas", "abc_l": 1},
            "flows[0].hystart: HyStart++ applies to reno/newreno/cubic/dctcp only",
        ),
    ],
)
def test_bad_values_one_line_errors(flow: dict[str, Any], message: str) -> None:
    with pytest.raises(ScenarioError) as err:
        parse_scenario(_scenario(**flow))
    assert message in str(err.value) and "\n" not in str(err.value)


def test_rust_rechecks_hystart() -> None:
    pytest.importorskip("tcplab._core")
    import json

    from tcplab import _core

    cfg = parse_scenario(_scenario(hystart=True, abc_l=1)).config
    cfg["flows"][0]["tcp"]["cc"] = "westwood"
    with pytest.raises(ValueError, match="hystart: HyStart\\+\\+ applies to reno/newreno/cubic"):
        _core.run(json.dumps(cfg), None)


def test_cubic_leaves_slow_start_early_with_hystart() -> None:
    pytest.importorskip("tcplab._core")
    from tcplab.campaign.sweep import run_config

    def run(hystart: bool) -> dict[str, Any]:
        sc = parse_scenario(_scenario(hystart=hystart)).to_config()
        return run_config(sc)["flows"][0]

    off, on = run(False), run(True)
    assert "hystart_css_entries" not in off  # off: the summary is as before
    assert on["hystart_css_entries"] >= 1
    # CSS begins within the first second, at ~148 segments (BDP ≈ 86 + 100 queue slots)
    assert on["hystart_first_css_s"] < 1.0
    assert on["hystart_first_css_cwnd"] < 200 * 1448
    assert on["retransmitted_segments"] * 3 < off["retransmitted_segments"]


def test_linux_ack_train_breaks_on_a_two_ms_gap_only_inside_its_window() -> None:
    """Linux's HyStart ACK train (cubic-linux) needs every ACK within 2 ms of the one before
    from the round's start to half the minimum RTT. The validation's Linux runs that exited
    slow start a round late had a late emulator release inside that window; replaying it as
    a link stall must do the same to tcplab, and the same stall after the exit must not."""
    from tcplab.real.validate.compare import slow_start_exit, stalls_from_late, tcplab_runs
    from tcplab.real.validate.run import parse_case

    case = parse_case("cc=cubic,rtt=250ms,loss=0,duration=4s", False)
    (ideal,) = tcplab_runs(case, [1], stack="linux")
    t_exit, peak = slow_start_exit(ideal)

    def peak_with_late_release(at_s: float) -> float:
        # One ACK 1.3 ms late on its way to the sender, the one before it on time 1.2 ms earlier.
        stalls = stalls_from_late([[at_s, 1300.0, "rev", at_s - 0.0012]])
        (run,) = tcplab_runs(case, [1], stack="linux", stalls=[stalls])
        return slow_start_exit(run)[1]

    assert 240 <= peak <= 270  # Linux 6.18 on this path: 253 (TCPHystartTrainCwnd 267)
    # Inside the window (60 ms before the exit; Linux's late runs had theirs 43-66 ms before):
    # the round's train is lost and slow start goes on for one more round (Linux: 419).
    assert peak_with_late_release(t_exit - 0.06) > 1.5 * peak
    # After the exit, or in the round before (whose train is too short to fire): nothing.
    assert peak_with_late_release(t_exit + 0.03) == peak
    assert peak_with_late_release(t_exit - 0.15) == peak


def _ssthresh_steps(flow: dict[str, Any]) -> list[tuple[float, int, int]]:
    """A slow start that overshoots a 41-packet queue by far (5.42 Mbit/s, RTT 87.4 ms, no
    HyStart exit before the loss): (time s, cwnd, ssthresh) in segments at each ssthresh
    change in the first 1.3 s."""
    from tcplab.campaign.sweep import run_config

    sc = {
        "name": "hystart-recovery",
        "duration": "1.3s",
        "seed": 1000,
        "sample_interval": "20ms",
        "path": [{"rate": "5420000bps", "delay": "43700000ns", "queue": 41}],
        "flows": [{"cc": "cubic", "mss": 1448, **flow}],
    }
    ts = run_config(parse_scenario(sc).to_config(), columns=True)["timeseries_table"]
    steps, last = [], None
    for t, cwnd, ss in zip(ts["t_ns"], ts["cwnd"], ts["ssthresh"], strict=True):
        if ss != last and ss < 2**40:
            steps.append((t / 1e9, round(cwnd / 1448), round(ss / 1448)))
        last = ss
    return steps


def test_linux_hystart_runs_in_fast_recovery() -> None:
    # tcp_cubic.c's bictcp_acked runs on every ACK (tcp_clean_rtx_queue's pkts_acked), in
    # fast recovery too: PRR takes cwnd below the loss's ssthresh, HyStart's delay exit then
    # sets ssthresh = cwnd inside the recovery (Linux: 111, then 87 = cwnd at 0.84 s; tcplab
    # exits a round earlier, at a larger cwnd: validation/linux/README.md, seed 1 #17).
    steps = _ssthresh_steps({"stack": "linux"})
    (t1, _, ss1), (t2, cwnd2, ss2) = steps[:2]
    assert t1 < 0.7 and t2 < 1.0  # the loss, then the exit before the recovery ends
    # ssthresh = cwnd at the exit (the next 20-ms sample's cwnd is PRR's, at most that), below
    # the loss's ssthresh, and not a second multiplicative decrease (0.7 of cwnd).
    assert cwnd2 <= ss2 < ss1 and ss2 > 0.8 * cwnd2
    # Without Linux HyStart nothing changes ssthresh in that recovery.
    plain = _ssthresh_steps({"stack": "linux", "hystart": False})
    assert plain[0][2] == ss1 and all(t > t2 for t, _, _ in plain[1:])
