"""The ladder's model (sim/analysis/ladder, issue 22): the joint fit, its intervals, the
goodness-of-fit test, the scheduling rule, the renderings and the history."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from ladder_sim import bt_probs, coverage, ladder, new_player, simulate

from sim.analysis import ladder as L
from sim.analysis.stats import ELO_PER_NAT, bradley_terry
from sim.errors import ConfigError, ShuangkouError, UsageError

ELO = np.array([0.0, 60.0, 120.0, 250.0])


def _data(seed: int = 1, deals: int = 600, elo: np.ndarray = ELO, draw: float = 0.25):
    rng = np.random.default_rng(seed)
    probs = bt_probs(elo, draw)
    a, b, d, s2 = simulate(rng, elo.size, probs, {m: deals for m in probs})
    return ladder(elo.size, a, b, d, s2)


def _pairs(spec: list[tuple[int, int, int]], p: int, seed: int = 0) -> L.LadderData:
    """Pairs from (a, b, score2) triples, each on its own deal."""
    a = np.array([x[0] for x in spec], np.int32)
    b = np.array([x[1] for x in spec], np.int32)
    s2 = np.array([x[2] for x in spec], np.int8)
    return ladder(p, a, b, np.arange(len(spec), dtype=np.int64) + seed, s2)


def test_the_fit_solves_the_bradley_terry_score_equations():
    # the same estimate as stats.bradley_terry (plain MLE, a draw half a win to each side)
    d = _data()
    f = L.fit(d)
    wins = np.zeros((4, 4))
    draws = np.zeros((4, 4))
    for a, b, s in zip(d.a, d.b, d.score2, strict=True):
        wins[a, b] += s / 2
        wins[b, a] += 1 - s / 2
        if s == 1:
            draws[a, b] += 1
            draws[b, a] += 1
    theta, cov = bradley_terry(wins, prior=0, draws=draws)
    assert np.allclose(f.rating, ELO_PER_NAT * theta, atol=1e-6)
    # the naive interval is the sandwich with every pair independent (stats' draws version)
    assert np.allclose(f.cov_naive, ELO_PER_NAT ** 2 * cov, rtol=1e-6, atol=1e-9)
    assert abs(f.rating.mean()) < 1e-9 and f.status == ["rated"] * 4 and f.anchor is None
    # and it recovers the truth
    for i in range(4):
        for j in range(i + 1, 4):
            _, lo, hi = f.diff(i, j)
            assert lo - 15 <= ELO[i] - ELO[j] <= hi + 15


def test_the_pairs_order_and_side_do_not_matter():
    d = _data(seed=2)
    f = L.fit(d)
    perm = np.random.default_rng(0).permutation(d.a.size)
    swapped = ladder(4, d.b[perm], d.a[perm], d.deal[perm], (2 - d.score2[perm]).astype(np.int8))
    g = L.fit(swapped)
    assert np.allclose(f.rating, g.rating) and np.allclose(f.cov, g.cov)
    assert np.array_equal(f.cross, g.cross) and np.array_equal(f.wdl, g.wdl)


def test_an_anchor_holds_a_player_at_zero_and_keeps_the_differences():
    d = _data(seed=3)
    d.names = ["w", "x", "y", "z"]
    f, g = L.fit(d), L.fit(d, anchor="y")
    assert g.rating[2] == 0.0 and g.se[2] == 0.0 and g.anchor == "y"
    assert np.allclose(g.rating - g.rating[0], f.rating - f.rating[0])
    for i, j in ((0, 1), (1, 3), (0, 3)):
        assert np.allclose(f.diff(i, j), g.diff(i, j))
    # the interval of each player is now against y: its variance is that of the difference
    assert math.isclose(g.se[0] ** 2, f.cov[0, 0] + f.cov[2, 2] - 2 * f.cov[0, 2])
    with pytest.raises(ConfigError, match="anchor 'nobody' is not a player"):
        L.fit(d, anchor="nobody")
    assert "0 (anchor)" in L.show_text(d, g) and "y held at 0" in L.show_text(d, g)


def test_an_anchor_at_a_given_elo_moves_every_number_alike():
    """``anchor_elo``: the anchor shows that Elo, every rating and bound moves by it, the
    differences and their intervals do not change; without an anchor the mean is at it."""
    d = _data(seed=3)
    d.names = ["w", "x", "y", "z"]
    g, h = L.fit(d, anchor="y"), L.fit(d, anchor="y", anchor_elo=1500.0)
    assert h.rating[2] == 1500.0 and np.allclose(h.rating, g.rating + 1500.0)
    assert np.allclose(h.lo, g.lo + 1500.0) and np.allclose(h.hi, g.hi + 1500.0)
    for i, j in ((0, 1), (1, 3), (0, 3)):
        assert np.allclose(g.diff(i, j), h.diff(i, j))
    text = L.show_text(d, h)
    assert "+1500 (anchor)" in text and "y held at +1500" in text
    assert L.show_json(d, h)["anchor_elo"] == 1500.0
    m = L.fit(d, anchor_elo=-200.0)
    assert math.isclose(m.rating.mean(), -200.0) and m.anchor is None
    with pytest.raises(ConfigError, match="finite"):
        L.fit(d, anchor_elo=math.nan)


SPEC60 = "greedy(show_at=0.25, contest_at=100, min_cards=3, draw=0.50)"


def test_a_long_spec_is_abbreviated_in_the_text_tables_with_a_legend():
    """A 60-character spec does not widen the text tables: it is cut to ``NAME_WIDTH``
    characters ending ``…[1]``, the same in the ranking and the crosstable, and a legend line
    gives it whole; the tables are as wide as with a spec of exactly ``NAME_WIDTH``."""
    assert len(SPEC60) == 60
    d = _data(seed=3)
    d.names = ["greedy", SPEC60, "random", "random(show_prob=0.9)"]
    text = L.show_text(d, L.fit(d))
    d.names[1] = "x" * L.NAME_WIDTH
    plain = L.show_text(d, L.fit(d))
    label = SPEC60[:L.NAME_WIDTH - 4] + "…[1]"
    assert len(label) == L.NAME_WIDTH
    rows = [line for line in text.splitlines() if label in line]
    assert len(rows) == 2  # its ranking row and its crosstable row
    assert "  [1] " + SPEC60 in text.splitlines()
    widths = [len(line) for line in text.splitlines()[2:7]]
    assert widths == [len(line) for line in plain.splitlines()[2:7]]  # header and 4 rows
    assert SPEC60 not in text.split("players shown abbreviated:")[0]


def test_disconnected_and_new_players_are_unrated_not_numbers():
    # players 0-2 play each other; 3 and 4 only each other; 5 never plays
    spec = [(0, 1, 2), (0, 1, 1), (1, 2, 2), (1, 2, 0), (0, 2, 1), (0, 2, 0),
            (3, 4, 2), (3, 4, 0)]
    d = _pairs(spec, 6)
    f = L.fit(d)
    assert f.status == ["rated"] * 3 + ["unrated"] * 3
    assert np.isnan(f.rating[3:]).all() and np.isnan(f.lo[3:]).all()
    assert f.pairs.tolist() == [4, 4, 4, 2, 2, 0]
    text = L.show_text(d, f)
    assert text.count("unrated") == 3
    js = json.loads(json.dumps(L.show_json(d, f), allow_nan=False))  # strict JSON: no NaN
    assert [p["status"] for p in js["players"]][-3:] == ["unrated"] * 3
    assert js["players"][-1]["rating"] is None
    # the new player's matchups come first in the schedule
    first = L.schedule(d, f, 3)
    assert {x for m in first for x in m} >= {3, 4, 5}


def test_a_player_that_won_every_pair_gets_a_one_sided_bound():
    rng = np.random.default_rng(4)
    probs = bt_probs(np.array([0.0, 50.0, 100.0]), 0.25)
    a, b, d, s2 = simulate(rng, 3, probs, {m: 300 for m in probs})
    # player 3 wins every pair against 0 and 1; player 4 loses every pair against 2
    a = np.concatenate([a, [3] * 40, [3] * 40, [4] * 30])
    b = np.concatenate([b, [0] * 40, [1] * 40, [2] * 30])
    s2 = np.concatenate([s2, [2] * 80, [0] * 30]).astype(np.int8)
    d = np.concatenate([d, np.arange(40), np.arange(40), np.arange(30)])
    data = ladder(5, a.astype(np.int32), b.astype(np.int32), d.astype(np.int64), s2)
    f = L.fit(data)
    assert f.status == ["rated", "rated", "rated", "above", "below"]
    assert math.isfinite(f.lo[3]) and np.isnan(f.rating[3]) and f.lo[3] > f.rating[1]
    assert math.isfinite(f.hi[4]) and f.hi[4] < f.rating[2]
    assert f.order()[0] == 3 and f.order()[-1] == 4
    # an anchor that has only a bound cannot be held at 0: the mean is
    data.names = ["p0", "p1", "p2", "top", "bottom"]
    g = L.fit(data, anchor="top")
    assert g.anchor is None and np.allclose(g.rating[:3], f.rating[:3])
    assert L.fit(data, anchor="p1").rating[1] == 0.0
    text = L.show_text(data, f)
    assert f"> {f.lo[3]:+.0f}" in text and f"< {f.hi[4]:+.0f}" in text and "inf" not in text
    # a bounded player is paired with the rated player next to it
    assert set(L.schedule(data, f, 2)) == {(3, int(np.argmax(f.rating[:3]))),
                                           (4, int(np.nanargmin(f.rating[:3])))}


def test_no_pairs_and_one_pair():
    empty = _pairs([], 3)
    f = L.fit(empty)
    assert f.status == ["unrated"] * 3 and f.pairs.tolist() == [0, 0, 0]
    assert "unrated" in L.show_text(empty, f) and L.history(empty, 0) == []
    assert len(L.schedule(empty, f, 4)) == 4
    one = _pairs([(0, 1, 2)], 2)
    f = L.fit(one)  # one win: no rating, the winner is not rated either
    assert f.status == ["unrated", "unrated"] and L.show_json(one, f)["pairs"] == 1


def test_bad_input_is_one_clear_error():
    d = _data(deals=20)
    with pytest.raises(UsageError, match="score2 must be 0"):
        L.fit(ladder(4, d.a, d.b, d.deal, (d.score2 * 3).astype(np.int8)))
    with pytest.raises(UsageError, match="player indices 0..3"):
        L.fit(ladder(4, d.a + 3, d.b, d.deal, d.score2))
    with pytest.raises(UsageError, match="against itself"):
        L.fit(ladder(4, d.a, d.a, d.deal, d.score2))
    with pytest.raises(UsageError, match="shape"):
        L.fit(ladder(4, d.a, d.b[:-1], d.deal, d.score2))
    with pytest.raises(UsageError, match="k 0 must be an integer >= 1"):
        L.schedule(d, L.fit(d), 0)
    with pytest.raises(ShuangkouError, match="player 9 must be an index"):
        L.history(d, 9)


def test_clustered_intervals_are_wider_than_naive_when_deals_are_shared():
    d = _data(seed=5, deals=2000)
    f = L.fit(d)
    assert f.clusters == 2000
    for i, j in ((0, 1), (0, 3), (2, 3)):
        _, lo, hi = f.diff(i, j)
        _, nlo, nhi = f.diff(i, j, naive=True)
        assert hi - lo > 1.1 * (nhi - nlo)
    # with every pair on its own deal the two agree (up to the G/(G-1) factor)
    own = ladder(4, d.a, d.b, np.arange(d.a.size, dtype=np.int64), d.score2)
    g = L.fit(own)
    assert np.allclose(np.diag(g.cov), np.diag(g.cov_naive), rtol=0.15)


def test_a_few_agreeing_pairs_do_not_claim_certainty():
    # a new player with 10 pairs, all drawn, against one well-measured player: the residuals
    # are all ~0, so the bare sandwich would give an interval of width ~0; the guard keeps it
    # near the width 10 independent pairs have at most (about +-200 Elo)
    d = _data(seed=12, deals=500)
    a = np.concatenate([d.a, np.full(10, 4, np.int32)])
    b = np.concatenate([d.b, np.full(10, 1, np.int32)])
    s2 = np.concatenate([d.score2, np.ones(10, np.int8)])
    deal = np.concatenate([d.deal, np.arange(10)])
    f = L.fit(ladder(5, a, b, deal, s2))
    assert f.status[4] == "rated"
    _, lo, hi = f.diff(4, 1)
    assert hi - lo > 200
    # and it does not matter once a matchup has many pairs
    g = L.fit(d)
    assert np.all(np.diag(g.cov) < 1.03 * np.diag(g.cov - _guard(g)))


def _guard(f):
    """The guard's share of ``f.cov`` (Elo^2)."""
    k = len(f.names)
    jk = np.full((k, k), 1.0 / k)
    hinv = np.linalg.inv(f.info + jk) - jk
    th = f.rating / ELO_PER_NAT
    iu, ju = np.triu_indices(k, 1)
    pm = 1.0 / (1.0 + np.exp(th[ju] - th[iu]))
    extra = L.model._laplacian(k, iu, ju, L.GUARD_PAIRS * pm * (1 - pm))
    return ELO_PER_NAT ** 2 * hinv @ extra @ hinv


