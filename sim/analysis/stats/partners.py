"""Partners: team strengths, compatibility and individual strengths of mixed teams played on
shared duplicate deals (part of ``sim.analysis.stats``; issue 36).

A *partners* tournament of N players plays team types, the N mirror teams ``(i, i)`` and the
mixed teams ``(i, j)``, against each other: every pairing of two different team types
``(T1, T2)`` is played on the same duplicate deals, both orientations. Its result for pairing
``p`` on deal ``d``, ``x[p, d]``, is team T1's mean settlement per deal per player over the two
tables, the quantity a tournament's matchup reports.

Model and what it conditions on
-------------------------------
``E x[p, d] = s(T1) - s(T2)``: one strength per team type, in points per deal per player
against the mean team of the design (the strengths sum to zero). The estimates are least
squares over the pairing means (weighted by the deals each pairing played), so they are
linear in the means: every figure here is a linear contrast of them, and its covariance is
``L C L'`` with ``C`` the covariance of the pairing means **clustered by deal**: every pairing
plays each deal, so a deal that favours a team favours it in all its pairings, and the means
are correlated (treating them as independent made team intervals cover 87% in a study).

Every estimate conditions on the players' fixed strategies (a learned player is its one set of
weights, not its training run) and on the design (the team types played, which define the
"mean team"); the deals are the random sample: the intervals cover what the same players would
score on average over new deals. With a team model that does not hold (a ``fit`` rejected),
the strengths are still the least-squares summary of the pairings' expected margins.

Tests use the covariance estimated from the deals, ``C = S / D`` (``S`` the per-deal sample
covariance, ``D`` deals): Wald statistics are then Hotelling's ``T^2``, referred to
``F(q, D - q)`` after scaling by ``(D - q) / (q (D - 1))`` (exact for normal deals; a plain
chi-square reference would reject too often with many pairings and few hundred deals).

Public: ``team_types`` (the design, checked), ``partner_pairings``, ``pairing_means``,
``partners_fit`` (from pairing means and their covariance: what a streamed run keeps) and
``partners_from_deals`` (from the per-deal table).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from sim.analysis.stats.moments import T_NORMAL_FROM
from sim.analysis.stats.quantiles import betainc_cf, critical
from sim.analysis.stats.ratings import chi2_sf
from sim.errors import ConfigError, StatsError

PARTNERS_FIT_SHOWN = 3  # pairings the fit test names: those furthest from the team model

Team = tuple[str, str]


# --------------------------------------------------------------------------------------------
# The design
# --------------------------------------------------------------------------------------------

def _check_players(players: Sequence[str]) -> list[str]:
    """The player names as a list; a ConfigError for fewer than two or a repeated name."""
    names = [str(p) for p in players]
    if len(names) < 2:
        raise ConfigError(f"a partners tournament needs at least 2 players, got {names!r}")
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise ConfigError(f"player {name!r} is named twice in a partners tournament; "
                              "give each player once")
        seen.add(name)
    return names


def _parse_teams(names: list[str], teams: Sequence[Any]) -> list[Team]:
    """The ``teams`` restriction as pairs of known names in player order, each once."""
    order = {n: i for i, n in enumerate(names)}
    out: list[Team] = []
    for team in teams:
        if isinstance(team, str) or not isinstance(team, Sequence) or len(team) != 2:
            raise ConfigError(f"team {team!r} must be a pair of player names, e.g. "
                              f"[{names[0]!r}, {names[1]!r}]")
        for name in team:
            if name not in order:
                raise ConfigError(f"team {list(team)!r} names {name!r}, not a player of this "
                                  f"tournament ({', '.join(map(repr, names))})")
        a, b = sorted((str(team[0]), str(team[1])), key=order.__getitem__)
        if (a, b) in out:
            raise ConfigError(f"team {list(team)!r} is given twice in teams")
        out.append((a, b))
    return sorted(out, key=lambda t: (t[0] != t[1], order[t[0]], order[t[1]]))


def _check_partners(names: list[str], teams: list[Team]) -> None:
    """A ConfigError naming a player with fewer than 2 different partners (itself counts:
    a mirror team), or a design whose individual strengths are not identified."""
    for name in names:
        partners = sorted({b if a == name else a for a, b in teams if name in (a, b)})
        if len(partners) < 2:
            got = f"only {partners[0]!r}" if partners else "no team"
            raise ConfigError(f"player {name!r} has {got} as partner in the teams played; it "
                              "needs 2 different partners (itself counts) for its individual "
                              "strength to be identified")
    if np.linalg.matrix_rank(membership(names, teams)) < len(names):
        raise ConfigError(f"teams {[list(t) for t in teams]!r} do not identify individual "
                          "strengths (their partners form an even cycle): add a mirror team "
                          "or a team across the cycle")


def team_types(players: Sequence[str], teams: Sequence[Any] | None = None) -> list[Team]:
    """The team types of a partners tournament, checked: mirror teams first, then mixed teams,
    each as ``(a, b)`` in player order.

    ``teams``: an optional restriction, a list of pairs of player names (``[a, a]`` a mirror
    team); by default all ``N`` mirror and ``N (N - 1) / 2`` mixed teams. A ConfigError (one
    line) for fewer than two players, a repeated player, a team naming an unknown player or
    given twice, fewer than two team types, or a player with fewer than two different partners
    (itself counting) among the teams: its individual strength would not be identified.
    """
    names = _check_players(players)
    if teams is None:
        out = [(n, n) for n in names]
        out += [(a, b) for i, a in enumerate(names) for b in names[i + 1:]]
    else:
        out = _parse_teams(names, teams)
    if len(out) < 2:
        raise ConfigError(f"teams {[list(t) for t in out]!r}: a partners tournament needs at "
                          "least 2 team types")
    _check_partners(names, out)
    return out


def partner_pairings(teams: Sequence[Team]) -> list[tuple[int, int]]:
    """Every pairing of two different team types, ``(t1, t2)`` with ``t1 < t2`` (indices into
    ``teams``): team ``t1`` is the one whose margin ``x`` is reported."""
    k = len(teams)
    return [(a, b) for a in range(k) for b in range(a + 1, k)]


def incidence(pairings: Sequence[tuple[int, int]], k: int) -> np.ndarray:
    """``(P, K)`` matrix with +1 at ``(p, t1)`` and -1 at ``(p, t2)`` for pairing ``(t1, t2)``:
    the expected margins are ``incidence @ s``."""
    u = np.zeros((len(pairings), k))
    for p, (a, b) in enumerate(pairings):
        u[p, a], u[p, b] = 1.0, -1.0
    return u


def membership(players: Sequence[str], teams: Sequence[Team]) -> np.ndarray:
    """``(K, N)`` matrix of the players in each team: ``e_a + e_b`` (``2 e_a`` for a mirror)."""
    col = {n: i for i, n in enumerate(players)}
    a_mat = np.zeros((len(teams), len(players)))
    for t, (a, b) in enumerate(teams):
        a_mat[t, col[a]] += 1.0
        a_mat[t, col[b]] += 1.0
    return a_mat


# --------------------------------------------------------------------------------------------
# Pairing means clustered by deal
# --------------------------------------------------------------------------------------------

def pairing_means(x: ArrayLike, clustered: bool = True
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """``(mean, cov, n, deals)`` of the pairings' results from their per-deal table.

    ``x``: ``(P, D)`` array, row ``p`` pairing ``p``'s results on deals ``1 .. D`` (NaN where
    it did not play the deal). ``mean[p]`` over its ``n[p]`` deals; ``cov`` the covariance of
    the means clustered by deal: ``sum_d (x_pd - m_p)(x_qd - m_q) / (n_p n_q)`` over the deals
    both played, times ``n_pq / (n_pq - 1)`` (so ``S / D`` for complete tables, ``S`` the
    per-deal sample covariance), made positive semi-definite if missing deals broke that.
    ``clustered=False`` keeps only the diagonal: the pairings as independent (for comparison:
    too narrow when they share deals). ``deals``: the deals any pairing played.
    """
    v = np.asarray(x, dtype=np.float64)
    if v.ndim != 2:
        raise StatsError(f"results must be a (pairings, deals) table, got shape {v.shape}")
    mask = ~np.isnan(v)
    if not np.isfinite(v[mask]).all():
        raise StatsError("results must be finite numbers or NaN (a deal not played)")
    n = mask.sum(axis=1)
    mean = np.where(n > 0, np.where(mask, v, 0.0).sum(axis=1) / np.maximum(n, 1), math.nan)
    dev = np.where(mask, v - mean[:, None], 0.0)
    cross = np.einsum("pd,qd->pq", dev, dev)  # not BLAS: small, and threads only contend
    if mask.all():
        n_pq = np.full(cross.shape, float(v.shape[1]))
    else:
        f = mask.astype(np.float64)
        n_pq = np.einsum("pd,qd->pq", f, f)
    with np.errstate(divide="ignore", invalid="ignore"):
        cov = np.where(n_pq >= 2, cross / np.outer(n, n) * n_pq / (n_pq - 1.0), 0.0)
    if not clustered:
        cov = np.diag(np.diag(cov))
    elif not mask.all():
        vals, vecs = np.linalg.eigh(0.5 * (cov + cov.T))
        cov = (vecs * np.maximum(vals, 0.0)) @ vecs.T
    return mean, cov, n, int(mask.any(axis=0).sum())


# --------------------------------------------------------------------------------------------
# Linear maps of the fit
# --------------------------------------------------------------------------------------------

def _team_map(u: np.ndarray, n: np.ndarray) -> np.ndarray:
    """``(K, P)`` matrix ``L`` with ``s = L m``: least squares of the pairing means ``m`` on
    the incidence ``u``, weighted by the deals ``n``, strengths summing to zero."""
    k = u.shape[1]
    w = n / n.max()
    info = u.T @ (w[:, None] * u)
    if np.linalg.matrix_rank(info) < k - 1:
        raise StatsError("the pairings played do not connect every team type: their "
                         "strengths cannot be compared")
    jk = np.full((k, k), 1.0 / k)
    return np.linalg.solve(info + jk, (w[:, None] * u).T)


def _individual_map(a_mat: np.ndarray) -> np.ndarray:
    """``(N, K)`` matrix taking team strengths (summing to zero) to additive individual ones:
    least squares of ``s`` on ``u_a + u_b`` centred like ``s``, the ``u`` of mean zero.

    Like the team strengths they summarise, they hold for these players' strategies and are
    relative to the players of the design; they say who is the better partner on average over
    the teams played, and say it for every partner only where additivity holds."""
    nn = a_mat.shape[1]
    b = a_mat - a_mat.mean(axis=0)
    jn = np.full((nn, nn), 1.0 / nn)
    return np.linalg.solve(b.T @ b + jn, b.T)


def _compat_map(players: Sequence[str], teams: Sequence[Team]
                ) -> tuple[list[Team], np.ndarray]:
    """The mixed teams whose members' mirror teams are both played, and the ``(C, K)`` rows
    ``s(a, b) - (s(a, a) + s(b, b)) / 2``: how much better the pair plays together than the
    mean of its members with themselves (for these strategies; independent of the design's
    mean team, which cancels)."""
    idx = {t: i for i, t in enumerate(teams)}
    pairs, rows = [], []
    for t, (a, b) in enumerate(teams):
        if a != b and (a, a) in idx and (b, b) in idx:
            row = np.zeros(len(teams))
            row[t], row[idx[(a, a)]], row[idx[(b, b)]] = 1.0, -0.5, -0.5
            pairs.append((a, b))
            rows.append(row)
    return pairs, np.array(rows).reshape(len(rows), len(teams))


def _mirror_mixed_map(players: Sequence[str], teams: Sequence[Team]
                      ) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """Per player with a mirror team and a mixed one: rows giving its mirror team's strength
    and the mean strength of its mixed teams."""
    out = []
    for name in players:
        mirror = np.array([float(t == (name, name)) for t in teams])
        mixed = np.array([float(name in t and t[0] != t[1]) for t in teams])
        if mirror.any() and mixed.any():
            out.append((name, mirror, mixed / mixed.sum()))
    return out


# --------------------------------------------------------------------------------------------
# Intervals and Wald tests
# --------------------------------------------------------------------------------------------

def _estimates(rows: np.ndarray, mean: np.ndarray, cov: np.ndarray, crit: float
               ) -> list[dict[str, float]]:
    """``{"value", "lo", "hi"}`` of each contrast ``rows @ mean``."""
    val = rows @ mean
    half = crit * np.sqrt(np.maximum(np.einsum("ij,jk,ik->i", rows, cov, rows), 0.0))
    return [{"value": float(v), "lo": float(v - h), "hi": float(v + h)}
            for v, h in zip(val, half)]


def f_sf(f: float, d1: float, d2: float) -> float:
    """``P(F > f)`` for Snedecor's F with ``d1, d2 > 0`` degrees of freedom."""
    if not (d1 > 0 and d2 > 0):
        raise StatsError(f"degrees of freedom ({d1!r}, {d2!r}) must be > 0")
    if f <= 0.0:
        return 1.0
    a, b = 0.5 * d2, 0.5 * d1
    x = d2 / (d2 + d1 * f)  # P(F > f) = I_x(a, b)
    log_front = (math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x)
                 + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * betainc_cf(a, b, x) / a
    return 1.0 - math.exp(log_front) * betainc_cf(b, a, 1.0 - x) / b


