"""The deal loops of a run with compiled plug-ins (docs/strategies.md), compiled once.

A plug-in's kernel is compiled once, alone, inside its entry (``strategies.plugin_entry``,
signature ``PLUGIN_SIG``), and these loops call it through its address in the table
``entries`` at its kind (``N_BUILTIN`` … ``N_BUILTIN + 3``: a deal has four seats, so at most
four plug-ins), as they call the built-in kinds beyond random and greedy
(``strategies.compiled.decide``, ``sim.core.calls``): any set of plug-ins and built-ins plays in
the same compiled loops.

A plug-in seat decides on its own masked copy of the state (``sim.view.mask_into``: what its
seat may know, R9), kept in step trick by trick (``mask_update``), with copies of the rules
and its parameter row it may scribble on; its code is checked with ``sim.view.is_legal`` and
the loops stop at the first illegal one with ``status`` saying where (``sim.loops.plugins``
turns that into one ``StrategyError``). The built-in kinds take the hot paths of
``sim.loops.loop.finish_deal``.
"""

from __future__ import annotations

import numpy as np
from numba import jit, njit

from sim.core import state as S
from sim.core.engine import (
    advance,
    apply_code_inline,
    apply_play_inline,
    init_deal,
    init_deal_fixed,
)
from sim.core.jit import kernel
from sim.core.layout import layout
from sim.core.movegen import code_first, code_second
from sim.loops.loop import summarize
from sim.view import is_legal, mask_into, unmask_streams
from sim.view import mask_update as _mask_update
from strategies.compiled import decide as builtin_decide
from strategies.greedy import greedy_decide_inline
from strategies.kinds import (
    FLOAT_SCRATCH,
    INT_SCRATCH,
    KIND_GREEDY,
    KIND_RANDOM,
    N_BUILTIN,
    PLUGIN_SCRATCH,
    UINT_SCRATCH,
)
from strategies.plugin_entry import call_plugin
from strategies.random import P_SHOW_PROB, random_decide_inline

# status of the loops (int64[N_STATUS], one per call): the deal being played (its offset from
# the first), the seat deciding, 1 after an illegal code, that code, and the decisions started
# (the watch of a time limit sees progress by it)
STATUS_FIELDS = (("ST_DEAL", 1), ("ST_SEAT", 1), ("ST_ERROR", 1), ("ST_CODE", 1),
                 ("ST_CALLS", 1))
_STATUS, N_STATUS = layout(STATUS_FIELDS)
ST_DEAL = _STATUS["ST_DEAL"]
ST_SEAT = _STATUS["ST_SEAT"]
ST_ERROR = _STATUS["ST_ERROR"]
ST_CODE = _STATUS["ST_CODE"]
ST_CALLS = _STATUS["ST_CALLS"]

mask_update = jit(nopython=True, nogil=True, _nrt=False, inline="always")(_mask_update.py_func)


@kernel(inline="always")
def _plugin(kind, entries, st, u, rules, seat, params, m_st, m_u, m_r, m_p, pbuf, status):
    status[ST_SEAT] = seat
    nr = rules.shape[0]
    npar = params.shape[1]
    for i in range(nr):  # its own copies: a kernel cannot change the rules
        m_r[i] = rules[i]  # nor its parameters for later decisions
    for i in range(npar):
        m_p[i] = params[seat, i]
    code = call_plugin(entries[kind], (m_st, m_u, m_r[:nr], seat, m_p[:npar], pbuf))
    unmask_streams(u, m_u, seat)
    if not is_legal(st, u, code):
        status[ST_ERROR] = 1
        status[ST_CODE] = code
    return code


@kernel(nogil=True)
def decide(kind, entries, params, st, u, rules, seat, buf, fws, uws, m_st, m_u, m_r, m_p, pbuf,
           synced, status):
    """The code of seat ``seat``'s strategy (``kind``) at the state's decision."""
    if kind < N_BUILTIN:
        return builtin_decide(kind, entries, params, st, u, rules, seat, buf, fws, uws)
    mask_into(st, u, seat, m_st[seat], m_u[seat])
    return _plugin(kind, entries, st, u, rules, seat, params, m_st[seat], m_u[seat], m_r[seat],
                   m_p[seat], pbuf[seat], status)


