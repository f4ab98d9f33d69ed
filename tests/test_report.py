"""Reports: tables checked against the per-deal table, plots, HTML, re-rendering."""

from __future__ import annotations

import json
import math
import os
import warnings

import numpy as np
import pytest

from sim import level
from sim.analysis.report import markdown
from sim.analysis.stats import Moments, stratified_ci
from sim.analysis.summary import derive
from sim.analysis.tables import tables
from sim.cli import main
from sim.titles import ranges
from sim.tournament.config import from_dict
from sim.tournament.results import load_deals, load_state
from sim.tournament.run import run_tournament

EAGER, PLAIN = "random(show_prob=0.9)", "random"


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def run(tmp_path, name="r", plots=True, **raw):
    cfg = from_dict({"name": name, "players": [EAGER, PLAIN], "deals": 400, "seed": 3,
                     "run": {"chunk_size": 100, "progress": False},
                     "output": {"dir": str(tmp_path / name), "plots": plots}, **raw})
    return cfg, run_tournament(cfg)


@pytest.fixture(scope="module")
def done(tmp_path_factory):
    return run(tmp_path_factory.mktemp("rep"))


def test_figures_match_the_per_deal_table(done):
    cfg, s = done
    t = load_deals(cfg.out)
    a = np.where(t["orientation"] == 0, t["settle0"], t["settle1"]).astype(np.int64)
    x = (a[0::2] + a[1::2]) / 2
    m = Moments().add(x)
    res = s["matchups"][0]["result"]
    assert (res["mean"], res["lo"], res["hi"]) == pytest.approx((m.mean, *m.ci()))
    played = t["void"] == 0
    score = t["attacker_score"][played]
    sc = s["matchups"][0]["score"]
    assert sc["mean"] == pytest.approx(score.mean())
    for q in (5, 25, 50, 75, 95):  # scores are multiples of 5: the bins make them exact
        assert sc[f"p{q}"] == np.percentile(score, q, method="inverted_cdf")
    assert sc["p_ge_120"] == pytest.approx(np.mean(score >= 120))
    assert sc["p_le_80"] == pytest.approx(np.mean(score <= 80))
    assert sum(c for _, c in sc["bins"]) == score.size
    assert all(e % 5 == 0 for e, _ in sc["bins"])
    mult = t["multiplier"][played]
    assert s["matchups"][0]["multiplier"]["4"] == pytest.approx(np.mean(mult == 4))
    assert s["matchups"][0]["void_rate"] == pytest.approx(np.mean(t["void"] != 0))
    a_att = played & (t["attacker_team"] == t["orientation"])
    side = s["matchups"][0]["sides"]["A"]
    assert side["attack_rate"] == pytest.approx(a_att.sum() / played.sum())
    assert side["attacking_settle"]["mean"] == pytest.approx(a[a_att].mean())
    assert side["attacking_score"]["mean"] == pytest.approx(t["attacker_score"][a_att].mean())
    assert side["trump_len_mean"] == pytest.approx(t["caller_trumps"][a_att].mean())
    assert side["show_rank_mean"] == pytest.approx(t["show_rank"][a_att].mean())
    # skill value (R25): 1600 plus every deal's settlement of one of A's players
    st = s["strategies"][0]
    assert st["skill"] == 1600 + a.sum() and st["title"] == level(1600 + int(a.sum()))
    # ... and per standard match of 100 deals, which does not grow with the run's length
    assert st["skill_change_per_match"]["mean"] == pytest.approx(100 * a.mean())
    # its SD is √100 × one deal's (ddof=1), and the titles' chances sum to 1
    assert st["skill_change_per_match"]["sd"] == pytest.approx(10 * a.std(ddof=1))
    assert sum(t["p"] for t in st["titles_after_match"]) == pytest.approx(1, abs=1e-3)
    # and they are what resampling 100 of these deals gives (here by simulation)
    sums = np.random.default_rng(5).choice(a, size=(20000, 100)).sum(axis=1)
    got = {t["title"]: t["p"] for t in st["titles_after_match"]}
    for title, lo_, hi_ in ranges():
        want = np.mean((1600 + sums >= lo_) & (1600 + sums < hi_))
        assert got.get(title, 0.0) == pytest.approx(want, abs=0.015), title