def complement(cols: np.ndarray) -> np.ndarray:
    """Orthonormal basis of the complement of the span of ``cols`` (full column rank)."""
    q = np.linalg.qr(cols, mode="complete")[0]
    return q[:, cols.shape[1]:]


def wald_test(v: np.ndarray, cov_v: np.ndarray, deals: int | None) -> dict[str, Any]:
    """Wald test that ``E v = 0`` for contrasts ``v`` of covariance ``cov_v``:
    ``stat = v' cov_v^{-1} v`` (a pseudo-inverse on the dimensions of non-zero variance if
    ``cov_v`` is singular) on ``df`` those dimensions; the p-value from ``F(df, deals - df)``
    after scaling ``stat`` by ``(deals - df) / (df (deals - 1))`` (Hotelling's ``T^2``:
    ``cov_v`` is estimated from ``deals`` deals), or chi-square(``df``) when ``deals`` is None;
    nan when ``deals <= df``. No dimension (``df`` 0): stat 0, p nan."""
    out: dict[str, Any] = {"stat": 0.0, "df": 0, "p": math.nan}
    if not v.size:
        return out
    cov_v = 0.5 * (cov_v + cov_v.T)
    try:
        w = np.linalg.solve(np.linalg.cholesky(cov_v), v)
        stat, q = float(w @ w), int(v.size)
    except np.linalg.LinAlgError:  # singular: the dimensions with variance
        vals, vecs = np.linalg.eigh(cov_v)
        ok = vals > 1e-12 * max(vals.max(initial=0.0), 1e-300)
        proj = vecs[:, ok].T @ v
        stat, q = float(np.sum(proj * proj / vals[ok])), int(ok.sum())
    if not q:
        return out
    if deals is None:
        p = chi2_sf(stat, q)
    elif deals - q >= 1:
        p = f_sf(stat * (deals - q) / (q * (deals - 1)), q, deals - q)
    else:
        p = math.nan
    return {"stat": stat, "df": q, "p": p}


