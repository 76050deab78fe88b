"""``tcplab reproduce --linux --linux-cache``: real transfers stored once, read back after."""

from __future__ import annotations

from pathlib import Path

import pytest

from tcplab import cli
from tcplab.real import cache as linux_cache


@pytest.fixture(autouse=True)
def _reset() -> object:
    yield
    linux_cache.use(None)


def test_a_stored_transfer_is_read_not_rerun(tmp_path: Path) -> None:
    linux_cache.use(tmp_path)
    runs: list[int] = []

    def run() -> dict[str, int]:
        runs.append(1)
        return {"timeouts": len(runs)}

    key = {"size": 2_000_000, "frto": 0, "seed": 1000}
    assert linux_cache.cached("t", key, run) == {"timeouts": 1}
    assert linux_cache.cached("t", key, run) == {"timeouts": 1}  # read back
    assert linux_cache.cached("t", {**key, "frto": 2}, run) == {"timeouts": 2}  # other settings
    assert len(runs) == 2 and linux_cache.counts == {"read": 1, "run": 2}
    assert len(list(tmp_path.glob("t-*.json"))) == 2


def test_without_a_cache_every_transfer_runs(tmp_path: Path) -> None:
    linux_cache.use(None)
    runs: list[int] = []
    for _ in range(2):
        linux_cache.cached("t", {"seed": 1}, lambda: runs.append(1) or {"x": 1})
    assert len(runs) == 2


def test_a_corrupt_stored_transfer_is_named(tmp_path: Path) -> None:
    linux_cache.use(tmp_path)
    linux_cache.cached("t", {"seed": 1}, lambda: {"x": 1})
    (stored,) = tmp_path.glob("t-*.json")
    stored.write_text("{not json")
    with pytest.raises(ValueError, match=f"{stored.name}: not a stored transfer"):
        linux_cache.cached("t", {"seed": 1}, lambda: {"x": 1})


def test_linux_cache_needs_linux(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["reproduce", "sto-3g", "--quick", "--linux-cache", str(tmp_path)]
    assert cli.main(argv) == 2
    assert capsys.readouterr().err.strip() == "tcplab: error: --linux-cache: needs --linux"
