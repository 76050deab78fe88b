"""The report a ``tcplab reproduce`` run writes: every paper number beside tcplab's.

A :class:`Report` collects checks (the paper's value, tcplab's value with its confidence
interval, a :class:`Rule` and the verdict the rule gives), figures and notes, and writes
``report.md`` and ``results.json`` into the output directory.

A rule is a small object that renders its own text and decides the verdict, so the text a
reader sees and the test the code applies are one thing (``Within(4.2, abs=0.05)``,
``Factor(0.36, 2)``, ``AtMost(10)``, ``Below(10)``, ``Between(0.75, 0.95)``, ``Order(...)``).
Every rule carries a kind:

``prediction``
    tcplab's simulation against a number the paper measured or simulated. Only these are
    counted in the headline ("k of n predictions hold") and in ``results.json``'s ``passed``.
``calibration``
    a target a preset or constant was fitted to: holding shows the fit, it predicts nothing.
``formula``
    the paper's own equation re-evaluated, or arithmetic of the configuration (a serial
    line's transmission time): shown, counted apart.
``construction``
    a check that holds by construction (the simulated system was built from what it is
    checked against): labelled, counted apart, never in the headline.
``context``
    a number tcplab reports beside the paper's for orientation, with no claim and no verdict.
``beyond``
    beyond the paper: tcplab's measurement of a setting the paper did not study (today's
    queues on the paper's links, :class:`Beyond`); no paper value, no verdict, never counted.

The verdict of a numeric rule takes tcplab's 95 % confidence interval into account: ``holds``
when the whole interval satisfies the rule, ``misses`` when none of it does, ``inconclusive``
when the verdict flips within it. A value without an interval (a deterministic run, an
equation) is judged as a point.
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tcplab.stats import mean_ci95

__all__ = [
    "KINDS",
    "KIND_LABEL",
    "VERDICTS",
    "Above",
    "AtLeast",
    "AtMost",
    "Below",
    "Between",
    "Beyond",
    "Claim",
    "Comparison",
    "Factor",
    "Highest",
    "Info",
    "Lowest",
    "Order",
    "Report",
    "Rule",
    "Within",
    "firm_disagreements",
]

KINDS = ("prediction", "calibration", "formula", "construction", "context", "beyond")
#: How each kind reads in a report's table and headline.
KIND_LABEL = {
    "prediction": "prediction",
    "calibration": "calibration",
    "formula": "formula",
    "construction": "by construction",
    "context": "context",
    "beyond": "beyond the paper",
}
#: Verdicts of a check (``None``: a context row, no claim to judge).
VERDICTS = ("holds", "misses", "inconclusive")
_MARK = {"holds": "✅ holds", "misses": "❌ misses", "inconclusive": "❔ inconclusive", None: "—"}


def _num(v: float) -> str:
    if math.isinf(v):
        return "∞" if v > 0 else "-∞"
    if 1e4 <= abs(v) < 1e9:
        return f"{v:.0f}"  # 24000, not 2.4e+04
    return f"{v:.4g}"


def _combine(verdicts: Sequence[str]) -> str:
    """All of several values must satisfy a rule: one miss misses, else one doubt doubts."""
    if "misses" in verdicts:
        return "misses"
    if "inconclusive" in verdicts:
        return "inconclusive"
    return "holds"


@dataclass(frozen=True)
class Rule:
    """Base class: a claim of the paper about one number (or about each of several)."""

    kind: str = "prediction"

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"rule kind: must be one of {', '.join(KINDS)} (got {self.kind!r})")

    def text(self) -> str:
        raise NotImplementedError

    def paper(self) -> Any:
        """What the paper column shows when the check gives no ``paper=``."""
        return self.text()

    def verdict(self, value: Any, ci: Any = None) -> str | None:
        raise NotImplementedError


@dataclass(frozen=True)
class _Interval(Rule):
    """A rule that accepts one interval of values; subclasses say which and how it reads."""

    def bounds(self) -> tuple[float, bool, float, bool]:
        """(low, low included, high, high included)."""
        raise NotImplementedError

    def accepts(self, x: float) -> bool:
        lo, lo_in, hi, hi_in = self.bounds()
        above = x > lo or (lo_in and x == lo)
        below = x < hi or (hi_in and x == hi)
        return above and below

    def _one(self, x: float, h: float | None) -> str:
        if x is None or (isinstance(x, float) and math.isnan(x)):
            return "inconclusive"  # no value to judge (e.g. no event to measure in these runs)
        x = float(x)
        if h is None or math.isnan(h) or h == 0:
            return "holds" if self.accepts(x) else "misses"
        a, b = x - abs(h), x + abs(h)
        lo, lo_in, hi, hi_in = self.bounds()
        if self.accepts(a) and self.accepts(b):
            return "holds"
        # the interval [a, b] meets the accepted one?
        disjoint = b < lo or (b == lo and not lo_in) or a > hi or (a == hi and not hi_in)
        return "misses" if disjoint else "inconclusive"

    def verdict(self, value: Any, ci: Any = None) -> str:
        if isinstance(value, Sequence) and not isinstance(value, str):
            cis = ci if isinstance(ci, Sequence) else [ci] * len(value)
            return _combine([self._one(v, c) for v, c in zip(value, cis, strict=True)])
        return self._one(value, ci)


@dataclass(frozen=True)
class Within(_Interval):
    """``value`` within ``abs`` of ``target`` or within a fraction ``rel`` of it."""

    target: float = math.nan
    abs: float | None = None
    rel: float | None = None

    def __init__(
        self,
        target: float,
        *,
        abs: float | None = None,
        rel: float | None = None,
        kind: str = "prediction",
    ) -> None:
        if (abs is None) == (rel is None):
            raise ValueError("Within: give exactly one of abs= and rel=")
        object.__setattr__(self, "target", float(target))
        object.__setattr__(self, "abs", abs)
        object.__setattr__(self, "rel", rel)
        object.__setattr__(self, "kind", kind)
        self.__post_init__()

    def bounds(self) -> tuple[float, bool, float, bool]:
        d = self.abs if self.abs is not None else self.rel * abs(self.target)  # type: ignore[operator]
        return self.target - d, True, self.target + d, True

    def text(self) -> str:
        if self.abs == 0:
            return f"= {_num(self.target)}"
        if self.abs is not None:
            return f"{_num(self.target)} ± {_num(self.abs)}"
        return f"within ±{_num(100 * self.rel)} % of {_num(self.target)}"  # type: ignore[operator]

    def paper(self) -> Any:
        return self.target


@dataclass(frozen=True)
class Factor(_Interval):
    """``value`` within a factor ``k`` of ``target`` (``target/k … target·k``, both > 0)."""

    target: float = math.nan
    k: float = 2.0

    def __init__(self, target: float, k: float, *, kind: str = "prediction") -> None:
        if not (target > 0 and k > 1):
            raise ValueError(f"Factor: needs target > 0 and k > 1 (got {target}, {k})")
        object.__setattr__(self, "target", float(target))
        object.__setattr__(self, "k", float(k))
        object.__setattr__(self, "kind", kind)
        self.__post_init__()

    def bounds(self) -> tuple[float, bool, float, bool]:
        return self.target / self.k, True, self.target * self.k, True

    def text(self) -> str:
        lo, _, hi, _ = self.bounds()
        return f"within x{_num(self.k)} of {_num(self.target)} ({_num(lo)} … {_num(hi)})"

    def paper(self) -> Any:
        return self.target


@dataclass(frozen=True)
class Between(_Interval):
    """``low ≤ value ≤ high``."""

    low: float = -math.inf
    high: float = math.inf

    def __init__(self, low: float, high: float, *, kind: str = "prediction") -> None:
        if not low < high:
            raise ValueError(f"Between: needs low < high (got {low}, {high})")
        object.__setattr__(self, "low", float(low))
        object.__setattr__(self, "high", float(high))
        object.__setattr__(self, "kind", kind)
        self.__post_init__()

    def bounds(self) -> tuple[float, bool, float, bool]:
        return self.low, True, self.high, True

    def text(self) -> str:
        return f"{_num(self.low)} … {_num(self.high)}"


def _bound_rule(name: str, sign: str, upper: bool, strict: bool) -> type[_Interval]:
    @dataclass(frozen=True)
    class _R(_Interval):
        limit: float = math.nan

        def __init__(self, limit: float, *, kind: str = "prediction") -> None:
            object.__setattr__(self, "limit", float(limit))
            object.__setattr__(self, "kind", kind)
            self.__post_init__()

        def bounds(self) -> tuple[float, bool, float, bool]:
            if upper:
                return -math.inf, False, self.limit, not strict
            return self.limit, not strict, math.inf, False

        def text(self) -> str:
            return f"{sign} {_num(self.limit)}"

    _R.__name__ = _R.__qualname__ = name
    _R.__doc__ = f"``value {sign} limit``."
    return _R


AtMost = _bound_rule("AtMost", "≤", upper=True, strict=False)
Below = _bound_rule("Below", "<", upper=True, strict=True)
AtLeast = _bound_rule("AtLeast", "≥", upper=False, strict=False)
Above = _bound_rule("Above", ">", upper=False, strict=True)


@dataclass(frozen=True)
class Order(Rule):
    """The paper's ordering of named values, highest first (``Order(["train", "car"])``): tcplab's
    values (a mapping name → value, with a mapping name → CI half-width) must fall in that order.
    A pair whose intervals overlap makes the verdict inconclusive unless another pair is firmly
    reversed. ``"a > b"`` pairs only: a partial order is given as several Order checks."""

    names: tuple[str, ...] = ()

    def __init__(self, names: Sequence[str], *, kind: str = "prediction") -> None:
        if len(names) < 2:
            raise ValueError("Order: needs at least two names")
        object.__setattr__(self, "names", tuple(names))
        object.__setattr__(self, "kind", kind)
        self.__post_init__()

    def text(self) -> str:
        return " > ".join(self.names)

    def verdict(self, value: Any, ci: Any = None) -> str:
        if not isinstance(value, Mapping):
            raise TypeError("Order: tcplab's value must map each name to a number")
        out = [
            _pair(float(value[a]), _h(ci, a), float(value[b]), _h(ci, b))
            for a, b in itertools.pairwise(self.names)
        ]
        return _combine(out)


def _pair(va: float, ha: float, vb: float, hb: float) -> str:
    """``a > b`` judged with the two values' CI half-widths (0 when unknown)."""
    if va - ha > vb + hb:
        return "holds"
    if va + ha < vb - hb or (ha == hb == 0 and va <= vb):
        return "misses"
    return "inconclusive"


