#!/usr/bin/env python3
"""Speed / goodput benchmark: tcplab vs ns-3 on the p2p-bulk scenario.

Runs ``tcplab run SCENARIO --json --quiet`` and the ns-3 reference program
(bench/ns3/p2p_bulk, built by bench/ns3/build.sh) for the same simulated
duration, measures each child's wall time and peak RSS, prints a table and a
final JSON line. See bench/README.md.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
NS3_DIR = BENCH_DIR / "ns3"
NS3_BIN = NS3_DIR / "build" / "p2p_bulk"
NS3_SOURCES = (NS3_DIR / "p2p_bulk.cc", NS3_DIR / "build.sh")
DEFAULT_SCENARIO = "scenarios/p2p-bulk.toml"

# What bench/ns3/p2p_bulk.cc hard-codes; used to warn when --scenario differs.
NS3_SCENARIO = {"rate": "10Mbps", "delay": "50ms", "queue": 100, "mss": 1448}


class BenchError(RuntimeError):
    """A failure that should end the benchmark with a message, not a traceback."""


@dataclass
class ChildRun:
    """One measured child process."""

    argv: list[str]
    wall_s: float
    peak_rss_kb: int
    cpu_s: float
    returncode: int
    stdout: str
    stderr: str


@dataclass
class SimResult:
    """Best-of-N measurements for one simulator."""

    name: str
    wall_s: float = math.inf
    peak_rss_kb: int = 0
    cpu_s: float = math.inf
    goodput_bps: float = math.nan
    bytes_delivered: int = 0
    packets: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def packets_per_wall_s(self) -> float:
        return self.packets / self.wall_s if self.wall_s > 0 else math.nan

    @property
    def peak_rss_mb(self) -> float:
        return self.peak_rss_kb / 1024.0


def run_measured(argv: list[str], cwd: Path, timeout_s: float | None = None) -> ChildRun:
    """Run ``argv`` and return its wall time and its own peak RSS.

    The child is reaped with ``os.wait4`` so the rusage (ru_maxrss, CPU time)
    belongs to that child alone (plus any descendants it waited for), not to
    every child this process ever had, as RUSAGE_CHILDREN would.
    Output goes to temporary files so no pipe can fill up while we block.
    """
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        try:
            # Own session / process group, so a timeout or Ctrl-C can kill the whole
            # tree (e.g. a shell wrapper and what it started), not just its head.
            proc = subprocess.Popen(argv, cwd=cwd, stdout=out, stderr=err, start_new_session=True)
        except OSError as e:
            raise BenchError(f"cannot start {argv[0]}: {e}") from e
        timed_out = threading.Event()

        def kill_tree() -> None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)

        def on_timeout() -> None:
            timed_out.set()
            kill_tree()

        timer = threading.Timer(timeout_s, on_timeout) if timeout_s else None
        if timer:
            timer.daemon = True
            timer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        except BaseException:
            kill_tree()
            os.wait4(proc.pid, 0)
            proc.returncode = -signal.SIGKILL
            raise
        finally:
            if timer:
                timer.cancel()
        # The head is reaped; make sure nothing it left behind keeps running.
        kill_tree()
        wall = time.perf_counter() - t0
        # Tell Popen the child is reaped so it never waits on the pid again.
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout = out.read().decode(errors="replace")
        stderr = err.read().decode(errors="replace")
    if timed_out.is_set():
        raise BenchError(f"{shlex.join(argv)} timed out after {timeout_s:.0f} s")
    return ChildRun(
        argv=argv,
        wall_s=wall,
        peak_rss_kb=int(usage.ru_maxrss),  # kilobytes on Linux
        cpu_s=usage.ru_utime + usage.ru_stime,
        returncode=proc.returncode,
        stdout=stdout,
        stderr=stderr,
    )


def last_json_object(text: str, who: str) -> dict[str, Any]:
    """Return the last line of ``text`` that parses as a JSON object."""
    for line in reversed(text.splitlines()):
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(obj, dict):
            return obj
    raise BenchError(f"{who}: no JSON object found on stdout:\n{text[-2000:]}")


def check_child(run: ChildRun, who: str) -> None:
    if run.returncode != 0:
        tail = (run.stderr or run.stdout)[-3000:]
        raise BenchError(f"{who} exited with {run.returncode}: {shlex.join(run.argv)}\n{tail}")


def format_duration(seconds: float) -> str:
    """TOML duration string for the scenario: whole seconds if possible, else ms."""
    if seconds == int(seconds):
        return f"{int(seconds)}s"
    ms = seconds * 1000.0
    if abs(ms - round(ms)) > 1e-9:
        raise BenchError(f"--duration {seconds} has sub-millisecond precision")
    return f"{round(ms)}ms"


_TOP_LEVEL_DURATION = re.compile(r"^(\s*duration\s*=\s*)(\"[^\"]*\"|'[^']*'|[^#\s]+)")
_TABLE_HEADER = re.compile(r"^\s*\[")


def scenario_with_duration(text: str, duration: str) -> str:
    """Replace (or add) the top-level ``duration = "..."`` line of a scenario."""
    lines = text.splitlines(keepends=True)
    first_table = next((i for i, ln in enumerate(lines) if _TABLE_HEADER.match(ln)), len(lines))
    for i in range(first_table):
        m = _TOP_LEVEL_DURATION.match(lines[i])
        if m:
            lines[i] = f'{m.group(1)}"{duration}"' + lines[i][m.end() :].rstrip("\n") + "\n"
            break
    else:
        lines.insert(first_table, f'duration = "{duration}"\n')
    new = "".join(lines)
    parsed = tomllib.loads(new)  # must still be valid TOML
    if parsed.get("duration") != duration:
        raise BenchError("failed to set the scenario duration")
    return new


#: ``--cc``: tcplab's congestion control -> the ns-3 program's ``--cc`` (TcpLinuxReno, TcpBbr).
CC_NS3 = {"newreno": "linuxreno", "bbr": "bbr"}

_FLOW_CC = re.compile(r"^(\s*cc\s*=\s*)(\"[^\"]*\"|'[^']*')")


def scenario_with_cc(text: str, cc: str) -> str:
    """Replace the ``cc = "..."`` line of the scenario's (single) flow."""
    lines = text.splitlines(keepends=True)
    hits = [i for i, line in enumerate(lines) if _FLOW_CC.match(line)]
    if len(hits) != 1:
        raise BenchError(f"--cc needs exactly one `cc = ...` line in the scenario ({len(hits)})")
    i = hits[0]
    m = _FLOW_CC.match(lines[i])
    assert m is not None
    lines[i] = f'{m.group(1)}"{cc}"' + lines[i][m.end() :]
    out = "".join(lines)
    if [f.get("cc") for f in tomllib.loads(out).get("flows", [])] != [cc]:
        raise BenchError("failed to set the flow's congestion control")
    return out


