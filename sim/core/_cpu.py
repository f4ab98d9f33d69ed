"""Which optional instructions the kernels use, decided once at import, before anything compiles.

Only one so far: ``pdep`` (x86 BMI2) for ``sim.core.bits.select``, the k-th set bit of a mask that
every random choice makes (3 ns instead of a bit-by-bit loop's 13). It is used when numba
compiles for a CPU that has BMI2 (the host unless ``NUMBA_CPU_NAME`` says otherwise), except on
AMD before Zen 3, where ``pdep`` is microcoded and slower than the loop.
``SHUANGKOU_PDEP=0`` forces the portable loop. The choice is part of the kernel cache key
(``sim.core._cache``), so kernels compiled with ``pdep`` are never loaded where it is missing.
This module must not import numba: ``sim.core._cache`` reads it before numba is configured.
"""

from __future__ import annotations

import os
import platform

_SLOW_PDEP = ("znver1", "znver2", "bdver", "btver")  # AMD: pdep microcoded (~250 cycles)


def _use_pdep() -> bool:
    if os.environ.get("SHUANGKOU_PDEP", "1").strip().lower() in ("0", "no", "false", "off"):
        return False
    cpu = os.environ.get("NUMBA_CPU_NAME", "")
    if cpu and cpu != "host":  # compiling for a named CPU: only the features named for it
        return "+bmi2" in os.environ.get("NUMBA_CPU_FEATURES", "")
    return host_has_bmi2() and not _host_cpu_name().startswith(_SLOW_PDEP)


def _host_cpu_name() -> str:
    import llvmlite.binding as llvm

    return str(llvm.get_host_cpu_name())


def host_has_bmi2() -> bool:
    """Whether this machine's CPU has BMI2 (whatever numba is told to compile for)."""
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return False
    import llvmlite.binding as llvm

    return bool(llvm.get_host_cpu_features().get("bmi2", False))


USE_PDEP = _use_pdep()