def test_coverage_of_rating_differences_fast():
    # tests/ladder_sim.py coverage 2000 gives the figure of docs/ladder.md; here 150 ladders
    # (900 differences): the clustered interval covers about 95%, the naive one much less
    r = coverage(150, seed=11, deals=300)
    assert 0.2 < r["draw_rate"] < 0.3
    assert 0.925 <= r["clustered"] <= 0.975, r
    assert r["naive"] < 0.91, r


def test_goodness_of_fit_passes_a_transitive_ladder_and_names_a_non_transitive_one():
    f = L.fit(_data(seed=6, deals=1500))
    assert f.gof["df"] == 6 - 3 and f.gof["p"] > L.BAD_FIT_P and f.gof["warning"] is None
    assert f.gof["method"] == "Wald, clustered by deal"
    # rock-paper-scissors: 0 beats 1, 1 beats 2, 2 beats 0 (each 70%), plus a fourth player
    rng = np.random.default_rng(7)
    probs = {(0, 1): (0.6, 0.2), (1, 2): (0.6, 0.2), (0, 2): (0.2, 0.2),
             (0, 3): (0.4, 0.2), (1, 3): (0.4, 0.2), (2, 3): (0.4, 0.2)}
    a, b, d, s2 = simulate(rng, 4, probs, {m: 800 for m in probs})
    data = ladder(4, a, b, d, s2)
    g = L.fit(data)
    assert g.gof["p"] < 1e-6 and g.gof["warning"]
    named = {(x["a"], x["b"]) for x in g.misfits[:3]}
    assert named == {(0, 1), (1, 2), (0, 2)}
    assert "p0 vs p1 scored" in g.gof["warning"]
    text = L.show_text(data, g)
    assert "warning: the ratings do not explain the results" in text
    assert "goodness of fit: chi-square" in text


