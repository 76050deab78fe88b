"""One module per source paper: its scenarios, the reproduction and the comparison with the
paper's numbers. ``tcplab reproduce PAPER`` calls ``module.reproduce(report, jobs)``.

Only implemented reproductions are listed here; adding one is a module plus one line.
"""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["PAPERS", "load"]

#: paper id → (module, title)
PAPERS: dict[str, tuple[str, str]] = {
    "throughput-bound": (
        "tcplab.papers.throughput_bound",
        "Ito 2008: TCP throughput upper bound in a combined network-terminal system",
    ),
}


def load(paper: str) -> ModuleType:
    module, _ = PAPERS[paper]
    return importlib.import_module(module)
