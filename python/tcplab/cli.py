"""The ``tcplab`` command line.

Exit status: 0 success; 1 environment problem (simulator not built, file not writable);
2 bad input (scenario, ``--set``, arguments); 3 a run violated an invariant; 130 interrupted
(SIGINT), 143 terminated (SIGTERM); an interrupted run writes no ``summary.json``.
Errors are one line on stderr: ``tcplab: error: <message>``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from pathlib import Path
from typing import Any, NoReturn

from tcplab.errors import InvariantError, ScenarioError, show
from tcplab.report import cli as cli_plot
from tcplab.scenario.parse import (
    Scenario,
    apply_overrides,
    builtin_scenarios,
    load_scenario,
    parse_scenario,
    read_scenario,
)
from tcplab.text import table as _table

__all__ = ["main"]

PROG = "tcplab"


class _Parser(argparse.ArgumentParser):
    """argparse with its errors on one line, like every other tcplab error."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{PROG}: error: {message} (see {self.prog} --help)\n")


class _Unbuilt:
    """The parser of a command that is not being run: whatever is added to it is dropped."""

    def __getattr__(self, name: str) -> Callable[..., _Unbuilt]:
        return lambda *args, **kwargs: self


class _OneCommand:
    """Subparsers that build only the parser of the command being run: building every
    command's options costs a few milliseconds of every start."""

    def __init__(self, sub: Any, command: str) -> None:
        self.sub = sub
        self.command = command
        self.built = False

    def add_parser(self, name: str, **kwargs: Any) -> Any:
        if name != self.command:
            return _Unbuilt()
        self.built = True
        return self.sub.add_parser(name, **kwargs)


