"""Compiled whole-deal loops: deals into summary rows, and into the caller's state.

``run_deals`` is ``init_deal``/``advance``/``apply_code`` from ``sim.core.engine`` driven by
the seats' compiled strategies, so it produces exactly what the Python step API produces; it
is the one compiled loop of a run: its deals, the records it writes (``play_deal``) and the
swing deals it compares (the scripted seat, ``strategies.script``) all play there. Calling
(``play_calling``) and trick play (``play_tricks``) run in loops of their own that keep the
per-decision state in locals and hand it back to the state arrays before any kernel but
random's reads them, and at the end; random's decisions are written out on those locals.
The state after every deal is the one ``apply_code`` leaves, field for field (tests/test_loops.py).

The loops are compiled once, whatever players sit in them (``sim.core.calls``): random's
and greedy's decisions are written into them, the scripted seat's too, and every other kind is
called through its address in the table ``entries`` (``strategies.compiled.entries``), so a new
set of players compiles only the kernels of players never compiled before. This module is
also a template (``sim.core.bind``): ``sim.tools.estimate`` binds ``forced_show`` for its
calling lines (one more copy, compiled once); imported as itself, ``forced_show`` never forces.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from sim.cards import BIT
from sim.core import state as S
from sim.core.bind import bindable
from sim.core.bits import ONE, ZERO, popcount, select
from sim.core.engine import apply_giveback, apply_show, init_deal, init_deal_fixed, trumps_held
from sim.core.jit import kernel
from sim.core.movegen import (
    CODE_FIRST_MASK,
    CODE_SHIFT,
    code_first,
    code_second,
    legal_set,
    set_count,
)
from sim.core.movegen import set_kth_inline as set_kth
from sim.core.rng import bounded, draw
from sim.core.state import new_state
from sim.core.step import close_trick, end_calling, lay_play, pass_chance, take_play, to_decision
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
from strategies.compiled import call_kind
from strategies.compiled import entries as entry_table
from strategies.greedy import greedy_decide_inline
from strategies.kinds import (
    FLOAT_SCRATCH,
    INT_SCRATCH,
    KIND_GREEDY,
    KIND_RANDOM,
    KIND_SCRIPT,
    UINT_SCRATCH,
)
from strategies.random import (  # noqa: F401
    P_SHOW_PROB,
    random_decide,
    random_decide_inline,
    random_giveback,
)
from strategies.script import script_decide

_S32 = np.uint64(32)
PLAYER = -2  # forced_show's answer when the seat's own player decides


@kernel(inline="always")
def forced_show(st, rules, seat, m):
    """The hook at a show decision of ``seat`` with the legal pairs ``m``: a card id to show,
    -1 to pass, or ``PLAYER``: the seat's player decides (always, unless bound; folded away
    when inlined)."""
    return PLAYER


@kernel(inline="always")
def forced_line(st, rules, seat, m):
    """``forced_show`` for ``sim.tools.estimate``'s calling lines, bound in their loops:
    the line travels as one more entry after the rules (``rules[-1]``: -1 the player decides,
    -2 never show, else the card id of a pair to show when it is legal, R6, else pass), for
    the seat with the fixed cards (``S_FIX_SEAT``) only."""
    line = rules[rules.shape[0] - 1]
    if seat != st[S.S_FIX_SEAT] or line == -1:
        return PLAYER
    if line >= 0 and (m & BIT[line]) != ZERO:  # R6: legal now
        return line
    return np.int64(-1)


bindable(globals(), "forced_show")


@kernel(inline="always")
def seat_decide(kind, entries, st, u, rules, seat, params, buf, fws, uws):
    """The choice of a seat whose decision the loops do not write out on their locals (all
    but random's shows and plays), on the state as ``apply_code`` leaves it: greedy inlined,
    the scripted seat (a record played back, ``strategies.script``), any other kind through
    its address in ``entries`` (``strategies.compiled.call_kind``)."""
    if kind == KIND_GREEDY:
        return greedy_decide_inline(st, u, rules, seat, params, seat, buf)
    if kind == KIND_SCRIPT:
        return script_decide(st, seat, buf)
    return call_kind(kind, entries, params, st, u, rules, seat, buf, fws, uws)


# inlined into ``run_deals``: every compiled function that calls others optimises and emits
# machine code for all it calls once more (numba links callees into each caller's module), so
# each level of calls between the deal loop and the players is paid on a cold compile
@kernel(inline="always")
def finish_deal(st, u, rules, kinds, entries, params, buf, fws, uws):
    """Play an initialised deal to the end with the seats' compiled strategies."""
    while st[S.S_PHASE] != S.DONE:
        if st[S.S_PHASE] == S.PLAY:  # trick play runs to the end of the deal in its own loop
            play_tricks(st, u, rules, kinds, entries, params, buf, fws, uws)
            return
        if st[S.S_PHASE] == S.CALL:  # so does calling, up to a give-back, the first lead or a void
            play_calling(st, u, rules, kinds, entries, params, buf, fws, uws)
            continue
        seat = st[S.S_TO_ACT]  # a give-back (R8), about one a deal
        kind = kinds[seat]
        if kind == KIND_RANDOM:
            code = random_giveback(st, u, seat)
        else:
            code = seat_decide(kind, entries, st, u, rules, seat, params, buf, fws, uws)
        apply_giveback(st, u, code_first(code), code_second(code))  # play_calling advances



@kernel(inline="always")
def _calling_back(st, r, chance, passrun, to_act, decisions):
    """``play_calling``'s locals back into the state, as ``advance`` and ``apply_code`` leave
    it (before a kernel reads it, before a show, at the end)."""
    st[S.S_ROUND] = r
    st[S.S_CHANCE] = chance
    st[S.S_PASSRUN] = passrun
    st[S.S_TO_ACT] = to_act
    st[S.S_DECISIONS] = decisions


@kernel(inline="always")
def _tricks_back(st, u, seat, pos, leader, ntricks, left, att, decisions, po, pt):
    """``play_tricks``'s locals back into the state, as ``apply_play`` leaves it (before a
    kernel reads it, and after the last play)."""
    st[S.S_TO_ACT] = seat
    st[S.S_POS] = pos
    st[S.S_LEADER] = leader
    st[S.S_NTRICKS] = ntricks
    st[S.S_LEFT] = left
    st[S.S_ATT_POINTS] = att
    st[S.S_DECISIONS] = decisions
    u[S.U_PLAYED_ONCE] = po
    u[S.U_PLAYED_TWICE] = pt


@kernel(inline="always")
def _random_play(u, seat, o, w, lead_a, lead_b):
    """random_decide's play: uniform over the legal plays of (``o``, ``w``) against the lead
    (``lead_a`` -1: leading), a draw of the seat's stream only when there is a choice.
    Inlined once per kind of lead with constant arguments, so that each copy is the one branch
    of ``legal_set`` it needs (no dispatch on the set's mode)."""
    mode, m1, m2 = legal_set(o, w, lead_a, lead_b)
    n = set_count(mode, m1, m2)
    # a forced play (n == 1) takes no draw; without a branch: ``bounded(x, 1)`` is 0, the one
    # play, and the counter moves only when there was a choice
    i = S.U_CTR + S.STREAM_SEAT + seat
    ctr = u[i]
    u[i] = ctr + np.uint64(n > 1)
    return set_kth(mode, m1, m2, bounded(draw(u[S.U_KEY + S.STREAM_SEAT + seat], ctr), n))


@kernel
def play_calling(st, u, rules, kinds, entries, params, buf, fws, uws):
    """Calling (R5-R11) from a ``CALL`` state: ``advance`` and the seats' show decisions
    (``apply_call_pass``, ``apply_show``) with the round, chance, passes in a row, the pair on
    the table and decisions in locals, until a give-back is due (``GIVEBACK``), play starts
    (``end_calling``) or the deal is void; dealing, forced passes and redeals are
    ``sim.core.step.to_decision``'s. The state gets them back before any strategy but
    random decides, before a show, and at the end, as ``advance`` and ``apply_code`` leave it.
    """
    r = st[S.S_ROUND]
    chance = st[S.S_CHANCE]
    passrun = st[S.S_PASSRUN]
    cur = st[S.S_CUR_CARD]
    decisions = st[S.S_DECISIONS]
    to_act = st[S.S_TO_ACT]
    while True:
        r, chance, passrun, cur, m = to_decision(st, u, rules, r, chance, passrun, cur)
        if m == ZERO:
            break  # calling is over
        seat = chance
        to_act = seat  # seat's decision
        kind = kinds[seat]
        code = forced_show(st, rules, seat, m)
        if code != PLAYER:
            pass  # a forced calling line (sim.tools.estimate)
        elif kind == KIND_RANDOM:  # random_decide's show branch on the locals
            i = S.U_CTR + S.STREAM_SEAT + seat
            key = u[S.U_KEY + S.STREAM_SEAT + seat]
            ctr = u[i]
            x = draw(key, ctr)
            ctr += ONE
            code = np.int64(-1)
            if (x >> _S32) < np.uint64(params[seat, P_SHOW_PROB] * 4294967296.0):
                code = select(m, bounded(draw(key, ctr), popcount(m)))
                ctr += ONE
            u[i] = ctr
        else:
            _calling_back(st, r, chance, passrun, seat, decisions)
            code = seat_decide(kind, entries, st, u, rules, seat, params, buf, fws, uws)
        if code >= 0:  # a show (R6, R8), on the state
            _calling_back(st, r, chance, passrun, seat, decisions)
            apply_show(st, u, code)
            if st[S.S_PHASE] != S.CALL:
                return  # GIVEBACK
            chance = st[S.S_CHANCE]
            passrun = 0
            cur = code
            decisions = st[S.S_DECISIONS]
            continue
        decisions += 1  # apply_call_pass
        chance, passrun = pass_chance(r, chance, passrun)
    _calling_back(st, r, chance, passrun, to_act, decisions)
    end_calling(st, u)


@kernel
def play_tricks(st, u, rules, kinds, entries, params, buf, fws, uws):
    """Trick play from the current play (``S_PHASE == PLAY``) to the end of the deal:
    ``apply_play`` (``sim.core.step``'s ``take_play``, ``lay_play``, ``close_trick``) driven by
    the seats' strategies, with the per-play state (seat, position,
    leader, tricks, cards left, points, decisions, played masks, the lead) in locals. The state
    arrays get it back before any strategy but random decides (kernels read them) and at the
    end, so they end exactly as ``apply_play`` leaves them (records are built from them).
    """
    trump = st[S.S_TRUMP]
    side = st[S.S_CALLER] & 1
    leader = st[S.S_LEADER] & 3
    pos = st[S.S_POS]
    ntricks = st[S.S_NTRICKS]
    left = st[S.S_LEFT]
    att = st[S.S_ATT_POINTS]
    decisions = st[S.S_DECISIONS]
    po = u[S.U_PLAYED_ONCE]
    pt = u[S.U_PLAYED_TWICE]
    lead_a = st[S.S_TRICK_A]
    lead_b = st[S.S_TRICK_B]
    seat = (leader + pos) & 3
    while True:
        kind = kinds[seat]
        if kind == KIND_RANDOM:  # random_decide's play branch on the locals
            o = u[S.U_ONCE + seat]
            w = u[S.U_TWICE + seat]
            if pos == 0:  # the lead's kind as constants: each copy folds to its own legal set
                code = _random_play(u, seat, o, w, np.int64(-1), np.int64(-1))
            elif lead_b < 0:
                code = _random_play(u, seat, o, w, lead_a, np.int64(-1))
            else:
                code = _random_play(u, seat, o, w, lead_a, lead_b)
        else:  # the state as apply_play leaves it before this play, then the kernel
            _tricks_back(st, u, seat, pos, leader, ntricks, left, att, decisions, po, pt)
            code = seat_decide(kind, entries, st, u, rules, seat, params, buf, fws, uws)
            o = u[S.U_ONCE + seat]
            w = u[S.U_TWICE + seat]
        a = code & CODE_FIRST_MASK  # apply_play on the locals
        b = (code >> CODE_SHIFT) - 1
        o, w, po, pt = take_play(o, w, po, pt, a, b)
        u[S.U_ONCE + seat] = o
        u[S.U_TWICE + seat] = w
        lead_a, lead_b = lay_play(st, seat, pos, lead_a, lead_b, a, b)
        decisions += 1
        if pos < 3:
            pos += 1
            seat = (seat + 1) & 3
            continue
        winner, ntricks, att, left = close_trick(st, rules, trump, side, leader, ntricks, att,
                                                 left, lead_b)
        if left == 0:  # as apply_play leaves them after the last play (pos is 3, left 0)
            _tricks_back(st, u, seat, pos, leader, ntricks, left, att, decisions, po, pt)
            st[S.S_PHASE] = S.DONE
            return
        leader = winner
        seat = winner
        pos = 0


@kernel
def summarize(st, u, row):
    """Fill one summary row (``COLUMN_NAMES``) from a finished deal."""
    row[C_REDEALS] = st[S.S_REDEALS]
    row[C_VOID] = st[S.S_VOID]
    row[C_CALLER] = st[S.S_CALLER]
    row[C_TRUMP] = st[S.S_TRUMP]
    row[C_ATT_POINTS] = st[S.S_ATT_POINTS]
    row[C_MULT] = st[S.S_MULT]
    row[C_SCORE] = st[S.S_SCORE]
    for s in range(4):
        row[C_SETTLE0 + s] = st[S.S_SETTLE + s]
    row[C_NCALLS] = st[S.S_NCALLS]
    row[C_OVERRIDES] = st[S.S_NOVERRIDES]
    row[C_SHOW_RANK] = st[S.S_CUR_CARD] // 4 if st[S.S_CUR_CARD] >= 0 else -1
    row[C_TRUMP_LEN] = trumps_held(st, u, st[S.S_CALLER]) if st[S.S_VOID] == 0 else 0
    row[C_DECISIONS] = st[S.S_DECISIONS]
    row[C_NTRICKS] = st[S.S_NTRICKS]
    n = st[S.S_NTRICKS]
    row[C_LAST_WINNER] = st[S.S_TRICKS + (n - 1) * S.TRICK_W + S.TRICK_WINNER] if n > 0 else -1
    row[C_FIRST_SHOW_ROUND] = st[S.S_CALLS] if st[S.S_NCALLS] > 0 else -1


@njit(cache=True, nogil=True)
def run_deals(seed, first, n, rules, kinds, entries, params, out, st, u, buf, fws, uws):
    """Play deals ``first … first+n-1`` of ``seed`` (uint64) in the caller's state and
    scratch; row ``i`` of ``out`` summarises deal ``first + i``, and ``(st, u)`` end holding
    the last deal's final state (records are built from it: one compiled loop serves the
    tournament's deals and its records). ``kinds``: int64[4]; ``entries``: the kernels'
    addresses (``strategies.compiled.entries``); ``params``: float64[PARAM_ROWS, N_PARAMS]
    (``strategies.params.param_table``); ``out``: int64[n, N_COLS]; ``buf``, ``fws``,
    ``uws``: scratch (``strategies.tier.new_scratch``).
    """
    for i in range(n):
        init_deal(st, u, seed, first + np.uint64(i))
        finish_deal(st, u, rules, kinds, entries, params, buf, fws, uws)
        summarize(st, u, out[i])


def _entries(kinds, entries):
    """``entries`` as given, or the table for the built-in ``kinds``."""
    if entries is not None:
        return entries
    return entry_table(int(k) for k in kinds)


def play_deals(seed, first, n, rules, kinds, params, out, entries=None):
    """``run_deals`` in a new state and scratch: row ``i`` of ``out`` summarises deal
    ``first + i`` of ``seed``; ``entries``: the table of the kinds' kernels (made for the
    built-in ``kinds`` when None)."""
    st, u = new_state()
    buf = np.empty(INT_SCRATCH, dtype=np.int64)  # not zeroed: ~10 MB, mostly never touched
    fws = np.empty(FLOAT_SCRATCH, dtype=np.float64)  # (no kernel reads scratch unwritten)
    uws = np.empty(UINT_SCRATCH, dtype=np.uint64)
    run_deals(seed, first, n, rules, kinds, _entries(kinds, entries), params, out, st, u, buf,
              fws, uws)


def play_deal(st, u, rules, seed, deal, kinds, params, buf, fws, uws, entries=None):
    """Play deal ``deal`` of ``seed`` (uint64) to the end in ``(st, u)`` (its record's
    state) with the seats' compiled strategies: ``run_deals`` of one deal."""
    run_deals(seed, deal, 1, rules, kinds, _entries(kinds, entries), params,
              np.zeros((1, N_COLS), dtype=np.int64), st, u, buf, fws, uws)


@njit(cache=True, nogil=True)
def run_deals_fixed(seed, first, n, rules, kinds, entries, params, fix_seat, fix_cards, out):
    """``run_deals`` in a state of its own, with the card ids ``fix_cards`` dealt to
    ``fix_seat`` in every deal."""
    st = np.zeros(S.ST_SIZE, dtype=np.int64)
    u = np.zeros(S.U_SIZE, dtype=np.uint64)
    buf = np.empty(INT_SCRATCH, dtype=np.int64)  # not zeroed: ~10 MB, mostly never touched
    fws = np.empty(FLOAT_SCRATCH, dtype=np.float64)  # (no kernel reads scratch unwritten)
    uws = np.empty(UINT_SCRATCH, dtype=np.uint64)
    for i in range(n):
        init_deal_fixed(st, u, seed, first + np.uint64(i), fix_seat, fix_cards)
        finish_deal(st, u, rules, kinds, entries, params, buf, fws, uws)
        summarize(st, u, out[i])


def play_deals_fixed(seed, first, n, rules, kinds, params, fix_seat, fix_cards, out,
                     entries=None):
    """``play_deals`` with the card ids ``fix_cards`` dealt to ``fix_seat`` in every deal."""
    run_deals_fixed(seed, first, n, rules, kinds, _entries(kinds, entries), params, fix_seat,
                    fix_cards, out)
