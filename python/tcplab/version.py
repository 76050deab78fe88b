"""tcplab's version (``tcplab.__version__``), looked up only when asked: importlib.metadata is
slow to import."""

from __future__ import annotations

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
    """The git commit of the source tree this package runs from (an editable install or a
    checkout), with ``-dirty`` when tracked files differ from it; ``unknown`` when the package
    is not in a git work tree (an installed wheel) or git is missing."""
    import subprocess
    from pathlib import Path

    here = Path(__file__).resolve().parent

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
        return "unknown"
    return commit + ("-dirty" if dirty else "")
