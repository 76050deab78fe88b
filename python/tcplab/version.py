"""tcplab's version (``tcplab.__version__``), looked up only when asked: importlib.metadata is
slow to import."""

from __future__ import annotations

from pathlib import Path

__all__ = ["build", "version"]


def version() -> str:
    """The installed package's version, or ``0+unknown`` for a source tree never installed."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed("tcplab")
    except PackageNotFoundError:
        return "0+unknown"


def build() -> str:
    """The git commit of the source this package runs from, with ``-dirty`` when tracked files
    differ from it. From a source tree (an editable install or a checkout) git is asked now;
    an installed wheel has no work tree beside it, so the commit recorded when its extension
    was built is given (``unknown`` when it was built without git, e.g. from a source
    archive)."""

    here = Path(__file__).resolve().parent
    if (here.parent.parent / "crates" / "tcplab-py").is_dir():
        commit = _git_commit(here)
        if commit is not None:
            return commit
    try:
        from tcplab import _core
    except ImportError:
        return "unknown"
    return str(getattr(_core, "__build_commit__", "unknown"))


def _git_commit(here: Path) -> str | None:
    """``git rev-parse HEAD`` of the source tree holding ``here`` (``-dirty`` appended when
    tracked files of the package differ), or None without git."""
    import subprocess

    def git(*args: str) -> str:
        done = subprocess.run(
            ["git", "-C", str(here), *args], capture_output=True, text=True, timeout=10
        )
        if done.returncode != 0:
            raise OSError(done.stderr.strip())
        return done.stdout.strip()

    try:
        commit = git("rev-parse", "HEAD")
        dirty = git("status", "--porcelain", "--untracked-files=no", "--", ".", "../../crates")
    except (OSError, subprocess.SubprocessError):
        return None
    return commit + ("-dirty" if dirty else "")