def _h(cis: Any, name: str) -> float:
    h = cis.get(name) if isinstance(cis, Mapping) else None
    return 0.0 if h is None or math.isnan(h) else float(h)


@dataclass(frozen=True)
class Highest(Rule):
    """``name`` has the highest of tcplab's values (a mapping name → value; CI as a mapping)."""

    name: str = ""
    lowest: bool = False

    def __init__(self, name: str, *, kind: str = "prediction") -> None:
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "lowest", False)
        object.__setattr__(self, "kind", kind)
        self.__post_init__()

    def text(self) -> str:
        return f"{self.name} {'lowest' if self.lowest else 'highest'}"

    def verdict(self, value: Any, ci: Any = None) -> str:
        a, ha = float(value[self.name]), _h(ci, self.name)
        out = []
        for other, v in value.items():
            if other == self.name:
                continue
            hb = _h(ci, other)
            out.append(_pair(float(v), hb, a, ha) if self.lowest else _pair(a, ha, float(v), hb))
        return _combine(out)


@dataclass(frozen=True)
class Lowest(Highest):
    """``name`` has the lowest of tcplab's values."""

    def __init__(self, name: str, *, kind: str = "prediction") -> None:
        super().__init__(name, kind=kind)
        object.__setattr__(self, "lowest", True)