# --------------------------------------------------------------------------------------------
# The fit
# --------------------------------------------------------------------------------------------

def _check_inputs(teams: Sequence[Team], pairings: Sequence[tuple[int, int]], mean: ArrayLike,
                  cov: ArrayLike, n: ArrayLike | None) -> tuple[np.ndarray, ...]:
    """Mean, covariance and deals per pairing as arrays, with pairings of no deals dropped
    (their rows and columns), and the incidence of the pairings kept."""
    m = np.asarray(mean, dtype=np.float64).ravel()
    c = np.asarray(cov, dtype=np.float64)
    pp = len(pairings)
    nn = np.ones(pp) if n is None else np.asarray(n, dtype=np.float64).ravel()
    if m.size != pp or c.shape != (pp, pp) or nn.size != pp:
        raise StatsError(f"{pp} pairings need {pp} means, deal counts and a ({pp}, {pp}) "
                         f"covariance; got {m.size}, {nn.size} and {c.shape}")
    k = len(teams)
    for a, b in pairings:
        if not (0 <= a < k and 0 <= b < k and a != b):
            raise StatsError(f"pairing {(a, b)!r} must be two different team indices < {k}")
    keep = (nn > 0) & np.isfinite(m)
    if not keep.any():
        raise StatsError("no pairing has played a deal: nothing to fit")
    if not np.isfinite(c[np.ix_(keep, keep)]).all():
        raise StatsError("the covariance of the pairing means must be finite")
    u = incidence([pr for pr, kp in zip(pairings, keep) if kp], k)
    return m[keep], c[np.ix_(keep, keep)], nn[keep], u, keep


