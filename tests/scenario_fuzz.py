"""A seeded scenario fuzzer: every bundled scenario's keys set to extreme and malformed values.

Each case takes one bundled scenario (``scenarios/**/*.toml`` and the built-in ones), changes one
to three of its keys (anywhere in the table: a leaf, a sub-table, a list element) to a value
from :data:`VALUES` (extreme numbers, overflowing times, malformed units, wrong types, deep
nesting, control characters), or deletes a key or adds an unknown one, or corrupts the TOML text
itself; then validates it in-process. A rejection must be a :class:`ScenarioError` whose
``located()`` text is one line starting with the scenario file, and (for table mutations) names
a field (``<field>: <rule>``). An accepted case runs in the simulator (in-process) with its
simulated time capped at :data:`SIM_CAP_NS` and a wall-clock bound per case (the progress
callback stops it); it must finish without an exception or an invariant violation. Any other
exception (a traceback), a panic, or a case still running past the bound is a failure.

``tests/test_scenario_fuzz.py`` runs 2,000 cases in CI; run more from the shell:

    python tests/scenario_fuzz.py --cases 20000 --seed 1

Every accepted case's summary is also checked for non-finite numbers (NaN, infinities).
"""

from __future__ import annotations

import argparse
import copy
import faulthandler
import json
import math
import random
import re
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
#: Simulated time of an accepted case (the scenario's own if shorter).
SIM_CAP_NS = 500_000_000
#: Wall-clock bound of one accepted case, s (checked by the progress callback).
WALL_BOUND_S = 3.0
#: A case still inside one simulator event after this long is a hang: the process dumps the
#: stacks and exits (a hang cannot be interrupted in-process).
HANG_S = 60.0

_U64 = 2**64 - 1
#: Print the table of a case the core refused (set by ``--dump``).
DUMP = False
#: Replacement values: extremes, overflowing times and sizes, malformed units, wrong types.
VALUES: list[Any] = [
    0,
    -1,
    1,
    2**31,
    2**32,
    2**63 - 1,
    _U64,
    -(2**63),
    10**30,
    0.0,
    -0.0,
    5e-324,
    1e308,
    -1e308,
    0.5,
    -1.5,
    math.inf,
    -math.inf,
    math.nan,
    True,
    False,
    "",
    " ",
    "0",
    "0ns",
    "1ns",
    f"{_U64}ns",
    f"{2**64}ns",
    "1000000h",
    "1000001h",
    "5000000h",
    "1e-9s",
    "0.5ns",
    "1e400s",
    "1e99999999999s",
    "1e-9999999s",
    "1e99999999999Mbps",
    "1e99999999999B",
    "\u0661\u0660ms",
    "\uff11\uff10ms",
    "-5ms",
    "10Mbps",
    "1bps",
    "0bps",
    "1Tbps",
    "99999999999Tbps",
    "64KB",
    "0B",
    "1B",
    "1GiB",
    "2GiB",
    f"{_U64}B",
    "64kb",
    "10 ms",
    "abc",
    "inf",
    "nan",
    "unlimited",
    "all",
    "both",
    "reno",
    "\n",
    "a\x00b",
    "\ufeff10ms",
    "é",
    "x" * 5000,
    [],
    [0],
    [-1],
    [_U64],
    ["1s", "2s"],
    [[0, "1s"]],
    [["1s", f"{_U64}ns"]],
    [[1, 100, 1e308], [100, 200, 1e308]],
    {},
    {"kind": "const", "value": "1s"},
    {"kind": "const", "value": 0},
    {"kind": "exponential", "mean": "1000000h"},
    {"kind": "pareto", "scale": "1ns", "shape": 5e-324},
    {"kind": "lognormal", "mu": 1e308, "sigma": 1e308},
    {"kind": "uniform", "lo": 0, "hi": f"{_U64}B"},
    {"kind": "bogus"},
    {"p": 1.0, "extra": "1000000h"},
    {"initial": "1ms", "min": 0, "max": "1000000h", "max_backoff": 0},
    {"profile": "linux"},
    {"kind": "bernoulli", "p": 1.0},
    {"kind": "gilbert_elliott", "p_gb": 1.0, "p_bg": 0.0},
]


def _deep(depth: int) -> Any:
    value: Any = 0
    for _ in range(depth):
        value = [value]
    return value


_DEEP = _deep(1000)
VALUES.append(_DEEP)


