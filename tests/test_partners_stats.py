"""The partners statistics (issue 36, ``sim.analysis.stats.partners``): the design check, the
fit's algebra, and honest intervals and tests on simulated partners tournaments
(benchmarks/partners_coverage.py's simulation: correlated pairings within a deal, lattice
results with many ties)."""

from __future__ import annotations

import importlib.util
import itertools
import os
import sys

import numpy as np
import pytest

from sim.analysis.stats import (
    pairing_means,
    partner_pairings,
    partners_fit,
    partners_from_deals,
    team_types,
)
from sim.analysis.stats.partners import f_sf, incidence, membership
from sim.errors import ConfigError, ShuangkouError, StatsError

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _load():
    spec = importlib.util.spec_from_file_location(
        "partners_coverage", os.path.join(ROOT, "benchmarks", "partners_coverage.py"))
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["partners_coverage"] = mod
    spec.loader.exec_module(mod)
    return mod


pc = _load()
P3 = ["greedy", "learned", "random"]


# --------------------------------------------------------------------------------------------
# The design
# --------------------------------------------------------------------------------------------

def test_team_types_all_and_restricted():
    tt = team_types(P3)
    assert tt == [("greedy", "greedy"), ("learned", "learned"), ("random", "random"),
                  ("greedy", "learned"), ("greedy", "random"), ("learned", "random")]
    assert len(partner_pairings(tt)) == 15
    assert len(partner_pairings(team_types(P3 + ["expert"]))) == 45
    sub = team_types(P3, [["random", "learned"], ["greedy", "greedy"], ["greedy", "learned"],
                          ["random", "random"], ["learned", "learned"]])
    assert sub == [("greedy", "greedy"), ("learned", "learned"), ("random", "random"),
                   ("greedy", "learned"), ("learned", "random")]
    assert team_types(["a", "b"]) == [("a", "a"), ("b", "b"), ("a", "b")]


@pytest.mark.parametrize("players, teams, words", [
    (["greedy"], None, "at least 2 players"),
    (["greedy", "random", "greedy"], None, "'greedy' is named twice"),
    (P3, [["greedy", "greedy"], ["greedy", "expert"]], "'expert', not a player"),
    (P3, [["greedy", "learned"], ["learned", "greedy"]], "given twice"),
    (P3, [["greedy"]], "pair of player names"),
    (P3, ["greedy+random"], "pair of player names"),
    (P3, [["greedy", "greedy"], ["learned", "learned"], ["greedy", "learned"],
          ["greedy", "random"]], "player 'random' has only 'greedy' as partner"),
    (P3, [["greedy", "greedy"], ["greedy", "learned"], ["learned", "learned"]],
     "player 'random' has no team as partner"),
    (["a", "b", "c", "d"], [["a", "b"], ["b", "c"], ["c", "d"], ["d", "a"]], "even cycle"),
    (["a", "b"], [["a", "b"]], "at least 2 team types"),
])
def test_bad_designs_are_one_line_config_errors(players, teams, words):
    with pytest.raises(ConfigError) as err:
        team_types(players, teams)
    assert isinstance(err.value, ShuangkouError)
    assert words in str(err.value) and "\n" not in str(err.value)


def test_odd_cycle_identifies_without_mirrors():
    # a triangle of mixed teams: 2 partners each and an odd cycle, so u is identified
    tt = team_types(P3, [["greedy", "learned"], ["learned", "random"], ["greedy", "random"]])
    assert len(tt) == 3


# --------------------------------------------------------------------------------------------
# The fit's algebra
# --------------------------------------------------------------------------------------------

def _exact(players, teams, s):
    prs = partner_pairings(teams)
    mean = incidence(prs, len(teams)) @ s
    return partners_fit(players, teams, prs, mean, np.zeros((len(prs), len(prs))))


