"""Test helpers: paths, and a stand-in for ``tcplab._core`` that returns a result dict
shaped exactly like the simulator's, so the Python side is tested without the Rust build."""

from __future__ import annotations

import importlib.util
import json
import struct
import subprocess
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import pytest

REPO = Path(__file__).resolve().parent.parent
SCENARIOS = REPO / "scenarios"

EVENT_KINDS = ["timeout", "fast_retransmit", "spurious_detected", "connection_open"]
REASONS = ["none", "rto", "dupack"]

Test = TypeVar("Test", bound=Callable[..., Any])


def write_raw_pcap(path: Path, packets: list[tuple[int, bytes]]) -> None:
    """A pcap of bare IPv4 datagrams (LINKTYPE_RAW) with nanosecond stamps, as tcplab writes
    them: ``packets`` as (time ns, datagram)."""
    out = bytearray(struct.pack("<IHHiIII", 0xA1B23C4D, 2, 4, 0, 0, 65535, 101))
    for t_ns, pkt in packets:
        sec, ns = divmod(t_ns, 10**9)
        out += struct.pack("<IIII", sec, ns, len(pkt), len(pkt)) + pkt
    path.write_bytes(bytes(out))


def load_script(relpath: str, name: str) -> types.ModuleType:
    """The repository script at ``relpath`` (not a package module) imported as ``name``."""
    spec = importlib.util.spec_from_file_location(name, REPO / relpath)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def realtime(reason: str | None) -> Callable[[Test], Test]:
    """Mark a test that runs real programs over network namespaces in real time: skipped with
    ``reason`` when that is set, and marked ``realtime``, because its outcome depends on the
    machine's load (``.ci/lowest-deps`` deselects these; the main suite runs them)."""
    skip = pytest.mark.skipif(reason is not None, reason=str(reason))

    def mark(test: Test) -> Test:
        return pytest.mark.realtime(skip(test))

    return mark


def fake_core_result(config: dict[str, Any], violations: list[str] | None = None) -> dict[str, Any]:
    """A ``tcplab._core.run`` result for ``config``: the summary names its flows and links;
    the tables hold seed-dependent numbers."""
    rng = np.random.default_rng(config["seed"])
    flows = [
        {
            "id": i,
            "name": flow["name"],
            "bytes_written": 2_000_000,
            "bytes_delivered": 1_500_000 + i,
            "duration_s": 1.25,
            "goodput_bps": 9.6e6,
            "segments_sent": 1036,
            "retransmitted_segments": 3,
            "timeouts": 2,
            "spurious_timeouts": 1,
            "spurious_detected": 1,
            "fast_retransmits": 1,
            "connections": 1,
            "connections_completed": 0,
        }
        for i, flow in enumerate(config["flows"])
    ]
    links = [
        {
            "name": link["name"],
            "dir": direction,
            "tx_packets": 1040,
            "tx_bytes": 1_550_000,
            "drops_queue": 2,
            "drops_loss": 1,
        }
        for link in config["hops"]
        for direction in ("fwd", "rev")
    ]
    summary = {
        "flows": flows,
        "links": links,
        "cross": [{"name": c["name"], "packets_sent": 10} for c in config["cross"]],
        "events": 123_456,
        "packets": 2080,
        "sim_time_s": config["duration_ns"] / 1e9,
        "invariants": {"checked": ["delivery", "monotonic"], "violations": violations or []},
    }
    n = 6
    timeseries = {
        "flow": np.zeros(n, "<u4"),
        "conn": np.zeros(n, "<u4"),
        "t_ns": np.arange(n, dtype="<i8") * 100_000_000,
        "cwnd": rng.integers(1448, 100_000, n).astype("<u8"),
        "ssthresh": np.full(n, 2**63, "<u8"),
        "srtt_ns": rng.integers(100_000_000, 200_000_000, n).astype("<i8"),
        "rttvar_ns": np.full(n, 5_000_000, "<i8"),
        "rto_ns": np.full(n, 1_000_000_000, "<i8"),
        "inflight": rng.integers(0, 50_000, n).astype("<u8"),
        "delivered": np.cumsum(rng.integers(0, 50_000, n)).astype("<u8"),
    }
    events = {
        "t_ns": np.array([10, 20, 30], "<i8"),
        "flow": np.zeros(3, "<u4"),
        "conn": np.zeros(3, "<u4"),
        "kind": np.array([3, 0, 2], "<u1"),
        "seq": rng.integers(0, 2**32, 3).astype("<u8"),
        "len": np.array([0, 1448, 0], "<u4"),
        "reason": np.array([0, 1, 0], "<u1"),
        "spurious": np.array([-1, 1, -1], "<i1"),
        "detected": np.array([-1, 1, -1], "<i1"),
        "value": np.array([0.0, 1.5, 0.25], "<f8"),
    }

    def columns(arrays: dict[str, np.ndarray]) -> dict[str, tuple[str, bytes]]:
        return {name: (a.dtype.str, a.tobytes()) for name, a in arrays.items()}

    return {
        "summary": json.dumps(summary),
        "timeseries": columns(timeseries),
        "events": columns(events),
        "event_kinds": list(EVENT_KINDS),
        "reasons": list(REASONS),
    }


class FakeCore(types.ModuleType):
    """Records each config it is given; ``violations``/``error`` shape the next results."""

    def __init__(self) -> None:
        super().__init__("tcplab._core")
        self.configs: list[dict[str, Any]] = []
        self.progress: list[float] = []
        self.callbacks: list[Callable[[float], None] | None] = []
        self.violations: list[str] = []
        self.error: Exception | None = None

    def validate(self, config_json: str) -> None:
        """The fake core's validator accepts every configuration."""

    def run(self, config_json: str, progress: Callable[[float], None] | None) -> dict[str, Any]:
        config = json.loads(config_json)
        self.configs.append(config)
        self.callbacks.append(progress)
        if self.error is not None:
            raise self.error
        for fraction in (0.0, 0.5, 1.0):
            self.progress.append(fraction)
            if progress is not None:
                progress(fraction)
        return fake_core_result(config, self.violations)


def emu_leftovers(tag: str) -> set[str]:
    """Namespaces and root-namespace devices of the emulations named with ``tag``
    (``TCPLAB_EMU_TAG``), and their lock file: what must be gone after every emulation."""
    ns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
    names = {line.split()[0] for line in ns.splitlines() if line.startswith(f"tle{tag}")}
    names |= {w.rstrip(":").split("@")[0] for w in links.split() if w.startswith(f"tle{tag}")}
    if Path(f"/run/tcplab-emu/{tag}.lock").exists():
        names.add(f"{tag}.lock")
    return names


def sigint_as_from_a_terminal() -> None:
    """``preexec_fn`` for a child that a test stops with SIGINT: give SIGINT its default action
    (Python then installs its Ctrl-C handler). A test suite started as a background job of a
    non-interactive shell (``pytest &`` in a script) runs with SIGINT ignored, every child
    inherits that across ``exec``, and Python leaves an ignored SIGINT ignored: the child would
    never see the signal."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)