def _fit_section(u: np.ndarray, lmap: np.ndarray, m: np.ndarray, cov: np.ndarray,
                 deals: int | None, labels: list[list[list[str]]]) -> dict[str, Any]:
    """The lack-of-fit test of the pairing means against the team model (that they lie in
    the span of the incidence ``u``: ``P - (K - 1)`` contrasts), with the pairings furthest
    from it (standardised residual ``z``)."""
    pp, k = u.shape
    z_mat = complement(u[:, :k - 1])  # u's last column is minus the sum of the others
    test = wald_test(z_mat.T @ m, z_mat.T @ cov @ z_mat, deals)
    resid_map = np.eye(pp) - u @ lmap
    r = resid_map @ m
    sd = np.sqrt(np.maximum(np.einsum("ij,jk,ik->i", resid_map, cov, resid_map), 0.0))
    z = np.where(sd > 1e-12 * max(sd.max(initial=0.0), 1e-300), r / np.where(sd > 0, sd, 1), 0)
    worst = [i for i in np.argsort(-np.abs(z), kind="stable")[:PARTNERS_FIT_SHOWN] if z[i]]
    test["worst"] = [{"teams": labels[i], "observed": float(m[i]),
                      "expected": float(m[i] - r[i]), "z": float(z[i])} for i in worst]
    return test


