"""Statistics for tournaments: streamed moments, histograms, W/D/L, SPRT and ratings.

Pure functions and small accumulators over plain numbers and numpy arrays; this module imports
numpy and the standard library only, never the engine, so it can be used on any results.

Duplicate deals
---------------
A head-to-head between strategies A and B is played as duplicate pairs: each deal twice with the
teams swapped. The unit of observation is one pair and its result is one real number ``x`` (A's
mean settlement points per deal per player over the two deals; B gets ``-x``). Pairs are
independent, so every estimate here treats the ``x`` values as i.i.d.; never feed the single
deals of a pair as two observations (they are strongly correlated by the shared cards).

- mean with a confidence interval: ``Moments().add(x).ci()`` or ``mean_ci(x)``;
- distribution of ``x`` or of raw card-point scores: ``Histogram``;
- share of pairs won / tied / lost: ``WDL`` or ``wdl(x)``;
- early stopping of a head-to-head: ``SPRT``;
- ratings of a round robin: ``bradley_terry`` then ``elo_from_bt``.

Streaming
---------
Tournaments may run 10 million deals, so every accumulator keeps only sufficient statistics
(counts and sums), ``merge``s exactly across chunks or workers and round-trips through JSON with
``to_dict`` / ``from_dict`` for resumable runs.

Errors
------
Bad input raises ``sim.errors.StatsError`` (a ``ShuangkouError``, so a ``ValueError``) whose
message quotes the input; ``sim.errors`` is the one module of the package it imports (no
engine, no numba).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from statistics import NormalDist
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from sim.errors import StatsError

__all__ = [
    "ELO_PER_NAT", "SPRT", "SWINGS_KEPT", "SWINGS_SHOWN", "T_NORMAL_FROM", "WDL",
    "ClusterMoments", "Histogram", "Moments", "Swings",
    "bradley_terry", "bt_cluster_meat", "bt_firth_draws", "bt_goodness_of_fit", "chi2_sf",
    "cross_cov",
    "elo_from_bt", "elo_from_score", "elo_from_wdl", "holm", "mean_ci", "norm_ppf",
    "score_interval", "sprt_bounds", "sprt_llr", "t_ppf", "wdl",
]

ELO_PER_NAT = 400.0 / math.log(10.0)  # Elo points per unit of natural-log strength (~173.72)
T_NORMAL_FROM = 30  # Moments.ci uses Student t below this many observations, normal from it on


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
    p = _check_prob(p, "p")
    return _STD_NORMAL.inv_cdf(p)


def _check_prob(p: float, what: str) -> float:
    """``p`` as a float in (0, 1), or a StatsError."""
    try:
        p = float(p)
    except (TypeError, ValueError):
        raise StatsError(f"{what} {p!r} must be a number in (0, 1)") from None
    if not 0.0 < p < 1.0:
        raise StatsError(f"{what} {p!r} must be in the open interval (0, 1)")
    return p


def _betainc_cf(a: float, b: float, x: float) -> float:
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
        return 0.5 * math.exp(log_front) * _betainc_cf(a, b, x) / a
    return 0.5 * (1.0 - math.exp(log_front) * _betainc_cf(b, a, y) / b)


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
    p = _check_prob(p, "p")
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


def _critical(conf: float, df: float = math.inf) -> float:
    """Two-sided critical value for confidence ``conf``: t with ``df`` or normal if infinite."""
    conf = _check_prob(conf, "confidence level")
    q = 0.5 * (1.0 - conf)  # the small tail itself: 0.5 + conf / 2 would round it away
    return -norm_ppf(q) if math.isinf(df) else -t_ppf(q, df)


# --------------------------------------------------------------------------------------------
# Moments
# --------------------------------------------------------------------------------------------

def _as_values(values: ArrayLike) -> np.ndarray:
    """Values as a flat float64 array; a StatsError if any is NaN or infinite."""
    try:
        v = np.asarray(values, dtype=np.float64).ravel()
    except (TypeError, ValueError):
        raise StatsError(f"values {values!r} must be numbers") from None
    if not np.isfinite(v).all():
        bad = v[~np.isfinite(v)]
        raise StatsError(f"values must be finite; got {bad.size} non-finite, e.g. {bad[0]!r}")
    return v


def _centred_ss(n: int, total: float, total_sq: float) -> Fraction:
    """``sum((x - mean)^2)`` from the sums, as an exact fraction.

    ``Fraction(float)`` is exact, so ``(n*S2 - S1^2) / n`` and the variances derived from it
    are correctly rounded once converted to float; the textbook float expression would cancel
    catastrophically when ``mean^2 >> var``.
    """
    if n == 0:
        return Fraction(0)
    ss = (n * Fraction(total_sq) - Fraction(total) ** 2) / n
    return max(Fraction(0), ss)  # < 0 only if the sums themselves were rounded


class Moments:
    """Streaming count, mean and variance of real values from exact running sums.

    Parameters
    ----------
    n, total, total_sq : optional starting sufficient statistics: the count, the sum of the
        values and the sum of their squares (default: empty). ``Moments(n, s, s2)`` is how
        sums computed elsewhere (another worker, a database) are turned into an accumulator.

    Notes
    -----
    The state is ``(n, sum x, sum x^2)`` rather than Welford/Chan's ``(n, mean, M2)``:

    - The values here (settlement points, per-pair means, card points) are integers or
      half-integers, and float64 sums of such numbers are *exact* while every partial sum stays
      below 2**53 ~ 9e15 (10 million pairs with ``|x| <= 100`` reach ``sum x^2 <= 1e11``). So
      ``add`` and ``merge`` are exact, associative and commutative: the result of a tournament
      does not depend on how it was chunked, parallelised or resumed, bit for bit.
    - The SPRT needs exactly ``(n, sum x, sum x^2)``.
    - Variance is derived from the sums in exact rational arithmetic and rounded once, so for
      such data it is the correctly rounded sample variance, and the only error ever is in
      the sums themselves. For arbitrary real data (not exactly representable) the sums
      carry the usual float rounding, and the variance loses ``log10(mean^2 / var)`` digits;
      shift such data by a rough mean before adding if ``|mean| >> sd``.

    Undefined statistics are NaN rather than errors so that progress reports work from the
    first chunk: ``mean`` needs ``n >= 1``; ``var``, ``sd``, ``sem``, ``ci`` need ``n >= 2``.
    """

    __slots__ = ("_n", "_total", "_total_sq")

    def __init__(self, n: int = 0, total: float = 0.0, total_sq: float = 0.0) -> None:
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
            raise StatsError(f"count {n!r} must be an integer >= 0")
        total, total_sq = float(total), float(total_sq)
        if not (math.isfinite(total) and math.isfinite(total_sq)) or total_sq < 0.0:
            raise StatsError(f"sums ({total!r}, {total_sq!r}) must be finite, sum of squares >= 0")
        if n == 0 and (total != 0.0 or total_sq != 0.0):
            raise StatsError(f"sums ({total!r}, {total_sq!r}) of zero values must be 0")
        self._n, self._total, self._total_sq = int(n), total, total_sq

    # -- accumulate --------------------------------------------------------------------------

    def add(self, values: ArrayLike) -> Moments:
        """Add values (a number or any array-like, flattened); returns ``self`` for chaining."""
        v = _as_values(values)
        if v.size:
            self._n += int(v.size)
            self._total += float(v.sum())
            self._total_sq += float(np.einsum("i,i", v, v))  # BLAS dot is slow for this
        return self

    def merge(self, other: Moments) -> Moments:
        """A new accumulator holding the values of both ``self`` and ``other``."""
        return Moments(self._n, self._total, self._total_sq).__iadd__(other)

    def __iadd__(self, other: Moments) -> Moments:
        if not isinstance(other, Moments):
            return NotImplemented
        self._n += other._n
        self._total += other._total
        self._total_sq += other._total_sq
        return self

    def __add__(self, other: Moments) -> Moments:
        return self.merge(other) if isinstance(other, Moments) else NotImplemented

    # -- statistics --------------------------------------------------------------------------

    @property
    def n(self) -> int:
        """Number of values."""
        return self._n

    @property
    def total(self) -> float:
        """Sum of the values."""
        return self._total

    @property
    def total_sq(self) -> float:
        """Sum of the squared values."""
        return self._total_sq

    @property
    def mean(self) -> float:
        """Sample mean (NaN if empty)."""
        return self._total / self._n if self._n else math.nan

    @property
    def var(self) -> float:
        """Sample variance with ``ddof=1`` (NaN if ``n < 2``)."""
        if self._n < 2:
            return math.nan
        return float(_centred_ss(self._n, self._total, self._total_sq) / (self._n - 1))

    @property
    def sd(self) -> float:
        """Sample standard deviation, ``sqrt(var)``."""
        return math.sqrt(self.var)

    @property
    def sem(self) -> float:
        """Standard error of the mean, ``sd / sqrt(n)``."""
        return self.sd / math.sqrt(self._n) if self._n >= 2 else math.nan

    def ci(self, conf: float = 0.95) -> tuple[float, float]:
        """Two-sided confidence interval ``(lo, hi)`` for the mean.

        ``mean -/+ c * sem`` with ``c`` the Student t quantile with ``n - 1`` degrees of freedom
        when ``n < T_NORMAL_FROM`` (30) and the normal quantile otherwise (the two differ by
        under 4 % there and the data are not normal anyway: the CLT is what justifies either).
        ``(nan, nan)`` if ``n < 2``; ``(mean, mean)`` if all values are equal.
        """
        if self._n < 2:
            _critical(conf)  # still reject a bad conf
            return (math.nan, math.nan)
        c = _critical(conf, self._n - 1 if self._n < T_NORMAL_FROM else math.inf)
        m, half = self.mean, c * self.sem
        return (m - half, m + half)

    def p_value(self, mu: float = 0.0) -> float:
        """Two-sided p-value of ``mean == mu``, for significance marks (Holm's procedure tests
        at ``alpha / m``, far in the tail): the score statistic
        ``T0 = sum(x - mu) / sqrt(sum((x - mu)^2))``, the deviation scaled by the spread about
        the hypothesised mean, against the standard normal, at every ``n``.

        ``|T0| >= z`` is ``|t| >= z sqrt((n - 1) / (n - z^2))`` for Student's statistic ``t``:
        a critical value above Student's ``n - 1`` degrees of freedom one at every level below
        8% (2.96 against 2.83 at 0.05/6 and 30 results; 2.72 against 2.69 at 100), so it
        rejects only where Student's t would, and it holds the level on the lattice-valued,
        short-tailed pair results where Student's t does not quite (Holm over 10 matchups of
        30 pairs, equal players: a family-wise error of 0.035, against 0.052 with Student's t
        and 0.086 with a normal reference for ``t``; ``tests/stats_coverage.py holm``).
        ``nan`` if ``n < 2``; 1 if every value equals ``mu``; at least ``2 Phi(-sqrt(n))``
        (every value on one side, all equal).
        """
        if self._n < 2:
            return math.nan
        n, m = self._n, Fraction(mu)
        dev = Fraction(self._total) - n * m  # sum(x - mu), exact from the exact sums
        ss = Fraction(self._total_sq) - 2 * m * Fraction(self._total) + n * m * m
        if ss <= 0 or dev == 0:
            return 1.0
        t0 = abs(float(dev)) / math.sqrt(float(ss))
        return min(1.0, math.erfc(t0 / math.sqrt(2.0)))  # 2 Phi(-t0), no cancellation

    # -- serialisation -----------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable state (floats round-trip exactly through ``json``)."""
        return {"type": "Moments", "n": self._n, "total": self._total,
                "total_sq": self._total_sq}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Moments:
        """Inverse of ``to_dict``."""
        _check_type(d, "Moments")
        return cls(d["n"], d["total"], d["total_sq"])

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Moments):
            return NotImplemented
        return (self._n, self._total, self._total_sq) == (other._n, other._total, other._total_sq)

    __hash__ = None  # mutable

    def __repr__(self) -> str:
        return f"Moments(n={self._n}, mean={self.mean:.6g}, sd={self.sd:.6g})"


