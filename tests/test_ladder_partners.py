"""The ladder's partners (docs/ladder.md "Partners"): team entrants "a+b" in the joint fit, the
partner table with compatibility intervals and the additivity test (simulated coverage and
size), the plain ranking without teams, `ladder run --partners` and `ladder show --partners`
through the command line, and bad input as one line."""

from __future__ import annotations

import json
import math
import sqlite3

import numpy as np
import pytest
from scipy.special import ndtr
from test_ladder_db import one_line, run_cli

from sim.analysis.ladder import LadderData, balanced, fit, partners, plain, show_text
from sim.errors import UsageError

PLAYERS = np.array([0.0, 60.0, 150.0])  # true Elo of the simulated players p0, p1, p2
TEAMS = [(0, 1), (0, 2), (1, 2)]  # the mixed teams p0+p1, p0+p2, p1+p2
COMPAT = [40.0, 0.0, -30.0]  # their true compatibility (Elo)


def simulate(rng: np.random.Generator, compat, deals: int = 300, draw: float = 0.25,
             players: np.ndarray = PLAYERS, teams: list[tuple[int, int]] = TEAMS) -> LadderData:
    """A ladder of the players and mixed teams (3 and 3 by default), every pairing of the
    entrants on the same ``deals`` deals. A team's true Elo is the mean of its players' plus
    its compatibility.
    Per deal, each entrant has an effect ``u`` (how these cards suit it: a team's is the mean
    of its players' plus its own), so matchups sharing an entrant, or a player, correlate on a
    deal; each pair's result is cut from its matchup's latent normal so that win, draw and
    loss have exactly the Bradley-Terry probabilities (a draw half a win)."""
    np_, nt = players.size, len(teams)
    k = np_ + nt
    elo = np.concatenate([players, [(players[a] + players[b]) / 2 + c
                                    for (a, b), c in zip(teams, compat)]])
    m = np.zeros((k, np_ + k))  # u = z @ m'
    m[:np_, :np_] = np.eye(np_)
    for n, (a, b) in enumerate(teams):
        m[np_ + n, [a, b]] = 0.5
    m[np.arange(k), np_ + np.arange(k)] = 0.7
    u = rng.standard_normal((deals, np_ + k)) @ m.T
    cu = m @ m.T
    out: list[list[np.ndarray]] = [[], [], [], []]
    for i in range(k):
        for j in range(i + 1, k):
            sd = math.sqrt(cu[i, i] + cu[j, j] - 2 * cu[i, j] + 1.0)
            q = ndtr((u[:, i] - u[:, j] + rng.standard_normal(deals)) / sd)
            p = 1.0 / (1.0 + 10.0 ** ((elo[j] - elo[i]) / 400.0))
            d = min(draw, 2 * p, 2 * (1 - p))
            pw = p - d / 2
            s2 = np.where(q > 1.0 - pw, 2, np.where(q > 1.0 - pw - d, 1, 0))
            out[0].append(np.full(deals, i, np.int32))
            out[1].append(np.full(deals, j, np.int32))
            out[2].append(np.arange(deals))
            out[3].append(s2.astype(np.int8))
    a, b, dl, s = (np.concatenate(x) for x in out)
    names = [f"p{i}" for i in range(np_)] + [f"p{a}+p{b}" for a, b in teams]
    return LadderData(names=names, a=a, b=b, deal=dl, score2=s,
                      margin=s.astype(np.float32) - 1, incidents=np.zeros((k, 3), np.int64),
                      last_time=[None] * k, teams={np_ + n: t for n, t in enumerate(teams)})


# --------------------------------------------------------------------------------------------
# the statistics: simulated coverage and size
# --------------------------------------------------------------------------------------------

REPS = 600  # simulated ladders per check (about 1.5 s each)


def test_compatibility_interval_covers():
    # 600 ladders x 3 teams: the binomial sd of a 95% coverage is 0.0089 per team, 0.0051
    # pooled (optimistic: one ladder's teams correlate); tolerances are about 3 sd
    rng = np.random.default_rng(11)
    hits = np.zeros(len(TEAMS))
    est = []
    for _ in range(REPS):
        t = partners(d := simulate(rng, COMPAT), fit(d))
        for n, (r, c) in enumerate(zip(t["teams"], COMPAT)):
            cc = r["compatibility"]
            hits[n] += cc["lo"] <= c <= cc["hi"]
        est.append([r["compatibility"]["value"] for r in t["teams"]])
    cover = hits / REPS
    assert abs(cover.mean() - 0.95) <= 0.02, cover
    assert (np.abs(cover - 0.95) <= 0.03).all(), cover
    # and the estimate is centred on the truth (sd of one estimate ~7 Elo; of the mean ~0.3)
    assert np.allclose(np.mean(est, axis=0), COMPAT, atol=2.0), np.mean(est, axis=0)


