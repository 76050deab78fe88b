"""The report a ``tcplab reproduce`` run writes: every paper number beside tcplab's.

A :class:`Report` collects comparisons (paper value, tcplab value, the acceptance rule and
whether it holds), figures and notes, and writes ``report.md`` and ``results.json`` into the
output directory. A reproduction that misses the paper says so: every comparison has a verdict.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["Comparison", "Report"]


@dataclass
class Comparison:
    item: str
    paper: Any
    tcplab: Any
    unit: str = ""
    rule: str = ""
    ok: bool | None = None
    note: str = ""


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        if math.isnan(v):
            return "n/a"
        return f"{v:.4g}"
    if v is None:
        return "—"
    return str(v)


@dataclass
class Report:
    paper: str
    title: str
    out_dir: Path
    quick: bool = False
    comparisons: list[Comparison] = field(default_factory=list)
    figures: list[tuple[str, str]] = field(default_factory=list)
    sections: list[tuple[str, str]] = field(default_factory=list)
    data: dict[str, Any] = field(default_factory=dict)
    #: What produced the run (tcplab version, seeds, run time, ...), shown in report.html.
    provenance: dict[str, Any] = field(default_factory=dict)

    def compare(
        self,
        item: str,
        paper: Any,
        tcplab: Any,
        *,
        unit: str = "",
        rule: str = "",
        ok: bool | None = None,
        note: str = "",
    ) -> Comparison:
        """Record one paper-vs-tcplab comparison; ``ok`` is the verdict of ``rule``."""
        c = Comparison(item, paper, tcplab, unit, rule, ok, note)
        self.comparisons.append(c)
        return c

    def figure(self, path: Path, caption: str) -> None:
        self.figures.append((Path(path).name, caption))

    def section(self, title: str, text: str) -> None:
        self.sections.append((title, text.strip()))

    @property
    def passed(self) -> bool:
        return all(c.ok is not False for c in self.comparisons)

    def write(self) -> Path:
        self.out_dir.mkdir(parents=True, exist_ok=True)
        lines = [f"# {self.title}", ""]
        mode = "quick (fewer runs, wider confidence intervals)" if self.quick else "full"
        lines += [f"Paper: `{self.paper}` — mode: {mode}.", ""]
        if self.comparisons:
            lines += [
                "| item | paper | tcplab | unit | rule | verdict | note |",
                "|---|---|---|---|---|---|---|",
            ]
            for c in self.comparisons:
                verdict = {True: "✅ holds", False: "❌ misses", None: "—"}[c.ok]
                lines.append(
                    f"| {c.item} | {_fmt(c.paper)} | {_fmt(c.tcplab)} | {c.unit} | {c.rule} "
                    f"| {verdict} | {c.note} |"
                )
            lines.append("")
        for title, text in self.sections:
            lines += [f"## {title}", "", text, ""]
        for name, caption in self.figures:
            lines += [f"![{caption}]({name})", "", f"*{caption}*", ""]
        path = self.out_dir / "report.md"
        path.write_text("\n".join(lines), encoding="utf-8")
        from tcplab.htmlreport import write_reproduce_report

        write_reproduce_report(self)  # report.html beside report.md
        results = {
            "paper": self.paper,
            "quick": self.quick,
            "passed": self.passed,
            "comparisons": [c.__dict__ for c in self.comparisons],
            "figures": [n for n, _ in self.figures],
            "data": self.data,
        }
        (self.out_dir / "results.json").write_text(
            json.dumps(results, indent=2, default=_json_default) + "\n", encoding="utf-8"
        )
        return path


def _json_default(o: Any) -> Any:
    try:
        import numpy as np

        if isinstance(o, np.generic):
            return o.item()
        if isinstance(o, np.ndarray):
            return o.tolist()
    except ImportError:  # pragma: no cover
        pass
    raise TypeError(f"not JSON serializable: {type(o).__name__}")