def test_files_and_self_contained_html(done):
    cfg, _s = done
    out = cfg.out
    for f in ("summary.json", "summary.md", "report.html", "config.json", "config.toml",
              "plots/scores_m0.png", "plots/settlement.png"):
        assert os.path.getsize(os.path.join(out, f)) > 0, f
    # a head-to-head's ratings would be ± half its Elo A−B: one Elo figure, in the Matchups
    assert not os.path.exists(os.path.join(out, "plots", "ratings.png"))
    for f in os.listdir(os.path.join(out, "plots")):
        with open(os.path.join(out, "plots", f), "rb") as fh:
            assert fh.read(8) == b"\x89PNG\r\n\x1a\n"
    page = read(os.path.join(out, "report.html"))
    assert page.count("data:image/png;base64,") == 2
    assert "http://" not in page and "https://" not in page
    # no script but the page's own check for a font with the R25 titles' characters
    from sim.analysis.report import _NOCJK_JS

    assert page.count("<script") == 1 and f"<script>{_NOCJK_JS}</script>" in page
    assert "<table>" in page and "Attacker score" in page
    # strict JSON: no NaN or Infinity tokens
    json.loads(read(os.path.join(out, "summary.json")),
               parse_constant=lambda c: pytest.fail(f"non-standard JSON constant {c}"))


def test_markdown_tables(done):
    _, s = done
    md = markdown(s)
    for title in ("## Matchups", "## Players", "## Attacker score",
                  "## Attacker-score distribution (5-point bins)",
                  "## Last trick, voids and redeals", "## Attacking, defending and calling"):
        assert title in md
    assert "[95% CI]" in md and "P(score ≥ 120)" in md
    assert "skill change per 100 deals (R25)" in md and "title after one match of 100" in md
    assert "本科生 (undergraduate)" in md
    assert "SPRT" not in md and "Cross table" not in md
    assert "Ratings" not in md and "Bradley" not in md  # one Elo: the Matchups table's


def test_report_command_rerenders_from_stored_results(tmp_path, capsys):
    cfg, _s = run(tmp_path, "again")
    md = read(os.path.join(cfg.out, "summary.md"))
    js = json.loads(read(os.path.join(cfg.out, "summary.json")))
    for f in ("summary.md", "summary.json", "report.html"):
        os.remove(os.path.join(cfg.out, f))
    for f in os.listdir(os.path.join(cfg.out, "plots")):
        os.remove(os.path.join(cfg.out, "plots", f))
    capsys.readouterr()
    assert main(["report", cfg.out]) == 0
    assert "## Matchups" in capsys.readouterr().out
    assert read(os.path.join(cfg.out, "summary.md")) == md
    assert json.loads(read(os.path.join(cfg.out, "summary.json"))) == js
    assert len(os.listdir(os.path.join(cfg.out, "plots"))) == 2
    assert os.path.exists(os.path.join(cfg.out, "report.html"))
    assert main(["report", str(tmp_path / "nothing")]) == 2


def test_incomplete_run_is_reported_as_such(tmp_path):
    cfg = from_dict({"name": "inc", "players": [EAGER, PLAIN], "deals": 300,
                     "run": {"chunk_size": 100, "progress": False},
                     "output": {"dir": str(tmp_path / "inc"), "plots": False}})
    run_tournament(cfg, stop_after=1)
    s = derive(load_state(cfg.out))
    assert not s["complete"] and s["matchups"][0]["result"]["n"] == 100
    assert "incomplete run" in markdown(s) and "1 of 3 chunks" in markdown(s)


