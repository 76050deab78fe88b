"""Run figures (``tcplab.report.runplot``), the segment trace behind them, and the HTML pages
(``tcplab.report.html``), the last rendered in a real browser (headless Chromium)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import tcplab
from support import SCENARIOS
from tcplab.cli import main
from tcplab.report.checks import Comparison, Factor, Info, Report, Within
from tcplab.report.html import provenance, seed_ranges, verdict_of, write_index
from tcplab.report.runplot import decimate, unnecessary_retransmissions
from tcplab.results import RunResult

core = pytest.mark.core

#: A short piece of the 3G train scenario: two downloads, spurious timeouts in the first minute.
FRTO_SHORT = ["duration=60s"]


@pytest.fixture(scope="module")
def traced(tmp_path_factory: pytest.TempPathFactory) -> tuple[RunResult, Path]:
    pytest.importorskip("tcplab._core")
    out = tmp_path_factory.mktemp("traced")
    sc = tcplab.load_scenario(SCENARIOS / "3g-train-frto.toml", overrides=FRTO_SHORT)
    return tcplab.run(sc, out=out, trace=True), out


# -- data --------------------------------------------------------------------------------------


def test_decimate_keeps_every_extreme_and_order() -> None:
    x = np.arange(100_000, dtype=float)
    y = np.sin(x / 300.0) + (x == 54_321) * 5.0  # one spike a plain stride would miss
    xs, ys = decimate(x, y, bins=500)
    assert len(xs) <= 1000
    assert np.all(np.diff(xs) >= 0)
    assert ys.max() == y.max() and ys.min() == y.min()
    small_x, _ = decimate(x[:50], y[:50], bins=500)
    assert small_x is x[:50] or np.array_equal(small_x, x[:50])


def test_unnecessary_retransmission_ground_truth() -> None:
    ev = pd.DataFrame(
        {
            "kind": ["retransmit", "retransmit", "timeout"],
            "flow": [0, 0, 0],
            "conn": [0, 0, 0],
            "seq": [1461, 2921, 1461],
            "t_ns": [5_000, 9_000, 5_000],
        }
    )
    seg = pd.DataFrame(
        {
            "kind": ["arrive", "arrive", "arrive"],
            "flow": [0, 0, 0],
            "conn": [0, 0, 0],
            "seq": [1461, 2921, 2921],
            "len": [1460, 1460, 1460],
            "t_ns": [7_000, 9_500, 12_000],
            # 1461's first copy left at 1000 (before the retransmission at 5000): unnecessary;
            # 2921 only arrived as copies sent at 9000 or later: the retransmission was needed
            "sent_ns": [1_000, 9_000, 9_100],
        }
    )
    flags, first = unnecessary_retransmissions(ev, seg)
    assert flags.tolist() == [True, False]
    assert first.tolist() == [7_000, -1]


@core
def test_trace_changes_no_other_output(tmp_path: Path) -> None:
    sc = tcplab.load_scenario(SCENARIOS / "3g-train-frto.toml", overrides=FRTO_SHORT)
    plain = tcplab.run(sc, out=tmp_path / "plain")
    traced = tcplab.run(sc, out=tmp_path / "traced", trace=True)
    assert plain.summary == traced.summary
    for name in ("summary.json", "flows.parquet", "timeseries.parquet", "events.parquet"):
        assert (tmp_path / "plain" / name).read_bytes() == (tmp_path / "traced" / name).read_bytes()
    assert not (tmp_path / "plain" / "segments.parquet").exists()
    assert (tmp_path / "traced" / "segments.parquet").exists()
    with pytest.raises(ValueError, match="trace=True"):
        _ = plain.segments


@core
def test_segment_trace_matches_the_counters(traced: tuple[RunResult, Path]) -> None:
    result, _ = traced
    seg, flow = result.segments, result.flows.iloc[0]
    kinds = seg["kind"].astype(str)
    # every data segment the sender sent is in the trace, once
    assert (kinds == "send").sum() == flow["data_segments_sent"]
    assert (kinds == "ack").sum() > 0
    # a copy reaches the receiver after it was sent
    arr = seg[kinds == "arrive"]
    assert (arr["t_ns"] > arr["sent_ns"]).all()
    # retransmissions: the events' offsets are the trace's offsets (same segment resent)
    ev = result.events
    rtx = ev[(ev["kind"] == "retransmit") & (ev["seq"] > 0)]
    sent = set(zip(seg.loc[kinds == "send", "t_ns"], seg.loc[kinds == "send", "seq"], strict=True))
    assert len(rtx) and all((t, s) in sent for t, s in zip(rtx["t_ns"], rtx["seq"], strict=True))
    # the spurious timeouts' retransmissions were unnecessary by the trace's ground truth too
    flags, _ = unnecessary_retransmissions(ev, seg)
    rtx_all = ev[ev["kind"] == "retransmit"].reset_index(drop=True)
    spurious_t = set(ev.loc[(ev["kind"] == "timeout") & (ev["spurious"] == 1), "t_ns"])
    for i, row in rtx_all.iterrows():
        if row["t_ns"] in spurious_t and row["reason_name"] == "timeout":
            assert flags[i], f"retransmission at {row['t_ns']} after a spurious timeout"
    q = result.queues
    assert set(q["link"]) == {"radio"} and set(q["dir"].astype(str)) == {"fwd", "rev"}
    assert q["packets"].max() > 0


@pytest.fixture(scope="module")
def plotted(traced: tuple[RunResult, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``tcplab plot`` of the traced run's directory, zoomed to 20-40 s, into a new directory."""
    _, out = traced
    dest = tmp_path_factory.mktemp("plotted")
    assert main(["plot", str(out), "--out", str(dest), "--window", "20s:40s"]) == 0
    return dest


