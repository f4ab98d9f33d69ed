"""Perft-style pins of legal-move generation (tests/data/perft.jsonl, made by
tests/data/make_perft.py from the reference engine).

Fixed positions reached by replaying stored choices: at each, the compiled step API
(``sim.Deal.legal()``), the friendly ``sim.legal_plays`` and the reference engine must list
exactly the stored choices in the stored (canonical) order. Perft counts: the number of play
sequences of each length from a few trick-play positions, through ``sim.legal_plays`` and
``sim.trick_winner``, through the reference's functions, and (to depth 3-4) through
``sim.Deal`` itself. A refactor of the move generator,
the step API or the engine that changes any legal list fails here with the position named.
"""

from __future__ import annotations

import importlib.util
import json
import os
from collections import Counter

import pytest

import sim
from sim.reference import oracle as ref
from sim.rules import Rules

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
_spec = importlib.util.spec_from_file_location("make_perft",
                                               os.path.join(DATA, "make_perft.py"))
make_perft = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(make_perft)

with open(os.path.join(DATA, "perft.jsonl"), encoding="utf-8") as _f:
    LINES = [json.loads(line) for line in _f]
DEALS = [x for x in LINES if x["type"] == "positions"]
PERFT = [x for x in LINES if x["type"] == "perft"]


def _choice(kind, note):
    """A stored choice in the notation of ``Deal.legal()``: None/'Kh' or a tuple of cards."""
    return note if kind == "show" else tuple(note)


def _where(line, p):
    return (f"seed {line['seed']} deal {line['deal']} step {p['step']} "
            f"({p['category']}, seat {p['seat']})")


def test_the_file_covers_every_kind_of_decision():
    cats = Counter(p["category"] for x in DEALS for p in x["positions"])
    assert sum(cats.values()) >= 300
    need = {"show_first", "show_first_several", "show_over_other", "show_over_own",
            "giveback", "lead_no_pair", "lead_with_pair",
            "single_side_holds", "single_side_void", "single_trump_holds", "single_trump_void",
            "pair_side_R19a", "pair_side_R19b_forced", "pair_side_R19c", "pair_side_R19d",
            "pair_trump_R19a", "pair_trump_R19b_forced", "pair_trump_R19b_tie",
            "pair_trump_R19c", "pair_trump_R19d"}
    assert need <= set(cats), need - set(cats)
    assert all(cats[c] >= 5 for c in need), cats
    assert any(x["rules"].get("max_redeals") for x in DEALS)  # paths across a redeal (R11)
    for x in DEALS:
        for p in x["positions"]:
            assert p["count"] == len(p["legal"]) >= 1


@pytest.mark.parametrize("line", DEALS, ids=lambda x: f"deal{x['deal']}")
def test_step_api_lists_the_stored_choices(line):
    d = sim.Deal(line["seed"], line["deal"], Rules.from_dict(line["rules"]))
    at = {p["step"]: p for p in line["positions"]}
    for step, note in enumerate(line["path"]):
        assert not d.done, f"deal over before step {step}"
        seat, kind = d.to_act
        if step in at:
            p = at[step]
            assert (seat, kind) == (p["seat"], p["kind"]), _where(line, p)
            assert d.legal() == [_choice(kind, c) for c in p["legal"]], _where(line, p)
            assert len(d.legal_codes()) == p["count"], _where(line, p)
        d.apply(_choice(kind, note))


@pytest.mark.parametrize("engine", ["compiled", "reference"])
def test_legal_plays_function_on_the_stored_plays(engine):
    legal_plays = sim.legal_plays if engine == "compiled" else ref.legal_plays
    n = 0
    for line in DEALS:
        for p in line["positions"]:
            if p["kind"] != "play":
                continue
            got = legal_plays(p["hand"], p["trump"], p["lead"])
            assert got == [tuple(c) for c in p["legal"]], _where(line, p)
            n += 1
    assert n >= 200


class _Stop(Exception):
    pass


class _Scripted:
    """A reference player that replays a stored path and checks the choice lists on it."""

    def __init__(self, seat, line, state):
        self.seat, self.line, self.state = seat, line, state

    def choose(self, kind, choices, rng):
        step = self.state["step"]
        path = self.line["path"]
        if step == len(path):
            raise _Stop
        p = self.state["at"].get(step)
        if p is not None:
            assert (self.seat, kind) == (p["seat"], p["kind"]), _where(self.line, p)
            assert list(choices) == [_choice(kind, c) for c in p["legal"]], \
                _where(self.line, p)
            self.state["checked"] += 1
        self.state["step"] += 1
        return _choice(kind, path[step])


@pytest.mark.parametrize("line", DEALS, ids=lambda x: f"deal{x['deal']}")
def test_reference_engine_lists_the_stored_choices(line):
    state = {"step": 0, "at": {p["step"]: p for p in line["positions"]}, "checked": 0}
    players = [_Scripted(s, line, state) for s in range(4)]
    try:
        ref.play_deal(line["seed"], line["deal"], players, line["rules"])
    except _Stop:  # the path ends before the deal does
        pass
    assert state["step"] == len(line["path"])
    assert state["checked"] == len(line["positions"])


@pytest.mark.parametrize("engine", ["compiled", "reference"])
@pytest.mark.parametrize("line", PERFT, ids=lambda x: f"deal{x['deal']}-after{x['after_tricks']}")
def test_perft_counts(line, engine):
    fns = (sim.legal_plays, sim.trick_winner) if engine == "compiled" else \
        (ref.legal_plays, ref.trick_winner)
    hands = [Counter(h) for h in line["hands"]]
    got = make_perft.perft(hands, line["trump"], line["leader"], len(line["counts"]), *fns)
    assert got == line["counts"]
    assert hands == [Counter(h) for h in line["hands"]]  # the walk put every card back


def _replay(line, seq):
    d = sim.Deal(line["seed"], line["deal"])
    for note in line["path"]:
        d.apply(_choice(d.to_act.kind, note))
    for choice in seq:
        d.apply(choice)
    return d


@pytest.mark.parametrize("line", PERFT, ids=lambda x: f"deal{x['deal']}-after{x['after_tricks']}")
def test_perft_counts_through_the_step_api(line):
    # the same counts through sim.Deal: its legal(), apply() and the engine's trick end (the
    # winner leads next, R17); each node is replayed from the start of the deal, so only the
    # depths whose inner nodes are few are walked
    depth = 1
    while depth < len(line["counts"]) and 1 + sum(line["counts"][:depth]) <= 500:
        depth += 1
    assert depth >= 3
    counts = [0] * depth

    def walk(seq):
        d = _replay(line, seq)
        assert d.to_act.kind == "play"
        legal = d.legal()
        counts[len(seq)] += len(legal)
        if len(seq) + 1 < depth:
            for choice in legal:
                walk(seq + [choice])

    start = _replay(line, [])
    assert [start.hand(s) for s in range(4)] == \
        [sorted(h, key=lambda c: ref.key(c, line["trump"])) for h in line["hands"]]
    assert start.to_act == (line["leader"], "play") and not start.observation(0).trick
    walk([])
    assert counts == line["counts"][:depth]