def _parser(command: str | None = None) -> argparse.ArgumentParser:
    """The ``tcplab`` parser; with ``command``, only that command's subparser is built (the
    whole parser when ``command`` is not a command, so help and errors list them all)."""
    parser = _Parser(
        prog=PROG,
        description="Simulate TCP on hard links (3G, satellite, asymmetric, WLAN, host-limited).",
    )
    parser.add_argument("--version", action=_VersionAction, nargs=0, help="print the version")
    sub: Any = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    if command is not None:
        sub = _OneCommand(sub, command)

    run = sub.add_parser(
        "run",
        help="run a scenario and print per-flow results",
        description="Run a scenario (a TOML file or a built-in name; default: the built-in "
        "p2p-bulk) and print per-flow and per-link results.",
    )
    run.add_argument("scenario", nargs="?", metavar="SCENARIO", help="TOML file or built-in name")
    run.add_argument("--seed", type=int, metavar="N", help="override the scenario's seed")
    run.add_argument("--out", metavar="DIR", help="write summary.json and Parquet tables to DIR")
    run.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    run.add_argument(
        "--pcap",
        action="append",
        default=[],
        metavar="HOP[:fwd|rev|both]",
        help="capture packets on link HOP (index or name) into a pcap file (in --out DIR, or the "
        "current directory); repeatable",
    )
    run.add_argument(
        "--quiet", action="store_true", help="no progress bar and no table (errors only)"
    )
    run.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a scenario key before validation, e.g. duration=20s, flows[0].cc=cubic, "
        "path[0].loss=0.01; repeatable",
    )
    cli_plot.add_run_options(run)
    run.set_defaults(func=_cmd_run)

    emu = sub.add_parser(
        "emu",
        help="run real programs over a scenario's path in real time",
        description="Run CMD (or a shell) in a client network namespace and, with --server, a "
        "server command in a server namespace, joined by the scenario's [[path]] in real time "
        "(needs root, /dev/net/tun and iproute2). The path's first hop faces the server. Both "
        "commands get TCPLAB_SERVER and TCPLAB_CLIENT; tcplab exits with CMD's status.",
    )
    emu.add_argument("scenario", metavar="SCENARIO", help="TOML file or built-in name")
    emu.add_argument("--seed", type=int, metavar="N", help="override the scenario's seed")
    emu.add_argument("--out", metavar="DIR", help="write summary.json and Parquet tables to DIR")
    emu.add_argument(
        "--pcap",
        action="append",
        default=[],
        metavar="HOP[:fwd|rev|both]",
        help="capture the real packets on link HOP (in --out DIR, or the current directory)",
    )
    emu.add_argument(
        "--set", action="append", default=[], metavar="KEY=VALUE", help="as for tcplab run"
    )
    emu.add_argument("--server", metavar="CMD", help="shell command run in the server namespace")
    emu.add_argument(
        "--mtu", type=int, default=1500, help="MTU of both devices (576 to 65535, default 1500)"
    )
    emu.add_argument(
        "--sysctl",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="set a sysctl in both namespaces, e.g. net.ipv4.tcp_congestion_control=cubic "
        "(repeatable; each namespace's net.ipv4.tcp_* go to the summary)",
    )
    emu.add_argument("--shell", action="store_true", help="open a shell in the client namespace")
    emu.add_argument("--quiet", action="store_true", help="no table on stderr at the end")
    emu.add_argument("--json", action="store_true", help="print the summary as JSON on stderr")
    emu.add_argument(
        "--no-realtime",
        action="store_true",
        help="run the emulator as an ordinary thread: no SCHED_FIFO, CPU pinning, idle-state "
        "request or locked memory (docs/emu.md, Timing)",
    )
    emu.add_argument(
        "--pin-cpu",
        action="store_true",
        help="pin the real-time emulator thread to the CPU it starts on (lower p99 under load, "
        "higher maximum on an idle machine; docs/emu.md, Timing)",
    )
    emu.add_argument(
        "--spin-share",
        type=float,
        default=0.5,
        metavar="F",
        help="most of one CPU the thread may spend waiting on the clock instead of sleeping, "
        "per 10 ms (0 to 1, default 0.5; docs/emu.md, Timing)",
    )
    emu.add_argument(
        "--endpoint",
        choices=("server=tcplab", "client=tcplab"),
        help="tcplab's own TCP (the scenario's first [[flows]] entry) terminates the "
        "connections on that side instead of the namespace's Linux stack (docs/emu.md)",
    )
    emu.add_argument(
        "--port",
        type=int,
        default=8000,
        metavar="N",
        help="with --endpoint server=tcplab: the port it listens on (default 8000)",
    )
    emu.add_argument(
        "--serve",
        metavar="DIR",
        help="with --endpoint server=tcplab: answer HTTP GET with files under DIR (without it: "
        "the bulk source)",
    )
    emu.add_argument(
        "--get",
        metavar="URL",
        help="with --endpoint client=tcplab: fetch this http://10.99.0.1[:PORT]/PATH",
    )
    emu.add_argument(
        "--save",
        metavar="FILE",
        help="with --endpoint client=tcplab: write the response body to FILE",
    )
    emu.add_argument(
        "--time-limit",
        type=float,
        default=600.0,
        metavar="S",
        help="with --endpoint client=tcplab: give up after S seconds (default 600)",
    )
    emu.add_argument("cmd", nargs="*", metavar="-- CMD ARGS", help="the client command")
    emu.set_defaults(func=_cmd_emu)

    val = sub.add_parser(
        "validate",
        help="compare a real TCP stack with tcplab's on the same scenario",
        description="tcplab validate linux: real Linux TCP (bulk transfers between two "
        "namespaces over tcplab's emulator) against tcplab's simulator on the same link. "
        "Without --case: the matrix of validation/linux/README.md. Needs root.",
    )
    val.add_argument("target", choices=["linux"], help="the stack to validate against")
    from tcplab.real.validate import add_arguments

    add_arguments(val)
    val.set_defaults(func=_cmd_validate)

    sw = sub.add_parser(
        "sweep",
        help="run a scenario over a grid of values and seeds",
        description="Run a scenario at every combination of the --vary values and for every "
        "seed, on a local process pool; print goodput and loss-recovery counts per grid point "
        "(mean and 95 %% confidence interval over seeds) and optionally write one row per run and "
        "flow to a Parquet or CSV file.",
    )
    sw.add_argument("scenario", nargs="?", metavar="SCENARIO", help="TOML file or built-in name")
    sw.add_argument(
        "--vary",
        action="append",
        default=[],
        metavar="KEY=V1,V2,...",
        help="a scenario key and its values (read like --set values; commas inside [] or {} "
        "are kept), e.g. flows[0].cc=reno,cubic; repeatable: the grid is their product",
    )
    sw.add_argument(
        "--set", action="append", default=[], metavar="KEY=VALUE", help="as for tcplab run"
    )
    sw.add_argument(
        "--seeds",
        type=int,
        default=1,
        metavar="N",
        help="runs per grid point, seeds S..S+N-1 (default 1)",
    )
    sw.add_argument(
        "--seed", type=int, metavar="S", help="first seed (default: the scenario's seed)"
    )
    sw.add_argument("--jobs", type=int, metavar="N", help="worker processes (default: CPUs)")
    sw.add_argument(
        "--out", metavar="FILE", help="write one row per run and flow to FILE (.parquet or .csv)"
    )
    sw.add_argument("--json", action="store_true", help="print the rows as one JSON array")
    _campaign_options(sw)
    sw.set_defaults(func=_cmd_sweep)

    scenarios = sub.add_parser(
        "scenarios",
        help="list the built-in and example scenarios",
        description="List the built-in scenarios and the TOML scenarios in DIR.",
    )
    scenarios.add_argument(
        "dir", nargs="?", metavar="DIR", help="directory of TOML scenarios (default: ./scenarios)"
    )
    scenarios.set_defaults(func=_cmd_scenarios)

    cli_plot.add_parser(sub)

    repro = sub.add_parser(
        "reproduce",
        help="reproduce a source paper's results",
        description="Reproduce a source paper's figures and tables: writes PNG figures, "
        "results.json, report.md and report.html (every paper number beside tcplab's) into "
        "OUT/PAPER; with all, also OUT/index.html.",
    )
    repro.add_argument("paper", metavar="PAPER", help="a paper id, or 'all'")
    repro.add_argument("--quick", action="store_true", help="fewer runs (minutes, not hours)")
    repro.add_argument("--out", default="out/reproduce", metavar="DIR", help="output directory")
    repro.add_argument("--jobs", type=int, metavar="N", help="worker processes (default: CPUs)")
    _campaign_options(repro)
    repro.add_argument(
        "--linux",
        action="store_true",
        help="also run the real Linux stack over tcplab emu (papers that have such a section; "
        "needs root and TUN, else the section says so)",
    )
    repro.add_argument(
        "--linux-cache",
        metavar="DIR",
        help="with --linux: keep every real transfer of the sto-3g and asymmetric-link sections "
        "in DIR (keyed by kernel release and settings); stored ones are read, not rerun",
    )
    repro.set_defaults(func=_cmd_reproduce)

    from tcplab.campaign.cli import add_results_command

    add_results_command(sub)

    mod = sub.add_parser(
        "model",
        help="evaluate an analytic model",
        description="Evaluate an analytic model with KEY=VALUE parameters (SI units, or values "
        "with units such as 10Mbps, 300ms, 64KB); without NAME, list the models.",
    )
    mod.add_argument("name", nargs="?", metavar="NAME")
    mod.add_argument("params", nargs="*", metavar="KEY=VALUE")
    mod.set_defaults(func=_cmd_model)

    from tcplab.analyze.cli import add_parser as add_analyze
    from tcplab.analyze.cli import add_trace_parser

    add_analyze(sub)
    add_trace_parser(sub)
    if isinstance(sub, _OneCommand) and not sub.built:
        return _parser()
    return parser


