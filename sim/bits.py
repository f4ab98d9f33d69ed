"""Bit primitives on ``uint64`` masks, each with a one-line contract (compiled).

All masks are ``np.uint64``; never mix them with signed integers in an expression (numba
would promote to float). Single bits come from ``sim.cards.BIT``.
"""

from __future__ import annotations

import numpy as np
from numba import types
from numba.cpython.unsafe.numbers import leading_zeros, trailing_zeros
from numba.extending import intrinsic

from sim.jit import kernel

ONE = np.uint64(1)
ZERO = np.uint64(0)


@intrinsic
def _ctpop(typingctx, x):
    """LLVM ``ctpop``: the population count instruction where the CPU has one."""
    if not isinstance(x, types.Integer):
        return None
    sig = x(x)

    def codegen(context, builder, signature, args):
        return builder.ctpop(args[0])

    return sig, codegen


@kernel
def popcount(m):
    """Number of set bits of ``m``."""
    return np.int64(_ctpop(np.uint64(m)))


@kernel
def lsb(m):
    """Index of the lowest set bit of a non-zero ``m``."""
    return np.int64(trailing_zeros(np.uint64(m)))


@kernel
def msb(m):
    """Index of the highest set bit of a non-zero ``m``."""
    return np.int64(63 - np.int64(leading_zeros(np.uint64(m))))


@kernel
def clear_lsb(m):
    """``m`` without its lowest set bit."""
    return m & (m - ONE)


@kernel
def select(m, k):
    """Index of the ``k``-th (from 0) lowest set bit of ``m``; requires ``k < popcount(m)``."""
    for _ in range(k):
        m = m & (m - ONE)
    return np.int64(trailing_zeros(m))