def test_round_robin_cross_table_and_ratings(tmp_path):
    players = ["random(show_prob=1.0)", PLAIN, "random(show_prob=0.05)"]
    cfg, s = run(tmp_path, "rr", plots=True, format="round-robin", players=players,
                 deals=1500, run={"chunk_size": 1500, "progress": False})
    names = [t[0] for t in tables(s)]
    assert "Cross table" in names and "Ratings (Bradley-Terry)" in names
    elo = [r["elo"] for r in s["ratings"]]
    assert elo[0] > elo[1] > elo[2]  # calling more often wins more against random play
    assert sum(elo) == pytest.approx(0.0, abs=1e-6)
    assert all(r["lo"] < r["elo"] < r["hi"] for r in s["ratings"])
    for i in range(3):
        for j in range(3):
            c, d = s["cross"][i][j], s["cross"][j][i]
            assert (c is None) == (i == j)
            if c:
                assert c["mean"] == pytest.approx(-d["mean"])
    # a player's overall result averages its matchups, weighted by pairs
    m01, m02 = s["matchups"][0]["result"], s["matchups"][1]["result"]
    assert s["strategies"][0]["result"]["mean"] == pytest.approx((m01["mean"] + m02["mean"]) / 2)
    assert os.path.getsize(os.path.join(cfg.out, "plots", "scores_m2.png")) > 0
    # ... and its interval treats the matchups as strata (centred on each matchup's mean, not
    # the merged values', which would add the spread between matchups as noise) clustered by
    # deal (issue 19 item 1.2): its results against different opponents on one deal are
    # correlated, so the variance of the mean is that of the per-deal sums over its matchups,
    # D var(S_d) / N^2; the normal critical value at these sizes
    t = load_deals(cfg.out)
    own = np.where(t["orientation"] == 0, t["settle0"], t["settle1"]).astype(np.int64)
    x = (own[0::2] + own[1::2]) / 2  # A's pair results, (matchup, deal) in run order
    mu, deal = t["matchup"][0::2], t["deal"][0::2]
    x_m = {m: x[mu == m][np.argsort(deal[mu == m])] for m in range(3)}
    s_d = x_m[0] + x_m[1]  # player 0 is A in matchups 0 (0-1) and 1 (0-2)
    n = 2 * s_d.size
    half = 1.959963984540054 * math.sqrt(s_d.size * s_d.var(ddof=1)) / n
    r0 = s["strategies"][0]["result"]
    assert (r0["lo"], r0["hi"]) == pytest.approx((r0["mean"] - half, r0["mean"] + half))
    assert s["clustered_deals"] == 1500
    tallies = [Moments.from_dict(t["pairs"]) for t in s["tallies"]]
    _, lo, hi = stratified_ci(tallies[:2])  # as if the matchups played different deals
    assert np.corrcoef(x_m[0], x_m[1])[0, 1] > 0.1 and r0["hi"] - r0["lo"] > 1.05 * (hi - lo)
    # the ratings' variance counts drawn pairs as results of score 1/2 and the correlation
    # of the matchups' scores on shared deals
    from sim.analysis.stats import WDL, bradley_terry, bt_cluster_meat, elo_from_bt

    wins, draws = np.zeros((3, 3)), np.zeros((3, 3))
    for m, t in zip(s["matchups"], s["tallies"], strict=True):
        w = WDL.from_dict(t["wdl"])
        wins[m["a"], m["b"]], wins[m["b"], m["a"]] = w.wins + w.draws / 2, w.losses + w.draws / 2
        draws[m["a"], m["b"]] = draws[m["b"], m["a"]] = w.draws
    assert draws.sum() > 0
    y = np.stack([np.sign(x_m[m]) / 2 + 0.5 for m in range(3)], axis=1)
    pairs = [(m["a"], m["b"]) for m in s["matchups"]]
    extra = bt_cluster_meat(pairs, 3, np.cov(y, rowvar=False), [1500] * 3)
    expected = elo_from_bt(*bradley_terry(wins, prior="firth", draws=draws, extra_meat=extra))
    got = [v for r in s["ratings"] for v in (r["elo"], r["lo"], r["hi"])]
    assert got == pytest.approx([v for e in expected for v in e])
    unclustered = elo_from_bt(*bradley_terry(wins, draws=draws))
    plain = elo_from_bt(*bradley_terry(wins))
    assert all(e[2] - e[1] < p[2] - p[1] for e, p in zip(unclustered, plain, strict=True))
    # the fit of the ratings is reported (three matchups, two free ratings: 1 df)
    fit = s["ratings_fit"]
    assert fit["df"] == 1 and 0.0 <= fit["p"] <= 1.0 and fit["chi2"] >= 0.0
    assert len(fit["worst"]) == 3 and fit["misfit"] == (fit["p"] < 0.01)
    note = next(t for t in tables(s) if t[0].startswith("Ratings"))[3]
    assert "ratings depend on the field" in note and "chi-square" in note
    assert ("WARNING" in note) == fit["misfit"] and "clustered by deal (1,500" in note


