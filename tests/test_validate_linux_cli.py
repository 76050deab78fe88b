"""``tcplab validate linux``: case parsing (always) and one quick case on the real stack (root,
namespaces and TUN, else skipped with the reason; about 15 s)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from support import realtime
from tcplab.errors import ScenarioError

pytest.importorskip("tcplab._core")
pytest.importorskip("numpy")

from tcplab.real.validate.netlab import available
from tcplab.real.validate.run import parse_case


def test_case_keys_units_and_defaults() -> None:
    c = parse_case("cc=cubic,rate=1.5Mbps,rtt=100ms,loss=0.01,queue=50", quick=False)
    assert (c.cc, c.rate_bps, c.rtt_ms, c.loss, c.queue) == ("cubic", 1_500_000, 100.0, 0.01, 50)
    assert (c.duration_s, c.warmup_s) == (20.0, 3.0)
    d = parse_case("rtt=40ms", quick=True)
    assert (d.cc, d.rate_bps, d.loss, d.queue, d.duration_s) == ("reno", 10_000_000, 0.0, 100, 10.0)
    assert parse_case("reno,40,0.001", quick=False).loss == 0.001  # the older CC,RTT_MS,LOSS


def test_case_aqm_and_ecn_keys() -> None:
    """``aqm`` names the data queue's discipline, ``ecn=1`` turns ECN on at both ends and in
    the discipline; both reach the simulated scenario, which the core accepts."""
    from tcplab.real.validate.compare import tcplab_scenario
    from tcplab.real.validate.netlab import link_config
    from tcplab.scenario.parse import parse_scenario

    c = parse_case("cc=cubic,queue=1000,aqm=pie,ecn=1", quick=False)
    assert (c.aqm, c.ecn) == ("pie", True) and c.label.endswith("aqm=pie ecn")
    assert parse_case("aqm=codel", quick=False).aqm_key == {"kind": "codel", "ecn": False}
    assert parse_case("aqm=droptail", quick=False).aqm_key == "droptail"
    assert parse_case("rtt=40ms", quick=True).aqm is None
    for stack in ("linux", "matched"):
        sc = tcplab_scenario(c, 1000, stack=stack)
        assert sc["path"][0]["down"]["aqm"] == {"kind": "pie", "ecn": True}
        assert sc["flows"][0]["ecn"] is True
        cfg = parse_scenario(sc).to_config()
        assert cfg["hops"][0]["fwd"]["aqm"]["kind"] == "pie"
        assert cfg["hops"][0]["fwd"]["aqm"]["ecn"] is True
        assert "aqm" not in cfg["hops"][0]["rev"]
    emu = link_config(10_000_000, 20_000_000, 1000, 0.0, 1, c.aqm_key)
    assert emu["hops"][0]["fwd"]["aqm"]["kind"] == "pie"
    assert "aqm" not in link_config(10_000_000, 20_000_000, 100, 0.0, 1)["hops"][0]["fwd"]


def test_every_case_discipline_passes_the_core_validator() -> None:
    """Parity with ``validate.rs``: every ``aqm`` a case accepts, with and without ECN, gives a
    simulated scenario and an emulated link the core's validator accepts."""
    from tcplab import _core
    from tcplab.real.validate.compare import tcplab_scenario
    from tcplab.real.validate.netlab import link_config
    from tcplab.scenario.aqm import KINDS
    from tcplab.scenario.parse import parse_scenario

    for kind in KINDS:
        for ecn in ("0", "1") if kind != "droptail" else ("0",):
            c = parse_case(f"cc=cubic,queue=1000,aqm={kind},ecn={ecn}", quick=True)
            cfg = parse_scenario(tcplab_scenario(c, 1000)).to_config()
            _core.validate(json.dumps(cfg))
            _core.validate(json.dumps(link_config(20_000_000, 20_000_000, 1000, 0, 1, c.aqm_key)))


