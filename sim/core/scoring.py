"""Scoring: last-trick multiplier (R23), settlement (R24) and skill titles (R25)."""

from __future__ import annotations

import numpy as np

from sim.core.jit import kernel
from sim.rules import DEFAULT_RULES, R_CAP, R_STEP, R_UNIT, Rules
from sim.titles import LEVELS, level  # noqa: F401  (the R25 titles: a numpy-free table)


@kernel
def settle_kernel(score, rules):
    """Each attacker's change for attacker score ``score``; defenders get the negative (R24)."""
    d = score - 100
    step = rules[R_STEP]
    unit = rules[R_UNIT]
    if d >= step:
        return unit * (d // step)  # attackers: no cap
    if d <= -step:
        return -min(rules[R_CAP], unit * ((-d) // step))  # defenders capped
    return 0


def settle(attacker_score: int, rules: Rules | None = None) -> tuple[int, int]:
    """(each attacker's change, each defender's change) for an attacker score (R24).

    >>> settle(120), settle(85), settle(0)
    ((2, -2), (0, 0), (-10, 10))
    """
    if isinstance(attacker_score, bool) or not isinstance(attacker_score, (int, np.integer)):
        raise ValueError(f"attacker score {attacker_score!r} must be an integer")
    if attacker_score < 0:
        raise ValueError(f"attacker score {attacker_score!r} must be >= 0 (R22, R23)")
    a = int(settle_kernel(int(attacker_score), (rules or DEFAULT_RULES).array()))
    return a, -a