def _campaign_options(parser: argparse.ArgumentParser) -> None:
    """``--store`` and ``--cluster`` (docs/campaigns.md)."""
    parser.add_argument(
        "--store",
        metavar="DIR",
        help="keep every run in the result store DIR; runs already there are read, not rerun "
        "(an interrupted campaign resumes)",
    )
    parser.add_argument(
        "--cluster",
        metavar="ADDRESS",
        help="run on the workers of a dask.distributed scheduler (tcp://host:8786), or "
        "local[:N] for N local workers; needs pip install 'tcplab[cluster]'",
    )


def _version() -> str:
    from tcplab.version import version

    return version()


class _VersionAction(argparse.Action):
    """``--version``, looked up only when asked (importlib.metadata is slow to import)."""

    def __call__(self, parser: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> None:
        print(f"{parser.prog} {_version()}")
        parser.exit()


# -- tcplab run ---------------------------------------------------------------------------------


def _pcap_entry(spec: str) -> dict[str, Any]:
    """``--pcap HOP[:DIR]`` → a ``[[pcap]]`` table (validated with the scenario)."""
    hop_text, _, direction = spec.partition(":")
    hop: int | str = int(hop_text) if hop_text.isdigit() else hop_text
    return {"hop": hop, "dir": direction or "both"}


def _read_with_overrides(
    scenario: str | None, sets: list[str], pcaps: Sequence[str] = ()
) -> tuple[dict[str, Any], str]:
    """The scenario's table with the ``--pcap`` captures appended to its ``[[pcap]]`` and then
    ``--set`` applied (so ``--set pcap[N].KEY=...`` reaches a ``--pcap`` capture), and its
    source (for error messages)."""
    data, source = read_scenario(scenario)
    if pcaps:
        captures = data.setdefault("pcap", [])
        if isinstance(captures, list):
            captures.extend(_pcap_entry(spec) for spec in pcaps)
    try:
        return apply_overrides(data, sets), source
    except ScenarioError as err:
        err.source = source
        raise


def _scenario_for(args: argparse.Namespace) -> Scenario:
    data, source = _read_with_overrides(args.scenario, args.set, args.pcap)
    return parse_scenario(data, source)


def _cmd_run(args: argparse.Namespace) -> int:
    from tcplab.runner import run

    if args.out is not None and not args.out.strip():
        raise ScenarioError('--out: must name a directory (got "")')
    scenario = _scenario_for(args)
    progress = not args.quiet and sys.stderr.isatty()
    # --plot without --out streams the tables to a scratch directory, not memory.
    plot_only = bool(args.plot) and args.out is None
    with tempfile.TemporaryDirectory(prefix="tcplab-") if plot_only else nullcontext() as scratch:
        try:
            # Without --out (or --plot) only the summary is printed: no time series or event log.
            tables = args.out is not None or bool(args.plot)
            result = run(
                scenario,
                seed=args.seed,
                out=args.out,
                progress=progress,
                tables=tables,
                trace=args.plot,
                command=args.argv,
                scratch=scratch,
            )
        except InvariantError as err:
            if err.result is not None and args.json:
                print(json.dumps(err.result.report()))
            raise
        figures = cli_plot.after_run(args, result)
    if args.json:
        print(json.dumps(result.report()))
    elif not args.quiet:
        print(_render(result.report()))
        if args.out:
            print(f"\nwrote {args.out}/summary.json, *.parquet and report.html")
        if figures:
            print(f"wrote {len(figures)} figures: {', '.join(str(p) for p in figures)}")
    return 0


def _cmd_emu(args: argparse.Namespace) -> int:
    from tcplab.real import emu

    command = list(args.cmd)
    role = args.endpoint.split("=")[0] if args.endpoint else None
    try:
        endpoint = (
            emu.endpoint_options(
                role, port=args.port, serve=args.serve, get=args.get, save=args.save
            )
            if role
            else None
        )
    except ValueError as err:
        return _fail(f"emu: {err}", 2)
    if role is None and (args.serve or args.get or args.save):
        return _fail("emu: --serve, --get and --save need --endpoint", 2)
    if role == "client":
        if command or args.shell:
            return _fail("emu: with --endpoint client=tcplab tcplab is the client (no -- CMD)", 2)
    elif bool(command) == args.shell:
        return _fail("emu: give either --shell or -- CMD ARGS", 2)
    if role == "server" and args.server:
        return _fail("emu: with --endpoint server=tcplab tcplab is the server (no --server)", 2)
    if not 0.0 <= args.spin_share <= 1.0:
        return _fail(f"emu: --spin-share must be between 0 and 1 (got {args.spin_share})", 2)
    if not emu.MTU_MIN <= args.mtu <= emu.MTU_MAX:
        return _fail(
            f"emu: --mtu: must be between {emu.MTU_MIN} and {emu.MTU_MAX} bytes (got {args.mtu})", 2
        )
    data, source = _read_with_overrides(args.scenario, args.set, args.pcap)
    # The real programs are the flows: a path-only scenario is enough.
    data.setdefault("flows", [{}])
    data.setdefault("duration", "1s")
    captures = data.get("pcap")
    if isinstance(captures, list):
        for capture in captures:
            # Real packets carry real bytes: keep them unless the capture says otherwise.
            if isinstance(capture, dict) and "payload" not in capture:
                capture["payload"] = "all"
    # Validated first, so that an unknown kind is called unknown, not "cannot run in real time".
    scenario = parse_scenario(data, source)
    emu.check_path(data, source)
    config = scenario.to_config(seed=args.seed, out_dir=args.out)
    sysctls: dict[str, str] = {}
    for item in args.sysctl:
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or not value.strip():
            return _fail(f"emu: --sysctl {item!r}: expected KEY=VALUE", 2)
        sysctls[key.strip()] = value.strip()
    reason = emu.available()
    if reason and os.geteuid() != 0:
        return _sudo_again(reason, args.argv)
    if reason:
        return _fail(reason, 1)
    # Test hook: make the emulator panic after N packets (tests/test_emu.py).
    panic_after = os.environ.get("TCPLAB_EMU_TEST_PANIC_AFTER")
    if args.out:
        # one emulation per output directory (only once it is sure to run)
        emu.prepare_out(Path(args.out))
    try:
        status, summary = emu.run_command(
            config,
            command,
            server=args.server,
            shell=args.shell,
            mtu=args.mtu,
            sysctls=sysctls,
            log=sys.stderr,
            panic_after_packets=int(panic_after) if panic_after else None,
            realtime=not args.no_realtime,
            pin_cpu=args.pin_cpu,
            spin_share=args.spin_share,
            endpoint=endpoint,
            time_limit_s=args.time_limit,
        )
    except emu.EmuError as err:
        return _fail(str(err), 1)
    except emu.Terminated as err:
        return _fail(
            f"terminated ({err}); the namespaces, devices and processes were removed",
            128 + err.signum,
        )
    if args.out:
        emu.write_outputs(summary, Path(args.out))
    if args.json:
        print(json.dumps(summary), file=sys.stderr)
    elif not args.quiet:
        print(_render_emu(summary), file=sys.stderr)
    why = emu.endpoint_failure(summary)
    if why:
        print(f"tcplab emu: the tcplab client's transfer failed: {why}", file=sys.stderr)
    return status


def _sudo_again(reason: str, argv_of_this_run: Sequence[str]) -> int:
    """Not root: run the same command again through sudo, with this Python (sudo's own PATH
    would not find a tcplab installed in a virtual environment), saying so first."""
    import shlex
    import shutil

    sudo = shutil.which("sudo")
    if sudo is None:
        return _fail(f"{reason}; run it as root", 1)
    argv = [sys.executable, "-m", "tcplab", *argv_of_this_run]
    print(f"tcplab: {reason}; running it again as root: sudo {shlex.join(argv)}", file=sys.stderr)
    sys.stderr.flush()
    os.execv(sudo, [sudo, *argv])


def _cmd_validate(args: argparse.Namespace) -> int:
    from tcplab.real.validate.netlab import TransferError
    from tcplab.real.validate.run import validate

    try:
        return validate(args)
    except TransferError as err:
        return _fail(f"validate linux: {err}", 1)


def _render_emu(s: dict[str, Any]) -> str:
    """The emulator's summary as tables (links, connections, lateness)."""
    links = _table(
        ["link", "dir", "tx packets", "tx bytes", "queue drops", "loss drops", "acks filtered"],
        [
            [
                str(r["name"]),
                str(r["dir"]),
                str(r.get("tx_packets", "")),
                str(r.get("tx_bytes", "")),
                str(r.get("drops_queue", "")),
                str(r.get("drops_loss", "")),
                str(r.get("acks_filtered", "")),
            ]
            for r in s["links"]
        ],
        "llrrrrr",
    )
    conns = _table(
        [
            "conn",
            "dir",
            "server",
            "client",
            "data bytes",
            "retransmitted",
            "spurious",
            "path retransmitted",
            "path spurious",
        ],
        [
            [
                str(c["conn"]),
                str(c["dir"]),
                c["server"],
                c["client"],
                str(c["data_bytes"]),
                str(c["retransmitted_segments"]),
                str(c["spurious_retransmissions"]),
                str(c.get("path_retransmitted_segments", 0)),
                str(c.get("path_spurious_retransmissions", 0)),
            ]
            for c in s["connections"]
            if c["data_segments"] > 0 or c.get("path_retransmitted_segments")
        ],
        "rlllrrrrr",
    )
    late = s["emulator"]["lateness_us"]
    tail = (
        f"release lateness (µs): mean {late['mean']:.1f}, p50 {late['p50']:.0f}, "
        f"p99 {late['p99']:.0f}, p99.9 {late['p999']:.0f}, max {late['max']:.0f} over "
        f"{late['packets']} packets; {_sched(s['emulator'])}"
    )
    stacks = ", ".join(
        f"{side} {ns['sysctls'].get('net.ipv4.tcp_congestion_control', '?')}"
        for side, ns in (s.get("namespaces") or {}).items()
    )
    if stacks:
        tail += f"\nTCP congestion control: {stacks} (every net.ipv4.tcp_* in --json/summary.json)"
    ep = s.get("endpoint")
    if ep:
        f = ep["flows"][0]
        tail += (
            f"\ntcplab endpoint ({ep['role']}, {ep['cc']}): {f['connections']} connection(s), "
            f"{f['bytes_delivered']} bytes delivered at {f['goodput_bps'] / 1e6:.2f} Mbit/s, "
            f"{f['retransmitted_segments']} retransmitted, {f['timeouts']} timeouts "
            f"({f['spurious_timeouts']} spurious, {f['spurious_detected']} detected)"
        )
        # why a connection stopped short (it gave up), as `tcplab run` notes it
        tail += "".join(f"\nnote: {n}" for n in ep.get("notes") or [])
    # a hop's own connection that gave up (a PEP's toward the receiver)
    tail += "".join(f"\nnote: {n}" for n in s.get("notes") or [])
    return f"{links}\n\n{conns}\n\n{tail}"


def _sched(m: dict[str, Any]) -> str:
    """The emulator thread's scheduling, as the summary's ``emulator.scheduling`` has it."""
    sched = m.get("scheduling") or {}
    policy = sched.get("policy", "SCHED_FIFO" if m.get("realtime") else "SCHED_OTHER")
    if sched.get("cpu") is not None:
        policy += f" on CPU {sched['cpu']}"
    if sched.get("refused"):
        policy += f" ({sched['refused']})"
    return policy


def _render(report: dict[str, Any]) -> str:
    """The human-readable form of a run report."""
    head = (
        f"{report['scenario']}  seed {report['seed']}  "
        f"simulated {report['sim_time_s']:.1f} s in {report['wall_s']:.2f} s wall  "
        f"({report['events']:,} events, {report['packets']:,} packets)"
    )
    flows = _table(
        [
            "flow",
            "goodput Mbit/s",
            "delivered MB",
            "segments",
            "retransmits",
            "timeouts (spurious)",
        ],
        [
            [
                f["name"],
                f"{f['goodput_bps'] / 1e6:.3f}",
                f"{f['bytes_delivered'] / 1e6:.2f}",
                f"{f['segments_sent']:,}",
                f"{f['retransmitted_segments']:,}",
                f"{f['timeouts']:,} ({f['spurious_timeouts']:,})",
            ]
            for f in report["flows"]
        ],
        "lrrrrr",
    )
    links = _table(
        ["link", "dir", "tx packets", "tx MB", "queue drops", "loss drops"],
        [
            [
                lk["name"],
                lk["dir"],
                # an rlc or wlan hop reports no tx_bytes (its row has other fields)
                f"{lk['tx_packets']:,}",
                "-" if lk.get("tx_bytes") is None else f"{lk['tx_bytes'] / 1e6:.2f}",
                f"{lk.get('drops_queue') or 0:,}",
                f"{lk.get('drops_loss') or 0:,}",
            ]
            for lk in report["links"]
        ],
        "llrrrr",
    )
    text = f"{head}\n\n{flows}\n\n{links}"
    if report.get("pings"):
        pings = _table(
            ["ping", "bytes", "sent", "answered", "RTT mean ms", "min ms", "max ms"],
            [
                [
                    p["name"],
                    f"{p['packet_bytes']}",
                    f"{p['sent']:,}",
                    f"{p['received']:,}",
                    *(
                        "-" if p[k] is None else f"{p[k]:.2f}"
                        for k in ("rtt_mean_ms", "rtt_min_ms", "rtt_max_ms")
                    ),
                ]
                for p in report["pings"]
            ],
            "lrrrrrr",
        )
        text += f"\n\n{pings}"
    if report.get("notes"):
        # Why bytes were not delivered (a transfer cut by the end of the run, a connection
        # that gave up retransmitting).
        text += "\n\n" + "\n".join(f"note: {n}" for n in report["notes"])
    return text


# -- tcplab scenarios ---------------------------------------------------------------------------


def _cmd_sweep(args: argparse.Namespace) -> int:
    from tcplab.campaign.summary import sweep_summary, write_rows
    from tcplab.campaign.sweep import parse_vary, sweep

    if args.seeds < 1:
        raise ScenarioError(f"--seeds: must be ≥ 1 (got {args.seeds})")
    if args.jobs is not None and args.jobs < 1:
        raise ScenarioError(f"--jobs: must be ≥ 1 (got {args.jobs})")
    out = Path(args.out) if args.out else None
    if out is not None and out.suffix not in (".parquet", ".csv"):
        raise ScenarioError(f"--out: must end in .parquet or .csv (got {args.out})")
    vary = parse_vary(args.vary)
    runs = args.seeds * math.prod(len(v) for _, v in vary)
    if runs > MAX_SWEEP_RUNS:
        raise ScenarioError(
            f"--seeds/--vary: the grid has {runs} runs; at most {MAX_SWEEP_RUNS:,} per sweep"
        )
    if args.out is not None and not args.out.strip():
        raise ScenarioError('--out: must name a file (got "")')
    if out is not None:
        _check_writable(out)
    data, source = _read_with_overrides(args.scenario, args.set)
    first = args.seed
    if first is None:
        first = int(parse_scenario(data, source).config["seed"])
    if not 0 <= first <= first + args.seeds - 1 <= 2**64 - 1:
        raise ScenarioError(f"--seed: seeds {first}..{first + args.seeds - 1} leave 0 … 2^64-1")
    seeds = list(range(first, first + args.seeds))
    keys = [k for k, _ in vary]
    rows: Any
    try:
        if args.store or args.cluster:
            from tcplab.campaign.sweep import store_sweep

            rows = store_sweep(args, data, vary, seeds, source)
        else:
            rows = sweep(data, vary, seeds, source=source, jobs=args.jobs)
    except ScenarioError as err:
        err.source = err.source or source
        raise
    except ValueError as err:  # the core's own validation (validate.rs), from a worker
        raise ScenarioError(str(err), source=source) from None
    if out is not None:
        write_rows(rows, out)
    if args.json:
        print(json.dumps(rows if isinstance(rows, list) else rows.to_pylist()))
        return 0
    count = len(rows) if isinstance(rows, list) else rows.num_rows
    if not isinstance(rows, list):  # an Arrow table from the store: read in slices
        rows = (r for batch in rows.to_batches(max_chunksize=8192) for r in batch.to_pylist())
    print(sweep_summary(rows, keys))
    if out is not None:
        print(f"\nwrote {count} rows to {out}")
    return 0


#: The most runs one ``tcplab sweep`` takes (its grid and rows are held in memory).
MAX_SWEEP_RUNS = 1_000_000


def _check_writable(out: Path) -> None:
    """Fail before a sweep, not after it, when its output file cannot be written."""
    import os

    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        probe = out.parent / f".{out.name}.tcplab-probe"
        probe.write_bytes(b"")
        probe.unlink()
        if out.is_dir() or (out.exists() and not os.access(out, os.W_OK)):
            raise PermissionError(13, "not a writable file")
    except OSError as err:
        raise OSError(f"{out}: cannot write: {err.strerror or err}") from None


def _cmd_scenarios(args: argparse.Namespace) -> int:
    directory = Path(args.dir or "scenarios")
    if args.dir and not directory.is_dir():
        raise ScenarioError(f"{show(args.dir)}: not a directory")
    entries = [(name, "[built-in] ") for name in builtin_scenarios()]
    if directory.is_dir():
        entries += [(str(p), "") for p in sorted(directory.glob("*.toml"))]
    rows = []
    for label, tag in entries:
        try:
            sc = load_scenario(label)
        except ScenarioError as err:
            rows.append([label, "-", "-", "-", f"invalid: {err}"])
            continue
        counts = [str(len(sc.hop_names)), str(len(sc.flow_names))]
        rows.append([label, *counts, f"{sc.duration_ns / 1e9:g} s", tag + sc.description])
    print(_table(["scenario", "hops", "flows", "duration", "description"], rows, "lrrrl"))
    return 0


# -- tcplab reproduce / model ------------------------------------------------------------------


def _cmd_reproduce(args: argparse.Namespace) -> int:
    from tcplab.papers import LINUX, PAPERS, load
    from tcplab.report.checks import Report

    if args.paper == "all":
        papers = list(PAPERS)
    elif args.paper in PAPERS:
        papers = [args.paper]
    else:
        choices = ", ".join([*PAPERS, "all"])
        raise ScenarioError(f"unknown paper {show(args.paper)} (choose from {choices})")
    if args.jobs is not None and args.jobs < 1:
        raise ScenarioError(f"--jobs: must be >= 1 (got {args.jobs})")
    if args.linux_cache is not None and not args.linux:
        raise ScenarioError("--linux-cache: needs --linux")
    from tcplab.real import cache as linux_cache

    linux_cache.use(args.linux_cache)
    status = 0
    from tcplab.campaign.run import using_options

    reports = []
    index = Path(args.out) / "index.html"
    if args.paper == "all" and index.is_file():
        index.unlink()  # written again once every paper is done
    with using_options(args):
        for paper in papers:
            _, title = PAPERS[paper]
            report = Report(paper, title, Path(args.out) / paper, quick=args.quick)
            report.clear_outputs()
            with cli_plot.reproducing(report, args.jobs):
                if args.linux and paper in LINUX:
                    load(paper, linux=True).reproduce(report, jobs=args.jobs)
                else:
                    module = load(paper)
                    if args.linux:
                        report.section(
                            "Real Linux TCP (--linux)",
                            "This reproduction has no real-stack section yet.",
                        )
                    module.reproduce(report, jobs=args.jobs)
            path = report.write()
            reports.append(report)
            print(f"{paper}: {report.headline()}; report: {path}")
            for c in report.comparisons:
                if c.verdict in ("misses", "inconclusive") and c.kind != "context":
                    print(
                        f"  {c.verdict} ({c.kind}): {c.item}: paper {c.paper}, tcplab {c.tcplab}"
                        f" ({c.rule})"
                    )
    if args.paper == "all":
        print(f"index: {cli_plot.write_index(Path(args.out), reports)}")
    return status


#: What a model parameter with units is, by name (the rest take plain numbers only).
_MODEL_TIMES = frozenset({"rtt", "rto", "t0", "t_l", "slot", "sifs", "t_ptr", "t_csum"})
_MODEL_RATES = frozenset({"data_rate", "basic_rate", "b_ge", "b_fsb", "b_pci", "f_toe", "b_int"})
_MODEL_SIZES = frozenset({"mss", "mtu", "size", "ip_bytes"})


def _model_value(text: str, key: str) -> float:
    from tcplab.scenario.units import parse_rate, parse_size, parse_time

    try:
        value = float(text)
    except ValueError:
        pass
    else:
        if not math.isfinite(value):
            raise ScenarioError(f"{key}: must be a finite number (got {show(text)})")
        return value
    if key in _MODEL_TIMES:
        # times come back in ns: models take seconds
        return parse_time(text, key) / 1e9
    if key in _MODEL_RATES or key.endswith("_bps"):
        return float(parse_rate(text, key))
    if key in _MODEL_SIZES:
        return float(parse_size(text, key))
    raise ScenarioError(f"{key}: must be a plain number (got {show(text)})")


def _cmd_model(args: argparse.Namespace) -> int:
    from tcplab import models

    if args.name is None:
        for name in models.names():
            doc = (models.get(name).__doc__ or "").strip().splitlines()
            print(f"{models.signature(name)}\n    {doc[0] if doc else ''}")
        return 0
    if args.name not in models.names():
        raise ScenarioError(
            f"unknown model {show(args.name)} (choose from {', '.join(models.names())})"
        )
    params: dict[str, float] = {}
    for item in args.params:
        key, sep, text = item.partition("=")
        if not sep or not key:
            raise ScenarioError(f"model parameter: must be KEY=VALUE (got {show(item)})")
        if key in params:
            raise ScenarioError(f"model parameter {key}: given twice")
        params[key] = _model_value(text, key)
    func = models.get(args.name)
    try:
        result = func(**params)
    except TypeError as err:
        raise ScenarioError(
            f"{args.name}: {err} (signature: {models.signature(args.name)})"
        ) from None
    except (ValueError, ArithmeticError) as err:  # a model's own domain check, 1/0, overflow
        raise ScenarioError(f"{args.name}: {err or type(err).__name__}") from None
    try:
        text = json.dumps(
            {"model": args.name, "params": params, "result": result}, default=str, allow_nan=False
        )
    except ValueError:
        raise ScenarioError(
            f"{args.name}: the result is not finite (NaN or infinity) for these parameters"
        ) from None
    print(text)
    return 0


# -- entry point --------------------------------------------------------------------------------


def _fail(message: str, status: int) -> int:
    one_line = " ".join(str(message).split())
    print(f"{PROG}: error: {one_line}", file=sys.stderr)
    return status


def _stdout_closed() -> int:
    """The reader of stdout went away (``tcplab model | head``): that is normal and needs no
    message. Later writes (the interpreter flushes stdout on exit) go to /dev/null; the status
    is a SIGPIPE death's, 128 + 13."""
    import os

    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return 141


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the run is, to stop as Ctrl-C does (exit status 143)."""


def _on_sigterm(signum: int, frame: object) -> None:
    raise Terminated()


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    import signal

    argv = list(sys.argv[1:] if argv is None else argv)
    original = list(argv)
    # tcplab emu ... -- CMD ARGS: CMD's own options are not tcplab's (argparse mishandles
    # "--" after a subcommand).
    cmd: list[str] | None = None
    if argv[:1] == ["emu"] and "--" in argv:
        cut = argv.index("--")
        argv, cmd = argv[:cut], argv[cut + 1 :]
    args = _parser(argv[0] if argv and not argv[0].startswith("-") else None).parse_args(argv)
    args.argv = original  # the command line as given (tcplab emu runs it again through sudo)
    if cmd is not None:
        args.cmd = cmd
    func: Callable[[argparse.Namespace], int] = args.func
    try:
        previous = signal.signal(signal.SIGTERM, _on_sigterm)
    except ValueError:  # not the main thread: leave SIGTERM alone
        previous = None
    try:
        return func(args)
    except ScenarioError as err:
        return _fail(err.located(), 2)
    except InvariantError as err:
        return _fail(str(err), 3)
    except ValueError as err:  # the simulator rejected the configuration
        return _fail(str(err), 2)
    except BrokenPipeError:
        return _stdout_closed()
    except (ImportError, OSError) as err:
        return _fail(str(err), 1)
    except Terminated:
        return _fail("terminated (SIGTERM)", 143)
    except KeyboardInterrupt:
        return _fail("interrupted", 130)
    except RecursionError:
        return _fail("input nested too deeply", 2)
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def command() -> NoReturn:
    """The ``tcplab`` program (the console script, ``python -m tcplab``): :func:`main`, then exit
    without the interpreter's teardown."""
    _exit(main())


def _exit(status: int) -> NoReturn:
    """Exit with ``status`` as the interpreter's own exit would, less its teardown.

    A normal exit waits for the program's threads, runs the ``atexit`` handlers, flushes stdout
    and stderr, then frees every module and object (a full garbage collection of everything the
    imports built): about a twentieth of a short ``tcplab run``'s CPU time, for nothing the
    command's outputs need; every file tcplab writes is closed by then. Here the first three
    steps are taken in that order and the process ends; while another thread still runs, or a
    flush fails (stdout closed), the interpreter exits the usual way, so its messages and its
    status are as before.
    """
    import atexit
    import threading

    if any(
        t.is_alive() and not t.daemon
        for t in threading.enumerate()
        if t is not threading.main_thread()
    ):
        sys.exit(status)
    atexit._run_exitfuncs()  # each handler once: they are unregistered as they run
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except (OSError, ValueError):
        sys.exit(status)
    os._exit(status)


if __name__ == "__main__":
    command()
