"""Exact endgames for the search players (compiled): ``expert(endgame=K)``, ``pimc(endgame=K)``.

Once every hand holds at most ``K`` cards at the start of a trick, the player stops rolling
its sampled worlds out and solves each one exactly instead (``sim.solve.kernels``: all four
hands of the *sampled* world known, perfect play by all four from there), as GIB and BEN do
for bridge. It is fair: the worlds come from the same sampler (``strategies.sampler``:
uniform among the deals consistent with what the seat knows), never from the true deal.

One ``choices`` call per world values every legal play of the seat at once (the plays share
the world's transposition table); each play's value is the seat's settlement (R24) plus 0.005
times the attacker score signed for its side (``strategies.search.deal_value``'s scale), summed
over the worlds. The best sum wins; ties keep the default (greedy's play). A world the solver
does not settle within ``ENDGAME_NODES`` nodes makes the decision fall back to the player's
rollouts, so no decision waits past a bounded search.

The solver's arrays live in the player's int scratch (``buf``) after ``base``: the trick rows,
move buffers, the table (its key words viewed as uint64) and the counters, sized for hands of
at most ``MAX_ENDGAME`` cards (``ENDGAME_WORDS`` words in all).
"""

from __future__ import annotations

import numpy as np

from sim.core import state as S
from sim.core.jit import kernel
from sim.core.scoring import settle_kernel
from sim.solve import kernels as K

MAX_ENDGAME = 12  # cards per hand at most (the move rows: C(12, 2) + 12 = 78 plays)
ENDGAME_WORLDS = 24  # solved worlds per decision (the default of ``endgame_worlds``)
ENDGAME_NODES = 500_000  # nodes per solved world at most (then the rollouts decide)
_WIDTH = 96  # a move row: every legal play of a hand of MAX_ENDGAME cards
_PLIES = 4 * MAX_ENDGAME + 2
_TRICKS = MAX_ENDGAME + 2
_TT_BITS = 15
_TT = 1 << _TT_BITS
# offsets in buf after ``base``: trick rows, moves, keys, table values, table keys (uint64
# words), counters, hands (uint64), the root's codes and values
_O_TST = 0
_O_MV = _O_TST + _TRICKS * S.ST_SIZE
_O_KEYS = _O_MV + _PLIES * _WIDTH
_O_TTV = _O_KEYS + _PLIES * _WIDTH
_O_TTK = _O_TTV + _TT * K.TT_WORDS
_O_STATS = _O_TTK + _TT * 8
_O_HANDS = _O_STATS + K.N_STATS
_O_CODES = _O_HANDS + 16  # the hands, then a table key
_O_VALUES = _O_CODES + _WIDTH
ENDGAME_WORDS = _O_VALUES + _WIDTH


@kernel
def in_endgame(st, k):
    """Whether the deal in ``st`` is in trick play with at most ``k`` cards per hand at the
    current trick's start (``k`` = 0: never)."""
    return k > 0 and st[S.S_PHASE] == S.PLAY and st[S.S_LEFT] <= min(k, MAX_ENDGAME)


@kernel
def _arrays(buf, base):
    tst = buf[base + _O_TST:base + _O_MV].reshape((_TRICKS, S.ST_SIZE))
    mv = buf[base + _O_MV:base + _O_KEYS].reshape((_PLIES, _WIDTH))
    keys = buf[base + _O_KEYS:base + _O_TTV].reshape((_PLIES, _WIDTH))
    tt_v = buf[base + _O_TTV:base + _O_TTK].reshape((_TT, K.TT_WORDS))
    tt_k = buf[base + _O_TTK:base + _O_STATS].view(np.uint64).reshape((_TT, 8))
    stats = buf[base + _O_STATS:base + _O_HANDS]
    hands = buf[base + _O_HANDS:base + _O_CODES].view(np.uint64)
    return tst, mv, keys, tt_v, tt_k, stats, hands


@kernel
def endgame_begin(buf, base):
    """Empty the solver's table and trick rows before a decision's worlds (one table per
    decision: the trump, sides and rules are the deal's)."""
    tst, mv, keys, tt_v, tt_k, stats, hands = _arrays(buf, base)
    for i in range(_TT):
        tt_v[i, K.TT_LEAD] = 0
    for i in range(_TRICKS):
        for j in range(S.ST_SIZE):
            tst[i, j] = -1


@kernel
def endgame_world(st, wu, rules, seat, buf, base, sums, first):
    """Solve the world ``(st, wu)`` (a sampled deal: the seat's state, every hand in ``wu``)
    and add each legal play's value for ``seat`` to ``sums`` (set it when ``first``).
    Returns the number of plays, or -1 when the world was not settled within
    ``ENDGAME_NODES`` (module docstring)."""
    tst, mv, keys, tt_v, tt_k, stats, hands = _arrays(buf, base)
    codes = buf[base + _O_CODES:base + _O_VALUES]
    values = buf[base + _O_VALUES:base + ENDGAME_WORDS]
    for i in range(K.N_STATS):
        stats[i] = 0
    stats[K.ST_CAP] = ENDGAME_NODES
    stats[K.ST_OPTIONS] = K.OPT_ALL
    n = K.choices(st, wu, rules, tst, hands, mv, keys, tt_k, tt_v, stats, codes, values)
    if stats[K.ST_ABORT]:
        return -1
    attacker = (seat & 1) == (st[S.S_CALLER] & 1)
    points = st[S.S_ATT_POINTS]
    for i in range(n):
        score = points + values[i]
        x = settle_kernel(score, rules)
        v = x + 0.005 * score if attacker else -x - 0.005 * score
        if first:
            sums[i] = v
        else:
            sums[i] += v
    return n


@kernel
def endgame_pick(buf, base, sums, n, default):
    """The play of the best summed value (``endgame_world``'s order); ties keep
    ``default``."""
    codes = buf[base + _O_CODES:base + _O_VALUES]
    best = -1
    for i in range(n):
        if codes[i] == default:
            best = i
    if best < 0:
        best = 0
    for i in range(n):  # strictly better only: ties keep the default
        if sums[i] > sums[best] + 1e-9:
            best = i
    return codes[best]
