"""Legal choices (compiled): plays R16–R19 in key layout, shows R6 and give-backs R8 in id layout.

Every generator writes choice codes into a caller-provided ``int64`` buffer, in the canonical
order of docs/engine.md, and returns how many it wrote. A play or give-back code packs one or
two cards: ``a`` alone is ``a``; ``a`` with ``b`` (``a <= b``) is ``a + 64 * (b + 1)``. Codes never
need more than ``MAX_CHOICES`` slots (R19d with 54 card types: 54 pairs + C(54, 2)).
"""

from __future__ import annotations

import numpy as np

from sim.bits import ONE, ZERO, lsb, msb, popcount
from sim.cards import ABOVE_RANK, BIT, CLASS_MASK, GROUP, GROUP_MASK, SUITED_MASK
from sim.jit import kernel

MAX_CHOICES = 54 + 54 * 53 // 2


@kernel(inline="always")
def code2(a, b):
    """Code of the two-card play ``(a, b)``, ``a <= b`` (a pair when ``a == b``)."""
    return a + 64 * (b + 1)


@kernel(inline="always")
def code_first(c):
    return c & 63


@kernel(inline="always")
def code_second(c):
    """Second card of a code, or -1 for a single."""
    return (c >> 6) - 1


@kernel
def _all_two_card(once, twice, out, n):
    """Every distinct two-card choice from a hand, lexicographic by (low, high) bit."""
    m = once
    while m:
        x = lsb(m)
        m = m & (m - ONE)
        if twice & BIT[x]:
            out[n] = code2(x, x)
            n += 1
        rest = m
        while rest:
            y = lsb(rest)
            rest = rest & (rest - ONE)
            out[n] = code2(x, y)
            n += 1
    return n


@kernel
def gen_plays(once, twice, lead_a, lead_b, out):
    """Legal plays of a hand (key layout) against a lead; ``lead_a = -1`` when leading.

    Parameters
    ----------
    once, twice : uint64
        Keys held at least once / twice.
    lead_a, lead_b : int64
        The lead's cards as keys (``lead_b = -1`` for a single lead); ``lead_a = -1`` to lead.
    out : int64[MAX_CHOICES]
        Receives the play codes in canonical order.

    Returns
    -------
    int64 : number of legal plays.
    """
    n = 0
    if lead_a < 0:  # R16: a single or a pair
        m = once
        while m:
            out[n] = lsb(m)
            n += 1
            m = m & (m - ONE)
        m = twice
        while m:
            x = lsb(m)
            out[n] = code2(x, x)
            n += 1
            m = m & (m - ONE)
        return n
    gm = GROUP_MASK[GROUP[lead_a]]  # R14: follow the group, not the printed suit
    if lead_b < 0:
        m = once & gm  # R18: a card of G if any, else anything
        if m == ZERO:
            m = once
        while m:
            out[n] = lsb(m)
            n += 1
            m = m & (m - ONE)
        return n
    m = twice & gm
    if m:  # R19a: a pair in G, any of them
        while m:
            x = lsb(m)
            out[n] = code2(x, x)
            n += 1
            m = m & (m - ONE)
        return n
    g = once & gm  # no pair in G, so every card of G is held once
    cnt = popcount(g)
    if cnt >= 2:  # R19b: the two strongest of G; ties of strength are the player's choice
        top = msb(g)
        tied = CLASS_MASK[top] & g
        if popcount(tied) >= 2:  # two or more tie for strongest: any two of them
            m = tied
            while m:
                x = lsb(m)
                m = m & (m - ONE)
                rest = m
                while rest:
                    y = lsb(rest)
                    rest = rest & (rest - ONE)
                    out[n] = code2(x, y)
                    n += 1
            return n
        rest = g & ~BIT[top]
        m = CLASS_MASK[msb(rest)] & rest  # the strongest and any one of the next strongest
        while m:
            out[n] = code2(lsb(m), top)
            n += 1
            m = m & (m - ONE)
        return n
    if cnt == 1:  # R19c: that card and any other card
        x = lsb(g)
        m = once & ~g
        while m:
            y = lsb(m)
            out[n] = code2(y, x) if y < x else code2(x, y)
            n += 1
            m = m & (m - ONE)
        return n
    return _all_two_card(once, twice, out, n)  # R19d: any two cards


@kernel
def count_plays(once, twice, lead_a, lead_b):
    """Number of legal plays, without listing them (same cascade as ``gen_plays``)."""
    if lead_a < 0:
        return popcount(once) + popcount(twice)
    gm = GROUP_MASK[GROUP[lead_a]]
    if lead_b < 0:
        m = once & gm
        return popcount(m) if m else popcount(once)  # R18
    m = twice & gm
    if m:
        return popcount(m)  # R19a
    g = once & gm
    cnt = popcount(g)
    if cnt >= 2:  # R19b
        top = msb(g)
        t = popcount(CLASS_MASK[top] & g)
        if t >= 2:
            return t * (t - 1) // 2
        rest = g & ~BIT[top]
        return popcount(CLASS_MASK[msb(rest)] & rest)
    n = popcount(once)
    if cnt == 1:
        return n - 1  # R19c
    return popcount(twice) + n * (n - 1) // 2  # R19d


@kernel
def show_mask(once, twice, cur_card):
    """Ids (id layout) whose pair may be shown over ``cur_card`` (-1: nothing shown yet) — R6."""
    return twice & SUITED_MASK & ABOVE_RANK[(cur_card // 4 + 1) if cur_card >= 0 else 0]


@kernel
def gen_givebacks(once, twice, shown, out):
    """Give-back choices (id layout) after an override: any two cards but the pair just
    shown (R8), as codes sorted by (low id, high id)."""
    keep = ~BIT[shown]
    return _all_two_card(once & keep, twice & keep, out, 0)


def plays_buffer() -> np.ndarray:
    return np.empty(MAX_CHOICES, dtype=np.int64)
