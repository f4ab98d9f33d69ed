"""``format = "partners"`` (issue 36): every team of two against every other on shared
duplicate deals; the design checked; summary.json's "partners" and the report's tables."""

from __future__ import annotations

import json

import pytest

from sim.cli import main
from sim.errors import ConfigError
from sim.loops.runner import make_seats
from sim.tournament.config import from_dict
from sim.tournament.run import run_tournament
from strategies.registry import team_members, team_pair

PLAYERS = ["greedy", "random", "random(show_prob=0.2)"]


def test_team_members_and_seats():
    assert team_members("greedy+random") == ["greedy", "random"]
    assert team_members("pimc(samples=1e+3)+greedy") == ["pimc(samples=1e+3)", "greedy"]
    assert team_members("greedy") == ["greedy"]
    assert team_pair("greedy") == ["greedy", "greedy"]
    assert team_pair("pimc(samples=1e+3)+greedy") == ["pimc(samples=1e+3)", "greedy"]
    with pytest.raises(ConfigError):
        team_members("a+b+c")
    assert [s.spec() for s in make_seats(["greedy+random", "random"])] == \
        ["greedy", "random", "random", "random"]


def test_config_builds_every_team_and_round_trips():
    cfg = from_dict({"format": "partners", "players": PLAYERS, "deals": 10})
    assert len(cfg.players) == 6 and len(cfg.matchups()) == 15
    assert cfg.players[:3] == tuple(f"{p}+{p}" for p in PLAYERS)
    d = cfg.to_dict()
    assert d["players"] == PLAYERS and "teams" not in d
    assert from_dict(d) == cfg and from_dict(d, imports=False).players == cfg.players
    chosen = from_dict({"format": "partners", "players": PLAYERS[:2],
                        "teams": ["greedy+random", "greedy", "random+random"]})
    assert chosen.players == ("greedy+greedy", "random+random", "greedy+random")
    # a "+" inside a spec's parentheses is the spec's own: a one-player entry is its mirror team
    spec = "random(show_prob=1e+0)"
    mirror = from_dict({"format": "partners", "players": ["greedy", spec],
                        "teams": [spec, f"greedy+{spec}", "greedy"]})
    assert mirror.players[0] == "greedy+greedy" and len(mirror.players) == 3


@pytest.mark.parametrize("raw, words", [
    ({"players": ["greedy"]}, "at least 2 players"),
    ({"players": ["greedy", "greedy"]}, "list each player once"),
    ({"players": PLAYERS, "teams": ["greedy+random", "greedy+random(show_prob=0.2)"]},
     "2 different partners"),
    ({"players": PLAYERS[:2], "teams": ["greedy+pimc", "greedy"]}, "not a player"),
    ({"players": PLAYERS[:2], "duplicate": False}, "duplicate"),
])
def test_bad_designs_are_one_clear_error(raw, words):
    with pytest.raises(ConfigError, match=words):
        from_dict({"format": "partners", **raw})


def test_teams_need_the_partners_format(tmp_path, capsys):
    cfg = tmp_path / "t.toml"
    cfg.write_text('players = ["greedy", "random"]\nteams = ["greedy+random"]\n')
    assert main(["tournament", str(cfg), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and 'needs format = "partners"' in err[0]


def test_partners_run_reports_teams_compatibility_and_individuals(tmp_path):
    cfg = from_dict({"name": "p", "format": "partners", "players": PLAYERS, "deals": 150,
                     "seed": 11, "run": {"chunk_size": 75, "progress": False},
                     "output": {"dir": str(tmp_path / "out"), "plots": False}})
    summary = run_tournament(cfg)
    p = summary["partners"]
    assert p["players"] == PLAYERS and p["deals"] == 150
    assert len(p["teams"]) == 6 and len(p["compatibility"]) == 3
    assert abs(sum(t["value"] for t in p["teams"])) < 1e-9  # against the mean team
    for e in p["teams"] + p["compatibility"] + p["individual"]:
        assert e["lo"] <= e["value"] <= e["hi"]
    assert p["additivity"]["df"] == 3 and p["fit"]["df"] == 15 - 5
    # the team strengths reproduce each pairing's direct margin where the model fits
    s = {tuple(t["players"]): t["value"] for t in p["teams"]}
    assert s[("greedy", "greedy")] > s[("random", "random")]
    # the files: summary.json holds it; summary.md and report.html show the tables
    on_disk = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert on_disk["partners"]["compatibility"] == p["compatibility"]
    md = (tmp_path / "out" / "summary.md").read_text()
    for title in ("Partner matrix", "Partner compatibility", "Individual strengths",
                  "Partner tests"):
        assert f"## {title}" in md
    assert "class='heat" in (tmp_path / "out" / "report.html").read_text()
    # a resumed (already complete) run renders the same partners figures again
    again = run_tournament(cfg, resume=True)
    assert again["partners"] == json.loads(json.dumps(p))
