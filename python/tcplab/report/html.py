"""Self-contained HTML pages: a reproduction's ``report.html``, the ``index.html`` of
``tcplab reproduce all``, and the ``report.html`` of ``tcplab run --out``.

Every page is one file: the CSS is inline and every figure is embedded as a base64 PNG, so a
page can be mailed or attached to an issue as it is. Comparisons are rendered from their fields
(whatever a :class:`tcplab.report.checks.Comparison` carries: ``kind`` and a ``verdict`` string are
shown when present), so new comparison fields appear without a change here.
"""

from __future__ import annotations

import base64
import datetime as _dt
import html
import json
import math
import os
import platform
import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, is_dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from tcplab.results import RunResult

__all__ = [
    "Reproduction",
    "provenance",
    "seed_ranges",
    "verdict_of",
    "write_index",
    "write_reproduce_report",
    "write_run_report",
]


class Reproduction(Protocol):
    """What :func:`write_reproduce_report` reads of a reproduction (a
    :class:`tcplab.report.checks.Report`, which writes its page with it)."""

    paper: str
    title: str
    out_dir: Path
    quick: bool
    comparisons: Any
    figures: list[tuple[str, str]]
    sections: list[tuple[str, str]]


CSS = """
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0 auto;
       max-width: 1200px; padding: 1em 2em 4em; color: #1a1a1a; background: #fff; }
h1 { font-size: 1.6em; margin-bottom: .2em; }
h2 { margin-top: 1.8em; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; margin: .8em 0; font-size: .92em; }
th, td { border: 1px solid #ccc; padding: .25em .55em; vertical-align: top; }
th { background: #f3f3f3; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tr.holds td.verdict { background: #d8f3dc; color: #14532d; }
tr.misses td.verdict { background: #fde2e1; color: #7f1d1d; font-weight: 600; }
tr.inconclusive td.verdict { background: #fff3cd; color: #6b4f00; }
tr.info td.verdict { background: #eef2f7; color: #334; }
td.verdict { white-space: nowrap; }
.badge { display: inline-block; padding: .1em .5em; border-radius: .6em; font-size: .85em; }
.b-holds { background: #d8f3dc; color: #14532d; }
.b-misses { background: #fde2e1; color: #7f1d1d; }
.b-inconclusive { background: #fff3cd; color: #6b4f00; } .b-info { background: #eef2f7; }
figure { margin: 1.5em 0; } figure img { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { font-size: .9em; color: #444; margin-top: .3em; }
code { background: #f5f5f5; padding: 0 .2em; border-radius: 3px; }
dl.prov { display: grid; grid-template-columns: max-content auto; gap: .15em 1em;
          font-size: .92em; }
dl.prov dt { font-weight: 600; } dl.prov dd { margin: 0; }
nav.toc a { margin-right: 1em; } .muted { color: #666; font-size: .9em; }
"""

#: Verdict class → label; a comparison's own ``verdict`` string wins when it has one.
VERDICT_LABELS = {
    "holds": "✓ holds",
    "misses": "✗ misses",
    "inconclusive": "? inconclusive",
    "info": "— (no rule)",
}


def _esc(v: Any) -> str:
    return html.escape(str(v), quote=True)


def _fmt(v: Any) -> str:
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        if math.isnan(v):
            return "n/a"
        return f"{v:.4g}"
    if v is None:
        return "—"
    if isinstance(v, (list, tuple)):
        return ", ".join(_fmt(x) for x in v)
    return str(v)


def _md(text: str) -> str:
    """Markdown (the reports' sections: paragraphs, lists, tables, code, emphasis) → HTML."""
    import markdown

    return markdown.markdown(text, extensions=["tables"])


def _img(path: Path, alt: str) -> str:
    data = base64.b64encode(Path(path).read_bytes()).decode("ascii")
    return f'<img src="data:image/png;base64,{data}" alt="{_esc(alt)}">'