def check_scenario_matches_ns3(scenario: dict[str, Any], path: Path) -> None:
    """Warn if the scenario is not the one bench/ns3/p2p_bulk.cc implements."""
    problems: list[str] = []
    paths = scenario.get("path") or []
    flows = scenario.get("flows") or []
    if len(paths) != 1 or len(flows) != 1:
        problems.append(f"{len(paths)} path entries / {len(flows)} flows (want 1/1)")
    if paths:
        for key in ("rate", "delay", "queue"):
            if paths[0].get(key) != NS3_SCENARIO[key]:
                problems.append(f"path.{key}={paths[0].get(key)!r}")
    if flows and flows[0].get("mss") != NS3_SCENARIO["mss"]:
        problems.append(f"flows.mss={flows[0].get('mss')!r}")
    if problems:
        print(
            f"warning: {path} differs from the fixed ns-3 scenario "
            f"({', '.join(problems)}); the ns-3 column is still p2p-bulk",
            file=sys.stderr,
        )


def ensure_ns3_built(rebuild: bool) -> None:
    stale = not NS3_BIN.exists() or any(
        src.stat().st_mtime > NS3_BIN.stat().st_mtime for src in NS3_SOURCES
    )
    if rebuild or stale:
        print("building ns-3 program (bench/ns3/build.sh) ...", file=sys.stderr)
        env = {**os.environ, "PYTHON": os.environ.get("PYTHON", sys.executable)}
        env.pop("NS3_ROOT", None)  # build.sh would build p2p_bulk-<version> instead
        r = subprocess.run(["bash", str(NS3_DIR / "build.sh")], cwd=REPO_ROOT, env=env)
        if r.returncode != 0 or not NS3_BIN.exists():
            raise BenchError("bench/ns3/build.sh failed")