@dataclass(frozen=True)
class Claim(Rule):
    """A qualitative claim that no interval rule expresses, judged by the caller (``holds``):
    the text states what was tested. Use a numeric rule whenever the claim has a number."""

    claim: str = ""
    holds: bool | None = None

    def __init__(self, claim: str, holds: bool | None, *, kind: str = "prediction") -> None:
        object.__setattr__(self, "claim", claim)
        object.__setattr__(self, "holds", holds)
        object.__setattr__(self, "kind", kind)
        self.__post_init__()

    def text(self) -> str:
        return self.claim

    def verdict(self, value: Any, ci: Any = None) -> str:
        return {True: "holds", False: "misses", None: "inconclusive"}[self.holds]


@dataclass(frozen=True)
class Info(Rule):
    """No claim: a tcplab number reported for context (``kind = "context"``, no verdict)."""

    why: str = "context, no claim"

    def __init__(self, why: str = "context, no claim") -> None:
        object.__setattr__(self, "why", why)
        object.__setattr__(self, "kind", "context")

    def text(self) -> str:
        return self.why

    def paper(self) -> Any:
        return None

    def verdict(self, value: Any, ci: Any = None) -> None:
        return None


@dataclass(frozen=True)
class Beyond(Info):
    """No claim and no paper value: tcplab's measurement of a setting the paper did not study
    (``kind = "beyond"``, no verdict, not counted)."""

    def __init__(self, why: str = "beyond the paper: a setting it did not study") -> None:
        object.__setattr__(self, "why", why)
        object.__setattr__(self, "kind", "beyond")


