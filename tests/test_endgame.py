"""``expert(endgame=K)``: the expert solves its sampled worlds exactly once every hand holds at
most K cards (``strategies.endgame``, docs/solve.md "Search players").

It changes only the endgame: before it the plays equal the plain expert's, card for card; in
it at least some decisions differ; a solved world's values equal ``sim.solve``'s on the same
deal; the scratch it uses fits the player's; the compiled tier and the Python tier (from an
observation, which holds only what the seat knows, R9) agree, so it never reads the true hands.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

import sim
from sim.core import state as S
from sim.errors import ShuangkouError
from sim.loops.runner import iter_records
from sim.solve import Solver
from strategies.endgame import ENDGAME_WORDS, MAX_ENDGAME, endgame_begin, endgame_world
from strategies.expert import BUF_END
from strategies.kinds import INT_SCRATCH
from strategies.registry import make
from strategies.search import R_TREE

SPEC = "expert(samples=16,call_samples=4,endgame=6,endgame_worlds=6)"
PLAIN = "expert(samples=16,call_samples=4)"


def _records(spec: str, n: int = 6, python_tier: bool = False) -> list[dict]:
    return list(iter_records(77, 0, n, [make(spec) for _ in range(4)],
                             python_tier=python_tier))


def _tricks(rec: dict) -> list[list[list[str]]]:
    return [t["plays"] for t in rec.get("tricks", [])]


def _endgame_changes(a: list[dict], b: list[dict], k: int) -> int:
    """How many deals' first trick with at most ``k`` cards per hand differs between the
    records ``a`` and ``b``; every trick before it must be the same."""
    differs = 0
    for ra, rb in zip(a, b):
        left = 27
        for x, y in zip(_tricks(ra), _tricks(rb)):
            if left <= k:
                differs += x != y
                break
            assert x == y, f"deal {ra['deal']}: a play before the endgame changed"
            left -= len(x[0])
    return differs


def test_the_scratch_fits() -> None:
    assert BUF_END + ENDGAME_WORDS <= INT_SCRATCH
    assert R_TREE + ENDGAME_WORDS <= INT_SCRATCH


def test_pimc_endgame_changes_only_the_endgame() -> None:
    a = _records("pimc(samples=8,endgame=5,endgame_worlds=4)", 4)
    b = _records("pimc(samples=8)", 4)
    assert _endgame_changes(a, b, 5) >= 1, "pimc(endgame=5) changed no endgame play in 4 deals"


def test_only_the_endgame_changes() -> None:
    assert _endgame_changes(_records(SPEC), _records(PLAIN), 6) >= 1, \
        "endgame=6 changed no endgame play in 6 deals"


def test_tiers_agree() -> None:
    """The Python tier decides from the observation (the seat's knowledge only, R9): equal
    records mean the compiled endgame read nothing more."""
    assert _records(SPEC, 2) == _records(SPEC, 2, python_tier=True)


def _endgame_position() -> sim.Deal:
    rng = random.Random(0)
    for deal in range(20):
        d = sim.Deal(seed=3, deal=deal)
        while not d.done:
            t = d.to_act
            if t.kind == "play" and int(d.engine[0][S.S_POS]) == 0 \
                    and int(d.engine[0][S.S_LEFT]) <= 5:
                return d
            d.apply_code(rng.choice(d.legal_codes()))
    pytest.fail("no deal of 20 reached 5 cards per hand")


def test_a_solved_world_is_the_solver_s_value() -> None:
    d = _endgame_position()
    st, u, rules = (a.copy() for a in d.engine)
    seat = int(st[S.S_TO_ACT])
    buf = np.zeros(ENDGAME_WORDS + 16, dtype=np.int64)
    sums = np.zeros(128, dtype=np.float64)
    endgame_begin(buf, 16)
    n = endgame_world(st, u, rules, seat, buf, 16, sums, True)
    sol = Solver().solve(d)
    assert n == len(sol.choices)
    attacker = seat in sol.attackers
    for i, c in enumerate(sol.choices):
        want = c.settlement + 0.005 * (c.score if attacker else -c.score)
        assert sums[i] == pytest.approx(want)


@pytest.mark.parametrize("bad", [f"expert(endgame={MAX_ENDGAME + 1})", "expert(endgame=-1)",
                                 "expert(endgame_worlds=0)"])
def test_bounds(bad: str) -> None:
    with pytest.raises(ShuangkouError, match="endgame"):
        make(bad)
