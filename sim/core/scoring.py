"""Settlement (R24) of an attacker score, as a kernel and as ``sim.settle``; the R25 titles
are re-exported from ``sim.titles``. The attacker score itself (R22 points, R23 last-trick
multiplier) is counted by the engine as tricks end (``sim.core.engine``)."""

from __future__ import annotations

import numpy as np

from sim.core.jit import kernel
from sim.errors import RulesError
from sim.rules import R_CAP, R_STEP, R_UNIT, Rules, as_rules
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
    rules = as_rules(rules)
    # R22, R23: 200 points in all, the last trick's counted at most max(multipliers) times
    hi = 200 * max(1, rules.kou_di_single, rules.kou_di_pair)
    if isinstance(attacker_score, bool) or not isinstance(attacker_score, (int, np.integer)) \
            or not 0 <= attacker_score <= hi:
        raise RulesError(f"attacker score {attacker_score!r} must be an integer in 0 … {hi} "
                         f"(R22, R23: 200 points, the last trick's at most "
                         f"×{hi // 200} under these rules)")
    a = int(settle_kernel(int(attacker_score), rules.array()))
    return a, -a
