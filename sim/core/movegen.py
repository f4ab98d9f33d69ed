"""Legal choices (compiled): plays R16–R19 in key layout, shows R6 and give-backs R8 in id layout.

Every generator writes choice codes into a caller-provided ``int64`` buffer, in the canonical
order of docs/engine.md, and returns how many it wrote. A play or give-back code packs one or
two cards: ``a`` alone is ``a``; ``a`` with ``b`` (``a <= b``) is ``a + 64 * (b + 1)``. Codes never
need more than ``MAX_CHOICES`` slots (R19d with 54 card types: 54 pairs + C(54, 2)).
"""

from __future__ import annotations

import numpy as np

from sim.cards import ABOVE_RANK, BIT, CLASS_MASK, GROUP, GROUP_MASK, SUITED_MASK
from sim.core.bits import ZERO, clear_lsb, lsb, msb, popcount, select
from sim.core.jit import kernel

MAX_CHOICES = 54 + 54 * 53 // 2


CODE_SHIFT = 6  # the second card sits above the first's 6 bits, plus one (-1: none)
CODE_FIRST_MASK = 63
N_CODES = 64 * 55  # every code is below this (the second card is at most key 53)


@kernel
def make_code(a, b):
    """Code of a play or give-back: ``a`` alone when ``b == -1``, else ``a`` with ``b``."""
    return a + ((b + 1) << CODE_SHIFT)


@kernel
def code2(a, b):
    """Code of the two-card play ``(a, b)``, ``a <= b`` (a pair when ``a == b``)."""
    return make_code(a, b)


@kernel
def code_first(c):
    """First card of a code."""
    return c & CODE_FIRST_MASK


@kernel
def code_second(c):
    """Second card of a code, or -1 for a single."""
    return (c >> CODE_SHIFT) - 1


# A legal set is described by (mode, m1, m2): the rules cascade runs once (``legal_set``), and
# counting, the k-th play and the full list are derived from the description.
M_LEAD = 0  # singles of m1 (= once), then pairs of m2 (= twice)        R16
M_SINGLES = 1  # singles of m1                                          R18
M_PAIRS = 2  # pairs (x, x) of m1                                       R19a
M_CHOOSE2 = 3  # two different cards of m1                              R19b ties
M_WITH = 4  # (x, m2) for x in m1, m2 a fixed key, written low-high     R19b, R19c
M_ANY2 = 5  # any two: pairs of m2 and two different cards of m1        R19d


@kernel
def legal_set(once, twice, lead_a, lead_b):
    """Describe the legal plays of a hand (key layout) against a lead (-1: leading).

    Returns ``(mode, m1, m2)`` (see the ``M_*`` constants); the plays it describes, in
    canonical order, are listed by ``set_all``, counted by ``set_count``, indexed by ``set_kth``.
    """
    if lead_a < 0:  # R16: a single or a pair
        return M_LEAD, once, twice
    gm = GROUP_MASK[GROUP[lead_a]]  # R14: follow the group, not the printed suit
    if lead_b < 0:
        m = once & gm  # R18: a card of G if any, else anything
        return M_SINGLES, (m if m else once), ZERO
    m = twice & gm
    if m:  # R19a: a pair in G, any of them
        return M_PAIRS, m, ZERO
    g = once & gm  # no pair in G, so every card of G is held once
    cnt = popcount(g)
    if cnt >= 2:  # R19b: the two strongest of G; ties of strength are the player's choice
        top = msb(g)
        tied = CLASS_MASK[top] & g
        if popcount(tied) >= 2:  # two or more tie for strongest: any two of them
            return M_CHOOSE2, tied, ZERO
        rest = g & ~BIT[top]  # the strongest and any one of the next strongest
        return M_WITH, CLASS_MASK[msb(rest)] & rest, np.uint64(top)
    if cnt == 1:  # R19c: that card and any other card
        return M_WITH, once & ~g, np.uint64(lsb(g))
    return M_ANY2, once, twice  # R19d: any two cards


@kernel
def set_count(mode, m1, m2):
    """Number of plays in a legal set."""
    if mode == M_LEAD or mode == M_ANY2:
        n = popcount(m1)
        if mode == M_LEAD:
            return n + popcount(m2)
        return popcount(m2) + n * (n - 1) // 2
    n = popcount(m1)
    if mode == M_CHOOSE2:
        return n * (n - 1) // 2
    return n


