"""Ratings: Bradley-Terry fits, their goodness of fit, and Elo from strengths, W/D/L or a score
(part of ``sim.analysis.stats``)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from sim.analysis.stats.moments import cross_cov
from sim.analysis.stats.quantiles import betainc_cf, critical
from sim.errors import StatsError

ELO_PER_NAT = 400.0 / math.log(10.0)  # Elo points per unit of natural-log strength (~173.72)


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
    z = critical(conf)
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
        return math.exp(log_front) * betainc_cf(a, b, x) / a
    return 1.0 - math.exp(log_front) * betainc_cf(b, a, 1.0 - x) / b


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
    crit = critical(conf) ** 2
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
    half = critical(conf) * math.sqrt(v / n)
    return (_score_to_elo(score), _score_to_elo(score - half), _score_to_elo(score + half))
