"""The Python sources pass ``ruff check`` and ``ruff format --check`` (the project's style)."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from support import REPO

PATHS = ["python", "tests", "validation"]


@pytest.mark.parametrize("command", [["check"], ["format", "--check"]], ids=" ".join)
def test_ruff(command: list[str]) -> None:
    ruff = shutil.which("ruff")
    if ruff is None or not (REPO / "pyproject.toml").is_file():
        pytest.skip("ruff or the source tree is not available")
    proc = subprocess.run(
        [ruff, *command, *PATHS], cwd=REPO, capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
