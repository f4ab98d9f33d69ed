"""The summary of a tournament: every figure derived from a run's statistics (``derive``,
written to ``summary.json``) and the tables built from them (``tables``, in ``summary.md`` and
``report.html``). Rendering them (markdown, plots, HTML, files) is ``sim.analysis.report``.

Conventions: a *pair* is one duplicate pair of deals (or one deal without duplicate) and its
result ``x`` is side A's mean settlement per deal per player; every "mean settlement" is per
deal per player, with a 95% confidence interval over pairs. Win/draw/loss count pairs by the
sign of ``x``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from sim.analysis.stats.histogram import Histogram
from sim.analysis.stats.moments import ClusterMoments, Moments, cross_cov, holm, stratified_ci
from sim.analysis.stats.partners import partners_fit
from sim.analysis.stats.ratings import (
    bradley_terry,
    bt_cluster_meat,
    bt_firth_draws,
    bt_goodness_of_fit,
    elo_from_bt,
)
from sim.analysis.stats.swings import SWINGS_SHOWN, Swings
from sim.analysis.stats.win_draw_loss import WDL
from sim.cards import RANKS
from sim.titles import gloss, level, ranges, titled

MATCH_DEALS = 100  # a standard match: R25 skill change and title are reported per this many


PERCENTILES = (5, 25, 50, 75, 95)


ORACLE_MARK = " [oracle]"


def tally_of(d: Mapping[str, Any]) -> dict[str, Any]:
    types = {"Moments": Moments, "Histogram": Histogram, "WDL": WDL, "Swings": Swings}
    return {k: v if isinstance(v, int) else types[v["type"]].from_dict(v) for k, v in d.items()}


def _ci(m: Moments) -> dict[str, float]:
    lo, hi = m.ci(0.95)
    return {"n": m.n, "mean": m.mean, "lo": lo, "hi": hi, "sd": m.sd}


def _score_stats(h: Histogram) -> dict[str, Any]:
    """Attacker-score distribution: mean, percentiles, tails, 5-point bins."""
    out: dict[str, Any] = {"n": h.n, "mean": h.mean()}
    for q in PERCENTILES:
        out[f"p{q}"] = h.percentile(q)
    out["p_ge_120"] = h.prob_ge(120)
    out["p_le_80"] = h.prob_le(80)
    out["bins"] = [[int(e), int(c)] for e, c in zip(h.edges, h.counts) if c]
    out["overflow"] = h.overflow
    return out


def _rates(h: Histogram, values: Sequence[int]) -> dict[str, float]:
    """Share of ``h``'s values equal to each of ``values`` (integer width-1 bins)."""
    n = h.n
    out = {}
    for v in values:
        k = v - h.lo
        c = int(h.counts[k]) if 0 <= k < h.counts.size else 0
        out[str(v)] = c / n if n else math.nan
    return out


def _side(t: Mapping[str, Any], s: str, played: int, rules: Mapping[str, int]
          ) -> dict[str, Any]:
    """One side's attacking, defending and calling figures."""
    attacks = t[f"{s}.attacks"]
    rank = t[f"{s}.show_rank"]
    med = rank.percentile(50)
    return {
        "games": t[f"{s}.settle"].n,
        "settle_mean": t[f"{s}.settle"].mean(),
        "attacks": attacks,
        "attack_rate": attacks / played if played else math.nan,
        "attacking_settle": _ci(t[f"{s}.att_settle"]),
        "defending_settle": _ci(t[f"{s}.def_settle"]),
        "attacking_score": _score_stats(t[f"{s}.att_score"]),
        "attacking_multiplier": _rates(t[f"{s}.att_mult"], multipliers(rules)),
        "show_rank_mean": rank.mean(),
        "show_rank_median": RANKS[int(med)] if not math.isnan(med) else None,
        "trump_len_mean": t[f"{s}.trump_len"].mean(),
        "overrides_mean": t[f"{s}.overrides"].mean,
        "settle_total": t[f"{s}.settle"].moments.total,
    }


def multipliers(rules: Mapping[str, int]) -> list[int]:
    return sorted({1, rules["kou_di_single"], rules["kou_di_pair"]})


