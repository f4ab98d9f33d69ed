"""Partners on the ladder (docs/ladder.md "Partners"): team entrants, the plain ranking without
them (``plain``), the partner table (``partners``, ``partners_text``, ``partners_json``) and
the balanced schedule of a partners run (``balanced``). numpy only; no engine.

A mixed team ``a+b`` is an entrant of the joint Bradley-Terry fit (``model.fit``) with a rating
of its own; a plain player is its own mirror team ``a+a``. Its **compatibility** is the linear
contrast ``R_ab - (R_a + R_b) / 2``: the team's rating less the additive prediction, the mean
of its members' ratings. Its interval and the additivity test (every compatibility zero, a
Wald chi-square) come from the fit's covariance clustered by deal, so they hold however the
deals correlate the matchups. The contrasts' weights sum to zero: they do not depend on the
anchor.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from sim.analysis.ladder.model import (
    GUARD_PAIRS,
    RATED,
    LadderData,
    LadderFit,
    deal_index,
    deal_sums,
    z_value,
)
from sim.analysis.stats.ratings import ELO_PER_NAT, chi2_sf, newton_ascent

NEAR_ZERO_MARK = "~"  # the partner table marks a compatibility whose interval holds 0


def plain(data: LadderData, fit: LadderFit) -> tuple[LadderData, LadderFit]:
    """The ladder's plain players only (``data`` and ``fit`` as they are without teams): their
    ratings from the joint fit of every pair, their pairs, W-D-L, margins and crosstable
    against each other, and an information matrix with the team entrants' ratings taken as
    unknown (their Schur complement), which ``schedule`` reads. The goodness of fit stays the
    joint fit's (every matchup, teams' too)."""
    if not data.teams:
        return data, fit
    p = len(data.names)
    keep = np.array([i for i in range(p) if i not in data.teams], dtype=np.int64)
    team = np.array(sorted(data.teams), dtype=np.int64)
    remap = np.full(p, -1, dtype=np.int64)
    remap[keep] = np.arange(keep.size)
    a, b = np.asarray(data.a), np.asarray(data.b)
    both = (remap[a] >= 0) & (remap[b] >= 0) if a.size else np.zeros(0, dtype=bool)
    times = None if data.times is None else np.asarray(data.times)[both]
    sub = LadderData(names=[data.names[i] for i in keep], a=remap[a[both]].astype(np.int32),
                     b=remap[b[both]].astype(np.int32), deal=np.asarray(data.deal)[both],
                     score2=np.asarray(data.score2)[both],
                     margin=np.asarray(data.margin)[both],
                     incidents=np.asarray(data.incidents)[keep],
                     last_time=[data.last_time[i] for i in keep], times=times)
    ix = np.ix_(keep, keep)
    cross = fit.cross[ix]
    wdl = cross.sum(axis=1)
    pairs = wdl.sum(axis=1)
    k = keep.size
    code = sub.a.astype(np.int64) * k + sub.b
    mg = np.bincount(code, np.asarray(sub.margin, dtype=np.float64), k * k).reshape(k, k)
    with np.errstate(invalid="ignore", divide="ignore"):
        margin = np.where(pairs > 0, (mg.sum(axis=1) - mg.sum(axis=0)) / np.maximum(pairs, 1),
                          np.nan)
    h_tt = fit.info[np.ix_(team, team)]
    h_pt = fit.info[np.ix_(keep, team)]
    info = fit.info[ix] - h_pt @ np.linalg.pinv(h_tt) @ h_pt.T
    misfits = [dict(m, a=_new(remap, m["a"]), b=_new(remap, m["b"])) for m in fit.misfits]
    return sub, dataclasses.replace(
        fit, names=list(sub.names), rating=fit.rating[keep], se=fit.se[keep],
        lo=fit.lo[keep], hi=fit.hi[keep], status=[fit.status[i] for i in keep],
        cov=fit.cov[ix], cov_naive=fit.cov_naive[ix], pairs=pairs, wdl=wdl, margin=margin,
        cross=cross, misfits=misfits, info=0.5 * (info + info.T))


def _new(remap: np.ndarray, i: Any) -> int | None:
    return int(remap[i]) if isinstance(i, (int, np.integer)) and remap[i] >= 0 else None


def team_pairs(data: LadderData) -> int:
    """Pairs with a team entrant on at least one side."""
    if not data.teams:
        return 0
    t = np.zeros(len(data.names), dtype=bool)
    t[list(data.teams)] = True
    return int(np.count_nonzero(t[np.asarray(data.a)] | t[np.asarray(data.b)]))


def partners(data: LadderData, fit: LadderFit) -> dict[str, Any]:
    """The partner table: per team entrant (in entrant order) ``team``, ``players``,
    ``pairs``, ``status``, its Elo ``rating``/``lo``/``hi`` (a bound only for ``above`` or
    ``below``), the additive prediction ``additive`` (the mean of its members' ratings) with
    ``additive_lo``/``additive_hi``, and ``compatibility`` (``value``, ``se``, ``lo``,
    ``hi``, ``contains_zero``) where the team and both members are rated (else None); and
    ``additivity``: the Wald test that every such compatibility is 0 (``chi2``, ``df``,
    ``p``, ``teams``, ``clusters``; df 0 and nan without a rated team)."""
    z = z_value(fit.conf)
    rows, contrasts = [], []
    rated = [s == RATED for s in fit.status]
    for t in sorted(data.teams):
        x, y = data.teams[t]
        row: dict[str, Any] = {
            "team": data.names[t], "players": [data.names[x], data.names[y]],
            "pairs": int(fit.pairs[t]), "status": fit.status[t],
            "rating": float(fit.rating[t]), "lo": float(fit.lo[t]), "hi": float(fit.hi[t]),
            "additive": math.nan, "additive_lo": math.nan, "additive_hi": math.nan,
            "compatibility": None}
        if rated[x] and rated[y]:
            c = np.zeros(len(data.names))
            c[[x, y]] = 0.5
            v, h = _contrast(fit, c, z)
            row.update(additive=v, additive_lo=v - h, additive_hi=v + h)
            if rated[t]:
                c = -c
                c[t] = 1.0
                v, h = _contrast(fit, c, z)
                row["compatibility"] = {"value": v, "se": h / z, "lo": v - h, "hi": v + h,
                                        "contains_zero": bool(v - h <= 0.0 <= v + h)}
                contrasts.append(c)
        rows.append(row)
    return {"teams": rows, "additivity": additivity(fit, contrasts),
            "individual": additive(data, fit),
            "conf": fit.conf, "anchor": fit.anchor, "anchor_elo": fit.anchor_elo,
            "clusters": fit.clusters, "team_pairs": team_pairs(data)}


def additive(data: LadderData, fit: LadderFit) -> list[dict[str, Any]]:
    """Individual ratings under the additive model: the joint Bradley-Terry fit of every pair
    among the rated players and the teams of two of them, each team's rating not free but the
    mean of its players' (its design row ``(e_a + e_b) / 2``; a player's own row ``e_a``).
    Per rated player (ranking order of these ratings): ``player``, ``rating``, ``se``, ``lo``,
    ``hi``, on the fit's anchor (the anchor player held at its Elo, else the mean of the rated
    players), with the sandwich covariance clustered by deal. ``[]`` without a team."""
    if not data.teams:
        return []
    names = data.names
    rated = [i for i in range(len(names)) if i not in data.teams and fit.status[i] == RATED]
    if len(rated) < 2:
        return []
    col = {i: n for n, i in enumerate(rated)}
    kp = len(rated)
    rows = {i: np.eye(kp)[col[i]] for i in rated}
    for t, (x, y) in data.teams.items():
        if x in col and y in col:
            rows[t] = 0.5 * (np.eye(kp)[col[x]] + np.eye(kp)[col[y]])
    a, b = np.asarray(data.a, dtype=np.int64), np.asarray(data.b, dtype=np.int64)
    inc = np.zeros(len(names), dtype=bool)
    inc[list(rows)] = True
    keep = inc[a] & inc[b]
    a, b = a[keep], b[keep]
    s = np.asarray(data.score2)[keep] * 0.5
    p = len(names)
    code = np.minimum(a, b) * p + np.maximum(a, b)
    uniq, m_of = np.unique(code, return_inverse=True)
    lo_, hi_ = uniq // p, uniq % p
    sign = np.where(a < b, 1.0, -1.0)  # a pair's score from the matchup's lower entrant
    s_lo = np.where(sign > 0, s, 1.0 - s)
    n = np.bincount(m_of, minlength=uniq.size).astype(np.float64)
    score = np.bincount(m_of, s_lo, uniq.size)
    dm = np.array([rows[i] - rows[j] for i, j in zip(lo_, hi_)]).reshape(uniq.size, kp)
    jk = np.full((kp, kp), 1.0 / kp)

    def loglik(th: np.ndarray) -> float:
        eta = dm @ th
        return float(-(score * np.logaddexp(0.0, -eta)
                       + (n - score) * np.logaddexp(0.0, eta)).sum())

    def grad_info(th: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        pr = 1.0 / (1.0 + np.exp(-(dm @ th)))
        return dm.T @ (score - n * pr), dm.T @ ((n * pr * (1.0 - pr))[:, None] * dm)

    try:
        theta = newton_ascent(np.zeros(kp), loglik, grad_info, jk, 200, 1e-10,
                              "the ladder's additive partners fit")
    except (ArithmeticError, np.linalg.LinAlgError):
        return []
    pm = 1.0 / (1.0 + np.exp(-(dm @ theta)))
    _, h = grad_info(theta)
    hinv = np.linalg.inv(h + jk) - jk
    di, nd = deal_index(np.asarray(data.deal)[keep])
    s_mat, used = deal_sums(di, nd, m_of, None, uniq.size, s_lo - pm[m_of])
    if used > 1:
        s_mat = s_mat * (used / (used - 1.0))
    meat = dm.T @ s_mat @ dm + dm.T @ ((GUARD_PAIRS * pm * (1.0 - pm))[:, None] * dm)
    cov = hinv @ meat @ hinv
    t_mat = np.eye(kp)
    if fit.anchor is not None and names.index(fit.anchor) in col:
        t_mat[:, col[names.index(fit.anchor)]] -= 1.0
    elo = ELO_PER_NAT * (t_mat @ theta) + fit.anchor_elo
    cov = ELO_PER_NAT ** 2 * (t_mat @ cov @ t_mat.T)
    z = z_value(fit.conf)
    out = []
    for n_ in np.argsort(-elo, kind="stable"):
        se = math.sqrt(max(float(cov[n_, n_]), 0.0))
        out.append({"player": names[rated[n_]], "rating": float(elo[n_]), "se": se,
                    "lo": float(elo[n_]) - z * se, "hi": float(elo[n_]) + z * se,
                    "anchor": names[rated[n_]] == fit.anchor})
    return out


def _contrast(fit: LadderFit, c: np.ndarray, z: float) -> tuple[float, float]:
    """``c' R`` and its interval's half-width (entries of ``c`` only on rated entrants)."""
    on = np.flatnonzero(c)
    v = float(c[on] @ fit.rating[on])
    var = float(c[on] @ fit.cov[np.ix_(on, on)] @ c[on])
    return v, z * math.sqrt(max(var, 0.0))


def additivity(fit: LadderFit, contrasts: Sequence[np.ndarray]) -> dict[str, Any]:
    """The Wald test that every contrast ``c' R`` is 0, with their covariance clustered by
    deal (``C' cov C``): chi-square on the rank of that covariance."""
    out: dict[str, Any] = {"chi2": math.nan, "df": 0, "p": math.nan, "teams": len(contrasts),
                           "clusters": fit.clusters, "method": "Wald, clustered by deal"}
    if not contrasts:
        return out
    cm = np.array(contrasts)
    on = np.flatnonzero(np.abs(cm).sum(axis=0))
    cm = cm[:, on]
    v = cm @ fit.rating[on]
    cov = cm @ fit.cov[np.ix_(on, on)] @ cm.T
    vals, vecs = np.linalg.eigh(0.5 * (cov + cov.T))
    ok = vals > 1e-10 * max(float(vals.max(initial=0.0)), 1e-300)
    if not ok.any():
        return out
    proj = vecs[:, ok].T @ v
    chi2 = float(np.sum(proj * proj / vals[ok]))
    df = int(ok.sum())
    out.update(chi2=chi2, df=df, p=chi2_sf(chi2, df))
    return out


def balanced(data: LadderData, candidates: Sequence[tuple[int, int]], k: int,
             pairs: int) -> list[tuple[int, int]]:
    """The next ``k`` matchups of a partners run: each time the candidate matchup with the
    fewest pairs so far (the first of equals), counted as ``pairs`` more once picked; so the
    pairings of a partners design even out, as a partners tournament plays them."""
    p = len(data.names)
    if not candidates:
        return []
    a, b = np.asarray(data.a, dtype=np.int64), np.asarray(data.b, dtype=np.int64)
    cnt = np.bincount(np.minimum(a, b) * p + np.maximum(a, b), minlength=p * p)
    have = [int(cnt[min(i, j) * p + max(i, j)]) for i, j in candidates]
    out = []
    for _ in range(k):
        m = int(np.argmin(have))
        out.append(tuple(candidates[m]))
        have[m] += max(1, int(pairs))
    return out


# --------------------------------------------------------------------------------------------
# rendering
# --------------------------------------------------------------------------------------------

def _elo(x: float) -> str:
    return f"{x:+.0f}" if math.isfinite(x) else "-"


def _team_rating(row: dict[str, Any]) -> str:
    st = row["status"]
    if st == RATED:
        return f"{_elo(row['rating'])} [{_elo(row['lo'])}, {_elo(row['hi'])}]"
    if st == "above":
        return f"> {_elo(row['lo'])}"
    if st == "below":
        return f"< {_elo(row['hi'])}"
    return "unrated"


def additivity_text(test: dict[str, Any]) -> str:
    if not test["df"]:
        return "additivity: no test (no team with it and both its players rated)"
    return (f"additivity: chi-square {test['chi2']:.1f} on {test['df']} df ({test['method']}, "
            f"{test['clusters']:,} deals), p = {test['p']:.2g}")


def partners_text(table: dict[str, Any]) -> str:
    """The partner table as plain text (``ladder show --partners``)."""
    pct = round(100 * table["conf"])
    anchor = (f"{table['anchor']} held at {table['anchor_elo']:g}"
              if table["anchor"] is not None
              else f"the mean of the rated players at {table['anchor_elo']:g}")
    rows = table["teams"]
    lines = [f"partners: {len(rows)} mixed teams, {table['team_pairs']:,} pairs with a team; "
             f"Elo on the ladder's scale ({anchor}); {pct}% intervals clustered by deal", ""]
    if not rows:
        lines.append("no team entrants yet: `shuangkou ladder run --partners --pairs N` adds "
                     "them")
        return "\n".join(lines) + "\n"
    head = ["team", "pairs", f"team Elo [{pct}%]", f"additive [{pct}%]",
            f"compatibility [{pct}%]", ""]
    body = []
    for r in rows:
        c = r["compatibility"]
        add = (f"{_elo(r['additive'])} [{_elo(r['additive_lo'])}, {_elo(r['additive_hi'])}]"
               if math.isfinite(r["additive"]) else "-")
        comp = "-" if c is None else f"{_elo(c['value'])} [{_elo(c['lo'])}, {_elo(c['hi'])}]"
        mark = NEAR_ZERO_MARK if c is not None and c["contains_zero"] else ""
        body.append([r["team"], f"{r['pairs']:,}", _team_rating(r), add, comp, mark])
    widths = [max(len(h), *(len(x[n]) for x in body)) for n, h in enumerate(head)]
    for cells in [head, *body]:
        lines.append("  ".join(x.rjust(w) if n == 1 else x.ljust(w)
                               for n, (x, w) in enumerate(zip(cells, widths))).rstrip())
    lines += ["", additivity_text(table["additivity"])]
    if table["individual"]:
        lines += ["", "individual Elo under the additive model (every team rated as the mean of "
                      "its players; from every pair):"]
        ind = [[r["player"], f"{r['rating']:g} (anchor)" if r["anchor"] else
                f"{_elo(r['rating'])} [{_elo(r['lo'])}, {_elo(r['hi'])}]"]
               for r in table["individual"]]
        w0 = max(len(x[0]) for x in ind)
        lines += [f"  {x[0].ljust(w0)}  {x[1]}" for x in ind]
    lines += ["",
              f"{NEAR_ZERO_MARK}: the interval holds 0 (no evidence the team differs from the "
              f"mean of its players); team Elo: the team as one entrant (its first player in "
              f"the team's first seat); additive: the mean of its players' Elo (each partnered "
              f"with itself); compatibility: team Elo minus additive"]
    return "\n".join(lines) + "\n"


def partners_json(table: dict[str, Any]) -> dict[str, Any]:
    """The partner table as strict JSON data (no NaN: ``null``)."""
    def clean(v: Any) -> Any:
        if isinstance(v, float):
            return v if math.isfinite(v) else None
        if isinstance(v, dict):
            return {k: clean(x) for k, x in v.items()}
        if isinstance(v, list):
            return [clean(x) for x in v]
        return v

    return clean({"model": "bradley-terry", "scale": "elo", **table})
