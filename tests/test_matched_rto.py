"""validation/linux/matched_rto.py on a fake one-case draw: it reads the draw and the Linux
cache as validate writes them, replays the cached late releases, and counts a case against
the RTO target only where Linux took no timeout."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from support import load_script

MR = load_script("validation/linux/matched_rto.py", "matched_rto")

# A short lossy CUBIC case on a 3-packet queue: the matched stack times out there.
KEYS = {"cc": "cubic", "rate_bps": 10_000_000, "rtt_ms": 10.0, "loss": 0.02, "queue": 3}
KEYS |= {"duration_s": 4.0, "warmup_s": 1.0}
CASE = MR.Case(**KEYS)
LATE = [[[1.5, 3000.0, "fwd", 1.499]], []]


def _draw(tmp_path: Path, linux_rtos: float) -> tuple[Path, Path]:
    spec = "cc=cubic,rate=10000000bps,rtt=10ms,loss=0.02,queue=3,duration=4s"
    row = {"case": {"spec": spec, "index": 7, **KEYS}, "linux": {"rtos": linux_rtos}}
    results = tmp_path / "results.json"
    results.write_text(json.dumps({"cases": [row]}))
    cache = tmp_path / "cache"
    cache.mkdir()
    for k, late in enumerate(LATE):
        path = MR.cache_file(cache, CASE, 1000 + k)
        path.write_text(json.dumps({"extra": {"late_releases": late}}))
    return results, cache


@pytest.mark.parametrize("linux_rtos", [0.0, 1.0])
def test_counts_follow_the_per_run_timeouts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], linux_rtos: float
) -> None:
    results, cache = _draw(tmp_path, linux_rtos)
    assert MR.main([str(results), str(cache), "--runs", "2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("  7 cc=cubic,rate=10000000bps")
    cells = lines[0].split(" | ")[1:]
    per_run = {name: float(c.split()[-1]) for name, c in zip(MR.VARIANTS, cells, strict=True)}
    for name, extra in MR.VARIANTS.items():
        direct = sum(MR.timeouts(CASE, 1000 + k, extra, late) for k, late in enumerate(LATE))
        assert per_run[name] == pytest.approx(direct / 2, abs=0.05)
        summary = next(x for x in lines[1:] if x.startswith(f"{name}:"))
        assert summary.endswith("[7]") == (direct / 2 > 0.5 and linux_rtos == 0)
    # The case does exercise the rule: matched times out here, matched + RACK does not.
    assert per_run["matched"] > 0.5
    assert per_run["matched+rack"] == 0