def derive(state: Mapping[str, Any]) -> dict[str, Any]:
    """Every figure of the tables and plots, from a run's state (plain data in and out)."""
    cfg = state["config"]
    rules = cfg["rules"]
    players = state["players"]
    oracle = state["oracle"]
    k = len(players)
    matchups = []
    side_tallies: list[list[tuple[dict[str, Any], str]]] = [[] for _ in range(k)]
    for m in state["matchups"]:
        t = tally_of(m["tally"])
        played = t["games"] - t["void"]
        wdl = t["wdl"]
        elo = wdl.elo() if wdl.n else (math.nan, math.nan, math.nan)
        matchups.append({
            "index": m["index"], "a": m["a"], "b": m["b"],
            "label": f"{players[m['a']]} vs {players[m['b']]}",
            "result": {**_ci(t["pairs"]), "win": wdl.fractions()[0],
                       "draw": wdl.fractions()[1], "loss": wdl.fractions()[2],
                       "score": wdl.score, "elo": elo[0], "elo_lo": elo[1], "elo_hi": elo[2]},
            "games": t["games"], "void": t["void"],
            "void_rate": t["void"] / t["games"] if t["games"] else math.nan,
            "redeal_rate": t["redealt"] / t["games"] if t["games"] else math.nan,
            "redeals_mean": t["redeals"].mean(),
            "score": _score_stats(t["score"]),
            "multiplier": _rates(t["mult"], multipliers(rules)),
            "calls_mean": t["calls"].mean, "overrides_mean": t["overrides"].mean,
            "first_show_round_mean": t["first_show_round"].mean,
            "sides": {s: _side(t, s, played, rules) for s in ("A", "B")},
        })
        side_tallies[m["a"]].append((t, "A"))
        side_tallies[m["b"]].append((t, "B"))
    cross_var, cov_y, clusters = deal_clustering(state)
    strategies = [_strategy(i, players, oracle, side_tallies[i], rules, cross_var[i], clusters)
                  for i in range(k)]
    ratings, fit = _ratings(state, k, cov_y)
    out: dict[str, Any] = {
        "format": state.get("format"), "config": cfg, "config_hash": state.get("config_hash"),
        "players": players, "oracle": oracle, "complete": state["complete"],
        "chunks_merged": state["chunks_merged"], "chunks_total": state["chunks_total"],
        "stopped_by_sprt": state.get("stopped_by_sprt", False),
        "matchups": matchups, "strategies": strategies,
        "ratings": ratings,  # every format: the Ratings plot shows one quantity
        "ratings_fit": fit,
        "clustered_deals": clusters or 0,
        "cross": _cross(state, k) if cfg["format"] == "round-robin" else None,
        "sprt": state.get("sprt"), "run": state.get("run"),
        "tallies": [m["tally"] for m in state["matchups"]],
        "swings": _swings(state) if cfg["duplicate"] else None,
    }
    faults = _faults(state)
    if faults:
        out["faults"] = faults
    if state.get("teams"):
        out["partners"] = _partners(state, cfg)
    return out


def _partners(state: Mapping[str, Any], cfg: Mapping[str, Any]) -> dict[str, Any] | None:
    """A partners run's team strengths, compatibility, individual strengths and tests
    (``sim.analysis.stats.partners``) from its matchups' pair means and their covariance
    clustered by deal (the run's ``deal_moments``); None before two matchups share deals."""
    teams = [tuple(t) for t in state["teams"]]
    cm = state.get("deal_moments")
    cluster = ClusterMoments.from_dict(cm) if cm else None
    ms = state["matchups"]
    if cluster is None or cluster.deals < 2 or cluster.m != len(ms):
        return None
    n = np.array([Moments.from_dict(m["tally"]["pairs"]).n for m in ms], dtype=float)
    mean = np.array([Moments.from_dict(m["tally"]["pairs"]).mean for m in ms])
    cov_x, _ = cluster.cov(scale=2.0)  # the values are twice the pair results
    shared = float(cluster.deals)
    cov = cov_x * shared / np.outer(n, n)
    return partners_fit(cfg["players"], teams, [(m["a"], m["b"]) for m in ms], mean, cov,
                        n=n, deals=int(cluster.deals))


def _faults(state: Mapping[str, Any]) -> dict[str, dict[str, int]]:
    """Per player that faulted (a bot in another process, docs/bots.md): its faults by kind
    (``start``, ``crash``, …) and the deals they cost (``forfeits``, ``fallbacks``), summed
    over its matchups (``side_faults``)."""
    players = state["players"]
    out: dict[str, dict[str, int]] = {}
    for m in state["matchups"]:
        for side, who in (("A", m["a"]), ("B", m["b"])):
            add_counts(out, players[who], side_faults(m["tally"], side))
    return out


