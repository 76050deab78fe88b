"""The repository's documentation stands alone.

- No file cites reference notes kept outside the repository (the shared design notes, the
  algorithm and paper notes, the original paper texts): such a citation cannot be followed by
  someone who cloned tcplab alone.
- Every `docs/<page>.md §N` citation in code, reports and docs names an existing page, and each
  section number it gives is a numbered heading of that page.
- Every relative Markdown link in the repository's Markdown files resolves to a file, and a link
  into a Markdown page with `#anchor` to one of its headings.
- Every bundled scenario file is listed in the docs.
"""

from __future__ import annotations

import os
import re
from functools import cache
from pathlib import Path

import pytest

from support import REPO

DOCS = REPO / "docs"
#: Directories that are not the project's own text (build output, environments, VCS).
SKIP_DIRS = {"venv", "target", "node_modules", "__pycache__", "out", "build"}
#: Hidden directories are caches and environments, except these.
KEEP_HIDDEN = {".ci", ".github"}
TEXT_SUFFIXES = {".rs", ".py", ".md", ".toml", ".txt", ".sh", ".cc", ".cfg", ".yml", ".yaml"}

# Built from pieces so that this file does not match its own patterns.
_SHARED = "shared"
_ALGO = "algorithms"
_NOTES = "notes"
#: Citations of notes outside the repository, as they were written before docs/ existed.
OUTSIDE = re.compile(
    "|".join(
        [
            # the shared directory beside the repository, and any path into it; except its
            # Mahimahi traces, which tests and benchmarks read when present (skipping when not)
            r"\.\./" + _SHARED + r"(?!/traces/mahimahi)",
            r"(?<![\w-])" + _SHARED + r"/(?!traces/mahimahi)",
            _NOTES + r"/(?:papers|algorithms|throughput)",  # the notes pages by path
            r"\b" + _NOTES + r" §",  # a notes section cited without a page
            r"\bDESIGN\.md",  # the shared design notes' file name
            r"\bseeds?/0\d\d",  # the original paper texts
            r"\bseed 00\d",  # "seed 004": a paper cited by its file in the reference notes
        ]
    )
)
#: A notes page's bare file name (without `docs/`); allowed only inside docs/ (relative links).
PAGE_NAME = re.compile(r"(?<![\w/.-])(algorithms|papers|throughput-bound-thesis)\.md")
#: A docs page (`docs/` + page name), optionally followed by section numbers
#: (`§6.1, 6.11, 6.13-6.16`, `§2.4-§2.5`).
CITATION = re.compile(
    r"docs/([\w-]+\.md)"
    r"((?:\s*§\s*\d+(?:\.\d+)*(?:\s*(?:[-\u2013,]|and)\s*§?\s*\d+(?:\.\d+)*)*)?)"
)
SECTION_NUMBER = re.compile(r"\d+(?:\.\d+)*")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*$", re.M)
NUMBERED_HEADING = re.compile(r"^#{1,6}\s+(\d+(?:\.\d+)*)[.\s]", re.M)
MD_LINK = re.compile(r"\]\(([^)\s]+)\)")


def _skip(path: Path) -> bool:
    return any(p in SKIP_DIRS or (p.startswith(".") and p not in KEEP_HIDDEN) for p in path.parts)


@cache
def repo_files() -> tuple[Path, ...]:
    """The project's text files (relative paths), without build output or environments."""
    found: list[Path] = []
    for root, dirs, files in os.walk(REPO):
        rel_root = Path(root).relative_to(REPO)
        dirs[:] = [d for d in dirs if not _skip(rel_root / d)]
        for name in files:
            rel = rel_root / name
            if rel.suffix in TEXT_SUFFIXES or rel.as_posix() == ".ci/run":
                found.append(rel)
    return tuple(sorted(found))


@cache
def _text(rel: Path) -> str:
    return (REPO / rel).read_text(encoding="utf-8", errors="replace")


def _hits(pattern: re.Pattern[str], rel: Path) -> list[str]:
    text = _text(rel)
    if not pattern.search(text):
        return []
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        if pattern.search(line):
            out.append(f"{rel}:{n}: {line.strip()[:120]}")
    return out


@pytest.fixture(scope="module")
def files() -> tuple[Path, ...]:
    if not DOCS.is_dir():
        pytest.skip("docs/ is not here (not a source checkout)")
    return repo_files()


def test_the_walk_sees_the_code(files: tuple[Path, ...]) -> None:
    """Guards the scan itself: it must cover Rust, Python and Markdown files."""
    names = {f.as_posix() for f in files}
    assert {"README.md", "crates/tcplab-tcp/src/connection.rs", "python/tcplab/cli.py"} <= names
    assert not [f for f in files if f.parts[0] in {"target", ".venv", ".git"}]


def test_nothing_cites_notes_outside_the_repository(files: tuple[Path, ...]) -> None:
    here = Path(__file__).resolve().relative_to(REPO)
    hits = [h for f in files if f != here for h in _hits(OUTSIDE, f)]
    assert hits == [], "citations of notes outside the repository:\n" + "\n".join(hits)


