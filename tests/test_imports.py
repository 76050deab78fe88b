"""The import lint: the package's parts depend on each other one way only.

A *part* is a wing (a subpackage of ``tcplab``: ``scenario``, ``campaign``, ...), a module at
the top of the package (``cli``, ``errors``, ``results``, ...) or the package itself
(``tcplab``, the public API). :data:`LAYERS` lists them from the top down, once: a module may
import parts in lower layers and modules of its own part, nothing else. Every import counts:
at the top of a module, inside a function (a lazy import) or under ``TYPE_CHECKING``.

Besides the layers: no import circle between modules (inside a wing too), no private name
(``_x``) imported from or looked up in another module, and no module but ``__main__`` imports
``cli``. The checker is tried on a small package with one of each fault
(:func:`test_the_lint_finds_each_fault`), so a lint that stopped looking would fail.

And start-up: building the command line and a ``run --json`` import none of the heavy
libraries (numpy, pyarrow, pandas, ...), checked in a fresh interpreter.
"""

from __future__ import annotations

import ast
import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "python" / "tcplab"

#: The parts of the package from the top down (docs/design.md §10, Code layout): cli →
#: papers → (report, real, analyze) → campaign → scenario → the shared modules → the bindings.
#: A part may import the parts of any lower layer, never one of its own layer or above.
LAYERS: list[set[str]] = [
    {"__main__"},  # ``python -m tcplab``
    {"cli"},  # the command line: the only module that imports cli is __main__
    {"papers", "tcplab"},  # the reproductions; the public API (``tcplab.run``, ...)
    {"report", "real", "analyze"},  # reports and figures; real hosts; capture analysis
    {"campaign", "runner"},  # many runs (sweeps, store, Dask); one run (``tcplab.run``)
    {"scenario", "models"},  # TOML scenarios and their checks; analytic models
    {"errors", "stats", "text", "version"},  # shared leaves
    {"results"},  # a run's tables
    {"_core"},  # the Rust bindings
]

#: The modules that are bindings, not Python files (imported as modules, never as names).
EXTENSIONS = {"tcplab._core"}


def layer_of(part: str, layers: list[set[str]]) -> int:
    for i, layer in enumerate(layers):
        if part in layer:
            return i
    raise KeyError(part)


class Module:
    def __init__(self, name: str, path: Path) -> None:
        self.name = name
        self.path = path
        self.is_package = path.name == "__init__.py"
        self.tree = ast.parse(path.read_text(encoding="utf-8"), str(path))

    def resolve(self, node: ast.ImportFrom) -> str:
        if not node.level:
            return node.module or ""
        base = self.name.split(".")
        if not self.is_package:
            base = base[:-1]
        base = base[: len(base) - node.level + 1]
        return ".".join([*base, *([node.module] if node.module else [])])


def modules(root: Path, package: str) -> dict[str, Module]:
    """Every ``.py`` file under ``root`` (the directory of ``package``) by dotted name."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = [package, *path.relative_to(root).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = Module(".".join(parts), path)
    return out


def part_of(module: str) -> str:
    """``tcplab.scenario.parse`` → ``scenario``; ``tcplab.cli`` → ``cli``; ``tcplab`` →
    ``tcplab``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def imports(mod: Module, known: set[str], package: str) -> Iterator[tuple[str, str, int]]:
    """(imported module, name imported from it or "", line) for every import of ``package``."""
    for node in ast.walk(mod.tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == package:
                    yield alias.name, "", node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = mod.resolve(node)
            if base.split(".")[0] != package:
                continue
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                if sub in known:  # ``from tcplab.scenario import fields``: a module
                    yield sub, "", node.lineno
                else:
                    yield base, alias.name, node.lineno


def module_aliases(mod: Module, known: set[str]) -> dict[str, str]:
    """Local names bound to a module of the package (``from tcplab.scenario import fields as
    sc`` → ``{"sc": "tcplab.scenario.fields"}``)."""
    out = {}
    for node in ast.walk(mod.tree):
        if isinstance(node, ast.ImportFrom):
            base = mod.resolve(node)
            for alias in node.names:
                if f"{base}.{alias.name}" in known:
                    out[alias.asname or alias.name] = f"{base}.{alias.name}"
    return out


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def lint(root: Path, package: str, layers: list[set[str]]) -> list[str]:
    """Every fault in the package at ``root``, one line each."""
    mods = modules(root, package)
    known = set(mods) | {e.replace("tcplab", package, 1) for e in EXTENSIONS}
    faults: list[str] = []
    graph: dict[str, set[str]] = {name: set() for name in mods}
    for name, mod in mods.items():
        where = f"{mod.path.relative_to(root.parent)}"
        src = part_of(name)
        for target, imported, line in imports(mod, known, package):
            if target != name:
                graph[name].add(target)
            dst = part_of(target)
            if target == f"{package}.cli" and name != f"{package}.__main__":
                faults.append(f"{where}:{line}: imports {target} (only __main__ may)")
            if imported.startswith("_") and not imported.startswith("__") and target != name:
                faults.append(f"{where}:{line}: imports the private name {imported} from {target}")
            if src == dst:
                continue
            try:
                up = layer_of(dst, layers) <= layer_of(src, layers)
            except KeyError as err:
                faults.append(f"{where}:{line}: part {err.args[0]} is in no layer of LAYERS")
                continue
            if up:
                faults.append(
                    f"{where}:{line}: {src} imports {target}, which is not below it in LAYERS"
                )
        aliases = module_aliases(mod, known)
        for node in ast.walk(mod.tree):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in aliases
                and node.attr.startswith("_")
                and not node.attr.startswith("__")
            ):
                faults.append(
                    f"{where}:{node.lineno}: uses the private name {node.attr} of "
                    f"{aliases[node.value.id]}"
                )
    for component in cycles(graph):
        faults.append(f"import circle: {' ↔ '.join(component)}")
    return faults


