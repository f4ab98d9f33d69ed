"""The report's tables, from ``sim.analysis.summary.derive``'s output, in the report's order:
one step per table (``None`` when the summary has no figures for it), each a ``Table``
(title, header, rows, note) that ``sim.analysis.report`` writes as markdown and HTML. The
partners format's tables (partner matrix, compatibility heat map, individual strengths,
tests) and the bots' faults come first when a run has them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sim.analysis.stats.swings import SWINGS_SHOWN
from sim.analysis.summary import (
    MATCH_DEALS,
    PERCENTILES,
    SPRT_BIAS_NOTE,
    Table,
    divergence_text,
    elo_ci,
    fmt_value,
    mean_ci_text,
    multipliers,
    nan_low,
    pct,
    player_name,
    ranked,
    sprt_verdict,
    title_odds,
)


def tables(summary: Mapping[str, Any]) -> list[Table]:
    """The report's tables, from ``derive``'s output, in the report's order; a table this
    summary has no figures for is left out."""
    steps = (_partner_matrix_table, _compatibility_table, _individual_table,
             _partner_tests_table, _faults_table,
             _matchups_table, _players_table, _cross_table, _ratings_table, _score_table,
             _score_bins_table, _last_trick_table, _sides_table, _swings_table, _sprt_table)
    return [t for t in (step(summary) for step in steps) if t is not None]


# --- partners (format "partners", issue 36) ------------------------------------------------
PARTNER_NOTE = ("team strength: its points per deal per player against the mean team of the "
                "run, on the same duplicate deals (intervals 95%, clustered by deal)")
ZERO_MARK = " (0 inside)"  # a compatibility cell whose interval holds 0


def _est(e: Mapping[str, float]) -> str:
    v, lo, hi = (fmt_value(e[k], "{:+.2f}") for k in ("value", "lo", "hi"))
    return f"{v} [{lo}, {hi}]"


def compatibility_significant(p: Mapping[str, Any]) -> bool:
    """Whether some pair's compatibility interval excludes 0."""
    return any(c["lo"] > 0 or c["hi"] < 0 for c in p["compatibility"])


def _partner_matrix_table(summary: Mapping[str, Any]) -> Table | None:
    p = summary.get("partners")
    if not p:
        return None
    players = p["players"]
    cell = {}
    for t in p["teams"]:
        a, b = t["players"]
        cell[a, b] = cell[b, a] = _est(t)
    rows = [[a] + [cell.get((a, b), "·") for b in players] for a in players]
    return ("Partner matrix", ["player \\ partner", *players], rows,
            PARTNER_NOTE + "; the diagonal is the player partnered with itself; · not played")


def _compatibility_table(summary: Mapping[str, Any]) -> Table | None:
    p = summary.get("partners")
    if not p or not p["compatibility"]:
        return None
    players = p["players"]
    cell = {}
    for c in p["compatibility"]:
        a, b = c["players"]
        zero = c["lo"] <= 0 <= c["hi"]
        cell[a, b] = cell[b, a] = _est(c) + (ZERO_MARK if zero else "")
    rows = [[a] + [cell.get((a, b), "·") for b in players] for a in players]
    note = ("compatibility: the mixed team's strength minus the mean of its members' mirror "
            "teams (points per deal per player); > 0: they play better together than alone "
            f"would predict; {ZERO_MARK.strip()} marks an interval that holds 0")
    if compatibility_significant(p):
        note += (". Partner effects are real here: a player's strength depends on its "
                 "partner, so its individual strength below is an average over the partners "
                 "played, on this scale (points per deal), not a property of the player alone")
    return ("Partner compatibility", ["player \\ partner", *players], rows, note)


def _individual_table(summary: Mapping[str, Any]) -> Table | None:
    p = summary.get("partners")
    if not p:
        return None
    rejected = p["additivity"]["p"] < 0.05
    ind = sorted(p["individual"], key=lambda e: -e["value"])
    mm = {m["player"]: m for m in p.get("mirror_vs_mixed", [])}
    rows = [[str(k), e["player"], _est(e),
             _est(mm[e["player"]]["mirror"]) if e["player"] in mm else "–",
             _est(mm[e["player"]]["mixed"]) if e["player"] in mm else "–"]
            for k, e in enumerate(ind, 1)]
    title = "Individual strengths" + (" (additivity rejected)" if rejected else "")
    return (title, ["rank", "player", "individual strength [95% CI]",
                    "mirror team", "mixed teams (mean)"], rows,
            "individual strength: u with team ≈ u(a) + u(b), the additive model fitted to "
            "the team strengths (mean 0); mirror and mixed: the player's own team and the "
            "mean of its mixed teams (the Hanabi tracks' reading)"
            + ("; additivity is rejected (table below): read the ranking as an average over "
               "the partners played" if rejected else ""))