@kernel
def twice_has(m2, x):
    """Whether bit ``x`` of ``m2`` is set."""
    return (m2 & BIT[x]) != ZERO


@kernel
def _with_code(x, f):
    return code2(x, f) if x < f else code2(f, x)


@kernel
def set_kth(mode, m1, m2, k):
    """The ``k``-th play (canonical order) of a legal set, as a code; ``k < set_count``."""
    if mode == M_SINGLES:
        return select(m1, k)
    if mode == M_LEAD:  # without a branch: single or pair is the random choice itself
        n = popcount(m1)
        single = k < n
        x = select(m1 if single else m2, k if single else k - n)
        return x if single else code2(x, x)
    if mode == M_PAIRS:
        x = select(m1, k)
        return code2(x, x)
    if mode == M_WITH:
        return _with_code(select(m1, k), np.int64(m2))
    # M_CHOOSE2 and M_ANY2: walk the low card upwards, skipping whole blocks
    m = m1
    while m:
        x = lsb(m)
        m = clear_lsb(m)
        if mode == M_ANY2 and twice_has(m2, x):
            if k == 0:
                return code2(x, x)
            k -= 1
        c = popcount(m)
        if k < c:
            return code2(x, select(m, k))
        k -= c
    return np.int64(-1)  # unreachable for k < set_count


# ``set_kth`` inlined into its caller (the random player's every play: see strategies.random)
set_kth_inline = kernel(inline="always")(getattr(set_kth, "py_func", set_kth))

@kernel
def set_all(mode, m1, m2, out):
    """Write every play of a legal set into ``out`` in canonical order; returns the count."""
    n = 0
    if mode == M_SINGLES or mode == M_LEAD or mode == M_PAIRS:
        m = m1
        if mode != M_PAIRS:  # the singles of m1 first
            while m:
                out[n] = lsb(m)
                n += 1
                m = clear_lsb(m)
            if mode == M_SINGLES:
                return n
            m = m2
        while m:  # then the pairs: of m1 (M_PAIRS), of the twice-held cards m2 (M_LEAD)
            x = lsb(m)
            out[n] = code2(x, x)
            n += 1
            m = clear_lsb(m)
        return n
    if mode == M_WITH:
        f = np.int64(m2)
        m = m1
        while m:
            out[n] = _with_code(lsb(m), f)
            n += 1
            m = clear_lsb(m)
        return n
    m = m1
    while m:
        x = lsb(m)
        m = clear_lsb(m)
        if mode == M_ANY2 and twice_has(m2, x):
            out[n] = code2(x, x)
            n += 1
        rest = m
        while rest:
            out[n] = code2(x, lsb(rest))
            n += 1
            rest = clear_lsb(rest)
    return n


# ``set_all`` inlined into its caller (the greedy player's every follow: see strategies.greedy)
set_all_inline = kernel(inline="always")(getattr(set_all, "py_func", set_all))


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
        Receives the play codes in canonical order (docs/engine.md).

    Returns
    -------
    int64 : number of legal plays.
    """
    mode, m1, m2 = legal_set(once, twice, lead_a, lead_b)
    return set_all(mode, m1, m2, out)


@kernel
def count_plays(once, twice, lead_a, lead_b):
    """Number of legal plays, without listing them."""
    mode, m1, m2 = legal_set(once, twice, lead_a, lead_b)
    return set_count(mode, m1, m2)


@kernel
def show_mask(once, twice, cur_card):
    """Ids (id layout) whose pair may be shown over ``cur_card`` (-1: nothing shown yet) — R6."""
    return twice & SUITED_MASK & ABOVE_RANK[(cur_card // 4 + 1) if cur_card >= 0 else 0]


@kernel
def legal_givebacks(once, twice, shown):
    """Describe the give-backs (id layout) after an override, as ``legal_set`` describes
    plays: any two cards but the pair just shown (R8); ``set_all`` lists them as codes
    sorted by (low id, high id)."""
    keep = ~BIT[shown]
    return M_ANY2, once & keep, twice & keep


def plays_buffer() -> np.ndarray:
    return np.empty(MAX_CHOICES, dtype=np.int64)