def test_goodness_of_fit_rarely_warns_when_the_model_holds():
    # tests/ladder_sim.py's ladders follow Bradley-Terry, with shared deals: the clustered test
    # should reject about 5% at 0.05 (300 ladders of 400 deals: 4.7%; here 80 of 200)
    rng = np.random.default_rng(13)
    elo = np.array([0.0, 40.0, 90.0, 150.0, 230.0])
    probs = bt_probs(elo, 0.25)
    ps = []
    for _ in range(80):
        a, b, d, s2 = simulate(rng, 5, probs, {m: 200 for m in probs})
        ps.append(L.fit(ladder(5, a, b, d, s2)).gof["p"])
    assert np.mean(np.array(ps) < 0.05) <= 0.125, sorted(ps)[:10]
    assert np.mean(np.array(ps) < 0.5) > 0.3  # not stuck at p = 1 either


def test_the_pearson_fallback_for_many_matchups(monkeypatch):
    d = _data(seed=8, deals=500)
    f = L.fit(d)
    monkeypatch.setattr(L.model, "GOF_MAX_MATCHUPS", 0)
    g = L.fit(d)  # the covariance is summed per deal and player instead: the same
    assert np.allclose(f.cov, g.cov) and g.gof["method"].startswith("Pearson")
    assert g.gof["df"] == f.gof["df"]