def test_aqm_targets_rule() -> None:
    """Re-evaluates the managed-queue targets' rule on made-up numbers: delays within 20 % or
    1 ms, counts within 30 % (zero where Linux's is zero), marks n/a without ECN."""
    from tcplab.real.validate.run import aqm_targets

    row = {
        "ecn": True,
        "linux_goodput": (10e6, 0.1e6),
        "tcplab_goodput": (9.2e6, 0.1e6),
        "linux_qdelay_p50_ms": 2.0,
        "tcplab_qdelay_p50_ms": 2.9,
        "linux_qdelay_p99_ms": 30.0,
        "tcplab_qdelay_p99_ms": 37.0,
        "linux_drops": 0.0,
        "tcplab_drops": 0.0,
        "linux_marks": 10.0,
        "tcplab_marks": 13.0,
    }
    t = aqm_targets(row)
    assert t == {
        "goodput_10": True,
        "qdelay_p50": True,
        "qdelay_p99": False,
        "drops": True,
        "marks": True,
    }
    row.update(tcplab_drops=1.0, tcplab_marks=13.5, ecn=False)
    t = aqm_targets(row)
    assert t["drops"] is False and t["marks"] is None


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("aqm=bfifo", "--case: aqm: must be one of droptail, codel, fq_codel, pie, red"),
        ("aqm=red,ecn=yes", "--case: ecn: must be 0 or 1"),
        ("ecn=1", "--case: ecn: needs an aqm that marks"),
        ("aqm=droptail,ecn=1", "--case: ecn: needs an aqm that marks"),
        ("cc=vegas", "--case: cc: must be one of reno, cubic"),
        ("rate=10ms", "rate"),
        ("loss=2", "--case: loss: must be in [0, 1)"),
        ("mss=1000", "expected one of cc, rate, rtt, loss, queue, duration"),
    ],
)
def test_bad_cases_name_the_key(spec: str, message: str) -> None:
    with pytest.raises(ScenarioError, match=message.replace("[", r"\[").replace(")", r"\)")):
        parse_case(spec, quick=True)


REASON = available()


@realtime(f"Linux TCP testbed unavailable: {REASON}" if REASON else None)
def test_one_quick_case_as_json() -> None:
    r = subprocess.run(
        [sys.executable, "-m", "tcplab", "validate", "linux", "--quick", "--json",
         "--case", "cc=reno,rate=10Mbps,rtt=40ms,loss=0,queue=100"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    lines = r.stdout.strip().splitlines()
    assert len(lines) == 1
    obj = json.loads(lines[0])
    assert obj["case"]["cc"] == "reno" and obj["case"]["rate_bps"] == 10_000_000
    keys = {"goodput_bps", "goodput_ci95_bps", "retransmitted_segments", "rtos"}
    assert keys <= set(obj["linux"]) and keys <= set(obj["tcplab"])
    # Lossless: both fill the link after slow start (measured within 0.2 %).
    ratio = obj["tcplab"]["goodput_bps"] / obj["linux"]["goodput_bps"]
    assert abs(ratio - 1) < 0.03, ratio
    assert obj["emulator_lateness_us"][0]["p50"] < 500


def test_late_releases_become_stalls_around_the_late_packet() -> None:
    from tcplab.real.validate.compare import SILENCE_BEFORE_NS, stalls_from_late

    late = [
        # fwd: due 1.5 s, 1.256 ms late, previous release due 1.16 ms before it ...
        [1.5, 1256.0, "fwd", 1.49884],
        # ... and the next packet, due within that silence, 0.3 ms late: one stall.
        [1.5005, 300.0, "fwd", 1.5],
        # rev: the previous release 100 ms before (an idle direction): 5 ms of silence at most.
        [2.0, 1000.0, "rev", 1.9],
        # Before connect(): left out.
        [-0.5, 2000.0, "rev", -0.6],
    ]
    assert stalls_from_late(late) == {
        # From halfway between the two due times (1.49942 s) to the late release.
        "down": [["1499420000ns", f"{1_501_256_000 - 1_499_420_000}ns"]],
        "up": [[f"{2_000_000_000 - SILENCE_BEFORE_NS}ns", f"{SILENCE_BEFORE_NS + 1_000_000}ns"]],
    }
    assert stalls_from_late([]) == {}


def test_a_failed_transfer_is_retried_once(capsys: pytest.CaptureFixture[str]) -> None:
    from tcplab.real.validate.compare import linux_transfer
    from tcplab.real.validate.netlab import TransferError

    class Flaky:
        def __init__(self, failures: int) -> None:
            self.failures = failures
            self.calls = 0

        def transfer(self, **kw: object) -> str:
            self.calls += 1
            if self.calls <= self.failures:
                raise TransferError("receiver did not start within 10 s: no message")
            return "transfer"

    case = parse_case("cc=cubic,rtt=40ms", True)
    tb = Flaky(1)
    assert linux_transfer(tb, case, seed=1003) == "transfer" and tb.calls == 2
    assert "seed 1003: receiver did not start within 10 s: no message; once more" in (
        capsys.readouterr().err
    )
    with pytest.raises(TransferError, match=r"seed 1003: receiver did not start .* \(twice\)"):
        linux_transfer(Flaky(2), case, seed=1003)