def resolve_tcplab(cmd: str | None) -> list[str]:
    if cmd:
        argv = shlex.split(cmd)
        if not argv:
            raise BenchError("--tcplab is empty")
        return argv
    exe = shutil.which("tcplab")
    if exe is None:
        raise BenchError(
            "`tcplab` not found on PATH; install it or pass --tcplab 'CMD' (or --only ns3)"
        )
    return [exe]


def bench_tcplab(
    tcplab: list[str],
    scenario: Path,
    repeat: int,
    timeout_s: float | None,
    res: SimResult | None = None,
) -> SimResult:
    res = res or SimResult("tcplab")
    seen: set[tuple[int, int]] = set()
    for i in range(repeat):
        argv = [*tcplab, "run", str(scenario), "--json", "--quiet"]
        run = run_measured(argv, REPO_ROOT, timeout_s)
        check_child(run, "tcplab")
        out = last_json_object(run.stdout, "tcplab")
        flows = out.get("flows")
        if not isinstance(flows, list) or not flows:
            raise BenchError(f"tcplab JSON has no flows: {out}")
        delivered = sum(int(f["bytes_delivered"]) for f in flows)
        goodput = sum(float(f["goodput_bps"]) for f in flows)
        packets = int(out["packets"])
        seen.add((delivered, packets))
        res.wall_s = min(res.wall_s, run.wall_s)
        res.cpu_s = min(res.cpu_s, run.cpu_s)
        res.peak_rss_kb = max(res.peak_rss_kb, run.peak_rss_kb)
        if res.packets and (res.bytes_delivered, res.packets) != (delivered, packets):
            print("warning: tcplab results differ between rounds", file=sys.stderr)
        res.goodput_bps = goodput
        res.bytes_delivered = delivered
        res.packets = packets
        best_internal = min(float(out["wall_s"]), res.extra.get("internal_wall_s") or math.inf)
        res.extra = {
            "events": out.get("events"),
            "internal_wall_s": best_internal,
            "retransmitted_segments": sum(int(f.get("retransmitted_segments", 0)) for f in flows),
            "timeouts": sum(int(f.get("timeouts", 0)) for f in flows),
        }
        print(
            f"  tcplab run {i + 1}/{repeat}: {run.wall_s:.3f} s wall, "
            f"{run.peak_rss_kb / 1024:.1f} MB peak RSS",
            file=sys.stderr,
        )
    if len(seen) > 1:
        print(f"warning: tcplab results differ between repeats: {seen}", file=sys.stderr)
    return res


def bench_ns3(
    duration_s: float,
    seed: int,
    repeat: int,
    timeout_s: float | None,
    res: SimResult | None = None,
    cc: str = "newreno",
) -> SimResult:
    res = res or SimResult("ns-3")
    seen: set[tuple[int, int]] = set()
    for i in range(repeat):
        argv = [str(NS3_BIN), f"--duration={duration_s!r}", f"--seed={seed}"]
        if cc != "newreno":
            argv.append(f"--cc={CC_NS3[cc]}")
        run = run_measured(argv, REPO_ROOT, timeout_s)
        check_child(run, "ns-3")
        out = last_json_object(run.stdout, "ns-3")
        seen.add((int(out["bytes_delivered"]), int(out["packets"])))
        res.wall_s = min(res.wall_s, run.wall_s)
        res.cpu_s = min(res.cpu_s, run.cpu_s)
        res.peak_rss_kb = max(res.peak_rss_kb, run.peak_rss_kb)
        if res.packets and (res.bytes_delivered, res.packets) != (
            int(out["bytes_delivered"]),
            int(out["packets"]),
        ):
            print("warning: ns-3 results differ between rounds", file=sys.stderr)
        res.goodput_bps = float(out["goodput_bps"])
        res.bytes_delivered = int(out["bytes_delivered"])
        res.packets = int(out["packets"])
        prev = res.extra.get("internal_wall_s")
        res.extra = {
            k: out.get(k)
            for k in (
                "events",
                "queue_drops",
                "retransmissions",
                "fast_recoveries",
                "rto_losses",
            )
        }
        internal = out.get("run_wall_s")
        res.extra["internal_wall_s"] = (
            min(float(internal), prev) if internal is not None and prev else internal
        )
        print(
            f"  ns-3 run {i + 1}/{repeat}: {run.wall_s:.3f} s wall, "
            f"{run.peak_rss_kb / 1024:.1f} MB peak RSS",
            file=sys.stderr,
        )
    if len(seen) > 1:
        print(f"warning: ns-3 results differ between repeats: {seen}", file=sys.stderr)
    return res