def test_schedule_goes_where_the_ranking_is_uncertain():
    # 0-2 well measured; 3 has a few pairs against 0 only: its matchups come first
    rng = np.random.default_rng(9)
    probs = bt_probs(np.array([0.0, 40.0, 80.0, 60.0]), 0.25)
    counts = {m: (2000 if m[1] < 3 else 0) for m in probs}
    counts[(0, 3)] = 30
    a, b, d, s2 = simulate(rng, 4, probs, counts)
    data = ladder(4, a, b, d, s2)
    f = L.fit(data)
    picks = L.schedule(data, f, 6)
    assert len(picks) == 6 and all(3 in m for m in picks[:3])
    assert all(i != j and 0 <= i < 4 and 0 <= j < 4 for i, j in picks)


def test_schedule_leaves_a_foregone_gap_alone():
    # a random-like player 700 Elo below three close ones: its gap is wide in Elo (few pairs
    # carry information at p ~ 0.02) but its place in the ranking is not in doubt, so the
    # picks go to the close players (the bare variance sum spent most pairs on it)
    rng = np.random.default_rng(14)
    probs = bt_probs(np.array([0.0, 25.0, 50.0, -700.0]), 0.3)
    a, b, d, s2 = simulate(rng, 4, probs, {m: 300 for m in probs})
    data = ladder(4, a, b, d, s2)
    f = L.fit(data)
    assert f.status == ["rated"] * 4
    picks = L.schedule(data, f, 10)
    assert all(3 not in m for m in picks), picks
    # chunks of 200 pairs each: the picks spread over the close matchups
    assert {(0, 1), (1, 2)} <= set(L.schedule(data, f, 10, pairs=200))