def test_oracle_players_are_marked(tmp_path, monkeypatch):
    (tmp_path / "orplug.py").write_text(
        "from strategies.random import RandomStrategy\n"
        "class Peek(RandomStrategy):\n    name = 'peek'\n    oracle = True\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    cfg, s = run(tmp_path, "or", plots=False, players=["peek", PLAIN], plugins=["orplug"],
                 deals=20, run={"chunk_size": 20, "progress": False})
    assert s["oracle"] == [True, False] and s["strategies"][0]["oracle"]
    md = read(os.path.join(cfg.out, "summary.md"))
    assert "peek [oracle]" in md and "are oracles" in md


def test_nan_safe_formatting(tmp_path):
    # a side that never attacks has no attacking figures: shown as "–", stored as null
    cfg, s = run(tmp_path, "never", plots=True, players=["random(show_prob=0.0)", PLAIN],
                 deals=30, run={"chunk_size": 30, "progress": False})
    side = s["matchups"][0]["sides"]["A"]
    assert side["attacks"] == 0 and math.isnan(side["attacking_settle"]["mean"])
    stored = json.loads(read(os.path.join(cfg.out, "summary.json")))
    assert stored["matchups"][0]["sides"]["A"]["attacking_settle"]["mean"] is None
    assert "| – |" in markdown(s)


def test_sprt_verdict_is_true_first_and_warns_of_bias(tmp_path):
    # the verdict is a preference between mu0 and mu1 at the error rates, not "mean ≥ mu1"
    # (a stopped run's estimate is often below mu1); it heads summary.md and report.html
    cfg, s = run(tmp_path, "sprt", plots=False, deals=20000,
                 players=["random(show_prob=1.0)", "random(show_prob=0.05)"],
                 sprt={"mu0": 0.0, "mu1": 0.2}, run={"chunk_size": 50, "progress": False})
    assert s["sprt"]["state"] == "H1"
    md = read(os.path.join(cfg.out, "summary.md"))
    verdict = "H1 accepted: the data favour mean = 0.2 over mean = 0 at α=0.05, β=0.05"
    assert verdict in md and "≥" not in md.split("## Matchups")[0]
    assert md.splitlines()[2] == f"- **SPRT: {verdict}** (mean settlement per deal per " \
        "player of A; per-pair results)"
    assert "biased" in md.split("## Matchups")[0]  # the bias after early stopping, up front
    page = read(os.path.join(cfg.out, "report.html"))
    assert page.index(verdict) < page.index("<table") and "biased" in page
    h0 = dict(s["sprt"], state="H0")
    assert "H0 accepted: the data favour mean = 0 over mean = 0.2" in markdown(dict(s, sprt=h0))


def capture_figures(monkeypatch):
    """Every figure the report saves, kept after saving."""
    from sim.analysis import report

    figs = []
    real = report._png
    monkeypatch.setattr(report, "_png", lambda fig: (figs.append(fig), real(fig))[1])
    return figs


def test_dollar_signs_in_labels_print_as_typed_and_no_raw_mathtext(done, monkeypatch):
    # a spec or plug-in name with "$" prints as typed (not as a formula, which may not parse),
    # and matplotlib's own log-scale tick labels are formulas, not raw "$\mathdefault{...}$"
    # (turning mathtext off for the names broke them)
    from plot_text import formulas, raw_mathtext, shown, texts

    from sim.analysis.report import render_plots

    _, s = done
    odd = ["pay$x^$me", r"a$b\$c"]
    s = dict(s, players=odd, matchups=[dict(m, label=" vs ".join(odd)) for m in s["matchups"]])
    figs = capture_figures(monkeypatch)
    images = render_plots(s)
    assert all(png[:8] == b"\x89PNG\r\n\x1a\n" for png in images.values())
    assert len(figs) == len(images)
    for fig in figs:
        assert raw_mathtext(fig) == []
        printed = " | ".join(x for t in texts(fig) if (x := shown(t)) is not None)
        for name in odd:
            assert name in printed
    settlement = figs[list(images).index("settlement.png")]
    assert settlement.axes[0].get_yscale() == "log"
    assert any("10^{" in f for f in formulas(settlement))  # the log ticks: drawn as formulas