def side_faults(tally: Mapping[str, Any], side: str) -> dict[str, int]:
    """One side's bot faults in a matchup's tally: its ``A.fault.KIND`` counts by kind and its
    ``A.forfeits`` / ``A.fallbacks`` (those that are not 0)."""
    out = {}
    for key, v in tally.items():
        if key.startswith(side + ".") and isinstance(v, int) and v:
            rest = key[len(side) + 1:]
            if rest.startswith("fault."):
                out[rest[len("fault."):]] = v
            elif rest in ("forfeits", "fallbacks"):
                out[rest] = v
    return out


def add_counts(into: dict[str, dict[str, int]], name: str, counts: Mapping[str, int]) -> None:
    """Add ``counts`` to ``into[name]`` (made when ``counts`` holds anything)."""
    if counts:
        c = into.setdefault(name, {})
        for k, v in counts.items():
            c[k] = c.get(k, 0) + v


def _swings(state: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The ``SWINGS_SHOWN`` largest swings of each matchup (``Swings.rows``: deal, ``a0``,
    ``a1``, ``x``, ``swing``), with ``divergence``, the first decision where the two tables
    differ (null: they never do), where the run kept their records (``state["swing_details"]``,
    ``sim.tournament.swings``), and ``view``, the pair's place in ``swings.html`` (the deal
    viewer), where it is there (``state["swing_views"]``)."""
    details = state.get("swing_details") or {}
    views = state.get("swing_views") or {}
    out = []
    for m in state["matchups"]:
        d = m["tally"].get("swings")
        for rank, row in enumerate(Swings.from_dict(d).rows()[:SWINGS_SHOWN] if d else [], 1):
            key = f"{m['index']}:{row['deal']}"
            out.append({"matchup": m["index"], "rank": rank, **row,
                        **({"divergence": details[key]} if key in details else {}),
                        **({"view": views[key]} if key in views else {})})
    return out


def divergence_text(div: Mapping[str, Any] | None) -> str:
    """``trick 3, seat 1 (step 40): table 1 (greedy) 10♠, table 2 (expert) K♠``, or where in
    the calling the tables part."""
    if div is None:
        return "the tables never differ"
    where = (f"trick {div['trick']}" if div["phase"] == "play" else
             f"calling, round {div['round']}" + (f" of redeal {div['redeal']}"
                                                 if div["redeal"] else ""))
    return (f"{where}, seat {div['seat']} (step {div['step']}): table 1 ({div['player0']}) "
            f"{div['table0']}, table 2 ({div['player1']}) {div['table1']}")


def deal_clustering(state: Mapping[str, Any]
                    ) -> tuple[list[float], np.ndarray | None, int | None]:
    """What clustering by deal needs, from the run's ``deal_moments`` (``ClusterMoments``):
    matchups play the same deals, so a player's results against different opponents on one
    deal are correlated. Returns ``(cross_var, cov_y, clusters)``: per player the covariance
    of its matchups' totals (``stratified_ci``'s ``cross_var``), the per-deal covariance of
    the matchups' scores (for the ratings) and the number of shared deals; ``([0, ...], None,
    None)`` without cross-moments (one matchup, or a run from before they were kept)."""
    k = len(state["players"])
    cm = state.get("deal_moments")
    cluster = ClusterMoments.from_dict(cm) if cm else None
    pairs = [(m["a"], m["b"]) for m in state["matchups"]]
    if cluster is None or cluster.deals < 2 or cluster.m != len(pairs):
        return [0.0] * k, None, None
    cov_x, cov_y = cluster.cov(scale=2.0)  # the values are twice the pair results
    cross = cross_cov(cov_x, [Moments.from_dict(m["tally"]["pairs"]).n
                              for m in state["matchups"]])
    cross_var = []
    for i in range(k):
        sign = np.array([1.0 if a == i else -1.0 if b == i else 0.0 for a, b in pairs])
        cross_var.append(float(sign @ cross @ sign))
    return cross_var, cov_y, cluster.deals


def _strategy(i: int, players: Sequence[str], oracle: Sequence[bool],
              sides: Sequence[tuple[dict[str, Any], str]], rules: Mapping[str, int],
              cross_var: float = 0.0, clusters: int | None = None) -> dict[str, Any]:
    """A player's figures over all its matchups (A's results as they are, B's negated); its
    interval is clustered by deal with ``cross_var`` (``stratified_ci``) over ``clusters``
    shared deals, and treats the matchups as independent strata without them."""
    pairs, wdl, merged = Moments(), WDL(), None
    strata = []  # one per matchup: the interval treats matchups as strata (stratified_ci)
    played = 0
    for t, s in sides:
        p, w = t["pairs"], t["wdl"]
        if s == "A":
            strata.append(p)
            wdl += w
        else:  # B's result is -x: the same squares, the opposite sum, wins and losses swap
            strata.append(Moments(p.n, -p.total, p.total_sq))
            wdl += WDL(w.losses, w.draws, w.wins)
        pairs += strata[-1]
        keys = [k for k in t if k.startswith(s + ".")]
        part = {k[2:]: t[k] for k in keys}
        merged = part if merged is None else _merge(merged, part)
        played += t["games"] - t["void"]
    fake = {f"S.{k}": v for k, v in (merged or {}).items()}
    side = _side(fake, "S", played, rules) if merged else {}
    skill = rules["start_skill"] + (side.get("settle_total") or 0.0)
    _, lo, hi = stratified_ci(strata, cross_var=cross_var, clusters=clusters)
    res = {**_ci(pairs), "lo": lo, "hi": hi}
    # R25 per standard match: the skill change a player of it expects over MATCH_DEALS deals
    # (its mean settlement per deal per player times MATCH_DEALS), the spread of one match's
    # change and the chance of each title after one match from start_skill; the accumulated
    # "skill" grows with the run's length and says little
    per = {k: MATCH_DEALS * res[k] for k in ("mean", "lo", "hi")}
    match = match_titles(merged["settle"], rules["start_skill"]) if merged else None
    return {"index": i, "spec": players[i], "oracle": bool(oracle[i]), "matchups": len(sides),
            "result": {**res, "win": wdl.fractions()[0], "draw": wdl.fractions()[1],
                       "loss": wdl.fractions()[2]},
            **side, "skill": skill, "title": level(skill),
            "match_deals": MATCH_DEALS,
            "skill_change_per_match": {**per, "sd": match["sd"] if match else math.nan},
            "titles_after_match": match["titles"] if match else []}


TITLE_P_MIN = 1e-4  # titles less likely than this after a match are left out of the summary


def match_change(h: Histogram, deals: int = MATCH_DEALS) -> tuple[int, np.ndarray]:
    """``(lo, pmf)``: the distribution of the sum of ``deals`` independent draws of the
    per-deal settlement histogram ``h`` (integer values, width-1 bins), ``pmf[k]`` the
    probability of ``lo + k``.

    This is what resampling blocks of ``deals`` deals of the run (independently, with
    replacement) gives, computed exactly (the ``deals``-fold convolution, by FFT) instead of
    by random resampling; values in ``h``'s under/overflow count at its min/max."""
    counts = h.counts.astype(float)
    vals = h.edges
    keep = np.flatnonzero(counts)
    extra = [(h.min, h.underflow), (h.max, h.overflow)]
    seen = [int(v) for v in vals[keep[[0, -1]]]] if keep.size else []
    seen += [int(v) for v, c in extra if c]
    lo_v, hi_v = min(seen), max(seen)
    p = np.zeros(hi_v - lo_v + 1)
    inside = vals[keep] - lo_v
    p[inside] = counts[keep]
    for v, c in extra:
        if c:
            p[int(v) - lo_v] += c
    p /= p.sum()
    size = deals * (p.size - 1) + 1
    n_fft = 1 << (size - 1).bit_length()
    pmf = np.fft.irfft(np.fft.rfft(p, n_fft) ** deals, n_fft)[:size]
    pmf = np.clip(pmf, 0.0, None)
    return deals * lo_v, pmf / pmf.sum()