def test_additivity_test_holds_its_size_and_has_power():
    rng = np.random.default_rng(12)
    null = [partners(d := simulate(rng, [0.0] * 3), fit(d))["additivity"] for _ in range(REPS)]
    assert all(x["df"] == 3 for x in null)
    size = np.mean([x["p"] < 0.05 for x in null])
    # binomial sd at 0.05 over 600 ladders: 0.0089; the bound is 0.06 at 0.05
    assert 0.025 <= size <= 0.07, size
    # the p-values are uniform under the null: about a tenth below 0.1, half below 0.5
    assert abs(np.mean([x["p"] < 0.5 for x in null]) - 0.5) < 0.07
    alt = [partners(d := simulate(rng, COMPAT), fit(d))["additivity"] for _ in range(50)]
    assert np.mean([x["p"] < 0.05 for x in alt]) >= 0.9


def test_additive_individual_ratings_cover_under_additivity():
    rng = np.random.default_rng(13)
    hits = n = 0
    for _ in range(300):
        d = simulate(rng, [0.0] * 3)
        for r in partners(d, fit(d, anchor="p0"))["individual"]:
            if r["anchor"]:
                assert r["rating"] == 0.0 and r["player"] == "p0"
                continue
            hits += r["lo"] <= PLAYERS[int(r["player"][1:])] <= r["hi"]
            n += 1
    assert n == 600
    assert abs(hits / n - 0.95) <= 0.025, hits / n


# --------------------------------------------------------------------------------------------
# the model's pieces
# --------------------------------------------------------------------------------------------

def test_plain_view_without_teams_is_the_ladder_itself():
    rng = np.random.default_rng(1)
    d = simulate(rng, COMPAT, deals=50)
    only = LadderData(names=d.names[:3], a=d.a[(d.a < 3) & (d.b < 3)],
                      b=d.b[(d.a < 3) & (d.b < 3)], deal=d.deal[(d.a < 3) & (d.b < 3)],
                      score2=d.score2[(d.a < 3) & (d.b < 3)],
                      margin=d.margin[(d.a < 3) & (d.b < 3)],
                      incidents=np.zeros((3, 3), np.int64), last_time=[None] * 3)
    f = fit(only)
    assert plain(only, f) == (only, f)  # the same objects: a plain ladder shows as before
    assert partners(only, f)["teams"] == [] and partners(only, f)["individual"] == []


def test_plain_ranking_leaves_teams_out_and_centres_on_the_players():
    rng = np.random.default_rng(2)
    d = simulate(rng, COMPAT)
    f = fit(d)
    # the mean of the rated plain players is 0, teams left out of it
    assert abs(np.mean(f.rating[:3])) < 1e-9
    assert abs(np.mean(f.rating)) > 1.0
    shown, sf = plain(d, f)
    assert shown.names == ["p0", "p1", "p2"] and sf.names == shown.names
    assert np.array_equal(sf.rating, f.rating[:3]) and sf.cov.shape == (3, 3)
    assert int(sf.pairs.sum()) == 2 * 3 * 300  # only the players' pairs with each other
    text = show_text(shown, sf)
    assert "ladder: 3 players, 900 pairs" in text and "+p" not in text.split("\n\n")[1]
    # the information of the players with the teams' ratings unknown: no more than with them
    full = f.info[:3, :3]
    assert np.all(np.linalg.eigvalsh(full - sf.info) > -1e-9)
    # the anchor a player: differences do not change, compatibility neither
    g = fit(d, anchor="p1", anchor_elo=100.0)
    assert g.rating[1] == 100.0
    a, b = partners(d, f), partners(d, g)
    for x, y in zip(a["teams"], b["teams"]):
        assert x["compatibility"]["value"] == pytest.approx(y["compatibility"]["value"])
        assert x["compatibility"]["se"] == pytest.approx(y["compatibility"]["se"])
    assert a["additivity"]["chi2"] == pytest.approx(b["additivity"]["chi2"])


