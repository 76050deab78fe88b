"""Parse the quantities a scenario is written in into the simulator's base units.

- Rates → bit/s (int). ``"10Mbps"``, ``"384kbps"``, ``"1.5Gbps"``, ``"9600bps"``. Prefixes are
  SI (k = 10³, M = 10⁶, G = 10⁹, T = 10¹²); the unit is case-insensitive (``"10mbps"`` is 10 Mbit/s,
  there being no millibit); ``"Mbit/s"`` spellings are accepted too. A bare number is rejected.
- Times → ns (int). Units ``ns``, ``us`` (or ``µs``), ``ms``, ``s``, ``min``, ``h``; case-sensitive.
  A bare number is rejected, except ``0``. At most 10⁶ h (:data:`TIME_MAX_NS`).
- Sizes → bytes (int). ``B``; SI ``KB``/``kB`` = 1000 B, ``MB`` = 10⁶ B, ``GB`` = 10⁹ B; binary
  ``KiB`` = 1024 B, ``MiB`` = 2²⁰ B, ``GiB`` = 2³⁰ B; case-sensitive (``"64kb"`` would be kilobits
  and is rejected). A bare integer (or a string of digits) is a number of bytes.

Arithmetic is exact (decimal): a value that does not come out as a whole number of base units
(``"1.5bps"``, ``"0.5ns"``) is an error, never rounded. Every error is a :class:`ScenarioError`
whose one-line message names the field and the rule, e.g.
``path[0].rate: must be a rate like "10Mbps" (got "10ms")``.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation, localcontext

from tcplab.errors import field_error, show

__all__ = ["parse_rate", "parse_size", "parse_time"]

U64_MAX = 2**64 - 1
#: The longest time any setting may take: 10⁶ hours (``MAX_TIME_NS`` in the Rust core). With
#: every time at most this, no sum of times the simulator forms can overflow its 64-bit clock.
TIME_MAX_NS = 10**6 * 3600 * 10**9
TIME_MAX_TEXT = "1000000h"

_RATE_UNITS: dict[str, int] = {
    "bps": 1,
    "kbps": 10**3,
    "mbps": 10**6,
    "gbps": 10**9,
    "tbps": 10**12,
    "bit/s": 1,
    "kbit/s": 10**3,
    "mbit/s": 10**6,
    "gbit/s": 10**9,
    "tbit/s": 10**12,
}
_TIME_UNITS: dict[str, int] = {
    "ns": 1,
    "us": 10**3,
    "\u00b5s": 10**3,  # micro sign
    "\u03bcs": 10**3,  # Greek small letter mu
    "ms": 10**6,
    "s": 10**9,
    "min": 60 * 10**9,
    "h": 3600 * 10**9,
}
_SIZE_UNITS: dict[str, int] = {
    "B": 1,
    "KB": 10**3,
    "kB": 10**3,
    "MB": 10**6,
    "GB": 10**9,
    "KiB": 2**10,
    "MiB": 2**20,
    "GiB": 2**30,
}

#: A number (ASCII digits only: ``re``'s ``\d`` would take Arabic-Indic or full-width digits
#: for digits) and a unit.
_QUANTITY = re.compile(
    r"\s*([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)\s*(\S*?)\s*"
)
#: Decimal exponents beyond which no unit brings a number into range: above it every value is
#: larger than any limit (2⁶⁴), below it smaller than one base unit.
_EXPONENT_LIMIT = 40


def _times(number: Decimal, factor: int) -> Decimal:
    """``number * factor``, exactly: no decimal overflow or underflow, no rounding. A number
    beyond ±10^:data:`_EXPONENT_LIMIT` (``"1e99999999999s"``, ``"1e-9999999s"``) stands in as
    ±10^±(limit+1), which every check judges as it judges the number itself."""
    if number.is_zero():
        return Decimal(0)
    if number.adjusted() > _EXPONENT_LIMIT:
        number = Decimal((number.is_signed(), (1,), _EXPONENT_LIMIT + 1))
    elif number.adjusted() < -_EXPONENT_LIMIT:
        number = Decimal((number.is_signed(), (1,), -_EXPONENT_LIMIT - 1))
    with localcontext() as ctx:
        ctx.prec = len(number.as_tuple().digits) + 2 * _EXPONENT_LIMIT
        return number * factor


def _split(text: str) -> tuple[Decimal, str] | None:
    """``"1.5 Mbps"`` → ``(Decimal("1.5"), "Mbps")``; None if it is not number + unit."""
    m = _QUANTITY.fullmatch(text)
    if m is None:
        return None
    try:
        return Decimal(m.group(1)), m.group(2)
    except InvalidOperation:  # pragma: no cover - the regex only admits valid decimals
        return None


def _finish(
    amount: Decimal, value: object, field: str, base: str, positive: bool, maximum: int
) -> int:
    """Check sign, integrality and range of an amount in base units."""
    if positive and amount <= 0:
        raise field_error(field, f"must be > 0 (got {show(value)})")
    if amount < 0:
        raise field_error(field, f"must be ≥ 0 (got {show(value)})")
    if amount != amount.to_integral_value():
        raise field_error(field, f"must be a whole number of {base} (got {show(value)})")
    result = int(amount)
    if result > maximum:
        if base == "ns" and maximum == TIME_MAX_NS:
            rule = f"must be at most {TIME_MAX_TEXT}, the longest time tcplab takes"
        else:
            rule = f"must be at most {maximum} {base}"
        raise field_error(field, f"{rule} (got {show(value)})")
    return result


def parse_rate(value: object, field: str = "rate", *, maximum: int = U64_MAX) -> int:
    """A rate string → bit/s. Rates must be > 0."""
    rule = f'must be a rate like "10Mbps" (got {show(value)})'
    if not isinstance(value, str):
        raise field_error(field, rule)
    parts = _split(value)
    if parts is None or parts[1].lower() not in _RATE_UNITS:
        raise field_error(field, rule)
    number, unit = parts
    return _finish(_times(number, _RATE_UNITS[unit.lower()]), value, field, "bit/s", True, maximum)


def parse_time(
    value: object,
    field: str = "time",
    *,
    positive: bool = False,
    maximum: int = TIME_MAX_NS,
) -> int:
    """A time string (or the integer 0) → ns. Times must be ≥ 0, or > 0 if ``positive``, and
    at most ``maximum`` (default :data:`TIME_MAX_NS`, 10⁶ h)."""
    rule = f'must be a time like "50ms" (got {show(value)})'
    if isinstance(value, int) and not isinstance(value, bool) and value == 0:
        return _finish(Decimal(0), value, field, "ns", positive, maximum)
    if not isinstance(value, str):
        raise field_error(field, rule)
    parts = _split(value)
    if parts is None or parts[1] not in _TIME_UNITS:
        raise field_error(field, rule)
    number, unit = parts
    return _finish(_times(number, _TIME_UNITS[unit]), value, field, "ns", positive, maximum)


def parse_size(
    value: object,
    field: str = "size",
    *,
    positive: bool = True,
    bare: bool = True,
    maximum: int = U64_MAX,
) -> int:
    """A size string or an integer number of bytes → bytes. Sizes must be > 0 unless
    ``positive=False`` (then ≥ 0). With ``bare=False`` a unit is required (for keys where a
    bare integer means something else, e.g. a queue of N packets)."""
    if bare:
        rule = f'must be a size like "64KB" or a whole number of bytes (got {show(value)})'
    else:
        rule = f'must be a size like "64KB" (got {show(value)})'
    if bare and isinstance(value, int) and not isinstance(value, bool):
        return _finish(Decimal(value), value, field, "bytes", positive, maximum)
    if not isinstance(value, str):
        raise field_error(field, rule)
    parts = _split(value)
    if parts is None or (parts[1] == "" and not bare):
        raise field_error(field, rule)
    number, unit = parts
    if unit == "":
        factor = 1
    elif unit in _SIZE_UNITS:
        factor = _SIZE_UNITS[unit]
    else:
        raise field_error(field, rule)
    return _finish(_times(number, factor), value, field, "bytes", positive, maximum)