@kernel(nogil=True)
def finish_deal(st, u, rules, kinds, entries, params, buf, fws, uws, m_st, m_u, m_r, m_p, pbuf,
                synced, status):
    """Play an initialised deal to the end (or to a plug-in's first illegal code)."""
    for s in range(4):  # each plug-in seat's own masked copy, synced trick by trick
        synced[s] = 0
    advance(st, u, rules)
    while st[S.S_PHASE] != S.DONE:
        seat = st[S.S_TO_ACT]
        status[ST_SEAT] = seat
        status[ST_CALLS] += 1
        kind = kinds[seat]
        if kind == KIND_RANDOM:  # the built-ins' hot paths as in sim.loops.loop.finish_deal
            code = random_decide_inline(st, u, seat, params[seat, P_SHOW_PROB], buf)
        elif kind == KIND_GREEDY:
            code = greedy_decide_inline(st, u, rules, seat, params, seat, buf)
        elif kind < N_BUILTIN:
            code = builtin_decide(kind, entries, params, st, u, rules, seat, buf, fws, uws)
        else:
            mask_update(st, u, seat, m_st[seat], m_u[seat], synced)
            code = _plugin(kind, entries, st, u, rules, seat, params, m_st[seat], m_u[seat],
                           m_r[seat], m_p[seat], pbuf[seat], status)
            if status[ST_ERROR] != 0:
                return
        if st[S.S_PHASE] == S.PLAY:
            apply_play_inline(st, u, rules, code_first(code), code_second(code))
        else:
            apply_code_inline(st, u, rules, code)


@kernel(nogil=True)
def play_deal(st, u, rules, seed, deal, kinds, entries, params, buf, fws, uws, m_st, m_u, m_r, m_p,
              pbuf, synced, status):
    """Deal ``deal`` of ``seed`` into ``st``/``u`` and play it to the end."""
    init_deal(st, u, seed, deal)
    finish_deal(st, u, rules, kinds, entries, params, buf, fws, uws, m_st, m_u, m_r, m_p, pbuf,
                synced, status)


@njit(cache=True, nogil=True, inline="always")
def _work(rules, params):
    """The state and scratch of ``play_deals``: its own, each seat's masked copies and
    copies of the rules and parameters, the plug-ins' and the built-ins' scratch."""
    m_st = np.zeros((4, S.ST_SIZE), dtype=np.int64)
    for s in range(4):
        for i in range(S.S_DECK, S.ST_SIZE):  # the deck and fixed cards: never shown
            m_st[s, i] = -1
    return (np.zeros(S.ST_SIZE, dtype=np.int64), np.zeros(S.U_SIZE, dtype=np.uint64), m_st,
            np.zeros((4, S.U_SIZE), dtype=np.uint64), np.zeros((4, rules.shape[0]), dtype=np.int64),
            np.zeros((4, params.shape[1]), dtype=np.float64),
            np.zeros((4, PLUGIN_SCRATCH), dtype=np.int64), np.zeros(4, dtype=np.int64),
            np.zeros(INT_SCRATCH, dtype=np.int64), np.zeros(FLOAT_SCRATCH, dtype=np.float64),
            np.zeros(UINT_SCRATCH, dtype=np.uint64))


@njit(cache=True, nogil=True, inline="always")
def _finish(rules, kinds, entries, params, w, status, row):
    """Play the deal dealt into ``w`` to the end and summarise it into ``row``: False when a
    plug-in stopped it with an illegal code (``status`` says where)."""
    st, u, m_st, m_u, m_r, m_p, pbuf, synced, buf, fws, uws = w
    finish_deal(st, u, rules, kinds, entries, params, buf, fws, uws, m_st, m_u, m_r, m_p, pbuf,
                synced, status)
    if status[ST_ERROR] != 0:
        return False
    summarize(st, u, row)
    return True


@njit(cache=True, nogil=True)
def play_deals(seed, first, n, rules, kinds, entries, params, status, out):
    """Play deals ``first`` … ``first + n - 1`` of ``seed``, row ``i`` of ``out`` summarising
    deal ``first + i``; ``status[ST_DEAL]`` ends at ``n``, or at the deal a plug-in stopped."""
    w = _work(rules, params)
    for i in range(n):
        status[ST_DEAL] = i
        init_deal(w[0], w[1], seed, first + np.uint64(i))
        if not _finish(rules, kinds, entries, params, w, status, out[i]):
            return
    status[ST_DEAL] = n


@njit(cache=True, nogil=True)
def play_deals_fixed(seed, first, n, rules, kinds, entries, params, fix_seat, fix_cards, status,
                     out):
    """``play_deals`` with the card ids ``fix_cards`` dealt to ``fix_seat`` in every deal."""
    w = _work(rules, params)
    for i in range(n):
        status[ST_DEAL] = i
        init_deal_fixed(w[0], w[1], seed, first + np.uint64(i), fix_seat, fix_cards)
        if not _finish(rules, kinds, entries, params, w, status, out[i]):
            return
    status[ST_DEAL] = n