def _partner_tests_table(summary: Mapping[str, Any]) -> Table | None:
    p = summary.get("partners")
    if not p:
        return None
    rows = [[name, f"{t['stat']:.2f}", str(t["df"]), f"{t['p']:.3g}", what]
            for name, t, what in (
                ("additivity", p["additivity"], "every compatibility is 0"),
                ("lack of fit", p["fit"], "the pairings' means follow the team strengths"))]
    worst = "; ".join(f"{'+'.join(w['teams'][0])} vs {'+'.join(w['teams'][1])} "
                      f"(z {w['z']:+.1f})" for w in p["fit"].get("worst", []))
    return ("Partner tests", ["test", "statistic", "df", "p", "null hypothesis"], rows,
            "Wald tests with the covariance clustered by deal (F reference)"
            + (f"; pairings furthest from the team model: {worst}" if worst else ""))


def _faults_table(summary: Mapping[str, Any]) -> Table | None:
    faults = summary.get("faults")
    if not faults:
        return None
    kinds = ("start", "crash", "timeout", "illegal", "protocol", "forfeits", "fallbacks")
    rows = [[name] + [str(c.get(k, 0)) for k in kinds] for name, c in sorted(faults.items())]
    return ("Bot faults", ["bot", *kinds], rows,
            "faults of bots in other processes (docs/bots.md), counted once each; forfeits: "
            "deals its side lost by forfeit (R24, as if the other side took every point); "
            "fallbacks: deals a built-in finished for it")


def _unit(summary: Mapping[str, Any]) -> str:
    """What a result counts: duplicate pairs or single deals."""
    return "pairs" if summary["config"]["duplicate"] else "deals"


def _pname(summary: Mapping[str, Any], i: int) -> str:
    return player_name(summary["players"][i], summary["oracle"][i])


def _matchups_table(summary: Mapping[str, Any]) -> Table:
    cfg = summary["config"]
    unit = _unit(summary)
    rows = []
    for m in summary["matchups"]:
        r = m["result"]
        rows.append([_pname(summary, m["a"]), _pname(summary, m["b"]), str(r["n"]), mean_ci_text(r),
                     pct(r["win"]), pct(r["draw"]), pct(r["loss"]),
                     elo_ci(r["elo"], r["elo_lo"], r["elo_hi"])])
    return ("Matchups", ["A", "B", unit, "A's mean settlement per deal per player [95% CI]",
                         "A wins", "draws", "A loses", "Elo A−B [95% CI]"], rows,
            f"W/D/L and Elo count {unit} by the sign of A's result; Elo's interval is "
            f"the score (Wilson) one of the {unit[:-1]} score (win 1, draw 1/2), one-sided "
            f"(> or <) when A won or lost every one"
            + (" (each deal played twice, teams swapped)" if cfg["duplicate"] else "")
            + ("; Elo A−B is the Elo difference this matchup's score implies on its own "
               "(the Ratings table fits one Elo per player to all matchups at once)"
               if len(summary["matchups"]) > 1 else ""))


def _players_table(summary: Mapping[str, Any]) -> Table:
    rules = summary["config"]["rules"]
    rows = []
    for s in ranked(summary["strategies"]):  # best first
        r = s["result"]
        per = s["skill_change_per_match"]
        rows.append([player_name(s), str(r["n"]), mean_ci_text(r), pct(r["win"]), pct(r["draw"]),
                     pct(r["loss"]), pct(s.get("attack_rate")),
                     fmt_value(s.get("attacking_settle", {}).get("mean")),
                     fmt_value(s.get("defending_settle", {}).get("mean")),
                     (f"{fmt_value(per['mean'], '{:+.1f}')} [{fmt_value(per['lo'], '{:+.1f}')}, "
                      f"{fmt_value(per['hi'], '{:+.1f}')}]"), fmt_value(per.get("sd"), "{:.1f}"),
                     title_odds(s["titles_after_match"])])
    return ("Players", ["player", _unit(summary), "mean settlement per deal per player [95% CI]",
                        "wins", "draws", "losses", "attacks", "settlement attacking",
                        "settlement defending",
                        f"skill change per {MATCH_DEALS} deals (R25) [95% CI]",
                        "SD of one match's change",
                        f"title after one match of {MATCH_DEALS} deals (chance)"], rows,
            (f"skill change: expected change of a player's skill value over a match of "
             f"{MATCH_DEALS} deals (its mean settlement per deal times {MATCH_DEALS}), with "
             f"the SD of one match's change (√{MATCH_DEALS} × the SD of one deal's "
             f"settlement); title: the chance of each R25 title after one match from "
             f"{rules['start_skill']}, from the distribution of a sum of {MATCH_DEALS} of "
             f"this run's deals drawn independently (computed exactly, as resampling blocks "
             f"of {MATCH_DEALS} deals would estimate it; titles under 0.5% left out), so two "
             f"equal players both read about even odds either side of "
             f"{rules['start_skill']}; the value accumulated over the whole run is in "
             f"summary.json, 'skill'; "
             f"attacks: share of non-void deals its team attacked; ranked by mean "
             f"settlement"))


