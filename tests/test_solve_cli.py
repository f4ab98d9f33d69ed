"""``shuangkou solve`` (sim/tools/solve.py): a recorded position solved exactly, its text and
JSON, and bad input (one line, exit code 2)."""

from __future__ import annotations

import json

import pytest

from sim.cli import main
from sim.loops.steps import decisions
from sim.record import read_records, write_records
from sim.rules import Rules
from sim.solve import Solver


@pytest.fixture(scope="module")
def record_file(tmp_path_factory) -> str:
    path = str(tmp_path_factory.mktemp("solve") / "r.jsonl")
    assert main(["play", "--seats", "greedy", "--deals", "3", "--seed", "5",
                 "--record", path]) == 0
    return path


@pytest.fixture(scope="module")
def rec(record_file) -> dict:
    return next(r for r in read_records(record_file) if not r["void"] and r["tricks"])


def _position(rec, trick, play):
    decs = [d for d in decisions(rec) if d.kind == "play" and d.trick == trick]
    return decs[play]


@pytest.mark.parametrize("play", [0, 2])
def test_json_choices_are_the_solvers(record_file, rec, capsys, play):
    trick = len(rec["tricks"]) - 2  # the third-to-last trick
    capsys.readouterr()
    assert main(["solve", record_file, "--deal", str(rec["deal"]), "--trick", str(trick),
                 "--play", str(play), "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    dec = _position(rec, trick, play)
    sol = Solver().solve((dec.st, dec.u, Rules.from_dict(rec["rules"]).array()))
    assert [(c["cards"], c["score"], c["settlement"]) for c in res["choices"]] == \
        [(c.cards, c.score, c.settlement) for c in sol.choices]
    assert (res["deal"], res["trick"], res["play"], res["seat"]) == \
        (rec["deal"], trick, play, dec.seat)
    assert len(res["choices"]) == len(dec.codes) >= 1
    # the hands at the position: the seat's own plays come from its hand
    assert [len(h) for h in res["hands"]] == res["cards_left"]
    assert len(res["trick_so_far"]) == play
    for c in res["choices"]:
        assert all(res["hands"][dec.seat].count(x) >= c["cards"].count(x) for x in c["cards"])
    assert isinstance(res["seconds"], float) and res["nodes"] >= 0
    # the best play: the highest settlement for the seat, then the best score for its side
    attacker = dec.seat in res["attackers"]
    best = [c for c in res["choices"] if c["best"]]
    assert len(best) == 1 and best[0]["cards"] == res["best"]
    assert best[0]["settlement"] == max(c["settlement"] for c in res["choices"])
    tied = [c["score"] for c in res["choices"] if c["settlement"] == best[0]["settlement"]]
    assert best[0]["score"] == (max(tied) if attacker else min(tied))
    assert (res["best_score"], res["best_settlement"]) == (best[0]["score"],
                                                           best[0]["settlement"])


def test_text_table(record_file, rec, capsys):
    trick = len(rec["tricks"]) - 2
    capsys.readouterr()
    assert main(["solve", record_file, "--deal", str(rec["deal"]), "--trick",
                 str(trick)]) == 0
    out = capsys.readouterr().out
    dec = _position(rec, trick, 0)
    assert f"start of trick {trick}: seat {dec.seat}" in out
    assert "cards left seat 0 " in out
    assert all(f"  seat {i}: " in out for i in range(4))
    assert out.count(" best\n") == 1
    assert "legal play(s); solved in" in out and "nodes" in out
    lines = out.splitlines()
    head = next(i for i, ln in enumerate(lines) if ln.split()[:3] == ["play", "score",
                                                                      "settlement"])
    table = [ln for ln in lines[head + 1:] if ln.startswith("  ")]
    assert len(table) == len(dec.codes)


def test_last_trick_score_is_the_records(record_file, rec, capsys):
    """The last trick's lead is forced to its end: the best score is the deal's final one."""
    trick = len(rec["tricks"])
    capsys.readouterr()
    assert main(["solve", record_file, "--deal", str(rec["deal"]), "--trick", str(trick),
                 "--play", "3", "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert len(res["choices"]) == 1
    seat = res["seat"]
    assert res["choices"][0]["settlement"] == rec["settlement"][seat]


@pytest.mark.parametrize("argv, words", [
    (["--deal", "7", "--trick", "3"], "deal 7 not in"),
    (["--deal", "{deal}", "--trick", "99"], "has {n} trick(s)"),
    (["--deal", "{deal}", "--trick", "0"], "--trick"),
    (["--deal", "{deal}", "--trick", "3", "--play", "4"], "--play"),
    (["--deal", "{deal}", "--trick", "3", "--play", "-1"], "--play"),
    (["--deal", "{deal}", "--trick", "2", "--max-nodes", "100"], "position too large"),
])
def test_bad_input_one_line_exit_2(record_file, rec, capsys, argv, words):
    argv = [a.format(deal=rec["deal"]) for a in argv]
    capsys.readouterr()
    try:
        code = main(["solve", record_file, *argv])
    except SystemExit as e:  # argparse's own errors (also one line, exit code 2)
        code = e.code
    assert code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("shuangkou solve: error:")
    assert words.format(n=len(rec["tricks"])) in err


def test_void_deal_and_failed_validation_and_short_trick(rec, tmp_path, capsys):
    void = dict(rec, void=True, trump=None, tricks=[], attackers=None, caller=None)
    path = str(tmp_path / "v.jsonl")
    write_records(path, [void])
    capsys.readouterr()
    assert main(["solve", path, "--deal", str(rec["deal"]), "--trick", "1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and ("does not validate" in err or "no trick play" in err)
    from sim.errors import ConfigError
    from sim.tools import solve as T

    with pytest.raises(ConfigError, match="no trick play"):  # without the validator
        T.solve_record(path, rec["deal"], 1)
    bad = dict(rec, settlement=[9, 9, 9, 9])
    path = str(tmp_path / "b.jsonl")
    write_records(path, [bad])
    assert main(["solve", path, "--deal", str(rec["deal"]), "--trick", "1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "does not validate" in err
    # an unfinished record: its trick in progress has fewer than four plays
    cur = {"leader": rec["tricks"][-1]["leader"], "plays": rec["tricks"][-1]["plays"][:2]}
    short = dict(rec, tricks=rec["tricks"][:-1], unfinished=True, current_trick=cur)
    with pytest.raises(ConfigError, match=r"--play 2: trick \d+ of deal \d+ has 2 recorded"):
        T.position(short, len(rec["tricks"]), 2)
    assert T.position(short, len(rec["tricks"]), 1).trick == len(rec["tricks"])