@pytest.mark.parametrize("n_players", [2, 3, 4])
def test_exact_means_give_the_truth(n_players):
    players = list(pc.NAMES[:n_players])
    teams = team_types(players)
    u = np.array(pc.INDIVIDUAL[:n_players]) - np.mean(pc.INDIVIDUAL[:n_players])
    s = membership(players, teams) @ u
    s[-1] += 0.4  # the last mixed team is better than additive
    s -= s.mean()
    res = _exact(players, teams, s)
    np.testing.assert_allclose([t["value"] for t in res["teams"]], s, atol=1e-12)
    assert all(t["lo"] == pytest.approx(t["value"]) for t in res["teams"])
    idx = {t: i for i, t in enumerate(teams)}
    for c in res["compatibility"]:
        a, b = c["players"]
        assert c["value"] == pytest.approx(s[idx[(a, b)]] - (s[idx[(a, a)]] + s[idx[(b, b)]]) / 2,
                                           abs=1e-12)
    assert [c["value"] != pytest.approx(0.0, abs=1e-9) for c in res["compatibility"]] == \
        [i == len(res["compatibility"]) - 1 for i in range(len(res["compatibility"]))]
    assert res["fit"]["stat"] == 0.0 and res["fit"]["df"] == 0  # no variance: nothing to test
    assert len(res["compatibility"]) == n_players * (n_players - 1) // 2
    ind = [x["value"] for x in res["individual"]]
    assert sum(ind) == pytest.approx(0.0, abs=1e-12)


def test_individual_is_the_additive_part():
    # an additive truth: u comes back exactly (mean 0), every compatibility is 0
    players, teams, _, s = pc.design(4, additive=True)
    res = _exact(players, teams, s)
    u = np.array(pc.INDIVIDUAL[:4])
    np.testing.assert_allclose([x["value"] for x in res["individual"]], u - u.mean(),
                               atol=1e-12)
    assert max(abs(c["value"]) for c in res["compatibility"]) < 1e-12
    mvm = {r["player"]: r for r in res["mirror_vs_mixed"]}
    # additive: mixed - mirror of player a is mean_b (u_b) - u_a
    for i, name in enumerate(players):
        others = np.delete(u, i)
        assert mvm[name]["mixed_minus_mirror"]["value"] == pytest.approx(others.mean() - u[i])


def test_pairing_means_cluster_by_deal():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(5, 200)) + rng.normal(size=(1, 200))  # a shared deal effect
    mean, cov, n, deals = pairing_means(x)
    np.testing.assert_allclose(mean, x.mean(axis=1))
    np.testing.assert_allclose(cov, np.cov(x) / 200)
    assert (n == 200).all() and deals == 200
    _, naive, _, _ = pairing_means(x, clustered=False)
    np.testing.assert_allclose(naive, np.diag(np.diag(cov)))
    x[1, :50] = np.nan
    mean, cov, n, deals = pairing_means(x)
    assert n[1] == 150 and mean[1] == pytest.approx(np.nanmean(x[1])) and deals == 200
    assert np.linalg.eigvalsh(cov).min() >= -1e-15
    with pytest.raises(StatsError):
        pairing_means(np.array([[1.0, np.inf]]))
    with pytest.raises(StatsError):
        pairing_means(np.zeros(3))


def test_team_covariance_is_the_deal_sandwich():
    # s = L m is least squares over every (pairing, deal) result; its clustered covariance
    # must equal the sandwich that sums each deal's score contributions
    players, teams, prs, s = pc.design(3, additive=False)
    x = pc.simulate(np.random.default_rng(5), players, teams, prs, s, 400, 1)[0]
    res = partners_from_deals(players, x)
    u = incidence(prs, len(teams))
    k, d = len(teams), x.shape[1]
    est = np.array([t["value"] for t in res["teams"]])
    resid = x - (u @ est)[:, None]
    g = u.T @ resid  # (K, D): each deal's score contribution
    bread = np.linalg.inv(u.T @ u * d + np.full((k, k), 1.0 / k))
    meat = g @ g.T * d / (d - 1)
    cov_s = bread @ meat @ bread
    half = 1.959963984540054 * np.sqrt(np.diag(cov_s))
    np.testing.assert_allclose([t["hi"] - t["value"] for t in res["teams"]], half, rtol=1e-9)


def test_missing_deals_and_pairings():
    players, teams, prs, s = pc.design(3, additive=False)
    x = pc.simulate(np.random.default_rng(8), players, teams, prs, s, 300, 1)[0]
    full = partners_from_deals(players, x)
    x[0, :100] = np.nan  # one pairing played fewer deals
    x[4, :] = np.nan  # one pairing not played at all
    part = partners_from_deals(players, x)
    assert part["fit"]["df"] == full["fit"]["df"] - 1 == 9
    assert len(part["pairings"]) == 14 and part["pairings"][0]["deals"] == 200
    for a, b in zip(full["teams"], part["teams"]):
        assert abs(a["value"] - b["value"]) < 0.5 * (a["hi"] - a["lo"])
    # the mirror teams cut off from each other: team (0, 0) only against (1, 1)
    y = np.full_like(x, np.nan)
    y[0] = x[0]
    with pytest.raises(StatsError, match="do not connect"):
        partners_from_deals(players, y)