def match_titles(h: Histogram, start: int, deals: int = MATCH_DEALS) -> dict[str, Any] | None:
    """What one match of ``deals`` deals does to a skill value of ``start`` (R25), from the
    per-deal settlement histogram ``h``: the SD of the change and each title's probability
    (``match_change``; at least ``TITLE_P_MIN``, highest title first)."""
    if h.n == 0:
        return None
    lo, pmf = match_change(h, deals)
    change = lo + np.arange(pmf.size)
    titles = []
    for title, t_lo, t_hi in ranges()[::-1]:
        p = float(pmf[(start + change >= t_lo) & (start + change < t_hi)].sum())
        if p >= TITLE_P_MIN:
            titles.append({"title": title, "gloss": gloss(title), "p": p})
    return {"sd": math.sqrt(deals) * h.moments.sd if h.n > 1 else math.nan, "titles": titles}


def _merge(a: dict[str, Any], b: Mapping[str, Any]) -> dict[str, Any]:
    out = {}
    for k, v in a.items():
        if isinstance(v, int):
            out[k] = v + b[k]
        else:
            out[k] = v.merge(b[k])
    return out


def _cross(state: Mapping[str, Any], k: int) -> list[list[dict[str, Any] | None]]:
    """``cross[i][j]``: player i's mean settlement per deal per player against j, with CI,
    the two-sided p-value of mean 0 (``p``) and whether Holm's procedure over all matchups
    rejects it at a 5% family-wise error rate (``holm``)."""
    out: list[list[dict[str, Any] | None]] = [[None] * k for _ in range(k)]
    ms = [Moments.from_dict(m["tally"]["pairs"]) for m in state["matchups"]]
    # the per-cell intervals are 95% each, not jointly (with 6 matchups about a quarter of
    # round robins have some cell missing its true mean): Holm's procedure marks the cells
    # whose mean differs from 0 with a family-wise error rate of 5%
    sig = holm([p.p_value() for p in ms])
    for m, p, s in zip(state["matchups"], ms, sig, strict=True):
        pv = p.p_value()
        out[m["a"]][m["b"]] = {**_ci(p), "p": pv, "holm": s}
        out[m["b"]][m["a"]] = {**_ci(Moments(p.n, -p.total, p.total_sq)), "p": pv, "holm": s}
    return out