def _cross_table(summary: Mapping[str, Any]) -> Table | None:
    if not summary.get("cross"):
        return None
    cross = summary["cross"]
    order = [st["index"] for st in ranked(summary["strategies"])]  # as the Players table
    header = ["row vs column"] + [_pname(summary, j) for j in order]
    rows = []
    for i in order:
        cells = [_pname(summary, i)]
        for j in order:
            c = cross[i][j]
            cells.append("·" if c is None else f"{fmt_value(c['mean'])} ±"
                         f"{fmt_value((c['hi'] - c['lo']) / 2 if c['n'] > 1 else None, '{:.3f}')}"
                         + ("*" if c.get("holm") else ""))
        rows.append(cells)
    return ("Cross table", header, rows,
            ("row player's mean settlement per deal per player against the column "
             "player, ± half the 95% CI of that cell alone: the intervals are not "
             "family-wise (over many cells some miss their true mean); * marks a mean "
             "that differs from 0 at a 5% family-wise error rate (Holm)"))


def _ratings_table(summary: Mapping[str, Any]) -> Table | None:
    if not (summary.get("ratings") and len(summary["matchups"]) > 1):
        # (a head-to-head's ratings would only be ± half the Matchups table's Elo A−B: one
        # Elo figure per page)
        return None
    rows = []
    order = sorted(range(len(summary["players"])),
                   key=lambda i: -nan_low(summary["ratings"][i]["elo"]))
    for i in order:
        e = summary["ratings"][i]
        rows.append([_pname(summary, i), elo_ci(e["elo"], e["lo"], e["hi"])])
    fit = summary.get("ratings_fit")
    gof = ""
    if fit and fit.get("df"):
        gof = (f"; fit: chi-square {fit['chi2']:.1f} on {fit['df']} df, "
               f"p = {fit['p']:.2g}")
        if fit.get("warning"):
            gof += f". WARNING: {fit['warning']}"
    clustered = (f"; intervals clustered by deal ({summary['clustered_deals']:,} shared "
                 f"deals)" if summary.get("clustered_deals") else "")
    return ("Ratings (Bradley-Terry)", ["player", "Elo [95% CI]"], rows,
            (f"one Elo per player fitted to every matchup at once, on {_unit(summary)} won (a "
             f"drawn one is half a win each), centred on the field's mean: ratings "
             f"depend on the field; the difference of two players' ratings is the "
             f"model's Elo A−B, which differs from the Matchups table's where the model "
             f"fits that matchup badly{clustered}{gof}"))


def _score_table(summary: Mapping[str, Any]) -> Table:
    rows = []
    for m in summary["matchups"]:
        s = m["score"]
        rows.append([m["label"], str(s["n"]), fmt_value(s["mean"], "{:.1f}")]
                    + [fmt_value(s[f"p{q}"], "{:.0f}") for q in PERCENTILES]
                    + [pct(s["p_ge_120"]), pct(s["p_le_80"])])
    return ("Attacker score", ["matchup", "deals", "mean"]
            + [f"p{q}" for q in PERCENTILES] + ["P(score ≥ 120)", "P(score ≤ 80)"], rows,
            "non-void deals; percentiles are exact for scores (multiples of 5)")


def _score_bins_table(summary: Mapping[str, Any]) -> Table | None:
    edges = sorted({e for m in summary["matchups"] for e, _ in m["score"]["bins"]})
    if not edges:
        return None
    rows = []
    for e in edges:
        cells = [f"{e}–{e + 4}"]
        for m in summary["matchups"]:
            c = dict(map(tuple, m["score"]["bins"])).get(e, 0)
            cells.append(pct(c / m["score"]["n"]) if m["score"]["n"] else "–")
        rows.append(cells)
    return ("Attacker-score distribution (5-point bins)",
            ["score"] + [m["label"] for m in summary["matchups"]], rows,
            "share of each matchup's non-void deals")


