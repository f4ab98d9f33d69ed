"""Quantiles of the normal and Student t distributions, and the regularised incomplete beta
function they rest on (part of ``sim.analysis.stats``)."""

from __future__ import annotations

import math
from statistics import NormalDist

from sim.errors import StatsError

# --------------------------------------------------------------------------------------------
# Quantiles of the normal and Student t distributions
# --------------------------------------------------------------------------------------------

_STD_NORMAL = NormalDist()


def norm_ppf(p: float) -> float:
    """Quantile function of the standard normal distribution.

    Parameters
    ----------
    p : probability in the open interval (0, 1).

    Returns
    -------
    float
        ``z`` with ``P(Z <= z) = p``. Uses ``statistics.NormalDist.inv_cdf`` (Wichura's AS 241,
        about 16 significant digits), e.g. ``norm_ppf(0.975) = 1.95996398454...``.
    """
    p = check_prob(p, "p")
    return _STD_NORMAL.inv_cdf(p)


def check_prob(p: float, what: str) -> float:
    """``p`` as a float in (0, 1), or a StatsError."""
    try:
        p = float(p)
    except (TypeError, ValueError):
        raise StatsError(f"{what} {p!r} must be a number in (0, 1)") from None
    if not 0.0 < p < 1.0:
        raise StatsError(f"{what} {p!r} must be in the open interval (0, 1)")
    return p


def betainc_cf(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function (modified Lentz; Numerical Recipes
    6.4). Converges fast for ``x < (a + 1) / (a + b + 2)``."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 100000):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-16:
            return h
    raise ArithmeticError(f"incomplete beta continued fraction did not converge ({a}, {b}, {x})")


def _log_gamma_ratio_half(a: float) -> float:
    """``ln(Gamma(a + 1/2) / Gamma(a))``; for large ``a`` from its asymptotic series, because
    the difference of two large ``lgamma`` values would lose digits (and with them the t tail
    for many degrees of freedom)."""
    if a < 20.0:
        return math.lgamma(a + 0.5) - math.lgamma(a)
    r = 1.0 / (a * a)  # truncation error < 1e-15 from a = 20 on
    return 0.5 * math.log(a) + (-1.0 / 8.0 + r * (1.0 / 192.0 + r * (-1.0 / 640.0 + r * (
        17.0 / 14336.0 - r * 31.0 / 18432.0)))) / a


_LOG_SQRT_PI = 0.5 * math.log(math.pi)  # ln Gamma(1/2)


def _t_sf(t: float, df: float) -> float:
    """``P(T > t)`` for ``t >= 0``: ``I_x(df/2, 1/2) / 2`` with ``x = df / (df + t^2)``.

    The incomplete beta prefactor ``x^a y^b / (a B(a, b))`` is built from logs computed without
    cancellation (``log x = -log1p(t^2/df)``), since ``a = df/2`` multiplies their errors.
    """
    a, b = 0.5 * df, 0.5
    d = df + t * t
    x, y = df / d, t * t / d  # y = 1 - x
    if y == 0.0:
        return 0.5
    log_front = (_log_gamma_ratio_half(a) - _LOG_SQRT_PI - a * math.log1p(t * t / df)
                 + b * (2.0 * math.log(t) - math.log(d)))
    if x < (a + 1.0) / (a + b + 2.0):
        return 0.5 * math.exp(log_front) * betainc_cf(a, b, x) / a
    return 0.5 * (1.0 - math.exp(log_front) * betainc_cf(b, a, y) / b)


def _t_pdf(t: float, df: float) -> float:
    """Density of Student's t with ``df`` degrees of freedom."""
    log_c = _log_gamma_ratio_half(0.5 * df) - _LOG_SQRT_PI - 0.5 * math.log(df)
    return math.exp(log_c - 0.5 * (df + 1.0) * math.log1p(t * t / df))


def t_ppf(p: float, df: float) -> float:
    """Quantile function of Student's t distribution.

    Parameters
    ----------
    p : probability in the open interval (0, 1).
    df : degrees of freedom, > 0 (need not be an integer; ``math.inf`` gives the normal).

    Returns
    -------
    float
        ``t`` with ``P(T <= t) = p``, e.g. ``t_ppf(0.975, 10) = 2.22813885198...``; error
        below ``1e-10 * max(1, |t|)`` (about ``1e-12`` relative for ``df < 1e5``), for
        ``|t| < 1e150``.

    Notes
    -----
    Closed forms for ``df`` 1 and 2. Otherwise Newton's method on ``log P(T > t)`` (nearly
    linear in the tail, unlike ``P(T > t)``) from the Cornish-Fisher start (Abramowitz &
    Stegun 26.7.5), with a bisection bracket as a safeguard. The tail
    ``P(T > t) = I_{df/(df+t^2)}(df/2, 1/2) / 2`` comes from the incomplete beta continued
    fraction. Above ``df = 1e7`` the normal quantile is returned (relative difference < 1e-7).
    """
    p = check_prob(p, "p")
    try:
        df = float(df)
    except (TypeError, ValueError):
        raise StatsError(f"degrees of freedom {df!r} must be a number > 0") from None
    if not df > 0.0:  # also rejects NaN
        raise StatsError(f"degrees of freedom {df!r} must be > 0")
    if p == 0.5:
        return 0.0
    sign, q = (1.0, 1.0 - p) if p > 0.5 else (-1.0, p)  # solve P(T > t) = q for t > 0
    if df == 1.0:
        return sign / math.tan(math.pi * q)  # Cauchy
    if df == 2.0:
        return sign * (1.0 - 2.0 * q) / math.sqrt(2.0 * q * (1.0 - q))
    z = -_STD_NORMAL.inv_cdf(q)
    if df > 1e7:
        return sign * z
    z2 = z * z
    t = (z + (z2 + 1.0) * z / (4.0 * df)
         + ((5.0 * z2 + 16.0) * z2 + 3.0) * z / (96.0 * df ** 2)
         + (((3.0 * z2 + 19.0) * z2 + 17.0) * z2 - 15.0) * z / (384.0 * df ** 3))
    lo, hi = 0.0, math.inf  # P(T > lo) > q > P(T > hi)
    if not t > 0.0 or not math.isfinite(t):
        t = max(z, 1.0)
    log_q = math.log(q)
    for _ in range(200):
        sf = _t_sf(t, df)
        if sf > q:
            lo = t
        else:
            hi = t
        pdf = _t_pdf(t, df)
        new = math.nan
        if sf > 0.0 and pdf > 0.0:  # else under/overflow: bisect
            new = t + (math.log(sf) - log_q) * sf / pdf  # d log sf / dt = -pdf / sf
        if not lo < new < hi:  # Newton left the bracket: bisect (or expand the bracket)
            new = 0.5 * (lo + hi) if math.isfinite(hi) else 2.0 * t
        if abs(new - t) <= 1e-14 * abs(new) or hi - lo <= 1e-15 * hi < math.inf:
            return sign * new
        t = new
    raise ArithmeticError(f"t quantile did not converge (p={p!r}, df={df!r})")


def critical(conf: float, df: float = math.inf) -> float:
    """Two-sided critical value for confidence ``conf``: t with ``df`` or normal if infinite."""
    conf = check_prob(conf, "confidence level")
    q = 0.5 * (1.0 - conf)  # the small tail itself: 0.5 + conf / 2 would round it away
    return -norm_ppf(q) if math.isinf(df) else -t_ppf(q, df)