MISFIT_P = 0.01  # Bradley-Terry goodness of fit: warn below this p-value


def _ratings(state: Mapping[str, Any], k: int, cov_y: np.ndarray | None = None
             ) -> tuple[list[dict[str, float]] | None, dict[str, Any] | None]:
    """Bradley-Terry on pair wins (a drawn pair is half a win each), as Elo with 95% CI
    (whose variance counts the draws as results of score 1/2, not as win/loss trials, and,
    with ``cov_y``, the correlation of matchups on shared deals), and its goodness of fit
    (``bt_goodness_of_fit``, with a warning naming the matchups furthest from the ratings when
    its p-value is below ``MISFIT_P``)."""
    wins, draws = np.zeros((k, k)), np.zeros((k, k))
    pairs, wdls = [], []
    for m in state["matchups"]:
        w = WDL.from_dict(m["tally"]["wdl"])
        wins[m["a"], m["b"]] += w.wins + 0.5 * w.draws
        wins[m["b"], m["a"]] += w.losses + 0.5 * w.draws
        draws[m["a"], m["b"]] += w.draws
        draws[m["b"], m["a"]] += w.draws
        pairs.append((m["a"], m["b"]))
        wdls.append(w)
    if not wins.any():
        return None, None
    n = [w.n for w in wdls]
    extra = bt_cluster_meat(pairs, k, cov_y, n) if cov_y is not None else None
    # Firth's bias reduction: a fixed prior of one draw per pair pulled the ratings of a player
    # that wins 99.4% of its pairs far in (blocks of 100 deals of a real round robin covered
    # 0.77); Firth's covered 0.94
    theta, cov = bradley_terry(wins, prior="firth", draws=draws, extra_meat=extra)
    ratings = [{"elo": e, "lo": lo, "hi": hi} for e, lo, hi in elo_from_bt(theta, cov)]
    if len(pairs) != len(set(pairs)) or not all(n):
        return ratings, None
    h = bt_firth_draws(wins, theta)
    fit = bt_goodness_of_fit(pairs, [w.wins for w in wdls], [w.draws for w in wdls],
                             [w.losses for w in wdls], theta, cov_y,
                             prior=[h[a, b] for a, b in pairs])
    players = state["players"]
    worst = sorted(range(len(pairs)), key=lambda m: -abs(fit["z"][m]))[:3]
    fit["worst"] = [{"a": pairs[m][0], "b": pairs[m][1], "observed": fit["observed"][m],
                     "expected": fit["expected"][m], "z": fit["z"][m]} for m in worst
                    if math.isfinite(fit["z"][m])]
    fit["misfit"] = bool(fit["df"] and fit["p"] < MISFIT_P)
    fit["warning"] = None
    if fit["misfit"]:
        disagree = "; ".join(
            f"{players[w['a']]} vs {players[w['b']]}: pair score {w['observed']:.3f}, the "
            f"ratings predict {w['expected']:.3f}" for w in fit["worst"])
        fit["warning"] = (
            f"the Bradley-Terry ratings do not fit the results (chi-square {fit['chi2']:.1f} on "
            f"{fit['df']} df, p = {fit['p']:.2g}): no single rating per player explains every "
            f"matchup, and the ratings would change with the field; furthest from them: "
            f"{disagree}")
    return ratings, fit