def _team_sections(players: list[str], teams: list[Team], s: np.ndarray, cov_s: np.ndarray,
                   crit: float, deals: int | None) -> dict[str, Any]:
    """Teams, compatibility, individual strengths, the additivity test and mirror vs mixed,
    all linear in the team strengths ``s`` of covariance ``cov_s``."""
    k = len(teams)
    eye = np.eye(k)
    out: dict[str, Any] = {"teams": [
        {"players": list(t), "mirror": t[0] == t[1], **e}
        for t, e in zip(teams, _estimates(eye, s, cov_s, crit))]}
    pairs, cmap = _compat_map(players, teams)
    out["compatibility"] = [{"players": list(t), **e}
                            for t, e in zip(pairs, _estimates(cmap, s, cov_s, crit))]
    a_mat = membership(players, teams)
    imap = _individual_map(a_mat)
    out["individual"] = [{"player": p, **e}
                         for p, e in zip(players, _estimates(imap, s, cov_s, crit))]
    z_mat = complement(a_mat)  # additive: s in the span of a_mat (which holds the constant)
    out["additivity"] = wald_test(z_mat.T @ s, z_mat.T @ cov_s @ z_mat, deals)
    rows = []
    for name, mirror, mixed in _mirror_mixed_map(players, teams):
        e_mir, e_mix, e_diff = _estimates(np.array([mirror, mixed, mixed - mirror]), s,
                                          cov_s, crit)
        rows.append({"player": name, "mirror": e_mir, "mixed": e_mix,
                     "mixed_minus_mirror": e_diff})
    out["mirror_vs_mixed"] = rows
    return out


