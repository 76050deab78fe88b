"""The ``tcplab`` commands in README.md and docs/*.md are ones tcplab accepts.

Every fenced shell block is read; each line that runs ``tcplab`` (also as
``sudo "$(command -v tcplab)" ...``, with ``\\`` continuations joined and ``# comments``
dropped) is checked against the command-line parser:

* a *synopsis* (``tcplab analyze CAPTURE [--out DIR]``: brackets, ``|``, ``...`` or an
  upper-case placeholder) must name a real command, and each ``--option`` in it must be one of
  that command's options;
* a concrete command must parse as written (argparse exits on an unknown command, option or
  choice);
* the cheap concrete ones (the README's simulated runs and models, ``tcplab scenarios``) also
  run, verbatim, in a scratch directory that has the repository's ``scenarios/``, and must exit
  0. Runs that need root and a real network (``tcplab emu``), minutes of simulation (``sweep``,
  ``reproduce``) or a file only the reader has are parsed, not run.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from support import REPO
from tcplab.cli import _parser

FENCE = re.compile(r"^```([\w-]*)\s*$")
SHELLS = ("", "sh", "bash", "console", "shell")
TCPLAB = re.compile(r'^(?:sudo\s+(?:"\$\(command -v tcplab\)"|\S*tcplab)|tcplab)(?:\s|$)')
#: A token that marks a synopsis rather than a command to type.
PLACEHOLDER = re.compile(r"[\[\]|]|\.\.\.|^[A-Z][A-Z0-9_]*(?:\.[a-z]+)?$|^[A-Z]+=")
#: Commands that run in seconds (``run``: the bundled scenarios, 60 s or less simulated;
#: ``plot``: figures of a run's outputs).
CHEAP = {"run", "model", "scenarios", "plot"}


def doc_files() -> list[Path]:
    files = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    return [p for p in files if p.is_file()]


def commands(path: Path) -> list[tuple[int, str]]:
    """(line, command) of every ``tcplab`` line in the file's shell blocks."""
    out: list[tuple[int, str]] = []
    inside, lang, pending, start = False, "", "", 0
    for no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        fence = FENCE.match(line.strip())
        if fence:
            inside, lang = not inside, fence.group(1)
            continue
        if not inside or lang not in SHELLS:
            continue
        text = line.strip().removeprefix("$ ")
        if pending:
            text = f"{pending} {text}"
        else:
            start = no
        if text.endswith("\\"):
            pending = text[:-1].rstrip()
            continue
        pending = ""
        if TCPLAB.match(text):
            out.append((start, text))
    return out


def tokens(command: str) -> list[str]:
    """The arguments after ``tcplab`` (comments dropped, the sudo form reduced)."""
    words = shlex.split(command, comments=True)
    if words[0] == "sudo":
        words = words[1:]
    return words[1:]


def options_of(words: list[str]) -> tuple[argparse.ArgumentParser, list[str]]:
    """The (sub)parser the words select, and the words after the command's name."""
    parser: argparse.ArgumentParser = _parser(words[0] if words else None)
    rest = list(words)
    while rest:
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs or rest[0] not in subs[0].choices:
            break
        parser = subs[0].choices[rest[0]]
        rest = rest[1:]
    return parser, rest


CASES = [
    pytest.param(path, no, cmd, id=f"{path.name}:{no}")
    for path in doc_files()
    for no, cmd in commands(path)
]


def test_the_docs_have_commands() -> None:
    if not (REPO / "README.md").is_file():
        pytest.skip("README.md is not here (not a source checkout)")
    readme = [c for c in CASES if c.values[0].name == "README.md"]
    assert len(readme) >= 10, "the README's commands were not found: the reader is wrong"


@pytest.mark.parametrize(("path", "line", "command"), CASES)
def test_a_documented_command_is_accepted(path: Path, line: int, command: str) -> None:
    words = tokens(command)
    if words[:1] == ["emu"] and "--" in words:
        words = words[: words.index("--")]  # what follows is the client's own command
    assert words, f"{path.name}:{line}: no command after tcplab"
    parser, rest = options_of(words)
    assert parser.prog != "tcplab" or words[0].startswith("-"), (
        f"{path.name}:{line}: {words[0]!r} is not a tcplab command"
    )
    if is_synopsis(words):
        known = set(parser._option_string_actions)
        for w in rest:
            option = re.match(r"^[\[(]?(--?[a-z][\w-]*)", w)
            if option:
                name = option.group(1)
                assert name in known, f"{path.name}:{line}: {parser.prog} has no {name}"
        return
    try:
        _parser(words[0]).parse_args(words)
    except SystemExit as stop:
        pytest.fail(f"{path.name}:{line}: `tcplab {shlex.join(words)}` is refused ({stop})")


#: Options whose value is free text (scenario keys hold brackets: ``path[0].loss``).
FREE_TEXT = {"--set", "--vary", "--server", "--where", "--sysctl"}


def is_synopsis(words: list[str]) -> bool:
    """Whether the words are a synopsis (placeholders, brackets) rather than a command."""
    return any(
        PLACEHOLDER.search(w)
        for i, w in enumerate(words)
        if i == 0 or words[i - 1] not in FREE_TEXT
    )


def cheap_readme_commands() -> list[tuple[int, str]]:
    readme = REPO / "README.md"
    if not readme.is_file():
        return []
    out = []
    for no, cmd in commands(readme):
        words = tokens(cmd)
        if words and words[0] in CHEAP and not is_synopsis(words):
            out.append((no, cmd))
    return out


def test_the_readme_cheap_commands_run_verbatim(tmp_path: Path) -> None:
    """In the README's order, in one scratch directory (``tcplab plot out/frto`` reads what the
    run before it wrote)."""
    cheap = cheap_readme_commands()
    if not cheap:
        pytest.skip("README.md is not here (not a source checkout)")
    (tmp_path / "scenarios").symlink_to(REPO / "scenarios")
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    for line, command in cheap:
        done = subprocess.run(
            [sys.executable, "-m", "tcplab", *tokens(command)],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=300,
            env=env,
        )
        assert done.returncode == 0, f"README.md:{line}: {command}\n{done.stderr}"
        assert "Traceback" not in done.stderr, f"README.md:{line}: {done.stderr}"


def test_no_documented_install_fetches_tcplab_from_a_package_index() -> None:
    """tcplab is installed from its source (``pip install .``, ``'.[cluster]'``, a wheel built
    from it): ``pip install tcplab`` would fetch whatever a package index has by that name."""
    by_name = re.compile(
        r"""pip install\s+(?:-\S+\s+)*['"]?tcplab(?:\[[^\]]*\])?['"]?(?:[\s)`]|$)"""
    )
    wrong = [
        f"{path.name}:{no}: {text}"
        for path in doc_files()
        for no, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if by_name.search(text)
    ]
    assert not wrong, wrong
