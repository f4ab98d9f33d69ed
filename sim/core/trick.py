"""Trick evaluation (compiled): the winner of a trick (R20, R21) and its points (R3)."""

from __future__ import annotations

import numpy as np

from sim.cards import GROUP, POINTS_KEY, STRENGTH, TRUMP_GROUP
from sim.core.jit import kernel


@kernel
def beats(a, b, pair, lead_group, best_s, best_trump):
    """Whether play ``(a, b)`` (``b = -1``: a single) beats the play now winning, which has
    strength ``best_s`` and is a trump if ``best_trump``, in a trick led in ``lead_group``
    (a pair lead if ``pair``): R20, R21. Ties: the earlier play stays (R20). (``trick_winner``
    is the same test as one strength comparison per play.)"""
    g = GROUP[a]
    trump = g == TRUMP_GROUP
    # R21: two cards that are not a pair never win a pair lead; a side card wins only in the
    # led group and only while no trump is winning
    can = ((not pair) | (b == a)) & (trump | ((g == lead_group) & (not best_trump)))
    return can & ((STRENGTH[a] > best_s) | (trump & (not best_trump)))  # R20: trump beats side


@kernel
def trick_winner(t, ia, ib, n):
    """Position (0 = the lead) of the winning play among the first ``n`` plays (key layout).

    Parameters
    ----------
    t : int64 array
        Holds the first card of play ``i`` at ``t[ia + i]`` and its second card (or -1 for a
        single) at ``t[ib + i]`` (offsets, so the state array is read in place).
    """
    # ``beats`` as one comparison: every trump is stronger than every side card (STRENGTH),
    # so a play that can win (a pair if the lead is one, R21; of the led group or a trump,
    # R20) beats the best so far exactly when its strength is higher; one that cannot win
    # counts -1. Without branches: which play wins is unpredictable, and a mispredicted
    # branch per play cost whole random deals several per cent.
    a = t[ia]
    lead_group = GROUP[a]
    pair = t[ib] >= 0
    best = 0
    best_s = STRENGTH[a]
    for i in range(1, n):
        a = t[ia + i]
        g = GROUP[a]
        can = ((not pair) | (t[ib + i] == a)) & ((g == TRUMP_GROUP) | (g == lead_group))
        s = (STRENGTH[a] + 1) * np.int64(can) - 1
        up = s > best_s
        best = i if up else best
        best_s = s if up else best_s
    return best


@kernel
def trick_points(t, ia, ib, n, trump):
    """Face points (R3) of the first ``n`` plays (laid out as for ``trick_winner``)."""
    p = 0
    for i in range(n):
        p += POINTS_KEY[trump, t[ia + i]]
        if t[ib + i] >= 0:
            p += POINTS_KEY[trump, t[ib + i]]
    return p


def _beating_keys(k: int) -> int:
    beats_py = getattr(beats, "py_func", beats)
    g = int(GROUP[k])
    return sum(1 << j for j in range(len(GROUP))
               if beats_py(j, -1, False, g, int(STRENGTH[k]), g == TRUMP_GROUP))


# ``beats`` as masks, for players that decide on the legal set's masks: BEATING[k] holds the
# keys whose single beats a winning single ``k`` (a trump, or of the led group) and whose pair
# beats a winning pair of ``k`` (R20, R21); two different cards never beat a pair (R21)
BEATING = np.array([_beating_keys(k) for k in range(len(GROUP))], dtype=np.uint64)


# inlined into ``sim.core.engine.apply_play`` (once a trick, in every deal)
trick_winner_inline = kernel(inline="always")(getattr(trick_winner, "py_func", trick_winner))
