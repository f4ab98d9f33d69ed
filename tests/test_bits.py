"""The bit primitives: ``pdep`` select and its portable fallback agree, and so do the
pure-Python intrinsics used under ``NUMBA_DISABLE_JIT=1``."""

from __future__ import annotations

import numpy as np
import pytest
from numba import njit

from sim.core import _cpu, bits


def _masks(n=300, seed=5):
    rng = np.random.default_rng(seed)
    out = [np.uint64(1), np.uint64(1 << 63), np.uint64((1 << 64) - 1), np.uint64((1 << 54) - 1)]
    for _ in range(n):  # sparse and dense masks, like hands and legal sets
        density = rng.uniform(0.05, 0.95)
        m = 0
        for i in range(64):
            if rng.random() < density:
                m |= 1 << i
        if m:
            out.append(np.uint64(m))
    return out


def _ref_select(m, k):
    return [i for i in range(64) if (int(m) >> i) & 1][k]


@njit(cache=False)
def _all_selects(masks, select_id, out):
    n = 0
    for m in masks:
        for k in range(bits.popcount(m)):
            out[n] = bits.select_portable(m, k) if select_id == 0 else bits.select_pdep(m, k)
            n += 1
    return n


def _expected(masks):
    return [_ref_select(m, k) for m in masks for k in range(int(m).bit_count())]


def test_portable_select_matches_reference():
    masks = _masks()
    out = np.zeros(64 * len(masks), dtype=np.int64)
    n = _all_selects(np.array(masks, dtype=np.uint64), 0, out)
    assert out[:n].tolist() == _expected(masks)


@pytest.mark.skipif(not _cpu.host_has_bmi2(), reason="the CPU has no BMI2 (pdep)")
def test_pdep_select_matches_portable():
    masks = _masks(seed=9)
    arr = np.array(masks, dtype=np.uint64)
    a = np.zeros(64 * len(masks), dtype=np.int64)
    b = np.zeros(64 * len(masks), dtype=np.int64)
    assert _all_selects(arr, 0, a) == _all_selects(arr, 1, b)
    assert np.array_equal(a, b)


def test_select_is_the_import_time_choice():
    assert bits.select is (bits.select_pdep if _cpu.USE_PDEP else bits.select_portable)


def test_pdep_off_switch(monkeypatch):
    monkeypatch.setenv("SHUANGKOU_PDEP", "0")
    assert _cpu._use_pdep() is False
    monkeypatch.setenv("SHUANGKOU_PDEP", "1")
    monkeypatch.setenv("NUMBA_CPU_NAME", "generic")  # a portable build: no BMI2 named
    monkeypatch.delenv("NUMBA_CPU_FEATURES", raising=False)
    assert _cpu._use_pdep() is False


def test_pure_python_intrinsics_match_compiled():
    for m in _masks(100, seed=3):
        assert int(bits._py_ctpop(m)) == int(bits.popcount(m))
        assert int(bits._py_ctz(m)) == int(bits.lsb(m))
        assert 63 - int(bits._py_clz(m)) == int(bits.msb(m))
        for k in range(0, int(m).bit_count(), 3):
            assert int(bits._py_ctz(bits._py_pdep(1 << k, m))) == _ref_select(m, k)
    assert int(bits._py_pdep(0b101, 0b11110000)) == 0b01010000


def _key_layout_by_runs(m, t, gather):
    from sim.cards import KEY_RUN_MASK, KEY_RUN_SHIFT, KEY_RUNS

    out = 0
    for r in range(int(KEY_RUNS[t])):
        out |= int(gather(np.uint64(m), KEY_RUN_MASK[t, r])) << int(KEY_RUN_SHIFT[t, r])
    return out


def test_id_to_key_layout_by_bit_gathers():
    """start_play's pext path (sim.cards.KEY_RUN_MASK) is the per-card KEY_OF_ID mapping."""
    from sim.cards import KEY_OF_ID

    gathers = [bits._py_pext] + ([bits.pext] if _cpu.host_has_bmi2() else [])
    for m in _masks(60, seed=4) + [np.uint64((1 << 54) - 1)]:
        m = int(m) & ((1 << 54) - 1)
        for t in range(4):
            want = sum(1 << int(KEY_OF_ID[t, c]) for c in range(54) if m >> c & 1)
            for g in gathers:
                assert _key_layout_by_runs(m, t, g) == want, (hex(m), t, g)