Table = tuple[str, list[str], list[list[str]], str]  # title, header, rows, note


def nan_low(x: float | None) -> float:
    return x if x is not None and not math.isnan(x) else -math.inf


def fmt_value(x: float | None, fmt: str = "{:+.3f}") -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    if isinstance(x, float) and math.isinf(x):
        return "+inf" if x > 0 else "-inf"
    out = fmt.format(x)
    if out[:1] == "-" and not any(c in "123456789" for c in out.partition("e")[0]):
        out = ("+" if "+" in fmt else "") + out[1:]  # a value that rounds to 0 is not "-0"
    return out


def elo_ci(elo: float | None, lo: float | None, hi: float | None) -> str:
    """An Elo estimate with its interval, never "inf": ``+963 [+934, +998]``; one-sided where a
    side is unbounded (every pair won: ``> +X``, every pair lost: ``< -X``); ``all won`` or
    ``all lost`` where no bound is finite."""
    def fin(x: float | None) -> bool:
        return x is not None and math.isfinite(x)

    def n(x: float | None) -> str:
        return fmt_value(x, "{:+.0f}")

    if elo is None or math.isnan(elo):
        return "–"
    if fin(elo) and fin(lo) and fin(hi):
        return f"{n(elo)} [{n(lo)}, {n(hi)}]"
    if math.isinf(elo):  # all won (+) or all lost (-): only the finite bound says something
        bound = lo if elo > 0 else hi
        if fin(bound):
            return f"{'>' if elo > 0 else '<'} {n(bound)}"
        return "all won" if elo > 0 else "all lost"
    if fin(lo) and hi is not None and math.isinf(hi):
        return f"> {n(lo)}"
    if fin(hi) and lo is not None and math.isinf(lo):
        return f"< {n(hi)}"
    return n(elo)


def pct(x: float | None) -> str:
    if x is not None and 0.0 < x < 0.01:  # rare events keep two significant digits
        return fmt_value(100.0 * x, "{:.2g}%")
    return fmt_value(None if x is None else 100.0 * x, "{:.1f}%")


def title_odds(titles: Sequence[Mapping[str, Any]], floor: float = 0.005) -> str:
    """``'本科生 (undergraduate) 52%, 大专生 (junior-college student) 48%'``: the titles of at
    least ``floor`` chance, highest title first."""
    shown = [f"{titled(t['title'])} {pct(t['p'])}" for t in titles if t["p"] >= floor]
    return ", ".join(shown) or "–"


def mean_ci_text(r: Mapping[str, float]) -> str:
    return f"{fmt_value(r['mean'])} [{fmt_value(r['lo'])}, {fmt_value(r['hi'])}]"


