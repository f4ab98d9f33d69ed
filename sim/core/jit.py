"""The one decorator of every compiled kernel.

``@kernel`` is ``numba.njit(cache=True)`` without numba's reference-counting runtime: kernels
only read and write arrays their caller allocated, so they need no allocator, and without
the runtime numba emits no atomic reference-count updates around every call that passes an
array. On the whole-deal loop that doubles throughput (measured: ~50k -> ~100k random
deals/s on one core), at no cost in compile time. A kernel that tried to allocate would fail
to compile, which is what we want. Functions that allocate (the batch drivers) use
``numba.njit(cache=True)`` directly.
"""

from __future__ import annotations

import sys

from numba import njit

import sim.core._cache  # noqa: F401  (sets numba's cache folder before any kernel is defined)


class _NoBlasProbe:
    """Import finder that refuses scipy's BLAS module (see ``_load_numba_math``)."""

    @staticmethod
    def find_spec(name, path=None, target=None):
        if name in ("scipy.linalg", "scipy.linalg.cython_blas"):
            raise ImportError("not probed: sim.jit")
        return None


def _load_numba_math() -> None:
    """Import ``numba.np.arraymath`` (numba imports it before it loads or compiles the first
    kernel of a process) without its BLAS probe, which imports all of ``scipy.linalg`` when
    scipy is installed: about 0.5 s of every process and tournament worker. The probe only
    picks how numba compiles ``np.cov``-like inner products (a plain loop without it), which
    no kernel here uses; ``np.dot`` and ``np.linalg`` still find scipy when a kernel uses them.
    """
    if "numba.np.arraymath" in sys.modules or "scipy.linalg" in sys.modules:
        return
    sys.meta_path.insert(0, _NoBlasProbe)
    try:
        import numba.np.arraymath  # noqa: F401
    finally:
        sys.meta_path.remove(_NoBlasProbe)


_load_numba_math()
sim.core._cache.tolerate_broken_cache_files()  # a truncated cache file: compile again
sim.core._cache.compile_watch()  # every kernel compiled says so on the terminal (sim.core._cache)


def kernel(fn=None, **options):
    """``@kernel`` or ``@kernel(**numba_options)``: a cached, runtime-free numba function."""
    options.setdefault("cache", True)
    options.setdefault("_nrt", False)
    if fn is None:
        return lambda f: njit(**options)(f)
    return njit(**options)(fn)
