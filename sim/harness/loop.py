"""Compiled whole-deal loops: one deal into a state, or many deals into summary rows.

Both are nothing but ``init_deal``/``advance``/``apply_code`` from ``sim.engine`` driven by the
seats' compiled strategies, so they produce exactly what the Python step API produces.

This module is the template of the loops a run uses: ``sim.plugins.builtin_loops`` copies its
source with ``decide`` bound to a dispatch over only the run's strategy kinds (so a run
compiles only the kernels of its players), one cached module per set of kinds. Its own
``decide`` dispatches to every built-in kind (tests, benchmarks).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from sim.core.engine import (
    DONE,
    PLAY,
    S_ATT_POINTS,
    S_CALLER,
    S_CALLS,
    S_CUR_CARD,
    S_DECISIONS,
    S_MULT,
    S_NCALLS,
    S_NOVERRIDES,
    S_NTRICKS,
    S_PHASE,
    S_REDEALS,
    S_SCORE,
    S_SETTLE,
    S_TO_ACT,
    S_TRICKS,
    S_TRUMP,
    S_VOID,
    ST_SIZE,
    TRICK_W,
    TRICK_WINNER,
    U_SIZE,
    advance,
    apply_code_inline,
    apply_play_inline,
    init_deal,
    init_deal_fixed,
    trumps_held,
)
from sim.core.jit import kernel
from sim.core.movegen import code_first, code_second
from sim.core.tables import (  # noqa: F401  (re-exported: the summary row's columns)
    C_ATT_POINTS,
    C_CALLER,
    C_DECISIONS,
    C_FIRST_SHOW_ROUND,
    C_LAST_WINNER,
    C_MULT,
    C_NCALLS,
    C_NTRICKS,
    C_OVERRIDES,
    C_REDEALS,
    C_SCORE,
    C_SETTLE0,
    C_SETTLE1,
    C_SETTLE2,
    C_SETTLE3,
    C_SHOW_RANK,
    C_TRUMP,
    C_TRUMP_LEN,
    C_VOID,
    COLUMN_NAMES,
    N_COLS,
)
from strategies.compiled import decide  # generated loops bind their own
from strategies.greedy import greedy_decide_inline  # generated loops without greedy: a stub
from strategies.kinds import FLOAT_SCRATCH, INT_SCRATCH, KIND_GREEDY, KIND_RANDOM, UINT_SCRATCH
from strategies.random import random_decide, random_decide_inline  # noqa: F401


@kernel
def play_deal(st, u, rules, seed, deal, kinds, params, buf, fws, uws):
    """Play deal ``deal`` of ``seed`` (uint64) to the end with the seats' compiled strategies."""
    init_deal(st, u, seed, deal)
    finish_deal(st, u, rules, kinds, params, buf, fws, uws)


@kernel
def finish_deal(st, u, rules, kinds, params, buf, fws, uws):
    """Play an initialised deal to the end with the seats' compiled strategies."""
    advance(st, u, rules)
    while st[S_PHASE] != DONE:
        seat = st[S_TO_ACT]
        kind = kinds[seat]
        if kind == KIND_RANDOM:  # the hot path of bulk simulation: no call, no dispatch
            code = random_decide_inline(st, u, seat, params[seat, 0], buf)
        elif kind == KIND_GREEDY:  # greedy (and greedy-vs-random tournaments): no dispatch
            code = greedy_decide_inline(st, u, rules, seat, params, seat, buf)
        else:
            code = decide(kinds[seat], params, st, u, rules, seat, buf, fws, uws)
        if st[S_PHASE] == PLAY:  # apply_code's trick-play branch, inlined
            apply_play_inline(st, u, rules, code_first(code), code_second(code))
        else:
            apply_code_inline(st, u, rules, code)


@kernel
def summarize(st, u, row):
    """Fill one summary row (``COLUMN_NAMES``) from a finished deal."""
    row[C_REDEALS] = st[S_REDEALS]
    row[C_VOID] = st[S_VOID]
    row[C_CALLER] = st[S_CALLER]
    row[C_TRUMP] = st[S_TRUMP]
    row[C_ATT_POINTS] = st[S_ATT_POINTS]
    row[C_MULT] = st[S_MULT]
    row[C_SCORE] = st[S_SCORE]
    for s in range(4):
        row[C_SETTLE0 + s] = st[S_SETTLE + s]
    row[C_NCALLS] = st[S_NCALLS]
    row[C_OVERRIDES] = st[S_NOVERRIDES]
    row[C_SHOW_RANK] = st[S_CUR_CARD] // 4 if st[S_CUR_CARD] >= 0 else -1
    row[C_TRUMP_LEN] = trumps_held(st, u, st[S_CALLER]) if st[S_VOID] == 0 else 0
    row[C_DECISIONS] = st[S_DECISIONS]
    row[C_NTRICKS] = st[S_NTRICKS]
    n = st[S_NTRICKS]
    row[C_LAST_WINNER] = st[S_TRICKS + (n - 1) * TRICK_W + TRICK_WINNER] if n > 0 else -1
    row[C_FIRST_SHOW_ROUND] = st[S_CALLS] if st[S_NCALLS] > 0 else -1


@njit(cache=True, nogil=True)
def play_deals(seed, first, n, rules, kinds, params, out):
    """Play deals ``first … first+n-1`` of ``seed``; row ``i`` of ``out`` summarises deal
    ``first + i``. ``kinds``: int64[4]; ``params``: float64[PARAM_ROWS, N_PARAMS]
    (``strategies.params.param_table``); ``out``: int64[n, N_COLS].
    """
    st = np.zeros(ST_SIZE, dtype=np.int64)
    u = np.zeros(U_SIZE, dtype=np.uint64)
    buf = np.empty(INT_SCRATCH, dtype=np.int64)  # not zeroed: ~10 MB, mostly never touched
    fws = np.empty(FLOAT_SCRATCH, dtype=np.float64)  # (no kernel reads scratch unwritten)
    uws = np.empty(UINT_SCRATCH, dtype=np.uint64)
    for i in range(n):
        play_deal(st, u, rules, seed, first + np.uint64(i), kinds, params, buf, fws, uws)
        summarize(st, u, out[i])


@njit(cache=True, nogil=True)
def play_deals_fixed(seed, first, n, rules, kinds, params, fix_seat, fix_cards, out):
    """``play_deals`` with the card ids ``fix_cards`` dealt to ``fix_seat`` in every deal."""
    st = np.zeros(ST_SIZE, dtype=np.int64)
    u = np.zeros(U_SIZE, dtype=np.uint64)
    buf = np.empty(INT_SCRATCH, dtype=np.int64)  # not zeroed: ~10 MB, mostly never touched
    fws = np.empty(FLOAT_SCRATCH, dtype=np.float64)  # (no kernel reads scratch unwritten)
    uws = np.empty(UINT_SCRATCH, dtype=np.uint64)
    for i in range(n):
        init_deal_fixed(st, u, seed, first + np.uint64(i), fix_seat, fix_cards)
        finish_deal(st, u, rules, kinds, params, buf, fws, uws)
        summarize(st, u, out[i])
