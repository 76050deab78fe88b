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


def load(paper: str) -> ModuleType:
    module, _ = PAPERS[paper]
    return importlib.import_module(module)