def test_titles_in_plots_are_readable_without_a_cjk_font(done, monkeypatch):
    # R25 titles (and other CJK text) in a plot: with no CJK font installed, the English gloss
    # (other characters as code points) instead of boxes; with one, the characters themselves
    # in that font
    from plot_text import missing_glyphs, shown, texts

    from sim.analysis import report

    _, s = done
    odd = ["本科生 bot", "博士导师 中"]
    s = dict(s, players=odd, matchups=[dict(m, label=" vs ".join(odd)) for m in s["matchups"]])
    figs = capture_figures(monkeypatch)
    report.render_plots(s)  # with this machine's fonts, whichever they are: no box
    for fig in figs:
        assert missing_glyphs(fig) == []
    figs.clear()
    monkeypatch.setattr(report, "cjk_font", lambda: None)  # as on a machine without one
    report.render_plots(s)
    for fig in figs:
        assert missing_glyphs(fig) == []
    printed = " | ".join(x for t in texts(figs[0]) if (x := shown(t)) is not None)
    assert "undergraduate bot" in printed and "doctoral supervisor U+4E2D" in printed
    assert report._text("本科生") == "undergraduate" and report._text("a$b") == r"a\$b"
    monkeypatch.setattr(report, "cjk_font", lambda: "Some CJK Sans")
    assert report._text("本科生 bot") == "本科生 bot"  # drawn in that font (_png adds it)
    figs.clear()
    with warnings.catch_warnings():  # (that font does not exist: glyphs missing)
        warnings.simplefilter("ignore")
        report.plot_settlement(s)
    labels = figs[0].axes[0].get_legend().get_texts()
    assert labels[0].get_text() == "本科生 bot"
    assert labels[0].get_fontfamily()[-1] == "Some CJK Sans"


def test_settlement_plot_draws_discrete_values_as_bars(done, monkeypatch):
    # settlements are a few multiples of the R24 unit: bars at the values, one series per
    # player side by side, not a line zig-zagging between them
    from sim.analysis import report

    _, s = done
    figs = capture_figures(monkeypatch)
    report.plot_settlement(s)
    ax = figs[0].axes[0]
    assert len(ax.lines) == 0 and len(ax.containers) == len(s["players"])
    t = report.tally_of(s["tallies"][0])
    for c, side in zip(ax.containers, ("A", "B")):
        h = t[f"{side}.settle"]
        centres = sorted(p.get_x() + p.get_width() / 2 for p in c)
        values = h.edges[np.flatnonzero(h.counts)]
        assert len(centres) == len(values)
        assert np.allclose(np.round(centres), values, atol=1)  # at the value, shifted < 1
        assert sum(p.get_height() for p in c) == pytest.approx(1.0)
    spans = sorted((p.get_x(), p.get_x() + p.get_width()) for c in ax.containers for p in c)
    assert all(a1 <= b0 + 1e-9 for (_, a1), (b0, _) in zip(spans, spans[1:]))  # no overlap


def test_plots_name_matchups_put_sides_side_by_side_and_rate_in_elo(done, monkeypatch):
    from sim.analysis import report

    _, s = done
    figs = []
    real = report._png
    monkeypatch.setattr(report, "_png", lambda fig: (figs.append(fig), real(fig))[1])
    report.plot_scores(s, 0)
    ax = figs[0].axes[0]
    label = s["matchups"][0]["label"]
    assert label in ax.get_title() and "m0" not in ax.get_title()
    a, b = ax.containers  # one bar series per attacking side
    spans = [[(p.get_x(), p.get_x() + p.get_width()) for p in c] for c in (a, b)]
    for (a0, a1), (b0, b1) in zip(*spans):
        assert a1 <= b0  # side by side, never on top of each other
    for c in (a, b):  # each side's shares of the deals it attacked
        assert sum(p.get_height() for p in c) == pytest.approx(1.0)
    # a head-to-head's ratings are Elo too (not a mean settlement): +d/2 and -d/2
    assert s["ratings"] is not None
    e = [r["elo"] for r in s["ratings"]]
    assert e[0] == pytest.approx(-e[1])
    assert e[0] - e[1] == pytest.approx(s["matchups"][0]["result"]["elo"], abs=5)
    report.plot_ratings(s)
    assert "Elo" in figs[1].axes[0].get_xlabel()
    md = markdown(s)
    assert f"| score | {label} |" in md and "m0" not in md