def test_team_design_is_checked():
    rng = np.random.default_rng(3)
    d = simulate(rng, COMPAT, deals=20)
    for bad in ({3: (0, 0)}, {3: (0, 9)}, {3: (4, 1), 4: (0, 2)}, {3: (3, 1)}):
        d.teams = bad
        with pytest.raises(UsageError, match="a team is an entrant"):
            fit(d)


def test_balanced_schedule_evens_out_the_pairings():
    d = LadderData(names=["a", "b", "a+b"], a=np.array([0, 0, 0], np.int32),
                   b=np.array([1, 1, 2], np.int32), deal=np.arange(3), score2=np.ones(3, np.int8),
                   margin=np.zeros(3, np.float32), incidents=np.zeros((3, 3), np.int64),
                   last_time=[None] * 3, teams={2: (0, 1)})
    cand = [(0, 1), (0, 2), (1, 2)]
    assert balanced(d, cand, 4, 1) == [(1, 2), (0, 2), (1, 2), (0, 1)]
    assert balanced(d, cand, 2, 10) == [(1, 2), (0, 2)]
    assert balanced(d, [], 3, 1) == []


# --------------------------------------------------------------------------------------------
# the command line
# --------------------------------------------------------------------------------------------

cli = run_cli  # shuangkou ladder ARGS in this process (tests/test_ladder_db.py)


def matchup_pairs(db):
    con = sqlite3.connect(db)
    try:
        return dict(((a, b), n) for a, b, n in con.execute(
            "SELECT a, b, count(*) FROM pair_results GROUP BY a, b"))
    finally:
        con.close()


def test_partners_run_and_show_end_to_end(tmp_path, capsys):
    db = tmp_path / "l.sqlite"
    assert cli(capsys, "--db", db, "add", "random", "greedy")[0] == 0
    code, out, err = cli(capsys, "--db", db, "run", "--partners", "--pairs", 300, "--chunk",
                         50, "--no-progress")
    assert code == 0, err
    # the team: its players in the order the ladder added them; every pairing evened out
    got = matchup_pairs(db)
    assert got == {("random", "greedy"): 100, ("random", "random+greedy"): 100,
                   ("greedy", "random+greedy"): 100}
    assert "random+greedy" in out and "additivity: chi-square" in out
    code, out, err = cli(capsys, "--db", db, "show")
    assert code == 0
    ranking = out.split("\n\n")[1]
    assert "random+greedy" not in ranking and "ladder: 2 players, 100 pairs" in out
    assert "1 team entrant(s) with 200 pairs" in out
    code, out, _ = cli(capsys, "--db", db, "show", "--json")
    assert [p["player"] for p in json.loads(out)["players"]] == ["greedy", "random"]
    html = tmp_path / "l.html"
    assert cli(capsys, "--db", db, "show", "--html", html)[0] == 0
    page = html.read_text()
    # the ranking and crosstable: the players; the joint fit's misfits may name the team
    ranking = page[:page.index("goodness of fit")]
    assert "greedy" in ranking and "random+greedy" not in ranking
    pq = pytest.importorskip("pyarrow.parquet")
    assert cli(capsys, "--db", db, "export", tmp_path / "p.parquet")[0] == 0
    meta = json.loads(pq.read_schema(tmp_path / "p.parquet").metadata[b"shuangkou.ladder.ratings"])
    assert [p["player"] for p in meta["players"]] == ["greedy", "random"]
    assert pq.read_table(tmp_path / "p.parquet").num_rows == 300  # every pair, teams' too
    code, out, _ = cli(capsys, "--db", db, "show", "--partners")
    assert code == 0
    row = next(x for x in out.splitlines() if x.startswith("random+greedy"))
    assert "200" in row and "[" in row
    code, out, _ = cli(capsys, "--db", db, "show", "--partners", "--json")
    table = json.loads(out)
    team = table["teams"][0]
    assert team["team"] == "random+greedy" and team["players"] == ["random", "greedy"]
    assert team["pairs"] == 200 and table["anchor"] == "random"
    c = team["compatibility"]
    if c is not None:  # rated: random loses nearly everything, greedy wins it
        assert c["lo"] <= c["value"] <= c["hi"]
        assert c["contains_zero"] == (c["lo"] <= 0 <= c["hi"])
    assert table["additivity"]["df"] in (0, 1)
    # a plain run plays the plain players only; the team keeps its pairs
    assert cli(capsys, "--db", db, "run", "--pairs", 50, "--chunk", 50, "--quiet")[0] == 0
    assert matchup_pairs(db)[("random", "greedy")] == 150
    assert matchup_pairs(db)[("random", "random+greedy")] == 100
    code, _, err = cli(capsys, "--db", db, "show", "--anchor", "greedy+random")
    assert code == 2
    one_line(err, "'random+greedy' is a team")
    # the team's history, and the team named the other way round
    code, out, _ = cli(capsys, "--db", db, "history", "greedy+random", "--points", 2)
    assert code == 0 and out.startswith("random+greedy: rating over time")
    # removing a player takes its teams off the ratings; adding it back brings them back
    assert cli(capsys, "--db", db, "remove", "greedy")[0] == 0
    code, out, _ = cli(capsys, "--db", db, "show", "--partners")
    assert code == 0 and "0 mixed teams" in out
    assert cli(capsys, "--db", db, "add", "greedy")[0] == 0
    code, out, _ = cli(capsys, "--db", db, "show", "--partners")
    assert "1 mixed teams, 200 pairs with a team" in out


