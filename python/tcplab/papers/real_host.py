"""What the real-host (``--linux``) sections of the reproductions share: the section that says
why it did not run, the load and ``--linux-cache`` bookkeeping around the real transfers, and
the sentences that report both and the byte-exact outcome."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tcplab.report.checks import Report


def not_run(report: Report, title: str) -> bool:
    """Write the section ``title`` saying why real hosts cannot run here (no root, no TUN, ...)
    and return True; False (nothing written) when they can."""
    from tcplab.real import emu

    reason = emu.available()
    if reason is None:
        return False
    report.section(title, f"Not run here: {reason}. The rest of the reproduction ran.")
    return True


@dataclass
class Measured:
    """Real transfers with the load average (1, 5, 15 min) before and after them and how many
    were read back from ``--linux-cache`` instead of run."""

    rows: list[dict[str, Any]]
    load_before: tuple[float, float, float]
    load_after: tuple[float, float, float]
    from_cache: int


def measure(run: Callable[[], list[dict[str, Any]]]) -> Measured:
    """Call ``run`` (the section's real transfers) and note the load and the cache reads."""
    from tcplab.real import cache as linux_cache

    load0 = os.getloadavg()
    read0 = linux_cache.counts["read"]
    rows = run()
    load1 = os.getloadavg()
    return Measured(rows, load0, load1, linux_cache.counts["read"] - read0)


def load_sentence(m: Measured, label: str = "Load average", extra: str = "") -> str:
    """ "``label`` before a, b, c, after d, e, f on N cores``extra``." and, when some transfers
    came from ``--linux-cache``, how many."""
    b, a = m.load_before, m.load_after
    text = (
        f"{label} before {b[0]:.2f}, {b[1]:.2f}, {b[2]:.2f}, after {a[0]:.2f}, {a[1]:.2f}, "
        f"{a[2]:.2f} on {os.cpu_count()} cores{extra}."
    )
    if m.from_cache:
        text += (
            f" {m.from_cache} of the {len(m.rows)} downloads were read from `--linux-cache` (run "
            "earlier on this kernel with these settings; the load averages are this run's)."
        )
    return text


def byte_exact_bullet(
    rows: Sequence[Mapping[str, Any]], noun: str = "download", violations: bool = False
) -> str:
    """The report's bullet on the transfers' sha256 (and, with ``violations``, on the
    emulator's invariant checks)."""
    if violations:
        if all(r["sha256_ok"] and not r["violations"] for r in rows):
            return (
                "- Every file arrived byte-exact (sha256) and the emulator reported no violations."
            )
        return f"- A {noun} was not byte-exact or reported violations (see results.json)."
    if all(r["sha256_ok"] for r in rows):
        return "- Every file arrived byte-exact (sha256)."
    return f"- A {noun} was not byte-exact (see results.json)."
