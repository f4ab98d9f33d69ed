"""The compiled loops hand strategies scratch that is not zeroed (``np.empty``: zero-filling
~10 MB per call made one-deal calls ~40x slower). That is only sound if no kernel reads scratch
it has not written: play deals with zeroed and with garbage-filled scratch, compare states."""

from __future__ import annotations

import numpy as np
import pytest

from sim.core.state import new_state
from sim.loops.loop import play_deal
from sim.loops.runner import compiled_tables, make_seats
from sim.rules import DEFAULT_RULES
from strategies.compiled import new_scratch

SPECS = ["random", "greedy", "pimc(samples=3)", "ismcts(iterations=30)",
         "oracle(samples=3)", "oracle(search=mcts, iterations=30)"]


def _garbage(scratch):
    rng = np.random.default_rng(11)
    buf, fws, uws = (a.copy() for a in scratch)
    buf[:] = rng.integers(-2**62, 2**62, buf.size)
    fws[:] = rng.standard_normal(fws.size) * 1e6
    uws[:] = rng.integers(0, 2**63, uws.size, dtype=np.uint64) * np.uint64(2) + np.uint64(1)
    return buf, fws, uws


@pytest.mark.parametrize("spec", SPECS)
def test_decisions_do_not_read_unwritten_scratch(spec):
    kinds, params = compiled_tables(make_seats([spec, "greedy", "random", "greedy"]))
    rules = DEFAULT_RULES.array()
    zeroed = new_scratch()
    dirty = _garbage(zeroed)
    for deal in range(3):
        a, b = new_state(), new_state()
        play_deal(*a, rules, np.uint64(5), np.uint64(deal), kinds, params, *zeroed)
        play_deal(*b, rules, np.uint64(5), np.uint64(deal), kinds, params, *dirty)
        assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1]), (spec, deal)
