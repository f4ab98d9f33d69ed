"""Where numba caches compiled kernels: a folder named after a hash of the kernel sources.

numba's on-disk cache checks only the file that defines a function, not the files of the
functions it calls: after editing ``strategies/greedy.py`` the cached deal loop would still
run the old greedy. Keying the cache folder by a hash of every source a kernel can be built
from (``kernel_sources``: each module of ``sim`` and ``strategies``, subfolders included, that
compiles code, and every project module those import, whose constants numba freezes in) makes
any change compile afresh instead of running stale code. The deal loops generated per set of
strategy kinds (``sim.harness.plugins``) live inside that folder, named by a hash of their own text.
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


_COMPILES = re.compile(rb"numba|njit|@kernel|sim\.core\.jit")  # a module that compiles code
_FROM = re.compile(rb"^[ \t]*from[ \t]+((?:sim|strategies)(?:\.\w+)*)[ \t]+import[ \t]+"
                   rb"(\([^)]*\)|[^\n]*)", re.M)
_IMPORT = re.compile(rb"^[ \t]*import[ \t]+((?:sim|strategies)(?:\.\w+)*)", re.M)


def kernel_sources(root: str) -> dict[str, bytes]:
    """Every source a cached kernel can be built from: each module of ``sim`` and
    ``strategies`` (subfolders too) that compiles code, and every project module it imports,
    at any depth (numba freezes their constants into the kernels). Paths relative to
    ``root``."""
    texts: dict[str, bytes] = {}
    for pkg in ("sim", "strategies"):
        for dirpath, dirnames, files in os.walk(os.path.join(root, pkg)):
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
            for name in files:
                if name.endswith(".py"):
                    path = os.path.join(dirpath, name)
                    with open(path, "rb") as f:
                        texts[os.path.relpath(path, root).replace(os.sep, "/")] = f.read()

    def files_of(module: str) -> list[str]:
        base = module.replace(".", "/")
        return [p for p in (base + ".py", base + "/__init__.py") if p in texts]

    todo = [p for p, t in texts.items() if _COMPILES.search(t)]
    used = set(todo)
    while todo:
        text = texts[todo.pop()]
        names = [m.group(1).decode() for m in _IMPORT.finditer(text)]
        for m in _FROM.finditer(text):
            module = m.group(1).decode()
            names.append(module)
            names += [f"{module}.{w}" for w in re.findall(r"\w+", m.group(2).decode())]
        for name in names:
            for p in files_of(name):
                if p not in used:
                    used.add(p)
                    todo.append(p)
    return {p: texts[p] for p in sorted(used)}


def configure() -> str:
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # sim/core/
    h = hashlib.sha256()
    for name, text in kernel_sources(root).items():
        h.update(name.encode() + b"\0" + text)
    h.update(b"pdep" if __import__("sim.core._cpu", fromlist=["USE_PDEP"]).USE_PDEP else b"")
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

def tolerate_broken_cache_files() -> None:
    """Make numba treat a cache file it cannot read (truncated by a full disk or a killed
    process, or otherwise garbled: ``UnpicklingError``, ``EOFError``...) as a cache miss: the
    file is removed and the kernel compiled again (and saved), instead of the error reaching
    the user. Called once numba is imported (``sim.core.jit``)."""
    from numba.core import caching

    cls: Any = caching.IndexDataCacheFile
    if getattr(cls, "_shuangkou_tolerant", False):
        return
    load_index, load_data = cls._load_index, cls._load_data

    def _load_index(self: Any) -> Any:
        try:
            return load_index(self)
        except OSError:
            raise
        except Exception:  # noqa: BLE001 - any garbled index: start it afresh
            _remove_quietly(self._index_path)
            return {}

    def _load_data(self: Any, name: str) -> Any:
        try:
            return load_data(self, name)
        except OSError:
            raise
        except Exception as e:  # noqa: BLE001 - numba's load() takes OSError for a miss
            _remove_quietly(self._data_path(name))
            raise OSError(f"unreadable kernel cache file {name}: compiling again") from e

    cls._load_index, cls._load_data = _load_index, _load_data
    cls._shuangkou_tolerant = True


def _remove_quietly(path: str) -> None:
    try:
        os.remove(path)
    except OSError:
        pass


COMPILE_SECONDS = 20  # the first compile of the engine with greedy and random (2-core machine);
# a run with search players compiles them too and takes longer (the notice says so)


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
    print(f"compiling the engine for this machine (first run only, about {seconds} s; "
          f"longer with search players)…",
          file=out, flush=True)
    t0 = time.perf_counter()
    run()
    print(f"compiled in {time.perf_counter() - t0:.0f} s; later runs load it from "
          f"{path or CACHE_DIR}", file=out, flush=True)
    return True
