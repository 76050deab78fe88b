from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tcplab.errors import ScenarioError
from tcplab.scenario.units import parse_rate, parse_size, parse_time


@pytest.mark.parametrize(
    ("text", "bps"),
    [
        ("10Mbps", 10_000_000),
        ("384kbps", 384_000),
        ("1.5Gbps", 1_500_000_000),
        ("9600bps", 9600),
        ("10 Mbps", 10_000_000),
        ("10mbps", 10_000_000),
        ("2.5Mbit/s", 2_500_000),
        ("1e3kbps", 1_000_000),
        ("0.032Mbps", 32_000),
    ],
)
def test_rates(text: str, bps: int) -> None:
    assert parse_rate(text) == bps


@pytest.mark.parametrize(
    ("text", "ns"),
    [
        ("50ms", 50_000_000),
        ("1.5s", 1_500_000_000),
        ("600s", 600_000_000_000),
        ("200us", 200_000),
        ("200µs", 200_000),
        ("10ns", 10),
        ("2min", 120_000_000_000),
        ("1h", 3_600_000_000_000),
        ("0s", 0),
        (0, 0),
        (".5s", 500_000_000),
    ],
)
def test_times(text: str | int, ns: int) -> None:
    assert parse_time(text) == ns


@pytest.mark.parametrize(
    ("value", "size"),
    [
        ("64KB", 64_000),
        ("64kB", 64_000),
        ("1MB", 1_000_000),
        ("1.5MB", 1_500_000),
        ("1GB", 1_000_000_000),
        ("64KiB", 65_536),
        ("1MiB", 1_048_576),
        ("1GiB", 1_073_741_824),
        ("1448B", 1448),
        ("1448", 1448),
        (1448, 1448),
    ],
)
def test_sizes(value: str | int, size: int) -> None:
    assert parse_size(value) == size


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda: parse_rate("10ms", "path[0].rate"),
            'path[0].rate: must be a rate like "10Mbps" (got "10ms")',
        ),
        (lambda: parse_rate(10, "r"), 'r: must be a rate like "10Mbps" (got 10)'),
        (lambda: parse_rate("fast", "r"), 'r: must be a rate like "10Mbps" (got "fast")'),
        (
            lambda: parse_rate("-10Mbps", "path[0].rate"),
            'path[0].rate: must be > 0 (got "-10Mbps")',
        ),
        (lambda: parse_rate("0Mbps", "r"), 'r: must be > 0 (got "0Mbps")'),
        (lambda: parse_rate("1.5bps", "r"), 'r: must be a whole number of bit/s (got "1.5bps")'),
        (
            lambda: parse_rate("100000000Tbps", "r"),
            'r: must be at most 18446744073709551615 bit/s (got "100000000Tbps")',
        ),
        (lambda: parse_time("-5ms", "delay"), 'delay: must be ≥ 0 (got "-5ms")'),
        (lambda: parse_time("0s", "d", positive=True), 'd: must be > 0 (got "0s")'),
        (lambda: parse_time(5, "delay"), 'delay: must be a time like "50ms" (got 5)'),
        (lambda: parse_time(0.5, "delay"), 'delay: must be a time like "50ms" (got 0.5)'),
        (lambda: parse_time("5 sec", "delay"), 'delay: must be a time like "50ms" (got "5 sec")'),
        (lambda: parse_time("5MS", "delay"), 'delay: must be a time like "50ms" (got "5MS")'),
        (lambda: parse_time("10Mbps", "t"), 't: must be a time like "50ms" (got "10Mbps")'),
        (lambda: parse_time("0.5ns", "t"), 't: must be a whole number of ns (got "0.5ns")'),
        (
            lambda: parse_size("64kb", "q"),
            'q: must be a size like "64KB" or a whole number of bytes (got "64kb")',
        ),
        (
            lambda: parse_size(1448.0, "mss"),
            'mss: must be a size like "64KB" or a whole number of bytes (got 1448.0)',
        ),
        (
            lambda: parse_size(True, "mss"),
            'mss: must be a size like "64KB" or a whole number of bytes (got true)',
        ),
        (lambda: parse_size(-1, "s"), "s: must be > 0 (got -1)"),
        (lambda: parse_size(0, "s"), "s: must be > 0 (got 0)"),
        (lambda: parse_size(-1, "s", positive=False), "s: must be ≥ 0 (got -1)"),
        (lambda: parse_size("1.5B", "s"), 's: must be a whole number of bytes (got "1.5B")'),
        (lambda: parse_size("100", "q", bare=False), 'q: must be a size like "64KB" (got "100")'),
        (lambda: parse_size(100, "q", bare=False), 'q: must be a size like "64KB" (got 100)'),
    ],
)
def test_unit_errors(call: object, message: str) -> None:
    with pytest.raises(ScenarioError) as err:
        call()  # type: ignore[operator]
    assert str(err.value) == message