def test_partners_teams_option_plays_only_the_named_teams(tmp_path, capsys):
    db = tmp_path / "l.sqlite"
    cli(capsys, "--db", db, "add", "random", "greedy", "random(show_prob=0.9)")
    code, out, err = cli(capsys, "--db", db, "run", "--partners", "--teams",
                         "greedy+random(show_prob=0.9)", "--pairs", 120, "--chunk", 20,
                         "--quiet")
    assert code == 0, err
    got = matchup_pairs(db)
    team = "greedy+random(show_prob=0.9)"
    assert sum(n for k, n in got.items() if team in k) == 60  # 3 of its 6 pairings
    assert set(got.values()) == {20} and len(got) == 6
    code, out, _ = cli(capsys, "--db", db, "show", "--partners", "--json")
    assert [t["team"] for t in json.loads(out)["teams"]] == [team]


def test_partners_run_sized_by_time_gives_each_pairing_an_even_share(tmp_path, capsys):
    db = tmp_path / "l.sqlite"
    cli(capsys, "--db", db, "add", "random", "greedy")
    assert cli(capsys, "--db", db, "run", "--pairs", 500, "--quiet")[0] == 0
    # the plain matchup has 500 pairs already: the team's two pairings are played first,
    # in chunks of at most an even share of the run (90 / 3 pairings = 30 pairs), each to
    # the pairing with the fewest pairs (the first of equals)
    assert cli(capsys, "--db", db, "run", "--partners", "--pairs", 90, "--quiet")[0] == 0
    assert matchup_pairs(db) == {("random", "greedy"): 500, ("random", "random+greedy"): 60,
                                 ("greedy", "random+greedy"): 30}


def test_import_of_a_partners_tournament(tmp_path, capsys):
    from sim.tournament.config import from_dict
    from sim.tournament.run import run_tournament

    folder = str(tmp_path / "p")
    run_tournament(from_dict({"name": "p", "format": "partners", "players": ["random", "greedy"],
                              "deals": 40, "seed": 0, "run": {"progress": False},
                              "output": {"dir": folder, "plots": False}}, source="test"),
                   progress=False)
    db = tmp_path / "l.sqlite"
    code, out, err = cli(capsys, "--db", db, "import", folder)
    assert code == 0, err
    # the mirror teams are the plain players, the mixed team the ladder's team entrant
    assert matchup_pairs(db) == {("random", "greedy"): 40, ("random", "random+greedy"): 40,
                                 ("greedy", "random+greedy"): 40}
    code, out, _ = cli(capsys, "--db", db, "show", "--partners", "--json")
    assert code == 0 and json.loads(out)["teams"][0]["pairs"] == 80
    # a ladder that seats the team's players the other way round refuses it, in one line
    other = tmp_path / "o.sqlite"
    cli(capsys, "--db", other, "add", "greedy", "random")
    code, _, err = cli(capsys, "--db", other, "import", folder)
    assert code == 2
    one_line(err, "'random+greedy'", "first seat")
    assert matchup_pairs(other) == {}


