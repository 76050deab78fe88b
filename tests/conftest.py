"""Fixtures shared by the tests (helpers live in ``support.py``)."""

from __future__ import annotations

import signal
import sys
from collections.abc import Iterator

import pytest

import tcplab
from support import FakeCore

# A shell without job control starts a background job (`pytest ... &`, a CI runner's `.ci/run &`)
# with SIGINT ignored, and an ignored signal stays ignored in every program it starts: the tests
# that press Ctrl-C on a tcplab they started (SIGINT) then wait for an exit that never comes. With
# Python's own handler here, each child starts with SIGINT at its default, as under a terminal.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


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