@dataclass
class Comparison:
    """One row of the report: what ``results.json`` stores under ``comparisons[]``."""

    item: str
    kind: str
    paper: Any
    tcplab: Any
    ci: Any = None
    n: int | None = None
    unit: str = ""
    rule: str = ""
    verdict: str | None = None
    note: str = ""
    #: Where the rule's band comes from (the paper's words it renders, or why that width).
    source: str = ""

    @property
    def ok(self) -> bool | None:
        """True when the rule holds, False when it misses, None otherwise."""
        return {"holds": True, "misses": False}.get(self.verdict or "")

    def as_dict(self) -> dict[str, Any]:
        return {**self.__dict__, "ok": self.ok}


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        if math.isnan(v):
            return "n/a"
        return _num(v)
    if v is None:
        return "—"
    if isinstance(v, Mapping):
        return ", ".join(f"{k} {_fmt(x)}" for k, x in v.items())
    if isinstance(v, list | tuple):
        return "[" + ", ".join(_fmt(x) for x in v) + "]"
    return str(v)


def _fmt_value(c: Comparison) -> str:
    if isinstance(c.ci, int | float) and not math.isnan(c.ci) and c.ci > 0:
        return f"{_fmt(c.tcplab)} ± {_fmt(float(c.ci))}"
    return _fmt(c.tcplab)


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

    def check(
        self,
        item: str,
        rule: Rule,
        tcplab: Any,
        *,
        ci: Any = None,
        samples: Sequence[float] | None = None,
        paper: Any = ...,
        unit: str = "",
        shown: str | None = None,
        note: str = "",
        estimate: bool = False,
        source: str = "",
    ) -> Comparison:
        """Record one check of tcplab's value against the paper's claim ``rule``.

        ``ci``: the 95 % half-width of tcplab's value (a number, a list matching a list value, a
        mapping for :class:`Order`); ``samples``: per-seed values instead, whose mean becomes the
        value and whose Student-t interval the CI (``tcplab`` is then ignored and may be None).
        ``paper``: what the paper prints, when the rule's own rendering is not it. ``shown``:
        text for the tcplab column when the value judged is not the one to display.
        ``source``: where the rule's band comes from (the paper's words, or why that width).
        ``estimate``: the value is a random estimate without a CI (e.g. a threshold read off a
        sweep over seeds), or a claim judged over settings a quick run only partly covers; a
        quick run cannot make its verdict firm, so there it is reported inconclusive (the full
        run judges it as a point).
        """
        n = None
        if samples is not None:
            tcplab, ci = mean_ci95(samples)
            n = len(samples)
        verdict = rule.verdict(tcplab, ci)
        if estimate and self.quick and verdict in ("holds", "misses"):
            note = f"quick run: would be '{verdict}', too few runs or settings to judge" + (
                f"; {note}" if note else ""
            )
            verdict = "inconclusive"
        c = Comparison(
            item=item,
            kind=rule.kind,
            paper=rule.paper() if paper is ... else paper,
            tcplab=tcplab if shown is None else shown,
            ci=None if isinstance(ci, float) and math.isnan(ci) else ci,
            n=n,
            unit=unit,
            rule=rule.text(),
            verdict=verdict,
            note=note,
            source=source,
        )
        self.comparisons.append(c)
        return c

    def figure(self, path: Path, caption: str) -> None:
        self.figures.append((Path(path).name, caption))

    def byte_exact(self, item: str, rows: Sequence[Mapping[str, Any]], note: str) -> bool:
        """The row every real-transfer section ends with: did each transfer's sha256 match
        (``rows[i]["sha256_ok"]``)? Returns the verdict."""
        exact = all(r["sha256_ok"] for r in rows)
        self.check(
            item,
            Claim("sha256 of every transferred file matches", exact),
            "all" if exact else "not all",
            note=note,
        )
        return exact

    def section(self, title: str, text: str) -> None:
        self.sections.append((title, text.strip()))

    def counts(self) -> dict[str, dict[str, int]]:
        """Per kind: how many checks, and how many hold, miss and are inconclusive."""
        out: dict[str, dict[str, int]] = {}
        for kind in KINDS:
            cs = [c for c in self.comparisons if c.kind == kind]
            out[kind] = {"total": len(cs)} | {v: sum(c.verdict == v for c in cs) for v in VERDICTS}
        return out

    @property
    def passed(self) -> bool:
        """No prediction misses (calibrations, formulas and context rows do not count)."""
        return not any(c.kind == "prediction" and c.verdict == "misses" for c in self.comparisons)

    def headline(self) -> str:
        k = self.counts()
        p = k["prediction"]
        text = f"{p['holds']} of {p['total']} predictions hold"
        extra = [f"{p[v]} {'miss' if v == 'misses' else v}" for v in VERDICTS[1:] if p[v]]
        if extra:
            text += f" ({', '.join(extra)})"
        for kind, name in (
            ("calibration", "calibrations"),
            ("formula", "formulas"),
            ("construction", "by construction"),
        ):
            if k[kind]["total"]:
                text += f"; {name}: {k[kind]['holds']} of {k[kind]['total']} hold"
        return text

    def clear_outputs(self) -> None:
        """Remove an earlier reproduction's outputs from ``out_dir`` before this one starts:
        ``results.json`` first (it marks a complete reproduction), then ``report.md``,
        ``report.html`` and the figures its ``results.json`` lists. An interrupted
        reproduction therefore never sits beside an earlier complete one's results; files
        that are not the reproduction's stay."""
        results = self.out_dir / "results.json"
        figures: list[str] = []
        try:
            listed = json.loads(results.read_text(encoding="utf-8")).get("figures", [])
            figures = [f for f in listed if isinstance(f, str)]
        except (OSError, ValueError, AttributeError):
            pass
        results.unlink(missing_ok=True)
        for name in ("report.md", "report.html", *figures):
            path = self.out_dir / name
            # a figure is a file in out_dir itself: a listed name is never a path out of it
            if path.parent == self.out_dir and path.is_file():
                path.unlink()

    def write(self) -> Path:
        self.out_dir.mkdir(parents=True, exist_ok=True)
        lines = [f"# {self.title}", ""]
        mode = "quick (fewer runs, wider confidence intervals)" if self.quick else "full"
        lines += [f"Paper: `{self.paper}` — mode: {mode}.", ""]
        lines += [f"**{self.headline()}.**", ""]
        if self.comparisons:
            lines += [
                "Kinds: *prediction* — tcplab's simulation against a number the paper measured "
                "or simulated, each claim once (counted in the headline); *calibration* — a "
                "target a preset or constant was fitted to; *formula* — the paper's equation or "
                "the configuration's arithmetic re-evaluated; *by construction* — holds because "
                "of how the simulated system was built (it cannot fail); *context* — no claim; "
                "*beyond the paper* — tcplab's measurement of a setting the paper did not study "
                "(no paper value, no verdict, never counted). "
                "*source* says where a rule's band comes from. tcplab's value is shown ± its 95 % "
                "confidence interval where it has one; a check whose verdict flips within that "
                "interval is *inconclusive*.",
                "",
                "| item | kind | paper | tcplab | unit | rule | source | verdict | note |",
                "|---|---|---|---|---|---|---|---|---|",
            ]
            for c in self.comparisons:
                lines.append(
                    f"| {c.item} | {KIND_LABEL[c.kind]} | {_fmt(c.paper)} | {_fmt_value(c)} "
                    f"| {c.unit} | {c.rule} | {c.source} | {_MARK[c.verdict]} | {c.note} |"
                )
            lines.append("")
        for title, text in self.sections:
            lines += [f"## {title}", "", text, ""]
        for name, caption in self.figures:
            lines += [f"![{caption}]({name})", "", f"*{caption}*", ""]
        path = self.out_dir / "report.md"
        path.write_text("\n".join(lines), encoding="utf-8")
        from tcplab.report.html import write_reproduce_report

        write_reproduce_report(self)  # report.html beside report.md
        results = {
            "paper": self.paper,
            "quick": self.quick,
            "passed": self.passed,
            "headline": self.headline(),
            "counts": self.counts(),
            "comparisons": [c.as_dict() for c in self.comparisons],
            "figures": [n for n, _ in self.figures],
            "data": self.data,
        }
        # last, and under a temporary name: results.json marks a complete reproduction
        tmp = self.out_dir / ".results.json.tmp"
        tmp.write_text(
            json.dumps(results, indent=2, default=_json_default) + "\n", encoding="utf-8"
        )
        tmp.replace(self.out_dir / "results.json")
        return path


def firm_disagreements(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[str]:
    """Items whose firm verdicts (holds/misses) differ between two ``results.json`` of one paper
    (e.g. ``--quick`` and the full run); an item present in one only is not compared."""
    va = {c["item"]: c.get("verdict") for c in a["comparisons"]}
    out = []
    for c in b["comparisons"]:
        x, y = va.get(c["item"]), c.get("verdict")
        if x in ("holds", "misses") and y in ("holds", "misses") and x != y:
            out.append(f"{c['item']}: {x} vs {y}")
    return out


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