def scenario_files() -> list[Path]:
    """Every bundled scenario: the repository's ``scenarios/`` and the built-in ones."""
    files = sorted((REPO / "scenarios").rglob("*.toml"))
    return files + sorted((REPO / "python" / "tcplab" / "data").glob("*.toml"))


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every key path in a TOML table (tables, list elements and leaves), 12 levels deep."""
    out: list[tuple[Any, ...]] = []
    if len(prefix) >= 12:
        return out
    if isinstance(node, dict):
        for k, v in node.items():
            out.append((*prefix, k))
            out += _paths(v, (*prefix, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out.append((*prefix, i))
            out += _paths(v, (*prefix, i))
    return out


_NUMBER = re.compile(r"^\s*(\d+(?:\.\d*)?)\s*(\S*)\s*$")
_FACTORS = (0, 0.001, 0.5, 2, 10, 1000, 10**6, 10**9, 10**12)


def _scaled(value: Any, rng: random.Random) -> Any:
    """``value`` made extreme but of its own kind: a quantity or number times a factor
    (``"50ms"`` → ``"50000ms"``), a boolean flipped; else a value from :data:`VALUES`."""
    k = rng.choice(_FACTORS)
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return rng.choice([int(value * k), value + 1, value - 1])
    if isinstance(value, float):
        return value * k
    if isinstance(value, str) and (m := _NUMBER.match(value)):
        number = float(m.group(1)) * k
        text = f"{int(number)}" if number == int(number) else f"{number:g}"
        return f"{text}{m.group(2)}"
    return rng.choice(VALUES)


def _is_container(table: Any, path: tuple[Any, ...]) -> bool:
    node = table
    for step in path:
        node = node[step]
    return isinstance(node, dict | list)


def _set(table: Any, path: tuple[Any, ...], value: Any, rng: random.Random) -> None:
    node = table
    for step in path[:-1]:
        node = node[step]
    last = path[-1]
    if rng.random() < 0.5:
        value = _scaled(node[last], rng)
    action = rng.random()
    if action < 0.08 and isinstance(node, dict):
        del node[last]
    elif action < 0.12 and isinstance(node, dict):
        node[f"{last}_bogus"] = value
    else:
        node[last] = value if value is _DEEP else _copy(value)


def _copy(value: Any) -> Any:
    """A copy of ``value``; a value holding an earlier case's 1,000-deep list is too deep for
    ``copy.deepcopy`` (a RecursionError in the fuzzer itself, not in tcplab): used as is."""
    try:
        return copy.deepcopy(value)
    except RecursionError:
        return value


def _corrupt_text(text: str, rng: random.Random) -> str:
    """A malformed TOML text: cut, a stray byte, or a duplicated line."""
    lines = text.splitlines(keepends=True)
    choice = rng.randrange(4)
    if choice == 0:
        return text[: rng.randrange(len(text) + 1)]
    if choice == 1:
        at = rng.randrange(len(text) + 1)
        return text[:at] + rng.choice(["[", "]", "=", '"', "\x00", "{", "\\"]) + text[at:]
    if choice == 2 and lines:
        k = rng.randrange(len(lines))
        return "".join([*lines[: k + 1], lines[k], *lines[k + 1 :]])
    return "\ufeff" + text.replace("=", "= " + "[" * 1000, 1)


@dataclass
class Outcome:
    cases: int = 0
    rejected: int = 0
    ran: int = 0
    stopped_at_bound: int = 0
    failures: list[str] = field(default_factory=list)
    rules: Counter[str] = field(default_factory=Counter)
    wall_s: float = 0.0

    def summary(self) -> dict[str, Any]:
        return {
            "cases": self.cases,
            "rejected": self.rejected,
            "ran": self.ran,
            "stopped_at_wall_bound": self.stopped_at_bound,
            "failures": len(self.failures),
            "wall_s": round(self.wall_s, 1),
        }


def non_finite(node: Any, path: str = "") -> list[str]:
    """Where a run's summary holds a NaN or an infinity (as a number, or as the null the core
    writes for one in a field that is otherwise always a number)."""
    out: list[str] = []
    if isinstance(node, float) and not math.isfinite(node):
        out.append(f"{path}={node}")
    elif isinstance(node, dict):
        for k, v in node.items():
            out += non_finite(v, f"{path}.{k}" if path else str(k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += non_finite(v, f"{path}[{i}]")
    if isinstance(node, dict) and path.split("[")[0] in ("flows", "links", "cross"):
        out += [f"{path}.{k}=null" for k in _NUMERIC_ROW_KEYS if k in node and node[k] is None]
    return out


#: Row fields of the summary that are always numbers (a null there is a NaN or an infinity).
_NUMERIC_ROW_KEYS = ("goodput_bps", "duration_s", "bytes_delivered", "tx_bytes", "tx_packets")


class _WallBound(Exception):
    pass


_FIELD = re.compile(r"^[A-Za-z_][\w-]*(\[\d+\])*(\.[A-Za-z_][\w-]*(\[\d+\])*)*: \S")


def run_cases(cases: int, seed: int, workdir: Path) -> Outcome:
    """Run ``cases`` fuzz cases from ``seed`` (deterministic); returns what happened."""
    from tcplab import _core
    from tcplab.errors import ScenarioError
    from tcplab.scenario.parse import apply_overrides, parse_scenario, read_scenario

    rng = random.Random(seed)
    files = scenario_files()
    tables = {f: read_scenario(f)[0] for f in files}
    texts = {f: f.read_text(encoding="utf-8") for f in files}
    outcome = Outcome()
    start = time.perf_counter()
    try:
        for case in range(cases):
            # re-armed per case: one case stuck for HANG_S dumps the stacks and exits
            faulthandler.dump_traceback_later(HANG_S, exit=True)
            file = rng.choice(files)
            source = str(file)
            label = f"case {case} ({file.name})"
            text_case = rng.random() < 0.05
            try:
                if text_case:
                    bad = workdir / f"{file.stem}.toml"
                    bad.write_text(_corrupt_text(texts[file], rng), encoding="utf-8")
                    source = str(bad)
                    data, _ = read_scenario(bad)
                    sc = parse_scenario(data, source)
                else:
                    data = copy.deepcopy(tables[file])
                    changes = []
                    for _ in range(rng.choice([1, 1, 1, 1, 1, 1, 1, 2, 2, 3])):
                        all_paths = _paths(data)
                        leaves = [p for p in all_paths if not _is_container(data, p)]
                        if not all_paths:
                            break
                        # mostly leaves (values), sometimes whole tables and lists
                        pool = leaves if leaves and rng.random() < 0.85 else all_paths
                        path = rng.choice(pool)
                        value = rng.choice(VALUES)
                        _set(data, path, value, rng)
                        changes.append(path)
                    if rng.random() < 0.1:
                        # the same values through --set (TOML literals, as the CLI reads them)
                        key = "duration" if rng.random() < 0.5 else "flows[0].mss"
                        text = rng.choice(["1000001h", "[[[[1]]]]", "1e400", "{a = 1}", "'x'"])
                        data = apply_overrides(data, [f"{key}={text}"])
                    sc = parse_scenario(data, source)
            except ScenarioError as err:
                outcome.rejected += 1
                err.source = err.source or source
                line = err.located()
                if "\n" in line or not line.startswith(f"{source}: "):
                    outcome.failures.append(f"{label}: not one line with the file: {line!r}")
                rest = line[len(source) + 2 :]
                if not text_case and not _FIELD.match(rest) and not rest.startswith("--set"):
                    outcome.failures.append(f"{label}: no field named: {line!r}")
                outcome.rules[re.sub(r"\(got .*", "", rest)[:80]] += 1
                continue
            except Exception as err:  # a traceback: the defect this fuzzer looks for
                import traceback

                frames = traceback.extract_tb(err.__traceback__)
                where = next(f for f in reversed(frames) if "copy.py" not in f.filename)
                at = f"{Path(where.filename).name}:{where.lineno}"
                outcome.failures.append(f"{label}: {type(err).__name__} at {at}: {err}"[:500])
                continue
            config = sc.to_config(out_dir=workdir)
            config["duration_ns"] = min(config["duration_ns"], SIM_CAP_NS)
            config["record"] = {"timeseries": False, "events": False}
            began = time.perf_counter()

            def bound(_fraction: float, began: float = began) -> None:
                if time.perf_counter() - began > WALL_BOUND_S:
                    raise _WallBound()

            try:
                raw = _core.run(json.dumps(config), bound)
            except _WallBound:
                outcome.stopped_at_bound += 1
                continue
            except BaseException as err:  # ValueError: the core refused what Python accepted
                outcome.failures.append(f"{label}: core: {type(err).__name__}: {err}"[:500])
                if DUMP:
                    print(json.dumps(sc.data, default=str)[:3000], file=sys.stderr)
                continue
            outcome.ran += 1
            summary = json.loads(raw["summary"], parse_constant=float)
            violations = summary["invariants"]["violations"]
            if violations:
                outcome.failures.append(f"{label}: invariant violations: {violations[:3]}")
            if bad := non_finite(summary):
                outcome.failures.append(f"{label}: non-finite outputs: {bad[:3]}")
    finally:
        faulthandler.cancel_dump_traceback_later()
        outcome.cases = cases
        outcome.wall_s = time.perf_counter() - start
    return outcome


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--rules", action="store_true", help="list the rejection rules seen")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as d:
        outcome = run_cases(args.cases, args.seed, Path(d))
    print(json.dumps({"seed": args.seed, **outcome.summary()}))
    if args.rules:
        for rule, n in outcome.rules.most_common():
            print(f"{n:7d}  {rule}")
    for failure in outcome.failures[:50]:
        print(failure, file=sys.stderr)
    return 1 if outcome.failures else 0


if __name__ == "__main__":
    try:
        # The installed tcplab (`pip install .`, or an editable install of this tree).
        import tcplab._core  # noqa: F401
    except ImportError:
        # Not installed: this source tree, if its extension was built in place.
        sys.path.insert(0, str(REPO / "python"))
    sys.exit(main())
