"""Where numba caches compiled kernels: a folder named after a hash of the kernel sources.

numba's on-disk cache checks only the file that defines a function, not the files of the
functions it calls: after editing ``strategies/greedy.py`` the cached deal loop would still
run the old greedy. Keying the cache folder by a hash of every source file of ``sim`` and
``strategies`` that defines kernels makes any change compile afresh (about 50 s) instead
of running stale code.
The folder is ``$SHUANGKOU_CACHE_DIR`` if set, else ``$NUMBA_CACHE_DIR``, else
``~/.cache/shuangkou``, plus ``/kernels-<hash>``. ``configure`` sets ``NUMBA_CACHE_DIR`` to
that folder, and worker processes inherit it: a ``NUMBA_CACHE_DIR`` that already ends in
``kernels-<hash>`` stands for its parent folder, so a worker finds the parent's kernels
instead of nesting ``kernels-<hash>/kernels-<hash>`` and compiling them all again.
"""

from __future__ import annotations

import glob
import hashlib
import os
import re
import sys
import time
from collections.abc import Callable
from typing import Any, TextIO

_KERNELS = re.compile(r"kernels-[0-9a-f]{16}")


def configure() -> str:
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    h = hashlib.sha256()
    for pkg in ("sim", "strategies"):
        folder = os.path.join(root, pkg)
        for name in sorted(os.listdir(folder)):
            if name.endswith(".py"):
                with open(os.path.join(folder, name), "rb") as f:
                    text = f.read()
                if b"@kernel" in text or b"njit" in text:  # only modules that compile code
                    h.update(name.encode() + b"\0" + text)
    h.update(b"pdep" if __import__("sim._cpu", fromlist=["USE_PDEP"]).USE_PDEP else b"")
    numba_dir = os.environ.get("NUMBA_CACHE_DIR", "")
    if _KERNELS.fullmatch(os.path.basename(os.path.normpath(numba_dir or "."))):
        numba_dir = os.path.dirname(os.path.normpath(numba_dir))  # set by configure(): inherited
    base = (os.environ.get("SHUANGKOU_CACHE_DIR") or numba_dir
            or os.path.join(os.path.expanduser("~"), ".cache", "shuangkou"))
    path = os.path.join(base, "kernels-" + h.hexdigest()[:16])
    os.environ["NUMBA_CACHE_DIR"] = path
    try:  # numba may already be imported (e.g. by the user); point its config there too
        import sys

        if "numba" in sys.modules:
            sys.modules["numba"].config.CACHE_DIR = path
    except Exception:  # pragma: no cover - best effort
        pass
    return path


CACHE_DIR = configure()

COMPILE_SECONDS = 60  # the first compile of the deal loop and every player (2-core machine)


def kernels_cached(kernel: str = "loop.play_deals", path: str | None = None) -> bool:
    """Whether numba's cache holds ``kernel`` (``module.function``): one look for its index
    file (``<path>/<source folder>/<kernel>-<line>.pyXY.nbi``), no import, no compiling."""
    pattern = os.path.join(glob.escape(path or CACHE_DIR), "*", glob.escape(kernel) + "-*.nbi")
    return bool(glob.glob(pattern))


def compile_first(run: Callable[[], Any], kernel: str = "loop.play_deals",
                  seconds: int = COMPILE_SECONDS, path: str | None = None,
                  stream: TextIO | None = None) -> bool:
    """On a cold cache (``kernel`` not compiled yet): say that the wait is the compiler, call
    ``run`` (which compiles), then say how long it took. Returns whether it did; on a warm
    cache ``run`` is not called and nothing is printed."""
    if kernels_cached(kernel, path):
        return False
    out = stream or sys.stderr
    print(f"compiling the engine for this machine (first run only, about {seconds} s)…",
          file=out, flush=True)
    t0 = time.perf_counter()
    run()
    print(f"compiled in {time.perf_counter() - t0:.0f} s; later runs load it from "
          f"{path or CACHE_DIR}", file=out, flush=True)
    return True