def test_long_tables_are_folded_in_html(done):
    from sim.analysis.report import FOLD_ROWS, to_html

    _, s = done
    page = to_html(s, {})
    long = [t for t in tables(s) if len(t[2]) > FOLD_ROWS]
    assert long and page.count("<details>") == len(long)
    assert page.count("<table>") == len(tables(s))


@pytest.mark.parametrize("seed", [3, 4])
def test_equal_players_get_title_chances_not_a_coin_flip_title(tmp_path, seed):
    """R25: start_skill 1600 is exactly the 本科生 threshold, so two equal players used to get
    本科生 and 大专生 by the sign of their noise, swapping between seeds; now each row shows
    the chance of each title after one 100-deal match: about even, the same for both."""
    cfg = from_dict({"name": "eq", "players": ["random", "random(show_prob=0.2501)"],
                     "deals": 2000, "duplicate": False, "seed": seed, "run": {"progress": False},
                     "output": {"dir": str(tmp_path / "eq"), "plots": False}})
    s = run_tournament(cfg)
    for st in s["strategies"]:
        p = {t["title"]: t["p"] for t in st["titles_after_match"]}
        assert set(p) >= {"本科生", "大专生"}
        assert 0.3 < p["本科生"] < 0.7 and 0.3 < p["大专生"] < 0.7
        assert 15 < st["skill_change_per_match"]["sd"] < 200  # a match's spread is shown
    rows = next(t for t in tables(s) if t[0] == "Players")[2]
    for row in rows:
        assert "本科生 (undergraduate)" in row[-1] and "大专生 (junior-college student)" in row[-1]
        assert "%" in row[-1]


# --- the report at a glance ----------------------------------------------------------------
def with_result(s, **r):
    m = s["matchups"][0]
    return dict(s, matchups=[dict(m, result=dict(m["result"], **r))])