def _check_type(d: Any, name: str) -> None:
    """A StatsError unless ``d`` is a dict written by ``name.to_dict``."""
    if not isinstance(d, dict) or d.get("type") != name:
        raise StatsError(f"{d!r} is not a serialised {name} (expected 'type': {name!r})")


def stratified_ci(strata: Sequence[Moments], conf: float = 0.95, cross_var: float = 0.0,
                  clusters: int | None = None) -> tuple[float, float, float]:
    """``(mean, lo, hi)`` of the pooled mean of several strata (e.g. one player's matchups).

    The pooled mean is ``sum(total) / sum(n)`` as for the merged ``Moments``; its variance is
    ``(sum(n_m var_m) + cross_var) / N^2`` with each stratum's own sample variance, i.e. the
    sampling variance of a mean whose strata sizes are fixed by design. The merged ``Moments``
    would also count the spread *between* the strata' means as noise, which makes the interval
    too wide when the matchups differ.

    ``cross_var`` is the covariance between the strata's totals, ``sum over m != m' of
    cov(total_m, total_m')``: zero for independent strata; for a player's matchups of a round
    robin, which play the same deals, the covariance per shared deal times the deals shared
    (``ClusterMoments.total_cov``), which makes the variance cluster-robust by deal. Then the
    critical value is Student t with ``clusters - 1`` degrees of freedom below
    ``T_NORMAL_FROM`` clusters, else normal; without clusters it is Student t with the
    Welch–Satterthwaite degrees of freedom (normal from ``T_NORMAL_FROM`` on). A stratum of
    one value borrows the variance of all values merged. ``(nan, nan, nan)`` with fewer than
    two values in all.
    """
    strata = [s for s in strata if s.n]
    merged = Moments()
    for s in strata:
        merged += s
    n = merged.n
    if n < 2:
        _critical(conf)
        return (merged.mean if n else math.nan, math.nan, math.nan)
    var_mean, df_den = 0.0, 0.0
    for s in strata:
        a = s.n * (s.var if s.n >= 2 else merged.var) / (n * n)
        var_mean += a
        df_den += a * a / max(s.n - 1, 1)
    df = var_mean * var_mean / df_den if df_den > 0 else math.inf
    if clusters is not None:
        var_mean = max(0.0, var_mean + float(cross_var) / (n * n))
        df = clusters - 1.0 if clusters >= 2 else math.inf
    c = _critical(conf, df if df < T_NORMAL_FROM else math.inf)
    half = c * math.sqrt(var_mean)
    return (merged.mean, merged.mean - half, merged.mean + half)