@pytest.mark.parametrize("args, parts", [
    (["run", "--partners", "--teams", "random+foo", "--pairs", 10], ["'foo'", "ladder add"]),
    (["run", "--teams", "random+greedy", "--pairs", 10], ["--teams needs --partners"]),
    (["run", "--partners", "--teams", "random+random", "--pairs", 10], ["mirror team"]),
    (["run", "--partners", "--teams", "random+greedy+random", "--pairs", 10], ["two players"]),
    (["add", "greedy+random"], ["is a team", "--partners"]),
    (["show", "--anchor", "random+greedy"], ["is not in ladder"]),
    (["show", "--partners", "--html", "x.html"], ["--partners", "--html"]),
])
def test_bad_partners_input_is_one_line(tmp_path, capsys, monkeypatch, args, parts):
    monkeypatch.chdir(tmp_path)
    db = tmp_path / "l.sqlite"
    cli(capsys, "--db", db, "add", "random", "greedy")
    before = matchup_pairs(db)
    code, _, err = cli(capsys, "--db", db, *args)
    assert code == 2
    one_line(err, *parts)
    assert matchup_pairs(db) == before
    con = sqlite3.connect(db)
    specs = [r[0] for r in con.execute("SELECT spec FROM players ORDER BY id")]
    assert specs == ["random", "greedy"]
    con.close()


def test_partners_needs_two_players(tmp_path, capsys):
    db = tmp_path / "l.sqlite"
    cli(capsys, "--db", db, "add", "random")
    code, _, err = cli(capsys, "--db", db, "run", "--partners", "--pairs", 10)
    assert code == 2
    one_line(err, "1 player(s)", "--partners")


# --------------------------------------------------------------------------------------------
# the figures of docs/ladder.md "Partners": python tests/test_ladder_partners.py [REPS]
# --------------------------------------------------------------------------------------------

PLAYERS4 = np.array([0.0, 60.0, 150.0, 220.0])  # a 4-player ladder and its 6 mixed teams
TEAMS4 = [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]
COMPAT4 = [40.0, 0.0, -30.0, 20.0, 0.0, -50.0]


def figures(reps: int = 2000, players: np.ndarray = PLAYERS,
            teams: list[tuple[int, int]] = TEAMS, compat: list[float] = COMPAT
            ) -> dict[str, float]:
    """Coverage of the compatibility intervals (clustered, and with pairs taken as independent)
    and the additivity test's power at ``compat`` (seed 101); the test's size and the coverage
    of the additive individual ratings under additivity (seed 102)."""
    k, nt = players.size, len(teams)
    kw = {"players": players, "teams": teams}
    rng = np.random.default_rng(101)
    hits, naive, power = np.zeros(nt), np.zeros(nt), 0
    for _ in range(reps):
        d = simulate(rng, compat, **kw)
        f = fit(d)
        t = partners(d, f)
        for n, (r, c) in enumerate(zip(t["teams"], compat)):
            cc = r["compatibility"]
            hits[n] += cc["lo"] <= c <= cc["hi"]
            x, y = d.teams[k + n]
            v = np.zeros(k + nt)
            v[k + n], v[[x, y]] = 1.0, -0.5
            h = 1.96 * math.sqrt(v @ f.cov_naive @ v)
            naive[n] += cc["value"] - h <= c <= cc["value"] + h
        power += t["additivity"]["p"] < 0.05
    rng = np.random.default_rng(102)
    ps, ind, n_ind = [], 0, 0
    for _ in range(reps):
        d = simulate(rng, [0.0] * nt, **kw)
        t = partners(d, fit(d, anchor="p0"))
        ps.append(t["additivity"]["p"])
        for r in t["individual"]:
            if not r["anchor"]:
                ind += r["lo"] <= players[int(r["player"][1:])] <= r["hi"]
                n_ind += 1
    p = np.array(ps)
    out = {"coverage": hits.sum() / (nt * reps), "naive": naive.sum() / (nt * reps),
           "power": power / reps, "size_05": float((p < 0.05).mean()),
           "size_01": float((p < 0.01).mean()), "individual": ind / n_ind}
    out.update({f"coverage_{n}": float(hits[n] / reps) for n in range(nt)})
    return out


def test_four_players_quick():
    # the 4-player design (6 mixed teams, 45 pairings) at 150 ladders: coverage of the 900
    # compatibility intervals (binomial sd 0.007, more as one ladder's teams correlate) and
    # the additivity test's size (sd 0.018)
    got = figures(150, PLAYERS4, TEAMS4, COMPAT4)
    assert abs(got["coverage"] - 0.95) <= 0.03, got
    assert got["size_05"] <= 0.10 and abs(got["individual"] - 0.95) <= 0.03, got


if __name__ == "__main__":
    import sys

    reps = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    for label, args in (("3 players", ()), ("4 players", (PLAYERS4, TEAMS4, COMPAT4))):
        print(label)
        for key, value in figures(reps, *args).items():
            print(f"  {key}: {value:.4f}")
