"""tcplab's version (``tcplab.__version__``), looked up only when asked: importlib.metadata is
slow to import."""

from __future__ import annotations

__all__ = ["version"]


def version() -> str:
    """The installed package's version, or ``0+unknown`` for a source tree never installed."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed("tcplab")
    except PackageNotFoundError:
        return "0+unknown"
