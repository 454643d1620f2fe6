"""Student's t distribution for integer degrees of freedom, in pure Python (scipy is not a dependency).

:func:`t_cdf` is exact: for an integer ``df`` the distribution function is a finite trigonometric sum (Abramowitz
and Stegun, *Handbook of Mathematical Functions*, 1964, 26.7.3 for odd and 26.7.4 for even ``df``). :func:`t_ppf`
inverts it by bisection to about 1e-12 for ``df`` up to :data:`SERIES_MAX_DF`; above that it uses the asymptotic
expansion around the normal quantile (the same handbook, 26.7.5, four terms), whose error there is below 1e-12.
"""

from __future__ import annotations

import math
import statistics

__all__ = ["SERIES_MAX_DF", "t_cdf", "t_ppf"]

#: Above this many degrees of freedom :func:`t_ppf` uses the asymptotic expansion instead of inverting the series.
SERIES_MAX_DF = 1000


def _check_df(df: int) -> None:
    if isinstance(df, bool) or not isinstance(df, int) or df < 1:
        raise ValueError(f"df must be an integer >= 1, got {df!r}")


def t_cdf(x: float, df: int) -> float:
    """P(T <= x) for Student's t with ``df`` degrees of freedom (an integer >= 1).

    >>> round(t_cdf(12.706205, 1), 6), t_cdf(0.0, 7)
    (0.975, 0.5)

    Raises:
        ValueError: ``df`` is not an integer >= 1, or ``x`` is NaN.
    """
    _check_df(df)
    if math.isnan(x):
        raise ValueError("x is NaN")
    if math.isinf(x):
        return 1.0 if x > 0 else 0.0
    theta = math.atan(x / math.sqrt(df))
    c2 = math.cos(theta) ** 2
    s = math.sin(theta)
    # A(x | df) = P(|T| <= |x|), signed like x: A&S 26.7.3 (odd df) and 26.7.4 (even df)
    if df % 2:
        total, term = 0.0, 0.0
        if df > 1:
            term = math.cos(theta)
            total = term
            for k in range(3, df - 1, 2):  # term_k = term_{k-2} * (k - 1) / k * cos^2
                term *= (k - 1) / k * c2
                total += term
        a = 2 / math.pi * (theta + s * total)
    else:
        term = total = 1.0
        for k in range(2, df - 1, 2):  # term_k = term_{k-2} * (k - 1) / k * cos^2
            term *= (k - 1) / k * c2
            total += term
        a = s * total
    return min(1.0, max(0.0, (1 + a) / 2))


def _asymptotic_ppf(p: float, df: int) -> float:
    """A&S 26.7.5: the t quantile as a series in 1/df around the normal quantile x."""
    x = statistics.NormalDist().inv_cdf(p)
    g1 = (x**3 + x) / 4
    g2 = (5 * x**5 + 16 * x**3 + 3 * x) / 96
    g3 = (3 * x**7 + 19 * x**5 + 17 * x**3 - 15 * x) / 384
    g4 = (79 * x**9 + 776 * x**7 + 1482 * x**5 - 1920 * x**3 - 945 * x) / 92160
    return x + g1 / df + g2 / df**2 + g3 / df**3 + g4 / df**4


def t_ppf(p: float, df: int) -> float:
    """The p-quantile of Student's t with ``df`` degrees of freedom: the x with ``t_cdf(x, df) == p``.

    >>> round(t_ppf(0.975, 4), 6), round(t_ppf(0.80, 4), 6)
    (2.776445, 0.940965)

    Raises:
        ValueError: ``p`` is not strictly between 0 and 1, or ``df`` is not an integer >= 1.
    """
    _check_df(df)
    if not 0.0 < p < 1.0:
        raise ValueError(f"p must lie strictly between 0 and 1, got {p!r}")
    if p == 0.5:
        return 0.0
    if p < 0.5:
        return -t_ppf(1.0 - p, df)
    if df > SERIES_MAX_DF:
        return _asymptotic_ppf(p, df)
    lo, hi = 0.0, 1.0
    while t_cdf(hi, df) < p:
        lo, hi = hi, hi * 2
    for _ in range(200):
        mid = (lo + hi) / 2
        if t_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-13 * max(1.0, hi):
            break
    return (lo + hi) / 2