def test_adaptive_scheduling_needs_fewer_pairs_than_a_round_robin():
    # the full figure (5 seeds, a field with 3,000 pairs per matchup) is tests/ladder_sim.py
    # adaptive; here one seed on the real round robin's outcome probabilities: a new player
    # to +-15 Elo. (A schedule weight that let near-ties absorb the pairs needed > 20,000.)
    rr = new_player(0, "round-robin", target=15.0, base=1500, batch=200)
    ad = new_player(0, "adaptive", target=15.0, base=1500, batch=200, limit=rr // 2 + 200)
    assert ad <= 0.5 * rr, (ad, rr)


def test_show_text_json_and_history():
    d = _data(seed=10, deals=200)
    d.names = ["alpha", "beta", "gamma(x=1)", "delta"]
    d.incidents = np.array([[1, 0, 0], [0, 2, 0], [0, 0, 3], [0, 0, 0]], np.int64)
    d.last_time = ["2026-12-02T04:00:00Z", None, None, "2026-12-02T05:00:00Z"]
    d.times = np.repeat(np.arange(4, dtype=np.float64), d.a.size // 4 + 1)[:d.a.size]
    f = L.fit(d)
    text = L.show_text(d, f)
    first = text.splitlines()[3]
    assert first.split()[:2] == ["1", "delta"]
    assert "1/0/0" in text and "0/0/3" in text and "2026-12-02T05:00:00Z" in text
    w, dr, lo_ = f.cross[3, 0]
    assert f"{w}-{dr}-{lo_}" in text and "gamma(x=1)" in text
    js = L.show_json(d, f)
    json.dumps(js, allow_nan=False)
    top = js["players"][0]
    assert top["player"] == "delta" and top["rank"] == 1
    assert set(top) >= {"rating", "lo", "hi", "se", "pairs", "wins", "draws", "losses",
                        "margin", "crashes", "timeouts", "illegal", "last_time", "status"}
    assert top["wins"] + top["draws"] + top["losses"] == top["pairs"] == 600
    assert js["crosstable"][0][0] is None and js["order"][0] == "delta"
    # each rated player's difference to the next one, with its interval
    o = f.order()
    gap = f.diff(o[0], o[1])
    assert top["over_next"] == {"diff": gap[0], "lo": gap[1], "hi": gap[2]}
    assert f"{gap[0]:+.0f} [{gap[1]:+.0f}, {gap[2]:+.0f}]" in text
    assert js["players"][-1]["over_next"] is None
    hist = L.history(d, 3, points=4)
    assert [h["pairs"] for h in hist] == sorted(h["pairs"] for h in hist)
    assert hist[-1]["pairs"] == d.a.size and len(hist) == 3  # delta's pairs start at time 1
    assert math.isclose(hist[-1]["rating"], f.rating[3])
    assert hist[-1]["lo"] < hist[-1]["rating"] < hist[-1]["hi"]
    assert (hist[-1]["hi"] - hist[-1]["lo"]) < (hist[0]["hi"] - hist[0]["lo"])
    assert [h["time"] for h in hist] == [1.0, 2.0, 3.0]
    # pairs committed at one time are never split, and repeated cut-offs are dropped
    d.times = np.zeros(d.a.size)
    assert [h["pairs"] for h in L.history(d, 3, points=20)] == [d.a.size]
    d.times = None  # without times: the arrays' order, equal numbers of pairs per point
    assert [h["pairs"] for h in L.history(d, 0, points=3)] == [400, 800, 1200]
    # a player's history starts at its first pair (3 plays in the last three matchups)
    assert [h["pairs"] for h in L.history(d, 3, points=3)] == [667, 934, 1200]
    assert L.history(_pairs([(0, 1, 2)], 3), 2) == []