def test_notes_pages_are_cited_by_their_docs_path(files: tuple[Path, ...]) -> None:
    """A page name alone ("<page>.md §3.2") is ambiguous outside docs/: write `docs/<page>.md`."""
    here = Path(__file__).resolve().relative_to(REPO)
    hits = [h for f in files if f.parts[0] != "docs" and f != here for h in _hits(PAGE_NAME, f)]
    assert hits == [], "write docs/<page>.md:\n" + "\n".join(hits)


@cache
def sections(page: str) -> frozenset[str]:
    """The section numbers of a docs page: headings that start with "N" or "N.M"."""
    text = (DOCS / page).read_text(encoding="utf-8")
    return frozenset(NUMBERED_HEADING.findall(text))


def citations(files: tuple[Path, ...]) -> list[tuple[str, str, list[str]]]:
    out = []
    for f in files:
        for n, line in enumerate(_text(f).splitlines(), 1):
            for m in CITATION.finditer(line):
                out.append((f"{f}:{n}", m.group(1), SECTION_NUMBER.findall(m.group(2))))
    return out


def test_every_docs_citation_resolves(files: tuple[Path, ...]) -> None:
    found = citations(files)
    assert len(found) >= 30, "the code cites docs/ pages; the pattern must still find them"
    bad = []
    for where, page, numbers in found:
        if not (DOCS / page).is_file():
            bad.append(f"{where}: docs/{page} does not exist")
            continue
        missing = [n for n in numbers if n not in sections(page)]
        if missing:
            bad.append(f"{where}: docs/{page} has no section {', '.join(missing)}")
    assert bad == [], "\n".join(bad)


def test_the_citation_check_can_fail() -> None:
    assert "6.11" in sections("throughput-bound-notes.md")
    assert "3.2" in sections(f"{_ALGO}.md")
    assert "6.99" not in sections("throughput-bound-notes.md")
    line = f"see docs/throughput-bound-notes.md §6.1, 6.11, 6.13\u20136.16 and docs/{_ALGO}.md §9.1"
    got = [(m.group(1), SECTION_NUMBER.findall(m.group(2))) for m in CITATION.finditer(line)]
    assert got == [
        ("throughput-bound-notes.md", ["6.1", "6.11", "6.13", "6.16"]),
        (f"{_ALGO}.md", ["9.1"]),
    ]
    assert OUTSIDE.search("see " + _NOTES + " §6.3")
    assert OUTSIDE.search("read ../" + _SHARED + "/DESIGN.md")
    assert not OUTSIDE.search(f"docs/{_ALGO}.md §3.2 and sharedmem/ and tcplab_{_SHARED}/x")
    assert PAGE_NAME.search(f"({_ALGO}.md §5.5 [R])")
    assert not PAGE_NAME.search(f"docs/{_ALGO}.md §5.5")


def github_anchor(heading: str) -> str:
    """The anchor GitHub gives a Markdown heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


@cache
def anchors(rel: Path) -> frozenset[str]:
    seen: dict[str, int] = {}
    out = set()
    for h in HEADING.findall(_text(rel)):
        a = github_anchor(h)
        k = seen.get(a, 0)
        out.add(a if k == 0 else f"{a}-{k}")
        seen[a] = k + 1
    return frozenset(out)


def test_markdown_links_resolve(files: tuple[Path, ...]) -> None:
    bad = []
    for f in files:
        if f.suffix != ".md":
            continue
        for n, line in enumerate(_text(f).splitlines(), 1):
            for target in MD_LINK.findall(line):
                if re.match(r"[a-z]+:", target):
                    continue  # https:, mailto:
                path, _, anchor = target.partition("#")
                dest = (REPO / f).parent / path if path else REPO / f
                if not dest.exists():
                    bad.append(f"{f}:{n}: {target}: no such file")
                elif (
                    anchor
                    and dest.suffix == ".md"
                    and anchor not in anchors(dest.resolve().relative_to(REPO))
                ):
                    bad.append(f"{f}:{n}: {target}: no such heading")
    assert bad == [], "\n".join(bad)


def test_github_anchor() -> None:
    assert github_anchor('`[[path]]` with `kind = "link"` (the default kind)') == (
        "path-with-kind--link-the-default-kind"
    )
    assert github_anchor("`tcplab sweep` rows") == "tcplab-sweep-rows"
    assert github_anchor("1. Retransmission timeout") == "1-retransmission-timeout"


def test_every_bundled_scenario_is_listed(files: tuple[Path, ...]) -> None:
    docs = "".join(_text(f) for f in files if f.parts[0] == "docs")
    scenarios = REPO / "scenarios"
    bundled = sorted(p.relative_to(scenarios).as_posix() for p in scenarios.rglob("*.toml"))
    assert bundled
    assert [name for name in bundled if f"`{name}`" not in docs] == []
