"""Swing deals of a duplicate tournament (docs/tournaments.md "Swing deals"): the selection is
the same for any --jobs, chunk size and --resume; the replayed records are the run's records;
replay/analyze RESULTS --swings N; bad input in one line."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

from sim.analysis.stats import SWINGS_KEPT, Swings
from sim.cli import main
from sim.cli.options import SWINGS_MAX
from sim.tournament import swings
from sim.tournament.config import from_dict
from sim.tournament.results import load_deals, read_config
from sim.tournament.run import run_tournament

PLAYERS = ["greedy", "random"]


def config(tmp_path, name, **kw):
    raw = {"name": name, "players": PLAYERS, "deals": 120, "seed": 5,
           "run": {"chunk_size": 120, "progress": False},
           "output": {"dir": str(tmp_path / name), "plots": False}}
    for k, v in kw.items():
        if "." in k:
            t, _, leaf = k.partition(".")
            raw.setdefault(t, {})[leaf] = v
        else:
            raw[k] = v
    return from_dict(raw, source="test")


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """A finished greedy-vs-random duplicate run keeping every record."""
    tmp = tmp_path_factory.mktemp("swings")
    cfg = config(tmp, "ref", **{"output.records": 120})
    summary = run_tournament(cfg)
    return cfg, summary


def brute_force(run_dir, n):
    """The top ``n`` swings from the per-deal table: (swing desc, deal asc)."""
    t = load_deals(run_dir)
    order = np.lexsort((t["orientation"], t["deal"]))
    t = {k: v[order] for k, v in t.items()}
    a = np.where(t["orientation"] == 0, t["settle0"], t["settle1"]).astype(np.int64)
    pairs = sorted(((-abs(int(p) + int(q)), int(d)) for d, p, q in
                    zip(t["deal"][0::2], a[0::2], a[1::2])))
    return [d for _, d in pairs[:n]]


def test_swings_accumulator_is_a_total_order_for_any_grouping():
    rng = np.random.default_rng(3)
    deals = np.arange(1000)
    a0, a1 = rng.integers(-8, 9, 1000), rng.integers(-8, 9, 1000)  # many ties
    whole = Swings().add(deals, a0, a1)
    key = sorted(range(1000), key=lambda i: (-abs(a0[i] + a1[i]), i))[:SWINGS_KEPT]
    assert whole.deals.tolist() == key
    for cuts in ([7], [100, 350, 999], [1, 2, 3, 500]):
        parts = np.split(np.arange(1000), cuts)
        for order in (parts, parts[::-1]):
            merged = Swings()
            for p in order:
                merged += Swings().add(deals[p], a0[p], a1[p])
            assert merged.to_dict() == whole.to_dict()
    assert Swings.from_dict(json.loads(json.dumps(whole.to_dict()))).to_dict() == \
        whole.to_dict()
    rows = whole.rows()
    assert rows[0]["swing"] == abs(rows[0]["x"]) == abs(rows[0]["a0"] + rows[0]["a1"]) / 2
    assert [r["swing"] for r in rows] == sorted((r["swing"] for r in rows), reverse=True)


def test_selection_identical_for_jobs_chunk_size_and_resume(tmp_path, run):
    ref_cfg, ref = run
    assert [w["deal"] for w in ref["swings"]] == brute_force(ref_cfg.out, 3)
    assert [w["rank"] for w in ref["swings"]] == [1, 2, 3]
    kept = ref["tallies"][0]["swings"]
    assert kept["deals"] == brute_force(ref_cfg.out, SWINGS_KEPT)
    for name, kw in (("j2", {"run.jobs": 2, "run.chunk_size": 17}),
                     ("c7", {"run.chunk_size": 7})):
        s = run_tournament(config(tmp_path, name, **kw))
        assert s["swings"] == ref["swings"], name
        assert s["tallies"][0]["swings"] == kept, name
    part = config(tmp_path, "part", **{"run.chunk_size": 30})
    assert run_tournament(part, stop_after=2) is None
    s = run_tournament(part, resume=True)
    assert s["swings"] == ref["swings"] and s["tallies"][0]["swings"] == kept


def test_replayed_records_equal_the_records_of_the_run(run):
    cfg, summary = run
    recs = {}
    with open(os.path.join(cfg.out, "records.jsonl"), encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            recs[(r["deal"], r["tournament"]["orientation"])] = r
    deals = summary["tallies"][0]["swings"]["deals"]
    for d in deals[:4]:
        assert swings.pair_records(cfg, 0, d) == [recs[(d, 0)], recs[(d, 1)]]
    # swings.jsonl: the records of the shown swings, tagged with their rank
    with open(os.path.join(cfg.out, swings.SWINGS_FILE), encoding="utf-8") as f:
        kept = [json.loads(line) for line in f]
    assert len(kept) == 2 * 3
    for r in kept:
        rank = r["tournament"].pop("swing")
        assert r == recs[(r["deal"], r["tournament"]["orientation"])]
        assert deals[rank - 1] == r["deal"]


def test_divergence_is_the_first_different_choice(run):
    cfg, summary = run
    for w in summary["swings"]:
        div = w["divergence"]
        assert div is not None  # a swing is not 0: the tables played differently
        rec0, rec1 = swings.pair_records(cfg, 0, w["deal"])
        assert div["player0"] == rec0["seats"][div["seat"]] != rec1["seats"][div["seat"]]
        assert div["table0"] != div["table1"]
        if div["phase"] == "play":  # the calling was the same at both tables
            assert rec0["calls"] == rec1["calls"]
    rec0, _ = swings.pair_records(cfg, 0, summary["swings"][0]["deal"])
    assert swings.divergence(rec0, rec0) is None


def test_summary_report_and_report_command(run, capsys):
    cfg, summary = run
    md = open(os.path.join(cfg.out, "summary.md"), encoding="utf-8").read()
    assert "## Swing deals" in md and "first divergence" in md
    html = open(os.path.join(cfg.out, "report.html"), encoding="utf-8").read()
    assert "Swing deals" in html
    # each swing deal links to both its tables in the deal viewer next to the report
    for k, w in enumerate(summary["swings"]):
        assert w["view"] == f"swings.html#d={2 * k}"  # (calling: the deal's start)
        assert f"<a href='swings.html#d={2 * k}'>{w['deal']}</a>" in html
    viewer = open(os.path.join(cfg.out, "swings.html"), encoding="utf-8").read()
    assert "Swing deals of tournament ref" in viewer and "data-card" in viewer
    before = json.load(open(os.path.join(cfg.out, "summary.json"), encoding="utf-8"))["swings"]
    assert main(["report", cfg.out, "--no-plots"]) == 0
    capsys.readouterr()
    after = json.load(open(os.path.join(cfg.out, "summary.json"), encoding="utf-8"))["swings"]
    assert after == before and all("divergence" in w and "view" in w for w in after)
    html = open(os.path.join(cfg.out, "report.html"), encoding="utf-8").read()
    assert "<a href='swings.html#d=0'>" in html


def test_replay_swings_shows_both_tables_and_the_divergence(run, capsys):
    cfg, summary = run
    assert main(["replay", cfg.out, "--swings", "3"]) == 0
    out = capsys.readouterr().out
    for w in summary["swings"]:
        assert f"swing {w['rank']}: deal {w['deal']}" in out
    assert out.count("TABLE 1: greedy in seats 0 & 2") == 3
    assert out.count("TABLE 2: random in seats 0 & 2") == 3
    assert out.count("First divergence: ") == 3
    first = summary["swings"][0]["divergence"]
    assert swings.divergence_text(first) in out
    if first["phase"] == "calling":
        assert "already in the calling" in out
    # each line holds both tables: the left one's seats, then the right one's
    assert any("Seats: 0=greedy" in line and "Seats: 0=random" in line
               for line in out.splitlines())


def test_replay_swings_html(run, tmp_path, capsys):
    cfg, summary = run
    page = tmp_path / "sw.html"
    assert main(["replay", cfg.out, "--swings", "2", "--html", str(page)]) == 0
    assert "deal viewer of 4 deal(s)" in capsys.readouterr().out
    text = page.read_text(encoding="utf-8")
    assert "Swing deals of ref" in text
    data = json.loads(text.split("id='deal-data'>")[1].split("</script>")[0])
    assert [d.get("pair") for d in data["deals"]] == [1, 0, 3, 2]  # side by side


def test_sprt_run_keeps_no_swing_past_the_deciding_pair(tmp_path):
    cfg = config(tmp_path, "sprt", players=["random(show_prob=1.0)", "random(show_prob=0.05)"],
                 deals=20000, sprt={"mu0": 0.0, "mu1": 0.2}, **{"run.chunk_size": 50})
    s = run_tournament(cfg)
    n = s["sprt"]["decided_at"]
    assert s["stopped_by_sprt"] and n % 50
    kept = s["tallies"][0]["swings"]["deals"]
    assert len(kept) == SWINGS_KEPT and max(kept) < n
    assert kept == brute_force(cfg.out, SWINGS_KEPT)


def test_analyze_swings(run, tmp_path, capsys):
    cfg, summary = run
    out = tmp_path / "rows.jsonl"
    assert main(["analyze", cfg.out, "--swings", "2", "--samples", "8", "--seat", "0",
                 "--json", str(out)]) == 0
    text = capsys.readouterr().out
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    deals = [w["deal"] for w in summary["swings"][:2]]
    assert sorted({r["deal"] for r in rows}) == sorted(deals)
    assert {r["record"] for r in rows} == {0, 1, 2, 3}  # both tables of each deal
    assert {r["seat"] for r in rows} == {0}
    assert "orientation 0" in text and "orientation 1" in text


def _one_line_exit_2(argv, words, capsys):
    try:
        code = main(argv)
    except SystemExit as e:  # argparse's own checks
        code = e.code
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert words in err and "\n" not in err, err


@pytest.mark.parametrize("n", ["0", str(SWINGS_MAX + 1), "x"])
def test_n_out_of_range(run, capsys, n):
    for cmd in ("replay", "analyze"):
        _one_line_exit_2([cmd, run[0].out, "--swings", n], "--swings", capsys)


def test_bad_folders(tmp_path, run, capsys):
    assert SWINGS_MAX == SWINGS_KEPT
    _one_line_exit_2(["replay", str(tmp_path), "--swings", "2"], "no config.json", capsys)
    _one_line_exit_2(["analyze", str(tmp_path / "nope"), "--swings", "2"], "is not a folder",
                     capsys)
    part = config(tmp_path, "part", **{"run.chunk_size": 30})
    assert run_tournament(part, stop_after=1) is None
    _one_line_exit_2(["replay", part.out, "--swings", "2"], "holds no finished run", capsys)
    single = config(tmp_path, "single", deals=10, duplicate=False)
    run_tournament(single)
    _one_line_exit_2(["analyze", single.out, "--swings", "1"], "not a duplicate run", capsys)
    _one_line_exit_2(["replay", run[0].out, "--swings", "1", "--deal", "3"], "drop --deal",
                     capsys)
    assert read_config(run[0].out).duplicate


def test_divergence_in_the_play(tmp_path):
    # the two greedys call alike and differ only in when they contest a trick: the tables
    # part in the play
    cfg = config(tmp_path, "play", players=["greedy", "greedy(contest_at=100)"], deals=60,
                 **{"run.chunk_size": 60})
    s = run_tournament(cfg)
    assert s["swings"] and all(w["swing"] > 0 for w in s["swings"])
    for w in s["swings"]:
        div = w["divergence"]
        rec0, rec1 = swings.pair_records(cfg, 0, w["deal"])
        assert div["phase"] == "play" and rec0["calls"] == rec1["calls"]
        p0 = [(tr["leader"], p) for tr in rec0["tricks"] for p in tr["plays"]]
        p1 = [(tr["leader"], p) for tr in rec1["tricks"] for p in tr["plays"]]
        first = next(i for i, (x, y) in enumerate(zip(p0, p1)) if x != y)
        assert div["trick"] == first // 4 + 1
        assert div["seat"] == (p0[first][0] + first % 4) % 4
        assert div["play"] == first
        assert div["player0"] == ("greedy" if div["seat"] % 2 == 0 else "greedy(contest_at=100)")
        assert w["view"].endswith(f"&p={first + 1}")  # the viewer opens just after it


def test_a_tie_is_no_swing(run):
    from sim.tournament.chunks import tally_games

    t = load_deals(run[0].out)
    order = np.lexsort((t["orientation"], t["deal"]))
    cols = {k: v[order].copy() for k, v in t.items()}
    tie = np.zeros(cols["deal"].size // 2, dtype=bool)
    tie[::2] = True  # every other pair made a tie: A's settlement at table 2 = -(table 1)
    rows = 2 * np.flatnonzero(tie)
    cols["settle1"][rows + 1] = -cols["settle0"][rows]
    kept = tally_games(cols, True)["swings"]
    assert len(kept) == SWINGS_KEPT
    assert not set(kept.deals.tolist()) & set(cols["deal"][rows].tolist())
    cols["settle1"][1::2] = -cols["settle0"][0::2]  # all tie
    assert len(tally_games(cols, True)["swings"]) == 0


def test_scripted_steps_equal_the_replayed_steps():
    # the swing deals' decisions, played back by the scripted seat in the run's own compiled
    # loops (no new compile), are sim.Deal's replay of the record, step for step: redeals,
    # void deals, overrides and give-backs included; so are the pairs' divergences
    from sim.loops import runner
    from sim.loops.steps import _scripted_steps, decision_steps

    seen = set()
    parted = 0
    for specs in (("greedy", "random"), ("random(show_prob=0.02)", "greedy(show_at=0.2)"),
                  ("random(show_prob=1.0)", "greedy(show_at=1.0)"),
                  ("random(show_prob=0.0)", "greedy(show_at=1.0)"),
                  ("random(show_prob=0.01)", "greedy(show_at=1.0)")):
        loops = swings.run_loops(*specs)  # greedy and random: one module, the main job's
        assert loops is not None and loops is swings.run_loops("random", "greedy")
        tables = [list(runner.iter_records(11, 0, 30, runner.make_seats(list(s))))
                  for s in (specs, specs[::-1])]
        for rec in tables[0] + tables[1]:
            got = _scripted_steps(rec, loops)
            assert got is not None, (specs, rec["deal"])
            assert got == list(decision_steps(rec)), (specs, rec["deal"])
            seen.add(("redeal" if rec["redeals"] else "-", "void" if rec["void"] else "-",
                      "override" if any(c["took_from"] is not None for c in rec["calls"])
                      else "-"))
        for a, b in zip(*tables):
            div = swings.divergence(a, b, loops)
            assert div == swings.divergence(a, b)
            parted += div is not None
    assert {("redeal", "void", "-"), ("redeal", "-", "-"), ("-", "-", "override")} <= seen, seen
    assert parted > 0
    bad = dict(tables[0][0], settlement=[9, -9, 9, -9])  # not its deal's record: sim.Deal then
    assert _scripted_steps(bad, loops) is None
    assert list(decision_steps(bad, loops)) == list(decision_steps(tables[0][0]))


def test_a_finished_run_rerendered_compares_its_swings_in_its_own_loops(tmp_path, monkeypatch):
    """The same tournament command again re-renders the finished run: its swing deals are
    compared in the compiled loops the run played in (cached: nothing compiles), never through
    ``sim.Deal``'s kernels, which a second run of the main job used to compile (issue 33,
    item 4). ``shuangkou report`` on a received folder still uses ``sim.Deal``."""
    cfg = tmp_path / "again.toml"
    cfg.write_text(f'name = "again"\nplayers = ["greedy", "random"]\ndeals = 40\nseed = 3\n'
                   f'[output]\ndir = "{tmp_path / "again"}"\nplots = false\n')
    assert main(["tournament", str(cfg), "--no-progress", "--quiet"]) == 0
    seen = []
    real = swings.divergence

    def spy(rec0, rec1, loops=None):
        seen.append(loops)
        return real(rec0, rec1, loops)

    monkeypatch.setattr(swings, "divergence", spy)
    assert main(["tournament", str(cfg), "--no-progress", "--quiet"]) == 0  # re-rendered
    assert seen and all(loops is not None for loops in seen), seen
    first = len(seen)
    assert main(["report", str(tmp_path / "again"), "--no-plots"]) == 0
    assert all(loops is None for loops in seen[first:])  # a received folder: sim.Deal