TIME_FACTORS = {"ns": 1, "us": 10**3, "ms": 10**6, "s": 10**9, "min": 60 * 10**9, "h": 3600 * 10**9}
SIZE_FACTORS = {"B": 1, "KB": 10**3, "MB": 10**6, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30}
RATE_FACTORS = {"bps": 1, "kbps": 10**3, "Mbps": 10**6, "Gbps": 10**9}


@given(st.integers(0, 10**6), st.sampled_from(sorted(TIME_FACTORS)))
def test_time_roundtrip(n: int, unit: str) -> None:
    assert parse_time(f"{n}{unit}") == n * TIME_FACTORS[unit]


@given(st.integers(1, 10**9), st.sampled_from(sorted(SIZE_FACTORS)))
def test_size_roundtrip(n: int, unit: str) -> None:
    assert parse_size(f"{n}{unit}") == n * SIZE_FACTORS[unit]


@given(st.integers(1, 10**6), st.sampled_from(sorted(RATE_FACTORS)))
def test_rate_roundtrip(n: int, unit: str) -> None:
    assert parse_rate(f"{n}{unit}") == n * RATE_FACTORS[unit]


@given(st.text(max_size=12))
def test_arbitrary_text_parses_or_fails_with_one_line(text: str) -> None:
    for parse in (parse_rate, parse_time, parse_size):
        try:
            value = parse(text, "x")
        except ScenarioError as err:
            assert str(err).startswith("x: ")
            assert "\n" not in str(err)
        else:
            assert isinstance(value, int)
            assert value >= 0


@pytest.mark.parametrize(
    ("call", "text", "message"),
    [
        # Exponents far beyond any range: a one-line rule, not decimal.Overflow.
        (parse_time, "1e99999999999s", "must be at most 1000000h"),
        (parse_rate, "1e99999999999Mbps", "must be at most 18446744073709551615 bit/s"),
        (parse_size, "1e99999999999B", "must be at most 18446744073709551615 bytes"),
        (parse_time, "-1e99999999999s", "must be ≥ 0"),
        # Far below one base unit: rejected, not silently 0.
        (parse_time, "1e-9999999s", "must be a whole number of ns"),
        (parse_size, "1e-50KB", "must be a whole number of bytes"),
        # More digits than the default decimal precision: not rounded to a whole number.
        (parse_time, "1.0000000000000000000000000000001s", "must be a whole number of ns"),
        # Only ASCII digits are digits.
        (parse_time, "\u0661\u0660ms", 'must be a time like "50ms"'),
        (parse_rate, "\uff11\uff10Mbps", 'must be a rate like "10Mbps"'),
        (parse_size, "\u0967KB", 'must be a size like "64KB"'),
    ],
)
def test_extreme_exponents_and_foreign_digits(call: Any, text: str, message: str) -> None:
    with pytest.raises(ScenarioError, match=re.escape(message)):
        call(text, "x")
