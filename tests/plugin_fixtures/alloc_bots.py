"""Compiled plug-ins for tests/test_plugins.py and tests/test_bot_failures.py: a kernel that
allocates with ``np.zeros`` (numba allows it; the deal loops' fast path does not), which by
its ``mode`` parameter also writes out of bounds or never returns at trick 3, and a class
that passes more numbers to its kernel than reach it."""

from __future__ import annotations

import numba
import numpy as np

from sim import view
from strategies.base import Strategy, param
from strategies.params import N_PARAMS


@numba.njit(cache=True)
def alloc_kernel(st, u, rules, seat, params, buf):
    n = view.legal_codes(st, u, buf)
    counts = np.zeros(n + 1, dtype=np.int64)  # an allocation inside the kernel
    counts[n] = n
    if view.phase(st) == view.PLAY and view.n_tricks(st) == 3:
        if params[0] == 1:
            buf[buf.shape[0] + (1 << 36)] = 1  # far out of bounds
        if params[0] == 2:
            while buf[0] != -7:  # never returns (a legal code is never -7)
                buf[1] += 1
    if view.phase(st) == view.CALL:
        return view.PASS
    return buf[counts[n] - 1]


class Alloc(Strategy):
    name = "alloc"
    kernel = alloc_kernel
    mode = param(0, int, lo=0, hi=2, doc="1: write out of bounds at trick 3; 2: never return "
                                          "there")


class TooMany(Alloc):
    """Passes N_PARAMS + 1 numbers to its kernel: one more than reach it."""

    name = "too_many"

    def compiled_params(self):
        return [float(i) for i in range(N_PARAMS + 1)]


@numba.njit(cache=True)
def wild_kernel(st, u, rules, seat, params, buf):
    """No allocation (it runs inlined in the deal loops, without bounds checks)."""
    n = view.legal_codes(st, u, buf)
    if view.phase(st) == view.PLAY and view.n_tricks(st) == 3:
        both_sj = view.first_hand_twice(u, seat) & (np.uint64(1) << np.uint64(52))
        if params[0] == 1:
            buf[buf.shape[0] + (1 << 36)] = 1  # far out of bounds: a segfault
        if params[0] == 2 or (params[0] == 3 and both_sj):
            while buf[0] != -7:  # never returns (a legal code is never -7)
                buf[1] += 1
    if view.phase(st) == view.CALL:
        return view.PASS
    return buf[n - 1]


class Wild(Strategy):
    name = "wild"
    kernel = wild_kernel
    mode = param(0, int, lo=0, hi=3, doc="at trick 3: 1 write out of bounds; 2 never return; "
                                          "3 never return if it holds both SJ")