def partners_fit(players: Sequence[str], teams: Sequence[Team],
                 pairings: Sequence[tuple[int, int]], mean: ArrayLike, cov: ArrayLike,
                 n: ArrayLike | None = None, deals: int | None = None,
                 conf: float = 0.95) -> dict[str, Any]:
    """Team strengths, compatibility, individual strengths and the tests, from the pairings'
    mean results and their covariance clustered by deal (``pairing_means``, or the sums a
    streamed run keeps: ``ClusterMoments.cov(...)[0] * shared deals / (n_p n_q)``).

    Parameters
    ----------
    players, teams : the design (``team_types``); ``pairings`` : ``(t1, t2)`` per pairing,
        indices into ``teams``; ``mean[p]`` team t1's mean margin over the deals of pairing
        ``p`` (points per deal per player); ``cov`` the covariance of the means; ``n`` the
        deals per pairing (least-squares weights; pairings with 0 are left out; default
        equal); ``deals`` the deals played in all (clusters: Student t with ``deals - 1``
        degrees of freedom below ``T_NORMAL_FROM`` of them, the F reference of the tests;
        None: normal and chi-square); ``conf`` the confidence level.

    Returns
    -------
    dict, JSON-ready, each estimate ``{"value", "lo", "hi"}``:
        ``teams`` ``[{"players": [a, b], "mirror", ...}]`` (strength against the mean team);
        ``compatibility`` ``[{"players": [a, b], ...}]`` (``s(a, b) - (s(a, a) + s(b, b)) /
        2``, for mixed teams whose two mirror teams are played); ``individual``
        ``[{"player", ...}]`` (``u`` of mean 0 with ``s(a, b) ~ u_a + u_b`` against the mean
        team: the least-squares projection of the team strengths); ``additivity`` and ``fit``
        ``{"stat", "df", "p"}`` (``fit`` adds ``worst``: ``[{"teams", "observed",
        "expected", "z"}]``); ``mirror_vs_mixed`` ``[{"player", "mirror", "mixed",
        "mixed_minus_mirror"}]``; ``pairings`` ``[{"teams", "deals", ...}]`` (the direct
        margins); ``players``, ``deals``, ``conf``.

    Conditions on the players' strategies and the design; the deals are the random sample
    (module docstring). A StatsError if the pairings played do not connect the team types.
    """
    players = _check_players(players)
    teams = [(str(a), str(b)) for a, b in teams]
    _parse_teams(players, teams)  # known names, each team once
    _check_partners(players, teams)
    m, c, nn, u, keep = _check_inputs(teams, pairings, mean, cov, n)
    crit = critical(conf, deals - 1 if deals is not None and 2 <= deals < T_NORMAL_FROM
                    else math.inf)
    lmap = _team_map(u, nn)
    s, cov_s = lmap @ m, lmap @ c @ lmap.T
    labels = [[list(teams[a]), list(teams[b])] for (a, b), kp in zip(pairings, keep) if kp]
    out: dict[str, Any] = {"players": players, "deals": deals, "conf": conf}
    out.update(_team_sections(players, teams, s, cov_s, crit, deals))
    out["fit"] = _fit_section(u, lmap, m, c, deals, labels)
    out["pairings"] = [{"teams": lab, "deals": int(k), **e} for lab, k, e in
                       zip(labels, nn, _estimates(np.eye(m.size), m, c, crit))]
    return out


def partners_from_deals(players: Sequence[str], x: ArrayLike,
                        teams: Sequence[Any] | None = None,
                        pairings: Sequence[tuple[int, int]] | None = None,
                        conf: float = 0.95, clustered: bool = True) -> dict[str, Any]:
    """``partners_fit`` from the per-deal table ``x`` (``(P, D)``, NaN for a deal a pairing
    did not play) of the pairings (default ``partner_pairings`` of ``team_types(players,
    teams)``, in that order). ``clustered=False`` treats the pairings as independent (for
    comparison only: their intervals are too narrow when they share deals)."""
    tt = team_types(players, teams)
    prs = partner_pairings(tt) if pairings is None else [tuple(p) for p in pairings]
    mean, cov, n, deals = pairing_means(x, clustered)
    if len(prs) != mean.size:
        raise StatsError(f"{len(prs)} pairings but {mean.size} rows of results")
    return partners_fit(players, tt, prs, mean, cov, n, deals, conf)