@core
def test_read_round_trip_and_plot_command(
    traced: tuple[RunResult, Path], plotted: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    result, out = traced
    back = RunResult.read(out)
    assert back.traced and back.summary["flows"] == result.summary["flows"]
    pd.testing.assert_frame_equal(back.segments, result.segments)
    names = sorted(p.name for p in plotted.iterdir())
    assert names == [
        "flow0-episodes.png",
        "flow0-state.png",
        "flow0-tseq.png",
        "link0-radio.png",
        "report.html",
    ]
    capsys.readouterr()
    assert main(["plot", str(out), "--flow", "7"]) == 2
    assert "no flow 7" in capsys.readouterr().err
    assert main(["plot", str(out), "--window", "9:3"]) == 2
    assert "--window: must be 0 <= START < END" in capsys.readouterr().err


# -- long runs: the trace on disk, the figures drawn from it in pieces ---------------------------

#: A p2p-bulk run records about 2,100 segment-trace rows per simulated second: 40 s is past one
#: spill (65,536 rows), 360 s nine times as many rows.
SHORT_S, LONG_S = 40, 360


@core
def test_a_spilled_trace_is_the_trace_held_in_memory(tmp_path: Path) -> None:
    """The segment trace and queue samples stream to disk past 65,536 rows (output.rs); the
    files are the ones the same run held in memory writes, and nothing is left behind."""
    sc = tcplab.load_scenario(None, overrides=[f"duration={SHORT_S}s"])
    out = tmp_path / "spilled"
    assert tcplab.run(sc, out=out, trace=True).spilled
    held = tcplab.run(sc, trace=True)
    assert len(held.segments) > 65_536 and not held.spilled
    held.write(tmp_path / "held")
    for name in ("segments.parquet", "queues.parquet"):
        assert (out / name).read_bytes() == (tmp_path / "held" / name).read_bytes(), name
    assert not list(out.glob(".*spill"))
    back = RunResult.read(out)
    pieces = list(back.batches("segments"))
    assert max(len(p) for p in pieces) <= 65_536 and len(pieces) > 1
    pd.testing.assert_frame_equal(pd.concat(pieces, ignore_index=True), held.segments)


_PLOT_PEAK = """
import gc, sys
from pathlib import Path
import tcplab

def kb(key):
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(key):
            return int(line.split()[1])

def run_and_plot(secs, out):
    # what `tcplab run --plot --out` does; a short window keeps the drawing cheap, while
    # reading the trace for it is the whole run's
    sc = tcplab.load_scenario(None, overrides=[f"duration={secs}s"])
    tcplab.run(sc, out=out, trace=True).plot(out, window=(0.0, 2.0))

short, long, tmp = int(sys.argv[1]), int(sys.argv[2]), Path(sys.argv[3])
run_and_plot(short, tmp / "warm")  # imports and the allocator's first arenas
for i, secs in enumerate((short, long) * 2):
    gc.collect()
    Path("/proc/self/clear_refs").write_text("5")  # resets VmHWM (peak RSS)
    base = kb("VmRSS")
    run_and_plot(secs, tmp / str(i))
    print((kb("VmHWM") - base) / 1024)
"""


@core
@pytest.mark.skipif(not Path("/proc/self/clear_refs").exists(), reason="needs Linux /proc")
def test_a_long_run_takes_no_more_memory_to_record_and_draw_than_a_short_one(
    tmp_path: Path,
) -> None:
    """The segment trace streams to disk (output.rs) and the figures read it in pieces,
    keeping only what they can show, so the peak memory of a traced run and of drawing its
    figures does not grow with the run. Measured in a fresh process that runs and draws both
    durations twice after a warm-up (the lower peak of each counts), with large blocks given
    back to the system when freed (``MALLOC_MMAP_THRESHOLD_``), so the peak is what the code
    held rather than what the allocator kept. 9x the trace (84k -> 756k rows) took about
    65 to 92 MB more when the simulator and the figures held the whole trace; now 10 to 21 MB, a
    step that does not grow further (24x the trace, 2M rows, is no more)."""
    env = {**os.environ, "MALLOC_MMAP_THRESHOLD_": "65536"}
    proc = subprocess.run(
        [sys.executable, "-c", _PLOT_PEAK, str(SHORT_S), str(LONG_S), str(tmp_path)],
        capture_output=True, text=True, check=True, timeout=300, env=env,
    )  # fmt: skip
    peaks = [float(x) for x in proc.stdout.split()]
    short, long = min(peaks[0::2]), min(peaks[1::2])
    assert long - short < 40, f"peak grew by {long - short:.1f} MB ({short:.1f} -> {long:.1f})"


# -- HTML pages --------------------------------------------------------------------------------


def test_verdicts_and_seed_ranges() -> None:
    assert verdict_of(Comparison("a", "prediction", 1, 1, verdict="holds"))[0] == "holds"
    assert verdict_of(Comparison("a", "prediction", 1, 2, verdict="misses"))[0] == "misses"
    assert verdict_of(Comparison("a", "context", 1, 2))[0] == "info"
    assert verdict_of(Comparison("a", "formula", 1, 2, verdict="inconclusive"))[0] == "inconclusive"
    assert verdict_of({"item": "x", "verdict": "misses"})[0] == "misses"
    assert seed_ranges([5, 1, 2, 3, 9, 10]) == "1-3, 5, 9-10"
    assert seed_ranges([]) == "—"


def _figure(path: Path, colour: str) -> None:
    from tcplab.report import plots

    fig, ax = plots.figure()
    ax.plot([0, 1, 2], [0, 2, 1], color=colour, label="tcplab")
    plots.mark_paper(ax, [1], [1.5])
    ax.set_xlabel("time (s)")
    ax.set_ylabel("goodput (Mbit/s)")
    ax.legend()
    plots.save(fig, path)


def synthetic_report(out: Path) -> Report:
    """A small report with every kind of content a reproduction writes."""
    r = Report("demo-paper", "Demo: a synthetic reproduction", out / "demo-paper", quick=True)
    r.check("Fig. 1 goodput", Within(1.0, rel=0.05), 1.02, unit="Mbit/s")
    r.check("Table 2 timeouts", Factor(3, 2), 7, unit="per MB", note="see 3")
    r.check("Eq. 4 model", Within(0.5, rel=0.1, kind="formula"), 0.61, ci=0.2)
    r.check("extra", Info(), 12.5, unit="s")
    r.section("Differences from the paper", "- **Radio**: calibrated\n- `code` and *emphasis*")
    r.section("A table", "| a | b |\n|---|---|\n| 1 | 2 |")
    r.out_dir.mkdir(parents=True, exist_ok=True)
    for name, colour in (("fig1.png", "tab:blue"), ("fig2.png", "tab:red")):
        _figure(r.out_dir / name, colour)
        r.figure(r.out_dir / name, f"caption of {name}")
    r.provenance = {"seeds": "1-3"}
    return r


def test_reproduce_report_html_is_self_contained(tmp_path: Path) -> None:
    r = synthetic_report(tmp_path)
    r.write()
    page = (r.out_dir / "report.html").read_text("utf-8")
    assert page.count("data:image/png;base64,") == 2
    assert 'src="fig' not in page  # embedded, not linked
    assert 'class="holds"' in page and 'class="misses"' in page and 'class="inconclusive"' in page
    assert "<th>kind</th>" in page and "formula" in page
    assert "<strong>Radio</strong>" in page and "<table>" in page
    assert "Differences from the paper" in page and "1-3" in page and "quick" in page
    index = write_index(
        tmp_path, [("demo-paper", r.title, r.out_dir / "report.html", r.comparisons)], {}
    )
    assert 'href="demo-paper/report.html"' in index.read_text("utf-8")


# -- in a real browser -------------------------------------------------------------------------

_CHECK = """<script>
window.addEventListener("load", () => {
  const imgs = Array.from(document.images);
  const bad = imgs.filter((i) => !(i.complete && i.naturalWidth > 0)).length;
  document.body.setAttribute("data-images", String(imgs.length));
  document.body.setAttribute("data-broken", String(bad));
  document.body.setAttribute("data-checked", "yes");
});
</script>"""


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    pytest.skip("Chromium is not installed (Debian: apt-get install chromium); .ci/run installs it")


def _browser(binary: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    flags = ["--headless", "--disable-gpu", "--hide-scrollbars", "--no-first-run"]
    flags += ["--disable-dev-shm-usage", "--virtual-time-budget=10000"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        flags.append("--no-sandbox")  # Chromium refuses to sandbox as root (CI containers)
    return subprocess.run(
        [binary, *flags, f"--user-data-dir={cwd / 'profile'}", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
    )


def render(page: Path, shot: Path, tmp: Path) -> tuple[int, int]:
    """Load ``page`` in Chromium once: screenshot it (1280 by 2400 px) and count its images and
    broken images after load (on a copy of the page with a checking script that marks the body,
    read back with --dump-dom; the script changes nothing visible)."""
    binary = _chromium()
    probe = page.with_name(page.stem + ".probe.html")
    probe.write_text(page.read_text("utf-8").replace("</body>", _CHECK + "</body>"), "utf-8")
    try:
        proc = _browser(
            binary,
            f"--screenshot={shot}",
            "--window-size=1280,2400",
            "--dump-dom",
            probe.as_uri(),
            cwd=tmp,
        )
    finally:
        probe.unlink()
    assert shot.is_file(), proc.stderr[-2000:]
    m = re.search(r'data-images="(\d+)" data-broken="(\d+)" data-checked="yes"', proc.stdout)
    assert m, f"the check script did not run: {proc.stdout[:500]} {proc.stderr[-1000:]}"
    return int(m.group(1)), int(m.group(2))


def assert_not_blank(shot: Path) -> None:
    import matplotlib.image as mpimg

    img = mpimg.imread(shot)[..., :3]
    ink = int((img.mean(axis=2) < 0.9).sum())  # pixels that are not (near) white
    colours = len(np.unique((img * 255).astype(np.uint8).reshape(-1, 3), axis=0))
    assert ink > 5000 and colours > 50, (
        f"{shot.name}: looks blank (ink {ink} px, {colours} colours)"
    )


def test_pages_render_in_chromium(tmp_path: Path) -> None:
    _chromium()
    r = synthetic_report(tmp_path)
    r.write()
    entries = [("demo-paper", r.title, r.out_dir / "report.html", r.comparisons)]
    index = write_index(tmp_path, entries, provenance(mode="quick"))
    for page, want in ((r.out_dir / "report.html", 2), (index, 0)):
        shot = tmp_path / f"{page.parent.name}-{page.stem}.png"
        images, broken = render(page, shot, tmp_path)
        assert (images, broken) == (want, 0), page
        assert_not_blank(shot)
    # the index links to a page that exists
    href = re.search(r'href="([^"]+)"', index.read_text("utf-8"))
    assert href and (tmp_path / href.group(1)).is_file()


@core
def test_run_report_renders_in_chromium(plotted: Path, tmp_path: Path) -> None:
    _chromium()
    images, broken = render(plotted / "report.html", tmp_path / "run-report.png", tmp_path)
    assert (images, broken) == (4, 0)
    assert_not_blank(tmp_path / "run-report.png")