def fmt(v: Any, spec: str) -> str:
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "-"
    return format(v, spec)


def print_table(results: list[SimResult], duration_s: float, cc: str = "newreno") -> None:
    rows: list[tuple[str, str, str]] = [
        ("wall time [s] (best)", ".3f", "wall_s"),
        ("cpu time [s] (best)", ".3f", "cpu_s"),
        ("peak RSS [MB]", ".1f", "peak_rss_mb"),
        ("packets (all links)", "d", "packets"),
        ("packets / wall s", ",.0f", "packets_per_wall_s"),
        ("bytes delivered", "d", "bytes_delivered"),
        ("goodput [Mbit/s]", ".4f", "goodput_mbps"),
        ("simulator events", "d", "events"),
        ("retransmissions", "d", "retx"),
        ("RTO timeouts", "d", "rto"),
    ]

    def value(r: SimResult, key: str) -> Any:
        match key:
            case "goodput_mbps":
                return r.goodput_bps / 1e6
            case "events":
                return r.extra.get("events")
            case "retx":
                return r.extra.get("retransmitted_segments", r.extra.get("retransmissions"))
            case "rto":
                return r.extra.get("timeouts", r.extra.get("rto_losses"))
            case _:
                return getattr(r, key)

    print(f"p2p-bulk, {duration_s:g} s simulated, cc {cc}")
    header = f"{'':24}" + "".join(f"{r.name:>16}" for r in results)
    print(header)
    print("-" * len(header))
    for label, spec, key in rows:
        print(f"{label:24}" + "".join(f"{fmt(value(r, key), spec):>16}" for r in results))