def _last_trick_table(summary: Mapping[str, Any]) -> Table:
    rules = summary["config"]["rules"]
    mults = [str(v) for v in multipliers(rules)]
    rows = []
    for m in summary["matchups"]:
        rows.append([m["label"], str(m["games"]), pct(m["void_rate"]), pct(m["redeal_rate"]),
                     fmt_value(m["redeals_mean"], "{:.3f}")]
                    + [pct(m["multiplier"][v]) for v in mults])
    return ("Last trick, voids and redeals", ["matchup", "deals played", "void",
                                              "redealt", "mean redeals"]
            + [f"multiplier {v}" for v in mults], rows,
            (f"multiplier shares over non-void deals (R23: {rules['kou_di_single']} single, "
             f"{rules['kou_di_pair']} pair, 1 when the defenders take the last trick)"))


def _sides_table(summary: Mapping[str, Any]) -> Table:
    mults = [str(v) for v in multipliers(summary["config"]["rules"])]
    rows = []
    for m in summary["matchups"]:
        for s, pi in (("A", m["a"]), ("B", m["b"])):
            d = m["sides"][s]
            rows.append([m["label"], f"{s}: {_pname(summary, pi)}", pct(d["attack_rate"]),
                         fmt_value(d["attacking_settle"]["mean"]),
                         fmt_value(d["defending_settle"]["mean"]),
                         fmt_value(d["attacking_score"]["mean"], "{:.1f}"),
                         pct(d["attacking_score"]["p_ge_120"]),
                         pct(d["attacking_multiplier"][mults[-1]]),
                         d["show_rank_median"] or "–", fmt_value(d["show_rank_mean"], "{:.2f}"),
                         fmt_value(d["trump_len_mean"], "{:.1f}"),
                         fmt_value(d["overrides_mean"], "{:.2f}")])
    return ("Attacking, defending and calling", [
        "matchup", "side", "calls (attacks)", "settlement attacking", "settlement defending",
        "score attacking", "P(≥120) attacking", f"×{mults[-1]} last trick",
        "median shown rank", "mean rank index (A=0…K=12)", "caller's trumps",
        "overrides per called deal"], rows,
        ("calling statistics are over the deals the side called (its team attacked, R10); "
         "caller's trumps: trumps in the caller's hand at the first lead"))


def _swings_table(summary: Mapping[str, Any]) -> Table | None:
    if not summary.get("swings"):
        return None
    names = {m["index"]: m["label"] for m in summary["matchups"]}
    rows = [[names[w["matchup"]], str(w["rank"]), str(w["deal"]), f"{w['x']:+g}",
             f"{w['a0']:+d}", f"{w['a1']:+d}",
             divergence_text(w["divergence"]) if "divergence" in w else "–"]
            for w in summary["swings"]]
    return ("Swing deals", ["matchup", "#", "deal", "A's result per deal per player",
                            "A at table 1 (seats 0 & 2)", "A at table 2 (seats 1 & 3)",
                            "first divergence"], rows,
            f"the {SWINGS_SHOWN} duplicate pairs of each matchup whose two tables ended "
            f"furthest from a tie: |A's result| largest, the lower deal first on equal "
            f"swings; A at table N: A's per-player settlement there; first divergence: "
            f"the first decision where the same seat, holding the same cards, chose "
            f"differently (calling: a show, pass or give-back). Both tables: in "
            f"report.html the deal links to them in the deal viewer (swings.html), or "
            f"shuangkou "
            f"replay RESULTS --swings N; their analysis: shuangkou analyze RESULTS "
            f"--swings N")


def _sprt_table(summary: Mapping[str, Any]) -> Table | None:
    sp = summary.get("sprt")
    if not sp:
        return None
    return ("SPRT", ["verdict", "LLR", "bounds (accept H0, accept H1)", "pairs",
                     "alpha", "beta"],
            [[sprt_verdict(sp), fmt_value(sp["llr"], "{:+.3f}"),
              f"[{sp['bounds'][0]:+.3f}, {sp['bounds'][1]:+.3f}]",
              str(sp["decided_at"] if sp["decided_at"] is not None
                  else sp["moments"]["n"]), str(sp["alpha"]), str(sp["beta"])]],
            ("on A's per-pair result; looks after every pair in deal order and stops "
             "at the first pair past a bound; the figures cover exactly the pairs up "
             "to it. " + SPRT_BIAS_NOTE))
