"""Bit primitives on ``uint64`` masks, each with a one-line contract (compiled).

All masks are ``np.uint64``; never mix them with signed integers in an expression (numba
would promote to float). Single bits come from ``sim.cards.BIT``.

``select`` (the k-th set bit, one per random choice) uses the x86 BMI2 instruction ``pdep``
where ``sim.core._cpu`` allows it, else a bit-by-bit loop (``select_portable``); both give the same
answers (tests/test_bits.py). Under ``NUMBA_DISABLE_JIT=1`` the LLVM intrinsics are replaced by
pure-Python equivalents, so the kernels run as plain Python (slowly) for debugging.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils, config
from numba.cpython.unsafe.numbers import leading_zeros, trailing_zeros
from numba.extending import intrinsic

from sim.core._cpu import USE_PDEP
from sim.core.jit import kernel

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


def _bmi2(op: str, doc: str) -> Any:
    """The x86 BMI2 instruction ``op`` (``pdep``/``pext``) on two uint64 as a numba intrinsic.
    Compiles only for a CPU with BMI2: call it only when ``USE_PDEP``."""
    @intrinsic
    def bmi2(typingctx, src, mask):
        if not (isinstance(src, types.Integer) and isinstance(mask, types.Integer)):
            return None
        sig = types.uint64(types.uint64, types.uint64)

        def codegen(context, builder, signature, args):
            i64 = ir.IntType(64)
            fn = cgutils.get_or_insert_function(
                builder.module, ir.FunctionType(i64, [i64, i64]), f"llvm.x86.bmi.{op}.64")
            return builder.call(fn, args)

        return sig, codegen

    bmi2.__doc__ = doc
    return bmi2


_pdep = _bmi2("pdep", "``pdep``: the low bits of ``src`` deposited at the set bits of ``mask``.")
_pext = _bmi2("pext", "``pext``: the bits of ``src`` at the set bits of ``mask``, packed low.")


_ctz = trailing_zeros
_clz = leading_zeros
_M64 = (1 << 64) - 1


def _py_ctpop(x):
    """Pure-Python ``_ctpop`` (``NUMBA_DISABLE_JIT=1``)."""
    return np.uint64((int(x) & _M64).bit_count())


def _py_ctz(x):
    """Pure-Python ``trailing_zeros`` of a non-zero uint64."""
    x = int(x) & _M64
    return np.uint64((x & -x).bit_length() - 1)


def _py_clz(x):
    """Pure-Python ``leading_zeros`` of a non-zero uint64."""
    return np.uint64(64 - (int(x) & _M64).bit_length())


def _py_pdep(src, mask):
    """Pure-Python ``pdep``: bit ``i`` of ``src`` goes to the ``i``-th set bit of ``mask``."""
    src, mask = int(src) & _M64, int(mask) & _M64
    out, i = 0, 0
    while mask:
        low = mask & -mask
        if (src >> i) & 1:
            out |= low
        mask ^= low
        i += 1
    return np.uint64(out)


def _py_pext(src, mask):
    """Pure-Python ``pext``: the bits of ``src`` at the set bits of ``mask``, packed low."""
    src, mask = int(src) & _M64, int(mask) & _M64
    out, i = 0, 0
    while mask:
        low = mask & -mask
        if src & low:
            out |= 1 << i
        mask ^= low
        i += 1
    return np.uint64(out)


if config.DISABLE_JIT:  # the kernels run as Python: give them Python intrinsics
    _ctpop, _ctz, _clz, _pdep, _pext = _py_ctpop, _py_ctz, _py_clz, _py_pdep, _py_pext


@kernel
def popcount(m):
    """Number of set bits of ``m``."""
    return np.int64(_ctpop(np.uint64(m)))


@kernel
def lsb(m):
    """Index of the lowest set bit of a non-zero ``m``."""
    return np.int64(_ctz(np.uint64(m)))


@kernel
def msb(m):
    """Index of the highest set bit of a non-zero ``m``."""
    return np.int64(63 - np.int64(_clz(np.uint64(m))))


@kernel
def clear_lsb(m):
    """``m`` without its lowest set bit."""
    return m & (m - ONE)


@kernel
def _select_step(m, k, pos, w):
    """One halving step of ``select_portable``: the target in the low ``w`` bits of ``m``."""
    c = np.int64(_ctpop(m & ((ONE << np.uint64(w)) - ONE)))
    up = k >= c
    return (m >> np.uint64(w) if up else m), (k - c if up else k), (pos + w if up else pos)


@kernel
def select_portable(m, k):
    """Index of the ``k``-th (from 0) lowest set bit of ``m``; requires ``k < popcount(m)``.
    Branch-free halving by population counts (the target lies in the low or high half)."""
    m = np.uint64(m)
    k = np.int64(k)
    pos = np.int64(0)
    m, k, pos = _select_step(m, k, pos, 32)
    m, k, pos = _select_step(m, k, pos, 16)
    m, k, pos = _select_step(m, k, pos, 8)
    m, k, pos = _select_step(m, k, pos, 4)
    m, k, pos = _select_step(m, k, pos, 2)
    m, k, pos = _select_step(m, k, pos, 1)
    return pos


@kernel
def select_pdep(m, k):
    """``select_portable`` with ``pdep`` (x86 BMI2 only): deposit bit ``k`` at ``m``'s k-th
    set bit and take its index."""
    return np.int64(_ctz(_pdep(ONE << np.uint64(k), np.uint64(m))))


@kernel
def pext(x, mask):
    """The bits of ``x`` at the set bits of ``mask``, packed into the low bits (x86 BMI2 only:
    callers test ``USE_PDEP`` and keep a portable path)."""
    return _pext(np.uint64(x), np.uint64(mask))


select = select_pdep if USE_PDEP else select_portable
"""Index of the ``k``-th (from 0) lowest set bit of ``m``; requires ``k < popcount(m)``."""
