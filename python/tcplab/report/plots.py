"""Figure conventions shared by the reproductions (matplotlib, Agg backend, PNG).

Every reproduction figure shows tcplab's data with its confidence interval where there is one and
the paper's values as hollow black markers labelled "paper", so the two can be compared at a
glance. Axes carry units.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["PAPER_STYLE", "figure", "mark_paper", "save"]

#: How the paper's own numbers are drawn.
PAPER_STYLE: dict[str, Any] = {
    "marker": "s",
    "markersize": 8,
    "markerfacecolor": "none",
    "markeredgecolor": "black",
    "markeredgewidth": 1.5,
    "linestyle": "none",
    "label": "paper",
}


def figure(
    ncols: int = 1, nrows: int = 1, size: tuple[float, float] = (6.4, 4.2)
) -> tuple[Figure, Any]:
    """A new figure (Agg backend) with ``nrows`` by ``ncols`` axes."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(nrows, ncols, figsize=(size[0] * ncols, size[1] * nrows), squeeze=True)
    return fig, axes


def mark_paper(
    ax: Axes,
    x: Sequence[float] | float,
    y: Sequence[float] | float,
    label: str = "paper",
    marker: str = "s",
) -> None:
    """Draw the paper's values at (x, y); a second series of paper values on the same axes
    takes another ``marker`` (e.g. ``"D"``) so the legend tells them apart."""
    ax.plot(x, y, **{**PAPER_STYLE, "label": label, "marker": marker})


def save(fig: Figure, path: Path) -> Path:
    """Tight layout, 120 dpi PNG, close the figure; returns the path."""
    import matplotlib.pyplot as plt

    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
