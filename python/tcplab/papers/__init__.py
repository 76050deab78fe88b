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
    "qos-tcp-wlan": (
        "tcplab.papers.qos_tcp_wlan",
        "QoS-TCP on a moving WLAN terminal; uplink unfairness from AP ACK drops (Ando et al.)",
    ),
}


def load(paper: str) -> ModuleType:
    module, _ = PAPERS[paper]
    return importlib.import_module(module)
