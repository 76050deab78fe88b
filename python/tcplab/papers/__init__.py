"""One module per source paper: its scenarios, the reproduction and the comparison with the
paper's numbers. ``tcplab reproduce PAPER`` calls ``module.reproduce(report, jobs)``; with
``--linux``, a paper listed in :data:`LINUX` is reproduced by that module's ``reproduce`` instead
(the same reproduction with a section on real Linux hosts in it).

Only implemented reproductions are listed here; adding one is a module plus one line.
"""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["LINUX", "PAPERS", "load"]

#: paper id → (module, title)
PAPERS: dict[str, tuple[str, str]] = {
    "spoofing-satellite": (
        "tcplab.papers.spoofing_satellite",
        "Yagiu & Tanaka: TCP spoofing on a high-delay (satellite) link",
    ),
    "asymmetric-link": (
        "tcplab.papers.asymmetric_link",
        "TCP/IP suitable for an asymmetric wireless link (Kato, Kamagata, Ito, Toshiba ~1996)",
    ),
    "sto-3g": ("tcplab.papers.sto3g", "Spurious timeouts on 3G: RTO tuning, F-RTO and Eifel"),
    "qos-tcp-wlan": (
        "tcplab.papers.qos_tcp_wlan",
        "QoS-TCP on a moving WLAN terminal; uplink unfairness from AP ACK drops (Ando et al.)",
    ),
    "throughput-bound": (
        "tcplab.papers.throughput_bound",
        "Ito 2008: TCP throughput upper bound in a combined network-terminal system",
    ),
}


#: paper id → the module whose ``reproduce(report, jobs)`` adds real Linux hosts (``--linux``)
LINUX: dict[str, str] = {
    "asymmetric-link": "tcplab.papers.asymmetric_linux",
    "spoofing-satellite": "tcplab.papers.spoofing_linux",
    "sto-3g": "tcplab.papers.sto3g_linux",
}


def load(paper: str, linux: bool = False) -> ModuleType:
    """The module that reproduces ``paper``; with ``linux``, the one with the real-Linux
    section (a paper not in :data:`LINUX` has none)."""
    module = LINUX[paper] if linux else PAPERS[paper][0]
    return importlib.import_module(module)