def _page(title: str, body: str) -> str:
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{_esc(title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n{body}\n"
        "</body>\n</html>\n"
    )


def _fields(obj: Any) -> dict[str, Any]:
    if is_dataclass(obj) and not isinstance(obj, type):
        return asdict(obj)
    if isinstance(obj, Mapping):
        return dict(obj)
    return dict(vars(obj))


def verdict_of(comparison: Any) -> tuple[str, str]:
    """(CSS class, label) of a comparison: its ``verdict`` string when it has one (``holds``,
    ``misses``, ``inconclusive`` or anything else), else from ``ok`` (True/False/None)."""
    f = _fields(comparison)
    v = f.get("verdict", getattr(comparison, "verdict", None))  # a field or a property
    if isinstance(v, str) and v:
        key = v.lower()
        cls = next(
            (c for c in ("holds", "misses", "inconclusive") if key.startswith(c[:4])), "info"
        )
        return cls, VERDICT_LABELS.get(key, v)
    ok = f.get("ok")
    cls = {True: "holds", False: "misses"}.get(ok, "info") if ok is not None else "info"
    return cls, VERDICT_LABELS[cls]


def seed_ranges(seeds: Iterable[int]) -> str:
    """``[1, 2, 3, 7]`` → ``"1-3, 7"``."""
    s = sorted(set(int(x) for x in seeds))
    if not s:
        return "—"
    parts: list[str] = []
    start = prev = s[0]
    for x in [*s[1:], None]:
        if x is not None and x == prev + 1:
            prev = x
            continue
        parts.append(str(start) if start == prev else f"{start}-{prev}")
        if x is not None:
            start = prev = x
    return ", ".join(parts)


def provenance(**extra: Any) -> dict[str, Any]:
    """What produced a page: tcplab version, Python, machine, time (UTC), plus ``extra``."""
    from tcplab.version import version

    try:
        from tcplab import _core

        core = str(_core.__version__)
    except ImportError:  # pragma: no cover - the simulator is always built where pages are made
        core = "not built"
    return {
        "tcplab": version(),
        "simulator core": core,
        "python": platform.python_version(),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs",
        "written (UTC)": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M:%S"),
        **extra,
    }


def _prov_html(prov: Mapping[str, Any]) -> str:
    rows = "".join(f"<dt>{_esc(k)}</dt><dd>{_esc(_fmt(v))}</dd>" for k, v in prov.items())
    return f'<h2 id="provenance">Provenance</h2>\n<dl class="prov">{rows}</dl>'


#: Columns shown first, in this order; any other field of a comparison follows them.
_FIRST = ("item", "kind", "paper", "tcplab", "unit", "rule")
_SKIP = {"ok", "verdict", "note"}


def _comparison_table(comparisons: Sequence[Any]) -> str:
    rows = [_fields(c) for c in comparisons]
    cols = [c for c in _FIRST if any(c in r and r[c] not in (None, "") for r in rows)]
    for r in rows:
        for k in r:
            if (
                k not in cols
                and k not in _SKIP
                and k not in _FIRST
                and any(rr.get(k) not in (None, "", [], {}) for rr in rows)
            ):
                cols.append(k)
    head = "".join(f"<th>{_esc(c)}</th>" for c in cols) + "<th>verdict</th><th>note</th>"
    body = []
    for c, r in zip(comparisons, rows, strict=True):
        cls, label = verdict_of(c)
        cells = []
        for col in cols:
            v = r.get(col)
            num = isinstance(v, (int, float)) and not isinstance(v, bool)
            cells.append(f"<td{' class=num' if num else ''}>{_esc(_fmt(v))}</td>")
        cells.append(f'<td class="verdict">{_esc(label)}</td>')
        cells.append(f"<td>{_esc(r.get('note', '') or '')}</td>")
        body.append(f'<tr class="{cls}">{"".join(cells)}</tr>')
    return (
        f"<table class=comparisons><thead><tr>{head}</tr></thead><tbody>"
        + "".join(body)
        + ("</tbody></table>")
    )


def tally(comparisons: Sequence[Any]) -> dict[str, int]:
    """How many comparisons hold, miss, are inconclusive or carry no rule."""
    out = {"holds": 0, "misses": 0, "inconclusive": 0, "info": 0}
    for c in comparisons:
        out[verdict_of(c)[0]] += 1
    return out


def _tally_html(t: Mapping[str, int]) -> str:
    parts = [
        f'<span class="badge b-{k}">{n} {VERDICT_LABELS[k].split(" ", 1)[1]}</span>'
        for k, n in t.items()
        if n
    ]
    return " ".join(parts) or '<span class="muted">no comparisons</span>'


def write_reproduce_report(report: Reproduction) -> Path:
    """``report.html`` beside ``report.md``: title, verdict tally, the comparison table (paper
    beside tcplab, with the rule and a coloured verdict), the report's sections (the differences
    from the paper among them), every figure embedded, and the provenance."""
    prov = {
        "paper": report.paper,
        "mode": "quick (fewer runs, wider confidence intervals)" if report.quick else "full",
        **getattr(report, "provenance", {}),
    }
    if "tcplab" not in prov:
        prov = {**provenance(), **prov}
    parts = [
        f"<h1>{_esc(report.title)}</h1>",
        f'<p class="muted">Paper <code>{_esc(report.paper)}</code> — '
        f"{'quick' if report.quick else 'full'} run. {_tally_html(tally(report.comparisons))}</p>",
        '<nav class="toc"><a href="#comparisons">comparisons</a>'
        + ("<a href=#sections>notes and differences</a>" if report.sections else "")
        + ("<a href=#figures>figures</a>" if report.figures else "")
        + '<a href="#provenance">provenance</a></nav>',
        "<h2 id=\"comparisons\">The paper's numbers beside tcplab's</h2>",
        _comparison_table(report.comparisons)
        if report.comparisons
        else "<p class=muted>This reproduction records no comparisons.</p>",
    ]
    if report.sections:
        parts.append('<div id="sections">')
        for title, text in report.sections:
            parts.append(f"<h2>{_esc(title)}</h2>\n{_md(text)}")
        parts.append("</div>")
    if report.figures:
        parts.append('<h2 id="figures">Figures</h2>')
        for name, caption in report.figures:
            path = report.out_dir / name
            if path.is_file():
                parts.append(
                    f"<figure>{_img(path, caption)}<figcaption>{_esc(caption)} "
                    f'<span class="muted">({_esc(name)})</span></figcaption></figure>'
                )
            else:
                parts.append(f"<p class=muted>figure {_esc(name)} is missing</p>")
    parts.append(_prov_html(prov))
    path = report.out_dir / "report.html"
    path.write_text(_page(report.title, "\n".join(parts)), encoding="utf-8")
    return path


def write_index(
    out_dir: Path,
    entries: Sequence[tuple[str, str, Path, Sequence[Any]] | tuple[str, str, Path, Sequence[Any],
                                                                    Mapping[str, Any]]],
    prov: Mapping[str, Any],
) -> Path:  # fmt: skip
    """``index.html`` for ``tcplab reproduce all``: one row per paper (title, verdict tally,
    link to its ``report.html``, and any further columns). ``entries``: (paper id, title,
    report.html path, comparisons[, {column: value}])."""
    extra_cols: list[str] = []
    for e in entries:
        for k in e[4] if len(e) > 4 else {}:  # type: ignore[misc]
            if k not in extra_cols:
                extra_cols.append(k)
    rows = []
    for e in entries:
        paper, title, page, comparisons = e[:4]
        extra = e[4] if len(e) > 4 else {}  # type: ignore[misc]
        rel = os.path.relpath(page, out_dir)
        cells = "".join(f"<td class=num>{_esc(_fmt(extra.get(k)))}</td>" for k in extra_cols)
        rows.append(
            f'<tr><td><a href="{_esc(rel)}">{_esc(paper)}</a></td><td>{_esc(title)}</td>'
            f"<td>{_tally_html(tally(comparisons))}</td>{cells}</tr>"
        )
    heads = "".join(f"<th>{_esc(k)}</th>" for k in extra_cols)
    body = (
        "<h1>tcplab: reproductions of the source papers</h1>\n"
        f"<table><thead><tr><th>paper</th><th>title</th><th>checks</th>{heads}</tr></thead>"
        "<tbody>" + "".join(rows) + "</tbody></table>\n" + _prov_html(prov)
    )
    path = out_dir / "index.html"
    out_dir.mkdir(parents=True, exist_ok=True)
    path.write_text(_page("tcplab reproductions", body), encoding="utf-8")
    return path


# -- tcplab run --out DIR -----------------------------------------------------------------------

_FLOW_COLS = (
    ("name", "flow", None),
    ("goodput_bps", "goodput (Mbit/s)", 1e-6),
    ("bytes_delivered", "delivered (MB)", 1e-6),
    ("duration_s", "active (s)", 1.0),
    ("segments_sent", "segments sent", None),
    ("retransmitted_segments", "retransmissions", None),
    ("fast_retransmits", "fast retransmits", None),
    ("timeouts", "timeouts", None),
    ("spurious_timeouts", "spurious timeouts (truth)", None),
    ("spurious_detected", "spurious detected", None),
    ("connections", "connections", None),
)
_LINK_COLS = (
    ("name", "link", None),
    ("dir", "dir", None),
    ("tx_packets", "tx packets", None),
    ("tx_bytes", "tx (MB)", 1e-6),
    ("drops_queue", "queue drops", None),
    ("drops_loss", "loss drops", None),
)


def _rows_table(rows: Sequence[Mapping[str, Any]], cols: Sequence[tuple[str, str, Any]]) -> str:
    cols = [c for c in cols if any(c[0] in r for r in rows)]
    head = "".join(f"<th>{_esc(label)}</th>" for _, label, _ in cols)
    body = []
    for r in rows:
        cells = []
        for key, _, scale in cols:
            v = r.get(key)
            if scale is not None and isinstance(v, (int, float)):
                v = v * scale
            if isinstance(v, int) and not isinstance(v, bool):
                text, num = f"{v:,}", True
            else:
                text, num = _fmt(v), isinstance(v, float)
            cells.append(f"<td{' class=num' if num else ''}>{_esc(text)}</td>")
        body.append(f"<tr>{''.join(cells)}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


_RUN_CAPTIONS = (
    (
        "-tseq.png",
        "Time-sequence graph: data segments as sent and as they arrive, the ACK line and SACK "
        "blocks as the sender gets them; retransmissions by reason (hollow = unnecessary), "
        "timeouts (spurious or genuine) and the detector's verdicts.",
    ),
    (
        "-episodes.png",
        "Each timeout and fast retransmit zoomed in; a star marks where an earlier copy of a "
        "retransmitted segment reached the receiver (why the retransmission was unnecessary).",
    ),
    ("-state.png", "Sender state: cwnd, ssthresh, bytes in flight; SRTT, RTTVAR, RTO; goodput."),
    (".png", "Link: packets queued per direction; cumulative drops by cause and direction."),
)


def _run_caption(name: str) -> str:
    return next(text for suffix, text in _RUN_CAPTIONS if name.endswith(suffix))


def write_run_report(
    result: RunResult, out_dir: Path, figures: Sequence[Path] = (), *, hint: str = ""
) -> Path:
    """``report.html`` of ``tcplab run --out DIR``: the per-flow and per-link summary tables and
    the run's figures (``figures``, e.g. from :func:`tcplab.report.runplot.plot_run`). The page
    holds nothing that changes between identical runs (no wall time, no timestamp)."""
    s = result.summary
    from tcplab.version import version

    head = (
        f"<h1>{_esc(result.scenario)}</h1>\n<p class=muted>seed {result.seed} — simulated "
        f"{float(s.get('sim_time_s') or 0):.3f} s — {int(s.get('events') or 0):,} events, "
        f"{int(s.get('packets') or 0):,} packets — tcplab {_esc(version())}</p>"
    )
    parts = [head, "<h2>Flows</h2>", _rows_table(s.get("flows", []), _FLOW_COLS)]
    parts += ["<h2>Links</h2>", _rows_table(s.get("links", []), _LINK_COLS)]
    violations = (s.get("invariants") or {}).get("violations") or []
    if violations:
        items = "".join(f"<li>{_esc(v)}</li>" for v in violations)
        parts.append(f"<h2>Invariant violations</h2><ul>{items}</ul>")
    if figures:
        parts.append("<h2>Figures</h2>")
        for p in figures:
            parts.append(
                f"<figure>{_img(p, p.stem)}<figcaption>{_esc(p.name)}</figcaption></figure>"
            )
    elif hint:
        parts.append(f"<p class=muted>{_esc(hint)}</p>")
    if result.provenance is not None:
        prov = {k: v for k, v in result.provenance.items() if k != "scenario_table"}
        if "command" in prov:
            prov["command"] = shlex.join(prov["command"])
        prov["scenario as run"] = json.dumps(result.provenance.get("scenario_table"))
        parts.append(_prov_html(prov))
    path = Path(out_dir) / "report.html"
    path.write_text(_page(f"tcplab run: {result.scenario}", "\n".join(parts)), encoding="utf-8")
    return path
