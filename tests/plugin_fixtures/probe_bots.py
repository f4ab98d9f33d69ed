"""Compiled plug-ins for tests/test_plugins.py: a probe that checks it only sees the masked
state, and which, by its ``mode`` parameter, returns an illegal code or raises at trick 3."""

from __future__ import annotations

import numba
import numpy as np

from sim import view
from sim.core import state as S
from strategies.base import Strategy, param


@numba.njit(cache=True)
def probe_kernel(st, u, rules, seat, params, buf):
    for s in range(4):  # R9: no other hand, now or at the first lead
        if s != seat and (u[S.U_ONCE + s] | u[S.U_TWICE + s] | u[S.U_FIRST_ONCE + s]
                          | u[S.U_FIRST_TWICE + s]) != 0:
            raise RuntimeError("saw another hand")
    for i in range(S.S_DECK, S.S_TRICKS):  # ... nor the deck
        if st[i] != -1:
            raise RuntimeError("saw the deck")
    for i in range(S.S_FIX, st.shape[0]):
        if st[i] != -1:
            raise RuntimeError("saw the fixed cards")
    n = view.legal_codes(st, u, buf)
    code = buf[n - 1]
    if view.phase(st) == view.CALL:
        code = buf[0] if view.dealing_round(st) > 20 else view.PASS
    elif view.phase(st) == view.PLAY and view.n_tricks(st) == 3:
        if params[0] == 1:
            code = 9999  # not a legal code
        if params[0] == 2:
            raise ValueError("boom")
        if params[0] == 3 and view.first_hand_twice(u, seat) & (np.uint64(1) << np.uint64(52)):
            code = 9999  # only in the deals where this seat was dealt both small jokers
    if params[1] == 1:  # tamper, once it has chosen: with its copies of the rules and state
        rules[:] = 50
        st[0:20] = 0
        params[0] = 1  # would make its later decisions at trick 3 illegal
    return code


class Probe(Strategy):
    name = "probe"
    kernel = probe_kernel
    mode = param(0, int, lo=0, hi=3, doc="1: an illegal code at trick 3; 2: raise there; "
                                          "3: an illegal code there if it holds both SJ")
    tamper = param(False, bool, doc="write into its rules and state arrays")


@numba.njit(cache=True)
def dice_kernel(st, u, rules, seat, params, buf):
    """The built-in ``random`` (docs/engine.md) written with sim.view's random stream."""
    n = view.legal_codes(st, u, buf)
    ph = view.phase(st)
    if ph == view.CALL:
        r = view.random_u64(u, seat)
        if (r >> np.uint64(32)) < np.uint64(params[0] * 4294967296.0):
            return buf[view.random_below(u, seat, n)]
        return view.PASS
    if ph == view.PLAY and n == 1:
        return buf[0]
    return buf[view.random_below(u, seat, n)]


class Dice(Strategy):
    name = "dice"
    kernel = dice_kernel
    show_prob = param(0.25, float, lo=0.0, hi=1.0)