class ClusterMoments:
    """Cross-moments of the matchups of a run over the deals they all played: what a variance
    clustered by deal needs, since every matchup plays the same deals (a deal good for a
    player is good for it against every opponent).

    Fed one block of deals at a time (``add``: a ``(deals, M)`` integer matrix, column ``m``
    the results of matchup ``m`` on those deals), it keeps for the results ``x`` and for the
    scores ``y`` (1, 1/2, 0 by the sign of ``x``, kept doubled as integers 2, 1, 0) the count
    of deals, the column sums and the ``M x M`` matrix of sums of products. Integer sums: exact,
    so the same for any split of the deals into blocks. ``cov`` gives the per-deal covariance
    matrices.
    """

    __slots__ = ("deals", "m", "x_cross", "x_sum", "y_cross", "y_sum")

    def __init__(self, m: int) -> None:
        self.m = int(m)
        self.deals = 0
        self.x_sum = np.zeros(m, dtype=np.int64)
        self.y_sum = np.zeros(m, dtype=np.int64)
        self.x_cross = np.zeros((m, m), dtype=np.int64)
        self.y_cross = np.zeros((m, m), dtype=np.int64)

    def add(self, x: ArrayLike) -> ClusterMoments:
        """Add a ``(deals, M)`` block of integer results (e.g. twice a pair's mean)."""
        v = np.asarray(x)
        if v.ndim != 2 or v.shape[1] != self.m or not np.issubdtype(v.dtype, np.integer):
            raise StatsError(f"a block of results must be an integer (deals, {self.m}) matrix, "
                             f"got {v.dtype} {v.shape}")
        y = np.sign(v).astype(np.int64) + 1  # twice the score
        for val, tot, cross in ((v.astype(np.int64), self.x_sum, self.x_cross),
                                (y, self.y_sum, self.y_cross)):
            f = val.astype(np.float64)
            prod = f.T @ f  # exact in float64 below 2**53 (|x| < 10**5 on 10**5 deals)
            if not np.abs(prod).max(initial=0.0) < 2.0 ** 53:
                raise StatsError("block too large for exact sums: add fewer deals at a time")
            tot += val.sum(axis=0)
            cross += np.rint(prod).astype(np.int64)
        self.deals += int(v.shape[0])
        return self

    def cov(self, scale: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
        """Per-deal covariance matrices ``(cov_x, cov_y)`` (ddof 1) of the results divided by
        ``scale`` and of the scores (1, 1/2, 0); zeros with fewer than two deals."""
        d = self.deals
        if d < 2:
            z = np.zeros((self.m, self.m))
            return z, z.copy()
        out = []
        for tot, cross, f in ((self.x_sum, self.x_cross, scale), (self.y_sum, self.y_cross, 2)):
            t = tot.astype(np.float64)
            out.append((cross.astype(np.float64) - np.outer(t, t) / d) / ((d - 1) * f * f))
        return out[0], out[1]

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable state (Python integers: exact)."""
        return {"type": "ClusterMoments", "m": self.m, "deals": self.deals,
                "x_sum": self.x_sum.tolist(), "y_sum": self.y_sum.tolist(),
                "x_cross": self.x_cross.tolist(), "y_cross": self.y_cross.tolist()}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ClusterMoments:
        """Inverse of ``to_dict``."""
        _check_type(d, "ClusterMoments")
        c = cls(d["m"])
        c.deals = int(d["deals"])
        for k in ("x_sum", "y_sum", "x_cross", "y_cross"):
            arr = np.array(d[k], dtype=np.int64)
            if arr.shape != getattr(c, k).shape:
                raise StatsError(f"ClusterMoments {k} has shape {arr.shape}, expected "
                                 f"{getattr(c, k).shape}")
            setattr(c, k, arr)
        return c

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ClusterMoments):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    __hash__ = None  # mutable

    def __repr__(self) -> str:
        return f"ClusterMoments(m={self.m}, deals={self.deals})"


def cross_cov(cov: np.ndarray, n: Sequence[int]) -> np.ndarray:
    """Covariance of the matchups' totals beyond their own variances: per-deal covariance
    ``cov[m, m']`` times the deals both played, ``min(n_m, n_m')`` (matchups play the same
    deals from the first on), with a zero diagonal."""
    nn = np.asarray(n, dtype=np.float64)
    out = np.asarray(cov, dtype=np.float64) * np.minimum.outer(nn, nn)
    np.fill_diagonal(out, 0.0)
    return out


def holm(p_values: Sequence[float], alpha: float = 0.05) -> list[bool]:
    """Holm's step-down procedure: which hypotheses are rejected with family-wise error rate
    at most ``alpha`` (any dependence between the tests). NaN p-values are never rejected and
    do not count in the family."""
    ps = [(p, i) for i, p in enumerate(p_values) if not math.isnan(p)]
    ps.sort()
    out = [False] * len(p_values)
    for rank, (p, i) in enumerate(ps):
        if p > alpha / (len(ps) - rank):
            break
        out[i] = True
    return out


def mean_ci(values: ArrayLike, conf: float = 0.95) -> tuple[float, float, float]:
    """``(mean, lo, hi)`` of ``values`` with the interval of ``Moments.ci``.

    For duplicate pairs pass the per-pair results: that is the paired mean and its CI.
    """
    m = Moments().add(values)
    lo, hi = m.ci(conf)
    return (m.mean, lo, hi)


# --------------------------------------------------------------------------------------------
# Histogram
# --------------------------------------------------------------------------------------------

class Histogram:
    """Counts in fixed-width bins ``[lo + k*width, lo + (k+1)*width)`` over ``[lo, hi)``, with
    underflow (``< lo``) and overflow (``>= hi``) counts, the exact min, max and ``Moments``.

    Parameters
    ----------
    lo, hi : integer range; ``hi - lo`` must be a positive multiple of ``width``.
    width : integer bin width, >= 1.

    Notes
    -----
    Queries treat every value ``v`` as the lower edge of its bin, ``L(v) <= v`` (the minimum
    seen for underflow, ``hi`` for overflow), except where min/max settle the answer. Since
    ``L`` is monotone, ``percentile`` is the exact inverse-CDF quantile of ``L(X)``, hence a
    lower bound of that of ``X`` (off by less than one bin); ``prob_ge`` is a lower and
    ``prob_le`` an upper bound.

    Exactness. ``prob_ge(x)`` is exact at every bin edge ``x`` in ``[lo, hi]``. Everything is
    exact when ``lattice`` is true (every in-range value equals its bin's lower edge: integer
    data with ``width=1``, or card-point scores, all multiples of 5, in 5-wide bins from 0) and
    the query does not fall into under/overflow: then ``P(score >= 120)``, ``P(score <= 80)``
    and the percentiles are the empirical ones. ``mean()`` is always exact (from the sums).
    """

    def __init__(self, lo: int, hi: int, width: int = 1) -> None:
        for name, val in (("lo", lo), ("hi", hi), ("width", width)):
            if isinstance(val, bool) or not isinstance(val, (int, np.integer)):
                raise StatsError(f"histogram {name} {val!r} must be an integer")
        lo, hi, width = int(lo), int(hi), int(width)
        if width < 1 or hi <= lo or (hi - lo) % width:
            raise StatsError(f"histogram range [{lo}, {hi}) must be a positive multiple of "
                             f"width {width} >= 1")
        self.lo, self.hi, self.width = lo, hi, width
        self.counts = np.zeros((hi - lo) // width, dtype=np.int64)
        self.underflow = 0
        self.overflow = 0
        self.min = math.inf
        self.max = -math.inf
        self.lattice = True
        self.moments = Moments()

    @property
    def n(self) -> int:
        """Number of values, under/overflow included."""
        return self.moments.n

    @property
    def edges(self) -> np.ndarray:
        """Lower edges of the bins (``len(counts)`` integers)."""
        return self.lo + self.width * np.arange(self.counts.size, dtype=np.int64)

    def add(self, values: ArrayLike) -> Histogram:
        """Add values (number or array-like); returns ``self``."""
        v = _as_values(values)
        if not v.size:
            return self
        self.moments.add(v)
        self.min = min(self.min, float(v.min()))
        self.max = max(self.max, float(v.max()))
        under, over = v < self.lo, v >= self.hi
        self.underflow += int(under.sum())
        self.overflow += int(over.sum())
        inside = v[~(under | over)]
        k = np.floor_divide(inside - self.lo, self.width)  # exact for floats (fmod-based)
        self.counts += np.bincount(k.astype(np.int64), minlength=self.counts.size)
        if self.lattice:
            self.lattice = bool(np.all(inside == self.lo + k * self.width))
        return self

    def _check_same(self, other: Histogram) -> None:
        if not isinstance(other, Histogram):
            raise StatsError(f"cannot merge a Histogram with {other!r}")
        if (self.lo, self.hi, self.width) != (other.lo, other.hi, other.width):
            raise StatsError(f"cannot merge histograms with bins {(self.lo, self.hi, self.width)}"
                             f" and {(other.lo, other.hi, other.width)} (lo, hi, width)")

    def __iadd__(self, other: Histogram) -> Histogram:
        self._check_same(other)
        self.counts += other.counts
        self.underflow += other.underflow
        self.overflow += other.overflow
        self.min, self.max = min(self.min, other.min), max(self.max, other.max)
        self.lattice = self.lattice and other.lattice
        self.moments += other.moments
        return self

    def merge(self, other: Histogram) -> Histogram:
        """A new histogram holding the values of both."""
        self._check_same(other)
        return Histogram.from_dict(self.to_dict()).__iadd__(other)

    def mean(self) -> float:
        """Exact mean of all values added (NaN if empty)."""
        return self.moments.mean

    def _masses(self) -> tuple[np.ndarray, np.ndarray]:
        """(representative values ``L``, counts): underflow at min, bins, overflow at hi."""
        values = np.concatenate(([self.min], self.edges.astype(np.float64), [float(self.hi)]))
        counts = np.concatenate(([self.underflow], self.counts, [self.overflow]))
        return values, counts

    def percentile(self, q: float) -> float:
        """Inverse-CDF percentile: the smallest ``L(v)`` whose cumulative share is >= ``q``%.

        Parameters
        ----------
        q : percent in ``[0, 100]``.

        Returns
        -------
        float
            The lower edge of the bin that holds the ``ceil(n*q/100)``-th smallest value (rank
            at least 1, computed in exact arithmetic), raised to ``min`` if below it; NaN if
            empty. No interpolation: for integer data in width-1 bins (or any lattice data)
            this is exactly numpy's ``percentile(..., method="inverted_cdf")``.
        """
        q = float(q)
        if not 0.0 <= q <= 100.0:
            raise StatsError(f"percentile {q!r} must be in [0, 100]")
        n = self.n
        if n == 0:
            return math.nan
        rank = max(1, math.ceil(Fraction(q) * n / 100))  # exact: no 0.3*10 = 3.0000000000000004
        values, counts = self._masses()
        i = int(np.searchsorted(np.cumsum(counts), rank, side="left"))
        return max(float(values[i]), self.min)

    def prob_ge(self, x: float) -> float:
        """Share of values ``>= x``: exact at bin edges in ``[lo, hi]``, else a lower bound."""
        if self.n == 0:
            return math.nan
        if x <= self.min:
            return 1.0
        if x > self.max:
            return 0.0
        values, counts = self._masses()
        return int(counts[values >= x].sum()) / self.n

    def prob_le(self, x: float) -> float:
        """Share of values ``<= x``: exact for lattice data (see class notes), else an upper
        bound (values in ``x``'s bin above ``x`` are counted)."""
        if self.n == 0:
            return math.nan
        if x >= self.max:
            return 1.0
        if x < self.min:
            return 0.0
        values, counts = self._masses()
        return int(counts[values <= x].sum()) / self.n

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable state (``min``/``max`` are ``None`` while empty)."""
        empty = self.n == 0
        return {"type": "Histogram", "lo": self.lo, "hi": self.hi, "width": self.width,
                "counts": [int(c) for c in self.counts], "underflow": self.underflow,
                "overflow": self.overflow, "min": None if empty else self.min,
                "max": None if empty else self.max, "lattice": self.lattice,
                "moments": self.moments.to_dict()}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Histogram:
        """Inverse of ``to_dict``."""
        _check_type(d, "Histogram")
        h = cls(d["lo"], d["hi"], d["width"])
        counts = np.asarray(d["counts"], dtype=np.int64)
        if counts.shape != h.counts.shape or (counts < 0).any():
            raise StatsError(f"histogram counts {d['counts']!r} do not fit bins "
                             f"{(h.lo, h.hi, h.width)}")
        h.counts = counts
        h.underflow, h.overflow = int(d["underflow"]), int(d["overflow"])
        h.moments = Moments.from_dict(d["moments"])
        if h.underflow + h.overflow + int(counts.sum()) != h.moments.n:
            raise StatsError(f"histogram counts do not add up to n = {h.moments.n}")
        if h.moments.n:
            h.min, h.max = float(d["min"]), float(d["max"])
        h.lattice = bool(d["lattice"])
        return h

    def __repr__(self) -> str:
        return (f"Histogram(lo={self.lo}, hi={self.hi}, width={self.width}, n={self.n}, "
                f"underflow={self.underflow}, overflow={self.overflow})")


# --------------------------------------------------------------------------------------------
# Win / draw / loss
# --------------------------------------------------------------------------------------------

class WDL:
    """Counts of values ``> 0`` (win), ``== 0`` (draw) and ``< 0`` (loss); mergeable.

    Parameters
    ----------
    wins, draws, losses : optional starting counts.
    """

    __slots__ = ("draws", "losses", "wins")

    def __init__(self, wins: int = 0, draws: int = 0, losses: int = 0) -> None:
        for name, val in (("wins", wins), ("draws", draws), ("losses", losses)):
            if isinstance(val, bool) or not isinstance(val, (int, np.integer)) or val < 0:
                raise StatsError(f"{name} {val!r} must be an integer >= 0")
        self.wins, self.draws, self.losses = int(wins), int(draws), int(losses)

    def add(self, values: ArrayLike) -> WDL:
        """Count values by sign; returns ``self``."""
        v = _as_values(values)
        w, l_ = int((v > 0).sum()), int((v < 0).sum())
        self.wins += w
        self.losses += l_
        self.draws += int(v.size) - w - l_
        return self

    def __iadd__(self, other: WDL) -> WDL:
        if not isinstance(other, WDL):
            return NotImplemented
        self.wins += other.wins
        self.draws += other.draws
        self.losses += other.losses
        return self

    def merge(self, other: WDL) -> WDL:
        """A new counter holding both."""
        return WDL(self.wins, self.draws, self.losses).__iadd__(other)

    @property
    def n(self) -> int:
        """Number of results."""
        return self.wins + self.draws + self.losses

    def fractions(self) -> tuple[float, float, float]:
        """``(win, draw, loss)`` shares (NaN if empty)."""
        n = self.n
        if not n:
            return (math.nan, math.nan, math.nan)
        return (self.wins / n, self.draws / n, self.losses / n)

    @property
    def score(self) -> float:
        """Mean score per result, win 1, draw 1/2, loss 0."""
        return (self.wins + 0.5 * self.draws) / self.n if self.n else math.nan

    @property
    def score_var(self) -> float:
        """Variance of one result's score (ddof=0): ``w + d/4 - score^2`` in shares."""
        if not self.n:
            return math.nan
        w, d, _ = self.fractions()
        return max(0.0, w + 0.25 * d - self.score ** 2)

    def elo(self, conf: float = 0.95) -> tuple[float, float, float]:
        """``elo_from_wdl`` of these counts: Elo with the score (Wilson-type) interval of
        ``score_interval`` (one-sided when every result is a win or every one a loss)."""
        return elo_from_wdl(self.wins, self.draws, self.losses, conf)

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable state."""
        return {"type": "WDL", "wins": self.wins, "draws": self.draws, "losses": self.losses}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> WDL:
        """Inverse of ``to_dict``."""
        _check_type(d, "WDL")
        return cls(d["wins"], d["draws"], d["losses"])

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, WDL):
            return NotImplemented
        return (self.wins, self.draws, self.losses) == (other.wins, other.draws, other.losses)

    __hash__ = None  # mutable

    def __repr__(self) -> str:
        return f"WDL(wins={self.wins}, draws={self.draws}, losses={self.losses})"


def wdl(values: ArrayLike) -> tuple[float, float, float]:
    """``(win, draw, loss)`` shares of ``values`` (``> 0``, ``== 0``, ``< 0``)."""
    return WDL().add(values).fractions()


# --------------------------------------------------------------------------------------------
# SPRT
# --------------------------------------------------------------------------------------------

def sprt_llr(n: int, total: float, total_sq: float, mu0: float, mu1: float) -> float:
    """Log-likelihood ratio of H1 (mean ``mu1``) against H0 (mean ``mu0``) from sums.

    Parameters
    ----------
    n, total, total_sq : count, sum and sum of squares of the i.i.d. per-pair results.
    mu0, mu1 : the means under H0 and H1.

    Returns
    -------
    float
        ``(mu1 - mu0) * (total - n * (mu0 + mu1) / 2) / var`` with ``var`` the maximum-
        likelihood variance ``sum((x - mean)^2) / n``; 0 while ``n < 2`` or ``var`` is 0 up
        to the rounding of the float sums (``var <= 64 n eps total_sq / n``: all results
        equal, no evidence about the spread yet), instead of a huge ratio over rounding noise.

    Notes
    -----
    This is the log of ``prod N(x_i; mu1, var) / N(x_i; mu0, var)``: the ``x_i^2`` terms
    cancel, leaving ``sum(2 x_i (mu1 - mu0) - (mu1^2 - mu0^2)) / (2 var)``. The unknown
    variance is plugged in from the data, which is the Brownian-motion approximation of the
    generalized SPRT that fishtest uses (``LLR_alt2`` in fishtest's ``LLRcalc.py``, after
    M. Van den Bergh, "GSPRT approximation"): ``N * (s1 - s0) * (2 s - s0 - s1) / (2 var)``
    with the empirical (ddof=0) variance. It is valid for any distribution with finite
    variance (by the CLT), including the heavily tied per-pair results, as long as
    ``|mu1 - mu0|`` is small against the standard deviation, which is the case of interest.
    """
    if n < 2:
        return 0.0
    var = float(_centred_ss(int(n), float(total), float(total_sq)) / int(n))
    if var <= 64.0 * n * _EPS * (float(total_sq) / n):  # zero up to rounding of the sums
        return 0.0
    return (mu1 - mu0) * (total - n * (mu0 + mu1) / 2.0) / var


_EPS = 2.0 ** -52  # float64 machine epsilon

SPRT_MIN_PAIRS = 200  # default: no decision before this many pairs (see SPRT)

# The fewest pairs before a decision that keep the error rates near alpha, beta with a look
# after every pair (simulated on per-pair results resampled from 400,000 real pairs of
# configs/sprt.toml's matchup, sd 1.69, 4,000 runs per cell, alpha = beta = 0.05):
#   mu1 - mu0 (in sd)   min_pairs 2      10          20          30
#   0.15                0.100/0.083   0.063/0.052  0.059/0.048  0.058/0.047
#   0.30                0.124/0.139   0.064/0.064  0.050/0.050  0.044/0.041
#   0.59                0.130/0.142   0.044/0.050  0.022/0.025  0.011/0.013
#   1.01                0.105/0.108   0.018/0.014  0.004/0.003  0.002/0.001
# (at 0.06 sd, the shipped config, 0.059/0.052 at 2 and 0.056/0.048 from 20 to 200: the
# ~0.056 left is the plug-in variance's, not the minimum's). Tournament configs refuse less.
# Reproduce: python benchmarks/sprt_asn.py rates 0.5 4000 2,10,20,30 (and 0.25, 1.0, 1.7).
SPRT_SAFE_MIN_PAIRS = 30


def sprt_bounds(alpha: float = 0.05, beta: float = 0.05) -> tuple[float, float]:
    """Wald's bounds ``(log(beta / (1 - alpha)), log((1 - beta) / alpha))`` on the LLR.

    Crossing the lower bound accepts H0, the upper H1; ``alpha`` is the false-positive rate
    (accept H1 when H0 holds), ``beta`` the false-negative rate. Wald's bounds ignore the
    overshoot, which lowers the realised error rates, while the plug-in variance of
    ``sprt_llr`` raises them a little early on; in simulation (tests/test_stats.py) they come
    out close to nominal.
    """
    alpha, beta = _check_prob(alpha, "alpha"), _check_prob(beta, "beta")
    if alpha + beta >= 1.0:
        raise StatsError(f"alpha + beta = {alpha + beta!r} must be < 1")
    return (math.log(beta / (1.0 - alpha)), math.log((1.0 - beta) / alpha))


class SPRT:
    """Sequential probability ratio test of H0: mean = ``mu0`` against H1: mean = ``mu1``.

    Parameters
    ----------
    mu0, mu1 : the two hypothesised means of the per-pair result (``mu0 != mu1``); e.g.
        ``SPRT(0.0, 0.2)`` asks "is A at least 0.2 points per deal better than B, or no
        better than B?".
    alpha, beta : error rates, see ``sprt_bounds``.
    min_pairs : looks before this many pairs never decide (default ``SPRT_MIN_PAIRS``).

    Notes
    -----
    The LLR is ``sprt_llr`` of all data so far and is compared with the bounds after each
    ``update``/``update_stats`` call (a "look") once at least ``min_pairs`` pairs are in: the
    plug-in variance of a handful of pairs can be tiny, and with a look after every pair the
    huge early LLRs pushed both error rates to 12–19% instead of 5% (mu1 - mu0 = 0.5 against
    per-pair results of standard deviation ~1.7). The first look that crosses a bound fixes
    ``state``; later updates still accumulate (for reporting) but do not change the decision,
    as the sequential test's error rates require. ``update_pairs`` looks after each pair of
    its argument and adds nothing past the deciding pair (what a tournament uses, so that its
    decision does not depend on the chunk size); ``update``/``update_stats`` look once per
    call, which only adds overshoot (lowering the error rates, but costing pairs: 2.4x as many
    at configs/sprt.toml's chunks of 2,000). ``SPRT_SAFE_MIN_PAIRS`` gives the simulated
    error rates of small ``min_pairs``.
    """

    def __init__(self, mu0: float, mu1: float, alpha: float = 0.05, beta: float = 0.05,
                 min_pairs: int = SPRT_MIN_PAIRS) -> None:
        mu0, mu1 = float(mu0), float(mu1)
        if not (math.isfinite(mu0) and math.isfinite(mu1)) or mu0 == mu1:
            raise StatsError(f"SPRT means mu0={mu0!r}, mu1={mu1!r} must be finite and differ")
        if isinstance(min_pairs, bool) or not isinstance(min_pairs, (int, np.integer)) \
                or min_pairs < 1:
            raise StatsError(f"SPRT min_pairs {min_pairs!r} must be an integer >= 1")
        self.min_pairs = int(min_pairs)
        self.mu0, self.mu1 = mu0, mu1
        self.alpha, self.beta = float(alpha), float(beta)
        self._bounds = sprt_bounds(self.alpha, self.beta)
        self.moments = Moments()
        self._state = "continue"
        self.decided_at: int | None = None  # number of pairs at the deciding look

    @property
    def bounds(self) -> tuple[float, float]:
        """``(lower, upper)`` from ``sprt_bounds(alpha, beta)``."""
        return self._bounds

    @property
    def llr(self) -> float:
        """Current log-likelihood ratio of all data."""
        m = self.moments
        return sprt_llr(m.n, m.total, m.total_sq, self.mu0, self.mu1)

    @property
    def state(self) -> str:
        """``'continue'``, ``'H0'`` or ``'H1'``."""
        return self._state

    def _look(self) -> str:
        if self._state == "continue" and self.moments.n >= self.min_pairs:
            llr = self.llr
            lower, upper = self._bounds
            if llr >= upper:
                self._state = "H1"
            elif llr <= lower:
                self._state = "H0"
            if self._state != "continue":
                self.decided_at = self.moments.n
        return self._state

    def update_pairs(self, values: ArrayLike) -> int:
        """Add per-pair results in order with a look after each, up to the first look that
        decides; return how many were added.

        All of ``values`` are added while no look decides; the pair whose look crosses a bound
        is the last one added, so ``moments`` (and ``decided_at``) then cover exactly the pairs
        up to the decision. Once decided, nothing more is added (returns 0). The looks are
        those of ``update`` called with one value at a time (the same exact ``sprt_llr`` at
        every candidate crossing), so the decision does not depend on how the pairs are cut
        into calls.
        """
        v = _as_values(values)
        if self._state != "continue" or not v.size:
            return 0
        m = self.moments
        n = m.n + np.arange(1, v.size + 1)
        total = np.cumsum(np.concatenate(([m.total], v)))[1:]  # as one update per pair adds
        total_sq = np.cumsum(np.concatenate(([m.total_sq], v * v)))[1:]
        # a float path finds the candidates: every look within rounding of a bound, or whose
        # variance is near zero; the exact scalar LLR decides each, in order
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            var = (total_sq - total * (total / n)) / n
            near0 = var <= 128.0 * n * _EPS * (total_sq / n)
            llr = np.where(near0, 0.0, (self.mu1 - self.mu0)
                           * (total - n * (self.mu0 + self.mu1) / 2.0) / var)
        lower, upper = self._bounds
        slack = 1e-6 * (1.0 + np.abs(llr))
        cand = np.flatnonzero((n >= self.min_pairs)
                              & ((llr >= upper - slack) | (llr <= lower + slack) | near0))
        for k in cand.tolist():
            exact = sprt_llr(int(n[k]), float(total[k]), float(total_sq[k]), self.mu0,
                             self.mu1)
            if exact >= upper or exact <= lower:
                self.moments = Moments(int(n[k]), float(total[k]), float(total_sq[k]))
                self._state = "H1" if exact >= upper else "H0"
                self.decided_at = self.moments.n
                return k + 1
        self.moments = Moments(int(n[-1]), float(total[-1]), float(total_sq[-1]))
        return int(v.size)

    def update(self, values: ArrayLike) -> str:
        """Add per-pair results, look, and return ``state``."""
        self.moments.add(values)
        return self._look()

    def update_stats(self, n: int, total: float, total_sq: float) -> str:
        """Add a chunk given by its sufficient statistics, look, and return ``state``."""
        self.moments += Moments(n, total, total_sq)
        return self._look()

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable state, including the decision."""
        return {"type": "SPRT", "mu0": self.mu0, "mu1": self.mu1, "alpha": self.alpha,
                "beta": self.beta, "min_pairs": self.min_pairs,
                "moments": self.moments.to_dict(), "state": self._state,
                "decided_at": self.decided_at, "llr": self.llr, "bounds": list(self._bounds)}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> SPRT:
        """Inverse of ``to_dict`` (``llr`` and ``bounds`` there are informative only)."""
        _check_type(d, "SPRT")
        s = cls(d["mu0"], d["mu1"], d["alpha"], d["beta"], d.get("min_pairs", SPRT_MIN_PAIRS))
        s.moments = Moments.from_dict(d["moments"])
        if d["state"] not in ("continue", "H0", "H1"):
            raise StatsError(f"SPRT state {d['state']!r} must be 'continue', 'H0' or 'H1'")
        s._state, s.decided_at = d["state"], d["decided_at"]
        return s

    def __repr__(self) -> str:
        return (f"SPRT(mu0={self.mu0}, mu1={self.mu1}, min_pairs={self.min_pairs}, "
                f"n={self.moments.n}, "
                f"llr={self.llr:.3f}, bounds=({self._bounds[0]:.3f}, {self._bounds[1]:.3f}), "
                f"state={self._state!r})")


# --------------------------------------------------------------------------------------------
# Ratings
# --------------------------------------------------------------------------------------------

def _strongly_connected(adj: np.ndarray) -> bool:
    """Whether every node reaches every other along edges ``i -> j`` with ``adj[i, j]``."""
    k = adj.shape[0]

    def reach(a: np.ndarray) -> int:
        seen = np.zeros(k, dtype=bool)
        seen[0] = True
        stack = [0]
        while stack:
            i = stack.pop()
            new = a[i] & ~seen
            seen |= new
            stack.extend(np.flatnonzero(new).tolist())
        return int(seen.sum())

    return reach(adj) == k and reach(adj.T) == k


def newton_ascent(theta: np.ndarray, loglik: Any, info: Any, jk: np.ndarray, max_iter: int,
                  tol: float, what: str) -> np.ndarray:
    """Maximise a concave log-likelihood of log-strengths defined up to a constant (Bradley-
    Terry): Newton steps ``solve(lap + jk, grad)`` from ``info(theta) -> (grad, lap)``, each
    halved until the likelihood does not fall (an ascent direction: halving must find one),
    centred to mean 0; stops when a step moves no strength by ``tol``. ``jk``: the constant
    matrix that pins the free constant. ``what`` names the fit if it does not converge."""
    ll = loglik(theta)
    for _ in range(max_iter):
        grad, lap = info(theta)
        delta = np.linalg.solve(lap + jk, grad)
        step = 1.0
        while True:
            cand = theta + step * delta
            ll_cand = loglik(cand)
            if ll_cand >= ll - 1e-12 * abs(ll) or step < 1e-10:
                break
            step *= 0.5
        theta, ll = cand - cand.mean(), ll_cand
        if np.max(np.abs(step * delta)) < tol:
            return theta
    raise ArithmeticError(f"{what} did not converge in {max_iter} Newton steps")


def bradley_terry(wins: ArrayLike, prior: float = 1.0, tol: float = 1e-10,
                  max_iter: int = 100, draws: ArrayLike | None = None,
                  extra_meat: ArrayLike | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Fit the Bradley-Terry model ``P(i beats j) = 1 / (1 + exp(theta_j - theta_i))``.

    Parameters
    ----------
    wins : ``(k, k)`` array, ``wins[i, j]`` = times ``i`` beat ``j`` (non-negative, may be
        fractional: the caller counts a draw as half a win to each side); zero diagonal.
    prior : virtual draws added between every pair of players (``prior / 2`` to each of
        ``wins[i, j]`` and ``wins[j, i]``), a number or a symmetric ``(k, k)`` matrix of them
        per pair. The default, one draw per pair, keeps every estimate finite even for a
        player that never wins or never loses, and shifts the estimates by O(1 / games per
        pair), negligible in most tournaments but not where a player wins nearly every pair
        (99.4% of 100 pairs: a real round robin's blocks covered 0.77). ``prior=0`` gives the
        plain MLE and raises if it does not exist (players not strongly connected).
        ``prior="firth"``: Firth's bias-reduced estimate (the Jeffreys prior, ``1/2 log det``
        of the information): virtual draws ``bt_firth_draws`` per pair, as many in all as
        free ratings (``k - 1``), where the fit is most sensitive; finite under separation, and
        its bias is O(1 / games^2). The ratings of a run use it.
    tol : convergence threshold on the largest Newton step (in natural-log units).
    max_iter : Newton iteration limit.
    draws : optional symmetric ``(k, k)`` counts of drawn games, already in ``wins`` as half
        a win to each side. With them the covariance counts what a draw really is: a result
        of score 1/2, whose variance around ``p_ij`` is ``(1/2 - p_ij)^2``, not a win/loss
        trial of variance ``p_ij p_ji`` (at 30% draws the win/loss variance is 25–35% too
        wide an interval).

    Returns
    -------
    strengths : ``(k,)`` log-strengths ``theta`` with mean 0.
    cov : ``(k, k)`` covariance of ``strengths``. Without ``draws``: the Moore-Penrose inverse
        of the Fisher information ``I`` (a graph Laplacian with weights ``n_ij p_ij p_ji``),
        i.e. the inverse information under the sum-to-zero constraint, computed as
        ``I+ = (I + J/k)^-1 - J/k`` with ``J`` the all-ones matrix. With ``draws``: the sandwich
        ``I+ V I+`` where ``V`` is the Laplacian with weights ``sum over games (x - p_ij)^2``
        (``x`` = 1, 1/2, 0 for a win, draw, loss of ``i``): the variance of the score equations
        the fit solves (the same estimator: a draw is half a win), so the intervals keep their
        95% coverage whatever the draw rate. Either includes the prior games (as draws).
    extra_meat : optional ``(k, k)`` covariance of the score equations beyond that of
        independent games, added to the middle of the sandwich: for matchups that share deals,
        ``U' C U`` with ``U`` the ``(M, k)`` matchup-by-player incidence (+1 for A, -1 for B)
        and ``C = cross_cov(cov_y, n)`` (``bt_cluster_meat``), which makes the covariance
        cluster-robust by deal.

    Notes
    -----
    Newton's method on the (concave) log-likelihood, with the sum-to-zero constraint built in
    by solving ``(I + J/k) delta = gradient`` (the gradient sums to 0, so ``delta`` does too)
    and step halving as a safeguard. It converges quadratically, in a handful of steps, where
    Hunter's (2004) MM iteration needs hundreds when strengths are far apart, and its Hessian
    is needed for the covariance anyway.
    """
    w = np.array(wins, dtype=np.float64)
    if w.ndim != 2 or w.shape[0] != w.shape[1] or w.shape[0] < 1:
        raise StatsError(f"wins must be a square (k, k) matrix, got shape {w.shape}")
    if not np.isfinite(w).all() or (w < 0).any():
        raise StatsError("wins must be finite and >= 0")
    if np.diag(w).any():
        raise StatsError(f"wins diagonal {np.diag(w).tolist()!r} must be 0 (no self-play)")
    if draws is not None:
        d = np.array(draws, dtype=np.float64)
        if d.shape != w.shape or not np.isfinite(d).all() or (d < 0).any() \
                or not np.array_equal(d, d.T) or np.diag(d).any():
            raise StatsError(f"draws must be a symmetric {w.shape} matrix of counts >= 0 with "
                             f"a zero diagonal, like wins")
        if (0.5 * d > w + 1e-9 * (1.0 + w)).any():
            raise StatsError("draws must be counted in wins (half a win to each side): "
                             "some draws[i, j] / 2 exceed wins[i, j]")
    k = w.shape[0]
    if isinstance(prior, str):
        if prior != "firth":
            raise StatsError(f"prior {prior!r} must be a number >= 0, a (k, k) matrix or "
                             f"'firth'")
        return _bt_firth(w, tol, max_iter, draws, extra_meat)
    pr = np.array(prior, dtype=np.float64)
    if pr.ndim == 0:
        if not pr >= 0.0 or not math.isfinite(pr):
            raise StatsError(f"prior {prior!r} must be a finite number >= 0")
    elif pr.shape != w.shape or not np.isfinite(pr).all() or (pr < 0).any() \
            or not np.array_equal(pr, pr.T):
        raise StatsError(f"a prior matrix must be symmetric {w.shape}, finite and >= 0")
    if k == 1:
        return np.zeros(1), np.zeros((1, 1))
    off = ~np.eye(k, dtype=bool)
    prior = pr * off  # virtual draws per pair
    w = w + 0.5 * prior
    if not _strongly_connected(w > 0):
        raise StatsError("Bradley-Terry MLE does not exist: some group of players never beat "
                         "(or never lost to) the rest; use prior > 0")
    games = w + w.T
    won = w.sum(axis=1)
    jk = np.full((k, k), 1.0 / k)

    def loglik(theta: np.ndarray) -> float:
        d = theta[:, None] - theta[None, :]
        return float(-(w * np.logaddexp(0.0, -d)).sum())  # sum w_ij log sigmoid(d_ij)

    def info(theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        p = 1.0 / (1.0 + np.exp(theta[None, :] - theta[:, None]))  # p[i, j] = P(i beats j)
        grad = won - (games * p).sum(axis=1)
        weights = games * p * p.T
        lap = np.diag(weights.sum(axis=1)) - weights
        return grad, lap

    theta = newton_ascent(np.zeros(k), loglik, info, jk, max_iter, tol,
                          "Bradley-Terry Newton iteration")
    _, lap = info(theta)
    cov = np.linalg.inv(lap + jk) - jk
    if draws is not None:
        p = 1.0 / (1.0 + np.exp(theta[None, :] - theta[:, None]))
        dr = d + prior  # the prior games are draws
        pure = np.maximum(w - 0.5 * dr, 0.0)  # games i won outright
        s = pure * (1.0 - p) ** 2 + dr * (0.5 - p) ** 2 + pure.T * p ** 2
        s = 0.5 * (s + s.T)
        meat = np.diag(s.sum(axis=1)) - s
        cov = cov @ meat @ cov
    if extra_meat is not None:
        e = np.asarray(extra_meat, dtype=np.float64)
        if e.shape != (k, k) or not np.isfinite(e).all():
            raise StatsError(f"extra_meat must be a finite ({k}, {k}) matrix, got {e.shape}")
        bread = np.linalg.inv(lap + jk) - jk
        cov = cov + bread @ e @ bread
    cov = 0.5 * (cov + cov.T)  # symmetric to rounding
    return theta, cov


def bt_firth_draws(wins: ArrayLike, log_strengths: ArrayLike) -> np.ndarray:
    """Firth's virtual draws per pair at the strengths ``theta``: ``h_ij = n_ij p_ij p_ji
    (e_i - e_j)' I+ (e_i - e_j)``, the leverage of pair ``(i, j)`` (``n_ij`` its games from
    ``wins``, ``I`` the information): adding ``h_ij / 2`` wins to each side is Firth's
    modified score for the Bradley-Terry model. They sum to ``k - 1`` over the pairs."""
    w = np.asarray(wins, dtype=np.float64)
    th = np.asarray(log_strengths, dtype=np.float64).ravel()
    k = th.size
    games = w + w.T
    p = 1.0 / (1.0 + np.exp(th[None, :] - th[:, None]))
    wgt = games * p * p.T
    lap = np.diag(wgt.sum(axis=1)) - wgt
    jk = np.full((k, k), 1.0 / k)
    inv = np.linalg.inv(lap + jk) - jk
    dg = np.diag(inv)
    h = wgt * (dg[:, None] + dg[None, :] - 2.0 * inv)
    h = 0.5 * (h + h.T)
    np.fill_diagonal(h, 0.0)
    return np.maximum(h, 0.0)


def _bt_firth(w: np.ndarray, tol: float, max_iter: int, draws: ArrayLike | None,
              extra_meat: ArrayLike | None) -> tuple[np.ndarray, np.ndarray]:
    """``bradley_terry`` with Firth's virtual draws, iterated to their fixed point."""
    k = w.shape[0]
    played = (w + w.T) > 0
    np.fill_diagonal(played, False)
    h = np.where(played, (k - 1) / max(played.sum() / 2, 1.0), 0.0)
    for _ in range(500):
        theta, cov = bradley_terry(w, prior=h, tol=tol, max_iter=max_iter, draws=draws,
                                   extra_meat=extra_meat)
        if k == 1:
            return theta, cov
        new = bt_firth_draws(w, theta)
        if np.max(np.abs(new - h)) < 1e-10:
            return theta, cov
        h = new
    raise ArithmeticError("Firth's Bradley-Terry iteration did not converge")


def _incidence(pairs: Sequence[tuple[int, int]], k: int) -> np.ndarray:
    """``(M, k)`` matrix with +1 at ``(m, a)`` and -1 at ``(m, b)`` for matchup ``m = (a, b)``."""
    u = np.zeros((len(pairs), k))
    for m, (a, b) in enumerate(pairs):
        u[m, a], u[m, b] = 1.0, -1.0
    return u


def bt_cluster_meat(pairs: Sequence[tuple[int, int]], k: int, cov_y: ArrayLike,
                    n: Sequence[int]) -> np.ndarray:
    """``extra_meat`` for ``bradley_terry`` when matchups share deals: ``U' C U`` with ``U``
    the incidence of ``pairs`` and ``C = cross_cov(cov_y, n)``, ``cov_y`` the per-deal
    covariance of the matchups' scores (``ClusterMoments.cov``) and ``n`` their pair counts."""
    u = _incidence(pairs, k)
    return u.T @ cross_cov(cov_y, n) @ u


def _gamma_q(a: float, x: float) -> float:
    """Regularised upper incomplete gamma ``Q(a, x)`` (Numerical Recipes 6.2)."""
    if x <= 0.0:
        return 1.0
    log_front = -x + a * math.log(x) - math.lgamma(a)
    tiny = 1e-300
    if x < a + 1.0:  # series for P(a, x)
        ap, term = a, 1.0 / a
        total = term
        for _ in range(100000):
            ap += 1.0
            term *= x / ap
            total += term
            if abs(term) < abs(total) * 1e-16:
                return max(0.0, 1.0 - total * math.exp(log_front))
        raise ArithmeticError(f"incomplete gamma series did not converge ({a}, {x})")
    b = x + 1.0 - a  # continued fraction for Q(a, x) (modified Lentz)
    c, d = 1.0 / tiny, 1.0 / b
    h = d
    for i in range(1, 100000):
        an = -i * (i - a)
        b += 2.0
        d = an * d + b
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = b + an / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-16:
            return math.exp(log_front) * h
    raise ArithmeticError(f"incomplete gamma continued fraction did not converge ({a}, {x})")


def chi2_sf(x: float, df: float) -> float:
    """``P(X > x)`` for a chi-square variable with ``df > 0`` degrees of freedom."""
    if not df > 0:
        raise StatsError(f"degrees of freedom {df!r} must be > 0")
    return _gamma_q(0.5 * df, 0.5 * float(x))


def bt_goodness_of_fit(pairs: Sequence[tuple[int, int]], wins: ArrayLike, draws: ArrayLike,
                       losses: ArrayLike, log_strengths: ArrayLike,
                       cov_y: ArrayLike | None = None,
                       prior: float | ArrayLike = 1.0) -> dict[str, Any]:
    """How well a Bradley-Terry fit explains each matchup's score: a Wald chi-square test.

    Parameters
    ----------
    pairs : matchups ``(a, b)``; ``wins, draws, losses`` : A's pair counts per matchup.
    log_strengths : the fit (``bradley_terry`` with the same ``prior``).
    cov_y : optional per-deal covariance of the matchups' scores (``ClusterMoments.cov``) for
        matchups that share deals; without it the matchups count as independent.
    prior : the fit's virtual draws: a number per pair, or one per matchup (Firth's:
        ``bt_firth_draws`` at the fit).

    Returns
    -------
    dict
        ``chi2``, ``df`` (matchups minus the ``k - 1`` fitted strengths, for players connected
        through the matchups) and ``p`` (chi-square tail); per matchup ``observed`` and
        ``expected`` score per pair and ``z``, its standardised residual. ``df`` 0 (a
        head-to-head, or as many matchups as ratings) gives ``chi2`` 0 and ``p`` nan.

    Notes
    -----
    The residuals ``r = O - n p`` (A's score total less its fitted expectation, the prior's
    virtual draws included as in the fit) have covariance ``A S A'`` with
    ``A = I - W U I+ U'`` (``W = diag(n p q)``, ``U`` the incidence, ``I = U' W U``: the fit
    takes ``k - 1`` dimensions out) and ``S`` the covariance of the score totals: each
    matchup's sum of ``(y - p)^2`` over its pairs, and, with ``cov_y``, the covariance across
    matchups from the deals they share. ``chi2 = r' (A S A')+ r``, on the ``df`` dimensions
    left. Under the model with correlated deals it is chi-square(df) in large samples, so the
    test is not fooled by the clustering that makes the pairs of different matchups dependent.
    """
    th = np.asarray(log_strengths, dtype=np.float64).ravel()
    k, mm = th.size, len(pairs)
    w, d, l_ = (np.asarray(v, dtype=np.float64).reshape(mm) for v in (wins, draws, losses))
    n = w + d + l_
    p = np.array([1.0 / (1.0 + math.exp(th[b] - th[a])) for a, b in pairs])
    obs = np.where(n > 0, (w + 0.5 * d) / np.maximum(n, 1.0), math.nan)
    out: dict[str, Any] = {"observed": obs.tolist(), "expected": p.tolist()}
    u = _incidence(pairs, k)
    rank_u = int(np.linalg.matrix_rank(u)) if mm else 0
    df = mm - rank_u
    if df <= 0 or not (n > 0).all():
        return {**out, "chi2": 0.0, "df": 0, "p": math.nan, "z": [math.nan] * mm}
    pr = np.broadcast_to(np.asarray(prior, dtype=np.float64), (mm,))
    nn = n + pr
    r = w + 0.5 * d + 0.5 * pr - nn * p
    wt = nn * p * (1.0 - p)
    jk = np.full((k, k), 1.0 / k)
    info_pinv = np.linalg.inv(u.T @ (wt[:, None] * u) + jk) - jk
    a_mat = np.eye(mm) - (wt[:, None] * u) @ info_pinv @ u.T
    s_diag = w * (1.0 - p) ** 2 + d * (0.5 - p) ** 2 + l_ * p ** 2
    s_mat = np.diag(s_diag)
    if cov_y is not None:
        s_mat = s_mat + cross_cov(cov_y, n.astype(np.int64).tolist())
    cov_r = a_mat @ s_mat @ a_mat.T
    cov_r = 0.5 * (cov_r + cov_r.T)
    vals, vecs = np.linalg.eigh(cov_r)
    keep = np.argsort(vals)[::-1][:df]  # the df dimensions the fit leaves
    vals, vecs = vals[keep], vecs[:, keep]
    ok = vals > 1e-12 * max(vals.max(initial=0.0), 1e-300)
    proj = vecs[:, ok].T @ r
    chi2 = float(np.sum(proj * proj / vals[ok]))
    df_used = int(ok.sum())
    sd = np.sqrt(np.maximum(np.diag(cov_r), 0.0))
    z = np.where(sd > 0, r / np.where(sd > 0, sd, 1.0), 0.0)
    return {**out, "chi2": chi2, "df": df_used,
            "p": chi2_sf(chi2, df_used) if df_used else math.nan, "z": z.tolist()}


def elo_from_bt(log_strengths: ArrayLike, cov: ArrayLike,
                conf: float = 0.95) -> list[tuple[float, float, float]]:
    """Elo ratings ``(elo, lo, hi)`` per player from ``bradley_terry`` output.

    ``elo = ELO_PER_NAT * theta`` (``400 / ln 10`` per natural-log unit, so that
    ``P(i beats j) = 1 / (1 + 10^((elo_j - elo_i) / 400))``), centred to mean 0; the interval is
    ``elo -/+ z * ELO_PER_NAT * sqrt(cov_ii)`` with the normal quantile ``z``. Intervals are for
    each player against the field average; for two players compare ``theta_i - theta_j`` with
    variance ``cov_ii + cov_jj - 2 cov_ij``.
    """
    theta = np.asarray(log_strengths, dtype=np.float64).ravel()
    c = np.asarray(cov, dtype=np.float64)
    k = theta.size
    if c.shape != (k, k):
        raise StatsError(f"cov shape {c.shape} does not match {k} strengths")
    center = np.eye(k) - 1.0 / k  # centring is linear: cov -> P cov P
    theta, c = center @ theta, center @ c @ center
    z = _critical(conf)
    out = []
    for t, v in zip(theta, np.diag(c), strict=True):
        elo, half = ELO_PER_NAT * t, z * ELO_PER_NAT * math.sqrt(max(0.0, v))
        out.append((float(elo), float(elo - half), float(elo + half)))
    return out


def _score_to_elo(s: float) -> float:
    """Elo difference with expected score ``s``: ``-400 log10(1/s - 1)``, infinite at 0, 1."""
    if s <= 0.0:
        return -math.inf
    if s >= 1.0:
        return math.inf
    return -400.0 * math.log10(1.0 / s - 1.0)


def _betainc(a: float, b: float, x: float) -> float:
    """Regularised incomplete beta ``I_x(a, b)`` for ``a, b > 0`` (Numerical Recipes 6.4)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = (math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x)
                 + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _betainc_cf(a, b, x) / a
    return 1.0 - math.exp(log_front) * _betainc_cf(b, a, 1.0 - x) / b


def _beta_ppf(q: float, a: float, b: float) -> float:
    """Quantile ``x`` with ``I_x(a, b) = q`` (bisection to the last bit)."""
    lo, hi = 0.0, 1.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if _betainc(a, b, mid) < q:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def _wdl_profile_draws(w: np.ndarray, d: np.ndarray, l_: np.ndarray,
                       mu: np.ndarray) -> np.ndarray:
    """Half the draw rate, ``u``, of the trinomial (scores 1, 1/2, 0) that fits win/draw/loss
    counts best among those of mean score ``mu``.

    With ``p_draw = 2u``, ``p_win = mu - u``, ``p_loss = 1 - mu - u`` the constrained maximum
    likelihood is the smaller root of ``n u^2 - (w (1 - mu) + d + l mu) u + d mu (1 - mu) = 0``:
    the draw rate is profiled out, so draws count as what they are, and an outcome never seen
    (no losses, say) may still carry probability under the hypothesis.
    """
    n = w + d + l_
    a, b = mu, 1.0 - mu
    bq = w * b + d + l_ * a
    u = (bq - np.sqrt(np.maximum(bq * bq - 4.0 * n * d * a * b, 0.0))) / (2.0 * n)
    return np.clip(u, 0.0, np.minimum(a, b))


WDL_CONTINUITY = 0.25  # score_interval: half the step (1/2 point) of the score total


def _wdl_score(w: np.ndarray, d: np.ndarray, l_: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """Continuity-corrected score statistic ``(|X - n mu| - 1/4)^2 / (n v(mu))`` of the
    hypothesis "mean score ``mu``" for win/draw/loss counts, ``X = w + d/2`` the score total.

    ``v(mu) = mu (1 - mu) - u / 2`` is the variance of one result under the profiled trinomial
    (``_wdl_profile_draws``): the variance the hypothesis itself implies, draws included, as
    Wilson's interval uses ``mu (1 - mu)`` for win/loss results. ``X`` moves in steps of 1/2, and
    the correction of half a step keeps the coverage of a lattice statistic from dipping.
    """
    n = w + d + l_
    dev = np.maximum(np.abs(w + 0.5 * d - n * mu) - WDL_CONTINUITY, 0.0)
    v = mu * (1.0 - mu) - 0.5 * _wdl_profile_draws(w, d, l_, mu)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(v > 0.0, dev * dev / (n * v), np.where(dev > 0.0, np.inf, 0.0))


WDL_EXACT_UPTO = 20  # score_interval: exact (Clopper-Pearson) bounds when this few results count


def score_interval(wins: ArrayLike, draws: ArrayLike, losses: ArrayLike,
                   conf: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Confidence interval ``(lo, hi)`` of the mean score (win 1, draw 1/2, loss 0) per
    independent result, from win/draw/loss counts (arrays broadcast; floats for scalars).

    The score (Wilson-type) interval of the trinomial model: every mean score ``mu`` whose
    continuity-corrected score statistic (``_wdl_score``: the variance is the one the
    hypothesis implies, with the draw rate profiled out) is at most the chi-square(1)
    quantile. It stays inside [0, 1], reaches 1 (or 0) only when every result is a win (a
    loss), and is as narrow as the draws allow (a draw is a result of score 1/2, not half a
    win and half a loss). Where at most ``WDL_EXACT_UPTO`` wins plus draws (or losses plus
    draws) are seen, the score total is nearly Poisson and both bounds are widened to the
    Clopper-Pearson ones of the score total as successes (exact for no draws, conservative
    with them).

    Exact coverage (every outcome enumerated, ``python tests/stats_coverage.py draws`` and
    ``… elo``): at least 0.95 for 40, 100 and 300 results, mean score 0.3-0.7 and draws
    80-97% of their maximum ``1 - |2 mu - 1|`` (the former likelihood-ratio interval: 0.90);
    0.947-0.998 over 30-1,000 results and mean scores 0.004-0.5 with and without draws.
    """
    crit = _critical(conf) ** 2
    w, d, l_ = (np.atleast_1d(np.asarray(v, dtype=np.float64)) for v in (wins, draws, losses))
    scalar = all(np.ndim(v) == 0 for v in (wins, draws, losses))
    w, d, l_ = np.broadcast_arrays(w, d, l_)
    if (w < 0).any() or (d < 0).any() or (l_ < 0).any() or not np.isfinite(w + d + l_).all():
        raise StatsError("win, draw and loss counts must be finite and >= 0")
    n = w + d + l_
    if (n <= 0).any():
        raise StatsError("every interval needs at least one result (wins + draws + losses)")
    s = (w + 0.5 * d) / n
    bounds = []
    for side in (0, 1):  # the statistic grows on each side of the estimate
        near, far = s.copy(), np.full_like(s, float(side))
        for _ in range(64):  # bisection: near stays inside the interval, far outside
            mid = 0.5 * (near + far)
            inside = _wdl_score(w, d, l_, mid) <= crit
            near, far = np.where(inside, mid, near), np.where(inside, far, mid)
        end_in = _wdl_score(w, d, l_, np.full_like(s, float(side))) <= crit
        bounds.append(np.where(end_in, float(side), near))
    lo, hi = bounds
    alpha = 1.0 - float(conf)
    x = w + 0.5 * d
    for idx in zip(*np.nonzero((l_ + d <= WDL_EXACT_UPTO) | (w + d <= WDL_EXACT_UPTO)),
                   strict=True):
        xi, ni = float(x[idx]), float(n[idx])
        if xi > 0.0:
            lo[idx] = min(lo[idx], _beta_ppf(0.5 * alpha, xi, ni - xi + 1.0))
        if xi < ni:
            hi[idx] = max(hi[idx], _beta_ppf(1.0 - 0.5 * alpha, xi + 1.0, ni - xi))
    if scalar:
        return float(lo[0]), float(hi[0])
    return lo, hi


def elo_from_wdl(wins: int, draws: int, losses: int,
                 conf: float = 0.95) -> tuple[float, float, float]:
    """Elo difference ``(elo, lo, hi)`` of a head-to-head from its win/draw/loss counts.

    ``elo = -400 log10(1/score - 1)`` of the mean score and ``lo, hi`` the same transform of
    ``score_interval`` (the transform is monotone, so the coverage is the interval's).
    ``hi`` is ``+inf`` only when every result is a win and ``lo`` is ``-inf`` only when every
    one is a loss: the interval is then one-sided (``> lo``, ``< hi``). ``nan`` for no result.
    """
    n = wins + draws + losses
    if not n:
        return (math.nan, math.nan, math.nan)
    lo, hi = score_interval(wins, draws, losses, conf)
    return (_score_to_elo((wins + 0.5 * draws) / n), _score_to_elo(lo), _score_to_elo(hi))


def elo_from_score(score: float, n: int, var: float | None = None,
                   conf: float = 0.95) -> tuple[float, float, float]:
    """Elo difference ``(elo, lo, hi)`` of a head-to-head from its mean score.

    Parameters
    ----------
    score : mean score per result in [0, 1] (win 1, draw 1/2, loss 0), e.g. ``WDL.score``.
    n : number of independent results (duplicate pairs, not deals).
    var : variance of one result's score; default ``score * (1 - score)`` (no draws, the
        largest possible). ``WDL.score_var`` gives the W/D/L value; ``WDL.elo`` does both.
    conf : confidence level.

    Returns
    -------
    (elo, lo, hi) : ``elo = -400 log10(1/score - 1)``; ``lo, hi`` are the same transform of
        the normal interval ``score -/+ z sqrt(var / n)`` (as fishtest does: the transform is
        monotone, so the interval keeps its coverage and is asymmetric in Elo). Endpoints at
        or beyond 0 or 1 map to -inf / +inf.
    """
    score = float(score)
    if not 0.0 <= score <= 1.0:
        raise StatsError(f"score {score!r} must be in [0, 1]")
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise StatsError(f"number of results {n!r} must be an integer >= 1")
    v = score * (1.0 - score) if var is None else float(var)
    if not v >= 0.0:
        raise StatsError(f"variance {var!r} must be >= 0")
    half = _critical(conf) * math.sqrt(v / n)
    return (_score_to_elo(score), _score_to_elo(score - half), _score_to_elo(score + half))


# --- swing deals ----------------------------------------------------------------------------
SWINGS_KEPT = 10  # swing deals each matchup keeps (shuangkou replay RESULTS --swings N, N <= it)
SWINGS_SHOWN = 3  # of them, in the summary and report.html, records kept in swings.jsonl


class Swings:
    """The duplicate pairs with the largest swings, in a total order: mergeable and exact.

    A pair (deal ``d``) holds ``a0`` and ``a1``, side A's per-player settlement at the table
    where A sits in seats 0 and 2 (orientation 0) and at the table where it sits in 1 and 3;
    twice the pair's result is ``a0 + a1`` and its *swing* is ``|a0 + a1| / 2`` points per deal
    per player: how far the same cards, teams swapped, ended from a tie. Kept: the ``k`` pairs
    first by (swing descending, deal ascending), so chunks merged in any grouping or order keep
    the same list (``--jobs``, chunk size and ``--resume`` do not change it).
    """

    __slots__ = ("a0", "a1", "deals", "k")

    def __init__(self, k: int = SWINGS_KEPT, deals: ArrayLike = (), a0: ArrayLike = (),
                 a1: ArrayLike = ()) -> None:
        self.k = int(k)
        self.deals = np.asarray(deals, dtype=np.int64).reshape(-1)
        self.a0 = np.asarray(a0, dtype=np.int64).reshape(-1)
        self.a1 = np.asarray(a1, dtype=np.int64).reshape(-1)
        self._keep()

    def _keep(self) -> None:
        size = np.abs(self.a0 + self.a1)
        if size.size > 4 * self.k > 0:  # only pairs at least as large as the k-th can stay
            big = size >= np.partition(size, size.size - self.k)[size.size - self.k]
            self.deals, self.a0, self.a1, size = (self.deals[big], self.a0[big],
                                                  self.a1[big], size[big])
        order = np.lexsort((self.deals, -size))[:self.k]
        self.deals, self.a0, self.a1 = self.deals[order], self.a0[order], self.a1[order]

    def add(self, deals: ArrayLike, a0: ArrayLike, a1: ArrayLike) -> Swings:
        """Add pairs (one entry per deal); keeps the top ``k``."""
        self.deals = np.concatenate([self.deals, np.asarray(deals, dtype=np.int64)])
        self.a0 = np.concatenate([self.a0, np.asarray(a0, dtype=np.int64)])
        self.a1 = np.concatenate([self.a1, np.asarray(a1, dtype=np.int64)])
        self._keep()
        return self

    def __iadd__(self, other: Swings) -> Swings:
        self.k = max(self.k, other.k)
        return self.add(other.deals, other.a0, other.a1)

    def __len__(self) -> int:
        return int(self.deals.size)

    def rows(self) -> list[dict[str, Any]]:
        """The kept pairs, largest swing first: deal, ``a0``, ``a1``, ``x`` (A's result of
        the pair, points per deal per player) and ``swing`` (``|x|``)."""
        return [{"deal": int(d), "a0": int(p), "a1": int(q), "x": (int(p) + int(q)) / 2,
                 "swing": abs(int(p) + int(q)) / 2}
                for d, p, q in zip(self.deals, self.a0, self.a1)]

    def to_dict(self) -> dict[str, Any]:
        return {"type": "Swings", "k": self.k, "deals": self.deals.tolist(),
                "a0": self.a0.tolist(), "a1": self.a1.tolist()}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Swings:
        return cls(d["k"], d["deals"], d["a0"], d["a1"])