def test_verdict_comes_first_in_one_line(done, tmp_path, capsys):
    from sim.analysis.summary import verdict

    cfg, s = done
    a, b = EAGER, PLAIN
    beats = with_result(s, n=400, mean=4.553, lo=4.529, hi=4.577, win=0.994, loss=0.0014)
    assert verdict(beats) == (f"{a} beats {b} by 4.55 points per deal [4.53, 4.58], winning "
                              f"99.4% of duplicate pairs")
    loses = with_result(s, n=400, mean=-0.0213, lo=-0.0251, hi=-0.0174, win=0.2, loss=0.3)
    assert verdict(loses) == (f"{b} beats {a} by 0.021 points per deal [0.017, 0.025], "
                              f"winning 30.0% of duplicate pairs")
    tie = with_result(s, n=400, mean=0.01, lo=-0.05, hi=0.07, win=0.3, loss=0.29)
    assert verdict(tie) == (f"no significant difference between {a} and {b}: {a} +0.01 points "
                            f"per deal [-0.05, +0.07], winning 30.0% and losing 29.0% of "
                            f"duplicate pairs")
    # first in summary.md and report.html (bold), and the last word of the terminal output
    line = verdict(s)
    md = read(os.path.join(cfg.out, "summary.md"))
    assert md.splitlines()[2] == f"- **{line}**"
    page = read(os.path.join(cfg.out, "report.html"))
    assert page.index(f"<strong>{line}</strong>") < page.index("<table")
    capsys.readouterr()
    assert main(["tournament", "--out", cfg.out, "--no-progress", "--force",
                 os.path.join(cfg.out, "config.toml")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[2] == f"- **{line}**" and out[-2] == line
    # ... and the last line says where the per-deal table is: deals/ (it said chunks/)
    assert "deals/: per-deal table" in out[-1] and "chunks/" not in out[-1]


def test_elo_is_readable_at_the_extremes():
    from sim.analysis.summary import elo_ci

    inf = math.inf
    assert elo_ci(963.2, 934.0, 998.4) == "+963 [+934, +998]"
    assert elo_ci(inf, 812.3, inf) == "> +812"  # every pair won: a one-sided bound
    assert elo_ci(-inf, -inf, -812.3) == "< -812"
    assert elo_ci(inf, inf, inf) == "all won" and elo_ci(-inf, -inf, -inf) == "all lost"
    assert elo_ci(950.0, 900.0, inf) == "> +900"
    assert elo_ci(-0.4, -12.0, 11.0) == "+0 [-12, +11]"  # never "-0"
    assert elo_ci(math.nan, math.nan, math.nan) == "–"


def test_no_inf_when_every_pair_is_won(done):
    _, s = done
    won = with_result(s, win=1.0, draw=0.0, loss=0.0, elo=math.inf, elo_lo=812.0,
                      elo_hi=math.inf)
    md = markdown(won)
    assert "inf" not in md and "| > +812 |" in md


def test_round_robin_at_a_glance(tmp_path):
    # ranked players, crosstable columns named (not indexes), both Elo figures explained
    players = [PLAIN, "random(show_prob=0.05)", "random(show_prob=1.0)"]
    cfg, s = run(tmp_path, "glance", plots=False, format="round-robin", players=players,
                 deals=600, run={"chunk_size": 600, "progress": False})
    from sim.analysis.summary import verdict

    best = sorted(s["strategies"], key=lambda x: -x["result"]["mean"])
    names = [x["spec"] for x in best]
    assert names[0] == "random(show_prob=1.0)" and names[-1] == "random(show_prob=0.05)"
    line = verdict(s)
    assert line.startswith("ranking by mean settlement per deal per player: 1. "
                           "random(show_prob=1.0) +")
    assert [line.index(f"{k}. {n} ") for k, n in enumerate(names, 1)] == sorted(
        line.index(f"{k}. {n} ") for k, n in enumerate(names, 1))
    t = {title: (header, rows, note) for title, header, rows, note in tables(s)}
    assert [r[0] for r in t["Players"][1]] == names
    header, rows, _ = t["Cross table"]
    assert header == ["row vs column", *names] and [r[0] for r in rows] == names
    order = [x["index"] for x in best]
    for r, i in zip(rows, order):  # each cell is the row player's result against the column's
        for cell, j in zip(r[1:], order):
            c = s["cross"][i][j]
            assert cell == "·" if i == j else cell.startswith(f"{c['mean']:+.3f} ±")
    assert "Ratings table" in t["Matchups"][2]
    assert "Matchups table" in t["Ratings (Bradley-Terry)"][2]
    assert read(os.path.join(cfg.out, "summary.md")).splitlines()[2] == f"- **{line}**"


def test_gauntlet_verdict_names_each_opponent(tmp_path):
    from sim.analysis.summary import verdict

    players = ["random(show_prob=1.0)", "random(show_prob=0.02)", EAGER]
    _, s = run(tmp_path, "gl", plots=False, format="gauntlet", players=players, deals=300,
               run={"chunk_size": 300, "progress": False})
    line = verdict(s)
    assert line.startswith(f"{players[0]} against each: ")
    clauses = line.split(": ", 1)[1].split("; ")
    assert len(clauses) == 2 and players[1] in clauses[0] and players[2] in clauses[1]
    m = s["matchups"][0]
    tie = dict(s, matchups=[dict(m, result=dict(m["result"], mean=-0.001, lo=-0.07, hi=0.07)),
                            s["matchups"][1]])
    assert (f"no significant difference with {players[1]}: +0.00 [-0.07, +0.07]"
            in verdict(tie))  # never "-0.00"


def test_round_robin_score_plots_in_a_grid(done):
    from sim.analysis.report import to_html

    _, s = done
    fake = {f"scores_m{i}.png": b"png" for i in range(10)}
    page = to_html(s, {**fake, "settlement.png": b"png", "ratings.png": b"png"})
    grid = page[page.index("<div class='grid'>"):]
    grid = grid[:grid.index("</div></div>") + 12]
    assert grid.count("<img") == 10 and "settlement.png" not in grid
    assert ".grid{display:grid" in page
