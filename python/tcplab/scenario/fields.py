"""Typed readers of scenario fields: each takes a raw TOML value and its field path and
returns a checked value or raises a one-line :class:`~tcplab.errors.ScenarioError` naming the
field and the rule. :class:`Table` reads a TOML table (unknown keys rejected); loss models and
distributions are read here too, since several hop kinds take them."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any, Final, NoReturn

from tcplab.errors import field_error, show
from tcplab.scenario.units import parse_rate, parse_size, parse_time

__all__ = [
    "DIST_KEYS",
    "REQUIRED",
    "Table",
    "as_bool",
    "as_choice",
    "as_dist",
    "as_dist_value",
    "as_int",
    "as_kind",
    "as_loss_model",
    "as_number",
    "as_prob",
    "as_str",
    "check_range",
    "join_field",
    "missing_field",
    "unknown_rule",
]

REQUIRED: Final = object()


DIST_KEYS: Final[dict[str, tuple[str, ...]]] = {
    "const": ("value",),
    "uniform": ("lo", "hi"),
    "exponential": ("mean",),
    "lognormal": ("mu", "median", "sigma"),
    "pareto": ("scale", "shape"),
    "empirical": ("bins",),
}


def join_field(parent: str, key: str) -> str:
    return f"{parent}.{key}" if parent else key


def unknown_rule(key: str, allowed: Iterable[str]) -> str:
    # Imported here: only an invalid scenario needs it, and every `tcplab
    # run` would pay its import (with heapq) at start-up.
    import difflib

    allowed = sorted(allowed)
    close = difflib.get_close_matches(key, allowed, n=1)
    if close:
        return f'unknown field (did you mean "{close[0]}"?)'
    return f"unknown field (allowed: {', '.join(allowed)})"


def as_int(value: object, field: str, lo: int | None = None, hi: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise field_error(field, f"must be an integer (got {show(value)})")
    check_range(value, value, field, lo, hi)
    return value


def check_range(n: int, raw: object, field: str, lo: int | None, hi: int | None) -> None:
    if lo is not None and hi is not None and not lo <= n <= hi:
        raise field_error(field, f"must be between {lo} and {hi} (got {show(raw)})")
    if lo is not None and n < lo:
        raise field_error(field, f"must be ≥ {lo} (got {show(raw)})")


def as_bool(value: object, field: str) -> bool:
    if not isinstance(value, bool):
        raise field_error(field, f"must be true or false (got {show(value)})")
    return value


def as_str(value: object, field: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise field_error(field, f"must be a non-empty string (got {show(value)})")
    return value


def as_choice(value: object, field: str, choices: Iterable[str], what: str) -> str:
    choices = tuple(choices)
    if not isinstance(value, str) or value not in choices:
        raise field_error(field, f"unknown {what} {show(value)} (choose from {', '.join(choices)})")
    return value


def as_number(value: object, field: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise field_error(field, f"must be a number (got {show(value)})")
    return float(value)


def as_prob(value: object, field: str) -> float:
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    if not ok or not 0.0 <= value <= 1.0:  # type: ignore[operator]
        raise field_error(field, f"must be a probability between 0 and 1 (got {show(value)})")
    return float(value)  # type: ignore[arg-type]


class Table:
    """A TOML table under validation: rejects unknown keys and reads typed values."""

    def __init__(self, data: object, field: str, allowed: Iterable[str]) -> None:
        if not isinstance(data, dict):
            raise field_error(field, f"must be a table (got {show(data)})")
        allowed = tuple(allowed)
        for key in data:
            if key not in allowed:
                raise field_error(join_field(field, key), unknown_rule(key, allowed))
        self.data: dict[str, Any] = data
        self.field = field

    def __contains__(self, key: str) -> bool:
        return key in self.data

    def at(self, key: str) -> str:
        return join_field(self.field, key)

    def raw(self, key: str, default: object = REQUIRED) -> Any:
        if key in self.data:
            return self.data[key]
        if default is REQUIRED:
            raise field_error(self.at(key), "required field missing")
        return default

    def get_int(
        self,
        key: str,
        default: object = REQUIRED,
        lo: int | None = None,
        hi: int | None = None,
    ) -> int:
        return as_int(self.raw(key, default), self.at(key), lo, hi)

    def get_bool(self, key: str, default: object = REQUIRED) -> bool:
        return as_bool(self.raw(key, default), self.at(key))

    def get_str(self, key: str, default: object = REQUIRED) -> str:
        return as_str(self.raw(key, default), self.at(key))

    def get_choice(
        self, key: str, choices: Iterable[str], what: str, default: object = REQUIRED
    ) -> str:
        return as_choice(self.raw(key, default), self.at(key), choices, what)

    def get_time(self, key: str, default: object = REQUIRED, *, positive: bool = False) -> int:
        return parse_time(self.raw(key, default), self.at(key), positive=positive)

    def get_rate(self, key: str, default: object = REQUIRED) -> int:
        return parse_rate(self.raw(key, default), self.at(key))

    def get_size(self, key: str, default: object = REQUIRED, *, positive: bool = True) -> int:
        return parse_size(self.raw(key, default), self.at(key), positive=positive)

    def sub(self, key: str, allowed: Iterable[str]) -> Table | None:
        """The sub-table ``key`` (None if absent)."""
        if key not in self.data:
            return None
        return Table(self.data[key], self.at(key), allowed)

    def tables(self, key: str, *, required: bool) -> list[object]:
        """The array of tables ``key`` (``[[key]]``); each element is checked by the caller."""
        if key not in self.data:
            if required:
                raise field_error(self.at(key), f"required field missing (add a [[{key}]] table)")
            return []
        value = self.data[key]
        if not isinstance(value, list):
            raise field_error(self.at(key), f"must be an array of tables [[{key}]]")
        if required and not value:
            raise field_error(self.at(key), f"must have at least one [[{key}]] table")
        return value


def as_kind(value: object, field: str, kinds: Iterable[str], what: str) -> str:
    """The ``kind`` of a tagged table such as ``{kind = "exponential", mean = "2s"}``."""
    if not isinstance(value, dict):
        raise field_error(field, f'must be a table like {{kind = "...", ...}} (got {show(value)})')
    if "kind" not in value:
        missing_field(join_field(field, "kind"))
    return as_choice(value["kind"], join_field(field, "kind"), kinds, what)


def as_loss_model(value: object, field: str) -> dict[str, Any]:
    kind = as_kind(value, field, ("bernoulli", "gilbert_elliott"), "loss model")
    if kind == "bernoulli":
        t = Table(value, field, ("kind", "p"))
        return {"kind": "bernoulli", "p": as_prob(t.raw("p"), t.at("p"))}
    t = Table(value, field, ("kind", "p_gb", "p_bg", "loss_good", "loss_bad"))
    return {
        "kind": "gilbert_elliott",
        "p_gb": as_prob(t.raw("p_gb"), t.at("p_gb")),
        "p_bg": as_prob(t.raw("p_bg"), t.at("p_bg")),
        "loss_good": as_prob(t.raw("loss_good", 0.0), t.at("loss_good")),
        "loss_bad": as_prob(t.raw("loss_bad", 1.0), t.at("loss_bad")),
    }


def missing_field(field: str) -> NoReturn:
    raise field_error(field, "required field missing")


def as_dist_value(value: object, field: str, unit: str) -> float:
    if unit == "time":
        return float(parse_time(value, field))
    return float(parse_size(value, field, positive=False))


def as_dist(value: object, field: str, unit: str) -> dict[str, Any]:
    """A distribution of sizes (``unit="size"``) or times (``unit="time"``) → ``Dist``.

    A plain value is shorthand for ``{kind = "const", value = ...}``.
    """
    if not isinstance(value, dict):
        v = as_dist_value(value, field, unit)
        if unit == "size" and v < 1:
            raise field_error(field, f"must be ≥ 1 byte (got {show(value)})")
        return {"kind": "const", "value": v}
    kind = as_kind(value, field, DIST_KEYS, "distribution")
    t = Table(value, field, ("kind", *DIST_KEYS[kind]))

    def val(key: str, *, positive: bool = False) -> float:
        v = as_dist_value(t.raw(key), t.at(key), unit)
        if positive and v <= 0:
            raise field_error(t.at(key), f"must be > 0 (got {show(t.raw(key))})")
        return v

    def positive_number(key: str) -> float:
        x = as_number(t.raw(key), t.at(key))
        if x <= 0:
            raise field_error(t.at(key), f"must be > 0 (got {show(t.raw(key))})")
        return x

    if kind == "const":
        if unit == "size" and val("value") < 1:
            raise field_error(t.at("value"), f"must be ≥ 1 byte (got {show(t.raw('value'))})")
        return {"kind": kind, "value": val("value")}
    if kind == "uniform":
        lo, hi = val("lo"), val("hi")
        if hi <= lo:
            raise field_error(
                t.at("hi"),
                f"must be > lo ({show(t.raw('lo'))}) (got {show(t.raw('hi'))})",
            )
        return {"kind": kind, "lo": lo, "hi": hi}
    if kind == "exponential":
        return {"kind": kind, "mean": val("mean", positive=True)}
    if kind == "lognormal":
        if ("mu" in t) == ("median" in t):
            raise field_error(t.at("median"), 'give exactly one of "median" (with units) or "mu"')
        if "median" in t:
            mu = math.log(val("median", positive=True))
        else:
            mu = as_number(t.raw("mu"), t.at("mu"))
        return {"kind": kind, "mu": mu, "sigma": positive_number("sigma")}
    if kind == "pareto":
        return {
            "kind": kind,
            "scale": val("scale", positive=True),
            "shape": positive_number("shape"),
        }
    bins_raw = t.raw("bins")
    if not isinstance(bins_raw, list) or not bins_raw:
        raise field_error(
            t.at("bins"),
            f"must be a non-empty list of [lo, hi, weight] (got {show(bins_raw)})",
        )
    bins = []
    for i, b in enumerate(bins_raw):
        bf = f"{t.at('bins')}[{i}]"
        if not isinstance(b, list) or len(b) != 3:
            raise field_error(bf, f"must be [lo, hi, weight] (got {show(b)})")
        lo = as_dist_value(b[0], f"{bf}[0]", unit)
        hi = as_dist_value(b[1], f"{bf}[1]", unit)
        if hi <= lo:
            raise field_error(f"{bf}[1]", f"must be > lo ({show(b[0])}) (got {show(b[1])})")
        weight = as_number(b[2], f"{bf}[2]")
        if weight <= 0:
            raise field_error(f"{bf}[2]", f"weight must be > 0 (got {show(b[2])})")
        bins.append([lo, hi, weight])
    if not math.isfinite(sum(b[2] for b in bins)):
        raise field_error(t.at("bins"), "the weights must sum to a finite number")
    return {"kind": kind, "bins": bins}
