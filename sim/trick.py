"""Trick evaluation (compiled): the winner of a trick (R20, R21) and its points (R3)."""

from __future__ import annotations

from sim.cards import GROUP, POINTS_KEY, STRENGTH, TRUMP_GROUP
from sim.jit import kernel


@kernel
def trick_winner(t, ia, ib, n):
    """Position (0 = the lead) of the winning play among the first ``n`` plays (key layout).

    Parameters
    ----------
    t : int64 array
        Holds the first card of play ``i`` at ``t[ia + i]`` and its second card (or -1 for a
        single) at ``t[ib + i]`` (offsets, so the state array is read in place).
    """
    a = t[ia]
    lead_group = GROUP[a]
    pair = t[ib] >= 0
    best = 0
    best_s = STRENGTH[a]
    best_trump = lead_group == TRUMP_GROUP
    for i in range(1, n):
        a = t[ia + i]
        if pair and t[ib + i] != a:
            continue  # R21: two cards that are not a pair never win
        g = GROUP[a]
        s = STRENGTH[a]
        if g == TRUMP_GROUP:
            if not best_trump or s > best_s:  # R20/R21: trump beats side; stronger wins
                best, best_s, best_trump = i, s, True
        elif g == lead_group and not best_trump and s > best_s:  # ties: earlier stays (R20)
            best, best_s = i, s
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


# inlined into ``sim.engine.apply_play`` (once a trick, in every deal)
trick_winner_inline = kernel(inline="always")(getattr(trick_winner, "py_func", trick_winner))
