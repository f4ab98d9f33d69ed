"""Streamed moments: ``Moments``, ``ClusterMoments``, ``stratified_ci``, ``cross_cov``, ``holm``
and ``mean_ci`` (part of ``sim.analysis.stats``)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from sim.analysis.stats.quantiles import critical
from sim.errors import StatsError

T_NORMAL_FROM = 30  # Moments.ci uses Student t below this many observations, normal from it on


# --------------------------------------------------------------------------------------------
# Moments
# --------------------------------------------------------------------------------------------

def as_values(values: ArrayLike) -> np.ndarray:
    """Values as a flat float64 array; a StatsError if any is NaN or infinite."""
    try:
        v = np.asarray(values, dtype=np.float64).ravel()
    except (TypeError, ValueError):
        raise StatsError(f"values {values!r} must be numbers") from None
    if not np.isfinite(v).all():
        bad = v[~np.isfinite(v)]
        raise StatsError(f"values must be finite; got {bad.size} non-finite, e.g. {bad[0]!r}")
    return v


def centred_ss(n: int, total: float, total_sq: float) -> Fraction:
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
        v = as_values(values)
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
        return float(centred_ss(self._n, self._total, self._total_sq) / (self._n - 1))

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
            critical(conf)  # still reject a bad conf
            return (math.nan, math.nan)
        c = critical(conf, self._n - 1 if self._n < T_NORMAL_FROM else math.inf)
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
        check_type(d, "Moments")
        return cls(d["n"], d["total"], d["total_sq"])

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Moments):
            return NotImplemented
        return (self._n, self._total, self._total_sq) == (other._n, other._total, other._total_sq)

    __hash__ = None  # mutable

    def __repr__(self) -> str:
        return f"Moments(n={self._n}, mean={self.mean:.6g}, sd={self.sd:.6g})"


def check_type(d: Any, name: str) -> None:
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
        critical(conf)
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
    c = critical(conf, df if df < T_NORMAL_FROM else math.inf)
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
        check_type(d, "ClusterMoments")
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
