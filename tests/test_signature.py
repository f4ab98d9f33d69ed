"""Determinism: a committed hash of the first 200 records of seed 2026 (cf. Stockfish's bench
signature). Any change to dealing, calling, play order, scoring, the random numbers or the
record format changes it; if the change is intended, update the hash and say why in the commit.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from sim.loops.loop import COLUMN_NAMES
from sim.loops.runner import iter_records, make_seats, summaries
from sim.record import dumps
from sim.rules import Rules
from strategies.registry import make

SIGNATURE = "5d4ac9250e09cc9d69cc60fcf156c968581790e4b17e4d15e171e94641feb9e6"


def test_first_200_records_signature():
    h = hashlib.sha256()
    for rec in iter_records(2026, 0, 200, make_seats("random")):
        h.update((dumps(rec) + "\n").encode())
    assert h.hexdigest() == SIGNATURE


def test_records_do_not_depend_on_chunking():
    seats = make_seats("random")
    whole = list(iter_records(99, 0, 30, seats))
    parts = list(iter_records(99, 0, 11, seats)) + list(iter_records(99, 11, 19, seats))
    assert whole == parts


# --- behaviour pins of the players ------------------------------------------------------------
# sha256 of the JSONL records of a few seeded deals per configuration (computed on main when
# they were added). A change of any player's behaviour, of the engine, of the random streams
# or of the record format changes them; a speed refactor must leave every one unchanged. If a
# change is meant, update the hash and say why in the commit.
MIXED = ["greedy", "pimc(samples=8, rollout=random)", "ismcts(iterations=100, rollout=egreedy)",
         "random(show_prob=0.5)"]
PLAYER_SIGNATURES = {
    # name: (seats, seed, deals, rules, sha256 of the records)
    "greedy": ("greedy", 2026, 300, None,
               "fc80be79137f202e0b4b6482b6a011e6ecbe7d61e5dd046a342e0df5f198f6cb"),
    "pimc": ("pimc(samples=8)", 2026, 30, None,
             "98896de1982fba42ead85a56d420038fc8e0bb0a9c2afcf8996949888da80291"),
    "ismcts": ("ismcts(iterations=100)", 2026, 20, None,
               "ddbbeef7ae4ab1fc98e61c103f438446591c4963167318fea858069561de3928"),
    "expert": (["expert(samples=4, call_samples=3, giveback_k=4, min_cards=18, infer=weighted)",
                "greedy"], 2026, 6, None,
               "d1b4bd88a45161f25263d6c4a658c311f2aa555b7b0b2fd5bbf48ad119930e0e"),
    # the shipped weights (strategies/weights/learned.npz) and the default greedy_bias
    "learned": (["learned", "greedy"], 2026, 60, None,
                "a125385d38b07acb0dacd6692f887a90aeba0478e15c88e4968722bfcd803fb5"),
    "mixed": (MIXED, 2026, 30, None,
              "94082d8a132a1ba5fb732c503be1dc8a869415349cf13c82d8a211e41e63974a"),
    "greedy_random_variants": ("greedy(show_at=0.3, contest_at=15),random(show_prob=0.8)", 5,
                               200, Rules(kou_di_single=3, kou_di_pair=8, settle_step=10,
                                          max_redeals=2),
                               "6f653055afb8446c974d3eeb2026b9023a1dacfb994ba14b3114ddea3b6a026c"),
}


def _records_hash(records, drop=()):
    h = hashlib.sha256()
    for rec in records:
        if drop:
            rec = {k: v for k, v in rec.items() if k not in drop}
        h.update((dumps(rec) + "\n").encode())
    return h.hexdigest()


@pytest.mark.parametrize("name", list(PLAYER_SIGNATURES))
def test_player_records_signature(name):
    seats, seed, n, rules, want = PLAYER_SIGNATURES[name]
    assert _records_hash(iter_records(seed, 0, n, make_seats(seats), rules)) == want


# Every compiled player run from its observation alone (the Python tier) plays the same deals.
@pytest.mark.parametrize("name", [
    "greedy", "pimc", "ismcts", "expert", "learned", "greedy_random_variants",
    "mixed",  # search with random rollouts beside a random seat: no stream counter leaks (R9)
])
def test_python_tier_gives_the_pinned_records(name):
    seats, seed, n, rules, want = PLAYER_SIGNATURES[name]
    if name == "greedy":
        n = 100  # the Python tier is slower; the first 100 deals have their own pin
        want = GREEDY_100
    records = iter_records(seed, 0, n, make_seats(seats), rules, python_tier=True)
    assert _records_hash(records) == want


GREEDY_100 = "14bdd94fa6fed3afb12e5b7f33402946ee742f85ff3c84ceb1f3b0ceb227e813"


def test_python_bot_records_signature():
    # the README's example bot, pure Python through the step API (sim.Deal), against greedy
    # ("seats" is left out: the spec is spelt differently once the plug-in is registered)
    seats = [make("strategies.example:Cautious(greed=5)"), make("greedy")] * 2
    got = _records_hash(iter_records(31, 0, 40, seats), drop=("seats",))
    assert got == "874dfcdc5636cf0a7c7ec0b6e1cda0e12b2ff7366e5705734d97c2fa3947d2b8"


# sha256 of the summary rows (sim.loops.loop.COLUMN_NAMES, by name) of the compiled bulk loop
SUMMARY_SIGNATURES = {
    "random": ("random", 7, 5000,
               "a275ed7b7d6ec34581c56c1c1686b13428f7cae26936a8436491e8573e7195cd"),
    "greedy_random": ("greedy,random(show_prob=0.6)", 8, 2000,
                      "65c992413293790f6ecdcb0fd54c6e80ab2067f982ae4e438fe3269361002c8a"),
}


@pytest.mark.parametrize("name", list(SUMMARY_SIGNATURES))
def test_summary_rows_signature(name):
    seats, seed, n, want = SUMMARY_SIGNATURES[name]
    rows = summaries(seed, 0, n, make_seats(seats))
    assert rows.shape[0] == n
    cols = [COLUMN_NAMES.index(c) for c in PINNED_COLUMNS]
    table = np.ascontiguousarray(rows[:, cols], dtype="<i8")
    assert hashlib.sha256(table.tobytes()).hexdigest() == want


PINNED_COLUMNS = ("redeals", "void", "caller", "trump", "attacker_points", "multiplier",
                  "attacker_score", "settle0", "settle1", "settle2", "settle3", "calls",
                  "overrides", "show_rank", "caller_trumps", "decisions", "tricks",
                  "last_winner", "first_show_round")
