"""Fixtures shared by the tests (helpers live in ``support.py``)."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest

import tcplab
from support import FakeCore


@pytest.fixture
def fake_core(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeCore]:
    """Replace ``tcplab._core`` with a :class:`FakeCore` (the real core's registries, which the
    scenario loader reads, are read first)."""
    from tcplab.scenario import registry

    try:
        registry.registry()
    except ImportError:
        pytest.skip("the core is not built (scenarios take their names from its registries)")
    core = FakeCore()
    monkeypatch.setitem(sys.modules, "tcplab._core", core)
    monkeypatch.setattr(tcplab, "_core", core, raising=False)
    yield core
