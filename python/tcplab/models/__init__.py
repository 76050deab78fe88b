"""Analytic models, each a plain function of SI quantities (bit/s, s, bytes, packets).

``tcplab model NAME key=value ...`` calls a registered model and prints its result as JSON;
``tcplab model`` lists them. Register a model with :func:`model` in its module and import the
module in :data:`_MODULES`.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from typing import Any

__all__ = ["MODELS", "get", "model", "names"]

#: model name → function
MODELS: dict[str, Callable[..., Any]] = {}

#: modules that register models (imported on first use)
_MODULES: list[str] = [
    "tcplab.models.classic",
    "tcplab.models.asymmetric",
    "tcplab.models.sto3g",
    "tcplab.models.wlan",
    "tcplab.models.throughput_bound",
]
_loaded = False


def model(name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator: register ``func`` as model ``name``."""

    def deco(func: Callable[..., Any]) -> Callable[..., Any]:
        if name in MODELS:
            raise ValueError(f"model {name!r} registered twice")
        MODELS[name] = func
        return func

    return deco


def _load() -> None:
    global _loaded
    if not _loaded:
        for m in _MODULES:
            importlib.import_module(m)
        _loaded = True


def names() -> list[str]:
    _load()
    return sorted(MODELS)


def get(name: str) -> Callable[..., Any]:
    _load()
    return MODELS[name]


def signature(name: str) -> str:
    func = get(name)
    return f"{name}{inspect.signature(func)}"
