"""An example compiled bot: the ``cautious`` bot of ``strategies/example.py`` as a numba kernel.

It makes exactly the decisions of the Python ``Cautious`` (a test plays seeded deals with
both and compares the records), but inside the compiled deal loop, at engine speed. Copy it
when you write your own compiled bot: a ``numba.njit`` kernel that reads the deal only through
``sim.view`` (docs/strategies.md, "Compiled bots") and a ``Strategy`` subclass that names it
in ``kernel`` and declares its ``param``s, which reach the kernel as ``params[0]``,
``params[1]``, … in declaration order::

    shuangkou play --plugin strategies.example_compiled --seats "cautious_c(greed=5),greedy"
    players = ["strategies.example_compiled:CautiousC", "greedy"]      # in a config

Ties are broken as Python's ``min``/``max`` break them: the first best choice in the
canonical order of ``view.legal_codes`` (the order of the Python bot's ``legal`` list).
"""

from __future__ import annotations

import numba
import numpy as np

from sim import view
from sim.cards import CARD_NAMES, ID_OF_KEY, POINTS_ID
from strategies.base import Strategy, param

_PLAIN = "46789TJQKA"  # strength order of plain cards (R13)


def _value(card: str, trump: str) -> int:
    """The Python bot's value of a card to keep: trumps high, then rank; points cost extra."""
    if card in ("BJ", "SJ") or card[0] in "235" or card[1] == trump:
        base = 20 + (["2", "3", "5"].index(card[0]) * 2 if card[0] in "235" else 0)
    else:
        base = _PLAIN.index(card[0])
    return base + 2 * int(POINTS_ID[CARD_NAMES.index(card)])


# Tables built once in Python are constants inside the kernel:
# VALUE[suit, card id] while calling, VALUE_KEY[trump, key] in trick play,
# TRUMPS[suit]: the card ids that would be trumps with that suit (R12), as a mask
VALUE = np.array([[_value(c, "shdc"[s]) for c in CARD_NAMES] for s in range(4)],
                 dtype=np.int64)
VALUE_KEY = np.array([[VALUE[t, ID_OF_KEY[t, k]] for k in range(54)] for t in range(4)],
                     dtype=np.int64)
TRUMPS = np.array([sum(1 << c for c in range(54)
                       if c >= 52 or c // 4 in (1, 2, 4) or c % 4 == s) for s in range(4)],
                  dtype=np.uint64)


@numba.njit(cache=True)
def _play_value(st, code):
    """The value of a play (one or two keys) under this deal's trump."""
    t = view.trump(st)
    v = VALUE_KEY[t, view.code_first(code)]
    b = view.code_second(code)
    if b >= 0:
        v += VALUE_KEY[t, b]
    return v


@numba.njit(cache=True)
def _play_points(st, code):
    p = view.points_of_key(st, view.code_first(code))
    b = view.code_second(code)
    if b >= 0:
        p += view.points_of_key(st, b)
    return p


@numba.njit(cache=True)
def cautious_kernel(st, u, rules, seat, params, buf):
    """Choice code of ``cautious`` for ``seat``; ``params`` = [greed, show_share]."""
    greed = params[0]
    show_share = params[1]
    n = view.legal_codes(st, u, buf)  # buf[0:n]: the choices in canonical order
    ph = view.phase(st)
    if ph == view.CALL:  # buf holds the showable pairs' card ids, ascending; pass is PASS
        once = view.hand_once(u, seat)
        twice = view.hand_twice(u, seat)
        best, best_k = -1, -1
        for i in range(n):  # the first show with the most trumps
            m = TRUMPS[view.suit_of_card(buf[i])]
            k = view.popcount(once & m) + view.popcount(twice & m)
            if k > best_k:
                best, best_k = buf[i], k
        size = view.hand_size(u, seat)
        if size >= 10 and best_k / size >= show_share:
            return best
        return view.PASS
    if ph == view.GIVEBACK:  # two cards (ids) to hand back: the cheapest pair
        suit = view.suit_of_card(view.shown_card(st))  # the suit just shown would be trump
        best, best_v = buf[0], 1 << 30
        for i in range(n):
            c = buf[i]
            v = VALUE[suit, view.code_first(c)] + VALUE[suit, view.code_second(c)]
            if v < best_v:
                best, best_v = c, v
        return best
    cheapest, cheap_v = buf[0], 1 << 30
    for i in range(n):
        v = _play_value(st, buf[i])
        if v < cheap_v:
            cheapest, cheap_v = buf[i], v
    me = view.trick_pos(st)  # my position in the trick
    if me == 0:
        return cheapest  # lead low
    winner = view.trick_winner_pos(st)
    points = view.trick_points_now(st)
    last = me == 3
    if me - winner == 2:  # the partner is winning
        if last:  # safe: feed the partner the richest play (then the cheapest of those)
            best, best_p, best_v = buf[0], -1, 0
            for i in range(n):
                p = _play_points(st, buf[i])
                v = _play_value(st, buf[i])
                if p > best_p or (p == best_p and v < best_v):
                    best, best_p, best_v = buf[i], p, v
            return best
        return cheapest
    if points >= greed or last:  # the cheapest play that wins the trick, if any
        scratch = buf[view.MAX_CHOICES:]
        best, best_v = -1, 1 << 30
        for i in range(n):
            if view.winner_if(st, buf[i], scratch) == me:
                v = _play_value(st, buf[i])
                if v < best_v:
                    best, best_v = buf[i], v
        if best >= 0:
            return best
    return cheapest


class CautiousC(Strategy):
    """Example compiled bot: the ``cautious`` example as a numba kernel."""

    name = "cautious_c"
    kernel = cautious_kernel
    greed = param(10, int, lo=0, hi=400, doc="trick points from which it tries to win")
    show_share = param(0.45, float, lo=0.0, hi=1.0, doc="share of trumps needed to show")