def ranked(strategies: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Players best first: by mean settlement per deal per player (no result last)."""
    def key(s: Mapping[str, Any]) -> float:
        m = s["result"]["mean"]
        return -m if m is not None and math.isfinite(m) else math.inf

    return sorted(strategies, key=key)


def _decimals(half: float) -> int:
    """Decimals that show an interval of half-width ``half``: 2 to 4."""
    if not (half > 0 and math.isfinite(half)):
        return 2
    return min(4, max(2, -math.floor(math.log10(half))))


def verdict(summary: Mapping[str, Any]) -> str:
    """The run in one line: for one matchup, who beats whom by how much per deal (95% CI) and
    the share of pairs won; for a gauntlet, the first player against each of the others the
    same way; for a round robin, the players ranked by mean settlement per deal per player
    with their intervals. (An SPRT's verdict is ``sprt_verdict``.)"""
    players, oracle = summary["players"], summary["oracle"]
    unit = "duplicate pairs" if summary["config"]["duplicate"] else "deals"

    def name(i: int) -> str:
        return player_name(players[i], oracle[i])

    def match(m: Mapping[str, Any], short: bool) -> str:
        """``m`` from A's side (``short``: the gauntlet's clause, A named once before)."""
        r = m["result"]
        a = "" if short else f"{name(m['a'])} "
        if not r["n"]:
            return f"{a}vs {name(m['b'])}: no results yet"
        mean, lo, hi = r["mean"], r["lo"], r["hi"]
        if not (math.isfinite(lo) and math.isfinite(hi)):
            return (f"{a}vs {name(m['b'])}: {mean:+.2f} points per deal over {r['n']} {unit} "
                    f"(too few for an interval)")
        d = _decimals((hi - lo) / 2)

        def sg(x: float) -> str:  # signed, never "-0.00"
            return fmt_value(x, f"{{:+.{d}f}}")

        if lo > 0 or hi < 0:
            sign = 1 if lo > 0 else -1
            x, y = sorted((sign * lo, sign * hi))
            share = pct(r["win"] if sign > 0 else r["loss"])
            by = f"by {sign * mean:.{d}f} points per deal [{x:.{d}f}, {y:.{d}f}]"
            if short:
                return (f"{'beats' if sign > 0 else 'loses to'} {name(m['b'])} {by} "
                        f"({'winning' if sign > 0 else 'losing'} {share} of {unit})")
            win, lose = (m["a"], m["b"])[::sign]
            return f"{name(win)} beats {name(lose)} {by}, winning {share} of {unit}"
        if short:
            return (f"no significant difference with {name(m['b'])}: {sg(mean)} "
                    f"[{sg(lo)}, {sg(hi)}]")
        return (f"no significant difference between {name(m['a'])} and {name(m['b'])}: "
                f"{name(m['a'])} {sg(mean)} points per deal [{sg(lo)}, {sg(hi)}], "
                f"winning {pct(r['win'])} and losing {pct(r['loss'])} of {unit}")

    ms = summary["matchups"]
    if len(ms) == 1:
        return match(ms[0], short=False)
    if summary["config"]["format"] == "gauntlet" and all(m["a"] == ms[0]["a"] for m in ms):
        return (f"{name(ms[0]['a'])} against each: "
                + "; ".join(match(m, short=True) for m in ms))
    parts = []
    for k, st in enumerate(ranked(summary["strategies"]), 1):
        r = st["result"]
        if r["n"] and math.isfinite(r["lo"]) and math.isfinite(r["hi"]):
            d = _decimals((r["hi"] - r["lo"]) / 2)
            fmt = f"{{:+.{d}f}}"
            parts.append(f"{k}. {player_name(st)} {fmt_value(r['mean'], fmt)} "
                         f"[{fmt_value(r['lo'], fmt)}, {fmt_value(r['hi'], fmt)}]")
        else:
            parts.append(f"{k}. {player_name(st)} –")
    return "ranking by mean settlement per deal per player: " + ", ".join(parts)


def player_name(s: Mapping[str, Any] | str, oracle: bool = False) -> str:
    if isinstance(s, Mapping):
        return s["spec"] + (ORACLE_MARK if s["oracle"] else "")
    return s + (ORACLE_MARK if oracle else "")


SPRT_BIAS_NOTE = ("A run stopped by the SPRT is biased: its mean settlement and CI are "
                  "shifted away from the hypothesis it rejected, and the CI covers the true "
                  "mean less often than 95%; read the verdict, not the interval.")


def sprt_verdict(sp: Mapping[str, Any]) -> str:
    """What the SPRT decided, in words that are true: a preference between two means at the
    stated error rates (Wald), not a bound on the mean."""
    mu0, mu1, a, b = sp["mu0"], sp["mu1"], sp["alpha"], sp["beta"]
    rates = f"at α={a:g}, β={b:g}"
    if sp["state"] == "H1":
        return f"H1 accepted: the data favour mean = {mu1:g} over mean = {mu0:g} {rates}"
    if sp["state"] == "H0":
        return f"H0 accepted: the data favour mean = {mu0:g} over mean = {mu1:g} {rates}"
    return (f"no decision between mean = {mu0:g} (H0) and mean = {mu1:g} (H1) yet "
            f"(deal limit reached or run unfinished)")


_f = fmt_value  # (its name before the report's tables moved to sim.analysis.tables)