def test_f_tail():
    # against closed forms: F(2, d2) tail is (1 + 2f/d2)^(-d2/2); F(d1, inf) ~ chi2 / d1
    for f, d2 in ((0.5, 7.0), (3.0, 40.0), (12.0, 300.0)):
        assert f_sf(f, 2.0, d2) == pytest.approx((1.0 + 2.0 * f / d2) ** (-d2 / 2), rel=1e-10)
    assert f_sf(0.0, 3.0, 10.0) == 1.0


# --------------------------------------------------------------------------------------------
# Honest statistics, simulated
# --------------------------------------------------------------------------------------------

COVERED = (0.93, 0.97)  # 95 +/- 2%


def _check_coverage(cov):
    for fam in pc.FAMILIES:
        assert COVERED[0] <= cov["clustered"][fam] <= COVERED[1], (fam, cov["clustered"])
    # the same data with the pairings as independent: the teams and individual strengths,
    # which add up a team's results over many pairings of one deal, undercover
    for fam in ("teams", "individual"):
        assert cov["naive"][fam] < 0.90 < COVERED[0] <= cov["clustered"][fam], (fam, cov)


@pytest.mark.parametrize("n_players, deals, reps", [(3, 300, 2000), (4, 300, 500)])
def test_intervals_cover_and_naive_ones_do_not(n_players, deals, reps):
    cov = pc.coverage(n_players, deals, reps, seed=100 + n_players)
    assert 0.10 <= cov["ties"]["share"] <= 0.30  # many exact ties, as in real runs
    _check_coverage(cov)
    assert cov["clustered"]["additivity"] > 0.9  # the +0.4 compatibility is seen


@pytest.mark.parametrize("n_players, reps", [(3, 3000), (4, 1000)])
def test_tests_hold_their_size(n_players, reps):
    null = pc.coverage(n_players, 300, reps, additive=True, seed=200 + n_players)
    for test in ("additivity", "fit"):
        assert 0.03 <= null["clustered"][test] <= 0.06, (test, null["clustered"])


def test_a_partner_effect_is_found():
    players, teams, prs, s = pc.design(3, additive=False)
    x = pc.simulate(np.random.default_rng(36), players, teams, prs, s, 1000, 1)[0]
    res = partners_from_deals(players, x)
    comp = {tuple(c["players"]): c for c in res["compatibility"]}
    lr = comp[("learned", "random")]
    assert lr["lo"] > 0.0 and lr["lo"] <= pc.COMPAT <= lr["hi"]
    for pair in (("greedy", "learned"), ("greedy", "random")):
        assert comp[pair]["lo"] <= 0.0 <= comp[pair]["hi"]
    assert res["additivity"]["df"] == 3 and res["additivity"]["p"] < 1e-4
    assert res["fit"]["df"] == 10 and res["fit"]["p"] > 0.01  # the team model holds
    ranked = sorted(res["individual"], key=lambda r: -r["value"])
    assert [r["player"] for r in ranked] == ["greedy", "learned", "random"]


def test_summary_shapes_are_json():
    import json

    players, teams, prs, s = pc.design(4, additive=False)
    x = pc.simulate(np.random.default_rng(1), players, teams, prs, s, 300, 1)[0]
    res = partners_from_deals(players, x)
    back = json.loads(json.dumps(res))
    assert back == res
    assert set(res) == {"players", "deals", "conf", "teams", "compatibility", "individual",
                        "additivity", "fit", "mirror_vs_mixed", "pairings"}
    assert len(res["teams"]) == 10 and len(res["compatibility"]) == 6
    assert len(res["individual"]) == 4 and len(res["pairings"]) == 45
    assert res["fit"]["df"] == 45 - 9 and len(res["fit"]["worst"]) == 3
    assert set(res["fit"]["worst"][0]) == {"teams", "observed", "expected", "z"}
    for row in itertools.chain(res["teams"], res["compatibility"], res["individual"]):
        assert row["lo"] <= row["value"] <= row["hi"]


@pytest.mark.slow
@pytest.mark.parametrize("n_players", [3, 4])
@pytest.mark.parametrize("deals", [300, 1000])
def test_coverage_full(n_players, deals):
    cov = pc.coverage(n_players, deals, 6000 if n_players == 3 else 3000, seed=deals)
    _check_coverage(cov)
    null = pc.coverage(n_players, deals, 6000 if n_players == 3 else 3000, additive=True,
                       seed=deals + 1)
    for test in ("additivity", "fit"):
        assert null["clustered"][test] <= 0.06, (test, null["clustered"])
