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

from numba import njit

import sim.core._cache  # noqa: F401  (sets numba's cache folder before any kernel is defined)


def kernel(fn=None, **options):
    """``@kernel`` or ``@kernel(**numba_options)``: a cached, runtime-free numba function."""
    options.setdefault("cache", True)
    options.setdefault("_nrt", False)
    if fn is None:
        return lambda f: njit(**options)(f)
    return njit(**options)(fn)
