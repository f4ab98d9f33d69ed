"""greedy's follow on the legal set's masks chooses exactly what its list form chose.

``greedy_follow`` used to list every legal play (``set_all``) and take the first best of the
list; it now finds that play from the masks (``cheapest_key``, ``cheapest_two``,
``master_keys``, ``trick.BEATING``). ``_listed_follow`` below is the list form, kept as the
specification; both are asked at every follow of seeded deals (greedy and random players, so
voids and pair leads come up), under each ``contest_at`` (the default 0 never filters by
``is_master``; higher ones do).
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from sim import Deal
from sim.core import state as S
from sim.core.movegen import legal_set, plays_buffer, set_all, set_count
from sim.core.trick import beats, trick_points, trick_winner
from strategies import greedy
from strategies.random import RandomStrategy


def _py(f):
    return getattr(f, "py_func", f)


def _listed_follow(st, u, seat, contest_at):
    """The list form of greedy's follow (its code before the masks), in plain Python."""
    g = greedy
    card_cost, is_master = _py(g.card_cost), _py(g.is_master)
    me = int(st[S.S_TO_ACT])
    buf = plays_buffer()
    n = set_all(*legal_set(u[S.U_ONCE + me], u[S.U_TWICE + me], st[S.S_TRICK_A],
                           st[S.S_TRICK_B]), buf)
    codes = [int(c) for c in buf[:n]]
    if n == 1:
        return codes[0]
    trump, pos = int(st[S.S_TRUMP]), int(st[S.S_POS])
    w = int(trick_winner(st, S.S_TRICK_A, S.S_TRICK_B, pos))
    partner_winning = ((int(st[S.S_LEADER]) + w) % 4) % 2 == seat % 2
    last, pair = pos == 3, st[S.S_TRICK_B] >= 0
    out1, out2 = (np.uint64(x) for x in g.outside_masks(u, seat))  # compiled: they read the
    voids = int(g.voids_after(st, seat))  # state through sim.view's kernels

    def cards(c):
        return c & 63, (c >> 6) - 1

    def pts(a, b):
        return g.POINTS_KEY[trump, a] + (g.POINTS_KEY[trump, b] if b >= 0 else 0)

    def strength(a, b):
        return g.STRENGTH[a] + (g.STRENGTH[b] if b >= 0 else 0)

    def cost(a, b):
        return card_cost(a, trump) + (card_cost(b, trump) if b >= 0 else 0)

    def first_best(cands, value):
        best, best_v = -1, None
        for c in cands:
            v = value(*cards(c))
            if best_v is None or v > best_v:
                best, best_v = c, v
        return best

    if partner_winning:
        safe = last or is_master(voids, st[S.S_TRICK_A + w], pair, out1, out2)
        if safe:
            return first_best(codes, lambda a, b: 100 * pts(a, b) - strength(a, b))
        return first_best(codes, lambda a, b: -cost(a, b))
    kw = int(st[S.S_TRICK_A + w])
    lead_group = g.GROUP[st[S.S_TRICK_A]]
    contest = last or trick_points(st, S.S_TRICK_A, S.S_TRICK_B, pos, trump) >= contest_at
    winning = [c for c in codes
               if _py(beats)(*cards(c), pair, lead_group, g.STRENGTH[kw],
                             g.GROUP[kw] == g.TRUMP_GROUP)
               and (contest or is_master(voids, cards(c)[0], pair, out1, out2))]
    if winning:
        return first_best(winning, lambda a, b: 3 * pts(a, b) - strength(a, b))
    return first_best(codes, lambda a, b: -cost(a, b))


CONTEST_AT = (0, 10, 25, 400)


def _params():
    rows = []
    for c in CONTEST_AT:
        row = greedy.GreedyStrategy().compiled_params()
        row[greedy.P_CONTEST_AT] = c
        rows.append(row)
    return np.array(rows, dtype=np.float64)


@pytest.mark.parametrize("players", ["greedy", "random"])
def test_follow_on_masks_equals_the_listed_follow(players):
    params = _params()
    buf = plays_buffer()
    rng_bots = [RandomStrategy() for _ in range(4)]
    modes: Counter = Counter()
    decided = 0
    for deal in range(60 if players == "greedy" else 40):
        d = Deal(7, deal)
        for s, b in enumerate(rng_bots):
            b.begin_deal(s, 7, deal)
        while not d.done:
            st, u, rules = d.engine
            seat = int(st[S.S_TO_ACT])
            if st[S.S_PHASE] == S.PLAY and st[S.S_POS] > 0:
                mode, m1, m2 = legal_set(u[S.U_ONCE + seat], u[S.U_TWICE + seat], st[S.S_TRICK_A],
                                         st[S.S_TRICK_B])
                if set_count(mode, m1, m2) > 1:
                    modes[int(mode)] += 1
                for row, c in enumerate(CONTEST_AT):
                    got = int(greedy.greedy_follow(st, u, rules, seat, params, row, buf))
                    assert got == _listed_follow(st, u, seat, c), (deal, d.version, c)
                    decided += 1
            if players == "greedy":
                d.apply_code(int(greedy.greedy_decide(st, u, rules, seat, params, 0, buf)))
            else:
                d.apply(rng_bots[seat].choose(d.observation(seat), d.legal()))
    # every kind of follow with a choice came up (movegen's M_SINGLES … M_ANY2)
    assert decided > 1000 and set(modes) >= {1, 2, 4, 5}, modes
