"""Fixtures shared by the tests (helpers live in ``support.py``)."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest

import tcplab
from support import FakeCore


@pytest.fixture
def fake_core(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeCore]:
    """Replace ``tcplab._core`` (built or not) with a :class:`FakeCore`."""
    core = FakeCore()
    monkeypatch.setitem(sys.modules, "tcplab._core", core)
    monkeypatch.setattr(tcplab, "_core", core, raising=False)
    yield core