def ratio(a: float, b: float) -> float | None:
    if not (math.isfinite(a) and math.isfinite(b)) or b == 0:
        return None
    return a / b


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--duration", type=float, default=600.0, help="simulated seconds [600]")
    p.add_argument("--repeat", type=int, default=1, help="runs per simulator; best wall time")
    p.add_argument(
        "--scenario",
        default=DEFAULT_SCENARIO,
        help=f"tcplab scenario, relative to the repo root [{DEFAULT_SCENARIO}]",
    )
    p.add_argument("--tcplab", help="tcplab command (default: `tcplab` on PATH)")
    p.add_argument("--only", choices=("tcplab", "ns3"), help="run just one simulator")
    p.add_argument("--rebuild", action="store_true", help="rebuild the ns-3 program")
    p.add_argument("--timeout", type=float, default=3600.0, help="per-run timeout in s [3600]")
    p.add_argument(
        "--cc",
        choices=tuple(CC_NS3),
        default="newreno",
        help="congestion control of both sides: newreno (ns-3 TcpLinuxReno, the scenario's) or "
        "bbr (tcplab's BBR, ns-3's TcpBbr; both paced) [newreno]",
    )
    args = p.parse_args(argv)
    if args.duration <= 0 or args.repeat < 1:
        p.error("--duration must be > 0 and --repeat >= 1")

    try:
        scenario_path = Path(args.scenario)
        if not scenario_path.is_absolute():
            scenario_path = REPO_ROOT / scenario_path
        try:
            scenario_text = scenario_path.read_text()
            scenario = tomllib.loads(scenario_text)
        except (OSError, tomllib.TOMLDecodeError) as e:
            raise BenchError(f"cannot read scenario {scenario_path}: {e}") from e
        seed = int(scenario.get("seed", 1))
        timeout = args.timeout if args.timeout > 0 else None

        results: list[SimResult] = []
        tcplab_res: SimResult | None = None
        ns3_res: SimResult | None = None

        if args.only != "tcplab":
            check_scenario_matches_ns3(scenario, scenario_path)
            ensure_ns3_built(args.rebuild)
        text = scenario_with_duration(scenario_text, format_duration(args.duration))
        if args.cc != "newreno":
            text = scenario_with_cc(text, args.cc)
        tcplab = resolve_tcplab(args.tcplab) if args.only != "ns3" else None
        if tcplab is not None:
            tcplab_res = SimResult("tcplab")
        if args.only != "tcplab":
            ns3_res = SimResult("ns-3")
        # Rounds alternate the two simulators, so a change in the machine's speed during the
        # benchmark (other load, frequency scaling) affects both alike.
        with tempfile.TemporaryDirectory(prefix="tcplab-bench-") as tmp:
            tmp_scenario = Path(tmp) / scenario_path.name
            tmp_scenario.write_text(text)
            for i in range(args.repeat):
                print(f"round {i + 1}/{args.repeat} ...", file=sys.stderr)
                if tcplab is not None:
                    bench_tcplab(tcplab, tmp_scenario, 1, timeout, tcplab_res)
                if ns3_res is not None:
                    bench_ns3(args.duration, seed, 1, timeout, ns3_res, args.cc)
        results += [r for r in (tcplab_res, ns3_res) if r is not None]
    except BenchError as e:
        print(f"bench.py: error: {e}", file=sys.stderr)
        return 1

    print_table(results, args.duration, args.cc)

    def get(r: SimResult | None, attr: str) -> Any:
        if r is None:
            return None
        v = getattr(r, attr)
        return None if isinstance(v, float) and not math.isfinite(v) else v

    diff: float | None = None
    if tcplab_res and ns3_res:
        d = ratio(tcplab_res.goodput_bps - ns3_res.goodput_bps, ns3_res.goodput_bps)
        diff = None if d is None else 100.0 * d
    summary = {
        "duration_s": args.duration,
        "repeat": args.repeat,
        "cc": args.cc,
        "tcplab_wall_s": get(tcplab_res, "wall_s"),
        "ns3_wall_s": get(ns3_res, "wall_s"),
        "speed_ratio": (
            ratio(ns3_res.wall_s, tcplab_res.wall_s) if tcplab_res and ns3_res else None
        ),
        # The same ratio for the simulation alone (each simulator's own timing of its run,
        # without process start-up: Python's interpreter and imports for tcplab).
        "core_speed_ratio": (
            ratio(ns3_res.extra.get("internal_wall_s"), tcplab_res.extra.get("internal_wall_s"))
            if tcplab_res
            and ns3_res
            and ns3_res.extra.get("internal_wall_s")
            and tcplab_res.extra.get("internal_wall_s")
            else None
        ),
        "tcplab_packets_per_wall_s": get(tcplab_res, "packets_per_wall_s"),
        "ns3_packets_per_wall_s": get(ns3_res, "packets_per_wall_s"),
        "tcplab_peak_rss_mb": get(tcplab_res, "peak_rss_mb"),
        "ns3_peak_rss_mb": get(ns3_res, "peak_rss_mb"),
        "tcplab_goodput_bps": get(tcplab_res, "goodput_bps"),
        "ns3_goodput_bps": get(ns3_res, "goodput_bps"),
        "goodput_diff_pct": diff,
        "tcplab_cpu_s": get(tcplab_res, "cpu_s"),
        "ns3_cpu_s": get(ns3_res, "cpu_s"),
        "tcplab_packets": get(tcplab_res, "packets"),
        "ns3_packets": get(ns3_res, "packets"),
    }
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        print("bench.py: interrupted", file=sys.stderr)
        sys.exit(130)
