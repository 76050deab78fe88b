"""Small statistics shared by sweeps and reproductions."""

from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = ["mean_ci95", "ratio_ci95"]

#: Two-sided 95 % Student t quantiles by degrees of freedom (normal beyond 30).
_T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306}
_T975 |= {9: 2.262, 10: 2.228, 11: 2.201, 12: 2.179, 15: 2.131, 20: 2.086, 30: 2.042}


def mean_ci95(values: Sequence[float]) -> tuple[float, float]:
    """Mean and half-width of its 95 % confidence interval (Student t over the values; the
    half-width is NaN for fewer than two values)."""
    a = [float(v) for v in values]
    if not a:
        return math.nan, math.nan
    mean = sum(a) / len(a)
    if len(a) < 2:
        return mean, math.nan
    df = len(a) - 1
    t = _T975.get(df) or next((v for k, v in sorted(_T975.items()) if k >= df), 1.96)
    sd = math.sqrt(sum((x - mean) ** 2 for x in a) / df)
    return mean, t * sd / math.sqrt(len(a))


def ratio_ci95(num: Sequence[float], den: Sequence[float]) -> tuple[float, float]:
    """Ratio of the means of paired samples (e.g. two quantities of the same seeds) and the
    half-width of its 95 % confidence interval by the delta method (covariance included); the
    half-width is NaN for fewer than two pairs, the ratio inf when the denominator's mean is 0."""
    a = [float(v) for v in num]
    b = [float(v) for v in den]
    if len(a) != len(b) or not a:
        raise ValueError("ratio_ci95: needs equally many (and some) numerators and denominators")
    n = len(a)
    ma, mb = sum(a) / n, sum(b) / n
    if mb == 0:
        return math.inf, math.nan
    r = ma / mb
    if n < 2:
        return r, math.nan
    df = n - 1
    t = _T975.get(df) or next((v for k, v in sorted(_T975.items()) if k >= df), 1.96)
    va = sum((x - ma) ** 2 for x in a) / df
    vb = sum((y - mb) ** 2 for y in b) / df
    cov = sum((x - ma) * (y - mb) for x, y in zip(a, b, strict=True)) / df
    var = (va - 2 * r * cov + r * r * vb) / (n * mb * mb)
    return r, t * math.sqrt(max(var, 0.0))