def test_layers_name_every_part_once() -> None:
    parts = {part_of(name) for name in modules(PACKAGE, "tcplab")} | {"_core"}
    listed = [p for layer in LAYERS for p in layer]
    assert len(listed) == len(set(listed)), "a part is in two layers"
    assert parts == set(listed), "LAYERS must list exactly the package's parts"


def test_the_package_keeps_its_layers() -> None:
    assert lint(PACKAGE, "tcplab", LAYERS) == []


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")


@pytest.mark.parametrize(
    ("files", "fault"),
    [
        (  # a back-edge, even a lazy one under a function
            {"low/a.py": "def f():\n    from tcplab.high import b\n"},
            "low imports tcplab.high.b, which is not below it in LAYERS",
        ),
        (  # a back-edge for a type only
            {
                "low/a.py": "from typing import TYPE_CHECKING\n"
                "if TYPE_CHECKING:\n    from tcplab.high.b import B\n"
            },
            "low imports tcplab.high.b, which is not below it in LAYERS",
        ),
        (  # a circle inside one wing
            {
                "high/b.py": "from tcplab.high import c\n",
                "high/c.py": "def f():\n    from tcplab.high.b import g\n",
            },
            "import circle: tcplab.high.b ↔ tcplab.high.c",
        ),
        (  # a private name across modules
            {"high/b.py": "from tcplab.low.a import _helper\n"},
            "imports the private name _helper from tcplab.low.a",
        ),
        (  # a private name through a module alias
            {"high/b.py": "from tcplab.low import a as x\n\nx._helper()\n"},
            "uses the private name _helper of tcplab.low.a",
        ),
        (  # cli imported by a module other than __main__
            {"top.py": "from tcplab import cli\n"},
            "imports tcplab.cli (only __main__ may)",
        ),
        (  # a part LAYERS does not list
            {"stray.py": "from tcplab.low import a\n"},
            "part stray is in no layer of LAYERS",
        ),
    ],
)
def test_the_lint_finds_each_fault(tmp_path: Path, files: dict[str, str], fault: str) -> None:
    root = tmp_path / "tcplab"
    base = {
        "__init__.py": "",
        "__main__.py": "from tcplab.cli import main\n",
        "cli.py": "from tcplab.high import b\n",
        "top.py": "",
        "high/__init__.py": "",
        "high/b.py": "from tcplab.low.a import helper\n",
        "high/c.py": "",
        "low/__init__.py": "",
        "low/a.py": "def helper():\n    pass\n\n\ndef _helper():\n    pass\n",
    }
    _write(root, {**base, **files})
    layers = [{"__main__"}, {"cli"}, {"tcplab", "top"}, {"high"}, {"low"}, {"_core"}]
    _write(tmp_path / "clean" / "tcplab", base)
    assert lint(tmp_path / "clean" / "tcplab", "tcplab", layers) == []
    faults = lint(root, "tcplab", layers)
    assert any(fault in f for f in faults), faults


#: Modules a command that draws, tabulates or distributes nothing must not import: each adds tens
#: of milliseconds to every start (numpy alone about a fifth of a short ``tcplab run``).
HEAVY = ("numpy", "pandas", "pyarrow", "polars", "matplotlib", "dask", "distributed", "tqdm")

_IMPORTED_BY = """
import sys
from tcplab.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
print(" ".join(sorted(m for m in sys.modules if m.split(".")[0] in {heavy!r})), file=sys.stderr)
"""


def _heavy_imports(*args: str) -> list[str]:
    """The heavy modules a ``tcplab ARGS`` process had imported when it ended."""
    import subprocess
    import sys

    code = _IMPORTED_BY.format(heavy=set(HEAVY))
    proc = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120
    )
    return proc.stderr.strip().splitlines()[-1].split() if proc.stderr.strip() else []


@pytest.mark.parametrize("args", [("--help",), ("run", "--help"), ("trace", "--help")])
def test_building_the_command_line_imports_nothing_heavy(args: tuple[str, ...]) -> None:
    # ``--help`` builds every command's parser: a wing's parser must not import its workers.
    assert _heavy_imports(*args) == []


@pytest.mark.core
def test_run_json_imports_nothing_heavy() -> None:
    # The summary needs no table: a ``run --json`` imports no numpy, pyarrow, pandas, ...
    args = ("run", "p2p-bulk", "--set", "duration=2s", "--json", "--quiet")
    assert _heavy_imports(*args) == []
    # and the check can fail: a run that writes Parquet tables imports pyarrow
    with tempfile.TemporaryDirectory() as out:
        assert "pyarrow" in _heavy_imports(*args, "--out", out)
